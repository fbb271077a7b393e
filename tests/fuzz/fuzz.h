/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the fuzz targets (tests/fuzz/fuzz_*.c).
 *
 * Every target defines LLVMFuzzerTestOneInput() and is linked two ways: with clang's libFuzzer
 * (meson -Dfuzz=true, scripts/fuzz) to search for crashes, and with replay.c, a plain main()
 * that feeds it every file of its corpus directory, so the seeds and the crash reproducers run
 * as ordinary meson tests in the normal (gcc, and ASan+UBSan) builds.
 *
 * A target checks what the API documents (accounting identities, ranges, round trips) with
 * FUZZ_CHECK(), which aborts with the broken rule: a violated contract is a crash to libFuzzer.
 */
#ifndef AUXCAP_FUZZ_H
#define AUXCAP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional one-time set-up (weak in the replay driver). */
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_CHECK(cond)                                                                       \
	do {                                                                                   \
		if (!(cond)) {                                                                 \
			fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__,  \
				#cond);                                                        \
			abort();                                                               \
		}                                                                              \
	} while (0)

/* Read every byte of [p, p + n) so that the sanitizers see an out-of-bounds borrow. */
static inline void fuzz_touch(const void *p, size_t n)
{
	const volatile unsigned char *b = p;
	unsigned char x = 0;

	for (size_t i = 0; i < n; i++)
		x ^= b[i];
	(void)x;
}

/* strlen() through the sanitizers, bounded: a missing NUL shows as an overflow. */
static inline size_t fuzz_strlen(const char *s)
{
	size_t n = 0;

	if (!s)
		return 0;
	while (((const volatile char *)s)[n])
		n++;
	return n;
}

#endif /* AUXCAP_FUZZ_H */
