/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The BTS and SPE backends' record side in a real capture session on the emulated PMUs
 * (emu/), driven deterministically: the test writes the "hardware" bytes itself.
 *
 * - Intel BTS, full trace: the driver pads the end of a buffer whose size is not a multiple
 *   of 24; with the backend's alignment every AUX copy holds whole records and the
 *   concatenated stream decodes to exactly the records written (without it, it does not).
 * - Intel BTS, snapshot: after the buffer wrapped, the snapshot is the newest records, whole
 *   and in order.
 * - Arm SPE, snapshot: the half-buffer rule keeps a torn record out of the snapshot, which
 *   perf's whole-buffer window lets in.
 * - config3 (arm_spe inv_event_filter) reaches perf_event_open with attr.size 136, and a
 *   kernel that does not know it (the emulated one is 6.1-like) refuses it with E2BIG.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "auxcap/backend.h"
#include "auxcap/emu.h"
#include "auxcap/session.h"
#include "bts_decode.h"
#include "mem_sink.h"
#include "spe_decode.h"

/* A seam in front of the emulator that remembers the AUX event's fd and attr. */
struct wrap_sys {
	struct auxcap_sys sys;
	const struct auxcap_sys *inner;
	int aux_fd;
	uint32_t aux_size;     /* attr.size passed to perf_event_open */
	uint64_t aux_config3;  /* the u64 at offset 128 when the size covers it */
};

static int w_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		  unsigned long flags)
{
	struct wrap_sys *w = ctx;
	int fd;

	if (attr->type >= AUXCAP_EMU_TYPE_BASE) {
		w->aux_size = attr->size;
		w->aux_config3 = 0;
		if (attr->size >= 136)
			memcpy(&w->aux_config3, (const unsigned char *)attr + 128, 8);
	}
	fd = w->inner->perf_event_open(w->inner->ctx, attr, pid, cpu, group_fd, flags);
	if (fd >= 0 && attr->type >= AUXCAP_EMU_TYPE_BASE)
		w->aux_fd = fd;
	return fd;
}

static int w_mmap(void *ctx, size_t len, int prot, int flags, int fd, off_t off, void **ret)
{
	struct wrap_sys *w = ctx;

	return w->inner->mmap(w->inner->ctx, len, prot, flags, fd, off, ret);
}

static int w_munmap(void *ctx, void *addr, size_t len)
{
	struct wrap_sys *w = ctx;

	return w->inner->munmap(w->inner->ctx, addr, len);
}

static int w_ioctl(void *ctx, int fd, unsigned long req, unsigned long arg)
{
	struct wrap_sys *w = ctx;

	return w->inner->ioctl(w->inner->ctx, fd, req, arg);
}

static int w_poll(void *ctx, struct pollfd *fds, nfds_t n, int timeout)
{
	struct wrap_sys *w = ctx;

	return w->inner->poll(w->inner->ctx, fds, n, timeout);
}

static ssize_t w_read(void *ctx, int fd, void *buf, size_t len)
{
	struct wrap_sys *w = ctx;

	return w->inner->read(w->inner->ctx, fd, buf, len);
}

static int w_close(void *ctx, int fd)
{
	struct wrap_sys *w = ctx;

	return w->inner->close(w->inner->ctx, fd);
}

static void wrap_init(struct wrap_sys *w, struct auxcap_emu *emu)
{
	memset(w, 0, sizeof(*w));
	w->inner = auxcap_emu_sys(emu);
	w->aux_fd = -1;
	w->sys = (struct auxcap_sys){ .ctx = w,	       .perf_event_open = w_open,
				      .mmap = w_mmap,  .munmap = w_munmap,
				      .ioctl = w_ioctl, .poll = w_poll,
				      .read = w_read,  .close = w_close };
}

struct capture {
	struct auxcap_emu *emu;
	struct wrap_sys w;
	struct mem_sink sink;
	struct auxcap_attr attr;
	struct auxcap_session_event ev;
	struct auxcap_session *s;
	pid_t pid;
};

static int capture_open(struct capture *c, const struct auxcap_backend_ops *b,
			enum auxcap_emu_pmu pmu, bool snapshot, size_t aux_pages, uint32_t align)
{
	struct auxcap_session_opts so = { .sz = sizeof(so) };
	int r;

	memset(c, 0, sizeof(*c));
	assert_int_equal(auxcap_emu_new(NULL, &c->emu), 0);
	wrap_init(&c->w, c->emu);
	mem_sink_init(&c->sink);
	c->attr.attr.type = AUXCAP_EMU_TYPE_BASE + (uint32_t)pmu;
	c->attr.attr.size = 136; /* this is a struct auxcap_attr: config3 counts */
	c->attr.attr.exclude_kernel = 1;
	c->ev.attr = &c->attr.attr;
	c->ev.name = b->name;
	c->pid = getpid();
	so.sys = &c->w.sys;
	so.aux = &c->ev;
	so.pids = &c->pid;
	so.nr_pids = 1;
	so.data_pages = 8;
	so.aux_pages = aux_pages;
	so.snapshot = snapshot;
	so.find_snapshot = b->find_snapshot;
	so.aux_alignment = align;
	so.sink = &c->sink.sink;
	r = auxcap_session_open(&so, &c->s, NULL);
	if (r == 0)
		assert_int_equal(auxcap_session_enable(c->s, true), 0);
	return r;
}

static void capture_close(struct capture *c)
{
	auxcap_session_free(c->s);
	auxcap_emu_free(c->emu);
	mem_sink_fini(&c->sink);
}

static void put_u64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* BTS record i: from 0x400000 + 16 i to 0x500000 + i, predicted. */
static void bts_write(struct capture *c, uint64_t first, uint64_t n)
{
	unsigned char rec[24];

	for (uint64_t i = first; i < first + n; i++) {
		put_u64(rec, 0x400000 + 16 * i);
		put_u64(rec + 8, 0x500000 + i);
		put_u64(rec + 16, 0x10);
		assert_int_equal(auxcap_emu_write(c->emu, c->w.aux_fd, rec, sizeof(rec)), 24);
	}
}

/* Decodes @len bytes of BTS; returns the number of pattern records, -1 on anything else
 * (a record that is not the pattern, ids not increasing, an error). */
static long bts_check(const unsigned char *buf, size_t len, uint64_t *ret_first,
		      uint64_t *ret_last)
{
	struct auxcap_bts_decoder d;
	struct auxcap_bts_event ev;
	long n = 0;
	uint64_t last = 0;

	auxcap_bts_decoder_init(&d, buf, len);
	while (auxcap_bts_decoder_next(&d, &ev) == 1) {
		uint64_t i;

		if (ev.type != AUXCAP_BTS_EVENT_BRANCH)
			return -1;
		i = ev.branch.to - 0x500000;
		if (ev.branch.from != 0x400000 + 16 * i || ev.branch.flags != 0x10 ||
		    (n && i <= last))
			return -1;
		if (!n && ret_first)
			*ret_first = i;
		last = i;
		n++;
	}
	if (ret_last)
		*ret_last = last;
	return n;
}

static void test_bts_full_trace(void **state)
{
	const struct auxcap_backend_ops *b = auxcap_backend_find("intel_bts");
	uint64_t first = 0, last = 0;
	struct capture c;

	(void)state;
	for (int aligned = 1; aligned >= 0; aligned--) {
		assert_int_equal(capture_open(&c, b, AUXCAP_EMU_PMU_INTEL_BTS, false, 4,
					      aligned ? b->alignment : 0),
				 0);
		assert_int_equal(c.w.aux_size, sizeof(struct perf_event_attr)); /* no config3 */
		/* 16 KiB buffer: 682 whole records, then the driver pads 16 bytes. */
		for (uint64_t i = 0; i < 2000; i += 250) {
			bts_write(&c, i, 250);
			assert_int_equal(auxcap_emu_flush(c.emu, c.w.aux_fd), 0);
			assert_int_equal(auxcap_session_drain(c.s), 0);
		}
		assert_int_equal(auxcap_session_enable(c.s, false), 0);
		assert_int_equal(auxcap_session_drain(c.s), 0);
		assert_true(c.sink.nr_chunks > 2);
		if (aligned) {
			for (size_t k = 0; k < c.sink.nr_chunks; k++)
				assert_int_equal(c.sink.chunks[k].len % 24, 0);
			assert_int_equal(bts_check(c.sink.aux, c.sink.aux_len, &first, &last),
					 2000);
			assert_int_equal(first, 0);
			assert_int_equal(last, 1999);
		} else {
			/* The padding is in the stream: the records lose their grid. */
			assert_int_equal(bts_check(c.sink.aux, c.sink.aux_len, NULL, NULL), -1);
		}
		capture_close(&c);
	}
}

static void test_bts_snapshot(void **state)
{
	const struct auxcap_backend_ops *b = auxcap_backend_find("intel_bts");
	uint64_t first = 0, last = 0;
	struct capture c;

	(void)state;
	assert_int_equal(capture_open(&c, b, AUXCAP_EMU_PMU_INTEL_BTS, true, 4, b->alignment), 0);
	/* Before the wrap: what was written since the last snapshot. */
	bts_write(&c, 0, 100);
	assert_int_equal(auxcap_session_snapshot(c.s), 0);
	assert_int_equal(c.sink.nr_chunks, 1);
	assert_int_equal(bts_check(c.sink.aux, c.sink.aux_len, &first, &last), 100);
	assert_int_equal(last, 99);
	/* Wrapped: the buffer's 682 whole records, the newest, in order. */
	bts_write(&c, 100, 900);
	assert_int_equal(auxcap_session_snapshot(c.s), 0);
	assert_int_equal(c.sink.nr_chunks, 2);
	assert_int_equal(c.sink.chunks[1].len, 682 * 24);
	assert_int_equal(bts_check(c.sink.aux + c.sink.chunks[1].off, c.sink.chunks[1].len, &first,
				   &last),
			 682);
	assert_int_equal(first, 1000 - 682);
	assert_int_equal(last, 999);
	capture_close(&c);
}

/* SPE records: @len 16 (PC, END) or 32 (PC, context, events, timestamp), PAD first. */
static size_t spe_rec(unsigned char *p, uint64_t id, size_t len)
{
	memset(p, 0, len);
	if (len == 16) {
		p[6] = 0xb0;
		put_u64(p + 7, (1ULL << 63) | (0x400000 + 4 * id));
		p[15] = 0x01;
	} else {
		p[6] = 0xb0;
		put_u64(p + 7, (1ULL << 63) | (0x400000 + 4 * id));
		p[15] = 0x64;
		p[16] = (unsigned char)id;
		p[17] = (unsigned char)(id >> 8);
		p[20] = 0x52;
		p[21] = 0x02;
		p[23] = 0x71;
		put_u64(p + 24, 1000 + id);
	}
	return len;
}

static void spe_write(struct capture *c, uint64_t first, uint64_t n, size_t len)
{
	unsigned char rec[32];

	for (uint64_t i = first; i < first + n; i++)
		assert_int_equal(auxcap_emu_write(c->emu, c->w.aux_fd, rec, spe_rec(rec, i, len)),
				 (ssize_t)len);
}

/* Samples of @buf: how many, the ids of the first and last; -1 on an error or a sample
 * that is not one of ours (out of order, wrong PC). */
static long spe_check(const unsigned char *buf, size_t len, uint64_t *ret_first,
		      uint64_t *ret_last)
{
	struct auxcap_spe_decoder d;
	struct auxcap_spe_event ev;
	uint64_t last = 0;
	long n = 0;

	auxcap_spe_decoder_init(&d, buf, len, 0);
	while (auxcap_spe_decoder_next(&d, &ev) == 1) {
		uint64_t id;

		if (ev.type != AUXCAP_SPE_EVENT_SAMPLE || !(ev.sample.present & AUXCAP_SPE_HAS_PC))
			return -1;
		id = (ev.sample.pc - 0x400000) / 4;
		if (ev.sample.pc != 0x400000 + 4 * id || (n && id != last + 1))
			return -1;
		if ((ev.sample.present & AUXCAP_SPE_HAS_TIMESTAMP) && ev.sample.timestamp != 1000 + id)
			return -1;
		if (!n)
			*ret_first = id;
		last = id;
		n++;
	}
	*ret_last = last;
	return n;
}

/* perf's window once wrapped: the whole buffer ending at head. */
static int whole_buffer(const struct auxcap_aux_ring *ring, uint64_t head, uint64_t old,
			uint64_t *state, uint64_t *ret_start, uint64_t *ret_end)
{
	uint64_t size;

	(void)old;
	(void)state;
	(void)auxcap_aux_ring_data(ring, &size);
	*ret_start = head % size;
	*ret_end = head % size + size;
	return 0;
}

static void test_spe_snapshot(void **state)
{
	const struct auxcap_backend_ops *b = auxcap_backend_find("arm_spe");
	struct auxcap_backend_ops perf_like;
	uint64_t first = 0, last = 0;
	const struct mem_chunk *ch;
	struct capture c;

	(void)state;
	perf_like = *b;
	perf_like.find_snapshot = whole_buffer;
	for (int half_rule = 1; half_rule >= 0; half_rule--) {
		assert_int_equal(capture_open(&c, half_rule ? b : &perf_like,
					      AUXCAP_EMU_PMU_ARM_SPE, true, 4, b->alignment),
				 0);
		/* 16 KiB: half A holds records 0-255, half B 256-511; then half A again from
		 * its start: a 16-byte record moves the grid, 100 more end at 3216, in the
		 * middle of a record of the previous lap. */
		spe_write(&c, 0, 512, 32);
		spe_write(&c, 512, 1, 16);
		spe_write(&c, 513, 100, 32);
		assert_int_equal(auxcap_session_snapshot(c.s), 0);
		assert_int_equal(c.sink.nr_chunks, 1);
		ch = &c.sink.chunks[0];
		if (half_rule) {
			/* Half B, then what half A got since: 256 + 1 + 100 whole samples. */
			assert_int_equal(ch->len, 8192 + 3216);
			assert_int_equal(spe_check(c.sink.aux + ch->off, ch->len, &first, &last),
					 357);
			assert_int_equal(first, 256);
			assert_int_equal(last, 612);
		} else {
			/* The whole buffer starts with the torn record: not our samples. */
			assert_int_equal(ch->len, 16384);
			assert_int_equal(spe_check(c.sink.aux + ch->off, ch->len, &first, &last),
					 -1);
		}
		capture_close(&c);
	}
}

static void test_config3(void **state)
{
	(void)state;
	/* capture_open() sets no config3: the event opens with the 128-byte layout (checked in
	 * test_bts_full_trace).  With inv_event_filter it must go out with size 136. */
	{
		struct auxcap_session_opts so = { .sz = sizeof(so) };
		struct auxcap_emu *emu;
		struct wrap_sys w;
		struct mem_sink sink;
		struct auxcap_attr a;
		struct auxcap_session_event ev = { .attr = &a.attr, .name = "arm_spe_0" };
		struct auxcap_session *s = NULL;
		pid_t pid = getpid();

		assert_int_equal(auxcap_emu_new(NULL, &emu), 0);
		wrap_init(&w, emu);
		mem_sink_init(&sink);
		memset(&a, 0, sizeof(a));
		a.attr.type = AUXCAP_EMU_TYPE_BASE + AUXCAP_EMU_PMU_ARM_SPE;
		a.attr.size = 136;
		auxcap_attr_word_set(&a, AUXCAP_ATTR_CONFIG3, 0x5a);
		so.sys = &w.sys;
		so.aux = &ev;
		so.pids = &pid;
		so.nr_pids = 1;
		so.aux_pages = 4;
		so.sink = &sink.sink;
		/* The emulated kernel is a 6.1 one: it does not know config3. */
		assert_int_equal(auxcap_session_open(&so, &s, NULL), -E2BIG);
		assert_int_equal(w.aux_size, 136);
		assert_int_equal(w.aux_config3, 0x5a);
		/* A plain perf_event_attr (size not 136) is read as such: no config3. */
		a.attr.size = 0;
		assert_int_equal(auxcap_session_open(&so, &s, NULL), 0);
		assert_int_equal(w.aux_size, sizeof(struct perf_event_attr));
		auxcap_session_free(s);
		auxcap_emu_free(emu);
		mem_sink_fini(&sink);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bts_full_trace),
		cmocka_unit_test(test_bts_snapshot),
		cmocka_unit_test(test_spe_snapshot),
		cmocka_unit_test(test_config3),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
