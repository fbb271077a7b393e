/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated data ring producer (spec 4) seen by a consumer: ITRACE_START at the first
 * schedule-in, sample_id trailers, LOST records when the ring is full or paused, the byte
 * watermark and poll readiness, sideband records from a trace source.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>

#include <cmocka.h>

#include "auxcap/record.h"
#include "emu_test.h"

static void enable(struct emu_fixture *f, bool on)
{
	assert_int_equal(auxcap_event_enable(f->sys, f->fd, on), 0);
}

static void test_emu_itrace_start_once_at_first_enable_pt(void **state)
{
	struct emu_fixture f;
	uint64_t id;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	emu_fixture_map(&f, 4, 4, false);
	assert_int_equal(emu_fixture_drain_records(&f), 0);
	enable(&f, true);
	assert_int_equal(emu_fixture_drain_records(&f), 1);
	assert_int_equal(f.seen.n_itrace, 1);
	assert_int_equal(f.seen.itrace_pid, getpid());
	assert_int_equal(auxcap_event_id(f.sys, f.fd, &id), 0);
	assert_int_equal(f.seen.last_id, id);
	/* PT marks the event at its first configuration: no second one. */
	enable(&f, false);
	enable(&f, true);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_itrace, 1);
	emu_fixture_fini(&f);
}

static void test_emu_itrace_start_every_sched_in_spe(void **state)
{
	struct emu_fixture f;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_ARM_SPE, NULL, NULL);
	emu_fixture_map(&f, 4, 4, false);
	enable(&f, true);
	enable(&f, false);
	enable(&f, true);
	assert_int_equal(auxcap_emu_flush(f.emu, f.fd), 0); /* a context switch */
	emu_fixture_drain_records(&f);
	/* The SPE driver never marks the event. */
	assert_int_equal(f.seen.n_itrace, 3);
	emu_fixture_fini(&f);
}

static void test_emu_itrace_start_waits_for_aux_area(void **state)
{
	struct emu_fixture f;
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pc;

	(void)state;
	emu_test_attr(&attr, AUXCAP_EMU_PMU_INTEL_PT);
	attr.disabled = 0; /* enabled at open, before any buffer exists */
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, &attr, NULL);
	emu_fixture_map(&f, 4, 0, false);
	/* Written at open into no buffer: dropped; PT could not start, so it is not marked. */
	assert_int_equal(emu_fixture_drain_records(&f), 0);
	pc = f.mr.base;
	pc->aux_offset = 5 * 4096;
	pc->aux_size = 4 * 4096;
	assert_int_equal(f.sys->mmap(f.sys->ctx, 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f.fd,
				     5 * 4096, &f.aux),
			 0);
	f.aux_len = 4 * 4096;
	/* The next schedule-in finds the AUX area. */
	assert_int_equal(emu_fixture_drain_records(&f), 1);
	assert_int_equal(f.seen.n_itrace, 1);
	emu_fixture_fini(&f);
}

/* Each flush after a write ends a transaction: one PERF_RECORD_AUX (72 bytes here). */
static void aux_record(struct emu_fixture *f)
{
	unsigned char b[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	assert_int_equal(auxcap_emu_write(f->emu, f->fd, b, sizeof(b)), 8);
	assert_int_equal(auxcap_emu_flush(f->emu, f->fd), 0);
}

static void test_emu_lost_prepended_when_ring_full(void **state)
{
	struct emu_fixture f;
	struct auxcap_emu_stats st;
	unsigned int fit = (4095 - 56) / 72; /* records after ITRACE_START (56 bytes) */
	uint64_t id;

	(void)state;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, NULL, NULL);
	emu_fixture_map(&f, 1, 64, false);
	enable(&f, true);
	for (unsigned int i = 0; i < fit + 25; i++)
		aux_record(&f);
	assert_int_equal(auxcap_emu_stats(f.emu, f.fd, &st), 0);
	assert_int_equal(st.records_lost, 25);
	/* aux_head moves on even when its record is lost: trust aux_head. */
	assert_int_equal(emu_fixture_aux_head(&f), 8 * (fit + 25));
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_lost, 0);
	assert_int_equal(f.seen.n_aux, st.aux_records);
	/* The next record that fits comes after a LOST with the count. */
	aux_record(&f);
	emu_fixture_drain_records(&f);
	assert_int_equal(f.seen.n_lost, 1);
	assert_int_equal(f.seen.lost, st.records_lost);
	assert_int_equal(auxcap_event_id(f.sys, f.fd, &id), 0);
	assert_int_equal(f.seen.lost_id, id);
	assert_int_equal(f.seen.aux[f.seen.n_aux - 1].offset, 8 * (fit + 25));
	assert_int_equal(f.mr.ring.stats.lost, st.records_lost);
	emu_fixture_fini(&f);
}

static void test_emu_pause_output_counts_lost(void **state)
{
	struct emu_fixture f;
	struct auxcap_count c;
	struct perf_event_attr attr;

	(void)state;
	emu_test_attr(&attr, AUXCAP_EMU_PMU_INTEL_PT);
	attr.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, &attr, NULL);
	emu_fixture_map(&f, 4, 16, false);
	enable(&f, true);
	emu_fixture_drain_records(&f);
	assert_int_equal(auxcap_event_pause_output(f.sys, f.fd, true), 0);
	for (int i = 0; i < 7; i++)
		aux_record(&f);
	assert_int_equal(emu_fixture_drain_records(&f), 0);
	assert_int_equal(auxcap_event_read_count(f.sys, f.fd, attr.read_format, &c), 0);
	assert_int_equal(c.lost, 7);
	assert_int_equal(auxcap_event_pause_output(f.sys, f.fd, false), 0);
	aux_record(&f);
	assert_int_equal(emu_fixture_drain_records(&f), 2);
	assert_int_equal(f.seen.n_lost, 1);
	assert_int_equal(f.seen.lost, 7);
	assert_int_equal(f.seen.n_aux, 1);
	/* PAUSE_OUTPUT stops records, not AUX writes. */
	assert_int_equal(f.seen.aux[0].offset, 7 * 8);
	emu_fixture_fini(&f);
}

static void test_emu_data_watermark_wakeup(void **state)
{
	struct emu_fixture f;
	struct perf_event_attr attr;

	(void)state;
	emu_test_attr(&attr, AUXCAP_EMU_PMU_INTEL_PT);
	attr.watermark = 1;
	attr.wakeup_watermark = 200;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, &attr, NULL);
	emu_fixture_map(&f, 4, 64, false);
	enable(&f, true); /* ITRACE_START: 56 bytes */
	aux_record(&f);	  /* 128 */
	aux_record(&f);	  /* 200: not strictly above the watermark */
	assert_int_equal(emu_fixture_poll(&f), 0);
	aux_record(&f); /* 272 */
	assert_int_equal(emu_fixture_poll(&f), 1);
	/* poll() cleared it. */
	assert_int_equal(emu_fixture_poll(&f), 0);
	aux_record(&f);
	aux_record(&f); /* 416: one step only since the last (200 -> 400) */
	assert_int_equal(emu_fixture_poll(&f), 1);
	emu_fixture_fini(&f);
}

/*
 * A source's side-band items become records of the event; a mapping without exec only with
 * attr.mmap_data (@data), flagged PERF_RECORD_MISC_MMAP_DATA, as the kernel writes them.
 */
static void sideband_from_source(bool data)
{
	struct emu_fixture f;
	struct perf_event_attr attr;
	struct auxcap_emu_replay *rp;
	struct auxcap_emu_replay_opts o = { .sz = sizeof(o), .pid = 4242, .tid = 4243 };
	struct auxcap_emu_item it = { 0 };
	struct auxcap_sample_layout l;
	const struct perf_event_header *h;
	struct auxcap_record rec;
	unsigned char trace[300];
	uint64_t last = 0;
	int n = 0;

	emu_test_attr(&attr, AUXCAP_EMU_PMU_INTEL_PT);
	attr.mmap = attr.mmap2 = attr.comm = attr.comm_exec = 1;
	attr.mmap_data = data;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, &attr, NULL);
	emu_fixture_map(&f, 4, 16, false);
	emu_test_pattern(trace, sizeof(trace), 0, 1);
	assert_int_equal(auxcap_emu_replay_new(trace, sizeof(trace), &o, &rp), 0);
	it.kind = AUXCAP_EMU_ITEM_COMM;
	it.pid = 4242;
	it.tid = 4243;
	it.u.comm.comm = "server";
	it.u.comm.exec = true;
	assert_int_equal(auxcap_emu_replay_add_item(rp, 0, &it), 0);
	it.kind = AUXCAP_EMU_ITEM_MMAP2;
	it.u.mmap2.addr = 0x400000;
	it.u.mmap2.len = 0x1000;
	it.u.mmap2.prot = PROT_READ | PROT_EXEC;
	it.u.mmap2.filename = "/usr/bin/server";
	assert_int_equal(auxcap_emu_replay_add_item(rp, 100, &it), 0);
	it.u.mmap2.addr = 0x7ffff000;
	it.u.mmap2.prot = PROT_READ | PROT_WRITE;
	it.u.mmap2.filename = "[stack]";
	it.time = 1; /* older than the records before it: it takes the ring's last time */
	assert_int_equal(auxcap_emu_replay_add_item(rp, 100, &it), 0);
	assert_int_equal(auxcap_emu_replay_attach(f.emu, AUXCAP_EMU_PMU_INTEL_PT, f.fd, rp), 0);
	enable(&f, true);
	assert_int_equal(auxcap_emu_step(f.emu, f.fd, 1000), 300);
	assert_int_equal(auxcap_emu_step(f.emu, f.fd, 1000), 0);
	assert_int_equal(auxcap_event_enable(f.sys, f.fd, false), 0); /* ends the transaction */

	auxcap_sample_layout_from_attr(&attr, &l);
	assert_true(auxcap_ring_begin(&f.mr.ring) > 0);
	while (auxcap_ring_next(&f.mr.ring, &h) > 0) {
		assert_int_equal(auxcap_record_parse(&l, h, h->size, &rec), 0);
		/* a ring's records in time order, as the kernel writes them */
		assert_true(rec.sid.present & PERF_SAMPLE_TIME);
		assert_true(rec.sid.time >= last && rec.sid.time > 1);
		last = rec.sid.time;
		switch (n++) {
		case 0:
			assert_int_equal(rec.type, PERF_RECORD_ITRACE_START);
			break;
		case 1:
			/* the source's task is not the event's: the hardware now traces it */
			assert_int_equal(rec.type, PERF_RECORD_ITRACE_START);
			assert_int_equal(rec.u.itrace_start.pid, 4242);
			assert_int_equal(rec.u.itrace_start.tid, 4243);
			break;
		case 2:
			assert_int_equal(rec.type, PERF_RECORD_COMM);
			assert_int_equal(rec.misc & PERF_RECORD_MISC_COMM_EXEC,
					 PERF_RECORD_MISC_COMM_EXEC);
			assert_string_equal(rec.u.comm.comm, "server");
			assert_int_equal(rec.sid.pid, 4242);
			break;
		case 3:
			assert_int_equal(rec.type, PERF_RECORD_MMAP2);
			assert_int_equal(rec.u.mmap.addr, 0x400000);
			assert_int_equal(rec.u.mmap.prot, PROT_READ | PROT_EXEC);
			assert_string_equal(rec.u.mmap.filename, "/usr/bin/server");
			assert_int_equal(rec.u.mmap.tid, 4243);
			assert_int_equal(rec.misc & PERF_RECORD_MISC_MMAP_DATA, 0);
			break;
		case 4:
			if (data) {
				assert_int_equal(rec.type, PERF_RECORD_MMAP2);
				assert_int_equal(rec.u.mmap.addr, 0x7ffff000);
				assert_string_equal(rec.u.mmap.filename, "[stack]");
				assert_int_equal(rec.misc, PERF_RECORD_MISC_USER |
								   PERF_RECORD_MISC_MMAP_DATA);
				break;
			}
			assert_int_equal(rec.type, PERF_RECORD_AUX); /* no record of it */
			break;
		case 5:
			assert_true(data);
			assert_int_equal(rec.type, PERF_RECORD_AUX);
			assert_int_equal(rec.u.aux.aux_size, 300);
			assert_int_equal(rec.sid.tid, 4243);
			break;
		default:
			fail();
		}
	}
	auxcap_ring_end(&f.mr.ring);
	assert_int_equal(n, data ? 6 : 5);
	emu_fixture_fini(&f);
}

static void test_emu_sideband_from_source(void **state)
{
	(void)state;
	sideband_from_source(false);
	sideband_from_source(true);
}

static void test_emu_backward_overwrite_ring_newest_first(void **state)
{
	struct emu_fixture f;
	struct perf_event_attr attr;
	struct auxcap_mapped_ring mr;
	const struct perf_event_header *h;
	uint64_t prev = UINT64_MAX, off;
	void *rw = NULL;
	int n = 0;

	(void)state;
	emu_test_attr(&attr, AUXCAP_EMU_PMU_INTEL_PT);
	attr.write_backward = 1;
	emu_fixture_init(&f, AUXCAP_EMU_PMU_INTEL_PT, &attr, NULL);
	assert_int_equal(auxcap_mapped_ring_open(f.sys, f.fd, 1,
						 AUXCAP_RING_OVERWRITE | AUXCAP_RING_BACKWARD, &mr),
			 0);
	f.mr = mr;
	/* The read-only first mapping chose overwrite mode; a writable second view of page 0
	 * shares the buffer and takes aux_offset/aux_size. */
	assert_int_equal(
		f.sys->mmap(f.sys->ctx, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f.fd, 0, &rw),
		0);
	((struct perf_event_mmap_page *)rw)->aux_offset = 2 * 4096;
	((struct perf_event_mmap_page *)rw)->aux_size = 16 * 4096;
	assert_int_equal(f.sys->mmap(f.sys->ctx, 16 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
				     f.fd, 2 * 4096, &f.aux),
			 0);
	f.aux_len = 16 * 4096;
	enable(&f, true);
	for (int i = 0; i < 200; i++)
		aux_record(&f); /* far more than one ring: old records are overwritten */
	assert_true((int64_t)((struct perf_event_mmap_page *)f.mr.base)->data_head < 0);
	assert_int_equal(auxcap_event_pause_output(f.sys, f.fd, true), 0);
	auxcap_ring_backward_begin(&f.mr.ring);
	while (auxcap_ring_next(&f.mr.ring, &h) > 0) {
		assert_int_equal(h->type, PERF_RECORD_AUX);
		memcpy(&off, (const unsigned char *)h + 8, 8);
		assert_true(off < prev); /* newest to oldest */
		if (n == 0)
			assert_int_equal(off, 199 * 8);
		prev = off;
		n++;
	}
	assert_int_equal(n, 4096 / 72);
	assert_int_equal(f.sys->munmap(f.sys->ctx, rw, 2 * 4096), 0);
	emu_fixture_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emu_itrace_start_once_at_first_enable_pt),
		cmocka_unit_test(test_emu_itrace_start_every_sched_in_spe),
		cmocka_unit_test(test_emu_itrace_start_waits_for_aux_area),
		cmocka_unit_test(test_emu_lost_prepended_when_ring_full),
		cmocka_unit_test(test_emu_pause_output_counts_lost),
		cmocka_unit_test(test_emu_data_watermark_wakeup),
		cmocka_unit_test(test_emu_sideband_from_source),
		cmocka_unit_test(test_emu_backward_overwrite_ring_newest_first),
	};

	return cmocka_run_group_tests_name("emu/data", tests, NULL, NULL);
}
