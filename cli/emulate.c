/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --emulate: the emulated AUX PMUs described to the event parser like sysfs would, with the
 * format terms of the real drivers (the same facts as fixtures/sysfs/).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auxcap/emu.h"
#include "auxcap/pmu.h"
#include "emulate.h"

struct fmt {
	const char *name, *spec;
};

static const struct fmt pt_formats[] = {
	{ "branch", "config:13" },	   { "cyc", "config:1" },
	{ "cyc_thresh", "config:19-22" }, { "event", "config:31" },
	{ "fup_on_ptw", "config:5" },	   { "mtc", "config:9" },
	{ "mtc_period", "config:14-17" }, { "noretcomp", "config:11" },
	{ "notnt", "config:55" },	   { "psb_period", "config:24-27" },
	{ "pt", "config:0" },		   { "ptw", "config:12" },
	{ "pwr_evt", "config:4" },	   { "tsc", "config:10" },
};

static const struct fmt spe_formats[] = {
	{ "branch_filter", "config:32" }, { "discard", "config:35" },
	{ "event_filter", "config1:0-63" }, { "jitter", "config:16" },
	{ "load_filter", "config:33" },   { "min_latency", "config2:0-11" },
	{ "pa_enable", "config:1" },	   { "pct_enable", "config:2" },
	{ "store_filter", "config:34" },  { "ts_enable", "config:0" },
};

static int make_pmu(const struct auxcap_emu_pmu_info *info, const struct fmt *f, size_t nr,
		    struct auxcap_pmu **ret)
{
	struct auxcap_pmu *pmu = calloc(1, sizeof(*pmu));
	int r = -ENOMEM;

	if (!pmu)
		return -ENOMEM;
	pmu->name = strdup(info->name);
	pmu->type = info->type;
	pmu->mux_interval_ms = -1;
	pmu->formats = calloc(nr ? nr : 1, sizeof(*pmu->formats));
	if (!pmu->name || !pmu->formats)
		goto err;
	for (size_t i = 0; i < nr; i++) {
		r = auxcap_pmu_format_parse(f[i].spec, &pmu->formats[i]);
		if (r < 0)
			goto err;
		pmu->formats[i].name = strdup(f[i].name);
		pmu->nr_formats++;
		if (!pmu->formats[i].name) {
			r = -ENOMEM;
			goto err;
		}
	}
	*ret = pmu;
	return 0;
err:
	auxcap_pmu_free(pmu);
	return r;
}

int cli_emu_pmu_list(struct auxcap_emu *emu, struct auxcap_pmu_list **ret)
{
	struct auxcap_pmu_list *list = calloc(1, sizeof(*list));
	int r;

	if (!list)
		return -ENOMEM;
	list->entries = calloc(AUXCAP_EMU_PMU_COUNT, sizeof(*list->entries));
	if (!list->entries) {
		free(list);
		return -ENOMEM;
	}
	for (int p = 0; p < AUXCAP_EMU_PMU_COUNT; p++) {
		struct auxcap_emu_pmu_info info;
		struct auxcap_pmu *pmu;

		r = auxcap_emu_pmu_info(emu, (enum auxcap_emu_pmu)p, &info);
		if (r == 0)
			r = p == AUXCAP_EMU_PMU_INTEL_PT
				    ? make_pmu(&info, pt_formats, sizeof(pt_formats) / sizeof(pt_formats[0]), &pmu)
			    : p == AUXCAP_EMU_PMU_ARM_SPE
				    ? make_pmu(&info, spe_formats, sizeof(spe_formats) / sizeof(spe_formats[0]),
					       &pmu)
				    : make_pmu(&info, NULL, 0, &pmu);
		if (r < 0) {
			auxcap_pmu_list_free(list);
			return r;
		}
		list->entries[list->nr].name = strdup(info.name);
		list->entries[list->nr].pmu = pmu;
		list->nr++;
		if (!list->entries[list->nr - 1].name) {
			auxcap_pmu_list_free(list);
			return -ENOMEM;
		}
	}
	*ret = list;
	return 0;
}
