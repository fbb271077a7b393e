/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulator object and its syscall seam.
 *
 * Divisions: the fd table, the seam functions in syscall order (perf_event_open with the
 * kernel's attr checks, ioctl, poll, read, close; mmap and munmap are in emu_mmap.c),
 * lifetime (new/free), and the public control functions (sources, flush, inject, stats).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/eventfd.h>
#include <sys/mman.h>

#include "emu_int.h"

static const struct emu_personality *const personalities[AUXCAP_EMU_PMU_COUNT] = {
	[AUXCAP_EMU_PMU_INTEL_PT] = &emu_pt_personality,
	[AUXCAP_EMU_PMU_INTEL_BTS] = &emu_bts_personality,
	[AUXCAP_EMU_PMU_ARM_SPE] = &emu_spe_personality,
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- fd table ------------------------------------------------------------------------ */

static int emu_table_put(struct auxcap_emu *emu, int fd, struct emu_event *ev)
{
	if (fd >= emu->nr_events_slots) {
		int n = fd + 64;
		struct emu_event **p = realloc(emu->events, (size_t)n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		memset(p + emu->nr_events_slots, 0,
		       (size_t)(n - emu->nr_events_slots) * sizeof(*p));
		emu->events = p;
		emu->nr_events_slots = n;
	}
	emu->events[fd] = ev;
	return 0;
}

/* ---- perf_event_open ----------------------------------------------------------------- */

static int emu_check_attr_size(struct perf_event_attr *attr, size_t *ret_size)
{
	size_t size = attr->size ? attr->size : PERF_ATTR_SIZE_VER0;

	if (size < PERF_ATTR_SIZE_VER0 || size > 4096)
		goto too_big;
	if (size > sizeof(*attr)) {
		const unsigned char *p = (const unsigned char *)attr;

		for (size_t i = sizeof(*attr); i < size; i++)
			if (p[i])
				goto too_big;
	}
	*ret_size = size;
	return 0;
too_big:
	/* The kernel writes back the size it knows. */
	attr->size = sizeof(*attr);
	return -E2BIG;
}

/* Give @ops/@src to @ev, letting the source look at the event first. */
static int emu_event_bind_source(struct emu_event *ev, const struct auxcap_emu_source_ops *ops,
				 void *src)
{
	struct auxcap_emu_source_target t = {
		.pmu = ev->pmu, .attr = &ev->attr, .pid = ev->pid, .cpu = ev->cpu, .id = ev->id
	};
	int r = ops->bind ? ops->bind(src, &t) : 0;

	if (r < 0)
		return r;
	ev->src_ops = ops;
	ev->src = src;
	ev->src_done = false;
	return 0;
}

/*
 * PERF_PMU_CAP_EXCLUSIVE: one event of a PMU per context (a task, or a CPU) and CPU, and
 * Intel PT and BTS exclude each other through the x86 LBR/BTS/PT slot (spec 5.1): -EBUSY at
 * open.  @task is -1 for a CPU context.
 */
static int emu_check_exclusive(struct auxcap_emu *emu, enum auxcap_emu_pmu pmu, pid_t task, int cpu)
{
	for (int fd = 0; fd < emu->nr_events_slots; fd++) {
		const struct emu_event *e = emu->events[fd];

		if (!e)
			continue;
		if ((pmu == AUXCAP_EMU_PMU_INTEL_PT && e->pmu == AUXCAP_EMU_PMU_INTEL_BTS) ||
		    (pmu == AUXCAP_EMU_PMU_INTEL_BTS && e->pmu == AUXCAP_EMU_PMU_INTEL_PT))
			return -EBUSY;
		if (e->pmu != pmu || e->pid != task)
			continue;
		if (task == -1 ? e->cpu == cpu : e->cpu == -1 || cpu == -1 || e->cpu == cpu)
			return -EBUSY;
	}
	return 0;
}

static int emu_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		    unsigned long flags)
{
	const unsigned long known = PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_OUTPUT |
				    PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC;
	struct auxcap_emu *emu = ctx;
	struct emu_event *ev = NULL;
	struct perf_event_attr a;
	enum auxcap_emu_pmu pmu;
	bool self;
	size_t size;
	long ncpu;
	int fd = -1, r;

	if (!attr || attr->type < AUXCAP_EMU_TYPE_BASE ||
	    attr->type >= AUXCAP_EMU_TYPE_BASE + AUXCAP_EMU_PMU_COUNT) {
		emu_lock(emu);
		ev = emu_lookup(emu, group_fd);
		pthread_mutex_unlock(&emu->lock);
		/* The real kernel cannot put its event in a group it does not know. */
		if (ev)
			return -EINVAL;
		return auxcap_sys_linux.perf_event_open(NULL, attr, pid, cpu, group_fd, flags);
	}
	pmu = (enum auxcap_emu_pmu)(attr->type - AUXCAP_EMU_TYPE_BASE);
	if (!(emu->opts.pmus & (1u << pmu)))
		return -ENOENT; /* no such PMU here, as the kernel says for an unknown type */

	r = emu_check_attr_size(attr, &size);
	if (r < 0)
		return r;
	/* What the kernel reads: @size bytes, the rest zero. */
	memset(&a, 0, sizeof(a));
	memcpy(&a, attr, size < sizeof(a) ? size : sizeof(a));
	a.size = (uint32_t)size;
	if (flags & ~known)
		return -EINVAL;
	ncpu = sysconf(_SC_NPROCESSORS_CONF);
	if (cpu < -1 || (ncpu > 0 && cpu >= ncpu))
		return -EINVAL;
	if (pid == -1 && cpu == -1)
		return -EINVAL;
	if (pid > 0 && kill(pid, 0) < 0 && errno == ESRCH)
		return -ESRCH;
	/* Reserved fields (aux_action is __reserved_3 before 6.13): as a 6.1 kernel. */
	if (a.__reserved_1 || a.__reserved_2 || a.__reserved_3)
		return -EINVAL;
	r = personalities[pmu]->check_attr ? personalities[pmu]->check_attr(&a) : 0;
	if (r < 0)
		return r;

	emu_lock(emu);
	if (group_fd != -1 && !emu_lookup(emu, group_fd)) {
		r = fcntl(group_fd, F_GETFD) < 0 ? -EBADF : -EINVAL;
		goto out_unlock;
	}
	self = pid == 0;
	if (self)
		pid = getpid(); /* the calling task: the event's context */
	r = emu_check_exclusive(emu, pmu, pid, cpu);
	if (r < 0)
		goto out_unlock;
	ev = calloc(1, sizeof(*ev));
	if (!ev) {
		r = -ENOMEM;
		goto out_unlock;
	}
	fd = eventfd(0, EFD_NONBLOCK | ((flags & PERF_FLAG_FD_CLOEXEC) ? EFD_CLOEXEC : 0));
	if (fd < 0) {
		r = -errno;
		goto err_free;
	}
	r = emu_table_put(emu, fd, ev);
	if (r < 0)
		goto err_close;

	ev->emu = emu;
	ev->fd = fd;
	ev->pmu = pmu;
	ev->pers = personalities[pmu];
	ev->attr = a;
	ev->pid = pid;
	ev->cpu = cpu;
	ev->id = emu->next_id++;
	ev->task_pid = (uint32_t)(pid > 0 ? pid : getpid());
	ev->task_tid = (uint32_t)(self || pid <= 0 ? gettid() : pid);

	for (size_t i = 0; i < emu->nr_pending; i++) {
		if (emu->pending[i].pmu != pmu)
			continue;
		if (emu_event_bind_source(ev, emu->pending[i].ops, emu->pending[i].ctx) < 0 &&
		    emu->pending[i].ops->free)
			emu->pending[i].ops->free(emu->pending[i].ctx);
		memmove(&emu->pending[i], &emu->pending[i + 1],
			(emu->nr_pending - i - 1) * sizeof(emu->pending[0]));
		emu->nr_pending--;
		break;
	}
	if (!a.disabled) {
		ev->enabled = true;
		ev->enabled_since = mono_ns();
		emu_event_sched_in(ev);
	}
	r = fd;
	goto out_unlock;

err_close:
	close(fd);
err_free:
	free(ev);
out_unlock:
	pthread_mutex_unlock(&emu->lock);
	return r;
}

/* ---- ioctl --------------------------------------------------------------------------- */

void emu_event_enable(struct emu_event *ev)
{
	if (ev->enabled)
		return;
	ev->enabled = true;
	ev->enabled_since = mono_ns();
	emu_event_sched_in(ev);
}

void emu_event_disable(struct emu_event *ev)
{
	if (!ev->enabled)
		return;
	emu_event_sched_out(ev);
	ev->enabled = false;
	ev->enabled_ns += mono_ns() - ev->enabled_since;
}

static bool fd_is_real_perf(int fd)
{
	char path[64], link[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return strstr(link, "perf_event") != NULL;
}

static int emu_set_output(struct auxcap_emu *emu, struct emu_event *ev, int target_fd)
{
	struct emu_event *t;

	if (target_fd == -1) {
		if (ev->mapped_here && ev->buf && ev->buf->mmap_count)
			return -EINVAL;
		emu_event_sched_out(ev);
		emu_event_set_buffer(ev, NULL);
		return 0;
	}
	t = emu_lookup(emu, target_fd);
	if (!t) {
		if (fcntl(target_fd, F_GETFD) < 0 || !fd_is_real_perf(target_fd))
			return -EBADF;
		return -EINVAL; /* a real kernel buffer cannot take emulated output */
	}
	if (t == ev || t->cpu != ev->cpu || (ev->cpu == -1 && t->pid != ev->pid))
		return -EINVAL;
	if (t->attr.use_clockid != ev->attr.use_clockid ||
	    (ev->attr.use_clockid && t->attr.clockid != ev->attr.clockid))
		return -EINVAL;
	if (t->attr.write_backward != ev->attr.write_backward)
		return -EINVAL;
	if (t->pers && ev->pers && t->pmu != ev->pmu)
		return -EINVAL;
	if (ev->mapped_here && ev->buf && ev->buf->mmap_count)
		return -EINVAL;
	if (!t->buf || !t->buf->mmap_count)
		return -EINVAL;
	/* Redirecting an AUX event stops it first; it restarts on the new buffer. */
	emu_event_sched_out(ev);
	ev->mapped_here = false;
	emu_event_set_buffer(ev, t->buf);
	if (ev->enabled)
		emu_event_sched_in(ev);
	return 0;
}

static int emu_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	struct auxcap_emu *emu = ctx;
	struct emu_event *ev;
	int r = 0;

	emu_lock(emu);
	ev = emu_lookup(emu, fd);
	if (!ev) {
		pthread_mutex_unlock(&emu->lock);
		return auxcap_sys_linux.ioctl(NULL, fd, request, arg);
	}
	switch (request) {
	case PERF_EVENT_IOC_ENABLE:
		emu_event_enable(ev);
		break;
	case PERF_EVENT_IOC_DISABLE:
		emu_event_disable(ev);
		break;
	case PERF_EVENT_IOC_RESET:
		break;
	case PERF_EVENT_IOC_ID:
		if (!arg)
			r = -EFAULT;
		else
			memcpy((void *)arg, &ev->id, sizeof(ev->id));
		break;
	case PERF_EVENT_IOC_PAUSE_OUTPUT:
		if (!ev->buf || !ev->buf->nr_pages)
			r = -EINVAL;
		else
			ev->buf->paused = arg != 0;
		break;
	case PERF_EVENT_IOC_SET_OUTPUT:
		r = emu_set_output(emu, ev, (int)arg);
		break;
	case PERF_EVENT_IOC_REFRESH:
	case PERF_EVENT_IOC_PERIOD:
	case PERF_EVENT_IOC_SET_FILTER:
	case PERF_EVENT_IOC_SET_BPF:
	case PERF_EVENT_IOC_QUERY_BPF:
	case PERF_EVENT_IOC_MODIFY_ATTRIBUTES:
		/* Not sampling, no filters or BPF in the emulated PMUs: what the kernel says to
		 * an event that cannot take them. */
		r = -EINVAL;
		break;
	default:
		r = -ENOTTY;
		break;
	}
	pthread_mutex_unlock(&emu->lock);
	return r;
}

/* ---- poll, read, close --------------------------------------------------------------- */

/* The monitored task exited; a zombie counts, since the kernel hangs up at exit. */
static bool emu_task_gone(pid_t pid)
{
	char path[64], stat[512];
	const char *p;
	ssize_t n;
	int fd;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	n = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	if (n <= 0)
		return false;
	stat[n] = '\0';
	p = strrchr(stat, ')'); /* the state follows the command name */
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* Count the emulated per-task fds in @fds and mark those whose task is gone with POLLHUP. */
static int emu_poll_hup(struct auxcap_emu *emu, struct pollfd *fds, nfds_t nfds,
			unsigned int *ret_tasks)
{
	unsigned int tasks = 0;
	int hups = 0;

	emu_lock(emu);
	for (nfds_t i = 0; i < nfds; i++) {
		struct emu_event *ev = emu_lookup(emu, fds[i].fd);

		if (!ev || ev->pid <= 0)
			continue;
		tasks++;
		if (emu_task_gone(ev->pid)) {
			fds[i].revents |= POLLHUP;
			hups++;
		}
	}
	pthread_mutex_unlock(&emu->lock);
	*ret_tasks = tasks;
	return hups;
}

static int emu_poll(void *ctx, struct pollfd *fds, nfds_t nfds, int timeout_ms)
{
	const int slice_ms = 20; /* how soon a task exit is noticed during a long poll */
	struct auxcap_emu *emu = ctx;
	unsigned int tasks;
	int n, hups, waited = 0;

	for (;;) {
		int t = timeout_ms;

		/* An exited task's event reports POLLHUP (spec 4.5) without waiting. */
		for (nfds_t i = 0; i < nfds; i++)
			fds[i].revents = 0;
		hups = emu_poll_hup(emu, fds, nfds, &tasks);
		if (hups > 0)
			t = 0;
		else if (tasks && (timeout_ms < 0 || timeout_ms - waited > slice_ms))
			t = slice_ms;
		else if (timeout_ms >= 0)
			t = timeout_ms - waited;
		n = auxcap_sys_linux.poll(NULL, fds, nfds, t);
		if (n < 0)
			return n;
		if (n > 0 || t == 0 || t == timeout_ms - waited)
			break;
		waited += t;
	}
	/*
	 * poll() cleared the marks: set them again.  Only when there were some: a task that
	 * exits during the wait is seen by the next call (a slice later at most), and looking at
	 * every task after each wake-up (/proc/PID/stat, 35 to 85 us for a task stopped in a
	 * uprobe) was most of the emulated capture's trigger latency (bench/trigger_latency).
	 */
	n = 0;
	if (hups > 0)
		(void)emu_poll_hup(emu, fds, nfds, &tasks);
	/* poll() reports the buffer's wakeup and clears it (spec 4.5). */
	emu_lock(emu);
	for (nfds_t i = 0; i < nfds; i++) {
		uint64_t v;

		if ((fds[i].revents & POLLIN) && emu_lookup(emu, fds[i].fd) &&
		    read(fds[i].fd, &v, sizeof(v)) < 0) {
			/* EAGAIN: nothing to clear */
		}
		n += fds[i].revents != 0;
	}
	pthread_mutex_unlock(&emu->lock);
	return n;
}

static ssize_t emu_read(void *ctx, int fd, void *out, size_t len)
{
	struct auxcap_emu *emu = ctx;
	uint64_t v[8], rf, en;
	struct emu_event *ev;
	size_t n = 0;

	emu_lock(emu);
	ev = emu_lookup(emu, fd);
	if (!ev) {
		pthread_mutex_unlock(&emu->lock);
		return auxcap_sys_linux.read(NULL, fd, out, len);
	}
	rf = ev->attr.read_format;
	en = ev->enabled_ns + (ev->enabled ? mono_ns() - ev->enabled_since : 0);
	if (rf & PERF_FORMAT_GROUP)
		v[n++] = 1;
	else
		v[n++] = 0; /* the count: an AUX PMU counts nothing */
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		v[n++] = en;
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		v[n++] = en;
	if (rf & PERF_FORMAT_GROUP)
		v[n++] = 0;
	if (rf & PERF_FORMAT_ID)
		v[n++] = ev->id;
	if (rf & PERF_FORMAT_LOST)
		v[n++] = ev->lost_samples;
	pthread_mutex_unlock(&emu->lock);
	if (len < n * sizeof(v[0]))
		return -ENOSPC;
	memcpy(out, v, n * sizeof(v[0]));
	return (ssize_t)(n * sizeof(v[0]));
}

static void emu_event_destroy(struct auxcap_emu *emu, struct emu_event *ev)
{
	emu_event_disable(ev);
	for (size_t i = 0; i < emu->nr_maps; i++)
		if (emu->maps[i].event == ev)
			emu->maps[i].event = NULL;
	emu_event_set_buffer(ev, NULL);
	emu_stats_add(&emu->closed, &ev->stats);
	emu->events[ev->fd] = NULL;
	close(ev->fd);
	if (ev->advancing) {
		/* the producer thread is in the source's advance(): it finishes this */
		ev->doomed = true;
		return;
	}
	emu_event_drop_source(ev);
	free(ev->scratch);
	free(ev);
}

static int emu_close(void *ctx, int fd)
{
	struct auxcap_emu *emu = ctx;
	struct emu_event *ev;

	emu_lock(emu);
	ev = emu_lookup(emu, fd);
	if (!ev) {
		pthread_mutex_unlock(&emu->lock);
		return auxcap_sys_linux.close(NULL, fd);
	}
	emu_event_destroy(emu, ev);
	pthread_mutex_unlock(&emu->lock);
	return 0;
}

/* ---- lifetime ------------------------------------------------------------------------ */

int auxcap_emu_new(const struct auxcap_emu_opts *opts, struct auxcap_emu **ret_emu)
{
	struct auxcap_emu_opts o = { 0 };
	struct auxcap_emu *emu;
	long page;

	if (!ret_emu)
		return -EINVAL;
	if (opts) {
		if (opts->sz < offsetof(struct auxcap_emu_opts, pt_region_pages))
			return -EINVAL;
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	}
	o.sz = sizeof(o);
	if (!o.pt_region_pages)
		o.pt_region_pages = 1;
	if (!o.spe_align)
		o.spe_align = 64;
	if (!o.spe_max_record)
		o.spe_max_record = 64;
	if (!o.pmus)
		o.pmus = (1u << AUXCAP_EMU_PMU_COUNT) - 1;
	if (!is_pow2(o.pt_region_pages) || !is_pow2(o.spe_align) || o.spe_align > 2048 ||
	    o.spe_max_record < 16 || o.spe_max_record > 2048 ||
	    (o.pmus & ~((1u << AUXCAP_EMU_PMU_COUNT) - 1)))
		return -EINVAL;
	page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		return -EINVAL;

	emu = calloc(1, sizeof(*emu));
	if (!emu)
		return -ENOMEM;
	emu->opts = o;
	emu->page = (size_t)page;
	emu->next_id = 0x1000;
	pthread_mutex_init(&emu->lock, NULL);
	emu->sys.ctx = emu;
	emu->sys.perf_event_open = emu_open;
	emu->sys.mmap = emu_sys_mmap;
	emu->sys.munmap = emu_sys_munmap;
	emu->sys.ioctl = emu_ioctl;
	emu->sys.poll = emu_poll;
	emu->sys.read = emu_read;
	emu->sys.close = emu_close;
	*ret_emu = emu;
	return 0;
}

void auxcap_emu_free(struct auxcap_emu *emu)
{
	if (!emu)
		return;
	auxcap_emu_stop(emu);
	emu_lock(emu);
	while (emu->nr_maps)
		emu_unmap_locked(emu, emu->nr_maps - 1);
	for (int fd = 0; fd < emu->nr_events_slots; fd++)
		if (emu->events[fd])
			emu_event_destroy(emu, emu->events[fd]);
	for (size_t i = 0; i < emu->nr_pending; i++)
		if (emu->pending[i].ops->free)
			emu->pending[i].ops->free(emu->pending[i].ctx);
	pthread_mutex_unlock(&emu->lock);
	pthread_mutex_destroy(&emu->lock);
	free(emu->pending);
	free(emu->maps);
	free(emu->events);
	free(emu);
}

const struct auxcap_sys *auxcap_emu_sys(struct auxcap_emu *emu)
{
	return emu ? &emu->sys : NULL;
}

int auxcap_emu_pmu_info(const struct auxcap_emu *emu, enum auxcap_emu_pmu pmu,
			struct auxcap_emu_pmu_info *ret_info)
{
	if (!emu || !ret_info || (unsigned int)pmu >= AUXCAP_EMU_PMU_COUNT)
		return -EINVAL;
	if (!(emu->opts.pmus & (1u << pmu)))
		return -ENOENT;
	ret_info->name = personalities[pmu]->name;
	ret_info->type = AUXCAP_EMU_TYPE_BASE + (uint32_t)pmu;
	ret_info->pmu = pmu;
	ret_info->caps = personalities[pmu]->caps;
	ret_info->formats = personalities[pmu]->formats;
	ret_info->nr_formats = personalities[pmu]->nr_formats;
	ret_info->sysfs_caps = personalities[pmu]->sysfs_caps;
	ret_info->nr_sysfs_caps = personalities[pmu]->nr_sysfs_caps;
	ret_info->cpuid = personalities[pmu]->cpuid;
	return 0;
}

int auxcap_emu_pmu_find(const struct auxcap_emu *emu, const char *name,
			struct auxcap_emu_pmu_info *ret_info)
{
	if (!emu || !name || !ret_info)
		return -EINVAL;
	for (int p = 0; p < AUXCAP_EMU_PMU_COUNT; p++)
		if ((emu->opts.pmus & (1u << p)) && !strcmp(personalities[p]->name, name))
			return auxcap_emu_pmu_info(emu, (enum auxcap_emu_pmu)p, ret_info);
	return -ENOENT;
}

/* ---- control ------------------------------------------------------------------------- */

int auxcap_emu_source_attach(struct auxcap_emu *emu, enum auxcap_emu_pmu pmu, int fd,
			     const struct auxcap_emu_source_ops *ops, void *ctx)
{
	struct emu_event *ev;
	int r = 0;

	if (!emu || !ops || !ops->next || (unsigned int)pmu >= AUXCAP_EMU_PMU_COUNT)
		return -EINVAL;
	emu_lock(emu);
	if (fd >= 0) {
		ev = emu_lookup(emu, fd);
		if (!ev) {
			r = -EBADF;
		} else if (ev->src_ops) {
			r = -EBUSY;
		} else {
			r = emu_event_bind_source(ev, ops, ctx);
		}
		goto out;
	}
	if (emu->nr_pending == emu->pending_cap) {
		size_t n = emu->pending_cap ? emu->pending_cap * 2 : 4;
		struct emu_pending_source *p = realloc(emu->pending, n * sizeof(*p));

		if (!p) {
			r = -ENOMEM;
			goto out;
		}
		emu->pending = p;
		emu->pending_cap = n;
	}
	emu->pending[emu->nr_pending].pmu = pmu;
	emu->pending[emu->nr_pending].ops = ops;
	emu->pending[emu->nr_pending].ctx = ctx;
	emu->nr_pending++;
out:
	pthread_mutex_unlock(&emu->lock);
	return r;
}

int auxcap_emu_flush(struct auxcap_emu *emu, int fd)
{
	struct emu_event *ev;

	if (!emu)
		return -EINVAL;
	emu_lock(emu);
	ev = emu_lookup(emu, fd);
	if (ev && ev->enabled) {
		emu_event_sched_out(ev);
		emu_event_sched_in(ev);
	}
	pthread_mutex_unlock(&emu->lock);
	return ev ? 0 : -EBADF;
}

int auxcap_emu_inject(struct auxcap_emu *emu, int fd, enum auxcap_emu_fault fault)
{
	struct emu_event *ev;
	int r;

	if (!emu)
		return -EINVAL;
	emu_lock(emu);
	ev = emu_lookup(emu, fd);
	if (!ev)
		r = -EBADF;
	else if (!ev->pers || !ev->pers->inject)
		r = -EOPNOTSUPP;
	else
		r = ev->pers->inject(ev, fault);
	pthread_mutex_unlock(&emu->lock);
	return r;
}

int auxcap_emu_stats(struct auxcap_emu *emu, int fd, struct auxcap_emu_stats *ret_stats)
{
	struct auxcap_emu_stats s;
	struct emu_event *ev;
	int r = 0;

	if (!emu || !ret_stats)
		return -EINVAL;
	emu_lock(emu);
	if (fd == -1) {
		s = emu->closed;
		for (int i = 0; i < emu->nr_events_slots; i++)
			if (emu->events[i])
				emu_stats_add(&s, &emu->events[i]->stats);
	} else {
		ev = emu_lookup(emu, fd);
		if (ev)
			s = ev->stats;
		else
			r = -EBADF;
	}
	pthread_mutex_unlock(&emu->lock);
	if (r == 0)
		*ret_stats = s;
	return r;
}
