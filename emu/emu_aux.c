/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The AUX producer (spec 3) shared by the driver personalities, and the generic trace
 * hardware they program.
 *
 * emu_aux_begin/flag/skip/end are perf_aux_output_begin/flag/skip/end: the driver opens a
 * transaction, the hardware writes, the driver ends it with the byte count; end() writes the
 * PERF_RECORD_AUX first, then publishes aux_head (release), then applies the watermark rule
 * (>=, round down) and, with TRUNCATED, disables the event before waking the consumer.
 *
 * emu_hw_write() is the hardware: it copies bytes at hw.pos until hw.limit, where it calls
 * the driver's interrupt handler, which ends the transaction and usually opens the next.
 */
#include <errno.h>
#include <string.h>

#include "barrier.h"
#include "emu_int.h"

int emu_aux_begin(struct emu_event *ev)
{
	struct emu_buffer *b = ev->buf;
	struct emu_handle *h = &ev->h;
	uint64_t tail;

	if (!b || !b->aux || !b->aux_mmap_count)
		return -ENOENT;
	if (b->aux_nest || h->open)
		return -EBUSY; /* no nesting */
	b->aux_nest = true;
	h->open = true;
	h->head = b->aux_head;
	h->size = 0;
	h->flags = 0;
	h->wakeup = 0;
	if (b->aux_overwrite)
		return 0; /* size and wakeup mean nothing in overwrite mode */

	/* Pairs with the consumer's release of aux_tail: its reads are done. */
	tail = auxcap_load_acquire_u64(&b->pc->aux_tail);
	h->wakeup = b->aux_wakeup + b->aux_watermark;
	if (b->aux_head - tail < b->aux_size)
		h->size = (tail - b->aux_head - 1) & (b->aux_size - 1);
	if (h->size == 0) {
		/* No room: the event goes OFF, the consumer is woken, no record is written. */
		h->open = false;
		b->aux_nest = false;
		ev->stats.no_space++;
		emu_event_disable(ev);
		emu_buffer_wakeup(ev, b);
		return -ENOSPC;
	}
	return 0;
}

void emu_aux_flag(struct emu_event *ev, uint64_t flags)
{
	/* OVERWRITE is the core's to set, in end(). */
	ev->h.flags |= flags & ~(uint64_t)PERF_AUX_FLAG_OVERWRITE;
}

/* Normal mode: a wakeup is due when aux_head moved a watermark past aux_wakeup (spec 3.6). */
static bool emu_aux_need_wakeup(struct emu_buffer *b)
{
	if (b->aux_overwrite || !b->aux_watermark)
		return false;
	if (b->aux_head - b->aux_wakeup < b->aux_watermark)
		return false;
	b->aux_wakeup = emu_rounddown(b->aux_head, b->aux_watermark);
	return true;
}

int emu_aux_skip(struct emu_event *ev, uint64_t n)
{
	struct emu_buffer *b = ev->buf;
	struct emu_handle *h = &ev->h;

	if (n > h->size)
		return -ENOSPC; /* always so in overwrite mode, where size is 0 */
	b->aux_head += n;
	auxcap_store_release_u64(&b->pc->aux_head, b->aux_head);
	if (emu_aux_need_wakeup(b)) {
		emu_buffer_wakeup(ev, b);
		h->wakeup = b->aux_wakeup + b->aux_watermark;
	}
	h->head = b->aux_head;
	h->size -= n;
	ev->stats.padding += n;
	return 0;
}

void emu_aux_end(struct emu_event *ev, uint64_t size)
{
	struct emu_buffer *b = ev->buf;
	struct emu_handle *h = &ev->h;
	uint64_t rec[3], flags;
	bool wakeup;
	int r;

	if (!h->open)
		return;
	wakeup = h->flags & PERF_AUX_FLAG_TRUNCATED;
	if (b->aux_overwrite) {
		h->flags |= PERF_AUX_FLAG_OVERWRITE;
		rec[0] = h->head;
		b->aux_head = h->head;
	} else {
		h->flags &= ~(uint64_t)PERF_AUX_FLAG_OVERWRITE;
		rec[0] = b->aux_head;
		b->aux_head += size;
	}
	flags = h->flags;
	if (size || (flags & ~(uint64_t)PERF_AUX_FLAG_OVERWRITE)) {
		rec[1] = size;
		rec[2] = flags;
		r = emu_data_output(ev, PERF_RECORD_AUX, 0, rec, sizeof(rec), 0);
		if (r == 0)
			ev->stats.aux_records++;
		else
			ev->stats.aux_records_lost++;
		ev->stats.truncated += !!(flags & PERF_AUX_FLAG_TRUNCATED);
		ev->stats.partial += !!(flags & PERF_AUX_FLAG_PARTIAL);
		ev->stats.collision += !!(flags & PERF_AUX_FLAG_COLLISION);
	}
	/* The record is in the data ring before aux_head covers its bytes. */
	auxcap_store_release_u64(&b->pc->aux_head, b->aux_head);
	if (emu_aux_need_wakeup(b))
		wakeup = true;
	h->open = false;
	h->size = 0;
	b->aux_nest = false;
	if (wakeup) {
		if (flags & PERF_AUX_FLAG_TRUNCATED)
			emu_event_disable(ev);
		emu_buffer_wakeup(ev, b);
	}
}

void emu_aux_pad(struct emu_event *ev, uint64_t pos, uint64_t n)
{
	struct emu_buffer *b = ev->buf;

	while (n) {
		uint64_t off = pos % b->aux_size;
		uint64_t k = b->aux_size - off < n ? b->aux_size - off : n;

		memset(b->aux + off, 0, k);
		pos += k;
		n -= k;
	}
}

size_t emu_hw_write(struct emu_event *ev, const unsigned char *bytes, size_t len)
{
	struct emu_hw *hw = &ev->hw;
	size_t done = 0;

	while (done < len && ev->enabled && hw->active && ev->buf && ev->buf->aux) {
		uint64_t n = len - done;
		uint64_t off;

		if (hw->pos >= hw->limit) {
			ev->stats.interrupts++;
			ev->pers->irq(ev);
			if (hw->active && hw->pos >= hw->limit)
				hw->active = false; /* a driver that cannot go on */
			continue;
		}
		if (n > hw->limit - hw->pos)
			n = hw->limit - hw->pos;
		off = hw->pos % hw->wrap;
		if (n > hw->wrap - off)
			n = hw->wrap - off;
		memcpy(ev->buf->aux + off, bytes + done, n);
		hw->pos += n;
		done += n;
		ev->stats.produced += n;
		if (hw->pos == hw->limit) {
			ev->stats.interrupts++;
			ev->pers->irq(ev);
			if (hw->active && hw->pos >= hw->limit)
				hw->active = false;
		}
	}
	ev->stats.dropped += len - done;
	return done;
}

void emu_event_sched_in(struct emu_event *ev)
{
	if (!ev->pers)
		return;
	/* Before pmu::add, unless the driver marked the event (spec 3.9). */
	if (!ev->itrace_started)
		emu_data_itrace_start(ev);
	if (!ev->hw.active && !ev->h.open)
		ev->pers->start(ev);
}

void emu_event_sched_out(struct emu_event *ev)
{
	if (!ev->pers)
		return;
	ev->pers->stop(ev);
	ev->hw.active = false;
}
