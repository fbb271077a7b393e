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
 *   restart     then two system calls interrupted by a signal and restarted by the kernel:
 *               a read() from a pipe by a SIGUSR1 whose handler has SA_RESTART, and a
 *               300 ms nanosleep() by a SIGWINCH, which is ignored (a traced task still
 *               wakes for it); a child process sends both once the call blocks
 *   thread      then start a thread that stores to the global the loop stores to, and join it
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/syscall.h>
#include <sys/wait.h>

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

/* Thread mode's thread: stores its argument, as the loop does. */
static void *on_thread(void *arg)
{
	tracer_prog_store_target = (unsigned long)arg;
	return arg;
}

static int restart_pipe[2] = { -1, -1 };

/* Restart mode's handler: counts, and tells the child it ran. */
static void on_usr1_restart(int sig)
{
	(void)sig;
	tracer_prog_signals++;
	(void)!write(restart_pipe[1], "h", 1);
}

/* Wait until process @pid is blocked in system call @nr (its /proc/PID/syscall: the call's
 * number, -1 when stopped outside one, "running" while it runs). */
static void wait_in_call(pid_t pid, long nr)
{
	char path[64], buf[32];

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	for (;;) {
		FILE *f = fopen(path, "r");
		long n = -2;

		if (f) {
			if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%ld", &n) != 1)
				n = -2;
			fclose(f);
		}
		if (n == nr)
			return;
		usleep(1000);
	}
}

/* The restart mode (see the top): 0 when both calls did what they were asked, as if never
 * interrupted. */
static int restart_calls(void)
{
	int data[2], told[2];
	struct sigaction sa;
	struct timespec ts = { 0, 300000000 };
	pid_t parent = getpid(), child;
	char c = 0;
	int st;

	if (pipe(data) < 0 || pipe(told) < 0)
		return 10;
	restart_pipe[1] = told[1];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1_restart;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	child = fork();
	if (child < 0)
		return 11;
	if (child == 0) {
		wait_in_call(parent, SYS_read);
		kill(parent, SIGUSR1);
		if (read(told[0], &c, 1) != 1) /* the handler ran: the read was interrupted */
			_exit(1);
		(void)!write(data[1], "d", 1);
		wait_in_call(parent, SYS_clock_nanosleep);
		kill(parent, SIGWINCH);
		_exit(0);
	}
	if (read(data[0], &c, 1) != 1 || c != 'd' || tracer_prog_signals != 1)
		return 12;
	if (nanosleep(&ts, NULL) != 0)
		return 13;
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 14;
	return 0;
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
	if (argc > 2 && strcmp(argv[2], "restart") == 0) {
		int r = restart_calls();

		if (r)
			return r;
	}
	if (argc > 2 && strcmp(argv[2], "thread") == 0) {
		pthread_t t;
		void *ret = NULL;

		if (pthread_create(&t, NULL, on_thread, (void *)5ul) != 0 ||
		    pthread_join(t, &ret) != 0 || ret != (void *)5ul)
			return 15;
	}
	if (argc > 2 && strcmp(argv[2], "exec") == 0) {
		execl("/proc/self/exe", argv[0], "2", (char *)NULL);
		return 3;
	}
	return sum == 1 ? 1 : 0;
}
