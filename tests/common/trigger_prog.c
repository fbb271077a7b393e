/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A subject for function triggers: calls trigger_point() a known number of times.
 *
 * Usage: auxcap-trigger-prog HITS GAP_US [wait]
 *   HITS    calls of trigger_point()
 *   GAP_US  microseconds between calls (0: back to back, a burst); a few system calls are
 *           made between calls so a raw_syscalls flight recorder has records to keep
 *   wait    print "ready PID" and wait for SIGUSR1 first (to attach with -p / -t)
 * Prints "hits N" at the end.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

unsigned long trigger_point(unsigned long i);

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long trigger_point(unsigned long i)
{
	__asm__ volatile("" ::: "memory");
	return i * 2 + 1;
}

int main(int argc, char **argv)
{
	unsigned long hits = argc > 1 ? strtoul(argv[1], NULL, 0) : 10;
	unsigned long gap = argc > 2 ? strtoul(argv[2], NULL, 0) : 10000;
	unsigned long i;

	if (argc > 3 && !strcmp(argv[3], "wait")) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		sigwait(&set, &sig);
	}
	for (i = 0; i < hits; i++) {
		sink += trigger_point(i);
		for (int k = 0; k < 8; k++)
			(void)getppid();
		if (gap) {
			struct timespec ts = { (time_t)(gap / 1000000),
					       (long)(gap % 1000000) * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	printf("hits %lu\n", i);
	return 0;
}
