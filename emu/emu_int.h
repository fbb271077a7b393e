/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internals of the emulated AUX PMU, shared by its files:
 *
 *   emu.c          the emulator, its fd table and the syscall seam (open, ioctls, poll, read,
 *                  close)
 *   emu_mmap.c     buffers, the mmap rules and munmap
 *   emu_data.c     the data ring producer (spec 4) and the records the core writes
 *   emu_aux.c      the AUX producer (spec 3: output begin/end/skip/flag) and the generic
 *                  "hardware" that writes trace bytes up to a limit set by the driver
 *   emu_pt.c emu_bts.c emu_spe.c   driver personalities (spec 5)
 *   emu_run.c      feeding sources: stepping and the producer thread
 *   emu_replay.c   the replay source
 *
 * Locking: emu->lock protects everything below except the shared pages, which the consumer
 * reads and writes without it under the acquire/release contract of spec 1.2.
 */
#ifndef AUXCAP_EMU_INT_H
#define AUXCAP_EMU_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "auxcap/emu.h"

struct emu_event;

/* One perf buffer (struct perf_buffer): data ring + optional AUX area (spec 3.1). */
struct emu_buffer {
	unsigned int refs;	 /* events pointing here + consumer mappings */
	unsigned int mmap_count; /* consumer mappings (data and AUX) */
	size_t page;		 /* bytes per page */

	int data_memfd;			 /* backing store of control page + data pages */
	unsigned char *base;		 /* producer view of the control page + data */
	size_t map_len;			 /* bytes: (1 + nr_pages) pages */
	struct perf_event_mmap_page *pc; /* = base */
	unsigned char *data;		 /* first data byte (base + page) */
	size_t nr_pages;		 /* data pages: 0 or a power of two */
	uint64_t data_size;		 /* bytes: nr_pages pages */
	bool overwrite;			 /* first mapping was read-only */
	bool backward;			 /* attr.write_backward of the creating event */
	bool paused;			 /* PERF_EVENT_IOC_PAUSE_OUTPUT */
	uint64_t head;			 /* private write position (free-running; backward: the
					    negated position grows) */
	uint64_t wakeup;		 /* wakeup stamp: last watermark step, bytes */
	uint64_t watermark;		 /* bytes of new data per wakeup */
	uint64_t lost;			 /* records dropped since the last LOST record */
	uint64_t last_time;		 /* time of the last record written: a ring's records
					    are in time order, as the kernel writes them */

	int aux_memfd;		     /* backing store of the AUX area, -1 if none */
	unsigned char *aux;	     /* producer view of the AUX area */
	uint64_t aux_size;	     /* bytes */
	size_t aux_nr_pages;	     /* pages, a power of two */
	uint64_t aux_pgoff;	     /* file offset of the AUX area, bytes */
	unsigned int aux_mmap_count; /* consumer mappings of the AUX area */
	bool aux_overwrite;	     /* AUX mapping was read-only (snapshot mode) */
	uint64_t aux_head;	     /* private AUX head (normal: free-running bytes;
					    overwrite: what the driver reported) */
	uint64_t aux_wakeup;	     /* last watermark boundary crossed, bytes */
	uint64_t aux_watermark;	     /* bytes; 0 in overwrite mode */
	bool aux_nest;		     /* a transaction is open */
};

/* struct perf_output_handle for the AUX area. */
struct emu_handle {
	bool open;	 /* between a successful begin and end */
	uint64_t head;	 /* aux_head at begin; overwrite mode: set by the driver before end */
	uint64_t size;	 /* bytes the driver may write (normal mode), 0 in overwrite mode */
	uint64_t wakeup; /* aux_head-space position the driver should interrupt at */
	uint64_t flags;	 /* PERF_AUX_FLAG_* gathered for the record */
};

/*
 * The trace hardware: it writes bytes at @pos (index pos % @wrap in the AUX area) until pos
 * reaches @limit, where it raises the driver's interrupt (PMI, buffer-full IRQ).  Positions
 * are in aux_head space in normal mode.
 */
struct emu_hw {
	bool active;	      /* tracing */
	uint64_t pos;	      /* next byte the hardware writes */
	uint64_t limit;	      /* interrupt point (UINT64_MAX: none, circular) */
	uint64_t stop;	      /* normal mode: hard stop (PT STOP region, BTS absolute maximum, SPE
			   limit); reaching it while interrupting means data was lost */
	uint64_t wrap;	      /* bytes: buffer index modulus */
	unsigned int pending; /* PERF_AUX_FLAG_* to report at the next interrupt/end */
};

/* A driver personality (spec 5): where interrupts land, padding, stop behaviour. */
struct emu_personality {
	const char *name;			 /* sysfs PMU name */
	unsigned int caps;			 /* enum auxcap_emu_caps */
	const struct auxcap_emu_format *formats; /* sysfs format/ terms */
	size_t nr_formats;
	const struct auxcap_emu_sysfs_cap *sysfs_caps; /* sysfs caps/ files, NULL if none */
	size_t nr_sysfs_caps;
	const char *cpuid; /* auxcap_emu_pmu_info.cpuid */
	int (*check_attr)(const struct perf_event_attr *attr);
	/* pmu::setup_aux: refuse an AUX area geometry with -ENOMEM */
	int (*setup_aux)(struct emu_event *ev, size_t nr_pages, bool overwrite);
	/* pmu::start: open a transaction and program the hardware (may leave it stopped) */
	void (*start)(struct emu_event *ev);
	/* pmu::stop(PERF_EF_UPDATE): end the open transaction, hardware stopped */
	void (*stop)(struct emu_event *ev);
	/* the hardware reached hw.limit */
	void (*irq)(struct emu_event *ev);
	/* a hardware condition; -EOPNOTSUPP if this driver has none such */
	int (*inject)(struct emu_event *ev, enum auxcap_emu_fault fault);
};

extern const struct emu_personality emu_pt_personality;
extern const struct emu_personality emu_bts_personality;
extern const struct emu_personality emu_spe_personality;

struct emu_event {
	struct auxcap_emu *emu; /* borrowed: owner */
	int fd;			/* eventfd the consumer holds (poll readiness) */
	enum auxcap_emu_pmu pmu;
	const struct emu_personality *pers;
	struct perf_event_attr attr; /* copy, attr.size bytes at most */
	pid_t pid;		     /* target task, -1 per CPU */
	int cpu;		     /* target CPU, -1 any */
	uint64_t id;		     /* PERF_EVENT_IOC_ID */
	bool enabled;		     /* state ON */
	bool itrace_started;	     /* ITRACE_START written and marked by the driver */
	uint64_t itrace_time;	     /* time for the next ITRACE_START (ns), 0: now */
	bool mapped_here;	     /* this fd created its buffer by mmap */
	struct emu_buffer *buf;	     /* output buffer (own, or SET_OUTPUT target) */
	uint64_t lost_samples;	     /* PERF_FORMAT_LOST: records lost to the ring */
	uint64_t enabled_ns;	     /* time_enabled accumulated, ns */
	uint64_t enabled_since;	     /* CLOCK_MONOTONIC ns of the last enable */
	uint32_t task_pid, task_tid; /* task of the trace now (ITRACE_START, sample_id) */
	struct emu_handle h;	     /* AUX transaction */
	struct emu_hw hw;	     /* trace hardware */
	const struct auxcap_emu_source_ops *src_ops; /* borrowed */
	void *src;				     /* owned: source context */
	bool src_done;				     /* source returned -ENODATA or an error */
	bool advancing; /* the producer thread is in the source's advance(), without the lock */
	bool doomed;	/* closed meanwhile: that thread frees the source and the event */
	unsigned char *scratch;			     /* owned: source chunk buffer */
	size_t scratch_size;			     /* bytes at @scratch */
	struct auxcap_emu_stats stats;
};

struct emu_pending_source {
	enum auxcap_emu_pmu pmu;
	const struct auxcap_emu_source_ops *ops;
	void *ctx;
};

struct auxcap_emu {
	struct auxcap_sys sys;	     /* the seam handed out; ctx = this */
	struct auxcap_emu_opts opts; /* copied options with defaults filled in */
	pthread_mutex_t lock;	     /* see the file comment */
	size_t page;		     /* bytes per page */
	struct emu_event **events;   /* indexed by fd, NULL where not ours */
	int nr_events_slots;	     /* length of @events */
	struct emu_mapping *maps;    /* consumer mappings */
	size_t nr_maps, maps_cap;
	struct emu_pending_source *pending; /* sources waiting for an event */
	size_t nr_pending, pending_cap;
	uint64_t next_id;		/* event id allocator */
	struct auxcap_emu_stats closed; /* counters of events already closed */
	pthread_t thread;
	bool thread_running;
	bool thread_stop; /* tells the thread to leave (under @lock) */
	unsigned int lock_waiters; /* atomic: consumer calls waiting for @lock (emu_lock()) */
	uint64_t exec_time; /* while an exec enables events: its item's time (0: now), under @lock */
};

/*
 * Take @emu->lock from a consumer call (the seam, the public API).  The producer thread lets
 * waiting consumers in before it takes the lock again: a mutex is not fair, and a producer at
 * full speed would otherwise hold off an ioctl (a snapshot's freeze) for seconds.
 */
static inline void emu_lock(struct auxcap_emu *emu)
{
	__atomic_fetch_add(&emu->lock_waiters, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_lock(&emu->lock);
	__atomic_fetch_sub(&emu->lock_waiters, 1, __ATOMIC_ACQ_REL);
}

/* A consumer mapping returned by the emulated mmap(). */
struct emu_mapping {
	void *addr;
	size_t len;		 /* bytes, page multiple */
	struct emu_buffer *buf;	 /* reference held */
	bool aux;		 /* the AUX area, else control page + data */
	struct emu_event *event; /* the event it was mapped through (borrowed) */
};

/* emu_mmap.c */
void emu_buffer_put(struct emu_buffer *b);
void emu_event_set_buffer(struct emu_event *ev, struct emu_buffer *b);
void emu_unmap_locked(struct auxcap_emu *emu, size_t idx);
int emu_sys_mmap(void *ctx, size_t len, int prot, int flags, int fd, off_t off, void **ret_addr);
int emu_sys_munmap(void *ctx, void *addr, size_t len);

/* emu_data.c */
uint64_t emu_now_ns(const struct emu_event *ev);
int emu_data_output(struct emu_event *ev, uint32_t type, uint16_t misc, const void *payload,
		    size_t len, uint64_t time);
void emu_buffer_wakeup(struct emu_event *ev, struct emu_buffer *buf);
int emu_data_itrace_start(struct emu_event *ev);
int emu_data_sideband(struct emu_event *ev, const struct auxcap_emu_item *item);

/* emu_aux.c */
int emu_aux_begin(struct emu_event *ev);
void emu_aux_flag(struct emu_event *ev, uint64_t flags);
int emu_aux_skip(struct emu_event *ev, uint64_t n);
void emu_aux_end(struct emu_event *ev, uint64_t size);
void emu_aux_pad(struct emu_event *ev, uint64_t pos, uint64_t n);
size_t emu_hw_write(struct emu_event *ev, const unsigned char *bytes, size_t len);
void emu_event_sched_in(struct emu_event *ev);
void emu_event_sched_out(struct emu_event *ev);
void emu_event_enable(struct emu_event *ev);
void emu_event_disable(struct emu_event *ev);

/* emu_run.c */
int emu_event_feed(struct emu_event *ev, size_t max, bool paced, size_t *ret_offered);
void emu_event_drop_source(struct emu_event *ev);

/* The emulated event behind @fd, or NULL if @fd is not one (caller holds emu->lock). */
static inline struct emu_event *emu_lookup(struct auxcap_emu *emu, int fd)
{
	if (fd < 0 || fd >= emu->nr_events_slots)
		return NULL;
	return emu->events[fd];
}

static inline bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static inline uint64_t emu_rounddown(uint64_t v, uint64_t m)
{
	return v - v % m;
}

static inline uint64_t emu_roundup(uint64_t v, uint64_t m)
{
	return emu_rounddown(v + m - 1, m);
}

static inline void emu_stats_add(struct auxcap_emu_stats *a, const struct auxcap_emu_stats *b)
{
	a->produced += b->produced;
	a->dropped += b->dropped;
	a->padding += b->padding;
	a->aux_records += b->aux_records;
	a->aux_records_lost += b->aux_records_lost;
	a->truncated += b->truncated;
	a->partial += b->partial;
	a->collision += b->collision;
	a->no_space += b->no_space;
	a->stalled += b->stalled;
	a->interrupts += b->interrupts;
	a->records += b->records;
	a->records_lost += b->records_lost;
	a->wakeups += b->wakeups;
	a->itrace_starts += b->itrace_starts;
}

#endif /* AUXCAP_EMU_INT_H */
