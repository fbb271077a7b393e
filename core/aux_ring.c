/* SPDX-License-Identifier: BSD-3-Clause */
/* The AUX area consumer (see aux_ring.h). */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "auxcap/session.h"
#include "aux_ring.h"
#include "barrier.h"

int auxcap_aux_ring_open(const struct auxcap_sys *sys, int fd, struct perf_event_mmap_page *pc,
			 size_t aux_pages, bool overwrite, struct auxcap_aux_ring *ret)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t off, size;
	void *base = NULL;
	int r;

	if (!sys || !pc || !ret || fd < 0)
		return -EINVAL;
	if (!aux_pages || (aux_pages & (aux_pages - 1)) || aux_pages > SIZE_MAX / page)
		return -EINVAL;
	if (!pc->data_size)
		return -EINVAL;
	off = pc->data_offset + pc->data_size; /* right after the data pages, as perf does */
	size = (uint64_t)aux_pages * page;
	pc->aux_offset = off;
	pc->aux_size = size;
	r = sys->mmap(sys->ctx, (size_t)size, overwrite ? PROT_READ : PROT_READ | PROT_WRITE,
		      MAP_SHARED, fd, (off_t)off, &base);
	if (r < 0)
		return r;

	memset(ret, 0, sizeof(*ret));
	ret->sys = sys;
	ret->pc = pc;
	ret->base = base;
	ret->size = size;
	ret->overwrite = overwrite;
	ret->tail = auxcap_load_relaxed_u64(&pc->aux_tail);
	return 0;
}

void auxcap_aux_ring_close(struct auxcap_aux_ring *ring)
{
	if (!ring || !ring->base)
		return;
	(void)ring->sys->munmap(ring->sys->ctx, ring->base, (size_t)ring->size);
	ring->base = NULL;
}

uint64_t auxcap_aux_ring_head(const struct auxcap_aux_ring *ring)
{
	return auxcap_load_acquire_u64(&ring->pc->aux_head);
}

int auxcap_aux_ring_span(const struct auxcap_aux_ring *ring, uint64_t end, uint64_t len,
			 struct auxcap_aux_span *ret_span)
{
	uint64_t start = end - len;
	size_t off = (size_t)(start & (ring->size - 1));
	size_t first;

	if (len > ring->size)
		return -EINVAL;
	first = len < ring->size - off ? (size_t)len : (size_t)(ring->size - off);
	memset(ret_span, 0, sizeof(*ret_span));
	ret_span->offset = start;
	ret_span->len = len;
	ret_span->piece[0].ptr = ring->base + off;
	ret_span->piece[0].len = first;
	if (len > first) {
		ret_span->piece[1].ptr = ring->base;
		ret_span->piece[1].len = (size_t)len - first;
	}
	return 0;
}

int64_t auxcap_aux_ring_read(struct auxcap_aux_ring *ring, struct auxcap_aux_span *ret_span)
{
	uint64_t head, len;
	int r;

	if (ring->overwrite)
		return -EINVAL;
	head = auxcap_load_acquire_u64(&ring->pc->aux_head);
	len = head - ring->tail;
	if (len > ring->size) {
		r = auxcap_aux_ring_span(ring, head, ring->size, ret_span);
		if (r < 0)
			return r;
		return -ESTALE;
	}
	r = auxcap_aux_ring_span(ring, head, len, ret_span);
	if (r < 0)
		return r;
	if (len)
		ring->reads++;
	return (int64_t)len;
}

void auxcap_aux_ring_consume(struct auxcap_aux_ring *ring, const struct auxcap_aux_span *span)
{
	uint64_t end = span->offset + span->len;

	ring->drained += end - ring->tail;
	ring->tail = end;
	/* The span's bytes have been read: only now may the kernel overwrite them. */
	auxcap_store_release_u64(&ring->pc->aux_tail, end);
}

const unsigned char *auxcap_aux_ring_data(const struct auxcap_aux_ring *ring, uint64_t *ret_size)
{
	*ret_size = ring->size;
	return ring->base;
}

void auxcap_aux_stats_add(struct auxcap_aux_stats *st, uint64_t aux_size, uint64_t flags)
{
	st->records++;
	if (flags & PERF_AUX_FLAG_OVERWRITE)
		st->overwrite++;
	else
		st->bytes += aux_size;
	if (flags & PERF_AUX_FLAG_TRUNCATED) {
		st->truncated++;
		if (!aux_size)
			st->empty_truncated++;
	}
	if (flags & PERF_AUX_FLAG_PARTIAL)
		st->partial++;
	if (flags & PERF_AUX_FLAG_COLLISION)
		st->collision++;
}

uint64_t auxcap_aux_stats_lossy(const struct auxcap_aux_stats *st)
{
	return st->truncated + st->partial + st->collision;
}
