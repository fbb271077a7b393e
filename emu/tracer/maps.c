/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsing of /proc/PID/maps lines into the fields of a PERF_RECORD_MMAP2. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <sys/mman.h>

#include "tracer_int.h"

int auxcap_tracer_map_parse(const char *line, struct auxcap_tracer_map *ret)
{
	struct auxcap_tracer_map m;
	char perms[5];
	unsigned long long start, end, pgoff, ino;
	unsigned int maj, min;
	int n = 0;
	const char *p;
	size_t len;

	if (!line || !ret)
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	/* "start-end perms offset maj:min inode   path" */
	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &maj,
		   &min, &ino, &n) != 7 ||
	    n == 0 || end <= start || strlen(perms) != 4)
		return -EBADMSG;
	m.start = start;
	m.end = end;
	m.pgoff = pgoff;
	m.maj = maj;
	m.min = min;
	m.ino = ino;
	if (perms[0] == 'r')
		m.prot |= PROT_READ;
	if (perms[1] == 'w')
		m.prot |= PROT_WRITE;
	if (perms[2] == 'x')
		m.prot |= PROT_EXEC;
	m.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	p = line + n;
	len = strcspn(p, "\n");
	if (len == 0) {
		strcpy(m.path, "//anon");
	} else {
		if (len >= sizeof(m.path))
			return -EBADMSG;
		memcpy(m.path, p, len);
		m.path[len] = '\0';
	}
	*ret = m;
	return 0;
}
