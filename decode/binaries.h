/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The binaries a capture needs: their build-ids at record time, where decode finds them
 * later (the original path, the capture's archive, perf's build-id cache), and the archive
 * that `auxcap archive` fills.
 *
 * The archive of capture FILE is the directory FILE.archive/ holding one copy per build-id
 * at .build-id/<first 2 hex digits>/<remaining hex digits> (the layout gdb and debuginfod
 * use for .build-id trees), so moving FILE and FILE.archive/ together to another machine is
 * enough to decode there.
 */
#ifndef AUXCAP_DECODE_BINARIES_H
#define AUXCAP_DECODE_BINARIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct auxcap_perf_writer;

/** Longest hex form of a build-id plus its NUL (bytes). */
#define AUXCAP_BUILD_ID_HEX_MAX 41

/**
 * Format the @size bytes of @id as lower-case hex into @buf (AUXCAP_BUILD_ID_HEX_MAX bytes).
 * Returns @buf.
 */
char *auxcap_build_id_hex(const uint8_t *id, size_t size, char *buf);

/**
 * Add a BUILD_ID entry to @w (borrowed) for every executable file its MMAP/MMAP2 records
 * mapped (auxcap_perf_writer_mapped_file()) that is an ELF file with a GNU build-id.  Files
 * that are gone or carry no build-id are skipped.  The vdso ("[vdso]") has no file: with
 * @save_vdso its image is saved into perf's build-id cache under $HOME (see binaries.c) and
 * listed by its build-id; without, it is skipped.
 * Returns the number of entries added, or a negative errno (-ENOMEM) if the writer refused one.
 */
int auxcap_binaries_add_build_ids(struct auxcap_perf_writer *w, bool save_vdso);

/**
 * The archive directory of capture @capture: "@capture.archive" into *@ret (owned by the
 * caller, free()).  Returns 0, or -ENOMEM.
 */
int auxcap_archive_dir(const char *capture, char **ret);

/**
 * Where the copy of the binary with build-id @id/@size lives in the archive of @capture
 * (whether or not it exists), into *@ret (owned, free()).  Returns 0, -EINVAL (no id), -ENOMEM.
 */
int auxcap_archive_path(const char *capture, const uint8_t *id, size_t size, char **ret);

/**
 * Find the binary that capture @capture (may be NULL) mapped from @path with build-id
 * @id/@size (@size 0: unknown).  Tries, in order: @path itself when its build-id matches (or
 * none is known); the capture's archive; perf's build-id cache ($HOME/.debug/.build-id/xx/
 * rest/elf, or for "[vdso]" also .../vdso, perf's name for it).  On success *@ret (owned,
 * free()) is the path to read.  auxcap_binaries_add_build_ids() saves the vdso's image there
 * (a "[vdso]" mapping has no file).
 * Returns 0, -ENOENT if none of them has it, -ENOMEM.
 */
int auxcap_binary_find(const char *capture, const char *path, const uint8_t *id, size_t size,
		       char **ret);

/**
 * Find the kernel image (vmlinux) whose build-id is @id/@size (the capture's
 * "[kernel.kallsyms]" entry), where perf looks and kernel debug packages put it: the archive
 * of @capture (may be NULL) and perf's build-id cache; for each DIR of $AUXCAP_DEBUG_DIRS
 * (default /usr/lib/debug) DIR/.build-id/xx/rest.debug, DIR/boot/vmlinux-@release and
 * DIR/lib/modules/@release/vmlinux; then /boot/vmlinux-@release,
 * /lib/modules/@release/build/vmlinux and ./vmlinux (@release: the capture's kernel release,
 * NULL to skip those named by it).  Only a file with that build-id is taken.  On success
 * *@ret (owned, free()) is its path.  Returns 0, -ENOENT, -EINVAL (@size < 2), -ENOMEM.
 */
int auxcap_vmlinux_find(const char *capture, const char *release, const uint8_t *id,
			size_t size, char **ret);

#endif /* AUXCAP_DECODE_BINARIES_H */
