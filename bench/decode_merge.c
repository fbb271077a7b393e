/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Benchmark: what the decode stage's merge costs on top of decoding.
 *
 * A synthesized Intel PT capture (libipt's encoder; a loop of call, conditional branches,
 * return over code in a small file) of -s MiB of trace in 4 MiB AUXTRACE buffers, with -n
 * cpu-clock samples spread over its time span, each at an instruction the loop runs then.
 *
 *   baseline  the Intel PT backend's decoder ops over the buffers, as the stage drives them
 *             (one decoder per buffer, the buffers before it, PSB seams), every event counted
 *   merged    auxcap_decode_next() over the whole capture: queues with time conversion and
 *             interpolation, the ordered records, the merge, per-thread stacks, branch
 *             history and per-function time, and every sample's context (stack, 16 last
 *             branches, the IP looked up in the trace)
 *   report    the same stream aggregated by auxcap report's consumer (auxcap_report_run():
 *             per-thread mirrored stacks, self/total time, instructions and branches per
 *             function, samples per function); its ratio to merged is what the report adds
 *
 * Each is timed three times (best kept) in CPU time of the thread, in the same process.  Prints both and the ratio, and the anonymous memory a merged decode holds at the
 * end of the stream (in a fresh child process) for the trace and for one a tenth of its size
 * with a tenth of the samples: memory must not grow with the trace.  (The trace itself is
 * read through the reader's file mapping: page cache, not counted.)
 *
 * Timing: a TSC packet every -t iterations (default 64, about 220 events: what MTC packets at
 * perf's default period give real hardware); -t 0 puts timestamps only at PSBs (every 4 KiB,
 * as the emulated PMU does), the worst case for the stage, which holds every event between
 * two timestamps.
 *
 * With -b FILE, an existing capture instead (a real program's, say, looped to size with
 * auxcap-bench-ipt --gen --samples): only the merged decode and the report are timed, since
 * the baseline is made for the synthesized capture; bench/stage-share gives the stage's share
 * of the merged decode from one sampled run.
 *
 * usage: auxcap-bench-decode-merge [-s MIB] [-n SAMPLES] [-t ITERS] [-r ROUNDS] [-o b|m] [-k]
 *                                  [-b FILE]
 *   -s: trace size in MiB, or in KiB with a k suffix (-s 8k: the decode fuzz target's seeds)
 *   -r: timed rounds (default 3, at most 64), -o b / -o m: time only the baseline / only the merged decode
 *   (to profile one side with perf), -k: keep the files
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/wait.h>

#include <intel-pt.h>

#include "auxcap/backend.h"
#include "auxcap/decode.h"
#include "auxcap/decode_report.h"
#include "auxcap/timeconv.h"
#include "capture_builder.h"
#include "loop_code.h"

#define CODE_ADDR LOOP_CODE_ADDR
#define PIECE (4u << 20) /* bytes per AUXTRACE buffer */
#define TICKS_PER_ITER 40 /* TSC ticks per loop iteration */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct gen {
	uint8_t *buf;
	size_t len, cap;
	uint64_t iters;
};

static int enc(struct pt_encoder *e, const struct pt_packet *p)
{
	return pt_enc_next(e, p) < 0 ? 1 : 0;
}

/* The trace into @g: PSB+TSC every 4 KiB, a TSC every @timing iterations (0: none). */
static int gen_trace(struct gen *g, uint64_t bytes, uint64_t tsc0, unsigned int timing)
{
	struct pt_config config;
	struct pt_encoder *e;
	struct pt_packet p;
	uint64_t off, last_psb = 0, k = 0;
	int r = 0;

	g->cap = bytes + 4096;
	g->buf = malloc(g->cap);
	if (!g->buf)
		return -ENOMEM;
	pt_config_init(&config);
	config.begin = g->buf;
	config.end = g->buf + g->cap;
	e = pt_alloc_encoder(&config);
	if (!e)
		return -ENOMEM;
	for (;;) {
		if (pt_enc_get_offset(e, &off) < 0 || off + 64 > bytes)
			break;
		if (!k || off - last_psb >= 4096) {
			last_psb = off;
			memset(&p, 0, sizeof(p));
			p.type = ppt_psb;
			r |= enc(e, &p);
			p.type = ppt_tsc;
			p.payload.tsc.tsc = tsc0 + k * TICKS_PER_ITER;
			r |= enc(e, &p);
			p.type = ppt_mode;
			p.payload.mode.leaf = pt_mol_exec;
			p.payload.mode.bits.exec.csl = 1;
			r |= enc(e, &p);
			if (k) {
				/* Tracing is on: where the flow is (at the jnz). */
				memset(&p, 0, sizeof(p));
				p.type = ppt_fup;
				p.payload.ip.ipc = pt_ipc_sext_48;
				p.payload.ip.ip = CODE_ADDR + 0x05;
				r |= enc(e, &p);
			}
			memset(&p, 0, sizeof(p));
			p.type = ppt_psbend;
			r |= enc(e, &p);
			if (!k) {
				/* Tracing enabled at the loop's start. */
				memset(&p, 0, sizeof(p));
				p.type = ppt_tip_pge;
				p.payload.ip.ipc = pt_ipc_sext_48;
				p.payload.ip.ip = CODE_ADDR;
				r |= enc(e, &p);
			}
		}
		/* A timing packet every @timing iterations (hardware with MTC at perf's default
		 * period gives one every microsecond or so); without, only at PSBs. */
		if (timing && k && k % timing == 0 && off - last_psb < 4096) {
			memset(&p, 0, sizeof(p));
			p.type = ppt_tsc;
			p.payload.tsc.tsc = tsc0 + k * TICKS_PER_ITER;
			r |= enc(e, &p);
		}
		/* TNT: [jnz of the previous iteration (taken)], jz of this one. */
		memset(&p, 0, sizeof(p));
		p.type = ppt_tnt_8;
		if (k) {
			p.payload.tnt.bit_size = 2;
			p.payload.tnt.payload = 2 | (k & 1); /* first bit (jnz) is the higher one */
		} else {
			p.payload.tnt.bit_size = 1;
			p.payload.tnt.payload = k & 1;
		}
		r |= enc(e, &p);
		memset(&p, 0, sizeof(p));
		p.type = ppt_tip;
		p.payload.ip.ipc = pt_ipc_update_16;
		p.payload.ip.ip = CODE_ADDR + 0x05;
		r |= enc(e, &p);
		if (r)
			break;
		k++;
	}
	(void)pt_enc_get_offset(e, &off);
	pt_free_encoder(e);
	g->len = (size_t)off;
	g->iters = k;
	return r ? -EIO : 0;
}

static int write_capture(const char *path, const char *codefile, const struct gen *g,
			 uint64_t tsc0, uint64_t nsamples)
{
	struct auxcap_perf_time_conv tc = { 0 };
	uint64_t info[17] = { 0 };
	struct cb *b;

	tc.time_shift = 10;
	tc.time_mult = 683; /* 2/3 ns per tick */
	tc.time_zero = 0;
	tc.cap_user_time_zero = true;
	b = cb_open(path, "intel_pt//u", 0x7000);
	if (!b)
		return -errno;
	cb_time_conv(b, &tc);
	cb_auxtrace_info(b, 1, info, 17);
	cb_comm(b, 77, 77, "loop", true, auxcap_time_conv_to_ns(&tc, tsc0) - 1000, 0);
	cb_mmap2(b, 77, 77, CODE_ADDR, 4096, 0, 5, codefile,
		 auxcap_time_conv_to_ns(&tc, tsc0) - 900, 0);
	cb_itrace_start(b, 77, 77, auxcap_time_conv_to_ns(&tc, tsc0) - 800, 0);
	for (uint64_t i = 0; i < nsamples; i++) {
		uint64_t k = g->iters * i / nsamples;
		/* At iteration k's start; the IP is the call (always run). */
		uint64_t t = auxcap_time_conv_to_ns(&tc, tsc0 + k * TICKS_PER_ITER);

		cb_sample(b, 1, CODE_ADDR, 77, 77, t, 0, 100000);
		if (i % 1000 == 999)
			cb_round(b);
	}
	for (size_t off = 0; off < g->len; off += PIECE) {
		size_t n = g->len - off < PIECE ? g->len - off : PIECE;

		cb_aux(b, off, n, 0, 77, 77, auxcap_time_conv_to_ns(&tc, tsc0 + g->iters * 40), 0);
		cb_auxtrace(b, g->buf + off, n, off, 0, 77, (uint32_t)-1);
	}
	cb_round(b);
	return cb_close(b);
}

/* The backend's decoder ops over the buffers, as the stage drives them (batches of 16). */
#define BATCH 16
static int baseline(const char *codefile, const struct gen *g, uint64_t *ret_events)
{
	const struct auxcap_backend_ops *ops = auxcap_backend_find("intel_pt");
	struct auxcap_image_map map = { codefile, 0, sizeof(auxcap_loop_code), CODE_ADDR, -1 };
	struct auxcap_trace_piece prev[256];
	struct auxcap_decode_ctx ctx;
	struct auxcap_trace_head heads[BATCH];
	struct auxcap_trace_event whole[BATCH];
	uint64_t n = 0;
	size_t np = 0;
	int r = 0;

	for (size_t off = 0; off < g->len && r >= 0; off += PIECE) {
		size_t len = g->len - off < PIECE ? g->len - off : PIECE;
		void *dec;

		memset(&ctx, 0, sizeof(ctx));
		ctx.sz = sizeof(ctx);
		ctx.auxtrace_type = AUXCAP_AUXTRACE_INTEL_PT;
		ctx.maps = &map;
		ctx.nr_maps = 1;
		ctx.cpu = -1;
		ctx.stream_offset = off;
		ctx.prev = np ? prev : NULL;
		ctx.nr_prev = np;
		ctx.more = off + len < g->len;
		r = ops->decoder_new(&ctx, g->buf + off, len, &dec);
		if (r < 0)
			break;
		if (ops->decoder_next_batch) {
			while ((r = ops->decoder_next_batch(dec, heads, sizeof(heads[0]), whole,
							    BATCH)) > 0)
				n += (uint64_t)r;
		} else {
			while ((r = ops->decoder_next(dec, &whole[0])) == 1)
				n++;
		}
		ops->decoder_free(dec);
		if (np < 256)
			prev[np++] = (struct auxcap_trace_piece){ g->buf + off, len };
	}
	*ret_events = n;
	return r;
}

/* Anonymous memory in use now (KiB), from /proc/self/status, or -1. */
static long rss_anon(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* Merged decode of @path; *@ret_anon (if not NULL) gets the anonymous memory the process
 * holds at the end of the stream, before the session is closed (KiB). */
static int merged(const char *path, uint64_t *ret_events, uint64_t *ret_samples,
		  uint64_t *ret_aligned, long *ret_anon)
{
	struct auxcap_decode_opts o = { .sz = sizeof(o) };
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d;
	char err[256] = "";
	uint64_t n = 0;
	int r;

	o.last_branches = 16;
	o.errbuf = err;
	o.errlen = sizeof(err);
	r = auxcap_decode_open(path, &o, &d);
	if (r < 0) {
		fprintf(stderr, "bench: %s\n", err);
		return r;
	}
	while ((r = auxcap_decode_next(d, &ev)) == 1)
		n++;
	*ret_events = n;
	*ret_samples = auxcap_decode_get_info(d)->samples;
	*ret_aligned = auxcap_decode_get_info(d)->samples_aligned;
	if (ret_anon)
		*ret_anon = rss_anon();
	auxcap_decode_close(d);
	return r;
}

/* The merged stream of @path (the same options as merged()) into a report. */
static int reported(const char *path, size_t *ret_funcs, uint64_t *ret_ns)
{
	struct auxcap_decode_opts o = { .sz = sizeof(o) };
	struct auxcap_report *rep;
	struct auxcap_decode *d;
	char err[256] = "";
	int r;

	o.last_branches = 16;
	o.errbuf = err;
	o.errlen = sizeof(err);
	r = auxcap_decode_open(path, &o, &d);
	if (r < 0) {
		fprintf(stderr, "bench: %s\n", err);
		return r;
	}
	r = auxcap_report_run(d, NULL, &rep);
	if (r == 0) {
		*ret_funcs = auxcap_report_nr_funcs(rep);
		*ret_ns = auxcap_report_get_summary(rep)->trace_ns;
		auxcap_report_free(rep);
	}
	auxcap_decode_close(d);
	return r;
}

/* Anonymous memory (KiB) at the end of a merged decode of @path, in a fresh child. */
static long child_anon(const char *path)
{
	int p[2], st;
	long kib = -1;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		uint64_t a, b, c;
		long before = rss_anon(), after = -1;

		close(p[0]);
		if (merged(path, &a, &b, &c, &after) < 0)
			_exit(1);
		after -= before;
		if (write(p[1], &after, sizeof(after)) != sizeof(after))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &kib, sizeof(kib)) != sizeof(kib))
		kib = -1;
	close(p[0]);
	if (pid > 0)
		(void)waitpid(pid, &st, 0);
	return kib;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* -b FILE: the merged decode and the report of an existing capture, best of @rounds. */
static int bench_file(const char *path, unsigned int rounds, char only)
{
	double best_m = 1e9, best_r = 1e9;
	uint64_t em = 0, ns = 0, na = 0, rns = 0;
	size_t rfuncs = 0;

	if (only == 'b') {
		fprintf(stderr, "bench: -o b needs the synthesized capture (no -b): the baseline "
				"drives the backend over its buffers; bench/stage-share gives the "
				"stage's share of -b FILE -o m\n");
		return 2;
	}
	for (unsigned int i = 0; i < rounds; i++) {
		double t0 = now(), t;

		if ((!only || only == 'm') && merged(path, &em, &ns, &na, NULL) < 0) {
			fprintf(stderr, "bench: merged decode of %s failed\n", path);
			return 1;
		}
		t = now() - t0;
		best_m = t < best_m ? t : best_m;
		t0 = now();
		if ((!only || only == 'r') && reported(path, &rfuncs, &rns) < 0) {
			fprintf(stderr, "bench: report of %s failed\n", path);
			return 1;
		}
		t = now() - t0;
		best_r = t < best_r ? t : best_r;
	}
	if (!only || only == 'm')
		printf("merged (stage, %" PRIu64 " samples, %" PRIu64 " aligned): %.3f s CPU, %" PRIu64
		       " events, %.1f ns per event\n",
		       ns, na, best_m, em, em ? best_m * 1e9 / (double)em : 0.0);
	if (!only || only == 'r')
		printf("report (merged stream + aggregation, %zu functions, %.3f s traced): %.3f s "
		       "CPU\n",
		       rfuncs, (double)rns / 1e9, best_r);
	if (!only)
		printf("ratio report / merged: %.3f (what auxcap report adds to the stream)\n",
		       best_r / best_m);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t bytes = 50ull << 20, nsamples = 100000, tsc0 = 1000000000000ull;
	char dir[] = "/tmp/auxcap-decode-merge-XXXXXX", codefile[300], big[300], small[300];
	double best_b = 1e9, best_m = 1e9, best_r = 1e9, pair[64];
	size_t npair = 0;
	uint64_t eb = 0, em = 0, ns = 0, na = 0, rns = 0;
	size_t rfuncs = 0;
	long mem_big = -1, mem_small = -1;
	struct gen g = { 0 }, gs = { 0 };
	unsigned int timing = 64;
	unsigned int rounds = 3;
	char only = 0;
	const char *file = NULL;
	bool keep = false;
	FILE *f;
	int opt, r;

	while ((opt = getopt(argc, argv, "s:n:t:r:o:kb:")) != -1) {
		if (opt == 'r')
			rounds = (unsigned int)strtoul(optarg, NULL, 0);
		else if (opt == 'o' && (optarg[0] == 'b' || optarg[0] == 'm' || optarg[0] == 'r'))
			only = optarg[0];
		else if (opt == 't')
			timing = (unsigned int)strtoul(optarg, NULL, 0);
		else if (opt == 's') {
			char *end;

			/* two statements: the operands of << are unsequenced */
			bytes = strtoull(optarg, &end, 0);
			bytes <<= *end == 'k' ? 10 : 20;
		} else if (opt == 'n')
			nsamples = strtoull(optarg, NULL, 0);
		else if (opt == 'k')
			keep = true;
		else if (opt == 'b')
			file = optarg;
		else {
			fprintf(stderr,
				"usage: %s [-s MIB|KIBk] [-n SAMPLES] [-t ITERS] [-r ROUNDS] [-o b|m|r] [-k]\n"
				"       %s -b FILE [-r ROUNDS] [-o m|r]\n",
				argv[0], argv[0]);
			return 2;
		}
	}
	if (rounds > 64)
		rounds = 64;
	if (file)
		return bench_file(file, rounds, only);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(codefile, sizeof(codefile), "%s/code.bin", dir);
	snprintf(big, sizeof(big), "%s/big.data", dir);
	snprintf(small, sizeof(small), "%s/small.data", dir);
	f = fopen(codefile, "wb");
	if (!f || fwrite(auxcap_loop_code, 1, sizeof(auxcap_loop_code), f) != sizeof(auxcap_loop_code) || fclose(f)) {
		perror(codefile);
		return 1;
	}
	r = gen_trace(&g, bytes, tsc0, timing);
	if (r == 0)
		r = write_capture(big, codefile, &g, tsc0, nsamples);
	if (r == 0)
		r = gen_trace(&gs, bytes / 10, tsc0, timing);
	if (r == 0)
		r = write_capture(small, codefile, &gs, tsc0, nsamples / 10);
	if (r < 0) {
		fprintf(stderr, "bench: making the captures failed: %s\n", strerror(-r));
		return 1;
	}
	printf("trace: %.1f MiB of Intel PT, %" PRIu64 " loop iterations, %" PRIu64
	       " samples, %u MiB buffers, a timestamp every %u iterations%s\n",
	       (double)g.len / (1 << 20), g.iters, nsamples, PIECE >> 20, timing ? timing : 0,
	       timing ? "" : " (only at PSBs)");

	/* Before any decode here: a child forked later reuses the heap the timed decodes freed
	 * and shows no growth. */
	if (!only) {
		mem_big = child_anon(big);
		mem_small = child_anon(small);
	}
	for (unsigned int i = 0; i < rounds; i++) {
		double t0 = now(), t1, tb, tm;

		if ((!only || only == 'b') && baseline(codefile, &g, &eb) < 0) {
			fprintf(stderr, "bench: baseline decode failed\n");
			return 1;
		}
		t1 = now();
		tb = t1 - t0;
		if (tb < best_b)
			best_b = tb;
		t0 = now();
		if ((!only || only == 'm') && merged(big, &em, &ns, &na, NULL) < 0) {
			fprintf(stderr, "bench: merged decode failed\n");
			return 1;
		}
		t1 = now();
		tm = t1 - t0;
		if (tm < best_m)
			best_m = tm;
		if (!only)
			pair[npair++] = tm / tb;
		t0 = now();
		if ((!only || only == 'r') && reported(big, &rfuncs, &rns) < 0) {
			fprintf(stderr, "bench: report failed\n");
			return 1;
		}
		t1 = now();
		if (t1 - t0 < best_r)
			best_r = t1 - t0;
	}
	printf("baseline (backend decode only): %.3f s CPU, %" PRIu64 " events, %.1f M events/s\n",
	       best_b, eb, (double)eb / best_b / 1e6);
	printf("merged (stage, %" PRIu64 " samples, %" PRIu64 " aligned): %.3f s CPU, %" PRIu64
	       " events\n",
	       ns, na, best_m, em);
	printf("report (merged stream + aggregation, %zu functions, %.3f s traced): %.3f s CPU\n",
	       rfuncs, (double)rns / 1e9, best_r);
	if (!only) {
		printf("ratio merged / baseline: %.3f (target <= 1.10)\n", best_m / best_b);
		/* Each round times the two back to back: on a host whose speed drifts, the median
		 * of the rounds' own ratios moves less than the ratio of the best times. */
		if (npair) {
			qsort(pair, npair, sizeof(pair[0]), cmp_double);
			printf("ratio of each round, sorted:");
			for (size_t i = 0; i < npair; i++)
				printf(" %.3f", pair[i]);
			printf(" (median %.3f)\n",
			       npair % 2 ? pair[npair / 2]
					 : (pair[npair / 2 - 1] + pair[npair / 2]) / 2);
		}
		printf("ratio report / merged: %.3f (what auxcap report adds to the stream)\n",
		       best_r / best_m);
	}
	if (!only) {
		long a = mem_big, b = mem_small;

		printf("memory (anonymous, grown during the decode): %ld KiB for %.1f MiB of trace, "
		       "%ld KiB for %.1f MiB: ratio %.2f for %.0fx the trace\n",
		       a, (double)g.len / (1 << 20), b, (double)gs.len / (1 << 20),
		       b > 0 ? (double)a / (double)b : 0.0, (double)g.len / (double)gs.len);
	}
	if (!keep) {
		unlink(codefile);
		unlink(big);
		unlink(small);
		rmdir(dir);
	} else {
		printf("kept %s\n", dir);
	}
	free(g.buf);
	free(gs.buf);
	return 0;
}
