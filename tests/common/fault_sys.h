/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injection through the syscall seam (struct auxcap_sys) and the perf.data writer's I/O
 * seam (struct auxcap_perf_io), with bookkeeping of what went through them.
 *
 * struct fault_sys wraps another seam (the kernel's or the emulator's).  Calls are counted per
 * kind; the plan names one kind, the 1-based occurrence of it to fail, and the errno.  A
 * failing perf_event_open, mmap, ioctl, poll or read does nothing and returns the errno; a
 * failing close or munmap does its work first and then returns the errno, as Linux does for
 * close() interrupted by a signal (the fd is gone either way).  Mappings made through the seam
 * and fds opened through it are tracked, so a leak shows as a live entry at the end.
 */
#ifndef AUXCAP_TEST_FAULT_SYS_H
#define AUXCAP_TEST_FAULT_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auxcap/perf_data.h"
#include "auxcap/sys.h"

enum fault_kind {
	FAULT_OPEN = 0, /* perf_event_open */
	FAULT_MMAP,
	FAULT_MUNMAP,
	FAULT_IOCTL,
	FAULT_POLL,
	FAULT_READ,
	FAULT_CLOSE,
	FAULT_NR_KINDS,
};

#define FAULT_MAX_LIVE 256

struct fault_sys {
	struct auxcap_sys sys;		/* hand &sys to the code under test */
	const struct auxcap_sys *inner; /* borrowed: the seam that does the work */
	/* plan */
	int fail_kind;	     /* enum fault_kind, -1 for none */
	unsigned long fail_at; /* occurrence of @fail_kind to fail (1-based) */
	int fail_err;	     /* negative errno */
	/* record */
	unsigned long calls[FAULT_NR_KINDS];
	bool injected; /* the planned failure happened */
	unsigned long failed_request; /* ioctl: the request of the failed call */
	struct {
		void *addr;
		size_t len;
	} maps[FAULT_MAX_LIVE]; /* live mappings made through the seam */
	size_t nr_maps;
	int fds[FAULT_MAX_LIVE]; /* live fds opened through the seam */
	size_t nr_fds;
	unsigned long bad_unmaps; /* munmap of something not mapped through the seam */
	unsigned long bad_closes; /* close of an fd not opened through the seam */
	int last_emu_fd;	  /* last fd opened for an emulated PMU type, -1 */
};

/* Wrap @inner; no failure planned. */
void fault_sys_init(struct fault_sys *fs, const struct auxcap_sys *inner);
/* Plan the @at-th call of @kind to fail with @err (negative). */
void fault_sys_plan(struct fault_sys *fs, enum fault_kind kind, unsigned long at, int err);
const char *fault_kind_name(enum fault_kind kind);

/* The perf.data writer's I/O: from the @fail_from-th writev on, every writev fails (a full
 * disk stays full); 0 = never.  ftruncate keeps working, as it does on a full disk. */
struct fault_io {
	struct auxcap_perf_io io; /* hand &io to the writer */
	unsigned long fail_from;
	int fail_err;
	unsigned long writes;	/* writev calls */
	unsigned long failures; /* writev calls failed */
};

void fault_io_init(struct fault_io *fio, unsigned long fail_from, int err);

/*
 * The open fds of this process as a sorted list ("0 1 2 5"), from /proc/self/fd without the
 * one used to read it, into @buf (@len bytes).
 */
void fault_list_fds(char *buf, size_t len);
/* Lines of /proc/self/maps that contain @needle. */
size_t fault_count_maps(const char *needle);

#endif
