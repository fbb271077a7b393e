/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program whose functions are inlined into each other, built with DWARF whatever the build
 * type: the subject of decode's --inline tests (tests/decode/test_elf_file.c compares every
 * address of outer() with addr2line -i; tests/decode/check_inline.py traces it).  Call
 * structure: main -> outer (a real call) -> middle -> inner (both inlined into outer), and
 * main -> twice (inner inlined twice into it, at two lines).  And main -> three functions with
 * the names a C++ compiler and a Rust compiler (legacy and v0 mangling) would give them, for
 * the tests of demangling.
 */
#include <stdio.h>
#include <stdlib.h>

unsigned long outer(unsigned long x);
unsigned long twice(unsigned long x);
/* auxcap::demo::scale(unsigned long), a template's const method, Rust's auxcap::shift twice */
unsigned long cxx_scale(unsigned long x) __asm__("_ZN6auxcap4demo5scaleEm");
unsigned long cxx_get(unsigned long x) __asm__("_ZNK6auxcap3BoxIiE3getEv");
unsigned long rust_legacy(unsigned long x) __asm__("_ZN6auxcap5shift17h0123456789abcdefE");
unsigned long rust_v0(unsigned long x) __asm__("_RNvCs1234_6auxcap5shift");

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

__attribute__((noinline)) unsigned long cxx_scale(unsigned long x)
{
	return x * 7;
}

__attribute__((noinline)) unsigned long cxx_get(unsigned long x)
{
	return x + 5;
}

__attribute__((noinline)) unsigned long rust_legacy(unsigned long x)
{
	return x >> 1;
}

__attribute__((noinline)) unsigned long rust_v0(unsigned long x)
{
	return x << 1;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000, s = 0;

	for (unsigned long i = 0; i < n; i++)
		s += outer(i) + twice(i);
	s = cxx_scale(s) + cxx_get(s) + rust_legacy(s) + rust_v0(s);
	printf("%lu\n", s);
	return 0;
}
