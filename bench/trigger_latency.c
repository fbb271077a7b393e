/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Function trigger latency on the real kernel.  A small program (bench/meson.build builds
 * tests/common/trigger_prog.c, not PIE) calls trigger_point() HITS times, GAP us apart, so
 * every hit is an isolated one (the capture loop is asleep when it comes); a uprobe (or, -v
 * breakpoint, an execute breakpoint) on trigger_point samples each call, timed by the kernel
 * (CLOCK_MONOTONIC).  Measured per hit, in interleaved rounds, medians kept:
 *
 *   baseline     a thread blocked in poll() on the trigger event's own ring (wakeup_events 1),
 *                from the hit to poll()'s return: the kernel's and the VM's wake-up path, with
 *                none of auxcap in it (the floor for anything that reacts to a hit)
 *   session      auxcap's capture session on the program in snapshot mode, as `auxcap record
 *                -S -e raw_syscalls:sys_enter --trigger-on trigger_point` runs it (flight
 *                recorder ring, the trigger, the loop in its own thread): hit to frozen, the
 *                session's own figure (every sample ring paused)
 *   session+AUX  the same with an emulated Intel PT AUX event on the program, opened through
 *                the emulator's syscall seam (the real events pass through it): hit to every
 *                AUX event stopped and every ring paused
 *
 * Target (exit status 1 if missed): session+AUX median <= 50 us.
 *
 * Usage: auxcap-bench-trigger-latency -p PROG [-n HITS] [-g GAP_US] [-r ROUNDS]
 *                                     [-v uprobe|breakpoint]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "auxcap/emu.h"
#include "auxcap/record.h"
#include "auxcap/session.h"
#include "auxcap/sys.h"
#include "auxcap/trigger.h"
#include "elf_file.h"
#include "event.h"
#include "ring.h"
#include "sink.h"

#define MAX_HITS 4096
#define MAX_ROUNDS 50
#define SYMBOL "trigger_point"

static const char *prog;
static unsigned int hits = 20, gap_us = 20000;
static int rounds = 5;
static bool via_breakpoint;
static uint64_t sym_addr, sym_offset; /* link address and file offset of SYMBOL in prog */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Latencies of one mode over all rounds, ns. */
struct lat {
	uint64_t v[MAX_HITS * MAX_ROUNDS];
	size_t n;
};

static void lat_add(struct lat *l, uint64_t ns)
{
	if (l->n < sizeof(l->v) / sizeof(l->v[0]))
		l->v[l->n++] = ns;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double lat_pct(struct lat *l, int pct)
{
	size_t i;

	if (!l->n)
		return 0;
	qsort(l->v, l->n, sizeof(l->v[0]), cmp_u64);
	i = l->n * (size_t)pct / 100;
	return (double)l->v[i < l->n ? i : l->n - 1] / 1e3;
}

/* The subject, started and stopped before its first call ("wait"): its pid, or -1. */
static pid_t subject_start(void)
{
	char n[32], g[32], line[64];
	int p[2];
	pid_t pid;
	FILE *f;

	if (pipe(p) < 0)
		return -1;
	snprintf(n, sizeof(n), "%u", hits);
	snprintf(g, sizeof(g), "%u", gap_us);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		close(p[1]);
		signal(SIGPIPE, SIG_IGN); /* its last line goes to a closed pipe */
		execl(prog, prog, n, g, "wait", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	f = fdopen(p[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || strncmp(line, "ready ", 6)) {
		fprintf(stderr, "trigger_latency: %s did not start\n", prog);
		if (f)
			fclose(f);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	fclose(f);
	return pid;
}

static int subject_run(pid_t pid)
{
	int st;

	if (kill(pid, SIGUSR1) < 0 || waitpid(pid, &st, 0) != pid)
		return -ECHILD;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -ECHILD;
}

static int trigger_attr(struct perf_event_attr *a)
{
	return via_breakpoint ? auxcap_trigger_breakpoint_attr(sym_addr, a)
			      : auxcap_trigger_uprobe_attr(NULL, prog, sym_offset, false, a);
}

/* ---- baseline: poll() on the trigger event's ring ---------------------------------------- */

struct base_arg {
	int fd;
	struct auxcap_mapped_ring mr;
	struct auxcap_sample_layout lay;
	struct lat *lat;
	size_t got;
};

static void *base_main(void *arg)
{
	struct base_arg *b = arg;

	for (;;) {
		struct pollfd p = { .fd = b->fd, .events = POLLIN };
		const struct perf_event_header *h;
		struct auxcap_record rec;
		uint64_t t;
		int n = poll(&p, 1, 1000);

		t = now_ns();
		if (n < 0 && errno != EINTR)
			break;
		if (auxcap_ring_begin(&b->mr.ring) > 0) {
			while (auxcap_ring_next(&b->mr.ring, &h) == 1) {
				if (h->type != PERF_RECORD_SAMPLE ||
				    auxcap_record_parse(&b->lay, h, h->size, &rec) < 0)
					continue;
				lat_add(b->lat, t > rec.u.sample.time ? t - rec.u.sample.time : 0);
				b->got++;
			}
			auxcap_ring_end(&b->mr.ring);
		}
		if (p.revents & POLLHUP)
			break; /* the subject exited */
	}
	return NULL;
}

static int run_baseline(struct lat *lat, size_t *ret_got)
{
	struct base_arg b = { .fd = -1, .lat = lat };
	struct perf_event_attr a;
	pthread_t th;
	pid_t pid;
	int r;

	r = trigger_attr(&a);
	if (r < 0)
		return r;
	auxcap_sample_layout_from_attr(&a, &b.lay);
	pid = subject_start();
	if (pid < 0)
		return -ECHILD;
	b.fd = auxcap_event_open(&auxcap_sys_linux, &a, pid, -1, -1, 0);
	if (b.fd < 0) {
		r = b.fd;
		goto out;
	}
	r = auxcap_mapped_ring_open(&auxcap_sys_linux, b.fd, 8, 0, &b.mr);
	if (r == 0)
		r = auxcap_event_enable(&auxcap_sys_linux, b.fd, true);
	if (r == 0 && pthread_create(&th, NULL, base_main, &b) != 0)
		r = -EAGAIN;
	if (r == 0) {
		r = subject_run(pid);
		pid = -1;
		pthread_join(th, NULL);
	}
	auxcap_mapped_ring_close(&b.mr);
	close(b.fd);
	*ret_got = b.got;
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return r;
}

/* ---- the capture session ------------------------------------------------------------------ */

/* A sink that keeps nothing but the snapshots' latencies. */
struct lat_sink {
	struct auxcap_sink sink;
	struct lat *lat;
	size_t snaps;
};

static int ls_attr(void *ctx, const struct perf_event_attr *attr, const char *name,
		   const uint64_t *ids, size_t nr_ids)
{
	(void)ctx, (void)attr, (void)name, (void)ids, (void)nr_ids;
	return 0;
}

static int ls_record(void *ctx, const void *rec, size_t len)
{
	(void)ctx, (void)rec, (void)len;
	return 0;
}

static int ls_aux(void *ctx, const struct auxcap_aux_chunk *chunk,
		  const struct auxcap_aux_span *span)
{
	(void)ctx, (void)chunk, (void)span;
	return 0;
}

static int ls_snapshot(void *ctx, const struct auxcap_snapshot_info *info)
{
	struct lat_sink *ls = ctx;

	lat_add(ls->lat, info->frozen_ns - info->trigger_ns);
	ls->snaps++;
	return 0;
}

static const struct auxcap_sink_ops lat_sink_ops = {
	.attr = ls_attr,
	.record = ls_record,
	.aux = ls_aux,
	.snapshot = ls_snapshot,
};

static int64_t tracepoint_id(const char *sys, const char *name)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	long long id = -ENOENT;

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]) && id < 0; i++) {
		char p[256];
		FILE *f;

		snprintf(p, sizeof(p), "%s/events/%s/%s/id", roots[i], sys, name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fscanf(f, "%lld", &id) != 1)
			id = -EBADMSG;
		fclose(f);
	}
	return id;
}

static void *loop_main(void *arg)
{
	return (void *)(intptr_t)auxcap_session_run(arg, -1);
}

static int run_session(bool aux, struct lat *lat, size_t *ret_snaps,
		       struct auxcap_session_stats *ret_st)
{
	struct perf_event_attr tp = { .type = PERF_TYPE_TRACEPOINT,
				      .sample_period = 1,
				      .sample_type = PERF_SAMPLE_RAW },
			       pt = { .type = AUXCAP_EMU_TYPE_BASE + AUXCAP_EMU_PMU_INTEL_PT,
				      .exclude_kernel = 1 },
			       trig;
	struct auxcap_session_event ev = { .attr = &tp, .name = "raw_syscalls:sys_enter" };
	struct auxcap_session_event pt_ev = { .attr = &pt, .name = "intel_pt//u" };
	struct auxcap_session_event trig_ev = { .attr = &trig, .name = SYMBOL };
	struct lat_sink ls = { .sink = { .ops = &lat_sink_ops, .ctx = &ls }, .lat = lat };
	struct auxcap_emu_replay_opts ro = { .sz = sizeof(ro), .loop = true };
	static unsigned char trace[1 << 16];
	struct auxcap_emu_replay *rp = NULL;
	struct auxcap_session *s = NULL;
	struct auxcap_emu *emu = NULL;
	int64_t id = tracepoint_id("raw_syscalls", "sys_enter");
	int failed, r;
	pthread_t th;
	void *ret;
	pid_t pid;

	if (id < 0) {
		fprintf(stderr, "trigger_latency: no raw_syscalls:sys_enter in tracefs (mount -t "
				"tracefs nodev /sys/kernel/tracing)\n");
		return (int)id;
	}
	tp.config = (uint64_t)id;
	r = trigger_attr(&trig);
	if (r < 0)
		return r;
	if (aux) {
		r = auxcap_emu_new(NULL, &emu);
		if (r == 0)
			r = auxcap_emu_replay_new(trace, sizeof(trace), &ro, &rp);
		if (r == 0 && (r = auxcap_emu_replay_attach(emu, AUXCAP_EMU_PMU_INTEL_PT, -1, rp)) < 0)
			auxcap_emu_replay_free(rp);
		if (r < 0) {
			auxcap_emu_free(emu);
			return r;
		}
	}
	pid = subject_start();
	if (pid < 0) {
		auxcap_emu_free(emu);
		return -ECHILD;
	}
	{
		struct auxcap_session_opts o = {
			.sz = sizeof(o),
			.sys = emu ? auxcap_emu_sys(emu) : NULL,
			.aux = aux ? &pt_ev : NULL,
			.events = &ev,
			.nr_events = 1,
			.pids = &pid,
			.nr_pids = 1,
			.snapshot = true,
			.snapshot_data_pages = 4,
			.aux_pages = 16,
			.sink = &ls.sink,
			.triggers = &trig_ev,
			.nr_triggers = 1,
		};

		r = auxcap_session_open(&o, &s, &failed);
	}
	if (r == 0)
		r = auxcap_session_enable(s, true);
	if (r == 0 && pthread_create(&th, NULL, loop_main, s) != 0)
		r = -EAGAIN;
	if (r == 0) {
		r = subject_run(pid);
		pid = -1;
		usleep(100000); /* the last snapshot */
		auxcap_session_request(s, AUXCAP_REQ_STOP);
		pthread_join(th, &ret);
		if (r == 0)
			r = (int)(intptr_t)ret;
		auxcap_session_get_stats(s, ret_st);
	}
	*ret_snaps = ls.snaps;
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	auxcap_session_free(s);
	auxcap_emu_free(emu);
	return r;
}

int main(int argc, char **argv)
{
	static struct lat base, sess, sess_aux;
	struct auxcap_session_stats st;
	struct auxcap_elf *elf;
	double load[1];
	size_t got;
	int c, r;
	bool met;

	while ((c = getopt(argc, argv, "p:n:g:r:v:h")) != -1) {
		switch (c) {
		case 'p': prog = optarg; break;
		case 'n': hits = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'g': gap_us = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'r': rounds = atoi(optarg); break;
		case 'v':
			if (!strcmp(optarg, "breakpoint"))
				via_breakpoint = true;
			else if (strcmp(optarg, "uprobe"))
				goto usage;
			break;
		default:
			goto usage;
		}
	}
	if (!prog || !hits || hits > MAX_HITS || rounds < 1 || rounds > MAX_ROUNDS)
		goto usage;
	r = auxcap_elf_open(prog, &elf);
	if (r == 0) {
		r = auxcap_elf_symbol_lookup(elf, SYMBOL, &sym_addr, &sym_offset);
		if (r == 0 && via_breakpoint && auxcap_elf_is_dyn(elf))
			r = -EINVAL; /* the link address is the run-time one only without PIE */
		auxcap_elf_free(elf);
	}
	if (r < 0) {
		fprintf(stderr, "trigger_latency: no %s in %s, or a PIE with -v breakpoint: %s\n",
			SYMBOL, prog, strerror(-r));
		return 2;
	}
	if (getloadavg(load, 1) != 1)
		load[0] = -1;
	printf("trigger_latency: %s on %s, %d rounds of %u hits %u us apart, load average "
	       "%.1f on %ld CPUs\n",
	       via_breakpoint ? "execute breakpoint" : "uprobe", SYMBOL, rounds, hits, gap_us,
	       load[0], sysconf(_SC_NPROCESSORS_ONLN));
	for (int i = 0; i < rounds; i++) {
		size_t snaps;

		r = run_baseline(&base, &got);
		if (r == 0 && got != hits) {
			fprintf(stderr, "trigger_latency: baseline saw %zu of %u hits\n", got, hits);
			r = -EIO;
		}
		if (r == 0)
			r = run_session(false, &sess, &snaps, &st);
		if (r == 0 && st.trigger_hits != hits)
			r = -EIO;
		if (r == 0)
			r = run_session(true, &sess_aux, &snaps, &st);
		if (r == 0 && (st.trigger_hits != hits || snaps + st.snapshot_requests_coalesced !=
								  hits))
			r = -EIO;
		if (r < 0) {
			fprintf(stderr, "trigger_latency: round %d failed: %s\n", i + 1,
				strerror(-r));
			return 2;
		}
	}
	printf("  %-52s median %6.1f us, p90 %7.1f us, max %8.1f us\n",
	       "hit to poll() return (baseline):", lat_pct(&base, 50), lat_pct(&base, 90),
	       lat_pct(&base, 100));
	printf("  %-52s median %6.1f us, p90 %7.1f us, max %8.1f us\n",
	       "hit to frozen, session (sample ring):", lat_pct(&sess, 50), lat_pct(&sess, 90),
	       lat_pct(&sess, 100));
	printf("  %-52s median %6.1f us, p90 %7.1f us, max %8.1f us\n",
	       "hit to frozen, session + emulated PT (AUX and ring):", lat_pct(&sess_aux, 50),
	       lat_pct(&sess_aux, 90), lat_pct(&sess_aux, 100));
	printf("  medians over the baseline's: session %+.1f us, session + AUX %+.1f us\n",
	       lat_pct(&sess, 50) - lat_pct(&base, 50), lat_pct(&sess_aux, 50) - lat_pct(&base, 50));
	met = lat_pct(&sess_aux, 50) <= 50;
	printf("target: hit to AUX frozen, median <= 50 us: %s\n", met ? "met" : "MISSED");
	return met ? 0 : 1;
usage:
	fprintf(stderr, "usage: auxcap-bench-trigger-latency -p PROG [-n HITS (1..%d)] "
			"[-g GAP_US] [-r ROUNDS (1..%d)] [-v uprobe|breakpoint]\n",
		MAX_HITS, MAX_ROUNDS);
	return 2;
}
