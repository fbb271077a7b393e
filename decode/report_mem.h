/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The report's memory figures (auxcap_report_get_mem() and what goes with it): sampled data
 * accesses summed, by function and by cache line.  Internal to the report.
 *
 * Functions are the report's own, by index; mem_finish() turns the indexes into the report's
 * function pointers once its table no longer moves.  Memory grows with the functions met, the
 * cache lines met (at most AUXCAP_REPORT_MEM_LINES_MAX) and the data objects met (at most
 * AUXCAP_REPORT_MEM_OBJECTS_MAX), not with the trace.
 */
#ifndef AUXCAP_DECODE_REPORT_MEM_H
#define AUXCAP_DECODE_REPORT_MEM_H

#include <stdbool.h>
#include <stdint.h>

#include "auxcap/backend.h"
#include "auxcap/decode_report.h"

struct rmem;

/* A new set of figures; @detail: by function and by line too.  NULL on ENOMEM. */
struct rmem *mem_new(bool detail);

/* The data object an access is in, as the report found it (auxcap_report_mem_object). */
struct mem_object {
	enum auxcap_report_mem_object_kind kind;
	uint64_t key;		/* with @kind and the pid, tells objects apart */
	uint64_t addr;		/* auxcap_report_mem_object.use.addr */
	const char *name, *dso; /* borrowed from the decode */
};

/* Count the data access of trace sample @te (its mem not 0) of thread @tid of process @pid
 * at perf time @time, made by function @func (the report's index; UINT32_MAX: none), in
 * data object @obj (NULL: none looked up).  0 or -ENOMEM. */
int mem_add(struct rmem *m, const struct auxcap_trace_event *te, int32_t pid, int32_t tid,
	    uint64_t time, uint32_t func, const struct mem_object *obj);

/* Resolve function indexes with @func_at and sort.  0 or -ENOMEM. */
int mem_finish(struct rmem *m,
	       const struct auxcap_report_func *(*func_at)(void *arg, uint32_t func), void *arg);

const struct auxcap_report_mem *mem_total(const struct rmem *m);
const struct auxcap_report_mem_sources *mem_sources(const struct rmem *m);
size_t mem_nr_funcs(const struct rmem *m);
const struct auxcap_report_mem_func *mem_func(const struct rmem *m, size_t i);
size_t mem_nr_lines(const struct rmem *m);
const struct auxcap_report_mem_line *mem_line(const struct rmem *m, size_t i);
uint64_t mem_untracked(const struct rmem *m);
size_t mem_nr_objects(const struct rmem *m);
const struct auxcap_report_mem_object *mem_object(const struct rmem *m, size_t i);
uint64_t mem_objects_untracked(const struct rmem *m);

void mem_free(struct rmem *m);

#endif /* AUXCAP_DECODE_REPORT_MEM_H */
