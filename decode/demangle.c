/* SPDX-License-Identifier: BSD-3-Clause */
/* Demangling with libiberty's callback interface: no allocation inside the library (its
 * allocating entry points abort the process when memory runs out). */
#include "config.h"

#include "demangle.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if AUXCAP_HAVE_DEMANGLE
#include <libiberty/demangle.h>

struct dbuf {
	char *p;
	size_t len, cap;
	bool failed;
};

static void dbuf_put(const char *s, size_t n, void *arg)
{
	struct dbuf *b = arg;

	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 128;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}
#endif

#if AUXCAP_HAVE_DEMANGLE
/* A Rust name: v0 ("_R..."), or legacy, a C++-like name ending in its hash ("17h", 16 hex
 * digits, "E"); the Rust demangler is not tried on others (most are C++'s). */
static bool rust_name(const char *name)
{
	size_t n = strlen(name);

	if (name[1] == 'R')
		return true;
	if (n < 4 + 20 || name[n - 1] != 'E' || strncmp(name + n - 20, "17h", 3))
		return false;
	for (size_t i = n - 17; i < n - 1; i++)
		if (!strchr("0123456789abcdef", name[i]))
			return false;
	return true;
}
#endif

int auxcap_demangle(const char *name, char **ret)
{
#if AUXCAP_HAVE_DEMANGLE
	const int opts = DMGL_PARAMS | DMGL_ANSI;
	struct dbuf b = { 0 };
	int ok;

	/* C++ and Rust's legacy names start _Z, Rust's v0 names _R */
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return 0;
	/* (Rust's legacy names are C++ names too: Rust first, as libiberty's own order) */
	ok = rust_name(name) ? rust_demangle_callback(name, opts, dbuf_put, &b) : 0;
	if (!ok || b.failed || !b.len) {
		b.len = 0;
		b.failed = false;
		ok = cplus_demangle_v3_callback(name, opts, dbuf_put, &b);
	}
	if (b.failed) {
		free(b.p);
		return -ENOMEM;
	}
	if (!ok || !b.len) {
		free(b.p);
		return 0;
	}
	*ret = b.p;
	return 1;
#else
	(void)name;
	(void)ret;
	return 0;
#endif
}
