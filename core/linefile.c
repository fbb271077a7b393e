/* SPDX-License-Identifier: BSD-3-Clause */
/* A FILE that hands its output to a callback line by line (see linefile.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "grow.h"
#include "linefile.h"

/* Appends @n bytes to the partial line.  Returns 0 or -ENOMEM. */
static int line_append(struct auxcap_linefile *lf, const char *p, size_t n)
{
	if (auxcap_grow(&lf->line, &lf->cap, lf->len + n + 1, 256) < 0)
		return -ENOMEM;
	memcpy(lf->line + lf->len, p, n);
	lf->len += n;
	lf->line[lf->len] = '\0';
	return 0;
}

/* Hands the partial line out and empties it. */
static int line_emit(struct auxcap_linefile *lf)
{
	int r;

	if (line_append(lf, "", 0) < 0)
		return -ENOMEM;
	r = lf->fn(lf->arg, lf->line);
	lf->len = 0;
	return r < 0 ? r : 0;
}

static ssize_t lf_write(void *cookie, const char *buf, size_t size)
{
	struct auxcap_linefile *lf = cookie;
	size_t done = 0;

	if (lf->err)
		return -1;
	while (done < size) {
		const char *nl = memchr(buf + done, '\n', size - done);
		size_t n = nl ? (size_t)(nl - (buf + done)) : size - done;
		int r = line_append(lf, buf + done, n);

		if (r == 0 && nl)
			r = line_emit(lf);
		if (r < 0) {
			lf->err = r;
			return -1;
		}
		done += n + (nl ? 1 : 0);
	}
	return (ssize_t)size;
}

int auxcap_linefile_open(struct auxcap_linefile *lf, auxcap_linefile_fn fn, void *arg,
			 FILE **ret_file)
{
	static const cookie_io_functions_t io = { .write = lf_write };
	FILE *f;

	memset(lf, 0, sizeof(*lf));
	lf->fn = fn;
	lf->arg = arg;
	f = fopencookie(lf, "w", io);
	if (!f)
		return -ENOMEM;
	*ret_file = f;
	return 0;
}

int auxcap_linefile_close(struct auxcap_linefile *lf, FILE *file)
{
	int r;

	if (file)
		(void)fclose(file); /* flushes through lf_write */
	if (!lf->err && lf->len) {
		r = line_emit(lf);
		if (r < 0)
			lf->err = r;
	}
	free(lf->line);
	lf->line = NULL;
	lf->len = lf->cap = 0;
	return lf->err;
}
