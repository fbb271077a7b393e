/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Snapshots of one Intel PT buffer in the decode stage.  The capture core writes a snapshot
 * taken before the buffer wrapped past the previous one as only what is new, a chunk that
 * starts exactly where the previous chunk ended: the two are one stream, and decode joins
 * them into one queue (the packet and the flow cut at the seam decoded as in one piece, the
 * call stack carried across).  A snapshot taken after the buffer wrapped starts past a hole:
 * a queue of its own, which starts with a gap.  A first chunk that ends inside the stream's
 * first PSB+ is decoded from the stream's start.
 *
 * The trace is made here with libipt's encoder: a loop in which main calls F, F calls G, G
 * returns, F returns (returns as TIP packets), a PSB+ every 1 KiB with the TSC of the
 * iteration.  The expected branches follow from that program, not from auxcap.
 */
#include <errno.h>
#include <inttypes.h>
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
#include <intel-pt.h>

#include "auxcap/backend.h"
#include "auxcap/decode.h"
#include "capture_builder.h"
#include "util.h"

#define CODE_ADDR 0x401000ull
#define TSC0 1000000000ull
#define TICKS_PER_ITER 40 /* TSC ticks (= ns: TIME_CONV is the identity) per iteration */
#define PSB_EVERY 1024	  /* bytes */
#define PID 77

/*
 *   +0x00  e8 1b 00 00 00   call F        main's loop
 *   +0x05  eb f9            jmp +0x00
 *   +0x20  e8 1b 00 00 00   F: call G
 *   +0x25  c3               ret
 *   +0x40  48 ff c0         G: inc rax
 *   +0x43  c3               ret
 */
static uint8_t g_code[0x44];

static void make_code(void)
{
	static const uint8_t main_[] = { 0xe8, 0x1b, 0x00, 0x00, 0x00, 0xeb, 0xf9 };
	static const uint8_t f[] = { 0xe8, 0x1b, 0x00, 0x00, 0x00, 0xc3 };
	static const uint8_t g[] = { 0x48, 0xff, 0xc0, 0xc3 };

	memset(g_code, 0x90, sizeof(g_code));
	memcpy(g_code, main_, sizeof(main_));
	memcpy(g_code + 0x20, f, sizeof(f));
	memcpy(g_code + 0x40, g, sizeof(g));
}

struct trace {
	uint8_t buf[16384];
	size_t len;
	size_t iter_end[2048]; /* offset where iteration i's packets end */
	size_t iters;
	size_t psb[32];	       /* offsets of the PSBs */
	size_t npsb;
};

static void enc(struct pt_encoder *e, const struct pt_packet *p)
{
	assert_true(pt_enc_next(e, p) >= 0);
}

static void gen_trace(struct trace *t, size_t bytes)
{
	struct pt_config config;
	struct pt_encoder *e;
	struct pt_packet p;
	uint64_t off, last_psb = 0;

	assert_true(bytes + 256 <= sizeof(t->buf));
	memset(t, 0, sizeof(*t));
	pt_config_init(&config);
	config.begin = t->buf;
	config.end = t->buf + sizeof(t->buf);
	e = pt_alloc_encoder(&config);
	assert_non_null(e);
	for (size_t k = 0;; k++) {
		assert_true(pt_enc_get_offset(e, &off) >= 0);
		if (off + 64 > bytes || k >= 2048)
			break;
		if (!k || off - last_psb >= PSB_EVERY) {
			last_psb = off;
			assert_true(t->npsb < 32);
			t->psb[t->npsb++] = (size_t)off;
			memset(&p, 0, sizeof(p));
			p.type = ppt_psb;
			enc(e, &p);
			p.type = ppt_tsc;
			p.payload.tsc.tsc = TSC0 + k * TICKS_PER_ITER;
			enc(e, &p);
			p.type = ppt_mode;
			p.payload.mode.leaf = pt_mol_exec;
			p.payload.mode.bits.exec.csl = 1;
			enc(e, &p);
			if (k) {
				/* tracing is on: the flow is at the jmp back */
				memset(&p, 0, sizeof(p));
				p.type = ppt_fup;
				p.payload.ip.ipc = pt_ipc_sext_48;
				p.payload.ip.ip = CODE_ADDR + 0x05;
				enc(e, &p);
			}
			memset(&p, 0, sizeof(p));
			p.type = ppt_psbend;
			enc(e, &p);
			if (!k) {
				memset(&p, 0, sizeof(p));
				p.type = ppt_tip_pge;
				p.payload.ip.ipc = pt_ipc_sext_48;
				p.payload.ip.ip = CODE_ADDR;
				enc(e, &p);
			}
		}
		/* G returns into F, F into main */
		memset(&p, 0, sizeof(p));
		p.type = ppt_tip;
		p.payload.ip.ipc = pt_ipc_update_16;
		p.payload.ip.ip = CODE_ADDR + 0x25;
		enc(e, &p);
		p.payload.ip.ip = CODE_ADDR + 0x05;
		enc(e, &p);
		assert_true(pt_enc_get_offset(e, &off) >= 0);
		t->iter_end[k] = (size_t)off;
		t->iters = k + 1;
	}
	assert_true(pt_enc_get_offset(e, &off) >= 0);
	t->len = (size_t)off;
	pt_free_encoder(e);
}

static char g_dir[256];

/* The first iteration whose packets end after @off. */
static size_t iter_at(const struct trace *t, size_t off)
{
	size_t i = 0;

	while (i < t->iters && t->iter_end[i] <= off)
		i++;
	return i;
}

/*
 * Snapshot 1: [0, cut); snapshot 2: [cut, end2), starting where snapshot 1 ended (cut
 * inside a packet, between two PSBs); snapshot 3: [psb, t->len) from a later PSB, placed
 * past a hole.  Samples in G at iterations inside snapshot 2's stretch before its first PSB.
 */
static void test_snapshots_join(void **state)
{
	static struct trace t;
	static const uint64_t in_g[] = { CODE_ADDR + 0x40, CODE_ADDR + 0x20, CODE_ADDR };
	const struct auxcap_decode_event *ev;
	struct auxcap_decode_opts o = { .sz = sizeof(o) };
	struct auxcap_perf_time_conv tc = { 0 };
	uint64_t info[17] = { 0 };
	struct auxcap_decode *d;
	char path[300], code[300], err[256] = "";
	size_t cut, end2, s3, first2, last2, nbr[2] = { 0 }, ngap[2] = { 0 }, nsamples = 0;
	size_t k = 0;
	bool first_of_q1 = true;
	FILE *f;
	struct cb *b;

	(void)state;
	if (!auxcap_backend_find("intel_pt"))
		skip();
	make_code();
	gen_trace(&t, 6000);
	assert_true(t.npsb >= 5);
	/* Inside the first packet of an iteration between PSB 1 and PSB 2. */
	cut = t.iter_end[iter_at(&t, t.psb[1] + 200)] + 1;
	end2 = t.iter_end[iter_at(&t, t.psb[2] + 300)];
	s3 = t.psb[4];
	first2 = iter_at(&t, cut) + 1;
	last2 = iter_at(&t, t.psb[2]) - 1;
	assert_true(first2 + 10 < last2);

	snprintf(code, sizeof(code), "%s/code.bin", g_dir);
	f = fopen(code, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(g_code, 1, sizeof(g_code), f), sizeof(g_code));
	assert_int_equal(fclose(f), 0);
	snprintf(path, sizeof(path), "%s/snapshots.data", g_dir);
	b = cb_open(path, "intel_pt//u", 0x7000);
	assert_non_null(b);
	tc.time_shift = 0;
	tc.time_mult = 1;
	tc.cap_user_time_zero = true;
	cb_time_conv(b, &tc);
	cb_auxtrace_info(b, AUXCAP_AUXTRACE_INTEL_PT, info, 17);
	cb_comm(b, PID, PID, "loop", true, TSC0 - 1000, 0);
	cb_mmap2(b, PID, PID, CODE_ADDR, 4096, 0, 5, code, TSC0 - 900, 0);
	cb_itrace_start(b, PID, PID, TSC0 - 800, 0);
	/* Samples in G, in snapshot 2 before its first PSB (a decoder starting at the
	 * snapshot would have to skip to that PSB). */
	for (size_t i = first2; i < last2; i += 5)
		cb_sample(b, 1, CODE_ADDR + 0x40, PID, PID, TSC0 + i * TICKS_PER_ITER + 10, 0, 1);
	cb_round(b);
	cb_aux(b, 0, cut, 0x2 /* OVERWRITE */, PID, PID, TSC0 + t.iters * TICKS_PER_ITER, 0);
	cb_auxtrace(b, t.buf, cut, 0, 0, PID, (uint32_t)-1);
	cb_aux(b, cut, end2 - cut, 0x2, PID, PID, TSC0 + t.iters * TICKS_PER_ITER + 1, 0);
	cb_auxtrace(b, t.buf + cut, end2 - cut, cut, 0, PID, (uint32_t)-1);
	/* past a hole: the buffer wrapped since */
	cb_aux(b, s3 + 65536, t.len - s3, 0x2, PID, PID, TSC0 + t.iters * TICKS_PER_ITER + 2, 0);
	cb_auxtrace(b, t.buf + s3, t.len - s3, s3 + 65536, 0, PID, (uint32_t)-1);
	cb_round(b);
	assert_int_equal(cb_close(b), 0);

	o.errbuf = err;
	o.errlen = sizeof(err);
	if (auxcap_decode_open(path, &o, &d) < 0)
		fail_msg("auxcap_decode_open: %s", err);
	assert_true(auxcap_decode_get_info(d)->snapshot);
	assert_int_equal(auxcap_decode_get_info(d)->nr_queues, 2);
	assert_true(auxcap_decode_get_queue(d, 0)->snapshot);
	assert_int_equal(auxcap_decode_get_queue(d, 0)->nr_pieces, 2);
	assert_int_equal(auxcap_decode_get_queue(d, 0)->discontinuities, 0);
	assert_int_equal(auxcap_decode_get_queue(d, 1)->nr_pieces, 1);

	while (auxcap_decode_next(d, &ev) == 1) {
		if (ev->kind == AUXCAP_DECODE_SAMPLE) {
			const struct auxcap_decode_sample_ctx *x = ev->ctx;

			assert_non_null(x);
			assert_true(x->aligned);
			assert_int_equal(x->nr_stack, 3);
			for (size_t i = 0; i < 3; i++)
				assert_int_equal(x->stack[i].func, in_g[i]);
			nsamples++;
			continue;
		}
		if (ev->kind != AUXCAP_DECODE_TRACE)
			continue;
		assert_true(ev->queue == 0 || ev->queue == 1);
		if (ev->trace->kind == AUXCAP_TRACE_GAP) {
			ngap[ev->queue]++;
			if (ev->queue == 1 && first_of_q1) {
				assert_non_null(strstr(ev->trace->what, "lost before this snapshot"));
				/* at the snapshot's first timestamp: its PSB's */
				assert_int_equal(ev->time, TSC0 + iter_at(&t, s3) * TICKS_PER_ITER);
			}
		}
		if (ev->queue == 1)
			first_of_q1 = false;
		if (ev->queue != 0 || ev->trace->kind != AUXCAP_TRACE_BRANCH) {
			if (ev->trace->kind == AUXCAP_TRACE_BRANCH)
				nbr[1]++;
			continue;
		}
		/* Queue 0: the program's branches, iteration after iteration, across the seam. */
		{
			static const uint64_t from[] = { 0x00, 0x20, 0x43, 0x25, 0x05 };
			static const uint64_t to[] = { 0x20, 0x40, 0x25, 0x05, 0x00 };
			static const enum auxcap_branch_type type[] = {
				AUXCAP_BR_CALL, AUXCAP_BR_CALL, AUXCAP_BR_RETURN, AUXCAP_BR_RETURN,
				AUXCAP_BR_JUMP
			};

			assert_int_equal(ev->trace->ip, CODE_ADDR + from[k % 5]);
			assert_int_equal(ev->trace->to, CODE_ADDR + to[k % 5]);
			assert_int_equal(ev->trace->branch, type[k % 5]);
			k++;
			nbr[0]++;
		}
	}
	/* Every iteration of snapshots 1 and 2, in order (the flow after the last packet may
	 * stop anywhere in the last one). */
	assert_true(nbr[0] >= 5 * (iter_at(&t, end2) - 1));
	assert_true(nbr[0] <= 5 * iter_at(&t, end2));
	assert_int_equal(ngap[0], 0);
	assert_false(first_of_q1);
	assert_int_equal(ngap[1], 1);
	assert_true(nbr[1] > 0);
	assert_int_equal(nsamples, (last2 - first2 + 4) / 5);
	auxcap_decode_close(d);
}

/*
 * Snapshots whose first chunk ends inside the stream's first PSB+ (a few bytes of it): no
 * buffer holds a sync point of its own before the second PSB, and the decoder of the second
 * chunk must start at the stream's start (it started at the second PSB: the first kilobyte's
 * branches were lost).
 */
static void test_snapshots_first_psb_cut(void **state)
{
	static struct trace t;
	static const size_t first_cuts[] = { 1, 7, 16, 20 };
	struct auxcap_perf_time_conv tc = { 0 };
	uint64_t info[17] = { 0 };
	char path[300], code[300], err[256] = "";
	FILE *f;

	(void)state;
	if (!auxcap_backend_find("intel_pt"))
		skip();
	make_code();
	gen_trace(&t, 3000);
	assert_true(t.npsb >= 2 && t.psb[1] > 100);
	snprintf(code, sizeof(code), "%s/code1.bin", g_dir);
	f = fopen(code, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(g_code, 1, sizeof(g_code), f), sizeof(g_code));
	assert_int_equal(fclose(f), 0);
	for (size_t v = 0; v < sizeof(first_cuts) / sizeof(first_cuts[0]); v++) {
		static const uint64_t from[] = { 0x00, 0x20, 0x43, 0x25, 0x05 };
		const struct auxcap_decode_event *ev;
		struct auxcap_decode_opts o = { .sz = sizeof(o) };
		struct auxcap_decode *d;
		size_t cut = first_cuts[v], mid = t.psb[1] + 5, k = 0, gaps = 0;
		struct cb *b;

		snprintf(path, sizeof(path), "%s/first%zu.data", g_dir, cut);
		b = cb_open(path, "intel_pt//u", 0x7000);
		assert_non_null(b);
		tc.time_shift = 0;
		tc.time_mult = 1;
		tc.cap_user_time_zero = true;
		cb_time_conv(b, &tc);
		cb_auxtrace_info(b, AUXCAP_AUXTRACE_INTEL_PT, info, 17);
		cb_comm(b, PID, PID, "loop", true, TSC0 - 1000, 0);
		cb_mmap2(b, PID, PID, CODE_ADDR, 4096, 0, 5, code, TSC0 - 900, 0);
		cb_itrace_start(b, PID, PID, TSC0 - 800, 0);
		cb_round(b);
		/* three chunks, each starting where the one before ended */
		cb_aux(b, 0, cut, 0x2, PID, PID, TSC0 + t.iters * TICKS_PER_ITER, 0);
		cb_auxtrace(b, t.buf, cut, 0, 0, PID, (uint32_t)-1);
		cb_aux(b, cut, mid - cut, 0x2, PID, PID, TSC0 + t.iters * TICKS_PER_ITER + 1, 0);
		cb_auxtrace(b, t.buf + cut, mid - cut, cut, 0, PID, (uint32_t)-1);
		cb_aux(b, mid, t.len - mid, 0x2, PID, PID, TSC0 + t.iters * TICKS_PER_ITER + 2, 0);
		cb_auxtrace(b, t.buf + mid, t.len - mid, mid, 0, PID, (uint32_t)-1);
		cb_round(b);
		assert_int_equal(cb_close(b), 0);

		o.errbuf = err;
		o.errlen = sizeof(err);
		if (auxcap_decode_open(path, &o, &d) < 0)
			fail_msg("auxcap_decode_open: %s", err);
		assert_int_equal(auxcap_decode_get_info(d)->nr_queues, 1);
		while (auxcap_decode_next(d, &ev) == 1) {
			if (ev->kind != AUXCAP_DECODE_TRACE)
				continue;
			gaps += ev->trace->kind == AUXCAP_TRACE_GAP;
			if (ev->trace->kind != AUXCAP_TRACE_BRANCH)
				continue;
			/* from the loop's first iteration on */
			if (ev->trace->ip != CODE_ADDR + from[k % 5])
				fail_msg("first chunk of %zu bytes: branch %zu from %#" PRIx64
					 ", expected %#" PRIx64, cut, k, ev->trace->ip,
					 (uint64_t)(CODE_ADDR + from[k % 5]));
			k++;
		}
		assert_int_equal(gaps, 0);
		assert_true(k >= 5 * (t.iters - 1) && k <= 5 * t.iters);
		auxcap_decode_close(d);
	}
}

/* An entry of the caller's own, bigger than a head, as the decode stage's ring has them. */
struct slot {
	struct auxcap_trace_head head;
	uint8_t after[40];
};

/*
 * The Intel PT backend's decoder_next_batch() gives the events decoder_next() gives, in the
 * same order, on a trace in three pieces (the flow cut inside packets) with damage in it (a
 * gap, then the decode resynchronizes at the next PSB): each event's head in the caller's
 * entry at the stride asked, the bytes after it left alone, and an event that is not a
 * BRANCH whole in its @whole entry with AUXCAP_TRACE_F_WHOLE.  Batches of every size from 1
 * to 16; the end comes as 0, once.
 */
static void test_ipt_batch_same_events(void **state)
{
	static struct trace t;
	static struct auxcap_trace_event want[8192];
	const struct auxcap_backend_ops *ops = auxcap_backend_find("intel_pt");
	struct auxcap_image_map map;
	struct auxcap_trace_piece prev[2];
	struct auxcap_decode_ctx ctx;
	struct auxcap_trace_event whole[16];
	struct slot slots[16];
	char code[300];
	size_t cuts[4], nwant = 0, k = 0, ngap = 0, nwhole = 0, max = 1;
	FILE *f;
	int r;

	(void)state;
	if (!ops)
		skip();
	assert_non_null(ops->decoder_next_batch);
	make_code();
	gen_trace(&t, 9000);
	assert_true(t.npsb >= 6);
	/* bytes that are no packet, between PSB 2 and PSB 3 */
	memset(t.buf + t.psb[2] + 300, 0xd5, 6);
	cuts[0] = 0;
	cuts[1] = t.psb[1] + 101;
	cuts[2] = t.psb[4] + 7;
	cuts[3] = t.len;
	snprintf(code, sizeof(code), "%s/batch-code.bin", g_dir);
	f = fopen(code, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(g_code, 1, sizeof(g_code), f), sizeof(g_code));
	assert_int_equal(fclose(f), 0);
	map = (struct auxcap_image_map){ code, 0, sizeof(g_code), CODE_ADDR, -1 };

	for (int pass = 0; pass < 2; pass++) {
		for (size_t p = 0; p < 3; p++) {
			void *dec;

			memset(&ctx, 0, sizeof(ctx));
			ctx.sz = sizeof(ctx);
			ctx.auxtrace_type = AUXCAP_AUXTRACE_INTEL_PT;
			ctx.maps = &map;
			ctx.nr_maps = 1;
			ctx.cpu = -1;
			ctx.stream_offset = cuts[p];
			for (size_t i = 0; i < p; i++)
				prev[i] = (struct auxcap_trace_piece){ t.buf + cuts[i],
								      cuts[i + 1] - cuts[i] };
			ctx.prev = p ? prev : NULL;
			ctx.nr_prev = p;
			ctx.more = p < 2;
			assert_int_equal(ops->decoder_new(&ctx, t.buf + cuts[p], cuts[p + 1] - cuts[p],
							  &dec),
					 0);
			if (pass == 0) {
				while ((r = ops->decoder_next(dec, &want[nwant])) == 1) {
					assert_true(++nwant < sizeof(want) / sizeof(want[0]));
				}
				assert_int_equal(r, 0);
				ops->decoder_free(dec);
				continue;
			}
			for (;;) {
				memset(slots, 0xa5, sizeof(slots));
				memset(whole, 0x5a, sizeof(whole));
				r = ops->decoder_next_batch(dec, slots, sizeof(slots[0]), whole, max);
				if (r <= 0)
					break;
				assert_true((size_t)r <= max);
				for (size_t i = 0; i < (size_t)r; i++, k++) {
					const struct auxcap_trace_event *w = &want[k];
					struct auxcap_trace_head h = slots[i].head;

					assert_true(k < nwant);
					for (size_t j = 0; j < sizeof(slots[i].after); j++)
						assert_int_equal(slots[i].after[j], 0xa5);
					if (w->kind != AUXCAP_TRACE_BRANCH) {
						struct auxcap_trace_event x = whole[i];

						assert_true(h.flags & AUXCAP_TRACE_F_WHOLE);
						assert_true(x.flags & AUXCAP_TRACE_F_WHOLE);
						x.flags &= ~(uint32_t)AUXCAP_TRACE_F_WHOLE;
						assert_memory_equal(&x, w, sizeof(x));
						nwhole++;
						ngap += w->kind == AUXCAP_TRACE_GAP;
					} else {
						/* a BRANCH has nothing past its head */
						assert_memory_equal(&w->size, &(struct auxcap_trace_event){ 0 }.size,
								    sizeof(*w) - sizeof(h));
					}
					h.flags &= ~(uint32_t)AUXCAP_TRACE_F_WHOLE;
					assert_memory_equal(&h, w, sizeof(h));
				}
				max = max % 16 + 1;
			}
			assert_int_equal(r, 0);
			assert_int_equal(ops->decoder_next_batch(dec, slots, sizeof(slots[0]), whole, 16),
					 0);
			ops->decoder_free(dec);
		}
	}
	assert_int_equal(k, nwant);
	assert_true(nwant > 1000);
	assert_true(ngap >= 1);
	assert_true(nwhole > ngap);
}

static int setup(void **state)
{
	(void)state;
	return test_tmpdir(g_dir, sizeof(g_dir), "snapshots");
}

static int teardown(void **state)
{
	(void)state;
	return test_rmtree(g_dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshots_join),
		cmocka_unit_test(test_snapshots_first_psb_cut),
		cmocka_unit_test(test_ipt_batch_same_events),
	};

	return cmocka_run_group_tests_name("decode/snapshots", tests, setup, teardown);
}
