/* SPDX-License-Identifier: BSD-3-Clause */
/* Fault injection through the syscall and writer I/O seams (see fault_sys.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "auxcap/emu.h"
#include "fault_sys.h"

const char *fault_kind_name(enum fault_kind kind)
{
	static const char *const names[] = { "perf_event_open", "mmap", "munmap", "ioctl",
					     "poll", "read", "close" };

	return kind < FAULT_NR_KINDS ? names[kind] : "?";
}

/* Count a call of @kind; true if it is the one to fail. */
static bool hit(struct fault_sys *fs, enum fault_kind kind)
{
	fs->calls[kind]++;
	if ((int)kind == fs->fail_kind && fs->calls[kind] == fs->fail_at) {
		fs->injected = true;
		return true;
	}
	return false;
}

static int f_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		  unsigned long flags)
{
	struct fault_sys *fs = ctx;
	int fd;

	if (hit(fs, FAULT_OPEN))
		return fs->fail_err;
	fd = fs->inner->perf_event_open(fs->inner->ctx, attr, pid, cpu, group_fd, flags);
	if (fd >= 0) {
		if (fs->nr_fds < FAULT_MAX_LIVE)
			fs->fds[fs->nr_fds++] = fd;
		if (attr->type >= AUXCAP_EMU_TYPE_BASE)
			fs->last_emu_fd = fd;
	}
	return fd;
}

static int f_mmap(void *ctx, size_t len, int prot, int flags, int fd, off_t off, void **ret)
{
	struct fault_sys *fs = ctx;
	void *addr = NULL;
	int r;

	if (hit(fs, FAULT_MMAP))
		return fs->fail_err;
	r = fs->inner->mmap(fs->inner->ctx, len, prot, flags, fd, off, &addr);
	if (r == 0) {
		if (fs->nr_maps < FAULT_MAX_LIVE) {
			fs->maps[fs->nr_maps].addr = addr;
			fs->maps[fs->nr_maps].len = len;
			fs->nr_maps++;
		}
		*ret = addr;
	}
	return r;
}

static int f_munmap(void *ctx, void *addr, size_t len)
{
	struct fault_sys *fs = ctx;
	bool fail = hit(fs, FAULT_MUNMAP);
	size_t i;
	int r;

	for (i = 0; i < fs->nr_maps; i++)
		if (fs->maps[i].addr == addr && fs->maps[i].len == len)
			break;
	if (i == fs->nr_maps)
		fs->bad_unmaps++;
	else
		fs->maps[i] = fs->maps[--fs->nr_maps];
	r = fs->inner->munmap(fs->inner->ctx, addr, len);
	return fail ? fs->fail_err : r;
}

static int f_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	struct fault_sys *fs = ctx;

	if (hit(fs, FAULT_IOCTL)) {
		fs->failed_request = request;
		return fs->fail_err;
	}
	return fs->inner->ioctl(fs->inner->ctx, fd, request, arg);
}

static int f_poll(void *ctx, struct pollfd *fds, nfds_t nfds, int timeout_ms)
{
	struct fault_sys *fs = ctx;

	if (hit(fs, FAULT_POLL))
		return fs->fail_err;
	return fs->inner->poll(fs->inner->ctx, fds, nfds, timeout_ms);
}

static ssize_t f_read(void *ctx, int fd, void *buf, size_t len)
{
	struct fault_sys *fs = ctx;

	if (hit(fs, FAULT_READ))
		return fs->fail_err;
	return fs->inner->read(fs->inner->ctx, fd, buf, len);
}

static int f_close(void *ctx, int fd)
{
	struct fault_sys *fs = ctx;
	bool fail = hit(fs, FAULT_CLOSE);
	size_t i;
	int r;

	for (i = 0; i < fs->nr_fds; i++)
		if (fs->fds[i] == fd)
			break;
	if (i == fs->nr_fds)
		fs->bad_closes++;
	else
		fs->fds[i] = fs->fds[--fs->nr_fds];
	r = fs->inner->close(fs->inner->ctx, fd);
	return fail ? fs->fail_err : r;
}

void fault_sys_init(struct fault_sys *fs, const struct auxcap_sys *inner)
{
	memset(fs, 0, sizeof(*fs));
	fs->inner = inner;
	fs->fail_kind = -1;
	fs->last_emu_fd = -1;
	fs->sys = (struct auxcap_sys){
		.ctx = fs,
		.perf_event_open = f_open,
		.mmap = f_mmap,
		.munmap = f_munmap,
		.ioctl = f_ioctl,
		.poll = f_poll,
		.read = f_read,
		.close = f_close,
	};
}

void fault_sys_plan(struct fault_sys *fs, enum fault_kind kind, unsigned long at, int err)
{
	fs->fail_kind = (int)kind;
	fs->fail_at = at;
	fs->fail_err = err;
}

static ssize_t io_writev(void *ctx, int fd, const struct iovec *iov, int iovcnt, int64_t off)
{
	struct fault_io *fio = ctx;

	fio->writes++;
	if (fio->fail_from && fio->writes >= fio->fail_from) {
		fio->failures++;
		return fio->fail_err;
	}
	return auxcap_perf_io_linux.writev(auxcap_perf_io_linux.ctx, fd, iov, iovcnt, off);
}

static int io_truncate(void *ctx, int fd, uint64_t len)
{
	(void)ctx;
	return auxcap_perf_io_linux.truncate(auxcap_perf_io_linux.ctx, fd, len);
}

void fault_io_init(struct fault_io *fio, unsigned long fail_from, int err)
{
	memset(fio, 0, sizeof(*fio));
	fio->io = (struct auxcap_perf_io){ .ctx = fio, .writev = io_writev, .truncate = io_truncate };
	fio->fail_from = fail_from;
	fio->fail_err = err;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

void fault_list_fds(char *buf, size_t len)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int fds[4096];
	size_t n = 0, used = 0;

	buf[0] = '\0';
	if (!d)
		return;
	while ((de = readdir(d)) && n < 4096) {
		if (de->d_name[0] == '.' || atoi(de->d_name) == dirfd(d))
			continue;
		fds[n++] = atoi(de->d_name);
	}
	closedir(d);
	qsort(fds, n, sizeof(fds[0]), cmp_int);
	for (size_t i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? " " : "", fds[i]);
}

size_t fault_count_maps(const char *needle)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	size_t n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			n++;
	fclose(f);
	return n;
}
