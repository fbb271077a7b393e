/* SPDX-License-Identifier: BSD-3-Clause */
/* The capture's mappings for naming data addresses (data_maps.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "data_maps.h"
#include "grow.h"
#include "sorted.h"

static int name_index(struct data_maps *m, const char *name, uint32_t *ret)
{
	size_t i;

	/* the newest first: mappings of one file come together */
	for (i = m->nr_names; i-- > 0;)
		if (!strcmp(m->names[i], name)) {
			*ret = (uint32_t)i;
			return 0;
		}
	if (m->nr_names >= UINT32_MAX ||
	    auxcap_grow_array(&m->names, &m->cap_names, m->nr_names + 1, 16, sizeof(*m->names)) < 0)
		return -ENOMEM;
	m->names[m->nr_names] = strdup(name);
	if (!m->names[m->nr_names])
		return -ENOMEM;
	*ret = (uint32_t)m->nr_names++;
	return 0;
}

int data_maps_add(struct data_maps *m, int32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		  const char *name, uint64_t time)
{
	uint32_t k;

	if (!len || start + len < start)
		return 0; /* nothing mapped, or a record that cannot be */
	if (name_index(m, name, &k) < 0 ||
	    auxcap_grow_array(&m->v, &m->cap, m->n + 1, 64, sizeof(*m->v)) < 0)
		return -ENOMEM;
	m->v[m->n] = (struct data_map){ pid, false, start, start + len, pgoff, time, k, m->n, 0 };
	m->n++;
	m->sorted = false;
	return 0;
}

void data_maps_drop(struct data_maps *m, int32_t pid)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].pid == pid)
			m->v[i].dropped = true;
}

static int cmp_map(const void *a, const void *b)
{
	const struct data_map *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static void sort_maps(struct data_maps *m)
{
	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), cmp_map);
	for (size_t i = 0; i < m->n; i++) {
		struct data_map *dm = &m->v[i];

		dm->max_end = dm->end;
		if (i && dm[-1].pid == dm->pid && dm[-1].max_end > dm->end)
			dm->max_end = dm[-1].max_end;
	}
	m->sorted = true;
}

/* The number of mappings before (@pid, @addr] in (pid, start) order. */
static size_t upper_bound(const struct data_maps *m, int32_t pid, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct data_map *dm = &m->v[mid];

		if (dm->pid < pid || (dm->pid == pid && dm->start <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct data_map *data_maps_find(struct data_maps *m, int32_t pid, uint64_t addr,
				      uint64_t t, const uint64_t *execs, size_t nr_execs)
{
	const struct data_map *best = NULL, *later = NULL;

	if (!m->sorted)
		sort_maps(m);
	/* back from the last one starting at or below @addr, while one can still reach it */
	for (size_t i = upper_bound(m, pid, addr); i-- > 0;) {
		const struct data_map *dm = &m->v[i];
		size_t k;

		if (dm->pid != pid || dm->max_end <= addr)
			break;
		if (dm->dropped || addr >= dm->end)
			continue;
		if (dm->time > t) {
			/* made after @t by its record's time, with no exec between: the earliest */
			k = auxcap_upper_bound_u64(execs, nr_execs, t);
			if ((k == nr_execs || execs[k] > dm->time) &&
			    (!later || dm->time < later->time ||
			     (dm->time == later->time && dm->seq > later->seq)))
				later = dm;
			continue;
		}
		/* the newest; of two made at the same time, the one the file has later */
		if (best && (dm->time < best->time || (dm->time == best->time && dm->seq < best->seq)))
			continue;
		/* an exec after it and at or before @t: another image's */
		k = auxcap_upper_bound_u64(execs, nr_execs, dm->time);
		if (k < nr_execs && execs[k] <= t)
			continue;
		best = dm;
	}
	/* An address is used after its mapping is made: with none made by @t, the record's
	 * time is a little late (the trace's clock against the side-band's), and the first
	 * mapping made after it is the one. */
	return best ? best : later;
}

void data_maps_free(struct data_maps *m)
{
	for (size_t i = 0; i < m->nr_names; i++)
		free(m->names[i]);
	free(m->names);
	free(m->v);
	memset(m, 0, sizeof(*m));
}
