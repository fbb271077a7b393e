/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intel PT encoder of the live tracer, built on libipt's packet encoder (pt_enc_next()).
 *
 * It emits what a processor would for user-only tracing (IA32_RTIT_CTL.User=1, OS=0) with
 * return compression off (perf's noretcomp), no CYC/MTC, and TSC packets on:
 *
 *   start            PSB, TSC, PSBEND (the kernel enabled TraceEn; PacketEn is still 0),
 *                    then MODE.EXEC(64-bit), TIP.PGE(first IP) when the IP is traced
 *   conditional      one TNT bit (oldest branch in the most significant bit); a short TNT
 *                    packet goes out when it holds 6 bits, or earlier, before any packet that
 *                    carries an IP or a PSB
 *   indirect, ret    TIP(target)  (every return is a TIP: no return compression)
 *   system call      TIP.PGD with the IP suppressed (control enters the kernel, which is
 *                    filtered out) and TSC (the time it entered: hardware's MTC would
 *                    place it within microseconds; without it the code before the call
 *                    was timed over the call's time, seconds of it for a sleep), then on
 *                    return TSC, MODE.EXEC, TIP.PGE(return IP)
 *   signal handler   FUP(interrupted IP), TIP.PGD(suppressed), MODE.EXEC, TIP.PGE(handler)
 *   address filter   a branch leaving the range ends with TIP.PGD(target) in place of its
 *                    TNT bit or TIP; entering the range is MODE.EXEC, TIP.PGE(target)
 *   every psb_period bytes: PSB, TSC, MODE.EXEC, FUP(next IP), PSBEND (no FUP/MODE.EXEC
 *                    while PacketEn is 0)
 *   end              FUP(next IP), TIP.PGD(suppressed) if still enabled; nothing after an
 *                    exit system call (its TIP.PGD was the last packet)
 *
 * IP payloads are compressed against the last IP the decoder knows (reset by PSB):
 * update_16/32/48 when the upper bits match, else sext_48 (canonical addresses) or full.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <intel-pt.h>

#include "tracer_int.h"

#define PT_TNT8_BITS 6u /* branches a short TNT packet holds */

struct enc_pt {
	struct pt_encoder *enc;	       /* libipt encoder over @scratch, owned */
	uint8_t scratch[64];	       /* one packet at a time */
	struct auxcap_tracer_out *out; /* borrowed */
	uint32_t psb_period;	       /* bytes */
	uint64_t since_psb;	       /* bytes written since the last PSB */
	uint64_t last_ip;	       /* the decoder's last IP */
	bool have_last_ip;	       /* false right after PSB */
	bool enabled;		       /* PacketEn */
	uint64_t tnt;		       /* pending TNT bits, newest in bit 0 */
	uint8_t ntnt;		       /* number of pending TNT bits */
};

static int pt_init(void *priv, const struct auxcap_tracer_opts *opts, struct auxcap_tracer_out *out)
{
	struct enc_pt *p = priv;
	struct pt_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.begin = p->scratch;
	cfg.end = p->scratch + sizeof(p->scratch);
	p->enc = pt_alloc_encoder(&cfg);
	if (!p->enc)
		return -ENOMEM;
	p->out = out;
	p->psb_period = opts->psb_period ? opts->psb_period : 4096;
	return 0;
}

static void pt_fini(void *priv)
{
	struct enc_pt *p = priv;

	if (p->enc)
		pt_free_encoder(p->enc);
	p->enc = NULL;
}

static int emit(struct enc_pt *p, const struct pt_packet *pkt)
{
	int n, r;

	r = pt_enc_sync_set(p->enc, 0);
	if (r < 0)
		return -EINVAL;
	n = pt_enc_next(p->enc, pkt);
	if (n < 0)
		return -EINVAL;
	r = auxcap_tracer_out_put(p->out, p->scratch, (size_t)n);
	if (r < 0)
		return r;
	p->since_psb += (uint64_t)n;
	p->out->stats->packets++;
	return 0;
}

static int emit_simple(struct enc_pt *p, enum pt_packet_type type)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	return emit(p, &pkt);
}

static int flush_tnt(struct enc_pt *p)
{
	struct pt_packet pkt;

	if (!p->ntnt)
		return 0;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_tnt_8;
	pkt.payload.tnt.bit_size = p->ntnt;
	pkt.payload.tnt.payload = p->tnt;
	p->tnt = 0;
	p->ntnt = 0;
	return emit(p, &pkt);
}

static int add_tnt(struct enc_pt *p, bool taken)
{
	p->tnt = (p->tnt << 1) | (taken ? 1u : 0u);
	p->ntnt++;
	return p->ntnt == PT_TNT8_BITS ? flush_tnt(p) : 0;
}

static bool fits_sext48(uint64_t ip)
{
	uint64_t top = ip >> 47;

	return top == 0 || top == (UINT64_MAX >> 47);
}

static enum pt_ip_compression compress(const struct enc_pt *p, uint64_t ip)
{
	if (p->have_last_ip) {
		if ((ip >> 16) == (p->last_ip >> 16))
			return pt_ipc_update_16;
		if ((ip >> 32) == (p->last_ip >> 32))
			return pt_ipc_update_32;
		if ((ip >> 48) == (p->last_ip >> 48))
			return pt_ipc_update_48;
	}
	return fits_sext48(ip) ? pt_ipc_sext_48 : pt_ipc_full;
}

/* An IP packet (TIP, TIP.PGE, TIP.PGD, FUP); pending TNT bits go out first. */
static int emit_ip(struct enc_pt *p, enum pt_packet_type type, uint64_t ip, bool suppressed)
{
	struct pt_packet pkt;
	int r;

	r = flush_tnt(p);
	if (r < 0)
		return r;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	if (suppressed) {
		pkt.payload.ip.ipc = pt_ipc_suppressed;
	} else {
		pkt.payload.ip.ipc = compress(p, ip);
		pkt.payload.ip.ip = ip;
		p->last_ip = ip;
		p->have_last_ip = true;
	}
	return emit(p, &pkt);
}

static int emit_tsc(struct enc_pt *p, uint64_t tsc)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_tsc;
	pkt.payload.tsc.tsc = tsc & ((1ull << 56) - 1);
	return emit(p, &pkt);
}

static int emit_mode_exec(struct enc_pt *p)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_mode;
	pkt.payload.mode.leaf = pt_mol_exec;
	pkt.payload.mode.bits.exec.csl = 1; /* 64-bit code */
	return emit(p, &pkt);
}

/* PSB+: the decoder can synchronize here.  @ip is the next instruction when enabled. */
static int emit_psb(struct enc_pt *p, uint64_t ip, uint64_t tsc)
{
	int r;

	r = flush_tnt(p);
	if (r == 0)
		r = emit_simple(p, ppt_psb);
	p->since_psb = 0;
	p->have_last_ip = false;
	p->last_ip = 0;
	if (r == 0)
		r = emit_tsc(p, tsc);
	if (r == 0 && p->enabled) {
		r = emit_mode_exec(p);
		if (r == 0)
			r = emit_ip(p, ppt_fup, ip, false);
	}
	if (r == 0)
		r = emit_simple(p, ppt_psbend);
	return r;
}

static int maybe_psb(struct enc_pt *p, uint64_t ip, uint64_t tsc)
{
	if (p->since_psb < p->psb_period)
		return 0;
	return emit_psb(p, ip, tsc);
}

static int enable(struct enc_pt *p, uint64_t ip, uint64_t tsc, bool with_tsc)
{
	int r = 0;

	if (with_tsc)
		r = emit_tsc(p, tsc);
	if (r == 0)
		r = emit_mode_exec(p);
	if (r == 0)
		r = emit_ip(p, ppt_tip_pge, ip, false);
	p->enabled = r == 0;
	return r;
}

/* Asynchronous disable at @ip (not executed): FUP + TIP.PGD. */
static int async_disable(struct enc_pt *p, uint64_t ip)
{
	int r;

	r = emit_ip(p, ppt_fup, ip, false);
	if (r == 0)
		r = emit_ip(p, ppt_tip_pgd, 0, true);
	p->enabled = false;
	return r;
}

/* A system call enters the kernel at @tsc: the pending TNT bits, TSC, TIP.PGD. */
static int far_disable(struct enc_pt *p, uint64_t tsc)
{
	int r = flush_tnt(p);

	if (r == 0)
		r = emit_tsc(p, tsc);
	if (r == 0)
		r = emit_ip(p, ppt_tip_pgd, 0, true);
	p->enabled = false;
	return r;
}

static int pt_begin(void *priv, const struct auxcap_tracer_begin *b)
{
	struct enc_pt *p = priv;
	int r;

	p->enabled = false;
	r = emit_psb(p, 0, b->tsc);
	if (r == 0 && b->traced)
		r = enable(p, b->ip, b->tsc, false);
	return r;
}

static int traced_insn(struct enc_pt *p, const struct auxcap_tracer_insn *in)
{
	uint64_t fall = in->ip + in->len;
	int r = 0;

	switch (in->kind) {
	case AUXCAP_TRACER_OTHER:
		if (in->async_after || !in->next_traced) {
			r = async_disable(p, fall);
			if (r == 0 && in->next_traced)
				r = enable(p, in->next_ip, in->tsc, false);
		}
		return r;
	case AUXCAP_TRACER_COND:
		if (in->async_after) {
			r = add_tnt(p, false);
			if (r == 0)
				r = async_disable(p, fall);
			if (r == 0 && in->next_traced)
				r = enable(p, in->next_ip, in->tsc, false);
			return r;
		}
		if (!in->next_traced) {
			p->enabled = false;
			return emit_ip(p, ppt_tip_pgd, in->next_ip, false);
		}
		return add_tnt(p, in->taken);
	case AUXCAP_TRACER_JUMP:
	case AUXCAP_TRACER_CALL:
		if (in->async_after) {
			r = async_disable(p, in->target);
			if (r == 0 && in->next_traced)
				r = enable(p, in->next_ip, in->tsc, false);
			return r;
		}
		if (!in->next_traced) {
			p->enabled = false;
			return emit_ip(p, ppt_tip_pgd, in->next_ip, false);
		}
		return 0;
	case AUXCAP_TRACER_IND_JUMP:
	case AUXCAP_TRACER_IND_CALL:
	case AUXCAP_TRACER_RETURN:
		if (!in->next_traced) {
			p->enabled = false;
			return emit_ip(p, ppt_tip_pgd, in->next_ip, false);
		}
		return emit_ip(p, ppt_tip, in->next_ip, false);
	case AUXCAP_TRACER_FAR:
		r = far_disable(p, in->tsc - in->tsc_delta);
		if (r == 0 && !in->ended && in->next_traced)
			r = enable(p, in->next_ip, in->tsc, true);
		return r;
	}
	return -EINVAL;
}

static int pt_insn(void *priv, const struct auxcap_tracer_insn *in)
{
	struct enc_pt *p = priv;
	int r;

	if (in->traced && p->enabled)
		r = traced_insn(p, in);
	else if (!in->ended && in->next_traced)
		r = enable(p, in->next_ip, in->tsc, in->kind == AUXCAP_TRACER_FAR);
	else
		r = 0;
	if (r == 0 && !in->ended)
		r = maybe_psb(p, in->next_ip, in->tsc);
	return r;
}

static int pt_async(void *priv, uint64_t from, uint64_t to, bool to_traced, uint64_t tsc)
{
	struct enc_pt *p = priv;
	bool was = p->enabled;
	int r = 0;

	if (was)
		r = async_disable(p, from);
	/* after untraced time (a system call a signal interrupted), with its time */
	if (r == 0 && to_traced)
		r = enable(p, to, tsc, !was);
	return r;
}

static int pt_end(void *priv, uint64_t ip, uint64_t tsc)
{
	struct enc_pt *p = priv;

	(void)tsc;
	if (!p->enabled)
		return flush_tnt(p);
	if (ip)
		return async_disable(p, ip);
	p->enabled = false;
	return emit_ip(p, ppt_tip_pgd, 0, true);
}

/* The TIP.PGD of a far transfer stepped later; its pt_insn() then only enables again (as
 * the FAR case of traced_insn() would after it), tracing being off. */
static int pt_far_enter(void *priv, uint64_t tsc)
{
	struct enc_pt *p = priv;

	return p->enabled ? far_disable(p, tsc) : 0;
}

static int pt_flush(void *priv, uint64_t ip, uint64_t tsc)
{
	return emit_psb(priv, ip, tsc);
}

const struct auxcap_tracer_encoder_ops auxcap_tracer_enc_pt = {
	.name = "intel_pt",
	.priv_size = sizeof(struct enc_pt),
	.init = pt_init,
	.begin = pt_begin,
	.insn = pt_insn,
	.async = pt_async,
	.end = pt_end,
	.flush = pt_flush,
	.far_enter = pt_far_enter,
	.fini = pt_fini,
};
