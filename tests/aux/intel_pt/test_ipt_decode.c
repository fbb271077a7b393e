/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow decoder against libipt's test vectors: for each vector with an expected ptxed
 * output, decode the .pt with the .bin loaded at the .ptt's org address and print what
 * ptxed --no-inst prints (one address per instruction, "? " before speculative ones,
 * events in brackets, "[offset, ip: error: ...]" for gaps).  It must match the expected
 * text; vectors we do not reproduce are listed by name with the reason.
 *
 * The block decoder is checked against the instruction decoder on the same vectors: the
 * blocks must tile the instruction sequence (first and last address, count) and carry the
 * same events and gaps in the same order.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipt.h"
#include "ptt_fixture.h"
#include "util.h"

#define R_RESYNC \
	"ptxed --resync-on-error resumes at the next IP packet with libipt >= 2.1 pt_insn_resync(); libipt 2.0.5 (and our decoder) resume at the next PSB"
#define R_BLOCKOUT \
	"ptxed --block:show-blocks/--block:end-on-* output format (block listing) is not reproduced"
#define R_STAT	 "ptxed --stat/--quiet statistics output is not reproduced"
#define R_IFLAGS "--event:iflags needs MODE.Exec IF tracking (libipt >= 2.1)"
#define R_TICK	 "--event:tick/--event:time tick output of ptxed is not reproduced"
#define R_SB	 "needs the perf_event sideband (.sb) of ptxed --sb:* (pevent test)"
#define R_RAWOFF "uses ptxed --raw FILE:OFFSET:ADDR with a second, partial image file"
#define R_NEW \
	"contains CFE/EVD/TRIG packets (Event Trace, Trigger Tracing), unknown to libipt 2.0.5's flow decoders"
#define R_JMPABS "JMPABS (APX) instruction, unknown to libipt 2.0.5's instruction decoder"
#define R_FRED	 "ERETU/ERETS (FRED) instructions, unknown to libipt 2.0.5's instruction decoder"
#define R_PWR \
	"libipt 2.0.5 orders MWAIT/PWRE/EXSTOP events differently from the libipt that wrote the vectors"
#define RB_SKL014 \
	"SKL014 (TIP.PGD without IP): libipt 2.0.5's block decoder drops the last jump before the disable, its instruction decoder does not"

/* Vectors (by .exp base name) we do not reproduce, and why. */
static const char *const unsupported[][2] = {
	{ "exstop-trig-ptxed", R_NEW },
	{ "fup-tip-trig-ptxed", R_NEW },
	{ "int-eretu-cpl_0-ptxed", R_FRED },
	{ "int-eretu-ptxed", R_FRED },
	{ "linear-fup-tip_pgd-ptxed", R_STAT },
	{ "linear-tip-ptxed", R_STAT },
	{ "mode-trig-trig-ptxed", R_IFLAGS },
	{ "mtc-ovf_keep-cyc-ptxed", R_TICK },
	{ "mtc-ovf_reset-cyc-ptxed", R_TICK },
	{ "mwait-pwre-exstop_ip-fup-ovf-ptxed", R_PWR },
	{ "mwait-pwre-exstop_ip-ovf-ptxed", R_PWR },
	{ "mwait-pwre-exstop_ip-pwre-pwrx-ptxed", R_PWR },
	{ "mwait-pwre-exstop_ip-pwrx-ptxed", R_PWR },
	{ "mwait-pwre-ovf-ptxed", R_PWR },
	{ "pevent-comm_exec-mmap-tsc-iret-ptxed", R_TICK },
	{ "pevent-fork-ptxed", R_TICK },
	{ "pevent-mmap-tip_cached-ptxed", R_SB },
	{ "pevent-mmap_secondary-tsc-ptxed", R_TICK },
	{ "pevent-split-ptxed", R_TICK },
	{ "pevent-tip_pgd-comm_exec-mmap-tsc-tip_pge-ptxed", R_SB },
	{ "pevent-tip_pgd-mmap-tsc-tip_pge-ptxed", R_SB },
	{ "pevent-tip_pgd-switch-tsc-tip_pge-ptxed", R_SB },
	{ "pevent-tip_pgd-switch_cpu_wide-tsc-tip_pge-ptxed", R_TICK },
	{ "pevent-warn-ptxed", R_SB },
	{ "psb-fup-ptw-trig-ptxed", R_NEW },
	{ "psb-fup-trig-ptxed", R_NEW },
	{ "ptet-evd_cr2-cfe_iret-ptxed", R_NEW },
	{ "ptet-evd_cr2-evd_vmxq-ptxed", R_NEW },
	{ "ptet-evd_vmxq-cfe_intr-ptxed", R_NEW },
	{ "ptet-evd_vmxr-cfe_rsm-ptxed", R_NEW },
	{ "ptet-evd_vmxr-evd-cr2-ptxed", R_NEW },
	{ "ptet-init-sipi-ptxed", R_NEW },
	{ "ptet-int-eretu-ptxed", R_NEW },
	{ "ptet-int-int-erets-eretu-ptxed", R_NEW },
	{ "ptet-int-iret-cpl_0-ptxed", R_NEW },
	{ "ptet-int-iret-cpl_3-ptxed", R_NEW },
	{ "ptet-int-iret-ptxed", R_NEW },
	{ "ptet-mode_exec-if-ptxed", R_IFLAGS },
	{ "ptet-mode_exec-spurious-ptxed", R_IFLAGS },
	{ "ptet-ptxed", R_IFLAGS },
	{ "ptet-smi-rsm-ptxed", R_NEW },
	{ "ptet-uint-uiret-ptxed", R_NEW },
	{ "ptet-vmexit-vmentry-nonroot-ptxed", R_NEW },
	{ "ptet-vmexit-vmentry-ptxed", R_NEW },
	{ "ptet-vmexit-vmentry-root-ptxed", R_NEW },
	{ "ptxed-block-stat-ptxed", R_BLOCKOUT },
	{ "ptxed-block-stat_blocks-ptxed", R_BLOCKOUT },
	{ "ptxed-end_on_call-fup-tip-ptxed", R_BLOCKOUT },
	{ "ptxed-end_on_call-fup-tip_pgd-ptxed", R_BLOCKOUT },
	{ "ptxed-end_on_call-ret_tip-ptxed", R_BLOCKOUT },
	{ "ptxed-end_on_call-ret_tnt-ptxed", R_BLOCKOUT },
	{ "ptxed-end_on_call-tip_pgd-ptxed", R_BLOCKOUT },
	{ "ptxed-end_on_jump-fup-tip_pgd-ptxed", R_BLOCKOUT },
	{ "ptxed-insn-stat-ptxed", R_STAT },
	{ "ptxed-resync-bad_query-fup-tip-ptxed", R_RESYNC },
	{ "ptxed-resync-bad_query-ovf-ptxed", R_RESYNC },
	{ "ptxed-resync-bad_query-tip-ptxed", R_RESYNC },
	{ "ptxed-resync-nomap-fup-tip-ptxed", R_RESYNC },
	{ "ptxed-resync-nomap-mode_exec-fup-ptxed", R_RESYNC },
	{ "ptxed-resync-nomap-mode_tsx-eos-ptxed", R_RESYNC },
	{ "ptxed-resync-nomap-mode_tsx-fup-tip-ptxed", R_RESYNC },
	{ "ptxed-resync-nomap-mode_tsx-tip_pgd-ptxed", R_RESYNC },
	{ "ptxed-resync-nomap-ovf-fup-ptxed", R_RESYNC },
	{ "ptxed-resync-nomap-psb-ptxed", R_RESYNC },
	{ "ptxed-resync-nomap-ptw-fup-ptxed", R_RESYNC },
	{ "ptxed-resync-nomap-ptw-tip-ptxed", R_RESYNC },
	{ "ptxed-resync-nomap-tip-ptxed", R_RESYNC },
	{ "ptxed-resync-nomap-tip_pgd-ptxed", R_RESYNC },
	{ "ptxed-resync-nomap-tip_pge-ptxed", R_RESYNC },
	{ "ptxed-resync-psb-bad_status-psb-ptxed", R_RESYNC },
	{ "ptxed-resync-psb-nomap-psb-ptxed", R_RESYNC },
	{ "ptxed-stat_insn-ptxed", R_STAT },
	{ "ptxed-tick-ptxed", R_TICK },
	{ "pwre-exstop_ip-pwrx-ptxed", R_PWR },
	{ "tip-jmpabs-ptxed", R_JMPABS },
	{ "tip-trig-ptxed", R_NEW },
	{ "tip_pgd-jmpabs-ptxed", R_JMPABS },
	{ "tip_pgd-mwait-pwre-exstop-pwrx-tip_pge-ptxed", R_PWR },
	{ "tip_pgd-mwait-pwre-exstop_ip-pwre-pwrx-ptxed", R_PWR },
	{ "tip_pgd-mwait-pwre-exstop_ip-pwrx-ptxed", R_PWR },
	{ "tip_pge-pwre-pwrx-tip_pgd-ptxed", R_PWR },
	{ "tip_pge-trig-ptxed", R_NEW },
	{ "tnt-trig-ptxed", R_NEW },
	{ "trig-fup-ptxed", R_NEW },
	{ "trig-ptxed", R_NEW },
	{ "truncated-ptxed", R_RAWOFF },
	{ NULL, NULL },
};

/* Vectors on which libipt 2.0.5's block and instruction decoders disagree, and why.  (Three
 * more did while auxcap dropped the instructions libipt decoded before an error.) */
static const char *const block_differs[][2] = {
	{ "skl014-jmp-jmp-ptxed-cpu_6_102", RB_SKL014 },
	{ "skl014-jmp-jmp-ptxed-cpu_6_106", RB_SKL014 },
	{ "skl014-jmp-jmp-ptxed-cpu_6_108", RB_SKL014 },
	{ "skl014-jmp-jmp-ptxed-cpu_6_125", RB_SKL014 },
	{ "skl014-jmp-jmp-ptxed-cpu_6_126", RB_SKL014 },
	{ "skl014-jmp-jmp-ptxed-cpu_6_140", RB_SKL014 },
	{ "skl014-jmp-jmp-ptxed-cpu_6_141", RB_SKL014 },
	{ "skl014-jmp-jmp-ptxed-cpu_6_142", RB_SKL014 },
	{ "skl014-jmp-jmp-ptxed-cpu_6_158", RB_SKL014 },
	{ "skl014-jmp-jmp-ptxed-cpu_6_165", RB_SKL014 },
	{ "skl014-jmp-jmp-ptxed-cpu_6_166", RB_SKL014 },
	{ "skl014-jmp-jmp-ptxed-cpu_6_167", RB_SKL014 },
	{ "skl014-jmp-jmp-ptxed-cpu_6_168", RB_SKL014 },
	{ "skl014-jmp-jmp-ptxed-cpu_6_78", RB_SKL014 },
	{ "skl014-jmp-jmp-ptxed-cpu_6_85", RB_SKL014 },
	{ "skl014-jmp-jmp-ptxed-cpu_6_94", RB_SKL014 },
	{ "tip_pgd-jmpabs-ptxed", R_JMPABS },
	{ NULL, NULL },
};

struct xed_opts {
	bool event_ip; /* --event:ip: print event addresses */
};

static const char *parse_opts(const struct ptt_vector *v, struct auxcap_ipt_params *params,
			      struct xed_opts *xo)
{
	static char bad[64];
	char buf[sizeof(v->opts)], *save = NULL;

	if (v->cpu[0] && auxcap_ipt_params_parse_cpu(params, v->cpu) < 0)
		return "--cpu";
	snprintf(buf, sizeof(buf), "%s", v->opts);
	for (char *o = strtok_r(buf, " \t", &save); o; o = strtok_r(NULL, " \t", &save)) {
		char *arg = NULL;

		if (!strcmp(o, "--cpu") || !strcmp(o, "--mtc-freq") || !strcmp(o, "--nom-freq") ||
		    !strcmp(o, "--cpuid-0x15.eax") || !strcmp(o, "--cpuid-0x15.ebx") ||
		    !strncmp(o, "--filter:", 9)) {
			arg = strtok_r(NULL, " \t", &save);
			if (!arg)
				return o;
		}
		if (!strcmp(o, "--event:ip"))
			xo->event_ip = true;
		else if (!strncmp(o, "--filter:addr", 13) && o[13] >= '0' && o[13] <= '3') {
			int k = o[13] - '0';
			uint64_t val = strtoull(arg, NULL, 0);

			if (!strcmp(o + 14, "_cfg"))
				params->addr_cfg |= (val & 0xf) << (4 * k);
			else if (!strcmp(o + 14, "_a"))
				params->addr_a[k] = val;
			else if (!strcmp(o + 14, "_b"))
				params->addr_b[k] = val;
			else
				return o;
		} else if (!strcmp(o, "--cpu")) {
			if (auxcap_ipt_params_parse_cpu(params, arg) < 0)
				return o;
		} else if (!strcmp(o, "--mtc-freq"))
			params->mtc_freq = (uint8_t)strtoul(arg, NULL, 0);
		else if (!strcmp(o, "--nom-freq"))
			params->nom_freq = (uint8_t)strtoul(arg, NULL, 0);
		else if (!strcmp(o, "--cpuid-0x15.eax"))
			params->cpuid_0x15_eax = (uint32_t)strtoul(arg, NULL, 0);
		else if (!strcmp(o, "--cpuid-0x15.ebx"))
			params->cpuid_0x15_ebx = (uint32_t)strtoul(arg, NULL, 0);
		else {
			snprintf(bad, sizeof(bad), "%s", o);
			return bad;
		}
	}
	return NULL;
}

static void add_ip(struct ptt_text *t, const struct auxcap_ipt_item *it, const struct xed_opts *xo,
		   const char *label)
{
	if (xo->event_ip && !(it->flags & AUXCAP_IPT_F_IP_SUPPRESSED))
		ptt_text_addf(t, ", %s: %016" PRIx64, label, it->ip);
}

/* The event the way ptxed prints it. */
static void print_event(struct ptt_text *t, const struct auxcap_ipt_item *it,
			const struct xed_opts *xo)
{
	const char *mode;

	switch (it->event) {
	case AUXCAP_IPT_EV_ENABLED:
		ptt_text_addf(t, "[%s", it->flags & AUXCAP_IPT_F_RESUMED ? "resumed" : "enabled");
		add_ip(t, it, xo, "ip");
		break;
	case AUXCAP_IPT_EV_DISABLED:
		ptt_text_addf(t, "[disabled");
		add_ip(t, it, xo, "ip");
		break;
	case AUXCAP_IPT_EV_ASYNC_DISABLED:
		ptt_text_addf(t, "[disabled");
		if (xo->event_ip)
			ptt_text_addf(t, ", at: %016" PRIx64, it->at);
		add_ip(t, it, xo, "ip");
		break;
	case AUXCAP_IPT_EV_ASYNC_BRANCH:
		ptt_text_addf(t, "[interrupt");
		if (xo->event_ip)
			ptt_text_addf(t, ", from: %016" PRIx64, it->at);
		add_ip(t, it, xo, "to");
		break;
	case AUXCAP_IPT_EV_PAGING:
	case AUXCAP_IPT_EV_ASYNC_PAGING:
		ptt_text_addf(t, "[paging, cr3: %016" PRIx64 "%s", it->payload,
			      it->flags & AUXCAP_IPT_F_NON_ROOT ? ", nr" : "");
		if (it->event == AUXCAP_IPT_EV_ASYNC_PAGING)
			add_ip(t, it, xo, "ip");
		break;
	case AUXCAP_IPT_EV_OVERFLOW:
		ptt_text_addf(t, "[overflow");
		add_ip(t, it, xo, "ip");
		break;
	case AUXCAP_IPT_EV_EXEC_MODE:
		mode = it->mode == AUXCAP_IPT_MODE_64	? "64-bit"
		       : it->mode == AUXCAP_IPT_MODE_32 ? "32-bit"
		       : it->mode == AUXCAP_IPT_MODE_16 ? "16-bit"
							: "unknown";
		ptt_text_addf(t, "[exec mode: %s", mode);
		add_ip(t, it, xo, "ip");
		break;
	case AUXCAP_IPT_EV_TSX:
		ptt_text_addf(t, "[%s",
			      it->flags & AUXCAP_IPT_F_TSX_SPECULATIVE ? "begin transaction"
			      : it->flags & AUXCAP_IPT_F_TSX_ABORTED   ? "aborted"
								       : "committed");
		add_ip(t, it, xo, "ip");
		break;
	case AUXCAP_IPT_EV_STOP:
		ptt_text_addf(t, "[stopped");
		break;
	case AUXCAP_IPT_EV_VMCS:
	case AUXCAP_IPT_EV_ASYNC_VMCS:
		ptt_text_addf(t, "[vmcs, base: %016" PRIx64, it->payload);
		if (it->event == AUXCAP_IPT_EV_ASYNC_VMCS)
			add_ip(t, it, xo, "ip");
		break;
	case AUXCAP_IPT_EV_EXSTOP:
		ptt_text_addf(t, "[exstop");
		add_ip(t, it, xo, "ip");
		break;
	case AUXCAP_IPT_EV_MWAIT:
		ptt_text_addf(t, "[mwait %" PRIx64 " %x", it->payload, it->payload2);
		add_ip(t, it, xo, "ip");
		break;
	case AUXCAP_IPT_EV_PWRE:
		ptt_text_addf(t, "[pwre c%u.%u%s", ((it->payload2 >> 8) + 1) & 0xf,
			      ((it->payload2 & 0xff) + 1) & 0xf,
			      it->flags & AUXCAP_IPT_F_PWRE_HW ? " hw" : "");
		break;
	case AUXCAP_IPT_EV_PWRX:
		ptt_text_addf(t, "[pwrx %s: c%u (c%u)",
			      it->flags & AUXCAP_IPT_F_PWRX_INTERRUPT	 ? "int"
			      : it->flags & AUXCAP_IPT_F_PWRX_STORE	 ? "st"
			      : it->flags & AUXCAP_IPT_F_PWRX_AUTONOMOUS ? "hw"
									 : "?",
			      ((it->payload2 >> 8) + 1) & 0xf, ((it->payload2 & 0xff) + 1) & 0xf);
		break;
	case AUXCAP_IPT_EV_PTWRITE:
		ptt_text_addf(t, "[ptwrite: %" PRIx64, it->payload);
		add_ip(t, it, xo, "ip");
		break;
	case AUXCAP_IPT_EV_TICK:
		ptt_text_addf(t, "[tick");
		break;
	case AUXCAP_IPT_EV_CBR:
		ptt_text_addf(t, "[cbr: %" PRIx64, it->payload);
		break;
	case AUXCAP_IPT_EV_MNT:
		ptt_text_addf(t, "[mnt: %" PRIx64, it->payload);
		break;
	case AUXCAP_IPT_EV_END_OF_TRACE:
		ptt_text_addf(t, "[end of trace");
		break;
	}
	ptt_text_addf(t, "]\n");
}

static void print_item(struct ptt_text *t, const struct auxcap_ipt_item *it,
		       const struct xed_opts *xo)
{
	switch (it->kind) {
	case AUXCAP_IPT_ITEM_INSN:
		ptt_text_addf(t, "%s%016" PRIx64 "\n",
			      it->flags & AUXCAP_IPT_F_SPECULATIVE ? "? " : "", it->ip);
		break;
	case AUXCAP_IPT_ITEM_BLOCK:
		ptt_text_addf(t, "block %016" PRIx64 "-%016" PRIx64 " %u\n", it->ip, it->end_ip,
			      it->ninsn);
		break;
	case AUXCAP_IPT_ITEM_EVENT:
		/* ptxed does not print events that only restate the state at a PSB. */
		if (!(it->flags & AUXCAP_IPT_F_STATUS_UPDATE))
			print_event(t, it, xo);
		break;
	case AUXCAP_IPT_ITEM_GAP:
		if (it->native)
			ptt_text_addf(t, "[%" PRIx64 ", %" PRIx64 ": error: %s]\n", it->offset,
				      it->ip, auxcap_ipt_strerror(it->native));
		else
			ptt_text_addf(t, "[0, 0: skipped bytes before the first PSB]\n");
		break;
	}
}

struct run {
	struct auxcap_ipt_item *items;
	size_t n, cap;
};

static void decode_vector(const struct ptt_vector *v, const struct auxcap_ipt_params *params,
			  bool block, struct run *run)
{
	struct auxcap_ipt_decoder_opts opts = { .sz = sizeof(opts), .block = block };
	struct auxcap_ipt_decoder *dec = NULL;
	struct auxcap_ipt_image *image = NULL;
	struct auxcap_ipt_item item;
	size_t len = 0;
	uint8_t *pt;
	int r;

	pt = ptt_read_file(v->pt, &len);
	assert_non_null(pt);
	assert_int_equal(auxcap_ipt_image_new(&image), 0);
	assert_int_equal(auxcap_ipt_image_add_raw(image, v->bin, 0, 0, v->org), 0);
	assert_int_equal(auxcap_ipt_decoder_new(pt, len, image, params, &opts, &dec), 0);
	memset(run, 0, sizeof(*run));
	/* Bounded: a decoder that loops forever fails the test instead of hanging it. */
	while ((r = auxcap_ipt_decoder_next(dec, &item)) == 1 && run->n < 1000000) {
		if (run->n == run->cap) {
			run->cap = run->cap ? 2 * run->cap : 64;
			run->items = realloc(run->items, run->cap * sizeof(*run->items));
			assert_non_null(run->items);
		}
		run->items[run->n++] = item;
	}
	assert_int_equal(r, 0);
	auxcap_ipt_decoder_free(dec);
	auxcap_ipt_image_free(image);
	free(pt);
}

/* Do the blocks tile the instructions, with the same events and gaps in between? */
static bool blocks_match_insns(const struct run *ins, const struct run *blk, char *why,
			       size_t whysz)
{
	size_t i = 0;

	for (size_t b = 0; b < blk->n; b++) {
		const struct auxcap_ipt_item *bi = &blk->items[b];

		if (bi->kind != AUXCAP_IPT_ITEM_BLOCK) {
			if (i >= ins->n || ins->items[i].kind != bi->kind ||
			    ins->items[i].event != bi->event ||
			    ins->items[i].native != bi->native) {
				snprintf(why, whysz,
					 "block run item %zu (kind %d) vs insn item %zu", b,
					 bi->kind, i);
				return false;
			}
			i++;
			continue;
		}
		if (i + bi->ninsn > ins->n || ins->items[i].ip != bi->ip ||
		    ins->items[i + bi->ninsn - 1].ip != bi->end_ip) {
			snprintf(why, whysz, "block %zu [%" PRIx64 "-%" PRIx64 "] x%u vs insn %zu",
				 b, bi->ip, bi->end_ip, bi->ninsn, i);
			return false;
		}
		for (uint32_t k = 0; k < bi->ninsn; k++) {
			const struct auxcap_ipt_item *in = &ins->items[i + k];

			if (in->kind != AUXCAP_IPT_ITEM_INSN) {
				snprintf(why, whysz, "block %zu covers a non-instruction", b);
				return false;
			}
			/* With end-on-call/jump, only the last instruction may branch: the
			 * branch output relies on it. */
			if (k + 1 < bi->ninsn && in[1].ip != in->ip + in->size) {
				snprintf(why, whysz, "block %zu has a taken branch inside", b);
				return false;
			}
		}
		i += bi->ninsn;
	}
	if (i != ins->n) {
		snprintf(why, whysz, "blocks end at item %zu of %zu", i, ins->n);
		return false;
	}
	return true;
}

static size_t blk_ok, blk_bad, blk_listed;

static int run_vector(const struct ptt_vector *v, char *why, size_t whysz)
{
	struct auxcap_ipt_params params = { .sz = sizeof(params) };
	struct xed_opts xo = { 0 };
	struct ptt_text out = { 0 };
	struct run ins, blk;
	size_t explen = 0;
	const char *bad;
	uint8_t *exp;
	long line;

	bad = parse_opts(v, &params, &xo);
	if (bad) {
		snprintf(why, whysz, "unsupported option %s", bad);
		return 0;
	}
	if (!v->has_org) {
		snprintf(why, whysz, "no org in the .ptt");
		return 0;
	}
	exp = ptt_read_file(v->exp, &explen);
	assert_non_null(exp);
	ptt_text_addf(&out, "%s", "");
	if (auxcap_ipt_params_check_cpu(&params) < 0)
		ptt_text_addf(&out, "[0, 0: config error: %s]\n",
			      auxcap_ipt_strerror(27 /* pte_bad_cpu */));
	decode_vector(v, &params, false, &ins);
	for (size_t i = 0; i < ins.n; i++)
		print_item(&out, &ins.items[i], &xo);
	line = ptt_compare((const char *)exp, out.s);
	if (line >= 0) {
		const char *e = (const char *)exp, *o = out.s;

		for (long i = 0; i < line; i++) {
			e = strchr(e, '\n') ? strchr(e, '\n') + 1 : e + strlen(e);
			o = strchr(o, '\n') ? strchr(o, '\n') + 1 : o + strlen(o);
		}
		snprintf(why, whysz, "line %ld: expected '%.*s', got '%.*s'", line + 1,
			 (int)strcspn(e, "\n"), e, (int)strcspn(o, "\n"), o);
	}

	decode_vector(v, &params, true, &blk);
	{
		char bwhy[256];

		if (blocks_match_insns(&ins, &blk, bwhy, sizeof(bwhy))) {
			blk_ok++;
			if (ptt_listed(block_differs, v->variant)) {
				blk_bad++; /* the list must say what is true */
				printf("BLOCK AGREES, LISTED AS DIFFERING %s (listed: %s)\n",
				       v->variant, ptt_listed(block_differs, v->variant));
			}
		} else if (ptt_listed(block_differs, v->variant)) {
			blk_listed++;
		} else {
			blk_bad++;
			printf("BLOCK MISMATCH %s: %s\n", v->variant, bwhy);
			if (getenv("AUXCAP_TEST_VERBOSE")) {
				struct ptt_text dump = { 0 };

				ptt_text_addf(&dump, "--- insn:\n");
				for (size_t i = 0; i < ins.n; i++)
					print_item(&dump, &ins.items[i], &xo);
				ptt_text_addf(&dump, "--- block:\n");
				for (size_t i = 0; i < blk.n; i++)
					print_item(&dump, &blk.items[i], &xo);
				printf("%s", dump.s);
				ptt_text_free(&dump);
			}
		}
	}
	free(ins.items);
	free(blk.items);
	free(exp);
	ptt_text_free(&out);
	return line < 0;
}

static void test_ipt_decode_fixtures_match_ptxed(void **state)
{
	struct ptt_vector *v;
	size_t n, pass = 0, listed = 0, bad = 0, fixed = 0;

	(void)state;
	n = ptt_vectors("ptxed", &v);
	if (!n)
		skip();
	for (size_t i = 0; i < n; i++) {
		const char *reason = ptt_listed(unsupported, v[i].variant);
		char why[600] = "";
		int ok = run_vector(&v[i], why, sizeof(why));

		if (ok && !reason) {
			pass++;
		} else if (ok && reason) {
			fixed++;
			printf("UNEXPECTED PASS %s (listed: %s)\n", v[i].variant, reason);
		} else if (reason) {
			listed++;
		} else {
			bad++;
			printf("FAIL %s: %s\n", v[i].variant, why);
		}
	}
	printf("ptxed vectors: %zu total, %zu match, %zu listed as unsupported, %zu listed but "
	       "matching, %zu FAIL; block decoder agrees with instruction decoder on %zu, "
	       "differs (listed) on %zu, differs (FAIL) on %zu\n",
	       n, pass, listed, fixed, bad, blk_ok, blk_listed, blk_bad);
	free(v);
	assert_int_equal(bad, 0);
	assert_int_equal(blk_bad, 0);
	assert_true(pass > 0);
}

/*
 * Where the trace ends without a TIP.PGD, the end says where the last instruction went when
 * the trace tells it (the backend hands out that branch: a snapshot taken at a return shows
 * the return), with both decoders; ptxed's own output ends at the instruction (checked
 * above: the target's instruction is not handed out as run).  The targets, from the .ptt
 * sources (org 0x1000): tip-eos "l0: jmp rax" (2 bytes), TIP to l2 at 0x1003; tnt_t-eos
 * "l0: je l2" taken: l2 at 0x1003; tnt_n-eos not taken: l1 at 0x1002; fup-tip-eos "l0: nop",
 * an interrupt at l1 with its TIP to l2 at 0x1002.
 */
static void test_ipt_decode_end_flow_to(void **state)
{
	static const struct {
		const char *name;
		uint64_t to;
	} want[] = {
		{ "tip-eos", 0x1003 },
		{ "tnt_t-eos", 0x1003 },
		{ "tnt_n-eos", 0x1002 },
		{ "fup-tip-eos", 0x1002 },
	};
	struct ptt_vector *v;
	size_t n, found = 0;

	(void)state;
	n = ptt_vectors("ptxed", &v);
	if (!n)
		skip();
	for (size_t i = 0; i < n; i++) {
		for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
			struct auxcap_ipt_params params = { .sz = sizeof(params) };
			struct xed_opts xo = { 0 };

			if (strcmp(v[i].name, want[w].name))
				continue;
			assert_null(parse_opts(&v[i], &params, &xo));
			for (int block = 0; block < 2; block++) {
				struct run run;
				const struct auxcap_ipt_item *end = NULL;

				decode_vector(&v[i], &params, block, &run);
				for (size_t k = 0; k < run.n; k++)
					if (run.items[k].kind == AUXCAP_IPT_ITEM_EVENT &&
					    run.items[k].event == AUXCAP_IPT_EV_END_OF_TRACE)
						end = &run.items[k];
				if (!end || !(end->flags & AUXCAP_IPT_F_FLOW_TO) ||
				    end->payload != want[w].to)
					fail_msg("%s (%s decoder): end of trace %s, flow to 0x%" PRIx64
						 ", expected 0x%" PRIx64,
						 v[i].variant, block ? "block" : "instruction",
						 end ? "found" : "missing",
						 end && (end->flags & AUXCAP_IPT_F_FLOW_TO) ? end->payload
											      : 0,
						 want[w].to);
				free(run.items);
			}
			found++;
		}
	}
	free(v);
	assert_int_equal(found, sizeof(want) / sizeof(want[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipt_decode_fixtures_match_ptxed),
		cmocka_unit_test(test_ipt_decode_end_flow_to),
	};

	return cmocka_run_group_tests_name("aux/intel_pt/ipt_decode", tests, NULL, NULL);
}
