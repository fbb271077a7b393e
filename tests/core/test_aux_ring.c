/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the AUX area consumer, through a fake syscall seam on synthetic memory. */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "aux_ring.h"
#include "util.h"

struct fake {
	struct perf_event_mmap_page *pc;
	unsigned char *aux;
	size_t aux_len;
	off_t last_off;
	int last_prot;
	int maps, unmaps;
	int fail; /* errno to fail mmap with, 0 = succeed */
};

static int fake_mmap(void *ctx, size_t len, int prot, int flags, int fd, off_t off,
		     void **ret_addr)
{
	struct fake *f = ctx;

	(void)flags;
	(void)fd;
	if (f->fail)
		return -f->fail;
	f->aux = aligned_alloc(4096, len);
	memset(f->aux, 0, len);
	f->aux_len = len;
	f->last_off = off;
	f->last_prot = prot;
	f->maps++;
	*ret_addr = f->aux;
	return 0;
}

static int fake_munmap(void *ctx, void *addr, size_t len)
{
	struct fake *f = ctx;

	assert_ptr_equal(addr, f->aux);
	assert_int_equal(len, f->aux_len);
	free(addr);
	f->aux = NULL;
	f->unmaps++;
	return 0;
}

static struct fake fk;
static struct auxcap_sys fake_sys;

static int setup(void **state)
{
	(void)state;
	memset(&fk, 0, sizeof(fk));
	fk.pc = aligned_alloc(4096, 4096);
	memset(fk.pc, 0, 4096);
	fk.pc->data_offset = 4096;
	fk.pc->data_size = 8 * 4096;
	fake_sys.ctx = &fk;
	fake_sys.mmap = fake_mmap;
	fake_sys.munmap = fake_munmap;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(fk.maps, fk.unmaps); /* nothing leaked */
	free(fk.pc);
	return 0;
}

/* The "hardware": write @len bytes of a counter sequence at the producer head. */
static void produce(uint64_t len, uint64_t *seq)
{
	uint64_t head = fk.pc->aux_head;

	for (uint64_t i = 0; i < len; i++)
		fk.aux[(head + i) & (fk.aux_len - 1)] = (unsigned char)(*seq)++;
	__atomic_store_n(&fk.pc->aux_head, head + len, __ATOMIC_RELEASE);
}

static void test_aux_ring_open_sets_offset_size_and_mode(void **state)
{
	struct auxcap_aux_ring ring;

	(void)state;
	assert_int_equal(auxcap_aux_ring_open(&fake_sys, 3, fk.pc, 4, false, &ring), 0);
	assert_int_equal(fk.pc->aux_offset, 4096 + 8 * 4096); /* past the data pages */
	assert_int_equal(fk.pc->aux_size, 4 * 4096);
	assert_int_equal(fk.last_off, 4096 + 8 * 4096);
	assert_int_equal(fk.last_prot, PROT_READ | PROT_WRITE);
	auxcap_aux_ring_close(&ring);
	auxcap_aux_ring_close(&ring); /* idempotent */

	assert_int_equal(auxcap_aux_ring_open(&fake_sys, 3, fk.pc, 4, true, &ring), 0);
	assert_int_equal(fk.last_prot, PROT_READ); /* overwrite (snapshot) mode */
	assert_true(ring.overwrite);
	assert_int_equal(auxcap_aux_ring_read(&ring, &(struct auxcap_aux_span){ 0 }), -EINVAL);
	auxcap_aux_ring_close(&ring);
}

static void test_aux_ring_open_errors_leave_ret_untouched(void **state)
{
	struct auxcap_aux_ring ring = { .size = 12345 };

	(void)state;
	assert_int_equal(auxcap_aux_ring_open(&fake_sys, 3, fk.pc, 3, false, &ring), -EINVAL);
	fk.fail = EOPNOTSUPP;
	assert_int_equal(auxcap_aux_ring_open(&fake_sys, 3, fk.pc, 4, false, &ring), -EOPNOTSUPP);
	assert_int_equal(ring.size, 12345);
}

static void test_aux_ring_drain_wraps_in_two_pieces_every_byte_once(void **state)
{
	struct auxcap_aux_ring ring;
	struct auxcap_aux_span span;
	uint64_t seq = 0, check = 0, two_piece = 0;
	int64_t n;

	(void)state;
	assert_int_equal(auxcap_aux_ring_open(&fake_sys, 3, fk.pc, 2, false, &ring), 0);
	for (int round = 0; round < 100; round++) {
		/* Producer writes what fits (it never passes aux_tail), in odd-sized chunks. */
		uint64_t room = ring.size - (fk.pc->aux_head - fk.pc->aux_tail);
		uint64_t chunk = (uint64_t)(round * 997 + 1) % (ring.size + 1);

		produce(chunk < room ? chunk : room, &seq);
		n = auxcap_aux_ring_read(&ring, &span);
		assert_true(n >= 0);
		assert_int_equal((uint64_t)n, span.piece[0].len + span.piece[1].len);
		two_piece += span.piece[1].len != 0;
		for (int p = 0; p < 2; p++)
			for (size_t i = 0; i < span.piece[p].len; i++)
				assert_int_equal(span.piece[p].ptr[i], (unsigned char)check++);
		assert_int_equal(fk.pc->aux_tail, span.offset); /* not moved before consume */
		auxcap_aux_ring_consume(&ring, &span);
		assert_int_equal(fk.pc->aux_tail, fk.pc->aux_head);
	}
	assert_int_equal(check, seq);
	assert_int_equal(ring.drained, seq);
	assert_true(two_piece > 5);
	auxcap_aux_ring_close(&ring);
}

static void test_aux_ring_head_past_a_lap_is_stale(void **state)
{
	struct auxcap_aux_ring ring;
	struct auxcap_aux_span span;

	(void)state;
	assert_int_equal(auxcap_aux_ring_open(&fake_sys, 3, fk.pc, 1, false, &ring), 0);
	fk.pc->aux_head = 3 * 4096 + 100;
	assert_int_equal(auxcap_aux_ring_read(&ring, &span), -ESTALE);
	assert_int_equal(span.len, 4096); /* the newest buffer's worth */
	assert_int_equal(span.offset, 2 * 4096 + 100);
	auxcap_aux_ring_close(&ring);
}

static void test_aux_ring_snapshot_span(void **state)
{
	struct auxcap_aux_ring ring;
	struct auxcap_aux_span span;

	(void)state;
	assert_int_equal(auxcap_aux_ring_open(&fake_sys, 3, fk.pc, 4, true, &ring), 0);
	/* In-buffer head 100, whole buffer wrapped: [100, 16384) then [0, 100). */
	assert_int_equal(auxcap_aux_ring_span(&ring, 100 + ring.size, ring.size, &span), 0);
	assert_ptr_equal(span.piece[0].ptr, ring.base + 100);
	assert_int_equal(span.piece[0].len, ring.size - 100);
	assert_ptr_equal(span.piece[1].ptr, ring.base);
	assert_int_equal(span.piece[1].len, 100);
	/* Not wrapped: [0, 100). */
	assert_int_equal(auxcap_aux_ring_span(&ring, 100, 100, &span), 0);
	assert_int_equal(span.piece[0].len, 100);
	assert_int_equal(span.piece[1].len, 0);
	assert_int_equal(auxcap_aux_ring_span(&ring, 100, ring.size + 1, &span), -EINVAL);
	auxcap_aux_ring_close(&ring);
}

static void test_aux_stats_flags(void **state)
{
	struct auxcap_aux_stats st = { 0 };

	(void)state;
	auxcap_aux_stats_add(&st, 4096, 0);
	auxcap_aux_stats_add(&st, 0, PERF_AUX_FLAG_TRUNCATED);
	auxcap_aux_stats_add(&st, 100, PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL);
	auxcap_aux_stats_add(&st, 50, PERF_AUX_FLAG_COLLISION | 0x0100);
	auxcap_aux_stats_add(&st, 16384, PERF_AUX_FLAG_OVERWRITE);
	assert_int_equal(st.records, 5);
	assert_int_equal(st.bytes, 4096 + 100 + 50);
	assert_int_equal(st.truncated, 2);
	assert_int_equal(st.empty_truncated, 1);
	assert_int_equal(st.partial, 1);
	assert_int_equal(st.collision, 1);
	assert_int_equal(st.overwrite, 1);
	assert_int_equal(auxcap_aux_stats_lossy(&st), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_aux_ring_open_sets_offset_size_and_mode, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_aux_ring_open_errors_leave_ret_untouched, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_aux_ring_drain_wraps_in_two_pieces_every_byte_once,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_aux_ring_head_past_a_lap_is_stale, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_aux_ring_snapshot_span, setup, teardown),
		cmocka_unit_test(test_aux_stats_flags),
	};

	return cmocka_run_group_tests_name("core/aux_ring", tests, NULL, NULL);
}
