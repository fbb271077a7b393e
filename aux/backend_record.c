/* SPDX-License-Identifier: BSD-3-Clause */
/* Record-side glue between a capture and its backend (see backend_record.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_record.h"

/* The largest AUXTRACE_INFO private part: a record is at most 65535 bytes, 16 of header. */
#define MAX_INFO_WORDS ((65535u - 16u) / 8u)

static void set_err(const struct auxcap_record_ctx *ctx, const char *what, int r)
{
	if (ctx->errbuf && ctx->errlen && !ctx->errbuf[0])
		snprintf(ctx->errbuf, ctx->errlen, "%s failed (errno %d)", what, -r);
}

int auxcap_backend_record_options(const struct auxcap_backend_ops *be,
				  const struct auxcap_record_ctx *ctx, struct auxcap_attr *attr)
{
	int r;

	if (!be || !ctx || !attr || ctx->sz < sizeof(*ctx))
		return -EINVAL;
	if (!be->recording_options)
		return 0;
	if (ctx->errbuf && ctx->errlen)
		ctx->errbuf[0] = '\0';
	r = be->recording_options(ctx, attr);
	if (r < 0)
		set_err(ctx, "recording_options", r);
	return r < 0 ? r : 0;
}

int auxcap_backend_addr_filter(const struct auxcap_backend_ops *be,
			       const struct auxcap_record_ctx *ctx, char *buf, size_t len)
{
	int r;

	if (!ctx || !ctx->filter || !buf || !len || ctx->sz < sizeof(*ctx))
		return -EINVAL;
	if (ctx->errbuf && ctx->errlen)
		ctx->errbuf[0] = '\0';
	if (ctx->pmu && !ctx->pmu->nr_addr_filters) {
		if (ctx->errbuf && ctx->errlen)
			snprintf(ctx->errbuf, ctx->errlen,
				 "%s has no address filters here (nr_addr_filters is 0 or absent): "
				 "drop --filter",
				 ctx->pmu->name);
		return -EOPNOTSUPP;
	}
	if (be && be->addr_filter) {
		r = be->addr_filter(ctx, buf, len);
		if (r < 0)
			set_err(ctx, "addr_filter", r);
		return r < 0 ? r : 0;
	}
	if (strlen(ctx->filter) >= len)
		return -ENOSPC;
	strcpy(buf, ctx->filter);
	return 0;
}

int auxcap_backend_write_info(const struct auxcap_backend_ops *be,
			      const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr,
			      struct auxcap_perf_writer *w)
{
	uint64_t *words;
	size_t nr;
	int r;

	if (!ctx || !attr || !w || ctx->sz < sizeof(*ctx))
		return -EINVAL;
	if (ctx->time_conv && ctx->time_conv->cap_user_time_zero) {
		r = auxcap_perf_writer_write_time_conv(w, ctx->time_conv);
		if (r < 0)
			return r;
	}
	if (!be || !be->info_size)
		return 0;
	nr = be->info_size(ctx, attr);
	if (nr > MAX_INFO_WORDS)
		return -EINVAL;
	words = calloc(nr ? nr : 1, sizeof(*words));
	if (!words)
		return -ENOMEM;
	if (ctx->errbuf && ctx->errlen)
		ctx->errbuf[0] = '\0';
	r = be->info_fill(ctx, attr, words, nr);
	if (r < 0)
		set_err(ctx, "info_fill", r);
	else
		r = auxcap_perf_writer_write_auxtrace_info(w, be->auxtrace_type, words, nr);
	free(words);
	return r < 0 ? r : 0;
}
