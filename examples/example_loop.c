/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A tiny program with a known call structure: main -> run -> work -> {leaf_add, leaf_mul}.
 * It spends its time in user space, makes a few system calls, and prints one checksum line.
 *
 * Usage: auxcap-example-loop [ITERATIONS] [CHILDREN]
 *   ITERATIONS  outer loop count (default 2000000)
 *   CHILDREN    number of child processes that run the same loop (default 0)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

unsigned long leaf_add(unsigned long a, unsigned long b);
unsigned long leaf_mul(unsigned long a, unsigned long b);
unsigned long work(unsigned long i);
unsigned long run(unsigned long n);

__attribute__((noinline)) unsigned long leaf_add(unsigned long a, unsigned long b)
{
	return a + b;
}

__attribute__((noinline)) unsigned long leaf_mul(unsigned long a, unsigned long b)
{
	return a * b + 1;
}

__attribute__((noinline)) unsigned long work(unsigned long i)
{
	if (i & 1)
		return leaf_add(i, 3);
	return leaf_mul(i, 5);
}

__attribute__((noinline)) unsigned long run(unsigned long n)
{
	unsigned long sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		sum += work(i);
		if ((i & 0xfffff) == 0)
			(void)getppid(); /* a system call now and then */
	}
	return sum;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 2000000;
	long children = argc > 2 ? strtol(argv[2], NULL, 0) : 0;

	for (long c = 0; c < children; c++) {
		pid_t pid = fork();

		if (pid == 0) {
			printf("child %ld sum %lu\n", c, run(n));
			fflush(stdout);
			_exit(0);
		}
	}
	printf("sum %lu\n", run(n));
	while (wait(NULL) > 0)
		;
	return 0;
}
