/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Synthesized perf.data captures for the decode stage's tests and benchmark: an AUX event
 * (evsel 0) and a cpu-clock counter (evsel 1), both with sample_type IDENTIFIER | IP | TID |
 * TIME | CPU | PERIOD and sample_id_all, written with core's perf.data writer.  Records are
 * written in the order the caller gives (as rings would, out of time order across CPUs if
 * the caller says so); cb_round() writes FINISHED_ROUND.
 */
#ifndef AUXCAP_TEST_CAPTURE_BUILDER_H
#define AUXCAP_TEST_CAPTURE_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auxcap/perf_data.h"

#define CB_AUX_ID 1	/* sample id of evsel 0, the AUX event */
#define CB_CLOCK_ID 2	/* sample id of evsel 1, cpu-clock */

struct cb;

/* Create @path with the two attrs; @aux_name names evsel 0 ("intel_pt//u"), @aux_type is its
 * attr.type.  Returns NULL on failure (errno set). */
struct cb *cb_open(const char *path, const char *aux_name, uint32_t aux_type);
/* cb_open() whose AUX event has attr.exclude_kernel = @exclude_kernel (user code only). */
struct cb *cb_open_ex(const char *path, const char *aux_name, uint32_t aux_type,
		      bool exclude_kernel);
/* Finish the file.  Returns 0 or a negative errno. */
int cb_close(struct cb *b);

void cb_comm(struct cb *b, uint32_t pid, uint32_t tid, const char *comm, bool exec,
	     uint64_t time, uint32_t cpu);
/* A FORK: task @pid/@tid made by @ppid/@ptid (the record's id is the parent's, as the
 * kernel writes it from the parent). */
void cb_fork(struct cb *b, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
	     uint64_t time, uint32_t cpu);
void cb_mmap2(struct cb *b, uint32_t pid, uint32_t tid, uint64_t addr, uint64_t len,
	      uint64_t pgoff, uint32_t prot, const char *path, uint64_t time, uint32_t cpu);
/* The kernel's mapping as perf record writes it: PERF_RECORD_MMAP, misc KERNEL, pid -1,
 * "[kernel.kallsyms]_text" at @start with pgoff @start (_text). */
void cb_mmap_kernel(struct cb *b, uint64_t start, uint64_t len, uint64_t time);
/* A HEADER_BUILD_ID entry (cpumode @cpumode, pid -1) for @filename. */
void cb_build_id(struct cb *b, uint16_t cpumode, const uint8_t *id, size_t size,
		 const char *filename);
void cb_itrace_start(struct cb *b, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu);
/* PERF_RECORD_SWITCH_CPU_WIDE on @cpu: @out, the task @pid/@tid, the other @np_pid/@np_tid. */
void cb_switch(struct cb *b, bool out, uint32_t pid, uint32_t tid, uint32_t np_pid,
	       uint32_t np_tid, uint64_t time, uint32_t cpu);
/* PERF_RECORD_SWITCH (a followed task's own, as per-task side-band has it) on @cpu: @out,
 * the task @pid/@tid. */
void cb_switch_task(struct cb *b, bool out, uint32_t pid, uint32_t tid, uint64_t time,
		    uint32_t cpu);
/* A SAMPLE of evsel @evsel (0 or 1). */
void cb_sample(struct cb *b, int evsel, uint64_t ip, uint32_t pid, uint32_t tid, uint64_t time,
	       uint32_t cpu, uint64_t period);
void cb_aux(struct cb *b, uint64_t offset, uint64_t size, uint64_t flags, uint32_t pid,
	    uint32_t tid, uint64_t time, uint32_t cpu);
void cb_lost(struct cb *b, uint64_t lost, uint64_t time, uint32_t cpu);
void cb_lost_samples(struct cb *b, uint64_t lost, uint64_t time, uint32_t cpu);
/* PERF_RECORD_AUXTRACE_ERROR (type 1, fmt 1) with @msg (at most 63 bytes kept). */
void cb_auxtrace_error(struct cb *b, uint32_t code, uint64_t ip, const char *msg, uint32_t pid,
		       uint32_t tid, uint64_t time, uint32_t cpu);
void cb_auxtrace(struct cb *b, const void *data, size_t len, uint64_t offset, uint32_t idx,
		 uint32_t tid, uint32_t cpu);
void cb_auxtrace_info(struct cb *b, uint32_t type, const uint64_t *words, size_t nr);
void cb_time_conv(struct cb *b, const struct auxcap_perf_time_conv *tc);
void cb_round(struct cb *b);
/* The first write error (sticky), 0 if none. */
int cb_error(const struct cb *b);

#endif
