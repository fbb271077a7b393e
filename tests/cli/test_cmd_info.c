/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `auxcap info FILE`: what it shows for a file with AUX buffers and losses, in file and pipe
 * mode, and its one-line errors for a missing file, a file that is not perf.data, and a
 * truncated capture.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "auxcap/perf_data.h"
#include "auxcap/record.h"
#include "util.h"

static char tmpdir[64];
static char auxcap[512];

static int setup(void **state)
{
	const char *root = getenv("AUXCAP_BUILD_ROOT");

	(void)state;
	if (!root)
		test_skip("AUXCAP_BUILD_ROOT is not set; run through 'meson test'");
	snprintf(auxcap, sizeof(auxcap), "%s/cli/auxcap", root);
	if (access(auxcap, X_OK) != 0)
		test_skip("%s is not built", auxcap);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/auxcap-info-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

struct result {
	int status;	 /* exit status */
	char out[16384]; /* stdout */
	char err[4096];	 /* stderr */
};

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Run "auxcap info ARG" (with @stdin_from as standard input if not NULL). */
static void run_info(const char *arg, const char *stdin_from, struct result *res)
{
	char cmd[1024], out[128], err[128];
	int st;

	snprintf(out, sizeof(out), "%s/out.txt", tmpdir);
	snprintf(err, sizeof(err), "%s/err.txt", tmpdir);
	if (stdin_from)
		snprintf(cmd, sizeof(cmd), "cat %s | %s info %s > %s 2> %s", stdin_from, auxcap,
			 arg, out, err);
	else
		snprintf(cmd, sizeof(cmd), "%s info %s > %s 2> %s", auxcap, arg, out, err);
	st = system(cmd);
	assert_true(WIFEXITED(st));
	res->status = WEXITSTATUS(st);
	slurp(out, res->out, sizeof(res->out));
	slurp(err, res->err, sizeof(res->err));
}

static size_t nr_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void put_rec(struct auxcap_perf_writer *w, uint32_t type, const uint64_t *v, size_t nr,
		    uint64_t id)
{
	unsigned char rec[128];
	struct perf_event_header h = { type, 0, (uint16_t)(8 + nr * 8 + 8) };

	memcpy(rec, &h, 8);
	memcpy(rec + 8, v, nr * 8);
	memcpy(rec + 8 + nr * 8, &id, 8); /* sample_id trailer: IDENTIFIER only */
	assert_int_equal(auxcap_perf_writer_write(w, rec), 0);
}

/* A capture with two AUX queues, LOST, LOST_SAMPLES, AUX flags and an AUXTRACE_ERROR. */
static void write_capture(const char *path, bool pipe)
{
	struct auxcap_perf_writer_opts wo;
	struct auxcap_perf_writer *w;
	struct perf_event_attr a;
	struct auxcap_perf_auxtrace_error ae;
	unsigned char payload[1000];
	uint64_t id = 42;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_IDENTIFIER;
	a.sample_id_all = 1;
	memset(&wo, 0, sizeof(wo));
	wo.sz = sizeof(wo);
	wo.pipe = pipe;
	memset(payload, 0xab, sizeof(payload));
	assert_int_equal(auxcap_perf_writer_open(path, &wo, &w), 0);
	assert_int_equal(auxcap_perf_writer_add_attr(w, &a, "dummy:u", &id, 1), 0);
	assert_int_equal(auxcap_perf_writer_set_string(w, AUXCAP_PERF_FEAT_HOSTNAME, "box7"), 0);
	for (int i = 0; i < 5; i++) {
		struct auxcap_perf_auxtrace at = { (uint64_t)i * 1000, 0, (uint32_t)(i % 2),
						   (uint32_t)-1, (uint32_t)(i % 2) };

		/* idx 0: 3 records of 1000 bytes; idx 1: 2 records of 504 (500 padded) */
		assert_int_equal(auxcap_perf_writer_write_auxtrace(w, &at, payload,
								   i % 2 ? 300 : 1000, payload,
								   i % 2 ? 200 : 0),
				 0);
	}
	put_rec(w, PERF_RECORD_LOST, (uint64_t[]){ 42, 10 }, 2, id);
	put_rec(w, PERF_RECORD_LOST, (uint64_t[]){ 42, 20 }, 2, id);
	put_rec(w, PERF_RECORD_LOST_SAMPLES, (uint64_t[]){ 5 }, 1, id);
	put_rec(w, PERF_RECORD_AUX, (uint64_t[]){ 0, 4096, 0x01 }, 3, id);    /* TRUNCATED */
	put_rec(w, PERF_RECORD_AUX, (uint64_t[]){ 4096, 4096, 0x04 }, 3, id); /* PARTIAL */
	put_rec(w, PERF_RECORD_AUX, (uint64_t[]){ 8192, 4096, 0x0c }, 3,
		id); /* PARTIAL|COLLISION */
	put_rec(w, PERF_RECORD_AUX, (uint64_t[]){ 12288, 4096, 0x02 }, 3, id); /* OVERWRITE */
	memset(&ae, 0, sizeof(ae));
	ae.type = 1;
	ae.code = 8;
	snprintf(ae.msg, sizeof(ae.msg), "Lost trace data");
	assert_int_equal(auxcap_perf_writer_write_auxtrace_error(w, &ae), 0);
	assert_int_equal(auxcap_perf_writer_write_finished_round(w), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
}

static void check_capture_output(const struct result *res)
{
	assert_int_equal(res->status, 0);
	assert_string_equal(res->err, "");
	assert_non_null(strstr(res->out, "[0] dummy:u: type 1 config 0x9"));
	assert_non_null(strstr(res->out, "ids (1): 42"));
	assert_non_null(strstr(res->out, "hostname   box7"));
	assert_non_null(strstr(res->out, "AUXTRACE           5"));
	assert_non_null(strstr(res->out, "AUX buffers: 2"));
	assert_non_null(strstr(res->out, "idx 0 cpu 0 tid -1: 3 records, 3000 bytes"));
	assert_non_null(strstr(res->out, "idx 1 cpu 1 tid -1: 2 records, 1008 bytes"));
	assert_non_null(strstr(res->out, "LOST: 2 records, 30 events lost"));
	assert_non_null(strstr(res->out, "LOST_SAMPLES: 1 records, 5 samples lost"));
	assert_non_null(strstr(res->out, "AUX records: 4 (16384 bytes); TRUNCATED 1 OVERWRITE 1 "
					 "PARTIAL 2 COLLISION 1"));
	assert_non_null(strstr(res->out, "AUXTRACE_ERROR: 1"));
}

static void test_info_shows_aux_buffers_and_losses(void **state)
{
	struct result *res = malloc(sizeof(*res));
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/cap.data", tmpdir);
	write_capture(path, false);
	run_info(path, NULL, res);
	check_capture_output(res);
	assert_non_null(strstr(res->out, "mode: file"));
	assert_non_null(strstr(res->out, "attr_size 144"));
	assert_non_null(strstr(res->out, "auxtrace   5 AUXTRACE records indexed"));

	snprintf(path, sizeof(path), "%s/cap.pipe", tmpdir);
	write_capture(path, true);
	run_info("-", path, res);
	check_capture_output(res);
	assert_non_null(strstr(res->out, "mode: pipe"));
	free(res);
}

static void test_info_errors_are_one_line(void **state)
{
	struct result *res = malloc(sizeof(*res));
	char path[128], cmd[300];

	(void)state;
	snprintf(path, sizeof(path), "%s/missing.data", tmpdir);
	run_info(path, NULL, res);
	assert_int_equal(res->status, 1);
	assert_int_equal(nr_lines(res->err), 1);
	assert_non_null(strstr(res->err, "no such file"));
	assert_non_null(strstr(res->err, "missing.data"));

	snprintf(path, sizeof(path), "%s/text.data", tmpdir);
	snprintf(cmd, sizeof(cmd), "echo 'hello, this is not perf data at all' > %s", path);
	assert_int_equal(system(cmd), 0);
	run_info(path, NULL, res);
	assert_int_equal(res->status, 1);
	assert_int_equal(nr_lines(res->err), 1);
	assert_non_null(strstr(res->err, "invalid perf.data: bad magic"));
	assert_non_null(strstr(res->err, "bad magic"));

	run_info("a b", NULL, res);
	assert_int_equal(res->status, 1);
	free(res);
}

static void test_info_says_where_a_truncated_file_was_recovered(void **state)
{
	struct result *res = malloc(sizeof(*res));
	struct auxcap_perf_reader *r;
	struct auxcap_perf_event ev;
	char path[128], cut_path[128], cmd[400], want[128];
	uint64_t third_end = 0;
	int n = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/full.data", tmpdir);
	snprintf(cut_path, sizeof(cut_path), "%s/cut.data", tmpdir);
	write_capture(path, false);
	/* Cut 10 bytes into the fourth AUXTRACE record's payload. */
	assert_int_equal(auxcap_perf_reader_open(path, NULL, &r), 0);
	while (auxcap_perf_reader_next(r, &ev) > 0) {
		if (ev.rec.type == AUXCAP_PERF_RECORD_AUXTRACE && ++n == 3)
			third_end = ev.u.auxtrace.data_offset + ev.u.auxtrace.size;
	}
	auxcap_perf_reader_close(r);
	assert_true(third_end > 0);
	snprintf(cmd, sizeof(cmd), "head -c %llu %s > %s", (unsigned long long)third_end + 58, path,
		 cut_path);
	assert_int_equal(system(cmd), 0);

	run_info(cut_path, NULL, res);
	assert_int_equal(res->status, 0);
	assert_int_equal(nr_lines(res->err), 1);
	snprintf(want, sizeof(want), "recovered up to offset %llu", (unsigned long long)third_end);
	assert_non_null(strstr(res->err, want));
	assert_non_null(strstr(res->err, "feature sections missing"));
	assert_non_null(strstr(res->out, "AUXTRACE           3"));
	free(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_info_shows_aux_buffers_and_losses),
		cmocka_unit_test(test_info_errors_are_one_line),
		cmocka_unit_test(test_info_says_where_a_truncated_file_was_recovered),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
