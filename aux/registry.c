/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The backend registry: the built-in backends this build has, then those registered at run
 * time (plug-ins).  Mandatory ops are checked once, at registration.  Lookups by PMU and by
 * AUXTRACE_INFO type ask the plug-ins first, in registration order, so a plug-in overrides a
 * built-in for the PMUs it claims.
 */
#include <errno.h>
#include <string.h>

#include "config.h"

#include "auxcap/backend.h"

#if AUXCAP_HAVE_BACKEND_INTEL_PT && AUXCAP_HAVE_LIBIPT
extern const struct auxcap_backend_ops auxcap_backend_intel_pt;
#endif
#if AUXCAP_HAVE_BACKEND_INTEL_BTS
extern const struct auxcap_backend_ops auxcap_backend_intel_bts;
#endif
#if AUXCAP_HAVE_BACKEND_ARM_SPE
extern const struct auxcap_backend_ops auxcap_backend_arm_spe;
#endif

#define MAX_BACKENDS 32

static const struct auxcap_backend_ops *g_backends[MAX_BACKENDS];
static size_t g_nr;
static size_t g_nr_builtin; /* the first g_nr_builtin entries are built in */
static bool g_init;

/* Checks @ops: mandatory ops present, optional ones in complete groups. */
static int validate(const struct auxcap_backend_ops *ops)
{
	if (!ops)
		return -EINVAL;
	if (ops->abi != AUXCAP_BACKEND_ABI)
		return -EPROTO;
	if (!ops->name || !ops->name[0] || !ops->probe)
		return -EINVAL;
	if (!ops->info_size != !ops->info_fill)
		return -EINVAL;
	if (ops->info_size && !ops->recording_options)
		return -EINVAL;
	if (!ops->decoder_new != !ops->decoder_next || !ops->decoder_new != !ops->decoder_free ||
	    (ops->decoder_next_batch && !ops->decoder_new))
		return -EINVAL;
	return 0;
}

static int add(const struct auxcap_backend_ops *ops)
{
	int r = validate(ops);

	if (r < 0)
		return r;
	for (size_t i = 0; i < g_nr; i++)
		if (!strcmp(g_backends[i]->name, ops->name))
			return -EEXIST;
	if (g_nr == MAX_BACKENDS)
		return -ENOSPC;
	g_backends[g_nr++] = ops;
	return 0;
}

/* Adds the built-in backends on first use.  A built-in failing validation is a bug that the
 * registry test catches; it is left out rather than crash a capture. */
static void init_builtin(void)
{
	if (g_init)
		return;
	g_init = true;
#if AUXCAP_HAVE_BACKEND_INTEL_PT && AUXCAP_HAVE_LIBIPT
	(void)add(&auxcap_backend_intel_pt);
#endif
#if AUXCAP_HAVE_BACKEND_INTEL_BTS
	(void)add(&auxcap_backend_intel_bts);
#endif
#if AUXCAP_HAVE_BACKEND_ARM_SPE
	(void)add(&auxcap_backend_arm_spe);
#endif
	g_nr_builtin = g_nr;
}

int auxcap_backend_register(const struct auxcap_backend_ops *ops)
{
	init_builtin();
	return add(ops);
}

size_t auxcap_backend_count(void)
{
	init_builtin();
	return g_nr;
}

const struct auxcap_backend_ops *auxcap_backend_get(size_t i)
{
	init_builtin();
	return i < g_nr ? g_backends[i] : NULL;
}

const struct auxcap_backend_ops *auxcap_backend_for_pmu(const char *pmu_name,
							const struct auxcap_pmu *pmu)
{
	init_builtin();
	if (!pmu_name)
		return NULL;
	/* Plug-ins first, in the order they came: they may take over a built-in's PMU. */
	for (size_t k = 0; k < g_nr; k++) {
		size_t i = (g_nr_builtin + k) % g_nr;

		if (g_backends[i]->probe(pmu_name, pmu) > 0)
			return g_backends[i];
	}
	return NULL;
}

const struct auxcap_backend_ops *auxcap_backend_for_type(uint32_t type)
{
	init_builtin();
	for (size_t k = 0; type && k < g_nr; k++) {
		size_t i = (g_nr_builtin + k) % g_nr;

		if (g_backends[i]->auxtrace_type == type)
			return g_backends[i];
	}
	return NULL;
}

const struct auxcap_backend_ops *auxcap_backend_find(const char *name)
{
	init_builtin();
	for (size_t i = 0; name && i < g_nr; i++)
		if (!strcmp(g_backends[i]->name, name))
			return g_backends[i];
	return NULL;
}
