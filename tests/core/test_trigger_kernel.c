/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Function triggers and attached captures against the real kernel: a uprobe (PMU and tracefs)
 * and an execute breakpoint on a function this test calls a known number of times, each hit a
 * snapshot timed by the hit; and the side-band synthesized for a process that already runs.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/syscall.h>

#include <cmocka.h>

#include "auxcap/proc.h"
#include "auxcap/record.h"
#include "auxcap/session.h"
#include "auxcap/trigger.h"
#include "elf_file.h"
#include "mem_sink.h"
#include "util.h"

#define MAX_CALLS 512

static int cpus[256];
static size_t nr_cpus;
static char self_exe[PATH_MAX];
static uint64_t fn_offset; /* file offset of auxcap_test_trigger_fn in self_exe */

/* The function the triggers are placed on. */
__attribute__((noinline)) unsigned long auxcap_test_trigger_fn(unsigned long x);
__attribute__((noinline)) unsigned long auxcap_test_trigger_fn(unsigned long x)
{
	__asm__ volatile("" ::: "memory");
	return x * 7 + 1;
}

/* The tests call it through this pointer: a direct call may go to a copy the compiler made
 * for its arguments (gcc -O3: auxcap_test_trigger_fn.constprop.0), where no trigger is. */
static unsigned long (*volatile trigger_fn)(unsigned long) = auxcap_test_trigger_fn;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t sys_enter_id(void)
{
	int64_t id = test_tracepoint_id("raw_syscalls", "sys_enter");

	assert_true(id >= 0);
	return (uint64_t)id;
}

static void *run_loop(void *arg)
{
	return (void *)(intptr_t)auxcap_session_run(arg, -1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

struct calls {
	uint64_t before[MAX_CALLS], after[MAX_CALLS]; /* CLOCK_MONOTONIC around each call */
	size_t n;
};

/*
 * A snapshot mode session on this thread with raw_syscalls:sys_enter and @trigger; call the
 * function @n times @gap_us apart while the loop runs in another thread.
 */
static void run_calls(const struct perf_event_attr *trigger, size_t n, unsigned int gap_us,
		      struct mem_sink *m, struct auxcap_session_stats *st, struct calls *c)
{
	struct perf_event_attr tp = { .type = PERF_TYPE_TRACEPOINT,
				      .config = sys_enter_id(),
				      .sample_period = 1,
				      .sample_type = PERF_SAMPLE_RAW };
	struct auxcap_session_event ev = { .attr = &tp, .name = "raw_syscalls:sys_enter" };
	struct auxcap_session_event trig = { .attr = trigger, .name = "trigger" };
	pid_t self = (pid_t)syscall(SYS_gettid);
	struct auxcap_session *s;
	pthread_t th;
	void *ret;
	int failed = 0;

	{
		struct auxcap_session_opts o = {
			.sz = sizeof(o),
			.events = &ev,
			.nr_events = 1,
			.pids = &self,
			.nr_pids = 1,
			.snapshot = true,
			.snapshot_data_pages = 4,
			.sink = &m->sink,
			.triggers = &trig,
			.nr_triggers = 1,
		};

		assert_int_equal(auxcap_session_open(&o, &s, &failed), 0);
	}
	assert_int_equal(auxcap_session_enable(s, true), 0);
	assert_int_equal(pthread_create(&th, NULL, run_loop, s), 0);
	c->n = n;
	for (size_t i = 0; i < n; i++) {
		c->before[i] = mono_ns();
		(void)trigger_fn(i);
		c->after[i] = mono_ns();
		for (int k = 0; k < 4; k++)
			(void)syscall(SYS_getppid);
		if (gap_us)
			usleep(gap_us);
	}
	usleep(200000); /* let the loop take the last snapshot */
	auxcap_session_request(s, AUXCAP_REQ_STOP);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_int_equal((intptr_t)ret, 0);
	auxcap_session_get_stats(s, st);
	auxcap_session_free(s);
}

/*
 * What every trigger test checks: each hit counted exactly once, every snapshot accounted
 * (taken or coalesced), each snapshot timed by a hit that happened inside one of the calls.
 */
static void check_calls(const char *what, const struct mem_sink *m,
			const struct auxcap_session_stats *st, const struct calls *c)
{
	uint64_t lat[MAX_CALLS], coalesced = 0;
	pid_t self = (pid_t)syscall(SYS_gettid);
	size_t n = m->nr_snaps, j = 0;

	printf("# %s: %zu calls, %llu hits, %llu snapshots, %llu coalesced, %llu lost\n", what,
	       c->n, (unsigned long long)st->trigger_hits, (unsigned long long)st->snapshots,
	       (unsigned long long)st->snapshot_requests_coalesced,
	       (unsigned long long)st->trigger_lost);
	assert_int_equal(st->trigger_hits, c->n);
	assert_int_equal(st->trigger_lost, 0);
	assert_int_equal(st->snapshots, st->trigger_hits - st->snapshot_requests_coalesced);
	assert_int_equal(st->trigger_snapshots, st->snapshots);
	assert_int_equal(n, st->snapshots);
	assert_true(n >= 1 && n <= MAX_CALLS);
	assert_true(m->nr_recs > 0);
	for (size_t i = 0; i < n; i++) {
		const struct auxcap_snapshot_info *in = &m->snaps[i];

		assert_int_equal(in->source, AUXCAP_TRIGGER_FUNCTION);
		assert_int_equal(in->tid, (uint32_t)self);
		/* The kernel timed the hit inside a call, in call order. */
		while (j < c->n && c->after[j] < in->trigger_ns)
			j++;
		assert_true(j < c->n);
		assert_true(in->trigger_ns >= c->before[j]);
		assert_true(in->frozen_ns > in->trigger_ns);
		lat[i] = in->frozen_ns - in->trigger_ns;
		coalesced += in->coalesced;
	}
	assert_int_equal(coalesced, st->snapshot_requests_coalesced);
	qsort(lat, n, sizeof(lat[0]), cmp_u64);
	j = n / 2;
	printf("# %s: hit to frozen: min %.1f us, median %.1f us, max %.1f us\n", what,
	       (double)lat[0] / 1e3, (double)lat[j] / 1e3, (double)lat[n - 1] / 1e3);
}

static void test_uprobe_pmu_each_hit_a_snapshot(void **state)
{
	static struct mem_sink m;
	static struct calls c;
	struct auxcap_session_stats st;
	struct perf_event_attr up;

	(void)state;
	mem_sink_init(&m);
	assert_int_equal(auxcap_trigger_uprobe_attr(NULL, self_exe, fn_offset, false, &up), 0);
	assert_int_equal(up.config2, fn_offset);
	run_calls(&up, 20, 20000, &m, &st, &c);
	check_calls("uprobe, 20 calls 20 ms apart", &m, &st, &c);
	mem_sink_fini(&m);
}

static void test_uprobe_burst_coalesces(void **state)
{
	static struct mem_sink m;
	static struct calls c;
	struct auxcap_session_stats st;
	struct perf_event_attr up;

	(void)state;
	mem_sink_init(&m);
	assert_int_equal(auxcap_trigger_uprobe_attr(NULL, self_exe, fn_offset, false, &up), 0);
	run_calls(&up, 300, 0, &m, &st, &c);
	check_calls("uprobe, 300 calls back to back", &m, &st, &c);
	/* 300 hits in well under a millisecond cannot each get a snapshot of their own. */
	assert_true(st.snapshot_requests_coalesced > 0);
	mem_sink_fini(&m);
}

static void test_breakpoint_each_hit_a_snapshot(void **state)
{
	static struct mem_sink m;
	static struct calls c;
	struct auxcap_session_stats st;
	struct perf_event_attr bp;
	uint64_t addr = 0;

	(void)state;
	mem_sink_init(&m);
	/* The run-time address found from the file offset and our maps is the function's. */
	assert_int_equal(auxcap_proc_find_addr(NULL, getpid(), self_exe, fn_offset, &addr), 0);
	assert_int_equal(addr, (uint64_t)(uintptr_t)auxcap_test_trigger_fn);
	assert_int_equal(auxcap_trigger_breakpoint_attr(addr, &bp), 0);
	assert_int_equal(auxcap_trigger_breakpoint_attr(0, &bp), -EINVAL);
	if (auxcap_trigger_breakpoints_fire() == 0) {
		printf("# execute breakpoints open but do not fire on this machine (a VM without "
		       "debug registers): skipped\n");
		mem_sink_fini(&m);
		skip();
	}
	run_calls(&bp, 10, 20000, &m, &st, &c);
	check_calls("breakpoint, 10 calls 20 ms apart", &m, &st, &c);
	mem_sink_fini(&m);
}

/*
 * A tracefs uprobe follows the traced command into its children (inherit): two runs of the
 * subject under a shell, 3 and 2 calls.
 */
static void test_tracefs_uprobe_inherited(void **state)
{
	static struct mem_sink m;
	const char *prog = getenv("AUXCAP_TRIGGER_PROG");
	struct perf_event_attr up, clk = { .type = PERF_TYPE_SOFTWARE,
					   .config = PERF_COUNT_SW_DUMMY,
					   .sample_period = 1 };
	struct auxcap_session_event ev = { .attr = &clk, .name = "dummy" };
	struct auxcap_session_event trig = { .attr = &up, .name = "trigger" };
	struct auxcap_session_stats st;
	struct auxcap_session *s;
	struct auxcap_elf *elf;
	char script[PATH_MAX * 2 + 64], name[64], idpath[PATH_MAX];
	char sh[] = "/bin/sh", dash_c[] = "-c";
	char *argv[] = { sh, dash_c, script, NULL };
	uint64_t addr, off;
	int go;
	pid_t pid;

	(void)state;
	assert_non_null(prog);
	assert_int_equal(auxcap_elf_open(prog, &elf), 0);
	assert_int_equal(auxcap_elf_symbol_lookup(elf, "trigger_point", &addr, &off), 1);
	auxcap_elf_free(elf);
	snprintf(name, sizeof(name), "test_trigger_%d", (int)getpid());
	assert_int_equal(auxcap_trigger_uprobe_tracefs_new(NULL, "bad-name", prog, off, false, &up),
			 -EINVAL);
	assert_int_equal(auxcap_trigger_uprobe_tracefs_new(NULL, name, prog, off, false, &up), 0);
	assert_int_equal(up.type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(auxcap_trigger_uprobe_tracefs_new(NULL, name, prog, off, false, &clk),
			 -EEXIST);
	snprintf(script, sizeof(script), "%s 3 1000 >/dev/null; %s 2 1000 >/dev/null", prog, prog);
	mem_sink_init(&m);
	pid = test_spawn(argv, &go);
	assert_true(pid > 0);
	{
		struct auxcap_session_opts o = {
			.sz = sizeof(o),
			.events = &ev,
			.nr_events = 1,
			.pids = &pid,
			.nr_pids = 1,
			.cpus = cpus,
			.nr_cpus = nr_cpus,
			.inherit = true,
			.enable_on_exec = true,
			.snapshot = true,
			.sink = &m.sink,
			.triggers = &trig,
			.nr_triggers = 1,
		};

		assert_int_equal(auxcap_session_open(&o, &s, NULL), 0);
	}
	test_spawn_go(go);
	assert_int_equal(auxcap_session_run(s, 60000), 0); /* until every task is gone */
	assert_int_equal(test_wait(pid), 0);		   /* the shell could fork */
	auxcap_session_get_stats(s, &st);
	auxcap_session_free(s);
	printf("# tracefs uprobe, inherited: %llu hits, %llu snapshots, %llu coalesced\n",
	       (unsigned long long)st.trigger_hits, (unsigned long long)st.snapshots,
	       (unsigned long long)st.snapshot_requests_coalesced);
	assert_int_equal(st.trigger_hits, 5);
	assert_int_equal(st.snapshots, st.trigger_hits - st.snapshot_requests_coalesced);
	assert_int_equal(m.nr_snaps, st.snapshots);
	/* Removed once its events are closed. */
	assert_int_equal(auxcap_trigger_uprobe_tracefs_delete(NULL, name), 0);
	snprintf(idpath, sizeof(idpath), "%s/events/auxcap/%s/id", test_tracefs(), name);
	assert_int_equal(access(idpath, F_OK), -1);
	assert_int_equal(auxcap_trigger_uprobe_tracefs_delete(NULL, name), -ENOENT);
	mem_sink_fini(&m);
}

static void test_triggers_need_snapshot_mode(void **state)
{
	struct perf_event_attr bp;
	struct auxcap_session_event trig = { .attr = &bp, .name = "trigger" };
	struct auxcap_session *s = (void *)0x1;
	struct mem_sink m;
	pid_t self = getpid();
	int failed = 0;
	struct auxcap_session_opts o = {
		.sz = sizeof(o),
		.sideband = true,
		.pids = &self,
		.nr_pids = 1,
		.sink = &m.sink,
		.triggers = &trig,
		.nr_triggers = 1,
	};

	(void)state;
	mem_sink_init(&m);
	assert_int_equal(
		auxcap_trigger_breakpoint_attr((uint64_t)(uintptr_t)auxcap_test_trigger_fn, &bp),
		0);
	assert_int_equal(auxcap_session_open(&o, &s, NULL), -EINVAL);
	o.snapshot = true;
	o.triggers = NULL;
	assert_int_equal(auxcap_session_open(&o, &s, NULL), -EINVAL);
	assert_ptr_equal(s, (void *)0x1);
	/* A trigger the kernel refuses is named as the one that failed. */
	o.triggers = &trig;
	bp.bp_len = 3;
	assert_true(auxcap_session_open(&o, &s, &failed) < 0);
	assert_int_equal(failed, AUXCAP_SESSION_FAILED_TRIGGER);
	mem_sink_fini(&m);
}

/* Count the executable mappings of @pid as /proc shows them (our own reading of maps). */
static int count_exec_maps(pid_t pid)
{
	char path[64], line[4096];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *perms = strchr(line, ' ');

		n += perms && perms[3] == 'x';
	}
	fclose(f);
	return n;
}

/* The side-band of a process that runs already: its COMM and one MMAP2 per code mapping. */
static void test_synthesize_running_process(void **state)
{
	static struct mem_sink m;
	const char *loop = getenv("AUXCAP_EXAMPLE_LOOP");
	char iters[] = "4000000000";
	char *argv[] = { (char *)loop, iters, NULL };
	char exe[PATH_MAX], want[PATH_MAX];
	struct auxcap_session *s;
	size_t off = 0, comms = 0, mmaps = 0, mmap_exe = 0;
	int go, n, nexec;
	pid_t pid;

	(void)state;
	assert_non_null(loop);
	assert_non_null(realpath(loop, want));
	mem_sink_init(&m);
	pid = test_spawn(argv, &go);
	assert_true(pid > 0);
	test_spawn_go(go);
	/* Wait for the exec (and the dynamic loader) to be done. */
	for (int i = 0; i < 200; i++) {
		char link[64];
		ssize_t k;

		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
		k = readlink(link, exe, sizeof(exe) - 1);
		exe[k > 0 ? k : 0] = '\0';
		if (!strcmp(exe, want) && count_exec_maps(pid) >= 3)
			break;
		usleep(10000);
	}
	usleep(50000);
	{
		struct auxcap_session_opts o = {
			.sz = sizeof(o),
			.sideband = true,
			.pids = &pid,
			.nr_pids = 1,
			.sink = &m.sink,
		};

		assert_int_equal(auxcap_session_open(&o, &s, NULL), 0);
	}
	nexec = count_exec_maps(pid);
	n = auxcap_session_synthesize(s, NULL);
	kill(pid, SIGKILL);
	test_wait(pid);
	auxcap_session_free(s);
	printf("# synthesized %d records for pid %d (%d code mappings in its maps)\n", n, (int)pid,
	       nexec);
	assert_int_equal(n, 1 + nexec);
	assert_int_equal(m.nr_recs, (size_t)n);
	assert_int_equal(m.nr_attrs, 1);
	while (off < m.recs_len) {
		const struct perf_event_header *h = (const void *)(m.recs + off);
		struct auxcap_sample_layout lay;
		struct auxcap_record rec;

		auxcap_sample_layout_from_attr(&m.attrs[0].attr, &lay);
		assert_int_equal(auxcap_record_parse(&lay, h, h->size, &rec), 0);
		assert_int_equal(rec.sid.id, m.attrs[0].ids[0]);
		assert_int_equal(rec.sid.pid, (uint32_t)pid);
		assert_int_equal(rec.sid.time, 0);
		if (rec.type == PERF_RECORD_COMM) {
			comms++;
			assert_int_equal(rec.u.comm.tid, (uint32_t)pid);
			assert_string_equal(rec.u.comm.comm, "auxcap-example-"); /* 15 chars */
		} else {
			assert_int_equal(rec.type, PERF_RECORD_MMAP2);
			mmaps++;
			mmap_exe += !strcmp(rec.u.mmap.filename, want);
		}
		off += h->size;
	}
	assert_int_equal(comms, 1);
	assert_int_equal(mmaps, (size_t)nexec);
	assert_int_equal(mmap_exe, 1);
	mem_sink_fini(&m);
}

/* The session's seam, logging which tracepoint fd belongs to which CPU and ring pauses. */
static struct {
	int fd, cpu;
} tp_fds[256];
static size_t nr_tp_fds;
static int paused_fds[256];
static size_t nr_paused;

static int log_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		    unsigned long flags)
{
	int fd = auxcap_sys_linux.perf_event_open(ctx, attr, pid, cpu, group_fd, flags);

	if (fd >= 0 && attr->type == PERF_TYPE_TRACEPOINT && nr_tp_fds < 256) {
		tp_fds[nr_tp_fds].fd = fd;
		tp_fds[nr_tp_fds++].cpu = cpu;
	}
	return fd;
}

static int log_ioctl(void *ctx, int fd, unsigned long req, unsigned long arg)
{
	if (req == PERF_EVENT_IOC_PAUSE_OUTPUT && arg && nr_paused < 256)
		paused_fds[nr_paused++] = fd;
	return auxcap_sys_linux.ioctl(ctx, fd, req, arg);
}

/*
 * A hit on one CPU of a per-CPU session: the snapshot stops that CPU's recorder first (its
 * trace is the one wanted), then the others'.  The hit is made on the last CPU, whose set is
 * the last one opened.
 */
static void test_hit_cpu_frozen_first(void **state)
{
	static struct mem_sink m;
	struct perf_event_attr tp = { .type = PERF_TYPE_TRACEPOINT,
				      .config = sys_enter_id(),
				      .sample_period = 1,
				      .sample_type = PERF_SAMPLE_RAW },
			       bp;
	struct auxcap_session_event ev = { .attr = &tp, .name = "raw_syscalls:sys_enter" };
	struct auxcap_session_event trig = { .attr = &bp, .name = "trigger" };
	struct auxcap_sys sys = auxcap_sys_linux;
	struct auxcap_session_stats st;
	struct auxcap_session *s;
	int hit_cpu = cpus[nr_cpus - 1], first_cpu = -1;
	const char *trig_kind = "breakpoint";
	cpu_set_t one, all;
	pthread_t th;
	void *ret;

	(void)state;
	if (nr_cpus < 2)
		skip();
	mem_sink_init(&m);
	nr_tp_fds = nr_paused = 0;
	sys.perf_event_open = log_open;
	sys.ioctl = log_ioctl;
	assert_int_equal(
		auxcap_trigger_breakpoint_attr((uint64_t)(uintptr_t)auxcap_test_trigger_fn, &bp),
		0);
	if (auxcap_trigger_breakpoints_fire() == 0) {
		/* The order of the pauses does not depend on the trigger's kind: a uprobe. */
		printf("# execute breakpoints do not fire on this machine: a uprobe instead\n");
		assert_int_equal(auxcap_trigger_uprobe_attr(NULL, self_exe, fn_offset, false, &bp),
				 0);
		trig_kind = "uprobe";
	}
	{
		struct auxcap_session_opts o = {
			.sz = sizeof(o),
			.sys = &sys,
			.events = &ev,
			.nr_events = 1,
			.cpus = cpus,
			.nr_cpus = nr_cpus,
			.snapshot = true,
			.snapshot_data_pages = 4,
			.sink = &m.sink,
			.triggers = &trig,
			.nr_triggers = 1,
		};

		assert_int_equal(auxcap_session_open(&o, &s, NULL), 0);
	}
	assert_int_equal(nr_tp_fds, nr_cpus);
	assert_int_equal(auxcap_session_enable(s, true), 0);
	assert_int_equal(pthread_create(&th, NULL, run_loop, s), 0);
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	CPU_ZERO(&one);
	CPU_SET(hit_cpu, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	(void)trigger_fn(1);
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
	for (int i = 0; i < 200 && !__atomic_load_n(&m.nr_snaps, __ATOMIC_ACQUIRE); i++)
		usleep(10000);
	auxcap_session_request(s, AUXCAP_REQ_STOP);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_int_equal((intptr_t)ret, 0);
	auxcap_session_get_stats(s, &st);
	auxcap_session_free(s);
	assert_int_equal(st.trigger_hits, 1);
	assert_int_equal(m.nr_snaps, 1);
	assert_int_equal(m.snaps[0].cpu, (uint32_t)hit_cpu);
	/* Every recorder paused once, the hit's CPU's first. */
	assert_int_equal(nr_paused, nr_cpus);
	for (size_t i = 0; i < nr_tp_fds; i++)
		if (tp_fds[i].fd == paused_fds[0])
			first_cpu = tp_fds[i].cpu;
	printf("# %s hit on cpu %d: cpu %d's recorder paused first of %zu\n", trig_kind, hit_cpu,
	       first_cpu, nr_paused);
	assert_int_equal(first_cpu, hit_cpu);
	mem_sink_fini(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_triggers_need_snapshot_mode),
		cmocka_unit_test(test_uprobe_pmu_each_hit_a_snapshot),
		cmocka_unit_test(test_uprobe_burst_coalesces),
		cmocka_unit_test(test_breakpoint_each_hit_a_snapshot),
		cmocka_unit_test(test_tracefs_uprobe_inherited),
		cmocka_unit_test(test_synthesize_running_process),
		cmocka_unit_test(test_hit_cpu_frozen_first),
	};
	struct auxcap_elf *elf;
	uint64_t addr;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	test_require_perf(1);
	if (!getenv("AUXCAP_TRIGGER_PROG") || !getenv("AUXCAP_EXAMPLE_LOOP"))
		test_skip("AUXCAP_TRIGGER_PROG or AUXCAP_EXAMPLE_LOOP is not set (run through "
			  "meson test)");
	if (access("/sys/bus/event_source/devices/uprobe/type", F_OK) < 0)
		test_skip("this kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)");
	for (long i = 0; i < n && i < 256; i++)
		cpus[nr_cpus++] = (int)i;
	if (!realpath("/proc/self/exe", self_exe) || auxcap_elf_open(self_exe, &elf) < 0)
		test_skip("cannot read this test's own executable");
	if (auxcap_elf_symbol_lookup(elf, "auxcap_test_trigger_fn", &addr, &fn_offset) != 1)
		test_skip("no symbol table in this test's executable (stripped?)");
	auxcap_elf_free(elf);
	return cmocka_run_group_tests_name("core/trigger_kernel", tests, NULL, NULL);
}
