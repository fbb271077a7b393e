/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Arm SPE backend's ops table (auxcap/backend.h) and its decode side: every record of the
 * stream becomes a SAMPLE event (PC, data virtual and physical address, latencies, events,
 * operation, timestamp, context), malformed data a GAP event at its offset after which the
 * packet decoder has resynchronised at the next record.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <string.h>

#include "linefile.h"
#include "spe_backend.h"
#include "spe_decode.h"

/*
 * How the data-source packet's payload reads: it is IMPLEMENTATION DEFINED, so the decoder
 * goes by the MIDR of the CPU the capture ran on (perf's CPUID feature on arm64, the MIDR_EL1
 * value in hex: "0x00000000410fd0c0").  An unknown CPU's data source is left unsaid.
 */
enum spe_ds_encoding {
	SPE_DS_UNKNOWN = 0,
	SPE_DS_COMMON,	  /* Arm's common encoding, as the cores' TRMs give it */
	SPE_DS_AMPEREONE, /* AmpereOne's own */
};

struct spe_dec {
	struct auxcap_spe_decoder d;
	struct auxcap_perf_time_conv tc; /* valid if @have_tc */
	bool have_tc;
	enum spe_ds_encoding ds;
	uint64_t base;	/* stream position of the decoded bytes' first byte */
	bool more;	/* the stream goes on in a next piece */
	uint8_t *work;	/* owned: carry + piece when a record straddles the seam, else NULL */
	uint64_t lost;	/* > 0: a GAP to report first, for the record the previous pieces left
			   unfinished and that cannot be finished (@lost bytes at base - @lost) */
};

/* How far back the previous pieces are decoded to find where their last record ended. */
#define SPE_LOOKBACK (64 * 1024)

/* Whether @ctx (of ctx->sz bytes) has the field at @off of @size bytes. */
static bool ctx_has(const struct auxcap_decode_ctx *ctx, size_t off, size_t size)
{
	return ctx->sz >= off + size;
}

#define CTX_HAS(ctx, field) \
	ctx_has(ctx, offsetof(struct auxcap_decode_ctx, field), sizeof((ctx)->field))

/*
 * Where the decodable records of @data/@len end: the end of its last complete record (or of a
 * resynchronisation after damage) when an unfinished record follows, else @len (what
 * follows the last record is padding, or nothing).
 */
static size_t spe_last_end(const uint8_t *data, size_t len)
{
	struct auxcap_spe_decoder d;
	struct auxcap_spe_event ev;
	size_t last_end = 0;

	auxcap_spe_decoder_init(&d, data, len, 0);
	while (auxcap_spe_decoder_next(&d, &ev) == 1) {
		if (ev.type == AUXCAP_SPE_EVENT_SAMPLE)
			last_end = (size_t)(ev.sample.offset + ev.sample.size);
		else if (ev.error.kind == AUXCAP_SPE_ERR_TRUNCATED ||
			 ev.error.kind == AUXCAP_SPE_ERR_UNTERMINATED)
			return last_end; /* only at the end: an unfinished record */
		else
			last_end = (size_t)auxcap_spe_decoder_offset(&d); /* resynchronised there */
	}
	/* Nothing unfinished: what follows the last record is padding, not a record's start. */
	return len;
}

/*
 * A stream may come in pieces (the AUXTRACE buffers of one queue) cut anywhere, also inside a
 * record.  Every piece's decoder emits the records that end in it and leaves the bytes after
 * its last record end to the next piece, which decodes them again in front of its own: its
 * "carry".  A carry longer than any record (AUXCAP_SPE_MAX_RECORD_SIZE) cannot be a record's
 * start (a record cut by lost data and followed by padding): the piece reports it as a gap and
 * decodes its own bytes alone.
 *
 * The carry of this piece is found by doing what the previous pieces did, piece after piece,
 * from the start of the stream, or for a long stream from about SPE_LOOKBACK bytes back (whose
 * first record is found by resynchronisation).  Returns its length (0: none) and, when it is
 * at most a record long, its bytes in *@ret_carry (owned by the caller).
 * Returns -ENOMEM.
 */
static ssize_t spe_carry(const struct auxcap_decode_ctx *ctx, uint8_t **ret_carry)
{
	size_t first, skip = 0, acc = 0, clen = 0, maxlen = 0;
	uint8_t *work, carry[AUXCAP_SPE_MAX_RECORD_SIZE];
	bool dropped = false;

	*ret_carry = NULL;
	if (!CTX_HAS(ctx, nr_prev) || !ctx->prev || !ctx->nr_prev)
		return 0;
	/* The pieces to replay: back to the stream's start, or SPE_LOOKBACK bytes. */
	for (first = ctx->nr_prev; first > 0 && acc < SPE_LOOKBACK;)
		acc += ctx->prev[--first].len;
	if (acc > SPE_LOOKBACK && first > 0)
		skip = acc - SPE_LOOKBACK; /* a long first piece: its end only */
	for (size_t i = first; i < ctx->nr_prev; i++)
		if (ctx->prev[i].len > maxlen)
			maxlen = ctx->prev[i].len;
	work = malloc(sizeof(carry) + maxlen);
	if (!work)
		return -ENOMEM;
	for (size_t i = first; i < ctx->nr_prev; i++) {
		const uint8_t *pb = ctx->prev[i].buf;
		size_t plen = ctx->prev[i].len, n, end;

		if (i == first) {
			pb += skip;
			plen -= skip;
		}
		if (dropped)
			clen = 0; /* that piece reported the long carry and went on alone */
		memcpy(work, carry, clen);
		memcpy(work + clen, pb, plen);
		n = clen + plen;
		end = spe_last_end(work, n);
		clen = n - end;
		dropped = clen > sizeof(carry);
		if (!dropped)
			memcpy(carry, work + end, clen);
	}
	free(work);
	if (dropped || !clen)
		return (ssize_t)clen;
	*ret_carry = malloc(clen);
	if (!*ret_carry)
		return -ENOMEM;
	memcpy(*ret_carry, carry, clen);
	return (ssize_t)clen;
}

/* The driver names its PMUs arm_spe_N (one per SPE-capable CPU type). */
static int spe_probe(const char *pmu_name, const struct auxcap_pmu *pmu)
{
	(void)pmu;
	return !strcmp(pmu_name, "arm_spe") || !strncmp(pmu_name, "arm_spe_", 8);
}

/* Counter ticks to perf time, as perf's tsc_to_perf_time() does with TIME_CONV. */
static uint64_t spe_perf_time(const struct auxcap_perf_time_conv *tc, uint64_t cyc)
{
	uint64_t quot, rem;

	if (tc->cap_user_time_short)
		cyc = tc->time_cycles + ((cyc - tc->time_cycles) & tc->time_mask);
	quot = cyc >> tc->time_shift;
	rem = cyc & ((1ULL << tc->time_shift) - 1);
	return tc->time_zero + quot * tc->time_mult + ((rem * tc->time_mult) >> tc->time_shift);
}

/* The data-source encoding of the CPU whose MIDR @cpuid gives (perf's CPUID text). */
static enum spe_ds_encoding spe_ds_encoding_of(const char *cpuid)
{
	/* implementer MIDR[31:24], part number MIDR[15:4]; every variant and revision */
	static const struct {
		uint8_t implementer;
		uint16_t part;
		enum spe_ds_encoding enc;
	} cpus[] = {
		{ 0x41, 0xd0c, SPE_DS_COMMON },	   /* Neoverse N1 */
		{ 0x41, 0xd40, SPE_DS_COMMON },	   /* Neoverse V1 */
		{ 0x41, 0xd49, SPE_DS_COMMON },	   /* Neoverse N2 */
		{ 0x41, 0xd4c, SPE_DS_COMMON },	   /* Cortex-X1C */
		{ 0x41, 0xd4e, SPE_DS_COMMON },	   /* Cortex-X3 */
		{ 0x41, 0xd4f, SPE_DS_COMMON },	   /* Neoverse V2 */
		{ 0x41, 0xd81, SPE_DS_COMMON },	   /* Cortex-A720 */
		{ 0x41, 0xd85, SPE_DS_COMMON },	   /* Cortex-X925 */
		{ 0x41, 0xd87, SPE_DS_COMMON },	   /* Cortex-A725 */
		{ 0x41, 0xd89, SPE_DS_COMMON },	   /* Cortex-A720AE */
		{ 0xc0, 0xac4, SPE_DS_AMPEREONE }, /* AmpereOne AC04 */
	};
	unsigned long long midr;
	char *end;

	if (!cpuid || strncmp(cpuid, "0x", 2))
		return SPE_DS_UNKNOWN; /* not an arm64 capture's (x86's is "GenuineIntel,...") */
	errno = 0;
	midr = strtoull(cpuid + 2, &end, 16);
	if (errno || end == cpuid + 2 || (*end && *end != '\n'))
		return SPE_DS_UNKNOWN;
	for (size_t i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++)
		if (((midr >> 24) & 0xff) == cpus[i].implementer &&
		    ((midr >> 4) & 0xfff) == cpus[i].part)
			return cpus[i].enc;
	return SPE_DS_UNKNOWN;
}

/* Where the data came from, by the data-source packet's @payload in encoding @enc. */
static uint32_t spe_source(enum spe_ds_encoding enc, uint64_t payload)
{
	if (enc == SPE_DS_COMMON) {
		switch (payload) {
		case 0x0:
			return AUXCAP_TRACE_SRC_L1;
		case 0x8:
			return AUXCAP_TRACE_SRC_L2;
		case 0x9:
			return AUXCAP_TRACE_SRC_PEER_CORE;
		case 0xa:
			return AUXCAP_TRACE_SRC_LOCAL_CLUSTER;
		case 0xb:
			return AUXCAP_TRACE_SRC_SYS_CACHE;
		case 0xc:
			return AUXCAP_TRACE_SRC_PEER_CLUSTER;
		case 0xd:
			return AUXCAP_TRACE_SRC_REMOTE;
		case 0xe:
			return AUXCAP_TRACE_SRC_DRAM;
		default:
			return AUXCAP_TRACE_SRC_NONE;
		}
	}
	if (enc == SPE_DS_AMPEREONE) {
		switch (payload) {
		case 0x0: /* a cache elsewhere on the chip, or a device */
			return AUXCAP_TRACE_SRC_PEER_CLUSTER;
		case 0x3: /* the system-level cache */
			return AUXCAP_TRACE_SRC_SYS_CACHE;
		case 0x5: /* a cache of the other chip */
			return AUXCAP_TRACE_SRC_REMOTE;
		case 0x7:
			return AUXCAP_TRACE_SRC_DRAM;
		case 0x8:
			return AUXCAP_TRACE_SRC_L1;
		case 0x9:
			return AUXCAP_TRACE_SRC_L2;
		default:
			return AUXCAP_TRACE_SRC_NONE;
		}
	}
	return AUXCAP_TRACE_SRC_NONE;
}

static int spe_decoder_new(const struct auxcap_decode_ctx *ctx, const uint8_t *buf, size_t len,
			   void **ret_dec)
{
	struct spe_dec *sd;
	uint8_t *cbytes = NULL;
	ssize_t carry;

	if (!ctx || !ret_dec || (!buf && len) || ctx->sz < sizeof(*ctx))
		return -EINVAL;
	sd = calloc(1, sizeof(*sd));
	if (!sd)
		return -ENOMEM;
	sd->base = CTX_HAS(ctx, stream_offset) ? ctx->stream_offset : 0;
	sd->more = CTX_HAS(ctx, more) && ctx->more;
	carry = spe_carry(ctx, &cbytes);
	if (carry < 0) {
		free(sd);
		return (int)carry;
	}
	if (carry && !cbytes) {
		/* Longer than any record: the record was cut (data lost) and padding followed.
		 * The previous piece left it to this one: report it here, once. */
		sd->lost = (uint64_t)carry;
		carry = 0;
	}
	if (carry) {
		sd->work = malloc((size_t)carry + len);
		if (!sd->work) {
			free(cbytes);
			free(sd);
			return -ENOMEM;
		}
		memcpy(sd->work, cbytes, (size_t)carry);
		if (len)
			memcpy(sd->work + carry, buf, len);
		sd->base -= (uint64_t)carry;
		auxcap_spe_decoder_init(&sd->d, sd->work, (size_t)carry + len, 0);
	} else {
		auxcap_spe_decoder_init(&sd->d, buf, len, 0);
	}
	free(cbytes);
	if (ctx->time_conv && ctx->time_conv->time_mult && ctx->time_conv->time_shift < 64) {
		sd->tc = *ctx->time_conv;
		sd->have_tc = true;
	}
	if (CTX_HAS(ctx, cpuid))
		sd->ds = spe_ds_encoding_of(ctx->cpuid);
	*ret_dec = sd;
	return 0;
}

static enum auxcap_branch_type spe_branch_type(const struct auxcap_spe_op *op)
{
	if (op->flags & AUXCAP_SPE_OP_CALL)
		return AUXCAP_BR_CALL;
	if (op->flags & AUXCAP_SPE_OP_RET)
		return AUXCAP_BR_RETURN;
	if (op->flags & AUXCAP_SPE_OP_COND)
		return AUXCAP_BR_COND;
	return AUXCAP_BR_JUMP;
}

/* A load or store's data access in the decode stage's terms (AUXCAP_TRACE_MEM_*): its
 * direction, and the events packet's cache and TLB bits. */
static uint32_t spe_mem(const struct auxcap_spe_op *op, uint64_t events)
{
	static const struct {
		uint64_t ev;
		uint32_t mem;
	} bits[] = {
		{ AUXCAP_SPE_EV_L1D_ACCESS, AUXCAP_TRACE_MEM_L1_ACCESS },
		{ AUXCAP_SPE_EV_L1D_REFILL, AUXCAP_TRACE_MEM_L1_MISS },
		{ AUXCAP_SPE_EV_LLC_ACCESS, AUXCAP_TRACE_MEM_LLC_ACCESS },
		{ AUXCAP_SPE_EV_LLC_MISS, AUXCAP_TRACE_MEM_LLC_MISS },
		{ AUXCAP_SPE_EV_REMOTE_ACCESS, AUXCAP_TRACE_MEM_REMOTE },
		{ AUXCAP_SPE_EV_TLB_ACCESS, AUXCAP_TRACE_MEM_TLB_ACCESS },
		{ AUXCAP_SPE_EV_TLB_WALK, AUXCAP_TRACE_MEM_TLB_MISS },
	};
	uint32_t m;

	if (op->flags & AUXCAP_SPE_OP_ATOMIC)
		m = AUXCAP_TRACE_MEM_LOAD | AUXCAP_TRACE_MEM_STORE;
	else
		m = (op->flags & AUXCAP_SPE_OP_ST) ? AUXCAP_TRACE_MEM_STORE : AUXCAP_TRACE_MEM_LOAD;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (events & bits[i].ev)
			m |= bits[i].mem;
	/* a refill or a miss implies the look-up, whether or not the unit said so */
	if (m & AUXCAP_TRACE_MEM_L1_MISS)
		m |= AUXCAP_TRACE_MEM_L1_ACCESS;
	if (m & AUXCAP_TRACE_MEM_LLC_MISS)
		m |= AUXCAP_TRACE_MEM_LLC_ACCESS;
	if (m & AUXCAP_TRACE_MEM_TLB_MISS)
		m |= AUXCAP_TRACE_MEM_TLB_ACCESS;
	return m;
}

static void spe_sample_event(const struct spe_dec *sd, const struct auxcap_spe_sample *s,
			     struct auxcap_trace_event *ev)
{
	ev->kind = AUXCAP_TRACE_SAMPLE;
	ev->offset = s->offset;
	if (s->present & AUXCAP_SPE_HAS_PC)
		ev->ip = s->pc;
	else
		ev->flags |= AUXCAP_TRACE_F_IP_UNKNOWN;
	if (s->present & AUXCAP_SPE_HAS_TIMESTAMP) {
		ev->tsc = s->timestamp;
		ev->flags |= AUXCAP_TRACE_F_HAS_TSC;
		if (sd->have_tc) {
			ev->time = spe_perf_time(&sd->tc, s->timestamp);
			ev->flags |= AUXCAP_TRACE_F_HAS_TIME;
		}
	}
	if (s->present & AUXCAP_SPE_HAS_CONTEXT) {
		ev->tid = s->context_id;
		ev->flags |= AUXCAP_TRACE_F_HAS_TID;
	}
	if (s->present & AUXCAP_SPE_HAS_DATA_VA) {
		ev->addr = s->data_va;
		ev->flags |= AUXCAP_TRACE_F_HAS_ADDR;
	}
	if (s->present & AUXCAP_SPE_HAS_DATA_PA) {
		ev->phys_addr = s->data_pa;
		ev->flags |= AUXCAP_TRACE_F_HAS_PHYS;
	}
	if (s->present & AUXCAP_SPE_HAS_TOTAL_LAT)
		ev->total_latency = s->total_lat;
	if (s->present & AUXCAP_SPE_HAS_ISSUE_LAT)
		ev->issue_latency = s->issue_lat;
	if (s->present & AUXCAP_SPE_HAS_XLAT_LAT)
		ev->translation_latency = s->xlat_lat;
	if (s->present & AUXCAP_SPE_HAS_EVENTS) {
		ev->events = s->events;
		if (s->events & AUXCAP_SPE_EV_MISPREDICTED)
			ev->flags |= AUXCAP_TRACE_F_MISPRED;
		if (s->events & AUXCAP_SPE_EV_TRANSACTIONAL)
			ev->flags |= AUXCAP_TRACE_F_SPECULATIVE;
	}
	if (s->present & AUXCAP_SPE_HAS_OP) {
		ev->op = AUXCAP_SPE_EVENT_OP(s->op.cls, s->op.raw);
		if (s->op.cls == AUXCAP_SPE_OP_CLASS_BRANCH)
			ev->branch = spe_branch_type(&s->op);
	}
	if (s->present & AUXCAP_SPE_HAS_TARGET)
		ev->to = s->target;
	if ((s->present & AUXCAP_SPE_HAS_OP) && s->op.cls == AUXCAP_SPE_OP_CLASS_LDST) {
		ev->mem = spe_mem(&s->op, s->present & AUXCAP_SPE_HAS_EVENTS ? s->events : 0);
		if (s->present & AUXCAP_SPE_HAS_DATA_SOURCE)
			ev->source = spe_source(sd->ds, s->data_source);
	}
}

static int spe_decoder_next(void *dec, struct auxcap_trace_event *ev)
{
	struct spe_dec *sd = dec;
	struct auxcap_spe_event se;
	int r;

	if (!sd || !ev)
		return -EINVAL;
	if (sd->lost) {
		memset(ev, 0, sizeof(*ev));
		ev->kind = AUXCAP_TRACE_GAP;
		ev->offset = sd->base - sd->lost;
		ev->err = -ENODATA;
		ev->native = AUXCAP_SPE_ERR_UNTERMINATED;
		ev->what = auxcap_spe_error_str(AUXCAP_SPE_ERR_UNTERMINATED);
		sd->lost = 0;
		return 1;
	}
	r = auxcap_spe_decoder_next(&sd->d, &se);
	if (r <= 0)
		return r;
	/*
	 * The data ends inside a packet or a record (both only happen at the end): when the
	 * stream goes on in the next piece, that piece decodes the record; stop here.
	 */
	if (se.type == AUXCAP_SPE_EVENT_ERROR && sd->more &&
	    (se.error.kind == AUXCAP_SPE_ERR_TRUNCATED ||
	     se.error.kind == AUXCAP_SPE_ERR_UNTERMINATED)) {
		sd->d.pos = sd->d.len;
		sd->d.in_record = false;
		return 0;
	}
	memset(ev, 0, sizeof(*ev));
	if (se.type == AUXCAP_SPE_EVENT_ERROR) {
		ev->kind = AUXCAP_TRACE_GAP;
		ev->offset = sd->base + se.error.offset;
		ev->err = se.error.code;
		ev->native = (int)se.error.kind;
		ev->what = auxcap_spe_error_str(se.error.kind);
		return 1;
	}
	spe_sample_event(sd, &se.sample, ev);
	ev->offset += sd->base;
	return 1;
}

static void spe_decoder_free(void *dec)
{
	struct spe_dec *sd = dec;

	if (sd)
		free(sd->work);
	free(sd);
}

/* Packets in perf report -D's layout, the samples they make, errors, the accounting line. */
static int spe_dump(const struct auxcap_decode_ctx *ctx, const uint8_t *buf, size_t len,
		    auxcap_backend_line_fn fn, void *arg)
{
	struct auxcap_linefile lf;
	struct auxcap_spe_stats st;
	FILE *f;
	int r, rc;

	(void)ctx;
	if ((!buf && len) || !fn)
		return -EINVAL;
	r = auxcap_linefile_open(&lf, fn, arg, &f);
	if (r < 0)
		return r;
	r = auxcap_spe_dump_raw(buf, len, f,
				AUXCAP_SPE_DUMP_PACKETS | AUXCAP_SPE_DUMP_SAMPLES |
					AUXCAP_SPE_DUMP_SUMMARY,
				&st);
	rc = auxcap_linefile_close(&lf, f);
	if (rc < 0)
		return rc;
	if (r < 0)
		return r;
	return st.errors > INT32_MAX ? INT32_MAX : (int)st.errors;
}

const struct auxcap_backend_ops auxcap_backend_arm_spe = {
	.abi = AUXCAP_BACKEND_ABI,
	.name = "arm_spe",
	.description = "Arm Statistical Profiling Extension (auxcap's packet decoder)",
	.auxtrace_type = AUXCAP_AUXTRACE_ARM_SPE,
	.probe = spe_probe,
	.recording_options = auxcap_spe_recording_options,
	.info_size = auxcap_spe_info_size,
	.info_fill = auxcap_spe_info_fill,
	.find_snapshot = auxcap_spe_find_snapshot,
	.decoder_new = spe_decoder_new,
	.decoder_next = spe_decoder_next,
	.decoder_free = spe_decoder_free,
	.dump = spe_dump,
	.flags = AUXCAP_BACKEND_F_TRACE_HAS_TID | AUXCAP_BACKEND_F_SAMPLED,
	.describe = auxcap_spe_event_text,
};
