/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toy: an example out-of-tree auxcap backend (docs/writing-a-backend.md walks through it).
 *
 * It is built like any external project, against the installed headers only:
 *
 *	cc -std=c11 -shared -fPIC -I<prefix>/include toy_backend.c -o libtoy.so
 *	auxcap --plugin ./libtoy.so list
 *
 * and links with nothing: the auxcap functions it calls (AUXCAP_API in the headers) are
 * resolved against the `auxcap` executable when it loads the plug-in.
 *
 * What it does: it serves the intel_bts PMU (the real one, or the emulated one of
 * `auxcap record --emulate`), taking it over from the built-in BTS backend while loaded, and
 * stores the trace as its own "toy" format: the same 24-byte branch records, announced by its
 * own AUXTRACE_INFO (type AUXCAP_AUXTRACE_PRIVATE + 7, four words starting with a magic).  Its
 * decoder turns the records into branch events and ends each stream with a summary event;
 * its dump lists the records.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <auxcap/backend.h>
#include <auxcap/log.h>

#ifndef TOY_ABI
#define TOY_ABI AUXCAP_BACKEND_ABI /* the tests build it with another value once */
#endif

#define TOY_TYPE     (AUXCAP_AUXTRACE_PRIVATE + 7)
#define TOY_MAGIC    0x31594f54ULL /* "TOY1" */
#define TOY_REC_SIZE 24

/* The AUXTRACE_INFO words: the contract between the record side and the decode side. */
enum { TOY_INFO_MAGIC, TOY_INFO_PMU_TYPE, TOY_INFO_REC_SIZE, TOY_INFO_SNAPSHOT, TOY_INFO_NR };

/* ---- record side ---------------------------------------------------------------------- */

static int toy_probe(const char *pmu_name, const struct auxcap_pmu *pmu)
{
	(void)pmu;
	return !strcmp(pmu_name, "intel_bts");
}

static int toy_recording_options(const struct auxcap_record_ctx *ctx, struct auxcap_attr *attr)
{
	if (ctx->per_cpu) {
		snprintf(ctx->errbuf, ctx->errlen, "toy records per thread only: trace a command");
		return -EINVAL;
	}
	/* intel_bts has no format terms: anything in config is a mistake. */
	if (auxcap_attr_word_get(attr, AUXCAP_ATTR_CONFIG)) {
		snprintf(ctx->errbuf, ctx->errlen, "toy takes no config terms: use -e intel_bts//u");
		return -EINVAL;
	}
	attr->attr.freq = 0;
	attr->attr.sample_period = 1; /* the PMU writes every branch */
	auxcap_log(AUXCAP_LOG_INFO, "toy: recording %zu AUX pages per thread", ctx->aux_pages);
	return 0;
}

static size_t toy_info_size(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr)
{
	(void)ctx;
	(void)attr;
	return TOY_INFO_NR;
}

static int toy_info_fill(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr,
			 uint64_t *words, size_t nr)
{
	if (nr != TOY_INFO_NR)
		return -EINVAL;
	words[TOY_INFO_MAGIC] = TOY_MAGIC;
	words[TOY_INFO_PMU_TYPE] = attr->attr.type;
	words[TOY_INFO_REC_SIZE] = TOY_REC_SIZE;
	words[TOY_INFO_SNAPSHOT] = ctx->snapshot;
	return 0;
}

/* ---- decode side ---------------------------------------------------------------------- */

struct toy_dec {
	const uint8_t *buf; /* borrowed until toy_free() */
	size_t len, pos;
	uint64_t base; /* stream position of buf[0]: event offsets are stream positions */
	uint64_t branches;
	int done; /* the summary event went out */
};

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int toy_new(const struct auxcap_decode_ctx *ctx, const uint8_t *buf, size_t len,
		   void **ret_dec)
{
	struct toy_dec *d;

	if (ctx->info && (ctx->nr_info < TOY_INFO_NR || ctx->info[TOY_INFO_MAGIC] != TOY_MAGIC ||
			  ctx->info[TOY_INFO_REC_SIZE] != TOY_REC_SIZE)) {
		snprintf(ctx->errbuf, ctx->errlen, "not a toy trace: bad AUXTRACE_INFO magic");
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->buf = buf;
	d->len = len;
	/* A field appended to the context after the first ABI: read it only if sz covers it.
	 * (toy's records never straddle two pieces of a stream: auxcap cuts its AUX copies to
	 * whole records, .alignment below; a backend whose records can straddle uses
	 * ctx->prev and ctx->more as well.) */
	if (ctx->sz >= offsetof(struct auxcap_decode_ctx, stream_offset) + sizeof(ctx->stream_offset))
		d->base = ctx->stream_offset;
	*ret_dec = d;
	return 0;
}

static int toy_next(void *dec, struct auxcap_trace_event *ev)
{
	struct toy_dec *d = dec;

	while (d->pos + TOY_REC_SIZE <= d->len) {
		const uint8_t *p = d->buf + d->pos;
		uint64_t from = get_le64(p), to = get_le64(p + 8), flags = get_le64(p + 16);

		d->pos += TOY_REC_SIZE;
		if (!from || !to)
			continue; /* padding, trace begin/end: not branches */
		memset(ev, 0, sizeof(*ev));
		ev->kind = AUXCAP_TRACE_BRANCH;
		ev->offset = d->base + d->pos - TOY_REC_SIZE;
		ev->ip = from;
		ev->to = to;
		ev->flags = flags & 0x10 ? AUXCAP_TRACE_F_PREDICTED : 0;
		d->branches++;
		return 1;
	}
	memset(ev, 0, sizeof(*ev));
	if (d->pos < d->len) {
		ev->kind = AUXCAP_TRACE_GAP;
		ev->offset = d->base + d->pos;
		ev->err = -ENODATA;
		ev->what = "toy: partial record";
		d->pos = d->len;
		return 1;
	}
	if (d->done)
		return 0;
	d->done = 1;
	ev->kind = AUXCAP_TRACE_OTHER;
	ev->offset = d->base + d->len;
	ev->what = "toy-summary";
	ev->payload = d->branches;
	return 1;
}

static void toy_free(void *dec)
{
	free(dec);
}

static int toy_dump(const struct auxcap_decode_ctx *ctx, const uint8_t *buf, size_t len,
		    auxcap_backend_line_fn fn, void *arg)
{
	char line[128];
	size_t pos;
	int r;

	(void)ctx;
	for (pos = 0; pos + TOY_REC_SIZE <= len; pos += TOY_REC_SIZE) {
		snprintf(line, sizeof(line), "toy %08zx: 0x%llx -> 0x%llx", pos,
			 (unsigned long long)get_le64(buf + pos),
			 (unsigned long long)get_le64(buf + pos + 8));
		if ((r = fn(arg, line)) < 0)
			return r;
	}
	snprintf(line, sizeof(line), "toy: %zu records, %zu bytes left over", len / TOY_REC_SIZE,
		 len % TOY_REC_SIZE);
	if ((r = fn(arg, line)) < 0)
		return r;
	return len % TOY_REC_SIZE ? 1 : 0;
}

/* ---- the ops table and the entry point ------------------------------------------------- */

static const struct auxcap_backend_ops toy_ops = {
	.abi = TOY_ABI,
	.name = "toy",
	.description = "toy: intel_bts branch records in a format of its own (example plug-in)",
	.auxtrace_type = TOY_TYPE,
	.probe = toy_probe,
	.recording_options = toy_recording_options,
	.info_size = toy_info_size,
	.info_fill = toy_info_fill,
	.find_snapshot = auxcap_find_snapshot_zero_tail,
	.decoder_new = toy_new,
	.decoder_next = toy_next,
	.decoder_free = toy_free,
	.dump = toy_dump,
	.alignment = TOY_REC_SIZE,
	.flags = AUXCAP_BACKEND_F_PER_THREAD,
};

/* What `auxcap --plugin` looks up (AUXCAP_BACKEND_PLUGIN_SYMBOL). */
__attribute__((visibility("default"))) const struct auxcap_backend_ops *
auxcap_backend_plugin(void)
{
	return &toy_ops;
}
