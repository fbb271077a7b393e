/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sorted arrays of 64-bit values (times at which something changes): sorting them without
 * repeats, and finding the stretch a value falls in.  Internal; not installed.
 *
 *	n = auxcap_sort_unique_u64(bounds, n);
 *	k = auxcap_upper_bound_u64(bounds, n, t);  // t lies in [bounds[k - 1], bounds[k])
 *	k = auxcap_upper_bound_by_key(v, n, sizeof(*v), t);  // the same over structs keyed
 *							      // by a leading uint64_t
 */
#ifndef AUXCAP_SORTED_H
#define AUXCAP_SORTED_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* qsort() comparison of two uint64_t, ascending. */
static inline int auxcap_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort @v (@n values) ascending and drop repeats; returns how many are left. */
static inline size_t auxcap_sort_unique_u64(uint64_t *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof(*v), auxcap_cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!k || v[i] != v[k - 1])
			v[k++] = v[i];
	return k;
}

/*
 * How many of the @n elements at @v (@stride bytes apart, each starting with its uint64_t
 * key, ascending) have a key at most @t: the index of the first above it.
 */
static inline size_t auxcap_upper_bound_by_key(const void *v, size_t n, size_t stride,
					       uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t key;

		memcpy(&key, (const char *)v + mid * stride, sizeof(key));
		if (key <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* How many of the @n ascending values @v are at most @t: the index of the first above it. */
static inline size_t auxcap_upper_bound_u64(const uint64_t *v, size_t n, uint64_t t)
{
	return auxcap_upper_bound_by_key(v, n, sizeof(*v), t);
}

#endif
