/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packet listing against libipt's test vectors: every vector with an expected ptdump
 * output is listed by auxcap_ipt_dump() with the options its .ptt gives ptdump, and must
 * match the expected text (ignoring the amount of white space, as libipt's harness does).
 * Vectors we cannot reproduce are listed below by name with the reason; a listed vector
 * that starts to match is reported so the list can shrink.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipt.h"
#include "ptt_fixture.h"
#include "util.h"

#define R_TIME \
	"ptdump --time/--tcal timing columns (ptdump's own TSC/MTC/CYC estimator) are not reproduced"
#define R_SB "needs the perf_event sideband (.sb) dump of ptdump --sb:* (pevent test)"

/* Vectors (by .exp base name) we do not reproduce, and why. */
static const char *const unsupported[][2] = {
	{ "cbr-cyc-ptdump", R_TIME },
	{ "cbr-mtc-cyc-mtc-ptdump", R_TIME },
	{ "cbr-tsc-cyc-tma-ptdump", R_TIME },
	{ "cbr-tsc-tma-mtc-cyc-ptdump", R_TIME },
	{ "mtc-cyc_calibrate-ptdump", R_TIME },
	{ "mtc-ovf_keep-cyc-ptdump", R_TIME },
	{ "mtc-ovf_reset-cyc-ptdump", R_TIME },
	{ "mtc-ptdump", R_TIME },
	{ "pevent-comm_exec-mmap-tsc-iret-ptdump", R_SB },
	{ "pevent-dump-ptdump", R_SB },
	{ "pevent-dump_verbose-ptdump", R_SB },
	{ "pevent-fork-ptdump", R_SB },
	{ "pevent-mmap-tip_cached-ptdump", R_SB },
	{ "pevent-mmap_secondary-tsc-ptdump", R_SB },
	{ "pevent-split-ptdump", R_SB },
	{ "pevent-tip_pgd-comm_exec-mmap-tsc-tip_pge-ptdump", R_SB },
	{ "pevent-tip_pgd-mmap-tsc-tip_pge-ptdump", R_SB },
	{ "pevent-tip_pgd-switch-tsc-tip_pge-ptdump", R_SB },
	{ "pevent-tip_pgd-switch_cpu_wide-tsc-tip_pge-ptdump", R_SB },
	{ "pevent-warn-ptdump", R_SB },
	{ "ptxed-tick-ptdump", R_TIME },
	{ "skl168-cyc-ptdump-cpu_6_142", R_TIME },
	{ "skl168-cyc-ptdump-cpu_6_158", R_TIME },
	{ "skl168-cyc-ptdump-cpu_6_165", R_TIME },
	{ "skl168-cyc-ptdump-cpu_6_166", R_TIME },
	{ "skl168-cyc-ptdump-cpu_6_78", R_TIME },
	{ "skl168-cyc-ptdump-cpu_6_94", R_TIME },
	{ "skl168-mtc-ptdump-cpu_6_142", R_TIME },
	{ "skl168-mtc-ptdump-cpu_6_158", R_TIME },
	{ "skl168-mtc-ptdump-cpu_6_165", R_TIME },
	{ "skl168-mtc-ptdump-cpu_6_166", R_TIME },
	{ "skl168-mtc-ptdump-cpu_6_78", R_TIME },
	{ "skl168-mtc-ptdump-cpu_6_94", R_TIME },
	{ "tsc-cbr-cyc-tsc-ptdump", R_TIME },
	{ "tsc-cyc_calibrate-ptdump", R_TIME },
	{ "tsc-mtc-tma-mtc-ptdump", R_TIME },
	{ "tsc-tma-cbr-cyc-mtc-ptdump", R_TIME },
	{ "tsc-tma-cbr-cyc-ptdump", R_TIME },
	{ "tsc-tma-cbr-mtc-cyc-mtc-ptdump", R_TIME },
	{ "tsc-tma-cbr-mtc-cyc-no_cyc-ptdump", R_TIME },
	{ "tsc-tma-cbr-mtc-cyc-ptdump", R_TIME },
	{ "tsc-tma-cbr-mtc-cyc-tsc-ptdump", R_TIME },
	{ "tsc-tma-cbr-mtc-cyc_calibrate-ptdump", R_TIME },
	{ "tsc-tma-cbr-mtc-mtc-cyc-ptdump", R_TIME },
	{ "tsc-tma-cyc-ptdump", R_TIME },
	{ "tsc-tma-mtc-cyc_calibrate-ptdump", R_TIME },
	{ "tsc-tma-mtc-mtc-cyc_calibrate-ptdump", R_TIME },
	{ "tsc-tma-mtc-tsc-ptdump", R_TIME },
	{ "tsc-tma-mtc_absolute-ptdump", R_TIME },
	{ "tsc-tma-mtc_infreq-ptdump", R_TIME },
	{ "tsc-tma-mtc_infreq_wrap-ptdump", R_TIME },
	{ "tsc-tma-mtc_relative-ptdump", R_TIME },
	{ "tsc-tma-mtc_wrap-ptdump", R_TIME },
	{ "tsc-tma_zero_fc-cbr-cyc-ptdump", R_TIME },
	{ "tsc_tma_mtc_gap-ptdump", R_TIME },
	{ NULL, NULL },
};

static int collect(void *ctx, const char *line)
{
	ptt_text_addf(ctx, "%s\n", line);
	return 0;
}

/* Translate the .ptt's ptdump options; returns an unsupported option or NULL. */
static const char *parse_opts(const struct ptt_vector *v, struct auxcap_ipt_params *params,
			      struct auxcap_ipt_dump_opts *opts)
{
	static char bad[64];
	char buf[sizeof(v->opts)], *save = NULL;

	if (v->cpu[0] && auxcap_ipt_params_parse_cpu(params, v->cpu) < 0)
		return "--cpu";
	snprintf(buf, sizeof(buf), "%s", v->opts);
	for (char *o = strtok_r(buf, " \t", &save); o; o = strtok_r(NULL, " \t", &save)) {
		char *arg = NULL;

		if (!strcmp(o, "--cpu") || !strcmp(o, "--mtc-freq") || !strcmp(o, "--nom-freq") ||
		    !strcmp(o, "--cpuid-0x15.eax") || !strcmp(o, "--cpuid-0x15.ebx")) {
			arg = strtok_r(NULL, " \t", &save);
			if (!arg)
				return o;
		}
		if (!strcmp(o, "--no-offset"))
			opts->no_offset = true;
		else if (!strcmp(o, "--raw"))
			opts->raw = true;
		else if (!strcmp(o, "--lastip"))
			opts->lastip = true;
		else if (!strcmp(o, "--exec-mode"))
			opts->exec_mode = true;
		else if (!strcmp(o, "--no-sync"))
			opts->no_sync = true;
		else if (!strcmp(o, "--cpu")) {
			if (auxcap_ipt_params_parse_cpu(params, arg) < 0)
				return o;
		} else if (!strcmp(o, "--mtc-freq"))
			params->mtc_freq = (uint8_t)strtoul(arg, NULL, 0);
		else if (!strcmp(o, "--nom-freq"))
			params->nom_freq = (uint8_t)strtoul(arg, NULL, 0);
		else if (!strcmp(o, "--cpuid-0x15.eax"))
			params->cpuid_0x15_eax = (uint32_t)strtoul(arg, NULL, 0);
		else if (!strcmp(o, "--cpuid-0x15.ebx"))
			params->cpuid_0x15_ebx = (uint32_t)strtoul(arg, NULL, 0);
		else {
			snprintf(bad, sizeof(bad), "%s", o);
			return bad;
		}
	}
	return NULL;
}

/* Returns 1 on match, 0 on mismatch (message in @why). */
static int run_vector(const struct ptt_vector *v, char *why, size_t whysz)
{
	struct auxcap_ipt_params params = { .sz = sizeof(params) };
	struct auxcap_ipt_dump_opts opts = { .sz = sizeof(opts) };
	struct ptt_text out = { 0 };
	size_t len = 0, explen = 0;
	uint8_t *pt, *exp;
	const char *bad;
	long line;
	int r;

	bad = parse_opts(v, &params, &opts);
	if (bad) {
		snprintf(why, whysz, "unsupported option %s", bad);
		return 0;
	}
	pt = ptt_read_file(v->pt, &len);
	exp = ptt_read_file(v->exp, &explen);
	assert_non_null(pt);
	assert_non_null(exp);
	ptt_text_addf(&out, "%s", "");
	r = auxcap_ipt_dump(pt, len, &params, &opts, collect, &out);
	assert_true(r >= 0);
	line = ptt_compare((const char *)exp, out.s);
	if (line >= 0) {
		const char *e = (const char *)exp, *o = out.s;

		for (long i = 0; i < line; i++) {
			e = strchr(e, '\n') ? strchr(e, '\n') + 1 : e + strlen(e);
			o = strchr(o, '\n') ? strchr(o, '\n') + 1 : o + strlen(o);
		}
		snprintf(why, whysz, "line %ld: expected '%.*s', got '%.*s'", line + 1,
			 (int)strcspn(e, "\n"), e, (int)strcspn(o, "\n"), o);
	}
	free(pt);
	free(exp);
	ptt_text_free(&out);
	return line < 0;
}

static void test_ipt_dump_fixtures_match_ptdump(void **state)
{
	struct ptt_vector *v;
	size_t n, pass = 0, listed = 0, bad = 0, fixed = 0;

	(void)state;
	n = ptt_vectors("ptdump", &v);
	if (!n)
		skip();
	for (size_t i = 0; i < n; i++) {
		const char *reason = ptt_listed(unsupported, v[i].variant);
		char why[600] = "";
		int ok = run_vector(&v[i], why, sizeof(why));

		if (ok && !reason) {
			pass++;
		} else if (ok && reason) {
			fixed++;
			printf("UNEXPECTED PASS %s (listed: %s)\n", v[i].variant, reason);
		} else if (reason) {
			listed++;
		} else {
			bad++;
			printf("FAIL %s: %s\n", v[i].variant, why);
		}
	}
	printf("ptdump vectors: %zu total, %zu match, %zu listed as unsupported, %zu listed but "
	       "matching, %zu FAIL\n",
	       n, pass, listed, fixed, bad);
	free(v);
	assert_int_equal(bad, 0);
	assert_true(pass > 0);
}

static int lines_into(void *ctx, const char *line)
{
	ptt_text_addf(ctx, "%s\n", line);
	return 0;
}

static int stop_after_one(void *ctx, const char *line)
{
	(void)line;
	(*(int *)ctx)++;
	return -ECANCELED;
}

static void test_ipt_dump_bad_args_einval(void **state)
{
	struct auxcap_ipt_params small = { .sz = 1 };
	uint8_t b = 0;

	(void)state;
	assert_int_equal(auxcap_ipt_dump(NULL, 1, NULL, NULL, lines_into, NULL), -EINVAL);
	assert_int_equal(auxcap_ipt_dump(&b, 1, NULL, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(auxcap_ipt_dump(&b, 1, &small, NULL, lines_into, NULL), -EINVAL);
}

static void test_ipt_dump_callback_error_stops(void **state)
{
	/* PSB, PSBEND */
	static const uint8_t trace[] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02,
					 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x23 };
	int calls = 0;

	(void)state;
	assert_int_equal(auxcap_ipt_dump(trace, sizeof(trace), NULL, NULL, stop_after_one, &calls),
			 -ECANCELED);
	assert_int_equal(calls, 1);
}

static void test_ipt_dump_garbage_reports_and_resyncs(void **state)
{
	/* PSB PSBEND, a bad opcode, then PSB PSBEND again. */
	static const uint8_t trace[] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02,
		0x82, 0x02, 0x82, 0x02, 0x23, 0x02, 0xff, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x23,
	};
	struct ptt_text out = { 0 };

	(void)state;
	ptt_text_addf(&out, "%s", "");
	assert_int_equal(auxcap_ipt_dump(trace, sizeof(trace), NULL, NULL, lines_into, &out), 1);
	assert_int_equal(ptt_compare("0000000000000000 psb\n"
				     "0000000000000010 psbend\n"
				     "[12: error decoding packet: unknown opcode]\n"
				     "0000000000000014 psb\n"
				     "0000000000000024 psbend\n",
				     out.s),
			 -1);
	ptt_text_free(&out);
}

/*
 * A trace that ends with a TMA whose reserved bits are set, on a CPU with erratum SKZ84:
 * libipt hands the TMA out as an invalid packet of 8 bytes, one more than the trace has.
 * The listing says so and reads nothing past the end (with --raw-bytes too).
 */
static void test_ipt_dump_packet_past_end(void **state)
{
	static const uint8_t trace[] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02,
		0x82, 0x02, 0x82, 0x02, 0x23, 0x02, 0x73, 0x01, 0x00, 0xff, 0x00, 0x00,
	};
	struct auxcap_ipt_params params = { .sz = sizeof(params) };
	struct auxcap_ipt_dump_opts opts = { .sz = sizeof(opts), .raw = true };
	uint8_t *copy = malloc(sizeof(trace)); /* exactly its size: ASan sees a read past it */
	struct ptt_text out = { 0 };

	(void)state;
	assert_non_null(copy);
	memcpy(copy, trace, sizeof(trace));
	params.cpu_set = true;
	params.cpu_family = 6;
	params.cpu_model = 0x55; /* Skylake-SP: SKZ84 */
	ptt_text_addf(&out, "%s", "");
	assert_int_equal(auxcap_ipt_dump(copy, sizeof(trace), &params, &opts, lines_into, &out), 1);
	assert_non_null(strstr(out.s, "psbend"));
	assert_non_null(strstr(out.s, "[12: packet runs past the end of the trace:"));
	ptt_text_free(&out);
	free(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipt_dump_bad_args_einval),
		cmocka_unit_test(test_ipt_dump_callback_error_stops),
		cmocka_unit_test(test_ipt_dump_garbage_reports_and_resyncs),
		cmocka_unit_test(test_ipt_dump_packet_past_end),
		cmocka_unit_test(test_ipt_dump_fixtures_match_ptdump),
	};

	return cmocka_run_group_tests_name("aux/intel_pt/ipt_dump", tests, NULL, NULL);
}
