/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intel BTS personality (spec 5.2).
 *
 * The AUX area is one physically contiguous chunk (AUX_NO_SG) holding whole 24-byte records;
 * the bytes at its end that cannot hold a record are zeroed and stepped over with skip.  Each
 * start computes the absolute maximum (bounded by the free space, rounded to records, and by
 * the wakeup point plus the 4080-byte safety margin) and the PMI threshold (4080 bytes before
 * it when there is room, else one record, else the maximum itself).  Reaching the absolute
 * maximum means records were lost: TRUNCATED.  Snapshot mode: the hardware wraps in the
 * chunk without interrupts; a stop reports the in-buffer offset and the whole buffer.
 */
#include <errno.h>
#include <stdint.h>

#include "emu_int.h"

#define BTS_RECORD_SIZE	  24u
#define BTS_SAFETY_MARGIN 4080u

static void bts_start(struct emu_event *ev);

/* Bytes of the chunk that hold whole records. */
static uint64_t bts_usable(const struct emu_buffer *b)
{
	return emu_rounddown(b->aux_size, BTS_RECORD_SIZE);
}

/* Returns 0 with the hardware programmed, -ENOSPC if there is no room to start. */
static int bts_reset(struct emu_event *ev)
{
	struct emu_buffer *b = ev->buf;
	struct emu_handle *h = &ev->h;
	uint64_t usable = bts_usable(b), off, space, pad, next_space, wk, end, thresh;

	ev->hw.wrap = b->aux_size;
	if (b->aux_overwrite) {
		ev->hw.wrap = usable;
		ev->hw.pos = h->head % usable;
		ev->hw.limit = UINT64_MAX;
		ev->hw.stop = UINT64_MAX;
		return 0;
	}
	off = h->head % b->aux_size;
	space = usable > off ? usable - off : 0;
	pad = b->aux_size - off;
	if (space > h->size)
		space = emu_rounddown(h->size, BTS_RECORD_SIZE);
	if (space <= BTS_SAFETY_MARGIN && h->size >= pad) {
		/* The next chunk is this one again, from its start, if the pad fits (never
		 * zero bytes the consumer has not read). */
		next_space = emu_rounddown(h->size - pad, BTS_RECORD_SIZE);
		if (next_space > usable)
			next_space = usable;
		if (next_space > space || !space) {
			emu_aux_pad(ev, h->head, pad);
			if (emu_aux_skip(ev, pad) < 0)
				return -ENOSPC;
			space = next_space;
		}
	}
	/* Do not go far beyond the wakeup point. */
	if (h->wakeup > h->head) {
		wk = BTS_SAFETY_MARGIN + BTS_RECORD_SIZE + h->wakeup - h->head;
		if (space > wk)
			space = emu_rounddown(wk, BTS_RECORD_SIZE);
	}
	if (!space)
		return -ENOSPC;
	end = h->head + space;
	if (space > BTS_SAFETY_MARGIN)
		thresh = end - BTS_SAFETY_MARGIN;
	else if (space > BTS_RECORD_SIZE)
		thresh = end - BTS_RECORD_SIZE;
	else
		thresh = end;
	ev->hw.pos = h->head;
	ev->hw.limit = thresh;
	ev->hw.stop = end;
	return 0;
}

static void bts_start(struct emu_event *ev)
{
	ev->hw.active = false;
	if (emu_aux_begin(ev) < 0)
		return;
	if (bts_reset(ev) < 0) {
		/* The driver ends the empty transaction and leaves the hardware stopped: no
		 * record, no wakeup, the event stays enabled. */
		ev->stats.stalled++;
		emu_aux_end(ev, 0);
		return;
	}
	ev->hw.active = true;
	ev->itrace_started = true; /* marked on every start */
}

static void bts_irq(struct emu_event *ev)
{
	struct emu_handle *h = &ev->h;

	ev->hw.active = false;
	if (!h->open)
		return;
	if (ev->hw.pos >= ev->hw.stop)
		emu_aux_flag(ev, PERF_AUX_FLAG_TRUNCATED); /* the absolute maximum */
	emu_aux_end(ev, ev->hw.pos - h->head);
	if (ev->enabled)
		bts_start(ev);
}

static void bts_stop(struct emu_event *ev)
{
	struct emu_buffer *b = ev->buf;
	struct emu_handle *h = &ev->h;

	ev->hw.active = false;
	if (!h->open)
		return;
	if (b->aux_overwrite) {
		h->head = ev->hw.pos % bts_usable(b);
		emu_aux_end(ev, b->aux_size);
	} else {
		emu_aux_end(ev, ev->hw.pos - h->head);
	}
}

static int bts_setup_aux(struct emu_event *ev, size_t nr_pages, bool overwrite)
{
	(void)overwrite;
	/* One contiguous chunk always here, so snapshot mode is allowed; a chunk must hold a
	 * record. */
	return nr_pages * ev->emu->page < BTS_RECORD_SIZE ? -ENOMEM : 0;
}

const struct emu_personality emu_bts_personality = {
	.name = "intel_bts",
	.caps = AUXCAP_EMU_CAP_ITRACE | AUXCAP_EMU_CAP_EXCLUSIVE | AUXCAP_EMU_CAP_SNAPSHOT,
	.check_attr = NULL,
	.setup_aux = bts_setup_aux,
	.start = bts_start,
	.stop = bts_stop,
	.irq = bts_irq,
	.inject = NULL,
};
