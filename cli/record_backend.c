/* SPDX-License-Identifier: BSD-3-Clause */
/* auxcap record: the AUX event's backend wired into the capture (see record_backend.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auxcap/log.h"
#include "auxcap/timeconv.h"
#include "backend_record.h"
#include "cli.h"
#include "record_backend.h"

/*
 * Hardware timestamps (TSC) must convert to the time of every other record.  When the control
 * page exports the conversion (cap_user_time_zero: a stable TSC that is the kernel's
 * sched_clock), the events keep perf's clock and the page's values are written.  Otherwise
 * (VMs, the emulated PMUs) every event is opened on CLOCK_MONOTONIC_RAW (use_clockid) and the
 * counter is calibrated against it at capture time (record_backend_write_info()).
 * MONOTONIC_RAW rather than MONOTONIC: it is not slewed by NTP, so the counter maps to it
 * linearly over the whole capture.
 */
static int choose_clock(struct record_backend *rb, const struct record_backend_params *p)
{
	struct auxcap_perf_time_conv tc;
	int r;

	r = auxcap_time_conv_probe(p->sys, &rb->attr.attr, &tc);
	if (r == 0 && tc.cap_user_time_zero)
		return 0;
	if (r < 0)
		auxcap_log(AUXCAP_LOG_INFO,
			   "cannot read the time conversion of %s's control page (%s); "
			   "calibrating the counter against CLOCK_MONOTONIC_RAW",
			   rb->pmu->name, strerror(-r));
	if (auxcap_counter_read(&(uint64_t){ 0 }) < 0)
		return 0; /* no counter to convert on this architecture: nothing to calibrate */
	rb->use_clockid = true;
	rb->clockid = CLOCK_MONOTONIC_RAW;
	return 0;
}

int record_backend_setup(struct record_backend *rb, const struct auxcap_event_spec *spec,
			 const struct record_backend_params *p)
{
	struct auxcap_record_ctx *ctx = &rb->ctx;
	const struct auxcap_pmu *pmu = NULL;
	long ncpu;
	int r;

	memset(rb, 0, sizeof(*rb));
	rb->attr = spec->attr;
	if (p->pmus)
		pmu = auxcap_pmu_list_find(p->pmus, spec->pmu);
	if (!pmu) {
		r = auxcap_pmu_new(NULL, spec->pmu, &rb->pmu_owned);
		if (r < 0) {
			cli_err("cannot read PMU '%s' from sysfs (%s/%s): %s", spec->pmu,
				AUXCAP_PMU_SYSFS_ROOT, spec->pmu, strerror(-r));
			return r;
		}
		pmu = rb->pmu_owned;
	}
	rb->pmu = pmu;
	rb->be = auxcap_backend_for_pmu(spec->pmu, pmu);
	if (!rb->be) {
		if (p->filter) {
			cli_err("--filter: no backend for %s in this build to resolve it", spec->pmu);
			return -EOPNOTSUPP;
		}
		return 0; /* an AUX PMU without a backend (cs_etm): recorded as it is */
	}

	ctx->sz = sizeof(*ctx);
	ctx->pmu = pmu;
	for (int w = 0; w < AUXCAP_ATTR_WORD_MAX; w++)
		ctx->user_set[w] = auxcap_event_spec_user_set(spec, (enum auxcap_attr_word)w);
	ctx->snapshot = p->snapshot;
	ctx->aux_pages = p->aux_pages ? p->aux_pages : 1024; /* the session's default */
	ctx->snapshot_size = p->snapshot_size;
	ctx->per_cpu = p->per_cpu;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ctx->nr_cpus = ncpu > 0 ? (size_t)ncpu : 1;
	ctx->have_sched_switch = p->sideband;
	ctx->cpu_wide = p->per_cpu && p->cpu_wide;
	ctx->errbuf = rb->errbuf;
	ctx->errlen = sizeof(rb->errbuf);
	if (p->filter) {
		/* the backend resolves the user's text; its result is what the kernel and the
		 * other ops see */
		ctx->filter = p->filter;
		r = auxcap_backend_addr_filter(rb->be, ctx, rb->filter, sizeof(rb->filter));
		if (r < 0) {
			cli_err("--filter '%s': %s", p->filter,
				rb->errbuf[0] ? rb->errbuf
					      : r == -ENOSPC ? "too long" : strerror(-r));
			return r;
		}
		ctx->filter = rb->filter;
		auxcap_log(AUXCAP_LOG_INFO, "address filter: %s", rb->filter);
	}

	r = auxcap_backend_record_options(rb->be, ctx, &rb->attr);
	if (r < 0) {
		cli_err("%s: %s", spec->name, rb->errbuf);
		return r;
	}
	return choose_clock(rb, p);
}

void record_backend_session(struct record_backend *rb, struct auxcap_session_event *aux_ev,
			    struct auxcap_session_opts *so)
{
	/* The session reads a struct auxcap_attr, config3 included, when the size says so. */
	rb->attr.attr.size = AUXCAP_ATTR_SIZE_VER8;
	aux_ev->attr = &rb->attr.attr;
	if (rb->be) {
		so->find_snapshot = rb->be->find_snapshot;
		so->reference = rb->be->reference;
		so->aux_alignment = rb->be->alignment;
		/* a sampled trace's data addresses are named by the mappings they fall in */
		so->data_mmaps = (rb->be->flags & AUXCAP_BACKEND_F_SAMPLED) != 0;
	}
	so->use_clockid = rb->use_clockid;
	so->clockid = rb->clockid;
	so->aux_filter = rb->filter[0] ? rb->filter : NULL;
}

int record_backend_write_info(struct record_backend *rb, struct auxcap_session *s,
			      struct auxcap_perf_writer *w)
{
	int r;

	if (rb->use_clockid) {
		r = auxcap_time_conv_calibrate(rb->clockid, 0, &rb->tc);
		if (r < 0) {
			cli_err("cannot calibrate the %s counter against clock %d: %s",
				rb->pmu->name, rb->clockid, strerror(-r));
			return r;
		}
		rb->ctx.time_conv = &rb->tc;
		/* perf record -k writes these two features for a capture on another clock. */
		(void)auxcap_perf_writer_set_clock(w, rb->clockid);
	} else {
		r = auxcap_session_time_conv(s, &rb->tc);
		if (r == 0 && rb->tc.cap_user_time_zero)
			rb->ctx.time_conv = &rb->tc;
	}
	rb->ctx.sz = sizeof(rb->ctx);
	r = auxcap_backend_write_info(rb->be, &rb->ctx, &rb->attr, w);
	if (r < 0) {
		if (rb->errbuf[0])
			cli_err("%s: %s", rb->be ? rb->be->name : "record", rb->errbuf);
		else
			cli_err("cannot write the trace metadata (TIME_CONV, AUXTRACE_INFO): %s",
				strerror(-r));
	}
	return r;
}

void record_backend_fini(struct record_backend *rb)
{
	auxcap_pmu_free(rb->pmu_owned);
	rb->pmu_owned = NULL;
	rb->pmu = NULL;
}
