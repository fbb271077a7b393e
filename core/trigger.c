/* SPDX-License-Identifier: BSD-3-Clause */
/* Function trigger events: uprobes and execute breakpoints (see auxcap/trigger.h). */
#include "auxcap/trigger.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/hw_breakpoint.h>

#include "auxcap/pmu.h"
#include "auxcap/sys.h"
#include "event.h"

static void trigger_common(struct perf_event_attr *a)
{
	a->size = sizeof(*a);
	a->sample_period = 1;
	a->wakeup_events = 1;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->disabled = 1;
}

int auxcap_trigger_uprobe_attr(const char *sysfs_root, const char *path, uint64_t file_offset,
			       bool retprobe, struct perf_event_attr *ret)
{
	struct auxcap_attr a;
	struct auxcap_pmu *pmu;
	int r;

	if (!path || !ret)
		return -EINVAL;
	r = auxcap_pmu_new(sysfs_root, "uprobe", &pmu);
	if (r < 0)
		return r;
	memset(&a, 0, sizeof(a));
	a.attr.type = pmu->type;
	a.attr.config1 = (uint64_t)(uintptr_t)path; /* uprobe_path */
	a.attr.config2 = file_offset;		    /* probe_offset */
	if (retprobe) {
		r = auxcap_pmu_set_term(pmu, "retprobe", 1, &a);
		if (r == -ENOENT)
			r = -ENOTSUP;
	}
	auxcap_pmu_free(pmu);
	if (r < 0)
		return r;
	trigger_common(&a.attr);
	*ret = a.attr;
	return 0;
}

int auxcap_trigger_breakpoint_attr(uint64_t addr, struct perf_event_attr *ret)
{
	if (!ret || !addr)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	ret->type = PERF_TYPE_BREAKPOINT;
	ret->bp_type = HW_BREAKPOINT_X;
	ret->bp_addr = addr;
	ret->bp_len = sizeof(long); /* what the kernel requires for execute breakpoints */
	ret->exclude_kernel = 1;
	ret->exclude_hv = 1;
	trigger_common(ret);
	return 0;
}

/* What the probe below watches: called through a volatile pointer, so never inlined away. */
__attribute__((noinline)) static int bp_probe_target(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

int auxcap_trigger_breakpoints_fire(void)
{
	int (*volatile fn)(int) = bp_probe_target;
	struct perf_event_attr a;
	uint64_t count = 0;
	int fd, r, x = 0;

	r = auxcap_trigger_breakpoint_attr((uint64_t)(uintptr_t)fn, &a);
	if (r < 0)
		return r;
	a.sample_period = 0; /* count */
	a.sample_type = 0;
	a.wakeup_events = 0;
	fd = auxcap_event_open(&auxcap_sys_linux, &a, 0, -1, -1, 0);
	if (fd < 0)
		return fd;
	r = auxcap_event_enable(&auxcap_sys_linux, fd, true);
	for (int i = 0; r == 0 && i < 3; i++)
		x = fn(x);
	if (r == 0)
		r = auxcap_event_enable(&auxcap_sys_linux, fd, false);
	if (r == 0 && auxcap_sys_linux.read(NULL, fd, &count, sizeof(count)) != sizeof(count))
		r = -EIO;
	(void)auxcap_sys_linux.close(NULL, fd);
	if (r < 0)
		return r;
	return count == (uint64_t)x;
}

/* The tracefs with a uprobe_events file: @given, or the usual mount points. */
static const char *tracefs_root(const char *given)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[PATH_MAX];

	if (given)
		return given;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/uprobe_events", roots[i]);
		if (access(path, F_OK) == 0)
			return roots[i];
	}
	return NULL;
}

/* Append @cmd to uprobe_events.  Returns 0 or a negative errno (the kernel's for the command). */
static int uprobe_events_write(const char *root, const char *cmd)
{
	char path[PATH_MAX];
	size_t len = strlen(cmd);
	ssize_t n;
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/uprobe_events", root);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, cmd, len);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len)
		r = -EIO;
	close(fd);
	return r;
}

static bool valid_name(const char *name)
{
	if (!name || !*name || strlen(name) > 63)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

int auxcap_trigger_uprobe_tracefs_new(const char *tracefs, const char *name, const char *path,
				      uint64_t file_offset, bool retprobe,
				      struct perf_event_attr *ret)
{
	const char *root = tracefs_root(tracefs);
	char cmd[PATH_MAX + 128], idpath[PATH_MAX], buf[32];
	unsigned long long id;
	ssize_t n;
	char *end;
	int fd, r;

	if (!path || !ret || !valid_name(name) || strpbrk(path, " \t\n"))
		return -EINVAL;
	if (!root)
		return -ENOENT;
	snprintf(cmd, sizeof(cmd), "%c:auxcap/%s %s:0x%" PRIx64 "\n", retprobe ? 'r' : 'p', name,
		 path, file_offset);
	r = uprobe_events_write(root, cmd);
	if (r < 0)
		return r;
	snprintf(idpath, sizeof(idpath), "%s/events/auxcap/%s/id", root, name);
	fd = open(idpath, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		goto err;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		r = n < 0 ? -errno : -EBADMSG;
		goto err;
	}
	buf[n] = '\0';
	errno = 0;
	id = strtoull(buf, &end, 10);
	if (errno || end == buf) {
		r = -EBADMSG;
		goto err;
	}
	memset(ret, 0, sizeof(*ret));
	ret->type = PERF_TYPE_TRACEPOINT;
	ret->config = id;
	trigger_common(ret);
	return 0;
err:
	(void)auxcap_trigger_uprobe_tracefs_delete(root, name);
	return r;
}

int auxcap_trigger_uprobe_tracefs_delete(const char *tracefs, const char *name)
{
	const char *root = tracefs_root(tracefs);
	char cmd[128];

	if (!valid_name(name))
		return -EINVAL;
	if (!root)
		return -ENOENT;
	snprintf(cmd, sizeof(cmd), "-:auxcap/%s\n", name);
	return uprobe_events_write(root, cmd);
}
