/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --emulate: the emulated AUX PMUs described to the event parser like sysfs would, with the
 * format terms the emulator lists for each (those of the real drivers) and the caps/ files of
 * what the emulated hardware does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auxcap/emu.h"
#include "auxcap/pmu.h"
#include "emulate.h"

static int cmp_format(const void *a, const void *b)
{
	return strcmp(((const struct auxcap_pmu_format *)a)->name,
		      ((const struct auxcap_pmu_format *)b)->name);
}

static int cmp_cap(const void *a, const void *b)
{
	return strcmp(((const struct auxcap_pmu_cap *)a)->name,
		      ((const struct auxcap_pmu_cap *)b)->name);
}

static int make_pmu(const struct auxcap_emu_pmu_info *info, struct auxcap_pmu **ret)
{
	const struct auxcap_emu_format *f = info->formats;
	size_t nr = info->nr_formats;
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
	/* struct auxcap_pmu keeps its formats sorted by name, as sysfs discovery does. */
	qsort(pmu->formats, pmu->nr_formats, sizeof(*pmu->formats), cmp_format);
	pmu->caps = calloc(info->nr_sysfs_caps ? info->nr_sysfs_caps : 1, sizeof(*pmu->caps));
	if (!pmu->caps) {
		r = -ENOMEM;
		goto err;
	}
	for (size_t i = 0; i < info->nr_sysfs_caps; i++) {
		pmu->caps[i].name = strdup(info->sysfs_caps[i].name);
		pmu->caps[i].value = strdup(info->sysfs_caps[i].value);
		pmu->nr_caps++;
		if (!pmu->caps[i].name || !pmu->caps[i].value) {
			r = -ENOMEM;
			goto err;
		}
	}
	qsort(pmu->caps, pmu->nr_caps, sizeof(*pmu->caps), cmp_cap);
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
		struct auxcap_pmu *pmu = NULL;

		r = auxcap_emu_pmu_info(emu, (enum auxcap_emu_pmu)p, &info);
		if (r == 0)
			r = make_pmu(&info, &pmu);
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
