/* SPDX-License-Identifier: BSD-3-Clause */
/* Internals of the output writers (decode/out_*.c). */
#ifndef AUXCAP_OUT_INT_H
#define AUXCAP_OUT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "auxcap/decode_out.h"
#include "auxcap/tracepoint.h"

struct auxcap_out;

struct out_ops {
	int (*init)(struct auxcap_out *w);
	int (*event)(struct auxcap_out *w, const struct auxcap_decode_event *ev);
	int (*finish)(struct auxcap_out *w);
	void (*fini)(struct auxcap_out *w);
};

struct auxcap_out {
	FILE *f;		/* borrowed */
	struct auxcap_decode *d; /* borrowed */
	struct auxcap_out_opts opts;
	const struct out_ops *ops;
	void *priv; /* the format's state, owned */
	struct out_tmap *period; /* per thread: struct insn_period (opts.insn_period*) */
};

extern const struct out_ops auxcap_out_text_ops;
extern const struct out_ops auxcap_out_json_ops;
extern const struct out_ops auxcap_out_perfetto_ops;
extern const struct out_ops auxcap_out_folded_ops;

/* "sym+0xoff" (@with_off) or "sym" for @addr of @pid into @buf; "[unknown]" if no symbol. */
const char *out_sym(struct auxcap_out *w, int32_t pid, uint64_t addr, bool with_off, char *buf,
		    size_t n);
/* out_sym() of an address as mapped at perf time @time (named after the stream moved on). */
const char *out_sym_at(struct auxcap_out *w, int32_t pid, uint64_t addr, uint64_t time, char *buf,
		       size_t n);
/* "file.c:12" (the file's last path component) of @addr of @pid into @buf, or NULL. */
const char *out_srcline(struct auxcap_out *w, int32_t pid, uint64_t addr, char *buf, size_t n);
/* With opts.inlines, the functions inlined at @addr (auxcap_decode_inlines()) into @fr: the
 * frames, innermost first, the last the function the code is in; 0 without inlining there or
 * without the option. */
int out_inlines(struct auxcap_out *w, int32_t pid, uint64_t addr,
		struct auxcap_decode_inline fr[AUXCAP_DECODE_INLINE_MAX]);
/* An inlined frame's name, "[unknown]" for one without a name. */
const char *out_inline_name(const struct auxcap_decode_inline *f);

/* Short name of a branch type: "call", "return", "jmp", "jcc", "syscall", ... */
const char *out_branch_kind(enum auxcap_branch_type t);

/* The most callchain frames of a sample an output looks at (the kernel's default limit,
 * perf_event_max_stack, is 127). */
#define OUT_MAX_CALLCHAIN 256

/* Write @s as a JSON string (with quotes) to @f. */
void out_json_str(FILE *f, const char *s);

/* ,"@key":{"name":value,...}: a tracepoint sample's fields (integers as numbers, the rest as
 * strings; the kernel's common_* ones left out), or ,"@key":null when @ev has none
 * (@null_if_none), else nothing. */
void out_json_tp_fields(struct auxcap_out *w, const struct auxcap_decode_event *ev,
			const char *key, bool null_if_none);

/* Bytes of a tracepoint sample's text by its print format that the writers keep (text, JSON,
 * Perfetto alike). */
#define OUT_TP_TEXT_MAX 1024

/* ,"@key":"..." a tracepoint sample's text by its print format (auxcap_decode_tp_print()), or
 * ,"@key":null when there is none (@null_if_none), else nothing. */
void out_json_tp_trace(struct auxcap_out *w, const struct auxcap_decode_event *ev,
		       const char *key, bool null_if_none);

/* Name of the event of a record (EVENT_DESC), or "event<N>". */
const char *out_evsel_name(const struct auxcap_perf_evsel *es, char *buf, size_t n);

/* Per-thread integer state of a writer, found by tid (small open-addressing table). */
struct out_tmap;
int out_tmap_new(struct out_tmap **ret, size_t value_size);
void out_tmap_free(struct out_tmap *m);
/* The value of @key (created zeroed; *@ret_new says so), NULL if out of memory. */
void *out_tmap_get(struct out_tmap *m, int64_t key, bool *ret_new);
/* Calls @fn for every value. */
void out_tmap_each(struct out_tmap *m, void (*fn)(void *arg, int64_t key, void *value), void *arg);

#endif /* AUXCAP_OUT_INT_H */
