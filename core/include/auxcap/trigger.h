/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Function triggers: perf events that fire when the traced program reaches a function, used
 * as a session's trigger events (auxcap_session_opts.triggers) so that each hit requests a
 * snapshot.
 *
 * The first choice is a uprobe through the `uprobe` PMU (perf_event_open with the PMU's type
 * from sysfs, config1 = pointer to the binary's path, config2 = the function's *file offset*,
 * format term `retprobe` for a return probe): it is placed on the file, so it works before
 * the program runs, in every process that maps it, at any load address.
 *
 * Such an event cannot be inherited: the kernel sets up the copy for a new task by reading
 * config1 again as a user pointer (perf_uprobe_init(): strndup_user()) in the task that forks
 * or clones, where auxcap's string is not mapped, and the fork fails with EFAULT (seen as
 * "sh: Cannot fork", or pthread_create() failing, in the traced program).  For a capture with
 * inherit, create the uprobe through tracefs instead (auxcap_trigger_uprobe_tracefs_new(), as
 * `perf probe -x` does) and open it as a tracepoint, which inherits.  Where uprobes are
 * missing (no CONFIG_UPROBE_EVENTS, or no `uprobe` PMU) an execute breakpoint
 * (PERF_TYPE_BREAKPOINT, HW_BREAKPOINT_X) does the same at the function's *run-time address*,
 * which the caller must know: the link-time address for a non-PIE executable, else where the
 * process mapped the file (auxcap_proc_find_addr() on a started-and-stopped or running task).
 *
 * Both set sample_period 1 and wakeup_events 1 (every hit is a sample and a wakeup) and
 * use_clockid with CLOCK_MONOTONIC, so a hit's sample time compares with clock_gettime().
 */
#ifndef AUXCAP_TRIGGER_H
#define AUXCAP_TRIGGER_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/perf_event.h>

/**
 * Fill @ret for a uprobe on byte @file_offset of @path (a return probe with @retprobe), with
 * the type and the retprobe bit read from the `uprobe` PMU under @sysfs_root (NULL: the real
 * sysfs).  @path is borrowed: @ret points at it, so it must stay valid until the event is
 * opened.
 *
 * Returns 0 (@ret untouched on failure).
 * Returns -EINVAL if @path or @ret is NULL.
 * Returns -ENOENT if there is no uprobe PMU, -ENOTSUP if it has no retprobe term and
 * @retprobe was asked, or the error of reading sysfs.
 */
int auxcap_trigger_uprobe_attr(const char *sysfs_root, const char *path, uint64_t file_offset,
			       bool retprobe, struct perf_event_attr *ret);

/**
 * Create uprobe "auxcap/@name" on byte @file_offset of @path through the uprobe_events file
 * of the tracefs at @tracefs (NULL: /sys/kernel/tracing, else /sys/kernel/debug/tracing) and
 * fill @ret for it as a tracepoint event (which may be inherited).  The probe stays until
 * auxcap_trigger_uprobe_tracefs_delete(), after every event on it is closed; a process that
 * dies first leaves it behind (visible in uprobe_events, harmless).  @name must be unique
 * among the probes of group "auxcap" (put the pid in it) and made of [A-Za-z0-9_].
 *
 * Returns 0 (@ret untouched on failure).
 * Returns -EINVAL for a bad name or a path with blanks, -ENOENT if tracefs or its
 * uprobe_events file is missing (not mounted, no CONFIG_UPROBE_EVENTS), -EEXIST if the name
 * is taken, the errno of the write (-EACCES without root, ...) or of reading the event's id.
 */
int auxcap_trigger_uprobe_tracefs_new(const char *tracefs, const char *name, const char *path,
				      uint64_t file_offset, bool retprobe,
				      struct perf_event_attr *ret);

/**
 * Remove uprobe "auxcap/@name" made by auxcap_trigger_uprobe_tracefs_new().
 * Returns 0, -ENOENT if tracefs or the probe is missing, -EBUSY while an event is open on it,
 * or the errno of the write.
 */
int auxcap_trigger_uprobe_tracefs_delete(const char *tracefs, const char *name);

/**
 * Fill @ret for an execute breakpoint at run-time address @addr (user space only).
 *
 * Returns 0, or -EINVAL if @ret is NULL or @addr is 0.
 */
int auxcap_trigger_breakpoint_attr(uint64_t addr, struct perf_event_attr *ret);

/**
 * Whether execute breakpoints work here: one on a function of this library, on the calling
 * thread, counting three calls of it.  Some virtual machines accept breakpoint events but
 * never fire them (their debug registers are not passed through).
 *
 * Returns 1 if the breakpoint counted every call, 0 if it opened but counted fewer (they do
 * not fire here), or the negative errno of opening it (-ENODEV, -ENOSPC, -EACCES, ...).
 */
int auxcap_trigger_breakpoints_fire(void);

#endif /* AUXCAP_TRIGGER_H */
