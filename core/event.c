/* SPDX-License-Identifier: BSD-3-Clause */
/* Opening events and mapping data rings through the syscall seam. */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "event.h"

int auxcap_event_open(const struct auxcap_sys *sys, struct perf_event_attr *attr, pid_t pid,
		      int cpu, int group_fd, unsigned long flags)
{
	if (!sys || !attr)
		return -EINVAL;
	attr->size = sizeof(*attr);
	return sys->perf_event_open(sys->ctx, attr, pid, cpu, group_fd,
				    flags | PERF_FLAG_FD_CLOEXEC);
}

int auxcap_event_open_attr(const struct auxcap_sys *sys, struct auxcap_attr *attr, pid_t pid,
			   int cpu, int group_fd, unsigned long flags)
{
	if (!sys || !attr)
		return -EINVAL;
	attr->attr.size = auxcap_attr_size(attr);
	return sys->perf_event_open(sys->ctx, &attr->attr, pid, cpu, group_fd,
				    flags | PERF_FLAG_FD_CLOEXEC);
}

int auxcap_mapped_ring_open(const struct auxcap_sys *sys, int fd, size_t data_pages,
			    unsigned int flags, struct auxcap_mapped_ring *ret)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int prot = PROT_READ;
	void *base = NULL;
	size_t len;
	int r;

	if (!sys || !ret || fd < 0)
		return -EINVAL;
	if (data_pages & (data_pages - 1))
		return -EINVAL;
	if (data_pages > (SIZE_MAX / page) - 1)
		return -EINVAL;
	if (!(flags & AUXCAP_RING_OVERWRITE))
		prot |= PROT_WRITE;
	len = (1 + data_pages) * page;

	r = sys->mmap(sys->ctx, len, prot, MAP_SHARED, fd, 0, &base);
	if (r < 0)
		return r;
	memset(ret, 0, sizeof(*ret));
	r = auxcap_ring_init(&ret->ring, base, len, page, flags);
	if (r < 0) {
		(void)sys->munmap(sys->ctx, base, len);
		return r;
	}
	ret->sys = sys;
	ret->fd = fd;
	ret->base = base;
	ret->len = len;
	return 0;
}

void auxcap_mapped_ring_close(struct auxcap_mapped_ring *mr)
{
	if (!mr || !mr->base)
		return;
	auxcap_ring_fini(&mr->ring);
	(void)mr->sys->munmap(mr->sys->ctx, mr->base, mr->len);
	mr->base = NULL;
}

int auxcap_event_pause_output(const struct auxcap_sys *sys, int fd, bool pause)
{
	return sys->ioctl(sys->ctx, fd, PERF_EVENT_IOC_PAUSE_OUTPUT, pause ? 1 : 0);
}

int auxcap_event_enable(const struct auxcap_sys *sys, int fd, bool enable)
{
	return sys->ioctl(sys->ctx, fd, enable ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE,
			  0);
}

int auxcap_event_id(const struct auxcap_sys *sys, int fd, uint64_t *ret_id)
{
	uint64_t id;
	int r;

	r = sys->ioctl(sys->ctx, fd, PERF_EVENT_IOC_ID, (unsigned long)&id);
	if (r < 0)
		return r;
	*ret_id = id;
	return 0;
}

int auxcap_event_read_count(const struct auxcap_sys *sys, int fd, uint64_t read_format,
			    struct auxcap_count *ret)
{
	uint64_t buf[8];
	struct auxcap_count c;
	size_t want = 8, i = 0;
	ssize_t n;

	if (read_format & PERF_FORMAT_GROUP)
		return -EINVAL;
	want += (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) ? 8 : 0;
	want += (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) ? 8 : 0;
	want += (read_format & PERF_FORMAT_ID) ? 8 : 0;
	want += (read_format & PERF_FORMAT_LOST) ? 8 : 0;
	n = sys->read(sys->ctx, fd, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if ((size_t)n < want)
		return -EBADMSG;

	memset(&c, 0, sizeof(c));
	c.value = buf[i++];
	if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
		c.time_enabled = buf[i++];
	if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
		c.time_running = buf[i++];
	if (read_format & PERF_FORMAT_ID)
		c.id = buf[i++];
	if (read_format & PERF_FORMAT_LOST)
		c.lost = buf[i++];
	*ret = c;
	return 0;
}

const char *auxcap_event_open_hint(int err)
{
	switch (err) {
	case -EACCES:
	case -EPERM:
		return "run as root, grant CAP_PERFMON, or lower /proc/sys/kernel/perf_event_paranoid "
		       "(e.g. sysctl kernel.perf_event_paranoid=1)";
	case -ENOENT:
		return "the event or PMU does not exist on this machine; see 'auxcap list'";
	case -ENODEV:
		return "the PMU does not support this event here (no such hardware or CPU)";
	case -EOPNOTSUPP:
		return "the PMU does not support a requested feature (sampling, AUX area, "
		       "exclude bits); drop that option";
	case -EBUSY:
		return "the PMU is in use by another tracer (only one Intel PT/BTS user per CPU); "
		       "stop it and retry";
	case -EMFILE:
		return "too many open files: raise 'ulimit -n' or trace fewer CPUs";
	case -EINVAL:
		return "the kernel rejected the event attributes (unsupported term or value on this "
		       "kernel)";
	case -E2BIG:
		return "this kernel is older than the attribute layout auxcap uses";
	default:
		return NULL;
	}
}
