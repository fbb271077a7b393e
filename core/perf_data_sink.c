/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The perf.data sink: session events become attrs, ring records are written as they are, AUX
 * chunks become PERF_RECORD_AUXTRACE records whose payload is written straight from the AUX
 * mapping (two pieces when the ring wrapped), and every drain pass ends with FINISHED_ROUND so
 * perf can sort what came before it.
 */
#include <string.h>

#include "auxcap/session.h"
#include "perf_data_sink.h"

static int ps_attr(void *ctx, const struct perf_event_attr *attr, const char *name,
		   const uint64_t *ids, size_t nr_ids)
{
	struct auxcap_perf_sink *ps = ctx;

	return auxcap_perf_writer_add_attr(ps->w, attr, name, ids, nr_ids);
}

static int ps_record(void *ctx, const void *rec, size_t len)
{
	struct auxcap_perf_sink *ps = ctx;
	int r;

	(void)len;
	r = auxcap_perf_writer_write(ps->w, rec);
	if (r == 0)
		ps->records++;
	return r;
}

static int ps_aux(void *ctx, const struct auxcap_aux_chunk *chunk,
		  const struct auxcap_aux_span *span)
{
	struct auxcap_perf_sink *ps = ctx;
	struct auxcap_perf_auxtrace at = {
		.offset = chunk->offset,
		.reference = chunk->reference,
		.idx = chunk->idx,
		.tid = chunk->tid,
		.cpu = chunk->cpu,
	};
	int r;

	r = auxcap_perf_writer_write_auxtrace(ps->w, &at, span->piece[0].ptr, span->piece[0].len,
					      span->piece[1].ptr, span->piece[1].len);
	if (r < 0)
		return r;
	ps->aux_records++;
	ps->aux_bytes += span->len;
	ps->snapshots += chunk->snapshot != 0;
	return 0;
}

static int ps_round(void *ctx)
{
	struct auxcap_perf_sink *ps = ctx;

	return auxcap_perf_writer_write_finished_round(ps->w);
}

static int ps_snapshot(void *ctx, const struct auxcap_snapshot_info *info)
{
	struct auxcap_perf_sink *ps = ctx;
	struct auxcap_perf_snapshot snap = {
		.trigger_ns = info->trigger_ns,
		.frozen_ns = info->frozen_ns,
		.data_end = auxcap_perf_writer_data_size(ps->w),
		.source = info->source,
		.coalesced = info->coalesced,
		.tid = info->tid,
		.cpu = info->cpu,
		.call_ns = info->call_ns,
	};
	int r = auxcap_perf_writer_add_snapshot(ps->w, &snap);

	/*
	 * The snapshot is out: reserve the space of the next one now, while nothing waits for
	 * it, so that its writes do not allocate (bench/snapshot_latency).  A filesystem that
	 * cannot is no error.
	 */
	if (r == 0 && ps->reserve)
		(void)auxcap_perf_writer_reserve(ps->w, ps->reserve);
	return r;
}

static const struct auxcap_sink_ops perf_sink_ops = {
	.attr = ps_attr,
	.record = ps_record,
	.aux = ps_aux,
	.round = ps_round,
	.snapshot = ps_snapshot,
};

void auxcap_perf_sink_init(struct auxcap_perf_sink *ps, struct auxcap_perf_writer *w)
{
	memset(ps, 0, sizeof(*ps));
	ps->sink.ops = &perf_sink_ops;
	ps->sink.ctx = ps;
	ps->w = w;
}
