/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ordering for the shared control page; the only place that knows about barriers.
 *
 * The kernel writes record bytes, then (write barrier) data_head/aux_head.  The consumer must
 * load the head with acquire semantics before it reads record bytes, and store the tail with
 * release semantics only after its last read of those bytes (a load->store ordering, so a
 * plain write barrier is not enough).  The uapi fields are plain __u64, not _Atomic, hence
 * the __atomic builtins.  See spec/kernel-aux-abi.md section 1.2.
 */
#ifndef AUXCAP_BARRIER_H
#define AUXCAP_BARRIER_H

#include <linux/types.h>
#include <stdint.h>

static inline uint64_t auxcap_load_acquire_u64(const volatile __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void auxcap_store_release_u64(volatile __u64 *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline uint64_t auxcap_load_relaxed_u64(const volatile __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void auxcap_store_relaxed_u64(volatile __u64 *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

#endif /* AUXCAP_BARRIER_H */
