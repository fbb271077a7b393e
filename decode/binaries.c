/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Build-ids of the binaries a capture maps, and where to find those binaries again.
 */
#include "binaries.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxcap/perf_data.h"
#include "elf_file.h"

char *auxcap_build_id_hex(const uint8_t *id, size_t size, char *buf)
{
	static const char digits[] = "0123456789abcdef";
	size_t n = 0;

	for (size_t i = 0; i < size && n + 2 < AUXCAP_BUILD_ID_HEX_MAX; i++) {
		buf[n++] = digits[id[i] >> 4];
		buf[n++] = digits[id[i] & 15];
	}
	buf[n] = '\0';
	return buf;
}

int auxcap_binaries_add_build_ids(struct auxcap_perf_writer *w)
{
	const char *path;
	uint16_t cpumode;
	int added = 0;

	for (size_t i = 0; (path = auxcap_perf_writer_mapped_file(w, i, &cpumode)) != NULL; i++) {
		struct auxcap_elf *elf;
		const uint8_t *id;
		size_t size;
		int r;

		if (auxcap_elf_open(path, &elf) < 0)
			continue;
		size = auxcap_elf_build_id(elf, &id);
		r = size ? auxcap_perf_writer_add_build_id(w, cpumode, -1, id, size, path) : 0;
		auxcap_elf_free(elf);
		if (r < 0)
			return r;
		added += size != 0;
	}
	return added;
}

int auxcap_archive_dir(const char *capture, char **ret)
{
	if (!capture || !ret)
		return -EINVAL;
	return asprintf(ret, "%s.archive", capture) < 0 ? -ENOMEM : 0;
}

int auxcap_archive_path(const char *capture, const uint8_t *id, size_t size, char **ret)
{
	char hex[AUXCAP_BUILD_ID_HEX_MAX];

	if (!capture || !id || size < 2 || !ret)
		return -EINVAL;
	auxcap_build_id_hex(id, size, hex);
	return asprintf(ret, "%s.archive/.build-id/%.2s/%s", capture, hex, hex + 2) < 0 ? -ENOMEM
											: 0;
}

/* 1 if @path is an ELF file whose build-id is @id/@size (or @size is 0), else 0. */
static int matches(const char *path, const uint8_t *id, size_t size)
{
	struct auxcap_elf *elf;
	const uint8_t *have;
	size_t n;
	int ok;

	if (auxcap_elf_open(path, &elf) < 0)
		return 0;
	n = auxcap_elf_build_id(elf, &have);
	ok = !size || (n == size && !memcmp(have, id, size));
	auxcap_elf_free(elf);
	return ok;
}

static int found(const char *path, char **ret)
{
	*ret = strdup(path);
	return *ret ? 0 : -ENOMEM;
}

int auxcap_binary_find(const char *capture, const char *path, const uint8_t *id, size_t size,
		       char **ret)
{
	char hex[AUXCAP_BUILD_ID_HEX_MAX];
	const char *home = getenv("HOME");
	char *p = NULL;
	int r;

	if (!path || !ret || (size && !id))
		return -EINVAL;
	if (matches(path, id, size))
		return found(path, ret);
	if (size < 2)
		return -ENOENT;
	if (capture) {
		r = auxcap_archive_path(capture, id, size, &p);
		if (r < 0)
			return r;
		if (matches(p, id, size)) {
			*ret = p;
			return 0;
		}
		free(p);
		p = NULL;
	}
	if (home && home[0]) {
		auxcap_build_id_hex(id, size, hex);
		if (asprintf(&p, "%s/.debug/.build-id/%.2s/%s/elf", home, hex, hex + 2) < 0)
			return -ENOMEM;
		if (matches(p, id, size)) {
			*ret = p;
			return 0;
		}
		free(p);
	}
	return -ENOENT;
}
