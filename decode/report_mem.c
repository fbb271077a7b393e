/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The report's memory figures (report_mem.h): each sampled data access is added to the sum, to
 * its function's row (an array indexed by the report's function index) and to its cache
 * line's (open addressing by process and line address), which also keeps the few functions
 * and threads that touched the line most.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "report_mem.h"

#define NO_FUNC UINT32_MAX
#define LINE_EMPTY UINT32_MAX

struct mline {
	struct auxcap_report_mem_line pub;
	uint32_t func[AUXCAP_REPORT_LINE_FUNCS]; /* the report's indexes of pub.funcs */
	int32_t tids[AUXCAP_REPORT_LINE_THREADS];
	uint8_t stored; /* bit k: tids[k] stored to the line */
};

struct mfunc {
	struct auxcap_report_mem_func pub;
	bool used; /* it made an access */
};

struct rmem {
	bool detail;
	struct auxcap_report_mem total;
	struct mfunc *funcs; /* indexed by function (detail) */
	size_t cap_funcs;
	struct auxcap_report_mem_func **forder; /* after finish: used ones, sorted */
	size_t nr_forder;
	struct mline *lines; /* detail: the lines, in the order met */
	size_t nr_lines, cap_lines;
	uint32_t *lindex; /* open addressing over lines; LINE_EMPTY: free */
	size_t lcap;
	struct mline **lorder; /* after finish: sorted */
	uint64_t untracked;
};

struct rmem *mem_new(bool detail)
{
	struct rmem *m = calloc(1, sizeof(*m));

	if (m)
		m->detail = detail;
	return m;
}

void mem_free(struct rmem *m)
{
	if (!m)
		return;
	free(m->funcs);
	free(m->forder);
	free(m->lines);
	free(m->lindex);
	free(m->lorder);
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
	s->remote += !!(te->mem & AUXCAP_TRACE_MEM_REMOTE);
	s->tlb_walks += !!(te->mem & AUXCAP_TRACE_MEM_TLB_MISS);
	s->lat += lat;
	if (lat > s->lat_max)
		s->lat_max = lat;
	s->xlat_lat += te->translation_latency;
}

static size_t line_hash(int32_t pid, uint64_t addr, size_t cap)
{
	uint64_t x = addr ^ ((uint64_t)(uint32_t)pid << 48);

	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	return (size_t)(x ^ (x >> 29)) & (cap - 1);
}

static int lindex_grow(struct rmem *m)
{
	size_t cap = m->lcap ? 2 * m->lcap : 1024;
	uint32_t *ni = malloc(cap * sizeof(*ni));

	if (!ni)
		return -ENOMEM;
	memset(ni, 0xff, cap * sizeof(*ni));
	for (size_t k = 0; k < m->nr_lines; k++) {
		size_t i = line_hash(m->lines[k].pub.pid, m->lines[k].pub.addr, cap);

		while (ni[i] != LINE_EMPTY)
			i = (i + 1) & (cap - 1);
		ni[i] = (uint32_t)k;
	}
	free(m->lindex);
	m->lindex = ni;
	m->lcap = cap;
	return 0;
}

/* The line of @addr in process @pid, made if new; NULL when the table is full (untracked)
 * or on ENOMEM (*@err set). */
static struct mline *line_get(struct rmem *m, int32_t pid, uint64_t addr, int *err)
{
	size_t i;

	addr &= ~(uint64_t)(AUXCAP_REPORT_LINE_SIZE - 1);
	if ((m->nr_lines + 1) * 2 > m->lcap && m->nr_lines < AUXCAP_REPORT_MEM_LINES_MAX &&
	    lindex_grow(m) < 0) {
		*err = -ENOMEM;
		return NULL;
	}
	for (i = line_hash(pid, addr, m->lcap); m->lindex[i] != LINE_EMPTY;
	     i = (i + 1) & (m->lcap - 1))
		if (m->lines[m->lindex[i]].pub.addr == addr && m->lines[m->lindex[i]].pub.pid == pid)
			return &m->lines[m->lindex[i]];
	if (m->nr_lines == AUXCAP_REPORT_MEM_LINES_MAX)
		return NULL;
	if (auxcap_grow_array(&m->lines, &m->cap_lines, m->nr_lines + 1, 64, sizeof(*m->lines)) <
	    0) {
		*err = -ENOMEM;
		return NULL;
	}
	memset(&m->lines[m->nr_lines], 0, sizeof(m->lines[0]));
	m->lines[m->nr_lines].pub.addr = addr;
	m->lines[m->nr_lines].pub.pid = pid;
	for (size_t k = 0; k < AUXCAP_REPORT_LINE_FUNCS; k++)
		m->lines[m->nr_lines].func[k] = NO_FUNC;
	m->lindex[i] = (uint32_t)m->nr_lines;
	return &m->lines[m->nr_lines++];
}

/* Count an access of @func (and thread @tid, a store or not) in line @l. */
static void line_who(struct mline *l, uint32_t func, int32_t tid, bool store)
{
	size_t k;

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

int mem_add(struct rmem *m, const struct auxcap_trace_event *te, int32_t pid, int32_t tid,
	    uint64_t time, uint32_t func)
{
	enum auxcap_report_mem_level lv = auxcap_report_mem_level_of(te->mem);
	struct mline *l;
	int err = 0;

	row_add(&m->total, te, lv);
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
	l = line_get(m, pid, te->addr, &err);
	if (!l) {
		m->untracked++;
		return err;
	}
	if (!l->pub.m.accesses)
		l->pub.time = time;
	row_add(&l->pub.m, te, lv);
	line_who(l, func, tid, te->mem & AUXCAP_TRACE_MEM_STORE);
	return 0;
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

int mem_finish(struct rmem *m,
	       const struct auxcap_report_func *(*func_at)(void *arg, uint32_t func), void *arg)
{
	size_t n = 0;

	if (!m->detail)
		return 0;
	for (size_t i = 0; i < m->cap_funcs; i++)
		n += m->funcs[i].used;
	m->forder = malloc((n ? n : 1) * sizeof(*m->forder));
	m->lorder = malloc((m->nr_lines ? m->nr_lines : 1) * sizeof(*m->lorder));
	if (!m->forder || !m->lorder)
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
	for (size_t i = 0; i < m->nr_lines; i++) {
		struct mline *l = &m->lines[i];

		for (size_t k = 0; k < l->pub.nr_funcs; k++)
			l->pub.funcs[k].func = l->func[k] == NO_FUNC ? NULL : func_at(arg, l->func[k]);
		m->lorder[i] = l;
	}
	if (m->nr_lines)
		qsort(m->lorder, m->nr_lines, sizeof(*m->lorder), cmp_line);
	return 0;
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
	return m->lorder ? m->nr_lines : 0;
}

const struct auxcap_report_mem_line *mem_line(const struct rmem *m, size_t i)
{
	return m->lorder && i < m->nr_lines ? &m->lorder[i]->pub : NULL;
}

uint64_t mem_untracked(const struct rmem *m)
{
	return m->untracked;
}
