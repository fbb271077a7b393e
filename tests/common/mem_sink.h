/* SPDX-License-Identifier: BSD-3-Clause */
/* A sink that keeps everything in memory, for tests. */
#ifndef AUXCAP_TEST_MEM_SINK_H
#define AUXCAP_TEST_MEM_SINK_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "auxcap/session.h"
#include "sink.h"

struct mem_attr {
	struct perf_event_attr attr;
	char name[64];
	uint64_t ids[256];
	size_t nr_ids;
};

struct mem_chunk {
	struct auxcap_aux_chunk info;
	size_t off; /* into mem_sink.aux */
	size_t len;
};

struct mem_sink {
	struct auxcap_sink sink;
	struct mem_attr attrs[16];
	size_t nr_attrs;
	unsigned char *recs; /* records back to back */
	size_t recs_len, recs_cap;
	size_t nr_recs;
	unsigned char *aux; /* AUX bytes back to back */
	size_t aux_len, aux_cap;
	struct mem_chunk *chunks;
	size_t nr_chunks, chunks_cap;
	size_t rounds;
	struct auxcap_snapshot_info snaps[1024]; /* snapshots reported, the first 1024 */
	size_t nr_snaps;			 /* all reported */
	int fail_after_bytes; /* >= 0: return -ENOSPC once this many record bytes are stored */
};

void mem_sink_init(struct mem_sink *m);
void mem_sink_fini(struct mem_sink *m);
/* The attr whose ids contain @id, or NULL. */
const struct mem_attr *mem_sink_attr_of(const struct mem_sink *m, uint64_t id);

#endif
