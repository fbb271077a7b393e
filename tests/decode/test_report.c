/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The report's aggregation (decode/report.c, auxcap/decode_report.h) on synthesized captures
 * of the toy backend: every trace event, sample and loss is written by the test, so each
 * expected figure follows by hand from the timeline below and the rules of
 * auxcap/decode_report.h (no symbols: functions are their entry addresses).
 *
 *   self/total time     calls and returns through main, run, work, leaf and a recursive
 *                       function; a trace stop; a gap (its time is gap time)
 *   instructions        the same flow with instruction counts: self to the frame the
 *                       thread was in, total over the stack, recursion once
 *   samples             self by IP (an IP without symbol: the trace's function), total over
 *                       the sample's stack; kernel IPs as one entry; threads without trace
 *   losses              LOST, LOST_SAMPLES, AUX flags, AUXTRACE_ERROR with notes, holes,
 *                       gaps; a clean capture says no loss
 *   per thread          the same function apart per thread, trace of an unknown thread
 *   call graph          the edges caller -> callee: calls, time and instructions
 *   calls               each call of the chosen functions from its call to its return:
 *                       time, instructions, caller, histograms, the longest kept; calls
 *                       over a gap, still running at the end, recursion
 *   progress            the session's callback: both phases, 0 to total, never back
 *   memory              sampled data accesses by level, function and cache line: sums,
 *                       latencies, the order of both tables, who touched a line
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "auxcap/backend.h"
#include "auxcap/decode.h"
#include "auxcap/decode_report.h"
#include "capture_builder.h"
#include "util.h"
#include "toy_backend.h"

static char g_dir[256];

#define MAIN 0x1000
#define RUN 0x2000
#define WORK 0x3000
#define LEAF 0x4000
#define REC 0x5000

/* TIME_CONV with perf time = tsc. */
static struct cb *start(const char *name, char *path, size_t n)
{
	struct auxcap_perf_time_conv tc = { 0 };
	struct cb *b;

	snprintf(path, n, "%s/%s", g_dir, name);
	b = cb_open(path, "toy_trace//", TOY_ATTR_TYPE);
	assert_non_null(b);
	tc.time_mult = 1;
	tc.cap_user_time_zero = true;
	cb_time_conv(b, &tc);
	cb_auxtrace_info(b, TOY_TYPE, NULL, 0);
	return b;
}

static struct auxcap_decode *open_capture(const char *path, auxcap_decode_progress_fn fn,
					  void *arg)
{
	struct auxcap_decode_opts o = { .sz = sizeof(o) };
	struct auxcap_decode *d = NULL;
	char err[256] = "";

	o.errbuf = err;
	o.errlen = sizeof(err);
	o.progress = fn;
	o.progress_arg = arg;
	if (auxcap_decode_open(path, &o, &d) < 0)
		fail_msg("auxcap_decode_open(%s): %s", path, err);
	return d;
}

static struct auxcap_report *report_of(struct auxcap_decode *d, bool per_thread,
				       size_t max_notes)
{
	struct auxcap_report_opts o = { .sz = sizeof(o) };
	struct auxcap_report *r = NULL;

	o.per_thread = per_thread;
	o.max_notes = max_notes;
	assert_int_equal(auxcap_report_run(d, &o, &r), 0);
	return r;
}

/* The function of entry @addr (no symbols here), of thread @tid with per_thread. */
static const struct auxcap_report_func *func(const struct auxcap_report *r, uint64_t addr,
					     int32_t tid)
{
	for (size_t i = 0; i < auxcap_report_nr_funcs(r); i++) {
		const struct auxcap_report_func *f = auxcap_report_get_func(r, i);

		if (!f->name && !f->kernel && f->addr == addr && f->tid == tid)
			return f;
	}
	fail_msg("no function at 0x%" PRIx64 " (tid %d)", addr, tid);
	return NULL;
}

static const struct auxcap_report_thread *thread(const struct auxcap_report *r, int32_t tid)
{
	for (size_t i = 0; i < auxcap_report_nr_threads(r); i++)
		if (auxcap_report_get_thread(r, i)->tid == tid)
			return auxcap_report_get_thread(r, i);
	fail_msg("no thread %d", tid);
	return NULL;
}

/*
 * Thread 9 (one per-task queue), one event per timestamp:
 *
 *   1000  ENABLE at main                       stack: main
 *   2000  call main -> run                            main run
 *   3000  call run -> work                            main run work
 *   4000  call work -> leaf                           main run work leaf
 *   4500  return leaf -> work
 *   5000  jcc in work
 *   6000  return work -> run
 *   7000  call run -> rec                             main run rec
 *   8000  call rec -> rec (recursion)                 main run rec rec
 *   9000  return rec -> rec
 *  10000  return rec -> run
 *  11000  DISABLE in run (tracing stops)
 *  15000  ENABLE in run
 *  16000  GAP
 *  20000  jmp in run
 *  21000  return run -> main
 *
 * @insns: the instruction counts of the events (ninsn), else 0 (events at their timestamps).
 */
static void write_flow(struct cb *b, bool insns)
{
	const uint32_t n[16] = { 0, 5, 3, 2, 4, 1, 2, 1, 2, 3, 1, 2, 0, 0, 4, 1 };
	struct toy_rec t[] = {
		rec(1000, AUXCAP_TRACE_ENABLE, 0, MAIN, 0, 0),
		rec(2000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, MAIN + 0x10, RUN, 0),
		rec(3000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, RUN + 0x20, WORK, 0),
		rec(4000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, WORK + 0x30, LEAF, 0),
		rec(4500, AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, LEAF + 0x10, WORK + 0x35, 0),
		rec(5000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_COND, WORK + 0x38, WORK + 0x40, 0),
		rec(6000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, WORK + 0x48, RUN + 0x25, 0),
		rec(7000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, RUN + 0x30, REC, 0),
		rec(8000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, REC + 0x10, REC, 0),
		rec(9000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, REC + 0x20, REC + 0x15, 0),
		rec(10000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, REC + 0x20, RUN + 0x35, 0),
		rec(11000, AUXCAP_TRACE_DISABLE, 0, RUN + 0x40, 0, 0),
		rec(15000, AUXCAP_TRACE_ENABLE, 0, RUN + 0x42, 0, 0),
		rec(16000, AUXCAP_TRACE_GAP, 0, 0, 0, 0),
		rec(20000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, RUN + 0x50, RUN + 0x60, 0),
		rec(21000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, RUN + 0x70, MAIN + 0x15, 0),
	};

	for (size_t i = 0; insns && i < 16; i++)
		t[i].ninsn = n[i];
	cb_auxtrace(b, t, sizeof(t), 0, 0, 9, (uint32_t)-1);
}

static void test_trace_time(void **state)
{
	const struct auxcap_report_summary *s;
	const struct auxcap_report_thread *t;
	struct auxcap_report *r;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("time.data", path, sizeof(path));

	(void)state;
	cb_comm(b, 9, 9, "flow", false, 500, 0);
	cb_itrace_start(b, 9, 9, 600, 0);
	write_flow(b, false);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, NULL, NULL);
	r = report_of(d, false, 0);
	s = auxcap_report_get_summary(r);
	/* Self: what ran between two events went to the innermost frame. */
	assert_int_equal(func(r, MAIN, -1)->self_ns, 1000);
	assert_int_equal(func(r, RUN, -1)->self_ns, 5000); /* 2-3, 7-8, 10-11, 15-16, 20-21 us */
	assert_int_equal(func(r, WORK, -1)->self_ns, 2500);
	assert_int_equal(func(r, LEAF, -1)->self_ns, 500);
	assert_int_equal(func(r, REC, -1)->self_ns, 3000);
	/* Total: while on the stack (11-15 us stopped, 16-20 us lost: neither counts). */
	assert_int_equal(func(r, MAIN, -1)->total_ns, 12000);
	assert_int_equal(func(r, RUN, -1)->total_ns, 11000);
	assert_int_equal(func(r, WORK, -1)->total_ns, 3000);
	assert_int_equal(func(r, LEAF, -1)->total_ns, 500);
	assert_int_equal(func(r, REC, -1)->total_ns, 3000); /* 7-10 us, the recursion once */
	assert_int_equal(func(r, MAIN, -1)->calls, 0);
	assert_int_equal(func(r, RUN, -1)->calls, 1);
	assert_int_equal(func(r, REC, -1)->calls, 2);
	/* Branches: each to the function it left from. */
	assert_int_equal(func(r, MAIN, -1)->self_branches, 1);
	assert_int_equal(func(r, RUN, -1)->self_branches, 4);
	assert_int_equal(func(r, WORK, -1)->self_branches, 3);
	assert_int_equal(func(r, LEAF, -1)->self_branches, 1);
	assert_int_equal(func(r, REC, -1)->self_branches, 3);
	assert_int_equal(func(r, MAIN, -1)->total_branches, 12);
	assert_int_equal(func(r, RUN, -1)->total_branches, 11);
	assert_int_equal(func(r, WORK, -1)->total_branches, 4);
	assert_int_equal(auxcap_report_nr_funcs(r), 5);

	assert_int_equal(s->trace_ns, 12000);
	assert_true(s->trace_timed);
	assert_int_equal(s->trace_events, 16);
	assert_int_equal(s->branches, 12);
	assert_int_equal(s->gaps, 1);
	assert_int_equal(s->gap_ns, 4000);
	assert_int_equal(s->nr_gap_notes, 1);
	assert_int_equal(s->gap_notes[0].time, 16000);
	assert_int_equal(s->gap_notes[0].offset, 13 * sizeof(struct toy_rec));
	assert_string_equal(s->gap_notes[0].what, "toy gap");
	assert_int_equal(s->trace_first, 1000);
	assert_int_equal(s->trace_last, 21000);
	assert_int_equal(s->first_time, 500); /* the COMM record */
	assert_int_equal(s->last_time, 21000);
	assert_int_equal(s->nr_cpus, 1);
	assert_int_equal(s->cpus[0], 0);
	assert_false(s->no_loss); /* the gap */
	assert_int_equal(s->nr_queues, 1);
	assert_int_equal(s->aux_bytes, 16 * sizeof(struct toy_rec));

	assert_int_equal(s->nr_threads, 1);
	t = thread(r, 9);
	assert_int_equal(t->pid, 9);
	assert_string_equal(t->comm, "flow");
	assert_int_equal(t->trace_ns, 12000);
	assert_int_equal(t->trace_events, 16);
	assert_int_equal(t->gaps, 1);
	assert_int_equal(t->gap_ns, 4000);

	/* Orders. */
	assert_int_equal(auxcap_report_auto_key(r), AUXCAP_REPORT_SORT_SELF);
	assert_int_equal(auxcap_report_get_func(r, 0)->addr, RUN);
	assert_int_equal(auxcap_report_get_func(r, 1)->addr, REC);
	assert_int_equal(auxcap_report_get_func(r, 4)->addr, LEAF);
	assert_int_equal(auxcap_report_sort(r, AUXCAP_REPORT_SORT_TOTAL, 0), 0);
	assert_int_equal(auxcap_report_get_func(r, 0)->addr, MAIN);
	assert_int_equal(auxcap_report_get_func(r, 1)->addr, RUN);
	assert_int_equal(auxcap_report_sort(r, AUXCAP_REPORT_SORT_CALLS, 0), 0);
	assert_int_equal(auxcap_report_get_func(r, 0)->addr, REC);
	assert_int_equal(auxcap_report_sort(r, AUXCAP_REPORT_SORT_SAMPLES, s->nr_slots), -EINVAL);
	assert_null(auxcap_report_get_func(r, 5));

	/* Finished: no more events, no second finish. */
	assert_int_equal(auxcap_report_finish(r), -EINVAL);
	assert_int_equal(auxcap_report_event(r, NULL), -EINVAL);
	auxcap_report_free(r);
	auxcap_decode_close(d);
}

static void test_trace_insns(void **state)
{
	const struct auxcap_report_summary *s;
	struct auxcap_report *r;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("insns.data", path, sizeof(path));

	(void)state;
	cb_itrace_start(b, 9, 9, 600, 0);
	write_flow(b, true);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, NULL, NULL);
	r = report_of(d, false, 0);
	s = auxcap_report_get_summary(r);
	/* An event's instructions ran in the frame the thread was in before it. */
	assert_int_equal(func(r, MAIN, -1)->self_insns, 5);
	assert_int_equal(func(r, RUN, -1)->self_insns, 3 + 1 + 2 + 4 + 1);
	assert_int_equal(func(r, WORK, -1)->self_insns, 2 + 1 + 2);
	assert_int_equal(func(r, LEAF, -1)->self_insns, 4);
	assert_int_equal(func(r, REC, -1)->self_insns, 2 + 3 + 1);
	assert_int_equal(func(r, MAIN, -1)->total_insns, 31);
	assert_int_equal(func(r, RUN, -1)->total_insns, 26);
	assert_int_equal(func(r, WORK, -1)->total_insns, 2 + 4 + 1 + 2);
	assert_int_equal(func(r, LEAF, -1)->total_insns, 4);
	assert_int_equal(func(r, REC, -1)->total_insns, 6);
	assert_int_equal(s->insns, 31);
	assert_int_equal(thread(r, 9)->insns, 31);
	assert_int_equal(auxcap_report_sort(r, AUXCAP_REPORT_SORT_INSNS, 0), 0);
	assert_int_equal(auxcap_report_get_func(r, 0)->addr, RUN);
	assert_int_equal(auxcap_report_get_func(r, 1)->addr, REC);
	auxcap_report_free(r);
	auxcap_decode_close(d);
}

static void test_samples(void **state)
{
	const struct auxcap_report_summary *s;
	const struct auxcap_report_func *f;
	struct auxcap_report *r;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("samples.data", path, sizeof(path));
	size_t clk = 1; /* cpu-clock, evsel 1 */

	(void)state;
	cb_itrace_start(b, 9, 9, 600, 0);
	cb_sample(b, 1, RUN + 0x10, 9, 9, 2500, 0, 1);	 /* in run: run, main */
	cb_sample(b, 1, LEAF + 0x4, 9, 9, 4200, 0, 1);	 /* in leaf: leaf, work, run, main */
	cb_sample(b, 1, REC + 0x18, 9, 9, 9500, 0, 1);	 /* in rec: rec (twice), run, main */
	cb_sample(b, 1, 0x9999, 9, 9, 30000, 0, 1);	 /* never ran: not found; main */
	cb_sample(b, 1, 0xffffffff81000000ull, 9, 9, 30500, 0, 1); /* the kernel; main */
	cb_sample(b, 1, 0x1234, 77, 77, 31000, 1, 1);	 /* a thread without trace */
	write_flow(b, false);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, NULL, NULL);
	r = report_of(d, false, 0);
	s = auxcap_report_get_summary(r);
	assert_int_equal(s->nr_slots, 3);
	assert_int_equal(s->samples, 6);
	assert_int_equal(s->slots[clk].samples, 6);
	assert_string_equal(s->slots[clk].name, "cpu-clock");
	assert_int_equal(s->slots[clk].traced, 5);
	assert_int_equal(s->slots[clk].aligned, 3);
	assert_int_equal(s->slots[0].samples, 0);
	assert_int_equal(s->slots[2].samples, 0);

	/* IPs without symbols that the trace found: their function's entry. */
	assert_int_equal(func(r, RUN, -1)->samples[clk], 1);
	assert_int_equal(func(r, RUN, -1)->samples_total[clk], 3);
	assert_int_equal(func(r, LEAF, -1)->samples[clk], 1);
	assert_int_equal(func(r, LEAF, -1)->samples_total[clk], 1);
	assert_int_equal(func(r, REC, -1)->samples[clk], 1);
	assert_int_equal(func(r, REC, -1)->samples_total[clk], 1); /* recursion once */
	assert_int_equal(func(r, WORK, -1)->samples[clk], 0);
	assert_int_equal(func(r, WORK, -1)->samples_total[clk], 1);
	assert_int_equal(func(r, MAIN, -1)->samples[clk], 0);
	assert_int_equal(func(r, MAIN, -1)->samples_total[clk], 5);
	/* Not found: the IP itself; no trace: the IP; the kernel: one entry. */
	assert_int_equal(func(r, 0x9999, -1)->samples[clk], 1);
	assert_int_equal(func(r, 0x1234, -1)->samples[clk], 1);
	assert_int_equal(func(r, 0x1234, -1)->samples_total[clk], 1);
	f = NULL;
	for (size_t i = 0; i < auxcap_report_nr_funcs(r); i++)
		if (auxcap_report_get_func(r, i)->kernel)
			f = auxcap_report_get_func(r, i);
	assert_non_null(f);
	assert_null(f->name);
	assert_int_equal(f->samples[clk], 1);

	assert_int_equal(thread(r, 9)->samples, 5);
	assert_int_equal(thread(r, 77)->samples, 1);
	assert_int_equal(thread(r, 77)->trace_events, 0);
	assert_int_equal(s->nr_threads, 2);
	assert_int_equal(auxcap_report_get_thread(r, 0)->tid, 9); /* trace time first */
	assert_int_equal(s->nr_cpus, 2);

	assert_int_equal(auxcap_report_sort(r, AUXCAP_REPORT_SORT_SAMPLES, clk), 0);
	/* 1 sample each: by total (run's 3 first), then by name (none), kernel last, then by
	 * address; functions with total samples only (main, work) after them */
	assert_int_equal(auxcap_report_get_func(r, 0)->addr, RUN);
	assert_int_equal(auxcap_report_get_func(r, 1)->addr, 0x1234);
	assert_int_equal(auxcap_report_get_func(r, 6)->addr, MAIN);
	assert_int_equal(auxcap_report_get_func(r, 7)->addr, WORK);
	/* by total: main (5), run (3), then self 1 total 1 by name and address */
	assert_int_equal(auxcap_report_sort(r, AUXCAP_REPORT_SORT_SAMPLES_TOTAL, clk), 0);
	assert_int_equal(auxcap_report_get_func(r, 0)->addr, MAIN);
	assert_int_equal(auxcap_report_get_func(r, 1)->addr, RUN);
	assert_int_equal(auxcap_report_get_func(r, 2)->addr, 0x1234);
	assert_int_equal(auxcap_report_sort(r, AUXCAP_REPORT_SORT_SAMPLES_TOTAL, 3), -EINVAL);

	/* Objects (no mappings here): user code of no file, and the kernel; sums of self. */
	assert_int_equal(auxcap_report_nr_dsos(r), 2);
	assert_null(auxcap_report_get_dso(r, 2));
	assert_null(auxcap_report_get_dso(r, 0)->dso);
	assert_false(auxcap_report_get_dso(r, 0)->kernel);
	assert_int_equal(auxcap_report_get_dso(r, 0)->samples[clk], 5);
	assert_int_equal(auxcap_report_get_dso(r, 0)->samples_sum, 5);
	assert_int_equal(auxcap_report_get_dso(r, 0)->self_ns, s->trace_ns);
	assert_int_equal(auxcap_report_get_dso(r, 0)->functions, auxcap_report_nr_funcs(r) - 1);
	assert_true(auxcap_report_get_dso(r, 1)->kernel);
	assert_int_equal(auxcap_report_get_dso(r, 1)->samples[clk], 1);
	assert_int_equal(auxcap_report_get_dso(r, 1)->self_ns, 0);
	assert_int_equal(auxcap_report_get_dso(r, 1)->functions, 1);
	auxcap_report_free(r);
	auxcap_decode_close(d);
}

static void test_losses(void **state)
{
	struct toy_rec t[] = {
		rec(1000, AUXCAP_TRACE_ENABLE, 0, MAIN, 0, 0),
		rec(2000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, MAIN + 4, MAIN + 8, 0),
		rec(3000, AUXCAP_TRACE_GAP, 0, 0, 0, 0),
		rec(5000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, MAIN + 4, MAIN + 8, 0),
		rec(6000, AUXCAP_TRACE_GAP, 0, 0, 0, 0),
		rec(6500, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, MAIN + 4, MAIN + 8, 0),
	};
	const struct auxcap_report_summary *s;
	struct auxcap_report *r;
	struct auxcap_decode *d;
	char path[300], msg[32];
	struct cb *b = start("loss.data", path, sizeof(path));

	(void)state;
	cb_itrace_start(b, 5, 5, 500, 0);
	cb_lost(b, 17, 2500, 0);
	cb_lost(b, 3, 2600, 0);
	cb_lost_samples(b, 11, 2700, 0);
	cb_aux(b, 0, 4096, 0x1 /* TRUNCATED */, 5, 5, 4000, 0);
	cb_aux(b, 4096, 100, 0x4 | 0x8 /* PARTIAL, COLLISION */, 5, 5, 4100, 0);
	cb_aux(b, 4196, 64, 0, 5, 5, 4200, 0); /* no loss */
	for (int i = 0; i < 7; i++) {
		snprintf(msg, sizeof(msg), "error %d", i);
		cb_auxtrace_error(b, 40 + (uint32_t)i, 0x400000 + (uint64_t)i, msg, 5, 5,
				  4300 + (uint64_t)i, 0);
	}
	/* Two buffers with a hole between them. */
	cb_auxtrace(b, t, 3 * sizeof(t[0]), 0, 0, 5, (uint32_t)-1);
	cb_auxtrace(b, t + 3, 3 * sizeof(t[0]), 10 * sizeof(t[0]), 0, 5, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, NULL, NULL);
	r = report_of(d, false, 3);
	s = auxcap_report_get_summary(r);
	assert_false(s->no_loss);
	assert_int_equal(s->lost_records, 2);
	assert_int_equal(s->lost, 20);
	assert_int_equal(s->lost_samples_records, 1);
	assert_int_equal(s->lost_samples, 11);
	assert_int_equal(s->aux_truncated, 1);
	assert_int_equal(s->aux_partial, 1);
	assert_int_equal(s->aux_collision, 1);
	assert_int_equal(s->aux_flagged_bytes, 4196);
	assert_int_equal(s->auxtrace_errors, 7);
	assert_int_equal(s->nr_error_notes, 3); /* max_notes */
	assert_string_equal(s->error_notes[0].what, "error 0");
	assert_int_equal(s->error_notes[2].err, 42);
	assert_int_equal(s->error_notes[2].ip, 0x400002);
	assert_int_equal(s->error_notes[2].time, 4302);
	assert_int_equal(s->discontinuities, 1);
	assert_int_equal(s->gaps, 2);
	assert_int_equal(s->gap_ns, 2000 + 500); /* 3000-5000, 6000-6500 */
	assert_int_equal(s->nr_gap_notes, 2);
	assert_int_equal(s->gap_notes[1].offset, 10 * sizeof(t[0]) + 1 * sizeof(t[0]));
	assert_int_equal(s->trace_ns, 3000); /* 1000-3000 (up to the gap), 5000-6000 */
	auxcap_report_free(r);
	auxcap_decode_close(d);

	/* Nothing lost. */
	b = start("clean.data", path, sizeof(path));
	cb_itrace_start(b, 5, 5, 500, 0);
	cb_aux(b, 0, 2 * sizeof(t[0]), 0, 5, 5, 4200, 0);
	cb_auxtrace(b, t, 2 * sizeof(t[0]), 0, 0, 5, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);
	d = open_capture(path, NULL, NULL);
	r = report_of(d, false, 0);
	s = auxcap_report_get_summary(r);
	assert_true(s->no_loss);
	assert_int_equal(s->trace_ns, 1000);
	auxcap_report_free(r);
	auxcap_decode_close(d);
}

/*
 * Two tasks (per-task queues) run main then call run or work; a CPU's queue without any
 * switch record is trace of an unknown thread.
 */
static void test_per_thread(void **state)
{
	struct toy_rec a[] = {
		rec(1000, AUXCAP_TRACE_ENABLE, 0, MAIN, 0, 0),
		rec(2000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, MAIN + 0x10, RUN, 0),
		rec(5000, AUXCAP_TRACE_DISABLE, 0, RUN + 4, 0, 0),
	};
	struct toy_rec bb[] = {
		rec(1000, AUXCAP_TRACE_ENABLE, 0, MAIN, 0, 0),
		rec(4000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, MAIN + 0x10, WORK, 0),
		rec(4500, AUXCAP_TRACE_DISABLE, 0, WORK + 4, 0, 0),
	};
	struct toy_rec c[] = {
		rec(1000, AUXCAP_TRACE_ENABLE, 0, LEAF, 0, 0),
		rec(1700, AUXCAP_TRACE_DISABLE, 0, LEAF + 4, 0, 0),
	};
	struct auxcap_report *r;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("threads.data", path, sizeof(path));

	(void)state;
	cb_itrace_start(b, 100, 100, 500, 0);
	cb_itrace_start(b, 100, 200, 510, 1);
	cb_auxtrace(b, a, sizeof(a), 0, 0, 100, (uint32_t)-1);
	cb_auxtrace(b, bb, sizeof(bb), 0, 1, 200, (uint32_t)-1);
	cb_auxtrace(b, c, sizeof(c), 0, 2, (uint32_t)-1, 3);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, NULL, NULL);
	r = report_of(d, true, 0);
	assert_int_equal(func(r, MAIN, 100)->self_ns, 1000);
	assert_int_equal(func(r, MAIN, 100)->total_ns, 4000);
	assert_int_equal(func(r, RUN, 100)->self_ns, 3000);
	assert_int_equal(func(r, MAIN, 200)->self_ns, 3000);
	assert_int_equal(func(r, WORK, 200)->self_ns, 500);
	assert_int_equal(func(r, LEAF, -1 - 2)->self_ns, 700); /* queue 2 */
	assert_int_equal(thread(r, 100)->trace_ns, 4000);
	assert_int_equal(thread(r, 200)->trace_ns, 3500);
	assert_int_equal(thread(r, 200)->pid, 100);
	assert_int_equal(thread(r, -3)->trace_ns, 700);
	assert_int_equal(auxcap_report_get_thread(r, 0)->tid, 100);
	assert_int_equal(auxcap_report_nr_funcs(r), 5);
	/* objects per thread, by self time */
	assert_int_equal(auxcap_report_nr_dsos(r), 3);
	assert_int_equal(auxcap_report_get_dso(r, 0)->tid, 100);
	assert_int_equal(auxcap_report_get_dso(r, 0)->self_ns, 4000);
	assert_int_equal(auxcap_report_get_dso(r, 0)->functions, 2);
	assert_int_equal(auxcap_report_get_dso(r, 1)->tid, 200);
	assert_int_equal(auxcap_report_get_dso(r, 1)->self_ns, 3500);
	assert_int_equal(auxcap_report_get_dso(r, 2)->tid, -3);
	assert_int_equal(auxcap_report_get_dso(r, 2)->self_ns, 700);
	auxcap_report_free(r);
	auxcap_decode_close(d);

	/* Merged: main of both threads is one function. */
	d = open_capture(path, NULL, NULL);
	r = report_of(d, false, 0);
	assert_int_equal(func(r, MAIN, -1)->self_ns, 4000);
	assert_int_equal(func(r, MAIN, -1)->total_ns, 7500);
	assert_int_equal(auxcap_report_nr_funcs(r), 4);
	assert_int_equal(auxcap_report_nr_dsos(r), 1);
	assert_int_equal(auxcap_report_get_dso(r, 0)->tid, -1);
	assert_int_equal(auxcap_report_get_dso(r, 0)->self_ns, 8200);
	assert_int_equal(auxcap_report_get_dso(r, 0)->functions, 4);
	auxcap_report_free(r);
	auxcap_decode_close(d);
}

struct progress_log {
	enum auxcap_decode_phase phase[4096];
	uint64_t done[4096], total[4096];
	size_t n;
};

static void on_progress(void *arg, enum auxcap_decode_phase phase, uint64_t done, uint64_t total)
{
	struct progress_log *p = arg;

	if (p->n < 4096) {
		p->phase[p->n] = phase;
		p->done[p->n] = done;
		p->total[p->n] = total;
		p->n++;
	}
}

static void test_progress(void **state)
{
	static struct progress_log log;
	static struct toy_rec t[20000];
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("progress.data", path, sizeof(path));
	size_t first_decode = 0, mid = 0, nev = 0;
	uint64_t trace_bytes = sizeof(t);

	(void)state;
	for (size_t i = 0; i < 20000; i++)
		t[i] = rec(1000 + i, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x10, 0x20, 0);
	cb_itrace_start(b, 3, 3, 500, 0);
	/* Two queues, the first in 4 contiguous buffers. */
	for (size_t k = 0; k < 4; k++)
		cb_auxtrace(b, t + k * 4000, 4000 * sizeof(t[0]), k * 4000 * sizeof(t[0]), 0, 3,
			    (uint32_t)-1);
	cb_auxtrace(b, t + 16000, 4000 * sizeof(t[0]), 0, 1, 4, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);

	memset(&log, 0, sizeof(log));
	d = open_capture(path, on_progress, &log);
	/* The first pass: from 0 to the data section's size. */
	assert_true(log.n >= 2);
	assert_int_equal(log.phase[0], AUXCAP_DECODE_PHASE_READ);
	assert_int_equal(log.done[0], 0);
	assert_int_equal(log.phase[log.n - 1], AUXCAP_DECODE_PHASE_READ);
	assert_int_equal(log.done[log.n - 1], log.total[log.n - 1]);
	assert_true(log.total[0] > trace_bytes);
	first_decode = log.n;
	while (auxcap_decode_next(d, &ev) == 1)
		nev++;
	assert_int_equal(nev, 20000 + 1 /* ITRACE_START */);
	assert_true(log.n > first_decode + 4);
	assert_int_equal(log.phase[first_decode], AUXCAP_DECODE_PHASE_DECODE);
	assert_int_equal(log.done[first_decode], 0);
	for (size_t i = first_decode; i < log.n; i++) {
		assert_int_equal(log.phase[i], AUXCAP_DECODE_PHASE_DECODE);
		assert_int_equal(log.total[i], trace_bytes);
		assert_true(log.done[i] <= log.total[i]);
		if (i > first_decode)
			assert_true(log.done[i] >= log.done[i - 1]);
		mid += log.done[i] > 0 && log.done[i] < trace_bytes;
	}
	assert_int_equal(log.done[log.n - 1], trace_bytes);
	assert_true(mid >= 3); /* progress in between, not only at the ends */
	/* Only once at the end. */
	log.n = 0;
	assert_int_equal(auxcap_decode_next(d, &ev), 0);
	assert_int_equal(log.n, 0);
	auxcap_decode_close(d);
}

static bool choose_all(void *arg, const struct auxcap_report_func *f)
{
	(void)arg;
	(void)f;
	return true;
}

static bool choose_leaf_work(void *arg, const struct auxcap_report_func *f)
{
	(*(int *)arg)++;
	return !f->name && (f->addr == LEAF || f->addr == WORK);
}

static const struct auxcap_report_calls *calls_at(const struct auxcap_report *r, uint64_t addr)
{
	for (size_t i = 0; i < auxcap_report_nr_calls(r); i++)
		if (auxcap_report_get_calls(r, i)->func->addr == addr)
			return auxcap_report_get_calls(r, i);
	fail_msg("no calls of the function at 0x%" PRIx64, addr);
	return NULL;
}

static void test_calls(void **state)
{
	struct auxcap_report_opts o = { .sz = sizeof(o) };
	const struct auxcap_report_calls *c;
	struct auxcap_report *r = NULL;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("calls.data", path, sizeof(path));
	int asked = 0;

	(void)state;
	cb_itrace_start(b, 9, 9, 600, 0);
	write_flow(b, false); /* (instructions would spread each event's time: below) */
	assert_int_equal(cb_close(b), 0);

	/* Every function chosen: those the trace called, longest together first. */
	d = open_capture(path, NULL, NULL);
	o.calls_of = choose_all;
	assert_int_equal(auxcap_report_run(d, &o, &r), 0);
	assert_int_equal(auxcap_report_nr_calls(r), 4); /* not main: the trace began in it */
	assert_int_equal(auxcap_report_get_calls(r, 0)->func->addr, REC);
	assert_int_equal(auxcap_report_get_calls(r, 1)->func->addr, WORK);
	assert_int_equal(auxcap_report_get_calls(r, 2)->func->addr, LEAF);
	assert_int_equal(auxcap_report_get_calls(r, 3)->func->addr, RUN);
	assert_null(auxcap_report_get_calls(r, 4));
	/* leaf: 4.0-4.5 us, back to work */
	c = calls_at(r, LEAF);
	assert_int_equal(c->calls, 1);
	assert_int_equal(c->timed, 1);
	assert_int_equal(c->min_ns, 500);
	assert_int_equal(c->max_ns, 500);
	assert_int_equal(c->sum_ns, 500);
	assert_int_equal(c->hist_ns[9], 1); /* [256, 512) */
	assert_int_equal(c->hist_insns[0], 1); /* no instructions in this flow */
	assert_int_equal(c->nr_slowest, 1);
	assert_int_equal(c->slowest[0].start, 4000);
	assert_int_equal(c->slowest[0].end, 4500);
	assert_true(c->slowest[0].timed);
	assert_int_equal(c->slowest[0].tid, 9);
	assert_int_equal(c->slowest[0].cpu, -1); /* a per-task queue, no CPU */
	assert_int_equal(c->slowest[0].caller->addr, WORK);
	/* work: 3-6 us, all of it traced, 0.5 us of it in leaf */
	c = calls_at(r, WORK);
	assert_int_equal(c->calls, 1);
	assert_int_equal(c->sum_ns, 3000);
	assert_int_equal(c->slowest[0].caller->addr, RUN);
	assert_int_equal(c->slowest[0].trace_ns, 3000);
	assert_int_equal(c->slowest[0].nr_callees, 1);
	assert_int_equal(c->slowest[0].callees[0].func->addr, LEAF);
	assert_int_equal(c->slowest[0].callees[0].ns, 500);
	assert_int_equal(c->slowest[0].callees[0].calls, 1);
	assert_int_equal(c->slowest[0].callees_ns, 500);
	assert_int_equal(calls_at(r, LEAF)->slowest[0].nr_callees, 0);
	assert_int_equal(calls_at(r, LEAF)->slowest[0].callees_ns, 0);
	/* rec: each activation, the outer one longest */
	c = calls_at(r, REC);
	assert_int_equal(c->calls, 2);
	assert_int_equal(c->min_ns, 1000);
	assert_int_equal(c->max_ns, 3000);
	assert_int_equal(c->sum_ns, 4000);
	assert_int_equal(c->hist_ns[10], 1); /* 1000 in [512, 1024) */
	assert_int_equal(c->hist_ns[12], 1); /* 3000 in [2048, 4096) */
	assert_int_equal(c->nr_slowest, 2);
	assert_int_equal(c->slowest[0].ns, 3000);
	assert_int_equal(c->slowest[0].start, 7000);
	assert_int_equal(c->slowest[0].caller->addr, RUN);
	assert_int_equal(c->slowest[1].ns, 1000);
	assert_int_equal(c->slowest[1].caller->addr, REC);
	/* the outer one's time: 1 us of it in the inner one */
	assert_int_equal(c->slowest[0].nr_callees, 1);
	assert_int_equal(c->slowest[0].callees[0].func->addr, REC);
	assert_int_equal(c->slowest[0].callees[0].ns, 1000);
	assert_int_equal(c->slowest[1].nr_callees, 0);
	/* run returned after the gap: not counted */
	c = calls_at(r, RUN);
	assert_int_equal(c->calls, 0);
	assert_int_equal(c->across_gap, 1);
	assert_int_equal(c->unfinished, 0);
	assert_int_equal(c->nr_slowest, 0);
	assert_int_equal(c->min_ns, 0);
	auxcap_report_free(r);
	auxcap_decode_close(d);

	/* Instructions: those of the events after the call, the return's too (leaf's, not the 3
	 * of the call into work). */
	b = start("calls_insns.data", path, sizeof(path));
	cb_itrace_start(b, 9, 9, 600, 0);
	write_flow(b, true);
	assert_int_equal(cb_close(b), 0);
	d = open_capture(path, NULL, NULL);
	assert_int_equal(auxcap_report_run(d, &o, &r), 0);
	c = calls_at(r, LEAF);
	assert_int_equal(c->sum_insns, 4);
	assert_int_equal(c->hist_insns[3], 1); /* [4, 8) */
	c = calls_at(r, WORK);
	assert_int_equal(c->sum_insns, 2 + 4 + 1 + 2);
	assert_int_equal(c->slowest[0].insns, 9);
	c = calls_at(r, REC);
	assert_int_equal(c->min_insns, 3);
	assert_int_equal(c->max_insns, 2 + 3 + 1);
	assert_int_equal(c->sum_insns, 9);
	auxcap_report_free(r);
	auxcap_decode_close(d);

	/* Chosen: leaf and work; the two longest of five calls kept; one call still running. */
	b = start("calls2.data", path, sizeof(path));
	{
		/* each call: call, a branch in leaf with the call's instructions, return */
		const uint64_t len[5] = { 300, 900, 100, 700, 900 };
		struct toy_rec t[20];
		size_t n = 0;
		uint64_t at = 1000;

		t[n++] = rec(at, AUXCAP_TRACE_ENABLE, 0, MAIN, 0, 0);
		for (uint32_t k = 0; k < 5; k++) {
			t[n++] = rec(at += 1000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, MAIN + 0x10,
				     LEAF, 0);
			t[n++] = rec(at + 50, AUXCAP_TRACE_BRANCH, AUXCAP_BR_COND, LEAF + 4, LEAF + 8,
				     10 + k);
			if (k == 4) { /* a system call: tracing stops for 0.4 us */
				t[n++] = rec(at + 100, AUXCAP_TRACE_DISABLE, 0, LEAF + 9, 0, 0);
				t[n++] = rec(at + 500, AUXCAP_TRACE_ENABLE, 0, LEAF + 11, 0, 0);
			}
			t[n++] = rec(at + len[k], AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, LEAF + 0x10,
				     MAIN + 0x15, 0);
		}
		t[n++] = rec(at += 1000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, MAIN + 0x20, WORK, 0);
		t[n++] = rec(at + 400, AUXCAP_TRACE_BRANCH, AUXCAP_BR_COND, WORK + 4, WORK + 8, 0);
		cb_auxtrace(b, t, n * sizeof(t[0]), 0, 0, 9, (uint32_t)-1);
	}
	assert_int_equal(cb_close(b), 0);
	d = open_capture(path, NULL, NULL);
	o.calls_of = choose_leaf_work;
	o.calls_arg = &asked;
	o.slowest = 2;
	assert_int_equal(auxcap_report_run(d, &o, &r), 0);
	assert_int_equal(asked, 3); /* main, leaf, work: each once */
	assert_int_equal(auxcap_report_nr_calls(r), 2);
	c = calls_at(r, LEAF);
	assert_int_equal(c->calls, 5);
	assert_int_equal(c->sum_ns, 2900);
	assert_int_equal(c->min_ns, 100);
	assert_int_equal(c->sum_insns, 10 + 11 + 12 + 13 + 14);
	assert_int_equal(c->hist_ns[7], 1);  /* 100 */
	assert_int_equal(c->hist_ns[9], 1);  /* 300 */
	assert_int_equal(c->hist_ns[10], 3); /* 700, 900, 900 */
	assert_int_equal(c->nr_slowest, 2);
	/* 900 ns twice: the one with more instructions first */
	assert_int_equal(c->slowest[0].ns, 900);
	assert_int_equal(c->slowest[0].insns, 14);
	assert_int_equal(c->slowest[0].start, 6000);
	assert_int_equal(c->slowest[0].trace_ns, 500); /* 0.4 us of its 0.9 not traced */
	assert_int_equal(c->slowest[1].trace_ns, 900);
	assert_int_equal(c->slowest[1].ns, 900);
	assert_int_equal(c->slowest[1].insns, 11);
	assert_int_equal(c->slowest[1].caller->addr, MAIN);
	c = calls_at(r, WORK);
	assert_int_equal(c->calls, 0);
	assert_int_equal(c->unfinished, 1);
	/* it had run from 7 us to the thread's last event, 7.4 us */
	assert_int_equal(c->running_start, 7000);
	assert_int_equal(c->running_ns, 400);
	assert_int_equal(c->running_tid, 9);
	assert_int_equal(calls_at(r, LEAF)->running_ns, 0);
	auxcap_report_free(r);
	auxcap_decode_close(d);
}

static const struct auxcap_report_edge *edge(const struct auxcap_report *r, uint64_t caller,
					     uint64_t callee)
{
	for (size_t i = 0; i < auxcap_report_nr_edges(r); i++) {
		const struct auxcap_report_edge *e = auxcap_report_get_edge(r, i);

		if (e->caller->addr == caller && e->callee->addr == callee)
			return e;
	}
	fail_msg("no edge 0x%" PRIx64 " -> 0x%" PRIx64, caller, callee);
	return NULL;
}

static void test_call_graph(void **state)
{
	struct auxcap_report_opts o = { .sz = sizeof(o) };
	struct auxcap_report *r = NULL;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("graph.data", path, sizeof(path));

	(void)state;
	cb_itrace_start(b, 9, 9, 600, 0);
	write_flow(b, false);
	assert_int_equal(cb_close(b), 0);

	/* Without the option: none. */
	d = open_capture(path, NULL, NULL);
	assert_int_equal(auxcap_report_run(d, &o, &r), 0);
	assert_int_equal(auxcap_report_nr_edges(r), 0);
	assert_null(auxcap_report_get_edge(r, 0));
	auxcap_report_free(r);
	auxcap_decode_close(d);

	d = open_capture(path, NULL, NULL);
	o.call_graph = true;
	assert_int_equal(auxcap_report_run(d, &o, &r), 0);
	/* main was not called in the trace (it began in it): no edge into it */
	assert_int_equal(auxcap_report_nr_edges(r), 5);
	/* run's call, its trace time (the stop and the gap not counted), as its total */
	assert_int_equal(edge(r, MAIN, RUN)->calls, 1);
	assert_int_equal(edge(r, MAIN, RUN)->ns, 11000);
	assert_int_equal(edge(r, RUN, WORK)->ns, 3000);
	assert_int_equal(edge(r, WORK, LEAF)->ns, 500);
	/* recursion: each activation from the one that made it */
	assert_int_equal(edge(r, RUN, REC)->calls, 1);
	assert_int_equal(edge(r, RUN, REC)->ns, 3000);
	assert_int_equal(edge(r, REC, REC)->calls, 1);
	assert_int_equal(edge(r, REC, REC)->ns, 1000);
	/* by time: main -> run first, rec -> rec before work -> leaf last */
	assert_ptr_equal(auxcap_report_get_edge(r, 0), edge(r, MAIN, RUN));
	assert_ptr_equal(auxcap_report_get_edge(r, 3), edge(r, REC, REC));
	assert_ptr_equal(auxcap_report_get_edge(r, 4), edge(r, WORK, LEAF));
	auxcap_report_free(r);
	auxcap_decode_close(d);

	/* Instructions per edge, and the order of two edges of equal time by them. */
	b = start("graph_insns.data", path, sizeof(path));
	cb_itrace_start(b, 9, 9, 600, 0);
	write_flow(b, true);
	assert_int_equal(cb_close(b), 0);
	d = open_capture(path, NULL, NULL);
	assert_int_equal(auxcap_report_run(d, &o, &r), 0);
	assert_int_equal(edge(r, RUN, WORK)->insns, 2 + 4 + 1 + 2);
	assert_int_equal(edge(r, WORK, LEAF)->insns, 4);
	assert_int_equal(edge(r, RUN, REC)->insns, 2 + 3 + 1);
	assert_int_equal(edge(r, REC, REC)->insns, 3);
	assert_int_equal(edge(r, MAIN, RUN)->insns, 26);
	auxcap_report_free(r);
	auxcap_decode_close(d);
}

/* A sampled data access at @tsc by the code at @ip, of address @addr. */
static struct toy_rec access_rec(uint64_t tsc, uint64_t ip, uint64_t addr, uint32_t mem,
				 uint32_t lat)
{
	struct toy_rec t = rec(tsc, AUXCAP_TRACE_SAMPLE, 0, ip, addr, mem | lat << 16);

	t.flags |= TOY_MEM;
	return t;
}

static const struct auxcap_report_mem_func *mem_func(const struct auxcap_report *r,
						     uint64_t addr)
{
	for (size_t i = 0; i < auxcap_report_nr_mem_funcs(r); i++)
		if (auxcap_report_get_mem_func(r, i)->func->addr == addr)
			return auxcap_report_get_mem_func(r, i);
	fail_msg("no memory figures of the function at 0x%" PRIx64, addr);
	return NULL;
}

/*
 * Thread 9's sampled data accesses (L: load, S: store, lat in cycles; each function's at
 * its entry: without symbols, an address is a function of its own):
 *   MAIN  L 0x10000 L1 hit 4, L 0x10010 L1 hit 4, L 0x10020 L1 hit 6
 *   RUN   L 0x20040 memory, TLB walk 200; S 0x20048 L1 hit 4; L+S (atomic) 0x20050 LLC 40
 *   WORK  S 0x10008 L2 (L1 miss, no LLC) 12; L 0x30000 memory, remote 300; L 0x30100 no
 *         cache event 1
 *   LEAF  a branch sample (no data access)
 */
static void test_mem(void **state)
{
	const uint32_t L = AUXCAP_TRACE_MEM_LOAD, S = AUXCAP_TRACE_MEM_STORE,
		       L1 = AUXCAP_TRACE_MEM_L1_ACCESS, L1M = L1 | AUXCAP_TRACE_MEM_L1_MISS,
		       LLC = L1M | AUXCAP_TRACE_MEM_LLC_ACCESS,
		       MEM = LLC | AUXCAP_TRACE_MEM_LLC_MISS, TLB = AUXCAP_TRACE_MEM_TLB_ACCESS,
		       WALK = TLB | AUXCAP_TRACE_MEM_TLB_MISS;
	struct toy_rec t[] = {
		access_rec(1000, MAIN, 0x10000, L | L1 | TLB, 4),
		access_rec(1100, MAIN, 0x10010, L | L1 | TLB, 4),
		access_rec(1200, MAIN, 0x10020, L | L1 | TLB, 6),
		access_rec(2000, RUN, 0x20040, L | MEM | WALK, 200),
		access_rec(2100, RUN, 0x20048, S | L1 | TLB, 4),
		access_rec(2200, RUN, 0x20050, L | S | LLC | TLB, 40),
		access_rec(3000, WORK, 0x10008, S | L1M | TLB, 12),
		access_rec(3100, WORK, 0x30000, L | MEM | AUXCAP_TRACE_MEM_REMOTE | TLB, 300),
		access_rec(3200, WORK, 0x30100, L, 1),
		rec(4000, AUXCAP_TRACE_SAMPLE, AUXCAP_BR_CALL, LEAF + 1, LEAF + 0x10, 0),
	};
	/* thread 10 of the same process stores to RUN's line: shared */
	struct toy_rec t10[] = { access_rec(2300, RUN, 0x20044, S | L1M | TLB, 12) };
	struct auxcap_report_opts o = { .sz = sizeof(o) };
	const struct auxcap_report_mem *m;
	const struct auxcap_report_mem_line *l;
	struct auxcap_report *r = NULL;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("mem.data", path, sizeof(path));

	(void)state;
	cb_itrace_start(b, 9, 9, 600, 0);
	cb_itrace_start(b, 9, 10, 610, 0);
	cb_auxtrace(b, t, sizeof(t), 0, 0, 9, (uint32_t)-1);
	cb_auxtrace(b, t10, sizeof(t10), 0, 1, 10, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);

	/* Without the option: the sums, no tables. */
	d = open_capture(path, NULL, NULL);
	assert_int_equal(auxcap_report_run(d, &o, &r), 0);
	m = auxcap_report_get_mem(r);
	assert_int_equal(m->accesses, 10);
	assert_int_equal(auxcap_report_nr_mem_funcs(r), 0);
	assert_int_equal(auxcap_report_nr_mem_lines(r), 0);
	assert_null(auxcap_report_get_mem_line(r, 0));
	auxcap_report_free(r);
	auxcap_decode_close(d);

	d = open_capture(path, NULL, NULL);
	o.mem = true;
	assert_int_equal(auxcap_report_run(d, &o, &r), 0);
	m = auxcap_report_get_mem(r);
	assert_int_equal(m->accesses, 10);
	assert_int_equal(m->loads, 7);
	assert_int_equal(m->stores, 4);
	assert_int_equal(m->level[AUXCAP_REPORT_MEM_L1], 4);
	assert_int_equal(m->level[AUXCAP_REPORT_MEM_MID], 2);
	assert_int_equal(m->level[AUXCAP_REPORT_MEM_LLC], 1);
	assert_int_equal(m->level[AUXCAP_REPORT_MEM_DRAM], 2);
	assert_int_equal(m->level[AUXCAP_REPORT_MEM_NA], 1);
	assert_int_equal(m->level_lat[AUXCAP_REPORT_MEM_L1], 4 + 4 + 6 + 4);
	assert_int_equal(m->level_lat_max[AUXCAP_REPORT_MEM_L1], 6);
	assert_int_equal(m->level_lat[AUXCAP_REPORT_MEM_DRAM], 500);
	assert_int_equal(m->level_lat_max[AUXCAP_REPORT_MEM_DRAM], 300);
	assert_int_equal(m->remote, 1);
	assert_int_equal(m->tlb_walks, 1);
	assert_int_equal(m->lat, 4 + 4 + 6 + 200 + 4 + 40 + 12 + 300 + 1 + 12);
	assert_int_equal(m->lat_max, 300);

	/* By function: latency, most first (WORK 313, RUN 256, MAIN 14); LEAF made none. */
	assert_int_equal(auxcap_report_nr_mem_funcs(r), 3);
	assert_int_equal(auxcap_report_get_mem_func(r, 0)->func->addr, WORK);
	assert_int_equal(auxcap_report_get_mem_func(r, 1)->func->addr, RUN);
	assert_int_equal(auxcap_report_get_mem_func(r, 2)->func->addr, MAIN);
	assert_null(auxcap_report_get_mem_func(r, 3));
	assert_int_equal(mem_func(r, WORK)->m.lat, 313);
	assert_int_equal(mem_func(r, WORK)->m.level[AUXCAP_REPORT_MEM_MID], 1);
	assert_int_equal(mem_func(r, RUN)->m.loads, 2);
	assert_int_equal(mem_func(r, RUN)->m.stores, 3);
	assert_int_equal(mem_func(r, RUN)->m.tlb_walks, 1);
	assert_int_equal(mem_func(r, MAIN)->m.level[AUXCAP_REPORT_MEM_L1], 3);

	/* By line: 0x10000 (MAIN's three loads, WORK's store: one L1 miss), 0x20040 (RUN's
	 * four, of two threads: three misses), 0x30000 (one miss), 0x30100 (none): misses, most
	 * first. */
	assert_int_equal(auxcap_report_nr_mem_lines(r), 4);
	l = auxcap_report_get_mem_line(r, 0);
	assert_int_equal(l->addr, 0x20040);
	assert_int_equal(l->m.accesses, 4);
	assert_int_equal(l->nr_funcs, 1);
	assert_int_equal(l->funcs[0].func->addr, RUN);
	assert_int_equal(l->funcs[0].accesses, 4);
	assert_int_equal(l->threads, 2);
	assert_int_equal(l->store_threads, 2);
	assert_false(l->threads_more);
	/* two lines of one miss: the one of more latency first */
	l = auxcap_report_get_mem_line(r, 1);
	assert_int_equal(l->addr, 0x30000);
	assert_int_equal(l->m.lat, 300);
	assert_int_equal(l->store_threads, 0);
	l = auxcap_report_get_mem_line(r, 2);
	assert_int_equal(l->addr, 0x10000);
	assert_int_equal(l->m.accesses, 4);
	assert_int_equal(l->m.level[AUXCAP_REPORT_MEM_MID], 1);
	assert_int_equal(l->nr_funcs, 2);
	assert_int_equal(l->funcs[0].func->addr, MAIN);
	assert_int_equal(l->funcs[0].accesses, 3);
	assert_int_equal(l->funcs[1].func->addr, WORK);
	assert_int_equal(l->funcs[1].accesses, 1);
	assert_int_equal(l->other_funcs, 0);
	assert_int_equal(l->pid, 9);
	l = auxcap_report_get_mem_line(r, 3);
	assert_int_equal(l->addr, 0x30100);
	assert_null(auxcap_report_get_mem_line(r, 4));
	assert_int_equal(auxcap_report_mem_lines_untracked(r), 0);
	auxcap_report_free(r);
	auxcap_decode_close(d);
}

/* What a line tells apart is bounded: 8 threads (more is said), 16384 lines (the accesses
 * to others are counted). */
/* @addr of @pid at @t is in the mapping @name (NULL: none), at @off (-1: not checked). */
static void want_map(struct auxcap_decode *d, int32_t pid, uint64_t addr, uint64_t t,
		     const char *name, int64_t off)
{
	const char *got = NULL;
	uint64_t o = 0;

	assert_int_equal(auxcap_decode_data_map_at(d, pid, addr, t, &got, &o), name ? 1 : 0);
	if (name)
		assert_string_equal(got, name);
	if (off >= 0)
		assert_int_equal(o, (uint64_t)off);
}

/*
 * Data addresses no variable holds are named by their mapping (MMAP2 records of data, as a
 * capture with attr.mmap_data has them): the newest made by then, not one replaced by an exec
 * since, and only the process's own.
 */
static void test_data_maps(void **state)
{
	const uint32_t RW = PROT_READ | PROT_WRITE, L = AUXCAP_TRACE_MEM_LOAD,
		       L1 = AUXCAP_TRACE_MEM_L1_ACCESS,
		       MEM = L1 | AUXCAP_TRACE_MEM_L1_MISS | AUXCAP_TRACE_MEM_LLC_ACCESS |
			     AUXCAP_TRACE_MEM_LLC_MISS;
	/* the report's data objects: data.bin (file), //anon at 0x7f0000000000, [stack], none */
	struct toy_rec t[] = {
		access_rec(1000, MAIN, 0x7f0000000040, L | L1, 4),
		access_rec(1010, RUN, 0x7f0000009000, L | MEM, 200),
		access_rec(1020, RUN, 0x7f0000009040, L | MEM, 200),
		access_rec(1030, WORK, 0x7f000000a000, L | L1, 4),
		access_rec(1040, WORK, 0x7ff000000010, L | L1, 4),
		access_rec(1050, MAIN, 0x7ff000000020, L | L1, 4),
		access_rec(1060, WORK, 0x7ff000000030, L | L1, 4),
		access_rec(1070, MAIN, 0x100, L | L1, 4),
	};
	struct auxcap_report_opts ro = { .sz = sizeof(ro), .mem = true };
	const struct auxcap_report_mem_object *o;
	struct auxcap_report *r = NULL;
	struct auxcap_decode *d;
	char path[300], buf[64];
	struct cb *b = start("data-maps.data", path, sizeof(path));

	(void)state;
	cb_comm(b, 9, 9, "prog", true, 100, 0);
	cb_mmap2(b, 9, 9, 0x7ff000000000, 0x21000, 0x7ffffffde000, RW, "[stack]", 500, 0);
	cb_mmap2(b, 9, 9, 0x7f0000000000, 0x10000, 0x7f0000000000, RW, "//anon", 700, 0);
	/* written later, made earlier (rings drained out of order): the one of 700 wins */
	cb_mmap2(b, 9, 9, 0x7f0000000000, 0x1000, 0, RW, "/tmp/older.bin", 650, 0);
	/* the same range mapped again from a file */
	cb_mmap2(b, 9, 9, 0x7f0000000000, 0x8000, 0x3000, PROT_READ, "/tmp/data.bin", 900, 0);
	cb_mmap2(b, 11, 11, 0x600000000000, 0x1000, 0, RW, "//anon", 500, 0);
	/* a large mapping with smaller ones made inside it later, and one made before it */
	cb_mmap2(b, 9, 9, 0x500000000000, 0x100000, 0x500000000000, RW, "//anon", 800, 0);
	cb_mmap2(b, 9, 9, 0x500000002000, 0x1000, 0, PROT_READ, "/tmp/small.bin", 810, 0);
	cb_mmap2(b, 9, 9, 0x500000004000, 0x1000, 0x500000004000, RW, "[heap]", 820, 0);
	cb_mmap2(b, 9, 9, 0x500000008000, 0x1000, 0, PROT_READ, "/tmp/under.bin", 790, 0);
	/* two at the same time: the one written later */
	cb_mmap2(b, 9, 9, 0x300000000000, 0x1000, 0, PROT_READ, "/tmp/tie-a.bin", 700, 0);
	cb_mmap2(b, 9, 9, 0x300000000000, 0x1000, 0, PROT_READ, "/tmp/tie-b.bin", 700, 0);
	/* pid 9 runs another image from 1500: the stack of before is gone, a new one made */
	cb_comm(b, 9, 9, "prog2", true, 1500, 0);
	cb_mmap2(b, 9, 9, 0x7ff000010000, 0x21000, 0x7ffffffde000, RW, "[stack]", 1510, 0);
	cb_itrace_start(b, 9, 9, 600, 0);
	cb_auxtrace(b, t, sizeof(t), 0, 0, 9, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, NULL, NULL);
	/* none made by then: the first made after it (a record stamped a little late) */
	want_map(d, 9, 0x7ff000000010, 400, "[stack]", 0x10);
	want_map(d, 9, 0x7ff000000010, 600, "[stack]", 0x10);
	want_map(d, 9, 0x7f0000000040, 660, "/tmp/older.bin", -1);
	want_map(d, 9, 0x7f0000000040, 800, "//anon", 0x40);
	/* a file: its offset */
	want_map(d, 9, 0x7f0000000040, 1000, "/tmp/data.bin", 0x3040);
	/* past the file's 0x8000 bytes: still the //anon of 700 */
	want_map(d, 9, 0x7f0000009000, 1000, "//anon", 0x9000);
	/* above the small ones, in the large one; in a small one; under it, the large one */
	want_map(d, 9, 0x500000005000, 1000, "//anon", 0x5000);
	want_map(d, 9, 0x500000004010, 1000, "[heap]", 0x10);
	want_map(d, 9, 0x500000008010, 1000, "//anon", -1);
	want_map(d, 9, 0x500000008010, 795, "/tmp/under.bin", -1);
	want_map(d, 9, 0x500000100000, 1000, NULL, -1);
	want_map(d, 9, 0x300000000010, 800, "/tmp/tie-b.bin", -1);
	/* another process's */
	want_map(d, 9, 0x600000000010, 1000, NULL, -1);
	want_map(d, 11, 0x600000000010, 1000, "//anon", 0x10);
	want_map(d, 11, 0x7ff000000010, 1000, NULL, -1);
	/* after the exec: the old image's mappings are gone, the new stack is there */
	want_map(d, 9, 0x7ff000000010, 1505, NULL, -1);
	want_map(d, 9, 0x7f0000000040, 1600, NULL, -1);
	want_map(d, 9, 0x7ff000010020, 1600, "[stack]", 0x20);
	/* ... but never across an exec */
	want_map(d, 9, 0x7ff000025000, 1505, "[stack]", 0x15000);
	want_map(d, 9, 0x7ff000025000, 1400, NULL, -1);
	/* as the outputs print them: a file by its base name */
	assert_int_equal(auxcap_decode_data_name_at(d, 9, 0x7f0000000040, 1000, buf, sizeof(buf)),
			 2);
	assert_string_equal(buf, "data.bin+0x3040");
	assert_int_equal(auxcap_decode_data_name_at(d, 9, 0x7f0000009000, 1000, buf, sizeof(buf)),
			 2);
	assert_string_equal(buf, "//anon+0x9000");
	assert_int_equal(auxcap_decode_data_name_at(d, 9, 0x400000000000, 1000, buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "");
	auxcap_decode_close(d);

	/* The report's data objects: by latency, then accesses, then kind (mapping first) */
	d = open_capture(path, NULL, NULL);
	assert_int_equal(auxcap_report_run(d, &ro, &r), 0);
	assert_int_equal(auxcap_report_nr_mem_objects(r), 4);
	assert_int_equal(auxcap_report_mem_objects_untracked(r), 0);
	o = auxcap_report_get_mem_object(r, 0); /* an anonymous mapping: by its start */
	assert_int_equal(o->kind, AUXCAP_REPORT_MEM_OBJ_MAPPING);
	assert_string_equal(o->name, "//anon");
	assert_null(o->dso);
	assert_int_equal(o->use.addr, 0x7f0000000000);
	assert_int_equal(o->use.pid, 9);
	assert_int_equal(o->use.m.accesses, 3);
	assert_int_equal(o->use.m.lat, 404);
	assert_int_equal(o->use.m.level[AUXCAP_REPORT_MEM_DRAM], 2);
	assert_int_equal(o->use.nr_funcs, 2);
	assert_int_equal(o->use.funcs[0].func->addr, RUN);
	assert_int_equal(o->use.funcs[0].accesses, 2);
	assert_int_equal(o->use.funcs[1].func->addr, WORK);
	o = auxcap_report_get_mem_object(r, 1); /* a named region: one object, no address */
	assert_string_equal(o->name, "[stack]");
	assert_int_equal(o->use.addr, 0);
	assert_int_equal(o->use.m.accesses, 3);
	assert_int_equal(o->use.funcs[0].func->addr, WORK); /* 2, then MAIN's 1 */
	assert_int_equal(o->use.funcs[0].accesses, 2);
	assert_int_equal(o->use.funcs[1].func->addr, MAIN);
	o = auxcap_report_get_mem_object(r, 2); /* a file's mapping */
	assert_int_equal(o->kind, AUXCAP_REPORT_MEM_OBJ_MAPPING);
	assert_string_equal(o->name, "/tmp/data.bin");
	assert_int_equal(o->use.m.accesses, 1);
	o = auxcap_report_get_mem_object(r, 3);
	assert_int_equal(o->kind, AUXCAP_REPORT_MEM_OBJ_UNKNOWN);
	assert_null(o->name);
	assert_int_equal(o->use.funcs[0].func->addr, MAIN);
	assert_null(auxcap_report_get_mem_object(r, 4));
	auxcap_report_free(r);
	auxcap_decode_close(d);
}

/*
 * Data sources (Arm SPE's, read by the backend): thread 9's loads and a store, with or without
 * one; a load a peer core's cache served counts at the L2 though its events say an L1 hit.
 *   MAIN  L 0x10000 no source 4; S 0x10008 (stores carry none) 4
 *   RUN   L 0x20040 peer core 60; L 0x20048 L1 4
 *   WORK  L 0x30000 DRAM 200; L 0x30040 another socket 300
 */
static void test_mem_sources(void **state)
{
	const uint32_t L = AUXCAP_TRACE_MEM_LOAD, S = AUXCAP_TRACE_MEM_STORE,
		       L1 = AUXCAP_TRACE_MEM_L1_ACCESS;
#define SRC(x) ((uint32_t)AUXCAP_TRACE_SRC_##x << 12)
	struct toy_rec t[] = {
		access_rec(1000, MAIN, 0x10000, L | L1, 4),
		access_rec(1100, MAIN, 0x10008, S | L1, 4),
		access_rec(2000, RUN, 0x20040, L | L1 | SRC(PEER_CORE), 60),
		access_rec(2100, RUN, 0x20048, L | L1 | SRC(L1), 4),
		access_rec(3000, WORK, 0x30000, L | L1 | SRC(DRAM), 200),
		access_rec(3100, WORK, 0x30040, L | L1 | SRC(REMOTE), 300),
	};
#undef SRC
	struct auxcap_report_opts o = { .sz = sizeof(o), .mem = true };
	const struct auxcap_report_mem_sources *src;
	const struct auxcap_report_mem *m;
	const struct auxcap_report_mem_line *l = NULL;
	struct auxcap_report *r = NULL;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("mem_src.data", path, sizeof(path));

	(void)state;
	cb_itrace_start(b, 9, 9, 600, 0);
	cb_auxtrace(b, t, sizeof(t), 0, 0, 9, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);
	d = open_capture(path, NULL, NULL);
	assert_int_equal(auxcap_report_run(d, &o, &r), 0);
	m = auxcap_report_get_mem(r);
	src = auxcap_report_get_mem_sources(r);
	assert_int_equal(m->accesses, 6);
	assert_int_equal(src->accesses[AUXCAP_TRACE_SRC_NONE], 1); /* the load; not the store */
	assert_int_equal(src->accesses[AUXCAP_TRACE_SRC_L1], 1);
	assert_int_equal(src->accesses[AUXCAP_TRACE_SRC_PEER_CORE], 1);
	assert_int_equal(src->accesses[AUXCAP_TRACE_SRC_DRAM], 1);
	assert_int_equal(src->accesses[AUXCAP_TRACE_SRC_REMOTE], 1);
	assert_int_equal(src->accesses[AUXCAP_TRACE_SRC_L2], 0);
	assert_int_equal(src->lat[AUXCAP_TRACE_SRC_PEER_CORE], 60);
	assert_int_equal(src->lat_max[AUXCAP_TRACE_SRC_REMOTE], 300);
	/* the levels go by the sources: L1 for the three without one or from the L1 */
	assert_int_equal(m->level[AUXCAP_REPORT_MEM_L1], 3);
	assert_int_equal(m->level[AUXCAP_REPORT_MEM_MID], 1);
	assert_int_equal(m->level[AUXCAP_REPORT_MEM_DRAM], 2);
	assert_int_equal(m->remote, 1);
	assert_int_equal(m->peer, 2); /* the peer core's and the other socket's */
	assert_int_equal(mem_func(r, RUN)->m.peer, 1);
	assert_int_equal(mem_func(r, WORK)->m.peer, 1);
	assert_int_equal(mem_func(r, MAIN)->m.peer, 0);
	for (size_t i = 0; i < auxcap_report_nr_mem_lines(r); i++)
		if (auxcap_report_get_mem_line(r, i)->addr == 0x20040)
			l = auxcap_report_get_mem_line(r, i);
	assert_non_null(l);
	assert_int_equal(l->m.accesses, 2);
	assert_int_equal(l->m.peer, 1);
	auxcap_report_free(r);
	auxcap_decode_close(d);
}

/*
 * A task runs its parent's command until it execs, even when its FORK comes before the
 * parent's COMM in the file, a round earlier (a pass over the rings copied CPU 1's before
 * the exec and CPU 0's after the fork; seen in CI under ASan): perf names it so.
 * Task 12 of 9 forked at 700 on CPU 0, 9's exec at 500 on CPU 1 written after it; 13 forked
 * by 12, written after 12's fork; 14 forked by 9 after the COMM, the common case.
 */
static void test_fork_before_comm(void **state)
{
	struct toy_rec t[] = { rec(1000, AUXCAP_TRACE_SAMPLE, 0, MAIN, 0, 0) };
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("fork_comm.data", path, sizeof(path));

	(void)state;
	cb_itrace_start(b, 9, 9, 400, 1);
	cb_fork(b, 12, 9, 12, 9, 700, 0);
	cb_fork(b, 13, 12, 13, 12, 800, 0);
	cb_round(b); /* CPU 1's ring was copied out before the exec, CPU 0's after the forks */
	cb_comm(b, 9, 9, "parent", true, 500, 1);
	cb_fork(b, 14, 9, 14, 9, 900, 1);
	cb_auxtrace(b, t, sizeof(t), 0, 0, 9, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);
	d = open_capture(path, NULL, NULL);
	assert_string_equal(auxcap_decode_comm(d, 9), "parent");
	assert_non_null(auxcap_decode_comm(d, 12));
	assert_string_equal(auxcap_decode_comm(d, 12), "parent");
	assert_non_null(auxcap_decode_comm(d, 13));
	assert_string_equal(auxcap_decode_comm(d, 13), "parent");
	assert_string_equal(auxcap_decode_comm(d, 14), "parent");
	auxcap_decode_close(d);
}

/* A data source names the level an access counts in; without one, the cache bits do. */
static void test_mem_level_from(void **state)
{
	static const struct {
		uint32_t source;
		enum auxcap_report_mem_level level;
		const char *key;
	} want[] = {
		{ AUXCAP_TRACE_SRC_L1, AUXCAP_REPORT_MEM_L1, "l1" },
		{ AUXCAP_TRACE_SRC_L2, AUXCAP_REPORT_MEM_MID, "l2" },
		{ AUXCAP_TRACE_SRC_PEER_CORE, AUXCAP_REPORT_MEM_MID, "peer_core" },
		{ AUXCAP_TRACE_SRC_LOCAL_CLUSTER, AUXCAP_REPORT_MEM_LLC, "local_cluster" },
		{ AUXCAP_TRACE_SRC_SYS_CACHE, AUXCAP_REPORT_MEM_LLC, "sys_cache" },
		{ AUXCAP_TRACE_SRC_PEER_CLUSTER, AUXCAP_REPORT_MEM_LLC, "peer_cluster" },
		{ AUXCAP_TRACE_SRC_REMOTE, AUXCAP_REPORT_MEM_DRAM, "remote" },
		{ AUXCAP_TRACE_SRC_DRAM, AUXCAP_REPORT_MEM_DRAM, "dram" },
	};
	/* the events packet says an LLC miss: the source, where there is one, wins */
	const uint32_t miss = AUXCAP_TRACE_MEM_LOAD | AUXCAP_TRACE_MEM_L1_ACCESS |
			      AUXCAP_TRACE_MEM_L1_MISS | AUXCAP_TRACE_MEM_LLC_ACCESS |
			      AUXCAP_TRACE_MEM_LLC_MISS;

	(void)state;
	assert_int_equal(sizeof(want) / sizeof(want[0]), AUXCAP_TRACE_SRC_COUNT - 1);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(auxcap_report_mem_level_from(miss, want[i].source), want[i].level);
		assert_string_equal(auxcap_report_mem_source_key(want[i].source), want[i].key);
	}
	assert_int_equal(auxcap_report_mem_level_from(miss, AUXCAP_TRACE_SRC_NONE),
			 AUXCAP_REPORT_MEM_DRAM);
	assert_int_equal(auxcap_report_mem_level_from(AUXCAP_TRACE_MEM_L1_ACCESS,
						      AUXCAP_TRACE_SRC_NONE),
			 AUXCAP_REPORT_MEM_L1);
	assert_int_equal(auxcap_report_mem_level_from(AUXCAP_TRACE_MEM_LOAD, AUXCAP_TRACE_SRC_COUNT),
			 AUXCAP_REPORT_MEM_NA);
	assert_string_equal(auxcap_report_mem_source_key(AUXCAP_TRACE_SRC_NONE), "none");
	assert_null(auxcap_report_mem_source_key(AUXCAP_TRACE_SRC_COUNT));
}

/*
 * Data objects past AUXCAP_REPORT_MEM_OBJECTS_MAX (each anonymous mapping is one) are counted
 * untracked; an object's functions are its most accessing ones, exactly, whatever the order
 * they came in, the rest summed.
 */
static void test_mem_objects_limits(void **state)
{
	const uint32_t L1 = AUXCAP_TRACE_MEM_LOAD | AUXCAP_TRACE_MEM_L1_ACCESS;
	const size_t no = AUXCAP_REPORT_MEM_OBJECTS_MAX + 3;
	/* in the first mapping: six functions, the one at 0x5000 + 0x100 k with k + 1 accesses,
	 * the least first */
	const size_t nf = 1 + 2 + 3 + 4 + 5 + 6;
	struct toy_rec *t = calloc(no + nf, sizeof(*t));
	struct auxcap_report_opts o = { .sz = sizeof(o), .mem = true };
	const struct auxcap_report_mem_object *ob = NULL;
	struct auxcap_report *r = NULL;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("mem_objects.data", path, sizeof(path));
	size_t n = 0;

	(void)state;
	assert_non_null(t);
	for (size_t i = 0; i < no; i++) {
		cb_mmap2(b, 9, 9, 0x600000000000 + 0x10000 * i, 0x1000, 0, PROT_READ | PROT_WRITE,
			 "//anon", 500, 0);
		t[n++] = access_rec(1000 + i, MAIN, 0x600000000000 + 0x10000 * i + 8, L1, 4);
	}
	for (uint64_t k = 0; k < 6; k++) {
		for (uint64_t j = 0; j <= k; j++) {
			t[n] = access_rec(100000 + n, 0x5000 + 0x100 * k, 0x600000000010, L1, 4);
			n++;
		}
	}
	cb_itrace_start(b, 9, 9, 600, 0);
	cb_auxtrace(b, t, n * sizeof(*t), 0, 0, 9, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);
	d = open_capture(path, NULL, NULL);
	assert_int_equal(auxcap_report_run(d, &o, &r), 0);
	assert_int_equal(auxcap_report_nr_mem_objects(r), AUXCAP_REPORT_MEM_OBJECTS_MAX);
	assert_int_equal(auxcap_report_mem_objects_untracked(r), 3);
	ob = auxcap_report_get_mem_object(r, 0); /* the most accesses (all take 4 cycles) */
	assert_int_equal(ob->use.addr, 0x600000000000);
	assert_int_equal(ob->use.m.accesses, 1 + nf);
	assert_int_equal(ob->use.nr_funcs, AUXCAP_REPORT_LINE_FUNCS);
	for (size_t k = 0; k < AUXCAP_REPORT_LINE_FUNCS; k++) {
		assert_int_equal(ob->use.funcs[k].func->addr, 0x5000 + 0x100 * (5 - k));
		assert_int_equal(ob->use.funcs[k].accesses, 6 - k);
	}
	assert_int_equal(ob->use.other_funcs, 2 + 1 + 1); /* 0x5100's, 0x5000's, MAIN's */
	auxcap_report_free(r);
	auxcap_decode_close(d);
	free(t);
}

static void test_mem_limits(void **state)
{
	const uint32_t L1 = AUXCAP_TRACE_MEM_LOAD | AUXCAP_TRACE_MEM_L1_ACCESS;
	const size_t nl = AUXCAP_REPORT_MEM_LINES_MAX + 5;
	struct toy_rec *t = calloc(nl, sizeof(*t)), one;
	struct auxcap_report_opts o = { .sz = sizeof(o), .mem = true };
	const struct auxcap_report_mem_line *l = NULL;
	struct auxcap_report *r = NULL;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("mem_limits.data", path, sizeof(path));

	(void)state;
	assert_non_null(t);
	for (size_t i = 0; i < nl; i++)
		t[i] = access_rec(1000 + i, MAIN, 0x100000 + 64 * i, L1, 4);
	cb_itrace_start(b, 9, 9, 600, 0);
	cb_auxtrace(b, t, nl * sizeof(*t), 0, 0, 9, (uint32_t)-1);
	/* nine more threads read the first line */
	for (uint32_t k = 0; k < 9; k++) {
		one = access_rec(100000 + k, RUN, 0x100008, L1, 4);
		cb_itrace_start(b, 9, 20 + k, 610, 0);
		cb_auxtrace(b, &one, sizeof(one), 0, 1 + k, 20 + k, (uint32_t)-1);
	}
	assert_int_equal(cb_close(b), 0);
	d = open_capture(path, NULL, NULL);
	assert_int_equal(auxcap_report_run(d, &o, &r), 0);
	assert_int_equal(auxcap_report_get_mem(r)->accesses, nl + 9);
	assert_int_equal(auxcap_report_nr_mem_lines(r), AUXCAP_REPORT_MEM_LINES_MAX);
	assert_int_equal(auxcap_report_mem_lines_untracked(r), 5);
	for (size_t i = 0; i < auxcap_report_nr_mem_lines(r); i++)
		if (auxcap_report_get_mem_line(r, i)->addr == 0x100000)
			l = auxcap_report_get_mem_line(r, i);
	assert_non_null(l);
	assert_int_equal(l->m.accesses, 10);
	assert_int_equal(l->threads, AUXCAP_REPORT_LINE_THREADS);
	assert_true(l->threads_more);
	assert_int_equal(l->store_threads, 0);
	assert_int_equal(l->nr_funcs, 2);
	assert_int_equal(l->funcs[0].func->addr, RUN); /* 9 accesses before MAIN's one */
	assert_int_equal(l->funcs[0].accesses, 9);
	auxcap_report_free(r);
	auxcap_decode_close(d);
	free(t);
}

static void test_bad_arguments(void **state)
{
	struct auxcap_report_opts o = { .sz = sizeof(o) - 1 };
	struct auxcap_report *r = NULL;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("args.data", path, sizeof(path));
	struct toy_rec t[] = { rec(1000, AUXCAP_TRACE_ENABLE, 0, MAIN, 0, 0) };

	(void)state;
	cb_auxtrace(b, t, sizeof(t), 0, 0, 5, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);
	d = open_capture(path, NULL, NULL);
	assert_int_equal(auxcap_report_new(NULL, NULL, &r), -EINVAL);
	assert_int_equal(auxcap_report_new(d, &o, &r), -EINVAL);
	assert_null(r);
	assert_int_equal(auxcap_report_new(d, NULL, &r), 0);
	/* Not finished yet: nothing to read, nothing to sort. */
	assert_int_equal(auxcap_report_nr_funcs(r), 0);
	assert_int_equal(auxcap_report_nr_dsos(r), 0);
	assert_null(auxcap_report_get_dso(r, 0));
	assert_int_equal(auxcap_report_nr_dsos(NULL), 0);
	assert_int_equal(auxcap_report_nr_calls(r), 0);
	assert_null(auxcap_report_get_calls(r, 0));
	assert_int_equal(auxcap_report_nr_calls(NULL), 0);
	assert_int_equal(auxcap_report_sort(r, AUXCAP_REPORT_SORT_SELF, 0), -EINVAL);
	assert_int_equal(auxcap_report_finish(r), 0);
	assert_int_equal(auxcap_report_sort(r, (enum auxcap_report_sort_key)99, 0), -EINVAL);
	auxcap_report_free(r);
	auxcap_report_free(NULL);
	auxcap_decode_close(d);
}

static int setup(void **state)
{
	(void)state;
	if (test_tmpdir(g_dir, sizeof(g_dir), "report") < 0)
		return -1;
	return auxcap_backend_register(&toy_backend_ops);
}

static int teardown(void **state)
{
	(void)state;
	return test_rmtree(g_dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_time),  cmocka_unit_test(test_trace_insns),
		cmocka_unit_test(test_samples),	    cmocka_unit_test(test_losses),
		cmocka_unit_test(test_per_thread),  cmocka_unit_test(test_progress),
		cmocka_unit_test(test_calls),	    cmocka_unit_test(test_call_graph),
		cmocka_unit_test(test_mem),	    cmocka_unit_test(test_mem_limits),
		cmocka_unit_test(test_data_maps),
		cmocka_unit_test(test_mem_objects_limits),
		cmocka_unit_test(test_mem_level_from),
		cmocka_unit_test(test_mem_sources),
		cmocka_unit_test(test_fork_before_comm),
		cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests_name("decode/report", tests, setup, teardown);
}
