/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap/decode.h: the offline decode stage.
 *
 * A decode session opens a capture (a perf.data file, or a raw trace file of one backend),
 * builds the traced memory image from its MMAP/MMAP2 records, makes one queue per AUX
 * stream (per CPU, per task, or per snapshot), decodes every queue through the backend
 * registered for the file's AUXTRACE_INFO type (auxcap/backend.h), and merges all decoded
 * streams with the capture's ordinary records (counter samples, context switches, MMAP2,
 * COMM, losses, AUX flags) into one stream ordered by perf time across CPUs:
 *
 *	auxcap_decode_open("perf.data", &opts, &d);
 *	while ((r = auxcap_decode_next(d, &ev)) == 1)
 *		... ev->kind, ev->time, ev->trace / ev->rec / ev->sample ...
 *	auxcap_decode_close(d);
 *
 * The merge streams: a min-heap over one cursor per queue plus one over the ordinary records
 * (themselves put in time order the way perf does, in rounds delimited by FINISHED_ROUND
 * records); each queue holds only the events between two of its hardware timestamps.  Memory
 * does not grow with the length of the trace.
 *
 * Time.  Hardware timestamps become perf time with the file's PERF_RECORD_TIME_CONV (the
 * kernel's formula, with the cap_user_time_short variant; a backend may also convert with
 * its own metadata).  Between two hardware timestamps of a queue, event times are spread by
 * instruction count.  Without any conversion (or without timestamps: Intel BTS) the trace of
 * an AUXTRACE buffer of a full trace is placed over the stretch it was written in, from the
 * copy before it (or the first record of the capture) to its own copy (the last record
 * written before it), by its place in the buffer; a snapshot's, at its copy.  Such times are
 * estimates (has_time false), and auxcap_decode_info()->timeless says so when no conversion
 * was the reason.
 *
 * Threads.  Per-task queues belong to their task; per-CPU queues are attributed to the
 * thread that the context-switch records (SWITCH, SWITCH_CPU_WIDE, ITRACE_START) say runs
 * on that CPU at that time.
 *
 * Per-thread context.  From the trace's calls and returns the stage keeps a call stack per
 * thread, the last branches, and the time spent per function.  Each counter sample gets
 * the context at its position in the trace: the sample's instruction pointer is looked up
 * in the trace of its thread inside the sample's window (the stretch between the hardware
 * timestamps around the sample's time, widened by AUXCAP_DECODE_ALIGN_SLOP_NS; a sample at
 * the time of a timestamp has both runs around it), at the occurrence closest in time, and
 * the stack and branches are those of that instant.
 *
 * Errors: negative errno; a one-line reason in opts.errbuf for open.  Warnings (a binary
 * that cannot be read, a file without time conversion) go through auxcap_log() once each.
 */
#ifndef AUXCAP_DECODE_H
#define AUXCAP_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auxcap/backend.h"
#include "auxcap/perf_data.h"
#include "auxcap/record.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Time added on both sides of a sample's window when looking for its IP (ns). */
#define AUXCAP_DECODE_ALIGN_SLOP_NS 10000

/** Most branches a sample can carry (--last-branches). */
#define AUXCAP_DECODE_MAX_BRANCHES 1024

struct auxcap_decode;

/** A file of code to add to the image (ptxed's --elf and --raw). */
struct auxcap_decode_code {
	const char *path; /* borrowed for auxcap_decode_open() */
	bool raw;	  /* raw code bytes (else an ELF file: its executable PT_LOAD segments) */
	bool has_addr;	  /* @addr is given */
	uint64_t addr;	  /* raw: where the file's first byte is (mandatory); ELF: where its
			   * first PT_LOAD segment is loaded (PIE, shared objects), default:
			   * its link-time address */
};

/** What a session is busy with, for a progress display (auxcap_decode_opts.progress). */
enum auxcap_decode_phase {
	AUXCAP_DECODE_PHASE_READ = 1, /* auxcap_decode_open(): the first pass over the records;
				       * bytes of the data section */
	AUXCAP_DECODE_PHASE_DECODE,   /* auxcap_decode_next(): decoding the trace; trace bytes
				       * of all AUX queues */
};

/**
 * Progress of a session: @done of @total bytes of @phase.  Called at the start (@done 0) and
 * the end (@done == @total) of each phase and in between every few thousand records or trace
 * events (and at each AUX buffer), on the thread calling the session; @done never goes back
 * within a phase.  It must be cheap (it runs inside the decode loop: throttle any drawing)
 * and must not call the session.
 */
typedef void (*auxcap_decode_progress_fn)(void *arg, enum auxcap_decode_phase phase,
					  uint64_t done, uint64_t total);

/** Options of a decode session; caller-owned, copied in.  Zero-fill, then set @sz. */
struct auxcap_decode_opts {
	size_t sz; /* sizeof(struct auxcap_decode_opts) */
	/**
	 * Decode a raw trace file of the backend of this name ("intel_pt", ...) instead of a
	 * perf.data file: one queue, no side-band; the code comes from @code only.
	 */
	const char *raw_backend;
	/** Code to add to the image (raw mode: all of it) and to the symbols, any process. */
	const struct auxcap_decode_code *code;
	size_t nr_code;
	bool per_insn;		     /* INSN events wanted (else branches are enough) */
	unsigned int last_branches;  /* branches kept per sample, <= AUXCAP_DECODE_MAX_BRANCHES */
	const char *backend_options; /* passed to the backend (auxcap_decode_ctx.options); copied */
	char *errbuf;		     /* caller-owned: open() writes a one-line reason here */
	size_t errlen;		     /* bytes at @errbuf */
	auxcap_decode_progress_fn progress; /* NULL: none */
	void *progress_arg;		    /* passed to @progress (borrowed) */
	/** What messages call the input ("-" for standard input saved aside); NULL: the path. */
	const char *name;
	/** Symbols named as the files have them: C++ and Rust names not demangled (perf's
	 * --no-demangle; by default "ns::f(int)" for "_ZN2ns1fEi", with libiberty). */
	bool raw_names;
	/**
	 * The kernel's ELF image (perf's --vmlinux; borrowed for auxcap_decode_open()): the code
	 * and the symbols of kernel addresses, its executable segments moved to where the
	 * capture's kernel had its text (KASLR: the [kernel.kallsyms]_text mapping's _text is
	 * where the first one starts).  NULL: the capture's copy of the kernel's code, when
	 * record --kcore or archive made one (FILE.archive/kcore, or $AUXCAP_KCORE), else none.
	 */
	const char *vmlinux;
};

/** What a merged event is. */
enum auxcap_decode_kind {
	AUXCAP_DECODE_TRACE = 1, /* a decoded trace event: @trace, @stack */
	AUXCAP_DECODE_SAMPLE,	 /* a counter sample (PERF_RECORD_SAMPLE): @rec, @evsel, @ctx */
	AUXCAP_DECODE_SIDEBAND,	 /* another record: SWITCH*, MMAP*, COMM, FORK, EXIT,
				  * ITRACE_START, THROTTLE, ...: @rec */
	AUXCAP_DECODE_LOSS,	 /* lost data: LOST, LOST_SAMPLES, an AUX record flagged
				  * TRUNCATED/PARTIAL/COLLISION, AUXTRACE_ERROR: @rec or
				  * @auxtrace_error, @lost, @loss */
};

/** What a trace event did to its thread's reconstructed call stack. */
struct auxcap_decode_stack_change {
	uint32_t popped; /* frames that ended (a return; more than one when it skips frames) */
	bool pushed;	 /* a frame began: a call to @trace->to, or with @popped 1, a tail call
			  * (a jump to the start of function @trace->to: it replaces the
			  * innermost frame, whose call site it keeps) */
	bool rebased;	 /* a return left the outermost known frame: the function at @trace->to
			  * is the new outermost frame */
	uint32_t depth;	 /* frames on the stack after the event */
};

/** A frame of a reconstructed call stack. */
struct auxcap_decode_frame {
	uint64_t func;	    /* where the function was entered (a call's target), or for a
			     * frame learnt from a return, the address returned to */
	uint64_t call_site; /* address of the call in the caller, 0 for the outermost frame */
	uint64_t time;	    /* perf time the frame began (or was learnt), ns */
};

/** A taken branch of a sample's last-branch list. */
struct auxcap_decode_branch {
	uint64_t from, to;
	uint64_t time; /* perf time, ns */
	enum auxcap_branch_type type;
};

/** Trace time spent in one function. */
struct auxcap_decode_ftime {
	uint64_t func; /* as auxcap_decode_frame.func */
	uint64_t ns;
};

/** The trace context of a counter sample. */
struct auxcap_decode_sample_ctx {
	uint64_t ip;	     /* the IP looked up: the sample's, or, for a sample taken in the
			      * kernel with REGS_USER, its user-mode IP */
	bool aligned;	     /* that IP was found in the sample's window */
	int64_t delta_ns;    /* time of the trace position used minus the sample's time */
	uint64_t window_lo;  /* the window searched: perf time, ns */
	uint64_t window_hi;
	uint64_t seq_from;   /* the sample's IP was reached by running sequentially from here
			      * (the target of the last branch before it); 0 if not aligned */
	bool seq_from_start; /* ... where tracing (re)started, not a branch's target */
	const struct auxcap_decode_frame *stack; /* innermost first; frame 0 holds the IP's
						  * function */
	size_t nr_stack;
	const struct auxcap_decode_branch *branches; /* newest first */
	size_t nr_branches;
	const struct auxcap_decode_ftime *ftime; /* since the thread's previous sample, most
						  * time first */
	size_t nr_ftime;
	uint64_t trace_ns; /* trace time of the thread since its previous sample */
};

/** One event of the merged stream.  Borrowed until the next auxcap_decode_next(). */
struct auxcap_decode_event {
	enum auxcap_decode_kind kind;
	uint64_t time;	/* perf time (ns) the event is ordered by */
	bool has_time;	/* @time is the event's own (else estimated from its neighbours) */
	int32_t cpu;	/* -1 if not known */
	int32_t pid;	/* -1 if not known */
	int32_t tid;	/* -1 if not known */
	const char *comm; /* the thread's command name, NULL if not known */
	int32_t queue;	/* TRACE: index of the queue (auxcap_decode_queue()); else -1 */

	/* TRACE */
	const struct auxcap_trace_event *trace;
	/* TRACE; and SIDEBAND for a COMM exec of a thread with trace: its stack is emptied
	 * (the old image's frames end: @popped of them, @depth 0) */
	struct auxcap_decode_stack_change stack;

	/* SAMPLE, SIDEBAND, LOSS (perf records) */
	const struct auxcap_record *rec; /* NULL for AUXTRACE_ERROR */
	const struct auxcap_perf_evsel *evsel;
	const struct auxcap_decode_sample_ctx *ctx; /* SAMPLE: NULL if no trace of its thread */

	/* LOSS */
	const char *loss;   /* "LOST", "LOST_SAMPLES", "AUX TRUNCATED", "AUXTRACE_ERROR", ... */
	uint64_t lost;	    /* records, samples or bytes lost (0 if not known) */
	const struct auxcap_perf_auxtrace_error *auxtrace_error;
};

/** One AUX queue. */
struct auxcap_decode_queue {
	uint32_t idx;	    /* AUXTRACE idx */
	int32_t cpu;	    /* -1 per task */
	int32_t tid;	    /* -1 per CPU */
	int32_t pid;	    /* -1 if not known */
	bool snapshot;	    /* a snapshot, or snapshots that each start where the one before
			     * ended (one stream: the capture wrote only what was new) */
	size_t nr_pieces;   /* AUXTRACE buffers (one cut where data was lost counts twice) */
	uint64_t bytes;	    /* trace bytes */
	uint64_t discontinuities; /* pieces not contiguous with the one before (data lost) */
};

/** Facts and counters of a session (counters grow as the stream is read). */
struct auxcap_decode_info {
	const char *backend;  /* name of the backend decoding the trace; NULL for a capture
			       * of counter samples without an AUX event (no queues) */
	bool raw;	      /* raw trace file */
	bool snapshot;	      /* snapshot-mode capture */
	bool timeless;	      /* trace without time conversion was seen: it is placed by its
			       * buffers' copy times (set once such an event is delivered) */
	bool has_time_conv;   /* PERF_RECORD_TIME_CONV (usable) */
	size_t nr_queues;
	uint64_t trace_events; /* trace events delivered */
	uint64_t gaps;	       /* GAP trace events */
	uint64_t samples;      /* counter samples delivered */
	uint64_t samples_aligned; /* of those, with their IP found in the trace */
	uint64_t samples_traced;  /* of those, on a thread with trace */
	uint64_t losses;	  /* LOSS events */
	uint64_t missing_binaries; /* executable mappings whose file cannot be read */
	bool sampled; /* the trace samples operations (Arm SPE: AUXCAP_BACKEND_F_SAMPLED), no
		       * control flow: counter samples get no context (@ctx NULL) */
};

/**
 * Open @path and prepare the merged stream.
 *
 * Reads the whole record stream once (side-band, queues, time conversion); no trace is
 * decoded yet.  @opts is copied.  On success *@ret (owned by the caller) is set; free it with
 * auxcap_decode_close().
 *
 * Returns -EINVAL if an argument is bad (@opts too small, last_branches too large).
 * Returns the errno of a @code file that cannot be read (-ENOENT, -EACCES, -ENOEXEC for a
 * file that is not ELF, -ERANGE for an empty raw file), with the reason in errbuf.
 * Returns the reader's errors for a bad perf.data file (-EBADMSG with the reason in errbuf,
 * -ENOENT, -EACCES, ...).
 * Returns -ENODATA if the capture has no AUX trace (its AUX event wrote none, or it was cut
 * before any), or neither an AUX event nor counter samples.  A capture of counter samples
 * without an AUX event opens: its stream is the samples (no context) and side-band, and
 * auxcap_decode_get_info() says so with @backend NULL and no queues.
 * Returns -EPROTONOSUPPORT if no registered backend decodes its trace (or @raw_backend).
 * Returns -ESPIPE for a pipe (the stage needs a file it can map).
 * Returns -ENOMEM.
 */
int auxcap_decode_open(const char *path, const struct auxcap_decode_opts *opts,
		       struct auxcap_decode **ret);

/**
 * Which threads' events a consumer keeps (auxcap decode and report's --pid, --tid, --comm),
 * and of counter samples, which events' (--event): an event is kept when each list given
 * holds its process, thread, command name, and for a sample its event (a list with no
 * entries: any).  Borrowed: the lists stay the caller's.
 */
struct auxcap_decode_filter {
	const int32_t *pids;
	size_t nr_pids;
	const int32_t *tids;
	size_t nr_tids;
	const char *const *comms; /* the thread's name at the event (it changes at exec) */
	size_t nr_comms;
	/* counter samples of these events only (their names, as the capture has them: "cycles"
	 * also picks "cycles:u"); other kinds of events are not affected */
	const char *const *events;
	size_t nr_events;
};

/**
 * Whether @ev passes @f (NULL: every event does).  Losses always pass, whatever thread they
 * name (what was lost may have been the filtered threads'); other events of no known thread
 * do not.  Whole threads pass or not (a --comm one from exec to exec), so outputs that follow
 * each thread's call stack (folded, Perfetto, the report) see every event of what they get.
 */
bool auxcap_decode_filter_match(const struct auxcap_decode_filter *f,
				const struct auxcap_decode_event *ev);

/**
 * The next event of the merged stream into *@ret_ev (borrowed until the next call).
 * Returns 1 with an event, 0 at the end, a negative errno if decoding failed (a backend
 * error that ends a queue; -ENOMEM); errors inside the trace are GAP events, not failures.
 */
int auxcap_decode_next(struct auxcap_decode *d, const struct auxcap_decode_event **ret_ev);

/** Free @d (NULL is a no-op). */
void auxcap_decode_close(struct auxcap_decode *d);

/** The reason of the last failure of @d ("" if none); borrowed until the next call. */
const char *auxcap_decode_error(const struct auxcap_decode *d);

/** Facts and counters (borrowed, valid until close). */
const struct auxcap_decode_info *auxcap_decode_get_info(const struct auxcap_decode *d);

/** Queue @i (borrowed), NULL past the end. */
const struct auxcap_decode_queue *auxcap_decode_get_queue(const struct auxcap_decode *d,
							  size_t i);

/** The events of the capture (borrowed from its reader), 0 in raw mode. */
size_t auxcap_decode_nr_evsels(const struct auxcap_decode *d);
const struct auxcap_perf_evsel *auxcap_decode_evsel(const struct auxcap_decode *d, size_t i);

/**
 * Name the address @addr of process @pid (-1: any): the function symbol containing it.
 * @ret_name (may be NULL) and @ret_dso (the file, may be NULL) are borrowed until close;
 * outputs are untouched when nothing is found.
 * Returns 1 if a symbol was found, 0 if not (the file may still be set: then 2).
 */
int auxcap_decode_symbolize(struct auxcap_decode *d, int32_t pid, uint64_t addr,
			    const char **ret_name, uint64_t *ret_off, const char **ret_dso);

/**
 * auxcap_decode_symbolize() with the mappings in place at perf time @time, for an address
 * named after the decode has moved on (a process that exec'd had other code at the same
 * addresses before).  auxcap_decode_symbolize() answers for the time the decode has reached
 * (before it starts: the end of the capture).
 */
int auxcap_decode_symbolize_at(struct auxcap_decode *d, int32_t pid, uint64_t addr,
			       uint64_t time, const char **ret_name, uint64_t *ret_off,
			       const char **ret_dso);

/**
 * The data object (a global or static variable: a sized STT_OBJECT symbol) holding the data
 * address @addr of process @pid at perf time @time, through the files of its code mappings
 * then: their data segments at the same load bias (.data, .bss).  *@ret_name (borrowed until
 * close), *@ret_off and *@ret_dso (may be NULL) are set when one is found; heap, stack and
 * anonymous memory have none.
 * Returns 1 if found, 0 if not (no such object, no symbol table, built without libelf).
 */
int auxcap_decode_data_symbolize_at(struct auxcap_decode *d, int32_t pid, uint64_t addr,
				    uint64_t time, const char **ret_name, uint64_t *ret_off,
				    const char **ret_dso);

/**
 * The mapping holding the data address @addr of process @pid at perf time @time, for an
 * address no variable holds (auxcap_decode_data_symbolize_at()): of the capture's mappings of
 * @pid made at or before @time, and not replaced by an exec since, the newest (with none, the
 * first made after @time with no exec between: a record stamped a little late).  A capture has
 * the mappings of data (the stack, the heap, anonymous memory, files mapped without exec)
 * when it was recorded with attr.mmap_data, as auxcap record does for Arm SPE; else only
 * code mappings.  *@ret_name is the name the kernel gave it (borrowed until close): a file's
 * path, "[stack]", "[heap]", "//anon" (anonymous memory), "[vdso]"; *@ret_off is @addr's
 * offset in the file for a file, else from the mapping's start.
 * Returns 1 if found, 0 if not.
 */
int auxcap_decode_data_map_at(struct auxcap_decode *d, int32_t pid, uint64_t addr, uint64_t time,
			      const char **ret_name, uint64_t *ret_off);

/**
 * The data address @addr of process @pid at perf time @time as auxcap's outputs name it, into
 * @buf (@n bytes, NUL-terminated, cut to fit): the variable holding it, "counters+0x40"
 * (auxcap_decode_data_symbolize_at()), else its mapping, "[stack]+0x1f08", "//anon+0x40",
 * "libc.so.6+0x1d2a40" (a file by its base name: auxcap_decode_data_map_at()).
 * Returns 1 if named (2: by its mapping), 0 if not (@buf then "").
 */
int auxcap_decode_data_name_at(struct auxcap_decode *d, int32_t pid, uint64_t addr,
			       uint64_t time, char *buf, size_t n);

/**
 * The source file and line of the address @addr of process @pid, from the DWARF line table of
 * its binary (or of the binary's separate debug file), as the mappings stand where the decode
 * has reached.  *@ret_file is the name the table gives (often relative to the compilation
 * directory), borrowed until close.
 * Returns 1 if found, 0 if not (no DWARF, a kernel address without opts.vmlinux, built
 * without libdw).
 */
int auxcap_decode_srcline(struct auxcap_decode *d, int32_t pid, uint64_t addr,
			  const char **ret_file, unsigned int *ret_line);

/** auxcap_decode_srcline() that also gives the compilation directory of the line's unit, the
 * directory a relative *@ret_file is in, in *@ret_dir (borrowed until close; NULL if the unit
 * names none). */
int auxcap_decode_srcline_dir(struct auxcap_decode *d, int32_t pid, uint64_t addr,
			      const char **ret_file, unsigned int *ret_line, const char **ret_dir);

/** A source-level frame of code inlined at an address (auxcap_decode_inlines()): a function,
 * and the place in it; strings borrowed until close. */
struct auxcap_decode_inline {
	const char *name;  /* the function's DWARF name, NULL if it has none */
	const char *file;  /* the source file as the DWARF names it, NULL if not known */
	unsigned int line; /* 0 if not known */
};

/** The deepest chain auxcap_decode_inlines() gives. */
#define AUXCAP_DECODE_INLINE_MAX 16

/**
 * The functions inlined at the address @addr of process @pid (DWARF inlined subroutines, as
 * `addr2line -i` and perf's --inline give them), as the mappings stand where the decode has
 * reached: into @frames (@n entries, at least 2), innermost first, each inlined function with
 * the place it was at (the innermost's is @addr's source line, each other's the call of the
 * one inside it), then the function the code belongs to, with the place of the outermost
 * inlined call.  At most @n frames, the innermost ones.
 * Returns the frames written (at least 2), 0 if nothing is inlined there (no DWARF, a kernel
 * address, built without libdw), -ENOMEM.
 */
int auxcap_decode_inlines(struct auxcap_decode *d, int32_t pid, uint64_t addr,
			  struct auxcap_decode_inline *frames, size_t n);

/**
 * The capture's header features (host, command line, CPUs, the auxcap snapshot table, ...),
 * borrowed from its reader until close; NULL in raw mode.
 */
const struct auxcap_perf_features *auxcap_decode_features(const struct auxcap_decode *d);

struct auxcap_tp_format;

/**
 * The format of tracepoint event @es (auxcap/tracepoint.h: the fields of its samples' raw
 * data), from the capture's TRACING_DATA; borrowed until close.  NULL if @es is not a
 * tracepoint, or the capture keeps no usable format of it.
 */
const struct auxcap_tp_format *auxcap_decode_tp_format(struct auxcap_decode *d,
						       const struct auxcap_perf_evsel *es);

/**
 * A tracepoint sample @ev as the kernel prints it, by its format's "print fmt" (what perf
 * script prints after the event name: "prev_comm=bash prev_pid=12 prev_prio=120 prev_state=S
 * ==> next_comm=swapper/1 ..."), into @buf (@n bytes, NUL-terminated), with libtraceevent.
 * Returns the length of the text (cut to fit), 0 if @ev is not a tracepoint sample or the
 * capture has no usable format of it, -EOPNOTSUPP if built without libtraceevent, -EINVAL.
 */
int auxcap_decode_tp_print(struct auxcap_decode *d, const struct auxcap_decode_event *ev,
			   char *buf, size_t n);

/** The AUX event of the capture (borrowed until close), NULL if not known or in raw mode. */
const struct auxcap_perf_evsel *auxcap_decode_aux_evsel(const struct auxcap_decode *d);

/** The command name of thread @tid, NULL if not known (borrowed until close). */
const char *auxcap_decode_comm(const struct auxcap_decode *d, int32_t tid);

/**
 * The trace bytes of queue @i, its pieces joined, into *@ret_buf (malloc'd, owned
 * by the caller) and *@ret_len.  For tools that need a queue's bytes in one piece.
 * Returns 0, -EINVAL if @i is out of range, -ENOMEM.
 */
int auxcap_decode_queue_bytes(const struct auxcap_decode *d, size_t i, uint8_t **ret_buf,
			      size_t *ret_len);

/**
 * Packet listing: for each queue in turn, @fn(@arg, header line) ("# AUX stream 0: idx 0
 * cpu 1 tid -1, 1234 bytes"), then the backend's dump of its pieces.  Independent of the
 * merged stream.  Returns the backend's count of undecodable spots (>= 0), -EOPNOTSUPP if the
 * backend has no dump or the capture no trace, or the first negative errno of the backend or @fn.
 */
int auxcap_decode_dump(struct auxcap_decode *d, auxcap_backend_line_fn fn, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* AUXCAP_DECODE_H */
