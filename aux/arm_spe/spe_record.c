/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Arm SPE record side: the attr with perf's defaults (tools/perf/arch/arm64/util/arm-spe.c)
 * and the checks the kernel driver would otherwise fail with a bare errno
 * (drivers/perf/arm_spe_pmu.c, spec/kernel-aux-abi.md 5.3), the AUXTRACE_INFO words, and
 * snapshot wrap detection for the driver's half-buffer snapshots.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "auxcap/session.h"
#include "spe_backend.h"

/* perf's sampling interval when the driver does not advertise caps/min_interval. */
#define SPE_DEFAULT_PERIOD 4096
/* perf's wrap detection looks at the last 512 bytes of the buffer. */
#define SPE_WRAP_WINDOW 512

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

/* Set format term @name to @value unless the user's event string set any of its bits. */
static void set_default(const struct auxcap_record_ctx *ctx, struct auxcap_attr *attr,
			const char *name, uint64_t value)
{
	const struct auxcap_pmu_format *f;

	if (!ctx->pmu)
		return;
	f = auxcap_pmu_format_find(ctx->pmu, name);
	if (!f || (ctx->user_set[f->word] & f->mask))
		return;
	(void)auxcap_pmu_format_put(f, value, attr);
}

/* Whether format term @name is set (non-zero) in @attr. */
static bool term_set(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr,
		     const char *name)
{
	const struct auxcap_pmu_format *f = ctx->pmu ? auxcap_pmu_format_find(ctx->pmu, name) : NULL;

	return f && auxcap_pmu_format_get(f, attr);
}

int auxcap_spe_recording_options(const struct auxcap_record_ctx *ctx, struct auxcap_attr *attr)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t aux_bytes;
	uint64_t period = SPE_DEFAULT_PERIOD;

	if (!ctx || !attr || ctx->sz < sizeof(*ctx))
		return -EINVAL;
	aux_bytes = ctx->aux_pages * page;

	if (attr->attr.freq)
		return fail(ctx, "arm_spe samples every N operations and has no frequency mode: "
				 "use period=N instead of freq=");
	if (attr->attr.exclude_idle)
		return fail(ctx, "arm_spe cannot exclude the idle task (the driver refuses "
				 "exclude_idle): drop the modifier");
	/* perf's default interval: the smallest the driver allows. */
	if (!attr->attr.sample_period) {
		if (ctx->pmu)
			(void)auxcap_pmu_cap_u64(ctx->pmu, "min_interval", 10, &period);
		attr->attr.sample_period = period;
	}
	/*
	 * Timestamps, to line the samples up with the other events: perf turns them on for
	 * per-CPU recording only; auxcap always does (its decode merges every stream on one
	 * timeline), unless the event string says ts_enable=0.
	 */
	set_default(ctx, attr, "ts_enable", 1);
	if (ctx->per_cpu)
		attr->attr.sample_type |= PERF_SAMPLE_CPU;
	/* perf marks SPE as a source of memory information, and of physical addresses; its
	 * samples always carry the IP (perf script refuses to print without it). */
	attr->attr.sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_DATA_SRC;
	if (term_set(ctx, attr, "pa_enable"))
		attr->attr.sample_type |= PERF_SAMPLE_PHYS_ADDR;

	if (aux_bytes && (aux_bytes < 8192 || (aux_bytes & (aux_bytes - 1))))
		return fail(ctx, "arm_spe AUX buffer of %zu bytes: it must be a power of two and at "
				 "least 8 KiB; set it with -m ,PAGES",
			    aux_bytes);
	if (ctx->snapshot) {
		/* The driver fills one half of the buffer while the other holds whole records. */
		if (ctx->aux_pages && (ctx->aux_pages < 2 || ctx->aux_pages % 2))
			return fail(ctx, "arm_spe snapshot mode needs an even number of AUX pages "
					 "(the driver alternates between the two halves): use -m ,2 "
					 "or more");
		if (ctx->snapshot_size && aux_bytes && ctx->snapshot_size > aux_bytes)
			return fail(ctx, "snapshot size %zu is larger than the AUX buffer (%zu bytes): "
					 "raise -m ,PAGES or lower --snapshot",
				    ctx->snapshot_size, aux_bytes);
	}
	return 0;
}

size_t auxcap_spe_info_size(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr)
{
	(void)ctx;
	(void)attr;
	return AUXCAP_SPE_INFO_NR;
}

int auxcap_spe_info_fill(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr,
			 uint64_t *words, size_t nr)
{
	if (!ctx || !attr || !words || nr != AUXCAP_SPE_INFO_NR || ctx->sz < sizeof(*ctx))
		return -EINVAL;
	words[AUXCAP_SPE_INFO_PMU_TYPE] = attr->attr.type;
	words[AUXCAP_SPE_INFO_PER_CPU_MMAPS] = ctx->per_cpu;
	return 0;
}

/* perf's arm_spe_buffer_has_wrapped: a head past the size, or data in the last 512 bytes. */
static bool spe_wrapped(const uint64_t *w, uint64_t size, uint64_t head)
{
	uint64_t from = size > SPE_WRAP_WINDOW ? size - SPE_WRAP_WINDOW : 0;

	if (head >= size)
		return true;
	if (head > from)
		from = head;
	for (uint64_t i = from / 8; i < size / 8; i++)
		if (w[i])
			return true;
	return false;
}

/*
 * Wrap detection as perf's arm_spe_find_snapshot (latched in @state), and the driver's
 * half-buffer rule (spec 5.3): in snapshot mode the hardware fills one half at a time, padding
 * its end, so the half being filled holds new records up to head and, after head, the rest of
 * what it held a lap ago, whose first record may have lost its start (SPE cannot be parsed
 * backwards).  A wrapped snapshot therefore starts at the next half boundary at or after head
 * (whole records from there on) and ends at head: at least half a buffer, never a torn record.
 * Before the first wrap it is the bytes written since the last snapshot.
 */
int auxcap_spe_find_snapshot(const struct auxcap_aux_ring *ring, uint64_t head, uint64_t old,
			     uint64_t *state, uint64_t *ret_start, uint64_t *ret_end)
{
	uint64_t size, half, end, tear;
	const uint64_t *w = (const uint64_t *)auxcap_aux_ring_data(ring, &size);

	if (!size || (size & (size - 1)))
		return -EINVAL;
	if (!*state && spe_wrapped(w, size, head))
		*state = 1;
	if (!*state) {
		old &= size - 1;
		*ret_start = old;
		*ret_end = old > head ? head + size : head;
		return 0;
	}
	end = head >= size ? head : head + size;
	half = size / 2;
	tear = (half - head % half) % half;
	*ret_start = end - size + tear;
	*ret_end = end;
	return 0;
}
