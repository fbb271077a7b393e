/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Snapshot latency.  One emulated Intel PT event per online CPU, each with a 4 MiB AUX area in
 * snapshot (overwrite) mode, and the capture session running its loop in its own thread,
 * writing a perf.data file on tmpfs, as `auxcap record -S` does.  Before each snapshot the
 * "hardware" of every CPU writes a little more than its whole buffer (the bench steps the
 * emulator itself, so nothing else holds the emulator's lock), so every snapshot writes 4 MiB
 * per CPU.  Then SIGUSR2 is sent to the process (the handler asks the session for a
 * snapshot, as auxcap record's does) and the bench waits for the end of the snapshot.
 *
 * Measured over many snapshots (median, p99, max):
 *   request to frozen   from the request (in the signal handler) to every AUX event
 *                       stopped (the session's own measure, stored in stats and the file)
 *   trigger to on disk  from just before kill() to the snapshot's last byte written to the
 *                       file (the sink's end-of-snapshot round; tmpfs, so no device I/O)
 * Baselines, same run: the same signal waking a thread blocked in poll() through an eventfd
 * (the wake-up path alone), and write() of the same bytes (4 MiB per CPU) appended to a file
 * on the same tmpfs, plain and into space reserved beforehand (medians).  Like `auxcap record
 * -S`, the bench has the writer reserve the space of the next snapshot after each one (-R:
 * not, as before that existed).
 *
 * Targets (exit status 1 if missed): frozen median <= 50 us; on disk median <= 5 ms.
 *
 * Usage: auxcap-bench-snapshot-latency [-n SNAPSHOTS] [-d DIR] [-a AUX_PAGES] [-R]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "auxcap/emu.h"
#include "auxcap/perf_data.h"
#include "auxcap/session.h"
#include "perf_data_sink.h"

#define MAX_CPUS 64
#define MAX_SNAP 2000
#define TRACE_LEN (8u << 20)

static const char *dir = "/dev/shm";
static int nsnap = 100;
static size_t aux_pages = 1024;
static bool reserve = true; /* -R: no file space reserved ahead (as before it was) */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct dist {
	double med, p99, max; /* us */
};

static struct dist dist_of(uint64_t *v, int n)
{
	struct dist d;

	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	d.med = (double)v[n / 2] / 1e3;
	d.p99 = (double)v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] / 1e3;
	d.max = (double)v[n - 1] / 1e3;
	return d;
}

/* --- baselines ------------------------------------------------------------------------------ */

static int g_efd = -1;
static int g_done_efd = -1; /* the bench thread blocks on it, so it does not compete for a CPU */

static void wait_done(void)
{
	uint64_t v;

	while (read(g_done_efd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
}

static void post_done(void)
{
	uint64_t one = 1;

	(void)!write(g_done_efd, &one, sizeof(one));
}
static struct auxcap_session *g_session;

static void on_usr2(int sig)
{
	uint64_t one = 1;

	(void)sig;
	if (g_session)
		auxcap_session_request(g_session, AUXCAP_REQ_SNAPSHOT);
	else if (g_efd >= 0)
		(void)!write(g_efd, &one, sizeof(one));
}

struct ping {
	uint64_t woke; /* atomic: CLOCK_MONOTONIC when the waiter woke */
	int stop;
};

static void *ping_main(void *arg)
{
	struct ping *p = arg;
	struct pollfd pfd = { .fd = g_efd, .events = POLLIN };
	uint64_t v;

	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		if (poll(&pfd, 1, 100) == 1 && read(g_efd, &v, sizeof(v)) == sizeof(v)) {
			__atomic_store_n(&p->woke, now_ns(), __ATOMIC_RELEASE);
			post_done();
		}
	}
	return NULL;
}

/* Signal -> eventfd -> a thread in poll() wakes: the path without any capture work. */
static struct dist ping_baseline(int n)
{
	static uint64_t lat[MAX_SNAP];
	struct ping p = { 0 };
	pthread_t th;

	g_efd = eventfd(0, EFD_CLOEXEC);
	pthread_create(&th, NULL, ping_main, &p);
	usleep(10000);
	for (int i = 0; i < n; i++) {
		uint64_t t0;

		__atomic_store_n(&p.woke, 0, __ATOMIC_RELEASE);
		t0 = now_ns();
		kill(getpid(), SIGUSR2);
		wait_done();
		lat[i] = __atomic_load_n(&p.woke, __ATOMIC_ACQUIRE) - t0;
		usleep(1000);
	}
	__atomic_store_n(&p.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	close(g_efd);
	g_efd = -1;
	return dist_of(lat, n);
}

/*
 * The bytes of one snapshot written the way a plain tool would: @n write()s of @len bytes
 * each, appended to a file on the same tmpfs, @reps times; the median, in us.  With
 * @reserved, the space of each round is reserved beforehand (fallocate, untimed), as
 * auxcap's writer does between snapshots.
 */
static double write_baseline(const unsigned char *buf, int n, size_t len, int reps, bool reserved)
{
	static uint64_t lat[MAX_SNAP];
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/auxcap-bench-snap-base", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	if (fd < 0)
		return -1;
	for (int i = 0; i < reps; i++) {
		uint64_t t0;

		if (reserved)
			(void)fallocate(fd, FALLOC_FL_KEEP_SIZE, lseek(fd, 0, SEEK_END),
					(off_t)((size_t)n * len));
		t0 = now_ns();

		for (int k = 0; k < n; k++) {
			size_t done = 0;

			while (done < len) {
				ssize_t w = write(fd, buf + done, len - done);

				if (w <= 0)
					break;
				done += (size_t)w;
			}
		}
		lat[i] = now_ns() - t0;
		usleep(2000);
	}
	close(fd);
	unlink(path);
	return dist_of(lat, reps).med;
}

/* --- the capture ------------------------------------------------------------------------------ */

/* A sink in front of the perf.data sink that notes when a snapshot's last byte went out. */
struct timing_sink {
	struct auxcap_sink sink;
	struct auxcap_perf_sink ps;
	uint64_t aux_calls, aux_calls_seen;
	uint64_t done_ns; /* atomic */
	uint64_t done;	  /* atomic: snapshots ended */
};

static int ts_attr(void *ctx, const struct perf_event_attr *attr, const char *name,
		   const uint64_t *ids, size_t nr)
{
	struct timing_sink *t = ctx;

	return t->ps.sink.ops->attr(&t->ps, attr, name, ids, nr);
}

static int ts_record(void *ctx, const void *rec, size_t len)
{
	struct timing_sink *t = ctx;

	return t->ps.sink.ops->record(&t->ps, rec, len);
}

static int ts_aux(void *ctx, const struct auxcap_aux_chunk *chunk,
		  const struct auxcap_aux_span *span)
{
	struct timing_sink *t = ctx;

	t->aux_calls++;
	return t->ps.sink.ops->aux(&t->ps, chunk, span);
}

static int ts_round(void *ctx)
{
	struct timing_sink *t = ctx;
	int r = t->ps.sink.ops->round(&t->ps);

	/* A snapshot ends with a round after its AUX chunks (drains write no AUX here). */
	if (t->aux_calls != t->aux_calls_seen) {
		t->aux_calls_seen = t->aux_calls;
		__atomic_store_n(&t->done_ns, now_ns(), __ATOMIC_RELEASE);
		__atomic_fetch_add(&t->done, 1, __ATOMIC_ACQ_REL);
		post_done();
	}
	return r;
}

static int ts_snapshot(void *ctx, const struct auxcap_snapshot_info *info)
{
	struct timing_sink *t = ctx;

	return t->ps.sink.ops->snapshot(&t->ps, info);
}

static const struct auxcap_sink_ops timing_ops = {
	.attr = ts_attr,
	.record = ts_record,
	.aux = ts_aux,
	.round = ts_round,
	.snapshot = ts_snapshot,
};

static struct auxcap_emu *g_emu;
static int g_fds[MAX_CPUS];
static int g_nfds;

static int wrap_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		     unsigned long flags)
{
	const struct auxcap_sys *es = auxcap_emu_sys(g_emu);
	int fd = es->perf_event_open(ctx, attr, pid, cpu, group_fd, flags);

	if (fd >= 0 && attr->type >= AUXCAP_EMU_TYPE_BASE && g_nfds < MAX_CPUS)
		g_fds[g_nfds++] = fd;
	return fd;
}

static void *loop_main(void *arg)
{
	return (void *)(intptr_t)auxcap_session_run(arg, -1);
}

int main(int argc, char **argv)
{
	static uint64_t frozen[MAX_SNAP], disk[MAX_SNAP];
	struct perf_event_attr attr = { .type = AUXCAP_EMU_TYPE_BASE + AUXCAP_EMU_PMU_INTEL_PT,
					.exclude_kernel = 1 };
	struct auxcap_session_event aux = { .attr = &attr, .name = "intel_pt//u" };
	struct auxcap_perf_writer_opts wo = { .sz = sizeof(wo) };
	struct auxcap_perf_writer *w = NULL;
	struct auxcap_session_stats st;
	struct timing_sink t = { 0 };
	struct auxcap_sys sys;
	struct dist ping, df, dd;
	unsigned char *trace;
	int cpus[MAX_CPUS], ncpu, c, failed, r, met;
	uint64_t aux_bytes, before_bytes;
	double wbase, wbase_res;
	char path[4096];
	pthread_t th;
	void *ret;

	while ((c = getopt(argc, argv, "n:d:a:Rh")) != -1) {
		switch (c) {
		case 'n': nsnap = atoi(optarg); break;
		case 'R': reserve = false; break;
		case 'd': dir = optarg; break;
		case 'a': aux_pages = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: auxcap-bench-snapshot-latency [-n SNAPSHOTS] [-d DIR] "
					"[-a AUX_PAGES] [-R]\n");
			return 2;
		}
	}
	if (nsnap < 10 || nsnap > MAX_SNAP)
		return 2;
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	for (int i = 0; i < ncpu; i++)
		cpus[i] = i;
	trace = malloc(TRACE_LEN);
	if (!trace)
		return 2;
	/* Pseudo-random, as trace with timestamps is: no two laps of a buffer look alike. */
	{
		uint64_t x = 88172645463325252ull;

		for (size_t i = 0; i < TRACE_LEN; i += 8) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			memcpy(trace + i, &x, 8);
		}
	}
	signal(SIGUSR2, on_usr2);
	g_done_efd = eventfd(0, EFD_CLOEXEC);
	if (g_done_efd < 0)
		return 2;

	ping = ping_baseline(nsnap);
	wbase = write_baseline(trace, ncpu, aux_pages * 4096 < TRACE_LEN ? aux_pages * 4096 : TRACE_LEN,
			       nsnap, false);
	wbase_res = write_baseline(trace, ncpu,
				   aux_pages * 4096 < TRACE_LEN ? aux_pages * 4096 : TRACE_LEN, nsnap,
				   true);

	/* The capture: one emulated PT per CPU, each fed by its own looping replay. */
	r = auxcap_emu_new(NULL, &g_emu);
	for (int i = 0; r == 0 && i < ncpu; i++) {
		struct auxcap_emu_replay_opts ro = { .sz = sizeof(ro), .chunk = 65536,
						     .loop = true };
		struct auxcap_emu_replay *rp;

		r = auxcap_emu_replay_new(trace + (size_t)i * 4096, TRACE_LEN - (size_t)i * 4096, &ro,
					  &rp);
		if (r == 0 && (r = auxcap_emu_replay_attach(g_emu, AUXCAP_EMU_PMU_INTEL_PT, -1, rp)) < 0)
			auxcap_emu_replay_free(rp);
	}
	snprintf(path, sizeof(path), "%s/auxcap-bench-snapshot.data", dir);
	if (r == 0)
		r = auxcap_perf_writer_open(path, &wo, &w);
	if (r == 0) {
		struct auxcap_session_opts o = {
			.sz = sizeof(o),
			.sys = &sys,
			.aux = &aux,
			.cpus = cpus,
			.nr_cpus = (size_t)ncpu,
			.data_pages = 16,
			.aux_pages = aux_pages,
			.snapshot = true,
			.sink = &t.sink,
		};

		sys = *auxcap_emu_sys(g_emu);
		sys.perf_event_open = wrap_open;
		auxcap_perf_sink_init(&t.ps, w);
		t.sink.ops = &timing_ops;
		t.sink.ctx = &t;
		r = auxcap_session_open(&o, &g_session, &failed);
	}
	if (r == 0 && reserve) {
		/* As auxcap record -S: room for the next snapshot, reserved after each one. */
		t.ps.reserve = auxcap_session_snapshot_bytes(g_session);
		(void)auxcap_perf_writer_reserve(w, t.ps.reserve);
	}
	if (r == 0)
		r = auxcap_session_enable(g_session, true);
	if (r < 0 || g_nfds != ncpu) {
		fprintf(stderr, "snapshot_latency: set-up failed: %s\n", strerror(-r));
		return 2;
	}
	pthread_create(&th, NULL, loop_main, g_session);

	for (int i = 0; i < nsnap; i++) {
		uint64_t t0, done = __atomic_load_n(&t.done, __ATOMIC_ACQUIRE);

		/* Each CPU's hardware writes its whole buffer and a bit more. */
		for (int k = 0; k < g_nfds; k++)
			if (auxcap_emu_step(g_emu, g_fds[k], aux_pages * 4096 + 4096 * (size_t)(i % 7 + 1)) <
			    0)
				return 2;
		usleep(2000); /* let the loop settle in poll() */
		t0 = now_ns();
		kill(getpid(), SIGUSR2);
		wait_done();
		if (__atomic_load_n(&t.done, __ATOMIC_ACQUIRE) == done)
			return 2; /* cannot happen: woken by the end of this snapshot only */
		disk[i] = __atomic_load_n(&t.done_ns, __ATOMIC_ACQUIRE) - t0;
		auxcap_session_get_stats(g_session, &st);
		frozen[i] = st.snapshot_latency_ns_last;
	}
	auxcap_session_get_stats(g_session, &st);
	aux_bytes = st.aux_bytes;
	auxcap_session_request(g_session, AUXCAP_REQ_STOP);
	pthread_join(th, &ret);
	before_bytes = (uint64_t)nsnap * (uint64_t)g_nfds * aux_pages * 4096;

	df = dist_of(frozen, nsnap);
	dd = dist_of(disk, nsnap);
	printf("snapshot_latency: %d snapshots of %d CPUs x %zu KiB AUX (emulated Intel PT), file "
	       "in %s; %.0f MB written (%.0f MB expected)\n",
	       nsnap, g_nfds, aux_pages * 4, dir, (double)aux_bytes / 1e6,
	       (double)before_bytes / 1e6);
	printf("  request to frozen:   median %8.1f us  p99 %8.1f us  max %8.1f us   ratio to "
	       "baseline (median) %.2f\n",
	       df.med, df.p99, df.max, df.med / ping.med);
	printf("    baseline, signal -> eventfd -> poll() wake-up: median %.1f us  p99 %.1f us\n",
	       ping.med, ping.p99);
	printf("  trigger to on disk:  median %8.1f us  p99 %8.1f us  max %8.1f us   ratio to "
	       "baseline %.2f (the one %s reserved space)\n",
	       dd.med, dd.p99, dd.max, dd.med / (reserve ? wbase_res : wbase),
	       reserve ? "with" : "without");
	printf("    baseline, write() of the same %d x %zu MiB appended to a file in %s: median "
	       "%.1f us\n",
	       g_nfds, aux_pages / 256, dir, wbase);
	printf("    baseline, the same into space reserved beforehand (untimed fallocate): median "
	       "%.1f us\n",
	       wbase_res);
	met = df.med <= 50 && dd.med <= 5000 && aux_bytes == before_bytes;
	printf("targets: frozen median <= 50 us: %s; on disk median <= 5 ms: %s; every snapshot "
	       "whole: %s\n",
	       df.med <= 50 ? "met" : "MISSED", dd.med <= 5000 ? "met" : "MISSED",
	       aux_bytes == before_bytes ? "yes" : "NO");
	signal(SIGUSR2, SIG_IGN);
	auxcap_session_free(g_session);
	g_session = NULL;
	(void)auxcap_perf_writer_close(w);
	unlink(path);
	auxcap_emu_free(g_emu);
	free(trace);
	if ((intptr_t)ret != 0)
		fprintf(stderr, "snapshot_latency: the capture loop failed: %s\n",
			strerror(-(int)(intptr_t)ret));
	return met ? 0 : 1;
}
