/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Arm SPE backend's ops table (auxcap/backend.h).
 */
#include <string.h>

#include "auxcap/backend.h"

/* The driver names its PMUs arm_spe_N (one per SPE-capable CPU type). */
static int spe_probe(const char *pmu_name, const struct auxcap_pmu *pmu)
{
	(void)pmu;
	return !strcmp(pmu_name, "arm_spe") || !strncmp(pmu_name, "arm_spe_", 8);
}

const struct auxcap_backend_ops auxcap_backend_arm_spe = {
	.abi = AUXCAP_BACKEND_ABI,
	.name = "arm_spe",
	.description = "Arm Statistical Profiling Extension (auxcap's packet decoder)",
	.auxtrace_type = AUXCAP_AUXTRACE_ARM_SPE,
	.probe = spe_probe,
};
