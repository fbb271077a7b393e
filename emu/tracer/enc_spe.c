/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Arm SPE-style encoder of the live tracer: sampled operation records.
 *
 * Sampling: like PMSIRR_EL1.INTERVAL, a counter is loaded with the interval N and decremented
 * by every executed (traced) instruction; the instruction that brings it to zero is sampled
 * and the counter is reloaded.  So with N = 1 every instruction is sampled, with N = 7 the
 * 7th, 14th, ...  With spe_jitter (PMSIRR_EL1.RND) each reload adds a pseudo-random 0..255
 * (xorshift64, fixed seed: runs are reproducible).
 *
 * Encoding of one record (the facts are from the Arm ARM, "Statistical Profiling Extension",
 * packet formats; every multi-byte payload is little-endian).  A short header byte holds the
 * payload size in bits [5:4] as 1 << sz bytes.  The packets, in this order:
 *
 *   0xB0 + 8 bytes  Address, index 0: PC of the sampled instruction.
 *                   payload[55:0] = VA[55:0], payload[62:61] = EL (0: EL0, user space),
 *                   payload[63] = NS (1: Non-secure).  Top byte 0x80 for user code.
 *   0x64 + 4 bytes  Context, index 0 (CONTEXTIDR_EL1): the thread id, as Linux writes it with
 *                   CONFIG_PID_IN_CONTEXTIDR.
 *   0x48|c + 1 byte Operation type; class c in header bits [1:0]:
 *                     c = 0 other:         payload 0x00
 *                     c = 1 load/store:    payload bit 0 = 1 store / 0 load, bits [7:1] = 0
 *                                          (general-purpose register access)
 *                     c = 2 branch:        payload bit 0 = conditional, bit 1 = indirect
 *                                          (indirect jumps, indirect calls and returns)
 *   0x52 + 2 bytes  Events: bit 1 retired (always); loads/stores: bit 2 L1D access and
 *                   bit 4 TLB access (always), bit 3 L1D refill (an L1 miss), bit 8 LLC
 *                   access (an L1 miss that missed the L2 too), bit 9 LLC miss, bit 5 TLB
 *                   walk (a TLB miss); bit 6 not taken (a conditional branch not taken).
 *                   So an L1 miss served by the L2 has L1D refill without LLC access; the
 *                   L2's own events (L2D access, L2D hit) are never set.
 *   0x53 + 2 bytes  Data source (loads only, as on Neoverse cores, whose stores carry none):
 *                   where the model served the load, in Arm's common encoding (the one the
 *                   emulated CPU, a Neoverse N1, uses: AUXCAP_EMU_SPE_CPUID): 0x0 L1D, 0x8
 *                   L2, 0xb system cache (the model's last-level cache), 0xe DRAM.
 *   0x98 + 2 bytes  Counter, index 0: total latency in cycles, the memory model's (below).
 *   0x9A + 2 bytes  Counter, index 2: translation latency (loads/stores only), the model's.
 *   0xB1 + 8 bytes  Address, index 1: branch target (branches only): the address executed
 *                   next; same NS/EL format as the PC.
 *   0xB2 + 8 bytes  Address, index 2: data virtual address (loads/stores only); payload is the
 *                   64-bit VA (bits [63:56] would hold a tag; 0 here).
 *   0x71 + 8 bytes  Timestamp: the TSC at the stop after the instruction.  It ends the record
 *                   (a record ends with a Timestamp packet, 0x71, or an End packet, 0x01).
 *
 * An instruction with a memory operand and a branch (e.g. "jmp *mem") is reported as a
 * branch.  System calls are "other" operations.
 *
 * Latencies and cache events come from a model of the memory hierarchy (spe_cache.c), not
 * from the clock: the TSC between two ptrace stops measures the tracer.  Every data access
 * the tracer reports goes through the model, sampled or not and inside the address filter
 * or not (caches see all accesses of the thread): an L1 data cache of 32 KiB (8-way), a
 * private L2 of 256 KiB (8-way), a last-level cache of 2 MiB (16-way), all of 64-byte lines,
 * and a data TLB of 64 entries (4-way, 4 KiB pages), true LRU, indexed and tagged by virtual
 * address.  The total latency is SPE_LAT_OTHER (1) for branches and other operations; for a
 * load or store SPE_LAT_L1_HIT (4) on an L1 hit, SPE_LAT_L2_HIT (12) on an L1 miss that hits
 * the L2, SPE_LAT_LLC_HIT (36) on an L2 miss that hits the LLC, SPE_LAT_MEMORY (200) on an
 * LLC miss, plus SPE_LAT_TLB_WALK (30) when the TLB walked; the translation latency is
 * SPE_LAT_TLB_WALK after a walk, else SPE_LAT_TLB_HIT (1).  Approximated: an access is one
 * line (its first byte's), loads and stores are alike (stores allocate), the L2 and the LLC
 * are non-inclusive (each looked up on a miss of the level above, every level that missed
 * filled; an L2 hit does not touch the LLC); no prefetcher, no coherence (other threads and
 * the kernel do not evict), no large pages, no queueing.
 *
 * The event's format terms (passed in spe_flags, spe_min_latency, spe_event_filter) act as the
 * driver's registers do on hardware: a sampled operation that the filters reject is dropped
 * (no record; the interval counter is reloaded all the same): load_filter / store_filter /
 * branch_filter keep only those operation types (any of them), event_filter keeps records
 * whose events include all its bits, min_latency those whose (modelled) total latency reaches
 * it; ts_enable=0 ends records with an End packet (0x01) instead of the timestamp.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "tracer_int.h"

#define SPE_HDR_ADDR_PC	     0xb0u
#define SPE_HDR_ADDR_BRANCH  0xb1u
#define SPE_HDR_ADDR_DATA_VA 0xb2u
#define SPE_HDR_CONTEXT_EL1  0x64u
#define SPE_HDR_OP_TYPE	     0x48u
#define SPE_HDR_EVENTS_2B    0x52u
#define SPE_HDR_SOURCE_2B    0x53u
#define SPE_HDR_COUNTER_TOT  0x98u /* 0b10011iii, index 0: total latency */
#define SPE_HDR_COUNTER_XLAT 0x9au /* index 2: translation latency */
#define SPE_HDR_TIMESTAMP    0x71u
#define SPE_HDR_END	     0x01u

#define SPE_OP_OTHER  0u
#define SPE_OP_LDST   1u
#define SPE_OP_BRANCH 2u

#define SPE_OP_ST      0x01u
#define SPE_OP_BR_COND 0x01u
#define SPE_OP_BR_IND  0x02u

#define SPE_EV_RETIRED	  (1u << 1)
#define SPE_EV_L1D_ACCESS (1u << 2)
#define SPE_EV_L1D_REFILL (1u << 3)
#define SPE_EV_TLB_ACCESS (1u << 4)
#define SPE_EV_TLB_WALK	  (1u << 5)
#define SPE_EV_NOT_TAKEN  (1u << 6)
#define SPE_EV_LLC_ACCESS (1u << 8)
#define SPE_EV_LLC_MISS	  (1u << 9)

/* Data sources, Arm's common encoding. */
#define SPE_DS_L1D	 0x0u
#define SPE_DS_L2	 0x8u
#define SPE_DS_SYS_CACHE 0xbu
#define SPE_DS_DRAM	 0xeu

/* The memory model's latencies, cycles. */
#define SPE_LAT_OTHER	 1u   /* total latency of a branch or other operation */
#define SPE_LAT_L1_HIT	 4u   /* load/store hitting the L1D */
#define SPE_LAT_L2_HIT	 12u  /* missing the L1D, hitting the L2 */
#define SPE_LAT_LLC_HIT	 36u  /* missing the L2, hitting the LLC */
#define SPE_LAT_MEMORY	 200u /* missing the LLC */
#define SPE_LAT_TLB_HIT	 1u   /* translation latency of a TLB hit */
#define SPE_LAT_TLB_WALK 30u  /* translation latency of a TLB walk, added to the total */

#define SPE_ADDR_NS	 (1ull << 63)
#define SPE_ADDR_VA_MASK ((1ull << 56) - 1)

struct enc_spe {
	struct auxcap_tracer_out *out;	       /* borrowed */
	uint32_t interval;		       /* instructions between samples */
	bool jitter;			       /* add 0..255 on reload */
	uint64_t rng;			       /* xorshift64 state */
	uint64_t countdown;		       /* instructions until the next sample */
	uint32_t tid;			       /* context packet payload */
	uint32_t flags;			       /* AUXCAP_TRACER_SPE_* */
	uint32_t min_latency;		       /* cycles, with AUXCAP_TRACER_SPE_MIN_LATENCY */
	uint64_t event_filter;		       /* event bits a record must have */
	struct auxcap_tracer_spe_cache *cache; /* the memory model, owned */
};

static uint64_t reload(struct enc_spe *s)
{
	uint64_t n = s->interval;

	if (s->jitter) {
		s->rng ^= s->rng << 13;
		s->rng ^= s->rng >> 7;
		s->rng ^= s->rng << 17;
		n += s->rng & 0xff;
	}
	return n;
}

static int spe_init(void *priv, const struct auxcap_tracer_opts *opts,
		    struct auxcap_tracer_out *out)
{
	struct enc_spe *s = priv;
	int r;

	r = auxcap_tracer_spe_cache_new(&s->cache);
	if (r < 0)
		return r;
	s->out = out;
	s->interval = opts->spe_interval ? opts->spe_interval : 1024;
	s->jitter = opts->spe_jitter;
	s->flags = opts->spe_flags;
	s->min_latency = opts->spe_min_latency;
	s->event_filter = opts->spe_event_filter;
	s->rng = 0x9e3779b97f4a7c15ull;
	s->countdown = reload(s);
	return 0;
}

static void spe_fini(void *priv)
{
	struct enc_spe *s = priv;

	auxcap_tracer_spe_cache_free(s->cache);
	s->cache = NULL;
}

static int spe_begin(void *priv, const struct auxcap_tracer_begin *b)
{
	struct enc_spe *s = priv;

	s->tid = b->tid;
	return 0;
}

static uint8_t *put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++, v >>= 8)
		*p++ = (uint8_t)v;
	return p;
}

static bool is_branch(enum auxcap_tracer_kind k)
{
	return k >= AUXCAP_TRACER_COND && k <= AUXCAP_TRACER_RETURN;
}

/* Whether the filters keep a sampled operation (PMSFCR_EL1.FT/FE/FL on hardware). */
static bool spe_keep(const struct enc_spe *s, uint8_t op_class, uint8_t op, uint16_t events,
		     uint64_t lat)
{
	uint32_t types = s->flags & (AUXCAP_TRACER_SPE_FILTER_LOAD | AUXCAP_TRACER_SPE_FILTER_STORE |
				     AUXCAP_TRACER_SPE_FILTER_BRANCH);

	if (types) {
		bool keep = false;

		if (op_class == SPE_OP_LDST)
			keep = (op & SPE_OP_ST) ? (types & AUXCAP_TRACER_SPE_FILTER_STORE)
						: (types & AUXCAP_TRACER_SPE_FILTER_LOAD);
		else if (op_class == SPE_OP_BRANCH)
			keep = types & AUXCAP_TRACER_SPE_FILTER_BRANCH;
		if (!keep)
			return false;
	}
	if ((events & s->event_filter) != s->event_filter)
		return false;
	if ((s->flags & AUXCAP_TRACER_SPE_MIN_LATENCY) && lat < s->min_latency)
		return false;
	return true;
}

/*
 * The record of the sampled instruction @in; @miss is what its data access missed in the
 * memory model (enum auxcap_tracer_spe_cache_miss).
 */
static int spe_record(struct enc_spe *s, const struct auxcap_tracer_insn *in, unsigned int miss)
{
	uint8_t rec[64], *p = rec;
	uint8_t op_class = SPE_OP_OTHER, op = 0;
	uint16_t events = SPE_EV_RETIRED;
	uint64_t lat = SPE_LAT_OTHER, xlat = 0;
	unsigned int source = SPE_DS_L1D;
	int r;

	if (is_branch(in->kind)) {
		op_class = SPE_OP_BRANCH;
		if (in->kind == AUXCAP_TRACER_COND) {
			op |= SPE_OP_BR_COND;
			if (!in->taken)
				events |= SPE_EV_NOT_TAKEN;
		}
		if (in->kind >= AUXCAP_TRACER_IND_JUMP)
			op |= SPE_OP_BR_IND;
	} else if (in->mem) {
		op_class = SPE_OP_LDST;
		if (in->mem & AUXCAP_TRACER_MEM_STORE)
			op |= SPE_OP_ST;
		events |= SPE_EV_L1D_ACCESS | SPE_EV_TLB_ACCESS;
		lat = SPE_LAT_L1_HIT;
		if (miss & AUXCAP_TRACER_SPE_CACHE_L1_MISS) {
			events |= SPE_EV_L1D_REFILL;
			lat = SPE_LAT_L2_HIT;
			source = SPE_DS_L2;
		}
		if (miss & AUXCAP_TRACER_SPE_CACHE_L2_MISS) {
			events |= SPE_EV_LLC_ACCESS;
			lat = SPE_LAT_LLC_HIT;
			source = SPE_DS_SYS_CACHE;
		}
		if (miss & AUXCAP_TRACER_SPE_CACHE_LLC_MISS) {
			events |= SPE_EV_LLC_MISS;
			lat = SPE_LAT_MEMORY;
			source = SPE_DS_DRAM;
		}
		xlat = SPE_LAT_TLB_HIT;
		if (miss & AUXCAP_TRACER_SPE_CACHE_TLB_WALK) {
			events |= SPE_EV_TLB_WALK;
			xlat = SPE_LAT_TLB_WALK;
			lat += SPE_LAT_TLB_WALK;
		}
	}
	if (!spe_keep(s, op_class, op, events, lat))
		return 0; /* the filters drop it */
	*p++ = SPE_HDR_ADDR_PC;
	p = put_le(p, SPE_ADDR_NS | (in->ip & SPE_ADDR_VA_MASK), 8);
	*p++ = SPE_HDR_CONTEXT_EL1;
	p = put_le(p, s->tid, 4);
	*p++ = (uint8_t)(SPE_HDR_OP_TYPE | op_class);
	*p++ = op;
	*p++ = SPE_HDR_EVENTS_2B;
	p = put_le(p, events, 2);
	if (op_class == SPE_OP_LDST && !(op & SPE_OP_ST)) {
		*p++ = SPE_HDR_SOURCE_2B;
		p = put_le(p, source, 2);
	}
	*p++ = SPE_HDR_COUNTER_TOT;
	p = put_le(p, lat, 2);
	if (op_class == SPE_OP_LDST) {
		*p++ = SPE_HDR_COUNTER_XLAT;
		p = put_le(p, xlat, 2);
	}
	if (op_class == SPE_OP_BRANCH && in->next_ip) {
		*p++ = SPE_HDR_ADDR_BRANCH;
		p = put_le(p, SPE_ADDR_NS | (in->next_ip & SPE_ADDR_VA_MASK), 8);
	}
	if (op_class == SPE_OP_LDST) {
		*p++ = SPE_HDR_ADDR_DATA_VA;
		p = put_le(p, in->data_addr, 8);
	}
	if (s->flags & AUXCAP_TRACER_SPE_NO_TIMESTAMP) {
		*p++ = SPE_HDR_END;
	} else {
		*p++ = SPE_HDR_TIMESTAMP;
		p = put_le(p, in->tsc, 8);
	}
	r = auxcap_tracer_out_put(s->out, rec, (size_t)(p - rec));
	if (r == 0)
		s->out->stats->packets++;
	return r;
}

static int spe_insn(void *priv, const struct auxcap_tracer_insn *in)
{
	struct enc_spe *s = priv;
	unsigned int miss = 0;

	/* The caches see every access of the thread, sampled or not, traced or not. */
	if (in->mem)
		miss = auxcap_tracer_spe_cache_access(s->cache, in->data_addr);
	if (!in->traced)
		return 0;
	if (--s->countdown)
		return 0;
	s->countdown = reload(s);
	return spe_record(s, in, miss);
}

static int spe_async(void *priv, uint64_t from, uint64_t to, bool to_traced, uint64_t tsc)
{
	(void)priv;
	(void)from;
	(void)to;
	(void)to_traced;
	(void)tsc;
	return 0;
}

static int spe_end(void *priv, uint64_t ip, uint64_t tsc)
{
	(void)priv;
	(void)ip;
	(void)tsc;
	return 0;
}

const struct auxcap_tracer_encoder_ops auxcap_tracer_enc_spe = {
	.name = "arm_spe",
	.priv_size = sizeof(struct enc_spe),
	.init = spe_init,
	.begin = spe_begin,
	.insn = spe_insn,
	.async = spe_async,
	.end = spe_end,
	.fini = spe_fini,
};
