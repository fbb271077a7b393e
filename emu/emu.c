/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulator object and its syscall seam.
 *
 * Divisions: lifetime (new/free), the fd table, buffers (memfd-backed so that every consumer
 * mmap() is a real, separate mapping of the same pages), the seam functions in syscall order
 * (perf_event_open, mmap with the rules of spec 2.1/2.2, munmap, ioctl, poll, read, close),
 * and the public control functions (sources, flush, inject, stats).
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

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- fd table ------------------------------------------------------------------------ */

static struct emu_event *emu_lookup(struct auxcap_emu *emu, int fd)
{
	if (fd < 0 || fd >= emu->nr_events_slots)
		return NULL;
	return emu->events[fd];
}

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

/* ---- buffers ------------------------------------------------------------------------- */

static void emu_buffer_free_aux(struct emu_buffer *b)
{
	if (b->aux)
		munmap(b->aux, b->aux_size);
	if (b->aux_memfd >= 0)
		close(b->aux_memfd);
	b->aux = NULL;
	b->aux_memfd = -1;
	b->aux_size = 0;
	b->aux_nr_pages = 0;
	b->aux_pgoff = 0;
	b->aux_head = 0;
	b->aux_wakeup = 0;
	b->aux_watermark = 0;
	b->aux_overwrite = false;
	b->aux_nest = false;
}

static void emu_buffer_put(struct emu_buffer *b)
{
	if (!b || --b->refs > 0)
		return;
	emu_buffer_free_aux(b);
	munmap(b->base, b->map_len);
	close(b->data_memfd);
	free(b);
}

static int emu_buffer_new(const struct emu_event *ev, size_t page, size_t nr_pages, bool overwrite,
			  struct emu_buffer **ret)
{
	struct emu_buffer *b;
	int r;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->aux_memfd = -1;
	b->page = page;
	b->nr_pages = nr_pages;
	b->map_len = (1 + nr_pages) * page;
	b->data_memfd = memfd_create("auxcap-emu-ring", MFD_CLOEXEC);
	if (b->data_memfd < 0) {
		r = -errno;
		goto err_free;
	}
	/* A fresh memfd reads as zeroes: the ring starts zero-filled, as the kernel's does. */
	if (ftruncate(b->data_memfd, (off_t)b->map_len) < 0) {
		r = -errno;
		goto err_close;
	}
	b->base = mmap(NULL, b->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, b->data_memfd, 0);
	if (b->base == MAP_FAILED) {
		r = -errno;
		goto err_close;
	}
	b->pc = (struct perf_event_mmap_page *)b->base;
	b->data = b->base + page;
	b->data_size = (uint64_t)nr_pages * page;
	b->overwrite = overwrite;
	b->backward = ev->attr.write_backward;
	if (ev->attr.watermark && ev->attr.wakeup_watermark)
		b->watermark = ev->attr.wakeup_watermark < b->data_size ? ev->attr.wakeup_watermark
									: b->data_size;
	else
		b->watermark = b->data_size / 2;

	/* perf_event_init_userpage(): what a fresh control page holds (spec 1.1). */
	b->pc->version = 0;
	b->pc->compat_version = 0;
	b->pc->cap_bit0_is_deprecated = 1;
	b->pc->size = offsetof(struct perf_event_mmap_page, __reserved);
	b->pc->data_offset = page;
	b->pc->data_size = b->data_size;
	b->refs = 1;
	*ret = b;
	return 0;

err_close:
	close(b->data_memfd);
err_free:
	free(b);
	return r;
}

static void emu_event_set_buffer(struct emu_event *ev, struct emu_buffer *b)
{
	struct emu_buffer *old = ev->buf;

	if (old == b)
		return;
	if (b)
		b->refs++;
	ev->buf = b;
	emu_buffer_put(old);
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
		pthread_mutex_lock(&emu->lock);
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

	pthread_mutex_lock(&emu->lock);
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

/* ---- mmap ---------------------------------------------------------------------------- */

static int emu_maps_add(struct auxcap_emu *emu, const struct emu_mapping *m)
{
	if (emu->nr_maps == emu->maps_cap) {
		size_t n = emu->maps_cap ? emu->maps_cap * 2 : 8;
		struct emu_mapping *p = realloc(emu->maps, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		emu->maps = p;
		emu->maps_cap = n;
	}
	emu->maps[emu->nr_maps++] = *m;
	return 0;
}

/*
 * Under ThreadSanitizer the consumer gets the producer's own view instead of a second mapping
 * of the same pages: TSan tracks memory by address, and only then can it check that every
 * byte the consumer reads was published by a release/acquire pair.  (The write protection of
 * the data pages is lost in that build.)
 */
#if defined(__SANITIZE_THREAD__)
#define EMU_SHARED_VIEWS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define EMU_SHARED_VIEWS 1
#endif
#endif
#ifndef EMU_SHARED_VIEWS
#define EMU_SHARED_VIEWS 0
#endif

/* Map @len bytes of @memfd for the consumer; writes only where the kernel allows them. */
static int emu_map_consumer(int memfd, void *producer_view, size_t len, int prot, size_t writable,
			    void **ret)
{
	void *p;

	if (EMU_SHARED_VIEWS) {
		*ret = producer_view;
		return 0;
	}
	p = mmap(NULL, len, prot, MAP_SHARED, memfd, 0);

	if (p == MAP_FAILED)
		return -errno;
	/* Only the control page takes stores (spec 2.1: other pages fault even if PROT_WRITE). */
	if ((prot & PROT_WRITE) && writable < len &&
	    mprotect((unsigned char *)p + writable, len - writable, prot & ~PROT_WRITE) < 0) {
		int r = -errno;

		munmap(p, len);
		return r;
	}
	*ret = p;
	return 0;
}

static int emu_mmap_data(struct auxcap_emu *emu, struct emu_event *ev, size_t vma, int prot,
			 void **ret_addr)
{
	size_t nr_pages = vma / emu->page - 1;
	struct emu_mapping m = { 0 };
	struct emu_buffer *b = ev->buf;
	bool created = false;
	void *p;
	int r;

	if (nr_pages && !is_pow2(nr_pages))
		return -EINVAL;
	if (nr_pages > INT_MAX)
		return -ENOMEM;
	if (b) {
		/* An existing buffer (own or SET_OUTPUT target) is shared at the same size. */
		if (b->nr_pages != nr_pages)
			return -EINVAL;
	} else {
		r = emu_buffer_new(ev, emu->page, nr_pages, !(prot & PROT_WRITE), &b);
		if (r < 0)
			return r;
		created = true;
	}
	r = emu_map_consumer(b->data_memfd, b->base, vma, prot, emu->page, &p);
	if (r < 0)
		goto err;
	m.addr = p;
	m.len = vma;
	m.buf = b;
	m.event = ev;
	r = emu_maps_add(emu, &m);
	if (r < 0) {
		if (!EMU_SHARED_VIEWS)
			munmap(p, vma);
		goto err;
	}
	if (created) {
		ev->buf = b; /* the creation reference becomes the event's */
		ev->mapped_here = true;
	}
	b->refs++; /* the mapping's */
	b->mmap_count++;
	*ret_addr = p;
	return 0;
err:
	if (created)
		emu_buffer_put(b);
	return r;
}

static int emu_aux_alloc(struct auxcap_emu *emu, struct emu_event *ev, size_t nr_pages,
			 bool overwrite)
{
	struct emu_buffer *b = ev->buf;
	uint64_t size = (uint64_t)nr_pages * emu->page;
	int r;

	if (!ev->pers)
		return -EOPNOTSUPP;
	r = ev->pers->setup_aux ? ev->pers->setup_aux(ev, nr_pages, overwrite) : 0;
	if (r < 0)
		return r;
	b->aux_memfd = memfd_create("auxcap-emu-aux", MFD_CLOEXEC);
	if (b->aux_memfd < 0)
		return -ENOMEM;
	/* Zero-filled, like __GFP_ZERO: snapshot wrap detection relies on it (spec 2.2). */
	if (ftruncate(b->aux_memfd, (off_t)size) < 0)
		goto err;
	b->aux = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, b->aux_memfd, 0);
	if (b->aux == MAP_FAILED) {
		b->aux = NULL;
		goto err;
	}
	b->aux_size = size;
	b->aux_nr_pages = nr_pages;
	b->aux_overwrite = overwrite;
	b->aux_head = 0;
	b->aux_wakeup = 0;
	if (overwrite) {
		b->aux_watermark = 0;
	} else if (ev->attr.aux_watermark) {
		b->aux_watermark = ev->attr.aux_watermark;
	} else {
		b->aux_watermark = size / 2;
		if (b->aux_watermark > UINT32_MAX)
			b->aux_watermark = UINT32_MAX;
	}
	return 0;
err:
	emu_buffer_free_aux(b);
	return -ENOMEM;
}

static int emu_mmap_aux(struct auxcap_emu *emu, struct emu_event *ev, size_t vma, int prot,
			off_t off, void **ret_addr)
{
	struct emu_buffer *b = ev->buf;
	size_t nr_pages = vma / emu->page;
	struct emu_mapping m = { 0 };
	uint64_t aux_offset, aux_size;
	bool created = false;
	void *p;
	int r;

	/* The checks of spec 2.2, in the kernel's order. */
	if (!b)
		return -EINVAL;
	aux_offset = __atomic_load_n(&b->pc->aux_offset, __ATOMIC_RELAXED);
	aux_size = __atomic_load_n(&b->pc->aux_size, __ATOMIC_RELAXED);
	if (aux_offset < b->data_size + emu->page)
		return -EINVAL;
	if (aux_offset != (uint64_t)off)
		return -EINVAL;
	if (b->aux && b->aux_pgoff != aux_offset)
		return -EINVAL;
	if (aux_size != vma)
		return -EINVAL;
	if (b->aux && b->aux_nr_pages != nr_pages)
		return -EINVAL;
	if (!is_pow2(nr_pages))
		return -EINVAL;
	if (!b->aux) {
		r = emu_aux_alloc(emu, ev, nr_pages, !(prot & PROT_WRITE));
		if (r < 0)
			return r;
		b->aux_pgoff = aux_offset;
		created = true;
	}
	r = emu_map_consumer(b->aux_memfd, b->aux, vma, prot, 0, &p);
	if (r < 0)
		goto err;
	m.addr = p;
	m.len = vma;
	m.buf = b;
	m.aux = true;
	m.event = ev;
	r = emu_maps_add(emu, &m);
	if (r < 0) {
		if (!EMU_SHARED_VIEWS)
			munmap(p, vma);
		goto err;
	}
	b->refs++;
	b->mmap_count++;
	b->aux_mmap_count++;
	*ret_addr = p;

	/* Enabled events that could not start for lack of an AUX area start at the next
	 * schedule-in; the emulator makes that happen now. */
	for (int fd = 0; created && fd < emu->nr_events_slots; fd++) {
		struct emu_event *e = emu->events[fd];

		if (e && e->buf == b && e->enabled && !e->hw.active && !e->h.open)
			emu_event_sched_in(e);
	}
	return 0;
err:
	if (created)
		emu_buffer_free_aux(b);
	return r;
}

static int emu_mmap(void *ctx, size_t len, int prot, int flags, int fd, off_t off, void **ret_addr)
{
	struct auxcap_emu *emu = ctx;
	struct emu_event *ev;
	size_t vma;
	int r;

	pthread_mutex_lock(&emu->lock);
	ev = emu_lookup(emu, fd);
	if (!ev) {
		pthread_mutex_unlock(&emu->lock);
		return auxcap_sys_linux.mmap(NULL, len, prot, flags, fd, off, ret_addr);
	}
	/* What mmap(2) itself checks, then perf_mmap(): the length is rounded up to pages. */
	r = -EINVAL;
	if (len == 0 || off < 0 || (uint64_t)off % emu->page || !ret_addr ||
	    len > SIZE_MAX - emu->page)
		goto out;
	vma = (size_t)emu_roundup(len, emu->page);
	if (ev->cpu == -1 && ev->attr.inherit)
		goto out;
	if ((flags & MAP_TYPE) != MAP_SHARED && (flags & MAP_TYPE) != MAP_SHARED_VALIDATE)
		goto out;
	if (off == 0)
		r = emu_mmap_data(emu, ev, vma, prot, ret_addr);
	else
		r = emu_mmap_aux(emu, ev, vma, prot, off, ret_addr);
out:
	pthread_mutex_unlock(&emu->lock);
	return r;
}

/* ---- munmap -------------------------------------------------------------------------- */

static void emu_unmap_locked(struct auxcap_emu *emu, size_t idx)
{
	struct emu_mapping m = emu->maps[idx];
	struct emu_buffer *b = m.buf;

	if (!EMU_SHARED_VIEWS)
		munmap(m.addr, m.len);
	emu->maps[idx] = emu->maps[--emu->nr_maps];
	b->mmap_count--;
	if (m.aux && --b->aux_mmap_count == 0) {
		/* The last AUX mapping: stop every event writing to it, free the pages. */
		for (int fd = 0; fd < emu->nr_events_slots; fd++) {
			struct emu_event *e = emu->events[fd];

			if (e && e->buf == b)
				emu_event_sched_out(e);
		}
		emu_buffer_free_aux(b);
	}
	if (b->mmap_count == 0) {
		/* No mapping left: the events lose their buffer (ring_buffer_attach(NULL)). */
		for (int fd = 0; fd < emu->nr_events_slots; fd++) {
			struct emu_event *e = emu->events[fd];

			if (e && e->buf == b) {
				emu_event_sched_out(e);
				e->mapped_here = false;
				emu_event_set_buffer(e, NULL);
			}
		}
	}
	emu_buffer_put(b);
}

static int emu_munmap(void *ctx, void *addr, size_t len)
{
	struct auxcap_emu *emu = ctx;
	unsigned char *a = addr;

	pthread_mutex_lock(&emu->lock);
	for (size_t i = 0; i < emu->nr_maps; i++) {
		unsigned char *start = emu->maps[i].addr;

		if (a < start || a >= start + emu->maps[i].len)
			continue;
		/* Splitting a perf mapping is refused (spec 2.1). */
		if (a != start || emu_roundup(len, emu->page) != emu->maps[i].len) {
			pthread_mutex_unlock(&emu->lock);
			return -EINVAL;
		}
		emu_unmap_locked(emu, i);
		pthread_mutex_unlock(&emu->lock);
		return 0;
	}
	pthread_mutex_unlock(&emu->lock);
	return auxcap_sys_linux.munmap(NULL, addr, len);
}

/* ---- ioctl --------------------------------------------------------------------------- */

static void emu_event_enable(struct emu_event *ev)
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

	pthread_mutex_lock(&emu->lock);
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

	pthread_mutex_lock(&emu->lock);
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
	int n, waited = 0;

	for (;;) {
		int t = timeout_ms;

		/* An exited task's event reports POLLHUP (spec 4.5) without waiting. */
		for (nfds_t i = 0; i < nfds; i++)
			fds[i].revents = 0;
		if (emu_poll_hup(emu, fds, nfds, &tasks) > 0)
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
	n = 0;
	(void)emu_poll_hup(emu, fds, nfds, &tasks);
	/* poll() reports the buffer's wakeup and clears it (spec 4.5). */
	pthread_mutex_lock(&emu->lock);
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

	pthread_mutex_lock(&emu->lock);
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
	emu_event_drop_source(ev);
	for (size_t i = 0; i < emu->nr_maps; i++)
		if (emu->maps[i].event == ev)
			emu->maps[i].event = NULL;
	emu_event_set_buffer(ev, NULL);
	emu_stats_add(&emu->closed, &ev->stats);
	emu->events[ev->fd] = NULL;
	close(ev->fd);
	free(ev->scratch);
	free(ev);
}

static int emu_close(void *ctx, int fd)
{
	struct auxcap_emu *emu = ctx;
	struct emu_event *ev;

	pthread_mutex_lock(&emu->lock);
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
	emu->sys.mmap = emu_mmap;
	emu->sys.munmap = emu_munmap;
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
	pthread_mutex_lock(&emu->lock);
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
	pthread_mutex_lock(&emu->lock);
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
	pthread_mutex_lock(&emu->lock);
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
	pthread_mutex_lock(&emu->lock);
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
	pthread_mutex_lock(&emu->lock);
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
