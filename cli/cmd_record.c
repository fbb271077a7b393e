/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap record: capture into a perf.data file.
 *
 * The capture session runs in its own thread; the main thread starts the command, watches it,
 * turns signals (SIGINT/SIGTERM stop, SIGUSR2 snapshot), the control FIFO and the terminal
 * hotkeys into session requests, shows a status line on a terminal, and prints the summary.
 * A --trigger-on function is a trigger event of the session, which turns its hits into
 * snapshot requests itself; with --emulate the live tracer watches it and reports its hits
 * (auxcap_session_request_hit()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "auxcap/backend.h"
#include "auxcap/emu.h"
#include "auxcap/perf_data.h"
#include "auxcap/pmu.h"
#include "auxcap/proc.h"
#include "auxcap/session.h"
#include "auxcap/sys.h"
#include "auxcap/trigger.h"
#include "cli.h"
#include "config.h"
#include "emulate.h"
#if AUXCAP_HAVE_LIBELF
#include "binaries.h"
#endif
#include "event.h"
#include "evparse.h"
#include "perf_data_sink.h"
#include "record_trigger.h"
#include "record_backend.h"
#if AUXCAP_HAVE_TRACER
#include <asm/perf_regs.h>

#include "live_source.h"
#endif

#define MAX_EVENTS 32
#define MAX_TARGETS 4096

struct record_opts {
	const char *events[MAX_EVENTS]; /* borrowed from @lists */
	size_t nr_events;
	char **lists[MAX_EVENTS]; /* each -e's list split at its commas (owned) */
	size_t nr_list[MAX_EVENTS], nr_lists;
	bool all_cpus;
	const char *cpu_list;
	const char *pid_list;
	const char *tid_list;
	size_t data_pages, aux_pages;
	const char *output;
	bool snapshot, snapshot_at_exit;
	uint64_t snapshot_size;
	const char *control;
	const char *trigger_on; /* SYMBOL[@BINARY] */
	uint64_t trigger_min_ns; /* --trigger-min-duration */
	enum cli_trigger_via trigger_via;
	const char *filter;		      /* --filter before any -e: the AUX event's */
	const char *ev_filters[MAX_EVENTS]; /* --filter after -e: that event's */
	bool strict;
	bool force;
	bool no_buildid;       /* -B: no BUILD_ID entries */
	bool no_buildid_cache; /* -N: nothing written under $HOME/.debug */
	bool kcore;	       /* --kcore: the kernel's code into FILE.archive/ */
	bool mem;	       /* --mem: Arm SPE's loads and stores (perf mem record) */
	bool emulate;
	uint64_t max_insns;
	uint64_t freq;	 /* -F: samples per second of the counters (0: 4000, perf's default) */
	uint64_t period; /* -c: events per sample of the counters (0: by frequency) */
	bool callchain;	 /* -g, --call-graph fp: the counters' samples carry a callchain */
	bool data_addr;	 /* -d: ... their data address (PERF_SAMPLE_ADDR) */
	bool no_inherit; /* -i: the tasks a target starts are not recorded */
	int verbose;
	bool quiet; /* -q: no messages but warnings and errors */
	long delay_ms; /* -D: the events start this late (ms); -1: on the control FIFO's
			* "enable"; 0 (and no -D): at once */
	char **cmd; /* NULL-terminated, or NULL */
};

static struct auxcap_session *g_session;
static volatile sig_atomic_t g_stop_signalled; /* a stop signal came (before the session ran) */
static bool g_quiet; /* -q */

/* "auxcap: ..." on standard error: what was done (not a warning), unless -q. */
static void __attribute__((format(printf, 1, 2))) note(const char *fmt, ...)
{
	va_list ap;

	if (g_quiet)
		return;
	va_start(ap, fmt);
	fputs("auxcap: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static void on_stop_signal(int sig)
{
	(void)sig;
	g_stop_signalled = 1;
	if (g_session)
		auxcap_session_request(g_session, AUXCAP_REQ_STOP);
}

static void on_snapshot_signal(int sig)
{
	(void)sig;
	if (g_session)
		auxcap_session_request_from(g_session, AUXCAP_REQ_SNAPSHOT, AUXCAP_TRIGGER_SIGNAL);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: auxcap record [-e EVENT [--filter FILTER]]... [-F N | -c N] [-g] [-d] [-D MS]\n"
		"                     [-a | -C CPUS | -p PID | -t TID] [-i] [-m DATA[,AUX]] [-o FILE]\n"
		"                     [--snapshot[=SIZE|e]] [--control fifo:CTL[,ACK]]\n"
		"                     [--trigger-on SYMBOL[@BINARY]] [--strict]\n"
		"                     [--kcore] [-B | -N] [-f] [-v | -q] [-- COMMAND [ARGS...]]\n"
		"\n"
		"  -e, --event EVENT    event to record, perf syntax (default: cpu-clock at 4000 Hz);\n"
		"                       intel_pt//u, cpu-clock, raw_syscalls:sys_enter, mem:ADDR:x, ...;\n"
		"                       a list: -e cpu-clock,page-faults\n"
		"  -F, --freq N|max     sample the counter events N times a second (default 4000)\n"
		"  -c, --count N        ... or once every N events (an event's own period= or freq=\n"
		"                       term wins)\n"
		"  -d, --data           counter samples carry their data address (a page fault's,\n"
		"                       a watchpoint's: -e page-faults -d)\n"
		"  -D, --delay MS       start the events MS milliseconds after the command (or\n"
		"                       the attach), side-band at once; -1: when the control\n"
		"                       FIFO says 'enable'\n"
		"  -g                   counter samples carry their call stack (callchain), as\n"
		"                       the kernel unwinds it by frame pointers\n"
		"      --call-graph fp  the same (fp is the one mode: for code without frame\n"
		"                       pointers, record the trace, whose stack decode rebuilds)\n"
		"  -a, --all-cpus       system-wide on every online CPU\n"
		"  -C, --cpu CPUS       system-wide on these CPUs (0-3,8)\n"
		"  -p, --pid PID[,PID]  existing processes (all their threads, and the tasks they\n"
		"                       start while recorded)\n"
		"  -t, --tid TID[,TID]  existing threads (only those)\n"
		"  -i, --no-inherit     the tasks the command or -p's processes start are not\n"
		"                       recorded\n"
		"  -m, --mmap-pages D[,A]  data ring pages and AUX pages per ring (powers of two;\n"
		"                       a size with K/M/G is accepted too)\n"
		"  -o, --output FILE    output perf.data file (default auxcap.data; '-' = pipe mode\n"
		"                       on stdout); created 0600, never through a symlink; an\n"
		"                       existing FILE is kept as FILE.old\n"
		"  -S, --snapshot[=SIZE|e]  flight recorder: keep the newest data in the rings and\n"
		"                       write it on SIGUSR2, the 's' key or the control FIFO;\n"
		"                       'e' also writes one at exit\n"
		"      --control fifo:CTL[,ACK]  commands from a FIFO: snapshot, enable, disable, stop;\n"
		"                       'ack' written to ACK when done\n"
		"      --filter FILTER  the filter of the -e before it: an AUX event's address\n"
		"                       filters, perf's syntax: 'filter SYM @BIN', 'filter\n"
		"                       0x1000/0x200@/path/bin', 'start SYM @BIN', 'stop ...'; a\n"
		"                       tracepoint's ftrace filter: 'prev_pid == 1 && next_comm !=\n"
		"                       \"sh\"' (before any -e: the AUX event's)\n"
		"      --trigger-on SYMBOL[@BINARY]  with -S: a snapshot each time the traced\n"
		"                       program enters function SYMBOL of BINARY (default: the\n"
		"                       command's, or -p/-t's, executable)\n"
		"      --trigger-min-duration DUR  with --trigger-on: a snapshot only when a call\n"
		"                       of SYMBOL took DUR or longer (500us, 2ms, 1.5s), taken at\n"
		"                       its return (a uprobe and a return probe)\n"
		"      --trigger-via uprobe|breakpoint  how (default: a uprobe when the kernel\n"
		"                       has them, else an execute breakpoint; with --emulate the\n"
		"                       tracer watches the function)\n"
		"      --emulate        use the emulated AUX PMUs (intel_pt, intel_bts, arm_spe_0):\n"
		"                       COMMAND runs under a single-stepping tracer that encodes\n"
		"                       what it executes as the PMU's trace (default -e intel_pt//u);\n"
		"                       or -p PID / -t TID: one running thread, attached to and\n"
		"                       let go when recording stops\n"
		"      --max-insns N    --emulate: stop tracing after N instructions\n"
		"      --strict         exit with status 2 when any data was lost\n"
		"      --mem            sample loads and stores with Arm SPE (perf mem record):\n"
		"                       -e arm_spe_N/load_filter=1,store_filter=1,jitter=1/ added\n"
		"                       to the events (--emulate: every load and store,\n"
		"                       period=1); then auxcap report FILE --mem\n"
		"      --kcore          save the running kernel's code (from /proc/kcore, as\n"
		"                       patched now) and symbols in FILE.archive/, for decode\n"
		"                       to follow a trace of kernel code (intel_pt//k); root\n"
		"  -B, --no-buildid     list no build-ids of the mapped binaries (decode then finds\n"
		"                       them by path only; archive has nothing to copy)\n"
		"  -N, --no-buildid-cache  write nothing under $HOME/.debug: the vdso's image is not\n"
		"                       saved there (its code is then not decoded)\n"
		"  -f, --force          replace FILE instead of keeping FILE.old\n"
		"  -v, --verbose        more messages\n"
		"  -q, --quiet          no messages but warnings and errors (no summary, no\n"
		"                       status line)\n");
}

/* Pages from "N" (pages) or "N[KMG]" (bytes); must be a power of two. */
static int parse_pages(const char *s, size_t *ret)
{
	char *end;
	unsigned long long v;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'K': case 'k': v = v * 1024 / page; end++; break;
	case 'M': case 'm': v = v * 1024 * 1024 / page; end++; break;
	case 'G': case 'g': v = v * 1024 * 1024 * 1024 / page; end++; break;
	default: break;
	}
	if (*end || !v || (v & (v - 1)))
		return -EINVAL;
	*ret = (size_t)v;
	return 0;
}

static int parse_mmap_pages(const char *arg, struct record_opts *o)
{
	char buf[64], *comma;

	snprintf(buf, sizeof(buf), "%s", arg);
	comma = strchr(buf, ',');
	if (comma)
		*comma++ = '\0';
	if (*buf && parse_pages(buf, &o->data_pages) < 0)
		return -EINVAL;
	if (comma && *comma && parse_pages(comma, &o->aux_pages) < 0)
		return -EINVAL;
	return 0;
}

/* A positive count (decimal, 0x hex or 0 octal) at @arg; -EINVAL if it is not one. */
static int parse_count(const char *arg, uint64_t *ret)
{
	char *end;

	errno = 0;
	*ret = strtoull(arg, &end, 0);
	return errno || end == arg || *end || arg[0] == '-' || !*ret ? -EINVAL : 0;
}

/* The kernel's highest sampling frequency (perf_event_max_sample_rate), 0 if unknown. */
static uint64_t max_sample_rate(void)
{
	unsigned long long v = 0;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* -F N or -F max, as perf: above the kernel's limit, lowered to it with a warning. */
static int parse_freq(const char *arg, uint64_t *ret)
{
	uint64_t max = max_sample_rate(), v;
	char *end;

	if (!strcmp(arg, "max")) {
		if (!max) {
			cli_err("-F max: cannot read /proc/sys/kernel/perf_event_max_sample_rate; "
				"give a frequency in Hz");
			return -EINVAL;
		}
		*ret = max;
		return 0;
	}
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || !v) {
		cli_err("bad -F '%s': give samples per second (e.g. -F 999) or 'max'", arg);
		return -EINVAL;
	}
	if (max && v > max) {
		cli_warn("-F %" PRIu64 " is above the kernel's maximum sampling rate: %" PRIu64
			 " Hz is used (raise /proc/sys/kernel/perf_event_max_sample_rate for more; "
			 "the kernel lowers it when sampling takes too long)",
			 v, max);
		v = max;
	}
	*ret = v;
	return 0;
}

/* --call-graph MODE: perf's fp; its dwarf and lbr need what auxcap does not record. */
static int parse_call_graph(const char *arg)
{
	if (!strcmp(arg, "fp"))
		return 0;
	if (!strncmp(arg, "dwarf", 5) || !strcmp(arg, "lbr"))
		cli_err("--call-graph %s is not supported: auxcap records frame-pointer callchains "
			"(--call-graph fp, or -g); for code built without frame pointers, record its "
			"trace (-e intel_pt//u, or --emulate) and decode rebuilds every sample's stack "
			"from it",
			arg);
	else
		cli_err("bad --call-graph '%s': the mode is fp (frame pointers; -g is the same)",
			arg);
	return -EINVAL;
}

static void free_lists(struct record_opts *o)
{
	for (size_t i = 0; i < o->nr_lists; i++)
		auxcap_event_list_free(o->lists[i], o->nr_list[i]);
	o->nr_lists = 0;
}

/*
 * An event set per task and CPU (-p of a process of many threads, -a on many CPUs) can take
 * more files than the soft limit allows: raise it to the hard one, as perf does on EMFILE.
 * Called after the command is started, which keeps its own limit.
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * --mem: Arm SPE sampling loads and stores, as perf mem record programs it: the first
 * arm_spe PMU of the machine, its load and store filters, and a random part in the interval
 * so a loop is not always sampled at the same instruction (the emulated unit's with
 * --emulate: every load and store).  One line and -EINVAL where there is no such PMU.
 */
static int add_mem_event(struct record_opts *o)
{
	static char ev[96];
	const char *pmu = o->emulate ? "arm_spe_0" : NULL;
	struct auxcap_pmu_list *list = NULL;

	if (o->nr_events == MAX_EVENTS) {
		cli_err("too many events (at most %d) with --mem's", MAX_EVENTS);
		return -EINVAL;
	}
	if (!pmu && auxcap_pmu_list_new(NULL, &list) == 0)
		for (size_t i = 0; i < list->nr && !pmu; i++)
			if (list->entries[i].pmu && !strncmp(list->entries[i].name, "arm_spe", 7))
				pmu = list->entries[i].name;
	/* the emulated unit sees some 30,000 instructions a second: each of them, exactly */
	if (pmu)
		snprintf(ev, sizeof(ev), "%s/load_filter=1,store_filter=1,%s/", pmu,
			 o->emulate ? "period=1" : "jitter=1");
	auxcap_pmu_list_free(list);
	if (!pmu) {
		cli_err("--mem samples loads and stores with Arm SPE, and this machine has no "
			"arm_spe PMU (none in %s); --emulate runs the emulated SPE unit instead",
			AUXCAP_PMU_SYSFS_ROOT);
		return -EINVAL;
	}
	o->events[o->nr_events++] = ev;
	return 0;
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "snapshot", optional_argument, NULL, 'S' },
		{ "control", required_argument, NULL, 1 },
		{ "strict", no_argument, NULL, 2 },
		{ "emulate", no_argument, NULL, 3 },
		{ "max-insns", required_argument, NULL, 4 },
		{ "trigger-on", required_argument, NULL, 5 },
		{ "trigger-via", required_argument, NULL, 6 },
		{ "trigger-min-duration", required_argument, NULL, 10 },
		{ "filter", required_argument, NULL, 7 },
		{ "force", no_argument, NULL, 'f' },
		{ "no-buildid", no_argument, NULL, 'B' },
		{ "no-buildid-cache", no_argument, NULL, 'N' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "delay", required_argument, NULL, 'D' },
		{ "data", no_argument, NULL, 'd' },
		{ "no-inherit", no_argument, NULL, 'i' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "call-graph", required_argument, NULL, 8 },
		{ "kcore", no_argument, NULL, 9 },
		{ "mem", no_argument, NULL, 11 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->output = "auxcap.data";
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:e:aC:p:t:m:o:S::F:c:D:gdifBNvqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e': {
			/* perf's -e a,b: the commas that are not inside a PMU's /terms/ */
			char **list;
			size_t n;

			if (auxcap_event_list_split(optarg, &list, &n) < 0) {
				cli_err("bad -e '%s': an empty event in the list; give EVENT or "
					"EVENT,EVENT,... (e.g. -e cpu-clock,page-faults)",
					optarg);
				return -EINVAL;
			}
			o->lists[o->nr_lists] = list;
			o->nr_list[o->nr_lists++] = n;
			if (o->nr_events + n > MAX_EVENTS) {
				cli_err("too many events (at most %d)", MAX_EVENTS);
				return -EINVAL;
			}
			for (size_t k = 0; k < n; k++)
				o->events[o->nr_events++] = list[k];
			break;
		}
		case 'a': o->all_cpus = true; break;
		case 'C': o->cpu_list = optarg; break;
		case 'p': o->pid_list = optarg; break;
		case 't': o->tid_list = optarg; break;
		case 'm':
			if (parse_mmap_pages(optarg, o) < 0) {
				cli_err("bad -m '%s': give DATA[,AUX] as page counts or sizes (K/M/G) "
					"that are powers of two, e.g. -m 64,1024 or -m 256K,4M",
					optarg);
				return -EINVAL;
			}
			break;
		case 'o': o->output = optarg; break;
		case 'S':
			o->snapshot = true;
			if (optarg && !strcmp(optarg, "e")) {
				o->snapshot_at_exit = true;
			} else if (optarg) {
				size_t pages;

				if (parse_pages(optarg, &pages) < 0) {
					cli_err("bad --snapshot size '%s': give a power-of-two size "
						"(e.g. 4M) or 'e'",
						optarg);
					return -EINVAL;
				}
				o->aux_pages = pages;
			}
			break;
		case 1: o->control = optarg; break;
		case 2: o->strict = true; break;
		case 3: o->emulate = true; break;
		case 4:
			if (parse_count(optarg, &o->max_insns) < 0) {
				cli_err("bad --max-insns '%s': give a positive number of instructions",
					optarg);
				return -EINVAL;
			}
			break;
		case 5: o->trigger_on = optarg; break;
		case 10:
			if (cli_duration_parse(optarg, &o->trigger_min_ns) < 0) {
				cli_err("bad --trigger-min-duration '%s': give a time with its unit, "
					"e.g. 500us, 2ms, 1.5s",
					optarg);
				return -EINVAL;
			}
			break;
		case 6:
			if (cli_trigger_via_parse(optarg, &o->trigger_via) < 0)
				return -EINVAL;
			break;
		case 7:
			/* perf's rule: a filter is the last -e's before it */
			if (o->nr_events && o->ev_filters[o->nr_events - 1]) {
				cli_err("two --filter for '%s': give one (join conditions with && "
					"or ||)",
					o->events[o->nr_events - 1]);
				return -EINVAL;
			}
			if (o->nr_events)
				o->ev_filters[o->nr_events - 1] = optarg;
			else
				o->filter = optarg;
			break;
		case 'g': o->callchain = true; break;
		case 'd': o->data_addr = true; break;
		case 'i': o->no_inherit = true; break;
		case 8:
			if (parse_call_graph(optarg) < 0)
				return -EINVAL;
			o->callchain = true;
			break;
		case 9: o->kcore = true; break;
		case 11: o->mem = true; break;
		case 'f': o->force = true; break;
		case 'B': o->no_buildid = true; break;
		case 'N': o->no_buildid_cache = true; break;
		case 'v': o->verbose++; break;
		case 'q': o->quiet = true; break;
		case 'D': {
			char *end;

			errno = 0;
			o->delay_ms = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || o->delay_ms < -1 ||
			    o->delay_ms > 86400000) {
				cli_err("bad -D '%s': give milliseconds to wait before the events "
					"start (e.g. -D 500), or -1 to start them with the control "
					"FIFO's 'enable'",
					optarg);
				return -EINVAL;
			}
			break;
		}
		case 'F':
			if (parse_freq(optarg, &o->freq) < 0)
				return -EINVAL;
			break;
		case 'c':
			if (parse_count(optarg, &o->period) < 0) {
				cli_err("bad -c '%s': give a positive number of events per sample",
					optarg);
				return -EINVAL;
			}
			break;
		case 'h': usage(stdout); exit(CLI_OK);
		case ':':
			cli_err("record: option '%s' needs a value; run 'auxcap record --help'",
				argv[optind - 1]);
			return -EINVAL;
		default:
			if (optopt)
				cli_err("record: unknown option '-%c'; run 'auxcap record --help'",
					optopt);
			else
				cli_err("record: unknown option '%s'; run 'auxcap record --help'",
					argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	if (o->mem && add_mem_event(o) < 0)
		return -EINVAL;
	if (o->kcore && !strcmp(o->output, "-")) {
		cli_err("--kcore saves the kernel's code beside the capture file (FILE.archive/): "
			"give -o FILE, not a pipe");
		return -EINVAL;
	}
	if (o->emulate && (o->all_cpus || o->cpu_list)) {
		cli_err("--emulate traces one task, not CPUs: give a command after '--', or -p PID "
			"or -t TID");
		return -EINVAL;
	}
	if (o->emulate && !o->cmd && !o->pid_list && !o->tid_list) {
		cli_err("--emulate traces a command or a running task: give the command after '--' "
			"(e.g. auxcap record --emulate -- ./prog), or -p PID or -t TID");
		return -EINVAL;
	}
	if (o->emulate && o->cmd && (o->pid_list || o->tid_list)) {
		cli_err("--emulate traces one task: give a command after '--' or -p/-t, not both");
		return -EINVAL;
	}
	if (o->emulate && strchr(o->pid_list ? o->pid_list : o->tid_list ? o->tid_list : "", ',')) {
		cli_err("--emulate traces one thread: give one PID or TID, not '%s' (the live "
			"tracer follows a single thread)",
			o->pid_list ? o->pid_list : o->tid_list);
		return -EINVAL;
	}
	if (!o->cmd && !o->all_cpus && !o->cpu_list && !o->pid_list && !o->tid_list) {
		cli_err("nothing to record: give a command after '--', or -a, -C, -p or -t");
		return -EINVAL;
	}
	if (!!o->pid_list + !!o->tid_list + (o->all_cpus || o->cpu_list) > 1) {
		cli_err("-p, -t and -a/-C exclude each other");
		return -EINVAL;
	}
	if (o->delay_ms == -1 && !o->control) {
		cli_err("-D -1 starts with the events off, and only the control FIFO turns them on: "
			"add --control fifo:CTL[,ACK] (then 'echo enable > CTL')");
		return -EINVAL;
	}
	if (o->freq && o->period) {
		cli_err("-F and -c exclude each other: sample by frequency or every N events");
		return -EINVAL;
	}
	if (o->trigger_min_ns && !o->trigger_on) {
		cli_err("--trigger-min-duration times the calls of the --trigger-on function: give "
			"--trigger-on SYMBOL too");
		return -EINVAL;
	}
	if (o->trigger_on && !o->snapshot) {
		cli_err("--trigger-on takes snapshots, and without -S every byte is written anyway "
			"(full-trace mode): add -S (or --snapshot=SIZE) for a flight recorder");
		return -EINVAL;
	}
	return 0;
}

/* --- targets ----------------------------------------------------------------------------- */

static int online_cpus(int **ret, size_t *nr)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int r;

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EBADMSG;
	}
	fclose(f);
	r = auxcap_cpulist_parse(buf, ret, nr);
	return r;
}

/* Parse "1,2,3" into pids; with @threads, expand each pid to the tids in /proc/PID/task. */
static int parse_pids(const char *list, bool threads, pid_t *out, size_t *nr)
{
	char buf[256], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", list);
	*nr = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end, path[64];
		long v = strtol(tok, &end, 10);

		if (*end || v <= 0) {
			cli_err("bad pid '%s' in '%s': give decimal process ids, comma-separated",
				tok, list);
			return -EINVAL;
		}
		snprintf(path, sizeof(path), "/proc/%ld/task", v);
		if (access(path, F_OK) < 0) {
			cli_err("no process or thread %ld: check the id with 'ps'", v);
			return -ESRCH;
		}
		if (threads) {
			struct dirent *de;
			DIR *d = opendir(path);

			if (!d) {
				cli_err("cannot list the threads of %ld in %s: %s", v, path,
					strerror(errno));
				return -errno;
			}
			while ((de = readdir(d))) {
				long tid = strtol(de->d_name, &end, 10);

				if (de->d_name[0] == '.' || *end || tid <= 0)
					continue;
				if (*nr == MAX_TARGETS) {
					closedir(d);
					cli_err("more than %d threads in '%s': record the CPUs instead "
						"(-a or -C)",
						MAX_TARGETS, list);
					return -E2BIG;
				}
				out[(*nr)++] = (pid_t)tid;
			}
			closedir(d);
		} else if (*nr < MAX_TARGETS) {
			out[(*nr)++] = (pid_t)v;
		} else {
			cli_err("more than %d ids in '%s': record the CPUs instead (-a or -C)",
				MAX_TARGETS, list);
			return -E2BIG;
		}
	}
	return *nr ? 0 : -EINVAL;
}

/* The exit status for an exec that failed with @err, as a shell gives it: 127 not found
 * (the file, or its interpreter), 126 found but not run. */
static int exec_status(int err)
{
	return err == ENOENT ? 127 : 126;
}

/*
 * Whether the command @argv0 can be run, looked up as execvp() will: else a one-line error
 * and the exit status a shell gives, 127 (not found) or 126 (found, cannot be run), before
 * anything is opened or written (an existing output file is kept).  0 if it can.
 */
static int check_command(const char *argv0)
{
	struct stat st;

	if (!strchr(argv0, '/')) {
		char *exe = cli_find_executable(argv0);
		const char *path = getenv("PATH");

		if (!exe) {
			cli_err("cannot run '%s': no such command in PATH (%s)", argv0,
				path ? path : "not set: /usr/local/bin:/usr/bin:/bin");
			return 127;
		}
		free(exe);
		return 0;
	}
	if (stat(argv0, &st) < 0) {
		cli_err("cannot run '%s': %s", argv0, strerror(errno));
		return errno == ENOENT || errno == ENOTDIR ? 127 : 126;
	}
	if (S_ISDIR(st.st_mode)) {
		cli_err("cannot run '%s': it is a directory", argv0);
		return 126;
	}
	if (access(argv0, X_OK) < 0) {
		cli_err("cannot run '%s': %s (not executable: chmod +x it?)", argv0,
			strerror(errno));
		return 126;
	}
	return 0;
}

/*
 * Fork @argv stopped before exec; returns the pid and the go pipe.  With @traced the child
 * also stops right after its exec (PTRACE_TRACEME), for set-up that needs the new image.
 * *@ret_exec_err reads the errno of a failed exec (4 bytes), or end of file once the exec
 * succeeded (exec_failed()).
 */
static pid_t start_command(char **argv, int *ret_go, int *ret_exec_err, bool traced,
			   bool stdout_is_capture)
{
	int p[2], e[2];
	pid_t pid;

	if (pipe(p) < 0)
		return -errno;
	if (pipe2(e, O_CLOEXEC | O_NONBLOCK) < 0) {
		pid = -errno;
		close(p[0]);
		close(p[1]);
		return pid;
	}
	pid = fork();
	if (pid < 0) {
		pid = -errno;
		close(p[0]);
		close(p[1]);
		close(e[0]);
		close(e[1]);
		return pid;
	}
	if (pid == 0) {
		char c;
		int err;

		close(p[1]);
		close(e[0]);
		signal(SIGINT, SIG_DFL);
		if (read(p[0], &c, 1) != 1)
			_exit(127); /* the recorder gave up */
		if (traced && ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(127);
		/* -o -: our standard output is the capture; the command's goes to stderr (as perf). */
		if (stdout_is_capture && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(127);
		close(p[0]);
		execvp(argv[0], argv);
		err = errno;
		/* ENOENT for a file that is there: what it names to run it by is not */
		fprintf(stderr, "auxcap: error: cannot run '%s': %s%s\n", argv[0], strerror(err),
			err == ENOENT && strchr(argv[0], '/') && access(argv[0], F_OK) == 0
				? " (its interpreter: the #! line, or the ELF program interpreter)"
				: "");
		(void)!write(e[1], &err, sizeof(err));
		_exit(exec_status(err));
	}
	close(p[0]);
	close(e[1]);
	*ret_go = p[1];
	*ret_exec_err = e[0];
	return pid;
}

/*
 * After the command ended, or was let go or let down (its go pipe closed): the exit status for
 * an exec that failed (the child said why), else 0.  Never waits (a command still alive
 * before its exec has not failed it).  Closes *@fd.
 */
static int exec_failed(int *fd)
{
	int err = 0;
	ssize_t n;

	if (*fd < 0)
		return 0;
	do {
		n = read(*fd, &err, sizeof(err));
	} while (n < 0 && errno == EINTR);
	close(*fd);
	*fd = -1;
	if (n != (ssize_t)sizeof(err))
		return 0;
	return exec_status(err);
}

/* The ptrace hint for an attach that failed with @err. */
static const char *attach_hint(int err)
{
	return err == -EPERM ? " (a kernel thread, one another debugger holds, or ptrace is restricted: "
			       "see /proc/sys/kernel/yama/ptrace_scope, or run as root)"
			     : "";
}

/* --emulate -p/-t: a thread that another tracer (gdb, strace) holds cannot be attached to:
 * say so before anything is written. */
static int check_traceable(pid_t tid)
{
	long tracer = 0;

	if (auxcap_proc_status(NULL, tid, "TracerPid", &tracer) < 0)
		return 0; /* the attach will say */
	if (tracer > 0) {
		char path[64], comm[64] = "?";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%ld/comm", tracer);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		cli_err("cannot trace thread %d: process %ld (%s) traces it already; detach that "
			"debugger or tracer first",
			(int)tid, tracer, comm);
		return -EBUSY;
	}
	return 0;
}

/* --emulate -p PID traces the process's main thread only: say so when it has others. */
static void warn_other_threads(pid_t pid)
{
	char path[64];
	struct dirent *de;
	unsigned int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	if (n > 1)
		cli_warn("process %d has %u other thread%s that --emulate does not trace: the live "
			 "tracer follows its main thread only (-t TID for another; a real PMU traces "
			 "them all)",
			 (int)pid, n - 1, n == 2 ? "" : "s");
}

/* The executable of process @pid (/proc/PID/exe), malloc'd, or NULL. */
static char *proc_exe(pid_t pid)
{
	char link[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

/*
 * Let a command started with start_command(traced) exec and wait until it stops right after
 * the exec, its new image mapped and none of it run.  Returns 0, or -1 after printing why
 * (the child is then reaped).
 */
static int run_to_exec(pid_t child, int *go)
{
	int st;

	(void)!write(*go, "g", 1);
	close(*go);
	*go = -1;
	while (waitpid(child, &st, 0) < 0) {
		if (errno != EINTR) {
			cli_err("cannot wait for '%d': %s", (int)child, strerror(errno));
			return -1;
		}
	}
	if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP)
		return 0;
	if (WIFSTOPPED(st)) {
		kill(child, SIGKILL);
		(void)ptrace(PTRACE_DETACH, child, NULL, NULL);
		waitpid(child, NULL, 0);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 127) /* 127: it said why itself */
		cli_err("the command did not start (it %s); check the command line",
			WIFEXITED(st) ? "exited at once" : "stopped or died before its exec");
	return -1;
}

/* --- events ------------------------------------------------------------------------------ */

static bool is_aux_pmu(const char *pmu)
{
	/* cs_etm has no backend yet, but it is an AUX PMU all the same. */
	return auxcap_backend_for_pmu(pmu, NULL) || !strcmp(pmu, "cs_etm");
}

static bool has_rate(const struct auxcap_event_spec *sp)
{
	for (size_t i = 0; i < sp->nr_terms; i++)
		if (sp->terms[i].kind == AUXCAP_EVTERM_PERIOD ||
		    sp->terms[i].kind == AUXCAP_EVTERM_FREQ)
			return true;
	return false;
}

/* --- the session thread, control FIFO and terminal ------------------------------------------- */

struct loop_state {
	struct auxcap_session *s;
	int result;
	volatile int done;
};

static void *session_thread(void *arg)
{
	struct loop_state *ls = arg;

	ls->result = auxcap_session_run(ls->s, -1);
	__atomic_store_n(&ls->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct control {
	int ctl_fd, ack_fd;
	char buf[256];
	size_t len;
};

static int control_open(const char *spec, struct control *c)
{
	char path[512], *comma;

	c->ctl_fd = c->ack_fd = -1;
	c->len = 0;
	if (!spec)
		return 0;
	if (strncmp(spec, "fifo:", 5)) {
		cli_err("bad --control '%s': use fifo:CTL[,ACK]", spec);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s", spec + 5);
	comma = strchr(path, ',');
	if (comma)
		*comma++ = '\0';
	/* O_RDWR: the FIFO never reports end-of-file when a writer closes it. */
	c->ctl_fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (c->ctl_fd < 0) {
		cli_err("cannot open control FIFO '%s': %s (create it with 'mkfifo %s')", path,
			strerror(errno), path);
		return -errno;
	}
	if (comma && *comma) {
		c->ack_fd = open(comma, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (c->ack_fd < 0) {
			cli_err("cannot open ack FIFO '%s': %s (create it with 'mkfifo %s')", comma,
				strerror(errno), comma);
			return -errno;
		}
	}
	return 0;
}

/* Requests carried out so far of a kind: snapshots (taken or merged), enable/disable. */
static uint64_t snapshots_done(const struct auxcap_session_stats *st)
{
	return st->snapshots + st->snapshot_requests_coalesced;
}

static uint64_t toggles_done(const struct auxcap_session_stats *st)
{
	return st->toggles;
}

/* Wait (5 s at most) until the capture thread has carried out the request just made, when
 * @done counts more than @before: its ack then means the snapshot is out, the events on or
 * off. */
static void wait_done(struct auxcap_session *s,
		      uint64_t (*done)(const struct auxcap_session_stats *), uint64_t before,
		      struct loop_state *ls)
{
	struct auxcap_session_stats st;

	for (int i = 0; i < 5000 && !ls->done; i++) {
		auxcap_session_get_stats(s, &st);
		if (done(&st) > before)
			return;
		usleep(1000);
	}
}

static void control_line(struct control *c, const char *line, struct loop_state *ls)
{
	struct auxcap_session_stats st;
	const char *reply = "ack\n";

	auxcap_session_get_stats(ls->s, &st);
	if (!strcmp(line, "snapshot")) {
		auxcap_session_request_from(ls->s, AUXCAP_REQ_SNAPSHOT, AUXCAP_TRIGGER_FIFO);
		wait_done(ls->s, snapshots_done, snapshots_done(&st), ls);
	} else if (!strcmp(line, "enable")) {
		auxcap_session_request(ls->s, AUXCAP_REQ_ENABLE);
		wait_done(ls->s, toggles_done, toggles_done(&st), ls);
	} else if (!strcmp(line, "disable")) {
		auxcap_session_request(ls->s, AUXCAP_REQ_DISABLE);
		wait_done(ls->s, toggles_done, toggles_done(&st), ls);
	} else if (!strcmp(line, "stop")) {
		auxcap_session_request(ls->s, AUXCAP_REQ_STOP);
	} else if (*line) {
		cli_warn("control FIFO: unknown command '%s' (snapshot, enable, disable, stop)",
			 line);
		reply = "error unknown command\n";
	} else {
		return;
	}
	if (c->ack_fd >= 0)
		(void)!write(c->ack_fd, reply, strlen(reply));
}

static void control_read(struct control *c, struct loop_state *ls)
{
	ssize_t n = read(c->ctl_fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
	char *nl;

	if (n <= 0)
		return;
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	while ((nl = strchr(c->buf, '\n'))) {
		*nl = '\0';
		control_line(c, c->buf, ls);
		memmove(c->buf, nl + 1, c->len - (size_t)(nl + 1 - c->buf) + 1);
		c->len -= (size_t)(nl + 1 - c->buf);
	}
	if (c->len == sizeof(c->buf) - 1)
		c->len = 0; /* an overlong line: drop it */
}

static void status_line(struct auxcap_session *s, struct auxcap_perf_writer *w)
{
	struct auxcap_session_stats st;

	auxcap_session_get_stats(s, &st);
	fprintf(stderr,
		"\r[auxcap] %.1f MB written, %" PRIu64 " snapshots, lost: %" PRIu64
		" records, %" PRIu64 " AUX truncations  ('s' snapshot, 'q' stop) ",
		(double)auxcap_perf_writer_data_size(w) / 1e6, st.snapshots, st.lost,
		st.aux_truncated);
}

/* --- the command --------------------------------------------------------------------------- */

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* How long the main loop waits: 50 ms, or less to start the events on time (-D). */
static int poll_ms(const struct record_opts *o, bool delay_over, uint64_t start_ms)
{
	uint64_t now = mono_ms(), due = start_ms + (uint64_t)o->delay_ms;

	if (o->delay_ms <= 0 || delay_over || now >= due)
		return 50;
	return due - now < 50 ? (int)(due - now) : 50;
}

static void print_summary(const struct auxcap_session_stats *st, const struct auxcap_perf_sink *ps,
			  uint64_t data_bytes, const char *output)
{
	note("wrote %.3f MB to %s: %" PRIu64 " records, %" PRIu64
			" AUX bytes in %" PRIu64 " chunks, %" PRIu64 " snapshots, %" PRIu64
			" wakeups\n",
		(double)data_bytes / 1e6, output, ps->records, ps->aux_bytes, ps->aux_records,
		st->snapshots, st->wakeups);
	if (st->snapshots + st->snapshot_requests_coalesced)
		note("snapshot requests coalesced: %" PRIu64
				"; trigger to frozen: last %.1f us, max %.1f us\n",
			st->snapshot_requests_coalesced, st->snapshot_latency_ns_last / 1e3,
			st->snapshot_latency_ns_max / 1e3);
	if (st->aux_snapshot_trimmed || st->aux_snapshot_wrapped)
		note("AUX snapshots: %" PRIu64 " bytes already in the previous "
				"snapshot not written again; %" PRIu64 " taken after the buffer "
				"wrapped past the previous one (the trace in between is not kept)\n",
			st->aux_snapshot_trimmed, st->aux_snapshot_wrapped);
	if (st->lost_records)
		fprintf(stderr, "auxcap: warning: lost %" PRIu64 " records in %" PRIu64
				" LOST events: the data ring was full (or paused for a snapshot); raise -m DATA\n",
			st->lost, st->lost_records);
	if (st->lost_samples)
		fprintf(stderr, "auxcap: warning: the PMU dropped %" PRIu64 " samples\n",
			st->lost_samples);
	if (st->aux_truncated)
		fprintf(stderr, "auxcap: warning: AUX data lost %" PRIu64 " times out of %" PRIu64
				" (TRUNCATED; re-enabled %" PRIu64 " times): raise -m ,AUX\n",
			st->aux_truncated, st->aux_records, st->aux_reenables);
	if (st->aux_partial)
		fprintf(stderr, "auxcap: warning: AUX data had gaps in it %" PRIu64
				" times out of %" PRIu64 " (PARTIAL)\n",
			st->aux_partial, st->aux_records);
	if (st->aux_collision)
		fprintf(stderr, "auxcap: warning: AUX data detected collision %" PRIu64
				" times out of %" PRIu64 " (COLLISION)\n",
			st->aux_collision, st->aux_records);
	if (st->corrupt)
		fprintf(stderr, "auxcap: warning: %" PRIu64 " malformed ring headers skipped\n",
			st->corrupt);
}

static uint64_t total_loss(const struct auxcap_session_stats *st)
{
	return st->lost + st->lost_samples + st->aux_truncated + st->aux_partial +
	       st->aux_collision + st->corrupt;
}

/* --- --emulate ------------------------------------------------------------------------------ */

struct emu_live {
#if AUXCAP_HAVE_TRACER
	struct auxcap_live_source *src; /* owned by the emulator once attached */
	bool attached;
	bool per_cpu; /* the capture models CPU 0 (trigger hits are on it) */
#endif
	const char *cpuid; /* the emulated PMU's CPU (auxcap_emu_pmu_info.cpuid), NULL: host's */
	int stop_requested;
};

/*
 * Whether an emulated capture of @spec's PMU is per CPU: when its trace names the threads
 * itself (Arm SPE), like perf's captures of a command, which perf's SPE decoder needs (it
 * cannot attribute records of a per-thread queue).  Other traces are attributed through the
 * queue's thread: per thread.
 */
static bool emu_per_cpu(const struct auxcap_event_spec *spec)
{
	const struct auxcap_backend_ops *be = spec ? auxcap_backend_for_pmu(spec->pmu, NULL) : NULL;

	return be && (be->flags & AUXCAP_BACKEND_F_TRACE_HAS_TID) &&
	       !(be->flags & AUXCAP_BACKEND_F_PER_THREAD);
}

/*
 * --emulate: the command, forked by us and waiting before its exec (@child, @go), is handed to
 * the live tracer, which lets it exec on the emulator's producer thread and traces it into the
 * emulated AUX event.  The other events are real kernel events on the same pid, enabled by
 * that exec like the emulated one (enable_on_exec).  On success the source owns @go and the
 * child (*@go is set to -1); the caller must not wait for the child.
 */
static int emu_setup(const struct record_opts *o, struct auxcap_emu *emu,
		     const struct auxcap_session_event *aux, pid_t child, int *go,
		     pid_t attach_tid, struct emu_live *live)
{
#if AUXCAP_HAVE_TRACER
	struct auxcap_emu_pmu_info info;
	enum auxcap_tracer_format fmt;
	int r;

	if (!aux->attr) {
		cli_err("--emulate records an AUX event: give -e intel_pt//u, -e intel_bts//u or "
			"-e arm_spe_0//");
		return -EINVAL;
	}
	/* The parser resolved the PMU through the emulated list: match its type. */
	r = -ENOENT;
	for (int p = 0; p < AUXCAP_EMU_PMU_COUNT; p++)
		if (auxcap_emu_pmu_info(emu, (enum auxcap_emu_pmu)p, &info) == 0 &&
		    info.type == aux->attr->type) {
			r = 0;
			break;
		}
	if (r < 0) {
		cli_err("'%s' is not an emulated PMU (intel_pt, intel_bts, arm_spe_0)", aux->name);
		return r;
	}
	live->cpuid = info.cpuid;
	fmt = info.pmu == AUXCAP_EMU_PMU_INTEL_PT	 ? AUXCAP_TRACER_INTEL_PT
	      : info.pmu == AUXCAP_EMU_PMU_INTEL_BTS ? AUXCAP_TRACER_INTEL_BTS
						     : AUXCAP_TRACER_ARM_SPE;
	if (attach_tid > 0)
		r = auxcap_live_source_new_attach(fmt, attach_tid, o->max_insns, &live->src);
	else
		r = auxcap_live_source_new_child(fmt, child, *go, o->max_insns, &live->src);
	if (r == 0) {
		*go = -1; /* the source's now, and the child with it */
		r = auxcap_emu_source_attach(emu, info.pmu, -1, &auxcap_live_source_ops, live->src);
	}
	if (r < 0) {
		cli_err("cannot set up the live tracer: %s", strerror(-r));
		return r;
	}
	live->attached = true;
	return 0;
#else
	(void)o;
	(void)emu;
	(void)aux;
	(void)child;
	(void)go;
	(void)attach_tid;
	(void)live;
	cli_err("--emulate needs the live tracer, which this build lacks (x86-64 with capstone "
		"and libipt)");
	return -ENOSYS;
#endif
}

#if AUXCAP_HAVE_TRACER
/* The tracer saw the watched function run (on the emulator's producer thread). */
static void emu_on_hit(void *ctx, uint64_t time_ns, uint32_t pid, uint32_t tid, uint64_t call_ns)
{
	struct auxcap_session *s = __atomic_load_n(&g_session, __ATOMIC_ACQUIRE);
	const struct emu_live *live = ctx;

	(void)pid;
	if (s)
		auxcap_session_request_call(s, time_ns, tid, live->per_cpu ? 0 : (uint32_t)-1,
					    call_ns);
}
#endif

/*
 * Refills of the tracer in snapshot mode, in single steps (ptrace stops).  The emulator's
 * lock is held for a refill, so a snapshot's freeze waits for the rest of it: about 140 ms
 * here with the default of 4096 ptrace steps, a millisecond or so with this many (a system
 * call, which may block, is stepped without the lock: live_source.c).  It costs nothing
 * measurable: the ptrace stop of each instruction is the tracer's time (682,254 instructions
 * of examples/auxcap-example-loop: 15.7 to 17.3 s either way).
 */
#define EMU_SNAPSHOT_BATCH 64
#define EMU_END_GRACE_MS 2000 /* a stopped capture's command: SIGTERM to SIGKILL */

/*
 * --emulate -S: refills small enough that a snapshot's freeze does not wait long for the
 * emulator; with --trigger-on (@t not NULL) the tracer watches the function (unless a
 * breakpoint, which the kernel handles, was asked for).  @per_cpu: the capture models CPU 0.
 */
static int emu_snapshot_setup(struct emu_live *live, const struct cli_trigger *t, bool per_cpu)
{
#if AUXCAP_HAVE_TRACER
	auxcap_live_source_set_batch(live->src, EMU_SNAPSHOT_BATCH);
	live->per_cpu = per_cpu;
	if (t && t->kind == CLI_TRIGGER_TRACER) {
		int r = auxcap_live_source_set_trigger(live->src, t->binary, t->file_offset,
						       emu_on_hit, live);

		if (r == 0 && t->min_ns)
			r = auxcap_live_source_set_trigger_min(live->src, t->min_ns);
		if (r < 0) {
			cli_err("--trigger-on %s: cannot watch %s: %s", t->symbol, t->binary,
				strerror(-r));
			return r;
		}
	}
	return 0;
#else
	(void)live;
	(void)t;
	(void)per_cpu;
	return -ENOSYS;
#endif
}

static void emu_request_stop(struct emu_live *live)
{
#if AUXCAP_HAVE_TRACER
	auxcap_live_source_request_stop(live->src);
#else
	(void)live;
#endif
}

static bool emu_ended(const struct emu_live *live)
{
#if AUXCAP_HAVE_TRACER
	return live->src && auxcap_live_source_ended(live->src, NULL, NULL);
#else
	(void)live;
	return false;
#endif
}

/* Whether everything the live tracer produced has been handed to the emulated PMU. */
static bool emu_drained(const struct emu_live *live)
{
#if AUXCAP_HAVE_TRACER
	return !live->src || auxcap_live_source_drained(live->src);
#else
	(void)live;
	return true;
#endif
}

/*
 * --emulate: kernel events also carry the user-mode IP (REGS_USER) and the CPU: under the
 * single-stepping tracer the command spends nearly all its time in the kernel, so most
 * samples land there, and the user IP says where in the traced code it was.  Every event,
 * real or emulated, is on the clock the backend chose (use_clockid), which TIME_CONV maps the
 * trace's TSC onto.
 */
/*
 * perf's fallback: where there is no hardware cycle counter (a virtual machine, most often),
 * cycles is sampled as cpu-clock, with a warning.  @a is the parsed event @name; on a change
 * *@ret_name is its new name (in @buf, @n bytes).
 */
static void cycles_fallback(struct perf_event_attr *a, const char *name, char *buf, size_t n,
			    const char **ret_name)
{
	struct perf_event_attr probe = *a;
	const char *mods = strchr(name, ':');
	int fd;

	if (a->type != PERF_TYPE_HARDWARE || a->config != PERF_COUNT_HW_CPU_CYCLES)
		return;
	probe.size = sizeof(probe);
	probe.disabled = 1;
	fd = auxcap_sys_linux.perf_event_open(NULL, &probe, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		(void)auxcap_sys_linux.close(NULL, fd);
		return;
	}
	if (fd != -ENOENT && fd != -EOPNOTSUPP && fd != -ENODEV)
		return; /* (permissions and such: the open says why later) */
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	snprintf(buf, n, "cpu-clock%s", mods ? mods : "");
	cli_warn("'%s': this machine has no hardware cycle counter (a virtual machine?): sampling "
		 "%s instead, as perf does",
		 name, buf);
	*ret_name = buf;
}

static void emu_event_attr(struct perf_event_attr *a)
{
	a->sample_type |= PERF_SAMPLE_CPU;
#if AUXCAP_HAVE_TRACER
	a->sample_type |= PERF_SAMPLE_REGS_USER;
	a->sample_regs_user |= 1ull << PERF_REG_X86_IP;
#endif
}

/* Waiting for the emulator at the end: a millisecond, the data ring drained first (full
 * trace) while @r, the capture's result so far, is 0.  Returns the new result. */
static int emu_wait_ms(struct auxcap_session *s, bool snapshot, int r)
{
	if (r == 0 && !snapshot)
		r = auxcap_session_drain(s);
	usleep(1000);
	return r;
}

/* What the live tracer did; returns the error (> 0) that kept it from attaching to
 * @attach_tid, if it did, else 0. */
static int emu_report(const struct emu_live *live, struct auxcap_emu *emu, pid_t attach_tid)
{
#if AUXCAP_HAVE_TRACER
	struct auxcap_tracer_stats ts;
	struct auxcap_emu_stats es;
	int err = 0, status = 0;

	if (!live->src || !auxcap_live_source_ended(live->src, &err, &status))
		return 0;
	auxcap_live_source_stats(live->src, &ts);
	if (err < 0 && attach_tid > 0 && !ts.stops) {
		cli_err("cannot attach to thread %d: %s%s", (int)attach_tid, strerror(-err),
			attach_hint(err));
		return -err;
	}
	if (err < 0 && err != -ENOEXEC) /* ENOEXEC: its exec failed, and it said why */
		cli_err("the traced %s stopped: %s", attach_tid > 0 ? "thread" : "command",
			strerror(-err));
	note("emulated trace: %" PRIu64 " instructions, %" PRIu64
			" branches, %" PRIu64 " trace bytes from the live tracer\n",
		ts.insns, ts.branches, ts.trace_bytes);
	if (ts.untraced_threads || ts.untraced_children)
		cli_warn("the command started %" PRIu64 " thread%s and %" PRIu64 " process%s that "
			 "--emulate did not trace: the live tracer steps the one thread it started "
			 "(a real PMU traces them all)",
			 ts.untraced_threads, ts.untraced_threads == 1 ? "" : "s",
			 ts.untraced_children, ts.untraced_children == 1 ? "" : "es");
	if (auxcap_emu_stats(emu, -1, &es) == 0)
		note("emulated PMU: %" PRIu64 " bytes written to the AUX area, %" PRIu64
				" dropped while the buffer was full or the event off, %" PRIu64
				" padding\n",
			es.produced, es.dropped, es.padding);
	return 0;
#else
	(void)live;
	(void)emu;
	(void)attach_tid;
	return 0;
#endif
}

static void emu_live_free(struct emu_live *live)
{
#if AUXCAP_HAVE_TRACER
	if (!live->attached)
		auxcap_live_source_free(live->src);
	live->src = NULL;
#else
	(void)live;
#endif
}

/* perf needs the tracepoints' format files to print their samples. */
static int set_tracing_data(struct auxcap_perf_writer *w, struct auxcap_event_spec **specs,
			    size_t nr)
{
	const char *tps[MAX_EVENTS];
	size_t n = 0;
	int r;

	for (size_t i = 0; i < nr; i++)
		if (specs[i]->kind == AUXCAP_EVENT_TRACEPOINT && specs[i]->event)
			tps[n++] = specs[i]->event;
	if (!n)
		return 0;
	/* spec->event is "sys:name" whatever modifiers or name= the user added. */
	r = auxcap_perf_writer_set_tracing_data(w, NULL, tps, n);
	if (r < 0)
		cli_err("cannot read the tracepoint formats from tracefs: %s (mount it: mount -t "
			"tracefs nodev /sys/kernel/tracing)",
			strerror(-r));
	return r;
}

static int open_output(const struct record_opts *o, struct auxcap_perf_writer **w)
{
	struct auxcap_perf_writer_opts wo = { .sz = sizeof(wo) };
	char why[512] = "";
	int r;

	if (!strcmp(o->output, "-")) {
		wo.pipe = true;
		r = auxcap_perf_writer_open_fd(STDOUT_FILENO, &wo, w);
		if (r < 0)
			cli_err("cannot write to standard output: %s", strerror(-r));
		return r;
	}
	/* 0600, O_EXCL, never through a symlink; an existing file is kept as FILE.old. */
	wo.file_mode = o->force ? AUXCAP_FILE_REPLACE : AUXCAP_FILE_KEEP_OLD;
	wo.errbuf = why;
	wo.errbuf_size = sizeof(why);
	r = auxcap_perf_writer_open(o->output, &wo, w);
	if (r < 0) {
		if (!why[0])
			snprintf(why, sizeof(why), "cannot create '%s': %s", o->output, strerror(-r));
		cli_err("%s%s", why, r == -EEXIST ? " (-f replaces it)" : "");
	}
	return r;
}

/*
 * --kcore: the running kernel's symbols and code (as they are now: the boot's and the run's
 * code patching applied, which a vmlinux lacks) into FILE.archive/, as perf record --kcore
 * keeps them in its directory, for decode to follow a trace of kernel code.
 */
static int save_kernel(const struct record_opts *o)
{
#if AUXCAP_HAVE_LIBELF
	const char *what = "";
	uint64_t bytes = 0;
	char *dir;
	int r;

	if (asprintf(&dir, "%s.archive", o->output) < 0) {
		cli_err("out of memory");
		return -ENOMEM;
	}
	r = cli_archive_kernel(dir, true, true, &bytes, &what);
	if (r < 0)
		cli_err("--kcore: cannot copy %s to %s/: %s%s", what, dir, strerror(-r),
			r == -ENOENT && !strcmp(what, "/proc/kcore")
				? " (this kernel was built without CONFIG_PROC_KCORE; decode kernel "
				  "code with --vmlinux instead)"
			: r == -EACCES ? " (it takes root: run as root, or decode kernel code with "
					 "--vmlinux instead)"
				       : "");
	else
		note("kernel's symbols and code (%.1f MB) saved in %s/\n", (double)bytes / 1e6,
		     dir);
	free(dir);
	return r < 0 ? r : 0;
#else
	(void)o;
	cli_err("--kcore: this build has no libelf, so decode could not use the copy");
	return -EOPNOTSUPP;
#endif
}

/*
 * The events could not be opened: nothing was captured, so the file made for it goes, and an
 * existing FILE that open_output() kept as FILE.old comes back (a typo in an event name does
 * not leave an empty capture in place of the last one).
 */
static void drop_output(const struct record_opts *o, bool had_output)
{
	char old[PATH_MAX];

	if (unlink(o->output) < 0 || !had_output || o->force)
		return;
	snprintf(old, sizeof(old), "%s.old", o->output);
	(void)rename(old, o->output);
}

static int run_record(int argc, char **argv)
{
	struct record_opts o;
	struct auxcap_evparse_opts po = { .sz = sizeof(po) };
	struct auxcap_event_spec *specs[MAX_EVENTS] = { 0 };
	struct perf_event_attr attrs[MAX_EVENTS];
	struct auxcap_session_event evs[MAX_EVENTS], aux_ev;
	char fallback_names[MAX_EVENTS][64]; /* events renamed by cycles_fallback() */
	struct auxcap_session_opts so = { .sz = sizeof(so) };
	struct auxcap_perf_writer *w = NULL;
	struct auxcap_perf_sink ps;
	struct auxcap_session *s = NULL;
	struct auxcap_session_stats st;
	struct loop_state ls = { 0 };
	struct control ctl = { .ctl_fd = -1, .ack_fd = -1 };
	struct termios tio_saved;
	bool tty = false, thread_started = false;
	pthread_t th;
	static pid_t targets[MAX_TARGETS];
	size_t nr_targets = 0, nr_evs = 0;
	int *cpus = NULL, go = -1, exec_err = -1, failed = -3, ret = CLI_ERR, r;
	pid_t child = -1, emu_child = -1, attach_tid = -1;
	const char *default_event[] = { "cpu-clock" }, *default_emu_event[] = { "intel_pt//u" };
	const char **events;
	size_t nr_events;
	struct auxcap_emu *emu = NULL;
	struct auxcap_pmu_list *emu_pmus = NULL;
	struct emu_live live = { 0 };
	struct cli_trigger trig = { 0 };
	struct auxcap_session_event trig_ev[2];
	bool stop_after_exec = false, child_stopped = false;
	int attach_failed = 0;
	const struct auxcap_event_spec *aux_spec = NULL;
	struct record_backend rb;
	bool aux_per_thread = false;
	bool had_output = false, opened = false; /* FILE existed; the events opened */
	bool made_output = false; /* open_output() made a new regular file */
	bool delay_over = false;   /* -D: the events were started */
	uint64_t start_ms = 0;	   /* -D: when the command started (or the attach) */

	memset(&rb, 0, sizeof(rb));
	memset(evs, 0, sizeof(evs));
	memset(&aux_ev, 0, sizeof(aux_ev));
	if (parse_args(argc, argv, &o) < 0) {
		free_lists(&o);
		return CLI_ERR;
	}
	cli_log_init(o.verbose);
	g_quiet = o.quiet;
	/*
	 * The stop signals are taken from the start: one that comes while the capture is set up
	 * (attaching, opening the events: a second or more under a slow tracer) ends it as soon
	 * as it runs.  Left to their defaults until then, a SIGINT to a capture started in the
	 * background of a script (which ignores SIGINT there) was lost, and it ran on.
	 */
	g_stop_signalled = 0;
	signal(SIGINT, on_stop_signal);
	signal(SIGTERM, on_stop_signal);
	signal(SIGHUP, on_stop_signal); /* the terminal went away: end the capture as Ctrl-C does */
	signal(SIGUSR2, on_snapshot_signal);
	if (o.cmd && (r = check_command(o.cmd[0])) != 0) {
		free_lists(&o);
		return r;
	}
	events = o.nr_events ? o.events : o.emulate ? default_emu_event : default_event;
	nr_events = o.nr_events ? o.nr_events : 1;
	if (o.emulate) {
		r = auxcap_emu_new(NULL, &emu);
		if (r == 0)
			r = cli_emu_pmu_list(emu, &emu_pmus);
		if (r < 0) {
			cli_err("cannot set up the emulated PMUs: %s", strerror(-r));
			goto out;
		}
		po.pmus = emu_pmus;
	}

	/* Events. */
	memset(&aux_ev, 0, sizeof(aux_ev));
	for (size_t i = 0; i < nr_events; i++) {
		struct auxcap_evparse_error pe;
		struct perf_event_attr *a = &attrs[i];
		const char *ev_name;

		r = auxcap_event_spec_parse(events[i], &po, &specs[i], &pe);
		if (r < 0) {
			cli_err("%s", pe.msg);
			goto out;
		}
		memcpy(a, &specs[i]->attr, sizeof(*a));
		ev_name = specs[i]->name;
		if (specs[i]->kind == AUXCAP_EVENT_PMU && is_aux_pmu(specs[i]->pmu)) {
			if (aux_ev.attr) {
				cli_err("more than one AUX event ('%s' and '%s'): record one trace PMU "
					"at a time",
					aux_ev.name, events[i]);
				goto out;
			}
			aux_ev.attr = a;
			aux_ev.name = specs[i]->name;
			aux_spec = specs[i];
			if (o.ev_filters[i]) {
				if (o.filter) {
					cli_err("two --filter for '%s': give one", events[i]);
					goto out;
				}
				o.filter = o.ev_filters[i];
			}
			continue;
		}
		if (o.ev_filters[i] && specs[i]->kind != AUXCAP_EVENT_TRACEPOINT) {
			cli_err("--filter '%s' follows '%s', which takes no filter: a filter goes "
				"after a tracepoint (-e sched:sched_switch --filter 'prev_pid == 1') "
				"or an AUX event",
				o.ev_filters[i], events[i]);
			goto out;
		}
		if (specs[i]->kind == AUXCAP_EVENT_HARDWARE)
			cycles_fallback(a, specs[i]->name, fallback_names[nr_evs],
					sizeof(fallback_names[nr_evs]), &ev_name);
		if ((specs[i]->kind == AUXCAP_EVENT_HARDWARE ||
		     specs[i]->kind == AUXCAP_EVENT_SOFTWARE) &&
		    !has_rate(specs[i])) {
			if (o.period) {
				a->freq = 0;
				a->sample_period = o.period;
			} else {
				a->freq = 1;
				a->sample_freq = o.freq ? o.freq : 4000; /* perf's default -F 4000 */
			}
		}
		a->sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				  PERF_SAMPLE_PERIOD;
		if (specs[i]->kind == AUXCAP_EVENT_TRACEPOINT)
			a->sample_type |= PERF_SAMPLE_RAW;
		if (o.callchain)
			a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		if (o.data_addr)
			a->sample_type |= PERF_SAMPLE_ADDR;
		if (specs[i]->kind == AUXCAP_EVENT_BREAKPOINT && auxcap_trigger_breakpoints_fire() == 0)
			cli_warn("'%s': breakpoints open but do not fire on this machine (a virtual "
				 "machine without debug registers?): it will count nothing",
				 events[i]);
		if (o.emulate)
			emu_event_attr(a);
		evs[nr_evs].attr = a;
		evs[nr_evs].name = ev_name;
		evs[nr_evs].filter = o.ev_filters[i];
		nr_evs++;
	}

	/* A backend that records per thread only (Intel BTS) traces a command (or -p's
	 * processes) per thread. */
	if (aux_spec && !o.emulate && (o.cmd || o.pid_list) && !o.all_cpus && !o.cpu_list) {
		const struct auxcap_backend_ops *be = auxcap_backend_for_pmu(aux_spec->pmu, NULL);

		aux_per_thread = be && (be->flags & AUXCAP_BACKEND_F_PER_THREAD);
	}

	if (o.emulate && !o.cmd) {
		/* A running thread: the live tracer attaches to it (-p PID: its main thread).
		 * Its capture is per thread, whatever the PMU (as perf's -p). */
		if (parse_pids(o.pid_list ? o.pid_list : o.tid_list, false, &attach_tid,
			       &nr_targets) < 0)
			goto out;
		if (check_traceable(attach_tid) < 0)
			goto out;
		if (o.pid_list)
			warn_other_threads(attach_tid);
	} else if (o.emulate) {
		/* The command, on which every event is opened; the live tracer will run it. */
		child = start_command(o.cmd, &go, &exec_err, false, !strcmp(o.output, "-"));
		if (child < 0) {
			cli_err("cannot start '%s': %s", o.cmd[0], strerror((int)-child));
			goto out;
		}
		/*
		 * A per-CPU emulated capture models one CPU, 0: the command runs there, so that
		 * real counter events opened on (command, CPU 0) see all of it.
		 */
		if (emu_per_cpu(aux_spec)) {
			cpu_set_t one;

			CPU_ZERO(&one);
			CPU_SET(0, &one);
			(void)sched_setaffinity(child, sizeof(one), &one);
		}
		emu_child = child; /* handed to the tracer below (emu_setup()) */
	}

	/* Targets. */
	if (o.emulate) {
		targets[0] = o.cmd ? emu_child : attach_tid;
		nr_targets = 1;
		so.enable_on_exec = o.cmd != NULL;
		so.aux_ring_alone = true;
		if (o.cmd && emu_per_cpu(aux_spec)) {
			/* As perf records a command: per CPU (one emulated CPU, 0). */
			static int cpu0;

			so.cpus = &cpu0;
			so.nr_cpus = 1;
		}
	} else if (o.cpu_list) {
		r = auxcap_cpulist_parse(o.cpu_list, &cpus, &so.nr_cpus);
		if (r < 0) {
			cli_err("bad -C '%s': give CPU numbers and ranges like 0-3,8", o.cpu_list);
			goto out;
		}
		so.cpus = cpus;
	} else if (o.all_cpus || ((o.cmd || o.pid_list) && !aux_per_thread)) {
		/* (-p as perf: per CPU, so that the tasks its processes start are followed) */
		r = online_cpus(&cpus, &so.nr_cpus);
		if (r < 0) {
			cli_err("cannot read the online CPUs from /sys/devices/system/cpu/online: %s",
				strerror(-r));
			goto out;
		}
		so.cpus = cpus;
	}
	if (!o.emulate && o.pid_list && parse_pids(o.pid_list, true, targets, &nr_targets) < 0)
		goto out;
	if (!o.emulate && o.pid_list && !o.all_cpus && !o.cpu_list)
		so.inherit = so.cpus && !o.no_inherit;
	if (!o.emulate && o.tid_list && parse_pids(o.tid_list, false, targets, &nr_targets) < 0)
		goto out;

	/* The function trigger: find the binary and the symbol before anything starts. */
	if (o.trigger_on) {
		char *exe = o.cmd ? cli_find_executable(o.cmd[0])
			    : nr_targets ? proc_exe(targets[0]) : NULL;

		if (!exe && (o.cmd || nr_targets) && !strchr(o.trigger_on, '@')) {
			cli_err("--trigger-on %s: cannot find the executable of %s%s; give "
				"SYMBOL@BINARY",
				o.trigger_on, o.cmd ? "command " : "target ",
				o.cmd ? o.cmd[0] : "(see /proc/PID/exe)");
			goto out;
		}

		/* A command and -p's processes are followed into their new tasks (inherit)
		 * unless -a/-C, -i or --emulate (the tracer follows one task): the trigger must
		 * be inheritable then (trigger.h). */
		r = cli_trigger_resolve(&trig, o.trigger_on, exe, o.trigger_via,
					(o.cmd || o.pid_list) && !o.all_cpus && !o.cpu_list &&
						!o.emulate && !o.no_inherit);
		free(exe);
		trig.min_ns = o.trigger_min_ns;
		if (r == 0 && o.emulate)
			r = cli_trigger_for_emulate(&trig);
		if (r < 0)
			goto out;
		stop_after_exec = o.cmd && !o.emulate && cli_trigger_needs_process(&trig);
		if (!stop_after_exec && trig.kind != CLI_TRIGGER_TRACER &&
		    cli_trigger_build(&trig, targets, nr_targets) < 0)
			goto out;
	}
	/* The AUX event's backend: attr defaults and checks, clock, snapshot wrap detection. */
	if (aux_spec) {
		struct record_backend_params bp = {
			.pmus = emu_pmus,
			.sys = emu ? auxcap_emu_sys(emu) : NULL,
			.snapshot = o.snapshot,
			.aux_pages = o.aux_pages,
			.snapshot_size = o.snapshot_size,
			.per_cpu = so.cpus != NULL,
			.cpu_wide = o.all_cpus || o.cpu_list,
			.sideband = !o.emulate,
			.filter = o.filter,
		};

		if (record_backend_setup(&rb, aux_spec, &bp) < 0)
			goto out;
		if (o.emulate) {
			struct perf_event_attr *a = &rb.attr.attr;

			/* Side-band of the traced command comes from the emulated PMU. */
			a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = 1;
		}
		record_backend_session(&rb, &aux_ev, &so);
		if (o.emulate) /* ... with the data mappings when the session would have them */
			rb.attr.attr.mmap_data = so.data_mmaps;
	}
	if (o.filter && !aux_spec) {
		cli_err("--filter before any -e is the AUX event's, and there is none: put it after "
			"the tracepoint it filters (-e sched:sched_switch --filter 'prev_pid == 1'), "
			"or add an AUX event (-e intel_pt//u)");
		goto out;
	}
	/*
	 * The live tracer's source goes to the next emulated event opened: after the backend's
	 * set-up, which opens (and closes) one to probe the clock.
	 */
	if (o.emulate) {
		if (emu_setup(&o, emu, &aux_ev, child, &go, attach_tid, &live) < 0)
			goto out;
		child = -1; /* the tracer's to reap */
		if (o.snapshot &&
		    emu_snapshot_setup(&live, o.trigger_on ? &trig : NULL, so.cpus != NULL) < 0)
			goto out;
	}

	if (o.kcore && save_kernel(&o) < 0)
		goto out;
	if (strcmp(o.output, "-")) {
		struct stat ost;
		bool exists = lstat(o.output, &ost) == 0;

		had_output = exists && S_ISREG(ost.st_mode);
		/* (a device or FIFO, /dev/null say, is written as it is: never removed) */
		made_output = !exists || had_output;
	}
	r = open_output(&o, &w);
	if (r < 0)
		goto out;
	(void)auxcap_perf_writer_set_host_features(w);
	if (live.cpuid) /* the emulated unit's CPU: its trace is that CPU's */
		(void)auxcap_perf_writer_set_string(w, AUXCAP_PERF_FEAT_CPUID, live.cpuid);
	(void)auxcap_perf_writer_set_cmdline(w, argc, (const char *const *)argv);
	if (set_tracing_data(w, specs, nr_events) < 0)
		goto out;
	auxcap_perf_sink_init(&ps, w);

	if (o.cmd && !o.emulate) {
		child = start_command(o.cmd, &go, &exec_err, stop_after_exec,
				      !strcmp(o.output, "-"));
		if (child < 0) {
			cli_err("cannot start '%s': %s", o.cmd[0], strerror((int)-child));
			goto out;
		}
		if (!o.all_cpus && !o.cpu_list) {
			targets[0] = child;
			nr_targets = 1;
			/* Per-thread events cannot be inherited (the kernel refuses to map them). */
			so.inherit = !aux_per_thread && !o.no_inherit;
		}
		/* (enable_on_exec enables the events of the exec'ing task only: system-wide ones,
		 * as perf does, count from the start, the command's start-up included) */
		so.enable_on_exec = !stop_after_exec && !o.all_cpus && !o.cpu_list;
		if (stop_after_exec) {
			/*
			 * A breakpoint needs the run-time address, known once the program is
			 * mapped: run the command to its exec, read /proc/PID/maps, open the
			 * events on the stopped process, write its side-band, let it go.
			 */
			if (run_to_exec(child, &go) < 0) {
				child = -1;
				goto out;
			}
			child_stopped = true;
			if (cli_trigger_build(&trig, &child, 1) < 0)
				goto out;
		}
	}
	if (o.trigger_on && trig.kind != CLI_TRIGGER_TRACER) {
		memset(trig_ev, 0, sizeof(trig_ev));
		trig_ev[0].attr = &trig.attr;
		trig_ev[0].name = trig.desc;
		trig_ev[1].attr = &trig.ret_attr;
		trig_ev[1].name = trig.desc;
		so.triggers = trig_ev;
		so.nr_triggers = trig.min_ns ? 2 : 1;
		so.trigger_min_ns = trig.min_ns;
	}
	if (o.trigger_on && o.verbose)
		fprintf(stderr, "auxcap: trigger on %s\n", trig.desc);
	so.aux = aux_ev.attr ? &aux_ev : NULL;
	so.events = evs;
	so.nr_events = nr_evs;
	so.sideband = !o.emulate;
	so.sys = emu ? auxcap_emu_sys(emu) : NULL;
	so.pids = nr_targets ? targets : NULL;
	so.nr_pids = nr_targets;
	so.data_pages = o.data_pages;
	so.aux_pages = o.aux_pages;
	so.snapshot = o.snapshot;
	so.toggled = o.control != NULL; /* ("disable" keeps side-band: it needs its own event) */
	so.start_delayed = o.delay_ms != 0;
	so.sink = &ps.sink;

	raise_nofile();
	r = auxcap_session_open(&so, &s, &failed);
	opened = r == 0;
	if (r < 0) {
		const char *what = failed == -1 ? aux_ev.name
				   : failed == -2 ? "side-band (dummy)"
				   : failed >= 0 ? evs[failed].name
				   : failed <= AUXCAP_SESSION_FAILED_FILTER ? "the filter"
				   : failed <= AUXCAP_SESSION_FAILED_TRIGGER ? trig.desc
						 : "the rings";
		const char *hint = auxcap_event_open_hint(r);

		if (failed <= AUXCAP_SESSION_FAILED_FILTER) {
			const struct auxcap_session_event *fe =
				&evs[AUXCAP_SESSION_FAILED_FILTER - failed];

			cli_err("the kernel refused the filter '%s' of %s: %s (ftrace's syntax: "
				"FIELD OP VALUE joined by && and ||, strings in quotes; the fields "
				"are in tracefs events/SYSTEM/NAME/format)",
				fe->filter, fe->name, strerror(-r));
		} else if (failed == -4)
			cli_err("the kernel refused the address filter '%s' of %s: %s (check the "
				"file is mapped executable and the ranges lie inside it)",
				so.aux_filter, aux_ev.name, strerror(-r));
		else
			cli_err("cannot open %s: %s%s%s", what, strerror(-r), hint ? "; " : "",
				hint ? hint : "");
		goto out;
	}
	g_session = s;
	if (aux_ev.attr && record_backend_write_info(&rb, s, w) < 0)
		goto out;
	/* The kernel's mapping, as perf writes it: perf report and auxcap then name kernel
	 * addresses (hidden by kptr_restrict, or no kallsyms: they stay unnamed). */
	(void)auxcap_session_synthesize_kernel(s, NULL);
	if (!o.emulate && (o.pid_list || o.tid_list || child_stopped || o.all_cpus || o.cpu_list)) {
		/* Events opened on running tasks missed their COMM and MMAP2: write them now (the
		 * live tracer writes them of a task it attaches to); system-wide, of every task. */
		r = auxcap_session_synthesize(s, NULL);
		if (r < 0)
			cli_warn("cannot write the side-band of the running target from /proc: %s; "
				 "decoding may not find its binaries",
				 strerror(-r));
	}
#if AUXCAP_HAVE_TRACER
	/* The tracer's side-band gets the capture's time, so decoders see each mapping before
	 * the code that runs from it. */
	if (live.src && rb.ctx.time_conv)
		auxcap_live_source_set_time_conv(live.src, rb.ctx.time_conv);
#endif
	r = auxcap_perf_writer_write_finished_init(w);
	if (r < 0) {
		cli_err("cannot write '%s': %s", o.output, strerror(-r));
		goto out;
	}
	if (o.snapshot) {
		/* Room for a snapshot ahead of each one: its writes then do not allocate (on
		 * tmpfs that halves them).  Where the filesystem cannot, nothing is reserved. */
		ps.reserve = auxcap_session_snapshot_bytes(s);
		(void)auxcap_perf_writer_reserve(w, ps.reserve);
	}
	if (!o.cmd || child_stopped || (!o.emulate && (o.all_cpus || o.cpu_list))) {
		r = so.start_delayed ? auxcap_session_enable_sideband(s)
				     : auxcap_session_enable(s, true);
		if (r < 0) {
			cli_err("cannot enable the events: %s", strerror(-r));
			goto out;
		}
	}
	if (child_stopped) {
		(void)ptrace(PTRACE_DETACH, child, NULL, NULL);
		child_stopped = false;
	}
	if (control_open(o.control, &ctl) < 0)
		goto out;

	signal(SIGPIPE, SIG_IGN); /* (not before: the command, started above, keeps the user's) */
	ls.s = s;
	if (pthread_create(&th, NULL, session_thread, &ls) != 0) {
		cli_err("cannot start the capture thread");
		goto out;
	}
	thread_started = true;
	if (g_stop_signalled) /* during the set-up, before g_session was set */
		auxcap_session_request(s, AUXCAP_REQ_STOP);
	if (emu && (r = auxcap_emu_start(emu)) < 0) {
		cli_err("cannot start the emulated PMU: %s", strerror(-r));
		goto out;
	}
	if (o.verbose)
		fprintf(stderr, "auxcap: recording (pid %d)\n", (int)getpid());
	if (go >= 0) {
		(void)!write(go, "g", 1);
		close(go);
		go = -1;
	}
	start_ms = mono_ms();
	if (isatty(STDIN_FILENO) && isatty(STDERR_FILENO) && tcgetattr(STDIN_FILENO, &tio_saved) == 0) {
		struct termios raw = tio_saved;

		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tty = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
	}

	/* Main thread: the command, the FIFO, the keyboard. */
	for (int tick = 0; !__atomic_load_n(&ls.done, __ATOMIC_ACQUIRE); tick++) {
		struct pollfd pfd[2];
		nfds_t n = 0;

		if (ctl.ctl_fd >= 0)
			pfd[n++] = (struct pollfd){ .fd = ctl.ctl_fd, .events = POLLIN };
		if (tty)
			pfd[n++] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
		if (o.delay_ms > 0 && !delay_over && mono_ms() - start_ms >= (uint64_t)o.delay_ms) {
			delay_over = true;
			auxcap_session_request(s, AUXCAP_REQ_ENABLE);
		}
		if (poll(pfd, n, poll_ms(&o, delay_over, start_ms)) > 0) {
			for (nfds_t i = 0; i < n; i++) {
				if (!(pfd[i].revents & POLLIN))
					continue;
				if (pfd[i].fd == ctl.ctl_fd) {
					control_read(&ctl, &ls);
				} else {
					char ch;

					if (read(STDIN_FILENO, &ch, 1) == 1) {
						if (ch == 's')
							auxcap_session_request_from(
								s, AUXCAP_REQ_SNAPSHOT,
								AUXCAP_TRIGGER_HOTKEY);
						else if (ch == 'q')
							auxcap_session_request(s, AUXCAP_REQ_STOP);
					}
				}
			}
		}
		if (child > 0 && waitpid(child, &(int){ 0 }, WNOHANG) == child) {
			child = -1;
			auxcap_session_request(s, AUXCAP_REQ_STOP);
		}
		if (emu_ended(&live)) {
			/* Let the producer hand out the last bytes, then stop. */
			if (!live.stop_requested++)
				auxcap_session_request(s, AUXCAP_REQ_STOP);
		}
		if (tty && !o.quiet && tick % 10 == 0)
			status_line(s, w);
	}
	if (tty) {
		tcsetattr(STDIN_FILENO, TCSANOW, &tio_saved);
		if (!o.quiet)
			fputc('\n', stderr);
	}
	pthread_join(th, NULL);
	thread_started = false;
	r = ls.result;
	if (emu) {
		/* Recording stopped first ('q', stop, a signal): the command is told to end, as
		 * perf does, before the producer is joined, which waits for the step it is in (a
		 * command asleep in a system call held the end for as long as it slept).  Not
		 * ended, it is still the tracer's child, unreaped: the pid is still its own.  Its
		 * end is traced as any other (the trace then closes with the command's last
		 * instruction, not cut where the producer was joined).  One that has not ended
		 * EMU_END_GRACE_MS later (it handles SIGTERM) gets SIGKILL, which the tracer's
		 * end would send it anyway. */
		if (attach_tid > 0 && !emu_ended(&live)) {
			/* A thread attached to is let go where it is, and runs on untraced. */
			emu_request_stop(&live);
			for (int i = 0; i < 2 * EMU_END_GRACE_MS && !emu_ended(&live); i++)
				r = emu_wait_ms(s, o.snapshot, r);
		}
		if (emu_child > 0 && !emu_ended(&live)) {
			(void)kill(emu_child, SIGTERM);
			for (int i = 0; i < 2 * EMU_END_GRACE_MS && !emu_ended(&live); i++) {
				if (i == EMU_END_GRACE_MS)
					(void)kill(emu_child, SIGKILL);
				r = emu_wait_ms(s, o.snapshot, r);
			}
		}
		/* The command ended: let the producer hand over what the tracer made last. */
		for (int i = 0; i < 10000 && emu_ended(&live) && !emu_drained(&live); i++)
			r = emu_wait_ms(s, o.snapshot, r);
		auxcap_emu_stop(emu);
	}
	/* Stopping the events makes the drivers close their AUX transactions. */
	if (r == 0 && !o.snapshot)
		r = auxcap_session_enable(s, false);
	if (r == 0 && o.snapshot_at_exit) {
		auxcap_session_request_from(s, AUXCAP_REQ_SNAPSHOT, AUXCAP_TRIGGER_EXIT);
		r = auxcap_session_snapshot(s);
	}
	if (r == 0)
		r = auxcap_session_drain(s);
	attach_failed = emu_report(&live, emu, attach_tid);
	auxcap_session_get_stats(s, &st);
	{
		uint64_t data_bytes = auxcap_perf_writer_data_size(w);
		int rc;

#if AUXCAP_HAVE_LIBELF
		/* Build-ids of the mapped binaries: decode and archive find them by it. */
		if (!o.no_buildid)
			(void)auxcap_binaries_add_build_ids(w, !o.no_buildid_cache);
#endif
		rc = auxcap_perf_writer_close(w);

		w = NULL;
		if (r == 0)
			r = rc;
		if (r < 0) {
			cli_err("capture stopped: %s; '%s' holds everything up to the last complete "
				"record",
				strerror(-r), o.output);
			print_summary(&st, &ps, data_bytes, o.output);
			goto out;
		}
		print_summary(&st, &ps, data_bytes, o.output);
		if (o.trigger_on && trig.min_ns) {
			uint64_t calls = st.trigger_calls, max_ns = st.trigger_max_ns;
			char b1[32], b2[32];

#if AUXCAP_HAVE_TRACER
			if (live.src && trig.kind == CLI_TRIGGER_TRACER)
				auxcap_live_source_calls(live.src, &calls, &max_ns);
#endif
			note("trigger %s: %" PRIu64 " calls returned (the longest %s), %" PRIu64
			     " of them took %s or more, %" PRIu64 " snapshots%s\n",
			     trig.desc, calls, cli_duration_str(b1, sizeof(b1), max_ns),
			     st.trigger_hits, cli_duration_str(b2, sizeof(b2), trig.min_ns),
			     st.trigger_snapshots,
			     st.trigger_lost ? " (some hits lost: see below)" : "");
		} else if (o.trigger_on) {
			note("trigger %s: %" PRIu64 " hits, %" PRIu64
					" snapshots%s\n",
				trig.desc, st.trigger_hits, st.trigger_snapshots,
				st.trigger_lost ? " (some hits lost: see below)" : "");
		}
		if (st.trigger_lost && trig.min_ns)
			fprintf(stderr, "auxcap: warning: %" PRIu64 " trigger samples lost: %s's "
					"calls came faster than auxcap read their entries and returns "
					"(the calls around them were not timed)\n",
				st.trigger_lost, trig.symbol);
		else if (st.trigger_lost)
			fprintf(stderr, "auxcap: warning: %" PRIu64 " trigger hits lost: they came "
					"faster than snapshots could be taken\n",
				st.trigger_lost);
	}
	ret = attach_failed ? CLI_ERR : o.strict && total_loss(&st) ? CLI_LOST : CLI_OK;

out:
	if (thread_started) {
		auxcap_session_request(s, AUXCAP_REQ_STOP);
		pthread_join(th, NULL);
	}
	g_session = NULL;
	if (go >= 0)
		close(go); /* the command exits without running */
	if (child > 0 && child_stopped) {
		kill(child, SIGKILL); /* stopped after its exec, never let go */
		(void)ptrace(PTRACE_DETACH, child, NULL, NULL);
	}
	if (child > 0 && waitpid(child, &(int){ 0 }, WNOHANG) == 0)
		kill(child, SIGTERM); /* recording stopped first ('q', stop, a signal): as perf does */
	if (child > 0)
		waitpid(child, NULL, 0);
	auxcap_session_free(s);
	emu_live_free(&live); /* (the tracer's command, and its go pipe) */
	/* The command could not be run (it said why): no capture of it, whatever was written. */
	r = exec_failed(&exec_err);
	if (r)
		ret = r;
	auxcap_emu_free(emu);
	auxcap_pmu_list_free(emu_pmus);
	if (w)
		(void)auxcap_perf_writer_close(w);
	if (w && !opened && made_output)
		drop_output(&o, had_output);
	if (ctl.ctl_fd >= 0)
		close(ctl.ctl_fd);
	if (ctl.ack_fd >= 0)
		close(ctl.ack_fd);
	record_backend_fini(&rb);
	for (size_t i = 0; i < nr_events; i++)
		auxcap_event_spec_free(specs[i]);
	cli_trigger_fini(&trig);
	free(cpus);
	free_lists(&o);
	return ret;
}

const struct cli_cmd cmd_record = {
	.name = "record",
	.summary = "capture into a perf.data file (streaming or flight recorder)",
	.run = run_record,
};
