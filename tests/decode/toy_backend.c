/* SPDX-License-Identifier: BSD-3-Clause */
/* The toy backend of the decode stage's tests (toy_backend.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "toy_backend.h"

struct toy_dec {
	const struct toy_rec *recs;
	size_t n, i;
	uint64_t base;
};

uint64_t toy_map_vaddr[TOY_MAX_MAPS];
struct auxcap_image_span toy_map_span[TOY_MAX_MAPS];
size_t toy_nr_maps;
bool toy_had_spans;

static int toy_probe(const char *name, const struct auxcap_pmu *pmu)
{
	(void)pmu;
	return !strcmp(name, "toy_trace");
}

static int toy_new(const struct auxcap_decode_ctx *ctx, const uint8_t *buf, size_t len,
		   void **ret)
{
	struct toy_dec *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->recs = (const struct toy_rec *)buf;
	d->n = len / sizeof(struct toy_rec);
	d->base = ctx->stream_offset;
	toy_had_spans = ctx->map_spans != NULL;
	toy_nr_maps = ctx->nr_maps < TOY_MAX_MAPS ? ctx->nr_maps : TOY_MAX_MAPS;
	for (size_t i = 0; i < toy_nr_maps; i++) {
		toy_map_vaddr[i] = ctx->maps[i].vaddr;
		toy_map_span[i] = ctx->map_spans ? ctx->map_spans[i]
						 : (struct auxcap_image_span){ 0, UINT64_MAX };
	}
	*ret = d;
	return 0;
}

static int toy_next(void *p, struct auxcap_trace_event *ev)
{
	struct toy_dec *d = p;
	struct toy_rec r;

	if (d->i == d->n)
		return 0;
	memcpy(&r, &d->recs[d->i], sizeof(r));
	memset(ev, 0, sizeof(*ev));
	ev->kind = r.kind;
	ev->branch = r.branch;
	ev->ninsn = r.ninsn;
	ev->ip = r.ip;
	ev->to = r.to;
	ev->offset = d->base + d->i * sizeof(r);
	if (r.flags & TOY_TSC) {
		ev->tsc = r.tsc;
		ev->flags |= AUXCAP_TRACE_F_HAS_TSC;
	}
	if (r.flags & TOY_JUNK) {
		/* what a backend breaking "unused fields are zero" would leave */
		ev->size = 3;
		memset(ev->raw, 0xcc, sizeof(ev->raw));
		ev->what = "junk";
		ev->payload = 0xdead;
	}
	if (r.flags & TOY_TID) {
		ev->tid = (int64_t)(r.to & 0xffff);
		ev->flags |= AUXCAP_TRACE_F_HAS_TID;
	}
	if (r.flags & TOY_MEM) {
		ev->mem = r.ninsn & 0x0fff;
		ev->source = (r.ninsn >> 12) & 0xf;
		ev->total_latency = r.ninsn >> 16;
		ev->ninsn = 0;
		ev->addr = r.to;
		ev->to = 0;
		ev->flags |= AUXCAP_TRACE_F_HAS_ADDR;
	}
	if (r.kind == AUXCAP_TRACE_GAP) {
		ev->err = -EBADMSG;
		ev->what = "toy gap";
	}
	d->i++;
	return 1;
}

/*
 * decoder_next_batch() as backend.h has it, from toy_next(): batches of 1 to 5 events
 * whatever @max allows (the stage must take short ones), a BRANCH without a tid as its head
 * only (junk or not), any other event whole too.
 */
static int toy_next_batch(void *p, void *heads, size_t stride, struct auxcap_trace_event *whole,
			  size_t max)
{
	struct toy_dec *d = p;
	unsigned char *h = heads;
	size_t n = 0, lim = 1 + d->i % 5;

	if (max > lim)
		max = lim;
	while (n < max) {
		struct auxcap_trace_event ev;
		int r = toy_next(p, &ev);

		if (r <= 0)
			return n ? (int)n : r;
		if (ev.kind != AUXCAP_TRACE_BRANCH || (ev.flags & AUXCAP_TRACE_F_HAS_TID)) {
			ev.flags |= AUXCAP_TRACE_F_WHOLE;
			whole[n] = ev;
		}
		memcpy(h, &ev, sizeof(struct auxcap_trace_head));
		h += stride;
		n++;
	}
	return (int)n;
}

static void toy_free(void *p)
{
	free(p);
}

const struct auxcap_backend_ops toy_backend_ops = {
	.abi = AUXCAP_BACKEND_ABI,
	.name = "toy_trace",
	.description = "test backend",
	.auxtrace_type = TOY_TYPE,
	.probe = toy_probe,
	.decoder_new = toy_new,
	.decoder_next = toy_next,
	.decoder_free = toy_free,
};

const struct auxcap_backend_ops toy_batch_backend_ops = {
	.abi = AUXCAP_BACKEND_ABI,
	.name = "toy_trace",
	.description = "test backend (decoder_next_batch)",
	.auxtrace_type = TOY_TYPE,
	.probe = toy_probe,
	.decoder_new = toy_new,
	.decoder_next = toy_next,
	.decoder_next_batch = toy_next_batch,
	.decoder_free = toy_free,
};

struct toy_rec rec(uint64_t tsc, enum auxcap_trace_kind kind, enum auxcap_branch_type branch,
		   uint64_t ip, uint64_t to, uint32_t ninsn)
{
	struct toy_rec r = { (uint8_t)kind, (uint8_t)branch, TOY_TSC, ninsn, tsc, ip, to };

	return r;
}
