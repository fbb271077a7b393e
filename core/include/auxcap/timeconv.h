/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hardware counter (TSC, Arm generic timer) <-> perf time conversion.
 *
 * perf's formula (spec/kernel-aux-abi.md 1.3, spec/perf-data-and-perf-tool.md 3.2), which
 * every decoder of a capture applies, perf's as well as ours:
 *
 *	ns  = time_zero + (cyc >> shift) * mult + (((cyc & ((1 << shift) - 1)) * mult) >> shift)
 *	cyc = ((ns - time_zero) / mult) << shift + (((ns - time_zero) % mult) << shift) / mult
 *
 * in u64 arithmetic (so a time_zero "below zero" wraps and still works).  The values come
 * from the perf control page when the kernel exports them (cap_user_time_zero), and are
 * otherwise calibrated at capture time against the clock the events were opened with
 * (attr.use_clockid), so that the formula yields that clock: see auxcap_time_conv_calibrate().
 */
#ifndef AUXCAP_TIMECONV_H
#define AUXCAP_TIMECONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "auxcap/perf_data.h"
#include "auxcap/sys.h"

struct perf_event_mmap_page;
struct perf_event_attr;

/**
 * Read the time conversion fields of control page @pc (time_shift, time_mult, time_zero,
 * time_cycles, time_mask and the cap_user_time_zero / cap_user_time_short bits) inside the
 * page's seqcount loop, as perf does for PERF_RECORD_TIME_CONV.
 *
 * @pc is borrowed for the call.  @ret is filled whatever the capabilities say: check
 * @ret->cap_user_time_zero.
 *
 * Returns 0 on success.
 * Returns -EINVAL if @pc or @ret is NULL.
 * Returns -EAGAIN if the kernel kept updating the page (the seqcount never settled).
 */
int auxcap_time_conv_read_page(const struct perf_event_mmap_page *pc,
			       struct auxcap_perf_time_conv *ret);

/**
 * Counter ticks @cyc to perf time (ns) with perf's formula.  With cap_user_time_short the
 * counter is first widened against time_cycles/time_mask, as perf does.
 */
uint64_t auxcap_time_conv_to_ns(const struct auxcap_perf_time_conv *tc, uint64_t cyc);

/** Perf time @ns (ns) to counter ticks with perf's formula (the inverse of _to_ns). */
uint64_t auxcap_time_conv_from_ns(const struct auxcap_perf_time_conv *tc, uint64_t ns);

#endif /* AUXCAP_TIMECONV_H */
