/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the Intel BTS backend's ops (aux/intel_bts/bts_backend.c, bts_record.c):
 * records to trace events (branch, trace begin/end, padding skipped, partial record as a gap),
 * overlap trimming between snapshots driven by AUXTRACE_INFO's snapshot word, metadata checks,
 * the dump op through its line callback, the record side's attr defaults and refusals, and
 * the AUXTRACE_INFO words in perf's order.
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
#include "bts_backend.h"

struct rec_buf {
	unsigned char buf[24 * 64];
	size_t len;
};

static void put_u64(unsigned char *p, uint64_t v)
{
	for (unsigned int i = 0; i < 8; i++)
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

static const struct auxcap_backend_ops *bts(void)
{
	const struct auxcap_backend_ops *b = auxcap_backend_find("intel_bts");

	assert_non_null(b);
	return b;
}

static void *dec_new(const struct auxcap_decode_ctx *ctx, const void *buf, size_t len)
{
	void *dec = NULL;

	assert_int_equal(bts()->decoder_new(ctx, buf, len, &dec), 0);
	assert_non_null(dec);
	return dec;
}

static void test_events(void **state)
{
	struct auxcap_decode_ctx ctx = { .sz = sizeof(ctx), .cpu = -1 };
	struct rec_buf b = { .len = 0 };
	struct auxcap_trace_event ev;
	void *dec;

	(void)state;
	add_rec(&b, 0, 0x401000, 0);		   /* trace begin at 0x401000 */
	add_rec(&b, 0x401010, 0x401100, 0x10);	   /* predicted branch */
	add_rec(&b, 0, 0, 0);			   /* padding */
	add_rec(&b, 0x401120, 0x401000, 0);	   /* not predicted */
	add_rec(&b, 0x401234, 0, 0x10);		   /* trace end after 0x401234 */
	b.len += 10;				   /* a partial record */

	dec = dec_new(&ctx, b.buf, b.len);
	assert_int_equal(bts()->decoder_next(dec, &ev), 1);
	assert_int_equal(ev.kind, AUXCAP_TRACE_ENABLE);
	assert_int_equal(ev.ip, 0x401000);
	assert_int_equal(ev.offset, 0);

	assert_int_equal(bts()->decoder_next(dec, &ev), 1);
	assert_int_equal(ev.kind, AUXCAP_TRACE_BRANCH);
	assert_int_equal(ev.ip, 0x401010);
	assert_int_equal(ev.to, 0x401100);
	assert_int_equal(ev.offset, 24);
	assert_true(ev.flags & AUXCAP_TRACE_F_PREDICTED);
	assert_int_equal(ev.branch, AUXCAP_BR_NONE);

	assert_int_equal(bts()->decoder_next(dec, &ev), 1);
	assert_int_equal(ev.kind, AUXCAP_TRACE_BRANCH);
	assert_int_equal(ev.offset, 3 * 24); /* the padding record is skipped */
	assert_int_equal(ev.ip, 0x401120);
	assert_false(ev.flags & AUXCAP_TRACE_F_PREDICTED);

	assert_int_equal(bts()->decoder_next(dec, &ev), 1);
	assert_int_equal(ev.kind, AUXCAP_TRACE_DISABLE);
	assert_int_equal(ev.ip, 0x401234);
	assert_int_equal(ev.offset, 4 * 24);

	assert_int_equal(bts()->decoder_next(dec, &ev), 1);
	assert_int_equal(ev.kind, AUXCAP_TRACE_GAP);
	assert_int_equal(ev.offset, 5 * 24);
	assert_int_equal(ev.err, -ENODATA);
	assert_non_null(ev.what);

	assert_int_equal(bts()->decoder_next(dec, &ev), 0);
	assert_int_equal(bts()->decoder_next(dec, &ev), 0);
	bts()->decoder_free(dec);
	bts()->decoder_free(NULL);
}

/* Two snapshots of one buffer: the second repeats the last 3 records of the first. */
static void test_overlap(void **state)
{
	uint64_t info[AUXCAP_BTS_INFO_NR] = { [AUXCAP_BTS_INFO_PMU_TYPE] = 7,
					      [AUXCAP_BTS_INFO_TIME_MULT] = 1,
					      [AUXCAP_BTS_INFO_SNAPSHOT_MODE] = 1 };
	struct auxcap_decode_ctx ctx = {
		.sz = sizeof(ctx), .auxtrace_type = 2, .info = info, .nr_info = 6, .cpu = -1
	};
	struct rec_buf a = { .len = 0 }, b = { .len = 0 };
	struct auxcap_trace_event ev;
	void *dec;
	int n = 0;

	(void)state;
	for (uint64_t i = 0; i < 5; i++)
		add_rec(&a, 0x1000 + i, 0x2000 + i, 0x10);
	for (uint64_t i = 2; i < 8; i++)
		add_rec(&b, 0x1000 + i, 0x2000 + i, 0x10);
	ctx.snapshot_prev = a.buf;
	ctx.snapshot_prev_len = a.len;
	dec = dec_new(&ctx, b.buf, b.len);
	while (bts()->decoder_next(dec, &ev) == 1) {
		assert_int_equal(ev.kind, AUXCAP_TRACE_BRANCH);
		assert_int_equal(ev.ip, 0x1005 + n);
		/* Offsets stay those of the buffer as recorded. */
		assert_int_equal(ev.offset, (3 + n) * 24);
		n++;
	}
	assert_int_equal(n, 3);
	bts()->decoder_free(dec);

	/* Full-trace files (SNAPSHOT_MODE 0) are never trimmed. */
	info[AUXCAP_BTS_INFO_SNAPSHOT_MODE] = 0;
	dec = dec_new(&ctx, b.buf, b.len);
	for (n = 0; bts()->decoder_next(dec, &ev) == 1; n++)
		assert_int_equal(ev.ip, 0x1002 + n);
	assert_int_equal(n, 6);
	bts()->decoder_free(dec);

	/* perf's files with five words (no SNAPSHOT_MODE) decode as full trace. */
	ctx.nr_info = 5;
	dec = dec_new(&ctx, b.buf, b.len);
	for (n = 0; bts()->decoder_next(dec, &ev) == 1; n++)
		;
	assert_int_equal(n, 6);
	bts()->decoder_free(dec);
}

static void test_bad_info(void **state)
{
	uint64_t info[3] = { 7, 0, 1 };
	char err[256] = "";
	struct auxcap_decode_ctx ctx = { .sz = sizeof(ctx), .info = info, .nr_info = 3,
					 .errbuf = err, .errlen = sizeof(err) };
	void *dec = (void *)&ctx;

	(void)state;
	assert_int_equal(bts()->decoder_new(&ctx, NULL, 0, &dec), -EINVAL);
	assert_ptr_equal(dec, &ctx); /* untouched on failure */
	assert_non_null(strstr(err, "3 words"));
	ctx.sz = 8;
	ctx.nr_info = 6;
	assert_int_equal(bts()->decoder_new(&ctx, NULL, 0, &dec), -EINVAL);
}

struct lines {
	char text[16][160];
	int n;
	int stop_at; /* return -EPIPE on this line (1-based), 0: never */
};

static int collect(void *arg, const char *line)
{
	struct lines *l = arg;

	if (l->n < 16)
		snprintf(l->text[l->n], sizeof(l->text[0]), "%s", line);
	l->n++;
	return l->stop_at && l->n == l->stop_at ? -EPIPE : 0;
}

static void test_dump(void **state)
{
	struct auxcap_decode_ctx ctx = { .sz = sizeof(ctx), .cpu = -1 };
	struct rec_buf b = { .len = 0 };
	struct lines l = { .n = 0 };

	(void)state;
	add_rec(&b, 0x401010, 0x401100, 0x10);
	add_rec(&b, 0x401120, 0x401000, 0);
	b.len += 4;
	assert_int_equal(bts()->dump(&ctx, b.buf, b.len, collect, &l), 1); /* 1 bad spot */
	/* perf report -D's lines: header, one per 24 bytes, "Bad record!" for the tail. */
	assert_int_equal(l.n, 5);
	assert_string_equal(l.text[0], ". ... Intel BTS data: size 52 bytes");
	assert_string_equal(l.text[1], ".  00000000:  10 10 40 00 00 00 00 00 00 11 40 00 00 00 00 00 "
				       "10 00 00 00 00 00 00 00 401010 -> 401100 pred");
	assert_non_null(strstr(l.text[2], "401120 -> 401000 miss"));
	assert_non_null(strstr(l.text[3], "Bad record!"));
	assert_non_null(strstr(l.text[4], "2 branches"));

	/* The callback stops the dump with its error. */
	memset(&l, 0, sizeof(l));
	l.stop_at = 2;
	assert_int_equal(bts()->dump(&ctx, b.buf, b.len, collect, &l), -EPIPE);
	assert_int_equal(l.n, 2);
}

static struct auxcap_record_ctx rec_ctx(char *err, size_t errlen)
{
	struct auxcap_record_ctx ctx = {
		.sz = sizeof(ctx), .aux_pages = 64, .nr_cpus = 4, .errbuf = err, .errlen = errlen
	};

	return ctx;
}

static void test_recording_options(void **state)
{
	char err[512] = "";
	struct auxcap_record_ctx ctx = rec_ctx(err, sizeof(err));
	struct auxcap_attr a;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	(void)state;
	memset(&a, 0, sizeof(a));
	a.attr.type = 7;
	assert_int_equal(bts()->recording_options(&ctx, &a), 0);
	assert_int_equal(a.attr.sample_period, 1); /* perf: every branch */
	assert_int_equal(a.attr.freq, 0);
	assert_true(a.attr.sample_type & PERF_SAMPLE_IP);
	assert_int_equal(bts()->flags & AUXCAP_BACKEND_F_PER_THREAD, AUXCAP_BACKEND_F_PER_THREAD);
	assert_int_equal(bts()->alignment, 24);

	ctx.per_cpu = true;
	assert_int_equal(bts()->recording_options(&ctx, &a), -EINVAL);
	assert_non_null(strstr(err, "per thread"));
	ctx.per_cpu = false;

	a.attr.freq = 1;
	a.attr.sample_freq = 1000;
	assert_int_equal(bts()->recording_options(&ctx, &a), -EINVAL);
	assert_non_null(strstr(err, "freq="));
	a.attr.freq = 0;
	a.attr.sample_period = 100;
	assert_int_equal(bts()->recording_options(&ctx, &a), -EINVAL);
	a.attr.sample_period = 0;

	/* AUX sizes: a power of two, at least 8 KiB (4 KiB in snapshot mode). */
	ctx.aux_pages = 8192 / page / 2;
	if (ctx.aux_pages) {
		assert_int_equal(bts()->recording_options(&ctx, &a), -EINVAL);
		assert_non_null(strstr(err, "at least 8 KiB"));
		ctx.snapshot = true;
		assert_int_equal(bts()->recording_options(&ctx, &a), 0);
	}
	ctx.snapshot = true;
	ctx.aux_pages = 16;
	ctx.snapshot_size = 16 * page / 2;
	assert_int_equal(bts()->recording_options(&ctx, &a), -EINVAL);
	assert_non_null(strstr(err, "whole AUX buffer"));
	ctx.snapshot_size = 16 * page;
	assert_int_equal(bts()->recording_options(&ctx, &a), 0);
	ctx.snapshot_size = 0;
	ctx.aux_pages = (8u << 20) / page;
	assert_int_equal(bts()->recording_options(&ctx, &a), -EINVAL);
	assert_non_null(strstr(err, "4 MiB"));
	ctx.aux_pages = (4u << 20) / page;
	assert_int_equal(bts()->recording_options(&ctx, &a), 0);
}

static void test_info(void **state)
{
	char err[256];
	struct auxcap_record_ctx ctx = rec_ctx(err, sizeof(err));
	struct auxcap_perf_time_conv tc = { .time_shift = 10, .time_mult = 511, .time_zero = 77,
					    .cap_user_time_zero = true };
	struct auxcap_attr a;
	uint64_t w[AUXCAP_BTS_INFO_NR];

	(void)state;
	memset(&a, 0, sizeof(a));
	a.attr.type = 0x7a550001;
	assert_int_equal(bts()->auxtrace_type, 2);
	assert_int_equal(bts()->info_size(&ctx, &a), 6);
	/* No time conversion: the identity, not the kernel's. */
	assert_int_equal(bts()->info_fill(&ctx, &a, w, 6), 0);
	assert_int_equal(w[0], 0x7a550001);
	assert_int_equal(w[1], 0);
	assert_int_equal(w[2], 1);
	assert_int_equal(w[3], 0);
	assert_int_equal(w[4], 0);
	assert_int_equal(w[5], 0);
	ctx.time_conv = &tc;
	ctx.snapshot = true;
	assert_int_equal(bts()->info_fill(&ctx, &a, w, 6), 0);
	assert_int_equal(w[1], 10);
	assert_int_equal(w[2], 511);
	assert_int_equal(w[3], 77);
	assert_int_equal(w[4], 1);
	/* auxcap's session trims snapshot overlap when it records: nothing to trim again. */
	assert_int_equal(w[5], 0);
	assert_int_equal(bts()->info_fill(&ctx, &a, w, 5), -EINVAL);
}

/* A stream cut off the 24-byte grid: every record once, at its stream position. */
static void test_pieces(void **state)
{
	static unsigned char buf[24 * 200 + 10];
	const size_t cuts[] = { 5, 24, 100, 101, 2000, 24 * 200 + 2 };
	struct auxcap_trace_piece prev[8];
	struct auxcap_trace_event ev;
	size_t start = 0, n = 0;

	(void)state;
	for (unsigned int i = 0; i < 200; i++) {
		put_u64(buf + 24 * i, 0x1000 + i);
		put_u64(buf + 24 * i + 8, 0x2000 + i);
		put_u64(buf + 24 * i + 16, 0x10);
	}
	for (size_t i = 0; i <= 6; i++) {
		size_t end = i < 6 ? cuts[i] : sizeof(buf);
		struct auxcap_decode_ctx ctx = { .sz = sizeof(ctx), .cpu = -1 };
		void *dec = NULL;

		ctx.stream_offset = start;
		ctx.prev = i ? prev : NULL;
		ctx.nr_prev = i;
		ctx.more = i < 6;
		dec = dec_new(&ctx, buf + start, end - start);
		while (bts()->decoder_next(dec, &ev) == 1) {
			if (n < 200) {
				assert_int_equal(ev.kind, AUXCAP_TRACE_BRANCH);
				assert_int_equal(ev.ip, 0x1000 + n);
				assert_int_equal(ev.offset, 24 * n);
			} else {
				/* The stream really ends inside a record. */
				assert_int_equal(ev.kind, AUXCAP_TRACE_GAP);
				assert_int_equal(ev.offset, 24 * 200);
				assert_int_equal(i, 6);
			}
			n++;
		}
		bts()->decoder_free(dec);
		prev[i] = (struct auxcap_trace_piece){ buf + start, end - start };
		start = end;
	}
	assert_int_equal(n, 201);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events),	     cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_bad_info),     cmocka_unit_test(test_dump),
		cmocka_unit_test(test_recording_options), cmocka_unit_test(test_info),
		cmocka_unit_test(test_pieces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
