/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intel PT personality (spec 5.1), multi-entry ToPA with regions of pt_region_pages pages.
 *
 * Normal mode: at each start the driver places STOP (with INT) at the last region boundary at
 * or before the consumer's tail, so the hardware never passes it, and INT at the region
 * boundary at or before the wakeup point (at worst one region before STOP).  Reaching STOP
 * means trace was lost: TRUNCATED, which disables the event.  If the tail lies inside the
 * current region there is no boundary to stop at: start fails with a zero-size TRUNCATED
 * record.
 *
 * Snapshot mode: circular buffer, no interrupts; each stop reports the in-buffer write offset
 * and the whole buffer size.
 */
#include <errno.h>
#include <stdint.h>

#include "emu_int.h"

static uint64_t pt_region(const struct emu_event *ev)
{
	return (uint64_t)ev->emu->opts.pt_region_pages * ev->emu->page;
}

static void pt_program(struct emu_event *ev)
{
	struct emu_buffer *b = ev->buf;
	struct emu_handle *h = &ev->h;
	uint64_t r = pt_region(ev), stop, irq;

	if (r > b->aux_size)
		r = b->aux_size;
	ev->hw.wrap = b->aux_size;
	if (b->aux_overwrite) {
		ev->hw.pos = h->head % b->aux_size;
		ev->hw.limit = UINT64_MAX;
		ev->hw.stop = UINT64_MAX;
		ev->hw.active = true;
		ev->itrace_started = true;
		return;
	}
	/* h->head + h->size + 1 is the consumer's tail, a lap ahead when the buffer is empty. */
	stop = emu_rounddown(h->head + h->size + 1, r);
	if (stop <= h->head) {
		/* It cannot stop inside a region. */
		emu_aux_flag(ev, PERF_AUX_FLAG_TRUNCATED);
		ev->hw.active = false;
		emu_aux_end(ev, 0);
		return;
	}
	irq = emu_rounddown(h->wakeup, r);
	if (stop - r < irq)
		irq = stop - r;
	if (irq <= h->head)
		irq = stop;
	ev->hw.pos = h->head;
	ev->hw.limit = irq;
	ev->hw.stop = stop;
	ev->hw.active = true;
	ev->itrace_started = true; /* marked at the first configuration */
}

static void pt_start(struct emu_event *ev)
{
	if (emu_aux_begin(ev) < 0) {
		ev->hw.active = false;
		return;
	}
	pt_program(ev);
}

static void pt_irq(struct emu_event *ev)
{
	struct emu_handle *h = &ev->h;

	ev->hw.active = false; /* the PMI handler stops tracing */
	if (!h->open)
		return;
	if (ev->hw.pos >= ev->hw.stop)
		emu_aux_flag(ev, PERF_AUX_FLAG_TRUNCATED); /* the STOP region filled */
	emu_aux_flag(ev, ev->hw.pending);
	ev->hw.pending = 0;
	emu_aux_end(ev, ev->hw.pos - h->head);
	if (ev->enabled)
		pt_start(ev);
}

static void pt_stop(struct emu_event *ev)
{
	struct emu_buffer *b = ev->buf;
	struct emu_handle *h = &ev->h;

	ev->hw.active = false;
	if (!h->open)
		return;
	emu_aux_flag(ev, ev->hw.pending);
	ev->hw.pending = 0;
	if (b->aux_overwrite) {
		h->head = ev->hw.pos % b->aux_size;
		emu_aux_end(ev, b->aux_size);
	} else {
		emu_aux_end(ev, ev->hw.pos - h->head);
	}
}

static int pt_inject(struct emu_event *ev, enum auxcap_emu_fault fault)
{
	if (fault != AUXCAP_EMU_FAULT_GAP)
		return -EOPNOTSUPP;
	ev->hw.pending |= PERF_AUX_FLAG_PARTIAL;
	return 0;
}

/* /sys/bus/event_source/devices/intel_pt/format on current kernels. */
static const struct auxcap_emu_format pt_formats[] = {
	{ "pt", "config:0" },
	{ "cyc", "config:1" },
	{ "pwr_evt", "config:4" },
	{ "fup_on_ptw", "config:5" },
	{ "mtc", "config:9" },
	{ "tsc", "config:10" },
	{ "noretcomp", "config:11" },
	{ "ptw", "config:12" },
	{ "branch", "config:13" },
	{ "mtc_period", "config:14-17" },
	{ "cyc_thresh", "config:19-22" },
	{ "psb_period", "config:24-27" },
	{ "event", "config:31" },
	{ "notnt", "config:55" },
};

/*
 * caps/ of the emulated hardware, with the driver's file names (pt.c pt_caps[]): what the live
 * tracer's encoder emits (PSB, TSC, MODE, TIP, TNT, FUP; no MTC, CYC, PTWRITE, power or event
 * trace packets, no TNT disable) and no address filter or CR3 filter registers.
 */
static const struct auxcap_emu_sysfs_cap pt_caps[] = {
	{ "cr3_filtering", "0" },	  { "cycle_thresholds", "0" },
	{ "event_trace", "0" },		  { "ip_filtering", "0" },
	{ "max_subleaf", "1" },		  { "mtc", "0" },
	{ "mtc_periods", "0" },		  { "num_address_ranges", "0" },
	{ "output_subsys", "0" },	  { "payloads_lip", "0" },
	{ "power_event_trace", "0" },	  { "psb_cyc", "0" },
	{ "psb_periods", "0" },		  { "ptwrite", "0" },
	{ "single_range_output", "0" },	  { "tnt_disable", "0" },
	{ "topa_multiple_entries", "1" }, { "topa_output", "1" },
};

const struct emu_personality emu_pt_personality = {
	.name = "intel_pt",
	.caps = AUXCAP_EMU_CAP_ITRACE | AUXCAP_EMU_CAP_EXCLUSIVE | AUXCAP_EMU_CAP_SNAPSHOT,
	.formats = pt_formats,
	.nr_formats = sizeof(pt_formats) / sizeof(pt_formats[0]),
	.sysfs_caps = pt_caps,
	.nr_sysfs_caps = sizeof(pt_caps) / sizeof(pt_caps[0]),
	.check_attr = NULL,
	.setup_aux = NULL,
	.start = pt_start,
	.stop = pt_stop,
	.irq = pt_irq,
	.inject = pt_inject,
};
