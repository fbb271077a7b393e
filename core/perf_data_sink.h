/* SPDX-License-Identifier: BSD-3-Clause */
/* A capture sink that writes a perf.data file through struct auxcap_perf_writer. */
#ifndef AUXCAP_PERF_DATA_SINK_H
#define AUXCAP_PERF_DATA_SINK_H

#include "auxcap/perf_data.h"
#include "sink.h"

struct auxcap_perf_sink {
	struct auxcap_sink sink;        /* pass &ps->sink to the session */
	struct auxcap_perf_writer *w;   /* borrowed, outlives the sink */
	uint64_t records, aux_records;  /* written */
	uint64_t aux_bytes;             /* AUX payload bytes written */
	uint64_t snapshots;             /* AUX chunks flagged as snapshots */
	bool wrote_init;                /* FINISHED_INIT written after the first round */
	uint64_t reserve;               /* snapshot mode: file space reserved for the next
					   snapshot after each one (auxcap_perf_writer_reserve();
					   0: none); the caller reserves the first */
};

/** Set up @ps to write into @w. */
void auxcap_perf_sink_init(struct auxcap_perf_sink *ps, struct auxcap_perf_writer *w);

#endif
