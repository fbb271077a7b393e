/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Time of an emulated Intel PT capture: `auxcap record --emulate` of the example program
 * (a real process, traced under ptrace; its TSC packets carry real rdtsc values) writes
 * TIME_CONV, and every TSC packet of the trace, converted with it by perf's formula, lies
 * within the time span of the capture's records (ITRACE_START, MMAP2, COMM, AUX: stamped by
 * the emulated kernel on the clock the events were opened with).  Full trace and snapshot.
 * The span is tight where it matters: tracing starts when the event is enabled (ITRACE_START)
 * and the first TSC is taken a few milliseconds later, so a conversion to another clock
 * (MONOTONIC vs MONOTONIC_RAW differ by a large fraction of a second on most machines) puts
 * the first TSC before ITRACE_START; the last TSC precedes the last PERF_RECORD_AUX, which
 * publishes the bytes that hold it.
 *
 * Suite 'kernel': the live tracer needs ptrace.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "auxcap/perf_data.h"
#include "auxcap/timeconv.h"
#include "ipt.h"
#include "util.h"

struct tsc_list {
	uint64_t *v;
	size_t nr, cap;
};

static int on_line(void *ctx, const char *line)
{
	struct tsc_list *l = ctx;
	unsigned long long off, tsc;

	if (sscanf(line, "%llx tsc %llx", &off, &tsc) != 2)
		return 0;
	if (l->nr == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		assert_non_null(l->v);
	}
	l->v[l->nr++] = tsc;
	return 0;
}

static void run_record(const char *out, const char *mode)
{
	const char *auxcap = getenv("AUXCAP");
	const char *prog = getenv("AUXCAP_EXAMPLE_LOOP");
	char cmd[4096];

	assert_non_null(auxcap);
	assert_non_null(prog);
	snprintf(cmd, sizeof(cmd), "%s record --emulate %s -f -o %s -- %s 3000 >/dev/null 2>&1",
		 auxcap, mode, out, prog);
	assert_int_equal(system(cmd), 0);
}

static void check_capture(const char *mode)
{
	char path[] = "/tmp/auxcap-test-captime-XXXXXX";
	int fd = mkstemp(path);
	struct auxcap_perf_reader *rd = NULL;
	struct auxcap_perf_event ev;
	struct auxcap_perf_time_conv tc;
	struct tsc_list tscs = { 0 };
	bool have_tc = false;
	uint64_t tmin = UINT64_MAX, tmax = 0, nrec = 0, t_start = 0, t_aux = 0;

	assert_true(fd >= 0);
	close(fd);
	run_record(path, mode);
	assert_int_equal(auxcap_perf_reader_open(path, NULL, &rd), 0);
	while (auxcap_perf_reader_next(rd, &ev) == 1) {
		if (ev.rec.type == AUXCAP_PERF_RECORD_TIME_CONV) {
			tc = ev.u.time_conv;
			have_tc = true;
			/* before any trace */
			assert_int_equal(tscs.nr, 0);
		} else if (ev.rec.type == AUXCAP_PERF_RECORD_AUXTRACE) {
			assert_true(have_tc);
			assert_true(auxcap_ipt_dump(ev.u.auxtrace.data, (size_t)ev.u.auxtrace.size,
						    NULL, NULL, on_line, &tscs) >= 0);
		} else if (ev.rec.type < 64 && ev.rec.has_sample_id &&
			   (ev.rec.sid.present & PERF_SAMPLE_TIME) && ev.rec.sid.time) {
			/* (time 0: side-band written before everything, the kernel's mapping) */
			tmin = ev.rec.sid.time < tmin ? ev.rec.sid.time : tmin;
			tmax = ev.rec.sid.time > tmax ? ev.rec.sid.time : tmax;
			nrec++;
			if (ev.rec.type == PERF_RECORD_ITRACE_START && !t_start)
				t_start = ev.rec.sid.time;
			if (ev.rec.type == PERF_RECORD_AUX)
				t_aux = ev.rec.sid.time;
		}
	}
	auxcap_perf_reader_close(rd);
	unlink(path);

	assert_true(have_tc);
	assert_true(tc.cap_user_time_zero);
	assert_true(nrec >= 3); /* ITRACE_START, COMM/MMAP2, AUX at least */
	assert_true(tscs.nr > 0);
	assert_true(t_start && t_aux);
	assert_int_equal(tmin, t_start);
	assert_int_equal(tmax, t_aux);
	printf("# %s: %zu TSC packets, %" PRIu64 " records from %" PRIu64 " to %" PRIu64
	       " ns; first TSC -> %" PRIu64 " ns, last -> %" PRIu64 " ns\n",
	       *mode ? mode : "full trace", tscs.nr, nrec, tmin, tmax,
	       auxcap_time_conv_to_ns(&tc, tscs.v[0]),
	       auxcap_time_conv_to_ns(&tc, tscs.v[tscs.nr - 1]));
	for (size_t i = 0; i < tscs.nr; i++) {
		uint64_t ns = auxcap_time_conv_to_ns(&tc, tscs.v[i]);

		if (ns < tmin || ns > tmax)
			fail_msg("TSC %" PRIx64 " -> %" PRIu64 " ns, outside the records' span "
				 "%" PRIu64 "..%" PRIu64 " ns",
				 tscs.v[i], ns, tmin, tmax);
		if (i)
			assert_true(tscs.v[i] >= tscs.v[i - 1]);
	}
	free(tscs.v);
}

static void test_full_trace_tsc_within_records(void **state)
{
	(void)state;
	check_capture("");
}

static void test_snapshot_tsc_within_records(void **state)
{
	(void)state;
	check_capture("--snapshot=e");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_trace_tsc_within_records),
		cmocka_unit_test(test_snapshot_tsc_within_records),
	};

	return cmocka_run_group_tests_name("aux/intel_pt/capture_time", tests, NULL, NULL);
}
