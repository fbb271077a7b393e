/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The live tracer with the Arm SPE-style encoder.  A minimal parser written here from the
 * encoding documented in emu/tracer/enc_spe.c splits the stream into records and checks
 * PCs, operation types, data addresses (against the test program's ELF symbols) and the
 * sampling interval.  The memory model behind the events and latencies (spe_cache.c: L1D,
 * L2, LLC, DTLB) is tested alone, replayed over a run's instruction log against its records,
 * and against a program that walks buffers sized for each level (tracer_cache_prog.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tracer_int.h"
#include "tracer_run.h"
#include "util.h"

/* Event bits (Arm ARM, SPE events packet). */
#define EV_RETIRED    (1u << 1)
#define EV_L1D_ACCESS (1u << 2)
#define EV_L1D_REFILL (1u << 3)
#define EV_TLB_ACCESS (1u << 4)
#define EV_TLB_WALK   (1u << 5)
#define EV_NOT_TAKEN  (1u << 6)
#define EV_LLC_ACCESS (1u << 8)
#define EV_LLC_MISS   (1u << 9)
#define EV_MISSES     (EV_L1D_REFILL | EV_TLB_WALK | EV_LLC_ACCESS | EV_LLC_MISS)
/* every event the encoder sets: nothing else, in particular no L2D access or hit (events of a
 * wider packet in newer versions of the architecture; perf 6.1 knows none of them) */
#define EV_MODELLED                                                                                \
	(EV_RETIRED | EV_L1D_ACCESS | EV_L1D_REFILL | EV_TLB_ACCESS | EV_TLB_WALK | EV_NOT_TAKEN | \
	 EV_LLC_ACCESS | EV_LLC_MISS)

/* The model's latencies, cycles, as enc_spe.c documents them. */
#define LAT_OTHER    1u
#define LAT_L1_HIT   4u
#define LAT_L2_HIT   12u
#define LAT_LLC_HIT  36u
#define LAT_MEMORY   200u
#define LAT_TLB_HIT  1u
#define LAT_TLB_WALK 30u

/* One parsed record. */
struct spe_rec {
	uint64_t pc;	  /* address packet index 0, VA bits */
	uint8_t pc_el;	  /* its EL field */
	uint8_t pc_ns;	  /* its NS bit */
	uint64_t target;  /* address packet index 1, VA bits; 0 if absent */
	uint64_t va;	  /* address packet index 2; 0 if absent */
	int has_va;	  /* a data address packet was present */
	uint32_t context; /* context packet payload */
	int op_class;	  /* op type header bits [1:0]; -1 if absent */
	uint8_t op;	  /* op type payload */
	uint16_t events;  /* events payload */
	uint8_t events_sz; /* its size, bytes */
	uint16_t latency; /* counter index 0 */
	uint16_t xlat;	  /* counter index 2 (translation latency) */
	int has_xlat;	  /* a translation latency packet was present */
	uint16_t source;  /* data source payload (Arm's common encoding) */
	int has_source;	  /* a data source packet was present */
	uint64_t ts;	  /* timestamp payload */
	int ended_by_end; /* the record ended with an End packet (no timestamp) */
};

static uint64_t le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i > 0; i--)
		v = (v << 8) | p[i - 1];
	return v;
}

/* Parse all records of @buf; returns their number, fails the test on a malformed stream. */
static size_t spe_parse(const uint8_t *buf, size_t len, struct spe_rec **ret)
{
	struct spe_rec *recs = NULL, cur;
	size_t n = 0, cap = 0, off = 0;

	memset(&cur, 0, sizeof(cur));
	cur.op_class = -1;
	while (off < len) {
		uint8_t h = buf[off];
		size_t sz;
		uint64_t v;

		if (h == 0x00) { /* padding */
			off++;
			continue;
		}
		if (h == 0x01) { /* End: a record without a timestamp (ts_enable=0) */
			cur.ended_by_end = 1;
			if (n == cap) {
				cap = cap ? cap * 2 : 4096;
				recs = realloc(recs, cap * sizeof(*recs));
				assert_non_null(recs);
			}
			recs[n++] = cur;
			memset(&cur, 0, sizeof(cur));
			cur.op_class = -1;
			off++;
			continue;
		}
		sz = (size_t)1 << ((h >> 4) & 3);
		assert_true(off + 1 + sz <= len);
		v = le(buf + off + 1, sz);
		if ((h & 0xf8) == 0xb0) {
			assert_int_equal(sz, 8);
			if ((h & 7) == 0) {
				cur.pc = v & ((1ull << 56) - 1);
				cur.pc_el = (uint8_t)((v >> 61) & 3);
				cur.pc_ns = (uint8_t)(v >> 63);
			} else if ((h & 7) == 1) {
				cur.target = v & ((1ull << 56) - 1);
			} else if ((h & 7) == 2) {
				cur.va = v;
				cur.has_va = 1;
			}
		} else if ((h & 0xf8) == 0x98) {
			assert_int_equal(sz, 2);
			if ((h & 7) == 0) {
				cur.latency = (uint16_t)v;
			} else if ((h & 7) == 2) {
				cur.xlat = (uint16_t)v;
				cur.has_xlat = 1;
			}
		} else if ((h & 0xfc) == 0x64) {
			assert_int_equal(sz, 4);
			cur.context = (uint32_t)v;
		} else if ((h & 0xfc) == 0x48) {
			assert_int_equal(sz, 1);
			cur.op_class = h & 3;
			cur.op = (uint8_t)v;
		} else if ((h & 0xcf) == 0x42) {
			cur.events = (uint16_t)v;
			cur.events_sz = (uint8_t)sz;
		} else if ((h & 0xcf) == 0x43) {
			cur.source = (uint16_t)v;
			cur.has_source = 1;
		} else if (h == 0x71) {
			cur.ts = v;
			if (n == cap) {
				cap = cap ? cap * 2 : 4096;
				recs = realloc(recs, cap * sizeof(*recs));
				assert_non_null(recs);
			}
			recs[n++] = cur;
			memset(&cur, 0, sizeof(cur));
			cur.op_class = -1;
		} else {
			fail_msg("unknown SPE header %#x at offset %zu", h, off);
		}
		off += 1 + sz;
	}
	assert_int_equal(cur.op_class, -1); /* no unterminated record */
	*ret = recs;
	return n;
}

static bool is_branch_kind(uint8_t kind)
{
	return kind >= AUXCAP_TRACER_COND && kind <= AUXCAP_TRACER_RETURN;
}

/* A load or store record: a memory operand and not a branch. */
static bool is_ldst(const struct tr_insn *e)
{
	return e->mem && !is_branch_kind(e->kind);
}

/* The memory events of an access the model says missed @miss (AUXCAP_TRACER_SPE_CACHE_*). */
static uint16_t model_events(unsigned int miss)
{
	uint16_t ev = EV_L1D_ACCESS | EV_TLB_ACCESS;

	if (miss & AUXCAP_TRACER_SPE_CACHE_L1_MISS)
		ev |= EV_L1D_REFILL;
	if (miss & AUXCAP_TRACER_SPE_CACHE_L2_MISS) /* the L2 missed: the LLC is looked up */
		ev |= EV_LLC_ACCESS;
	if (miss & AUXCAP_TRACER_SPE_CACHE_LLC_MISS)
		ev |= EV_LLC_MISS;
	if (miss & AUXCAP_TRACER_SPE_CACHE_TLB_WALK)
		ev |= EV_TLB_WALK;
	return ev;
}

/* The total latency a load/store record with @events must carry. */
static unsigned int ldst_latency(uint16_t events)
{
	unsigned int lat = LAT_L1_HIT;

	if (events & EV_LLC_MISS)
		lat = LAT_MEMORY;
	else if (events & EV_LLC_ACCESS)
		lat = LAT_LLC_HIT;
	else if (events & EV_L1D_REFILL)
		lat = LAT_L2_HIT;
	return lat + (events & EV_TLB_WALK ? LAT_TLB_WALK : 0);
}

/* The model's latency of logged instruction @e whose access missed @miss. */
static unsigned int model_latency(const struct tr_insn *e, unsigned int miss)
{
	return is_ldst(e) ? ldst_latency(model_events(miss)) : LAT_OTHER;
}

/*
 * What the model says each access of the log missed, replayed independently of the encoder:
 * every logged instruction's access in order, traced or not.  Returns a malloc'd array of
 * run->nlog miss bit sets (0 for instructions without an access).
 */
static unsigned int *replay_model(const struct tr_run *run)
{
	struct auxcap_tracer_spe_cache *c;
	unsigned int *miss = calloc(run->nlog ? run->nlog : 1, sizeof(*miss));

	assert_non_null(miss);
	assert_int_equal(auxcap_tracer_spe_cache_new(&c), 0);
	for (size_t i = 0; i < run->nlog; i++)
		if (run->log[i].mem)
			miss[i] = auxcap_tracer_spe_cache_access(c, run->log[i].data_addr);
	auxcap_tracer_spe_cache_free(c);
	return miss;
}

/* The latency counters agree with the events as the model's constants say. */
static void check_latency(const struct spe_rec *r)
{
	/* a 2-byte events packet of the modelled events only (no L2D events) */
	assert_int_equal(r->events_sz, 2);
	assert_int_equal(r->events & ~EV_MODELLED, 0);
	if (r->op_class != 1) {
		assert_int_equal(r->latency, LAT_OTHER);
		assert_false(r->has_xlat);
		assert_false(r->has_source);
		return;
	}
	/* a load says where the model served it, in Arm's common encoding (L1D 0x0, L2 0x8,
	 * system cache 0xb: the LLC, DRAM 0xe), as a Neoverse core does; a store says nothing */
	if (r->op & 1) {
		assert_false(r->has_source);
	} else {
		assert_true(r->has_source);
		assert_int_equal(r->source, r->events & EV_LLC_MISS	 ? 0xe
					    : r->events & EV_LLC_ACCESS	 ? 0xb
					    : r->events & EV_L1D_REFILL ? 0x8
									: 0x0);
	}
	assert_int_equal(r->events & (EV_L1D_ACCESS | EV_TLB_ACCESS),
			 EV_L1D_ACCESS | EV_TLB_ACCESS);
	/* an LLC access only after an L1 refill (an L1 refill without one: the L2 served it),
	 * an LLC miss only after an LLC access */
	assert_true(!(r->events & EV_LLC_ACCESS) || (r->events & EV_L1D_REFILL));
	assert_true(!(r->events & EV_LLC_MISS) || (r->events & EV_LLC_ACCESS));
	assert_int_equal(r->latency, ldst_latency(r->events));
	assert_true(r->has_xlat);
	assert_int_equal(r->xlat, r->events & EV_TLB_WALK ? LAT_TLB_WALK : LAT_TLB_HIT);
}

static void check_record(const struct tr_run *run, const struct spe_rec *r, const struct tr_insn *e)
{
	assert_int_equal(r->pc, e->ip);
	assert_int_equal(r->pc_el, 0);
	assert_int_equal(r->pc_ns, 1);
	assert_int_equal(r->context, run->tid);
	assert_true(r->events & (1u << 1)); /* retired */
	if (e->kind >= AUXCAP_TRACER_COND && e->kind <= AUXCAP_TRACER_RETURN) {
		assert_int_equal(r->op_class, 2);
		assert_int_equal(!!(r->op & 1), e->kind == AUXCAP_TRACER_COND);
		assert_int_equal(!!(r->op & 2), e->kind >= AUXCAP_TRACER_IND_JUMP);
		assert_int_equal(!!(r->events & (1u << 6)),
				 e->kind == AUXCAP_TRACER_COND && !e->taken);
		assert_int_equal(r->target, e->next_ip);
	} else if (e->mem) {
		assert_int_equal(r->op_class, 1);
		assert_int_equal(r->op & 1, !!(e->mem & AUXCAP_TRACER_MEM_STORE));
		assert_true(r->has_va);
		assert_int_equal(r->va, e->data_addr);
	} else {
		assert_int_equal(r->op_class, 0);
		assert_false(r->has_va);
	}
	check_latency(r);
}

static void test_spe_every_instruction_with_known_data_addresses(void **state)
{
	char *argv[] = { (char *)tr_prog(), "25", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_ARM_SPE, .spe_interval = 1 };
	uint64_t lo, hi, store_sym, load_sym, prev_ts = 0;
	size_t n, j = 0, stores = 0, loads = 0, misses = 0, l2_hits = 0, untraced = 0;
	struct spe_rec *recs;
	struct tr_run run;
	unsigned int *miss;

	(void)state;
	assert_int_equal(tr_elf_text(argv[0], &lo, &hi), 0);
	assert_int_equal(tr_elf_symbol(argv[0], "tracer_prog_store_target", &store_sym, NULL), 0);
	assert_int_equal(tr_elf_symbol(argv[0], "tracer_prog_load_source", &load_sym, NULL), 0);
	opts.filter_start = lo;
	opts.filter_end = hi;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	n = spe_parse(run.trace, run.trace_len, &recs);
	assert_int_equal(n, run.stats.traced_insns);
	assert_int_equal(n, run.stats.packets);
	/* Every record's events and latencies are the model's, fed every access (also those
	 * of the untraced code: ld.so and libc run outside the filter). */
	miss = replay_model(&run);
	for (size_t i = 0; i < run.nlog; i++) {
		l2_hits += (miss[i] &
			    (AUXCAP_TRACER_SPE_CACHE_L1_MISS | AUXCAP_TRACER_SPE_CACHE_L2_MISS)) ==
			   AUXCAP_TRACER_SPE_CACHE_L1_MISS;
		if (!run.log[i].traced) {
			untraced += run.log[i].mem != 0;
			continue;
		}
		check_record(&run, &recs[j], &run.log[i]);
		assert_int_equal(recs[j].latency, model_latency(&run.log[i], miss[i]));
		if (is_ldst(&run.log[i])) {
			assert_int_equal(recs[j].events & ~(EV_RETIRED | EV_NOT_TAKEN),
					 model_events(miss[i]));
			misses += (miss[i] & AUXCAP_TRACER_SPE_CACHE_L1_MISS) != 0;
		}
		assert_true(recs[j].ts >= prev_ts);
		prev_ts = recs[j].ts;
		j++;
	}
	assert_int_equal(j, n);
	assert_true(untraced > 1000);
	assert_true(misses > 0);
	/* the replay went through the L2: L1 misses it served (ld.so's and libc's re-reads
	 * beyond the L1D's 32 KiB among them; about 190 on x86-64 glibc 2.36) */
	assert_true(l2_hits > 0);
	free(miss);
	/* The program stores to one global and loads from another once per iteration. */
	for (size_t i = 0; i < n; i++) {
		if (recs[i].op_class != 1 || !recs[i].has_va)
			continue;
		stores += (recs[i].op & 1) && recs[i].va == store_sym;
		loads += !(recs[i].op & 1) && recs[i].va == load_sym;
	}
	assert_int_equal(stores, 25);
	assert_int_equal(loads, 25);
	free(recs);
	tr_run_fini(&run);
}

static void test_spe_interval_samples_every_nth_instruction(void **state)
{
	char *argv[] = { (char *)tr_prog(), "10", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_ARM_SPE, .spe_interval = 7 };
	struct spe_rec *recs;
	struct tr_run run;
	size_t n, k = 0, count = 0;

	(void)state;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	n = spe_parse(run.trace, run.trace_len, &recs);
	assert_int_equal(n, run.stats.insns / 7);
	for (size_t i = 0; i < run.nlog; i++) {
		if (++count % 7)
			continue;
		assert_true(k < n);
		check_record(&run, &recs[k], &run.log[i]);
		k++;
	}
	assert_int_equal(k, n);
	free(recs);
	tr_run_fini(&run);
}

static void test_spe_jitter_spreads_samples(void **state)
{
	char *argv[] = { (char *)tr_prog(), "10", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_ARM_SPE,
					   .spe_interval = 64,
					   .spe_jitter = true };
	struct spe_rec *recs;
	struct tr_run run;
	size_t n;

	(void)state;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	n = spe_parse(run.trace, run.trace_len, &recs);
	/* Intervals are 64..319 instructions: fewer samples than without jitter, more than
	   with the largest interval. */
	assert_true(n < run.stats.insns / 64);
	assert_true(n > run.stats.insns / 320);
	free(recs);
	tr_run_fini(&run);
}

/* The arm_spe format terms as the driver applies them: type, event and latency filters drop
 * sampled operations; without timestamps records end with End. */
static void test_spe_filters(void **state)
{
	char *argv[] = { (char *)tr_prog(), "10", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_ARM_SPE, .spe_interval = 1 };
	uint64_t lo, hi;
	struct spe_rec *recs;
	struct tr_run run;
	size_t n, j, want, dropped;
	unsigned int *miss;

	(void)state;
	assert_int_equal(tr_elf_text(argv[0], &lo, &hi), 0);
	opts.filter_start = lo;
	opts.filter_end = hi;

	/* load_filter, no timestamps: exactly the traced loads, each ended by End. */
	opts.spe_flags = AUXCAP_TRACER_SPE_FILTER_LOAD | AUXCAP_TRACER_SPE_NO_TIMESTAMP;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	n = spe_parse(run.trace, run.trace_len, &recs);
	for (size_t i = want = j = 0; i < run.nlog; i++) {
		const struct tr_insn *e = &run.log[i];

		if (!e->traced || !e->mem || (e->kind >= AUXCAP_TRACER_COND &&
					      e->kind <= AUXCAP_TRACER_RETURN) ||
		    (e->mem & AUXCAP_TRACER_MEM_STORE))
			continue;
		want++;
		assert_true(j < n);
		check_record(&run, &recs[j], e);
		assert_true(recs[j].ended_by_end);
		assert_int_equal(recs[j].ts, 0);
		j++;
	}
	assert_true(want > 10);
	assert_int_equal(n, want);
	free(recs);
	tr_run_fini(&run);

	/* branch_filter and store_filter together: branches and stores only. */
	opts.spe_flags = AUXCAP_TRACER_SPE_FILTER_BRANCH | AUXCAP_TRACER_SPE_FILTER_STORE;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	n = spe_parse(run.trace, run.trace_len, &recs);
	for (size_t i = want = j = 0; i < run.nlog; i++) {
		const struct tr_insn *e = &run.log[i];
		bool br = e->kind >= AUXCAP_TRACER_COND && e->kind <= AUXCAP_TRACER_RETURN;

		if (!e->traced || !(br || (e->mem & AUXCAP_TRACER_MEM_STORE)))
			continue;
		want++;
		assert_true(j < n);
		check_record(&run, &recs[j], e);
		assert_false(recs[j].ended_by_end);
		j++;
	}
	assert_int_equal(n, want);
	free(recs);
	tr_run_fini(&run);

	/* event_filter TLB-access (bit 4): the memory operations; then an event the encoder
	 * never sets (mispredicted): nothing at all. */
	opts.spe_flags = 0;
	opts.spe_event_filter = 1u << 4;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	n = spe_parse(run.trace, run.trace_len, &recs);
	for (size_t i = want = 0; i < run.nlog; i++)
		want += run.log[i].traced && run.log[i].mem &&
			!(run.log[i].kind >= AUXCAP_TRACER_COND &&
			  run.log[i].kind <= AUXCAP_TRACER_RETURN);
	assert_int_equal(n, want);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(recs[i].op_class, 1);
	free(recs);
	tr_run_fini(&run);
	opts.spe_event_filter = 1u << 7; /* mispredicted: never set by the encoder */
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	assert_int_equal(run.trace_len, 0);
	tr_run_fini(&run);

	/* min_latency: exactly the operations whose modelled total latency reaches it (the
	 * model replayed over the run's log).  36 is an L2 miss that hits the LLC: it keeps the
	 * accesses that reached the LLC and the L2 hits that walked the TLB (12 + 30 = 42), and
	 * drops the other L2 hits (12), the L1 hits, also those that walked the TLB (4 + 30 =
	 * 34), and every branch and other operation (1). */
	opts.spe_event_filter = 0;
	opts.spe_flags = AUXCAP_TRACER_SPE_MIN_LATENCY;
	opts.spe_min_latency = LAT_LLC_HIT;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	n = spe_parse(run.trace, run.trace_len, &recs);
	miss = replay_model(&run);
	for (size_t i = want = j = dropped = 0; i < run.nlog; i++) {
		const struct tr_insn *e = &run.log[i];
		unsigned int lat = model_latency(e, miss[i]);

		if (!e->traced)
			continue;
		if (lat < LAT_LLC_HIT) {
			dropped += is_ldst(e);
			continue;
		}
		want++;
		assert_true(j < n);
		check_record(&run, &recs[j], e);
		assert_int_equal(recs[j].latency, lat);
		assert_int_equal(recs[j].events & ~EV_RETIRED, model_events(miss[i]));
		j++;
	}
	assert_true(want > 0);
	assert_true(dropped > 0);
	assert_int_equal(n, want);
	free(miss);
	free(recs);
	tr_run_fini(&run);
}

/* An access of the model, the caches' bits only (the TLB's walk masked off). */
static unsigned int cache_miss(struct auxcap_tracer_spe_cache *c, uint64_t addr)
{
	return auxcap_tracer_spe_cache_access(c, addr) &
	       ~(unsigned int)AUXCAP_TRACER_SPE_CACHE_TLB_WALK;
}

/* The memory model alone: L1D, L2 and LLC sets in LRU order, the TLB's reach. */
static void test_spe_cache_model(void **state)
{
	const unsigned int l1 = AUXCAP_TRACER_SPE_CACHE_L1_MISS;
	const unsigned int l2 = AUXCAP_TRACER_SPE_CACHE_L2_MISS;
	const unsigned int llc = AUXCAP_TRACER_SPE_CACHE_LLC_MISS;
	const unsigned int walk = AUXCAP_TRACER_SPE_CACHE_TLB_WALK;
	const uint64_t l1_set_stride = 64 * 64;	   /* 64 sets of 64-byte lines */
	const uint64_t llc_set_stride = 2048 * 64; /* 2048 sets */
	const uint64_t base = 0x7f0000000000ull;
	struct auxcap_tracer_spe_cache *c;

	(void)state;
	assert_int_equal(auxcap_tracer_spe_cache_new(NULL), -EINVAL);
	assert_int_equal(auxcap_tracer_spe_cache_new(&c), 0);

	/* Cold: everything misses; the same line again hits everywhere, whichever byte. */
	assert_int_equal(auxcap_tracer_spe_cache_access(c, base + 8), l1 | l2 | llc | walk);
	assert_int_equal(auxcap_tracer_spe_cache_access(c, base + 8), 0);
	assert_int_equal(auxcap_tracer_spe_cache_access(c, base + 63), 0);
	/* The next line: a cache miss on a page the TLB holds. */
	assert_int_equal(auxcap_tracer_spe_cache_access(c, base + 64), l1 | l2 | llc);
	auxcap_tracer_spe_cache_free(c);

	/* Nine lines of one L1D set (each on its own page and LLC set; two share an L2 set of
	 * eight ways): the ninth evicts the first, which then misses the L1D and hits the L2. */
	assert_int_equal(auxcap_tracer_spe_cache_new(&c), 0);
	for (uint64_t k = 0; k < 9; k++)
		assert_int_equal(cache_miss(c, base + k * l1_set_stride), l1 | l2 | llc);
	assert_int_equal(cache_miss(c, base), l1);
	/* Nine lines of another set, the first used again before the ninth: it survives, the
	 * second (now the least recently used) goes. */
	for (uint64_t k = 0; k < 8; k++)
		assert_int_equal(cache_miss(c, base + 64 + k * l1_set_stride), l1 | l2 | llc);
	assert_int_equal(cache_miss(c, base + 64), 0);
	assert_int_equal(cache_miss(c, base + 64 + 8 * l1_set_stride), l1 | l2 | llc);
	assert_int_equal(cache_miss(c, base + 64), 0);
	assert_int_equal(cache_miss(c, base + 64 + l1_set_stride), l1);
	auxcap_tracer_spe_cache_free(c);

	/* Seventeen lines of one LLC set (so of one L2 set and one L1D set too): the
	 * seventeenth evicts the first from the LLC. */
	assert_int_equal(auxcap_tracer_spe_cache_new(&c), 0);
	for (uint64_t k = 0; k < 17; k++)
		assert_int_equal(cache_miss(c, base + k * llc_set_stride), l1 | l2 | llc);
	assert_int_equal(cache_miss(c, base), l1 | l2 | llc);
	/* the second was the least recently used in the LLC when the first came back */
	assert_int_equal(cache_miss(c, base + llc_set_stride), l1 | l2 | llc);
	/* the fourth is still in the LLC, long gone from the L1D and the L2 (whose sets hold
	 * the last eight of these lines): it misses both and hits the LLC */
	assert_int_equal(cache_miss(c, base + 3 * llc_set_stride), l1 | l2);
	auxcap_tracer_spe_cache_free(c);

	/* The TLB: one walk per new page while 64 pages (its reach) are in use, none on the
	 * other lines of those pages or on a second pass (whose lines, 256 KiB back, come from
	 * the L2, which holds exactly these 4096 lines); a 65th page evicts the least recently
	 * used page of its set, the first. */
	assert_int_equal(auxcap_tracer_spe_cache_new(&c), 0);
	for (uint64_t pg = 0; pg < 64; pg++) {
		for (uint64_t off = 0; off < 4096; off += 64)
			assert_int_equal(auxcap_tracer_spe_cache_access(c, base + pg * 4096 + off) &
						 walk,
					 off ? 0 : walk);
	}
	for (uint64_t pg = 0; pg < 64; pg++)
		assert_int_equal(auxcap_tracer_spe_cache_access(c, base + pg * 4096 + 8), l1);
	assert_int_equal(auxcap_tracer_spe_cache_access(c, base + 64 * 4096) & walk, walk);
	assert_int_equal(auxcap_tracer_spe_cache_access(c, base) & walk, walk);
	assert_int_equal(auxcap_tracer_spe_cache_access(c, base + 4096) & walk, 0);
	auxcap_tracer_spe_cache_free(c);
	auxcap_tracer_spe_cache_free(NULL);
}

/*
 * The L2 alone: what it serves (an L1 miss with L1D refill, no LLC access, 12 cycles), what
 * it does not (a working set beyond it goes to the LLC), its sets in LRU order, fills from the
 * LLC, and that a hit in it leaves the LLC untouched (not even its LRU order).
 */
static void test_spe_cache_model_l2(void **state)
{
	const unsigned int l1 = AUXCAP_TRACER_SPE_CACHE_L1_MISS;
	const unsigned int l2 = AUXCAP_TRACER_SPE_CACHE_L2_MISS;
	const unsigned int llc = AUXCAP_TRACER_SPE_CACHE_LLC_MISS;
	const unsigned int walk = AUXCAP_TRACER_SPE_CACHE_TLB_WALK;
	const uint64_t l2_set_stride = 512 * 64;   /* 512 sets of 64-byte lines */
	const uint64_t llc_set_stride = 2048 * 64; /* 2048 sets */
	const uint64_t base = 0x7f0000000000ull;
	struct auxcap_tracer_spe_cache *c;
	unsigned int m;

	(void)state;
	/* 128 KiB (four times the L1D, half the L2) read twice: the second pass misses the L1D
	 * on every line (a sequential walk of 32 lines per L1D set of 8 ways) and the L2 serves
	 * them all: L1D refill, no LLC access, 12 cycles; its 32 pages stay in the TLB. */
	assert_int_equal(auxcap_tracer_spe_cache_new(&c), 0);
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t off = 0; off < (128u << 10); off += 64) {
			m = auxcap_tracer_spe_cache_access(c, base + off);
			if (!pass) {
				assert_int_equal(m, l1 | l2 | llc | (off % 4096 ? 0 : walk));
				continue;
			}
			assert_int_equal(m, l1);
			assert_int_equal(model_events(m),
					 EV_L1D_ACCESS | EV_TLB_ACCESS | EV_L1D_REFILL);
			assert_int_equal(ldst_latency(model_events(m)), LAT_L2_HIT);
		}
	}
	auxcap_tracer_spe_cache_free(c);

	/* 512 KiB (twice the L2, a quarter of the LLC) read twice: the second pass misses the L1D
	 * and the L2 on every line (16 lines per L2 set of 8 ways) and hits the LLC: LLC access
	 * without LLC miss, 36 cycles; 128 pages, twice the TLB's reach: a walk on each. */
	assert_int_equal(auxcap_tracer_spe_cache_new(&c), 0);
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t off = 0; off < (512u << 10); off += 64) {
			unsigned int w = off % 4096 ? 0 : walk;

			m = auxcap_tracer_spe_cache_access(c, base + off);
			if (!pass) {
				assert_int_equal(m, l1 | l2 | llc | w);
				continue;
			}
			assert_int_equal(m, l1 | l2 | w);
			assert_int_equal(model_events(m) & ~EV_TLB_WALK,
					 EV_L1D_ACCESS | EV_TLB_ACCESS | EV_L1D_REFILL |
						 EV_LLC_ACCESS);
			assert_int_equal(ldst_latency(model_events(m)),
					 LAT_LLC_HIT + (w ? LAT_TLB_WALK : 0));
		}
	}
	/* Those LLC hits filled the L2: it holds the last 256 KiB read, so the third quarter
	 * (L1D misses, its pages among the TLB's last 64) comes from the L2. */
	for (uint64_t off = 256u << 10; off < (384u << 10); off += 64)
		assert_int_equal(auxcap_tracer_spe_cache_access(c, base + off), l1);
	auxcap_tracer_spe_cache_free(c);

	/* LRU in an L2 set: lines 32 KiB apart (x[k]) share an L2 set and an L1D set, y[j]
	 * (4 KiB apart) share that L1D set only.  Eight x fill the L2 set; y evicts x0 from the
	 * L1D, x0 comes back from the L2 (its use renewed there), so the ninth x evicts x1, the
	 * least recently used, not x0. */
	assert_int_equal(auxcap_tracer_spe_cache_new(&c), 0);
	for (uint64_t k = 0; k < 8; k++)
		assert_int_equal(cache_miss(c, base + k * l2_set_stride), l1 | l2 | llc);
	/* y1; x0, from the L2; x8; x1, from the LLC */
	assert_int_equal(cache_miss(c, base + 4096), l1 | l2 | llc);
	assert_int_equal(cache_miss(c, base), l1);
	assert_int_equal(cache_miss(c, base + 8 * l2_set_stride), l1 | l2 | llc);
	assert_int_equal(cache_miss(c, base + l2_set_stride), l1 | l2);
	/* x0 is still in the L2: six more y push it out of the L1D, and it hits the L2 */
	for (uint64_t j = 2; j < 8; j++)
		assert_int_equal(cache_miss(c, base + j * 4096), l1 | l2 | llc);
	assert_int_equal(cache_miss(c, base), l1);
	auxcap_tracer_spe_cache_free(c);

	/* An L2 hit does not touch the LLC.  Lines 128 KiB apart (x[k]) share an LLC set, an L2
	 * set and an L1D set.  x0..x7, then y (4 KiB on) evicts x0 from the L1D, and x0 hits
	 * the L2; x8..x15 fill the LLC set, and x16 evicts its least recently used line: x0,
	 * whose L2 hit did not renew it there.  So x1 still hits the LLC and x0 misses it (were
	 * the LLC looked up on x0's L2 hit, x1 would have gone instead). */
	assert_int_equal(auxcap_tracer_spe_cache_new(&c), 0);
	for (uint64_t k = 0; k < 8; k++)
		assert_int_equal(cache_miss(c, base + k * llc_set_stride), l1 | l2 | llc);
	assert_int_equal(cache_miss(c, base + 4096), l1 | l2 | llc);
	assert_int_equal(cache_miss(c, base), l1);
	for (uint64_t k = 8; k < 17; k++)
		assert_int_equal(cache_miss(c, base + k * llc_set_stride), l1 | l2 | llc);
	assert_int_equal(cache_miss(c, base + llc_set_stride), l1 | l2);
	assert_int_equal(cache_miss(c, base), l1 | l2 | llc);
	auxcap_tracer_spe_cache_free(c);
}

static const char *cache_prog(void)
{
	const char *p = getenv("AUXCAP_TRACER_CACHE_PROG");

	if (!p || access(p, X_OK) != 0)
		test_skip("AUXCAP_TRACER_CACHE_PROG does not name the cache test program; run "
			  "through meson test");
	return p;
}

/*
 * Records of a real program's loads (tracer_cache_prog.c, every load sampled), buffer by
 * buffer in the order it walks them, each line in order, pass after pass.  On its first pass
 * every buffer is cold: each line misses the L1D, the L2 and the LLC, each page walks the TLB.
 * On the second: the 4 MiB buffer (twice the LLC) misses them all again (a sequential walk of
 * more lines than a set has ways leaves none for LRU to hit), walking the TLB on each page;
 * the 512 KiB one (twice the L2) misses the L1D and the L2 and hits the LLC (36 cycles), its
 * 128 pages walking the TLB again; the 128 KiB one (half the L2) misses the L1D and hits the
 * L2: L1D refill without LLC access, 12 cycles, no walk; the 4 KiB one hits the L1D from its
 * second pass on.  The records are also the model replayed over the run's log.
 */
static void test_spe_cache_walks(void **state)
{
	char *argv[] = { (char *)cache_prog(), NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_ARM_SPE,
					   .spe_interval = 1,
					   .spe_flags = AUXCAP_TRACER_SPE_FILTER_LOAD };
	const uint16_t cold = EV_L1D_REFILL | EV_LLC_ACCESS | EV_LLC_MISS;
	/* the buffers in the order the program walks them */
	struct {
		const char *sym;
		uint64_t size;	  /* bytes, as the program defines it */
		size_t passes;	  /* how many times it reads it */
		uint16_t again;	  /* events (EV_MISSES) of a line after the first pass, TLB aside */
		unsigned int lat; /* its total latency, TLB aside */
		bool again_walks; /* each page walks the TLB on every pass, not the first only */
		uint64_t addr;	  /* its symbol's address */
		size_t n;	  /* records of its loads so far */
	} b[] = {
		{ "tracer_cache_big", 4u << 20, 2, cold, LAT_MEMORY, true, 0, 0 },
		{ "tracer_cache_wide", 512u << 10, 2, EV_L1D_REFILL | EV_LLC_ACCESS, LAT_LLC_HIT,
		  true, 0, 0 },
		{ "tracer_cache_mid", 128u << 10, 2, EV_L1D_REFILL, LAT_L2_HIT, false, 0, 0 },
		{ "tracer_cache_small", 4u << 10, 4, 0, LAT_L1_HIT, false, 0, 0 },
	};
	const size_t nb = sizeof(b) / sizeof(b[0]);
	size_t n, j, walks = 0, l2_served = 0, llc_served = 0;
	uint64_t lo, hi, sz;
	struct spe_rec *recs;
	struct tr_run run;
	unsigned int *miss;

	(void)state;
	assert_int_equal(tr_elf_text(argv[0], &lo, &hi), 0);
	for (size_t k = 0; k < nb; k++) {
		assert_int_equal(tr_elf_symbol(argv[0], b[k].sym, &b[k].addr, &sz), 0);
		assert_int_equal(sz, b[k].size);
		assert_int_equal(b[k].addr % 4096, 0);
	}
	opts.filter_start = lo;
	opts.filter_end = hi;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	assert_int_equal(run.exit_status, 0);
	n = spe_parse(run.trace, run.trace_len, &recs);
	for (size_t i = 0; i < n; i++) {
		const struct spe_rec *r = &recs[i];
		size_t k, lines, pass;
		bool walked;

		assert_int_equal(r->op_class, 1);
		assert_int_equal(r->op & 1, 0); /* loads only */
		check_latency(r);
		for (k = 0; k < nb && !(r->va >= b[k].addr && r->va < b[k].addr + b[k].size); k++)
			;
		if (k == nb) /* not one of the buffers */
			continue;
		/* after the walks of the buffers before it */
		for (size_t e = 0; e < k; e++)
			assert_int_equal(b[e].n, b[e].passes * b[e].size / 64);
		lines = b[k].size / 64;
		pass = b[k].n / lines;
		assert_true(pass < b[k].passes);
		assert_int_equal(r->va, b[k].addr + (b[k].n % lines) * 64); /* in order */
		walked = r->va % 4096 == 0 && (pass == 0 || b[k].again_walks);
		assert_int_equal(r->events & EV_MISSES,
				 (pass ? b[k].again : cold) | (walked ? EV_TLB_WALK : 0));
		assert_int_equal(r->latency,
				 (pass ? b[k].lat : LAT_MEMORY) + (walked ? LAT_TLB_WALK : 0));
		assert_int_equal(r->xlat, walked ? LAT_TLB_WALK : LAT_TLB_HIT);
		walks += walked;
		b[k].n++;
	}
	for (size_t k = 0; k < nb; k++)
		assert_int_equal(b[k].n, b[k].passes * b[k].size / 64);
	/* each page of the big and the wide buffer twice, of the others once */
	assert_int_equal(walks,
			 2 * (b[0].size + b[1].size) / 4096 + (b[2].size + b[3].size) / 4096);

	/* Every record is the model's, replayed over the run's log (the loads of the traced
	 * code: the load filter's); the L2 served the mid buffer's second pass, the LLC the wide
	 * one's. */
	miss = replay_model(&run);
	for (size_t i = j = 0; i < run.nlog; i++) {
		const struct tr_insn *e = &run.log[i];

		if (!e->traced || !is_ldst(e) || (e->mem & AUXCAP_TRACER_MEM_STORE))
			continue;
		assert_true(j < n);
		assert_int_equal(recs[j].pc, e->ip);
		assert_int_equal(recs[j].va, e->data_addr);
		assert_int_equal(recs[j].events & ~EV_RETIRED, model_events(miss[i]));
		assert_int_equal(recs[j].latency, model_latency(e, miss[i]));
		l2_served += (miss[i] & (AUXCAP_TRACER_SPE_CACHE_L1_MISS |
					 AUXCAP_TRACER_SPE_CACHE_L2_MISS)) ==
			     AUXCAP_TRACER_SPE_CACHE_L1_MISS;
		llc_served += (miss[i] & (AUXCAP_TRACER_SPE_CACHE_L2_MISS |
					  AUXCAP_TRACER_SPE_CACHE_LLC_MISS)) ==
			      AUXCAP_TRACER_SPE_CACHE_L2_MISS;
		j++;
	}
	assert_int_equal(j, n);
	assert_true(l2_served >= b[2].size / 64);
	assert_true(llc_served >= b[1].size / 64);
	free(miss);
	free(recs);
	tr_run_fini(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spe_every_instruction_with_known_data_addresses),
		cmocka_unit_test(test_spe_interval_samples_every_nth_instruction),
		cmocka_unit_test(test_spe_jitter_spreads_samples),
		cmocka_unit_test(test_spe_filters),
		cmocka_unit_test(test_spe_cache_model),
		cmocka_unit_test(test_spe_cache_model_l2),
		cmocka_unit_test(test_spe_cache_walks),
	};

	return cmocka_run_group_tests_name("emu/tracer_spe", tests, NULL, NULL);
}
