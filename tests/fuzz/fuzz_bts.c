/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the Intel BTS decoder (aux/intel_bts).
 *
 * The input is a raw BTS byte stream.  Checked against the documented accounting: records
 * come at 24-byte steps in order, (records + padding) * 24 + partial_bytes equals the input
 * length, at most one error (the trailing partial record), per-kind counts add up; the overlap
 * of the two halves of the input (as two consecutive snapshots) is a multiple of 24 short of
 * the shorter one, and its bytes really repeat; the text writers handle every record.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bts_decode.h"
#include "fuzz.h"

#define MAX_INPUT (64u * 1024)

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

static void check_decode(const uint8_t *data, size_t size)
{
	struct auxcap_bts_decoder dec;
	struct auxcap_bts_event ev;
	struct auxcap_bts_stats *st = &dec.stats;
	uint64_t last = 0, n = 0, branches = 0, begins = 0, ends = 0, pred = 0, errors = 0;
	int r;

	auxcap_bts_decoder_init(&dec, data, size);
	while ((r = auxcap_bts_decoder_next(&dec, &ev)) == 1) {
		if (ev.type == AUXCAP_BTS_EVENT_ERROR) {
			FUZZ_CHECK(ev.error.code == -ENODATA);
			FUZZ_CHECK(ev.error.size >= 1 && ev.error.size < AUXCAP_BTS_RECORD_SIZE);
			FUZZ_CHECK(ev.error.offset + ev.error.size == size);
			errors++;
			continue;
		}
		FUZZ_CHECK(ev.type == AUXCAP_BTS_EVENT_BRANCH);
		FUZZ_CHECK(ev.branch.offset % AUXCAP_BTS_RECORD_SIZE == 0);
		FUZZ_CHECK(ev.branch.offset + AUXCAP_BTS_RECORD_SIZE <= size);
		FUZZ_CHECK(n == 0 || ev.branch.offset > last);
		FUZZ_CHECK(ev.branch.from || ev.branch.to); /* padding is skipped */
		FUZZ_CHECK(ev.branch.predicted == !!(ev.branch.flags & AUXCAP_BTS_FLAG_PREDICTED));
		switch (ev.branch.kind) {
		case AUXCAP_BTS_BRANCH:
			FUZZ_CHECK(ev.branch.from && ev.branch.to);
			branches++;
			break;
		case AUXCAP_BTS_TRACE_BEGIN:
			FUZZ_CHECK(!ev.branch.from);
			begins++;
			break;
		case AUXCAP_BTS_TRACE_END:
			FUZZ_CHECK(!ev.branch.to);
			ends++;
			break;
		default:
			FUZZ_CHECK(!"unknown kind");
		}
		pred += ev.branch.predicted;
		fuzz_strlen(auxcap_bts_kind_name(ev.branch.kind));
		FUZZ_CHECK(auxcap_bts_branch_print(g_null, &ev.branch) == 0);
		last = ev.branch.offset;
		n++;
	}
	FUZZ_CHECK(r == 0);
	FUZZ_CHECK(auxcap_bts_decoder_next(&dec, &ev) == 0);
	FUZZ_CHECK(st->records == n && st->branches == branches && st->begins == begins &&
		   st->ends == ends && st->predicted == pred && st->errors == errors);
	FUZZ_CHECK(errors <= 1);
	FUZZ_CHECK((st->records + st->padding) * AUXCAP_BTS_RECORD_SIZE + st->partial_bytes ==
		   size);
	FUZZ_CHECK(st->partial_bytes == size % AUXCAP_BTS_RECORD_SIZE);
}

static void check_overlap(const uint8_t *data, size_t size)
{
	size_t half = size / 2, prev_len = half, next_len = size - half, o, m;
	const uint8_t *prev = data, *next = data + half;

	o = auxcap_bts_find_overlap(prev, prev_len, next, next_len);
	m = prev_len < next_len ? prev_len : next_len;
	FUZZ_CHECK(o <= m);
	if (o) {
		FUZZ_CHECK((m - o) % AUXCAP_BTS_RECORD_SIZE == 0);
		FUZZ_CHECK(!memcmp(prev + prev_len - o, next, o));
	}
	FUZZ_CHECK(auxcap_bts_find_overlap(NULL, 0, next, next_len) == 0);
	FUZZ_CHECK(auxcap_bts_find_overlap(prev, prev_len, NULL, 0) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned int flags[] = {
		0,
		AUXCAP_BTS_DUMP_SUMMARY | AUXCAP_BTS_DUMP_PADDING,
		AUXCAP_BTS_DUMP_RAW | AUXCAP_BTS_DUMP_SUMMARY,
	};
	struct auxcap_bts_stats st;

	LLVMFuzzerInitialize(NULL, NULL);
	if (size > MAX_INPUT)
		return 0;
	check_decode(data, size);
	check_overlap(data, size);
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		memset(&st, 0, sizeof(st));
		FUZZ_CHECK(auxcap_bts_dump_raw(data, size, g_null, flags[i], &st) == 0);
		FUZZ_CHECK((st.records + st.padding) * AUXCAP_BTS_RECORD_SIZE + st.partial_bytes ==
			   size);
	}
	return 0;
}
