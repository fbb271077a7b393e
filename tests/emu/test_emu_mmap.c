/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated control page, the mmap rules of spec 2.1/2.2 with the kernel's errnos, the
 * ioctls, and forwarding of fds the emulator does not own.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>

#include <cmocka.h>

#include "emu_test.h"

static size_t page;

static int map(struct emu_fixture *f, size_t len, int prot, int flags, off_t off, void **ret)
{
	return f->sys->mmap(f->sys->ctx, len, prot, flags, f->fd, off, ret);
}

static void test_emu_control_page_fresh_layout(void **state)
{
	struct emu_fixture f;
	struct perf_event_mmap_page *pc;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	emu_fixture_map(&f, 4, 0, false);
	pc = f.mr.base;
	assert_int_equal((uintptr_t)pc % page, 0);
	assert_int_equal(pc->version, 0);
	assert_int_equal(pc->size, 96);
	assert_int_equal(pc->capabilities, 0x2);
	assert_int_equal(pc->cap_user_time_zero, 0);
	assert_int_equal(pc->data_offset, page);
	assert_int_equal(pc->data_size, 4 * page);
	assert_int_equal(pc->data_head, 0);
	assert_int_equal(pc->aux_head, 0);
	assert_int_equal(f.mr.ring.size, 4 * page);
	emu_fixture_fini(&f);
}

static void test_emu_mmap_data_pages_not_pow2_einval(void **state)
{
	struct emu_fixture f;
	void *p = NULL;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	assert_int_equal(map(&f, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &p), -EINVAL);
	assert_null(p);
	assert_int_equal(map(&f, 7 * page, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &p), -EINVAL);
	/* 0 data pages (control page only) is legal, and then output is paused for good. */
	assert_int_equal(map(&f, page, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &p), 0);
	assert_int_equal(((struct perf_event_mmap_page *)p)->data_size, 0);
	assert_int_equal(f.sys->ioctl(f.sys->ctx, f.fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1), -EINVAL);
	assert_int_equal(f.sys->munmap(f.sys->ctx, p, page), 0);
	emu_fixture_fini(&f);
}

static void test_emu_mmap_length_rounds_up_to_pages(void **state)
{
	struct emu_fixture f;
	void *p = NULL;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	/* As mmap(2) itself rounds: 4097 bytes is 2 pages, 1 data page. */
	assert_int_equal(map(&f, page + 1, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &p), 0);
	assert_int_equal(((struct perf_event_mmap_page *)p)->data_size, page);
	assert_int_equal(f.sys->munmap(f.sys->ctx, p, page + 1), 0);
	emu_fixture_fini(&f);
}

static void test_emu_mmap_private_einval(void **state)
{
	struct emu_fixture f;
	void *p = NULL;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	assert_int_equal(map(&f, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, 0, &p), -EINVAL);
	emu_fixture_map(&f, 1, 0, false);
	((struct perf_event_mmap_page *)f.mr.base)->aux_offset = 2 * page;
	((struct perf_event_mmap_page *)f.mr.base)->aux_size = 2 * page;
	assert_int_equal(map(&f, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, 2 * page, &p),
			 -EINVAL);
	assert_null(p);
	emu_fixture_fini(&f);
}

static void test_emu_mmap_inherit_per_task_einval(void **state)
{
	struct emu_fixture f;
	struct perf_event_attr attr;
	void *p = NULL;

	(void)state;
	emu_test_attr(&attr, AUXCAP_EMU_PMU_INTEL_PT);
	attr.inherit = 1;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, &attr, NULL);
	assert_int_equal(map(&f, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &p), -EINVAL);
	emu_fixture_fini(&f);
}

static void test_emu_mmap_aux_before_data_einval(void **state)
{
	struct emu_fixture f;
	void *p = NULL;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	assert_int_equal(map(&f, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, 2 * page, &p),
			 -EINVAL);
	assert_null(p);
	emu_fixture_fini(&f);
}

static void test_emu_mmap_aux_offset_rules_einval(void **state)
{
	struct emu_fixture f;
	struct perf_event_mmap_page *pc;
	void *p = NULL;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	emu_fixture_map(&f, 2, 0, false);
	pc = f.mr.base;
	/* Inside the data area. */
	pc->aux_offset = 2 * page;
	pc->aux_size = 4 * page;
	assert_int_equal(map(&f, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, 2 * page, &p),
			 -EINVAL);
	/* aux_offset differs from the mmap offset. */
	pc->aux_offset = 3 * page;
	assert_int_equal(map(&f, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, 4 * page, &p),
			 -EINVAL);
	/* aux_size differs from the length. */
	pc->aux_offset = 4 * page;
	pc->aux_size = 8 * page;
	assert_int_equal(map(&f, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, 4 * page, &p),
			 -EINVAL);
	/* Not a power of two. */
	pc->aux_size = 3 * page;
	assert_int_equal(map(&f, 3 * page, PROT_READ | PROT_WRITE, MAP_SHARED, 4 * page, &p),
			 -EINVAL);
	assert_null(p);
	/* Past the data area but not adjacent: fine. */
	pc->aux_size = 4 * page;
	assert_int_equal(map(&f, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, 4 * page, &p), 0);
	f.aux = p;
	f.aux_len = 4 * page;
	/* A second AUX mapping must have the same offset and size, and shares the pages. */
	pc->aux_size = 2 * page;
	assert_int_equal(map(&f, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, 4 * page, &p),
			 -EINVAL);
	emu_fixture_fini(&f);
}

static void test_emu_mmap_aux_zero_filled(void **state)
{
	struct emu_fixture f;
	const unsigned char *a;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	emu_fixture_map(&f, 1, 8, false);
	a = f.aux;
	for (size_t i = 0; i < f.aux_len; i++)
		assert_int_equal(a[i], 0);
	emu_fixture_fini(&f);
}

static void test_emu_mmap_spe_small_or_odd_enomem(void **state)
{
	struct emu_fixture f;
	struct perf_event_mmap_page *pc;
	void *p = NULL;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_ARM_SPE, NULL, NULL);
	emu_fixture_map(&f, 1, 0, false);
	pc = f.mr.base;
	pc->aux_offset = 2 * page;
	pc->aux_size = page;
	assert_int_equal(map(&f, page, PROT_READ | PROT_WRITE, MAP_SHARED, 2 * page, &p), -ENOMEM);
	assert_int_equal(map(&f, page, PROT_READ, MAP_SHARED, 2 * page, &p), -ENOMEM);
	assert_null(p);
	pc->aux_size = 2 * page;
	assert_int_equal(map(&f, 2 * page, PROT_READ, MAP_SHARED, 2 * page, &p), 0);
	f.aux = p;
	f.aux_len = 2 * page;
	emu_fixture_fini(&f);
}

static void test_emu_mmap_second_data_mapping_shares_or_einval(void **state)
{
	struct emu_fixture f;
	void *p = NULL;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	emu_fixture_map(&f, 2, 0, false);
	assert_int_equal(map(&f, 5 * page, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &p), -EINVAL);
	assert_int_equal(map(&f, 3 * page, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &p), 0);
	/* The same control page behind two mappings. */
	((struct perf_event_mmap_page *)p)->aux_offset = 12345;
	assert_int_equal(((struct perf_event_mmap_page *)f.mr.base)->aux_offset, 12345);
	/* Splitting a mapping is refused. */
	assert_int_equal(f.sys->munmap(f.sys->ctx, (char *)p + page, page), -EINVAL);
	assert_int_equal(f.sys->munmap(f.sys->ctx, p, 3 * page), 0);
	emu_fixture_fini(&f);
}

static void test_emu_open_checks(void **state)
{
	struct auxcap_emu *emu;
	const struct auxcap_sys *sys;
	struct perf_event_attr attr;

	(void)state;
	assert_int_equal(auxcap_emu_new(NULL, &emu), 0);
	sys = auxcap_emu_sys(emu);
	emu_test_attr(&attr, AUXCAP_EMU_PMU_ARM_SPE);
	assert_int_equal(auxcap_event_open(sys, &attr, -1, -1, -1, 0), -EINVAL);
	attr.freq = 1;
	attr.sample_freq = 1000;
	assert_int_equal(auxcap_event_open(sys, &attr, 0, -1, -1, 0), -EINVAL);
	attr.freq = 0;
	attr.exclude_idle = 1;
	assert_int_equal(auxcap_event_open(sys, &attr, 0, -1, -1, 0), -EOPNOTSUPP);
	emu_test_attr(&attr, AUXCAP_EMU_PMU_INTEL_PT);
	assert_int_equal(sys->perf_event_open(sys->ctx, &attr, 0, -1, -1, 1ul << 20), -EINVAL);
	auxcap_emu_free(emu);
}

static void test_emu_ioctl_errnos(void **state)
{
	struct emu_fixture f, g;
	uint64_t id = 0, id2 = 0;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	emu_fixture_init(&g, AUXCAP_EMU_PMU_INTEL_BTS, NULL, NULL);
	assert_int_equal(auxcap_event_id(f.sys, f.fd, &id), 0);
	assert_int_equal(auxcap_event_id(g.sys, g.fd, &id2), 0);
	assert_true(id != 0);
	assert_int_equal(f.sys->ioctl(f.sys->ctx, f.fd, 0x12345678, 0), -ENOTTY);
	assert_int_equal(f.sys->ioctl(f.sys->ctx, f.fd, PERF_EVENT_IOC_REFRESH, 1), -EINVAL);
	assert_int_equal(f.sys->ioctl(f.sys->ctx, f.fd, PERF_EVENT_IOC_SET_OUTPUT, f.fd), -EINVAL);
	assert_int_equal(f.sys->ioctl(f.sys->ctx, f.fd, PERF_EVENT_IOC_SET_OUTPUT, 0), -EBADF);
	/* No buffer yet: no pause, no redirection into it. */
	assert_int_equal(f.sys->ioctl(f.sys->ctx, f.fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1), -EINVAL);
	emu_fixture_fini(&g);
	emu_fixture_fini(&f);
}

static void test_emu_forwards_foreign_fds(void **state)
{
	struct auxcap_emu *emu;
	const struct auxcap_sys *sys;
	struct pollfd p;
	int pfd[2];
	char c = 'x';

	(void)state;
	assert_int_equal(auxcap_emu_new(NULL, &emu), 0);
	sys = auxcap_emu_sys(emu);
	assert_int_equal(pipe(pfd), 0);
	assert_int_equal(write(pfd[1], &c, 1), 1);
	p.fd = pfd[0];
	p.events = POLLIN;
	assert_int_equal(sys->poll(sys->ctx, &p, 1, 0), 1);
	/* A foreign fd's readiness is not consumed by the emulator. */
	assert_int_equal(sys->poll(sys->ctx, &p, 1, 0), 1);
	assert_int_equal(sys->read(sys->ctx, pfd[0], &c, 1), 1);
	assert_int_equal(sys->ioctl(sys->ctx, pfd[0], PERF_EVENT_IOC_ENABLE, 0), -ENOTTY);
	assert_int_equal(sys->close(sys->ctx, pfd[0]), 0);
	assert_int_equal(sys->close(sys->ctx, pfd[1]), 0);
	assert_int_equal(sys->close(sys->ctx, pfd[1]), -EBADF);
	auxcap_emu_free(emu);
}

static void test_emu_pmu_lookup(void **state)
{
	struct auxcap_emu *emu;
	struct auxcap_emu_pmu_info info;

	(void)state;
	assert_int_equal(auxcap_emu_new(NULL, &emu), 0);
	assert_int_equal(auxcap_emu_pmu_find(emu, "intel_pt", &info), 0);
	assert_int_equal(info.type, AUXCAP_EMU_TYPE_BASE + AUXCAP_EMU_PMU_INTEL_PT);
	assert_int_equal(auxcap_emu_pmu_find(emu, "arm_spe_0", &info), 0);
	assert_int_equal(info.pmu, AUXCAP_EMU_PMU_ARM_SPE);
	assert_int_equal(auxcap_emu_pmu_find(emu, "intel_bts", &info), 0);
	assert_int_equal(info.type, AUXCAP_EMU_TYPE_BASE + AUXCAP_EMU_PMU_INTEL_BTS);
	assert_int_equal(info.nr_formats, 0);
	assert_int_equal(auxcap_emu_pmu_find(emu, "intel_pt", &info), 0);
	assert_true(info.nr_formats > 0);
	for (size_t i = 0; i < info.nr_formats; i++)
		if (!strcmp(info.formats[i].name, "tsc"))
			assert_string_equal(info.formats[i].spec, "config:10");
	assert_true(info.caps & AUXCAP_EMU_CAP_ITRACE);
	assert_int_equal(auxcap_emu_pmu_find(emu, "cs_etm", &info), -ENOENT);
	auxcap_emu_free(emu);
	/* An emulator that looks like an arm64 machine. */
	{
		struct auxcap_emu_opts o = { .sz = sizeof(o),
					     .pmus = 1u << AUXCAP_EMU_PMU_ARM_SPE };
		struct perf_event_attr attr;

		assert_int_equal(auxcap_emu_new(&o, &emu), 0);
		assert_int_equal(auxcap_emu_pmu_find(emu, "intel_pt", &info), -ENOENT);
		assert_int_equal(auxcap_emu_pmu_info(emu, AUXCAP_EMU_PMU_INTEL_PT, &info), -ENOENT);
		assert_int_equal(auxcap_emu_pmu_find(emu, "arm_spe_0", &info), 0);
		emu_test_attr(&attr, AUXCAP_EMU_PMU_INTEL_PT);
		assert_int_equal(auxcap_event_open(auxcap_emu_sys(emu), &attr, 0, -1, -1, 0),
				 -ENOENT);
		auxcap_emu_free(emu);
		o.pmus = 1u << 7;
		assert_int_equal(auxcap_emu_new(&o, &emu), -EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emu_control_page_fresh_layout),
		cmocka_unit_test(test_emu_mmap_data_pages_not_pow2_einval),
		cmocka_unit_test(test_emu_mmap_length_rounds_up_to_pages),
		cmocka_unit_test(test_emu_mmap_private_einval),
		cmocka_unit_test(test_emu_mmap_inherit_per_task_einval),
		cmocka_unit_test(test_emu_mmap_aux_before_data_einval),
		cmocka_unit_test(test_emu_mmap_aux_offset_rules_einval),
		cmocka_unit_test(test_emu_mmap_aux_zero_filled),
		cmocka_unit_test(test_emu_mmap_spe_small_or_odd_enomem),
		cmocka_unit_test(test_emu_mmap_second_data_mapping_shares_or_einval),
		cmocka_unit_test(test_emu_open_checks),
		cmocka_unit_test(test_emu_ioctl_errnos),
		cmocka_unit_test(test_emu_forwards_foreign_fds),
		cmocka_unit_test(test_emu_pmu_lookup),
	};

	page = (size_t)sysconf(_SC_PAGESIZE);
	return cmocka_run_group_tests_name("emu/mmap", tests, NULL, NULL);
}
