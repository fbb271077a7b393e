/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program with a known memory behaviour, for `auxcap report --mem`: main -> {sum_small,
 * walk_large} in rounds.
 *   sum_small   re-reads a 16 KiB array, which fits the L1; walk_large's lines push some of
 *               it out between rounds, and those loads are served by the L2;
 *   walk_large  reads one word of each 64-byte line of a 64 MiB array, moving on through it
 *               from round to round: every load touches a line not read before (an L1 and
 *               last-level cache miss), and one in 64 a new 4 KiB page (a TLB miss);
 *   bump        reads and writes a counter in the middle of a global array (one line).
 * It prints one checksum line.
 *
 * Usage: auxcap-example-mem [ROUNDS]   (default 200; each round reads 2048 words of the small
 *                                       array and 512 lines of the large one)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define SMALL_WORDS 2048		     /* 16 KiB */
#define LARGE_BYTES (64ul << 20)	     /* 64 MiB */
#define LINE	    64
#define LINES_PER_ROUND 512

uint64_t sum_small(const uint64_t *a);
uint64_t walk_large(const unsigned char *a, size_t *pos);
void bump(volatile uint64_t *c);

__attribute__((noinline)) uint64_t sum_small(const uint64_t *a)
{
	uint64_t s = 0;

	for (size_t i = 0; i < SMALL_WORDS; i++)
		s += a[i];
	return s;
}

__attribute__((noinline)) uint64_t walk_large(const unsigned char *a, size_t *pos)
{
	uint64_t s = 0;
	size_t p = *pos;

	for (size_t i = 0; i < LINES_PER_ROUND; i++) {
		s += *(const volatile unsigned char *)(a + p);
		p += LINE;
		if (p >= LARGE_BYTES)
			p = 0;
	}
	*pos = p;
	return s;
}

__attribute__((noinline)) void bump(volatile uint64_t *c)
{
	*c += 1;
}

static uint64_t counters[16];

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 0) : 200;
	uint64_t *small = calloc(SMALL_WORDS, sizeof(*small));
	/* pages of its own, in one system call: untouched zero pages would all be one physical
	 * page, and a physically tagged cache would hit in it */
	unsigned char *large = mmap(NULL, LARGE_BYTES, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	uint64_t s = 0;
	size_t pos = 0;

	if (!small || large == MAP_FAILED) {
		fprintf(stderr, "example-mem: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < SMALL_WORDS; i++)
		small[i] = i;
	for (unsigned long r = 0; r < rounds; r++) {
		s += sum_small(small);
		s += walk_large(large, &pos);
		bump(&counters[8]);
	}
	printf("example-mem: %lu rounds, checksum %llu\n", rounds,
	       (unsigned long long)(s + counters[8]));
	free(small);
	munmap(large, LARGE_BYTES);
	return 0;
}
