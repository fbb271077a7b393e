/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the event string parser against the fixture trees (fixtures/sysfs for the
 * PMUs, fixtures/tracefs for tracepoint ids): term bit positions as the drivers define them,
 * generic terms, modifiers, symbols, tracepoints, breakpoints, and every kind of bad input.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "evparse.h"
#include "util.h"

static char sysfs_root[PATH_MAX];
static char tracefs_root[PATH_MAX];

static struct auxcap_evparse_opts fixture_opts(void)
{
	struct auxcap_evparse_opts o;

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.sysfs_root = sysfs_root;
	o.tracefs_root = tracefs_root;
	return o;
}

static struct auxcap_event_spec *parse_ok(const char *str)
{
	struct auxcap_evparse_opts o = fixture_opts();
	struct auxcap_event_spec *s = NULL;
	struct auxcap_evparse_error e;
	int r = auxcap_event_spec_parse(str, &o, &s, &e);

	if (r < 0)
		fail_msg("'%s' failed with %d: %s", str, r, e.msg);
	assert_non_null(s);
	return s;
}

/* Parse @str expecting @err; returns the message (static storage). */
static const char *parse_err(const char *str, int err)
{
	static struct auxcap_evparse_error e;
	struct auxcap_evparse_opts o = fixture_opts();
	struct auxcap_event_spec *s = (struct auxcap_event_spec *)0x1;
	int r = auxcap_event_spec_parse(str, &o, &s, &e);

	if (r != err)
		fail_msg("'%s': expected %d, got %d (%s)", str ? str : "(null)", err, r, e.msg);
	assert_ptr_equal(s, (struct auxcap_event_spec *)0x1); /* untouched */
	assert_int_equal(e.err, err);
	assert_true(strlen(e.msg) > 0);
	assert_null(strchr(e.msg, '\n'));
	return e.msg;
}

static void assert_contains(const char *hay, const char *needle)
{
	assert_non_null(hay);
	assert_non_null(needle);
	if (!strstr(hay, needle))
		fail_msg("'%s' does not contain '%s'", hay ? hay : "", needle ? needle : "");
}

/* The field of term @name of fixture PMU @pmu_name, from the fixture itself. */
static uint64_t field(const char *pmu_name, const char *name, uint64_t value)
{
	struct auxcap_pmu *pmu = NULL;
	struct auxcap_attr a;

	assert_int_equal(auxcap_pmu_new(sysfs_root, pmu_name, &pmu), 0);
	memset(&a, 0, sizeof(a));
	assert_int_equal(auxcap_pmu_set_term(pmu, name, value, &a), 0);
	auxcap_pmu_free(pmu);
	return a.attr.config;
}

/* ---- PMU events -------------------------------------------------------------------------- */

static void test_intel_pt_terms_land_on_driver_bits(void **state)
{
	struct auxcap_event_spec *s = parse_ok("intel_pt/cyc,mtc_period=3,noretcomp=0/u");
	const struct auxcap_evterm *t;

	(void)state;
	assert_int_equal(s->kind, AUXCAP_EVENT_PMU);
	assert_string_equal(s->pmu, "intel_pt");
	assert_int_equal(s->attr.attr.type, 6);
	/* cyc = config:1, mtc_period = config:14-17, noretcomp = config:11 (pt.c) */
	assert_int_equal(s->attr.attr.config, UINT64_C(1) << 1 | UINT64_C(3) << 14);
	assert_int_equal(s->attr.attr.config,
			 field("intel_pt", "cyc", 1) | field("intel_pt", "mtc_period", 3));
	assert_int_equal(s->attr.attr.exclude_user, 0);
	assert_int_equal(s->attr.attr.exclude_kernel, 1);
	assert_int_equal(s->attr.attr.exclude_hv, 1);
	assert_string_equal(s->mods, "u");
	assert_int_equal(s->nr_terms, 3);
	t = auxcap_event_spec_term(s, "cyc");
	assert_non_null(t);
	assert_int_equal(t->kind, AUXCAP_EVTERM_FORMAT);
	assert_false(t->has_value);
	assert_int_equal(t->value, 1);
	assert_int_equal(t->mask, UINT64_C(1) << 1);
	t = auxcap_event_spec_term(s, "noretcomp");
	assert_non_null(t);
	assert_true(t->has_value);
	assert_int_equal(t->value, 0);
	assert_int_equal(t->mask, UINT64_C(1) << 11);
	assert_string_equal(s->name, "intel_pt/cyc,mtc_period=3,noretcomp=0/u");
	auxcap_event_spec_free(s);
}

static void test_intel_pt_more_terms_and_last_wins(void **state)
{
	struct auxcap_event_spec *s;

	(void)state;
	s = parse_ok("intel_pt/pt,branch,tsc,psb_period=3,cyc_thresh=2,notnt,event,mtc/");
	/* pt config:0, branch :13, tsc :10, psb_period :24-27, cyc_thresh :19-22, notnt :55,
	 * event :31, mtc :9 */
	assert_int_equal(s->attr.attr.config, UINT64_C(1) << 0 | UINT64_C(1) << 13 |
						      UINT64_C(1) << 10 | UINT64_C(3) << 24 |
						      UINT64_C(2) << 19 | UINT64_C(1) << 55 |
						      UINT64_C(1) << 31 | UINT64_C(1) << 9);
	auxcap_event_spec_free(s);

	s = parse_ok("intel_pt/noretcomp,mtc_period=15,noretcomp=0,mtc_period=2/");
	assert_int_equal(s->attr.attr.config, UINT64_C(2) << 14);
	assert_int_equal(auxcap_event_spec_term(s, "noretcomp")->value, 0);
	assert_int_equal(auxcap_event_spec_term(s, "mtc_period")->value, 2);
	assert_int_equal(s->nr_terms, 4);
	auxcap_event_spec_free(s);
}

static void test_intel_pt_empty_terms_with_k(void **state)
{
	struct auxcap_event_spec *s = parse_ok("intel_pt//k");

	(void)state;
	assert_int_equal(s->attr.attr.type, 6);
	assert_int_equal(s->attr.attr.config, 0);
	assert_int_equal(s->nr_terms, 0);
	assert_int_equal(s->attr.attr.exclude_user, 1);
	assert_int_equal(s->attr.attr.exclude_kernel, 0);
	assert_int_equal(s->attr.attr.exclude_hv, 1);
	auxcap_event_spec_free(s);

	s = parse_ok("intel_bts//");
	assert_int_equal(s->attr.attr.type, 7);
	assert_int_equal(s->attr.attr.exclude_user, 0);
	assert_int_equal(s->attr.attr.exclude_kernel, 0);
	auxcap_event_spec_free(s);
}

static void test_arm_spe_all_four_config_words(void **state)
{
	struct auxcap_event_spec *s = parse_ok("arm_spe_0/ts_enable=1,load_filter=1/");

	(void)state;
	assert_int_equal(s->attr.attr.type, 8);
	/* ts_enable config:0, load_filter config:33 (arm_spe_pmu.c) */
	assert_int_equal(s->attr.attr.config, UINT64_C(1) | UINT64_C(1) << 33);
	assert_int_equal(auxcap_attr_size(&s->attr), sizeof(struct perf_event_attr));
	auxcap_event_spec_free(s);

	s = parse_ok("arm_spe_0/event_filter=0x12,min_latency=20,inv_event_filter=0xff,jitter/pp");
	assert_int_equal(s->attr.attr.config, UINT64_C(1) << 16);
	assert_int_equal(s->attr.attr.config1, 0x12);
	assert_int_equal(s->attr.attr.config2, 20);
	assert_int_equal(auxcap_attr_word_get(&s->attr, AUXCAP_ATTR_CONFIG3), 0xff);
	assert_int_equal(auxcap_attr_size(&s->attr), AUXCAP_ATTR_SIZE_VER8);
	assert_int_equal(s->attr.attr.precise_ip, 2);
	auxcap_event_spec_free(s);
}

static void test_cs_etm_terms(void **state)
{
	struct auxcap_event_spec *s = parse_ok("cs_etm/timestamp,cycacc,sinkid=5,cc_threshold=7/u");

	(void)state;
	assert_int_equal(s->attr.attr.type, 12);
	assert_int_equal(s->attr.attr.config, UINT64_C(1) << 28 | UINT64_C(1) << 12);
	assert_int_equal(s->attr.attr.config2, 5);
	assert_int_equal(auxcap_attr_word_get(&s->attr, AUXCAP_ATTR_CONFIG3), 7);
	auxcap_event_spec_free(s);
}

static void test_generic_terms(void **state)
{
	struct auxcap_event_spec *s;
	const struct auxcap_evterm *t;

	(void)state;
	s = parse_ok("intel_pt/config=0x2000,config1=7,config2=9,config3=11,period=100,name=foo/");
	assert_int_equal(s->attr.attr.config, 0x2000);
	assert_int_equal(s->attr.attr.config1, 7);
	assert_int_equal(s->attr.attr.config2, 9);
	assert_int_equal(auxcap_attr_word_get(&s->attr, AUXCAP_ATTR_CONFIG3), 11);
	assert_int_equal(s->attr.attr.sample_period, 100);
	assert_int_equal(s->attr.attr.freq, 0);
	assert_string_equal(s->name, "foo");
	t = auxcap_event_spec_term(s, "name");
	assert_int_equal(t->kind, AUXCAP_EVTERM_NAME);
	assert_string_equal(t->str, "foo");
	assert_int_equal(auxcap_event_spec_term(s, "config1")->kind, AUXCAP_EVTERM_CONFIG);
	auxcap_event_spec_free(s);

	/* config= sets the word, a later format term edits it */
	s = parse_ok("intel_pt/config=0xffff,noretcomp=0,freq=1000/");
	assert_int_equal(s->attr.attr.config, 0xffff & ~(UINT64_C(1) << 11));
	assert_int_equal(s->attr.attr.freq, 1);
	assert_int_equal(s->attr.attr.sample_freq, 1000);
	auxcap_event_spec_free(s);

	s = parse_ok("intel_pt/name='quoted'/");
	assert_string_equal(s->name, "quoted");
	auxcap_event_spec_free(s);
}

/* user_set: the bits each term wrote, from the fixture's format files, whatever the value. */
static void test_user_set_reports_written_bits(void **state)
{
	struct auxcap_event_spec *s;

	(void)state;
	s = parse_ok("intel_pt/tsc=0,mtc_period=2,cyc/u");
	assert_int_equal(auxcap_event_spec_user_set(s, AUXCAP_ATTR_CONFIG),
			 field("intel_pt", "tsc", 1) | field("intel_pt", "mtc_period", 15) |
				 field("intel_pt", "cyc", 1));
	/* tsc=0 still counts as set: its bit is clear in the attr */
	assert_int_equal(s->attr.attr.config & field("intel_pt", "tsc", 1), 0);
	assert_int_equal(auxcap_event_spec_user_set(s, AUXCAP_ATTR_CONFIG1), 0);
	assert_int_equal(auxcap_event_spec_user_set(s, AUXCAP_ATTR_WORD_MAX), 0);
	auxcap_event_spec_free(s);

	s = parse_ok("intel_pt//");
	assert_int_equal(auxcap_event_spec_user_set(s, AUXCAP_ATTR_CONFIG), 0);
	auxcap_event_spec_free(s);

	/* config= sets the whole word; terms of other words stay in theirs */
	s = parse_ok("arm_spe_0/config=0x1,event_filter=0x12,min_latency=3/");
	assert_int_equal(auxcap_event_spec_user_set(s, AUXCAP_ATTR_CONFIG), ~UINT64_C(0));
	assert_int_equal(auxcap_event_spec_user_set(s, AUXCAP_ATTR_CONFIG1), ~UINT64_C(0));
	assert_int_equal(auxcap_event_spec_user_set(s, AUXCAP_ATTR_CONFIG2), 0xfff);
	assert_int_equal(auxcap_event_spec_user_set(s, AUXCAP_ATTR_CONFIG3), 0);
	auxcap_event_spec_free(s);
	assert_int_equal(auxcap_event_spec_user_set(NULL, AUXCAP_ATTR_CONFIG), 0);
}

/* ---- symbols, tracepoints, breakpoints --------------------------------------------------- */

static void test_symbols(void **state)
{
	static const struct {
		const char *str;
		uint32_t type;
		uint64_t config;
	} cases[] = {
		{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
		{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct auxcap_event_spec *s = parse_ok(cases[i].str);

		assert_int_equal(s->attr.attr.type, cases[i].type);
		assert_int_equal(s->attr.attr.config, cases[i].config);
		assert_int_equal(s->kind, cases[i].type == PERF_TYPE_HARDWARE
						  ? AUXCAP_EVENT_HARDWARE
						  : AUXCAP_EVENT_SOFTWARE);
		assert_int_equal(s->attr.attr.exclude_user, 0);
		assert_int_equal(s->nr_terms, 0);
		auxcap_event_spec_free(s);
	}
	/* the table the CLI lists is the table the parser uses */
	for (size_t i = 0; auxcap_event_symbol_get(i); i++) {
		struct auxcap_event_spec *s = parse_ok(auxcap_event_symbol_get(i)->name);

		assert_int_equal(s->attr.attr.config, auxcap_event_symbol_get(i)->config);
		auxcap_event_spec_free(s);
	}
}

static void test_modifiers(void **state)
{
	struct auxcap_event_spec *s;

	(void)state;
	s = parse_ok("cycles:u");
	assert_int_equal(s->attr.attr.exclude_kernel, 1);
	assert_int_equal(s->attr.attr.exclude_user, 0);
	auxcap_event_spec_free(s);
	s = parse_ok("cpu-clock:k");
	assert_int_equal(s->attr.attr.exclude_user, 1);
	assert_int_equal(s->attr.attr.exclude_kernel, 0);
	auxcap_event_spec_free(s);
	s = parse_ok("cycles:ukh");
	assert_int_equal(s->attr.attr.exclude_user, 0);
	assert_int_equal(s->attr.attr.exclude_kernel, 0);
	assert_int_equal(s->attr.attr.exclude_hv, 0);
	auxcap_event_spec_free(s);
	s = parse_ok("cycles:ppp");
	assert_int_equal(s->attr.attr.precise_ip, 3);
	auxcap_event_spec_free(s);
	s = parse_ok("cpu-clock/period=1000/u");
	assert_int_equal(s->attr.attr.sample_period, 1000);
	assert_int_equal(s->attr.attr.exclude_kernel, 1);
	auxcap_event_spec_free(s);
	s = parse_ok("intel_pt//:uk");
	assert_int_equal(s->attr.attr.exclude_hv, 1);
	assert_int_equal(s->attr.attr.exclude_kernel, 0);
	auxcap_event_spec_free(s);
}

static uint64_t fixture_tracepoint_id(const char *sys, const char *name)
{
	char path[PATH_MAX * 2], line[64], *end;
	unsigned long long id;
	FILE *f;

	snprintf(path, sizeof(path), "%s/events/%s/%s/id", tracefs_root, sys, name);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	id = strtoull(line, &end, 10);
	assert_true(end != line && (*end == '\n' || !*end));
	return id;
}

static void test_tracepoint_from_tracefs(void **state)
{
	struct auxcap_event_spec *s = parse_ok("raw_syscalls:sys_enter");

	(void)state;
	assert_int_equal(s->kind, AUXCAP_EVENT_TRACEPOINT);
	assert_int_equal(s->attr.attr.type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(s->attr.attr.config, fixture_tracepoint_id("raw_syscalls", "sys_enter"));
	assert_int_equal(s->attr.attr.sample_period, 1);
	assert_string_equal(s->event, "raw_syscalls:sys_enter");
	auxcap_event_spec_free(s);

	s = parse_ok("raw_syscalls:sys_exit:u");
	assert_int_equal(s->attr.attr.config, fixture_tracepoint_id("raw_syscalls", "sys_exit"));
	assert_int_equal(s->attr.attr.exclude_kernel, 1);
	assert_string_equal(s->event, "raw_syscalls:sys_exit");
	auxcap_event_spec_free(s);
}

static void test_breakpoints(void **state)
{
	struct auxcap_event_spec *s;

	(void)state;
	s = parse_ok("mem:0x1000");
	assert_int_equal(s->attr.attr.type, PERF_TYPE_BREAKPOINT);
	assert_int_equal(s->attr.attr.bp_addr, 0x1000);
	assert_int_equal(s->attr.attr.bp_type, HW_BREAKPOINT_R | HW_BREAKPOINT_W);
	assert_int_equal(s->attr.attr.bp_len, HW_BREAKPOINT_LEN_4);
	assert_int_equal(s->attr.attr.sample_period, 1);
	auxcap_event_spec_free(s);

	s = parse_ok("mem:0x1000/8:w");
	assert_int_equal(s->attr.attr.bp_type, HW_BREAKPOINT_W);
	assert_int_equal(s->attr.attr.bp_len, 8);
	auxcap_event_spec_free(s);

	s = parse_ok("mem:4096:x");
	assert_int_equal(s->attr.attr.bp_addr, 4096);
	assert_int_equal(s->attr.attr.bp_type, HW_BREAKPOINT_X);
	assert_int_equal(s->attr.attr.bp_len, sizeof(long));
	auxcap_event_spec_free(s);

	s = parse_ok("mem:0x2000/2:rw:u");
	assert_int_equal(s->attr.attr.bp_type, HW_BREAKPOINT_R | HW_BREAKPOINT_W);
	assert_int_equal(s->attr.attr.bp_len, 2);
	assert_int_equal(s->attr.attr.exclude_kernel, 1);
	assert_string_equal(s->event, "mem:0x2000/2:rw");
	auxcap_event_spec_free(s);

	parse_err("mem:", -EINVAL);
	parse_err("mem:zz", -EINVAL);
	parse_err("mem:0x1000/3", -EINVAL);
	parse_err("mem:0x1000/", -EINVAL);
	parse_err("mem:0x1000:q", -EINVAL);
	parse_err("mem:0x1000:rr", -EINVAL);
	parse_err("mem:0x1000:", -EINVAL);
	parse_err("mem:0x1000:w:z", -EINVAL);
}

static void test_raw_events(void **state)
{
	struct auxcap_event_spec *s;

	(void)state;
	s = parse_ok("r1a8");
	assert_int_equal(s->kind, AUXCAP_EVENT_RAW);
	assert_int_equal(s->attr.attr.type, PERF_TYPE_RAW);
	assert_int_equal(s->attr.attr.config, 0x1a8);
	auxcap_event_spec_free(s);
	s = parse_ok("rC0:u");
	assert_int_equal(s->attr.attr.config, 0xc0);
	assert_int_equal(s->attr.attr.exclude_kernel, 1);
	auxcap_event_spec_free(s);
	parse_err("r12345678901234567", -ERANGE);
	parse_err("r1a8:x", -EINVAL);
}

static void test_event_list_split(void **state)
{
	static const struct {
		const char *list;
		size_t nr;
		const char *events[4];
	} cases[] = {
		{ "cycles", 1, { "cycles" } },
		{ "intel_pt/cyc,mtc_period=3/u,cycles:u",
		  2,
		  { "intel_pt/cyc,mtc_period=3/u", "cycles:u" } },
		{ "mem:0x1000/8:w,raw_syscalls:sys_enter,cpu-clock/period=10/",
		  3,
		  { "mem:0x1000/8:w", "raw_syscalls:sys_enter", "cpu-clock/period=10/" } },
		{ "a,intel_pt//,b", 3, { "a", "intel_pt//", "b" } },
		{ "cycles,mem:0x1000/8:w,cpu-clock",
		  3,
		  { "cycles", "mem:0x1000/8:w", "cpu-clock" } },
	};
	static const char *const bad[] = { "", ",", "a,,b", "a,", ",a" };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char **evs = NULL;
		size_t nr = 0;

		assert_int_equal(auxcap_event_list_split(cases[i].list, &evs, &nr), 0);
		assert_int_equal(nr, cases[i].nr);
		for (size_t j = 0; j < nr; j++)
			assert_string_equal(evs[j], cases[i].events[j]);
		auxcap_event_list_free(evs, nr);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char **evs = (char **)0x1;
		size_t nr = 77;

		if (auxcap_event_list_split(bad[i], &evs, &nr) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
		assert_ptr_equal(evs, (char **)0x1);
		assert_int_equal(nr, 77);
	}
	auxcap_event_list_free(NULL, 0);
}

/* ---- aliases and caller-supplied PMUs ---------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* A temporary sysfs tree with one PMU "fake" that has events/ aliases. */
static int alias_tree_setup(void **state)
{
	static const char *const files[][2] = {
		{ "fake/type", "33\n" },
		{ "fake/format/event", "config:0-7\n" },
		{ "fake/format/umask", "config:8-15\n" },
		{ "fake/events/foo", "event=0x3c,umask=0x01\n" },
		{ "fake/events/bad", "nosuch=1\n" },
	};
	static const char *const dirs[] = { "fake", "fake/format", "fake/events" };
	char *root = strdup("/tmp/auxcap-test-evparse-XXXXXX");
	char path[PATH_MAX];

	if (!root || !mkdtemp(root)) {
		free(root);
		return -1;
	}
	*state = root;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		if (mkdir(path, 0755) < 0)
			return -1;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", root, files[i][0]);
		f = fopen(path, "w");
		if (!f)
			return -1;
		fputs(files[i][1], f);
		fclose(f);
	}
	return 0;
}

static int alias_tree_teardown(void **state)
{
	char *root = *state;

	if (root)
		(void)nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(root);
	return 0;
}

static void test_event_aliases_expand(void **state)
{
	struct auxcap_evparse_opts o;
	struct auxcap_event_spec *s = NULL;
	struct auxcap_evparse_error e;

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.sysfs_root = *state;
	assert_int_equal(auxcap_event_spec_parse("fake/foo/u", &o, &s, &e), 0);
	assert_int_equal(s->attr.attr.type, 33);
	assert_int_equal(s->attr.attr.config, 0x13c);
	assert_int_equal(s->nr_terms, 2);
	assert_string_equal(s->terms[0].alias, "foo");
	assert_string_equal(s->terms[0].name, "event");
	auxcap_event_spec_free(s);

	s = (struct auxcap_event_spec *)0x1;
	assert_int_equal(auxcap_event_spec_parse("fake/bad/", &o, &s, &e), -EINVAL);
	assert_contains(e.msg, "event 'bad' of fake uses unknown term 'nosuch'");
	assert_int_equal(auxcap_event_spec_parse("fake/foo=1/", &o, &s, &e), -EINVAL);
	assert_int_equal(auxcap_event_spec_parse("fake/nope/", &o, &s, &e), -EINVAL);
	assert_contains(e.msg, "valid: event, umask; events: bad, foo; generic: ");
	assert_ptr_equal(s, (struct auxcap_event_spec *)0x1);
}

static void test_caller_supplied_pmus_come_first(void **state)
{
	struct auxcap_pmu_list *list = NULL;
	struct auxcap_evparse_opts o;
	struct auxcap_event_spec *s = NULL;
	struct auxcap_evparse_error e;

	(void)state;
	assert_int_equal(auxcap_pmu_list_new(sysfs_root, &list), 0);
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.sysfs_root = "/nonexistent/auxcap";
	o.pmus = list;
	assert_int_equal(auxcap_event_spec_parse("intel_pt/tsc/", &o, &s, &e), 0);
	assert_int_equal(s->attr.attr.config, UINT64_C(1) << 10);
	auxcap_event_spec_free(s);
	auxcap_pmu_list_free(list);
}

/* ---- bad input --------------------------------------------------------------------------- */

static void test_control_characters_refused(void **state)
{
	static const char *const bad[] = { "mm\n", "cpu-clock\t", "intel_pt/cyc\r/u", "\x1b[31m" };

	(void)state;
	/* Messages quote the input; a control character would break the one-line rule. */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_contains(parse_err(bad[i], -EINVAL), "control character");
	assert_contains(parse_err("intel_pt/cyc\r/u", -EINVAL), "0x0d at offset 12");
}

static void test_unknown_term_lists_the_valid_ones(void **state)
{
	struct auxcap_pmu *pmu = NULL;
	const char *msg = parse_err("intel_pt/cycx/", -EINVAL);
	static struct auxcap_evparse_error e;
	struct auxcap_evparse_opts o = fixture_opts();
	struct auxcap_event_spec *s = NULL;

	(void)state;
	assert_contains(msg, "unknown term 'cycx' for intel_pt; valid: ");
	assert_int_equal(auxcap_pmu_new(sysfs_root, "intel_pt", &pmu), 0);
	for (size_t i = 0; i < pmu->nr_formats; i++)
		assert_contains(msg, pmu->formats[i].name);
	auxcap_pmu_free(pmu);
	assert_contains(msg, "period");

	/* the position points at the bad term */
	assert_int_equal(auxcap_event_spec_parse("intel_pt/cyc,cycx/", &o, &s, &e), -EINVAL);
	assert_int_equal(e.pos, strlen("intel_pt/cyc,"));

	msg = parse_err("arm_spe_0/ts_enable=1,load_filtr=1/", -EINVAL);
	assert_contains(msg, "unknown term 'load_filtr' for arm_spe_0; valid: ");
	assert_contains(msg, "load_filter");
	msg = parse_err("cpu-clock/config=1/", -EINVAL);
	assert_contains(msg, "valid: period, freq, name");
}

static void test_unknown_pmu_suggests_list_and_emulate(void **state)
{
	const char *msg;
	struct auxcap_evparse_opts o;
	struct auxcap_event_spec *s = NULL;
	struct auxcap_evparse_error e;

	(void)state;
	msg = parse_err("foo//", -ENOENT);
	assert_contains(msg, "auxcap list");
	assert_null(strstr(msg, "--emulate"));
	msg = parse_err("arm_spe_7//", -ENOENT);
	assert_contains(msg, "--emulate");
	msg = parse_err("nosuchevent", -ENOENT);
	assert_contains(msg, "auxcap list");

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.sysfs_root = "/nonexistent/auxcap";
	assert_int_equal(auxcap_event_spec_parse("intel_pt//", &o, &s, &e), -ENOENT);
	assert_contains(e.msg, "auxcap list");
	assert_contains(e.msg, "--emulate");
	assert_int_equal(auxcap_event_spec_parse("intel_bts//u", &o, &s, &e), -ENOENT);
	assert_contains(e.msg, "--emulate");
	assert_null(s);
}

static void test_bad_strings(void **state)
{
	(void)state;
	assert_contains(parse_err("", -EINVAL), "empty event string");
	assert_contains(parse_err("intel_pt/cyc", -EINVAL), "unterminated");
	assert_contains(parse_err("intel_pt//x", -EINVAL), "bad modifier 'x'");
	assert_contains(parse_err("cycles:q", -EINVAL), "bad modifier 'q'");
	parse_err("cycles:pppp", -EINVAL);
	parse_err("intel_pt//uuuuuuuuuuuuuuuuuuuuuuu", -EINVAL);
	assert_contains(parse_err("intel_pt", -EINVAL), "intel_pt//");
	parse_err("intel_pt/cyc,,mtc/", -EINVAL);
	parse_err("intel_pt/,cyc/", -EINVAL);
	parse_err("intel_pt/cyc,/", -EINVAL);
	parse_err("intel_pt/mtc_period=abc/", -EINVAL);
	parse_err("intel_pt/mtc_period=/", -EINVAL);
	parse_err("intel_pt/mtc_period=0x/", -EINVAL);
	parse_err("intel_pt/period/", -EINVAL);
	parse_err("intel_pt/name/", -EINVAL);
	parse_err("intel_pt/config/", -EINVAL);
	parse_err("intel_pt/c$c/", -EINVAL);
	parse_err("/cyc/", -EINVAL);
	parse_err("int$el//", -EINVAL);
	assert_contains(parse_err("intel_pt/mtc_period=16/", -ERANGE), "0..15");
	assert_contains(parse_err("arm_spe_0/min_latency=4096/", -ERANGE), "config2:0-11");
	parse_err("cs_etm/cc_threshold=0x1000/", -ERANGE);
	parse_err("intel_pt/config=99999999999999999999/", -ERANGE);
	parse_err("intel_pt/pt=2/", -ERANGE);
	assert_contains(parse_err("raw_syscalls:nope", -ENOENT), "unknown tracepoint");
	parse_err("nosys:sys_enter", -ENOENT);
	parse_err("raw_syscalls:sys_*", -EINVAL);
	parse_err("raw_syscalls:", -EINVAL);
	parse_err(":sys_enter", -EINVAL);
	parse_err("raw_syscalls:sys_enter:w", -EINVAL);
	parse_err("raw syscalls:sys_enter", -EINVAL);
	parse_err(NULL, -EINVAL);
}

static void test_opts_size_rules(void **state)
{
	struct {
		struct auxcap_evparse_opts o;
		uint64_t extra;
	} big;
	struct auxcap_event_spec *s = NULL;
	struct auxcap_evparse_error e;

	(void)state;
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big.o) - 1;
	assert_int_equal(auxcap_event_spec_parse("cpu-clock", &big.o, &s, &e), -EINVAL);
	big.o.sz = sizeof(big);
	big.extra = 1;
	assert_int_equal(auxcap_event_spec_parse("cpu-clock", &big.o, &s, &e), -E2BIG);
	big.extra = 0;
	assert_int_equal(auxcap_event_spec_parse("cpu-clock", &big.o, &s, &e), 0);
	auxcap_event_spec_free(s);
	s = NULL;
	/* NULL opts and NULL err are fine */
	assert_int_equal(auxcap_event_spec_parse("task-clock", NULL, &s, NULL), 0);
	assert_int_equal(s->attr.attr.config, PERF_COUNT_SW_TASK_CLOCK);
	auxcap_event_spec_free(s);
	assert_int_equal(auxcap_event_spec_parse("cpu-clock", NULL, NULL, NULL), -EINVAL);
	auxcap_event_spec_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intel_pt_terms_land_on_driver_bits),
		cmocka_unit_test(test_intel_pt_more_terms_and_last_wins),
		cmocka_unit_test(test_intel_pt_empty_terms_with_k),
		cmocka_unit_test(test_arm_spe_all_four_config_words),
		cmocka_unit_test(test_cs_etm_terms),
		cmocka_unit_test(test_generic_terms),
		cmocka_unit_test(test_user_set_reports_written_bits),
		cmocka_unit_test(test_symbols),
		cmocka_unit_test(test_modifiers),
		cmocka_unit_test(test_tracepoint_from_tracefs),
		cmocka_unit_test(test_breakpoints),
		cmocka_unit_test(test_raw_events),
		cmocka_unit_test(test_event_list_split),
		cmocka_unit_test_setup_teardown(test_event_aliases_expand, alias_tree_setup,
						alias_tree_teardown),
		cmocka_unit_test(test_caller_supplied_pmus_come_first),
		cmocka_unit_test(test_unknown_term_lists_the_valid_ones),
		cmocka_unit_test(test_control_characters_refused),
		cmocka_unit_test(test_unknown_pmu_suggests_list_and_emulate),
		cmocka_unit_test(test_bad_strings),
		cmocka_unit_test(test_opts_size_rules),
	};
	const char *fixtures = getenv("AUXCAP_FIXTURES");

	if (!fixtures)
		test_skip("AUXCAP_FIXTURES is not set; run through 'meson test'");
	snprintf(sysfs_root, sizeof(sysfs_root), "%s/sysfs", fixtures);
	snprintf(tracefs_root, sizeof(tracefs_root), "%s/tracefs", fixtures);
	return cmocka_run_group_tests_name("core/evparse", tests, NULL, NULL);
}
