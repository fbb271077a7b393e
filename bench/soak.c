/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soak: hours of capture compressed into a benchmark run on the emulated PMU.
 *
 * One emulated Intel PT event per online CPU (system-wide sets), each fed at full speed by a
 * source whose 8-byte words hold their own stream position and the set's tag, so the consumer
 * can check every byte it gets: in order, not duplicated, not corrupt, and every missing byte
 * one the hardware reported as dropped.  The capture session runs its poll loop in a thread,
 * into a sink that checks and discards.
 *
 *   full trace  every byte the hardware wrote is delivered: delivered == produced, and
 *               offered == delivered + dropped, where every dropped byte is a hole in the
 *               word sequence and the emulator's count (TRUNCATED when the buffer was full);
 *   snapshot    another thread fires trigger storms (bursts of 1-8 requests at random
 *               intervals); every request is taken or counted as coalesced, every snapshot
 *               holds words in order whose holes are bytes dropped while the hardware was
 *               frozen for a snapshot, and no snapshot starts before the previous one.
 *
 * A watchdog aborts the run (exit 3) when the sink sees nothing for 10 s: a deadlock or a
 * starved consumer.  RSS is sampled after one second and at the end; it must stay flat.
 * The baseline is memcpy of the same bytes in this process: the ratio says how close the
 * whole capture path comes to copying memory.
 *
 *   auxcap-bench-soak [-d SECONDS] [-m full|snapshot|both] [-a AUX_PAGES] [-p DATA_PAGES]
 *                     [-t MEAN_TRIGGER_MS] [-s SEED]
 *
 * Exit status: 0 when every check held, 1 when one failed (the line says which), 2 on a usage
 * or set-up error, 3 when the watchdog fired.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "auxcap/emu.h"
#include "auxcap/pmu.h"
#include "auxcap/session.h"
#include "sink.h"

#define MAX_SETS 256
#define TAG_SHIFT 56
#define POS_MASK ((UINT64_C(1) << TAG_SHIFT) - 1)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rss_kib(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
}

/* --- the source: words holding (tag << 56) | stream position --------------------------- */

struct source {
	uint64_t tag;
	uint64_t offered; /* bytes handed to the hardware (atomic: read by the main thread) */
};

static int source_next(void *ctx, void *buf, size_t max, bool paced, struct auxcap_emu_item *item)
{
	struct source *src = ctx;
	uint64_t pos = __atomic_load_n(&src->offered, __ATOMIC_RELAXED);
	uint64_t *w = buf;
	size_t n = max & ~(size_t)7;

	(void)paced;
	if (!n)
		return 0;
	for (size_t i = 0; i < n / 8; i++)
		w[i] = src->tag << TAG_SHIFT | (pos + 8 * i);
	memset(item, 0, sizeof(*item));
	item->kind = AUXCAP_EMU_ITEM_TRACE;
	item->len = n;
	__atomic_store_n(&src->offered, pos + n, __ATOMIC_RELAXED);
	return 1;
}

static void source_free(void *ctx)
{
	(void)ctx; /* owned by the benchmark */
}

static const struct auxcap_emu_source_ops source_ops = {
	.name = "soak",
	.next = source_next,
	.free = source_free,
};

/* --- the checking sink --------------------------------------------------------------------- */

struct set_check {
	bool seen;
	uint64_t tag;
	uint64_t expect;   /* next position expected (full trace) */
	uint64_t holes;    /* bytes missing between delivered words (snapshot: inside one) */
	uint64_t last_first; /* snapshot: position of the first word of the last snapshot */
	uint64_t last_end;   /* snapshot: position after the last word of the last snapshot */
	uint64_t overlap;    /* snapshot: bytes delivered twice by consecutive snapshots */
};

struct sink_state {
	bool snapshot;
	uint64_t heartbeat; /* atomic: every callback */
	uint64_t records, aux_chunks, aux_bytes;
	uint64_t bad_words; /* words out of place (wrong tag, backwards, not consecutive) */
	char first_error[256];
	struct set_check sets[MAX_SETS];
};

static void bad(struct sink_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void bad(struct sink_state *st, const char *fmt, ...)
{
	va_list ap;

	if (!st->bad_words++) {
		va_start(ap, fmt);
		vsnprintf(st->first_error, sizeof(st->first_error), fmt, ap);
		va_end(ap);
	}
}

static int sink_attr(void *ctx, const struct perf_event_attr *attr, const char *name,
		     const uint64_t *ids, size_t nr_ids)
{
	(void)ctx;
	(void)attr;
	(void)name;
	(void)ids;
	(void)nr_ids;
	return 0;
}

static int sink_record(void *ctx, const void *rec, size_t len)
{
	struct sink_state *st = ctx;

	(void)rec;
	(void)len;
	st->records++;
	__atomic_fetch_add(&st->heartbeat, 1, __ATOMIC_RELAXED);
	return 0;
}

static void check_word(struct sink_state *st, struct set_check *sc, uint32_t idx, uint64_t w,
		       bool first_of_chunk)
{
	uint64_t pos = w & POS_MASK;

	if (!sc->seen) {
		sc->seen = true;
		sc->tag = w >> TAG_SHIFT;
		sc->expect = pos;
		sc->holes = st->snapshot ? 0 : pos; /* full trace: bytes before the first one */
		if (st->snapshot) {
			sc->last_first = pos;
			sc->last_end = pos;
		}
	}
	if (w >> TAG_SHIFT != sc->tag || (pos & 7)) {
		bad(st, "set %u: word 0x%016" PRIx64 " is not one of this set's", idx, w);
		return;
	}
	if (st->snapshot && first_of_chunk) {
		/* A new snapshot does not start before the previous one did (it repeats the
		 * same window when nothing new was written in between: the hardware's in-buffer
		 * head cannot tell "nothing" from "a whole buffer"). */
		if (pos < sc->last_first)
			bad(st, "set %u: snapshot starts at %" PRIu64 ", the previous one at %" PRIu64,
			    idx, pos, sc->last_first);
		if (pos < sc->last_end)
			sc->overlap += sc->last_end - pos;
		sc->last_first = pos;
		sc->expect = pos;
	}
	if (pos < sc->expect) {
		bad(st, "set %u: word for position %" PRIu64 " where %" PRIu64 " was expected", idx,
		    pos, sc->expect);
		sc->expect = pos + 8;
		return;
	}
	sc->holes += pos - sc->expect;
	sc->expect = pos + 8;
	if (st->snapshot)
		sc->last_end = sc->expect;
}

static int sink_aux(void *ctx, const struct auxcap_aux_chunk *chunk,
		    const struct auxcap_aux_span *span)
{
	struct sink_state *st = ctx;
	struct set_check *sc;
	bool first = true;

	__atomic_fetch_add(&st->heartbeat, 1, __ATOMIC_RELAXED);
	st->aux_chunks++;
	st->aux_bytes += span->len;
	if (chunk->idx >= MAX_SETS)
		return -EINVAL;
	sc = &st->sets[chunk->idx];
	if (span->len & 7) {
		bad(st, "set %u: chunk of %zu bytes, not whole words", chunk->idx, (size_t)span->len);
		return 0;
	}
	for (int p = 0; p < 2; p++) {
		const unsigned char *b = span->piece[p].ptr;
		size_t n = span->piece[p].len;

		if (n & 7) {
			bad(st, "set %u: piece of %zu bytes", chunk->idx, n);
			return 0;
		}
		for (size_t i = 0; i < n; i += 8) {
			uint64_t w;

			memcpy(&w, b + i, 8);
			check_word(st, sc, chunk->idx, w, first);
			first = false;
		}
	}
	return 0;
}

static int sink_round(void *ctx)
{
	(void)ctx;
	return 0;
}

static const struct auxcap_sink_ops sink_ops = {
	.attr = sink_attr,
	.record = sink_record,
	.aux = sink_aux,
	.round = sink_round,
};

/* --- threads ------------------------------------------------------------------------------- */

struct shared {
	struct auxcap_session *s;
	struct sink_state *sink;
	int loop_result;
	bool loop_done;	     /* atomic */
	bool triggers_stop;  /* atomic */
	bool watchdog_stop;  /* atomic */
	double mean_trigger_ms;
	uint64_t seed;
	uint64_t requests; /* snapshot requests sent */
	uint64_t storms;
};

static void *loop_thread(void *arg)
{
	struct shared *sh = arg;

	sh->loop_result = auxcap_session_run(sh->s, -1);
	__atomic_store_n(&sh->loop_done, true, __ATOMIC_RELEASE);
	return NULL;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void sleep_us(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* Trigger storms: after a random pause, a burst of 1-8 snapshot requests. */
static void *trigger_thread(void *arg)
{
	struct shared *sh = arg;
	uint64_t rng = sh->seed | 1;

	while (!__atomic_load_n(&sh->triggers_stop, __ATOMIC_ACQUIRE)) {
		uint64_t pause = xorshift(&rng) % (uint64_t)(2000.0 * sh->mean_trigger_ms + 1);
		unsigned int burst = 1 + (unsigned int)(xorshift(&rng) % 8);

		sleep_us(pause);
		for (unsigned int i = 0; i < burst; i++) {
			auxcap_session_request(sh->s, AUXCAP_REQ_SNAPSHOT);
			sh->requests++;
			if (xorshift(&rng) & 1)
				sleep_us(xorshift(&rng) % 200);
		}
		sh->storms++;
	}
	return NULL;
}

static void *watchdog_thread(void *arg)
{
	struct shared *sh = arg;
	uint64_t last = 0;
	double since = now();

	while (!__atomic_load_n(&sh->watchdog_stop, __ATOMIC_ACQUIRE)) {
		uint64_t hb = __atomic_load_n(&sh->sink->heartbeat, __ATOMIC_RELAXED);

		if (hb != last) {
			last = hb;
			since = now();
		} else if (now() - since > 10.0) {
			fprintf(stderr, "soak: watchdog: no record or AUX data reached the sink for "
					"10 s (deadlock or starved consumer); aborting\n");
			fflush(NULL);
			_exit(3);
		}
		sleep_us(100000);
	}
	return NULL;
}

/* --- one run --------------------------------------------------------------------------------- */

struct opts {
	double seconds;
	size_t aux_pages, data_pages;
	double mean_trigger_ms;
	uint64_t seed;
};

static double memcpy_gbps(void)
{
	size_t len = 64u << 20;
	char *a = malloc(len), *b = malloc(len);
	double best = 0;

	if (!a || !b) {
		free(a);
		free(b);
		return 0;
	}
	memset(a, 1, len);
	memset(b, 2, len);
	for (int i = 0; i < 5; i++) {
		double t0 = now(), dt;

		memcpy(b, a, len);
		dt = now() - t0;
		__asm__ volatile("" : : "r"(b) : "memory");
		if (dt > 0 && len / dt / 1e9 > best)
			best = len / dt / 1e9;
	}
	free(a);
	free(b);
	return best;
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

static int run(const struct opts *o, bool snapshot, double memcpy_rate)
{
	struct perf_event_attr attr;
	struct auxcap_session_event ev = { &attr, "intel_pt//" };
	struct auxcap_session_opts so = { .sz = sizeof(so) };
	struct auxcap_session_stats ss;
	struct auxcap_emu_stats es;
	struct auxcap_emu *emu = NULL;
	struct source *src = NULL;
	struct sink_state *st = calloc(1, sizeof(*st));
	struct auxcap_sink sink = { &sink_ops, st };
	struct shared sh = { .sink = st, .mean_trigger_ms = o->mean_trigger_ms, .seed = o->seed };
	pthread_t loop, trig, dog;
	int *cpus = NULL, failures = 0, r;
	size_t nr_cpus = 0;
	uint64_t offered = 0, rss0, rss1, holes = 0, overlap = 0, tail_dropped = 0;
	double t0, t1, warm;
	const char *mode = snapshot ? "snapshot" : "full trace";

	if (!st || online_cpus(&cpus, &nr_cpus) < 0 || nr_cpus > MAX_SETS) {
		fprintf(stderr, "soak: cannot read the online CPUs\n");
		return 2;
	}
	r = auxcap_emu_new(NULL, &emu);
	src = calloc(nr_cpus, sizeof(*src));
	if (r < 0 || !src) {
		fprintf(stderr, "soak: cannot set up the emulated PMU: %s\n", strerror(r < 0 ? -r : ENOMEM));
		return 2;
	}
	for (size_t i = 0; i < nr_cpus; i++) {
		src[i].tag = i + 1;
		r = auxcap_emu_source_attach(emu, AUXCAP_EMU_PMU_INTEL_PT, -1, &source_ops, &src[i]);
		if (r < 0) {
			fprintf(stderr, "soak: cannot attach a source: %s\n", strerror(-r));
			return 2;
		}
	}
	memset(&attr, 0, sizeof(attr));
	attr.type = AUXCAP_EMU_TYPE_BASE + AUXCAP_EMU_PMU_INTEL_PT;
	so.sys = auxcap_emu_sys(emu);
	so.aux = &ev;
	so.cpus = cpus;
	so.nr_cpus = nr_cpus;
	so.data_pages = o->data_pages;
	so.aux_pages = o->aux_pages;
	so.snapshot = snapshot;
	so.sink = &sink;
	st->snapshot = snapshot;
	r = auxcap_session_open(&so, &sh.s, NULL);
	if (r == 0)
		r = auxcap_session_enable(sh.s, true);
	if (r < 0) {
		fprintf(stderr, "soak: cannot open the capture: %s\n", strerror(-r));
		return 2;
	}

	pthread_create(&dog, NULL, watchdog_thread, &sh);
	pthread_create(&loop, NULL, loop_thread, &sh);
	t0 = now();
	r = auxcap_emu_start(emu);
	if (r < 0) {
		fprintf(stderr, "soak: cannot start the producer: %s\n", strerror(-r));
		return 2;
	}
	if (snapshot)
		pthread_create(&trig, NULL, trigger_thread, &sh);
	warm = o->seconds < 2 ? o->seconds / 2 : 1;
	sleep_us((uint64_t)(warm * 1e6));
	rss0 = rss_kib();
	sleep_us((uint64_t)((o->seconds - warm) * 1e6));

	/* Stop: triggers first, then the producer, then one last loop turn and drain. */
	if (snapshot) {
		__atomic_store_n(&sh.triggers_stop, true, __ATOMIC_RELEASE);
		pthread_join(trig, NULL);
	}
	auxcap_emu_stop(emu);
	t1 = now();
	auxcap_session_request(sh.s, AUXCAP_REQ_STOP);
	pthread_join(loop, NULL);
	if (sh.loop_result == 0 && !snapshot)
		sh.loop_result = auxcap_session_enable(sh.s, false);
	if (sh.loop_result == 0)
		sh.loop_result = auxcap_session_drain(sh.s);
	__atomic_store_n(&sh.watchdog_stop, true, __ATOMIC_RELEASE);
	pthread_join(dog, NULL);
	rss1 = rss_kib();

	auxcap_session_get_stats(sh.s, &ss);
	auxcap_emu_stats(emu, -1, &es);
	for (size_t i = 0; i < nr_cpus; i++)
		offered += src[i].offered;
	for (size_t i = 0; i < nr_cpus; i++) {
		const struct set_check *sc = &st->sets[i];

		holes += sc->holes;
		overlap += sc->overlap;
		if (!snapshot) {
			uint64_t delivered_end = sc->seen ? sc->expect : 0;

			tail_dropped += src[sc->seen ? sc->tag - 1 : i].offered - delivered_end;
		}
	}

	printf("== %s: %zu emulated Intel PT sets (one per CPU), AUX %zu KiB each, %.1f s\n", mode,
	       nr_cpus, o->aux_pages * 4, t1 - t0);
	printf("  offered by the sources  %14" PRIu64 " bytes (%.2f GB/s)\n", offered,
	       offered / (t1 - t0) / 1e9);
	printf("  written to AUX areas    %14" PRIu64 " bytes (emulator: produced)\n", es.produced);
	printf("  dropped by the hardware %14" PRIu64 " bytes (emulator: dropped; %" PRIu64
	       " TRUNCATED, %" PRIu64 " re-enables)\n",
	       es.dropped, ss.aux_truncated, ss.aux_reenables);
	printf("  delivered to the sink   %14" PRIu64 " bytes in %" PRIu64 " chunks (%.2f GB/s, "
	       "%.2fx memcpy's %.1f GB/s)\n",
	       st->aux_bytes, st->aux_chunks, st->aux_bytes / (t1 - t0) / 1e9,
	       memcpy_rate > 0 ? st->aux_bytes / (t1 - t0) / 1e9 / memcpy_rate : 0, memcpy_rate);
	printf("  records                 %14" PRIu64 " (emulator wrote %" PRIu64 ", lost %" PRIu64
	       "; LOST records report %" PRIu64 ")\n",
	       ss.records, es.records, es.records_lost, ss.lost);
	if (snapshot)
		printf("  snapshots               %14" PRIu64 " taken, %" PRIu64 " coalesced, of %" PRIu64
		       " requests in %" PRIu64 " storms; trigger to frozen max %.1f us; %" PRIu64
		       " bytes delivered twice\n",
		       ss.snapshots, ss.snapshot_requests_coalesced, sh.requests, sh.storms,
		       ss.snapshot_latency_ns_max / 1e3, overlap);
	printf("  RSS                     %14" PRIu64 " KiB after %.0f s, %" PRIu64 " KiB at the end\n",
	       rss0, warm, rss1);

#define CHECK(cond, ...)                                                                       \
	do {                                                                                   \
		if (cond) {                                                                    \
			printf("  ok   ");                                                     \
		} else {                                                                       \
			printf("  FAIL ");                                                     \
			failures++;                                                            \
		}                                                                              \
		printf(__VA_ARGS__);                                                           \
		printf("\n");                                                                  \
	} while (0)

	CHECK(sh.loop_result == 0, "the capture loop ended cleanly (%s)",
	      sh.loop_result ? strerror(-sh.loop_result) : "0");
	CHECK(st->bad_words == 0, "every delivered word in place (%" PRIu64 " out of place%s%s)",
	      st->bad_words, st->bad_words ? "; first: " : "", st->first_error);
	CHECK(offered == es.produced + es.dropped,
	      "offered == produced + dropped (%" PRIu64 " == %" PRIu64 " + %" PRIu64 ")", offered,
	      es.produced, es.dropped);
	if (!snapshot) {
		CHECK(st->aux_bytes == es.produced + es.padding,
		      "delivered == produced + padding (%" PRIu64 " == %" PRIu64 " + %" PRIu64 ")",
		      st->aux_bytes, es.produced, es.padding);
		CHECK(holes + tail_dropped == es.dropped,
		      "the holes in the delivered words are the dropped bytes (%" PRIu64
		      " + %" PRIu64 " at the end == %" PRIu64 ")",
		      holes, tail_dropped, es.dropped);
		CHECK(!es.dropped || ss.aux_truncated,
		      "drops were flagged to the consumer (%" PRIu64 " TRUNCATED)", ss.aux_truncated);
	} else {
		CHECK(ss.snapshots + ss.snapshot_requests_coalesced == sh.requests,
		      "every request taken or coalesced (%" PRIu64 " + %" PRIu64 " == %" PRIu64 ")",
		      ss.snapshots, ss.snapshot_requests_coalesced, sh.requests);
		CHECK(st->aux_bytes <= es.produced, "snapshots hold at most what was produced");
		CHECK(holes <= es.dropped,
		      "every hole inside a snapshot is bytes dropped while frozen (%" PRIu64
		      " <= %" PRIu64 ")",
		      holes, es.dropped);
	}
	CHECK(ss.aux_records == es.aux_records,
	      "every PERF_RECORD_AUX read (%" PRIu64 " == %" PRIu64 ")", ss.aux_records,
	      es.aux_records);
	CHECK(ss.lost <= es.records_lost, "LOST records report no more than was lost");
	CHECK(rss1 <= rss0 + 2048, "memory flat: RSS grew %" PRId64 " KiB (limit 2048)",
	      (int64_t)rss1 - (int64_t)rss0);
#undef CHECK

	auxcap_session_free(sh.s);
	auxcap_emu_free(emu);
	free(src);
	free(cpus);
	free(st);
	return failures ? 1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: auxcap-bench-soak [-d SECONDS] [-m full|snapshot|both] [-a AUX_PAGES] "
		   "[-p DATA_PAGES] [-t MEAN_TRIGGER_MS] [-s SEED]\n");
}

int main(int argc, char **argv)
{
	struct opts o = { .seconds = 10, .aux_pages = 64, .data_pages = 16,
			  .mean_trigger_ms = 20, .seed = 0x5eed };
	const char *mode = "both";
	double rate;
	int c, status = 0;

	while ((c = getopt(argc, argv, "d:m:a:p:t:s:h")) != -1) {
		switch (c) {
		case 'd': o.seconds = atof(optarg); break;
		case 'm': mode = optarg; break;
		case 'a': o.aux_pages = strtoul(optarg, NULL, 0); break;
		case 'p': o.data_pages = strtoul(optarg, NULL, 0); break;
		case 't': o.mean_trigger_ms = atof(optarg); break;
		case 's': o.seed = strtoull(optarg, NULL, 0); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (o.seconds <= 0 || !o.aux_pages || (o.aux_pages & (o.aux_pages - 1)) || !o.data_pages ||
	    (o.data_pages & (o.data_pages - 1)) || o.mean_trigger_ms < 0 ||
	    (strcmp(mode, "full") && strcmp(mode, "snapshot") && strcmp(mode, "both"))) {
		fprintf(stderr, "soak: bad arguments (page counts are powers of two, -m full, "
				"snapshot or both)\n");
		usage(stderr);
		return 2;
	}
	rate = memcpy_gbps();
	if (strcmp(mode, "snapshot"))
		status |= run(&o, false, rate);
	if (strcmp(mode, "full") && status < 2)
		status |= run(&o, true, rate);
	printf("soak: %s\n", status ? "FAILED" : "every check held");
	return status;
}
