/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsing of /proc/PID/maps lines into the fields of a PERF_RECORD_MMAP2. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>

#include "tracer_int.h"

/* Parse a number in @base ending at @stop (or at a blank if @stop is ' '); advance *@p past it. */
static int field(const char **p, int base, char stop, uint64_t *ret)
{
	const char *s = *p;
	char *end;
	unsigned long long v;

	if (!((*s >= '0' && *s <= '9') || (base == 16 && strchr("abcdefABCDEF", *s) && *s)))
		return -EBADMSG;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || end == s || *end != stop)
		return -EBADMSG;
	*ret = v;
	*p = end + 1;
	return 0;
}

int auxcap_tracer_map_parse(const char *line, struct auxcap_tracer_map *ret)
{
	struct auxcap_tracer_map m;
	uint64_t maj, min;
	const char *p = line;
	size_t len;

	if (!line || !ret)
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	/* "start-end perms offset maj:min inode   path" */
	if (field(&p, 16, '-', &m.start) < 0 || field(&p, 16, ' ', &m.end) < 0 || m.end <= m.start)
		return -EBADMSG;
	if (strlen(p) < 5 || p[4] != ' ')
		return -EBADMSG;
	if (p[0] == 'r')
		m.prot |= PROT_READ;
	if (p[1] == 'w')
		m.prot |= PROT_WRITE;
	if (p[2] == 'x')
		m.prot |= PROT_EXEC;
	m.flags = p[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	p += 5;
	if (field(&p, 16, ' ', &m.pgoff) < 0 || field(&p, 16, ':', &maj) < 0 ||
	    field(&p, 16, ' ', &min) < 0 || maj > UINT32_MAX || min > UINT32_MAX)
		return -EBADMSG;
	m.maj = (uint32_t)maj;
	m.min = (uint32_t)min;
	/* The inode is the last field when there is no path: it may end the line. */
	len = strspn(p, "0123456789");
	if (len == 0 || (p[len] != ' ' && p[len] != '\n' && p[len] != '\0'))
		return -EBADMSG;
	m.ino = strtoull(p, NULL, 10);
	p += len;
	p += strspn(p, " ");
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
