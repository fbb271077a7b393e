/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One AUX queue: its pieces (AUXTRACE buffers) decoded in order by the backend, one decoder
 * per piece with the previous piece as context (auxcap_decode_ctx.prev/more), and the time
 * of every event.
 *
 * Times.  An event's hardware timestamp becomes perf time with the capture's TIME_CONV (or
 * the backend gives perf time itself).  A hardware timestamp dates a whole stretch of
 * events (Intel PT: everything decoded after a TSC packet until the next timing packet), so
 * the events of such a stretch, a "run", are held until the next timestamp is known and then
 * spread between the two by instruction count: event i of a run that started at t0, with the
 * next timestamp t1, gets t0 + (t1 - t0) * (instructions up to and including i) /
 * (instructions of the run + 1).  A run with a gap in it is not spread (time was lost: its
 * events stay at t0); a run is also closed, without spreading, by a gap that has its own
 * timestamp, the end of the trace, or when it reaches RUN_MAX events (memory stays bounded).
 * Events before the first timestamp of the queue take that timestamp.  Without any time
 * the events of a piece take the time of the last record written before the piece.  Keys
 * never go back within a queue.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxcap/log.h"
#include "auxcap/timeconv.h"
#include "decode_int.h"

#define RUN_MAX 16384 /* events held in one open run */

static size_t ring_count(const struct dqueue *q)
{
	return q->tail - q->head;
}

/* The first event not handed out yet (the head, or the one after a held head). */
static size_t first(const struct dqueue *q)
{
	return q->head + (q->held ? 1 : 0);
}

static struct qev *ring_at(const struct dqueue *q, size_t pos)
{
	return &q->ring[pos & (q->cap - 1)];
}

static int ring_reserve(struct dqueue *q)
{
	size_t cap, n = ring_count(q);
	struct qev *nr;

	if (n < q->cap)
		return 0;
	cap = q->cap ? 2 * q->cap : 256;
	nr = malloc(cap * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		nr[i] = *ring_at(q, q->head + i);
	q->ready -= q->head;
	q->tail = n;
	q->head = 0;
	free(q->ring);
	q->ring = nr;
	q->cap = cap;
	if (q->held && q->held_out)
		*q->held_out = &ring_at(q, q->head)->ev; /* the event handed out moved */
	return 0;
}

const struct qev *queue_at(const struct dqueue *q, size_t i)
{
	return first(q) + i < q->tail ? ring_at(q, first(q) + i) : NULL;
}

void queue_hold(struct dqueue *q, const struct auxcap_trace_event **out)
{
	q->held = true;
	q->held_out = out;
}

void queue_release(struct dqueue *q)
{
	if (q->held) {
		q->head++;
		q->held = false;
		q->held_out = NULL;
	}
}

void queue_fini(struct auxcap_decode *d, struct dqueue *q)
{
	if (q->dec && d->backend)
		d->backend->decoder_free(q->dec);
	q->dec = NULL;
	free(q->ring);
	q->ring = NULL;
	free(q->prev);
	q->prev = NULL;
	q->cap_prev = 0;
	q->cap = q->head = q->ready = q->tail = 0;
}

/* Perf time of @ev, if it has one (the last conversion is remembered: runs share it). */
static bool ev_clock(const struct auxcap_decode *d, struct dqueue *q,
		     const struct auxcap_trace_event *ev, uint64_t *ret)
{
	if (d->have_tc && (ev->flags & AUXCAP_TRACE_F_HAS_TSC)) {
		if (!q->c_have || q->c_tsc != ev->tsc) {
			q->c_tsc = ev->tsc;
			q->c_clock = auxcap_time_conv_to_ns(&d->tc, ev->tsc);
			q->c_have = true;
		}
		*ret = q->c_clock;
		return true;
	}
	if (ev->flags & AUXCAP_TRACE_F_HAS_TIME) {
		*ret = ev->time;
		return true;
	}
	return false;
}

static uint64_t hint(const struct dqueue *q)
{
	if (q->piece && q->piece <= q->info.nr_pieces)
		return q->pieces[q->piece - 1].time_hint;
	return q->last_key;
}

static void finalize(struct dqueue *q, struct qev *e, uint64_t key)
{
	if (key < q->last_key)
		key = q->last_key;
	e->key = key;
	q->last_key = key;
}

/*
 * Make the open run final.  With @have_next, @t1 is the perf time of the timestamp that ends
 * it; @spread says whether the run's events may be spread up to it.
 */
static void close_run(struct dqueue *q, bool have_next, uint64_t t1, bool spread)
{
	size_t n = q->tail - q->ready;

	if (n) {
		if (q->run_has_clock) {
			uint64_t t0 = q->run_clock, hi = t0, total = 0, cum = 0;

			if (spread && have_next && t1 > t0) {
				hi = t1;
				for (size_t i = 0; i < n; i++)
					total += ring_at(q, q->ready + i)->ev.ninsn;
			}
			for (size_t i = 0; i < n; i++) {
				struct qev *e = ring_at(q, q->ready + i);
				uint64_t key = t0;

				if (hi > t0) {
					cum += e->ev.ninsn;
					key = t0 + (uint64_t)((unsigned __int128)(hi - t0) * cum /
							      (total + 1));
				}
				e->run_lo = t0;
				e->run_hi = hi;
				e->has_time = true;
				finalize(q, e, key);
			}
			q->last_run_hi = hi;
		} else {
			uint64_t key = have_next ? t1 : hint(q);

			for (size_t i = 0; i < n; i++) {
				struct qev *e = ring_at(q, q->ready + i);

				e->run_lo = e->run_hi = key;
				e->has_time = false;
				finalize(q, e, key);
			}
		}
	}
	q->ready = q->tail;
	q->run_has_clock = false;
	q->run_gap = false;
}

/* Append the event decoded into the slot at the tail (see queue_peek()). */
static void push(struct dqueue *q)
{
	struct qev *e = ring_at(q, q->tail++);

	/* Provisional until the run is closed: the earliest it can be. */
	e->key = q->run_has_clock && q->run_clock > q->last_key ? q->run_clock : q->last_key;
	e->run_lo = e->run_hi = e->key;
	e->has_time = false;
}

/* The event in the slot at the tail joins the queue. */
static void add_event(struct auxcap_decode *d, struct dqueue *q)
{
	const struct auxcap_trace_event *ev = &ring_at(q, q->tail)->ev;
	uint64_t c = 0;
	bool has_clock = ev_clock(d, q, ev, &c);

	if (ev->kind == AUXCAP_TRACE_GAP && !has_clock) {
		/* Time was lost: the run it is in is not spread (and it takes that run's time). */
		q->run_gap = true;
	} else if (ev->kind == AUXCAP_TRACE_GAP) {
		/* Time was lost: the run before it is not spread over the gap. */
		close_run(q, false, 0, false);
		push(q);
		{
			struct qev *e = ring_at(q, q->tail - 1);
			uint64_t key = has_clock ? c : (q->last_key ? q->last_key : hint(q));

			e->run_lo = e->run_hi = key;
			e->has_time = has_clock;
			finalize(q, e, key);
		}
		q->ready = q->tail;
		return;
	}
	if (has_clock) {
		if (q->run_has_clock && c != q->run_clock)
			close_run(q, true, c, !q->run_gap);
		else if (!q->run_has_clock && q->tail != q->ready)
			close_run(q, true, c, false); /* events before the first timestamp */
		if (!q->run_has_clock) {
			q->run_has_clock = true;
			q->run_clock = c;
		}
	}
	push(q);
	if (q->tail - q->ready >= RUN_MAX)
		close_run(q, false, 0, false);
}

void queue_progress(struct auxcap_decode *d, struct dqueue *q, uint64_t pos, bool call)
{
	if (pos > q->info.bytes)
		pos = q->info.bytes;
	if (pos > q->prog) {
		d->prog_done += pos - q->prog;
		q->prog = pos;
	}
	if (call && d->opts.progress) {
		d->prog_tick = 0;
		d->opts.progress(d->opts.progress_arg, AUXCAP_DECODE_PHASE_DECODE, d->prog_done,
				 d->prog_total);
	}
}

/* Progress within the piece being decoded, from the stream offset of an event in it. */
static void piece_progress(struct auxcap_decode *d, struct dqueue *q, uint64_t offset)
{
	const struct dpiece *p = &q->pieces[q->piece - 1];
	uint64_t in = offset > p->offset ? offset - p->offset : 0;

	queue_progress(d, q, q->prog_base + (in < p->len ? in : p->len), true);
}

static int start_piece(struct auxcap_decode *d, struct dqueue *q)
{
	const struct dpiece *p = &q->pieces[q->piece];
	struct auxcap_decode_ctx ctx;
	char errbuf[256] = "";
	int r;

	decode_fill_ctx(d, q, &ctx, errbuf, sizeof(errbuf));
	ctx.stream_offset = p->offset;
	/* The pieces before it back to the last hole (all in the file mapping). */
	if (p->contiguous) {
		size_t first = q->piece;

		while (first > 0 && q->pieces[first].contiguous)
			first--;
		if (q->piece - first > q->cap_prev) {
			struct auxcap_trace_piece *np =
				realloc(q->prev, (q->piece - first) * sizeof(*np));

			if (!np)
				return -ENOMEM;
			q->prev = np;
			q->cap_prev = q->piece - first;
		}
		for (size_t k = first; k < q->piece; k++)
			q->prev[k - first] = (struct auxcap_trace_piece){ q->pieces[k].data,
									  (size_t)q->pieces[k].len };
		ctx.prev = q->prev;
		ctx.nr_prev = q->piece - first;
	}
	ctx.more = q->piece + 1 < q->info.nr_pieces && p[1].contiguous;
	/* A snapshot: the previous snapshot of the same buffer, for overlap trimming (only
	 * the first piece of a queue can overlap: the others continue it). */
	if (q->info.snapshot && q->piece == 0) {
		for (size_t k = (size_t)(q - d->queues); k-- > 0;) {
			const struct dqueue *o = &d->queues[k];
			size_t last = o->info.nr_pieces - 1;

			if (o->info.snapshot && o->info.idx == q->info.idx && o->info.nr_pieces) {
				ctx.snapshot_prev = o->pieces[last].data;
				ctx.snapshot_prev_len = (size_t)o->pieces[last].len;
				break;
			}
		}
	}
	/*
	 * The piece two back is decoded: its pages leave memory (read again from the file if a
	 * decoder looks back that far), so a long capture is not kept resident as it decodes.
	 */
	if (d->rd && q->piece >= 2)
		(void)auxcap_perf_reader_drop(d->rd, q->pieces[q->piece - 2].data,
					      (size_t)q->pieces[q->piece - 2].len);
	if (q->piece)
		q->prog_base += q->pieces[q->piece - 1].len;
	queue_progress(d, q, q->prog_base, true);
	q->piece++;
	r = d->backend->decoder_new(&ctx, p->data, (size_t)p->len, &q->dec);
	if (r < 0) {
		q->dec = NULL;
		snprintf(d->errtext, sizeof(d->errtext), "cannot start the %s decoder: %s",
			 d->backend->name, errbuf[0] ? errbuf : strerror(-r));
		return r;
	}
	return 0;
}

int queue_fill(struct auxcap_decode *d, struct dqueue *q, struct qev **ret)
{
	struct auxcap_trace_event *ev;
	int r;

	for (;;) {
		if (first(q) != q->ready) {
			*ret = ring_at(q, first(q));
			return 1;
		}
		if (q->done)
			return 0;
		if (q->error)
			return q->error;
		if (!q->dec) {
			if (q->piece >= q->info.nr_pieces) {
				close_run(q, false, 0, false);
				if (first(q) == q->ready) {
					q->done = true;
					queue_progress(d, q, q->info.bytes, true);
				}
				continue;
			}
			if (!q->run_has_clock)
				close_run(q, false, 0, false); /* timeless: the piece's record time */
			r = start_piece(d, q);
			if (r < 0) {
				q->error = r;
				return r;
			}
			continue;
		}
		/* Decode straight into the slot after the tail. */
		r = ring_reserve(q);
		if (r < 0) {
			q->error = r;
			return r;
		}
		ev = &ring_at(q, q->tail)->ev;
		r = d->backend->decoder_next(q->dec, ev);
		if (r < 0) {
			snprintf(d->errtext, sizeof(d->errtext), "decoding AUX queue %u stopped: %s",
				 q->info.idx, strerror(-r));
			q->error = r;
			return r;
		}
		if (r == 0) {
			d->backend->decoder_free(q->dec);
			q->dec = NULL;
			queue_progress(d, q, q->prog_base + q->pieces[q->piece - 1].len, true);
			continue;
		}
		if (d->opts.progress && ++d->prog_tick >= 4096)
			piece_progress(d, q, ev->offset);
		add_event(d, q);
	}
}
