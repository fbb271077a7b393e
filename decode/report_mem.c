/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The report's memory figures (report_mem.h): each sampled data access is added to the sum, to
 * its function's row (an array indexed by the report's function index), to its cache line's
 * and to its data object's.  Lines and objects are entries of the same kind of table (open
 * addressing by process, kind and address), each keeping the few functions and threads that
 * touched it most.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "report_mem.h"

#define NO_FUNC UINT32_MAX
#define LINE_EMPTY UINT32_MAX

/* An entry of a table: a cache line, or a data object (whose public form, an
 * auxcap_report_mem_object holding @pub, mem_finish() makes). */
struct mline {
	struct auxcap_report_mem_line pub;
	uint64_t key;  /* lines: the line's address; objects: mem_object.key */
	uint32_t kind; /* lines: 0; objects: enum auxcap_report_mem_object_kind + 1 */
	const char *name, *dso; /* objects' (borrowed from the decode) */
	uint32_t func[AUXCAP_REPORT_LINE_FUNCS]; /* the report's indexes of pub.funcs */
	int32_t tids[AUXCAP_REPORT_LINE_THREADS];
	uint8_t stored; /* bit k: tids[k] stored to the line */
};

struct mfunc {
	struct auxcap_report_mem_func pub;
	bool used; /* it made an access */
};

struct mtable {
	struct mline *v; /* in the order met */
	size_t n, cap;
	uint32_t *index; /* open addressing over @v; LINE_EMPTY: free */
	size_t icap;
	size_t max;	    /* entries kept at most */
	struct mline **order; /* after finish: sorted */
	uint64_t untracked; /* accesses to entries past @max */
};

struct rmem {
	bool detail;
	struct auxcap_report_mem total;
	struct auxcap_report_mem_sources src;
	struct mfunc *funcs; /* indexed by function (detail) */
	size_t cap_funcs;
	struct auxcap_report_mem_func **forder; /* after finish: used ones, sorted */
	size_t nr_forder;
	struct mtable lines, objs; /* detail */
	struct auxcap_report_mem_object *obj_pub; /* after finish: the objects, sorted */
	/* accesses per (object, function), exactly: an object's top functions */
	struct mpair *pairs;
	size_t nr_pairs, cap_pairs;
	uint32_t *pindex; /* open addressing over @pairs; LINE_EMPTY: free */
	size_t picap;
};

struct mpair {
	uint32_t obj;  /* index into objs.v */
	uint32_t func; /* the report's index, NO_FUNC: none */
	uint64_t accesses;
};

struct rmem *mem_new(bool detail)
{
	struct rmem *m = calloc(1, sizeof(*m));

	if (m) {
		m->detail = detail;
		m->lines.max = AUXCAP_REPORT_MEM_LINES_MAX;
		m->objs.max = AUXCAP_REPORT_MEM_OBJECTS_MAX;
	}
	return m;
}

static void table_free(struct mtable *t)
{
	free(t->v);
	free(t->index);
	free(t->order);
}

void mem_free(struct rmem *m)
{
	if (!m)
		return;
	free(m->funcs);
	free(m->forder);
	table_free(&m->lines);
	table_free(&m->objs);
	free(m->obj_pub);
	free(m->pairs);
	free(m->pindex);
	free(m);
}

const char *auxcap_report_mem_level_key(enum auxcap_report_mem_level level)
{
	static const char *const keys[AUXCAP_REPORT_MEM_LEVELS] = {
		[AUXCAP_REPORT_MEM_L1] = "l1",	 [AUXCAP_REPORT_MEM_MID] = "l2",
		[AUXCAP_REPORT_MEM_LLC] = "llc", [AUXCAP_REPORT_MEM_DRAM] = "memory",
		[AUXCAP_REPORT_MEM_NA] = "na",
	};

	return (unsigned)level < AUXCAP_REPORT_MEM_LEVELS ? keys[level] : NULL;
}

enum auxcap_report_mem_level auxcap_report_mem_level_of(uint32_t mem)
{
	if (mem & AUXCAP_TRACE_MEM_LLC_MISS)
		return AUXCAP_REPORT_MEM_DRAM;
	if (mem & AUXCAP_TRACE_MEM_LLC_ACCESS)
		return AUXCAP_REPORT_MEM_LLC;
	if (mem & AUXCAP_TRACE_MEM_L1_MISS)
		return AUXCAP_REPORT_MEM_MID;
	if (mem & AUXCAP_TRACE_MEM_L1_ACCESS)
		return AUXCAP_REPORT_MEM_L1;
	return AUXCAP_REPORT_MEM_NA;
}

enum auxcap_report_mem_level auxcap_report_mem_level_from(uint32_t mem, uint32_t source)
{
	switch (source) {
	case AUXCAP_TRACE_SRC_L1:
		return AUXCAP_REPORT_MEM_L1;
	case AUXCAP_TRACE_SRC_L2:
	case AUXCAP_TRACE_SRC_PEER_CORE:
		return AUXCAP_REPORT_MEM_MID;
	case AUXCAP_TRACE_SRC_LOCAL_CLUSTER:
	case AUXCAP_TRACE_SRC_SYS_CACHE:
	case AUXCAP_TRACE_SRC_PEER_CLUSTER:
		return AUXCAP_REPORT_MEM_LLC;
	case AUXCAP_TRACE_SRC_REMOTE:
	case AUXCAP_TRACE_SRC_DRAM:
		return AUXCAP_REPORT_MEM_DRAM;
	default:
		return auxcap_report_mem_level_of(mem);
	}
}

const char *auxcap_report_mem_source_key(uint32_t source)
{
	static const char *const keys[AUXCAP_TRACE_SRC_COUNT] = {
		[AUXCAP_TRACE_SRC_NONE] = "none",
		[AUXCAP_TRACE_SRC_L1] = "l1",
		[AUXCAP_TRACE_SRC_L2] = "l2",
		[AUXCAP_TRACE_SRC_PEER_CORE] = "peer_core",
		[AUXCAP_TRACE_SRC_LOCAL_CLUSTER] = "local_cluster",
		[AUXCAP_TRACE_SRC_SYS_CACHE] = "sys_cache",
		[AUXCAP_TRACE_SRC_PEER_CLUSTER] = "peer_cluster",
		[AUXCAP_TRACE_SRC_REMOTE] = "remote",
		[AUXCAP_TRACE_SRC_DRAM] = "dram",
	};

	return source < AUXCAP_TRACE_SRC_COUNT ? keys[source] : NULL;
}

static void row_add(struct auxcap_report_mem *s, const struct auxcap_trace_event *te,
		    enum auxcap_report_mem_level lv)
{
	uint64_t lat = te->total_latency;

	s->accesses++;
	s->loads += !!(te->mem & AUXCAP_TRACE_MEM_LOAD);
	s->stores += !!(te->mem & AUXCAP_TRACE_MEM_STORE);
	s->level[lv]++;
	s->level_lat[lv] += lat;
	if (lat > s->level_lat_max[lv])
		s->level_lat_max[lv] = lat;
	s->remote += auxcap_report_mem_remote(te->mem, te->source);
	s->peer += auxcap_report_mem_peer(te->source);
	s->tlb_walks += !!(te->mem & AUXCAP_TRACE_MEM_TLB_MISS);
	s->lat += lat;
	if (lat > s->lat_max)
		s->lat_max = lat;
	s->xlat_lat += te->translation_latency;
}

static size_t line_hash(int32_t pid, uint32_t kind, uint64_t addr, size_t cap)
{
	uint64_t x = addr ^ ((uint64_t)(uint32_t)pid << 48) ^ ((uint64_t)kind << 40);

	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	return (size_t)(x ^ (x >> 29)) & (cap - 1);
}

/*
 * Double the open-addressing index *@index (*@icap slots, 0: make @first) over the @n
 * entries of @v, entry k going to slot @hash(@v, k, cap) or the next free one.  0 or -ENOMEM
 * (the index then as it was).
 */
static int index_grow(uint32_t **index, size_t *icap, size_t first, size_t n,
		      size_t (*hash)(const void *v, size_t k, size_t cap), const void *v)
{
	size_t cap = *icap ? 2 * *icap : first;
	uint32_t *ni = malloc(cap * sizeof(*ni));

	if (!ni)
		return -ENOMEM;
	memset(ni, 0xff, cap * sizeof(*ni));
	for (size_t k = 0; k < n; k++) {
		size_t i = hash(v, k, cap);

		while (ni[i] != LINE_EMPTY)
			i = (i + 1) & (cap - 1);
		ni[i] = (uint32_t)k;
	}
	free(*index);
	*index = ni;
	*icap = cap;
	return 0;
}

static size_t entry_hash(const void *v, size_t k, size_t cap)
{
	const struct mline *e = (const struct mline *)v + k;

	return line_hash(e->pub.pid, e->kind, e->key, cap);
}

/* The entry of (@pid, @kind, @key), made if new (its public address @key); NULL when the
 * table is full (untracked) or on ENOMEM (*@err set). */
static struct mline *entry_get(struct mtable *t, int32_t pid, uint32_t kind, uint64_t key,
			       int *err)
{
	struct mline *e;
	size_t i;

	if ((t->n + 1) * 2 > t->icap && t->n < t->max &&
	    index_grow(&t->index, &t->icap, 1024, t->n, entry_hash, t->v) < 0) {
		*err = -ENOMEM;
		return NULL;
	}
	for (i = line_hash(pid, kind, key, t->icap); t->index[i] != LINE_EMPTY;
	     i = (i + 1) & (t->icap - 1)) {
		e = &t->v[t->index[i]];
		if (e->key == key && e->pub.pid == pid && e->kind == kind)
			return e;
	}
	if (t->n == t->max)
		return NULL;
	if (auxcap_grow_array(&t->v, &t->cap, t->n + 1, 64, sizeof(*t->v)) < 0) {
		*err = -ENOMEM;
		return NULL;
	}
	e = &t->v[t->n];
	memset(e, 0, sizeof(*e));
	e->key = key;
	e->pub.addr = key;
	e->pub.pid = pid;
	e->kind = kind;
	for (size_t k = 0; k < AUXCAP_REPORT_LINE_FUNCS; k++)
		e->func[k] = NO_FUNC;
	t->index[i] = (uint32_t)t->n;
	return &t->v[t->n++];
}

/* Count an access of thread @tid (a store or not) in entry @l, and of @func in a line's first
 * functions met (a line has few; an object's are counted apart: pair_add()). */
static void line_who(struct mline *l, uint32_t func, int32_t tid, bool store)
{
	size_t k;

	if (l->kind)
		goto threads;
	for (k = 0; k < l->pub.nr_funcs && l->func[k] != func; k++)
		;
	if (k == l->pub.nr_funcs && k < AUXCAP_REPORT_LINE_FUNCS) {
		l->func[k] = func;
		l->pub.nr_funcs++;
	}
	if (k < l->pub.nr_funcs) {
		l->pub.funcs[k].accesses++;
		/* keep them most first: move it up past those it now passes */
		while (k && l->pub.funcs[k].accesses > l->pub.funcs[k - 1].accesses) {
			uint64_t a = l->pub.funcs[k].accesses;
			uint32_t f = l->func[k];

			l->pub.funcs[k].accesses = l->pub.funcs[k - 1].accesses;
			l->func[k] = l->func[k - 1];
			l->pub.funcs[k - 1].accesses = a;
			l->func[k - 1] = f;
			k--;
		}
	} else {
		l->pub.other_funcs++;
	}
threads:
	for (k = 0; k < l->pub.threads && l->tids[k] != tid; k++)
		;
	if (k == l->pub.threads) {
		if (k == AUXCAP_REPORT_LINE_THREADS) {
			l->pub.threads_more = true;
			return;
		}
		l->tids[k] = tid;
		l->pub.threads++;
	}
	if (store && !(l->stored & (1u << k))) {
		l->stored |= (uint8_t)(1u << k);
		l->pub.store_threads++;
	}
}

static size_t pair_hash(uint32_t obj, uint32_t func, size_t cap)
{
	uint64_t x = ((uint64_t)obj << 32 | func) * 0x9e3779b97f4a7c15ull;

	return (size_t)(x ^ (x >> 29)) & (cap - 1);
}

static size_t pair_slot(const void *v, size_t k, size_t cap)
{
	const struct mpair *p = (const struct mpair *)v + k;

	return pair_hash(p->obj, p->func, cap);
}

/* One more access of object @obj by @func.  0 or -ENOMEM. */
static int pair_add(struct rmem *m, uint32_t obj, uint32_t func)
{
	size_t i;

	if ((m->nr_pairs + 1) * 2 > m->picap &&
	    index_grow(&m->pindex, &m->picap, 256, m->nr_pairs, pair_slot, m->pairs) < 0)
		return -ENOMEM;
	for (i = pair_hash(obj, func, m->picap); m->pindex[i] != LINE_EMPTY;
	     i = (i + 1) & (m->picap - 1)) {
		struct mpair *p = &m->pairs[m->pindex[i]];

		if (p->obj == obj && p->func == func) {
			p->accesses++;
			return 0;
		}
	}
	if (m->nr_pairs >= UINT32_MAX - 1 ||
	    auxcap_grow_array(&m->pairs, &m->cap_pairs, m->nr_pairs + 1, 256,
			      sizeof(*m->pairs)) < 0)
		return -ENOMEM;
	m->pairs[m->nr_pairs] = (struct mpair){ obj, func, 1 };
	m->pindex[i] = (uint32_t)m->nr_pairs++;
	return 0;
}

/* Each object's functions, most accesses first (then the order met), from the pairs: the
 * first AUXCAP_REPORT_LINE_FUNCS of them told apart, the rest summed. */
static void pairs_to_objects(struct rmem *m)
{
	for (size_t i = 0; i < m->nr_pairs; i++) {
		const struct mpair *p = &m->pairs[i];
		struct mline *o = &m->objs.v[p->obj];
		size_t k = o->pub.nr_funcs;

		if (k == AUXCAP_REPORT_LINE_FUNCS) {
			if (p->accesses <= o->pub.funcs[k - 1].accesses) {
				o->pub.other_funcs += p->accesses;
				continue;
			}
			o->pub.other_funcs += o->pub.funcs[--k].accesses; /* pushed out */
		} else {
			o->pub.nr_funcs++;
		}
		while (k && p->accesses > o->pub.funcs[k - 1].accesses) {
			o->pub.funcs[k] = o->pub.funcs[k - 1];
			o->func[k] = o->func[k - 1];
			k--;
		}
		o->pub.funcs[k].accesses = p->accesses;
		o->func[k] = p->func;
	}
}

/* Count access @te (level @lv, at @time, by @func of thread @tid) in entry (@pid, @kind,
 * @key) of @t, and set *@ret to it (NULL: the table is full).  0 or -ENOMEM. */
static int entry_add(struct mtable *t, int32_t pid, uint32_t kind, uint64_t key,
		     const struct auxcap_trace_event *te, enum auxcap_report_mem_level lv,
		     uint64_t time, uint32_t func, int32_t tid, struct mline **ret)
{
	int err = 0;
	struct mline *l = entry_get(t, pid, kind, key, &err);

	*ret = l;
	if (!l) {
		t->untracked++;
		return err;
	}
	if (!l->pub.m.accesses)
		l->pub.time = time;
	row_add(&l->pub.m, te, lv);
	line_who(l, func, tid, te->mem & AUXCAP_TRACE_MEM_STORE);
	return 0;
}

int mem_add(struct rmem *m, const struct auxcap_trace_event *te, int32_t pid, int32_t tid,
	    uint64_t time, uint32_t func, const struct mem_object *obj)
{
	enum auxcap_report_mem_level lv = auxcap_report_mem_level_from(te->mem, te->source);
	struct mline *e;
	int r;

	row_add(&m->total, te, lv);
	if (te->source < AUXCAP_TRACE_SRC_COUNT &&
	    (te->source != AUXCAP_TRACE_SRC_NONE || (te->mem & AUXCAP_TRACE_MEM_LOAD))) {
		m->src.accesses[te->source]++;
		m->src.lat[te->source] += te->total_latency;
		if (te->total_latency > m->src.lat_max[te->source])
			m->src.lat_max[te->source] = te->total_latency;
	}
	if (!m->detail)
		return 0;
	if (func != NO_FUNC) {
		size_t old = m->cap_funcs;

		if (auxcap_grow_array(&m->funcs, &m->cap_funcs, (size_t)func + 1, 256,
				      sizeof(*m->funcs)) < 0)
			return -ENOMEM;
		if (m->cap_funcs != old) /* the growth does not zero what it adds */
			memset(m->funcs + old, 0, (m->cap_funcs - old) * sizeof(*m->funcs));
		m->funcs[func].used = true;
		row_add(&m->funcs[func].pub.m, te, lv);
	}
	if (!(te->flags & AUXCAP_TRACE_F_HAS_ADDR))
		return 0;
	r = entry_add(&m->lines, pid, 0, te->addr & ~(uint64_t)(AUXCAP_REPORT_LINE_SIZE - 1),
		      te, lv, time, func, tid, &e);
	if (r < 0 || !obj)
		return r;
	r = entry_add(&m->objs, pid, (uint32_t)obj->kind + 1, obj->key, te, lv, time, func, tid,
		      &e);
	if (!e)
		return r;
	if (e->pub.m.accesses == 1) { /* new */
		e->pub.addr = obj->addr;
		e->name = obj->name;
		e->dso = obj->dso;
	}
	return pair_add(m, (uint32_t)(e - m->objs.v), func);
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int cmp_func(const void *pa, const void *pb)
{
	const struct auxcap_report_mem_func *a = *(const struct auxcap_report_mem_func *const *)pa;
	const struct auxcap_report_mem_func *b = *(const struct auxcap_report_mem_func *const *)pb;
	int c = cmp_u64_desc(a->m.lat, b->m.lat);

	if (!c)
		c = cmp_u64_desc(a->m.accesses, b->m.accesses);
	if (!c)
		c = a < b ? -1 : a > b; /* the order met: the report's index */
	return c;
}

static int cmp_line(const void *pa, const void *pb)
{
	const struct mline *a = *(const struct mline *const *)pa;
	const struct mline *b = *(const struct mline *const *)pb;
	int c = cmp_u64_desc(auxcap_report_mem_l1_misses(&a->pub.m),
				 auxcap_report_mem_l1_misses(&b->pub.m));

	if (!c)
		c = cmp_u64_desc(a->pub.m.lat, b->pub.m.lat);
	if (!c)
		c = cmp_u64_desc(a->pub.m.accesses, b->pub.m.accesses);
	if (!c)
		c = a->pub.addr < b->pub.addr ? -1 : a->pub.addr > b->pub.addr;
	if (!c)
		c = a->pub.pid < b->pub.pid ? -1 : a->pub.pid > b->pub.pid;
	return c;
}

/* Objects: by latency (perf mem's weight), then accesses, then kind and address. */
static int cmp_obj(const void *pa, const void *pb)
{
	const struct mline *a = *(const struct mline *const *)pa;
	const struct mline *b = *(const struct mline *const *)pb;
	int c = cmp_u64_desc(a->pub.m.lat, b->pub.m.lat);

	if (!c)
		c = cmp_u64_desc(a->pub.m.accesses, b->pub.m.accesses);
	if (!c)
		c = a->kind < b->kind ? -1 : a->kind > b->kind;
	if (!c)
		c = a->key < b->key ? -1 : a->key > b->key;
	if (!c)
		c = a->pub.pid < b->pub.pid ? -1 : a->pub.pid > b->pub.pid;
	return c;
}

/* Resolve @t's function indexes and sort it by @cmp.  0 or -ENOMEM. */
static int table_finish(struct mtable *t, int (*cmp)(const void *, const void *),
			const struct auxcap_report_func *(*func_at)(void *arg, uint32_t func),
			void *arg)
{
	t->order = malloc((t->n ? t->n : 1) * sizeof(*t->order));
	if (!t->order)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		struct mline *l = &t->v[i];

		for (size_t k = 0; k < l->pub.nr_funcs; k++)
			l->pub.funcs[k].func = l->func[k] == NO_FUNC ? NULL : func_at(arg, l->func[k]);
		t->order[i] = l;
	}
	if (t->n)
		qsort(t->order, t->n, sizeof(*t->order), cmp);
	return 0;
}

int mem_finish(struct rmem *m,
	       const struct auxcap_report_func *(*func_at)(void *arg, uint32_t func), void *arg)
{
	size_t n = 0;

	if (!m->detail)
		return 0;
	for (size_t i = 0; i < m->cap_funcs; i++)
		n += m->funcs[i].used;
	m->forder = malloc((n ? n : 1) * sizeof(*m->forder));
	m->obj_pub = malloc((m->objs.n ? m->objs.n : 1) * sizeof(*m->obj_pub));
	if (!m->forder || !m->obj_pub)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < m->cap_funcs; i++) {
		if (!m->funcs[i].used)
			continue;
		m->funcs[i].pub.func = func_at(arg, (uint32_t)i);
		m->forder[n++] = &m->funcs[i].pub;
	}
	m->nr_forder = n;
	if (n)
		qsort(m->forder, n, sizeof(*m->forder), cmp_func);
	pairs_to_objects(m);
	if (table_finish(&m->lines, cmp_line, func_at, arg) < 0 ||
	    table_finish(&m->objs, cmp_obj, func_at, arg) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < m->objs.n; i++) {
		const struct mline *o = m->objs.order[i];

		m->obj_pub[i] = (struct auxcap_report_mem_object){
			(enum auxcap_report_mem_object_kind)(o->kind - 1), o->name, o->dso, o->pub
		};
	}
	return 0;
}

const struct auxcap_report_mem_sources *mem_sources(const struct rmem *m)
{
	return &m->src;
}

const struct auxcap_report_mem *mem_total(const struct rmem *m)
{
	return &m->total;
}

size_t mem_nr_funcs(const struct rmem *m)
{
	return m->nr_forder;
}

const struct auxcap_report_mem_func *mem_func(const struct rmem *m, size_t i)
{
	return i < m->nr_forder ? m->forder[i] : NULL;
}

size_t mem_nr_lines(const struct rmem *m)
{
	return m->lines.order ? m->lines.n : 0;
}

const struct auxcap_report_mem_line *mem_line(const struct rmem *m, size_t i)
{
	return m->lines.order && i < m->lines.n ? &m->lines.order[i]->pub : NULL;
}

uint64_t mem_untracked(const struct rmem *m)
{
	return m->lines.untracked;
}

size_t mem_nr_objects(const struct rmem *m)
{
	return m->obj_pub ? m->objs.n : 0;
}

const struct auxcap_report_mem_object *mem_object(const struct rmem *m, size_t i)
{
	return m->obj_pub && i < m->objs.n ? &m->obj_pub[i] : NULL;
}

uint64_t mem_objects_untracked(const struct rmem *m)
{
	return m->objs.untracked;
}
