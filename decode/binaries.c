/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Build-ids of the binaries a capture maps, and where to find those binaries again.
 */
#include "binaries.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elf.h>
#include <linux/perf_event.h>
#include <sys/stat.h>

#include "auxcap/file.h"
#include "auxcap/proc.h"
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

/* Make the directories of @path (not its last component), as mkdir -p. */
static int mkdirs(char *path)
{
	for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			int r = -errno;

			*p = '/';
			return r;
		}
		*p = '/';
	}
	return 0;
}

/* Perf's build-id cache path of a binary, $HOME/.debug/.build-id/xx/rest/@leaf, into *@ret
 * (owned by the caller).  Returns 0 or -ENOMEM. */
static int cache_path(const char *home, const uint8_t *id, size_t size, const char *leaf,
		      char **ret)
{
	char hex[AUXCAP_BUILD_ID_HEX_MAX];

	auxcap_build_id_hex(id, size, hex);
	return asprintf(ret, "%s/.debug/.build-id/%.2s/%s/%s", home, hex, hex + 2, leaf) < 0
		       ? -ENOMEM
		       : 0;
}

/*
 * The GNU build-id of the ELF image at @img (@len bytes, the vdso as mapped: its notes lie at
 * their segments' file offsets): its size, *@ret_id pointing into @img; 0 if it has none.
 * Read by hand: the image is in memory, not in a file libelf could open.
 */
static size_t mem_build_id(const uint8_t *img, size_t len, const uint8_t **ret_id)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff > len || (len - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum)
		return 0;
	for (size_t i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff) + i;
		size_t n;

		if (ph->p_type != PT_NOTE || ph->p_offset > len || ph->p_filesz > len - ph->p_offset)
			continue;
		n = auxcap_notes_build_id(img + ph->p_offset, (size_t)ph->p_filesz, ret_id);
		if (n)
			return n;
	}
	return 0;
}

/*
 * The vdso has no file to read its code from later: save this process's, which is the one
 * the kernel maps into every process, into perf's build-id cache
 * ($HOME/.debug/.build-id/xx/rest/elf, where perf keeps it too and auxcap_binary_find()
 * looks), unless it is there already; *@ret_elf (owned) is the saved image, opened to name it
 * by its build-id.  Returns 0, or a negative errno (no vdso, no $HOME, not writable): the
 * capture then has no code for it, as before.
 */
static int save_vdso(struct auxcap_elf **ret_elf)
{
	char line[512], tmp[PATH_MAX], *dst = NULL;
	const char *home = getenv("HOME");
	unsigned long start = 0, end = 0;
	struct auxcap_elf *elf = NULL;
	const uint8_t *id, *mid;
	size_t size;
	FILE *maps;
	int fd, r;

	if (!home || !home[0])
		return -ENOENT;
	maps = fopen("/proc/self/maps", "re");
	if (!maps)
		return -errno;
	while (fgets(line, sizeof(line), maps))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			break;
	fclose(maps);
	if (end <= start)
		return -ENOENT;
	/* saved by an earlier capture (or perf): the same build-id is the same image */
	size = mem_build_id((const uint8_t *)start, end - start, &mid);
	if (size >= 2) {
		r = cache_path(home, mid, size, "elf", &dst);
		if (r < 0)
			return r;
		r = auxcap_elf_open(dst, &elf);
		free(dst);
		dst = NULL;
		if (r == 0 && auxcap_elf_build_id(elf, &id) == size && !memcmp(id, mid, size)) {
			*ret_elf = elf;
			return 0;
		}
		auxcap_elf_free(elf);
		elf = NULL;
	}
	if (snprintf(tmp, sizeof(tmp), "%s/.debug/.build-id/vdso.XXXXXX", home) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	r = mkdirs(tmp);
	if (r < 0)
		return r;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	r = auxcap_file_write_all(fd, (const void *)start, end - start);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0)
		r = auxcap_elf_open(tmp, &elf);
	if (r == 0) {
		size = auxcap_elf_build_id(elf, &id);
		r = size < 2 ? -ENOENT : cache_path(home, id, size, "elf", &dst);
	}
	if (r == 0)
		r = mkdirs(dst);
	if (r == 0 && rename(tmp, dst) < 0) /* the open image stays readable */
		r = -errno;
	free(dst);
	if (r < 0) {
		auxcap_elf_free(elf);
		(void)unlink(tmp);
		return r;
	}
	*ret_elf = elf;
	return 0;
}

int auxcap_binaries_add_build_ids(struct auxcap_perf_writer *w, bool save)
{
	bool kernel_done = false;
	const char *path;
	uint16_t cpumode;
	int added = 0;

	for (size_t i = 0; (path = auxcap_perf_writer_mapped_file(w, i, &cpumode)) != NULL; i++) {
		struct auxcap_elf *elf;
		const uint8_t *id;
		size_t size;
		int r;

		if (!strncmp(path, "[kernel.kallsyms]", 17)) {
			/* the kernel's own, as perf lists it: decode finds its vmlinux by it */
			uint8_t kid[AUXCAP_ELF_BUILD_ID_MAX];

			r = auxcap_proc_kernel_build_id(NULL, kid, sizeof(kid));
			if (r > 0 && !kernel_done) {
				kernel_done = true;
				r = auxcap_perf_writer_add_build_id(w, PERF_RECORD_MISC_KERNEL, -1, kid,
								    (size_t)r, "[kernel.kallsyms]");
				if (r < 0)
					return r;
				added++;
			}
			continue;
		}
		if (!strcmp(path, "[vdso]"))
			r = save ? save_vdso(&elf) : -ENOENT;
		else
			r = auxcap_elf_open(path, &elf);
		if (r < 0)
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
	if (asprintf(ret, "%s.archive", capture) < 0) {
		*ret = NULL; /* (asprintf() leaves it undefined) */
		return -ENOMEM;
	}
	return 0;
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
	/* perf's cache names a vdso's image "vdso", every other "elf" (ours: "elf" for all) */
	for (int k = 0; home && home[0] && k < (strcmp(path, "[vdso]") ? 1 : 2); k++) {
		r = cache_path(home, id, size, k ? "vdso" : "elf", &p);
		if (r < 0)
			return r;
		if (matches(p, id, size)) {
			*ret = p;
			return 0;
		}
		free(p);
	}
	return -ENOENT;
}

/* Candidate @p (malloc'd; @r is asprintf()'s result, 0: no candidate): taken into *@ret when
 * it has build-id @id/@size (1), else freed (0); -ENOMEM. */
static int vmlinux_try(char *p, int r, const uint8_t *id, size_t size, char **ret)
{
	if (r < 0)
		return -ENOMEM;
	if (r == 0)
		return 0;
	if (matches(p, id, size)) {
		*ret = p;
		return 1;
	}
	free(p);
	return 0;
}

int auxcap_vmlinux_find(const char *capture, const char *release, const uint8_t *id,
			size_t size, char **ret)
{
	const char *dirs = getenv("AUXCAP_DEBUG_DIRS");
	char hex[AUXCAP_BUILD_ID_HEX_MAX], *p = NULL;
	int r;

	if (!ret || !id || size < 2)
		return -EINVAL;
	r = auxcap_binary_find(capture, "[kernel.kallsyms]", id, size, ret);
	if (r != -ENOENT)
		return r;
	auxcap_build_id_hex(id, size, hex);
	if (!dirs || !*dirs)
		dirs = "/usr/lib/debug";
	for (const char *d = dirs; *d;) {
		int dlen = (int)strcspn(d, ":");

		for (int k = 0; k < 3; k++) {
			r = k == 0 ? asprintf(&p, "%.*s/.build-id/%.2s/%s.debug", dlen, d, hex, hex + 2)
			    : !release ? 0
			    : k == 1 ? asprintf(&p, "%.*s/boot/vmlinux-%s", dlen, d, release)
				     : asprintf(&p, "%.*s/lib/modules/%s/vmlinux", dlen, d, release);
			r = vmlinux_try(p, r, id, size, ret);
			if (r)
				return r < 0 ? r : 0;
		}
		d += dlen;
		if (*d == ':')
			d++;
	}
	for (int k = 0; k < 3; k++) {
		r = k == 2 ? asprintf(&p, "vmlinux")
		    : !release ? 0
		    : k == 0 ? asprintf(&p, "/boot/vmlinux-%s", release)
			     : asprintf(&p, "/lib/modules/%s/build/vmlinux", release);
		r = vmlinux_try(p, r, id, size, ret);
		if (r)
			return r < 0 ? r : 0;
	}
	return -ENOENT;
}
