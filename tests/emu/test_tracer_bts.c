/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The live tracer with the Intel BTS encoder: the 24-byte records must be exactly the taken
 * branches the tracer observed, in order.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/wait.h>

#include <cmocka.h>

#include "tracer_run.h"
#include "util.h"

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static bool is_taken_branch(const struct tr_insn *e)
{
	return e->traced && e->taken && !e->ended && !e->async && e->kind >= AUXCAP_TRACER_COND &&
	       e->kind <= AUXCAP_TRACER_RETURN;
}

static void check_records(const struct tr_run *run)
{
	size_t rec = 0, nrec = run->trace_len / 24, not_taken = 0;

	assert_int_equal(run->trace_len % 24, 0);
	assert_int_equal(run->stats.packets, nrec);
	for (size_t i = 0; i < run->nlog; i++) {
		const struct tr_insn *e = &run->log[i];
		const uint8_t *r;

		if (e->kind == AUXCAP_TRACER_COND && !e->taken)
			not_taken++;
		if (!is_taken_branch(e))
			continue;
		assert_true(rec < nrec);
		r = run->trace + rec * 24;
		assert_int_equal(get_le64(r), e->ip);
		assert_int_equal(get_le64(r + 8), e->next_ip);
		assert_int_equal(get_le64(r + 16), 0x10); /* predicted */
		rec++;
	}
	assert_int_equal(rec, nrec);
	assert_true(not_taken > 0); /* and none of those made a record */
}

static void test_bts_records_are_the_taken_branches(void **state)
{
	char *argv[] = { (char *)tr_prog(), "20", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_BTS };
	struct tr_run run;

	(void)state;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	printf("# intel_bts: %llu instructions, %llu branches, %zu records\n",
	       (unsigned long long)run.stats.insns, (unsigned long long)run.stats.branches,
	       run.trace_len / 24);
	assert_true(run.trace_len / 24 > 1000);
	check_records(&run);
	tr_run_fini(&run);
}

static void test_bts_filter_keeps_branches_from_the_executable(void **state)
{
	char *argv[] = { (char *)tr_prog(), "30", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_BTS };
	struct tr_run run;
	uint64_t lo, hi, fn, fn_size;
	size_t jump_table = 0;

	(void)state;
	assert_int_equal(tr_elf_text(argv[0], &lo, &hi), 0);
	opts.filter_start = lo;
	opts.filter_end = hi;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	check_records(&run);
	for (size_t i = 0; i < run.trace_len / 24; i++) {
		uint64_t from = get_le64(run.trace + i * 24);

		assert_true(from >= lo && from < hi);
	}
	/*
	 * The switch's indirect jump through the table runs for odd i with (i & 7) != 7:
	 * 15 odd values below 30, minus 7, 15 and 23.
	 */
	assert_int_equal(tr_elf_symbol(argv[0], "classify", &fn, &fn_size), 0);
	for (size_t i = 0; i < run.nlog; i++)
		jump_table += run.log[i].kind == AUXCAP_TRACER_IND_JUMP && run.log[i].ip >= fn &&
			      run.log[i].ip < fn + fn_size;
	assert_int_equal(jump_table, 12);
	tr_run_fini(&run);
}

/* An exec in the traced thread: new COMM and mappings, tracing goes on in the new image. */
static void test_bts_exec_is_followed(void **state)
{
	char *argv[] = { (char *)tr_prog(), "3", "exec", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_BTS };
	struct tr_run run;
	size_t execs = 0, exe_maps = 0;
	char want[4096];

	(void)state;
	assert_non_null(realpath(argv[0], want));
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	assert_int_equal(run.ncomm, 2);
	assert_int_equal(run.comm_exec, 2);
	/* The kernel names the task after the exec'd path's last component: /proc/self/exe. */
	assert_string_equal(run.comm, "exe");
	assert_int_equal(run.nstart, 1);
	assert_int_equal(run.nexit, 1);
	assert_true(WIFEXITED(run.exit_status));
	assert_int_equal(WEXITSTATUS(run.exit_status), 0);
	/* The executable is mapped once per image, the second time after the second COMM. */
	for (size_t i = 0; i < run.nmaps; i++) {
		if (strcmp(run.maps[i].path, want) != 0)
			continue;
		assert_true(exe_maps == 0 || i >= run.comm_at_map[1]);
		exe_maps++;
	}
	assert_int_equal(exe_maps, 2);
	/* The execve system call is followed by the new image's first instruction. */
	for (size_t i = 0; i + 1 < run.nlog; i++) {
		const struct tr_insn *e = &run.log[i];

		if (e->kind != AUXCAP_TRACER_FAR || e->next_ip == e->ip + 2)
			continue;
		assert_int_equal(run.log[i + 1].ip, e->next_ip);
		execs++;
	}
	assert_int_equal(execs, 1);
	check_records(&run);
	tr_run_fini(&run);
}

/*
 * A child forked beforehand and waiting before its exec (as auxcap record starts a command to
 * open its events on the pid) is traced from the exec on, exactly like a started one; a child
 * whose exec fails is reported as such.
 */
static void test_bts_start_child_adopts_a_waiting_child(void **state)
{
	char *argv[] = { (char *)tr_prog(), "3", NULL };
	char *bad[] = { "/nonexistent/auxcap-prog", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_BTS };
	struct tr_run run;
	int go;
	pid_t pid;

	(void)state;
	pid = test_spawn(argv, &go);
	assert_true(pid > 0);
	assert_int_equal(tr_start_child(&run, &opts, pid, go), 0);
	assert_int_equal(run.ncomm, 1);
	assert_int_equal(run.comm_exec, 1);
	assert_int_equal(run.nstart, 1);
	assert_int_equal(run.tid, pid);
	assert_int_equal(run.nexit, 1);
	assert_true(WIFEXITED(run.exit_status));
	assert_int_equal(WEXITSTATUS(run.exit_status), 0);
	assert_true(run.stats.insns > 1000);
	assert_true(run.order_ok);
	check_records(&run);
	tr_run_fini(&run);
	/* The tracer reaped it: nothing left to wait for. */
	assert_int_equal(waitpid(pid, NULL, WNOHANG), -1);

	pid = test_spawn(bad, &go);
	assert_true(pid > 0);
	assert_int_equal(tr_start_child(&run, &opts, pid, go), -ENOEXEC);
	assert_int_equal(run.nstart, 0);
	assert_int_equal(run.trace_len, 0);
	tr_run_fini(&run);
	assert_int_equal(waitpid(pid, NULL, WNOHANG), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bts_records_are_the_taken_branches),
		cmocka_unit_test(test_bts_filter_keeps_branches_from_the_executable),
		cmocka_unit_test(test_bts_exec_is_followed),
		cmocka_unit_test(test_bts_start_child_adopts_a_waiting_child),
	};

	return cmocka_run_group_tests_name("emu/tracer_bts", tests, NULL, NULL);
}
