/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Arm SPE backend (auxcap/backend.h): record side (spe_record.c) and decode side
 * (spe_backend.c, over the packet decoder of spe_decode.h).
 *
 * AUXTRACE_INFO (type AUXCAP_AUXTRACE_ARM_SPE = 4) carries the two words perf 6.1 reads
 * (tools/perf/util/arm-spe.h, the layout newer perf calls "version 1"): the PMU type and
 * whether mmaps were per CPU.  The time conversion of SPE timestamps is not in it: perf takes
 * it from the PERF_RECORD_TIME_CONV that precedes AUXTRACE_INFO in the file.
 *
 * Trace events (struct auxcap_trace_event) of SPE samples: @op is
 * AUXCAP_SPE_EVENT_OP(class, payload byte) of the sample's operation type packet (0 if none),
 * @events the events packet's bits (AUXCAP_SPE_EV_*), @tid the CONTEXTIDR value (the pid of
 * the sampled thread on Linux with CONFIG_PID_IN_CONTEXTIDR), @tsc the timestamp packet
 * (generic timer ticks).
 */
#ifndef AUXCAP_SPE_BACKEND_H
#define AUXCAP_SPE_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "auxcap/backend.h"

/** AUXTRACE_INFO private words. */
enum auxcap_spe_info {
	AUXCAP_SPE_INFO_PMU_TYPE = 0,  /* attr.type of the arm_spe_N PMU */
	AUXCAP_SPE_INFO_PER_CPU_MMAPS, /* 1 if recorded per CPU (perf leaves it 0, reads none) */
	AUXCAP_SPE_INFO_NR,
};

/** struct auxcap_trace_event.op of an SPE sample: operation class and payload byte. */
#define AUXCAP_SPE_EVENT_OP(cls, payload) (((uint32_t)(cls) << 8) | (uint32_t)(payload))
#define AUXCAP_SPE_EVENT_OP_CLASS(op)	   (((op) >> 8) & 0x3)
#define AUXCAP_SPE_EVENT_OP_PAYLOAD(op)	   ((op) & 0xff)

/* Record side, see auxcap_backend_ops. */
int auxcap_spe_recording_options(const struct auxcap_record_ctx *ctx, struct auxcap_attr *attr);
size_t auxcap_spe_info_size(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr);
int auxcap_spe_info_fill(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr,
			 uint64_t *words, size_t nr);
int auxcap_spe_find_snapshot(const struct auxcap_aux_ring *ring, uint64_t head, uint64_t old,
			     uint64_t *state, uint64_t *ret_start, uint64_t *ret_end);

#endif /* AUXCAP_SPE_BACKEND_H */
