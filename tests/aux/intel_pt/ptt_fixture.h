/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The libipt test vectors in $AUXCAP_SHARED_FIXTURES/libipt-ptt: enumerate the expected
 * outputs (.exp) of one tool, with the inputs and the options the .ptt source asks for.
 */
#ifndef AUXCAP_TEST_PTT_FIXTURE_H
#define AUXCAP_TEST_PTT_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ptt_vector {
	char name[128];	   /* test name (the .ptt base name) */
	char variant[160]; /* the .exp base name, e.g. "apl11-ptxed-cpu_6_92" */
	char dir[512];	   /* directory holding the .pt/.bin/.exp */
	char exp[768];	   /* path of the .exp */
	char pt[768];	   /* path of the .pt */
	char bin[768];	   /* path of the .bin */
	char ptt[768];	   /* path of the .ptt source */
	char cpu[32];	   /* "F/M" from the .exp name, "" if none */
	char opts[512];	   /* the "; opt:<tool>" options of the .ptt, space separated */
	uint64_t org;	   /* the .ptt's "org" address (load address of the .bin) */
	bool has_org;
};

/* The fixture root ($AUXCAP_SHARED_FIXTURES/libipt-ptt), or NULL (then the test skips). */
const char *ptt_root(void);

/*
 * All vectors with an expected output of @tool ("ptdump" or "ptxed"), sorted by variant.
 * Returns the count; *ret is malloc'd (free()).
 */
size_t ptt_vectors(const char *tool, struct ptt_vector **ret);

/* Read a whole file; NULL if it cannot be read.  *ret_len gets the size.  free() it. */
uint8_t *ptt_read_file(const char *path, size_t *ret_len);

/*
 * Compare two texts line by line ignoring changes in the amount of white space (as
 * libipt's test harness does with diff -b).  Returns -1 if equal, else the 0-based number
 * of the first differing line.
 */
long ptt_compare(const char *exp, const char *out);

/* A growing text buffer. */
struct ptt_text {
	char *s;
	size_t len, cap;
};
void ptt_text_addf(struct ptt_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ptt_text_free(struct ptt_text *t);

/* Is @name in the NULL-terminated list of {name, reason} pairs?  Returns the reason. */
const char *ptt_listed(const char *const (*list)[2], const char *name);

#endif
