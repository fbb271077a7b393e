/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the data ring reader on synthetic memory. */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ring.h"
#include "util.h"

static uint64_t payload0(const struct perf_event_header *h)
{
	uint64_t v;

	memcpy(&v, (const unsigned char *)h + 8, 8);
	return v;
}

static void test_ring_empty_returns_zero(void **state)
{
	struct fake_ring fr;
	struct auxcap_ring ring;
	const struct perf_event_header *h;

	(void)state;
	fake_ring_init(&fr, 4096);
	assert_int_equal(auxcap_ring_init(&ring, fr.base, fr.map_len, 4096, 0), 0);
	assert_int_equal(auxcap_ring_begin(&ring), 0);
	assert_int_equal(auxcap_ring_next(&ring, &h), 0);
	auxcap_ring_end(&ring);
	auxcap_ring_fini(&ring);
	fake_ring_fini(&fr);
}

static void test_ring_records_in_order_and_tail_published(void **state)
{
	struct fake_ring fr;
	struct auxcap_ring ring;
	const struct perf_event_header *h;
	unsigned char rec[64];
	struct perf_event_mmap_page *pc;

	(void)state;
	fake_ring_init(&fr, 4096);
	pc = fr.base;
	for (uint64_t i = 0; i < 10; i++) {
		fake_record(rec, PERF_RECORD_SAMPLE, 32, i * 100);
		fake_ring_put(&fr, rec, 32);
	}
	fake_ring_publish(&fr);
	assert_int_equal(auxcap_ring_init(&ring, fr.base, fr.map_len, 4096, 0), 0);
	assert_int_equal(auxcap_ring_begin(&ring), 320);
	for (uint64_t i = 0; i < 10; i++) {
		assert_int_equal(auxcap_ring_next(&ring, &h), 1);
		assert_int_equal(h->type, PERF_RECORD_SAMPLE);
		assert_int_equal(payload0(h), i * 100);
	}
	assert_int_equal(auxcap_ring_next(&ring, &h), 0);
	assert_int_equal(pc->data_tail, 0); /* not before end() */
	auxcap_ring_end(&ring);
	assert_int_equal(pc->data_tail, 320);
	assert_int_equal(ring.stats.records, 10);
	auxcap_ring_fini(&ring);
	fake_ring_fini(&fr);
}

static void test_ring_record_straddles_end_is_copied(void **state)
{
	struct fake_ring fr;
	struct auxcap_ring ring;
	const struct perf_event_header *h;
	unsigned char rec[256];
	uint64_t v;

	(void)state;
	fake_ring_init(&fr, 4096);
	/* Consumer and producer both start 24 bytes before the end. */
	fr.head = 4096 - 24;
	((struct perf_event_mmap_page *)fr.base)->data_tail = fr.head;
	fake_record(rec, PERF_RECORD_MMAP, 200, 7);
	fake_ring_put(&fr, rec, 200);
	fake_record(rec, PERF_RECORD_COMM, 16, 9);
	fake_ring_put(&fr, rec, 16);
	fake_ring_publish(&fr);

	assert_int_equal(auxcap_ring_init(&ring, fr.base, fr.map_len, 4096, 0), 0);
	assert_int_equal(auxcap_ring_begin(&ring), 216);
	assert_int_equal(auxcap_ring_next(&ring, &h), 1);
	assert_int_equal(h->type, PERF_RECORD_MMAP);
	assert_int_equal(h->size, 200);
	for (size_t i = 8; i < 200; i += 8) {
		memcpy(&v, (const unsigned char *)h + i, 8);
		assert_int_equal(v, 7 + (i - 8) / 8);
	}
	assert_int_equal(ring.stats.wraps, 1);
	assert_int_equal(auxcap_ring_next(&ring, &h), 1);
	assert_int_equal(h->type, PERF_RECORD_COMM);
	assert_int_equal(payload0(h), 9);
	assert_int_equal(auxcap_ring_next(&ring, &h), 0);
	auxcap_ring_end(&ring);
	assert_int_equal(((struct perf_event_mmap_page *)fr.base)->data_tail, 4096 - 24 + 216);
	auxcap_ring_fini(&ring);
	fake_ring_fini(&fr);
}

static void test_ring_many_wraps_every_record_once(void **state)
{
	struct fake_ring fr;
	struct auxcap_ring ring;
	const struct perf_event_header *h;
	unsigned char rec[512];
	uint64_t seq_out = 0, seq_in = 0;

	(void)state;
	fake_ring_init(&fr, 4096);
	assert_int_equal(auxcap_ring_init(&ring, fr.base, fr.map_len, 4096, 0), 0);
	for (int round = 0; round < 500; round++) {
		/* Produce what fits, with sizes that do not divide the ring. */
		for (;;) {
			uint16_t size = (uint16_t)(16 + 8 * ((seq_out * 7) % 40));
			struct perf_event_mmap_page *pc = fr.base;

			if (fr.head + size - pc->data_tail > fr.data_size - 8)
				break;
			fake_record(rec, PERF_RECORD_SAMPLE, size, seq_out++);
			fake_ring_put(&fr, rec, size);
		}
		fake_ring_publish(&fr);
		assert_true(auxcap_ring_begin(&ring) > 0);
		while (auxcap_ring_next(&ring, &h) == 1) {
			assert_int_equal(payload0(h), seq_in);
			assert_int_equal(h->size, 16 + 8 * ((seq_in * 7) % 40));
			seq_in++;
		}
		auxcap_ring_end(&ring);
	}
	assert_int_equal(seq_in, seq_out);
	assert_true(ring.stats.wraps > 10);
	assert_int_equal(ring.stats.corrupt, 0);
	auxcap_ring_fini(&ring);
	fake_ring_fini(&fr);
}

static void test_ring_partial_header_at_end_is_corruption(void **state)
{
	struct fake_ring fr;
	struct auxcap_ring ring;
	const struct perf_event_header *h;
	unsigned char rec[32];

	(void)state;
	fake_ring_init(&fr, 4096);
	fake_record(rec, PERF_RECORD_SAMPLE, 32, 1);
	fake_ring_put(&fr, rec, 32);
	fake_ring_put(&fr, rec, 4); /* half a header published */
	fake_ring_publish(&fr);
	assert_int_equal(auxcap_ring_init(&ring, fr.base, fr.map_len, 4096, 0), 0);
	assert_int_equal(auxcap_ring_begin(&ring), 36);
	assert_int_equal(auxcap_ring_next(&ring, &h), 1);
	assert_int_equal(auxcap_ring_next(&ring, &h), -EBADMSG);
	assert_int_equal(auxcap_ring_next(&ring, &h), 0);
	assert_int_equal(ring.stats.corrupt, 1);
	assert_int_equal(ring.stats.corrupt_bytes, 4);
	auxcap_ring_end(&ring);
	assert_int_equal(((struct perf_event_mmap_page *)fr.base)->data_tail, 36);
	auxcap_ring_fini(&ring);
	fake_ring_fini(&fr);
}

static void check_garbage(uint16_t size, uint64_t garbage_len)
{
	struct fake_ring fr;
	struct auxcap_ring ring;
	const struct perf_event_header *h;
	unsigned char rec[64];
	int n = 0, r;

	fake_ring_init(&fr, 4096);
	fake_record(rec, PERF_RECORD_SAMPLE, 32, 1);
	fake_ring_put(&fr, rec, 32);
	memset(rec, 0, sizeof(rec));
	{
		struct perf_event_header g = { .type = PERF_RECORD_SAMPLE, .size = size };

		memcpy(rec, &g, sizeof(g));
	}
	fake_ring_put(&fr, rec, garbage_len);
	fake_ring_publish(&fr);
	assert_int_equal(auxcap_ring_init(&ring, fr.base, fr.map_len, 4096, 0), 0);
	assert_true(auxcap_ring_begin(&ring) > 0);
	while ((r = auxcap_ring_next(&ring, &h)) != 0) {
		assert_true(++n < 10); /* never loops */
		if (r < 0)
			assert_int_equal(r, -EBADMSG);
	}
	assert_int_equal(ring.stats.records, 1);
	assert_int_equal(ring.stats.corrupt, 1);
	assert_int_equal(ring.stats.corrupt_bytes, garbage_len);
	auxcap_ring_end(&ring);
	auxcap_ring_fini(&ring);
	fake_ring_fini(&fr);
}

static void test_ring_zero_size_header_is_corruption(void **state)
{
	(void)state;
	check_garbage(0, 16);
}

static void test_ring_garbage_headers_are_corruption(void **state)
{
	(void)state;
	check_garbage(4, 16);    /* smaller than a header */
	check_garbage(13, 16);   /* not a multiple of 8 */
	check_garbage(4000, 64); /* larger than what was published */
}

static void test_ring_lost_records_are_counted(void **state)
{
	struct fake_ring fr;
	struct auxcap_ring ring;
	const struct perf_event_header *h;
	unsigned char rec[40];
	uint64_t lost = 1234, id = 5;

	(void)state;
	fake_ring_init(&fr, 4096);
	fake_record(rec, PERF_RECORD_LOST, 24, 0);
	memcpy(rec + 8, &id, 8);
	memcpy(rec + 16, &lost, 8);
	fake_ring_put(&fr, rec, 24);
	fake_ring_put(&fr, rec, 24);
	fake_record(rec, PERF_RECORD_LOST_SAMPLES, 16, 77);
	fake_ring_put(&fr, rec, 16);
	fake_ring_publish(&fr);
	assert_int_equal(auxcap_ring_init(&ring, fr.base, fr.map_len, 4096, 0), 0);
	assert_true(auxcap_ring_begin(&ring) > 0);
	while (auxcap_ring_next(&ring, &h) == 1)
		;
	assert_int_equal(ring.stats.lost_records, 2);
	assert_int_equal(ring.stats.lost, 2468);
	assert_int_equal(ring.stats.lost_samples, 77);
	auxcap_ring_fini(&ring);
	fake_ring_fini(&fr);
}

/* A write_backward ring: records are placed at decreasing positions from head 0. */
static void put_backward(struct fake_ring *fr, const void *rec, size_t len)
{
	fr->head -= len;
	{
		uint64_t save = fr->head;

		fake_ring_put(fr, rec, len);
		fr->head = save;
	}
}

static void test_ring_backward_newest_first_stops_at_zero(void **state)
{
	struct fake_ring fr;
	struct auxcap_ring ring;
	const struct perf_event_header *h;
	unsigned char rec[64];
	uint64_t expect = 4;

	(void)state;
	fake_ring_init(&fr, 4096);
	for (uint64_t i = 0; i < 5; i++) {
		fake_record(rec, PERF_RECORD_SAMPLE, 48, i);
		put_backward(&fr, rec, 48);
	}
	fake_ring_publish(&fr);
	assert_int_equal(auxcap_ring_init(&ring, fr.base, fr.map_len, 4096,
					  AUXCAP_RING_OVERWRITE | AUXCAP_RING_BACKWARD),
			 0);
	assert_int_equal(auxcap_ring_backward_begin(&ring), 4096);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(auxcap_ring_next(&ring, &h), 1);
		assert_int_equal(payload0(h), expect--);
	}
	assert_int_equal(auxcap_ring_next(&ring, &h), 0); /* zero header: never written */
	auxcap_ring_end(&ring);
	assert_int_equal(((struct perf_event_mmap_page *)fr.base)->data_tail, 0);
	auxcap_ring_fini(&ring);
	fake_ring_fini(&fr);
}

static void test_ring_backward_after_wrap_stops_before_overwritten(void **state)
{
	struct fake_ring fr;
	struct auxcap_ring ring;
	const struct perf_event_header *h;
	unsigned char rec[64];
	uint64_t n = 0, i;

	(void)state;
	fake_ring_init(&fr, 4096);
	/* 1000 records of 40 bytes: the ring holds the newest 102 whole ones. */
	for (i = 0; i < 1000; i++) {
		fake_record(rec, PERF_RECORD_SAMPLE, 40, i);
		put_backward(&fr, rec, 40);
	}
	fake_ring_publish(&fr);
	assert_int_equal(auxcap_ring_init(&ring, fr.base, fr.map_len, 4096,
					  AUXCAP_RING_OVERWRITE | AUXCAP_RING_BACKWARD),
			 0);
	auxcap_ring_backward_begin(&ring);
	while (auxcap_ring_next(&ring, &h) == 1) {
		assert_int_equal(payload0(h), 999 - n);
		n++;
	}
	assert_int_equal(n, 4096 / 40);
	assert_int_equal(ring.stats.corrupt, 0);
	auxcap_ring_fini(&ring);
	fake_ring_fini(&fr);
}

static void test_ring_init_rejects_bad_geometry(void **state)
{
	struct fake_ring fr;
	struct auxcap_ring ring;
	struct perf_event_mmap_page *pc;

	(void)state;
	fake_ring_init(&fr, 4096);
	pc = fr.base;
	pc->data_size = 3 * 4096; /* not a power of two */
	assert_int_equal(auxcap_ring_init(&ring, fr.base, fr.map_len, 4096, 0), -EINVAL);
	pc->data_size = 8192; /* larger than the mapping */
	assert_int_equal(auxcap_ring_init(&ring, fr.base, fr.map_len, 4096, 0), -EINVAL);
	fake_ring_fini(&fr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_empty_returns_zero),
		cmocka_unit_test(test_ring_records_in_order_and_tail_published),
		cmocka_unit_test(test_ring_record_straddles_end_is_copied),
		cmocka_unit_test(test_ring_many_wraps_every_record_once),
		cmocka_unit_test(test_ring_partial_header_at_end_is_corruption),
		cmocka_unit_test(test_ring_zero_size_header_is_corruption),
		cmocka_unit_test(test_ring_garbage_headers_are_corruption),
		cmocka_unit_test(test_ring_lost_records_are_counted),
		cmocka_unit_test(test_ring_backward_newest_first_stops_at_zero),
		cmocka_unit_test(test_ring_backward_after_wrap_stops_before_overwritten),
		cmocka_unit_test(test_ring_init_rejects_bad_geometry),
	};

	return cmocka_run_group_tests_name("core/ring", tests, NULL, NULL);
}
