/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intel BTS encoder of the live tracer.
 *
 * BTS writes one 24-byte record per taken branch: { u64 from; u64 to; u64 flags; } in
 * little-endian byte order, "from" being the branch instruction's address and "to" its
 * target.  Branches into or out of the kernel (system calls and their returns) are not
 * recorded, as perf's BTS driver drops records with a kernel address when exclude_kernel is
 * set.  Not-taken conditional branches write nothing.
 *
 * flags: bit 4 (0x10) is the "predicted" bit that perf's BTS decoder reads; the tracer cannot
 * know the predictor's verdict and sets it on every record (all branches predicted).  The
 * other bits are 0.
 *
 * With an address filter, a branch is recorded when its source lies in the filter (BTS itself
 * has no filter; this is the emulator's convenience).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "tracer_int.h"

#define BTS_FLAG_PREDICTED 0x10u

struct enc_bts {
	struct auxcap_tracer_out *out; /* borrowed */
};

static int bts_init(void *priv, const struct auxcap_tracer_opts *opts,
		    struct auxcap_tracer_out *out)
{
	struct enc_bts *b = priv;

	(void)opts;
	b->out = out;
	return 0;
}

static void bts_fini(void *priv)
{
	(void)priv;
}

static int bts_begin(void *priv, const struct auxcap_tracer_begin *begin)
{
	(void)priv;
	(void)begin;
	return 0;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static int bts_insn(void *priv, const struct auxcap_tracer_insn *in)
{
	struct enc_bts *b = priv;
	uint8_t rec[24];
	int r;

	if (!in->traced || !in->taken || in->ended || in->async_after)
		return 0;
	if (in->kind < AUXCAP_TRACER_COND || in->kind > AUXCAP_TRACER_RETURN)
		return 0;
	put_le64(rec, in->ip);
	put_le64(rec + 8, in->next_ip);
	put_le64(rec + 16, BTS_FLAG_PREDICTED);
	r = auxcap_tracer_out_put(b->out, rec, sizeof(rec));
	if (r == 0)
		b->out->stats->packets++;
	return r;
}

static int bts_async(void *priv, uint64_t from, uint64_t to, bool to_traced, uint64_t tsc)
{
	(void)priv;
	(void)from;
	(void)to;
	(void)to_traced;
	(void)tsc;
	return 0; /* through the kernel: not recorded */
}

static int bts_end(void *priv, uint64_t ip, uint64_t tsc)
{
	(void)priv;
	(void)ip;
	(void)tsc;
	return 0;
}

const struct auxcap_tracer_encoder_ops auxcap_tracer_enc_bts = {
	.name = "intel_bts",
	.priv_size = sizeof(struct enc_bts),
	.init = bts_init,
	.begin = bts_begin,
	.insn = bts_insn,
	.async = bts_async,
	.end = bts_end,
	.fini = bts_fini,
};
