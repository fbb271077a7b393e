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
 * events stay at t0).  A run where tracing stopped (a DISABLE: a system call) that holds the
 * time of an exec is spread up to that time only: its events ran in the old image, before the
 * exec, and are ordered before its COMM record (the sample windows still reach t1).  A run
 * is also closed, without spreading, by a gap that has its own
 * timestamp, the end of the trace, or when it reaches RUN_MAX events (memory stays bounded).
 * Events before the first timestamp of the queue take that timestamp.  A timestamp that
 * converts to a time before the clock's zero (wrapped: a torn or corrupt timestamp packet)
 * is not a time: the event is placed like one without.  Without any time
 * the events of a piece take the time of the last record written before the piece.  Keys
 * never go back within a queue.
 *
 * Memory.  The backend decodes a batch of events into the queue's (hot in cache); what joins
 * the ring is the part the stage works with (struct qev, 88 bytes), and an event with any
 * other field set is also kept whole in a second ring, in the same order.  The event handed
 * out is rebuilt from them (queue_expand()).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxcap/log.h"
#include "auxcap/timeconv.h"
#include "decode_int.h"
#include "sorted.h"

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

/* Room for @k more events after the tail. */
static int ring_reserve(struct dqueue *q, size_t k)
{
	size_t cap, n = ring_count(q);
	struct qev *nr;

	if (n + k <= q->cap)
		return 0;
	cap = q->cap ? 2 * q->cap : 256;
	while (cap < n + k)
		cap *= 2;
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
	return 0;
}

/* struct qev begins with the fields of struct auxcap_trace_event before @size, laid out the
 * same; an event whose later bytes are zero is rebuilt from them. */
#define SAME_FIELD(f)                                                                     \
	_Static_assert(offsetof(struct qev, f) == offsetof(struct auxcap_trace_event, f) && \
			       sizeof(((struct qev *)0)->f) ==                               \
				       sizeof(((struct auxcap_trace_event *)0)->f),          \
		       "struct qev's head must match struct auxcap_trace_event: " #f);    \
	_Static_assert(offsetof(struct auxcap_trace_head, f) ==                             \
			       offsetof(struct auxcap_trace_event, f),                      \
		       "struct auxcap_trace_head must match struct auxcap_trace_event: " #f)
SAME_FIELD(kind);
SAME_FIELD(flags);
SAME_FIELD(offset);
SAME_FIELD(tsc);
SAME_FIELD(time);
SAME_FIELD(ip);
SAME_FIELD(to);
SAME_FIELD(ninsn);
SAME_FIELD(branch);
_Static_assert(QEV_HEAD == offsetof(struct auxcap_trace_event, branch) +
				   sizeof(enum auxcap_branch_type),
	       "every field of struct auxcap_trace_event before size is in struct qev");
_Static_assert(sizeof(struct auxcap_trace_head) == QEV_HEAD,
	       "decoder_next_batch() writes QEV_HEAD bytes into each slot");
#define QEV_TAIL_WORDS ((sizeof(struct auxcap_trace_event) - QEV_HEAD) / 8)
_Static_assert(QEV_HEAD % 8 == 0 && (sizeof(struct auxcap_trace_event) - QEV_HEAD) % 8 == 0,
	       "the tail of struct auxcap_trace_event is whole words");

/* Whether every byte of @ev past QEV_HEAD is zero (padding too: a backend that leaves
 * garbage there only sends its events the slower way). */
static inline bool tail_is_zero(const struct auxcap_trace_event *ev)
{
	typedef uint64_t v2 __attribute__((vector_size(16)));
	const unsigned char *p = (const unsigned char *)ev + QEV_HEAD;
	v2 a, b, c;
	uint64_t w;

	_Static_assert(QEV_TAIL_WORDS == 13, "tail_is_zero() reads 13 words");
	/* six 16-byte words and one of 8 (written out: a loop is copied to the stack first) */
	memcpy(&a, p, 16);
	memcpy(&b, p + 16, 16);
	a |= b;
	memcpy(&b, p + 32, 16);
	memcpy(&c, p + 48, 16);
	b |= c;
	memcpy(&c, p + 64, 16);
	a |= b | c;
	memcpy(&b, p + 80, 16);
	a |= b;
	memcpy(&w, p + 96, 8);
	return !(a[0] | a[1] | w);
}

/*
 * Whether @ev is whole in its first QEV_HEAD bytes.  A BRANCH without F_HAS_TID has no field
 * past them with a meaning (@size and @raw are INSN's and BLOCK's, @tid goes with F_HAS_TID,
 * the rest SAMPLE's, GAP's and OTHER's), and unused fields are zero (backend.h): it is kept
 * compact without reading them, and is handed out with them zero.
 */
static inline bool ev_is_compact(const struct auxcap_trace_event *ev)
{
	return (ev->kind == AUXCAP_TRACE_BRANCH && !(ev->flags & AUXCAP_TRACE_F_HAS_TID)) ||
	       tail_is_zero(ev);
}

/* Keep a copy of the whole event @ev (the spill ring, in ring order). */
static int spill_push(struct dqueue *q, const struct auxcap_trace_event *ev)
{
	size_t n = q->spill_tail - q->spill_head;

	if (n == q->spill_cap) {
		size_t cap = q->spill_cap ? 2 * q->spill_cap : 64;
		struct auxcap_trace_event *ns = malloc(cap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			ns[i] = q->spill[(q->spill_head + i) & (q->spill_cap - 1)];
		free(q->spill);
		q->spill = ns;
		q->spill_cap = cap;
		q->spill_head = 0;
		q->spill_tail = n;
	}
	q->spill[q->spill_tail++ & (q->spill_cap - 1)] = *ev;
	return 0;
}

/* The whole event of the first event not handed out, which is @full. */
static const struct auxcap_trace_event *spill_first(const struct dqueue *q)
{
	return &q->spill[q->spill_head & (q->spill_cap - 1)];
}

/* Decoded event @ev into the slot at the tail (the ring has room); not counted yet. */
static int place(struct dqueue *q, const struct auxcap_trace_event *ev)
{
	struct qev *e = ring_at(q, q->tail);

	memcpy(e, ev, QEV_HEAD);
	e->quick = false;
	e->full = !ev_is_compact(ev);
	return e->full ? spill_push(q, ev) : 0;
}

const struct auxcap_trace_event *queue_expand(struct auxcap_decode *d, const struct dqueue *q,
					      const struct qev *e)
{
	struct auxcap_trace_event *out = &d->trace;

	if (e->full) {
		*out = *spill_first(q);
		out->branch = e->branch; /* the stage may have found it (branch_at()) */
		d->trace_full = true;
		return out;
	}
	if (d->trace_full) {
		memset(out, 0, sizeof(*out));
		d->trace_full = false;
	}
	memcpy(out, e, QEV_HEAD);
	return out;
}

int64_t queue_head_tid(const struct dqueue *q, const struct qev *e)
{
	return e->full ? spill_first(q)->tid : 0;
}

const struct qev *queue_at(const struct dqueue *q, size_t i)
{
	return first(q) + i < q->ready ? ring_at(q, first(q) + i) : NULL;
}

void queue_hold(struct dqueue *q)
{
	q->held = true;
}

void queue_release(struct dqueue *q)
{
	if (q->held) {
		if (ring_at(q, q->head)->full)
			q->spill_head++;
		q->head++;
		q->held = false;
	}
}

void queue_fini(struct auxcap_decode *d, struct dqueue *q)
{
	if (q->dec && d->backend)
		d->backend->decoder_free(q->dec);
	q->dec = NULL;
	free(q->ring);
	q->ring = NULL;
	free(q->spill);
	q->spill = NULL;
	q->spill_cap = q->spill_head = q->spill_tail = 0;
	free(q->prev);
	q->prev = NULL;
	q->cap_prev = 0;
	q->cap = q->head = q->ready = q->tail = 0;
}

/* A perf time at or past 2^63 ns (292 years) is a timestamp from before the clock's zero
 * that the conversion wrapped (a torn or corrupt one): not a time. */
#define TIME_WRAPPED(t) ((t) >> 63)

/* Perf time of @ev, if it has one (the last conversion is remembered: runs share it). */
static bool ev_clock(const struct auxcap_decode *d, struct dqueue *q, const struct qev *ev,
		     uint64_t *ret)
{
	if (d->have_tc && (ev->flags & AUXCAP_TRACE_F_HAS_TSC)) {
		if (!q->c_have || q->c_tsc != ev->tsc) {
			q->c_tsc = ev->tsc;
			q->c_clock = auxcap_time_conv_to_ns(&d->tc, ev->tsc);
			q->c_have = true;
		}
		*ret = q->c_clock;
		return !TIME_WRAPPED(q->c_clock);
	}
	if (ev->flags & AUXCAP_TRACE_F_HAS_TIME) {
		*ret = ev->time;
		return !TIME_WRAPPED(ev->time);
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
 * Exact floor(n / d) for any 64-bit n by a divisor d >= 2 fixed for a run: a multiplication
 * and shifts instead of a division per event (Granlund and Montgomery, "Division by
 * invariant integers using multiplication", PLDI 1994, figure 4.1: with l = ceil(log2 d),
 * m = floor(2^64 (2^l - d) / d) + 1, t = mulhi(m, n), q = (t + ((n - t) >> min(l, 1))) >>
 * max(l - 1, 0); l >= 1 here, so the first shift is by 1).
 */
struct udiv {
	uint64_t m;
	unsigned int s;
};

static void udiv_init(struct udiv *u, uint64_t d)
{
	unsigned int l = 64 - (unsigned int)__builtin_clzll(d - 1);

	u->m = (uint64_t)(((((unsigned __int128)1 << l) - d) << 64) / d) + 1;
	u->s = l - 1;
}

static uint64_t udiv_do(const struct udiv *u, uint64_t n)
{
	uint64_t t = (uint64_t)(((unsigned __int128)u->m * n) >> 64);

	return (t + ((n - t) >> 1)) >> u->s;
}

/* The first exec after @t0 (of the queue's process, or anyone's), UINT64_MAX if none. */
static uint64_t exec_after(const struct dqueue *q, uint64_t t0)
{
	size_t k = auxcap_upper_bound_u64(q->execs, q->nr_execs, t0);

	return k < q->nr_execs ? q->execs[k] : UINT64_MAX;
}

_Static_assert(offsetof(struct auxcap_cpu_task, since) == 0,
	       "a task list is searched by its leading key");

/* The first time after @t0 the queue's CPU changed process (UINT64_MAX: none, or not a
 * CPU's queue). */
static uint64_t switch_after(const struct dqueue *q, uint64_t t0)
{
	size_t k = auxcap_upper_bound_by_key(q->tasks, q->nr_tasks, sizeof(*q->tasks), t0);

	return k < q->nr_tasks ? q->tasks[k].since : UINT64_MAX;
}

/*
 * Make the open run final.  With @have_next, @t1 is the perf time of the timestamp that ends
 * it; @spread says whether the run's events may be spread up to it.
 */
static void close_run(struct dqueue *q, bool have_next, uint64_t t1, bool spread)
{
	size_t n = q->tail - q->ready;

	if (n && q->run_has_clock) {
		uint64_t t0 = q->run_clock, hi = t0, last = q->last_key;
		uint64_t span, total = q->run_insns, cum = 0, prod;

		if (spread && have_next && t1 > t0)
			hi = t1;
		span = hi - t0;
		if (span && q->run_untraced) {
			/* an exec while tracing was stopped, or the CPU going over to another
			 * task (whose time the next timestamp is): up to it only */
			uint64_t te = exec_after(q, t0), ts = switch_after(q, t0);

			if (ts < te)
				te = ts;
			if (te < hi)
				span = te - 1 - t0;
		}
		if (!span || !total || ring_at(q, q->tail - 1)->kind == AUXCAP_TRACE_DISABLE) {
			/* Every event at t0: no instruction before any of them (cum 0), or the
			 * run ends where tracing stops, untraced up to its end.  The time the
			 * events took is not known then, and is most often short next to that
			 * (the emulated PMU writes a timestamp as a system call enters the
			 * kernel, hardware a timing packet every few microseconds); spread, they
			 * took the untraced time too (seconds of a sleep).  At t0 as perf has
			 * them. */
			last = t0 > last ? t0 : last;
			for (size_t i = 0; i < n; i++) {
				struct qev *e = ring_at(q, q->ready + i);

				e->key = last;
				e->run_lo = t0;
				e->run_hi = hi;
			}
		} else if (!__builtin_mul_overflow(span, total, &prod)) {
			/* span * cum fits in 64 bits for every event: divide by reciprocal; the
			 * ring in its (at most two) contiguous parts */
			size_t pos = q->ready, left = n;
			struct udiv u;

			udiv_init(&u, total + 1);
			while (left) {
				struct qev *e = ring_at(q, pos), *end;
				size_t k = q->cap - (pos & (q->cap - 1));

				if (k > left)
					k = left;
				end = e + k;
				if (t0 >= last) {
					/* keys rise with the instructions: none goes below the last */
					for (; e != end; e++) {
						/* run_lo and run_hi side by side: one store of both */
						e->run_lo = t0;
						e->run_hi = hi;
						e->key = t0 + udiv_do(&u, span * e->key);
					}
					last = end[-1].key;
				} else {
					for (; e != end; e++) {
						uint64_t key = t0 + udiv_do(&u, span * e->key);

						e->run_lo = t0;
						e->run_hi = hi;
						last = key > last ? key : last;
						e->key = last;
					}
				}
				pos += k;
				left -= k;
			}
		} else {
			for (size_t i = 0; i < n; i++) {
				struct qev *e = ring_at(q, q->ready + i);
				uint64_t key;

				cum = e->key;
				key = t0 + (uint64_t)((unsigned __int128)span * cum / (total + 1));
				last = key > last ? key : last;
				e->key = last;
				e->run_lo = t0;
				e->run_hi = hi;
			}
		}
		q->last_key = last;
		q->last_run_hi = hi;
	} else if (n) {
		const struct dpiece *p = q->piece ? &q->pieces[q->piece - 1] : NULL;
		uint64_t key = have_next ? t1 : hint(q);
		/*
		 * No time in the trace (Intel BTS): the piece's bytes were written between the copy
		 * of the piece before (or the start of tracing) and its own copy, so its events are
		 * placed over that stretch by where they are in it.  An estimate, as the events say
		 * (has_time false); before, all of them were at the copy's time, seconds after most
		 * of them ran.
		 */
		bool by_place = !have_next && p && p->time_from && p->time_from < p->time_hint &&
				p->len;
		uint64_t lo = by_place ? p->time_from : 0, span = by_place ? p->time_hint - lo : 0;

		for (size_t i = 0; i < n; i++) {
			struct qev *e = ring_at(q, q->ready + i);

			if (by_place) {
				uint64_t at = e->offset > p->offset ? e->offset - p->offset : 0;

				if (at > p->len)
					at = p->len;
				key = lo + (uint64_t)((unsigned __int128)span * at / p->len);
			}
			e->run_lo = e->run_hi = key;
			finalize(q, e, key);
		}
	}
	q->ready = q->tail;
	q->run_has_clock = false;
	q->run_from_tsc = false;
	q->run_gap = false;
	q->run_untraced = false;
	q->run_insns = 0;
}

/* The event in the slot at the tail joins the queue (its key is set when its run closes; its
 * run has a time or not from the start). */
static void add_event(struct auxcap_decode *d, struct dqueue *q)
{
	struct qev *e = ring_at(q, q->tail), *ev = e;
	uint64_t c = 0;
	bool has_clock = ev_clock(d, q, ev, &c);

	if (ev->kind == AUXCAP_TRACE_GAP && !has_clock) {
		/* Time was lost: the run it is in is not spread (and it takes that run's time). */
		q->run_gap = true;
	} else if (ev->kind == AUXCAP_TRACE_GAP) {
		/* Time was lost: the run before it is not spread over the gap. */
		close_run(q, false, 0, false);
		q->tail++;
		e->run_lo = e->run_hi = c;
		e->has_time = true;
		finalize(q, e, c);
		q->ready = q->tail;
		return;
	} else if (has_clock && q->run_has_clock && c == q->run_clock) {
		/* one more event of the open run (another counter value, the same time) */
		q->run_untraced |= ev->kind == AUXCAP_TRACE_DISABLE;
		e->has_time = true;
		q->tail++;
		q->run_insns += ev->ninsn;
		e->key = q->run_insns;
		if (q->tail - q->ready >= RUN_MAX)
			close_run(q, false, 0, false);
		return;
	}
	if (has_clock) {
		if (q->run_has_clock)
			close_run(q, true, c, !q->run_gap);
		else if (q->tail != q->ready)
			close_run(q, true, c, false); /* events before the first timestamp */
		q->run_has_clock = true;
		q->run_clock = c;
		/* the run's timestamp, for the quick test in fill_to() */
		q->run_from_tsc = d->have_tc && (ev->flags & AUXCAP_TRACE_F_HAS_TSC);
		q->run_tsc = ev->tsc;
	}
	q->run_untraced |= ev->kind == AUXCAP_TRACE_DISABLE;
	e->has_time = q->run_has_clock; /* its run's time, whenever that run closes */
	q->tail++;
	q->run_insns += ev->ninsn;
	e->key = q->run_insns;
	if (q->tail - q->ready >= RUN_MAX)
		close_run(q, false, 0, false);
}

/*
 * The @n events decoded into the ring's slots at the tail, contiguous (their heads; those with
 * AUXCAP_TRACE_F_WHOLE whole in q->batch at the same index) join the queue.  The usual one,
 * a branch of the open run with its timestamp, only counts (its running instruction count
 * goes into @key for close_run()); the others take add_event().  The queue's counters are
 * kept in locals: the stores into the ring could alias them.
 */
static int add_heads(struct auxcap_decode *d, struct dqueue *q, size_t n)
{
	/* kind and flags as one little-endian word: a BRANCH with a TSC, no tid of its own,
	 * its IP known, nothing past its head */
	const uint64_t kf_mask = 0xffffffffull |
				 (uint64_t)(AUXCAP_TRACE_F_HAS_TSC | AUXCAP_TRACE_F_HAS_TID |
					    AUXCAP_TRACE_F_IP_UNKNOWN | AUXCAP_TRACE_F_WHOLE)
					 << 32;
	const uint64_t kf_want = (uint64_t)AUXCAP_TRACE_BRANCH |
				 (uint64_t)AUXCAP_TRACE_F_HAS_TSC << 32;
	struct qev *const first = ring_at(q, q->tail), *e = first, *const end = first + n;
	size_t tail = q->tail, lim = 0;
	uint64_t insns = q->run_insns, run_tsc = q->run_tsc;

	_Static_assert(sizeof(enum auxcap_trace_kind) == 4 &&
			       offsetof(struct auxcap_trace_event, flags) == 4,
		       "kind and flags make the first word of an event");
	/* the quick way only in a run timed by a TSC value, below RUN_MAX events */
	if (q->run_from_tsc)
		lim = q->ready + RUN_MAX - 1;
	for (; e != end; e++) {
		uint64_t kf;

		memcpy(&kf, e, sizeof(kf));
		if (tail < lim && (kf & kf_mask) == kf_want && e->tsc == run_tsc &&
		    e->branch != AUXCAP_BR_NONE) {
			/* The usual event: a branch of the open run, with its timestamp, that
			 * the quick way of auxcap_decode_next() can take. */
			insns += e->ninsn;
			e->key = insns;
			e->marks = QEV_MARKS_QUICK;
			tail++;
			continue;
		}
		e->quick = false;
		e->full = (e->flags & AUXCAP_TRACE_F_WHOLE) != 0;
		q->tail = tail;
		q->run_insns = insns;
		if (e->full) {
			int r;

			/* the batch's entries side by side with the ring's */
			struct auxcap_trace_event *x = &q->batch[e - first];

			e->flags &= ~(uint32_t)AUXCAP_TRACE_F_WHOLE;
			x->flags &= ~(uint32_t)AUXCAP_TRACE_F_WHOLE;
			r = spill_push(q, x);
			if (r < 0)
				return r;
		}
		add_event(d, q);
		tail = q->tail;
		insns = q->run_insns;
		run_tsc = q->run_tsc;
		lim = q->run_from_tsc ? q->ready + RUN_MAX - 1 : 0;
		/* the first branch of a run its own TSC opened: the quick way can take it too */
		e->quick = q->run_from_tsc && (kf & kf_mask) == kf_want && e->tsc == run_tsc &&
			   e->branch != AUXCAP_BR_NONE;
	}
	q->tail = tail;
	q->run_insns = insns;
	return 0;
}

/*
 * A batch of events: decoder_next_batch() writes their heads straight into the ring's slots
 * at the tail (as many as are contiguous there, at most QUEUE_DEC_BATCH); with decoder_next()
 * they are decoded into q->batch and their heads copied there.  Returns the number of events, and in *@ret_r the
 * backend's last answer (> 0: more to come, 0: the end, < 0: a failure after them).
 */
static size_t decode_batch(struct auxcap_decode *d, struct dqueue *q, int *ret_r)
{
	size_t n = 0;
	int r;

	size_t room = q->cap - (q->tail & (q->cap - 1)); /* slots before the ring's end */

	if (room > QUEUE_DEC_BATCH)
		room = QUEUE_DEC_BATCH;
	if (d->backend->decoder_next_batch) {
		r = d->backend->decoder_next_batch(q->dec, ring_at(q, q->tail), sizeof(struct qev),
						   q->batch, room);
		if (r > 0) {
			n = (size_t)r;
			r = 1;
		}
		*ret_r = r;
		return n;
	}
	do
		r = d->backend->decoder_next(q->dec, &q->batch[n]);
	while (r > 0 && ++n < room);
	for (size_t i = 0; i < n; i++) {
		struct auxcap_trace_event *x = &q->batch[i];

		if (!ev_is_compact(x))
			x->flags |= AUXCAP_TRACE_F_WHOLE;
		memcpy(ring_at(q, q->tail + i), x, QEV_HEAD);
	}
	*ret_r = r;
	return n;
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
	/* A snapshot's first buffer: the previous snapshot of the same buffer (the last one of
	 * the queue before it), for overlap trimming. */
	if (q->info.snapshot && q->piece == 0) {
		for (size_t k = (size_t)(q - d->queues); k-- > 0;) {
			const struct dqueue *o = &d->queues[k];

			if (o->info.snapshot && o->info.idx == q->info.idx && o->info.nr_pieces) {
				const struct dpiece *last = &o->pieces[o->info.nr_pieces - 1];

				ctx.snapshot_prev = last->data;
				ctx.snapshot_prev_len = (size_t)last->len;
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
	decode_queue_execs(d, q, &q->execs, &q->nr_execs);
	decode_queue_tasks(d, q, &q->tasks, &q->nr_tasks);
	q->piece++;
	r = d->backend->decoder_new(&ctx, p->data, (size_t)p->len, &q->dec);
	if (r < 0) {
		q->dec = NULL;
		/* (the backend's text cut to fit: gcc -O0 warns of a truncation otherwise) */
		snprintf(d->errtext, sizeof(d->errtext), "cannot start the %s decoder: %.200s",
			 d->backend->name, errbuf[0] ? errbuf : strerror(-r));
		return r;
	}
	return 0;
}

/*
 * Decode until the @i-th event after the head (0 = the first not handed out) is final: 1, 0
 * if the queue ends first, or an error.  @i, not a ring position: ring_reserve() moves the
 * events to the start of a bigger ring (a run longer than the ring, late in the stream), and
 * a position taken before that would point past the end of the queue.
 */
static int fill_to(struct auxcap_decode *d, struct dqueue *q, size_t i)
{
	struct auxcap_trace_event *ev;
	size_t n, pos;
	int r, r2;

	for (;;) {
		pos = first(q) + i;
		if (pos < q->ready)
			return 1;
		if (q->done)
			return 0;
		if (q->error)
			return q->error;
		if (q->lost_before && q->dec) {
			/* The trace between the previous snapshot of this buffer and this one: a gap
			 * at the snapshot's first timestamp. */
			q->lost_before = false;
			r = ring_reserve(q, 1);
			if (r < 0) {
				q->error = r;
				return r;
			}
			ev = &q->batch[0];
			memset(ev, 0, sizeof(*ev));
			ev->kind = AUXCAP_TRACE_GAP;
			ev->offset = q->info.nr_pieces ? q->pieces[0].offset : 0;
			ev->err = -ENODATA;
			ev->what = "trace lost before this snapshot (the buffer wrapped since the "
				   "previous one)";
			r = place(q, ev);
			if (r < 0) {
				q->error = r;
				return r;
			}
			add_event(d, q);
			continue;
		}
		if (!q->dec) {
			if (q->piece >= q->info.nr_pieces) {
				close_run(q, false, 0, false);
				if (pos >= q->ready) {
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
		/*
		 * A batch of events, then their entries and times: reading an event right after
		 * the backend wrote it waits for its stores.
		 */
		r = ring_reserve(q, QUEUE_DEC_BATCH);
		if (r < 0) {
			q->error = r;
			return r;
		}
		n = decode_batch(d, q, &r);
		if (n && d->opts.progress && (d->prog_tick += (uint32_t)n) >= 4096)
			piece_progress(d, q, ring_at(q, q->tail + n - 1)->offset);
		r2 = add_heads(d, q, n);
		if (r2 < 0) {
			q->error = r2;
			return r2;
		}
		if (r < 0) {
			snprintf(d->errtext, sizeof(d->errtext), "decoding AUX queue %u stopped: %s",
				 q->info.idx, strerror(-r));
			q->error = r; /* after the events before it */
		} else if (r == 0) {
			d->backend->decoder_free(q->dec);
			q->dec = NULL;
			queue_progress(d, q, q->prog_base + q->pieces[q->piece - 1].len, true);
		}
	}
}

int queue_fill(struct auxcap_decode *d, struct dqueue *q, struct qev **ret)
{
	int r = fill_to(d, q, 0);

	if (r == 1)
		*ret = ring_at(q, first(q));
	return r;
}

const struct qev *queue_final_at(struct auxcap_decode *d, struct dqueue *q, size_t i)
{
	return fill_to(d, q, i) == 1 ? ring_at(q, first(q) + i) : NULL;
}
