/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap list: the PMUs sysfs shows, which auxcap backend serves each, their caps, address
 * filters and format terms; then the named software/hardware events and how to name
 * tracepoints, breakpoints and PMU events.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "auxcap/backend.h"
#include "auxcap/pmu.h"
#include "auxcap/trigger.h"
#include "cli.h"
#include "evparse.h"

/* The backend that serves PMU @pmu (from the registry), or "-". */
static const char *backend_of(const char *name, const struct auxcap_pmu *pmu)
{
	const struct auxcap_backend_ops *b = auxcap_backend_for_pmu(name, pmu);

	if (b)
		return b->name;
	return !strcmp(name, "cs_etm") ? "cs_etm (not yet)" : "-";
}

static void print_cpus(const struct auxcap_pmu *pmu)
{
	printf("    cpus:    ");
	for (size_t i = 0; i < pmu->nr_cpus;) {
		size_t j = i;

		while (j + 1 < pmu->nr_cpus && pmu->cpus[j + 1] == pmu->cpus[j] + 1)
			j++;
		if (j == i)
			printf("%s%d", i ? "," : "", pmu->cpus[i]);
		else
			printf("%s%d-%d", i ? "," : "", pmu->cpus[i], pmu->cpus[j]);
		i = j + 1;
	}
	printf("%s\n", pmu->nr_cpus ? "" : "(none)");
}

static void print_pmu(const struct auxcap_pmu *pmu)
{
	printf("%-16s type %-4u backend %-18s addr_filters %u\n", pmu->name, pmu->type,
	       backend_of(pmu->name, pmu), pmu->nr_addr_filters);
	if (pmu->nr_caps) {
		printf("    caps:   ");
		for (size_t i = 0; i < pmu->nr_caps; i++)
			printf(" %s=%s", pmu->caps[i].name, pmu->caps[i].value);
		printf("\n");
	}
	if (pmu->nr_formats) {
		printf("    terms:  ");
		for (size_t i = 0; i < pmu->nr_formats; i++) {
			char where[256];

			auxcap_pmu_format_str(&pmu->formats[i], where, sizeof(where));
			printf(" %s=%s", pmu->formats[i].name, where);
		}
		printf("\n");
	}
	if (pmu->nr_aliases) {
		printf("    events: ");
		for (size_t i = 0; i < pmu->nr_aliases; i++)
			printf(" %s(%s)", pmu->aliases[i].name, pmu->aliases[i].terms);
		printf("\n");
	}
	if (pmu->has_cpumask)
		print_cpus(pmu);
}

static void print_symbols(uint32_t type)
{
	size_t col = 4;

	printf("   ");
	for (size_t i = 0; auxcap_event_symbol_get(i); i++) {
		const struct auxcap_event_symbol *sym = auxcap_event_symbol_get(i);
		char item[96];
		int n;

		if (sym->type != type)
			continue;
		n = snprintf(item, sizeof(item), " %s%s%s%s", sym->name, sym->alias ? " (" : "",
			     sym->alias ? sym->alias : "", sym->alias ? ")" : "");
		if (col + (size_t)n > 96) {
			printf("\n   ");
			col = 4;
		}
		fputs(item, stdout);
		col += (size_t)n;
	}
	printf("\n");
}

/* Every registered backend: built-in ones, then plug-ins with the file they came from. */
static void print_backends(void)
{
	printf("\nbackends (record side, decode side; AUXTRACE_INFO type):\n");
	for (size_t i = 0; i < auxcap_backend_count(); i++) {
		const struct auxcap_backend_ops *b = auxcap_backend_get(i);
		const char *origin = auxcap_backend_origin(b);

		printf("  %-12s %-6s %-6s type %-7u %s\n", b->name,
		       b->recording_options ? "record" : "-", b->decoder_new ? "decode" : "-",
		       b->auxtrace_type, b->description ? b->description : "");
		if (origin)
			printf("  %-12s plug-in %s\n", "", origin);
	}
}

static bool has_aux_backend(const struct auxcap_pmu_list *list)
{
	for (size_t i = 0; i < list->nr; i++) {
		const struct auxcap_pmu *pmu = list->entries[i].pmu;

		if (pmu && auxcap_backend_for_pmu(list->entries[i].name, pmu))
			return true;
	}
	return false;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: auxcap list [--sysfs DIR]\n\n"
		"Lists the perf PMUs of this machine (or of the sysfs tree DIR, default\n"
		"%s), the auxcap backend serving each, their caps, address\n"
		"filters and format terms, and the named events.\n",
		AUXCAP_PMU_SYSFS_ROOT);
}

static int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sysfs", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = AUXCAP_PMU_SYSFS_ROOT;
	bool user_root = false;
	struct auxcap_pmu_list *list = NULL;
	int c, r;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			root = optarg;
			user_root = true;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		case ':':
			cli_err("list: option '%s' needs a value (a sysfs directory such as %s)",
				argv[optind - 1], AUXCAP_PMU_SYSFS_ROOT);
			return CLI_ERR;
		default:
			cli_err("list: unknown option '%s'; run 'auxcap list --help'",
				argv[optind - 1]);
			return CLI_ERR;
		}
	}
	if (optind < argc) {
		cli_err("list: unexpected argument '%s'; run 'auxcap list --help'", argv[optind]);
		return CLI_ERR;
	}

	r = auxcap_pmu_list_new(root, &list);
	if (r < 0) {
		cli_err("cannot read the PMUs in %s: %s; %s", root, strerror(-r),
			!user_root ? "is sysfs mounted and perf_events built into this kernel?"
				   : "check the directory given to --sysfs");
		return CLI_ERR;
	}

	printf("PMUs in %s:\n\n", root);
	for (size_t i = 0; i < list->nr; i++) {
		const struct auxcap_pmu_list_entry *e = &list->entries[i];

		if (e->pmu)
			print_pmu(e->pmu);
		else
			printf("%-16s (unreadable: %s)\n", e->name, strerror(-e->err));
	}
	if (!list->nr)
		printf("(none)\n");
	print_backends();

	printf("\nsoftware events (-e NAME[:MODS]):\n");
	print_symbols(PERF_TYPE_SOFTWARE);
	printf("hardware events (need the CPU's PMU; often absent in VMs):\n");
	print_symbols(PERF_TYPE_HARDWARE);
	printf("tracepoint events: -e SYS:NAME[:MODS], e.g. raw_syscalls:sys_enter;"
	       " see 'ls /sys/kernel/tracing/events'\n");
	printf("breakpoints: -e mem:ADDR[/LEN][:rwx][:MODS], e.g. mem:0x1000/8:w%s\n",
	       auxcap_trigger_breakpoints_fire() == 0
		       ? " (they open but do not fire on this machine: a VM without debug registers?)"
		       : "");
	printf("raw hardware events: -e rHEX[:MODS], e.g. r1a8\n");
	printf("PMU events: -e PMU/TERM[=VALUE],.../[MODS], e.g. intel_pt/cyc,mtc_period=3/u;"
	       " generic terms: config, config1-3, period, freq, name\n");
	printf("modifiers: u (user), k (kernel), h (hypervisor), p/pp/ppp (precise)\n");
	if (!has_aux_backend(list))
		printf("no intel_pt, intel_bts or arm_spe_N here: 'auxcap record --emulate' emulates "
		       "them\n");

	auxcap_pmu_list_free(list);
	return CLI_OK;
}

const struct cli_cmd cli_cmd_list = {
	.name = "list",
	.summary = "PMUs found, which backend serves each, caps and terms",
	.run = cmd_list,
};
