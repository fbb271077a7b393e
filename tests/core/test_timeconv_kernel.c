/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Time conversion against the real kernel: what the control page says (the probe), and that
 * the time the kernel stamps on records of an event opened on CLOCK_MONOTONIC_RAW
 * (use_clockid) is what the calibrated counter conversion gives for a counter read around
 * the record's cause.  When the page exports a conversion (cap_user_time_zero: bare-metal
 * x86 with a stable TSC), records on perf's own clock are checked against it too.
 *
 * Needs perf_event_open permission; exits 77 with the reason otherwise.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "auxcap/timeconv.h"
#include "event.h"
#include "util.h"

static const struct auxcap_sys *sys = &auxcap_sys_linux;

static void dummy_attr(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

static void test_probe_reads_the_page(void **state)
{
	struct perf_event_attr a;
	struct auxcap_perf_time_conv tc, mine;
	long page = sysconf(_SC_PAGESIZE);
	void *pc;
	int fd;

	(void)state;
	dummy_attr(&a);
	assert_int_equal(auxcap_time_conv_probe(NULL, &a, &tc), 0);
	/* the same from a page of our own */
	fd = auxcap_event_open(sys, &a, 0, -1, -1, 0);
	assert_true(fd >= 0);
	pc = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(pc != MAP_FAILED);
	assert_int_equal(auxcap_time_conv_read_page(pc, &mine), 0);
	assert_int_equal(tc.cap_user_time_zero, mine.cap_user_time_zero);
	assert_int_equal(tc.cap_user_time_short, mine.cap_user_time_short);
	if (tc.cap_user_time_zero) {
		assert_int_equal(tc.time_mult, mine.time_mult);
		assert_int_equal(tc.time_shift, mine.time_shift);
	}
	printf("# control page: cap_user_time_zero %d (time_mult %llu, time_shift %llu)\n",
	       tc.cap_user_time_zero, (unsigned long long)tc.time_mult,
	       (unsigned long long)tc.time_shift);
	munmap(pc, (size_t)page);
	close(fd);
	assert_int_equal(auxcap_time_conv_probe(NULL, NULL, &tc), -EINVAL);
}

/* The TIME of the COMM record a prctl(PR_SET_NAME) makes, with counter readings around it. */
static void comm_record_time(bool use_clockid, uint64_t *ret_c0, uint64_t *ret_t,
			     uint64_t *ret_c1)
{
	struct auxcap_mapped_ring mr;
	const struct perf_event_header *h;
	struct perf_event_attr a;
	bool found = false;
	int fd, r;

	dummy_attr(&a);
	a.comm = 1;
	a.sample_id_all = 1;
	a.sample_type = PERF_SAMPLE_TIME;
	a.use_clockid = use_clockid;
	a.clockid = CLOCK_MONOTONIC_RAW;
	a.disabled = 0;
	fd = auxcap_event_open(sys, &a, 0, -1, -1, 0);
	assert_true(fd >= 0);
	assert_int_equal(auxcap_mapped_ring_open(sys, fd, 8, 0, &mr), 0);
	assert_int_equal(auxcap_counter_read(ret_c0), 0);
	assert_int_equal(prctl(PR_SET_NAME, "auxcap-tconv", 0, 0, 0), 0);
	assert_int_equal(auxcap_counter_read(ret_c1), 0);
	assert_true(auxcap_ring_begin(&mr.ring) > 0);
	while ((r = auxcap_ring_next(&mr.ring, &h)) == 1) {
		if (h->type != PERF_RECORD_COMM)
			continue;
		/* sample_id with only TIME: the last 8 bytes of the record */
		memcpy(ret_t, (const char *)h + h->size - 8, 8);
		found = true;
	}
	auxcap_ring_end(&mr.ring);
	assert_true(found);
	auxcap_mapped_ring_close(&mr);
	close(fd);
	(void)prctl(PR_SET_NAME, "test_timeconv", 0, 0, 0);
}

static void assert_bracketed(const struct auxcap_perf_time_conv *tc, uint64_t c0, uint64_t t,
			     uint64_t c1, uint64_t tol_ns)
{
	uint64_t lo = auxcap_time_conv_to_ns(tc, c0), hi = auxcap_time_conv_to_ns(tc, c1);

	printf("# counter %llu..%llu -> %llu..%llu ns; record at %llu ns\n",
	       (unsigned long long)c0, (unsigned long long)c1, (unsigned long long)lo,
	       (unsigned long long)hi, (unsigned long long)t);
	assert_true(lo <= hi);
	assert_true(t + tol_ns >= lo);
	assert_true(t <= hi + tol_ns);
}

static void test_clockid_records_match_the_calibration(void **state)
{
	struct auxcap_perf_time_conv tc;
	uint64_t c0, t, c1;

	(void)state;
	if (auxcap_counter_read(&c0) == -EOPNOTSUPP)
		skip();
	assert_int_equal(auxcap_time_conv_calibrate(CLOCK_MONOTONIC_RAW, 0, &tc), 0);
	comm_record_time(true, &c0, &t, &c1);
	/* 200 us: far above the calibration's error a few ms after it, far below a mix-up of
	 * clocks (MONOTONIC_RAW vs perf's sched_clock differ by seconds on most machines) */
	assert_bracketed(&tc, c0, t, c1, 200000);
}

static void test_page_conversion_matches_perf_clock(void **state)
{
	struct perf_event_attr a;
	struct auxcap_perf_time_conv tc;
	uint64_t c0, t, c1;

	(void)state;
	dummy_attr(&a);
	assert_int_equal(auxcap_time_conv_probe(NULL, &a, &tc), 0);
	if (!tc.cap_user_time_zero) {
		printf("# the control page exports no conversion here (no stable TSC "
		       "sched_clock): nothing to compare\n");
		skip();
	}
	comm_record_time(false, &c0, &t, &c1);
	assert_bracketed(&tc, c0, t, c1, 2000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_reads_the_page),
		cmocka_unit_test(test_clockid_records_match_the_calibration),
		cmocka_unit_test(test_page_conversion_matches_perf_clock),
	};

	test_require_perf(0);
	return cmocka_run_group_tests_name("core/timeconv_kernel", tests, NULL, NULL);
}
