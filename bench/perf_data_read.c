/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Benchmark: the perf.data reader's record-stream throughput against a plain sequential
 * read() of the same file, measured in the same run (page cache warm for both).
 *
 * usage: auxcap-bench-perf-data-read [-s MIB] [-k aux|samples] [-o FILE] [FILE]
 *   FILE given and existing: read it; otherwise generate FILE (default: a temporary file of
 *   -s MiB, 1024 by default) with the writer: "aux" = AUXTRACE records of 64 KiB with a
 *   sample every 8 KiB of trace (an Intel PT capture's shape), "samples" = 56-byte samples
 *   only (the worst case: all parsing, no payload).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "auxcap/perf_data.h"

#define AUX_CHUNK 65536 /* bytes per AUXTRACE record */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int generate(const char *path, uint64_t bytes, bool aux)
{
	struct auxcap_perf_writer *w;
	struct perf_event_attr a;
	static unsigned char payload[AUX_CHUNK];
	unsigned char rec[56];
	uint64_t id = 1, seq = 0;
	int r;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 10000;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER;
	a.sample_id_all = 1;
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (unsigned char)(i * 31);
	r = auxcap_perf_writer_open(path, NULL, &w);
	if (r < 0)
		return r;
	r = auxcap_perf_writer_add_attr(w, &a, "cpu-clock", &id, 1);
	while (r == 0 && auxcap_perf_writer_data_size(w) < bytes) {
		struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 56 };
		uint64_t v[6] = { id, 0x400000 + seq, 1234ULL << 32 | 1234, seq * 100, 0, 10000 };
		unsigned int samples = aux ? AUX_CHUNK / 8192 : 1024;

		for (unsigned int i = 0; i < samples && r == 0; i++, seq++) {
			v[1] = 0x400000 + seq;
			v[3] = seq * 100;
			memcpy(rec, &h, 8);
			memcpy(rec + 8, v, sizeof(v));
			r = auxcap_perf_writer_write(w, rec);
		}
		if (r == 0 && aux) {
			struct auxcap_perf_auxtrace at = { seq * AUX_CHUNK, seq, 0, (uint32_t)-1,
							   0 };

			/* Two pieces, as a wrapped ring would give. */
			r = auxcap_perf_writer_write_auxtrace(w, &at, payload, AUX_CHUNK / 2,
							      payload + AUX_CHUNK / 2,
							      AUX_CHUNK / 2);
		}
		if (r == 0)
			r = auxcap_perf_writer_write_finished_round(w);
	}
	if (r < 0) {
		(void)auxcap_perf_writer_close(w);
		return r;
	}
	return auxcap_perf_writer_close(w);
}

/* Plain sequential read() of the whole file; returns bytes read or a negative errno. */
static int64_t baseline_read(const char *path, uint64_t *sum)
{
	static unsigned char buf[1 << 20];
	int64_t total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		total += n;
		*sum += buf[0] + buf[n - 1]; /* keep the read observable */
	}
	close(fd);
	return n < 0 ? -errno : total;
}

static long anon_kb_max, file_kb_max; /* RssAnon / RssFile seen at the end of a walk */

/* Record the resident anonymous and file-backed memory now (from /proc/self/status). */
static void sample_rss(void)
{
	char line[256];
	long kb;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "RssAnon: %ld kB", &kb) == 1 && kb > anon_kb_max)
			anon_kb_max = kb;
		if (sscanf(line, "RssFile: %ld kB", &kb) == 1 && kb > file_kb_max)
			file_kb_max = kb;
	}
	fclose(f);
}

/* Walk every record; returns the records read or a negative errno. */
static int64_t reader_walk(const char *path, unsigned int flags, uint64_t *sum)
{
	struct auxcap_perf_reader_opts o;
	struct auxcap_perf_reader *r;
	struct auxcap_perf_event ev;
	char err[256] = "";
	int64_t n = 0;
	int ret;

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.flags = flags;
	o.errbuf = err;
	o.errbuf_size = sizeof(err);
	ret = auxcap_perf_reader_open(path, &o, &r);
	if (ret < 0) {
		fprintf(stderr, "open %s: %s\n", path, err);
		return ret;
	}
	while ((ret = auxcap_perf_reader_next(r, &ev)) > 0) {
		n++;
		if (ev.rec.type == PERF_RECORD_SAMPLE)
			*sum += ev.rec.u.sample.ip;
		else if (ev.rec.type == AUXCAP_PERF_RECORD_AUXTRACE)
			*sum += ev.u.auxtrace.size; /* borrowed payload, not copied */
	}
	if (ret < 0)
		fprintf(stderr, "read: %s\n", auxcap_perf_reader_error(r));
	sample_rss();
	auxcap_perf_reader_close(r);
	return ret < 0 ? ret : n;
}

static void usage(void)
{
	fprintf(stderr, "usage: auxcap-bench-perf-data-read [-s MIB] [-k aux|samples] [FILE]\n");
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/auxcap-bench-XXXXXX";
	const char *path = NULL;
	uint64_t mib = 1024, sum = 0;
	bool aux = true, generated = false;
	double t0, tb = 1e9, tr = 1e9, traw = 1e9;
	int64_t bytes = 0, recs = 0;
	struct rusage ru;
	struct stat st;
	int c;

	while ((c = getopt(argc, argv, "s:k:h")) != -1) {
		switch (c) {
		case 's':
			mib = strtoull(optarg, NULL, 0);
			break;
		case 'k':
			aux = strcmp(optarg, "samples") != 0;
			break;
		default:
			usage();
			return c == 'h' ? 0 : 1;
		}
	}
	if (optind < argc)
		path = argv[optind];
	if (!path || stat(path, &st) != 0) {
		int r;

		if (!path) {
			int fd = mkstemp(tmpl);

			if (fd < 0) {
				perror("mkstemp");
				return 1;
			}
			close(fd);
			path = tmpl;
		}
		printf("generating %s: %llu MiB of %s\n", path, (unsigned long long)mib,
		       aux ? "AUXTRACE (64 KiB) + samples" : "56-byte samples");
		fflush(stdout);
		r = generate(path, mib << 20, aux);
		if (r < 0) {
			fprintf(stderr, "generate: %s\n", strerror(-r));
			return 1;
		}
		generated = true;
	}
	/* Warm the page cache, then take the best of three runs of each. */
	if (baseline_read(path, &sum) < 0) {
		perror("read");
		return 1;
	}
	for (int i = 0; i < 3; i++) {
		double d;

		t0 = now();
		bytes = baseline_read(path, &sum);
		d = now() - t0;
		tb = d < tb ? d : tb;
		t0 = now();
		recs = reader_walk(path, 0, &sum);
		d = now() - t0;
		tr = d < tr ? d : tr;
		t0 = now();
		(void)reader_walk(path, AUXCAP_PERF_READ_RAW, &sum);
		d = now() - t0;
		traw = d < traw ? d : traw;
		if (recs < 0)
			return 1;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("memory at the end of a walk: anonymous %ld KiB, file pages mapped %ld KiB\n",
	       anon_kb_max, file_kb_max);
	printf("file: %lld bytes, %lld records\n", (long long)bytes, (long long)recs);
	printf("read() baseline:          %8.0f MB/s\n", (double)bytes / tb / 1e6);
	printf("reader (decoded records): %8.0f MB/s  %6.1f Mrecords/s  ratio %.2f\n",
	       (double)bytes / tr / 1e6, (double)recs / tr / 1e6, tb / tr);
	printf("reader (raw records):     %8.0f MB/s  %6.1f Mrecords/s  ratio %.2f\n",
	       (double)bytes / traw / 1e6, (double)recs / traw / 1e6, tb / traw);
	printf("max RSS: %ld MiB (checksum %llu)\n", ru.ru_maxrss / 1024, (unsigned long long)sum);
	if (generated && path == tmpl)
		unlink(path);
	return 0;
}
