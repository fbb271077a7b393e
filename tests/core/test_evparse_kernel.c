/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The event parser against the real kernel: tracepoint ids from the real tracefs, and the
 * attrs it builds for software events, tracepoints and breakpoints are accepted by
 * perf_event_open().  Needs perf_event_open and tracefs (root in CI); skips otherwise.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "auxcap/trigger.h"
#include "auxcap/sys.h"
#include "event.h"
#include "evparse.h"
#include "util.h"

static struct auxcap_event_spec *parse_ok(const char *str)
{
	struct auxcap_event_spec *s = NULL;
	struct auxcap_evparse_error e;
	int r = auxcap_event_spec_parse(str, NULL, &s, &e);

	if (r < 0)
		fail_msg("'%s' failed with %d: %s", str, r, e.msg);
	return s;
}

/* Open the attr of @s for this thread, disabled; returns the fd or a negative errno. */
static int open_spec(struct auxcap_event_spec *s)
{
	s->attr.attr.disabled = 1;
	return auxcap_event_open(&auxcap_sys_linux, &s->attr.attr, 0, -1, -1, 0);
}

static void test_tracepoint_id_matches_tracefs(void **state)
{
	static const char *const tps[][2] = { { "raw_syscalls", "sys_enter" },
					      { "raw_syscalls", "sys_exit" },
					      { "sched", "sched_switch" } };

	(void)state;
	for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		char str[128];
		int64_t id = test_tracepoint_id(tps[i][0], tps[i][1]);
		struct auxcap_event_spec *s;
		int fd;

		if (id < 0)
			fail_msg("tracefs has no %s:%s (%s)", tps[i][0], tps[i][1],
				 strerror((int)-id));
		snprintf(str, sizeof(str), "%s:%s", tps[i][0], tps[i][1]);
		s = parse_ok(str);
		assert_int_equal(s->attr.attr.type, PERF_TYPE_TRACEPOINT);
		assert_int_equal(s->attr.attr.config, id);
		fd = open_spec(s);
		if (fd < 0)
			fail_msg("perf_event_open(%s) failed: %s", str, strerror(-fd));
		close(fd);
		auxcap_event_spec_free(s);
	}
}

static void test_software_events_open(void **state)
{
	static const char *const evs[] = { "cpu-clock",	  "task-clock",
					   "page-faults", "context-switches",
					   "dummy",	  "cpu-clock/period=10000/u",
					   "task-clock:k" };

	(void)state;
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		struct auxcap_event_spec *s = parse_ok(evs[i]);
		int fd = open_spec(s);

		if (fd < 0)
			fail_msg("perf_event_open(%s) failed: %s", evs[i], strerror(-fd));
		close(fd);
		auxcap_event_spec_free(s);
	}
}

static volatile long watched;

static void test_breakpoint_on_a_variable_opens_and_counts(void **state)
{
	struct auxcap_event_spec *s;
	char str[64];
	uint64_t count = 0;
	int fd;

	(void)state;
	snprintf(str, sizeof(str), "mem:%p/%zu:w", (void *)&watched, sizeof(watched));
	s = parse_ok(str);
	assert_int_equal(s->attr.attr.bp_addr, (uintptr_t)&watched);
	s->attr.attr.sample_period = 0; /* count, do not sample */
	fd = open_spec(s);
	if (fd == -ENODEV || fd == -EOPNOTSUPP || fd == -ENOSPC) {
		/* a VM without debug registers; the parse itself was checked above */
		printf("# breakpoints unavailable here: %s\n", strerror(-fd));
		auxcap_event_spec_free(s);
		return;
	}
	if (fd < 0)
		fail_msg("perf_event_open(%s) failed: %s", str, strerror(-fd));
	if (auxcap_trigger_breakpoints_fire() == 0) {
		/* opened (checked), but this machine never fires them */
		printf("# breakpoints open but do not fire here (a VM without debug registers): "
		       "not counted\n");
		close(fd);
		auxcap_event_spec_free(s);
		skip();
	}
	assert_int_equal(auxcap_event_enable(&auxcap_sys_linux, fd, true), 0);
	for (int i = 0; i < 5; i++)
		watched = i;
	assert_int_equal(auxcap_event_enable(&auxcap_sys_linux, fd, false), 0);
	assert_int_equal(read(fd, &count, sizeof(count)), sizeof(count));
	assert_int_equal(count, 5);
	close(fd);
	auxcap_event_spec_free(s);
}

static void test_real_msr_alias_if_present(void **state)
{
	struct auxcap_pmu *pmu = NULL;
	struct auxcap_event_spec *s;
	const char *terms;

	(void)state;
	if (auxcap_pmu_new(NULL, "msr", &pmu) < 0) {
		printf("# no msr PMU here\n");
		return;
	}
	terms = auxcap_pmu_alias_find(pmu, "tsc");
	if (!terms) {
		auxcap_pmu_free(pmu);
		return;
	}
	s = parse_ok("msr/tsc/");
	assert_int_equal(s->attr.attr.type, pmu->type);
	assert_true(s->nr_terms >= 1);
	assert_string_equal(s->terms[0].alias, "tsc");
	auxcap_event_spec_free(s);
	auxcap_pmu_free(pmu);
}

static void test_hardware_events_parse_even_if_absent(void **state)
{
	struct auxcap_event_spec *s = parse_ok("cycles:u");
	int fd = open_spec(s);

	(void)state;
	assert_int_equal(s->attr.attr.type, PERF_TYPE_HARDWARE);
	/* a VM may have no hardware PMU: then the kernel says so, the parser does not care */
	if (fd >= 0)
		close(fd);
	else
		printf("# cycles cannot be opened here: %s\n", strerror(-fd));
	auxcap_event_spec_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tracepoint_id_matches_tracefs),
		cmocka_unit_test(test_software_events_open),
		cmocka_unit_test(test_breakpoint_on_a_variable_opens_and_counts),
		cmocka_unit_test(test_real_msr_alias_if_present),
		cmocka_unit_test(test_hardware_events_parse_even_if_absent),
	};

	test_require_perf(1);
	return cmocka_run_group_tests_name("core/evparse_kernel", tests, NULL, NULL);
}
