/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data ring producer (spec 4) and the records the core writes into it.
 *
 * One writer at a time (emu->lock), so the kernel's nesting counter is not needed; what
 * remains is its order: acquire-load data_tail and check the space (dropping the whole record
 * and counting it when it does not fit), prepend a PERF_RECORD_LOST when records were
 * dropped, copy the bytes, release-store data_head, then wake the consumer if the byte
 * watermark was crossed.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "emu_int.h"

#define EMU_SID_BITS                                                                   \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

uint64_t emu_now_ns(const struct emu_event *ev)
{
	clockid_t clk = ev->attr.use_clockid ? (clockid_t)ev->attr.clockid : CLOCK_MONOTONIC;
	struct timespec ts;

	if (clock_gettime(clk, &ts) < 0)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t emu_sid_size(const struct perf_event_attr *attr)
{
	if (!attr->sample_id_all)
		return 0;
	return 8 * (size_t)__builtin_popcountll(attr->sample_type & EMU_SID_BITS);
}

/* The sample_id trailer (spec 6.2), in its fixed order. */
static size_t emu_sid_fill(const struct emu_event *ev, unsigned char *p, uint64_t time)
{
	uint64_t st = ev->attr.sample_type;
	uint32_t u32[2];
	size_t n = 0;

	if (!ev->attr.sample_id_all)
		return 0;
	if (st & PERF_SAMPLE_TID) {
		u32[0] = ev->task_pid;
		u32[1] = ev->task_tid;
		memcpy(p + n, u32, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		memcpy(p + n, &time, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		memcpy(p + n, &ev->id, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		memcpy(p + n, &ev->id, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		u32[0] = ev->cpu < 0 ? 0 : (uint32_t)ev->cpu;
		u32[1] = 0;
		memcpy(p + n, u32, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		memcpy(p + n, &ev->id, 8);
		n += 8;
	}
	return n;
}

/* Copy @len bytes to free-running ring position @pos. */
static void emu_ring_put(struct emu_buffer *b, uint64_t pos, const void *src, size_t len)
{
	size_t off = (size_t)(pos & (b->data_size - 1));
	size_t first = len < b->data_size - off ? len : (size_t)(b->data_size - off);

	memcpy(b->data + off, src, first);
	if (len > first)
		memcpy(b->data, (const unsigned char *)src + first, len - first);
}

void emu_buffer_wakeup(struct emu_event *ev, struct emu_buffer *b)
{
	struct auxcap_emu *emu = ev->emu;
	const uint64_t one = 1;

	ev->stats.wakeups++;
	/* The poll state is the buffer's: every event writing into it becomes readable. */
	for (int fd = 0; fd < emu->nr_events_slots; fd++) {
		struct emu_event *e = emu->events[fd];

		if (e && e->buf == b && write(e->fd, &one, sizeof(one)) < 0) {
			/* EAGAIN: the counter is saturated, the fd is readable anyway */
		}
	}
}

int emu_data_output(struct emu_event *ev, uint32_t type, uint16_t misc, const void *payload,
		    size_t len, uint64_t time)
{
	struct emu_buffer *b = ev->buf;
	unsigned char rec[8 + 4096 + 64 + 48], lost[24 + 48];
	struct perf_event_header hdr;
	uint64_t head, tail, start, stamp, size, lost_size = 0, total, pos;
	size_t tsz;

	if (!b)
		return -ENOENT; /* no buffer: dropped without a trace */
	if (b->paused || b->nr_pages == 0) {
		if (b->nr_pages) {
			b->lost++;
			ev->lost_samples++;
			ev->stats.records_lost++;
		}
		return -ENOSPC;
	}
	if (!time)
		time = ev->emu->exec_time ? ev->emu->exec_time : emu_now_ns(ev);
	/*
	 * The kernel writes a ring's records as their events happen, so their times do not go
	 * back.  Here a source's side-band item carries the time its task made it, and may come
	 * after records the emulated driver stamped when it consumed the trace before it (an AUX
	 * record, TRUNCATED): it takes the ring's last time then.
	 */
	if (time < b->last_time)
		time = b->last_time;
	tsz = emu_sid_size(&ev->attr);
	size = sizeof(hdr) + len + tsz;
	if (len % 8 || size > sizeof(rec) || size > UINT16_MAX)
		return -EINVAL;
	if (b->lost)
		lost_size = 24 + tsz;
	total = size + lost_size;

	/* The space check (spec 4.1 step 5): at most data_size - 1 bytes in use. */
	head = b->head;
	if (!b->overwrite) {
		uint64_t used, free_space;

		tail = auxcap_load_acquire_u64(&b->pc->data_tail);
		if (b->backward) /* b->head holds the negated position; the reader is above */
			used = tail - (uint64_t)(-head);
		else
			used = head - tail;
		free_space = (b->data_size - 1) - (used & (b->data_size - 1));
		if (free_space < total) {
			b->lost++;
			ev->lost_samples++;
			ev->stats.records_lost++;
			return -ENOSPC;
		}
	}
	head += total;
	b->head = head;
	b->last_time = time;
	if (b->backward)
		start = (uint64_t)(-head); /* the record sits at the new, lower head */
	else
		start = head - total;

	/* Watermark: strictly greater, one step (spec 4.1 step 7). */
	stamp = b->wakeup;
	if (head - b->wakeup > b->watermark)
		b->wakeup += b->watermark;

	pos = start;
	if (lost_size) {
		hdr.type = PERF_RECORD_LOST;
		hdr.misc = 0;
		hdr.size = (uint16_t)lost_size;
		memcpy(lost, &hdr, 8);
		memcpy(lost + 8, &ev->id, 8);
		memcpy(lost + 16, &b->lost, 8);
		emu_sid_fill(ev, lost + 24, time);
		emu_ring_put(b, pos, lost, lost_size);
		pos += lost_size;
		b->lost = 0;
	}
	hdr.type = type;
	hdr.misc = misc;
	hdr.size = (uint16_t)size;
	memcpy(rec, &hdr, 8);
	memcpy(rec + 8, payload, len);
	emu_sid_fill(ev, rec + 8 + len, time);
	emu_ring_put(b, pos, rec, size);

	/* Bytes first, then the head (release): pairs with the consumer's acquire. */
	auxcap_store_release_u64(&b->pc->data_head, b->backward ? (uint64_t)(-head) : head);
	ev->stats.records++;
	if (stamp != b->wakeup)
		emu_buffer_wakeup(ev, b);
	return 0;
}

int emu_data_itrace_start(struct emu_event *ev)
{
	uint32_t p[2] = { ev->task_pid, ev->task_tid };
	int r;

	r = emu_data_output(ev, PERF_RECORD_ITRACE_START, 0, p, sizeof(p), ev->itrace_time);
	ev->itrace_time = 0;
	if (r == 0)
		ev->stats.itrace_starts++;
	return r;
}

/* Append @s NUL-terminated and padded to 8 bytes at @p; returns the bytes used. */
static size_t emu_put_string(unsigned char *p, size_t room, const char *s)
{
	size_t n = strnlen(s ? s : "", room - 8);
	size_t padded = (n + 8) & ~(size_t)7;

	memset(p, 0, padded);
	memcpy(p, s ? s : "", n);
	return padded;
}

static int emu_sideband_one(struct emu_event *e, const struct auxcap_emu_item *item)
{
	unsigned char p[4096 + 128];
	uint32_t u32[2] = { item->pid, item->tid };
	size_t n = 0;

	memcpy(p, u32, 8);
	n = 8;
	if (item->kind == AUXCAP_EMU_ITEM_MMAP2) {
		bool exec = item->u.mmap2.prot & PROT_EXEC;
		uint16_t misc = PERF_RECORD_MISC_USER | (exec ? 0 : PERF_RECORD_MISC_MMAP_DATA);

		/* as the kernel: code with attr.mmap, data (flagged) with attr.mmap_data */
		if (exec ? !e->attr.mmap : !e->attr.mmap_data)
			return 0;
		memcpy(p + n, &item->u.mmap2.addr, 8);
		memcpy(p + n + 8, &item->u.mmap2.len, 8);
		memcpy(p + n + 16, &item->u.mmap2.pgoff, 8);
		n += 24;
		if (!e->attr.mmap2) {
			n += emu_put_string(p + n, 4096, item->u.mmap2.filename);
			return emu_data_output(e, PERF_RECORD_MMAP, misc, p, n, item->time);
		}
		u32[0] = item->u.mmap2.maj;
		u32[1] = item->u.mmap2.min;
		memcpy(p + n, u32, 8);
		memcpy(p + n + 8, &item->u.mmap2.ino, 8);
		memcpy(p + n + 16, &item->u.mmap2.ino_generation, 8);
		u32[0] = item->u.mmap2.prot;
		u32[1] = item->u.mmap2.flags;
		memcpy(p + n + 24, u32, 8);
		n += 32;
		n += emu_put_string(p + n, 4096, item->u.mmap2.filename);
		return emu_data_output(e, PERF_RECORD_MMAP2, misc, p, n, item->time);
	}
	if (!e->attr.comm)
		return 0;
	n += emu_put_string(p + n, 24, item->u.comm.comm);
	return emu_data_output(e, PERF_RECORD_COMM,
			       item->u.comm.exec && e->attr.comm_exec ? PERF_RECORD_MISC_COMM_EXEC
								      : 0,
			       p, n, item->time);
}

int emu_data_sideband(struct emu_event *ev, const struct auxcap_emu_item *item)
{
	struct auxcap_emu *emu = ev->emu;
	int r = 0;

	/*
	 * An exec turns on the events of the task opened with enable_on_exec, once (the kernel
	 * clears the bit), before the COMM record is written: they see their own COMM.
	 */
	if (item->kind == AUXCAP_EMU_ITEM_COMM && item->u.comm.exec) {
		/* Their ITRACE_START records are stamped with the exec's time, when it has one. */
		emu->exec_time = item->time;
		for (int fd = 0; fd < emu->nr_events_slots; fd++) {
			struct emu_event *e = emu->events[fd];

			if (!e || !e->attr.enable_on_exec ||
			    (e != ev && (e->pid != ev->pid || e->cpu != ev->cpu)))
				continue;
			e->attr.enable_on_exec = 0;
			/* Its ITRACE_START is the exec's moment, not when the producer got to it. */
			e->itrace_time = item->time;
			emu_event_enable(e);
			e->itrace_time = 0;
		}
		emu->exec_time = 0;
	}
	/* Every emulated event that watches the same task and CPU and asked for the record. */
	for (int fd = 0; fd < emu->nr_events_slots; fd++) {
		struct emu_event *e = emu->events[fd];

		if (!e || (e != ev && (e->pid != ev->pid || e->cpu != ev->cpu)))
			continue;
		if (emu_sideband_one(e, item) < 0 && e == ev)
			r = -ENOSPC;
	}
	return r;
}
