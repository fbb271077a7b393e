/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intel PT decode benchmarks (bench/README.md), each against a baseline measured in the same
 * run, printed as ratios:
 *
 *   1. `auxcap decode --itrace=b` against `perf script --itrace=b` on the same file: wall and
 *      CPU time, and the branch lines each printed (they must be equal);
 *   2. auxcap_ipt_decode_parallel() on 2 threads against 1 (the library, block decoder);
 *   3. peak RSS of `auxcap decode --itrace=b` on a 50 MB trace against a 5 MB one.
 *
 * The traces: `auxcap record --emulate` of the example program (the live tracer's Intel PT of
 * a real process), whose AUX stream is then looped into files of the wanted size: every copy
 * starts with its PSB, its TSC packets moved on by one copy's time span so time keeps going
 * forward, written as AUXTRACE records of about 1 MiB (each ends where a copy does: perf 6.1
 * loses branches when a packet straddles two records) in place of the capture's own, among
 * its records (COMM, MMAP2, TIME_CONV, AUXTRACE_INFO) and features (build-ids).
 *
 * Usage: auxcap-bench-ipt [-a AUXCAP] [-e EXAMPLE] [-d DIR] [-s MB] [-S MB] [-i ITER]
 *                         [--no-perf] [--keep]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <intel-pt.h>

#include "auxcap/perf_data.h"
#include "ipt.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("auxcap-bench-ipt: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* ---- running commands --------------------------------------------------------------------- */

struct run_result {
	double wall;	  /* s */
	double cpu;	  /* user + system, s */
	long maxrss_kb;	  /* peak RSS */
	uint64_t lines;	  /* output lines */
	uint64_t hashes;  /* ... of them starting with '#' */
	int status;
};

/*
 * Commands run from a small helper process forked before this one grows: a child's peak
 * RSS (ru_maxrss) includes what its parent had mapped when it forked, exec or not.
 */
static int spawn_req = -1, spawn_res = -1;

static void run_local(char *const argv[], struct run_result *res);

static void spawner_start(void)
{
	int req[2], res[2];
	pid_t pid;

	if (pipe(req) < 0 || pipe(res) < 0)
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		char buf[8192], *argv[64];
		uint32_t len;

		close(req[1]);
		close(res[0]);
		/* requests: u32 length, then the NUL-separated arguments */
		while (read(req[0], &len, sizeof(len)) == (ssize_t)sizeof(len) && len < sizeof(buf)) {
			struct run_result r;
			size_t n = 0, off = 0;

			if (read(req[0], buf, len) != (ssize_t)len)
				break;
			while (off < len && n < 63) {
				argv[n++] = buf + off;
				off += strlen(buf + off) + 1;
			}
			argv[n] = NULL;
			run_local(argv, &r);
			if (write(res[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
				break;
		}
		_exit(0);
	}
	close(req[0]);
	close(res[1]);
	spawn_req = req[1];
	spawn_res = res[0];
}

static void run_counted(char *const argv[], struct run_result *res)
{
	char buf[8192];
	uint32_t len = 0;

	for (size_t i = 0; argv[i]; i++) {
		size_t n = strlen(argv[i]) + 1;

		if (len + n > sizeof(buf))
			die("command line too long");
		memcpy(buf + len, argv[i], n);
		len += (uint32_t)n;
	}
	if (write(spawn_req, &len, sizeof(len)) != (ssize_t)sizeof(len) ||
	    write(spawn_req, buf, len) != (ssize_t)len ||
	    read(spawn_res, res, sizeof(*res)) != (ssize_t)sizeof(*res))
		die("the helper process is gone");
	if (!WIFEXITED(res->status) || WEXITSTATUS(res->status))
		die("%s exited with status %d", argv[0],
		    WIFEXITED(res->status) ? WEXITSTATUS(res->status) : -1);
}

/* Run @argv with stdout read (and counted) here, stderr to /dev/null. */
static void run_local(char *const argv[], struct run_result *res)
{
	static char buf[1 << 16];
	struct rusage ru;
	int p[2], st;
	bool bol = true;
	double t0;
	pid_t pid;
	ssize_t n;

	memset(res, 0, sizeof(*res));
	if (pipe(p) < 0)
		die("pipe: %s", strerror(errno));
	t0 = now_s();
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(p[1], 1);
		dup2(null, 2);
		close(p[0]);
		close(p[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (bol && buf[i] == '#')
				res->hashes++;
			bol = buf[i] == '\n';
			res->lines += bol;
		}
	}
	close(p[0]);
	if (wait4(pid, &st, 0, &ru) < 0)
		die("wait4: %s", strerror(errno));
	res->wall = now_s() - t0;
	res->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	res->maxrss_kb = ru.ru_maxrss;
	res->status = st;
}

/* ---- the looped trace file ----------------------------------------------------------------- */

struct base {
	struct auxcap_perf_reader *rd;
	const uint8_t *aux; /* the capture's AUX stream (one queue), borrowed from @rd */
	uint8_t *own;	    /* or a copy when it came in several records */
	size_t aux_len;
	uint64_t *tsc_off; /* offsets of the TSC packets in the stream */
	size_t nr_tsc;
	uint64_t tsc_span; /* last TSC - first TSC + a little */
};

static void base_load(const char *path, struct base *b)
{
	struct auxcap_perf_event ev;
	struct pt_packet_decoder *pkt;
	struct pt_config cfg;
	struct pt_packet p;
	uint64_t first = 0, last = 0;
	size_t cap = 0;
	int r;

	memset(b, 0, sizeof(*b));
	if (auxcap_perf_reader_open(path, NULL, &b->rd) < 0)
		die("cannot read %s", path);
	while ((r = auxcap_perf_reader_next(b->rd, &ev)) == 1) {
		if (ev.rec.type != AUXCAP_PERF_RECORD_AUXTRACE)
			continue;
		if (!b->aux) {
			b->aux = ev.u.auxtrace.data;
			b->aux_len = (size_t)ev.u.auxtrace.size;
			continue;
		}
		if (!b->own) {
			b->own = malloc(b->aux_len);
			memcpy(b->own, b->aux, b->aux_len);
		}
		b->own = realloc(b->own, b->aux_len + (size_t)ev.u.auxtrace.size);
		memcpy(b->own + b->aux_len, ev.u.auxtrace.data, (size_t)ev.u.auxtrace.size);
		b->aux_len += (size_t)ev.u.auxtrace.size;
		b->aux = b->own;
	}
	if (r < 0 || !b->aux_len)
		die("%s holds no AUX trace", path);
	/* where the TSC packets are, to move each copy on in time */
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)b->aux;
	cfg.end = (uint8_t *)b->aux + b->aux_len;
	pkt = pt_pkt_alloc_decoder(&cfg);
	if (!pkt || pt_pkt_sync_set(pkt, 0) < 0)
		die("the AUX stream of %s does not start with a PSB", path);
	for (;;) {
		uint64_t off;

		if (pt_pkt_get_offset(pkt, &off) < 0 || pt_pkt_next(pkt, &p, sizeof(p)) < 0)
			break;
		if (p.type != ppt_tsc)
			continue;
		if (b->nr_tsc == cap) {
			cap = cap ? cap * 2 : 256;
			b->tsc_off = realloc(b->tsc_off, cap * sizeof(*b->tsc_off));
		}
		b->tsc_off[b->nr_tsc++] = off;
		if (!first)
			first = p.payload.tsc.tsc;
		last = p.payload.tsc.tsc;
	}
	pt_pkt_free_decoder(pkt);
	if (!b->nr_tsc)
		die("no TSC packets in %s", path);
	b->tsc_span = last - first + 1000000;
}

/* @path: the capture's records and features, and its AUX stream looped to @bytes. */
static size_t write_looped(const struct base *b, const char *path, size_t bytes)
{
	const size_t rec_bytes = 1 << 20;
	struct auxcap_perf_writer *w = NULL;
	struct auxcap_perf_event ev;
	uint8_t *big;
	bool done_aux = false;
	size_t copies = (bytes + b->aux_len - 1) / b->aux_len, len = copies * b->aux_len;
	int r;

	big = malloc(len);
	if (!big)
		die("out of memory for %zu bytes", len);
	for (size_t c = 0; c < copies; c++) {
		uint8_t *dst = big + c * b->aux_len;

		memcpy(dst, b->aux, b->aux_len);
		for (size_t i = 0; i < b->nr_tsc; i++) {
			uint64_t v = 0;

			/* TSC packet: 0x19 and the low 7 bytes of the counter */
			memcpy(&v, dst + b->tsc_off[i] + 1, 7);
			v += c * b->tsc_span;
			memcpy(dst + b->tsc_off[i] + 1, &v, 7);
		}
	}
	if (auxcap_perf_writer_open(path, NULL, &w) < 0)
		die("cannot create %s", path);
	for (size_t i = 0; i < auxcap_perf_reader_nr_evsels(b->rd); i++) {
		const struct auxcap_perf_evsel *e = auxcap_perf_reader_evsel(b->rd, i);

		if (auxcap_perf_writer_add_attr(w, e->attr, e->name, e->ids, e->nr_ids) < 0)
			die("cannot add the attrs to %s", path);
	}
	for (unsigned int f = 1; f < AUXCAP_PERF_FEAT_BITS; f++) {
		const void *data;
		size_t size;

		if (f == AUXCAP_PERF_FEAT_AUXTRACE || f == AUXCAP_PERF_FEAT_SAMPLE_TIME)
			continue;
		if (auxcap_perf_reader_feature_raw(b->rd, f, &data, &size) == 0)
			(void)auxcap_perf_writer_set_feature(w, f, data, size);
	}
	/* The capture's records in their order, its AUX data replaced by the looped stream in
	 * 1 MiB AUXTRACE records where its first AUXTRACE record was. */
	auxcap_perf_reader_rewind(b->rd);
	while ((r = auxcap_perf_reader_next(b->rd, &ev)) == 1) {
		uint32_t t = ev.rec.type;

		if (t == PERF_RECORD_AUX)
			continue;
		if (t == AUXCAP_PERF_RECORD_AUXTRACE) {
			if (done_aux)
				continue;
			done_aux = true;
			for (size_t off = 0, n; off < len; off += n) {
				struct auxcap_perf_auxtrace at = {
					.offset = off,
					.reference = ev.u.auxtrace.reference +
						     off / b->aux_len * b->tsc_span,
					.idx = ev.u.auxtrace.idx,
					.tid = ev.u.auxtrace.tid,
					.cpu = ev.u.auxtrace.cpu,
				};

				/* records end where a copy of the capture starts (at its PSB): perf
				 * 6.1 loses branches when a packet straddles two records */
				n = len - off;
				if (n > rec_bytes)
					n = ((off + rec_bytes + b->aux_len - 1) / b->aux_len) *
						    b->aux_len -
					    off;
				if (auxcap_perf_writer_write_auxtrace(w, &at, big + off, n, NULL, 0) <
					    0 ||
				    auxcap_perf_writer_write_finished_round(w) < 0)
					die("cannot write the trace to %s", path);
			}
			continue;
		}
		if (t == AUXCAP_PERF_RECORD_FINISHED_INIT)
			r = auxcap_perf_writer_write_finished_init(w);
		else if (t == AUXCAP_PERF_RECORD_FINISHED_ROUND)
			r = auxcap_perf_writer_write_finished_round(w);
		else
			r = auxcap_perf_writer_write(w, ev.rec.data);
		if (r < 0)
			die("cannot copy record type %u to %s: %s", t, path, strerror(-r));
	}
	if (auxcap_perf_writer_close(w) < 0)
		die("cannot finish %s", path);
	free(big);
	return len;
}

/* ---- parallel decoding through the library -------------------------------------------------- */

struct counts {
	uint64_t blocks, insns;
};

static int count_item(void *ctx, const struct auxcap_ipt_item *it)
{
	struct counts *c = ctx;

	c->blocks += it->kind == AUXCAP_IPT_ITEM_BLOCK;
	c->insns += it->ninsn;
	return 0;
}

static void bench_parallel(const char *path)
{
	struct auxcap_perf_reader *rd = NULL;
	struct auxcap_ipt_image *image = NULL;
	struct auxcap_perf_event ev;
	uint8_t *trace = NULL;
	size_t len = 0;
	double best[2] = { 1e9, 1e9 }, cpu[2] = { 0, 0 }, main_cpu[2] = { 0, 0 }, crit;
	struct counts cnt[2];

	if (auxcap_perf_reader_open(path, NULL, &rd) < 0 || auxcap_ipt_image_new(&image) < 0)
		die("cannot read %s", path);
	while (auxcap_perf_reader_next(rd, &ev) == 1) {
		if (ev.rec.type == PERF_RECORD_MMAP2 && (ev.rec.u.mmap.prot & PROT_EXEC) &&
		    ev.rec.u.mmap.filename[0] == '/')
			(void)auxcap_ipt_image_add_raw(image, ev.rec.u.mmap.filename, ev.rec.u.mmap.pgoff,
						       ev.rec.u.mmap.len, ev.rec.u.mmap.addr);
		if (ev.rec.type == AUXCAP_PERF_RECORD_AUXTRACE) {
			trace = realloc(trace, len + (size_t)ev.u.auxtrace.size);
			memcpy(trace + len, ev.u.auxtrace.data, (size_t)ev.u.auxtrace.size);
			len += (size_t)ev.u.auxtrace.size;
		}
	}
	for (int rep = 0; rep < 3; rep++) {
		for (int k = 0; k < 2; k++) {
			struct auxcap_ipt_parallel_opts po = {
				.sz = sizeof(po),
				.threads = (unsigned int)k + 1,
				.dec = { .sz = sizeof(po.dec), .block = true },
			};
			double t0 = now_s(), c0 = cpu_s(), m0 = thread_cpu_s(), t;

			memset(&cnt[k], 0, sizeof(cnt[k]));
			if (auxcap_ipt_decode_parallel(trace, len, image, NULL, &po, count_item,
						       &cnt[k]) < 0)
				die("parallel decode failed");
			t = now_s() - t0;
			if (t < best[k]) {
				best[k] = t;
				cpu[k] = cpu_s() - c0;
				main_cpu[k] = thread_cpu_s() - m0;
			}
		}
	}
	if (cnt[0].insns != cnt[1].insns)
		die("1 and 2 threads decoded %" PRIu64 " and %" PRIu64 " instructions", cnt[0].insns,
		    cnt[1].insns);
	printf("parallel decode (library, block decoder), %.1f MB, %" PRIu64 " instructions:\n"
	       "  1 thread  %.3f s wall (%.3f s CPU)  %.1f MB/s\n"
	       "  2 threads %.3f s wall (%.3f s CPU)  %.1f MB/s\n"
	       "  speed-up 2 vs 1 thread: %.2fx (best of 3)\n",
	       (double)len / 1e6, cnt[0].insns, best[0], cpu[0], (double)len / 1e6 / best[0],
	       best[1], cpu[1], (double)len / 1e6 / best[1], best[0] / best[1]);
	/* What two free cores would give: each thread's CPU time bounds the wall time from
	 * below, the longer of the calling thread's and the worker's is the critical path. */
	crit = main_cpu[1] > cpu[1] - main_cpu[1] ? main_cpu[1] : cpu[1] - main_cpu[1];
	printf("  CPU split on 2 threads: calling thread %.3f s, worker %.3f s: speed-up on two "
	       "free cores at most %.2fx (1-thread CPU / longer thread)\n",
	       main_cpu[1], cpu[1] - main_cpu[1], cpu[0] / crit);
	free(trace);
	auxcap_ipt_image_free(image);
	auxcap_perf_reader_close(rd);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "no-perf", no_argument, NULL, 1 },
		{ "keep", no_argument, NULL, 2 },
		{ "gen", required_argument, NULL, 3 },
		{ NULL, 0, NULL, 0 },
	};
	const char *auxcap = getenv("AUXCAP"), *example = getenv("AUXCAP_EXAMPLE_LOOP");
	const char *dir = "/tmp";
	size_t big_mb = 50, small_mb = 5, iters = 3000;
	bool perf = true, keep = false;
	size_t gen = 0;
	char base_path[4096], big_path[4096], small_path[4096], iter_s[32];
	struct base b;
	struct run_result ra, rp, r5, r50;
	size_t big_len, small_len;
	int c;

	while ((c = getopt_long(argc, argv, "a:e:d:s:S:i:", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': auxcap = optarg; break;
		case 'e': example = optarg; break;
		case 'd': dir = optarg; break;
		case 's': big_mb = strtoul(optarg, NULL, 0); break;
		case 'S': small_mb = strtoul(optarg, NULL, 0); break;
		case 'i': iters = strtoul(optarg, NULL, 0); break;
		case 1: perf = false; break;
		case 2: keep = true; break;
		case 3: gen = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: auxcap-bench-ipt [-a AUXCAP] [-e EXAMPLE] [-d DIR] [-s MB] "
					"[-S MB] [-i ITER] [--no-perf] [--keep]\n");
			return 2;
		}
	}
	if (!auxcap || !example)
		die("give -a AUXCAP and -e EXAMPLE (or $AUXCAP, $AUXCAP_EXAMPLE_LOOP)");
	spawner_start();
	snprintf(base_path, sizeof(base_path), "%s/auxcap-bench-ipt-base.data", dir);
	snprintf(big_path, sizeof(big_path), "%s/auxcap-bench-ipt-%zumb.data", dir, big_mb);
	snprintf(small_path, sizeof(small_path), "%s/auxcap-bench-ipt-%zumb.data", dir, small_mb);
	snprintf(iter_s, sizeof(iter_s), "%zu", iters);

	{
		char *rec[] = { (char *)auxcap, "record", "--emulate", "-f", "-o", base_path, "--",
				(char *)example, iter_s, NULL };
		struct run_result rr;

		printf("capturing the example program (%s iterations) under the live tracer...\n",
		       iter_s);
		fflush(stdout);
		run_counted(rec, &rr);
	}
	base_load(base_path, &b);
	if (gen) {
		/* only write a file of @gen bytes of trace (for a look at it) */
		snprintf(big_path, sizeof(big_path), "%s/auxcap-bench-ipt-%zub.data", dir, gen);
		printf("%s: %zu bytes of trace\n", big_path, write_looped(&b, big_path, gen));
		return 0;
	}
	big_len = write_looped(&b, big_path, big_mb << 20);
	small_len = write_looped(&b, small_path, small_mb << 20);
	printf("trace: %zu bytes captured, %zu TSC packets; looped to %.1f MB (%s) and %.1f MB "
	       "(%s)\n",
	       b.aux_len, b.nr_tsc, (double)big_len / 1e6, big_path, (double)small_len / 1e6,
	       small_path);
	fflush(stdout);

	{
		double la[3];

		if (getloadavg(la, 3) == 3)
			printf("load average now: %.2f %.2f %.2f on %ld CPUs\n", la[0], la[1], la[2],
			       sysconf(_SC_NPROCESSORS_ONLN));
	}
	/* 1. auxcap decode against perf script */
	{
		char *ad[] = { (char *)auxcap, "decode", big_path, "--itrace=b", NULL };
		char *ps[] = { "perf", "script", "-f", "-i", big_path, "--itrace=b", NULL };

		run_counted(ad, &ra);
		printf("auxcap decode --itrace=b: %.2f s wall, %.2f s CPU, %" PRIu64
		       " branch lines, peak RSS %ld KiB\n",
		       ra.wall, ra.cpu, ra.lines - ra.hashes, ra.maxrss_kb);
		fflush(stdout);
		if (perf) {
			run_counted(ps, &rp);
			printf("perf script --itrace=b:   %.2f s wall, %.2f s CPU, %" PRIu64
			       " branch lines, peak RSS %ld KiB\n",
			       rp.wall, rp.cpu, rp.lines, rp.maxrss_kb);
			printf("  same branch count: %s\n  auxcap vs perf: %.2fx faster (wall), %.2fx "
			       "(CPU)\n",
			       rp.lines == ra.lines - ra.hashes ? "yes" : "NO", rp.wall / ra.wall,
			       rp.cpu / ra.cpu);
		}
		fflush(stdout);
	}

	/* 2. parallel decoding */
	bench_parallel(big_path);
	fflush(stdout);

	/* 3. memory on a 10x longer trace */
	{
		char *a5[] = { (char *)auxcap, "decode", small_path, "--itrace=b", NULL };

		run_counted(a5, &r5);
		r50 = ra;
		printf("peak RSS of auxcap decode --itrace=b: %.1f MB trace %ld KiB, %.1f MB trace "
		       "%ld KiB: ratio %.2f\n",
		       (double)small_len / 1e6, r5.maxrss_kb, (double)big_len / 1e6, r50.maxrss_kb,
		       (double)r50.maxrss_kb / (double)r5.maxrss_kb);
	}
	if (!keep) {
		unlink(base_path);
		unlink(big_path);
		unlink(small_path);
	}
	return 0;
}
