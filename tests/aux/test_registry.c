/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the backend registry (aux/registry.c): the built-in backends of this build are
 * found by PMU name, by AUXTRACE_INFO type and by name; incomplete ops tables, ABI mismatches and
 * duplicate names are refused; a registered backend is found after the built-ins.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"

#include "auxcap/backend.h"

static void test_builtin(void **state)
{
	const struct auxcap_backend_ops *b;
	size_t n = 0;

	(void)state;
#if AUXCAP_HAVE_BACKEND_INTEL_PT && AUXCAP_HAVE_LIBIPT
	b = auxcap_backend_for_pmu("intel_pt", NULL);
	assert_non_null(b);
	assert_string_equal(b->name, "intel_pt");
	assert_ptr_equal(auxcap_backend_for_type(AUXCAP_AUXTRACE_INTEL_PT), b);
	n++;
#endif
#if AUXCAP_HAVE_BACKEND_INTEL_BTS
	b = auxcap_backend_for_pmu("intel_bts", NULL);
	assert_non_null(b);
	assert_ptr_equal(auxcap_backend_for_type(AUXCAP_AUXTRACE_INTEL_BTS), b);
	assert_ptr_equal(auxcap_backend_find("intel_bts"), b);
	n++;
#endif
#if AUXCAP_HAVE_BACKEND_ARM_SPE
	/* Every arm_spe_N PMU is served by the one SPE backend. */
	b = auxcap_backend_for_pmu("arm_spe_0", NULL);
	assert_non_null(b);
	assert_ptr_equal(auxcap_backend_for_pmu("arm_spe_12", NULL), b);
	assert_ptr_equal(auxcap_backend_for_type(AUXCAP_AUXTRACE_ARM_SPE), b);
	n++;
#endif
	assert_int_equal(auxcap_backend_count(), n);
	for (size_t i = 0; i < n; i++) {
		b = auxcap_backend_get(i);
		assert_non_null(b);
		assert_int_equal(b->abi, AUXCAP_BACKEND_ABI);
		assert_non_null(b->description);
	}
	assert_null(auxcap_backend_get(n));
	/* Not AUX PMUs, or none we serve. */
	assert_null(auxcap_backend_for_pmu("software", NULL));
	assert_null(auxcap_backend_for_pmu("cs_etm", NULL));
	assert_null(auxcap_backend_for_pmu("arm_spe0x", NULL));
	assert_null(auxcap_backend_for_pmu(NULL, NULL));
	assert_null(auxcap_backend_for_type(0));
	assert_null(auxcap_backend_for_type(AUXCAP_AUXTRACE_S390_CPUMSF));
	assert_null(auxcap_backend_find("nope"));
}

static int probe_toy(const char *name, const struct auxcap_pmu *pmu)
{
	(void)pmu;
	return !strcmp(name, "toy_pmu");
}

static int toy_new(const struct auxcap_decode_ctx *ctx, const uint8_t *buf, size_t len,
		   void **ret)
{
	(void)ctx;
	(void)buf;
	(void)len;
	*ret = NULL;
	return 0;
}

static int toy_next(void *dec, struct auxcap_trace_event *ev)
{
	(void)dec;
	(void)ev;
	return 0;
}

static void toy_free(void *dec)
{
	(void)dec;
}

static size_t toy_info_size(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr)
{
	(void)ctx;
	(void)attr;
	return 1;
}

static int toy_info_fill(const struct auxcap_record_ctx *ctx, const struct auxcap_attr *attr,
			 uint64_t *w, size_t nr)
{
	(void)ctx;
	(void)attr;
	(void)w;
	(void)nr;
	return 0;
}

static int toy_options(const struct auxcap_record_ctx *ctx, struct auxcap_attr *attr)
{
	(void)ctx;
	(void)attr;
	return 0;
}

static void test_register(void **state)
{
	size_t before = auxcap_backend_count();
	struct auxcap_backend_ops bad;
	static struct auxcap_backend_ops toy = {
		.abi = AUXCAP_BACKEND_ABI,
		.name = "toy",
		.description = "test backend",
		.auxtrace_type = AUXCAP_AUXTRACE_PRIVATE + 7,
		.probe = probe_toy,
		.recording_options = toy_options,
		.info_size = toy_info_size,
		.info_fill = toy_info_fill,
		.decoder_new = toy_new,
		.decoder_next = toy_next,
		.decoder_free = toy_free,
	};

	(void)state;
	assert_int_equal(auxcap_backend_register(NULL), -EINVAL);
	bad = toy;
	bad.abi = AUXCAP_BACKEND_ABI + 1;
	assert_int_equal(auxcap_backend_register(&bad), -EPROTO);
	bad = toy;
	bad.probe = NULL;
	assert_int_equal(auxcap_backend_register(&bad), -EINVAL);
	bad = toy;
	bad.name = "";
	assert_int_equal(auxcap_backend_register(&bad), -EINVAL);
	bad = toy;
	bad.decoder_free = NULL; /* half a decode group */
	assert_int_equal(auxcap_backend_register(&bad), -EINVAL);
	bad = toy;
	bad.info_fill = NULL; /* half an info group */
	assert_int_equal(auxcap_backend_register(&bad), -EINVAL);
	bad = toy;
	bad.recording_options = NULL; /* metadata without a record side */
	assert_int_equal(auxcap_backend_register(&bad), -EINVAL);
	assert_int_equal(auxcap_backend_count(), before);

	assert_int_equal(auxcap_backend_register(&toy), 0);
	assert_int_equal(auxcap_backend_register(&toy), -EEXIST);
	assert_int_equal(auxcap_backend_count(), before + 1);
	assert_ptr_equal(auxcap_backend_get(before), &toy);
	assert_ptr_equal(auxcap_backend_for_pmu("toy_pmu", NULL), &toy);
	assert_ptr_equal(auxcap_backend_for_type(AUXCAP_AUXTRACE_PRIVATE + 7), &toy);
	assert_ptr_equal(auxcap_backend_find("toy"), &toy);

	/* A backend with the name of a built-in is refused. */
	if (before) {
		bad = toy;
		bad.name = auxcap_backend_get(0)->name;
		assert_int_equal(auxcap_backend_register(&bad), -EEXIST);
	}
}

static int probe_bts(const char *name, const struct auxcap_pmu *pmu)
{
	(void)pmu;
	return !strcmp(name, "intel_bts");
}

/* A plug-in claiming a built-in's PMU (or AUXTRACE type) takes it over. */
static void test_override(void **state)
{
	static struct auxcap_backend_ops over = {
		.abi = AUXCAP_BACKEND_ABI,
		.name = "bts_override",
		.auxtrace_type = AUXCAP_AUXTRACE_INTEL_BTS,
		.probe = probe_bts,
	};
	const struct auxcap_backend_ops *builtin = auxcap_backend_find("intel_bts");

	(void)state;
	assert_int_equal(auxcap_backend_register(&over), 0);
	assert_ptr_equal(auxcap_backend_for_pmu("intel_bts", NULL), &over);
	assert_ptr_equal(auxcap_backend_for_type(AUXCAP_AUXTRACE_INTEL_BTS), &over);
	/* Listing order stays: built-ins first. */
	if (builtin)
		assert_true(auxcap_backend_get(0) == builtin || auxcap_backend_get(1) == builtin);
	assert_ptr_equal(auxcap_backend_get(auxcap_backend_count() - 1), &over);
}

/* The built-in BTS and SPE backends record and decode. */
static void test_builtin_ops(void **state)
{
	(void)state;
	for (size_t i = 0; i < auxcap_backend_count(); i++) {
		const struct auxcap_backend_ops *b = auxcap_backend_get(i);

		if (strcmp(b->name, "intel_bts") && strcmp(b->name, "arm_spe"))
			continue;
		assert_non_null(b->recording_options);
		assert_non_null(b->info_size);
		assert_non_null(b->find_snapshot);
		assert_non_null(b->decoder_new);
		assert_non_null(b->dump);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin),
		cmocka_unit_test(test_register),
		cmocka_unit_test(test_builtin_ops),
		cmocka_unit_test(test_override),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
