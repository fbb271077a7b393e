/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A per-CPU Intel PT stream that ran two processes with different code at the same address
 * (two programs linked at one address, or one run with ASLR off): the decoder must read each
 * stretch of trace with the code of the process the CPU ran then, which the capture's
 * context switches tell.  Process A (pid 10) and B (pid 20) both map their own file at
 * CODE_ADDR:
 *
 *   A: +0x00 call +0x20; +0x05 syscall; +0x07 jmp +0x00;  +0x20 ret
 *   B: +0x00 call +0x40; +0x05 syscall; +0x07 jmp +0x00;  +0x40 ret
 *
 * Each loop iteration is a call, a return (a TIP) and a syscall.  The trace is made here
 * with libipt's encoder, three ways:
 *   - user only, CPU-wide switch records (record -a): the syscall that switches leaves
 *     tracing (TIP.PGD), which resumes in B (TIP.PGE);
 *   - the same with per-task switch records (a command recorded per CPU);
 *   - user and kernel: the syscall enters a kernel stub (a mapping of every process) that
 *     loads CR3 (a PIP packet) and returns with sysret; at the switch, into B.
 * The calls decoded must go to +0x20 in A's stretch and +0x40 in B's, each on its thread.
 * Reading the whole trace with one image of both programs gets one of the two wrong.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <intel-pt.h>

#include "auxcap/backend.h"
#include "auxcap/decode.h"
#include "capture_builder.h"
#include "pt_synth.h"
#include "util.h"

#define CODE_ADDR 0x401000ull
#define KERNEL_ADDR 0xffffffff81000000ull
#define T0 1000000000ull /* TSC ticks = ns: TIME_CONV is the identity */
#define PID_A 10
#define PID_B 20
#define ITERS 20 /* loop iterations of each process */

enum mode { USER_CPU_WIDE, USER_PER_TASK, KERNEL_PIP };

static char g_dir[256];

static void write_file(const char *path, const uint8_t *buf, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* The program whose function is at +@func. */
static void write_program(const char *path, unsigned int func)
{
	uint8_t code[0x48];

	memset(code, 0x90, sizeof(code));
	code[0] = 0xe8; /* call rel32 */
	code[1] = (uint8_t)(func - 5);
	code[2] = code[3] = code[4] = 0;
	code[5] = 0x0f; /* syscall */
	code[6] = 0x05;
	code[7] = 0xeb; /* jmp rel8 to +0x00 */
	code[8] = (uint8_t)(0x100 - 9);
	code[func] = 0xc3;
	write_file(path, code, sizeof(code));
}

/*
 * One process's iterations from +0x00, the i-th at TSC @tsc + 10 i: the return (TIP to
 * +0x05), and the syscall: in user mode tracing stops there (TIP.PGD), and resumes at +0x07
 * (TIP.PGE) unless it is the last; with the kernel traced the syscall goes to the stub
 * (TIP), which loads CR3 (PIP, @cr3), and sysret comes back (TIP) unless it is the last.
 * With @leaves, the last syscall (at TSC @tsc + 300 with @exact, else with no timestamp of
 * its own) comes back at TSC @tsc_back in the other process.
 */
static void iterations(struct pts *x, enum mode m, uint64_t tsc, uint64_t cr3, bool leaves,
		       uint64_t tsc_back, bool exact)
{
	for (int i = 0; i < ITERS; i++) {
		bool last = i == ITERS - 1;

		pts_put_tsc(x, tsc + 10 * (uint64_t)i);
		pts_put_ip(x, ppt_tip, pt_ipc_update_16, CODE_ADDR + 0x05);
		if (last && leaves && exact)
			pts_put_tsc(x, tsc + 300);
		if (m == KERNEL_PIP) {
			pts_put_ip(x, ppt_tip, pt_ipc_sext_48, KERNEL_ADDR);
			if (last && leaves) {
				pts_put_tsc(x, tsc_back);
				cr3 = 0x2000; /* the other process's page tables */
			}
			x->p.payload.pip.cr3 = cr3;
			pts_put(x, ppt_pip);
			if (!last || leaves)
				pts_put_ip(x, ppt_tip, pt_ipc_sext_48, CODE_ADDR + 0x07);
		} else {
			pts_put_ip(x, ppt_tip_pgd, pt_ipc_suppressed, 0);
			if (last && leaves)
				pts_put_tsc(x, tsc_back);
			if (!last || leaves)
				pts_put_ip(x, ppt_tip_pge, pt_ipc_sext_48, CODE_ADDR + 0x07);
		}
	}
}

/* A's loop, the switch (the CPU's records: T0 + 500 .. 600), B's loop from T0 + 1000. */
static size_t gen_trace(uint8_t *buf, size_t size, enum mode m, bool exact)
{
	struct pts x;

	pts_begin(&x, buf, size);
	pts_psb(&x, T0, m == KERNEL_PIP ? 0x1000 : 0);
	pts_put_ip(&x, ppt_tip_pge, pt_ipc_sext_48, CODE_ADDR);
	iterations(&x, m, T0, 0x1000, true, T0 + 1000, exact);
	/* B from +0x07: jmp, call +0x40; the last sysret is not traced */
	iterations(&x, m, T0 + 1010, 0x2000, false, 0, exact);
	return pts_end(&x);
}

/*
 * Without @exact, A's last stretch (its last call and return, the syscall where tracing
 * stops) has no timestamp after it until B's: its events are spread up to the switch, not
 * over B's time.
 */
static void run(enum mode m, bool exact)
{
	static uint8_t trace[8192];
	struct auxcap_decode_opts o = { .sz = sizeof(o) };
	struct auxcap_perf_time_conv tc = { 0 };
	uint64_t info[17] = { 0 };
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d;
	char path[300], code_a[300], code_b[300], kernel[300], err[256] = "";
	size_t len, calls_a = 0, calls_b = 0, others = 0, gaps = 0, stops[2] = { 0 };
	uint64_t last_a = 0, first_b = UINT64_MAX;
	struct cb *b;
	int r;

	if (!auxcap_backend_find("intel_pt"))
		skip();
	snprintf(code_a, sizeof(code_a), "%s/a.bin", g_dir);
	snprintf(code_b, sizeof(code_b), "%s/b.bin", g_dir);
	snprintf(kernel, sizeof(kernel), "%s/kernel.bin", g_dir);
	write_program(code_a, 0x20);
	write_program(code_b, 0x40);
	/* mov %rax, %cr3; sysretq */
	write_file(kernel, (const uint8_t[]){ 0x0f, 0x22, 0xd8, 0x48, 0x0f, 0x07 }, 6);
	len = gen_trace(trace, sizeof(trace), m, exact);

	snprintf(path, sizeof(path), "%s/tasks-%d-%d.data", g_dir, (int)m, exact);
	b = cb_open(path, m == KERNEL_PIP ? "intel_pt//" : "intel_pt//u", 0x7000);
	assert_non_null(b);
	tc.time_mult = 1;
	tc.cap_user_time_zero = true;
	cb_time_conv(b, &tc);
	cb_auxtrace_info(b, AUXCAP_AUXTRACE_INTEL_PT, info, 17);
	cb_comm(b, PID_A, PID_A, "a", true, T0 - 1000, 0);
	cb_comm(b, PID_B, PID_B, "b", true, T0 - 990, 1);
	cb_mmap2(b, PID_A, PID_A, CODE_ADDR, 4096, 0, 5, code_a, T0 - 900, 0);
	cb_mmap2(b, PID_B, PID_B, CODE_ADDR, 4096, 0, 5, code_b, T0 - 890, 1);
	if (m == KERNEL_PIP)
		cb_mmap2(b, (uint32_t)-1, (uint32_t)-1, KERNEL_ADDR, 4096, 0, 5, kernel,
			 T0 - 2000, 0);
	cb_itrace_start(b, PID_A, PID_A, T0 - 800, 0);
	/* CPU 0 goes from A to B at T0 + 500 .. T0 + 600 */
	if (m == USER_PER_TASK) {
		cb_switch_task(b, true, PID_A, PID_A, T0 + 500, 0);
		cb_switch_task(b, false, PID_B, PID_B, T0 + 600, 0);
	} else {
		cb_switch(b, true, PID_A, PID_A, PID_B, PID_B, T0 + 500, 0);
		cb_switch(b, false, PID_B, PID_B, PID_A, PID_A, T0 + 600, 0);
	}
	cb_round(b);
	cb_aux(b, 0, len, 0, PID_A, PID_A, T0 + 5000, 0);
	cb_auxtrace(b, trace, len, 0, 0, (uint32_t)-1, 0);
	cb_round(b);
	assert_int_equal(cb_close(b), 0);

	o.errbuf = err;
	o.errlen = sizeof(err);
	if (auxcap_decode_open(path, &o, &d) < 0)
		fail_msg("auxcap_decode_open: %s", err);
	assert_int_equal(auxcap_decode_get_info(d)->nr_queues, 1);
	while ((r = auxcap_decode_next(d, &ev)) == 1) {
		const struct auxcap_trace_event *t = ev->trace;

		if (ev->kind != AUXCAP_DECODE_TRACE)
			continue;
		if (t->kind == AUXCAP_TRACE_GAP) {
			gaps++;
			continue;
		}
		if (t->kind == AUXCAP_TRACE_DISABLE) {
			assert_true(ev->tid == PID_A || ev->tid == PID_B);
			stops[ev->tid == PID_B]++;
		}
		if (t->kind != AUXCAP_TRACE_BRANCH || t->branch != AUXCAP_BR_CALL)
			continue;
		if (t->ip == CODE_ADDR && t->to == CODE_ADDR + 0x20) {
			calls_a++;
			assert_int_equal(ev->tid, PID_A);
			last_a = ev->time;
		} else if (t->ip == CODE_ADDR && t->to == CODE_ADDR + 0x40) {
			calls_b++;
			assert_int_equal(ev->tid, PID_B);
			if (ev->time < first_b)
				first_b = ev->time;
		} else {
			others++;
		}
	}
	assert_int_equal(r, 0);
	assert_int_equal(gaps, 0);
	assert_int_equal(others, 0);
	assert_int_equal(calls_a, ITERS);
	assert_int_equal(calls_b, ITERS);
	assert_true(last_a < first_b);
	if (m != KERNEL_PIP) {
		/* every syscall of each stops tracing on its own thread */
		assert_int_equal(stops[0], ITERS);
		assert_int_equal(stops[1], ITERS);
	}
	auxcap_decode_close(d);
}

static void test_user_cpu_wide(void **state)
{
	(void)state;
	run(USER_CPU_WIDE, true);
	run(USER_CPU_WIDE, false);
}

static void test_user_per_task(void **state)
{
	(void)state;
	run(USER_PER_TASK, true);
	run(USER_PER_TASK, false);
}

static void test_kernel_pip(void **state)
{
	(void)state;
	run(KERNEL_PIP, true);
	run(KERNEL_PIP, false);
}

static int setup(void **state)
{
	(void)state;
	return test_tmpdir(g_dir, sizeof(g_dir), "cpu-tasks");
}

static int teardown(void **state)
{
	(void)state;
	return test_rmtree(g_dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_user_cpu_wide),
		cmocka_unit_test(test_user_per_task),
		cmocka_unit_test(test_kernel_pip),
	};

	return cmocka_run_group_tests_name("decode/cpu_tasks", tests, setup, teardown);
}
