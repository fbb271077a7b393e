/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The AUX area consumer.
 *
 * Set-up (spec/kernel-aux-abi.md 2.2): the data ring is mapped first; aux_offset and aux_size
 * are stored into its control page; then the AUX area is mapped at that file offset.  A
 * writable AUX mapping selects normal (full-trace) mode, a read-only one overwrite (snapshot)
 * mode.
 *
 * Normal mode, one drain:
 *
 *	n = auxcap_aux_ring_read(ring, &span);   acquire-load aux_head; span = [tail, head)
 *	write span.piece[0], span.piece[1];      at most two pieces (the ring wraps once)
 *	auxcap_aux_ring_consume(ring, &span);    release-store aux_tail = head
 *
 * Overwrite mode: the event is disabled by the caller, the backend decides which bytes are
 * valid (wrap detection), and auxcap_aux_ring_span() cuts that range into pieces.
 *
 * Loss accounting: every PERF_RECORD_AUX seen in the data ring is passed to
 * auxcap_aux_stats_add(); the kernel has no byte counter for lost AUX data, only these flags.
 */
#ifndef AUXCAP_AUX_RING_H
#define AUXCAP_AUX_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auxcap/sys.h"

struct perf_event_mmap_page;

/** A range of AUX bytes, in at most two contiguous pieces of the mapping (borrowed). */
struct auxcap_aux_span {
	uint64_t offset; /* position of the first byte in aux_head space */
	uint64_t len;    /* bytes in total */
	struct {
		const unsigned char *ptr;
		size_t len;
	} piece[2];
};

/** Counts of PERF_RECORD_AUX records and their flags (perf's "AUX data lost N times"). */
struct auxcap_aux_stats {
	uint64_t records;    /* PERF_RECORD_AUX seen */
	uint64_t bytes;      /* sum of aux_size of non-overwrite records */
	uint64_t truncated;  /* PERF_AUX_FLAG_TRUNCATED: data lost, event disabled */
	uint64_t partial;    /* PERF_AUX_FLAG_PARTIAL: record has gaps */
	uint64_t collision;  /* PERF_AUX_FLAG_COLLISION: samples dropped (SPE) */
	uint64_t overwrite;  /* PERF_AUX_FLAG_OVERWRITE */
	uint64_t empty_truncated; /* TRUNCATED with aux_size 0: nothing was written */
};

struct auxcap_aux_ring {
	const struct auxcap_sys *sys;    /* borrowed */
	struct perf_event_mmap_page *pc; /* borrowed: control page of the data ring mapping */
	unsigned char *base;             /* owned mapping of the AUX area */
	uint64_t size;                   /* bytes (power of two) */
	bool overwrite;                  /* read-only mapping: snapshot mode */
	uint64_t tail;                   /* normal mode: consumer position, aux_head space */
	uint64_t drained;                /* normal mode: bytes handed out by read() */
	uint64_t reads;                  /* non-empty read() calls */
};

/**
 * Map the AUX area of @fd, whose data ring is mapped with control page @pc (borrowed, must be a
 * writable view of page 0).  @aux_pages must be a power of two; @overwrite maps it read-only.
 *
 * Returns 0 and fills @ret on success, a negative errno otherwise (@ret untouched).
 * Returns -EINVAL if @aux_pages is not a power of two or the data ring geometry is unknown.
 * Returns the mmap errno otherwise (-EOPNOTSUPP: the PMU has no AUX support; -EPERM: locked
 * memory limit; -ENOMEM: the driver refused the size, e.g. Arm SPE odd pages in snapshot mode).
 */
int auxcap_aux_ring_open(const struct auxcap_sys *sys, int fd, struct perf_event_mmap_page *pc,
			 size_t aux_pages, bool overwrite, struct auxcap_aux_ring *ret);

/** Unmap (NULL-safe, idempotent). */
void auxcap_aux_ring_close(struct auxcap_aux_ring *ring);

/**
 * Normal mode: acquire-load aux_head and describe [tail, head) in @ret_span.
 *
 * Returns the number of bytes (0 if none).
 * Returns -EINVAL in overwrite mode.
 * Returns -ESTALE if head is more than one buffer ahead of tail (impossible with a kernel that
 * honours aux_tail; the span is then the newest buffer's worth and the older bytes are lost).
 */
int64_t auxcap_aux_ring_read(struct auxcap_aux_ring *ring, struct auxcap_aux_span *ret_span);

/**
 * Normal mode: the bytes of @span are written out; release-store aux_tail past them so the
 * kernel may reuse the space.  Call only after the last read of the span's bytes.
 */
void auxcap_aux_ring_consume(struct auxcap_aux_ring *ring, const struct auxcap_aux_span *span);

/**
 * Cut the range of @len bytes ending at buffer position @end (any u64 position; taken modulo
 * the size) into pieces.  Used for snapshots.  Returns -EINVAL if @len exceeds the size.
 */
int auxcap_aux_ring_span(const struct auxcap_aux_ring *ring, uint64_t end, uint64_t len,
			 struct auxcap_aux_span *ret_span);

/** aux_head as the kernel (or the driver, in overwrite mode) last published it. */
uint64_t auxcap_aux_ring_head(const struct auxcap_aux_ring *ring);

/** Account one PERF_RECORD_AUX. */
void auxcap_aux_stats_add(struct auxcap_aux_stats *st, uint64_t aux_size, uint64_t flags);

/** Records that reported lost data (TRUNCATED or PARTIAL or COLLISION). */
uint64_t auxcap_aux_stats_lossy(const struct auxcap_aux_stats *st);

#endif /* AUXCAP_AUX_RING_H */
