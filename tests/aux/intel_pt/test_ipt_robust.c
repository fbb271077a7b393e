/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Damaged traces: a stream made of N copies of a libipt test vector (each starts with a
 * PSB) is cut at random offsets or has random bytes written over it.  The decoder must
 * never crash, must report what it could not decode as GAP items with the trace offset,
 * must decode everything before the damage exactly as the intact stream, and must resume
 * at the next PSB after it (everything after the damaged copy decodes as intact).
 * Deterministic: a fixed-seed generator picks the offsets.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>

#include <cmocka.h>

#include "ipt.h"
#include "ptt_fixture.h"
#include "util.h"

#define COPIES 40

struct fixture {
	uint8_t *one; /* one copy of the vector's trace */
	size_t one_len;
	size_t psbend; /* offset just after the copy's PSB+ */
	char bin[768]; /* the vector's code */
	uint64_t org;  /* its load address */
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	/* xorshift64: reproducible across platforms. */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Decoded flow as text, without offsets except in gap lines; returns the number of gaps. */
static uint64_t decode_text(const struct fixture *f, const uint8_t *buf, size_t len, bool block,
			    struct ptt_text *out, uint64_t *ret_max_offset)
{
	struct auxcap_ipt_decoder_opts opts = { .sz = sizeof(opts), .block = block };
	struct auxcap_ipt_decoder *dec = NULL;
	struct auxcap_ipt_image *image = NULL;
	struct auxcap_ipt_item it;
	uint64_t gaps = 0, max_off = 0;
	size_t n = 0;
	int r;

	assert_int_equal(auxcap_ipt_image_new(&image), 0);
	assert_int_equal(auxcap_ipt_image_add_raw(image, f->bin, 0, 0, f->org), 0);
	assert_int_equal(auxcap_ipt_decoder_new(buf, len, image, NULL, &opts, &dec), 0);
	ptt_text_addf(out, "%s", "");
	while ((r = auxcap_ipt_decoder_next(dec, &it)) == 1) {
		/* A decoder that never ends fails here rather than hanging. */
		assert_true(++n < 10000000);
		if (it.offset > max_off)
			max_off = it.offset;
		switch (it.kind) {
		case AUXCAP_IPT_ITEM_INSN:
		case AUXCAP_IPT_ITEM_BLOCK:
			ptt_text_addf(out, "%" PRIx64 " %" PRIx64 " %u\n", it.ip, it.end_ip,
				      it.ninsn);
			break;
		case AUXCAP_IPT_ITEM_EVENT:
			ptt_text_addf(out, "event %d %" PRIx64 "\n", (int)it.event, it.ip);
			break;
		case AUXCAP_IPT_ITEM_GAP:
			assert_true(it.err < 0);
			assert_true(it.offset <= len);
			ptt_text_addf(out, "gap %" PRIx64 " %d\n", it.offset, it.native);
			gaps++;
			break;
		}
	}
	assert_int_equal(r, 0);
	assert_int_equal(auxcap_ipt_decoder_gaps(dec), gaps);
	auxcap_ipt_decoder_free(dec);
	auxcap_ipt_image_free(image);
	*ret_max_offset = max_off;
	return gaps;
}

static uint8_t *copies(const struct fixture *f, size_t n)
{
	uint8_t *buf = malloc(f->one_len * n + 1);

	assert_non_null(buf);
	for (size_t i = 0; i < n; i++)
		memcpy(buf + i * f->one_len, f->one, f->one_len);
	return buf;
}

static int setup(void **state)
{
	static struct fixture f;
	struct ptt_vector *v;
	size_t n;

	n = ptt_vectors("ptxed", &v);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].variant, "fup-tip-ptxed"))
			continue;
		f.one = ptt_read_file(v[i].pt, &f.one_len);
		snprintf(f.bin, sizeof(f.bin), "%s", v[i].bin);
		f.org = v[i].org;
	}
	free(v);
	if (!f.one)
		return -1;
	/* fup-tip: PSB (16) MODE.Exec (2) PSBEND (2), then the flow (TIP.PGE, FUP+TIP for
	 * an interrupt, FUP+TIP.PGD); its copies concatenate into a stream without gaps. */
	f.psbend = 0x14;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (f)
		free(f->one);
	return 0;
}

static void test_ipt_robust_truncated_keeps_prefix(void **state)
{
	const struct fixture *f = *state;
	size_t total = f->one_len * COPIES;
	uint8_t *full = copies(f, COPIES);
	unsigned cut_in_flow = 0;

	for (int trial = 0; trial < 300; trial++) {
		size_t cut = (size_t)(rng() % total);
		size_t k = cut / f->one_len; /* copies before the damaged one */
		struct ptt_text whole = { 0 }, part = { 0 };
		uint64_t max_off;
		uint8_t *buf = malloc(cut ? cut : 1);

		assert_non_null(buf);
		memcpy(buf, full, cut);
		(void)decode_text(f, full, k * f->one_len, trial & 1, &whole, &max_off);
		(void)decode_text(f, buf, cut, trial & 1, &part, &max_off);
		assert_true(max_off <= cut);
		/* Everything before the cut copy decodes as in the intact stream. */
		assert_true(part.len >= whole.len);
		assert_memory_equal(part.s, whole.s, whole.len);
		if (cut % f->one_len > f->psbend)
			cut_in_flow++;
		ptt_text_free(&whole);
		ptt_text_free(&part);
		free(buf);
	}
	assert_true(cut_in_flow > 0);
	free(full);
}

static void test_ipt_robust_garbage_resumes_at_next_psb(void **state)
{
	const struct fixture *f = *state;
	size_t total = f->one_len * COPIES;
	unsigned with_gap = 0, trials = 300;

	for (unsigned trial = 0; trial < trials; trial++) {
		/* Damage bytes inside one copy's flow, after its PSB+. */
		size_t k = 2 + (size_t)(rng() % (COPIES - 3));
		size_t start =
			k * f->one_len + f->psbend + (size_t)(rng() % (f->one_len - f->psbend));
		size_t end = start + 1 + (size_t)(rng() % 8);
		struct ptt_text got = { 0 }, before = { 0 }, after = { 0 };
		uint8_t *buf = copies(f, COPIES);
		uint64_t gaps, max_off;

		if (end > (k + 1) * f->one_len)
			end = (k + 1) * f->one_len;
		for (size_t i = start; i < end; i++)
			buf[i] = (uint8_t)rng();
		gaps = decode_text(f, buf, total, trial & 1, &got, &max_off);
		(void)decode_text(f, buf, (k - 1) * f->one_len, trial & 1, &before, &max_off);
		/* The copies before the damage decode as intact (but the last one: libipt reads
		 * ahead for its final events, so damage can surface just before them)... */
		assert_true(got.len >= before.len);
		assert_memory_equal(got.s, before.s, before.len);
		if (gaps) {
			/* ...and decoding resumed at the first PSB after the reported gap: the
			 * copies from there on decode as intact too.  (The damage is found
			 * where the decoder reads it, which may be past the next PSB when
			 * the damaged bytes still looked like packets.) */
			uint64_t g = strtoull(strstr(got.s + before.len, "gap ") + 4, NULL, 16);
			size_t j = (size_t)(g / f->one_len) + 1;

			/* Damage is noticed where it is, not before. */
			assert_true(g >= start);
			with_gap++;
			if (j < COPIES) {
				(void)decode_text(f, buf + j * f->one_len,
						  (COPIES - j) * f->one_len, trial & 1, &after,
						  &max_off);
				assert_true(got.len >= after.len);
				assert_memory_equal(got.s + got.len - after.len, after.s,
						    after.len);
			}
		}
		ptt_text_free(&got);
		ptt_text_free(&before);
		ptt_text_free(&after);
		free(buf);
	}
	printf("garbage trials: %u, reported as gaps: %u\n", trials, with_gap);
	/* Random bytes in Intel PT are mostly not valid packets. */
	assert_true(with_gap > trials / 2);
}

static void test_ipt_robust_leading_garbage_is_a_gap(void **state)
{
	const struct fixture *f = *state;
	struct ptt_text a = { 0 }, b = { 0 };
	uint8_t *buf = malloc(f->one_len + 5);
	uint64_t max_off;

	assert_non_null(buf);
	memset(buf, 0x55, 5);
	memcpy(buf + 5, f->one, f->one_len);
	/* Bytes before the first PSB are reported, then the flow decodes as usual. */
	assert_int_equal(decode_text(f, buf, f->one_len + 5, false, &a, &max_off), 1);
	assert_int_equal(decode_text(f, f->one, f->one_len, false, &b, &max_off), 0);
	assert_true(!strncmp(a.s, "gap 0 0\n", 8));
	assert_string_equal(a.s + 8, b.s);
	ptt_text_free(&a);
	ptt_text_free(&b);
	free(buf);
}

static void test_ipt_robust_bad_psb_plus_skips_to_next_psb(void **state)
{
	const struct fixture *f = *state;
	struct ptt_text a = { 0 }, b = { 0 };
	uint8_t *buf = malloc(3 * 18 + f->one_len);
	uint64_t max_off;
	size_t n = 0;

	assert_non_null(buf);
	/* Three PSBs whose PSB+ holds an unknown opcode (02 ff), then an intact copy: each
	 * broken PSB+ is one gap, and decoding goes on at the following PSB. */
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < 8; i++) {
			buf[n++] = 0x02;
			buf[n++] = 0x82;
		}
		buf[n++] = 0x02;
		buf[n++] = 0xff;
	}
	memcpy(buf + n, f->one, f->one_len);
	assert_int_equal(decode_text(f, buf, n + f->one_len, false, &a, &max_off), 3);
	assert_int_equal(decode_text(f, f->one, f->one_len, false, &b, &max_off), 0);
	/* Each gap is reported at the PSB whose PSB+ failed (libipt's bad opcode code 4). */
	assert_true(!strncmp(a.s, "gap 0 4\ngap 12 4\ngap 24 4\n", 26));
	assert_string_equal(a.s + 26, b.s);
	ptt_text_free(&a);
	ptt_text_free(&b);
	free(buf);
}

static void test_ipt_robust_no_psb_at_all(void **state)
{
	const struct fixture *f = *state;
	struct ptt_text a = { 0 };
	uint8_t junk[4096];
	uint64_t max_off;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)rng();
	/* No sync point: nothing decodes, nothing crashes. */
	(void)decode_text(f, junk, sizeof(junk), false, &a, &max_off);
	assert_string_equal(a.s, "");
	ptt_text_free(&a);
	(void)decode_text(f, junk, 0, true, &a, &max_off);
	assert_string_equal(a.s, "");
	ptt_text_free(&a);
}

/*
 * Decode a short damaged trace to its end (fewer than 1000 items, every offset inside it, no
 * failure); returns the number of gaps.
 */
static size_t decode_short(const struct fixture *f, const uint8_t *trace, size_t len,
			   const struct auxcap_ipt_params *params, bool block)
{
	struct auxcap_ipt_decoder_opts opts = { .sz = sizeof(opts), .block = block };
	struct auxcap_ipt_decoder *dec = NULL;
	struct auxcap_ipt_image *image = NULL;
	struct auxcap_ipt_item it;
	size_t n = 0, gaps = 0;
	int r;

	assert_int_equal(auxcap_ipt_image_new(&image), 0);
	assert_int_equal(auxcap_ipt_image_add_raw(image, f->bin, 0, 0, f->org), 0);
	assert_int_equal(auxcap_ipt_decoder_new(trace, len, image, params, &opts, &dec), 0);
	while ((r = auxcap_ipt_decoder_next(dec, &it)) == 1) {
		assert_true(++n < 1000);
		assert_true(it.offset <= len);
		gaps += it.kind == AUXCAP_IPT_ITEM_GAP;
	}
	assert_int_equal(r, 0);
	auxcap_ipt_decoder_free(dec);
	auxcap_ipt_image_free(image);
	return gaps;
}

/*
 * A trace that ends with a TMA whose reserved bits are set, on a CPU with erratum SKZ84:
 * libipt skips it as 8 bytes, one more than the trace has.  Every item, in both modes,
 * stays inside the trace (a fuzz smoke run found an offset one past its end).
 */
static void test_ipt_robust_skz84_tma_at_end(void **state)
{
	static const uint8_t trace[] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02,
		0x82, 0x02, 0x82, 0x02, 0x23, 0x02, 0x73, 0x01, 0x00, 0x4c, 0x00, 0x00,
	};
	const struct fixture *f = *state;
	struct auxcap_ipt_params params = { .sz = sizeof(params) };

	params.cpu_set = true;
	params.cpu_family = 6;
	params.cpu_model = 0x55; /* Skylake-SP: SKZ84 */
	for (int block = 0; block < 2; block++)
		(void)decode_short(f, trace, sizeof(trace), &params, block);
}

static void test_ipt_robust_endless_loop_is_a_gap(void **state)
{
	const struct fixture *f = *state;
	/* PSB, FUP 0x200000, MODE.Exec cs.l, PSBEND, TNT.8: tracing on at 0x200000, where the
	 * code is "jmp ." (eb fe), which never takes the TNT bits: libipt would loop forever. */
	static const uint8_t head[] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x7d, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x99,
		0x01, 0x02, 0x23, 0x1c,
	};
	static const uint8_t jmp_self[] = { 0xeb, 0xfe };
	char path[] = "/tmp/auxcap-ipt-loop-XXXXXX";
	struct ptt_text a = { 0 }, b = { 0 };
	uint8_t *buf = malloc(sizeof(head) + f->one_len);
	int fd = mkstemp(path);
	uint64_t max_off;

	assert_non_null(buf);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, jmp_self, sizeof(jmp_self)), (ssize_t)sizeof(jmp_self));
	close(fd);
	memcpy(buf, head, sizeof(head));
	memcpy(buf + sizeof(head), f->one, f->one_len);
	for (int variant = 0; variant < 4; variant++) {
		bool block = variant & 1;
		uint32_t limit = variant & 2 ? 1000 : 0; /* 0: the default, 2^20 */
		uint64_t expect = limit ? limit : 1u << 20;
		struct auxcap_ipt_decoder_opts opts = { .sz = sizeof(opts), .block = block,
							.max_stalled_insns = limit };
		struct auxcap_ipt_decoder *dec = NULL;
		struct auxcap_ipt_image *image = NULL;
		struct auxcap_ipt_item it;
		uint64_t insns = 0;
		int r;

		assert_int_equal(auxcap_ipt_image_new(&image), 0);
		assert_int_equal(auxcap_ipt_image_add_raw(image, path, 0, 0, 0x200000), 0);
		assert_int_equal(auxcap_ipt_image_add_raw(image, f->bin, 0, 0, f->org), 0);
		assert_int_equal(auxcap_ipt_decoder_new(buf, sizeof(head) + f->one_len, image, NULL,
							&opts, &dec), 0);
		/* The loop runs for the limit's instructions, then it is cut at its address. */
		while ((r = auxcap_ipt_decoder_next(dec, &it)) == 1 && it.kind != AUXCAP_IPT_ITEM_GAP) {
			if (it.kind == AUXCAP_IPT_ITEM_INSN || it.kind == AUXCAP_IPT_ITEM_BLOCK) {
				assert_true(it.ip == 0x200000);
				insns += it.ninsn;
			}
		}
		assert_int_equal(r, 1);
		assert_int_equal(it.err, -ELOOP);
		assert_int_equal(it.native, 0);
		assert_true(it.ip == 0x200000);
		assert_true(insns >= expect && insns <= expect + 1);
		assert_int_equal(auxcap_ipt_decoder_gaps(dec), 1);
		auxcap_ipt_decoder_free(dec);
		auxcap_ipt_image_free(image);
	}
	unlink(path);
	/* Everything after the stuck part decodes as the intact copy. */
	(void)decode_text(f, buf, sizeof(head) + f->one_len, false, &a, &max_off);
	(void)decode_text(f, f->one, f->one_len, false, &b, &max_off);
	assert_true(strlen(a.s) >= strlen(b.s));
	assert_string_equal(a.s + strlen(a.s) - strlen(b.s), b.s);
	ptt_text_free(&a);
	ptt_text_free(&b);
	free(buf);
}

static int dump_count(void *ctx, const char *line)
{
	(void)line;
	(*(size_t *)ctx)++;
	return 0;
}

/*
 * libipt reads the byte after the trace when its last 8-byte word is PSB payload (each sync
 * that scans to the end).  A trace that ends at the end of a mapping (a page followed by an
 * unreadable one here) must still list and decode: a PSB+, an unknown opcode (the decoder
 * then syncs forward through the rest), padding, and PSB payload in the last word.
 */
static void test_ipt_robust_psb_payload_at_page_end(void **state)
{
	const struct fixture *f = *state;
	uint8_t *page, *trace;
	size_t len = 256, lines = 0;

	page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(page != MAP_FAILED);
	assert_int_equal(mprotect(page + 4096, 4096, PROT_NONE), 0);
	trace = page + 4096 - len;
	memset(trace, 0, len);
	for (int i = 0; i < 16; i += 2) {
		trace[i] = 0x02; /* PSB */
		trace[i + 1] = 0x82;
		trace[len - 8 + i / 2] = i / 2 % 2 ? 0x82 : 0x02; /* PSB payload, last word */
	}
	trace[16] = 0x02; /* PSBEND */
	trace[17] = 0x23;
	trace[18] = 0x02; /* an unknown extended opcode */
	trace[19] = 0xff;
	assert_true(auxcap_ipt_dump(trace, len, NULL, NULL, dump_count, &lines) >= 1);
	assert_true(lines >= 2); /* psb, psbend, the error */
	for (int block = 0; block < 2; block++)
		assert_true(decode_short(f, trace, len, NULL, block) >= 1);
	munmap(page, 8192);
}

static void test_ipt_robust_dump_survives_damage(void **state)
{
	const struct fixture *f = *state;
	size_t total = f->one_len * COPIES;

	for (int trial = 0; trial < 200; trial++) {
		uint8_t *buf = copies(f, COPIES);
		size_t start = (size_t)(rng() % total), lines = 0;
		size_t cut = start + (size_t)(rng() % (total - start + 1));
		int r;

		for (size_t i = start; i < start + 32 && i < total; i++)
			buf[i] = (uint8_t)rng();
		bool intact_copy = false;

		r = auxcap_ipt_dump(buf, cut, NULL, NULL, dump_count, &lines);
		assert_true(r >= 0);
		/* Any undamaged copy within the cut is listed. */
		for (size_t i = 0; (i + 1) * f->one_len <= cut; i++)
			if ((i + 1) * f->one_len <= start || i * f->one_len >= start + 32)
				intact_copy = true;
		if (intact_copy)
			assert_true(lines > 0);
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipt_robust_truncated_keeps_prefix),
		cmocka_unit_test(test_ipt_robust_garbage_resumes_at_next_psb),
		cmocka_unit_test(test_ipt_robust_leading_garbage_is_a_gap),
		cmocka_unit_test(test_ipt_robust_bad_psb_plus_skips_to_next_psb),
		cmocka_unit_test(test_ipt_robust_no_psb_at_all),
		cmocka_unit_test(test_ipt_robust_dump_survives_damage),
		cmocka_unit_test(test_ipt_robust_endless_loop_is_a_gap),
		cmocka_unit_test(test_ipt_robust_skz84_tma_at_end),
		cmocka_unit_test(test_ipt_robust_psb_payload_at_page_end),
	};

	if (!ptt_root())
		test_skip("libipt test vectors not found ($AUXCAP_SHARED_FIXTURES/libipt-ptt)");
	return cmocka_run_group_tests_name("aux/intel_pt/ipt_robust", tests, setup, teardown);
}
