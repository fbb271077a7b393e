/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap decode: offline decoding.
 *
 * Today: raw trace files (`--raw intel_pt FILE`), decoded with the memory image given by
 * --elf / --raw-bin, printed as a packet listing (--dump), branches (--itrace=b),
 * instructions with disassembly (--itrace=i) or calls/returns with depth (--itrace=c).
 * Decoding perf.data captures comes with the perf.data reader.
 *
 * Divisions: argument parsing; the image and symbols; the output writers (one state
 * machine that turns instructions/blocks and events into branch, call and instruction
 * lines); the driver.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "auxcap/perf_data.h"
#include "cli.h"

#if AUXCAP_HAVE_LIBIPT && AUXCAP_HAVE_BACKEND_INTEL_PT
#define HAVE_IPT 1
#include "ipt.h"
#else
#define HAVE_IPT 0
#endif
#if AUXCAP_HAVE_LIBELF
#include "binaries.h"
#include "elf_file.h"
#endif
#include "disasm.h"
#if AUXCAP_HAVE_BACKEND_ARM_SPE
#include "spe_decode.h"
#endif
#if AUXCAP_HAVE_BACKEND_INTEL_BTS
#include "bts_decode.h"
#endif

#define MAX_IMAGES 64

static void usage(FILE *f)
{
	fprintf(f,
		"usage: auxcap decode --raw PMU FILE [options]\n"
		"\n"
		"Decode a raw AUX trace file (no perf.data around it).  PMUs in this build: %s.\n"
		"\n"
		"  --raw PMU              the PMU that produced FILE (intel_pt)\n"
		"  --elf BIN[:ADDR]       code of BIN (its executable PT_LOAD segments and symbols);\n"
		"                         ADDR is where its first segment was loaded (PIE, shared\n"
		"                         objects); default: its link address.  Repeatable.\n"
		"  --raw-bin FILE:ADDR    raw code bytes of FILE loaded at ADDR.  Repeatable.\n"
		"  --cpu F/M[/S]          CPU family/model/stepping of the traced machine (errata)\n"
		"  --mtc-freq N           IA32_RTIT_CTL.MTCFreq used while tracing\n"
		"  --nom-freq N           nominal (max non-turbo) ratio, MSR_PLATFORM_INFO[15:8]\n"
		"  --cpuid-0x15.eax N     CPUID leaf 0x15 EAX (TSC/crystal ratio denominator)\n"
		"  --cpuid-0x15.ebx N     CPUID leaf 0x15 EBX (TSC/crystal ratio numerator)\n"
		"  --itrace=LETTERS       b: branches (default), i: instructions with disassembly,\n"
		"                         c: calls and returns with call depth\n"
		"  --insn-decoder         decode per instruction even when only branches are asked\n"
		"                         (default for b/c: libipt's faster block decoder)\n"
		"  --dump                 list the trace packets instead (ptdump's format), with\n"
		"                         --no-offset, --raw-bytes (packet bytes in hex), --lastip\n"
		"                         (full IP after IP packets), --exec-mode, --no-sync (start\n"
		"                         at offset 0, not at the first PSB)\n"
		"  -h, --help             this text\n",
		HAVE_IPT ? "intel_pt" : "none (built without libipt)");
}

#if HAVE_IPT

struct image_file {
	const char *path; /* borrowed from argv, or the file found for a capture's mapping */
	const char *mapped; /* capture mappings: the path the capture mapped (borrowed) */
	uint64_t addr;	  /* load address (--elf: of the first segment) */
	bool has_addr;	  /* ADDR was given */
	bool raw;	  /* --raw-bin (no ELF) */
#if AUXCAP_HAVE_LIBELF
	struct auxcap_elf *elf; /* owned, NULL for raw */
#endif
	uint64_t bias; /* run-time address minus link-time address */
};

struct decode_args {
	const char *pmu;  /* --raw */
	const char *file; /* the trace */
	struct image_file images[MAX_IMAGES];
	size_t nimages;
	struct auxcap_ipt_params params;
	bool dump;
	struct auxcap_ipt_dump_opts dump_opts; /* --no-offset, --lastip, ... (with --dump) */
	bool want_b, want_i, want_c;	       /* --itrace letters */
	bool insn_decoder;
};

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
static int parse_path_addr(const char *arg, bool addr_required, struct image_file *img)
{
	const char *colon = strrchr(arg, ':');
	char *copy;

	if (!colon) {
		if (addr_required || !*arg)
			return -EINVAL;
		img->path = arg;
		return 0;
	}
	if (colon == arg)
		return -EINVAL;
	if (parse_u64(colon + 1, UINT64_MAX, &img->addr) < 0)
		return -EINVAL;
	copy = strndup(arg, (size_t)(colon - arg));
	if (!copy)
		return -ENOMEM;
	img->path = copy; /* freed at exit with the process; a handful of bytes */
	img->has_addr = true;
	return 0;
}

/* Value of "--opt=V" or "--opt V"; advances *i for the second form. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (!strcmp(argv[*i], name)) {
		if (*i + 1 >= argc)
			return NULL;
		return argv[++*i];
	}
	return NULL;
}

static bool is_opt(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && (arg[n] == '\0' || arg[n] == '=');
}

static int parse_args(int argc, char **argv, struct decode_args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *v;
		uint64_t n;

		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			usage(stdout);
			exit(CLI_OK);
		} else if (!strcmp(arg, "--dump")) {
			a->dump = true;
		} else if (!strcmp(arg, "--no-offset")) {
			a->dump_opts.no_offset = true;
		} else if (!strcmp(arg, "--raw-bytes")) {
			a->dump_opts.raw = true;
		} else if (!strcmp(arg, "--lastip")) {
			a->dump_opts.lastip = true;
		} else if (!strcmp(arg, "--exec-mode")) {
			a->dump_opts.exec_mode = true;
		} else if (!strcmp(arg, "--no-sync")) {
			a->dump_opts.no_sync = true;
		} else if (!strcmp(arg, "--insn-decoder")) {
			a->insn_decoder = true;
		} else if (is_opt(arg, "--raw-bin")) {
			if (!(v = opt_value(argc, argv, &i, "--raw-bin"))) {
				cli_err("--raw-bin needs FILE:ADDR");
				return -EINVAL;
			}
			if (a->nimages == MAX_IMAGES) {
				cli_err("too many --elf/--raw-bin (at most %d)", MAX_IMAGES);
				return -EINVAL;
			}
			if (parse_path_addr(v, true, &a->images[a->nimages]) < 0) {
				cli_err("bad --raw-bin '%s': expected FILE:ADDR, e.g. code.bin:0x400000",
					v);
				return -EINVAL;
			}
			a->images[a->nimages++].raw = true;
		} else if (is_opt(arg, "--raw")) {
			if (!(v = opt_value(argc, argv, &i, "--raw"))) {
				cli_err("--raw needs a PMU name, e.g. --raw intel_pt FILE");
				return -EINVAL;
			}
			a->pmu = v;
		} else if (is_opt(arg, "--elf")) {
			if (!(v = opt_value(argc, argv, &i, "--elf"))) {
				cli_err("--elf needs BINARY[:LOAD_ADDR]");
				return -EINVAL;
			}
			if (a->nimages == MAX_IMAGES) {
				cli_err("too many --elf/--raw-bin (at most %d)", MAX_IMAGES);
				return -EINVAL;
			}
			if (parse_path_addr(v, false, &a->images[a->nimages]) < 0) {
				cli_err("bad --elf '%s': expected BINARY[:LOAD_ADDR] with a number as "
					"LOAD_ADDR, e.g. ./a.out:0x555555554000",
					v);
				return -EINVAL;
			}
			a->nimages++;
		} else if (is_opt(arg, "--cpu")) {
			v = opt_value(argc, argv, &i, "--cpu");
			if (!v || auxcap_ipt_params_parse_cpu(&a->params, v) < 0) {
				cli_err("bad --cpu '%s': expected FAMILY/MODEL[/STEPPING] as in "
					"/proc/cpuinfo, e.g. --cpu 6/142",
					v ? v : "");
				return -EINVAL;
			}
		} else if (is_opt(arg, "--mtc-freq")) {
			v = opt_value(argc, argv, &i, "--mtc-freq");
			if (parse_u64(v, 15, &n) < 0) {
				cli_err("bad --mtc-freq '%s': expected 0..15 (IA32_RTIT_CTL.MTCFreq)",
					v ? v : "");
				return -EINVAL;
			}
			a->params.mtc_freq = (uint8_t)n;
		} else if (is_opt(arg, "--nom-freq")) {
			v = opt_value(argc, argv, &i, "--nom-freq");
			if (parse_u64(v, 255, &n) < 0) {
				cli_err("bad --nom-freq '%s': expected 0..255 (the max non-turbo ratio)",
					v ? v : "");
				return -EINVAL;
			}
			a->params.nom_freq = (uint8_t)n;
		} else if (is_opt(arg, "--cpuid-0x15.eax") || is_opt(arg, "--cpuid-0x15.ebx")) {
			bool eax = is_opt(arg, "--cpuid-0x15.eax");

			v = opt_value(argc, argv, &i,
				      eax ? "--cpuid-0x15.eax" : "--cpuid-0x15.ebx");
			if (parse_u64(v, UINT32_MAX, &n) < 0) {
				cli_err("bad %s '%s': expected a 32-bit number",
					eax ? "--cpuid-0x15.eax" : "--cpuid-0x15.ebx", v ? v : "");
				return -EINVAL;
			}
			if (eax)
				a->params.cpuid_0x15_eax = (uint32_t)n;
			else
				a->params.cpuid_0x15_ebx = (uint32_t)n;
		} else if (is_opt(arg, "--itrace")) {
			v = opt_value(argc, argv, &i, "--itrace");
			if (!v || !*v) {
				cli_err("--itrace needs letters: b (branches), i (instructions), c "
					"(calls/returns)");
				return -EINVAL;
			}
			for (const char *p = v; *p; p++) {
				if (*p == 'b')
					a->want_b = true;
				else if (*p == 'i')
					a->want_i = true;
				else if (*p == 'c')
					a->want_c = true;
				else {
					cli_err("bad --itrace letter '%c' in '%s': supported are b, i, c",
						*p, v);
					return -EINVAL;
				}
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
	if (!a->dump && (a->dump_opts.no_offset || a->dump_opts.raw || a->dump_opts.lastip ||
			 a->dump_opts.exec_mode || a->dump_opts.no_sync)) {
		cli_err("--no-offset, --raw-bytes, --lastip, --exec-mode and --no-sync only apply "
			"to --dump; add --dump");
		return -EINVAL;
	}
	return 0;
}

/* ---- image and symbols ---------------------------------------------------------------- */

static int load_images(struct decode_args *a, struct auxcap_ipt_image *image)
{
	for (size_t k = 0; k < a->nimages; k++) {
		struct image_file *img = &a->images[k];
		int r;

		if (img->raw) {
			r = auxcap_ipt_image_add_raw(image, img->path, 0, 0, img->addr);
			if (r < 0) {
				cli_err("cannot load --raw-bin '%s': %s", img->path,
					r == -ERANGE ? "file is empty" : strerror(-r));
				return r;
			}
			continue;
		}
#if AUXCAP_HAVE_LIBELF
		{
			const struct auxcap_elf_segment *segs;
			size_t nsegs, added = 0;

			r = auxcap_elf_open(img->path, &img->elf);
			if (r < 0) {
				cli_err("cannot read ELF '%s': %s%s", img->path,
					r == -ENOEXEC ? "not an ELF file" : strerror(-r),
					r == -ENOEXEC ? "; use --raw-bin FILE:ADDR for raw code"
						      : "");
				return r;
			}
			if (img->has_addr)
				img->bias = img->addr - auxcap_elf_link_base(img->elf);
			else if (auxcap_elf_is_dyn(img->elf) && !auxcap_elf_link_base(img->elf))
				cli_warn(
					"'%s' is position independent; without --elf %s:LOAD_ADDR it "
					"is decoded at address 0",
					img->path, img->path);
			nsegs = auxcap_elf_segments(img->elf, &segs);
			for (size_t s = 0; s < nsegs; s++) {
				if (!segs[s].exec || !segs[s].filesz)
					continue;
				r = auxcap_ipt_image_add_raw(image, img->path, segs[s].offset,
							     segs[s].filesz,
							     segs[s].vaddr + img->bias);
				if (r < 0) {
					cli_err("cannot map '%s' segment at 0x%" PRIx64 ": %s",
						img->path, segs[s].vaddr, strerror(-r));
					return r;
				}
				added++;
			}
			if (!added)
				cli_warn("'%s' has no executable segment; nothing of it is decoded",
					 img->path);
		}
#else
		cli_err("cannot read ELF '%s': this build has no libelf; use --raw-bin FILE:ADDR",
			img->path);
		return -EOPNOTSUPP;
#endif
	}
	return 0;
}

/* "sym+0xoff" for @addr, or "[unknown]". */
static const char *symbolize(const struct decode_args *a, uint64_t addr, char *buf, size_t n)
{
#if AUXCAP_HAVE_LIBELF
	for (size_t k = 0; k < a->nimages; k++) {
		const char *name;
		uint64_t off;

		const struct auxcap_elf_segment *segs;
		uint64_t link = addr - a->images[k].bias;
		size_t nsegs;
		bool inside = false;

		if (!a->images[k].elf)
			continue;
		/* Only the image whose code holds @addr may name it. */
		nsegs = auxcap_elf_segments(a->images[k].elf, &segs);
		for (size_t i = 0; i < nsegs && !inside; i++)
			inside = segs[i].exec && link >= segs[i].vaddr &&
				 link - segs[i].vaddr < segs[i].filesz;
		if (!inside)
			continue;
		if (auxcap_elf_symbolize(a->images[k].elf, link, &name, &off) ==
		    1) {
			snprintf(buf, n, "%s+0x%" PRIx64, name, off);
			return buf;
		}
	}
#else
	(void)a;
	(void)addr;
#endif
	snprintf(buf, n, "[unknown]");
	return buf;
}

/* ---- output ------------------------------------------------------------------------- */

struct out_state {
	const struct decode_args *args;
	struct auxcap_disasm *disasm; /* for --itrace=i and block sizes; may be NULL */
	bool have_prev;		      /* prev_* describe the last instruction executed */
	uint64_t prev_ip;	      /* address of the last instruction */
	uint64_t prev_next;	      /* address after it (0 if its length is unknown) */
	enum auxcap_ipt_iclass prev_class;
	long depth;	      /* call depth for --itrace=c */
	uint64_t len_ip[256]; /* cache of conditional jump lengths, by address hash */
	uint8_t len_val[256]; /* their lengths (bytes; 0 = empty slot) */
	uint64_t gaps, branches, insns;
};

static void put_tsc(const struct auxcap_ipt_item *it)
{
	if (it->flags & AUXCAP_IPT_F_HAS_TSC)
		printf("%16" PRIu64 " ", it->tsc);
	else
		printf("%16s ", "-");
}

static const char *branch_kind(enum auxcap_ipt_iclass c)
{
	switch (c) {
	case AUXCAP_IPT_IC_CALL:
		return "call";
	case AUXCAP_IPT_IC_RETURN:
		return "return";
	case AUXCAP_IPT_IC_JUMP:
		return "jmp";
	case AUXCAP_IPT_IC_COND_JUMP:
		return "jcc";
	case AUXCAP_IPT_IC_FAR_CALL:
		return "syscall";
	case AUXCAP_IPT_IC_FAR_RETURN:
		return "sysret";
	case AUXCAP_IPT_IC_FAR_JUMP:
		return "far-jmp";
	default:
		return "branch";
	}
}

static void print_branch(struct out_state *o, const struct auxcap_ipt_item *it, const char *kind,
			 uint64_t from, uint64_t to, bool has_from, bool has_to)
{
	char fs[256], ts[256];

	o->branches++;
	if (!o->args->want_b)
		return;
	put_tsc(it);
	printf("%-9s", kind);
	if (has_from)
		printf("%016" PRIx64 " %s", from, symbolize(o->args, from, fs, sizeof(fs)));
	else
		printf("%16s %s", "0", "[untraced]");
	printf(" => ");
	if (has_to)
		printf("%016" PRIx64 " %s\n", to, symbolize(o->args, to, ts, sizeof(ts)));
	else
		printf("%16s %s\n", "0", "[untraced]");
}

static void print_callret(struct out_state *o, const struct auxcap_ipt_item *it, bool call,
			  uint64_t from, uint64_t to)
{
	char fs[256], ts[256];
	long depth;

	if (call)
		depth = o->depth++;
	else
		depth = o->depth > 0 ? --o->depth : 0;
	if (!o->args->want_c)
		return;
	put_tsc(it);
	printf("%4ld %*s%s %s (from %s)\n", depth, (int)(2 * (depth < 40 ? depth : 40)), "",
	       call ? "call  " : "return", symbolize(o->args, to, ts, sizeof(ts)),
	       symbolize(o->args, from, fs, sizeof(fs)));
}

/* The instruction just before @ip (prev_*) was a branch to @ip, or fell through. */
static void flow_to(struct out_state *o, const struct auxcap_ipt_item *it, uint64_t ip)
{
	enum auxcap_ipt_iclass c = o->prev_class;

	if (!o->have_prev || c == AUXCAP_IPT_IC_OTHER || c == AUXCAP_IPT_IC_ERROR ||
	    c == AUXCAP_IPT_IC_PTWRITE)
		return;
	/* A conditional jump to the next instruction is not a taken branch. */
	if (c == AUXCAP_IPT_IC_COND_JUMP && (!o->prev_next || ip == o->prev_next))
		return;
	print_branch(o, it, branch_kind(c), o->prev_ip, ip, true, true);
	if (c == AUXCAP_IPT_IC_CALL || c == AUXCAP_IPT_IC_FAR_CALL)
		print_callret(o, it, true, o->prev_ip, ip);
	else if (c == AUXCAP_IPT_IC_RETURN || c == AUXCAP_IPT_IC_FAR_RETURN)
		print_callret(o, it, false, o->prev_ip, ip);
}

static void print_insn(struct out_state *o, const struct auxcap_ipt_item *it)
{
	char sym[256], text[160] = "(no disassembler)";

	if (o->disasm && auxcap_disasm_insn(o->disasm, it->mode ? (int)it->mode : 64, it->raw,
					    it->size, it->ip, text, sizeof(text)) < 0)
		snprintf(text, sizeof(text), "(bad instruction)");
	put_tsc(it);
	printf("%016" PRIx64 " %-32s %s%s\n", it->ip, symbolize(o->args, it->ip, sym, sizeof(sym)),
	       it->flags & AUXCAP_IPT_F_SPECULATIVE ? "? " : "", text);
}

static const char *event_name(const struct auxcap_ipt_item *it)
{
	switch (it->event) {
	case AUXCAP_IPT_EV_ENABLED:
		return it->flags & AUXCAP_IPT_F_RESUMED ? "resumed" : "enabled";
	case AUXCAP_IPT_EV_DISABLED:
		return "disabled";
	case AUXCAP_IPT_EV_ASYNC_DISABLED:
		return "disabled (async)";
	case AUXCAP_IPT_EV_ASYNC_BRANCH:
		return "interrupt";
	case AUXCAP_IPT_EV_PAGING:
		return "paging";
	case AUXCAP_IPT_EV_ASYNC_PAGING:
		return "paging";
	case AUXCAP_IPT_EV_OVERFLOW:
		return "overflow (trace lost)";
	case AUXCAP_IPT_EV_EXEC_MODE:
		return "exec mode";
	case AUXCAP_IPT_EV_TSX:
		return it->flags & AUXCAP_IPT_F_TSX_SPECULATIVE ? "begin transaction"
		       : it->flags & AUXCAP_IPT_F_TSX_ABORTED	? "aborted"
								: "committed";
	case AUXCAP_IPT_EV_STOP:
		return "stopped";
	case AUXCAP_IPT_EV_VMCS:
	case AUXCAP_IPT_EV_ASYNC_VMCS:
		return "vmcs";
	case AUXCAP_IPT_EV_EXSTOP:
		return "exstop";
	case AUXCAP_IPT_EV_MWAIT:
		return "mwait";
	case AUXCAP_IPT_EV_PWRE:
		return "pwre";
	case AUXCAP_IPT_EV_PWRX:
		return "pwrx";
	case AUXCAP_IPT_EV_PTWRITE:
		return "ptwrite";
	case AUXCAP_IPT_EV_TICK:
		return "tick";
	case AUXCAP_IPT_EV_CBR:
		return "cbr";
	case AUXCAP_IPT_EV_MNT:
		return "mnt";
	case AUXCAP_IPT_EV_END_OF_TRACE:
		return "end of trace (flow cut)";
	}
	return "event";
}

static void handle_event(struct out_state *o, const struct auxcap_ipt_item *it)
{
	bool has_ip = !(it->flags & AUXCAP_IPT_F_IP_SUPPRESSED);
	char sym[256];

	if (it->flags & AUXCAP_IPT_F_STATUS_UPDATE)
		return;
	switch (it->event) {
	case AUXCAP_IPT_EV_ASYNC_BRANCH:
		print_branch(o, it, "interrupt", it->at, it->ip, true, has_ip);
		o->have_prev = false;
		return;
	case AUXCAP_IPT_EV_ENABLED:
		print_branch(o, it, "tr strt", 0, it->ip, false, has_ip);
		o->have_prev = false;
		return;
	case AUXCAP_IPT_EV_DISABLED:
		print_branch(o, it, "tr end", o->prev_ip, 0, o->have_prev, false);
		o->have_prev = false;
		return;
	case AUXCAP_IPT_EV_ASYNC_DISABLED:
		print_branch(o, it, "tr end", it->at, 0, true, false);
		o->have_prev = false;
		return;
	case AUXCAP_IPT_EV_OVERFLOW:
	case AUXCAP_IPT_EV_END_OF_TRACE:
		o->have_prev = false;
		break;
	case AUXCAP_IPT_EV_TICK:
	case AUXCAP_IPT_EV_EXEC_MODE:
	case AUXCAP_IPT_EV_CBR:
		return;
	default:
		break;
	}
	put_tsc(it);
	printf("-- %s", event_name(it));
	if (it->event == AUXCAP_IPT_EV_PAGING || it->event == AUXCAP_IPT_EV_ASYNC_PAGING)
		printf(" cr3=0x%" PRIx64, it->payload);
	else if (it->event == AUXCAP_IPT_EV_PTWRITE)
		printf(" 0x%" PRIx64, it->payload);
	if (has_ip && it->ip)
		printf(" at %016" PRIx64 " %s", it->ip,
		       symbolize(o->args, it->ip, sym, sizeof(sym)));
	printf(" (trace offset 0x%" PRIx64 ")\n", it->offset);
}

static void handle_gap(struct out_state *o, const struct auxcap_ipt_item *it)
{
	o->gaps++;
	o->have_prev = false;
	put_tsc(it);
	if (!it->native && it->err == -ENODATA) {
		printf("!! gap at trace offset 0x0: bytes before the first PSB cannot be "
		       "decoded\n");
		return;
	}
	printf("!! gap at trace offset 0x%" PRIx64 ": %s", it->offset,
	       it->native ? auxcap_ipt_strerror(it->native)
	       : it->err == -ELOOP ? "the flow loops without consuming trace (corrupt trace, "
				    "or the binary does not match it)"
				  : strerror(-it->err));
	if (it->ip)
		printf(" (ip 0x%" PRIx64 ")", it->ip);
	printf("; decoding resumes at the next PSB\n");
}

/* Length of the last instruction of a block, from its bytes (0 if unknown). */
static uint64_t block_last_len(struct out_state *o, const struct auxcap_ipt_item *it)
{
	size_t slot = (size_t)((it->end_ip * 0x9e3779b97f4a7c15ull) >> 56);
	char text[160];
	int r;

	/* Hot loops end blocks at the same few jumps: remember their lengths. */
	if (o->len_val[slot] && o->len_ip[slot] == it->end_ip)
		return o->len_val[slot];
	if (!o->disasm || !it->size)
		return 0;
	r = auxcap_disasm_insn(o->disasm, it->mode ? (int)it->mode : 64, it->raw, it->size,
			       it->end_ip, text, sizeof(text));
	if (r <= 0)
		return 0;
	o->len_ip[slot] = it->end_ip;
	o->len_val[slot] = (uint8_t)r;
	return (uint64_t)r;
}

static void handle_item(struct out_state *o, const struct auxcap_ipt_item *it)
{
	switch (it->kind) {
	case AUXCAP_IPT_ITEM_INSN:
		flow_to(o, it, it->ip);
		o->insns++;
		if (o->args->want_i)
			print_insn(o, it);
		o->have_prev = true;
		o->prev_ip = it->ip;
		o->prev_next = it->ip + it->size;
		o->prev_class = it->iclass;
		break;
	case AUXCAP_IPT_ITEM_BLOCK: {
		uint64_t len = 0;

		flow_to(o, it, it->ip);
		o->insns += it->ninsn;
		if (it->iclass == AUXCAP_IPT_IC_COND_JUMP)
			len = block_last_len(o, it);
		o->have_prev = true;
		o->prev_ip = it->end_ip;
		o->prev_next = len ? it->end_ip + len : 0;
		o->prev_class = it->iclass;
		break;
	}
	case AUXCAP_IPT_ITEM_EVENT:
		handle_event(o, it);
		break;
	case AUXCAP_IPT_ITEM_GAP:
		handle_gap(o, it);
		break;
	}
}

/* ---- driver ------------------------------------------------------------------------- */

static int print_line(void *ctx, const char *line)
{
	(void)ctx;
	if (puts(line) == EOF)
		return -EIO;
	return 0;
}

static int map_trace(const char *path, const uint8_t **ret_buf, size_t *ret_len)
{
	struct stat st;
	void *p;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int r = S_ISDIR(st.st_mode) ? -EISDIR : -errno;

		(void)close(fd);
		return r ? r : -EINVAL;
	}
	if (!st.st_size) {
		(void)close(fd);
		*ret_buf = NULL;
		*ret_len = 0;
		return 0;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	(void)close(fd);
	if (p == MAP_FAILED)
		return -errno;
	*ret_buf = p;
	*ret_len = (size_t)st.st_size;
	return 0;
}

/* Decode one Intel PT stream of @len bytes at @buf against @image into @o's output. */
static int decode_stream(struct decode_args *a, const uint8_t *buf, size_t len,
			 struct auxcap_ipt_image *image, struct out_state *o)
{
	struct auxcap_ipt_decoder_opts dopts = { .sz = sizeof(dopts) };
	struct auxcap_ipt_decoder *dec = NULL;
	struct auxcap_ipt_item item;
	int r;

	/* Blocks need the disassembler to tell taken conditional jumps from fall-through. */
	dopts.block = !a->want_i && !a->insn_decoder && o->disasm;
	r = auxcap_ipt_decoder_new(buf, len, image, &a->params, &dopts, &dec);
	if (r < 0) {
		cli_err("cannot start the Intel PT decoder: %s", strerror(-r));
		return r;
	}
	o->have_prev = false;
	while ((r = auxcap_ipt_decoder_next(dec, &item)) == 1)
		handle_item(o, &item);
	auxcap_ipt_decoder_free(dec);
	if (r < 0)
		cli_err("decoding '%s' stopped: %s", a->file, strerror(-r));
	return r < 0 ? r : 0;
}

static int decode_intel_pt(struct decode_args *a)
{
	struct auxcap_ipt_image *image = NULL;
	struct out_state o = { .args = a };
	const uint8_t *buf = NULL;
	size_t len = 0;
	int r, ret = CLI_ERR;

	r = map_trace(a->file, &buf, &len);
	if (r < 0) {
		cli_err("cannot read trace file '%s': %s", a->file, strerror(-r));
		return CLI_ERR;
	}
	if (a->params.cpu_set && auxcap_ipt_params_check_cpu(&a->params) < 0)
		cli_warn("cpu %u/%u is not known to this libipt; decoding without errata "
			 "workarounds",
			 a->params.cpu_family, a->params.cpu_model);

	if (a->dump) {
		r = auxcap_ipt_dump(buf, len, &a->params, &a->dump_opts, print_line, NULL);
		if (r < 0) {
			cli_err("dumping '%s' failed: %s", a->file, strerror(-r));
			goto out;
		}
		if (r > 0)
			cli_warn("%d decode error%s in '%s' (see the [offset: ...] lines)", r,
				 r == 1 ? "" : "s", a->file);
		ret = CLI_OK;
		goto out;
	}

	if (!a->nimages)
		cli_warn("no --elf or --raw-bin given: without the traced code only the packets "
			 "can be shown (try --dump)");
	r = auxcap_ipt_image_new(&image);
	if (r < 0) {
		cli_err("out of memory");
		goto out;
	}
	r = load_images(a, image);
	if (r < 0)
		goto out;
	r = auxcap_disasm_new(&o.disasm);
	if (r < 0 && a->want_i)
		cli_warn("no disassembler in this build (capstone missing); instructions are shown "
			 "without text");

	r = decode_stream(a, buf, len, image, &o);
	if (r < 0)
		goto out;
	if (fflush(stdout) == EOF) {
		cli_err("writing the output failed: %s", strerror(errno));
		goto out;
	}
	if (o.gaps)
		cli_warn("%" PRIu64 " decode gap%s in '%s' (see the '!! gap' lines); %" PRIu64
			 " instructions decoded",
			 o.gaps, o.gaps == 1 ? "" : "s", a->file, o.insns);
	ret = CLI_OK;
out:
	auxcap_disasm_free(o.disasm);
	auxcap_ipt_image_free(image);
#if AUXCAP_HAVE_LIBELF
	for (size_t k = 0; k < a->nimages; k++)
		auxcap_elf_free(a->images[k].elf);
#endif
	if (buf)
		(void)munmap((void *)buf, len);
	return ret;
}

/* ---- raw Arm SPE and Intel BTS streams ---------------------------------------------------- */

/* Print an SPE or BTS stream; -EOPNOTSUPP if that backend is not built. */
static int print_spe_bts(bool spe, const uint8_t *buf, size_t len, bool dump, uint64_t *errors)
{
	int r = -EOPNOTSUPP;

	if (spe) {
#if AUXCAP_HAVE_BACKEND_ARM_SPE
		struct auxcap_spe_stats st;

		r = auxcap_spe_dump_raw(buf, len, stdout,
					(dump ? AUXCAP_SPE_DUMP_PACKETS : 0) |
						AUXCAP_SPE_DUMP_SAMPLES | AUXCAP_SPE_DUMP_SUMMARY,
					&st);
		if (r == 0)
			*errors += st.errors;
#endif
	} else {
#if AUXCAP_HAVE_BACKEND_INTEL_BTS
		struct auxcap_bts_stats st;

		r = auxcap_bts_dump_raw(buf, len, stdout, AUXCAP_BTS_DUMP_SUMMARY, &st);
		if (r == 0)
			*errors += st.errors;
#endif
	}
	(void)buf;
	(void)len;
	(void)dump;
	(void)errors;
	return r;
}

static int decode_raw_spe_bts(struct decode_args *a)
{
	bool spe = !strncmp(a->pmu, "arm_spe", 7);
	const uint8_t *buf = NULL;
	uint64_t errors = 0;
	size_t len = 0;
	int r;

	if (!a->file) {
		cli_err("no trace file given: auxcap decode --raw %s FILE", a->pmu);
		return CLI_ERR;
	}
	r = map_trace(a->file, &buf, &len);
	if (r < 0) {
		cli_err("cannot read trace file '%s': %s", a->file, strerror(-r));
		return CLI_ERR;
	}
	r = print_spe_bts(spe, buf, len, a->dump, &errors);
	if (buf)
		(void)munmap((void *)buf, len);
	if (r == -EOPNOTSUPP) {
		cli_err("--raw %s: this build has no %s backend (meson -D%s=enabled)", a->pmu,
			spe ? "Arm SPE" : "Intel BTS", spe ? "arm_spe" : "intel_bts");
		return CLI_ERR;
	}
	if (r < 0 || fflush(stdout) == EOF) {
		cli_err("writing the output failed: %s", strerror(r < 0 ? -r : errno));
		return CLI_ERR;
	}
	if (errors)
		cli_warn("%" PRIu64 " decode error%s in '%s' (see the error lines)", errors,
			 errors == 1 ? "" : "s", a->file);
	return CLI_OK;
}

/* ---- perf.data captures ------------------------------------------------------------------ */

/* One AUX stream: the AUXTRACE payloads of one queue, or one snapshot. */
struct pd_stream {
	uint32_t idx, cpu, tid;
	uint8_t *buf; /* owned */
	size_t len, cap;
};

static int stream_append(struct pd_stream *st, const void *p, size_t n)
{
	if (st->len + n > st->cap) {
		size_t cap = st->cap ? st->cap : 65536;
		uint8_t *q;

		while (cap < st->len + n)
			cap *= 2;
		q = realloc(st->buf, cap);
		if (!q)
			return -ENOMEM;
		st->buf = q;
		st->cap = cap;
	}
	memcpy(st->buf + st->len, p, n);
	st->len += n;
	return 0;
}

/* The build-id the capture recorded for @path, or 0 bytes. */
static size_t mapping_build_id(const struct auxcap_perf_reader *rd, const char *path,
			       const uint8_t **ret_id)
{
	const struct auxcap_perf_features *f = auxcap_perf_reader_features(rd);

	for (size_t i = 0; i < f->nr_build_ids; i++)
		if (f->build_ids[i].filename && !strcmp(f->build_ids[i].filename, path)) {
			*ret_id = f->build_ids[i].id;
			return f->build_ids[i].size;
		}
	return 0;
}

/*
 * Executable mappings of the capture become --elf images loaded where they were mapped.  The
 * binary is looked up by build-id (auxcap_binary_find: the mapped path if it still matches,
 * the capture's archive, perf's build-id cache).
 */
static int add_mapping(struct decode_args *a, const struct auxcap_perf_reader *rd, char **owned,
		       const struct auxcap_record *rec)
{
	const char *fn = rec->u.mmap.filename;
	uint64_t base = rec->u.mmap.addr - rec->u.mmap.pgoff;
	const uint8_t *id = NULL;
	struct image_file *img;
	size_t id_size;
	char *found = NULL;
	int r;

	if (rec->type == PERF_RECORD_MMAP2 && !(rec->u.mmap.prot & PROT_EXEC))
		return 0;
	if (rec->type == PERF_RECORD_MMAP && (rec->misc & PERF_RECORD_MISC_MMAP_DATA))
		return 0;
	if (!fn || fn[0] != '/')
		return 0; /* [vdso], //anon, ... */
	for (size_t k = 0; k < a->nimages; k++)
		if (a->images[k].mapped && !strcmp(a->images[k].mapped, fn))
			return 0; /* the first mapping of a file gives its load base */
	id_size = mapping_build_id(rd, fn, &id);
#if AUXCAP_HAVE_LIBELF
	r = auxcap_binary_find(a->file, fn, id, id_size, &found);
#else
	r = access(fn, R_OK) < 0 ? -errno : 0;
	found = r == 0 ? strdup(fn) : NULL;
	if (r == 0 && !found)
		r = -ENOMEM;
#endif
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		cli_warn("'%s' (mapped at 0x%" PRIx64 ") %s; its code is not decoded (run 'auxcap "
			 "archive' where it was recorded, or copy it back)",
			 fn, rec->u.mmap.addr,
			 id_size ? "is missing or was rebuilt (build-id differs)" : "cannot be read");
		return 0;
	}
	if (a->nimages == MAX_IMAGES) {
		cli_warn("more than %d binaries mapped; '%s' and later ones are not decoded",
			 MAX_IMAGES, fn);
		free(found);
		return 0;
	}
	/* One allocation holds both paths: the file to read, then the path it was mapped as. */
	{
		size_t lf = strlen(found) + 1, lm = strlen(fn) + 1;
		char *both = malloc(lf + lm);

		if (!both) {
			free(found);
			return -ENOMEM;
		}
		memcpy(both, found, lf);
		memcpy(both + lf, fn, lm);
		free(found);
		owned[a->nimages] = both;
		img = &a->images[a->nimages++];
		memset(img, 0, sizeof(*img));
		img->path = both;
		img->mapped = both + lf;
	}
	img->addr = base;
	img->has_addr = true;
	return 0;
}

static int decode_perf_data(struct decode_args *a)
{
	struct auxcap_perf_reader_opts ro = { .sz = sizeof(ro) };
	struct auxcap_perf_reader *rd = NULL;
	struct auxcap_ipt_image *image = NULL;
	struct out_state o = { .args = a };
	struct auxcap_perf_event ev;
	struct pd_stream *streams = NULL;
	char *owned[MAX_IMAGES] = { 0 };
	char errbuf[512] = "";
	size_t nstreams = 0;
	uint32_t aux_type = 0, fmt = 1;
	uint64_t errors = 0;
	bool snapshot = false;
	int r, ret = CLI_ERR;

	ro.errbuf = errbuf;
	ro.errbuf_size = sizeof(errbuf);
	r = auxcap_perf_reader_open(a->file, &ro, &rd);
	if (r < 0) {
		cli_err("cannot read '%s': %s", a->file, *errbuf ? errbuf : strerror(-r));
		return CLI_ERR;
	}
	if (auxcap_perf_reader_info(rd)->recovered)
		cli_warn("'%s' was not finalized (capture killed or disk full); decoding the "
			 "records up to its last complete one",
			 a->file);
	while ((r = auxcap_perf_reader_next(rd, &ev)) == 1) {
		switch (ev.rec.type) {
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
			r = add_mapping(a, rd, owned, &ev.rec);
			break;
		case PERF_RECORD_AUX:
			snapshot |= (ev.rec.u.aux.flags & PERF_AUX_FLAG_OVERWRITE) != 0;
			break;
		case AUXCAP_PERF_RECORD_AUXTRACE_INFO:
			aux_type = ev.u.auxtrace_info.type;
			break;
		case AUXCAP_PERF_RECORD_AUXTRACE: {
			struct pd_stream *st = NULL;

			/* Full trace: one stream per queue.  Snapshots: one stream each. */
			for (size_t k = 0; !snapshot && k < nstreams; k++)
				if (streams[k].idx == ev.u.auxtrace.idx)
					st = &streams[k];
			if (!st) {
				struct pd_stream *ns = realloc(streams, (nstreams + 1) * sizeof(*ns));

				if (!ns) {
					r = -ENOMEM;
					break;
				}
				streams = ns;
				st = &streams[nstreams++];
				memset(st, 0, sizeof(*st));
				st->idx = ev.u.auxtrace.idx;
				st->cpu = ev.u.auxtrace.cpu;
				st->tid = ev.u.auxtrace.tid;
			}
			r = stream_append(st, ev.u.auxtrace.data, (size_t)ev.u.auxtrace.size);
			break;
		}
		default:
			break;
		}
		if (r < 0)
			break;
	}
	if (r < 0) {
		cli_err("reading '%s' failed: %s", a->file,
			r == -EBADMSG ? auxcap_perf_reader_error(rd) : strerror(-r));
		goto out;
	}
	/* Which trace: AUXTRACE_INFO's type, else the AUX event's name. */
	for (size_t i = 0; auxcap_perf_reader_evsel(rd, i); i++) {
		const char *name = auxcap_perf_reader_evsel(rd, i)->name;

		if (name && !strncmp(name, "arm_spe", 7))
			fmt = 4;
		else if (name && !strncmp(name, "intel_bts", 9))
			fmt = 2;
	}
	if (aux_type)
		fmt = aux_type;
	if (fmt != 1 && fmt != 2 && fmt != 4) {
		cli_err("'%s' holds AUX trace of type %u; this build decodes Intel PT (1), Intel BTS "
			"(2) and Arm SPE (4)",
			a->file, fmt);
		goto out;
	}
	if (!nstreams) {
		cli_err("'%s' holds no AUX trace (no AUXTRACE records); record with an AUX event, "
			"e.g. auxcap record -e intel_pt//u (or --emulate)",
			a->file);
		goto out;
	}
	r = auxcap_ipt_image_new(&image);
	if (r == 0)
		r = load_images(a, image);
	if (r < 0)
		goto out;
	(void)auxcap_disasm_new(&o.disasm);
	for (size_t k = 0; k < nstreams; k++) {
		struct pd_stream *st = &streams[k];

		printf("# %s %zu: idx %u cpu %d tid %d, %zu bytes\n",
		       snapshot ? "snapshot" : "AUX stream", k, st->idx, (int)st->cpu, (int)st->tid,
		       st->len);
		if (fmt != 1) {
			r = print_spe_bts(fmt == 4, st->buf, st->len, a->dump, &errors);
		} else if (a->dump) {
			struct auxcap_ipt_dump_opts dopts = { .sz = sizeof(dopts) };

			r = auxcap_ipt_dump(st->buf, st->len, &a->params, &dopts, print_line, NULL);
		} else {
			r = decode_stream(a, st->buf, st->len, image, &o);
		}
		if (r < 0)
			goto out;
	}
	if (fflush(stdout) == EOF) {
		cli_err("writing the output failed: %s", strerror(errno));
		goto out;
	}
	if (o.gaps)
		cli_warn("%" PRIu64 " decode gap%s in '%s' (see the '!! gap' lines); %" PRIu64
			 " instructions decoded",
			 o.gaps, o.gaps == 1 ? "" : "s", a->file, o.insns);
	if (errors)
		cli_warn("%" PRIu64 " decode error%s in '%s' (see the error lines)", errors,
			 errors == 1 ? "" : "s", a->file);
	ret = CLI_OK;
out:
	auxcap_disasm_free(o.disasm);
	auxcap_ipt_image_free(image);
#if AUXCAP_HAVE_LIBELF
	for (size_t k = 0; k < a->nimages; k++)
		auxcap_elf_free(a->images[k].elf);
#endif
	for (size_t k = 0; k < MAX_IMAGES; k++)
		free(owned[k]);
	for (size_t k = 0; k < nstreams; k++)
		free(streams[k].buf);
	free(streams);
	auxcap_perf_reader_close(rd);
	return ret;
}

#endif /* HAVE_IPT */

static int cmd_decode_run(int argc, char **argv)
{
#if HAVE_IPT
	static struct decode_args a;
	static char out_buf[1 << 16];

	memset(&a, 0, sizeof(a));
	a.params.sz = sizeof(a.params);
	a.dump_opts.sz = sizeof(a.dump_opts);
	if (parse_args(argc, argv, &a) < 0)
		return CLI_ERR;
	if (!a.pmu) {
		if (!a.file) {
			cli_err("no file given: auxcap decode FILE (a perf.data capture), or "
				"auxcap decode --raw intel_pt FILE --elf BINARY[:LOAD_ADDR]");
			return CLI_ERR;
		}
		setvbuf(stdout, out_buf, _IOFBF, sizeof(out_buf));
		return decode_perf_data(&a);
	}
	if (!strncmp(a.pmu, "arm_spe", 7) || !strcmp(a.pmu, "intel_bts"))
		return decode_raw_spe_bts(&a);
	if (strcmp(a.pmu, "intel_pt")) {
		cli_err("--raw '%s': no raw decoder for this PMU in this build; supported: intel_pt, "
			"intel_bts, arm_spe",
			a.pmu);
		return CLI_ERR;
	}
	if (!a.file) {
		cli_err("no trace file given: auxcap decode --raw intel_pt FILE");
		return CLI_ERR;
	}
	setvbuf(stdout, out_buf, _IOFBF, sizeof(out_buf));
	return decode_intel_pt(&a);
#else
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return CLI_OK;
		}
	cli_err("no raw decoder in this build (built without libipt); supported PMUs: none");
	return CLI_ERR;
#endif
}

const struct cli_cmd cli_cmd_decode = {
	.name = "decode",
	.summary = "decode a trace (today: raw Intel PT files with --raw intel_pt)",
	.run = cmd_decode_run,
};
