/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the Arm SPE packet and record decoder (aux/arm_spe).
 *
 * The input is a raw SPE byte stream.  It goes through every layer: the record decoder with
 * and without packet events, the bare packet iterator with explicit resynchronisation, the
 * packet field decoders and descriptions, and the text writers.  Checked: every byte is
 * accounted exactly once (packet + pad + error bytes = input length, as documented), the
 * iterator makes progress and covers the input, events come in stream order inside the input,
 * descriptions report the length they need (snprintf contract) for any buffer size.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "spe_decode.h"

#define MAX_INPUT (256u * 1024)

static FILE *g_null;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!g_null)
		g_null = fopen("/dev/null", "w");
	if (!g_null)
		abort();
	return 0;
}

static void check_packet(const struct auxcap_spe_packet *p, size_t size)
{
	char big[512], small[7];
	int n;

	FUZZ_CHECK(p->type >= AUXCAP_SPE_PKT_PAD && p->type <= AUXCAP_SPE_PKT_CONTEXT);
	FUZZ_CHECK(p->size >= 1 && p->offset + p->size <= size);
	if (p->type != AUXCAP_SPE_PKT_PAD) {
		FUZZ_CHECK(p->header_size == 1 || p->header_size == 2);
		FUZZ_CHECK(p->size == p->header_size + p->payload_size);
		FUZZ_CHECK(p->size <= AUXCAP_SPE_MAX_PACKET_SIZE);
	}
	fuzz_strlen(auxcap_spe_pkt_name(p->type));
	n = auxcap_spe_pkt_desc(p, big, sizeof(big));
	FUZZ_CHECK(n >= 0 && (size_t)n < sizeof(big) && strlen(big) == (size_t)n);
	FUZZ_CHECK(auxcap_spe_pkt_desc(p, small, sizeof(small)) == n);
	FUZZ_CHECK(strlen(small) == ((size_t)n < sizeof(small) ? (size_t)n : sizeof(small) - 1));
	FUZZ_CHECK(auxcap_spe_pkt_desc(p, NULL, 0) == n);
	if (p->type == AUXCAP_SPE_PKT_ADDRESS) {
		struct auxcap_spe_addr a;

		auxcap_spe_addr_decode(p, &a);
	} else if (p->type == AUXCAP_SPE_PKT_OP_TYPE) {
		struct auxcap_spe_op op;

		auxcap_spe_op_decode(p, &op);
		FUZZ_CHECK(op.cls <= AUXCAP_SPE_OP_CLASS_BRANCH);
	}
	FUZZ_CHECK(auxcap_spe_packet_print(g_null, p) == 0);
}

static void check_sample(const struct auxcap_spe_sample *s, size_t size)
{
	FUZZ_CHECK(s->size >= 1 && s->offset + s->size <= size);
	FUZZ_CHECK(s->el <= 3 && s->target_el <= 3);
	FUZZ_CHECK(auxcap_spe_sample_print(g_null, s) == 0);
}

static void decode(const uint8_t *data, size_t size, unsigned int flags)
{
	struct auxcap_spe_decoder dec;
	struct auxcap_spe_event ev;
	uint64_t samples = 0, errors = 0, last = 0;
	int r;

	auxcap_spe_decoder_init(&dec, data, size, flags);
	while ((r = auxcap_spe_decoder_next(&dec, &ev)) == 1) {
		switch (ev.type) {
		case AUXCAP_SPE_EVENT_PACKET:
			FUZZ_CHECK(flags & AUXCAP_SPE_DECODER_PACKETS);
			check_packet(&ev.packet, size);
			break;
		case AUXCAP_SPE_EVENT_SAMPLE:
			check_sample(&ev.sample, size);
			FUZZ_CHECK(samples == 0 || ev.sample.offset >= last);
			last = ev.sample.offset;
			samples++;
			break;
		case AUXCAP_SPE_EVENT_ERROR:
			FUZZ_CHECK(ev.error.kind >= AUXCAP_SPE_ERR_BAD_HEADER &&
				   ev.error.kind <= AUXCAP_SPE_ERR_UNTERMINATED);
			FUZZ_CHECK(ev.error.code == -EBADMSG || ev.error.code == -EMSGSIZE ||
				   ev.error.code == -ENODATA);
			FUZZ_CHECK(ev.error.offset <= size && ev.error.record_offset <= ev.error.offset);
			FUZZ_CHECK(ev.error.skipped <= size - ev.error.offset);
			FUZZ_CHECK(ev.error.header_len <= 2);
			fuzz_strlen(auxcap_spe_error_str(ev.error.kind));
			FUZZ_CHECK(auxcap_spe_error_print(g_null, &ev.error, data, size) == 0);
			errors++;
			break;
		default:
			FUZZ_CHECK(!"unknown event");
		}
		FUZZ_CHECK(auxcap_spe_decoder_offset(&dec) <= size);
	}
	FUZZ_CHECK(r == 0);
	FUZZ_CHECK(auxcap_spe_decoder_next(&dec, &ev) == 0);
	FUZZ_CHECK(auxcap_spe_decoder_offset(&dec) == size);
	FUZZ_CHECK(dec.stats.samples == samples && dec.stats.errors == errors);
	FUZZ_CHECK(dec.stats.packet_bytes + dec.stats.pad_bytes + dec.stats.error_bytes == size);
}

/* The bare iterator: packets, and resync past every error, cover the input exactly. */
static void iterate(const uint8_t *data, size_t size)
{
	struct auxcap_spe_pkt_iter it;
	struct auxcap_spe_packet p;
	uint64_t covered = 0;
	int r;

	auxcap_spe_pkt_iter_init(&it, data, size);
	for (;;) {
		uint64_t at = auxcap_spe_pkt_iter_offset(&it);

		r = auxcap_spe_pkt_next(&it, &p);
		if (r == 0)
			break;
		if (r == 1) {
			FUZZ_CHECK(p.offset == at);
			check_packet(&p, size);
			covered += p.size;
			continue;
		}
		FUZZ_CHECK(r == -EBADMSG || r == -EMSGSIZE || r == -ENODATA);
		FUZZ_CHECK(auxcap_spe_pkt_iter_offset(&it) == at); /* stays at the bad packet */
		{
			uint64_t skipped = auxcap_spe_pkt_iter_resync(&it);

			FUZZ_CHECK(skipped > 0); /* progress */
			FUZZ_CHECK(auxcap_spe_pkt_iter_offset(&it) == at + skipped);
			covered += skipped;
		}
	}
	FUZZ_CHECK(auxcap_spe_pkt_iter_offset(&it) == size && covered == size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned int dump_flags[] = {
		0,
		AUXCAP_SPE_DUMP_PACKETS | AUXCAP_SPE_DUMP_SAMPLES | AUXCAP_SPE_DUMP_SUMMARY,
	};
	struct auxcap_spe_stats st;

	LLVMFuzzerInitialize(NULL, NULL);
	if (size > MAX_INPUT)
		return 0;
	decode(data, size, 0);
	decode(data, size, AUXCAP_SPE_DECODER_PACKETS);
	iterate(data, size);
	if (size) {
		struct auxcap_spe_packet p;
		int r = auxcap_spe_pkt_decode(data, size, 7, &p);

		FUZZ_CHECK(r != 0);
		if (r > 0)
			FUZZ_CHECK(p.offset == 7 && (size_t)r == p.size && (size_t)r <= size);
	}
	for (size_t i = 0; i < sizeof(dump_flags) / sizeof(dump_flags[0]); i++) {
		FUZZ_CHECK(auxcap_spe_dump_raw(data, size, g_null, dump_flags[i], &st) == 0);
		FUZZ_CHECK(st.packet_bytes + st.pad_bytes + st.error_bytes == size);
	}
	return 0;
}
