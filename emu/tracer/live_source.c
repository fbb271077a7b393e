/* SPDX-License-Identifier: BSD-3-Clause */
/* The live tracer as a pull source of the emulated PMU (see live_source.h). */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "auxcap/timeconv.h"
#include "grow.h"
#include "live_source.h"

#define STEP_BATCH 4096 /* ptrace stops per refill, by default (an instruction, or an
			 * iteration of a REP string instruction) */

struct sb_item {
	struct auxcap_emu_item item;
	char *str; /* owned: file name or comm */
};

#define LS_OPEN_MAX 64 /* calls of the watched function timed at once (recursion) */

struct auxcap_live_source {
	enum auxcap_tracer_format format;
	char **argv;       /* owned copy, NULL for a child made by the caller */
	pid_t child;       /* that child (auxcap_live_source_new_child()), else 0 */
	pid_t attach_tid;  /* the running thread to attach to (auxcap_live_source_new_attach()),
			    * else 0 */
	int stop_req;      /* atomic: auxcap_live_source_request_stop() (the tracer's stop_req) */
	int go_fd;         /* owned: its go pipe until the tracer takes it, else -1 */
	uint64_t max_insns;
	struct auxcap_tracer *tr;
	/* One refill's output, handed out side-band first, then trace bytes. */
	unsigned char *trace;
	size_t trace_len, trace_off, trace_cap;
	struct sb_item *sb;
	size_t sb_len, sb_off, sb_cap;
	bool started, done;
	bool fresh; /* no step made yet: the first may finish a call the task was blocked in */
	int ended;  /* atomic: 1 once the stream is over */
	int drained; /* atomic: 1 once next() handed out its last item */
	int err;    /* error that stopped it, 0 if none */
	int status; /* wait status of the command */
	pid_t pid;  /* atomic: process of the traced thread */
	pid_t tid;  /* the traced thread */
	struct auxcap_tracer_stats stats;
	/* SPE sampling set-up from the event (bind()), as the driver programs the hardware. */
	uint32_t spe_interval;
	bool spe_jitter;
	uint32_t spe_flags, spe_min_latency;
	uint64_t spe_event_filter;
	bool data_maps; /* the event has attr.mmap_data: the tracer reports data mappings */
	bool have_tc; /* side-band times from the tracer's TSC through @tc */
	struct auxcap_perf_time_conv tc;
	uint64_t batch; /* ptrace stops per refill (auxcap_live_source_set_batch()) */
	/* The watched function (auxcap_live_source_set_trigger()). */
	bool trig;
	uint32_t trig_maj, trig_min; /* device and inode of the file it is in */
	uint64_t trig_ino;
	uint64_t trig_offset; /* file offset of its first byte */
	uint64_t trig_addr;   /* its run-time address once a mapping of it is seen, else 0 */
	auxcap_live_source_hit_fn on_hit;
	void *hit_ctx;
	uint64_t hits;	 /* atomic */
	bool hit_pause; /* a hit ended the last refill: the next paced pull gives nothing */
	/* auxcap_live_source_set_trigger_min(): calls timed from entry to return */
	uint64_t min_ns;
	struct {
		uint64_t sp, t0; /* the stack pointer at its entry, when it began */
	} open[LS_OPEN_MAX];    /* calls of it still open, innermost last */
	uint32_t nr_open;
	uint64_t calls, max_ns; /* atomic: calls timed, the longest */
};

static int on_trace(void *ctx, const void *bytes, size_t len)
{
	struct auxcap_live_source *ls = ctx;

	if (auxcap_grow(&ls->trace, &ls->trace_cap, ls->trace_len + len, 65536) < 0)
		return -ENOMEM;
	memcpy(ls->trace + ls->trace_len, bytes, len);
	ls->trace_len += len;
	return 0;
}

static int push_sb(struct auxcap_live_source *ls, const struct auxcap_emu_item *it, const char *s)
{
	struct sb_item *e;

	if (ls->sb_len == ls->sb_cap) {
		size_t cap = ls->sb_cap ? ls->sb_cap * 2 : 16;
		struct sb_item *p = realloc(ls->sb, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		ls->sb = p;
		ls->sb_cap = cap;
	}
	e = &ls->sb[ls->sb_len];
	e->item = *it;
	e->str = strdup(s ? s : "");
	if (!e->str)
		return -ENOMEM;
	ls->sb_len++;
	return 0;
}

static int on_sideband(void *ctx, const struct auxcap_tracer_sideband *sb)
{
	struct auxcap_live_source *ls = ctx;
	struct auxcap_emu_item it;

	memset(&it, 0, sizeof(it));
	it.pid = sb->pid;
	it.tid = sb->tid;
	/* The mapping (or exec) was made by the system call that stopped the child, before the
	 * instructions traced at this same TSC: one ns earlier keeps it ordered before them. */
	if (ls->have_tc && sb->tsc)
		it.time = auxcap_time_conv_to_ns(&ls->tc, sb->tsc) - 1;
	switch (sb->type) {
	case AUXCAP_TRACER_SB_COMM:
		it.kind = AUXCAP_EMU_ITEM_COMM;
		it.u.comm.exec = sb->comm.exec;
		ls->tid = (pid_t)sb->tid;
		__atomic_store_n(&ls->pid, (pid_t)sb->pid, __ATOMIC_RELEASE);
		return push_sb(ls, &it, sb->comm.comm);
	case AUXCAP_TRACER_SB_MMAP:
		/* The mapping that holds the watched function's first byte gives its address. */
		if (ls->trig && (sb->mmap.prot & PROT_EXEC) && sb->mmap.maj == ls->trig_maj &&
		    sb->mmap.min == ls->trig_min && sb->mmap.ino == ls->trig_ino &&
		    ls->trig_offset >= sb->mmap.pgoff &&
		    ls->trig_offset - sb->mmap.pgoff < sb->mmap.len)
			ls->trig_addr = sb->mmap.addr + (ls->trig_offset - sb->mmap.pgoff);
		it.kind = AUXCAP_EMU_ITEM_MMAP2;
		it.u.mmap2.addr = sb->mmap.addr;
		it.u.mmap2.len = sb->mmap.len;
		it.u.mmap2.pgoff = sb->mmap.pgoff;
		it.u.mmap2.maj = sb->mmap.maj;
		it.u.mmap2.min = sb->mmap.min;
		it.u.mmap2.ino = sb->mmap.ino;
		it.u.mmap2.prot = sb->mmap.prot;
		it.u.mmap2.flags = sb->mmap.flags;
		return push_sb(ls, &it, sb->mmap.path);
	case AUXCAP_TRACER_SB_EXIT:
		ls->status = sb->exit.status;
		return 0;
	case AUXCAP_TRACER_SB_START:
	default:
		return 0; /* the emulated driver writes ITRACE_START itself */
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * With a minimum duration: the watched function's calls, from its first instruction (the
 * stack pointer then points at the return address) to the ret that pops that address (the
 * stack pointer before it is the same).  A ret above it (a longjmp, an exception unwound
 * past the call) ends the call without a time.  Returns the time of a return that ended a
 * call of at least min_ns, else 0.
 */
static uint64_t time_call(struct auxcap_live_source *ls, const struct auxcap_tracer_insn *insn,
			  uint64_t *call_ns)
{
	uint64_t t, d;

	if (insn->ip == ls->trig_addr) {
		if (ls->nr_open == LS_OPEN_MAX) { /* runaway: the oldest goes */
			memmove(ls->open, ls->open + 1, (LS_OPEN_MAX - 1) * sizeof(ls->open[0]));
			ls->nr_open--;
		}
		ls->open[ls->nr_open].sp = insn->sp;
		ls->open[ls->nr_open++].t0 = now_ns();
		return 0;
	}
	if (insn->kind != AUXCAP_TRACER_RETURN)
		return 0;
	while (ls->nr_open && insn->sp > ls->open[ls->nr_open - 1].sp)
		ls->nr_open--; /* unwound past */
	if (!ls->nr_open || insn->sp != ls->open[ls->nr_open - 1].sp)
		return 0;
	t = now_ns();
	ls->nr_open--;
	d = t - ls->open[ls->nr_open].t0;
	__atomic_fetch_add(&ls->calls, 1, __ATOMIC_RELAXED);
	if (d > __atomic_load_n(&ls->max_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&ls->max_ns, d, __ATOMIC_RELAXED);
	*call_ns = d;
	return d >= ls->min_ns ? t : 0;
}

/* Every executed instruction, while a function is watched: a hit at its first one (with a
 * minimum duration: at the return of a call that long). */
static int on_insn(void *ctx, const struct auxcap_tracer_insn *insn)
{
	struct auxcap_live_source *ls = ctx;
	uint64_t t, call_ns = 0;
	pid_t pid;

	if (!ls->trig_addr)
		return 0;
	if (ls->min_ns) {
		t = time_call(ls, insn, &call_ns);
		if (!t)
			return 0;
	} else {
		if (insn->ip != ls->trig_addr)
			return 0;
		/* The stop after the instruction: as close to the hit as the tracer sees it. */
		t = now_ns();
	}
	__atomic_fetch_add(&ls->hits, 1, __ATOMIC_RELAXED);
	pid = __atomic_load_n(&ls->pid, __ATOMIC_ACQUIRE);
	/* End the refill here: the trace up to the hit goes out now, and the emulator's lock
	 * is released for the snapshot the hit asks for (not after the rest of the refill). */
	auxcap_tracer_yield(ls->tr);
	ls->hit_pause = true;
	if (ls->on_hit)
		ls->on_hit(ls->hit_ctx, t, (uint32_t)pid, (uint32_t)ls->tid, call_ns);
	return 0;
}

static void reset_batch(struct auxcap_live_source *ls)
{
	for (size_t i = 0; i < ls->sb_len; i++)
		free(ls->sb[i].str);
	ls->sb_len = ls->sb_off = 0;
	ls->trace_len = ls->trace_off = 0;
}

static int finish(struct auxcap_live_source *ls, int err)
{
	ls->err = err;
	ls->done = true;
	if (ls->tr)
		(void)auxcap_tracer_get_stats(ls->tr, &ls->stats);
	__atomic_store_n(&ls->ended, 1, __ATOMIC_RELEASE);
	return err < 0 ? err : -ENODATA;
}

static int start(struct auxcap_live_source *ls)
{
	struct auxcap_tracer_opts o = {
		.sz = sizeof(o),
		.format = ls->format,
		.max_insns = ls->max_insns,
		.on_trace = on_trace,
		.on_sideband = on_sideband,
		.on_insn = ls->trig ? on_insn : NULL,
		.ctx = ls,
		.spe_interval = ls->spe_interval,
		.spe_jitter = ls->spe_jitter,
		.spe_flags = ls->spe_flags,
		.spe_min_latency = ls->spe_min_latency,
		.spe_event_filter = ls->spe_event_filter,
		.break_at_far = true, /* system calls are stepped by live_advance() */
		.stop_req = &ls->stop_req,
		.data_maps = ls->data_maps,
	};
	int r;

	ls->started = true;
	ls->fresh = true;
	r = auxcap_tracer_new(&o, &ls->tr);
	if (r < 0)
		return r;
	if (ls->child > 0) {
		int go = ls->go_fd;

		ls->go_fd = -1; /* the tracer closes it */
		return auxcap_tracer_start_child(ls->tr, ls->child, go);
	}
	if (ls->attach_tid > 0)
		return auxcap_tracer_attach(ls->tr, ls->attach_tid);
	return auxcap_tracer_start(ls->tr, ls->argv);
}

/* A new refill: single-step up to @n stops (the last refill's output is all handed out). */
static int refill(struct auxcap_live_source *ls, uint64_t n)
{
	int r;

	reset_batch(ls);
	ls->fresh = false;
	r = auxcap_tracer_step(ls->tr, n);
	if (r < 0) {
		__atomic_store_n(&ls->drained, 1, __ATOMIC_RELEASE);
		return finish(ls, r);
	}
	if (r == 0) {
		int st;

		if (auxcap_tracer_exit_status(ls->tr, &st) == 1)
			ls->status = st;
		(void)finish(ls, 0); /* hand out what the last batch produced first */
	}
	return 0;
}

/*
 * Without the emulator's lock (auxcap_emu_source_ops.advance): the system call the child is
 * about to make, which may block (a sleep, a read from a pipe, accept()), once the output
 * before it is out; refills stop before one (opts.break_at_far); or the first step, which
 * finishes the call a task attached to may be blocked in.  Under the lock, such a step
 * held off the consumer's poll, ioctl and snapshot for as long as the call took.
 */
static void live_advance(void *ctx)
{
	struct auxcap_live_source *ls = ctx;

	if (!ls->started || ls->done || ls->hit_pause || ls->sb_off < ls->sb_len ||
	    ls->trace_off < ls->trace_len || !(ls->fresh || auxcap_tracer_at_far(ls->tr)))
		return;
	(void)refill(ls, 1); /* an error ends the stream: next() says so */
}

static int live_next(void *ctx, void *buf, size_t max, bool paced, struct auxcap_emu_item *ret)
{
	struct auxcap_live_source *ls = ctx;
	int r;

	if (!ls->started && (r = start(ls)) < 0) {
		__atomic_store_n(&ls->drained, 1, __ATOMIC_RELEASE);
		return finish(ls, r);
	}
	for (;;) {
		if (ls->sb_off < ls->sb_len) {
			struct sb_item *e = &ls->sb[ls->sb_off++];

			*ret = e->item;
			if (e->item.kind == AUXCAP_EMU_ITEM_MMAP2)
				ret->u.mmap2.filename = e->str;
			else
				ret->u.comm.comm = e->str;
			return 1;
		}
		if (ls->trace_off < ls->trace_len) {
			size_t n = ls->trace_len - ls->trace_off;

			if (n > max)
				n = max;
			memcpy(buf, ls->trace + ls->trace_off, n);
			ls->trace_off += n;
			memset(ret, 0, sizeof(*ret));
			ret->kind = AUXCAP_EMU_ITEM_TRACE;
			ret->pid = (uint32_t)ls->pid;
			ret->tid = (uint32_t)ls->tid;
			ret->len = n;
			return 1;
		}
		if (ls->done) {
			__atomic_store_n(&ls->drained, 1, __ATOMIC_RELEASE);
			return -ENODATA;
		}
		/*
		 * A hit ended the last refill, whose trace is out now: nothing more this once, so
		 * the producer thread sleeps a moment instead of starting the next refill under
		 * the emulator's lock, and the snapshot the hit asked for freezes the trace in
		 * place (without this, the freeze waited for a whole refill, 1.5 ms here).
		 */
		if (paced && ls->hit_pause) {
			ls->hit_pause = false;
			return 0;
		}
		/* the producer thread steps a system call without the lock: live_advance(); and the
		 * first step, which may finish a call a task attached to was blocked in */
		if (paced && (ls->fresh || auxcap_tracer_at_far(ls->tr)))
			return 0;
		r = refill(ls, ls->batch ? ls->batch : STEP_BATCH);
		if (r < 0)
			return r;
		/* A refill can make no output (REP iterations, TNT bits held back): the thread
		 * comes back for more after letting the consumer in (refill after refill, a
		 * memset took 4 s under the lock). */
		if (paced && !ls->done && !ls->sb_len && !ls->trace_len)
			return 0;
	}
}

/*
 * The event the source feeds: for Arm SPE, its attr says what the driver would program
 * (drivers/perf/arm_spe_pmu.c; the format bits are the driver's: ts_enable config:0,
 * jitter config:16, branch/load/store_filter config:32-34, event_filter config1,
 * min_latency config2:0-11): the sampling interval is sample_period.
 */
static int live_bind(void *ctx, const struct auxcap_emu_source_target *t)
{
	struct auxcap_live_source *ls = ctx;
	const struct perf_event_attr *a = t->attr;

	if (!a)
		return 0;
	ls->data_maps = a->mmap_data; /* the data mappings' side-band is asked for */
	if (ls->format != AUXCAP_TRACER_ARM_SPE)
		return 0;
	ls->spe_interval = a->sample_period > UINT32_MAX ? UINT32_MAX : (uint32_t)a->sample_period;
	ls->spe_jitter = (a->config >> 16) & 1;
	ls->spe_flags = 0;
	if (!(a->config & 1))
		ls->spe_flags |= AUXCAP_TRACER_SPE_NO_TIMESTAMP;
	if ((a->config >> 32) & 1)
		ls->spe_flags |= AUXCAP_TRACER_SPE_FILTER_BRANCH;
	if ((a->config >> 33) & 1)
		ls->spe_flags |= AUXCAP_TRACER_SPE_FILTER_LOAD;
	if ((a->config >> 34) & 1)
		ls->spe_flags |= AUXCAP_TRACER_SPE_FILTER_STORE;
	ls->spe_min_latency = (uint32_t)(a->config2 & 0xfff);
	if (ls->spe_min_latency)
		ls->spe_flags |= AUXCAP_TRACER_SPE_MIN_LATENCY;
	ls->spe_event_filter = a->config1;
	return 0;
}

static void live_free(void *ctx)
{
	auxcap_live_source_free(ctx);
}

const struct auxcap_emu_source_ops auxcap_live_source_ops = {
	.name = "live-tracer",
	.bind = live_bind,
	.next = live_next,
	.free = live_free,
	.advance = live_advance,
};

/* A new source of @format, nothing to trace set yet; NULL if out of memory. */
static struct auxcap_live_source *source_alloc(enum auxcap_tracer_format format,
					      uint64_t max_insns)
{
	struct auxcap_live_source *ls = calloc(1, sizeof(*ls));

	if (ls) {
		ls->format = format;
		ls->max_insns = max_insns;
		ls->go_fd = -1;
	}
	return ls;
}

int auxcap_live_source_new(enum auxcap_tracer_format format, char *const argv[],
			   uint64_t max_insns, struct auxcap_live_source **ret)
{
	struct auxcap_live_source *ls;
	size_t n = 0;

	if (!argv || !argv[0] || !ret || format >= AUXCAP_TRACER_FORMAT_MAX)
		return -EINVAL;
	while (argv[n])
		n++;
	ls = source_alloc(format, max_insns);
	if (!ls)
		return -ENOMEM;
	ls->argv = calloc(n + 1, sizeof(char *));
	if (!ls->argv) {
		free(ls);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		ls->argv[i] = strdup(argv[i]);
		if (!ls->argv[i]) {
			auxcap_live_source_free(ls);
			return -ENOMEM;
		}
	}
	*ret = ls;
	return 0;
}

int auxcap_live_source_new_child(enum auxcap_tracer_format format, pid_t pid, int go_fd,
				 uint64_t max_insns, struct auxcap_live_source **ret)
{
	struct auxcap_live_source *ls;

	if (pid <= 0 || go_fd < 0 || !ret || format >= AUXCAP_TRACER_FORMAT_MAX)
		return -EINVAL;
	ls = source_alloc(format, max_insns);
	if (!ls)
		return -ENOMEM;
	ls->child = pid;
	ls->go_fd = go_fd;
	*ret = ls;
	return 0;
}

int auxcap_live_source_new_attach(enum auxcap_tracer_format format, pid_t tid,
				  uint64_t max_insns, struct auxcap_live_source **ret)
{
	struct auxcap_live_source *ls;

	if (tid <= 0 || !ret || format >= AUXCAP_TRACER_FORMAT_MAX)
		return -EINVAL;
	ls = source_alloc(format, max_insns);
	if (!ls)
		return -ENOMEM;
	ls->attach_tid = tid;
	*ret = ls;
	return 0;
}

void auxcap_live_source_request_stop(struct auxcap_live_source *ls)
{
	if (ls)
		__atomic_store_n(&ls->stop_req, 1, __ATOMIC_RELEASE);
}

void auxcap_live_source_free(struct auxcap_live_source *ls)
{
	if (!ls)
		return;
	if (ls->tr) {
		/* A command we started dies with us; a thread attached to runs on. */
		(void)auxcap_tracer_stop(ls->tr, ls->attach_tid <= 0);
		auxcap_tracer_free(ls->tr);
	}
	if (ls->go_fd >= 0)
		(void)close(ls->go_fd); /* the child reads end-of-file and exits without running */
	reset_batch(ls);
	free(ls->sb);
	free(ls->trace);
	for (size_t i = 0; ls->argv && ls->argv[i]; i++)
		free(ls->argv[i]);
	free(ls->argv);
	free(ls);
}

bool auxcap_live_source_ended(const struct auxcap_live_source *ls, int *ret_err, int *ret_status)
{
	if (!__atomic_load_n(&ls->ended, __ATOMIC_ACQUIRE))
		return false;
	if (ret_err)
		*ret_err = ls->err;
	if (ret_status)
		*ret_status = ls->status;
	return true;
}

int auxcap_live_source_set_trigger(struct auxcap_live_source *ls, const char *binary,
				   uint64_t file_offset, auxcap_live_source_hit_fn on_hit,
				   void *ctx)
{
	struct stat st;

	if (!ls || !binary || ls->started)
		return -EINVAL;
	if (stat(binary, &st) < 0)
		return -errno;
	ls->trig = true;
	ls->trig_maj = major(st.st_dev);
	ls->trig_min = minor(st.st_dev);
	ls->trig_ino = st.st_ino;
	ls->trig_offset = file_offset;
	ls->on_hit = on_hit;
	ls->hit_ctx = ctx;
	return 0;
}

int auxcap_live_source_set_trigger_min(struct auxcap_live_source *ls, uint64_t min_ns)
{
	if (!ls || ls->started || !ls->trig)
		return -EINVAL;
	ls->min_ns = min_ns;
	return 0;
}

void auxcap_live_source_calls(const struct auxcap_live_source *ls, uint64_t *calls,
			      uint64_t *max_ns)
{
	*calls = __atomic_load_n(&ls->calls, __ATOMIC_ACQUIRE);
	*max_ns = __atomic_load_n(&ls->max_ns, __ATOMIC_ACQUIRE);
}

void auxcap_live_source_set_batch(struct auxcap_live_source *ls, uint64_t steps)
{
	ls->batch = steps;
}

uint64_t auxcap_live_source_hits(const struct auxcap_live_source *ls)
{
	return __atomic_load_n(&ls->hits, __ATOMIC_ACQUIRE);
}

void auxcap_live_source_set_time_conv(struct auxcap_live_source *ls,
				      const struct auxcap_perf_time_conv *tc)
{
	ls->have_tc = tc && tc->cap_user_time_zero;
	if (ls->have_tc)
		ls->tc = *tc;
}

bool auxcap_live_source_drained(const struct auxcap_live_source *ls)
{
	return __atomic_load_n(&ls->drained, __ATOMIC_ACQUIRE);
}

pid_t auxcap_live_source_pid(const struct auxcap_live_source *ls)
{
	return __atomic_load_n(&ls->pid, __ATOMIC_ACQUIRE);
}

void auxcap_live_source_stats(const struct auxcap_live_source *ls, struct auxcap_tracer_stats *ret)
{
	*ret = ls->stats;
}
