/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ordinary records of a capture in perf-time order, the way perf orders them: records
 * are buffered in a min-heap by (time, file order); at each FINISHED_ROUND, those not later
 * than the newest time seen at the previous FINISHED_ROUND are final (every ring was
 * drained once in between, so nothing earlier can still come).  At the end of the file
 * everything is final.  Memory is bounded by the records of two rounds.
 *
 * AUXTRACE records (decoded by the queues) and the bookkeeping records (AUXTRACE_INFO,
 * TIME_CONV, FINISHED_*, ID_INDEX, header records) are not part of this stream.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "decode_int.h"

static bool entry_less(const struct sb_entry *a, const struct sb_entry *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void sift_up(struct sb_cursor *sb, size_t i)
{
	struct sb_entry e = sb->heap[i];

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!entry_less(&e, &sb->heap[p]))
			break;
		sb->heap[i] = sb->heap[p];
		i = p;
	}
	sb->heap[i] = e;
}

static void sift_down(struct sb_cursor *sb, size_t i)
{
	struct sb_entry e = sb->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= sb->n)
			break;
		if (c + 1 < sb->n && entry_less(&sb->heap[c + 1], &sb->heap[c]))
			c++;
		if (!entry_less(&sb->heap[c], &e))
			break;
		sb->heap[i] = sb->heap[c];
		i = c;
	}
	sb->heap[i] = e;
}

int sb_init(struct sb_cursor *sb, struct auxcap_perf_reader *rd)
{
	memset(sb, 0, sizeof(*sb));
	sb->rd = rd;
	return auxcap_perf_reader_rewind(rd);
}

void sb_fini(struct sb_cursor *sb)
{
	for (size_t i = 0; i < sb->n; i++)
		free(sb->heap[i].err);
	free(sb->heap);
	sb->heap = NULL;
	sb->n = sb->cap = 0;
}

/* Records of the merged stream: the kernel's, and AUXTRACE_ERROR. */
static bool wanted(uint32_t type)
{
	return (type > 0 && type < AUXCAP_PERF_RECORD_HEADER_ATTR) ||
	       type == AUXCAP_PERF_RECORD_AUXTRACE_ERROR;
}

static int push(struct sb_cursor *sb, const struct auxcap_perf_event *ev)
{
	struct sb_entry *e;
	bool has_time;
	uint64_t t = decode_record_time(ev, &has_time);

	if (sb->n == sb->cap) {
		size_t cap = sb->cap ? 2 * sb->cap : 1024;
		struct sb_entry *nh = realloc(sb->heap, cap * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		sb->heap = nh;
		sb->cap = cap;
	}
	e = &sb->heap[sb->n];
	memset(e, 0, sizeof(*e));
	if (has_time) {
		if (t > sb->max_time)
			sb->max_time = t;
	} else {
		t = sb->max_time;
	}
	e->time = t;
	e->has_time = has_time;
	e->seq = sb->seq++;
	e->type = ev->rec.type;
	e->data = ev->rec.data;
	e->evsel = ev->evsel;
	if (ev->rec.type == AUXCAP_PERF_RECORD_AUXTRACE_ERROR) {
		e->err = malloc(sizeof(*e->err));
		if (!e->err)
			return -ENOMEM;
		*e->err = ev->u.auxtrace_error;
	}
	sb->n++;
	sift_up(sb, sb->n - 1);
	return 0;
}

/* Read records until the next FINISHED_ROUND or the end. */
static int read_round(struct sb_cursor *sb)
{
	struct auxcap_perf_event ev;
	int r;

	for (;;) {
		r = auxcap_perf_reader_next(sb->rd, &ev);
		if (r < 0)
			return r;
		if (r == 0) {
			sb->eof = true;
			sb->limit = UINT64_MAX;
			return 0;
		}
		if (ev.rec.type == AUXCAP_PERF_RECORD_FINISHED_ROUND && !sb->no_rounds) {
			sb->limit = sb->next_flush;
			sb->next_flush = sb->max_time;
			return 0;
		}
		if (!wanted(ev.rec.type))
			continue;
		r = push(sb, &ev);
		if (r < 0)
			return r;
	}
}

int sb_peek(struct sb_cursor *sb, const struct sb_entry **ret)
{
	int r;

	for (;;) {
		if (sb->n && (sb->eof || sb->heap[0].time <= sb->limit)) {
			*ret = &sb->heap[0];
			return 1;
		}
		if (sb->eof)
			return 0;
		r = read_round(sb);
		if (r < 0)
			return r;
	}
}

void sb_pop(struct sb_cursor *sb)
{
	if (!sb->n)
		return;
	free(sb->heap[0].err);
	sb->heap[0] = sb->heap[--sb->n];
	if (sb->n)
		sift_down(sb, 0);
}
