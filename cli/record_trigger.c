/* SPDX-License-Identifier: BSD-3-Clause */
/* auxcap record --trigger-on: the function, its binary, and the trigger event (see the .h). */
#include "record_trigger.h"

#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auxcap/pmu.h"
#include "auxcap/proc.h"
#include "auxcap/trigger.h"
#include "cli.h"
#if AUXCAP_HAVE_LIBELF
#include "elf_file.h"
#endif

int cli_trigger_via_parse(const char *s, enum cli_trigger_via *ret)
{
	if (!strcmp(s, "auto"))
		*ret = CLI_TRIGGER_AUTO;
	else if (!strcmp(s, "uprobe"))
		*ret = CLI_TRIGGER_UPROBE;
	else if (!strcmp(s, "breakpoint") || !strcmp(s, "bp"))
		*ret = CLI_TRIGGER_BREAKPOINT;
	else {
		cli_err("bad --trigger-via '%s': give uprobe, breakpoint or auto", s);
		return -EINVAL;
	}
	return 0;
}

char *cli_find_executable(const char *argv0)
{
	char buf[PATH_MAX], real[PATH_MAX];
	const char *path = getenv("PATH");

	if (strchr(argv0, '/'))
		return realpath(argv0, real) ? strdup(real) : NULL;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", argv0);
		if (access(buf, X_OK) == 0 && realpath(buf, real))
			return strdup(real);
		path += n + (path[n] == ':');
	}
	return NULL;
}

#if AUXCAP_HAVE_LIBELF
static int find_symbol(struct cli_trigger *t)
{
	struct auxcap_elf *elf;
	int r;

	r = auxcap_elf_open(t->binary, &elf);
	if (r < 0) {
		cli_err("cannot read '%s' for --trigger-on %s: %s%s", t->binary, t->symbol,
			r == -ENOEXEC ? "not an ELF file" : strerror(-r),
			r == -ENOEXEC ? " (give the program or library: SYMBOL@/path/to/binary)"
				      : "");
		return r;
	}
	r = auxcap_elf_symbol_lookup(elf, t->symbol, &t->link_addr, &t->file_offset);
	t->dyn = auxcap_elf_is_dyn(elf);
	auxcap_elf_free(elf);
	if (r == 0) {
		cli_err("symbol '%s' not found in %s (nm -D %s lists the exported ones, nm %s all "
			"functions)",
			t->symbol, t->binary, t->binary, t->binary);
		return -ENOENT;
	}
	if (r < 0) {
		cli_err("symbol '%s' in %s is not in a loadable segment of the file; pick a "
			"function that is",
			t->symbol, t->binary);
		return r;
	}
	return 0;
}
#else
static int find_symbol(struct cli_trigger *t)
{
	(void)t;
	cli_err("--trigger-on needs libelf, which this build lacks (install libelf-dev and "
		"rebuild)");
	return -ENOSYS;
}
#endif

int cli_trigger_resolve(struct cli_trigger *t, const char *spec, const char *default_binary,
			enum cli_trigger_via via, bool inherit)
{
	const char *at = strchr(spec, '@');
	char real[PATH_MAX];
	struct auxcap_pmu *pmu = NULL;
	int r;

	memset(t, 0, sizeof(*t));
	t->via = via;
	t->inherit = inherit;
	t->symbol = at ? strndup(spec, (size_t)(at - spec)) : strdup(spec);
	if (!t->symbol)
		return -ENOMEM;
	if (!*t->symbol || (at && !at[1])) {
		cli_err("bad --trigger-on '%s': give SYMBOL or SYMBOL@BINARY (e.g. "
			"--trigger-on leaf_add@./prog)",
			spec);
		return -EINVAL;
	}
	if (at) {
		if (!realpath(at + 1, real)) {
			r = -errno;
			cli_err("cannot find '%s' for --trigger-on %s: %s (give the path of the "
				"program or library that has the function)",
				at + 1, t->symbol, strerror(errno));
			return r;
		}
		t->binary = strdup(real);
	} else if (default_binary) {
		t->binary = strdup(default_binary);
	} else {
		cli_err("--trigger-on %s: no traced program to take the binary from; give "
			"SYMBOL@BINARY",
			t->symbol);
		return -EINVAL;
	}
	if (!t->binary)
		return -ENOMEM;
	r = find_symbol(t);
	if (r < 0)
		return r;

	/*
	 * A uprobe unless a breakpoint is asked for.  Following new tasks (inherit) takes a
	 * tracefs probe (the PMU's cannot be inherited), made in cli_trigger_build(); otherwise
	 * the uprobe PMU, when the kernel has it.
	 */
	t->kind = CLI_TRIGGER_BP;
	if (via == CLI_TRIGGER_BREAKPOINT)
		return 0;
	if (inherit) {
		t->kind = CLI_TRIGGER_UPROBE_TRACEFS;
		return 0;
	}
	r = auxcap_pmu_new(NULL, "uprobe", &pmu);
	auxcap_pmu_free(pmu);
	if (r == 0) {
		t->kind = CLI_TRIGGER_UPROBE_PMU;
		return 0;
	}
	if (via == CLI_TRIGGER_UPROBE) {
		cli_err("uprobes are not available on this kernel (%s: %s); use "
			"--trigger-via breakpoint",
			AUXCAP_PMU_SYSFS_ROOT "/uprobe", strerror(-r));
		return r;
	}
	cli_warn("uprobes are not available (no %s); --trigger-on uses an execute breakpoint",
		 AUXCAP_PMU_SYSFS_ROOT "/uprobe");
	return 0;
}

bool cli_trigger_needs_process(const struct cli_trigger *t)
{
	return t->kind == CLI_TRIGGER_BP && t->dyn;
}

/* A tracefs uprobe named after the symbol and this process.  Returns 0 or a negative errno. */
static int build_tracefs_uprobe(struct cli_trigger *t)
{
	char name[64];
	size_t n = 0;
	int r;

	for (const char *p = t->symbol; *p && n < 40; p++)
		name[n++] = (char)(((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				    (*p >= '0' && *p <= '9'))
					   ? *p
					   : '_');
	snprintf(name + n, sizeof(name) - n, "_%d", (int)getpid());
	r = auxcap_trigger_uprobe_tracefs_new(NULL, name, t->binary, t->file_offset, false,
					      &t->attr);
	if (r < 0)
		return r;
	snprintf(t->probe_name, sizeof(t->probe_name), "%s", name);
	if (t->min_ns) {
		char ret_name[72];

		snprintf(ret_name, sizeof(ret_name), "%s_ret", name);
		r = auxcap_trigger_uprobe_tracefs_new(NULL, ret_name, t->binary, t->file_offset,
						      true, &t->ret_attr);
		if (r < 0)
			return r;
		snprintf(t->ret_probe_name, sizeof(t->ret_probe_name), "%s", ret_name);
	}
	snprintf(t->desc, sizeof(t->desc), "%s@%s (uprobe auxcap:%s%s at file offset 0x%" PRIx64 ")",
		 t->symbol, t->binary, name, t->min_ns ? " and its return probe" : "",
		 t->file_offset);
	return 0;
}

static int build_breakpoint(struct cli_trigger *t, const pid_t *pids, size_t nr_pids)
{
	int r;

	t->addr = t->link_addr;
	if (t->dyn) {
		if (!nr_pids) {
			cli_err("--trigger-on %s with a breakpoint: %s is position-independent, so "
				"the function's address is known only in a running process; trace "
				"a command or -p/-t, or use a uprobe",
				t->symbol, t->binary);
			return -EINVAL;
		}
		for (size_t i = 0; i < nr_pids; i++) {
			uint64_t addr;

			r = auxcap_proc_find_addr(NULL, pids[i], t->binary, t->file_offset, &addr);
			if (r < 0) {
				cli_err("--trigger-on %s: %s is not mapped in process %d%s%s",
					t->symbol, t->binary, (int)pids[i], r == -ENXIO ? "" : ": ",
					r == -ENXIO
						? " (yet); for a library loaded later use a uprobe"
						: strerror(-r));
				return r;
			}
			if (i && addr != t->addr) {
				cli_err("--trigger-on %s: its address differs between the target "
					"processes (%d, %d); one breakpoint serves one process: "
					"trace one, or use a uprobe",
					t->symbol, (int)pids[0], (int)pids[i]);
				return -EINVAL;
			}
			t->addr = addr;
		}
	}
	/* Some VMs take breakpoint events but never fire them: a capture would wait forever. */
	if (auxcap_trigger_breakpoints_fire() == 0) {
		cli_err("--trigger-on %s: execute breakpoints do not fire on this machine (one on "
			"auxcap's own code counted no call: a virtual machine without debug "
			"registers?); use a uprobe (--trigger-via uprobe)",
			t->symbol);
		return -EOPNOTSUPP;
	}
	r = auxcap_trigger_breakpoint_attr(t->addr, &t->attr);
	if (r < 0) {
		cli_err("--trigger-on %s: bad address 0x%" PRIx64, t->symbol, t->addr);
		return r;
	}
	snprintf(t->desc, sizeof(t->desc), "%s@%s (breakpoint at 0x%" PRIx64 ")", t->symbol,
		 t->binary, t->addr);
	return 0;
}

int cli_trigger_build(struct cli_trigger *t, const pid_t *pids, size_t nr_pids)
{
	int r;

	if (t->min_ns && t->kind == CLI_TRIGGER_BP) {
		cli_err("--trigger-min-duration times each call of %s from its entry to its return, "
			"which takes a uprobe and a return probe; %s",
			t->symbol,
			t->via == CLI_TRIGGER_BREAKPOINT
				? "an execute breakpoint fires at the entry only (leave --trigger-via "
				  "breakpoint out)"
				: "this kernel has no uprobes (CONFIG_UPROBE_EVENTS)");
		return -EOPNOTSUPP;
	}

	if (t->kind == CLI_TRIGGER_UPROBE_TRACEFS) {
		r = build_tracefs_uprobe(t);
		if (r == 0)
			return 0;
		if (t->via == CLI_TRIGGER_UPROBE || (t->dyn && !nr_pids)) {
			cli_err("cannot make a uprobe for %s@%s in tracefs: %s (as root: mount -t "
				"tracefs nodev /sys/kernel/tracing; or --trigger-via breakpoint)",
				t->symbol, t->binary, strerror(-r));
			return r;
		}
		if (t->min_ns) {
			cli_err("cannot make a uprobe and a return probe for %s@%s in tracefs, "
				"which --trigger-min-duration needs: %s (as root: mount -t tracefs "
				"nodev /sys/kernel/tracing)",
				t->symbol, t->binary, strerror(-r));
			return r;
		}
		cli_warn("cannot make a uprobe for %s in tracefs (%s); using an execute breakpoint",
			 t->symbol, strerror(-r));
		t->kind = CLI_TRIGGER_BP;
	}
	if (t->kind == CLI_TRIGGER_BP)
		return build_breakpoint(t, pids, nr_pids);
	r = auxcap_trigger_uprobe_attr(NULL, t->binary, t->file_offset, false, &t->attr);
	if (r == 0 && t->min_ns)
		r = auxcap_trigger_uprobe_attr(NULL, t->binary, t->file_offset, true, &t->ret_attr);
	if (r < 0) {
		cli_err("cannot set up a uprobe%s for %s@%s: %s%s", t->min_ns ? " and a return probe" : "",
			t->symbol, t->binary, strerror(-r),
			t->min_ns ? "" : " (use --trigger-via breakpoint)");
		return r;
	}
	snprintf(t->desc, sizeof(t->desc), "%s@%s (uprobe%s at file offset 0x%" PRIx64 ")",
		 t->symbol, t->binary, t->min_ns ? " and return probe" : "", t->file_offset);
	return 0;
}

int cli_trigger_for_emulate(struct cli_trigger *t)
{
	if (t->via == CLI_TRIGGER_UPROBE) {
		cli_err("--trigger-via uprobe cannot be used with --emulate: the uprobe's int3 over "
			"%s's first instruction would be read and traced by the emulator's tracer; "
			"leave --trigger-via out (the tracer watches the function) or use breakpoint",
			t->symbol);
		return -EINVAL;
	}
	if (t->via == CLI_TRIGGER_BREAKPOINT) {
		if (t->dyn) {
			cli_err("--trigger-on %s with --emulate and a breakpoint: %s is "
				"position-independent, so the address is known only after the exec, "
				"when the breakpoint must be open already; leave --trigger-via out (the "
				"emulator's tracer watches the function)",
				t->symbol, t->binary);
			return -EINVAL;
		}
		t->kind = CLI_TRIGGER_BP;
		return 0;
	}
	t->kind = CLI_TRIGGER_TRACER;
	snprintf(t->desc, sizeof(t->desc),
		 "%s@%s (seen by the emulator's tracer at file offset 0x%" PRIx64 ")", t->symbol,
		 t->binary, t->file_offset);
	return 0;
}

/* Remove tracefs probe auxcap/@name if it was made (@name not empty), then forget it. */
static void delete_probe(char *name)
{
	int r;

	if (!name[0])
		return;
	r = auxcap_trigger_uprobe_tracefs_delete(NULL, name);
	if (r < 0)
		cli_warn("cannot remove uprobe auxcap:%s: %s (remove it with: echo "
			 "'-:auxcap/%s' >> /sys/kernel/tracing/uprobe_events)",
			 name, strerror(-r), name);
	name[0] = '\0';
}

void cli_trigger_fini(struct cli_trigger *t)
{
	delete_probe(t->ret_probe_name);
	delete_probe(t->probe_name);
	free(t->symbol);
	free(t->binary);
	t->symbol = t->binary = NULL;
}
