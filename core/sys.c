/* SPDX-License-Identifier: BSD-3-Clause */
/* auxcap_sys_linux: the syscall seam backed by the real kernel. */
#include <errno.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "auxcap/sys.h"

static int linux_perf_event_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu,
				 int group_fd, unsigned long flags)
{
	long fd;

	(void)ctx;
	fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
	return fd < 0 ? -errno : (int)fd;
}

static int linux_mmap(void *ctx, size_t len, int prot, int flags, int fd, off_t off,
		      void **ret_addr)
{
	void *p;

	(void)ctx;
	p = mmap(NULL, len, prot, flags, fd, off);
	if (p == MAP_FAILED)
		return -errno;
	*ret_addr = p;
	return 0;
}

static int linux_munmap(void *ctx, void *addr, size_t len)
{
	(void)ctx;
	return munmap(addr, len) < 0 ? -errno : 0;
}

static int linux_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	int r;

	(void)ctx;
	r = ioctl(fd, request, arg);
	return r < 0 ? -errno : r;
}

static int linux_poll(void *ctx, struct pollfd *fds, nfds_t nfds, int timeout_ms)
{
	int r;

	(void)ctx;
	r = poll(fds, nfds, timeout_ms);
	return r < 0 ? -errno : r;
}

static ssize_t linux_read(void *ctx, int fd, void *buf, size_t len)
{
	ssize_t r;

	(void)ctx;
	r = read(fd, buf, len);
	return r < 0 ? -errno : r;
}

static int linux_close(void *ctx, int fd)
{
	(void)ctx;
	return close(fd) < 0 ? -errno : 0;
}

const struct auxcap_sys auxcap_sys_linux = {
	.ctx = NULL,
	.perf_event_open = linux_perf_event_open,
	.mmap = linux_mmap,
	.munmap = linux_munmap,
	.ioctl = linux_ioctl,
	.poll = linux_poll,
	.read = linux_read,
	.close = linux_close,
};
