/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture session on the emulated Intel PT PMU, stepped by the test: snapshot mode's
 * overlap trimming, and full-trace drains cut into pieces whose space is released one by
 * one.  A replay source feeds a known pseudo-random byte stream, so every chunk can be
 * compared with the exact bytes the "hardware" wrote and its offset with their true
 * position in the stream.
 */
#include <errno.h>
#include <pthread.h>
#include <linux/perf_event.h>
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

#include "auxcap/emu.h"
#include "auxcap/session.h"
#include "mem_sink.h"

#define AUX_PAGES 2
#define STREAM_LEN (1u << 22)

struct cap {
	struct auxcap_emu *emu;
	struct auxcap_sys sys; /* the emulator's seam with perf_event_open wrapped */
	int aux_fd;	       /* the emulated AUX event the session opened */
	struct auxcap_session *s;
	struct mem_sink m;
	unsigned char *stream; /* everything the replay source hands out */
	uint64_t written;      /* bytes of @stream stepped into the hardware so far */
	size_t chunks_seen;    /* chunks of m already checked */
	struct perf_event_mmap_page *pc; /* control page of the AUX event's ring (test's view) */
	struct auxcap_sink_ops spy_ops;	 /* m's ops, aux wrapped by spy_aux() */
	struct auxcap_sink spy;
	uint64_t tail_at[64];		 /* aux_tail when each chunk reached the sink */
	size_t nr_tail_at;
};

static struct cap *g_cap;

/* The emulator's perf_event_open, remembering the fd of the emulated AUX event. */
static int wrap_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		     unsigned long flags)
{
	const struct auxcap_sys *es = auxcap_emu_sys(g_cap->emu);
	int fd = es->perf_event_open(ctx, attr, pid, cpu, group_fd, flags);

	if (fd >= 0 && attr->type >= AUXCAP_EMU_TYPE_BASE)
		g_cap->aux_fd = fd;
	return fd;
}

/* The emulator's mmap, remembering the control page of the AUX event's data ring. */
static int wrap_mmap(void *ctx, size_t len, int prot, int flags, int fd, off_t off,
		     void **ret_addr)
{
	const struct auxcap_sys *es = auxcap_emu_sys(g_cap->emu);
	int r = es->mmap(ctx, len, prot, flags, fd, off, ret_addr);

	if (r == 0 && fd == g_cap->aux_fd && off == 0)
		g_cap->pc = *ret_addr;
	return r;
}

/* The memory sink's aux op (@ctx: the sink's), noting how far the AUX area was released. */
static int spy_aux(void *ctx, const struct auxcap_aux_chunk *chunk,
		   const struct auxcap_aux_span *span)
{
	struct cap *c = g_cap;

	assert_non_null(c->pc);
	if (c->nr_tail_at < sizeof(c->tail_at) / sizeof(c->tail_at[0]))
		c->tail_at[c->nr_tail_at++] = __atomic_load_n(&c->pc->aux_tail, __ATOMIC_ACQUIRE);
	return c->m.sink.ops->aux(ctx, chunk, span);
}

static void fill_stream(unsigned char *p, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)(x >> 24) | 1; /* never 0: zero pages stay recognisable */
	}
}

static void cap_open_mode(struct cap *c, bool snapshot, size_t aux_pages)
{
	struct perf_event_attr attr = { .type = AUXCAP_EMU_TYPE_BASE + AUXCAP_EMU_PMU_INTEL_PT,
					.exclude_kernel = 1 };
	struct auxcap_session_event aux = { .attr = &attr, .name = "intel_pt//u" };
	struct auxcap_emu_replay_opts ro = { .sz = sizeof(ro) };
	struct auxcap_emu_replay *rp;
	pid_t self = getpid();
	struct auxcap_session_opts o = {
		.sz = sizeof(o),
		.aux = &aux,
		.pids = &self,
		.nr_pids = 1,
		.data_pages = 8,
		.aux_pages = aux_pages,
		.snapshot = snapshot,
	};
	int failed;

	memset(c, 0, sizeof(*c));
	g_cap = c;
	c->aux_fd = -1;
	c->stream = malloc(STREAM_LEN);
	assert_non_null(c->stream);
	fill_stream(c->stream, STREAM_LEN, 7);
	mem_sink_init(&c->m);
	assert_int_equal(auxcap_emu_new(NULL, &c->emu), 0);
	assert_int_equal(auxcap_emu_replay_new(c->stream, STREAM_LEN, &ro, &rp), 0);
	assert_int_equal(auxcap_emu_replay_attach(c->emu, AUXCAP_EMU_PMU_INTEL_PT, -1, rp), 0);
	c->sys = *auxcap_emu_sys(c->emu);
	c->sys.perf_event_open = wrap_open;
	c->sys.mmap = wrap_mmap;
	c->spy_ops = *c->m.sink.ops;
	c->spy_ops.aux = spy_aux;
	c->spy.ops = &c->spy_ops;
	c->spy.ctx = c->m.sink.ctx;
	o.sys = &c->sys;
	o.sink = &c->spy;
	assert_int_equal(auxcap_session_open(&o, &c->s, &failed), 0);
	assert_true(c->aux_fd >= 0);
	assert_int_equal(auxcap_session_enable(c->s, true), 0);
}

/* Snapshot mode, AUX_PAGES pages. */
static void cap_open(struct cap *c)
{
	cap_open_mode(c, true, AUX_PAGES);
}

static void cap_close(struct cap *c)
{
	auxcap_session_free(c->s);
	auxcap_emu_free(c->emu);
	mem_sink_fini(&c->m);
	free(c->stream);
	g_cap = NULL;
}

/* The hardware writes the next @n bytes of the stream. */
static void cap_step(struct cap *c, size_t n)
{
	assert_int_equal(auxcap_emu_step(c->emu, c->aux_fd, n), (ssize_t)n);
	c->written += n;
}

/* A snapshot; returns the chunk it wrote (NULL if none) after checking its bytes. */
static const struct mem_chunk *cap_snapshot(struct cap *c)
{
	const struct mem_chunk *ch;
	struct auxcap_emu_stats es;

	assert_int_equal(auxcap_session_snapshot(c->s), 0);
	/* Nothing offered was dropped: every byte of the stream reached the AUX area. */
	assert_int_equal(auxcap_emu_stats(c->emu, c->aux_fd, &es), 0);
	assert_int_equal(es.produced, c->written);
	assert_true(c->m.nr_chunks <= c->chunks_seen + 1);
	if (c->m.nr_chunks == c->chunks_seen)
		return NULL;
	ch = &c->m.chunks[c->chunks_seen++];
	assert_true(ch->info.snapshot);
	/* Whatever it holds, it is the newest bytes the hardware wrote, in order. */
	assert_true(ch->len <= c->written);
	assert_memory_equal(c->m.aux + ch->off, c->stream + c->written - ch->len, ch->len);
	return ch;
}

static uint64_t chunk_end(const struct mem_chunk *ch)
{
	return ch->info.offset + ch->len;
}

/* Steps of known sizes through the first wrap, laps between snapshots and ambiguous moves. */
static void test_session_emu_snapshot_trims_overlap(void **state)
{
	const uint64_t size = AUX_PAGES * 4096;
	struct auxcap_session_stats st;
	const struct mem_chunk *ch;
	struct cap c;
	uint64_t end;

	(void)state;
	cap_open(&c);

	/* Not wrapped yet: the bytes so far, from stream position 0. */
	cap_step(&c, 3000);
	ch = cap_snapshot(&c);
	assert_non_null(ch);
	assert_int_equal(ch->info.offset, 0);
	assert_int_equal(ch->len, 3000);

	/* A little more trace: only the new 100 bytes, right after the first chunk. */
	cap_step(&c, 100);
	ch = cap_snapshot(&c);
	assert_non_null(ch);
	assert_int_equal(ch->info.offset, 3000);
	assert_int_equal(ch->len, 100);

	/* No trace at all: nothing is written. */
	assert_null(cap_snapshot(&c));

	/* The buffer wraps for the first time; still only the new bytes. */
	cap_step(&c, 6000);
	ch = cap_snapshot(&c);
	assert_non_null(ch);
	assert_int_equal(ch->info.offset, 3100);
	assert_int_equal(ch->len, 6000);
	auxcap_session_get_stats(c.s, &st);
	assert_int_equal(st.aux_snapshot_trimmed, size - 6000);
	assert_int_equal(st.aux_snapshot_wrapped, 0);

	/* Wrapped, so the whole buffer is valid now: 50 new bytes out of it. */
	cap_step(&c, 50);
	ch = cap_snapshot(&c);
	assert_non_null(ch);
	assert_int_equal(ch->info.offset, 9100);
	assert_int_equal(ch->len, 50);
	auxcap_session_get_stats(c.s, &st);
	assert_int_equal(st.aux_snapshot_trimmed, (size - 6000) + (size - 50));
	end = chunk_end(ch);
	assert_int_equal(end, c.written);

	/* Two laps and a bit: the whole buffer, placed past a gap. */
	cap_step(&c, 2 * size + 500);
	ch = cap_snapshot(&c);
	assert_non_null(ch);
	assert_int_equal(ch->len, size);
	assert_true(ch->info.offset > end);
	auxcap_session_get_stats(c.s, &st);
	assert_int_equal(st.aux_snapshot_wrapped, 1);
	end = chunk_end(ch);

	/* Almost a lap: too few untouched bytes to tell, so treated as wrapped. */
	cap_step(&c, size - 40);
	ch = cap_snapshot(&c);
	assert_non_null(ch);
	assert_int_equal(ch->len, size);
	assert_true(ch->info.offset > end);
	end = chunk_end(ch);

	/* Exactly one lap (the head is back where it was): wrapped, never "no new data". */
	cap_step(&c, size);
	ch = cap_snapshot(&c);
	assert_non_null(ch);
	assert_int_equal(ch->len, size);
	assert_true(ch->info.offset > end);
	auxcap_session_get_stats(c.s, &st);
	assert_int_equal(st.aux_snapshot_wrapped, 3);
	assert_int_equal(st.snapshots, 8);
	cap_close(&c);
}

/*
 * Many snapshots with less than a buffer of trace between them: the chunks are contiguous
 * and together they are exactly the stream from the first snapshot on (no duplicates, no
 * holes), and everything else was counted as trimmed.
 */
static void test_session_emu_snapshots_concatenate_to_the_stream(void **state)
{
	const uint64_t size = AUX_PAGES * 4096;
	uint64_t x = 12345, trimmed = 0, start, end;
	struct auxcap_session_stats st;
	const struct mem_chunk *ch;
	struct cap c;

	(void)state;
	cap_open(&c);
	cap_step(&c, size + 1234); /* wrapped before the first snapshot */
	ch = cap_snapshot(&c);
	assert_non_null(ch);
	assert_int_equal(ch->len, size);
	/* One lap exactly: the finder's positions are the stream's. */
	assert_int_equal(ch->info.offset, c.written - size);
	start = ch->info.offset;
	end = chunk_end(ch);
	for (int i = 0; i < 300; i++) {
		size_t n;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* 0 .. size - 64: always enough untouched bytes to compare. */
		n = (size_t)(x % (size - 64 + 1));
		if (i % 10 == 0)
			n = (size_t)(x % 64); /* some tiny ones */
		cap_step(&c, n);
		ch = cap_snapshot(&c);
		if (!n) {
			assert_null(ch);
			continue;
		}
		assert_non_null(ch);
		assert_int_equal(ch->info.offset, end);
		assert_int_equal(ch->len, n);
		trimmed += size - n;
		end = chunk_end(ch);
	}
	/* The chunks back to back are the stream's last (end - start) bytes. */
	assert_int_equal(end, c.written);
	assert_int_equal(c.m.aux_len, end - start);
	assert_memory_equal(c.m.aux, c.stream + c.written - c.m.aux_len, c.m.aux_len);
	auxcap_session_get_stats(c.s, &st);
	assert_int_equal(st.aux_snapshot_trimmed, trimmed);
	assert_int_equal(st.aux_snapshot_wrapped, 0);
	assert_int_equal(st.aux_bytes, c.m.aux_len);
	cap_close(&c);
}

/*
 * Full trace: a drain that finds more than a quarter of the buffer hands it to the sink in
 * pieces of at most a quarter, cut so that none wraps, and releases each piece's space before
 * the next one is written (the hardware may refill it meanwhile).  Together the pieces are
 * the stream, in order.
 */
static void test_session_emu_drain_releases_quarters(void **state)
{
	const size_t pages = 4, size = pages * 4096, quarter = size / 4;
	/* Pieces of the two drains: 11 KiB from 0; then 10 KiB from 11 KiB, cut at the wrap. */
	const size_t want[] = { quarter, quarter, 3072, quarter, 1024, quarter, 1024 };
	struct auxcap_emu_stats es;
	struct cap c;
	uint64_t pos = 0;

	(void)state;
	cap_open_mode(&c, false, pages);
	/* The driver publishes aux_head at its interrupts (every quarter here) and when the
	 * event is scheduled out: flush to publish the exact position. */
	cap_step(&c, 11 * 1024);
	assert_int_equal(auxcap_emu_flush(c.emu, c.aux_fd), 0);
	assert_int_equal(auxcap_session_drain(c.s), 0);
	cap_step(&c, 10 * 1024);
	assert_int_equal(auxcap_emu_flush(c.emu, c.aux_fd), 0);
	assert_int_equal(auxcap_session_drain(c.s), 0);
	assert_int_equal(auxcap_emu_stats(c.emu, c.aux_fd, &es), 0);
	assert_int_equal(es.produced, c.written);
	assert_int_equal(es.truncated, 0);

	assert_int_equal(c.m.nr_chunks, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < c.m.nr_chunks; i++) {
		const struct mem_chunk *ch = &c.m.chunks[i];

		assert_int_equal(ch->len, want[i]);
		assert_int_equal(ch->info.offset, pos);
		assert_false(ch->info.snapshot);
		/* Everything before this piece was released when it was written. */
		assert_int_equal(c.tail_at[i], pos);
		/* No piece crosses the end of the buffer. */
		assert_true(pos / size == (pos + ch->len - 1) / size);
		pos += ch->len;
	}
	assert_int_equal(pos, c.written);
	assert_int_equal(c.m.aux_len, c.written);
	assert_memory_equal(c.m.aux, c.stream, c.written);
	assert_int_equal(__atomic_load_n(&c.pc->aux_tail, __ATOMIC_ACQUIRE), c.written);
	cap_close(&c);
}

/* Run @s's loop on a thread of its own for @ms milliseconds. */
struct timed_run {
	struct auxcap_session *s;
	int ms, r;
};

static void *timed_run_main(void *arg)
{
	struct timed_run *t = arg;

	t->r = auxcap_session_run(t->s, t->ms);
	return NULL;
}

/*
 * Hits reported from another thread (the emulator's tracer does so): each is a snapshot
 * request of source "function" timed by the hit, with the hit's task and CPU; hits while one
 * is pending coalesce into it; all are counted.
 */
static void test_session_emu_hits_from_another_thread(void **state)
{
	struct auxcap_session_stats st;
	struct timed_run t;
	struct cap c;
	pthread_t th;

	(void)state;
	cap_open(&c);
	cap_step(&c, 1000);
	/* Before the loop runs: the first hit is pending, the second coalesces into it. */
	auxcap_session_request_hit(c.s, 12345, 77, 3);
	auxcap_session_request_hit(c.s, 23456, 78, 4);
	t = (struct timed_run){ c.s, 300, -1 };
	assert_int_equal(pthread_create(&th, NULL, timed_run_main, &t), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(t.r, 0);
	auxcap_session_get_stats(c.s, &st);
	assert_int_equal(st.trigger_hits, 2);
	assert_int_equal(st.trigger_snapshots, 1);
	assert_int_equal(st.snapshot_requests_coalesced, 1);
	assert_int_equal(c.m.nr_snaps, 1);
	assert_int_equal(c.m.snaps[0].source, AUXCAP_TRIGGER_FUNCTION);
	assert_int_equal(c.m.snaps[0].trigger_ns, 12345);
	assert_int_equal(c.m.snaps[0].tid, 77);
	assert_int_equal(c.m.snaps[0].cpu, 3);
	assert_int_equal(c.m.snaps[0].coalesced, 1);
	assert_true(c.m.snaps[0].frozen_ns > 12345);
	/* The snapshot holds what the hardware wrote. */
	assert_int_equal(c.m.nr_chunks, 1);
	assert_int_equal(c.m.chunks[0].len, 1000);
	cap_close(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_emu_snapshot_trims_overlap),
		cmocka_unit_test(test_session_emu_snapshots_concatenate_to_the_stream),
		cmocka_unit_test(test_session_emu_drain_releases_quarters),
		cmocka_unit_test(test_session_emu_hits_from_another_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
