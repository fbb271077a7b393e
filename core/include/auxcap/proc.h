/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What procfs says about running tasks, for captures that attach to them (-p, -t) and for
 * triggers placed at run-time addresses: /proc/PID/maps lines, the address a file offset is
 * mapped at, and the side-band records perf record synthesizes for pre-existing tasks
 * (COMM and MMAP2, spec/perf-data-and-perf-tool.md section 1.4, step 7).
 *
 * Every function takes the procfs root as a parameter (NULL: "/proc") so tests can point it
 * at a copied tree.
 */
#ifndef AUXCAP_PROC_H
#define AUXCAP_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#include "auxcap/record.h"

/** One line of /proc/PID/maps. */
struct auxcap_proc_map {
	uint64_t start;	 /* bytes */
	uint64_t end;	 /* bytes, exclusive */
	uint64_t pgoff;	 /* file offset of @start, bytes */
	uint32_t prot;	 /* PROT_READ | PROT_WRITE | PROT_EXEC */
	uint32_t flags;	 /* MAP_PRIVATE or MAP_SHARED */
	uint32_t maj;	 /* device major */
	uint32_t min;	 /* device minor */
	uint64_t ino;	 /* inode, 0 for anonymous memory */
	char path[4096]; /* file path or pseudo name ("[vdso]"), "" when anonymous */
};

/**
 * Parse one @line of /proc/PID/maps ("start-end perms offset maj:min inode   path").
 *
 * Returns 0 and fills @ret (untouched on failure).
 * Returns -EINVAL if an argument is NULL, -EBADMSG if the line is malformed.
 */
int auxcap_proc_map_parse(const char *line, struct auxcap_proc_map *ret);

/**
 * The number a line "KEY:\tN" of /proc/TID/status gives (Tgid, TracerPid, ...).
 * Returns 0 and sets @ret.  Returns -ESRCH if there is no such task, -EBADMSG if the file has
 * no such line, or the errno of open.
 */
int auxcap_proc_status(const char *proc, pid_t tid, const char *key, long *ret);

/**
 * The thread group (process) id of thread @tid, from the Tgid line of /proc/TID/status.
 *
 * Returns 0 and sets @ret_tgid.  Returns -ESRCH if there is no such task, -EBADMSG if the
 * status file has no Tgid line, or the errno of open.
 */
int auxcap_proc_tgid(const char *proc, pid_t tid, pid_t *ret_tgid);

/**
 * Where process @pid has byte @file_offset of the file @path mapped: the file is matched by
 * device and inode (stat of @path), or by its resolved path, and executable mappings are
 * preferred.
 *
 * Returns 0 and sets @ret_addr.
 * Returns -ENXIO if the file is not mapped there (yet) at that offset.
 * Returns -ESRCH if there is no such process, or the errno of open (-EACCES, ...).
 */
int auxcap_proc_find_addr(const char *proc, pid_t pid, const char *path, uint64_t file_offset,
			  uint64_t *ret_addr);

/** Receives one synthesized record (@len = header.size bytes, borrowed for the call). */
typedef int (*auxcap_proc_record_fn)(void *ctx, const void *rec, size_t len);

/**
 * Synthesize, as perf record does for tasks it attaches to: a PERF_RECORD_COMM for thread
 * @tid of process @tgid (its /proc/TGID/task/TID/comm) and, with @mmaps, a PERF_RECORD_MMAP2
 * (misc PERF_RECORD_MISC_USER) for every executable mapping of process @tgid in
 * /proc/TGID/maps, anonymous ones named "//anon".  Each record ends with the sample_id
 * trailer @layout describes, filled from @sid with pid/tid replaced by the record's own; use
 * time 0 ("before everything") as perf does.  Records go to @fn one by one.
 *
 * Returns the number of records delivered, or a negative errno: -ESRCH if the task is gone,
 * the errno of reading /proc, -ENAMETOOLONG for a record over 64 KiB, or what @fn returned.
 */
int auxcap_proc_synthesize(const char *proc, pid_t tgid, pid_t tid, bool mmaps,
			   const struct auxcap_sample_layout *layout,
			   const struct auxcap_sample_id *sid, auxcap_proc_record_fn fn, void *ctx);

/**
 * auxcap_proc_synthesize() of every task of the system (perf record -a does the same): each
 * process in @proc ("/proc" if NULL), a COMM per thread and its executable mappings once.
 * Tasks that end during the walk, and those whose files cannot be read (-EACCES, -EPERM),
 * are left out.  Returns the number of records delivered, or a negative errno (of listing
 * @proc, or what @fn returned).
 */
int auxcap_proc_synthesize_all(const char *proc, const struct auxcap_sample_layout *layout,
			       const struct auxcap_sample_id *sid, auxcap_proc_record_fn fn,
			       void *ctx);

/**
 * One line of a kallsyms file: the symbol's address, type letter, name, and whether it is a
 * module's ("[module]" follows).  Return 0 to go on, 1 to stop there, < 0 to fail.
 */
typedef int (*auxcap_proc_ksym_fn)(void *ctx, uint64_t addr, char type, const char *name,
				   bool module);

/**
 * Call @fn for each symbol of the kallsyms file @path (/proc/kallsyms, or a copy of one).
 * Returns 0 (1 if @fn stopped), the errno of opening @path, or @fn's error.
 */
int auxcap_proc_kallsyms(const char *path, auxcap_proc_ksym_fn fn, void *ctx);

/**
 * The kernel's text, [_text, _etext), from @proc's kallsyms ("/proc" if NULL).
 * Returns 0, -ENOENT if kallsyms lacks the two symbols, -EACCES if it hides their addresses
 * (kptr_restrict), or the errno of opening it.
 */
int auxcap_proc_kernel_text(const char *proc, uint64_t *ret_start, uint64_t *ret_end);

/**
 * Whether the running kernel, in this boot, is the one of release @osrelease whose _text was
 * @ktext (a capture's [kernel.kallsyms]_text mapping): its /proc/kallsyms names that
 * capture's kernel addresses.  KASLR moves _text at each boot.
 */
bool auxcap_proc_kernel_is(const char *osrelease, uint64_t ktext);

/**
 * The GNU build-id (2 to 20 bytes) among the ELF notes at @notes (@len bytes: a PT_NOTE
 * segment's, or /sys/kernel/notes): *@ret_id points at it in @notes.  Returns its size, 0 if
 * there is none.
 */
size_t auxcap_notes_build_id(const uint8_t *notes, size_t len, const uint8_t **ret_id);

/**
 * The running kernel's GNU build-id, from the ELF notes in @sys/kernel/notes (@sys "/sys" if
 * NULL): at most @cap bytes into @id.  Returns its size, -ENOENT if the notes hold none, or
 * the errno of reading them.
 */
int auxcap_proc_kernel_build_id(const char *sys, uint8_t *id, size_t cap);

/**
 * Copy the kernel's code out of @proc's kcore ("/proc" if NULL) into @dst, as perf record
 * --kcore does: the text [_text, _etext) and each loaded module's range from @proc's
 * modules, as they are now (with the boot's and the run's code patching applied), each a
 * PT_LOAD segment of an ELF64 core file at its kernel address.  Written (mode 0600) to a
 * temporary file beside @dst and renamed.  Adds the bytes written to *@ret_bytes when not NULL.
 * Returns the number of modules copied, -ENOENT if @proc has no kcore (a kernel built
 * without CONFIG_PROC_KCORE), -EACCES if kallsyms hides the addresses or kcore is not
 * readable (it needs root), -EBADMSG if kcore lacks the kernel text, or another errno.
 */
int auxcap_proc_kcore_copy(const char *proc, const char *dst, uint64_t *ret_bytes);

/**
 * Synthesize the kernel's mapping as perf record writes it: a PERF_RECORD_MMAP (misc
 * PERF_RECORD_MISC_KERNEL) of pid -1, tid 0, [_text, _etext) at pgoff _text, named
 * "[kernel.kallsyms]_text", so that perf and auxcap name kernel addresses.  Returns 1 (the
 * record delivered), the errors of auxcap_proc_kernel_text(), or what @fn returned.
 */
int auxcap_proc_synthesize_kernel(const char *proc, const struct auxcap_sample_layout *layout,
				  const struct auxcap_sample_id *sid, auxcap_proc_record_fn fn,
				  void *ctx);

#endif /* AUXCAP_PROC_H */
