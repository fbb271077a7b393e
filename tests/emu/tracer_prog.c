/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small program for the live tracer's tests: a loop with direct calls, a conditional, an
 * indirect call through a function pointer, a switch compiled to a jump table, and a known
 * number of stores to and loads from two globals.  No output, exit status 0.
 *
 * Usage: auxcap-tracer-prog [ITERATIONS [signal|exec]]
 *   ITERATIONS  loop count (default 20); stores = loads = ITERATIONS
 *   signal      also raise SIGUSR1 once, handled by a handler that counts it
 *   exec        then exec itself again with 2 iterations
 *   rep         then fill 20,000 bytes with one REP STOSB (x86-64: a ptrace stop per byte)
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile unsigned long tracer_prog_store_target;
volatile unsigned long tracer_prog_load_source = 7;
volatile sig_atomic_t tracer_prog_signals;

typedef unsigned long (*tracer_prog_fn)(unsigned long);

__attribute__((noinline)) static unsigned long op_add(unsigned long x)
{
	return x + 3;
}

__attribute__((noinline)) static unsigned long op_mul(unsigned long x)
{
	return x * 5;
}

__attribute__((noinline)) static unsigned long op_xor(unsigned long x)
{
	return x ^ 0x55;
}

static tracer_prog_fn const ops[] = { op_add, op_mul, op_xor };

__attribute__((noinline)) static unsigned long classify(unsigned long i)
{
	switch (i & 7) {
	case 0:
		return i + 11;
	case 1:
		return i * 13;
	case 2:
		return i ^ 17;
	case 3:
		return i - 19;
	case 4:
		return i << 2;
	case 5:
		return i >> 1;
	case 6:
		return ~i;
	default:
		return 42;
	}
}

static void on_usr1(int sig)
{
	(void)sig;
	tracer_prog_signals++;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 20;
	unsigned long sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		sum += ops[i % 3](i);
		if (i & 1)
			sum += classify(i);
		tracer_prog_store_target = sum;
		sum += tracer_prog_load_source;
	}
	if (argc > 2 && strcmp(argv[2], "signal") == 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
		raise(SIGUSR1);
		if (tracer_prog_signals != 1)
			return 2;
	}
#if defined(__x86_64__)
	if (argc > 2 && strcmp(argv[2], "rep") == 0) {
		static unsigned char buf[20000];
		void *dst = buf;
		unsigned long cnt = sizeof(buf);

		__asm__ volatile("rep stosb" : "+D"(dst), "+c"(cnt) : "a"(0x5a) : "memory");
		if (buf[sizeof(buf) - 1] != 0x5a)
			return 4;
	}
#endif
	if (argc > 2 && strcmp(argv[2], "exec") == 0) {
		execl("/proc/self/exe", argv[0], "2", (char *)NULL);
		return 3;
	}
	return sum == 1 ? 1 : 0;
}
