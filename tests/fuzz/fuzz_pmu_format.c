/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the sysfs text parsers of core/pmu.c: format/ files ("config:0-7,32-35"),
 * cpumask lists ("0-3,8") and caps/ numbers.
 *
 * The input is the content of one sysfs file.  Checked, against independent computations:
 * a parsed format's width is the popcount of its mask and it prints back (format_str) to a
 * string that parses to the same word and mask; a value scattered into the field with
 * format_put reads back with format_get and touches no other bit, and one past the maximum is
 * -ERANGE; a parsed cpu list is strictly ascending; a cap read as a number equals strtoull's
 * reading of the same text when that consumed all of it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auxcap/pmu.h"
#include "fuzz.h"

#define MAX_INPUT 4096

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static void check_format(const char *text)
{
	struct auxcap_pmu_format f, g, poison;
	struct auxcap_attr attr;
	char buf[256], small[8];
	uint64_t max, v;
	int n, r;

	memset(&poison, 0x5a, sizeof(poison));
	f = poison;
	r = auxcap_pmu_format_parse(text, &f);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL);
		FUZZ_CHECK(!memcmp(&f, &poison, sizeof(f))); /* untouched on failure */
		return;
	}
	FUZZ_CHECK(r == 0 && f.word < AUXCAP_ATTR_WORD_MAX && f.mask);
	FUZZ_CHECK(f.width == (unsigned int)__builtin_popcountll(f.mask));
	FUZZ_CHECK(!strncmp(text, auxcap_attr_word_name(f.word), 6));

	/* Printing and parsing again gives the same field. */
	n = auxcap_pmu_format_str(&f, buf, sizeof(buf));
	FUZZ_CHECK(n > 0 && (size_t)n < sizeof(buf) && strlen(buf) == (size_t)n);
	FUZZ_CHECK(auxcap_pmu_format_str(&f, small, sizeof(small)) == n);
	FUZZ_CHECK(strlen(small) == ((size_t)n < sizeof(small) ? (size_t)n : sizeof(small) - 1));
	FUZZ_CHECK(auxcap_pmu_format_parse(buf, &g) == 0);
	FUZZ_CHECK(g.word == f.word && g.mask == f.mask && g.width == f.width);

	/* Scatter a value in, read it back; bits outside the field stay. */
	max = auxcap_pmu_format_max(&f);
	FUZZ_CHECK(f.width == 64 ? max == ~0ULL : max == (1ULL << f.width) - 1);
	v = mix(f.mask) & max;
	memset(&attr, 0, sizeof(attr));
	for (int w = 0; w < AUXCAP_ATTR_WORD_MAX; w++)
		auxcap_attr_word_set(&attr, (enum auxcap_attr_word)w, mix(f.mask + (uint64_t)w));
	{
		uint64_t before = auxcap_attr_word_get(&attr, f.word), after;

		FUZZ_CHECK(auxcap_pmu_format_put(&f, v, &attr) == 0);
		FUZZ_CHECK(auxcap_pmu_format_get(&f, &attr) == v);
		after = auxcap_attr_word_get(&attr, f.word);
		FUZZ_CHECK((before & ~f.mask) == (after & ~f.mask));
		FUZZ_CHECK((uint64_t)__builtin_popcountll(after & f.mask) ==
			   (uint64_t)__builtin_popcountll(v));
	}
	FUZZ_CHECK(auxcap_pmu_format_put(&f, max, &attr) == 0);
	FUZZ_CHECK((auxcap_attr_word_get(&attr, f.word) & f.mask) == f.mask);
	if (f.width < 64)
		FUZZ_CHECK(auxcap_pmu_format_put(&f, max + 1, &attr) == -ERANGE);
	FUZZ_CHECK(auxcap_attr_size(&attr) >= sizeof(struct perf_event_attr));
}

static void check_cpulist(const char *text)
{
	int *cpus = (int *)(uintptr_t)0x1;
	size_t nr = 12345;
	int r;

	r = auxcap_cpulist_parse(text, &cpus, &nr);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL || r == -ENOMEM);
		FUZZ_CHECK(cpus == (int *)(uintptr_t)0x1 && nr == 12345);
		return;
	}
	FUZZ_CHECK(nr == 0 || cpus);
	for (size_t i = 0; i < nr; i++) {
		FUZZ_CHECK(cpus[i] >= 0);
		FUZZ_CHECK(i == 0 || cpus[i] > cpus[i - 1]);
	}
	free(cpus);
}

static void check_cap(const char *text)
{
	struct auxcap_pmu_cap cap = { .name = (char *)"c", .value = (char *)text };
	struct auxcap_pmu pmu = { .name = (char *)"p", .nr_caps = 1, .caps = &cap };
	static const int bases[] = { 0, 10, 16 };

	FUZZ_CHECK(auxcap_pmu_cap_text(&pmu, "c") == text);
	for (size_t i = 0; i < 3; i++) {
		uint64_t v = 0xdead, ref;
		char *end;
		int r = auxcap_pmu_cap_u64(&pmu, "c", bases[i], &v);

		if (r < 0) {
			FUZZ_CHECK(r == -EBADMSG && v == 0xdead);
			continue;
		}
		/* strtoull accepts signs and spaces the parser refuses; compare digits only. */
		FUZZ_CHECK(text[0] != '-' && text[0] != '+' && text[0] != ' ');
		errno = 0;
		if (bases[i] == 0 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
			ref = strtoull(text + 2, &end, 16);
		else
			ref = strtoull(text, &end, bases[i] ? bases[i] : 10); /* base 0: decimal */
		FUZZ_CHECK(errno == 0 && *end == '\0' && ref == v);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	if (size > MAX_INPUT)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	check_format(text);
	check_cpulist(text);
	check_cap(text);
	free(text);
	return 0;
}
