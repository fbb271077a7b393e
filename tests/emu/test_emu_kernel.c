/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated PMU beside the real kernel: one poll() through the emulator's seam over a real
 * perf fd and an emulated one, each becoming readable for its own reason; the real event's
 * open, mmap, ioctl, munmap and close pass through to the kernel.
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
#include "util.h"

static void test_emu_poll_mixes_real_and_emulated_fds(void **state)
{
	struct emu_fixture f;
	struct perf_event_attr attr;
	struct auxcap_mapped_ring real;
	struct pollfd p[2];
	unsigned char b[64] = { 1 };
	void *m;
	int rfd;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	emu_fixture_map(&f, 4, 16, false);
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.disabled = 1;
	attr.mmap = 1;
	attr.watermark = 1;
	attr.wakeup_watermark = 1; /* every record wakes */
	attr.exclude_kernel = 1;
	rfd = auxcap_event_open(f.sys, &attr, 0, -1, -1, 0);
	assert_true(rfd >= 0);
	assert_int_equal(auxcap_mapped_ring_open(f.sys, rfd, 1, 0, &real), 0);
	assert_int_equal(auxcap_event_enable(f.sys, rfd, true), 0);

	p[0].fd = rfd;
	p[0].events = POLLIN;
	p[1].fd = f.fd;
	p[1].events = POLLIN;
	assert_int_equal(f.sys->poll(f.sys->ctx, p, 2, 0), 0);

	/* The emulated PT event reaches its watermark: only its fd is readable. */
	assert_int_equal(auxcap_event_enable(f.sys, f.fd, true), 0);
	for (int i = 0; i < 32768 / 64; i++)
		assert_int_equal(auxcap_emu_write(f.emu, f.fd, b, sizeof(b)), 64);
	assert_int_equal(f.sys->poll(f.sys->ctx, p, 2, 0), 1);
	assert_int_equal(p[0].revents, 0);
	assert_true(p[1].revents & POLLIN);

	/* The real one gets an MMAP record from the kernel. */
	m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(f.sys->poll(f.sys->ctx, p, 2, 1000), 1);
	assert_true(p[0].revents & POLLIN);
	assert_int_equal(p[1].revents, 0); /* cleared by the previous poll */
	assert_true(auxcap_ring_begin(&real.ring) > 0);
	munmap(m, 4096);

	auxcap_mapped_ring_close(&real);
	assert_int_equal(f.sys->close(f.sys->ctx, rfd), 0);
	emu_fixture_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emu_poll_mixes_real_and_emulated_fds),
	};

	test_require_perf(0);
	return cmocka_run_group_tests_name("emu/kernel", tests, NULL, NULL);
}
