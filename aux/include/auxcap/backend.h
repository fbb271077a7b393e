/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap/backend.h: the contract between auxcap and an AUX trace backend.  Read this first.
 *
 * A backend serves one kind of AUX PMU (Intel PT, Intel BTS, Arm SPE, or an out-of-tree one
 * loaded as a plug-in).  It is one const `struct auxcap_backend_ops` with two halves, modelled
 * on perf's `struct auxtrace_record` (record side) and `struct auxtrace` (decode side):
 *
 *   record side  - probe:             does this backend serve the PMU named so?
 *                - recording_options: turn the user's attr into the one to open (defaults from
 *                                     the PMU's sysfs format bits, caps checks, filters)
 *                - info_size/info_fill: the private u64 words of PERF_RECORD_AUXTRACE_INFO
 *                - find_snapshot:     where valid data starts in an overwrite AUX buffer
 *   decode side  - decoder_new/next/free: AUX bytes -> backend-neutral trace events
 *                - dump:              a packet listing, one line at a time
 *
 * The two halves talk only through the AUXTRACE_INFO words (perf's layout for the built-in
 * backends, so perf reads our files and we read perf's) and the bytes of the trace: never
 * through shared structs.  The decode side must work on a machine that never ran the record
 * side.
 *
 * Every op except name/probe is optional, but in groups: a backend that records must give
 * recording_options; one that writes AUXTRACE_INFO gives info_size and info_fill together;
 * one that decodes gives decoder_new, decoder_next and decoder_free together.  The registry
 * checks this once when a backend is registered (auxcap_backend_register()).
 *
 * ABI: out-of-tree backends are built against this header.  @abi must be
 * AUXCAP_BACKEND_ABI.  The structs auxcap passes to a backend (the contexts) carry their size
 * (`sz`) and only ever grow at the end, so a backend reads a field only when `sz` covers it.
 * The ops table carries no size: any change to struct auxcap_backend_ops bumps
 * AUXCAP_BACKEND_ABI, and a plug-in built for another value is refused when loaded.
 *
 * Errors: every int-returning op returns >= 0 on success and a negative errno on failure;
 * where an op gets an `errbuf`, it writes a one-line reason there for the user (what, where,
 * how to fix).  Ops never print and never exit.
 */
#ifndef AUXCAP_BACKEND_H
#define AUXCAP_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auxcap/api.h"
#include "auxcap/perf_data.h"
#include "auxcap/pmu.h"
#include "auxcap/session.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Version of this contract; a backend's @abi must equal it. */
#define AUXCAP_BACKEND_ABI 5 /* 2: reference, alignment, flags appended to the ops;
				* 3: decoder_next_batch; 4: describe;
				* 5: auxcap_trace_event.mem appended, and its
				* reserved word later named source (0: not said) */

/**
 * perf's auxtrace types (PERF_RECORD_AUXTRACE_INFO.type), as perf 6.1 numbers them.  A
 * plug-in backend for a trace perf does not know uses AUXCAP_AUXTRACE_PRIVATE and above.
 */
enum auxcap_auxtrace_type {
	AUXCAP_AUXTRACE_UNKNOWN = 0,
	AUXCAP_AUXTRACE_INTEL_PT = 1,
	AUXCAP_AUXTRACE_INTEL_BTS = 2,
	AUXCAP_AUXTRACE_CS_ETM = 3,
	AUXCAP_AUXTRACE_ARM_SPE = 4,
	AUXCAP_AUXTRACE_S390_CPUMSF = 5,
	AUXCAP_AUXTRACE_HISI_PTT = 6,
	AUXCAP_AUXTRACE_PRIVATE = 0x10000, /* first type free for out-of-tree backends */
};

/* ------------------------------------------------------------------------------------------ */
/* Record side */

/**
 * What the recorder tells a backend about the capture it is setting up.  Caller-owned,
 * borrowed for the duration of one op call.
 */
struct auxcap_record_ctx {
	size_t sz;		      /* sizeof(struct auxcap_record_ctx) */
	const struct auxcap_pmu *pmu; /* the PMU (from sysfs, or the emulated one); borrowed */
	/**
	 * Bits of each config word (enum auxcap_attr_word) that the user's event string set
	 * explicitly; a backend applies its defaults only to the others.
	 */
	uint64_t user_set[AUXCAP_ATTR_WORD_MAX];
	bool snapshot;	      /* snapshot (flight recorder) mode: AUX mapped read-only */
	size_t aux_pages;     /* pages in each AUX buffer */
	size_t snapshot_size; /* bytes to copy per snapshot, 0: the whole buffer */
	bool per_cpu;	      /* one event per CPU (false: per task) */
	size_t nr_cpus;	      /* CPUs of the machine (for per-CPU metadata arrays) */
	bool have_sched_switch; /* context switch side-band is recorded with the trace */
	/** Time conversion the capture records (TIME_CONV), NULL if none.  Borrowed. */
	const struct auxcap_perf_time_conv *time_conv;
	const char *filter; /* address filter text (--filter), NULL for none; borrowed */
	char *errbuf;	    /* where ops write a one-line reason on failure; may be NULL */
	size_t errlen;	    /* bytes at @errbuf */
	/*
	 * Appended (check @sz before use): the per-CPU sets count every task (-a, -C), so
	 * context switches arrive as PERF_RECORD_SWITCH_CPU_WIDE; false: per task
	 * (PERF_RECORD_SWITCH), or no per-CPU sets.
	 */
	bool cpu_wide;
};

/* ------------------------------------------------------------------------------------------ */
/* Decode side: backend-neutral trace events */

/** What a trace event is. */
enum auxcap_trace_kind {
	AUXCAP_TRACE_BRANCH = 1, /* a taken control transfer: @ip -> @to, of type @branch;
				  * @ninsn: instructions run since the previous event of the
				  * stream, the branch included (0: not known) */
	AUXCAP_TRACE_INSN,	 /* one executed instruction at @ip (@size bytes in @raw) */
	AUXCAP_TRACE_BLOCK,	 /* @ninsn instructions run in sequence from @ip to @to (last) */
	AUXCAP_TRACE_SAMPLE,	 /* a statistical sample (e.g. an SPE record): @ip, @addr, ... */
	AUXCAP_TRACE_ENABLE,	 /* tracing (re)started at @ip */
	AUXCAP_TRACE_DISABLE,	 /* tracing stopped after @ip (@ninsn as for BRANCH) */
	AUXCAP_TRACE_GAP,	 /* trace lost or undecodable at @offset: @err, @what */
	AUXCAP_TRACE_OTHER,	 /* anything else the backend reports: @what names it */
};

/** Branch types of AUXCAP_TRACE_BRANCH and of the last instruction of INSN/BLOCK. */
enum auxcap_branch_type {
	AUXCAP_BR_NONE = 0,	/* not a branch, or not known */
	AUXCAP_BR_CALL,		/* near call */
	AUXCAP_BR_RETURN,	/* near return */
	AUXCAP_BR_JUMP,		/* near unconditional jump */
	AUXCAP_BR_COND,		/* taken conditional jump */
	AUXCAP_BR_SYSCALL,	/* syscall, sysenter, far call, int n */
	AUXCAP_BR_SYSRET,	/* sysret, sysexit, iret, far return */
	AUXCAP_BR_FAR_JUMP,	/* far jump */
	AUXCAP_BR_ASYNC,	/* interrupt or exception */
};

/** Flags of a trace event. */
enum {
	AUXCAP_TRACE_F_HAS_TSC = 1u << 0,     /* @tsc holds the hardware timestamp */
	AUXCAP_TRACE_F_HAS_TIME = 1u << 1,    /* @time holds perf time */
	AUXCAP_TRACE_F_IP_UNKNOWN = 1u << 2,  /* @ip is not known */
	AUXCAP_TRACE_F_PREDICTED = 1u << 3,   /* branch predicted (BTS, SPE) */
	AUXCAP_TRACE_F_MISPRED = 1u << 4,     /* branch mispredicted (SPE) */
	AUXCAP_TRACE_F_SPECULATIVE = 1u << 5, /* inside a transaction */
	AUXCAP_TRACE_F_HAS_ADDR = 1u << 6,    /* SAMPLE: @addr valid */
	AUXCAP_TRACE_F_HAS_PHYS = 1u << 7,    /* SAMPLE: @phys_addr valid */
	AUXCAP_TRACE_F_HAS_TID = 1u << 8,     /* @tid from the trace itself (SPE context) */
	AUXCAP_TRACE_F_WHOLE = 1u << 9,	      /* decoder_next_batch(): the whole event is in
					       * its @whole entry (never handed out) */
};

/**
 * One decoded trace event.  Filled by decoder_next(); pointers in it are borrowed until the
 * next call.  Unused fields are zero: the decode stage relies on it and does not read the
 * fields past @branch of a BRANCH without F_HAS_TID (none of them is a branch's).
 */
struct auxcap_trace_event {
	enum auxcap_trace_kind kind;
	uint32_t flags;		      /* AUXCAP_TRACE_F_* */
	uint64_t offset;	      /* bytes: offset in the stream of what produced the event */
	uint64_t tsc;		      /* hardware timestamp (TSC ticks, SPE counter), F_HAS_TSC */
	uint64_t time;		      /* perf time (ns), F_HAS_TIME */
	uint64_t ip;		      /* instruction address (BRANCH: source) */
	uint64_t to;		      /* BRANCH: target; BLOCK: address of the last instruction */
	uint32_t ninsn;		      /* INSN: 1; BLOCK: instructions in the block; BRANCH,
				       * DISABLE: instructions since the previous event */
	enum auxcap_branch_type branch; /* see above */
	uint8_t size;		      /* INSN: length; BLOCK: bytes valid in @raw */
	uint8_t raw[15];	      /* INSN: its bytes; BLOCK: those of the last instruction */
	int64_t tid;		      /* F_HAS_TID: thread id from the trace */
	/* SAMPLE */
	uint64_t addr;		      /* data virtual address, F_HAS_ADDR */
	uint64_t phys_addr;	      /* data physical address, F_HAS_PHYS */
	uint32_t total_latency;	      /* cycles */
	uint32_t issue_latency;	      /* cycles */
	uint32_t translation_latency; /* cycles */
	uint64_t events;	      /* backend-specific event bits (SPE events packet) */
	uint32_t op;		      /* backend-specific operation class */
	/* GAP, OTHER */
	int err;	  /* GAP: negative errno */
	int native;	  /* GAP: the decoder's own error code (libipt pt_error_code, ...) */
	const char *what; /* GAP, OTHER: static text naming the event ("overflow", "psb") */
	uint64_t payload; /* OTHER: backend-specific value */
	/* SAMPLE (ABI 5): its data access in the backend-neutral terms of AUXCAP_TRACE_MEM_*
	 * (what the decode stage's memory report reads); 0: not a data access */
	uint32_t mem;
	/* SAMPLE: where a load's data came from (enum auxcap_trace_mem_source), when the trace
	 * says so; ABI 5 called it reserved and backends built for it leave it zero: not said */
	uint32_t source;
};

/**
 * A sampled data access (auxcap_trace_event.mem), from what the trace says of it (Arm SPE:
 * the operation type and the events packet).  A level's MISS bit without its ACCESS bit
 * does not occur; an access served below the L1 without reaching the last-level cache
 * (an L2 hit under an L3) has L1_MISS and no LLC bit.
 */
enum {
	AUXCAP_TRACE_MEM_LOAD = 1u << 0,       /* a load (an atomic read-modify-write: both) */
	AUXCAP_TRACE_MEM_STORE = 1u << 1,      /* a store */
	AUXCAP_TRACE_MEM_L1_ACCESS = 1u << 2,  /* it looked up the L1 data cache */
	AUXCAP_TRACE_MEM_L1_MISS = 1u << 3,    /* ... and missed (a refill) */
	AUXCAP_TRACE_MEM_LLC_ACCESS = 1u << 4, /* it looked up the last-level cache */
	AUXCAP_TRACE_MEM_LLC_MISS = 1u << 5,   /* ... and missed: memory served it */
	AUXCAP_TRACE_MEM_REMOTE = 1u << 6,     /* another socket served it */
	AUXCAP_TRACE_MEM_TLB_ACCESS = 1u << 7, /* it looked up the TLB */
	AUXCAP_TRACE_MEM_TLB_MISS = 1u << 8,   /* ... and the translation walked the tables */
};

/**
 * Where a sampled load's data came from (auxcap_trace_event.source), as the trace says (Arm
 * SPE: the data-source packet, in the encoding the CPU's MIDR names; see the backend).  The
 * levels are the unit's, from the core outwards; a store has none.
 */
enum auxcap_trace_mem_source {
	AUXCAP_TRACE_SRC_NONE = 0,	/* not said */
	AUXCAP_TRACE_SRC_L1,		/* the core's L1 data cache */
	AUXCAP_TRACE_SRC_L2,		/* the core's L2 */
	AUXCAP_TRACE_SRC_PEER_CORE,	/* another core's private cache (a cache-to-cache copy) */
	AUXCAP_TRACE_SRC_LOCAL_CLUSTER, /* a cache of the core's cluster, or another core's
					 * cache in it */
	AUXCAP_TRACE_SRC_SYS_CACHE,	/* the system-level cache (the last level) */
	AUXCAP_TRACE_SRC_PEER_CLUSTER,	/* a cache of another cluster of the chip */
	AUXCAP_TRACE_SRC_REMOTE,	/* another chip or socket (a cache or its memory) */
	AUXCAP_TRACE_SRC_DRAM,		/* memory */
	AUXCAP_TRACE_SRC_COUNT
};

/**
 * The fields of struct auxcap_trace_event up to @branch, laid out the same: what most events
 * are (a BRANCH without a tid of its own), and what decoder_next_batch() writes of each.
 */
struct auxcap_trace_head {
	enum auxcap_trace_kind kind;
	uint32_t flags;
	uint64_t offset;
	uint64_t tsc;
	uint64_t time;
	uint64_t ip;
	uint64_t to;
	uint32_t ninsn;
	enum auxcap_branch_type branch;
};

/** A stretch of trace bytes (borrowed). */
struct auxcap_trace_piece {
	const uint8_t *buf;
	size_t len; /* bytes */
};

/** A file mapped into the traced address space, as the decoder sees it. */
struct auxcap_image_map {
	const char *path;     /* file to read the bytes from; borrowed */
	uint64_t file_offset; /* bytes into @path */
	uint64_t size;	      /* bytes */
	uint64_t vaddr;	      /* where it is mapped */
	int64_t pid;	      /* process it belongs to, -1: every process */
};

/**
 * When a mapping was in place, in perf time (ns): from @since (inclusive) to @until
 * (exclusive).  A process that exec'd has other code at the same addresses before and after.
 */
struct auxcap_image_span {
	uint64_t since; /* 0: from the start of the capture */
	uint64_t until; /* UINT64_MAX: to its end */
};

/**
 * The process a CPU runs from @since (perf time, ns) on, until the next entry's @since: what
 * the context switches of a capture say.  @pid -1: not known (a task the capture does not
 * follow, or none recorded).
 */
struct auxcap_cpu_task {
	uint64_t since; /* first: the key these lists are searched by */
	int64_t pid;
};

/** What the decode stage gives a backend decoder.  Borrowed for the op call only. */
struct auxcap_decode_ctx {
	size_t sz;			  /* sizeof(struct auxcap_decode_ctx) */
	uint32_t auxtrace_type;		  /* AUXTRACE_INFO.type, 0 if the file has none */
	const uint64_t *info;		  /* AUXTRACE_INFO private words, NULL if none */
	size_t nr_info;			  /* entries in @info */
	const struct auxcap_image_map *maps; /* the traced memory, for decoders that need it */
	size_t nr_maps;			  /* entries in @maps */
	const struct auxcap_perf_time_conv *time_conv; /* NULL if none */
	int cpu;			  /* CPU of the stream, -1 if per task */
	bool per_insn;			  /* INSN events wanted (else BLOCK/BRANCH is enough) */
	const char *options;		  /* backend-specific options text, NULL for none */
	char *errbuf;			  /* one-line reason on failure; may be NULL */
	size_t errlen;			  /* bytes at @errbuf */
	/**
	 * Snapshot mode: the previous snapshot of the same queue, NULL if none or if @buf is not
	 * a snapshot.  Consecutive snapshots of an overwrite buffer overlap; a backend may trim
	 * the bytes at the start of @buf that repeat the end of @snapshot_prev (perf's "fix
	 * overlap", which it does when AUXTRACE_INFO says snapshot mode).  Borrowed for
	 * decoder_new() only.
	 */
	const uint8_t *snapshot_prev;
	size_t snapshot_prev_len; /* bytes at @snapshot_prev */
	/*
	 * Read the fields below only when @sz covers them.
	 *
	 * A stream (one AUX queue) may come in several consecutive pieces (the AUXTRACE
	 * buffers of one queue), each decoded by its own decoder_new(), in order.  @prev then
	 * holds the pieces before @buf back to the last hole in the stream, so a decoder can
	 * resynchronize across the seams (a packet or a stretch of flow that starts in an
	 * earlier piece), and @more says another piece follows, so a decoder may leave what
	 * follows its last sync point to the next one, or all of its piece when it has no sync
	 * point.  Over the pieces, every event must come out exactly once.
	 */
	uint64_t stream_offset; /* position of @buf[0] in the AUX stream (bytes); event
				 * offsets are stream positions */
	const struct auxcap_trace_piece *prev; /* the pieces before @buf, oldest first, each
						* contiguous with the next and the last with
						* @buf; NULL if none; borrowed for the call */
	size_t nr_prev;				/* entries in @prev */
	bool more; /* a contiguous piece follows @buf (and gets @buf in its @prev) */
	const char *cpuid;	/* the capture's CPUID text (perf's CPUID feature, e.g.
				 * "GenuineIntel,6,142,10"), NULL if not known */
	const struct perf_event_attr *attr; /* the AUX event's attr, NULL if not known */
	/**
	 * When each of @maps was in place (@nr_maps entries, in the same order), or NULL when
	 * all of them were for the whole capture.  A process that exec'd has the mappings of
	 * each image it ran, each with the span between its execs: a decoder that reads code
	 * takes the mappings in place at the trace's own time (@time_conv, or the backend's own
	 * conversion, turns its timestamps into perf time).  Later entries replace earlier ones
	 * where they overlap; a decoder that ignores this sees every image at once.
	 */
	const struct auxcap_image_span *map_spans;
	/**
	 * A per-CPU stream (@cpu >= 0) that ran several processes, each with mappings of its
	 * own (@maps with their pids): which process ran when, from the capture's context
	 * switches, ascending by @since; NULL when not known or not needed.  A decoder that
	 * reads code takes, at the trace's own time, the mappings of the process running then
	 * and those of every process (pid -1); where the process is not known, all of them (as
	 * without this field).  Two processes can have different code at the same address.
	 */
	const struct auxcap_cpu_task *tasks;
	size_t nr_tasks; /* entries in @tasks */
};

/** Receives one line of a dump (no trailing newline).  Returns < 0 to stop. */
typedef int (*auxcap_backend_line_fn)(void *arg, const char *line);

/* ------------------------------------------------------------------------------------------ */
/* The ops table */

struct auxcap_backend_ops {
	uint32_t abi;		 /* AUXCAP_BACKEND_ABI */
	const char *name;	 /* short name, e.g. "intel_pt"; also `decode --raw NAME` */
	const char *description; /* one line for `auxcap list` */
	uint32_t auxtrace_type;	 /* enum auxcap_auxtrace_type this backend writes and reads */

	/**
	 * Does this backend serve the PMU called @pmu_name?  @pmu (borrowed) is its sysfs
	 * description when known, else NULL.  Returns 1 if it does, 0 if not.  Mandatory.
	 */
	int (*probe)(const char *pmu_name, const struct auxcap_pmu *pmu);

	/**
	 * Complete @attr (caller-owned, already holding the user's terms) for recording: apply
	 * defaults to the config bits the user did not set (ctx->user_set), check them against
	 * the PMU's caps, set the sample/read fields the backend needs.
	 * Returns -EINVAL (errbuf says which knob and why) if the combination is unsupported,
	 * -EOPNOTSUPP if the PMU lacks a capability the user asked for.
	 */
	int (*recording_options)(const struct auxcap_record_ctx *ctx, struct auxcap_attr *attr);

	/** Number of u64 words of AUXTRACE_INFO private data for @attr (0: write none). */
	size_t (*info_size)(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr);

	/**
	 * Fill @words (caller-owned, @nr = info_size()) with the AUXTRACE_INFO private data.
	 * Returns a negative errno if it cannot.
	 */
	int (*info_fill)(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr,
			 uint64_t *words, size_t nr);

	/** Snapshot mode wrap detection (see auxcap/session.h); NULL: zero-tail detection. */
	auxcap_find_snapshot_fn find_snapshot;

	/**
	 * Start decoding the @len bytes at @buf (borrowed until decoder_free()), one stream (one
	 * CPU or task queue, or one snapshot).  On success *@ret_dec (owned by the caller, freed
	 * with decoder_free()) is set.  Returns -EINVAL (errbuf says why) for bad metadata,
	 * -ENOMEM.
	 */
	int (*decoder_new)(const struct auxcap_decode_ctx *ctx, const uint8_t *buf, size_t len,
			   void **ret_dec);

	/**
	 * The next event of the stream into @ev.  Returns 1 with an event, 0 at the end of the
	 * stream, a negative errno on a failure that ends decoding (errors inside the trace are
	 * GAP events, not failures).
	 */
	int (*decoder_next)(void *dec, struct auxcap_trace_event *ev);

	/** Free a decoder; NULL is a no-op. */
	void (*decoder_free)(void *dec);

	/**
	 * List the packets of @buf/@len one line at a time through @fn(@arg, line).
	 * Returns the number of undecodable spots seen (>= 0), or a negative errno (or @fn's
	 * negative return) if it stopped.
	 */
	int (*dump)(const struct auxcap_decode_ctx *ctx, const uint8_t *buf, size_t len,
		    auxcap_backend_line_fn fn, void *arg);

	/**
	 * Record side, appended: the `reference` of each PERF_RECORD_AUXTRACE, read when the
	 * chunk is copied (perf's auxtrace_record.reference): the TSC for Intel PT and BTS.
	 * NULL: CLOCK_MONOTONIC in ns.  Must be cheap and thread-safe.
	 */
	uint64_t (*reference)(void);

	/**
	 * Bytes: the trace is made of records of this size that must not be split (Intel BTS:
	 * 24).  Every AUX copy is trimmed to whole records the way perf trims with its
	 * auxtrace_record.alignment: the part before the buffer's end is cut to a multiple of it
	 * (which drops the unused tail of a buffer whose size is not a multiple).  0: any byte.
	 */
	uint32_t alignment;

	uint32_t flags; /* AUXCAP_BACKEND_F_* */

	/**
	 * Record side, appended: turn the user's address filter text (@ctx->filter, perf's
	 * --filter syntax: "filter main @/bin/prog", "start 0x1000@/lib/x.so", ...) into the
	 * string handed to the kernel with PERF_EVENT_IOC_SET_FILTER, in @buf (@len bytes):
	 * symbols resolved, at most the PMU's nr_addr_filters filters.  The recorder then
	 * passes the result as @ctx->filter to the other record ops (it is what perf stores in
	 * AUXTRACE_INFO).  NULL: the text goes to the kernel as it is.
	 * Returns 0, -EINVAL (errbuf says why), -E2BIG (too many filters), -ENOSPC (@len too
	 * small), -ENOMEM.
	 */
	int (*addr_filter)(const struct auxcap_record_ctx *ctx, char *buf, size_t len);

	/**
	 * Decode side, optional (ABI 3), what the decode stage calls instead of decoder_next()
	 * when given: up to @max next events of the stream at once, each as decoder_next()
	 * would give it.  Event i's head (its fields up to @branch) goes to the struct
	 * auxcap_trace_head at (char *)@heads + i * @stride (@stride >= its size; the heads
	 * may sit in the caller's own larger entries, whose other bytes are left alone).  An
	 * event with any field past @branch set (INSN bytes, a tid, SAMPLE, GAP or OTHER
	 * fields; a BRANCH without F_HAS_TID never has one) also goes whole to @whole[i],
	 * and its head says AUXCAP_TRACE_F_WHOLE (@whole[i].flags too).  Returns the number of
	 * events written, 1 to @max, 0 at the end of the stream, or a negative errno on a
	 * failure that ends decoding, once the events before it are returned.
	 */
	int (*decoder_next_batch)(void *dec, void *heads, size_t stride,
				  struct auxcap_trace_event *whole, size_t max);

	/**
	 * Decode side, optional (ABI 4): the fields of @ev (an event of this backend's
	 * decoder) that only the backend can name, as text for `auxcap decode`'s text output:
	 * Arm SPE's operation, events, latencies and addresses of a SAMPLE.  Written to @buf
	 * (@len bytes, NUL-terminated; cut short if it does not fit), each field starting
	 * with a space.  Returns the length of the whole text (>= @len: it was cut), 0 for
	 * none, or a negative errno.  NULL: the text output prints the generic fields.
	 */
	int (*describe)(const struct auxcap_trace_event *ev, char *buf, size_t len);
};

/** Flags of a backend (auxcap_backend_ops.flags). */
enum {
	/**
	 * The record side works per thread only (Intel BTS, as perf has it): a command or -p/-t
	 * is traced with one event per thread (cpu -1, so no inheritance to children: the
	 * kernel cannot map inherited per-thread events), and -a/-C are refused.
	 */
	AUXCAP_BACKEND_F_PER_THREAD = 1u << 0,
	/**
	 * The trace names the thread of every record itself (Arm SPE context packets), so a
	 * per-CPU capture needs no context-switch side-band for decoders to attribute it (perf
	 * decodes such traces per CPU only).
	 */
	AUXCAP_BACKEND_F_TRACE_HAS_TID = 1u << 1,
	/**
	 * The trace samples operations (Arm SPE) rather than following the control flow: it
	 * gives no call stack, so counter samples are not looked up in it (no context).
	 */
	AUXCAP_BACKEND_F_SAMPLED = 1u << 2,
};

/* ------------------------------------------------------------------------------------------ */
/* Registry */

/**
 * Add @ops (borrowed; must outlive every use, e.g. a static const table) to the registry,
 * after the built-in backends.  Checks the mandatory ops and groups once.
 * Returns -EINVAL if @ops is incomplete (a group half given, no name or probe),
 * -EPROTO if its ABI version differs, -EEXIST if a backend of that name is registered,
 * -ENOSPC if the registry is full.
 */
AUXCAP_API int auxcap_backend_register(const struct auxcap_backend_ops *ops);

/** Number of registered backends (built-in first). */
AUXCAP_API size_t auxcap_backend_count(void);

/** The @i-th registered backend, NULL past the end.  Borrowed, lives as long as the process. */
AUXCAP_API const struct auxcap_backend_ops *auxcap_backend_get(size_t i);

/**
 * The backend serving PMU @pmu_name (@pmu: its description or NULL), NULL if none.  Backends
 * registered at run time are asked first, in the order they were registered, so a plug-in can
 * take over a PMU that a built-in backend also serves.
 */
AUXCAP_API const struct auxcap_backend_ops *
auxcap_backend_for_pmu(const char *pmu_name, const struct auxcap_pmu *pmu);

/** The backend reading AUXTRACE_INFO type @type, NULL if none (same order as above). */
AUXCAP_API const struct auxcap_backend_ops *auxcap_backend_for_type(uint32_t type);

/** The backend called @name, NULL if none. */
AUXCAP_API const struct auxcap_backend_ops *auxcap_backend_find(const char *name);

/* ------------------------------------------------------------------------------------------ */
/* Plug-ins */

/**
 * Name of the entry point a plug-in exports: a function returning its ops table,
 * `const struct auxcap_backend_ops *auxcap_backend_plugin(void)`.  It is called once, right
 * after the plug-in is loaded; the table it returns must stay valid while the process runs
 * (a static const table).  The plug-in is never unloaded.
 */
#define AUXCAP_BACKEND_PLUGIN_SYMBOL "auxcap_backend_plugin"
typedef const struct auxcap_backend_ops *(*auxcap_backend_plugin_fn)(void);

/**
 * Load the plug-in at @path (a shared object: dlopen() with RTLD_NOW), get its ops table from
 * its entry point and register it (auxcap_backend_register()).  On success *@ret_ops (if not
 * NULL) is the registered table.  On failure the plug-in is unloaded and @errbuf (if not NULL)
 * holds one line saying what is wrong and how to fix it.
 * Returns -ENOENT if the file cannot be loaded (missing, not a shared object, unresolved
 * symbols: dlerror()'s text is in @errbuf).
 * Returns -ENOEXEC if it exports no AUXCAP_BACKEND_PLUGIN_SYMBOL.
 * Returns -EPROTO if its ops table was built for another AUXCAP_BACKEND_ABI.
 * Returns -EEXIST if a backend of the same name is registered (built-in or plug-in).
 * Returns -EINVAL if the entry point returns NULL or an incomplete table.
 * Returns -ENOSPC if too many plug-ins are loaded, -ENOMEM.
 */
AUXCAP_API int auxcap_backend_load(const char *path, const struct auxcap_backend_ops **ret_ops,
				   char *errbuf, size_t errlen);

/** Told about each plug-in of a directory that failed to load: its path, errno and reason. */
typedef void (*auxcap_backend_load_report_fn)(void *arg, const char *path, int err,
					      const char *reason);

/**
 * Load every `*.so` of directory @dir, in name order, with auxcap_backend_load().  A plug-in
 * that fails does not stop the others: @report (may be NULL) is told about it.
 * Returns the number of plug-ins loaded; 0 if @dir does not exist.
 * Returns -EINVAL if @dir is NULL, or the errno of reading the directory (-EACCES, -ENOTDIR).
 */
AUXCAP_API int auxcap_backend_load_dir(const char *dir, auxcap_backend_load_report_fn report,
				       void *arg);

/** The file plug-in @ops was loaded from (borrowed), or NULL for a built-in backend. */
AUXCAP_API const char *auxcap_backend_origin(const struct auxcap_backend_ops *ops);

#ifdef __cplusplus
}
#endif

#endif /* AUXCAP_BACKEND_H */
