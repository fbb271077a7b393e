/* SPDX-License-Identifier: BSD-3-Clause */
/* Intel BTS record decoder, snapshot overlap trimming and text writer.  See bts_decode.h. */
#include "bts_decode.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

static uint64_t get_le64(const unsigned char *p)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

void auxcap_bts_decoder_init(struct auxcap_bts_decoder *dec, const void *buf, size_t len)
{
	memset(dec, 0, sizeof(*dec));
	dec->buf = buf;
	dec->len = buf ? len : 0;
}

int auxcap_bts_decoder_next(struct auxcap_bts_decoder *dec, struct auxcap_bts_event *ret)
{
	struct auxcap_bts_branch br;
	const unsigned char *p;
	size_t left;

	if (!dec || !ret)
		return -EINVAL;

	for (;;) {
		left = dec->len - dec->pos;
		if (!left)
			return 0;
		if (left < AUXCAP_BTS_RECORD_SIZE) {
			memset(ret, 0, sizeof(*ret));
			ret->type = AUXCAP_BTS_EVENT_ERROR;
			ret->error.code = -ENODATA;
			ret->error.offset = dec->pos;
			ret->error.size = left;
			dec->stats.partial_bytes += left;
			dec->stats.errors++;
			dec->pos = dec->len;
			return 1;
		}

		p = dec->buf + dec->pos;
		memset(&br, 0, sizeof(br));
		br.offset = dec->pos;
		br.from = get_le64(p);
		br.to = get_le64(p + 8);
		br.flags = get_le64(p + 16);
		dec->pos += AUXCAP_BTS_RECORD_SIZE;

		if (!br.from && !br.to) {
			dec->stats.padding++;
			continue;
		}
		br.predicted = br.flags & AUXCAP_BTS_FLAG_PREDICTED;
		if (!br.from) {
			br.kind = AUXCAP_BTS_TRACE_BEGIN;
			dec->stats.begins++;
		} else if (!br.to) {
			br.kind = AUXCAP_BTS_TRACE_END;
			dec->stats.ends++;
		} else {
			br.kind = AUXCAP_BTS_BRANCH;
			dec->stats.branches++;
		}
		dec->stats.records++;
		if (br.predicted)
			dec->stats.predicted++;

		memset(ret, 0, sizeof(*ret));
		ret->type = AUXCAP_BTS_EVENT_BRANCH;
		ret->branch = br;
		return 1;
	}
}

size_t auxcap_bts_find_overlap(const void *prev, size_t prev_len, const void *next, size_t next_len)
{
	const unsigned char *a = prev, *b = next;
	size_t l;

	if (!a || !b)
		return 0;
	l = prev_len < next_len ? prev_len : next_len;
	for (; l > 0; l = l > AUXCAP_BTS_RECORD_SIZE ? l - AUXCAP_BTS_RECORD_SIZE : 0) {
		if (!memcmp(a + prev_len - l, b, l))
			return l;
	}
	return 0;
}

const char *auxcap_bts_kind_name(enum auxcap_bts_kind kind)
{
	switch (kind) {
	case AUXCAP_BTS_BRANCH:
		return "branch";
	case AUXCAP_BTS_TRACE_BEGIN:
		return "trace-begin";
	case AUXCAP_BTS_TRACE_END:
		return "trace-end";
	}
	return "unknown";
}

int auxcap_bts_branch_print(FILE *out, const struct auxcap_bts_branch *br)
{
	if (!out || !br)
		return -EINVAL;
	fprintf(out, ".  %08" PRIx64 ": %-11s 0x%016" PRIx64 " -> 0x%016" PRIx64 "%s", br->offset,
		auxcap_bts_kind_name(br->kind), br->from, br->to, br->predicted ? " pred" : "");
	if (br->flags & ~AUXCAP_BTS_FLAG_PREDICTED)
		fprintf(out, " flags=0x%" PRIx64, br->flags);
	fputc('\n', out);
	return ferror(out) ? -EIO : 0;
}

/* perf report -D style: raw bytes in 24 columns, then from -> to and pred/miss. */
static void raw_record_line(FILE *out, const unsigned char *p, size_t off, size_t n)
{
	size_t i;

	fprintf(out, ".  %08zx: ", off);
	for (i = 0; i < n; i++)
		fprintf(out, " %02x", p[i]);
	for (; i < AUXCAP_BTS_RECORD_SIZE; i++)
		fputs("   ", out);
	if (n < AUXCAP_BTS_RECORD_SIZE)
		fputs(" Bad record!\n", out);
	else
		fprintf(out, " %" PRIx64 " -> %" PRIx64 " %s\n", get_le64(p), get_le64(p + 8),
			get_le64(p + 16) & AUXCAP_BTS_FLAG_PREDICTED ? "pred" : "miss");
}

int auxcap_bts_dump_raw(const void *buf, size_t len, FILE *out, unsigned int flags,
			struct auxcap_bts_stats *ret)
{
	struct auxcap_bts_decoder dec;
	struct auxcap_bts_event ev;
	uint64_t padding = 0;
	int err = 0;

	if ((!buf && len) || !out)
		return -EINVAL;

	auxcap_bts_decoder_init(&dec, buf, len);
	fprintf(out, ". ... Intel BTS data: size %zu bytes\n", len);
	if (flags & AUXCAP_BTS_DUMP_RAW) {
		const unsigned char *p = buf;
		size_t off;

		for (off = 0; off < len; off += AUXCAP_BTS_RECORD_SIZE)
			raw_record_line(out, p + off, off,
					len - off < AUXCAP_BTS_RECORD_SIZE
						? len - off
						: AUXCAP_BTS_RECORD_SIZE);
		while (auxcap_bts_decoder_next(&dec, &ev) == 1)
			; /* the accounting only */
		flags &= ~(unsigned int)AUXCAP_BTS_DUMP_PADDING;
	}
	while (!err && !(flags & AUXCAP_BTS_DUMP_RAW) && auxcap_bts_decoder_next(&dec, &ev) == 1) {
		/* Padding records are skipped by the decoder; show them from the count. */
		if ((flags & AUXCAP_BTS_DUMP_PADDING) && dec.stats.padding != padding) {
			uint64_t first = (ev.type == AUXCAP_BTS_EVENT_BRANCH ? ev.branch.offset
									     : ev.error.offset) -
					 (dec.stats.padding - padding) * AUXCAP_BTS_RECORD_SIZE;

			fprintf(out, ".  %08" PRIx64 ": padding     %" PRIu64 " record(s)\n", first,
				dec.stats.padding - padding);
			padding = dec.stats.padding;
		}
		if (ev.type == AUXCAP_BTS_EVENT_BRANCH) {
			err = auxcap_bts_branch_print(out, &ev.branch);
		} else {
			fprintf(out,
				"error 0x%08" PRIx64 ": partial record of %" PRIu64
				" bytes at the end of the data (BTS records are %d bytes)\n",
				ev.error.offset, ev.error.size, AUXCAP_BTS_RECORD_SIZE);
		}
	}
	if (!err && (flags & AUXCAP_BTS_DUMP_PADDING) && dec.stats.padding != padding)
		fprintf(out, ".  %08" PRIx64 ": padding     %" PRIu64 " record(s)\n",
			(uint64_t)(len - dec.stats.partial_bytes) -
				(dec.stats.padding - padding) * AUXCAP_BTS_RECORD_SIZE,
			dec.stats.padding - padding);
	if (err)
		return err;
	if (flags & AUXCAP_BTS_DUMP_SUMMARY)
		fprintf(out,
			"intel_bts: %zu bytes: %" PRIu64 " branches, %" PRIu64
			" trace begins, %" PRIu64 " trace ends, %" PRIu64 " predicted, %" PRIu64
			" padding records, %" PRIu64 " errors\n",
			len, dec.stats.branches, dec.stats.begins, dec.stats.ends,
			dec.stats.predicted, dec.stats.padding, dec.stats.errors);
	if (fflush(out) || ferror(out))
		return -EIO;
	if (ret)
		*ret = dec.stats;
	return 0;
}
