/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program for the emulated SPE unit's memory model (tests/emu/test_tracer_spe.c): it reads
 * one byte of every 64-byte line of tracer_cache_big (4 MiB, twice the modelled LLC) in two
 * passes, then of tracer_cache_wide (512 KiB, twice the modelled L2, a quarter of the LLC) in
 * two passes, then of tracer_cache_mid (128 KiB, four times the modelled L1D, half the L2) in
 * two passes, then of tracer_cache_small (4 KiB, an eighth of the modelled L1D) in four
 * passes.  The arrays are page-aligned .bss, never written (the kernel's zero page backs
 * them), so the walks are the only accesses to them.  Each load is one instruction (volatile
 * reads whose value is dropped), eight per loop iteration.  No output, exit status 0.
 *
 * Usage: auxcap-tracer-cache-prog
 */
#include <stddef.h>

#define TRACER_CACHE_LINE  64u
#define TRACER_CACHE_BIG   (4u << 20)
#define TRACER_CACHE_WIDE  (512u << 10)
#define TRACER_CACHE_MID   (128u << 10)
#define TRACER_CACHE_SMALL (4u << 10)

unsigned char tracer_cache_big[TRACER_CACHE_BIG] __attribute__((aligned(4096)));
unsigned char tracer_cache_wide[TRACER_CACHE_WIDE] __attribute__((aligned(4096)));
unsigned char tracer_cache_mid[TRACER_CACHE_MID] __attribute__((aligned(4096)));
unsigned char tracer_cache_small[TRACER_CACHE_SMALL] __attribute__((aligned(4096)));

/* Read the first byte of each line of @p (@len bytes, a multiple of 8 lines), @passes times. */
__attribute__((noinline)) static void walk(const volatile unsigned char *p, size_t len, int passes)
{
	for (int k = 0; k < passes; k++) {
		for (size_t i = 0; i < len; i += 8 * TRACER_CACHE_LINE) {
			(void)p[i];
			(void)p[i + 1 * TRACER_CACHE_LINE];
			(void)p[i + 2 * TRACER_CACHE_LINE];
			(void)p[i + 3 * TRACER_CACHE_LINE];
			(void)p[i + 4 * TRACER_CACHE_LINE];
			(void)p[i + 5 * TRACER_CACHE_LINE];
			(void)p[i + 6 * TRACER_CACHE_LINE];
			(void)p[i + 7 * TRACER_CACHE_LINE];
		}
	}
}

int main(void)
{
	walk(tracer_cache_big, sizeof(tracer_cache_big), 2);
	walk(tracer_cache_wide, sizeof(tracer_cache_wide), 2);
	walk(tracer_cache_mid, sizeof(tracer_cache_mid), 2);
	walk(tracer_cache_small, sizeof(tracer_cache_small), 4);
	return 0;
}
