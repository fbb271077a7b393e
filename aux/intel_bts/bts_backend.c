/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Intel BTS backend's ops table (auxcap/backend.h) and its decode side: 24-byte records
 * to BRANCH / ENABLE (trace begin) / DISABLE (trace end) events, a trailing partial record to
 * a GAP, and consecutive snapshots trimmed of the records they repeat.
 */
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxcap/timeconv.h"
#include "bts_backend.h"
#include "bts_decode.h"
#include "linefile.h"

struct bts_dec {
	struct auxcap_bts_decoder d;
	uint64_t base; /* stream position of the decoded bytes' first byte */
	bool more;     /* the stream goes on in a next piece */
	uint8_t *work; /* owned: the end of the previous pieces + this one, else NULL */
};

/* Whether @ctx (of ctx->sz bytes) has the field at @off of @size bytes. */
static bool ctx_has(const struct auxcap_decode_ctx *ctx, size_t off, size_t size)
{
	return ctx->sz >= off + size;
}

#define CTX_HAS(ctx, field) \
	ctx_has(ctx, offsetof(struct auxcap_decode_ctx, field), sizeof((ctx)->field))

/*
 * A stream may come in pieces (the AUXTRACE buffers of one queue).  Records lie on a 24-byte
 * grid from the start of the stream (after a hole): a piece that starts off the grid gets the
 * end of the previous pieces back to the record it cuts (its "carry"), and a piece that more
 * pieces follow leaves its trailing part of a record to the next one.  Copies that carry,
 * then @buf, into a new buffer; returns its length in *@ret_carry (0: none, *@ret_work NULL).
 */
static int bts_carry(const struct auxcap_decode_ctx *ctx, const uint8_t *buf, size_t len,
		     uint8_t **ret_work, size_t *ret_carry)
{
	size_t total = 0, carry, at;
	uint8_t *w;

	*ret_work = NULL;
	*ret_carry = 0;
	if (!CTX_HAS(ctx, nr_prev) || !ctx->prev)
		return 0;
	for (size_t i = 0; i < ctx->nr_prev; i++)
		total += ctx->prev[i].len;
	carry = total % AUXCAP_BTS_RECORD_SIZE;
	if (!carry)
		return 0;
	w = malloc(carry + len);
	if (!w)
		return -ENOMEM;
	at = carry;
	for (size_t i = ctx->nr_prev; i-- > 0 && at > 0;) {
		size_t n = ctx->prev[i].len < at ? ctx->prev[i].len : at;

		memcpy(w + at - n, ctx->prev[i].buf + ctx->prev[i].len - n, n);
		at -= n;
	}
	if (len)
		memcpy(w + carry, buf, len);
	*ret_work = w;
	*ret_carry = carry;
	return 0;
}

static int bts_probe(const char *pmu_name, const struct auxcap_pmu *pmu)
{
	(void)pmu;
	return !strcmp(pmu_name, "intel_bts");
}

__attribute__((format(printf, 2, 3))) static int bad_info(const struct auxcap_decode_ctx *ctx,
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

static int bts_decoder_new(const struct auxcap_decode_ctx *ctx, const uint8_t *buf, size_t len,
			   void **ret_dec)
{
	struct bts_dec *bd;
	bool snapshot = false;
	size_t skip = 0, carry;
	int r;

	if (!ctx || !ret_dec || (!buf && len) || ctx->sz < sizeof(*ctx))
		return -EINVAL;
	if (ctx->info) {
		if (ctx->nr_info < AUXCAP_BTS_INFO_MIN)
			return bad_info(ctx,
					"intel_bts AUXTRACE_INFO has %zu words; perf's layout has at "
					"least %d: the file is damaged or not from intel_bts",
					ctx->nr_info, AUXCAP_BTS_INFO_MIN);
		snapshot = ctx->nr_info > AUXCAP_BTS_INFO_SNAPSHOT_MODE &&
			   ctx->info[AUXCAP_BTS_INFO_SNAPSHOT_MODE];
	}
	bd = calloc(1, sizeof(*bd));
	if (!bd)
		return -ENOMEM;
	bd->base = CTX_HAS(ctx, stream_offset) ? ctx->stream_offset : 0;
	bd->more = CTX_HAS(ctx, more) && ctx->more;
	r = bts_carry(ctx, buf, len, &bd->work, &carry);
	if (r < 0) {
		free(bd);
		return r;
	}
	if (bd->work) {
		bd->base -= carry;
		auxcap_bts_decoder_init(&bd->d, bd->work, carry + len);
	} else {
		/* Snapshots of a BTS buffer overlap; perf drops the repeated part (SNAPSHOT_MODE). */
		if (snapshot && ctx->snapshot_prev)
			skip = auxcap_bts_find_overlap(ctx->snapshot_prev, ctx->snapshot_prev_len,
						       buf, len);
		bd->base += skip;
		auxcap_bts_decoder_init(&bd->d, buf ? buf + skip : NULL, len - skip);
	}
	*ret_dec = bd;
	return 0;
}

static int bts_decoder_next(void *dec, struct auxcap_trace_event *ev)
{
	struct bts_dec *bd = dec;
	struct auxcap_bts_event be;
	int r;

	if (!bd || !ev)
		return -EINVAL;
	r = auxcap_bts_decoder_next(&bd->d, &be);
	if (r <= 0)
		return r;
	/* A record that goes on in the next piece: that piece decodes it. */
	if (be.type == AUXCAP_BTS_EVENT_ERROR && bd->more)
		return 0;
	memset(ev, 0, sizeof(*ev));
	if (be.type == AUXCAP_BTS_EVENT_ERROR) {
		ev->kind = AUXCAP_TRACE_GAP;
		ev->offset = bd->base + be.error.offset;
		ev->err = be.error.code;
		ev->what = "partial BTS record at the end of the buffer";
		return 1;
	}
	ev->offset = bd->base + be.branch.offset;
	if (be.branch.predicted)
		ev->flags |= AUXCAP_TRACE_F_PREDICTED;
	switch (be.branch.kind) {
	case AUXCAP_BTS_TRACE_BEGIN:
		ev->kind = AUXCAP_TRACE_ENABLE;
		ev->ip = be.branch.to;
		break;
	case AUXCAP_BTS_TRACE_END:
		ev->kind = AUXCAP_TRACE_DISABLE;
		ev->ip = be.branch.from;
		break;
	case AUXCAP_BTS_BRANCH:
	default:
		ev->kind = AUXCAP_TRACE_BRANCH;
		ev->ip = be.branch.from;
		ev->to = be.branch.to;
		ev->branch = AUXCAP_BR_NONE; /* BTS does not say; the decode stage may look */
		break;
	}
	return 1;
}

static void bts_decoder_free(void *dec)
{
	struct bts_dec *bd = dec;

	if (bd)
		free(bd->work);
	free(bd);
}

/* perf report -D's listing: one line per 24 bytes, then the accounting line. */
static int bts_dump(const struct auxcap_decode_ctx *ctx, const uint8_t *buf, size_t len,
		    auxcap_backend_line_fn fn, void *arg)
{
	struct auxcap_linefile lf;
	struct auxcap_bts_stats st;
	FILE *f;
	int r, rc;

	(void)ctx;
	if ((!buf && len) || !fn)
		return -EINVAL;
	r = auxcap_linefile_open(&lf, fn, arg, &f);
	if (r < 0)
		return r;
	r = auxcap_bts_dump_raw(buf, len, f, AUXCAP_BTS_DUMP_RAW | AUXCAP_BTS_DUMP_SUMMARY, &st);
	rc = auxcap_linefile_close(&lf, f);
	if (rc < 0)
		return rc;
	if (r < 0)
		return r;
	return st.errors > INT32_MAX ? INT32_MAX : (int)st.errors;
}

const struct auxcap_backend_ops auxcap_backend_intel_bts = {
	.abi = AUXCAP_BACKEND_ABI,
	.name = "intel_bts",
	.description = "Intel Branch Trace Store (24-byte branch records)",
	.auxtrace_type = AUXCAP_AUXTRACE_INTEL_BTS,
	.probe = bts_probe,
	.recording_options = auxcap_bts_recording_options,
	.info_size = auxcap_bts_info_size,
	.info_fill = auxcap_bts_info_fill,
	.find_snapshot = auxcap_bts_find_snapshot,
	.decoder_new = bts_decoder_new,
	.decoder_next = bts_decoder_next,
	.decoder_free = bts_decoder_free,
	.dump = bts_dump,
	.reference = auxcap_counter_now, /* perf's BTS reference: the TSC */
	.alignment = AUXCAP_BTS_RECORD_SIZE,
	.flags = AUXCAP_BACKEND_F_PER_THREAD,
};
