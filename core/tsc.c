/* SPDX-License-Identifier: BSD-3-Clause */
/* The time-stamp counter against a clock (see auxcap/tsc.h). */
#include <errno.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "auxcap/tsc.h"

#define PAIR_TRIES 16

int auxcap_tsc_pair_read(int clockid, struct auxcap_tsc_pair *ret)
{
#if defined(__x86_64__)
	uint64_t best = UINT64_MAX;
	struct timespec ts;

	if (!ret)
		return -EINVAL;
	for (int i = 0; i < PAIR_TRIES; i++) {
		uint64_t t0, t1;

		t0 = __rdtsc();
		if (clock_gettime((clockid_t)clockid, &ts) < 0)
			return -EINVAL;
		t1 = __rdtsc();
		if (t1 - t0 < best) {
			best = t1 - t0;
			ret->tsc = t0 + (t1 - t0) / 2;
			ret->ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		}
	}
	return 0;
#else
	(void)clockid;
	(void)ret;
	return -EOPNOTSUPP;
#endif
}

/* (tsc >> shift) * mult + ((tsc & mask) * mult >> shift), without time_zero. */
static uint64_t scale(uint64_t tsc, uint64_t shift, uint64_t mult)
{
	uint64_t quot = tsc >> shift;
	uint64_t rem = tsc & (((uint64_t)1 << shift) - 1);

	return quot * mult + ((rem * mult) >> shift);
}

int auxcap_tsc_conv_make(const struct auxcap_tsc_pair *a, const struct auxcap_tsc_pair *b,
			 struct auxcap_perf_time_conv *ret)
{
	uint64_t dt, dns;
	unsigned int shift;
	__uint128_t mult = 0;

	if (!a || !b || !ret || b->tsc <= a->tsc || b->ns <= a->ns)
		return -EINVAL;
	dt = b->tsc - a->tsc;
	dns = b->ns - a->ns;
	/* The largest shift (most precision) whose multiplier still fits 32 bits. */
	for (shift = 31; shift > 0; shift--) {
		mult = (((__uint128_t)dns << shift) + dt / 2) / dt;
		if (mult <= UINT32_MAX)
			break;
	}
	if (!mult || mult > UINT32_MAX)
		return -ERANGE;
	ret->time_shift = shift;
	ret->time_mult = (uint64_t)mult;
	/* Wraps modulo 2^64 like the kernel's, when the TSC is ahead of the clock. */
	ret->time_zero = b->ns - scale(b->tsc, shift, (uint64_t)mult);
	ret->time_cycles = 0;
	ret->time_mask = 0;
	ret->cap_user_time_zero = true;
	ret->cap_user_time_short = false;
	return 0;
}

uint64_t auxcap_tsc_to_time(const struct auxcap_perf_time_conv *tc, uint64_t tsc)
{
	return tc->time_zero + scale(tsc, tc->time_shift, tc->time_mult);
}
