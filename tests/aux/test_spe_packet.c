/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the SPE packet decoder on hand-built packets: every class, short and extended
 * headers, every payload size, every header byte, truncation at every byte, field decoding and
 * the text descriptions.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "spe_decode.h"

/* Build one packet: header byte(s) then an @psize-byte little-endian payload. */
static size_t put_pkt(unsigned char *buf, const unsigned char *hdr, size_t hlen, uint64_t payload,
		      size_t psize)
{
	size_t i;

	memcpy(buf, hdr, hlen);
	for (i = 0; i < psize; i++)
		buf[hlen + i] = (unsigned char)(payload >> (8 * i));
	return hlen + psize;
}

/* A payload with a distinct value in every byte, cut to @psize bytes. */
static uint64_t pattern(size_t psize)
{
	uint64_t v = 0x8877665544332211ULL;

	return psize == 8 ? v : v & ((1ULL << (8 * psize)) - 1);
}

static void check_one(const unsigned char *hdr, size_t hlen, size_t psize,
		      enum auxcap_spe_pkt_type type, unsigned int index)
{
	unsigned char buf[32];
	struct auxcap_spe_packet pkt;
	size_t n = put_pkt(buf, hdr, hlen, pattern(psize), psize);
	int r;

	buf[n] = 0xff; /* a following byte that must not be consumed */
	r = auxcap_spe_pkt_decode(buf, n + 1, 100, &pkt);
	assert_int_equal(r, n);
	assert_int_equal(pkt.type, type);
	assert_int_equal(pkt.index, index);
	assert_int_equal(pkt.size, n);
	assert_int_equal(pkt.header_size, hlen);
	assert_int_equal(pkt.payload_size, psize);
	assert_int_equal(pkt.payload, pattern(psize));
	assert_int_equal(pkt.offset, 100);
	assert_memory_equal(pkt.raw, buf, n);
}

static void test_pad_end_timestamp(void **state)
{
	unsigned char buf[8] = { 0, 0, 0, 0x01, 0 };
	struct auxcap_spe_packet pkt;
	unsigned char h;

	(void)state;
	/* A run of PAD bytes is one packet of the run's length. */
	assert_int_equal(auxcap_spe_pkt_decode(buf, 5, 7, &pkt), 3);
	assert_int_equal(pkt.type, AUXCAP_SPE_PKT_PAD);
	assert_int_equal(pkt.size, 3);
	assert_int_equal(pkt.offset, 7);
	assert_int_equal(auxcap_spe_pkt_decode(buf + 3, 2, 10, &pkt), 1);
	assert_int_equal(pkt.type, AUXCAP_SPE_PKT_END);
	assert_int_equal(pkt.payload_size, 0);
	/* A PAD at the very end of the data. */
	assert_int_equal(auxcap_spe_pkt_decode(buf + 4, 1, 11, &pkt), 1);
	assert_int_equal(pkt.type, AUXCAP_SPE_PKT_PAD);

	h = AUXCAP_SPE_HDR_TIMESTAMP;
	check_one(&h, 1, 8, AUXCAP_SPE_PKT_TIMESTAMP, 0);
}

static void test_short_address_counter(void **state)
{
	unsigned int idx;
	unsigned char h;

	(void)state;
	for (idx = 0; idx < 8; idx++) {
		h = (unsigned char)(0xb0 | idx);
		check_one(&h, 1, 8, AUXCAP_SPE_PKT_ADDRESS, idx);
		h = (unsigned char)(0x98 | idx);
		check_one(&h, 1, 2, AUXCAP_SPE_PKT_COUNTER, idx);
	}
}

static void test_extended_address_counter(void **state)
{
	unsigned int idx;
	unsigned char h[2];

	(void)state;
	for (idx = 0; idx < 32; idx++) {
		h[0] = (unsigned char)(0x20 | (idx >> 3));
		h[1] = (unsigned char)(0xb0 | (idx & 7));
		check_one(h, 2, 8, AUXCAP_SPE_PKT_ADDRESS, idx);
		h[1] = (unsigned char)(0x98 | (idx & 7));
		check_one(h, 2, 2, AUXCAP_SPE_PKT_COUNTER, idx);
	}
}

static void test_events_source_sizes(void **state)
{
	unsigned int sz;
	unsigned char h;

	(void)state;
	for (sz = 0; sz < 4; sz++) {
		h = (unsigned char)(0x42 | (sz << 4));
		check_one(&h, 1, 1U << sz, AUXCAP_SPE_PKT_EVENTS, 0);
		h = (unsigned char)(0x43 | (sz << 4));
		check_one(&h, 1, 1U << sz, AUXCAP_SPE_PKT_DATA_SOURCE, 0);
	}
}

static void test_op_type_context(void **state)
{
	unsigned int i;
	unsigned char h;

	(void)state;
	for (i = 0; i < 3; i++) {
		h = (unsigned char)(0x48 | i);
		check_one(&h, 1, 1, AUXCAP_SPE_PKT_OP_TYPE, i);
	}
	for (i = 0; i < 4; i++) {
		h = (unsigned char)(0x64 | i);
		check_one(&h, 1, 4, AUXCAP_SPE_PKT_CONTEXT, i);
	}
}

/*
 * Every first byte, with 15 valid-looking bytes after it (an address header as byte 1 so that
 * the extended prefix is complete).  The set of bytes that decode is exactly the list of
 * header encodings above; the others are reserved (-EBADMSG) or carry a size their class
 * cannot have (-EMSGSIZE).
 */
static void test_every_header_byte(void **state)
{
	unsigned char buf[16];
	struct auxcap_spe_packet pkt;
	unsigned int h, ok = 0, badsize = 0, badhdr = 0;
	int r;

	(void)state;
	for (h = 0; h < 256; h++) {
		bool valid = h == 0x00 || h == 0x01 || h == 0x71 || (h & 0xcf) == 0x42 ||
			     (h & 0xcf) == 0x43 || (h & 0xfc) == 0x64 || (h >= 0x48 && h <= 0x4a) ||
			     (h & 0xf8) == 0xb0 || (h & 0xf8) == 0x98 || (h & 0xfc) == 0x20;
		/* Same class, size field wrong: timestamp, context, op type, address, counter. */
		bool wrong_size = (h & 0xcf) == 0x41 ||
				  ((h & 0xcc) == 0x44 && (h & 0x30) != 0x20) ||
				  ((h & 0xcc) == 0x48 && (h & 3) != 3 && (h & 0x30)) ||
				  ((h & 0xc8) == 0x80 && (h & 0x30) != 0x30) ||
				  ((h & 0xc8) == 0x88 && (h & 0x30) != 0x10);

		memset(buf, 0x11, sizeof(buf));
		buf[0] = (unsigned char)h;
		buf[1] = 0xb3;
		r = auxcap_spe_pkt_decode(buf, sizeof(buf), 0, &pkt);
		if (valid) {
			assert_true(r > 0);
			ok++;
		} else if (wrong_size) {
			assert_int_equal(r, -EMSGSIZE);
			badsize++;
		} else {
			assert_int_equal(r, -EBADMSG);
			badhdr++;
		}
	}
	/* 3 + 4 + 4 + 4 + 3 + 8 + 8 + 4 valid first bytes. */
	assert_int_equal(ok, 38);
	assert_int_equal(ok + badsize + badhdr, 256);
}

/* Byte 1 of an extended header must be an address or counter header with its fixed size. */
static void test_extended_bad_second_byte(void **state)
{
	unsigned char buf[12] = { 0x21 };
	struct auxcap_spe_packet pkt;
	unsigned int h;
	int r;

	(void)state;
	for (h = 0; h < 256; h++) {
		memset(buf + 2, 0x22, sizeof(buf) - 2);
		buf[1] = (unsigned char)h;
		r = auxcap_spe_pkt_decode(buf, sizeof(buf), 0, &pkt);
		if ((h & 0xf8) == 0xb0 || (h & 0xf8) == 0x98)
			assert_true(r > 0);
		else if ((h & 0xc0) == 0x80)
			assert_int_equal(r, -EMSGSIZE);
		else
			assert_int_equal(r, -EBADMSG);
	}
}

/* A packet cut at every byte is -ENODATA and leaves the output untouched. */
static void test_truncated_every_byte(void **state)
{
	static const unsigned char hdrs[][2] = {
		{ 0x71 }, { 0xb0 }, { 0x9a }, { 0x42 }, { 0x52 },	{ 0x62 },	{ 0x72 },
		{ 0x43 }, { 0x73 }, { 0x49 }, { 0x65 }, { 0x20, 0xb1 }, { 0x23, 0x9f },
	};
	unsigned char buf[16];
	struct auxcap_spe_packet pkt, poison;
	size_t i, cut, n;

	(void)state;
	memset(&poison, 0xcd, sizeof(poison));
	for (i = 0; i < sizeof(hdrs) / sizeof(hdrs[0]); i++) {
		size_t hlen = (hdrs[i][0] & 0xfc) == 0x20 ? 2 : 1;
		unsigned char szb = hlen == 2 ? hdrs[i][1] : hdrs[i][0];
		size_t psize = 1U << ((szb >> 4) & 3);

		n = put_pkt(buf, hdrs[i], hlen, pattern(psize), psize);
		for (cut = 1; cut < n; cut++) {
			pkt = poison;
			assert_int_equal(auxcap_spe_pkt_decode(buf, cut, 0, &pkt), -ENODATA);
			assert_memory_equal(&pkt, &poison, sizeof(pkt));
		}
		assert_int_equal(auxcap_spe_pkt_decode(buf, n, 0, &pkt), n);
	}
}

static void test_invalid_args(void **state)
{
	unsigned char b = 1;
	struct auxcap_spe_packet pkt;

	(void)state;
	assert_int_equal(auxcap_spe_pkt_decode(NULL, 1, 0, &pkt), -EINVAL);
	assert_int_equal(auxcap_spe_pkt_decode(&b, 0, 0, &pkt), -EINVAL);
	assert_int_equal(auxcap_spe_pkt_decode(&b, 1, 0, NULL), -EINVAL);
}

static struct auxcap_spe_packet addr_pkt(unsigned int index, uint64_t payload)
{
	struct auxcap_spe_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = AUXCAP_SPE_PKT_ADDRESS;
	pkt.index = index;
	pkt.payload = payload;
	pkt.size = 9;
	return pkt;
}

static void test_address_fields(void **state)
{
	struct auxcap_spe_packet pkt;
	struct auxcap_spe_addr a;

	(void)state;
	/* Kernel PC at EL1, non-secure: bit 63 NS, bits [62:61] = 1, bit 55 set. */
	pkt = addr_pkt(AUXCAP_SPE_ADDR_PC, 0xa0ff80001029d3f4ULL);
	auxcap_spe_addr_decode(&pkt, &a);
	assert_int_equal(a.raw, 0xff80001029d3f4ULL);
	assert_int_equal(a.addr, 0xffff80001029d3f4ULL);
	assert_int_equal(a.el, 1);
	assert_true(a.ns);

	/* User PC at EL0, non-secure: no sign extension. */
	pkt = addr_pkt(AUXCAP_SPE_ADDR_BRANCH_TARGET, (1ULL << 63) | 0x400123ULL);
	auxcap_spe_addr_decode(&pkt, &a);
	assert_int_equal(a.addr, 0x400123);
	assert_int_equal(a.el, 0);
	assert_true(a.ns);

	/* EL2, secure. */
	pkt = addr_pkt(AUXCAP_SPE_ADDR_PREV_BRANCH, (2ULL << 61) | 0x1000ULL);
	auxcap_spe_addr_decode(&pkt, &a);
	assert_int_equal(a.el, 2);
	assert_false(a.ns);
	assert_int_equal(a.addr, 0x1000);

	/* Data VA: the top byte is a tag, not part of the address. */
	pkt = addr_pkt(AUXCAP_SPE_ADDR_DATA_VA, 0x5a00007fffdeadb0ULL);
	auxcap_spe_addr_decode(&pkt, &a);
	assert_int_equal(a.tag, 0x5a);
	assert_int_equal(a.addr, 0x7fffdeadb0ULL);
	pkt = addr_pkt(AUXCAP_SPE_ADDR_DATA_VA, 0x00ff000070d840d0ULL);
	auxcap_spe_addr_decode(&pkt, &a);
	assert_int_equal(a.addr, 0xffff000070d840d0ULL);
	assert_int_equal(a.tag, 0);

	/* Data PA: NS bit 63, checked bit 62, physical address tag bits [59:56]. */
	pkt = addr_pkt(AUXCAP_SPE_ADDR_DATA_PA,
		       (1ULL << 63) | (1ULL << 62) | (0x9ULL << 56) | 0x80001234ULL);
	auxcap_spe_addr_decode(&pkt, &a);
	assert_int_equal(a.addr, 0x80001234ULL);
	assert_true(a.ns);
	assert_true(a.checked);
	assert_int_equal(a.pat, 9);
	assert_int_equal(a.el, 0);
}

static struct auxcap_spe_op op_of(unsigned int cls, uint8_t v)
{
	struct auxcap_spe_packet pkt;
	struct auxcap_spe_op op;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = AUXCAP_SPE_PKT_OP_TYPE;
	pkt.index = cls;
	pkt.payload = v;
	auxcap_spe_op_decode(&pkt, &op);
	assert_int_equal(op.cls, cls);
	assert_int_equal(op.raw, v);
	return op;
}

static void test_op_type_fields(void **state)
{
	struct auxcap_spe_op op;

	(void)state;
	/* Other: plain, conditional select, SVE (bits 7,3,0 = 0,1,0) with EVL/FP/PRED. */
	assert_int_equal(op_of(0, 0x00).flags, 0);
	assert_int_equal(op_of(0, 0x01).flags, AUXCAP_SPE_OP_COND);
	op = op_of(0, 0x08 | 0x30 | 0x04 | 0x02);
	assert_int_equal(op.flags,
			 AUXCAP_SPE_OP_SVE | AUXCAP_SPE_OP_SVE_PRED | AUXCAP_SPE_OP_SVE_FP);
	assert_int_equal(op.sve_evl, 32 << 3);

	/* Load/store subclasses, bit 0 = store. */
	op = op_of(1, 0x00);
	assert_int_equal(op.subclass, AUXCAP_SPE_LDST_GP_REG);
	assert_int_equal(op.flags, 0);
	op = op_of(1, 0x01);
	assert_int_equal(op.subclass, AUXCAP_SPE_LDST_GP_REG);
	assert_int_equal(op.flags, AUXCAP_SPE_OP_ST);
	assert_int_equal(op_of(1, 0x05).subclass, AUXCAP_SPE_LDST_SIMD_FP);
	assert_int_equal(op_of(1, 0x10).subclass, AUXCAP_SPE_LDST_UNSPEC_REG);
	assert_int_equal(op_of(1, 0x14).subclass, AUXCAP_SPE_LDST_MTE_TAG);
	assert_int_equal(op_of(1, 0x21).subclass, AUXCAP_SPE_LDST_MEMCPY);
	assert_int_equal(op_of(1, 0x25).subclass, AUXCAP_SPE_LDST_MEMSET);
	assert_int_equal(op_of(1, 0x24).subclass, AUXCAP_SPE_LDST_UNKNOWN);
	assert_int_equal(op_of(1, 0x31).subclass, AUXCAP_SPE_LDST_NV_SYSREG);

	/* Extended (bits 7:5 = 0, bit 1 = 1): atomic, exclusive, acquire/release. */
	op = op_of(1, 0x02 | 0x04 | 0x10 | 0x01);
	assert_int_equal(op.subclass, AUXCAP_SPE_LDST_EXTENDED);
	assert_int_equal(op.flags, AUXCAP_SPE_OP_ST | AUXCAP_SPE_OP_ATOMIC | AUXCAP_SPE_OP_ACQREL);
	op = op_of(1, 0x02 | 0x08);
	assert_int_equal(op.flags, AUXCAP_SPE_OP_EXCL);

	/* SVE load/store (bit 3 = 1, bit 1 = 0): EVL, predicated, gather/scatter. */
	op = op_of(1, 0x80 | 0x08 | 0x10 | 0x04);
	assert_int_equal(op.subclass, AUXCAP_SPE_LDST_SVE);
	assert_int_equal(op.flags,
			 AUXCAP_SPE_OP_SVE | AUXCAP_SPE_OP_SVE_PRED | AUXCAP_SPE_OP_SVE_SG);
	assert_int_equal(op.sve_evl, 64);

	/* Branches: conditional, indirect, GCS, call-return hints. */
	assert_int_equal(op_of(2, 0x00).flags, 0);
	assert_int_equal(op_of(2, 0x01).flags, AUXCAP_SPE_OP_COND);
	assert_int_equal(op_of(2, 0x02).flags, AUXCAP_SPE_OP_INDIRECT);
	assert_int_equal(op_of(2, 0x04).flags, AUXCAP_SPE_OP_GCS);
	assert_int_equal(op_of(2, 0x08).flags, AUXCAP_SPE_OP_CALL);
	assert_int_equal(op_of(2, 0x12).flags, AUXCAP_SPE_OP_RET | AUXCAP_SPE_OP_INDIRECT);
	assert_int_equal(op_of(2, 0x18).flags, AUXCAP_SPE_OP_NOT_CALL_RET);
}

/* Decode @bytes as one packet and compare its description. */
static void check_desc(const unsigned char *bytes, size_t n, const char *want)
{
	struct auxcap_spe_packet pkt;
	char desc[256];
	int len;

	assert_int_equal(auxcap_spe_pkt_decode(bytes, n, 0, &pkt), n);
	len = auxcap_spe_pkt_desc(&pkt, desc, sizeof(desc));
	assert_string_equal(desc, want);
	assert_int_equal(len, strlen(want));
}

static void test_descriptions(void **state)
{
	/*
	 * Packets of a real Arm SPE capture (Neoverse, EL1), with the descriptions perf report -D
	 * printed for them (posted on linux-arm-kernel with the KVM SPE series).
	 */
	static const unsigned char pc[] = { 0xb0, 0xf4, 0xd3, 0x29, 0x10, 0x00, 0x80, 0xff, 0xa0 };
	static const unsigned char issue[] = { 0x99, 0x0b, 0x00 };
	static const unsigned char tot[] = { 0x98, 0x0d, 0x00 };
	static const unsigned char ev[] = { 0x52, 0x16, 0x00 };
	static const unsigned char ld[] = { 0x49, 0x00 };
	static const unsigned char va[] = { 0xb2, 0xd0, 0x40, 0xd8, 0x70, 0x00, 0x00, 0xff, 0x00 };
	static const unsigned char xlat[] = { 0x9a, 0x01, 0x00 };
	static const unsigned char ts[] = { 0x71, 0xa5, 0x1f, 0xb3, 0x20, 0x14, 0x00, 0x00, 0x00 };
	/* Hand-built ones for the other classes. */
	static const unsigned char ext_tgt[] = { 0x20, 0xb1, 0x00, 0x10, 0x40, 0, 0, 0, 0, 0x80 };
	static const unsigned char ext_lat[] = { 0x20, 0x9a, 0x2c, 0x01 };
	static const unsigned char pa[] = { 0xb3, 0x00, 0x10, 0, 0x80, 0, 0, 0, 0xc3 };
	static const unsigned char ctx[] = { 0x65, 0x2b, 0x1a, 0x00, 0x00 };
	static const unsigned char src[] = { 0x53, 0x0e, 0x00 };
	static const unsigned char br[] = { 0x4a, 0x03 };
	static const unsigned char st_at[] = { 0x49, 0x17 };
	static const unsigned char sve[] = { 0x49, 0x9c };
	static const unsigned char other[] = { 0x48, 0x01 };
	static const unsigned char ev8[] = { 0x72, 0x81, 0x0f, 0x06, 0x00, 0x00, 0x10, 0x00, 0x00 };
	static const unsigned char end[] = { 0x01 };

	(void)state;
	check_desc(pc, sizeof(pc), "PC 0xff80001029d3f4 el1 ns=1");
	check_desc(issue, sizeof(issue), "LAT 11 ISSUE");
	check_desc(tot, sizeof(tot), "LAT 13 TOT");
	check_desc(ev, sizeof(ev), "EV RETIRED L1D-ACCESS TLB-ACCESS");
	check_desc(ld, sizeof(ld), "LD GP-REG");
	check_desc(va, sizeof(va), "VA 0xff000070d840d0");
	check_desc(xlat, sizeof(xlat), "LAT 1 XLAT");
	check_desc(ts, sizeof(ts), "TS 86447955877");

	check_desc(ext_tgt, sizeof(ext_tgt), "TGT 0x401000 el0 ns=1");
	check_desc(ext_lat, sizeof(ext_lat), "LAT 300 XLAT");
	check_desc(pa, sizeof(pa), "PA 0x80001000 ns=1 ch=1 pat=3");
	check_desc(ctx, sizeof(ctx), "CONTEXT 0x1a2b el2");
	check_desc(src, sizeof(src), "DATA-SOURCE 14");
	check_desc(br, sizeof(br), "B COND IND");
	check_desc(st_at, sizeof(st_at), "ST AT AR");
	check_desc(sve, sizeof(sve), "LD SVE EVLEN 64 PRED SG");
	check_desc(other, sizeof(other), "OTHER COND-SELECT");
	check_desc(ev8, sizeof(ev8),
		   "EV EXCEPTION-GEN MISPRED LLC-ACCESS LLC-MISS REMOTE-ACCESS ALIGNMENT "
		   "SVE-PARTIAL-PRED SVE-EMPTY-PRED 0x100000000000");
	check_desc(end, sizeof(end), "END");
}

static void test_desc_small_buffer(void **state)
{
	static const unsigned char pc[] = { 0xb0, 0xf4, 0xd3, 0x29, 0x10, 0x00, 0x80, 0xff, 0xa0 };
	struct auxcap_spe_packet pkt;
	char desc[8];

	(void)state;
	assert_int_equal(auxcap_spe_pkt_decode(pc, sizeof(pc), 0, &pkt), 9);
	/* The full length is returned, the text is cut and terminated. */
	assert_int_equal(auxcap_spe_pkt_desc(&pkt, desc, sizeof(desc)), 28);
	assert_string_equal(desc, "PC 0xff");
	assert_int_equal(auxcap_spe_pkt_desc(&pkt, NULL, 0), 28);
}

/* The bare iterator: offsets, an error that does not move it, resync, the end. */
static void test_pkt_iter(void **state)
{
	static const unsigned char buf[] = {
		0xb0, 1,    2,	  3, 4, 5, 6, 7, 0x80, /* PC at 0 */
		0x00, 0x00,			       /* PAD run at 9 */
		0x49, 0x01,			       /* ST at 11 */
		0xe0,				       /* bad header at 13 */
		0x98, 0x05, 0x00,		       /* skipped */
		0x01,				       /* END: resync point after it */
		0x71, 1,    0,	  0, 0, 0, 0, 0, 0,    /* TS at 18 */
		0x42,				       /* truncated EV at 27 */
	};
	struct auxcap_spe_pkt_iter it;
	struct auxcap_spe_packet pkt, poison;

	(void)state;
	memset(&poison, 0xcd, sizeof(poison));
	auxcap_spe_pkt_iter_init(&it, buf, sizeof(buf));
	assert_int_equal(auxcap_spe_pkt_next(&it, &pkt), 1);
	assert_int_equal(pkt.offset, 0);
	assert_int_equal(pkt.type, AUXCAP_SPE_PKT_ADDRESS);
	assert_int_equal(auxcap_spe_pkt_next(&it, &pkt), 1);
	assert_int_equal(pkt.offset, 9);
	assert_int_equal(pkt.type, AUXCAP_SPE_PKT_PAD);
	assert_int_equal(pkt.size, 2);
	assert_int_equal(auxcap_spe_pkt_next(&it, &pkt), 1);
	assert_int_equal(pkt.offset, 11);
	pkt = poison;
	assert_int_equal(auxcap_spe_pkt_next(&it, &pkt), -EBADMSG);
	assert_memory_equal(&pkt, &poison, sizeof(pkt));
	assert_int_equal(auxcap_spe_pkt_iter_offset(&it), 13);
	/* Still stuck on it until told to move on. */
	assert_int_equal(auxcap_spe_pkt_next(&it, &pkt), -EBADMSG);
	assert_int_equal(auxcap_spe_pkt_iter_resync(&it), 5);
	assert_int_equal(auxcap_spe_pkt_iter_offset(&it), 18);
	assert_int_equal(auxcap_spe_pkt_next(&it, &pkt), 1);
	assert_int_equal(pkt.type, AUXCAP_SPE_PKT_TIMESTAMP);
	assert_int_equal(pkt.payload, 1);
	assert_int_equal(auxcap_spe_pkt_next(&it, &pkt), -ENODATA);
	assert_int_equal(auxcap_spe_pkt_iter_offset(&it), 27);
	assert_int_equal(auxcap_spe_pkt_iter_resync(&it), 1);
	assert_int_equal(auxcap_spe_pkt_next(&it, &pkt), 0);
	assert_int_equal(auxcap_spe_pkt_iter_resync(&it), 0);
	assert_int_equal(auxcap_spe_pkt_next(NULL, &pkt), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pad_end_timestamp),
		cmocka_unit_test(test_short_address_counter),
		cmocka_unit_test(test_extended_address_counter),
		cmocka_unit_test(test_events_source_sizes),
		cmocka_unit_test(test_op_type_context),
		cmocka_unit_test(test_every_header_byte),
		cmocka_unit_test(test_extended_bad_second_byte),
		cmocka_unit_test(test_truncated_every_byte),
		cmocka_unit_test(test_invalid_args),
		cmocka_unit_test(test_address_fields),
		cmocka_unit_test(test_op_type_fields),
		cmocka_unit_test(test_descriptions),
		cmocka_unit_test(test_desc_small_buffer),
		cmocka_unit_test(test_pkt_iter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
