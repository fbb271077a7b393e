/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap record: the AUX event's backend (auxcap/backend.h) wired into a capture, the same
 * way for every backend and for real and emulated PMUs.
 *
 *	record_backend_setup()       after the events are parsed and the targets known: find the
 *	                             backend and the PMU description, complete the AUX attr
 *	                             (recording_options), choose the clock (time conversion)
 *	record_backend_session()     what the session needs: attr, find_snapshot, reference, clock
 *	record_backend_write_info()  after the session opened: TIME_CONV, AUXTRACE_INFO
 */
#ifndef AUXCAP_CLI_RECORD_BACKEND_H
#define AUXCAP_CLI_RECORD_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "auxcap/backend.h"
#include "auxcap/perf_data.h"
#include "auxcap/pmu.h"
#include "auxcap/session.h"
#include "evparse.h"

/** What the recorder knows about the capture when it sets the backend up. */
struct record_backend_params {
	const struct auxcap_pmu_list *pmus; /* emulated PMUs looked up first, or NULL */
	const struct auxcap_sys *sys;	    /* the seam the events are opened through (NULL:
					       the kernel) */
	bool snapshot;			    /* -S */
	size_t aux_pages;		    /* -m ,AUX (0: the session's default) */
	size_t snapshot_size;		    /* bytes per snapshot, 0: the whole buffer */
	bool per_cpu;			    /* per-CPU event sets */
	bool cpu_wide;			    /* ... counting every task (-a, -C) */
	bool sideband;			    /* the session adds the side-band dummy (with
					       context_switch when there is an AUX event) */
	const char *filter;		    /* --filter text, or NULL */
};

struct record_backend {
	const struct auxcap_backend_ops *be; /* borrowed from the registry; NULL: no backend */
	struct auxcap_pmu *pmu_owned;	     /* read from sysfs, owned */
	const struct auxcap_pmu *pmu;	     /* pmu_owned, or an emulated PMU (borrowed) */
	struct auxcap_record_ctx ctx;	     /* what the backend ops are given */
	struct auxcap_attr attr;	     /* the AUX event's attr, completed */
	struct auxcap_perf_time_conv tc;     /* the conversion written to the file */
	char filter[8192];		     /* the address filter for the kernel, "" for none */
	bool use_clockid;		     /* events are opened on @clockid */
	int clockid;
	char errbuf[512]; /* the backend's one-line reasons */
};

/**
 * Set @rb up for the AUX event @spec (borrowed, must outlive @rb).  Prints a one-line error
 * and returns a negative errno when the backend refuses the event.
 */
int record_backend_setup(struct record_backend *rb, const struct auxcap_event_spec *spec,
			 const struct record_backend_params *p);

/** Fill the session options that come from the backend (attr, snapshot, reference, clock). */
void record_backend_session(struct record_backend *rb, struct auxcap_session_event *aux_ev,
			    struct auxcap_session_opts *so);

/**
 * After auxcap_session_open(): read the time conversion, write TIME_CONV and AUXTRACE_INFO.
 * Prints a one-line error on failure.
 */
int record_backend_write_info(struct record_backend *rb, struct auxcap_session *s,
			      struct auxcap_perf_writer *w);

/** Release what @rb owns (NULL-safe, idempotent). */
void record_backend_fini(struct record_backend *rb);

#endif /* AUXCAP_CLI_RECORD_BACKEND_H */
