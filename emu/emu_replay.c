/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The replay trace source: a recorded byte stream handed to the hardware in chunks, at a
 * chosen rate, with sideband items (MMAP2, COMM) placed at byte offsets of the stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/stat.h>

#include "emu_int.h"

struct emu_replay_item {
	uint64_t at;		     /* bytes of trace delivered before it */
	struct auxcap_emu_item item; /* strings point into @str */
	char *str;		     /* owned: filename or comm */
};

struct auxcap_emu_replay {
	unsigned char *data; /* owned: the stream */
	size_t len;	     /* bytes at @data */
	size_t pos;	     /* next byte in @data */
	uint64_t delivered;  /* trace bytes handed out (all laps) */
	struct auxcap_emu_replay_opts opts;
	struct emu_replay_item *items; /* owned, sorted by @at */
	size_t nr_items, items_cap;
	size_t next_item;    /* index of the next item due */
	uint64_t t0;	     /* CLOCK_MONOTONIC ns of the first paced call, 0 before */
	uint64_t paced_base; /* @delivered at @t0 */
};

static uint64_t replay_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int replay_next(void *ctx, void *buf, size_t max, bool paced,
		       struct auxcap_emu_item *ret_item)
{
	struct auxcap_emu_replay *rp = ctx;
	struct auxcap_emu_item it = { 0 };
	uint64_t n;

	if (rp->next_item < rp->nr_items && rp->items[rp->next_item].at <= rp->delivered) {
		*ret_item = rp->items[rp->next_item++].item;
		return 1;
	}
	if (rp->pos == rp->len) {
		if (rp->next_item < rp->nr_items && (!rp->opts.loop || !rp->len)) {
			*ret_item = rp->items[rp->next_item++].item; /* placed past the end */
			return 1;
		}
		if (!rp->opts.loop || !rp->len)
			return -ENODATA;
		rp->pos = 0;
	}
	n = rp->len - rp->pos;
	if (n > rp->opts.chunk)
		n = rp->opts.chunk;
	if (n > max)
		n = max;
	/* Stop at the next sideband item so it lands at its offset. */
	if (rp->next_item < rp->nr_items && rp->items[rp->next_item].at - rp->delivered < n)
		n = rp->items[rp->next_item].at - rp->delivered;
	if (paced && rp->opts.rate) {
		uint64_t now = replay_now_ns(), allowed;

		if (!rp->t0) {
			rp->t0 = now;
			rp->paced_base = rp->delivered;
		}
		allowed = (uint64_t)((double)(now - rp->t0) * (double)rp->opts.rate / 1e9) +
			  rp->paced_base - rp->delivered;
		/*
		 * Whole writes only: the next one goes out when all of it is due (a late
		 * producer catches up one write per call).  Handing out what is due so far
		 * instead made the producer thread spin on slivers of a few bytes, taking
		 * the CPU and the emulator's lock from the consumer (bench/aux_drain).
		 */
		if (allowed < n)
			return 0;
	}
	/* Whole granules only (the end of a stream that is not a multiple goes out as is). */
	if (rp->opts.granule > 1 && n < rp->len - rp->pos)
		n -= n % rp->opts.granule;
	if (!n)
		return 0;
	/* The bytes stay where they are: the hardware writes them from here (no copy). */
	(void)buf;
	it.data = rp->data + rp->pos;
	rp->pos += n;
	rp->delivered += n;
	it.kind = AUXCAP_EMU_ITEM_TRACE;
	it.pid = rp->opts.pid;
	it.tid = rp->opts.tid;
	it.len = n;
	*ret_item = it;
	return 1;
}

static void replay_free(void *ctx)
{
	auxcap_emu_replay_free(ctx);
}

const struct auxcap_emu_source_ops auxcap_emu_replay_ops = {
	.name = "replay",
	.bind = NULL,
	.next = replay_next,
	.free = replay_free,
};

int auxcap_emu_replay_new(const void *buf, size_t len, const struct auxcap_emu_replay_opts *opts,
			  struct auxcap_emu_replay **ret_replay)
{
	struct auxcap_emu_replay *rp;

	if ((!buf && len) || !ret_replay)
		return -EINVAL;
	if (opts && opts->sz < offsetof(struct auxcap_emu_replay_opts, rate))
		return -EINVAL;
	rp = calloc(1, sizeof(*rp));
	if (!rp)
		return -ENOMEM;
	if (opts)
		memcpy(&rp->opts, opts, opts->sz < sizeof(rp->opts) ? opts->sz : sizeof(rp->opts));
	rp->opts.sz = sizeof(rp->opts);
	if (!rp->opts.chunk)
		rp->opts.chunk = 4096;
	if (!rp->opts.granule)
		rp->opts.granule = 1;
	if (rp->opts.chunk < rp->opts.granule) {
		free(rp);
		return -EINVAL;
	}
	if (!rp->opts.pid && !rp->opts.tid) {
		rp->opts.pid = (uint32_t)getpid();
		rp->opts.tid = (uint32_t)getpid();
	}
	rp->data = malloc(len ? len : 1);
	if (!rp->data) {
		free(rp);
		return -ENOMEM;
	}
	if (len)
		memcpy(rp->data, buf, len);
	rp->len = len;
	*ret_replay = rp;
	return 0;
}

int auxcap_emu_replay_new_file(const char *path, const struct auxcap_emu_replay_opts *opts,
			       struct auxcap_emu_replay **ret_replay)
{
	unsigned char *data = NULL;
	struct stat st;
	size_t got = 0;
	int fd, r;

	if (!path || !ret_replay)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		goto out_close;
	}
	data = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!data) {
		r = -ENOMEM;
		goto out_close;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, data + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto out_free;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	r = auxcap_emu_replay_new(data, got, opts, ret_replay);
out_free:
	free(data);
out_close:
	close(fd);
	return r;
}

int auxcap_emu_replay_add_item(struct auxcap_emu_replay *rp, uint64_t at,
			       const struct auxcap_emu_item *item)
{
	struct emu_replay_item ri = { 0 };
	const char *s;
	size_t i;

	if (!rp || !item)
		return -EINVAL;
	if (item->kind == AUXCAP_EMU_ITEM_MMAP2)
		s = item->u.mmap2.filename;
	else if (item->kind == AUXCAP_EMU_ITEM_COMM)
		s = item->u.comm.comm;
	else
		return -EINVAL;
	if (rp->nr_items == rp->items_cap) {
		size_t n = rp->items_cap ? rp->items_cap * 2 : 4;
		struct emu_replay_item *p = realloc(rp->items, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		rp->items = p;
		rp->items_cap = n;
	}
	ri.str = strdup(s ? s : "");
	if (!ri.str)
		return -ENOMEM;
	ri.at = at;
	ri.item = *item;
	if (item->kind == AUXCAP_EMU_ITEM_MMAP2)
		ri.item.u.mmap2.filename = ri.str;
	else
		ri.item.u.comm.comm = ri.str;
	/* Insert after every item with the same offset: stable order. */
	for (i = rp->nr_items; i > 0 && rp->items[i - 1].at > at; i--)
		rp->items[i] = rp->items[i - 1];
	rp->items[i] = ri;
	rp->nr_items++;
	return 0;
}

void auxcap_emu_replay_free(struct auxcap_emu_replay *rp)
{
	if (!rp)
		return;
	for (size_t i = 0; i < rp->nr_items; i++)
		free(rp->items[i].str);
	free(rp->items);
	free(rp->data);
	free(rp);
}

int auxcap_emu_replay_attach(struct auxcap_emu *emu, enum auxcap_emu_pmu pmu, int fd,
			     struct auxcap_emu_replay *replay)
{
	if (!replay)
		return -EINVAL;
	return auxcap_emu_source_attach(emu, pmu, fd, &auxcap_emu_replay_ops, replay);
}
