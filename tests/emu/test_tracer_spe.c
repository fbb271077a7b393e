/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The live tracer with the Arm SPE-style encoder.  A minimal parser written here from the
 * encoding documented in emu/tracer/enc_spe.c splits the stream into records and checks
 * PCs, operation types, data addresses (against the test program's ELF symbols) and the
 * sampling interval.
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

#include <cmocka.h>

#include "tracer_run.h"
#include "util.h"

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
	uint16_t latency; /* counter index 0 */
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
			if ((h & 7) == 0)
				cur.latency = (uint16_t)v;
		} else if ((h & 0xfc) == 0x64) {
			assert_int_equal(sz, 4);
			cur.context = (uint32_t)v;
		} else if ((h & 0xfc) == 0x48) {
			assert_int_equal(sz, 1);
			cur.op_class = h & 3;
			cur.op = (uint8_t)v;
		} else if ((h & 0xcf) == 0x42) {
			cur.events = (uint16_t)v;
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
}

static void test_spe_every_instruction_with_known_data_addresses(void **state)
{
	char *argv[] = { (char *)tr_prog(), "25", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_ARM_SPE, .spe_interval = 1 };
	uint64_t lo, hi, store_sym, load_sym, prev_ts = 0;
	size_t n, j = 0, stores = 0, loads = 0;
	struct spe_rec *recs;
	struct tr_run run;

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
	for (size_t i = 0; i < run.nlog; i++) {
		if (!run.log[i].traced)
			continue;
		check_record(&run, &recs[j], &run.log[i]);
		assert_true(recs[j].ts >= prev_ts);
		prev_ts = recs[j].ts;
		j++;
	}
	assert_int_equal(j, n);
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
	size_t n, j, want;

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

	/* min_latency: exactly the operations whose total latency (the TSC cycles of the
	 * step, saturating at 0xffff) reaches it.  Single steps take some 10^4 cycles: a
	 * threshold near the median keeps some and drops some. */
	opts.spe_event_filter = 0;
	opts.spe_flags = AUXCAP_TRACER_SPE_MIN_LATENCY;
	opts.spe_min_latency = 0x8000;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	n = spe_parse(run.trace, run.trace_len, &recs);
	for (size_t i = want = j = 0; i < run.nlog; i++) {
		const struct tr_insn *e = &run.log[i];
		uint64_t lat = e->tsc_delta > 0xffff ? 0xffff : e->tsc_delta;

		if (!e->traced || lat < 0x8000)
			continue;
		want++;
		assert_true(j < n);
		assert_int_equal(recs[j].pc, e->ip);
		assert_int_equal(recs[j].latency, lat);
		j++;
	}
	assert_int_equal(n, want);
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
	};

	return cmocka_run_group_tests_name("emu/tracer_spe", tests, NULL, NULL);
}
