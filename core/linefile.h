/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stdio FILE that hands what is written to it to a callback, one line at a time.
 *
 * Lets code written against FILE * (the SPE and BTS text writers) serve a line callback (the
 * backends' dump op) without buffering the whole output: complete lines go out as they are
 * flushed; a last line without a newline goes out at close.
 *
 *	struct auxcap_linefile lf;
 *	FILE *f;
 *
 *	r = auxcap_linefile_open(&lf, fn, arg, &f);
 *	... fprintf(f, ...) ...
 *	r = auxcap_linefile_close(&lf, f);    0, or @fn's negative return, or -ENOMEM/-EIO
 */
#ifndef AUXCAP_LINEFILE_H
#define AUXCAP_LINEFILE_H

#include <stddef.h>
#include <stdio.h>

/** Receives one line, without its newline; returns < 0 to stop the writer. */
typedef int (*auxcap_linefile_fn)(void *arg, const char *line);

/** State of one line file; caller-owned, must outlive the FILE.  Fields private. */
struct auxcap_linefile {
	auxcap_linefile_fn fn;
	void *arg;
	char *line;	/* owned: the partial line */
	size_t len, cap; /* bytes in / allocated for @line */
	int err;	/* first failure: @fn's negative return or -ENOMEM */
};

/**
 * Open a write-only FILE whose lines go to @fn(@arg, line).  Once @fn returns < 0 every
 * further write fails (ferror() is set), so a writer checking ferror() stops.
 * Returns 0 and sets *@ret_file (close it with auxcap_linefile_close() only), or -ENOMEM.
 */
int auxcap_linefile_open(struct auxcap_linefile *lf, auxcap_linefile_fn fn, void *arg,
			 FILE **ret_file);

/**
 * Flush, hand out a last unterminated line, close @file and free @lf's buffer.
 * Returns 0, or the first failure: @fn's negative return, -ENOMEM.
 */
int auxcap_linefile_close(struct auxcap_linefile *lf, FILE *file);

#endif /* AUXCAP_LINEFILE_H */
