/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The traced memory image: a libipt pt_image holding file sections (raw binaries, ELF
 * segments) at their load addresses.  libipt maps the files lazily when decoding needs them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include <intel-pt.h>

#include "ipt.h"
#include "ipt_internal.h"

/* A file section as added: a clone adds the same ones to a cache of its own. */
struct section {
	char *path; /* owned */
	uint64_t offset, size, vaddr;
};

struct auxcap_ipt_image {
	struct pt_image *pt;		      /* owned */
	struct pt_image_section_cache *cache; /* owned; sections are added through it so block
						* items can read their last bytes */
	int *isids;			      /* owned: the sections added, in order */
	struct section *secs;		      /* owned: what they are, in the same order */
	size_t nr_isids, cap_isids;
};

int auxcap_ipt_image_new(struct auxcap_ipt_image **ret_image)
{
	struct auxcap_ipt_image *image;

	if (!ret_image)
		return -EINVAL;
	image = calloc(1, sizeof(*image));
	if (!image)
		return -ENOMEM;
	image->pt = pt_image_alloc("auxcap");
	image->cache = pt_iscache_alloc("auxcap");
	if (!image->pt || !image->cache) {
		auxcap_ipt_image_free(image);
		return -ENOMEM;
	}
	*ret_image = image;
	return 0;
}

void auxcap_ipt_image_free(struct auxcap_ipt_image *image)
{
	if (!image)
		return;
	if (image->pt)
		pt_image_free(image->pt);
	if (image->cache)
		pt_iscache_free(image->cache);
	for (size_t i = 0; i < image->nr_isids; i++)
		free(image->secs[i].path);
	free(image->isids);
	free(image->secs);
	free(image);
}

struct pt_image *auxcap_ipt_image_pt(struct auxcap_ipt_image *image)
{
	return image->pt;
}

/* Add a checked section (@size not 0) to @image's cache and pt_image, and remember it. */
static int add_section(struct auxcap_ipt_image *image, const char *path, uint64_t offset,
		       uint64_t size, uint64_t vaddr)
{
	struct section *sec;
	int r;

	if (image->nr_isids == image->cap_isids) {
		size_t cap = image->cap_isids ? image->cap_isids * 2 : 16;
		int *p = realloc(image->isids, cap * sizeof(*p));
		struct section *q;

		if (!p)
			return -ENOMEM;
		image->isids = p;
		q = realloc(image->secs, cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		image->secs = q;
		image->cap_isids = cap;
	}
	sec = &image->secs[image->nr_isids];
	*sec = (struct section){ .path = strdup(path), .offset = offset, .size = size,
				 .vaddr = vaddr };
	if (!sec->path)
		return -ENOMEM;
	r = pt_iscache_add_file(image->cache, path, offset, size, vaddr);
	if (r >= 0) {
		image->isids[image->nr_isids] = r;
		r = pt_image_add_cached(image->pt, image->cache, r, NULL);
	}
	if (r < 0) {
		free(sec->path);
		return auxcap_ipt_errno(r);
	}
	image->nr_isids++;
	return 0;
}

int auxcap_ipt_image_add_raw(struct auxcap_ipt_image *image, const char *path, uint64_t offset,
			     uint64_t size, uint64_t vaddr)
{
	struct stat st;
	int fd, r;

	if (!image || !path)
		return -EINVAL;
	/* libipt only notices a bad file when decoding reaches it; check it now. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = fstat(fd, &st) < 0 ? -errno : 0;
	(void)close(fd);
	if (r < 0)
		return r;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (offset >= (uint64_t)st.st_size)
		return -ERANGE;
	if (!size || size > (uint64_t)st.st_size - offset)
		size = (uint64_t)st.st_size - offset;
	return add_section(image, path, offset, size, vaddr);
}

int auxcap_ipt_image_clone(const struct auxcap_ipt_image *src, struct auxcap_ipt_image **ret_image)
{
	struct auxcap_ipt_image *image;
	int r;

	if (!src || !ret_image)
		return -EINVAL;
	r = auxcap_ipt_image_new(&image);
	if (r < 0)
		return r;
	/*
	 * Sections of their own, not the original's: libipt keeps a section's block cache in
	 * the section, and two decoders writing one cache on two CPUs took twice the CPU time
	 * each (cache lines bouncing), the same instructions.  The files are mapped again,
	 * sharing the page cache.  In the original's order: later sections replace
	 * overlapping parts of earlier ones.
	 */
	for (size_t i = 0; i < src->nr_isids; i++) {
		const struct section *sec = &src->secs[i];

		r = add_section(image, sec->path, sec->offset, sec->size, sec->vaddr);
		if (r < 0) {
			auxcap_ipt_image_free(image);
			return r;
		}
	}
	*ret_image = image;
	return 0;
}

int auxcap_ipt_image_read(struct auxcap_ipt_image *image, int isid, uint64_t vaddr, uint8_t *buf,
			  size_t len)
{
	return pt_iscache_read(image->cache, buf, len, isid, vaddr);
}
