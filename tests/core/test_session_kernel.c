/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture session against the real kernel (no AUX PMU here: software events and
 * tracepoints; the AUX paths are tested on the emulated PMU).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "auxcap/record.h"
#include "auxcap/session.h"
#include "mem_sink.h"
#include "util.h"

static int cpus[256];
static size_t nr_cpus;

/* Walk the records a mem_sink holds, decoding each with the attr its IDENTIFIER names. */
typedef void (*rec_fn)(const struct auxcap_record *rec, const struct mem_attr *a, void *arg);

static void walk(const struct mem_sink *m, rec_fn fn, void *arg)
{
	size_t off = 0;

	while (off < m->recs_len) {
		const struct perf_event_header *h = (const void *)(m->recs + off);
		struct auxcap_sample_layout lay;
		const struct mem_attr *a;
		struct auxcap_record rec;
		uint64_t id;

		/* Sessions of several events carry IDENTIFIER: peek with any of their attrs. */
		auxcap_sample_layout_from_attr(&m->attrs[0].attr, &lay);
		if (m->nr_attrs == 1) {
			a = &m->attrs[0];
		} else {
			assert_int_equal(auxcap_record_peek_id(&lay, h, h->size, &id), 0);
			a = mem_sink_attr_of(m, id);
			assert_non_null(a);
		}
		auxcap_sample_layout_from_attr(&a->attr, &lay);
		assert_int_equal(auxcap_record_parse(&lay, h, h->size, &rec), 0);
		fn(&rec, a, arg);
		off += h->size;
	}
}

struct full_counts {
	pid_t root;
	uint64_t samples, comm_example, forks, mmap_example, exits;
	uint64_t mmap_data, mmap_data_exec, mmap_stack; /* flagged PERF_RECORD_MISC_MMAP_DATA */
	pid_t pids[16];
	size_t nr_pids;
};

static void count_full(const struct auxcap_record *rec, const struct mem_attr *a, void *arg)
{
	struct full_counts *c = arg;

	(void)a;
	switch (rec->type) {
	case PERF_RECORD_SAMPLE: {
		size_t i;

		c->samples++;
		assert_true(rec->u.sample.cpu < 256);
		for (i = 0; i < c->nr_pids && c->pids[i] != (pid_t)rec->u.sample.pid; i++)
			;
		if (i == c->nr_pids && i < 16)
			c->pids[c->nr_pids++] = (pid_t)rec->u.sample.pid;
		break;
	}
	case PERF_RECORD_COMM:
		c->comm_example += strstr(rec->u.comm.comm, "auxcap-example") != NULL;
		break;
	case PERF_RECORD_FORK:
		c->forks++;
		break;
	case PERF_RECORD_EXIT:
		c->exits++;
		break;
	case PERF_RECORD_MMAP2:
		c->mmap_example += strstr(rec->u.mmap.filename, "auxcap-example-loop") != NULL;
		if (rec->misc & PERF_RECORD_MISC_MMAP_DATA) {
			c->mmap_data++;
			c->mmap_data_exec += (rec->u.mmap.prot & PROT_EXEC) != 0;
			c->mmap_stack += !strcmp(rec->u.mmap.filename, "[stack]");
		}
		break;
	default:
		break;
	}
}

static const struct perf_event_attr loop_clk = { .type = PERF_TYPE_SOFTWARE,
						 .config = PERF_COUNT_SW_CPU_CLOCK,
						 .sample_period = 250000,
						 .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD };

/*
 * example-loop ITERS KIDS started and a session opened on it into @m: cpu-clock samples
 * plus side-band, per CPU, enabled at its exec; children followed with @inherit, the
 * mappings of data with @data_mmaps.  Sets *@ret_pid and *@ret_go (test_spawn_go()).
 */
static struct auxcap_session *open_loop(char *iters, char *kids, bool inherit, bool data_mmaps,
					struct mem_sink *m, pid_t *ret_pid, int *ret_go)
{
	static struct perf_event_attr clk;
	static struct auxcap_session_event ev = { .attr = &clk, .name = "cpu-clock" };
	char *argv[] = { getenv("AUXCAP_EXAMPLE_LOOP"), iters, kids, NULL };
	struct auxcap_session *s;
	int failed;

	clk = loop_clk;
	mem_sink_init(m);
	*ret_pid = test_spawn(argv, ret_go);
	assert_true(*ret_pid > 0);
	{
		struct auxcap_session_opts o = {
			.sz = sizeof(o),
			.events = &ev,
			.nr_events = 1,
			.sideband = true,
			.pids = ret_pid,
			.nr_pids = 1,
			.cpus = cpus,
			.nr_cpus = nr_cpus,
			.inherit = inherit,
			.enable_on_exec = true,
			.data_pages = 64,
			.sink = &m->sink,
			.data_mmaps = data_mmaps,
		};

		assert_int_equal(auxcap_session_open(&o, &s, &failed), 0);
	}
	return s;
}

/*
 * Full-trace: per-CPU sets restricted to a command with inherit, cpu-clock samples plus
 * side-band; the loop ends by itself when the command and its children have exited.
 */
static void test_session_kernel_full_trace_command_with_children(void **state)
{
	struct auxcap_session_stats st;
	struct auxcap_session *s;
	struct full_counts c = { 0 };
	struct mem_sink m;
	char iters[] = "200000000", two[] = "2";
	int go;
	pid_t pid;

	(void)state;
	s = open_loop(iters, two, true, false, &m, &pid, &go);
	assert_int_equal(auxcap_session_nr_sets(s), nr_cpus);
	/* One event alone carries the side-band itself (no dummy) and needs no IDENTIFIER. */
	assert_int_equal(m.nr_attrs, 1);
	assert_int_equal(m.attrs[0].nr_ids, nr_cpus);
	assert_true(m.attrs[0].attr.mmap2 && m.attrs[0].attr.comm && m.attrs[0].attr.task);
	assert_false(m.attrs[0].attr.sample_type & PERF_SAMPLE_IDENTIFIER);
	test_spawn_go(go);
	assert_int_equal(auxcap_session_run(s, 60000), 0); /* ends on POLLHUP */
	assert_int_equal(test_wait(pid), 0);
	auxcap_session_get_stats(s, &st);
	auxcap_session_free(s);

	c.root = pid;
	walk(&m, count_full, &c);
	printf("# %llu records, %llu samples from %zu processes, %llu forks, %llu exits, "
	       "%llu wakeups, %llu lost\n",
	       (unsigned long long)st.records, (unsigned long long)c.samples, c.nr_pids,
	       (unsigned long long)c.forks, (unsigned long long)c.exits,
	       (unsigned long long)st.wakeups, (unsigned long long)st.lost);
	assert_int_equal(st.records, m.nr_recs);
	assert_int_equal(c.nr_pids, 3);     /* the command and its two children */
	assert_true(c.forks >= 2);
	assert_true(c.comm_example >= 1);  /* COMM at exec */
	assert_true(c.mmap_example >= 1);  /* MMAP2 of the executable */
	assert_int_equal(c.mmap_data, 0);  /* code mappings only */
	assert_true(c.samples > 30);
	assert_int_equal(st.lost, 0);
	assert_int_equal(st.corrupt, 0);
	assert_true(m.rounds > 0);
	mem_sink_fini(&m);
}

/*
 * opts.data_mmaps: the side-band has the mappings of data too (attr.mmap_data), as an Arm SPE
 * capture's does: the kernel flags them PERF_RECORD_MISC_MMAP_DATA; the stack is one.
 */
static void test_session_kernel_data_mmaps(void **state)
{
	struct auxcap_session *s;
	struct full_counts c = { 0 };
	struct mem_sink m;
	char iters[] = "1000000", none[] = "0";
	int go;
	pid_t pid;

	(void)state;
	s = open_loop(iters, none, false, true, &m, &pid, &go);
	assert_true(m.attrs[0].attr.mmap_data);
	test_spawn_go(go);
	assert_int_equal(auxcap_session_run(s, 60000), 0);
	assert_int_equal(test_wait(pid), 0);
	auxcap_session_free(s);
	walk(&m, count_full, &c);
	printf("# %llu MMAP2 of data, %llu of the stack; %llu of the executable\n",
	       (unsigned long long)c.mmap_data, (unsigned long long)c.mmap_stack,
	       (unsigned long long)c.mmap_example);
	assert_true(c.mmap_data >= 2); /* the stack, and data of the program or its libraries */
	assert_true(c.mmap_stack >= 1);
	assert_int_equal(c.mmap_data_exec, 0);
	assert_true(c.mmap_example >= 1); /* code as before */
	mem_sink_fini(&m);
}

struct snap_check {
	uint64_t n, last_time, min_time, getppid, lost, rec_size;
};

static void check_snap(const struct auxcap_record *rec, const struct mem_attr *a, void *arg)
{
	struct snap_check *c = arg;
	long nr;

	(void)a;
	if (rec->type == PERF_RECORD_LOST) {
		/* Records the kernel dropped while the ring was paused for a snapshot. */
		c->lost += rec->u.lost.lost;
		return;
	}
	assert_int_equal(rec->type, PERF_RECORD_SAMPLE);
	assert_true(rec->u.sample.time >= c->last_time); /* oldest first */
	c->rec_size = rec->size;
	c->last_time = rec->u.sample.time;
	if (!c->n)
		c->min_time = rec->u.sample.time;
	memcpy(&nr, (const unsigned char *)rec->u.sample.raw.data + 8, sizeof(nr));
	c->getppid += nr == SYS_getppid;
	c->n++;
}

static uint64_t sys_enter_id(void)
{
	int64_t id = test_tracepoint_id("raw_syscalls", "sys_enter");

	assert_true(id >= 0);
	return (uint64_t)id;
}

/*
 * Snapshot mode with no AUX event: a flight recorder of the last records.  The first snapshot
 * holds the newest ring-full, oldest first; the second only what came after the first.
 */
static void test_session_kernel_snapshot_flight_recorder(void **state)
{
	struct perf_event_attr tp = { .type = PERF_TYPE_TRACEPOINT,
				      .config = sys_enter_id(),
				      .sample_period = 1,
				      .sample_type = PERF_SAMPLE_RAW };
	struct auxcap_session_event ev = { .attr = &tp, .name = "raw_syscalls:sys_enter" };
	struct auxcap_session_stats st;
	struct auxcap_session *s;
	struct snap_check c1 = { 0 }, c2 = { 0 };
	struct mem_sink m;
	pid_t self = (pid_t)syscall(SYS_gettid);
	size_t first_len;

	(void)state;
	mem_sink_init(&m);
	{
		struct auxcap_session_opts o = {
			.sz = sizeof(o),
			.events = &ev,
			.nr_events = 1,
			.pids = &self,
			.nr_pids = 1,
			.snapshot = true,
			.snapshot_data_pages = 4,
			.sink = &m.sink,
		};

		assert_int_equal(auxcap_session_open(&o, &s, NULL), 0);
	}
	assert_int_equal(auxcap_session_enable(s, true), 0);
	for (int i = 0; i < 10000; i++)
		(void)syscall(SYS_getppid);
	assert_int_equal(auxcap_session_snapshot(s), 0);
	walk(&m, check_snap, &c1);
	first_len = m.recs_len;
	printf("# snapshot 1: %llu records of %llu bytes, %llu getppid\n",
	       (unsigned long long)c1.n, (unsigned long long)c1.rec_size,
	       (unsigned long long)c1.getppid);
	/* The ring (4 pages) was lapped: it holds every whole record that fits. */
	assert_int_equal(c1.n, 16384 / c1.rec_size);
	assert_true(c1.getppid + 2 >= c1.n); /* all but the enable/pause ioctls */

	for (int i = 0; i < 50; i++)
		(void)syscall(SYS_getppid);
	assert_int_equal(auxcap_session_snapshot(s), 0);
	{
		struct mem_sink second = m;

		second.recs = m.recs + first_len;
		second.recs_len = m.recs_len - first_len;
		walk(&second, check_snap, &c2);
	}
	printf("# snapshot 2: %llu records, %llu getppid\n", (unsigned long long)c2.n,
	       (unsigned long long)c2.getppid);
	assert_int_equal(c2.getppid, 50);     /* exactly the new ones, no overlap */
	assert_true(c2.n <= 50 + 4);          /* plus the ioctls around the snapshots */
	assert_true(c2.min_time > c1.last_time);
	auxcap_session_get_stats(s, &st);
	assert_int_equal(st.snapshots, 2);
	auxcap_session_free(s);
	mem_sink_fini(&m);
}

static struct auxcap_session *storm_session;

static void on_usr2(int sig)
{
	(void)sig;
	auxcap_session_request(storm_session, AUXCAP_REQ_SNAPSHOT);
}

static void *run_loop(void *arg)
{
	return (void *)(intptr_t)auxcap_session_run(arg, -1);
}

/* 1000 SIGUSR2 snapshot requests in a burst: every one is taken or counted as coalesced. */
static void test_session_kernel_signal_storm(void **state)
{
	struct perf_event_attr tp = { .type = PERF_TYPE_TRACEPOINT,
				      .config = sys_enter_id(),
				      .sample_period = 1,
				      .sample_type = PERF_SAMPLE_RAW };
	struct auxcap_session_event ev = { .attr = &tp, .name = "raw_syscalls:sys_enter" };
	struct auxcap_session_stats st;
	struct snap_check c = { 0 };
	struct mem_sink m;
	pid_t self = getpid();
	pthread_t th;
	void *ret;

	(void)state;
	mem_sink_init(&m);
	{
		struct auxcap_session_opts o = {
			.sz = sizeof(o),
			.events = &ev,
			.nr_events = 1,
			.pids = &self,
			.nr_pids = 1,
			.snapshot = true,
			.snapshot_data_pages = 2,
			.sink = &m.sink,
		};

		assert_int_equal(auxcap_session_open(&o, &storm_session, NULL), 0);
	}
	assert_int_equal(auxcap_session_enable(storm_session, true), 0);
	signal(SIGUSR2, on_usr2);
	assert_int_equal(pthread_create(&th, NULL, run_loop, storm_session), 0);
	for (int i = 0; i < 1000; i++)
		kill(getpid(), SIGUSR2);
	usleep(200000);
	auxcap_session_request(storm_session, AUXCAP_REQ_STOP);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_int_equal((intptr_t)ret, 0);
	signal(SIGUSR2, SIG_DFL);
	auxcap_session_get_stats(storm_session, &st);
	printf("# 1000 requests: %llu snapshots, %llu coalesced, latency max %llu ns\n",
	       (unsigned long long)st.snapshots,
	       (unsigned long long)st.snapshot_requests_coalesced,
	       (unsigned long long)st.snapshot_latency_ns_max);
	/* Signals of one kind also merge in the kernel while pending; what arrives is accounted. */
	assert_true(st.snapshots >= 1);
	assert_true(st.snapshots + st.snapshot_requests_coalesced <= 1000);
	walk(&m, check_snap, &c); /* every record complete, well formed, in order */
	printf("# %llu records in the snapshots, %llu dropped by the kernel while paused\n",
	       (unsigned long long)c.n, (unsigned long long)c.lost);
	assert_int_equal(c.lost, st.lost); /* the session counted every LOST record */
	assert_int_equal(st.corrupt, 0);
	auxcap_session_free(storm_session);
	mem_sink_fini(&m);
}

/* Mappings of perf event rings in this process (/proc/self/maps). */
static size_t perf_maps(void)
{
	char line[512];
	size_t n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "[perf_event]") != NULL;
	fclose(f);
	return n;
}

/*
 * Two running processes per CPU (perf record -p A,B): the second's events write into the
 * first's rings on each CPU (one ring per CPU, not per process and CPU); both are recorded,
 * with the child B starts (inherit); when A ends first the loop keeps waiting on B without
 * spinning on A's hung-up fds, and ends when B and its child have.
 */
static void test_session_kernel_tasks_share_rings(void **state)
{
	struct perf_event_attr clk = { .type = PERF_TYPE_SOFTWARE,
				       .config = PERF_COUNT_SW_CPU_CLOCK,
				       .sample_period = 250000,
				       .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
						      PERF_SAMPLE_TIME };
	struct auxcap_session_event ev = { .attr = &clk, .name = "cpu-clock" };
	struct auxcap_session_stats st;
	struct auxcap_session *s;
	struct full_counts c = { 0 };
	struct mem_sink m;
	char short_iters[] = "40000000", long_iters[] = "200000000", one[] = "1";
	char *argv_a[] = { getenv("AUXCAP_EXAMPLE_LOOP"), short_iters, NULL };
	char *argv_b[] = { getenv("AUXCAP_EXAMPLE_LOOP"), long_iters, one, NULL };
	size_t before = perf_maps();
	pid_t pids[2];
	int go[2], failed;

	(void)state;
	mem_sink_init(&m);
	pids[0] = test_spawn(argv_a, &go[0]);
	pids[1] = test_spawn(argv_b, &go[1]);
	assert_true(pids[0] > 0 && pids[1] > 0);
	{
		struct auxcap_session_opts o = {
			.sz = sizeof(o),
			.events = &ev,
			.nr_events = 1,
			.sideband = true,
			.pids = pids,
			.nr_pids = 2,
			.cpus = cpus,
			.nr_cpus = nr_cpus,
			.inherit = true,
			.enable_on_exec = true,
			.data_pages = 64,
			.sink = &m.sink,
		};

		assert_int_equal(auxcap_session_open(&o, &s, &failed), 0);
	}
	assert_int_equal(auxcap_session_nr_sets(s), 2 * nr_cpus);
	assert_int_equal(m.attrs[0].nr_ids, 2 * nr_cpus);
	assert_int_equal(perf_maps() - before, nr_cpus); /* one ring per CPU */
	test_spawn_go(go[0]);
	test_spawn_go(go[1]);
	assert_int_equal(auxcap_session_run(s, 60000), 0); /* ends when all have hung up */
	assert_int_equal(test_wait(pids[0]), 0);
	assert_int_equal(test_wait(pids[1]), 0);
	auxcap_session_get_stats(s, &st);
	auxcap_session_free(s);
	assert_int_equal(perf_maps(), before);

	walk(&m, count_full, &c);
	printf("# %llu samples from %zu processes, %llu wakeups, %llu lost\n",
	       (unsigned long long)c.samples, c.nr_pids, (unsigned long long)st.wakeups,
	       (unsigned long long)st.lost);
	assert_int_equal(c.nr_pids, 3); /* A, B and B's child */
	assert_true(c.forks >= 1);
	/* A spinning loop wakes once per poll: 100000s in the second B runs alone */
	assert_true(st.wakeups < 5000);
	assert_int_equal(st.lost, 0);
	mem_sink_fini(&m);
}

static void test_session_bad_options(void **state)
{
	struct perf_event_attr clk = { .type = PERF_TYPE_SOFTWARE,
				       .config = PERF_COUNT_SW_CPU_CLOCK };
	struct auxcap_session_event ev = { .attr = &clk, .name = "cpu-clock" };
	struct auxcap_session *s = (void *)0x1;
	struct mem_sink m;
	struct auxcap_session_opts o = {
		.sz = sizeof(o), .events = &ev, .nr_events = 1, .sink = &m.sink,
	};

	(void)state;
	mem_sink_init(&m);
	o.data_pages = 3;
	assert_int_equal(auxcap_session_open(&o, &s, NULL), -EINVAL);
	o.data_pages = 4;
	o.inherit = true; /* inherit needs per-CPU sets */
	assert_int_equal(auxcap_session_open(&o, &s, NULL), -EINVAL);
	o.inherit = false;
	o.nr_events = 0;
	assert_int_equal(auxcap_session_open(&o, &s, NULL), -EINVAL);
	assert_ptr_equal(s, (void *)0x1); /* untouched */
	mem_sink_fini(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_bad_options),
		cmocka_unit_test(test_session_kernel_full_trace_command_with_children),
		cmocka_unit_test(test_session_kernel_data_mmaps),
		cmocka_unit_test(test_session_kernel_tasks_share_rings),
		cmocka_unit_test(test_session_kernel_snapshot_flight_recorder),
		cmocka_unit_test(test_session_kernel_signal_storm),
	};
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	test_require_perf(1);
	if (!getenv("AUXCAP_EXAMPLE_LOOP"))
		test_skip("AUXCAP_EXAMPLE_LOOP is not set (run through meson test)");
	for (long i = 0; i < n && i < 256; i++)
		cpus[nr_cpus++] = (int)i;
	return cmocka_run_group_tests_name("core/session_kernel", tests, NULL, NULL);
}
