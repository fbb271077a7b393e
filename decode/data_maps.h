/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every mapping of a capture, code and data (MMAP and MMAP2 records; the data ones are there
 * when the capture was made with attr.mmap_data, as an Arm SPE capture is), by process: what
 * names a data address that no variable holds ([stack], [heap], //anon, a file).  Internal to
 * the decode stage (auxcap_decode_data_map_at()).
 *
 * Memory grows with the mappings of the capture, not with its trace.  Names are kept once
 * each (a capture has thousands of //anon mappings and a few dozen names).  A look-up is a
 * binary search in the process's mappings by start, then a scan back over those that can
 * still hold the address (a JIT's process has thousands of mappings; an SPE capture looks
 * up millions of addresses).
 */
#ifndef AUXCAP_DECODE_DATA_MAPS_H
#define AUXCAP_DECODE_DATA_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct data_map {
	int32_t pid;
	bool dropped;	     /* its process exec'd after it, at a time not known */
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;	     /* file offset of @start (files), as the record gives it */
	uint64_t time;	     /* when it was made (perf time), 0 if not known */
	uint32_t name;	     /* index into the names */
	size_t seq;	     /* its place in the capture (ties of @time: the later wins) */
	uint64_t max_end;    /* once sorted: the largest end of its process's mappings up to
				it in (pid, start) order, where a look-up's scan back stops */
};

struct data_maps {
	struct data_map *v; /* sorted by (pid, start) on the first look-up after an add */
	size_t n, cap;
	bool sorted;
	char **names; /* owned */
	size_t nr_names, cap_names;
};

/* Add a mapping of @pid; @name is copied (once per distinct name).  0 or -ENOMEM. */
int data_maps_add(struct data_maps *m, int32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		  const char *name, uint64_t time);

/* An exec of @pid without a time: its mappings seen so far are gone. */
void data_maps_drop(struct data_maps *m, int32_t pid);

/*
 * The mapping holding @addr in @pid at perf time @t: of those made at or before @t (or at a
 * time not known), the newest, unless an exec of @pid replaced the image in between; with
 * none, the first made after @t with no exec between (a record stamped a little late).
 * @execs: @pid's exec times, ascending (@nr_execs of them).  NULL if none.  The first look-up
 * after an add sorts the mappings (no allocation).
 */
const struct data_map *data_maps_find(struct data_maps *m, int32_t pid, uint64_t addr,
				      uint64_t t, const uint64_t *execs, size_t nr_execs);

static inline const char *data_map_name(const struct data_maps *m, const struct data_map *dm)
{
	return m->names[dm->name];
}

/* A file's path, not "//anon", "[stack]" or "[heap]": its pgoff is a file offset. */
static inline bool data_map_name_is_file(const char *name)
{
	return name[0] == '/' && name[1] != '/';
}

void data_maps_free(struct data_maps *m);

#endif
