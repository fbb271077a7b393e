/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap diff BASE NEW: where two captures differ, function by function (perf diff).
 *
 * Each capture goes through the report's aggregation (auxcap/decode_report.h); a function's
 * share of its capture is its self trace time over the trace time, its self instructions over
 * the instructions, or its self samples of one event over that event's samples.  Functions are
 * matched by name and file name (addresses move between runs); code without a symbol counts
 * as one "[unknown]" entry per file.  The table is ordered by the change of share, largest
 * first.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxcap/backend.h"
#include "auxcap/decode.h"
#include "auxcap/decode_out.h"
#include "auxcap/decode_report.h"
#include "cli.h"

#define TOP_DEFAULT 20

enum metric { M_AUTO, M_TIME, M_INSNS, M_SAMPLES };

static const char *const metric_names[] = { "auto", "time", "insns", "samples" };

struct diff_args {
	const char *file[2];
	const char *output;
	const char *event; /* --event: the samples of this event */
	enum metric metric;
	size_t top;
	bool json;
	bool raw_names; /* --no-demangle */
};

/* One capture. */
struct side {
	const char *file;
	bool raw_names;
	struct auxcap_decode *d;
	struct auxcap_report *r;
	const struct auxcap_report_summary *s;
	size_t slot;	/* M_SAMPLES: the event's sample slot */
	uint64_t total; /* the metric over the whole capture */
};

/* A function of one side; the two sides' are merged by (name, dso). */
struct entry {
	const char *name; /* "[unknown]", "[kernel]" for code without a symbol */
	const char *dso;  /* the file's last path component, "" if not known */
	int side;
	uint64_t v;
};

/* A function of either side, after the merge. */
struct row {
	const char *name, *dso;
	uint64_t v[2];
	double share[2], delta; /* percent */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: auxcap diff BASE NEW [options]      (two captures: before, after)\n"
		"\n"
		"Compare two captures function by function, as perf diff: each function's share\n"
		"of its capture in BASE and NEW and the change, largest change first.  Functions\n"
		"are matched by name and file.\n"
		"\n"
		"  --by METRIC            time (self trace time over the traced time), insns (self\n"
		"                         instructions), samples (self samples of one event);\n"
		"                         default: time if both traces have it, else insns, else\n"
		"                         samples\n"
		"  --event NAME           with samples: this event's (default: the first event\n"
		"                         both captures have samples of)\n"
		"  --top N                functions shown (default %d; 0: all)\n"
		"  --format FMT           text (default) or json (one object)\n"
		"  -o, --output OUT       write there instead of standard output\n"
		"  --no-demangle          C++ and Rust functions by their mangled names\n"
		"  -h, --help             this text\n",
		TOP_DEFAULT);
}

static int parse_args(int argc, char **argv, struct diff_args *a)
{
	size_t nfiles = 0;
	int r;

	a->top = TOP_DEFAULT;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *v;

		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			usage(stdout);
			exit(CLI_OK);
		} else if (cli_is_opt(arg, "--by")) {
			size_t k;

			v = cli_opt_value(argc, argv, &i, "--by");
			for (k = 1; v && k < sizeof(metric_names) / sizeof(metric_names[0]); k++)
				if (!strcmp(v, metric_names[k]))
					break;
			if (!v || k == sizeof(metric_names) / sizeof(metric_names[0])) {
				cli_err("bad --by '%s': use time, insns or samples", v ? v : "");
				return -EINVAL;
			}
			a->metric = (enum metric)k;
		} else if (cli_is_opt(arg, "--event")) {
			a->event = cli_opt_value(argc, argv, &i, "--event");
			if (!a->event || !*a->event) {
				cli_err("--event needs an event name, e.g. --event cpu-clock");
				return -EINVAL;
			}
		} else if ((r = cli_top_opt(argc, argv, &i, &a->top)) != 0) {
			if (r < 0)
				return r;
		} else if (!strcmp(arg, "--no-demangle")) {
			a->raw_names = true;
		} else if (cli_is_opt(arg, "--format")) {
			v = cli_opt_value(argc, argv, &i, "--format");
			if (!v || (strcmp(v, "text") && strcmp(v, "json"))) {
				cli_err("bad --format '%s': use text or json", v ? v : "");
				return -EINVAL;
			}
			a->json = !strcmp(v, "json");
		} else if ((r = cli_output_opt(argc, argv, &i, &a->output)) != 0) {
			if (r < 0)
				return r;
		} else if (arg[0] == '-' && arg[1]) {
			cli_err("unknown option '%s' (auxcap diff --help lists them)", arg);
			return -EINVAL;
		} else if (nfiles == 2) {
			cli_err("diff takes two captures (BASE NEW), not '%s' too", arg);
			return -EINVAL;
		} else {
			a->file[nfiles++] = arg;
		}
	}
	if (nfiles != 2) {
		cli_err("diff needs two captures: auxcap diff BASE NEW (e.g. before.data after.data)");
		return -EINVAL;
	}
	if (a->event && a->metric != M_AUTO && a->metric != M_SAMPLES) {
		cli_err("--event picks the samples to compare: it goes with --by samples, not --by %s",
			metric_names[a->metric]);
		return -EINVAL;
	}
	if (a->event)
		a->metric = M_SAMPLES;
	return 0;
}

/* Decode @s->file into a report. */
static int side_open(struct side *s)
{
	int r = cli_capture_open("diff", s->file, false, s->raw_names, NULL, &s->d);

	if (r < 0)
		return r;
	r = auxcap_report_run(s->d, NULL, &s->r);
	if (r < 0) {
		cli_err("decoding '%s' stopped: %s", s->file,
			*auxcap_decode_error(s->d) ? auxcap_decode_error(s->d) : strerror(-r));
		return r;
	}
	s->s = auxcap_report_get_summary(s->r);
	return 0;
}

/* The sample slot of event @name in @s (the first with samples if @name is NULL), or -1. */
static long slot_of(const struct side *s, const char *name)
{
	for (size_t k = 0; k + 1 < s->s->nr_slots; k++) {
		const struct auxcap_report_slot *sl = &s->s->slots[k];

		if (sl->samples && sl->name && (!name || !strcmp(sl->name, name)))
			return (long)k;
	}
	return -1;
}

static const char *slot_name(const struct side *s, size_t k)
{
	return s->s->slots[k].name;
}

/* The metric both captures have (--by, else the first of time, insns, samples); the samples'
 * slots.  Prints why and returns -EINVAL when they have none in common. */
static int pick_metric(struct diff_args *a, struct side *sd)
{
	bool timed = sd[0].s->trace_timed && sd[1].s->trace_timed && sd[0].s->trace_ns &&
		     sd[1].s->trace_ns;
	bool insns = sd[0].s->insns && sd[1].s->insns;
	const char *ev = a->event;

	if (a->metric == M_AUTO)
		a->metric = timed ? M_TIME : insns ? M_INSNS : M_SAMPLES;
	if (a->metric == M_TIME && !timed) {
		cli_err("--by time: '%s' has no trace time (a trace without timing, or no trace); "
			"use --by insns or --by samples",
			sd[sd[0].s->trace_timed && sd[0].s->trace_ns].file); /* the one without */
		return -EINVAL;
	}
	if (a->metric == M_INSNS && !insns) {
		cli_err("--by insns: '%s' has no instruction counts from a trace; use --by samples",
			sd[sd[0].s->insns != 0].file);
		return -EINVAL;
	}
	if (a->metric != M_SAMPLES)
		return 0;
	if (!ev) {
		/* the first event of BASE with samples that NEW has samples of too */
		for (size_t k = 0; k + 1 < sd[0].s->nr_slots && !ev; k++)
			if (sd[0].s->slots[k].samples && slot_name(&sd[0], k) &&
			    slot_of(&sd[1], slot_name(&sd[0], k)) >= 0)
				ev = slot_name(&sd[0], k);
		if (!ev) {
			cli_err("'%s' and '%s' have no trace time, instructions or samples of one "
				"event in common to compare",
				sd[0].file, sd[1].file);
			return -EINVAL;
		}
	}
	for (int i = 0; i < 2; i++) {
		long k = slot_of(&sd[i], ev);

		if (k < 0) {
			cli_err("'%s' has no samples of event '%s' (auxcap info lists its events)",
				sd[i].file, ev);
			return -EINVAL;
		}
		sd[i].slot = (size_t)k;
	}
	a->event = ev;
	return 0;
}

static uint64_t metric_of(const struct diff_args *a, const struct side *s,
			  const struct auxcap_report_func *f)
{
	switch (a->metric) {
	case M_TIME:
		return f->self_ns;
	case M_INSNS:
		return f->self_insns;
	default:
		return f->samples ? f->samples[s->slot] : 0;
	}
}

static int cmp_entry(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	return c ? c : strcmp(a->dso, b->dso);
}

static int cmp_row(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	double da = a->delta < 0 ? -a->delta : a->delta, db = b->delta < 0 ? -b->delta : b->delta;
	int c;

	if (da != db)
		return da < db ? 1 : -1;
	if (a->share[0] != b->share[0])
		return a->share[0] < b->share[0] ? 1 : -1;
	c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->dso, b->dso);
}

/* The functions of both sides with their shares, by change (*@ret owned by the caller). */
static int make_rows(const struct diff_args *a, struct side *sd, struct row **ret, size_t *ret_n,
		     size_t *ret_only)
{
	size_t n = 0, cap = 0, nrows = 0;
	struct entry *e = NULL;
	struct row *rows;

	for (int i = 0; i < 2; i++) {
		size_t nf = auxcap_report_nr_funcs(sd[i].r);
		struct entry *ne = realloc(e, (cap + nf + 1) * sizeof(*e));

		if (!ne) {
			free(e);
			return -ENOMEM;
		}
		e = ne;
		cap += nf + 1;
		sd[i].total = a->metric == M_TIME    ? sd[i].s->trace_ns
			      : a->metric == M_INSNS ? sd[i].s->insns
						     : sd[i].s->slots[sd[i].slot].samples;
		for (size_t j = 0; j < nf; j++) {
			const struct auxcap_report_func *f = auxcap_report_get_func(sd[i].r, j);
			uint64_t v = metric_of(a, &sd[i], f);

			if (!v)
				continue;
			e[n++] = (struct entry){ f->name ? f->name : f->kernel ? "[kernel]" : "[unknown]",
						 f->dso ? cli_base_name(f->dso) : "", i, v };
		}
	}
	qsort(e, n, sizeof(*e), cmp_entry);
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		free(e);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (!i || cmp_entry(&e[i - 1], &e[i])) {
			rows[nrows].name = e[i].name;
			rows[nrows].dso = e[i].dso;
			nrows++;
		}
		rows[nrows - 1].v[e[i].side] += e[i].v;
	}
	free(e);
	*ret_only = 0;
	for (size_t i = 0; i < nrows; i++) {
		struct row *rw = &rows[i];

		for (int s = 0; s < 2; s++)
			rw->share[s] = sd[s].total ? 100.0 * (double)rw->v[s] / (double)sd[s].total
						   : 0;
		rw->delta = rw->share[1] - rw->share[0];
		*ret_only += !rw->v[0] || !rw->v[1];
	}
	qsort(rows, nrows, sizeof(*rows), cmp_row);
	*ret = rows;
	*ret_n = nrows;
	return 0;
}

static const char *metric_title(const struct diff_args *a)
{
	switch (a->metric) {
	case M_TIME:
		return "self trace time, share of the traced time";
	case M_INSNS:
		return "self instructions, share of the traced instructions";
	default:
		return "self samples, share of the event's samples";
	}
}

static void total_text(FILE *f, const struct diff_args *a, const struct side *s)
{
	if (a->metric == M_TIME)
		fprintf(f, "%.3f s traced", (double)s->total / 1e9);
	else if (a->metric == M_INSNS)
		fprintf(f, "%" PRIu64 " instructions", s->total);
	else
		fprintf(f, "%" PRIu64 " %s samples", s->total, a->event);
}

static void write_text(FILE *f, const struct diff_args *a, const struct side *sd,
		       const struct row *rows, size_t n, size_t only)
{
	size_t show = a->top && a->top < n ? a->top : n;

	fprintf(f, "# auxcap diff of %s (base) and %s (new)\n", sd[0].file, sd[1].file);
	fprintf(f, "# metric:    %s%s%s\n", metric_title(a), a->event ? ": " : "",
		a->event ? a->event : "");
	for (int i = 0; i < 2; i++) {
		fprintf(f, "# %s:%s", i ? "new" : "base", i ? "       " : "      ");
		total_text(f, a, &sd[i]);
		putc('\n', f);
	}
	fprintf(f, "# functions: %zu, %zu of them in one capture only\n\n", n, only);
	fprintf(f, "  %8s %8s %9s  %s\n", "base%", "new%", "delta", "function");
	for (size_t i = 0; i < show; i++) {
		const struct row *rw = &rows[i];

		fprintf(f, "  %7.2f%% %7.2f%% %+8.2f%%  %s", rw->share[0], rw->share[1], rw->delta,
			rw->name);
		cli_print_dso(f, *rw->dso ? rw->dso : NULL);
		if (!rw->v[0] || !rw->v[1])
			fputs(rw->v[0] ? "  (base only)" : "  (new only)", f);
		putc('\n', f);
	}
	if (show < n)
		fprintf(f, "  ... %zu more (--top 0 shows all)\n", n - show);
}

static void write_json(FILE *f, const struct diff_args *a, const struct side *sd,
		       const struct row *rows, size_t n)
{
	size_t show = a->top && a->top < n ? a->top : n;

	fputs("{\"base\":", f);
	auxcap_out_json_str(f, sd[0].file);
	fputs(",\"new\":", f);
	auxcap_out_json_str(f, sd[1].file);
	fprintf(f, ",\"metric\":\"%s\",\"event\":", metric_names[a->metric]);
	auxcap_out_json_str(f, a->event);
	fprintf(f, ",\"base_total\":%" PRIu64 ",\"new_total\":%" PRIu64
		   ",\"functions_total\":%zu,\"functions\":[",
		sd[0].total, sd[1].total, n);
	for (size_t i = 0; i < show; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		auxcap_out_json_str(f, rows[i].name);
		fputs(",\"dso\":", f);
		auxcap_out_json_str(f, *rows[i].dso ? rows[i].dso : NULL);
		fprintf(f, ",\"base\":%" PRIu64 ",\"new\":%" PRIu64
			   ",\"base_share\":%.6f,\"new_share\":%.6f,\"delta\":%.6f}",
			rows[i].v[0], rows[i].v[1], rows[i].share[0], rows[i].share[1],
			rows[i].delta);
	}
	fputs("]}\n", f);
}

static int cmd_diff_run(int argc, char **argv)
{
	struct diff_args a;
	struct side sd[2];
	struct row *rows = NULL;
	size_t n = 0, only = 0;
	FILE *out = stdout;
	int ret = CLI_ERR;

	memset(&a, 0, sizeof(a));
	memset(sd, 0, sizeof(sd));
	if (parse_args(argc, argv, &a) < 0)
		return CLI_ERR;
	for (int i = 0; i < 2; i++) {
		sd[i].file = a.file[i];
		sd[i].raw_names = a.raw_names;
		if (side_open(&sd[i]) < 0)
			goto out;
	}
	if (pick_metric(&a, sd) < 0)
		goto out;
	if (make_rows(&a, sd, &rows, &n, &only) < 0) {
		cli_err("cannot compare the captures: %s", strerror(ENOMEM));
		goto out;
	}
	if (a.output && !(out = cli_output_open(a.output))) {
		out = stdout;
		goto out;
	}
	if (a.json)
		write_json(out, &a, sd, rows, n);
	else
		write_text(out, &a, sd, rows, n, only);
	ret = CLI_OK;
out:
	ret = cli_output_close(out, a.output, "the diff", ret);
	free(rows);
	for (int i = 0; i < 2; i++) {
		auxcap_report_free(sd[i].r);
		auxcap_decode_close(sd[i].d);
	}
	return ret;
}

const struct cli_cmd cli_cmd_diff = {
	.name = "diff",
	.summary = "compare two captures function by function (perf diff): shares and changes",
	.run = cmd_diff_run,
};
