/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap record --trigger-on SYMBOL[@BINARY]: find the function, then build the trigger event
 * the session opens (a uprobe on the file, or an execute breakpoint at the run-time address).
 * Every function prints its own one-line error.
 */
#ifndef AUXCAP_CLI_RECORD_TRIGGER_H
#define AUXCAP_CLI_RECORD_TRIGGER_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/perf_event.h>
#include <sys/types.h>

enum cli_trigger_via {
	CLI_TRIGGER_AUTO = 0,	/* a uprobe when the kernel offers them, else a breakpoint */
	CLI_TRIGGER_UPROBE,	/* uprobe only */
	CLI_TRIGGER_BREAKPOINT, /* execute breakpoint only */
};

enum cli_trigger_kind {
	CLI_TRIGGER_UPROBE_PMU,	    /* the uprobe PMU (no tracefs, no clean-up; not inherited) */
	CLI_TRIGGER_UPROBE_TRACEFS, /* a tracefs uprobe_events probe (inherited; removed at fini) */
	CLI_TRIGGER_BP,		    /* an execute breakpoint at the run-time address */
	CLI_TRIGGER_TRACER,	    /* --emulate: the live tracer watches the function (no event) */
};

struct cli_trigger {
	char *symbol;		  /* owned */
	char *binary;		  /* owned: absolute path of the file the symbol is in */
	uint64_t link_addr;	  /* the symbol's link-time address */
	uint64_t file_offset;	  /* where its first byte is in @binary */
	bool dyn;		  /* @binary is PIE or a shared object: run-time address differs */
	enum cli_trigger_via via; /* what the user asked */
	bool inherit;		  /* the session inherits into new tasks */
	enum cli_trigger_kind kind;
	char probe_name[64]; /* CLI_TRIGGER_UPROBE_TRACEFS: "auxcap/<this>" while it exists */
	uint64_t addr;	     /* breakpoint: run-time address */
	struct perf_event_attr attr; /* the trigger event; a uprobe's points at @binary */
	char desc[512];		     /* "foo@/path (uprobe at file offset 0x1139)" for messages */
	/* --trigger-min-duration: set after cli_trigger_resolve(), before cli_trigger_build();
	 * then a snapshot only for a call of at least @min_ns, timed by a return probe too */
	uint64_t min_ns;
	struct perf_event_attr ret_attr; /* the return probe (uprobe kinds) */
	char ret_probe_name[72];	 /* CLI_TRIGGER_UPROBE_TRACEFS: its name while it exists */
};

/** Parse "uprobe", "breakpoint" or "auto".  Returns 0 or -EINVAL (after printing why). */
int cli_trigger_via_parse(const char *s, enum cli_trigger_via *ret);

/**
 * Parse @spec (SYMBOL[@BINARY]), take BINARY or else @default_binary (NULL: none known),
 * read its symbols, find SYMBOL, and decide how to trigger (@via; @inherit: the session
 * follows new tasks, which only a tracefs uprobe or a breakpoint can).
 * Returns 0, or a negative errno after printing the error.
 */
int cli_trigger_resolve(struct cli_trigger *t, const char *spec, const char *default_binary,
			enum cli_trigger_via via, bool inherit);

/**
 * Whether the breakpoint needs a running process to learn its address (PIE or library):
 * then call cli_trigger_build() with the pids of the processes it goes into.
 */
bool cli_trigger_needs_process(const struct cli_trigger *t);

/**
 * Build @t->attr.  A breakpoint in a PIE or library takes its address from the mappings of
 * the @nr_pids tasks @pids (they must agree).  Returns 0 or a negative errno after printing.
 */
int cli_trigger_build(struct cli_trigger *t, const pid_t *pids, size_t nr_pids);

/**
 * --emulate: the command runs under the emulator's live tracer, which single-steps it.  A
 * uprobe patches an int3 over the function's first instruction, which the tracer would read
 * and trace as such: refused.  An execute breakpoint works on the stepped command, but only
 * where its address is known before the exec (not PIE, not a library).  By default the
 * tracer itself watches the function (CLI_TRIGGER_TRACER): no event is opened.
 * Returns 0, or a negative errno after printing why.
 */
int cli_trigger_for_emulate(struct cli_trigger *t);

/** The executable of @argv0 as execvp() finds it, as an absolute path (malloc'd), or NULL. */
char *cli_find_executable(const char *argv0);

/** Remove the tracefs probe if one was made (call after the session is closed); free. */
void cli_trigger_fini(struct cli_trigger *t);

#endif
