/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap/decode_out.h: writers of a decode session's merged stream (auxcap/decode.h).
 *
 *   text      perf-script-like lines (README "Decode"): branches, calls/returns with depth,
 *             instructions with disassembly, samples with their trace context, gaps and
 *             losses, optionally the side-band records
 *   json      JSON lines, one object per event (docs/decode-json.md,
 *             docs/decode-json.schema.json)
 *   perfetto  Chrome/Perfetto trace-event JSON: per-thread call slices from the trace's
 *             calls and returns, samples as instant events, gaps as "gap" slices, losses as
 *             global instant events (opens in ui.perfetto.dev and chrome://tracing)
 *   folded    "a;b;c N" lines for flamegraph.pl: per reconstructed stack, the number of
 *             samples (captures with counter samples), else the trace time in ns, else
 *             (trace without time) the instructions; samples without trace are
 *             "[no trace]", lost trace time "[gap]"
 *
 *	auxcap_out_new(stdout, d, &opts, &w);
 *	while (auxcap_decode_next(d, &ev) == 1)
 *		auxcap_out_event(w, ev);
 *	auxcap_out_finish(w);
 *	auxcap_out_free(w);
 *
 * Writers write to a caller's FILE (they never print anything else) and return -EIO when a
 * write fails.
 */
#ifndef AUXCAP_DECODE_OUT_H
#define AUXCAP_DECODE_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "auxcap/decode.h"

enum auxcap_out_format {
	AUXCAP_OUT_TEXT = 0,
	AUXCAP_OUT_JSON,
	AUXCAP_OUT_PERFETTO,
	AUXCAP_OUT_FOLDED,
};

enum auxcap_out_weight {
	AUXCAP_OUT_WEIGHT_AUTO = 0, /* samples if the capture had any, else time */
	AUXCAP_OUT_WEIGHT_SAMPLES,
	AUXCAP_OUT_WEIGHT_TIME,	 /* ns of trace */
	AUXCAP_OUT_WEIGHT_INSNS, /* instructions traced */
};

/** Writer options; caller-owned, copied.  Zero-fill, then set @sz. */
struct auxcap_out_opts {
	size_t sz; /* sizeof(struct auxcap_out_opts) */
	enum auxcap_out_format format;
	bool branches;	/* text, json: branch events (--itrace=b) */
	bool insns;	/* text, json: instructions (--itrace=i) */
	bool calls;	/* text: calls and returns with depth (--itrace=c) */
	/* text, json: of the INSN events, one in every @insn_period of its thread (perf's
	 * --itrace=iNi), or with @insn_period_ns the first of each span of that many ns of
	 * perf time (--itrace=i10us); 0 and 0: every one */
	uint64_t insn_period;
	uint64_t insn_period_ns;
	bool sideband;	/* text: side-band records too (json always has them) */
	bool func_time; /* text: per-function trace time of each sample */
	bool srcline;	/* text, json: the source file and line of samples and instructions
			 * (auxcap_decode_srcline()) */
	enum auxcap_out_weight weight; /* folded */
	/* text, json, folded, perfetto: functions inlined at the addresses named
	 * (auxcap_decode_inlines(), perf's --inline): samples' stacks (and, in text and json,
	 * callchains) with their inlined frames; text and json: samples and instructions with
	 * the chain */
	bool inlines;
};

struct auxcap_out;

/**
 * A writer of @d's events to @f (both borrowed; they must outlive the writer).
 * Writes a header when the format has one.
 * Returns -EINVAL for a bad argument, -ENOMEM, -EIO.
 */
int auxcap_out_new(FILE *f, struct auxcap_decode *d, const struct auxcap_out_opts *opts,
		   struct auxcap_out **ret);

/** Write @ev.  Returns 0, or -EIO if writing failed, -ENOMEM. */
int auxcap_out_event(struct auxcap_out *w, const struct auxcap_decode_event *ev);

/** Write what comes at the end (closing brackets, folded totals).  Returns 0 or -EIO. */
int auxcap_out_finish(struct auxcap_out *w);

/**
 * Write @s to @f as a JSON string (valid UTF-8 kept; quotes, backslashes, control characters
 * and stray bytes escaped), or null for NULL: the writers' own rule, for other JSON output.
 */
void auxcap_out_json_str(FILE *f, const char *s);

/**
 * Write the inline chain @fr (@n frames, auxcap_decode_inlines()) to @f as the writers' JSON
 * "inline" value: [{"func","file","line"},...], or null when @n is below 2 (nothing inlined).
 */
void auxcap_out_json_inlines(FILE *f, const struct auxcap_decode_inline *fr, size_t n);

/** Free @w (NULL is a no-op); does not close the FILE. */
void auxcap_out_free(struct auxcap_out *w);

/** "text", "json", "perfetto", "folded" -> @ret.  Returns 0 or -EINVAL. */
int auxcap_out_parse_format(const char *name, enum auxcap_out_format *ret);

#endif /* AUXCAP_DECODE_OUT_H */
