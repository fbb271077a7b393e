/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Intel PT backend's ops table (auxcap/backend.h).  Record side in ipt_record.c and
 * ipt_filter.c.
 */
#include <string.h>

#include "auxcap/backend.h"
#include "auxcap/session.h"
#include "auxcap/timeconv.h"
#include "ipt_record.h"

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
	.recording_options = auxcap_ipt_recording_options,
	.info_size = auxcap_ipt_info_size,
	.info_fill = auxcap_ipt_info_fill,
	/*
	 * perf's "first wrap" test: AUX pages start zeroed, so the buffer has wrapped once any
	 * of its last 512 u64 words is non-zero (remembered per buffer); then the whole buffer
	 * ending at the driver's in-buffer head is trace, before that only [old, head).  (perf
	 * switches to comparing a reference copy for snapshots over 64 KiB; its copy is taken
	 * before the head but compared at the end of the buffer, so from the second snapshot on
	 * it answers "wrapped", which this test also answers once the buffer has filled, without
	 * claiming the zeros of a buffer that never did.)
	 */
	.find_snapshot = auxcap_find_snapshot_zero_tail,
	.reference = auxcap_counter_now,
	.addr_filter = auxcap_ipt_addr_filter,
};
