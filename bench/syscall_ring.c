/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The classic data-ring benchmark: a program makes N close(-1) system calls (one
 * raw_syscalls:sys_enter record each), recorded by `auxcap record` and by
 * `perf record -o FILE -e raw_syscalls:sys_enter` with the same data ring size, side by side,
 * and once untraced.  Rounds are interleaved (untraced, perf, auxcap, ...) and medians kept.
 *
 * Measured, per recorder:
 *   slowdown      the traced program's own CPU time (user+sys, getrusage at its end): the
 *                 work tracing adds to it (tracepoint, ring writes, wakeups) / the untraced
 *                 run's; and its loop's wall time / the untraced one's (on a shared machine
 *                 that one mostly measures who else wanted the CPUs, so it is printed, not
 *                 judged)
 *   recorder CPU  user+sys of the recorder process, its threads included, without the traced
 *                 program's own (wait4() of the recorder minus what the program reports)
 *   lost          close(-1) records missing from the file: N minus the close samples of the
 *                 program's pid found in it (ground truth, whatever each tool says); the
 *                 tool's own count (LOST / LOST_SAMPLES records) is printed beside it
 *
 * Targets (exit status 1 if one is missed): slowdown <= perf's, recorder CPU <= perf's,
 * lost <= perf's.
 *
 * Each ring size of -m (default 128,1024: 512 KiB, where both tools lose records, and 4 MiB,
 * where neither should, so that the slowdowns compare the same work) is a run of its own.
 *
 * Usage: auxcap-bench-syscall-ring -a AUXCAP -p CLOSE_LOOP [-n CALLS] [-r ROUNDS]
 *                                  [-m PAGES[,PAGES...]] [-d DIR] [-P PERF]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auxcap/perf_data.h"

#define MAX_ROUNDS 64
#define NR_CLOSE_X86_64 3

struct result {
	double loop_ms;	     /* the traced loop's wall time */
	double prog_cpu_ms;  /* the program's own user+sys */
	double rec_cpu_ms;   /* the recorder's user+sys (without the program) */
	uint64_t recorded;   /* distinct close(-1) samples of the program in the file */
	uint64_t duplicates; /* the same sample (same time) written more than once */
	uint64_t tool_lost;  /* what the file's LOST / LOST_SAMPLES records say */
	uint64_t file_bytes; /* size of the output file */
};

static const char *auxcap_path, *prog_path, *perf_path = "perf", *dir = "/dev/shm";
static long calls = 3000000;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double tv_ms(const struct timeval *tv)
{
	return (double)tv->tv_sec * 1e3 + (double)tv->tv_usec / 1e3;
}

/* Run @argv with stdout/stderr to /dev/null; returns 0 and the rusage of it and its children. */
static int run(char *const argv[], struct rusage *ru, pid_t *ret_pid)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (ret_pid)
		*ret_pid = pid;
	if (wait4(pid, &st, 0, ru) != pid)
		return -errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "syscall_ring: '%s' failed (status 0x%x)\n", argv[0], st);
		return -EIO;
	}
	return 0;
}

static int read_report(const char *path, struct result *res, long *ret_pid)
{
	unsigned long long loop_ns;
	long long ut, stime;
	long n, pid;
	FILE *f = fopen(path, "r");
	int k;

	if (!f)
		return -errno;
	k = fscanf(f, "loop_ns %llu utime_us %lld stime_us %lld calls %ld pid %ld", &loop_ns, &ut,
		   &stime, &n, &pid);
	fclose(f);
	if (k != 5 || n != calls)
		return -EBADMSG;
	res->loop_ms = (double)loop_ns / 1e6;
	res->prog_cpu_ms = (double)(ut + stime) / 1e3;
	*ret_pid = pid;
	return 0;
}

/* Count the program's close samples and the losses the file reports. */
static int read_capture(const char *path, long pid, struct result *res)
{
	struct auxcap_perf_reader *rd;
	struct auxcap_perf_event ev;
	uint64_t lost = 0, lost_samples = 0, *times, n = 0;
	struct stat sb;
	int r;

	times = malloc(((size_t)calls + 1024) * sizeof(*times));
	if (!times)
		return -ENOMEM;

	r = auxcap_perf_reader_open(path, NULL, &rd);
	if (r < 0)
		return r;
	while ((r = auxcap_perf_reader_next(rd, &ev)) == 1) {
		const struct auxcap_record *rec = &ev.rec;
		int64_t id;

		if (rec->type == PERF_RECORD_LOST) {
			lost += rec->u.lost.lost;
		} else if (rec->type == PERF_RECORD_LOST_SAMPLES) {
			lost_samples += rec->u.lost_samples.lost;
		} else if (rec->type == PERF_RECORD_SAMPLE && ev.evsel &&
			   ev.evsel->attr->type == PERF_TYPE_TRACEPOINT &&
			   rec->u.sample.pid == (uint32_t)pid && rec->u.sample.raw.size >= 24) {
			uint64_t fd;

			/* sys_enter: common fields (8 bytes), long id, unsigned long args[6]. */
			memcpy(&id, (const char *)rec->u.sample.raw.data + 8, 8);
			memcpy(&fd, (const char *)rec->u.sample.raw.data + 16, 8);
			/* close(-1): the program's own closes (ld.so, stdio) are not counted. */
			if (id == NR_CLOSE_X86_64 && (uint32_t)fd == UINT32_MAX &&
			    n < (uint64_t)calls + 1024)
				times[n++] = rec->u.sample.time;
		}
	}
	auxcap_perf_reader_close(rd);
	/* One sample per call: a time seen twice is a record the tool wrote twice. */
	qsort(times, (size_t)n, sizeof(*times), cmp_u64);
	for (uint64_t i = 0; i < n; i++)
		res->recorded += i == 0 || times[i] != times[i - 1];
	res->duplicates = n - res->recorded;
	free(times);
	res->tool_lost = lost > lost_samples ? lost : lost_samples;
	res->file_bytes = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
	return r;
}

/* One run: @which 0 untraced, 1 perf, 2 auxcap. */
static int one(int which, const char *pages, struct result *res)
{
	char report[4096], out[4096], n[32];
	struct rusage ru;
	long pid = 0;
	int r;

	memset(res, 0, sizeof(*res));
	snprintf(report, sizeof(report), "%s/auxcap-bench-close-report", dir);
	snprintf(out, sizeof(out), "%s/auxcap-bench-syscall-ring.data", dir);
	snprintf(n, sizeof(n), "%ld", calls);
	unlink(report);
	unlink(out);
	if (which == 0) {
		char *argv[] = { (char *)prog_path, n, report, NULL };

		r = run(argv, &ru, NULL);
	} else if (which == 1) {
		char *argv[] = { (char *)perf_path, "record", "-q", "-m", (char *)pages, "-o", out,
				 "-e", "raw_syscalls:sys_enter", "--", (char *)prog_path, n, report,
				 NULL };

		r = run(argv, &ru, NULL);
	} else {
		char *argv[] = { (char *)auxcap_path, "record", "-f", "-m", (char *)pages, "-o", out,
				 "-e", "raw_syscalls:sys_enter", "--", (char *)prog_path, n, report,
				 NULL };

		r = run(argv, &ru, NULL);
	}
	if (r < 0)
		return r;
	r = read_report(report, res, &pid);
	if (r < 0) {
		fprintf(stderr, "syscall_ring: no report from the traced program (%s)\n",
			strerror(-r));
		return r;
	}
	if (which) {
		res->rec_cpu_ms = tv_ms(&ru.ru_utime) + tv_ms(&ru.ru_stime) - res->prog_cpu_ms;
		r = read_capture(out, pid, res);
		if (r < 0) {
			fprintf(stderr, "syscall_ring: cannot read %s: %s\n", out, strerror(-r));
			return r;
		}
	}
	unlink(report);
	unlink(out);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: auxcap-bench-syscall-ring -a AUXCAP -p CLOSE_LOOP [-n CALLS] "
			"[-r ROUNDS] [-m PAGES[,PAGES...]] [-d DIR] [-P PERF]\n");
}

/* All rounds at one ring size; returns 1 if a target was missed, 0 if not, -1 on failure. */
static int bench_size(const char *pages, int rounds)
{
	static struct result res[3][MAX_ROUNDS];
	const char *names[3] = { "untraced", "perf record", "auxcap record" };
	double med_loop[3], med_cpu[3], med_lost[3], med_tool_lost[3], med_prog[3];
	double v[MAX_ROUNDS];
	int missed;

	printf("syscall_ring: %ld close(-1) calls recorded with raw_syscalls:sys_enter, "
	       "-m %s data pages per ring for both recorders, output in %s, %d rounds "
	       "(medians)\n",
	       calls, pages, dir, rounds);
	for (int i = 0; i < rounds; i++) {
		for (int w = 0; w < 3; w++) {
			if (one(w, pages, &res[w][i]) < 0) {
				fprintf(stderr, "syscall_ring: %s failed; is %s installed and are we "
						"root?\n",
					names[w], w == 1 ? perf_path : "the recorder");
				return -1;
			}
		}
		printf("  round %d (untraced / perf / auxcap): program CPU ms %.0f / %.0f / %.0f, "
		       "loop ms %.0f / %.0f / %.0f, recorder CPU ms %.0f / %.0f, lost %" PRIu64
		       " / %" PRIu64 "\n",
		       i + 1, res[0][i].prog_cpu_ms, res[1][i].prog_cpu_ms, res[2][i].prog_cpu_ms,
		       res[0][i].loop_ms, res[1][i].loop_ms, res[2][i].loop_ms,
		       res[1][i].rec_cpu_ms, res[2][i].rec_cpu_ms,
		       (uint64_t)calls - res[1][i].recorded, (uint64_t)calls - res[2][i].recorded);
		for (int w = 1; w < 3; w++)
			if (res[w][i].duplicates)
				printf("    %s wrote %" PRIu64 " samples twice\n", names[w],
				       res[w][i].duplicates);
	}
	for (int w = 0; w < 3; w++) {
		for (int i = 0; i < rounds; i++)
			v[i] = res[w][i].loop_ms;
		med_loop[w] = median(v, rounds);
		for (int i = 0; i < rounds; i++)
			v[i] = res[w][i].rec_cpu_ms;
		med_cpu[w] = median(v, rounds);
		for (int i = 0; i < rounds; i++)
			v[i] = res[w][i].prog_cpu_ms;
		med_prog[w] = median(v, rounds);
		for (int i = 0; i < rounds; i++)
			v[i] = (double)calls - (double)res[w][i].recorded;
		med_lost[w] = median(v, rounds);
		for (int i = 0; i < rounds; i++)
			v[i] = (double)res[w][i].tool_lost;
		med_tool_lost[w] = median(v, rounds);
	}
	printf("\n%-14s %12s %9s %8s %9s %12s %10s %12s %8s\n", "", "program CPU", "slowdown",
	       "loop ms", "(wall)", "recorder CPU", "lost", "tool's count", "file MB");
	for (int w = 0; w < 3; w++) {
		printf("%-14s %9.0f ms %8.2fx %8.0f %8.2fx", names[w], med_prog[w],
		       med_prog[w] / med_prog[0], med_loop[w], med_loop[w] / med_loop[0]);
		if (w)
			printf(" %9.0f ms %10.0f %12.0f %8.1f\n", med_cpu[w], med_lost[w],
			       med_tool_lost[w], (double)res[w][rounds - 1].file_bytes / 1e6);
		else
			printf(" %12s %10s %12s %8s\n", "-", "-", "-", "-");
	}
	printf("\nauxcap / perf: slowdown %.2f (wall %.2f), recorder CPU %.2f, lost %.0f vs %.0f "
	       "(%.4f%% vs %.4f%% of the calls)\n",
	       med_prog[2] / med_prog[1], med_loop[2] / med_loop[1], med_cpu[2] / med_cpu[1],
	       med_lost[2], med_lost[1], 100.0 * med_lost[2] / (double)calls,
	       100.0 * med_lost[1] / (double)calls);
	printf("targets: slowdown <= perf's: %s; recorder CPU <= perf's: %s; lost <= perf's: %s\n",
	       med_prog[2] <= med_prog[1] ? "met" : "MISSED",
	       med_cpu[2] <= med_cpu[1] ? "met" : "MISSED",
	       med_lost[2] <= med_lost[1] ? "met" : "MISSED");
	missed = med_prog[2] > med_prog[1] || med_cpu[2] > med_cpu[1] || med_lost[2] > med_lost[1];
	return missed;
}

int main(int argc, char **argv)
{
	char pages[256] = "128,1024";
	int rounds = 5, c, missed = 0;

	while ((c = getopt(argc, argv, "a:p:n:r:m:d:P:h")) != -1) {
		switch (c) {
		case 'a': auxcap_path = optarg; break;
		case 'p': prog_path = optarg; break;
		case 'n': calls = strtol(optarg, NULL, 0); break;
		case 'r': rounds = atoi(optarg); break;
		case 'm': snprintf(pages, sizeof(pages), "%s", optarg); break;
		case 'd': dir = optarg; break;
		case 'P': perf_path = optarg; break;
		default: usage(); return 2;
		}
	}
	if (!auxcap_path || !prog_path || rounds < 1 || rounds > MAX_ROUNDS || calls < 1) {
		usage();
		return 2;
	}
	if (access("/sys/kernel/tracing/events/raw_syscalls", F_OK) < 0 &&
	    mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) < 0 &&
	    access("/sys/kernel/debug/tracing/events/raw_syscalls", F_OK) < 0) {
		fprintf(stderr, "syscall_ring: tracefs is not mounted and cannot be: mount -t tracefs "
				"nodev /sys/kernel/tracing (as root)\n");
		return 2;
	}
	for (char *save = NULL, *tok = strtok_r(pages, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int r = bench_size(tok, rounds);

		if (r < 0)
			return 2;
		missed |= r;
		printf("\n");
	}
	return missed ? 1 : 0;
}
