/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where a capture session puts what it reads.
 *
 * A sink receives kernel records (as the kernel wrote them: header included, sample_id
 * trailers intact) and AUX data (as AUXTRACE chunks: a position, a length and at most two
 * borrowed pieces of the AUX mapping, written without an intermediate copy).  The perf.data
 * writer is one sink; tests use a memory sink.  Every op returns 0 or a negative errno; a
 * failing sink stops the capture with that errno (e.g. -ENOSPC) after what was already
 * written has been made readable.
 */
#ifndef AUXCAP_SINK_H
#define AUXCAP_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "aux_ring.h"

struct perf_event_attr;
struct auxcap_snapshot_info;

/** Where an AUX chunk came from (perf's PERF_RECORD_AUXTRACE fields). */
struct auxcap_aux_chunk {
	uint64_t offset;    /* position of the first byte in aux_head space */
	uint64_t reference; /* taken when copied: the backend's timestamp (TSC for Intel PT),
			       else CLOCK_MONOTONIC ns */
	uint32_t idx;       /* mmap index: the event set's position in the session */
	uint32_t tid;       /* thread for per-thread sets, else -1 */
	uint32_t cpu;       /* cpu for per-CPU sets, else -1 */
	uint32_t snapshot;  /* 1 if this chunk is a snapshot of an overwrite buffer */
};

struct auxcap_sink_ops {
	/** An event the session opened, with the kernel ids of its instances (borrowed). */
	int (*attr)(void *ctx, const struct perf_event_attr *attr, const char *name,
		    const uint64_t *ids, size_t nr_ids);
	/** One kernel record, @len = header.size bytes (borrowed for the call). */
	int (*record)(void *ctx, const void *rec, size_t len);
	/** One AUX chunk of @span->len bytes in @span's pieces (borrowed for the call). */
	int (*aux)(void *ctx, const struct auxcap_aux_chunk *chunk,
		   const struct auxcap_aux_span *span);
	/** The end of one pass over all rings: everything before is ordered (FINISHED_ROUND). */
	int (*round)(void *ctx);
	/**
	 * A snapshot's data went out (after its round): what triggered it and when it froze
	 * (borrowed for the call).  Optional (NULL: not recorded).
	 */
	int (*snapshot)(void *ctx, const struct auxcap_snapshot_info *info);
};

struct auxcap_sink {
	const struct auxcap_sink_ops *ops;
	void *ctx;
};

#endif /* AUXCAP_SINK_H */
