/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data ring reader (see ring.h for the protocol).
 *
 * Positions are free-running u64 in the kernel's head space; the byte at position p lives at
 * data[p & (size - 1)].  A forward pass reads [pos, end) where end is the data_head acquired
 * by begin; a backward pass (write_backward overwrite rings) reads from data_head towards
 * higher addresses for at most one ring size, which walks the records newest to oldest.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "barrier.h"
#include "ring.h"

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

int auxcap_ring_init(struct auxcap_ring *ring, void *base, size_t map_len, size_t page_size,
		     unsigned int flags)
{
	struct perf_event_mmap_page *pc = base;
	uint64_t off, size;

	if (!ring || !base || !page_size || map_len < page_size)
		return -EINVAL;
	off = pc->data_offset;
	size = pc->data_size;
	if (off == 0 && size == 0) { /* kernels before 4.1 */
		off = page_size;
		size = map_len - page_size;
	}
	if (!is_pow2(size) || off < sizeof(*pc) || off > map_len || size > map_len - off)
		return -EINVAL;

	memset(ring, 0, sizeof(*ring));
	ring->pc = pc;
	ring->data = (unsigned char *)base + off;
	ring->size = size;
	ring->flags = flags;
	ring->pos = auxcap_load_relaxed_u64(&pc->data_tail);
	if (flags & AUXCAP_RING_OVERWRITE)
		ring->pos = auxcap_load_acquire_u64(&pc->data_head);
	ring->end = ring->pos;
	ring->head = ring->pos;
	return 0;
}

void auxcap_ring_fini(struct auxcap_ring *ring)
{
	if (!ring)
		return;
	free(ring->scratch);
	ring->scratch = NULL;
	ring->scratch_size = 0;
}

uint64_t auxcap_ring_pending(const struct auxcap_ring *ring)
{
	return auxcap_load_acquire_u64(&ring->pc->data_head) - ring->pos;
}

int64_t auxcap_ring_begin(struct auxcap_ring *ring)
{
	uint64_t head = auxcap_load_acquire_u64(&ring->pc->data_head);

	ring->head = head;
	if (head - ring->pos > ring->size) {
		/* Only an overwrite ring can be lapped: the kernel never passes data_tail. */
		ring->stats.corrupt_bytes += head - ring->pos;
		ring->pos = head;
		ring->end = head;
		return -ESTALE;
	}
	ring->end = head;
	return (int64_t)(head - ring->pos);
}

int64_t auxcap_ring_backward_begin(struct auxcap_ring *ring)
{
	uint64_t head = auxcap_load_acquire_u64(&ring->pc->data_head);

	ring->head = head;
	ring->pos = head;
	ring->end = head + ring->size;
	return (int64_t)ring->size;
}

/* Copy @len bytes at free-running position @pos out of the ring into @dst. */
static void ring_copy(const struct auxcap_ring *ring, uint64_t pos, void *dst, size_t len)
{
	size_t off = (size_t)(pos & (ring->size - 1));
	size_t first = len < ring->size - off ? len : (size_t)(ring->size - off);

	memcpy(dst, ring->data + off, first);
	if (len > first)
		memcpy((unsigned char *)dst + first, ring->data, len - first);
}

static int ring_bad(struct auxcap_ring *ring)
{
	ring->stats.corrupt++;
	ring->stats.corrupt_bytes += ring->end - ring->pos;
	ring->pos = ring->end;
	return -EBADMSG;
}

static void ring_count(struct auxcap_ring *ring, const struct perf_event_header *h)
{
	uint64_t v;

	ring->stats.records++;
	ring->stats.bytes += h->size;
	if (h->type == PERF_RECORD_LOST && h->size >= 24) {
		memcpy(&v, (const unsigned char *)h + 16, 8);
		ring->stats.lost_records++;
		ring->stats.lost += v;
	} else if (h->type == PERF_RECORD_LOST_SAMPLES && h->size >= 16) {
		memcpy(&v, (const unsigned char *)h + 8, 8);
		ring->stats.lost_samples += v;
	}
}

int auxcap_ring_next(struct auxcap_ring *ring, const struct perf_event_header **ret_hdr)
{
	struct perf_event_header h;
	uint64_t avail = ring->end - ring->pos;
	size_t off;

	if (avail == 0)
		return 0;
	if (avail < sizeof(h)) {
		if (ring->flags & AUXCAP_RING_BACKWARD) {
			ring->pos = ring->end;
			return 0;
		}
		return ring_bad(ring);
	}
	ring_copy(ring, ring->pos, &h, sizeof(h));
	if (ring->flags & AUXCAP_RING_BACKWARD) {
		/*
		 * Zero header: space the kernel never wrote.  A record that does not fit in what is
		 * left of one ring size was partly overwritten by newer ones: stop before it.
		 */
		if (h.size == 0 || h.size > avail) {
			ring->pos = ring->end;
			return 0;
		}
	}
	if (h.size < sizeof(h) || (h.size & 7) || h.size > avail)
		return ring_bad(ring);

	off = (size_t)(ring->pos & (ring->size - 1));
	if (off + h.size <= ring->size) {
		*ret_hdr = (const struct perf_event_header *)(ring->data + off);
	} else {
		if (ring->scratch_size < h.size) {
			unsigned char *p = realloc(ring->scratch, 65536);

			if (!p)
				return -ENOMEM;
			ring->scratch = p;
			ring->scratch_size = 65536;
		}
		ring_copy(ring, ring->pos, ring->scratch, h.size);
		ring->stats.wraps++;
		*ret_hdr = (const struct perf_event_header *)ring->scratch;
	}
	ring->pos += h.size;
	ring_count(ring, *ret_hdr);
	return 1;
}

void auxcap_ring_end(struct auxcap_ring *ring)
{
	if (ring->flags & AUXCAP_RING_OVERWRITE)
		return;
	/* Every read of record bytes is done: only now may the kernel reuse the space. */
	auxcap_store_release_u64(&ring->pc->data_tail, ring->pos);
}
