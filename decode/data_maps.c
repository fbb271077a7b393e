/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture's mappings for naming data addresses (data_maps.h).  Look-ups scan the
 * mappings from the newest: they are made for sampled records and a report's cache lines,
 * and a process has some hundreds of mappings, not millions.
 */
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
	m->v[m->n++] = (struct data_map){ pid, false, start, start + len, pgoff, time, k };
	return 0;
}

void data_maps_drop(struct data_maps *m, int32_t pid)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].pid == pid)
			m->v[i].dropped = true;
}

const struct data_map *data_maps_find(const struct data_maps *m, int32_t pid, uint64_t addr,
				      uint64_t t, const uint64_t *execs, size_t nr_execs)
{
	const struct data_map *best = NULL;

	for (size_t i = m->n; i-- > 0;) {
		const struct data_map *dm = &m->v[i];
		size_t k;

		if (dm->pid != pid || dm->dropped || addr < dm->start || addr >= dm->end ||
		    dm->time > t)
			continue;
		/* records come nearly in time order: a later one in the file may be older */
		if (best && dm->time <= best->time)
			continue;
		/* an exec after it and at or before @t: another image's */
		k = auxcap_upper_bound_u64(execs, nr_execs, dm->time);
		if (k < nr_execs && execs[k] <= t)
			continue;
		best = dm;
	}
	return best;
}

void data_maps_free(struct data_maps *m)
{
	for (size_t i = 0; i < m->nr_names; i++)
		free(m->names[i]);
	free(m->names);
	free(m->v);
	memset(m, 0, sizeof(*m));
}
