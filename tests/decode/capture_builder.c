/* SPDX-License-Identifier: BSD-3-Clause */
/* Synthesized perf.data captures (capture_builder.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "auxcap/record.h"
#include "capture_builder.h"

#define SAMPLE_TYPE                                                                         \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |     \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

struct cb {
	struct auxcap_perf_writer *w;
	struct auxcap_sample_layout l;
	int err;
};

static void attr_init(struct perf_event_attr *a, uint32_t type, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->size = sizeof(*a);
	a->config = config;
	a->sample_period = 1;
	a->sample_type = SAMPLE_TYPE;
	a->sample_id_all = 1;
}

struct cb *cb_open(const char *path, const char *aux_name, uint32_t aux_type)
{
	return cb_open_ex(path, aux_name, aux_type, false);
}

struct cb *cb_open_ex(const char *path, const char *aux_name, uint32_t aux_type,
		      bool exclude_kernel)
{
	struct perf_event_attr a;
	uint64_t id;
	struct cb *b = calloc(1, sizeof(*b));
	int r;

	if (!b)
		return NULL;
	r = auxcap_perf_writer_open(path, NULL, &b->w);
	if (r < 0) {
		free(b);
		errno = -r;
		return NULL;
	}
	attr_init(&a, aux_type, 0);
	a.exclude_kernel = exclude_kernel;
	auxcap_sample_layout_from_attr(&a, &b->l);
	id = CB_AUX_ID;
	r = auxcap_perf_writer_add_attr(b->w, &a, aux_name, &id, 1);
	if (r == 0) {
		attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
		a.sample_period = 100000;
		id = CB_CLOCK_ID;
		r = auxcap_perf_writer_add_attr(b->w, &a, "cpu-clock", &id, 1);
	}
	if (r < 0) {
		(void)auxcap_perf_writer_close(b->w);
		free(b);
		errno = -r;
		return NULL;
	}
	return b;
}

int cb_error(const struct cb *b)
{
	return b->err;
}

int cb_close(struct cb *b)
{
	int r = auxcap_perf_writer_close(b->w);

	if (!r)
		r = b->err;
	free(b);
	return r;
}

static void put(struct cb *b, int r)
{
	if (r < 0 && !b->err)
		b->err = r;
}

/* Write header + @body (@n bytes, a multiple of 8) + the sample_id trailer. */
static void write_rec(struct cb *b, uint32_t type, uint16_t misc, const void *body, size_t n,
		      uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	unsigned char buf[512];
	struct perf_event_header h = { type, misc, 0 };
	struct auxcap_sample_id sid = { 0 };
	size_t t;

	sid.pid = pid;
	sid.tid = tid;
	sid.time = time;
	sid.id = CB_AUX_ID;
	sid.cpu = cpu;
	if (n)
		memcpy(buf + 8, body, n);
	t = auxcap_sample_id_encode(&b->l, &sid, buf + 8 + n);
	h.size = (uint16_t)(8 + n + t);
	memcpy(buf, &h, sizeof(h));
	put(b, auxcap_perf_writer_write(b->w, buf));
}

void cb_comm(struct cb *b, uint32_t pid, uint32_t tid, const char *comm, bool exec,
	     uint64_t time, uint32_t cpu)
{
	unsigned char body[24] = { 0 };

	memcpy(body, &pid, 4);
	memcpy(body + 4, &tid, 4);
	memcpy(body + 8, comm, strnlen(comm, 15));
	write_rec(b, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0, body, sizeof(body),
		  pid, tid, time, cpu);
}

void cb_fork(struct cb *b, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
	     uint64_t time, uint32_t cpu)
{
	unsigned char body[24];

	memcpy(body, &pid, 4);
	memcpy(body + 4, &ppid, 4);
	memcpy(body + 8, &tid, 4);
	memcpy(body + 12, &ptid, 4);
	memcpy(body + 16, &time, 8);
	write_rec(b, PERF_RECORD_FORK, 0, body, sizeof(body), ppid, ptid, time, cpu);
}

void cb_mmap2(struct cb *b, uint32_t pid, uint32_t tid, uint64_t addr, uint64_t len,
	      uint64_t pgoff, uint32_t prot, const char *path, uint64_t time, uint32_t cpu)
{
	unsigned char body[400] = { 0 };
	size_t n = 64 + ((strlen(path) + 8) & ~(size_t)7);
	uint32_t flags = 0x02; /* MAP_PRIVATE */

	if (n > sizeof(body))
		n = sizeof(body);
	memcpy(body, &pid, 4);
	memcpy(body + 4, &tid, 4);
	memcpy(body + 8, &addr, 8);
	memcpy(body + 16, &len, 8);
	memcpy(body + 24, &pgoff, 8);
	/* maj, min, ino, ino_generation: 0 */
	memcpy(body + 56, &prot, 4);
	memcpy(body + 60, &flags, 4);
	memcpy(body + 64, path, strnlen(path, n - 64 - 1));
	write_rec(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, body, n, pid, tid, time, cpu);
}

void cb_mmap_kernel(struct cb *b, uint64_t start, uint64_t len, uint64_t time)
{
	static const char name[] = "[kernel.kallsyms]_text";
	unsigned char body[64] = { 0 };
	uint32_t pid = (uint32_t)-1, tid = 0;

	memcpy(body, &pid, 4);
	memcpy(body + 4, &tid, 4);
	memcpy(body + 8, &start, 8);
	memcpy(body + 16, &len, 8);
	memcpy(body + 24, &start, 8);
	memcpy(body + 32, name, sizeof(name));
	write_rec(b, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, body,
		  32 + ((sizeof(name) + 7) & ~(size_t)7), pid, tid, time, 0);
}

void cb_build_id(struct cb *b, uint16_t cpumode, const uint8_t *id, size_t size,
		 const char *filename)
{
	put(b, auxcap_perf_writer_add_build_id(b->w, cpumode, -1, id, size, filename));
}

void cb_itrace_start(struct cb *b, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	uint32_t body[2] = { pid, tid };

	write_rec(b, PERF_RECORD_ITRACE_START, 0, body, sizeof(body), pid, tid, time, cpu);
}

void cb_switch(struct cb *b, bool out, uint32_t pid, uint32_t tid, uint32_t np_pid,
	       uint32_t np_tid, uint64_t time, uint32_t cpu)
{
	uint32_t body[2] = { np_pid, np_tid };

	write_rec(b, PERF_RECORD_SWITCH_CPU_WIDE, out ? PERF_RECORD_MISC_SWITCH_OUT : 0, body,
		  sizeof(body), pid, tid, time, cpu);
}

void cb_switch_task(struct cb *b, bool out, uint32_t pid, uint32_t tid, uint64_t time,
		    uint32_t cpu)
{
	write_rec(b, PERF_RECORD_SWITCH, out ? PERF_RECORD_MISC_SWITCH_OUT : 0, NULL, 0, pid, tid,
		  time, cpu);
}

void cb_sample(struct cb *b, int evsel, uint64_t ip, uint32_t pid, uint32_t tid, uint64_t time,
	       uint32_t cpu, uint64_t period)
{
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 56 };
	unsigned char buf[56];
	uint64_t id = evsel ? CB_CLOCK_ID : CB_AUX_ID;
	uint32_t pt[2] = { pid, tid }, cr[2] = { cpu, 0 };

	memcpy(buf, &h, 8);
	memcpy(buf + 8, &id, 8);
	memcpy(buf + 16, &ip, 8);
	memcpy(buf + 24, pt, 8);
	memcpy(buf + 32, &time, 8);
	memcpy(buf + 40, cr, 8);
	memcpy(buf + 48, &period, 8);
	put(b, auxcap_perf_writer_write(b->w, buf));
}

void cb_aux(struct cb *b, uint64_t offset, uint64_t size, uint64_t flags, uint32_t pid,
	    uint32_t tid, uint64_t time, uint32_t cpu)
{
	uint64_t body[3] = { offset, size, flags };

	write_rec(b, PERF_RECORD_AUX, 0, body, sizeof(body), pid, tid, time, cpu);
}

void cb_lost(struct cb *b, uint64_t lost, uint64_t time, uint32_t cpu)
{
	uint64_t body[2] = { CB_CLOCK_ID, lost };

	write_rec(b, PERF_RECORD_LOST, 0, body, sizeof(body), (uint32_t)-1, (uint32_t)-1, time,
		  cpu);
}

void cb_lost_samples(struct cb *b, uint64_t lost, uint64_t time, uint32_t cpu)
{
	write_rec(b, PERF_RECORD_LOST_SAMPLES, 0, &lost, sizeof(lost), (uint32_t)-1,
		  (uint32_t)-1, time, cpu);
}

void cb_auxtrace_error(struct cb *b, uint32_t code, uint64_t ip, const char *msg, uint32_t pid,
		       uint32_t tid, uint64_t time, uint32_t cpu)
{
	struct auxcap_perf_auxtrace_error e = { 0 };

	e.type = 1;
	e.code = code;
	e.cpu = cpu;
	e.pid = pid;
	e.tid = tid;
	e.fmt = 1;
	e.ip = ip;
	e.time = time;
	strncpy(e.msg, msg, sizeof(e.msg) - 1);
	put(b, auxcap_perf_writer_write_auxtrace_error(b->w, &e));
}

void cb_auxtrace(struct cb *b, const void *data, size_t len, uint64_t offset, uint32_t idx,
		 uint32_t tid, uint32_t cpu)
{
	struct auxcap_perf_auxtrace at = { offset, 0, idx, tid, cpu };

	put(b, auxcap_perf_writer_write_auxtrace(b->w, &at, data, len, NULL, 0));
}

void cb_auxtrace_info(struct cb *b, uint32_t type, const uint64_t *words, size_t nr)
{
	put(b, auxcap_perf_writer_write_auxtrace_info(b->w, type, words, nr));
}

void cb_time_conv(struct cb *b, const struct auxcap_perf_time_conv *tc)
{
	put(b, auxcap_perf_writer_write_time_conv(b->w, tc));
}

void cb_round(struct cb *b)
{
	put(b, auxcap_perf_writer_write_finished_round(b->w));
}
