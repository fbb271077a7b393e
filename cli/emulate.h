/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef AUXCAP_CLI_EMULATE_H
#define AUXCAP_CLI_EMULATE_H

struct auxcap_emu;
struct auxcap_pmu_list;

/** The emulator's PMUs as a PMU list the event parser consults before sysfs. */
int cli_emu_pmu_list(struct auxcap_emu *emu, struct auxcap_pmu_list **ret);

#endif
