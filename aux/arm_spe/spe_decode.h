/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Arm SPE (Statistical Profiling Extension) packet and record decoder.
 *
 * Written from the Arm Architecture Reference Manual (A-profile), chapter "Statistical
 * Profiling Extension", section "SPE packet formats"; constants cross-checked against the
 * packet layout perf reads (spec/kernel-aux-abi.md 5.3).
 *
 * The trace is a byte stream of *records*, each a sequence of *packets* that ends with an END
 * packet or a TIMESTAMP packet.  PAD bytes (0x00) may appear anywhere (the driver pads to the
 * buffer alignment and to the maximum record size).  A packet is a header, one byte (short
 * form) or two bytes (extended form: prefix 0b001000xx, then a short-form address or counter
 * header; the prefix carries bits [4:3] of the index), then a little-endian payload of 0, 1,
 * 2, 4 or 8 bytes whose size is header bits [5:4] (0b00 1, 0b01 2, 0b10 4, 0b11 8 bytes).
 *
 * Layers, each usable alone:
 *   auxcap_spe_pkt_decode()        one packet at a given position
 *   struct auxcap_spe_pkt_iter     packet iterator (1/0/<0), with an explicit resync call
 *   struct auxcap_spe_decoder      iterator over packets, records (samples) and errors, with
 *                                  resynchronisation after malformed input
 *   auxcap_spe_*_print/dump()      text writers to a caller-provided FILE*
 *
 * Resynchronisation: after a bad header, an impossible size or a truncated packet at offset X,
 * the partial record is dropped and the decoder skips to the byte after the next END (0x01) or
 * TIMESTAMP (0x71 + 8 bytes) found at or after X + 1 from which the data decode cleanly (no bad
 * header or size) up to an END/TIMESTAMP, the end of the data, or for 2 *
 * AUXCAP_SPE_MAX_RECORD_SIZE bytes.  The bytes from X to that point are accounted as error
 * bytes.  Resynchronisation takes time linear in the bytes it skips.  Every byte of the input
 * is accounted exactly once as packet, padding or error bytes (struct auxcap_spe_stats).
 *
 * What is malformed: a header byte outside the encodings below (0b11xxxxxx, 0b01ss0000,
 * 0b01ss11xx, operation class 3, a 0b00xxxxxx byte other than PAD, END and the extended
 * prefix, an extended prefix not followed by an address or counter header) is a bad header;
 * a timestamp, context, operation type, address or counter header whose size field is not
 * the one the architecture fixes for it (8, 4, 1, 8, 2 bytes) is an impossible size.  An
 * extended prefix followed by 0x00, which perf reads as an "alignment" packet, is not in the
 * architecture and is a bad header here.  Unknown address, counter and context indices and
 * unknown event bits are not errors: they are decoded and shown raw.
 *
 * Nothing here allocates; every buffer is borrowed from the caller.
 */
#ifndef AUXCAP_SPE_DECODE_H
#define AUXCAP_SPE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Short-form header values and masks (byte 0). */
#define AUXCAP_SPE_HDR_PAD	    0x00 /* padding, no payload */
#define AUXCAP_SPE_HDR_END	    0x01 /* end of record, no payload */
#define AUXCAP_SPE_HDR_TIMESTAMP    0x71 /* end of record, 8-byte timestamp */
#define AUXCAP_SPE_HDR_EXT_MASK	    0xfc /* extended prefix 0b001000xx */
#define AUXCAP_SPE_HDR_EXT	    0x20
#define AUXCAP_SPE_HDR_ADDRESS_MASK 0xf8 /* 0b10110iii, 8-byte payload */
#define AUXCAP_SPE_HDR_ADDRESS	    0xb0
#define AUXCAP_SPE_HDR_COUNTER_MASK 0xf8 /* 0b10011iii, 2-byte payload */
#define AUXCAP_SPE_HDR_COUNTER	    0x98
#define AUXCAP_SPE_HDR_EVENTS_MASK  0xcf /* 0b01ss0010, any size */
#define AUXCAP_SPE_HDR_EVENTS	    0x42
#define AUXCAP_SPE_HDR_SOURCE_MASK  0xcf /* 0b01ss0011, any size */
#define AUXCAP_SPE_HDR_SOURCE	    0x43
#define AUXCAP_SPE_HDR_CONTEXT_MASK 0xfc /* 0b011001ii, 4-byte payload */
#define AUXCAP_SPE_HDR_CONTEXT	    0x64
#define AUXCAP_SPE_HDR_OP_TYPE_MASK 0xfc /* 0b010010cc, 1-byte payload */
#define AUXCAP_SPE_HDR_OP_TYPE	    0x48

/* Largest packet: extended header (2) + 8-byte payload. */
#define AUXCAP_SPE_MAX_PACKET_SIZE 10
/* Largest record the architecture allows (PMSIDR_EL1.MaxSize), in bytes. */
#define AUXCAP_SPE_MAX_RECORD_SIZE 2048

/** Packet classes. */
enum auxcap_spe_pkt_type {
	AUXCAP_SPE_PKT_PAD = 1,	    /* a run of 0x00 bytes (size = run length) */
	AUXCAP_SPE_PKT_END,	    /* end of record */
	AUXCAP_SPE_PKT_TIMESTAMP,   /* end of record with a timestamp */
	AUXCAP_SPE_PKT_ADDRESS,	    /* index: enum auxcap_spe_addr_index */
	AUXCAP_SPE_PKT_COUNTER,	    /* index: enum auxcap_spe_counter_index */
	AUXCAP_SPE_PKT_EVENTS,	    /* payload: AUXCAP_SPE_EV_* bits */
	AUXCAP_SPE_PKT_DATA_SOURCE, /* payload: implementation-defined data source */
	AUXCAP_SPE_PKT_OP_TYPE,	    /* index: enum auxcap_spe_op_class */
	AUXCAP_SPE_PKT_CONTEXT,	    /* index: enum auxcap_spe_context_index */
};

/** Address packet indices (5 bits with the extended header). */
enum auxcap_spe_addr_index {
	AUXCAP_SPE_ADDR_PC = 0,		   /* PC of the sampled instruction */
	AUXCAP_SPE_ADDR_BRANCH_TARGET = 1, /* target of a sampled branch */
	AUXCAP_SPE_ADDR_DATA_VA = 2,	   /* data access virtual address */
	AUXCAP_SPE_ADDR_DATA_PA = 3,	   /* data access physical address */
	AUXCAP_SPE_ADDR_PREV_BRANCH = 4,   /* target of the previous taken branch (FEAT_SPEv1p2) */
};

/** Counter packet indices (5 bits with the extended header); payload in cycles. */
enum auxcap_spe_counter_index {
	AUXCAP_SPE_CNT_TOTAL = 0,	/* total latency: dispatch to completion */
	AUXCAP_SPE_CNT_ISSUE = 1,	/* issue latency: dispatch to issue */
	AUXCAP_SPE_CNT_TRANSLATION = 2, /* translation latency of the data access */
};

/** Context packet indices. */
enum auxcap_spe_context_index {
	AUXCAP_SPE_CTX_EL1 = 0, /* CONTEXTIDR_EL1 */
	AUXCAP_SPE_CTX_EL2 = 1, /* CONTEXTIDR_EL2 */
};

/** Operation type classes (header bits [1:0]); 3 is reserved. */
enum auxcap_spe_op_class {
	AUXCAP_SPE_OP_CLASS_OTHER = 0,	/* other (including SVE non-memory, conditional select) */
	AUXCAP_SPE_OP_CLASS_LDST = 1,	/* load, store or atomic */
	AUXCAP_SPE_OP_CLASS_BRANCH = 2, /* branch or exception return */
};

/* Events packet payload bits. */
#define AUXCAP_SPE_EV_EXCEPTION_GEN (1ULL << 0)	 /* generated exception */
#define AUXCAP_SPE_EV_RETIRED	    (1ULL << 1)	 /* architecturally retired */
#define AUXCAP_SPE_EV_L1D_ACCESS    (1ULL << 2)	 /* level 1 data cache access */
#define AUXCAP_SPE_EV_L1D_REFILL    (1ULL << 3)	 /* level 1 data cache refill (miss) */
#define AUXCAP_SPE_EV_TLB_ACCESS    (1ULL << 4)	 /* TLB access */
#define AUXCAP_SPE_EV_TLB_WALK	    (1ULL << 5)	 /* TLB walk (miss) */
#define AUXCAP_SPE_EV_NOT_TAKEN	    (1ULL << 6)	 /* conditional instruction failed / not taken */
#define AUXCAP_SPE_EV_MISPREDICTED  (1ULL << 7)	 /* branch mispredicted */
#define AUXCAP_SPE_EV_LLC_ACCESS    (1ULL << 8)	 /* last level cache access */
#define AUXCAP_SPE_EV_LLC_MISS	    (1ULL << 9)	 /* last level cache miss */
#define AUXCAP_SPE_EV_REMOTE_ACCESS (1ULL << 10) /* access to another socket */
#define AUXCAP_SPE_EV_ALIGNMENT	    (1ULL << 11) /* misaligned access */
#define AUXCAP_SPE_EV_TRANSACTIONAL (1ULL << 16) /* in transactional state (TME) */
#define AUXCAP_SPE_EV_SVE_PARTIAL   (1ULL << 17) /* SVE predicate partly inactive */
#define AUXCAP_SPE_EV_SVE_EMPTY	    (1ULL << 18) /* SVE predicate all inactive */

/* Decoded operation flags (struct auxcap_spe_op.flags). */
#define AUXCAP_SPE_OP_ST	   (1U << 0)  /* LDST: store (otherwise load) */
#define AUXCAP_SPE_OP_COND	   (1U << 1)  /* BRANCH: conditional; OTHER: conditional select */
#define AUXCAP_SPE_OP_INDIRECT	   (1U << 2)  /* BRANCH: indirect */
#define AUXCAP_SPE_OP_GCS	   (1U << 3)  /* BRANCH: guarded control stack data access */
#define AUXCAP_SPE_OP_CALL	   (1U << 4)  /* BRANCH: call-return hint BL (call) */
#define AUXCAP_SPE_OP_RET	   (1U << 5)  /* BRANCH: call-return hint RET (return) */
#define AUXCAP_SPE_OP_NOT_CALL_RET (1U << 6)  /* BRANCH: call-return hint neither BL nor RET */
#define AUXCAP_SPE_OP_ATOMIC	   (1U << 7)  /* LDST extended: atomic (AT) */
#define AUXCAP_SPE_OP_EXCL	   (1U << 8)  /* LDST extended: exclusive (EXCL) */
#define AUXCAP_SPE_OP_ACQREL	   (1U << 9)  /* LDST extended: acquire/release (AR) */
#define AUXCAP_SPE_OP_SVE	   (1U << 10) /* SVE operation (OTHER or LDST) */
#define AUXCAP_SPE_OP_SVE_PRED	   (1U << 11) /* SVE: predicated */
#define AUXCAP_SPE_OP_SVE_SG	   (1U << 12) /* SVE LDST: gather/scatter */
#define AUXCAP_SPE_OP_SVE_FP	   (1U << 13) /* SVE OTHER: floating point */

/** Load/store subclasses (payload bits [7:1], except MEMSET which matches the whole byte). */
enum auxcap_spe_ldst_subclass {
	AUXCAP_SPE_LDST_GP_REG = 0, /* general-purpose register load/store */
	AUXCAP_SPE_LDST_SIMD_FP,    /* SIMD&FP register */
	AUXCAP_SPE_LDST_UNSPEC_REG, /* unspecified register */
	AUXCAP_SPE_LDST_NV_SYSREG,  /* nested virtualisation system register */
	AUXCAP_SPE_LDST_MTE_TAG,    /* memory tagging tag access */
	AUXCAP_SPE_LDST_MEMCPY,	    /* memory copy (CPY*) */
	AUXCAP_SPE_LDST_MEMSET,	    /* memory set (SET*) */
	AUXCAP_SPE_LDST_EXTENDED,   /* atomic, exclusive or acquire/release; see flags */
	AUXCAP_SPE_LDST_SVE,	    /* SVE/SME vector load/store; see flags and evl */
	AUXCAP_SPE_LDST_UNKNOWN,    /* an encoding this decoder does not know */
};

/** One decoded packet. */
struct auxcap_spe_packet {
	enum auxcap_spe_pkt_type type;
	uint64_t offset;	   /* bytes from the start of the stream to the first header byte */
	unsigned int size;	   /* bytes: header(s) + payload; PAD: the length of the run */
	unsigned int header_size;  /* bytes: 1 short form (and PAD), 2 extended form */
	unsigned int payload_size; /* bytes: 0, 1, 2, 4 or 8 */
	unsigned int index;	   /* ADDRESS/COUNTER index (0..31), CONTEXT index, OP_TYPE class */
	uint64_t payload;	   /* raw payload, little-endian decoded, zero-extended */
	unsigned char raw[AUXCAP_SPE_MAX_PACKET_SIZE]; /* the packet's bytes (PAD: first ones) */
};

/** Fields of an ADDRESS packet. */
struct auxcap_spe_addr {
	uint64_t addr;	 /* PC/targets/VA: bits [55:0] sign-extended from bit 55; PA: bits [55:0] */
	uint64_t raw;	 /* payload bits [55:0] */
	unsigned int el; /* PC/targets: exception level, payload bits [62:61] */
	bool ns;	 /* PC/targets/PA: non-secure, payload bit 63 */
	uint8_t tag;	 /* data VA: top-byte tag, payload bits [63:56] */
	bool checked;	 /* data PA: access checked (MTE), payload bit 62 */
	uint8_t pat;	 /* data PA: physical address tag, payload bits [59:56] */
};

/** Fields of an OP_TYPE packet. */
struct auxcap_spe_op {
	enum auxcap_spe_op_class cls;
	enum auxcap_spe_ldst_subclass subclass; /* LDST only */
	unsigned int flags;			/* AUXCAP_SPE_OP_* */
	unsigned int sve_evl;			/* SVE: effective vector length, bits (32..4096) */
	uint8_t raw;				/* the payload byte */
};

/* struct auxcap_spe_sample.present bits. */
#define AUXCAP_SPE_HAS_PC	   (1U << 0)
#define AUXCAP_SPE_HAS_TARGET	   (1U << 1)
#define AUXCAP_SPE_HAS_PREV_BRANCH (1U << 2)
#define AUXCAP_SPE_HAS_DATA_VA	   (1U << 3)
#define AUXCAP_SPE_HAS_DATA_PA	   (1U << 4)
#define AUXCAP_SPE_HAS_TOTAL_LAT   (1U << 5)
#define AUXCAP_SPE_HAS_ISSUE_LAT   (1U << 6)
#define AUXCAP_SPE_HAS_XLAT_LAT	   (1U << 7)
#define AUXCAP_SPE_HAS_EVENTS	   (1U << 8)
#define AUXCAP_SPE_HAS_OP	   (1U << 9)
#define AUXCAP_SPE_HAS_DATA_SOURCE (1U << 10)
#define AUXCAP_SPE_HAS_TIMESTAMP   (1U << 11)
#define AUXCAP_SPE_HAS_CONTEXT	   (1U << 12)

/** One record turned into a sample; a field is valid when its AUXCAP_SPE_HAS_* bit is set. */
struct auxcap_spe_sample {
	uint64_t offset;	 /* bytes: stream offset of the record's first packet */
	uint32_t size;		 /* bytes: from @offset through the END/TIMESTAMP packet */
	uint32_t nr_packets;	 /* packets in the record (PAD runs not counted) */
	uint32_t present;	 /* AUXCAP_SPE_HAS_* */
	uint64_t pc;		 /* virtual address (sign-extended from bit 55) */
	unsigned int el;	 /* exception level of @pc (0..3) */
	bool ns;		 /* @pc is non-secure */
	uint64_t target;	 /* branch target virtual address */
	unsigned int target_el;	 /* exception level of @target */
	uint64_t prev_branch;	 /* previous branch target virtual address */
	uint64_t data_va;	 /* data virtual address (sign-extended from bit 55) */
	uint8_t data_va_tag;	 /* top-byte tag of @data_va */
	uint64_t data_pa;	 /* data physical address */
	bool data_pa_ns;	 /* @data_pa is non-secure */
	uint32_t total_lat;	 /* cycles */
	uint32_t issue_lat;	 /* cycles */
	uint32_t xlat_lat;	 /* cycles */
	uint64_t events;	 /* AUXCAP_SPE_EV_* */
	struct auxcap_spe_op op; /* operation type */
	uint64_t data_source;	 /* implementation-defined (see auxcap_spe_data_source_name()) */
	uint64_t timestamp;	 /* generic timer ticks (CNTVCT/CNTPCT), not ns */
	uint32_t context_id;	 /* CONTEXTIDR_EL1 or _EL2 (pid with CONFIG_PID_IN_CONTEXTIDR) */
	unsigned int context_el; /* index + 1: 1 CONTEXTIDR_EL1, 2 _EL2 (3, 4 reserved) */
	bool by_timestamp;	 /* the record ended with TIMESTAMP (else END) */
};

/** What went wrong with the input. */
enum auxcap_spe_error_kind {
	AUXCAP_SPE_ERR_BAD_HEADER = 1, /* reserved header encoding (-EBADMSG) */
	AUXCAP_SPE_ERR_BAD_SIZE,       /* header size field impossible for its class (-EMSGSIZE) */
	AUXCAP_SPE_ERR_TRUNCATED,      /* data ends inside a packet (-ENODATA) */
	AUXCAP_SPE_ERR_UNTERMINATED,   /* data ends inside a record: no END/TIMESTAMP (-ENODATA) */
};

/** A decode error, reported as an event; the decoder has resynchronised after it. */
struct auxcap_spe_error {
	enum auxcap_spe_error_kind kind;
	int code;	 /* negative errno: -EBADMSG, -EMSGSIZE or -ENODATA */
	uint64_t offset; /* bytes: stream offset of the bad packet (UNTERMINATED: record) */
	uint64_t
		record_offset; /* bytes: start of the dropped partial record (== @offset if none) */
	uint64_t skipped;      /* bytes skipped from @offset to resynchronise (error bytes) */
	unsigned char header[2]; /* the offending header byte(s) */
	unsigned int header_len; /* valid bytes in @header */
};

/** Byte and item accounting.  packet_bytes + pad_bytes + error_bytes = bytes consumed. */
struct auxcap_spe_stats {
	uint64_t packets;	/* non-PAD packets decoded */
	uint64_t packet_bytes;	/* bytes of non-PAD packets */
	uint64_t pad_bytes;	/* bytes of PAD */
	uint64_t error_bytes;	/* bytes skipped after errors */
	uint64_t errors;	/* error events */
	uint64_t samples;	/* records turned into samples */
	uint64_t empty_records; /* END packets with no other packet in their record */
};

enum auxcap_spe_event_type {
	AUXCAP_SPE_EVENT_PACKET = 1, /* only with AUXCAP_SPE_DECODER_PACKETS */
	AUXCAP_SPE_EVENT_SAMPLE,
	AUXCAP_SPE_EVENT_ERROR,
};

/** What auxcap_spe_decoder_next() returns. */
struct auxcap_spe_event {
	enum auxcap_spe_event_type type;
	union {
		struct auxcap_spe_packet packet; /* AUXCAP_SPE_EVENT_PACKET */
		struct auxcap_spe_sample sample; /* AUXCAP_SPE_EVENT_SAMPLE */
		struct auxcap_spe_error error;	 /* AUXCAP_SPE_EVENT_ERROR */
	};
};

/* auxcap_spe_decoder_init() flags. */
#define AUXCAP_SPE_DECODER_PACKETS (1U << 0) /* also return every packet (PAD runs too) */

/**
 * Decoder state.  Embed it anywhere; initialise with auxcap_spe_decoder_init().  The fields are
 * private except @stats, which may be read at any time.
 */
struct auxcap_spe_decoder {
	const unsigned char *buf;      /* borrowed trace bytes */
	size_t len;		       /* bytes in @buf */
	size_t pos;		       /* bytes: next byte to decode */
	unsigned int flags;	       /* AUXCAP_SPE_DECODER_* */
	bool in_record;		       /* @cur holds packets of an unfinished record */
	bool sample_pending;	       /* @cur is finished and is returned by the next call */
	struct auxcap_spe_sample cur;  /* record under assembly */
	struct auxcap_spe_stats stats; /* accounting so far */
};

/**
 * Decode the packet that starts at @buf[0].  @offset is only copied into @ret->offset.  A run
 * of PAD bytes is returned as one PAD packet of the run's length.
 *
 * @buf is borrowed for the call.  On failure @ret is untouched.
 *
 * Returns the packet size in bytes (> 0) and fills @ret on success.
 * Returns -EINVAL if @buf or @ret is NULL or @len is 0.
 * Returns -EBADMSG if the header is a reserved encoding.
 * Returns -EMSGSIZE if the header's size field is impossible for its packet class.
 * Returns -ENODATA if @len ends inside the packet.
 */
int auxcap_spe_pkt_decode(const void *buf, size_t len, uint64_t offset,
			  struct auxcap_spe_packet *ret);

/**
 * A bare packet iterator: packets only, no records, and it stops at malformed input instead
 * of reporting it as an event.  Initialise with auxcap_spe_pkt_iter_init().  Fields private.
 */
struct auxcap_spe_pkt_iter {
	const unsigned char *buf; /* borrowed trace bytes */
	size_t len;		  /* bytes in @buf */
	size_t pos;		  /* bytes: next packet */
};

/** Iterate over the @len bytes at @buf (borrowed; must stay valid while @it is used). */
void auxcap_spe_pkt_iter_init(struct auxcap_spe_pkt_iter *it, const void *buf, size_t len);

/**
 * The next packet; @ret->offset is its position.  On an error the iterator stays at the bad
 * packet (auxcap_spe_pkt_iter_offset() names it); auxcap_spe_pkt_iter_resync() moves on.
 *
 * Returns 1 and fills @ret on a packet; 0 at the end of the data (@ret untouched).
 * Returns -EINVAL if @it or @ret is NULL.
 * Returns -EBADMSG, -EMSGSIZE or -ENODATA as auxcap_spe_pkt_decode() does (@ret untouched).
 */
int auxcap_spe_pkt_next(struct auxcap_spe_pkt_iter *it, struct auxcap_spe_packet *ret);

/** Position of the next packet (after an error: of the bad one), in bytes from the start. */
uint64_t auxcap_spe_pkt_iter_offset(const struct auxcap_spe_pkt_iter *it);

/**
 * Skip from the current position to the next resynchronisation point (the rule at the top of
 * this file, searching from the byte after the current one).  Returns the bytes skipped (0 at
 * the end of the data).
 */
uint64_t auxcap_spe_pkt_iter_resync(struct auxcap_spe_pkt_iter *it);

/** The fields of ADDRESS packet @pkt (its index decides which apply). */
void auxcap_spe_addr_decode(const struct auxcap_spe_packet *pkt, struct auxcap_spe_addr *ret);

/** The fields of OP_TYPE packet @pkt. */
void auxcap_spe_op_decode(const struct auxcap_spe_packet *pkt, struct auxcap_spe_op *ret);

/**
 * Start decoding the @len bytes at @buf (borrowed; must stay valid and unchanged while @dec is
 * used).  @flags: AUXCAP_SPE_DECODER_*.  Offsets in events are relative to @buf.
 */
void auxcap_spe_decoder_init(struct auxcap_spe_decoder *dec, const void *buf, size_t len,
			     unsigned int flags);

/**
 * The next event: a sample when a record ends, an error (after which the decoder has already
 * resynchronised), and with AUXCAP_SPE_DECODER_PACKETS every packet before the sample it ends.
 *
 * Returns 1 and fills @ret on an event; 0 at the end of the data (@ret untouched).
 * Returns -EINVAL if @dec or @ret is NULL.
 */
int auxcap_spe_decoder_next(struct auxcap_spe_decoder *dec, struct auxcap_spe_event *ret);

/** Position of the next byte to decode, in bytes from the start of the data. */
uint64_t auxcap_spe_decoder_offset(const struct auxcap_spe_decoder *dec);

/** Static names. */
const char *auxcap_spe_pkt_name(enum auxcap_spe_pkt_type type);
const char *auxcap_spe_error_str(enum auxcap_spe_error_kind kind);
/* Name of an event bit (one bit set), or NULL if this decoder does not know it. */
const char *auxcap_spe_event_name(uint64_t bit);
/* Name of a data source in the Arm "common" encoding (Neoverse cores), or NULL. */
const char *auxcap_spe_data_source_name(uint64_t source);

/**
 * Describe @pkt in @buf (at most @size bytes, always NUL-terminated when @size > 0) in the
 * style of perf report -D: "PC 0xffff800010081234 el1 ns=1", "LAT 12 TOT", "EV RETIRED
 * L1D-ACCESS", "LD GP-REG", "B COND IND", "TS 86447955877", "CONTEXT 0x1a2b el1", ...
 *
 * Returns the length the full text needs (like snprintf).
 */
int auxcap_spe_pkt_desc(const struct auxcap_spe_packet *pkt, char *buf, size_t size);

/* auxcap_spe_dump_raw() flags. */
#define AUXCAP_SPE_DUMP_PACKETS (1U << 0) /* one line per packet: offset, raw bytes, fields */
#define AUXCAP_SPE_DUMP_SAMPLES (1U << 1) /* one line per record turned into a sample */
#define AUXCAP_SPE_DUMP_SUMMARY (1U << 2) /* a closing accounting line */

/**
 * Write the packet line(s) of @pkt: ".  %08x:  b0 f4 ... PC 0x... el1 ns=1", raw bytes padded
 * to 16 columns; PAD runs longer than 16 bytes take several lines.
 * Returns 0, or -EIO if writing to @out failed.
 */
int auxcap_spe_packet_print(FILE *out, const struct auxcap_spe_packet *pkt);

/**
 * Write one line for @s: "sample 0x%08x: ts=... pc=0x... el1 op=LD GP-REG va=0x... ...", only
 * the fields present.  Returns 0, or -EIO if writing to @out failed.
 */
int auxcap_spe_sample_print(FILE *out, const struct auxcap_spe_sample *s);

struct auxcap_trace_event;
/**
 * The backend's describe op (auxcap_backend_ops.describe) for a SAMPLE event of the SPE
 * decoder: " op=LD GP-REG va=0x... tot=... ev=..." as auxcap_spe_sample_print() names them,
 * from the event's fields.  Returns the length of the whole text, 0 for another kind, -EINVAL.
 */
int auxcap_spe_event_text(const struct auxcap_trace_event *ev, char *buf, size_t len);

/**
 * Write the line(s) of @err: "error 0x%08x: bad header 0x41 ... skipped N bytes", and with
 * @buf (the decoder's data, may be NULL) the skipped bytes in 16-byte lines.
 * Returns 0, or -EIO if writing to @out failed.
 */
int auxcap_spe_error_print(FILE *out, const struct auxcap_spe_error *err, const void *buf,
			   size_t len);

/**
 * Decode the raw SPE byte stream @buf (@len bytes, borrowed) and write it to @out (borrowed,
 * owned by the caller) as selected by @flags (AUXCAP_SPE_DUMP_*; errors are always written).
 * This is what `auxcap decode --raw arm_spe FILE` prints.  Decode errors in the data are not
 * failures: they are written and counted in @ret->errors.
 *
 * Returns 0 and fills @ret (if not NULL) on success.
 * Returns -EINVAL if @buf is NULL with @len > 0, or @out is NULL.
 * Returns -EIO if writing to @out failed (@ret untouched).
 */
int auxcap_spe_dump_raw(const void *buf, size_t len, FILE *out, unsigned int flags,
			struct auxcap_spe_stats *ret);

#endif /* AUXCAP_SPE_DECODE_H */
