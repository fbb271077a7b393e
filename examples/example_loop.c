/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A tiny program with a known call structure: main -> run -> work -> {leaf_add, leaf_mul}.
 * It spends its time in user space, makes a few system calls, and prints one checksum line.
 *
 * Usage: auxcap-example-loop [ITERATIONS] [CHILDREN] [EXECS]
 *   ITERATIONS  outer loop count (default 2000000)
 *   CHILDREN    number of child processes that run the same loop (default 0)
 *   EXECS       times the program, after its loop, execs itself to run it again (default 0):
 *               one process, several images of the program one after the other
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
	long execs = argc > 3 ? strtol(argv[3], NULL, 0) : 0;

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
	if (execs > 0) {
		char iters[32], more[32];

		snprintf(iters, sizeof(iters), "%lu", n);
		snprintf(more, sizeof(more), "%ld", execs - 1);
		fflush(stdout);
		execl("/proc/self/exe", argv[0], iters, "0", more, (char *)NULL);
		perror("exec /proc/self/exe");
		return 1;
	}
	return 0;
}
