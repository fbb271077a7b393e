/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated AUX PMUs.
 *
 * A struct auxcap_emu is a user-space model of the kernel's perf ring-buffer core (data ring
 * and AUX area producers, spec/kernel-aux-abi.md sections 1-4) and of three AUX drivers
 * (Intel PT, Intel BTS, Arm SPE; section 5).  It plugs into the syscall seam: the table
 * returned by auxcap_emu_sys() handles the fds it created and forwards every other fd to
 * auxcap_sys_linux, so a capture can mix emulated AUX events with real kernel events.
 *
 * What the consumer sees is the kernel ABI: perf_event_open() of an emulated PMU type returns
 * a real fd (an eventfd, so poll() works beside real perf fds), mmap() of it returns a real
 * struct perf_event_mmap_page followed by the data pages and, at aux_offset, the AUX area,
 * with the kernel's errnos on misuse; the producer publishes bytes then release-stores the
 * heads, and acquire-loads the consumer's tails.
 *
 * Trace comes from a source (struct auxcap_emu_source_ops): the replay source in this
 * library, or any other (the live tracer).  It is produced either by a thread of the
 * emulator (auxcap_emu_start()), concurrently with the consumer, or on demand by the test
 * (auxcap_emu_step(), auxcap_emu_write()), deterministically.
 *
 * Typical use (the CLI's --emulate, or a test):
 *
 *	auxcap_emu_new(NULL, &emu);
 *	auxcap_emu_replay_new_file("trace.pt", &ropts, &rp);
 *	auxcap_emu_replay_attach(emu, AUXCAP_EMU_PMU_INTEL_PT, -1, rp);  for the next PT event
 *	sys = auxcap_emu_sys(emu);              hand to the capture session instead of
 *	                                        &auxcap_sys_linux; open type
 *	                                        AUXCAP_EMU_TYPE_BASE + AUXCAP_EMU_PMU_INTEL_PT
 *	auxcap_emu_start(emu);                  producer thread (or auxcap_emu_step() in tests)
 *	... capture ...
 *	auxcap_emu_free(emu);                   after the session closed its fds
 *
 * What is not modelled: sampling (no PERF_RECORD_SAMPLE, hence wakeup_events never applies),
 * aux_sample_size, aux_pause/resume, address filters (SET_FILTER -> EINVAL), PT single-entry
 * ToPA and single-range output, inherit (POLLHUP comes when the target task itself exits).
 * enable_on_exec is modelled through the source: a COMM item with exec set is the exec, and
 * enables the task's events that asked for it (once, before their COMM record).
 *
 * Thread safety: every function may be called from any thread; the emulator serialises its
 * own state with one lock.  The ring memory is shared with the consumer without a lock, as
 * with the kernel.
 */
#ifndef AUXCAP_EMU_H
#define AUXCAP_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#include "auxcap/sys.h"

struct perf_event_attr;
struct auxcap_emu;
struct auxcap_emu_replay;

/** The emulated PMUs, each with its driver personality. */
enum auxcap_emu_pmu {
	AUXCAP_EMU_PMU_INTEL_PT = 0, /* "intel_pt": ToPA regions, PMI at region boundaries */
	AUXCAP_EMU_PMU_INTEL_BTS,    /* "intel_bts": 24-byte records, 4080-byte margin */
	AUXCAP_EMU_PMU_ARM_SPE,	     /* "arm_spe_0": page-granular limits, padding */
	AUXCAP_EMU_PMU_COUNT,
};

/*
 * perf_event_attr.type of emulated PMU p is AUXCAP_EMU_TYPE_BASE + p.  Real dynamic PMU types
 * are small integers allocated upwards from PERF_TYPE_MAX, so these never collide.
 */
#define AUXCAP_EMU_TYPE_BASE 0x7a550000u

/** Capabilities, as the kernel lists them in /sys/bus/event_source/devices/<pmu>/caps. */
enum auxcap_emu_caps {
	AUXCAP_EMU_CAP_ITRACE = 1u << 0,    /* emits ITRACE_START at schedule-in */
	AUXCAP_EMU_CAP_EXCLUSIVE = 1u << 1, /* one event per context (EBUSY) */
	AUXCAP_EMU_CAP_SNAPSHOT = 1u << 2,  /* overwrite (read-only AUX) mode supported */
};

/** One entry of a PMU's sysfs format/ directory: term name and its attr bits. */
struct auxcap_emu_format {
	const char *name; /* static: "tsc", "mtc_period", "load_filter", ... */
	const char *spec; /* static: "config:10", "config:14-17", "config1:0-63", ... */
};

/** One file of a PMU's sysfs caps/ directory: name and content, as the driver prints it. */
struct auxcap_emu_sysfs_cap {
	const char *name;  /* static: "psb_cyc", "mtc_periods", ... */
	const char *value; /* static: the file's text ("0", "249") */
};

/** What the emulator presents for one PMU (for the CLI's 'list' and PMU lookup). */
struct auxcap_emu_pmu_info {
	const char *name;			 /* static: "intel_pt", "intel_bts", "arm_spe_0" */
	uint32_t type;				 /* perf_event_attr.type to open it with */
	enum auxcap_emu_pmu pmu;		 /* personality */
	unsigned int caps;			 /* enum auxcap_emu_caps */
	const struct auxcap_emu_format *formats; /* static: the format/ terms the real driver
						    lists (the event parser needs them) */
	size_t nr_formats;
	/** static: caps/ files with what the emulated hardware does (the driver's file names;
	 * a backend checks the user's knobs against them), NULL if none */
	const struct auxcap_emu_sysfs_cap *sysfs_caps;
	size_t nr_sysfs_caps;
	/** static: the CPU a capture on this PMU says it ran on (perf's CPUID feature: an
	 * arm64 MIDR in hex for arm_spe_0, whose data-source packets are in that core's
	 * encoding), NULL: the host's own */
	const char *cpuid;
};

/** The CPUID text (an arm64 MIDR_EL1, as perf writes it) of the CPU the emulated
 * arm_spe_0 belongs to: a Neoverse N1. */
#define AUXCAP_EMU_SPE_CPUID "0x00000000410fd0c0"

/** Emulator options; caller-owned, copied in by auxcap_emu_new(). Zero = default. */
struct auxcap_emu_opts {
	size_t sz;		  /* sizeof(struct auxcap_emu_opts) */
	uint32_t pt_region_pages; /* Intel PT ToPA region, pages (power of two); default 1 */
	uint32_t spe_align;	  /* Arm SPE PMBIDR_EL1.Align, bytes (power of two, <= 2048);
				     default 64 */
	uint32_t spe_max_record;  /* Arm SPE PMSIDR_EL1.MaxSize, bytes (16..2048); default 64 */
	unsigned int pmus;	  /* which PMUs exist: bit (1u << enum auxcap_emu_pmu) each;
				     0 = all (e.g. only arm_spe_0 to look like an arm64 box) */
};

/** Kinds of item a trace source hands out. */
enum auxcap_emu_item_kind {
	AUXCAP_EMU_ITEM_TRACE = 1, /* @len bytes of trace in the caller's buffer */
	AUXCAP_EMU_ITEM_MMAP2,	   /* a mapping of the traced task: PERF_RECORD_MMAP2 */
	AUXCAP_EMU_ITEM_COMM,	   /* the traced task's name: PERF_RECORD_COMM */
};

/** One item from a trace source. */
struct auxcap_emu_item {
	enum auxcap_emu_item_kind kind;
	uint32_t pid, tid; /* task the item belongs to (sample_id TID, ITRACE_START) */
	uint64_t time;	   /* perf clock, ns (sample_id TIME); 0 = when it is written */
	size_t len;	   /* TRACE: bytes of trace, at @data or in the buffer given to next() */
	const void *data;  /* TRACE: where the @len bytes are if not NULL: the source's own
			      memory, borrowed until the next call of next(), which the
			      hardware then writes from without a copy into the buffer; NULL:
			      they are in the buffer (the emulator clears the item before each
			      call, so a source that never sets it copies) */
	union {
		struct {
			uint64_t addr, len, pgoff; /* bytes */
			uint32_t maj, min;
			uint64_t ino, ino_generation;
			uint32_t prot, flags; /* PROT_*, MAP_* */
			const char *filename; /* borrowed until the next call of next() */
		} mmap2;
		struct {
			const char *comm; /* borrowed until the next call of next() */
			bool exec;	  /* PERF_RECORD_MISC_COMM_EXEC */
		} comm;
	} u;
};

/** The event a source feeds (borrowed, valid during the bind() call). */
struct auxcap_emu_source_target {
	enum auxcap_emu_pmu pmu;
	const struct perf_event_attr *attr; /* as opened: config bits select the packets */
	pid_t pid;			    /* target task (0 resolved), -1 per CPU */
	int cpu;			    /* target CPU, -1 any */
	uint64_t id;			    /* PERF_EVENT_IOC_ID */
};

/**
 * A trace source: the "hardware" input of an emulated AUX event.
 *
 * next() stores the next item in @ret_item and, for a TRACE item, up to @max bytes of trace
 * at @buf, or points @ret_item->data at up to @max bytes of its own (no copy).  @paced is
 * false when the test steps the emulator (deliver as fast as asked) and true when the
 * producer thread runs (the source may hold bytes back to keep a rate).
 * Returns 1 if an item was stored, 0 if nothing is due yet (paced only), -ENODATA at the end
 * of the stream, another negative errno on failure (the emulator then stops the source).
 * next() runs under the emulator's lock (the consumer's ioctl/mmap/poll wait for it): it
 * must not block; a source that is waiting for its input (a traced child) returns 0.
 * advance() (optional, appended) is where work that may block goes: the producer thread calls
 * it before each next() without the lock, never at the same time as next() or free(); what it
 * produces is handed out by the next() calls after it (it reports nothing itself: a failure
 * comes from next()).  The live tracer steps its child's system calls there.  Not called
 * when the test steps the emulator.
 * bind() (optional) is called once when the source is given to an event, before any next();
 * a negative errno refuses the event (see auxcap_emu_source_attach()).
 * free() releases @ctx (may be NULL).
 */
struct auxcap_emu_source_ops {
	const char *name;
	int (*bind)(void *ctx, const struct auxcap_emu_source_target *target);
	int (*next)(void *ctx, void *buf, size_t max, bool paced, struct auxcap_emu_item *ret_item);
	void (*free)(void *ctx);
	void (*advance)(void *ctx);
};

/** Hardware conditions a test can inject (what each driver does with them: spec 5). */
enum auxcap_emu_fault {
	AUXCAP_EMU_FAULT_GAP = 1,   /* PT: tracing suspended in VMX root -> PARTIAL at next end */
	AUXCAP_EMU_FAULT_DATA_LOSS, /* SPE: PMBSR.DL now -> interrupt, TRUNCATED|PARTIAL */
	AUXCAP_EMU_FAULT_COLLISION, /* SPE: PMBSR.COLL -> COLLISION when the driver next ends */
};

/** Counters of one emulated event (or of all, see auxcap_emu_stats()). */
struct auxcap_emu_stats {
	uint64_t produced;	   /* trace bytes the hardware wrote into the AUX area */
	uint64_t dropped;	   /* trace bytes offered while the hardware could not write them
				   (event disabled, stopped, no AUX area, lost to truncation) */
	uint64_t padding;	   /* bytes stepped over with perf_aux_output_skip() */
	uint64_t aux_records;	   /* PERF_RECORD_AUX written into the data ring */
	uint64_t aux_records_lost; /* PERF_RECORD_AUX that did not fit in the data ring */
	uint64_t truncated;	   /* AUX records with TRUNCATED (zero-size ones too) */
	uint64_t partial;	   /* AUX records with PARTIAL */
	uint64_t collision;	   /* AUX records with COLLISION */
	uint64_t no_space;	   /* begin() found no space: event disabled, no record */
	uint64_t stalled;	   /* the driver found too little room to start and left the
				      hardware stopped without a record, the event still enabled
				      (BTS with < 24 bytes free); it retries at the next
				      schedule-in */
	uint64_t interrupts;	   /* driver interrupts (PMI / buffer management IRQ) */
	uint64_t records;	   /* records written into the data ring (any type) */
	uint64_t records_lost;	   /* data ring records dropped (full or paused) */
	uint64_t wakeups;	   /* wakeups queued (poll readiness raised) */
	uint64_t itrace_starts;	   /* PERF_RECORD_ITRACE_START written */
};

/**
 * Create an emulator.
 *
 * @opts may be NULL (defaults).  The emulator starts in stepping mode (no thread).
 *
 * Returns 0 and stores the emulator in @ret_emu (owned by the caller, release with
 * auxcap_emu_free()), a negative errno otherwise.
 * Returns -EINVAL if an option is out of range or @ret_emu is NULL.
 * Returns -ENOMEM if out of memory.
 */
int auxcap_emu_new(const struct auxcap_emu_opts *opts, struct auxcap_emu **ret_emu);

/**
 * Stop the producer thread, close every emulated fd still open, unmap what the consumer left
 * mapped and free the emulator.  NULL-safe.  Mappings returned by the emulated mmap() become
 * invalid.
 */
void auxcap_emu_free(struct auxcap_emu *emu);

/**
 * The syscall seam of @emu (borrowed, valid until auxcap_emu_free()).  fds it did not create
 * are passed to auxcap_sys_linux.
 */
const struct auxcap_sys *auxcap_emu_sys(struct auxcap_emu *emu);

/**
 * Describe emulated PMU @pmu.
 * Returns 0 and fills @ret_info.
 * Returns -EINVAL if @pmu is out of range.
 * Returns -ENOENT if this emulator does not present @pmu (auxcap_emu_opts.pmus).
 */
int auxcap_emu_pmu_info(const struct auxcap_emu *emu, enum auxcap_emu_pmu pmu,
			struct auxcap_emu_pmu_info *ret_info);

/**
 * Find an emulated PMU by its sysfs name ("intel_pt", "intel_bts", "arm_spe_0").
 * Returns 0 and fills @ret_info, or -ENOENT if the emulator has no such PMU.
 */
int auxcap_emu_pmu_find(const struct auxcap_emu *emu, const char *name,
			struct auxcap_emu_pmu_info *ret_info);

/**
 * Attach a trace source.
 *
 * With @fd >= 0 the source feeds that emulated event (any PMU; @pmu is ignored).  With @fd ==
 * -1 it is queued for the next event of @pmu that perf_event_open() creates (sources are
 * handed out in the order they were attached), which is how the CLI sets up --emulate before
 * the capture session opens its events.
 *
 * On success the emulator owns @ctx and calls @ops->free(@ctx) when the event is closed or
 * the emulator freed; on failure the caller keeps it.  @ops is borrowed and must outlive the
 * emulator (a static const table).
 *
 * Returns 0 on success, a negative errno otherwise.
 * Returns -EINVAL if @ops or @ops->next is NULL or @pmu is out of range.
 * Returns -EBADF if @fd is not an open emulated event.
 * Returns -EBUSY if the event already has a source.
 * Returns the errno of @ops->bind() if it refused the event (with @fd >= 0).  A queued
 * source that refuses the event it is handed to is freed and the event runs without one.
 * Returns -ENOMEM if out of memory.
 */
int auxcap_emu_source_attach(struct auxcap_emu *emu, enum auxcap_emu_pmu pmu, int fd,
			     const struct auxcap_emu_source_ops *ops, void *ctx);

/**
 * Start the producer thread: it pulls items from every attached source (paced) and writes
 * them through the driver personalities, concurrently with the consumer.
 * Returns 0, -EALREADY if it runs already, or the negative errno of pthread_create().
 */
int auxcap_emu_start(struct auxcap_emu *emu);

/** Stop and join the producer thread (no-op if it does not run). */
void auxcap_emu_stop(struct auxcap_emu *emu);

/**
 * Stepping mode: pull items from the source of @fd (unpaced) until @nbytes trace bytes were
 * offered to the hardware (sideband items met on the way are written too).
 *
 * Returns the trace bytes offered (less than @nbytes only at the end of the stream), or a
 * negative errno.  Whether they reached the AUX area shows in auxcap_emu_stats().
 * Returns -EBADF if @fd is not an open emulated event.
 * Returns -ENOENT if the event has no source.
 * Returns -EBUSY if the producer thread is in the source's advance() (the thread runs).
 */
ssize_t auxcap_emu_step(struct auxcap_emu *emu, int fd, size_t nbytes);

/**
 * The hardware of @fd writes @len bytes of trace now (no source involved).
 *
 * Returns the bytes written into the AUX area (the rest was dropped: event disabled, hardware
 * stopped or truncated), or a negative errno.
 * Returns -EINVAL if @buf is NULL with @len > 0.
 * Returns -EBADF if @fd is not an open emulated event.
 */
ssize_t auxcap_emu_write(struct auxcap_emu *emu, int fd, const void *buf, size_t len);

/**
 * Schedule @fd out and in again (a context switch of the traced task): the driver ends its
 * AUX transaction (PERF_RECORD_AUX, aux_head published) and starts a new one.
 * Returns 0, or -EBADF if @fd is not an open emulated event.
 */
int auxcap_emu_flush(struct auxcap_emu *emu, int fd);

/**
 * Inject a hardware condition into @fd.
 * Returns 0 on success.
 * Returns -EBADF if @fd is not an open emulated event.
 * Returns -EOPNOTSUPP if the driver of @fd has no such condition.
 */
int auxcap_emu_inject(struct auxcap_emu *emu, int fd, enum auxcap_emu_fault fault);

/**
 * Counters of emulated event @fd, or the sum over all events ever opened with @fd == -1.
 * Returns 0 and fills @ret_stats, or -EBADF if @fd is not an open emulated event.
 */
int auxcap_emu_stats(struct auxcap_emu *emu, int fd, struct auxcap_emu_stats *ret_stats);

/** Options of a replay source; caller-owned, copied in. Zero = default. */
struct auxcap_emu_replay_opts {
	size_t sz;	   /* sizeof(struct auxcap_emu_replay_opts) */
	uint64_t rate;	   /* bytes per second when paced (whole writes: each goes out when
			      all of it is due); 0 = as fast as possible */
	size_t chunk;	   /* bytes per hardware write (one next() item); default 4096 */
	uint32_t pid, tid; /* task the trace belongs to; default: the calling process */
	size_t granule;	   /* bytes: every hardware write is a multiple of it (24 for whole
			      BTS records, 8 for u64 words); default 1 */
	bool loop;	   /* start over at the end instead of ending the stream */
};

/**
 * A replay source over a copy of @len bytes at @buf.
 *
 * Returns 0 and stores the source in @ret_replay (owned by the caller until it is attached
 * with auxcap_emu_replay_attach()), a negative errno otherwise.
 * Returns -EINVAL if @buf is NULL with @len > 0, or an option is invalid.
 * Returns -ENOMEM if out of memory.
 */
int auxcap_emu_replay_new(const void *buf, size_t len, const struct auxcap_emu_replay_opts *opts,
			  struct auxcap_emu_replay **ret_replay);

/**
 * A replay source over the contents of file @path (read once, now).
 * Returns as auxcap_emu_replay_new(), and the negative errno of open()/read() (e.g. -ENOENT).
 */
int auxcap_emu_replay_new_file(const char *path, const struct auxcap_emu_replay_opts *opts,
			       struct auxcap_emu_replay **ret_replay);

/**
 * Have @replay hand out sideband @item (MMAP2 or COMM) once the first @at bytes of trace were
 * delivered (0 = before any trace).  Items with the same @at keep their order.  @item and its
 * strings are copied.
 * Returns 0, -EINVAL if @item is not MMAP2 or COMM, or -ENOMEM.
 */
int auxcap_emu_replay_add_item(struct auxcap_emu_replay *replay, uint64_t at,
			       const struct auxcap_emu_item *item);

/** Free a replay source that was not attached.  NULL-safe. */
void auxcap_emu_replay_free(struct auxcap_emu_replay *replay);

/**
 * Attach @replay as the source of @fd or of the next event of @pmu (see
 * auxcap_emu_source_attach()).  On success the emulator owns @replay.
 */
int auxcap_emu_replay_attach(struct auxcap_emu *emu, enum auxcap_emu_pmu pmu, int fd,
			     struct auxcap_emu_replay *replay);

/** The replay source's ops (ctx = struct auxcap_emu_replay *). */
extern const struct auxcap_emu_source_ops auxcap_emu_replay_ops;

#endif /* AUXCAP_EMU_H */
