/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AUX drain in full-trace mode.  The emulated Intel PT producer replays a trace into a 4 MiB
 * AUX area from its own thread; the capture session drains it, as `auxcap record` does, into a
 * perf.data file on tmpfs (PERF_RECORD_AUXTRACE records written with writev() straight from
 * the AUX mapping).  Baseline, measured in the same run: a plain memcpy of the same bytes in
 * the same pieces (what the "hardware" does) followed by write() of them to a file on the
 * same tmpfs, in one thread.
 *
 * The machine is shared, so the phases run in interleaved rounds and medians are kept.  Each
 * round:
 *   1. baseline        memcpy+write bandwidth B of this round
 *   2. loaded baseline the same memcpy+write while the emulated producer writes 0.8 x B into
 *                      a snapshot-mode AUX area nobody reads: the baseline beside the CPU
 *                      load the emulated hardware costs (real hardware costs none)
 *   3. full speed      producer unpaced: how fast the drain goes when it is the bottleneck,
 *                      D; the producer then outruns it and the driver truncates (losses are
 *                      printed: TRUNCATED records, bytes the hardware dropped)
 *   4. paced at 0.8 B  the producer at 0.8 x B: the drain must keep up with no loss at all
 * Every phase writes the same number of bytes (-b, 1 GiB by default), each into a new file
 * that is deleted afterwards: on the project's VM, tmpfs pages beyond the first ~2.5 GB
 * allocated in a row cost about seven times more to write (memory the hypervisor has to
 * back again), so a phase that wrote more than the baseline was charged for that, not for
 * its own work (the earlier figures, from fixed-time phases writing 1-2 GB, were).
 * For the draining thread: where its wall time went (on a CPU, waiting for one; the rest
 * asleep), from CPU time and /proc/thread-self/schedstat; the producer's CPU is the
 * process's minus the drain's.
 *
 * Target (exit status 1 if missed): phase 4 drains 0.8 x B with no loss, in every round.
 *
 * Usage: auxcap-bench-aux-drain [-b MIB] [-r ROUNDS] [-d DIR] [-a AUX_PAGES]
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
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "auxcap/emu.h"
#include "auxcap/perf_data.h"
#include "auxcap/session.h"
#include "perf_data_sink.h"

#define CHUNK 65536		 /* bytes per hardware write, and per baseline write */
#define TRACE_LEN (16u << 20)	 /* the replayed trace, looped */
#define MAX_SECONDS 20.0 /* a drain phase ends after this even if short of its bytes */
#define MAX_ROUNDS 50

static const char *dir = "/dev/shm";
static uint64_t phase_len = 1024ull << 20; /* bytes each phase writes (-b MiB) */
static int rounds = 5;
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

static double process_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Seconds the calling thread waited for a CPU (schedstat's run delay; 0 if absent). */
static double thread_wait_s(void)
{
	unsigned long long run = 0, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f) {
		if (fscanf(f, "%llu %llu", &run, &wait) != 2)
			wait = 0;
		fclose(f);
	}
	return (double)wait / 1e9;
}

/*
 * memcpy + write of phase_len bytes in CHUNK pieces: bytes per second of wall time (returned)
 * and per second of this thread's CPU time (@ret_cpu_rate).
 */
static double baseline(const unsigned char *src, double *ret_cpu_rate)
{
	char path[4096];
	unsigned char *buf = malloc(CHUNK);
	uint64_t done = 0, pos = 0;
	double t0, t, c, c0;
	int fd;

	*ret_cpu_rate = 0;
	if (!buf)
		return 0;
	snprintf(path, sizeof(path), "%s/auxcap-bench-aux-base", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(path);
		free(buf);
		return 0;
	}
	c0 = thread_cpu_s();
	t0 = now_s();
	while (done < phase_len) {
		memcpy(buf, src + pos, CHUNK);
		if (write(fd, buf, CHUNK) != CHUNK) {
			perror("write");
			close(fd);
			unlink(path);
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
	free(buf);
	*ret_cpu_rate = (double)phase_len / c;
	return (double)phase_len / t;
}

struct drain_result {
	double rate;	     /* AUX bytes drained per second */
	uint64_t bytes;	     /* AUX bytes written to the file */
	uint64_t truncated;  /* PERF_RECORD_AUX with TRUNCATED */
	uint64_t dropped;    /* bytes the hardware could not write */
	uint64_t produced;   /* bytes the hardware wrote */
	uint64_t wakeups;
	double wall;	     /* seconds from the producer's start to the last byte written */
	double prod_time;    /* seconds the producer ran */
	double loop_cpu;     /* CPU seconds of the thread that drains */
	double loop_wait;    /* seconds it waited for a CPU */
	double prod_cpu;     /* CPU seconds of the rest of the process (the producer) */
};

struct loop_arg {
	struct auxcap_session *s;
	double cpu, wait; /* CPU seconds the thread used; seconds it waited for a CPU */
};

static void *loop_main(void *arg)
{
	struct loop_arg *la = arg;
	double c0 = thread_cpu_s(), w0 = thread_wait_s();
	int r;

	r = auxcap_session_run(la->s, -1);
	la->cpu = thread_cpu_s() - c0;
	la->wait = thread_wait_s() - w0;
	return (void *)(intptr_t)r;
}

/*
 * The emulated PT producer replaying @trace at @rate bytes/s (0: as fast as it can) into an
 * AUX area of a session writing to @w (NULL: a snapshot-mode area nobody reads, no loop).
 */
struct rig {
	struct auxcap_emu *emu;
	struct auxcap_session *s;
	struct auxcap_perf_writer *w;
	struct auxcap_perf_sink ps;
	struct perf_event_attr attr;
	struct auxcap_session_event aux;
	char path[4096];
};

static void rig_free(struct rig *g)
{
	auxcap_session_free(g->s);
	if (g->w)
		(void)auxcap_perf_writer_close(g->w);
	if (g->path[0])
		unlink(g->path);
	auxcap_emu_free(g->emu);
}

static int rig_open(struct rig *g, const unsigned char *trace, uint64_t rate, bool snapshot)
{
	struct auxcap_emu_replay_opts ro = { .sz = sizeof(ro), .chunk = CHUNK, .loop = true,
					     .rate = rate };
	struct auxcap_perf_writer_opts wo = { .sz = sizeof(wo) };
	struct auxcap_emu_replay *rp = NULL;
	pid_t self = getpid();
	int failed, r;

	memset(g, 0, sizeof(*g));
	g->attr = (struct perf_event_attr){ .type = AUXCAP_EMU_TYPE_BASE + AUXCAP_EMU_PMU_INTEL_PT,
					    .exclude_kernel = 1 };
	g->aux = (struct auxcap_session_event){ .attr = &g->attr, .name = "intel_pt//u" };
	snprintf(g->path, sizeof(g->path), "%s/auxcap-bench-aux-drain.data", dir);
	r = auxcap_emu_new(NULL, &g->emu);
	if (r == 0)
		r = auxcap_emu_replay_new(trace, TRACE_LEN, &ro, &rp);
	if (r == 0) {
		r = auxcap_emu_replay_attach(g->emu, AUXCAP_EMU_PMU_INTEL_PT, -1, rp);
		if (r < 0)
			auxcap_emu_replay_free(rp);
	}
	if (r == 0)
		r = auxcap_perf_writer_open(g->path, &wo, &g->w);
	if (r == 0) {
		struct auxcap_session_opts o = {
			.sz = sizeof(o),
			.sys = auxcap_emu_sys(g->emu),
			.aux = &g->aux,
			.pids = &self,
			.nr_pids = 1,
			.aux_pages = aux_pages,
			.snapshot = snapshot,
			.sink = &g->ps.sink,
		};

		auxcap_perf_sink_init(&g->ps, g->w);
		r = auxcap_session_open(&o, &g->s, &failed);
	}
	if (r == 0)
		r = auxcap_session_enable(g->s, true);
	if (r < 0) {
		fprintf(stderr, "aux_drain: set-up failed: %s\n", strerror(-r));
		rig_free(g);
	}
	return r;
}

static void sleep_s(double sec)
{
	struct timespec ts = { (time_t)sec, (long)((sec - (double)(time_t)sec) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The producer replaying at @rate bytes/s (0: as fast as it can) until it wrote phase_len. */
static int drain(const unsigned char *trace, uint64_t rate, struct drain_result *res)
{
	struct auxcap_session_stats st;
	struct auxcap_emu_stats es;
	struct loop_arg la = { 0 };
	struct rig g;
	pthread_t th;
	void *ret;
	double t0, t1, pc0;
	int r;

	memset(res, 0, sizeof(*res));
	r = rig_open(&g, trace, rate, false);
	if (r < 0)
		return r;
	la.s = g.s;
	if (pthread_create(&th, NULL, loop_main, &la)) {
		rig_free(&g);
		return -EAGAIN;
	}
	pc0 = process_cpu_s();
	t0 = now_s();
	r = auxcap_emu_start(g.emu);
	/* Until the hardware wrote the phase's bytes: they are then drained and written. */
	while (r == 0 && now_s() - t0 < MAX_SECONDS) {
		sleep_s(0.002);
		if (auxcap_emu_stats(g.emu, -1, &es) == 0 && es.produced >= phase_len)
			break;
	}
	auxcap_emu_stop(g.emu);
	res->prod_time = now_s() - t0;
	auxcap_session_request(g.s, AUXCAP_REQ_STOP);
	pthread_join(th, &ret);
	if (r == 0)
		r = (int)(intptr_t)ret;
	if (r == 0)
		r = auxcap_session_enable(g.s, false);
	if (r == 0)
		r = auxcap_session_drain(g.s);
	t1 = now_s();
	auxcap_session_get_stats(g.s, &st);
	auxcap_emu_stats(g.emu, -1, &es);
	res->bytes = st.aux_bytes;
	res->wall = t1 - t0;
	res->rate = (double)st.aux_bytes / (t1 - t0);
	res->truncated = st.aux_truncated;
	res->dropped = es.dropped;
	res->produced = es.produced;
	res->wakeups = st.wakeups;
	res->loop_cpu = la.cpu;
	res->loop_wait = la.wait;
	res->prod_cpu = process_cpu_s() - pc0 - la.cpu;
	if (r < 0)
		fprintf(stderr, "aux_drain: capture failed: %s\n", strerror(-r));
	rig_free(&g);
	return r;
}

/* The baseline while the emulated producer writes @rate bytes/s into a snapshot-mode area. */
static double loaded_baseline(const unsigned char *trace, uint64_t rate, double *ret_cpu_rate,
			      double *ret_prod_rate)
{
	struct auxcap_emu_stats es;
	struct rig g;
	double b, t0;

	*ret_cpu_rate = *ret_prod_rate = 0;
	if (rig_open(&g, trace, rate, true) < 0)
		return 0;
	t0 = now_s();
	if (auxcap_emu_start(g.emu) < 0) {
		rig_free(&g);
		return 0;
	}
	b = baseline(trace, ret_cpu_rate);
	auxcap_emu_stop(g.emu);
	auxcap_emu_stats(g.emu, -1, &es);
	*ret_prod_rate = (double)es.produced / (now_s() - t0);
	rig_free(&g);
	return b;
}

struct round {
	double load;
	double base, base_cpu;		  /* bytes/s wall, bytes per CPU-second */
	double lbase, lbase_cpu, lprod; /* the loaded baseline, and its producer's rate */
	struct drain_result full, paced;
	bool met;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median, minimum and maximum of @n values picked by @get from the rounds. */
static void spread(const struct round *rs, int n, double (*get)(const struct round *),
		   double *med, double *lo, double *hi)
{
	double v[MAX_ROUNDS];

	for (int i = 0; i < n; i++)
		v[i] = get(&rs[i]);
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	*med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*lo = v[0];
	*hi = v[n - 1];
}

static double get_base(const struct round *r) { return r->base / 1e6; }
static double get_base_cpu(const struct round *r) { return r->base_cpu / 1e6; }
static double get_lbase(const struct round *r) { return r->lbase / 1e6; }
static double get_lprod(const struct round *r) { return r->lprod / 1e6; }
static double get_full(const struct round *r) { return r->full.rate / 1e6; }
static double get_full_ratio(const struct round *r) { return r->full.rate / r->base; }
static double get_full_lratio(const struct round *r) { return r->full.rate / r->lbase; }
static double get_full_cpu(const struct round *r)
{
	return (double)r->full.bytes / r->full.loop_cpu / r->base_cpu;
}
static double get_full_run(const struct round *r) { return r->full.loop_cpu / r->full.wall; }
static double get_full_wait(const struct round *r) { return r->full.loop_wait / r->full.wall; }
static double get_full_prod(const struct round *r) { return r->full.prod_cpu / r->full.wall; }
static double get_paced(const struct round *r) { return r->paced.rate / 1e6; }
static double get_paced_run(const struct round *r) { return r->paced.loop_cpu / r->paced.wall; }
static double get_paced_wait(const struct round *r) { return r->paced.loop_wait / r->paced.wall; }
static double get_paced_prod(const struct round *r) { return r->paced.prod_cpu / r->paced.wall; }
static double get_load(const struct round *r) { return r->load; }

static void print_spread(const char *what, const struct round *rs, int n,
			 double (*get)(const struct round *), int decimals)
{
	double med, lo, hi;

	spread(rs, n, get, &med, &lo, &hi);
	printf("  %-44s median %.*f (%.*f to %.*f)\n", what, decimals, med, decimals, lo,
	       decimals, hi);
}

int main(int argc, char **argv)
{
	struct round rs[MAX_ROUNDS];
	unsigned char *trace;
	int c, met = 0;

	while ((c = getopt(argc, argv, "b:r:d:a:h")) != -1) {
		switch (c) {
		case 'b': phase_len = strtoull(optarg, NULL, 0) << 20; break;
		case 'r': rounds = atoi(optarg); break;
		case 'd': dir = optarg; break;
		case 'a': aux_pages = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: auxcap-bench-aux-drain [-b MIB] [-r ROUNDS] "
					"[-d DIR] [-a AUX_PAGES]\n");
			return 2;
		}
	}
	if (phase_len < (64u << 20) || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "aux_drain: -b must be at least 64 (MiB) and -r within 1..%d\n",
			MAX_ROUNDS);
		return 2;
	}
	trace = malloc(TRACE_LEN);
	if (!trace)
		return 2;
	fill(trace, TRACE_LEN);
	printf("aux_drain: %zu KiB AUX area, %d KiB hardware writes, file in %s, %d rounds of "
	       "%" PRIu64 " MiB per phase, %ld CPUs\n",
	       aux_pages * 4, CHUNK / 1024, dir, rounds, phase_len >> 20,
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("round load  base MB/s  loaded base  full MB/s (ratio)  paced MB/s  loss at 0.8x\n");
	for (int i = 0; i < rounds; i++) {
		struct round *r = &rs[i];
		double load[1], prod_rate;
		bool lossless;

		memset(r, 0, sizeof(*r));
		if (getloadavg(load, 1) != 1)
			load[0] = -1;
		r->load = load[0];
		r->base = baseline(trace, &r->base_cpu);
		if (r->base <= 0)
			return 2;
		r->lbase = loaded_baseline(trace, (uint64_t)(0.8 * r->base), &r->lbase_cpu,
					   &r->lprod);
		if (r->lbase <= 0)
			return 2;
		if (drain(trace, 0, &r->full) < 0)
			return 2;
		if (drain(trace, (uint64_t)(0.8 * r->base), &r->paced) < 0)
			return 2;
		/* The producer's pacing is only accurate to a few percent over a run. */
		lossless = !r->paced.truncated && !r->paced.dropped &&
			   r->paced.bytes == r->paced.produced;
		prod_rate = (double)r->paced.produced / r->paced.prod_time;
		r->met = lossless && r->paced.produced >= phase_len &&
			 prod_rate >= 0.97 * 0.8 * r->base;
		met += r->met;
		printf("%5d %4.1f %10.0f %12.0f %10.0f (%.2f) %11.0f  ", i + 1, r->load,
		       r->base / 1e6, r->lbase / 1e6, r->full.rate / 1e6, r->full.rate / r->base,
		       r->paced.rate / 1e6);
		if (!lossless)
			printf("LOST (%" PRIu64 " TRUNCATED, %" PRIu64 " MB dropped)\n",
			       r->paced.truncated, r->paced.dropped >> 20);
		else if (!r->met)
			printf("none, but the producer ran at %.0f MB/s only\n", prod_rate / 1e6);
		else
			printf("none\n");
		fflush(stdout);
	}
	printf("medians over %d rounds (min to max):\n", rounds);
	print_spread("load average", rs, rounds, get_load, 1);
	print_spread("baseline memcpy+write, MB/s", rs, rounds, get_base, 0);
	print_spread("baseline, MB per CPU-second", rs, rounds, get_base_cpu, 0);
	print_spread("baseline beside the producer at 0.8x, MB/s", rs, rounds, get_lbase, 0);
	print_spread("  the producer beside it, MB/s", rs, rounds, get_lprod, 0);
	print_spread("drain at full speed, MB/s", rs, rounds, get_full, 0);
	print_spread("  ratio to the baseline (wall)", rs, rounds, get_full_ratio, 2);
	print_spread("  ratio to the loaded baseline (wall)", rs, rounds, get_full_lratio, 2);
	print_spread("  per CPU-second, ratio to the baseline's", rs, rounds, get_full_cpu,
		     2);
	print_spread("  draining thread: share of wall on a CPU", rs, rounds, get_full_run,
		     2);
	print_spread("  draining thread: share waiting for a CPU", rs, rounds, get_full_wait,
		     2);
	print_spread("  producer CPU per wall second", rs, rounds, get_full_prod, 2);
	print_spread("drain, producer at 0.8x, MB/s", rs, rounds, get_paced, 0);
	print_spread("  draining thread: share of wall on a CPU", rs, rounds, get_paced_run,
		     2);
	print_spread("  draining thread: share waiting for a CPU", rs, rounds, get_paced_wait,
		     2);
	print_spread("  producer CPU per wall second", rs, rounds, get_paced_prod, 2);
	printf("target: the drain keeps up with 0.8x the baseline, every byte written, no loss: "
	       "%s (%d of %d rounds)\n",
	       met == rounds ? "met" : "MISSED", met, rounds);
	free(trace);
	return met == rounds ? 0 : 1;
}
