/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture session (see auxcap/session.h).
 *
 * Divisions: options and attrs; opening event sets; the drain (full-trace); snapshots (and
 * wrap detection); requests and the loop; side-band of running tasks.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "auxcap/log.h"
#include "auxcap/perf_data.h"
#include "auxcap/pmu.h"
#include "auxcap/proc.h"
#include "auxcap/record.h"
#include "auxcap/session.h"
#include "auxcap/timeconv.h"
#include "aux_ring.h"
#include "event.h"
#include "sink.h"

/*
 * Snapshot overlap trimming (see auxcap/session.h): bytes kept from just before the previous
 * snapshot's head, and the fewest of them that must lie outside the new data to trust a
 * comparison (fewer: assume the buffer wrapped).
 */
#define SNAP_REF_MAX 4096
#define SNAP_REF_MIN 64

struct set {
	pid_t pid;
	int cpu;
	int aux_fd;   /* AUX event, -1 if none */
	int sb_fd;    /* side-band dummy, -1 if none */
	int *fds;     /* other events, -1 where not opened */
	int ring_fd;  /* owner of the main (streamed) data ring */
	int snap_fd;  /* owner of the overwrite data ring (snapshot mode), -1 if none */
	int ev_fd;    /* owner of the others' streamed ring (opts.aux_ring_alone), -1 if none */
	struct auxcap_mapped_ring ring;
	struct auxcap_mapped_ring snap_ring;
	struct auxcap_mapped_ring ev_ring;
	struct auxcap_aux_ring aux;
	bool has_ring, has_snap_ring, has_ev_ring, has_aux;
	bool hup;
	bool aux_reenable; /* TRUNCATED seen: the kernel disabled the AUX event */
	uint64_t aux_old;     /* snapshot mode: end of the previous AUX snapshot (buffer position) */
	uint64_t aux_state;   /* snapshot mode: wrap detection memory */
	uint64_t aux_pos;     /* snapshot mode: stream position (bytes) where the previous
				 snapshot's data ended; chunk offsets are in this space */
	unsigned char *aux_ref; /* snapshot mode: copy of the aux_ref_len bytes before aux_old
				   at the previous snapshot (owned) */
	size_t aux_ref_len;   /* bytes at aux_ref: min(SNAP_REF_MAX, AUX size / 2) */
	bool aux_taken;       /* a snapshot of this AUX buffer was taken */
	uint64_t snap_old;    /* snapshot mode: data_head of the previous ring snapshot */
	uint32_t itrace_tid;  /* tid of the last ITRACE_START in the ring, 0 before one */
	bool snap_taken;
	bool frozen_aux;      /* snapshot mode: AUX event stopped for the pending snapshot */
	bool frozen_ring;     /* snapshot mode: overwrite ring paused for it */
	int *trig_fds;        /* trigger events, -1 where not opened */
	int trig_ring_fd;     /* owner of the trigger ring, -1 if none */
	struct auxcap_mapped_ring trig_ring;
	bool has_trig_ring;
	int poll_fd; /* a set sharing another's rings: one of its events, polled for the
		      * hang-up of its task (-1: the set owns rings, polled through them) */
};

/* The trigger ring of a set: hits are read at once, so a few pages hold any burst. */
#define TRIGGER_RING_PAGES 8
/* ... with trigger_min_ns, every call of the function writes two samples: more room. */
#define TRIGGER_TIMED_RING_PAGES 128

/* opts.trigger_min_ns: a trigger event's sample id, and which trigger it is. */
struct trig_id {
	uint64_t id;
	size_t index;
};

/* A sample of a trigger event, read in a loop pass. */
struct trig_hit {
	uint64_t time;
	uint32_t tid, cpu;
	bool ret; /* the return probe's, else the entry's */
};

/* A thread's calls of the trigger function still open: their entry times, innermost last. */
#define OPEN_CALLS_MAX 64
struct open_calls {
	uint32_t tid;
	bool used;
	uint32_t n;
	uint64_t t[OPEN_CALLS_MAX];
};

/*
 * A pending snapshot request is one atomic word: the source in the top bits, the
 * CLOCK_MONOTONIC time in ns below (2^60 ns is 36 years of uptime); 0 means none.
 */
#define REQ_SOURCE_SHIFT 60
#define REQ_TIME_MASK	 ((1ull << REQ_SOURCE_SHIFT) - 1)

struct auxcap_session {
	struct auxcap_session_opts opts;
	const struct auxcap_sys *sys;
	bool has_aux;
	bool sideband; /* a dummy event carries the side-band (opts.sideband, unless folded) */
	/* Attrs as opened: struct auxcap_attr keeps config3 (see auxcap_session_event). */
	struct auxcap_attr aux_attr;
	struct auxcap_attr sb_attr;
	struct auxcap_attr *attrs; /* nr_events, owned */
	char **names;                  /* nr_events, owned */
	char *aux_name;
	size_t nr_events;
	struct set *sets;
	size_t nr_sets;
	struct perf_event_attr *trig_attrs; /* nr_triggers, owned */
	size_t nr_triggers;
	struct auxcap_sample_layout trig_layout; /* of every trigger sample */
	int wake_fd;
	unsigned int pending; /* enum auxcap_session_request bits, atomic */
	uint64_t req_word;    /* the oldest pending snapshot request (REQ_SOURCE_SHIFT); atomic:
				 written by auxcap_session_request_from() from any thread or
				 handler */
	uint32_t coalesced_pending; /* requests merged into the pending snapshot; atomic */
	pthread_mutex_t hit_lock;   /* orders the request word and hit_tid/hit_cpu between the loop
				       and auxcap_session_request_hit() callers */
	uint32_t hit_tid, hit_cpu;  /* the hit that made the pending request (under hit_lock) */
	uint64_t hit_call_ns;	    /* ... its call's duration, 0 if not a timed call */
	/* opts.trigger_min_ns: which trigger each sample id is, the hits of a loop pass, and
	 * the calls each thread has open (time_calls()) */
	struct trig_id *trig_ids;
	size_t nr_trig_ids;
	struct trig_hit *hits;
	size_t nr_hits, cap_hits;
	struct open_calls *open; /* open addressing by tid */
	size_t open_cap, open_n;
	uint64_t lost_seen; /* trigger_lost when the stacks last started afresh */
	struct auxcap_session_stats stats;
	bool frozen;	    /* session_freeze() ran for the pending snapshot (loop or API) */
	int freeze_result;  /* what it returned */
	uint64_t frozen_ns; /* when it was done */
	unsigned char *snap_buf; /* snapshot mode: records of one ring, oldest first */
	size_t snap_buf_size;
};

/* --- options and attrs ------------------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool pow2_or_zero(size_t v)
{
	return !(v & (v - 1));
}

static uint64_t req_word(enum auxcap_trigger_source source, uint64_t ns)
{
	uint64_t w = (uint64_t)source << REQ_SOURCE_SHIFT | (ns & REQ_TIME_MASK);

	return w ? w : 1;
}

const char *auxcap_trigger_source_name(unsigned int source)
{
	static const char *const names[] = { "api",	 "signal", "hotkey",
					     "fifo",	 "function", "exit" };

	return source < sizeof(names) / sizeof(names[0]) ? names[source] : "?";
}

/*
 * Every event of a session carries the same sample_id fields, with IDENTIFIER, so that records
 * of different events in one ring can be told apart (perf's rule for mixed streams); a session
 * of a single event needs no IDENTIFIER (@ident false).
 */
static void attr_common(const struct auxcap_session_opts *o, struct perf_event_attr *a,
			bool per_cpu, bool ident)
{
	/* (a delayed start: only side-band starts at exec, see session_prepare_attrs()) */
	bool inherit = o->inherit, on_exec = o->enable_on_exec && !o->start_delayed;

	a->size = sizeof(*a);
	a->sample_type |= PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	if (ident)
		a->sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (per_cpu)
		a->sample_type |= PERF_SAMPLE_CPU;
	a->read_format |= PERF_FORMAT_ID;
	a->sample_id_all = 1;
	a->disabled = 1;
	a->inherit = inherit;
	a->enable_on_exec = on_exec;
	if (o->use_clockid) {
		a->use_clockid = 1;
		a->clockid = o->clockid;
	}
}

/*
 * Copy the caller's attr: the bytes up to config3 when its size says it is the attr member of
 * a struct auxcap_attr (AUXCAP_ATTR_SIZE_VER8 or more), else the struct perf_event_attr.
 */
static void attr_copy(struct auxcap_attr *dst, const struct perf_event_attr *src)
{
	memset(dst, 0, sizeof(*dst));
	if (src->size >= AUXCAP_ATTR_SIZE_VER8)
		memcpy(dst->bytes, src, AUXCAP_ATTR_SIZE_VER8);
	else
		dst->attr = *src;
}

/* A pass that moved at least this many bytes is followed by another soon (see the loop). */
#define FLOWING_BYTES 4096

/*
 * Streamed data rings wake the loop at half the ring (the kernel's default) or every
 * RING_WAKEUP_MAX bytes, whichever comes first: a large ring then leaves the loop the time
 * of the rest of the ring to get scheduled, at the wakeup rate perf record has with its
 * default 512 KiB ring (every wakeup is paid by the traced program).  The ring's owner sets
 * it; events whose caller chose a wakeup rule keep theirs.
 */
#define RING_WAKEUP_MAX (256 * 1024)

static void attr_wakeup(struct perf_event_attr *a, size_t data_pages)
{
	size_t bytes = data_pages * (size_t)sysconf(_SC_PAGESIZE);

	if (a->watermark || a->wakeup_events || bytes / 2 <= RING_WAKEUP_MAX)
		return;
	a->watermark = 1;
	a->wakeup_watermark = RING_WAKEUP_MAX;
}

static int session_prepare_attrs(struct auxcap_session *s)
{
	const struct auxcap_session_opts *o = &s->opts;
	bool per_cpu = o->cpus && o->nr_cpus;

	/*
	 * One event streamed alone (no AUX event, full-trace mode) carries the side-band itself,
	 * as with perf record, instead of a dummy event beside it: alone in its ring it needs no
	 * IDENTIFIER, and each sample is 8 bytes shorter (the 3-million-syscall benchmark sees
	 * that as 4% of the traced program's own time).
	 */
	bool fold = o->sideband && !o->aux && !o->snapshot && o->nr_events == 1 && !o->toggled &&
		    !o->start_delayed;

	s->sideband = o->sideband && !fold;
	if (o->aux) {
		s->has_aux = true;
		attr_copy(&s->aux_attr, o->aux->attr);
		attr_common(o, &s->aux_attr.attr, per_cpu, true);
		/*
		 * Full trace: wake at every quarter of the AUX buffer, as perf record does for
		 * Intel PT, not at the kernel's default half.  A driver places its stop point at
		 * the consumer's tail as it knows it at each interrupt; with half-buffer wakeups
		 * the drain of one half must be over before the hardware fills the other, or
		 * the buffer truncates (bench/aux_drain).
		 */
		if (!o->snapshot && !s->aux_attr.attr.aux_watermark)
			s->aux_attr.attr.aux_watermark =
				(uint32_t)((o->aux_pages ? o->aux_pages : 1024) *
					   (size_t)sysconf(_SC_PAGESIZE) / 4);
		s->aux_name = strdup(o->aux->name ? o->aux->name : "aux");
		if (!s->aux_name)
			return -ENOMEM;
	}
	if (s->sideband) {
		struct perf_event_attr *a = &s->sb_attr.attr;

		memset(&s->sb_attr, 0, sizeof(s->sb_attr));
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_DUMMY;
		a->mmap = 1;
		a->mmap2 = 1;
		a->mmap_data = o->data_mmaps;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		a->context_switch = s->has_aux;
		a->exclude_kernel = s->has_aux ? s->aux_attr.attr.exclude_kernel : 0;
		attr_common(o, a, per_cpu, true);
		a->enable_on_exec = o->enable_on_exec;
		attr_wakeup(a, o->data_pages ? o->data_pages : 64);
	}
	s->nr_events = o->nr_events;
	s->attrs = calloc(o->nr_events ? o->nr_events : 1, sizeof(*s->attrs));
	s->names = calloc(o->nr_events ? o->nr_events : 1, sizeof(*s->names));
	if (!s->attrs || !s->names)
		return -ENOMEM;
	for (size_t i = 0; i < o->nr_events; i++) {
		attr_copy(&s->attrs[i], o->events[i].attr);
		attr_common(o, &s->attrs[i].attr, per_cpu, !fold);
		if (fold) {
			struct perf_event_attr *a = &s->attrs[i].attr;

			a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = 1;
			a->mmap_data = o->data_mmaps;
		}
		if (o->snapshot)
			s->attrs[i].attr.write_backward = 1;
		else
			attr_wakeup(&s->attrs[i].attr, o->data_pages ? o->data_pages : 64);
		s->names[i] = strdup(o->events[i].name ? o->events[i].name : "event");
		if (!s->names[i])
			return -ENOMEM;
	}
	s->nr_triggers = o->nr_triggers;
	s->trig_attrs = calloc(o->nr_triggers ? o->nr_triggers : 1, sizeof(*s->trig_attrs));
	if (!s->trig_attrs)
		return -ENOMEM;
	for (size_t i = 0; i < o->nr_triggers; i++) {
		struct perf_event_attr *a = &s->trig_attrs[i];

		*a = *o->triggers[i].attr;
		/* One layout for every trigger sample, timed on the clock of now_ns(). */
		a->sample_type = 0;
		attr_common(o, a, per_cpu, true);
		a->freq = 0;
		if (!a->sample_period)
			a->sample_period = 1;
		a->watermark = 0;
		/* with trigger_min_ns, an entry (even index) wakes nobody: its return will */
		a->wakeup_events = o->trigger_min_ns && !(i & 1) ? 0 : 1;
		a->write_backward = 0;
		a->use_clockid = 1;
		a->clockid = CLOCK_MONOTONIC;
		if (i == 0)
			auxcap_sample_layout_from_attr(a, &s->trig_layout);
	}
	return 0;
}

/* --- opening event sets -------------------------------------------------------------------- */

/* opts.trigger_min_ns: trigger @index opened as @fd: its samples' id says which it is. */
static int add_trig_id(struct auxcap_session *s, int fd, size_t index)
{
	struct trig_id *n = realloc(s->trig_ids, (s->nr_trig_ids + 1) * sizeof(*n));
	uint64_t id = 0;
	int r;

	if (!n)
		return -ENOMEM;
	s->trig_ids = n;
	r = s->sys->ioctl(s->sys->ctx, fd, PERF_EVENT_IOC_ID, (unsigned long)&id);
	if (r < 0)
		return r;
	n[s->nr_trig_ids++] = (struct trig_id){ id, index };
	return 0;
}

static void set_close(struct auxcap_session *s, struct set *set)
{
	auxcap_mapped_ring_close(&set->trig_ring);
	for (size_t i = 0; set->trig_fds && i < s->nr_triggers; i++)
		if (set->trig_fds[i] >= 0)
			(void)s->sys->close(s->sys->ctx, set->trig_fds[i]);
	free(set->trig_fds);
	set->trig_fds = NULL;
	free(set->aux_ref);
	set->aux_ref = NULL;
	auxcap_aux_ring_close(&set->aux);
	auxcap_mapped_ring_close(&set->snap_ring);
	auxcap_mapped_ring_close(&set->ev_ring);
	auxcap_mapped_ring_close(&set->ring);
	if (set->aux_fd >= 0)
		(void)s->sys->close(s->sys->ctx, set->aux_fd);
	if (set->sb_fd >= 0)
		(void)s->sys->close(s->sys->ctx, set->sb_fd);
	for (size_t i = 0; set->fds && i < s->nr_events; i++)
		if (set->fds[i] >= 0)
			(void)s->sys->close(s->sys->ctx, set->fds[i]);
	free(set->fds);
	set->fds = NULL;
	set->aux_fd = set->sb_fd = -1;
}

static int redirect(struct auxcap_session *s, int fd, int to)
{
	return s->sys->ioctl(s->sys->ctx, fd, PERF_EVENT_IOC_SET_OUTPUT, (unsigned long)to);
}

/*
 * A set of another task on @owner's CPU: its events write into @owner's rings (perf's per-CPU
 * mmaps, PERF_EVENT_IOC_SET_OUTPUT), each to the ring of the same event of @owner, so a
 * process of many threads takes one set of rings per CPU instead of one per thread and CPU.
 */
static int set_share(struct auxcap_session *s, struct set *set, const struct set *owner)
{
	int r = 0;

	if (set->aux_fd >= 0)
		r = redirect(s, set->aux_fd, owner->aux_fd);
	if (r == 0 && set->sb_fd >= 0)
		r = redirect(s, set->sb_fd, owner->sb_fd);
	for (size_t i = 0; r == 0 && i < s->nr_events; i++)
		r = redirect(s, set->fds[i], owner->fds[i]);
	for (size_t i = 0; r == 0 && i < s->nr_triggers; i++)
		r = redirect(s, set->trig_fds[i], owner->trig_fds[i]);
	set->ring_fd = -1;
	set->poll_fd = set->aux_fd >= 0 ? set->aux_fd : set->sb_fd >= 0 ? set->sb_fd
					  : s->nr_events	     ? set->fds[0]
								     : -1;
	return r;
}

/* Open @set's events; map its rings, or with @owner share @owner's (set_share()). */
static int set_open(struct auxcap_session *s, struct set *set, const struct set *owner,
		    int *ret_failed)
{
	const struct auxcap_session_opts *o = &s->opts;
	size_t data_pages = o->data_pages ? o->data_pages : 64;
	size_t aux_pages = o->aux_pages ? o->aux_pages : 1024;
	int fd, out_fd, r;

	set->aux_fd = set->sb_fd = set->ring_fd = set->snap_fd = set->trig_ring_fd = -1;
	set->ev_fd = set->poll_fd = -1;
	set->fds = malloc((s->nr_events ? s->nr_events : 1) * sizeof(int));
	set->trig_fds = malloc((s->nr_triggers ? s->nr_triggers : 1) * sizeof(int));
	if (!set->fds || !set->trig_fds)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr_events; i++)
		set->fds[i] = -1;
	for (size_t i = 0; i < s->nr_triggers; i++)
		set->trig_fds[i] = -1;

	if (s->has_aux) {
		*ret_failed = -1;
		fd = auxcap_event_open_attr(s->sys, &s->aux_attr, set->pid, set->cpu, -1, 0);
		if (fd < 0)
			return fd;
		set->aux_fd = set->ring_fd = fd;
		if (o->aux_filter) {
			*ret_failed = -4;
			r = s->sys->ioctl(s->sys->ctx, fd, PERF_EVENT_IOC_SET_FILTER,
					  (unsigned long)o->aux_filter);
			if (r < 0)
				return r;
		}
	}
	if (s->sideband) {
		*ret_failed = -2;
		fd = auxcap_event_open_attr(s->sys, &s->sb_attr, set->pid, set->cpu, -1, 0);
		if (fd < 0)
			return fd;
		set->sb_fd = fd;
		if (set->ring_fd < 0)
			set->ring_fd = fd;
	}
	for (size_t i = 0; i < s->nr_events; i++) {
		*ret_failed = (int)i;
		fd = auxcap_event_open_attr(s->sys, &s->attrs[i], set->pid, set->cpu, -1, 0);
		if (fd < 0)
			return fd;
		set->fds[i] = fd;
		if (o->events[i].filter) {
			*ret_failed = AUXCAP_SESSION_FAILED_FILTER - (int)i;
			r = s->sys->ioctl(s->sys->ctx, fd, PERF_EVENT_IOC_SET_FILTER,
					  (unsigned long)o->events[i].filter);
			if (r < 0)
				return r;
		}
	}
	/* Trigger events: a ring of their own, read by the loop as soon as it wakes. */
	for (size_t i = 0; i < s->nr_triggers; i++) {
		*ret_failed = AUXCAP_SESSION_FAILED_TRIGGER - (int)i;
		fd = auxcap_event_open(s->sys, &s->trig_attrs[i], set->pid, set->cpu, -1, 0);
		if (fd < 0)
			return fd;
		set->trig_fds[i] = fd;
		if (s->opts.trigger_min_ns && (r = add_trig_id(s, fd, i)) < 0)
			return r;
		if (owner)
			continue;
		if (set->trig_ring_fd < 0) {
			r = auxcap_mapped_ring_open(s->sys, fd,
						    s->opts.trigger_min_ns ? TRIGGER_TIMED_RING_PAGES
									   : TRIGGER_RING_PAGES,
						    0, &set->trig_ring);
			if (r < 0)
				return r;
			set->trig_ring_fd = fd;
			set->has_trig_ring = true;
		} else if ((r = redirect(s, fd, set->trig_ring_fd)) < 0) {
			return r;
		}
	}
	*ret_failed = -3;
	if (owner)
		return set_share(s, set, owner);

	/* The main ring: streamed, owned by the AUX event or the side-band event. */
	if (!o->snapshot && set->ring_fd < 0 && s->nr_events)
		set->ring_fd = set->fds[0];
	if (set->ring_fd >= 0) {
		r = auxcap_mapped_ring_open(s->sys, set->ring_fd, data_pages, 0, &set->ring);
		if (r < 0)
			return r;
		set->has_ring = true;
	}
	/* Where side-band and the other events stream: the main ring, or a ring of their own. */
	out_fd = set->ring_fd;
	if (s->has_aux && o->aux_ring_alone) {
		out_fd = set->sb_fd >= 0			 ? set->sb_fd
			 : !o->snapshot && s->nr_events ? set->fds[0]
							 : -1;
		if (out_fd >= 0) {
			r = auxcap_mapped_ring_open(s->sys, out_fd, data_pages, 0, &set->ev_ring);
			if (r < 0)
				return r;
			set->ev_fd = out_fd;
			set->has_ev_ring = true;
		}
	}
	if (set->sb_fd >= 0 && set->sb_fd != out_fd) {
		r = redirect(s, set->sb_fd, out_fd);
		if (r < 0)
			return r;
	}
	/* Other events: into that ring, or in snapshot mode into an overwrite ring. */
	for (size_t i = 0; i < s->nr_events; i++) {
		if (set->fds[i] == out_fd)
			continue;
		if (o->snapshot) {
			if (set->snap_fd < 0) {
				size_t pages = o->snapshot_data_pages ? o->snapshot_data_pages
								      : data_pages;

				r = auxcap_mapped_ring_open(s->sys, set->fds[i], pages,
							    AUXCAP_RING_OVERWRITE |
								    AUXCAP_RING_BACKWARD,
							    &set->snap_ring);
				if (r < 0)
					return r;
				set->snap_fd = set->fds[i];
				set->has_snap_ring = true;
				continue;
			}
			r = redirect(s, set->fds[i], set->snap_fd);
		} else {
			r = redirect(s, set->fds[i], out_fd);
		}
		if (r < 0)
			return r;
	}
	if (s->has_aux) {
		r = auxcap_aux_ring_open(s->sys, set->aux_fd, set->ring.ring.pc, aux_pages,
					 o->snapshot, &set->aux);
		if (r < 0)
			return r;
		set->has_aux = true;
		if (o->snapshot) {
			set->aux_ref_len = set->aux.size / 2 < SNAP_REF_MAX ? (size_t)set->aux.size / 2
									   : SNAP_REF_MAX;
			set->aux_ref = malloc(set->aux_ref_len);
			if (!set->aux_ref)
				return -ENOMEM;
		}
	}
	return 0;
}

static int collect_ids(struct auxcap_session *s, int which, uint64_t *ids, size_t *nr)
{
	*nr = 0;
	for (size_t k = 0; k < s->nr_sets; k++) {
		struct set *set = &s->sets[k];
		int fd = which == -1 ? set->aux_fd : which == -2 ? set->sb_fd : set->fds[which];
		int r;

		r = auxcap_event_id(s->sys, fd, &ids[*nr]);
		if (r < 0)
			return r;
		(*nr)++;
	}
	return 0;
}

static int announce(struct auxcap_session *s)
{
	const struct auxcap_sink *sink = s->opts.sink;
	uint64_t *ids;
	size_t nr;
	int r = 0;

	ids = calloc(s->nr_sets, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	if (s->has_aux) {
		r = collect_ids(s, -1, ids, &nr);
		if (r == 0)
			r = sink->ops->attr(sink->ctx, &s->aux_attr.attr, s->aux_name, ids, nr);
	}
	if (r == 0 && s->sideband) {
		r = collect_ids(s, -2, ids, &nr);
		if (r == 0)
			r = sink->ops->attr(sink->ctx, &s->sb_attr.attr, "dummy:u", ids, nr);
	}
	for (size_t i = 0; r == 0 && i < s->nr_events; i++) {
		r = collect_ids(s, (int)i, ids, &nr);
		if (r == 0)
			r = sink->ops->attr(sink->ctx, &s->attrs[i].attr, s->names[i], ids, nr);
	}
	free(ids);
	return r;
}

void auxcap_session_free(struct auxcap_session *s)
{
	if (!s)
		return;
	for (size_t k = 0; s->sets && k < s->nr_sets; k++)
		set_close(s, &s->sets[k]);
	free(s->sets);
	for (size_t i = 0; s->names && i < s->nr_events; i++)
		free(s->names[i]);
	free(s->names);
	free(s->attrs);
	free(s->trig_attrs);
	free(s->trig_ids);
	free(s->hits);
	free(s->open);
	free(s->aux_name);
	free(s->snap_buf);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	pthread_mutex_destroy(&s->hit_lock);
	free(s);
}

int auxcap_session_open(const struct auxcap_session_opts *opts, struct auxcap_session **ret_s,
			int *ret_failed_event)
{
	static const pid_t any_pid = -1;
	static const int any_cpu = -1;
	struct auxcap_session *s;
	const pid_t *pids;
	const int *cpus;
	size_t nr_pids, nr_cpus;
	int failed = -3, r;

	if (!opts || !ret_s || opts->sz < sizeof(*opts) || !opts->sink || !opts->sink->ops)
		return -EINVAL;
	if (!opts->aux && !opts->nr_events && !opts->sideband)
		return -EINVAL;
	if (!pow2_or_zero(opts->data_pages) || !pow2_or_zero(opts->aux_pages) ||
	    !pow2_or_zero(opts->snapshot_data_pages))
		return -EINVAL;
	/* The kernel cannot map an inherited per-thread event (cpu -1). */
	if (opts->inherit && !(opts->cpus && opts->nr_cpus))
		return -EINVAL;
	/* A trigger asks for snapshots: full-trace mode writes everything anyway. */
	if (opts->nr_triggers && (!opts->snapshot || !opts->triggers))
		return -EINVAL;
	/* timed calls: an entry and a return probe for each function */
	if (opts->trigger_min_ns && (!opts->nr_triggers || (opts->nr_triggers & 1)))
		return -EINVAL;
	for (size_t i = 0; i < opts->nr_triggers; i++)
		if (!opts->triggers[i].attr)
			return -EINVAL;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	s->sys = opts->sys ? opts->sys : &auxcap_sys_linux;
	pthread_mutex_init(&s->hit_lock, NULL);
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0) {
		r = -errno;
		goto err;
	}
	r = session_prepare_attrs(s);
	if (r < 0)
		goto err;

	pids = opts->pids && opts->nr_pids ? opts->pids : &any_pid;
	nr_pids = opts->pids && opts->nr_pids ? opts->nr_pids : 1;
	cpus = opts->cpus && opts->nr_cpus ? opts->cpus : &any_cpu;
	nr_cpus = opts->cpus && opts->nr_cpus ? opts->nr_cpus : 1;
	s->sets = calloc(nr_pids * nr_cpus, sizeof(*s->sets));
	if (!s->sets) {
		r = -ENOMEM;
		goto err;
	}
	for (size_t p = 0; p < nr_pids; p++) {
		for (size_t c = 0; c < nr_cpus; c++) {
			struct set *set = &s->sets[s->nr_sets++];

			set->pid = pids[p];
			set->cpu = cpus[c];
			/* per CPU, the first task's set owns the rings the others share */
			r = set_open(s, set, p && set->cpu >= 0 ? &s->sets[c] : NULL, &failed);
			if (r < 0)
				goto err;
		}
	}
	r = announce(s);
	if (r < 0)
		goto err;
	*ret_s = s;
	return 0;

err:
	if (ret_failed_event)
		*ret_failed_event = failed;
	auxcap_session_free(s);
	return r;
}

int auxcap_session_time_conv(const struct auxcap_session *s, struct auxcap_perf_time_conv *ret)
{
	for (size_t k = 0; k < s->nr_sets; k++)
		if (s->sets[k].has_ring)
			return auxcap_time_conv_read_page(s->sets[k].ring.ring.pc, ret);
	return -ENODEV;
}

size_t auxcap_session_nr_sets(const struct auxcap_session *s)
{
	return s->nr_sets;
}

uint64_t auxcap_session_snapshot_bytes(const struct auxcap_session *s)
{
	uint64_t n = 0;

	if (!s->opts.snapshot)
		return 0;
	for (size_t k = 0; k < s->nr_sets; k++) {
		const struct set *set = &s->sets[k];

		if (set->has_aux)
			n += set->aux.size + AUXCAP_PERF_AUXTRACE_SIZE;
		n += set->has_ring ? set->ring.ring.size : 0;
		n += set->has_ev_ring ? set->ev_ring.ring.size : 0;
		n += set->has_snap_ring ? set->snap_ring.ring.size : 0;
	}
	return n;
}

void auxcap_session_get_stats(const struct auxcap_session *s, struct auxcap_session_stats *ret)
{
	*ret = s->stats;
}

/* @req on every event fd (the side-band event's with @with_sb). */
static int for_each_fd(struct auxcap_session *s, unsigned long req, bool with_sb)
{
	int r;

	for (size_t k = 0; k < s->nr_sets; k++) {
		struct set *set = &s->sets[k];

		if (set->aux_fd >= 0 && (r = s->sys->ioctl(s->sys->ctx, set->aux_fd, req, 0)) < 0)
			return r;
		if (with_sb && set->sb_fd >= 0 &&
		    (r = s->sys->ioctl(s->sys->ctx, set->sb_fd, req, 0)) < 0)
			return r;
		for (size_t i = 0; i < s->nr_events; i++)
			if ((r = s->sys->ioctl(s->sys->ctx, set->fds[i], req, 0)) < 0)
				return r;
		for (size_t i = 0; i < s->nr_triggers; i++)
			if ((r = s->sys->ioctl(s->sys->ctx, set->trig_fds[i], req, 0)) < 0)
				return r;
	}
	return 0;
}

int auxcap_session_enable_sideband(struct auxcap_session *s)
{
	int r;

	for (size_t k = 0; k < s->nr_sets; k++)
		if (s->sets[k].sb_fd >= 0 &&
		    (r = s->sys->ioctl(s->sys->ctx, s->sets[k].sb_fd, PERF_EVENT_IOC_ENABLE, 0)) < 0)
			return r;
	return 0;
}

int auxcap_session_enable(struct auxcap_session *s, bool enable)
{
	return for_each_fd(s, enable ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, enable);
}

/* --- the drain ---------------------------------------------------------------------------- */

static void account_record(struct auxcap_session *s, struct set *set,
			   const struct perf_event_header *h)
{
	uint64_t v[3];

	s->stats.records++;
	s->stats.record_bytes += h->size;
	switch (h->type) {
	case PERF_RECORD_LOST:
		memcpy(v, h + 1, 16);
		s->stats.lost_records++;
		s->stats.lost += v[1];
		break;
	case PERF_RECORD_LOST_SAMPLES:
		memcpy(v, h + 1, 8);
		s->stats.lost_samples += v[0];
		break;
	case PERF_RECORD_ITRACE_START:
		/* u32 pid, u32 tid: the task the AUX data of this set belongs to from now on */
		memcpy(&set->itrace_tid, (const char *)(h + 1) + 4, 4);
		break;
	case PERF_RECORD_AUX:
		memcpy(v, h + 1, 24);
		s->stats.aux_records++;
		if (v[2] & PERF_AUX_FLAG_TRUNCATED) {
			s->stats.aux_truncated++;
			if (!s->opts.snapshot)
				set->aux_reenable = true;
		}
		if (v[2] & PERF_AUX_FLAG_PARTIAL)
			s->stats.aux_partial++;
		if (v[2] & PERF_AUX_FLAG_COLLISION)
			s->stats.aux_collision++;
		break;
	default:
		break;
	}
}

/* Hand every record of a streamed ring (@ring: the set's main ring or ev_ring) to the sink. */
static int drain_ring(struct auxcap_session *s, struct set *set, struct auxcap_ring *ring)
{
	const struct auxcap_sink *sink = s->opts.sink;
	const struct perf_event_header *h;
	int64_t n;
	int r;

	n = auxcap_ring_begin(ring);
	if (n <= 0)
		return 0;
	while ((r = auxcap_ring_next(ring, &h)) == 1) {
		account_record(s, set, h);
		r = sink->ops->record(sink->ctx, h, h->size);
		if (r < 0)
			return r;
	}
	if (r == -EBADMSG) {
		s->stats.corrupt++;
		auxcap_log(AUXCAP_LOG_ERROR, "malformed record header in the data ring of cpu %d "
					     "pid %d; %llu bytes dropped",
			   set->cpu, (int)set->pid,
			   (unsigned long long)ring->stats.corrupt_bytes);
		r = 0;
	}
	auxcap_ring_end(ring);
	return r;
}

static uint32_t set_idx(const struct auxcap_session *s, const struct set *set)
{
	return (uint32_t)(set - s->sets);
}

/*
 * perf's alignment rule (auxtrace_record.alignment): the first piece, the one that ends at
 * the buffer's end when the span wraps, is cut down to whole records.  That drops the
 * unused tail of a buffer whose size is not a multiple of the record size (Intel BTS).
 */
static void span_align(struct auxcap_aux_span *sp, uint32_t align)
{
	size_t unwanted;

	if (!align)
		return;
	unwanted = sp->piece[0].len % align;
	sp->piece[0].len -= unwanted;
	sp->len -= unwanted;
}

/* Hand @span to the sink as a chunk whose first byte is at stream position @offset. */
static int emit_aux(struct auxcap_session *s, struct set *set, const struct auxcap_aux_span *span,
		    uint64_t offset, bool snapshot)
{
	const struct auxcap_sink *sink = s->opts.sink;
	struct auxcap_aux_span aligned = *span, *sp = &aligned;
	struct auxcap_aux_chunk chunk = {
		.offset = offset,
		.reference = s->opts.reference ? s->opts.reference() : now_ns(),
		.idx = set_idx(s, set),
		/* per task: the task ITRACE_START named (the set's own on a kernel) */
		.tid = set->cpu >= 0	  ? (uint32_t)-1
		       : set->itrace_tid ? set->itrace_tid
					 : (uint32_t)set->pid,
		.cpu = (uint32_t)set->cpu,
		.snapshot = snapshot,
	};
	int r;

	span_align(sp, s->opts.aux_alignment);
	if (!sp->len)
		return 0;
	r = sink->ops->aux(sink->ctx, &chunk, sp);
	if (r < 0)
		return r;
	s->stats.aux_bytes += sp->len;
	s->stats.aux_chunks++;
	return 0;
}

/*
 * Full trace: hand what the hardware wrote since the last pass to the sink, releasing the
 * tail after every quarter of the buffer at most.  A driver places its stop point at the tail
 * it reads at each interrupt (every quarter, see the AUX watermark): a drain that lags by most
 * of the buffer and released its tail only after writing all of it left the hardware no room
 * for as long as that write took, and truncated (bench/aux_drain).  A piece never wraps when
 * it is cut, so with an alignment it ends on a record boundary or at the buffer's end.
 */
static int drain_aux(struct auxcap_session *s, struct set *set)
{
	uint64_t size = set->aux.size, max = size / 4, pos, end;
	uint32_t align = s->opts.aux_alignment;
	struct auxcap_aux_span all, sp;
	int64_t n;
	int r;

	n = auxcap_aux_ring_read(&set->aux, &all);
	if (n == -ESTALE) {
		auxcap_log(AUXCAP_LOG_ERROR, "AUX head ran past the tail on cpu %d: older bytes lost",
			   set->cpu);
		n = (int64_t)all.len;
	}
	if (n < 0)
		return (int)n;
	pos = all.offset;
	end = all.offset + all.len;
	do {
		uint64_t len = end - pos;

		if (len > max) {
			uint64_t to_wrap = size - (pos & (size - 1));

			len = align ? max - max % align : max;
			if (len > to_wrap || !len)
				len = to_wrap;
		}
		r = auxcap_aux_ring_span(&set->aux, pos + len, len, &sp);
		if (r == 0)
			r = emit_aux(s, set, &sp, sp.offset, false);
		if (r < 0)
			return r;
		auxcap_aux_ring_consume(&set->aux, &sp);
		pos += len;
		if (set->aux_reenable) {
			/* The kernel disabled the event on TRUNCATED; there is room again now. */
			set->aux_reenable = false;
			r = auxcap_event_enable(s->sys, set->aux_fd, true);
			if (r < 0)
				return r;
			s->stats.aux_reenables++;
		}
	} while (pos < end);
	return 0;
}

int auxcap_session_drain(struct auxcap_session *s)
{
	const struct auxcap_sink *sink = s->opts.sink;
	uint64_t before = s->stats.records + s->stats.aux_chunks;
	int r;

	for (size_t k = 0; k < s->nr_sets; k++) {
		struct set *set = &s->sets[k];

		if (set->has_ring && (r = drain_ring(s, set, &set->ring.ring)) < 0)
			return r;
		if (set->has_ev_ring && (r = drain_ring(s, set, &set->ev_ring.ring)) < 0)
			return r;
		if (set->has_aux && !s->opts.snapshot && (r = drain_aux(s, set)) < 0)
			return r;
	}
	s->stats.passes++;
	/* A round marks what came before as ordered; an empty pass adds nothing to order. */
	if (s->stats.records + s->stats.aux_chunks == before)
		return 0;
	return sink->ops->round ? sink->ops->round(sink->ctx) : 0;
}

/* --- snapshots ---------------------------------------------------------------------------- */

int auxcap_find_snapshot_zero_tail(const struct auxcap_aux_ring *ring, uint64_t head,
				   uint64_t old, uint64_t *state, uint64_t *ret_start,
				   uint64_t *ret_end)
{
	uint64_t size = ring->size;
	size_t check = size < 4096 ? (size_t)size : 4096;
	const uint64_t *w = (const uint64_t *)(ring->base + size - check);

	head &= size - 1;
	if (!*state) {
		for (size_t i = 0; i < check / 8; i++) {
			if (w[i]) {
				*state = 1; /* wrapped at least once: remembered */
				break;
			}
		}
	}
	if (*state) {
		*ret_start = head;
		*ret_end = head + size;
	} else {
		old &= size - 1;
		*ret_start = old;
		*ret_end = old > head ? head + size : head;
	}
	return 0;
}

/* Copy the records of a backward overwrite ring newer than the last snapshot, oldest first. */
static int snapshot_ring(struct auxcap_session *s, struct set *set)
{
	const struct auxcap_sink *sink = s->opts.sink;
	struct auxcap_ring *ring = &set->snap_ring.ring;
	const struct perf_event_header *h;
	size_t used = 0, n = 0, *offs = NULL, cap = 0;
	uint64_t head;
	int r = 0;

	if (s->snap_buf_size < ring->size) {
		unsigned char *p = realloc(s->snap_buf, (size_t)ring->size);

		if (!p)
			return -ENOMEM;
		s->snap_buf = p;
		s->snap_buf_size = (size_t)ring->size;
	}
	auxcap_ring_backward_begin(ring);
	head = ring->head;
	/* Records at or above the previous head went out with the previous snapshot. */
	if (set->snap_taken && set->snap_old - head < ring->size)
		ring->end = set->snap_old;
	while ((r = auxcap_ring_next(ring, &h)) == 1) {
		if (n == cap) {
			size_t *p = realloc(offs, (cap ? cap * 2 : 256) * sizeof(*offs));

			if (!p) {
				r = -ENOMEM;
				goto out;
			}
			offs = p;
			cap = cap ? cap * 2 : 256;
		}
		memcpy(s->snap_buf + used, h, h->size);
		offs[n++] = used;
		used += h->size;
	}
	if (r == -EBADMSG) {
		s->stats.corrupt++;
		r = 0;
	}
	while (n-- > 0) {
		h = (const struct perf_event_header *)(s->snap_buf + offs[n]);
		account_record(s, set, h);
		r = sink->ops->record(sink->ctx, h, h->size);
		if (r < 0)
			goto out;
	}
	set->snap_old = head;
	set->snap_taken = true;
out:
	free(offs);
	return r;
}

/* Copy the @n bytes that end at buffer position @end into @dst. */
static void aux_copy_before(const struct auxcap_aux_ring *ring, uint64_t end, size_t n,
			    unsigned char *dst)
{
	struct auxcap_aux_span sp;

	if (auxcap_aux_ring_span(ring, end, n, &sp) < 0)
		return; /* n <= size / 2 by construction */
	memcpy(dst, sp.piece[0].ptr, sp.piece[0].len);
	if (sp.piece[1].len)
		memcpy(dst + sp.piece[0].len, sp.piece[1].ptr, sp.piece[1].len);
}

/*
 * Did the producer write fewer than one buffer since the previous snapshot, given that the
 * head moved by @moved (modulo the size)?  Then the bytes just before the previous head that
 * the @moved new bytes did not reach are still what the previous snapshot saw.
 */
static bool aux_unwrapped_since(const struct set *set, uint64_t moved)
{
	const struct auxcap_aux_ring *ring = &set->aux;
	uint64_t untouched = ring->size - moved;
	size_t w = untouched < set->aux_ref_len ? (size_t)untouched : set->aux_ref_len;
	struct auxcap_aux_span sp;

	if (w < SNAP_REF_MIN || auxcap_aux_ring_span(ring, set->aux_old, w, &sp) < 0)
		return false;
	/* The last w bytes of the reference are the w bytes before aux_old. */
	return !memcmp(sp.piece[0].ptr, set->aux_ref + set->aux_ref_len - w, sp.piece[0].len) &&
	       (!sp.piece[1].len ||
		!memcmp(sp.piece[1].ptr, set->aux_ref + set->aux_ref_len - w + sp.piece[0].len,
			sp.piece[1].len));
}

static int snapshot_aux(struct auxcap_session *s, struct set *set)
{
	auxcap_find_snapshot_fn find = s->opts.find_snapshot ? s->opts.find_snapshot
							     : auxcap_find_snapshot_zero_tail;
	uint64_t size = set->aux.size, head, start, end, len, pos_end;
	struct auxcap_aux_span sp;
	int r;

	head = auxcap_aux_ring_head(&set->aux);
	r = find(&set->aux, head, set->aux_old, &set->aux_state, &start, &end);
	if (r < 0)
		return r;
	if (end - start > size || end < start)
		return -EBADMSG;
	len = end - start;
	if (!set->aux_taken) {
		pos_end = end; /* free-running as the finder placed it: 0 is the first byte */
	} else {
		uint64_t moved = (end - set->aux_old) & (size - 1);

		if (aux_unwrapped_since(set, moved)) {
			/* Only what was written since; the rest went out last time. */
			if (len > moved) {
				s->stats.aux_snapshot_trimmed += len - moved;
				len = moved;
			}
			pos_end = set->aux_pos + moved;
		} else {
			/* At least a lap since: place the chunk past a gap, never contiguous. */
			s->stats.aux_snapshot_wrapped++;
			pos_end = set->aux_pos + moved + size;
			if (pos_end - len <= set->aux_pos)
				pos_end += size;
		}
	}
	r = auxcap_aux_ring_span(&set->aux, end, len, &sp);
	if (r < 0)
		return r;
	r = emit_aux(s, set, &sp, pos_end - len, true);
	if (r < 0)
		return r;
	aux_copy_before(&set->aux, end, set->aux_ref_len, set->aux_ref);
	set->aux_old = end;
	set->aux_pos = pos_end;
	set->aux_taken = true;
	return 0;
}

/* The set whose CPU is @cpu, or 0: where a hit on @cpu wants its trace frozen first. */
static size_t set_of_cpu(const struct auxcap_session *s, uint32_t cpu)
{
	for (size_t k = 0; k < s->nr_sets; k++)
		if (s->sets[k].cpu >= 0 && (uint32_t)s->sets[k].cpu == cpu)
			return k;
	return 0;
}

/*
 * Freeze for a snapshot: stop every AUX event (the driver publishes its head), set @first's
 * first (the CPU a trigger hit came from: its trace is the one wanted), then pause every
 * overwrite sample ring (records come far slower than trace bytes).  What was frozen before
 * an error stays so; session_thaw() resumes it.
 */
static int session_freeze(struct auxcap_session *s, size_t first)
{
	int r = 0;

	for (int pass = 0; pass < 2 && r == 0; pass++) {
		for (size_t i = 0; i < s->nr_sets && r == 0; i++) {
			struct set *set = &s->sets[i == 0 ? first : i <= first ? i - 1 : i];

			if (pass == 0 && set->has_aux && !set->frozen_aux) {
				r = auxcap_event_enable(s->sys, set->aux_fd, false);
				set->frozen_aux = r == 0;
			} else if (pass == 1 && set->has_snap_ring && !set->frozen_ring) {
				r = auxcap_event_pause_output(s->sys, set->snap_fd, true);
				set->frozen_ring = r == 0;
			}
		}
	}
	s->frozen = true;
	s->freeze_result = r;
	s->frozen_ns = now_ns();
	return r;
}

/* Resume what session_freeze() stopped, even after an error; the first error is returned. */
static int session_thaw(struct auxcap_session *s)
{
	int r = 0, r2;

	for (size_t k = 0; k < s->nr_sets; k++) {
		struct set *set = &s->sets[k];

		if (set->frozen_ring &&
		    (r2 = auxcap_event_pause_output(s->sys, set->snap_fd, false)) < 0 && r == 0)
			r = r2;
		if (set->frozen_aux && (r2 = auxcap_event_enable(s->sys, set->aux_fd, true)) < 0 &&
		    r == 0)
			r = r2;
		set->frozen_ring = set->frozen_aux = false;
	}
	s->frozen = false;
	return r;
}

int auxcap_session_snapshot(struct auxcap_session *s)
{
	const struct auxcap_sink *sink = s->opts.sink;
	uint64_t word = __atomic_exchange_n(&s->req_word, 0, __ATOMIC_ACQ_REL), t0, lat;
	struct auxcap_snapshot_info info;
	int r = 0, r2;

	if (!word)
		word = req_word(AUXCAP_TRIGGER_API, now_ns());
	t0 = word & REQ_TIME_MASK;
	info = (struct auxcap_snapshot_info){
		.trigger_ns = t0,
		.source = (uint32_t)(word >> REQ_SOURCE_SHIFT),
		.coalesced = __atomic_exchange_n(&s->coalesced_pending, 0, __ATOMIC_ACQ_REL),
		.tid = (uint32_t)-1,
		.cpu = (uint32_t)-1,
	};
	if (info.source == AUXCAP_TRIGGER_FUNCTION) {
		/* Set by whoever made the request, right after it (see request_hit()). */
		pthread_mutex_lock(&s->hit_lock);
		info.tid = s->hit_tid;
		info.cpu = s->hit_cpu;
		info.call_ns = s->hit_call_ns;
		pthread_mutex_unlock(&s->hit_lock);
	}
	/* Freeze, unless the loop did as soon as a trigger woke it. */
	if (!s->frozen)
		session_freeze(s, info.source == AUXCAP_TRIGGER_FUNCTION ? set_of_cpu(s, info.cpu)
									    : 0);
	r = s->freeze_result;
	if (r == 0) {
		/* A trigger sample's time comes from the kernel's clock read: never after frozen. */
		lat = s->frozen_ns > t0 ? s->frozen_ns - t0 : 0;
		info.frozen_ns = s->frozen_ns;
		s->stats.snapshot_latency_ns_last = lat;
		if (lat > s->stats.snapshot_latency_ns_max)
			s->stats.snapshot_latency_ns_max = lat;
	}

	for (size_t k = 0; r == 0 && k < s->nr_sets; k++) {
		struct set *set = &s->sets[k];

		if (set->has_ring)
			r = drain_ring(s, set, &set->ring.ring);
		if (r == 0 && set->has_ev_ring)
			r = drain_ring(s, set, &set->ev_ring.ring);
		if (r == 0 && set->has_aux)
			r = snapshot_aux(s, set);
		if (r == 0 && set->has_snap_ring)
			r = snapshot_ring(s, set);
	}
	/* Resume what was frozen, even after an error, so the traced program is left as it
	 * was and tracing goes on. */
	r2 = session_thaw(s);
	if (r == 0)
		r = r2;
	if (r < 0)
		return r;
	s->stats.snapshots++;
	if (info.source == AUXCAP_TRIGGER_FUNCTION)
		s->stats.trigger_snapshots++;
	r = sink->ops->round ? sink->ops->round(sink->ctx) : 0;
	if (r == 0 && sink->ops->snapshot)
		r = sink->ops->snapshot(sink->ctx, &info);
	return r;
}

/* --- requests and the loop ------------------------------------------------------------------ */

/*
 * Post @req; a snapshot request carries @word (source and time).  Async-signal-safe.
 * Returns true if @word became the pending snapshot's (no other request was pending).
 */
static bool request_word(struct auxcap_session *s, unsigned int req, uint64_t word, bool wake)
{
	uint64_t one = 1;
	unsigned int prev;
	bool first = false;

	if (req & AUXCAP_REQ_SNAPSHOT) {
		uint64_t none = 0;

		/* Keep the oldest pending request's time: only the first one sets it. */
		first = __atomic_compare_exchange_n(&s->req_word, &none, word, false,
						    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	}
	prev = __atomic_fetch_or(&s->pending, req, __ATOMIC_SEQ_CST);
	if (prev & req & AUXCAP_REQ_SNAPSHOT) {
		__atomic_fetch_add(&s->stats.snapshot_requests_coalesced, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->coalesced_pending, 1, __ATOMIC_RELAXED);
	}
	if (wake)
		(void)!write(s->wake_fd, &one, sizeof(one));
	return first;
}

void auxcap_session_request_from(struct auxcap_session *s, unsigned int req,
				 enum auxcap_trigger_source source)
{
	(void)request_word(s, req, req_word(source, now_ns()), true);
}

void auxcap_session_request(struct auxcap_session *s, unsigned int req)
{
	auxcap_session_request_from(s, req, AUXCAP_TRIGGER_API);
}

/*
 * A trigger hit: a snapshot request timed by the hit, the hit's task and CPU recorded with it
 * when it is the pending one.  The lock makes a snapshot that takes the request (possibly
 * between the two) read them only once they are set.
 */
static void request_hit(struct auxcap_session *s, uint64_t time_ns, uint32_t tid, uint32_t cpu,
			uint64_t call_ns, bool wake)
{
	__atomic_fetch_add(&s->stats.trigger_hits, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&s->hit_lock);
	if (request_word(s, AUXCAP_REQ_SNAPSHOT, req_word(AUXCAP_TRIGGER_FUNCTION, time_ns),
			 wake)) {
		s->hit_tid = tid;
		s->hit_cpu = cpu;
		s->hit_call_ns = call_ns;
	}
	pthread_mutex_unlock(&s->hit_lock);
}

void auxcap_session_request_hit(struct auxcap_session *s, uint64_t time_ns, uint32_t tid,
				uint32_t cpu)
{
	request_hit(s, time_ns, tid, cpu, 0, true);
}

void auxcap_session_request_call(struct auxcap_session *s, uint64_t time_ns, uint32_t tid,
				 uint32_t cpu, uint64_t call_ns)
{
	request_hit(s, time_ns, tid, cpu, call_ns, true);
}

/* opts.trigger_min_ns: the open calls of thread @tid (made if new); NULL on ENOMEM. */
static struct open_calls *open_calls_of(struct auxcap_session *s, uint32_t tid)
{
	size_t i;

	if ((s->open_n + 1) * 2 > s->open_cap) {
		size_t cap = s->open_cap ? 2 * s->open_cap : 16;
		struct open_calls *no = calloc(cap, sizeof(*no));

		if (!no)
			return NULL;
		for (size_t k = 0; k < s->open_cap; k++) {
			if (!s->open[k].used)
				continue;
			for (i = (uint32_t)(s->open[k].tid * 2654435761u) & (cap - 1); no[i].used;
			     i = (i + 1) & (cap - 1))
				;
			no[i] = s->open[k];
		}
		free(s->open);
		s->open = no;
		s->open_cap = cap;
	}
	for (i = (uint32_t)(tid * 2654435761u) & (s->open_cap - 1); s->open[i].used;
	     i = (i + 1) & (s->open_cap - 1))
		if (s->open[i].tid == tid)
			return &s->open[i];
	s->open[i].used = true;
	s->open[i].tid = tid;
	s->open[i].n = 0;
	s->open_n++;
	return &s->open[i];
}

static int cmp_hit(const void *pa, const void *pb)
{
	const struct trig_hit *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return (int)a->ret - (int)b->ret; /* an entry before a return at the same time */
}

/*
 * opts.trigger_min_ns: the trigger samples a loop pass read, in time order: an entry opens a
 * call of its thread, a return closes the latest one, and a call that took trigger_min_ns
 * or more asks for a snapshot timed at its return (*@hit set).  Runs in the loop's thread.
 */
static int time_calls(struct auxcap_session *s, bool *hit)
{
	if (s->stats.trigger_lost != s->lost_seen) {
		/* samples were lost: an entry or a return may be missing, so pairs are not known */
		for (size_t k = 0; k < s->open_cap; k++)
			s->open[k].n = 0;
		s->lost_seen = s->stats.trigger_lost;
	}
	qsort(s->hits, s->nr_hits, sizeof(*s->hits), cmp_hit);
	for (size_t i = 0; i < s->nr_hits; i++) {
		const struct trig_hit *h = &s->hits[i];
		struct open_calls *oc = open_calls_of(s, h->tid);
		uint64_t d;

		if (!oc)
			return -ENOMEM;
		if (!h->ret) {
			if (oc->n == OPEN_CALLS_MAX) { /* runaway: the oldest goes */
				memmove(oc->t, oc->t + 1, (OPEN_CALLS_MAX - 1) * sizeof(oc->t[0]));
				oc->n--;
			}
			oc->t[oc->n++] = h->time;
			continue;
		}
		if (!oc->n)
			continue; /* called before the capture began */
		oc->n--;
		d = h->time > oc->t[oc->n] ? h->time - oc->t[oc->n] : 0;
		s->stats.trigger_calls++;
		if (d > s->stats.trigger_max_ns)
			s->stats.trigger_max_ns = d;
		if (d >= s->opts.trigger_min_ns) {
			*hit = true;
			request_hit(s, h->time, h->tid, h->cpu, d, false);
		}
	}
	s->nr_hits = 0;
	return 0;
}

/* opts.trigger_min_ns: keep a trigger sample for time_calls(); -ENOMEM. */
static int keep_hit(struct auxcap_session *s, const struct auxcap_record *rec, uint32_t cpu)
{
	size_t k;

	for (k = 0; k < s->nr_trig_ids && s->trig_ids[k].id != rec->u.sample.id; k++)
		;
	if (k == s->nr_trig_ids)
		return 0; /* (not one of ours) */
	if (s->nr_hits == s->cap_hits) {
		size_t cap = s->cap_hits ? 2 * s->cap_hits : 256;
		struct trig_hit *nh = realloc(s->hits, cap * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		s->hits = nh;
		s->cap_hits = cap;
	}
	s->hits[s->nr_hits++] = (struct trig_hit){ rec->u.sample.time, rec->u.sample.tid, cpu,
						   (s->trig_ids[k].index & 1) != 0 };
	return 0;
}

/*
 * Read the hits of a set's trigger events: each sample is a snapshot request timed by the
 * sample itself (with opts.trigger_min_ns, kept for time_calls()).  Sets *@hit when there
 * was a request.  Runs in the loop's thread.
 */
static int read_triggers(struct auxcap_session *s, struct set *set, bool *hit)
{
	struct auxcap_ring *ring = &set->trig_ring.ring;
	const struct perf_event_header *h;
	struct auxcap_record rec;
	uint64_t v[2];
	uint32_t cpu;
	int r;

	if (auxcap_ring_begin(ring) <= 0)
		return 0;
	while ((r = auxcap_ring_next(ring, &h)) == 1) {
		if (h->type == PERF_RECORD_LOST && h->size >= 24) {
			memcpy(v, h + 1, sizeof(v));
			s->stats.trigger_lost += v[1];
			continue;
		}
		if (h->type != PERF_RECORD_SAMPLE ||
		    auxcap_record_parse(&s->trig_layout, h, h->size, &rec) < 0)
			continue;
		cpu = (s->trig_layout.sample_type & PERF_SAMPLE_CPU) ? rec.u.sample.cpu
								     : (uint32_t)set->cpu;
		if (s->opts.trigger_min_ns) {
			r = keep_hit(s, &rec, cpu);
			if (r < 0)
				break;
			continue;
		}
		*hit = true;
		request_hit(s, rec.u.sample.time, rec.u.sample.tid, cpu, 0, false);
	}
	if (r == -EBADMSG) {
		s->stats.corrupt++;
		r = 0;
	}
	auxcap_ring_end(ring);
	return r;
}

static int handle_requests(struct auxcap_session *s, bool *stop)
{
	unsigned int req = __atomic_exchange_n(&s->pending, 0, __ATOMIC_SEQ_CST);
	int r = 0;

	if (req & AUXCAP_REQ_DISABLE)
		r = auxcap_session_enable(s, false);
	if (r == 0 && (req & AUXCAP_REQ_ENABLE))
		r = auxcap_session_enable(s, true);
	if (req & (AUXCAP_REQ_DISABLE | AUXCAP_REQ_ENABLE))
		__atomic_add_fetch(&s->stats.toggles, 1, __ATOMIC_RELEASE);
	if (r == 0 && (req & AUXCAP_REQ_SNAPSHOT) && s->opts.snapshot)
		r = auxcap_session_snapshot(s);
	if (req & AUXCAP_REQ_STOP)
		*stop = true;
	return r;
}

int auxcap_session_run(struct auxcap_session *s, int timeout_ms)
{
	struct pollfd *pfd;
	size_t *trig_set; /* per pfd entry: 1 + the set of a trigger ring, 0 for other fds */
	size_t nfd = 0, gone = 0; /* gone: fds whose task hung up, no longer polled */
	uint64_t start = now_ns(), before;
	bool stop = false, flowing = false;
	int r = 0;

	pfd = calloc(3 * s->nr_sets + 1, sizeof(*pfd));
	trig_set = calloc(3 * s->nr_sets + 1, sizeof(*trig_set));
	if (!pfd || !trig_set) {
		free(pfd);
		free(trig_set);
		return -ENOMEM;
	}
	pfd[nfd++] = (struct pollfd){ .fd = s->wake_fd, .events = POLLIN };
	for (size_t k = 0; k < s->nr_sets; k++) {
		if (s->sets[k].has_ring)
			pfd[nfd++] = (struct pollfd){ .fd = s->sets[k].ring_fd, .events = POLLIN };
		if (s->sets[k].has_trig_ring) {
			trig_set[nfd] = k + 1;
			pfd[nfd++] = (struct pollfd){ .fd = s->sets[k].trig_ring_fd,
						      .events = POLLIN };
		}
		if (s->sets[k].has_ev_ring)
			pfd[nfd++] = (struct pollfd){ .fd = s->sets[k].ev_fd, .events = POLLIN };
		if (s->sets[k].poll_fd >= 0)
			pfd[nfd++] = (struct pollfd){ .fd = s->sets[k].poll_fd, .events = POLLIN };
	}

	while (!stop) {
		int wait = -1, n;
		bool hit = false;

		if (timeout_ms >= 0) {
			uint64_t el = (now_ns() - start) / 1000000;

			if (el >= (uint64_t)timeout_ms)
				break;
			wait = timeout_ms - (int)el;
		}
		/* Wake at least every 100 ms so side-band and slow AUX data go out regularly. */
		if (wait < 0 || wait > 100)
			wait = 100;
		/*
		 * The last pass moved data: look again within a millisecond (or at the next
		 * watermark, if sooner) instead of up to 100 ms, so a fast producer does not fill a
		 * ring while the loop waits for the half-ring wakeup (the syscall benchmark loses
		 * 3 to 8 times fewer records than perf record so).  Not at once, as perf record
		 * does: a reader that chases the kernel's head pass after pass makes the traced
		 * program pay for the ring's cache lines it keeps taking away (3% of its time
		 * there), and loses more.  Nor by waking at a lower watermark: every wakeup is
		 * paid by the traced program too.
		 */
		if (flowing)
			wait = 1;
		n = s->sys->poll(s->sys->ctx, pfd, nfd, wait);
		if (n == -EINTR)
			continue;
		if (n < 0) {
			r = n;
			break;
		}
		/*
		 * A trigger ring woke the loop: stop the trace before anything else, even before
		 * reading the hits (a trigger ring holds nothing but hits and LOST records), the
		 * set the hit came from first.  The snapshot the hit asks for is then taken.
		 */
		for (size_t i = 1; i < nfd && s->opts.snapshot && !s->frozen &&
				   !s->opts.trigger_min_ns; /* (most calls are quick) */
		     i++)
			if (trig_set[i] && (pfd[i].revents & POLLIN))
				(void)session_freeze(s, trig_set[i] - 1);
		for (size_t k = 0; k < s->nr_sets && r == 0; k++)
			if (s->sets[k].has_trig_ring)
				r = read_triggers(s, &s->sets[k], &hit);
		if (r == 0 && s->nr_hits)
			r = time_calls(s, &hit);
		if (s->frozen && (r < 0 || !(__atomic_load_n(&s->pending, __ATOMIC_ACQUIRE) &
					     AUXCAP_REQ_SNAPSHOT))) {
			int r2 = session_thaw(s); /* no snapshot to take after all */

			if (r == 0)
				r = r2;
		}
		if (r < 0)
			break;
		if ((pfd[0].revents & POLLIN) || hit) {
			uint64_t v;

			if (pfd[0].revents & POLLIN)
				(void)!read(s->wake_fd, &v, sizeof(v));
			r = handle_requests(s, &stop);
			if (r < 0)
				break;
		}
		if (n > 0)
			s->stats.wakeups++;
		/* A hung-up fd stays readable at once: poll it no more (perf's fdarray filter),
		 * or the loop would spin until the last task is gone.  Its ring is still drained
		 * with the others. */
		for (size_t i = 1; i < nfd; i++) {
			if (pfd[i].fd >= 0 && (pfd[i].revents & POLLHUP)) {
				pfd[i].fd = -1;
				gone++;
			}
		}
		before = s->stats.record_bytes + s->stats.aux_bytes;
		r = auxcap_session_drain(s);
		if (r < 0)
			break;
		flowing = s->stats.record_bytes + s->stats.aux_bytes - before >= FLOWING_BYTES;
		if (nfd > 1 && gone == nfd - 1)
			break; /* every monitored task is gone */
	}
	if (s->frozen) {
		int r2 = session_thaw(s); /* an error came between a freeze and its snapshot */

		if (r == 0)
			r = r2;
	}
	free(trig_set);
	free(pfd);
	return r;
}

/* --- side-band of running tasks -------------------------------------------------------------- */

struct synth_ctx {
	struct auxcap_session *s;
	int n;
};

static int synth_record(void *ctx, const void *rec, size_t len)
{
	struct synth_ctx *c = ctx;
	const struct auxcap_sink *sink = c->s->opts.sink;
	int r;

	r = sink->ops->record(sink->ctx, rec, len);
	if (r < 0)
		return r;
	c->s->stats.records++;
	c->s->stats.record_bytes += len;
	c->n++;
	return 0;
}

/* The fd and attr of the first event the session announced (its id goes in sample_id). */
static void first_event(struct auxcap_session *s, struct set *set, int *ret_fd,
			const struct perf_event_attr **ret_attr)
{
	if (set->aux_fd >= 0) {
		*ret_fd = set->aux_fd;
		*ret_attr = &s->aux_attr.attr;
	} else if (set->sb_fd >= 0) {
		*ret_fd = set->sb_fd;
		*ret_attr = &s->sb_attr.attr;
	} else {
		*ret_fd = set->fds[0];
		*ret_attr = &s->attrs[0].attr;
	}
}

int auxcap_session_synthesize_kernel(struct auxcap_session *s, const char *proc)
{
	struct synth_ctx c = { s, 0 };
	const struct perf_event_attr *attr;
	struct auxcap_sample_layout lay;
	struct auxcap_sample_id sid = { 0 };
	struct set *set;
	int fd, r;

	if (!s || !s->nr_sets)
		return -EINVAL;
	set = &s->sets[0];
	first_event(s, set, &fd, &attr);
	r = auxcap_event_id(s->sys, fd, &sid.id);
	if (r < 0)
		return r;
	sid.cpu = set->cpu < 0 ? 0 : (uint32_t)set->cpu;
	auxcap_sample_layout_from_attr(attr, &lay);
	r = auxcap_proc_synthesize_kernel(proc, &lay, &sid, synth_record, &c);
	return r < 0 ? r : c.n;
}

int auxcap_session_synthesize(struct auxcap_session *s, const char *proc)
{
	struct synth_ctx c = { s, 0 };
	pid_t *tgids;
	size_t nr_tgids = 0;
	int r = 0;

	if (!s)
		return -EINVAL;
	tgids = calloc(s->nr_sets ? s->nr_sets : 1, sizeof(*tgids));
	if (!tgids)
		return -ENOMEM;
	for (size_t k = 0; k < s->nr_sets && r >= 0; k++) {
		struct set *set = &s->sets[k];
		const struct perf_event_attr *attr;
		struct auxcap_sample_layout lay;
		struct auxcap_sample_id sid = { 0 };
		bool seen = false, mapped = false;
		pid_t tgid;
		int fd;

		if (set->pid <= 0)
			continue;
		for (size_t j = 0; j < k; j++)
			seen = seen || s->sets[j].pid == set->pid;
		if (seen)
			continue;
		r = auxcap_proc_tgid(proc, set->pid, &tgid);
		if (r == -ESRCH || r == -ENOENT) {
			r = 0; /* gone since its events were opened: the others still run */
			continue;
		}
		if (r < 0)
			break;
		for (size_t j = 0; j < nr_tgids; j++)
			mapped = mapped || tgids[j] == tgid;
		if (!mapped)
			tgids[nr_tgids++] = tgid;
		first_event(s, set, &fd, &attr);
		r = auxcap_event_id(s->sys, fd, &sid.id);
		if (r < 0)
			break;
		sid.cpu = set->cpu < 0 ? 0 : (uint32_t)set->cpu;
		auxcap_sample_layout_from_attr(attr, &lay);
		r = auxcap_proc_synthesize(proc, tgid, set->pid, !mapped, &lay, &sid, synth_record,
					   &c);
		if (r == -ESRCH || r == -ENOENT)
			r = 0; /* it exited meanwhile */
	}
	free(tgids);
	if (r >= 0 && !nr_tgids && s->nr_sets) {
		/* System-wide (per CPU, no task): every task of the system, as perf record -a. */
		struct set *set = &s->sets[0];
		const struct perf_event_attr *attr;
		struct auxcap_sample_layout lay;
		struct auxcap_sample_id sid = { 0 };
		int fd;

		first_event(s, set, &fd, &attr);
		r = auxcap_event_id(s->sys, fd, &sid.id);
		sid.cpu = set->cpu < 0 ? 0 : (uint32_t)set->cpu;
		auxcap_sample_layout_from_attr(attr, &lay);
		if (r >= 0)
			r = auxcap_proc_synthesize_all(proc, &lay, &sid, synth_record, &c);
	}
	return r < 0 ? r : c.n;
}
