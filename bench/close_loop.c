/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The traced program of bench/syscall_ring: N close(-1) system calls in a loop (the classic
 * ring-buffer benchmark: each one makes a raw_syscalls:sys_enter record), then it writes what
 * it measured on itself to REPORT: the loop's wall time and its own CPU time.
 *
 * Usage: auxcap-bench-close-loop N REPORT
 * REPORT line: "loop_ns <ns> utime_us <us> stime_us <us> calls <N> pid <pid> nivcsw <n>"
 * (nivcsw: the times it was preempted)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long long t0, t1;
	struct rusage ru;
	long n;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: %s N REPORT\n", argv[0]);
		return 1;
	}
	n = strtol(argv[1], NULL, 0);
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		(void)close(-1);
	t1 = now_ns();
	getrusage(RUSAGE_SELF, &ru);
	f = fopen(argv[2], "w");
	if (!f) {
		perror(argv[2]);
		return 1;
	}
	fprintf(f, "loop_ns %llu utime_us %lld stime_us %lld calls %ld pid %ld nivcsw %ld\n",
		t1 - t0, (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
		(long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec, n, (long)getpid(),
		ru.ru_nivcsw);
	return fclose(f) ? 1 : 0;
}
