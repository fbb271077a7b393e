/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Feeding trace sources to the hardware: on demand (auxcap_emu_step(), auxcap_emu_write())
 * or from the producer thread, which runs concurrently with the consumer.  Both hold
 * emu->lock while they produce, so the driver and ring state stay consistent; the consumer
 * never takes it to read the rings.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu_int.h"

#define EMU_CHUNK_MAX (1u << 16) /* bytes asked of a source at once */
#define EMU_DROP_MAX (1u << 20)	 /* bytes a pass drops at most while the hardware is off */

void emu_event_drop_source(struct emu_event *ev)
{
	if (ev->src_ops && ev->src_ops->free)
		ev->src_ops->free(ev->src);
	ev->src_ops = NULL;
	ev->src = NULL;
	ev->src_done = true;
}

int emu_event_feed(struct emu_event *ev, size_t max, bool paced, size_t *ret_offered)
{
	struct auxcap_emu_item item;
	size_t offered = 0;
	int items = 0, r = 0;

	if (!ev->src_ops)
		return -ENOENT;
	if (!ev->scratch) {
		ev->scratch = malloc(EMU_CHUNK_MAX);
		if (!ev->scratch)
			return -ENOMEM;
		ev->scratch_size = EMU_CHUNK_MAX;
	}
	while (!ev->src_done && offered < max) {
		size_t want = max - offered < ev->scratch_size ? max - offered : ev->scratch_size;

		memset(&item, 0, sizeof(item));
		r = ev->src_ops->next(ev->src, ev->scratch, want, paced, &item);
		if (r <= 0) {
			if (r < 0)
				ev->src_done = true;
			break;
		}
		items++;
		if ((item.pid || item.tid) &&
		    (item.pid != ev->task_pid || item.tid != ev->task_tid)) {
			ev->task_pid = item.pid;
			ev->task_tid = item.tid;
			/* The hardware now traces another task (the live tracer's child): a
			 * kernel event of that task announces it with its own ITRACE_START. */
			if (ev->itrace_started)
				(void)emu_data_itrace_start(ev);
		}
		if (item.kind == AUXCAP_EMU_ITEM_TRACE) {
			if (item.len > want)
				item.len = want;
			emu_hw_write(ev, item.data ? item.data : ev->scratch, item.len);
			offered += item.len;
		} else {
			emu_data_sideband(ev, &item);
		}
		if (paced)
			break; /* the thread takes one item per event and pass */
	}
	*ret_offered = offered;
	return r < 0 && r != -ENODATA ? r : items;
}

static struct emu_event *emu_get(struct auxcap_emu *emu, int fd)
{
	if (fd < 0 || fd >= emu->nr_events_slots)
		return NULL;
	return emu->events[fd];
}

ssize_t auxcap_emu_step(struct auxcap_emu *emu, int fd, size_t nbytes)
{
	struct emu_event *ev;
	size_t offered = 0;
	int r;

	if (!emu)
		return -EINVAL;
	emu_lock(emu);
	ev = emu_get(emu, fd);
	if (!ev)
		r = -EBADF;
	else if (ev->advancing)
		r = -EBUSY; /* the producer thread is in its source's advance() */
	else
		r = emu_event_feed(ev, nbytes, false, &offered);
	pthread_mutex_unlock(&emu->lock);
	return r < 0 ? r : (ssize_t)offered;
}

ssize_t auxcap_emu_write(struct auxcap_emu *emu, int fd, const void *buf, size_t len)
{
	struct emu_event *ev;
	ssize_t r;

	if (!emu || (!buf && len))
		return -EINVAL;
	emu_lock(emu);
	ev = emu_get(emu, fd);
	if (!ev)
		r = -EBADF;
	else if (!ev->pers)
		r = -EOPNOTSUPP;
	else
		r = (ssize_t)emu_hw_write(ev, buf, len);
	pthread_mutex_unlock(&emu->lock);
	return r;
}

/* Consumer wakeups the emulated events raised so far (caller holds emu->lock). */
static uint64_t emu_wakeups(const struct auxcap_emu *emu)
{
	uint64_t n = 0;

	for (int fd = 0; fd < emu->nr_events_slots; fd++)
		if (emu->events[fd])
			n += emu->events[fd]->stats.wakeups;
	return n;
}

/*
 * The sources' work that may block (advance()), each without the lock: a traced command
 * asleep in a system call must not hold off the consumer's poll and ioctls (a snapshot's
 * freeze waited 31 s for `sleep 40` to wake).  Called and returns with the lock held;
 * an event closed meanwhile is freed here.
 */
static void advance_sources(struct auxcap_emu *emu)
{
	for (int fd = 0; fd < emu->nr_events_slots; fd++) {
		struct emu_event *ev = emu->events[fd];

		if (!ev || !ev->src_ops || !ev->src_ops->advance || ev->src_done)
			continue;
		ev->advancing = true;
		pthread_mutex_unlock(&emu->lock);
		ev->src_ops->advance(ev->src);
		pthread_mutex_lock(&emu->lock);
		ev->advancing = false;
		if (ev->doomed) {
			emu_event_drop_source(ev);
			free(ev->scratch);
			free(ev);
		}
	}
}

static void *emu_thread_main(void *arg)
{
	struct auxcap_emu *emu = arg;
	const struct timespec idle = { 0, 200000 }; /* 200 us */

	for (;;) {
		bool busy = false, yield;
		uint64_t woke;

		/* Callers waiting for the lock go first (see emu_lock()), for up to 10 ms. */
		if (__atomic_load_n(&emu->lock_waiters, __ATOMIC_ACQUIRE)) {
			struct timespec t0, t;

			clock_gettime(CLOCK_MONOTONIC, &t0);
			do {
				sched_yield();
				clock_gettime(CLOCK_MONOTONIC, &t);
			} while (__atomic_load_n(&emu->lock_waiters, __ATOMIC_ACQUIRE) &&
				 (t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) <
					 10000000L);
		}
		pthread_mutex_lock(&emu->lock);
		if (emu->thread_stop) {
			pthread_mutex_unlock(&emu->lock);
			break;
		}
		advance_sources(emu);
		woke = emu_wakeups(emu);
		for (int fd = 0; fd < emu->nr_events_slots; fd++) {
			struct emu_event *ev = emu->events[fd];
			uint64_t dropped;
			size_t offered = 0;

			if (!ev || !ev->src_ops || ev->src_done)
				continue;
			/* One item per event and pass keeps the lock hold short. */
			dropped = ev->stats.dropped;
			if (emu_event_feed(ev, EMU_CHUNK_MAX, true, &offered) <= 0)
				continue;
			if (!offered || ev->stats.dropped - dropped < offered) {
				busy = true;
				continue;
			}
			/*
			 * The hardware is off (event disabled or stopped): what is due now is
			 * lost.  Take the rest of it at once, up to EMU_DROP_MAX bytes (a paced
			 * source then does not owe a burst when the hardware is back; an unpaced
			 * one has no time to keep), and do not count it as work: a producer
			 * spinning on a stopped event would take the CPU from the consumer that
			 * is to restart it (bench/aux_drain).
			 */
			for (size_t n = offered; n < EMU_DROP_MAX;) {
				/* Not while a consumer waits: it may be the one restarting it. */
				if (__atomic_load_n(&emu->lock_waiters, __ATOMIC_ACQUIRE))
					break;
				dropped = ev->stats.dropped;
				if (emu_event_feed(ev, EMU_CHUNK_MAX, true, &offered) <= 0 ||
				    !offered || ev->stats.dropped - dropped < offered)
					break;
				n += offered;
			}
		}
		/*
		 * Hardware takes no CPU from the consumer it interrupts; this thread does, and
		 * the scheduler tends to place the woken consumer on its CPU (wake-affine), where
		 * it waited for the producer's next passes (bench/aux_drain: a quarter of its
		 * time).  After a pass that woke a consumer, let it run first.
		 */
		yield = busy && woke != emu_wakeups(emu);
		pthread_mutex_unlock(&emu->lock);
		if (!busy)
			nanosleep(&idle, NULL);
		else if (yield)
			sched_yield();
	}
	return NULL;
}

int auxcap_emu_start(struct auxcap_emu *emu)
{
	int r;

	if (!emu)
		return -EINVAL;
	emu_lock(emu);
	if (emu->thread_running) {
		pthread_mutex_unlock(&emu->lock);
		return -EALREADY;
	}
	emu->thread_stop = false;
	r = pthread_create(&emu->thread, NULL, emu_thread_main, emu);
	if (r == 0)
		emu->thread_running = true;
	pthread_mutex_unlock(&emu->lock);
	return -r;
}

void auxcap_emu_stop(struct auxcap_emu *emu)
{
	bool running;

	if (!emu)
		return;
	emu_lock(emu);
	running = emu->thread_running;
	emu->thread_stop = true;
	pthread_mutex_unlock(&emu->lock);
	if (!running)
		return;
	pthread_join(emu->thread, NULL);
	emu_lock(emu);
	emu->thread_running = false;
	pthread_mutex_unlock(&emu->lock);
}
