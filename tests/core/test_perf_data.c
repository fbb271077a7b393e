/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the perf.data writer and reader: round trips in file and pipe mode, writer
 * argument checks, I/O faults (short writes, EINTR, ENOSPC), a writer killed by SIGKILL, and
 * truncated/corrupted/fuzzed files.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "auxcap/perf_data.h"
#include "auxcap/record.h"
#include "util.h"

#define SAMPLE_TYPE                                                              \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER)
#define SAMPLE_SIZE 56	/* header + identifier, ip, pid/tid, time, cpu/res, period */
#define NR_ITEMS    300 /* loop iterations of the standard file */

static const uint64_t ids_a[] = { 10, 11 };
static const uint64_t ids_b[] = { 20 };

static char tmpdir[64];

static int setup_dir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/auxcap-pd-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static void make_attr(struct perf_event_attr *a, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->size = sizeof(*a);
	a->config = config;
	a->sample_period = 1000;
	a->sample_type = SAMPLE_TYPE;
	a->sample_id_all = 1;
	a->comm = 1;
}

static uint64_t id_of(uint64_t seq)
{
	static const uint64_t ids[] = { 10, 20, 11 };

	return ids[seq % 3];
}

static size_t make_sample(unsigned char *buf, uint64_t seq)
{
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, SAMPLE_SIZE };
	uint64_t v[6];
	uint32_t pt[2] = { 100, (uint32_t)(100 + seq % 5) };
	uint32_t cr[2] = { (uint32_t)(seq % 2), 0 };

	v[0] = id_of(seq);
	v[1] = 0x400000 + seq * 4;
	memcpy(&v[2], pt, 8);
	v[3] = 1000000 + seq * 10;
	memcpy(&v[4], cr, 8);
	v[5] = seq;
	memcpy(buf, &h, 8);
	memcpy(buf + 8, v, sizeof(v));
	return SAMPLE_SIZE;
}

static size_t make_comm(unsigned char *buf, uint64_t seq)
{
	struct auxcap_sample_layout l;
	struct auxcap_sample_id sid;
	struct perf_event_attr a;
	struct perf_event_header h = { PERF_RECORD_COMM, 0, 0 };
	uint32_t pt[2] = { 100, (uint32_t)(100 + seq % 5) };
	size_t n;

	make_attr(&a, PERF_COUNT_SW_CPU_CLOCK);
	auxcap_sample_layout_from_attr(&a, &l);
	memset(&sid, 0, sizeof(sid));
	sid.pid = 100;
	sid.tid = pt[1];
	sid.time = 1000000 + seq * 10;
	sid.id = 10;
	sid.cpu = 1;
	memcpy(buf + 8, pt, 8);
	memset(buf + 16, 0, 16);
	snprintf((char *)buf + 16, 16, "t%llu", (unsigned long long)seq);
	n = auxcap_sample_id_encode(&l, &sid, buf + 32);
	h.size = (uint16_t)(32 + n);
	memcpy(buf, &h, 8);
	return h.size;
}

static unsigned char pattern(uint64_t seq, size_t k)
{
	return (unsigned char)(seq * 7 + k);
}

/* What the standard file holds, in order (type and sequence number). */
struct expect {
	uint32_t type[NR_ITEMS * 4];
	uint64_t seq[NR_ITEMS * 4];
	size_t n;
};

static void expect_add(struct expect *e, uint32_t type, uint64_t seq)
{
	if (e) {
		e->type[e->n] = type;
		e->seq[e->n] = seq;
		e->n++;
	}
}

/*
 * Write the standard file through @w.  Stops at the first error and returns it (0 if all
 * went well); *@ret_samples counts the samples written before that.
 */
static int write_standard(struct auxcap_perf_writer *w, struct expect *e, int *ret_samples)
{
	struct perf_event_attr a, b;
	unsigned char rec[256], aux1[512], aux2[64];
	static const char *const argv[] = { "auxcap", "record", "-e", "alpha" };
	static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3 };
	struct auxcap_perf_time_conv tc = { 10, 500, 123456, 7, 0xffff, true, false };
	struct auxcap_perf_id_index_entry idx[3] = { { 10, 0, 0, (uint64_t)-1 },
						     { 11, 1, 1, (uint64_t)-1 },
						     { 20, 0, 0, (uint64_t)-1 } };
	uint64_t priv[3] = { 8, 0x1234, 42 };
	struct auxcap_perf_auxtrace_error ae;
	int r, samples = 0;

	make_attr(&a, PERF_COUNT_SW_CPU_CLOCK);
	make_attr(&b, PERF_COUNT_SW_TASK_CLOCK);
	b.comm = 0;
	r = auxcap_perf_writer_add_attr(w, &a, "alpha", ids_a, 2);
	if (r == 0)
		r = auxcap_perf_writer_add_attr(w, &b, "beta", ids_b, 1);
	if (r == 0)
		r = auxcap_perf_writer_set_string(w, AUXCAP_PERF_FEAT_HOSTNAME, "host1");
	if (r == 0)
		r = auxcap_perf_writer_set_string(w, AUXCAP_PERF_FEAT_ARCH, "x86_64");
	if (r == 0)
		r = auxcap_perf_writer_set_cmdline(w, 4, argv);
	if (r == 0)
		r = auxcap_perf_writer_add_build_id(w, PERF_RECORD_MISC_USER, -1, bid, 20,
						    "/bin/x");
	if (r == 0)
		r = auxcap_perf_writer_write_time_conv(w, &tc);
	expect_add(e, AUXCAP_PERF_RECORD_TIME_CONV, 0);
	if (r == 0)
		r = auxcap_perf_writer_write_id_index(w, idx, 3);
	expect_add(e, AUXCAP_PERF_RECORD_ID_INDEX, 0);
	if (r == 0)
		r = auxcap_perf_writer_write_auxtrace_info(w, 1, priv, 3);
	expect_add(e, AUXCAP_PERF_RECORD_AUXTRACE_INFO, 0);
	if (r == 0)
		r = auxcap_perf_writer_write_finished_init(w);
	expect_add(e, AUXCAP_PERF_RECORD_FINISHED_INIT, 0);
	for (uint64_t i = 0; i < NR_ITEMS && r == 0; i++) {
		make_sample(rec, i);
		r = auxcap_perf_writer_write(w, rec);
		if (r < 0)
			break;
		samples++;
		expect_add(e, PERF_RECORD_SAMPLE, i);
		if (i % 10 == 3) {
			make_comm(rec, i);
			r = auxcap_perf_writer_write(w, rec);
			expect_add(e, PERF_RECORD_COMM, i);
		}
		if (r == 0 && i % 7 == 0) {
			struct auxcap_perf_auxtrace at = { i * 1000, i * 3, (uint32_t)(i % 2),
							   (uint32_t)-1, (uint32_t)(i % 2) };
			size_t l1 = 100 + i, l2 = (i % 3) * 13;

			for (size_t k = 0; k < l1 + l2; k++) {
				if (k < l1)
					aux1[k] = pattern(i, k);
				else
					aux2[k - l1] = pattern(i, k);
			}
			r = auxcap_perf_writer_write_auxtrace(w, &at, aux1, l1, aux2, l2);
			expect_add(e, AUXCAP_PERF_RECORD_AUXTRACE, i);
		}
		if (r == 0 && i == 150) {
			memset(&ae, 0, sizeof(ae));
			ae.type = 1;
			ae.code = 8;
			ae.cpu = 1;
			ae.pid = 100;
			ae.tid = 101;
			ae.ip = 0x1234;
			ae.time = 5555;
			snprintf(ae.msg, sizeof(ae.msg), "Lost trace data");
			r = auxcap_perf_writer_write_auxtrace_error(w, &ae);
			expect_add(e, AUXCAP_PERF_RECORD_AUXTRACE_ERROR, i);
		}
		if (r == 0 && i % 16 == 15) {
			r = auxcap_perf_writer_write_finished_round(w);
			expect_add(e, AUXCAP_PERF_RECORD_FINISHED_ROUND, i);
		}
	}
	if (ret_samples)
		*ret_samples = samples;
	return r;
}

static void check_sample(const struct auxcap_perf_event *ev, uint64_t seq)
{
	const struct auxcap_sample *s = &ev->rec.u.sample;

	assert_int_equal(s->id, id_of(seq));
	assert_int_equal(s->ip, 0x400000 + seq * 4);
	assert_int_equal(s->pid, 100);
	assert_int_equal(s->tid, 100 + seq % 5);
	assert_int_equal(s->time, 1000000 + seq * 10);
	assert_int_equal(s->cpu, seq % 2);
	assert_int_equal(s->period, seq);
	assert_non_null(ev->evsel);
	assert_int_equal(ev->evsel->ids[0], id_of(seq) == 20 ? 20 : 10);
	if (ev->evsel->name) /* absent when the features could not be written */
		assert_string_equal(ev->evsel->name, id_of(seq) == 20 ? "beta" : "alpha");
}

static void check_auxtrace(const struct auxcap_perf_event *ev, uint64_t seq)
{
	size_t len = 100 + seq + (seq % 3) * 13;
	const unsigned char *p = ev->u.auxtrace.data;

	assert_int_equal(ev->u.auxtrace.size, (len + 7) & ~(size_t)7);
	assert_int_equal(ev->u.auxtrace.offset, seq * 1000);
	assert_int_equal(ev->u.auxtrace.reference, seq * 3);
	assert_int_equal(ev->u.auxtrace.idx, seq % 2);
	assert_int_equal(ev->u.auxtrace.cpu, seq % 2);
	assert_int_equal(ev->u.auxtrace.tid, (uint32_t)-1);
	for (size_t k = 0; k < len; k++)
		assert_int_equal(p[k], pattern(seq, k));
	for (size_t k = len; k < ev->u.auxtrace.size; k++)
		assert_int_equal(p[k], 0);
}

/* Read everything and compare with @e; returns the number of records read. */
static size_t check_standard(struct auxcap_perf_reader *r, const struct expect *e, bool pipe)
{
	const struct auxcap_perf_features *f;
	struct auxcap_perf_event ev;
	size_t n = 0, nr_aux = 0;
	uint64_t aux_off[NR_ITEMS];
	int ret;

	while ((ret = auxcap_perf_reader_next(r, &ev)) > 0) {
		if (ev.rec.type == AUXCAP_PERF_RECORD_HEADER_ATTR ||
		    ev.rec.type == AUXCAP_PERF_RECORD_HEADER_FEATURE ||
		    ev.rec.type == AUXCAP_PERF_RECORD_HEADER_BUILD_ID)
			continue;
		assert_true(n < e->n);
		assert_int_equal(ev.rec.type, e->type[n]);
		switch (ev.rec.type) {
		case PERF_RECORD_SAMPLE:
			check_sample(&ev, e->seq[n]);
			break;
		case PERF_RECORD_COMM:
			assert_true(ev.rec.has_sample_id);
			assert_int_equal(ev.rec.sid.time, 1000000 + e->seq[n] * 10);
			assert_int_equal(ev.rec.sid.id, 10);
			assert_int_equal(ev.rec.u.comm.tid, 100 + e->seq[n] % 5);
			break;
		case AUXCAP_PERF_RECORD_AUXTRACE:
			check_auxtrace(&ev, e->seq[n]);
			aux_off[nr_aux++] = ev.offset;
			break;
		case AUXCAP_PERF_RECORD_TIME_CONV:
			assert_int_equal(ev.u.time_conv.time_mult, 500);
			assert_int_equal(ev.u.time_conv.time_zero, 123456);
			assert_int_equal(ev.u.time_conv.time_mask, 0xffff);
			assert_true(ev.u.time_conv.cap_user_time_zero);
			break;
		case AUXCAP_PERF_RECORD_AUXTRACE_INFO:
			assert_int_equal(ev.u.auxtrace_info.type, 1);
			assert_int_equal(ev.u.auxtrace_info.nr, 3);
			assert_int_equal(auxcap_get_u64(ev.u.auxtrace_info.priv, 1), 0x1234);
			break;
		case AUXCAP_PERF_RECORD_ID_INDEX:
			assert_int_equal(ev.u.id_index.nr, 3);
			assert_int_equal(auxcap_get_u64(ev.u.id_index.entries, 4), 11);
			break;
		case AUXCAP_PERF_RECORD_AUXTRACE_ERROR:
			assert_int_equal(ev.u.auxtrace_error.code, 8);
			assert_int_equal(ev.u.auxtrace_error.time, 5555);
			assert_string_equal(ev.u.auxtrace_error.msg, "Lost trace data");
			break;
		default:
			break;
		}
		n++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(n, e->n);

	assert_int_equal(auxcap_perf_reader_nr_evsels(r), 2);
	assert_ptr_equal(auxcap_perf_reader_find_id(r, 11), auxcap_perf_reader_evsel(r, 0));
	assert_ptr_equal(auxcap_perf_reader_find_id(r, 20), auxcap_perf_reader_evsel(r, 1));
	assert_null(auxcap_perf_reader_find_id(r, 12));
	assert_string_equal(auxcap_perf_reader_evsel(r, 0)->name, "alpha");
	assert_string_equal(auxcap_perf_reader_evsel(r, 1)->name, "beta");
	f = auxcap_perf_reader_features(r);
	assert_string_equal(f->hostname, "host1");
	assert_string_equal(f->arch, "x86_64");
	assert_int_equal(f->nr_cmdline, 4);
	assert_string_equal(f->cmdline[3], "alpha");
	assert_int_equal(f->nr_build_ids, 1);
	assert_string_equal(f->build_ids[0].filename, "/bin/x");
	assert_int_equal(f->build_ids[0].id[3], 0xef);
	assert_int_equal(f->build_ids[0].size, 20);
	if (!pipe) {
		/* SAMPLE_TIME (file mode only): first and last sample times, 1000000 + seq * 10 */
		assert_int_equal(f->sample_time_first, 1000000);
		assert_int_equal(f->sample_time_last, 1000000 + (NR_ITEMS - 1) * 10);
	}
	if (!pipe) {
		assert_int_equal(f->nr_auxtrace_index, nr_aux);
		for (size_t i = 0; i < nr_aux; i++) {
			assert_int_equal(f->auxtrace_index[i].offset, aux_off[i]);
			assert_int_equal(f->auxtrace_index[i].size, AUXCAP_PERF_AUXTRACE_SIZE);
		}
	}
	return n;
}

static struct auxcap_perf_reader *open_ok(const char *path)
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
		fail_msg("open %s: %d %s", path, ret, err);
	return r;
}

static void test_round_trip_file_mode(void **state)
{
	static struct expect e;
	struct auxcap_perf_writer *w;
	struct auxcap_perf_reader *r;
	const struct auxcap_perf_file_info *fi;
	char path[128];

	(void)state;
	memset(&e, 0, sizeof(e));
	tmp_path(path, sizeof(path), "std.data");
	assert_int_equal(auxcap_perf_writer_open(path, NULL, &w), 0);
	assert_int_equal(write_standard(w, &e, NULL), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);

	r = open_ok(path);
	fi = auxcap_perf_reader_info(r);
	assert_false(fi->pipe);
	assert_false(fi->recovered);
	assert_false(fi->features_lost);
	assert_int_equal(fi->attr_size, 144);
	assert_int_equal(fi->attrs_size, 2 * 144);
	assert_int_equal(auxcap_perf_reader_evsel(r, 0)->attr->size, 128);
	check_standard(r, &e, false);
	/* A second pass sees the same stream. */
	assert_int_equal(auxcap_perf_reader_rewind(r), 0);
	check_standard(r, &e, false);
	auxcap_perf_reader_close(r);
}

/* A child copies @path into a pipe; returns the read end. */
static int pipe_from_file(const char *path, pid_t *ret_pid)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char buf[4096];
		ssize_t n;
		int fd = open(path, O_RDONLY);

		close(p[0]);
		/* Small writes: the reader must cope with data arriving in pieces. */
		while (fd >= 0 && (n = read(fd, buf, 1000)) > 0)
			if (write(p[1], buf, (size_t)n) != n)
				_exit(1);
		_exit(0);
	}
	close(p[1]);
	*ret_pid = pid;
	return p[0];
}

static void test_round_trip_pipe_mode(void **state)
{
	static struct expect e;
	struct auxcap_perf_writer_opts wo;
	struct auxcap_perf_writer *w;
	struct auxcap_perf_reader *r;
	char path[128];
	pid_t pid;
	int fd, st;

	(void)state;
	memset(&e, 0, sizeof(e));
	memset(&wo, 0, sizeof(wo));
	wo.sz = sizeof(wo);
	wo.pipe = true;
	tmp_path(path, sizeof(path), "std.pipe");
	assert_int_equal(auxcap_perf_writer_open(path, &wo, &w), 0);
	assert_int_equal(write_standard(w, &e, NULL), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);

	/* The stream saved to a file (mapped). */
	r = open_ok(path);
	assert_true(auxcap_perf_reader_info(r)->pipe);
	check_standard(r, &e, true);
	assert_false(auxcap_perf_reader_info(r)->recovered);
	/* A second pass (decode reads a saved stream's build-ids ahead) sees the same stream,
	 * and its HEADER_BUILD_ID records once. */
	assert_int_equal(auxcap_perf_reader_rewind(r), 0);
	check_standard(r, &e, true);
	auxcap_perf_reader_close(r);

	/* Through a real pipe. */
	fd = pipe_from_file(path, &pid);
	assert_int_equal(auxcap_perf_reader_open_fd(fd, NULL, &r), 0);
	check_standard(r, &e, true);
	assert_int_equal(auxcap_perf_reader_rewind(r), -ESPIPE);
	auxcap_perf_reader_close(r);
	close(fd);
	assert_int_equal(waitpid(pid, &st, 0), pid);
}

static void test_writer_rejects_bad_use(void **state)
{
	struct auxcap_perf_writer *w;
	struct perf_event_attr a, b;
	unsigned char rec[64];
	struct perf_event_header h;
	struct auxcap_perf_id_index_entry bad_id = { 99, 0, 0, 0 };
	struct auxcap_perf_auxtrace at = { 0 };
	char path[128];
	uint64_t dup[] = { 5, 5 };
	uint64_t id30 = 30, id10 = 10;

	(void)state;
	tmp_path(path, sizeof(path), "bad.data");
	assert_int_equal(auxcap_perf_writer_open(path, NULL, &w), 0);
	make_sample(rec, 0);
	assert_int_equal(auxcap_perf_writer_write(w, rec), -ENODATA);
	make_attr(&a, 0);
	make_attr(&b, 1);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "a", dup, 2), -EINVAL);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "a", ids_a, 0), -EINVAL);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "a", ids_a, 2), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &b, "b", &id10, 1), -EINVAL);
	b.sample_type &= ~(uint64_t)PERF_SAMPLE_IDENTIFIER;
	assert_int_equal(auxcap_perf_writer_add_attr(w, &b, "b", &id30, 1), -EINVAL);
	b.sample_type |= PERF_SAMPLE_IDENTIFIER;
	b.sample_id_all = 0;
	assert_int_equal(auxcap_perf_writer_add_attr(w, &b, "b", &id30, 1), -EINVAL);
	assert_int_equal(auxcap_perf_writer_set_feature(w, AUXCAP_PERF_FEAT_AUXTRACE, "x", 1),
			 -EINVAL);
	assert_int_equal(auxcap_perf_writer_set_feature(w, 0, "x", 1), -EINVAL);
	assert_int_equal(auxcap_perf_writer_set_string(w, AUXCAP_PERF_FEAT_NRCPUS, "x"), -EINVAL);
	assert_int_equal(auxcap_perf_writer_write_id_index(w, &bad_id, 1), -EINVAL);

	h = (struct perf_event_header){ PERF_RECORD_SAMPLE, 0, 12 };
	memcpy(rec, &h, 8);
	assert_int_equal(auxcap_perf_writer_write(w, rec), -EINVAL);
	h = (struct perf_event_header){ AUXCAP_PERF_RECORD_AUXTRACE, 0, 48 };
	memcpy(rec, &h, 8);
	assert_int_equal(auxcap_perf_writer_write(w, rec), -EINVAL);
	h = (struct perf_event_header){ AUXCAP_PERF_RECORD_HEADER_MAX, 0, 16 };
	memcpy(rec, &h, 8);
	assert_int_equal(auxcap_perf_writer_write(w, rec), -EINVAL);
	h = (struct perf_event_header){ 0, 0, 16 };
	memcpy(rec, &h, 8);
	assert_int_equal(auxcap_perf_writer_write(w, rec), -EINVAL);
	assert_int_equal(auxcap_perf_writer_write_auxtrace(w, &at, NULL, 0, NULL, 0), -EINVAL);
	assert_int_equal(auxcap_perf_writer_write_auxtrace(w, &at, NULL, 8, NULL, 0), -EINVAL);

	make_sample(rec, 0);
	assert_int_equal(auxcap_perf_writer_write(w, rec), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &b, "b", &id30, 1), -EBUSY);
	assert_int_equal(auxcap_perf_writer_data_size(w), SAMPLE_SIZE);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
	assert_int_equal(auxcap_perf_writer_close(NULL), 0);
}

/* --- I/O faults ------------------------------------------------------------------------- */

/* A disk that fills up: only bytes that grow the file use up the budget. */
struct fault {
	uint64_t budget;    /* file size at which the disk is full, bytes */
	uint64_t written;   /* the file's high mark so far, bytes */
	unsigned int calls; /* writev calls */
	bool chop;	    /* return short writes and EINTR along the way */
};

static ssize_t fault_writev(void *ctx, int fd, const struct iovec *iov, int iovcnt, int64_t off)
{
	struct fault *f = ctx;
	struct iovec one;
	size_t want;
	ssize_t n;

	f->calls++;
	if (f->chop && f->calls % 3 == 0)
		return -EINTR;
	/* Write only (part of) the first buffer: a short write. */
	want = iov[0].iov_len;
	if (f->chop && want > 5)
		want = want / 2 + 1;
	/* Overwriting what exists needs no space; growing the file does. */
	if (off >= 0 && (uint64_t)off + want > f->written) {
		uint64_t end = (uint64_t)off + want;

		if (end > f->budget)
			end = f->budget > (uint64_t)off ? f->budget : (uint64_t)off;
		want = (size_t)(end - (uint64_t)off);
	}
	if (want == 0)
		return -ENOSPC;
	one.iov_base = iov[0].iov_base;
	one.iov_len = want;
	(void)iovcnt;
	n = off < 0 ? writev(fd, &one, 1) : pwritev(fd, &one, 1, (off_t)off);
	if (n < 0)
		return -errno;
	if (off >= 0 && (uint64_t)off + (uint64_t)n > f->written)
		f->written = (uint64_t)off + (uint64_t)n;
	return n;
}

static int fault_truncate(void *ctx, int fd, uint64_t len)
{
	(void)ctx;
	return ftruncate(fd, (off_t)len) < 0 ? -errno : 0;
}

static void test_short_writes_and_eintr_give_same_file(void **state)
{
	struct fault f = { UINT64_MAX, 0, 0, true };
	struct auxcap_perf_io io = { &f, fault_writev, fault_truncate };
	struct auxcap_perf_writer_opts wo;
	struct auxcap_perf_writer *w;
	char p1[128], p2[128], cmd[300];

	(void)state;
	memset(&wo, 0, sizeof(wo));
	wo.sz = sizeof(wo);
	tmp_path(p1, sizeof(p1), "plain.data");
	tmp_path(p2, sizeof(p2), "chopped.data");
	assert_int_equal(auxcap_perf_writer_open(p1, &wo, &w), 0);
	assert_int_equal(write_standard(w, NULL, NULL), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
	wo.io = &io;
	assert_int_equal(auxcap_perf_writer_open(p2, &wo, &w), 0);
	assert_int_equal(write_standard(w, NULL, NULL), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
	assert_true(f.calls > 100);
	snprintf(cmd, sizeof(cmd), "cmp -s %s %s", p1, p2);
	assert_int_equal(system(cmd), 0);
}

/* Read a file that must hold a prefix of the standard stream; returns the samples in it. */
static int count_prefix_samples(const char *path)
{
	struct auxcap_perf_reader *r = open_ok(path);
	struct auxcap_perf_event ev;
	uint64_t next = 0;
	int ret;

	while ((ret = auxcap_perf_reader_next(r, &ev)) > 0) {
		if (ev.rec.type == PERF_RECORD_SAMPLE) {
			check_sample(&ev, next);
			next++;
		}
		if (ev.rec.type == AUXCAP_PERF_RECORD_AUXTRACE)
			assert_int_equal(ev.u.auxtrace.offset % 7000, 0);
	}
	assert_int_equal(ret, 0);
	auxcap_perf_reader_close(r);
	return (int)next;
}

static void test_enospc_leaves_readable_file(void **state)
{
	char path[128];
	int failures = 0;

	(void)state;
	tmp_path(path, sizeof(path), "enospc.data");
	for (uint64_t budget = 100; budget < 40000; budget = budget * 3 / 2 + 77) {
		struct fault f = { budget, 0, 0, budget % 2 == 0 };
		struct auxcap_perf_io io = { &f, fault_writev, fault_truncate };
		struct auxcap_perf_writer_opts wo;
		struct auxcap_perf_writer *w;
		unsigned char rec[SAMPLE_SIZE];
		struct stat st;
		int samples = 0, ret;

		memset(&wo, 0, sizeof(wo));
		wo.sz = sizeof(wo);
		wo.io = &io;
		wo.header_update_bytes = 1000;
		assert_int_equal(auxcap_perf_writer_open(path, &wo, &w), 0);
		ret = write_standard(w, NULL, &samples);
		if (ret == 0) {
			/* The records fit: the feature-section case is tested below. */
			assert_int_equal(samples, NR_ITEMS);
			(void)auxcap_perf_writer_close(w);
			break;
		}
		assert_int_equal(ret, -ENOSPC);
		failures++;
		/* The error sticks. */
		make_sample(rec, 0);
		assert_int_equal(auxcap_perf_writer_write(w, rec), -ENOSPC);
		assert_int_equal(auxcap_perf_writer_write_finished_round(w), -ENOSPC);
		assert_int_equal(auxcap_perf_writer_close(w), -ENOSPC);
		assert_int_equal(stat(path, &st), 0);
		if (st.st_size < AUXCAP_PERF_HEADER_SIZE)
			continue; /* not even the header fit: nothing to read */
		assert_true(count_prefix_samples(path) <= samples);
	}
	assert_true(failures >= 8); /* the disk filled up in the records, many times */
}

/* --- SIGKILL ---------------------------------------------------------------------------- */

static void kill_writer_and_check(uint64_t header_update_bytes, bool expect_header_size)
{
	struct auxcap_perf_writer_opts wo;
	const struct auxcap_perf_file_info *fi;
	struct auxcap_perf_reader *r;
	struct stat st;
	char path[128];
	int samples, status;
	uint64_t end;
	pid_t pid;

	tmp_path(path, sizeof(path), "killed.data");
	unlink(path);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct auxcap_perf_writer *w;
		struct perf_event_attr a;
		unsigned char rec[SAMPLE_SIZE];
		uint64_t id = 10;

		memset(&wo, 0, sizeof(wo));
		wo.sz = sizeof(wo);
		wo.header_update_bytes = header_update_bytes;
		make_attr(&a, PERF_COUNT_SW_CPU_CLOCK);
		if (auxcap_perf_writer_open(path, &wo, &w) < 0 ||
		    auxcap_perf_writer_add_attr(w, &a, "alpha", &id, 1) < 0)
			_exit(1);
		for (uint64_t i = 0;; i++) {
			make_sample(rec, i * 3); /* id 10 every time */
			if (auxcap_perf_writer_write(w, rec) < 0)
				_exit(1);
			if (i % 50 == 49 && auxcap_perf_writer_write_finished_round(w) < 0)
				_exit(1);
		}
	}
	/* Kill it somewhere in the middle of writing. */
	for (;;) {
		if (stat(path, &st) == 0 && st.st_size > 3 * 1024 * 1024)
			break;
		assert_int_equal(waitpid(pid, &status, WNOHANG), 0); /* still writing */
		usleep(1000);
	}
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));

	r = open_ok(path);
	fi = auxcap_perf_reader_info(r);
	assert_int_equal(stat(path, &st), 0);
	/*
	 * Recovered, unless the kill landed right after a header refresh that covered every
	 * byte: then the file is a complete perf.data without features, and reads as one.
	 */
	if (!fi->recovered) {
		const struct auxcap_perf_features *f = auxcap_perf_reader_features(r);

		assert_true(expect_header_size);
		assert_int_equal(fi->data_offset + fi->data_size, (uint64_t)st.st_size);
		assert_true(!f->present[0] && !f->present[1] && !f->present[2] && !f->present[3]);
	}
	if (expect_header_size)
		assert_true(fi->data_size > 0);
	else
		assert_int_equal(fi->data_size, 0);
	samples = 0;
	for (;;) {
		struct auxcap_perf_event ev;
		int ret = auxcap_perf_reader_next(r, &ev);

		assert_true(ret >= 0);
		if (ret == 0)
			break;
		if (ev.rec.type == PERF_RECORD_SAMPLE) {
			assert_int_equal(ev.rec.u.sample.ip, 0x400000 + (uint64_t)samples * 12);
			assert_int_equal(ev.rec.u.sample.period, (uint64_t)samples * 3);
			samples++;
		}
	}
	/* Everything on disk up to the last whole record was read (a file read as complete:
	 * its data section, which ends the file as checked above). */
	end = fi->recovered ? fi->recovered_end : fi->data_offset + fi->data_size;
	assert_true(end <= (uint64_t)st.st_size);
	assert_true((uint64_t)st.st_size - end < SAMPLE_SIZE);
	assert_true(samples > 1000);
	auxcap_perf_reader_close(r);
}

static void test_sigkill_mid_capture_recovers_with_header_updates(void **state)
{
	(void)state;
	kill_writer_and_check(64 * 1024, true);
}

static void test_sigkill_mid_capture_recovers_without_header_updates(void **state)
{
	(void)state;
	kill_writer_and_check(UINT64_MAX, false);
}

/* --- truncated, corrupted, fuzzed ------------------------------------------------------- */

struct blob {
	unsigned char *p;
	size_t len;
};

static void load(const char *path, struct blob *b)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	b->len = (size_t)st.st_size;
	b->p = malloc(b->len);
	assert_non_null(b->p);
	assert_int_equal(read(fd, b->p, b->len), (ssize_t)b->len);
	close(fd);
}

enum outcome { OUT_OK, OUT_RECOVERED, OUT_OPEN_ERR, OUT_READ_ERR };

/* Open @len bytes of @p as a file and read it all; never crashes, says how it went. */
static enum outcome try_read(const unsigned char *p, size_t len, int *ret_err, size_t *ret_n)
{
	struct auxcap_perf_reader_opts o;
	struct auxcap_perf_reader *r;
	struct auxcap_perf_event ev;
	char err[256] = "";
	enum outcome out;
	size_t n = 0;
	int fd, ret;

	fd = memfd_create("pd", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, len), (ssize_t)len);
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.errbuf = err;
	o.errbuf_size = sizeof(err);
	ret = auxcap_perf_reader_open_fd(fd, &o, &r);
	if (ret < 0) {
		close(fd);
		assert_true(ret == -EBADMSG || ret == -EPROTONOSUPPORT);
		assert_true(err[0] != '\0');
		*ret_err = ret;
		*ret_n = 0;
		return OUT_OPEN_ERR;
	}
	while ((ret = auxcap_perf_reader_next(r, &ev)) > 0)
		n++;
	if (ret < 0) {
		assert_int_equal(ret, -EBADMSG);
		assert_non_null(strstr(auxcap_perf_reader_error(r), "offset"));
		out = OUT_READ_ERR;
	} else {
		out = auxcap_perf_reader_info(r)->recovered ? OUT_RECOVERED : OUT_OK;
	}
	*ret_err = ret;
	*ret_n = n;
	auxcap_perf_reader_close(r);
	close(fd);
	return out;
}

static void standard_blob(struct blob *b, const char *name)
{
	struct auxcap_perf_writer *w;
	char path[128];

	tmp_path(path, sizeof(path), name);
	assert_int_equal(auxcap_perf_writer_open(path, NULL, &w), 0);
	assert_int_equal(write_standard(w, NULL, NULL), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
	load(path, b);
}

static void test_enospc_while_writing_features_keeps_all_records(void **state)
{
	struct blob b;
	uint64_t h[13];
	char path[128];

	(void)state;
	standard_blob(&b, "feat-full.data");
	memcpy(h, b.p, sizeof(h));
	free(b.p);
	tmp_path(path, sizeof(path), "feat-enospc.data");
	/* Room for the records and a little more, not for the feature sections. */
	for (uint64_t extra = 0; extra < 200; extra += 37) {
		struct fault f = { h[5] + h[6] + extra, 0, 0, false };
		struct auxcap_perf_io io = { &f, fault_writev, fault_truncate };
		struct auxcap_perf_writer_opts wo;
		struct auxcap_perf_writer *w;
		struct auxcap_perf_reader *r;
		struct stat st;

		memset(&wo, 0, sizeof(wo));
		wo.sz = sizeof(wo);
		wo.io = &io;
		assert_int_equal(auxcap_perf_writer_open(path, &wo, &w), 0);
		assert_int_equal(write_standard(w, NULL, NULL), 0);
		assert_int_equal(auxcap_perf_writer_close(w), -ENOSPC);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal((uint64_t)st.st_size, h[5] + h[6]); /* cut after the last record */
		assert_int_equal(count_prefix_samples(path), NR_ITEMS);
		r = open_ok(path);
		assert_int_equal(auxcap_perf_reader_info(r)->data_size, h[6]);
		assert_int_equal(auxcap_perf_reader_features(r)->present[0], 0);
		auxcap_perf_reader_close(r);
	}
}

static void test_truncated_files_never_read_as_complete(void **state)
{
	struct blob b;
	struct auxcap_perf_reader *r;
	struct auxcap_perf_event ev;
	uint64_t cuts[2048];
	size_t nr_cuts = 0, full, n;
	char path[128];
	int err;

	(void)state;
	standard_blob(&b, "trunc.data");
	assert_int_equal(try_read(b.p, b.len, &err, &full), OUT_OK);

	/* Every record boundary, one byte after it, and one byte before the next. */
	tmp_path(path, sizeof(path), "trunc.data");
	r = open_ok(path);
	while (auxcap_perf_reader_next(r, &ev) > 0 && nr_cuts + 3 < 2048) {
		cuts[nr_cuts++] = ev.offset;
		cuts[nr_cuts++] = ev.offset + 1;
		cuts[nr_cuts++] = ev.offset + ev.rec.size - 1;
	}
	auxcap_perf_reader_close(r);
	srand(1234);
	for (int i = 0; i < 300 && nr_cuts < 2048; i++)
		cuts[nr_cuts++] = (uint64_t)rand() % b.len;

	for (size_t i = 0; i < nr_cuts; i++) {
		enum outcome o = try_read(b.p, cuts[i], &err, &n);

		/* A cut file is an error or says it was recovered, never "complete". */
		assert_true(o != OUT_OK);
		assert_true(n <= full);
	}
	free(b.p);
}

static void expect_open_error(struct blob *b, size_t slot, uint64_t value, int want)
{
	unsigned char *p = malloc(b->len);
	size_t n;
	int err;

	memcpy(p, b->p, b->len);
	memcpy(p + slot * 8, &value, 8);
	assert_int_equal(try_read(p, b->len, &err, &n), OUT_OPEN_ERR);
	assert_int_equal(err, want);
	free(p);
}

static void test_corrupt_header_fields(void **state)
{
	static const uint64_t values[] = { 0,	       1,	   7,	       8,
					   64,	       104,	   144,	       4096,
					   1ULL << 31, 1ULL << 62, UINT64_MAX, UINT64_MAX - 7 };
	struct blob b;
	uint64_t h[13];
	size_t n;
	int err;

	(void)state;
	standard_blob(&b, "corrupt.data");
	memcpy(h, b.p, sizeof(h));

	expect_open_error(&b, 0, AUXCAP_PERF_MAGIC_SWAPPED, -EPROTONOSUPPORT);
	expect_open_error(&b, 0, 0x1122334455667788ULL, -EBADMSG);
	expect_open_error(&b, 1, 100, -EBADMSG); /* header size */
	expect_open_error(&b, 2, 0, -EBADMSG);	 /* attr_size */
	expect_open_error(&b, 2, UINT64_MAX, -EBADMSG);
	expect_open_error(&b, 3, UINT64_MAX - 7, -EBADMSG); /* attrs offset */
	expect_open_error(&b, 3, b.len, -EBADMSG);
	expect_open_error(&b, 4, 0, -EBADMSG); /* attrs size: no events */
	expect_open_error(&b, 4, UINT64_MAX, -EBADMSG);
	expect_open_error(&b, 5, b.len + 8, -EBADMSG); /* data offset */
	expect_open_error(&b, 5, UINT64_MAX - 7, -EBADMSG);

	/* Every field with every value: an answer, never a crash. */
	for (size_t slot = 0; slot < 13; slot++) {
		for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
			unsigned char *p = malloc(b.len);

			memcpy(p, b.p, b.len);
			memcpy(p + slot * 8, &values[v], 8);
			(void)try_read(p, b.len, &err, &n);
			free(p);
		}
	}

	/* Feature descriptors: offsets and sizes out of the file. */
	for (size_t d = 0; d < 8; d++) {
		for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
			unsigned char *p = malloc(b.len);
			uint64_t table = h[5] + h[6];
			enum outcome o;

			memcpy(p, b.p, b.len);
			memcpy(p + table + d * 8, &values[v], 8);
			o = try_read(p, b.len, &err, &n);
			if (values[v] >= b.len && d % 2 == 0)
				assert_true(o != OUT_OK); /* offset out of the file */
			free(p);
		}
	}
	free(b.p);
}

static void test_fuzzed_files_do_not_crash(void **state)
{
	struct blob b, pb;
	size_t n;
	int err;
	unsigned int counts[4] = { 0 };

	(void)state;
	standard_blob(&b, "fuzz.data");
	srand(42);
	for (int i = 0; i < 3000; i++) {
		unsigned char *p = malloc(b.len);
		int flips = 1 + rand() % 8;

		memcpy(p, b.p, b.len);
		for (int k = 0; k < flips; k++) {
			/* Bias towards the header, attrs and the first records. */
			size_t at = (size_t)rand() % (k % 2 ? b.len : 1024);

			p[at] ^= (unsigned char)(1 + rand() % 255);
		}
		counts[try_read(p, b.len, &err, &n)]++;
		free(p);
	}
	/* Some flips land in payloads and leave a valid file; many must be caught. */
	assert_true(counts[OUT_OPEN_ERR] + counts[OUT_READ_ERR] > 100);
	(void)pb;
	free(b.p);
}

/* Feed @len bytes through a real pipe to the streaming reader; returns records or an error. */
static int read_through_pipe(const unsigned char *p, size_t len, size_t *ret_n, bool *ret_rec)
{
	struct auxcap_perf_reader_opts o;
	struct auxcap_perf_reader *r;
	struct auxcap_perf_event ev;
	char err[256];
	int fd[2], ret;
	size_t n = 0;

	assert_int_equal(pipe(fd), 0);
	assert_true(fcntl(fd[1], F_SETPIPE_SZ, 1 << 20) >= (int)len);
	assert_int_equal(write(fd[1], p, len), (ssize_t)len);
	close(fd[1]);
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.errbuf = err;
	o.errbuf_size = sizeof(err);
	o.max_payload = 1 << 16;
	ret = auxcap_perf_reader_open_fd(fd[0], &o, &r);
	if (ret < 0) {
		close(fd[0]);
		return ret;
	}
	while ((ret = auxcap_perf_reader_next(r, &ev)) > 0)
		n++;
	*ret_n = n;
	*ret_rec = auxcap_perf_reader_info(r)->recovered;
	if (ret < 0)
		assert_non_null(strstr(auxcap_perf_reader_error(r), "offset"));
	auxcap_perf_reader_close(r);
	close(fd[0]);
	return ret;
}

static void test_fuzzed_and_cut_pipe_streams(void **state)
{
	struct auxcap_perf_writer_opts wo;
	struct auxcap_perf_writer *w;
	struct blob b;
	char path[128];
	size_t full, n;
	bool rec;
	int errors = 0;

	(void)state;
	memset(&wo, 0, sizeof(wo));
	wo.sz = sizeof(wo);
	wo.pipe = true;
	tmp_path(path, sizeof(path), "fuzz.pipe");
	assert_int_equal(auxcap_perf_writer_open(path, &wo, &w), 0);
	assert_int_equal(write_standard(w, NULL, NULL), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
	load(path, &b);
	assert_int_equal(read_through_pipe(b.p, b.len, &full, &rec), 0);
	assert_false(rec);

	srand(7);
	for (int i = 0; i < 400; i++) {
		size_t cut = 16 + (size_t)rand() % (b.len - 16);
		int ret = read_through_pipe(b.p, cut, &n, &rec);

		/* A cut stream ends early, flagged unless it fell between two records. */
		assert_true(ret == 0 || ret == -EBADMSG);
		assert_true(n <= full);
	}
	for (int i = 0; i < 1500; i++) {
		unsigned char *p = malloc(b.len);
		int flips = 1 + rand() % 6, ret;

		memcpy(p, b.p, b.len);
		for (int k = 0; k < flips; k++)
			p[(size_t)rand() % (k % 2 ? b.len : 2048)] ^=
				(unsigned char)(1 + rand() % 255);
		ret = read_through_pipe(p, b.len, &n, &rec);
		assert_true(ret == 0 || ret == -EBADMSG);
		errors += ret < 0;
		free(p);
	}
	assert_true(errors > 50);
	free(b.p);
}

static void test_other_endian_and_empty_inputs(void **state)
{
	unsigned char buf[128];
	uint64_t magic = AUXCAP_PERF_MAGIC_SWAPPED;
	struct auxcap_perf_reader *r;
	struct auxcap_perf_reader_opts o;
	char err[256];
	size_t n;
	int e;

	(void)state;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &magic, 8);
	assert_int_equal(try_read(buf, sizeof(buf), &e, &n), OUT_OPEN_ERR);
	assert_int_equal(e, -EPROTONOSUPPORT);
	assert_int_equal(try_read(buf, 0, &e, &n), OUT_OPEN_ERR);
	assert_int_equal(e, -EBADMSG);
	memcpy(buf, "PERFFILE", 8);
	assert_int_equal(try_read(buf, sizeof(buf), &e, &n), OUT_OPEN_ERR);
	assert_int_equal(e, -EPROTONOSUPPORT);

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.errbuf = err;
	o.errbuf_size = sizeof(err);
	assert_int_equal(auxcap_perf_reader_open("/nonexistent/x.data", &o, &r), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/x.data"));
}

/* AUXTRACE record offsets in stream order. */
static size_t stream_aux_offsets(struct auxcap_perf_reader *r, uint64_t *off, size_t max)
{
	struct auxcap_perf_event ev;
	size_t n = 0;

	while (auxcap_perf_reader_next(r, &ev) > 0)
		if (ev.rec.type == AUXCAP_PERF_RECORD_AUXTRACE) {
			assert_true(n < max);
			off[n++] = ev.offset;
		}
	return n;
}

static void check_index_matches(const char *path, bool want_feature)
{
	const struct auxcap_perf_auxtrace_index_entry *e;
	struct auxcap_perf_reader *r = open_ok(path);
	uint64_t off[NR_ITEMS];
	size_t nr, n;

	assert_int_equal(auxcap_perf_reader_features(r)->nr_auxtrace_index > 0, want_feature);
	assert_int_equal(auxcap_perf_reader_auxtrace_index(r, &e, &nr), 0);
	n = stream_aux_offsets(r, off, NR_ITEMS);
	assert_int_equal(nr, n);
	assert_true(n > 10);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(e[i].offset, off[i]);
		assert_int_equal(e[i].size, AUXCAP_PERF_AUXTRACE_SIZE);
	}
	auxcap_perf_reader_close(r);
}

static void test_auxtrace_index_from_feature_or_scan(void **state)
{
	struct auxcap_perf_writer_opts wo;
	struct auxcap_perf_writer *w;
	const struct auxcap_perf_auxtrace_index_entry *e;
	struct auxcap_perf_reader *r;
	struct blob b;
	char path[128];
	uint64_t h[13], first;
	size_t nr, n;
	int fd, err;

	(void)state;
	/* From the feature. */
	tmp_path(path, sizeof(path), "idx.data");
	assert_int_equal(auxcap_perf_writer_open(path, NULL, &w), 0);
	assert_int_equal(write_standard(w, NULL, NULL), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
	check_index_matches(path, true);

	/* Scanned: a pipe-format file has no index feature. */
	memset(&wo, 0, sizeof(wo));
	wo.sz = sizeof(wo);
	wo.pipe = true;
	tmp_path(path, sizeof(path), "idx.pipe");
	assert_int_equal(auxcap_perf_writer_open(path, &wo, &w), 0);
	assert_int_equal(write_standard(w, NULL, NULL), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
	check_index_matches(path, false);

	/* Read from a real pipe: no random access. */
	{
		pid_t pid;
		int pfd = pipe_from_file(path, &pid), st;

		assert_int_equal(auxcap_perf_reader_open_fd(pfd, NULL, &r), 0);
		assert_int_equal(auxcap_perf_reader_auxtrace_index(r, &e, &nr), -ESPIPE);
		auxcap_perf_reader_close(r);
		close(pfd);
		waitpid(pid, &st, 0);
	}

	/* An index entry that points at another record is refused. */
	standard_blob(&b, "idx2.data");
	memcpy(h, b.p, sizeof(h));
	fd = memfd_create("idx", MFD_CLOEXEC);
	assert_true(fd >= 0);
	{
		/* The AUXTRACE feature is bit 18: find its descriptor in the table. */
		uint64_t table = h[5] + h[6], d[2];
		unsigned int k = 0;

		for (unsigned int f = 1; f < AUXCAP_PERF_FEAT_AUXTRACE; f++)
			k += (h[9] >> f) & 1;
		memcpy(d, b.p + table + k * 16, 16);
		memcpy(&first, b.p + d[0] + 8, 8); /* entry 0 offset */
		first -= 8;			   /* now inside the previous record */
		memcpy(b.p + d[0] + 8, &first, 8);
	}
	assert_int_equal(write(fd, b.p, b.len), (ssize_t)b.len);
	assert_int_equal(auxcap_perf_reader_open_fd(fd, NULL, &r), 0);
	err = auxcap_perf_reader_auxtrace_index(r, &e, &n);
	assert_int_equal(err, -EBADMSG);
	assert_non_null(strstr(auxcap_perf_reader_error(r), "AUXTRACE index entry 0"));
	auxcap_perf_reader_close(r);
	close(fd);
	free(b.p);
}

/* Dropped payload pages read back from the file unchanged; ranges outside are refused. */
static void test_reader_drop_keeps_payloads_readable(void **state)
{
	struct perf_event_attr a;
	struct auxcap_perf_auxtrace at = { .idx = 0, .tid = 1, .cpu = (uint32_t)-1 };
	struct auxcap_perf_writer *w;
	struct auxcap_perf_reader *r;
	struct auxcap_perf_event ev;
	unsigned char *aux = malloc(5 * 4096 + 123), copy[5 * 4096 + 123];
	uint64_t id = 7;
	char path[128];
	bool seen = false;

	(void)state;
	assert_non_null(aux);
	for (size_t i = 0; i < sizeof(copy); i++)
		aux[i] = (unsigned char)(i * 7 + 1);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.sample_type = PERF_SAMPLE_IDENTIFIER;
	a.sample_id_all = 1;
	tmp_path(path, sizeof(path), "drop.data");
	assert_int_equal(auxcap_perf_writer_open(path, NULL, &w), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "x", &id, 1), 0);
	assert_int_equal(auxcap_perf_writer_write_auxtrace(w, &at, aux, sizeof(copy), NULL, 0), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);

	assert_int_equal(auxcap_perf_reader_open(path, NULL, &r), 0);
	while (auxcap_perf_reader_next(r, &ev) == 1) {
		if (ev.rec.type != AUXCAP_PERF_RECORD_AUXTRACE)
			continue;
		seen = true;
		memcpy(copy, ev.u.auxtrace.data, sizeof(copy));
		assert_int_equal(auxcap_perf_reader_drop(r, ev.u.auxtrace.data, sizeof(copy)), 0);
		assert_memory_equal(ev.u.auxtrace.data, aux, sizeof(copy));
		assert_int_equal(auxcap_perf_reader_drop(r, ev.u.auxtrace.data, 0), 0);
		assert_int_equal(auxcap_perf_reader_drop(r, copy, sizeof(copy)), -EINVAL);
		assert_int_equal(auxcap_perf_reader_drop(NULL, copy, 1), -EINVAL);
	}
	assert_true(seen);
	auxcap_perf_reader_close(r);
	unlink(path);
	free(aux);
}

static void test_empty_capture_reads_as_final(void **state)
{
	struct auxcap_perf_writer *w;
	struct auxcap_perf_reader *r;
	struct auxcap_perf_event ev;
	struct perf_event_attr a;
	char path[128];

	(void)state;
	tmp_path(path, sizeof(path), "empty.data");
	make_attr(&a, 0);
	assert_int_equal(auxcap_perf_writer_open(path, NULL, &w), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "alpha", ids_a, 2), 0);
	assert_int_equal(auxcap_perf_writer_set_string(w, AUXCAP_PERF_FEAT_HOSTNAME, "h"), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
	r = open_ok(path);
	assert_int_equal(auxcap_perf_reader_info(r)->data_size, 0);
	assert_false(auxcap_perf_reader_info(r)->recovered);
	assert_string_equal(auxcap_perf_reader_features(r)->hostname, "h");
	assert_string_equal(auxcap_perf_reader_evsel(r, 0)->name, "alpha");
	assert_int_equal(auxcap_perf_reader_next(r, &ev), 0);
	auxcap_perf_reader_close(r);
}

static void test_clock_features(void **state)
{
	const struct auxcap_perf_features *f;
	struct auxcap_perf_writer *w;
	struct auxcap_perf_reader *r;
	struct perf_event_attr a;
	struct timespec now;
	char path[128];

	(void)state;
	tmp_path(path, sizeof(path), "clock.data");
	make_attr(&a, 0);
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC_RAW;
	assert_int_equal(auxcap_perf_writer_open(path, NULL, &w), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "alpha", ids_a, 2), 0);
	assert_int_equal(auxcap_perf_writer_set_clock(w, -12345), -EINVAL);
	assert_int_equal(auxcap_perf_writer_set_clock(w, CLOCK_MONOTONIC_RAW), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
	clock_gettime(CLOCK_MONOTONIC_RAW, &now);
	r = open_ok(path);
	f = auxcap_perf_reader_features(r);
	assert_true(f->has_clock_data);
	assert_int_equal(f->clockid, CLOCK_MONOTONIC_RAW);
	assert_true(f->clockid_res_ns > 0 && f->clockid_res_ns < 1000000);
	assert_true(f->clock_clockid_ns <= (uint64_t)now.tv_sec * 1000000000ULL + now.tv_nsec);
	assert_true(f->clock_tod_ns > 1500000000ULL * 1000000000ULL); /* after 2017 */
	auxcap_perf_reader_close(r);
}

static void test_sample_id_encode_round_trips(void **state)
{
	struct perf_event_attr a;
	struct auxcap_sample_layout l;
	struct auxcap_sample_id sid = { 0 };
	struct auxcap_record rec;
	unsigned char buf[128];
	struct perf_event_header h = { PERF_RECORD_LOST_SAMPLES, 0, 0 };
	uint64_t lost = 77;
	size_t n;

	(void)state;
	make_attr(&a, 0);
	a.sample_type |= PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID;
	auxcap_sample_layout_from_attr(&a, &l);
	sid.pid = 1;
	sid.tid = 2;
	sid.time = 3;
	sid.id = 4;
	sid.stream_id = 5;
	sid.cpu = 6;
	n = auxcap_sample_id_encode(&l, &sid, buf + 16);
	assert_int_equal(n, auxcap_sample_id_size(&l));
	h.size = (uint16_t)(16 + n);
	memcpy(buf, &h, 8);
	memcpy(buf + 8, &lost, 8);
	assert_int_equal(auxcap_record_parse(&l, buf, h.size, &rec), 0);
	assert_int_equal(rec.u.lost_samples.lost, 77);
	assert_int_equal(rec.sid.pid, 1);
	assert_int_equal(rec.sid.tid, 2);
	assert_int_equal(rec.sid.time, 3);
	assert_int_equal(rec.sid.id, 4);
	assert_int_equal(rec.sid.stream_id, 5);
	assert_int_equal(rec.sid.cpu, 6);
	a.sample_id_all = 0;
	auxcap_sample_layout_from_attr(&a, &l);
	assert_int_equal(auxcap_sample_id_encode(&l, &sid, buf), 0);
}

/* auxcap_sample_time_offset(): where the parser finds the time, for every mix of the fields
 * before it; 0 without PERF_SAMPLE_TIME. */
static void test_sample_time_offset(void **state)
{
	(void)state;
	for (unsigned int m = 0; m < 8; m++) {
		struct auxcap_sample_layout l = { 0 };
		struct auxcap_record rec;
		unsigned char buf[64];
		struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 0 };
		uint64_t v, time = 0x123456789ull, period = 4000;
		size_t off = 8;

		l.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
		if (m & 1) {
			l.sample_type |= PERF_SAMPLE_IDENTIFIER;
			v = 42;
			memcpy(buf + off, &v, 8);
			off += 8;
		}
		if (m & 2) {
			l.sample_type |= PERF_SAMPLE_IP;
			v = 0x401000;
			memcpy(buf + off, &v, 8);
			off += 8;
		}
		if (m & 4) {
			l.sample_type |= PERF_SAMPLE_TID;
			v = 7ull << 32 | 7;
			memcpy(buf + off, &v, 8);
			off += 8;
		}
		memcpy(buf + off, &time, 8);
		memcpy(buf + off + 8, &period, 8);
		h.size = (uint16_t)(off + 16);
		memcpy(buf, &h, 8);
		assert_int_equal(auxcap_record_parse(&l, buf, h.size, &rec), 0);
		assert_int_equal(rec.u.sample.time, time);
		assert_int_equal(auxcap_sample_time_offset(&l), off);
		memcpy(&v, buf + auxcap_sample_time_offset(&l), 8);
		assert_int_equal(v, time);
		l.sample_type &= ~(uint64_t)PERF_SAMPLE_TIME;
		assert_int_equal(auxcap_sample_time_offset(&l), 0);
	}
}

/* The AUXCAP_SNAPSHOTS feature: read back as written, laid out as documented, never in pipes. */
static void test_snapshot_feature(void **state)
{
	static const struct auxcap_perf_snapshot snaps[3] = {
		{ 1000, 1500, 4096, 4, 2, 77, 1, 250 }, /* a call of 250 ns ended at 1000 */
		{ 2000, 2100, 8192, 1, 0, (uint32_t)-1, (uint32_t)-1, 0 },
		{ 3000, 3333, 9000, 5, 0, (uint32_t)-1, (uint32_t)-1, 0 },
	};
	const struct auxcap_perf_features *f;
	struct auxcap_perf_writer *w;
	struct auxcap_perf_reader *r;
	struct auxcap_perf_writer_opts po;
	struct perf_event_attr a;
	const unsigned char *p;
	uint32_t u32[2];
	uint64_t u64;
	size_t len;
	char path[128];
	int fd;

	(void)state;
	tmp_path(path, sizeof(path), "snaps.data");
	make_attr(&a, 0);
	assert_int_equal(auxcap_perf_writer_open(path, NULL, &w), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "alpha", ids_a, 2), 0);
	assert_int_equal(auxcap_perf_writer_set_string(w, AUXCAP_PERF_FEAT_HOSTNAME, "h"), 0);
	assert_int_equal(auxcap_perf_writer_add_snapshot(w, NULL), -EINVAL);
	for (int i = 0; i < 3; i++)
		assert_int_equal(auxcap_perf_writer_add_snapshot(w, &snaps[i]), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);

	r = open_ok(path);
	f = auxcap_perf_reader_features(r);
	assert_string_equal(f->hostname, "h"); /* perf's features still where perf looks */
	assert_true(f->present[3] & (1ULL << 63));
	assert_int_equal(f->nr_snapshots, 3);
	assert_memory_equal(f->snapshots, snaps, sizeof(snaps));
	assert_string_equal(auxcap_perf_feat_name(AUXCAP_PERF_FEAT_AUXCAP_SNAPSHOTS),
			    "auxcap_snapshots");
	/* The bytes, as the header comment documents them. */
	assert_int_equal(auxcap_perf_reader_feature_raw(r, 255, (const void **)&p, &len), 0);
	assert_int_equal(len, 16 + 3 * 48);
	memcpy(u32, p, 8);
	memcpy(&u64, p + 8, 8);
	assert_int_equal(u32[0], 1);
	assert_int_equal(u32[1], 48);
	assert_int_equal(u64, 3);
	memcpy(&u64, p + 16 + 48 + 8, 8); /* entry 1, frozen_ns */
	assert_int_equal(u64, 2100);
	memcpy(u32, p + 16 + 24, 8); /* entry 0, source and coalesced */
	assert_int_equal(u32[0], 4);
	assert_int_equal(u32[1], 2);
	memcpy(&u64, p + 16 + 40, 8); /* entry 0, call_ns */
	assert_int_equal(u64, 250);
	auxcap_perf_reader_close(r);

	/* A table of the first entry size (40 bytes, no call_ns) still reads. */
	{
		unsigned char old[16 + 40];
		const uint32_t hdr[2] = { 1, 40 };
		const uint64_t one = 1;
		char p40[128];

		memcpy(old, hdr, 8);
		memcpy(old + 8, &one, 8);
		memcpy(old + 16, &snaps[0], 40); /* (the first 40 bytes: the fields in order) */
		tmp_path(p40, sizeof(p40), "snaps40.data");
		assert_int_equal(auxcap_perf_writer_open(p40, NULL, &w), 0);
		assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "alpha", ids_a, 2), 0);
		assert_int_equal(auxcap_perf_writer_set_feature(w, AUXCAP_PERF_FEAT_AUXCAP_SNAPSHOTS,
								old, sizeof(old)),
				 0);
		assert_int_equal(auxcap_perf_writer_close(w), 0);
		r = open_ok(p40);
		f = auxcap_perf_reader_features(r);
		assert_int_equal(f->nr_snapshots, 1);
		assert_int_equal(f->snapshots[0].trigger_ns, 1000);
		assert_int_equal(f->snapshots[0].tid, 77);
		assert_int_equal(f->snapshots[0].cpu, 1);
		assert_int_equal(f->snapshots[0].call_ns, 0);
		auxcap_perf_reader_close(r);
	}

	/* A later version of the table is left out; the file still reads. */
	{
		static const uint64_t head[3] = { 1 | (48ULL << 32), 3, 1000 };
		struct blob b;
		unsigned char *at = NULL;

		load(path, &b);
		for (size_t i = 0; i + sizeof(head) <= b.len && !at; i++)
			if (!memcmp(b.p + i, head, sizeof(head)))
				at = b.p + i;
		assert_non_null(at);
		at[0] = 2;
		tmp_path(path, sizeof(path), "snaps2.data");
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, b.p, b.len), (ssize_t)b.len);
		close(fd);
		free(b.p);
		r = open_ok(path);
		f = auxcap_perf_reader_features(r);
		assert_string_equal(f->hostname, "h");
		assert_int_equal(f->nr_snapshots, 0);
		auxcap_perf_reader_close(r);
	}

	/* Pipe mode: no table (perf 6.1 aborts on a feature record it does not know). */
	memset(&po, 0, sizeof(po));
	po.sz = sizeof(po);
	po.pipe = true;
	tmp_path(path, sizeof(path), "snaps.pipe");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(auxcap_perf_writer_open_fd(fd, &po, &w), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "alpha", ids_a, 2), 0);
	assert_int_equal(auxcap_perf_writer_add_snapshot(w, &snaps[0]), 0);
	{
		unsigned char rec[256];
		size_t n = make_sample(rec, 1);

		assert_true(n > 0);
		assert_int_equal(auxcap_perf_writer_write(w, rec), 0);
	}
	assert_int_equal(auxcap_perf_writer_close(w), 0);
	close(fd);
	r = open_ok(path);
	assert_true(auxcap_perf_reader_info(r)->pipe);
	{
		struct auxcap_perf_event ev;
		size_t samples = 0;
		int ret;

		while ((ret = auxcap_perf_reader_next(r, &ev)) > 0) {
			if (ev.rec.type == AUXCAP_PERF_RECORD_HEADER_FEATURE)
				assert_int_not_equal(ev.u.feature.feat, 255);
			samples += ev.rec.type == PERF_RECORD_SAMPLE;
		}
		assert_int_equal(ret, 0);
		assert_int_equal(samples, 1);
	}
	assert_int_equal(auxcap_perf_reader_features(r)->nr_snapshots, 0);
	auxcap_perf_reader_close(r);
}

/* The real seam with fallocate counted: bytes reserved (either thread) and the last punch. */
struct res_io {
	uint64_t reserved; /* atomic */
	uint64_t punch_off, punch_len;
	int punches;
};

static int res_fallocate(void *ctx, int fd, int mode, uint64_t off, uint64_t len)
{
	struct res_io *ri = ctx;
	int r = fallocate(fd, mode, (off_t)off, (off_t)len) < 0 ? -errno : 0;

	if (mode & FALLOC_FL_PUNCH_HOLE) {
		ri->punch_off = off;
		ri->punch_len = len;
		ri->punches++;
	} else if (r == 0) {
		__atomic_add_fetch(&ri->reserved, len, __ATOMIC_ACQ_REL); /* once it is done */
	}
	return r;
}

static ssize_t res_writev(void *ctx, int fd, const struct iovec *iov, int iovcnt, int64_t off)
{
	(void)ctx;
	return auxcap_perf_io_linux.writev(NULL, fd, iov, iovcnt, off);
}

static int res_truncate(void *ctx, int fd, uint64_t len)
{
	(void)ctx;
	return ftruncate(fd, (off_t)len) < 0 ? -errno : 0;
}

/* An attr, then (@reserve > 0) space reserved, then samples and AUXTRACE records. */
static void write_reserved(const char *path, const struct auxcap_perf_io *io, uint64_t reserve,
			   struct res_io *ri)
{
	struct auxcap_perf_writer_opts wo = { .sz = sizeof(wo), .io = io };
	static unsigned char aux[100000];
	struct auxcap_perf_writer *w;
	unsigned char rec[SAMPLE_SIZE];
	struct perf_event_attr a;
	struct stat st;

	make_attr(&a, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(auxcap_perf_writer_open(path, &wo, &w), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "alpha", ids_a, 2), 0);
	if (reserve) {
		assert_int_equal(auxcap_perf_writer_reserve(w, reserve), 0);
		/* The thread takes it in steps; wait until all of it (and the first byte, where
		 * the call checks the filesystem can) is taken. */
		while (__atomic_load_n(&ri->reserved, __ATOMIC_ACQUIRE) < reserve + 1)
			usleep(1000);
		assert_int_equal(ri->reserved, reserve + 1);
		assert_int_equal(stat(path, &st), 0);
		assert_true((uint64_t)st.st_blocks * 512 >= reserve);
		/* Asked again for what is reserved already: nothing more. */
		assert_int_equal(auxcap_perf_writer_reserve(w, reserve / 2), 0);
	}
	for (uint64_t i = 0; i < 40; i++) {
		struct auxcap_perf_auxtrace at = { i * sizeof(aux), i, 0, (uint32_t)-1, 0 };

		make_sample(rec, i);
		assert_int_equal(auxcap_perf_writer_write(w, rec), 0);
		memset(aux, (int)i + 1, sizeof(aux));
		assert_int_equal(auxcap_perf_writer_write_auxtrace(w, &at, aux, sizeof(aux), NULL, 0),
				 0);
	}
	assert_int_equal(auxcap_perf_writer_close(w), 0);
	if (reserve)
		assert_int_equal(ri->reserved, reserve + 1);
}

/*
 * Space reserved ahead (auxcap_perf_writer_reserve()) is used by the writes that follow and
 * the rest is given back at close: the file is byte for byte the one written without it, and
 * holds no more space than its size.  Checked on /tmp and on tmpfs.
 */
static void test_reserve_ahead(void **state)
{
	const char *dirs[] = { tmpdir, "/dev/shm" };
	const uint64_t reserve = 8u << 20; /* more than the 4 MB written */

	(void)state;
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		struct res_io ri = { 0 };
		struct auxcap_perf_io io = { &ri, res_writev, res_truncate, res_fallocate };
		char p1[128], p2[128], cmd[300];
		struct stat st;

		if (access(dirs[d], W_OK) < 0)
			continue;
		snprintf(p1, sizeof(p1), "%s/auxcap-pd-plain-%d.data", dirs[d], (int)getpid());
		snprintf(p2, sizeof(p2), "%s/auxcap-pd-reserved-%d.data", dirs[d], (int)getpid());
		write_reserved(p1, NULL, 0, NULL);
		write_reserved(p2, &io, reserve, &ri);
		snprintf(cmd, sizeof(cmd), "cmp -s %s %s", p1, p2);
		assert_int_equal(system(cmd), 0);
		assert_int_equal(stat(p2, &st), 0);
		/* The unused part was punched out, from the final end on. */
		assert_int_equal(ri.punches, 1);
		assert_int_equal(ri.punch_off, (uint64_t)st.st_size);
		assert_true(ri.punch_off + ri.punch_len > (uint64_t)st.st_size);
		assert_true((uint64_t)st.st_blocks * 512 <= (((uint64_t)st.st_size + 4095) & ~4095ull) +
								   65536);
		unlink(p1);
		unlink(p2);
	}
}

/* Where space cannot be reserved, the call says so and the writer goes on unharmed. */
static void test_reserve_unsupported(void **state)
{
	struct auxcap_perf_writer_opts wo = { .sz = sizeof(wo) };
	struct auxcap_perf_io io = { NULL, res_writev, res_truncate, NULL };
	struct auxcap_perf_writer *w;
	struct perf_event_attr a;
	char path[128];
	int p[2];

	(void)state;
	make_attr(&a, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(auxcap_perf_writer_reserve(NULL, 1), -EINVAL);
	/* A pipe. */
	assert_int_equal(pipe(p), 0);
	wo.pipe = true;
	assert_int_equal(auxcap_perf_writer_open_fd(p[1], &wo, &w), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "alpha", ids_a, 2), 0);
	assert_int_equal(auxcap_perf_writer_reserve(w, 4096), -EOPNOTSUPP);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
	close(p[0]);
	close(p[1]);
	/* An I/O seam without fallocate. */
	wo.pipe = false;
	wo.io = &io;
	tmp_path(path, sizeof(path), "nofalloc.data");
	assert_int_equal(auxcap_perf_writer_open(path, &wo, &w), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "alpha", ids_a, 2), 0);
	assert_int_equal(auxcap_perf_writer_reserve(w, 4096), -EOPNOTSUPP);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_file_mode),
		cmocka_unit_test(test_round_trip_pipe_mode),
		cmocka_unit_test(test_writer_rejects_bad_use),
		cmocka_unit_test(test_short_writes_and_eintr_give_same_file),
		cmocka_unit_test(test_enospc_leaves_readable_file),
		cmocka_unit_test(test_enospc_while_writing_features_keeps_all_records),
		cmocka_unit_test(test_sigkill_mid_capture_recovers_with_header_updates),
		cmocka_unit_test(test_sigkill_mid_capture_recovers_without_header_updates),
		cmocka_unit_test(test_truncated_files_never_read_as_complete),
		cmocka_unit_test(test_corrupt_header_fields),
		cmocka_unit_test(test_fuzzed_files_do_not_crash),
		cmocka_unit_test(test_fuzzed_and_cut_pipe_streams),
		cmocka_unit_test(test_other_endian_and_empty_inputs),
		cmocka_unit_test(test_sample_id_encode_round_trips),
		cmocka_unit_test(test_sample_time_offset),
		cmocka_unit_test(test_clock_features),
		cmocka_unit_test(test_empty_capture_reads_as_final),
		cmocka_unit_test(test_reader_drop_keeps_payloads_readable),
		cmocka_unit_test(test_auxtrace_index_from_feature_or_scan),
		cmocka_unit_test(test_snapshot_feature),
		cmocka_unit_test(test_reserve_ahead),
		cmocka_unit_test(test_reserve_unsupported),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
