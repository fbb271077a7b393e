/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMU discovery against this machine's real /sys/bus/event_source/devices: whatever PMUs
 * readdir sees must all be listed and readable, and the ABI-fixed types hold (software = 1,
 * tracepoint = 2, breakpoint = 5).  The set of PMUs is not hard-coded.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "auxcap/pmu.h"
#include "util.h"

static void test_real_sysfs_list_matches_readdir(void **state)
{
	struct auxcap_pmu_list *list = NULL;
	struct dirent *de;
	size_t seen = 0;
	DIR *d;

	(void)state;
	assert_int_equal(auxcap_pmu_list_new(NULL, &list), 0);
	d = opendir(AUXCAP_PMU_SYSFS_ROOT);
	assert_non_null(d);
	while ((de = readdir(d))) {
		const struct auxcap_pmu *pmu;

		if (de->d_name[0] == '.')
			continue;
		seen++;
		pmu = auxcap_pmu_list_find(list, de->d_name);
		if (!pmu) {
			fail_msg("PMU %s from readdir is missing or unreadable", de->d_name);
			continue;
		}
		printf("# %s type %u formats %zu caps %zu events %zu\n", pmu->name, pmu->type,
		       pmu->nr_formats, pmu->nr_caps, pmu->nr_aliases);
	}
	closedir(d);
	assert_true(seen > 0);
	assert_int_equal(list->nr, seen);
	for (size_t i = 0; i < list->nr; i++)
		assert_int_equal(list->entries[i].err, 0);
	auxcap_pmu_list_free(list);
}

static void expect_type(const char *name, uint32_t type)
{
	struct auxcap_pmu *pmu = NULL;
	char path[256];
	struct stat st;
	int r;

	snprintf(path, sizeof(path), "%s/%s", AUXCAP_PMU_SYSFS_ROOT, name);
	r = auxcap_pmu_new(NULL, name, &pmu);
	if (stat(path, &st) < 0) {
		assert_int_equal(r, -ENOENT);
		return;
	}
	assert_int_equal(r, 0);
	assert_int_equal(pmu->type, type);
	assert_true(pmu->mux_interval_ms >= 0);
	auxcap_pmu_free(pmu);
}

static void test_real_sysfs_abi_types(void **state)
{
	struct auxcap_pmu *pmu = NULL;

	(void)state;
	/* the software PMU exists on every kernel with perf events */
	assert_int_equal(auxcap_pmu_new(NULL, "software", &pmu), 0);
	assert_int_equal(pmu->type, PERF_TYPE_SOFTWARE);
	auxcap_pmu_free(pmu);
	expect_type("tracepoint", PERF_TYPE_TRACEPOINT);
	expect_type("breakpoint", PERF_TYPE_BREAKPOINT);
}

static void test_real_sysfs_formats_parse(void **state)
{
	struct auxcap_pmu_list *list = NULL;

	(void)state;
	assert_int_equal(auxcap_pmu_list_new(NULL, &list), 0);
	for (size_t i = 0; i < list->nr; i++) {
		const struct auxcap_pmu *pmu = list->entries[i].pmu;

		for (size_t j = 0; pmu && j < pmu->nr_formats; j++) {
			const struct auxcap_pmu_format *f = &pmu->formats[j];
			struct auxcap_attr a;

			/* the largest value round-trips and touches only the field */
			memset(&a, 0, sizeof(a));
			assert_true(f->width >= 1 && f->width <= 64);
			assert_int_equal(auxcap_pmu_format_put(f, auxcap_pmu_format_max(f), &a), 0);
			assert_int_equal(auxcap_attr_word_get(&a, f->word), f->mask);
			assert_int_equal(auxcap_pmu_format_get(f, &a), auxcap_pmu_format_max(f));
		}
	}
	auxcap_pmu_list_free(list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_sysfs_list_matches_readdir),
		cmocka_unit_test(test_real_sysfs_abi_types),
		cmocka_unit_test(test_real_sysfs_formats_parse),
	};
	struct stat st;

	if (stat(AUXCAP_PMU_SYSFS_ROOT, &st) < 0)
		test_skip("%s does not exist (no perf events in this kernel?)",
			  AUXCAP_PMU_SYSFS_ROOT);
	return cmocka_run_group_tests_name("core/pmu_sysfs", tests, NULL, NULL);
}
