/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intel BTS (Branch Trace Store) record decoder.
 *
 * The AUX data of an intel_bts event is an array of 24-byte records (spec/kernel-aux-abi.md
 * 5.2), each three little-endian u64: the branch source ("from"), its destination ("to") and a
 * flags word of which perf reads bit 4 (0x10) as "predicted".  A record with from = 0 and
 * to = 0 is padding (the driver zeroes the tail of a chunk it cannot fill) and is skipped, as
 * perf does, whatever its flags word holds; from = 0 alone marks the start of trace (tracing
 * resumed at "to"), to = 0 alone its end (tracing stopped after "from").  Records are decoded
 * at fixed 24-byte steps from the first byte; a trailing part of a record is reported as an
 * error with its offset.
 *
 * Snapshots of a BTS buffer overlap: each holds the whole buffer ending at the head, so the
 * start of one repeats the end of the previous one.  auxcap_bts_find_overlap() finds how much.
 *
 * Nothing here allocates; buffers are borrowed from the caller.
 */
#ifndef AUXCAP_BTS_DECODE_H
#define AUXCAP_BTS_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define AUXCAP_BTS_RECORD_SIZE	  24	  /* bytes */
#define AUXCAP_BTS_FLAG_PREDICTED 0x10ULL /* flags bit 4, as perf reads it */

/** What a record stands for. */
enum auxcap_bts_kind {
	AUXCAP_BTS_BRANCH = 1,	/* a taken branch from -> to */
	AUXCAP_BTS_TRACE_BEGIN, /* from = 0: tracing (re)started at @to */
	AUXCAP_BTS_TRACE_END,	/* to = 0: tracing stopped after @from */
};

/** One decoded record. */
struct auxcap_bts_branch {
	enum auxcap_bts_kind kind;
	uint64_t offset; /* bytes: stream offset of the record */
	uint64_t from;	 /* linear address of the branch instruction (0 for TRACE_BEGIN) */
	uint64_t to;	 /* linear address of the branch target (0 for TRACE_END) */
	uint64_t flags;	 /* the raw third word */
	bool predicted;	 /* flags & AUXCAP_BTS_FLAG_PREDICTED */
};

/** A trailing partial record. */
struct auxcap_bts_error {
	int code;	 /* -ENODATA */
	uint64_t offset; /* bytes: stream offset of the partial record */
	uint64_t size;	 /* bytes in it (1..23) */
};

enum auxcap_bts_event_type {
	AUXCAP_BTS_EVENT_BRANCH = 1,
	AUXCAP_BTS_EVENT_ERROR,
};

struct auxcap_bts_event {
	enum auxcap_bts_event_type type;
	union {
		struct auxcap_bts_branch branch; /* AUXCAP_BTS_EVENT_BRANCH */
		struct auxcap_bts_error error;	 /* AUXCAP_BTS_EVENT_ERROR */
	};
};

/** Accounting.  (records + padding) * 24 + partial_bytes = bytes consumed. */
struct auxcap_bts_stats {
	uint64_t records;	/* non-padding records (branches + begins + ends) */
	uint64_t branches;	/* AUXCAP_BTS_BRANCH records */
	uint64_t begins;	/* AUXCAP_BTS_TRACE_BEGIN records */
	uint64_t ends;		/* AUXCAP_BTS_TRACE_END records */
	uint64_t predicted;	/* records with the predicted bit */
	uint64_t padding;	/* padding records skipped */
	uint64_t partial_bytes; /* bytes of a trailing partial record */
	uint64_t errors;	/* error events (0 or 1) */
};

/** Decoder state; fields private except @stats.  Initialise with auxcap_bts_decoder_init(). */
struct auxcap_bts_decoder {
	const unsigned char *buf; /* borrowed */
	size_t len;		  /* bytes in @buf */
	size_t pos;		  /* bytes: next record */
	struct auxcap_bts_stats stats;
};

/** Start decoding the @len bytes at @buf (borrowed for the decoder's use). */
void auxcap_bts_decoder_init(struct auxcap_bts_decoder *dec, const void *buf, size_t len);

/**
 * The next non-padding record, or the trailing partial record as an error event.
 *
 * Returns 1 and fills @ret on an event; 0 at the end of the data (@ret untouched).
 * Returns -EINVAL if @dec or @ret is NULL.
 */
int auxcap_bts_decoder_next(struct auxcap_bts_decoder *dec, struct auxcap_bts_event *ret);

/**
 * How many bytes at the start of snapshot @next repeat the end of the previous snapshot
 * @prev: the largest L = min(@prev_len, @next_len) - 24 * k (k >= 0, L > 0) for which the
 * last L bytes of @prev equal the first L bytes of @next, or 0.  The new data of @next starts
 * at that offset.  Both buffers are borrowed for the call; either may be NULL with length 0.
 *
 * A trace that repeats itself exactly (a tight loop) can make the overlap look longer than it
 * was; the longest match is taken, like perf.
 */
size_t auxcap_bts_find_overlap(const void *prev, size_t prev_len, const void *next,
			       size_t next_len);

/** Name of a record kind: "branch", "trace-begin", "trace-end". */
const char *auxcap_bts_kind_name(enum auxcap_bts_kind kind);

/**
 * Write one line for @br: ".  %08x: branch 0x... -> 0x... pred" (from/to in hex, flags in hex
 * when bits other than the predicted bit are set).
 * Returns 0, or -EIO if writing to @out failed; -EINVAL if @out or @br is NULL.
 */
int auxcap_bts_branch_print(FILE *out, const struct auxcap_bts_branch *br);

/* auxcap_bts_dump_raw() flags. */
#define AUXCAP_BTS_DUMP_SUMMARY (1U << 0) /* a closing accounting line */
#define AUXCAP_BTS_DUMP_PADDING (1U << 1) /* also a line per run of padding records */
/*
 * Instead of decoded lines, one line per 24 bytes as perf report -D prints BTS data:
 * ".  %08x:  <24 raw bytes> <from> -> <to> pred|miss", "Bad record!" for a partial one;
 * padding records included.
 */
#define AUXCAP_BTS_DUMP_RAW (1U << 2)

/**
 * Decode the raw BTS byte stream @buf (@len bytes, borrowed) and write one line per record to
 * @out (borrowed, owned by the caller).  This is what `auxcap decode --raw intel_bts FILE`
 * prints.  A trailing partial record is written as an error line and counted in
 * @ret->errors; it is not a failure of this call.
 *
 * Returns 0 and fills @ret (if not NULL) on success.
 * Returns -EINVAL if @buf is NULL with @len > 0, or @out is NULL.
 * Returns -EIO if writing to @out failed (@ret untouched).
 */
int auxcap_bts_dump_raw(const void *buf, size_t len, FILE *out, unsigned int flags,
			struct auxcap_bts_stats *ret);

#endif /* AUXCAP_BTS_DECODE_H */
