/* SPDX-License-Identifier: BSD-3-Clause */
/* Consumer-side helpers for the emulator tests (see emu_test.h). */
#include "emu_test.h"

#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>

#include <cmocka.h>

#include "auxcap/record.h"
#include "barrier.h"

void emu_test_attr(struct perf_event_attr *attr, enum auxcap_emu_pmu pmu)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = AUXCAP_EMU_TYPE_BASE + (uint32_t)pmu;
	attr->disabled = 1;
	attr->sample_id_all = 1;
	attr->sample_type = EMU_TEST_SID;
}

void emu_fixture_init(struct emu_fixture *f, enum auxcap_emu_pmu pmu,
		      const struct perf_event_attr *attr, const struct auxcap_emu_opts *opts)
{
	emu_fixture_init_on(f, pmu, attr, opts, 0, -1);
}

void emu_fixture_init_on(struct emu_fixture *f, enum auxcap_emu_pmu pmu,
			 const struct perf_event_attr *attr, const struct auxcap_emu_opts *opts,
			 pid_t pid, int cpu)
{
	memset(f, 0, sizeof(*f));
	assert_int_equal(auxcap_emu_new(opts, &f->emu), 0);
	f->sys = auxcap_emu_sys(f->emu);
	if (attr)
		f->attr = *attr;
	else
		emu_test_attr(&f->attr, pmu);
	f->fd = auxcap_event_open(f->sys, &f->attr, pid, cpu, -1, 0);
	assert_true(f->fd >= 0);
}

void emu_fixture_map(struct emu_fixture *f, size_t data_pages, size_t aux_pages, bool aux_overwrite)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *pc;
	void *p = NULL;

	assert_int_equal(auxcap_mapped_ring_open(f->sys, f->fd, data_pages, 0, &f->mr), 0);
	if (!aux_pages)
		return;
	pc = f->mr.base;
	pc->aux_offset = (1 + data_pages) * page;
	pc->aux_size = aux_pages * page;
	assert_int_equal(f->sys->mmap(f->sys->ctx, aux_pages * page,
				      aux_overwrite ? PROT_READ : PROT_READ | PROT_WRITE,
				      MAP_SHARED, f->fd, (off_t)pc->aux_offset, &p),
			 0);
	f->aux = p;
	f->aux_len = aux_pages * page;
}

void emu_fixture_fini(struct emu_fixture *f)
{
	if (f->aux)
		assert_int_equal(f->sys->munmap(f->sys->ctx, f->aux, f->aux_len), 0);
	auxcap_mapped_ring_close(&f->mr);
	assert_int_equal(f->sys->close(f->sys->ctx, f->fd), 0);
	auxcap_emu_free(f->emu);
}

unsigned int emu_fixture_drain_records(struct emu_fixture *f)
{
	struct auxcap_sample_layout l;
	const struct perf_event_header *h;
	struct auxcap_record rec;
	unsigned int n = 0;
	int r;

	auxcap_sample_layout_from_attr(&f->attr, &l);
	assert_true(auxcap_ring_begin(&f->mr.ring) >= 0);
	while ((r = auxcap_ring_next(&f->mr.ring, &h)) > 0) {
		struct emu_seen *s = &f->seen;

		assert_int_equal(auxcap_record_parse(&l, h, h->size, &rec), 0);
		n++;
		if (rec.type < 32)
			s->by_type[rec.type]++;
		if (rec.has_sample_id)
			s->last_id = rec.sid.id;
		switch (rec.type) {
		case PERF_RECORD_AUX:
			if (s->n_aux < sizeof(s->aux) / sizeof(s->aux[0])) {
				s->aux[s->n_aux].offset = rec.u.aux.aux_offset;
				s->aux[s->n_aux].size = rec.u.aux.aux_size;
				s->aux[s->n_aux].flags = rec.u.aux.flags;
			}
			s->n_aux++;
			break;
		case PERF_RECORD_ITRACE_START:
			s->n_itrace++;
			s->itrace_pid = rec.u.itrace_start.pid;
			s->itrace_tid = rec.u.itrace_start.tid;
			break;
		case PERF_RECORD_LOST:
			s->n_lost++;
			s->lost += rec.u.lost.lost;
			s->lost_id = rec.u.lost.id;
			break;
		default:
			break;
		}
	}
	assert_int_equal(r, 0);
	auxcap_ring_end(&f->mr.ring);
	return n;
}

uint64_t emu_fixture_aux_head(const struct emu_fixture *f)
{
	const struct perf_event_mmap_page *pc = f->mr.base;

	return auxcap_load_acquire_u64(&pc->aux_head);
}

size_t emu_fixture_consume_aux(struct emu_fixture *f, unsigned char *out, size_t max)
{
	struct perf_event_mmap_page *pc = f->mr.base;
	uint64_t head = auxcap_load_acquire_u64(&pc->aux_head);
	size_t n = (size_t)(head - f->aux_tail);

	assert_true(n <= f->aux_len);
	assert_true(n <= max);
	for (size_t i = 0; i < n; i++)
		out[i] = ((const unsigned char *)f->aux)[(f->aux_tail + i) % f->aux_len];
	f->aux_tail = head;
	/* Only after the last read of those bytes. */
	auxcap_store_release_u64(&pc->aux_tail, f->aux_tail);
	return n;
}

int emu_fixture_poll(struct emu_fixture *f)
{
	struct pollfd p = { .fd = f->fd, .events = POLLIN };
	int r = f->sys->poll(f->sys->ctx, &p, 1, 0);

	assert_true(r >= 0);
	return r > 0 && (p.revents & POLLIN) ? 1 : 0;
}

void emu_test_pattern(unsigned char *buf, size_t len, uint64_t start, uint32_t seed)
{
	for (size_t i = 0; i < len; i++) {
		uint64_t x = (start + i) * 0x9E3779B97F4A7C15ull + seed;

		x ^= x >> 29;
		buf[i] = (unsigned char)(x | 1); /* never 0, so padding is distinguishable */
	}
}
