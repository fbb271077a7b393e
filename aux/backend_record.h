/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Record-side glue between a capture and the backend serving its AUX event: the calls every
 * recorder makes in the same order, whatever the backend (perf's auxtrace_record sequence).
 *
 *	be = auxcap_backend_for_pmu(name, pmu);
 *	auxcap_backend_record_options(be, &ctx, &attr);    complete the attr (defaults, caps)
 *	... open the session, find the time conversion ...
 *	auxcap_backend_write_info(be, &ctx, &attr, w);     TIME_CONV, then AUXTRACE_INFO,
 *	                                                   before the first AUXTRACE record
 */
#ifndef AUXCAP_BACKEND_RECORD_H
#define AUXCAP_BACKEND_RECORD_H

#include "auxcap/backend.h"
#include "auxcap/perf_data.h"

/**
 * Run @be's recording_options on @attr (caller-owned, holding the user's terms), if @be has
 * one.  @ctx is borrowed for the call.
 *
 * Returns 0 on success (also when @be has no recording_options).
 * Returns -EINVAL if an argument is NULL or @ctx->sz is too small, or the backend's error
 * (-EINVAL, -EOPNOTSUPP, ...; its one-line reason is in @ctx->errbuf).
 */
int auxcap_backend_record_options(const struct auxcap_backend_ops *be,
				  const struct auxcap_record_ctx *ctx, struct auxcap_attr *attr);

/**
 * The address filter for PERF_EVENT_IOC_SET_FILTER from the user's text @ctx->filter, in @buf
 * (@len bytes): @be's addr_filter (symbols resolved), or the text as it is when @be has none.
 * Call before auxcap_backend_record_options(), and give the result to the record ops as
 * @ctx->filter.
 *
 * Returns 0 on success.
 * Returns -EINVAL if an argument is NULL, @ctx->filter is NULL, or the backend refuses the
 * text (its reason in @ctx->errbuf).
 * Returns -EOPNOTSUPP if the PMU has no address filters (nr_addr_filters 0).
 * Returns -E2BIG, -ENOSPC, -ENOMEM as the backend says.
 */
int auxcap_backend_addr_filter(const struct auxcap_backend_ops *be,
			       const struct auxcap_record_ctx *ctx, char *buf, size_t len);

/**
 * Write what a decoder needs before the trace: PERF_RECORD_TIME_CONV when @ctx->time_conv
 * is set and says cap_user_time_zero, then PERF_RECORD_AUXTRACE_INFO of @be's type with
 * the words of @be's info_size/info_fill (nothing if @be has none).  Call it after the
 * session opened (the attrs are known) and before the first AUX chunk is written.
 *
 * @be may be NULL (no backend: only TIME_CONV).  @ctx and @attr are borrowed for the call.
 *
 * Returns 0 on success.
 * Returns -EINVAL if @ctx, @attr or @w is NULL, or info_size gives more words than a record
 * holds.
 * Returns -ENOMEM if out of memory.
 * Returns the error of info_fill (its reason in @ctx->errbuf) or of the writer.
 */
int auxcap_backend_write_info(const struct auxcap_backend_ops *be,
			      const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr,
			      struct auxcap_perf_writer *w);

#endif /* AUXCAP_BACKEND_RECORD_H */
