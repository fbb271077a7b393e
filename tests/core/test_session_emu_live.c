/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Snapshot mode of the capture session on the emulated Intel PT, fed by the live tracer
 * running the example program: many snapshots with a little trace between each, through a
 * buffer that wraps several times.  The snapshots' chunks, back to back, must be exactly the
 * Intel PT stream the tracer produced (no duplicate and no missing byte), and decode (libipt,
 * with the program's, ld.so's and libc's code where the MMAP2 side-band put them) to the same
 * instruction sequence as that whole stream, the one a full-trace capture would hold.
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
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "auxcap/emu.h"
#include "auxcap/session.h"
#include "ipt.h"
#include "live_source.h"
#include "mem_sink.h"
#include "util.h"

#define AUX_PAGES 2
#define MAX_MAPS 32

/* A source between the live tracer and the emulator that keeps a copy of what it hands out. */
struct tee {
	struct auxcap_live_source *live; /* owned */
	unsigned char *bytes;		 /* every trace byte, in order */
	size_t len, cap;
	struct {
		uint64_t addr, len, pgoff;
		char path[512];
	} maps[MAX_MAPS]; /* file-backed executable mappings */
	size_t nmaps;
};

static int tee_next(void *ctx, void *buf, size_t max, bool paced, struct auxcap_emu_item *it)
{
	struct tee *t = ctx;
	int r = auxcap_live_source_ops.next(t->live, buf, max, paced, it);

	if (r != 1)
		return r;
	if (it->kind == AUXCAP_EMU_ITEM_TRACE) {
		if (t->len + it->len > t->cap) {
			t->cap = (t->len + it->len) * 2;
			t->bytes = realloc(t->bytes, t->cap);
			if (!t->bytes)
				return -ENOMEM;
		}
		memcpy(t->bytes + t->len, buf, it->len);
		t->len += it->len;
	} else if (it->kind == AUXCAP_EMU_ITEM_MMAP2 && (it->u.mmap2.prot & PROT_EXEC) &&
		   it->u.mmap2.filename[0] == '/' && t->nmaps < MAX_MAPS) {
		t->maps[t->nmaps].addr = it->u.mmap2.addr;
		t->maps[t->nmaps].len = it->u.mmap2.len;
		t->maps[t->nmaps].pgoff = it->u.mmap2.pgoff;
		snprintf(t->maps[t->nmaps].path, sizeof(t->maps[0].path), "%s",
			 it->u.mmap2.filename);
		t->nmaps++;
	}
	return 1;
}

/* The emulator frees the source when the event closes; the copy stays with the test. */
static void tee_free(void *ctx)
{
	struct tee *t = ctx;

	auxcap_live_source_ops.free(t->live);
	t->live = NULL;
}

static const struct auxcap_emu_source_ops tee_ops = {
	.name = "tee",
	.next = tee_next,
	.free = tee_free,
};

static struct auxcap_emu *g_emu;
static int g_aux_fd = -1;

static int wrap_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		     unsigned long flags)
{
	const struct auxcap_sys *es = auxcap_emu_sys(g_emu);
	int fd = es->perf_event_open(ctx, attr, pid, cpu, group_fd, flags);

	if (fd >= 0 && attr->type >= AUXCAP_EMU_TYPE_BASE)
		g_aux_fd = fd;
	return fd;
}

struct decoded {
	uint64_t *ip;
	size_t n, cap;
	uint64_t gaps;
};

static void decode(const struct tee *t, const unsigned char *buf, size_t len, struct decoded *d)
{
	struct auxcap_ipt_decoder_opts o = { .sz = sizeof(o) };
	struct auxcap_ipt_image *img;
	struct auxcap_ipt_decoder *dec;
	struct auxcap_ipt_item it;
	int r;

	memset(d, 0, sizeof(*d));
	assert_int_equal(auxcap_ipt_image_new(&img), 0);
	for (size_t i = 0; i < t->nmaps; i++)
		assert_int_equal(auxcap_ipt_image_add_raw(img, t->maps[i].path, t->maps[i].pgoff,
							  t->maps[i].len, t->maps[i].addr),
				 0);
	assert_int_equal(auxcap_ipt_decoder_new(buf, len, img, NULL, &o, &dec), 0);
	while ((r = auxcap_ipt_decoder_next(dec, &it)) == 1) {
		if (it.kind != AUXCAP_IPT_ITEM_INSN)
			continue;
		if (d->n == d->cap) {
			d->cap = d->cap ? d->cap * 2 : 65536;
			d->ip = realloc(d->ip, d->cap * sizeof(*d->ip));
			assert_non_null(d->ip);
		}
		d->ip[d->n++] = it.ip;
	}
	assert_int_equal(r, 0);
	d->gaps = auxcap_ipt_decoder_gaps(dec);
	auxcap_ipt_decoder_free(dec);
	auxcap_ipt_image_free(img);
}

static void test_session_emu_live_snapshots_decode_as_full_trace(void **state)
{
	const char *prog = getenv("AUXCAP_EXAMPLE_LOOP");
	char iters[] = "3000";
	char *argv[] = { (char *)prog, iters, NULL };
	struct perf_event_attr attr = { .type = AUXCAP_EMU_TYPE_BASE + AUXCAP_EMU_PMU_INTEL_PT,
					.exclude_kernel = 1,
					.mmap = 1,
					.mmap2 = 1,
					.comm = 1 };
	struct auxcap_session_event aux = { .attr = &attr, .name = "intel_pt//u" };
	struct auxcap_session_stats st;
	struct auxcap_emu_stats es;
	struct auxcap_session *s;
	struct auxcap_sys sys;
	struct tee t = { 0 };
	struct mem_sink m;
	struct decoded whole, snaps;
	pid_t self = getpid();
	uint64_t x = 99, end = 0;
	size_t small = 0, nsnap = 0;
	int failed;
	ssize_t n;

	(void)state;
	if (!prog)
		test_skip("AUXCAP_EXAMPLE_LOOP is not set (run through meson test)");
	mem_sink_init(&m);
	assert_int_equal(auxcap_emu_new(NULL, &g_emu), 0);
	assert_int_equal(auxcap_live_source_new(AUXCAP_TRACER_INTEL_PT, argv, 0, &t.live), 0);
	assert_int_equal(auxcap_emu_source_attach(g_emu, AUXCAP_EMU_PMU_INTEL_PT, -1, &tee_ops, &t),
			 0);
	sys = *auxcap_emu_sys(g_emu);
	sys.perf_event_open = wrap_open;
	{
		struct auxcap_session_opts o = {
			.sz = sizeof(o),
			.sys = &sys,
			.aux = &aux,
			.pids = &self,
			.nr_pids = 1,
			.data_pages = 16,
			.aux_pages = AUX_PAGES,
			.snapshot = true,
			.sink = &m.sink,
		};

		assert_int_equal(auxcap_session_open(&o, &s, &failed), 0);
	}
	assert_true(g_aux_fd >= 0);
	assert_int_equal(auxcap_session_enable(s, true), 0);

	/*
	 * Step the tracer (on this thread) a little at a time: 64 bytes to half the buffer,
	 * every fourth step a tiny one, and snapshot after each step: each snapshot writes
	 * exactly the bytes of that step, right after the previous snapshot's.
	 */
	for (int i = 0;; i++) {
		size_t want;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		want = i % 4 == 3 ? 64 : 64 + (size_t)(x % (AUX_PAGES * 4096 / 2));
		n = auxcap_emu_step(g_emu, g_aux_fd, want);
		if (n == -EPERM)
			test_skip("ptrace is not permitted here");
		assert_true(n >= 0);
		assert_int_equal(auxcap_session_snapshot(s), 0);
		if (n == 0) {
			assert_int_equal(m.nr_chunks, nsnap); /* nothing new, nothing written */
			break;
		}
		assert_int_equal(m.nr_chunks, nsnap + 1);
		assert_int_equal(m.chunks[nsnap].info.offset, end);
		assert_int_equal(m.chunks[nsnap].len, (size_t)n);
		end += (uint64_t)n;
		nsnap++;
		small += n == 64 && end > AUX_PAGES * 4096;
	}
	assert_int_equal(auxcap_emu_stats(g_emu, g_aux_fd, &es), 0);
	assert_int_equal(es.dropped, 0);
	assert_int_equal(es.produced, t.len);
	auxcap_session_get_stats(s, &st);
	print_message("%zu trace bytes, %zu snapshots (%zu chunks), %llu bytes trimmed\n", t.len,
		      (size_t)st.snapshots, m.nr_chunks,
		      (unsigned long long)st.aux_snapshot_trimmed);
	/* The buffer wrapped several times, and the overlap was left out. */
	assert_true(t.len > 3 * AUX_PAGES * 4096);
	assert_true(st.aux_snapshot_trimmed > 0);
	assert_int_equal(st.aux_snapshot_wrapped, 0);
	assert_true(small > 0); /* tiny steps after the buffer had wrapped */

	/* No duplicates, no holes: the chunks back to back are the tracer's stream. */
	assert_int_equal(m.aux_len, t.len);
	assert_memory_equal(m.aux, t.bytes, t.len);
	assert_int_equal(st.aux_bytes, t.len);

	/* And they decode to the whole stream's instructions. */
	decode(&t, t.bytes, t.len, &whole);
	decode(&t, m.aux, m.aux_len, &snaps);
	assert_true(whole.n > 50000);
	assert_int_equal(snaps.n, whole.n);
	assert_memory_equal(snaps.ip, whole.ip, whole.n * sizeof(*whole.ip));
	assert_int_equal(snaps.gaps, whole.gaps);

	auxcap_session_free(s);
	auxcap_emu_free(g_emu);
	mem_sink_fini(&m);
	free(whole.ip);
	free(snaps.ip);
	free(t.bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_emu_live_snapshots_decode_as_full_trace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
