/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the SPE record assembler: records into samples, END and TIMESTAMP endings,
 * padding, errors with resynchronisation, cuts at every byte, the text dump, and a seeded
 * random-input loop that checks every byte is accounted for exactly once.
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

#include <cmocka.h>

#include "spe_decode.h"

struct sb {
	unsigned char buf[12288];
	size_t len;
};

static void sb_bytes(struct sb *b, const unsigned char *p, size_t n)
{
	assert_true(b->len + n <= sizeof(b->buf));
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static void sb_pkt(struct sb *b, unsigned char h, uint64_t payload, size_t psize)
{
	unsigned char tmp[9];
	size_t i;

	tmp[0] = h;
	for (i = 0; i < psize; i++)
		tmp[1 + i] = (unsigned char)(payload >> (8 * i));
	sb_bytes(b, tmp, 1 + psize);
}

/* One load record as an SPE unit would write it, ending with a timestamp. */
static void sb_load_record(struct sb *b, uint64_t pc, uint64_t va, uint64_t ts)
{
	sb_pkt(b, 0xb0, pc | (1ULL << 63), 8); /* PC, EL0, NS */
	sb_pkt(b, 0x65, 1234, 4);	       /* CONTEXTIDR_EL2 */
	sb_pkt(b, 0x49, 0x00, 1);	       /* LD GP-REG */
	sb_pkt(b, 0x52, 0x000e, 2);	       /* EV RETIRED L1D-ACCESS L1D-REFILL */
	sb_pkt(b, 0x99, 7, 2);		       /* LAT 7 ISSUE */
	sb_pkt(b, 0xb2, va, 8);		       /* VA */
	sb_pkt(b, 0x9a, 3, 2);		       /* LAT 3 XLAT */
	sb_pkt(b, 0x98, 42, 2);		       /* LAT 42 TOT */
	sb_pkt(b, 0x43, 0x8, 1);	       /* DATA-SOURCE 8 */
	sb_pkt(b, 0x71, ts, 8);		       /* TS */
}

/* One branch record ending with END, using an extended header for the target. */
static void sb_branch_record(struct sb *b, uint64_t pc, uint64_t tgt)
{
	static const unsigned char ext_tgt[2] = { 0x20, 0xb1 };
	size_t i;

	sb_pkt(b, 0xb0, pc | (1ULL << 63), 8);
	sb_pkt(b, 0x4a, 0x01, 1); /* B COND */
	sb_pkt(b, 0x42, 0x82, 1); /* EV RETIRED MISPRED */
	sb_bytes(b, ext_tgt, 2);
	for (i = 0; i < 8; i++)
		b->buf[b->len++] = (unsigned char)((tgt | (1ULL << 63)) >> (8 * i));
	sb_pkt(b, 0x98, 5, 2);
	sb_pkt(b, 0x01, 0, 0); /* END */
}

static void sb_pad(struct sb *b, size_t n)
{
	assert_true(b->len + n <= sizeof(b->buf));
	memset(b->buf + b->len, 0, n);
	b->len += n;
}

static void check_accounting(const struct auxcap_spe_decoder *dec, size_t len)
{
	assert_int_equal(dec->stats.packet_bytes + dec->stats.pad_bytes + dec->stats.error_bytes,
			 len);
}

static size_t naive_resync(const unsigned char *buf, size_t len, size_t from);

static void test_samples(void **state)
{
	struct sb b = { .len = 0 };
	struct auxcap_spe_decoder dec;
	struct auxcap_spe_event ev;
	size_t rec2, tail;

	(void)state;
	sb_pad(&b, 3);
	sb_load_record(&b, 0x401000, 0x7ffdeadbeef0ULL, 1000);
	rec2 = b.len;
	sb_branch_record(&b, 0x401010, 0x401100);
	tail = 64 - b.len % 64;
	sb_pad(&b, tail); /* alignment padding */

	auxcap_spe_decoder_init(&dec, b.buf, b.len, 0);
	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 1);
	assert_int_equal(ev.type, AUXCAP_SPE_EVENT_SAMPLE);
	assert_int_equal(ev.sample.offset, 3);
	assert_int_equal(ev.sample.size, rec2 - 3);
	assert_int_equal(ev.sample.nr_packets, 10);
	assert_int_equal(ev.sample.pc, 0x401000);
	assert_int_equal(ev.sample.el, 0);
	assert_true(ev.sample.ns);
	assert_int_equal(ev.sample.context_id, 1234);
	assert_int_equal(ev.sample.context_el, 2);
	assert_int_equal(ev.sample.op.cls, AUXCAP_SPE_OP_CLASS_LDST);
	assert_int_equal(ev.sample.op.subclass, AUXCAP_SPE_LDST_GP_REG);
	assert_int_equal(ev.sample.op.flags & AUXCAP_SPE_OP_ST, 0);
	assert_int_equal(ev.sample.events, AUXCAP_SPE_EV_RETIRED | AUXCAP_SPE_EV_L1D_ACCESS |
						   AUXCAP_SPE_EV_L1D_REFILL);
	assert_int_equal(ev.sample.issue_lat, 7);
	assert_int_equal(ev.sample.xlat_lat, 3);
	assert_int_equal(ev.sample.total_lat, 42);
	assert_int_equal(ev.sample.data_va, 0x7ffdeadbeef0ULL);
	assert_int_equal(ev.sample.data_source, 8);
	assert_int_equal(ev.sample.timestamp, 1000);
	assert_true(ev.sample.by_timestamp);
	assert_int_equal(ev.sample.present,
			 AUXCAP_SPE_HAS_PC | AUXCAP_SPE_HAS_CONTEXT | AUXCAP_SPE_HAS_OP |
				 AUXCAP_SPE_HAS_EVENTS | AUXCAP_SPE_HAS_ISSUE_LAT |
				 AUXCAP_SPE_HAS_DATA_VA | AUXCAP_SPE_HAS_XLAT_LAT |
				 AUXCAP_SPE_HAS_TOTAL_LAT | AUXCAP_SPE_HAS_DATA_SOURCE |
				 AUXCAP_SPE_HAS_TIMESTAMP);

	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 1);
	assert_int_equal(ev.type, AUXCAP_SPE_EVENT_SAMPLE);
	assert_int_equal(ev.sample.offset, rec2);
	assert_int_equal(ev.sample.pc, 0x401010);
	assert_int_equal(ev.sample.target, 0x401100);
	assert_int_equal(ev.sample.op.cls, AUXCAP_SPE_OP_CLASS_BRANCH);
	assert_int_equal(ev.sample.op.flags, AUXCAP_SPE_OP_COND);
	assert_int_equal(ev.sample.events, AUXCAP_SPE_EV_RETIRED | AUXCAP_SPE_EV_MISPREDICTED);
	assert_false(ev.sample.by_timestamp);
	assert_int_equal(ev.sample.present & AUXCAP_SPE_HAS_TIMESTAMP, 0);

	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 0);
	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 0);
	assert_int_equal(dec.stats.samples, 2);
	assert_int_equal(dec.stats.packets, 16);
	assert_int_equal(dec.stats.errors, 0);
	assert_int_equal(dec.stats.error_bytes, 0);
	assert_int_equal(dec.stats.pad_bytes, 3 + tail);
	check_accounting(&dec, b.len);
	assert_int_equal(auxcap_spe_decoder_offset(&dec), b.len);
}

/* With AUXCAP_SPE_DECODER_PACKETS, packets come in order and the sample after its ending. */
static void test_packet_events(void **state)
{
	struct sb b = { .len = 0 };
	struct auxcap_spe_decoder dec;
	struct auxcap_spe_event ev;
	uint64_t next = 0;
	int packets = 0, samples = 0, pads = 0;
	enum auxcap_spe_pkt_type last = 0;

	(void)state;
	sb_branch_record(&b, 0x1000, 0x2000);
	sb_pad(&b, 5);
	sb_load_record(&b, 0x1004, 0x3000, 77);

	auxcap_spe_decoder_init(&dec, b.buf, b.len, AUXCAP_SPE_DECODER_PACKETS);
	while (auxcap_spe_decoder_next(&dec, &ev) == 1) {
		if (ev.type == AUXCAP_SPE_EVENT_PACKET) {
			assert_int_equal(ev.packet.offset, next);
			next += ev.packet.size;
			last = ev.packet.type;
			if (ev.packet.type == AUXCAP_SPE_PKT_PAD)
				pads++;
			else
				packets++;
		} else {
			assert_int_equal(ev.type, AUXCAP_SPE_EVENT_SAMPLE);
			assert_true(last == AUXCAP_SPE_PKT_END || last == AUXCAP_SPE_PKT_TIMESTAMP);
			assert_int_equal(ev.sample.offset + ev.sample.size, next);
			samples++;
		}
	}
	assert_int_equal(next, b.len);
	assert_int_equal(packets, 16);
	assert_int_equal(pads, 1);
	assert_int_equal(samples, 2);
}

/* A lone END (after padding) is an empty record, not a sample. */
static void test_empty_record(void **state)
{
	static const unsigned char buf[] = { 0x00, 0x01, 0x00, 0x00, 0x01, 0x01 };
	struct auxcap_spe_decoder dec;
	struct auxcap_spe_event ev;

	(void)state;
	auxcap_spe_decoder_init(&dec, buf, sizeof(buf), 0);
	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 0);
	assert_int_equal(dec.stats.empty_records, 3);
	assert_int_equal(dec.stats.samples, 0);
	check_accounting(&dec, sizeof(buf));
}

/* A bad header inside a record: error at its offset, record dropped, next record decoded. */
static void test_bad_header_resync(void **state)
{
	struct sb b = { .len = 0 };
	struct auxcap_spe_decoder dec;
	struct auxcap_spe_event ev;
	size_t rec1, bad, rec2;

	(void)state;
	rec1 = b.len;
	sb_pkt(&b, 0xb0, 0x4000, 8);
	sb_pkt(&b, 0x49, 0x01, 1);
	bad = b.len;
	sb_pkt(&b, 0xc5, 0, 0);	     /* reserved header */
	sb_pkt(&b, 0x98, 0xff01, 2); /* payload holds a 0x01 that is not an END ... */
	sb_pkt(&b, 0xff, 0, 0);	     /* ... because what follows does not decode */
	sb_pkt(&b, 0x01, 0, 0);	     /* the real END */
	rec2 = b.len;
	sb_load_record(&b, 0x5000, 0x6000, 99);

	auxcap_spe_decoder_init(&dec, b.buf, b.len, 0);
	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 1);
	assert_int_equal(ev.type, AUXCAP_SPE_EVENT_ERROR);
	assert_int_equal(ev.error.kind, AUXCAP_SPE_ERR_BAD_HEADER);
	assert_int_equal(ev.error.code, -EBADMSG);
	assert_int_equal(ev.error.offset, bad);
	assert_int_equal(ev.error.record_offset, rec1);
	assert_int_equal(ev.error.header[0], 0xc5);
	assert_int_equal(ev.error.header_len, 1);
	assert_int_equal(ev.error.skipped, rec2 - bad);

	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 1);
	assert_int_equal(ev.type, AUXCAP_SPE_EVENT_SAMPLE);
	assert_int_equal(ev.sample.offset, rec2);
	assert_int_equal(ev.sample.pc, 0x5000);
	assert_int_equal(ev.sample.timestamp, 99);
	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 0);
	assert_int_equal(dec.stats.errors, 1);
	assert_int_equal(dec.stats.error_bytes, rec2 - bad);
	check_accounting(&dec, b.len);
}

/*
 * A candidate after which 4 KiB decode as packets is accepted even without a terminator; one
 * whose packets run into a bad header is not, nor is any candidate whose packets join them.
 */
static void test_resync_span_and_merge(void **state)
{
	struct sb b = { .len = 0 };
	struct auxcap_spe_decoder dec;
	struct auxcap_spe_event ev;
	size_t i, bad_end;

	(void)state;
	/* Chains of counters holding 0x01 bytes, ending in a bad header, twice. */
	sb_pkt(&b, 0xc0, 0, 0);
	for (i = 0; i < 300; i++)
		sb_pkt(&b, 0x98, 0x0001, 2);
	sb_pkt(&b, 0xff, 0, 0);
	for (i = 0; i < 300; i++)
		sb_pkt(&b, 0x98, 0x0001, 2);
	sb_pkt(&b, 0xff, 0, 0);
	bad_end = b.len;
	/* Then 6000 bytes of counters: accepted after the first 0x01 byte. */
	for (i = 0; i < 2000; i++)
		sb_pkt(&b, 0x98, 0x0001, 2);

	auxcap_spe_decoder_init(&dec, b.buf, b.len, 0);
	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 1);
	assert_int_equal(ev.type, AUXCAP_SPE_EVENT_ERROR);
	assert_int_equal(ev.error.offset, 0);
	assert_int_equal(ev.error.skipped, bad_end + 2);
	assert_int_equal(ev.error.skipped, naive_resync(b.buf, b.len, 1));
	/* The rest decodes as one long record that never ends. */
	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 1);
	assert_int_equal(ev.type, AUXCAP_SPE_EVENT_ERROR);
	assert_int_equal(ev.error.kind, AUXCAP_SPE_ERR_UNTERMINATED);
	assert_int_equal(ev.error.offset, bad_end + 3);
	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 0);
	check_accounting(&dec, b.len);
}

/*
 * A failed candidate far behind (8 KiB) does not make a later, good candidate fail: what the
 * decoder remembers of failed candidates follows the scan.
 */
static void test_resync_far(void **state)
{
	static struct sb b;
	struct auxcap_spe_decoder dec;
	struct auxcap_spe_event ev;
	size_t good;

	(void)state;
	b.len = 0;
	sb_pkt(&b, 0xc0, 0, 0); /* bad header */
	sb_pkt(&b, 0x01, 0, 0); /* a candidate ... */
	sb_pkt(&b, 0xff, 0, 0); /* ... that fails */
	while (b.len < 8193) {
		/* Filler, with a failing candidate now and then so that the scan moves on. */
		if (b.len % 1024 == 0 && b.len + 2 < 8193) {
			sb_pkt(&b, 0x01, 0, 0);
			sb_pkt(&b, 0xff, 0, 0);
		} else {
			sb_pkt(&b, 0x55, 0, 0);
		}
	}
	sb_pkt(&b, 0x01, 0, 0);
	good = b.len; /* 8194 = the failed candidate + 8192 */
	sb_branch_record(&b, 0x9000, 0x9100);

	auxcap_spe_decoder_init(&dec, b.buf, b.len, 0);
	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 1);
	assert_int_equal(ev.type, AUXCAP_SPE_EVENT_ERROR);
	assert_int_equal(ev.error.skipped, good);
	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 1);
	assert_int_equal(ev.type, AUXCAP_SPE_EVENT_SAMPLE);
	assert_int_equal(ev.sample.offset, good);
	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 0);
}

/* Resynchronisation after a TIMESTAMP, and an impossible size with an extended header. */
static void test_bad_size_resync_on_timestamp(void **state)
{
	static const unsigned char bad_ext[] = { 0x21, 0x88 }; /* counter header, 1-byte size */
	struct sb b = { .len = 0 };
	struct auxcap_spe_decoder dec;
	struct auxcap_spe_event ev;
	size_t rec2;

	(void)state;
	sb_bytes(&b, bad_ext, sizeof(bad_ext));
	sb_pkt(&b, 0x42, 0x02, 1);
	sb_pkt(&b, 0x71, 5, 8);
	rec2 = b.len;
	sb_branch_record(&b, 0x7000, 0x7100);

	auxcap_spe_decoder_init(&dec, b.buf, b.len, 0);
	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 1);
	assert_int_equal(ev.type, AUXCAP_SPE_EVENT_ERROR);
	assert_int_equal(ev.error.kind, AUXCAP_SPE_ERR_BAD_SIZE);
	assert_int_equal(ev.error.code, -EMSGSIZE);
	assert_int_equal(ev.error.offset, 0);
	assert_int_equal(ev.error.record_offset, 0);
	assert_int_equal(ev.error.header_len, 2);
	assert_int_equal(ev.error.header[1], 0x88);
	assert_int_equal(ev.error.skipped, rec2);
	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 1);
	assert_int_equal(ev.type, AUXCAP_SPE_EVENT_SAMPLE);
	assert_int_equal(ev.sample.pc, 0x7000);
	assert_int_equal(auxcap_spe_decoder_next(&dec, &ev), 0);
	check_accounting(&dec, b.len);
}

/*
 * Cut a stream of three records at every byte: the complete records before the cut are
 * samples, a cut inside a packet is TRUNCATED at that packet, a cut between packets of a record
 * is UNTERMINATED at the record, and every byte is accounted for.
 */
static void test_cut_every_byte(void **state)
{
	struct sb b = { .len = 0 };
	size_t ends[3] = { 0 }, starts[3] = { 0 }, cut;
	struct auxcap_spe_packet pkt;

	(void)state;
	starts[0] = b.len;
	sb_load_record(&b, 0x1000, 0x2000, 1);
	ends[0] = b.len;
	starts[1] = b.len;
	sb_branch_record(&b, 0x1004, 0x1100);
	ends[1] = b.len;
	starts[2] = b.len;
	sb_load_record(&b, 0x1100, 0x2008, 2);
	ends[2] = b.len;

	for (cut = 0; cut <= b.len; cut++) {
		struct auxcap_spe_decoder dec;
		struct auxcap_spe_event ev;
		uint64_t samples = 0, errors = 0, want = 0, p = 0;
		int i, inside = -1;
		bool at_packet_boundary = false;

		for (i = 0; i < 3; i++) {
			if (ends[i] <= cut)
				want++;
			else if (starts[i] < cut)
				inside = i;
		}
		/* Where does the packet the cut falls in (or after) start? */
		if (inside >= 0) {
			p = starts[inside];
			while (p < cut) {
				int r = auxcap_spe_pkt_decode(b.buf + p, b.len - p, p, &pkt);

				if (p + (uint64_t)r > cut)
					break;
				p += (uint64_t)r;
			}
			at_packet_boundary = p == cut;
		}

		auxcap_spe_decoder_init(&dec, b.buf, cut, 0);
		while (auxcap_spe_decoder_next(&dec, &ev) == 1) {
			if (ev.type == AUXCAP_SPE_EVENT_SAMPLE) {
				samples++;
				continue;
			}
			assert_true(inside >= 0);
			if (errors++)
				continue; /* the rest of a cut packet may decode as more trouble */
			assert_int_equal(ev.error.record_offset, starts[inside]);
			if (at_packet_boundary) {
				assert_int_equal(ev.error.kind, AUXCAP_SPE_ERR_UNTERMINATED);
				assert_int_equal(ev.error.offset, starts[inside]);
			} else {
				assert_int_equal(ev.error.kind, AUXCAP_SPE_ERR_TRUNCATED);
				assert_int_equal(ev.error.offset, p);
			}
		}
		assert_int_equal(samples, want);
		if (inside >= 0)
			assert_true(errors >= 1);
		else
			assert_int_equal(errors, 0);
		if (at_packet_boundary)
			assert_int_equal(errors, 1);
		check_accounting(&dec, cut);
	}
}

/* A packet line: the raw bytes column is 16 * 3 characters wide, the description follows. */
static void expect_line(const char *text, const char *bytes, const char *desc)
{
	char want[256];

	snprintf(want, sizeof(want), "%-61s %s\n", bytes, desc);
	if (!strstr(text, want))
		fail_msg("missing line \"%s\" in:\n%s", want, text);
}

/* The dump of a real capture's first record matches the lines perf report -D printed. */
static void test_dump_raw(void **state)
{
	static const unsigned char rec[] = {
		0xb0, 0xf4, 0xd3, 0x29, 0x10, 0x00, 0x80, 0xff, 0xa0, /* PC */
		0x99, 0x0b, 0x00,				      /* LAT 11 ISSUE */
		0x98, 0x0d, 0x00,				      /* LAT 13 TOT */
		0x52, 0x16, 0x00,				      /* EV */
		0x49, 0x00,					      /* LD */
		0xb2, 0xd0, 0x40, 0xd8, 0x70, 0x00, 0x00, 0xff, 0x00, /* VA */
		0x9a, 0x01, 0x00,				      /* LAT 1 XLAT */
		0x00, 0x00, 0x00,				      /* PAD */
		0x71, 0xa5, 0x1f, 0xb3, 0x20, 0x14, 0x00, 0x00, 0x00, /* TS */
		0xc0,						      /* junk */
	};
	struct auxcap_spe_stats st;
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	(void)state;
	assert_non_null(f);
	assert_int_equal(auxcap_spe_dump_raw(rec, sizeof(rec), f,
					     AUXCAP_SPE_DUMP_PACKETS | AUXCAP_SPE_DUMP_SAMPLES |
						     AUXCAP_SPE_DUMP_SUMMARY,
					     &st),
			 0);
	fclose(f);
	assert_non_null(strstr(text, ". ... ARM SPE data: size 45 bytes\n"));
	expect_line(text, ".  00000000:  b0 f4 d3 29 10 00 80 ff a0",
		    "PC 0xff80001029d3f4 el1 ns=1");
	expect_line(text, ".  00000012:  49 00", "LD GP-REG");
	expect_line(text, ".  00000020:  00 00 00", "PAD");
	expect_line(text, ".  00000023:  71 a5 1f b3 20 14 00 00 00", "TS 86447955877");
	expect_line(text, ".  0000002c:  c0", "Bad packet!");
	assert_non_null(strstr(text, "sample 0x00000000: ts=86447955877 pc=0xffff80001029d3f4 el1 "
				     "op=LD GP-REG va=0xffff000070d840d0 tot=13 issue=11 xlat=1 "
				     "ev=RETIRED,L1D-ACCESS,TLB-ACCESS\n"));
	assert_non_null(strstr(text, "error 0x0000002c: bad header (header 0xc0), skipped 1 bytes "
				     "to 0x0000002d\n"));
	assert_non_null(strstr(text, "1 errors (1 bytes skipped), 1 samples\n"));
	assert_int_equal(st.samples, 1);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.pad_bytes, 3);
	assert_int_equal(st.packet_bytes, sizeof(rec) - 4);
	free(text);
}

static void test_dump_raw_errors(void **state)
{
	static const unsigned char one[] = { 0x01 };
	struct auxcap_spe_stats st;
	FILE *ro;

	(void)state;
	memset(&st, 0xcd, sizeof(st));
	assert_int_equal(auxcap_spe_dump_raw(NULL, 1, stdout, 0, &st), -EINVAL);
	assert_int_equal(auxcap_spe_dump_raw(one, 1, NULL, 0, &st), -EINVAL);
	/* A stream that cannot be written: -EIO, stats untouched. */
	ro = fopen("/dev/null", "r");
	assert_non_null(ro);
	assert_int_equal(auxcap_spe_dump_raw(one, 1, ro, AUXCAP_SPE_DUMP_PACKETS, &st), -EIO);
	assert_int_equal(st.samples, 0xcdcdcdcdcdcdcdcdULL);
	fclose(ro);
	assert_int_equal(auxcap_spe_decoder_next(NULL, NULL), -EINVAL);
}

/* xorshift64*: a small seeded generator so a failing seed can be replayed. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/*
 * The resynchronisation rule of spe_decode.h written plainly (no memo): the first END or
 * TIMESTAMP at or after @from after which packets decode without a bad header or size up to a
 * terminator, the end of the data or 4096 bytes on.
 */
static size_t naive_resync(const unsigned char *buf, size_t len, size_t from)
{
	struct auxcap_spe_packet pkt;
	size_t p, cand, q;
	int r;

	for (p = from; p < len; p++) {
		if (buf[p] == 0x01)
			cand = p + 1;
		else if (buf[p] == 0x71 && len - p >= 9)
			cand = p + 9;
		else
			continue;
		for (q = cand;; q += (size_t)r) {
			if (q >= len || q - cand >= 4096)
				return cand;
			r = auxcap_spe_pkt_decode(buf + q, len - q, q, &pkt);
			if (r == -ENODATA)
				return cand;
			if (r < 0)
				break;
			if (pkt.type == AUXCAP_SPE_PKT_END || pkt.type == AUXCAP_SPE_PKT_TIMESTAMP)
				return cand;
		}
	}
	return len;
}

/*
 * Decode @len bytes with packet events on and check the invariants: events move forward, every
 * byte is covered exactly once by a packet or an error skip, the decoder ends, and the stats
 * agree with the events.
 */
static void fuzz_one(const unsigned char *buf, size_t len, unsigned char *cover)
{
	struct auxcap_spe_decoder dec;
	struct auxcap_spe_event ev;
	uint64_t events = 0, samples = 0, errors = 0, i, end;

	memset(cover, 0, len);
	auxcap_spe_decoder_init(&dec, buf, len, AUXCAP_SPE_DECODER_PACKETS);
	while (auxcap_spe_decoder_next(&dec, &ev) == 1) {
		assert_true(++events <= 3 * (uint64_t)len + 3);
		switch (ev.type) {
		case AUXCAP_SPE_EVENT_PACKET:
			end = ev.packet.offset + ev.packet.size;
			assert_true(ev.packet.size > 0 && end <= len);
			for (i = ev.packet.offset; i < end; i++)
				cover[i]++;
			break;
		case AUXCAP_SPE_EVENT_SAMPLE:
			assert_true(ev.sample.offset + ev.sample.size <= len);
			samples++;
			break;
		case AUXCAP_SPE_EVENT_ERROR:
			end = ev.error.offset + ev.error.skipped;
			assert_true(end <= len);
			if (ev.error.kind != AUXCAP_SPE_ERR_UNTERMINATED)
				assert_int_equal(end, naive_resync(buf, len, ev.error.offset + 1));
			for (i = ev.error.offset; i < end; i++)
				cover[i]++;
			errors++;
			break;
		}
	}
	for (i = 0; i < len; i++)
		if (cover[i] != 1)
			fail_msg("byte %" PRIu64 " of %zu covered %u times", i, len, cover[i]);
	check_accounting(&dec, len);
	assert_int_equal(dec.stats.samples, samples);
	assert_int_equal(dec.stats.errors, errors);
}

/* The text dump of the same bytes writes every line and accounts like the decoder. */
static void fuzz_dump(const unsigned char *buf, size_t len)
{
	struct auxcap_spe_decoder dec;
	struct auxcap_spe_event ev;
	struct auxcap_spe_stats st;
	FILE *null = fopen("/dev/null", "w");

	assert_non_null(null);
	assert_int_equal(auxcap_spe_dump_raw(buf, len, null,
					     AUXCAP_SPE_DUMP_PACKETS | AUXCAP_SPE_DUMP_SAMPLES |
						     AUXCAP_SPE_DUMP_SUMMARY,
					     &st),
			 0);
	fclose(null);
	auxcap_spe_decoder_init(&dec, buf, len, 0);
	while (auxcap_spe_decoder_next(&dec, &ev) == 1)
		;
	assert_memory_equal(&st, &dec.stats, sizeof(st));
}

static void test_fuzz(void **state)
{
	static unsigned char buf[4096], cover[4096];
	const char *env = getenv("AUXCAP_FUZZ_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : 0x5eed5bedULL;
	uint64_t s = seed ? seed : 1;
	unsigned int iter, i;
	struct sb valid = { .len = 0 };

	(void)state;
	print_message("fuzz seed 0x%" PRIx64 " (set AUXCAP_FUZZ_SEED to replay)\n", seed);

	/* A valid stream to mutate. */
	for (i = 0; valid.len + 64 < sizeof(buf); i++) {
		if (i % 3 == 2)
			sb_branch_record(&valid, 0x1000 + i, 0x2000 + i);
		else
			sb_load_record(&valid, 0x1000 + i, 0x800000 + 8 * i, i);
		sb_pad(&valid, i % 5);
	}

	for (iter = 0; iter < 3000; iter++) {
		size_t len = (size_t)(rng_next(&s) % sizeof(buf)) + 1;
		unsigned int mode = iter % 3;

		if (mode == 0) {
			/* Pure random bytes. */
			for (i = 0; i < len; i++)
				buf[i] = (unsigned char)rng_next(&s);
		} else {
			/* A valid stream, cut anywhere and with random bytes flipped. */
			size_t start = (size_t)(rng_next(&s) % 64);
			unsigned int flips = mode == 1 ? 1 + (unsigned int)(rng_next(&s) % 4)
						       : (unsigned int)(rng_next(&s) % 64);

			if (len > valid.len - start)
				len = valid.len - start;
			memcpy(buf, valid.buf + start, len);
			for (i = 0; i < flips; i++)
				buf[rng_next(&s) % len] = (unsigned char)rng_next(&s);
		}
		fuzz_one(buf, len, cover);
		if (iter % 10 == 0)
			fuzz_dump(buf, len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_packet_events),
		cmocka_unit_test(test_empty_record),
		cmocka_unit_test(test_bad_header_resync),
		cmocka_unit_test(test_bad_size_resync_on_timestamp),
		cmocka_unit_test(test_resync_span_and_merge),
		cmocka_unit_test(test_resync_far),
		cmocka_unit_test(test_cut_every_byte),
		cmocka_unit_test(test_dump_raw),
		cmocka_unit_test(test_dump_raw_errors),
		cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
