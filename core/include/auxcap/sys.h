/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The syscall seam.
 *
 * Every perf_event system call libauxcap makes goes through a struct auxcap_sys.  The real
 * Linux implementation is auxcap_sys_linux; the emulated AUX PMU (emu/) provides another that
 * forwards the fds it does not own to the real one, and tests provide scripted fakes for
 * error injection.  Functions in the table never touch errno: they return a negative errno.
 */
#ifndef AUXCAP_SYS_H
#define AUXCAP_SYS_H

#include <poll.h>
#include <stddef.h>
#include <sys/types.h>

struct perf_event_attr;

struct auxcap_sys {
	/** Opaque context passed back to every function (NULL for auxcap_sys_linux). */
	void *ctx;

	/** perf_event_open(2).  Returns the new fd, or a negative errno. */
	int (*perf_event_open)(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu,
			       int group_fd, unsigned long flags);
	/**
	 * mmap(2) of an event fd.  On success stores the mapping in @ret_addr and returns 0;
	 * returns a negative errno otherwise and leaves @ret_addr untouched.
	 */
	int (*mmap)(void *ctx, size_t len, int prot, int flags, int fd, off_t off,
		    void **ret_addr);
	/** munmap(2).  Returns 0 or a negative errno. */
	int (*munmap)(void *ctx, void *addr, size_t len);
	/** ioctl(2) with an integer or pointer argument.  Returns >= 0 or a negative errno. */
	int (*ioctl)(void *ctx, int fd, unsigned long request, unsigned long arg);
	/** poll(2).  Returns the number of ready fds, 0 on timeout, or a negative errno. */
	int (*poll)(void *ctx, struct pollfd *fds, nfds_t nfds, int timeout_ms);
	/** read(2).  Returns the bytes read or a negative errno. */
	ssize_t (*read)(void *ctx, int fd, void *buf, size_t len);
	/** close(2).  Returns 0 or a negative errno. */
	int (*close)(void *ctx, int fd);
};

/** The real kernel. */
extern const struct auxcap_sys auxcap_sys_linux;

#endif /* AUXCAP_SYS_H */
