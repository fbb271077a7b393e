/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap annotate FILE [SYMBOL...]: functions instruction by instruction (perf annotate),
 * with the trace's exact count of each instruction's runs and taken branches beside the
 * counter samples at it, and the source lines (auxcap/decode_annotate.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxcap/backend.h"
#include "auxcap/decode.h"
#include "auxcap/decode_annotate.h"
#include "auxcap/decode_out.h"
#include "cli.h"
#include "progress.h"

#define MAX_SYMS 32
#define MAX_SRC_FILES 32

struct annotate_args {
	const char *file;
	bool raw_names; /* --no-demangle */
	const char *vmlinux; /* -k, --vmlinux */
	const char *syms[MAX_SYMS];
	size_t nr_syms;
	const char *dso;
	const char *output;
	size_t top; /* functions shown without SYMBOL (--lines: source lines); 0: all */
	bool top_set;
	bool lines; /* --lines: the source lines of the functions, hottest first */
	bool json;
	bool lcov; /* --format lcov: line coverage of the files of code */
	bool no_source;
	enum cli_progress_mode progress;
	struct cli_filter filter;
};

/* A source file read for its lines (NULL @text: not readable). */
struct src_file {
	char *path; /* owned: the file's name, in its compilation directory if relative */
	char *text;
	size_t *line; /* offsets of the lines' starts; line N at [N - 1] */
	size_t nr_lines;
};

struct actx {
	const struct annotate_args *a;
	struct auxcap_decode *d;
	struct auxcap_annotate *an;
	const struct auxcap_annotate_summary *s;
	FILE *f;
	struct src_file src[MAX_SRC_FILES];
	size_t nr_src;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: auxcap annotate FILE [SYMBOL...] [options]   (a perf.data capture)\n"
		"\n"
		"Show functions instruction by instruction, as perf annotate: how many times the\n"
		"trace says each instruction ran (exact counts of the traced span, not samples),\n"
		"how often each branch was taken, the counter samples at each instruction, and\n"
		"the source lines.  Without SYMBOL: the functions that ran the most instructions.\n"
		"\n"
		"  SYMBOL                 functions of this name (every file that has one)\n"
		"  --dso NAME             only functions of this file (its name or path)\n"
		"  --top N                without SYMBOL: functions shown (default 1; 0: all that\n"
		"                         ran or have samples); with --lines: lines (default 20)\n"
		"  --lines                the source lines of the functions (all without SYMBOL)\n"
		"                         by instructions run there, then samples (perf report\n"
		"                         --sort srcline), instead of their instructions\n"
		"  --no-source            no source lines between the instructions\n"
		"  --pid PIDS, --tid TIDS, --comm NAMES\n"
		"                         only these processes', threads' or commands' trace\n"
		"  --event NAMES          only these events' samples\n"
		"  --format FMT           text (default), json (one object), or lcov: the line\n"
		"                         coverage of the files of code that ran (every line of\n"
		"                         their DWARF line tables, with the runs of its first\n"
		"                         instruction; 0: not covered), an lcov tracefile for\n"
		"                         genhtml; --dso picks the files\n"
		"  -o, --output OUT       write there instead of standard output\n"
		"  -k, --vmlinux FILE     the kernel's image (a build's vmlinux): code and names of\n"
		"                         a trace of kernel code (default: the copy of the code\n"
		"                         made by record --kcore or archive)\n"
		"  --no-demangle          C++ and Rust functions by their mangled names\n"
		"  --progress, --no-progress\n"
		"                         a progress bar on standard error: always, never (default:\n"
		"                         when standard error is a terminal)\n"
		"  -h, --help             this text\n");
}

static int parse_args(int argc, char **argv, struct annotate_args *a)
{
	int r;

	a->top = 1;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *v;

		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			usage(stdout);
			exit(CLI_OK);
		} else if (cli_is_opt(arg, "--dso")) {
			a->dso = cli_opt_value(argc, argv, &i, "--dso");
			if (!a->dso || !*a->dso) {
				cli_err("--dso needs a file name, e.g. --dso libc.so.6");
				return -EINVAL;
			}
		} else if ((r = cli_top_opt(argc, argv, &i, &a->top)) != 0) {
			if (r < 0)
				return r;
			a->top_set = true;
		} else if (!strcmp(arg, "--lines")) {
			a->lines = true;
		} else if (!strcmp(arg, "--no-source")) {
			a->no_source = true;
		} else if (cli_is_opt(arg, "--format")) {
			v = cli_opt_value(argc, argv, &i, "--format");
			if (!v || (strcmp(v, "text") && strcmp(v, "json") && strcmp(v, "lcov"))) {
				cli_err("bad --format '%s': use text, json or lcov", v ? v : "");
				return -EINVAL;
			}
			a->json = !strcmp(v, "json");
			a->lcov = !strcmp(v, "lcov");
		} else if (!strcmp(arg, "--no-demangle")) {
			a->raw_names = true;
		} else if (!strcmp(arg, "--progress")) {
			a->progress = CLI_PROGRESS_ON;
		} else if (!strcmp(arg, "--no-progress")) {
			a->progress = CLI_PROGRESS_OFF;
		} else if ((r = cli_output_opt(argc, argv, &i, &a->output)) != 0 ||
			   (r = cli_vmlinux_opt(argc, argv, &i, &a->vmlinux)) != 0 ||
			   (r = cli_filter_opt(argc, argv, &i, &a->filter)) != 0) {
			if (r < 0)
				return r;
		} else if (arg[0] == '-' && arg[1]) {
			cli_err("unknown option '%s' (auxcap annotate --help lists them)", arg);
			return -EINVAL;
		} else if (!a->file) {
			a->file = arg;
		} else if (a->nr_syms < MAX_SYMS) {
			a->syms[a->nr_syms++] = arg;
		} else {
			cli_err("too many symbols (at most %d): annotate the others in another run",
				MAX_SYMS);
			return -EINVAL;
		}
	}
	if (!a->file) {
		cli_err("no capture given: auxcap annotate FILE [SYMBOL...] (see --help)");
		return -EINVAL;
	}
	if (a->lines && !a->top_set)
		a->top = 20;
	if (a->lcov && (a->lines || a->nr_syms)) {
		cli_err("--format lcov covers whole files of code: not with %s (pick files with "
			"--dso)",
			a->lines ? "--lines" : "SYMBOL");
		return -EINVAL;
	}
	return 0;
}

/* Whether function @fn is one the arguments ask for. */
static bool wanted(const struct annotate_args *a, const struct auxcap_annotate_func *fn)
{
	if (a->dso && !cli_dso_is(fn->dso, a->dso))
		return false;
	if (!a->nr_syms)
		return fn->insns || fn->samples_sum;
	for (size_t i = 0; i < a->nr_syms; i++)
		if (cli_sym_is(fn->name, a->syms[i]))
			return true;
	return false;
}

/* ---- source lines ------------------------------------------------------------------ */

static const struct src_file *src_get(struct actx *c, const char *file, const char *dir)
{
	char path[4096];
	struct src_file *s;
	FILE *f;
	long len;

	if (file[0] != '/' && dir)
		snprintf(path, sizeof(path), "%s/%s", dir, file);
	else
		snprintf(path, sizeof(path), "%s", file);
	for (size_t i = 0; i < c->nr_src; i++)
		if (!strcmp(c->src[i].path, path))
			return &c->src[i];
	if (c->nr_src == MAX_SRC_FILES)
		return NULL;
	s = &c->src[c->nr_src];
	if (!(s->path = strdup(path)))
		return NULL;
	c->nr_src++;
	f = fopen(path, "rb");
	if (!f)
		return s;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && len < (64l << 20) &&
	    fseek(f, 0, SEEK_SET) == 0 && (s->text = malloc((size_t)len + 1)) &&
	    fread(s->text, 1, (size_t)len, f) == (size_t)len) {
		size_t cap = 0;

		s->text[len] = '\0';
		for (size_t o = 0; o < (size_t)len || (o == 0 && len == 0);) {
			const char *nl = memchr(s->text + o, '\n', (size_t)len - o);

			if (s->nr_lines == cap) {
				size_t *n = realloc(s->line, (cap ? cap * 2 : 256) * sizeof(*n));

				if (!n)
					break;
				s->line = n;
				cap = cap ? cap * 2 : 256;
			}
			s->line[s->nr_lines++] = o;
			if (!nl)
				break;
			*(char *)nl = '\0';
			o = (size_t)(nl - s->text) + 1;
		}
	} else {
		free(s->text);
		s->text = NULL;
	}
	fclose(f);
	return s;
}

/* The text of line @line of @file (in @dir if relative) without its indentation, NULL if not
 * readable. */
static const char *src_line(struct actx *c, const char *file, const char *dir, unsigned int line)
{
	const struct src_file *s = src_get(c, file, dir);
	const char *t;

	if (!s || !s->text || !line || line > s->nr_lines)
		return NULL;
	for (t = s->text + s->line[line - 1]; *t == ' ' || *t == '\t'; t++)
		;
	return t;
}

/* ---- text ------------------------------------------------------------------------- */

/* Whether the capture's trace says what ran (not a capture of samples only, nor a trace of
 * sampled operations: Arm SPE). */
static bool has_flow(const struct actx *c)
{
	const struct auxcap_decode_info *info = auxcap_decode_get_info(c->d);

	return info->backend && !info->sampled;
}

/* The sample slots with samples: their indices in @slots, how many. */
static size_t sample_slots(const struct actx *c, size_t *slots)
{
	size_t n = 0;

	for (size_t i = 0; i < c->s->nr_slots; i++)
		if (c->s->slot_samples[i])
			slots[n++] = i;
	return n;
}

static const char *slot_name(const struct actx *c, size_t i)
{
	const struct auxcap_perf_evsel *es =
		i + 1 < c->s->nr_slots ? auxcap_decode_evsel(c->d, i) : NULL;

	if (es)
		return es->name ? es->name : "event";
	return auxcap_decode_get_info(c->d)->backend ? auxcap_decode_get_info(c->d)->backend
						      : "trace";
}

/* The functions inlined at byte @offset of function @i, innermost first, between @lead and
 * @tail ("inner <- middle"; the function itself is left out). */
static void inline_chain(struct actx *c, size_t i, uint32_t offset, const char *lead,
			 const char *tail)
{
	struct auxcap_decode_inline fr[AUXCAP_DECODE_INLINE_MAX];
	int k = auxcap_annotate_inlines(c->an, i, offset, fr, AUXCAP_DECODE_INLINE_MAX);

	for (int j = 0; j + 1 < k; j++)
		fprintf(c->f, "%s%s", j ? " <- " : lead, fr[j].name ? fr[j].name : "[unknown]");
	if (k > 1)
		fputs(tail, c->f);
}

static int text_func(struct actx *c, size_t i, const size_t *slots, size_t nslots)
{
	const struct auxcap_annotate_func *fn = auxcap_annotate_get_func(c->an, i);
	const struct auxcap_annotate_insn *in;
	const char *last_file = NULL;
	unsigned int last_line = 0;
	bool trace = has_flow(c);
	const struct auxcap_annotate_mem *mem = fn->mem; /* (the columns of data accesses) */
	size_t n;
	int r;
	FILE *f = c->f;

	fprintf(f, "\n## %s", fn->name);
	cli_print_dso(f, fn->dso);
	fprintf(f, "  at 0x%" PRIx64 " (pid %" PRId32 "), %" PRIu64 " bytes\n", fn->addr, fn->pid,
		fn->size);
	if (trace)
		fprintf(f,
			"#  trace: %" PRIu64 " instructions run here (%.2f%% of %" PRIu64
			"), %" PRIu64 " branches taken\n",
			fn->insns,
			c->s->insns_placed ? 100.0 * (double)fn->insns / (double)c->s->insns_placed
					   : 0.0,
			c->s->insns_placed, fn->taken);
	for (size_t k = 0; k < nslots; k++)
		fprintf(f, "#  %s: %" PRIu64 " samples here of %" PRIu64 "\n", slot_name(c, slots[k]),
			fn->samples ? fn->samples[slots[k]] : 0, c->s->slot_samples[slots[k]]);
	if (mem)
		fprintf(f,
			"#  data accesses: %" PRIu64 " sampled, %" PRIu64 " missed the L1 (%.2f%%), %" PRIu64
			" served by memory, %" PRIu64 " TLB walks; latency mean %.1f cycles\n",
			mem->accesses, mem->l1_misses,
			100.0 * (double)mem->l1_misses / (double)mem->accesses, mem->llc_misses,
			mem->tlb_walks, (double)mem->lat / (double)mem->accesses);
	if (mem && mem->peer)
		fprintf(f, "#  of them served by another core's cache (perf c2c's peer snoops): %" PRIu64
			   "\n",
			mem->peer);
	r = auxcap_annotate_insns(c->an, i, &in, &n);
	if (r < 0) {
		fprintf(f, "#  (its code cannot be read: %s)\n", strerror(-r));
		return 0;
	}
	fputc('\n', f);
	if (trace)
		fprintf(f, "%12s %7s %10s", "execs", "share", "taken");
	for (size_t k = 0; k < nslots; k++)
		fprintf(f, " %10.10s", slot_name(c, slots[k]));
	if (mem)
		fprintf(f, " %8s %8s", "L1 miss", "mean lat");
	fprintf(f, "  address: instruction\n");
	for (size_t j = 0; j < n; j++) {
		const struct auxcap_annotate_insn *x = &in[j];

		if (!c->a->no_source && x->src_file &&
		    (!last_file || x->src_line != last_line || strcmp(x->src_file, last_file))) {
			const char *t = src_line(c, x->src_file, x->src_dir, x->src_line);

			fprintf(f, "%*s%s:%u%s%s", (trace ? 33 : 2) + 11 * (int)nslots + (mem ? 18 : 0), "",
				cli_base_name(x->src_file), x->src_line, t ? "  " : "", t ? t : "");
			if (x->src_func)
				inline_chain(c, i, x->offset, "  [inlined: ", "]");
			fputc('\n', f);
			last_file = x->src_file;
			last_line = x->src_line;
		}
		if (trace && x->execs)
			fprintf(f, "%12" PRIu64 " %6.2f%%", x->execs,
				fn->insns ? 100.0 * (double)x->execs / (double)fn->insns : 0.0);
		else if (trace)
			fprintf(f, "%12s %7s", ".", "");
		if (trace && (x->branch || x->taken))
			fprintf(f, " %10" PRIu64, x->taken);
		else if (trace)
			fprintf(f, " %10s", "");
		for (size_t k = 0; k < nslots; k++) {
			if (x->samples && x->samples[slots[k]])
				fprintf(f, " %10" PRIu64, x->samples[slots[k]]);
			else
				fprintf(f, " %10s", ".");
		}
		if (mem && x->mem)
			fprintf(f, " %8" PRIu64 " %8.1f", x->mem->l1_misses,
				(double)x->mem->lat / (double)x->mem->accesses);
		else if (mem)
			fprintf(f, " %8s %8s", ".", "");
		fprintf(f, "  %" PRIx64 ":  %s\n", x->addr, x->text);
	}
	return 0;
}

static int write_text(struct actx *c, const size_t *which, size_t nwhich)
{
	const struct auxcap_annotate_summary *s = c->s;
	size_t slots[64], nslots = sample_slots(c, slots);

	if (nslots > 8)
		nslots = 8; /* the columns of the first eight events with samples */
	fprintf(c->f, "# auxcap annotate of %s\n", c->a->file);
	if (!auxcap_decode_get_info(c->d)->backend) {
		fprintf(c->f, "# trace: none (a capture of counter samples only)\n");
	} else if (!has_flow(c)) {
		fprintf(c->f, "# trace: %s samples operations: no control flow, no runs\n",
			auxcap_decode_get_info(c->d)->backend);
	} else {
		fprintf(c->f,
			"# trace: %" PRIu64 " instructions, %" PRIu64 " placed in functions, %" PRIu64
			" in code without a symbol (or kernel code without the kernel's), %" PRIu64
			" not placed",
			s->insns, s->insns_placed, s->insns_nosym, s->insns_unplaced);
		if (s->stretches_bad)
			fprintf(c->f,
				" (%" PRIu64 " of %" PRIu64 " stretches of code did not match the "
				"trace or could not be read)",
				s->stretches_bad, s->stretches);
		fputc('\n', c->f);
	}
	for (size_t k = 0; k < nslots; k++)
		fprintf(c->f, "# %s: %" PRIu64 " samples, %" PRIu64 " at instructions of functions\n",
			slot_name(c, slots[k]), s->slot_samples[slots[k]], s->slot_placed[slots[k]]);
	for (size_t i = 0; i < nwhich; i++) {
		int r = text_func(c, which[i], slots, nslots);

		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- JSON ------------------------------------------------------------------------- */

static void json_samples(const struct actx *c, const uint64_t *v)
{
	bool first = true;

	fputc('{', c->f);
	for (size_t i = 0; v && i < c->s->nr_slots; i++) {
		if (!c->s->slot_samples[i])
			continue;
		fputs(first ? "" : ",", c->f);
		first = false;
		auxcap_out_json_str(c->f, slot_name(c, i));
		fprintf(c->f, ":%" PRIu64, v[i]);
	}
	fputc('}', c->f);
}

/* ,"inline":[{"func","file","line"},...] at byte @offset of function @i (decode's "inline":
 * innermost first, the function itself last), or null where nothing is inlined. */
static void json_inline(struct actx *c, size_t i, uint32_t offset)
{
	struct auxcap_decode_inline fr[AUXCAP_DECODE_INLINE_MAX];
	int k = auxcap_annotate_inlines(c->an, i, offset, fr, AUXCAP_DECODE_INLINE_MAX);

	fputs(",\"inline\":", c->f);
	auxcap_out_json_inlines(c->f, fr, k > 0 ? (size_t)k : 0);
}

static void json_mem(FILE *f, const struct auxcap_annotate_mem *m)
{
	if (!m) {
		fputs(",\"mem\":null", f);
		return;
	}
	fprintf(f,
		",\"mem\":{\"accesses\":%" PRIu64 ",\"l1_misses\":%" PRIu64 ",\"llc_misses\":%" PRIu64
		",\"tlb_walks\":%" PRIu64 ",\"lat_sum\":%" PRIu64 ",\"peer\":%" PRIu64 "}",
		m->accesses, m->l1_misses, m->llc_misses, m->tlb_walks, m->lat, m->peer);
}

static int json_func(struct actx *c, size_t i)
{
	const struct auxcap_annotate_func *fn = auxcap_annotate_get_func(c->an, i);
	const struct auxcap_annotate_insn *in = NULL;
	size_t n = 0;
	int r = auxcap_annotate_insns(c->an, i, &in, &n);
	FILE *f = c->f;

	if (r < 0 && r != -ENOENT)
		return r;
	fputs("{\"name\":", f);
	auxcap_out_json_str(f, fn->name);
	fputs(",\"dso\":", f);
	auxcap_out_json_str(f, fn->dso);
	fprintf(f,
		",\"addr\":\"0x%" PRIx64 "\",\"vaddr\":\"0x%" PRIx64 "\",\"size\":%" PRIu64
		",\"pid\":%" PRId32 ",\"insns\":%" PRIu64 ",\"taken\":%" PRIu64 ",\"samples\":",
		fn->addr, fn->vaddr, fn->size, fn->pid, fn->insns, fn->taken);
	json_samples(c, fn->samples);
	json_mem(f, fn->mem);
	fprintf(f, ",\"readable\":%s,\"instructions\":[", r == 0 ? "true" : "false");
	for (size_t j = 0; j < n; j++) {
		const struct auxcap_annotate_insn *x = &in[j];

		fprintf(f, "%s{\"addr\":\"0x%" PRIx64 "\",\"offset\":%" PRIu32 ",\"size\":%u,\"text\":",
			j ? "," : "", x->addr, x->offset, x->size);
		auxcap_out_json_str(f, x->text);
		fprintf(f,
			",\"valid\":%s,\"branch\":%s,\"execs\":%" PRIu64 ",\"taken\":%" PRIu64
			",\"samples\":",
			x->valid ? "true" : "false", x->branch ? "true" : "false", x->execs,
			x->taken);
		json_samples(c, x->samples);
		json_mem(f, x->mem);
		fputs(",\"srcline\":", f);
		if (x->src_file) {
			fputs("{\"file\":", f);
			auxcap_out_json_str(f, x->src_file);
			fprintf(f, ",\"line\":%u,\"dir\":", x->src_line);
			auxcap_out_json_str(f, x->src_dir);
			fputc('}', f);
		} else {
			fputs("null", f);
		}
		json_inline(c, i, x->offset);
		fputc('}', f);
	}
	fputs("]}", f);
	return 0;
}

static int write_json(struct actx *c, const size_t *which, size_t nwhich)
{
	const struct auxcap_annotate_summary *s = c->s;
	bool first = true;

	fputs("{\"file\":", c->f);
	auxcap_out_json_str(c->f, c->a->file);
	fprintf(c->f,
		",\"insns\":%" PRIu64 ",\"insns_placed\":%" PRIu64 ",\"insns_nosym\":%" PRIu64
		",\"insns_unplaced\":%" PRIu64 ",\"stretches\":%" PRIu64
		",\"stretches_bad\":%" PRIu64 ",\"events\":[",
		s->insns, s->insns_placed, s->insns_nosym, s->insns_unplaced, s->stretches,
		s->stretches_bad);
	for (size_t i = 0; i < s->nr_slots; i++) {
		if (!s->slot_samples[i])
			continue;
		fputs(first ? "{\"name\":" : ",{\"name\":", c->f);
		first = false;
		auxcap_out_json_str(c->f, slot_name(c, i));
		fprintf(c->f, ",\"samples\":%" PRIu64 ",\"placed\":%" PRIu64 "}", s->slot_samples[i],
			s->slot_placed[i]);
	}
	fprintf(c->f, "],\"functions_total\":%zu,\"functions\":[", auxcap_annotate_nr_funcs(c->an));
	for (size_t i = 0; i < nwhich; i++) {
		int r;

		if (i)
			fputc(',', c->f);
		r = json_func(c, which[i]);
		if (r < 0)
			return r;
	}
	fputs("]}\n", c->f);
	return 0;
}

/* ---- --lines ---------------------------------------------------------------------- */

/* An instruction's counts on its source line (then, merged, a line's). */
struct line_rec {
	const char *file, *dir, *func;
	bool inlined; /* @func is a function inlined there (DWARF), not the symbol */
	unsigned int line;
	uint64_t insns;
	const uint64_t *samples; /* of the instruction (per slot), NULL */
	uint64_t *sums;		 /* merged: per slot, owned by the array of sums */
};

static int cmp_line_place(const void *pa, const void *pb)
{
	const struct line_rec *x = pa, *y = pb;
	int c = strcmp(x->file, y->file);

	if (c)
		return c;
	c = strcmp(x->dir ? x->dir : "", y->dir ? y->dir : "");
	if (c)
		return c;
	return (x->line > y->line) - (x->line < y->line);
}

static uint64_t line_samples(const struct actx *c, const struct line_rec *l)
{
	uint64_t n = 0;

	for (size_t k = 0; k < c->s->nr_slots; k++)
		n += l->sums[k];
	return n;
}

static int cmp_line_heat(const void *pa, const void *pb, void *arg)
{
	const struct line_rec *x = pa, *y = pb;
	uint64_t sx = line_samples(arg, x), sy = line_samples(arg, y);

	if (x->insns != y->insns)
		return x->insns < y->insns ? 1 : -1;
	if (sx != sy)
		return sx < sy ? 1 : -1;
	return cmp_line_place(pa, pb);
}

/* The source lines of functions @which by instructions run, then samples: a table (or JSON). */
static int write_lines(struct actx *c, const size_t *which, size_t nwhich)
{
	const size_t ns = c->s->nr_slots;
	struct line_rec *recs = NULL, *tmp;
	uint64_t *sums = NULL;
	size_t n = 0, cap = 0, nl = 0, slots[64], nslots = sample_slots(c, slots), shown;
	bool trace = has_flow(c);
	int r = 0;

	if (nslots > 8)
		nslots = 8;
	for (size_t i = 0; i < nwhich; i++) {
		const struct auxcap_annotate_insn *in;
		size_t ni;

		if (auxcap_annotate_insns(c->an, which[i], &in, &ni) < 0)
			continue; /* its code cannot be read: it has no lines */
		for (size_t j = 0; j < ni; j++) {
			if (!in[j].src_file || (!in[j].execs && !in[j].samples))
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 1024;
				tmp = realloc(recs, cap * sizeof(*recs));
				if (!tmp) {
					r = -ENOMEM;
					goto out;
				}
				recs = tmp;
			}
			recs[n++] = (struct line_rec){
				in[j].src_file, in[j].src_dir,
				in[j].src_func ? in[j].src_func
					       : auxcap_annotate_get_func(c->an, which[i])->name,
				in[j].src_func != NULL, in[j].src_line, in[j].execs, in[j].samples,
				NULL
			};
		}
	}
	if (n)
		qsort(recs, n, sizeof(*recs), cmp_line_place);
	sums = calloc(n ? n * ns : 1, sizeof(*sums));
	if (!sums) {
		r = -ENOMEM;
		goto out;
	}
	/* merge the instructions of each line into its first record */
	for (size_t i = 0; i < n; i++) {
		const struct line_rec x = recs[i]; /* (the merged line may be written over it) */
		struct line_rec *l;

		if (!nl || cmp_line_place(&recs[nl - 1], &x)) {
			recs[nl] = x;
			recs[nl].sums = sums + nl * ns;
			recs[nl].insns = 0;
			nl++;
		}
		l = &recs[nl - 1];
		l->insns += x.insns;
		for (size_t k = 0; x.samples && k < ns; k++)
			l->sums[k] += x.samples[k];
	}
	if (nl)
		qsort_r(recs, nl, sizeof(*recs), cmp_line_heat, c);
	shown = c->a->top && c->a->top < nl ? c->a->top : nl;
	if (c->a->json) {
		fputs("{\"file\":", c->f);
		auxcap_out_json_str(c->f, c->a->file);
		fprintf(c->f, ",\"insns_placed\":%" PRIu64 ",\"lines_total\":%zu,\"lines\":[",
			c->s->insns_placed, nl);
		for (size_t i = 0; i < shown; i++) {
			fputs(i ? ",{\"file\":" : "{\"file\":", c->f);
			auxcap_out_json_str(c->f, recs[i].file);
			fputs(",\"dir\":", c->f);
			auxcap_out_json_str(c->f, recs[i].dir);
			fprintf(c->f, ",\"line\":%u,\"function\":", recs[i].line);
			auxcap_out_json_str(c->f, recs[i].func);
			fprintf(c->f, ",\"inlined\":%s", recs[i].inlined ? "true" : "false");
			fprintf(c->f, ",\"insns\":%" PRIu64 ",\"samples\":", recs[i].insns);
			json_samples(c, recs[i].sums);
			fputc('}', c->f);
		}
		fputs("]}\n", c->f);
		goto out;
	}
	fprintf(c->f, "# auxcap annotate --lines of %s: %zu source lines of %zu functions, by "
		      "instructions run there (exact), then samples\n\n",
		c->a->file, nl, nwhich);
	if (trace)
		fprintf(c->f, "%12s %7s", "insns", "share");
	for (size_t k = 0; k < nslots; k++)
		fprintf(c->f, " %10.10s", slot_name(c, slots[k]));
	fputs("  line\n", c->f);
	for (size_t i = 0; i < shown; i++) {
		const struct line_rec *l = &recs[i];
		const char *t = c->a->no_source ? NULL : src_line(c, l->file, l->dir, l->line);

		if (trace)
			fprintf(c->f, "%12" PRIu64 " %6.2f%%", l->insns,
				c->s->insns_placed
					? 100.0 * (double)l->insns / (double)c->s->insns_placed
					: 0.0);
		for (size_t k = 0; k < nslots; k++)
			fprintf(c->f, " %10" PRIu64, l->sums[slots[k]]);
		fprintf(c->f, "  %s:%u  %s%s[%s%s]\n", cli_base_name(l->file), l->line, t ? t : "",
			t ? "  " : "", l->func, l->inlined ? ", inlined" : "");
	}
out:
	free(recs);
	free(sums);
	return r;
}

/* ---- --format lcov --------------------------------------------------------------------- */

/* A line (or, @name set, a function) of a source file, with its runs. */
struct cov_rec {
	char *path; /* owned: the source file, in its compilation directory if relative */
	unsigned int line;
	const char *name; /* a function: its symbol (borrowed from the session) */
	uint64_t execs;
};

struct cov_list {
	struct cov_rec *v;
	size_t n, cap;
	int err;
};

static int cov_add(struct cov_list *l, const char *file, const char *dir, unsigned int line,
		   const char *name, uint64_t execs)
{
	char path[4096], *real;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4096;
		struct cov_rec *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	if (file[0] != '/' && dir)
		snprintf(path, sizeof(path), "%s/%s", dir, file);
	else
		snprintf(path, sizeof(path), "%s", file);
	real = realpath(path, NULL); /* (genhtml wants the file as it is on disk) */
	l->v[l->n] = (struct cov_rec){ real ? real : strdup(path), line, name, execs };
	if (!l->v[l->n].path)
		return -ENOMEM;
	l->n++;
	return 0;
}

static int cov_line(void *arg, const char *file, const char *dir, unsigned int line,
		    uint64_t execs)
{
	return cov_add(arg, file, dir, line, NULL, execs);
}

static int cov_func(void *arg, const char *name, const char *file, const char *dir,
		    unsigned int line, uint64_t execs)
{
	return cov_add(arg, file, dir, line, name, execs);
}

/* By file, then functions before lines, then line (and name). */
static int cmp_cov(const void *pa, const void *pb)
{
	const struct cov_rec *x = pa, *y = pb;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	if (!x->name != !y->name)
		return x->name ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->name ? strcmp(x->name, y->name) : 0;
}

/* The line coverage of the files of code of functions @which: an lcov tracefile. */
static int write_lcov(struct actx *c, const size_t *which, size_t nwhich)
{
	const char *done[256];
	size_t ndone = 0, ndso = 0;
	struct cov_list l = { 0 };
	int r = 0;

	for (size_t i = 0; i < nwhich && r == 0; i++) {
		const char *dso = auxcap_annotate_get_func(c->an, which[i])->dso;
		size_t k;

		for (k = 0; k < ndone && strcmp(done[k], dso); k++)
			;
		if (k < ndone || ndone == sizeof(done) / sizeof(done[0]))
			continue;
		done[ndone++] = dso;
		r = auxcap_annotate_coverage(c->an, dso, cov_line, cov_func, &l);
		if (r == -ENODATA || r == -ENOENT)
			r = 0; /* no line tables: nothing to cover there */
		else if (r == 0)
			ndso++;
	}
	if (r < 0)
		goto out;
	if (!ndso) {
		cli_err("no line tables in the files of code of '%s'%s%s: lcov needs binaries "
			"built with -g (or their debug files)",
			c->a->file, c->a->dso ? " matching --dso " : "", c->a->dso ? c->a->dso : "");
		r = -ECANCELED; /* (said) */
		goto out;
	}
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), cmp_cov);
	fprintf(c->f, "TN:\n");
	for (size_t i = 0; i < l.n;) {
		size_t j = i, fnf = 0, fnh = 0, lf = 0, lh = 0;

		fprintf(c->f, "SF:%s\n", l.v[i].path);
		for (; j < l.n && !strcmp(l.v[j].path, l.v[i].path) && l.v[j].name; j++) {
			if (j > i && !strcmp(l.v[j].name, l.v[j - 1].name))
				continue; /* (a symbol in two files of code: once) */
			fprintf(c->f, "FN:%u,%s\n", l.v[j].line, l.v[j].name);
		}
		for (size_t k = i; k < j; k++) {
			if (k > i && !strcmp(l.v[k].name, l.v[k - 1].name))
				continue;
			fprintf(c->f, "FNDA:%" PRIu64 ",%s\n", l.v[k].execs, l.v[k].name);
			fnf++;
			fnh += l.v[k].execs != 0;
		}
		fprintf(c->f, "FNF:%zu\nFNH:%zu\n", fnf, fnh);
		/* a line: the most runs of its statements' first instructions */
		while (j < l.n && !strcmp(l.v[j].path, l.v[i].path)) {
			uint64_t n = 0;
			size_t k = j;

			for (; k < l.n && !strcmp(l.v[k].path, l.v[j].path) &&
			       l.v[k].line == l.v[j].line;
			     k++)
				n = l.v[k].execs > n ? l.v[k].execs : n;
			fprintf(c->f, "DA:%u,%" PRIu64 "\n", l.v[j].line, n);
			lf++;
			lh += n != 0;
			j = k;
		}
		fprintf(c->f, "LF:%zu\nLH:%zu\nend_of_record\n", lf, lh);
		i = j;
	}
out:
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].path);
	free(l.v);
	return r;
}

/* ---- the command ------------------------------------------------------------------- */

static int cmd_annotate_run(int argc, char **argv)
{
	struct annotate_args a;
	struct auxcap_annotate_opts ao = { .sz = sizeof(ao) };
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d = NULL;
	struct auxcap_annotate *an = NULL;
	struct actx c;
	size_t *which = NULL, nwhich = 0, nf;
	FILE *out = stdout;
	int r, ret = CLI_ERR;

	memset(&a, 0, sizeof(a));
	memset(&c, 0, sizeof(c));
	if (parse_args(argc, argv, &a) < 0)
		return CLI_ERR;
	if (cli_capture_open("annotate", a.file, cli_progress_begin(a.progress, false),
			     a.raw_names, a.vmlinux, &d) < 0)
		goto out;
	ao.filter = cli_filter_get(&a.filter);
	r = auxcap_annotate_new(d, &ao, &an);
	if (r == -EOPNOTSUPP) {
		cli_err("this build has no disassembler: auxcap annotate needs capstone "
			"(apt-get install libcapstone-dev, then rebuild)");
		goto out;
	}
	while (r == 0 && (r = auxcap_decode_next(d, &ev)) == 1)
		r = auxcap_annotate_event(an, ev);
	if (r == 0)
		r = auxcap_annotate_finish(an);
	cli_progress_end();
	if (r < 0) {
		cli_err("decoding '%s' stopped: %s", a.file,
			*auxcap_decode_error(d) ? auxcap_decode_error(d) : strerror(-r));
		goto out;
	}
	nf = auxcap_annotate_nr_funcs(an);
	which = calloc(nf ? nf : 1, sizeof(*which));
	if (!which) {
		cli_err("cannot annotate: %s", strerror(ENOMEM));
		goto out;
	}
	for (size_t i = 0; i < nf; i++)
		if (wanted(&a, auxcap_annotate_get_func(an, i)) &&
		    (a.nr_syms || a.lines || a.lcov || !a.top || nwhich < a.top))
			which[nwhich++] = i;
	if (!nwhich && a.nr_syms) {
		cli_err("no function named %s%s%s%s ran or was sampled in '%s' (auxcap report "
			"lists the capture's functions)",
			a.syms[0], a.nr_syms > 1 ? " (or the others given)" : "",
			a.dso ? " in " : "", a.dso ? a.dso : "", a.file);
		goto out;
	}
	if (a.output && !(out = cli_output_open(a.output))) {
		out = stdout;
		goto out;
	}
	c.a = &a;
	c.d = d;
	c.an = an;
	c.s = auxcap_annotate_get_summary(an);
	c.f = out;
	if (a.lcov)
		r = write_lcov(&c, which, nwhich);
	else if (a.lines)
		r = write_lines(&c, which, nwhich);
	else
		r = a.json ? write_json(&c, which, nwhich) : write_text(&c, which, nwhich);
	if (r < 0) {
		if (r != -ECANCELED)
			cli_err("cannot write the annotation: %s", strerror(-r));
		goto out;
	}
	ret = CLI_OK;
out:
	cli_progress_end();
	ret = cli_output_close(out, a.output, "the annotation", ret);
	for (size_t i = 0; i < c.nr_src; i++) {
		free(c.src[i].path);
		free(c.src[i].text);
		free(c.src[i].line);
	}
	free(which);
	auxcap_annotate_free(an);
	auxcap_decode_close(d);
	return ret;
}

const struct cli_cmd cli_cmd_annotate = {
	.name = "annotate",
	.summary = "functions instruction by instruction: exact runs, taken branches, samples",
	.run = cmd_annotate_run,
};
