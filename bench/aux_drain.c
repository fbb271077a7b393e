/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AUX drain in full-trace mode.  The emulated Intel PT producer replays a trace into a 4 MiB
 * AUX area from its own thread; the capture session drains it, as `auxcap record` does, into a
 * perf.data file on tmpfs (PERF_RECORD_AUXTRACE records written with writev() straight from
 * the AUX mapping).  Baseline, measured in the same run: a plain memcpy of the same bytes in
 * the same pieces (what the "hardware" does) followed by write() of them to a file on the
 * same tmpfs, in one thread.
 *
 *   1. baseline        memcpy+write bandwidth B (best of 3)
 *   2. full speed      producer unpaced: how fast the drain goes when it is the bottleneck,
 *                      D; the producer then outruns it and the driver truncates (losses are
 *                      printed: TRUNCATED records, bytes the hardware dropped)
 *   3. paced at 0.8 B  the producer at 0.8 x B: the drain must keep up with no loss at all
 *
 * Target (exit status 1 if missed): phase 3 drains 0.8 x B with no loss.
 *
 * Usage: auxcap-bench-aux-drain [-s SECONDS] [-d DIR] [-a AUX_PAGES]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auxcap/emu.h"
#include "auxcap/perf_data.h"
#include "auxcap/session.h"
#include "perf_data_sink.h"

#define CHUNK 65536		  /* bytes per hardware write, and per baseline write */
#define TRACE_LEN (16u << 20)	  /* the replayed trace, looped */
#define BASE_LEN (1024ull << 20) /* bytes the baseline copies and writes */

static const char *dir = "/dev/shm";
static double seconds = 3;
static size_t aux_pages = 1024;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fill(unsigned char *p, size_t len)
{
	uint64_t x = 88172645463325252ull;

	for (size_t i = 0; i < len; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * memcpy + write of BASE_LEN bytes in CHUNK pieces: bytes per second of wall time (returned)
 * and per second of this thread's CPU time (@ret_cpu_rate), best of 3.
 */
static double baseline(const unsigned char *src, double *ret_cpu_rate)
{
	char path[4096];
	unsigned char *buf = malloc(CHUNK);
	double best = 0;

	*ret_cpu_rate = 0;
	if (!buf)
		return 0;
	snprintf(path, sizeof(path), "%s/auxcap-bench-aux-base", dir);
	for (int run = 0; run < 3; run++) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		uint64_t done = 0, pos = 0;
		double t0, t, c, c0 = thread_cpu_s();

		if (fd < 0) {
			perror(path);
			free(buf);
			return 0;
		}
		t0 = now_s();
		while (done < BASE_LEN) {
			memcpy(buf, src + pos, CHUNK);
			if (write(fd, buf, CHUNK) != CHUNK) {
				perror("write");
				close(fd);
				free(buf);
				return 0;
			}
			done += CHUNK;
			pos = (pos + CHUNK) % TRACE_LEN;
		}
		t = now_s() - t0;
		c = thread_cpu_s() - c0;
		close(fd);
		unlink(path);
		if (BASE_LEN / t > best)
			best = (double)BASE_LEN / t;
		if (BASE_LEN / c > *ret_cpu_rate)
			*ret_cpu_rate = (double)BASE_LEN / c;
	}
	free(buf);
	return best;
}

struct drain_result {
	double rate;	     /* AUX bytes drained per second */
	uint64_t bytes;	     /* AUX bytes written to the file */
	uint64_t truncated;  /* PERF_RECORD_AUX with TRUNCATED */
	uint64_t dropped;    /* bytes the hardware could not write */
	uint64_t produced;   /* bytes the hardware wrote */
	uint64_t wakeups;
	double loop_cpu;     /* CPU seconds of the thread that drains */
};

struct loop_arg {
	struct auxcap_session *s;
	double cpu; /* CPU seconds the thread used */
};

static void *loop_main(void *arg)
{
	struct loop_arg *la = arg;
	struct timespec ts;
	int r = auxcap_session_run(la->s, -1);

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	la->cpu = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	return (void *)(intptr_t)r;
}

/* The producer replaying at @rate bytes/s (0: as fast as it can) for `seconds`. */
static int drain(const unsigned char *trace, uint64_t rate, struct drain_result *res)
{
	struct perf_event_attr attr = { .type = AUXCAP_EMU_TYPE_BASE + AUXCAP_EMU_PMU_INTEL_PT,
					.exclude_kernel = 1 };
	struct auxcap_session_event aux = { .attr = &attr, .name = "intel_pt//u" };
	struct auxcap_emu_replay_opts ro = { .sz = sizeof(ro), .chunk = CHUNK, .loop = true,
					     .rate = rate };
	struct auxcap_perf_writer_opts wo = { .sz = sizeof(wo) };
	struct auxcap_perf_writer *w = NULL;
	struct auxcap_emu_replay *rp = NULL;
	struct auxcap_session *s = NULL;
	struct auxcap_session_stats st;
	struct auxcap_emu_stats es;
	struct auxcap_perf_sink ps;
	struct auxcap_emu *emu = NULL;
	pid_t self = getpid();
	char path[4096];
	struct loop_arg la = { 0 };
	pthread_t th;
	void *ret;
	double t0, t1;
	int failed, r;

	memset(res, 0, sizeof(*res));
	snprintf(path, sizeof(path), "%s/auxcap-bench-aux-drain.data", dir);
	r = auxcap_emu_new(NULL, &emu);
	if (r == 0)
		r = auxcap_emu_replay_new(trace, TRACE_LEN, &ro, &rp);
	if (r == 0) {
		r = auxcap_emu_replay_attach(emu, AUXCAP_EMU_PMU_INTEL_PT, -1, rp);
		if (r == 0)
			rp = NULL;
	}
	if (r == 0)
		r = auxcap_perf_writer_open(path, &wo, &w);
	if (r == 0) {
		struct auxcap_session_opts o = {
			.sz = sizeof(o),
			.sys = auxcap_emu_sys(emu),
			.aux = &aux,
			.pids = &self,
			.nr_pids = 1,
			.aux_pages = aux_pages,
			.sink = &ps.sink,
		};

		auxcap_perf_sink_init(&ps, w);
		r = auxcap_session_open(&o, &s, &failed);
	}
	if (r == 0)
		r = auxcap_session_enable(s, true);
	if (r < 0) {
		fprintf(stderr, "aux_drain: set-up failed: %s\n", strerror(-r));
		goto out;
	}
	la.s = s;
	if (pthread_create(&th, NULL, loop_main, &la)) {
		r = -EAGAIN;
		goto out;
	}
	t0 = now_s();
	r = auxcap_emu_start(emu);
	if (r == 0) {
		struct timespec ts = { (time_t)seconds,
				       (long)((seconds - (double)(time_t)seconds) * 1e9) };

		nanosleep(&ts, NULL);
	}
	auxcap_emu_stop(emu);
	auxcap_session_request(s, AUXCAP_REQ_STOP);
	pthread_join(th, &ret);
	if (r == 0)
		r = (int)(intptr_t)ret;
	if (r == 0)
		r = auxcap_session_enable(s, false);
	if (r == 0)
		r = auxcap_session_drain(s);
	t1 = now_s();
	auxcap_session_get_stats(s, &st);
	auxcap_emu_stats(emu, -1, &es);
	res->bytes = st.aux_bytes;
	res->rate = (double)st.aux_bytes / (t1 - t0);
	res->truncated = st.aux_truncated;
	res->dropped = es.dropped;
	res->produced = es.produced;
	res->wakeups = st.wakeups;
	res->loop_cpu = la.cpu;
	if (r < 0)
		fprintf(stderr, "aux_drain: capture failed: %s\n", strerror(-r));
out:
	auxcap_session_free(s);
	if (w)
		(void)auxcap_perf_writer_close(w);
	unlink(path);
	auxcap_emu_replay_free(rp);
	auxcap_emu_free(emu);
	return r;
}

int main(int argc, char **argv)
{
	struct drain_result full, paced;
	unsigned char *trace;
	double base, base_cpu, load[1];
	int c;

	while ((c = getopt(argc, argv, "s:d:a:h")) != -1) {
		switch (c) {
		case 's': seconds = atof(optarg); break;
		case 'd': dir = optarg; break;
		case 'a': aux_pages = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: auxcap-bench-aux-drain [-s SECONDS] [-d DIR] "
					"[-a AUX_PAGES]\n");
			return 2;
		}
	}
	trace = malloc(TRACE_LEN);
	if (!trace || seconds <= 0)
		return 2;
	fill(trace, TRACE_LEN);
	base = baseline(trace, &base_cpu);
	if (base <= 0)
		return 2;
	if (getloadavg(load, 1) != 1)
		load[0] = -1;
	printf("aux_drain: %zu KiB AUX area, %d KiB hardware writes, file in %s, %.1f s runs, "
	       "load average %.1f on %ld CPUs\n",
	       aux_pages * 4, CHUNK / 1024, dir, seconds, load[0], sysconf(_SC_NPROCESSORS_ONLN));
	printf("  baseline memcpy+write:         %6.0f MB/s, %6.0f MB per CPU-second\n", base / 1e6,
	       base_cpu / 1e6);
	if (drain(trace, 0, &full) < 0)
		return 2;
	printf("  drain, producer at full speed: %6.0f MB/s, %6.0f MB per CPU-second of the "
	       "draining thread\n"
	       "      ratios %.2f (wall), %.2f (CPU); %" PRIu64 " MB written; loss: %" PRIu64
	       " TRUNCATED, %" PRIu64 " MB dropped by the hardware; %" PRIu64 " wakeups\n",
	       full.rate / 1e6, (double)full.bytes / full.loop_cpu / 1e6, full.rate / base,
	       (double)full.bytes / full.loop_cpu / base_cpu, full.bytes >> 20, full.truncated,
	       full.dropped >> 20, full.wakeups);
	if (drain(trace, (uint64_t)(0.8 * base), &paced) < 0)
		return 2;
	{
		double prod_rate = (double)paced.produced / seconds;
		bool met = !paced.truncated && !paced.dropped && paced.bytes == paced.produced &&
			   prod_rate >= 0.97 * 0.8 * base;

		printf("  drain, producer at 0.8x base:  %6.0f MB/s (producer %.0f MB/s), %6.0f MB "
		       "per CPU-second\n"
		       "      ratio %.2f (wall); %" PRIu64 " of %" PRIu64 " MB written; loss: %" PRIu64
		       " TRUNCATED, %" PRIu64 " bytes dropped; %" PRIu64 " wakeups\n",
		       paced.rate / 1e6, prod_rate / 1e6,
		       (double)paced.bytes / paced.loop_cpu / 1e6, paced.rate / base,
		       paced.bytes >> 20, paced.produced >> 20, paced.truncated, paced.dropped,
		       paced.wakeups);
		/* The producer's pacing is only accurate to a few percent over a run. */
		printf("target: the drain keeps up with 0.8x the baseline, every byte written, no "
		       "loss: %s\n",
		       met ? "met" : "MISSED");
		free(trace);
		return met ? 0 : 1;
	}
}
