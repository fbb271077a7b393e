/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the live tracer's tests: run a command under the tracer to completion and
 * keep everything it produced (trace bytes, sideband, the tracer's own instruction log), and
 * read addresses out of the test program's ELF file.
 */
#ifndef AUXCAP_TEST_TRACER_RUN_H
#define AUXCAP_TEST_TRACER_RUN_H

#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#include "tracer.h"

/* One instruction as the tracer reported it through on_insn. */
struct tr_insn {
	uint64_t ip;	    /* instruction address */
	uint64_t next_ip;   /* where the child went next */
	uint64_t data_addr; /* memory operand address when mem != 0 */
	uint8_t kind;	    /* enum auxcap_tracer_kind */
	uint8_t mem;	    /* enum auxcap_tracer_mem_flags */
	uint8_t taken;	    /* branch taken */
	uint8_t traced;	    /* inside the filter */
	uint8_t ended;	    /* exit system call */
	uint8_t async;	    /* async_after */
	uint8_t restarts;   /* a system call the kernel restarts */
	uint64_t tsc_delta; /* TSC cycles since the previous stop */
};

/* One MMAP sideband record; @bytes holds a copy of the memory for non-file mappings. */
struct tr_map {
	uint64_t addr;	/* bytes */
	uint64_t len;	/* bytes */
	uint64_t pgoff; /* bytes */
	char path[256]; /* file or pseudo name */
	uint8_t *bytes; /* malloc'd copy of [vdso] etc., or NULL */
};

struct tr_run {
	struct auxcap_tracer *tr; /* the tracer, while running */
	uint8_t *trace;		  /* all trace bytes, malloc'd */
	size_t trace_len;	  /* bytes in @trace */
	size_t trace_cap;	  /* bytes allocated */
	size_t trace_calls;	  /* on_trace calls */
	struct tr_insn *log;	  /* instruction log, malloc'd */
	size_t nlog;		  /* entries */
	size_t log_cap;		  /* entries allocated */
	struct tr_map maps[64];	  /* MMAP records */
	size_t nmaps;		  /* entries in @maps */
	char comm[16];		  /* last COMM */
	int ncomm;		  /* COMM records */
	size_t comm_at_map[4];	  /* MMAP records seen when each of the first COMMs arrived */
	int comm_exec;		  /* COMM records with exec set */
	int nstart;		  /* START records */
	uint32_t tid;		  /* thread id from the START record */
	uint32_t pid;		  /* its process, from the same record */
	int nexit;		  /* EXIT records */
	int exit_status;	  /* from the EXIT record */
	int order_ok;		  /* 1 while COMM/START came before the first trace byte */
	struct auxcap_tracer_stats stats; /* final counters */
	double seconds;			  /* wall time of start + step */
	size_t yield_at;		  /* set before the run: on_insn calls auxcap_tracer_yield()
					     at this instruction (1-based; 0: never) */
	size_t steps_at_yield;		  /* instructions logged when that step returned */
	size_t trace_at_yield;		  /* trace bytes then */
	/* Set before the run: steps of this many ptrace stops (0: one step to the end), as the
	 * live source makes them; with opts.break_at_far, the first step that ends before a
	 * system call once this many instructions are logged is kept below. */
	uint64_t step_max;
	size_t far_break_after;
	/* What the steps did */
	uint64_t max_stops;	/* the most ptrace stops one step took */
	size_t far_breaks;	/* steps that ended early before a system call */
	size_t early_other;	/* steps that ended early for another reason */
	size_t far_not_first;	/* system calls that were not the first instruction of a step */
	size_t in_step;		/* instructions logged by the running step */
	size_t far_break_steps; /* instructions logged at the kept break (0: none) */
	size_t far_break_trace; /* trace bytes then */
};

/* Path of the test program (skips the test when the environment does not name it). */
const char *tr_prog(void);

/*
 * Trace @argv to completion with @opts (format, filter, ...; the callbacks are filled in
 * here).  Skips the test (exit 77) when ptrace is not permitted.  Returns the result of the
 * last tracer call (0 on success).
 */
int tr_run(struct tr_run *run, const struct auxcap_tracer_opts *opts, char *const argv[]);
/* Same, attaching to the running thread @tid instead of starting a command. */
int tr_attach(struct tr_run *run, const struct auxcap_tracer_opts *opts, pid_t tid);
/* Same, adopting @pid, a child waiting before exec on the go pipe @go_fd (test_spawn()). */
int tr_start_child(struct tr_run *run, const struct auxcap_tracer_opts *opts, pid_t pid, int go_fd);
void tr_run_fini(struct tr_run *run);

/* The executable PT_LOAD segment [*start, *end) of the ELF file @path.  Returns 0 or -errno. */
int tr_elf_text(const char *path, uint64_t *start, uint64_t *end);
/* Value and size (@size may be NULL) of symbol @name in the ELF file @path.  Returns 0 or -errno. */
int tr_elf_symbol(const char *path, const char *name, uint64_t *addr, uint64_t *size);

#endif
