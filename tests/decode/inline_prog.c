/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program whose functions are inlined into each other, built with DWARF whatever the build
 * type: the subject of decode's --inline tests (tests/decode/test_elf_file.c compares every
 * address of outer() with addr2line -i; tests/cli/test_report.sh traces it).  Call structure:
 * main -> outer (a real call) -> middle -> inner (both inlined into outer), and main -> twice
 * (inner inlined twice into it, at two lines).
 */
#include <stdio.h>
#include <stdlib.h>

unsigned long outer(unsigned long x);
unsigned long twice(unsigned long x);

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long inner(unsigned long x)
{
	sink = x;
	return x * 3 + (x >> 2);
}

static inline __attribute__((always_inline)) unsigned long middle(unsigned long x)
{
	unsigned long r = inner(x);

	sink = r;
	return r ^ (r << 1);
}

__attribute__((noinline)) unsigned long outer(unsigned long x)
{
	unsigned long r = middle(x);

	sink = r;
	return r + 1;
}

__attribute__((noinline)) unsigned long twice(unsigned long x)
{
	unsigned long a = inner(x);
	unsigned long b = inner(a);

	return a + b;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000, s = 0;

	for (unsigned long i = 0; i < n; i++)
		s += outer(i) + twice(i);
	printf("%lu\n", s);
	return 0;
}
