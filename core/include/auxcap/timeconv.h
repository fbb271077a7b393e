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

/**
 * Read the hardware counter the AUX PMUs timestamp with: the TSC on x86-64 (rdtsc), the
 * virtual counter CNTVCT_EL0 on arm64.  Thread-safe, no system call.
 *
 * Returns 0 and stores the value in @ret.
 * Returns -EINVAL if @ret is NULL.
 * Returns -EOPNOTSUPP on other architectures.
 */
int auxcap_counter_read(uint64_t *ret);

/** The counter as auxcap_counter_read() gives it, 0 where there is none (an op table hook). */
uint64_t auxcap_counter_now(void);

/**
 * Fit perf's formula to two (counter, clock) readings so that it maps counter @cyc1 to
 * clock @ns1 and has the slope (ns1 - ns0) / (cyc1 - cyc0): the largest shift (at most 31)
 * whose mult fits in 32 bits (perf keeps mult as a u32 and shift as a u16), and the
 * time_zero that makes @cyc1 land on @ns1 (wrapping below zero if it must).  The result has
 * cap_user_time_zero set and no short-counter fields.
 *
 * Returns 0 and fills @ret.
 * Returns -EINVAL if @ret is NULL, @cyc1 <= @cyc0 or @ns1 <= @ns0.
 * Returns -ERANGE if the slope does not fit (more than 2^32 ns per tick).
 */
int auxcap_time_conv_from_pairs(uint64_t cyc0, uint64_t ns0, uint64_t cyc1, uint64_t ns1,
				struct auxcap_perf_time_conv *ret);

/**
 * Calibrate the counter against clock @clk (CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, ...) over
 * about @span_ns (0: 20 ms): at each end, of many (clock, counter, clock) readings the one with
 * the narrowest clock window is kept, the counter standing at the middle of that window; the
 * two are given to auxcap_time_conv_from_pairs().  The last reading anchors time_zero, so call
 * it right before the trace starts.
 *
 * Returns 0 and fills @ret.
 * Returns -EINVAL if @ret is NULL or @clk cannot be read.
 * Returns -EOPNOTSUPP if there is no counter (auxcap_counter_read()).
 * Returns -ERANGE if the counter did not advance.
 */
int auxcap_time_conv_calibrate(clockid_t clk, uint64_t span_ns, struct auxcap_perf_time_conv *ret);

/**
 * What the control page of an event like @attr says about time conversion on this system:
 * open a copy of @attr (disabled, on the calling thread, any CPU) through @sys (NULL: the
 * kernel), map its control page, read it (auxcap_time_conv_read_page()), close.  On x86 the
 * kernel sets cap_user_time_zero for every event when sched_clock is the stable TSC and the
 * event does not use use_clockid; the emulated PMUs never set it.
 *
 * @attr is borrowed for the call.
 *
 * Returns 0 and fills @ret (check ret->cap_user_time_zero).
 * Returns -EINVAL if @attr or @ret is NULL.
 * Returns the errno of perf_event_open() or mmap() (-EACCES, -ENOENT, ...).
 */
int auxcap_time_conv_probe(const struct auxcap_sys *sys, const struct perf_event_attr *attr,
			   struct auxcap_perf_time_conv *ret);

#endif /* AUXCAP_TIMECONV_H */
