/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Intel PT backend's ops table (auxcap/backend.h).
 */
#include <string.h>

#include "auxcap/backend.h"

static int ipt_probe(const char *pmu_name, const struct auxcap_pmu *pmu)
{
	(void)pmu;
	return !strcmp(pmu_name, "intel_pt");
}

const struct auxcap_backend_ops auxcap_backend_intel_pt = {
	.abi = AUXCAP_BACKEND_ABI,
	.name = "intel_pt",
	.description = "Intel Processor Trace (libipt decoder)",
	.auxtrace_type = AUXCAP_AUXTRACE_INTEL_PT,
	.probe = ipt_probe,
};
