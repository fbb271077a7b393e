/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of sysfs PMU discovery: format-string parsing and bit scattering, cpu lists,
 * the fixture trees of fixtures/sysfs (intel_pt, intel_bts, arm_spe_0, cs_etm, whose format
 * strings come from the kernel drivers) and malformed trees built in a temporary directory.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include <cmocka.h>

#include "auxcap/pmu.h"
#include "util.h"

static const char *sysfs_fixtures(void)
{
	static char path[PATH_MAX];
	const char *root = getenv("AUXCAP_FIXTURES");

	if (!root)
		test_skip("AUXCAP_FIXTURES is not set; run through 'meson test'");
	snprintf(path, sizeof(path), "%s/sysfs", root);
	return path;
}

static struct auxcap_pmu *fixture_pmu(const char *name)
{
	struct auxcap_pmu *pmu = NULL;

	assert_int_equal(auxcap_pmu_new(sysfs_fixtures(), name, &pmu), 0);
	assert_non_null(pmu);
	return pmu;
}

/* The mask of bits lo..hi, computed independently of pmu.c. */
static uint64_t bits(unsigned int lo, unsigned int hi)
{
	uint64_t m = 0;

	for (unsigned int b = lo; b <= hi; b++)
		m |= UINT64_C(1) << b;
	return m;
}

static void expect_format(const struct auxcap_pmu *pmu, const char *name,
			  enum auxcap_attr_word word, uint64_t mask)
{
	const struct auxcap_pmu_format *f = auxcap_pmu_format_find(pmu, name);

	if (!f) {
		fail_msg("%s has no format term '%s'", pmu->name, name);
		return;
	}
	assert_int_equal(f->word, word);
	assert_int_equal(f->mask, mask);
	assert_int_equal(f->width, __builtin_popcountll(mask));
}

/* ---- format strings ---------------------------------------------------------------------- */

static void test_format_parse_every_kernel_form(void **state)
{
	static const struct {
		const char *text;
		enum auxcap_attr_word word;
		uint64_t mask;
	} cases[] = {
		{ "config:0-7", AUXCAP_ATTR_CONFIG, 0xff },
		{ "config:24-27", AUXCAP_ATTR_CONFIG, 0xf000000 },
		{ "config:12", AUXCAP_ATTR_CONFIG, 0x1000 },
		{ "config:63", AUXCAP_ATTR_CONFIG, UINT64_C(1) << 63 },
		{ "config1:0-31", AUXCAP_ATTR_CONFIG1, 0xffffffff },
		{ "config2:32-63", AUXCAP_ATTR_CONFIG2, UINT64_C(0xffffffff00000000) },
		{ "config3:0-11", AUXCAP_ATTR_CONFIG3, 0xfff },
		{ "config3:0-63", AUXCAP_ATTR_CONFIG3, ~UINT64_C(0) },
		{ "config:0-7,32-35", AUXCAP_ATTR_CONFIG, UINT64_C(0xf000000ff) },
		{ "config1:1,6-10,44", AUXCAP_ATTR_CONFIG1, UINT64_C(0x1000000007c2) },
		{ "config:1\n", AUXCAP_ATTR_CONFIG, 0x2 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct auxcap_pmu_format f;

		assert_int_equal(auxcap_pmu_format_parse(cases[i].text, &f), 0);
		assert_int_equal(f.word, cases[i].word);
		assert_int_equal(f.mask, cases[i].mask);
		assert_int_equal(f.width, __builtin_popcountll(cases[i].mask));
		assert_null(f.name);
	}
}

static void test_format_parse_malformed_is_einval_and_untouched(void **state)
{
	static const char *const bad[] = {
		"config:",    "config:9-3",   "foo:1",	      "config:0-70",
		"config:64",  "config",	      "config4:1",    "config0:1",
		"config:1,",  "config:1-",    "config:a",     "",
		"config:1 x", "config:-1",    "config1:1,,2", "config:+1",
		"Config:1",   "config:1-2-3", "config :1",    "config:99999999999999999999",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct auxcap_pmu_format f;

		memset(&f, 0xcd, sizeof(f));
		if (auxcap_pmu_format_parse(bad[i], &f) != -EINVAL)
			fail_msg("'%s' was not rejected with -EINVAL", bad[i]);
		for (size_t b = 0; b < sizeof(f); b++)
			assert_int_equal(((unsigned char *)&f)[b], 0xcd);
	}
	assert_int_equal(auxcap_pmu_format_parse(NULL, NULL), -EINVAL);
}

static void test_format_put_scatters_low_bits_first(void **state)
{
	struct auxcap_pmu_format f;
	struct auxcap_attr a;

	(void)state;
	assert_int_equal(auxcap_pmu_format_parse("config:0-7,32-35", &f), 0);
	assert_int_equal(auxcap_pmu_format_max(&f), 0xfff);
	memset(&a, 0, sizeof(a));
	a.attr.config = UINT64_C(1) << 40 | 0xff; /* a neighbour bit, and stale field bits */
	assert_int_equal(auxcap_pmu_format_put(&f, 0xabc, &a), 0);
	/* low 8 bits of the value to bits 0-7, the next 4 to bits 32-35 */
	assert_int_equal(a.attr.config, UINT64_C(1) << 40 | UINT64_C(0xa) << 32 | 0xbc);
	assert_int_equal(auxcap_pmu_format_get(&f, &a), 0xabc);

	/* too big: -ERANGE, attr untouched */
	assert_int_equal(auxcap_pmu_format_put(&f, 0x1000, &a), -ERANGE);
	assert_int_equal(a.attr.config, UINT64_C(1) << 40 | UINT64_C(0xa) << 32 | 0xbc);

	/* 0 clears exactly the field */
	assert_int_equal(auxcap_pmu_format_put(&f, 0, &a), 0);
	assert_int_equal(a.attr.config, UINT64_C(1) << 40);
}

static void test_format_put_full_width_and_single_bit(void **state)
{
	struct auxcap_pmu_format wide, bit;
	struct auxcap_attr a;

	(void)state;
	memset(&a, 0, sizeof(a));
	assert_int_equal(auxcap_pmu_format_parse("config1:0-63", &wide), 0);
	assert_int_equal(auxcap_pmu_format_put(&wide, ~UINT64_C(0), &a), 0);
	assert_int_equal(a.attr.config1, ~UINT64_C(0));
	assert_int_equal(auxcap_pmu_format_parse("config:12", &bit), 0);
	assert_int_equal(auxcap_pmu_format_put(&bit, 2, &a), -ERANGE);
	assert_int_equal(auxcap_pmu_format_put(&bit, 1, &a), 0);
	assert_int_equal(a.attr.config, 0x1000);
}

static void test_config3_lives_at_offset_128(void **state)
{
	struct auxcap_pmu_format f;
	struct auxcap_attr a;
	uint64_t raw;

	(void)state;
	memset(&a, 0, sizeof(a));
	assert_int_equal(auxcap_attr_size(&a), sizeof(struct perf_event_attr));
	assert_int_equal(auxcap_pmu_format_parse("config3:0-11", &f), 0);
	assert_int_equal(auxcap_pmu_format_put(&f, 0x123, &a), 0);
	memcpy(&raw, a.bytes + 128, sizeof(raw));
	assert_int_equal(raw, 0x123);
	assert_int_equal(auxcap_attr_word_get(&a, AUXCAP_ATTR_CONFIG3), 0x123);
	/* nothing else was written */
	assert_int_equal(a.attr.config, 0);
	assert_int_equal(a.attr.config1, 0);
	assert_int_equal(a.attr.config2, 0);
	assert_true(auxcap_attr_size(&a) >= AUXCAP_ATTR_SIZE_VER8);
}

static void test_format_str_round_trips(void **state)
{
	static const char *const texts[] = { "config:0-7,32-35", "config3:0-11", "config:12",
					     "config1:1,6-10,44", "config2:0-63" };

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct auxcap_pmu_format f;
		char buf[64];

		assert_int_equal(auxcap_pmu_format_parse(texts[i], &f), 0);
		assert_int_equal(auxcap_pmu_format_str(&f, buf, sizeof(buf)), strlen(texts[i]));
		assert_string_equal(buf, texts[i]);
	}
}

/* ---- cpu lists --------------------------------------------------------------------------- */

static void test_cpulist_parses_ranges_and_rejects_garbage(void **state)
{
	static const char *const bad[] = { "3-1", "0-3,",  "a",	 "0,,1", "1-2-3",
					   "2,1", "0-3,2", "-1", "0 1",	 "99999999" };
	int *cpus = NULL;
	size_t nr = 0;

	(void)state;
	assert_int_equal(auxcap_cpulist_parse("0-3,8\n", &cpus, &nr), 0);
	assert_int_equal(nr, 5);
	assert_int_equal(cpus[0], 0);
	assert_int_equal(cpus[3], 3);
	assert_int_equal(cpus[4], 8);
	free(cpus);

	cpus = (int *)&nr; /* poison: must be replaced */
	assert_int_equal(auxcap_cpulist_parse("", &cpus, &nr), 0);
	assert_int_equal(nr, 0);
	assert_null(cpus);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cpus = NULL;
		nr = 77;
		if (auxcap_cpulist_parse(bad[i], &cpus, &nr) != -EINVAL)
			fail_msg("cpu list '%s' was not rejected", bad[i]);
		assert_null(cpus);
		assert_int_equal(nr, 77);
	}
}

/* ---- fixture trees ----------------------------------------------------------------------- */

static void test_fixture_intel_pt_bits_match_the_driver(void **state)
{
	struct auxcap_pmu *pmu = fixture_pmu("intel_pt");
	uint64_t v;

	(void)state;
	assert_string_equal(pmu->name, "intel_pt");
	assert_int_equal(pmu->type, 6);
	assert_int_equal(pmu->nr_formats, 14);
	/* arch/x86/events/intel/pt.c PMU_FORMAT_ATTR(...) */
	expect_format(pmu, "pt", AUXCAP_ATTR_CONFIG, bits(0, 0));
	expect_format(pmu, "cyc", AUXCAP_ATTR_CONFIG, bits(1, 1));
	expect_format(pmu, "pwr_evt", AUXCAP_ATTR_CONFIG, bits(4, 4));
	expect_format(pmu, "fup_on_ptw", AUXCAP_ATTR_CONFIG, bits(5, 5));
	expect_format(pmu, "mtc", AUXCAP_ATTR_CONFIG, bits(9, 9));
	expect_format(pmu, "tsc", AUXCAP_ATTR_CONFIG, bits(10, 10));
	expect_format(pmu, "noretcomp", AUXCAP_ATTR_CONFIG, bits(11, 11));
	expect_format(pmu, "ptw", AUXCAP_ATTR_CONFIG, bits(12, 12));
	expect_format(pmu, "branch", AUXCAP_ATTR_CONFIG, bits(13, 13));
	expect_format(pmu, "mtc_period", AUXCAP_ATTR_CONFIG, bits(14, 17));
	expect_format(pmu, "cyc_thresh", AUXCAP_ATTR_CONFIG, bits(19, 22));
	expect_format(pmu, "psb_period", AUXCAP_ATTR_CONFIG, bits(24, 27));
	expect_format(pmu, "event", AUXCAP_ATTR_CONFIG, bits(31, 31));
	expect_format(pmu, "notnt", AUXCAP_ATTR_CONFIG, bits(55, 55));
	for (size_t i = 1; i < pmu->nr_formats; i++)
		assert_true(strcmp(pmu->formats[i - 1].name, pmu->formats[i].name) < 0);

	/* intel_pt writes caps with "%x": mtc_periods "249" is 0x249 (valid 0,3,6,9) */
	assert_string_equal(auxcap_pmu_cap_text(pmu, "mtc_periods"), "249");
	assert_int_equal(auxcap_pmu_cap_u64(pmu, "mtc_periods", 16, &v), 0);
	assert_int_equal(v, 0x249);
	assert_int_equal(auxcap_pmu_cap_u64(pmu, "psb_periods", 16, &v), 0);
	assert_int_equal(v, 0x3f);
	assert_int_equal(auxcap_pmu_cap_u64(pmu, "psb_cyc", 16, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(auxcap_pmu_cap_u64(pmu, "num_address_ranges", 16, &v), 0);
	assert_int_equal(v, pmu->nr_addr_filters);
	assert_int_equal(pmu->nr_addr_filters, 2);
	assert_false(pmu->has_cpumask);
	assert_int_equal(pmu->mux_interval_ms, 4);
	assert_int_equal(pmu->nr_aliases, 0);
	/* the driver's own files in the PMU directory; known files and directories are not */
	assert_string_equal(auxcap_pmu_attr_text(pmu, "max_nonturbo_ratio"), "28");
	assert_string_equal(auxcap_pmu_attr_text(pmu, "tsc_art_ratio"), "2:216");
	assert_int_equal(pmu->nr_attrs, 2);
	assert_null(auxcap_pmu_attr_text(pmu, "type"));
	assert_null(auxcap_pmu_attr_text(pmu, "caps"));
	assert_null(auxcap_pmu_attr_text(NULL, "type"));
	auxcap_pmu_free(pmu);
}

static void test_fixture_intel_bts_has_only_a_type(void **state)
{
	struct auxcap_pmu *pmu = fixture_pmu("intel_bts");

	(void)state;
	assert_int_equal(pmu->type, 7);
	assert_int_equal(pmu->nr_formats, 0);
	assert_int_equal(pmu->nr_caps, 0);
	assert_int_equal(pmu->nr_addr_filters, 0);
	assert_null(auxcap_pmu_format_find(pmu, "cyc"));
	auxcap_pmu_free(pmu);
}

static void test_fixture_arm_spe_config_words_and_cpumask(void **state)
{
	struct auxcap_pmu *pmu = fixture_pmu("arm_spe_0");
	struct auxcap_attr a;
	uint64_t v;

	(void)state;
	assert_int_equal(pmu->type, 8);
	/* drivers/perf/arm_spe_pmu.c ATTR_CFG_FLD_* */
	expect_format(pmu, "ts_enable", AUXCAP_ATTR_CONFIG, bits(0, 0));
	expect_format(pmu, "pa_enable", AUXCAP_ATTR_CONFIG, bits(1, 1));
	expect_format(pmu, "pct_enable", AUXCAP_ATTR_CONFIG, bits(2, 2));
	expect_format(pmu, "jitter", AUXCAP_ATTR_CONFIG, bits(16, 16));
	expect_format(pmu, "branch_filter", AUXCAP_ATTR_CONFIG, bits(32, 32));
	expect_format(pmu, "load_filter", AUXCAP_ATTR_CONFIG, bits(33, 33));
	expect_format(pmu, "store_filter", AUXCAP_ATTR_CONFIG, bits(34, 34));
	expect_format(pmu, "discard", AUXCAP_ATTR_CONFIG, bits(35, 35));
	expect_format(pmu, "event_filter", AUXCAP_ATTR_CONFIG1, bits(0, 63));
	expect_format(pmu, "min_latency", AUXCAP_ATTR_CONFIG2, bits(0, 11));
	expect_format(pmu, "inv_event_filter", AUXCAP_ATTR_CONFIG3, bits(0, 63));
	/* arm_spe writes caps with "%u" */
	assert_int_equal(auxcap_pmu_cap_u64(pmu, "count_size", 10, &v), 0);
	assert_int_equal(v, 12);
	assert_int_equal(auxcap_pmu_cap_u64(pmu, "min_interval", 10, &v), 0);
	assert_int_equal(v, 1024);
	assert_true(pmu->has_cpumask);
	assert_int_equal(pmu->nr_cpus, 4);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(pmu->cpus[i], i);
	assert_int_equal(pmu->nr_addr_filters, 0);

	memset(&a, 0, sizeof(a));
	assert_int_equal(auxcap_pmu_set_term(pmu, "min_latency", 4095, &a), 0);
	assert_int_equal(a.attr.config2, 4095);
	assert_int_equal(auxcap_pmu_set_term(pmu, "min_latency", 4096, &a), -ERANGE);
	assert_int_equal(auxcap_pmu_set_term(pmu, "load_filter", 1, &a), 0);
	assert_int_equal(a.attr.config, UINT64_C(1) << 33);
	assert_int_equal(auxcap_pmu_set_term(pmu, "nope", 1, &a), -ENOENT);
	auxcap_pmu_free(pmu);
}

static void test_fixture_cs_etm_config2_config3(void **state)
{
	struct auxcap_pmu *pmu = fixture_pmu("cs_etm");
	struct auxcap_attr a;

	(void)state;
	assert_int_equal(pmu->type, 12);
	assert_int_equal(pmu->nr_addr_filters, 8);
	expect_format(pmu, "cycacc", AUXCAP_ATTR_CONFIG, bits(12, 12));
	expect_format(pmu, "timestamp", AUXCAP_ATTR_CONFIG, bits(28, 28));
	expect_format(pmu, "retstack", AUXCAP_ATTR_CONFIG, bits(29, 29));
	expect_format(pmu, "branch_broadcast", AUXCAP_ATTR_CONFIG, bits(8, 8));
	expect_format(pmu, "preset", AUXCAP_ATTR_CONFIG, bits(0, 3));
	expect_format(pmu, "sinkid", AUXCAP_ATTR_CONFIG2, bits(0, 31));
	expect_format(pmu, "configid", AUXCAP_ATTR_CONFIG2, bits(32, 63));
	expect_format(pmu, "cc_threshold", AUXCAP_ATTR_CONFIG3, bits(0, 11));
	memset(&a, 0, sizeof(a));
	assert_int_equal(auxcap_pmu_set_term(pmu, "configid", 0xdeadbeef, &a), 0);
	assert_int_equal(auxcap_pmu_set_term(pmu, "sinkid", 0x1234, &a), 0);
	assert_int_equal(a.attr.config2, UINT64_C(0xdeadbeef00001234));
	assert_int_equal(auxcap_pmu_set_term(pmu, "cc_threshold", 4096, &a), -ERANGE);
	assert_int_equal(auxcap_attr_word_get(&a, AUXCAP_ATTR_CONFIG3), 0);
	auxcap_pmu_free(pmu);
}

static void test_cap_numbers_and_errors(void **state)
{
	struct auxcap_pmu *pmu = fixture_pmu("intel_pt");
	uint64_t v = 99;

	(void)state;
	assert_int_equal(auxcap_pmu_cap_u64(pmu, "mtc_periods", 10, &v), 0);
	assert_int_equal(v, 249);
	assert_int_equal(auxcap_pmu_cap_u64(pmu, "cycle_thresholds", 10, &v), -EBADMSG);
	assert_int_equal(v, 249);
	assert_int_equal(auxcap_pmu_cap_u64(pmu, "no_such_cap", 16, &v), -ENOENT);
	assert_int_equal(auxcap_pmu_cap_u64(pmu, "mtc", 8, &v), -EINVAL);
	assert_null(auxcap_pmu_cap_text(pmu, "no_such_cap"));
	auxcap_pmu_free(pmu);
}

static void test_list_of_fixtures_matches_readdir(void **state)
{
	struct auxcap_pmu_list *list = NULL;
	struct dirent *de;
	size_t dirs = 0;
	DIR *d;

	(void)state;
	assert_int_equal(auxcap_pmu_list_new(sysfs_fixtures(), &list), 0);
	d = opendir(sysfs_fixtures());
	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[PATH_MAX + 512];
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", sysfs_fixtures(), de->d_name);
		if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue; /* README.md */
		dirs++;
		if (!auxcap_pmu_list_find(list, de->d_name))
			fail_msg("PMU %s is missing from the list", de->d_name);
	}
	closedir(d);
	assert_int_equal(list->nr, dirs);
	for (size_t i = 0; i < list->nr; i++) {
		assert_int_equal(list->entries[i].err, 0);
		assert_non_null(list->entries[i].pmu);
		if (i)
			assert_true(strcmp(list->entries[i - 1].name, list->entries[i].name) < 0);
	}
	auxcap_pmu_list_free(list);
}

/* ---- malformed trees --------------------------------------------------------------------- */

struct tree {
	char root[PATH_MAX];
};

static void tree_put(const struct tree *t, const char *rel, const char *content)
{
	char path[PATH_MAX * 2];
	char *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t->root, rel);
	for (slash = strchr(path + strlen(t->root) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		(void)mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static int tree_setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));

	snprintf(t->root, sizeof(t->root), "/tmp/auxcap-test-pmu-XXXXXX");
	if (!mkdtemp(t->root))
		return -1;
	*state = t;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;

	(void)nftw(t->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(t);
	return 0;
}

static void expect_pmu_error(const struct tree *t, const char *name, int err)
{
	struct auxcap_pmu *pmu = (struct auxcap_pmu *)0x1; /* must stay untouched */
	int r = auxcap_pmu_new(t->root, name, &pmu);

	if (r != err)
		fail_msg("PMU %s: expected %d, got %d", name, err, r);
	assert_ptr_equal(pmu, (struct auxcap_pmu *)0x1);
}

static void test_bad_trees_fail_cleanly(void **state)
{
	struct tree *t = *state;
	struct auxcap_pmu_list *list = NULL;
	struct auxcap_pmu *pmu = NULL;

	tree_put(t, "notype/format/cyc", "config:1\n");
	tree_put(t, "garbage/type", "eight\n");
	tree_put(t, "emptytype/type", "");
	tree_put(t, "bigtype/type", "4294967296\n");
	tree_put(t, "negtype/type", "-1\n");
	tree_put(t, "badfmt1/type", "9\n");
	tree_put(t, "badfmt1/format/x", "config:\n");
	tree_put(t, "badfmt2/type", "9\n");
	tree_put(t, "badfmt2/format/x", "config:9-3\n");
	tree_put(t, "badfmt3/type", "9\n");
	tree_put(t, "badfmt3/format/x", "foo:1\n");
	tree_put(t, "badfmt4/type", "9\n");
	tree_put(t, "badfmt4/format/x", "config:0-70\n");
	tree_put(t, "badcpus/type", "9\n");
	tree_put(t, "badcpus/cpumask", "0-\n");
	tree_put(t, "badfilters/type", "9\n");
	tree_put(t, "badfilters/nr_addr_filters", "two\n");
	tree_put(t, "good/type", "  42 \n");
	tree_put(t, "good/format/multi", "config:0-7,32-35\n");
	tree_put(t, "good/events/tsc", "event=0x00\n");
	tree_put(t, "good/events/tsc.scale", "1e-9\n");
	tree_put(t, "afile", "not a PMU directory\n");

	expect_pmu_error(t, "notype", -ENOENT);
	expect_pmu_error(t, "garbage", -EBADMSG);
	expect_pmu_error(t, "emptytype", -EBADMSG);
	expect_pmu_error(t, "bigtype", -EBADMSG);
	expect_pmu_error(t, "negtype", -EBADMSG);
	expect_pmu_error(t, "badfmt1", -EBADMSG);
	expect_pmu_error(t, "badfmt2", -EBADMSG);
	expect_pmu_error(t, "badfmt3", -EBADMSG);
	expect_pmu_error(t, "badfmt4", -EBADMSG);
	expect_pmu_error(t, "badcpus", -EBADMSG);
	expect_pmu_error(t, "badfilters", -EBADMSG);
	expect_pmu_error(t, "missing", -ENOENT);
	expect_pmu_error(t, "afile", -ENOTDIR);
	expect_pmu_error(t, "../x", -EINVAL);
	expect_pmu_error(t, "", -EINVAL);

	assert_int_equal(auxcap_pmu_new(t->root, "good", &pmu), 0);
	assert_int_equal(pmu->type, 42);
	assert_int_equal(pmu->mux_interval_ms, -1);
	expect_format(pmu, "multi", AUXCAP_ATTR_CONFIG, UINT64_C(0xf000000ff));
	assert_int_equal(pmu->nr_aliases, 1); /* tsc.scale is a companion, not an event */
	assert_string_equal(auxcap_pmu_alias_find(pmu, "tsc"), "event=0x00");
	auxcap_pmu_free(pmu);

	/* the list keeps going past broken PMUs and reports them */
	assert_int_equal(auxcap_pmu_list_new(t->root, &list), 0);
	assert_int_equal(list->nr, 12); /* every directory; "afile" is skipped */
	for (size_t i = 0; i < list->nr; i++) {
		const struct auxcap_pmu_list_entry *e = &list->entries[i];

		if (!strcmp(e->name, "good")) {
			assert_int_equal(e->err, 0);
			assert_non_null(e->pmu);
		} else {
			assert_true(e->err < 0);
			assert_null(e->pmu);
		}
	}
	auxcap_pmu_list_free(list);
}

/* The arm64 MIDR (perf's CPUID there): the lowest-numbered CPU's that exports one. */
static void test_cpu_midr(void **state)
{
	struct tree *t = *state;
	char buf[64], small[8], dir[PATH_MAX + 16];

	assert_int_equal(auxcap_cpu_midr(t->root, buf, sizeof(buf)), -ENOENT); /* empty */
	tree_put(t, "online", "0-11\n");
	tree_put(t, "cpu0/topology/core_id", "0\n"); /* an x86 CPU: no regs/ */
	tree_put(t, "cpufreq/policy0", "");
	assert_int_equal(auxcap_cpu_midr(t->root, buf, sizeof(buf)), -ENOENT);
	/* CPU 0 offline (no regs/ then), 10 sorts before 2 as text but comes after it */
	tree_put(t, "cpu10/regs/identification/midr_el1", "0x00000000410fd400\n");
	tree_put(t, "cpu2/regs/identification/midr_el1", "0x00000000413fd0c1\n");
	tree_put(t, "cpux/regs/identification/midr_el1", "0x00000000410fd490\n");
	assert_int_equal(auxcap_cpu_midr(t->root, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0x00000000413fd0c1");
	assert_int_equal(auxcap_cpu_midr(t->root, small, sizeof(small)), -ENAMETOOLONG);
	tree_put(t, "cpu1/regs/identification/midr_el1", "410fd0c0\n");
	assert_int_equal(auxcap_cpu_midr(t->root, buf, sizeof(buf)), -EBADMSG);
	tree_put(t, "cpu1/regs/identification/midr_el1", "0x410fd0cg\n");
	assert_int_equal(auxcap_cpu_midr(t->root, buf, sizeof(buf)), -EBADMSG);
	snprintf(dir, sizeof(dir), "%s/online", t->root);
	assert_int_equal(auxcap_cpu_midr(dir, buf, sizeof(buf)), -ENOENT); /* not a directory */
	assert_int_equal(auxcap_cpu_midr(t->root, NULL, 8), -EINVAL);
}

static void test_list_of_missing_root_is_enoent(void **state)
{
	struct auxcap_pmu_list *list = (struct auxcap_pmu_list *)0x1;

	(void)state;
	assert_int_equal(auxcap_pmu_list_new("/nonexistent/auxcap", &list), -ENOENT);
	assert_ptr_equal(list, (struct auxcap_pmu_list *)0x1);
	assert_int_equal(auxcap_pmu_list_new(NULL, NULL), -EINVAL);
	auxcap_pmu_list_free(NULL);
	auxcap_pmu_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_parse_every_kernel_form),
		cmocka_unit_test(test_format_parse_malformed_is_einval_and_untouched),
		cmocka_unit_test(test_format_put_scatters_low_bits_first),
		cmocka_unit_test(test_format_put_full_width_and_single_bit),
		cmocka_unit_test(test_config3_lives_at_offset_128),
		cmocka_unit_test(test_format_str_round_trips),
		cmocka_unit_test(test_cpulist_parses_ranges_and_rejects_garbage),
		cmocka_unit_test(test_fixture_intel_pt_bits_match_the_driver),
		cmocka_unit_test(test_fixture_intel_bts_has_only_a_type),
		cmocka_unit_test(test_fixture_arm_spe_config_words_and_cpumask),
		cmocka_unit_test(test_fixture_cs_etm_config2_config3),
		cmocka_unit_test(test_cap_numbers_and_errors),
		cmocka_unit_test(test_list_of_fixtures_matches_readdir),
		cmocka_unit_test_setup_teardown(test_cpu_midr, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_bad_trees_fail_cleanly, tree_setup,
						tree_teardown),
		cmocka_unit_test(test_list_of_missing_root_is_enoent),
	};

	return cmocka_run_group_tests_name("core/pmu", tests, NULL, NULL);
}
