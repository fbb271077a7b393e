/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Properties of the emulated AUX producer under random interleavings.
 *
 * 1. Stepping mode, every personality in normal mode: random producer chunks, consumer
 *    reads, context switches, re-enables and (PT) gaps, from a seeded PRNG (the seed is
 *    printed; AUXCAP_SEED=<n> replays it).  The consumer rebuilds the stream from the
 *    PERF_RECORD_AUX records and the AUX bytes: every byte the hardware wrote arrives once,
 *    in order, with only zeroed padding between records, and every byte it did not write was
 *    offered while the event was off after a TRUNCATED record or a full buffer.
 * 2. The producer thread running freely against a consumer polling in this thread: the
 *    stream is a sequence of u64 counters, so the consumer can check order and account for
 *    every missing word as dropped.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "barrier.h"
#include "emu_test.h"

#define PAGE 4096u

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

static uint64_t rnd_below(uint64_t n)
{
	return rnd() % n;
}

/* A consumer that rebuilds the trace from AUX records and AUX bytes. */
struct rebuild {
	struct emu_fixture *f;
	unsigned char *win; /* AUX bytes from aux position @win_base to f->aux_tail */
	uint64_t win_base;
	size_t win_cap;
	uint64_t next_aux;     /* aux position after the last record checked */
	unsigned int next_rec; /* index in f->seen.aux of the next record to check */
	/* Expected stream: the hardware-written prefix of each offer, as (source pos, len). */
	uint64_t (*segs)[2];
	size_t nr_segs, segs_cap, seg_idx;
	uint64_t seg_off;	    /* bytes of segs[seg_idx] already matched */
	uint64_t matched;	    /* bytes matched */
	uint32_t sum_want, sum_got; /* running checksums of the expected and rebuilt streams */
	uint32_t seed;
};

static void rb_expect(struct rebuild *rb, uint64_t src, uint64_t len)
{
	if (!len)
		return;
	if (rb->nr_segs == rb->segs_cap) {
		rb->segs_cap = rb->segs_cap ? rb->segs_cap * 2 : 256;
		rb->segs = realloc(rb->segs, rb->segs_cap * sizeof(*rb->segs));
		assert_non_null(rb->segs);
	}
	rb->segs[rb->nr_segs][0] = src;
	rb->segs[rb->nr_segs][1] = len;
	rb->nr_segs++;
}

static void rb_match(struct rebuild *rb, const unsigned char *p, uint64_t len)
{
	while (len) {
		uint64_t n, src;
		unsigned char want[4096];

		assert_true(rb->seg_idx < rb->nr_segs);
		n = rb->segs[rb->seg_idx][1] - rb->seg_off;
		if (n > len)
			n = len;
		if (n > sizeof(want))
			n = sizeof(want);
		src = rb->segs[rb->seg_idx][0] + rb->seg_off;
		emu_test_pattern(want, n, src, rb->seed);
		assert_memory_equal(p, want, n);
		for (uint64_t i = 0; i < n; i++) {
			rb->sum_want = rb->sum_want * 31 + want[i];
			rb->sum_got = rb->sum_got * 31 + p[i];
		}
		p += n;
		len -= n;
		rb->matched += n;
		rb->seg_off += n;
		if (rb->seg_off == rb->segs[rb->seg_idx][1]) {
			rb->seg_idx++;
			rb->seg_off = 0;
		}
	}
}

static void rb_read(struct rebuild *rb)
{
	struct emu_fixture *f = rb->f;
	uint64_t tail0 = f->aux_tail, n;

	if (f->aux_tail - rb->win_base + f->aux_len > rb->win_cap) {
		rb->win_cap = (size_t)(f->aux_tail - rb->win_base + f->aux_len) * 2;
		rb->win = realloc(rb->win, rb->win_cap);
		assert_non_null(rb->win);
	}
	n = emu_fixture_consume_aux(f, rb->win + (tail0 - rb->win_base), f->aux_len);
	(void)n;
	/* Forget the records checked already: room for a full data ring more. */
	f->seen.n_aux -= rb->next_rec;
	memmove(f->seen.aux, f->seen.aux + rb->next_rec, f->seen.n_aux * sizeof(f->seen.aux[0]));
	rb->next_rec = 0;
	emu_fixture_drain_records(f);
	assert_true(f->seen.n_aux <= sizeof(f->seen.aux) / sizeof(f->seen.aux[0]));
	while (rb->next_rec < f->seen.n_aux) {
		struct emu_aux_rec *r = &f->seen.aux[rb->next_rec];

		if (r->offset + r->size > f->aux_tail)
			break; /* record seen before aux_head covers it */
		assert_true(r->offset >= rb->next_aux);
		for (uint64_t g = rb->next_aux; g < r->offset; g++)
			assert_int_equal(rb->win[g - rb->win_base], 0); /* padding */
		rb_match(rb, rb->win + (r->offset - rb->win_base), r->size);
		rb->next_aux = r->offset + r->size;
		rb->next_rec++;
	}
	/* Keep the window small: drop what was checked. */
	if (rb->next_aux - rb->win_base > (1u << 20)) {
		uint64_t drop = rb->next_aux - rb->win_base;

		memmove(rb->win, rb->win + drop, (size_t)(f->aux_tail - rb->next_aux));
		rb->win_base += drop;
	}
}

static uint64_t loss(const struct auxcap_emu_stats *st)
{
	return st->truncated + st->no_space + st->stalled;
}

static void run_random(enum auxcap_emu_pmu pmu, uint32_t seed, unsigned int steps)
{
	static const size_t aux_choices[] = { 1, 2, 4, 8, 16 };
	struct emu_fixture f;
	struct perf_event_attr attr;
	struct auxcap_emu_replay *rp;
	struct auxcap_emu_replay_opts o = { .sz = sizeof(o), .chunk = 1u << 16 };
	struct auxcap_emu_stats st, before;
	struct rebuild rb = { 0 };
	unsigned char *stream;
	size_t aux_pages, len = 8u << 20;
	uint64_t src = 0, losses_running = 0, offered = 0;

	rng_state = ((uint64_t)seed << 1 | 1) * 0x9E3779B97F4A7C15ull + (uint64_t)pmu;
	do
		aux_pages = aux_choices[rnd_below(5)];
	while (pmu == AUXCAP_EMU_PMU_ARM_SPE && aux_pages < 2);
	emu_test_attr(&attr, pmu);
	if (rnd_below(2))
		attr.aux_watermark = (uint32_t)(1 + rnd_below(aux_pages * PAGE));
	emu_fixture_init(&f, pmu, &attr, NULL);
	emu_fixture_map(&f, 64, aux_pages, false);
	stream = malloc(len);
	assert_non_null(stream);
	emu_test_pattern(stream, len, 0, seed);
	assert_int_equal(auxcap_emu_replay_new(stream, len, &o, &rp), 0);
	free(stream);
	assert_int_equal(auxcap_emu_replay_attach(f.emu, pmu, f.fd, rp), 0);
	rb.f = &f;
	rb.seed = seed;
	assert_int_equal(auxcap_event_enable(f.sys, f.fd, true), 0);

	for (unsigned int i = 0; i < steps; i++) {
		uint64_t a = rnd_below(100);
		ssize_t n;

		assert_int_equal(auxcap_emu_stats(f.emu, f.fd, &before), 0);
		if (a < 50) {
			n = auxcap_emu_step(f.emu, f.fd, 1 + rnd_below(aux_pages * PAGE));
			assert_true(n >= 0);
			offered += (uint64_t)n;
		} else if (a < 80) {
			rb_read(&rb);
			/* perf re-enables after every read (read_finish). */
			assert_int_equal(auxcap_event_enable(f.sys, f.fd, true), 0);
		} else if (a < 88) {
			assert_int_equal(auxcap_emu_flush(f.emu, f.fd), 0);
		} else if (a < 91) {
			(void)auxcap_emu_inject(f.emu, f.fd, AUXCAP_EMU_FAULT_GAP);
		} else if (a < 94) {
			(void)emu_fixture_poll(&f);
		} else {
			assert_int_equal(auxcap_event_enable(f.sys, f.fd, false), 0);
			assert_int_equal(auxcap_event_enable(f.sys, f.fd, true), 0);
		}
		assert_int_equal(auxcap_emu_stats(f.emu, f.fd, &st), 0);
		if (st.produced + st.dropped != before.produced + before.dropped) {
			uint64_t p = st.produced - before.produced;
			uint64_t d = st.dropped - before.dropped;

			/* One hardware write: a written prefix, then nothing once it is off. */
			rb_expect(&rb, src, p);
			src += p + d;
			/*
			 * Bytes are dropped only after a loss the consumer can see: a TRUNCATED
			 * record, a full buffer at begin(), or a driver that could not start,
			 * since the last write the hardware took in full while running.
			 */
			if (d && p)
				assert_true(loss(&st) > loss(&before));
			else if (d)
				assert_true(loss(&st) > losses_running);
			if (p)
				losses_running = loss(&before);
		}
	}
	assert_int_equal(auxcap_event_enable(f.sys, f.fd, false), 0); /* ends the transaction */
	rb_read(&rb);
	assert_int_equal(auxcap_emu_stats(f.emu, f.fd, &st), 0);
	assert_int_equal(st.produced + st.dropped, offered);
	assert_int_equal(st.aux_records_lost, 0);
	assert_int_equal(rb.next_rec, f.seen.n_aux);
	assert_int_equal(rb.matched, st.produced);
	assert_int_equal(rb.sum_got, rb.sum_want);
	assert_int_equal(rb.seg_idx, rb.nr_segs);
	if (pmu == AUXCAP_EMU_PMU_INTEL_PT)
		assert_int_equal(st.padding, 0);
	print_message("  %s: %u steps, %u AUX pages, watermark %u: %" PRIu64
		      " bytes arrived, %" PRIu64 " dropped, %" PRIu64 " truncations, %" PRIu64
		      " padding\n",
		      pmu == AUXCAP_EMU_PMU_INTEL_PT	? "intel_pt"
		      : pmu == AUXCAP_EMU_PMU_INTEL_BTS ? "intel_bts"
							: "arm_spe",
		      steps, (unsigned int)aux_pages, attr.aux_watermark, rb.matched, st.dropped,
		      st.truncated + st.no_space, st.padding);
	free(rb.win);
	free(rb.segs);
	emu_fixture_fini(&f);
}

static uint32_t test_seed(void)
{
	const char *s = getenv("AUXCAP_SEED");
	uint32_t seed =
		s ? (uint32_t)strtoul(s, NULL, 0) : (uint32_t)time(NULL) ^ (uint32_t)getpid();

	print_message("seed %u (AUXCAP_SEED=%u replays this run)\n", seed, seed);
	return seed;
}

static void test_emu_random_interleavings_every_byte_once(void **state)
{
	uint32_t seed = test_seed();

	(void)state;
	for (unsigned int round = 0; round < 4; round++) {
		run_random(AUXCAP_EMU_PMU_INTEL_PT, seed + round, 3000);
		run_random(AUXCAP_EMU_PMU_ARM_SPE, seed + round, 3000);
		run_random(AUXCAP_EMU_PMU_INTEL_BTS, seed + round, 3000);
	}
}

/* Threaded: words are their own index, so order and losses can be checked. */
static void check_words(const unsigned char *p, uint64_t len, uint64_t *next, uint64_t *gaps,
			uint64_t *missing)
{
	assert_int_equal(len % 8, 0);
	for (uint64_t i = 0; i < len; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		assert_true(w >= *next); /* in order, never twice */
		if (w != *next) {
			(*gaps)++;
			*missing += w - *next;
		}
		*next = w + 1;
	}
}

static void test_emu_thread_against_polling_consumer(void **state)
{
	const uint64_t words = 512 * 1024; /* 4 MiB */
	struct emu_fixture f;
	struct auxcap_emu_replay *rp;
	struct auxcap_emu_replay_opts o = {
		.sz = sizeof(o), .chunk = 8 * 1000, .rate = 64u << 20, .granule = 8
	};
	struct perf_event_mmap_page *pc;
	struct auxcap_emu_stats st;
	uint64_t *stream, next = 0, gaps = 0, missing = 0, polls = 0, ready = 0, rec_end = 0;
	bool done = false;

	(void)state;
	stream = malloc(words * 8);
	assert_non_null(stream);
	for (uint64_t i = 0; i < words; i++)
		stream[i] = i;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	emu_fixture_map(&f, 64, 16, false);
	pc = f.mr.base;
	assert_int_equal(auxcap_emu_replay_new(stream, words * 8, &o, &rp), 0);
	free(stream);
	assert_int_equal(auxcap_emu_replay_attach(f.emu, AUXCAP_EMU_PMU_INTEL_PT, f.fd, rp), 0);
	assert_int_equal(auxcap_event_enable(f.sys, f.fd, true), 0);
	assert_int_equal(auxcap_emu_start(f.emu), 0);
	assert_int_equal(auxcap_emu_start(f.emu), -EALREADY);

	while (!done) {
		struct pollfd p = { .fd = f.fd, .events = POLLIN };
		int r;

		r = f.sys->poll(f.sys->ctx, &p, 1, 5);
		assert_true(r >= 0);
		polls++;
		ready += r > 0;
		assert_int_equal(auxcap_emu_stats(f.emu, f.fd, &st), 0);
		if (st.produced + st.dropped == words * 8) {
			auxcap_emu_stop(f.emu);
			assert_int_equal(auxcap_event_enable(f.sys, f.fd, false), 0);
			done = true;
		}
		/*
		 * Lock-free rounds, like a consumer spinning on the control page: only the
		 * aux_head acquire orders the reads of the producer's bytes (what TSan checks;
		 * the seam calls above take the emulator's lock, which would order them too).
		 */
		for (int k = 0, seen = 0; k < 20000 && seen < 4; k++) {
			uint64_t head = auxcap_load_acquire_u64(&pc->aux_head);
			unsigned char buf[8];

			if (head == f.aux_tail)
				continue;
			seen++;

			for (uint64_t at = f.aux_tail; at < head; at += 8) {
				for (int i = 0; i < 8; i++)
					buf[i] = ((const unsigned char *)
							  f.aux)[(at + i) % f.aux_len];
				check_words(buf, 8, &next, &gaps, &missing);
			}
			f.aux_tail = head;
			auxcap_store_release_u64(&pc->aux_tail, f.aux_tail);
		}
		/* PT: the AUX records tile the stream without gaps. */
		f.seen.n_aux = 0;
		emu_fixture_drain_records(&f);
		for (unsigned int i = 0; i < f.seen.n_aux; i++) {
			assert_int_equal(f.seen.aux[i].offset, rec_end);
			rec_end += f.seen.aux[i].size;
		}
		assert_int_equal(auxcap_event_enable(f.sys, f.fd, true), 0);
	}
	assert_int_equal(auxcap_emu_stats(f.emu, f.fd, &st), 0);
	assert_int_equal(st.aux_records_lost, 0);
	assert_int_equal(f.aux_tail, st.produced);
	assert_int_equal(rec_end, st.produced);
	/* Every word arrived once in order, or was dropped while the event was off. */
	missing += words - next;
	assert_int_equal(missing * 8, st.dropped);
	assert_true(gaps <= st.truncated + st.no_space + st.stalled);
	print_message("  thread: %" PRIu64 " bytes arrived, %" PRIu64 " dropped in %" PRIu64
		      " gaps, %" PRIu64 " polls (%" PRIu64 " ready), %" PRIu64 " wakeups\n",
		      f.aux_tail, st.dropped, gaps, polls, ready, st.wakeups);
	emu_fixture_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emu_random_interleavings_every_byte_once),
		cmocka_unit_test(test_emu_thread_against_polling_consumer),
	};

	return cmocka_run_group_tests_name("emu/prop", tests, NULL, NULL);
}
