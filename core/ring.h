/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data ring reader.
 *
 * A struct auxcap_ring wraps one mmap'd perf data ring (control page + 2^n data pages).  It
 * does not own the mapping (see auxcap_ring_open()/auxcap_ring_close() in event.h, which do).
 *
 * Forward rings (normal mode), one read pass:
 *
 *	auxcap_ring_begin(ring);                  acquire-load data_head
 *	while ((r = auxcap_ring_next(ring, &hdr)) > 0)
 *		use hdr (valid until the next call);
 *	auxcap_ring_end(ring);                    release-store data_tail
 *
 * Records that straddle the end of the ring are copied into a scratch buffer owned by the
 * ring, so callers always see a contiguous record.  LOST and LOST_SAMPLES records are counted
 * as they pass.  A header that cannot be a kernel record (size < 8, not a multiple of 8, or
 * larger than what the head published) is reported once as -EBADMSG; the reader then drops
 * everything up to the head, so a corrupt ring never loops.
 *
 * Overwrite rings (read-only mapping, usually write_backward): pause the output, then
 * auxcap_ring_backward_begin() + auxcap_ring_next() yields records newest to oldest, stopping
 * at never-written (zero) space or at the first record that was partly overwritten.
 */
#ifndef AUXCAP_RING_H
#define AUXCAP_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perf_event_header;
struct perf_event_mmap_page;

enum auxcap_ring_flags {
	AUXCAP_RING_OVERWRITE = 1u << 0, /* read-only mapping: never store data_tail */
	AUXCAP_RING_BACKWARD = 1u << 1,  /* attr.write_backward */
};

struct auxcap_ring_stats {
	uint64_t records;      /* records returned by auxcap_ring_next() */
	uint64_t bytes;        /* bytes of those records */
	uint64_t lost_records; /* LOST records seen */
	uint64_t lost;         /* sum of LOST.lost: records the kernel dropped */
	uint64_t lost_samples; /* sum of LOST_SAMPLES.lost */
	uint64_t corrupt;      /* times a bad header was found */
	uint64_t corrupt_bytes; /* bytes dropped because of bad headers */
	uint64_t wraps;        /* records that straddled the end and were copied */
};

struct auxcap_ring {
	struct perf_event_mmap_page *pc; /* borrowed: control page */
	unsigned char *data;             /* borrowed: first data byte */
	uint64_t size;                   /* data area, bytes (power of two) */
	unsigned int flags;              /* enum auxcap_ring_flags */
	uint64_t head;                   /* data_head loaded by begin */
	uint64_t pos;                    /* next byte to read (free-running) */
	uint64_t end;                    /* read limit of this pass (free-running) */
	unsigned char *scratch;          /* owned: copy of a record crossing the end */
	size_t scratch_size;             /* bytes allocated at @scratch */
	struct auxcap_ring_stats stats;
};

/**
 * Set up @ring over a mapping of @map_len bytes at @base whose first page is the control page.
 *
 * The data area is taken from data_offset/data_size in the control page when the kernel set
 * them (4.1+), else from @map_len and @page_size.
 *
 * Returns 0 on success.
 * Returns -EINVAL if the data area is not a power of two or does not fit in @map_len.
 */
int auxcap_ring_init(struct auxcap_ring *ring, void *base, size_t map_len, size_t page_size,
		     unsigned int flags);

/** Release what the ring owns (not the mapping).  NULL-safe. */
void auxcap_ring_fini(struct auxcap_ring *ring);

/**
 * Start a forward read pass: acquire-load data_head.
 *
 * Returns the number of unread bytes published (0 if none).
 * Returns -ESTALE in a forward overwrite ring whose writer lapped the reader: the bytes
 * between tail and head - size are gone; the reader skips to head - size is not safe either
 * (records are not aligned to it), so it skips to head and counts the bytes as corrupt.
 */
int64_t auxcap_ring_begin(struct auxcap_ring *ring);

/**
 * Start a backward read of an overwrite ring (write_backward): from data_head, newest first,
 * over at most one ring size.  Pause the output around the read (auxcap_ring_pause()).
 *
 * Returns the number of bytes that may hold records.
 */
int64_t auxcap_ring_backward_begin(struct auxcap_ring *ring);

/**
 * Next record of this pass.
 *
 * Returns 1 and sets @ret_hdr to a contiguous copy or in-place view of the record (borrowed,
 * valid until the next call on @ring), 0 when the pass is done, a negative errno otherwise.
 * Returns -EBADMSG for a header that cannot be valid (see above); the pass then ends.
 * Returns -ENOMEM if a straddling record could not be copied.
 */
int auxcap_ring_next(struct auxcap_ring *ring, const struct perf_event_header **ret_hdr);

/**
 * End a forward pass: store data_tail (release) so the kernel may reuse the space.  Does
 * nothing for overwrite rings, which the kernel never reads the tail of.
 */
void auxcap_ring_end(struct auxcap_ring *ring);

/** Bytes published but not consumed yet (acquire-loads data_head). */
uint64_t auxcap_ring_pending(const struct auxcap_ring *ring);

#endif /* AUXCAP_RING_H */
