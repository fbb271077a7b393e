/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injection: a capture (session set-up, enable, drains or snapshots, the poll loop,
 * disable, close, into a perf.data file) is run once to count the calls it makes through the
 * syscall seam and the writer's writes, then again once per call with that call failing:
 *
 *	perf_event_open   -ENOMEM, -EBUSY, -EACCES, -EINTR
 *	mmap              -ENOMEM, -EPERM
 *	ioctl             -EBUSY, -EINTR
 *	poll              -EINTR (retried), -ENOMEM
 *	close, munmap     -EINTR, -EINVAL after doing their work (ignored)
 *	output writev     -ENOSPC from that write on (a full disk stays full)
 *
 * After every run: no fd left open (/proc/self/fd before and after), no mapping left (every
 * mmap through the seam unmapped through it; on the real kernel also no perf_event mapping in
 * /proc/self/maps), no unmap or close of something the seam did not hand out; the injected
 * errno is what the capture reports (or nothing, for the calls whose failure is retried or
 * harmless), never another; and when records had reached the writer, the file reads back to
 * its end with the perf.data reader, holding every record the sink wrote (all of them but the
 * ones after the disk filled up, for -ENOSPC).
 *
 *	test_fault_inject emu       the emulated Intel PT PMU (unit suite)
 *	test_fault_inject kernel    cpu-clock and side-band on every CPU, real kernel (kernel suite)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "auxcap/emu.h"
#include "auxcap/perf_data.h"
#include "auxcap/pmu.h"
#include "auxcap/session.h"
#include "fault_sys.h"
#include "perf_data_sink.h"
#include "util.h"

static bool g_kernel; /* scenario: real kernel, else emulated PMU */

struct run {
	bool snapshot; /* flight-recorder mode */
	/* results */
	int err;	  /* first error an API call returned, 0 if none */
	const char *step; /* which call */
	bool started;	  /* records reached the writer */
	uint64_t sink_records, sink_aux;
	uint64_t file_records, file_aux; /* kernel records and AUXTRACE read back */
	int read_err;			 /* reader: open or walk error, 0 if fine */
	off_t file_size;
	bool snapshot_failed; /* emulated: a snapshot returned an error */
	bool aux_after_error; /* ... and trace written after it still reached the AUX area */
};

#define STEP(run, name, expr)                                                                  \
	do {                                                                                   \
		if ((run)->err == 0) {                                                         \
			int r_ = (expr);                                                       \
			if (r_ < 0) {                                                          \
				(run)->err = r_;                                               \
				(run)->step = (name);                                          \
			}                                                                      \
		}                                                                              \
	} while (0)

static void spin_ms(unsigned int ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

/* Walk the file as a consumer would. */
static void read_back(const char *path, struct run *run)
{
	struct auxcap_perf_reader_opts ro = { .sz = sizeof(ro) };
	struct auxcap_perf_reader *r;
	struct auxcap_perf_event ev;
	struct stat st;
	int ret;

	run->file_size = stat(path, &st) == 0 ? st.st_size : -1;
	run->file_records = run->file_aux = 0;
	ret = auxcap_perf_reader_open(path, &ro, &r);
	if (ret < 0) {
		run->read_err = ret;
		return;
	}
	while ((ret = auxcap_perf_reader_next(r, &ev)) == 1) {
		if (ev.rec.type < AUXCAP_PERF_RECORD_HEADER_ATTR)
			run->file_records++;
		else if (ev.rec.type == AUXCAP_PERF_RECORD_AUXTRACE)
			run->file_aux++;
	}
	run->read_err = ret;
	auxcap_perf_reader_close(r);
}

static int online_cpus(int **cpus, size_t *nr)
{
	char buf[256] = "";
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return auxcap_cpulist_parse(buf, cpus, nr);
}

/* One capture through @fs (wrapping the kernel or a new emulator) into @path via @fio. */
static void capture(struct fault_sys *fs, struct fault_io *fio, const char *path,
		    struct run *run, int plan_kind, unsigned long plan_at, int plan_err)
{
	struct auxcap_perf_writer_opts wo = { .sz = sizeof(wo), .io = &fio->io };
	struct auxcap_session_opts so = { .sz = sizeof(so) };
	struct perf_event_attr aux_attr, clk_attr;
	struct auxcap_session_event aux_ev = { &aux_attr, "intel_pt//u" };
	struct auxcap_session_event clk_ev = { &clk_attr, "cpu-clock" };
	struct auxcap_perf_writer *w = NULL;
	struct auxcap_session *s = NULL;
	struct auxcap_emu *emu = NULL;
	struct auxcap_perf_sink ps;
	pid_t self = getpid();
	int *cpus = NULL;
	size_t nr_cpus = 0;
	unsigned char trace[3000];

	run->err = 0;
	run->step = NULL;
	memset(&aux_attr, 0, sizeof(aux_attr));
	memset(&clk_attr, 0, sizeof(clk_attr));
	for (size_t i = 0; i < sizeof(trace); i++)
		trace[i] = (unsigned char)(i * 7 + 1);
	if (g_kernel) {
		assert_int_equal(online_cpus(&cpus, &nr_cpus), 0);
		fault_sys_init(fs, &auxcap_sys_linux);
		clk_attr.type = PERF_TYPE_SOFTWARE;
		clk_attr.config = PERF_COUNT_SW_CPU_CLOCK;
		clk_attr.sample_period = 100000; /* ns: about 10 samples per ms of spinning */
		clk_attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD;
		so.events = &clk_ev;
		so.nr_events = 1;
		so.sideband = true;
		so.cpus = cpus;
		so.nr_cpus = nr_cpus;
		so.data_pages = 8;
	} else {
		assert_int_equal(auxcap_emu_new(NULL, &emu), 0);
		fault_sys_init(fs, auxcap_emu_sys(emu));
		aux_attr.type = AUXCAP_EMU_TYPE_BASE + AUXCAP_EMU_PMU_INTEL_PT;
		aux_attr.exclude_kernel = 1;
		so.aux = &aux_ev;
		if (run->snapshot) {
			/* A real kernel event beside the emulated one: its overwrite ring is
			 * frozen with the AUX area at each snapshot. */
			clk_attr.type = PERF_TYPE_SOFTWARE;
			clk_attr.config = PERF_COUNT_SW_CPU_CLOCK;
			clk_attr.sample_period = 100000;
			clk_attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD;
			so.events = &clk_ev;
			so.nr_events = 1;
		}
		so.data_pages = 4;
		so.aux_pages = 4; /* 16 KiB: the snapshots wrap it */
	}
	if (plan_kind >= 0)
		fault_sys_plan(fs, (enum fault_kind)plan_kind, plan_at, plan_err);
	so.sys = &fs->sys;
	so.pids = &self;
	so.nr_pids = 1;
	so.snapshot = run->snapshot;

	wo.file_mode = AUXCAP_FILE_REPLACE;
	STEP(run, "writer_open", auxcap_perf_writer_open(path, &wo, &w));
	if (w) {
		auxcap_perf_sink_init(&ps, w);
		so.sink = &ps.sink;
	}
	STEP(run, "session_open", auxcap_session_open(&so, &s, NULL));
	STEP(run, "enable", auxcap_session_enable(s, true));
	for (int i = 0; i < 6 && run->err == 0; i++) {
		if (g_kernel)
			spin_ms(3);
		else
			(void)auxcap_emu_write(emu, fs->last_emu_fd, trace, sizeof(trace));
		if (!run->snapshot)
			STEP(run, "drain", auxcap_session_drain(s));
		else if (i % 3 == 2)
			STEP(run, "snapshot", auxcap_session_snapshot(s));
	}
	if (!g_kernel && run->err && run->step && !strcmp(run->step, "snapshot") &&
	    !(fs->injected && fs->failed_request == PERF_EVENT_IOC_ENABLE)) {
		/* A failed snapshot leaves the trace running (unless restarting it was what
		 * failed): new bytes land in the AUX area. */
		run->aux_after_error =
			auxcap_emu_write(emu, fs->last_emu_fd, trace, sizeof(trace)) ==
			(ssize_t)sizeof(trace);
		run->snapshot_failed = true;
	}
	if (run->err == 0) {
		/* One turn of the loop: the stop request wakes poll at once. */
		auxcap_session_request(s, AUXCAP_REQ_STOP);
		STEP(run, "run", auxcap_session_run(s, -1));
	}
	STEP(run, "disable", auxcap_session_enable(s, false));
	STEP(run, "drain", auxcap_session_drain(s));
	/* After an error the CLI frees everything, as here. */
	auxcap_session_free(s);
	if (w) {
		run->started = auxcap_perf_writer_data_size(w) > 0;
		run->sink_records = ps.records;
		run->sink_aux = ps.aux_records;
		int r = auxcap_perf_writer_close(w); /* always, as the CLI does */

		if (r < 0 && run->err == 0) {
			run->err = r;
			run->step = "writer_close";
		}
	}
	auxcap_emu_free(emu);
	free(cpus);
	if (run->started)
		read_back(path, run);
}

struct tally {
	unsigned long runs, surfaced, absorbed;
};

struct ctx {
	char dir[64];
	char path[128];
	char fds_before[4096];
	size_t perf_maps_before;
	struct tally kind[FAULT_NR_KINDS + 1]; /* + writev */
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return -1;
	snprintf(c->dir, sizeof(c->dir), "/tmp/auxcap-fault-XXXXXX");
	if (!mkdtemp(c->dir))
		return -1;
	snprintf(c->path, sizeof(c->path), "%s/fault.data", c->dir);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	unlink(c->path);
	rmdir(c->dir);
	free(c);
	return 0;
}

/* The checks after a run (see the top of the file). */
static void check_run(struct ctx *c, const struct fault_sys *fs, const struct fault_io *fio,
		      const struct run *run, const char *what)
{
	char fds_after[4096];

	fault_list_fds(fds_after, sizeof(fds_after));
	if (strcmp(c->fds_before, fds_after))
		fail_msg("%s: fds leaked: before [%s] after [%s]", what, c->fds_before, fds_after);
	if (fs->nr_maps || fs->nr_fds)
		fail_msg("%s: %zu mappings and %zu fds made through the seam were not released",
			 what, fs->nr_maps, fs->nr_fds);
	if (fs->bad_unmaps || fs->bad_closes)
		fail_msg("%s: %lu unmaps and %lu closes of things the seam did not hand out", what,
			 fs->bad_unmaps, fs->bad_closes);
	if (run->snapshot_failed && !run->aux_after_error)
		fail_msg("%s: after the failed snapshot the AUX event stayed stopped", what);
	if (g_kernel && fault_count_maps("perf_event") != c->perf_maps_before)
		fail_msg("%s: perf_event mappings left in /proc/self/maps", what);
	if (run->started) {
		if (run->read_err < 0 && !(fio->failures && run->file_size == 0))
			fail_msg("%s: the file does not read back: %s (%d)", what,
				 strerror(-run->read_err), run->read_err);
		if (!fio->failures && (run->file_records != run->sink_records ||
				       run->file_aux != run->sink_aux))
			fail_msg("%s: file holds %llu records and %llu AUXTRACE, the sink wrote %llu "
				 "and %llu",
				 what, (unsigned long long)run->file_records,
				 (unsigned long long)run->file_aux,
				 (unsigned long long)run->sink_records,
				 (unsigned long long)run->sink_aux);
		if (fio->failures && (run->file_records > run->sink_records ||
				      run->file_aux > run->sink_aux))
			fail_msg("%s: file holds more than the sink wrote", what);
	}
}

/* Dry run: the calls a capture makes. */
static void count_calls(struct ctx *c, bool snapshot, struct fault_sys *fs, struct fault_io *fio)
{
	struct run run = { .snapshot = snapshot };

	fault_io_init(fio, 0, 0);
	capture(fs, fio, c->path, &run, -1, 0, 0);
	if (run.err)
		fail_msg("fault-free capture failed in %s: %s", run.step, strerror(-run.err));
	check_run(c, fs, fio, &run, "fault-free run");
	assert_true(run.started && run.read_err == 0);
	assert_true(run.sink_records > 0);
	if (!g_kernel)
		assert_true(run.sink_aux > 0);
}

static void inject_all(void **state, bool snapshot)
{
	static const struct {
		enum fault_kind kind;
		int errs[4];
		bool must_surface[4]; /* the capture must report it */
	} plan[] = {
		{ FAULT_OPEN, { -ENOMEM, -EBUSY, -EACCES, -EINTR }, { true, true, true, true } },
		{ FAULT_MMAP, { -ENOMEM, -EPERM }, { true, true } },
		{ FAULT_IOCTL, { -EBUSY, -EINTR }, { true, true } },
		{ FAULT_POLL, { -EINTR, -ENOMEM }, { false, true } },
		{ FAULT_READ, { -EINTR, -EAGAIN }, { true, true } },
		{ FAULT_CLOSE, { -EINTR, -EINVAL }, { false, false } },
		{ FAULT_MUNMAP, { -EINTR, -EINVAL }, { false, false } },
	};
	struct ctx *c = *state;
	struct fault_sys fs;
	struct fault_io fio;
	unsigned long counts[FAULT_NR_KINDS], writes, total = 0, surfaced = 0;
	char what[160];

	fault_list_fds(c->fds_before, sizeof(c->fds_before));
	c->perf_maps_before = fault_count_maps("perf_event");
	count_calls(c, snapshot, &fs, &fio);
	memcpy(counts, fs.calls, sizeof(counts));
	writes = fio.writes;
	print_message("%s, %s: calls of a capture: open %lu, mmap %lu, munmap %lu, ioctl %lu, "
		      "poll %lu, read %lu, close %lu, writev %lu\n",
		      g_kernel ? "kernel" : "emulated", snapshot ? "snapshot" : "full trace",
		      counts[FAULT_OPEN], counts[FAULT_MMAP], counts[FAULT_MUNMAP],
		      counts[FAULT_IOCTL], counts[FAULT_POLL], counts[FAULT_READ],
		      counts[FAULT_CLOSE], writes);

	for (size_t p = 0; p < sizeof(plan) / sizeof(plan[0]); p++) {
		enum fault_kind kind = plan[p].kind;

		for (size_t e = 0; e < 4 && plan[p].errs[e]; e++) {
			int err = plan[p].errs[e];

			for (unsigned long n = 1; n <= counts[kind]; n++) {
				struct run run = { .snapshot = snapshot };

				fault_io_init(&fio, 0, 0);
				capture(&fs, &fio, c->path, &run, (int)kind, n, err);
				snprintf(what, sizeof(what), "%s call %lu of %lu failing with %s (%s)",
					 fault_kind_name(kind), n, counts[kind], strerror(-err),
					 snapshot ? "snapshot" : "full trace");
				check_run(c, &fs, &fio, &run, what);
				if (!fs.injected)
					continue; /* the capture took another path this time */
				if (run.err && run.err != err)
					fail_msg("%s: the capture reported %s in %s instead", what,
						 strerror(-run.err), run.step);
				if (plan[p].must_surface[e] && run.err != err)
					fail_msg("%s: the failure was not reported", what);
				c->kind[kind].runs++;
				c->kind[kind].surfaced += run.err == err;
				c->kind[kind].absorbed += run.err == 0;
				total++;
				surfaced += run.err == err;
			}
		}
	}
	/* A full disk from each write on. */
	for (unsigned long n = 1; n <= writes; n++) {
		struct run run = { .snapshot = snapshot };

		fault_io_init(&fio, n, -ENOSPC);
		capture(&fs, &fio, c->path, &run, -1, 0, 0);
		snprintf(what, sizeof(what), "writev %lu of %lu failing with ENOSPC (%s)", n, writes,
			 snapshot ? "snapshot" : "full trace");
		check_run(c, &fs, &fio, &run, what);
		if (!fio.failures)
			continue;
		if (run.err != -ENOSPC)
			fail_msg("%s: reported %s instead of ENOSPC", what,
				 run.err ? strerror(-run.err) : "success");
		c->kind[FAULT_NR_KINDS].runs++;
		c->kind[FAULT_NR_KINDS].surfaced++;
		total++;
		surfaced++;
	}
	print_message("%s, %s: %lu faults injected, %lu reported as the injected errno, %lu "
		      "absorbed (retried or harmless), 0 leaks, every started file read back\n",
		      g_kernel ? "kernel" : "emulated", snapshot ? "snapshot" : "full trace", total,
		      surfaced, total - surfaced);
	assert_true(total > 0);
}

static void test_fault_inject_full_trace(void **state)
{
	inject_all(state, false);
}

static void test_fault_inject_snapshot(void **state)
{
	inject_all(state, true);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fault_inject_full_trace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fault_inject_snapshot, setup, teardown),
	};

	if (argc != 2 || (strcmp(argv[1], "emu") && strcmp(argv[1], "kernel"))) {
		fprintf(stderr, "usage: %s emu|kernel\n", argv[0]);
		return 2;
	}
	g_kernel = !strcmp(argv[1], "kernel");
	if (g_kernel)
		test_require_perf(0);
	return cmocka_run_group_tests_name(g_kernel ? "core/fault_inject_kernel"
						    : "core/fault_inject_emu",
					   tests, NULL, NULL);
}
