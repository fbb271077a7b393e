/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf.data interoperability with the real perf tool (Debian's linux-perf 6.1) and the real
 * kernel: files perf records are read with the same per-type counts perf reports; files
 * written from real kernel records are accepted by perf script/report with the same samples;
 * a perf file read and written back gives identical perf script output; a real ENOSPC on a
 * small tmpfs leaves a file perf reads.
 *
 * Needs root (tracepoints, mounting tmpfs) and perf; exits 77 with the reason otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "auxcap/perf_data.h"
#include "auxcap/record.h"
#include "event.h"
#include "ring.h"
#include "util.h"

#define NR_TYPES 128
#define WORKLOAD "sh -c 'for i in 1 2 3; do ls -R /usr/include/linux >/dev/null; done'"

static char tmpdir[64];
static const char *perf;

/* --- helpers ---------------------------------------------------------------------------- */

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

__attribute__((format(printf, 1, 2))) static int run(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 1 << 20;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* perf's name of record type @t ("ATTR" for HEADER_ATTR, ...). */
static const char *perf_type_name(uint32_t t)
{
	const char *n = auxcap_record_type_name(t);

	if (n && !strncmp(n, "HEADER_", 7))
		n += 7;
	return n;
}

struct counts {
	uint64_t type[NR_TYPES];
	uint64_t total;
	char evsel[8][64]; /* event names */
	uint64_t evsel_samples[8];
	size_t nr_evsel;
};

/* Parse the "Aggregated stats:" block and the per-event SAMPLE counts of perf report -D. */
static void parse_perf_stats(const char *text, struct counts *c)
{
	const char *p = strstr(text, "Aggregated stats:");
	char line[512], name[256];
	unsigned long long n;
	bool in_evsel = false;

	memset(c, 0, sizeof(*c));
	assert_non_null(p);
	p += strlen("Aggregated stats:");
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = '\0';
		p = nl ? nl + 1 : p + len;
		if (len > 7 && !strcmp(line + len - 7, " stats:") && line[0] != ' ') {
			line[len - 7] = '\0';
			assert_true(c->nr_evsel < 8);
			line[63] = '\0';
			memcpy(c->evsel[c->nr_evsel++], line, 64);
			in_evsel = true;
			continue;
		}
		if (sscanf(line, " %255s events: %llu", name, &n) != 2)
			continue;
		if (in_evsel) {
			if (!strcmp(name, "SAMPLE"))
				c->evsel_samples[c->nr_evsel - 1] = n;
			continue;
		}
		if (!strcmp(name, "TOTAL")) {
			c->total = n;
			continue;
		}
		for (uint32_t t = 1; t < NR_TYPES; t++) {
			const char *pn = perf_type_name(t);

			if (pn && !strcmp(pn, name)) {
				c->type[t] = n;
				break;
			}
		}
	}
}

/* Count records with our reader, by type and by event (SAMPLE only). */
static void count_ours(struct auxcap_perf_reader *r, struct counts *c)
{
	struct auxcap_perf_event ev;
	int ret;

	memset(c, 0, sizeof(*c));
	while ((ret = auxcap_perf_reader_next(r, &ev)) > 0) {
		assert_true(ev.rec.type < NR_TYPES);
		c->type[ev.rec.type]++;
		c->total++;
		if (ev.rec.type == PERF_RECORD_SAMPLE) {
			assert_non_null(ev.evsel);
			for (size_t i = 0; i < auxcap_perf_reader_nr_evsels(r); i++)
				if (auxcap_perf_reader_evsel(r, i) == ev.evsel)
					c->evsel_samples[i]++;
		}
	}
	if (ret < 0)
		fail_msg("read: %s", auxcap_perf_reader_error(r));
	c->nr_evsel = auxcap_perf_reader_nr_evsels(r);
	for (size_t i = 0; i < c->nr_evsel; i++) {
		const char *n = auxcap_perf_reader_evsel(r, i)->name;

		snprintf(c->evsel[i], 64, "%.63s", n ? n : "");
	}
	assert_false(auxcap_perf_reader_info(r)->recovered);
}

static void compare_counts(const struct counts *perf_c, const struct counts *ours)
{
	for (uint32_t t = 1; t < NR_TYPES; t++)
		if (perf_c->type[t] != ours->type[t])
			fail_msg("type %u (%s): perf %" PRIu64 ", auxcap %" PRIu64, t,
				 perf_type_name(t), perf_c->type[t], ours->type[t]);
	assert_int_equal(perf_c->total, ours->total);
	/* Per-event SAMPLE counts, matched by name. */
	for (size_t i = 0; i < perf_c->nr_evsel; i++) {
		size_t j;

		for (j = 0; j < ours->nr_evsel; j++)
			if (!strcmp(perf_c->evsel[i], ours->evsel[j]))
				break;
		if (j == ours->nr_evsel)
			fail_msg("perf's event %s not found by auxcap", perf_c->evsel[i]);
		assert_int_equal(perf_c->evsel_samples[i], ours->evsel_samples[j]);
	}
}

/* A reader over @path fed through a real pipe (cat). */
static struct auxcap_perf_reader *open_through_pipe(const char *path, FILE **ret_f)
{
	char cmd[300];
	struct auxcap_perf_reader *r;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "cat %s", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_int_equal(auxcap_perf_reader_open_fd(fileno(f), NULL, &r), 0);
	*ret_f = f;
	return r;
}

static struct auxcap_perf_reader *open_file(const char *path)
{
	struct auxcap_perf_reader_opts o;
	struct auxcap_perf_reader *r = NULL;
	char err[256] = "";
	int ret;

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.errbuf = err;
	o.errbuf_size = sizeof(err);
	ret = auxcap_perf_reader_open(path, &o, &r);
	if (ret < 0)
		fail_msg("open %s: %s", path, err);
	return r;
}

static int group_setup(void **state)
{
	(void)state;
	perf = getenv("PERF") ? getenv("PERF") : "/usr/bin/perf";
	if (access(perf, X_OK) != 0)
		test_skip("perf is not installed at %s (Debian: apt-get install linux-perf, or set "
			  "PERF=/path/to/perf)",
			  perf);
	test_require_perf(1);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/auxcap-pdp-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	return run("rm -rf %s", tmpdir) == 0 ? 0 : -1;
}

/* --- perf records, auxcap reads ----------------------------------------------------------- */

static const char *const event_sets[] = {
	"-e cpu-clock -c 20000", "-e raw_syscalls:sys_enter",
	"-e cpu-clock -e raw_syscalls:sys_enter -e task-clock",
	"-m 1 -e raw_syscalls:sys_enter", /* a one-page ring: LOST and LOST_SAMPLES records */
};

static void test_perf_file_mode_counts_match(void **state)
{
	char data[256], out[256];

	(void)state;
	path_of(data, sizeof(data), "rec.data");
	path_of(out, sizeof(out), "rec.txt");
	for (size_t i = 0; i < sizeof(event_sets) / sizeof(event_sets[0]); i++) {
		struct counts pc, oc;
		struct auxcap_perf_reader *r;
		char *text;

		assert_int_equal(run("%s record -q %s -o %s -- %s 2>/dev/null", perf, event_sets[i],
				     data, WORKLOAD),
				 0);
		assert_int_equal(run("%s report -D -i %s > %s 2>/dev/null", perf, data, out), 0);
		text = slurp(out);
		parse_perf_stats(text, &pc);
		free(text);
		r = open_file(data);
		count_ours(r, &oc);
		auxcap_perf_reader_close(r);
		assert_true(oc.type[PERF_RECORD_SAMPLE] > 0);
		compare_counts(&pc, &oc);
	}
}

static void test_perf_pipe_mode_counts_match(void **state)
{
	char data[256], out[256];

	(void)state;
	path_of(data, sizeof(data), "rec.pipe");
	path_of(out, sizeof(out), "rec-pipe.txt");
	for (size_t i = 0; i < sizeof(event_sets) / sizeof(event_sets[0]); i++) {
		struct counts pc, oc, oc2;
		struct auxcap_perf_reader *r;
		char *text;
		FILE *f;

		assert_int_equal(run("%s record -q %s -o - -- %s > %s 2>/dev/null", perf,
				     event_sets[i], WORKLOAD, data),
				 0);
		assert_int_equal(run("%s report -D -i - < %s > %s 2>/dev/null", perf, data, out),
				 0);
		text = slurp(out);
		parse_perf_stats(text, &pc);
		free(text);
		/* Through a pipe, and the same stream saved to a file. */
		r = open_through_pipe(data, &f);
		count_ours(r, &oc);
		assert_true(auxcap_perf_reader_info(r)->pipe);
		assert_non_null(auxcap_perf_reader_features(r)->hostname);
		auxcap_perf_reader_close(r);
		pclose(f);
		assert_true(oc.type[PERF_RECORD_SAMPLE] > 0);
		compare_counts(&pc, &oc);
		r = open_file(data);
		count_ours(r, &oc2);
		auxcap_perf_reader_close(r);
		compare_counts(&pc, &oc2);
	}
}

/* --- the kernel records, auxcap writes, perf reads --------------------------------------- */

struct capture {
	struct perf_event_attr attr[2];
	uint64_t id[2];
	unsigned char *recs; /* records of both rings, back to back */
	size_t len;
	size_t nr_samples;
};

static void capture_append(struct capture *c, const void *rec, size_t n)
{
	c->recs = realloc(c->recs, c->len + n);
	assert_non_null(c->recs);
	memcpy(c->recs + c->len, rec, n);
	c->len += n;
}

static void drain(struct capture *c, struct auxcap_mapped_ring *mr)
{
	const struct perf_event_header *h;

	assert_true(auxcap_ring_begin(&mr->ring) >= 0);
	while (auxcap_ring_next(&mr->ring, &h) > 0) {
		capture_append(c, h, h->size);
		if (h->type == PERF_RECORD_SAMPLE)
			c->nr_samples++;
	}
	auxcap_ring_end(&mr->ring);
}

/* A few hundred cpu-clock and sys_enter samples of this process. */
static void capture_kernel(struct capture *c)
{
	const struct auxcap_sys *sys = &auxcap_sys_linux;
	struct auxcap_mapped_ring mr[2];
	struct timespec t0, t1;
	int64_t tp = test_tracepoint_id("raw_syscalls", "sys_enter");
	int fd[2];
	volatile uint64_t x = 0;

	assert_true(tp > 0);
	memset(c, 0, sizeof(*c));
	for (int i = 0; i < 2; i++) {
		struct perf_event_attr *a = &c->attr[i];

		memset(a, 0, sizeof(*a));
		a->type = i == 0 ? PERF_TYPE_SOFTWARE : PERF_TYPE_TRACEPOINT;
		a->config = i == 0 ? PERF_COUNT_SW_CPU_CLOCK : (uint64_t)tp;
		a->sample_period = i == 0 ? 100000 : 1;
		a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER;
		if (i == 1)
			a->sample_type |= PERF_SAMPLE_RAW;
		a->sample_id_all = 1;
		a->disabled = 1;
		a->exclude_kernel = i == 0;
		a->comm = a->mmap = a->task = i == 0;
		fd[i] = auxcap_event_open(sys, a, 0, -1, -1, 0);
		assert_true(fd[i] >= 0);
		assert_int_equal(auxcap_event_id(sys, fd[i], &c->id[i]), 0);
		assert_int_equal(auxcap_mapped_ring_open(sys, fd[i], 64, 0, &mr[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		assert_int_equal(auxcap_event_enable(sys, fd[i], true), 0);
	for (int i = 0; i < 300; i++)
		(void)syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int k = 0; k < 100000; k++)
			x += (uint64_t)k * 3;
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 40000000L);
	(void)x; /* only there to burn CPU time (clang: set but not used) */
	for (int i = 0; i < 2; i++)
		assert_int_equal(auxcap_event_enable(sys, fd[i], false), 0);
	for (int i = 0; i < 2; i++) {
		drain(c, &mr[i]);
		assert_int_equal(mr[i].ring.stats.lost_records, 0);
		auxcap_mapped_ring_close(&mr[i]);
		close(fd[i]);
	}
	assert_true(c->nr_samples > 300);
}

/* The TRACING_DATA feature of a file perf records with the same tracepoint. */
static void *tracing_data(size_t *ret_len)
{
	struct auxcap_perf_reader *r;
	char data[256];
	const void *p;
	void *copy;

	path_of(data, sizeof(data), "td.data");
	assert_int_equal(
		run("%s record -q -e raw_syscalls:sys_enter -o %s -- true 2>/dev/null", perf, data),
		0);
	r = open_file(data);
	assert_int_equal(
		auxcap_perf_reader_feature_raw(r, AUXCAP_PERF_FEAT_TRACING_DATA, &p, ret_len), 0);
	copy = malloc(*ret_len);
	assert_non_null(copy);
	memcpy(copy, p, *ret_len);
	auxcap_perf_reader_close(r);
	return copy;
}

/* The writer builds TRACING_DATA itself from tracefs (the attr is named "sys:name"). */
static void write_capture(const struct capture *c, const char *path, bool pipe)
{
	static const char *const argv[] = { "auxcap", "test" };
	struct auxcap_perf_writer_opts wo;
	struct auxcap_perf_writer *w;

	memset(&wo, 0, sizeof(wo));
	wo.sz = sizeof(wo);
	wo.pipe = pipe;
	assert_int_equal(auxcap_perf_writer_open(path, &wo, &w), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &c->attr[0], "cpu-clock", &c->id[0], 1), 0);
	assert_int_equal(
		auxcap_perf_writer_add_attr(w, &c->attr[1], "raw_syscalls:sys_enter", &c->id[1], 1),
		0);
	assert_int_equal(auxcap_perf_writer_set_host_features(w), 0);
	assert_int_equal(auxcap_perf_writer_set_cmdline(w, 2, argv), 0);
	assert_int_equal(auxcap_perf_writer_write_kernel_mmap(w), 0);
	assert_int_equal(auxcap_perf_writer_write_finished_init(w), 0);
	for (size_t off = 0; off < c->len;) {
		struct perf_event_header h;

		memcpy(&h, c->recs + off, sizeof(h));
		assert_int_equal(auxcap_perf_writer_write(w, c->recs + off), 0);
		off += h.size;
	}
	assert_int_equal(auxcap_perf_writer_write_finished_round(w), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
}

struct line {
	uint32_t tid;
	uint64_t time; /* ns */
	uint64_t ip;
};

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->ip < y->ip ? -1 : x->ip > y->ip;
}

/* The samples of the capture as perf script -F tid,time,ip --ns prints them. */
static size_t expected_lines(const struct capture *c, struct line *out, size_t max)
{
	struct auxcap_sample_layout l[2];
	size_t n = 0;

	for (int i = 0; i < 2; i++)
		auxcap_sample_layout_from_attr(&c->attr[i], &l[i]);
	for (size_t off = 0; off < c->len;) {
		struct auxcap_record rec;
		uint64_t id;
		int which;

		assert_int_equal(auxcap_record_peek_id(&l[0], c->recs + off, c->len - off, &id), 0);
		which = id == c->id[0] ? 0 : 1;
		assert_int_equal(auxcap_record_parse(&l[which], c->recs + off, c->len - off, &rec),
				 0);
		if (rec.type == PERF_RECORD_SAMPLE) {
			assert_true(n < max);
			out[n].tid = rec.u.sample.tid;
			out[n].time = rec.u.sample.time;
			out[n].ip = rec.u.sample.ip;
			n++;
		}
		off += rec.size;
	}
	qsort(out, n, sizeof(*out), line_cmp);
	return n;
}

static size_t parse_script(const char *text, struct line *out, size_t max)
{
	size_t n = 0;

	while (*text) {
		unsigned long long s, ns, ip;
		unsigned int tid;

		if (sscanf(text, " %u %llu.%llu: %llx", &tid, &s, &ns, &ip) == 4) {
			assert_true(n < max);
			out[n].tid = tid;
			out[n].time = s * 1000000000ULL + ns;
			out[n].ip = ip;
			n++;
		}
		text = strchr(text, '\n');
		if (!text)
			break;
		text++;
	}
	qsort(out, n, sizeof(*out), line_cmp);
	return n;
}

static void assert_no_stderr(const char *path)
{
	char *err = slurp(path);

	assert_non_null(err);
	if (err[0])
		fail_msg("perf complained on stderr: %s", err);
	free(err);
}

static uint64_t want_lines_first_time; /* time of the first expected sample, ns */

static void check_perf_accepts(const struct capture *c, const char *data, bool pipe)
{
	static struct line want[65536], got[65536];
	char out[256], err[256];
	const char *in = pipe ? "-i - <" : "-i";
	size_t nw, ng;
	char *text;

	path_of(out, sizeof(out), "script.txt");
	path_of(err, sizeof(err), "script.err");
	assert_int_equal(
		run("%s script %s %s -F tid,time,ip --ns > %s 2> %s", perf, in, data, out, err), 0);
	assert_no_stderr(err);
	text = slurp(out);
	ng = parse_script(text, got, 65536);
	free(text);
	nw = expected_lines(c, want, 65536);
	want_lines_first_time = want[0].time;
	assert_int_equal(ng, nw);
	for (size_t i = 0; i < nw; i++) {
		assert_int_equal(got[i].tid, want[i].tid);
		assert_int_equal(got[i].time, want[i].time);
		assert_int_equal(got[i].ip, want[i].ip);
	}
	assert_int_equal(run("%s %s | %s report --stdio -i %s > %s 2> %s", pipe ? "cat" : "true",
			     data, perf, pipe ? "-" : data, out, err),
			 0);
	assert_no_stderr(err);
	text = slurp(out);
	assert_non_null(strstr(text, "cpu-clock"));
	assert_non_null(strstr(text, "raw_syscalls:sys_enter"));
	free(text);
	if (!pipe) {
		char hdr[128];

		/* SAMPLE_TIME, which the writer fills in, as perf prints it (us resolution) */
		assert_int_equal(
			run("%s report --header-only -i %s > %s 2> %s", perf, data, out, err), 0);
		text = slurp(out);
		snprintf(hdr, sizeof(hdr), "# time of first sample : %llu.%06llu",
			 (unsigned long long)(want_lines_first_time / 1000000000),
			 (unsigned long long)(want_lines_first_time % 1000000000 / 1000));
		if (!strstr(text, hdr))
			fail_msg("'%s' not in perf's header: %s", hdr, text);
		free(text);
	}
}

static void test_kernel_records_written_are_accepted_by_perf(void **state)
{
	struct capture c;
	char data[256];

	(void)state;
	capture_kernel(&c);
	path_of(data, sizeof(data), "ours.data");
	write_capture(&c, data, false);
	check_perf_accepts(&c, data, false);
	path_of(data, sizeof(data), "ours.pipe");
	write_capture(&c, data, true);
	check_perf_accepts(&c, data, true);
	free(c.recs);
}

/* Our TRACING_DATA is byte for byte what perf writes for the same tracepoint. */
static void test_tracing_data_equals_perfs(void **state)
{
	static const char *const ev[] = { "raw_syscalls:sys_enter" };
	struct auxcap_perf_writer *w;
	struct auxcap_perf_reader *r;
	struct perf_event_attr a;
	char data[256];
	const void *p;
	size_t ours_len, len;
	void *perfs = tracing_data(&len);
	uint64_t id = 1;

	(void)state;
	path_of(data, sizeof(data), "td-ours.data");
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)test_tracepoint_id("raw_syscalls", "sys_enter");
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_RAW;
	assert_int_equal(auxcap_perf_writer_open(data, NULL, &w), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "raw_syscalls:sys_enter", &id, 1), 0);
	assert_int_equal(auxcap_perf_writer_set_tracing_data(w, NULL, ev, 1), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
	r = open_file(data);
	assert_int_equal(
		auxcap_perf_reader_feature_raw(r, AUXCAP_PERF_FEAT_TRACING_DATA, &p, &ours_len), 0);
	assert_int_equal(ours_len, len);
	assert_memory_equal(p, perfs, len);
	auxcap_perf_reader_close(r);
	free(perfs);
}

/* --- round trip -------------------------------------------------------------------------- */

/* Read @in and write it back to @out through the writer. */
static void copy_file(const char *in, const char *out, bool pipe)
{
	struct auxcap_perf_writer_opts wo;
	struct auxcap_perf_writer *w;
	struct auxcap_perf_reader *r = open_file(in);
	struct auxcap_perf_event ev;
	int ret;

	memset(&wo, 0, sizeof(wo));
	wo.sz = sizeof(wo);
	wo.pipe = pipe;
	assert_int_equal(auxcap_perf_writer_open(out, &wo, &w), 0);
	for (size_t i = 0; i < auxcap_perf_reader_nr_evsels(r); i++) {
		const struct auxcap_perf_evsel *e = auxcap_perf_reader_evsel(r, i);

		assert_int_equal(
			auxcap_perf_writer_add_attr(w, e->attr, e->name, e->ids, e->nr_ids), 0);
	}
	for (unsigned int f = 1; f < AUXCAP_PERF_FEAT_BITS; f++) {
		const void *p;
		size_t len;

		if (f == AUXCAP_PERF_FEAT_AUXTRACE ||
		    auxcap_perf_reader_feature_raw(r, f, &p, &len) < 0)
			continue;
		assert_int_equal(auxcap_perf_writer_set_feature(w, f, p, len), 0);
	}
	while ((ret = auxcap_perf_reader_next(r, &ev)) > 0) {
		if (ev.rec.type == AUXCAP_PERF_RECORD_AUXTRACE) {
			struct auxcap_perf_auxtrace at = { ev.u.auxtrace.offset,
							   ev.u.auxtrace.reference,
							   ev.u.auxtrace.idx, ev.u.auxtrace.tid,
							   ev.u.auxtrace.cpu };

			assert_int_equal(
				auxcap_perf_writer_write_auxtrace(w, &at, ev.u.auxtrace.data,
								  ev.u.auxtrace.size, NULL, 0),
				0);
			continue;
		}
		assert_int_equal(auxcap_perf_writer_write(w, ev.rec.data), 0);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
	auxcap_perf_reader_close(r);
}

static void test_round_trip_gives_identical_perf_script(void **state)
{
	char orig[256], copy[256], copy_pipe[256], o1[256], o2[256], o3[256], err[256];
	char *t1, *t2, *t3;

	(void)state;
	path_of(orig, sizeof(orig), "orig.data");
	path_of(copy, sizeof(copy), "copy.data");
	path_of(copy_pipe, sizeof(copy_pipe), "copy.pipe");
	path_of(o1, sizeof(o1), "orig.txt");
	path_of(o2, sizeof(o2), "copy.txt");
	path_of(o3, sizeof(o3), "copy-pipe.txt");
	path_of(err, sizeof(err), "copy.err");
	assert_int_equal(run("%s record -q -e cpu-clock -e raw_syscalls:sys_enter -e task-clock "
			     "-o %s -- %s 2>/dev/null",
			     perf, orig, WORKLOAD),
			 0);
	copy_file(orig, copy, false);
	copy_file(orig, copy_pipe, true);
	assert_int_equal(run("%s script -i %s > %s 2>/dev/null", perf, orig, o1), 0);
	assert_int_equal(run("%s script -i %s > %s 2>%s", perf, copy, o2, err), 0);
	assert_no_stderr(err);
	assert_int_equal(run("cat %s | %s script -i - > %s 2>%s", copy_pipe, perf, o3, err), 0);
	assert_no_stderr(err);
	t1 = slurp(o1);
	t2 = slurp(o2);
	t3 = slurp(o3);
	assert_true(strlen(t1) > 1000);
	assert_string_equal(t1, t2);
	assert_string_equal(t1, t3);
	free(t1);
	free(t2);
	free(t3);
}

/* --- an AUX capture ---------------------------------------------------------------------- */

#define FAKE_PT_TYPE 8 /* a PMU type number; Intel PT needs no hardware to be decoded */

/* An Intel PT shaped file: PT attr + dummy tracking attr, AUXTRACE_INFO, PSB-only buffers. */
static void write_pt_file(const char *path, bool pipe, int nr_buffers)
{
	/* priv[]: PMU_TYPE .. FILTER_STR_LEN, then Cap Event Trace (spec section 1.5) */
	static const uint64_t priv[18] = { FAKE_PT_TYPE, 0,	  0, 0, 0,   0x400, 0x800, 0, 0, 1,
					   0x200,	 0x3c000, 0, 0, 0x2, 0,	    0,	   0 };
	struct auxcap_perf_id_index_entry ie[2] = { { 100, 0, 0, (uint64_t)-1 },
						    { 101, 0, 0, (uint64_t)-1 } };
	struct auxcap_perf_writer_opts wo;
	struct auxcap_perf_writer *w;
	struct perf_event_attr a, d;
	unsigned char p[64];
	uint64_t ida = 100, idd = 101;

	memset(&a, 0, sizeof(a));
	a.type = FAKE_PT_TYPE;
	a.size = sizeof(a);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			PERF_SAMPLE_IDENTIFIER;
	a.sample_id_all = 1;
	a.exclude_kernel = 1;
	a.config = 0x2001;
	d = a;
	d.type = PERF_TYPE_SOFTWARE;
	d.config = PERF_COUNT_SW_DUMMY;
	d.comm = d.mmap = d.mmap2 = d.task = 1;
	memset(&wo, 0, sizeof(wo));
	wo.sz = sizeof(wo);
	wo.pipe = pipe;
	assert_int_equal(auxcap_perf_writer_open(path, &wo, &w), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "intel_pt//u", &ida, 1), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &d, "dummy:u", &idd, 1), 0);
	assert_int_equal(auxcap_perf_writer_set_host_features(w), 0);
	assert_int_equal(auxcap_perf_writer_write_id_index(w, ie, 2), 0);
	assert_int_equal(auxcap_perf_writer_write_auxtrace_info(w, 1, priv, 18), 0);
	assert_int_equal(auxcap_perf_writer_write_finished_init(w), 0);
	memset(p, 0, sizeof(p));
	for (int i = 0; i < 16; i += 2) {
		p[i] = 0x02; /* PSB */
		p[i + 1] = 0x82;
	}
	p[16] = 0x02; /* PSBEND */
	p[17] = 0x23;
	for (int k = 0; k < nr_buffers; k++) {
		struct auxcap_perf_auxtrace at = { (uint64_t)k * 37, (uint64_t)k, 0, (uint32_t)-1,
						   0 };

		/* 37 bytes in two pieces: padded to 40 */
		assert_int_equal(auxcap_perf_writer_write_auxtrace(w, &at, p, 20, p + 20, 17), 0);
		assert_int_equal(auxcap_perf_writer_write_finished_round(w), 0);
	}
	assert_int_equal(auxcap_perf_writer_close(w), 0);
}

static void test_auxtrace_file_accepted_by_perf(void **state)
{
	char data[256], out[256], err[256];
	struct auxcap_perf_reader *r;
	struct counts pc, oc;
	char *text;

	(void)state;
	path_of(out, sizeof(out), "pt.txt");
	path_of(err, sizeof(err), "pt.err");
	for (int pipe = 0; pipe < 2; pipe++) {
		path_of(data, sizeof(data), pipe ? "pt.pipe" : "pt.data");
		write_pt_file(data, pipe, 7);
		r = open_file(data);
		count_ours(r, &oc);
		if (!pipe)
			assert_int_equal(auxcap_perf_reader_features(r)->nr_auxtrace_index, 7);
		auxcap_perf_reader_close(r);
		assert_int_equal(oc.type[AUXCAP_PERF_RECORD_AUXTRACE], 7);
		/* perf checks every AUXTRACE index entry and decodes the PSBs. */
		assert_int_equal(run("%s %s | %s report -D -i %s > %s 2>%s", pipe ? "cat" : "true",
				     data, perf, pipe ? "-" : data, out, err),
				 0);
		text = slurp(out);
		parse_perf_stats(text, &pc);
		assert_non_null(strstr(text, "PSBEND"));
		free(text);
		compare_counts(&pc, &oc);
		assert_int_equal(run("%s %s | %s script --itrace=b -i %s > %s 2>%s",
				     pipe ? "cat" : "true", data, perf, pipe ? "-" : data, out,
				     err),
				 0);
		if (!pipe)
			assert_no_stderr(
				err); /* pipe mode: perf warns that PT in pipes is unwise */
	}
}

/* --- a killed capture -------------------------------------------------------------------- */

static void test_killed_capture_read_by_perf_and_auxcap(void **state)
{
	struct auxcap_perf_reader *r;
	struct counts pc, oc;
	char data[256], out[256];
	char *text;
	int status;
	pid_t pid;

	(void)state;
	path_of(data, sizeof(data), "killed.data");
	path_of(out, sizeof(out), "killed.txt");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct auxcap_perf_writer_opts wo;
		struct auxcap_perf_writer *w;
		struct perf_event_attr a;
		uint64_t id = 5;

		memset(&a, 0, sizeof(a));
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.sample_period = 1000;
		a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER;
		a.sample_id_all = 1;
		memset(&wo, 0, sizeof(wo));
		wo.sz = sizeof(wo);
		wo.header_update_bytes = 64 * 1024;
		if (auxcap_perf_writer_open(data, &wo, &w) < 0 ||
		    auxcap_perf_writer_add_attr(w, &a, "cpu-clock", &id, 1) < 0 ||
		    auxcap_perf_writer_write_kernel_mmap(w) < 0)
			_exit(1);
		for (uint64_t i = 0; i < 20000; i++) {
			struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
						       48 };
			uint64_t v[5] = { id, 0x400000 + i,
					  (uint64_t)getpid() << 32 | (uint64_t)getpid(), 1000 + i,
					  1000 };
			unsigned char rec[48];

			memcpy(rec, &h, 8);
			memcpy(rec + 8, v, sizeof(v));
			if (auxcap_perf_writer_write(w, rec) < 0)
				_exit(1);
			if (i % 100 == 99 && auxcap_perf_writer_write_finished_round(w) < 0)
				_exit(1);
		}
		raise(SIGKILL); /* before close: no final header, no features */
		_exit(1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));

	r = open_file(data);
	memset(&oc, 0, sizeof(oc));
	{
		struct auxcap_perf_event ev;

		while (auxcap_perf_reader_next(r, &ev) > 0)
			oc.type[ev.rec.type < NR_TYPES ? ev.rec.type : 0]++;
	}
	assert_true(auxcap_perf_reader_info(r)->recovered);
	auxcap_perf_reader_close(r);
	assert_int_equal(oc.type[PERF_RECORD_SAMPLE], 20000); /* the last round was flushed */

	/* perf reads the file as far as the last header update says. */
	assert_int_equal(run("%s report -D -i %s > %s 2>/dev/null", perf, data, out), 0);
	text = slurp(out);
	parse_perf_stats(text, &pc);
	free(text);
	assert_true(pc.type[PERF_RECORD_SAMPLE] > 15000);
	assert_true(pc.type[PERF_RECORD_SAMPLE] <= oc.type[PERF_RECORD_SAMPLE]);
}

/* --- a real ENOSPC ----------------------------------------------------------------------- */

static void test_real_enospc_on_small_tmpfs(void **state)
{
	struct auxcap_perf_writer *w;
	struct perf_event_attr a;
	struct auxcap_perf_reader *r;
	struct counts pc, oc;
	char mnt[256], data[256], out[256];
	unsigned char rec[48];
	uint64_t id = 7, written = 0;
	char *text;
	int ret = 0;

	(void)state;
	path_of(mnt, sizeof(mnt), "small");
	assert_int_equal(mkdir(mnt, 0700), 0);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=256k") != 0)
		test_skip("cannot mount a tmpfs (%s); needs root", strerror(errno));
	path_of(data, sizeof(data), "small/full.data");
	path_of(out, sizeof(out), "full.txt");

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 10000;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
			PERF_SAMPLE_IDENTIFIER;
	a.sample_id_all = 1;
	assert_int_equal(auxcap_perf_writer_open(data, NULL, &w), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "cpu-clock", &id, 1), 0);
	assert_int_equal(auxcap_perf_writer_set_host_features(w), 0);
	for (uint64_t i = 0; ret == 0; i++) {
		struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 48 };
		uint64_t v[5] = { id, 0x400000 + i, (uint64_t)getpid() << 32 | (uint64_t)getpid(),
				  1000 + i, 10000 };

		memcpy(rec, &h, 8);
		memcpy(rec + 8, v, sizeof(v));
		ret = auxcap_perf_writer_write(w, rec);
		if (ret == 0 && i % 100 == 99)
			ret = auxcap_perf_writer_write_finished_round(w);
		if (ret == 0)
			written++;
		assert_true(i < 1000000);
	}
	assert_int_equal(ret, -ENOSPC);
	assert_int_equal(auxcap_perf_writer_close(w), -ENOSPC);

	r = open_file(data);
	count_ours(r, &oc);
	auxcap_perf_reader_close(r);
	assert_true(oc.type[PERF_RECORD_SAMPLE] > 1000);
	assert_true(oc.type[PERF_RECORD_SAMPLE] <= written);
	assert_int_equal(run("%s report -D -i %s > %s 2>/dev/null", perf, data, out), 0);
	text = slurp(out);
	parse_perf_stats(text, &pc);
	free(text);
	assert_int_equal(pc.type[PERF_RECORD_SAMPLE], oc.type[PERF_RECORD_SAMPLE]);
	assert_int_equal(umount(mnt), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_file_mode_counts_match),
		cmocka_unit_test(test_perf_pipe_mode_counts_match),
		cmocka_unit_test(test_kernel_records_written_are_accepted_by_perf),
		cmocka_unit_test(test_tracing_data_equals_perfs),
		cmocka_unit_test(test_round_trip_gives_identical_perf_script),
		cmocka_unit_test(test_auxtrace_file_accepted_by_perf),
		cmocka_unit_test(test_killed_capture_read_by_perf_and_auxcap),
		cmocka_unit_test(test_real_enospc_on_small_tmpfs),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
