/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Arm SPE backend's ops table (auxcap/backend.h) and its decode side: every record of the
 * stream becomes a SAMPLE event (PC, data virtual and physical address, latencies, events,
 * operation, timestamp, context), malformed data a GAP event at its offset after which the
 * packet decoder has resynchronised at the next record.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linefile.h"
#include "spe_backend.h"
#include "spe_decode.h"

struct spe_dec {
	struct auxcap_spe_decoder d;
	struct auxcap_perf_time_conv tc; /* valid if @have_tc */
	bool have_tc;
};

/* The driver names its PMUs arm_spe_N (one per SPE-capable CPU type). */
static int spe_probe(const char *pmu_name, const struct auxcap_pmu *pmu)
{
	(void)pmu;
	return !strcmp(pmu_name, "arm_spe") || !strncmp(pmu_name, "arm_spe_", 8);
}

/* Counter ticks to perf time, as perf's tsc_to_perf_time() does with TIME_CONV. */
static uint64_t spe_perf_time(const struct auxcap_perf_time_conv *tc, uint64_t cyc)
{
	uint64_t quot, rem;

	if (tc->cap_user_time_short)
		cyc = tc->time_cycles + ((cyc - tc->time_cycles) & tc->time_mask);
	quot = cyc >> tc->time_shift;
	rem = cyc & ((1ULL << tc->time_shift) - 1);
	return tc->time_zero + quot * tc->time_mult + ((rem * tc->time_mult) >> tc->time_shift);
}

static int spe_decoder_new(const struct auxcap_decode_ctx *ctx, const uint8_t *buf, size_t len,
			   void **ret_dec)
{
	struct spe_dec *sd;

	if (!ctx || !ret_dec || (!buf && len) || ctx->sz < sizeof(*ctx))
		return -EINVAL;
	sd = calloc(1, sizeof(*sd));
	if (!sd)
		return -ENOMEM;
	auxcap_spe_decoder_init(&sd->d, buf, len, 0);
	if (ctx->time_conv && ctx->time_conv->time_mult && ctx->time_conv->time_shift < 64) {
		sd->tc = *ctx->time_conv;
		sd->have_tc = true;
	}
	*ret_dec = sd;
	return 0;
}

static enum auxcap_branch_type spe_branch_type(const struct auxcap_spe_op *op)
{
	if (op->flags & AUXCAP_SPE_OP_CALL)
		return AUXCAP_BR_CALL;
	if (op->flags & AUXCAP_SPE_OP_RET)
		return AUXCAP_BR_RETURN;
	if (op->flags & AUXCAP_SPE_OP_COND)
		return AUXCAP_BR_COND;
	return AUXCAP_BR_JUMP;
}

static void spe_sample_event(const struct spe_dec *sd, const struct auxcap_spe_sample *s,
			     struct auxcap_trace_event *ev)
{
	ev->kind = AUXCAP_TRACE_SAMPLE;
	ev->offset = s->offset;
	if (s->present & AUXCAP_SPE_HAS_PC)
		ev->ip = s->pc;
	else
		ev->flags |= AUXCAP_TRACE_F_IP_UNKNOWN;
	if (s->present & AUXCAP_SPE_HAS_TIMESTAMP) {
		ev->tsc = s->timestamp;
		ev->flags |= AUXCAP_TRACE_F_HAS_TSC;
		if (sd->have_tc) {
			ev->time = spe_perf_time(&sd->tc, s->timestamp);
			ev->flags |= AUXCAP_TRACE_F_HAS_TIME;
		}
	}
	if (s->present & AUXCAP_SPE_HAS_CONTEXT) {
		ev->tid = s->context_id;
		ev->flags |= AUXCAP_TRACE_F_HAS_TID;
	}
	if (s->present & AUXCAP_SPE_HAS_DATA_VA) {
		ev->addr = s->data_va;
		ev->flags |= AUXCAP_TRACE_F_HAS_ADDR;
	}
	if (s->present & AUXCAP_SPE_HAS_DATA_PA) {
		ev->phys_addr = s->data_pa;
		ev->flags |= AUXCAP_TRACE_F_HAS_PHYS;
	}
	if (s->present & AUXCAP_SPE_HAS_TOTAL_LAT)
		ev->total_latency = s->total_lat;
	if (s->present & AUXCAP_SPE_HAS_ISSUE_LAT)
		ev->issue_latency = s->issue_lat;
	if (s->present & AUXCAP_SPE_HAS_XLAT_LAT)
		ev->translation_latency = s->xlat_lat;
	if (s->present & AUXCAP_SPE_HAS_EVENTS) {
		ev->events = s->events;
		if (s->events & AUXCAP_SPE_EV_MISPREDICTED)
			ev->flags |= AUXCAP_TRACE_F_MISPRED;
		if (s->events & AUXCAP_SPE_EV_TRANSACTIONAL)
			ev->flags |= AUXCAP_TRACE_F_SPECULATIVE;
	}
	if (s->present & AUXCAP_SPE_HAS_OP) {
		ev->op = AUXCAP_SPE_EVENT_OP(s->op.cls, s->op.raw);
		if (s->op.cls == AUXCAP_SPE_OP_CLASS_BRANCH)
			ev->branch = spe_branch_type(&s->op);
	}
	if (s->present & AUXCAP_SPE_HAS_TARGET)
		ev->to = s->target;
}

static int spe_decoder_next(void *dec, struct auxcap_trace_event *ev)
{
	struct spe_dec *sd = dec;
	struct auxcap_spe_event se;
	int r;

	if (!sd || !ev)
		return -EINVAL;
	r = auxcap_spe_decoder_next(&sd->d, &se);
	if (r <= 0)
		return r;
	memset(ev, 0, sizeof(*ev));
	if (se.type == AUXCAP_SPE_EVENT_ERROR) {
		ev->kind = AUXCAP_TRACE_GAP;
		ev->offset = se.error.offset;
		ev->err = se.error.code;
		ev->native = (int)se.error.kind;
		ev->what = auxcap_spe_error_str(se.error.kind);
		return 1;
	}
	spe_sample_event(sd, &se.sample, ev);
	return 1;
}

static void spe_decoder_free(void *dec)
{
	free(dec);
}

/* Packets in perf report -D's layout, the samples they make, errors, the accounting line. */
static int spe_dump(const struct auxcap_decode_ctx *ctx, const uint8_t *buf, size_t len,
		    auxcap_backend_line_fn fn, void *arg)
{
	struct auxcap_linefile lf;
	struct auxcap_spe_stats st;
	FILE *f;
	int r, rc;

	(void)ctx;
	if ((!buf && len) || !fn)
		return -EINVAL;
	r = auxcap_linefile_open(&lf, fn, arg, &f);
	if (r < 0)
		return r;
	r = auxcap_spe_dump_raw(buf, len, f,
				AUXCAP_SPE_DUMP_PACKETS | AUXCAP_SPE_DUMP_SAMPLES |
					AUXCAP_SPE_DUMP_SUMMARY,
				&st);
	rc = auxcap_linefile_close(&lf, f);
	if (rc < 0)
		return rc;
	if (r < 0)
		return r;
	return st.errors > INT32_MAX ? INT32_MAX : (int)st.errors;
}

const struct auxcap_backend_ops auxcap_backend_arm_spe = {
	.abi = AUXCAP_BACKEND_ABI,
	.name = "arm_spe",
	.description = "Arm Statistical Profiling Extension (auxcap's packet decoder)",
	.auxtrace_type = AUXCAP_AUXTRACE_ARM_SPE,
	.probe = spe_probe,
	.recording_options = auxcap_spe_recording_options,
	.info_size = auxcap_spe_info_size,
	.info_fill = auxcap_spe_info_fill,
	.find_snapshot = auxcap_spe_find_snapshot,
	.decoder_new = spe_decoder_new,
	.decoder_next = spe_decoder_next,
	.decoder_free = spe_decoder_free,
	.dump = spe_dump,
	.flags = AUXCAP_BACKEND_F_TRACE_HAS_TID,
};
