/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intel PT record side: what the backend ops of ipt_backend.c are made of, exposed for tests.
 *
 *   ipt_record.c   recording_options (perf's default config, caps checks), AUXTRACE_INFO
 *   ipt_filter.c   --filter: perf's address filter syntax to the kernel's, symbols via libelf
 *
 * None of it includes <intel-pt.h>: the record side builds without libipt.
 */
#ifndef AUXCAP_IPT_RECORD_H
#define AUXCAP_IPT_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "auxcap/backend.h"

/**
 * The u64 words of PERF_RECORD_AUXTRACE_INFO for Intel PT, in perf's order (perf 6.1
 * tools/perf/util/intel-pt.h, written by arch/x86/util/intel-pt.c intel_pt_info_fill(), read
 * by util/intel-pt.c intel_pt_process_auxtrace_info()).  After the fixed words: the filter
 * string, NUL-terminated and zero-padded to 8 bytes (when FILTER_STR_LEN > 0), then one word
 * with caps/event_trace (perf 5.18+; older readers stop before it).
 */
enum auxcap_ipt_info {
	AUXCAP_IPT_INFO_PMU_TYPE = 0,	       /* attr.type of the PT event */
	AUXCAP_IPT_INFO_TIME_SHIFT,	       /* TSC -> perf time: shift */
	AUXCAP_IPT_INFO_TIME_MULT,	       /* ... mult */
	AUXCAP_IPT_INFO_TIME_ZERO,	       /* ... zero (ns) */
	AUXCAP_IPT_INFO_CAP_USER_TIME_ZERO,    /* 1 if the three above are valid */
	AUXCAP_IPT_INFO_TSC_BIT,	       /* config bit of the tsc term */
	AUXCAP_IPT_INFO_NORETCOMP_BIT,	       /* config bit of noretcomp */
	AUXCAP_IPT_INFO_HAVE_SCHED_SWITCH,     /* 0 none, 1 sched_switch, 2 SWITCH, 3 CPU_WIDE */
	AUXCAP_IPT_INFO_SNAPSHOT_MODE,	       /* 1: recorded as snapshots (overlaps to trim) */
	AUXCAP_IPT_INFO_PER_CPU_MMAPS,	       /* 1: per-CPU buffers */
	AUXCAP_IPT_INFO_MTC_BIT,	       /* config bit of mtc */
	AUXCAP_IPT_INFO_MTC_FREQ_BITS,	       /* config mask of mtc_period */
	AUXCAP_IPT_INFO_TSC_CTC_N,	       /* CPUID.(EAX=0x15):EBX */
	AUXCAP_IPT_INFO_TSC_CTC_D,	       /* CPUID.(EAX=0x15):EAX */
	AUXCAP_IPT_INFO_CYC_BIT,	       /* config bit of cyc */
	AUXCAP_IPT_INFO_MAX_NONTURBO_RATIO,    /* intel_pt/max_nonturbo_ratio, 0 unknown */
	AUXCAP_IPT_INFO_FILTER_STR_LEN,	       /* strlen of the filter, 0 none */
	AUXCAP_IPT_INFO_FIXED,		       /* number of fixed words */
};

/**
 * perf's choice among the values a caps bitmask allows (caps/mtc_periods, caps/psb_periods):
 * the largest allowed value <= @target, else the smallest allowed one.
 * Returns the value, or -1 if @bits is 0.
 */
int auxcap_ipt_pick_bit(uint64_t bits, int target);

/** Bytes between PSB packets the event of @attr will have (256 on early hardware). */
size_t auxcap_ipt_psb_period_bytes(const struct auxcap_pmu *pmu, const struct auxcap_attr *attr);

/** The backend's ops, see auxcap/backend.h. */
int auxcap_ipt_recording_options(const struct auxcap_record_ctx *ctx, struct auxcap_attr *attr);
size_t auxcap_ipt_info_size(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr);
int auxcap_ipt_info_fill(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr,
			 uint64_t *words, size_t nr);
int auxcap_ipt_addr_filter(const struct auxcap_record_ctx *ctx, char *buf, size_t len);

/**
 * Turn address filters in perf's --filter syntax into the string the kernel takes with
 * PERF_EVENT_IOC_SET_FILTER (and perf stores in AUXTRACE_INFO):
 *
 *	ACTION START[/SIZE_OR_END][@FILE] [, ...]      separated by commas or spaces
 *
 * ACTION is filter (trace only inside the range), start, stop (trace starts or stops at an
 * address or when entering the range), or tracestop (written as stop with a range).  START
 * and END are numbers or function symbols (a symbol may take "#N" for its N-th definition or
 * "#g" for the global one; "*" alone is the whole file or the whole kernel).  With @FILE the
 * addresses are offsets in that file, as the kernel wants: symbols are found in its symbol
 * table (libelf) and turned into file offsets through its PT_LOAD segments, and FILE becomes
 * an absolute path.  Without @FILE they are kernel addresses (symbols from /proc/kallsyms).
 * "filter SYM" without a size covers the symbol.
 *
 * At most @max_filters filters (nr_addr_filters).  @text is borrowed; the result goes to
 * @buf (@len bytes, always terminated when @len > 0).
 *
 * Returns 0 on success.
 * Returns -EINVAL if the text does not parse, a symbol is missing or ambiguous, an end lies
 * before its start, or a file cannot be read as ELF (reason in @errbuf).
 * Returns -E2BIG if there are more than @max_filters filters.
 * Returns -ENOSPC if the result does not fit in @buf.
 * Returns -ENOMEM if out of memory.
 */
int auxcap_ipt_filter_resolve(const char *text, uint32_t max_filters, char *buf, size_t len,
			      char *errbuf, size_t errlen);

#endif /* AUXCAP_IPT_RECORD_H */
