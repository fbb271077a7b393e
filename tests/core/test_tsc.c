/* SPDX-License-Identifier: BSD-3-Clause */
/* TSC to clock conversion (core/tsc.c): perf's formula, from two (tsc, ns) pairs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "auxcap/tsc.h"

/* |got - want| <= tol, the difference taken modulo 2^64 as the conversion wraps */
static void assert_near(uint64_t got, uint64_t want, uint64_t tol)
{
	int64_t sd = (int64_t)(got - want);
	uint64_t d = sd < 0 ? (uint64_t)-sd : (uint64_t)sd;

	if (d > tol)
		fail_msg("%llu is %llu away from %llu (tolerance %llu)", (unsigned long long)got,
			 (unsigned long long)d, (unsigned long long)want, (unsigned long long)tol);
}

/* Synthetic pairs: the conversion goes through both and interpolates linearly between. */
static void test_tsc_conv_interpolates(void **state)
{
	static const struct {
		uint64_t tsc0, ns0, dt, dns;
	} cases[] = {
		{ 1000000000000ull, 5000000000ull, 3000000000ull, 1000000000ull }, /* 3 GHz */
		{ 77, 123456789012345ull, 2100000ull, 1000000ull },		      /* 2.1 GHz */
		{ 1ull << 50, 1000, 1000000ull, 40000000ull },			      /* 25 MHz */
		{ 5000000000000000ull, 1, 100000000000ull, 1000000ull }, /* TSC ahead of clock */
	};
	struct auxcap_perf_time_conv tc;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct auxcap_tsc_pair a = { cases[i].tsc0, cases[i].ns0 };
		struct auxcap_tsc_pair b = { cases[i].tsc0 + cases[i].dt,
					     cases[i].ns0 + cases[i].dns };
		/* The expected time at a quarter of the way, in long double arithmetic. */
		long double q = (long double)cases[i].dns / 4;
		uint64_t tol;

		assert_int_equal(auxcap_tsc_conv_make(&a, &b, &tc), 0);
		assert_true(tc.time_mult <= UINT32_MAX);
		assert_true(tc.cap_user_time_zero);
		/* The 32-bit multiplier is exact to 1/mult: that much over the interval. */
		tol = 2 + cases[i].dns / tc.time_mult;
		assert_near(auxcap_tsc_to_time(&tc, b.tsc), b.ns, 1);
		assert_near(auxcap_tsc_to_time(&tc, a.tsc), a.ns, tol);
		assert_near(auxcap_tsc_to_time(&tc, a.tsc + cases[i].dt / 4), a.ns + (uint64_t)q,
			    tol);
	}
}

static void test_tsc_conv_bad_pairs(void **state)
{
	struct auxcap_tsc_pair a = { 100, 100 }, b = { 100, 200 }, c = { 200, 50 };
	struct auxcap_perf_time_conv tc;

	(void)state;
	assert_int_equal(auxcap_tsc_conv_make(&a, &b, &tc), -EINVAL); /* no TSC progress */
	assert_int_equal(auxcap_tsc_conv_make(&a, &c, &tc), -EINVAL); /* clock went back */
	assert_int_equal(auxcap_tsc_conv_make(NULL, &b, &tc), -EINVAL);
	assert_int_equal(auxcap_tsc_pair_read(CLOCK_MONOTONIC, NULL), -EINVAL);
}

/* This machine's TSC against CLOCK_MONOTONIC: a third reading lands where the clock says. */
static void test_tsc_pair_read_calibrates(void **state)
{
	struct auxcap_tsc_pair a, b, c;
	struct auxcap_perf_time_conv tc;
	struct timespec ms20 = { 0, 20000000 };
	int r;

	(void)state;
	r = auxcap_tsc_pair_read(CLOCK_MONOTONIC, &a);
	if (r == -EOPNOTSUPP)
		skip(); /* no TSC in this build */
	assert_int_equal(r, 0);
	nanosleep(&ms20, NULL);
	assert_int_equal(auxcap_tsc_pair_read(CLOCK_MONOTONIC, &b), 0);
	assert_int_equal(auxcap_tsc_conv_make(&a, &b, &tc), 0);
	nanosleep(&ms20, NULL);
	assert_int_equal(auxcap_tsc_pair_read(CLOCK_MONOTONIC, &c), 0);
	/* 20 ms past the calibration window: within 50 us. */
	assert_near(auxcap_tsc_to_time(&tc, c.tsc), c.ns, 50000);
	assert_int_equal(auxcap_tsc_pair_read(-12345, &c), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tsc_conv_interpolates),
		cmocka_unit_test(test_tsc_conv_bad_pairs),
		cmocka_unit_test(test_tsc_pair_read_calibrates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
