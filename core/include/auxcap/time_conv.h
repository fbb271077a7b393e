/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hardware timestamps (x86 TSC, Arm generic timer) to perf time and back, with the values of a
 * PERF_RECORD_TIME_CONV (copies of the perf_event control page's time_shift, time_mult,
 * time_zero, and time_cycles/time_mask for counters narrower than 64 bits).  The formulas are
 * the kernel's (include/uapi/linux/perf_event.h, perf_event_mmap_page) and perf's
 * (tools/perf/util/tsc.c): the product is split into quotient and remainder so that it does
 * not overflow 64 bits.
 */
#ifndef AUXCAP_TIME_CONV_H
#define AUXCAP_TIME_CONV_H

#include <stdbool.h>
#include <stdint.h>

#include "auxcap/perf_data.h"

/**
 * Perf time (ns) of the hardware timestamp @cyc under @tc:
 * with cap_user_time_short, cyc = time_cycles + ((cyc - time_cycles) & time_mask) first; then
 * time_zero + (cyc >> time_shift) * time_mult + (((cyc & (2^time_shift - 1)) * time_mult) >>
 * time_shift).  @tc is borrowed for the call.
 */
uint64_t auxcap_time_conv_to_perf(const struct auxcap_perf_time_conv *tc, uint64_t cyc);

/**
 * The hardware timestamp of perf time @ns under @tc (the inverse, as perf computes it):
 * t = ns - time_zero; ((t / time_mult) << time_shift) + ((t % time_mult) << time_shift) /
 * time_mult.  Returns 0 if @tc->time_mult is 0.
 */
uint64_t auxcap_time_conv_from_perf(const struct auxcap_perf_time_conv *tc, uint64_t ns);

/**
 * Whether @tc can convert at all: time_mult is not 0 and the shift is below 64, and the
 * record said cap_user_time_zero (files whose TIME_CONV predates that flag, @short_record,
 * are trusted when time_mult is set).
 */
bool auxcap_time_conv_usable(const struct auxcap_perf_time_conv *tc, bool short_record);

#endif /* AUXCAP_TIME_CONV_H */
