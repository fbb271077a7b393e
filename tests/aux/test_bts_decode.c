/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the Intel BTS record decoder: branches, predicted bit, trace begin/end,
 * padding, trailing partial records, overlap trimming between snapshots and the text dump.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bts_decode.h"

struct rec_buf {
	unsigned char buf[24 * 64];
	size_t len;
};

static void put_u64(unsigned char *p, uint64_t v)
{
	unsigned int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void add_rec(struct rec_buf *b, uint64_t from, uint64_t to, uint64_t flags)
{
	assert_true(b->len + 24 <= sizeof(b->buf));
	put_u64(b->buf + b->len, from);
	put_u64(b->buf + b->len + 8, to);
	put_u64(b->buf + b->len + 16, flags);
	b->len += 24;
}

static void test_records(void **state)
{
	struct rec_buf b = { .len = 0 };
	struct auxcap_bts_decoder dec;
	struct auxcap_bts_event ev;

	(void)state;
	add_rec(&b, 0, 0x401000, 0);			   /* trace begin */
	add_rec(&b, 0x401010, 0x401100, 0x10);		   /* predicted branch */
	add_rec(&b, 0, 0, 0);				   /* padding */
	add_rec(&b, 0, 0, 0x10);			   /* from = to = 0: padding too */
	add_rec(&b, 0xffffffff81000000ULL, 0x401200, 0x2); /* not predicted, other flag bits */
	add_rec(&b, 0x401234, 0, 0);			   /* trace end */

	auxcap_bts_decoder_init(&dec, b.buf, b.len);
	assert_int_equal(auxcap_bts_decoder_next(&dec, &ev), 1);
	assert_int_equal(ev.type, AUXCAP_BTS_EVENT_BRANCH);
	assert_int_equal(ev.branch.kind, AUXCAP_BTS_TRACE_BEGIN);
	assert_int_equal(ev.branch.offset, 0);
	assert_int_equal(ev.branch.to, 0x401000);

	assert_int_equal(auxcap_bts_decoder_next(&dec, &ev), 1);
	assert_int_equal(ev.branch.kind, AUXCAP_BTS_BRANCH);
	assert_int_equal(ev.branch.offset, 24);
	assert_int_equal(ev.branch.from, 0x401010);
	assert_int_equal(ev.branch.to, 0x401100);
	assert_true(ev.branch.predicted);

	assert_int_equal(auxcap_bts_decoder_next(&dec, &ev), 1);
	assert_int_equal(ev.branch.kind, AUXCAP_BTS_BRANCH);
	assert_int_equal(ev.branch.offset, 4 * 24);
	assert_int_equal(ev.branch.from, 0xffffffff81000000ULL);
	assert_false(ev.branch.predicted);
	assert_int_equal(ev.branch.flags, 2);

	assert_int_equal(auxcap_bts_decoder_next(&dec, &ev), 1);
	assert_int_equal(ev.branch.kind, AUXCAP_BTS_TRACE_END);
	assert_int_equal(ev.branch.from, 0x401234);
	assert_int_equal(ev.branch.offset, 5 * 24);

	assert_int_equal(auxcap_bts_decoder_next(&dec, &ev), 0);
	assert_int_equal(dec.stats.records, 4);
	assert_int_equal(dec.stats.branches, 2);
	assert_int_equal(dec.stats.begins, 1);
	assert_int_equal(dec.stats.ends, 1);
	assert_int_equal(dec.stats.predicted, 1);
	assert_int_equal(dec.stats.padding, 2);
	assert_int_equal(dec.stats.errors, 0);
}

/* A trailing part of a record, for every length 1..23: an error at its offset, then the end. */
static void test_partial_record(void **state)
{
	struct rec_buf b = { .len = 0 };
	struct auxcap_bts_decoder dec;
	struct auxcap_bts_event ev;
	size_t extra;

	(void)state;
	add_rec(&b, 0x1000, 0x2000, 0);
	add_rec(&b, 0x2004, 0x3000, 0);
	add_rec(&b, 0x3004, 0x4000, 0);
	for (extra = 1; extra < 24; extra++) {
		size_t len = (size_t)2 * 24 + extra;
		int branches = 0;

		auxcap_bts_decoder_init(&dec, b.buf, len);
		while (auxcap_bts_decoder_next(&dec, &ev) == 1 &&
		       ev.type == AUXCAP_BTS_EVENT_BRANCH)
			branches++;
		assert_int_equal(branches, 2);
		assert_int_equal(ev.type, AUXCAP_BTS_EVENT_ERROR);
		assert_int_equal(ev.error.code, -ENODATA);
		assert_int_equal(ev.error.offset, 48);
		assert_int_equal(ev.error.size, extra);
		assert_int_equal(auxcap_bts_decoder_next(&dec, &ev), 0);
		assert_int_equal(dec.stats.errors, 1);
		assert_int_equal(dec.stats.partial_bytes, extra);
		assert_int_equal((dec.stats.records + dec.stats.padding) * 24 +
					 dec.stats.partial_bytes,
				 len);
	}
}

static void test_empty_and_args(void **state)
{
	struct auxcap_bts_decoder dec;
	struct auxcap_bts_event ev;

	(void)state;
	auxcap_bts_decoder_init(&dec, NULL, 100);
	assert_int_equal(auxcap_bts_decoder_next(&dec, &ev), 0);
	assert_int_equal(auxcap_bts_decoder_next(NULL, &ev), -EINVAL);
	assert_int_equal(auxcap_bts_decoder_next(&dec, NULL), -EINVAL);
}

/* Records numbered @first .. @first + @n - 1, each distinct. */
static void fill_seq(struct rec_buf *b, unsigned int first, unsigned int n)
{
	unsigned int i;

	b->len = 0;
	for (i = first; i < first + n; i++)
		add_rec(b, 0x400000 + 16 * i, 0x500000 + 16 * i, i & 1 ? 0x10 : 0);
}

static void test_overlap(void **state)
{
	struct rec_buf a, b;

	(void)state;
	/* Snapshot 2 repeats records 5..9 of snapshot 1, then has 10..14. */
	fill_seq(&a, 0, 10);
	fill_seq(&b, 5, 10);
	assert_int_equal(auxcap_bts_find_overlap(a.buf, a.len, b.buf, b.len), 5 * 24);

	/* Nothing in common. */
	fill_seq(&b, 20, 10);
	assert_int_equal(auxcap_bts_find_overlap(a.buf, a.len, b.buf, b.len), 0);

	/* No new data: the second snapshot is the tail of the first. */
	fill_seq(&b, 4, 6);
	assert_int_equal(auxcap_bts_find_overlap(a.buf, a.len, b.buf, b.len), 6 * 24);

	/* The first snapshot is shorter than the overlap window of the second. */
	fill_seq(&a, 0, 3);
	fill_seq(&b, 1, 20);
	assert_int_equal(auxcap_bts_find_overlap(a.buf, a.len, b.buf, b.len), 2 * 24);

	/* Whole first snapshot repeated. */
	fill_seq(&a, 0, 3);
	fill_seq(&b, 0, 20);
	assert_int_equal(auxcap_bts_find_overlap(a.buf, a.len, b.buf, b.len), 3 * 24);

	/*
	 * Only lengths min(len) - 24 * k are tried: a repeat of 128 bytes (not such a length) is
	 * not found, and no shorter candidate matches.
	 */
	fill_seq(&a, 0, 10);
	memset(b.buf, 0xee, sizeof(b.buf));
	memcpy(b.buf, a.buf + 112, 128);
	b.len = 240;
	assert_int_equal(auxcap_bts_find_overlap(a.buf, a.len, b.buf, b.len), 0);
	/* With a second buffer of 224 bytes, 128 = 224 - 4 * 24 is a candidate and is found. */
	b.len = 128 + 24 * 4;
	assert_int_equal(auxcap_bts_find_overlap(a.buf, a.len, b.buf, b.len), 128);

	/* Empty or absent buffers. */
	assert_int_equal(auxcap_bts_find_overlap(NULL, 0, b.buf, b.len), 0);
	assert_int_equal(auxcap_bts_find_overlap(a.buf, a.len, NULL, 0), 0);
	assert_int_equal(auxcap_bts_find_overlap(a.buf, a.len, b.buf, 0), 0);
}

/* Decoding the second snapshot from the overlap on gives only the new branches. */
static void test_overlap_then_decode(void **state)
{
	struct rec_buf a, b;
	struct auxcap_bts_decoder dec;
	struct auxcap_bts_event ev;
	size_t start;
	unsigned int i = 12;

	(void)state;
	fill_seq(&a, 0, 12);
	fill_seq(&b, 8, 12);
	start = auxcap_bts_find_overlap(a.buf, a.len, b.buf, b.len);
	auxcap_bts_decoder_init(&dec, b.buf + start, b.len - start);
	while (auxcap_bts_decoder_next(&dec, &ev) == 1) {
		assert_int_equal(ev.type, AUXCAP_BTS_EVENT_BRANCH);
		assert_int_equal(ev.branch.from, 0x400000 + 16 * i);
		i++;
	}
	assert_int_equal(i, 20);
}

static void test_dump_raw(void **state)
{
	struct rec_buf b = { .len = 0 };
	struct auxcap_bts_stats st;
	char *text = NULL;
	size_t size = 0;
	FILE *f;

	(void)state;
	add_rec(&b, 0, 0x401000, 0);
	add_rec(&b, 0x401010, 0x401100, 0x10);
	add_rec(&b, 0, 0, 0);
	add_rec(&b, 0, 0, 0);
	add_rec(&b, 0x401104, 0, 0x3);
	b.len += 5; /* a trailing partial record (zeros) */

	f = open_memstream(&text, &size);
	assert_non_null(f);
	assert_int_equal(auxcap_bts_dump_raw(b.buf, b.len, f,
					     AUXCAP_BTS_DUMP_SUMMARY | AUXCAP_BTS_DUMP_PADDING,
					     &st),
			 0);
	fclose(f);
	assert_non_null(strstr(text, ". ... Intel BTS data: size 125 bytes\n"));
	assert_non_null(strstr(text, ".  00000000: trace-begin 0x0000000000000000 -> "
				     "0x0000000000401000\n"));
	assert_non_null(strstr(text, ".  00000018: branch      0x0000000000401010 -> "
				     "0x0000000000401100 pred\n"));
	assert_non_null(strstr(text, ".  00000030: padding     2 record(s)\n"));
	assert_non_null(strstr(text, ".  00000060: trace-end   0x0000000000401104 -> "
				     "0x0000000000000000 flags=0x3\n"));
	assert_non_null(strstr(text, "error 0x00000078: partial record of 5 bytes"));
	assert_non_null(strstr(text,
			       "intel_bts: 125 bytes: 1 branches, 1 trace begins, 1 trace ends, "
			       "1 predicted, 2 padding records, 1 errors\n"));
	assert_int_equal(st.branches, 1);
	assert_int_equal(st.errors, 1);
	free(text);

	/* The perf report -D layout: 24 raw bytes, from -> to, pred or miss. */
	text = NULL;
	f = open_memstream(&text, &size);
	assert_non_null(f);
	assert_int_equal(auxcap_bts_dump_raw(b.buf, b.len, f, AUXCAP_BTS_DUMP_RAW, &st), 0);
	fclose(f);
	assert_non_null(strstr(text,
			       ".  00000018:  10 10 40 00 00 00 00 00 00 11 40 00 00 00 00 00 "
			       "10 00 00 00 00 00 00 00 401010 -> 401100 pred\n"));
	assert_non_null(strstr(text,
			       ".  00000030:  00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "
			       "00 00 00 00 00 00 00 00 0 -> 0 miss\n"));
	assert_non_null(strstr(text, ".  00000078:  00 00 00 00 00"));
	assert_non_null(strstr(text, "    Bad record!\n"));
	assert_int_equal(st.branches, 1);
	assert_int_equal(st.padding, 2);
	free(text);

	assert_int_equal(auxcap_bts_dump_raw(NULL, 24, stdout, 0, &st), -EINVAL);
	assert_int_equal(auxcap_bts_dump_raw(b.buf, 24, NULL, 0, &st), -EINVAL);
	f = fopen("/dev/null", "r");
	assert_non_null(f);
	memset(&st, 0xcd, sizeof(st));
	assert_int_equal(auxcap_bts_dump_raw(b.buf, 48, f, 0, &st), -EIO);
	assert_int_equal(st.branches, 0xcdcdcdcdcdcdcdcdULL);
	fclose(f);
}

/* Random bytes of random lengths: every byte is accounted for, offsets move forward. */
static void test_fuzz(void **state)
{
	static unsigned char buf[24 * 64 + 23];
	uint64_t s = 0x6274735eedULL;
	unsigned int iter;
	size_t i;

	(void)state;
	print_message("fuzz seed 0x%llx\n", (unsigned long long)s);
	for (iter = 0; iter < 2000; iter++) {
		struct auxcap_bts_decoder dec;
		struct auxcap_bts_event ev;
		size_t len;
		uint64_t next = 0;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		len = (size_t)(s % sizeof(buf));
		for (i = 0; i < len; i++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			/* Mostly zeros so that padding, begin and end records occur. */
			buf[i] = (s & 3) ? 0 : (unsigned char)(s >> 8);
		}
		auxcap_bts_decoder_init(&dec, buf, len);
		while (auxcap_bts_decoder_next(&dec, &ev) == 1) {
			uint64_t off = ev.type == AUXCAP_BTS_EVENT_BRANCH ? ev.branch.offset
									  : ev.error.offset;

			assert_true(off >= next && off % 24 == 0);
			next = off + 24;
		}
		assert_int_equal((dec.stats.records + dec.stats.padding) * 24 +
					 dec.stats.partial_bytes,
				 len);
		assert_int_equal(dec.stats.records,
				 dec.stats.branches + dec.stats.begins + dec.stats.ends);
		assert_int_equal(dec.stats.errors, len % 24 ? 1 : 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_partial_record),
		cmocka_unit_test(test_empty_and_args),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_overlap_then_decode),
		cmocka_unit_test(test_dump_raw),
		cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
