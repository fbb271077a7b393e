/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the event string parser (core/evparse.c).
 *
 * The input is an event list as given to `record -e` ("intel_pt/cyc/u,cycles:u").  It is
 * split (auxcap_event_list_split) and every element parsed, and the whole input is parsed as
 * one event too.  PMUs come from the sysfs fixture tree (fixtures/sysfs: intel_pt, intel_bts,
 * arm_spe_0, cs_etm) plus an in-memory PMU "fz" with events/ aliases (one of them naming
 * itself, one naming another alias), tracepoints from fixtures/tracefs.
 *
 * Checked: a failure leaves *ret untouched and returns the errno it records in the error
 * struct with a terminated one-line message; a success has its strings, terms and modifiers
 * well formed and every FORMAT term's bits inside its config word.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "evparse.h"
#include "fuzz.h"

#ifndef AUXCAP_FUZZ_FIXTURES
#error "AUXCAP_FUZZ_FIXTURES (the fixtures/ directory) must be defined"
#endif

#define MAX_INPUT 4096

static struct auxcap_pmu_list g_pmus;
static struct auxcap_evparse_opts g_opts;

static void add_format(struct auxcap_pmu *p, const char *name, const char *spec)
{
	struct auxcap_pmu_format *f = &p->formats[p->nr_formats++];

	if (auxcap_pmu_format_parse(spec, f) < 0)
		abort();
	f->name = strdup(name);
}

static void add_alias(struct auxcap_pmu *p, const char *name, const char *terms)
{
	struct auxcap_pmu_alias *a = &p->aliases[p->nr_aliases++];

	a->name = strdup(name);
	a->terms = strdup(terms);
}

/* A PMU with aliases, which the fixture tree lacks (msr's "tsc" is one in real sysfs). */
static struct auxcap_pmu *make_fz_pmu(void)
{
	struct auxcap_pmu *p = calloc(1, sizeof(*p));

	p->name = strdup("fz");
	p->type = 0x7a51;
	p->formats = calloc(4, sizeof(*p->formats));
	add_format(p, "event", "config:0-7");
	add_format(p, "umask", "config:8-15,32-35");
	add_format(p, "flag", "config1:63");
	add_format(p, "wide", "config3:0-63");
	p->aliases = calloc(4, sizeof(*p->aliases));
	add_alias(p, "loop", "loop,event=1");
	add_alias(p, "nested", "tsc,umask=0x3");
	add_alias(p, "named", "name=alias,period=100");
	add_alias(p, "tsc", "event=0x00");
	p->mux_interval_ms = -1;
	return p;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct auxcap_pmu_list *fixture = NULL;
	size_t nr;

	(void)argc;
	(void)argv;
	if (g_opts.sz)
		return 0;
	if (auxcap_pmu_list_new(AUXCAP_FUZZ_FIXTURES "/sysfs", &fixture) < 0)
		abort();
	nr = fixture->nr;
	g_pmus.entries = calloc(nr + 1, sizeof(*g_pmus.entries));
	memcpy(g_pmus.entries, fixture->entries, nr * sizeof(*g_pmus.entries));
	g_pmus.entries[nr].name = strdup("fz");
	g_pmus.entries[nr].pmu = make_fz_pmu();
	g_pmus.nr = nr + 1;
	free(fixture->entries); /* the PMUs now belong to g_pmus (kept for the process) */
	free(fixture);
	g_opts.sz = sizeof(g_opts);
	g_opts.sysfs_root = AUXCAP_FUZZ_FIXTURES "/sysfs";
	g_opts.tracefs_root = AUXCAP_FUZZ_FIXTURES "/tracefs";
	g_opts.pmus = &g_pmus;
	return 0;
}

/* Did a term after term @i write any bit of term @i's word that term @i wrote? */
static bool overwritten(const struct auxcap_event_spec *s, size_t i)
{
	const struct auxcap_evterm *t = &s->terms[i];

	for (size_t k = i + 1; k < s->nr_terms; k++) {
		const struct auxcap_evterm *u = &s->terms[k];

		if ((u->kind == AUXCAP_EVTERM_FORMAT || u->kind == AUXCAP_EVTERM_CONFIG) &&
		    u->word == t->word && (u->mask & t->mask))
			return true;
	}
	return false;
}

static void check_spec(const struct auxcap_event_spec *s)
{
	FUZZ_CHECK(s->pmu && s->name);
	fuzz_strlen(s->pmu);
	fuzz_strlen(s->name);
	fuzz_strlen(s->event);
	FUZZ_CHECK(memchr(s->mods, 0, sizeof(s->mods)));
	FUZZ_CHECK(s->nr_terms == 0 || s->terms);
	for (size_t i = 0; i < s->nr_terms; i++) {
		const struct auxcap_evterm *t = &s->terms[i];

		FUZZ_CHECK(t->name);
		fuzz_strlen(t->name);
		fuzz_strlen(t->str);
		fuzz_strlen(t->alias);
		if (t->kind == AUXCAP_EVTERM_FORMAT || t->kind == AUXCAP_EVTERM_CONFIG) {
			FUZZ_CHECK(t->word < AUXCAP_ATTR_WORD_MAX && t->mask);
			if (!overwritten(s, i)) {
				/* Nothing later wrote these bits: they read back as the value. */
				struct auxcap_pmu_format f = { .word = t->word, .mask = t->mask,
					.width = (unsigned int)__builtin_popcountll(t->mask) };

				FUZZ_CHECK(auxcap_pmu_format_get(&f, &s->attr) == t->value);
			}
		}
		if (t->kind == AUXCAP_EVTERM_NAME)
			FUZZ_CHECK(t->str);
		FUZZ_CHECK(auxcap_event_spec_term(s, t->name) != NULL);
	}
	(void)auxcap_attr_size(&s->attr);
}

static void parse_one(const char *str)
{
	struct auxcap_event_spec *spec = (struct auxcap_event_spec *)(uintptr_t)0x1;
	struct auxcap_evparse_error err;
	int r;

	memset(&err, 0xa5, sizeof(err));
	r = auxcap_event_spec_parse(str, &g_opts, &spec, &err);
	if (r < 0) {
		FUZZ_CHECK(spec == (struct auxcap_event_spec *)(uintptr_t)0x1);
		FUZZ_CHECK(err.err == r);
		FUZZ_CHECK(memchr(err.msg, 0, sizeof(err.msg)));
		FUZZ_CHECK(!strchr(err.msg, '\n'));
		FUZZ_CHECK(err.pos <= strlen(str));
		return;
	}
	FUZZ_CHECK(r == 0);
	check_spec(spec);
	auxcap_event_spec_free(spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char **events = NULL;
	size_t nr = 0;
	char *str;

	LLVMFuzzerInitialize(NULL, NULL);
	if (size > MAX_INPUT)
		return 0;
	str = malloc(size + 1);
	if (!str)
		return 0;
	memcpy(str, data, size);
	str[size] = '\0';
	parse_one(str);
	if (auxcap_event_list_split(str, &events, &nr) == 0) {
		FUZZ_CHECK(nr > 0);
		for (size_t i = 0; i < nr; i++) {
			FUZZ_CHECK(events[i] && *events[i]);
			parse_one(events[i]);
		}
		auxcap_event_list_free(events, nr);
	}
	free(str);
	return 0;
}
