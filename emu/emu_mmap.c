/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Emulated perf buffers and their mappings (spec 2.1, 2.2).
 *
 * A buffer is memfd-backed so that every consumer mmap() is a real, separate mapping of the
 * same pages (only page 0 writable, as the kernel allows), while the producer writes through
 * its own view.  Divisions: buffers (refcounted: events pointing at them plus mappings), the
 * data ring and AUX mmap rules with the kernel's errnos in the kernel's order, munmap.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>

#include "emu_int.h"

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

void emu_buffer_put(struct emu_buffer *b)
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

void emu_event_set_buffer(struct emu_event *ev, struct emu_buffer *b)
{
	struct emu_buffer *old = ev->buf;

	if (old == b)
		return;
	if (b)
		b->refs++;
	ev->buf = b;
	emu_buffer_put(old);
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

	/* (errno checked: a failure is a negative errno, never 0) */
	if (p == MAP_FAILED)
		return errno > 0 ? -errno : -ENOMEM;
	/* Only the control page takes stores (spec 2.1: other pages fault even if PROT_WRITE). */
	if ((prot & PROT_WRITE) && writable < len &&
	    mprotect((unsigned char *)p + writable, len - writable, prot & ~PROT_WRITE) < 0) {
		int r = errno > 0 ? -errno : -ENOMEM;

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

int emu_sys_mmap(void *ctx, size_t len, int prot, int flags, int fd, off_t off, void **ret_addr)
{
	struct auxcap_emu *emu = ctx;
	struct emu_event *ev;
	size_t vma;
	int r;

	emu_lock(emu);
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

void emu_unmap_locked(struct auxcap_emu *emu, size_t idx)
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

int emu_sys_munmap(void *ctx, void *addr, size_t len)
{
	struct auxcap_emu *emu = ctx;
	unsigned char *a = addr;

	emu_lock(emu);
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
