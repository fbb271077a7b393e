/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The report's aggregation (auxcap/decode_report.h): a consumer of the merged stream.
 *
 * Per thread it mirrors the call stack the decode stage reconstructs, from each trace event's
 * stack change (frames the stage knew before the first event of the thread, the frames a
 * return ended, a rebased outermost frame, a pushed call), the way the folded writer does.
 * Each mirrored frame holds its function (an index into the function table) and the thread's
 * running counters (trace time, instructions, branches) when it began; when it ends, the
 * differences are the frame's inclusive counts, added to its function's total unless the
 * function is further out on the same stack too (recursion counts once: a per-thread count
 * of frames per function says so).  Self counts go to the innermost frame as events pass.
 *
 * Functions are keyed by what the symbols say: (symbol name, file) pointers, which the
 * decode session's symbol tables keep stable until it is closed; an address without a
 * symbol keys by itself; kernel addresses without a symbol share one entry.  A small
 * direct-mapped cache in front of the look-up keeps calls and returns of hot code cheap.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "auxcap/decode_report.h"
#include "decode_int.h"
#include "grow.h"
#include "report_mem.h"

#define FCACHE_SIZE 4096 /* (pid, addr, thread) -> function, power of two */
#define NO_FUNC UINT32_MAX
#define MAX_CPUS 4096	 /* CPUs counted by number; others are ignored */
#define STACK_MAX 8192	 /* deepest mirrored stack (the stage keeps at most 4096) */
#define MAX_CALLCHAIN 256 /* callchain frames of a sample counted (kernel default: 127) */

#define AUX_FLAG_TRUNCATED 0x01
#define AUX_FLAG_PARTIAL 0x04
#define AUX_FLAG_COLLISION 0x08

struct rfunc {
	struct auxcap_report_func pub;
	uint64_t kaddr;	  /* the address in its key: 0 for a named function or the kernel */
	uint64_t *counts; /* 2 * nr_slots: self samples, then total samples; NULL until one */
	uint64_t stamp;	  /* the last sample that counted it in its total */
	uint32_t calls_ix; /* 1 + its index in calls, if calls_of chose it; else 0 */
};

/* The calls of a function calls_of chose (auxcap_report_calls). */
struct rcalls {
	struct auxcap_report_calls pub;
	uint32_t func;
	struct auxcap_report_call *slow; /* longest first, opts.slowest entries (owned) */
	struct slow_ix *slow_ix;	 /* their functions' indexes in funcs (owned) */
};

/* The functions of a kept call until funcs is final (NO_FUNC: none). */
struct slow_ix {
	uint32_t caller;
	uint32_t callee[AUXCAP_REPORT_CALL_CALLEES];
};

/* The callees of an open call of a chosen function: their trace time in it. */
#define BRK_MAX 16 /* callees told apart; the others' time goes to the last slot's "other" */
struct rbrk {
	uint32_t n;
	uint32_t func[BRK_MAX];
	uint64_t ns[BRK_MAX], calls[BRK_MAX];
	uint32_t next; /* free list */
};

struct rframe {
	uint32_t func;	/* index in funcs, NO_FUNC if it could not be made */
	bool first;	/* the outermost frame of its function on this stack */
	uint64_t ns, insns, branches; /* the thread's counters when it began */
	bool called;	/* a call event made it (it is a call of its function) */
	bool timed;	/* ... whose time, @t0, was its own */
	uint64_t t0;	/* perf time of that call */
	uint64_t gaps;	/* the thread's gaps then */
	uint32_t edge;	/* opts.call_graph: its edge in edges, NO_FUNC if none */
	uint32_t brk;	/* a call of a chosen function: its callees (brks), NO_FUNC if none */
};

/* An edge of the call graph (auxcap_report_edge), by function indexes until finish. */
struct redge {
	struct auxcap_report_edge pub;
	uint32_t caller, callee;
};

struct onstack {
	uint32_t func; /* NO_FUNC: empty slot */
	uint32_t count;
};

struct rthread {
	struct auxcap_report_thread pub;
	bool used;
	struct rframe *stack; /* outermost first (owned) */
	uint32_t n, cap;
	struct onstack *on; /* frames per function (owned), open addressing */
	uint32_t on_cap, on_n;
	uint64_t last;	 /* time of its last trace event */
	bool have_last;	 /* @last is set */
	bool last_timed; /* ... and was the event's own time */
	bool paused;	 /* tracing stopped or a gap: the time until the next event is not
			  * the innermost frame's */
	bool gap;	 /* paused by a gap: that time is gap time */
};

struct fcache {
	uint64_t addr;
	int32_t pid, tid;
	uint32_t func;
	bool valid;
};

struct auxcap_report {
	struct auxcap_decode *d; /* borrowed */
	struct auxcap_report_opts opts;
	bool finished;

	struct rfunc *funcs;
	size_t nr_funcs, cap_funcs;
	uint32_t *index; /* open addressing over funcs, by key; NO_FUNC = empty */
	size_t icap;
	struct rfunc **order; /* funcs in the sorted order (after finish) */
	struct rcalls *calls; /* the functions calls_of chose */
	size_t nr_calls, cap_calls;
	struct rbrk *brks; /* per open call of a chosen function */
	uint32_t nr_brks, free_brk;
	struct redge *edges; /* opts.call_graph */
	size_t nr_edges, cap_edges;
	uint32_t *eindex; /* open addressing over edges by (caller, callee); NO_FUNC: empty */
	size_t ecap;
	struct rcalls **calls_order; /* after finish: those with calls, sorted */
	size_t nr_calls_done;	     /* ... their number */
	struct auxcap_report_dso *dsos; /* after finish, sorted */
	size_t nr_dsos;
	uint64_t *dso_counts; /* nr_dsos * nr_slots self samples */
	struct fcache *fcache;
	uint64_t sample_seq;
	struct rmem *mem; /* sampled data accesses */

	struct rthread *threads; /* open addressing by tid */
	size_t tcap, tn;
	struct rthread *last_thread;
	struct auxcap_report_thread **torder; /* after finish */

	size_t nr_slots;
	struct auxcap_report_slot *slots;
	struct evsel_slot_cache slot_cache; /* slot_of() */

	uint8_t cpu_seen[MAX_CPUS / 8];
	int32_t *cpus;
	struct auxcap_report_note *gap_notes, *error_notes;
	struct auxcap_report_summary sum;
};

/* ---- functions --------------------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	return x ^ (x >> 29);
}

static size_t key_hash(const char *name, const char *dso, uint64_t addr, bool kernel,
		       int32_t tid)
{
	return (size_t)mix((uint64_t)(uintptr_t)name ^ mix((uint64_t)(uintptr_t)dso) ^
			   mix(addr + (kernel ? 1 : 0)) ^ ((uint64_t)(uint32_t)tid << 17));
}

static bool key_eq(const struct rfunc *rf, const char *name, const char *dso, uint64_t addr,
		   bool kernel, int32_t tid)
{
	const struct auxcap_report_func *f = &rf->pub;

	return f->name == name && f->dso == dso && rf->kaddr == addr && f->kernel == kernel &&
	       f->tid == tid;
}

static int index_grow(struct auxcap_report *r)
{
	size_t cap = r->icap ? 2 * r->icap : 1024;
	uint32_t *ni = malloc(cap * sizeof(*ni));

	if (!ni)
		return -ENOMEM;
	memset(ni, 0xff, cap * sizeof(*ni));
	for (size_t k = 0; k < r->nr_funcs; k++) {
		const struct auxcap_report_func *f = &r->funcs[k].pub;
		size_t i = key_hash(f->name, f->dso, r->funcs[k].kaddr, f->kernel, f->tid) &
			   (cap - 1);

		while (ni[i] != NO_FUNC)
			i = (i + 1) & (cap - 1);
		ni[i] = (uint32_t)k;
	}
	free(r->index);
	r->index = ni;
	r->icap = cap;
	return 0;
}

/* Function @f's calls are kept: an entry in calls; -ENOMEM. */
static int calls_add(struct auxcap_report *r, uint32_t f)
{
	struct rcalls *c;

	if (auxcap_grow_array(&r->calls, &r->cap_calls, r->nr_calls + 1, 8, sizeof(*r->calls)) < 0)
		return -ENOMEM;
	c = &r->calls[r->nr_calls];
	memset(c, 0, sizeof(*c));
	c->func = f;
	c->pub.min_ns = c->pub.min_insns = UINT64_MAX;
	c->slow = calloc(r->opts.slowest, sizeof(*c->slow));
	c->slow_ix = calloc(r->opts.slowest, sizeof(*c->slow_ix));
	if (!c->slow || !c->slow_ix) {
		free(c->slow);
		free(c->slow_ix);
		return -ENOMEM;
	}
	r->funcs[f].calls_ix = (uint32_t)++r->nr_calls;
	return 0;
}

/*
 * The function of key (@name, @dso, @addr, @kernel, @tid), made if new (its shown address
 * @start); NO_FUNC on ENOMEM.
 */
static uint32_t func_get(struct auxcap_report *r, const char *name, const char *dso,
			 uint64_t addr, bool kernel, int32_t tid, uint64_t start)
{
	size_t i;

	if ((r->nr_funcs + 1) * 2 > r->icap && index_grow(r) < 0)
		return NO_FUNC;
	for (i = key_hash(name, dso, addr, kernel, tid) & (r->icap - 1); r->index[i] != NO_FUNC;
	     i = (i + 1) & (r->icap - 1))
		if (key_eq(&r->funcs[r->index[i]], name, dso, addr, kernel, tid))
			return r->index[i];
	if (r->nr_funcs == r->cap_funcs) {
		size_t cap = r->cap_funcs ? 2 * r->cap_funcs : 256;
		struct rfunc *nf;

		if (cap >= NO_FUNC)
			return NO_FUNC;
		nf = realloc(r->funcs, cap * sizeof(*nf));
		if (!nf)
			return NO_FUNC;
		r->funcs = nf;
		r->cap_funcs = cap;
	}
	memset(&r->funcs[r->nr_funcs], 0, sizeof(r->funcs[0]));
	r->funcs[r->nr_funcs].pub.name = name;
	r->funcs[r->nr_funcs].pub.dso = dso;
	r->funcs[r->nr_funcs].pub.addr = start;
	r->funcs[r->nr_funcs].kaddr = addr;
	r->funcs[r->nr_funcs].pub.kernel = kernel;
	r->funcs[r->nr_funcs].pub.tid = tid;
	if (r->opts.calls_of && r->opts.calls_of(r->opts.calls_arg, &r->funcs[r->nr_funcs].pub) &&
	    calls_add(r, (uint32_t)r->nr_funcs) < 0)
		return NO_FUNC;
	r->index[i] = (uint32_t)r->nr_funcs;
	return (uint32_t)r->nr_funcs++;
}

/* The function holding @addr of process @pid, for thread key @tkey. */
static uint32_t func_of(struct auxcap_report *r, int32_t pid, uint64_t addr, int32_t tkey)
{
	int32_t tid = r->opts.per_thread ? tkey : -1;
	size_t slot = (size_t)(mix(addr ^ ((uint64_t)(uint32_t)pid << 40) ^
				   ((uint64_t)(uint32_t)tid << 20)) &
			       (FCACHE_SIZE - 1));
	struct fcache *c = &r->fcache[slot];
	const char *name = NULL, *dso = NULL;
	uint64_t off = 0;
	uint32_t f;
	int s;

	if (c->valid && c->addr == addr && c->pid == pid && c->tid == tid)
		return c->func;
	s = auxcap_decode_symbolize(r->d, pid, addr, &name, &off, &dso);
	if (s == 1)
		f = func_get(r, name, dso, 0, false, tid, addr - off);
	else if (addr >> 63) /* the upper half: the kernel's, on x86-64 and arm64 */
		f = func_get(r, NULL, NULL, 0, true, tid, 0);
	else
		f = func_get(r, NULL, s == 2 ? dso : NULL, addr, false, tid, addr);
	if (f != NO_FUNC)
		*c = (struct fcache){ addr, pid, tid, f, true };
	return f;
}

/* The sample counters of function @f (allocated on first use); NULL on ENOMEM. */
static uint64_t *func_counts(struct auxcap_report *r, uint32_t f)
{
	struct rfunc *fn = &r->funcs[f];

	if (!fn->counts) {
		fn->counts = calloc(2 * r->nr_slots, sizeof(*fn->counts));
		if (!fn->counts)
			return NULL;
	}
	return fn->counts;
}

/* ---- threads ---------------------------------------------------------------------------- */

static void thread_fini(struct rthread *t)
{
	free(t->stack);
	free(t->on);
}

/* The thread of key @tid (a tid, or -1 - queue for trace of an unknown thread). */
static struct rthread *thread_get(struct auxcap_report *r, int32_t tid)
{
	size_t i, mask;

	if (r->last_thread && r->last_thread->pub.tid == tid)
		return r->last_thread;
	if ((r->tn + 1) * 2 > r->tcap) {
		size_t cap = r->tcap ? 2 * r->tcap : 64;
		struct rthread *nt = calloc(cap, sizeof(*nt));

		if (!nt)
			return NULL;
		for (size_t k = 0; k < r->tcap; k++) {
			if (!r->threads[k].used)
				continue;
			for (i = (size_t)mix((uint64_t)(uint32_t)r->threads[k].pub.tid) & (cap - 1);
			     nt[i].used; i = (i + 1) & (cap - 1))
				;
			nt[i] = r->threads[k];
		}
		free(r->threads);
		r->threads = nt;
		r->tcap = cap;
		r->last_thread = NULL;
	}
	mask = r->tcap - 1;
	for (i = (size_t)mix((uint64_t)(uint32_t)tid) & mask; r->threads[i].used; i = (i + 1) & mask)
		if (r->threads[i].pub.tid == tid)
			return r->last_thread = &r->threads[i];
	memset(&r->threads[i], 0, sizeof(r->threads[i]));
	r->threads[i].used = true;
	r->threads[i].pub.tid = tid;
	r->threads[i].pub.pid = -1;
	r->tn++;
	return r->last_thread = &r->threads[i];
}

/* The count of frames of function @f on @t's stack (a slot, made if new); NULL on ENOMEM. */
static struct onstack *onstack_get(struct rthread *t, uint32_t f)
{
	uint32_t i, mask;

	if ((t->on_n + 1) * 2 > t->on_cap) {
		uint32_t cap = t->on_cap ? 2 * t->on_cap : 32;
		struct onstack *no = malloc(cap * sizeof(*no));

		if (!no)
			return NULL;
		for (uint32_t k = 0; k < cap; k++)
			no[k].func = NO_FUNC;
		for (uint32_t k = 0; k < t->on_cap; k++) {
			if (t->on[k].func == NO_FUNC)
				continue;
			for (i = (uint32_t)mix(t->on[k].func) & (cap - 1); no[i].func != NO_FUNC;
			     i = (i + 1) & (cap - 1))
				;
			no[i] = t->on[k];
		}
		free(t->on);
		t->on = no;
		t->on_cap = cap;
	}
	mask = t->on_cap - 1;
	for (i = (uint32_t)mix(f) & mask; t->on[i].func != NO_FUNC; i = (i + 1) & mask)
		if (t->on[i].func == f)
			return &t->on[i];
	t->on[i].func = f;
	t->on[i].count = 0;
	t->on_n++;
	return &t->on[i];
}

/* Push a frame of function @f on @t's stack; @call: the call event that made it, or NULL. */
static int frame_push(struct rthread *t, uint32_t f, const struct auxcap_decode_event *call)
{
	struct rframe *fr;
	struct onstack *o = NULL;

	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 32;
		struct rframe *ns;

		if (t->cap >= STACK_MAX)
			return 0; /* runaway: the frame is not mirrored (nor counted) */
		ns = realloc(t->stack, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		t->stack = ns;
		t->cap = cap;
	}
	if (f != NO_FUNC) {
		o = onstack_get(t, f);
		if (!o)
			return -ENOMEM;
	}
	fr = &t->stack[t->n++];
	fr->func = f;
	fr->first = o && o->count++ == 0;
	fr->ns = t->pub.trace_ns;
	fr->insns = t->pub.insns;
	fr->branches = t->pub.branches;
	fr->called = call != NULL;
	fr->timed = call && call->has_time;
	fr->t0 = call ? call->time : 0;
	fr->gaps = t->pub.gaps;
	fr->edge = NO_FUNC;
	fr->brk = NO_FUNC;
	return 0;
}

/* A breakdown for an open call (from the free list, or new); NO_FUNC on ENOMEM. */
static uint32_t brk_alloc(struct auxcap_report *r)
{
	uint32_t b = r->free_brk;

	if (b != NO_FUNC) {
		r->free_brk = r->brks[b].next;
	} else {
		struct rbrk *nb;

		if (r->nr_brks >= NO_FUNC - 1)
			return NO_FUNC;
		nb = realloc(r->brks, (r->nr_brks + 1) * sizeof(*nb));
		if (!nb)
			return NO_FUNC;
		r->brks = nb;
		b = r->nr_brks++;
	}
	r->brks[b].n = 0;
	return b;
}

/* Callee @f (NO_FUNC: one without a function) took @ns of the call of breakdown @b. */
static void brk_add(struct auxcap_report *r, uint32_t b, uint32_t f, uint64_t ns)
{
	struct rbrk *k = &r->brks[b];
	uint32_t i;

	for (i = 0; i < k->n && k->func[i] != f; i++)
		;
	if (i == k->n) {
		if (k->n == BRK_MAX) {
			i = BRK_MAX - 1; /* full: the last slot holds the others together */
			k->func[i] = NO_FUNC;
		} else {
			k->func[i] = f;
			k->ns[i] = k->calls[i] = 0;
			k->n++;
		}
	}
	k->ns[i] += ns;
	k->calls[i]++;
}

/* opts.call_graph: the edge @caller -> @callee (made if new); NO_FUNC on ENOMEM. */
static uint32_t edge_get(struct auxcap_report *r, uint32_t caller, uint32_t callee)
{
	size_t i;

	if ((r->nr_edges + 1) * 2 > r->ecap) {
		size_t cap = r->ecap ? 2 * r->ecap : 1024;
		uint32_t *ni = malloc(cap * sizeof(*ni));

		if (!ni)
			return NO_FUNC;
		memset(ni, 0xff, cap * sizeof(*ni));
		for (size_t k = 0; k < r->nr_edges; k++) {
			for (i = mix(((uint64_t)r->edges[k].caller << 32) | r->edges[k].callee) &
				 (cap - 1);
			     ni[i] != NO_FUNC; i = (i + 1) & (cap - 1))
				;
			ni[i] = (uint32_t)k;
		}
		free(r->eindex);
		r->eindex = ni;
		r->ecap = cap;
	}
	for (i = mix(((uint64_t)caller << 32) | callee) & (r->ecap - 1); r->eindex[i] != NO_FUNC;
	     i = (i + 1) & (r->ecap - 1))
		if (r->edges[r->eindex[i]].caller == caller && r->edges[r->eindex[i]].callee == callee)
			return r->eindex[i];
	if (auxcap_grow_array(&r->edges, &r->cap_edges, r->nr_edges + 1, 256, sizeof(*r->edges)) < 0)
		return NO_FUNC;
	memset(&r->edges[r->nr_edges], 0, sizeof(r->edges[0]));
	r->edges[r->nr_edges].caller = caller;
	r->edges[r->nr_edges].callee = callee;
	r->eindex[i] = (uint32_t)r->nr_edges;
	return (uint32_t)r->nr_edges++;
}

/* A call of a chosen function ended: @fr (popped from @t) by the return @ret. */
static void call_done(struct auxcap_report *r, const struct rthread *t, const struct rframe *fr,
		      const struct auxcap_decode_event *ret)
{
	struct rcalls *c = &r->calls[r->funcs[fr->func].calls_ix - 1];
	struct auxcap_report_calls *p = &c->pub;
	struct auxcap_report_call k = { 0 };
	size_t n = p->nr_slowest, i;

	if (!ret) {
		p->unfinished++;
		if (fr->timed && t->have_last && t->last_timed && t->last > fr->t0 &&
		    t->last - fr->t0 > p->running_ns) {
			p->running_ns = t->last - fr->t0;
			p->running_start = fr->t0;
			p->running_tid = t->pub.tid;
		}
		return;
	}
	if (t->pub.gaps != fr->gaps) {
		p->across_gap++;
		return;
	}
	k.start = fr->t0;
	k.end = ret->time;
	k.timed = fr->timed && ret->has_time && ret->time >= fr->t0;
	k.tid = ret->tid;
	k.cpu = ret->cpu;
	k.ns = k.timed ? k.end - k.start : 0;
	k.insns = t->pub.insns - fr->insns;
	k.trace_ns = t->pub.trace_ns - fr->ns;
	p->calls++;
	if (k.timed) {
		p->timed++;
		p->sum_ns += k.ns;
		p->min_ns = k.ns < p->min_ns ? k.ns : p->min_ns;
		p->max_ns = k.ns > p->max_ns ? k.ns : p->max_ns;
		p->hist_ns[auxcap_report_hist_bucket(k.ns)]++;
	}
	p->sum_insns += k.insns;
	p->min_insns = k.insns < p->min_insns ? k.insns : p->min_insns;
	p->max_insns = k.insns > p->max_insns ? k.insns : p->max_insns;
	p->hist_insns[auxcap_report_hist_bucket(k.insns)]++;

	/* The longest, longest first: by time, then instructions. */
	if (n == r->opts.slowest) {
		const struct auxcap_report_call *l = &c->slow[n - 1];

		if (k.ns < l->ns || (k.ns == l->ns && k.insns <= l->insns))
			return;
		n--;
	}
	for (i = n; i > 0; i--) {
		const struct auxcap_report_call *o = &c->slow[i - 1];

		if (k.ns < o->ns || (k.ns == o->ns && k.insns <= o->insns))
			break;
		c->slow[i] = *o;
		c->slow_ix[i] = c->slow_ix[i - 1];
	}
	c->slow_ix[i].caller = t->n ? t->stack[t->n - 1].func : NO_FUNC;
	/* its callees that took the most, the most first */
	if (fr->brk != NO_FUNC) {
		const struct rbrk *b = &r->brks[fr->brk];
		bool used[BRK_MAX] = { false };

		for (uint32_t j = 0; j < b->n; j++)
			k.callees_ns += b->ns[j];
		while (k.nr_callees < AUXCAP_REPORT_CALL_CALLEES) {
			uint32_t best = BRK_MAX;

			for (uint32_t j = 0; j < b->n; j++)
				if (!used[j] && b->func[j] != NO_FUNC &&
				    (best == BRK_MAX || b->ns[j] > b->ns[best]))
					best = j;
			if (best == BRK_MAX)
				break;
			used[best] = true;
			c->slow_ix[i].callee[k.nr_callees] = b->func[best];
			k.callees[k.nr_callees].ns = b->ns[best];
			k.callees[k.nr_callees++].calls = b->calls[best];
		}
	}
	c->slow[i] = k;
	p->nr_slowest = n + 1;
}

/*
 * Pop @t's innermost frame: @ret is the return event that ended it, NULL if it ended
 * otherwise (the trace did, an exec, the stage dropped it).
 */
static void frame_pop(struct auxcap_report *r, struct rthread *t,
		      const struct auxcap_decode_event *ret)
{
	struct rframe *fr = &t->stack[--t->n];
	struct auxcap_report_func *f;

	/* its time in the call of a chosen function under it */
	if (t->n && t->stack[t->n - 1].brk != NO_FUNC)
		brk_add(r, t->stack[t->n - 1].brk, fr->func, t->pub.trace_ns - fr->ns);
	if (fr->func == NO_FUNC)
		return;
	if (fr->called && r->funcs[fr->func].calls_ix)
		call_done(r, t, fr, ret);
	if (fr->brk != NO_FUNC) {
		r->brks[fr->brk].next = r->free_brk;
		r->free_brk = fr->brk;
	}
	if (fr->edge != NO_FUNC) {
		r->edges[fr->edge].pub.ns += t->pub.trace_ns - fr->ns;
		r->edges[fr->edge].pub.insns += t->pub.insns - fr->insns;
	}
	if (fr->first) {
		f = &r->funcs[fr->func].pub;
		f->total_ns += t->pub.trace_ns - fr->ns;
		f->total_insns += t->pub.insns - fr->insns;
		f->total_branches += t->pub.branches - fr->branches;
	}
	for (uint32_t i = (uint32_t)mix(fr->func) & (t->on_cap - 1); t->on[i].func != NO_FUNC;
	     i = (i + 1) & (t->on_cap - 1))
		if (t->on[i].func == fr->func) {
			if (t->on[i].count)
				t->on[i].count--;
			break;
		}
}

static struct auxcap_report_func *top(struct auxcap_report *r, const struct rthread *t)
{
	if (!t->n || t->stack[t->n - 1].func == NO_FUNC)
		return NULL;
	return &r->funcs[t->stack[t->n - 1].func].pub;
}

/* ---- events ---------------------------------------------------------------------------- */

static void add_note(struct auxcap_report_note *notes, size_t *n, size_t max,
		     const struct auxcap_report_note *note)
{
	if (*n < max)
		notes[(*n)++] = *note;
}

/*
 * The data object holding @addr of @pid at @time: the variable there, else the mapping (an
 * anonymous one by its start, a file or a named region by its name), else none known.
 */
static void data_object(struct auxcap_report *r, int32_t pid, uint64_t addr, uint64_t time,
			struct mem_object *o)
{
	const char *name, *dso = NULL;
	uint64_t off;

	if (auxcap_decode_data_symbolize_at(r->d, pid, addr, time, &name, &off, &dso) == 1) {
		*o = (struct mem_object){ AUXCAP_REPORT_MEM_OBJ_VARIABLE, addr - off, addr - off,
					  name, dso };
	} else if (auxcap_decode_data_map_at(r->d, pid, addr, time, &name, &off) == 1) {
		bool anon = !strcmp(name, "//anon");

		*o = (struct mem_object){ AUXCAP_REPORT_MEM_OBJ_MAPPING,
					  anon ? addr - off : (uint64_t)(uintptr_t)name,
					  anon ? addr - off : 0, name, NULL };
	} else {
		*o = (struct mem_object){ AUXCAP_REPORT_MEM_OBJ_UNKNOWN, 0, 0, NULL, NULL };
	}
}

static int trace_event(struct auxcap_report *r, const struct auxcap_decode_event *ev)
{
	const struct auxcap_trace_event *te = ev->trace;
	const struct auxcap_decode_stack_change *sc = &ev->stack;
	int32_t key = ev->tid >= 0 ? ev->tid : -1 - ev->queue;
	struct auxcap_report_func *f;
	struct rthread *t;
	uint32_t before;
	int rc = 0;

	t = thread_get(r, key);
	if (!t)
		return -ENOMEM;
	if (ev->pid >= 0)
		t->pub.pid = ev->pid;
	if (!t->pub.trace_events && !t->pub.samples)
		t->pub.first_time = ev->time;
	t->pub.last_time = ev->time;
	t->pub.trace_events++;
	r->sum.trace_events++;
	if (!r->sum.trace_has_span || ev->time < r->sum.trace_first)
		r->sum.trace_first = ev->time;
	if (!r->sum.trace_has_span || ev->time > r->sum.trace_last)
		r->sum.trace_last = ev->time;
	r->sum.trace_has_span = true;

	/* The time since the thread's previous trace event: its innermost frame's. */
	if (t->have_last && t->last_timed && ev->has_time && ev->time > t->last) {
		uint64_t dt = ev->time - t->last;

		if (!t->paused) {
			t->pub.trace_ns += dt;
			r->sum.trace_ns += dt;
			r->sum.trace_timed = true;
			f = top(r, t);
			if (f)
				f->self_ns += dt;
		} else if (t->gap) {
			t->pub.gap_ns += dt;
			r->sum.gap_ns += dt;
		}
	}
	t->last = ev->time;
	t->have_last = true;
	t->last_timed = ev->has_time;
	t->paused = false;

	/* Frames the stage had before this event that the mirror lacks (the first frame). */
	before = sc->depth + sc->popped - (sc->pushed ? 1 : 0) - (sc->rebased ? 1 : 0);
	while (t->n < before && rc == 0 && t->n < STACK_MAX)
		rc = frame_push(t, func_of(r, ev->pid, te->ip, key), NULL);
	while (t->n > before)
		frame_pop(r, t, NULL);

	/* What ran up to this event ran in the frame the thread was in. */
	f = top(r, t);
	if (te->kind == AUXCAP_TRACE_BRANCH || te->kind == AUXCAP_TRACE_DISABLE) {
		t->pub.insns += te->ninsn;
		r->sum.insns += te->ninsn;
		if (f)
			f->self_insns += te->ninsn;
	}
	if (te->kind == AUXCAP_TRACE_BRANCH) {
		t->pub.branches++;
		r->sum.branches++;
		if (f)
			f->self_branches++;
	}

	/* The event's own change to the stack. */
	for (uint32_t k = 0; k < sc->popped && t->n; k++)
		frame_pop(r, t, ev);
	if (sc->rebased && rc == 0)
		rc = frame_push(t, func_of(r, ev->pid, te->to, key), NULL);
	if (sc->pushed && rc == 0) {
		uint32_t callee = func_of(r, ev->pid, te->to, key);

		uint32_t n = t->n;

		rc = frame_push(t, callee, ev);
		if (callee != NO_FUNC)
			r->funcs[callee].pub.calls++;
		/* a call of a chosen function: its callees' time is kept */
		if (rc == 0 && callee != NO_FUNC && t->n == n + 1 && r->funcs[callee].calls_ix) {
			t->stack[n].brk = brk_alloc(r);
			if (t->stack[n].brk == NO_FUNC)
				return -ENOMEM;
		}
		/* the call graph's edge from the frame under it */
		if (rc == 0 && r->opts.call_graph && callee != NO_FUNC && t->n == n + 1 && n &&
		    t->stack[n - 1].func != NO_FUNC) {
			uint32_t e = edge_get(r, t->stack[n - 1].func, callee);

			if (e == NO_FUNC)
				return -ENOMEM;
			t->stack[n].edge = e;
			r->edges[e].pub.calls++;
		}
	}

	switch (te->kind) {
	case AUXCAP_TRACE_DISABLE:
		t->paused = true;
		t->gap = false;
		break;
	case AUXCAP_TRACE_GAP: {
		struct auxcap_report_note n = { ev->time, ev->cpu, ev->tid, ev->queue, te->offset,
						te->ip, te->err, "" };

		t->paused = true;
		t->gap = true;
		t->pub.gaps++;
		r->sum.gaps++;
		snprintf(n.what, sizeof(n.what), "%s", te->what ? te->what : "undecodable trace");
		add_note(r->gap_notes, &r->sum.nr_gap_notes, r->opts.max_notes, &n);
		break;
	}
	case AUXCAP_TRACE_SAMPLE: {
		uint32_t fs = func_of(r, ev->pid, te->ip, key);
		size_t slot = r->nr_slots - 1;
		uint64_t *c = fs != NO_FUNC ? func_counts(r, fs) : NULL;

		r->slots[slot].samples++;
		if (fs != NO_FUNC && !c)
			return -ENOMEM;
		if (c) {
			c[slot]++;
			c[r->nr_slots + slot]++;
		}
		if (te->mem && rc == 0) {
			struct mem_object obj;
			bool has_obj = r->opts.mem && (te->flags & AUXCAP_TRACE_F_HAS_ADDR);

			if (has_obj)
				data_object(r, ev->pid, te->addr, ev->time, &obj);
			rc = mem_add(r->mem, te, ev->pid, ev->tid, ev->time, fs,
				     has_obj ? &obj : NULL);
		}
		break;
	}
	default:
		break;
	}
	return rc;
}

/* The slot of @es (an event of the capture); the last slot if it is not one of them. */
static size_t slot_of(struct auxcap_report *r, const struct auxcap_perf_evsel *es)
{
	return decode_evsel_slot(r->d, &r->slot_cache, es);
}

/* Count sample @seq of @slot in the total of the function at @addr, once per sample. */
static int count_total(struct auxcap_report *r, int32_t pid, int32_t key, uint64_t addr,
		       size_t slot, uint64_t seq)
{
	uint32_t g = func_of(r, pid, addr, key);
	uint64_t *c;

	if (g == NO_FUNC || !(c = func_counts(r, g)))
		return -ENOMEM;
	if (r->funcs[g].stamp != seq) {
		r->funcs[g].stamp = seq;
		c[r->nr_slots + slot]++;
	}
	return 0;
}

static int sample_event(struct auxcap_report *r, const struct auxcap_decode_event *ev)
{
	struct auxcap_callchain_frame fr[MAX_CALLCHAIN];
	size_t n;
	const struct auxcap_decode_sample_ctx *x = ev->ctx;
	size_t slot = slot_of(r, ev->evsel);
	int32_t key = ev->tid;
	uint64_t ip, seq = ++r->sample_seq, *c;
	uint32_t f;

	r->sum.samples++;
	r->slots[slot].samples++;
	if (x) {
		r->slots[slot].traced++;
		if (x->aligned)
			r->slots[slot].aligned++;
	}
	if (ev->tid >= 0) {
		struct rthread *t = thread_get(r, ev->tid);

		if (!t)
			return -ENOMEM;
		if (ev->pid >= 0)
			t->pub.pid = ev->pid;
		if (!t->pub.trace_events && !t->pub.samples)
			t->pub.first_time = ev->time;
		t->pub.last_time = ev->time;
		t->pub.samples++;
	}
	ip = x ? x->ip : ev->rec ? ev->rec->u.sample.ip : 0;
	f = func_of(r, ev->pid, ip, key);
	/* No symbol at the IP: the function the trace says it is in (its innermost frame). */
	if (f != NO_FUNC && !r->funcs[f].pub.name && !r->funcs[f].pub.kernel && x &&
	    x->aligned && x->nr_stack)
		f = func_of(r, ev->pid, x->stack[0].func, key);
	if (f == NO_FUNC || !(c = func_counts(r, f)))
		return -ENOMEM;
	c[slot]++;
	c[r->nr_slots + slot]++;
	r->funcs[f].stamp = seq;
	/* Total: the functions on its stack, the trace's, or where the trace did not place the
	 * sample, its callchain's (frame pointers' view) if it has one. */
	if (!(x && x->aligned && x->nr_stack) && ev->rec &&
	    (n = auxcap_sample_callchain(&ev->rec->u.sample, fr, MAX_CALLCHAIN)) > 0) {
		for (size_t i = 0; i < n && i < MAX_CALLCHAIN; i++)
			if (fr[i].ip && /* (0: where a frame-pointer walk ended) */
			    count_total(r, ev->pid, key, auxcap_callchain_frame_lookup(&fr[i]),
					slot, seq) < 0)
				return -ENOMEM;
		return 0;
	}
	for (size_t i = 0; x && i < x->nr_stack; i++)
		if (count_total(r, ev->pid, key, x->stack[i].func, slot, seq) < 0)
			return -ENOMEM;
	return 0;
}

static void loss_event(struct auxcap_report *r, const struct auxcap_decode_event *ev)
{
	const struct auxcap_record *rec = ev->rec;

	if (ev->auxtrace_error) {
		const struct auxcap_perf_auxtrace_error *e = ev->auxtrace_error;
		struct auxcap_report_note n = { ev->time, ev->cpu, ev->tid, -1, 0, e->ip,
						(int)e->code, "" };

		r->sum.auxtrace_errors++;
		snprintf(n.what, sizeof(n.what), "%.63s", e->msg);
		add_note(r->error_notes, &r->sum.nr_error_notes, r->opts.max_notes, &n);
		return;
	}
	if (!rec)
		return;
	switch (rec->type) {
	case PERF_RECORD_LOST:
		r->sum.lost_records++;
		r->sum.lost += ev->lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		r->sum.lost_samples_records++;
		r->sum.lost_samples += ev->lost;
		break;
	case PERF_RECORD_AUX:
		r->sum.aux_truncated += (rec->u.aux.flags & AUX_FLAG_TRUNCATED) != 0;
		r->sum.aux_partial += (rec->u.aux.flags & AUX_FLAG_PARTIAL) != 0;
		r->sum.aux_collision += (rec->u.aux.flags & AUX_FLAG_COLLISION) != 0;
		r->sum.aux_flagged_bytes += rec->u.aux.aux_size;
		break;
	default:
		break;
	}
}

int auxcap_report_event(struct auxcap_report *r, const struct auxcap_decode_event *ev)
{
	if (!r || !ev || r->finished)
		return -EINVAL;
	if (!auxcap_decode_filter_match(r->opts.filter, ev))
		return 0;
	r->sum.events++;
	if (ev->has_time && ev->time) {
		if (!r->sum.has_span || ev->time < r->sum.first_time)
			r->sum.first_time = ev->time;
		if (!r->sum.has_span || ev->time > r->sum.last_time)
			r->sum.last_time = ev->time;
		r->sum.has_span = true;
	}
	if (ev->cpu >= 0 && ev->cpu < MAX_CPUS)
		r->cpu_seen[ev->cpu / 8] |= (uint8_t)(1u << (ev->cpu % 8));
	switch (ev->kind) {
	case AUXCAP_DECODE_TRACE:
		return trace_event(r, ev);
	case AUXCAP_DECODE_SAMPLE:
		return sample_event(r, ev);
	case AUXCAP_DECODE_LOSS:
		loss_event(r, ev);
		return 0;
	case AUXCAP_DECODE_SIDEBAND:
		/* an exec: other code at the same addresses from now on */
		if (ev->rec && ev->rec->type == PERF_RECORD_COMM &&
		    (ev->rec->misc & PERF_RECORD_MISC_COMM_EXEC))
			memset(r->fcache, 0, FCACHE_SIZE * sizeof(*r->fcache));
		if (ev->stack.popped && ev->tid >= 0) {
			/* an exec: the old image's frames end */
			struct rthread *t = thread_get(r, ev->tid);

			if (!t)
				return -ENOMEM;
			for (uint32_t i = 0; i < ev->stack.popped && t->n; i++)
				frame_pop(r, t, NULL);
		}
		return 0;
	default:
		return 0;
	}
}

/* ---- the end, sorting ----------------------------------------------------------------- */

struct sort_item {
	uint64_t v, v2; /* the key, and what breaks its ties */
	struct rfunc *f;
};

static int name_cmp(const char *a, const char *b)
{
	if (!a || !b)
		return a ? -1 : b ? 1 : 0; /* named functions first */
	return strcmp(a, b);
}

static int cmp_sort_item(const void *pa, const void *pb)
{
	const struct sort_item *a = pa, *b = pb;
	const struct auxcap_report_func *x = &a->f->pub, *y = &b->f->pub;
	int c;

	if (a->v != b->v)
		return a->v < b->v ? 1 : -1;
	if (a->v2 != b->v2)
		return a->v2 < b->v2 ? 1 : -1;
	c = name_cmp(x->name, y->name);
	if (c)
		return c;
	if (x->kernel != y->kernel)
		return x->kernel ? 1 : -1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	c = name_cmp(x->dso, y->dso);
	if (c)
		return c;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

enum auxcap_report_sort_key auxcap_report_auto_key(const struct auxcap_report *r)
{
	if (r && r->sum.trace_timed)
		return AUXCAP_REPORT_SORT_SELF;
	if (r && r->sum.insns)
		return AUXCAP_REPORT_SORT_INSNS;
	return AUXCAP_REPORT_SORT_BRANCHES;
}

int auxcap_report_sort(struct auxcap_report *r, enum auxcap_report_sort_key key, size_t slot)
{
	struct sort_item *items;

	if (!r || !r->finished || key > AUXCAP_REPORT_SORT_SAMPLES_TOTAL ||
	    ((key == AUXCAP_REPORT_SORT_SAMPLES || key == AUXCAP_REPORT_SORT_SAMPLES_TOTAL) &&
	     slot >= r->nr_slots))
		return -EINVAL;
	if (key == AUXCAP_REPORT_SORT_AUTO)
		key = auxcap_report_auto_key(r);
	items = malloc((r->nr_funcs ? r->nr_funcs : 1) * sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_funcs; i++) {
		const struct auxcap_report_func *f = &r->funcs[i].pub;
		uint64_t v = 0, v2 = 0;

		switch (key) {
		case AUXCAP_REPORT_SORT_TOTAL:
			v = f->total_ns;
			break;
		case AUXCAP_REPORT_SORT_INSNS:
			v = f->self_insns;
			break;
		case AUXCAP_REPORT_SORT_BRANCHES:
			v = f->self_branches;
			break;
		case AUXCAP_REPORT_SORT_CALLS:
			v = f->calls;
			break;
		case AUXCAP_REPORT_SORT_SAMPLES:
			v = f->samples ? f->samples[slot] : 0;
			v2 = f->samples ? f->samples_total[slot] : 0;
			break;
		case AUXCAP_REPORT_SORT_SAMPLES_TOTAL:
			v = f->samples ? f->samples_total[slot] : 0;
			v2 = f->samples ? f->samples[slot] : 0;
			break;
		default:
			v = f->self_ns;
			break;
		}
		items[i] = (struct sort_item){ v, v2, &r->funcs[i] };
	}
	qsort(items, r->nr_funcs, sizeof(*items), cmp_sort_item);
	for (size_t i = 0; i < r->nr_funcs; i++)
		r->order[i] = items[i].f;
	free(items);
	return 0;
}

/* Funcs by (thread, kernel, file): the grouping of the files' table. */
static int cmp_by_dso(const void *pa, const void *pb)
{
	const struct auxcap_report_func *a = &(*(struct rfunc *const *)pa)->pub;
	const struct auxcap_report_func *b = &(*(struct rfunc *const *)pb)->pub;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (!a->dso && !b->dso && a->kernel != b->kernel)
		return a->kernel ? 1 : -1;
	return name_cmp(a->dso, b->dso);
}

static int cmp_dso(const void *pa, const void *pb)
{
	const struct auxcap_report_dso *a = pa, *b = pb;
	uint64_t x[4] = { a->self_ns, a->self_insns, a->self_branches, a->samples_sum };
	uint64_t y[4] = { b->self_ns, b->self_insns, b->self_branches, b->samples_sum };
	int c;

	for (int i = 0; i < 4; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? 1 : -1;
	c = name_cmp(a->dso, b->dso);
	if (c)
		return c;
	if (a->kernel != b->kernel)
		return a->kernel ? 1 : -1;
	return (a->tid > b->tid) - (a->tid < b->tid);
}

/* The files' table: the functions grouped by (thread, file), their self counts summed. */
static int make_dsos(struct auxcap_report *r)
{
	struct rfunc **by = malloc((r->nr_funcs ? r->nr_funcs : 1) * sizeof(*by));
	size_t n = 0;

	if (!by)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_funcs; i++)
		by[i] = &r->funcs[i];
	qsort(by, r->nr_funcs, sizeof(*by), cmp_by_dso);
	for (size_t i = 0; i < r->nr_funcs; i++)
		n += !i || cmp_by_dso(&by[i - 1], &by[i]);
	r->dsos = calloc(n ? n : 1, sizeof(*r->dsos));
	r->dso_counts = calloc((n ? n : 1) * r->nr_slots, sizeof(*r->dso_counts));
	if (!r->dsos || !r->dso_counts) {
		free(by);
		return -ENOMEM;
	}
	n = 0;
	for (size_t i = 0; i < r->nr_funcs; i++) {
		const struct auxcap_report_func *f = &by[i]->pub;
		struct auxcap_report_dso *d;

		if (!i || cmp_by_dso(&by[i - 1], &by[i])) {
			d = &r->dsos[n];
			d->dso = f->dso;
			d->kernel = !f->dso && f->kernel;
			d->tid = f->tid;
			d->samples = r->dso_counts + n * r->nr_slots;
			n++;
		}
		d = &r->dsos[n - 1];
		d->self_ns += f->self_ns;
		d->self_insns += f->self_insns;
		d->self_branches += f->self_branches;
		d->functions++;
		for (size_t k = 0; f->samples && k < r->nr_slots; k++) {
			r->dso_counts[(n - 1) * r->nr_slots + k] += f->samples[k];
			d->samples_sum += f->samples[k];
		}
	}
	free(by);
	r->nr_dsos = n;
	qsort(r->dsos, n, sizeof(*r->dsos), cmp_dso);
	return 0;
}

static int cmp_thread(const void *pa, const void *pb)
{
	const struct auxcap_report_thread *a = *(const struct auxcap_report_thread *const *)pa;
	const struct auxcap_report_thread *b = *(const struct auxcap_report_thread *const *)pb;

	if (a->trace_ns != b->trace_ns)
		return a->trace_ns < b->trace_ns ? 1 : -1;
	if (a->insns != b->insns)
		return a->insns < b->insns ? 1 : -1;
	if (a->samples != b->samples)
		return a->samples < b->samples ? 1 : -1;
	return (a->tid > b->tid) - (a->tid < b->tid);
}

static int cmp_edge(const void *pa, const void *pb)
{
	const struct auxcap_report_edge *a = &((const struct redge *)pa)->pub;
	const struct auxcap_report_edge *b = &((const struct redge *)pb)->pub;

	if (a->ns != b->ns)
		return a->ns < b->ns ? 1 : -1;
	if (a->insns != b->insns)
		return a->insns < b->insns ? 1 : -1;
	if (a->calls != b->calls)
		return a->calls < b->calls ? 1 : -1;
	if (a->caller->addr != b->caller->addr)
		return a->caller->addr < b->caller->addr ? -1 : 1;
	return (a->callee->addr > b->callee->addr) - (a->callee->addr < b->callee->addr);
}

/* The edges' functions set (funcs is final now), in their order; the index goes. */
static void edges_finish(struct auxcap_report *r)
{
	for (size_t i = 0; i < r->nr_edges; i++) {
		r->edges[i].pub.caller = &r->funcs[r->edges[i].caller].pub;
		r->edges[i].pub.callee = &r->funcs[r->edges[i].callee].pub;
	}
	if (r->nr_edges)
		qsort(r->edges, r->nr_edges, sizeof(*r->edges), cmp_edge);
	free(r->eindex);
	r->eindex = NULL;
}

static int cmp_calls(const void *pa, const void *pb)
{
	const struct auxcap_report_calls *a = &(*(const struct rcalls *const *)pa)->pub;
	const struct auxcap_report_calls *b = &(*(const struct rcalls *const *)pb)->pub;
	const struct auxcap_report_func *fa = a->func, *fb = b->func;
	int c;

	if (a->sum_ns != b->sum_ns)
		return a->sum_ns < b->sum_ns ? 1 : -1;
	if (a->sum_insns != b->sum_insns)
		return a->sum_insns < b->sum_insns ? 1 : -1;
	c = strcmp(fa->name ? fa->name : "", fb->name ? fb->name : "");
	if (c)
		return c;
	if (fa->addr != fb->addr)
		return fa->addr < fb->addr ? -1 : 1;
	return (fa->tid > fb->tid) - (fa->tid < fb->tid);
}

/* The chosen functions the trace called, in their order, their pointers set. */
static int calls_finish(struct auxcap_report *r)
{
	size_t n = 0;

	r->calls_order = malloc((r->nr_calls ? r->nr_calls : 1) * sizeof(*r->calls_order));
	if (!r->calls_order)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_calls; i++) {
		struct rcalls *c = &r->calls[i];
		struct auxcap_report_calls *p = &c->pub;

		if (!p->calls && !p->across_gap && !p->unfinished)
			continue;
		p->func = &r->funcs[c->func].pub;
		if (!p->timed)
			p->min_ns = 0;
		if (!p->calls)
			p->min_insns = 0;
		for (size_t k = 0; k < p->nr_slowest; k++) {
			const struct slow_ix *x = &c->slow_ix[k];

			c->slow[k].caller = x->caller != NO_FUNC ? &r->funcs[x->caller].pub : NULL;
			for (size_t j = 0; j < c->slow[k].nr_callees; j++)
				c->slow[k].callees[j].func = &r->funcs[x->callee[j]].pub;
		}
		p->slowest = c->slow;
		r->calls_order[n++] = c;
	}
	qsort(r->calls_order, n, sizeof(*r->calls_order), cmp_calls);
	r->nr_calls_done = n;
	return 0;
}

/* The public entry of function @f (the report's table no longer moves). */
static const struct auxcap_report_func *func_at(void *arg, uint32_t f)
{
	struct auxcap_report *r = arg;

	return &r->funcs[f].pub;
}

int auxcap_report_finish(struct auxcap_report *r)
{
	const struct auxcap_decode_info *info;
	size_t n = 0;

	if (!r || r->finished)
		return -EINVAL;
	/* Frames still open end with the trace. */
	for (size_t i = 0; i < r->tcap; i++) {
		struct rthread *t = &r->threads[i];

		if (!t->used)
			continue;
		while (t->n)
			frame_pop(r, t, NULL);
		t->pub.comm = t->pub.tid >= 0 ? auxcap_decode_comm(r->d, t->pub.tid) : NULL;
	}
	r->torder = malloc((r->tn ? r->tn : 1) * sizeof(*r->torder));
	r->order = malloc((r->nr_funcs ? r->nr_funcs : 1) * sizeof(*r->order));
	if (!r->torder || !r->order)
		return -ENOMEM;
	for (size_t i = 0; i < r->tcap; i++)
		if (r->threads[i].used)
			r->torder[n++] = &r->threads[i].pub;
	qsort(r->torder, n, sizeof(*r->torder), cmp_thread);
	r->sum.nr_threads = n;
	for (size_t i = 0; i < r->nr_funcs; i++) {
		r->funcs[i].pub.samples = r->funcs[i].counts;
		r->funcs[i].pub.samples_total =
			r->funcs[i].counts ? r->funcs[i].counts + r->nr_slots : NULL;
	}

	n = 0;
	for (int c = 0; c < MAX_CPUS; c++)
		n += (r->cpu_seen[c / 8] >> (c % 8)) & 1;
	r->cpus = calloc(n ? n : 1, sizeof(*r->cpus));
	if (!r->cpus)
		return -ENOMEM;
	n = 0;
	for (int c = 0; c < MAX_CPUS; c++)
		if ((r->cpu_seen[c / 8] >> (c % 8)) & 1)
			r->cpus[n++] = c;
	r->sum.cpus = r->cpus;
	r->sum.nr_cpus = n;
	if (make_dsos(r) < 0 || calls_finish(r) < 0 || mem_finish(r->mem, func_at, r) < 0)
		return -ENOMEM;
	edges_finish(r);

	info = auxcap_decode_get_info(r->d);
	r->sum.nr_queues = info->nr_queues;
	for (size_t i = 0; auxcap_decode_get_queue(r->d, i); i++) {
		r->sum.aux_bytes += auxcap_decode_get_queue(r->d, i)->bytes;
		r->sum.discontinuities += auxcap_decode_get_queue(r->d, i)->discontinuities;
	}
	r->sum.missing_binaries = info->missing_binaries;
	r->sum.no_loss = !r->sum.lost_records && !r->sum.lost_samples_records &&
			 !r->sum.aux_truncated && !r->sum.aux_partial && !r->sum.aux_collision &&
			 !r->sum.auxtrace_errors && !r->sum.gaps && !r->sum.discontinuities;
	r->finished = true;
	return auxcap_report_sort(r, AUXCAP_REPORT_SORT_AUTO, 0);
}

/* ---- life and accessors ---------------------------------------------------------------- */

int auxcap_report_new(struct auxcap_decode *d, const struct auxcap_report_opts *opts,
		      struct auxcap_report **ret)
{
	struct auxcap_report *r;

	if (!d || !ret || (opts && opts->sz < sizeof(*opts)))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->d = d;
	r->free_brk = NO_FUNC;
	r->opts.sz = sizeof(r->opts);
	if (opts)
		r->opts = *opts;
	if (!r->opts.max_notes)
		r->opts.max_notes = AUXCAP_REPORT_NOTES_DEFAULT;
	if (!r->opts.slowest)
		r->opts.slowest = AUXCAP_REPORT_SLOWEST_DEFAULT;
	r->nr_slots = auxcap_decode_nr_evsels(d) + 1;
	r->slots = calloc(r->nr_slots, sizeof(*r->slots));
	r->fcache = calloc(FCACHE_SIZE, sizeof(*r->fcache));
	r->gap_notes = calloc(r->opts.max_notes, sizeof(*r->gap_notes));
	r->error_notes = calloc(r->opts.max_notes, sizeof(*r->error_notes));
	r->mem = mem_new(r->opts.mem);
	if (!r->slots || !r->fcache || !r->gap_notes || !r->error_notes || !r->mem) {
		auxcap_report_free(r);
		return -ENOMEM;
	}
	for (size_t i = 0; i + 1 < r->nr_slots; i++) {
		r->slots[i].evsel = auxcap_decode_evsel(d, i);
		r->slots[i].name = r->slots[i].evsel ? r->slots[i].evsel->name : NULL;
	}
	r->slots[r->nr_slots - 1].name = auxcap_decode_get_info(d)->backend;
	r->sum.nr_slots = r->nr_slots;
	r->sum.slots = r->slots;
	r->sum.gap_notes = r->gap_notes;
	r->sum.error_notes = r->error_notes;
	*ret = r;
	return 0;
}

int auxcap_report_run(struct auxcap_decode *d, const struct auxcap_report_opts *opts,
		      struct auxcap_report **ret)
{
	const struct auxcap_decode_event *ev;
	struct auxcap_report *r;
	int rc;

	if (!ret)
		return -EINVAL;
	rc = auxcap_report_new(d, opts, &r);
	if (rc < 0)
		return rc;
	while ((rc = auxcap_decode_next(d, &ev)) == 1) {
		rc = auxcap_report_event(r, ev);
		if (rc < 0)
			break;
	}
	if (rc == 0)
		rc = auxcap_report_finish(r);
	if (rc < 0) {
		auxcap_report_free(r);
		return rc;
	}
	*ret = r;
	return 0;
}

void auxcap_report_free(struct auxcap_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nr_funcs; i++)
		free(r->funcs[i].counts);
	free(r->funcs);
	free(r->index);
	for (size_t i = 0; i < r->nr_calls; i++) {
		free(r->calls[i].slow);
		free(r->calls[i].slow_ix);
	}
	free(r->calls);
	free(r->calls_order);
	free(r->edges);
	free(r->eindex);
	free(r->brks);
	free(r->order);
	free(r->dsos);
	free(r->dso_counts);
	free(r->fcache);
	mem_free(r->mem);
	for (size_t i = 0; i < r->tcap; i++)
		if (r->threads[i].used)
			thread_fini(&r->threads[i]);
	free(r->threads);
	free(r->torder);
	free(r->slots);
	free(r->cpus);
	free(r->gap_notes);
	free(r->error_notes);
	free(r);
}

const struct auxcap_report_summary *auxcap_report_get_summary(const struct auxcap_report *r)
{
	return r ? &r->sum : NULL;
}

const struct auxcap_report_mem *auxcap_report_get_mem(const struct auxcap_report *r)
{
	return r ? mem_total(r->mem) : NULL;
}

const struct auxcap_report_mem_sources *
auxcap_report_get_mem_sources(const struct auxcap_report *r)
{
	return r ? mem_sources(r->mem) : NULL;
}

size_t auxcap_report_nr_mem_funcs(const struct auxcap_report *r)
{
	return r && r->finished ? mem_nr_funcs(r->mem) : 0;
}

const struct auxcap_report_mem_func *auxcap_report_get_mem_func(const struct auxcap_report *r,
								 size_t i)
{
	return r && r->finished ? mem_func(r->mem, i) : NULL;
}

size_t auxcap_report_nr_mem_lines(const struct auxcap_report *r)
{
	return r && r->finished ? mem_nr_lines(r->mem) : 0;
}

const struct auxcap_report_mem_line *auxcap_report_get_mem_line(const struct auxcap_report *r,
								 size_t i)
{
	return r && r->finished ? mem_line(r->mem, i) : NULL;
}

uint64_t auxcap_report_mem_lines_untracked(const struct auxcap_report *r)
{
	return r ? mem_untracked(r->mem) : 0;
}

size_t auxcap_report_nr_mem_objects(const struct auxcap_report *r)
{
	return r && r->finished ? mem_nr_objects(r->mem) : 0;
}

const struct auxcap_report_mem_object *
auxcap_report_get_mem_object(const struct auxcap_report *r, size_t i)
{
	return r && r->finished ? mem_object(r->mem, i) : NULL;
}

uint64_t auxcap_report_mem_objects_untracked(const struct auxcap_report *r)
{
	return r ? mem_objects_untracked(r->mem) : 0;
}

size_t auxcap_report_nr_funcs(const struct auxcap_report *r)
{
	return r && r->finished ? r->nr_funcs : 0;
}

const struct auxcap_report_func *auxcap_report_get_func(const struct auxcap_report *r, size_t i)
{
	return r && r->finished && i < r->nr_funcs ? &r->order[i]->pub : NULL;
}

size_t auxcap_report_nr_threads(const struct auxcap_report *r)
{
	return r && r->finished ? r->sum.nr_threads : 0;
}

const struct auxcap_report_thread *auxcap_report_get_thread(const struct auxcap_report *r,
							    size_t i)
{
	return r && r->finished && i < r->sum.nr_threads ? r->torder[i] : NULL;
}

size_t auxcap_report_nr_dsos(const struct auxcap_report *r)
{
	return r && r->finished ? r->nr_dsos : 0;
}

const struct auxcap_report_dso *auxcap_report_get_dso(const struct auxcap_report *r, size_t i)
{
	return r && r->finished && i < r->nr_dsos ? &r->dsos[i] : NULL;
}

size_t auxcap_report_nr_calls(const struct auxcap_report *r)
{
	return r && r->finished ? r->nr_calls_done : 0;
}

const struct auxcap_report_calls *auxcap_report_get_calls(const struct auxcap_report *r,
							   size_t i)
{
	return r && r->finished && i < r->nr_calls_done ? &r->calls_order[i]->pub : NULL;
}

size_t auxcap_report_nr_edges(const struct auxcap_report *r)
{
	return r && r->finished ? r->nr_edges : 0;
}

const struct auxcap_report_edge *auxcap_report_get_edge(const struct auxcap_report *r, size_t i)
{
	return r && r->finished && i < r->nr_edges ? &r->edges[i].pub : NULL;
}
