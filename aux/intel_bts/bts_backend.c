/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Intel BTS backend's ops table (auxcap/backend.h).
 */
#include <string.h>

#include "auxcap/backend.h"

static int bts_probe(const char *pmu_name, const struct auxcap_pmu *pmu)
{
	(void)pmu;
	return !strcmp(pmu_name, "intel_bts");
}

const struct auxcap_backend_ops auxcap_backend_intel_bts = {
	.abi = AUXCAP_BACKEND_ABI,
	.name = "intel_bts",
	.description = "Intel Branch Trace Store (24-byte branch records)",
	.auxtrace_type = AUXCAP_AUXTRACE_INTEL_BTS,
	.probe = bts_probe,
};
