/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the decode stage (decode/: session, queues, side-band, merge, per-sample
 * context, the four writers, the report) on a whole perf.data file.
 *
 * The input is a capture (a memfd, opened by its /proc/self/fd path).  The code of the loop
 * in tests/decode/loop_code.h is added at LOOP_CODE_ADDR as raw code for any process, so an
 * Intel PT capture of that loop (the seeds made by the decode_merge bench) decodes whole
 * wherever the fuzzer runs; other captures name binaries that are missing here (their trace
 * decodes to gaps).  Every event of the merged stream is read through and fed to the text
 * (branches, calls, instructions, side-band, per-function time), JSON, Perfetto and folded
 * writers (to /dev/null), to the report and to the annotation; then the packet dump runs.
 *
 * Checked (auxcap/decode.h): events come in time order; a sample's context has at most
 * last_branches branches, newest first, and its counts agree with the session's counters;
 * the counters equal the events delivered (trace events, gaps, samples, losses); stack depths
 * and changes are consistent; the annotation's instruction counts add up.  An odd-sized input
 * is decoded per instruction (opts.per_insn).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "auxcap/decode.h"
#include "auxcap/decode_annotate.h"
#include "auxcap/decode_out.h"
#include "auxcap/decode_report.h"
#include "fuzz.h"
#include "loop_code.h"

#define MAX_EVENTS 200000 /* bound per input; only caps time */
#define LAST_BRANCHES 16

static int g_in = -1, g_code = -1;
static char g_in_path[64], g_code_path[64];
static FILE *g_null;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	g_in = memfd_create("fuzz-decode", MFD_CLOEXEC);
	g_code = memfd_create("fuzz-decode-code", MFD_CLOEXEC);
	g_null = fopen("/dev/null", "w");
	if (g_in < 0 || g_code < 0 || !g_null ||
	    write(g_code, auxcap_loop_code, sizeof(auxcap_loop_code)) !=
		    (ssize_t)sizeof(auxcap_loop_code)) {
		perror("fuzz-decode set-up");
		abort();
	}
	snprintf(g_in_path, sizeof(g_in_path), "/proc/self/fd/%d", g_in);
	snprintf(g_code_path, sizeof(g_code_path), "/proc/self/fd/%d", g_code);
	return 0;
}

struct counts {
	uint64_t trace, gaps, samples, aligned, traced, losses;
};

static void check_event(const struct auxcap_decode_event *ev, struct counts *c)
{
	fuzz_strlen(ev->comm);
	switch (ev->kind) {
	case AUXCAP_DECODE_TRACE:
		FUZZ_CHECK(ev->trace);
		fuzz_touch(ev->trace, sizeof(*ev->trace));
		FUZZ_CHECK(ev->queue >= 0);
		c->trace++;
		if (ev->trace->kind == AUXCAP_TRACE_GAP) {
			c->gaps++;
			fuzz_strlen(ev->trace->what);
		}
		/* a push leaves at least that frame */
		FUZZ_CHECK(!ev->stack.pushed || ev->stack.depth >= 1);
		break;
	case AUXCAP_DECODE_SAMPLE: {
		const struct auxcap_decode_sample_ctx *x = ev->ctx;

		FUZZ_CHECK(ev->rec);
		c->samples++;
		if (!x)
			break;
		c->traced++;
		c->aligned += x->aligned;
		FUZZ_CHECK(x->nr_branches <= LAST_BRANCHES);
		FUZZ_CHECK(x->window_lo <= x->window_hi);
		fuzz_touch(x->stack, x->nr_stack * sizeof(*x->stack));
		fuzz_touch(x->branches, x->nr_branches * sizeof(*x->branches));
		fuzz_touch(x->ftime, x->nr_ftime * sizeof(*x->ftime));
		for (size_t i = 1; i < x->nr_branches; i++)
			FUZZ_CHECK(x->branches[i].time <= x->branches[i - 1].time);
		for (size_t i = 1; i < x->nr_ftime; i++)
			FUZZ_CHECK(x->ftime[i].ns <= x->ftime[i - 1].ns);
		break;
	}
	case AUXCAP_DECODE_LOSS:
		FUZZ_CHECK(ev->loss);
		fuzz_strlen(ev->loss);
		FUZZ_CHECK(ev->rec || ev->auxtrace_error);
		c->losses++;
		break;
	case AUXCAP_DECODE_SIDEBAND:
		FUZZ_CHECK(ev->rec);
		break;
	default:
		FUZZ_CHECK(!"an event of no documented kind");
	}
}

static int dump_line(void *arg, const char *line)
{
	(void)arg;
	fuzz_strlen(line);
	return 0;
}

/* The report's memory figures add up: levels to the accesses, sources, functions and lines
 * (with the accesses to lines not kept) to no more than them; every line's variable can be looked up. */
static void check_mem(struct auxcap_decode *d, const struct auxcap_report *rep)
{
	const struct auxcap_report_mem *m = auxcap_report_get_mem(rep);
	uint64_t lv = 0, fa = 0, la = auxcap_report_mem_lines_untracked(rep), oa;

	for (int k = 0; k < AUXCAP_REPORT_MEM_LEVELS; k++)
		lv += m->level[k];
	FUZZ_CHECK(lv == m->accesses && m->loads + m->stores >= m->accesses);
	/* the accesses by data source: no more than all, none longer than the longest */
	{
		const struct auxcap_report_mem_sources *src = auxcap_report_get_mem_sources(rep);
		uint64_t sa = 0;

		for (int k = 0; k < AUXCAP_TRACE_SRC_COUNT; k++) {
			sa += src->accesses[k];
			FUZZ_CHECK(src->lat_max[k] <= m->lat_max);
		}
		FUZZ_CHECK(sa <= m->accesses);
	}
	for (size_t i = 0; i < auxcap_report_nr_mem_funcs(rep); i++)
		fa += auxcap_report_get_mem_func(rep, i)->m.accesses;
	FUZZ_CHECK(fa <= m->accesses);
	for (size_t i = 0; i < auxcap_report_nr_mem_lines(rep); i++) {
		const struct auxcap_report_mem_line *l = auxcap_report_get_mem_line(rep, i);
		const char *name;
		uint64_t off;

		la += l->m.accesses;
		FUZZ_CHECK(l->addr % AUXCAP_REPORT_LINE_SIZE == 0 && l->nr_funcs <= 4);
		if (auxcap_decode_data_symbolize_at(d, l->pid, l->addr, l->time, &name, &off, NULL))
			fuzz_strlen(name);
	}
	FUZZ_CHECK(la <= m->accesses);
	/* every access with an address is in an object, or counted untracked; as many as in lines */
	oa = auxcap_report_mem_objects_untracked(rep);
	for (size_t i = 0; i < auxcap_report_nr_mem_objects(rep); i++) {
		const struct auxcap_report_mem_object *o = auxcap_report_get_mem_object(rep, i);
		uint64_t fsum = o->use.other_funcs;

		oa += o->use.m.accesses;
		for (size_t k = 0; k < o->use.nr_funcs; k++)
			fsum += o->use.funcs[k].accesses;
		FUZZ_CHECK(fsum == o->use.m.accesses && o->use.nr_funcs <= 4);
		FUZZ_CHECK(o->kind == AUXCAP_REPORT_MEM_OBJ_UNKNOWN ? !o->name : !!o->name);
		if (o->name)
			fuzz_strlen(o->name);
	}
	FUZZ_CHECK(oa == la);
}

static void run(bool per_insn)
{
	static const struct auxcap_out_opts fmts[] = {
		{ .format = AUXCAP_OUT_TEXT, .branches = true, .insns = true, .calls = true,
		  .sideband = true, .func_time = true, .inlines = true },
		{ .format = AUXCAP_OUT_JSON, .branches = true, .insns = true, .inlines = true },
		{ .format = AUXCAP_OUT_PERFETTO },
		{ .format = AUXCAP_OUT_FOLDED, .inlines = true },
	};
	struct auxcap_decode_code code = { g_code_path, true, true, LOOP_CODE_ADDR };
	struct auxcap_out *w[sizeof(fmts) / sizeof(fmts[0])] = { 0 };
	struct auxcap_report_opts ro = { .sz = sizeof(ro) };
	struct auxcap_decode_opts o = { .sz = sizeof(o) };
	const struct auxcap_decode_event *ev;
	const struct auxcap_decode_info *info;
	struct auxcap_report *rep = NULL;
	struct auxcap_annotate *an = NULL;
	const struct auxcap_annotate_summary *as;
	struct auxcap_decode *d = NULL;
	struct counts c = { 0 };
	uint64_t n = 0, last = 0;
	char errbuf[256] = "";
	int r;

	o.code = &code;
	o.nr_code = 1;
	o.per_insn = per_insn;
	o.last_branches = LAST_BRANCHES;
	o.errbuf = errbuf;
	o.errlen = sizeof(errbuf);
	o.name = "fuzz-input";
	r = auxcap_decode_open(g_in_path, &o, &d);
	if (r < 0) {
		FUZZ_CHECK(!d);
		FUZZ_CHECK(memchr(errbuf, 0, sizeof(errbuf)));
		return;
	}
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		struct auxcap_out_opts oo = fmts[i];

		oo.sz = sizeof(oo);
		FUZZ_CHECK(auxcap_out_new(g_null, d, &oo, &w[i]) == 0);
	}
	ro.mem = true;
	FUZZ_CHECK(auxcap_report_new(d, &ro, &rep) == 0);
	r = auxcap_annotate_new(d, NULL, &an);
	FUZZ_CHECK(r == 0 || r == -EOPNOTSUPP);
	while (n < MAX_EVENTS && (r = auxcap_decode_next(d, &ev)) == 1) {
		FUZZ_CHECK(ev);
		/* one stream ordered by perf time */
		FUZZ_CHECK(n == 0 || ev->time >= last);
		last = ev->time;
		check_event(ev, &c);
		for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
			FUZZ_CHECK(auxcap_out_event(w[i], ev) == 0);
		FUZZ_CHECK(auxcap_report_event(rep, ev) == 0);
		FUZZ_CHECK(!an || auxcap_annotate_event(an, ev) == 0);
		n++;
	}
	if (n < MAX_EVENTS) {
		FUZZ_CHECK(r <= 0);
		fuzz_strlen(auxcap_decode_error(d));
	}
	info = auxcap_decode_get_info(d);
	FUZZ_CHECK(info->trace_events == c.trace && info->gaps == c.gaps);
	FUZZ_CHECK(info->samples == c.samples && info->samples_traced == c.traced &&
		   info->samples_aligned == c.aligned && info->losses == c.losses);
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		FUZZ_CHECK(auxcap_out_finish(w[i]) == 0);
		auxcap_out_free(w[i]);
	}
	FUZZ_CHECK(auxcap_report_finish(rep) == 0);
	for (size_t i = 0; i < auxcap_report_nr_funcs(rep); i++)
		FUZZ_CHECK(auxcap_report_get_func(rep, i));
	check_mem(d, rep);
	auxcap_report_free(rep);
	/* annotate: its figures add up, every function's instructions can be listed */
	if (an) {
		FUZZ_CHECK(auxcap_annotate_finish(an) == 0);
		as = auxcap_annotate_get_summary(an);
		FUZZ_CHECK(as->insns == as->insns_placed + as->insns_nosym + as->insns_unplaced);
		for (size_t i = 0; i < auxcap_annotate_nr_funcs(an); i++) {
			const struct auxcap_annotate_insn *in;
			size_t ni;

			r = auxcap_annotate_insns(an, i, &in, &ni);
			FUZZ_CHECK(r == 0 || r == -ENOENT);
		}
		auxcap_annotate_free(an);
	}
	for (size_t i = 0; i < info->nr_queues; i++)
		FUZZ_CHECK(auxcap_decode_get_queue(d, i));
	FUZZ_CHECK(!auxcap_decode_get_queue(d, info->nr_queues));
	(void)auxcap_decode_dump(d, dump_line, NULL);
	auxcap_decode_close(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (ftruncate(g_in, 0) < 0 || pwrite(g_in, data, size, 0) != (ssize_t)size)
		abort();
	run(size & 1);
	return 0;
}
