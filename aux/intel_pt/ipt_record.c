/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intel PT record side (see ipt_record.h): the attr perf would open, checked against the PMU's
 * caps, and the AUXTRACE_INFO words perf writes.
 *
 * Divisions: helpers over the PMU description; recording_options (defaults, then checks);
 * AUXTRACE_INFO.
 *
 * Facts used (perf 6.1 tools/perf/arch/x86/util/intel-pt.c, kernel arch/x86/events/intel/pt.c):
 *   - perf's default config for intel_pt// is "tsc", plus "mtc,mtc_period=P" when caps/mtc
 *     (assumed 1 when absent) and caps/mtc_periods allow it, plus "psb_period=Q" when
 *     caps/psb_cyc (assumed 1) and mtc_periods are non-zero, plus "pt,branch" when those
 *     format terms exist; P and Q are the allowed values nearest 3 (auxcap_ipt_pick_bit());
 *   - user terms override the defaults; pt=0 is forced back to 1;
 *   - mtc_period, psb_period and cyc_thresh must be allowed by caps/mtc_periods,
 *     caps/psb_periods and caps/cycle_thresholds (0 is always allowed), which count only
 *     when caps/mtc and caps/psb_cyc say the feature exists;
 *   - the kernel refuses cyc, psb_period, cyc_thresh without caps/psb_cyc, mtc without
 *     caps/mtc, ptw without caps/ptwrite, fup_on_ptw without ptw, pwr_evt without
 *     caps/power_event_trace, event without caps/event_trace, notnt without
 *     caps/tnt_disable (pt_event_valid()); we say so before the kernel's bare EINVAL;
 *   - the AUX area must be a power of two of at least 8 KiB (4 KiB in snapshot mode);
 *   - PSBs come every 2^(psb_period + 11) bytes, every 256 bytes on hardware without
 *     caps/topa_multiple_entries.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "auxcap/log.h"
#include "ipt_record.h"

/* ---- helpers over the PMU description ------------------------------------------------------ */

static int err_out(const struct auxcap_record_ctx *ctx, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int err_out(const struct auxcap_record_ctx *ctx, int r, const char *fmt, ...)
{
	va_list ap;

	if (ctx->errbuf && ctx->errlen) {
		va_start(ap, fmt);
		vsnprintf(ctx->errbuf, ctx->errlen, fmt, ap);
		va_end(ap);
	}
	return r;
}

/* The config bits that hold value 1 of term @name (its lowest bit), 0 if there is no such
 * term. */
static uint64_t term_bit(const struct auxcap_pmu *pmu, const char *name)
{
	const struct auxcap_pmu_format *f = auxcap_pmu_format_find(pmu, name);
	struct auxcap_attr a;

	if (!f || f->word != AUXCAP_ATTR_CONFIG)
		return 0;
	memset(&a, 0, sizeof(a));
	if (auxcap_pmu_format_put(f, 1, &a) < 0)
		return 0;
	return a.attr.config;
}

/* The config mask of term @name, 0 if absent. */
static uint64_t term_mask(const struct auxcap_pmu *pmu, const char *name)
{
	const struct auxcap_pmu_format *f = auxcap_pmu_format_find(pmu, name);

	return f && f->word == AUXCAP_ATTR_CONFIG ? f->mask : 0;
}

/* Value of term @name in @attr (0 if the PMU has no such term). */
static uint64_t term_get(const struct auxcap_pmu *pmu, const struct auxcap_attr *attr,
			 const char *name)
{
	const struct auxcap_pmu_format *f = auxcap_pmu_format_find(pmu, name);

	return f ? auxcap_pmu_format_get(f, attr) : 0;
}

/* caps/@name as a number (intel_pt prints them in hex); @dflt if the file is absent. */
static uint64_t cap_or(const struct auxcap_pmu *pmu, const char *name, uint64_t dflt)
{
	uint64_t v;

	return auxcap_pmu_cap_u64(pmu, name, 16, &v) == 0 ? v : dflt;
}

static bool cap_present(const struct auxcap_pmu *pmu, const char *name)
{
	return auxcap_pmu_cap_text(pmu, name) != NULL;
}

int auxcap_ipt_pick_bit(uint64_t bits, int target)
{
	int pick = -1;

	for (int pos = 0; pos < 64; pos++) {
		if (!(bits & (UINT64_C(1) << pos)))
			continue;
		if (pos <= target || pick < 0)
			pick = pos;
		if (pos >= target)
			break;
	}
	return pick;
}

size_t auxcap_ipt_psb_period_bytes(const struct auxcap_pmu *pmu, const struct auxcap_attr *attr)
{
	if (!cap_or(pmu, "topa_multiple_entries", 0))
		return 256;
	return (size_t)1 << (term_get(pmu, attr, "psb_period") + 11);
}

/* "0,3,6,9" / "0-5" from a bitmask of allowed values, as perf prints them. */
static void valid_str(uint64_t valid, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int v = 0; v < 64 && n < len; v++) {
		int hi = v;

		if (!(valid & (UINT64_C(1) << v)))
			continue;
		while (hi + 1 < 64 && (valid & (UINT64_C(1) << (hi + 1))))
			hi++;
		if (hi >= v + 2)
			n += (size_t)snprintf(buf + n, len - n, "%s%d-%d", n ? "," : "", v, hi);
		else if (hi == v + 1)
			n += (size_t)snprintf(buf + n, len - n, "%s%d,%d", n ? "," : "", v, hi);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? "," : "", v);
		v = hi;
	}
}

/* ---- recording_options ------------------------------------------------------------------ */

/* Set term @name to @value unless the user's event string wrote it. */
static int set_default(const struct auxcap_record_ctx *ctx, struct auxcap_attr *attr,
		       const char *name, uint64_t value)
{
	const struct auxcap_pmu_format *f = auxcap_pmu_format_find(ctx->pmu, name);

	if (!f || (ctx->user_set[f->word] & f->mask))
		return 0;
	return auxcap_pmu_format_put(f, value, attr);
}

/* perf's intel_pt_default_config(), applied to the bits the user left alone. */
static int apply_defaults(const struct auxcap_record_ctx *ctx, struct auxcap_attr *attr)
{
	const struct auxcap_pmu *pmu = ctx->pmu;
	uint64_t mtc_periods = 0, psb_periods;
	int r;

	r = set_default(ctx, attr, "tsc", 1);
	if (r == 0 && cap_or(pmu, "mtc", 1)) {
		mtc_periods = cap_or(pmu, "mtc_periods", 0);
		if (mtc_periods) {
			r = set_default(ctx, attr, "mtc", 1);
			if (r == 0)
				r = set_default(ctx, attr, "mtc_period",
						(uint64_t)auxcap_ipt_pick_bit(mtc_periods, 3));
		}
	}
	if (r == 0 && cap_or(pmu, "psb_cyc", 1) && mtc_periods) {
		psb_periods = cap_or(pmu, "psb_periods", 0);
		if (psb_periods)
			r = set_default(ctx, attr, "psb_period",
					(uint64_t)auxcap_ipt_pick_bit(psb_periods, 3));
	}
	if (r == 0 && auxcap_pmu_format_find(pmu, "pt") && auxcap_pmu_format_find(pmu, "branch")) {
		r = set_default(ctx, attr, "pt", 1);
		if (r == 0)
			r = set_default(ctx, attr, "branch", 1);
	}
	return r;
}

/* perf's intel_pt_val_config_term(): the value of @name must be allowed by caps/@caps. */
static int check_value(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr,
		       const char *name, const char *caps, const char *supported)
{
	const struct auxcap_pmu *pmu = ctx->pmu;
	uint64_t valid = cap_or(pmu, caps, 0), v;
	char list[128];

	if (!auxcap_pmu_format_find(pmu, name))
		return 0;
	if (supported && cap_present(pmu, supported) && !cap_or(pmu, supported, 1))
		valid = 0;
	valid |= 1;
	v = term_get(pmu, attr, name);
	if (v < 64 && (valid & (UINT64_C(1) << v)))
		return 0;
	valid_str(valid, list, sizeof(list));
	return err_out(ctx, -EINVAL,
		       "%s=%llu is not supported by this %s; valid values: %s (caps/%s%s%s)", name,
		       (unsigned long long)v, pmu->name, list, caps,
		       supported && valid == 1 ? ", caps/" : "",
		       supported && valid == 1 ? supported : "");
}

/* A knob set in the attr that needs caps/@cap: refuse it when the PMU says it has not. */
static int check_cap(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr,
		     const char *knob, const char *cap, const char *what)
{
	if (!term_get(ctx->pmu, attr, knob) || !cap_present(ctx->pmu, cap) ||
	    cap_or(ctx->pmu, cap, 1))
		return 0;
	return err_out(ctx, -EOPNOTSUPP,
		       "'%s' needs %s, which this %s PMU lacks (caps/%s is 0); drop %s from the event",
		       knob, what, ctx->pmu->name, cap, knob);
}

static int check_caps(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr)
{
	static const struct {
		const char *knob, *cap, *what;
	} needs[] = {
		{ "cyc", "psb_cyc", "cycle-accurate mode (CYC packets)" },
		{ "psb_period", "psb_cyc", "a configurable PSB period" },
		{ "cyc_thresh", "psb_cyc", "a CYC threshold" },
		{ "mtc", "mtc", "MTC packets" },
		{ "mtc_period", "mtc", "MTC packets" },
		{ "ptw", "ptwrite", "PTWRITE" },
		{ "fup_on_ptw", "ptwrite", "PTWRITE" },
		{ "pwr_evt", "power_event_trace", "power event trace" },
		{ "event", "event_trace", "event trace" },
		{ "notnt", "tnt_disable", "TNT disable" },
	};
	int r;

	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		r = check_cap(ctx, attr, needs[i].knob, needs[i].cap, needs[i].what);
		if (r < 0)
			return r;
	}
	if (term_get(ctx->pmu, attr, "fup_on_ptw") && !term_get(ctx->pmu, attr, "ptw"))
		return err_out(ctx, -EINVAL,
			       "'fup_on_ptw' makes FUPs for PTWRITE packets, which need 'ptw': add "
			       "ptw to the event");
	r = check_value(ctx, attr, "cyc_thresh", "cycle_thresholds", "psb_cyc");
	if (r == 0)
		r = check_value(ctx, attr, "mtc_period", "mtc_periods", "mtc");
	if (r == 0)
		r = check_value(ctx, attr, "psb_period", "psb_periods", "psb_cyc");
	return r;
}

static int check_sizes(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t aux = ctx->aux_pages * (size_t)(page > 0 ? page : 4096);
	size_t min = ctx->snapshot ? 4096 : 8192, snap, psb;

	if (aux < min || (aux & (aux - 1)))
		return err_out(ctx, -EINVAL,
			       "the AUX area of %zu bytes is too small for %s: give at least %zu KiB "
			       "as a power of two (-m ,%zuK)",
			       aux, ctx->pmu->name, min / 1024, min / 1024);
	snap = ctx->snapshot_size ? ctx->snapshot_size : aux;
	if (ctx->snapshot && snap > aux)
		return err_out(ctx, -EINVAL,
			       "the snapshot size %zu is larger than the AUX area (%zu bytes): raise "
			       "-m ,AUX",
			       snap, aux);
	psb = auxcap_ipt_psb_period_bytes(ctx->pmu, attr);
	if (ctx->snapshot && snap <= psb + 256)
		auxcap_log(AUXCAP_LOG_WARN,
			   "%s: snapshots of %zu bytes may be too small for PSBs every %zu bytes: "
			   "decoding starts at a PSB",
			   ctx->pmu->name, snap, psb);
	return 0;
}

int auxcap_ipt_recording_options(const struct auxcap_record_ctx *ctx, struct auxcap_attr *attr)
{
	uint64_t pt;
	int r;

	if (!ctx || !attr || !ctx->pmu || ctx->sz < sizeof(*ctx))
		return -EINVAL;
	r = apply_defaults(ctx, attr);
	if (r < 0)
		return err_out(ctx, r, "cannot apply the default config of %s", ctx->pmu->name);
	pt = term_bit(ctx->pmu, "pt");
	if (pt && !(attr->attr.config & pt)) {
		/* the pass-through bit only tells the driver to honour 'branch' (perf forces it) */
		auxcap_log(AUXCAP_LOG_WARN, "%s: pt=0 does not make sense, using pt=1",
			   ctx->pmu->name);
		attr->attr.config |= pt;
	}
	r = check_caps(ctx, attr);
	if (r < 0)
		return r;
	r = check_sizes(ctx, attr);
	if (r < 0)
		return r;
	/* every PT packet goes to the AUX area: no sampling; the sample fields perf record
	 * gives the event (perf script checks them before it shows the decoded samples) */
	attr->attr.freq = 0;
	attr->attr.sample_period = 1;
	attr->attr.sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	return 0;
}

/* ---- AUXTRACE_INFO ---------------------------------------------------------------------- */

static size_t filter_words(const struct auxcap_record_ctx *ctx)
{
	size_t len = ctx->filter ? strlen(ctx->filter) : 0;

	return len ? (len + 1 + 7) / 8 : 0;
}

size_t auxcap_ipt_info_size(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr)
{
	(void)attr;
	/* fixed words, the filter string, the Cap Event Trace word */
	return AUXCAP_IPT_INFO_FIXED + filter_words(ctx) + 1;
}

/* CPUID.(EAX=0x15): the TSC/"core crystal clock" ratio EBX/EAX; 0/0 where there is none. */
static void tsc_ctc_ratio(uint32_t *n, uint32_t *d)
{
	*n = *d = 0;
#if defined(__x86_64__) || defined(__i386__)
	{
		unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;

		if (__get_cpuid(0x15, &eax, &ebx, &ecx, &edx)) {
			*n = ebx;
			*d = eax;
		}
	}
#endif
}

int auxcap_ipt_info_fill(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr,
			 uint64_t *words, size_t nr)
{
	const struct auxcap_pmu *pmu;
	const struct auxcap_perf_time_conv *tc;
	const char *ratio;
	uint32_t n, d;
	size_t flen;

	if (!ctx || !attr || !words || !ctx->pmu || ctx->sz < sizeof(*ctx) ||
	    nr != auxcap_ipt_info_size(ctx, attr))
		return -EINVAL;
	pmu = ctx->pmu;
	tc = ctx->time_conv && ctx->time_conv->cap_user_time_zero ? ctx->time_conv : NULL;
	memset(words, 0, nr * sizeof(*words));
	words[AUXCAP_IPT_INFO_PMU_TYPE] = attr->attr.type;
	if (tc) {
		words[AUXCAP_IPT_INFO_TIME_SHIFT] = tc->time_shift;
		words[AUXCAP_IPT_INFO_TIME_MULT] = tc->time_mult;
		words[AUXCAP_IPT_INFO_TIME_ZERO] = tc->time_zero;
		words[AUXCAP_IPT_INFO_CAP_USER_TIME_ZERO] = 1;
	} else {
		auxcap_log(AUXCAP_LOG_WARN, "%s: TSC not available: the trace decodes without time",
			   pmu->name);
	}
	words[AUXCAP_IPT_INFO_TSC_BIT] = term_bit(pmu, "tsc");
	words[AUXCAP_IPT_INFO_NORETCOMP_BIT] = term_bit(pmu, "noretcomp");
	/* the session's side-band dummy has context_switch: per-task SWITCH records, or
	 * SWITCH_CPU_WIDE when the per-CPU sets count every task */
	words[AUXCAP_IPT_INFO_HAVE_SCHED_SWITCH] = !ctx->have_sched_switch ? 0
						   : ctx->cpu_wide	    ? 3
									    : 2;
	/*
	 * perf reads SNAPSHOT_MODE to look for the overlap of each snapshot with the previous
	 * one (intel_pt_find_overlap, by the TSCs of their PSBs) and, finding none, decodes the
	 * snapshot on its own from its first PSB: the trace between the cut and that PSB is
	 * lost.  auxcap's capture session already writes each snapshot from where the previous
	 * one ended (core/session.c), so the chunks are one stream and perf must join them as it
	 * joins a full trace's buffers: auxcap's files say 0 (snapshot mode shows in the AUX
	 * records' OVERWRITE flag).  tests/aux/intel_pt/test_ipt_snapshot_seams.c.
	 */
	words[AUXCAP_IPT_INFO_SNAPSHOT_MODE] = 0;
	words[AUXCAP_IPT_INFO_PER_CPU_MMAPS] = ctx->per_cpu;
	words[AUXCAP_IPT_INFO_MTC_BIT] = term_bit(pmu, "mtc");
	words[AUXCAP_IPT_INFO_MTC_FREQ_BITS] = term_mask(pmu, "mtc_period");
	tsc_ctc_ratio(&n, &d);
	words[AUXCAP_IPT_INFO_TSC_CTC_N] = n;
	words[AUXCAP_IPT_INFO_TSC_CTC_D] = d;
	words[AUXCAP_IPT_INFO_CYC_BIT] = term_bit(pmu, "cyc");
	ratio = auxcap_pmu_attr_text(pmu, "max_nonturbo_ratio");
	words[AUXCAP_IPT_INFO_MAX_NONTURBO_RATIO] = ratio ? strtoull(ratio, NULL, 10) : 0;
	flen = ctx->filter ? strlen(ctx->filter) : 0;
	words[AUXCAP_IPT_INFO_FILTER_STR_LEN] = flen;
	if (flen)
		memcpy(&words[AUXCAP_IPT_INFO_FIXED], ctx->filter, flen); /* zero-padded */
	/* caps/event_trace is printed with "%d" */
	words[nr - 1] = cap_or(pmu, "event_trace", 0);
	return 0;
}

int auxcap_ipt_addr_filter(const struct auxcap_record_ctx *ctx, char *buf, size_t len)
{
	if (!ctx || !ctx->pmu || !ctx->filter || ctx->sz < sizeof(*ctx))
		return -EINVAL;
	return auxcap_ipt_filter_resolve(ctx->filter, ctx->pmu->nr_addr_filters, buf, len,
					 ctx->errbuf, ctx->errlen);
}
