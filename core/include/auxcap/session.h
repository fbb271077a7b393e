/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture session: opens the events of a capture on every target, drives their data rings
 * and AUX areas, and hands what it reads to a sink.
 *
 * A session has one *event set* per target: (pid, cpu) pairs — per-CPU sets for system-wide
 * capture (pid -1), per-CPU sets restricted to a task and inherited by its children (pid P), or
 * per-thread sets (cpu -1).  In each set the AUX event (if any) is opened first and owns the
 * data ring and the AUX area; every other event of the set is redirected into that data ring
 * with PERF_EVENT_IOC_SET_OUTPUT (or, with opts.aux_ring_alone, into a second one).
 *
 * Full-trace mode streams everything: the loop wakes on ring wakeups (aux_watermark-aligned
 * for AUX), copies records and AUX bytes to the sink, and publishes the tails.  Snapshot mode
 * maps the AUX area read-only (overwrite, no wakeups) and copies it only when a snapshot is
 * requested; side-band records (MMAP2, COMM, ...) keep streaming so decode always has them,
 * and sampling events go to a second, overwrite data ring per set that is snapshotted with
 * the AUX data, so the samples of the same window go out together.
 *
 * Consecutive AUX snapshots do not overlap.  In snapshot mode the driver publishes an
 * in-buffer head (Intel PT, BTS and Arm SPE reset it on every wrap), so the session keeps, per
 * AUX buffer, the head of the previous snapshot, a copy of the bytes just before it, and a
 * free-running stream position of what it wrote.  At the next snapshot, if those bytes are
 * still in place the buffer has not wrapped past the previous snapshot: only the bytes
 * written since (head - previous head, modulo the size) go out, as a chunk whose offset is
 * exactly where the previous one ended.  Otherwise (or when too few of them lie outside the
 * new data to tell) the whole valid buffer goes out, its offset placed past a gap, and
 * stats.aux_snapshot_wrapped counts it.  So a chunk that starts where the previous chunk of
 * the same buffer ended continues it byte for byte.  The one case this cannot see is a
 * producer that wrote exactly whole buffers of identical bytes over the compared window.
 *
 * Loss is never silent: LOST and LOST_SAMPLES records, and AUX records flagged TRUNCATED,
 * PARTIAL or COLLISION are counted in struct auxcap_session_stats.  After TRUNCATED the kernel
 * disables the AUX event; the session re-enables it after draining and counts the event.
 *
 * Triggers (snapshot mode): a snapshot request comes from a signal, a key, a control FIFO or
 * the program itself (auxcap_session_request_from() with its source), or from a *trigger
 * event* of the session (a uprobe or an execute breakpoint on a function of the traced
 * program, see auxcap/trigger.h): every sample such an event writes is a request whose time
 * is the sample's own time, so the trigger-to-frozen latency is measured from the hit.
 * Requests that arrive while one is pending are coalesced and counted.  Each snapshot taken
 * is reported to the sink (struct auxcap_snapshot_info) with its source and latency.
 */
#ifndef AUXCAP_SESSION_H
#define AUXCAP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "auxcap/api.h"
#include "auxcap/sys.h"

struct perf_event_attr;
struct auxcap_session;
struct auxcap_sink;
struct auxcap_aux_ring;

/**
 * An event of the session.  @attr is read as a struct perf_event_attr of this build (config3
 * is not part of it with older uapi headers) unless attr->size is AUXCAP_ATTR_SIZE_VER8 (or
 * more): then @attr is the `attr` member of a struct auxcap_attr (auxcap/pmu.h) and its
 * config3 is passed to the kernel too (the event is opened with size 136 when config3 is
 * non-zero, e.g. arm_spe's inv_event_filter).
 */
struct auxcap_session_event {
	const struct perf_event_attr *attr; /* borrowed during open; copied */
	const char *name;                   /* borrowed during open; copied */
	/* a tracepoint's filter (ftrace's syntax: "prev_pid == 1 && next_comm != \"sh\""), set
	 * with PERF_EVENT_IOC_SET_FILTER on each of its fds; NULL: none.  Borrowed during open. */
	const char *filter;
};

/**
 * Find the valid bytes of an overwrite AUX buffer at snapshot time (perf's find_snapshot).
 * @head is the head the driver published (an in-buffer offset for PT/BTS/SPE); @old the end of
 * the previous snapshot (0 at first).  Sets [*ret_start, *ret_end) in free-running positions
 * (end - start <= buffer size).  @state is per set, zeroed at open, for the callback's memory.
 */
typedef int (*auxcap_find_snapshot_fn)(const struct auxcap_aux_ring *ring, uint64_t head,
				       uint64_t old, uint64_t *state, uint64_t *ret_start,
				       uint64_t *ret_end);

/** What asked for a snapshot (stored with each snapshot in the capture file). */
enum auxcap_trigger_source {
	AUXCAP_TRIGGER_API = 0,      /* auxcap_session_request()/_snapshot() without a source */
	AUXCAP_TRIGGER_SIGNAL = 1,   /* SIGUSR2 */
	AUXCAP_TRIGGER_HOTKEY = 2,   /* a key on the terminal */
	AUXCAP_TRIGGER_FIFO = 3,     /* the control FIFO */
	AUXCAP_TRIGGER_FUNCTION = 4, /* a trigger event (uprobe, breakpoint) fired */
	AUXCAP_TRIGGER_EXIT = 5,     /* the end of the capture (--snapshot=e) */
	AUXCAP_TRIGGER_SOURCE_MAX = 16, /* sources are below this */
};

/** Name of a trigger source ("signal", "function", ...), or "?" for an unknown value. */
const char *auxcap_trigger_source_name(unsigned int source);

/** One snapshot taken, as the session reports it to the sink after its data. */
struct auxcap_snapshot_info {
	uint64_t trigger_ns; /* CLOCK_MONOTONIC, ns: the request, or the trigger event's sample */
	uint64_t frozen_ns;  /* CLOCK_MONOTONIC, ns: every AUX event stopped, sample rings paused */
	uint32_t source;     /* enum auxcap_trigger_source */
	uint32_t coalesced;  /* further requests merged into this snapshot */
	uint32_t tid;        /* AUXCAP_TRIGGER_FUNCTION: thread that hit it, else (uint32_t)-1 */
	uint32_t cpu;        /* AUXCAP_TRIGGER_FUNCTION: its CPU if known, else (uint32_t)-1 */
	uint64_t call_ns;    /* a timed call (trigger_min_ns): how long it took (it ended at
				@trigger_ns), else 0 */
};

struct auxcap_session_opts {
	size_t sz;                    /* sizeof(struct auxcap_session_opts) */
	const struct auxcap_sys *sys; /* NULL: the real kernel */
	/** AUX event (Intel PT, BTS, SPE; real or emulated), NULL for none.  Borrowed. */
	const struct auxcap_session_event *aux;
	/** Other events: counters, tracepoints, sampling events.  Borrowed array. */
	const struct auxcap_session_event *events;
	size_t nr_events;
	/**
	 * Record MMAP2/COMM/TASK (and, with an AUX event, context switch) side-band: on a dummy
	 * event of its own, or, when a single event is streamed without an AUX event, on that
	 * event itself, as perf record does (the session then has one event and its records
	 * carry no IDENTIFIER).
	 */
	bool sideband;
	/**
	 * Targets: (pids[i], cpus[j]) for every pair; pids NULL means {-1}; cpus NULL {-1}.
	 * With CPUs, the events of pids[i > 0] on cpus[j] write into the rings of pids[0]'s on
	 * cpus[j] (PERF_EVENT_IOC_SET_OUTPUT): one set of rings per CPU, however many tasks.
	 */
	const pid_t *pids;
	size_t nr_pids;
	const int *cpus;
	size_t nr_cpus;
	/** Task targets are inherited by children (per-CPU sets only). */
	bool inherit;
	/** Events start enabled when the traced command calls exec (see auxcap_session_open). */
	bool enable_on_exec;
	size_t data_pages; /* data ring pages per set (power of two), 0: 64 */
	size_t aux_pages;  /* AUX pages per set (power of two), 0: 1024 (4 MiB) */
	bool snapshot;     /* snapshot (flight recorder) mode */
	/** Snapshot mode: overwrite data ring pages for sampling events, 0: data_pages. */
	size_t snapshot_data_pages;
	/**
	 * The AUX event keeps its data ring to itself; side-band and the other events (in
	 * full-trace mode) stream into a second data ring per set.  Needed when the AUX event
	 * is emulated: a kernel event cannot be redirected into the emulator's ring.
	 */
	bool aux_ring_alone;
	/** Snapshot mode: wrap detection; NULL uses auxcap_find_snapshot_zero_tail (PT/BTS). */
	auxcap_find_snapshot_fn find_snapshot;
	const struct auxcap_sink *sink; /* borrowed, outlives the session */
	/**
	 * Trigger events (snapshot mode only): opened on every target like the others, disabled
	 * and enabled with them, each set's in a small ring of its own that the loop reads at
	 * once; every sample is a snapshot request timed by the sample.  Give them
	 * sample_period 1 and use_clockid with CLOCK_MONOTONIC (auxcap_trigger_*_attr() do);
	 * the session sets the sample_id fields and wakeup_events 1.  Their records are not
	 * written to the sink.  Borrowed array; attrs copied, pointers inside an attr (a
	 * uprobe's path) borrowed until auxcap_session_open() returns.  With @inherit, give no
	 * uprobe-PMU event: the kernel cannot copy it into new tasks (auxcap/trigger.h).
	 */
	const struct auxcap_session_event *triggers;
	size_t nr_triggers;
	/**
	 * The `reference` of each AUX chunk (PERF_RECORD_AUXTRACE), read when it is copied: the
	 * backend's timestamp (the TSC for Intel PT and BTS).  NULL: CLOCK_MONOTONIC in ns.
	 */
	uint64_t (*reference)(void);
	/** Open every event with attr.use_clockid on @clockid (a CLOCK_* id). */
	bool use_clockid;
	int clockid;
	/**
	 * Bytes: the AUX trace is made of records of this size (the backend's alignment, Intel
	 * BTS 24); every AUX copy is trimmed to whole records as perf does.  0: none.
	 */
	uint32_t aux_alignment;
	/**
	 * Address filter set on every AUX event with PERF_EVENT_IOC_SET_FILTER right after it is
	 * opened (the kernel's syntax), NULL for none.  Borrowed during open.  When the kernel
	 * refuses it, open fails with *ret_failed_event = -4.
	 */
	const char *aux_filter;
	/**
	 * The events are disabled and enabled again while recording (a control FIFO, a start
	 * delay): side-band gets a dummy event of its own even for a single event, which
	 * auxcap_session_enable() never disables, so the MMAP2 and COMM of what runs meanwhile
	 * still arrive.
	 */
	bool toggled;
	/**
	 * A delayed start (record -D): only side-band starts with the session (at exec with
	 * @enable_on_exec, else with auxcap_session_enable_sideband()); the other events wait
	 * for auxcap_session_enable().  Side-band then has an event of its own, as with @toggled.
	 */
	bool start_delayed;
	/**
	 * With trigger events: a snapshot only for a call that took at least this long (ns of
	 * CLOCK_MONOTONIC; 0: every trigger sample asks for one).  The triggers then come in
	 * pairs, triggers[2i] firing at a function's entry (a uprobe) and triggers[2i+1] at its
	 * returns (a return probe).  Entries do not wake the loop; at each return the loop reads
	 * every trigger ring, matches the return with its thread's latest entry before it (a
	 * stack per thread: recursion pairs up), and asks for a snapshot timed at the return
	 * when the call took @trigger_min_ns or more (stats.trigger_hits counts those,
	 * trigger_calls every call timed).  After lost trigger samples the stacks start afresh.
	 */
	uint64_t trigger_min_ns;
	/**
	 * Side-band also has the mappings of data (attr.mmap_data): anonymous memory, the
	 * stack, the heap, files mapped without exec, each flagged PERF_RECORD_MISC_MMAP_DATA.
	 * They name the data addresses of a sampled trace (Arm SPE), as perf record -d does.
	 */
	bool data_mmaps;
};

struct auxcap_session_stats {
	uint64_t wakeups;          /* poll() returns with ready rings */
	uint64_t passes;           /* drain passes over all rings */
	uint64_t records;          /* data ring records written to the sink */
	uint64_t record_bytes;
	uint64_t lost_records;     /* PERF_RECORD_LOST seen */
	uint64_t lost;             /* sum of their counts: records the kernel dropped */
	uint64_t lost_samples;     /* sum of PERF_RECORD_LOST_SAMPLES */
	uint64_t corrupt;          /* malformed ring headers (should stay 0) */
	uint64_t aux_records;      /* PERF_RECORD_AUX seen */
	uint64_t aux_truncated;    /* ... flagged TRUNCATED: AUX data lost */
	uint64_t aux_partial;      /* ... flagged PARTIAL: gaps */
	uint64_t aux_collision;    /* ... flagged COLLISION */
	uint64_t aux_reenables;    /* AUX events re-enabled after TRUNCATED */
	uint64_t aux_bytes;        /* AUX bytes written to the sink */
	uint64_t aux_chunks;
	uint64_t snapshots;        /* snapshots taken */
	uint64_t snapshot_requests_coalesced; /* requests that arrived while one was pending */
	uint64_t snapshot_latency_ns_last; /* request to AUX frozen, last snapshot */
	uint64_t snapshot_latency_ns_max;
	uint64_t toggles;	   /* AUXCAP_REQ_ENABLE and _DISABLE requests carried out */
	uint64_t trigger_hits;     /* samples read from the trigger events, and hits reported
				      with auxcap_session_request_hit() */
	uint64_t trigger_lost;     /* trigger samples the kernel dropped (LOST in their rings) */
	uint64_t trigger_snapshots; /* snapshots whose request came from a trigger event */
	/** AUX bytes a snapshot did not write again: they went out with the previous one. */
	uint64_t aux_snapshot_trimmed;
	/**
	 * Snapshots taken after the AUX buffer had wrapped past the previous snapshot (or when
	 * that could not be ruled out): the whole valid buffer goes out, and the trace written
	 * between the two snapshots beyond one buffer is not in the file (flight recorder).
	 */
	uint64_t aux_snapshot_wrapped;
	/** With trigger_min_ns: calls timed (returns matched with an entry), the longest. */
	uint64_t trigger_calls;
	uint64_t trigger_max_ns;
};

enum auxcap_session_request {
	AUXCAP_REQ_SNAPSHOT = 1u << 0,
	AUXCAP_REQ_STOP = 1u << 1,
	AUXCAP_REQ_ENABLE = 1u << 2,
	AUXCAP_REQ_DISABLE = 1u << 3,
};

/**
 * Open every event on every target, map the rings and announce the events to the sink.
 * Events start disabled unless @opts->enable_on_exec (then the kernel enables them at exec).
 *
 * Returns 0 and sets @ret_s, or a negative errno from the kernel unchanged, with nothing left
 * open.  auxcap_session_error() is not available then; the caller knows which call failed
 * from *@ret_failed_event (index into events, -1 for the AUX event, -2 for side-band, -4 for
 * the AUX event's address filter, AUXCAP_SESSION_FAILED_TRIGGER - i for trigger i,
 * AUXCAP_SESSION_FAILED_FILTER - i for the filter of event i) when @ret_failed_event is not
 * NULL.
 * Returns -EINVAL for inconsistent options (no events, a page count not a power of two,
 * no sink, @opts->sz too small, trigger events without snapshot mode).
 */
#define AUXCAP_SESSION_FAILED_TRIGGER (-100)
#define AUXCAP_SESSION_FAILED_FILTER (-1000)
int auxcap_session_open(const struct auxcap_session_opts *opts, struct auxcap_session **ret_s,
			int *ret_failed_event);

/** Close every event, unmap every ring, free @s.  NULL-safe.  Does not drain. */
void auxcap_session_free(struct auxcap_session *s);

/**
 * Enable or disable all events; the side-band event is enabled with them, but not disabled
 * (perf's control "disable" too keeps side-band flowing: without the mappings and command
 * names of that time, what is recorded later cannot be named).
 */
int auxcap_session_enable(struct auxcap_session *s, bool enable);

/** Enable the side-band event only (a delayed start on running tasks).  Returns 0 or a
 * negative errno. */
int auxcap_session_enable_sideband(struct auxcap_session *s);

/**
 * Run the capture loop until a stop request, until @timeout_ms passes (-1: no limit), or until
 * every monitored task has exited (POLLHUP on all sets).  Returns 0 on a normal end, a negative
 * errno if the sink or the kernel failed.
 */
int auxcap_session_run(struct auxcap_session *s, int timeout_ms);

/**
 * Ask the loop for something; async-signal-safe (a write to an eventfd), callable from a
 * signal handler or another thread.  Snapshot requests that arrive while one is pending are
 * coalesced and counted.
 */
void auxcap_session_request(struct auxcap_session *s, unsigned int req);

/**
 * As auxcap_session_request(), naming what asked (enum auxcap_trigger_source) for the
 * snapshot's record.  When requests coalesce, the first one's source and time are kept.
 */
void auxcap_session_request_from(struct auxcap_session *s, unsigned int req,
				 enum auxcap_trigger_source source);

/**
 * A hit of a function trigger seen outside the session's own trigger events (the emulator's
 * live tracer, which sees every instruction): a snapshot request of source
 * AUXCAP_TRIGGER_FUNCTION timed @time_ns (CLOCK_MONOTONIC, as the kernel times the trigger
 * events' samples), made by task @tid on @cpu ((uint32_t)-1 if unknown), counted in
 * stats.trigger_hits like a sample of a trigger event.  Callable from any thread; not
 * async-signal-safe (it takes a lock).
 */
void auxcap_session_request_hit(struct auxcap_session *s, uint64_t time_ns, uint32_t tid,
				uint32_t cpu);

/**
 * As auxcap_session_request_hit(), for a call that ended at @time_ns after @call_ns (a
 * minimum-duration trigger seen outside the session's trigger events): the snapshot's record
 * keeps the call's duration (auxcap_snapshot_info.call_ns).
 */
void auxcap_session_request_call(struct auxcap_session *s, uint64_t time_ns, uint32_t tid,
				 uint32_t cpu, uint64_t call_ns);

/** Drain every ring once now (full-trace mode), as the loop does on a wakeup. */
int auxcap_session_drain(struct auxcap_session *s);

/**
 * Take a snapshot now (snapshot mode), for the pending request if there is one (its source
 * and time), else as AUXCAP_TRIGGER_API requested now.  Whatever fails, the events it stopped
 * are running again when it returns.  Returns 0 or a negative errno.
 */
int auxcap_session_snapshot(struct auxcap_session *s);

/**
 * Write the side-band of tasks that already run (perf record -p does the same): for every
 * distinct target pid of the session (thread ids are grouped by process) a COMM per thread
 * from /proc/PID/task/TID/comm and an MMAP2 per executable mapping (and per named mapping
 * like [vdso]) from /proc/PID/maps, with time 0 and the session's first event's id in
 * their sample_id, to the sink.  Call it after auxcap_session_open() and before the events
 * run, so they precede the captured records.  @proc is the procfs root (NULL: "/proc").
 * A system-wide session (per CPU, no target task: perf record -a) gets every task of the
 * system (auxcap_proc_synthesize_all(): tasks that end meanwhile or cannot be read are left
 * out).
 *
 * Returns the number of records written, or a negative errno.
 * Returns -ESRCH if a target is gone, -EACCES if its maps cannot be read, the sink's error.
 */
int auxcap_session_synthesize(struct auxcap_session *s, const char *proc);

/**
 * Write the kernel's mapping as perf record does (auxcap_proc_synthesize_kernel(), the session's
 * first event's id in its sample_id), so that perf and auxcap name kernel addresses.  Call it
 * where auxcap_session_synthesize() may be called.
 *
 * Returns the number of records written (1), or a negative errno: -EACCES if kallsyms hides
 * the kernel's addresses (kptr_restrict), -ENOENT, the sink's error.
 */
int auxcap_session_synthesize_kernel(struct auxcap_session *s, const char *proc);

/** Counters so far (copied). */
void auxcap_session_get_stats(const struct auxcap_session *s, struct auxcap_session_stats *ret);

struct auxcap_perf_time_conv;

/**
 * The time conversion fields of the first data ring's control page (what perf copies into
 * PERF_RECORD_TIME_CONV), read with auxcap_time_conv_read_page().
 * Returns 0 and fills @ret (check ret->cap_user_time_zero), -ENODEV if the session has no
 * data ring, -EAGAIN if the page never settled.
 */
int auxcap_session_time_conv(const struct auxcap_session *s, struct auxcap_perf_time_conv *ret);

/** Number of event sets and their targets. */
size_t auxcap_session_nr_sets(const struct auxcap_session *s);

/**
 * The most bytes one snapshot can hand to the sink: every AUX area whole and every data
 * ring full (an upper bound, for auxcap_perf_writer_reserve()).  0 in full-trace mode.
 */
uint64_t auxcap_session_snapshot_bytes(const struct auxcap_session *s);

/**
 * Default wrap detection for Intel PT and BTS: AUX pages start zeroed, so the buffer has
 * wrapped once any of its last 4 KiB is non-zero (remembered in @state); then the whole buffer
 * ending at @head is valid, else [old, head).
 */
AUXCAP_API int auxcap_find_snapshot_zero_tail(const struct auxcap_aux_ring *ring, uint64_t head,
					      uint64_t old, uint64_t *state, uint64_t *ret_start,
					      uint64_t *ret_end);

/**
 * The AUX buffer of @ring, for find_snapshot callbacks: its mapping (read-only in snapshot
 * mode, borrowed for the callback) and its size in bytes in *@ret_size.
 */
AUXCAP_API const unsigned char *auxcap_aux_ring_data(const struct auxcap_aux_ring *ring,
						     uint64_t *ret_size);

#endif /* AUXCAP_SESSION_H */
