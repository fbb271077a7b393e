/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf-compatible event strings -> perf_event_attr.
 *
 * Accepted forms (perf's syntax):
 *
 *	PMU/TERM,TERM=VALUE,.../MODS     intel_pt/cyc,mtc_period=3,noretcomp=0/u   intel_pt//k
 *	                                 arm_spe_0/ts_enable=1,load_filter=1/       msr/tsc/
 *	SYMBOL[:MODS]                    cycles, instructions, cpu-clock:u, task-clock,
 *	SYMBOL/TERMS/[MODS]              page-faults, context-switches, dummy, cpu-clock/period=1000/
 *	SYS:NAME[:MODS]                  raw_syscalls:sys_enter (id from tracefs)
 *	mem:ADDR[/LEN][:ACCESS][:MODS]   mem:0x1000/8:w  (ACCESS: r, w, x combinations; default rw)
 *	rHEX[:MODS]                      r1a8: PERF_TYPE_RAW with config 0x1a8
 *
 * TERM is a format term of the PMU (sysfs format/<term>; a bare term means 1), an event alias
 * of the PMU (sysfs events/<alias>, expanded), or a generic term: config=, config1=, config2=,
 * config3=, period=, freq=, name=.  VALUE is decimal or 0x-hex.  MODS are u (user), k
 * (kernel), h (hypervisor) -- naming any of them excludes the others -- and p, pp, ppp
 * (attr.precise_ip 1..3).  Terms apply left to right, so a later term overrides an earlier one.
 *
 * The parser fills only what the string says: type, config words, sample_period/freq,
 * exclude_*, precise_ip and the breakpoint fields (plus sample_period = 1 for tracepoints and
 * breakpoints, as perf does).  Backend defaults (e.g. perf's implicit intel_pt config) are the
 * backend's business: it finds out what the user set through the kept terms.
 *
 * Errors never print: they come back as a negative errno plus a one-line message in a
 * caller-provided struct auxcap_evparse_error.
 */
#ifndef AUXCAP_EVPARSE_H
#define AUXCAP_EVPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auxcap/pmu.h"

/** What a parsed term did. */
enum auxcap_evterm_kind {
	AUXCAP_EVTERM_FORMAT = 0, /* a format/ field of the PMU (@format) */
	AUXCAP_EVTERM_CONFIG,	  /* config=, config1=, config2=, config3= (@word) */
	AUXCAP_EVTERM_PERIOD,	  /* period=: attr.sample_period */
	AUXCAP_EVTERM_FREQ,	  /* freq=: attr.freq = 1, attr.sample_freq */
	AUXCAP_EVTERM_NAME,	  /* name=: @str */
};

/** One term, as the user wrote it (aliases are stored expanded). */
struct auxcap_evterm {
	enum auxcap_evterm_kind kind; /* what it set */
	char *name;		      /* owned: term name, e.g. "mtc_period" */
	uint64_t value;		      /* value; 1 for a bare boolean term; 0 for name= */
	bool has_value;		      /* false for a bare term ("cyc") */
	char *str;		      /* owned: the text of name=, else NULL */
	enum auxcap_attr_word word;   /* config word written (FORMAT and CONFIG) */
	uint64_t mask;		      /* bits of @word written (FORMAT and CONFIG) */
	char *alias;		      /* owned: the events/ alias it came from, else NULL */
};

/** The kind of event a string named. */
enum auxcap_event_kind {
	AUXCAP_EVENT_PMU = 0,	 /* a sysfs PMU: "intel_pt//" */
	AUXCAP_EVENT_HARDWARE,	 /* PERF_TYPE_HARDWARE symbol: "cycles" */
	AUXCAP_EVENT_SOFTWARE,	 /* PERF_TYPE_SOFTWARE symbol: "cpu-clock" */
	AUXCAP_EVENT_TRACEPOINT, /* "sys:name" */
	AUXCAP_EVENT_BREAKPOINT, /* "mem:ADDR" */
	AUXCAP_EVENT_RAW,	 /* PERF_TYPE_RAW "rNNN" (hex event code) */
};

/** A parsed event string. */
struct auxcap_event_spec {
	struct auxcap_attr attr;     /* the attr (size not set: see auxcap_attr_size()) */
	enum auxcap_event_kind kind; /* which form the string had */
	char *pmu;		     /* owned: PMU name ("intel_pt", "software", "hardware",
					"tracepoint", "breakpoint") */
	char *name;		     /* owned: name= if given, else the input string */
	char *event;		     /* owned: symbol or "sys:name" or "mem:..." part, else NULL */
	char mods[16];		     /* modifiers as written ("u", "pp"), NUL-terminated */
	size_t nr_terms;	     /* entries in @terms */
	struct auxcap_evterm *terms; /* owned, in the order given */
};

/** Where the parser looks things up.  Zero-fill, set .sz = sizeof. */
struct auxcap_evparse_opts {
	size_t sz;			    /* sizeof(struct auxcap_evparse_opts) */
	const char *sysfs_root;		    /* borrowed; NULL: AUXCAP_PMU_SYSFS_ROOT */
	const char *tracefs_root;	    /* borrowed; NULL: /sys/kernel/tracing (mounted
					       there when absent and we are root), then
					       /sys/kernel/debug/tracing */
	const struct auxcap_pmu_list *pmus; /* borrowed, may be NULL: PMUs consulted before
					       sysfs (e.g. emulated ones) */
};

/** Why a parse failed. */
struct auxcap_evparse_error {
	int err;	/* the negative errno returned */
	size_t pos;	/* byte offset of the offending part in the input */
	char msg[1024]; /* one line naming the cause and the fix, no trailing newline */
};

/**
 * Parse event string @str.
 *
 * On success *@ret is owned by the caller; free it with auxcap_event_spec_free().  On failure
 * *@ret is untouched and, when @err is not NULL, @err describes the problem.
 *
 * Returns 0 on success.
 * Returns -EINVAL if @str or @ret is NULL, @opts->sz is too small, or the string is malformed:
 * empty, a control character (messages quote the input on one line), unterminated
 * "pmu/terms", unknown term (the message lists the valid ones), bad value, bad modifier, bad
 * breakpoint.
 * Returns -E2BIG if @opts is larger than this build knows and the extra bytes are not zero.
 * Returns -ENOENT if the PMU, symbol or tracepoint does not exist (the message suggests
 * `auxcap list`, and `--emulate` for intel_pt, intel_bts and arm_spe_N).
 * Returns -ERANGE if a value does not fit in its field.
 * Returns -EBADMSG if the PMU's sysfs files or the tracepoint id are malformed.
 * Returns -ENOMEM if memory runs out, or the errno of reading sysfs/tracefs (-EACCES, ...).
 */
int auxcap_event_spec_parse(const char *str, const struct auxcap_evparse_opts *opts,
			    struct auxcap_event_spec **ret, struct auxcap_evparse_error *err);

/** Free @spec (NULL-safe). */
void auxcap_event_spec_free(struct auxcap_event_spec *spec);

/** The last term called @name in @spec, or NULL.  Borrowed from @spec. */
const struct auxcap_evterm *auxcap_event_spec_term(const struct auxcap_event_spec *spec,
						   const char *name);

/**
 * The bits of config word @word that @spec's terms set explicitly: every format term, alias
 * term and config=/config1=/... term the user wrote, whatever its value (so "tsc=0" counts as
 * setting the tsc bit).  A backend applies its defaults only to the other bits.
 *
 * Returns the mask (0 if @spec is NULL, @word is invalid, or no term touched the word).
 */
uint64_t auxcap_event_spec_user_set(const struct auxcap_event_spec *spec,
				    enum auxcap_attr_word word);

/**
 * Split a perf -e list ("intel_pt/cyc,mtc/u,cycles:u,mem:0x1000/8:w") into single event
 * strings at the commas that are not inside a PMU event's /terms/.
 *
 * On success *@ret_events is an owned array of *@ret_nr owned strings; free it with
 * auxcap_event_list_free().  Nothing is parsed: pass each string to auxcap_event_spec_parse().
 * Returns 0 on success (@ret_* untouched on failure).
 * Returns -EINVAL if an argument is NULL or the list has an empty element ("a,,b", "", "a,").
 * Returns -ENOMEM if memory runs out.
 */
int auxcap_event_list_split(const char *str, char ***ret_events, size_t *ret_nr);

/** Free what auxcap_event_list_split() returned (NULL-safe). */
void auxcap_event_list_free(char **events, size_t nr);

/** A named hardware or software event. */
struct auxcap_event_symbol {
	const char *name;  /* "cpu-clock" */
	uint32_t type;	   /* PERF_TYPE_HARDWARE or PERF_TYPE_SOFTWARE */
	uint64_t config;   /* PERF_COUNT_HW_* / PERF_COUNT_SW_* */
	const char *alias; /* the other spelling ("cpu-cycles" for "cycles"), or NULL */
};

/** Symbol number @i (0-based), or NULL past the end: iterate for `auxcap list`. */
const struct auxcap_event_symbol *auxcap_event_symbol_get(size_t i);

#endif /* AUXCAP_EVPARSE_H */
