/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intel PT record side (aux/intel_pt/ipt_record.c, ipt_filter.c) against the fixture sysfs
 * tree (fixtures/sysfs/intel_pt: a Skylake-class CPU), the emulated PMU's description, and
 * real ELF files:
 *   - perf's default config (tsc, mtc, mtc_period=3, psb_period=3, pt, branch), bit positions
 *     from the fixture's format files; terms the user wrote are kept;
 *   - caps checks: a knob whose caps/ file says 0 is refused naming the knob and the cap;
 *     values outside caps/mtc_periods, psb_periods, cycle_thresholds are refused with the
 *     valid list;
 *   - AUXTRACE_INFO in perf's intel_pt layout (the 160-byte record perf 6.1 writes);
 *   - --filter: symbols of an ELF file become file offsets, checked against readelf's view
 *     of the same file; errors for unknown and ambiguous symbols, too many filters.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cmocka.h>

#include "auxcap/emu.h"
#include "auxcap/pmu.h"
#include "auxcap/session.h"
#include "aux_ring.h"
#include "ipt_record.h"
#include "util.h"

static char errbuf[1024];

static struct auxcap_pmu *fixture_pmu(void)
{
	const char *root = getenv("AUXCAP_FIXTURES");
	char path[PATH_MAX];
	struct auxcap_pmu *pmu = NULL;

	assert_non_null(root);
	snprintf(path, sizeof(path), "%s/sysfs", root);
	assert_int_equal(auxcap_pmu_new(path, "intel_pt", &pmu), 0);
	return pmu;
}

/* Config bits of "term=value" from the PMU's own format file. */
static uint64_t bits(const struct auxcap_pmu *pmu, const char *term, uint64_t value)
{
	struct auxcap_attr a;

	memset(&a, 0, sizeof(a));
	assert_int_equal(auxcap_pmu_set_term(pmu, term, value, &a), 0);
	return a.attr.config;
}

static void ctx_init(struct auxcap_record_ctx *ctx, const struct auxcap_pmu *pmu)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->sz = sizeof(*ctx);
	ctx->pmu = pmu;
	ctx->aux_pages = 1024;
	ctx->errbuf = errbuf;
	ctx->errlen = sizeof(errbuf);
	errbuf[0] = '\0';
}

/* recording_options on an attr whose config the "user" set to @config over @user_mask. */
static int options(const struct auxcap_pmu *pmu, uint64_t config, uint64_t user_mask,
		   struct auxcap_attr *a)
{
	struct auxcap_record_ctx ctx;

	ctx_init(&ctx, pmu);
	ctx.user_set[AUXCAP_ATTR_CONFIG] = user_mask;
	memset(a, 0, sizeof(*a));
	a->attr.type = pmu->type;
	a->attr.config = config;
	a->attr.sample_period = 4000;
	a->attr.freq = 1;
	return auxcap_ipt_recording_options(&ctx, a);
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("'%s' does not contain '%s'", hay, needle);
}

static void test_pick_bit_is_perfs(void **state)
{
	(void)state;
	/* caps/mtc_periods 0x249 = {0,3,6,9}: 3; psb_periods 0x3f = {0..5}: 3 */
	assert_int_equal(auxcap_ipt_pick_bit(0x249, 3), 3);
	assert_int_equal(auxcap_ipt_pick_bit(0x3f, 3), 3);
	/* {0,2,4}: the largest allowed value below 3 */
	assert_int_equal(auxcap_ipt_pick_bit(0x15, 3), 2);
	/* only values above: the smallest */
	assert_int_equal(auxcap_ipt_pick_bit(0x30, 3), 4);
	assert_int_equal(auxcap_ipt_pick_bit(0, 3), -1);
}

static void test_default_config_is_perfs(void **state)
{
	struct auxcap_pmu *pmu = fixture_pmu();
	struct auxcap_attr a;
	uint64_t want;

	(void)state;
	assert_int_equal(options(pmu, 0, 0, &a), 0);
	/* perf's intel_pt// on this CPU: tsc,mtc,mtc_period=3,psb_period=3,pt,branch */
	want = bits(pmu, "tsc", 1) | bits(pmu, "mtc", 1) | bits(pmu, "mtc_period", 3) |
	       bits(pmu, "psb_period", 3) | bits(pmu, "pt", 1) | bits(pmu, "branch", 1);
	assert_int_equal(a.attr.config, want);
	/* PT is never sampled */
	assert_int_equal(a.attr.sample_period, 1);
	assert_int_equal(a.attr.freq, 0);

	/* user terms win: tsc=0, mtc_period=6, cyc on; noretcomp stays off by default */
	assert_int_equal(options(pmu, bits(pmu, "mtc_period", 6) | bits(pmu, "cyc", 1),
				 bits(pmu, "tsc", 1) | bits(pmu, "mtc_period", 15) |
					 bits(pmu, "cyc", 1),
				 &a),
			 0);
	want = bits(pmu, "mtc", 1) | bits(pmu, "mtc_period", 6) | bits(pmu, "psb_period", 3) |
	       bits(pmu, "pt", 1) | bits(pmu, "branch", 1) | bits(pmu, "cyc", 1);
	assert_int_equal(a.attr.config, want);

	/* config= (the whole word) takes no defaults; pt is forced back on */
	assert_int_equal(options(pmu, bits(pmu, "tsc", 1), ~UINT64_C(0), &a), 0);
	assert_int_equal(a.attr.config, bits(pmu, "tsc", 1) | bits(pmu, "pt", 1));
	auxcap_pmu_free(pmu);
}

static void set_cap(struct auxcap_pmu *pmu, const char *name, const char *value)
{
	for (size_t i = 0; i < pmu->nr_caps; i++) {
		if (strcmp(pmu->caps[i].name, name))
			continue;
		free(pmu->caps[i].value);
		pmu->caps[i].value = strdup(value);
		assert_non_null(pmu->caps[i].value);
		return;
	}
	fail_msg("no cap %s", name);
}

static void test_caps_checks_name_knob_and_cap(void **state)
{
	static const struct {
		const char *knob, *cap;
	} cases[] = {
		{ "ptw", "ptwrite" },
		{ "fup_on_ptw", "ptwrite" },
		{ "pwr_evt", "power_event_trace" },
		{ "event", "event_trace" },
		{ "notnt", "tnt_disable" },
	};
	struct auxcap_pmu *pmu = fixture_pmu();
	struct auxcap_attr a;
	uint64_t b;

	(void)state;
	/* the fixture CPU lacks each of these (its caps/ files say 0) */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		b = bits(pmu, cases[i].knob, 1);
		assert_int_equal(options(pmu, b, b, &a), -EOPNOTSUPP);
		assert_contains(errbuf, cases[i].knob);
		assert_contains(errbuf, cases[i].cap);
		assert_null(strchr(errbuf, '\n'));
	}
	/* with PTWRITE, ptw passes and fup_on_ptw alone is still refused: it needs ptw */
	set_cap(pmu, "ptwrite", "1");
	b = bits(pmu, "ptw", 1);
	assert_int_equal(options(pmu, b, b, &a), 0);
	b = bits(pmu, "fup_on_ptw", 1);
	assert_int_equal(options(pmu, b, b, &a), -EINVAL);
	assert_contains(errbuf, "ptw");
	b |= bits(pmu, "ptw", 1);
	assert_int_equal(options(pmu, b, b, &a), 0);

	/* without caps/psb_cyc: cyc refused, and no psb_period default is applied */
	set_cap(pmu, "psb_cyc", "0");
	b = bits(pmu, "cyc", 1);
	assert_int_equal(options(pmu, b, b, &a), -EOPNOTSUPP);
	assert_contains(errbuf, "caps/psb_cyc");
	assert_int_equal(options(pmu, 0, 0, &a), 0);
	assert_int_equal(a.attr.config & bits(pmu, "psb_period", 15), 0);
	/* without caps/mtc: no mtc default, mtc refused */
	set_cap(pmu, "mtc", "0");
	assert_int_equal(options(pmu, 0, 0, &a), 0);
	assert_int_equal(a.attr.config, bits(pmu, "tsc", 1) | bits(pmu, "pt", 1) |
						bits(pmu, "branch", 1));
	b = bits(pmu, "mtc", 1);
	assert_int_equal(options(pmu, b, b, &a), -EOPNOTSUPP);
	assert_contains(errbuf, "caps/mtc");
	auxcap_pmu_free(pmu);
}

static void test_values_checked_against_caps(void **state)
{
	struct auxcap_pmu *pmu = fixture_pmu();
	struct auxcap_attr a;
	uint64_t m;

	(void)state;
	/* caps/mtc_periods 249: 0,3,6,9 */
	m = bits(pmu, "mtc_period", 15);
	assert_int_equal(options(pmu, bits(pmu, "mtc_period", 2), m, &a), -EINVAL);
	assert_contains(errbuf, "mtc_period=2");
	assert_contains(errbuf, "0,3,6,9");
	assert_int_equal(options(pmu, bits(pmu, "mtc_period", 9), m, &a), 0);
	/* caps/psb_periods 3f: 0-5 */
	m = bits(pmu, "psb_period", 15);
	assert_int_equal(options(pmu, bits(pmu, "psb_period", 6), m, &a), -EINVAL);
	assert_contains(errbuf, "0-5");
	assert_int_equal(options(pmu, bits(pmu, "psb_period", 5), m, &a), 0);
	/* caps/cycle_thresholds 1fff: 0-12 */
	m = bits(pmu, "cyc_thresh", 15);
	assert_int_equal(options(pmu, bits(pmu, "cyc_thresh", 13), m, &a), -EINVAL);
	assert_contains(errbuf, "0-12");
	assert_int_equal(options(pmu, bits(pmu, "cyc_thresh", 12), m, &a), 0);
	auxcap_pmu_free(pmu);
}

static void test_aux_size_rules(void **state)
{
	struct auxcap_pmu *pmu = fixture_pmu();
	struct auxcap_record_ctx ctx;
	struct auxcap_attr a;

	(void)state;
	ctx_init(&ctx, pmu);
	memset(&a, 0, sizeof(a));
	ctx.aux_pages = 1; /* 4 KiB: too small for full trace */
	assert_int_equal(auxcap_ipt_recording_options(&ctx, &a), -EINVAL);
	assert_contains(errbuf, "8 KiB");
	ctx.snapshot = true; /* ... enough for snapshots */
	assert_int_equal(auxcap_ipt_recording_options(&ctx, &a), 0);
	ctx.snapshot_size = 8192;
	assert_int_equal(auxcap_ipt_recording_options(&ctx, &a), -EINVAL);
	assert_contains(errbuf, "snapshot size");
	auxcap_pmu_free(pmu);
}

/* The emulated intel_pt: what its caps/ say its encoder does (no MTC, CYC, PTWRITE...). */
static void test_emulated_pmu(void **state)
{
	struct auxcap_emu *emu = NULL;
	struct auxcap_emu_pmu_info info;
	struct auxcap_pmu pmu;
	struct auxcap_pmu_format formats[32];
	struct auxcap_pmu_cap caps[32];
	struct auxcap_attr a;
	uint64_t b;

	(void)state;
	assert_int_equal(auxcap_emu_new(NULL, &emu), 0);
	assert_int_equal(auxcap_emu_pmu_find(emu, "intel_pt", &info), 0);
	memset(&pmu, 0, sizeof(pmu));
	pmu.name = (char *)info.name;
	pmu.type = info.type;
	assert_true(info.nr_formats <= 32 && info.nr_sysfs_caps <= 32);
	for (size_t i = 0; i < info.nr_formats; i++) {
		assert_int_equal(auxcap_pmu_format_parse(info.formats[i].spec, &formats[i]), 0);
		formats[i].name = (char *)info.formats[i].name;
	}
	for (size_t i = 0; i < info.nr_sysfs_caps; i++) {
		caps[i].name = (char *)info.sysfs_caps[i].name;
		caps[i].value = (char *)info.sysfs_caps[i].value;
	}
	pmu.formats = formats;
	pmu.nr_formats = info.nr_formats;
	pmu.caps = caps;
	pmu.nr_caps = info.nr_sysfs_caps;

	assert_int_equal(options(&pmu, 0, 0, &a), 0);
	assert_int_equal(a.attr.config, bits(&pmu, "tsc", 1) | bits(&pmu, "pt", 1) |
						bits(&pmu, "branch", 1));
	b = bits(&pmu, "cyc", 1);
	assert_int_equal(options(&pmu, b, b, &a), -EOPNOTSUPP);
	assert_contains(errbuf, "caps/psb_cyc");
	auxcap_emu_free(emu);
}

static void test_info_layout_is_perfs(void **state)
{
	struct auxcap_pmu *pmu = fixture_pmu();
	struct auxcap_perf_time_conv tc = {
		.time_shift = 31, .time_mult = 800000000, .time_zero = 42, .cap_user_time_zero = true
	};
	struct auxcap_record_ctx ctx;
	struct auxcap_attr a;
	uint64_t w[32];
	uint32_t n = 0, d = 0;
	size_t nr;

	(void)state;
	assert_int_equal(options(pmu, 0, 0, &a), 0);
	ctx_init(&ctx, pmu);
	ctx.time_conv = &tc;
	ctx.have_sched_switch = true;
	ctx.per_cpu = true;
	nr = auxcap_ipt_info_size(&ctx, &a);
	/* perf 6.1 writes 17 fixed words + Cap Event Trace: a 16 + 144 = 160-byte record */
	assert_int_equal(nr, 18);
	assert_int_equal(16 + nr * 8, 160);
	assert_int_equal(auxcap_ipt_info_fill(&ctx, &a, w, nr), 0);
	assert_int_equal(w[0], 6);				/* PMU type */
	assert_int_equal(w[1], 31);				/* time shift */
	assert_int_equal(w[2], 800000000);			/* time mult */
	assert_int_equal(w[3], 42);				/* time zero */
	assert_int_equal(w[4], 1);				/* cap_user_time_zero */
	assert_int_equal(w[5], UINT64_C(1) << 10);		/* tsc (config:10) */
	assert_int_equal(w[6], UINT64_C(1) << 11);		/* noretcomp (config:11) */
	assert_int_equal(w[7], 2);				/* SWITCH records, per task */
	assert_int_equal(w[8], 0);				/* not snapshot */
	assert_int_equal(w[9], 1);				/* per-CPU mmaps */
	assert_int_equal(w[10], UINT64_C(1) << 9);		/* mtc (config:9) */
	assert_int_equal(w[11], UINT64_C(0xf) << 14);		/* mtc_period (config:14-17) */
#if defined(__x86_64__) || defined(__i386__)
	{
		unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;

		if (__get_cpuid(0x15, &eax, &ebx, &ecx, &edx)) {
			n = ebx;
			d = eax;
		}
	}
#endif
	assert_int_equal(w[12], n);				/* CPUID.15H EBX */
	assert_int_equal(w[13], d);				/* CPUID.15H EAX */
	assert_int_equal(w[14], UINT64_C(1) << 1);		/* cyc (config:1) */
	assert_int_equal(w[15], 28);				/* max_nonturbo_ratio */
	assert_int_equal(w[16], 0);				/* no filter */
	assert_int_equal(w[17], 0);				/* caps/event_trace */

	/* CPU-wide switch records, snapshot mode, no time conversion */
	ctx.cpu_wide = true;
	ctx.snapshot = true;
	ctx.time_conv = NULL;
	assert_int_equal(auxcap_ipt_info_fill(&ctx, &a, w, nr), 0);
	assert_int_equal(w[7], 3);
	/* SNAPSHOT_MODE 0 even so: the session writes snapshots without their overlap, and
	 * perf would trim it again (test_ipt_snapshot_seams.c) */
	assert_int_equal(w[8], 0);
	assert_int_equal(w[1] | w[2] | w[3] | w[4], 0);
	ctx.have_sched_switch = false;
	assert_int_equal(auxcap_ipt_info_fill(&ctx, &a, w, nr), 0);
	assert_int_equal(w[7], 0);

	/* a filter string: its length, the NUL-terminated text zero-padded to 8, then the cap */
	ctx.filter = "filter 0x1178/0x4b@/x/y";
	nr = auxcap_ipt_info_size(&ctx, &a);
	assert_int_equal(nr, 17 + 3 + 1);
	memset(w, 0xff, sizeof(w));
	assert_int_equal(auxcap_ipt_info_fill(&ctx, &a, w, nr), 0);
	assert_int_equal(w[16], strlen(ctx.filter));
	assert_string_equal((const char *)&w[17], ctx.filter);
	assert_int_equal(((const char *)&w[17])[23], 0);
	assert_int_equal(w[20], 0);
	/* a wrong word count is refused */
	assert_int_equal(auxcap_ipt_info_fill(&ctx, &a, w, nr - 1), -EINVAL);
	auxcap_pmu_free(pmu);
}

/* ---- snapshot wrap detection --------------------------------------------------------------- */

extern const struct auxcap_backend_ops auxcap_backend_intel_pt;

static void find(struct auxcap_aux_ring *ring, uint64_t head, uint64_t old, uint64_t *state,
		 uint64_t want_start, uint64_t want_end)
{
	uint64_t start = 0, end = 0;

	assert_int_equal(auxcap_backend_intel_pt.find_snapshot(ring, head, old, state, &start, &end),
			 0);
	assert_int_equal(start, want_start);
	assert_int_equal(end, want_end);
}

/*
 * The driver reports an in-buffer head in overwrite mode; AUX pages start zeroed, so perf
 * decides the buffer has wrapped once its last 512 u64 words hold anything (spec 2.5).
 */
static void test_snapshot_wrap_detection(void **state)
{
	const size_t size = 65536;
	struct auxcap_aux_ring ring;
	uint64_t st = 0;

	(void)state;
	memset(&ring, 0, sizeof(ring));
	ring.base = calloc(1, size);
	assert_non_null(ring.base);
	ring.size = size;
	ring.overwrite = true;

	/* written up to 1000: only [0, 1000) is trace */
	memset(ring.base, 0x42, 1000);
	find(&ring, 1000, 0, &st, 0, 1000);
	/* the next snapshot takes what came after the previous one */
	memset(ring.base + 1000, 0x43, 40000);
	find(&ring, 41000, 1000, &st, 1000, 41000);
	/* nothing new since: an empty snapshot (the zero tail says it has not wrapped) */
	find(&ring, 41000, 41000, &st, 41000, 41000);
	/* the hardware ran past the end and on to 300: the whole buffer ending at 300 */
	memset(ring.base + 41000, 0x44, size - 41000);
	memset(ring.base, 0x45, 300);
	find(&ring, 300, 41000, &st, 300, 300 + size);
	assert_int_not_equal(st, 0);
	/* remembered: a later tail of PAD bytes does not make it forget */
	memset(ring.base + size - 4096, 0, 4096);
	find(&ring, 5000, 300, &st, 5000, 5000 + size);

	/* a fresh buffer whose head moved below the previous snapshot's end, with a zero tail:
	 * [old, head + size) (wrapped since, within the untouched last 4 KiB) */
	st = 0;
	memset(ring.base, 0, size);
	find(&ring, 100, 60000, &st, 60000, 100 + size);
	free(ring.base);
}

/* ---- --filter ---------------------------------------------------------------------------- */

/* From readelf's own view of @path: the file offset and size of function @sym. */
static void readelf_sym(const char *path, const char *sym, uint64_t *ret_off, uint64_t *ret_size)
{
	char cmd[PATH_MAX + 64], line[512];
	uint64_t vaddr = 0, size = 0;
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -sW '%s'", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char type[32], name[256];
		unsigned long long v, s;

		if (sscanf(line, "%*s %llx %llu %31s %*s %*s %*s %255s", &v, &s, type, name) == 4 &&
		    !strcmp(type, "FUNC") && !strcmp(name, sym)) {
			vaddr = v;
			size = s;
			found = true;
		}
	}
	pclose(f);
	assert_true(found);
	snprintf(cmd, sizeof(cmd), "readelf -lW '%s'", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	found = false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long off, va, pa, fsz;

		if (sscanf(line, " LOAD 0x%llx 0x%llx 0x%llx 0x%llx", &off, &va, &pa, &fsz) == 4 &&
		    vaddr >= va && vaddr < va + fsz) {
			*ret_off = vaddr - va + off;
			found = true;
		}
	}
	pclose(f);
	assert_true(found);
	*ret_size = size;
}

static const char *prog(void)
{
	const char *p = getenv("AUXCAP_TRACER_PROG");

	assert_non_null(p);
	return p;
}

static void test_filter_symbols_become_file_offsets(void **state)
{
	char out[8192], want[3 * PATH_MAX + 256], real[PATH_MAX];
	uint64_t off, size, off2, size2;

	(void)state;
	assert_non_null(realpath(prog(), real));
	/* a non-PIE program (linked at 0x400000): offsets differ from addresses */
	readelf_sym(prog(), "classify", &off, &size);
	assert_int_equal(auxcap_ipt_filter_resolve("filter classify @ $P", 4, out, sizeof(out),
						   errbuf, sizeof(errbuf)),
			 -EINVAL); /* "$P" is no file */
	snprintf(want, sizeof(want), "filter classify @%s", prog());
	assert_int_equal(auxcap_ipt_filter_resolve(want, 4, out, sizeof(out), errbuf,
						   sizeof(errbuf)),
			 0);
	snprintf(want, sizeof(want), "filter 0x%" PRIx64 "/0x%" PRIx64 "@%s", off, size, real);
	assert_string_equal(out, want);
	assert_true(off < 0x400000);

	/* start/stop at symbols, a range to an end symbol, numbers kept, two filters */
	readelf_sym(prog(), "main", &off2, &size2);
	snprintf(want, sizeof(want), "start main @%s, tracestop op_add/op_xor@%s,filter 0x10/0x20@%s",
		 prog(), prog(), prog());
	assert_int_equal(auxcap_ipt_filter_resolve(want, 4, out, sizeof(out), errbuf,
						   sizeof(errbuf)),
			 0);
	{
		uint64_t a_off, a_size, x_off, x_size;

		readelf_sym(prog(), "op_add", &a_off, &a_size);
		readelf_sym(prog(), "op_xor", &x_off, &x_size);
		snprintf(want, sizeof(want),
			 "start 0x%" PRIx64 "@%s,stop 0x%" PRIx64 "/0x%" PRIx64 "@%s,filter "
			 "0x10/0x20@%s",
			 off2, real, a_off, x_off + x_size - a_off, real, real);
	}
	assert_string_equal(out, want);

	/* "*": the whole file's code, from its first function to the end of its last */
	snprintf(want, sizeof(want), "filter * @%s", prog());
	assert_int_equal(auxcap_ipt_filter_resolve(want, 4, out, sizeof(out), errbuf,
						   sizeof(errbuf)),
			 0);
	assert_contains(out, "filter 0x");
}

static void test_filter_errors(void **state)
{
	char in[8192], out[8192];

	(void)state;
	snprintf(in, sizeof(in), "filter no_such_function @%s", prog());
	assert_int_equal(auxcap_ipt_filter_resolve(in, 4, out, sizeof(out), errbuf, sizeof(errbuf)),
			 -EINVAL);
	assert_contains(errbuf, "no_such_function");
	assert_int_equal(out[0], 0);
	snprintf(in, sizeof(in), "filter main @%s,filter main @%s,filter main @%s", prog(),
		 prog(), prog());
	assert_int_equal(auxcap_ipt_filter_resolve(in, 2, out, sizeof(out), errbuf, sizeof(errbuf)),
			 -E2BIG);
	assert_contains(errbuf, "nr_addr_filters");
	assert_int_equal(auxcap_ipt_filter_resolve("frobnicate main", 2, out, sizeof(out), errbuf,
						   sizeof(errbuf)),
			 -EINVAL);
	assert_contains(errbuf, "frobnicate");
	snprintf(in, sizeof(in), "filter op_xor/op_add @%s", prog());
	assert_int_equal(auxcap_ipt_filter_resolve(in, 2, out, sizeof(out), errbuf, sizeof(errbuf)),
			 -EINVAL);
	assert_contains(errbuf, "before");
	assert_int_equal(auxcap_ipt_filter_resolve("filter main @/nonexistent/x", 2, out,
						   sizeof(out), errbuf, sizeof(errbuf)),
			 -EINVAL);
	assert_contains(errbuf, "/nonexistent/x");
	assert_int_equal(auxcap_ipt_filter_resolve("", 2, out, sizeof(out), errbuf, sizeof(errbuf)),
			 -EINVAL);
	snprintf(in, sizeof(in), "filter main @%s", prog());
	assert_int_equal(auxcap_ipt_filter_resolve(in, 2, out, 8, errbuf, sizeof(errbuf)),
			 -ENOSPC);
}

/* Two static functions called 'helper' (filter_prog_a.c, filter_prog_b.c). */
static void test_filter_ambiguous_symbol(void **state)
{
	const char *p = getenv("AUXCAP_FILTER_PROG");
	char in[8192], out[8192], real[PATH_MAX];
	char o1[64], o2[64];

	(void)state;
	assert_non_null(p);
	assert_non_null(realpath(p, real));
	snprintf(in, sizeof(in), "filter helper @%s", p);
	assert_int_equal(auxcap_ipt_filter_resolve(in, 2, out, sizeof(out), errbuf, sizeof(errbuf)),
			 -EINVAL);
	assert_contains(errbuf, "2 times");
	assert_contains(errbuf, "#");
	snprintf(in, sizeof(in), "filter helper #1 @%s", p);
	assert_int_equal(auxcap_ipt_filter_resolve(in, 2, out, sizeof(out), errbuf, sizeof(errbuf)),
			 0);
	snprintf(o1, sizeof(o1), "%.30s", out);
	snprintf(in, sizeof(in), "filter helper #2 @%s", p);
	assert_int_equal(auxcap_ipt_filter_resolve(in, 2, out, sizeof(out), errbuf, sizeof(errbuf)),
			 0);
	snprintf(o2, sizeof(o2), "%.30s", out);
	assert_string_not_equal(o1, o2);
	snprintf(in, sizeof(in), "filter helper #3 @%s", p);
	assert_int_equal(auxcap_ipt_filter_resolve(in, 2, out, sizeof(out), errbuf, sizeof(errbuf)),
			 -EINVAL);
	/* neither is global */
	snprintf(in, sizeof(in), "filter helper #g @%s", p);
	assert_int_equal(auxcap_ipt_filter_resolve(in, 2, out, sizeof(out), errbuf, sizeof(errbuf)),
			 -EINVAL);
	assert_contains(errbuf, "global");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick_bit_is_perfs),
		cmocka_unit_test(test_default_config_is_perfs),
		cmocka_unit_test(test_caps_checks_name_knob_and_cap),
		cmocka_unit_test(test_values_checked_against_caps),
		cmocka_unit_test(test_aux_size_rules),
		cmocka_unit_test(test_emulated_pmu),
		cmocka_unit_test(test_info_layout_is_perfs),
		cmocka_unit_test(test_snapshot_wrap_detection),
		cmocka_unit_test(test_filter_symbols_become_file_offsets),
		cmocka_unit_test(test_filter_errors),
		cmocka_unit_test(test_filter_ambiguous_symbol),
	};

	if (!getenv("AUXCAP_FIXTURES"))
		test_skip("AUXCAP_FIXTURES is not set; run through 'meson test'");
	return cmocka_run_group_tests_name("aux/intel_pt/ipt_record", tests, NULL, NULL);
}
