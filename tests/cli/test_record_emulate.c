/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap record --emulate with a real counter beside the emulated Intel PT:
 *
 *   auxcap record --emulate -e intel_pt//u -e cpu-clock -o FILE -- auxcap-example-loop 3000
 *
 * The file is read back with the perf.data reader and its trace decoded with libipt (the
 * images from its MMAP2 records): the cpu-clock samples must be the traced command's (its tid),
 * carry their CPU and the user-mode IP, that IP must be code the trace shows executing, some
 * of them inside the example's own functions, and their times must lie within the trace's
 * time span: the TSC of the trace converted with the file's TIME_CONV, bounded above by the
 * end of the AUX data.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "auxcap/perf_data.h"
#include "auxcap/timeconv.h"
#include "elf_file.h"
#include "ipt.h"
#include "util.h"

#define MAX_SAMPLES 200000
#define MAX_MAPS 32

struct sample {
	uint32_t pid, tid, cpu;
	uint64_t time, ip, user_ip;
	uint16_t cpumode; /* PERF_RECORD_MISC_KERNEL or _USER */
	bool has_user_ip;
};

struct capture {
	struct sample *s;
	size_t ns;
	struct auxcap_perf_time_conv tc;
	bool have_tc;
	uint32_t traced_pid; /* from ITRACE_START */
	uint64_t aux_end_time; /* sample_id time of the last PERF_RECORD_AUX */
	struct {
		uint64_t addr, len, pgoff;
		char path[512];
	} maps[MAX_MAPS];
	size_t nmaps;
	uint8_t *aux;
	size_t aux_len;
};

/* Set of decoded instruction addresses (open addressing). */
struct ipset {
	uint64_t *slot;
	size_t cap;
};

static void ipset_add(struct ipset *set, uint64_t ip)
{
	size_t i = (size_t)((ip * 0x9e3779b97f4a7c15ull) >> 40) & (set->cap - 1);

	while (set->slot[i] && set->slot[i] != ip)
		i = (i + 1) & (set->cap - 1);
	set->slot[i] = ip;
}

static bool ipset_has(const struct ipset *set, uint64_t ip)
{
	size_t i = (size_t)((ip * 0x9e3779b97f4a7c15ull) >> 40) & (set->cap - 1);

	while (set->slot[i]) {
		if (set->slot[i] == ip)
			return true;
		i = (i + 1) & (set->cap - 1);
	}
	return false;
}

static void run_record(const char *out, const char *prog)
{
	const char *auxcap = getenv("AUXCAP");
	pid_t pid;
	int st;

	if (!auxcap)
		test_skip("AUXCAP is not set (run through meson test)");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1); /* the example prints its checksum */
		execl(auxcap, auxcap, "record", "--emulate", "-e", "intel_pt//u", "-e", "cpu-clock",
		      "-f", "-o", out, "--", prog, "3000", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("auxcap record --emulate exited with status 0x%x", st);
}

static void read_capture(const char *path, struct capture *c)
{
	struct auxcap_perf_reader *rd;
	struct auxcap_perf_event ev;
	int r;

	memset(c, 0, sizeof(*c));
	c->s = calloc(MAX_SAMPLES, sizeof(*c->s));
	assert_non_null(c->s);
	assert_int_equal(auxcap_perf_reader_open(path, NULL, &rd), 0);
	while ((r = auxcap_perf_reader_next(rd, &ev)) == 1) {
		const struct auxcap_record *rec = &ev.rec;

		switch (rec->type) {
		case PERF_RECORD_SAMPLE: {
			struct sample *s;

			assert_non_null(ev.evsel);
			assert_string_equal(ev.evsel->name, "cpu-clock");
			assert_true(c->ns < MAX_SAMPLES);
			s = &c->s[c->ns++];
			s->pid = rec->u.sample.pid;
			s->tid = rec->u.sample.tid;
			s->cpu = rec->u.sample.cpu;
			s->time = rec->u.sample.time;
			s->ip = rec->u.sample.ip;
			s->cpumode = rec->misc & PERF_RECORD_MISC_CPUMODE_MASK;
			/* REGS_USER with the IP register only: abi, then one u64. */
			if (rec->u.sample.regs_user.abi && rec->u.sample.regs_user.nr == 1) {
				memcpy(&s->user_ip, rec->u.sample.regs_user.regs, 8);
				s->has_user_ip = true;
			}
			break;
		}
		case PERF_RECORD_ITRACE_START:
			c->traced_pid = rec->u.itrace_start.pid;
			break;
		case PERF_RECORD_AUX:
			if (rec->has_sample_id && rec->sid.time > c->aux_end_time)
				c->aux_end_time = rec->sid.time;
			break;
		case PERF_RECORD_MMAP2:
			if ((rec->u.mmap.prot & PROT_EXEC) && rec->u.mmap.filename[0] == '/' &&
			    c->nmaps < MAX_MAPS) {
				c->maps[c->nmaps].addr = rec->u.mmap.addr;
				c->maps[c->nmaps].len = rec->u.mmap.len;
				c->maps[c->nmaps].pgoff = rec->u.mmap.pgoff;
				snprintf(c->maps[c->nmaps].path, sizeof(c->maps[0].path), "%s",
					 rec->u.mmap.filename);
				c->nmaps++;
			}
			break;
		case AUXCAP_PERF_RECORD_TIME_CONV:
			c->tc = ev.u.time_conv;
			c->have_tc = true;
			break;
		case AUXCAP_PERF_RECORD_AUXTRACE:
			c->aux = realloc(c->aux, c->aux_len + ev.u.auxtrace.size);
			assert_non_null(c->aux);
			memcpy(c->aux + c->aux_len, ev.u.auxtrace.data, ev.u.auxtrace.size);
			c->aux_len += ev.u.auxtrace.size;
			break;
		default:
			break;
		}
	}
	assert_int_equal(r, 0);
	auxcap_perf_reader_close(rd);
}

/* Decode the trace: every instruction address, and the first and last TSC. */
static void decode(const struct capture *c, struct ipset *ips, uint64_t *tsc_first,
		   uint64_t *tsc_last, size_t *ninsn)
{
	struct auxcap_ipt_decoder_opts o = { .sz = sizeof(o) };
	struct auxcap_ipt_image *img;
	struct auxcap_ipt_decoder *dec;
	struct auxcap_ipt_item it;
	int r;

	assert_int_equal(auxcap_ipt_image_new(&img), 0);
	for (size_t i = 0; i < c->nmaps; i++)
		assert_int_equal(auxcap_ipt_image_add_raw(img, c->maps[i].path, c->maps[i].pgoff,
							  c->maps[i].len, c->maps[i].addr),
				 0);
	assert_int_equal(auxcap_ipt_decoder_new(c->aux, c->aux_len, img, NULL, &o, &dec), 0);
	*tsc_first = *tsc_last = 0;
	*ninsn = 0;
	while ((r = auxcap_ipt_decoder_next(dec, &it)) == 1) {
		if (it.flags & AUXCAP_IPT_F_HAS_TSC) {
			if (!*tsc_first)
				*tsc_first = it.tsc;
			*tsc_last = it.tsc;
		}
		if (it.kind == AUXCAP_IPT_ITEM_INSN) {
			ipset_add(ips, it.ip);
			(*ninsn)++;
		}
	}
	assert_int_equal(r, 0);
	auxcap_ipt_decoder_free(dec);
	auxcap_ipt_image_free(img);
}

/* The function of the example program that @ip (a run-time address) is in, or NULL. */
static const char *example_function(const struct capture *c, const struct auxcap_elf *elf,
				    const char *prog, uint64_t ip)
{
	const struct auxcap_elf_segment *segs;
	size_t nseg = auxcap_elf_segments(elf, &segs);

	for (size_t i = 0; i < c->nmaps; i++) {
		uint64_t fo;

		if (strcmp(c->maps[i].path, prog) || ip < c->maps[i].addr ||
		    ip >= c->maps[i].addr + c->maps[i].len)
			continue;
		fo = ip - c->maps[i].addr + c->maps[i].pgoff;
		for (size_t k = 0; k < nseg; k++) {
			const char *name;
			uint64_t off;

			if (fo < segs[k].offset || fo >= segs[k].offset + segs[k].filesz)
				continue;
			if (auxcap_elf_symbolize(elf, segs[k].vaddr + (fo - segs[k].offset), &name,
						 &off) == 1)
				return name;
		}
	}
	return NULL;
}

static void test_record_emulate_counter_samples(void **state)
{
	char out[] = "/tmp/auxcap-emu-counters-XXXXXX";
	const char *prog = getenv("AUXCAP_EXAMPLE_LOOP");
	char real_prog[4096];
	struct ipset ips = { .cap = 1u << 20 };
	struct auxcap_elf *elf;
	struct capture c;
	uint64_t tsc_first, tsc_last, t_first, t_last;
	size_t ninsn, in_trace = 0, in_example = 0, between = 0;
	size_t before = 0;
	uint64_t early = 0;
	int fd;

	(void)state;
	test_require_perf(0);
	if (!prog)
		test_skip("AUXCAP_EXAMPLE_LOOP is not set (run through meson test)");
	assert_non_null(realpath(prog, real_prog));
	fd = mkstemp(out);
	assert_true(fd >= 0);
	close(fd);
	run_record(out, real_prog);
	read_capture(out, &c);
	unlink(out);

	assert_true(c.have_tc);
	assert_true(c.traced_pid > 0);
	assert_true(c.aux_len > 0);
	assert_true(c.ns > 0);
	ips.slot = calloc(ips.cap, sizeof(*ips.slot));
	assert_non_null(ips.slot);
	decode(&c, &ips, &tsc_first, &tsc_last, &ninsn);
	assert_true(ninsn > 10000);
	assert_true(tsc_first && tsc_last > tsc_first);
	t_first = auxcap_time_conv_to_ns(&c.tc, tsc_first);
	t_last = auxcap_time_conv_to_ns(&c.tc, tsc_last);
	/* The trace's clock and the records' clock are one: its TSCs fall inside the capture. */
	assert_true(c.aux_end_time > t_last);
	assert_int_equal(auxcap_elf_open(real_prog, &elf), 0);

	for (size_t i = 0; i < c.ns; i++) {
		const struct sample *s = &c.s[i];

		assert_int_equal(s->pid, c.traced_pid);
		assert_int_equal(s->tid, c.traced_pid);
		assert_true(s->cpu < 4096);
		assert_true(s->ip != 0);
		/*
		 * No instruction of the command runs before the tracer's first timestamp (read
		 * with the child stopped at its first instruction), so a sample before it is the
		 * exec's own kernel work after the exec enabled the event (elf_load, say): it has
		 * a kernel IP.  How far before depends on the load on the machine, not on us.
		 */
		if (s->time < t_first) {
			if (s->cpumode != PERF_RECORD_MISC_KERNEL)
				fail_msg("sample %zu at %llu ns, %llu ns before the trace's first "
					 "timestamp, is not in the kernel (IP %#llx)",
					 i, (unsigned long long)s->time,
					 (unsigned long long)(t_first - s->time),
					 (unsigned long long)s->ip);
			before++;
			if (t_first - s->time > early)
				early = t_first - s->time;
		}
		if (s->time > c.aux_end_time)
			fail_msg("sample %zu at %llu ns is after the AUX data's end at %llu ns", i,
				 (unsigned long long)s->time, (unsigned long long)c.aux_end_time);
		between += s->time >= t_first && s->time <= t_last;
		if (!s->has_user_ip)
			continue;
		/* The user IP is code the trace shows executing. */
		in_trace += ipset_has(&ips, s->user_ip);
		in_example += example_function(&c, elf, real_prog, s->user_ip) != NULL;
	}
	print_message("%zu samples, %zu with a user IP in the trace, %zu in the example's "
		      "functions, %zu between the first and last trace timestamps, %zu in the exec "
		      "before the first (the earliest %llu ns before)\n",
		      c.ns, in_trace, in_example, between, before, (unsigned long long)early);
	/* Samples of a command under a single-stepping tracer: nearly all of them. */
	assert_true(in_trace >= c.ns * 9 / 10);
	assert_true(in_example > 0);
	assert_true(between > 0);
	/* The exec's work is a moment of the command's CPU time: a handful of its samples. */
	assert_true(before <= c.ns / 100);
	auxcap_elf_free(elf);
	free(ips.slot);
	free(c.s);
	free(c.aux);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_emulate_counter_samples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
