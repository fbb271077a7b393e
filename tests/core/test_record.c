/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the kernel record parser on hand-built records. */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "auxcap/record.h"

/* A record builder: header then u64/u32 fields appended in order. */
struct rb {
	unsigned char buf[1024];
	size_t len;
};

static void rb_start(struct rb *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };

	memset(b, 0, sizeof(*b));
	memcpy(b->buf, &h, sizeof(h));
	b->len = sizeof(h);
}

static void rb_u64(struct rb *b, uint64_t v)
{
	memcpy(b->buf + b->len, &v, 8);
	b->len += 8;
}

static void rb_u32(struct rb *b, uint32_t v)
{
	memcpy(b->buf + b->len, &v, 4);
	b->len += 4;
}

static void rb_bytes(struct rb *b, const void *p, size_t n)
{
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

/* Pad a string to 8 bytes (NUL included). */
static void rb_str(struct rb *b, const char *s)
{
	size_t n = strlen(s) + 1;

	rb_bytes(b, s, n);
	b->len = (b->len + 7) & ~(size_t)7;
}

static void rb_end(struct rb *b)
{
	uint16_t size = (uint16_t)b->len;

	memcpy(b->buf + 6, &size, 2);
}

static const uint64_t trailer_bits = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
				     PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
				     PERF_SAMPLE_IDENTIFIER;

static void rb_trailer(struct rb *b)
{
	rb_u32(b, 100); /* pid */
	rb_u32(b, 101); /* tid */
	rb_u64(b, 5000); /* time */
	rb_u64(b, 42);   /* id */
	rb_u64(b, 43);   /* stream_id */
	rb_u32(b, 3);    /* cpu */
	rb_u32(b, 0);
	rb_u64(b, 42); /* identifier */
}

static void check_trailer(const struct auxcap_record *rec)
{
	assert_true(rec->has_sample_id);
	assert_int_equal(rec->sid.present, trailer_bits);
	assert_int_equal(rec->sid.pid, 100);
	assert_int_equal(rec->sid.tid, 101);
	assert_int_equal(rec->sid.time, 5000);
	assert_int_equal(rec->sid.id, 42);
	assert_int_equal(rec->sid.stream_id, 43);
	assert_int_equal(rec->sid.cpu, 3);
}

static void test_record_sample_all_fields_in_output_order(void **state)
{
	struct auxcap_sample_layout l = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
			       PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |
			       PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR |
			       PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |
			       PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE |
			       PERF_SAMPLE_AUX,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_ID,
		.branch_sample_type = PERF_SAMPLE_BRANCH_HW_INDEX,
		.sample_regs_user = 0x7, /* 3 registers */
		.sample_regs_intr = 0x3, /* 2 registers */
	};
	struct auxcap_record rec;
	struct rb b;

	(void)state;
	rb_start(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rb_u64(&b, 77);           /* identifier */
	rb_u64(&b, 0x401000);     /* ip */
	rb_u32(&b, 10);           /* pid */
	rb_u32(&b, 11);           /* tid */
	rb_u64(&b, 123456789);    /* time */
	rb_u64(&b, 0xdead0000);   /* addr */
	rb_u64(&b, 77);           /* id */
	rb_u64(&b, 78);           /* stream id */
	rb_u32(&b, 2);            /* cpu */
	rb_u32(&b, 0);
	rb_u64(&b, 1000);         /* period */
	rb_u64(&b, 5);            /* read: value */
	rb_u64(&b, 6);            /*       time enabled */
	rb_u64(&b, 77);           /*       id */
	rb_u64(&b, 2);            /* callchain nr */
	rb_u64(&b, 0x1111);
	rb_u64(&b, 0x2222);
	rb_u32(&b, 12);           /* raw size */
	rb_bytes(&b, "raw-payload", 12);
	rb_u64(&b, 1);            /* branch nr */
	rb_u64(&b, 9);            /* hw_idx */
	rb_u64(&b, 0xa);          /* from */
	rb_u64(&b, 0xb);          /* to */
	rb_u64(&b, 0);            /* flags */
	rb_u64(&b, 2);            /* regs_user abi (64-bit) */
	rb_u64(&b, 1);
	rb_u64(&b, 2);
	rb_u64(&b, 3);
	rb_u64(&b, 16);           /* stack size */
	rb_u64(&b, 0x5555);
	rb_u64(&b, 0x6666);
	rb_u64(&b, 12);           /* dyn size */
	rb_u64(&b, 300);          /* weight */
	rb_u64(&b, 0x42);         /* data_src */
	rb_u64(&b, 0x7);          /* transaction */
	rb_u64(&b, 0);            /* regs_intr abi: none */
	rb_u64(&b, 0x9000);       /* phys addr */
	rb_u64(&b, 55);           /* cgroup */
	rb_u64(&b, 4096);         /* data page size */
	rb_u64(&b, 2097152);      /* code page size */
	rb_u64(&b, 8);            /* aux size */
	rb_u64(&b, 0x0102030405060708ull);
	rb_end(&b);

	assert_int_equal(auxcap_record_parse(&l, b.buf, b.len, &rec), 0);
	assert_int_equal(rec.type, PERF_RECORD_SAMPLE);
	assert_int_equal(rec.size, b.len);
	assert_int_equal(rec.u.sample.id, 77);
	assert_int_equal(rec.u.sample.ip, 0x401000);
	assert_int_equal(rec.u.sample.pid, 10);
	assert_int_equal(rec.u.sample.tid, 11);
	assert_int_equal(rec.u.sample.time, 123456789);
	assert_int_equal(rec.u.sample.addr, 0xdead0000);
	assert_int_equal(rec.u.sample.stream_id, 78);
	assert_int_equal(rec.u.sample.cpu, 2);
	assert_int_equal(rec.u.sample.period, 1000);
	assert_int_equal(rec.u.sample.read.size, 24);
	assert_int_equal(auxcap_get_u64(rec.u.sample.read.data, 1), 6);
	assert_int_equal(rec.u.sample.callchain.nr, 2);
	assert_int_equal(auxcap_get_u64(rec.u.sample.callchain.ips, 1), 0x2222);
	assert_int_equal(rec.u.sample.raw.size, 12);
	assert_memory_equal(rec.u.sample.raw.data, "raw-payload", 12);
	assert_int_equal(rec.u.sample.branch_stack.nr, 1);
	assert_int_equal(rec.u.sample.branch_stack.hw_idx, 9);
	assert_int_equal(auxcap_get_u64(rec.u.sample.branch_stack.entries, 1), 0xb);
	assert_int_equal(rec.u.sample.regs_user.abi, 2);
	assert_int_equal(rec.u.sample.regs_user.nr, 3);
	assert_int_equal(auxcap_get_u64(rec.u.sample.regs_user.regs, 2), 3);
	assert_int_equal(rec.u.sample.stack_user.size, 16);
	assert_int_equal(rec.u.sample.stack_user.dyn_size, 12);
	assert_int_equal(rec.u.sample.weight, 300);
	assert_int_equal(rec.u.sample.data_src, 0x42);
	assert_int_equal(rec.u.sample.transaction, 7);
	assert_int_equal(rec.u.sample.regs_intr.abi, 0);
	assert_int_equal(rec.u.sample.regs_intr.nr, 0);
	assert_int_equal(rec.u.sample.phys_addr, 0x9000);
	assert_int_equal(rec.u.sample.cgroup, 55);
	assert_int_equal(rec.u.sample.data_page_size, 4096);
	assert_int_equal(rec.u.sample.code_page_size, 2097152);
	assert_int_equal(rec.u.sample.aux.size, 8);
	assert_int_equal(auxcap_get_u64(rec.u.sample.aux.data, 0), 0x0102030405060708ull);
	assert_false(rec.has_sample_id);

	/* Every shorter prefix is rejected, never read past. */
	for (size_t cut = 8; cut < b.len; cut += 8) {
		uint16_t size = (uint16_t)cut;
		struct auxcap_record untouched = { .type = 0xabcd };

		memcpy(b.buf + 6, &size, 2);
		assert_int_equal(auxcap_record_parse(&l, b.buf, cut, &untouched), -EBADMSG);
		assert_int_equal(untouched.type, 0xabcd);
	}
}

static void test_record_read_group_format(void **state)
{
	struct auxcap_sample_layout l = {
		.sample_type = PERF_SAMPLE_READ,
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST,
	};
	struct auxcap_record rec;
	struct rb b;

	(void)state;
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 2); /* nr */
	for (int i = 0; i < 2; i++) {
		rb_u64(&b, 10 + (uint64_t)i); /* value */
		rb_u64(&b, 20 + (uint64_t)i); /* id */
		rb_u64(&b, 0);                /* lost */
	}
	rb_end(&b);
	assert_int_equal(auxcap_record_parse(&l, b.buf, b.len, &rec), 0);
	assert_int_equal(rec.u.sample.read.size, 8 + 2 * 24);
	/* A group count larger than the record is rejected. */
	{
		uint64_t nr = 1000;

		memcpy(b.buf + 8, &nr, 8);
		assert_int_equal(auxcap_record_parse(&l, b.buf, b.len, &rec), -EBADMSG);
	}
}

static void test_record_mmap2_both_forms_with_trailer(void **state)
{
	struct auxcap_sample_layout l = { .sample_type = trailer_bits, .sample_id_all = true };
	struct auxcap_record rec;
	unsigned char bid[24] = { 20 };
	struct rb b;

	(void)state;
	rb_start(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	rb_u32(&b, 100);
	rb_u32(&b, 101);
	rb_u64(&b, 0x400000);
	rb_u64(&b, 0x1000);
	rb_u64(&b, 0);
	rb_u32(&b, 8);
	rb_u32(&b, 1);
	rb_u64(&b, 1234);
	rb_u64(&b, 1);
	rb_u32(&b, 5);
	rb_u32(&b, 2);
	rb_str(&b, "/usr/bin/true");
	rb_trailer(&b);
	rb_end(&b);
	assert_int_equal(auxcap_record_parse(&l, b.buf, b.len, &rec), 0);
	assert_int_equal(rec.u.mmap.addr, 0x400000);
	assert_int_equal(rec.u.mmap.maj, 8);
	assert_int_equal(rec.u.mmap.ino, 1234);
	assert_int_equal(rec.u.mmap.prot, 5);
	assert_string_equal(rec.u.mmap.filename, "/usr/bin/true");
	check_trailer(&rec);

	for (int i = 0; i < 20; i++)
		bid[4 + i] = (unsigned char)(0xa0 + i);
	rb_start(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	rb_u32(&b, 100);
	rb_u32(&b, 101);
	rb_u64(&b, 0x400000);
	rb_u64(&b, 0x1000);
	rb_u64(&b, 0);
	rb_bytes(&b, bid, 24);
	rb_u32(&b, 5);
	rb_u32(&b, 2);
	rb_str(&b, "/lib/x.so");
	rb_trailer(&b);
	rb_end(&b);
	assert_int_equal(auxcap_record_parse(&l, b.buf, b.len, &rec), 0);
	assert_int_equal(rec.u.mmap.build_id_size, 20);
	assert_int_equal(rec.u.mmap.build_id[19], 0xa0 + 19);
	assert_string_equal(rec.u.mmap.filename, "/lib/x.so");
	check_trailer(&rec);
}

static void test_record_unterminated_string_rejected(void **state)
{
	struct auxcap_sample_layout l = { 0 };
	struct auxcap_record rec;
	struct rb b;

	(void)state;
	rb_start(&b, PERF_RECORD_COMM, 0);
	rb_u32(&b, 1);
	rb_u32(&b, 1);
	rb_bytes(&b, "abcdefgh", 8); /* no NUL */
	rb_end(&b);
	assert_int_equal(auxcap_record_parse(&l, b.buf, b.len, &rec), -EBADMSG);
}

static void test_record_aux_itrace_lost_switch_with_trailer(void **state)
{
	struct auxcap_sample_layout l = { .sample_type = trailer_bits, .sample_id_all = true };
	struct auxcap_record rec;
	uint64_t id;
	struct rb b;

	(void)state;
	rb_start(&b, PERF_RECORD_AUX, 0);
	rb_u64(&b, 4096);
	rb_u64(&b, 8192);
	rb_u64(&b, PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL);
	rb_trailer(&b);
	rb_end(&b);
	assert_int_equal(auxcap_record_parse(&l, b.buf, b.len, &rec), 0);
	assert_int_equal(rec.u.aux.aux_offset, 4096);
	assert_int_equal(rec.u.aux.aux_size, 8192);
	assert_int_equal(rec.u.aux.flags, PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL);
	check_trailer(&rec);
	assert_int_equal(auxcap_record_peek_id(&l, b.buf, b.len, &id), 0);
	assert_int_equal(id, 42);

	rb_start(&b, PERF_RECORD_ITRACE_START, 0);
	rb_u32(&b, 7);
	rb_u32(&b, 8);
	rb_trailer(&b);
	rb_end(&b);
	assert_int_equal(auxcap_record_parse(&l, b.buf, b.len, &rec), 0);
	assert_int_equal(rec.u.itrace_start.tid, 8);
	check_trailer(&rec);

	rb_start(&b, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT);
	rb_u32(&b, 9);
	rb_u32(&b, 10);
	rb_trailer(&b);
	rb_end(&b);
	assert_int_equal(auxcap_record_parse(&l, b.buf, b.len, &rec), 0);
	assert_int_equal(rec.u.context_switch.next_prev_tid, 10);
	check_trailer(&rec);

	/* Trailer missing: too short for the layout. */
	rb_start(&b, PERF_RECORD_LOST, 0);
	rb_u64(&b, 1);
	rb_u64(&b, 2);
	rb_end(&b);
	assert_int_equal(auxcap_record_parse(&l, b.buf, b.len, &rec), -EBADMSG);
	l.sample_id_all = false;
	assert_int_equal(auxcap_record_parse(&l, b.buf, b.len, &rec), 0);
	assert_int_equal(rec.u.lost.lost, 2);
	assert_int_equal(auxcap_record_peek_id(&l, b.buf, b.len, &id), -ENOENT);
}

static void test_record_unknown_type_keeps_trailer(void **state)
{
	struct auxcap_sample_layout l = { .sample_type = trailer_bits, .sample_id_all = true };
	struct auxcap_record rec;
	struct rb b;

	(void)state;
	rb_start(&b, 63, 0);
	rb_u64(&b, 1);
	rb_u64(&b, 2);
	rb_trailer(&b);
	rb_end(&b);
	assert_int_equal(auxcap_record_parse(&l, b.buf, b.len, &rec), 0);
	assert_int_equal(rec.type, 63);
	check_trailer(&rec);
	assert_null(auxcap_record_type_name(63));
	assert_string_equal(auxcap_record_type_name(PERF_RECORD_AUX), "AUX");
	assert_string_equal(auxcap_record_type_name(71), "AUXTRACE");
}

static void test_record_bad_headers(void **state)
{
	struct auxcap_sample_layout l = { 0 };
	struct auxcap_record rec;
	struct rb b;

	(void)state;
	assert_int_equal(auxcap_record_parse(&l, NULL, 8, &rec), -EINVAL);
	rb_start(&b, PERF_RECORD_LOST, 0);
	assert_int_equal(auxcap_record_parse(&l, b.buf, 4, &rec), -EBADMSG); /* < header */
	rb_end(&b);                                                          /* size 8 */
	assert_int_equal(auxcap_record_parse(&l, b.buf, b.len, &rec), -EBADMSG); /* no payload */
	rb_u64(&b, 1);
	rb_u64(&b, 2);
	rb_end(&b);
	assert_int_equal(auxcap_record_parse(&l, b.buf, b.len - 8, &rec), -EBADMSG); /* > len */
	b.buf[6] = 23; /* size not a multiple of 8 */
	assert_int_equal(auxcap_record_parse(&l, b.buf, b.len, &rec), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_sample_all_fields_in_output_order),
		cmocka_unit_test(test_record_read_group_format),
		cmocka_unit_test(test_record_mmap2_both_forms_with_trailer),
		cmocka_unit_test(test_record_unterminated_string_rejected),
		cmocka_unit_test(test_record_aux_itrace_lost_switch_with_trailer),
		cmocka_unit_test(test_record_unknown_type_keeps_trailer),
		cmocka_unit_test(test_record_bad_headers),
	};

	return cmocka_run_group_tests_name("core/record", tests, NULL, NULL);
}
