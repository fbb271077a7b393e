/* SPDX-License-Identifier: BSD-3-Clause */
/* Building perf's TRACING_DATA blob from tracefs (see tracing_data.h). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracing_data.h"

struct buf {
	unsigned char *p;
	size_t len, cap;
	int err;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 8192;
		unsigned char *q;

		while (cap < b->len + n)
			cap *= 2;
		q = realloc(b->p, cap);
		if (!q) {
			b->err = -ENOMEM;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_u32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put_u64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

/* Read a whole (small, pseudo) file: tracefs files report size 0, so read until EOF. */
static int slurp(const char *path, char **ret, size_t *ret_len)
{
	size_t len = 0, cap = 4096;
	char *p = malloc(cap), *q;
	ssize_t n;
	int fd;

	if (!p)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(p);
		return -errno;
	}
	while ((n = read(fd, p + len, cap - len)) > 0) {
		len += (size_t)n;
		if (len == cap) {
			q = realloc(p, cap * 2);
			if (!q) {
				close(fd);
				free(p);
				return -ENOMEM;
			}
			p = q;
			cap *= 2;
		}
	}
	close(fd);
	if (n < 0) {
		free(p);
		return -errno;
	}
	*ret = p;
	*ret_len = len;
	return 0;
}

/* u64/u32 size then the file's bytes. */
static int put_file(struct buf *b, const char *path, int size_bytes, bool optional)
{
	char *data = NULL;
	size_t len = 0;
	int r;

	r = slurp(path, &data, &len);
	if (r < 0) {
		if (!optional)
			return r;
		data = NULL;
		len = 0;
	}
	if (size_bytes == 8)
		put_u64(b, len);
	else
		put_u32(b, (uint32_t)len);
	put(b, data, len);
	free(data);
	return b->err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int auxcap_tracing_data_build(const char *tracefs_root, const char *const *tps, size_t nr,
			      void **ret_buf, size_t *ret_len)
{
	static const unsigned char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	struct buf b = { 0 };
	char path[1024];
	const char **sorted;
	size_t nsys = 0;
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE);
	int r;

	for (size_t i = 0; i < nr; i++)
		if (!strchr(tps[i], ':'))
			return -EINVAL;
	sorted = malloc((nr ? nr : 1) * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, tps, nr * sizeof(*sorted));
	qsort(sorted, nr, sizeof(*sorted), cmp_str);

	put(&b, magic, sizeof(magic));
	put(&b, "0.6", 4);
	put(&b, &(uint8_t){ 0 }, 1); /* little endian */
	put(&b, &(uint8_t){ (uint8_t)sizeof(long) }, 1);
	put_u32(&b, page);
	put(&b, "header_page", 12);
	snprintf(path, sizeof(path), "%s/events/header_page", tracefs_root);
	r = put_file(&b, path, 8, false);
	if (r < 0)
		goto out;
	put(&b, "header_event", 13);
	snprintf(path, sizeof(path), "%s/events/header_event", tracefs_root);
	r = put_file(&b, path, 8, false);
	if (r < 0)
		goto out;
	put_u32(&b, 0); /* ftrace's own events */

	for (size_t i = 0; i < nr; i++)
		if (i == 0 || strncmp(sorted[i], sorted[i - 1],
				       (size_t)(strchr(sorted[i], ':') - sorted[i]) + 1))
			nsys++;
	put_u32(&b, (uint32_t)nsys);
	for (size_t i = 0; i < nr;) {
		size_t syslen = (size_t)(strchr(sorted[i], ':') - sorted[i]), j = i;

		while (j < nr && !strncmp(sorted[j], sorted[i], syslen + 1))
			j++;
		put(&b, sorted[i], syslen);
		put(&b, "", 1);
		put_u32(&b, (uint32_t)(j - i));
		for (; i < j; i++) {
			snprintf(path, sizeof(path), "%s/events/%.*s/%s/format", tracefs_root,
				 (int)syslen, sorted[i], sorted[i] + syslen + 1);
			r = put_file(&b, path, 8, false);
			if (r < 0)
				goto out;
		}
	}
	put_u32(&b, 0); /* kallsyms: perf resolves kernel symbols itself */
	snprintf(path, sizeof(path), "%s/printk_formats", tracefs_root);
	r = put_file(&b, path, 4, true);
	if (r < 0)
		goto out;
	put_u64(&b, 0); /* saved_cmdlines */
	r = b.err;
out:
	free(sorted);
	if (r < 0) {
		free(b.p);
		return r;
	}
	*ret_buf = b.p;
	*ret_len = b.len;
	return 0;
}
