/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The decode stage (decode/: session, queues, merge, context, writers) on synthesized
 * captures, with a toy backend registered for the test: its trace is an array of 32-byte
 * records that say which trace event to produce, so every input is known exactly and the
 * expected results follow from the timeline each test builds (and the rules of
 * auxcap/decode.h).
 *
 *   time conversion      core's (perf's) formula against 128-bit arithmetic, the
 *                        cap_user_time_short variant, the inverse's round trip
 *   interpolation        times spread by instruction count between two timestamps, also on
 *                        random runs against the rule computed in 128 bits
 *   merge                two per-CPU queues, samples, switches written out of order across
 *                        CPUs in rounds: one stream in time order, threads from switches
 *   sample context       call stack, last branches, per-function time, the IP looked up
 *                        forwards and backwards, not found outside the window; a sample
 *                        taken in a system call, at the IP where tracing restarts; one
 *                        whose IP's run ends in a timestamp run not closed yet
 *   bad timestamps       one that converts before the clock's zero is not a time; an Arm
 *                        SPE record cut where a TRUNCATED AUX record says data was lost is
 *                        a gap, not a sample completed by the padding after it
 *   gaps and losses      in every writer's output
 *   timeless             without TIME_CONV, trace is placed over the stretch its buffer was
 *                        written in (the copy before it, or the start, to its own copy)
 *   execs                an exec drops the mappings made before it, by time, whatever the
 *                        order the rings put them in the file
 *
 * With --batch the toy backend also gives decoder_next_batch() (in short batches), which the
 * stage then uses instead of decoder_next(): every test holds either way.
 */
#include <dlfcn.h> /* dladdr(): _GNU_SOURCE comes from the build */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "auxcap/backend.h"
#include "auxcap/decode.h"
#include "auxcap/decode_out.h"
#include "auxcap/timeconv.h"
#include "capture_builder.h"
#include "toy_backend.h"

/* ---- helpers --------------------------------------------------------------------------- */

static char g_dir[256];

static void path_of(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", g_dir, name);
}

/* TIME_CONV with perf time = tsc (shift 0, mult 1). */
static void identity_tc(struct cb *b)
{
	struct auxcap_perf_time_conv tc = { 0 };

	tc.time_shift = 0;
	tc.time_mult = 1;
	tc.time_zero = 0;
	tc.cap_user_time_zero = true;
	cb_time_conv(b, &tc);
}

static struct cb *start(const char *name, char *path, size_t n, bool with_tc)
{
	struct cb *b;

	path_of(path, n, name);
	b = cb_open(path, "toy_trace//", TOY_ATTR_TYPE);
	assert_non_null(b);
	if (with_tc)
		identity_tc(b);
	cb_auxtrace_info(b, TOY_TYPE, NULL, 0);
	return b;
}

static struct auxcap_decode *open_capture(const char *path, unsigned int last_branches)
{
	struct auxcap_decode_opts o = { .sz = sizeof(o) };
	struct auxcap_decode *d = NULL;
	char err[256] = "";

	o.last_branches = last_branches;
	o.errbuf = err;
	o.errlen = sizeof(err);
	if (auxcap_decode_open(path, &o, &d) < 0)
		fail_msg("auxcap_decode_open(%s): %s", path, err);
	return d;
}

/* A sample of a toy capture: its IP and time. */
struct toy_sample {
	uint64_t ip, time;
};

/*
 * A toy capture of one thread @tid (ITRACE_START at 50 us, then @ns samples, then the trace
 * @t of @size bytes), written as @name and opened.
 */
static struct auxcap_decode *toy_capture(const char *name, uint32_t tid,
					 const struct toy_sample *s, size_t ns,
					 const struct toy_rec *t, size_t size)
{
	char path[300];
	struct cb *b = start(name, path, sizeof(path), true);

	cb_itrace_start(b, tid, tid, 50000, 0);
	for (size_t i = 0; i < ns; i++)
		cb_sample(b, 1, s[i].ip, tid, tid, s[i].time, 0, 1);
	cb_auxtrace(b, t, size, 0, 0, tid, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);
	return open_capture(path, 0);
}

/* ---- time conversion ------------------------------------------------------------------- */

static void test_time_conv(void **state)
{
	struct auxcap_perf_time_conv tc = { 0 };
	uint64_t seed = 88172645463325252ull;

	(void)state;
	for (int i = 0; i < 100000; i++) {
		uint64_t cyc, t;
		unsigned __int128 exact;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		tc.time_shift = seed % 32;
		tc.time_mult = (seed >> 8) & 0xffffffff;
		tc.time_zero = seed >> 20;
		cyc = seed * 2654435761u >> (seed % 8);
		exact = (unsigned __int128)cyc * tc.time_mult >> tc.time_shift;
		if (exact + tc.time_zero > UINT64_MAX)
			continue;
		t = auxcap_time_conv_to_ns(&tc, cyc);
		assert_true(t == (uint64_t)exact + tc.time_zero);
		/* The inverse, as perf checks it: back to within one tick when a tick is at
		 * least a nanosecond. */
		if (tc.time_mult && tc.time_mult >= (UINT64_C(1) << tc.time_shift) &&
		    cyc < (UINT64_C(1) << 40)) {
			uint64_t back = auxcap_time_conv_from_ns(&tc, t);

			assert_true(back == cyc || back + 1 == cyc || back == cyc + 1);
		}
	}

	/* cap_user_time_short: a 32-bit counter widened with time_cycles/time_mask. */
	memset(&tc, 0, sizeof(tc));
	tc.time_shift = 10;
	tc.time_mult = 1000;
	tc.time_zero = 5;
	tc.time_cycles = 0x1234567800000000ull;
	tc.time_mask = 0xffffffffull;
	tc.cap_user_time_short = true;
	for (uint64_t v = tc.time_cycles; v < tc.time_cycles + (1ull << 32); v += 0x01234567) {
		struct auxcap_perf_time_conv full = tc;

		full.cap_user_time_short = false;
		assert_true(auxcap_time_conv_to_ns(&tc, v & 0xffffffff) ==
			    auxcap_time_conv_to_ns(&full, v));
	}
}

/* ---- interpolation --------------------------------------------------------------------- */

static void test_interpolation(void **state)
{
	struct toy_rec t[] = {
		rec(1000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x10, 0x20, 10),
		rec(1000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x24, 0x30, 10),
		rec(1000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x38, 0x40, 20),
		rec(2000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x48, 0x10, 5),
	};
	/* The rule: t0 + (t1 - t0) * cumulative / (total + 1), the last run at its t0. */
	const uint64_t want[] = { 1000 + 1000 * 10 / 41, 1000 + 1000 * 20 / 41,
				  1000 + 1000 * 40 / 41, 2000 };
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("interp.data", path, sizeof(path), true);
	size_t n = 0;

	(void)state;
	cb_itrace_start(b, 7, 7, 500, 0);
	cb_auxtrace(b, t, sizeof(t), 0, 0, 7, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, 0);
	while (auxcap_decode_next(d, &ev) == 1) {
		if (ev->kind != AUXCAP_DECODE_TRACE)
			continue;
		assert_true(n < 4);
		assert_true(ev->has_time);
		assert_int_equal(ev->time, want[n]);
		assert_int_equal(ev->tid, 7);
		n++;
	}
	assert_int_equal(n, 4);
	assert_false(auxcap_decode_get_info(d)->timeless);
	auxcap_decode_close(d);
}

/* A toy event with flags @x (TOY_JUNK, TOY_TID) besides its timestamp. */
static struct toy_rec rec_x(uint64_t tsc, enum auxcap_trace_kind kind,
			    enum auxcap_branch_type branch, uint64_t ip, uint64_t to, unsigned int x)
{
	struct toy_rec r = rec(tsc, kind, branch, ip, to, 2);

	r.flags |= (uint16_t)x;
	return r;
}

/*
 * Fields an event's kind does not use are zero (backend.h), and the stage hands them out so
 * even from a backend that leaves junk there: a BRANCH without a tid of its own has no field
 * past @branch in use.  A BRANCH with F_HAS_TID keeps its tid, an INSN its bytes, a GAP its
 * reason, whichever way the stage takes (the quick one for branches of a timed run).
 */
static void test_unused_fields(void **state)
{
	struct toy_rec t[] = {
		rec_x(1000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, 0x10, 0x100, TOY_JUNK),
		rec_x(1000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x104, 0x108, TOY_JUNK),
		rec_x(1000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, 0x10c, 0x200, TOY_JUNK),
		rec_x(1000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, 0x204, 0x111, TOY_JUNK),
		rec_x(1000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_COND, 0x118, 0x130, TOY_JUNK),
		rec_x(1000, AUXCAP_TRACE_INSN, AUXCAP_BR_NONE, 0x130, 0, TOY_JUNK),
		rec_x(1000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x134, 0x140, TOY_JUNK),
		rec_x(2000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x144, 0x150, TOY_JUNK),
		rec_x(2000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x154, 0x1042, TOY_JUNK | TOY_TID),
		rec_x(2000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x1044, 0x1050, TOY_JUNK),
		rec_x(2000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, 0x1054, 0x15, TOY_JUNK),
		rec_x(2000, AUXCAP_TRACE_GAP, AUXCAP_BR_NONE, 0, 0, 0),
		rec_x(3000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x20, 0x30, 0),
	};
	static const uint8_t zero[sizeof(((struct auxcap_trace_event *)0)->raw)];
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("unused_fields.data", path, sizeof(path), true);
	size_t n = 0, nb = 0;

	(void)state;
	cb_itrace_start(b, 7, 7, 500, 0);
	cb_auxtrace(b, t, sizeof(t), 0, 0, 7, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, 0);
	while (auxcap_decode_next(d, &ev) == 1) {
		const struct auxcap_trace_event *e = ev->trace;

		if (ev->kind != AUXCAP_DECODE_TRACE)
			continue;
		assert_true(n < sizeof(t) / sizeof(t[0]));
		assert_int_equal(e->kind, t[n].kind);
		assert_int_equal(e->ip, t[n].ip);
		if (e->kind == AUXCAP_TRACE_BRANCH && (t[n].flags & TOY_TID)) {
			assert_true(e->flags & AUXCAP_TRACE_F_HAS_TID);
			assert_int_equal(e->tid, 0x1042);
		} else if (e->kind == AUXCAP_TRACE_BRANCH) {
			/* junk or not, nothing past @branch */
			assert_false(e->flags & AUXCAP_TRACE_F_HAS_TID);
			assert_int_equal(e->size, 0);
			assert_memory_equal(e->raw, zero, sizeof(zero));
			assert_null(e->what);
			assert_int_equal(e->payload, 0);
			assert_int_equal(e->tid, 0);
			nb++;
		} else if (e->kind == AUXCAP_TRACE_INSN) {
			assert_int_equal(e->size, 3);
			assert_int_equal(e->raw[0], 0xcc);
			assert_int_equal(e->raw[14], 0xcc);
		} else {
			assert_int_equal(e->kind, AUXCAP_TRACE_GAP);
			assert_string_equal(e->what, "toy gap");
			assert_int_equal(e->err, -EBADMSG);
		}
		n++;
	}
	assert_int_equal(n, sizeof(t) / sizeof(t[0]));
	assert_int_equal(nb, 10);
	auxcap_decode_close(d);
}

/*
 * The spreading rule on many runs of random instruction counts and timestamp distances,
 * small and large (so that span * instructions goes past 64 bits for some), against the
 * formula computed here in 128 bits.
 */
static void test_interpolation_random(void **state)
{
	enum { RUNS = 300, MAXEV = 12 };
	static struct toy_rec t[RUNS * MAXEV + 1];
	static uint64_t want[RUNS * MAXEV + 1];
	uint64_t seed = 0x2545f4914f6cdd1dull, tsc = 1000;
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("interp-random.data", path, sizeof(path), true);
	size_t n = 0, k = 0;

	(void)state;
	for (int r = 0; r < RUNS; r++) {
		size_t first = n, m;
		uint64_t span, total = 0, cum = 0;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		m = 1 + seed % MAXEV;
		span = (seed >> 8) % 4 == 0 ? (seed >> 20) % (1ull << 40) : 1 + (seed >> 20) % 1000000;
		for (size_t i = 0; i < m; i++) {
			uint32_t ninsn;

			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			ninsn = (seed >> 5) % 7 == 0   ? UINT32_MAX /* divisors past 2^32 */
				: (seed >> 5) % 3 == 0 ? (uint32_t)(seed >> 40)
						       : (uint32_t)(seed % 20);
			t[n] = rec(tsc, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x1000 + 16 * n,
				   0x1008 + 16 * n, ninsn);
			t[n].flags = i == 0 ? TOY_TSC : 0; /* the run's timestamp, then events without one */
			total += ninsn;
			n++;
		}
		for (size_t i = first; i < n; i++) {
			cum += t[i].ninsn;
			want[i] = r == RUNS - 1 ? tsc /* the last run: at its timestamp */
				  : tsc + (uint64_t)((unsigned __int128)span * cum / (total + 1));
		}
		tsc += span;
	}
	cb_itrace_start(b, 7, 7, 500, 0);
	cb_auxtrace(b, t, n * sizeof(t[0]), 0, 0, 7, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, 0);
	while (auxcap_decode_next(d, &ev) == 1) {
		if (ev->kind != AUXCAP_DECODE_TRACE)
			continue;
		assert_true(k < n);
		if (ev->time != want[k])
			fail_msg("event %zu: time %" PRIu64 ", expected %" PRIu64, k, ev->time, want[k]);
		k++;
	}
	assert_int_equal(k, n);
	auxcap_decode_close(d);
}

/* ---- the merge ------------------------------------------------------------------------- */

/*
 * CPU 0 runs tid 100 all along; CPU 1 runs tid 200, then tid 300 from t = 5500.  Trace: one
 * branch per 1000 ns on each CPU (without instruction counts, so at their timestamps).
 * Records are written per CPU, each CPU's first half, then a round, then the second halves,
 * then the trace, as a recorder draining two rings would.
 */
static void test_merge(void **state)
{
	struct toy_rec q0[10], q1[10];
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("merge.data", path, sizeof(path), true);
	uint64_t last = 0;
	size_t ntrace[2] = { 0 }, nsamples = 0, nswitch = 0, nsampctx = 0;

	(void)state;
	for (int i = 0; i < 10; i++) {
		q0[i] = rec(1000 * (uint64_t)(i + 1), AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP,
			    0x1000 + 16 * (uint64_t)i, 0x1000 + 16 * (uint64_t)i + 8, 0);
		q1[i] = rec(1000 * (uint64_t)(i + 1) + 100, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP,
			    0x2000 + 16 * (uint64_t)i, 0x2000 + 16 * (uint64_t)i + 8, 0);
	}
	cb_itrace_start(b, 100, 100, 10, 0);
	cb_sample(b, 1, 0x100c, 100, 100, 1500, 0, 100000);
	cb_sample(b, 1, 0x102c, 100, 100, 3500, 0, 100000);
	cb_itrace_start(b, 200, 200, 20, 1);
	cb_sample(b, 1, 0x201c, 200, 200, 2600, 1, 100000);
	cb_round(b);
	cb_sample(b, 1, 0x105c, 100, 100, 6500, 0, 100000);
	cb_switch(b, true, 200, 200, 300, 300, 5500, 1);
	cb_switch(b, false, 300, 300, 200, 200, 5500, 1);
	cb_sample(b, 1, 0x206c, 300, 300, 7600, 1, 100000);
	cb_round(b);
	/* Each queue in two contiguous pieces. */
	cb_auxtrace(b, q0, 4 * sizeof(q0[0]), 0, 0, (uint32_t)-1, 0);
	cb_auxtrace(b, q1, 6 * sizeof(q1[0]), 0, 1, (uint32_t)-1, 1);
	cb_auxtrace(b, q0 + 4, 6 * sizeof(q0[0]), 4 * sizeof(q0[0]), 0, (uint32_t)-1, 0);
	cb_auxtrace(b, q1 + 6, 4 * sizeof(q1[0]), 6 * sizeof(q1[0]), 1, (uint32_t)-1, 1);
	cb_round(b);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, 0);
	assert_int_equal(auxcap_decode_get_info(d)->nr_queues, 2);
	assert_int_equal(auxcap_decode_get_queue(d, 0)->nr_pieces, 2);
	assert_int_equal(auxcap_decode_get_queue(d, 0)->discontinuities, 0);
	while (auxcap_decode_next(d, &ev) == 1) {
		assert_true(ev->time >= last);
		last = ev->time;
		switch (ev->kind) {
		case AUXCAP_DECODE_TRACE:
			assert_true(ev->cpu == 0 || ev->cpu == 1);
			ntrace[ev->cpu]++;
			if (ev->cpu == 0)
				assert_int_equal(ev->tid, 100);
			else
				assert_int_equal(ev->tid, ev->time < 5500 ? 200 : 300);
			assert_int_equal(ev->time % 1000, ev->cpu ? 100 : 0);
			break;
		case AUXCAP_DECODE_SAMPLE:
			nsamples++;
			assert_int_equal(ev->rec->u.sample.time, ev->time);
			if (ev->ctx) {
				nsampctx++;
				/* Each sample's IP is in the run that the branch after it ends. */
				assert_true(ev->ctx->aligned);
			}
			break;
		case AUXCAP_DECODE_SIDEBAND:
			if (ev->rec->type == PERF_RECORD_SWITCH_CPU_WIDE)
				nswitch++;
			break;
		default:
			break;
		}
	}
	assert_int_equal(ntrace[0], 10);
	assert_int_equal(ntrace[1], 10);
	assert_int_equal(nsamples, 5);
	assert_int_equal(nswitch, 2);
	/* Tid 300 has trace only after 5500; every sample's thread has trace before it. */
	assert_int_equal(nsampctx, 5);
	assert_int_equal(auxcap_decode_get_info(d)->samples_aligned, 5);
	auxcap_decode_close(d);
}

/* ---- sample context -------------------------------------------------------------------- */

/*
 * One task: main (0x1000) calls run (0x2000), run calls work (0x3000), work calls leaf
 * (0x4000); leaf and work return, run calls work again, work jumps and returns, tracing
 * stops.  One event per 100 us, each with its own timestamp (and no instruction count, so
 * each is at its timestamp).
 */
static struct toy_rec g_calls[] = {
	{ AUXCAP_TRACE_ENABLE, 0, 1, 0, 100000, 0x1000, 0 },
	{ AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, 1, 0, 200000, 0x1010, 0x2000 },
	{ AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, 1, 0, 300000, 0x2020, 0x3000 },
	{ AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, 1, 0, 400000, 0x3030, 0x4000 },
	{ AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, 1, 0, 500000, 0x4010, 0x3035 },
	{ AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, 1, 0, 600000, 0x3040, 0x2025 },
	{ AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, 1, 0, 700000, 0x2030, 0x3000 },
	{ AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 1, 0, 800000, 0x3008, 0x3020 },
	{ AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, 1, 0, 900000, 0x3040, 0x2035 },
	{ AUXCAP_TRACE_DISABLE, 0, 1, 0, 1000000, 0x2040, 0 },
};

static const struct auxcap_decode_event *next_sample(struct auxcap_decode *d)
{
	const struct auxcap_decode_event *ev;

	while (auxcap_decode_next(d, &ev) == 1)
		if (ev->kind == AUXCAP_DECODE_SAMPLE)
			return ev;
	fail_msg("no more samples");
	return NULL;
}

static void assert_stack(const struct auxcap_decode_sample_ctx *x, const uint64_t *funcs,
			 size_t n)
{
	assert_int_equal(x->nr_stack, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(x->stack[i].func, funcs[i]);
}

static void test_sample_context(void **state)
{
	static const uint64_t in_leaf[] = { 0x4000, 0x3000, 0x2000, 0x1000 };
	static const uint64_t in_work[] = { 0x3000, 0x2000, 0x1000 };
	const struct auxcap_decode_event *ev;
	const struct auxcap_decode_sample_ctx *x;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("ctx.data", path, sizeof(path), true);

	(void)state;
	cb_itrace_start(b, 9, 9, 50000, 0);
	/* S1: in leaf, between the call into it and its return: found forwards. */
	cb_sample(b, 1, 0x4008, 9, 9, 450000, 0, 1);
	/* S2: in leaf, 5 us after it returned: found backwards. */
	cb_sample(b, 1, 0x4004, 9, 9, 505000, 0, 1);
	/* S3: in leaf, 150 us after it returned: outside the window around its time. */
	cb_sample(b, 1, 0x4004, 9, 9, 650000, 0, 1);
	/* S4: an address the trace never ran. */
	cb_sample(b, 1, 0x9999, 9, 9, 850000, 0, 1);
	cb_auxtrace(b, g_calls, sizeof(g_calls), 0, 0, 9, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, 2);
	ev = next_sample(d);
	x = ev->ctx;
	assert_non_null(x);
	assert_true(x->aligned);
	assert_int_equal(x->delta_ns, 50000); /* at the return, 500 us */
	assert_int_equal(x->seq_from, 0x4000);
	assert_stack(x, in_leaf, 4);
	assert_int_equal(x->stack[0].call_site, 0x3030);
	assert_int_equal(x->stack[1].call_site, 0x2020);
	assert_int_equal(x->stack[2].call_site, 0x1010);
	assert_int_equal(x->stack[3].call_site, 0);
	assert_int_equal(x->nr_branches, 2);
	assert_int_equal(x->branches[0].from, 0x3030);
	assert_int_equal(x->branches[0].to, 0x4000);
	assert_int_equal(x->branches[1].from, 0x2020);
	assert_int_equal(x->branches[1].type, AUXCAP_BR_CALL);
	/* 100 us in each of main, run and work before leaf was entered at 400 us. */
	assert_int_equal(x->trace_ns, 300000);
	assert_int_equal(x->nr_ftime, 3);
	assert_int_equal(x->ftime[0].func, 0x1000);
	assert_int_equal(x->ftime[0].ns, 100000);
	assert_int_equal(x->ftime[1].func, 0x2000);
	assert_int_equal(x->ftime[2].func, 0x3000);

	ev = next_sample(d);
	x = ev->ctx;
	assert_true(x->aligned);
	assert_int_equal(x->delta_ns, -5000);
	assert_stack(x, in_leaf, 4);
	assert_int_equal(x->nr_branches, 2);
	assert_int_equal(x->branches[0].to, 0x4000);
	/* leaf's 100 us (400..500) since S1. */
	assert_int_equal(x->trace_ns, 100000);
	assert_int_equal(x->ftime[0].func, 0x4000);

	ev = next_sample(d);
	x = ev->ctx;
	assert_false(x->aligned);
	assert_true(x->window_lo > 500000);
	/* Not found: the context at its time, in run after work returned at 600 us. */
	assert_stack(x, in_work + 1, 2);

	ev = next_sample(d);
	x = ev->ctx;
	assert_false(x->aligned);
	assert_stack(x, in_work, 3);
	assert_int_equal(x->branches[0].type, AUXCAP_BR_JUMP);

	assert_int_equal(auxcap_decode_get_info(d)->samples, 4);
	assert_int_equal(auxcap_decode_get_info(d)->samples_aligned, 2);
	auxcap_decode_close(d);
}

/*
 * Per-function time when a thread runs more functions between two samples than its table
 * first holds (it grows while the slots in use keep their times), and only the functions
 * since the previous sample at the next one.  main (0x1000) calls f(k) = 0x100000 + k *
 * 0x100 for k = 0..99, each running (k + 1) us, with 500 ns in main before each call; a
 * sample; then f(0) and f(1) again; a sample.
 */
#define NFUNCS 100
static void test_function_time_many(void **state)
{
	struct toy_rec t[1 + 2 * (NFUNCS + 2) + 1];
	struct toy_sample smp[2];
	const struct auxcap_decode_event *ev;
	const struct auxcap_decode_sample_ctx *x;
	struct auxcap_decode *d;
	uint64_t time = 100000;
	size_t n = 0;

	(void)state;
	t[n++] = (struct toy_rec){ AUXCAP_TRACE_ENABLE, 0, 1, 0, time, 0x1000, 0 };
	for (unsigned int i = 0; i < NFUNCS + 2; i++) {
		unsigned int k = i < NFUNCS ? i : i - NFUNCS;
		uint64_t f = 0x100000 + k * 0x100;

		if (i == NFUNCS)
			smp[0] = (struct toy_sample){ 0x1016, time + 100 };
		time += 500;
		t[n++] = (struct toy_rec){ AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, 1, 0, time, 0x1010, f };
		time += (k + 1) * 1000;
		t[n++] = (struct toy_rec){ AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, 1, 0, time,
					   f + 0x10, 0x1015 };
	}
	smp[1] = (struct toy_sample){ 0x1016, time + 100 };
	t[n++] = (struct toy_rec){ AUXCAP_TRACE_DISABLE, 0, 1, 0, time + 1000, 0x1020, 0 };
	d = toy_capture("many.data", 4, smp, 2, t, n * sizeof(t[0]));

	ev = next_sample(d);
	x = ev->ctx;
	assert_non_null(x);
	/* main's 100 x 500 ns, and 1 + 2 + ... + 100 us in the functions */
	assert_int_equal(x->trace_ns, NFUNCS * 500 + NFUNCS * (NFUNCS + 1) / 2 * 1000);
	assert_int_equal(x->nr_ftime, 16); /* the longest, longest first */
	for (unsigned int i = 0; i < 16; i++) {
		assert_int_equal(x->ftime[i].func, 0x100000 + (NFUNCS - 1 - i) * 0x100);
		assert_int_equal(x->ftime[i].ns, (NFUNCS - i) * 1000);
	}

	ev = next_sample(d);
	x = ev->ctx;
	assert_int_equal(x->trace_ns, 1000 + 1000 + 2000);
	assert_int_equal(x->nr_ftime, 3);
	assert_int_equal(x->ftime[0].func, 0x100100); /* f(1): 2 us */
	assert_int_equal(x->ftime[0].ns, 2000);
	assert_int_equal(x->ftime[1].func, 0x1000); /* main and f(0): 1 us each, by address */
	assert_int_equal(x->ftime[1].ns, 1000);
	assert_int_equal(x->ftime[2].func, 0x100000);
	assert_int_equal(x->ftime[2].ns, 1000);
	auxcap_decode_close(d);
}

/*
 * A sample taken while its thread is in a system call: tracing (user-only) stopped at the
 * syscall and restarts at the instruction after it, which is the sample's (user) IP.  That
 * run starts inside the sample's window and ends (with a return) after it: the IP is found
 * there.  An IP whose run starts after the window is not.
 */
static void test_sample_in_syscall(void **state)
{
	static const struct toy_rec t[] = {
		{ AUXCAP_TRACE_ENABLE, 0, 1, 0, 100000, 0x1000, 0 },
		{ AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, 1, 0, 200000, 0x1010, 0x2000 },
		{ AUXCAP_TRACE_DISABLE, 0, 1, 0, 300000, 0x2008, 0 },	/* the syscall */
		{ AUXCAP_TRACE_ENABLE, 0, 1, 0, 400000, 0x200a, 0 },	/* back from it */
		{ AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, 1, 0, 500000, 0x2010, 0x1015 },
		{ AUXCAP_TRACE_DISABLE, 0, 1, 0, 600000, 0x1020, 0 },
	};
	static const uint64_t in_callee[] = { 0x2000, 0x1000 };
	const struct auxcap_decode_event *ev;
	const struct auxcap_decode_sample_ctx *x;
	static const struct toy_sample smp[] = {
		/* In the kernel 5 us before tracing restarts: the IP it resumes at. */
		{ 0x200a, 395000 },
		/* The same time, an IP that runs only after the return at 500 us: not in the
		 * window (300 us - 10 us .. 400 us + 10 us). */
		{ 0x1018, 395001 },
	};
	struct auxcap_decode *d;

	(void)state;
	d = toy_capture("syscall.data", 4, smp, 2, t, sizeof(t));
	ev = next_sample(d);
	x = ev->ctx;
	assert_non_null(x);
	assert_int_equal(x->window_lo, 290000);
	assert_int_equal(x->window_hi, 410000);
	assert_true(x->aligned);
	assert_int_equal(x->seq_from, 0x200a);
	assert_true(x->seq_from_start);
	assert_int_equal(x->delta_ns, 105000); /* at the return that ends the run */
	assert_stack(x, in_callee, 2);

	ev = next_sample(d);
	x = ev->ctx;
	assert_false(x->aligned);
	assert_int_equal(auxcap_decode_get_info(d)->samples_aligned, 1);
	auxcap_decode_close(d);
}

/*
 * The run holding a sample's IP ends with an event whose time is not known yet when the
 * sample comes (its timestamp run is still open): the stage decodes on until it is, and the
 * context is at that event's spread time.
 */
static void test_sample_in_open_run(void **state)
{
	static const struct toy_rec t[] = {
		{ AUXCAP_TRACE_ENABLE, 0, 1, 0, 190000, 0x1000, 0 },
		{ AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, 1, 0, 200000, 0x1010, 0x2000 },
		{ AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 1, 0, 210000, 0x2004, 0x2008 },
		{ AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 1, 0, 212000, 0x200c, 0x2010 },
		{ AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0, 10, 0, 0x2018, 0x2020 }, /* no timestamp */
		{ AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, 1, 10, 400000, 0x2028, 0x1015 },
	};
	static const uint64_t in_callee[] = { 0x2000, 0x1000 };
	const struct auxcap_decode_event *ev;
	const struct auxcap_decode_sample_ctx *x;
	static const struct toy_sample smp[] = { { 0x2014, 205000 } };
	struct auxcap_decode *d;

	(void)state;
	d = toy_capture("openrun.data", 6, smp, 1, t, sizeof(t));
	ev = next_sample(d);
	x = ev->ctx;
	assert_non_null(x);
	assert_int_equal(x->window_lo, 190000);
	assert_int_equal(x->window_hi, 220000);
	assert_true(x->aligned);
	assert_int_equal(x->seq_from, 0x2010);
	/* The jump at 0x2018 ends the run: 212000 + (400000 - 212000) * 10 / (10 + 1). */
	assert_int_equal(x->delta_ns, 212000 + 188000 * 10 / 11 - 205000);
	assert_stack(x, in_callee, 2);
	auxcap_decode_close(d);
}

/*
 * A sample taken at the very time of a timestamp, right after an indirect jump whose packet
 * came just before the timing packet: Intel PT decoders read the timing packet before they
 * hand out that jump, so the jump is timed in the run the timestamp starts, after the
 * sample.  The sample's IP is the jump's target: the run after the timestamp is in its
 * window (the emulated PMU puts a PSB right after such a packet and samples at the same
 * stop: 1 sample in about 10 synthesized captures was not found).  A sample strictly
 * inside the run before keeps the window that ends at the timestamp.
 */
static void test_sample_at_timestamp(void **state)
{
	struct toy_rec t[] = {
		rec(100000, AUXCAP_TRACE_ENABLE, 0, 0x1000, 0, 0),
		rec(100000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x1010, 0x3000, 10), /* to PLT0 */
		rec(300000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x3006, 0x5000, 2), /* read ahead */
		rec(300000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, 0x5020, 0x6000, 8),
		rec(400000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, 0x6008, 0x5025, 3),
	};
	const struct auxcap_decode_event *ev;
	const struct auxcap_decode_sample_ctx *x;
	static const struct toy_sample smp[] = {
		/* Inside the first run, an IP that runs only after the timestamp: not in its
		 * window. */
		{ 0x5010, 250000 },
		/* At the timestamp, the IP the jump went to. */
		{ 0x5000, 300000 },
	};
	struct auxcap_decode *d;

	(void)state;
	d = toy_capture("attsc.data", 5, smp, 2, t, sizeof(t));
	ev = next_sample(d);
	x = ev->ctx;
	assert_non_null(x);
	assert_int_equal(x->window_hi, 310000);
	assert_false(x->aligned);

	ev = next_sample(d);
	x = ev->ctx;
	assert_non_null(x);
	assert_int_equal(x->window_hi, 410000);
	assert_true(x->aligned);
	assert_int_equal(x->seq_from, 0x5000);
	/* At the call that ends the run: 300000 + 100000 * (2 + 8) / (2 + 8 + 1). */
	assert_int_equal(x->delta_ns, 100000 * 10 / 11);
	assert_int_equal(auxcap_decode_get_info(d)->samples_aligned, 1);
	auxcap_decode_close(d);
}

/* ---- timestamps that are not times ----------------------------------------------------- */

/*
 * A corrupt timestamp that converts to a time before the clock's zero (the conversion
 * wraps to near 2^64) is not a time: the event takes its run's time, and the events after
 * it keep their own (they were all dragged to the wrapped time).
 */
static void test_wrapped_timestamp(void **state)
{
	struct auxcap_perf_time_conv tc = { 0 };
	struct toy_rec t[] = {
		rec(2000000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x10, 0x20, 0),
		rec(5, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x24, 0x30, 0),
		rec(3000000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x34, 0x40, 0),
		rec(4000000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x44, 0x10, 0),
	};
	/* perf time = tsc - 1000000 */
	const uint64_t want[] = { 1000000, 1000000, 2000000, 3000000 };
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b;
	size_t n = 0;

	(void)state;
	path_of(path, sizeof(path), "wrapped.data");
	b = cb_open(path, "toy_trace//", 0x7000);
	assert_non_null(b);
	tc.time_shift = 0;
	tc.time_mult = 1;
	tc.time_zero = (uint64_t)-1000000;
	tc.cap_user_time_zero = true;
	cb_time_conv(b, &tc);
	cb_auxtrace_info(b, TOY_TYPE, NULL, 0);
	cb_itrace_start(b, 8, 8, 500, 0);
	cb_auxtrace(b, t, sizeof(t), 0, 0, 8, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, 0);
	while (auxcap_decode_next(d, &ev) == 1) {
		if (ev->kind != AUXCAP_DECODE_TRACE)
			continue;
		assert_true(n < 4);
		assert_int_equal(ev->time, want[n]);
		n++;
	}
	assert_int_equal(n, 4);
	auxcap_decode_close(d);
}

/* ---- data lost at TRUNCATED ------------------------------------------------------------- */

/* An Arm SPE record: a PC packet (EL0, NS) and a timestamp packet. */
static size_t spe_rec(uint8_t *p, uint64_t pc, uint64_t ts)
{
	p[0] = 0xb0;
	for (int i = 0; i < 8; i++)
		p[1 + i] = (uint8_t)((pc | 0x8000000000000000ull) >> (8 * i));
	p[9] = 0x71;
	for (int i = 0; i < 8; i++)
		p[10 + i] = (uint8_t)(ts >> (8 * i));
	return 18;
}

/*
 * An Arm SPE capture laid out as the driver leaves it when its 2-page buffer fills: the first
 * transaction's records end in a record cut at the page end (its PC packet and the header of
 * its timestamp packet), the driver pads the rest of the buffer (zeros) and flags the AUX
 * record TRUNCATED; once enabled again it pads one byte to its alignment and the records go
 * on.  The copies out of the ring are contiguous AUXTRACE buffers.  The cut record is data
 * lost: one gap at its offset, never a sample whose timestamp is completed by padding bytes
 * (a timestamp of 0, which converted before the clock's zero and dragged every later
 * sample's time with it).
 */
static void test_spe_truncated(void **state)
{
	struct auxcap_perf_time_conv tc = { 0 };
	uint8_t *a = calloc(1, 8192), b1[8] = { 0 }, c[18 * 50];
	const struct auxcap_decode_event *ev;
	size_t na = 0, nc = 0, nsamples = 0, ngaps = 0;
	uint64_t ts = 1000000, last = 0;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b;

	(void)state;
	if (!auxcap_backend_find("arm_spe"))
		skip(); /* the backend is not in this build */
	assert_non_null(a);
	while (na + 18 <= 4096) {
		na += spe_rec(a + na, 0x400000 + na, ts);
		ts += 1000;
	}
	/* 4086 bytes of records, then the cut one: its PC packet and a timestamp header. */
	assert_int_equal(na, 4086);
	spe_rec(a + na, 0x500000, ts);
	memset(a + 4096, 0, 8192 - 4096);
	ts += 1000;
	for (int i = 0; i < 50; i++) {
		nc += spe_rec(c + nc, 0x600000 + nc, ts);
		ts += 1000;
	}
	path_of(path, sizeof(path), "spe-truncated.data");
	b = cb_open(path, "arm_spe_0//", 0x7000);
	assert_non_null(b);
	tc.time_shift = 0;
	tc.time_mult = 1;
	tc.time_zero = (uint64_t)-1000; /* perf time = ts - 1000 */
	tc.cap_user_time_zero = true;
	cb_time_conv(b, &tc);
	cb_auxtrace_info(b, AUXCAP_AUXTRACE_ARM_SPE, NULL, 0);
	cb_itrace_start(b, 7, 7, 500, 0);
	cb_aux(b, 0, 4096, 0, 7, 7, 2000000, 0);
	cb_aux(b, 8191, 0, 0x1 /* TRUNCATED */, 7, 7, 2000001, 0);
	cb_auxtrace(b, a, 8191, 0, 0, (uint32_t)-1, 0);
	cb_auxtrace(b, b1, 1, 8191, 0, (uint32_t)-1, 0);
	cb_aux(b, 8192, nc, 0, 7, 7, 3000000, 0);
	cb_auxtrace(b, c, nc, 8192, 0, (uint32_t)-1, 0);
	cb_round(b);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, 0);
	while (auxcap_decode_next(d, &ev) == 1) {
		if (ev->kind != AUXCAP_DECODE_TRACE)
			continue;
		if (ev->trace->kind == AUXCAP_TRACE_GAP) {
			assert_true(ev->trace->offset >= 4086 && ev->trace->offset < 4096);
			ngaps++;
			continue;
		}
		assert_int_equal(ev->trace->kind, AUXCAP_TRACE_SAMPLE);
		assert_true(ev->trace->ip != 0x500000);
		/* every sample at its own timestamp's time */
		assert_int_equal(ev->time, ev->trace->tsc - 1000);
		assert_true(ev->time >= last);
		last = ev->time;
		nsamples++;
	}
	assert_int_equal(nsamples, na / 18 + 50);
	assert_int_equal(ngaps, 1);
	assert_int_equal(auxcap_decode_get_queue(d, 0)->discontinuities, 1);
	auxcap_decode_close(d);
	free(a);
}

/* ---- gaps and losses in every output ------------------------------------------------------- */

static char *render(const char *path, enum auxcap_out_format fmt, enum auxcap_out_weight wgt)
{
	struct auxcap_out_opts oo = { .sz = sizeof(oo) };
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d = open_capture(path, 4);
	struct auxcap_out *w;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	oo.format = fmt;
	oo.branches = true;
	oo.calls = true;
	oo.weight = wgt;
	assert_int_equal(auxcap_out_new(f, d, &oo, &w), 0);
	while (auxcap_decode_next(d, &ev) == 1)
		assert_int_equal(auxcap_out_event(w, ev), 0);
	assert_int_equal(auxcap_out_finish(w), 0);
	auxcap_out_free(w);
	auxcap_decode_close(d);
	fclose(f);
	return buf;
}

static void test_gaps_and_losses(void **state)
{
	struct toy_rec t[] = {
		rec(1000, AUXCAP_TRACE_ENABLE, 0, 0x1000, 0, 0),
		rec(2000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, 0x1010, 0x2000, 0),
		rec(3000, AUXCAP_TRACE_GAP, 0, 0, 0, 0),
		rec(7000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x2010, 0x2020, 0),
		rec(8000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, 0x2030, 0x1015, 0),
	};
	char path[300], *out;
	struct cb *b = start("gap.data", path, sizeof(path), true);

	(void)state;
	cb_itrace_start(b, 5, 5, 500, 0);
	cb_lost(b, 17, 2500, 0);
	cb_aux(b, 0, 4096, 0x1 /* TRUNCATED */, 5, 5, 4000, 0);
	cb_auxtrace(b, t, sizeof(t), 0, 0, 5, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);

	out = render(path, AUXCAP_OUT_TEXT, 0);
	assert_non_null(strstr(out, "!! gap at trace offset 0x40: toy gap"));
	assert_non_null(strstr(out, "!! LOST: 17 records lost"));
	assert_non_null(strstr(out, "!! AUX TRUNCATED: AUX offset 0x0 size 4096"));
	/* call then return: depth 0 both ways (the text's own counter) */
	assert_non_null(strstr(out, "   0 call   [unknown] (from [unknown])"));
	free(out);

	out = render(path, AUXCAP_OUT_JSON, 0);
	assert_non_null(strstr(out, "{\"type\":\"gap\",\"time\":3000,"));
	assert_non_null(strstr(out, "\"reason\":\"toy gap\""));
	assert_non_null(strstr(out, "{\"type\":\"loss\",\"time\":2500,"));
	assert_non_null(strstr(out, "\"what\":\"AUX TRUNCATED\""));
	free(out);

	/* The gap slice lasts from the gap (3000) to the queue's next event (7000): 4 us,
	 * starting 2 us after the first event (1000 is ts 0... the ITRACE_START at 500 is). */
	out = render(path, AUXCAP_OUT_PERFETTO, 0);
	assert_non_null(strstr(out, "{\"ph\":\"X\",\"name\":\"trace gap: toy gap\",\"cat\":\"gap\","
				    "\"ts\":2.500,"));
	assert_non_null(strstr(out, "\"dur\":4.000,"));
	assert_non_null(strstr(out, "\"name\":\"LOST: 17 lost\",\"cat\":\"loss\""));
	assert_non_null(strstr(out, "\"name\":\"AUX TRUNCATED\",\"cat\":\"loss\""));
	free(out);

	/* Time: 1000..2000 in the first frame, 2000..3000 in the callee, 4000 ns lost, then
	 * 7000..8000 in the callee again. */
	out = render(path, AUXCAP_OUT_FOLDED, AUXCAP_OUT_WEIGHT_TIME);
	assert_non_null(strstr(out, "[gap] 4000\n"));
	assert_non_null(strstr(out, "[unknown];[unknown] 2000\n"));
	assert_non_null(strstr(out, "[unknown] 1000\n"));
	free(out);
}

/* ---- timeless captures ----------------------------------------------------------------- */

static void test_timeless(void **state)
{
	struct toy_rec t[] = {
		rec(1000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x10, 0x20, 1),
		rec(2000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x24, 0x30, 1),
		rec(3000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x34, 0x40, 1),
		rec(4000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x44, 0x50, 1),
	};
	/* where the events go: the first buffer's bytes were written from the start of tracing
	 * (ITRACE_START, 400) to its copy (the AUX record, 777), the second's from then to its
	 * own copy (1500); each event by its place in its buffer */
	const uint64_t want[] = { 400, 400 + 377 / 2, 777, 777 + 723 / 2 };
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start("timeless.data", path, sizeof(path), false);
	size_t n = 0;

	(void)state;
	cb_itrace_start(b, 3, 3, 400, 0);
	cb_aux(b, 0, 2 * sizeof(t[0]), 0, 3, 3, 777, 0);
	cb_auxtrace(b, t, 2 * sizeof(t[0]), 0, 0, 3, (uint32_t)-1);
	cb_sample(b, 1, 0x14, 3, 3, 900, 0, 1);
	cb_aux(b, 2 * sizeof(t[0]), 2 * sizeof(t[0]), 0, 3, 3, 1500, 0);
	cb_auxtrace(b, t + 2, 2 * sizeof(t[0]), 2 * sizeof(t[0]), 0, 3, (uint32_t)-1);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, 0);
	while (auxcap_decode_next(d, &ev) == 1) {
		if (ev->kind != AUXCAP_DECODE_TRACE)
			continue;
		assert_true(n < 4);
		assert_int_equal(ev->time, want[n]);
		assert_false(ev->has_time); /* an estimate */
		n++;
	}
	assert_int_equal(n, 4);
	assert_true(auxcap_decode_get_info(d)->timeless);
	auxcap_decode_close(d);
}

/* ---- a run longer than the queue holds ------------------------------------------------------ */

/*
 * Thousands of events between two timestamps (Intel PT without MTC: a loop of conditional
 * branches fills kilobytes of TNT packets before the next TSC), after many short runs that
 * were handed out already: the queue's ring grows in the middle of the stream to hold the
 * long run.  Every event still comes out, once, in order, with a time between its run's two
 * timestamps.  (The ring's growth moved the events to its start while a position taken
 * before was still in use: when fewer events than had been handed out were left, the queue
 * ended there, silently: an emulated capture of an ASan program lost everything after
 * ld.so's relocation loop, 6231 of 12526 events, in 2 of 40 runs.)  Runs longer than the
 * queue holds (RUN_MAX) are closed every so many events: the second capture.
 */
static void check_long_run(const char *name, size_t S, size_t N, size_t M)
{
	struct toy_rec *t = calloc(S + N + M, sizeof(*t));
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start(name, path, sizeof(path), true);
	size_t n = 0;
	uint64_t last = 0;

	assert_non_null(t);
	/* runs of 10 events 100 ns apart, then one of N, then one of M */
	for (size_t i = 0; i < S + N + M; i++)
		t[i] = rec(i < S ? 100000 + 100 * (i / 10) : i < S + N ? 1000000 : 2000000,
			   AUXCAP_TRACE_BRANCH, AUXCAP_BR_COND, 0x1000 + 16 * (i % 64),
			   0x1000 + 16 * ((i + 1) % 64), 3);
	cb_itrace_start(b, 5, 5, 10, 0);
	cb_auxtrace(b, t, (S + N + M) * sizeof(*t), 0, 0, 5, (uint32_t)-1);
	cb_aux(b, 0, (S + N + M) * sizeof(*t), 0, 5, 5, 3000000, 0);
	cb_round(b);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, 0);
	while (auxcap_decode_next(d, &ev) == 1) {
		if (ev->kind != AUXCAP_DECODE_TRACE)
			continue;
		assert_int_equal(ev->trace->ip, 0x1000 + 16 * (n % 64));
		assert_true(ev->time >= last);
		if (n >= S)
			assert_true(ev->time >= 1000000 && ev->time <= 2000000);
		last = ev->time;
		n++;
	}
	assert_int_equal(n, S + N + M);
	auxcap_decode_close(d);
	free(t);
}

static void test_long_run(void **state)
{
	(void)state;
	check_long_run("long_run.data", 20000, 3000, 10);
	check_long_run("longer_run.data", 6000, 40000, 10);
}

/* ---- execs and mappings out of file order ------------------------------------------------ */

/*
 * Rings are written one after the other: a process that exec'd on CPU 1 and mapped a library
 * on CPU 0 has that MMAP2 in the file before its COMM exec.  Each mapping belongs to the
 * image its time falls in, whatever its place in the file: the old image's (made before the
 * exec at 1000) until the exec, the new one's from it.  The backend gets each mapping's span;
 * symbols answer for the time the decode has reached, and for the end before it starts.  The
 * mapped file is this test program (any readable ELF does).
 */
static uint64_t span_of(uint64_t vaddr, bool until)
{
	for (size_t i = 0; i < toy_nr_maps; i++)
		if (toy_map_vaddr[i] == vaddr)
			return until ? toy_map_span[i].until : toy_map_span[i].since;
	fail_msg("map at 0x%" PRIx64 " not given to the backend", vaddr);
	return 0;
}

static void test_exec_maps_by_time(void **state)
{
	struct toy_rec t[] = { rec(1500, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x20010, 0x40010, 1) };
	char exe[256], path[300];
	const char *dso = NULL;
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct cb *b = start("exec_order.data", path, sizeof(path), true);
	int seen = 0, r;

	(void)state;
	assert_true(n > 0);
	exe[n] = '\0';
	/* pid 7: old image (before the exec) at 0x10000, written first */
	cb_mmap2(b, 7, 7, 0x10000, 0x1000, 0, 5 /* r-x */, exe, 500, 1);
	/* CPU 0's ring: the library mapped at 2000, after the exec at 1000 */
	cb_mmap2(b, 7, 7, 0x40000, 0x1000, 0, 5, exe, 2000, 0);
	/* CPU 1's ring: the exec, the program mapped at 1000 (same time as the exec) */
	cb_comm(b, 7, 7, "prog", true, 1000, 1);
	cb_mmap2(b, 7, 7, 0x20000, 0x1000, 0, 5, exe, 1000, 1);
	/* a mapping of the old image from before the exec, drained last */
	cb_mmap2(b, 7, 7, 0x30000, 0x1000, 0, 5, exe, 800, 1);
	/* pid 8: no exec, kept whatever the order */
	cb_mmap2(b, 8, 8, 0x50000, 0x1000, 0, 5, exe, 3000, 0);
	/* a sample in the old image */
	cb_sample(b, 1, 0x10010, 7, 7, 900, 1, 1);
	cb_itrace_start(b, 7, 7, 1001, 1);
	cb_auxtrace(b, t, sizeof(t), 0, 0, 7, (uint32_t)-1);
	cb_round(b);
	assert_int_equal(cb_close(b), 0);

	d = open_capture(path, 0);
	/* before the decode: the mappings at the end */
	assert_int_not_equal(auxcap_decode_symbolize(d, 7, 0x40010, NULL, NULL, &dso), 0);
	assert_string_equal(dso, exe);
	assert_int_not_equal(auxcap_decode_symbolize(d, 7, 0x20010, NULL, NULL, &dso), 0);
	dso = NULL;
	assert_int_equal(auxcap_decode_symbolize(d, 7, 0x10010, NULL, NULL, &dso), 0);
	assert_null(dso);
	assert_int_equal(auxcap_decode_symbolize(d, 7, 0x30010, NULL, NULL, &dso), 0);
	assert_null(dso);
	assert_int_not_equal(auxcap_decode_symbolize(d, 8, 0x50010, NULL, NULL, &dso), 0);
	while ((r = auxcap_decode_next(d, &ev)) == 1) {
		bool old;

		if (ev->kind == AUXCAP_DECODE_SAMPLE && ev->time == 900)
			old = true;
		else if (ev->kind == AUXCAP_DECODE_TRACE && ev->time == 1500)
			old = false;
		else
			continue;
		seen++;
		assert_int_equal(auxcap_decode_symbolize(d, 7, 0x10010, NULL, NULL, NULL) != 0, old);
		assert_int_equal(auxcap_decode_symbolize(d, 7, 0x30010, NULL, NULL, NULL) != 0, old);
		assert_int_equal(auxcap_decode_symbolize(d, 7, 0x20010, NULL, NULL, NULL) != 0, !old);
		assert_int_equal(auxcap_decode_symbolize(d, 7, 0x40010, NULL, NULL, NULL) != 0, !old);
		assert_int_not_equal(auxcap_decode_symbolize(d, 8, 0x50010, NULL, NULL, NULL), 0);
	}
	assert_int_equal(r, 0);
	assert_int_equal(seen, 2);
	/* after the decode, by the time given: the old image at 900, the new one at 1500 */
	assert_int_not_equal(auxcap_decode_symbolize_at(d, 7, 0x10010, 900, NULL, NULL, NULL), 0);
	assert_int_equal(auxcap_decode_symbolize_at(d, 7, 0x20010, 900, NULL, NULL, NULL), 0);
	assert_int_equal(auxcap_decode_symbolize_at(d, 7, 0x10010, 1500, NULL, NULL, NULL), 0);
	assert_int_not_equal(auxcap_decode_symbolize_at(d, 7, 0x20010, 1500, NULL, NULL, NULL), 0);
	assert_int_not_equal(auxcap_decode_symbolize(d, 7, 0x20010, NULL, NULL, NULL), 0);
	/* the queue of pid 7 got its maps with their spans (pid 8's are another process's) */
	assert_true(toy_had_spans);
	assert_int_equal(toy_nr_maps, 4);
	assert_int_equal(span_of(0x10000, false), 0);
	assert_int_equal(span_of(0x10000, true), 1000);
	assert_int_equal(span_of(0x30000, false), 0);
	assert_int_equal(span_of(0x30000, true), 1000);
	assert_int_equal(span_of(0x20000, false), 1000);
	assert_true(span_of(0x20000, true) == UINT64_MAX);
	assert_int_equal(span_of(0x40000, false), 1000);
	assert_true(span_of(0x40000, true) == UINT64_MAX);
	auxcap_decode_close(d);
}

/* ---- bad input ------------------------------------------------------------------------- */

/*
 * A run that holds a disable (a system call) and an exec of its process is spread up to the
 * exec only: its events ran in the old image, before the exec's COMM.  An exec of another
 * process does not cut a task's run: spread up to the next timestamp.  A run that ends with
 * the disable (@ends_disabled: untraced up to the next timestamp) is not spread at all: its
 * events at its timestamp, before either exec.  Spread, they took the untraced time too: a
 * sleep's seconds for the instructions before it, where hardware's next timing packet, or the
 * emulated PMU's TSC as the call enters the kernel, says they ran just before it.
 */
static void check_exec_clamp(uint32_t exec_pid, bool clamped, bool ends_disabled)
{
	struct toy_rec t[] = {
		rec(1000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x1000, 0x1010, 10),
		rec(1000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x1020, 0x1030, 10),
		rec(1000, AUXCAP_TRACE_DISABLE, AUXCAP_BR_NONE, 0x1040, 0, 0),
		rec(1000, AUXCAP_TRACE_ENABLE, AUXCAP_BR_NONE, 0x1050, 0, 0),
		rec(1000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x1050, 0x1060, 10),
		rec(3000, AUXCAP_TRACE_ENABLE, AUXCAP_BR_NONE, 0x2000, 0, 0),
		rec(3000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, 0x2000, 0x2010, 10),
	};
	/* t0 + span * (instructions up to it) / 31: span 2000 up to 3000, 999 up to the exec */
	const uint64_t want_clamped[] = { 1322, 1644, 1644, 1644, 1966 },
		       want_spread[] = { 1645, 2290, 2290, 2290, 2935 },
		       want_t0[] = { 1000, 1000, 1000 };
	const uint64_t *want = ends_disabled ? want_t0 : clamped ? want_clamped : want_spread;
	const size_t nwant = ends_disabled ? 3 : 5;
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d;
	char path[300];
	struct cb *b = start(clamped ? "exec_clamp.data" : "exec_other.data", path, sizeof(path),
			     true);
	size_t n = 0;
	bool seen_comm = false;
	int r;

	if (ends_disabled) /* the run ends with the disable: the next one starts at 3000 */
		memmove(&t[3], &t[5], 2 * sizeof(t[0]));
	cb_itrace_start(b, 7, 7, 900, 0);
	cb_comm(b, exec_pid, exec_pid, "next", true, 2000, 0);
	cb_auxtrace(b, t, (ends_disabled ? 5 : 7) * sizeof(t[0]), 0, 0, 7, (uint32_t)-1);
	cb_round(b);
	assert_int_equal(cb_close(b), 0);
	d = open_capture(path, 0);
	while ((r = auxcap_decode_next(d, &ev)) == 1) {
		if (ev->kind == AUXCAP_DECODE_SIDEBAND && ev->rec &&
		    ev->rec->type == PERF_RECORD_COMM)
			seen_comm = true;
		if (ev->kind != AUXCAP_DECODE_TRACE || n >= nwant)
			continue;
		assert_int_equal(ev->time, want[n]);
		/* clamped: the old image's events come before the exec */
		assert_int_equal(seen_comm, !clamped && !ends_disabled && ev->time >= 2000);
		n++;
	}
	assert_int_equal(r, 0);
	assert_int_equal(n, nwant);
	auxcap_decode_close(d);
}

static void test_exec_clamps_run(void **state)
{
	(void)state;
	check_exec_clamp(7, true, false);
	check_exec_clamp(8, false, false);
	check_exec_clamp(7, true, true);
	check_exec_clamp(8, false, true);
}

/* Functions of this binary, for their symbols only (the trace below is synthesized): a stub
 * that jumps on, as a PLT entry does, the function it jumps to, and their caller. */
__attribute__((noinline, used)) int auxcap_test_tail_target(int x);
__attribute__((noinline, used)) int auxcap_test_tail_target(int x)
{
	volatile int v = x;

	for (int i = 0; i < x; i++)
		v = v * 3 + i;
	return v;
}

__attribute__((noinline, used)) int auxcap_test_tail_stub(int x);
__attribute__((noinline, used)) int auxcap_test_tail_stub(int x)
{
	return auxcap_test_tail_target(x) + 1;
}

__attribute__((noinline, used)) int auxcap_test_tail_caller(int x);
__attribute__((noinline, used)) int auxcap_test_tail_caller(int x)
{
	return auxcap_test_tail_stub(x) * 2;
}

/* The address of @fn of this binary once mapped at @base (file offset 0 there). */
static uint64_t at_base(uint64_t base, void *fn)
{
	Dl_info info;

	assert_true(dladdr(fn, &info) != 0);
	return base + ((uint64_t)(uintptr_t)fn - (uint64_t)(uintptr_t)info.dli_fbase);
}

/*
 * A jump to the start of another function is a tail call: the innermost frame goes on in the
 * function jumped to.  caller calls stub, stub jumps to target's first instruction (as a PLT
 * stub jumps to the function it resolved), target jumps inside itself (not a tail call) and
 * returns to caller.  The jump's stack change pops the stub's frame and pushes target's; a
 * sample's stack has target where target ran (found forwards, across the jump, or after it)
 * and stub where stub ran (found backwards, the jump undone); function time goes to each.
 */
static void test_tail_call(void **state)
{
	const uint64_t base = 0x100000000ull;
	const struct auxcap_decode_event *ev;
	const struct auxcap_decode_sample_ctx *x;
	struct auxcap_decode *d;
	char exe[256], path[300];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	uint64_t caller, stub, target, in_stub[2], in_target[2];
	const char *name = NULL;
	uint64_t off = 1;
	struct cb *b;
	int jumps = 0;

	(void)state;
	assert_true(n > 0);
	exe[n] = '\0';
	caller = at_base(base, (void *)auxcap_test_tail_caller);
	stub = at_base(base, (void *)auxcap_test_tail_stub);
	target = at_base(base, (void *)auxcap_test_tail_target);
	in_stub[0] = stub;
	in_stub[1] = in_target[1] = caller;
	in_target[0] = target;
	{
		struct toy_rec t[] = {
			rec(100000, AUXCAP_TRACE_ENABLE, AUXCAP_BR_NONE, caller, 0, 0),
			rec(200000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_CALL, caller + 8, stub, 0),
			rec(300000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, stub + 4, target, 0),
			rec(400000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_JUMP, target + 4, target + 0x10, 0),
			rec(500000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, target + 0x14, caller + 13, 0),
			rec(600000, AUXCAP_TRACE_DISABLE, AUXCAP_BR_NONE, caller + 0x10, 0, 0),
		};

		b = start("tail.data", path, sizeof(path), true);
		cb_mmap2(b, 9, 9, base, 64 << 20, 0, 5 /* r-x */, exe, 1000, 0);
		cb_itrace_start(b, 9, 9, 50000, 0);
		cb_sample(b, 1, target + 2, 9, 9, 250000, 0, 1);    /* S1: target, forwards */
		cb_sample(b, 1, stub + 2, 9, 9, 290000, 0, 1);	    /* S2: stub, forwards */
		cb_sample(b, 1, stub + 2, 9, 9, 310000, 0, 1);	    /* S3: stub, backwards */
		cb_sample(b, 1, target + 0x12, 9, 9, 450000, 0, 1); /* S4: target */
		cb_auxtrace(b, t, sizeof(t), 0, 0, 9, (uint32_t)-1);
		assert_int_equal(cb_close(b), 0);
	}
	d = open_capture(path, 0);
	/* the symbols the test relies on: functions that start there, long enough */
	assert_int_equal(auxcap_decode_symbolize(d, 9, target + 0x14, &name, &off, NULL), 1);
	assert_string_equal(name, "auxcap_test_tail_target");
	assert_int_equal(off, 0x14);
	assert_int_equal(auxcap_decode_symbolize(d, 9, stub, &name, &off, NULL), 1);
	assert_string_equal(name, "auxcap_test_tail_stub");
	assert_int_equal(off, 0);

	for (int k = 0; k < 4; k++) {
		int r;

		while ((r = auxcap_decode_next(d, &ev)) == 1 && ev->kind != AUXCAP_DECODE_SAMPLE) {
			if (ev->kind != AUXCAP_DECODE_TRACE || ev->trace->branch != AUXCAP_BR_JUMP)
				continue;
			if (jumps++ == 0) { /* stub's frame ends, target's begins, at the same depth */
				assert_int_equal(ev->stack.popped, 1);
				assert_true(ev->stack.pushed);
				assert_false(ev->stack.rebased);
			} else { /* a jump inside target */
				assert_int_equal(ev->stack.popped, 0);
				assert_false(ev->stack.pushed);
			}
			assert_int_equal(ev->stack.depth, 2);
		}
		assert_int_equal(r, 1);
		x = ev->ctx;
		assert_non_null(x);
		assert_true(x->aligned);
		switch (k) {
		case 0:
			assert_int_equal(x->delta_ns, 400000 - 250000);
			assert_stack(x, in_target, 2);
			assert_int_equal(x->nr_ftime, 1);
			assert_int_equal(x->ftime[0].func, caller);
			break;
		case 1:
			assert_int_equal(x->delta_ns, 300000 - 290000);
			assert_stack(x, in_stub, 2);
			/* nothing since S1, which took caller's 100 us before the call */
			assert_int_equal(x->trace_ns, 0);
			break;
		case 2:
			assert_int_equal(x->delta_ns, 300000 - 310000);
			assert_stack(x, in_stub, 2);
			assert_int_equal(x->nr_ftime, 1);
			assert_int_equal(x->ftime[0].func, stub);
			assert_int_equal(x->ftime[0].ns, 100000);
			break;
		default:
			assert_stack(x, in_target, 2);
			assert_int_equal(x->stack[0].call_site, caller + 8);
			assert_int_equal(x->nr_ftime, 1);
			assert_int_equal(x->ftime[0].func, target);
			assert_int_equal(x->ftime[0].ns, 100000);
			break;
		}
	}
	assert_int_equal(jumps, 2);
	auxcap_decode_close(d);
}

static void test_errors(void **state)
{
	struct auxcap_decode_opts o = { .sz = sizeof(o) };
	struct auxcap_decode *d = NULL;
	char path[300], err[256];
	struct cb *b;
	FILE *f;

	(void)state;
	o.errbuf = err;
	o.errlen = sizeof(err);
	path_of(path, sizeof(path), "none.data");
	assert_int_equal(auxcap_decode_open(path, &o, &d), -ENOENT);
	assert_non_null(strstr(err, "none.data"));

	/* not a perf.data file */
	path_of(path, sizeof(path), "junk.data");
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("this is not a capture\n", f);
	fclose(f);
	assert_int_equal(auxcap_decode_open(path, &o, &d), -EBADMSG);

	/* a capture without trace */
	b = start("empty.data", path, sizeof(path), true);
	cb_sample(b, 1, 0x14, 3, 3, 900, 0, 1);
	assert_int_equal(cb_close(b), 0);
	assert_int_equal(auxcap_decode_open(path, &o, &d), -ENODATA);
	assert_non_null(strstr(err, "no AUX trace"));

	o.last_branches = AUXCAP_DECODE_MAX_BRANCHES + 1;
	assert_int_equal(auxcap_decode_open(path, &o, &d), -EINVAL);
	assert_null(d);
}

/* A capture of counter samples without an AUX event (a plain 'record -- prog') opens: its
 * stream is the samples, without context, and the side-band; one without samples either does
 * not. */
static void test_samples_only(void **state)
{
	struct auxcap_decode_opts o = { .sz = sizeof(o) };
	const struct auxcap_decode_event *ev;
	const struct auxcap_decode_info *info;
	struct auxcap_decode *d = NULL;
	uint64_t ips[3] = { 0x1010, 0x1020, 0x1030 };
	size_t n = 0, comms = 0;
	char path[300], err[256] = "";
	struct cb *b;
	int r;

	(void)state;
	o.errbuf = err;
	o.errlen = sizeof(err);
	path_of(path, sizeof(path), "samples_only.data");
	b = cb_open(path, "task-clock", PERF_TYPE_SOFTWARE); /* evsel 0: no AUX PMU either */
	assert_non_null(b);
	cb_comm(b, 3, 3, "prog", true, 100, 0);
	for (int i = 0; i < 3; i++)
		cb_sample(b, 1, ips[i], 3, 3, 200 + 100 * (uint64_t)i, 0, 1);
	assert_int_equal(cb_close(b), 0);
	r = auxcap_decode_open(path, &o, &d);
	if (r < 0)
		fail_msg("%s", err);
	info = auxcap_decode_get_info(d);
	assert_null(info->backend);
	assert_int_equal(info->nr_queues, 0);
	while ((r = auxcap_decode_next(d, &ev)) == 1) {
		if (ev->kind == AUXCAP_DECODE_SIDEBAND && ev->rec->type == PERF_RECORD_COMM)
			comms++;
		if (ev->kind != AUXCAP_DECODE_SAMPLE)
			continue;
		assert_true(n < 3);
		assert_int_equal(ev->rec->u.sample.ip, ips[n]);
		assert_int_equal(ev->time, 200 + 100 * n);
		assert_int_equal(ev->tid, 3);
		assert_null(ev->ctx);
		n++;
	}
	assert_int_equal(r, 0);
	assert_int_equal(n, 3);
	assert_int_equal(comms, 1);
	assert_int_equal(info->samples, 3);
	assert_int_equal(info->trace_events, 0);
	auxcap_decode_close(d);

	/* side-band alone: nothing to decode */
	path_of(path, sizeof(path), "sideband_only.data");
	b = cb_open(path, "task-clock", PERF_TYPE_SOFTWARE);
	assert_non_null(b);
	cb_comm(b, 3, 3, "prog", true, 100, 0);
	assert_int_equal(cb_close(b), 0);
	assert_int_equal(auxcap_decode_open(path, &o, &d), -ENODATA);
	assert_non_null(strstr(err, "no AUX trace"));
}

static bool g_batch;

static int setup(void **state)
{
	(void)state;
	snprintf(g_dir, sizeof(g_dir), "/tmp/auxcap-decode-XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	return auxcap_backend_register(g_batch ? &toy_batch_backend_ops : &toy_backend_ops);
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* auxcap_decode_filter_match(): each list given must hold the event's thread; losses pass. */
static void test_filter_match(void **state)
{
	int32_t pids[] = { 10, 20 }, tids[] = { 21 };
	const char *comms[] = { "make", "cc1" };
	struct auxcap_decode_filter f = { 0 };
	struct auxcap_decode_event ev = { .kind = AUXCAP_DECODE_TRACE, .pid = 20, .tid = 21,
					   .comm = "cc1" };

	(void)state;
	assert_true(auxcap_decode_filter_match(NULL, &ev));
	assert_true(auxcap_decode_filter_match(&f, &ev)); /* no list: any */
	f.pids = pids;
	f.nr_pids = 2;
	assert_true(auxcap_decode_filter_match(&f, &ev));
	ev.pid = 30;
	assert_false(auxcap_decode_filter_match(&f, &ev));
	ev.pid = -1; /* no known process */
	assert_false(auxcap_decode_filter_match(&f, &ev));
	ev.kind = AUXCAP_DECODE_LOSS; /* losses always */
	assert_true(auxcap_decode_filter_match(&f, &ev));
	ev.kind = AUXCAP_DECODE_SAMPLE;
	ev.pid = 10;
	f.tids = tids;
	f.nr_tids = 1;
	assert_true(auxcap_decode_filter_match(&f, &ev)); /* pid 10 and tid 21 */
	ev.tid = 22;
	assert_false(auxcap_decode_filter_match(&f, &ev)); /* both lists must hold it */
	f.nr_pids = f.nr_tids = 0;
	f.comms = comms;
	f.nr_comms = 2;
	assert_true(auxcap_decode_filter_match(&f, &ev));
	ev.comm = "ld";
	assert_false(auxcap_decode_filter_match(&f, &ev));
	ev.comm = NULL;
	assert_false(auxcap_decode_filter_match(&f, &ev));

	/* --event: samples of the events named (with modifiers too), other kinds untouched */
	{
		const char *events[] = { "cycles", "sched:sched_switch" };
		struct auxcap_perf_evsel es = { .name = "cycles:u" };

		f.nr_comms = 0;
		f.events = events;
		f.nr_events = 2;
		ev.kind = AUXCAP_DECODE_SAMPLE;
		ev.evsel = &es;
		assert_true(auxcap_decode_filter_match(&f, &ev));
		es.name = "sched:sched_switch";
		assert_true(auxcap_decode_filter_match(&f, &ev));
		es.name = "cycles-ct"; /* not "cycles" with modifiers */
		assert_false(auxcap_decode_filter_match(&f, &ev));
		es.name = "cycles:x";
		assert_false(auxcap_decode_filter_match(&f, &ev));
		es.name = NULL;
		assert_false(auxcap_decode_filter_match(&f, &ev));
		ev.kind = AUXCAP_DECODE_TRACE; /* not a sample: kept */
		assert_true(auxcap_decode_filter_match(&f, &ev));
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_conv),	cmocka_unit_test(test_interpolation),
		cmocka_unit_test(test_interpolation_random), cmocka_unit_test(test_unused_fields),
		cmocka_unit_test(test_merge),		cmocka_unit_test(test_sample_context),
		cmocka_unit_test(test_function_time_many),
		cmocka_unit_test(test_sample_in_syscall),	cmocka_unit_test(test_sample_in_open_run),
		cmocka_unit_test(test_sample_at_timestamp),
		cmocka_unit_test(test_wrapped_timestamp), cmocka_unit_test(test_spe_truncated),
		cmocka_unit_test(test_gaps_and_losses), cmocka_unit_test(test_timeless),
		cmocka_unit_test(test_long_run), cmocka_unit_test(test_exec_maps_by_time),
		cmocka_unit_test(test_exec_clamps_run), cmocka_unit_test(test_tail_call),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_samples_only),
		cmocka_unit_test(test_filter_match),
	};

	g_batch = argc > 1 && !strcmp(argv[1], "--batch");
	if (g_batch)
		return cmocka_run_group_tests_name("decode/stage --batch", tests, setup, teardown);
	return cmocka_run_group_tests_name("decode/stage", tests, setup, teardown);
}
