/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Opening perf events and mapping their data rings through the syscall seam.
 */
#ifndef AUXCAP_EVENT_H
#define AUXCAP_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "auxcap/pmu.h"
#include "auxcap/sys.h"
#include "ring.h"

struct perf_event_attr;

/** A data ring mapped from an event fd; owns the mapping, not the fd. */
struct auxcap_mapped_ring {
	const struct auxcap_sys *sys; /* borrowed, outlives the ring */
	int fd;                       /* borrowed event fd */
	void *base;                   /* owned mapping, NULL when closed */
	size_t len;                   /* bytes mapped: (1 + data_pages) pages */
	struct auxcap_ring ring;
};

/**
 * perf_event_open() through @sys, with attr->size set to the size this build knows.
 *
 * Returns the fd, or a negative errno from the kernel unchanged (-EACCES/-EPERM for
 * perf_event_paranoid, -ENOENT/-ENODEV for an unsupported event, -EINVAL for a bad attr,
 * -EOPNOTSUPP, -EBUSY, -EMFILE, ...).
 */
int auxcap_event_open(const struct auxcap_sys *sys, struct perf_event_attr *attr, pid_t pid,
		      int cpu, int group_fd, unsigned long flags);

/**
 * perf_event_open() of @attr, config3 included: attr.size is set to auxcap_attr_size()
 * (AUXCAP_ATTR_SIZE_VER8 when config3 is non-zero, so that a kernel older than 6.3 refuses it
 * with -E2BIG rather than silently dropping config3).  Returns as auxcap_event_open().
 */
int auxcap_event_open_attr(const struct auxcap_sys *sys, struct auxcap_attr *attr, pid_t pid,
			   int cpu, int group_fd, unsigned long flags);

/**
 * Map the data ring of @fd with @data_pages data pages (0 or a power of two) and set up its
 * reader.  @flags are enum auxcap_ring_flags: AUXCAP_RING_OVERWRITE maps it read-only, which
 * puts the kernel's buffer in overwrite mode.
 *
 * On success @ret owns the mapping; release it with auxcap_mapped_ring_close().
 * Returns -EINVAL if @data_pages is not 0 or a power of two (or as the kernel says),
 * otherwise the errno of mmap through @sys.
 */
int auxcap_mapped_ring_open(const struct auxcap_sys *sys, int fd, size_t data_pages,
			    unsigned int flags, struct auxcap_mapped_ring *ret);

/** Unmap (NULL-safe, idempotent). */
void auxcap_mapped_ring_close(struct auxcap_mapped_ring *mr);

/** PERF_EVENT_IOC_PAUSE_OUTPUT: stop (@pause) or resume writes into the ring of @fd. */
int auxcap_event_pause_output(const struct auxcap_sys *sys, int fd, bool pause);

/** PERF_EVENT_IOC_ENABLE / DISABLE. */
int auxcap_event_enable(const struct auxcap_sys *sys, int fd, bool enable);

/** PERF_EVENT_IOC_ID. */
int auxcap_event_id(const struct auxcap_sys *sys, int fd, uint64_t *ret_id);

/** A counter read with read_format TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID|LOST. */
struct auxcap_count {
	uint64_t value;
	uint64_t time_enabled; /* ns */
	uint64_t time_running; /* ns */
	uint64_t id;
	uint64_t lost; /* records this event lost to its ring (6.0+) */
};

/**
 * read() a single (non-group) counter opened with @read_format and decode it.
 * Fields not in @read_format are 0.
 * Returns 0, or a negative errno (-EBADMSG on a short read).
 */
int auxcap_event_read_count(const struct auxcap_sys *sys, int fd, uint64_t read_format,
			    struct auxcap_count *ret);

/**
 * One line telling the user how to fix an error of perf_event_open() (for -EACCES/-EPERM,
 * -ENOENT, -ENODEV, -EOPNOTSUPP, -EBUSY, -EMFILE, -EINVAL), or NULL.  Static string.
 */
const char *auxcap_event_open_hint(int err);

#endif /* AUXCAP_EVENT_H */
