/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap/decode_annotate.h: a capture's functions instruction by instruction (`auxcap
 * annotate`, perf annotate): how many times the trace says each instruction ran, how often
 * each branch was taken, and the counter samples at each, aggregated from a decode session's
 * merged stream (auxcap/decode.h).
 *
 *	auxcap_annotate_new(d, &opts, &a);
 *	while (auxcap_decode_next(d, &ev) == 1)
 *		auxcap_annotate_event(a, ev);
 *	auxcap_annotate_finish(a);
 *	for (i = 0; i < auxcap_annotate_nr_funcs(a); i++)
 *		... auxcap_annotate_get_func(a, i), auxcap_annotate_insns(a, i, &insns, &n) ...
 *	auxcap_annotate_free(a);
 *
 * Counting.  Between two events of a thread's trace the code ran in sequence: a taken branch
 * (BRANCH event, from @ip) ran every instruction from where the thread's flow last resumed
 * (the previous branch's target, or where tracing started) up to @ip.  Each such stretch is
 * counted once per run, keyed by process image and addresses; INSN events (a backend's
 * per-instruction output) count their instruction themselves.  At the end each stretch is
 * walked instruction by instruction in the code of the binary mapped there (capstone: x86,
 * 64-bit code), and each instruction gets the stretch's count.  A stretch that ends where
 * tracing stopped (DISABLE) ends before the instruction the stop names when the trace's count
 * says that one did not run (an asynchronous stop names the next instruction).  A stretch
 * whose walk does not end on its branch, or whose instruction count differs from the one the
 * trace gives, is not counted (the binary does not match the trace): its instructions count
 * as unplaced, as do those run before the first known resume point of a thread (after a gap,
 * or when a stream starts in the middle of a block; a branch there counts itself).  The exact counts are the trace's: every run of
 * the traced span, not a statistical estimate; samples (counter samples by the IP decode
 * looks up, trace samples such as Arm SPE records by theirs) are counted per instruction as
 * perf annotate does.
 *
 * Functions are symbols (name, file, link-time address: one entry for a function of a binary
 * whatever process or load address it ran at; its addresses are those of one process it ran
 * in); their size is the symbol's (or, without one, up to the next symbol).  Code without a
 * symbol and kernel code are not annotated (counted in the summary).
 *
 * Ownership: the annotation borrows @d (it must outlive it); names and files it returns are
 * borrowed from @d, the rest from the annotation, valid until both are freed.
 */
#ifndef AUXCAP_DECODE_ANNOTATE_H
#define AUXCAP_DECODE_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auxcap/decode.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Options of an annotation; caller-owned, copied.  Zero-fill, then set @sz. */
struct auxcap_annotate_opts {
	size_t sz; /* sizeof(struct auxcap_annotate_opts) */
	/* the threads and sample events counted (auxcap_decode_filter_match()); NULL: all.
	 * Borrowed: it must outlive the annotation's events. */
	const struct auxcap_decode_filter *filter;
};

/** A function and its totals. */
struct auxcap_annotate_func {
	const char *name; /* symbol name */
	const char *dso;  /* the file of the mapping */
	uint64_t addr;	  /* run-time address of its first byte in process @pid */
	uint64_t vaddr;	  /* its link-time address in @dso */
	uint64_t size;	  /* bytes annotated: the symbol's size (when the symbol has none, up to
			   * the end of the last instruction counted) */
	int32_t pid;	  /* a process it ran in (the one @addr is of) */
	uint64_t insns;	  /* instructions the trace ran in it (sum of the instructions' @execs) */
	uint64_t taken;	  /* branches taken from its instructions */
	const uint64_t *samples; /* per sample slot (auxcap_annotate_summary.nr_slots) */
	uint64_t samples_sum;	 /* of @samples over the slots */
	const struct auxcap_annotate_mem *mem; /* its sampled data accesses, NULL if none */
};

/**
 * Sampled data accesses (Arm SPE loads and stores, auxcap_trace_event.mem) at an instruction
 * or in a function: which load or store waited for data, as `auxcap report --mem` counts them.
 */
struct auxcap_annotate_mem {
	uint64_t accesses;
	uint64_t l1_misses;  /* served below the L1 (an L2, the LLC or memory) */
	uint64_t llc_misses; /* served by memory */
	uint64_t tlb_walks;
	uint64_t lat;	     /* total latency, cycles, summed */
	uint64_t peer;	     /* served by another core's cache, as the data source says
			      * (auxcap_report_mem_peer(); 0 without data sources) */
};

/** An instruction of a function. */
struct auxcap_annotate_insn {
	uint64_t addr;	 /* run-time address (in the function's @pid) */
	uint32_t offset; /* from the function's start */
	uint8_t size;	 /* bytes */
	bool valid;	 /* the bytes decode as an instruction (else @text is "(bad)") */
	char text[96];	 /* disassembly, Intel syntax ("mnemonic operands") */
	uint64_t execs;	 /* times the trace ran it */
	uint64_t taken;	 /* times a branch was taken from it (a call, return, jump, or
			  * conditional jump taken; @execs - @taken of a conditional jump
			  * fell through) */
	bool branch;	 /* a control transfer (jumps, calls, returns) */
	const uint64_t *samples; /* per sample slot, NULL when no sample is at it */
	const char *src_file;	 /* source file of its line (DWARF), NULL if not known */
	unsigned int src_line;
	const char *src_dir;	 /* the compilation directory a relative @src_file is in,
				  * NULL if not known */
	const char *src_func;	 /* where the compiler inlined another function here, the
				  * function its source line is of (DWARF: the innermost inlined
				  * one; auxcap_annotate_inlines() has the chain); NULL in the
				  * function's own code */
	const struct auxcap_annotate_mem *mem; /* its sampled data accesses, NULL if none */
};

/** The annotation as a whole. */
struct auxcap_annotate_summary {
	uint64_t insns;	      /* instructions the trace ran, as its events count them (a
			       * trace without counts, Intel BTS: as the walks found them) */
	uint64_t insns_placed; /* of those, counted in a function's instructions */
	uint64_t insns_nosym;  /* ... run in code without a symbol (or kernel code
				* without the kernel's code) */
	uint64_t insns_unplaced; /* ... not placed: before a thread's first resume point, in a
				  * stretch whose code did not match the trace, or whose
				  * binary could not be read */
	uint64_t stretches;	  /* distinct stretches of sequential code */
	uint64_t stretches_bad;	  /* ... not counted (code did not match, unreadable) */
	size_t nr_slots;	  /* auxcap_decode_nr_evsels() + 1 (the last: trace samples) */
	const uint64_t *slot_samples; /* samples per slot */
	const uint64_t *slot_placed;  /* ... counted at a function's instruction */
};

struct auxcap_annotate;

/**
 * An annotation over @d's merged stream (@d borrowed: it must outlive the annotation).
 * @opts may be NULL (defaults), else it is copied.
 * Returns 0 and sets *@ret (owned by the caller, free with auxcap_annotate_free()).
 * Returns -EINVAL if @d or @ret is NULL or @opts too small, -EOPNOTSUPP if the build has no
 * disassembler (capstone), -ENOMEM.
 */
int auxcap_annotate_new(struct auxcap_decode *d, const struct auxcap_annotate_opts *opts,
			struct auxcap_annotate **ret);

/**
 * Count @ev (borrowed for the call), the events of @d's stream in order.
 * Returns 0, -EINVAL for a NULL argument or after auxcap_annotate_finish(), -ENOMEM.
 */
int auxcap_annotate_event(struct auxcap_annotate *a, const struct auxcap_decode_event *ev);

/**
 * The stream has ended: walk the stretches in the binaries' code, count the instructions of
 * each function, order the functions by instructions run, then samples, most first (ties: by
 * name).  Call once.
 * Returns 0, -EINVAL if already finished, -ENOMEM.
 */
int auxcap_annotate_finish(struct auxcap_annotate *a);

/**
 * auxcap_annotate_new(), every remaining event of @d, auxcap_annotate_finish().
 * Returns 0, their errors, or the first negative errno of auxcap_decode_next().
 */
int auxcap_annotate_run(struct auxcap_decode *d, const struct auxcap_annotate_opts *opts,
			struct auxcap_annotate **ret);

/** The summary (borrowed, valid until free; complete after finish). */
const struct auxcap_annotate_summary *
auxcap_annotate_get_summary(const struct auxcap_annotate *a);

/** Functions after finish (0 before), and function @i (borrowed; NULL past the end). */
size_t auxcap_annotate_nr_funcs(const struct auxcap_annotate *a);
const struct auxcap_annotate_func *auxcap_annotate_get_func(const struct auxcap_annotate *a,
							    size_t i);

/**
 * The instructions of function @i, its bytes disassembled in order from its first byte,
 * into *@ret (borrowed until the next call for any function, or free) and *@ret_n.  Where a
 * counted instruction starts inside the one before (code that jumps into an instruction), the
 * one before is cut there and marked not @valid.
 * Returns 0, -EINVAL if @i is out of range or before finish, -ENOENT if the function's code
 * cannot be read any more, -ENOMEM.
 */
int auxcap_annotate_insns(struct auxcap_annotate *a, size_t i,
			  const struct auxcap_annotate_insn **ret, size_t *ret_n);

/**
 * The functions inlined at the byte @offset of function @i (as auxcap_decode_inlines() gives
 * them: innermost first, the function itself last) into @frames (@n entries, at least 2).
 * Returns the frames written, 0 where nothing is inlined (or @i is out of range), -ENOMEM.
 */
int auxcap_annotate_inlines(struct auxcap_annotate *a, size_t i, uint32_t offset,
			    struct auxcap_decode_inline *frames, size_t n);

/**
 * Line coverage of a file of code: a row of its DWARF line tables (the first instruction of a
 * stretch of code of @file, in @dir if relative, at @line) and the runs of that instruction, 0 if it
 * never ran.  A negative return stops auxcap_annotate_coverage() with that value.
 */
typedef int (*auxcap_annotate_line_fn)(void *arg, const char *file, const char *dir,
				       unsigned int line, uint64_t execs);
/** ... and a function symbol of it with a source line: the runs of its first instruction. */
typedef int (*auxcap_annotate_cov_func_fn)(void *arg, const char *name, const char *file,
					   const char *dir, unsigned int line, uint64_t execs);

/**
 * The coverage of file of code @dso (as auxcap_annotate_func.dso names it; a file in which a
 * function was counted), after finish: every row of its line tables (the file's
 * DWARF, or its separate debug file's) to @line_fn with the runs of its instruction, then
 * every function symbol that has a source line to @func_fn (may be NULL) with the runs of its
 * first instruction.  What never ran is there with 0: the code the run did not cover.
 * Returns 0, -EINVAL before finish or for a NULL argument, -ENOENT if no counted function is
 * of @dso, -ENODATA if @dso has no line tables (no DWARF, or built without libdw), or a
 * callback's negative value.
 */
int auxcap_annotate_coverage(struct auxcap_annotate *a, const char *dso,
			     auxcap_annotate_line_fn line_fn, auxcap_annotate_cov_func_fn func_fn,
			     void *arg);

/** Free @a (NULL is a no-op); @d is not touched. */
void auxcap_annotate_free(struct auxcap_annotate *a);

#ifdef __cplusplus
}
#endif

#endif /* AUXCAP_DECODE_ANNOTATE_H */
