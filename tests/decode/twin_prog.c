/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two programs with the same code at the same addresses and other names: built twice, non-PIE,
 * with -DTWIN=a and -DTWIN=b, main -> run_a -> work_a in one and main -> run_b -> work_b in
 * the other.  Decode must name each one's frames with its own symbols even where one process
 * execs the other (tests/decode/test_decode_live.sh).
 *
 * Usage: auxcap-twin-X ITERATIONS [NEXT]   runs its loop, then execs NEXT ITERATIONS if given
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef TWIN
#error "build with -DTWIN=a or -DTWIN=b"
#endif
#define CAT2(x, y) x##_##y
#define CAT(x, y) CAT2(x, y)
#define WORK CAT(work, TWIN)
#define RUN CAT(run, TWIN)

unsigned long WORK(unsigned long i);
unsigned long RUN(unsigned long n);

__attribute__((noinline)) unsigned long WORK(unsigned long i)
{
	return i & 1 ? i * 3 + 1 : i / 2;
}

__attribute__((noinline)) unsigned long RUN(unsigned long n)
{
	unsigned long sum = 0;

	for (unsigned long i = 0; i < n; i++)
		sum += WORK(i);
	return sum;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000;

	printf("sum %lu\n", RUN(n));
	if (argc > 2) {
		fflush(stdout);
		execl(argv[2], argv[2], argv[1], (char *)NULL);
		perror(argv[2]);
		return 1;
	}
	return 0;
}
