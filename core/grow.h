/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Growing a buffer by doubling: the one way the library's append buffers (the perf.data
 * feature buffer, an ELF file's name pool, the line file, the live tracer's trace) and the
 * decode stage's sample-context arrays get room.
 * Doubling keeps appends amortized constant: one realloc() per append is quadratic wherever
 * realloc() moves the block (and ASan always moves it).  Internal; not installed.
 *
 *	char *p = NULL;
 *	size_t len = 0, cap = 0;
 *
 *	if (auxcap_grow(&p, &cap, len + n, 256) < 0)
 *		return -ENOMEM;
 *	memcpy(p + len, data, n);
 *	len += n;
 */
#ifndef AUXCAP_GROW_H
#define AUXCAP_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Make the array *@bufp (a pointer to its elements of @size bytes, NULL when none) of *@cap
 * elements hold at least @need: its capacity doubles, from *@cap or, for an empty array, from
 * @first (> 0), until it does.  The elements it held are kept.
 *
 * Returns 0 (*@bufp and *@cap updated; nothing done when it is big enough already), or
 * -ENOMEM (out of memory, or @need too large to double to), leaving both as they were.
 */
static inline int auxcap_grow_array(void *bufp, size_t *cap, size_t need, size_t first,
				    size_t size)
{
	void *old, *p;
	size_t c;

	if (need <= *cap)
		return 0;
	c = *cap ? *cap : first;
	while (c < need) {
		if (c > SIZE_MAX / 2 / size)
			return -ENOMEM;
		c *= 2;
	}
	if (c > SIZE_MAX / size)
		return -ENOMEM;
	memcpy(&old, bufp, sizeof(old)); /* the pointer, whichever object type it points to */
	p = realloc(old, c * size);
	if (!p)
		return -ENOMEM;
	memcpy(bufp, &p, sizeof(p));
	*cap = c;
	return 0;
}

/* auxcap_grow_array() of a byte buffer (a char *, unsigned char * or uint8_t *): *@cap and
 * @need count bytes. */
static inline int auxcap_grow(void *bufp, size_t *cap, size_t need, size_t first)
{
	return auxcap_grow_array(bufp, cap, need, first, 1);
}

#endif /* AUXCAP_GROW_H */
