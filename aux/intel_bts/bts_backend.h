/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Intel BTS backend (auxcap/backend.h): record side (bts_record.c) and decode side
 * (bts_backend.c, over the record decoder of bts_decode.h).
 *
 * AUXTRACE_INFO (type AUXCAP_AUXTRACE_INTEL_BTS = 2) carries perf's six private words, in
 * perf's order (tools/perf/util/intel-bts.h): perf 6.1 reads files auxcap writes, and auxcap
 * reads perf's.  perf needs at least the first five.
 */
#ifndef AUXCAP_BTS_BACKEND_H
#define AUXCAP_BTS_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "auxcap/backend.h"

/** AUXTRACE_INFO private words. */
enum auxcap_bts_info {
	AUXCAP_BTS_INFO_PMU_TYPE = 0,	      /* attr.type of the intel_bts PMU */
	AUXCAP_BTS_INFO_TIME_SHIFT,	      /* TSC -> perf time conversion ... */
	AUXCAP_BTS_INFO_TIME_MULT,	      /* ... (1 with shift 0, zero 0: none known) */
	AUXCAP_BTS_INFO_TIME_ZERO,	      /* ns */
	AUXCAP_BTS_INFO_CAP_USER_TIME_ZERO,   /* 1 if the conversion is the kernel's */
	AUXCAP_BTS_INFO_SNAPSHOT_MODE,	      /* 1: snapshots overlap, trim them at decode
						 time (perf's files in snapshot mode; 0 in
						 auxcap's, whose session writes new bytes only) */
	AUXCAP_BTS_INFO_NR,		      /* words auxcap writes */
};

/** Fewest words perf (and auxcap) accept: up to and excluding SNAPSHOT_MODE. */
#define AUXCAP_BTS_INFO_MIN AUXCAP_BTS_INFO_SNAPSHOT_MODE

/* Record side, see auxcap_backend_ops. */
int auxcap_bts_recording_options(const struct auxcap_record_ctx *ctx, struct auxcap_attr *attr);
size_t auxcap_bts_info_size(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr);
int auxcap_bts_info_fill(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr,
			 uint64_t *words, size_t nr);
int auxcap_bts_find_snapshot(const struct auxcap_aux_ring *ring, uint64_t head, uint64_t old,
			     uint64_t *state, uint64_t *ret_start, uint64_t *ret_end);

#endif /* AUXCAP_BTS_BACKEND_H */
