/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Functions instruction by instruction (auxcap/decode_annotate.h): stretches of sequential
 * code counted from the merged stream's trace events, walked in the binaries' code at the
 * end.
 *
 * While the stream runs nothing is looked up: each thread's flow gives stretches [resume,
 * branch source] and points (a branch source's taken count, a sample's IP), kept in one
 * open-addressing table keyed by (process image, addresses).  A process image is a pid and
 * the number of execs it has made (an exec puts other code at the same addresses).  At
 * auxcap_annotate_finish() each entry is looked up once in the mappings in place when it
 * last ran.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auxcap/decode_annotate.h"
#include "auxcap/decode_report.h"
#include "decode_int.h"
#include "disasm.h"
#include "grow.h"
#include "out_int.h"

/* A stretch of sequential code (@start to its last instruction @end), or a point (@point:
 * the instruction at @start). */
struct aent {
	uint64_t start, end;
	int32_t pid;
	uint32_t epoch;	   /* the process image (pid, execs): 0 marks an empty slot */
	uint64_t time;	   /* perf time it last ran: its code is looked up as mapped then */
	uint64_t count;	   /* stretch: runs; point: branches taken from it */
	uint64_t *samples; /* point: per slot (NULL until a sample) */
	struct auxcap_annotate_mem *mem; /* point: its data accesses (NULL until one) */
	uint32_t ninsn;	   /* stretch: instructions per run the trace gave (0: not known; a
			    * stretch run with another count is another entry) */
	bool point;
	bool until; /* stretch: it ends where tracing stopped (DISABLE), at @end or just before it:
		     * an asynchronous stop (an interrupt) names the next instruction, not run */
};

/* A thread's flow. */
struct athread {
	uint64_t resume;  /* where its code ran on from (a branch target, where tracing began) */
	uint64_t pending; /* instructions the trace counted since then */
	bool have;	  /* @resume is known */
	bool insn_mode;	  /* its trace has INSN events: they count, stretches do not */
};

struct afunc {
	struct auxcap_annotate_func pub;
	struct auxcap_sym_func sym; /* name, file, link address, lines (borrowed from @d) */
	uint64_t time;		    /* when its code was looked up (for reading it again) */
	size_t cap;		    /* entries at @execs, @taken (one per byte offset) */
	uint64_t *execs, *taken;
	uint64_t *samples; /* cap * nr_slots, NULL until a sample */
	uint64_t *totals;  /* pub.samples: nr_slots */
	struct auxcap_annotate_mem *mem; /* cap, NULL until a data access */
	struct auxcap_annotate_mem *mem_total; /* pub.mem (owned: @f moves as funcs grows) */
};

struct auxcap_annotate {
	struct auxcap_decode *d;
	struct auxcap_annotate_opts opts;
	bool finished;
	struct auxcap_disasm *dis;
	struct out_tmap *threads; /* tid (or -1 - queue) -> struct athread */
	struct out_tmap *epochs;  /* pid -> uint32_t: its image */
	uint32_t next_epoch;
	struct aent *ents; /* open addressing, @ecap a power of two */
	size_t ecap, nents;
	struct afunc *funcs;
	size_t nfuncs, fcap;
	uint32_t *findex; /* open addressing over funcs by (file, vaddr): index + 1, 0 empty */
	size_t ficap;
	struct auxcap_annotate_summary sum;
	uint64_t *slot_samples, *slot_placed;
	struct evsel_slot_cache slot_cache; /* the sample slot of the last event */
	/* auxcap_annotate_insns() */
	struct auxcap_annotate_insn *insns;
	size_t insns_cap;
	uint8_t *code;
	size_t code_cap;
	struct afunc **by_place; /* auxcap_annotate_coverage(): funcs by (file, vaddr) */
	/* the code window of a walk */
	uint8_t win[4096];
	uint64_t win_addr;
	size_t win_len;
	int32_t win_pid;
	uint64_t win_time;
};

/* ---- the table of stretches and points ------------------------------------------------- */

static size_t ent_hash(const struct aent *k, size_t cap)
{
	uint64_t h = k->start * 0x9e3779b97f4a7c15ull ^ k->end * 0xc2b2ae3d27d4eb4full ^
		     ((uint64_t)(uint32_t)k->pid << 32 | k->epoch) ^
		     ((uint64_t)k->ninsn << 2 | (uint64_t)k->until << 1 | k->point) *
			     0x94d049bb133111ebull;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(h ^ (h >> 32)) & (cap - 1);
}

static int ents_grow(struct auxcap_annotate *a)
{
	size_t cap = a->ecap ? a->ecap * 2 : 4096;
	struct aent *n;

	if (cap > SIZE_MAX / sizeof(*n))
		return -ENOMEM;
	n = calloc(cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < a->ecap; i++) {
		const struct aent *e = &a->ents[i];
		size_t j;

		if (!e->epoch)
			continue;
		for (j = ent_hash(e, cap); n[j].epoch;
		     j = (j + 1) & (cap - 1))
			;
		n[j] = *e;
	}
	free(a->ents);
	a->ents = n;
	a->ecap = cap;
	return 0;
}

/* The entry of key @k (start, end, pid, epoch, ninsn, point, until), made if new; NULL if out
 * of memory. */
static struct aent *ent_get(struct auxcap_annotate *a, const struct aent *k)
{
	size_t i;

	if ((a->nents + 1) * 4 > a->ecap * 3 && ents_grow(a) < 0)
		return NULL;
	for (i = ent_hash(k, a->ecap); a->ents[i].epoch; i = (i + 1) & (a->ecap - 1)) {
		struct aent *e = &a->ents[i];

		if (e->start == k->start && e->end == k->end && e->pid == k->pid &&
		    e->epoch == k->epoch && e->ninsn == k->ninsn && e->point == k->point &&
		    e->until == k->until)
			return e;
	}
	a->nents++;
	a->ents[i] = *k;
	return &a->ents[i];
}

/* ---- while the stream runs ------------------------------------------------------------ */

/* The image of process @pid now (1 until its first exec); 0 if out of memory. */
static uint32_t epoch_of(struct auxcap_annotate *a, int32_t pid)
{
	bool is_new;
	uint32_t *e = out_tmap_get(a->epochs, pid, &is_new);

	if (!e)
		return 0;
	if (!*e)
		*e = 1;
	return *e;
}

static int add_stretch(struct auxcap_annotate *a, const struct auxcap_decode_event *ev,
		       uint64_t start, uint64_t end, uint64_t ninsn, bool until)
{
	struct aent k = { .start = start, .end = end, .pid = ev->pid, .epoch = epoch_of(a, ev->pid),
			  .ninsn = ninsn > UINT32_MAX ? 0 : (uint32_t)ninsn, .until = until };
	struct aent *e = k.epoch ? ent_get(a, &k) : NULL;

	if (!e)
		return -ENOMEM;
	e->count++;
	e->time = ev->time;
	return 0;
}

/* Count data access @t (its mem, AUXCAP_TRACE_MEM_*, and data source) in @m. */
static void mem_count(struct auxcap_annotate_mem *m, const struct auxcap_trace_event *t)
{
	enum auxcap_report_mem_level lv = auxcap_report_mem_level_from(t->mem, t->source);
	uint32_t mem = t->mem;
	uint64_t lat = t->total_latency;

	m->accesses++;
	m->l1_misses += lv == AUXCAP_REPORT_MEM_MID || lv == AUXCAP_REPORT_MEM_LLC ||
			lv == AUXCAP_REPORT_MEM_DRAM;
	m->llc_misses += lv == AUXCAP_REPORT_MEM_DRAM;
	m->tlb_walks += !!(mem & AUXCAP_TRACE_MEM_TLB_MISS);
	m->lat += lat;
	m->peer += auxcap_report_mem_peer(t->source);
}

static void mem_sum(struct auxcap_annotate_mem *m, const struct auxcap_annotate_mem *x)
{
	m->accesses += x->accesses;
	m->l1_misses += x->l1_misses;
	m->llc_misses += x->llc_misses;
	m->tlb_walks += x->tlb_walks;
	m->lat += x->lat;
	m->peer += x->peer;
}

/* A point at @ip: a taken branch (@slot SIZE_MAX) or a sample of @slot (a trace sample @t:
 * its data access too). */
static int add_point(struct auxcap_annotate *a, const struct auxcap_decode_event *ev, uint64_t ip,
		     size_t slot, const struct auxcap_trace_event *t)
{
	struct aent k = { .start = ip, .end = ip, .pid = ev->pid, .epoch = epoch_of(a, ev->pid),
			  .point = true };
	struct aent *e = k.epoch ? ent_get(a, &k) : NULL;

	if (!e)
		return -ENOMEM;
	e->time = ev->time;
	if (slot == SIZE_MAX) {
		e->count++;
		return 0;
	}
	if (!e->samples && !(e->samples = calloc(a->sum.nr_slots, sizeof(uint64_t))))
		return -ENOMEM;
	e->samples[slot]++;
	if (t && t->mem) {
		if (!e->mem && !(e->mem = calloc(1, sizeof(*e->mem))))
			return -ENOMEM;
		mem_count(e->mem, t);
	}
	return 0;
}

static int trace_event(struct auxcap_annotate *a, const struct auxcap_decode_event *ev)
{
	const struct auxcap_trace_event *t = ev->trace;
	bool is_new, ip_known = !(t->flags & AUXCAP_TRACE_F_IP_UNKNOWN);
	struct athread *th = out_tmap_get(a->threads,
					  ev->tid >= 0 ? ev->tid : -1 - (int64_t)ev->queue, &is_new);
	int r = 0;

	if (!th)
		return -ENOMEM;
	switch (t->kind) {
	case AUXCAP_TRACE_INSN:
		th->insn_mode = true;
		a->sum.insns++;
		if (ip_known)
			return add_stretch(a, ev, t->ip, t->ip, 1, false);
		a->sum.insns_unplaced++;
		return 0;
	case AUXCAP_TRACE_BLOCK:
		th->insn_mode = true;
		a->sum.insns += t->ninsn;
		if (ip_known)
			return add_stretch(a, ev, t->ip, t->to, t->ninsn, false);
		a->sum.insns_unplaced += t->ninsn;
		return 0;
	case AUXCAP_TRACE_BRANCH:
	case AUXCAP_TRACE_DISABLE:
		if (th->insn_mode) {
			/* the INSN events counted the instructions */
		} else if (th->have && ip_known) {
			a->sum.insns += th->pending + t->ninsn;
			r = add_stretch(a, ev, th->resume, t->ip, th->pending + t->ninsn,
					t->kind == AUXCAP_TRACE_DISABLE);
		} else {
			/* where the run began is not known: a branch itself ran (where tracing
			 * stopped, the instruction may not have) */
			uint64_t n = th->pending + t->ninsn,
				 one = n && t->kind == AUXCAP_TRACE_BRANCH ? 1 : 0;

			a->sum.insns += n;
			a->sum.insns_unplaced += n - one;
			if (ip_known && (one || !n))
				r = add_stretch(a, ev, t->ip, t->ip, one, false);
			else
				a->sum.insns_unplaced += one;
		}
		th->pending = 0;
		if (r == 0 && t->kind == AUXCAP_TRACE_BRANCH && ip_known)
			r = add_point(a, ev, t->ip, SIZE_MAX, NULL);
		th->have = t->kind == AUXCAP_TRACE_BRANCH && t->to;
		th->resume = t->to;
		return r;
	case AUXCAP_TRACE_ENABLE:
		a->sum.insns += th->pending;
		a->sum.insns_unplaced += th->pending;
		th->pending = 0;
		th->have = ip_known && t->ip;
		th->resume = t->ip;
		return 0;
	case AUXCAP_TRACE_GAP:
		a->sum.insns += th->pending;
		a->sum.insns_unplaced += th->pending;
		th->pending = 0;
		th->have = false;
		return 0;
	case AUXCAP_TRACE_SAMPLE:
		a->slot_samples[a->sum.nr_slots - 1]++;
		return ip_known && t->ip ? add_point(a, ev, t->ip, a->sum.nr_slots - 1, t) : 0;
	default:
		/* anything else the backend counts instructions up to is still the same flow */
		th->pending += t->ninsn;
		return 0;
	}
}

int auxcap_annotate_event(struct auxcap_annotate *a, const struct auxcap_decode_event *ev)
{
	if (!a || !ev || a->finished)
		return -EINVAL;
	if (!auxcap_decode_filter_match(a->opts.filter, ev))
		return 0;
	switch (ev->kind) {
	case AUXCAP_DECODE_TRACE:
		return trace_event(a, ev);
	case AUXCAP_DECODE_SAMPLE: {
		size_t slot = decode_evsel_slot(a->d, &a->slot_cache, ev->evsel);
		uint64_t ip = ev->ctx ? ev->ctx->ip : ev->rec ? ev->rec->u.sample.ip : 0;

		a->slot_samples[slot]++;
		return ip ? add_point(a, ev, ip, slot, NULL) : 0;
	}
	case AUXCAP_DECODE_SIDEBAND:
		/* an exec: the process has other code at the same addresses from now on */
		if (ev->rec && ev->rec->type == PERF_RECORD_COMM &&
		    (ev->rec->misc & PERF_RECORD_MISC_COMM_EXEC) && ev->pid >= 0) {
			bool is_new;
			uint32_t *e = out_tmap_get(a->epochs, ev->pid, &is_new);

			if (!e)
				return -ENOMEM;
			*e = ++a->next_epoch;
		}
		return 0;
	default:
		return 0;
	}
}

/* ---- the end: entries to functions ---------------------------------------------------- */

static size_t func_hash(size_t file, uint64_t vaddr, size_t cap)
{
	uint64_t h = (vaddr ^ ((uint64_t)file << 48)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 20) & (cap - 1);
}

static int findex_grow(struct auxcap_annotate *a)
{
	size_t cap = a->ficap ? a->ficap * 2 : 256;
	uint32_t *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < a->nfuncs; i++) {
		size_t j;

		for (j = func_hash(a->funcs[i].sym.file, a->funcs[i].sym.vaddr, cap); n[j];
		     j = (j + 1) & (cap - 1))
			;
		n[j] = (uint32_t)i + 1;
	}
	free(a->findex);
	a->findex = n;
	a->ficap = cap;
	return 0;
}

/* The function of @fs (a symbol found at perf time @time in process @pid), made if new. */
static struct afunc *func_get(struct auxcap_annotate *a, const struct auxcap_sym_func *fs,
			      int32_t pid, uint64_t time)
{
	size_t i;
	struct afunc *f;

	if ((a->nfuncs + 1) * 2 > a->ficap && findex_grow(a) < 0)
		return NULL;
	for (i = func_hash(fs->file, fs->vaddr, a->ficap); a->findex[i];
	     i = (i + 1) & (a->ficap - 1)) {
		f = &a->funcs[a->findex[i] - 1];
		if (f->sym.file == fs->file && f->sym.vaddr == fs->vaddr)
			return f;
	}
	if (a->nfuncs >= UINT32_MAX - 1 ||
	    auxcap_grow_array(&a->funcs, &a->fcap, a->nfuncs + 1, 64, sizeof(*a->funcs)) < 0)
		return NULL;
	f = &a->funcs[a->nfuncs];
	memset(f, 0, sizeof(*f));
	f->sym = *fs;
	f->time = time;
	f->pub.name = fs->name;
	f->pub.dso = fs->dso;
	f->pub.addr = fs->start;
	f->pub.vaddr = fs->vaddr;
	f->pub.size = fs->size;
	f->pub.pid = pid;
	a->findex[i] = (uint32_t)++a->nfuncs;
	return f;
}

/* Room at byte @off of @f's counters (a function without a size grows with what it ran). */
static int func_room(struct auxcap_annotate *a, struct afunc *f, uint64_t off)
{
	size_t old = f->cap, need;

	if (off < f->cap)
		return 0;
	if (off >= (1u << 26)) /* 64 MiB of one function: not code */
		return -ERANGE;
	need = (size_t)off + 1;
	if (f->pub.size > need && f->pub.size < (1u << 26))
		need = (size_t)f->pub.size;
	{
		size_t c = old;

		if (auxcap_grow_array(&f->execs, &c, need, 64, sizeof(uint64_t)) < 0)
			return -ENOMEM;
		c = old;
		if (auxcap_grow_array(&f->taken, &c, need, 64, sizeof(uint64_t)) < 0)
			return -ENOMEM;
		if (f->samples) {
			uint64_t *s = realloc(f->samples, c * a->sum.nr_slots * sizeof(uint64_t));

			if (!s)
				return -ENOMEM;
			f->samples = s;
			memset(s + old * a->sum.nr_slots, 0,
			       (c - old) * a->sum.nr_slots * sizeof(uint64_t));
		}
		if (f->mem) {
			struct auxcap_annotate_mem *m = realloc(f->mem, c * sizeof(*m));

			if (!m)
				return -ENOMEM;
			f->mem = m;
			memset(m + old, 0, (c - old) * sizeof(*m));
		}
		memset(f->execs + old, 0, (c - old) * sizeof(uint64_t));
		memset(f->taken + old, 0, (c - old) * sizeof(uint64_t));
		f->cap = c;
	}
	return 0;
}

/* The function holding @addr of @pid as mapped at @time, and the offset of @addr in it;
 * NULL with *@ret_err 0 for code without a symbol, else an error. */
static struct afunc *func_at(struct auxcap_annotate *a, int32_t pid, uint64_t addr,
			     uint64_t time, uint64_t *ret_off, int *ret_err)
{
	struct auxcap_sym_func fs;
	struct afunc *f;
	int r;

	*ret_err = 0;
	if (auxcap_symbols_func_at(a->d->syms, pid, addr, time, &fs) != 1)
		return NULL;
	f = func_get(a, &fs, pid, time);
	if (!f) {
		*ret_err = -ENOMEM;
		return NULL;
	}
	*ret_off = addr - fs.start;
	r = func_room(a, f, *ret_off);
	if (r < 0) {
		*ret_err = r == -ERANGE ? 0 : r;
		return NULL;
	}
	return f;
}

/* The code at @addr of @pid as mapped at @time, at least 16 bytes where there are: a
 * pointer into the walk's window and the bytes there in *@ret_len (0: none). */
static const uint8_t *code_at(struct auxcap_annotate *a, int32_t pid, uint64_t addr,
			      uint64_t time, size_t *ret_len)
{
	int n;

	if (a->win_len && a->win_pid == pid && a->win_time == time && addr >= a->win_addr &&
	    addr - a->win_addr + 16 <= a->win_len) {
		*ret_len = a->win_len - (size_t)(addr - a->win_addr);
		return a->win + (addr - a->win_addr);
	}
	n = auxcap_symbols_read_at(a->d->syms, pid, addr, time, a->win, sizeof(a->win));
	a->win_len = n > 0 ? (size_t)n : 0;
	a->win_addr = addr;
	a->win_pid = pid;
	a->win_time = time;
	*ret_len = a->win_len;
	return a->win;
}

/* Walk stretch @e: the instructions from its start to its end, their addresses and lengths
 * into @at (grown).  Returns how many, or -EBADMSG when the code does not end there (not
 * readable, not decodable, or the walk passes its end), -ENOMEM. */
static long walk(struct auxcap_annotate *a, const struct aent *e, uint64_t **at, size_t *cap)
{
	char text[96];
	uint64_t addr = e->start;
	size_t n = 0;

	for (;;) {
		size_t len;
		const uint8_t *code = code_at(a, e->pid, addr, e->time, &len);
		int l = len ? auxcap_disasm_insn(a->dis, 64, code, len, addr, text, sizeof(text))
			    : -EBADMSG;

		if (l <= 0)
			return -EBADMSG;
		if (auxcap_grow_array(at, cap, n + 1, 256, sizeof(uint64_t)) < 0)
			return -ENOMEM;
		(*at)[n++] = addr;
		if (addr == e->end)
			return (long)n;
		addr += (unsigned int)l;
		if (addr > e->end || n >= (1u << 24))
			return -EBADMSG;
	}
}

static int place_stretch(struct auxcap_annotate *a, const struct aent *e, uint64_t **at,
			 size_t *cap)
{
	struct auxcap_sym_func fs;
	struct afunc *f;
	uint64_t base;
	long n;
	int err;

	n = walk(a, e, at, cap);
	if (n == -ENOMEM)
		return -ENOMEM;
	/* a trace without instruction counts (Intel BTS): the walk's, at least the branch */
	if (!e->ninsn)
		a->sum.insns += e->count * (n > 0 ? (uint64_t)n : 1);
	if (auxcap_symbols_func_at(a->d->syms, e->pid, e->start, e->time, &fs) != 1) {
		/* code without a symbol (kernel code without the kernel's): not annotated */
		a->sum.insns_nosym += e->count * (e->ninsn ? e->ninsn : n > 0 ? (uint64_t)n : 1);
		return 0;
	}
	/* stopped before @end ran (its count says so) */
	if (e->until && e->ninsn && n >= 2 && (uint64_t)n == e->ninsn + 1)
		n--;
	if (n < 0 || (e->ninsn && (uint64_t)n != e->ninsn)) {
		a->sum.stretches_bad++;
		a->sum.insns_unplaced += e->count * (e->ninsn ? e->ninsn : 1);
		return 0;
	}
	/* the function it starts in, as looked up above */
	f = func_get(a, &fs, e->pid, e->time);
	if (!f)
		return -ENOMEM;
	err = func_room(a, f, e->start - fs.start);
	if (err == -ERANGE) { /* (64 MiB into a function: not code) */
		a->sum.insns_nosym += e->count * (uint64_t)n;
		return 0;
	}
	if (err < 0)
		return err;
	base = fs.start;
	for (long i = 0; i < n; i++) {
		uint64_t addr = (*at)[i], off = 0;

		/* (@base: where @f starts in this process, which need not be where it started in
		 * the one it was first seen in: a library loaded elsewhere in another process) */
		if (!f || addr < base || addr - base >= f->cap ||
		    (f->pub.size && addr - base >= f->pub.size)) {
			f = func_at(a, e->pid, addr, e->time, &off, &err);
			if (!f) {
				if (err)
					return err;
				a->sum.insns_nosym += e->count;
				continue;
			}
			base = addr - off;
		}
		off = addr - base;
		f->execs[off] += e->count;
		f->pub.insns += e->count;
		a->sum.insns_placed += e->count;
	}
	return 0;
}

static int place_point(struct auxcap_annotate *a, const struct aent *e)
{
	uint64_t off = 0;
	int err;
	struct afunc *f = func_at(a, e->pid, e->start, e->time, &off, &err);
	size_t ns = a->sum.nr_slots;

	if (!f)
		return err;
	f->taken[off] += e->count;
	f->pub.taken += e->count;
	if (e->mem) {
		if ((!f->mem && !(f->mem = calloc(f->cap, sizeof(*f->mem)))) ||
		    (!f->mem_total && !(f->mem_total = calloc(1, sizeof(*f->mem_total)))))
			return -ENOMEM;
		mem_sum(&f->mem[off], e->mem);
		mem_sum(f->mem_total, e->mem);
		f->pub.mem = f->mem_total;
	}
	if (!e->samples)
		return 0;
	if (!f->samples && !(f->samples = calloc(f->cap * ns, sizeof(uint64_t))))
		return -ENOMEM;
	if (!f->totals && !(f->totals = calloc(ns, sizeof(uint64_t))))
		return -ENOMEM;
	for (size_t s = 0; s < ns; s++) {
		f->samples[off * ns + s] += e->samples[s];
		f->totals[s] += e->samples[s];
		f->pub.samples_sum += e->samples[s];
		a->slot_placed[s] += e->samples[s];
	}
	f->pub.samples = f->totals;
	return 0;
}

static int cmp_func(const void *pa, const void *pb)
{
	const struct auxcap_annotate_func *x = &((const struct afunc *)pa)->pub,
					  *y = &((const struct afunc *)pb)->pub;
	int c;

	if (x->insns != y->insns)
		return x->insns < y->insns ? 1 : -1;
	if (x->samples_sum != y->samples_sum)
		return x->samples_sum < y->samples_sum ? 1 : -1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	c = strcmp(x->dso ? x->dso : "", y->dso ? y->dso : "");
	if (c)
		return c;
	return (x->vaddr > y->vaddr) - (x->vaddr < y->vaddr);
}

/* One past the last byte offset of @f with a count (0: none). */
static uint64_t counted_end(const struct auxcap_annotate *a, const struct afunc *f)
{
	for (size_t o = f->cap; o-- > 0;) {
		if (f->execs[o] || f->taken[o])
			return o + 1;
		for (size_t s = 0; f->samples && s < a->sum.nr_slots; s++)
			if (f->samples[o * a->sum.nr_slots + s])
				return o + 1;
	}
	return 0;
}

int auxcap_annotate_finish(struct auxcap_annotate *a)
{
	uint64_t *at = NULL;
	size_t cap = 0;
	int r = 0;

	if (!a || a->finished)
		return -EINVAL;
	a->finished = true;
	for (size_t i = 0; r == 0 && i < a->ecap; i++) {
		const struct aent *e = &a->ents[i];

		if (!e->epoch)
			continue;
		if (e->point) {
			r = place_point(a, e);
		} else {
			a->sum.stretches++;
			r = place_stretch(a, e, &at, &cap);
		}
	}
	free(at);
	/* a function without a size spans what was counted in it */
	for (size_t i = 0; i < a->nfuncs; i++)
		if (!a->funcs[i].pub.size)
			a->funcs[i].pub.size = counted_end(a, &a->funcs[i]);
	if (a->nfuncs)
		qsort(a->funcs, a->nfuncs, sizeof(*a->funcs), cmp_func);
	return r;
}

/* ---- instructions of a function ----------------------------------------------------- */

int auxcap_annotate_insns(struct auxcap_annotate *a, size_t i,
			  const struct auxcap_annotate_insn **ret, size_t *ret_n)
{
	struct auxcap_decode_inline fr[2];
	struct afunc *f;
	size_t size, n = 0, ns;
	uint64_t off = 0;
	int got;

	if (!a || !a->finished || i >= a->nfuncs || !ret || !ret_n)
		return -EINVAL;
	f = &a->funcs[i];
	ns = a->sum.nr_slots;
	size = (size_t)f->pub.size;
	if (size > f->cap && size >= (1u << 26))
		size = f->cap;
	if (auxcap_grow(&a->code, &a->code_cap, size + 16, 4096) < 0)
		return -ENOMEM;
	memset(a->code, 0, size + 16);
	got = auxcap_symbols_read_at(a->d->syms, f->pub.pid, f->pub.addr, f->time, a->code,
				     size + 15);
	if (got <= 0)
		return -ENOENT;
	while (off < size) {
		struct auxcap_annotate_insn *in;
		int l;

		if (auxcap_grow_array(&a->insns, &a->insns_cap, n + 1, 64, sizeof(*a->insns)) < 0)
			return -ENOMEM;
		in = &a->insns[n++];
		memset(in, 0, sizeof(*in));
		in->addr = f->pub.addr + off;
		in->offset = (uint32_t)off;
		l = off < (uint64_t)got ? auxcap_disasm_insn(a->dis, 64, a->code + off,
							     (size_t)got - off, in->addr, in->text,
							     sizeof(in->text))
					: -EBADMSG;
		in->valid = l > 0;
		if (l <= 0) {
			l = 1;
			snprintf(in->text, sizeof(in->text), "(bad)");
		}
		/* a counted instruction starting inside this one: cut it there */
		for (int k = 1; k < l && off + (uint64_t)k < f->cap; k++)
			if (f->execs[off + k] || f->taken[off + k]) {
				l = k;
				in->valid = false;
				snprintf(in->text, sizeof(in->text), "(bad)");
				break;
			}
		in->size = (uint8_t)l;
		in->branch = in->valid && auxcap_disasm_is_branch(in->text);
		if (off < f->cap) {
			in->execs = f->execs[off];
			in->taken = f->taken[off];
			if (f->mem && f->mem[off].accesses)
				in->mem = &f->mem[off];
			if (f->samples)
				for (size_t s = 0; s < ns; s++)
					if (f->samples[off * ns + s]) {
						in->samples = f->samples + off * ns;
						break;
					}
		}
		if (auxcap_symbols_func_srcline(&f->sym, off, &in->src_file, &in->src_line,
						&in->src_dir) != 1) {
			in->src_file = in->src_dir = NULL;
			in->src_line = 0;
		}
		if (auxcap_symbols_func_inlines(&f->sym, off, fr, 2) == 2)
			in->src_func = fr[0].name ? fr[0].name : "[unknown]";
		off += (unsigned int)l;
	}
	*ret = a->insns;
	*ret_n = n;
	return 0;
}

int auxcap_annotate_inlines(struct auxcap_annotate *a, size_t i, uint32_t offset,
			    struct auxcap_decode_inline *frames, size_t n)
{
	if (!a || i >= a->nfuncs || !frames || n < 2)
		return 0;
	return auxcap_symbols_func_inlines(&a->funcs[i].sym, offset, frames, n);
}

/* ---- coverage ------------------------------------------------------------------------ */

static int cmp_by_place(const void *pa, const void *pb)
{
	const struct afunc *x = *(const struct afunc *const *)pa, *y = *(const struct afunc *const *)pb;

	if (x->sym.file != y->sym.file)
		return x->sym.file < y->sym.file ? -1 : 1;
	return (x->sym.vaddr > y->sym.vaddr) - (x->sym.vaddr < y->sym.vaddr);
}

/* Runs of the instruction at link-time address @vaddr of file @file (0: not counted). */
static uint64_t execs_at(const struct auxcap_annotate *a, size_t file, uint64_t vaddr)
{
	size_t lo = 0, hi = a->nfuncs;
	const struct afunc *f;

	while (lo < hi) { /* the last function of @file starting at or before @vaddr */
		size_t mid = lo + (hi - lo) / 2;
		const struct afunc *m = a->by_place[mid];

		if (m->sym.file < file || (m->sym.file == file && m->sym.vaddr <= vaddr))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	f = a->by_place[lo - 1];
	if (f->sym.file != file || vaddr - f->sym.vaddr >= f->cap)
		return 0;
	return f->execs[vaddr - f->sym.vaddr];
}

struct cov_ctx {
	const struct auxcap_annotate *a;
	size_t file;
	auxcap_annotate_line_fn fn;
	void *arg;
};

static int cov_row(void *arg, const char *file, const char *dir, unsigned int line,
		   uint64_t vaddr)
{
	struct cov_ctx *c = arg;

	return c->fn(c->arg, file, dir, line, execs_at(c->a, c->file, vaddr));
}

int auxcap_annotate_coverage(struct auxcap_annotate *a, const char *dso,
			     auxcap_annotate_line_fn line_fn, auxcap_annotate_cov_func_fn func_fn,
			     void *arg)
{
	const struct afunc *owner = NULL;
	struct cov_ctx c;
	int r;

	if (!a || !a->finished || !dso || !line_fn)
		return -EINVAL;
	for (size_t i = 0; i < a->nfuncs && !owner; i++)
		if (a->funcs[i].pub.dso == dso || !strcmp(a->funcs[i].pub.dso, dso))
			owner = &a->funcs[i];
	if (!owner)
		return -ENOENT;
	if (!owner->sym.elf)
		return -ENODATA;
	if (!a->by_place) {
		a->by_place = malloc((a->nfuncs ? a->nfuncs : 1) * sizeof(*a->by_place));
		if (!a->by_place)
			return -ENOMEM;
		for (size_t i = 0; i < a->nfuncs; i++)
			a->by_place[i] = &a->funcs[i];
		qsort(a->by_place, a->nfuncs, sizeof(*a->by_place), cmp_by_place);
	}
	c = (struct cov_ctx){ a, owner->sym.file, line_fn, arg };
	r = auxcap_symbols_cov_rows(&owner->sym, cov_row, &c);
	if (r <= 0)
		return r < 0 ? r : -ENODATA;
	for (size_t i = 0; func_fn; i++) {
		const char *name, *file, *dir;
		unsigned int line;
		uint64_t vaddr;

		if (!auxcap_symbols_cov_func(&owner->sym, i, &name, &vaddr, &file, &line, &dir))
			break;
		if (file && (r = func_fn(arg, name, file, dir, line,
					 execs_at(a, owner->sym.file, vaddr))) < 0)
			return r;
	}
	return 0;
}

/* ---- the object ------------------------------------------------------------------------- */

int auxcap_annotate_new(struct auxcap_decode *d, const struct auxcap_annotate_opts *opts,
			struct auxcap_annotate **ret)
{
	struct auxcap_annotate *a;
	int r;

	if (!d || !ret || (opts && opts->sz < sizeof(*opts)))
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->d = d;
	if (opts)
		a->opts = *opts;
	a->opts.sz = sizeof(a->opts);
	a->next_epoch = 1;
	a->sum.nr_slots = auxcap_decode_nr_evsels(d) + 1;
	a->slot_samples = calloc(a->sum.nr_slots, sizeof(uint64_t));
	a->slot_placed = calloc(a->sum.nr_slots, sizeof(uint64_t));
	a->sum.slot_samples = a->slot_samples;
	a->sum.slot_placed = a->slot_placed;
	r = !a->slot_samples || !a->slot_placed ? -ENOMEM : auxcap_disasm_new(&a->dis);
	if (r == 0)
		r = out_tmap_new(&a->threads, sizeof(struct athread));
	if (r == 0)
		r = out_tmap_new(&a->epochs, sizeof(uint32_t));
	if (r < 0) {
		auxcap_annotate_free(a);
		return r;
	}
	*ret = a;
	return 0;
}

int auxcap_annotate_run(struct auxcap_decode *d, const struct auxcap_annotate_opts *opts,
			struct auxcap_annotate **ret)
{
	const struct auxcap_decode_event *ev;
	struct auxcap_annotate *a = NULL;
	int r = auxcap_annotate_new(d, opts, &a);

	while (r == 0 && (r = auxcap_decode_next(d, &ev)) == 1)
		r = auxcap_annotate_event(a, ev);
	if (r == 0)
		r = auxcap_annotate_finish(a);
	if (r < 0) {
		auxcap_annotate_free(a);
		return r;
	}
	*ret = a;
	return 0;
}

const struct auxcap_annotate_summary *auxcap_annotate_get_summary(const struct auxcap_annotate *a)
{
	return a ? &a->sum : NULL;
}

size_t auxcap_annotate_nr_funcs(const struct auxcap_annotate *a)
{
	return a && a->finished ? a->nfuncs : 0;
}

const struct auxcap_annotate_func *auxcap_annotate_get_func(const struct auxcap_annotate *a,
							    size_t i)
{
	return a && a->finished && i < a->nfuncs ? &a->funcs[i].pub : NULL;
}

void auxcap_annotate_free(struct auxcap_annotate *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->ecap; i++) {
		free(a->ents[i].samples);
		free(a->ents[i].mem);
	}
	for (size_t i = 0; i < a->nfuncs; i++) {
		free(a->funcs[i].mem);
		free(a->funcs[i].mem_total);
		free(a->funcs[i].execs);
		free(a->funcs[i].taken);
		free(a->funcs[i].samples);
		free(a->funcs[i].totals);
	}
	free(a->ents);
	free(a->funcs);
	free(a->by_place);
	free(a->findex);
	free(a->insns);
	free(a->code);
	free(a->slot_samples);
	free(a->slot_placed);
	out_tmap_free(a->threads);
	out_tmap_free(a->epochs);
	auxcap_disasm_free(a->dis);
	free(a);
}
