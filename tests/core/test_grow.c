/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap_grow() and auxcap_grow_array() (core/grow.h), the doubling of the library's buffers:
 * sizes they pick, contents kept, nothing done when there is room, and a request too large to
 * double to fails with the buffer left as it was.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "grow.h"

static void test_grow_doubles_from_first(void **state)
{
	char *p = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(auxcap_grow(&p, &cap, 1, 256), 0);
	assert_non_null(p);
	assert_int_equal(cap, 256);
	/* room already: nothing moves */
	{
		char *before = p;

		assert_int_equal(auxcap_grow(&p, &cap, 256, 4096), 0);
		assert_ptr_equal(p, before);
		assert_int_equal(cap, 256);
	}
	/* doubles from the size it has, as often as needed */
	assert_int_equal(auxcap_grow(&p, &cap, 257, 4096), 0);
	assert_int_equal(cap, 512);
	assert_int_equal(auxcap_grow(&p, &cap, 5000, 4096), 0);
	assert_int_equal(cap, 8192);
	free(p);
}

static void test_grow_keeps_bytes(void **state)
{
	uint8_t *p = NULL;
	size_t cap = 0, len = 0;

	(void)state;
	/* appends of growing sizes, each checked with everything before it */
	for (size_t k = 1; k <= 200; k++) {
		assert_int_equal(auxcap_grow(&p, &cap, len + k, 16), 0);
		assert_true(cap >= len + k);
		memset(p + len, (int)(k & 0xff), k);
		len += k;
	}
	len = 0;
	for (size_t k = 1; k <= 200; k++) {
		for (size_t i = 0; i < k; i++)
			assert_int_equal(p[len + i], k & 0xff);
		len += k;
	}
	free(p);
}

static void test_grow_too_large_leaves_buffer(void **state)
{
	unsigned char *p = NULL, *before;
	size_t cap = 0;

	(void)state;
	assert_int_equal(auxcap_grow(&p, &cap, 100, 64), 0);
	memset(p, 0x5a, 100);
	before = p;
	/* no doubling of 128 reaches it without overflowing size_t */
	assert_int_equal(auxcap_grow(&p, &cap, SIZE_MAX, 64), -ENOMEM);
	assert_ptr_equal(p, before);
	assert_int_equal(cap, 128);
	assert_int_equal(p[99], 0x5a);
	/* from empty too */
	{
		char *q = NULL;
		size_t qcap = 0;

		assert_int_equal(auxcap_grow(&q, &qcap, SIZE_MAX / 2 + 2, 1), -ENOMEM);
		assert_null(q);
		assert_int_equal(qcap, 0);
	}
	free(p);
}

/* Arrays of larger elements: the capacity counts elements, the bytes kept are whole elements,
 * and a capacity whose bytes would not fit in size_t is refused. */
static void test_grow_array_counts_elements(void **state)
{
	struct el {
		uint64_t a, b, c;
	} *p = NULL, *before;
	size_t cap = 0;

	(void)state;
	assert_int_equal(auxcap_grow_array(&p, &cap, 10, 64, sizeof(*p)), 0);
	assert_int_equal(cap, 64);
	for (size_t i = 0; i < 64; i++)
		p[i] = (struct el){ i, ~i, i * 3 };
	assert_int_equal(auxcap_grow_array(&p, &cap, 65, 64, sizeof(*p)), 0);
	assert_int_equal(cap, 128);
	for (size_t i = 0; i < 64; i++) {
		assert_int_equal(p[i].a, i);
		assert_int_equal(p[i].b, ~i);
		assert_int_equal(p[i].c, i * 3);
	}
	p[127].c = 7; /* the whole new capacity is there (ASan checks) */
	before = p;
	/* more elements than size_t bytes can hold */
	assert_int_equal(auxcap_grow_array(&p, &cap, SIZE_MAX / sizeof(*p) + 1, 64, sizeof(*p)),
			 -ENOMEM);
	assert_ptr_equal(p, before);
	assert_int_equal(cap, 128);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow_doubles_from_first),
		cmocka_unit_test(test_grow_keeps_bytes),
		cmocka_unit_test(test_grow_too_large_leaves_buffer),
		cmocka_unit_test(test_grow_array_counts_elements),
	};

	return cmocka_run_group_tests_name("core/grow", tests, NULL, NULL);
}
