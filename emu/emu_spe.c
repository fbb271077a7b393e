/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Arm SPE personality (spec 5.3).
 *
 * The hardware writes from PMBPTR up to PMBLIMITR, a page-granular limit, and interrupts only
 * there, so aux_head usually passes the wakeup point (hence the round-down wakeup rule of the
 * core).  Each start pads the head to the alignment, then takes as limit the buffer end, the
 * page-aligned tail when the tail is ahead in this lap, and the page after the wakeup point
 * when that lies in this lap; with less than a maximum record before the limit it pads up to
 * it and computes again.  Padding is zeroed and stepped over with skip.  No space: pad the
 * rest, TRUNCATED, end(0).  PMBSR.DL -> TRUNCATED|PARTIAL, PMBSR.COLL -> COLLISION.
 *
 * Snapshot mode (even page count): the limit alternates between the two halves of the buffer,
 * padding does not move aux_head (skip fails there), and each transaction reports the raw
 * in-buffer end offset and the bytes written.
 */
#include <errno.h>
#include <stdint.h>

#include "emu_int.h"

static void spe_start(struct emu_event *ev);

/* Zero @n bytes at the handle's head and step over them (a no-op for aux_head in snapshot
 * mode, where skip fails). */
static void spe_pad(struct emu_event *ev, uint64_t n)
{
	emu_aux_pad(ev, ev->h.head, n);
	(void)emu_aux_skip(ev, n);
}

/* Limit as an in-buffer offset, or 0 after ending the transaction for lack of space. */
static uint64_t spe_next_off(struct emu_event *ev)
{
	struct emu_buffer *b = ev->buf;
	struct emu_handle *h = &ev->h;
	uint64_t size = b->aux_size, page = b->page, align = ev->emu->opts.spe_align;
	uint64_t head = h->head % size, tail, wakeup, limit = size;

	if (head % align) {
		uint64_t delta = emu_roundup(head, align) - head;

		spe_pad(ev, delta < h->size ? delta : h->size);
		head = h->head % size;
	}
	if (!h->size)
		goto no_space;
	tail = (h->head + h->size) % size;
	wakeup = h->wakeup % size;
	if (head < tail)
		limit = emu_rounddown(tail, page);
	/* A wakeup in this lap: interrupt at the page boundary after it, unless the tail
	 * boundary comes first. */
	if (h->wakeup < h->head + h->size && head <= wakeup) {
		uint64_t w = emu_roundup(wakeup, page);

		if (w < limit)
			limit = w;
	}
	if (limit > head)
		return limit;
	spe_pad(ev, h->size);
no_space:
	emu_aux_flag(ev, PERF_AUX_FLAG_TRUNCATED);
	emu_aux_end(ev, 0);
	return 0;
}

static uint64_t spe_next_limit(struct emu_event *ev)
{
	uint64_t limit = spe_next_off(ev), head;

	if (!limit)
		return 0;
	head = ev->h.head % ev->buf->aux_size;
	if (limit - head < ev->emu->opts.spe_max_record) {
		spe_pad(ev, limit - head);
		limit = spe_next_off(ev);
	}
	return limit;
}

static uint64_t spe_next_snapshot_limit(struct emu_event *ev)
{
	struct emu_handle *h = &ev->h;
	uint64_t size = ev->buf->aux_size, head = h->head % size, limit = size;

	/* Records cannot be parsed backwards: clobber at most half a buffer. */
	if (head < limit / 2)
		limit /= 2;
	if (limit - head < ev->emu->opts.spe_max_record) {
		spe_pad(ev, limit - head);
		h->head = limit % size;
		limit = size / 2 + h->head;
	}
	return limit;
}

static void spe_start(struct emu_event *ev)
{
	struct emu_buffer *b;
	uint64_t limit, head;

	ev->hw.active = false;
	if (emu_aux_begin(ev) < 0)
		return;
	b = ev->buf;
	ev->hw.wrap = b->aux_size;
	if (b->aux_overwrite) {
		limit = spe_next_snapshot_limit(ev);
		ev->hw.pos = ev->h.head % b->aux_size;
		ev->hw.limit = limit;
		ev->hw.stop = limit;
		ev->hw.active = true;
		return;
	}
	limit = spe_next_limit(ev);
	if (!limit)
		return;
	/* PMBPTR = head, PMBLIMITR = limit, in aux_head space. */
	head = ev->h.head % b->aux_size;
	ev->hw.pos = ev->h.head;
	ev->hw.limit = ev->h.head + (limit - head);
	ev->hw.stop = ev->hw.limit;
	ev->hw.active = true;
}

/* arm_spe_perf_aux_output_end(): size = PMBPTR offset - head offset. */
static void spe_output_end(struct emu_event *ev)
{
	struct emu_buffer *b = ev->buf;
	struct emu_handle *h = &ev->h;
	uint64_t size, offset;

	emu_aux_flag(ev, ev->hw.pending);
	ev->hw.pending = 0;
	if (b->aux_overwrite) {
		offset = ev->hw.pos; /* raw offset: equals the buffer size when it is full */
		size = offset - h->head % b->aux_size;
		h->head = offset;
	} else {
		size = ev->hw.pos - h->head;
	}
	emu_aux_end(ev, size);
}

static void spe_irq(struct emu_event *ev)
{
	bool truncated;

	ev->hw.active = false;
	if (!ev->h.open)
		return;
	truncated = (ev->h.flags | ev->hw.pending) & PERF_AUX_FLAG_TRUNCATED;
	spe_output_end(ev);
	if (!truncated && ev->enabled)
		spe_start(ev);
}

static void spe_stop(struct emu_event *ev)
{
	ev->hw.active = false;
	if (ev->h.open)
		spe_output_end(ev);
}

static int spe_inject(struct emu_event *ev, enum auxcap_emu_fault fault)
{
	switch (fault) {
	case AUXCAP_EMU_FAULT_DATA_LOSS:
		/* PMBSR.DL with a buffer management event: the IRQ comes now. */
		ev->hw.pending |= PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL;
		if (ev->hw.active && ev->h.open) {
			ev->stats.interrupts++;
			spe_irq(ev);
		}
		return 0;
	case AUXCAP_EMU_FAULT_COLLISION:
		ev->hw.pending |= PERF_AUX_FLAG_COLLISION;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int spe_check_attr(const struct perf_event_attr *attr)
{
	if (attr->freq)
		return -EINVAL;
	if (attr->exclude_idle)
		return -EOPNOTSUPP;
	return 0;
}

static int spe_setup_aux(struct emu_event *ev, size_t nr_pages, bool overwrite)
{
	(void)ev;
	if (nr_pages < 2 || (overwrite && (nr_pages & 1)))
		return -ENOMEM;
	return 0;
}

/* /sys/bus/event_source/devices/arm_spe_0/format on current kernels. */
static const struct auxcap_emu_format spe_formats[] = {
	{ "ts_enable", "config:0" },	   { "pa_enable", "config:1" },
	{ "pct_enable", "config:2" },	   { "jitter", "config:16" },
	{ "branch_filter", "config:32" },  { "load_filter", "config:33" },
	{ "store_filter", "config:34" },   { "event_filter", "config1:0-63" },
	{ "min_latency", "config2:0-11" },
};

const struct emu_personality emu_spe_personality = {
	.name = "arm_spe_0",
	.caps = AUXCAP_EMU_CAP_ITRACE | AUXCAP_EMU_CAP_EXCLUSIVE | AUXCAP_EMU_CAP_SNAPSHOT,
	.formats = spe_formats,
	.nr_formats = sizeof(spe_formats) / sizeof(spe_formats[0]),
	/* a Neoverse N1 (MIDR_EL1 implementer 0x41, part 0xd0c, r0p0): the tracer's records
	 * carry data sources in its encoding, Arm's common one */
	.cpuid = AUXCAP_EMU_SPE_CPUID,
	.check_attr = spe_check_attr,
	.setup_aux = spe_setup_aux,
	.start = spe_start,
	.stop = spe_stop,
	.irq = spe_irq,
	.inject = spe_inject,
};
