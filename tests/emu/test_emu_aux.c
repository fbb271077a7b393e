/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated AUX producer (spec 3) and driver personalities (spec 5) seen by a consumer:
 * watermark-aligned wakeups, overwrite (snapshot) mode, TRUNCATED with the event disabled
 * until IOC_ENABLE, begin() without space, PARTIAL, COLLISION, SPE data loss, SPE alignment
 * padding and half-buffer snapshots, BTS records and margins.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu_test.h"

#define PAGE 4096u

static void enable(struct emu_fixture *f, bool on)
{
	assert_int_equal(auxcap_event_enable(f->sys, f->fd, on), 0);
}

/* The hardware writes @len pattern bytes continuing stream position *@pos. */
static size_t hw(struct emu_fixture *f, uint64_t *pos, size_t len)
{
	unsigned char *b = malloc(len);
	ssize_t n;

	assert_non_null(b);
	emu_test_pattern(b, len, *pos, 7);
	n = auxcap_emu_write(f->emu, f->fd, b, len);
	assert_true(n >= 0);
	*pos += len;
	free(b);
	return (size_t)n;
}

static void check_pattern(const unsigned char *got, size_t len, uint64_t start)
{
	unsigned char *want = malloc(len ? len : 1);

	assert_non_null(want);
	emu_test_pattern(want, len, start, 7);
	assert_memory_equal(got, want, len);
	free(want);
}

static struct perf_event_attr attr_wm(enum auxcap_emu_pmu pmu, uint32_t aux_watermark)
{
	struct perf_event_attr a;

	emu_test_attr(&a, pmu);
	a.aux_watermark = aux_watermark;
	return a;
}

static void test_emu_pt_wakeups_at_watermark(void **state)
{
	struct emu_fixture f;
	unsigned char *out = malloc(16 * PAGE);
	uint64_t pos = 0;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	emu_fixture_map(&f, 4, 16, false); /* default watermark: half, 32 KiB */
	enable(&f, true);
	emu_fixture_drain_records(&f);
	assert_int_equal(emu_fixture_poll(&f), 0);
	assert_int_equal(hw(&f, &pos, 20000), 20000);
	/* Nothing published between interrupts. */
	assert_int_equal(emu_fixture_aux_head(&f), 0);
	assert_int_equal(emu_fixture_poll(&f), 0);
	assert_int_equal(hw(&f, &pos, 32768 - 20000), 32768 - 20000);
	assert_int_equal(emu_fixture_poll(&f), 1);
	assert_int_equal(emu_fixture_aux_head(&f), 32768);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_aux, 1);
	assert_int_equal(f.seen.aux[0].offset, 0);
	assert_int_equal(f.seen.aux[0].size, 32768);
	assert_int_equal(f.seen.aux[0].flags, 0);
	assert_int_equal(emu_fixture_consume_aux(&f, out, 16 * PAGE), 32768);
	check_pattern(out, 32768, 0);
	/* The next wakeup is one watermark later, across the end of the buffer. */
	assert_int_equal(hw(&f, &pos, 32767), 32767);
	assert_int_equal(emu_fixture_poll(&f), 0);
	assert_int_equal(hw(&f, &pos, 1), 1);
	assert_int_equal(emu_fixture_poll(&f), 1);
	assert_int_equal(emu_fixture_consume_aux(&f, out, 16 * PAGE), 32768);
	check_pattern(out, 32768, 32768);
	emu_fixture_fini(&f);
	free(out);
}

static void test_emu_pt_overwrite_no_wakeups_inbuffer_head(void **state)
{
	struct emu_fixture f;
	struct perf_event_attr a = attr_wm(AUXCAP_EMU_PMU_INTEL_PT, PAGE);
	const unsigned char *aux;
	uint64_t pos = 0, size = 4 * PAGE, end;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, &a, NULL);
	emu_fixture_map(&f, 4, 4, true); /* read-only AUX: snapshot mode */
	enable(&f, true);
	assert_int_equal(hw(&f, &pos, 3 * size + 1000), 3 * size + 1000);
	/* No watermark in overwrite mode, even with aux_watermark set: no wakeup, no record. */
	assert_int_equal(emu_fixture_poll(&f), 0);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_aux, 0);
	assert_int_equal(emu_fixture_aux_head(&f), 0);
	/* The consumer disables to take the snapshot. */
	enable(&f, false);
	assert_int_equal(emu_fixture_poll(&f), 0);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_aux, 1);
	assert_int_equal(f.seen.aux[0].offset, 1000);
	assert_int_equal(f.seen.aux[0].size, size);
	assert_int_equal(f.seen.aux[0].flags, PERF_AUX_FLAG_OVERWRITE);
	assert_int_equal(emu_fixture_aux_head(&f), 1000);
	/* The buffer holds the newest bytes ending at the head. */
	aux = f.aux;
	end = pos;
	for (uint64_t i = 0; i < size; i++) {
		unsigned char want;
		uint64_t at = end - size + i;

		emu_test_pattern(&want, 1, at, 7);
		assert_int_equal(aux[at % size], want);
	}
	enable(&f, true);
	assert_int_equal(hw(&f, &pos, 5000), 5000);
	enable(&f, false);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_aux, 2);
	assert_int_equal(f.seen.aux[1].offset, 6000);
	assert_int_equal(emu_fixture_aux_head(&f), 6000);
	assert_int_equal(emu_fixture_poll(&f), 0);
	emu_fixture_fini(&f);
}

static void test_emu_pt_truncated_disables_until_enable(void **state)
{
	struct emu_fixture f;
	struct auxcap_emu_stats st;
	unsigned char *out = malloc(4 * PAGE);
	uint64_t pos = 0;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	emu_fixture_map(&f, 4, 4, false);
	enable(&f, true);
	/* The consumer does not drain: PT fills the buffer to exactly its size, then STOP. */
	assert_int_equal(hw(&f, &pos, 20000), 4 * PAGE);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_aux, 3);
	assert_int_equal(f.seen.aux[0].size, 8192); /* wakeup point */
	assert_int_equal(f.seen.aux[1].size, 4096); /* one region before STOP */
	assert_int_equal(f.seen.aux[2].offset, 12288);
	assert_int_equal(f.seen.aux[2].size, 4096);
	assert_int_equal(f.seen.aux[2].flags, PERF_AUX_FLAG_TRUNCATED);
	assert_int_equal(emu_fixture_aux_head(&f), 4 * PAGE);
	assert_int_equal(emu_fixture_poll(&f), 1);
	/* Disabled: nothing more arrives, the loss is counted. */
	assert_int_equal(hw(&f, &pos, 3000), 0);
	assert_int_equal(auxcap_emu_stats(f.emu, f.fd, &st), 0);
	assert_int_equal(st.produced, 4 * PAGE);
	assert_int_equal(st.dropped, 20000 - 4 * PAGE + 3000);
	assert_int_equal(st.truncated, 1);
	assert_int_equal(emu_fixture_consume_aux(&f, out, 4 * PAGE), 4 * PAGE);
	check_pattern(out, 4 * PAGE, 0);
	/* IOC_ENABLE resumes tracing; PT was already marked, so no ITRACE_START. */
	enable(&f, true);
	assert_int_equal(hw(&f, &pos, 8192), 8192);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_itrace, 1);
	assert_int_equal(f.seen.aux[3].offset, 4 * PAGE);
	assert_int_equal(f.seen.aux[3].size, 8192);
	assert_int_equal(f.seen.aux[3].flags, 0);
	assert_int_equal(emu_fixture_consume_aux(&f, out, 4 * PAGE), 8192);
	check_pattern(out, 8192, 20000 + 3000);
	emu_fixture_fini(&f);
	free(out);
}

static void test_emu_begin_without_space_disables_without_record(void **state)
{
	struct emu_fixture f;
	struct auxcap_emu_stats st;
	uint64_t pos = 0;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	emu_fixture_map(&f, 4, 2, false);
	enable(&f, true);
	assert_int_equal(hw(&f, &pos, 3 * PAGE), 2 * PAGE);
	emu_fixture_drain_records(&f);
	assert_int_equal(emu_fixture_poll(&f), 1);
	/* Re-enabled without draining: begin() finds head - tail == size. */
	enable(&f, true);
	assert_int_equal(emu_fixture_poll(&f), 1);
	assert_int_equal(hw(&f, &pos, 100), 0);
	assert_int_equal(emu_fixture_drain_records(&f), 0);
	assert_int_equal(auxcap_emu_stats(f.emu, f.fd, &st), 0);
	assert_int_equal(st.no_space, 1);
	emu_fixture_fini(&f);
}

static void test_emu_pt_tail_inside_region_truncates_at_start(void **state)
{
	struct emu_fixture f;
	struct perf_event_mmap_page *pc;
	uint64_t pos = 0;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	emu_fixture_map(&f, 4, 2, false);
	enable(&f, true);
	assert_int_equal(hw(&f, &pos, 2 * PAGE), 2 * PAGE); /* full, TRUNCATED */
	pc = f.mr.base;
	/* The consumer frees only 100 bytes: the tail is inside the region PT would write. */
	__atomic_store_n(&pc->aux_tail, 100, __ATOMIC_RELEASE);
	emu_fixture_drain_records(&f);
	enable(&f, true);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.aux[f.seen.n_aux - 1].size, 0);
	assert_int_equal(f.seen.aux[f.seen.n_aux - 1].flags, PERF_AUX_FLAG_TRUNCATED);
	assert_int_equal(hw(&f, &pos, 10), 0);
	emu_fixture_fini(&f);
}

static void test_emu_pt_partial_no_wakeup(void **state)
{
	struct emu_fixture f;
	uint64_t pos = 0;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	emu_fixture_map(&f, 4, 16, false);
	enable(&f, true);
	assert_int_equal(hw(&f, &pos, 100), 100);
	assert_int_equal(auxcap_emu_inject(f.emu, f.fd, AUXCAP_EMU_FAULT_GAP), 0);
	assert_int_equal(auxcap_emu_inject(f.emu, f.fd, AUXCAP_EMU_FAULT_COLLISION), -EOPNOTSUPP);
	assert_int_equal(auxcap_emu_flush(f.emu, f.fd), 0);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_aux, 1);
	assert_int_equal(f.seen.aux[0].size, 100);
	assert_int_equal(f.seen.aux[0].flags, PERF_AUX_FLAG_PARTIAL);
	assert_int_equal(emu_fixture_poll(&f), 0);
	/* Still tracing. */
	assert_int_equal(hw(&f, &pos, 100), 100);
	emu_fixture_fini(&f);
}

static void test_emu_spe_head_passes_wakeup_rounddown_keeps_alignment(void **state)
{
	struct emu_fixture f;
	struct perf_event_attr a = attr_wm(AUXCAP_EMU_PMU_ARM_SPE, 2000);
	unsigned char *out = malloc(16 * PAGE);
	uint64_t pos = 0, head = 0;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_ARM_SPE, &a, NULL);
	emu_fixture_map(&f, 4, 16, false);
	enable(&f, true);
	/*
	 * SPE can only interrupt at the page after the wakeup point: the head lands at 4096,
	 * past 2000 and 4000.  With aux_wakeup rounded down to 4000 the next wakeup is 6000,
	 * interrupt at 8192, and so on: every interrupt is a page and a wakeup.  (With
	 * "aux_wakeup += watermark" the wakeup point would fall behind the head and the driver
	 * would run to the tail instead.)
	 */
	for (int i = 0; i < 40; i++) {
		assert_int_equal(hw(&f, &pos, PAGE), PAGE);
		head += PAGE;
		assert_int_equal(emu_fixture_aux_head(&f), head);
		assert_int_equal(emu_fixture_poll(&f), 1);
		emu_fixture_drain_records(&f);
		assert_int_equal(f.seen.n_aux, i + 1);
		assert_int_equal(f.seen.aux[i].offset, head - PAGE);
		assert_int_equal(f.seen.aux[i].size, PAGE);
		assert_int_equal(emu_fixture_consume_aux(&f, out, 16 * PAGE), PAGE);
		check_pattern(out, PAGE, head - PAGE);
	}
	emu_fixture_fini(&f);
	free(out);
}

static void test_emu_spe_alignment_padding_skipped(void **state)
{
	struct emu_fixture f;
	struct auxcap_emu_stats st;
	unsigned char *out = malloc(16 * PAGE);
	uint64_t pos = 0;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_ARM_SPE, NULL, NULL);
	emu_fixture_map(&f, 4, 16, false);
	enable(&f, true);
	assert_int_equal(hw(&f, &pos, 100), 100);
	assert_int_equal(auxcap_emu_flush(f.emu, f.fd), 0);
	/* The restart pads 100 up to the 64-byte alignment: aux_head moves by 128 with a record
	 * of 100. */
	assert_int_equal(emu_fixture_aux_head(&f), 128);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_aux, 1);
	assert_int_equal(f.seen.aux[0].size, 100);
	assert_int_equal(emu_fixture_consume_aux(&f, out, 16 * PAGE), 128);
	check_pattern(out, 100, 0);
	for (int i = 100; i < 128; i++)
		assert_int_equal(out[i], 0);
	assert_int_equal(auxcap_emu_stats(f.emu, f.fd, &st), 0);
	assert_int_equal(st.padding, 28);
	emu_fixture_fini(&f);
	free(out);
}

static void test_emu_spe_collision_flag_without_wakeup(void **state)
{
	struct emu_fixture f;
	uint64_t pos = 0;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_ARM_SPE, NULL, NULL);
	emu_fixture_map(&f, 4, 8, false);
	enable(&f, true);
	assert_int_equal(auxcap_emu_inject(f.emu, f.fd, AUXCAP_EMU_FAULT_COLLISION), 0);
	assert_int_equal(auxcap_emu_inject(f.emu, f.fd, AUXCAP_EMU_FAULT_GAP), -EOPNOTSUPP);
	assert_int_equal(hw(&f, &pos, 1024), 1024);
	/* PMBSR.COLL is read when the driver ends the transaction (here a context switch). */
	assert_int_equal(auxcap_emu_flush(f.emu, f.fd), 0);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_aux, 1);
	assert_int_equal(f.seen.aux[0].size, 1024);
	assert_int_equal(f.seen.aux[0].flags, PERF_AUX_FLAG_COLLISION);
	assert_int_equal(emu_fixture_poll(&f), 0);
	/* Reported once; tracing goes on. */
	assert_int_equal(hw(&f, &pos, 1024), 1024);
	assert_int_equal(auxcap_emu_flush(f.emu, f.fd), 0);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.aux[1].flags, 0);
	emu_fixture_fini(&f);
}

static void test_emu_spe_data_loss_truncated_partial(void **state)
{
	struct emu_fixture f;
	uint64_t pos = 0;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_ARM_SPE, NULL, NULL);
	emu_fixture_map(&f, 4, 8, false);
	enable(&f, true);
	assert_int_equal(hw(&f, &pos, 1000), 1000);
	assert_int_equal(auxcap_emu_inject(f.emu, f.fd, AUXCAP_EMU_FAULT_DATA_LOSS), 0);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_aux, 1);
	assert_int_equal(f.seen.aux[0].size, 1000);
	assert_int_equal(f.seen.aux[0].flags, PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL);
	assert_int_equal(emu_fixture_poll(&f), 1);
	assert_int_equal(hw(&f, &pos, 1000), 0);
	enable(&f, true);
	assert_int_equal(hw(&f, &pos, 1000), 1000);
	emu_fixture_fini(&f);
}

static void test_emu_spe_snapshot_half_buffers(void **state)
{
	struct emu_fixture f;
	uint64_t pos = 0, half = 2 * PAGE;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_ARM_SPE, NULL, NULL);
	emu_fixture_map(&f, 4, 4, true);
	enable(&f, true);
	assert_int_equal(hw(&f, &pos, 3 * half + 100), 3 * half + 100);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_aux, 3);
	assert_int_equal(f.seen.aux[0].offset, half);
	assert_int_equal(f.seen.aux[0].size, half);
	assert_int_equal(f.seen.aux[0].flags, PERF_AUX_FLAG_OVERWRITE);
	assert_int_equal(f.seen.aux[1].offset, 2 * half); /* the raw end offset */
	assert_int_equal(f.seen.aux[1].size, half);
	assert_int_equal(f.seen.aux[2].offset, half);
	assert_int_equal(emu_fixture_poll(&f), 0);
	enable(&f, false);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_aux, 4);
	assert_int_equal(f.seen.aux[3].offset, half + 100);
	assert_int_equal(f.seen.aux[3].size, 100);
	assert_int_equal(emu_fixture_aux_head(&f), half + 100);
	emu_fixture_fini(&f);
}

static void test_emu_bts_records_margin_and_chunk_padding(void **state)
{
	struct emu_fixture f;
	struct auxcap_emu_stats st;
	uint64_t pos = 0, size = 4 * PAGE, usable = size - size % 24, src = 0, end = 0;
	unsigned char *all = calloc(1, 64 * PAGE);

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_BTS, NULL, NULL);
	emu_fixture_map(&f, 4, 4, false);
	enable(&f, true);
	/* Max = wakeup + margin + a record, rounded to records: 12288; PMI 4080 before it. */
	assert_int_equal(hw(&f, &pos, 8208 - 24), 8208 - 24);
	assert_int_equal(emu_fixture_poll(&f), 0);
	assert_int_equal(hw(&f, &pos, 24), 24);
	assert_int_equal(emu_fixture_poll(&f), 1);
	while (emu_fixture_aux_head(&f) < 56 * PAGE) {
		assert_int_equal(hw(&f, &pos, 240 * 24), 240 * 24);
		emu_fixture_drain_records(&f);
		end += emu_fixture_consume_aux(&f, all + end, 64 * PAGE - end);
	}
	assert_int_equal(auxcap_emu_stats(f.emu, f.fd, &st), 0);
	assert_int_equal(st.dropped, 0);
	assert_true(st.padding > 0);
	for (unsigned int i = 0; i < f.seen.n_aux; i++) {
		struct emu_aux_rec *r = &f.seen.aux[i];

		/* Whole records, never across the end of the chunk. */
		assert_int_equal(r->size % 24, 0);
		assert_true(r->offset % size + r->size <= usable);
		assert_int_equal(r->flags, 0);
		/* Gaps between records are the zeroed padding. */
		if (i > 0)
			for (uint64_t g = f.seen.aux[i - 1].offset + f.seen.aux[i - 1].size;
			     g < r->offset; g++)
				assert_int_equal(all[g], 0);
		check_pattern(all + r->offset, r->size, src);
		src += r->size;
	}
	assert_int_equal(src + st.padding, emu_fixture_aux_head(&f));
	emu_fixture_fini(&f);
	free(all);
}

static void test_emu_bts_snapshot_inbuffer_head_whole_buffer(void **state)
{
	struct emu_fixture f;
	uint64_t pos = 0, size = 2 * PAGE, usable = size - size % 24;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_BTS, NULL, NULL);
	emu_fixture_map(&f, 4, 2, true);
	enable(&f, true);
	/* The circular DS area holds whole records: it wraps at 8184, not 8192. */
	assert_int_equal(hw(&f, &pos, 24 * 1000), 24 * 1000);
	assert_int_equal(emu_fixture_poll(&f), 0);
	assert_int_equal(emu_fixture_drain_records(&f), 1); /* ITRACE_START only */
	enable(&f, false);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_aux, 1);
	assert_int_equal(f.seen.aux[0].offset, (24 * 1000) % usable);
	assert_int_equal(f.seen.aux[0].size, size);
	assert_int_equal(f.seen.aux[0].flags, PERF_AUX_FLAG_OVERWRITE);
	assert_int_equal(emu_fixture_aux_head(&f), (24 * 1000) % usable);
	/* The newest record ends at the head. */
	check_pattern((const unsigned char *)f.aux + (24 * 1000) % usable - 24, 24, 24 * 999);
	emu_fixture_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emu_pt_wakeups_at_watermark),
		cmocka_unit_test(test_emu_pt_overwrite_no_wakeups_inbuffer_head),
		cmocka_unit_test(test_emu_pt_truncated_disables_until_enable),
		cmocka_unit_test(test_emu_begin_without_space_disables_without_record),
		cmocka_unit_test(test_emu_pt_tail_inside_region_truncates_at_start),
		cmocka_unit_test(test_emu_pt_partial_no_wakeup),
		cmocka_unit_test(test_emu_spe_head_passes_wakeup_rounddown_keeps_alignment),
		cmocka_unit_test(test_emu_spe_alignment_padding_skipped),
		cmocka_unit_test(test_emu_spe_collision_flag_without_wakeup),
		cmocka_unit_test(test_emu_spe_data_loss_truncated_partial),
		cmocka_unit_test(test_emu_spe_snapshot_half_buffers),
		cmocka_unit_test(test_emu_bts_records_margin_and_chunk_padding),
		cmocka_unit_test(test_emu_bts_snapshot_inbuffer_head_whole_buffer),
	};

	return cmocka_run_group_tests_name("emu/aux", tests, NULL, NULL);
}
