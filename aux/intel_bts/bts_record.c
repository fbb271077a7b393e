/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intel BTS record side: the attr, the checks perf makes (tools/perf/arch/x86/util/
 * intel-bts.c) and the limits of the kernel driver (spec/kernel-aux-abi.md 5.2), the
 * AUXTRACE_INFO words, and snapshot wrap detection.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "auxcap/session.h"
#include "bts_backend.h"

/* The kernel allocates a snapshot (overwrite) buffer of an AUX_NO_SG PMU as one high-order
 * chunk, at most MAX_ORDER (10 on x86-64: 4 MiB with 4 KiB pages); BTS refuses more chunks. */
#define BTS_SNAPSHOT_MAX_BYTES (4u << 20)

__attribute__((format(printf, 2, 3))) static int fail(const struct auxcap_record_ctx *ctx,
						       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (ctx->errbuf && ctx->errlen)
		/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): false positive, va_start above */
		vsnprintf(ctx->errbuf, ctx->errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int auxcap_bts_recording_options(const struct auxcap_record_ctx *ctx, struct auxcap_attr *attr)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t aux_bytes, min_bytes;

	if (!ctx || !attr || ctx->sz < sizeof(*ctx))
		return -EINVAL;
	aux_bytes = ctx->aux_pages * page;

	if (ctx->per_cpu)
		return fail(ctx, "intel_bts records per thread only (as perf): trace a command or "
				 "threads (-p/-t), not -a/-C");
	/* One record per taken branch: no sampling period, no frequency (perf forces both). */
	if (attr->attr.freq || attr->attr.sample_period > 1)
		return fail(ctx, "intel_bts writes a record for every branch: drop freq=/period= "
				 "from the event");
	attr->attr.freq = 0;
	attr->attr.sample_period = 1;
	/* perf's samples always carry the IP; perf script refuses to print without it. */
	attr->attr.sample_type |= PERF_SAMPLE_IP;

	min_bytes = ctx->snapshot ? 4096 : 8192;
	if (aux_bytes && (aux_bytes < min_bytes || (aux_bytes & (aux_bytes - 1))))
		return fail(ctx, "intel_bts AUX buffer of %zu bytes: it must be a power of two and at "
				 "least %zu KiB; set it with -m ,PAGES",
			    aux_bytes, min_bytes / 1024);
	if (ctx->snapshot) {
		if (ctx->snapshot_size && aux_bytes && ctx->snapshot_size != aux_bytes)
			return fail(ctx, "intel_bts snapshots are the whole AUX buffer (%zu bytes), so "
					 "that records stay whole: drop the size from --snapshot or "
					 "make the AUX buffer that size with -m ,PAGES",
				    aux_bytes);
		if (aux_bytes > BTS_SNAPSHOT_MAX_BYTES)
			return fail(ctx, "intel_bts snapshot mode needs the AUX buffer in one "
					 "physically contiguous chunk, at most 4 MiB: use -m ,%zu or less",
				    (size_t)BTS_SNAPSHOT_MAX_BYTES / page);
	}
	return 0;
}

size_t auxcap_bts_info_size(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr)
{
	(void)ctx;
	(void)attr;
	return AUXCAP_BTS_INFO_NR;
}

int auxcap_bts_info_fill(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr,
			 uint64_t *words, size_t nr)
{
	const struct auxcap_perf_time_conv *tc;

	if (!ctx || !attr || !words || nr != AUXCAP_BTS_INFO_NR || ctx->sz < sizeof(*ctx))
		return -EINVAL;
	tc = ctx->time_conv && ctx->time_conv->time_mult ? ctx->time_conv : NULL;
	words[AUXCAP_BTS_INFO_PMU_TYPE] = attr->attr.type;
	/*
	 * perf converts perf time to TSC with these whenever a record has a time, and divides
	 * by TIME_MULT: without a conversion write the identity (mult 1, shift 0, zero 0), which
	 * matches AUXTRACE references taken in perf time, and say it is not the kernel's.
	 */
	words[AUXCAP_BTS_INFO_TIME_SHIFT] = tc ? tc->time_shift : 0;
	words[AUXCAP_BTS_INFO_TIME_MULT] = tc ? tc->time_mult : 1;
	words[AUXCAP_BTS_INFO_TIME_ZERO] = tc ? tc->time_zero : 0;
	words[AUXCAP_BTS_INFO_CAP_USER_TIME_ZERO] = tc && tc->cap_user_time_zero;
	/*
	 * perf reads SNAPSHOT_MODE for one thing: trimming what a snapshot repeats of the
	 * previous one at decode time, by comparing bytes.  auxcap's capture session already
	 * writes each snapshot's new bytes only (core/session.c), so trimming again would drop
	 * real records of a repetitive trace (a loop's identical branch records look like
	 * overlap): auxcap's files say 0.  (Snapshot mode shows in the AUX records' OVERWRITE
	 * flag.)
	 */
	words[AUXCAP_BTS_INFO_SNAPSHOT_MODE] = 0;
	return 0;
}

/*
 * perf's intel_bts_find_snapshot: AUX pages start zeroed, so the buffer has wrapped once any
 * of its last 4 KiB is non-zero; then the whole buffer ending at head is valid.  The unused
 * tail of a buffer whose size is not a multiple of 24 (the hardware wraps at the last whole
 * record) is cut by the backend's alignment.
 */
int auxcap_bts_find_snapshot(const struct auxcap_aux_ring *ring, uint64_t head, uint64_t old,
			     uint64_t *state, uint64_t *ret_start, uint64_t *ret_end)
{
	return auxcap_find_snapshot_zero_tail(ring, head, old, state, ret_start, ret_end);
}
