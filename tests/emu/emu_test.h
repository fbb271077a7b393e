/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Consumer-side helpers for the emulator tests: open an emulated event, map its rings through
 * the seam the way a capture does (core/event.c for the data ring, aux_offset/aux_size then a
 * second mmap for the AUX area), read records with core/ring.c, and consume AUX bytes with
 * the acquire-head / release-tail protocol of core/barrier.h.
 */
#ifndef AUXCAP_TEST_EMU_H
#define AUXCAP_TEST_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "auxcap/emu.h"
#include "event.h"

#define EMU_TEST_SID                                                             \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU | \
	 PERF_SAMPLE_IDENTIFIER)

struct emu_aux_rec {
	uint64_t offset, size, flags;
};

/* What a pass over the data ring found. */
struct emu_seen {
	unsigned int n_aux;	      /* PERF_RECORD_AUX records */
	struct emu_aux_rec aux[4096]; /* the first ones */
	unsigned int n_itrace;	      /* PERF_RECORD_ITRACE_START */
	uint32_t itrace_pid, itrace_tid;
	unsigned int n_lost;	  /* PERF_RECORD_LOST records */
	uint64_t lost;		  /* sum of their counts */
	uint64_t lost_id;	  /* id of the last one */
	unsigned int by_type[32]; /* records per type */
	uint64_t last_id;	  /* sample_id ID of the last record */
};

struct emu_fixture {
	struct auxcap_emu *emu;
	const struct auxcap_sys *sys;
	int fd;
	struct perf_event_attr attr;
	struct auxcap_mapped_ring mr; /* data ring (owns its mapping) */
	void *aux;		      /* AUX mapping, NULL if none */
	size_t aux_len;		      /* bytes */
	uint64_t aux_tail;	      /* consumer position (free-running) */
	struct emu_seen seen;	      /* accumulated over emu_fixture_drain_records() calls */
};

/* A default attr for emulated PMU @pmu: disabled, sample_id_all with EMU_TEST_SID. */
void emu_test_attr(struct perf_event_attr *attr, enum auxcap_emu_pmu pmu);

/* New emulator (default options unless @opts), event opened with @attr (or the default). */
void emu_fixture_init(struct emu_fixture *f, enum auxcap_emu_pmu pmu,
		      const struct perf_event_attr *attr, const struct auxcap_emu_opts *opts);
/* The same for an event on task @pid (0 = self, -1 = any) and @cpu (-1 = any). */
void emu_fixture_init_on(struct emu_fixture *f, enum auxcap_emu_pmu pmu,
			 const struct perf_event_attr *attr, const struct auxcap_emu_opts *opts,
			 pid_t pid, int cpu);
/* Map @data_pages of data ring and @aux_pages of AUX area (read-only if @aux_overwrite). */
void emu_fixture_map(struct emu_fixture *f, size_t data_pages, size_t aux_pages,
		     bool aux_overwrite);
void emu_fixture_fini(struct emu_fixture *f);

/* Read every record published so far into f->seen; returns how many were read. */
unsigned int emu_fixture_drain_records(struct emu_fixture *f);
/* Copy the AUX bytes published since the last call into @out (at most @max, which must
 * cover them); release the tail.  Returns the byte count. */
size_t emu_fixture_consume_aux(struct emu_fixture *f, unsigned char *out, size_t max);
/* aux_head, acquire. */
uint64_t emu_fixture_aux_head(const struct emu_fixture *f);
/* poll() the event through the seam without waiting: 1 if POLLIN was reported. */
int emu_fixture_poll(struct emu_fixture *f);
/* Fill @buf with a deterministic pattern depending on @seed and position. */
void emu_test_pattern(unsigned char *buf, size_t len, uint64_t start, uint32_t seed);

#endif
