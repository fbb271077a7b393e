/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of auxcap_record_parse() for PERF_RECORD_SAMPLE: the fast path for samples of
 * fixed-size fields only (decoded straight into the caller's struct) must give the same
 * result as the general path and keep its contract (absent fields zero, @ret untouched on
 * error).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/perf_event.h>

#include <cmocka.h>

#include "auxcap/record.h"

#define ALL_FIXED                                                                       \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |  \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |               \
	 PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |         \
	 PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE)

/* A SAMPLE with every ALL_FIXED field, in output order, values 1000 + field index. */
static size_t build_all_fixed(unsigned char *buf, uint16_t extra)
{
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 0 };
	uint64_t v[16];
	uint32_t pt[2] = { 11, 12 }, cr[2] = { 3, 0 };

	for (int i = 0; i < 16; i++)
		v[i] = 1000 + (uint64_t)i;
	memcpy(&v[2], pt, 8); /* TID */
	memcpy(&v[7], cr, 8); /* CPU */
	h.size = (uint16_t)(8 + sizeof(v) + extra);
	memcpy(buf, &h, 8);
	memcpy(buf + 8, v, sizeof(v));
	memset(buf + 8 + sizeof(v), 0, extra);
	return h.size;
}

static void check_all_fixed(const struct auxcap_record *rec)
{
	const struct auxcap_sample *s = &rec->u.sample;

	assert_int_equal(rec->type, PERF_RECORD_SAMPLE);
	assert_int_equal(rec->misc, PERF_RECORD_MISC_USER);
	assert_false(rec->has_sample_id);
	assert_int_equal(s->id, 1005); /* ID comes after IDENTIFIER and wins */
	assert_int_equal(s->ip, 1001);
	assert_int_equal(s->pid, 11);
	assert_int_equal(s->tid, 12);
	assert_int_equal(s->time, 1003);
	assert_int_equal(s->addr, 1004);
	assert_int_equal(s->stream_id, 1006);
	assert_int_equal(s->cpu, 3);
	assert_int_equal(s->period, 1008);
	assert_int_equal(s->weight, 1009);
	assert_int_equal(s->data_src, 1010);
	assert_int_equal(s->transaction, 1011);
	assert_int_equal(s->phys_addr, 1012);
	assert_int_equal(s->cgroup, 1013);
	assert_int_equal(s->data_page_size, 1014);
	assert_int_equal(s->code_page_size, 1015);
	/* Variable parts absent: zero even if @rec held garbage before. */
	assert_null(s->read.data);
	assert_int_equal(s->callchain.nr, 0);
	assert_null(s->raw.data);
	assert_int_equal(s->branch_stack.nr, 0);
	assert_int_equal(s->regs_user.nr, 0);
	assert_int_equal(s->stack_user.size, 0);
	assert_null(s->aux.data);
	assert_int_equal(rec->sid.id, 0);
}

static void test_fixed_sample_fields(void **state)
{
	struct auxcap_sample_layout l = { ALL_FIXED, 0, 0, 0, 0, true };
	unsigned char buf[256];
	struct auxcap_record rec;
	size_t n;

	(void)state;
	n = build_all_fixed(buf, 0);
	memset(&rec, 0xcd, sizeof(rec));
	assert_int_equal(auxcap_record_parse(&l, buf, n, &rec), 0);
	check_all_fixed(&rec);
	assert_ptr_equal(rec.data, buf);
	assert_int_equal(rec.size, n);
	/* Trailing padding in the record is allowed. */
	n = build_all_fixed(buf, 16);
	memset(&rec, 0xcd, sizeof(rec));
	assert_int_equal(auxcap_record_parse(&l, buf, n, &rec), 0);
	check_all_fixed(&rec);
}

static void test_fixed_sample_too_short_leaves_ret(void **state)
{
	struct auxcap_sample_layout l = { ALL_FIXED, 0, 0, 0, 0, true };
	struct perf_event_header h;
	unsigned char buf[256];
	struct auxcap_record rec, poison;

	(void)state;
	build_all_fixed(buf, 0);
	memcpy(&h, buf, 8);
	h.size -= 8; /* one field short */
	memcpy(buf, &h, 8);
	memset(&rec, 0xcd, sizeof(rec));
	memcpy(&poison, &rec, sizeof(rec));
	assert_int_equal(auxcap_record_parse(&l, buf, h.size, &rec), -EBADMSG);
	assert_memory_equal(&rec, &poison, sizeof(rec));
}

static void test_fixed_and_general_paths_agree(void **state)
{
	/* The same leading fields decoded with and without a variable-size field after them. */
	struct auxcap_sample_layout fixed = {
		PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME, 0, 0, 0, 0, true
	};
	struct auxcap_sample_layout raw = fixed;
	unsigned char a[64], b[64];
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 32 };
	uint64_t v[3] = { 0x1234, 77ULL << 32 | 66, 999 };
	uint32_t raw_size = 4;
	struct auxcap_record ra, rb;

	(void)state;
	raw.sample_type |= PERF_SAMPLE_RAW;
	memcpy(a, &h, 8);
	memcpy(a + 8, v, sizeof(v));
	h.size = 40;
	memcpy(b, &h, 8);
	memcpy(b + 8, v, sizeof(v));
	memcpy(b + 32, &raw_size, 4);
	memset(b + 36, 0xee, 4);
	memset(&ra, 0xcd, sizeof(ra));
	memset(&rb, 0xab, sizeof(rb));
	assert_int_equal(auxcap_record_parse(&fixed, a, 32, &ra), 0);
	assert_int_equal(auxcap_record_parse(&raw, b, 40, &rb), 0);
	assert_int_equal(ra.u.sample.ip, rb.u.sample.ip);
	assert_int_equal(ra.u.sample.pid, 66);
	assert_int_equal(ra.u.sample.tid, rb.u.sample.tid);
	assert_int_equal(ra.u.sample.time, rb.u.sample.time);
	assert_int_equal(rb.u.sample.raw.size, 4);
	assert_null(ra.u.sample.raw.data);
	assert_int_equal(ra.u.sample.period, rb.u.sample.period);
	assert_int_equal(ra.u.sample.cpu, 0);
	assert_int_equal(rb.u.sample.cpu, 0);
}

/* auxcap_sample_callchain(): context markers say whose the frames after them are, and are no
 * frames themselves; the first frame of a context is the interrupted IP, the others return
 * addresses; a guest's frames and entries before any marker are left out. */
static void test_sample_callchain(void **state)
{
	const uint64_t K = (uint64_t)-128, U = (uint64_t)-512, GUEST = (uint64_t)-2048;
	uint64_t ips[] = { 0x1111, K, 0xffffffff81000010, 0xffffffff81000020, U, 0x401000,
			   0x402000, 0x403000, GUEST, 0x9999, U, 0x404000 };
	struct auxcap_sample s = { 0 };
	struct auxcap_callchain_frame fr[8];
	size_t n;

	(void)state;
	s.callchain.nr = sizeof(ips) / sizeof(ips[0]);
	s.callchain.ips = ips;
	n = auxcap_sample_callchain(&s, fr, 8);
	assert_int_equal(n, 6);
	assert_true(fr[0].ip == 0xffffffff81000010 && fr[0].kernel && !fr[0].ret);
	assert_true(fr[1].ip == 0xffffffff81000020 && fr[1].kernel && fr[1].ret);
	assert_true(fr[2].ip == 0x401000 && !fr[2].kernel && !fr[2].ret);
	assert_true(fr[3].ip == 0x402000 && !fr[3].kernel && fr[3].ret);
	assert_true(fr[4].ip == 0x403000 && fr[4].ret);
	assert_true(fr[5].ip == 0x404000 && !fr[5].kernel && !fr[5].ret);
	/* where a function is looked up: before a return address, at an interrupted IP */
	assert_true(auxcap_callchain_frame_lookup(&fr[3]) == 0x401fff);
	assert_true(auxcap_callchain_frame_lookup(&fr[2]) == 0x401000);

	/* too small a buffer: the count of all of them, the first that fit */
	memset(fr, 0, sizeof(fr));
	n = auxcap_sample_callchain(&s, fr, 2);
	assert_int_equal(n, 6);
	assert_true(fr[1].ip == 0xffffffff81000020 && fr[2].ip == 0);

	/* no callchain */
	s.callchain.nr = 0;
	assert_int_equal(auxcap_sample_callchain(&s, fr, 8), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed_sample_fields),
		cmocka_unit_test(test_fixed_sample_too_short_leaves_ret),
		cmocka_unit_test(test_fixed_and_general_paths_agree),
		cmocka_unit_test(test_sample_callchain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
