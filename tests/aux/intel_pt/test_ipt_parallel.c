/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parallel decoding (aux/intel_pt/ipt_parallel.c): a real program's Intel PT (the live
 * tracer's encoding of the example program, PSBs every 256 bytes) is decoded on 1, 2 and 4
 * threads in pieces of several sizes, with the block and the instruction decoders, and must
 * give what one sequential decoder over the whole stream gives: the very same items with the
 * instruction decoder; with the block decoder the same flow (instructions, taken branches,
 * events, gaps), since where libipt ends a block depends on what its block cache already
 * holds.  So must a copy with garbage written into it (gaps, resynchronization) and cut in
 * mid-packet.
 *
 * Suite 'kernel': the live tracer needs ptrace.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ipt.h"
#include "tracer_run.h"
#include "util.h"

struct items {
	struct auxcap_ipt_item *v;
	size_t n, cap;
	size_t stop_after; /* return -ECANCELED after this many (0: never) */
};

static int collect(void *ctx, const struct auxcap_ipt_item *it)
{
	struct items *l = ctx;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4096;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		assert_non_null(l->v);
	}
	l->v[l->n++] = *it;
	if (l->stop_after && l->n == l->stop_after)
		return -ECANCELED;
	return 0;
}

static struct tr_run g_run;
static struct auxcap_ipt_image *g_image;
static char g_vdso[64] = "";

/* The [vdso] bytes the tracer kept, in a file for the image (written once): 0 or -1. */
static int vdso_file(const struct tr_map *m)
{
	FILE *f;

	if (g_vdso[0])
		return 0;
	snprintf(g_vdso, sizeof(g_vdso), "/tmp/auxcap-test-vdso-%d", (int)getpid());
	f = fopen(g_vdso, "w");
	if (!f || fwrite(m->bytes, 1, m->len, f) != m->len || fclose(f))
		return -1;
	return 0;
}

/* An image of the traced program's code, with a block cache of its own (empty). */
static struct auxcap_ipt_image *new_image(void)
{
	struct auxcap_ipt_image *image;
	bool vdso = false;
	int r = 0;

	if (auxcap_ipt_image_new(&image) < 0)
		return NULL;
	for (size_t i = 0; i < g_run.nmaps && r == 0; i++) {
		const struct tr_map *m = &g_run.maps[i];

		if (m->path[0] == '/') {
			r = auxcap_ipt_image_add_raw(image, m->path, m->pgoff, m->len, m->addr);
		} else if (m->bytes && !vdso) {
			/* [vdso]: the tracer kept a copy of its bytes */
			vdso = true;
			r = vdso_file(m);
			if (r == 0)
				r = auxcap_ipt_image_add_raw(image, g_vdso, 0, m->len, m->addr);
		}
	}
	if (r < 0) {
		auxcap_ipt_image_free(image);
		return NULL;
	}
	return image;
}

static int setup(void **state)
{
	const char *prog = getenv("AUXCAP_EXAMPLE_LOOP");
	char *argv[] = { (char *)prog, "1500", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_PT, .psb_period = 256 };

	(void)state;
	if (!prog)
		test_skip("AUXCAP_EXAMPLE_LOOP is not set; run through 'meson test'");
	if (tr_run(&g_run, &opts, argv) != 0)
		return -1;
	g_image = new_image();
	if (!g_image)
		return -1;
	printf("# %zu trace bytes of %llu instructions\n", g_run.trace_len,
	       (unsigned long long)g_run.stats.insns);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	auxcap_ipt_image_free(g_image);
	tr_run_fini(&g_run);
	if (g_vdso[0])
		unlink(g_vdso);
	return 0;
}

static void sequential_in(struct auxcap_ipt_image *image, const uint8_t *buf, size_t len,
			  bool block, struct items *out)
{
	struct auxcap_ipt_decoder_opts o = { .sz = sizeof(o), .block = block };
	struct auxcap_ipt_decoder *dec = NULL;
	struct auxcap_ipt_item it;
	int r;

	memset(out, 0, sizeof(*out));
	assert_int_equal(auxcap_ipt_decoder_new(buf, len, image, NULL, &o, &dec), 0);
	while ((r = auxcap_ipt_decoder_next(dec, &it)) == 1)
		collect(out, &it);
	assert_int_equal(r, 0);
	auxcap_ipt_decoder_free(dec);
}

static void sequential(const uint8_t *buf, size_t len, bool block, struct items *out)
{
	sequential_in(g_image, buf, len, block, out);
}

static void assert_same_item(const struct auxcap_ipt_item *a, const struct auxcap_ipt_item *b,
			     size_t i)
{
	if (a->kind != b->kind || a->flags != b->flags || a->offset != b->offset ||
	    a->tsc != b->tsc || a->ip != b->ip || a->end_ip != b->end_ip || a->ninsn != b->ninsn ||
	    a->iclass != b->iclass || a->mode != b->mode || a->size != b->size ||
	    memcmp(a->raw, b->raw, a->size) || a->event != b->event || a->at != b->at ||
	    a->payload != b->payload || a->err != b->err || a->native != b->native)
		fail_msg("item %zu differs: kind %d/%d ip %" PRIx64 "/%" PRIx64 " end %" PRIx64
			 "/%" PRIx64 " ninsn %u/%u offset %" PRIu64 "/%" PRIu64 " event %d/%d",
			 i, a->kind, b->kind, a->ip, b->ip, a->end_ip, b->end_ip, a->ninsn, b->ninsn,
			 a->offset, b->offset, a->event, b->event);
}

/*
 * The flow the items describe, independent of how the block decoder cut it into blocks (that
 * depends on what libipt's block cache already holds, hence on what was decoded before):
 * instructions counted, taken branches (from, to, class), events other than PSB+ status
 * updates, and gaps, in order.
 */
struct flow_step {
	int kind; /* 0 branch, 1 event, 2 gap */
	uint64_t from, to;
	int what; /* branch class, event type, gap errno */
	uint64_t insns; /* instructions before it */
};

struct flow {
	struct flow_step *v;
	size_t n, cap;
	uint64_t insns;
};

static void flow_add(struct flow *f, int kind, uint64_t from, uint64_t to, int what)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 4096;
		f->v = realloc(f->v, f->cap * sizeof(*f->v));
		assert_non_null(f->v);
	}
	memset(&f->v[f->n], 0, sizeof(f->v[f->n])); /* padding too: steps are memcmp'd */
	f->v[f->n].kind = kind;
	f->v[f->n].from = from;
	f->v[f->n].to = to;
	f->v[f->n].what = what;
	f->v[f->n].insns = f->insns;
	f->n++;
}

/* Length of the conditional jump encoded at @p (prefixes, Jcc rel8/rel32, jrcxz, loop). */
static unsigned int jcc_len(const uint8_t *p, unsigned int n)
{
	unsigned int i = 0;

	while (i < n && (p[i] == 0x2e || p[i] == 0x3e || p[i] == 0x66 || p[i] == 0x67 ||
			 p[i] == 0xf2 || p[i] == 0xf3 || (p[i] & 0xf0) == 0x40))
		i++;
	if (i < n && ((p[i] >= 0x70 && p[i] <= 0x7f) || (p[i] >= 0xe0 && p[i] <= 0xe3)))
		return i + 2;
	if (i + 1 < n && p[i] == 0x0f && p[i + 1] >= 0x80 && p[i + 1] <= 0x8f)
		return i + 6;
	return 0;
}

static void to_flow(const struct items *l, struct flow *f)
{
	const struct auxcap_ipt_item *prev = NULL;

	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < l->n; i++) {
		const struct auxcap_ipt_item *it = &l->v[i];

		switch (it->kind) {
		case AUXCAP_IPT_ITEM_INSN:
		case AUXCAP_IPT_ITEM_BLOCK:
			if (prev) {
				uint64_t last = prev->kind == AUXCAP_IPT_ITEM_BLOCK ? prev->end_ip
										    : prev->ip;
				bool fall = prev->iclass == AUXCAP_IPT_IC_OTHER;

				if (prev->iclass == AUXCAP_IPT_IC_COND_JUMP) {
					unsigned int n = jcc_len(prev->raw, prev->size);

					assert_true(n > 0);
					fall = it->ip == last + n;
				}
				if (!fall)
					flow_add(f, 0, last, it->ip, prev->iclass);
			}
			f->insns += it->ninsn;
			prev = it;
			break;
		case AUXCAP_IPT_ITEM_EVENT:
			if (it->flags & AUXCAP_IPT_F_STATUS_UPDATE)
				break;
			flow_add(f, 1, it->at, it->ip, it->event);
			if (it->event != AUXCAP_IPT_EV_TICK && it->event != AUXCAP_IPT_EV_CBR)
				prev = NULL; /* enable/disable/overflow: no branch across it */
			break;
		case AUXCAP_IPT_ITEM_GAP:
			flow_add(f, 2, it->offset, it->ip, it->err);
			prev = NULL;
			break;
		}
	}
}

static void assert_same_flow(const struct flow *a, const struct flow *b, const char *what)
{
	if (a->insns != b->insns)
		fail_msg("%s: %llu instructions, sequential %llu", what,
			 (unsigned long long)a->insns, (unsigned long long)b->insns);
	if (a->n != b->n)
		fail_msg("%s: %zu branches, events and gaps, sequential %zu", what, a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		if (memcmp(&a->v[i], &b->v[i], sizeof(a->v[i])))
			fail_msg("%s: step %zu differs: kind %d/%d %" PRIx64 "=>%" PRIx64 " / %" PRIx64
				 "=>%" PRIx64 " what %d/%d after %llu/%llu instructions",
				 what, i, a->v[i].kind, b->v[i].kind, a->v[i].from, a->v[i].to,
				 b->v[i].from, b->v[i].to, a->v[i].what, b->v[i].what,
				 (unsigned long long)a->v[i].insns, (unsigned long long)b->v[i].insns);
}

static void check_parallel(const uint8_t *buf, size_t len, bool block, const char *what)
{
	static const unsigned int threads[] = { 1, 2, 4 };
	static const size_t chunks[] = { 300, 2048, 16384 };
	struct items seq, par;
	struct flow sf;
	size_t gaps = 0;

	sequential(buf, len, block, &seq);
	to_flow(&seq, &sf);
	for (size_t i = 0; i < seq.n; i++)
		gaps += seq.v[i].kind == AUXCAP_IPT_ITEM_GAP;
	assert_true(seq.n > 1000);
	for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			struct auxcap_ipt_parallel_opts po = {
				.sz = sizeof(po),
				.threads = threads[t],
				.chunk = chunks[c],
				.dec = { .sz = sizeof(po.dec), .block = block },
			};

			memset(&par, 0, sizeof(par));
			assert_int_equal(auxcap_ipt_decode_parallel(buf, len, g_image, NULL, &po,
								    collect, &par),
					 0);
			if (block) {
				/* the same flow: the cut into blocks depends on libipt's cache */
				struct flow pf;
				char where[128];

				snprintf(where, sizeof(where), "%s, %u threads, %zu-byte pieces", what,
					 threads[t], chunks[c]);
				to_flow(&par, &pf);
				assert_same_flow(&pf, &sf, where);
				free(pf.v);
			} else {
				/* instruction by instruction: the very same items */
				if (par.n != seq.n)
					fail_msg("%s, %u threads, %zu-byte pieces: %zu items, "
						 "sequential %zu",
						 what, threads[t], chunks[c], par.n, seq.n);
				for (size_t i = 0; i < seq.n; i++)
					assert_same_item(&par.v[i], &seq.v[i], i);
			}
			free(par.v);
		}
	}
	printf("# %s, %s decoder: %zu items, %llu instructions, %zu branches/events/gaps (%zu "
	       "gaps), the same on 1, 2, 4 threads\n",
	       what, block ? "block" : "instruction", seq.n, (unsigned long long)sf.insns, sf.n,
	       gaps);
	free(sf.v);
	free(seq.v);
}

static void test_split_points(void **state)
{
	uint64_t starts[1024];
	ssize_t n;

	(void)state;
	n = auxcap_ipt_split(g_run.trace, g_run.trace_len, 1024, starts, 1024);
	assert_true(n > 10);
	assert_int_equal(starts[0], 0);
	for (ssize_t k = 1; k < n; k++) {
		assert_true(starts[k] > starts[k - 1]);
		assert_true(starts[k] - starts[k - 1] >= 1024 || k == 1);
		/* a PSB */
		for (int b = 0; b < 16; b++)
			assert_int_equal(g_run.trace[starts[k] + (uint64_t)b], b & 1 ? 0x82 : 0x02);
	}
	/* at most @max; an empty stream is one piece */
	assert_int_equal(auxcap_ipt_split(g_run.trace, g_run.trace_len, 1024, starts, 3), 3);
	assert_int_equal(auxcap_ipt_split(g_run.trace, 0, 1024, starts, 3), 1);
	assert_int_equal(auxcap_ipt_split(NULL, 10, 1024, starts, 3), -EINVAL);
}

static void test_parallel_block_decoder(void **state)
{
	(void)state;
	check_parallel(g_run.trace, g_run.trace_len, true, "intact");
}

static void test_parallel_insn_decoder(void **state)
{
	(void)state;
	check_parallel(g_run.trace, g_run.trace_len, false, "intact");
}

/* The trace with garbage in three places, one of them over a PSB (cut in mid-packet by
 * decoding only len - 3 of its bytes). */
static uint8_t *damaged_copy(void)
{
	uint8_t *copy = malloc(g_run.trace_len);
	size_t len = g_run.trace_len;

	assert_non_null(copy);
	memcpy(copy, g_run.trace, len);
	memset(copy + len / 5, 0xd7, 37);
	memset(copy + len / 2, 0x00, 700);
	for (size_t i = 2 * len / 3; i < 2 * len / 3 + 64; i++)
		copy[i] = (uint8_t)(i * 131 + 7);
	return copy;
}

static void test_parallel_damaged(void **state)
{
	uint8_t *copy = damaged_copy();
	size_t len = g_run.trace_len;

	(void)state;
	check_parallel(copy, len - 3, true, "damaged");
	check_parallel(copy, len - 3, false, "damaged");
	free(copy);
}

/*
 * At a decode error libipt's block decoder hands back the instructions of the block it was
 * decoding, and where its blocks end depends on its block cache (what was decoded before
 * with the same image).  They are kept, so the flow of damaged trace does not depend on it:
 * the same from an image whose cache is empty, from the same image again, and from one that
 * decoded the intact trace first.  (Dropping them lost a cache-dependent number of
 * instructions at each error.)
 */
static void test_damaged_flow_independent_of_cache(void **state)
{
	uint8_t *copy = damaged_copy();
	size_t len = g_run.trace_len - 3, gaps = 0;
	struct auxcap_ipt_image *cold = new_image(), *warm = new_image();
	struct items a, b, c;
	struct flow fa, fb, fc;

	(void)state;
	assert_non_null(cold);
	assert_non_null(warm);
	sequential_in(cold, copy, len, true, &a);
	sequential_in(cold, copy, len, true, &b);
	sequential_in(warm, g_run.trace, g_run.trace_len, true, &c);
	free(c.v);
	sequential_in(warm, copy, len, true, &c);
	to_flow(&a, &fa);
	to_flow(&b, &fb);
	to_flow(&c, &fc);
	for (size_t i = 0; i < fa.n; i++)
		gaps += fa.v[i].kind == 2;
	assert_true(gaps >= 1);
	assert_same_flow(&fb, &fa, "damaged, again with the same image");
	assert_same_flow(&fc, &fa, "damaged, with an image that decoded the intact trace");
	printf("# damaged, block decoder: %zu, %zu and %zu blocks for the same %llu instructions "
	       "and %zu steps (%zu gaps) with a cold, warm and other-warm block cache\n",
	       a.n, b.n, c.n, (unsigned long long)fa.insns, fa.n, gaps);
	free(fa.v);
	free(fb.v);
	free(fc.v);
	free(a.v);
	free(b.v);
	free(c.v);
	auxcap_ipt_image_free(cold);
	auxcap_ipt_image_free(warm);
	free(copy);
}

static void test_parallel_stops_and_errors(void **state)
{
	struct auxcap_ipt_parallel_opts po = { .sz = sizeof(po), .threads = 2, .chunk = 512,
					       .dec = { .sz = sizeof(po.dec), .block = true } };
	struct items l = { .stop_after = 100 };

	(void)state;
	assert_int_equal(auxcap_ipt_decode_parallel(g_run.trace, g_run.trace_len, g_image, NULL,
						    &po, collect, &l),
			 -ECANCELED);
	assert_int_equal(l.n, 100);
	free(l.v);
	assert_int_equal(auxcap_ipt_decode_parallel(g_run.trace, g_run.trace_len, NULL, NULL, &po,
						    collect, &l),
			 -EINVAL);
	assert_int_equal(auxcap_ipt_decode_parallel(g_run.trace, g_run.trace_len, g_image, NULL,
						    &po, NULL, &l),
			 -EINVAL);
	po.sz = 1;
	assert_int_equal(auxcap_ipt_decode_parallel(g_run.trace, g_run.trace_len, g_image, NULL,
						    &po, collect, &l),
			 -EINVAL);
	/* an empty stream decodes to nothing */
	memset(&l, 0, sizeof(l));
	assert_int_equal(auxcap_ipt_decode_parallel(g_run.trace, 0, g_image, NULL, NULL, collect,
						    &l),
			 0);
	assert_int_equal(l.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_points),
		cmocka_unit_test(test_parallel_block_decoder),
		cmocka_unit_test(test_parallel_insn_decoder),
		cmocka_unit_test(test_parallel_damaged),
		cmocka_unit_test(test_damaged_flow_independent_of_cache),
		cmocka_unit_test(test_parallel_stops_and_errors),
	};

	return cmocka_run_group_tests_name("aux/intel_pt/ipt_parallel", tests, setup, teardown);
}
