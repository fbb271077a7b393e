/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Time conversion (see auxcap/timeconv.h): reading the control page, and perf's formula.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "auxcap/timeconv.h"

/* The kernel's seqcount writer never holds the page for long; perf gives up after 10000. */
#define PAGE_READ_TRIES 10000

int auxcap_time_conv_read_page(const struct perf_event_mmap_page *pc,
			       struct auxcap_perf_time_conv *ret)
{
	struct auxcap_perf_time_conv tc;

	if (!pc || !ret)
		return -EINVAL;
	for (int i = 0; i < PAGE_READ_TRIES; i++) {
		uint32_t seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		uint64_t caps;

		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		memset(&tc, 0, sizeof(tc));
		caps = __atomic_load_n(&pc->capabilities, __ATOMIC_RELAXED);
		tc.time_shift = __atomic_load_n(&pc->time_shift, __ATOMIC_RELAXED);
		tc.time_mult = __atomic_load_n(&pc->time_mult, __ATOMIC_RELAXED);
		tc.time_zero = __atomic_load_n(&pc->time_zero, __ATOMIC_RELAXED);
		tc.time_cycles = __atomic_load_n(&pc->time_cycles, __ATOMIC_RELAXED);
		tc.time_mask = __atomic_load_n(&pc->time_mask, __ATOMIC_RELAXED);
		/* capabilities: bit 4 cap_user_time_zero, bit 5 cap_user_time_short (spec 1.1) */
		tc.cap_user_time_zero = (caps >> 4) & 1;
		tc.cap_user_time_short = (caps >> 5) & 1;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) == seq) {
			*ret = tc;
			return 0;
		}
	}
	return -EAGAIN;
}

uint64_t auxcap_time_conv_to_ns(const struct auxcap_perf_time_conv *tc, uint64_t cyc)
{
	uint64_t shift = tc->time_shift, mult = tc->time_mult;
	uint64_t quot, rem;

	if (tc->cap_user_time_short)
		cyc = tc->time_cycles + ((cyc - tc->time_cycles) & tc->time_mask);
	if (shift >= 64)
		return tc->time_zero;
	quot = cyc >> shift;
	rem = cyc & ((UINT64_C(1) << shift) - 1);
	return tc->time_zero + quot * mult + ((rem * mult) >> shift);
}

uint64_t auxcap_time_conv_from_ns(const struct auxcap_perf_time_conv *tc, uint64_t ns)
{
	uint64_t t = ns - tc->time_zero, mult = tc->time_mult, shift = tc->time_shift;

	if (!mult || shift >= 64)
		return 0;
	return ((t / mult) << shift) + ((t % mult) << shift) / mult;
}
