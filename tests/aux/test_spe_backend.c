/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the Arm SPE backend's ops (aux/arm_spe/spe_backend.c, spe_record.c): records
 * built by hand from the Arm packet formats become SAMPLE events with every field; malformed
 * and truncated data become GAP events at their offsets with decoding resumed at the next
 * record; timestamps convert with TIME_CONV as perf does; the dump op; the record side's
 * defaults (from the fixture arm_spe_0 sysfs tree) and refusals; AUXTRACE_INFO; and snapshot
 * wrap detection with the half-buffer rule.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "auxcap/backend.h"
#include "aux_ring.h"
#include "spe_backend.h"
#include "spe_decode.h"

struct pkts {
	unsigned char b[512];
	size_t len;
};

static void put(struct pkts *p, unsigned int hdr, uint64_t payload, unsigned int n)
{
	assert_true(p->len + 1 + n <= sizeof(p->b));
	p->b[p->len++] = (unsigned char)hdr;
	for (unsigned int i = 0; i < n; i++)
		p->b[p->len++] = (unsigned char)(payload >> (8 * i));
}

static const struct auxcap_backend_ops *spe(void)
{
	const struct auxcap_backend_ops *b = auxcap_backend_find("arm_spe");

	assert_non_null(b);
	return b;
}

#define NS (1ULL << 63)

static void test_samples(void **state)
{
	struct auxcap_perf_time_conv tc = { .time_shift = 1, .time_mult = 3, .time_zero = 100 };
	struct auxcap_decode_ctx ctx = { .sz = sizeof(ctx), .cpu = 2, .time_conv = &tc };
	struct auxcap_trace_event ev;
	struct pkts p = { .len = 0 };
	size_t off_b, off_bad, off_c, off_trunc;
	void *dec = NULL;
	char text[256];
	int n;

	(void)state;
	/* a sampled trace: counter samples get no context from it */
	assert_true(spe()->flags & AUXCAP_BACKEND_F_SAMPLED);
	/* A: a load with every field. */
	put(&p, 0xb0, NS | 0x0000aaaabbbb1000ULL, 8); /* PC, EL0, non-secure */
	put(&p, 0x64, 0x1234, 4);		      /* CONTEXTIDR_EL1 */
	put(&p, 0x49, 0x00, 1);			      /* LDST: load, GP register */
	put(&p, 0x52, 0x0016, 2);		      /* RETIRED, L1D-ACCESS, TLB-ACCESS */
	put(&p, 0x98, 32, 2);			      /* total latency */
	put(&p, 0x99, 8, 2);			      /* issue latency */
	put(&p, 0x9a, 3, 2);			      /* translation latency */
	p.b[p.len++] = 0x20;			      /* extended header, index 2 (data VA) */
	put(&p, 0xb2, 0x00ff000012345678ULL, 8);     /* bit 55 set: sign-extended */
	put(&p, 0xb3, NS | 0x80001000ULL, 8);	      /* data PA */
	put(&p, 0x71, 1000, 8);			      /* timestamp: end of record */
	/* B: a mispredicted call, ended by END, no timestamp. */
	off_b = p.len;
	put(&p, 0xb0, NS | 0x401000, 8);
	put(&p, 0x4a, 0x08, 1); /* branch, call hint */
	put(&p, 0x52, 0x0082, 2);
	put(&p, 0xb1, NS | 0x402000, 8);
	p.b[p.len++] = 0x01;
	/* A reserved header, an END, then C. */
	off_bad = p.len;
	p.b[p.len++] = 0xc0;
	p.b[p.len++] = 0x01;
	off_c = p.len;
	put(&p, 0xb0, NS | 0x403000, 8);
	put(&p, 0x71, 2001, 8);
	/* Padding, then a PC packet cut short. */
	p.len += 5;
	off_trunc = p.len;
	put(&p, 0xb0, 0, 0);
	p.len += 3;

	assert_int_equal(spe()->decoder_new(&ctx, p.b, p.len, &dec), 0);

	assert_int_equal(spe()->decoder_next(dec, &ev), 1);
	assert_int_equal(ev.kind, AUXCAP_TRACE_SAMPLE);
	assert_int_equal(ev.offset, 0);
	assert_int_equal(ev.ip, 0x0000aaaabbbb1000ULL);
	assert_int_equal(ev.tid, 0x1234);
	assert_int_equal(ev.op, AUXCAP_SPE_EVENT_OP(AUXCAP_SPE_OP_CLASS_LDST, 0));
	assert_int_equal(ev.events, 0x16);
	assert_int_equal(ev.total_latency, 32);
	assert_int_equal(ev.issue_latency, 8);
	assert_int_equal(ev.translation_latency, 3);
	assert_int_equal(ev.addr, 0xffff000012345678ULL);
	assert_int_equal(ev.phys_addr, 0x80001000ULL);
	assert_int_equal(ev.tsc, 1000);
	/* perf's tsc_to_perf_time: 100 + (1000 >> 1) * 3 */
	assert_int_equal(ev.time, 1600);
	assert_int_equal(ev.flags, AUXCAP_TRACE_F_HAS_TSC | AUXCAP_TRACE_F_HAS_TIME |
					   AUXCAP_TRACE_F_HAS_TID | AUXCAP_TRACE_F_HAS_ADDR |
					   AUXCAP_TRACE_F_HAS_PHYS);
	assert_int_equal(ev.branch, AUXCAP_BR_NONE);
	/* the describe op names what the text output cannot: as the sample printer does */
	n = spe()->describe(&ev, text, sizeof(text));
	assert_int_equal(n, (int)strlen(text));
	assert_string_equal(text, " op=LD GP-REG va=0xffff000012345678 pa=0x80001000 tot=32 "
				  "issue=8 xlat=3 ev=RETIRED,L1D-ACCESS,TLB-ACCESS");
	/* cut short: still a string, and the length the whole needs */
	assert_int_equal(spe()->describe(&ev, text, 12), n);
	assert_string_equal(text, " op=LD GP-R");

	assert_int_equal(spe()->decoder_next(dec, &ev), 1);
	assert_int_equal(ev.kind, AUXCAP_TRACE_SAMPLE);
	assert_int_equal(ev.offset, off_b);
	assert_int_equal(ev.ip, 0x401000);
	assert_int_equal(ev.to, 0x402000);
	assert_int_equal(ev.branch, AUXCAP_BR_CALL);
	assert_int_equal(ev.op, AUXCAP_SPE_EVENT_OP(AUXCAP_SPE_OP_CLASS_BRANCH, 0x08));
	assert_int_equal(ev.flags, AUXCAP_TRACE_F_MISPRED);
	assert_int_equal(ev.tsc, 0);
	n = spe()->describe(&ev, text, sizeof(text));
	assert_string_equal(text, " op=B CR-BL tgt=0x0000000000402000 ev=RETIRED,MISPRED");

	assert_int_equal(spe()->decoder_next(dec, &ev), 1);
	assert_int_equal(ev.kind, AUXCAP_TRACE_GAP);
	assert_int_equal(ev.offset, off_bad);
	assert_int_equal(ev.err, -EBADMSG);
	assert_int_equal(ev.native, AUXCAP_SPE_ERR_BAD_HEADER);
	assert_non_null(ev.what);
	assert_int_equal(spe()->describe(&ev, text, sizeof(text)), 0); /* not a sample */
	assert_string_equal(text, "");

	assert_int_equal(spe()->decoder_next(dec, &ev), 1);
	assert_int_equal(ev.kind, AUXCAP_TRACE_SAMPLE);
	assert_int_equal(ev.offset, off_c);
	assert_int_equal(ev.ip, 0x403000);
	/* 100 + (2001 >> 1) * 3 + ((2001 & 1) * 3 >> 1) */
	assert_int_equal(ev.time, 3101);

	assert_int_equal(spe()->decoder_next(dec, &ev), 1);
	assert_int_equal(ev.kind, AUXCAP_TRACE_GAP);
	assert_int_equal(ev.offset, off_trunc);
	assert_int_equal(ev.err, -ENODATA);

	assert_int_equal(spe()->decoder_next(dec, &ev), 0);
	spe()->decoder_free(dec);
}

/* Without TIME_CONV (or with a zero multiplier) timestamps stay raw. */
/* A record's data access in the decode stage's terms (auxcap_trace_event.mem). */
static void test_mem(void **state)
{
	struct auxcap_decode_ctx ctx = { .sz = sizeof(ctx), .cpu = 0 };
	struct auxcap_trace_event ev;
	struct pkts p = { .len = 0 };
	void *dec = NULL;

	(void)state;
	/* a store that missed everything, walked the page tables, served by another socket */
	put(&p, 0xb0, NS | 0x1000, 8);
	put(&p, 0x49, 0x01, 1);	   /* LDST: store, GP register */
	put(&p, 0x52, 0x073e, 2);  /* RETIRED, L1D access+refill, TLB access+walk, LLC
				    * access+miss, remote */
	put(&p, 0xb2, 0x7000, 8);
	p.b[p.len++] = 0x01;
	/* an atomic (extended: AT, ST) that hit the last-level cache; the refill alone says it
	 * looked up the L1 */
	put(&p, 0xb0, NS | 0x1004, 8);
	put(&p, 0x49, 0x07, 1);
	put(&p, 0x52, 0x0108, 2); /* L1D refill, LLC access */
	p.b[p.len++] = 0x01;
	/* a load without an events packet: a data access of no known level */
	put(&p, 0xb0, NS | 0x1008, 8);
	put(&p, 0x49, 0x00, 1);
	p.b[p.len++] = 0x01;
	/* a branch: no data access */
	put(&p, 0xb0, NS | 0x100c, 8);
	put(&p, 0x4a, 0x00, 1);
	put(&p, 0x52, 0x0008, 2); /* (an L1D refill bit on a branch says nothing of data) */
	p.b[p.len++] = 0x01;

	assert_int_equal(spe()->decoder_new(&ctx, p.b, p.len, &dec), 0);
	assert_int_equal(spe()->decoder_next(dec, &ev), 1);
	assert_int_equal(ev.mem, AUXCAP_TRACE_MEM_STORE | AUXCAP_TRACE_MEM_L1_ACCESS |
					 AUXCAP_TRACE_MEM_L1_MISS | AUXCAP_TRACE_MEM_TLB_ACCESS |
					 AUXCAP_TRACE_MEM_TLB_MISS | AUXCAP_TRACE_MEM_LLC_ACCESS |
					 AUXCAP_TRACE_MEM_LLC_MISS | AUXCAP_TRACE_MEM_REMOTE);
	assert_int_equal(spe()->decoder_next(dec, &ev), 1);
	assert_int_equal(ev.mem, AUXCAP_TRACE_MEM_LOAD | AUXCAP_TRACE_MEM_STORE |
					 AUXCAP_TRACE_MEM_L1_ACCESS | AUXCAP_TRACE_MEM_L1_MISS |
					 AUXCAP_TRACE_MEM_LLC_ACCESS);
	assert_int_equal(spe()->decoder_next(dec, &ev), 1);
	assert_int_equal(ev.mem, AUXCAP_TRACE_MEM_LOAD);
	assert_int_equal(spe()->decoder_next(dec, &ev), 1);
	assert_int_equal(ev.mem, 0);
	assert_int_equal(spe()->decoder_next(dec, &ev), 0);
	spe()->decoder_free(dec);
}

/* The loads of @p (one record each, data source @ds[i]) decoded on the CPU @cpuid names:
 * each event's auxcap_trace_event.source in @got. */
static void sources_of(const char *cpuid, const unsigned int *ds, size_t n, uint32_t *got)
{
	struct auxcap_decode_ctx ctx = { .sz = sizeof(ctx), .cpu = 0, .cpuid = cpuid };
	struct auxcap_trace_event ev;
	struct pkts p = { .len = 0 };
	void *dec = NULL;

	for (size_t i = 0; i < n; i++) {
		put(&p, 0xb0, NS | (0x1000 + 4 * i), 8);
		put(&p, 0x49, 0x00, 1);	 /* LDST: load, GP register */
		put(&p, 0x52, 0x0016, 2); /* RETIRED, L1D access, TLB access */
		put(&p, 0x53, ds[i], 2);  /* data source, 2 bytes */
		p.b[p.len++] = 0x01;
	}
	/* a store's data source is read too, where the unit gives one */
	put(&p, 0xb0, NS | 0x2000, 8);
	put(&p, 0x49, 0x01, 1);
	put(&p, 0x43, 0x0e, 1); /* data source, 1 byte */
	p.b[p.len++] = 0x01;
	assert_int_equal(spe()->decoder_new(&ctx, p.b, p.len, &dec), 0);
	for (size_t i = 0; i <= n; i++) {
		assert_int_equal(spe()->decoder_next(dec, &ev), 1);
		assert_int_equal(ev.kind, AUXCAP_TRACE_SAMPLE);
		got[i] = ev.source;
	}
	assert_int_equal(spe()->decoder_next(dec, &ev), 0);
	spe()->decoder_free(dec);
}

/* The data-source packet's payload is read in the encoding the capture's CPU (its MIDR in
 * perf's CPUID text) uses: Arm's common one, AmpereOne's, or none (not said). */
static void test_data_source(void **state)
{
	static const unsigned int ds[] = { 0x0, 0x8, 0x9, 0xa, 0xb, 0xc, 0xd, 0xe, 0x3, 0x5, 0x7,
					   0x1 };
	enum { N = sizeof(ds) / sizeof(ds[0]) };
	static const uint32_t common[N + 1] = {
		AUXCAP_TRACE_SRC_L1,	       AUXCAP_TRACE_SRC_L2,
		AUXCAP_TRACE_SRC_PEER_CORE,    AUXCAP_TRACE_SRC_LOCAL_CLUSTER,
		AUXCAP_TRACE_SRC_SYS_CACHE,    AUXCAP_TRACE_SRC_PEER_CLUSTER,
		AUXCAP_TRACE_SRC_REMOTE,       AUXCAP_TRACE_SRC_DRAM,
		AUXCAP_TRACE_SRC_NONE,	       AUXCAP_TRACE_SRC_NONE,
		AUXCAP_TRACE_SRC_NONE,	       AUXCAP_TRACE_SRC_NONE,
		AUXCAP_TRACE_SRC_DRAM, /* the store's 0xe */
	};
	static const uint32_t ampere[N + 1] = {
		AUXCAP_TRACE_SRC_PEER_CLUSTER, AUXCAP_TRACE_SRC_L1,
		AUXCAP_TRACE_SRC_L2,	       AUXCAP_TRACE_SRC_NONE,
		AUXCAP_TRACE_SRC_NONE,	       AUXCAP_TRACE_SRC_NONE,
		AUXCAP_TRACE_SRC_NONE,	       AUXCAP_TRACE_SRC_NONE,
		AUXCAP_TRACE_SRC_SYS_CACHE,    AUXCAP_TRACE_SRC_REMOTE,
		AUXCAP_TRACE_SRC_DRAM,	       AUXCAP_TRACE_SRC_NONE,
		AUXCAP_TRACE_SRC_NONE,
	};
	static const uint32_t none[N + 1];
	static const struct {
		const char *cpuid;
		const uint32_t *want;
	} cpus[] = {
		{ "0x00000000410fd0c0", common }, /* Neoverse N1 r0p0 */
		{ "0x00000000413fd0c1", common }, /* ... r3p1: any variant and revision */
		{ "0x00000000410fd490", common }, /* Neoverse N2 */
		{ "0x00000000410fd400", common }, /* Neoverse V1 */
		{ "0x00000000410fd4f0", common }, /* Neoverse V2 */
		{ "0x00000000410fd810", common }, /* Cortex-A720 */
		{ "0x00000000c00fac40", ampere }, /* AmpereOne AC04 */
		{ "0x00000000410fd030", none },	  /* Cortex-A53: its own, not known */
		{ "0x00000000420fd0c0", none },	  /* another implementer, the same part number */
		{ "GenuineIntel,6,85,4", none },  /* not an arm64 capture */
		{ "0x", none },
		{ "0x410fd0c0zz", none },
		{ NULL, none },			  /* no CPUID feature */
	};
	uint32_t got[N + 1];

	(void)state;
	for (size_t c = 0; c < sizeof(cpus) / sizeof(cpus[0]); c++) {
		sources_of(cpus[c].cpuid, ds, N, got);
		for (size_t i = 0; i <= N; i++)
			if (got[i] != cpus[c].want[i])
				fail_msg("cpuid %s, record %zu: source %u, want %u",
					 cpus[c].cpuid ? cpus[c].cpuid : "(none)", i, got[i],
					 cpus[c].want[i]);
	}
}

static void test_no_time(void **state)
{
	struct auxcap_perf_time_conv tc = { .time_shift = 1, .time_mult = 0 };
	struct auxcap_decode_ctx ctx = { .sz = sizeof(ctx), .cpu = -1, .time_conv = &tc };
	struct auxcap_trace_event ev;
	struct pkts p = { .len = 0 };
	void *dec = NULL;

	(void)state;
	put(&p, 0x71, 12345, 8); /* a record of a timestamp only: no PC */
	assert_int_equal(spe()->decoder_new(&ctx, p.b, p.len, &dec), 0);
	assert_int_equal(spe()->decoder_next(dec, &ev), 1);
	assert_int_equal(ev.kind, AUXCAP_TRACE_SAMPLE);
	assert_int_equal(ev.tsc, 12345);
	assert_int_equal(ev.flags, AUXCAP_TRACE_F_HAS_TSC | AUXCAP_TRACE_F_IP_UNKNOWN);
	assert_int_equal(spe()->decoder_next(dec, &ev), 0);
	spe()->decoder_free(dec);
}

struct lines {
	int n, samples, packets;
	char last[256];
};

static int collect(void *arg, const char *line)
{
	struct lines *l = arg;

	l->n++;
	l->samples += !strncmp(line, "sample ", 7);
	l->packets += !strncmp(line, ".  ", 3);
	snprintf(l->last, sizeof(l->last), "%s", line);
	return 0;
}

static void test_dump(void **state)
{
	struct auxcap_decode_ctx ctx = { .sz = sizeof(ctx), .cpu = -1 };
	struct pkts p = { .len = 0 };
	struct lines l = { 0 };

	(void)state;
	put(&p, 0xb0, NS | 0x401000, 8);
	put(&p, 0x49, 0x01, 1);
	put(&p, 0x71, 5, 8);
	p.b[p.len++] = 0xc0;
	assert_int_equal(spe()->dump(&ctx, p.b, p.len, collect, &l), 1);
	assert_int_equal(l.packets, 4); /* 3 packets and the "Bad packet!" line */
	assert_int_equal(l.samples, 1);
	assert_non_null(strstr(l.last, "1 samples"));
}

static struct auxcap_pmu *fixture_pmu(void)
{
	const char *fx = getenv("AUXCAP_FIXTURES");
	struct auxcap_pmu *pmu = NULL;
	char root[4096];

	assert_non_null(fx);
	snprintf(root, sizeof(root), "%s/sysfs", fx);
	assert_int_equal(auxcap_pmu_new(root, "arm_spe_0", &pmu), 0);
	return pmu;
}

static void test_recording_options(void **state)
{
	struct auxcap_pmu *pmu = fixture_pmu();
	const struct auxcap_pmu_format *ts = auxcap_pmu_format_find(pmu, "ts_enable");
	const struct auxcap_pmu_format *pa = auxcap_pmu_format_find(pmu, "pa_enable");
	char err[512] = "";
	struct auxcap_record_ctx ctx = { .sz = sizeof(ctx), .pmu = pmu, .aux_pages = 16,
					 .errbuf = err, .errlen = sizeof(err) };
	struct auxcap_attr a;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	(void)state;
	assert_non_null(ts);
	assert_non_null(pa);
	memset(&a, 0, sizeof(a));
	a.attr.type = pmu->type;
	/* Per thread: perf's interval (the fixture's caps/min_interval is 1024), timestamps on
	 * (perf sets ts_enable per CPU only; auxcap always). */
	assert_int_equal(spe()->recording_options(&ctx, &a), 0);
	assert_int_equal(a.attr.sample_period, 1024);
	assert_int_equal(auxcap_pmu_format_get(ts, &a), 1);
	assert_true(a.attr.sample_type & PERF_SAMPLE_DATA_SRC);
	assert_true(a.attr.sample_type & PERF_SAMPLE_IP);
	assert_false(a.attr.sample_type & (PERF_SAMPLE_CPU | PERF_SAMPLE_PHYS_ADDR));

	/* Per CPU: timestamps on too, and the CPU in samples. */
	memset(&a, 0, sizeof(a));
	ctx.per_cpu = true;
	assert_int_equal(spe()->recording_options(&ctx, &a), 0);
	assert_int_equal(auxcap_pmu_format_get(ts, &a), 1);
	assert_true(a.attr.sample_type & PERF_SAMPLE_CPU);
	/* ... unless the user said ts_enable=0; pa_enable asks for physical addresses. */
	memset(&a, 0, sizeof(a));
	ctx.user_set[ts->word] = ts->mask;
	assert_int_equal(auxcap_pmu_format_put(pa, 1, &a), 0);
	a.attr.sample_period = 5000;
	assert_int_equal(spe()->recording_options(&ctx, &a), 0);
	assert_int_equal(auxcap_pmu_format_get(ts, &a), 0);
	assert_int_equal(a.attr.sample_period, 5000);
	assert_true(a.attr.sample_type & PERF_SAMPLE_PHYS_ADDR);

	/* Refusals: frequency mode, exclude_idle, odd pages in snapshot mode, small buffers. */
	a.attr.freq = 1;
	assert_int_equal(spe()->recording_options(&ctx, &a), -EINVAL);
	assert_non_null(strstr(err, "period=N"));
	a.attr.freq = 0;
	a.attr.exclude_idle = 1;
	assert_int_equal(spe()->recording_options(&ctx, &a), -EINVAL);
	assert_non_null(strstr(err, "exclude_idle"));
	a.attr.exclude_idle = 0;
	ctx.snapshot = true;
	ctx.aux_pages = 1;
	assert_int_equal(spe()->recording_options(&ctx, &a), -EINVAL);
	if (page < 8192)
		assert_non_null(strstr(err, "at least 8 KiB"));
	ctx.aux_pages = 16;
	ctx.snapshot_size = 32 * page;
	assert_int_equal(spe()->recording_options(&ctx, &a), -EINVAL);
	assert_non_null(strstr(err, "larger than the AUX buffer"));
	ctx.snapshot_size = 8 * page;
	assert_int_equal(spe()->recording_options(&ctx, &a), 0);

	/* Without a PMU description: perf's fallback interval. */
	memset(&a, 0, sizeof(a));
	ctx.pmu = NULL;
	assert_int_equal(spe()->recording_options(&ctx, &a), 0);
	assert_int_equal(a.attr.sample_period, 4096);
	auxcap_pmu_free(pmu);
}

static void test_info(void **state)
{
	struct auxcap_record_ctx ctx = { .sz = sizeof(ctx) };
	struct auxcap_attr a;
	uint64_t w[2];

	(void)state;
	memset(&a, 0, sizeof(a));
	a.attr.type = 8;
	assert_int_equal(spe()->auxtrace_type, 4);
	assert_int_equal(spe()->info_size(&ctx, &a), 2);
	assert_int_equal(spe()->info_fill(&ctx, &a, w, 2), 0);
	assert_int_equal(w[0], 8);
	assert_int_equal(w[1], 0);
	ctx.per_cpu = true;
	assert_int_equal(spe()->info_fill(&ctx, &a, w, 2), 0);
	assert_int_equal(w[1], 1);
	assert_int_equal(spe()->info_fill(&ctx, &a, w, 3), -EINVAL);
	assert_int_equal(spe()->alignment, 0);
}

static void test_find_snapshot(void **state)
{
	struct auxcap_aux_ring ring = { .size = 16384 };
	uint64_t st = 0, start, end;

	(void)state;
	ring.base = calloc(1, ring.size);
	assert_non_null(ring.base);
	/* Not wrapped (the last 512 bytes are zero): what was written since last time. */
	memset(ring.base, 0xaa, 5000);
	assert_int_equal(spe()->find_snapshot(&ring, 5000, 0, &st, &start, &end), 0);
	assert_int_equal(start, 0);
	assert_int_equal(end, 5000);
	memset(ring.base, 0xaa, 9000);
	assert_int_equal(spe()->find_snapshot(&ring, 9000, 5000, &st, &start, &end), 0);
	assert_int_equal(start, 5000);
	assert_int_equal(end, 9000);
	assert_int_equal(st, 0);
	/* Data in the last 512 bytes: wrapped.  Head 3000 lies in the first half: the snapshot
	 * starts at the second half (whole records) and ends at head, one lap later. */
	ring.base[ring.size - 8] = 1;
	assert_int_equal(spe()->find_snapshot(&ring, 3000, 9000, &st, &start, &end), 0);
	assert_int_equal(st, 1);
	assert_int_equal(start, 8192);
	assert_int_equal(end, 3000 + 16384);
	/* Latched: later snapshots are wrapped even if the tail reads zero. */
	ring.base[ring.size - 8] = 0;
	assert_int_equal(spe()->find_snapshot(&ring, 10000, 0, &st, &start, &end), 0);
	assert_int_equal(start, 16384);
	assert_int_equal(end, 10000 + 16384);
	/* Head on a half boundary: the whole buffer. */
	assert_int_equal(spe()->find_snapshot(&ring, 8192, 0, &st, &start, &end), 0);
	assert_int_equal(end - start, 16384);
	assert_int_equal(end, 8192 + 16384);
	/* A head at the buffer size (the driver's "full" offset) means wrapped. */
	st = 0;
	assert_int_equal(spe()->find_snapshot(&ring, 16384, 0, &st, &start, &end), 0);
	assert_int_equal(st, 1);
	assert_int_equal(start, 0);
	assert_int_equal(end, 16384);
	/* Not detected as wrapped, but head behind the last end: the bytes in between. */
	st = 0;
	assert_int_equal(spe()->find_snapshot(&ring, 100, 12000, &st, &start, &end), 0);
	assert_int_equal(start, 12000);
	assert_int_equal(end, 100 + 16384);
	free(ring.base);
}

/* Decode @len bytes at @buf as pieces cut at @cuts (increasing, inside the buffer), each with
 * the pieces before it as context, like the decode stage; events into @out (at most @max). */
static size_t decode_pieces(const uint8_t *buf, size_t len, const size_t *cuts, size_t ncuts,
			    struct auxcap_trace_event *out, size_t max)
{
	struct auxcap_trace_piece prev[16];
	size_t n = 0, start = 0;

	assert_true(ncuts < 16);
	for (size_t i = 0; i <= ncuts; i++) {
		size_t end = i < ncuts ? cuts[i] : len;
		struct auxcap_decode_ctx ctx = { .sz = sizeof(ctx), .cpu = 0 };
		struct auxcap_trace_event ev;
		void *dec = NULL;

		ctx.stream_offset = start;
		ctx.prev = i ? prev : NULL;
		ctx.nr_prev = i;
		ctx.more = i < ncuts;
		assert_int_equal(spe()->decoder_new(&ctx, buf + start, end - start, &dec), 0);
		while (spe()->decoder_next(dec, &ev) == 1) {
			assert_true(n < max);
			out[n++] = ev;
		}
		spe()->decoder_free(dec);
		prev[i] = (struct auxcap_trace_piece){ buf + start, end - start };
		start = end;
	}
	return n;
}

/* A stream cut anywhere, even inside a packet: every record comes out once, at its stream
 * position, and only a record the stream really ends inside is a gap. */
static void test_pieces(void **state)
{
	static uint8_t big[200 * 1024];
	static struct auxcap_trace_event whole[16384], cut[16384];
	struct pkts p;
	size_t len = 0, nw, nc;
	uint64_t id = 0;

	(void)state;
	/* Records of 19 and 31 bytes (a PC and a timestamp; some with a data address). */
	while (len + 64 < sizeof(big)) {
		p.len = 0;
		put(&p, 0xb0, NS | (0x400000 + id), 8);
		if (id % 3 == 0)
			put(&p, 0xb2, 0x10000 + id, 8);
		if (id % 5 == 0)
			put(&p, 0x52, 0x2, 2);
		put(&p, 0x71, 1000 + id, 8);
		memcpy(big + len, p.b, p.len);
		len += p.len;
		id++;
	}
	/* The last record is cut short: the stream ends inside it. */
	len -= 5;
	{
		struct auxcap_decode_ctx ctx = { .sz = sizeof(ctx), .cpu = 0 };
		void *dec = NULL;
		struct auxcap_trace_event ev;

		nw = 0;
		assert_int_equal(spe()->decoder_new(&ctx, big, len, &dec), 0);
		while (spe()->decoder_next(dec, &ev) == 1) {
			assert_true(nw < 16384);
			whole[nw++] = ev;
		}
		spe()->decoder_free(dec);
	}
	assert_int_equal(nw, id); /* id - 1 samples and the gap */
	assert_int_equal(whole[nw - 1].kind, AUXCAP_TRACE_GAP);
	/* Cuts inside packets and records; the last piece starts past 64 KiB of stream. */
	{
		const size_t cuts[] = { 1, 100, 4097, 4098, 70000, 150001, len - 3 };

		nc = decode_pieces(big, len, cuts, sizeof(cuts) / sizeof(cuts[0]), cut, 16384);
	}
	for (size_t i = 0; i < nc; i++)
		if (i >= nw || cut[i].offset != whole[i].offset || cut[i].kind != whole[i].kind) {
			print_message("first difference at %zu: cut kind %d off %lu what %s; whole kind %d off %lu\n", i,
				      cut[i].kind, (unsigned long)cut[i].offset, cut[i].what ? cut[i].what : "", whole[i].kind, (unsigned long)whole[i].offset);
			break;
		}
	assert_int_equal(nc, nw);
	for (size_t i = 0; i < nw; i++) {
		assert_int_equal(cut[i].kind, whole[i].kind);
		assert_int_equal(cut[i].offset, whole[i].offset);
		assert_int_equal(cut[i].ip, whole[i].ip);
		assert_int_equal(cut[i].tsc, whole[i].tsc);
		assert_int_equal(cut[i].addr, whole[i].addr);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),		  cmocka_unit_test(test_no_time),
		cmocka_unit_test(test_dump),		  cmocka_unit_test(test_recording_options),
		cmocka_unit_test(test_info),		  cmocka_unit_test(test_find_snapshot),
		cmocka_unit_test(test_pieces),		  cmocka_unit_test(test_mem),
		cmocka_unit_test(test_data_source),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
