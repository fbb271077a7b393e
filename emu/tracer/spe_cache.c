/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The memory hierarchy behind the emulated Arm SPE unit (enc_spe.c): a data TLB, an L1 data
 * cache, a private L2 and a last-level cache, looked up with the virtual address of every
 * data access the tracer reports, so that a sampled load or store can say where it was served
 * and how long it took.  The latencies are enc_spe.c's; this file only says hit or miss.
 *
 *   L1D  32 KiB, 8-way, 64-byte lines (64 sets)
 *   L2   256 KiB, 8-way, 64-byte lines (512 sets)
 *   LLC  2 MiB, 16-way, 64-byte lines (2048 sets)
 *   DTLB 64 entries, 4-way, 4 KiB pages (16 sets)
 *
 * Each set is replaced in true LRU order: every way holds the stamp of its last use (a
 * counter of accesses; 0 marks an empty way) and a miss fills the way with the oldest stamp.
 * Sets are indexed by the low bits of the line (page) number, tags are the whole number.
 *
 * An access looks the levels up in order and stops at the first that holds its line: an L1
 * hit touches neither the L2 nor the LLC, an L1 miss looks the L2 up, an L2 hit is served
 * there (the LLC is not looked up, its LRU order does not change), an L2 miss looks the LLC
 * up.  Every level that missed is filled (so an LLC miss fills all three).  The L2 and the
 * LLC are non-inclusive: a line evicted from one level stays where else it is (no
 * back-invalidation) and an evicted line is not written to the next level (no victim fill).
 *
 * Approximations: an access is one line, the line of its first byte (one that straddles two
 * lines touches only the first); loads and stores are alike (stores allocate, nothing is
 * written back); no prefetcher, no coherence with other threads or the kernel (the traced
 * thread is the only user), no large pages, and the caches are indexed and tagged by virtual
 * address (no aliasing, no physical addresses).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "tracer_int.h"

#define SPE_CACHE_LINE_SHIFT 6	/* 64-byte lines */
#define SPE_CACHE_PAGE_SHIFT 12 /* 4 KiB pages */

#define SPE_L1D_SETS  64u /* 32 KiB / 64 B / 8 ways */
#define SPE_L1D_WAYS  8u
#define SPE_L2_SETS   512u /* 256 KiB / 64 B / 8 ways */
#define SPE_L2_WAYS   8u
#define SPE_LLC_SETS  2048u /* 2 MiB / 64 B / 16 ways */
#define SPE_LLC_WAYS  16u
#define SPE_DTLB_SETS 16u /* 64 entries / 4 ways */
#define SPE_DTLB_WAYS 4u

/* One way of a set. */
struct spe_way {
	uint64_t tag;	/* line or page number */
	uint64_t stamp; /* access counter at its last use; 0: empty */
};

struct auxcap_tracer_spe_cache {
	uint64_t clock; /* accesses so far: the LRU stamps */
	struct spe_way l1d[SPE_L1D_SETS * SPE_L1D_WAYS];
	struct spe_way l2[SPE_L2_SETS * SPE_L2_WAYS];
	struct spe_way llc[SPE_LLC_SETS * SPE_LLC_WAYS];
	struct spe_way dtlb[SPE_DTLB_SETS * SPE_DTLB_WAYS];
};

/*
 * Look up @tag in its set of @ways (of a structure with @sets sets, a power of two), stamped
 * @now; a miss replaces the least recently used way.  Returns true on a hit.
 */
static bool lookup(struct spe_way *ways, uint32_t sets, uint32_t nways, uint64_t tag, uint64_t now)
{
	struct spe_way *set = ways + (size_t)(tag & (sets - 1)) * nways, *victim = set;

	for (uint32_t i = 0; i < nways; i++) {
		if (set[i].stamp && set[i].tag == tag) {
			set[i].stamp = now;
			return true;
		}
		if (set[i].stamp < victim->stamp)
			victim = &set[i];
	}
	victim->tag = tag;
	victim->stamp = now;
	return false;
}

int auxcap_tracer_spe_cache_new(struct auxcap_tracer_spe_cache **ret_cache)
{
	struct auxcap_tracer_spe_cache *c;

	if (!ret_cache)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*ret_cache = c;
	return 0;
}

void auxcap_tracer_spe_cache_free(struct auxcap_tracer_spe_cache *cache)
{
	free(cache);
}

unsigned int auxcap_tracer_spe_cache_access(struct auxcap_tracer_spe_cache *cache, uint64_t addr)
{
	uint64_t line = addr >> SPE_CACHE_LINE_SHIFT, now = ++cache->clock;
	unsigned int miss = 0;

	if (!lookup(cache->dtlb, SPE_DTLB_SETS, SPE_DTLB_WAYS, addr >> SPE_CACHE_PAGE_SHIFT, now))
		miss |= AUXCAP_TRACER_SPE_CACHE_TLB_WALK;
	if (lookup(cache->l1d, SPE_L1D_SETS, SPE_L1D_WAYS, line, now))
		return miss;
	miss |= AUXCAP_TRACER_SPE_CACHE_L1_MISS;
	if (lookup(cache->l2, SPE_L2_SETS, SPE_L2_WAYS, line, now))
		return miss; /* served by the L2: the LLC is not looked up */
	miss |= AUXCAP_TRACER_SPE_CACHE_L2_MISS;
	if (!lookup(cache->llc, SPE_LLC_SETS, SPE_LLC_WAYS, line, now))
		miss |= AUXCAP_TRACER_SPE_CACHE_LLC_MISS;
	return miss;
}
