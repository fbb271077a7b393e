/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A toy backend for the decode stage's tests: its trace is an array of struct toy_rec, each
 * saying which trace event to produce, so every input of a test is known exactly.  Register
 * toy_backend_ops (auxcap_backend_register()) and write captures of the event "toy_trace//"
 * (attr type TOY_ATTR_TYPE) with AUXTRACE_INFO type TOY_TYPE.
 */
#ifndef AUXCAP_TEST_TOY_BACKEND_H
#define AUXCAP_TEST_TOY_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "auxcap/backend.h"

#define TOY_TYPE (AUXCAP_AUXTRACE_PRIVATE + 1)
#define TOY_ATTR_TYPE 0x7000

/* Bits of toy_rec.flags. */
enum {
	TOY_TSC = 1u << 0,  /* @tsc is the event's timestamp */
	TOY_JUNK = 1u << 1, /* junk in fields the kind does not use (size, raw, what, payload) */
	TOY_TID = 1u << 2,  /* F_HAS_TID, tid = the low 16 bits of @to */
	TOY_MEM = 1u << 3,  /* SAMPLE: a data access at address @to (F_HAS_ADDR), mem = the low
			     * 12 bits of @ninsn, the data source bits 12-15, total latency
			     * its high 16 (ninsn is 0) */
};

/* One trace event (32 bytes); a GAP gets err -EBADMSG and the reason "toy gap". */
struct toy_rec {
	uint8_t kind;	/* enum auxcap_trace_kind */
	uint8_t branch; /* enum auxcap_branch_type */
	uint16_t flags; /* TOY_* */
	uint32_t ninsn;
	uint64_t tsc;
	uint64_t ip;
	uint64_t to;
};

extern const struct auxcap_backend_ops toy_backend_ops;
/* The same backend with decoder_next_batch() too (register one or the other). */
extern const struct auxcap_backend_ops toy_batch_backend_ops;

/* What the last toy decoder was given: the maps' addresses and their spans (ctx->map_spans;
 * toy_had_spans false if it was NULL), the first TOY_MAX_MAPS of them. */
#define TOY_MAX_MAPS 16
extern uint64_t toy_map_vaddr[TOY_MAX_MAPS];
extern struct auxcap_image_span toy_map_span[TOY_MAX_MAPS];
extern size_t toy_nr_maps;
extern bool toy_had_spans;

/* An event with a timestamp. */
struct toy_rec rec(uint64_t tsc, enum auxcap_trace_kind kind, enum auxcap_branch_type branch,
		   uint64_t ip, uint64_t to, uint32_t ninsn);

#endif
