/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The live tracer: a trace source for the emulated AUX PMU.
 *
 * It runs a real child process under ptrace single-step (user space only), observes every
 * instruction the child executes, and hands the resulting event stream to one encoder, which
 * turns it into the bytes a real PMU would have written into the AUX area:
 *
 *   AUXCAP_TRACER_INTEL_PT   Intel PT packets made with libipt's packet encoder
 *   AUXCAP_TRACER_INTEL_BTS  24-byte Intel BTS branch records
 *   AUXCAP_TRACER_ARM_SPE    Arm SPE-style sampled operation records
 *
 * Output goes through two callbacks: on_trace() receives trace bytes in order (the AUX stream),
 * on_sideband() receives what the kernel would have written into the data ring (COMM at exec,
 * MMAP2 for executable mappings, a start marker for ITRACE_START, EXIT).
 *
 * Threading: ptrace requests must come from the thread that became the tracer, so
 * auxcap_tracer_start() and every later call on the same tracer must be made from one thread.
 * The callbacks run on that thread, while the child is stopped.
 *
 * Speed: one ptrace stop per instruction (a few microseconds each); see README.md.
 */
#ifndef AUXCAP_EMU_TRACER_H
#define AUXCAP_EMU_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

struct auxcap_tracer;

/** The trace format the tracer's encoder produces. */
enum auxcap_tracer_format {
	AUXCAP_TRACER_INTEL_PT = 0,
	AUXCAP_TRACER_INTEL_BTS,
	AUXCAP_TRACER_ARM_SPE,
	AUXCAP_TRACER_FORMAT_MAX,
};

/** What an executed instruction did to the control flow. */
enum auxcap_tracer_kind {
	AUXCAP_TRACER_OTHER = 0, /* not a branch */
	AUXCAP_TRACER_COND,	 /* conditional direct jump (jcc, jrcxz, loop) */
	AUXCAP_TRACER_JUMP,	 /* unconditional direct jump */
	AUXCAP_TRACER_CALL,	 /* direct near call */
	AUXCAP_TRACER_IND_JUMP,	 /* indirect near jump */
	AUXCAP_TRACER_IND_CALL,	 /* indirect near call */
	AUXCAP_TRACER_RETURN,	 /* near return */
	AUXCAP_TRACER_FAR,	 /* far transfer into the kernel: syscall, sysenter, int */
};

/** Memory access bits of an executed instruction. */
enum auxcap_tracer_mem_flags {
	AUXCAP_TRACER_MEM_LOAD = 1u << 0,  /* reads its memory operand */
	AUXCAP_TRACER_MEM_STORE = 1u << 1, /* writes its memory operand */
};

/**
 * One executed instruction, as the tracer saw it between two ptrace stops.  A REP-prefixed
 * string instruction stops once per iteration but is reported once, when it completes.
 */
struct auxcap_tracer_insn {
	uint64_t ip;	    /* virtual address of the instruction */
	uint64_t next_ip;   /* virtual address the child stopped at next; 0 if it ended */
	uint64_t target;    /* branch target for direct branches, else 0 */
	uint64_t data_addr; /* virtual address of the memory operand when mem != 0 */
	uint64_t tsc;	    /* TSC (rdtsc) read at the stop after the instruction */
	uint64_t tsc_delta; /* TSC cycles since the previous stop */
	enum auxcap_tracer_kind kind;
	uint8_t len;	  /* instruction length in bytes */
	uint8_t mem;	  /* enum auxcap_tracer_mem_flags */
	bool taken;	  /* branch taken (always true for non-conditional branches) */
	bool traced;	  /* @ip lies in the address filter */
	bool next_traced; /* @next_ip lies in the address filter (false if it ended) */
	bool ended;	  /* the task ended during this instruction (exit syscall), or control
			   * did not come back from it (@restarts) */
	bool async_after; /* control then moved to @next_ip without a branch (a signal) */
	/* Appended.  A system call a signal interrupted, which the kernel restarts: control
	 * went into the kernel and did not come back after the call (@ended is set too;
	 * @next_ip is where the child stopped, not where it goes on).  It comes back to the
	 * call, which is then the next instruction again, or to a signal handler. */
	bool restarts;
	/* Appended.  The stack pointer (RSP) before the instruction: at a function's first
	 * instruction it points at the return address, and a ret pops from it. */
	uint64_t sp;
};

/** Kinds of sideband records. */
enum auxcap_tracer_sb_type {
	AUXCAP_TRACER_SB_COMM = 0, /* the task's command name (at exec or attach) */
	AUXCAP_TRACER_SB_MMAP,	   /* an executable mapping (PERF_RECORD_MMAP2-like) */
	AUXCAP_TRACER_SB_START,	   /* tracing starts for pid/tid (PERF_RECORD_ITRACE_START) */
	AUXCAP_TRACER_SB_EXIT,	   /* the task exited */
};

/** A sideband record; everything it points to is borrowed for the callback's duration. */
struct auxcap_tracer_sideband {
	enum auxcap_tracer_sb_type type;
	uint32_t pid; /* process id */
	uint32_t tid; /* thread id */
	uint64_t tsc; /* TSC when the tracer saw it */
	union {
		struct {
			const char *comm; /* NUL-terminated, at most 15 characters */
			bool exec;	  /* set by an exec (PERF_RECORD_MISC_COMM_EXEC) */
		} comm;
		struct {
			uint64_t addr;	  /* start virtual address, bytes */
			uint64_t len;	  /* length, bytes */
			uint64_t pgoff;	  /* file offset of @addr, bytes */
			uint32_t prot;	  /* PROT_READ | PROT_WRITE | PROT_EXEC */
			uint32_t flags;	  /* MAP_PRIVATE or MAP_SHARED */
			uint32_t maj;	  /* device major */
			uint32_t min;	  /* device minor */
			uint64_t ino;	  /* inode number */
			const char *path; /* file path, or "[vdso]", "//anon", ... */
		} mmap;
		struct {
			int status; /* wait status (WIFEXITED/WIFSIGNALED apply) */
		} exit;
	};
};

/**
 * Receives trace bytes in stream order; @bytes is borrowed for the call.  A call holds whole
 * packets (PT) or whole records (BTS, SPE: at most 64 bytes each), at most 16 KiB; bytes are
 * delivered when the stage fills, before each sideband record, and at the end of every
 * auxcap_tracer_step().  Returns 0 or a negative errno (which stops the tracer).
 */
typedef int (*auxcap_tracer_trace_fn)(void *ctx, const void *bytes, size_t len);
/** Receives a sideband record.  Returns 0 or a negative errno (which stops the tracer). */
typedef int (*auxcap_tracer_sideband_fn)(void *ctx, const struct auxcap_tracer_sideband *sb);
/** Observes every executed instruction (tests, statistics).  Returns 0 or a negative errno. */
typedef int (*auxcap_tracer_insn_fn)(void *ctx, const struct auxcap_tracer_insn *insn);

/** Tracer options; zero-fill, set sz = sizeof(struct auxcap_tracer_opts). */
struct auxcap_tracer_opts {
	size_t sz;			  /* sizeof(struct auxcap_tracer_opts) */
	enum auxcap_tracer_format format; /* encoder to use */
	uint64_t max_insns;    /* stop tracing after this many instructions; 0: no limit */
	uint64_t filter_start; /* traced range [filter_start, filter_end); */
	uint64_t filter_end;   /* both 0: trace all of user space */
	uint32_t psb_period;   /* PT: bytes between PSBs; 0: 4096 */
	uint32_t spe_interval; /* SPE: sample every N-th instruction; 0: 1024 */
	bool spe_jitter;       /* SPE: add 0..255 pseudo-random jitter (PMSIRR.RND) */
	auxcap_tracer_trace_fn on_trace;       /* mandatory */
	auxcap_tracer_sideband_fn on_sideband; /* optional */
	auxcap_tracer_insn_fn on_insn;	       /* optional */
	void *ctx;			       /* passed to the callbacks, borrowed */
	/* SPE, appended: what the arm_spe event's format terms ask of the sampling unit. */
	uint32_t spe_flags;	   /* AUXCAP_TRACER_SPE_* */
	uint32_t spe_min_latency;  /* with AUXCAP_TRACER_SPE_MIN_LATENCY: records whose total
				      latency (cycles) is smaller are dropped (PMSLATFR_EL1) */
	uint64_t spe_event_filter; /* records lacking any of these event bits are dropped
				      (PMSEVFR_EL1); 0: no event filter */
	/* Appended: auxcap_tracer_step() returns before a far transfer (a system call, which
	 * may block) unless it is the call's first step, so the caller can make that step
	 * where blocking does no harm (auxcap_tracer_at_far()). */
	bool break_at_far;
	/* Appended: once *@stop_req is non-zero (set from any thread, read atomically; NULL:
	 * never), auxcap_tracer_step() stops tracing as auxcap_tracer_stop(tr, false) does,
	 * between two steps, or in a system call's step that blocks: the task is then sent a
	 * SIGSTOP, which ends its wait with a signal-delivery stop that the tracer swallows, and
	 * the kernel restarts the call once the task runs on (a detached server goes on waiting
	 * in its accept() as if nothing happened).  For a task attached to (auxcap_tracer_attach())
	 * that must be let go on request. */
	const int *stop_req;
	/* Appended: mappings without exec are reported too (anonymous memory, [stack], [heap],
	 * data files: the kernel's attr.mmap_data side-band), and a brk rescans the mappings. */
	bool data_maps;
};

/* auxcap_tracer_opts.spe_flags: the arm_spe driver's PMSCR_EL1/PMSFCR_EL1 settings. */
enum {
	AUXCAP_TRACER_SPE_NO_TIMESTAMP = 1u << 0, /* records end with END, not a timestamp
						     (ts_enable=0: PMSCR_EL1.TS clear) */
	AUXCAP_TRACER_SPE_FILTER_LOAD = 1u << 1,   /* keep loads (load_filter) ... */
	AUXCAP_TRACER_SPE_FILTER_STORE = 1u << 2,  /* ... stores (store_filter) ... */
	AUXCAP_TRACER_SPE_FILTER_BRANCH = 1u << 3, /* ... branches (branch_filter); with any of
						      the three, other operations are dropped */
	AUXCAP_TRACER_SPE_MIN_LATENCY = 1u << 4,   /* apply spe_min_latency */
};

/** Counters of one tracer. */
struct auxcap_tracer_stats {
	uint64_t stops;		/* ptrace stops handled */
	uint64_t insns;		/* instructions executed (REP iterations count once) */
	uint64_t traced_insns;	/* of those, inside the address filter */
	uint64_t branches;	/* branch instructions executed (COND..RETURN) */
	uint64_t cond;		/* conditional branches executed */
	uint64_t cond_taken;	/* of those, taken */
	uint64_t far;		/* far transfers (system calls) */
	uint64_t async;		/* asynchronous transfers (signal handler entries) */
	uint64_t packets;	/* packets (PT), records (BTS) or samples (SPE) emitted */
	uint64_t trace_bytes;	/* bytes passed to on_trace */
	uint64_t sideband;	/* sideband records passed to on_sideband */
	uint64_t map_scans;	/* reads of /proc/PID/maps */
	uint64_t decode_misses; /* instruction decodes that missed the decode cache */
	uint64_t unknown_insns; /* instructions the disassembler could not decode (length taken
				   from the step; no data address) */
	uint64_t stepped_over;	/* instructions a single step ran without stopping, after an
				   instruction the hypervisor emulates (CPUID in some VMs): logged
				   with the step's time, no data address */
	uint64_t rep_runs;	/* REP string instructions let run to a breakpoint on the next
				   instruction instead of stepped (a signal may stop one part way) */
	uint64_t restarts;	/* system calls a signal interrupted that the kernel restarts
				   (of @far; struct auxcap_tracer_insn @restarts) */
	uint64_t untraced_threads;  /* threads the traced thread created (clone with
				       CLONE_THREAD, clone3): not traced */
	uint64_t untraced_children; /* processes it created (fork, vfork, clone): not traced */
};

/**
 * Allocate a tracer.
 *
 * @opts is copied; @opts->ctx is borrowed until auxcap_tracer_free().  On success stores the
 * tracer, owned by the caller, in @ret_tr.
 *
 * Returns 0 on success, a negative errno otherwise.
 * Returns -EINVAL if @opts or @ret_tr is NULL, @opts->sz is too small, on_trace is NULL, the
 * format is unknown or the filter range is empty or reversed.
 * Returns -E2BIG if @opts->sz is larger than this build knows and the extra bytes are not 0.
 * Returns -ENOMEM if memory runs out.
 * Returns -ENOSYS if the format's encoder or the disassembler is not built in.
 */
int auxcap_tracer_new(const struct auxcap_tracer_opts *opts, struct auxcap_tracer **ret_tr);

/**
 * Start @argv[0] (searched in PATH) with @argv under the tracer.
 *
 * Forks, execs and returns with the child stopped at its first user-space instruction after
 * exec, once COMM, START and MMAP sideband and the trace start have been emitted.  @argv is
 * borrowed for the call.
 *
 * Returns 0 on success, a negative errno otherwise.
 * Returns -EINVAL if @tr or @argv is NULL, @argv[0] is NULL, or @tr already has a child.
 * Returns -ENOENT, -EACCES, -ENOEXEC (...) if exec fails, with the exec's errno.
 * Returns -EPERM if ptrace is not permitted (seccomp, Yama, containers).
 * Returns any error a callback returned.
 */
int auxcap_tracer_start(struct auxcap_tracer *tr, char *const argv[]);

/**
 * Trace @pid, a child of this process that was forked to run a command and now waits, before
 * its exec, for one byte on a pipe whose write end is @go_fd (the way a recorder starts a
 * command so that it can open its perf events on the pid first, with enable_on_exec).
 *
 * Seizes the child, writes the byte (and closes @go_fd, owned by the tracer from now on),
 * and returns once the child stopped at the end of its exec, at the new image's first
 * instruction, with the same sideband and trace start as auxcap_tracer_start().  The child
 * is the tracer's from then on: it is killed and reaped by auxcap_tracer_stop(tr, true) and
 * auxcap_tracer_free(), and the caller must not wait for it.
 *
 * Returns 0 on success, a negative errno otherwise (@go_fd is closed in every case).
 * Returns -EINVAL if @tr is NULL, @pid <= 0, @go_fd < 0, or @tr already has a child.
 * Returns -EPERM or -ESRCH from ptrace(PTRACE_SEIZE).
 * Returns -ENOEXEC if the child exited without exec'ing (its command could not be run).
 * Returns any error a callback returned.
 */
int auxcap_tracer_start_child(struct auxcap_tracer *tr, pid_t pid, int go_fd);

/**
 * Attach to the running thread @tid and start tracing it.
 *
 * The thread is stopped with PTRACE_ATTACH and detached again by auxcap_tracer_stop() or
 * auxcap_tracer_free() (or opts.stop_req).  Sideband: COMM (not exec), START, MMAP, with the
 * thread's process (its thread group) as pid; only @tid is traced.
 *
 * Returns 0 on success, a negative errno otherwise.
 * Returns -EINVAL if @tr is NULL, @tid <= 0 or @tr already has a child.
 * Returns -EPERM or -ESRCH from ptrace(PTRACE_ATTACH).
 * Returns any error a callback returned.
 */
int auxcap_tracer_attach(struct auxcap_tracer *tr, pid_t tid);

/**
 * Single-step the child for up to @max_steps ptrace stops (0: until it ends or the max_insns
 * limit is reached): an instruction takes one stop, a REP string instruction one per
 * iteration.  With opts.break_at_far it also returns before a far transfer that is not its
 * first step.
 *
 * When the child exits, the trace end and EXIT sideband are emitted.  When max_insns is
 * reached the trace end is emitted and the child is detached and runs on untraced.  Pending
 * trace bytes are flushed to on_trace before returning.
 *
 * Returns 1 if the child is still being traced, 0 if tracing is over, a negative errno
 * otherwise (tracing is then over too).
 * Returns -EINVAL if @tr is NULL or has no child.
 * Returns -EFAULT if an instruction could not be read or decoded.
 * Returns -ECHILD, -ESRCH if the child vanished unexpectedly.
 * Returns any error a callback or the encoder returned.
 */
int auxcap_tracer_step(struct auxcap_tracer *tr, uint64_t max_steps);

/**
 * Whether the child's next instruction is a far transfer into the kernel (a system call:
 * the step that runs it may block for as long as the call does).  False if @tr is NULL, not
 * tracing, or the instruction cannot be read.
 */
bool auxcap_tracer_at_far(struct auxcap_tracer *tr);

/**
 * From an on_insn callback: end the running auxcap_tracer_step() once this instruction is
 * handled (it returns as after its last step), the trace made decodable up to here (Intel
 * PT: a PSB+ at the next instruction, after the pending TNT bits), so the caller gets it at
 * once.  NULL is a no-op.
 */
void auxcap_tracer_yield(struct auxcap_tracer *tr);

/**
 * Stop tracing now: emit the trace end, then detach the child (it runs on untraced) or, with
 * @kill, kill and reap it.  Does nothing if tracing is already over.
 *
 * Returns 0 on success, a negative errno otherwise.
 * Returns -EINVAL if @tr is NULL.
 * Returns any error a callback or the encoder returned.
 */
int auxcap_tracer_stop(struct auxcap_tracer *tr, bool kill);

/**
 * Read @len bytes of the child's memory at @addr into @buf (e.g. the [vdso] from a sideband
 * callback).  Only while the child is stopped under the tracer.
 *
 * Returns 0 on success, a negative errno otherwise.
 * Returns -EINVAL if @tr or @buf is NULL or there is no stopped child.
 * Returns -EFAULT if the range is not fully readable.
 */
int auxcap_tracer_read_mem(struct auxcap_tracer *tr, uint64_t addr, void *buf, size_t len);

/** Copy the counters into @ret_stats.  Returns 0, or -EINVAL if an argument is NULL. */
int auxcap_tracer_get_stats(const struct auxcap_tracer *tr, struct auxcap_tracer_stats *ret_stats);

/** The traced child's pid, or -1 if there is none. */
pid_t auxcap_tracer_pid(const struct auxcap_tracer *tr);

/**
 * The child's wait status once it ended (0 until then, or if it was detached).
 *
 * Returns 1 and stores the status if the child exited while traced, 0 if not (yet), -EINVAL if
 * an argument is NULL.
 */
int auxcap_tracer_exit_status(const struct auxcap_tracer *tr, int *ret_status);

/**
 * Free @tr: a child it started that is still running is killed and reaped; an attached one is
 * detached.  NULL is a no-op.
 */
void auxcap_tracer_free(struct auxcap_tracer *tr);

/** The format's name: "intel_pt", "intel_bts", "arm_spe", or NULL if unknown. */
const char *auxcap_tracer_format_name(enum auxcap_tracer_format format);

#endif /* AUXCAP_EMU_TRACER_H */
