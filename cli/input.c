/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "-" as the input file of decode, report and annotate: standard input.  Decoding reads AUX
 * buffers out of order, so a stream from a pipe is first saved to an unlinked temporary file
 * (in $TMPDIR, else /tmp) and decoded from there, as a seekable file.  And the opening of a
 * capture for the commands that read its decoded events.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "auxcap/backend.h"
#include "cli.h"
#include "progress.h"

/* An unlinked read-write file in @dir, -errno on failure. */
static int temp_file(const char *dir)
{
	char path[4096];
	int fd;

#ifdef O_TMPFILE
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
#endif
	if (snprintf(path, sizeof(path), "%s/auxcap-stdin-XXXXXX", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	(void)unlink(path);
	return fd;
}

int cli_input_open(const char *file, char *path, size_t path_size, int *ret_fd)
{
	const char *dir = getenv("TMPDIR");
	char buf[1 << 16];
	struct stat st;
	ssize_t n;
	int fd, r;

	*ret_fd = -1;
	if (strcmp(file, "-") != 0) {
		snprintf(path, path_size, "%s", file);
		return 0;
	}
	if (isatty(STDIN_FILENO)) {
		cli_err("'-' reads the capture from standard input, which is a terminal: pipe a "
			"perf.data stream in (auxcap record -o - ... | auxcap decode -)");
		return -EINVAL;
	}
	if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
		snprintf(path, path_size, "/proc/self/fd/%d", STDIN_FILENO);
		return 0;
	}
	if (!dir || !*dir)
		dir = "/tmp";
	fd = temp_file(dir);
	if (fd < 0) {
		cli_err("cannot make a temporary file in %s to hold standard input: %s (set TMPDIR "
			"to a writable directory)",
			dir, strerror(-fd));
		return fd;
	}
	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			cli_err("cannot read standard input: %s", strerror(-r));
			close(fd);
			return r;
		}
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(fd, buf + done, (size_t)(n - done));

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				r = w < 0 ? -errno : -EIO;
				cli_err("cannot save standard input to a temporary file in %s: %s "
					"(set TMPDIR to a directory with room)",
					dir, strerror(-r));
				close(fd);
				return r;
			}
			done += w;
		}
	}
	snprintf(path, path_size, "/proc/self/fd/%d", fd);
	*ret_fd = fd;
	return 0;
}

int cli_capture_open(const char *cmd, const char *file, bool progress, bool raw_names,
		     const char *vmlinux, struct auxcap_decode **ret)
{
	struct auxcap_decode_opts o = { .sz = sizeof(o) };
	const struct auxcap_decode_info *info;
	char errbuf[512] = "", path[4096];
	int r;

	*ret = NULL;
	/* "-": standard input (a pipe is saved to an unlinked file, kept open until exit). */
	r = cli_input_open(file, path, sizeof(path), &(int){ -1 });
	if (r < 0)
		return r;
	o.errbuf = errbuf;
	o.errlen = sizeof(errbuf);
	if (progress)
		o.progress = cli_progress_update;
	o.name = file; /* "-" rather than the saved copy's /proc path */
	o.raw_names = raw_names;
	o.vmlinux = vmlinux;
	r = auxcap_decode_open(path, &o, ret);
	if (r < 0) {
		cli_err("%s", errbuf[0] ? errbuf : strerror(-r));
		return r;
	}
	info = auxcap_decode_get_info(*ret);
	if (info->backend && !auxcap_backend_find(info->backend)->decoder_new) {
		cli_err("'%s': the %s backend only prints its trace (no decoder ops): auxcap %s "
			"needs decoded events; use auxcap decode",
			file, info->backend, cmd);
		auxcap_decode_close(*ret);
		*ret = NULL;
		return -EOPNOTSUPP;
	}
	return 0;
}
