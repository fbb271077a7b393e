/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The time-stamp counter against a clock: the conversion a capture records in
 * PERF_RECORD_TIME_CONV when the control page does not export one (VMs, use_clockid events,
 * the emulated PMU), so that trace timestamps (TSC) and event times (a clock, in ns) can be
 * put on one timeline.
 *
 *	auxcap_tsc_pair_read(CLOCK_MONOTONIC, &a);
 *	... some milliseconds later (the longer, the more exact) ...
 *	auxcap_tsc_pair_read(CLOCK_MONOTONIC, &b);
 *	auxcap_tsc_conv_make(&a, &b, &tc);        TIME_CONV values
 *	ns = auxcap_tsc_to_time(&tc, tsc);        perf's tsc_to_perf_time()
 *
 * The conversion is perf's: time = time_zero + (tsc >> shift) * mult +
 * (((tsc & ((1 << shift) - 1)) * mult) >> shift), mult a u32 (perf keeps it in 32 bits).
 */
#ifndef AUXCAP_TSC_H
#define AUXCAP_TSC_H

#include <stdint.h>

#include "auxcap/perf_data.h"

/** A TSC value and a clock reading taken together. */
struct auxcap_tsc_pair {
	uint64_t tsc; /* cycles */
	uint64_t ns;  /* the clock, ns */
};

/**
 * Read the TSC and @clockid together: of a few tries, the one with the shortest TSC bracket
 * around the clock read, the TSC taken at its middle.
 * Returns 0 and fills @ret.
 * Returns -EINVAL if @ret is NULL or @clockid cannot be read.
 * Returns -EOPNOTSUPP if this build has no TSC to read (not x86-64).
 */
int auxcap_tsc_pair_read(int clockid, struct auxcap_tsc_pair *ret);

/**
 * The TIME_CONV values that map the TSC onto the clock through @a and @b (taken with
 * auxcap_tsc_pair_read() at least a millisecond apart): time_shift/time_mult from the rate,
 * time_zero so that @b converts to its own reading; cap_user_time_zero set, time_cycles and
 * time_mask 0 (no short counter).
 * Returns 0 and fills @ret.
 * Returns -EINVAL if an argument is NULL or @b is not later than @a in both TSC and clock.
 * Returns -ERANGE if the rate does not fit perf's 32-bit multiplier (a counter slower than
 * 1 tick per second or faster than 2^31 GHz).
 */
int auxcap_tsc_conv_make(const struct auxcap_tsc_pair *a, const struct auxcap_tsc_pair *b,
			 struct auxcap_perf_time_conv *ret);

/** @tsc in the clock of @tc, ns (perf's tsc_to_perf_time()). */
uint64_t auxcap_tsc_to_time(const struct auxcap_perf_time_conv *tc, uint64_t tsc);

#endif /* AUXCAP_TSC_H */
