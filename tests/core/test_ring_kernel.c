/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data ring reader against the real kernel: software events and tracepoints.
 *
 * Needs perf_event_open permission (root or a low perf_event_paranoid) and tracefs; exits 77
 * with the reason otherwise.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "auxcap/record.h"
#include "event.h"
#include "util.h"

static const struct auxcap_sys *sys = &auxcap_sys_linux;

static int open_tracepoint(const char *subsys, const char *name, struct perf_event_attr *attr,
			   pid_t pid)
{
	int64_t id = test_tracepoint_id(subsys, name);

	if (id < 0)
		return (int)id;
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->config = (uint64_t)id;
	return auxcap_event_open(sys, attr, pid, -1, -1, 0);
}

/*
 * A tracepoint on a one-page ring overflows: the LOST records the reader counts add up to the
 * kernel's own PERF_FORMAT_LOST count, and every event is either a sample read or a loss.
 */
static void test_ring_kernel_overflow_lost_matches_kernel_count(void **state)
{
	struct perf_event_attr attr;
	struct auxcap_sample_layout lay;
	struct auxcap_mapped_ring mr;
	struct auxcap_count cnt;
	const struct perf_event_header *h;
	struct auxcap_record rec;
	uint64_t id, samples = 0, other = 0;
	int fd, r;

	(void)state;
	memset(&attr, 0, sizeof(attr));
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	attr.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
	attr.sample_id_all = 1;
	attr.disabled = 1;
	attr.exclude_kernel = 0;
	fd = open_tracepoint("raw_syscalls", "sys_enter", &attr, 0);
	assert_true(fd >= 0);
	assert_int_equal(auxcap_event_id(sys, fd, &id), 0);
	assert_int_equal(auxcap_mapped_ring_open(sys, fd, 1, 0, &mr), 0);
	auxcap_sample_layout_from_attr(&attr, &lay);

	assert_int_equal(auxcap_event_enable(sys, fd, true), 0);
	for (int i = 0; i < 20000; i++)
		(void)syscall(SYS_getppid);
	/* Drain (no system calls in between), then make room for the LOST record to be written. */
	for (int pass = 0; pass < 2; pass++) {
		auxcap_ring_begin(&mr.ring);
		while ((r = auxcap_ring_next(&mr.ring, &h)) == 1) {
			assert_int_equal(auxcap_record_parse(&lay, h, h->size, &rec), 0);
			if (rec.type == PERF_RECORD_SAMPLE) {
				assert_int_equal(rec.u.sample.pid, getpid());
				assert_int_equal(rec.u.sample.id, id);
				assert_int_equal(rec.u.sample.period, 1);
				samples++;
			} else if (rec.type == PERF_RECORD_LOST) {
				assert_int_equal(rec.u.lost.id, id);
				assert_true(rec.has_sample_id);
				assert_int_equal(rec.sid.id, id);
				assert_int_equal(rec.sid.pid, getpid());
			} else {
				other++;
			}
		}
		assert_int_equal(r, 0);
		auxcap_ring_end(&mr.ring);
		if (pass == 0)
			for (int i = 0; i < 10; i++)
				(void)syscall(SYS_getppid);
	}
	assert_int_equal(auxcap_event_enable(sys, fd, false), 0);
	/* The DISABLE ioctl's own sys_enter may have been recorded: drain it. */
	auxcap_ring_begin(&mr.ring);
	while (auxcap_ring_next(&mr.ring, &h) == 1) {
		assert_int_equal(auxcap_record_parse(&lay, h, h->size, &rec), 0);
		samples += rec.type == PERF_RECORD_SAMPLE;
	}
	auxcap_ring_end(&mr.ring);

	assert_int_equal(auxcap_event_read_count(sys, fd, attr.read_format, &cnt), 0);
	printf("# events %llu, samples read %llu, lost (reader) %llu in %llu LOST records, lost "
	       "(kernel) %llu\n",
	       (unsigned long long)cnt.value, (unsigned long long)samples,
	       (unsigned long long)mr.ring.stats.lost,
	       (unsigned long long)mr.ring.stats.lost_records, (unsigned long long)cnt.lost);
	assert_true(mr.ring.stats.lost > 1000); /* it really overflowed */
	assert_int_equal(mr.ring.stats.lost, cnt.lost);
	assert_int_equal(samples + mr.ring.stats.lost, cnt.value);
	assert_int_equal(mr.ring.stats.corrupt, 0);
	assert_int_equal(other, 0);
	auxcap_mapped_ring_close(&mr);
	close(fd);
}

/*
 * A write_backward ring mapped read-only (overwrite mode) holds the newest records: after 100k
 * system calls, reading from data_head gives well-formed samples newest first, the pause ioctl
 * itself first, then getppid calls, with strictly decreasing times, filling the ring.
 */
static void test_ring_kernel_backward_overwrite_newest_in_order(void **state)
{
	struct perf_event_attr attr;
	struct auxcap_sample_layout lay;
	struct auxcap_mapped_ring mr;
	const struct perf_event_header *h;
	struct auxcap_record rec;
	uint64_t n = 0, last_time = UINT64_MAX, rec_size = 0, getppid_seen = 0;
	long nr;
	int fd;

	(void)state;
	memset(&attr, 0, sizeof(attr));
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
	attr.write_backward = 1;
	attr.disabled = 1;
	fd = open_tracepoint("raw_syscalls", "sys_enter", &attr, 0);
	assert_true(fd >= 0);
	assert_int_equal(auxcap_mapped_ring_open(sys, fd, 8,
						 AUXCAP_RING_OVERWRITE | AUXCAP_RING_BACKWARD, &mr),
			 0);
	auxcap_sample_layout_from_attr(&attr, &lay);

	assert_int_equal(auxcap_event_enable(sys, fd, true), 0);
	for (int i = 0; i < 100000; i++)
		(void)syscall(SYS_getppid);
	assert_int_equal(auxcap_event_pause_output(sys, fd, true), 0);

	auxcap_ring_backward_begin(&mr.ring);
	while (auxcap_ring_next(&mr.ring, &h) == 1) {
		assert_int_equal(auxcap_record_parse(&lay, h, h->size, &rec), 0);
		assert_int_equal(rec.type, PERF_RECORD_SAMPLE);
		assert_int_equal(rec.u.sample.tid, (uint32_t)syscall(SYS_gettid));
		assert_true(rec.u.sample.time < last_time);
		last_time = rec.u.sample.time;
		/* raw_syscalls:sys_enter: 8 bytes of common fields, then long id. */
		assert_true(rec.u.sample.raw.size >= 16);
		memcpy(&nr, (const unsigned char *)rec.u.sample.raw.data + 8, sizeof(nr));
		if (n == 0)
			assert_int_equal(nr, SYS_ioctl); /* the newest: PAUSE_OUTPUT */
		else
			assert_int_equal(nr, SYS_getppid);
		getppid_seen += nr == SYS_getppid;
		if (!rec_size)
			rec_size = h->size;
		assert_int_equal(h->size, rec_size);
		n++;
	}
	printf("# %llu records of %llu bytes read newest first from a %llu-byte ring\n",
	       (unsigned long long)n, (unsigned long long)rec_size,
	       (unsigned long long)mr.ring.size);
	/* The ring was lapped many times; it holds every whole record that fits. */
	assert_int_equal(n, mr.ring.size / rec_size);
	assert_int_equal(getppid_seen, n - 1);
	assert_int_equal(mr.ring.stats.corrupt, 0);
	assert_int_equal(auxcap_event_pause_output(sys, fd, false), 0);
	auxcap_mapped_ring_close(&mr);
	close(fd);
}

static char *example_argv(char *iters, char *children)
{
	const char *p = getenv("AUXCAP_EXAMPLE_LOOP");

	(void)iters;
	(void)children;
	if (!p)
		test_skip("AUXCAP_EXAMPLE_LOOP is not set (run through meson test)");
	return (char *)p;
}

/*
 * Counting syscalls:sys_enter_getppid with inherit on a program that forks: the count covers
 * the children.  The example makes ceil(N / 2^20) getppid calls per process.
 */
static uint64_t count_getppid(int inherit, char *children)
{
	struct perf_event_attr attr;
	struct auxcap_count cnt;
	char iters[] = "3145728"; /* 3 * 2^20: getppid at i = 0, 2^20, 2^21 */
	char *argv[] = { example_argv(iters, children), iters, children, NULL };
	int go, fd, r;
	pid_t pid;

	pid = test_spawn(argv, &go);
	assert_true(pid > 0);
	memset(&attr, 0, sizeof(attr));
	attr.inherit = (unsigned int)inherit;
	attr.enable_on_exec = 1;
	attr.disabled = 1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	fd = open_tracepoint("syscalls", "sys_enter_getppid", &attr, pid);
	if (fd == -ENOENT) {
		kill(pid, SIGKILL);
		test_wait(pid);
		test_skip("syscalls:sys_enter_getppid is missing (kernel without "
			  "CONFIG_FTRACE_SYSCALLS)");
	}
	assert_true(fd >= 0);
	test_spawn_go(go);
	r = test_wait(pid);
	assert_int_equal(r, 0);
	assert_int_equal(auxcap_event_read_count(sys, fd, attr.read_format, &cnt), 0);
	assert_true(cnt.time_enabled > 0);
	close(fd);
	return cnt.value;
}

static void test_ring_kernel_inherit_counts_children(void **state)
{
	char three[] = "3", zero[] = "0";
	uint64_t with, without, alone;

	(void)state;
	with = count_getppid(1, three);
	without = count_getppid(0, three);
	alone = count_getppid(1, zero);
	printf("# getppid calls: inherit with 3 children %llu, no inherit %llu, no children "
	       "%llu\n",
	       (unsigned long long)with, (unsigned long long)without, (unsigned long long)alone);
	assert_int_equal(alone, 3);
	assert_int_equal(without, 3);
	assert_int_equal(with, 4 * 3);
}

/* cpu-clock sampling of a busy child: SAMPLE records whose ip, tid and time parse. */
static void test_ring_kernel_cpu_clock_samples_of_child(void **state)
{
	struct perf_event_attr attr;
	struct auxcap_sample_layout lay;
	struct auxcap_mapped_ring mr;
	const struct perf_event_header *h;
	struct auxcap_record rec;
	char iters[] = "300000000", zero[] = "0";
	char *argv[] = { example_argv(iters, zero), iters, zero, NULL };
	uint64_t samples = 0, user = 0, last_time = 0, comm = 0;
	int go, fd;
	pid_t pid;

	(void)state;
	pid = test_spawn(argv, &go);
	assert_true(pid > 0);
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = 200000; /* ns */
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			   PERF_SAMPLE_PERIOD;
	attr.sample_id_all = 1;
	attr.comm = 1;
	attr.mmap2 = 1;
	attr.task = 1;
	attr.disabled = 1;
	attr.enable_on_exec = 1;
	fd = auxcap_event_open(sys, &attr, pid, -1, -1, 0);
	assert_true(fd >= 0);
	assert_int_equal(auxcap_mapped_ring_open(sys, fd, 64, 0, &mr), 0);
	auxcap_sample_layout_from_attr(&attr, &lay);
	test_spawn_go(go);
	assert_int_equal(test_wait(pid), 0);

	auxcap_ring_begin(&mr.ring);
	while (auxcap_ring_next(&mr.ring, &h) == 1) {
		assert_int_equal(auxcap_record_parse(&lay, h, h->size, &rec), 0);
		if (rec.type == PERF_RECORD_COMM) {
			assert_int_equal(rec.u.comm.pid, pid);
			comm += strstr(rec.u.comm.comm, "auxcap-example") != NULL;
			continue;
		}
		if (rec.type != PERF_RECORD_SAMPLE)
			continue;
		assert_int_equal(rec.u.sample.pid, pid);
		assert_int_equal(rec.u.sample.tid, pid);
		assert_true(rec.u.sample.ip != 0);
		assert_true(rec.u.sample.time >= last_time);
		assert_int_equal(rec.u.sample.period, 200000);
		last_time = rec.u.sample.time;
		samples++;
		if ((rec.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER) {
			assert_true(rec.u.sample.ip < 0x800000000000ull);
			user++;
		}
	}
	auxcap_ring_end(&mr.ring);
	printf("# %llu samples, %llu in user space\n", (unsigned long long)samples,
	       (unsigned long long)user);
	assert_true(samples >= 20);
	assert_true(user * 10 >= samples * 8); /* the loop runs in user space */
	assert_true(comm >= 1);
	assert_int_equal(mr.ring.stats.lost, 0);
	auxcap_mapped_ring_close(&mr);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_kernel_overflow_lost_matches_kernel_count),
		cmocka_unit_test(test_ring_kernel_backward_overwrite_newest_in_order),
		cmocka_unit_test(test_ring_kernel_inherit_counts_children),
		cmocka_unit_test(test_ring_kernel_cpu_clock_samples_of_child),
	};

	test_require_perf(1);
	if (test_tracepoint_id("raw_syscalls", "sys_enter") < 0)
		test_skip("tracepoint raw_syscalls:sys_enter is not available in tracefs");
	return cmocka_run_group_tests_name("core/ring_kernel", tests, NULL, NULL);
}
