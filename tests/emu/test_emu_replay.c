/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The replay trace source through its ops table (as the emulator calls it), from a buffer and
 * from a file, and SET_OUTPUT / AUX unmapping / attr checks of the emulated events.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "emu_test.h"

static void test_emu_replay_chunks_granules_and_items(void **state)
{
	struct auxcap_emu_replay_opts o = { .sz = sizeof(o), .chunk = 100, .granule = 24 };
	struct auxcap_emu_replay *rp;
	struct auxcap_emu_item it = { 0 }, got;
	unsigned char src[250], buf[256];
	size_t total = 0;
	int r;

	(void)state;
	emu_test_pattern(src, sizeof(src), 0, 3);
	assert_int_equal(auxcap_emu_replay_new(src, sizeof(src), &o, &rp), 0);
	it.kind = AUXCAP_EMU_ITEM_COMM;
	it.u.comm.comm = "late";
	assert_int_equal(auxcap_emu_replay_add_item(rp, 1000, &it), 0);
	it.u.comm.comm = "at48";
	assert_int_equal(auxcap_emu_replay_add_item(rp, 48, &it), 0);
	it.kind = AUXCAP_EMU_ITEM_TRACE;
	assert_int_equal(auxcap_emu_replay_add_item(rp, 0, &it), -EINVAL);

	/* 96 bytes (100 rounded to granules), but the item at 48 cuts the first write. */
	assert_int_equal(auxcap_emu_replay_ops.next(rp, buf, sizeof(buf), false, &got), 1);
	assert_int_equal(got.kind, AUXCAP_EMU_ITEM_TRACE);
	assert_int_equal(got.len, 48);
	assert_int_equal(got.pid, getpid());
	/* The bytes are handed out where the source keeps them, not copied into buf. */
	assert_non_null(got.data);
	assert_memory_equal(got.data, src, 48);
	total += got.len;
	assert_int_equal(auxcap_emu_replay_ops.next(rp, buf, sizeof(buf), false, &got), 1);
	assert_int_equal(got.kind, AUXCAP_EMU_ITEM_COMM);
	assert_string_equal(got.u.comm.comm, "at48");
	while ((r = auxcap_emu_replay_ops.next(rp, buf, sizeof(buf), false, &got)) == 1 &&
	       got.kind == AUXCAP_EMU_ITEM_TRACE) {
		assert_non_null(got.data);
		assert_memory_equal(got.data, src + total, got.len);
		/* Whole granules except the stream's tail. */
		if (total + got.len < sizeof(src))
			assert_int_equal(got.len % 24, 0);
		total += got.len;
	}
	assert_int_equal(total, sizeof(src));
	/* An item placed past the end still comes out, then the end. */
	assert_int_equal(r, 1);
	assert_string_equal(got.u.comm.comm, "late");
	assert_int_equal(auxcap_emu_replay_ops.next(rp, buf, sizeof(buf), false, &got), -ENODATA);
	auxcap_emu_replay_ops.free(rp);
}

static void test_emu_replay_paced_holds_bytes_back(void **state)
{
	struct auxcap_emu_replay_opts o = { .sz = sizeof(o), .rate = 1, .loop = true };
	struct auxcap_emu_replay *rp;
	struct auxcap_emu_item got;
	unsigned char src[64] = { 1 }, buf[64];

	(void)state;
	assert_int_equal(auxcap_emu_replay_new(src, sizeof(src), &o, &rp), 0);
	/* At 1 byte/s nothing is due at the first paced call; unpaced it all comes. */
	assert_int_equal(auxcap_emu_replay_ops.next(rp, buf, sizeof(buf), true, &got), 0);
	assert_int_equal(auxcap_emu_replay_ops.next(rp, buf, sizeof(buf), false, &got), 1);
	assert_int_equal(got.len, 64);
	/* loop: it starts over. */
	assert_int_equal(auxcap_emu_replay_ops.next(rp, buf, sizeof(buf), false, &got), 1);
	assert_int_equal(got.len, 64);
	auxcap_emu_replay_free(rp);
}

static void test_emu_replay_file(void **state)
{
	char path[] = "/tmp/auxcap-emu-replay-XXXXXX";
	unsigned char src[5000], out[8192];
	struct auxcap_emu_replay *rp;
	struct auxcap_emu *emu;
	struct emu_fixture g;
	int fd;

	(void)state;
	assert_int_equal(auxcap_emu_replay_new_file("/nonexistent/auxcap", NULL, &rp), -ENOENT);
	assert_int_equal(auxcap_emu_replay_new_file("/tmp", NULL, &rp), -EINVAL);
	emu_test_pattern(src, sizeof(src), 0, 9);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, src, sizeof(src)), sizeof(src));
	close(fd);
	assert_int_equal(auxcap_emu_replay_new_file(path, NULL, &rp), 0);
	unlink(path);

	/* Queued for the next intel_bts event opened. */
	assert_int_equal(auxcap_emu_new(NULL, &emu), 0);
	assert_int_equal(auxcap_emu_replay_attach(emu, AUXCAP_EMU_PMU_INTEL_BTS, -1, rp), 0);
	memset(&g, 0, sizeof(g));
	g.emu = emu;
	g.sys = auxcap_emu_sys(emu);
	emu_test_attr(&g.attr, AUXCAP_EMU_PMU_INTEL_BTS);
	g.fd = auxcap_event_open(g.sys, &g.attr, 0, -1, -1, 0);
	assert_true(g.fd >= 0);
	emu_fixture_map(&g, 2, 2, false);
	assert_int_equal(auxcap_event_enable(g.sys, g.fd, true), 0);
	assert_int_equal(auxcap_emu_step(emu, g.fd, 100000), sizeof(src));
	assert_int_equal(auxcap_event_enable(g.sys, g.fd, false), 0);
	assert_int_equal(emu_fixture_consume_aux(&g, out, sizeof(out)), sizeof(src));
	assert_memory_equal(out, src, sizeof(src));
	emu_fixture_fini(&g); /* frees the emulator */
}

static void test_emu_set_output_shares_buffer(void **state)
{
	struct emu_fixture f;
	struct perf_event_attr attr;
	int fd2, fd3, fd4;
	uint64_t id2;
	unsigned char b[64] = { 1 };

	(void)state;
	/* Two PT events of different tasks on CPU 0 (one per task context), and an SPE one. */
	emu_fixture_init_on(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL, 0, 0);
	emu_test_attr(&attr, AUXCAP_EMU_PMU_INTEL_PT);
	fd2 = auxcap_event_open(f.sys, &attr, getppid(), 0, -1, 0);
	emu_test_attr(&attr, AUXCAP_EMU_PMU_ARM_SPE);
	fd3 = auxcap_event_open(f.sys, &attr, 0, 0, -1, 0);
	emu_test_attr(&attr, AUXCAP_EMU_PMU_INTEL_PT);
	fd4 = sysconf(_SC_NPROCESSORS_CONF) > 1 ? auxcap_event_open(f.sys, &attr, 0, 1, -1, 0) : -1;
	assert_true(fd2 >= 0 && fd3 >= 0);
	/* The target has no mapping yet. */
	assert_int_equal(f.sys->ioctl(f.sys->ctx, fd2, PERF_EVENT_IOC_SET_OUTPUT, f.fd), -EINVAL);
	emu_fixture_map(&f, 4, 0, false);
	/* Two AUX events of different PMUs cannot share; nor events on different CPUs. */
	assert_int_equal(f.sys->ioctl(f.sys->ctx, fd3, PERF_EVENT_IOC_SET_OUTPUT, f.fd), -EINVAL);
	if (fd4 >= 0)
		assert_int_equal(f.sys->ioctl(f.sys->ctx, fd4, PERF_EVENT_IOC_SET_OUTPUT, f.fd),
				 -EINVAL);
	assert_int_equal(f.sys->ioctl(f.sys->ctx, fd2, PERF_EVENT_IOC_SET_OUTPUT, f.fd), 0);
	/* The caller already has its own mapping: f cannot be redirected now. */
	assert_int_equal(f.sys->ioctl(f.sys->ctx, f.fd, PERF_EVENT_IOC_SET_OUTPUT, fd2), -EINVAL);
	/* fd2's records land in f's ring, with fd2's id; the AUX area is the shared one. */
	((struct perf_event_mmap_page *)f.mr.base)->aux_offset = 5 * 4096;
	((struct perf_event_mmap_page *)f.mr.base)->aux_size = 4 * 4096;
	assert_int_equal(f.sys->mmap(f.sys->ctx, 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd2,
				     5 * 4096, &f.aux),
			 0);
	f.aux_len = 4 * 4096;
	assert_int_equal(auxcap_event_enable(f.sys, fd2, true), 0);
	assert_int_equal(auxcap_emu_write(f.emu, fd2, b, sizeof(b)), 64);
	assert_int_equal(auxcap_event_enable(f.sys, fd2, false), 0);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_itrace, 1);
	assert_int_equal(f.seen.itrace_pid, getppid());
	assert_int_equal(f.seen.n_aux, 1);
	assert_int_equal(f.seen.aux[0].size, 64);
	assert_int_equal(auxcap_event_id(f.sys, fd2, &id2), 0);
	assert_int_equal(f.seen.last_id, id2);
	assert_int_equal(emu_fixture_aux_head(&f), 64);
	assert_int_equal(f.sys->close(f.sys->ctx, fd2), 0);
	assert_int_equal(f.sys->close(f.sys->ctx, fd3), 0);
	if (fd4 >= 0)
		assert_int_equal(f.sys->close(f.sys->ctx, fd4), 0);
	emu_fixture_fini(&f);
}

static void test_emu_exclusive_pmus_ebusy(void **state)
{
	struct auxcap_emu *emu;
	const struct auxcap_sys *sys;
	struct perf_event_attr pt, bts;
	int a, b;

	(void)state;
	assert_int_equal(auxcap_emu_new(NULL, &emu), 0);
	sys = auxcap_emu_sys(emu);
	emu_test_attr(&pt, AUXCAP_EMU_PMU_INTEL_PT);
	emu_test_attr(&bts, AUXCAP_EMU_PMU_INTEL_BTS);
	a = auxcap_event_open(sys, &pt, 0, -1, -1, 0);
	assert_true(a >= 0);
	/* One PT event per task context... */
	assert_int_equal(auxcap_event_open(sys, &pt, 0, -1, -1, 0), -EBUSY);
	assert_int_equal(auxcap_event_open(sys, &pt, getpid(), 0, -1, 0), -EBUSY);
	/* ...and PT and BTS exclude each other. */
	assert_int_equal(auxcap_event_open(sys, &bts, getppid(), -1, -1, 0), -EBUSY);
	assert_int_equal(sys->close(sys->ctx, a), 0);
	b = auxcap_event_open(sys, &bts, 0, -1, -1, 0);
	assert_true(b >= 0);
	assert_int_equal(auxcap_event_open(sys, &pt, 0, -1, -1, 0), -EBUSY);
	assert_int_equal(sys->close(sys->ctx, b), 0);
	/* Per CPU: one per CPU. */
	a = auxcap_event_open(sys, &pt, -1, 0, -1, 0);
	assert_true(a >= 0);
	assert_int_equal(auxcap_event_open(sys, &pt, -1, 0, -1, 0), -EBUSY);
	if (sysconf(_SC_NPROCESSORS_CONF) > 1) {
		b = auxcap_event_open(sys, &pt, -1, 1, -1, 0);
		assert_true(b >= 0);
		assert_int_equal(sys->close(sys->ctx, b), 0);
	}
	assert_int_equal(sys->close(sys->ctx, a), 0);
	auxcap_emu_free(emu);
}

static void test_emu_unmap_last_aux_ends_transaction(void **state)
{
	struct emu_fixture f;
	unsigned char b[100] = { 1 };
	struct auxcap_emu_stats st;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	emu_fixture_map(&f, 4, 4, false);
	assert_int_equal(auxcap_event_enable(f.sys, f.fd, true), 0);
	assert_int_equal(auxcap_emu_write(f.emu, f.fd, b, sizeof(b)), 100);
	assert_int_equal(f.sys->munmap(f.sys->ctx, f.aux, f.aux_len), 0);
	f.aux = NULL;
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_aux, 1);
	assert_int_equal(f.seen.aux[0].size, 100);
	/* No AUX area: the hardware stays stopped, the bytes are dropped. */
	assert_int_equal(auxcap_emu_write(f.emu, f.fd, b, sizeof(b)), 0);
	assert_int_equal(auxcap_emu_stats(f.emu, f.fd, &st), 0);
	assert_int_equal(st.dropped, 100);
	emu_fixture_fini(&f);
}

static void test_emu_open_reserved_and_size(void **state)
{
	struct auxcap_emu *emu;
	const struct auxcap_sys *sys;
	unsigned char big[sizeof(struct perf_event_attr) + 16] = { 0 };
	struct perf_event_attr *attr = (struct perf_event_attr *)big;
	int fd;

	(void)state;
	assert_int_equal(auxcap_emu_new(NULL, &emu), 0);
	sys = auxcap_emu_sys(emu);
	emu_test_attr(attr, AUXCAP_EMU_PMU_INTEL_PT);
	attr->__reserved_2 = 1;
	assert_int_equal(sys->perf_event_open(sys->ctx, attr, 0, -1, -1, 0), -EINVAL);
	attr->__reserved_2 = 0;
	/* A larger attr whose unknown tail is not zero: E2BIG and the known size written back. */
	attr->size = sizeof(big);
	big[sizeof(big) - 1] = 1;
	assert_int_equal(sys->perf_event_open(sys->ctx, attr, 0, -1, -1, 0), -E2BIG);
	assert_int_equal(attr->size, sizeof(struct perf_event_attr));
	big[sizeof(big) - 1] = 0;
	attr->size = sizeof(big);
	fd = sys->perf_event_open(sys->ctx, attr, 0, -1, -1, 0);
	assert_true(fd >= 0);
	assert_int_equal(sys->close(sys->ctx, fd), 0);
	auxcap_emu_free(emu);
}

/* A source of its own, as the live tracer is: counts bytes, remembers its event. */
struct counting_source {
	uint64_t config;   /* attr.config seen by bind() */
	int pid;	   /* target pid seen by bind() */
	unsigned int left; /* items still to hand out */
	bool freed;	   /* set by free() (the struct itself is the test's) */
};

static int counting_bind(void *ctx, const struct auxcap_emu_source_target *t)
{
	struct counting_source *c = ctx;

	if (t->pmu != AUXCAP_EMU_PMU_INTEL_PT)
		return -EOPNOTSUPP;
	c->config = t->attr->config;
	c->pid = t->pid;
	return 0;
}

static int counting_next(void *ctx, void *buf, size_t max, bool paced,
			 struct auxcap_emu_item *ret_item)
{
	struct counting_source *c = ctx;
	size_t n = max < 10 ? max : 10;

	(void)paced;
	if (!c->left)
		return -ENODATA;
	c->left--;
	memset(buf, 0xab, n);
	memset(ret_item, 0, sizeof(*ret_item));
	ret_item->kind = AUXCAP_EMU_ITEM_TRACE;
	ret_item->len = n;
	return 1;
}

static void counting_free(void *ctx)
{
	((struct counting_source *)ctx)->freed = true;
}

static const struct auxcap_emu_source_ops counting_ops = {
	.name = "counting",
	.bind = counting_bind,
	.next = counting_next,
	.free = counting_free,
};

static void test_emu_custom_source_ops(void **state)
{
	struct counting_source c = { .left = 5 }, d = { .left = 5 };
	struct emu_fixture f;
	struct perf_event_attr attr;
	struct auxcap_emu_stats st;
	int spe;

	(void)state;
	emu_test_attr(&attr, AUXCAP_EMU_PMU_INTEL_PT);
	attr.config = 0x400; /* tsc */
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, &attr, NULL);
	emu_fixture_map(&f, 4, 4, false);
	assert_int_equal(auxcap_emu_source_attach(f.emu, 0, f.fd, &counting_ops, &c), 0);
	assert_int_equal(auxcap_emu_source_attach(f.emu, 0, f.fd, &counting_ops, &d), -EBUSY);
	assert_int_equal(auxcap_emu_source_attach(f.emu, 0, 1000, &counting_ops, &d), -EBADF);
	assert_int_equal(c.config, 0x400);
	assert_int_equal(c.pid, getpid()); /* pid 0 is resolved to the caller */
	emu_test_attr(&attr, AUXCAP_EMU_PMU_ARM_SPE);
	spe = auxcap_event_open(f.sys, &attr, 0, -1, -1, 0);
	assert_true(spe >= 0);
	assert_int_equal(auxcap_emu_source_attach(f.emu, 0, spe, &counting_ops, &d), -EOPNOTSUPP);
	assert_false(d.freed); /* refused: still the caller's */
	assert_int_equal(auxcap_event_enable(f.sys, f.fd, true), 0);
	assert_int_equal(auxcap_emu_step(f.emu, f.fd, 1000), 50);
	assert_int_equal(auxcap_emu_stats(f.emu, f.fd, &st), 0);
	assert_int_equal(st.produced, 50);
	assert_int_equal(f.sys->close(f.sys->ctx, spe), 0);
	emu_fixture_fini(&f);
	assert_true(c.freed);
}

/* A source whose advance() blocks until the test lets it go, as the live tracer's does while
 * its command sleeps in a system call. */
struct blocking_source {
	int entered;   /* atomic: advance() is running */
	int release;   /* atomic: advance() may return */
	int advanced;  /* atomic: advance() calls that returned */
	int overlap;   /* atomic: next() or free() called while advance() ran */
	int freed;     /* atomic: free() was called */
};

static void blocking_advance(void *ctx)
{
	struct blocking_source *b = ctx;

	__atomic_store_n(&b->entered, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&b->release, __ATOMIC_ACQUIRE))
		usleep(1000);
	__atomic_store_n(&b->entered, 0, __ATOMIC_RELEASE);
	__atomic_fetch_add(&b->advanced, 1, __ATOMIC_ACQ_REL);
}

static int blocking_next(void *ctx, void *buf, size_t max, bool paced,
			 struct auxcap_emu_item *ret_item)
{
	struct blocking_source *b = ctx;

	(void)buf;
	(void)max;
	(void)paced;
	(void)ret_item;
	if (__atomic_load_n(&b->entered, __ATOMIC_ACQUIRE))
		__atomic_fetch_add(&b->overlap, 1, __ATOMIC_ACQ_REL);
	return 0; /* nothing due */
}

static void blocking_free(void *ctx)
{
	struct blocking_source *b = ctx;

	if (__atomic_load_n(&b->entered, __ATOMIC_ACQUIRE))
		__atomic_fetch_add(&b->overlap, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&b->freed, 1, __ATOMIC_RELEASE);
}

static const struct auxcap_emu_source_ops blocking_ops = {
	.name = "blocking",
	.next = blocking_next,
	.free = blocking_free,
	.advance = blocking_advance,
};

/* Waits up to 10 s for *@flag to be non-zero. */
static bool wait_flag(const int *flag)
{
	for (int i = 0; i < 10000; i++) {
		if (__atomic_load_n(flag, __ATOMIC_ACQUIRE))
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * The producer thread runs a source's advance() without the emulator's lock: while it blocks,
 * the consumer's ioctls and close() go through (under the lock they waited for as long as it
 * blocked); the closed event's source is freed only once advance() has returned, and next()
 * never runs beside advance().
 */
static void test_emu_advance_runs_without_the_lock(void **state)
{
	struct blocking_source b = { 0 };
	struct auxcap_emu *emu;
	const struct auxcap_sys *sys;
	struct perf_event_attr attr;
	int fd;

	(void)state;
	assert_int_equal(auxcap_emu_new(NULL, &emu), 0);
	sys = auxcap_emu_sys(emu);
	emu_test_attr(&attr, AUXCAP_EMU_PMU_INTEL_PT);
	fd = auxcap_event_open(sys, &attr, 0, -1, -1, 0);
	assert_true(fd >= 0);
	assert_int_equal(auxcap_emu_source_attach(emu, 0, fd, &blocking_ops, &b), 0);
	assert_int_equal(auxcap_emu_start(emu), 0);
	assert_true(wait_flag(&b.entered));
	/* advance() blocks: ioctls (under the lock) and close() still go through; stepping
	 * the source (next()) beside it is refused */
	assert_int_equal(auxcap_event_enable(sys, fd, true), 0);
	assert_int_equal(auxcap_event_enable(sys, fd, false), 0);
	assert_int_equal(auxcap_emu_step(emu, fd, 10), -EBUSY);
	assert_int_equal(sys->close(sys->ctx, fd), 0);
	assert_int_equal(__atomic_load_n(&b.freed, __ATOMIC_ACQUIRE), 0); /* still in use */
	__atomic_store_n(&b.release, 1, __ATOMIC_RELEASE);
	assert_true(wait_flag(&b.freed));
	assert_int_equal(__atomic_load_n(&b.advanced, __ATOMIC_ACQUIRE), 1);
	assert_int_equal(__atomic_load_n(&b.overlap, __ATOMIC_ACQUIRE), 0);
	auxcap_emu_free(emu);
}

static void test_emu_poll_hangs_up_when_task_exits(void **state)
{
	struct auxcap_emu *emu;
	const struct auxcap_sys *sys;
	struct perf_event_attr attr;
	struct pollfd p;
	int fd, status;
	pid_t child;

	(void)state;
	assert_int_equal(auxcap_emu_new(NULL, &emu), 0);
	sys = auxcap_emu_sys(emu);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		usleep(50000);
		_exit(0);
	}
	emu_test_attr(&attr, AUXCAP_EMU_PMU_INTEL_PT);
	fd = auxcap_event_open(sys, &attr, child, -1, -1, 0);
	assert_true(fd >= 0);
	p.fd = fd;
	p.events = POLLIN;
	/* Blocks until the traced task exits (a zombie already counts), then hangs up. */
	assert_int_equal(sys->poll(sys->ctx, &p, 1, -1), 1);
	assert_true(p.revents & POLLHUP);
	assert_false(p.revents & POLLIN);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(sys->poll(sys->ctx, &p, 1, 0), 1);
	assert_true(p.revents & POLLHUP);
	assert_int_equal(sys->close(sys->ctx, fd), 0);
	auxcap_emu_free(emu);
}

/* enable_on_exec: a COMM item with exec set turns the event on, once, before its COMM record. */
static void test_emu_enable_on_exec(void **state)
{
	struct auxcap_emu_replay_opts o = { .sz = sizeof(o), .chunk = 50 };
	struct auxcap_emu_item it = { .kind = AUXCAP_EMU_ITEM_COMM };
	struct auxcap_emu_replay *rp;
	struct auxcap_emu_stats es;
	struct perf_event_attr attr;
	unsigned char src[400], out[4096];
	struct emu_fixture f;

	(void)state;
	emu_test_pattern(src, sizeof(src), 0, 5);
	assert_int_equal(auxcap_emu_replay_new(src, sizeof(src), &o, &rp), 0);
	it.u.comm.comm = "prog";
	it.u.comm.exec = true;
	assert_int_equal(auxcap_emu_replay_add_item(rp, 100, &it), 0);
	assert_int_equal(auxcap_emu_replay_add_item(rp, 300, &it), 0); /* a second exec */
	emu_test_attr(&attr, AUXCAP_EMU_PMU_INTEL_PT);
	attr.enable_on_exec = 1;
	attr.comm = 1;
	attr.comm_exec = 1;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, &attr, NULL);
	assert_int_equal(auxcap_emu_replay_attach(f.emu, AUXCAP_EMU_PMU_INTEL_PT, f.fd, rp), 0);
	emu_fixture_map(&f, 4, 2, false);

	/* Disabled until the exec: the first 100 bytes are dropped, the next 200 written. */
	assert_int_equal(auxcap_emu_step(f.emu, f.fd, 300), 300);
	assert_int_equal(auxcap_emu_stats(f.emu, f.fd, &es), 0);
	assert_int_equal(es.dropped, 100);
	assert_int_equal(es.produced, 200);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_itrace, 1);
	assert_int_equal(f.seen.by_type[PERF_RECORD_COMM], 1);
	assert_int_equal(auxcap_event_enable(f.sys, f.fd, false), 0);
	assert_int_equal(emu_fixture_consume_aux(&f, out, sizeof(out)), 200);
	assert_memory_equal(out, src + 100, 200);

	/* Once only: the second exec leaves the disabled event off. */
	assert_int_equal(auxcap_emu_step(f.emu, f.fd, 100), 100);
	assert_int_equal(auxcap_emu_stats(f.emu, f.fd, &es), 0);
	assert_int_equal(es.dropped, 200);
	assert_int_equal(es.produced, 200);
	emu_fixture_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emu_replay_chunks_granules_and_items),
		cmocka_unit_test(test_emu_replay_paced_holds_bytes_back),
		cmocka_unit_test(test_emu_replay_file),
		cmocka_unit_test(test_emu_enable_on_exec),
		cmocka_unit_test(test_emu_set_output_shares_buffer),
		cmocka_unit_test(test_emu_exclusive_pmus_ebusy),
		cmocka_unit_test(test_emu_unmap_last_aux_ends_transaction),
		cmocka_unit_test(test_emu_open_reserved_and_size),
		cmocka_unit_test(test_emu_custom_source_ops),
		cmocka_unit_test(test_emu_advance_runs_without_the_lock),
		cmocka_unit_test(test_emu_poll_hangs_up_when_task_exits),
	};

	return cmocka_run_group_tests_name("emu/replay", tests, NULL, NULL);
}
