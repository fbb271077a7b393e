/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-instruction counts (decode/annotate.c, auxcap/decode_annotate.h) on captures of the toy
 * backend whose trace runs a function of this very program, an_loop below, mapped from its
 * own file at its own address: every event is written by the test, so each count follows by
 * hand from the flow and the code.
 *
 *   an_loop:  +0  xor eax, eax      (2 bytes)
 *             +2  add eax, 1        (3)
 *             +5  cmp eax, 10       (3)
 *             +8  jne +2            (2)
 *             +10 ret               (1)
 *
 * Thread 9 (branches, as Intel PT without per-instruction output):
 *   ENABLE at +0; jne taken 9 times (the first run from +0: 4 instructions, then 3 each);
 *   the 10th time falls through to ret (4 instructions), which returns to +0; a jne from +0
 *   with a wrong count (7: the code does not match, not counted); a GAP; a jne taken (3
 *   instructions from an unknown place after the gap: the jne itself counts, the 2 before
 *   it are not placed); DISABLE at the jne (3 instructions from +2).
 * Thread 10 (per-instruction events): INSN at +0, +2, +5, +8 and the jne's BRANCH.
 * Samples: one at +5 (thread 9), one in the kernel.
 * Process 11 maps the same file elsewhere and runs the loop once more (ENABLE, one jne, DISABLE),
 * then the xor and the add until an interrupt stops tracing at the cmp (DISABLE names it).
 * Coverage: the API over this program's own line tables.
 */
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
#include "auxcap/decode_annotate.h"
#include "capture_builder.h"
#include "toy_backend.h"
#include "util.h"

__asm__(".text\n"
	".globl auxcap_test_an_loop\n"
	".type auxcap_test_an_loop, @function\n"
	"auxcap_test_an_loop:\n"
	"	xorl %eax, %eax\n"
	"1:	addl $1, %eax\n"
	"	cmpl $10, %eax\n"
	"	jne 1b\n"
	"	ret\n"
	".size auxcap_test_an_loop, .-auxcap_test_an_loop\n");
void auxcap_test_an_loop(void);

static char g_dir[256];

/* The mapping of this program's file that holds @addr: start, end, offset, path. */
static void self_map(uint64_t addr, uint64_t *start, uint64_t *end, uint64_t *pgoff, char *path,
		     size_t n)
{
	char line[1024];
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &s, &e, &off, &pos) < 3 || !pos)
			continue;
		if (addr < s || addr >= e)
			continue;
		*start = s;
		*end = e;
		*pgoff = off;
		snprintf(path, n, "%s", line + pos);
		path[strcspn(path, "\n")] = '\0';
		fclose(f);
		return;
	}
	fclose(f);
	fail_msg("no mapping holds 0x%" PRIx64, addr);
}

/* Where process 11 (with @second) has the same file: elsewhere, as ASLR puts a library. */
#define SHIFT 0x10000000ull

static struct auxcap_decode *capture(uint64_t *ret_fn, bool second)
{
	const uint64_t F = (uint64_t)(uintptr_t)&auxcap_test_an_loop;
	struct auxcap_decode_opts o = { .sz = sizeof(o) };
	struct auxcap_perf_time_conv tc = { 0 };
	struct auxcap_decode *d = NULL;
	uint64_t start = 0, end = 0, pgoff = 0;
	char path[300], self[512], err[256] = "";
	struct toy_rec t9[20], t10[5];
	size_t n = 0;
	struct cb *b;

	self_map(F, &start, &end, &pgoff, self, sizeof(self));
	snprintf(path, sizeof(path), "%s/annotate.data", g_dir);
	b = cb_open(path, "toy_trace//", TOY_ATTR_TYPE);
	assert_non_null(b);
	tc.time_mult = 1;
	tc.cap_user_time_zero = true;
	cb_time_conv(b, &tc);
	cb_auxtrace_info(b, TOY_TYPE, NULL, 0);
	cb_comm(b, 9, 9, "an", true, 100, 0);
	cb_mmap2(b, 9, 9, start, end - start, pgoff, 5, self, 200, 0);
	cb_itrace_start(b, 9, 9, 300, 0);
	cb_itrace_start(b, 9, 10, 310, 0);
	cb_sample(b, 1, F + 5, 9, 9, 1500, 0, 1);
	cb_sample(b, 1, 0xffffffff81000000ull, 9, 9, 1600, 0, 1);

	t9[n++] = rec(1000, AUXCAP_TRACE_ENABLE, 0, F, 0, 0);
	t9[n++] = rec(1100, AUXCAP_TRACE_BRANCH, AUXCAP_BR_COND, F + 8, F + 2, 4);
	for (int i = 0; i < 8; i++)
		t9[n++] = rec(1200 + 10 * (uint64_t)i, AUXCAP_TRACE_BRANCH, AUXCAP_BR_COND, F + 8,
			      F + 2, 3);
	t9[n++] = rec(1400, AUXCAP_TRACE_BRANCH, AUXCAP_BR_RETURN, F + 10, F, 4);
	t9[n++] = rec(2000, AUXCAP_TRACE_BRANCH, AUXCAP_BR_COND, F + 8, F + 2, 7); /* bad */
	t9[n++] = rec(2100, AUXCAP_TRACE_GAP, 0, 0, 0, 0);
	t9[n++] = rec(2200, AUXCAP_TRACE_BRANCH, AUXCAP_BR_COND, F + 8, F + 2, 3);
	t9[n++] = rec(2300, AUXCAP_TRACE_DISABLE, 0, F + 8, 0, 3);
	cb_auxtrace(b, t9, n * sizeof(t9[0]), 0, 0, 9, (uint32_t)-1);

	t10[0] = rec(3000, AUXCAP_TRACE_INSN, 0, F, F, 1);
	t10[1] = rec(3001, AUXCAP_TRACE_INSN, 0, F + 2, F + 2, 1);
	t10[2] = rec(3002, AUXCAP_TRACE_INSN, 0, F + 5, F + 5, 1);
	t10[3] = rec(3003, AUXCAP_TRACE_INSN, 0, F + 8, F + 8, 1);
	t10[4] = rec(3004, AUXCAP_TRACE_BRANCH, AUXCAP_BR_COND, F + 8, F + 2, 1);
	cb_auxtrace(b, t10, sizeof(t10), 0, 1, 10, (uint32_t)-1);
	if (second) {
		struct toy_rec t11[5] = {
			rec(4000, AUXCAP_TRACE_ENABLE, 0, F + SHIFT, 0, 0),
			rec(4100, AUXCAP_TRACE_BRANCH, AUXCAP_BR_COND, F + SHIFT + 8, F + SHIFT + 2,
			    4),
			rec(4200, AUXCAP_TRACE_DISABLE, 0, F + SHIFT + 8, 0, 3),
			/* stopped by an interrupt before the cmp: it names the cmp, not run */
			rec(4300, AUXCAP_TRACE_ENABLE, 0, F + SHIFT, 0, 0),
			rec(4400, AUXCAP_TRACE_DISABLE, 0, F + SHIFT + 5, 0, 2),
		};

		cb_comm(b, 11, 11, "an2", true, 3500, 0);
		cb_mmap2(b, 11, 11, start + SHIFT, end - start, pgoff, 5, self, 3600, 0);
		cb_itrace_start(b, 11, 11, 3700, 0);
		cb_auxtrace(b, t11, sizeof(t11), 0, 2, 11, (uint32_t)-1);
	}
	assert_int_equal(cb_close(b), 0);

	o.errbuf = err;
	o.errlen = sizeof(err);
	if (auxcap_decode_open(path, &o, &d) < 0)
		fail_msg("auxcap_decode_open(%s): %s", path, err);
	*ret_fn = F;
	return d;
}

/* The annotation of capture(@second) with @o, and its session in *@ret_d; skips the test in a
 * build without capstone. */
static struct auxcap_annotate *annotate(bool second, const struct auxcap_annotate_opts *o,
					uint64_t *ret_fn, struct auxcap_decode **ret_d)
{
	struct auxcap_annotate *a = NULL;
	struct auxcap_decode *d = capture(ret_fn, second);
	int r = auxcap_annotate_run(d, o, &a);

	if (r == -EOPNOTSUPP) {
		auxcap_decode_close(d);
		skip(); /* built without capstone */
	}
	assert_int_equal(r, 0);
	*ret_d = d;
	return a;
}

static void test_counts(void **state)
{
	static const struct {
		uint32_t off;
		uint8_t size;
		const char *text; /* its start */
		bool branch;
		uint64_t execs, taken, samples;
	} want[] = {
		{ 0, 2, "xor eax, eax", false, 1 + 1, 0, 0 },
		{ 2, 3, "add eax, 1", false, 11 + 1, 0, 0 },
		{ 5, 3, "cmp eax, 0xa", false, 11 + 1, 0, 1 },
		{ 8, 2, "jne ", true, 12 + 1, 11 + 1, 0 },
		{ 10, 1, "ret", true, 1, 1, 0 },
	};
	const struct auxcap_annotate_summary *s;
	const struct auxcap_annotate_func *f = NULL;
	const struct auxcap_annotate_insn *in;
	struct auxcap_decode *d;
	size_t n, i, clk = 1; /* cpu-clock: evsel 1 */
	uint64_t F;
	struct auxcap_annotate *a = annotate(false, NULL, &F, &d);

	(void)state;
	s = auxcap_annotate_get_summary(a);
	/* thread 9: 4 + 8 * 3 + 4 placed, 7 (bad) not, 1 of the 3 after the gap, 3 placed at
	 * the DISABLE; thread 10: its 4 INSN events (its branch's count is theirs) */
	assert_int_equal(s->insns, 4 + 24 + 4 + 7 + 3 + 3 + 4);
	assert_int_equal(s->insns_placed, 4 + 24 + 4 + 1 + 3 + 4);
	assert_int_equal(s->insns_unplaced, 7 + 2);
	assert_int_equal(s->insns_nosym, 0);
	assert_int_equal(s->insns, s->insns_placed + s->insns_unplaced + s->insns_nosym);
	/* [+0,+8] x4, [+2,+8] x3, [+2,+10] x4, [+0,+8] x7, [+2,+8] x3 where tracing stopped,
	 * and [+0], [+2], [+5], [+8] x1: thread 10's instructions and (the last) thread 9's jne
	 * after the gap */
	assert_int_equal(s->stretches, 9);
	assert_int_equal(s->stretches_bad, 1);
	assert_int_equal(s->nr_slots, auxcap_decode_nr_evsels(d) + 1);
	assert_int_equal(s->slot_samples[clk], 2);
	assert_int_equal(s->slot_placed[clk], 1); /* the kernel one is not annotated */

	for (i = 0; i < auxcap_annotate_nr_funcs(a); i++)
		if (!strcmp(auxcap_annotate_get_func(a, i)->name, "auxcap_test_an_loop"))
			f = auxcap_annotate_get_func(a, i);
	assert_non_null(f);
	assert_int_equal(auxcap_annotate_nr_funcs(a), 1);
	assert_int_equal(f->addr, F);
	assert_int_equal(f->size, 11);
	assert_int_equal(f->pid, 9);
	assert_int_equal(f->insns, s->insns_placed);
	assert_int_equal(f->taken, 11 + 1 + 1);
	assert_int_equal(f->samples[clk], 1);
	assert_int_equal(f->samples_sum, 1);

	assert_int_equal(auxcap_annotate_insns(a, 0, &in, &n), 0);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < n; i++) {
		assert_int_equal(in[i].offset, want[i].off);
		assert_int_equal(in[i].addr, F + want[i].off);
		assert_int_equal(in[i].size, want[i].size);
		assert_true(in[i].valid);
		assert_true(!strncmp(in[i].text, want[i].text, strlen(want[i].text)));
		assert_int_equal(in[i].branch, want[i].branch);
		assert_int_equal(in[i].execs, want[i].execs);
		assert_int_equal(in[i].taken, want[i].taken);
		assert_int_equal(in[i].samples ? in[i].samples[clk] : 0, want[i].samples);
	}
	auxcap_annotate_free(a);
	auxcap_decode_close(d);
}

struct rows {
	size_t n, ran;
	size_t funcs;
};

static int count_row(void *arg, const char *file, const char *dir, unsigned int line,
		     uint64_t execs)
{
	struct rows *r = arg;

	(void)dir;
	assert_non_null(file);
	assert_true(line > 0);
	r->n++;
	r->ran += execs != 0;
	return 0;
}

static int count_func(void *arg, const char *name, const char *file, const char *dir,
		      unsigned int line, uint64_t execs)
{
	struct rows *r = arg;

	(void)dir;
	assert_non_null(name);
	assert_non_null(file);
	assert_true(line > 0);
	assert_int_equal(execs, 0); /* only the function without lines (asm) ran */
	r->funcs++;
	return 0;
}

static int stop_row(void *arg, const char *file, const char *dir, unsigned int line,
		    uint64_t execs)
{
	(void)arg;
	(void)file;
	(void)dir;
	(void)line;
	(void)execs;
	return -EINTR;
}

/* Coverage of this program's file: its line tables (built with -g), nothing of them ran (the
 * function that ran is asm without lines); a callback's error stops it; another file is not
 * counted. */
static void test_coverage(void **state)
{
	struct rows rows = { 0 };
	struct auxcap_decode *d;
	const char *dso;
	uint64_t F;
	struct auxcap_annotate *a = annotate(false, NULL, &F, &d);
	int r;

	(void)state;
	dso = auxcap_annotate_get_func(a, 0)->dso;
	r = auxcap_annotate_coverage(a, dso, count_row, count_func, &rows);
	if (r == -ENODATA) { /* built without -g or without libdw */
		auxcap_annotate_free(a);
		auxcap_decode_close(d);
		skip();
	}
	assert_int_equal(r, 0);
	assert_true(rows.n > 10);
	assert_int_equal(rows.ran, 0);
	assert_true(rows.funcs > 3);
	assert_int_equal(auxcap_annotate_coverage(a, dso, stop_row, NULL, NULL), -EINTR);
	assert_int_equal(auxcap_annotate_coverage(a, "/no/such.so", count_row, NULL, &rows),
			 -ENOENT);
	assert_int_equal(auxcap_annotate_coverage(a, NULL, count_row, NULL, &rows), -EINVAL);
	auxcap_annotate_free(a);
	auxcap_decode_close(d);
}

/* The same function run by a second process that has its file at another address: one
 * function, counted at its offsets in each (the second process's addresses are not the first's). */
static void test_two_processes(void **state)
{
	static const uint64_t want[] = { 2 + 2, 12 + 3, 12 + 2, 13 + 2, 1 };
	const struct auxcap_annotate_func *f;
	const struct auxcap_annotate_insn *in;
	struct auxcap_decode *d;
	size_t n;
	uint64_t F;
	struct auxcap_annotate *a = annotate(true, NULL, &F, &d);

	(void)state;
	assert_int_equal(auxcap_annotate_nr_funcs(a), 1);
	/* its address in one of the processes, and that process */
	f = auxcap_annotate_get_func(a, 0);
	assert_true((f->addr == F && f->pid == 9) || (f->addr == F + SHIFT && f->pid == 11));
	assert_int_equal(auxcap_annotate_get_summary(a)->insns_unplaced, 7 + 2);
	assert_int_equal(auxcap_annotate_insns(a, 0, &in, &n), 0);
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(in[i].execs, want[i]);
	assert_int_equal(in[3].taken, 12 + 1);
	auxcap_annotate_free(a);
	auxcap_decode_close(d);
}

/* Only thread 10 (the filter): its INSN events alone. */
static void test_filter(void **state)
{
	const int32_t tids[] = { 10 };
	struct auxcap_decode_filter flt = { .tids = tids, .nr_tids = 1 };
	struct auxcap_annotate_opts o = { .sz = sizeof(o), .filter = &flt };
	const struct auxcap_annotate_summary *s;
	const struct auxcap_annotate_insn *in;
	struct auxcap_decode *d;
	size_t n;
	uint64_t F;
	struct auxcap_annotate *a = annotate(false, &o, &F, &d);

	(void)state;
	s = auxcap_annotate_get_summary(a);
	assert_int_equal(s->insns, 4);
	assert_int_equal(s->insns_placed, 4);
	assert_int_equal(s->slot_samples[1], 0);
	assert_int_equal(auxcap_annotate_nr_funcs(a), 1);
	assert_int_equal(auxcap_annotate_insns(a, 0, &in, &n), 0);
	assert_int_equal(n, 5);
	assert_int_equal(in[3].execs, 1);
	assert_int_equal(in[3].taken, 1);
	assert_int_equal(in[4].execs, 0);
	auxcap_annotate_free(a);
	auxcap_decode_close(d);
}

static void test_bad_arguments(void **state)
{
	struct auxcap_annotate_opts small = { .sz = 1 };
	const struct auxcap_annotate_insn *in;
	struct auxcap_annotate *a = NULL;
	struct auxcap_decode_event ev = { .kind = AUXCAP_DECODE_SIDEBAND };
	size_t n;
	uint64_t F;
	struct auxcap_decode *d = capture(&F, false);

	(void)state;
	assert_int_equal(auxcap_annotate_new(NULL, NULL, &a), -EINVAL);
	assert_int_equal(auxcap_annotate_new(d, NULL, NULL), -EINVAL);
	assert_int_equal(auxcap_annotate_new(d, &small, &a), -EINVAL);
	if (auxcap_annotate_new(d, NULL, &a) == -EOPNOTSUPP) {
		auxcap_decode_close(d);
		skip();
	}
	assert_int_equal(auxcap_annotate_nr_funcs(a), 0); /* before finish */
	assert_int_equal(auxcap_annotate_insns(a, 0, &in, &n), -EINVAL);
	assert_int_equal(auxcap_annotate_event(a, NULL), -EINVAL);
	assert_int_equal(auxcap_annotate_finish(a), 0);
	assert_int_equal(auxcap_annotate_finish(a), -EINVAL);
	assert_int_equal(auxcap_annotate_event(a, &ev), -EINVAL);
	assert_null(auxcap_annotate_get_func(a, 0));
	auxcap_annotate_free(a);
	auxcap_annotate_free(NULL);
	auxcap_decode_close(d);
}

static int setup(void **state)
{
	(void)state;
	if (test_tmpdir(g_dir, sizeof(g_dir), "annotate") < 0)
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
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_two_processes),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_coverage),
		cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests_name("decode/annotate", tests, setup, teardown);
}
