/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap/decode_report.h: the summary of a capture (`auxcap report`), aggregated from a
 * decode session's merged stream (auxcap/decode.h).
 *
 *	auxcap_report_new(d, &opts, &r);
 *	while (auxcap_decode_next(d, &ev) == 1)
 *		auxcap_report_event(r, ev);
 *	auxcap_report_finish(r);
 *	auxcap_report_sort(r, AUXCAP_REPORT_SORT_AUTO, 0);
 *	... auxcap_report_get_summary(r), auxcap_report_get_func(r, i), ...
 *	auxcap_report_free(r);
 *
 * What is aggregated, from the events alone (no second decoder):
 *   - per thread (the event's tid; trace of an unknown thread per queue): trace time, the
 *     instructions and branches the trace says ran, trace events, gaps, samples;
 *   - per function: from the call stack the decode stage reconstructs from the trace (each
 *     trace event's stack change, mirrored), as `decode --func-time` and the folded writer
 *     count it:
 *       self   trace time between two trace events of a thread goes to the function of its
 *              innermost frame; the instructions of a BRANCH or trace-stop event (its
 *              ninsn) and the branch itself go to the frame the thread was in before it;
 *       total  the same for every function on the stack (a recursive function once);
 *       calls  frames it began (calls into it);
 *     time with tracing stopped (after a trace stop, until the next event) counts nowhere;
 *     time lost in a decode gap (from the gap to the thread's next event) counts as gap time;
 *   - per function and sample event: counter samples whose IP is in the function (self: the
 *     IP decode looks up, i.e. the user-mode IP of a sample taken in the kernel with
 *     REGS_USER; an IP without a symbol, found in the trace, counts for the function of its
 *     innermost frame, which the trace delimits even without symbols), and samples that have
 *     the function anywhere on their reconstructed stack (total; a sample whose IP the trace
 *     did not place, on its callchain instead, if it has one: PERF_SAMPLE_CALLCHAIN, the
 *     kernel's frame-pointer walk); trace samples (Arm SPE
 *     records) count by their IP in a slot of their own;
 *   - functions are symbols (name and file, as auxcap_decode_symbolize() gives them: two
 *     symbols of one name in one file, static functions, stay two); an address without a
 *     symbol is an entry of its own ("[unknown]" at that address), except kernel addresses,
 *     which are one entry ("[kernel]");
 *   - the time span, the CPUs seen, every loss and gap (with the first few gaps and
 *     AUXTRACE_ERRORs in detail).
 * Memory grows with the functions and threads seen, not with the length of the trace.
 *
 * Ownership: the report borrows @d (it must outlive the report); strings it returns are
 * borrowed from @d (symbols, command names) or from the report, valid until both are freed.
 */
#ifndef AUXCAP_DECODE_REPORT_H
#define AUXCAP_DECODE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auxcap/decode.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Gaps and AUXTRACE_ERRORs kept in detail by default. */
#define AUXCAP_REPORT_NOTES_DEFAULT 5

struct auxcap_report_func;

/** Options of a report; caller-owned, copied.  Zero-fill, then set @sz. */
struct auxcap_report_opts {
	size_t sz;	  /* sizeof(struct auxcap_report_opts) */
	bool per_thread;  /* functions per thread (auxcap_report_func.tid), else merged */
	size_t max_notes; /* gaps and errors kept in detail each; 0: AUXCAP_REPORT_NOTES_DEFAULT */
	/* the threads counted (auxcap_decode_filter_match()); NULL: all.  Borrowed: it must
	 * outlive the report's events. */
	const struct auxcap_decode_filter *filter;
	/* Per-call figures (auxcap_report_get_calls()) of the functions this says yes to, asked
	 * once per function (per thread with @per_thread) when the report first meets it (@f
	 * borrowed for the call: its name, dso, addr, kernel, tid are set); NULL: none. */
	bool (*calls_of)(void *arg, const struct auxcap_report_func *f);
	void *calls_arg;
	size_t slowest; /* calls kept in detail per such function; 0: AUXCAP_REPORT_SLOWEST_DEFAULT */
	bool call_graph; /* keep the trace's call graph (auxcap_report_get_edge()) */
	/* the sampled data accesses by function and by cache line (auxcap_report_get_mem_func(),
	 * auxcap_report_get_mem_line()); their sum is always kept (auxcap_report_get_mem()) */
	bool mem;
};

/** Calls kept in detail per function by default (auxcap_report_calls.slowest). */
#define AUXCAP_REPORT_SLOWEST_DEFAULT 10

/** Buckets of auxcap_report_calls' histograms: 0 holds 0, k >= 1 holds [2^(k-1), 2^k). */
#define AUXCAP_REPORT_HIST_BUCKETS 65

/** How auxcap_report_sort() orders the functions (most first). */
enum auxcap_report_sort_key {
	AUXCAP_REPORT_SORT_AUTO = 0, /* self time if the trace has time, else self instructions,
				      * else self branches */
	AUXCAP_REPORT_SORT_SELF,     /* self trace time */
	AUXCAP_REPORT_SORT_TOTAL,    /* total (inclusive) trace time */
	AUXCAP_REPORT_SORT_INSNS,    /* self instructions */
	AUXCAP_REPORT_SORT_BRANCHES, /* self branches */
	AUXCAP_REPORT_SORT_CALLS,    /* calls into it */
	AUXCAP_REPORT_SORT_SAMPLES,  /* self samples of one sample slot, then total */
	AUXCAP_REPORT_SORT_SAMPLES_TOTAL, /* total samples of one sample slot, then self */
};

/** A function (or an address without a symbol) and what was counted in it. */
struct auxcap_report_func {
	const char *name; /* symbol name, NULL if no symbol covers it (see @addr, @kernel) */
	const char *dso;  /* file of the mapping, NULL if not known */
	uint64_t addr;	  /* no symbol: the address (a frame's function entry, or a sample's IP),
			   * which is what tells it apart; with a symbol: its start where it was
			   * first met (run-time address; two symbols of one name differ by it);
			   * kernel: 0 */
	bool kernel;	  /* no symbol, kernel address: all such addresses are this one entry */
	int32_t tid;	  /* per_thread only: the thread (negative: trace of an unknown thread,
			   * queue -1 - tid); -1 without per_thread */
	uint64_t self_ns, total_ns;		/* trace time, ns */
	uint64_t self_insns, total_insns;	/* instructions the trace says ran */
	uint64_t self_branches, total_branches; /* taken branches */
	uint64_t calls;				/* frames it began */
	/* Per sample slot (auxcap_report_summary.sample_slots, NULL when the function has no
	 * sample): samples whose IP is in it, and samples with it on their stack or at their IP. */
	const uint64_t *samples;
	const uint64_t *samples_total;
};

/**
 * A file of code (an executable, a shared object, "[kernel.kallsyms]", "[vdso]") and the sums
 * of its functions' self counts: where the time went by object, as perf report --sort dso.
 */
struct auxcap_report_dso {
	const char *dso;  /* as auxcap_report_func.dso; NULL: code of no known mapping */
	bool kernel;	  /* NULL @dso: kernel addresses without a symbol (else user code) */
	int32_t tid;	  /* per_thread only: the thread (as auxcap_report_func.tid), else -1 */
	uint64_t self_ns, self_insns, self_branches; /* trace time, instructions, branches */
	size_t functions; /* its functions (and addresses without a symbol) in the table */
	/* Per sample slot (auxcap_report_summary.nr_slots): samples whose IP is in it. */
	const uint64_t *samples;
	uint64_t samples_sum; /* of @samples over the slots */
};

/**
 * An edge of the call graph the trace shows (auxcap_report_opts.call_graph): @caller called
 * @callee (the frame a call event pushed, and the frame under it).  Frames the trace did not
 * see begin (the outermost, found by a return) have no edge.
 */
struct auxcap_report_edge {
	const struct auxcap_report_func *caller, *callee;
	uint64_t calls; /* calls of @callee from @caller */
	/* @callee's trace time and instructions in those calls, its own callees' included (as
	 * auxcap_report_func.total_*, but per activation: a recursive call's time is in the
	 * call that made it too); a call still running where the trace ends counts to there */
	uint64_t ns, insns;
};

/** The callees kept per call (auxcap_report_call.callees). */
#define AUXCAP_REPORT_CALL_CALLEES 4

/** One call of a function, from the call into it to the return out of it. */
struct auxcap_report_call {
	uint64_t start, end;	/* perf time of the call and of the return, ns */
	bool timed;		/* both times are the events' own (the trace has timestamps) */
	int32_t tid, cpu;	/* the thread, and the CPU of the return (-1 if not known) */
	uint64_t ns;		/* end - start when @timed, else 0 */
	uint64_t insns;		/* instructions the trace says ran in it, its callees' too */
	const struct auxcap_report_func *caller; /* the function it returned to; NULL: none */
	/*
	 * Where its time went.  @trace_ns: the trace time of the call (its thread's time
	 * between trace events, tracing on), so @ns - @trace_ns is time the thread spent
	 * blocked, preempted, in untraced code (the kernel, with a user-only trace) or in a
	 * stopped trace; of @trace_ns, @callees_ns in its callees (their trace time in this
	 * call, their own callees' included), the rest in its own code; the callees that took
	 * the most (and how many calls of each).
	 */
	uint64_t trace_ns, callees_ns;
	size_t nr_callees;
	struct auxcap_report_callee {
		const struct auxcap_report_func *func;
		uint64_t ns, calls;
	} callees[AUXCAP_REPORT_CALL_CALLEES];
};

/**
 * The calls of one function that auxcap_report_opts.calls_of chose: how long each took from
 * the call into it to the return out of it (elapsed perf time: time the thread spent blocked,
 * preempted or in untraced code in between counts), and the instructions the trace says ran
 * in it, its callees' included.  A call counts when the trace shows both ends: the call
 * event that made its frame and a return that ended it (a return that ends several frames at
 * once, a longjmp or a return past a tail call, ends each of them).  Not counted:
 *   across_gap   calls that returned after a decode gap of their thread (the gap may have
 *                lost the return, and the frame is another call's);
 *   unfinished   calls still running where the trace ends (a snapshot's last moment), or
 *                whose frame the decode stage dropped without a return (an exec, a stack
 *                rebuilt after its limit).
 * Recursion: each activation is a call of its own.
 */
struct auxcap_report_calls {
	const struct auxcap_report_func *func;
	uint64_t calls;		  /* counted (returned) */
	uint64_t timed;		  /* ... of them with time at both ends: the _ns figures */
	uint64_t across_gap, unfinished;
	/* The unfinished call that had run longest where its thread's trace ends (a lower
	 * bound of its time: in a snapshot, often the call that was slow): its start, how long
	 * it had run then, its thread (as auxcap_report_thread.tid: negative for trace of an
	 * unknown thread); @running_ns 0 if no unfinished call has a time. */
	uint64_t running_start, running_ns;
	int32_t running_tid;
	uint64_t min_ns, max_ns, sum_ns;	  /* over the timed calls */
	uint64_t min_insns, max_insns, sum_insns; /* over the counted calls */
	uint64_t hist_ns[AUXCAP_REPORT_HIST_BUCKETS];	 /* timed calls by duration, ns */
	uint64_t hist_insns[AUXCAP_REPORT_HIST_BUCKETS]; /* counted calls by instructions */
	/* The longest calls (by time, then instructions; untimed ones by instructions),
	 * longest first, at most auxcap_report_opts.slowest. */
	size_t nr_slowest;
	const struct auxcap_report_call *slowest;
};

/** The histogram bucket (0 .. AUXCAP_REPORT_HIST_BUCKETS - 1) of value @v. */
static inline unsigned auxcap_report_hist_bucket(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0u;
}

/** A thread seen in the trace or in samples. */
struct auxcap_report_thread {
	int32_t tid;	  /* negative: trace of an unknown thread, of queue -1 - tid */
	int32_t pid;	  /* -1 if not known */
	const char *comm; /* its last command name, NULL if not known */
	uint64_t trace_ns, insns, branches, trace_events;
	uint64_t gaps, gap_ns;	/* decode gaps in its trace, and the trace time they lost */
	uint64_t samples;	/* counter samples of any event */
	uint64_t first_time, last_time; /* perf time of its first and last event, ns */
};

/** A sample slot: one event of the capture, or (the last slot) the trace's own samples. */
struct auxcap_report_slot {
	const struct auxcap_perf_evsel *evsel; /* NULL for the trace-samples slot */
	const char *name;		       /* event name; NULL if the file has none */
	uint64_t samples;		       /* samples of this slot */
	uint64_t traced;  /* counter samples on a thread with trace (a context) */
	uint64_t aligned; /* ... whose IP was found in the trace near their time */
};

/** A gap or an AUXTRACE_ERROR, in detail. */
struct auxcap_report_note {
	uint64_t time;	/* perf time, ns */
	int32_t cpu;	/* -1 if not known */
	int32_t tid;	/* -1 if not known */
	int32_t queue;	/* gaps: the AUX queue; errors: -1 */
	uint64_t offset; /* gaps: the byte offset in the queue's AUX stream */
	uint64_t ip;	 /* gaps: the decoder's IP if known; errors: the record's ip; else 0 */
	int err;	 /* gaps: negative errno; errors: the record's code */
	char what[80];	 /* gaps: the reason; errors: the record's message */
};

/** The capture as a whole. */
struct auxcap_report_summary {
	uint64_t events;	       /* events of the merged stream */
	bool has_span;		       /* @first_time/@last_time are set */
	uint64_t first_time, last_time; /* first and last timed event (not time 0), ns */
	bool trace_has_span;
	uint64_t trace_first, trace_last; /* first and last trace event, ns */
	bool trace_timed;	/* trace time was counted (the trace has hardware timestamps) */
	size_t nr_cpus;		/* CPUs seen (events with a CPU) */
	const int32_t *cpus;	/* ascending */
	size_t nr_threads;	/* as auxcap_report_nr_threads() */
	/* Trace */
	size_t nr_queues;	  /* AUX queues */
	uint64_t aux_bytes;	  /* trace bytes in them */
	uint64_t discontinuities; /* AUX buffers not contiguous with the one before */
	uint64_t trace_events, trace_ns, insns, branches;
	/* Samples */
	size_t nr_slots;	/* auxcap_decode_nr_evsels() + 1 (the last: trace samples) */
	const struct auxcap_report_slot *slots;
	uint64_t samples;	/* counter samples, every event */
	/* Losses and gaps */
	uint64_t lost_records, lost;		     /* PERF_RECORD_LOST, and the events they lost */
	uint64_t lost_samples_records, lost_samples; /* PERF_RECORD_LOST_SAMPLES, and samples */
	uint64_t aux_truncated, aux_partial, aux_collision; /* AUX records with that flag */
	uint64_t aux_flagged_bytes; /* AUX bytes of those records (the data they cover) */
	uint64_t auxtrace_errors;   /* PERF_RECORD_AUXTRACE_ERROR */
	uint64_t gaps, gap_ns;	    /* decode gaps, and the trace time they lost */
	uint64_t missing_binaries;  /* mappings whose file could not be read (code not decoded) */
	size_t nr_gap_notes, nr_error_notes; /* the first few, in detail */
	const struct auxcap_report_note *gap_notes;
	const struct auxcap_report_note *error_notes;
	bool no_loss; /* nothing of the above: no record, sample, AUX byte or trace lost */
};

/** Where a sampled data access was served, from what its trace record says. */
enum auxcap_report_mem_level {
	AUXCAP_REPORT_MEM_L1 = 0, /* the L1 data cache: a hit */
	AUXCAP_REPORT_MEM_MID,	  /* an L1 miss that did not reach the last-level cache (an L2
				   * hit under an L3) */
	AUXCAP_REPORT_MEM_LLC,	  /* the last-level cache: a hit */
	AUXCAP_REPORT_MEM_DRAM,	  /* a last-level cache miss: memory, or another socket (remote) */
	AUXCAP_REPORT_MEM_NA,	  /* the record has no cache event */
	AUXCAP_REPORT_MEM_LEVELS
};

/** The level a sampled data access's auxcap_trace_event.mem (AUXCAP_TRACE_MEM_*) says
 * served it: the lowest one it missed in (no cache bit: AUXCAP_REPORT_MEM_NA). */
enum auxcap_report_mem_level auxcap_report_mem_level_of(uint32_t mem);

/** The level a sampled data access was served by: the one its data source says
 * (auxcap_trace_event.source: L1; L2 or a peer core's cache: MID; the cluster's, the
 * system's or a peer cluster's cache: LLC; another socket or memory: DRAM), else the one the
 * cache bits of @mem say (auxcap_report_mem_level_of()). */
enum auxcap_report_mem_level auxcap_report_mem_level_from(uint32_t mem, uint32_t source);

/** Whether another socket served a sampled data access: its events say so (@mem's
 * AUXCAP_TRACE_MEM_REMOTE), or its data source (@source). */
static inline bool auxcap_report_mem_remote(uint32_t mem, uint32_t source)
{
	return (mem & AUXCAP_TRACE_MEM_REMOTE) || source == AUXCAP_TRACE_SRC_REMOTE;
}

/** Whether data source @source is another core's cache: a peer core's, the cluster's, a peer
 * cluster's, another socket's (perf c2c's peer snoops). */
static inline bool auxcap_report_mem_peer(uint32_t source)
{
	return source == AUXCAP_TRACE_SRC_PEER_CORE || source == AUXCAP_TRACE_SRC_LOCAL_CLUSTER ||
	       source == AUXCAP_TRACE_SRC_PEER_CLUSTER || source == AUXCAP_TRACE_SRC_REMOTE;
}

/** The short name of @level: "l1", "l2", "llc", "memory", "na" (the JSON outputs' keys);
 * NULL if out of range. */
const char *auxcap_report_mem_level_key(enum auxcap_report_mem_level level);

/** The short name of data source @source (enum auxcap_trace_mem_source): "l1", "l2",
 * "peer_core", "local_cluster", "sys_cache", "peer_cluster", "remote", "dram", "none" (the
 * JSON outputs' keys); NULL if out of range. */
const char *auxcap_report_mem_source_key(uint32_t source);

/**
 * Sampled data accesses by where their data came from, as the trace said (Arm SPE's
 * data-source packet on a CPU whose encoding the backend knows: loads only on Neoverse
 * cores).  Index: enum auxcap_trace_mem_source; [AUXCAP_TRACE_SRC_NONE] counts the loads
 * whose record said nothing.  All zero past [NONE] when the capture has no data source.
 */
struct auxcap_report_mem_sources {
	uint64_t accesses[AUXCAP_TRACE_SRC_COUNT];
	uint64_t lat[AUXCAP_TRACE_SRC_COUNT];	  /* their total latency, summed */
	uint64_t lat_max[AUXCAP_TRACE_SRC_COUNT]; /* ... and the longest */
};

/**
 * Sampled data accesses (Arm SPE's loads and stores: auxcap_trace_event.mem) and where they
 * were served.  Latencies are the records' own, in cycles: total (issue to completion, perf
 * mem's "weight") and translation.
 */
struct auxcap_report_mem {
	uint64_t accesses;     /* sampled data accesses */
	uint64_t loads, stores; /* of them (an atomic read-modify-write is both) */
	uint64_t level[AUXCAP_REPORT_MEM_LEVELS];	/* accesses by where they were served */
	uint64_t level_lat[AUXCAP_REPORT_MEM_LEVELS];	/* their total latency, summed */
	uint64_t level_lat_max[AUXCAP_REPORT_MEM_LEVELS]; /* ... and the longest */
	uint64_t remote;       /* served by another socket (of level DRAM or LLC) */
	uint64_t peer;	       /* served by another core's cache, as the data source says (a
				* peer core, the cluster's, a peer cluster's, another socket's:
				* perf c2c's peer snoops; 0 without data sources) */
	uint64_t tlb_walks;    /* the translation missed the TLB and walked the page tables */
	uint64_t lat, lat_max; /* total latency: sum and longest */
	uint64_t xlat_lat;     /* translation latency, summed */
};

/** Of @m's accesses, those that missed the L1 (served by an L2, the LLC or memory). */
static inline uint64_t auxcap_report_mem_l1_misses(const struct auxcap_report_mem *m)
{
	return m->level[AUXCAP_REPORT_MEM_MID] + m->level[AUXCAP_REPORT_MEM_LLC] +
	       m->level[AUXCAP_REPORT_MEM_DRAM];
}

/** Sampled data accesses of one function (the function of the access's PC). */
struct auxcap_report_mem_func {
	const struct auxcap_report_func *func;
	struct auxcap_report_mem m;
};

/** Bytes of a cache line as auxcap_report_get_mem_line() groups data addresses. */
#define AUXCAP_REPORT_LINE_SIZE 64
/** Functions and threads told apart per cache line. */
#define AUXCAP_REPORT_LINE_FUNCS   4
#define AUXCAP_REPORT_LINE_THREADS 8

/**
 * Sampled data accesses to one cache line of one process: which functions made them and how
 * many threads (perf c2c's question: a line that several threads store to is shared, truly
 * or falsely).
 */
struct auxcap_report_mem_line {
	uint64_t addr; /* the line's first byte (a data virtual address) */
	int32_t pid;   /* its process, -1 if not known */
	uint64_t time; /* perf time of its first sampled access: the variable there is
			* auxcap_decode_data_symbolize_at(d, pid, addr, time, ...)'s */
	struct auxcap_report_mem m;
	size_t nr_funcs; /* the first functions that accessed it (at most
			  * AUXCAP_REPORT_LINE_FUNCS), by their accesses, most first */
	struct {
		const struct auxcap_report_func *func;
		uint64_t accesses;
	} funcs[AUXCAP_REPORT_LINE_FUNCS];
	uint64_t other_funcs; /* accesses by functions past those */
	/* threads that accessed it (the first AUXCAP_REPORT_LINE_THREADS are told apart: more
	 * is said by @threads_more), and of them those that stored to it */
	size_t threads, store_threads;
	bool threads_more;
};

/** What a data object is (auxcap_report_mem_object). */
enum auxcap_report_mem_object_kind {
	/* a global or static variable (a sized data symbol of the process's files): @name, the
	 * file @dso, use.addr its first byte */
	AUXCAP_REPORT_MEM_OBJ_VARIABLE,
	/* a mapping no variable of which holds the accesses: @name as the kernel gave it (a
	 * file's path, "[stack]", "[heap]", "//anon"); use.addr an anonymous mapping's start
	 * (each is an object of its own), else 0 (a file's or a named region's mappings are one
	 * object) */
	AUXCAP_REPORT_MEM_OBJ_MAPPING,
	/* no mapping known there (a capture without the mappings of data): @name NULL */
	AUXCAP_REPORT_MEM_OBJ_UNKNOWN,
};

/**
 * Sampled data accesses to one data object of one process (perf mem report's symbol_daddr,
 * and dso_daddr where no variable is known): the variable or mapping holding each access's
 * address, as auxcap_decode_data_symbolize_at() and auxcap_decode_data_map_at() find it.
 */
struct auxcap_report_mem_object {
	enum auxcap_report_mem_object_kind kind;
	const char *name; /* borrowed from the decode until it is closed; NULL: unknown */
	const char *dso;  /* a variable's file, else NULL */
	/* its accesses, as a line's: addr (see @kind), pid, time of the first, the figures, the
	 * first functions and the threads that made them */
	struct auxcap_report_mem_line use;
};

struct auxcap_report;

/**
 * A report over @d's merged stream (@d borrowed: it must outlive the report).  @opts may be
 * NULL (defaults), else it is copied.
 * Returns 0 and sets *@ret (owned by the caller, free with auxcap_report_free()).
 * Returns -EINVAL if @d or @ret is NULL or @opts is too small, -ENOMEM.
 */
int auxcap_report_new(struct auxcap_decode *d, const struct auxcap_report_opts *opts,
		      struct auxcap_report **ret);

/**
 * Count @ev (borrowed for the call), the events of @d's stream in order (those that pass the
 * options' filter).
 * Returns 0, -EINVAL for a NULL argument or after auxcap_report_finish(), -ENOMEM.
 */
int auxcap_report_event(struct auxcap_report *r, const struct auxcap_decode_event *ev);

/**
 * The stream has ended: close the frames still open, fill the summary, sort with
 * AUXCAP_REPORT_SORT_AUTO.  Call once, after the last event.
 * Returns 0, -EINVAL if already finished, -ENOMEM.
 */
int auxcap_report_finish(struct auxcap_report *r);

/**
 * Decode the rest of @d's stream into a new report and finish it: auxcap_report_new(), every
 * event, auxcap_report_finish().  On success *@ret is owned by the caller.
 * Returns 0, the errors of auxcap_report_new(), or the first negative errno of
 * auxcap_decode_next() (a decoding failure; the reason in auxcap_decode_error()).
 */
int auxcap_report_run(struct auxcap_decode *d, const struct auxcap_report_opts *opts,
		      struct auxcap_report **ret);

/**
 * Order the functions by @key, most first (ties: by name, then address, then thread); @slot
 * is the sample slot for AUXCAP_REPORT_SORT_SAMPLES and _SAMPLES_TOTAL.
 * Returns 0, -EINVAL if @key or @slot is out of range or the report is not finished.
 */
int auxcap_report_sort(struct auxcap_report *r, enum auxcap_report_sort_key key, size_t slot);

/** The key AUXCAP_REPORT_SORT_AUTO stands for in this report (after finish). */
enum auxcap_report_sort_key auxcap_report_auto_key(const struct auxcap_report *r);

/** The summary (borrowed, valid until free; complete after finish). */
const struct auxcap_report_summary *auxcap_report_get_summary(const struct auxcap_report *r);

/** Number of functions, and function @i in the current order (borrowed; NULL past the end). */
size_t auxcap_report_nr_funcs(const struct auxcap_report *r);
const struct auxcap_report_func *auxcap_report_get_func(const struct auxcap_report *r, size_t i);

/**
 * Number of threads, and thread @i (borrowed; NULL past the end): after finish, by trace time,
 * then samples, most first, then by tid.
 */
size_t auxcap_report_nr_threads(const struct auxcap_report *r);
const struct auxcap_report_thread *auxcap_report_get_thread(const struct auxcap_report *r,
							    size_t i);

/**
 * Files of code, after auxcap_report_finish(): by self trace time, then self instructions,
 * self branches, samples of every slot, then name (per thread with the option per_thread).
 * The entries are owned by @r, valid until auxcap_report_free().
 * Returns 0 (NULL) before auxcap_report_finish() or for an index past the end.
 */
size_t auxcap_report_nr_dsos(const struct auxcap_report *r);
const struct auxcap_report_dso *auxcap_report_get_dso(const struct auxcap_report *r, size_t i);

/**
 * The functions auxcap_report_opts.calls_of chose that the trace called, after
 * auxcap_report_finish(): by the time their counted calls took together (then instructions,
 * then as the functions are sorted by name, address, thread).  Borrowed from @r, valid until
 * auxcap_report_free().  Returns 0 (NULL) before auxcap_report_finish() or past the end.
 */
size_t auxcap_report_nr_calls(const struct auxcap_report *r);
const struct auxcap_report_calls *auxcap_report_get_calls(const struct auxcap_report *r,
							   size_t i);

/**
 * The call graph's edges, after auxcap_report_finish() with auxcap_report_opts.call_graph:
 * by time, then instructions, then calls, most first.  Borrowed from @r.  Returns 0 (NULL)
 * before auxcap_report_finish(), without the option, or past the end.
 */
size_t auxcap_report_nr_edges(const struct auxcap_report *r);
const struct auxcap_report_edge *auxcap_report_get_edge(const struct auxcap_report *r, size_t i);

/**
 * The sampled data accesses of the capture (borrowed, valid until free; complete after
 * finish): all zero for a trace that samples none (Intel PT, BTS, Arm SPE without loads or
 * stores).
 */
const struct auxcap_report_mem *auxcap_report_get_mem(const struct auxcap_report *r);

/** The sampled data accesses of the capture by data source (borrowed, valid until free). */
const struct auxcap_report_mem_sources *
auxcap_report_get_mem_sources(const struct auxcap_report *r);

/**
 * With auxcap_report_opts.mem, after auxcap_report_finish(): the functions that made sampled
 * data accesses, by their total latency (perf mem's weight), then accesses, most first.
 * Borrowed from @r.  Returns 0 (NULL) before finish, without the option, or past the end.
 */
size_t auxcap_report_nr_mem_funcs(const struct auxcap_report *r);
const struct auxcap_report_mem_func *auxcap_report_get_mem_func(const struct auxcap_report *r,
								 size_t i);

/**
 * With auxcap_report_opts.mem, after auxcap_report_finish(): the cache lines accessed, by
 * their accesses that missed the L1 (level MID, LLC or DRAM), then total latency, then
 * accesses, most first.  At most AUXCAP_REPORT_MEM_LINES_MAX lines are kept, the first ones
 * met; the accesses to others are counted by auxcap_report_mem_lines_untracked().  Borrowed
 * from @r.  Returns 0 (NULL) before finish, without the option, or past the end.
 */
#define AUXCAP_REPORT_MEM_LINES_MAX 16384
size_t auxcap_report_nr_mem_lines(const struct auxcap_report *r);
const struct auxcap_report_mem_line *auxcap_report_get_mem_line(const struct auxcap_report *r,
								 size_t i);
uint64_t auxcap_report_mem_lines_untracked(const struct auxcap_report *r);

/**
 * With auxcap_report_opts.mem, after auxcap_report_finish(): the data objects accessed (the
 * variables, else the mappings, that held the sampled addresses), by their total latency,
 * then accesses, most first.  At most AUXCAP_REPORT_MEM_OBJECTS_MAX are kept, the first
 * met; the accesses to others are counted by auxcap_report_mem_objects_untracked().
 * Borrowed from @r.  Returns 0 (NULL) before finish, without the option, or past the end.
 */
#define AUXCAP_REPORT_MEM_OBJECTS_MAX 4096
size_t auxcap_report_nr_mem_objects(const struct auxcap_report *r);
const struct auxcap_report_mem_object *
auxcap_report_get_mem_object(const struct auxcap_report *r, size_t i);
uint64_t auxcap_report_mem_objects_untracked(const struct auxcap_report *r);

/** Free @r (NULL is a no-op); @d is not touched. */
void auxcap_report_free(struct auxcap_report *r);

#ifdef __cplusplus
}
#endif

#endif /* AUXCAP_DECODE_REPORT_H */
