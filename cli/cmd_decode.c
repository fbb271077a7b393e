/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap decode: options, then the decode stage (auxcap/decode.h) and one of its writers
 * (auxcap/decode_out.h).  All decoding, merging and formatting lives in decode/ and the
 * backends; this file parses arguments and prints errors.
 *
 * Backends without decoder ops, and the text of raw Intel BTS and Arm SPE traces
 * (text_by_backend()), are printed with the backends' own printers, queue by queue.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auxcap/decode.h"
#include "auxcap/file.h"
#include "auxcap/decode_out.h"
#include "auxcap/file.h"
#include "cli.h"
#include "progress.h"

#if AUXCAP_HAVE_BACKEND_ARM_SPE
#include "spe_decode.h"
#endif
#if AUXCAP_HAVE_BACKEND_INTEL_BTS
#include "bts_decode.h"
#endif

#define MAX_CODE 64

static void usage(FILE *f)
{
	fprintf(f,
		"usage: auxcap decode FILE [options]             (a perf.data capture)\n"
		"       auxcap decode --raw PMU FILE [options]   (a raw trace file)\n"
		"\n"
		"Decode the AUX trace of a capture, merged with its counter samples and side-band\n"
		"records in time order.\n"
		"\n"
		"  --format FMT           text (default), json (JSON lines), perfetto (Chrome trace\n"
		"                         event JSON for ui.perfetto.dev), folded (flame graphs)\n"
		"  -o, --output OUT       write there instead of standard output\n"
		"  --itrace=LETTERS       b: branches (default), i: instructions with disassembly,\n"
		"                         c (or r, perf's cr): calls and returns with call depth,\n"
		"                         e: errors (always shown); iPERIOD: one instruction per\n"
		"                         period of its thread, 1000i (instructions), 10us, 1ms,\n"
		"                         500ns (perf's; i alone or i0ns: every instruction)\n"
		"  --last-branches N      give each sample the last N branches before it (0..%d)\n"
		"  --srcline              text, json: the source file and line of each sample and\n"
		"                         instruction (DWARF line tables: binaries built with -g,\n"
		"                         or their debug files)\n"
		"  --inline               functions inlined at the code named (DWARF, as\n"
		"                         addr2line -i): samples' stacks with their inlined\n"
		"                         frames (every format), text and json: each sample's\n"
		"                         and instruction's inline chain\n"
		"  -k, --vmlinux FILE     the kernel's image (a build's vmlinux): code and names of\n"
		"                         a trace of kernel code (default: the copy of the code\n"
		"                         made by record --kcore or archive)\n"
		"  --no-demangle          C++ and Rust functions by their mangled names (default:\n"
		"                         as c++filt shows them)\n"
		"  --func-time            text: each sample's trace time per function since the\n"
		"                         previous sample of its thread\n"
		"  --show-sideband        text: the side-band records too (MMAP2, COMM, SWITCH, ...)\n"
		"  --folded-weight W      folded: samples, time or insns (default: samples if there\n"
		"                         are any, else time if the trace has it, else insns)\n"
		"  --dump                 list the trace packets instead, with (Intel PT) --no-offset,\n"
		"                         --raw-bytes, --lastip, --exec-mode, --no-sync (ptdump's)\n"
		"  --raw PMU              FILE is a raw trace of PMU (intel_pt, intel_bts, arm_spe)\n"
		"  --elf BIN[:ADDR]       code of BIN (its executable segments and symbols); ADDR is\n"
		"                         where its first segment was loaded (PIE, shared objects);\n"
		"                         default: its link address.  Repeatable.\n"
		"  --raw-bin FILE:ADDR    raw code bytes of FILE loaded at ADDR.  Repeatable.\n"
		"  --cpu F/M[/S]          Intel PT: CPU family/model/stepping (errata)\n"
		"  --mtc-freq N, --nom-freq N, --cpuid-0x15.eax N, --cpuid-0x15.ebx N\n"
		"                         Intel PT: timing set-up of the traced machine (raw traces;\n"
		"                         captures carry it)\n"
		"  --insn-decoder         Intel PT: decode per instruction even for branches\n"
		"  --pid PIDS, --tid TIDS, --comm NAMES\n"
		"                         only these processes', threads' or commands' events\n"
		"                         (comma-separated lists; losses are always shown)\n"
		"  --event NAMES          only these events' counter samples (folded stacks of\n"
		"                         one event: --event cpu-clock)\n"
		"  --time START,STOP      text and JSON: only the events in this span of perf\n"
		"                         time, seconds as printed (either may be empty)\n"
		"  --symbols NAMES, --dsos FILES\n"
		"                         text and JSON: only the trace events and samples at\n"
		"                         these functions or in these files (a branch: from or\n"
		"                         to one; losses and gaps are always shown)\n"
		"  --progress, --no-progress\n"
		"                         a progress bar on standard error: always, never (default:\n"
		"                         when standard error is a terminal and the output is not)\n"
		"  -h, --help             this text\n",
		AUXCAP_DECODE_MAX_BRANCHES);
}

struct decode_args {
	const char *pmu;  /* --raw */
	const char *file; /* the trace or capture */
	const char *open_path; /* what to open: @file, or a saved copy of stdin for "-" */
	const char *output;
	struct auxcap_decode_code code[MAX_CODE];
	size_t ncode;
	char backend_opts[512]; /* "cpu=6/142,mtc-freq=3,..." */
	bool dump, dump_only_opts;
	bool want_b, want_i, want_c;
	bool sideband, func_time, srcline, inlines;
	bool raw_names; /* --no-demangle */
	const char *vmlinux; /* -k, --vmlinux */
	enum cli_progress_mode progress;
	unsigned int last_branches;
	struct auxcap_out_opts out;
	struct cli_filter filter; /* --pid, --tid, --comm, --event */
	bool has_time;		  /* --time */
	uint64_t time_lo, time_hi; /* --time: perf time, ns, inclusive */
};

/* "SEC[.FRAC]" (perf time as the outputs print it) into ns; -EINVAL if it is not one. */
static int parse_sec(const char *s, size_t len, uint64_t *ret)
{
	uint64_t sec = 0, ns = 0, scale = 100000000;
	size_t i = 0;

	if (!len)
		return -EINVAL;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (sec > (UINT64_MAX / 1000000000 - 9) / 10)
			return -EINVAL;
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	}
	if (i == 0)
		return -EINVAL;
	if (i < len && s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
			ns += (uint64_t)(s[i] - '0') * scale;
			scale /= 10;
		}
	}
	if (i != len)
		return -EINVAL;
	*ret = sec * 1000000000 + ns;
	return 0;
}

/* --time START,STOP (perf script's): seconds of perf time, either side may be empty. */
static int parse_time(const char *v, struct decode_args *a)
{
	const char *comma = v ? strchr(v, ',') : NULL;

	a->time_lo = 0;
	a->time_hi = UINT64_MAX;
	if (!comma || (comma > v && parse_sec(v, (size_t)(comma - v), &a->time_lo) < 0) ||
	    (comma[1] && parse_sec(comma + 1, strlen(comma + 1), &a->time_hi) < 0) ||
	    a->time_lo > a->time_hi) {
		cli_err("bad --time '%s': give START,STOP in seconds as the output prints them "
			"(e.g. --time 105.76,105.82; either may be empty)",
			v ? v : "");
		return -EINVAL;
	}
	a->has_time = true;
	return 0;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* "PATH:ADDR" (ADDR required) or "PATH[:ADDR]". */
static int parse_path_addr(const char *arg, bool addr_required, struct auxcap_decode_code *c)
{
	const char *colon = strrchr(arg, ':');
	char *copy;

	if (!colon) {
		if (addr_required || !*arg)
			return -EINVAL;
		c->path = arg;
		return 0;
	}
	if (colon == arg || parse_u64(colon + 1, UINT64_MAX, &c->addr) < 0)
		return -EINVAL;
	copy = strndup(arg, (size_t)(colon - arg));
	if (!copy)
		return -ENOMEM;
	c->path = copy; /* freed with the process; a handful of bytes */
	c->has_addr = true;
	return 0;
}

/* Add "name" or "name=value" to the backend options. */
static void backend_opt(struct decode_args *a, const char *name, const char *value)
{
	size_t n = strlen(a->backend_opts);

	snprintf(a->backend_opts + n, sizeof(a->backend_opts) - n, "%s%s%s%s", n ? "," : "", name,
		 value ? "=" : "", value ? value : "");
}

/* FAMILY/MODEL[/STEPPING], numbers as in /proc/cpuinfo (decimal or 0x hex). */
static bool valid_cpu(const char *v)
{
	uint64_t x;
	char part[32];
	int n = 0;

	for (const char *p = v;; n++) {
		size_t len = strcspn(p, "/");

		if (!len || len >= sizeof(part))
			return false;
		memcpy(part, p, len);
		part[len] = '\0';
		if (parse_u64(part, n == 0 ? 0xffff : 0xff, &x) < 0)
			return false;
		if (!p[len])
			break;
		p += len + 1;
	}
	return n == 1 || n == 2;
}

static int add_code(struct decode_args *a, const char *opt, const char *v, bool raw)
{
	if (a->ncode == MAX_CODE) {
		cli_err("too many --elf/--raw-bin (at most %d)", MAX_CODE);
		return -EINVAL;
	}
	memset(&a->code[a->ncode], 0, sizeof(a->code[0]));
	if (!v || parse_path_addr(v, raw, &a->code[a->ncode]) < 0) {
		if (raw)
			cli_err("bad %s '%s': expected FILE:ADDR, e.g. code.bin:0x400000", opt,
				v ? v : "");
		else
			cli_err("bad %s '%s': expected BINARY[:LOAD_ADDR] with a number as LOAD_ADDR, "
				"e.g. ./a.out:0x555555554000",
				opt, v ? v : "");
		return -EINVAL;
	}
	a->code[a->ncode++].raw = raw;
	return 0;
}

static int parse_num_opt(struct decode_args *a, const char *opt, const char *v, uint64_t max,
			 const char *what, const char *backend_name)
{
	uint64_t n;

	if (parse_u64(v, max, &n) < 0) {
		cli_err("bad %s '%s': expected %s", opt, v ? v : "", what);
		return -EINVAL;
	}
	backend_opt(a, backend_name, v);
	return 0;
}

/*
 * --itrace=LETTERS, perf's letters where auxcap has what they ask: b, i (with perf's period:
 * i1000i, i10us, i1ms, i500ns, a bare number being ns), c and r (one view of both), e.
 */
static int parse_itrace(const char *v, struct decode_args *a)
{
	for (const char *p = v; *p; p++) {
		if (*p == 'b') {
			a->want_b = true;
		} else if (*p == 'c' || *p == 'r') {
			a->want_c = true;
		} else if (*p == 'e') {
			/* decode errors and gaps are written whatever the letters */
		} else if (*p == 'i') {
			uint64_t n, mul = 1;
			char *end;

			a->want_i = true;
			if (p[1] < '0' || p[1] > '9')
				continue;
			errno = 0;
			n = strtoull(p + 1, &end, 10);
			if (errno) {
				cli_err("bad --itrace period in '%s': too large", v);
				return -EINVAL;
			}
			p = end;
			if (*p == 'i') {
				a->out.insn_period = n;
				continue;
			}
			if (*p == 'm' && p[1] == 's')
				mul = 1000000;
			else if (*p == 'u' && p[1] == 's')
				mul = 1000;
			else if (!(*p == 'n' && p[1] == 's') && *p) {
				cli_err("bad --itrace period unit in '%s': give i (instructions), ms, us or "
					"ns (--itrace=i1000i, --itrace=i10us)%s",
					v, *p == 't' ? "; t (TSC ticks) is not supported" : "");
				return -EINVAL;
			}
			if (n > UINT64_MAX / mul) {
				cli_err("bad --itrace period in '%s': too large", v);
				return -EINVAL;
			}
			a->out.insn_period_ns = n * mul;
			if (!*p)
				break;
			p++; /* the unit's 's' */
		} else {
			cli_err("bad --itrace letter '%c' in '%s': supported are b, i[PERIOD], c, r, e",
				*p, v);
			return -EINVAL;
		}
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct decode_args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *v;
		int r;
		uint64_t n;

		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			usage(stdout);
			exit(CLI_OK);
		} else if (!strcmp(arg, "--dump")) {
			a->dump = true;
		} else if (!strcmp(arg, "--no-offset") || !strcmp(arg, "--raw-bytes") ||
			   !strcmp(arg, "--lastip") || !strcmp(arg, "--exec-mode") ||
			   !strcmp(arg, "--no-sync")) {
			a->dump_only_opts = true;
			backend_opt(a, arg + 2, NULL);
		} else if (!strcmp(arg, "--insn-decoder")) {
			backend_opt(a, "insn-decoder", NULL);
		} else if (!strcmp(arg, "--show-sideband")) {
			a->sideband = true;
		} else if (!strcmp(arg, "--srcline")) {
			a->srcline = true;
		} else if (!strcmp(arg, "--inline")) {
			a->inlines = true;
		} else if (!strcmp(arg, "--no-demangle")) {
			a->raw_names = true;
		} else if (!strcmp(arg, "--func-time")) {
			a->func_time = true;
		} else if (!strcmp(arg, "--progress")) {
			a->progress = CLI_PROGRESS_ON;
		} else if (!strcmp(arg, "--no-progress")) {
			a->progress = CLI_PROGRESS_OFF;
		} else if (cli_is_opt(arg, "--raw-bin")) {
			if (add_code(a, "--raw-bin", cli_opt_value(argc, argv, &i, "--raw-bin"), true) < 0)
				return -EINVAL;
		} else if (cli_is_opt(arg, "--raw")) {
			if (!(v = cli_opt_value(argc, argv, &i, "--raw"))) {
				cli_err("--raw needs a PMU name, e.g. --raw intel_pt FILE");
				return -EINVAL;
			}
			a->pmu = v;
		} else if (cli_is_opt(arg, "--elf")) {
			if (add_code(a, "--elf", cli_opt_value(argc, argv, &i, "--elf"), false) < 0)
				return -EINVAL;
		} else if (cli_is_opt(arg, "--cpu")) {
			v = cli_opt_value(argc, argv, &i, "--cpu");
			if (!v || !valid_cpu(v)) {
				cli_err("bad --cpu '%s': expected FAMILY/MODEL[/STEPPING] as in "
					"/proc/cpuinfo, e.g. --cpu 6/142",
					v ? v : "");
				return -EINVAL;
			}
			backend_opt(a, "cpu", v);
		} else if (cli_is_opt(arg, "--mtc-freq")) {
			if (parse_num_opt(a, "--mtc-freq", cli_opt_value(argc, argv, &i, "--mtc-freq"), 15,
					  "0..15 (IA32_RTIT_CTL.MTCFreq)", "mtc-freq") < 0)
				return -EINVAL;
		} else if (cli_is_opt(arg, "--nom-freq")) {
			if (parse_num_opt(a, "--nom-freq", cli_opt_value(argc, argv, &i, "--nom-freq"), 255,
					  "0..255 (the max non-turbo ratio)", "nom-freq") < 0)
				return -EINVAL;
		} else if (cli_is_opt(arg, "--cpuid-0x15.eax") || cli_is_opt(arg, "--cpuid-0x15.ebx")) {
			const char *name = cli_is_opt(arg, "--cpuid-0x15.eax") ? "--cpuid-0x15.eax"
									   : "--cpuid-0x15.ebx";

			if (parse_num_opt(a, name, cli_opt_value(argc, argv, &i, name), UINT32_MAX,
					  "a 32-bit number", name + 2) < 0)
				return -EINVAL;
		} else if (cli_is_opt(arg, "--itrace")) {
			v = cli_opt_value(argc, argv, &i, "--itrace");
			if (!v || !*v) {
				cli_err("--itrace needs letters: b (branches), i (instructions), c "
					"(calls/returns)");
				return -EINVAL;
			}
			if (parse_itrace(v, a) < 0)
				return -EINVAL;
		} else if (cli_is_opt(arg, "--format")) {
			v = cli_opt_value(argc, argv, &i, "--format");
			if (!v || auxcap_out_parse_format(v, &a->out.format) < 0) {
				cli_err("bad --format '%s': use text, json, perfetto or folded",
					v ? v : "");
				return -EINVAL;
			}
		} else if ((r = cli_output_opt(argc, argv, &i, &a->output)) != 0 ||
			   (r = cli_vmlinux_opt(argc, argv, &i, &a->vmlinux)) != 0) {
			if (r < 0)
				return r;
		} else if ((r = cli_filter_opt(argc, argv, &i, &a->filter)) != 0 ||
			   (r = cli_code_filter_opt(argc, argv, &i, &a->filter)) != 0) {
			if (r < 0)
				return r;
		} else if (cli_is_opt(arg, "--time")) {
			if (parse_time(cli_opt_value(argc, argv, &i, "--time"), a) < 0)
				return -EINVAL;
		} else if (cli_is_opt(arg, "--last-branches")) {
			v = cli_opt_value(argc, argv, &i, "--last-branches");
			if (parse_u64(v, AUXCAP_DECODE_MAX_BRANCHES, &n) < 0) {
				cli_err("bad --last-branches '%s': expected 0..%d", v ? v : "",
					AUXCAP_DECODE_MAX_BRANCHES);
				return -EINVAL;
			}
			a->last_branches = (unsigned int)n;
		} else if (cli_is_opt(arg, "--folded-weight")) {
			v = cli_opt_value(argc, argv, &i, "--folded-weight");
			if (v && !strcmp(v, "samples")) {
				a->out.weight = AUXCAP_OUT_WEIGHT_SAMPLES;
			} else if (v && !strcmp(v, "time")) {
				a->out.weight = AUXCAP_OUT_WEIGHT_TIME;
			} else if (v && !strcmp(v, "insns")) {
				a->out.weight = AUXCAP_OUT_WEIGHT_INSNS;
			} else {
				cli_err("bad --folded-weight '%s': use samples, time or insns",
					v ? v : "");
				return -EINVAL;
			}
		} else if (arg[0] == '-' && arg[1]) {
			cli_err("unknown option '%s'; run 'auxcap decode --help'", arg);
			return -EINVAL;
		} else if (!a->file) {
			a->file = arg;
		} else {
			cli_err("more than one trace file ('%s' and '%s'); decode one at a time",
				a->file, arg);
			return -EINVAL;
		}
	}
	if (!a->want_b && !a->want_i && !a->want_c)
		a->want_b = true;
	if (cli_filter_get(&a->filter) && (a->dump || a->pmu)) {
		cli_err("--pid, --tid, --comm and --event pick from a capture's merged stream: not "
			"with %s",
			a->dump ? "--dump (it lists the trace packets as they are)"
				: "--raw (a raw trace has no threads)");
		return -EINVAL;
	}
	if ((a->filter.nr_syms || a->filter.nr_dsos) &&
	    (a->dump || a->pmu || (a->out.format != AUXCAP_OUT_TEXT &&
				   a->out.format != AUXCAP_OUT_JSON))) {
		cli_err("--symbols and --dsos pick events of the text or JSON output of a capture: "
			"%s",
			a->dump	  ? "not with --dump"
			: a->pmu ? "not with --raw (use --elf for its code)"
				 : "folded and Perfetto output follow whole call stacks; cut "
				   "the text or JSON instead");
		return -EINVAL;
	}
	if (a->has_time && (a->dump || a->pmu || (a->out.format != AUXCAP_OUT_TEXT &&
						  a->out.format != AUXCAP_OUT_JSON))) {
		cli_err("--time picks events of the text or JSON output of a capture: %s",
			a->dump	  ? "not with --dump"
			: a->pmu ? "not with --raw (its events have no perf time)"
				 : "folded and Perfetto output follow whole call stacks; cut "
				   "the text or JSON instead");
		return -EINVAL;
	}
	if (!a->dump && a->dump_only_opts) {
		cli_err("--no-offset, --raw-bytes, --lastip, --exec-mode and --no-sync only apply "
			"to --dump; add --dump");
		return -EINVAL;
	}
	return 0;
}

/* ---- backends without decoder ops: their raw printers ------------------------------------ */

/* Print an SPE or BTS stream; -EOPNOTSUPP if that backend is not built. */
static int print_spe_bts(FILE *out, bool spe, const uint8_t *buf, size_t len, bool dump,
			 uint64_t *errors)
{
	int r = -EOPNOTSUPP;

	if (spe) {
#if AUXCAP_HAVE_BACKEND_ARM_SPE
		struct auxcap_spe_stats st;

		r = auxcap_spe_dump_raw(buf, len, out,
					(dump ? AUXCAP_SPE_DUMP_PACKETS : 0) |
						AUXCAP_SPE_DUMP_SAMPLES | AUXCAP_SPE_DUMP_SUMMARY,
					&st);
		if (r == 0)
			*errors += st.errors;
#endif
	} else {
#if AUXCAP_HAVE_BACKEND_INTEL_BTS
		struct auxcap_bts_stats st;

		r = auxcap_bts_dump_raw(buf, len, out, AUXCAP_BTS_DUMP_SUMMARY, &st);
		if (r == 0)
			*errors += st.errors;
#endif
	}
	(void)out;
	(void)buf;
	(void)len;
	(void)dump;
	(void)errors;
	return r;
}

static int map_file(const char *path, const uint8_t **ret_buf, size_t *ret_len)
{
	struct stat st;
	FILE *f = fopen(path, "rb");
	void *p;

	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode)) {
		fclose(f);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	*ret_buf = NULL;
	*ret_len = (size_t)st.st_size;
	if (st.st_size) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fileno(f), 0);
		if (p == MAP_FAILED) {
			fclose(f);
			return -errno;
		}
		*ret_buf = p;
	}
	fclose(f);
	return 0;
}

/*
 * -o FILE: created as every auxcap output (0600, O_EXCL after removing an existing entry,
 * never through a symlink, as root never in another user's directory).  Prints the reason
 * and returns NULL on failure.  (cli.h; auxcap report's -o too.)
 */
FILE *cli_output_open(const char *path)
{
	char why[512] = "";
	FILE *f;
	int fd;

	fd = auxcap_file_create(path, AUXCAP_FILE_REPLACE, why, sizeof(why));
	if (fd < 0) {
		cli_err("%s", why[0] ? why : strerror(-fd));
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		cli_err("cannot write '%s': %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

/* Raw SPE/BTS files, or the queues of a capture @d (non-NULL). */
static int legacy_print(struct decode_args *a, struct auxcap_decode *d, FILE *out, bool spe)
{
	uint64_t errors = 0;
	int r = 0;

	if (!d) {
		const uint8_t *buf = NULL;
		size_t len = 0;

		r = map_file(a->open_path, &buf, &len);
		if (r < 0) {
			cli_err("cannot read trace file '%s': %s", a->file, strerror(-r));
			return CLI_ERR;
		}
		r = print_spe_bts(out, spe, buf, len, a->dump, &errors);
		if (buf)
			(void)munmap((void *)buf, len);
	} else {
		for (size_t i = 0; r >= 0 && auxcap_decode_get_queue(d, i); i++) {
			const struct auxcap_decode_queue *q = auxcap_decode_get_queue(d, i);
			uint8_t *buf;
			size_t len;

			fprintf(out, "# %s %zu: idx %u cpu %d tid %d, %" PRIu64 " bytes\n",
				q->snapshot ? "snapshot" : "AUX stream", i, q->idx, q->cpu, q->tid,
				q->bytes);
			r = auxcap_decode_queue_bytes(d, i, &buf, &len);
			if (r == 0) {
				r = print_spe_bts(out, spe, buf, len, a->dump, &errors);
				free(buf);
			}
		}
	}
	if (r == -EOPNOTSUPP) {
		cli_err("%s trace: this build has no %s backend (meson -D%s=enabled)",
			spe ? "arm_spe" : "intel_bts", spe ? "Arm SPE" : "Intel BTS",
			spe ? "arm_spe" : "intel_bts");
		return CLI_ERR;
	}
	if (r < 0 || fflush(out) == EOF) {
		cli_err("writing the output failed: %s", strerror(r < 0 ? -r : errno));
		return CLI_ERR;
	}
	if (errors)
		cli_warn("%" PRIu64 " decode error%s in '%s' (see the error lines)", errors,
			 errors == 1 ? "" : "s", a->file);
	return CLI_OK;
}

/*
 * The text of a raw Intel BTS or Arm SPE trace (--raw) keeps their printers' record layout
 * (README "Raw traces"): there is no capture around it (threads, time, mappings) to merge
 * with.  A capture's text is the merged stream's, as for Intel PT (the SPE backend names its
 * samples' fields there through its describe op).
 */
static bool text_by_backend(const struct decode_args *a, const char *backend)
{
	return a->pmu && a->out.format == AUXCAP_OUT_TEXT &&
	       (!strcmp(backend, "intel_bts") || !strcmp(backend, "arm_spe"));
}

/* ---- the decode stage ------------------------------------------------------------------ */

static int print_line(void *ctx, const char *line)
{
	FILE *out = ctx;

	if (fputs(line, out) == EOF || putc('\n', out) == EOF)
		return -EIO;
	return 0;
}

static int run_dump(struct decode_args *a, struct auxcap_decode *d, FILE *out)
{
	int r = auxcap_decode_dump(d, print_line, out);

	if (r == -EOPNOTSUPP) {
		cli_err("the %s backend has no packet listing", auxcap_decode_get_info(d)->backend);
		return CLI_ERR;
	}
	if (r < 0) {
		cli_err("dumping '%s' failed: %s", a->file, strerror(-r));
		return CLI_ERR;
	}
	if (fflush(out) == EOF) {
		cli_err("writing the output failed: %s", strerror(errno));
		return CLI_ERR;
	}
	if (r > 0)
		cli_warn("%d decode error%s in '%s' (see the [offset: ...] lines)", r,
			 r == 1 ? "" : "s", a->file);
	return CLI_OK;
}

static int run_merge(struct decode_args *a, struct auxcap_decode *d, FILE *out)
{
	const struct auxcap_decode_info *info = auxcap_decode_get_info(d);
	const struct auxcap_decode_filter *filter = cli_filter_get(&a->filter);
	const struct auxcap_decode_event *ev;
	const struct auxcap_perf_evsel *sampled[2] = { NULL, NULL }; /* events with samples */
	struct auxcap_out *w = NULL;
	uint64_t kept = 0;
	int r;

	a->out.sz = sizeof(a->out);
	a->out.branches = a->want_b;
	a->out.insns = a->want_i;
	a->out.calls = a->want_c;
	a->out.sideband = a->sideband;
	a->out.func_time = a->func_time;
	a->out.srcline = a->srcline;
	a->out.inlines = a->inlines;
	r = auxcap_out_new(out, d, &a->out, &w);
	if (r < 0) {
		cli_err("cannot start the output: %s", strerror(-r));
		return CLI_ERR;
	}
	while ((r = auxcap_decode_next(d, &ev)) == 1) {
		if (a->has_time && (ev->time < a->time_lo || ev->time > a->time_hi)) {
			if (ev->time > a->time_hi && ev->has_time) {
				r = 0; /* (the stream is in time order: nothing later is inside) */
				break;
			}
			continue;
		}
		if (filter && !auxcap_decode_filter_match(filter, ev))
			continue;
		if (!cli_code_filter_match(&a->filter, d, ev))
			continue;
		kept++;
		if (ev->kind == AUXCAP_DECODE_SAMPLE && ev->evsel != sampled[0] && !sampled[1])
			sampled[sampled[0] ? 1 : 0] = ev->evsel;
		r = auxcap_out_event(w, ev);
		if (r < 0)
			break;
	}
	if (r == 0)
		r = auxcap_out_finish(w);
	auxcap_out_free(w);
	cli_progress_end();
	if (r == -EIO) {
		cli_err("writing the output failed: %s", strerror(errno ? errno : EIO));
		return CLI_ERR;
	}
	if (r < 0) {
		cli_err("decoding '%s' stopped: %s", a->file,
			*auxcap_decode_error(d) ? auxcap_decode_error(d) : strerror(-r));
		return CLI_ERR;
	}
	if (sampled[1] && a->out.format == AUXCAP_OUT_FOLDED &&
	    a->out.weight != AUXCAP_OUT_WEIGHT_TIME && a->out.weight != AUXCAP_OUT_WEIGHT_INSNS)
		cli_warn("the folded stacks count the samples of more than one event together (%s, "
			 "%s): pick one with --event NAME",
			 sampled[0] && sampled[0]->name ? sampled[0]->name : "?",
			 sampled[1]->name ? sampled[1]->name : "?");
	if ((filter || a->filter.nr_syms || a->filter.nr_dsos) && !kept)
		cli_warn("no event of '%s' is of the threads, events, functions or files --pid, "
			 "--tid, --comm, --event, --symbols or --dsos picked (see 'auxcap report %s' "
			 "for those it has)",
			 a->file, a->file);
	if (info->gaps)
		cli_warn("%" PRIu64 " decode gap%s in '%s' (see the '!! gap' lines)", info->gaps,
			 info->gaps == 1 ? "" : "s", a->file);
	if (info->samples_traced > info->samples_aligned)
		cli_warn("%" PRIu64 " of %" PRIu64 " samples on traced threads were not found in "
			 "the trace near their time; their context is the trace's at their time",
			 info->samples_traced - info->samples_aligned, info->samples_traced);
	return CLI_OK;
}

static int cmd_decode_run(int argc, char **argv)
{
	static struct decode_args a;
	static char out_buf[1 << 16];
	struct auxcap_decode_opts o = { .sz = sizeof(o) };
	struct auxcap_decode *d = NULL;
	char errbuf[512] = "", inpath[4096];
	FILE *out = stdout;
	const char *backend;
	int r, ret;

	memset(&a, 0, sizeof(a));
	if (parse_args(argc, argv, &a) < 0)
		return CLI_ERR;
	if (!a.file) {
		if (a.pmu)
			cli_err("no trace file given: auxcap decode --raw %s FILE", a.pmu);
		else
			cli_err("no file given: auxcap decode FILE (a perf.data capture), or "
				"auxcap decode --raw intel_pt FILE --elf BINARY[:LOAD_ADDR]");
		return CLI_ERR;
	}
	/* "-": standard input (a pipe is saved to an unlinked file, kept open until exit). */
	if (cli_input_open(a.file, inpath, sizeof(inpath), &(int){ -1 }) < 0)
		return CLI_ERR;
	a.open_path = inpath;
	if (a.pmu) {
		const struct auxcap_backend_ops *b = auxcap_backend_find(a.pmu);

		if (!b && !strncmp(a.pmu, "arm_spe_", 8))
			b = auxcap_backend_find("arm_spe");
		if (!b) {
			cli_err("--raw '%s': no raw decoder for this PMU in this build; supported: "
				"intel_pt, intel_bts, arm_spe",
				a.pmu);
			return CLI_ERR;
		}
		if ((!b->decoder_new || text_by_backend(&a, b->name)) && !(a.dump && b->dump)) {
			if (a.output && !(out = cli_output_open(a.output)))
				return CLI_ERR;
			ret = legacy_print(&a, NULL, out, !strcmp(b->name, "arm_spe"));
			if (out != stdout && fclose(out) == EOF && ret == CLI_OK) {
				cli_err("writing '%s' failed: %s", a.output, strerror(errno));
				ret = CLI_ERR;
			}
			return ret;
		}
		o.raw_backend = b->name;
	}
	o.code = a.code;
	o.nr_code = a.ncode;
	o.per_insn = a.want_i;
	o.last_branches = a.last_branches;
	o.backend_options = a.backend_opts[0] ? a.backend_opts : NULL;
	o.errbuf = errbuf;
	o.errlen = sizeof(errbuf);
	if (cli_progress_begin(a.progress, !a.output && isatty(STDOUT_FILENO)))
		o.progress = cli_progress_update;
	o.name = a.file; /* "-" rather than the saved copy's /proc path */
	o.raw_names = a.raw_names;
	o.vmlinux = a.vmlinux;
	r = auxcap_decode_open(a.open_path, &o, &d);
	if (r < 0) {
		cli_err("%s", errbuf[0] ? errbuf : strerror(-r));
		cli_progress_end();
		return CLI_ERR;
	}
	if (a.pmu && !a.ncode && !a.dump)
		cli_warn("no --elf or --raw-bin given: without the traced code only the packets can "
			 "be shown (try --dump)");
	if (a.output) {
		out = cli_output_open(a.output);
		if (!out) {
			auxcap_decode_close(d);
			cli_progress_end();
			return CLI_ERR;
		}
	} else {
		setvbuf(stdout, out_buf, _IOFBF, sizeof(out_buf));
	}
	backend = auxcap_decode_get_info(d)->backend;
	if (!backend && a.dump) {
		cli_err("--dump lists AUX trace packets, and '%s' has no AUX trace (its samples: "
			"auxcap decode without --dump)",
			a.file);
		ret = CLI_ERR;
	} else if (!backend)
		ret = run_merge(&a, d, out); /* counter samples only */
	else if (a.dump && auxcap_backend_find(backend)->dump)
		ret = run_dump(&a, d, out);
	else if (!auxcap_backend_find(backend)->decoder_new || text_by_backend(&a, backend))
		ret = legacy_print(&a, d, out, !strcmp(backend, "arm_spe"));
	else
		ret = run_merge(&a, d, out);
	if (out != stdout && fclose(out) == EOF && ret == CLI_OK) {
		cli_err("writing '%s' failed: %s", a.output, strerror(errno));
		ret = CLI_ERR;
	}
	auxcap_decode_close(d);
	cli_progress_end();
	return ret;
}

const struct cli_cmd cli_cmd_decode = {
	.name = "decode",
	.summary = "decode a capture's trace, merged with its samples (text, JSON, Perfetto, "
		   "folded)",
	.run = cmd_decode_run,
};
