/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap-aux-events: the trace events of a perf.data capture as its backend's decode ops give
 * them, one line each, for the end-to-end tests to compare with perf's own decode.  It uses
 * only the public contract: the registry finds the backend by the AUXTRACE_INFO type (a
 * plug-in given with --plugin is loaded first), decoder_new/next/free get each stream: the
 * AUXTRACE payloads of one queue in full-trace mode, each snapshot on its own (with the
 * previous snapshot of the queue for overlap trimming) in snapshot mode.
 *
 *	auxcap-aux-events [--plugin PATH] [--backend NAME] FILE
 *
 * --backend decodes with the backend called NAME whatever the file's AUXTRACE_INFO type, without
 * the AUXTRACE_INFO words (they are another backend's).
 * Lines: "stream IDX cpu CPU tid TID bytes N", then per event
 * "KIND off=OFF ip=IP to=TO addr=ADDR tid=TID tsc=TSC time=TIME op=OP ev=EVENTS what=WHAT"
 * with the fields that are set.  Exit 0, or 1 with a message on stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxcap/backend.h"
#include "auxcap/perf_data.h"
#include "auxcap/record.h"
#include "grow.h"

struct stream {
	uint32_t idx, cpu, tid;
	uint8_t *buf;
	size_t len, cap;
};

static const char *kind_name(enum auxcap_trace_kind k)
{
	static const char *const names[] = { "?",      "branch", "insn", "block", "sample",
					     "enable", "disable", "gap", "other" };

	return (unsigned int)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

static void print_event(const struct auxcap_trace_event *ev)
{
	printf("%s off=%" PRIu64, kind_name(ev->kind), ev->offset);
	if (!(ev->flags & AUXCAP_TRACE_F_IP_UNKNOWN))
		printf(" ip=0x%" PRIx64, ev->ip);
	if (ev->kind == AUXCAP_TRACE_BRANCH || ev->to)
		printf(" to=0x%" PRIx64, ev->to);
	if (ev->flags & AUXCAP_TRACE_F_HAS_ADDR)
		printf(" addr=0x%" PRIx64, ev->addr);
	if (ev->flags & AUXCAP_TRACE_F_HAS_PHYS)
		printf(" pa=0x%" PRIx64, ev->phys_addr);
	if (ev->flags & AUXCAP_TRACE_F_HAS_TID)
		printf(" tid=%" PRId64, ev->tid);
	if (ev->flags & AUXCAP_TRACE_F_HAS_TSC)
		printf(" tsc=%" PRIu64, ev->tsc);
	if (ev->flags & AUXCAP_TRACE_F_HAS_TIME)
		printf(" time=%" PRIu64, ev->time);
	if (ev->kind == AUXCAP_TRACE_SAMPLE)
		printf(" op=0x%x ev=0x%" PRIx64 " lat=%u", ev->op, ev->events, ev->total_latency);
	if (ev->flags & AUXCAP_TRACE_F_PREDICTED)
		printf(" pred");
	if (ev->kind == AUXCAP_TRACE_GAP)
		printf(" err=%d", ev->err);
	if (ev->kind == AUXCAP_TRACE_OTHER)
		printf(" payload=%" PRIu64, ev->payload);
	if (ev->what)
		printf(" what=%s", ev->what);
	putchar('\n');
}

static int decode(const struct auxcap_backend_ops *b, struct auxcap_decode_ctx *ctx,
		  const struct stream *st)
{
	struct auxcap_trace_event ev;
	char err[512] = "";
	void *dec = NULL;
	int r;

	printf("stream %u cpu %d tid %d bytes %zu\n", st->idx, (int)st->cpu, (int)st->tid, st->len);
	ctx->errbuf = err;
	ctx->errlen = sizeof(err);
	ctx->cpu = (int)st->cpu;
	r = b->decoder_new(ctx, st->buf, st->len, &dec);
	if (r < 0) {
		fprintf(stderr, "auxcap-aux-events: %s: %s\n", b->name, *err ? err : strerror(-r));
		return r;
	}
	while ((r = b->decoder_next(dec, &ev)) == 1)
		print_event(&ev);
	b->decoder_free(dec);
	return r;
}

static int append(struct stream *st, const void *p, size_t n)
{
	if (!n)
		return 0;
	if (!p)
		return -EINVAL;
	if (auxcap_grow(&st->buf, &st->cap, st->len + n, 65536) < 0)
		return -ENOMEM;
	memcpy(st->buf + st->len, p, n);
	st->len += n;
	return 0;
}

int main(int argc, char **argv)
{
	struct auxcap_perf_reader_opts ro = { .sz = sizeof(ro) };
	struct auxcap_decode_ctx ctx = { .sz = sizeof(ctx) };
	struct auxcap_perf_time_conv tc;
	struct auxcap_perf_reader *rd = NULL;
	const struct auxcap_backend_ops *b;
	struct auxcap_perf_event ev;
	struct stream *streams = NULL;
	size_t nstreams = 0;
	uint64_t *info = NULL;
	uint32_t type = 0;
	bool snapshot = false, have_tc = false;
	char err[1024] = "";
	const char *force = NULL;
	int r, ret = 0, argi = 1;

	while (argi + 2 < argc) {
		if (!strcmp(argv[argi], "--plugin")) {
			if (auxcap_backend_load(argv[argi + 1], NULL, err, sizeof(err)) < 0) {
				fprintf(stderr, "auxcap-aux-events: %s\n", err);
				return 1;
			}
		} else if (!strcmp(argv[argi], "--backend")) {
			force = argv[argi + 1];
		} else {
			break;
		}
		argi += 2;
	}
	if (argi + 1 != argc) {
		fprintf(stderr, "usage: auxcap-aux-events [--plugin PATH] [--backend NAME] FILE\n");
		return 1;
	}
	ro.errbuf = err;
	ro.errbuf_size = sizeof(err);
	r = auxcap_perf_reader_open(argv[argi], &ro, &rd);
	if (r < 0) {
		fprintf(stderr, "auxcap-aux-events: %s: %s\n", argv[argi], *err ? err : strerror(-r));
		return 1;
	}
	while ((r = auxcap_perf_reader_next(rd, &ev)) == 1) {
		if (ev.rec.type == PERF_RECORD_AUX && (ev.rec.u.aux.flags & PERF_AUX_FLAG_OVERWRITE))
			snapshot = true;
		if (ev.rec.type == AUXCAP_PERF_RECORD_TIME_CONV) {
			tc = ev.u.time_conv;
			have_tc = true;
		}
		if (ev.rec.type == AUXCAP_PERF_RECORD_AUXTRACE_INFO) {
			type = ev.u.auxtrace_info.type;
			free(info);
			info = calloc(ev.u.auxtrace_info.nr + 1, sizeof(*info));
			if (!info) {
				r = -ENOMEM;
				break;
			}
			for (size_t i = 0; i < ev.u.auxtrace_info.nr; i++)
				info[i] = auxcap_get_u64(ev.u.auxtrace_info.priv, i);
			ctx.nr_info = ev.u.auxtrace_info.nr;
		}
		if (ev.rec.type == AUXCAP_PERF_RECORD_AUXTRACE) {
			struct stream *st = NULL, *ns;

			for (size_t k = 0; k < nstreams && !snapshot; k++)
				if (streams[k].idx == ev.u.auxtrace.idx)
					st = &streams[k];
			if (!st) {
				ns = realloc(streams, (nstreams + 1) * sizeof(*ns));
				if (!ns) {
					r = -ENOMEM;
					break;
				}
				streams = ns;
				st = &streams[nstreams++];
				memset(st, 0, sizeof(*st));
				st->idx = ev.u.auxtrace.idx;
				st->cpu = ev.u.auxtrace.cpu;
				st->tid = ev.u.auxtrace.tid;
			}
			r = append(st, ev.u.auxtrace.data, (size_t)ev.u.auxtrace.size);
			if (r < 0)
				break;
		}
	}
	if (r < 0) {
		fprintf(stderr, "auxcap-aux-events: reading %s: %s\n", argv[argi],
			r == -EBADMSG ? auxcap_perf_reader_error(rd) : strerror(-r));
		ret = 1;
		goto out;
	}
	b = force ? auxcap_backend_find(force) : auxcap_backend_for_type(type);
	if (!b || !b->decoder_new) {
		fprintf(stderr, "auxcap-aux-events: no backend decodes AUXTRACE type %u\n", type);
		ret = 1;
		goto out;
	}
	ctx.auxtrace_type = force ? 0 : type;
	ctx.info = force ? NULL : info;
	ctx.nr_info = force ? 0 : ctx.nr_info;
	ctx.time_conv = have_tc ? &tc : NULL;
	for (size_t k = 0; k < nstreams; k++) {
		ctx.snapshot_prev = NULL;
		ctx.snapshot_prev_len = 0;
		for (size_t j = k; snapshot && j-- > 0;)
			if (streams[j].idx == streams[k].idx) {
				ctx.snapshot_prev = streams[j].buf;
				ctx.snapshot_prev_len = streams[j].len;
				break;
			}
		if (decode(b, &ctx, &streams[k]) < 0) {
			ret = 1;
			break;
		}
	}
out:
	for (size_t k = 0; k < nstreams; k++)
		free(streams[k].buf);
	free(streams);
	free(info);
	auxcap_perf_reader_close(rd);
	return ret;
}
