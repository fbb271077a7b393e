/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by tests: skipping with a reason, tracefs, synthetic rings. */
#ifndef AUXCAP_TEST_UTIL_H
#define AUXCAP_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define TEST_SKIP 77 /* meson: SKIP */

/* Print why a test cannot run here and exit 77. */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * Make sure tracefs is mounted (mounting it at /sys/kernel/tracing when it is not and we may)
 * and return its path, or NULL.
 */
const char *test_tracefs(void);

/* The perf type-config of tracepoint "sys:name" (from tracefs), or a negative errno. */
int64_t test_tracepoint_id(const char *sys, const char *name);

/*
 * Skip (exit 77) unless perf_event_open works for a software event in this process; a test
 * of the real kernel calls this first.  @need_kernel_tracepoints also checks tracefs.
 */
void test_require_perf(int need_tracefs);

/* A synthetic data ring in malloc'd memory: control page + @data_size bytes. */
struct fake_ring {
	void *base;       /* control page followed by the data */
	size_t map_len;   /* 4096 + data_size */
	size_t data_size; /* power of two */
	uint64_t head;    /* producer position (free-running) */
};

void fake_ring_init(struct fake_ring *fr, size_t data_size);
void fake_ring_fini(struct fake_ring *fr);
/* Write @len bytes of @rec at the producer position (wrapping) without publishing. */
void fake_ring_put(struct fake_ring *fr, const void *rec, size_t len);
/* Publish the producer position as data_head (release). */
void fake_ring_publish(struct fake_ring *fr);
/* Build a record of @type with @size bytes whose payload is u64 words seq, seq+1, ... */
void fake_record(void *buf, uint32_t type, uint16_t size, uint64_t seq);


#include <sys/types.h>

/* Make a new directory /tmp/auxcap-@tag-XXXXXX into @dir (@n bytes).  Returns 0 or -1. */
int test_tmpdir(char *dir, size_t n, const char *tag);
/* Remove @dir and everything under it.  Returns 0 or -1. */
int test_rmtree(const char *dir);

/*
 * Fork a child that waits until test_spawn_go() before exec'ing @argv, so that events can be
 * attached to its pid first.  Returns the pid; *ret_go_fd is the write end of the go pipe.
 */
pid_t test_spawn(char *const argv[], int *ret_go_fd);
/* Let the child exec. */
void test_spawn_go(int go_fd);
/* Wait for @pid; returns its exit status (or 128 + signal). */
int test_wait(pid_t pid);

/* A segment of a fake /proc/kcore (test_write_kcore()): @size bytes of @bytes at @vaddr. */
struct test_kseg {
	uint64_t vaddr;
	const void *bytes;
	size_t size;
};

/* Write @path as a kcore is laid out: an ELF64 core file (x86-64) with a PT_LOAD segment for
 * each of @segs.  Returns 0 or -1 (errno set). */
int test_write_kcore(const char *path, const struct test_kseg *segs, size_t n);

#endif
