/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mem_sink.h"

static int grow(unsigned char **buf, size_t *cap, size_t need)
{
	size_t c = *cap ? *cap : 65536;
	unsigned char *p;

	while (c < need)
		c *= 2;
	if (c == *cap)
		return 0;
	p = realloc(*buf, c);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = c;
	return 0;
}

static int m_attr(void *ctx, const struct perf_event_attr *attr, const char *name,
		  const uint64_t *ids, size_t nr_ids)
{
	struct mem_sink *m = ctx;
	struct mem_attr *a;

	if (m->nr_attrs == 16 || nr_ids > 256)
		return -E2BIG;
	a = &m->attrs[m->nr_attrs++];
	a->attr = *attr;
	strncpy(a->name, name, sizeof(a->name) - 1);
	memcpy(a->ids, ids, nr_ids * sizeof(*ids));
	a->nr_ids = nr_ids;
	return 0;
}

static int m_record(void *ctx, const void *rec, size_t len)
{
	struct mem_sink *m = ctx;

	if (m->fail_after_bytes >= 0 && m->recs_len + len > (size_t)m->fail_after_bytes)
		return -ENOSPC;
	if (grow(&m->recs, &m->recs_cap, m->recs_len + len) < 0)
		return -ENOMEM;
	memcpy(m->recs + m->recs_len, rec, len);
	m->recs_len += len;
	m->nr_recs++;
	return 0;
}

static int m_aux(void *ctx, const struct auxcap_aux_chunk *chunk,
		 const struct auxcap_aux_span *span)
{
	struct mem_sink *m = ctx;
	struct mem_chunk *c;

	if (grow(&m->aux, &m->aux_cap, m->aux_len + span->len) < 0)
		return -ENOMEM;
	if (m->nr_chunks == m->chunks_cap) {
		size_t cap = m->chunks_cap ? m->chunks_cap * 2 : 64;
		struct mem_chunk *p = realloc(m->chunks, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		m->chunks = p;
		m->chunks_cap = cap;
	}
	c = &m->chunks[m->nr_chunks++];
	c->info = *chunk;
	c->off = m->aux_len;
	c->len = span->len;
	for (int i = 0; i < 2 && span->piece[i].len; i++) {
		memcpy(m->aux + m->aux_len, span->piece[i].ptr, span->piece[i].len);
		m->aux_len += span->piece[i].len;
	}
	return 0;
}

static int m_round(void *ctx)
{
	((struct mem_sink *)ctx)->rounds++;
	return 0;
}

static const struct auxcap_sink_ops mem_ops = {
	.attr = m_attr,
	.record = m_record,
	.aux = m_aux,
	.round = m_round,
};

void mem_sink_init(struct mem_sink *m)
{
	memset(m, 0, sizeof(*m));
	m->sink.ops = &mem_ops;
	m->sink.ctx = m;
	m->fail_after_bytes = -1;
}

void mem_sink_fini(struct mem_sink *m)
{
	free(m->recs);
	free(m->aux);
	free(m->chunks);
}

const struct mem_attr *mem_sink_attr_of(const struct mem_sink *m, uint64_t id)
{
	for (size_t i = 0; i < m->nr_attrs; i++)
		for (size_t k = 0; k < m->attrs[i].nr_ids; k++)
			if (m->attrs[i].ids[k] == id)
				return &m->attrs[i];
	return NULL;
}
