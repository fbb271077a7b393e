/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap report FILE: the summary a user reads first.  The decode stage (auxcap/decode.h)
 * gives the merged stream, the report's aggregation (auxcap/decode_report.h) counts it; this
 * file parses options and prints: text (default) or one JSON object (docs/report-json.md).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxcap/decode.h"
#include "auxcap/decode_out.h"
#include "auxcap/decode_report.h"
#include "auxcap/perf_data.h"
#include "auxcap/session.h"
#include "cli.h"
#include "progress.h"

#define TOP_DEFAULT 20
#define GRAPH_LINES 10 /* --call-graph: callers and callees shown per function */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: auxcap report FILE [options]\n"
		"\n"
		"Summarize a capture: what was recorded, time span, CPUs and threads, the functions\n"
		"that took the trace's time (self and total, from the call stacks the trace gives),\n"
		"the functions of the counter samples, and every loss and decode gap.\n"
		"\n"
		"  --format FMT           text (default) or json (one object, docs/report-json.md)\n"
		"  -o, --output OUT       write there instead of standard output\n"
		"  --top N                functions per table (default %d; 0: all)\n"
		"  --sort KEY             order of the trace table: self (self trace time; the\n"
		"                         default when the trace has time), total, insns (the\n"
		"                         default without time), branches, calls; total orders\n"
		"                         the samples tables by total samples too (callers\n"
		"                         first, as perf report's children)\n"
		"  --per-thread           the tables per thread\n"
		"  --call-graph           for the functions of the trace table: their callers and\n"
		"                         callees as the trace shows them, with calls and time\n"
		"                         (gprof's call graph, exact)\n"
		"  --latency NAMES        instead of the tables: each call of these functions (NAME\n"
		"                         or NAME@FILE, comma-separated), from the call to the\n"
		"                         return as the trace shows them: count, min, mean, max,\n"
		"                         histograms of time and instructions, the slowest calls\n"
		"                         with their time (perf ftrace latency's view)\n"
		"  --slowest N            --latency: the N slowest calls of each (default %d)\n"
		"  --mem                  instead of the tables: the trace's sampled data accesses\n"
		"                         (Arm SPE loads and stores) by where they were served (L1,\n"
		"                         L2, LLC, memory), by function, by data object (variable\n"
		"                         or mapping) and by cache line, with their latency (perf\n"
		"                         mem report's and c2c's view)\n"
		"  --pid PIDS, --tid TIDS, --comm NAMES\n"
		"                         count only these processes', threads' or commands'\n"
		"                         events (comma-separated lists; losses always count)\n"
		"  --event NAMES          count only these events' samples\n"
		"  -k, --vmlinux FILE     the kernel's image (a build's vmlinux): code and names of\n"
		"                         a trace of kernel code (default: the copy of the code\n"
		"                         made by record --kcore or archive)\n"
		"  --no-demangle          C++ and Rust functions by their mangled names\n"
		"  --progress, --no-progress\n"
		"                         a progress bar on standard error: always, never (default:\n"
		"                         when standard error is a terminal)\n"
		"  -h, --help             this text\n",
		TOP_DEFAULT, AUXCAP_REPORT_SLOWEST_DEFAULT);
}

struct report_args {
	const char *file;
	bool raw_names; /* --no-demangle */
	const char *vmlinux; /* -k, --vmlinux */
	const char *output;
	bool json;
	bool per_thread;
	size_t top;
	enum auxcap_report_sort_key sort;
	enum cli_progress_mode progress;
	struct cli_filter filter; /* --pid, --tid, --comm */
	bool call_graph;	   /* --call-graph */
	struct cli_filter latency; /* --latency: its syms */
	size_t slowest;		   /* --slowest */
	bool mem;		   /* --mem */
};

static const struct {
	const char *name;
	enum auxcap_report_sort_key key;
} sort_keys[] = {
	{ "self", AUXCAP_REPORT_SORT_SELF },	     { "total", AUXCAP_REPORT_SORT_TOTAL },
	{ "insns", AUXCAP_REPORT_SORT_INSNS },	     { "branches", AUXCAP_REPORT_SORT_BRANCHES },
	{ "calls", AUXCAP_REPORT_SORT_CALLS },
};

static const char *sort_name(enum auxcap_report_sort_key key)
{
	for (size_t i = 0; i < sizeof(sort_keys) / sizeof(sort_keys[0]); i++)
		if (sort_keys[i].key == key)
			return sort_keys[i].name;
	return "self";
}

static int parse_args(int argc, char **argv, struct report_args *a)
{
	a->top = TOP_DEFAULT;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *v;
		int r;

		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			usage(stdout);
			exit(CLI_OK);
		} else if (cli_is_opt(arg, "--format")) {
			v = cli_opt_value(argc, argv, &i, "--format");
			if (v && !strcmp(v, "text")) {
				a->json = false;
			} else if (v && !strcmp(v, "json")) {
				a->json = true;
			} else {
				cli_err("bad --format '%s': use text or json", v ? v : "");
				return -EINVAL;
			}
		} else if ((r = cli_output_opt(argc, argv, &i, &a->output)) != 0 ||
			   (r = cli_vmlinux_opt(argc, argv, &i, &a->vmlinux)) != 0) {
			if (r < 0)
				return r;
		} else if ((r = cli_filter_opt(argc, argv, &i, &a->filter)) != 0) {
			if (r < 0)
				return r;
		} else if ((r = cli_top_opt(argc, argv, &i, &a->top)) != 0 ||
			   (r = cli_latency_opt(argc, argv, &i, &a->latency)) != 0) {
			if (r < 0)
				return r;
		} else if (cli_is_opt(arg, "--slowest")) {
			char *end;
			unsigned long n;

			v = cli_opt_value(argc, argv, &i, "--slowest");
			n = v ? strtoul(v, &end, 10) : 0;
			if (!v || !*v || *end || *v == '-' || n < 1 || n > 10000) {
				cli_err("bad --slowest '%s': give the number of calls to show (1 to "
					"10000), e.g. --slowest 20",
					v ? v : "");
				return -EINVAL;
			}
			a->slowest = n;
		} else if (cli_is_opt(arg, "--sort")) {
			size_t k, nk = sizeof(sort_keys) / sizeof(sort_keys[0]);

			v = cli_opt_value(argc, argv, &i, "--sort");
			for (k = 0; v && k < nk && strcmp(v, sort_keys[k].name); k++)
				;
			if (!v || k == nk) {
				cli_err("bad --sort '%s': use self, total, insns, branches or calls",
					v ? v : "");
				return -EINVAL;
			}
			a->sort = sort_keys[k].key;
		} else if (!strcmp(arg, "--per-thread")) {
			a->per_thread = true;
		} else if (!strcmp(arg, "--call-graph")) {
			a->call_graph = true;
		} else if (!strcmp(arg, "--mem")) {
			a->mem = true;
		} else if (!strcmp(arg, "--no-demangle")) {
			a->raw_names = true;
		} else if (!strcmp(arg, "--progress")) {
			a->progress = CLI_PROGRESS_ON;
		} else if (!strcmp(arg, "--no-progress")) {
			a->progress = CLI_PROGRESS_OFF;
		} else if (arg[0] == '-' && arg[1]) {
			cli_err("unknown option '%s'; run 'auxcap report --help'", arg);
			return -EINVAL;
		} else if (!a->file) {
			a->file = arg;
		} else {
			cli_err("more than one file ('%s' and '%s'); report one capture at a time",
				a->file, arg);
			return -EINVAL;
		}
	}
	if (!a->file) {
		cli_err("no file given: auxcap report FILE (a perf.data capture with AUX trace)");
		return -EINVAL;
	}
	if (a->mem && (a->latency.nr_syms || a->call_graph || a->per_thread)) {
		cli_err("--mem is a view of its own: give it without %s",
			a->latency.nr_syms ? "--latency" : a->call_graph ? "--call-graph"
									  : "--per-thread (use --tid TIDS)");
		return -EINVAL;
	}
	if (a->slowest && !a->latency.nr_syms) {
		cli_err("--slowest N is the number of calls --latency NAMES shows: give --latency");
		return -EINVAL;
	}
	return 0;
}

/* ---- formatting ---------------------------------------------------------------------- */

struct ctx {
	const struct report_args *a;
	struct auxcap_decode *d;
	struct auxcap_report *r;
	const struct auxcap_report_summary *s;
	FILE *f;
	enum auxcap_report_sort_key key; /* the trace table's order (resolved) */
};

static const char *stamp(char *buf, size_t n, uint64_t ns)
{
	snprintf(buf, n, "%" PRIu64 ".%09" PRIu64, ns / UINT64_C(1000000000), ns % UINT64_C(1000000000));
	return buf;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* "name", "[unknown] 0x4011d6" or "[kernel]", then "  [dso]". */
static void print_func(FILE *f, const struct auxcap_report_func *fn)
{
	if (fn->name)
		fputs(fn->name, f);
	else if (fn->kernel)
		fputs("[kernel]", f);
	else
		fprintf(f, "[unknown] 0x%" PRIx64, fn->addr);
	cli_print_dso(f, fn->dso);
	fputc('\n', f);
}

static bool func_in(const struct auxcap_report_func *fn, const struct auxcap_report_thread *t)
{
	return !t || fn->tid == t->tid;
}

/* The trace counted something in it (else it is a function of samples only). */
static bool has_trace(const struct auxcap_report_func *fn)
{
	return fn->self_ns || fn->total_ns || fn->total_insns || fn->total_branches || fn->calls;
}

static const char *slot_name(const struct auxcap_report_slot *sl, size_t i, size_t nr)
{
	static char buf[32];

	if (i + 1 == nr) {
		snprintf(buf, sizeof(buf), "%s trace", sl->name ? sl->name : "AUX");
		return buf;
	}
	if (sl->name)
		return sl->name;
	snprintf(buf, sizeof(buf), "event %zu", i);
	return buf;
}

/* The capture's snapshot table: count, sources, trigger-to-frozen latencies. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

struct snap_stats {
	size_t n;
	uint64_t by_source[AUXCAP_TRIGGER_SOURCE_MAX];
	bool has_lat;
	uint64_t lat_min, lat_med, lat_max;
	uint64_t calls, call_max_ns; /* snapshots taken after a slow call, the longest call */
};

static void snap_stats(const struct auxcap_perf_features *ft, struct snap_stats *st)
{
	uint64_t *lat;

	memset(st, 0, sizeof(*st));
	if (!ft || !ft->nr_snapshots)
		return;
	st->n = ft->nr_snapshots;
	for (size_t i = 0; i < st->n; i++) {
		const struct auxcap_perf_snapshot *sn = &ft->snapshots[i];

		st->by_source[sn->source < AUXCAP_TRIGGER_SOURCE_MAX ? sn->source : 0]++;
		if (sn->call_ns) {
			st->calls++;
			st->call_max_ns = sn->call_ns > st->call_max_ns ? sn->call_ns
								   : st->call_max_ns;
		}
	}
	lat = calloc(st->n, sizeof(*lat));
	if (!lat)
		return;
	for (size_t i = 0; i < st->n; i++)
		lat[i] = ft->snapshots[i].frozen_ns > ft->snapshots[i].trigger_ns
				 ? ft->snapshots[i].frozen_ns - ft->snapshots[i].trigger_ns
				 : 0;
	qsort(lat, st->n, sizeof(*lat), cmp_u64);
	st->has_lat = true;
	st->lat_min = lat[0];
	st->lat_med = lat[st->n / 2];
	st->lat_max = lat[st->n - 1];
	free(lat);
}

/* ---- text ---------------------------------------------------------------------------- */


/* The header's "# trace:" line of a capture with trace. */
static void text_trace_line(FILE *f, const struct auxcap_report_summary *s,
			    const struct auxcap_decode_info *info)
{
	char b[32];

	fprintf(f, "# trace:     %" PRIu64 " bytes in %zu AUX %s%s; %" PRIu64 " events",
		s->aux_bytes, s->nr_queues,
		info->snapshot ? (s->nr_queues == 1 ? "snapshot" : "snapshots")
			       : (s->nr_queues == 1 ? "queue" : "queues"),
		info->timeless ? " (no time conversion)" : "", s->trace_events);
	if (s->trace_timed)
		fprintf(f, ", %s traced", cli_duration_str(b, sizeof(b), s->trace_ns));
	fprintf(f, ", %" PRIu64 " instructions, %" PRIu64 " branches\n", s->insns, s->branches);
}

/* " --pid 1,2 --tid 3 --comm make" */
static void filter_text(FILE *f, const struct cli_filter *cf)
{
	const struct auxcap_decode_filter *flt = &cf->f;

	for (size_t i = 0; i < flt->nr_pids; i++)
		fprintf(f, "%s%d", i ? "," : " --pid ", (int)flt->pids[i]);
	for (size_t i = 0; i < flt->nr_tids; i++)
		fprintf(f, "%s%d", i ? "," : " --tid ", (int)flt->tids[i]);
	for (size_t i = 0; i < flt->nr_comms; i++)
		fprintf(f, "%s%s", i ? "," : " --comm ", flt->comms[i]);
	for (size_t i = 0; i < flt->nr_events; i++)
		fprintf(f, "%s%s", i ? "," : " --event ", flt->events[i]);
}

static void text_header(struct ctx *c)
{
	const struct auxcap_report_summary *s = c->s;
	const struct auxcap_perf_features *ft = auxcap_decode_features(c->d);
	const struct auxcap_perf_evsel *aux = auxcap_decode_aux_evsel(c->d);
	const struct auxcap_decode_info *info = auxcap_decode_get_info(c->d);
	FILE *f = c->f;
	char b1[32], b2[32], b3[32];
	struct snap_stats st;
	const char *sep = "";

	fprintf(f, "# auxcap report of %s\n# captured:  ", c->a->file);
	for (size_t i = 0; i < auxcap_decode_nr_evsels(c->d); i++) {
		const struct auxcap_perf_evsel *es = auxcap_decode_evsel(c->d, i);

		fprintf(f, "%s%s", sep, es->name ? es->name : "(unnamed event)");
		if (es == aux)
			fprintf(f, " (AUX trace, %s)", info->backend);
		sep = ", ";
	}
	fputc('\n', f);
	if (ft && ft->nr_cmdline) {
		/* auxcap record stores its arguments from the subcommand on */
		fputs(!strcmp(ft->cmdline[0], "record") ? "# command:   auxcap" : "# command:  ", f);
		for (size_t i = 0; i < ft->nr_cmdline; i++)
			fprintf(f, " %s", ft->cmdline[i]);
		fputc('\n', f);
	}
	if (cli_filter_get(&c->a->filter)) {
		fputs("# filter:   ", f);
		filter_text(f, &c->a->filter);
		fputs(" (what follows counts only what it picks)\n", f);
	}
	if (ft && (ft->hostname || ft->osrelease || ft->arch)) {
		fprintf(f, "# host:      %s, Linux %s, %s", ft->hostname ? ft->hostname : "?",
			ft->osrelease ? ft->osrelease : "?", ft->arch ? ft->arch : "?");
		if (ft->nr_cpus_online)
			fprintf(f, ", %u CPUs online", ft->nr_cpus_online);
		fputc('\n', f);
	}
	if (s->has_span)
		fprintf(f, "# time:      %s .. %s (%s)\n", stamp(b1, sizeof(b1), s->first_time),
			stamp(b2, sizeof(b2), s->last_time),
			cli_duration_str(b3, sizeof(b3), s->last_time - s->first_time));
	else
		fputs("# time:      no timed event\n", f);
	if (s->nr_cpus)
		fprintf(f, "# CPUs:      %zu seen", s->nr_cpus);
	else
		fputs(info->backend ? "# CPUs:      not recorded (per-thread trace, records without a CPU)"
				    : "# CPUs:      not recorded (records without a CPU)",
		      f);
	for (size_t i = 0; i < s->nr_cpus && i < 32; i++)
		fprintf(f, "%s%d", i ? "," : ": ", s->cpus[i]);
	fprintf(f, "%s\n# threads:   %zu\n", s->nr_cpus > 32 ? ",..." : "", s->nr_threads);
	if (!info->backend) /* counter samples without an AUX event: perf report's profile */
		fputs("# trace:     none (no AUX event: the samples alone; record with -e "
		      "intel_pt//u, or --emulate, for the trace)\n",
		      f);
	else
		text_trace_line(f, s, info);
	for (size_t i = 0; i < s->nr_slots; i++) {
		const struct auxcap_report_slot *sl = &s->slots[i];

		if (!sl->samples)
			continue;
		fprintf(f, "# samples:   %s: %" PRIu64, slot_name(sl, i, s->nr_slots), sl->samples);
		if (i + 1 < s->nr_slots && !info->sampled && info->backend)
			fprintf(f, " (%" PRIu64 " on traced threads, %" PRIu64
				   " found in the trace near their time)",
				sl->traced, sl->aligned);
		else if (i + 1 == s->nr_slots)
			fputs(" (samples the trace itself holds)", f);
		fputc('\n', f);
	}
	if (!s->samples)
		fputs("# samples:   no counter samples\n", f);
	if (auxcap_report_get_mem(c->r)->accesses && !c->a->mem) {
		const struct auxcap_report_mem *m = auxcap_report_get_mem(c->r);

		fprintf(f, "# memory:    %" PRIu64 " sampled data accesses (%" PRIu64 " loads, %" PRIu64
			   " stores): --mem shows where they were served\n",
			m->accesses, m->loads, m->stores);
	}
	if (!info->backend)
		return;
	snap_stats(ft, &st);
	if (st.n) {
		sep = "";
		fprintf(f, "# snapshots: %zu:", st.n);
		for (unsigned int k = 0; k < AUXCAP_TRIGGER_SOURCE_MAX; k++) {
			if (!st.by_source[k])
				continue;
			fprintf(f, "%s %" PRIu64 " %s", sep, st.by_source[k],
				auxcap_trigger_source_name(k));
			sep = ",";
		}
		if (st.has_lat)
			fprintf(f, "; trigger to frozen: min %.1f us, median %.1f us, max %.1f us",
				(double)st.lat_min / 1e3, (double)st.lat_med / 1e3,
				(double)st.lat_max / 1e3);
		if (st.calls)
			fprintf(f, "; %" PRIu64 " after a slow call (the longest %s)", st.calls,
				cli_duration_str(b1, sizeof(b1), st.call_max_ns));
		fputc('\n', f);
	} else if (info->snapshot) {
		fputs("# snapshots: snapshot mode, no snapshot table in the file\n", f);
	} else {
		fputs("# snapshots: none (full trace)\n", f);
	}
}

static void text_threads(struct ctx *c)
{
	size_t n = auxcap_report_nr_threads(c->r), top = c->a->top ? c->a->top : n;
	FILE *f = c->f;
	char b[32];

	if (!n)
		return;
	fprintf(f, "\nThreads (%zu%s, by %s):\n", n < top ? n : top, n > top ? " shown" : "",
		auxcap_decode_get_info(c->d)->backend ? "trace time" : "samples");
	fprintf(f, "  %8s %8s  %-16s %12s %12s %10s %8s %5s\n", "TID", "PID", "COMM",
		"trace time", "insns", "branches", "samples", "gaps");
	for (size_t i = 0; i < n && i < top; i++) {
		const struct auxcap_report_thread *t = auxcap_report_get_thread(c->r, i);
		char tid[24];

		if (t->tid >= 0)
			snprintf(tid, sizeof(tid), "%d", t->tid);
		else
			snprintf(tid, sizeof(tid), "q%d", -1 - t->tid);
		fprintf(f, "  %8s %8d  %-16s %12s %12" PRIu64 " %10" PRIu64 " %8" PRIu64
			   " %5" PRIu64 "\n",
			tid, t->pid, t->comm ? t->comm : t->tid < 0 ? "(unknown thread)" : "-",
			c->s->trace_timed ? cli_duration_str(b, sizeof(b), t->trace_ns) : "-", t->insns,
			t->branches, t->samples, t->gaps);
	}
}

static const char *key_title(enum auxcap_report_sort_key key)
{
	switch (key) {
	case AUXCAP_REPORT_SORT_TOTAL:
		return "total trace time";
	case AUXCAP_REPORT_SORT_INSNS:
		return "self instructions";
	case AUXCAP_REPORT_SORT_BRANCHES:
		return "self branches";
	case AUXCAP_REPORT_SORT_CALLS:
		return "calls";
	default:
		return "self trace time";
	}
}

/* "object" of a files' table entry. */
static const char *dso_name(const struct auxcap_report_dso *d)
{
	return d->dso ? d->dso : d->kernel ? "[kernel]" : "[unknown]";
}

/*
 * The files of code by self trace time, then samples (the thread's, with @t): where the time
 * went by object, as perf report --sort dso.  A pair of samples columns per event with samples.
 */
static void text_dso_table(struct ctx *c, const struct auxcap_report_thread *t)
{
	const struct auxcap_report_summary *s = c->s;
	size_t n = auxcap_report_nr_dsos(c->r), top = c->a->top, shown = 0, count = 0;
	uint64_t ns = t ? t->trace_ns : s->trace_ns, insns = t ? t->insns : s->insns;
	uint64_t branches = t ? t->branches : s->branches, *tot;
	bool timed = s->trace_timed, trace = s->trace_events > 0;
	FILE *f = c->f;
	char b[32];

	tot = calloc(s->nr_slots, sizeof(*tot));
	if (!tot)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct auxcap_report_dso *d = auxcap_report_get_dso(c->r, i);

		if (t && d->tid != t->tid)
			continue;
		count++;
		for (size_t k = 0; k < s->nr_slots; k++)
			tot[k] += d->samples[k];
	}
	if (!count)
		goto out;
	fprintf(f, "\nObjects by %s (%s%zu of %zu):\n",
		!trace ? "self samples" : timed ? "self trace time" : insns ? "self instructions"
									  : "self branches",
		top ? "top " : "", top && top < count ? top : count, count);
	fputs(" ", f);
	if (trace && timed)
		fprintf(f, " %7s %11s", "time%", "time");
	else if (trace)
		fprintf(f, " %7s", insns ? "insns%" : "branch%");
	if (trace)
		fprintf(f, " %12s %10s", "insns", "branches");
	for (size_t k = 0; k < s->nr_slots; k++) {
		const char *name = slot_name(&s->slots[k], k, s->nr_slots);

		if (tot[k])
			fprintf(f, " %11.11s%% %9s", name, "samples");
	}
	fprintf(f, "  %s\n", "object");
	for (size_t i = 0; i < n && (!top || shown < top); i++) {
		const struct auxcap_report_dso *d = auxcap_report_get_dso(c->r, i);

		if (t && d->tid != t->tid)
			continue;
		shown++;
		fputs(" ", f);
		if (trace && timed)
			fprintf(f, " %6.2f%% %11s", pct(d->self_ns, ns), cli_duration_str(b, sizeof(b), d->self_ns));
		else if (trace)
			fprintf(f, " %6.2f%%", insns ? pct(d->self_insns, insns)
						     : pct(d->self_branches, branches));
		if (trace)
			fprintf(f, " %12" PRIu64 " %10" PRIu64, d->self_insns, d->self_branches);
		for (size_t k = 0; k < s->nr_slots; k++)
			if (tot[k])
				fprintf(f, " %11.2f%% %9" PRIu64, pct(d->samples[k], tot[k]),
					d->samples[k]);
		fprintf(f, "  %s\n", dso_name(d));
	}
out:
	free(tot);
}

/* The trace table: functions in the current order (the thread's, with @t). */
static void text_trace_table(struct ctx *c, const struct auxcap_report_thread *t)
{
	const struct auxcap_report_summary *s = c->s;
	size_t n = auxcap_report_nr_funcs(c->r), top = c->a->top, shown = 0, count = 0;
	uint64_t ns = t ? t->trace_ns : s->trace_ns, insns = t ? t->insns : s->insns;
	uint64_t branches = t ? t->branches : s->branches;
	bool timed = s->trace_timed;
	FILE *f = c->f;
	char b1[32], b2[32];

	for (size_t i = 0; i < n; i++)
		count += func_in(auxcap_report_get_func(c->r, i), t) &&
			 has_trace(auxcap_report_get_func(c->r, i));
	if (!s->trace_events)
		return;
	if (!count) {
		fputs("\nFunctions by trace: none (the trace has no branches or calls to attribute "
		      "time to)\n",
		      f);
		return;
	}
	fprintf(f, "\nFunctions by %s (%s%zu of %zu", key_title(c->key), top ? "top " : "",
		top && top < count ? top : count, count);
	if (timed)
		fprintf(f, "; %s traced", cli_duration_str(b1, sizeof(b1), ns));
	if (timed || insns)
		fprintf(f, "; %" PRIu64 " instructions):\n", insns);
	else
		fprintf(f, "; %" PRIu64 " branches, no instruction counts):\n", branches);
	if (timed)
		fprintf(f, "  %7s %11s %7s %11s ", "self%", "self", "total%", "total");
	else
		fprintf(f, "  %7s %7s ", "self%", "total%");
	fprintf(f, "%12s %12s %10s %8s  %s\n", "self insns", "total insns", "branches", "calls",
		"function");
	for (size_t i = 0; i < n && (!top || shown < top); i++) {
		const struct auxcap_report_func *fn = auxcap_report_get_func(c->r, i);

		if (!func_in(fn, t) || !has_trace(fn))
			continue;
		shown++;
		if (timed)
			fprintf(f, "  %6.2f%% %11s %6.2f%% %11s ", pct(fn->self_ns, ns),
				cli_duration_str(b1, sizeof(b1), fn->self_ns), pct(fn->total_ns, ns),
				cli_duration_str(b2, sizeof(b2), fn->total_ns));
		else if (insns)
			fprintf(f, "  %6.2f%% %6.2f%% ", pct(fn->self_insns, insns),
				pct(fn->total_insns, insns));
		else
			fprintf(f, "  %6.2f%% %6.2f%% ", pct(fn->self_branches, branches),
				pct(fn->total_branches, branches));
		fprintf(f, "%12" PRIu64 " %12" PRIu64 " %10" PRIu64 " %8" PRIu64 "  ",
			fn->self_insns, fn->total_insns, fn->self_branches, fn->calls);
		print_func(f, fn);
	}
}

/* One line of a call graph block: an edge's calls, time (or instructions), its share of @of
 * (the function's total), and the function at its other end. */
static void graph_line(struct ctx *c, const struct auxcap_report_edge *e, bool timed, uint64_t of,
		       const struct auxcap_report_func *other)
{
	char b[32];

	if (timed)
		fprintf(c->f, "    %10" PRIu64 " %11s %7.2f%%  ", e->calls,
			cli_duration_str(b, sizeof(b), e->ns), pct(e->ns, of));
	else
		fprintf(c->f, "    %10" PRIu64 " %11" PRIu64 " %7.2f%%  ", e->calls, e->insns,
			pct(e->insns, of));
	print_func(c->f, other);
}

/*
 * --call-graph: for each function of the trace table (the same ones, in its order), the
 * functions that called it and those it called, each edge with its calls and the callee's
 * time in them (instructions without time), as a share of the function's total.
 */
static void text_call_graph(struct ctx *c, const struct auxcap_report_thread *t)
{
	size_t n = auxcap_report_nr_funcs(c->r), ne = auxcap_report_nr_edges(c->r);
	size_t top = c->a->top, shown = 0;
	bool timed = c->s->trace_timed;
	FILE *f = c->f;
	char b[32];

	if (!c->s->trace_events)
		return;
	fprintf(f, "\nCall graph (the trace's calls and returns; %s of the callee in those "
		   "calls, its callees' included; share of the function's total):\n",
		timed ? "trace time" : "instructions");
	for (size_t i = 0; i < n && (!top || shown < top); i++) {
		const struct auxcap_report_func *fn = auxcap_report_get_func(c->r, i);
		uint64_t total = timed ? fn->total_ns : fn->total_insns;
		bool any = false;

		if (!func_in(fn, t) || !has_trace(fn))
			continue;
		shown++;
		fputs("\n## ", f);
		print_func(f, fn);
		if (timed)
			fprintf(f, "#  total %s, %" PRIu64 " calls\n",
				cli_duration_str(b, sizeof(b), fn->total_ns), fn->calls);
		else
			fprintf(f, "#  total %" PRIu64 " instructions, %" PRIu64 " calls\n",
				fn->total_insns, fn->calls);
		for (int dir = 0; dir < 2; dir++) {
			uint64_t more = 0, more_v = 0, lines = 0;

			any = false;
			for (size_t k = 0; k < ne; k++) {
				const struct auxcap_report_edge *e = auxcap_report_get_edge(c->r, k);

				if ((dir ? e->caller : e->callee) != fn)
					continue;
				if (!any)
					fprintf(f, "    %10s %11s %8s  %s\n", "calls",
						timed ? "time" : "insns", "share",
						dir ? "callee" : "caller");
				any = true;
				if (lines++ < GRAPH_LINES) {
					graph_line(c, e, timed, total, dir ? e->callee : e->caller);
				} else {
					more++;
					more_v += timed ? e->ns : e->insns;
				}
			}
			if (more)
				fprintf(f, "    ... and %" PRIu64 " more %s (%.2f%% together)\n", more,
					dir ? "callees" : "callers", pct(more_v, total));
			if (!any)
				fprintf(f, "    (%s)\n",
					dir ? "no callee in the trace"
					    : "no caller in the trace: it was running when the "
					      "trace began");
		}
	}
}

/* The samples tables' order: by total samples with --sort total, else by self samples. */
static enum auxcap_report_sort_key samples_key(const struct ctx *c)
{
	return c->key == AUXCAP_REPORT_SORT_TOTAL ? AUXCAP_REPORT_SORT_SAMPLES_TOTAL
						  : AUXCAP_REPORT_SORT_SAMPLES;
}

/* The samples tables, one per slot with samples (the thread's, with @t). */
static int text_sample_tables(struct ctx *c, const struct auxcap_report_thread *t)
{
	const struct auxcap_report_summary *s = c->s;
	size_t n = auxcap_report_nr_funcs(c->r), top = c->a->top;
	FILE *f = c->f;
	int r;

	for (size_t k = 0; k < s->nr_slots; k++) {
		uint64_t total = 0;
		size_t shown = 0, count = 0;

		if (!s->slots[k].samples)
			continue;
		r = auxcap_report_sort(c->r, samples_key(c), k);
		if (r < 0)
			return r;
		for (size_t i = 0; i < n; i++) {
			const struct auxcap_report_func *fn = auxcap_report_get_func(c->r, i);

			if (func_in(fn, t) && fn->samples && fn->samples_total[k]) {
				total += fn->samples[k];
				count++;
			}
		}
		if (!total)
			continue;
		fprintf(f, "\nFunctions by %s samples (%s%zu of %zu; %" PRIu64 " samples):\n",
			slot_name(&s->slots[k], k, s->nr_slots), top ? "top " : "",
			top && top < count ? top : count, count, total);
		fprintf(f, "  %7s %9s %7s %9s  %s\n", "self%", "samples", "total%", "total",
			"function");
		for (size_t i = 0; i < n && (!top || shown < top); i++) {
			const struct auxcap_report_func *fn = auxcap_report_get_func(c->r, i);

			if (!func_in(fn, t) || !fn->samples || !fn->samples_total[k])
				continue;
			shown++;
			fprintf(f, "  %6.2f%% %9" PRIu64 " %6.2f%% %9" PRIu64 "  ",
				pct(fn->samples[k], total), fn->samples[k],
				pct(fn->samples_total[k], total), fn->samples_total[k]);
			print_func(f, fn);
		}
	}
	return auxcap_report_sort(c->r, c->key, 0);
}

static void text_losses(struct ctx *c)
{
	const struct auxcap_report_summary *s = c->s;
	FILE *f = c->f;
	char b1[32], b2[32];

	fputs("\nLosses and gaps:\n", f);
	if (s->no_loss)
		fputs("  no data lost: no LOST or LOST_SAMPLES record, no AUX record flagged "
		      "TRUNCATED, PARTIAL or COLLISION, no AUXTRACE_ERROR, no hole between AUX "
		      "buffers, no decode gap\n",
		      f);
	if (s->lost_records)
		fprintf(f, "  LOST:            %" PRIu64 " records, %" PRIu64
			   " events lost (the data ring was full: raise -m DATA)\n",
			s->lost_records, s->lost);
	if (s->lost_samples_records)
		fprintf(f, "  LOST_SAMPLES:    %" PRIu64 " records, %" PRIu64 " samples lost\n",
			s->lost_samples_records, s->lost_samples);
	if (s->aux_truncated)
		fprintf(f, "  AUX TRUNCATED:   %" PRIu64 " records (the AUX buffer was full and the "
			   "trace stopped until it was drained: raise -m ,AUX)\n",
			s->aux_truncated);
	if (s->aux_partial)
		fprintf(f, "  AUX PARTIAL:     %" PRIu64 " records (the hardware lost part of a "
			   "record)\n",
			s->aux_partial);
	if (s->aux_collision)
		fprintf(f, "  AUX COLLISION:   %" PRIu64 " records (samples collided in the "
			   "hardware)\n",
			s->aux_collision);
	if (s->aux_truncated || s->aux_partial || s->aux_collision)
		fprintf(f, "                   (%" PRIu64 " AUX bytes in those records)\n",
			s->aux_flagged_bytes);
	if (s->discontinuities)
		fprintf(f, "  AUX holes:       %" PRIu64 " AUX buffers do not follow the one "
			   "before (trace between them lost)\n",
			s->discontinuities);
	if (s->auxtrace_errors) {
		fprintf(f, "  AUXTRACE_ERROR:  %" PRIu64 "\n", s->auxtrace_errors);
		for (size_t i = 0; i < s->nr_error_notes; i++) {
			const struct auxcap_report_note *n = &s->error_notes[i];

			fprintf(f, "    at %s cpu %d tid %d: code %d ip 0x%" PRIx64 ": %s\n",
				stamp(b1, sizeof(b1), n->time), n->cpu, n->tid, n->err, n->ip,
				n->what);
		}
		if (s->auxtrace_errors > s->nr_error_notes)
			fprintf(f, "    ... %" PRIu64 " more\n",
				s->auxtrace_errors - s->nr_error_notes);
	}
	if (s->gaps) {
		fprintf(f, "  decode gaps:     %" PRIu64, s->gaps);
		if (s->trace_timed)
			fprintf(f, ", %s of trace time lost in them", cli_duration_str(b2, sizeof(b2), s->gap_ns));
		fputc('\n', f);
		for (size_t i = 0; i < s->nr_gap_notes; i++) {
			const struct auxcap_report_note *n = &s->gap_notes[i];

			fprintf(f, "    at %s queue %d offset 0x%" PRIx64 ": %s", stamp(b1, sizeof(b1), n->time),
				n->queue, n->offset, n->what);
			if (n->ip)
				fprintf(f, " (ip 0x%" PRIx64 ")", n->ip);
			fputc('\n', f);
		}
		if (s->gaps > s->nr_gap_notes)
			fprintf(f, "    ... %" PRIu64 " more (auxcap decode shows them all as '!! gap' "
				   "lines)\n",
				s->gaps - s->nr_gap_notes);
	}
	if (s->missing_binaries)
		fprintf(f, "  not decoded:     %" PRIu64 " mappings whose binary could not be read "
			   "(see the warnings; auxcap archive keeps them with the capture)\n",
			s->missing_binaries);
	for (size_t i = 0; i + 1 < s->nr_slots; i++) {
		const struct auxcap_report_slot *sl = &s->slots[i];

		if (sl->traced > sl->aligned)
			fprintf(f, "  %s: %" PRIu64 " of %" PRIu64 " samples on traced threads were "
				   "not found in the trace near their time\n",
				slot_name(sl, i, s->nr_slots), sl->traced - sl->aligned,
				sl->traced);
	}
}

/* ---- --latency ------------------------------------------------------------------------- */

/* calls_of: the functions --latency names. */
static bool want_calls(void *arg, const struct auxcap_report_func *fn)
{
	const struct cli_filter *l = arg;

	for (size_t i = 0; i < l->nr_syms; i++)
		if (cli_func_spec_is(fn->name, fn->dso, l->syms[i]))
			return true;
	return false;
}

/* Bucket @k's bounds: [lo, hi], both included. */
static void bucket_range(unsigned k, uint64_t *lo, uint64_t *hi)
{
	*lo = k ? UINT64_C(1) << (k - 1) : 0;
	*hi = !k ? 0 : k == 64 ? UINT64_MAX : (UINT64_C(1) << k) - 1;
}

/* A histogram from its first to its last bucket with calls; @ns: durations, else counts. */
static void text_hist(FILE *f, const uint64_t *h, bool ns, const char *title)
{
	static const char bar[] = "########################################";
	unsigned first = AUXCAP_REPORT_HIST_BUCKETS, last = 0;
	uint64_t max = 0;

	for (unsigned k = 0; k < AUXCAP_REPORT_HIST_BUCKETS; k++) {
		if (!h[k])
			continue;
		first = first < k ? first : k;
		last = k;
		max = h[k] > max ? h[k] : max;
	}
	if (!max)
		return;
	fprintf(f, "#\n#  %21s | %10s | GRAPH\n", title, "COUNT");
	for (unsigned k = first; k <= last; k++) {
		char range[64], b1[32], b2[32];
		uint64_t lo, hi;
		int w = (int)((h[k] * (sizeof(bar) - 1) + max - 1) / max);

		bucket_range(k, &lo, &hi);
		if (ns && k == AUXCAP_REPORT_HIST_BUCKETS - 1)
			snprintf(range, sizeof(range), ">= %s", cli_duration_str(b1, sizeof(b1), lo));
		else if (ns && k)
			snprintf(range, sizeof(range), "%s - %s", cli_duration_str(b1, sizeof(b1), lo),
				 cli_duration_str(b2, sizeof(b2), hi + 1));
		else if (lo == hi)
			snprintf(range, sizeof(range), "%" PRIu64, lo);
		else
			snprintf(range, sizeof(range), "%" PRIu64 " - %" PRIu64, lo, hi);
		fprintf(f, "   %21s | %10" PRIu64 " | %.*s\n", range, h[k], w, bar);
	}
}

/* Where a kept call's time went: its own code, its callees, time not traced. */
static void text_call_where(FILE *f, const struct auxcap_report_call *x)
{
	char b1[32], b2[32];

	fprintf(f, "   %20s where: %s own", "",
		cli_duration_str(b1, sizeof(b1), x->trace_ns - x->callees_ns));
	for (size_t j = 0; j < x->nr_callees; j++) {
		fprintf(f, ", %s in %s (%" PRIu64 " call%s)",
			cli_duration_str(b1, sizeof(b1), x->callees[j].ns),
			x->callees[j].func->name ? x->callees[j].func->name
			: x->callees[j].func->kernel ? "[kernel]"
						     : "[unknown]",
			x->callees[j].calls, x->callees[j].calls == 1 ? "" : "s");
	}
	if (x->ns > x->trace_ns)
		fprintf(f, ", %s not traced (blocked, preempted, untraced code)",
			cli_duration_str(b2, sizeof(b2), x->ns - x->trace_ns));
	fputc('\n', f);
}

static void text_calls(struct ctx *c, const struct auxcap_report_calls *k)
{
	FILE *f = c->f;
	char b1[32], b2[32], b3[32], b4[32];

	fputs("\n## ", f);
	if (c->a->per_thread && k->func->tid >= 0)
		fprintf(f, "thread %d: ", k->func->tid);
	else if (c->a->per_thread)
		fprintf(f, "AUX queue %d: ", -1 - k->func->tid);
	print_func(f, k->func);
	fprintf(f, "#  calls:     %" PRIu64 " returned", k->calls);
	if (k->across_gap || k->unfinished)
		fprintf(f, "; not counted: %" PRIu64 " returned after a decode gap, %" PRIu64
			   " still running where the trace ends",
			k->across_gap, k->unfinished);
	fputc('\n', f);
	if (k->running_ns)
		fprintf(f, "#  running:   the longest of those still running began at %s (%s %d) "
			   "and had run %s where the trace ends\n",
			stamp(b1, sizeof(b1), k->running_start),
			k->running_tid >= 0 ? "thread" : "AUX queue",
			k->running_tid >= 0 ? k->running_tid : -1 - k->running_tid,
			cli_duration_str(b2, sizeof(b2), k->running_ns));
	if (k->timed)
		fprintf(f, "#  time:      min %s, mean %s, max %s, total %s%s\n",
			cli_duration_str(b1, sizeof(b1), k->min_ns), cli_duration_str(b2, sizeof(b2), k->sum_ns / k->timed),
			cli_duration_str(b3, sizeof(b3), k->max_ns), cli_duration_str(b4, sizeof(b4), k->sum_ns),
			k->timed < k->calls ? " (of the calls with time at both ends)" : "");
	else if (k->calls)
		fputs("#  time:      not known (the trace has no timestamps)\n", f);
	if (k->calls)
		fprintf(f, "#  insns:     min %" PRIu64 ", mean %.1f, max %" PRIu64 ", total %" PRIu64
			   "\n",
			k->min_insns, (double)k->sum_insns / (double)k->calls, k->max_insns,
			k->sum_insns);
	text_hist(f, k->hist_ns, true, "DURATION");
	text_hist(f, k->hist_insns, false, "INSTRUCTIONS");
	if (!k->nr_slowest)
		return;
	fprintf(f, "#\n#  the %s (decode --time START,END shows one):\n",
		k->timed ? "slowest calls" : "calls with the most instructions");
	fprintf(f, "#  %20s %20s %8s %4s %10s %10s  %s\n", "START", "END", "TID", "CPU",
		"DURATION", "INSNS", "CALLER");
	for (size_t i = 0; i < k->nr_slowest; i++) {
		const struct auxcap_report_call *x = &k->slowest[i];
		char tid[16] = "-", cpu[16] = "-";

		if (x->tid >= 0)
			snprintf(tid, sizeof(tid), "%d", x->tid);
		if (x->cpu >= 0)
			snprintf(cpu, sizeof(cpu), "%d", x->cpu);
		fprintf(f, "   %20s %20s %8s %4s %10s %10" PRIu64 "  ",
			x->start ? stamp(b1, sizeof(b1), x->start) : "-",
			x->end ? stamp(b2, sizeof(b2), x->end) : "-", tid, cpu,
			x->timed ? cli_duration_str(b3, sizeof(b3), x->ns) : "-", x->insns);
		if (x->caller)
			print_func(f, x->caller);
		else
			fputs("-\n", f);
		if (x->timed)
			text_call_where(f, x);
	}
}

/*
 * --latency: each named function must have calls in the trace; a name without any is
 * named (all without: an error, -ENOENT).
 */
static int check_latency(const struct ctx *c)
{
	const struct cli_filter *l = &c->a->latency;
	size_t found = 0;

	for (size_t i = 0; i < l->nr_syms; i++) {
		size_t k, n = auxcap_report_nr_calls(c->r);

		for (k = 0; k < n; k++) {
			const struct auxcap_report_func *fn = auxcap_report_get_calls(c->r, k)->func;

			if (cli_func_spec_is(fn->name, fn->dso, l->syms[i]))
				break;
		}
		if (k < n) {
			found++;
			continue;
		}
		(found || i + 1 < l->nr_syms ? cli_warn : cli_err)(
			"--latency %s: the trace of '%s' has no call into a function of that name "
			"(auxcap report %s lists the functions that ran)",
			l->syms[i], c->a->file, c->a->file);
	}
	if (!found && l->nr_syms > 1)
		cli_err("--latency: none of the functions named has a call in the trace of '%s'",
			c->a->file);
	return found ? 0 : -ENOENT;
}

static void text_latency(struct ctx *c)
{
	fputs("#\n# calls, from the call into each function to the return out of it, as the "
	      "trace shows them\n# (time: perf time, blocked and untraced time included; "
	      "instructions: its callees' too;\n# histograms: powers of two)\n",
	      c->f);
	for (size_t i = 0; i < auxcap_report_nr_calls(c->r); i++)
		text_calls(c, auxcap_report_get_calls(c->r, i));
}

/* ---- --mem ---------------------------------------------------------------------------- */

static const char *const level_names[AUXCAP_REPORT_MEM_LEVELS] = {
	[AUXCAP_REPORT_MEM_L1] = "L1",
	[AUXCAP_REPORT_MEM_MID] = "L2 (L1 miss, not LLC)",
	[AUXCAP_REPORT_MEM_LLC] = "LLC",
	[AUXCAP_REPORT_MEM_DRAM] = "memory (LLC miss)",
	[AUXCAP_REPORT_MEM_NA] = "no cache event",
};

static const char *const source_names[AUXCAP_TRACE_SRC_COUNT] = {
	[AUXCAP_TRACE_SRC_NONE] = "not said",
	[AUXCAP_TRACE_SRC_L1] = "L1",
	[AUXCAP_TRACE_SRC_L2] = "L2",
	[AUXCAP_TRACE_SRC_PEER_CORE] = "peer core's cache",
	[AUXCAP_TRACE_SRC_LOCAL_CLUSTER] = "local cluster",
	[AUXCAP_TRACE_SRC_SYS_CACHE] = "system cache",
	[AUXCAP_TRACE_SRC_PEER_CLUSTER] = "peer cluster",
	[AUXCAP_TRACE_SRC_REMOTE] = "remote (other socket)",
	[AUXCAP_TRACE_SRC_DRAM] = "DRAM",
};

/* Whether the capture's data accesses said where their data came from. */
static bool have_sources(const struct auxcap_report_mem_sources *s)
{
	for (int k = AUXCAP_TRACE_SRC_NONE + 1; k < AUXCAP_TRACE_SRC_COUNT; k++)
		if (s->accesses[k])
			return true;
	return false;
}

static double mean(uint64_t sum, uint64_t n)
{
	return n ? (double)sum / (double)n : 0.0;
}

/* --mem: a capture without sampled data accesses is a one-line error. */
static int check_mem(const struct ctx *c)
{
	if (auxcap_report_get_mem(c->r)->accesses)
		return 0;
	cli_err("--mem: '%s' has no sampled data accesses (%s); record Arm SPE's loads and "
		"stores with auxcap record --mem (--emulate where there is no SPE unit)",
		c->a->file,
		auxcap_decode_get_info(c->d)->sampled ? "no load or store among its records"
						       : "its trace samples no operations");
	return -EINVAL;
}

/* " f (n), g (m), others (k)\n": the first functions that made a line's or object's accesses */
static void who_funcs(FILE *f, const struct auxcap_report_mem_line *l)
{
	for (size_t k = 0; k < l->nr_funcs; k++) {
		const struct auxcap_report_func *fn = l->funcs[k].func;

		fputs(k ? ", " : " ", f);
		if (!fn)
			fputs("[none]", f);
		else if (fn->name)
			fputs(fn->name, f);
		else if (fn->kernel)
			fputs("[kernel]", f);
		else
			fprintf(f, "[unknown] 0x%" PRIx64, fn->addr);
		fprintf(f, " (%" PRIu64 ")", l->funcs[k].accesses);
	}
	if (l->other_funcs)
		fprintf(f, ", others (%" PRIu64 ")", l->other_funcs);
	fputc('\n', f);
}

/* A data object as the text names it: "counters [prog]", "[heap]", "//anon 0x7f..", ... */
static void object_text(const struct auxcap_report_mem_object *o, char *buf, size_t n)
{
	const char *base;

	switch (o->kind) {
	case AUXCAP_REPORT_MEM_OBJ_VARIABLE:
		base = cli_base_name(o->dso);
		snprintf(buf, n, "%s  [%s]", o->name, base ? base : "?");
		break;
	case AUXCAP_REPORT_MEM_OBJ_MAPPING:
		/* a file by its base name, as the functions' files are (not //anon) */
		base = cli_base_name(o->name);
		if (o->name[0] != '/' || o->name[1] == '/' || !*base)
			base = o->name;
		if (o->use.addr)
			snprintf(buf, n, "%s at 0x%" PRIx64, base, o->use.addr);
		else
			snprintf(buf, n, "%s", base);
		break;
	default:
		snprintf(buf, n, "[unknown]");
		break;
	}
}

/* The data objects by latency: which variable or region the waiting was for. */
static void text_mem_objects(struct ctx *c)
{
	const struct auxcap_report_mem *m = auxcap_report_get_mem(c->r);
	size_t no = auxcap_report_nr_mem_objects(c->r), top = c->a->top;
	uint64_t untracked = auxcap_report_mem_objects_untracked(c->r);
	FILE *f = c->f;

	fprintf(f, "\nData objects by access latency (%s%zu of %zu", top ? "top " : "",
		top && top < no ? top : no, no);
	if (untracked)
		fprintf(f, "; %" PRIu64 " accesses to objects past the first %d not counted here",
			untracked, AUXCAP_REPORT_MEM_OBJECTS_MAX);
	fputs("):\n", f);
	fprintf(f, "  %7s %9s %8s %8s %8s %8s %8s %7s  %-36s %s\n", "lat%", "accesses", "stores",
		"L1miss%", "LLCmiss%", "TLBwalk%", "mean lat", "threads", "object",
		"functions (accesses)");
	for (size_t i = 0; i < no && (!top || i < top); i++) {
		const struct auxcap_report_mem_object *o = auxcap_report_get_mem_object(c->r, i);
		const struct auxcap_report_mem *x = &o->use.m;
		char name[512], thr[32];

		object_text(o, name, sizeof(name));
		snprintf(thr, sizeof(thr), "%zu%s/%zu", o->use.threads, o->use.threads_more ? "+" : "",
			 o->use.store_threads);
		fprintf(f, "  %6.2f%% %9" PRIu64 " %8" PRIu64 " %7.2f%% %7.2f%% %7.2f%% %8.1f %7s  %-36s",
			pct(x->lat, m->lat), x->accesses, x->stores,
			pct(auxcap_report_mem_l1_misses(x), x->accesses),
			pct(x->level[AUXCAP_REPORT_MEM_DRAM], x->accesses),
			pct(x->tlb_walks, x->accesses), mean(x->lat, x->accesses), thr, name);
		who_funcs(f, &o->use);
	}
}

static void text_mem(struct ctx *c)
{
	const struct auxcap_report_mem *m = auxcap_report_get_mem(c->r);
	const struct auxcap_report_mem_sources *src = auxcap_report_get_mem_sources(c->r);
	bool peer = have_sources(src); /* the lines' peer column */
	size_t nf = auxcap_report_nr_mem_funcs(c->r), nl = auxcap_report_nr_mem_lines(c->r);
	size_t top = c->a->top;
	uint64_t untracked = auxcap_report_mem_lines_untracked(c->r);
	FILE *f = c->f;

	fprintf(f, "\nData accesses sampled: %" PRIu64 " (%" PRIu64 " loads, %" PRIu64
		   " stores); latency in cycles, issue to completion:\n",
		m->accesses, m->loads, m->stores);
	fprintf(f, "  %-22s %10s %7s %9s %8s\n", "served by", "accesses", "%", "mean lat",
		"max lat");
	for (int k = 0; k < AUXCAP_REPORT_MEM_LEVELS; k++) {
		if (!m->level[k] && k == AUXCAP_REPORT_MEM_NA)
			continue;
		fprintf(f, "  %-22s %10" PRIu64 " %6.2f%% %9.1f %8" PRIu64 "\n", level_names[k],
			m->level[k], pct(m->level[k], m->accesses),
			mean(m->level_lat[k], m->level[k]), m->level_lat_max[k]);
	}
	fprintf(f, "  %-22s %10" PRIu64 " %6.2f%% %9.1f %8" PRIu64 "\n", "all", m->accesses,
		100.0, mean(m->lat, m->accesses), m->lat_max);
	fprintf(f, "  TLB walks: %" PRIu64 " (%.2f%%, translation latency mean %.1f); from another "
		   "socket: %" PRIu64 "\n",
		m->tlb_walks, pct(m->tlb_walks, m->accesses), mean(m->xlat_lat, m->accesses),
		m->remote);
	if (peer) {
		uint64_t n = 0;

		for (int k = 0; k < AUXCAP_TRACE_SRC_COUNT; k++)
			n += src->accesses[k];
		fprintf(f, "\nWhere the data came from (the records' data source; the level above "
			   "goes by it):\n");
		fprintf(f, "  %-22s %10s %7s %9s %8s\n", "data source", "accesses", "%", "mean lat",
			"max lat");
		for (int k = AUXCAP_TRACE_SRC_NONE + 1; k <= AUXCAP_TRACE_SRC_COUNT; k++) {
			int i = k % AUXCAP_TRACE_SRC_COUNT; /* "not said" last */

			if (!src->accesses[i])
				continue;
			fprintf(f, "  %-22s %10" PRIu64 " %6.2f%% %9.1f %8" PRIu64 "\n",
				source_names[i], src->accesses[i], pct(src->accesses[i], n),
				mean(src->lat[i], src->accesses[i]), src->lat_max[i]);
		}
		fprintf(f, "  served by another core's cache (perf c2c's peer snoops): %" PRIu64 "\n",
			m->peer);
	}

	fprintf(f, "\nFunctions by data access latency (%s%zu of %zu; %" PRIu64 " cycles in all):\n",
		top ? "top " : "", top && top < nf ? top : nf, nf, m->lat);
	fprintf(f, "  %7s %9s %8s %8s %8s %8s %8s %8s  %s\n", "lat%", "accesses", "stores",
		"L1miss%", "LLCmiss%", "TLBwalk%", "mean lat", "max lat", "function");
	for (size_t i = 0; i < nf && (!top || i < top); i++) {
		const struct auxcap_report_mem_func *mf = auxcap_report_get_mem_func(c->r, i);
		const struct auxcap_report_mem *x = &mf->m;

		fprintf(f, "  %6.2f%% %9" PRIu64 " %8" PRIu64 " %7.2f%% %7.2f%% %7.2f%% %8.1f %8" PRIu64
			   "  ",
			pct(x->lat, m->lat), x->accesses, x->stores,
			pct(auxcap_report_mem_l1_misses(x), x->accesses),
			pct(x->level[AUXCAP_REPORT_MEM_DRAM], x->accesses),
			pct(x->tlb_walks, x->accesses), mean(x->lat, x->accesses), x->lat_max);
		print_func(f, mf->func);
	}

	text_mem_objects(c);

	fprintf(f, "\nCache lines by L1 misses (%s%zu of %zu lines of %d bytes", top ? "top " : "",
		top && top < nl ? top : nl, nl, AUXCAP_REPORT_LINE_SIZE);
	if (untracked)
		fprintf(f, "; %" PRIu64 " accesses to lines past the first %d not counted here",
			untracked, AUXCAP_REPORT_MEM_LINES_MAX);
	fputs("):\n", f);
	fprintf(f, "  %-18s %7s %8s %9s %8s %8s%s  %-22s %s\n", "line", "pid", "L1 miss",
		"accesses", "mean lat", "threads", peer ? "     peer" : "", "data object",
		"functions (accesses)");
	for (size_t i = 0; i < nl && (!top || i < top); i++) {
		const struct auxcap_report_mem_line *l = auxcap_report_get_mem_line(c->r, i);
		char thr[32], var[256], np[32] = "";

		snprintf(thr, sizeof(thr), "%zu%s/%zu", l->threads, l->threads_more ? "+" : "",
			 l->store_threads);
		if (!auxcap_decode_data_name_at(c->d, l->pid, l->addr, l->time, var, sizeof(var)))
			snprintf(var, sizeof(var), "-");
		if (peer)
			snprintf(np, sizeof(np), " %8" PRIu64, l->m.peer);
		fprintf(f, "  0x%016" PRIx64 " %7d %8" PRIu64 " %9" PRIu64 " %8.1f %8s%s  %-22s",
			l->addr, l->pid, auxcap_report_mem_l1_misses(&l->m), l->m.accesses,
			mean(l->m.lat, l->m.accesses), thr, np, var);
		who_funcs(f, l);
	}
	if (nl)
		fputs("  (threads: those that accessed the line / those of them that stored to it;\n"
		      "   a line stored to by one thread and accessed by others is shared)\n",
		      f);
	if (nl && peer)
		fputs("  (peer: its loads another core's cache served, as the data source says)\n", f);
}

static int write_text(struct ctx *c)
{
	int r;

	text_header(c);
	if (c->a->latency.nr_syms) {
		text_latency(c);
		text_losses(c);
		return 0;
	}
	if (c->a->mem) {
		text_mem(c);
		text_losses(c);
		return 0;
	}
	text_threads(c);
	if (!c->a->per_thread) {
		text_dso_table(c, NULL);
		text_trace_table(c, NULL);
		if (c->a->call_graph)
			text_call_graph(c, NULL);
		r = text_sample_tables(c, NULL);
		if (r < 0)
			return r;
	} else {
		size_t n = auxcap_report_nr_threads(c->r), top = c->a->top ? c->a->top : n;

		for (size_t i = 0; i < n && i < top; i++) {
			const struct auxcap_report_thread *t = auxcap_report_get_thread(c->r, i);

			if (t->tid >= 0)
				fprintf(c->f, "\n== thread %d (%s)\n", t->tid,
					t->comm ? t->comm : "-");
			else
				fprintf(c->f, "\n== trace of an unknown thread, AUX queue %d\n",
					-1 - t->tid);
			text_dso_table(c, t);
			text_trace_table(c, t);
			if (c->a->call_graph)
				text_call_graph(c, t);
			r = text_sample_tables(c, t);
			if (r < 0)
				return r;
		}
	}
	text_losses(c);
	return 0;
}

/* ---- JSON ---------------------------------------------------------------------------- */

static void json_func_id(FILE *f, const struct auxcap_report_func *fn, bool per_thread)
{
	fputs("\"name\":", f);
	auxcap_out_json_str(f, fn->name);
	fputs(",\"dso\":", f);
	auxcap_out_json_str(f, fn->dso);
	if (fn->kernel)
		fputs(",\"addr\":null", f);
	else
		fprintf(f, ",\"addr\":\"0x%" PRIx64 "\"", fn->addr);
	fprintf(f, ",\"kernel\":%s", fn->kernel ? "true" : "false");
	if (per_thread && fn->tid >= 0)
		fprintf(f, ",\"tid\":%d,\"queue\":null", fn->tid);
	else if (per_thread)
		fprintf(f, ",\"tid\":null,\"queue\":%d", -1 - fn->tid);
}

static void json_note(FILE *f, const struct auxcap_report_note *n, bool gap)
{
	fprintf(f, "{\"time\":%" PRIu64 ",\"cpu\":", n->time);
	if (n->cpu >= 0)
		fprintf(f, "%d", n->cpu);
	else
		fputs("null", f);
	fputs(",\"tid\":", f);
	if (n->tid >= 0)
		fprintf(f, "%d", n->tid);
	else
		fputs("null", f);
	if (gap)
		fprintf(f, ",\"queue\":%d,\"offset\":%" PRIu64 ",\"errno\":%d", n->queue, n->offset,
			-n->err);
	else
		fprintf(f, ",\"code\":%d", n->err);
	if (n->ip)
		fprintf(f, ",\"ip\":\"0x%" PRIx64 "\"", n->ip);
	else
		fputs(",\"ip\":null", f);
	fputs(gap ? ",\"reason\":" : ",\"message\":", f);
	auxcap_out_json_str(f, n->what);
	putc('}', f);
}

/* ,"filter":{"pids":[..],"tids":[..],"comms":[..],"events":[..]} */
static void json_filter(FILE *f, const struct auxcap_decode_filter *flt)
{
	fputs(",\"filter\":{\"pids\":[", f);
	for (size_t i = 0; i < flt->nr_pids; i++)
		fprintf(f, "%s%d", i ? "," : "", (int)flt->pids[i]);
	fputs("],\"tids\":[", f);
	for (size_t i = 0; i < flt->nr_tids; i++)
		fprintf(f, "%s%d", i ? "," : "", (int)flt->tids[i]);
	fputs("],\"comms\":[", f);
	for (size_t i = 0; i < flt->nr_comms; i++) {
		if (i)
			putc(',', f);
		auxcap_out_json_str(f, flt->comms[i]);
	}
	fputs("],\"events\":[", f);
	for (size_t i = 0; i < flt->nr_events; i++) {
		if (i)
			putc(',', f);
		auxcap_out_json_str(f, flt->events[i]);
	}
	fputs("]}", f);
}

static void json_header(struct ctx *c)
{
	const struct auxcap_report_summary *s = c->s;
	const struct auxcap_perf_features *ft = auxcap_decode_features(c->d);
	const struct auxcap_perf_evsel *aux = auxcap_decode_aux_evsel(c->d);
	const struct auxcap_decode_info *info = auxcap_decode_get_info(c->d);
	FILE *f = c->f;
	struct snap_stats st;

	fputs("{\"file\":", f);
	auxcap_out_json_str(f, c->a->file);
	fputs(",\"backend\":", f);
	auxcap_out_json_str(f, info->backend);
	fputs(",\"events\":[", f);
	for (size_t i = 0; i < auxcap_decode_nr_evsels(c->d); i++) {
		const struct auxcap_perf_evsel *es = auxcap_decode_evsel(c->d, i);

		fprintf(f, "%s{\"name\":", i ? "," : "");
		auxcap_out_json_str(f, es->name);
		fprintf(f, ",\"type\":%u,\"config\":%" PRIu64 ",\"aux\":%s,\"samples\":%" PRIu64
			   "}",
			es->attr->type, (uint64_t)es->attr->config, es == aux ? "true" : "false",
			s->slots[i].samples);
	}
	fputs("],\"cmdline\":", f);
	if (ft && ft->nr_cmdline) {
		putc('[', f);
		for (size_t i = 0; i < ft->nr_cmdline; i++) {
			if (i)
				putc(',', f);
			auxcap_out_json_str(f, ft->cmdline[i]);
		}
		putc(']', f);
	} else {
		fputs("null", f);
	}
	if (cli_filter_get(&c->a->filter))
		json_filter(f, &c->a->filter.f);
	fputs(",\"host\":", f);
	if (ft && (ft->hostname || ft->osrelease || ft->arch)) {
		fputs("{\"hostname\":", f);
		auxcap_out_json_str(f, ft->hostname);
		fputs(",\"osrelease\":", f);
		auxcap_out_json_str(f, ft->osrelease);
		fputs(",\"arch\":", f);
		auxcap_out_json_str(f, ft->arch);
		if (ft->nr_cpus_online)
			fprintf(f, ",\"cpus_online\":%u}", ft->nr_cpus_online);
		else
			fputs(",\"cpus_online\":null}", f);
	} else {
		fputs("null", f);
	}
	if (s->has_span)
		fprintf(f, ",\"time\":{\"first\":%" PRIu64 ",\"last\":%" PRIu64
			   ",\"duration_ns\":%" PRIu64 "}",
			s->first_time, s->last_time, s->last_time - s->first_time);
	else
		fputs(",\"time\":null", f);
	fputs(",\"cpus\":[", f);
	for (size_t i = 0; i < s->nr_cpus; i++)
		fprintf(f, "%s%d", i ? "," : "", s->cpus[i]);
	fprintf(f, "],\"trace\":{\"queues\":%zu,\"bytes\":%" PRIu64 ",\"snapshot\":%s,"
		   "\"time_conversion\":%s,\"events\":%" PRIu64 ",\"timed\":%s,\"ns\":%" PRIu64
		   ",\"instructions\":%" PRIu64 ",\"branches\":%" PRIu64,
		s->nr_queues, s->aux_bytes, info->snapshot ? "true" : "false",
		info->has_time_conv ? "true" : "false", s->trace_events,
		s->trace_timed ? "true" : "false", s->trace_ns, s->insns, s->branches);
	if (s->trace_has_span)
		fprintf(f, ",\"first\":%" PRIu64 ",\"last\":%" PRIu64 "}", s->trace_first,
			s->trace_last);
	else
		fputs(",\"first\":null,\"last\":null}", f);
	snap_stats(ft, &st);
	fputs(",\"snapshots\":", f);
	if (st.n) {
		const char *sep = "";

		fprintf(f, "{\"count\":%zu,\"by_source\":{", st.n);
		for (unsigned int k = 0; k < AUXCAP_TRIGGER_SOURCE_MAX; k++) {
			if (!st.by_source[k])
				continue;
			fprintf(f, "%s", sep);
			auxcap_out_json_str(f, auxcap_trigger_source_name(k));
			fprintf(f, ":%" PRIu64, st.by_source[k]);
			sep = ",";
		}
		fprintf(f, "},\"latency_ns\":{\"min\":%" PRIu64 ",\"median\":%" PRIu64
			   ",\"max\":%" PRIu64 "},\"slow_calls\":%" PRIu64 ",\"slow_call_max_ns\":",
			st.lat_min, st.lat_med, st.lat_max, st.calls);
		if (st.calls)
			fprintf(f, "%" PRIu64 "}", st.call_max_ns);
		else
			fputs("null}", f);
	} else {
		fputs("null", f);
	}
}

static void json_threads(struct ctx *c)
{
	FILE *f = c->f;

	fputs(",\"threads\":[", f);
	for (size_t i = 0; i < auxcap_report_nr_threads(c->r); i++) {
		const struct auxcap_report_thread *t = auxcap_report_get_thread(c->r, i);

		fprintf(f, "%s{\"tid\":", i ? "," : "");
		if (t->tid >= 0)
			fprintf(f, "%d,\"queue\":null", t->tid);
		else
			fprintf(f, "null,\"queue\":%d", -1 - t->tid);
		fputs(",\"pid\":", f);
		if (t->pid >= 0)
			fprintf(f, "%d", t->pid);
		else
			fputs("null", f);
		fputs(",\"comm\":", f);
		auxcap_out_json_str(f, t->comm);
		fprintf(f, ",\"trace_ns\":%" PRIu64 ",\"instructions\":%" PRIu64
			   ",\"branches\":%" PRIu64 ",\"trace_events\":%" PRIu64 ",\"gaps\":%" PRIu64
			   ",\"gap_ns\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"first\":%" PRIu64
			   ",\"last\":%" PRIu64 "}",
			t->trace_ns, t->insns, t->branches, t->trace_events, t->gaps, t->gap_ns,
			t->samples, t->first_time, t->last_time);
	}
	putc(']', f);
}

static void json_functions(struct ctx *c)
{
	const struct auxcap_report_summary *s = c->s;
	size_t n = auxcap_report_nr_funcs(c->r), top = c->a->top, shown = 0;
	FILE *f = c->f;

	fprintf(f, ",\"sort\":\"%s\",\"functions_total\":%zu,\"functions\":[", sort_name(c->key),
		n);
	for (size_t i = 0; i < n && (!top || shown < top); i++) {
		const struct auxcap_report_func *fn = auxcap_report_get_func(c->r, i);
		bool first = true;

		fputs(shown++ ? ",{" : "{", f);
		json_func_id(f, fn, c->a->per_thread);
		fprintf(f, ",\"self_ns\":%" PRIu64 ",\"total_ns\":%" PRIu64
			   ",\"self_insns\":%" PRIu64 ",\"total_insns\":%" PRIu64
			   ",\"self_branches\":%" PRIu64 ",\"total_branches\":%" PRIu64
			   ",\"calls\":%" PRIu64 ",\"samples\":{",
			fn->self_ns, fn->total_ns, fn->self_insns, fn->total_insns,
			fn->self_branches, fn->total_branches, fn->calls);
		for (size_t k = 0; fn->samples && k < s->nr_slots; k++) {
			if (!fn->samples_total[k])
				continue;
			if (!first)
				putc(',', f);
			first = false;
			auxcap_out_json_str(f, slot_name(&s->slots[k], k, s->nr_slots));
			fprintf(f, ":{\"self\":%" PRIu64 ",\"total\":%" PRIu64 "}", fn->samples[k],
				fn->samples_total[k]);
		}
		fputs("}}", f);
	}
	putc(']', f);
}

static void json_objects(struct ctx *c)
{
	const struct auxcap_report_summary *s = c->s;
	size_t n = auxcap_report_nr_dsos(c->r), top = c->a->top;
	FILE *f = c->f;

	fprintf(f, ",\"objects_total\":%zu,\"objects\":[", n);
	for (size_t i = 0; i < n && (!top || i < top); i++) {
		const struct auxcap_report_dso *d = auxcap_report_get_dso(c->r, i);
		bool first = true;

		fputs(i ? ",{\"dso\":" : "{\"dso\":", f);
		auxcap_out_json_str(f, d->dso);
		fprintf(f, ",\"kernel\":%s", d->kernel ? "true" : "false");
		if (c->a->per_thread && d->tid >= 0)
			fprintf(f, ",\"tid\":%d,\"queue\":null", d->tid);
		else if (c->a->per_thread)
			fprintf(f, ",\"tid\":null,\"queue\":%d", -1 - d->tid);
		fprintf(f, ",\"self_ns\":%" PRIu64 ",\"self_insns\":%" PRIu64
			   ",\"self_branches\":%" PRIu64 ",\"functions\":%zu,\"samples\":{",
			d->self_ns, d->self_insns, d->self_branches, d->functions);
		for (size_t k = 0; k < s->nr_slots; k++) {
			if (!d->samples[k])
				continue;
			if (!first)
				putc(',', f);
			first = false;
			auxcap_out_json_str(f, slot_name(&s->slots[k], k, s->nr_slots));
			fprintf(f, ":%" PRIu64, d->samples[k]);
		}
		fputs("}}", f);
	}
	putc(']', f);
}

static int json_samples(struct ctx *c)
{
	const struct auxcap_report_summary *s = c->s;
	size_t n = auxcap_report_nr_funcs(c->r), top = c->a->top;
	FILE *f = c->f;
	bool first = true;
	int r;

	fputs(",\"samples\":[", f);
	for (size_t k = 0; k < s->nr_slots; k++) {
		size_t shown = 0;

		if (!s->slots[k].samples)
			continue;
		r = auxcap_report_sort(c->r, samples_key(c), k);
		if (r < 0)
			return r;
		fputs(first ? "{\"event\":" : ",{\"event\":", f);
		first = false;
		auxcap_out_json_str(f, slot_name(&s->slots[k], k, s->nr_slots));
		fprintf(f, ",\"trace_samples\":%s,\"samples\":%" PRIu64 ",\"traced\":%" PRIu64
			   ",\"aligned\":%" PRIu64 ",\"functions\":[",
			k + 1 == s->nr_slots ? "true" : "false", s->slots[k].samples,
			s->slots[k].traced, s->slots[k].aligned);
		for (size_t i = 0; i < n && (!top || shown < top); i++) {
			const struct auxcap_report_func *fn = auxcap_report_get_func(c->r, i);

			if (!fn->samples || !fn->samples_total[k])
				continue;
			fputs(shown++ ? ",{" : "{", f);
			json_func_id(f, fn, c->a->per_thread);
			fprintf(f, ",\"self\":%" PRIu64 ",\"total\":%" PRIu64 "}", fn->samples[k],
				fn->samples_total[k]);
		}
		fputs("]}", f);
	}
	putc(']', f);
	return auxcap_report_sort(c->r, c->key, 0);
}

static void json_losses(struct ctx *c)
{
	const struct auxcap_report_summary *s = c->s;
	FILE *f = c->f;
	uint64_t unaligned = 0;

	for (size_t i = 0; i + 1 < s->nr_slots; i++)
		unaligned += s->slots[i].traced - s->slots[i].aligned;
	fprintf(f, ",\"losses\":{\"no_loss\":%s,\"lost\":{\"records\":%" PRIu64
		   ",\"events\":%" PRIu64 "},\"lost_samples\":{\"records\":%" PRIu64
		   ",\"samples\":%" PRIu64 "},\"aux_truncated\":%" PRIu64 ",\"aux_partial\":%" PRIu64
		   ",\"aux_collision\":%" PRIu64 ",\"aux_flagged_bytes\":%" PRIu64
		   ",\"aux_holes\":%" PRIu64 ",\"auxtrace_errors\":{\"count\":%" PRIu64
		   ",\"first\":[",
		s->no_loss ? "true" : "false", s->lost_records, s->lost, s->lost_samples_records,
		s->lost_samples, s->aux_truncated, s->aux_partial, s->aux_collision,
		s->aux_flagged_bytes, s->discontinuities, s->auxtrace_errors);
	for (size_t i = 0; i < s->nr_error_notes; i++) {
		if (i)
			putc(',', f);
		json_note(f, &s->error_notes[i], false);
	}
	fprintf(f, "]},\"gaps\":{\"count\":%" PRIu64 ",\"lost_ns\":%" PRIu64 ",\"first\":[",
		s->gaps, s->gap_ns);
	for (size_t i = 0; i < s->nr_gap_notes; i++) {
		if (i)
			putc(',', f);
		json_note(f, &s->gap_notes[i], true);
	}
	fprintf(f, "]},\"missing_binaries\":%" PRIu64 ",\"samples_not_found\":%" PRIu64 "}",
		s->missing_binaries, unaligned);
}

static void json_hist(FILE *f, const char *key, const uint64_t *h)
{
	bool first = true;

	fprintf(f, ",\"%s\":[", key);
	for (unsigned k = 0; k < AUXCAP_REPORT_HIST_BUCKETS; k++) {
		uint64_t lo, hi;

		if (!h[k])
			continue;
		bucket_range(k, &lo, &hi);
		fprintf(f, "%s{\"lo\":%" PRIu64 ",\"hi\":%" PRIu64 ",\"count\":%" PRIu64 "}",
			first ? "" : ",", lo, hi, h[k]);
		first = false;
	}
	putc(']', f);
}

static void json_latency(struct ctx *c)
{
	FILE *f = c->f;

	fputs(",\"latency\":[", f);
	for (size_t i = 0; i < auxcap_report_nr_calls(c->r); i++) {
		const struct auxcap_report_calls *k = auxcap_report_get_calls(c->r, i);

		fputs(i ? ",{" : "{", f);
		json_func_id(f, k->func, c->a->per_thread);
		fprintf(f, ",\"calls\":%" PRIu64 ",\"timed\":%" PRIu64 ",\"across_gap\":%" PRIu64
			   ",\"unfinished\":%" PRIu64,
			k->calls, k->timed, k->across_gap, k->unfinished);
		if (k->running_ns)
			fprintf(f, ",\"running\":{\"start\":%" PRIu64 ",\"ns\":%" PRIu64
				   ",\"tid\":%d}",
				k->running_start, k->running_ns,
				k->running_tid >= 0 ? k->running_tid : -1);
		else
			fputs(",\"running\":null", f);
		if (k->timed)
			fprintf(f, ",\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 ",\"sum_ns\":%" PRIu64,
				k->min_ns, k->max_ns, k->sum_ns);
		else
			fputs(",\"min_ns\":null,\"max_ns\":null,\"sum_ns\":null", f);
		fprintf(f, ",\"min_insns\":%" PRIu64 ",\"max_insns\":%" PRIu64
			   ",\"sum_insns\":%" PRIu64,
			k->min_insns, k->max_insns, k->sum_insns);
		json_hist(f, "hist_ns", k->hist_ns);
		json_hist(f, "hist_insns", k->hist_insns);
		fputs(",\"slowest\":[", f);
		for (size_t j = 0; j < k->nr_slowest; j++) {
			const struct auxcap_report_call *x = &k->slowest[j];

			fprintf(f, "%s{\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"timed\":%s",
				j ? "," : "", x->start, x->end, x->timed ? "true" : "false");
			if (x->timed)
				fprintf(f, ",\"ns\":%" PRIu64, x->ns);
			else
				fputs(",\"ns\":null", f);
			fprintf(f, ",\"insns\":%" PRIu64 ",\"trace_ns\":%" PRIu64
				   ",\"callees_ns\":%" PRIu64 ",\"callees\":[",
				x->insns, x->trace_ns, x->callees_ns);
			for (size_t m = 0; m < x->nr_callees; m++) {
				fputs(m ? ",{" : "{", f);
				json_func_id(f, x->callees[m].func, false);
				fprintf(f, ",\"ns\":%" PRIu64 ",\"calls\":%" PRIu64 "}",
					x->callees[m].ns, x->callees[m].calls);
			}
			fputs("],\"tid\":", f);
			if (x->tid >= 0)
				fprintf(f, "%d", x->tid);
			else
				fputs("null", f);
			fputs(",\"cpu\":", f);
			if (x->cpu >= 0)
				fprintf(f, "%d", x->cpu);
			else
				fputs("null", f);
			fputs(",\"caller\":", f);
			if (x->caller) {
				putc('{', f);
				json_func_id(f, x->caller, false);
				putc('}', f);
			} else {
				fputs("null", f);
			}
			putc('}', f);
		}
		fputs("]}", f);
	}
	putc(']', f);
}

/* --call-graph: every edge of the trace's call graph. */
static void json_call_graph(struct ctx *c)
{
	FILE *f = c->f;

	fputs(",\"call_graph\":[", f);
	for (size_t i = 0; i < auxcap_report_nr_edges(c->r); i++) {
		const struct auxcap_report_edge *e = auxcap_report_get_edge(c->r, i);

		fputs(i ? ",{\"caller\":{" : "{\"caller\":{", f);
		json_func_id(f, e->caller, c->a->per_thread);
		fputs("},\"callee\":{", f);
		json_func_id(f, e->callee, c->a->per_thread);
		fprintf(f, "},\"calls\":%" PRIu64 ",\"ns\":%" PRIu64 ",\"insns\":%" PRIu64 "}",
			e->calls, e->ns, e->insns);
	}
	putc(']', f);
}

static void json_mem_row(FILE *f, const struct auxcap_report_mem *m)
{
	fprintf(f, "\"accesses\":%" PRIu64 ",\"loads\":%" PRIu64 ",\"stores\":%" PRIu64
		   ",\"levels\":{",
		m->accesses, m->loads, m->stores);
	for (int k = 0; k < AUXCAP_REPORT_MEM_LEVELS; k++)
		fprintf(f, "%s\"%s\":{\"accesses\":%" PRIu64 ",\"lat_sum\":%" PRIu64
			   ",\"lat_max\":%" PRIu64 "}",
			k ? "," : "", auxcap_report_mem_level_key(k), m->level[k], m->level_lat[k],
			m->level_lat_max[k]);
	fprintf(f, "},\"remote\":%" PRIu64 ",\"peer\":%" PRIu64 ",\"tlb_walks\":%" PRIu64
		   ",\"lat_sum\":%" PRIu64 ",\"lat_max\":%" PRIu64 ",\"xlat_lat_sum\":%" PRIu64,
		m->remote, m->peer, m->tlb_walks, m->lat, m->lat_max, m->xlat_lat);
}

/* "sources": the accesses by data source, null when the records said none. */
static void json_mem_sources(FILE *f, const struct auxcap_report_mem_sources *s)
{
	if (!have_sources(s)) {
		fputs(",\"sources\":null", f);
		return;
	}
	fputs(",\"sources\":{", f);
	for (int k = 0; k < AUXCAP_TRACE_SRC_COUNT; k++)
		fprintf(f, "%s\"%s\":{\"accesses\":%" PRIu64 ",\"lat_sum\":%" PRIu64
			   ",\"lat_max\":%" PRIu64 "}",
			k ? "," : "", auxcap_report_mem_source_key((uint32_t)k), s->accesses[k],
			s->lat[k], s->lat_max[k]);
	putc('}', f);
}

/* A line's "object": the variable holding its first byte, or null; "map": its mapping. */
static void json_data_object(struct ctx *c, const struct auxcap_report_mem_line *l)
{
	const char *name, *dso = NULL;
	uint64_t off;

	if (auxcap_decode_data_symbolize_at(c->d, l->pid, l->addr, l->time, &name, &off, &dso) !=
	    1) {
		fputs(",\"object\":null", c->f);
	} else {
		fputs(",\"object\":{\"name\":", c->f);
		auxcap_out_json_str(c->f, name);
		fprintf(c->f, ",\"off\":%" PRIu64 ",\"dso\":", off);
		auxcap_out_json_str(c->f, dso);
		putc('}', c->f);
	}
	/* the mapping it is in: [stack], [heap], //anon, a file */
	if (auxcap_decode_data_map_at(c->d, l->pid, l->addr, l->time, &name, &off) != 1) {
		fputs(",\"map\":null", c->f);
		return;
	}
	fputs(",\"map\":{\"name\":", c->f);
	auxcap_out_json_str(c->f, name);
	fprintf(c->f, ",\"off\":%" PRIu64 "}", off);
}

/* --mem: the sum, every function, the lines (--top of them). */
/* A line's or object's threads and functions, and the closing brace. */
static void json_mem_who(FILE *f, const struct auxcap_report_mem_line *l)
{
	fprintf(f, ",\"threads\":%zu,\"threads_more\":%s,\"store_threads\":%zu,\"funcs\":[",
		l->threads, l->threads_more ? "true" : "false", l->store_threads);
	for (size_t k = 0; k < l->nr_funcs; k++) {
		fputs(k ? ",{" : "{", f);
		if (l->funcs[k].func)
			json_func_id(f, l->funcs[k].func, false);
		else
			fputs("\"name\":null,\"dso\":null,\"addr\":null,\"kernel\":false", f);
		fprintf(f, ",\"accesses\":%" PRIu64 "}", l->funcs[k].accesses);
	}
	fprintf(f, "],\"other_funcs\":%" PRIu64 "}", l->other_funcs);
}

static void json_mem(struct ctx *c)
{
	size_t nf = auxcap_report_nr_mem_funcs(c->r), nl = auxcap_report_nr_mem_lines(c->r);
	size_t no = auxcap_report_nr_mem_objects(c->r);
	size_t top = c->a->top;
	FILE *f = c->f;

	fputs(",\"mem\":{", f);
	json_mem_row(f, auxcap_report_get_mem(c->r));
	json_mem_sources(f, auxcap_report_get_mem_sources(c->r));
	fprintf(f, ",\"line_size\":%d,\"lines_total\":%zu,\"lines_untracked_accesses\":%" PRIu64
		   ",\"functions\":[",
		AUXCAP_REPORT_LINE_SIZE, nl, auxcap_report_mem_lines_untracked(c->r));
	for (size_t i = 0; i < nf; i++) {
		const struct auxcap_report_mem_func *mf = auxcap_report_get_mem_func(c->r, i);

		fputs(i ? ",{" : "{", f);
		json_func_id(f, mf->func, false);
		putc(',', f);
		json_mem_row(f, &mf->m);
		putc('}', f);
	}
	fputs("],\"lines\":[", f);
	for (size_t i = 0; i < nl && (!top || i < top); i++) {
		const struct auxcap_report_mem_line *l = auxcap_report_get_mem_line(c->r, i);

		fprintf(f, "%s{\"addr\":\"0x%" PRIx64 "\",\"pid\":", i ? "," : "", l->addr);
		if (l->pid >= 0)
			fprintf(f, "%d,", l->pid);
		else
			fputs("null,", f);
		json_mem_row(f, &l->m);
		json_data_object(c, l);
		json_mem_who(f, l);
	}
	fprintf(f, "],\"objects_total\":%zu,\"objects_untracked_accesses\":%" PRIu64
		   ",\"objects\":[",
		no, auxcap_report_mem_objects_untracked(c->r));
	for (size_t i = 0; i < no && (!top || i < top); i++) {
		const struct auxcap_report_mem_object *o = auxcap_report_get_mem_object(c->r, i);
		static const char *const kinds[] = { "variable", "mapping", "unknown" };

		fprintf(f, "%s{\"kind\":\"%s\",\"name\":", i ? "," : "",
			(unsigned)o->kind < 3 ? kinds[o->kind] : "unknown");
		auxcap_out_json_str(f, o->name);
		fputs(",\"dso\":", f);
		auxcap_out_json_str(f, o->dso);
		if (o->use.addr)
			fprintf(f, ",\"addr\":\"0x%" PRIx64 "\"", o->use.addr);
		else
			fputs(",\"addr\":null", f);
		fputs(",\"pid\":", f);
		if (o->use.pid >= 0)
			fprintf(f, "%d,", o->use.pid);
		else
			fputs("null,", f);
		json_mem_row(f, &o->use.m);
		json_mem_who(f, &o->use);
	}
	fputs("]}", f);
}

static int write_json(struct ctx *c)
{
	int r;

	json_header(c);
	json_threads(c);
	json_functions(c);
	json_objects(c);
	r = json_samples(c);
	if (r < 0)
		return r;
	json_losses(c);
	if (c->a->latency.nr_syms)
		json_latency(c);
	if (c->a->call_graph)
		json_call_graph(c);
	if (c->a->mem)
		json_mem(c);
	fputs("}\n", c->f);
	return 0;
}

/* ---- the command ----------------------------------------------------------------------- */

static int cmd_report_run(int argc, char **argv)
{
	struct report_args a;
	struct auxcap_report_opts ro = { .sz = sizeof(ro) };
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d = NULL;
	struct auxcap_report *rep = NULL;
	struct ctx c;
	FILE *out = stdout;
	int r, ret = CLI_ERR;

	memset(&a, 0, sizeof(a));
	if (parse_args(argc, argv, &a) < 0)
		return CLI_ERR;
	/* The report is printed once decoding is over: the bar never cuts into it. */
	if (cli_capture_open("report", a.file, cli_progress_begin(a.progress, false), a.raw_names, a.vmlinux,
			     &d) < 0)
		goto out;
	ro.per_thread = a.per_thread;
	ro.filter = cli_filter_get(&a.filter);
	ro.call_graph = a.call_graph;
	ro.mem = a.mem;
	if (a.latency.nr_syms) {
		if (!auxcap_decode_get_info(d)->nr_queues) {
			cli_err("--latency times calls by the trace's calls and returns, and '%s' has "
				"no AUX trace (record with -e intel_pt//u, or --emulate)",
				a.file);
			goto out;
		}
		ro.calls_of = want_calls;
		ro.calls_arg = &a.latency;
		ro.slowest = a.slowest;
	}
	r = auxcap_report_new(d, &ro, &rep);
	while (r == 0 && (r = auxcap_decode_next(d, &ev)) == 1)
		r = auxcap_report_event(rep, ev);
	if (r == 0)
		r = auxcap_report_finish(rep);
	cli_progress_end();
	if (r < 0) {
		cli_err("decoding '%s' stopped: %s", a.file,
			*auxcap_decode_error(d) ? auxcap_decode_error(d) : strerror(-r));
		goto out;
	}
	c = (struct ctx){ &a, d, rep, auxcap_report_get_summary(rep), NULL,
			  a.sort ? a.sort : auxcap_report_auto_key(rep) };
	if (a.sort && auxcap_report_sort(rep, a.sort, 0) < 0) {
		cli_err("cannot sort the functions: %s", strerror(ENOMEM));
		goto out;
	}
	if (a.output && !(out = cli_output_open(a.output))) {
		out = stdout;
		goto out;
	}
	c.f = out;
	if ((a.latency.nr_syms && check_latency(&c) < 0) || (a.mem && check_mem(&c) < 0))
		goto out;
	r = a.json ? write_json(&c) : write_text(&c);
	if (r < 0) {
		cli_err("cannot write the report: %s", strerror(-r));
		goto out;
	}
	ret = CLI_OK;
out:
	cli_progress_end();
	ret = cli_output_close(out, a.output, "the report", ret);
	auxcap_report_free(rep);
	auxcap_decode_close(d);
	return ret;
}

const struct cli_cmd cli_cmd_report = {
	.name = "report",
	.summary = "summarize a capture: span, threads, hot functions (trace and samples), losses",
	.run = cmd_report_run,
};
