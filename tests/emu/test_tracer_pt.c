/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The live tracer with the Intel PT encoder, checked against libipt's instruction decoder:
 * trace a real program, decode the emitted PT with the program's (and ld.so's, libc's,
 * the vDSO's) code loaded where the MMAP sideband says, and require exactly the instruction
 * sequence and branch outcomes the tracer stepped through.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/syscall.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <intel-pt.h>

#include "tracer_run.h"
#include "util.h"

struct decoded {
	uint64_t *ip;	 /* instruction addresses in decode order */
	uint8_t *cond;	 /* 1 if the instruction is a conditional branch */
	uint8_t *size;	 /* instruction sizes */
	size_t n;	 /* instructions */
	size_t cap;	 /* entries allocated */
	int errors;	 /* decode errors (each followed by a resync) */
	int first_error; /* the first libipt error code (negative) */
	size_t enables;	 /* ptev_enabled events */
	size_t disables; /* ptev_disabled / ptev_async_disabled events */
};

static int read_mem(uint8_t *buffer, size_t size, const struct pt_asid *asid, uint64_t ip,
		    void *ctx)
{
	const struct tr_run *run = ctx;

	(void)asid;
	for (size_t i = 0; i < run->nmaps; i++) {
		const struct tr_map *m = &run->maps[i];
		size_t n;

		if (!m->bytes || ip < m->addr || ip >= m->addr + m->len)
			continue;
		n = (size_t)(m->addr + m->len - ip);
		if (n > size)
			n = size;
		memcpy(buffer, m->bytes + (ip - m->addr), n);
		return (int)n;
	}
	return -pte_nomap;
}

static void push(struct decoded *d, const struct pt_insn *insn)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 65536;
		d->ip = realloc(d->ip, d->cap * sizeof(*d->ip));
		d->cond = realloc(d->cond, d->cap);
		d->size = realloc(d->size, d->cap);
		assert_non_null(d->ip);
		assert_non_null(d->cond);
		assert_non_null(d->size);
	}
	d->ip[d->n] = insn->ip;
	d->cond[d->n] = insn->iclass == ptic_cond_jump;
	d->size[d->n] = insn->size;
	d->n++;
}

static int drain_events(struct pt_insn_decoder *dec, int status, struct decoded *d)
{
	while (status >= 0 && (status & pts_event_pending)) {
		struct pt_event ev;

		status = pt_insn_event(dec, &ev, sizeof(ev));
		if (status < 0)
			break;
		if (ev.type == ptev_enabled)
			d->enables++;
		else if (ev.type == ptev_disabled || ev.type == ptev_async_disabled)
			d->disables++;
	}
	return status;
}

/* Decode @run's trace with the images of its MMAP records into @d. */
static void decode_pt(const struct tr_run *run, struct decoded *d)
{
	struct pt_insn_decoder *dec;
	struct pt_image *image;
	struct pt_config cfg;
	int status;

	memset(d, 0, sizeof(*d));
	pt_config_init(&cfg);
	cfg.begin = run->trace;
	cfg.end = run->trace + run->trace_len;
	dec = pt_insn_alloc_decoder(&cfg);
	assert_non_null(dec);
	image = pt_insn_get_image(dec);
	assert_non_null(image);
	for (size_t i = 0; i < run->nmaps; i++) {
		const struct tr_map *m = &run->maps[i];

		if (m->path[0] == '/')
			assert_int_equal(
				pt_image_add_file(image, m->path, m->pgoff, m->len, NULL, m->addr),
				0);
	}
	assert_int_equal(pt_image_set_callback(image, read_mem, (void *)run), 0);

	for (;;) {
		status = pt_insn_sync_forward(dec);
		if (status == -pte_eos)
			break;
		assert_true(status >= 0);
		for (;;) {
			struct pt_insn insn;

			status = drain_events(dec, status, d);
			if (status < 0 || (status & pts_eos))
				break;
			status = pt_insn_next(dec, &insn, sizeof(insn));
			if (status < 0)
				break;
			push(d, &insn);
		}
		if (status < 0 && status != -pte_eos) {
			if (!d->errors)
				d->first_error = status;
			d->errors++;
		}
	}
	pt_insn_free_decoder(dec);
}

static void decoded_fini(struct decoded *d)
{
	free(d->ip);
	free(d->cond);
	free(d->size);
}

/* The decoded instructions must be exactly the traced entries of the tracer's log. */
static void assert_matches_log(const struct tr_run *run, const struct decoded *d)
{
	size_t j = 0, cond = 0, taken = 0;

	if (d->errors)
		fprintf(stderr, "libipt: %d errors, first: %s\n", d->errors,
			pt_errstr(pt_errcode(d->first_error)));
	assert_int_equal(d->errors, 0);
	for (size_t i = 0; i < run->nlog; i++) {
		const struct tr_insn *e = &run->log[i];

		if (!e->traced)
			continue;
		if (j >= d->n || d->ip[j] != e->ip) {
			fprintf(stderr,
				"mismatch at traced insn %zu (log %zu): tracer %#llx decoder %#llx\n",
				j, i, (unsigned long long)e->ip,
				j < d->n ? (unsigned long long)d->ip[j] : 0ull);
			/* what led there: the tracer's steps and the decoder's instructions */
			for (size_t k = i > 4 ? i - 4 : 0, m = j > 4 ? j - 4 : 0; k <= i; k++, m++)
				fprintf(stderr,
					"  tracer %#llx -> %#llx kind %u | decoder %#llx, %u bytes\n",
					(unsigned long long)run->log[k].ip,
					(unsigned long long)run->log[k].next_ip, run->log[k].kind,
					m < d->n ? (unsigned long long)d->ip[m] : 0ull,
					m < d->n ? (unsigned)d->size[m] : 0u);
			fail();
		}
		/* Branch outcome: the decoder's next IP says taken or not. */
		assert_int_equal(d->cond[j], e->kind == AUXCAP_TRACER_COND);
		if (d->cond[j] && j + 1 < d->n && e->next_ip == d->ip[j + 1]) {
			bool dec_taken = d->ip[j + 1] != d->ip[j] + d->size[j];

			assert_int_equal(dec_taken, e->taken);
			cond++;
			taken += dec_taken;
		}
		j++;
	}
	assert_int_equal(j, d->n);
	assert_true(cond > 0);
	assert_true(taken > 0 && taken < cond);
}

static void test_pt_full_trace_decodes_to_tracer_log(void **state)
{
	char *argv[] = { (char *)tr_prog(), "20", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_PT };
	struct tr_run run;
	struct decoded d;
	bool exe = false, ldso = false;
	char want[PATH_MAX];

	(void)state;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	printf("# intel_pt: %llu instructions (%llu branches, %llu syscalls) in %.2f s = %.0f "
	       "steps/s, %zu trace bytes, %llu packets; %llu instructions run past by a late "
	       "step trap\n",
	       (unsigned long long)run.stats.insns, (unsigned long long)run.stats.branches,
	       (unsigned long long)run.stats.far, run.seconds,
	       (double)run.stats.insns / run.seconds, run.trace_len,
	       (unsigned long long)run.stats.packets, (unsigned long long)run.stats.stepped_over);

	assert_int_equal(run.nlog, run.stats.insns);
	assert_true(run.stats.insns > 1000);
	assert_int_equal(run.stats.trace_bytes, run.trace_len);
	assert_int_equal(run.ncomm, 1);
	assert_int_equal(run.comm_exec, 1);
	assert_string_equal(run.comm, "auxcap-tracer-p");
	assert_int_equal(run.nstart, 1);
	assert_int_equal(run.order_ok, 1);
	assert_int_equal(run.nexit, 1);
	assert_true(WIFEXITED(run.exit_status));
	assert_int_equal(WEXITSTATUS(run.exit_status), 0);
	assert_true(run.log[run.nlog - 1].ended);
	assert_non_null(realpath(argv[0], want));
	for (size_t i = 0; i < run.nmaps; i++) {
		exe |= strcmp(run.maps[i].path, want) == 0;
		ldso |= strstr(run.maps[i].path, "ld-linux") != NULL;
	}
	assert_true(exe);
	assert_true(ldso);

	decode_pt(&run, &d);
	assert_matches_log(&run, &d);
	/* One enable at the start and one per system call return; as many disables. */
	assert_int_equal(d.enables, run.stats.far);
	assert_int_equal(d.disables, run.stats.far);
	decoded_fini(&d);
	tr_run_fini(&run);
}

/*
 * A command adopted before its exec (how auxcap record --emulate starts it) is stopped inside
 * execve; the first single step only finishes that call, and the kernel reports it as a trap
 * at the entry point with nothing run.  That stop is not an instruction: the trace starts
 * with one enable at the entry, and its first instruction runs once (it used to be logged
 * twice, with an asynchronous jump back between: "tr end / tr strt" at every capture's start).
 */
static void test_pt_adopted_child_traced_from_its_entry(void **state)
{
	char *argv[] = { (char *)tr_prog(), "3", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_PT };
	struct tr_run run;
	struct decoded d;
	int go;
	pid_t pid;

	(void)state;
	pid = test_spawn(argv, &go);
	assert_true(pid > 0);
	assert_int_equal(tr_start_child(&run, &opts, pid, go), 0);
	assert_int_equal(run.comm_exec, 1);
	assert_true(run.nlog > 1000);
	assert_int_equal(run.stats.async, 0);
	for (size_t i = 0; i < run.nlog; i++)
		assert_false(run.log[i].async);
	/* the entry point's instruction ran once, and went on to the next */
	assert_int_not_equal(run.log[0].next_ip, run.log[0].ip);
	assert_int_equal(run.log[1].ip, run.log[0].next_ip);
	decode_pt(&run, &d);
	assert_matches_log(&run, &d);
	assert_int_equal(d.enables, run.stats.far);
	assert_int_equal(d.disables, run.stats.far);
	decoded_fini(&d);
	tr_run_fini(&run);
}

static size_t count_psb(const struct tr_run *run)
{
	static const uint8_t psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };
	size_t n = 0;

	for (size_t i = 0; i + sizeof(psb) <= run->trace_len; i++)
		if (memcmp(run->trace + i, psb, sizeof(psb)) == 0)
			n++;
	return n;
}

static void test_pt_filter_to_executable_with_frequent_psb(void **state)
{
	char *argv[] = { (char *)tr_prog(), "40", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_PT, .psb_period = 128 };
	struct tr_run run;
	struct decoded d;
	uint64_t lo, hi;

	(void)state;
	assert_int_equal(tr_elf_text(argv[0], &lo, &hi), 0);
	opts.filter_start = lo;
	opts.filter_end = hi;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	assert_true(run.stats.traced_insns > 500);
	assert_true(run.stats.traced_insns < run.stats.insns);
	printf("# filtered: %llu of %llu instructions traced, %zu bytes, %zu PSBs\n",
	       (unsigned long long)run.stats.traced_insns, (unsigned long long)run.stats.insns,
	       run.trace_len, count_psb(&run));
	assert_true(count_psb(&run) >= run.trace_len / 256);

	decode_pt(&run, &d);
	assert_matches_log(&run, &d);
	/* Entered from libc (__libc_start_main calls main) and left again as often. */
	assert_true(d.enables >= 1);
	assert_int_equal(d.enables, d.disables);
	decoded_fini(&d);
	tr_run_fini(&run);
}

static void test_pt_instruction_limit_ends_trace_cleanly(void **state)
{
	char *argv[] = { (char *)tr_prog(), "20", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_PT, .max_insns = 3000 };
	struct tr_run run;
	struct decoded d;

	(void)state;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	assert_int_equal(run.stats.insns, 3000);
	assert_int_equal(run.nlog, 3000);
	assert_int_equal(run.nexit, 0); /* detached, not exited under the tracer */
	decode_pt(&run, &d);
	assert_matches_log(&run, &d);
	decoded_fini(&d);
	tr_run_fini(&run);
}

static void test_pt_signal_handler_is_an_async_transfer(void **state)
{
	char *argv[] = { (char *)tr_prog(), "5", "signal", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_PT };
	struct tr_run run;
	struct decoded d;
	uint64_t handler, size;

	(void)state;
	assert_int_equal(tr_elf_symbol(argv[0], "on_usr1", &handler, &size), 0);
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	assert_true(WIFEXITED(run.exit_status));
	assert_int_equal(WEXITSTATUS(run.exit_status), 0); /* the handler ran once */
	assert_int_equal(run.stats.async, 1);
	/* The handler's first instruction follows an instruction that did not branch there. */
	for (size_t i = 1; i < run.nlog; i++)
		if (run.log[i].ip == handler)
			assert_int_not_equal(run.log[i - 1].next_ip, 0);
	decode_pt(&run, &d);
	assert_matches_log(&run, &d);
	/* Enabled after every system call and once more in the handler. */
	assert_int_equal(d.enables, run.stats.far + 1);
	decoded_fini(&d);
	tr_run_fini(&run);
}

static void test_pt_attach_to_running_process(void **state)
{
	char *argv[] = { (char *)tr_prog(), "4000000000", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_PT };
	struct tr_run run;
	struct decoded d;
	pid_t pid;
	int st;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	/* Attach after its exec (a busy machine may not have run it yet), then let it reach
	 * its loop. */
	{
		char link[64], exe[4096], want[4096];

		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
		assert_non_null(realpath(argv[0], want));
		for (int i = 0; i < 1000; i++) {
			ssize_t n = readlink(link, exe, sizeof(exe) - 1);

			if (n > 0) {
				exe[n] = '\0';
				if (!strcmp(exe, want))
					break;
			}
			usleep(10000);
		}
	}
	usleep(100000);
	opts.max_insns = 2000;
	assert_int_equal(tr_attach(&run, &opts, pid), 0);
	assert_int_equal(run.stats.insns, 2000);
	assert_int_equal(run.ncomm, 1);
	assert_int_equal(run.comm_exec, 0);
	assert_int_equal(run.tid, (uint32_t)pid);
	decode_pt(&run, &d);
	assert_matches_log(&run, &d);
	decoded_fini(&d);
	/* Detached: still running until we kill it. */
	assert_int_equal(waitpid(pid, &st, WNOHANG), 0);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	tr_run_fini(&run);
}

/* State letter of task @pid (/proc/PID/stat), or 0. */
static char task_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Wait until task @pid is in system call @nr (/proc/PID/syscall). */
static void wait_task_in_call(pid_t pid, long nr)
{
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	for (int i = 0; i < 10000; i++) {
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
	fail_msg("task %d never entered system call %ld", (int)pid, nr);
}

static int stop_flag;

static void *ask_stop_later(void *arg)
{
	(void)arg;
	usleep(300000);
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * opts.stop_req while the task attached to is blocked in a system call (a read from an empty
 * pipe): the tracer interrupts the call, swallows the signal and detaches; the task goes on
 * waiting in its read (restarted by the kernel), not stopped, and reads what comes later.
 */
static void test_pt_stop_request_lets_blocked_task_go(void **state)
{
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_PT, .stop_req = &stop_flag };
	struct tr_run run;
	pthread_t th;
	int p[2], st;
	pid_t pid;
	char s;

	(void)state;
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c = 0;

		close(p[1]);
		_exit(read(p[0], &c, 1) == 1 ? c : 99);
	}
	close(p[0]);
	wait_task_in_call(pid, SYS_read);
	__atomic_store_n(&stop_flag, 0, __ATOMIC_RELEASE);
	assert_int_equal(pthread_create(&th, NULL, ask_stop_later, NULL), 0);
	assert_int_equal(tr_attach(&run, &opts, pid), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(run.nstart, 1);
	/* Let go where it was: still running, not stopped, back in its read. */
	assert_int_equal(waitpid(pid, &st, WNOHANG), 0);
	wait_task_in_call(pid, SYS_read);
	s = task_state(pid);
	assert_true(s == 'S' || s == 'R');
	assert_int_equal(write(p[1], "A", 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 'A');
	close(p[1]);
	tr_run_fini(&run);
}

static void *spin_thread(void *arg)
{
	volatile unsigned long *n = arg;

	for (;;)
		for (volatile int i = 0; i < 3; i++) /* conditional branches, taken and not */
			(*n)++;
	return NULL;
}

/* A thread other than its process's main one: the side-band names the process as pid. */
static void test_pt_attach_to_other_thread_names_its_process(void **state)
{
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_PT, .max_insns = 3000 };
	struct tr_run run;
	struct decoded d;
	pid_t pid, tid = 0;
	int st, r;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static volatile unsigned long n;
		pthread_t t;

		if (pthread_create(&t, NULL, spin_thread, (void *)&n) != 0)
			_exit(1);
		for (;;)
			pause();
	}
	for (int i = 0; i < 10000 && !tid; i++) {
		char path[64];
		struct dirent *de;
		DIR *dir;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		dir = opendir(path);
		while (dir && (de = readdir(dir)))
			if (de->d_name[0] != '.' && atoi(de->d_name) != pid)
				tid = atoi(de->d_name);
		if (dir)
			closedir(dir);
		if (!tid)
			usleep(1000);
	}
	r = tid > 0 ? tr_attach(&run, &opts, tid) : -ESRCH;
	kill(pid, SIGKILL); /* (before any check fails) */
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(r, 0);
	assert_int_equal(run.stats.insns, 3000);
	assert_int_equal(run.tid, (uint32_t)tid);
	assert_int_equal(run.pid, (uint32_t)pid);
	decode_pt(&run, &d);
	assert_matches_log(&run, &d);
	decoded_fini(&d);
	tr_run_fini(&run);
}

static int keep(void *ctx, const void *bytes, size_t len)
{
	size_t *n = ctx;

	(void)bytes;
	*n += len;
	return 0;
}

static void test_pt_stop_with_kill_reaps_child(void **state)
{
	char *argv[] = { (char *)tr_prog(), "4000000000", NULL };
	struct auxcap_tracer_opts opts = { .sz = sizeof(opts),
					   .format = AUXCAP_TRACER_INTEL_PT,
					   .on_trace = keep };
	struct auxcap_tracer_stats st;
	struct auxcap_tracer *tr;
	size_t bytes = 0;
	int status = 0, r;

	(void)state;
	opts.ctx = &bytes;
	assert_int_equal(auxcap_tracer_new(&opts, &tr), 0);
	r = auxcap_tracer_start(tr, argv);
	if (r == -EPERM)
		test_skip("ptrace is not permitted here");
	assert_int_equal(r, 0);
	assert_true(auxcap_tracer_pid(tr) > 0);
	assert_int_equal(auxcap_tracer_step(tr, 100), 1);
	assert_int_equal(auxcap_tracer_get_stats(tr, &st), 0);
	assert_int_equal(st.insns, 100);
	assert_int_equal(auxcap_tracer_exit_status(tr, &status), 0);
	assert_int_equal(auxcap_tracer_stop(tr, true), 0);
	assert_int_equal(auxcap_tracer_exit_status(tr, &status), 1);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_int_equal(auxcap_tracer_step(tr, 1), 0); /* over */
	assert_int_equal(auxcap_tracer_read_mem(tr, 0x400000, &r, sizeof(r)), -EINVAL);
	auxcap_tracer_get_stats(tr, &st);
	assert_int_equal(st.trace_bytes, bytes);
	assert_true(bytes > 0);
	auxcap_tracer_free(tr);
}

static void test_pt_start_of_missing_command_fails(void **state)
{
	char *argv[] = { "/nonexistent/auxcap-no-such-program", NULL };
	struct auxcap_tracer_opts opts = { .sz = sizeof(opts), .format = AUXCAP_TRACER_INTEL_PT };
	struct tr_run run;

	(void)state;
	memset(&run, 0, sizeof(run));
	opts.on_trace = (auxcap_tracer_trace_fn)NULL;
	/* on_trace is mandatory */
	assert_int_equal(auxcap_tracer_new(&opts, &run.tr), -EINVAL);
	assert_int_equal(tr_run(&run, &opts, argv), -ENOENT);
	assert_int_equal(run.trace_len, 0);
	tr_run_fini(&run);
}

/*
 * The first @trace_len bytes of @run's trace, decoded into @d without errors, begin with the
 * traced instructions among the first @steps of its log, in order; returns how many.
 */
static size_t decode_prefix(const struct tr_run *run, size_t trace_len, size_t steps,
			    struct decoded *d)
{
	struct tr_run prefix = *run;
	size_t traced = 0;

	prefix.trace_len = trace_len;
	decode_pt(&prefix, d);
	assert_int_equal(d->errors, 0);
	for (size_t i = 0; i < steps; i++) {
		if (!run->log[i].traced)
			continue;
		assert_true(traced < d->n);
		assert_int_equal(d->ip[traced], run->log[i].ip);
		traced++;
	}
	return traced;
}

/*
 * auxcap_tracer_yield() from on_insn (what the live source does at a trigger hit) ends the step
 * right after that instruction, and the trace handed out by then decodes to exactly the
 * instructions traced so far: none held back in pending TNT bits.
 */
static void test_pt_yield_ends_step_with_decodable_trace(void **state)
{
	char *argv[] = { (char *)tr_prog(), "20", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_PT };
	struct tr_run run;
	struct decoded d;
	size_t traced;

	(void)state;
	memset(&run, 0, sizeof(run));
	run.yield_at = 5000; /* well inside the program, after the loader */
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	assert_int_equal(run.steps_at_yield, 5000);
	assert_true(run.trace_at_yield > 0 && run.trace_at_yield < run.trace_len);
	traced = decode_prefix(&run, run.trace_at_yield, run.steps_at_yield, &d);
	printf("# yield at instruction %zu: %zu trace bytes decode to the %zu traced so far\n",
	       run.steps_at_yield, run.trace_at_yield, d.n);
	assert_int_equal(d.n, traced);
	decoded_fini(&d);
	tr_run_fini(&run);
}

/*
 * Steps as the live source makes them (64 ptrace stops, opts.break_at_far): no step takes
 * more stops than asked; a long REP string instruction (20,000 iterations) runs to its end
 * in one stop, not one per iteration, and does its work (the program checks the bytes); a
 * system call is always the first instruction of a step, the step before it ending at it;
 * at such a break the trace so far decodes to exactly the instructions run so far and the
 * system call (its TIP.PGD written ahead: what a snapshot of a command blocked in that call
 * holds); and the whole trace still decodes to the tracer's log.
 */
static void test_pt_steps_bounded_syscall_first(void **state)
{
	char *argv[] = { (char *)tr_prog(), "20", "rep", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_PT,
					   .break_at_far = true };
	struct tr_run run;
	struct decoded d;
	size_t traced;

	(void)state;
	memset(&run, 0, sizeof(run));
	run.step_max = 64;
	run.far_break_after = 1000;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	printf("# %llu instructions in %llu stops (%llu REP instructions run at once); steps of "
	       "at most %llu stops; %llu system calls, %zu steps ended before one\n",
	       (unsigned long long)run.stats.insns, (unsigned long long)run.stats.stops,
	       (unsigned long long)run.stats.rep_runs, (unsigned long long)run.max_stops,
	       (unsigned long long)run.stats.far, run.far_breaks);
	assert_true(WIFEXITED(run.exit_status));
	assert_int_equal(WEXITSTATUS(run.exit_status), 0); /* 4: the REP STOSB did not fill */
	assert_true(run.stats.rep_runs >= 1);
	assert_true(run.stats.stops < run.stats.insns + 1000); /* not a stop per iteration */
	assert_true(run.max_stops <= 64);
	assert_int_equal(run.far_not_first, 0);
	assert_int_equal(run.early_other, 0);
	assert_true(run.far_breaks >= 1 && run.far_breaks <= run.stats.far);
	assert_true(run.far_break_steps > 0 && run.far_break_steps < run.nlog);
	assert_int_equal(run.log[run.far_break_steps].kind, AUXCAP_TRACER_FAR);

	decode_pt(&run, &d);
	assert_matches_log(&run, &d);
	decoded_fini(&d);

	traced = decode_prefix(&run, run.far_break_trace, run.far_break_steps, &d);
	printf("# break before the system call at instruction %zu: %zu trace bytes decode to "
	       "the %zu traced so far and the call\n",
	       run.far_break_steps, run.far_break_trace, traced);
	assert_int_equal(d.n, traced + 1);
	assert_int_equal(d.ip[traced], run.log[run.far_break_steps].ip);
	decoded_fini(&d);
	tr_run_fini(&run);
}

/*
 * System calls a signal interrupted and the kernel restarts: a read() whose SIGUSR1 handler
 * has SA_RESTART (control goes to the handler, whose rt_sigreturn comes back to the call),
 * and a nanosleep() woken by an ignored SIGWINCH (the kernel moves RIP back to the call and
 * returns to user space there).  Neither returns after the call when interrupted: the trace
 * shows the TIP.PGD into the kernel, then the handler's TIP.PGE or a TIP.PGE at the call and
 * the call again, as user-only hardware trace does.  Before, the tracer saw the stop after
 * the call as its return and logged the next instruction as run (the call ran again in its
 * place, and the decode showed an asynchronous jump back).
 */
static void test_pt_restarted_system_calls(void **state)
{
	char *argv[] = { (char *)tr_prog(), "5", "restart", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_PT,
					   .break_at_far = true };
	struct tr_run run;
	struct decoded d;
	uint64_t handler, size;
	size_t again = 0, to_handler = 0;

	(void)state;
	assert_int_equal(tr_elf_symbol(argv[0], "on_usr1_restart", &handler, &size), 0);
	memset(&run, 0, sizeof(run));
	run.step_max = 64;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	assert_true(WIFEXITED(run.exit_status));
	/* 12..14: a call did not complete as asked */
	assert_int_equal(WEXITSTATUS(run.exit_status), 0);
	for (size_t i = 0; i + 1 < run.nlog; i++) {
		if (!run.log[i].restarts)
			continue;
		assert_int_equal(run.log[i].kind, AUXCAP_TRACER_FAR);
		assert_true(run.log[i].ended);
		if (run.log[i + 1].ip == run.log[i].ip)
			again++;
		else if (run.log[i + 1].ip == handler)
			to_handler++;
		else
			fail_msg("after the restarted call at %#llx: %#llx",
				 (unsigned long long)run.log[i].ip,
				 (unsigned long long)run.log[i + 1].ip);
	}
	printf("# %llu system calls, %llu restarted: %zu at the call again, %zu through the "
	       "handler\n",
	       (unsigned long long)run.stats.far, (unsigned long long)run.stats.restarts, again,
	       to_handler);
	assert_int_equal(to_handler, 1);
	assert_true(again >= 1); /* the nanosleep (SIGCHLD may restart another call) */
	assert_int_equal(run.stats.restarts, again + to_handler);
	assert_int_equal(run.stats.async, 1);
	assert_int_equal(run.far_not_first, 0); /* the call again is a step of its own too */
	/* the child that sent the signals: not followed, counted */
	assert_int_equal(run.stats.untraced_children, 1);
	assert_int_equal(run.stats.untraced_threads, 0);

	decode_pt(&run, &d);
	assert_matches_log(&run, &d);
	/* Every call disables; enabled at the start, after each call that returns, at each
	 * call run again, and in the handler. */
	assert_int_equal(d.disables, run.stats.far);
	assert_int_equal(d.enables, 1 + (run.stats.far - run.stats.restarts - 1) + again + 1);
	decoded_fini(&d);
	tr_run_fini(&run);
}

/*
 * A thread the traced thread creates is not followed (the live tracer steps one thread): it
 * is counted, so that auxcap record can say so, and the trace is still the traced thread's.
 */
static void test_pt_new_thread_counted(void **state)
{
	char *argv[] = { (char *)tr_prog(), "5", "thread", NULL };
	struct auxcap_tracer_opts opts = { .format = AUXCAP_TRACER_INTEL_PT };
	struct tr_run run;
	struct decoded d;

	(void)state;
	assert_int_equal(tr_run(&run, &opts, argv), 0);
	assert_true(WIFEXITED(run.exit_status));
	assert_int_equal(WEXITSTATUS(run.exit_status), 0); /* 15: the thread did not run */
	assert_int_equal(run.stats.untraced_threads, 1);
	assert_int_equal(run.stats.untraced_children, 0);
	decode_pt(&run, &d);
	assert_matches_log(&run, &d);
	decoded_fini(&d);
	tr_run_fini(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pt_full_trace_decodes_to_tracer_log),
		cmocka_unit_test(test_pt_yield_ends_step_with_decodable_trace),
		cmocka_unit_test(test_pt_filter_to_executable_with_frequent_psb),
		cmocka_unit_test(test_pt_instruction_limit_ends_trace_cleanly),
		cmocka_unit_test(test_pt_signal_handler_is_an_async_transfer),
		cmocka_unit_test(test_pt_attach_to_running_process),
		cmocka_unit_test(test_pt_stop_request_lets_blocked_task_go),
		cmocka_unit_test(test_pt_attach_to_other_thread_names_its_process),
		cmocka_unit_test(test_pt_adopted_child_traced_from_its_entry),
		cmocka_unit_test(test_pt_stop_with_kill_reaps_child),
		cmocka_unit_test(test_pt_start_of_missing_command_fails),
		cmocka_unit_test(test_pt_steps_bounded_syscall_first),
		cmocka_unit_test(test_pt_restarted_system_calls),
		cmocka_unit_test(test_pt_new_thread_counted),
	};

	return cmocka_run_group_tests_name("emu/tracer_pt", tests, NULL, NULL);
}
