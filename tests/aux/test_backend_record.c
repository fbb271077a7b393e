/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the record-side glue (aux/backend_record.c) with a backend written here: its
 * recording_options sees the context and edits the attr, its AUXTRACE_INFO words land in the
 * file after TIME_CONV and before anything else, errors come back with the backend's reason.
 * The file is read back with the perf.data reader.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "auxcap/backend.h"
#include "backend_record.h"

#define FAKE_TYPE (AUXCAP_AUXTRACE_PRIVATE + 7)

static const struct auxcap_record_ctx *g_seen_ctx;

static int fake_probe(const char *pmu_name, const struct auxcap_pmu *pmu)
{
	(void)pmu;
	return !strcmp(pmu_name, "fake_aux");
}

/* Sets bit 3 unless the user set it; refuses config bit 5. */
static int fake_options(const struct auxcap_record_ctx *ctx, struct auxcap_attr *attr)
{
	g_seen_ctx = ctx;
	if (attr->attr.config & 0x20) {
		snprintf(ctx->errbuf, ctx->errlen, "bit 5 is not supported by fake_aux");
		return -EOPNOTSUPP;
	}
	if (!(ctx->user_set[AUXCAP_ATTR_CONFIG] & 0x8))
		attr->attr.config |= 0x8;
	return 0;
}

static size_t fake_info_size(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr)
{
	(void)attr;
	return ctx->snapshot ? 4 : 3;
}

static int fake_info_fill(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr,
			  uint64_t *words, size_t nr)
{
	if (attr->attr.config & 0x40) {
		snprintf(ctx->errbuf, ctx->errlen, "cannot describe bit 6");
		return -EINVAL;
	}
	for (size_t i = 0; i < nr; i++)
		words[i] = attr->attr.config + i;
	if (ctx->time_conv)
		words[nr - 1] = ctx->time_conv->time_mult;
	return 0;
}

static const struct auxcap_backend_ops fake_ops = {
	.abi = AUXCAP_BACKEND_ABI,
	.name = "fake_aux",
	.description = "test backend",
	.auxtrace_type = FAKE_TYPE,
	.probe = fake_probe,
	.recording_options = fake_options,
	.info_size = fake_info_size,
	.info_fill = fake_info_fill,
};

static int group_setup(void **state)
{
	(void)state;
	return auxcap_backend_register(&fake_ops) == 0 ? 0 : -1;
}

static void ctx_init(struct auxcap_record_ctx *ctx, char *errbuf, size_t errlen)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->sz = sizeof(*ctx);
	ctx->errbuf = errbuf;
	ctx->errlen = errlen;
}

static void test_options_defaults_only_unset_bits(void **state)
{
	const struct auxcap_backend_ops *be = auxcap_backend_for_pmu("fake_aux", NULL);
	struct auxcap_record_ctx ctx;
	struct auxcap_attr a;
	char err[128];

	(void)state;
	assert_ptr_equal(be, &fake_ops);
	ctx_init(&ctx, err, sizeof(err));
	memset(&a, 0, sizeof(a));
	assert_int_equal(auxcap_backend_record_options(be, &ctx, &a), 0);
	assert_ptr_equal(g_seen_ctx, &ctx);
	assert_int_equal(a.attr.config, 0x8);

	/* the user wrote the bit (e.g. "term=0"): the default does not apply */
	memset(&a, 0, sizeof(a));
	ctx.user_set[AUXCAP_ATTR_CONFIG] = 0x8;
	assert_int_equal(auxcap_backend_record_options(be, &ctx, &a), 0);
	assert_int_equal(a.attr.config, 0);

	a.attr.config = 0x20;
	err[0] = 'x';
	assert_int_equal(auxcap_backend_record_options(be, &ctx, &a), -EOPNOTSUPP);
	assert_string_equal(err, "bit 5 is not supported by fake_aux");

	ctx.sz = sizeof(ctx) - 1;
	assert_int_equal(auxcap_backend_record_options(be, &ctx, &a), -EINVAL);
	assert_int_equal(auxcap_backend_record_options(NULL, &ctx, &a), -EINVAL);
}

/* Write into a temporary file, read the record stream back. */
struct rd_out {
	size_t nr;
	uint32_t types[16];
	uint32_t info_type;
	uint64_t info[16];
	size_t nr_info;
	struct auxcap_perf_time_conv tc;
};

static void write_and_read(const struct auxcap_backend_ops *be, struct auxcap_record_ctx *ctx,
			   struct auxcap_attr *a, int expect, struct rd_out *out)
{
	char path[] = "/tmp/auxcap-test-backend-record-XXXXXX";
	int fd = mkstemp(path);
	struct auxcap_perf_writer *w = NULL;
	struct auxcap_perf_reader *rd = NULL;
	struct auxcap_perf_event ev;
	struct perf_event_attr attr;
	uint64_t id = 42;
	unsigned char fin[8] = { AUXCAP_PERF_RECORD_FINISHED_ROUND, 0, 0, 0, 0, 0, 8, 0 };

	assert_true(fd >= 0);
	assert_int_equal(auxcap_perf_writer_open_fd(fd, NULL, &w), 0);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME;
	attr.sample_id_all = 1;
	assert_int_equal(auxcap_perf_writer_add_attr(w, &attr, "x", &id, 1), 0);
	assert_int_equal(auxcap_backend_write_info(be, ctx, a, w), expect);
	assert_int_equal(auxcap_perf_writer_write(w, fin), 0);
	assert_int_equal(auxcap_perf_writer_close(w), 0);

	memset(out, 0, sizeof(*out));
	assert_int_equal(auxcap_perf_reader_open_fd(fd, NULL, &rd), 0);
	while (auxcap_perf_reader_next(rd, &ev) == 1) {
		assert_true(out->nr < 16);
		out->types[out->nr++] = ev.rec.type;
		if (ev.rec.type == AUXCAP_PERF_RECORD_AUXTRACE_INFO) {
			out->info_type = ev.u.auxtrace_info.type;
			out->nr_info = ev.u.auxtrace_info.nr;
			assert_true(out->nr_info <= 16);
			memcpy(out->info, ev.u.auxtrace_info.priv, out->nr_info * 8);
		}
		if (ev.rec.type == AUXCAP_PERF_RECORD_TIME_CONV)
			out->tc = ev.u.time_conv;
	}
	auxcap_perf_reader_close(rd);
	close(fd);
	unlink(path);
}

static void test_write_info_order_and_words(void **state)
{
	const struct auxcap_backend_ops *be = auxcap_backend_for_pmu("fake_aux", NULL);
	struct auxcap_perf_time_conv tc = { .time_shift = 31,
					    .time_mult = 715827882,
					    .time_zero = 12345,
					    .cap_user_time_zero = true };
	struct auxcap_record_ctx ctx;
	struct auxcap_attr a;
	struct rd_out out;
	char err[128];

	(void)state;
	ctx_init(&ctx, err, sizeof(err));
	memset(&a, 0, sizeof(a));
	a.attr.config = 0x100;

	/* no time conversion: AUXTRACE_INFO alone, first */
	write_and_read(be, &ctx, &a, 0, &out);
	assert_int_equal(out.nr, 2);
	assert_int_equal(out.types[0], AUXCAP_PERF_RECORD_AUXTRACE_INFO);
	assert_int_equal(out.info_type, FAKE_TYPE);
	assert_int_equal(out.nr_info, 3);
	assert_int_equal(out.info[0], 0x100);
	assert_int_equal(out.info[2], 0x102);

	/* with one: TIME_CONV comes first; the backend sees the same values */
	ctx.time_conv = &tc;
	ctx.snapshot = true;
	write_and_read(be, &ctx, &a, 0, &out);
	assert_int_equal(out.nr, 3);
	assert_int_equal(out.types[0], AUXCAP_PERF_RECORD_TIME_CONV);
	assert_int_equal(out.types[1], AUXCAP_PERF_RECORD_AUXTRACE_INFO);
	assert_int_equal(out.tc.time_shift, 31);
	assert_int_equal(out.tc.time_mult, 715827882);
	assert_int_equal(out.tc.time_zero, 12345);
	assert_true(out.tc.cap_user_time_zero);
	assert_int_equal(out.nr_info, 4);
	assert_int_equal(out.info[3], 715827882);

	/* a conversion the kernel did not export is not written */
	tc.cap_user_time_zero = false;
	write_and_read(be, &ctx, &a, 0, &out);
	assert_int_equal(out.types[0], AUXCAP_PERF_RECORD_AUXTRACE_INFO);

	/* no backend: TIME_CONV only */
	tc.cap_user_time_zero = true;
	write_and_read(NULL, &ctx, &a, 0, &out);
	assert_int_equal(out.nr, 2);
	assert_int_equal(out.types[0], AUXCAP_PERF_RECORD_TIME_CONV);

	/* info_fill refuses: its reason, and nothing of it in the file */
	a.attr.config = 0x40;
	write_and_read(be, &ctx, &a, -EINVAL, &out);
	assert_string_equal(err, "cannot describe bit 6");
	for (size_t i = 0; i < out.nr; i++)
		assert_int_not_equal(out.types[i], AUXCAP_PERF_RECORD_AUXTRACE_INFO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options_defaults_only_unset_bits),
		cmocka_unit_test(test_write_info_order_and_words),
	};

	return cmocka_run_group_tests_name("aux/backend_record", tests, group_setup, NULL);
}
