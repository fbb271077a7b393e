/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The merge: one stream of trace events and ordinary records in perf-time order.
 *
 * Cursors: one per queue (queue.c) and one over the ordinary records (sideband.c), in a
 * min-heap by the time of their next event (trace before records at equal times, then by
 * cursor).  Each step hands out the event of the first cursor and re-keys it.
 *
 * As events pass, per-CPU state (the thread running, from SWITCH, SWITCH_CPU_WIDE and
 * ITRACE_START records) attributes per-CPU trace to threads, and per-thread state is kept
 * from the trace:
 *   - a call stack: a call pushes a frame (its target, its call site); a return pops the
 *     frame whose call site precedes the return address (0 < to - call_site <= 15 bytes;
 *     frames above it are dropped), or the top frame when none matches; a return from the
 *     outermost known frame makes the function returned to the new outermost frame; a jump
 *     to the start of another function (a tail call, a PLT stub's jump to the function it
 *     resolved) makes that function the innermost frame's;
 *   - a history of the last branches (and trace stops), each with where its sequential run
 *     began and how to undo its effect on the stack;
 *   - the time spent per function (the innermost frame's), while tracing is on.
 * A counter sample takes the thread's context at the trace position where its IP runs (see
 * auxcap/decode.h): searched backwards in the history and forwards in its queue's next
 * events (decoded as far as needed), inside the sample's window; the stack there is the
 * current one with the history's effects undone, or with the effects of the queue's next
 * events applied.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "auxcap/log.h"
#include "decode_int.h"
#include "disasm.h"
#include "grow.h"

#define HIST_MIN 4096	 /* branches kept per thread (at least), power of two */
#define FWD_MAX 65536	 /* queued events searched forward for a sample's IP */
#define FTIME_MAX 16	 /* functions reported per sample */
#define STACK_MAX 4096	 /* deepest call stack kept (deeper calls drop the oldest) */

#define AUX_FLAG_TRUNCATED 0x01
#define AUX_FLAG_PARTIAL 0x04
#define AUX_FLAG_COLLISION 0x08

/* ---- the cursor heap ------------------------------------------------------------------- */

struct ckey {
	uint64_t key;
	bool record; /* the records' cursor: after trace at equal keys */
};

static struct ckey cursor_key(struct auxcap_decode *d, size_t c);

static bool cursor_less(struct auxcap_decode *d, size_t a, size_t b)
{
	struct ckey ka = cursor_key(d, a), kb = cursor_key(d, b);

	if (ka.key != kb.key)
		return ka.key < kb.key;
	if (ka.record != kb.record)
		return !ka.record;
	return a < b;
}

static void heap_down(struct auxcap_decode *d, size_t i)
{
	size_t c, x = d->heap[i];

	for (;;) {
		c = 2 * i + 1;
		if (c >= d->heap_n)
			break;
		if (c + 1 < d->heap_n && cursor_less(d, d->heap[c + 1], d->heap[c]))
			c++;
		if (!cursor_less(d, d->heap[c], x))
			break;
		d->heap[i] = d->heap[c];
		i = c;
	}
	d->heap[i] = x;
}

static void heap_up(struct auxcap_decode *d, size_t i)
{
	size_t x = d->heap[i];

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!cursor_less(d, x, d->heap[p]))
			break;
		d->heap[i] = d->heap[p];
		i = p;
	}
	d->heap[i] = x;
}

static void heap_remove_top(struct auxcap_decode *d)
{
	d->heap[0] = d->heap[--d->heap_n];
	if (d->heap_n)
		heap_down(d, 0);
}

/* The key of cursor @c's head (kept in d->ckey when the cursor is re-keyed). */
static struct ckey cursor_key(struct auxcap_decode *d, size_t c)
{
	struct ckey k = { d->ckey[c], c == d->nr_queues };

	return k;
}

/* Note cursor @c's head key. */
static void rekey(struct auxcap_decode *d, size_t c)
{
	if (c < d->nr_queues) {
		struct dqueue *q = &d->queues[c];

		d->ckey[c] = q->ring[(q->head + (q->held ? 1 : 0)) & (q->cap - 1)].key;
	} else {
		d->ckey[c] = d->sb.heap[0].time;
	}
}

/* ---- threads ---------------------------------------------------------------------------- */

static int thread_init(struct auxcap_decode *d, struct dthread *t, int32_t tid)
{
	uint32_t h = HIST_MIN;

	while (h < 2 * d->opts.last_branches)
		h *= 2;
	memset(t, 0, sizeof(*t));
	t->used = true;
	t->tid = tid;
	t->pid = -1;
	t->hcap = h;
	t->hist = t->hnext = t->hend = malloc(h * sizeof(*t->hist));
	t->cap_stack = 64;
	t->stack = malloc(t->cap_stack * sizeof(*t->stack));
	t->ft_cap = 64;
	t->ft = calloc(t->ft_cap, sizeof(*t->ft));
	t->ft_used = malloc(t->ft_cap / 2 * sizeof(*t->ft_used));
	if (!t->hist || !t->stack || !t->ft || !t->ft_used)
		return -ENOMEM;
	t->hend += h;
	return 0;
}

static void thread_fini(struct dthread *t)
{
	free(t->hist);
	free(t->stack);
	free(t->ft);
	free(t->ft_used);
}

/* The state of thread @tid (a negative tid: an unknown thread, one per queue). */
static struct dthread *thread_get(struct auxcap_decode *d, int32_t tid, bool create)
{
	size_t mask, i;

	if (d->last_thread && d->last_thread->tid == tid)
		return d->last_thread;
	if (create && (d->threads_n + 1) * 2 > d->threads_cap) {
		size_t cap = d->threads_cap ? 2 * d->threads_cap : 16;
		struct dthread *nt = calloc(cap, sizeof(*nt));

		if (!nt)
			return NULL;
		for (size_t k = 0; k < d->threads_cap; k++) {
			if (!d->threads[k].used)
				continue;
			for (i = (size_t)(uint32_t)d->threads[k].tid & (cap - 1); nt[i].used;
			     i = (i + 1) & (cap - 1))
				;
			nt[i] = d->threads[k];
		}
		free(d->threads);
		d->threads = nt;
		d->threads_cap = cap;
		d->last_thread = NULL;
	}
	if (!d->threads_cap)
		return NULL;
	mask = d->threads_cap - 1;
	for (i = (size_t)(uint32_t)tid & mask; d->threads[i].used; i = (i + 1) & mask)
		if (d->threads[i].tid == tid)
			return d->last_thread = &d->threads[i];
	if (!create)
		return NULL;
	if (thread_init(d, &d->threads[i], tid) < 0) {
		thread_fini(&d->threads[i]);
		memset(&d->threads[i], 0, sizeof(d->threads[i]));
		return NULL;
	}
	d->threads_n++;
	return d->last_thread = &d->threads[i];
}

void merge_fini(struct auxcap_decode *d)
{
	for (size_t i = 0; i < d->threads_cap; i++)
		if (d->threads[i].used)
			thread_fini(&d->threads[i]);
	free(d->threads);
	d->threads = NULL;
	d->threads_cap = d->threads_n = 0;
	if (d->sb_ready)
		sb_fini(&d->sb);
	free(d->heap);
	free(d->ckey);
	free(d->cpu_tid);
	free(d->err_hold);
	free(d->sstack);
	free(d->swork);
	free(d->sbranches);
	free(d->sftime);
	free(d->fwd);
	free(d->brc);
	free(d->jmpc);
	auxcap_disasm_free(d->disasm);
}

/* ---- stacks ---------------------------------------------------------------------------- */

struct stack {
	struct auxcap_decode_frame *f; /* outermost first */
	uint32_t depth, cap;
};

static int stack_push(struct stack *s, const struct auxcap_decode_frame *fr)
{
	if (s->depth == s->cap) {
		if (s->cap >= STACK_MAX) {
			/* Runaway recursion: forget the outermost frame. */
			memmove(s->f, s->f + 1, (s->depth - 1) * sizeof(*s->f));
			s->depth--;
		} else {
			uint32_t cap = s->cap ? 2 * s->cap : 64;
			struct auxcap_decode_frame *nf = realloc(s->f, cap * sizeof(*nf));

			if (!nf)
				return -ENOMEM;
			s->f = nf;
			s->cap = cap;
		}
	}
	s->f[s->depth++] = *fr;
	return 0;
}

static inline bool returns_to(const struct auxcap_decode_frame *fr, uint64_t to)
{
	return fr->call_site && to > fr->call_site && to - fr->call_site <= 15;
}

/*
 * Apply a return to @to at @time on @s (see the top of the file).  Fills @sc, and the undo
 * record @h when given.
 */
static void stack_return(struct stack *s, uint64_t to, uint64_t time,
			 struct auxcap_decode_stack_change *sc, struct hist *h)
{
	if (s->depth >= 2) {
		uint32_t i = s->depth - 1, k;

		while (i >= 1 && !returns_to(&s->f[i], to))
			i--;
		if (i == 0)
			i = s->depth - 1; /* no frame matches: the top one ends */
		k = s->depth - i;
		if (h) {
			h->undo = k == 1 ? UNDO_POPPED : UNDO_LOST;
			h->saved = s->f[s->depth - 1];
		}
		s->depth = i;
		sc->popped += k;
		return;
	}
	if (h) {
		h->undo = UNDO_REBASED;
		h->saved = s->f[0];
	}
	s->f[0] = (struct auxcap_decode_frame){ to, 0, time };
	s->depth = 1;
	sc->popped += 1;
	sc->rebased = true;
}

/* ---- per-function time ------------------------------------------------------------------- */

/* Where function @func's slot of per-function time is looked for first. */
static inline uint32_t ftime_hash(uint64_t func)
{
	return (uint32_t)((func * 0x9e3779b97f4a7c15ull) >> 40);
}

/* Add @ns (> 0) to @func's time, past the two remembered slots (ftime_account()). */
static void ftime_add_slow(struct dthread *t, uint64_t func, uint64_t ns)
{
	uint32_t mask, i;

	if ((t->ft_n + 1) * 2 > t->ft_cap) {
		uint32_t cap = 2 * t->ft_cap;
		struct ftime_slot *nf = calloc(cap, sizeof(*nf));
		uint32_t *nu = malloc(cap / 2 * sizeof(*nu));

		if (!nf || !nu) {
			free(nf);
			free(nu);
			return;
		}
		/* the slots in use move in the order they were claimed, so stay in that order */
		for (uint32_t k = 0; k < t->ft_n; k++) {
			const struct ftime_slot *o = &t->ft[t->ft_used[k]];

			for (i = ftime_hash(o->func) & (cap - 1); nf[i].ns; i = (i + 1) & (cap - 1))
				;
			nf[i] = *o;
			nu[k] = i;
		}
		free(t->ft);
		free(t->ft_used);
		t->ft = nf;
		t->ft_used = nu;
		t->ft_cap = cap;
		t->ft_last_valid = 0;
	}
	mask = t->ft_cap - 1;
	for (i = ftime_hash(func) & mask; t->ft[i].ns;
	     i = (i + 1) & mask)
		if (t->ft[i].func == func)
			break;
	if (!t->ft[i].ns) {
		t->ft[i].func = func;
		t->ft_used[t->ft_n++] = i;
	}
	t->ft[i].ns += ns;
	t->ft_last_func[1] = t->ft_last_func[0];
	t->ft_last_slot[1] = t->ft_last_slot[0];
	t->ft_last_func[0] = func;
	t->ft_last_slot[0] = i;
	t->ft_last_valid = (t->ft_last_valid << 1 | 1) & 3;
}

/* Account the time up to @time to the innermost frame's function. */
static inline __attribute__((always_inline)) void ftime_account(struct dthread *t, uint64_t time)
{
	if (time <= t->ft_since)
		return;
	if (t->depth) {
		uint64_t func = t->stack[t->depth - 1].func, ns = time - t->ft_since;

		t->trace_ns += ns;
		/* Calls and returns alternate between a few functions: two remembered slots. */
		if ((t->ft_last_valid & 1) && t->ft_last_func[0] == func)
			t->ft[t->ft_last_slot[0]].ns += ns;
		else if ((t->ft_last_valid & 2) && t->ft_last_func[1] == func)
			t->ft[t->ft_last_slot[1]].ns += ns;
		else
			ftime_add_slow(t, func, ns);
	}
	t->ft_since = time;
}

/* ---- trace events ---------------------------------------------------------------------- */

/* A new history entry; the caller sets from, to, seq_from, seq_start, time, type. */
static inline struct hist *hist_push(struct dthread *t)
{
	struct hist *h = t->hnext;

	if (__builtin_expect(++t->hnext == t->hend, 0)) {
		t->hnext = t->hist;
		t->hwrapped = true;
	}
	h->undo = UNDO_NONE;
	return h;
}

/* The @k-th newest history entry (0: newest; k < hist_n()). */
static struct hist *hist_at(const struct dthread *t, uint32_t k)
{
	return &t->hist[((size_t)(t->hnext - t->hist) - 1 - k) & (t->hcap - 1)];
}

/* How many history entries are kept. */
static uint32_t hist_n(const struct dthread *t)
{
	return t->hwrapped ? t->hcap : (uint32_t)(t->hnext - t->hist);
}

/* A tail call to @to at @now: the innermost frame @top becomes @to's (its call site stays: it
 * returns where the frame would have), history entry @h says how to undo it. */
static inline __attribute__((always_inline)) void
tail_call(struct auxcap_decode_frame *top, struct hist *h, uint64_t to, uint64_t now)
{
	h->undo = UNDO_RETARGETED;
	h->saved = *top;
	top->func = to;
	top->time = now;
}

/* A BRANCH event on thread @t (see apply_trace()). */
static inline __attribute__((always_inline)) void
apply_branch(struct dthread *t, const struct qev *ev, uint64_t now, bool ctx, bool tail,
	     struct auxcap_decode_stack_change *sc)
{
	struct hist *h = ctx ? hist_push(t) : &t->scratch;

	h->from = ev->ip;
	h->to = ev->to;
	h->seq_from = t->seq_from;
	h->seq_start = t->seq_start;
	h->time = now;
	h->type = (uint8_t)ev->branch;
	if (ev->branch == AUXCAP_BR_CALL && t->depth) {
		struct auxcap_decode_frame fr = { ev->to, ev->ip, now };

		if (ctx)
			ftime_account(t, now);
		if (t->depth < t->cap_stack) {
			t->stack[t->depth++] = fr;
			h->undo = UNDO_PUSHED;
			sc->pushed = true;
		} else {
			struct stack s = { t->stack, t->depth, t->cap_stack };

			if (stack_push(&s, &fr) == 0) {
				h->undo = UNDO_PUSHED;
				sc->pushed = true;
			}
			t->stack = s.f;
			t->depth = s.depth;
			t->cap_stack = s.cap;
		}
	} else if (ev->branch == AUXCAP_BR_RETURN && t->depth) {
		if (ctx)
			ftime_account(t, now);
		if (t->depth >= 2 && returns_to(&t->stack[t->depth - 1], ev->to)) {
			/* the top frame's call returns */
			h->undo = UNDO_POPPED;
			h->saved = t->stack[--t->depth];
			sc->popped = 1;
		} else {
			struct stack s = { t->stack, t->depth, t->cap_stack };

			stack_return(&s, ev->to, now, sc, h);
			t->depth = s.depth;
		}
	} else if (tail && t->depth && t->stack[t->depth - 1].func != ev->to) {
		if (ctx)
			ftime_account(t, now);
		tail_call(&t->stack[t->depth - 1], h, ev->to, now);
		sc->popped = 1;
		sc->pushed = true;
	}
	t->seq_from = ev->flags & AUXCAP_TRACE_F_IP_UNKNOWN ? 0 : ev->to;
	t->seq_start = false;
	sc->depth = t->depth;
}

/*
 * Apply trace event @e to thread @t: its stack, and, with @ctx (the capture has samples to
 * give context to), its branch history and per-function time.  Calls and returns that
 * touch only the top of the stack (nearly all) are done in place.  @tail: @e is a jump to
 * the start of a function (jump_to_start()).
 */
static void apply_trace(struct dthread *t, const struct qev *e, bool ctx, bool tail,
			struct auxcap_decode_stack_change *sc)
{
	const struct qev *ev = e;
	uint64_t now = e->key;
	struct hist *h;

	sc->popped = 0;
	sc->pushed = false;
	sc->rebased = false;
	t->has_trace = true;
	t->last_time = now;
	t->last_run_lo = e->run_lo;
	t->last_run_hi = e->run_hi;
	if (t->ft_paused) {
		t->ft_since = now;
		t->ft_paused = false;
	}
	if (!t->depth && (ev->kind == AUXCAP_TRACE_BRANCH || ev->kind == AUXCAP_TRACE_ENABLE ||
			  ev->kind == AUXCAP_TRACE_DISABLE || ev->kind == AUXCAP_TRACE_INSN) &&
	    !(ev->flags & AUXCAP_TRACE_F_IP_UNKNOWN)) {
		struct stack s = { t->stack, t->depth, t->cap_stack };
		struct auxcap_decode_frame base = { ev->ip, 0, now };

		(void)stack_push(&s, &base);
		t->stack = s.f;
		t->depth = s.depth;
		t->cap_stack = s.cap;
		t->ft_since = now;
	}
	switch (ev->kind) {
	case AUXCAP_TRACE_BRANCH:
		apply_branch(t, ev, now, ctx, tail, sc);
		return;
	case AUXCAP_TRACE_ENABLE:
		t->seq_from = ev->flags & AUXCAP_TRACE_F_IP_UNKNOWN ? 0 : ev->ip;
		t->seq_start = true;
		break;
	case AUXCAP_TRACE_DISABLE:
		h = ctx ? hist_push(t) : &t->scratch;
		h->from = ev->ip;
		h->to = 0;
		h->seq_from = t->seq_from;
		h->seq_start = t->seq_start;
		h->time = now;
		h->type = AUXCAP_BR_NONE;
		t->seq_from = 0;
		ftime_account(t, now);
		t->ft_paused = true;
		break;
	case AUXCAP_TRACE_GAP:
		t->seq_from = 0;
		ftime_account(t, now);
		t->ft_paused = true;
		break;
	default:
		break;
	}
	sc->depth = t->depth;
}

#define BRC_SIZE 4096 /* branch classes cached, power of two */

/*
 * The type of the branch at @from, for backends that do not know it (Intel BTS): from the
 * instruction in the binary, disassembled.  AUXCAP_BR_NONE if it cannot be read.
 */
/*
 * The symbols answer for time @t from now on: the mappings in place then (a process that
 * exec'd had others before).  The quick way stops where they change (set_fast_window()).
 */
static inline void sym_time(struct auxcap_decode *d, uint64_t t)
{
	if (t < d->sym_lo || t >= d->sym_hi)
		auxcap_symbols_set_time(d->syms, t, &d->sym_lo, &d->sym_hi);
}

static enum auxcap_branch_type branch_at(struct auxcap_decode *d, int32_t pid, uint64_t from)
{
	size_t slot = (size_t)((from * 0x9e3779b97f4a7c15ull) >> 52) & (BRC_SIZE - 1);
	enum auxcap_branch_type t = AUXCAP_BR_NONE;
	uint8_t code[16];
	char text[160];
	int n;

	if (!d->disasm_tried) {
		d->disasm_tried = true;
		d->brc = calloc(BRC_SIZE, sizeof(*d->brc));
		if (!d->brc || auxcap_disasm_new(&d->disasm) < 0)
			d->disasm = NULL;
	}
	if (!d->disasm || !d->brc)
		return AUXCAP_BR_NONE;
	if (d->brc[slot].valid && d->brc[slot].addr == from)
		return (enum auxcap_branch_type)d->brc[slot].type;
	n = auxcap_symbols_read(d->syms, pid, from, code, sizeof(code));
	if (n > 0 && auxcap_disasm_insn(d->disasm, 64, code, (size_t)n, from, text, sizeof(text)) > 0) {
		/* Intel syntax mnemonics (capstone), prefixes first ("bnd jmp", "notrack call"). */
		const char *m = text;

		while (!strncmp(m, "bnd ", 4) || !strncmp(m, "notrack ", 8) || !strncmp(m, "rep ", 4))
			m = strchr(m, ' ') + 1;
		if (!strncmp(m, "call", 4))
			t = AUXCAP_BR_CALL;
		else if (!strncmp(m, "ret", 3))
			t = AUXCAP_BR_RETURN;
		else if (!strncmp(m, "jmp", 3) || !strncmp(m, "ljmp", 4))
			t = AUXCAP_BR_JUMP;
		else if (m[0] == 'j' || !strncmp(m, "loop", 4))
			t = AUXCAP_BR_COND;
		else if (!strncmp(m, "syscall", 7) || !strncmp(m, "sysenter", 8) ||
			 !strncmp(m, "int", 3))
			t = AUXCAP_BR_SYSCALL;
		else if (!strncmp(m, "sysret", 6) || !strncmp(m, "sysexit", 7) ||
			 !strncmp(m, "iret", 4))
			t = AUXCAP_BR_SYSRET;
	}
	d->brc[slot] = (struct br_class){ from, (uint8_t)t, true };
	return t;
}

#define JMPC_SIZE 4096 /* jump targets cached, power of two */

static inline size_t jmpc_slot(uint64_t to)
{
	return (size_t)((to * 0x9e3779b97f4a7c15ull) >> 52) & (JMPC_SIZE - 1);
}

/* The jump cache answers for the symbols as they are now: emptied when they change. */
static void jmpc_check(struct auxcap_decode *d)
{
	uint32_t gen = auxcap_symbols_gen(d->syms);

	if (gen != d->jmpc_gen || d->sym_lo != d->jmpc_lo) {
		memset(d->jmpc, 0xff, JMPC_SIZE * sizeof(*d->jmpc));
		d->jmpc_gen = gen;
		d->jmpc_lo = d->sym_lo;
	}
}

/*
 * Whether a jump to @to in process @pid enters a function at its start, which makes it a
 * tail call: a PLT stub's jump to the function it resolved, a compiler's tail call.  A
 * ".cold" part that a compiler split off a function is not a function of its own.  Cached
 * in d->jmpc, which the quick way of auxcap_decode_next() reads (jump_plain()).
 */
static bool jump_to_start(struct auxcap_decode *d, int32_t pid, uint64_t to)
{
	struct jmp_class *c = &d->jmpc[jmpc_slot(to)];
	const char *name = NULL;
	uint64_t off = 1;

	if (c->to == to && c->pid == pid)
		return c->start;
	c->to = to;
	c->pid = pid;
	c->start = auxcap_symbols_lookup(d->syms, pid, to, &name, &off, NULL) == 1 && off == 0 &&
		   name && !strstr(name, ".cold");
	return c->start;
}

static int emit_trace(struct auxcap_decode *d, size_t c, struct qev *e)
{
	struct dqueue *q = &d->queues[c];
	struct auxcap_decode_event *out = &d->out;
	struct dthread *t;
	int32_t tid = -1;

	if (q->info.tid >= 0)
		tid = q->info.tid;
	else if (q->info.cpu >= 0 && (size_t)q->info.cpu < d->nr_cpus)
		tid = d->cpu_tid[q->info.cpu];
	if (e->flags & AUXCAP_TRACE_F_HAS_TID)
		tid = (int32_t)queue_head_tid(q, e);
	/* The thread's process and name, looked up again only when they may have changed. */
	if (tid != q->c_tid || d->tid_gen != q->c_gen) {
		struct tid_info *ti = decode_tid(d, tid, false);

		q->c_tid = tid;
		q->c_gen = d->tid_gen;
		q->c_pid = q->info.tid >= 0 && tid == q->info.tid ? q->info.pid : ti ? ti->pid : -1;
		q->c_comm = ti && ti->comm[0] ? ti->comm : NULL;
	}
	sym_time(d, e->key);
	if (e->kind == AUXCAP_TRACE_BRANCH && e->branch == AUXCAP_BR_NONE)
		e->branch = branch_at(d, q->c_pid, e->ip);
	out->kind = AUXCAP_DECODE_TRACE;
	out->time = e->key;
	out->has_time = e->has_time;
	out->cpu = q->info.cpu;
	out->pid = q->c_pid;
	out->tid = tid;
	out->comm = q->c_comm;
	out->queue = (int32_t)c;
	out->trace = queue_expand(d, q, e); /* valid until the next call */
	if (d->out_record) { /* the record fields of the previous event */
		out->rec = NULL;
		out->evsel = NULL;
		out->ctx = NULL;
		out->loss = NULL;
		out->lost = 0;
		out->auxtrace_error = NULL;
		d->out_record = false;
	}
	tid = tid >= 0 ? tid : -1000 - (int32_t)c;
	t = d->last_thread && d->last_thread->tid == tid ? d->last_thread : thread_get(d, tid, true);
	if (!t)
		return -ENOMEM;
	t->pid = q->c_pid;
	t->queue = q;
	jmpc_check(d);
	apply_trace(t, e, d->want_context,
		    e->kind == AUXCAP_TRACE_BRANCH && e->branch == AUXCAP_BR_JUMP && t->depth &&
			    !(e->flags & AUXCAP_TRACE_F_IP_UNKNOWN) && jump_to_start(d, t->pid, e->to),
		    &out->stack);
	/* The queue's next events go to the same thread until a record comes (the quick way of
	 * auxcap_decode_next()). */
	d->fast_t = e->flags & AUXCAP_TRACE_F_HAS_TID ? NULL : t;
	if (!e->has_time && !d->have_tc && !d->info.raw && !d->warned_timeless) {
		d->warned_timeless = true;
		d->info.timeless = true;
		auxcap_log(AUXCAP_LOG_WARN,
			   "the capture has no time conversion (PERF_RECORD_TIME_CONV): trace is "
			   "placed over the time its AUX buffer was written in, not at its own time");
	}
	d->info.trace_events++;
	if (e->kind == AUXCAP_TRACE_GAP)
		d->info.gaps++;
	return 0;
}

/*
 * Thread @t exec'd at @time: the frames of the old image end (@sc says how many), and a
 * sample after this is not taken back before it.  The new image's first traced event starts
 * the stack again.
 */
static void thread_exec(struct auxcap_decode *d, struct dthread *t, uint64_t time,
			struct auxcap_decode_stack_change *sc)
{
	if (d->want_context) {
		struct hist *h = hist_push(t);

		h->from = h->to = h->seq_from = 0;
		h->seq_start = false;
		h->time = time;
		h->type = AUXCAP_BR_NONE;
		h->undo = UNDO_LOST;
	}
	if (!t->ft_paused) {
		ftime_account(t, time);
		t->ft_paused = true;
	}
	sc->popped = t->depth;
	sc->depth = 0;
	t->depth = 0;
	t->seq_from = 0;
	t->seq_start = false;
}

/* ---- samples --------------------------------------------------------------------------- */

static bool in_run(uint64_t seq_from, uint64_t end, uint64_t ip)
{
	return seq_from && ip >= seq_from && ip <= end;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static int cmp_ftime(const void *a, const void *b)
{
	const struct auxcap_decode_ftime *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return x->func < y->func ? -1 : x->func > y->func;
}

/* Fill d->sctx for a sample at @ts with IP @ip of thread @t. */
static int sample_context(struct auxcap_decode *d, struct dthread *t, uint64_t ip, uint64_t ts)
{
	struct auxcap_decode_sample_ctx *x = &d->sctx;
	struct dqueue *q = t->queue;
	const struct qev *head = q ? queue_final_at(d, q, 0) : NULL;
	uint64_t lo = t->last_run_lo, hi = t->last_run_hi, best_seq = 0;
	struct stack s = { NULL, 0, 0 };
	long kb = -1, jf = -1;
	size_t nfwd = 0, nb = 0;
	uint64_t seq;
	bool seq_start, fwd_start = false;
	int r;

	memset(x, 0, sizeof(*x));
	jmpc_check(d); /* jump_to_start() below */
	if (hi < ts)
		hi = ts;
	if (lo > ts)
		lo = ts;
	/* The timestamps around the sample: the last one before it (the thread's last event's),
	 * and the first one after it (its queue's next event's, or the end of that run).  A
	 * sample at the very time of a timestamp belongs to both runs: an Intel PT decoder reads
	 * a timing packet before it hands out the branch whose packet came just before it, so
	 * that branch and the code it goes to are timed in the run the timestamp starts. */
	if (head) {
		uint64_t after = head->run_lo > ts ? head->run_lo : head->run_hi;

		if (after > hi)
			hi = after;
	}
	/* widened by the slop, saturating: a capture's times can be anything up to UINT64_MAX */
	lo = lo > AUXCAP_DECODE_ALIGN_SLOP_NS ? lo - AUXCAP_DECODE_ALIGN_SLOP_NS : 0;
	hi = hi < UINT64_MAX - AUXCAP_DECODE_ALIGN_SLOP_NS ? hi + AUXCAP_DECODE_ALIGN_SLOP_NS
							  : UINT64_MAX;
	x->window_lo = lo;
	x->window_hi = hi;

	/* Backwards: the newest run of sequential code holding the IP. */
	for (uint32_t k = 0, hn = hist_n(t); k < hn; k++) {
		const struct hist *h = hist_at(t, k);

		if (h->time < lo)
			break;
		if (in_run(h->seq_from, h->from, ip)) {
			kb = (long)k;
			break;
		}
		if (h->undo == UNDO_LOST)
			break; /* the stack cannot be taken back past it */
	}
	/* Forwards: the events of its queue after the current one, decoded as far as needed to
	 * know their times. */
	seq = t->seq_from; /* 0 if not known, as in the thread */
	seq_start = t->seq_start;
	for (size_t j = 0; q && j < FWD_MAX; j++) {
		const struct qev *e = queue_final_at(d, q, j); /* the ring may move: no pointers kept */

		if (!e)
			break;
		/* A run that starts inside the window counts even if it ends after it (the
		 * backward search takes runs that end inside it): a sample taken while its
		 * thread is in the kernel has the IP it resumes at, where the trace restarts. */
		if (e->kind == AUXCAP_TRACE_BRANCH || e->kind == AUXCAP_TRACE_DISABLE) {
			if (in_run(seq, e->ip, ip)) {
				jf = (long)j;
				fwd_start = seq_start;
				break;
			}
			if (e->key > hi)
				break;
			seq = e->kind == AUXCAP_TRACE_BRANCH &&
					      !(e->flags & AUXCAP_TRACE_F_IP_UNKNOWN)
				      ? e->to
				      : 0;
			seq_start = false;
		} else if (e->kind == AUXCAP_TRACE_ENABLE) {
			if (e->key > hi)
				break;
			seq = e->flags & AUXCAP_TRACE_F_IP_UNKNOWN ? 0 : e->ip;
			seq_start = true;
		} else if (e->kind == AUXCAP_TRACE_GAP) {
			seq = 0;
		}
	}
	if (kb >= 0 && jf >= 0) {
		if (absdiff(queue_at(q, (size_t)jf)->key, ts) < absdiff(hist_at(t, (uint32_t)kb)->time, ts))
			kb = -1;
		else
			jf = -1;
	}

	/* The stack there: a copy of the current one, taken back or forward. */
	r = auxcap_grow_array(&d->sstack, &d->sstack_cap, t->depth + 1, 64, sizeof(*d->sstack));
	if (r < 0)
		return r;
	/* (the scratch kept from sample to sample: stack_push() may grow it) */
	if (d->swork_cap < t->depth + 1) {
		uint32_t cap = t->depth + 64;
		struct auxcap_decode_frame *nf = realloc(d->swork, cap * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		d->swork = nf;
		d->swork_cap = cap;
	}
	s.f = d->swork;
	s.cap = d->swork_cap;
	memcpy(s.f, t->stack, t->depth * sizeof(*s.f));
	s.depth = t->depth;
	if (kb >= 0) {
		for (long k = 0; k <= kb; k++) {
			const struct hist *h = hist_at(t, (uint32_t)k);

			if (h->undo == UNDO_PUSHED && s.depth)
				s.depth--;
			else if (h->undo == UNDO_POPPED)
				r = stack_push(&s, &h->saved);
			else if (h->undo == UNDO_REBASED && s.depth)
				s.f[0] = h->saved;
			else if (h->undo == UNDO_RETARGETED && s.depth)
				s.f[s.depth - 1] = h->saved;
			if (r < 0)
				goto out;
		}
		best_seq = hist_at(t, (uint32_t)kb)->seq_from;
		x->seq_from_start = hist_at(t, (uint32_t)kb)->seq_start;
		x->delta_ns = (int64_t)(hist_at(t, (uint32_t)kb)->time - ts);
	} else if (jf >= 0) {
		r = auxcap_grow_array(&d->fwd, &d->fwd_cap, (size_t)jf + 1, 64, sizeof(*d->fwd));
		if (r < 0)
			goto out;
		seq = t->seq_from;
		for (long j = 0; j < jf; j++) {
			const struct qev *e = queue_at(q, (size_t)j);
			struct auxcap_decode_stack_change sc = { 0 };

			if (e->kind == AUXCAP_TRACE_BRANCH) {
				struct hist *h = &d->fwd[nfwd++];

				h->from = e->ip;
				h->to = e->to;
				h->time = e->key;
				h->type = (uint8_t)e->branch;
				if (e->branch == AUXCAP_BR_CALL && s.depth) {
					struct auxcap_decode_frame fr = { e->to, e->ip, e->key };

					r = stack_push(&s, &fr);
				} else if (e->branch == AUXCAP_BR_RETURN && s.depth) {
					stack_return(&s, e->to, e->key, &sc, NULL);
				} else if (e->branch == AUXCAP_BR_JUMP && s.depth &&
					   s.f[s.depth - 1].func != e->to &&
					   jump_to_start(d, t->pid, e->to)) {
					s.f[s.depth - 1].func = e->to;
					s.f[s.depth - 1].time = e->key;
				}
				if (r < 0)
					goto out;
				seq = e->to;
			} else if (e->kind == AUXCAP_TRACE_ENABLE) {
				seq = e->ip;
			}
		}
		best_seq = seq;
		x->seq_from_start = fwd_start;
		x->delta_ns = (int64_t)(queue_at(q, (size_t)jf)->key - ts);
	}
	x->aligned = kb >= 0 || jf >= 0;
	x->seq_from = x->aligned ? best_seq : 0;

	/* Innermost first. */
	r = auxcap_grow_array(&d->sstack, &d->sstack_cap, s.depth, 64, sizeof(*d->sstack));
	if (r < 0)
		goto out;
	for (uint32_t i = 0; i < s.depth; i++)
		d->sstack[i] = s.f[s.depth - 1 - i];
	x->stack = d->sstack;
	x->nr_stack = s.depth;

	/* The last branches before that point, newest first. */
	if (d->opts.last_branches) {
		if (!d->sbranches) {
			d->sbranches = calloc(AUXCAP_DECODE_MAX_BRANCHES, sizeof(*d->sbranches));
			if (!d->sbranches) {
				r = -ENOMEM;
				goto out;
			}
		}
		for (size_t j = nfwd; j-- > 0 && nb < d->opts.last_branches;)
			d->sbranches[nb++] = (struct auxcap_decode_branch){
				d->fwd[j].from, d->fwd[j].to, d->fwd[j].time, d->fwd[j].type
			};
		for (uint32_t k = kb >= 0 ? (uint32_t)kb + 1 : 0;
		     k < hist_n(t) && nb < d->opts.last_branches; k++) {
			const struct hist *h = hist_at(t, k);

			if (h->type == AUXCAP_BR_NONE)
				continue;
			d->sbranches[nb++] = (struct auxcap_decode_branch){ h->from, h->to, h->time,
									     h->type };
		}
		x->branches = d->sbranches;
		x->nr_branches = nb;
	}

	/* Time per function since the thread's previous sample. */
	ftime_account(t, t->last_time);
	r = auxcap_grow_array(&d->sftime, &d->sftime_cap, t->ft_n, 64, sizeof(*d->sftime));
	if (r < 0)
		goto out;
	{
		size_t n = 0;

		/* only the slots in use: a thread that ran many functions has a large table */
		for (; n < t->ft_n; n++) {
			struct ftime_slot *sl = &t->ft[t->ft_used[n]];

			d->sftime[n] = (struct auxcap_decode_ftime){ sl->func, sl->ns };
			sl->ns = 0;
		}
		if (n > 1)
			qsort(d->sftime, n, sizeof(*d->sftime), cmp_ftime);
		x->ftime = d->sftime;
		x->nr_ftime = n < FTIME_MAX ? n : FTIME_MAX;
		t->ft_n = 0;
		t->ft_last_valid = 0;
	}
	x->trace_ns = t->trace_ns;
	t->trace_ns = 0;
	r = 0;
out:
	d->swork = s.f;
	d->swork_cap = s.cap;
	return r;
}

/* ---- records --------------------------------------------------------------------------- */

static int cpu_set_tid(struct auxcap_decode *d, uint32_t cpu, int32_t tid)
{
	if (cpu >= 4096)
		return 0;
	if (cpu >= d->nr_cpus) {
		size_t n = cpu + 1;
		int32_t *nc = realloc(d->cpu_tid, n * sizeof(*nc));

		if (!nc)
			return -ENOMEM;
		for (size_t i = d->nr_cpus; i < n; i++)
			nc[i] = -1;
		d->cpu_tid = nc;
		d->nr_cpus = n;
	}
	d->cpu_tid[cpu] = tid;
	return 0;
}

/*
 * The IP to look a sample up by in the trace: its own, unless it was taken in the kernel and
 * carries the user-mode registers (REGS_USER with the IP), as counter samples of a task under
 * the live tracer do: then the user-mode IP, where the traced code was.
 */
static uint64_t sample_ip(const struct auxcap_decode *d, const struct auxcap_perf_evsel *es,
			  const struct auxcap_sample *sa)
{
	uint64_t mask = es->layout.sample_regs_user;
	int reg = d->ip_reg;

	if (!(sa->ip >> 63) || reg < 0 || !(es->layout.sample_type & PERF_SAMPLE_REGS_USER) ||
	    !sa->regs_user.abi || !(mask & (UINT64_C(1) << reg)))
		return sa->ip;
	return auxcap_get_u64(sa->regs_user.regs,
			      (size_t)__builtin_popcountll(mask & ((UINT64_C(1) << reg) - 1)));
}

static int emit_record(struct auxcap_decode *d, const struct sb_entry *e)
{
	const struct auxcap_perf_evsel *es = e->evsel;
	struct auxcap_decode_event *out = &d->out;
	struct auxcap_record *rec = &d->rec;
	const struct auxcap_sample_id *sid = &rec->sid;
	int r;

	memset(out, 0, sizeof(*out));
	d->out_record = true;
	d->fast_t = NULL;
	out->kind = AUXCAP_DECODE_SIDEBAND;
	out->time = e->time;
	out->has_time = e->has_time;
	if (e->has_time)
		sym_time(d, e->time);
	out->cpu = out->pid = out->tid = out->queue = -1;
	out->evsel = es;
	if (e->type == AUXCAP_PERF_RECORD_AUXTRACE_ERROR) {
		free(d->err_hold);
		d->err_hold = malloc(sizeof(*d->err_hold));
		if (!d->err_hold)
			return -ENOMEM;
		*d->err_hold = *e->err;
		out->kind = AUXCAP_DECODE_LOSS;
		out->loss = "AUXTRACE_ERROR";
		out->auxtrace_error = d->err_hold;
		out->cpu = (int32_t)e->err->cpu;
		out->pid = (int32_t)e->err->pid;
		out->tid = (int32_t)e->err->tid;
		d->info.losses++;
		return 0;
	}
	if (!es)
		es = auxcap_perf_reader_evsel(d->rd, 0);
	{
		uint16_t size;

		memcpy(&size, (const uint8_t *)e->data + 6, sizeof(size));
		r = auxcap_record_parse(&es->layout, e->data, size, rec);
	}
	if (r < 0) {
		snprintf(d->errtext, sizeof(d->errtext), "a %s record does not parse",
			 auxcap_record_type_name(e->type) ? auxcap_record_type_name(e->type) : "");
		return r;
	}
	out->rec = rec;
	if (rec->has_sample_id) {
		if (sid->present & PERF_SAMPLE_CPU)
			out->cpu = (int32_t)sid->cpu;
		if (sid->present & PERF_SAMPLE_TID) {
			out->pid = (int32_t)sid->pid;
			out->tid = (int32_t)sid->tid;
		}
	}
	switch (rec->type) {
	case PERF_RECORD_SAMPLE: {
		const struct auxcap_sample *sa = &rec->u.sample;
		uint64_t st = es->layout.sample_type;
		struct dthread *t;

		if (st & PERF_SAMPLE_CPU)
			out->cpu = (int32_t)sa->cpu;
		if (st & PERF_SAMPLE_TID) {
			out->pid = (int32_t)sa->pid;
			out->tid = (int32_t)sa->tid;
		}
		if (es == d->aux_evsel)
			break; /* the AUX event's own records, not a counter's */
		out->kind = AUXCAP_DECODE_SAMPLE;
		d->info.samples++;
		if (out->cpu >= 0 && ((size_t)out->cpu >= d->nr_cpus || d->cpu_tid[out->cpu] < 0) &&
		    out->tid >= 0) {
			r = cpu_set_tid(d, (uint32_t)out->cpu, out->tid);
			if (r < 0)
				return r;
		}
		t = out->tid >= 0 && !d->info.sampled ? thread_get(d, out->tid, false) : NULL;
		if (t && t->has_trace) {
			uint64_t ip = sample_ip(d, es, sa);

			r = sample_context(d, t, ip, e->time);
			d->sctx.ip = ip;
			if (r < 0)
				return r;
			out->ctx = &d->sctx;
			d->info.samples_traced++;
			if (d->sctx.aligned)
				d->info.samples_aligned++;
		}
		break;
	}
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (!(sid->present & PERF_SAMPLE_CPU))
			break;
		if (!(rec->misc & PERF_RECORD_MISC_SWITCH_OUT))
			r = cpu_set_tid(d, sid->cpu,
					(sid->present & PERF_SAMPLE_TID) ? (int32_t)sid->tid : -1);
		else if (rec->type == PERF_RECORD_SWITCH_CPU_WIDE)
			r = cpu_set_tid(d, sid->cpu, (int32_t)rec->u.context_switch.next_prev_tid);
		else
			r = cpu_set_tid(d, sid->cpu, -1);
		if (r < 0)
			return r;
		break;
	case PERF_RECORD_ITRACE_START:
		out->pid = (int32_t)rec->u.itrace_start.pid;
		out->tid = (int32_t)rec->u.itrace_start.tid;
		if (sid->present & PERF_SAMPLE_CPU) {
			r = cpu_set_tid(d, sid->cpu, out->tid);
			if (r < 0)
				return r;
		}
		break;
	case PERF_RECORD_COMM: {
		struct tid_info *ti = decode_tid(d, (int32_t)rec->u.comm.tid, true);

		if (ti) {
			ti->pid = (int32_t)rec->u.comm.pid;
			snprintf(ti->comm, sizeof(ti->comm), "%s", rec->u.comm.comm);
			d->tid_gen++;
		}
		out->pid = (int32_t)rec->u.comm.pid;
		out->tid = (int32_t)rec->u.comm.tid;
		if (rec->misc & PERF_RECORD_MISC_COMM_EXEC) {
			struct dthread *t = thread_get(d, out->tid, false);

			/* (trace at the exec's own time is the new image's: a traced command's
			 * first events come at the time of its exec) */
			if (t && t->has_trace && t->last_time < out->time)
				thread_exec(d, t, out->time, &out->stack);
		}
		break;
	}
	case PERF_RECORD_LOST:
		out->kind = AUXCAP_DECODE_LOSS;
		out->loss = "LOST";
		out->lost = rec->u.lost.lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		out->kind = AUXCAP_DECODE_LOSS;
		out->loss = "LOST_SAMPLES";
		out->lost = rec->u.lost_samples.lost;
		break;
	case PERF_RECORD_AUX:
		if (rec->u.aux.flags & AUX_FLAG_TRUNCATED)
			out->loss = "AUX TRUNCATED";
		else if (rec->u.aux.flags & AUX_FLAG_COLLISION)
			out->loss = "AUX COLLISION";
		else if (rec->u.aux.flags & AUX_FLAG_PARTIAL)
			out->loss = "AUX PARTIAL";
		if (out->loss)
			out->kind = AUXCAP_DECODE_LOSS;
		break;
	default:
		break;
	}
	if (out->kind == AUXCAP_DECODE_LOSS)
		d->info.losses++;
	out->comm = auxcap_decode_comm(d, out->tid);
	return 0;
}

/* ---- the loop -------------------------------------------------------------------------- */

static int start(struct auxcap_decode *d)
{
	const struct sb_entry *se;
	struct qev *e;
	int r;

	d->heap = calloc(d->nr_queues + 1, sizeof(*d->heap));
	d->ckey = calloc(d->nr_queues + 1, sizeof(*d->ckey));
	d->jmpc = malloc(JMPC_SIZE * sizeof(*d->jmpc));
	if (!d->heap || !d->ckey || !d->jmpc)
		return -ENOMEM;
	d->jmpc_gen = auxcap_symbols_gen(d->syms) + 1; /* emptied before the first use */
	for (size_t c = 0; c < d->nr_queues; c++)
		d->prog_total += d->queues[c].info.bytes;
	if (d->opts.progress)
		d->opts.progress(d->opts.progress_arg, AUXCAP_DECODE_PHASE_DECODE, 0, d->prog_total);
	for (size_t c = 0; c < d->nr_queues; c++) {
		r = queue_peek(d, &d->queues[c], &e);
		if (r < 0)
			return r;
		if (r == 1) {
			rekey(d, c);
			d->heap[d->heap_n++] = c;
			heap_up(d, d->heap_n - 1);
		}
	}
	if (d->rd) {
		r = sb_init(&d->sb, d->rd);
		if (r < 0)
			return r;
		d->sb_ready = true;
		r = sb_peek(&d->sb, &se);
		if (r < 0)
			return r;
		if (r == 1) {
			rekey(d, d->nr_queues);
			d->heap[d->heap_n++] = d->nr_queues;
			heap_up(d, d->heap_n - 1);
		}
	}
	d->started = true;
	return 0;
}

/*
 * The smallest (key, cursor) among the cursors other than the top one (the heap orders by
 * key, then cursor index; the records' cursor has the highest index): the top queue goes on
 * handing out events without touching the heap while its next one comes before that.
 */
static void set_limit(struct auxcap_decode *d)
{
	d->lim_key = UINT64_MAX;
	d->lim_c = SIZE_MAX;
	for (size_t i = 1; i <= 2 && i < d->heap_n; i++) {
		size_t o = d->heap[i];

		if (d->ckey[o] < d->lim_key || (d->ckey[o] == d->lim_key && o < d->lim_c)) {
			d->lim_key = d->ckey[o];
			d->lim_c = o;
		}
	}
}

/*
 * The window of the quick way (auxcap_decode_next()) after the event just handed out from
 * queue @c (@q), held: the events after it that are final, in one stretch of the ring, while
 * the thread is in the state the quick way needs (a stack, per-function time running, the
 * last event handed out compact; its own steps keep that state), and the key below which
 * the queue's events come before every other cursor (the heap's limit).  Empty (NULL)
 * otherwise; merge_next() empties it first.
 */
static void set_fast_window(struct auxcap_decode *d, size_t c, struct dqueue *q)
{
	const struct dthread *t = d->fast_t;
	const struct qev *e;
	size_t pos = q->head + 1, n;
	uint64_t lim = d->lim_key;

	d->fast_next = d->fast_end = NULL;
	if (!t || !t->depth || t->ft_paused || d->trace_full || pos >= q->ready)
		return;
	e = &q->ring[pos & (q->cap - 1)];
	n = q->cap - (pos & (q->cap - 1)); /* to the end of the ring */
	if (n > q->ready - pos)
		n = q->ready - pos;
	/* The events before the limit (the quick way checks each: a scan here costs as much).
	 * At the limit's own key the lower cursor goes first (a key of UINT64_MAX, never a
	 * time, takes the general way). */
	if (c < d->lim_c && lim != UINT64_MAX)
		lim++;
	/* where the mappings change, the general way tells the symbols (sym_time()) */
	if (lim > d->sym_hi)
		lim = d->sym_hi;
	d->fast_first = e;
	d->fast_next = e;
	d->fast_end = e + n;
	d->fast_lim = lim;
}

/* Hand out event @e, the first of queue @c (@q), held there until the next call. */
static int emit_queue(struct auxcap_decode *d, size_t c, struct dqueue *q, struct qev *e)
{
	int r = emit_trace(d, c, e);

	if (r < 0)
		return r;
	queue_hold(q);
	d->held_q = q;
	d->held_c = c;
	set_fast_window(d, c, q);
	return 1;
}

/*
 * What the quick way handed out of its window leaves queue @q (may be NULL: no window); the
 * last of it is the held event.  The window is emptied: the ring may move before
 * set_fast_window() sets it again.
 */
static void window_done(struct auxcap_decode *d, struct dqueue *q)
{
	if (q && d->fast_next)
		q->head += (size_t)(d->fast_next - d->fast_first);
	d->fast_next = d->fast_end = NULL;
}

int merge_next(struct auxcap_decode *d)
{
	struct dqueue *q = d->held_q;
	size_t c;
	int r;

	window_done(d, q);
	if (q) {
		struct qev *e;

		/* The queue of the last event: its next one, still first in the usual case. */
		c = d->held_c;
		if (d->fast_t) {
			/* what the quick way leaves: the thread's last event is the held one */
			const struct qev *held = queue_held(q);

			d->fast_t->last_time = held->key;
			d->fast_t->last_run_lo = held->run_lo;
			d->fast_t->last_run_hi = held->run_hi;
		}
		queue_release(q);
		d->held_q = NULL;
		r = queue_peek(d, q, &e);
		if (r == 1 && (e->key < d->lim_key || (e->key == d->lim_key && c < d->lim_c))) {
			d->ckey[c] = e->key;
			return emit_queue(d, c, q, e);
		}
		if (r == 1) {
			d->ckey[c] = e->key;
			heap_down(d, 0);
		} else {
			heap_remove_top(d);
			/* A failing queue ends after the event handed out last: its error now. */
			if (r < 0)
				return r;
		}
	} else if (!d->started) {
		r = start(d);
		if (r < 0)
			return r;
	}
	if (!d->heap_n) {
		if (d->opts.progress && !d->prog_finished) {
			d->prog_finished = true;
			d->opts.progress(d->opts.progress_arg, AUXCAP_DECODE_PHASE_DECODE,
					 d->prog_total, d->prog_total);
		}
		return 0;
	}
	c = d->heap[0];
	if (c < d->nr_queues) {
		struct qev *e;

		q = &d->queues[c];
		r = queue_peek(d, q, &e);
		if (r < 0)
			return r;
		set_limit(d);
		return emit_queue(d, c, q, e);
	} else {
		const struct sb_entry *se;

		r = sb_peek(&d->sb, &se);
		if (r <= 0)
			return r < 0 ? r : 0;
		r = emit_record(d, se);
		if (r < 0)
			return r;
		sb_pop(&d->sb);
		r = sb_peek(&d->sb, &se);
		if (r < 0)
			return r;
		if (r == 1) {
			d->ckey[c] = se->time;
			heap_down(d, 0);
		} else {
			heap_remove_top(d);
		}
		return 1;
	}
}

/*
 * What every quick step does: hand out @e (time, the event), and with samples to give context
 * to, the history entry (its undo is UNDO_NONE; the caller sets it).  The entry, or the
 * thread's scratch one.
 */
static inline __attribute__((always_inline)) struct hist *
fast_out(struct auxcap_decode *d, struct dthread *t, const struct qev *e, uint64_t now)
{
	struct auxcap_decode_event *out = &d->out;
	struct hist *h = &t->scratch; /* no history kept: what is written there is never read */

	d->fast_next = e + 1; /* the last event dropped, this one held (q->head: merge_next()) */
	out->time = now;
	out->has_time = true;
	memcpy(&d->trace, e, QEV_HEAD); /* queue_expand() of a compact event */
	/* out->trace is &d->trace already (emit_trace()); t->last_time, last_run_lo,
	 * last_run_hi: set from the held event when the general way resumes (merge_next()) */
	if (d->want_context) {
		h = hist_push(t);
		h->from = e->ip;
		h->to = e->to;
		h->seq_from = t->seq_from;
		h->seq_start = t->seq_start;
		h->time = now;
		h->type = (uint8_t)e->branch;
	}
	t->seq_from = e->to; /* a quick event's IP is known */
	t->seq_start = false;
	d->info.trace_events++;
	return h;
}

/* auxcap_decode_next() past its quick way. */
static __attribute__((noinline)) int next_slow(struct auxcap_decode *d,
					       const struct auxcap_decode_event **ret_ev)
{
	int r = merge_next(d);

	if (r == 1)
		*ret_ev = &d->out;
	return r;
}

/*
 * The function's time slot for the quick way at @now on thread @t (see next_call() and
 * next_ret()): the top frame's function's slot where its hash puts it, or that slot empty
 * (no time: the function's first since the last sample), where ftime_add_slow() would put
 * it too when the table need not grow, claimed then (nothing turns back after it).  NULL
 * when no time is to be accounted; (void *)1 when another function holds the slot or the
 * table would grow: the general way.
 */
#define SLOT_SLOW ((struct ftime_slot *)1)
static inline __attribute__((always_inline)) struct ftime_slot *
fast_slot(const struct auxcap_decode *d, struct dthread *t, uint64_t now, uint32_t depth)
{
	struct ftime_slot *slot;
	uint64_t func;
	uint32_t i;

	if (!d->want_context || now <= t->ft_since)
		return NULL;
	func = t->stack[depth - 1].func;
	i = ftime_hash(func) & (t->ft_cap - 1);
	slot = &t->ft[i];
	if (slot->ns)
		return slot->func == func ? slot : SLOT_SLOW;
	if ((t->ft_n + 1) * 2 > t->ft_cap)
		return SLOT_SLOW;
	slot->func = func;
	t->ft_used[t->ft_n++] = i;
	return slot;
}

/* Account the time up to @now to @slot (fast_slot()). */
static inline __attribute__((always_inline)) void fast_time(struct dthread *t,
							   struct ftime_slot *slot, uint64_t now)
{
	if (slot) {
		uint64_t ns = now - t->ft_since;

		t->trace_ns += ns;
		slot->ns += ns;
		t->ft_since = now;
	}
}

/*
 * The quick way for a call (@call) or a return from the top frame's call (see
 * auxcap_decode_next()), else the general way.  Each is a function of its own
 * (next_call(), next_ret(), @call a constant in each), so that the other branches (most of
 * them) are handed out with no registers saved and restored, and neither tests which it is.
 */
static inline __attribute__((always_inline)) int
fast_call_ret(struct auxcap_decode *d, const struct auxcap_decode_event **ret_ev, const bool call)
{
	const struct qev *e = d->fast_next;
	struct dthread *t = d->fast_t;
	uint64_t now = e->key;
	uint32_t depth = t->depth;
	struct ftime_slot *slot;
	struct hist *h;

	if (call ? depth >= t->cap_stack : depth < 2 || !returns_to(&t->stack[depth - 1], e->to))
		return next_slow(d, ret_ev);
	slot = fast_slot(d, t, now, depth);
	if (slot == SLOT_SLOW)
		return next_slow(d, ret_ev);
	h = fast_out(d, t, e, now);
	fast_time(t, slot, now);
	if (call) {
		t->stack[depth++] = (struct auxcap_decode_frame){ e->to, e->ip, now };
		h->undo = UNDO_PUSHED;
	} else {
		h->undo = UNDO_POPPED;
		h->saved = t->stack[--depth];
	}
	/* one store of the whole change */
	d->out.stack = (struct auxcap_decode_stack_change){ .popped = !call, .pushed = call,
							    .depth = depth };
	t->depth = depth;
	*ret_ev = &d->out;
	return 1;
}

static __attribute__((noinline)) int next_call(struct auxcap_decode *d,
					       const struct auxcap_decode_event **ret_ev)
{
	return fast_call_ret(d, ret_ev, true);
}

static __attribute__((noinline)) int next_ret(struct auxcap_decode *d,
					      const struct auxcap_decode_event **ret_ev)
{
	return fast_call_ret(d, ret_ev, false);
}

/*
 * The quick way for a jump that jump_plain() did not pass: a tail call (a jump to the start
 * of another function: the innermost frame becomes that function's, as apply_branch() does),
 * a jump to the start of the innermost frame's own function (nothing), else the general way
 * (a target not cached yet, no frame, or the function's time slot taken).
 */
static __attribute__((noinline)) int next_jump(struct auxcap_decode *d,
					       const struct auxcap_decode_event **ret_ev)
{
	const struct qev *e = d->fast_next;
	struct dthread *t = d->fast_t;
	const struct jmp_class *c = &d->jmpc[jmpc_slot(e->to)];
	uint64_t now = e->key;
	uint32_t depth = t->depth;
	struct auxcap_decode_frame *top;
	struct ftime_slot *slot;
	struct hist *h;

	if (c->to != e->to || c->pid != t->pid || !depth)
		return next_slow(d, ret_ev);
	top = &t->stack[depth - 1];
	if (top->func == e->to) {
		(void)fast_out(d, t, e, now);
		d->out.stack = (struct auxcap_decode_stack_change){ .depth = depth };
		*ret_ev = &d->out;
		return 1;
	}
	slot = fast_slot(d, t, now, depth);
	if (slot == SLOT_SLOW)
		return next_slow(d, ret_ev);
	h = fast_out(d, t, e, now);
	fast_time(t, slot, now);
	tail_call(top, h, e->to, now);
	d->out.stack = (struct auxcap_decode_stack_change){ .popped = 1, .pushed = true,
							    .depth = depth };
	*ret_ev = &d->out;
	return 1;
}

/*
 * The quick way ran to the end of its window: the events after it were not final yet (their
 * run was open).  Decode on until the next event is final and set the window again, without
 * a general step: the held event, its thread and the heap's limit are what they were.  When
 * no window comes of it, the general way.
 */
static __attribute__((noinline)) int next_extend(struct auxcap_decode *d,
						 const struct auxcap_decode_event **ret_ev)
{
	struct dqueue *q = d->held_q;

	window_done(d, q);
	if (queue_final_at(d, q, 0))
		set_fast_window(d, d->held_c, q);
	if (!d->fast_next)
		return next_slow(d, ret_ev);
	return auxcap_decode_next(d, ret_ev);
}

/* A quick jump known not to start a function (jump_to_start() cached it). */
static inline __attribute__((always_inline)) bool jump_plain(const struct auxcap_decode *d,
							     const struct qev *e)
{
	const struct jmp_class *c = &d->jmpc[jmpc_slot(e->to)];

	return c->to == e->to && c->pid == d->fast_t->pid && !c->start;
}

/*
 * The most common step, done without the general machinery: the next event of the window
 * set_fast_window() made (the queue of the last event goes on with a quick branch of the
 * same thread, before every other cursor), whose effect on the stack and the function times
 * is in place (none, for a jump whose target is known not to start a function; a call with
 * room on the stack, a return from the top frame's call, each from a function whose time has
 * a slot where its hash puts it).  It does exactly what
 * merge_next(), emit_trace() and apply_trace() do for it, without calling anything but
 * next_call() or next_ret() for a call or a return; anything else takes the general way.
 */
int auxcap_decode_next(struct auxcap_decode *d, const struct auxcap_decode_event **ret_ev)
{
	const struct qev *e;
	uint64_t now;

	if (__builtin_expect(!d || !ret_ev, 0))
		return -EINVAL;
	e = d->fast_next;
	if (e == d->fast_end && e)
		return next_extend(d, ret_ev);
	if (e == d->fast_end || !e->quick || (now = e->key) >= d->fast_lim)
		return next_slow(d, ret_ev);
	/* The events were written a run ago: fetch the coming ones ahead. */
	__builtin_prefetch(e + 8);
	if (e->branch == AUXCAP_BR_CALL)
		return next_call(d, ret_ev);
	if (e->branch == AUXCAP_BR_RETURN)
		return next_ret(d, ret_ev);
	if (e->branch == AUXCAP_BR_JUMP && !jump_plain(d, e))
		return next_jump(d, ret_ev);
	(void)fast_out(d, d->fast_t, e, now);
	d->out.stack = (struct auxcap_decode_stack_change){ .depth = d->fast_t->depth };
	*ret_ev = &d->out;
	return 1;
}

const char *auxcap_decode_error(const struct auxcap_decode *d)
{
	return d ? d->errtext : "";
}
