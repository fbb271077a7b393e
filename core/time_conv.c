/* SPDX-License-Identifier: BSD-3-Clause */
/* Hardware timestamp <-> perf time (auxcap/time_conv.h). */
#include "auxcap/time_conv.h"

uint64_t auxcap_time_conv_to_perf(const struct auxcap_perf_time_conv *tc, uint64_t cyc)
{
	uint64_t shift = tc->time_shift & 63, quot, rem;

	if (tc->cap_user_time_short)
		cyc = tc->time_cycles + ((cyc - tc->time_cycles) & tc->time_mask);
	quot = cyc >> shift;
	rem = cyc & ((UINT64_C(1) << shift) - 1);
	return tc->time_zero + quot * tc->time_mult + ((rem * tc->time_mult) >> shift);
}

uint64_t auxcap_time_conv_from_perf(const struct auxcap_perf_time_conv *tc, uint64_t ns)
{
	uint64_t shift = tc->time_shift & 63, t, quot, rem;

	if (!tc->time_mult)
		return 0;
	t = ns - tc->time_zero;
	quot = t / tc->time_mult;
	rem = t % tc->time_mult;
	return (quot << shift) + (rem << shift) / tc->time_mult;
}

bool auxcap_time_conv_usable(const struct auxcap_perf_time_conv *tc, bool short_record)
{
	if (!tc || !tc->time_mult || tc->time_shift > 63)
		return false;
	return tc->cap_user_time_zero || short_record;
}
