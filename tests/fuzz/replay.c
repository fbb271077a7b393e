/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replay driver: a main() for a fuzz target outside libFuzzer.  Every argument is a file or a
 * directory; every regular file (directories: their entries, sorted, dot files skipped) is
 * read and handed to LLVMFuzzerTestOneInput() once.  A crash is a crash of the test; the exit
 * status is 1 if no input was found at all (an empty corpus must not pass silently) or an
 * input could not be read.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static int run_file(const char *path, size_t *count)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			unsigned char *nb = realloc(buf, cap ? cap * 2 : 4096);

			if (!nb) {
				fclose(f);
				free(buf);
				return -1;
			}
			buf = nb;
			cap = cap ? cap * 2 : 4096;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	/* Hand over an exact-size copy so that an over-read shows under ASan. */
	{
		unsigned char *exact = malloc(len ? len : 1);

		if (!exact) {
			free(buf);
			return -1;
		}
		memcpy(exact, buf, len);
		free(buf);
		(void)LLVMFuzzerTestOneInput(exact, len);
		free(exact);
	}
	(*count)++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, size_t *count)
{
	char **names = NULL;
	size_t nr = 0, cap = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	int r = 0;

	if (!d) {
		fprintf(stderr, "replay: cannot open %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (nr == cap) {
			char **nn = realloc(names, (cap ? cap * 2 : 64) * sizeof(*names));

			if (!nn) {
				r = -1;
				break;
			}
			names = nn;
			cap = cap ? cap * 2 : 64;
		}
		names[nr] = strdup(de->d_name);
		if (!names[nr]) {
			r = -1;
			break;
		}
		nr++;
	}
	closedir(d);
	if (nr)
		qsort(names, nr, sizeof(*names), cmp_str);
	for (size_t i = 0; i < nr; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (r == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode) && run_file(path, count) < 0)
			r = -1;
		free(names[i]);
	}
	free(names);
	return r;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int status = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			status = 1;
			continue;
		}
		if ((S_ISDIR(st.st_mode) ? run_dir(argv[i], &count) : run_file(argv[i], &count)) < 0)
			status = 1;
	}
	printf("replayed %zu inputs\n", count);
	if (count == 0) {
		fprintf(stderr, "replay: no inputs (give corpus directories or files)\n");
		status = 1;
	}
	return status;
}
