/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A subject whose stack grows while it runs: descend() recurses DEPTH times with a 4 KiB
 * buffer in each frame, writing and reading it, so the stack's mapping grows past what it
 * was at exec (the kernel grows it on the faults, with no system call).
 *
 * Usage: auxcap-stack-prog [DEPTH]   (default 200: about 800 KiB of stack)
 * Prints the sum it computed.
 */
#include <stdio.h>
#include <stdlib.h>

long descend(int n);

__attribute__((noinline)) long descend(int n)
{
	volatile char buf[4096];

	for (int i = 0; i < 4096; i += 64)
		buf[i] = (char)n;
	return n ? descend(n - 1) + buf[64] : buf[128];
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 200;

	printf("stack-prog: %ld\n", descend(depth));
	return 0;
}
