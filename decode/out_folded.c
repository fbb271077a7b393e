/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The folded-stacks writer, for flamegraph.pl and speedscope: "main;run;work;leaf_add 42"
 * lines, root first, sorted, one per distinct stack (of function names).
 *
 * Stacks are nodes of a tree (parent, function, image).  The image tells code at the same
 * address apart: a process gets one of its own, a forked child its parent's, an exec a new one
 * (two programs linked at the same address, or without ASLR, name their frames each with its
 * own symbols).  Each thread's current stack, mirrored from the decode stage's stack changes,
 * points at a node.  Weights:
 *   - samples: each counter sample adds 1 to the node of its reconstructed stack (aligned or
 *     not); a sample whose IP the trace did not place, with a callchain (PERF_SAMPLE_CALLCHAIN,
 *     frame pointers' view), to the node of its callchain instead; a sample of a thread
 *     without trace and without callchain counts as "[no trace]" (in a capture with no trace
 *     at all, as its IP's function, one frame deep), samples lost (LOST_SAMPLES, LOST
 *     records) as "[lost samples]";
 *   - time: the trace time between two events of a thread goes to the node it was in; trace
 *     lost in a gap (from the gap to the queue's next event) goes to "[gap]"; time with
 *     tracing off is not counted;
 *   - instructions: the instructions the trace says ran in each node (for trace without
 *     time; a trace that does not count them, Intel BTS, counts its branches).
 * AUXCAP_OUT_WEIGHT_AUTO uses samples when the capture had any, else time (ns) when the
 * trace has time, else instructions.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "out_int.h"

#define FUNC_GAP 1     /* "[gap]" */
#define FUNC_NOTRACE 2 /* "[no trace]" */
#define FUNC_LOST 3    /* "[lost samples]": LOST_SAMPLES, and LOST records (their samples) */
#define ROOT 0

struct fnode {
	uint64_t func;	 /* 0 for a function inlined in its parent's (@inl) */
	const char *inl; /* that function's name (--inline; borrowed from the decode), or NULL */
	uint32_t parent;
	uint32_t image; /* the process image it ran in (image_of()), 0 for "[gap]" and such */
	int32_t pid;    /* a process of that image: the one its name is looked up in */
	uint64_t samples, ns, insns;
	uint64_t time; /* when it was first on a stack: its name is the mapping's then */
};

struct fthread {
	uint32_t *nodes; /* the stack, outermost first (owned) */
	uint32_t n, cap;
	uint64_t last;
	bool paused;
	bool gap; /* paused by a gap: the pause is counted as "[gap]" */
};

struct folded {
	struct fnode *nodes;
	size_t n, cap;
	uint32_t *index; /* open addressing over nodes, by (parent, func, image); 0 = empty (root) */
	size_t icap;
	struct out_tmap *threads;
	struct out_tmap *images; /* pid -> uint32_t image (image_of()) */
	uint32_t nr_images;
	int32_t last_pid;    /* the last pid image_of() answered for, and its image (a cache; */
	uint32_t last_image; /* last_pid -1 when not valid) */
	uint64_t samples, ns;
	uint64_t now; /* time of the event being added */
};

static int fd_init(struct auxcap_out *w)
{
	struct folded *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	w->priv = f;
	f->cap = 1024;
	f->nodes = calloc(f->cap, sizeof(*f->nodes));
	f->icap = 2048;
	f->index = calloc(f->icap, sizeof(*f->index));
	if (!f->nodes || !f->index)
		return -ENOMEM;
	f->n = 1; /* the root */
	f->last_pid = -1;
	if (out_tmap_new(&f->images, sizeof(uint32_t)) < 0)
		return -ENOMEM;
	return out_tmap_new(&f->threads, sizeof(struct fthread));
}

static void free_thread(void *arg, int64_t key, void *value)
{
	struct fthread *t = value;

	(void)arg;
	(void)key;
	free(t->nodes);
}

static void fd_fini(struct auxcap_out *w)
{
	struct folded *f = w->priv;

	if (!f)
		return;
	if (f->threads)
		out_tmap_each(f->threads, free_thread, NULL);
	out_tmap_free(f->threads);
	out_tmap_free(f->images);
	free(f->nodes);
	free(f->index);
	free(f);
}

/* Process @pid's image: its own until a fork gives it its parent's or an exec a new one;
 * 0 for no process (pid -1) or when memory runs out. */
static uint32_t image_of(struct folded *f, int32_t pid)
{
	uint32_t *im;
	bool is_new;

	if (pid < 0)
		return 0;
	if (pid == f->last_pid)
		return f->last_image;
	im = out_tmap_get(f->images, pid, &is_new);
	if (!im)
		return 0;
	if (is_new)
		*im = ++f->nr_images;
	f->last_pid = pid;
	f->last_image = *im;
	return *im;
}

/* A fork (@parent_pid's image goes on in @pid) or, with @parent_pid -1, an exec in @pid. */
static void image_set(struct folded *f, int32_t pid, int32_t parent_pid)
{
	uint32_t image = parent_pid >= 0 ? image_of(f, parent_pid) : ++f->nr_images;
	uint32_t *im;
	bool is_new;

	if (pid < 0)
		return;
	im = out_tmap_get(f->images, pid, &is_new);
	if (im)
		*im = image;
	f->last_pid = -1;
}

static size_t hash(uint32_t parent, uint64_t func, const char *inl, uint32_t image, size_t cap)
{
	func ^= (uint64_t)(uintptr_t)inl;
	return (size_t)(((func ^ ((uint64_t)parent << 32) ^ ((uint64_t)image << 12)) *
			 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

/* The node (@parent, @func or, for an inlined function, @inl) of process @pid's image, made
 * if new; 0 (the root) if out of memory.  A pid of -1 is no process ("[gap]" and such, or a
 * thread not known). */
static uint32_t node_get(struct folded *f, uint32_t parent, uint64_t func, const char *inl,
			 int32_t pid)
{
	uint32_t image = image_of(f, pid);
	size_t i;

	if ((f->n + 1) * 2 > f->icap) {
		size_t cap = 2 * f->icap;
		uint32_t *ni = calloc(cap, sizeof(*ni));

		if (!ni)
			return ROOT;
		for (size_t k = 1; k < f->n; k++) {
			const struct fnode *nd = &f->nodes[k];

			for (i = hash(nd->parent, nd->func, nd->inl, nd->image, cap); ni[i];
			     i = (i + 1) & (cap - 1))
				;
			ni[i] = (uint32_t)k;
		}
		free(f->index);
		f->index = ni;
		f->icap = cap;
	}
	for (i = hash(parent, func, inl, image, f->icap); f->index[i];
	     i = (i + 1) & (f->icap - 1)) {
		struct fnode *nd = &f->nodes[f->index[i]];

		if (nd->parent == parent && nd->func == func && nd->image == image && nd->inl == inl)
			return f->index[i];
	}
	if (f->n == f->cap || f->n >= UINT32_MAX) {
		size_t cap = 2 * f->cap;
		struct fnode *nn = realloc(f->nodes, cap * sizeof(*nn));

		if (!nn)
			return ROOT;
		f->nodes = nn;
		f->cap = cap;
	}
	f->nodes[f->n] = (struct fnode){ func, inl, parent, image, pid, 0, 0, 0, f->now };
	f->index[i] = (uint32_t)f->n;
	return (uint32_t)f->n++;
}

static uint32_t child(struct folded *f, uint32_t parent, uint64_t func, int32_t pid)
{
	return node_get(f, parent, func, NULL, pid);
}

/* With --inline, the functions inlined at @addr under @node (the function the code is in),
 * outermost first; returns the innermost's node (@node where nothing is inlined). */
static uint32_t inline_nodes(struct auxcap_out *w, uint32_t node, int32_t pid, uint64_t addr)
{
	struct auxcap_decode_inline fr[AUXCAP_DECODE_INLINE_MAX];
	int k = out_inlines(w, pid, addr, fr);

	for (int i = k - 1; i-- > 0;)
		node = node_get(w->priv, node, 0, out_inline_name(&fr[i]), pid);
	return node;
}

static int tpush(struct fthread *t, uint32_t node)
{
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 32;
		uint32_t *nn = realloc(t->nodes, cap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		t->nodes = nn;
		t->cap = cap;
	}
	t->nodes[t->n++] = node;
	return 0;
}

static uint32_t top(const struct fthread *t)
{
	return t->n ? t->nodes[t->n - 1] : ROOT;
}

static int trace_event(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	struct folded *f = w->priv;
	const struct auxcap_trace_event *te = ev->trace;
	const struct auxcap_decode_stack_change *sc = &ev->stack;
	int64_t key = ev->tid >= 0 ? ev->tid : -1 - (int64_t)ev->queue;
	struct fthread *t;
	uint32_t before;
	bool is_new;
	int r = 0;

	t = out_tmap_get(f->threads, key, &is_new);
	if (!t)
		return -ENOMEM;
	if (!is_new && ev->time > t->last) {
		f->ns += ev->time - t->last;
		if (!t->paused)
			f->nodes[top(t)].ns += ev->time - t->last;
		else if (t->gap) {
			uint32_t g = child(f, ROOT, FUNC_GAP, -1); /* may move f->nodes */

			f->nodes[g].ns += ev->time - t->last;
		}
	}
	t->last = ev->time;
	t->paused = false;
	/* The instructions up to this event ran in the frame the thread was in. */
	if (te->kind == AUXCAP_TRACE_BRANCH || te->kind == AUXCAP_TRACE_DISABLE)
		f->nodes[top(t)].insns += te->ninsn ? te->ninsn : 1; /* BTS: the branch only */
	if (te->kind == AUXCAP_TRACE_GAP || te->kind == AUXCAP_TRACE_DISABLE) {
		t->paused = true;
		t->gap = te->kind == AUXCAP_TRACE_GAP;
		return 0;
	}
	before = sc->depth + sc->popped - (sc->pushed ? 1 : 0) - (sc->rebased ? 1 : 0);
	while (t->n < before && r == 0)
		r = tpush(t, child(f, top(t), te->ip, ev->pid));
	if (t->n > before)
		t->n = before;
	t->n -= sc->popped < t->n ? sc->popped : t->n;
	if (sc->rebased && r == 0)
		r = tpush(t, child(f, top(t), te->to, ev->pid));
	if (sc->pushed && r == 0)
		r = tpush(t, child(f, top(t), te->to, ev->pid));
	return r;
}

/* A frame's node key: the start of its function (a return address's: of the call's), else
 * the address. */
static uint64_t frame_func(struct auxcap_out *w, int32_t pid,
			   const struct auxcap_callchain_frame *fr)
{
	uint64_t a = auxcap_callchain_frame_lookup(fr), off = 0;

	if (auxcap_decode_symbolize(w->d, pid, a, NULL, &off, NULL) == 1 && off <= a)
		return a - off;
	return a;
}

/* A sample with no stack from the trace counts on its callchain's, if it has one (frames at
 * address 0, where a frame-pointer walk ends, left out).  Returns false if it has none. */
static bool callchain_stack(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	struct folded *f = w->priv;
	struct auxcap_callchain_frame fr[OUT_MAX_CALLCHAIN];
	size_t n = auxcap_sample_callchain(&ev->rec->u.sample, fr, OUT_MAX_CALLCHAIN);
	uint32_t node = ROOT;

	if (!n)
		return false;
	for (size_t i = n < OUT_MAX_CALLCHAIN ? n : OUT_MAX_CALLCHAIN; i-- > 0;) {
		if (!fr[i].ip)
			continue;
		node = child(f, node, frame_func(w, ev->pid, &fr[i]), ev->pid);
		node = inline_nodes(w, node, ev->pid, auxcap_callchain_frame_lookup(&fr[i]));
	}
	f->nodes[node].samples++; /* (child() may move f->nodes) */
	return true;
}

static void sample_event(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	struct folded *f = w->priv;
	const struct auxcap_decode_sample_ctx *x = ev->ctx;
	uint32_t node = ROOT;

	f->samples++;
	if ((!x || !x->aligned || !x->nr_stack) && ev->rec && callchain_stack(w, ev))
		return;
	if (!x && !auxcap_decode_get_info(w->d)->backend && ev->rec) {
		/* A capture without trace: each sample is its IP's function (perf report's flat
		 * profile). */
		node = child(f, ROOT, ev->rec->u.sample.ip, ev->pid); /* may move f->nodes */
		f->nodes[node].samples++;
		return;
	}
	if (!x || !x->nr_stack) {
		node = child(f, ROOT, FUNC_NOTRACE, -1); /* may move f->nodes */
		f->nodes[node].samples++;
		return;
	}
	for (size_t i = x->nr_stack; i-- > 0;) {
		uint64_t at = i ? x->stack[i - 1].call_site : x->ip;

		node = child(f, node, x->stack[i].func, ev->pid);
		if (at)
			node = inline_nodes(w, node, ev->pid, at);
	}
	f->nodes[node].samples++;
}

static int fd_event(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	struct folded *f = w->priv;

	f->now = ev->time;
	if (ev->kind == AUXCAP_DECODE_TRACE)
		return trace_event(w, ev);
	if (ev->kind == AUXCAP_DECODE_SAMPLE)
		sample_event(w, ev);
	if (ev->kind == AUXCAP_DECODE_SIDEBAND && ev->rec) {
		const struct auxcap_record *rec = ev->rec;

		if (rec->type == PERF_RECORD_FORK && rec->u.task.pid != rec->u.task.ppid)
			image_set(f, (int32_t)rec->u.task.pid, (int32_t)rec->u.task.ppid);
		else if (rec->type == PERF_RECORD_COMM && (rec->misc & PERF_RECORD_MISC_COMM_EXEC))
			image_set(f, ev->pid, -1);
	}
	if (ev->kind == AUXCAP_DECODE_SIDEBAND && ev->stack.popped && ev->tid >= 0) {
		/* an exec: the old image's frames end */
		bool is_new;
		struct fthread *t = out_tmap_get(f->threads, ev->tid, &is_new);

		if (!t)
			return -ENOMEM;
		t->n = t->n > ev->stack.popped ? t->n - ev->stack.popped : 0;
	}
	if (ev->kind == AUXCAP_DECODE_LOSS && ev->lost && ev->rec &&
	    (ev->rec->type == PERF_RECORD_LOST || ev->rec->type == PERF_RECORD_LOST_SAMPLES)) {
		uint32_t node = child(f, ROOT, FUNC_LOST, -1); /* may move f->nodes */

		f->nodes[node].samples += ev->lost;
		f->samples += ev->lost;
	}
	return 0;
}

struct line {
	char *text;
	uint64_t weight;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

/* Append the name of node @k's function to @buf at *@len (frames separated by ';'). */
static void append_name(struct auxcap_out *w, const struct fnode *nd, char *buf, size_t size,
			size_t *len)
{
	char name[256];
	const char *s;

	if (nd->inl)
		s = nd->inl;
	else if (nd->func == FUNC_GAP)
		s = "[gap]";
	else if (nd->func == FUNC_NOTRACE)
		s = "[no trace]";
	else if (nd->func == FUNC_LOST)
		s = "[lost samples]";
	else
		s = out_sym_at(w, nd->pid, nd->func, nd->time, name, sizeof(name));
	if (*len && *len + 1 < size)
		buf[(*len)++] = ';';
	for (; *s && *len + 1 < size; s++)
		buf[(*len)++] = *s == ';' ? ':' : *s;
	buf[*len] = '\0';
}

static int fd_finish(struct auxcap_out *w)
{
	struct folded *f = w->priv;
	enum auxcap_out_weight wt = w->opts.weight;
	struct line *lines;
	size_t nl = 0;
	uint32_t *path;
	int r = 0;

	if (wt == AUXCAP_OUT_WEIGHT_AUTO)
		wt = f->samples ? AUXCAP_OUT_WEIGHT_SAMPLES
		     : f->ns	? AUXCAP_OUT_WEIGHT_TIME
				: AUXCAP_OUT_WEIGHT_INSNS;
	lines = calloc(f->n, sizeof(*lines));
	path = calloc(f->n, sizeof(*path));
	if (!lines || !path) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t k = 1; k < f->n; k++) {
		uint64_t wgt = wt == AUXCAP_OUT_WEIGHT_SAMPLES ? f->nodes[k].samples
			       : wt == AUXCAP_OUT_WEIGHT_TIME	 ? f->nodes[k].ns
								 : f->nodes[k].insns;
		char buf[4096];
		size_t depth = 0, len = 0;

		if (!wgt)
			continue;
		for (uint32_t n = (uint32_t)k; n != ROOT; n = f->nodes[n].parent)
			path[depth++] = n;
		buf[0] = '\0';
		while (depth-- > 0)
			append_name(w, &f->nodes[path[depth]], buf, sizeof(buf), &len);
		lines[nl].text = strdup(buf);
		if (!lines[nl].text) {
			r = -ENOMEM;
			goto out;
		}
		lines[nl++].weight = wgt;
	}
	qsort(lines, nl, sizeof(*lines), cmp_line);
	for (size_t i = 0; i < nl;) {
		uint64_t sum = 0;
		size_t j;

		for (j = i; j < nl && !strcmp(lines[j].text, lines[i].text); j++)
			sum += lines[j].weight;
		fprintf(w->f, "%s %" PRIu64 "\n", lines[i].text, sum);
		i = j;
	}
out:
	for (size_t i = 0; lines && i < nl; i++)
		free(lines[i].text);
	free(lines);
	free(path);
	return r;
}

const struct out_ops auxcap_out_folded_ops = {
	.init = fd_init,
	.event = fd_event,
	.finish = fd_finish,
	.fini = fd_fini,
};
