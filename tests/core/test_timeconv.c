/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the time conversion (core/timeconv.c).
 *
 * The reference for perf's formula is computed here independently, in 128-bit arithmetic:
 * ns = time_zero + floor(cyc * mult / 2^shift) (mod 2^64), which is what perf's split form
 * (cyc >> shift) * mult + ((cyc & mask) * mult) >> shift evaluates to exactly.  Calibration
 * is checked against fresh readings of the clock it calibrated against.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "auxcap/timeconv.h"

__extension__ typedef unsigned __int128 u128;

static uint64_t ref_to_ns(const struct auxcap_perf_time_conv *tc, uint64_t cyc)
{
	return tc->time_zero + (uint64_t)(((u128)cyc * tc->time_mult) >> tc->time_shift);
}

static uint64_t rnd64(uint64_t *s)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

static void test_to_ns_is_perfs_formula(void **state)
{
	struct auxcap_perf_time_conv tc;
	uint64_t seed = 0x1234567;

	(void)state;
	for (int i = 0; i < 100000; i++) {
		memset(&tc, 0, sizeof(tc));
		tc.time_shift = rnd64(&seed) % 32;
		tc.time_mult = rnd64(&seed) & 0xffffffff;
		tc.time_zero = rnd64(&seed);
		tc.cap_user_time_zero = true;
		uint64_t cyc = rnd64(&seed) >> (rnd64(&seed) % 64);

		assert_int_equal(auxcap_time_conv_to_ns(&tc, cyc), ref_to_ns(&tc, cyc));
	}
	/* a value by hand: 3 GHz as the kernel's cyc2ns gives it (mult/2^shift = 1/3) */
	memset(&tc, 0, sizeof(tc));
	tc.time_shift = 10;
	tc.time_mult = 341; /* 341/1024 ns per tick */
	tc.time_zero = 1000;
	assert_int_equal(auxcap_time_conv_to_ns(&tc, 3072), 1000 + 1023);
	assert_int_equal(auxcap_time_conv_to_ns(&tc, 0), 1000);
}

static void test_short_counter_is_widened_first(void **state)
{
	struct auxcap_perf_time_conv tc = {
		.time_shift = 0,
		.time_mult = 40, /* 25 MHz: 40 ns per tick */
		.time_zero = 0,
		.time_cycles = 0xfffff000,
		.time_mask = 0xffffffff, /* a 32-bit counter */
		.cap_user_time_zero = true,
		.cap_user_time_short = true,
	};

	(void)state;
	/* the counter wrapped past 2^32: 0x10 means 0x1_0000_0010 */
	assert_int_equal(auxcap_time_conv_to_ns(&tc, 0x10), (UINT64_C(0x100000010)) * 40);
	assert_int_equal(auxcap_time_conv_to_ns(&tc, 0xfffff100), UINT64_C(0xfffff100) * 40);
}

static void test_from_ns_inverts_to_ns(void **state)
{
	struct auxcap_perf_time_conv tc;
	uint64_t seed = 42;

	(void)state;
	for (int i = 0; i < 100000; i++) {
		memset(&tc, 0, sizeof(tc));
		tc.time_shift = 8 + rnd64(&seed) % 24;
		/* 0.05 .. 40 ns per tick */
		tc.time_mult = ((rnd64(&seed) % 800) + 1) * (UINT64_C(1) << tc.time_shift) / 20;
		if (!tc.time_mult || tc.time_mult >= (UINT64_C(1) << 32))
			continue;
		tc.time_zero = rnd64(&seed);
		uint64_t cyc = rnd64(&seed) >> 12; /* ~ 2^52 ticks: decades at GHz rates */
		uint64_t ns = auxcap_time_conv_to_ns(&tc, cyc);
		uint64_t back = auxcap_time_conv_from_ns(&tc, ns);
		/* several ticks can share a ns: the inverse lands within one ns worth of ticks */
		uint64_t ticks_per_ns = ((UINT64_C(1) << tc.time_shift) + tc.time_mult - 1) /
					tc.time_mult;

		uint64_t again = auxcap_time_conv_to_ns(&tc, back);

		assert_true(back <= cyc && cyc - back <= ticks_per_ns);
		uint64_t ns_per_tick = (tc.time_mult >> tc.time_shift) + 1;

		/* ... and converts back to at most one tick (or one ns) before that ns */
		assert_true(again <= ns && ns - again <= ns_per_tick);
	}
}

static void check_pairs(uint64_t c0, uint64_t n0, uint64_t c1, uint64_t n1)
{
	struct auxcap_perf_time_conv tc;
	double want = (double)(n1 - n0) / (double)(c1 - c0), got;

	assert_int_equal(auxcap_time_conv_from_pairs(c0, n0, c1, n1, &tc), 0);
	assert_true(tc.cap_user_time_zero);
	assert_false(tc.cap_user_time_short);
	assert_true(tc.time_shift <= 31);
	assert_true(tc.time_mult > 0 && tc.time_mult < (UINT64_C(1) << 32));
	/* perf keeps mult as a u32 and shift as a u16: the values survive that */
	assert_int_equal((uint32_t)tc.time_mult, tc.time_mult);
	got = (double)tc.time_mult / (double)(UINT64_C(1) << tc.time_shift);
	/* the slope is as exact as 32 bits of mult allow */
	assert_true(got / want - 1.0 < 1e-8 && got / want - 1.0 > -1e-8);
	/* the anchor lands on the clock, the other end within the rounding of the slope */
	assert_true(ref_to_ns(&tc, c1) - n1 + 1 <= 2);
	uint64_t e0 = ref_to_ns(&tc, c0) > n0 ? ref_to_ns(&tc, c0) - n0 : n0 - ref_to_ns(&tc, c0);

	assert_true((double)e0 <= 2.0 + (double)(n1 - n0) * 1e-8);
}

static void test_from_pairs_fits_the_slope(void **state)
{
	(void)state;
	/* 2.6 GHz TSC after 5 minutes of uptime, MONOTONIC_RAW at 300 s */
	check_pairs(UINT64_C(780000000000), UINT64_C(300000000000), UINT64_C(780052000000),
		    UINT64_C(300020000000));
	/* a VM whose TSC started long before its clock: time_zero wraps below zero */
	check_pairs(UINT64_C(1) << 50, 5000000, (UINT64_C(1) << 50) + 100000000, 45000000);
	/* a 25 MHz Arm generic timer: 40 ns per tick */
	check_pairs(1000, 40000, 1000 + 500000, 40000 + 20000000);
	/* a 1 MHz counter: 1000 ns per tick */
	check_pairs(0, 0, 20000, 20000000);
}

static void test_from_pairs_errors(void **state)
{
	struct auxcap_perf_time_conv tc;

	(void)state;
	assert_int_equal(auxcap_time_conv_from_pairs(10, 10, 10, 20, &tc), -EINVAL);
	assert_int_equal(auxcap_time_conv_from_pairs(10, 20, 11, 20, &tc), -EINVAL);
	assert_int_equal(auxcap_time_conv_from_pairs(11, 10, 10, 20, &tc), -EINVAL);
	assert_int_equal(auxcap_time_conv_from_pairs(0, 0, 1, 1, NULL), -EINVAL);
	/* 2^33 ns per tick does not fit a 32-bit mult even with shift 0 */
	assert_int_equal(auxcap_time_conv_from_pairs(0, 0, 1, UINT64_C(1) << 33, &tc), -ERANGE);
}

static void test_read_page(void **state)
{
	struct perf_event_mmap_page *pc = calloc(1, 4096);
	struct auxcap_perf_time_conv tc;

	(void)state;
	assert_non_null(pc);
	pc->cap_bit0_is_deprecated = 1;
	pc->time_shift = 31;
	pc->time_mult = 123456789;
	pc->time_zero = UINT64_C(0xfffffff000000000);
	pc->time_cycles = 77;
	pc->time_mask = 0xffff;
	pc->lock = 2;
	assert_int_equal(auxcap_time_conv_read_page(pc, &tc), 0);
	assert_false(tc.cap_user_time_zero);
	assert_false(tc.cap_user_time_short);
	assert_int_equal(tc.time_mult, 123456789);
	pc->cap_user_time_zero = 1;
	pc->cap_user_time_short = 1;
	assert_int_equal(auxcap_time_conv_read_page(pc, &tc), 0);
	assert_true(tc.cap_user_time_zero);
	assert_true(tc.cap_user_time_short);
	assert_int_equal(tc.time_shift, 31);
	assert_int_equal(tc.time_zero, UINT64_C(0xfffffff000000000));
	assert_int_equal(tc.time_cycles, 77);
	assert_int_equal(tc.time_mask, 0xffff);
	assert_int_equal(auxcap_time_conv_read_page(NULL, &tc), -EINVAL);
	free(pc);
}

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(clk, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* After calibration, the counter converts to the clock it was calibrated against. */
static void test_calibrate_matches_the_clock(void **state)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC };
	struct auxcap_perf_time_conv tc;
	uint64_t c;

	(void)state;
	if (auxcap_counter_read(&c) == -EOPNOTSUPP) {
		assert_int_equal(auxcap_time_conv_calibrate(CLOCK_MONOTONIC, 0, &tc), -EOPNOTSUPP);
		return;
	}
	for (size_t k = 0; k < sizeof(clocks) / sizeof(clocks[0]); k++) {
		assert_int_equal(auxcap_time_conv_calibrate(clocks[k], 0, &tc), 0);
		for (int i = 0; i < 5; i++) {
			uint64_t a = clock_ns(clocks[k]), b, t;

			assert_int_equal(auxcap_counter_read(&c), 0);
			b = clock_ns(clocks[k]);
			t = auxcap_time_conv_to_ns(&tc, c);
			/* within [a, b] up to the calibration's own error: 1 ms is generous for a
			 * 20 ms calibration read microseconds later */
			assert_true(t + 1000000 >= a && t <= b + 1000000);
			struct timespec nap = { 0, 2000000 };

			nanosleep(&nap, NULL);
		}
		/* and the counter runs forward through it */
		assert_int_equal(auxcap_counter_read(&c), 0);
		assert_true(auxcap_time_conv_from_ns(&tc, clock_ns(clocks[k])) + 1000000 > c);
	}
	assert_int_equal(auxcap_time_conv_calibrate(CLOCK_MONOTONIC, 0, NULL), -EINVAL);
	assert_int_equal(auxcap_time_conv_calibrate((clockid_t)12345, 0, &tc), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_to_ns_is_perfs_formula),
		cmocka_unit_test(test_short_counter_is_widened_first),
		cmocka_unit_test(test_from_ns_inverts_to_ns),
		cmocka_unit_test(test_from_pairs_fits_the_slope),
		cmocka_unit_test(test_from_pairs_errors),
		cmocka_unit_test(test_read_page),
		cmocka_unit_test(test_calibrate_matches_the_clock),
	};

	return cmocka_run_group_tests_name("core/timeconv", tests, NULL, NULL);
}
