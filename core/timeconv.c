/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Time conversion (see auxcap/timeconv.h): reading the control page, and perf's formula.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "auxcap/timeconv.h"

/* The kernel's seqcount writer never holds the page for long; perf gives up after 10000. */
#define PAGE_READ_TRIES 10000

int auxcap_time_conv_read_page(const struct perf_event_mmap_page *pc,
			       struct auxcap_perf_time_conv *ret)
{
	struct auxcap_perf_time_conv tc;

	if (!pc || !ret)
		return -EINVAL;
	for (int i = 0; i < PAGE_READ_TRIES; i++) {
		uint32_t seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		uint64_t caps;

		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		memset(&tc, 0, sizeof(tc));
		caps = __atomic_load_n(&pc->capabilities, __ATOMIC_RELAXED);
		tc.time_shift = __atomic_load_n(&pc->time_shift, __ATOMIC_RELAXED);
		tc.time_mult = __atomic_load_n(&pc->time_mult, __ATOMIC_RELAXED);
		tc.time_zero = __atomic_load_n(&pc->time_zero, __ATOMIC_RELAXED);
		tc.time_cycles = __atomic_load_n(&pc->time_cycles, __ATOMIC_RELAXED);
		tc.time_mask = __atomic_load_n(&pc->time_mask, __ATOMIC_RELAXED);
		/* capabilities: bit 4 cap_user_time_zero, bit 5 cap_user_time_short (spec 1.1) */
		tc.cap_user_time_zero = (caps >> 4) & 1;
		tc.cap_user_time_short = (caps >> 5) & 1;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) == seq) {
			*ret = tc;
			return 0;
		}
	}
	return -EAGAIN;
}

uint64_t auxcap_time_conv_to_ns(const struct auxcap_perf_time_conv *tc, uint64_t cyc)
{
	uint64_t shift = tc->time_shift, mult = tc->time_mult;
	uint64_t quot, rem;

	if (tc->cap_user_time_short)
		cyc = tc->time_cycles + ((cyc - tc->time_cycles) & tc->time_mask);
	if (shift >= 64)
		return tc->time_zero;
	quot = cyc >> shift;
	rem = cyc & ((UINT64_C(1) << shift) - 1);
	return tc->time_zero + quot * mult + ((rem * mult) >> shift);
}

uint64_t auxcap_time_conv_from_ns(const struct auxcap_perf_time_conv *tc, uint64_t ns)
{
	uint64_t t = ns - tc->time_zero, mult = tc->time_mult, shift = tc->time_shift;

	if (!mult || shift >= 64)
		return 0;
	return ((t / mult) << shift) + ((t % mult) << shift) / mult;
}

/* ---- the counter and calibration --------------------------------------------------------- */

int auxcap_counter_read(uint64_t *ret)
{
	if (!ret)
		return -EINVAL;
#if defined(__x86_64__) || defined(__i386__)
	{
		uint32_t lo, hi;

		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		*ret = (uint64_t)hi << 32 | lo;
		return 0;
	}
#elif defined(__aarch64__)
	{
		uint64_t v;

		__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
		*ret = v;
		return 0;
	}
#else
	return -EOPNOTSUPP;
#endif
}

uint64_t auxcap_counter_now(void)
{
	uint64_t v = 0;

	(void)auxcap_counter_read(&v);
	return v;
}

int auxcap_time_conv_from_pairs(uint64_t cyc0, uint64_t ns0, uint64_t cyc1, uint64_t ns1,
				struct auxcap_perf_time_conv *ret)
{
	__extension__ typedef unsigned __int128 u128;
	uint64_t dcyc, dns, mult = 0;
	int shift;

	if (!ret || cyc1 <= cyc0 || ns1 <= ns0)
		return -EINVAL;
	dcyc = cyc1 - cyc0;
	dns = ns1 - ns0;
	/* mult / 2^shift = dns / dcyc, rounded; rem * mult < 2^(shift + 32) keeps perf's u64
	 * middle term from overflowing for shift <= 31. */
	for (shift = 31; shift >= 0; shift--) {
		u128 m = (((u128)dns << shift) + dcyc / 2) / dcyc;

		if (m < (UINT64_C(1) << 32) && m > 0) {
			mult = (uint64_t)m;
			break;
		}
	}
	if (!mult)
		return -ERANGE;
	memset(ret, 0, sizeof(*ret));
	ret->time_shift = (uint64_t)shift;
	ret->time_mult = mult;
	ret->cap_user_time_zero = true;
	/* time_zero: the formula with zero 0 puts cyc1 at conv; move it onto ns1 (mod 2^64). */
	ret->time_zero = ns1 - auxcap_time_conv_to_ns(ret, cyc1);
	return 0;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * UINT64_C(1000000000) + (uint64_t)ts->tv_nsec;
}

/* One (counter, clock) pair: the narrowest of many clock windows around a counter read. */
static int best_pair(clockid_t clk, uint64_t *ret_cyc, uint64_t *ret_ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 64; i++) {
		struct timespec a, b;
		uint64_t c;

		if (clock_gettime(clk, &a) < 0)
			return -EINVAL;
		(void)auxcap_counter_read(&c);
		if (clock_gettime(clk, &b) < 0)
			return -EINVAL;
		if (ts_ns(&b) < ts_ns(&a))
			continue;
		if (ts_ns(&b) - ts_ns(&a) < best) {
			best = ts_ns(&b) - ts_ns(&a);
			*ret_cyc = c;
			*ret_ns = ts_ns(&a) + best / 2;
		}
	}
	return best == UINT64_MAX ? -EINVAL : 0;
}

int auxcap_time_conv_calibrate(clockid_t clk, uint64_t span_ns, struct auxcap_perf_time_conv *ret)
{
	uint64_t c0 = 0, n0 = 0, c1 = 0, n1 = 0, dummy;
	struct timespec nap;
	int r;

	if (!ret)
		return -EINVAL;
	r = auxcap_counter_read(&dummy);
	if (r < 0)
		return r;
	if (!span_ns)
		span_ns = 20000000;
	r = best_pair(clk, &c0, &n0);
	if (r < 0)
		return r;
	nap.tv_sec = (time_t)(span_ns / 1000000000);
	nap.tv_nsec = (long)(span_ns % 1000000000);
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, &nap) == EINTR)
		;
	r = best_pair(clk, &c1, &n1);
	if (r < 0)
		return r;
	if (c1 <= c0 || n1 <= n0)
		return -ERANGE;
	return auxcap_time_conv_from_pairs(c0, n0, c1, n1, ret);
}

int auxcap_time_conv_probe(const struct auxcap_sys *sys, const struct perf_event_attr *attr,
			   struct auxcap_perf_time_conv *ret)
{
	struct perf_event_attr a;
	long page = sysconf(_SC_PAGESIZE);
	void *pc = NULL;
	int fd, r;

	if (!attr || !ret)
		return -EINVAL;
	if (!sys)
		sys = &auxcap_sys_linux;
	a = *attr;
	a.size = sizeof(a);
	a.disabled = 1;
	a.inherit = 0;
	a.enable_on_exec = 0;
	a.use_clockid = 0;
	a.clockid = 0;
	fd = sys->perf_event_open(sys->ctx, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return fd;
	r = sys->mmap(sys->ctx, (size_t)page, PROT_READ, MAP_SHARED, fd, 0, &pc);
	if (r == 0) {
		r = auxcap_time_conv_read_page(pc, ret);
		(void)sys->munmap(sys->ctx, pc, (size_t)page);
	}
	(void)sys->close(sys->ctx, fd);
	return r;
}
