/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tracepoint samples as the kernel would print them, by their formats' "print fmt" (the
 * capture's TRACING_DATA), with libtraceevent: the only file that includes it.  What perf
 * script prints after the event name.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode_int.h"

#if AUXCAP_HAVE_LIBTRACEEVENT
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

struct tp_printer {
	struct tep_handle *tep;
};

int tp_printer_new(const struct auxcap_perf_features *ft, struct tp_printer **ret)
{
	struct tp_printer *p;
	size_t parsed = 0;

	*ret = NULL;
	if (!ft || !ft->nr_tp_formats)
		return -ENOENT;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	tep_set_loglevel(TEP_LOG_NONE); /* (library code does not print) */
	p->tep = tep_alloc();
	if (!p->tep) {
		free(p);
		return -ENOMEM;
	}
	/* the captures this reads: x86-64 and arm64, little-endian, 64-bit longs */
	tep_set_long_size(p->tep, 8);
	tep_set_file_bigendian(p->tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(p->tep, TEP_LITTLE_ENDIAN);
	for (size_t i = 0; i < ft->nr_tp_formats; i++)
		parsed += tep_parse_event(p->tep, ft->tp_formats[i].text,
					  (unsigned long)ft->tp_formats[i].len,
					  ft->tp_formats[i].system) == 0;
	if (!parsed) {
		tp_printer_free(p);
		return -ENOENT;
	}
	*ret = p;
	return 0;
}

int tp_printer_add_function(void *arg, const char *name, uint64_t addr)
{
	struct tp_printer *p = arg;

	return tep_register_function(p->tep, (char *)(uintptr_t)name, addr, NULL) < 0 ? -ENOMEM
										      : 0;
}

void tp_printer_free(struct tp_printer *p)
{
	if (!p)
		return;
	tep_free(p->tep);
	free(p);
}

int tp_printer_print(struct tp_printer *p, uint64_t id, const void *raw, size_t size, int cpu,
		     uint64_t time, char *buf, size_t n)
{
	struct tep_record rec;
	struct trace_seq s;
	size_t len;

	if (!n || size > INT32_MAX || id > INT32_MAX || !tep_find_event(p->tep, (int)id))
		return 0;
	memset(&rec, 0, sizeof(rec));
	rec.data = (void *)(uintptr_t)raw;
	rec.size = (int)size;
	rec.cpu = cpu;
	rec.ts = time;
	trace_seq_init(&s);
	tep_print_event(p->tep, &s, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	len = s.buffer ? strlen(s.buffer) : 0;
	if (len >= n)
		len = n - 1;
	if (len)
		memcpy(buf, s.buffer, len);
	buf[len] = '\0';
	trace_seq_destroy(&s);
	return (int)len;
}

#else /* !AUXCAP_HAVE_LIBTRACEEVENT */

int tp_printer_new(const struct auxcap_perf_features *ft, struct tp_printer **ret)
{
	(void)ft;
	*ret = NULL;
	return -EOPNOTSUPP;
}

int tp_printer_add_function(void *p, const char *name, uint64_t addr)
{
	(void)p;
	(void)name;
	(void)addr;
	return -EOPNOTSUPP;
}

void tp_printer_free(struct tp_printer *p)
{
	(void)p;
}

int tp_printer_print(struct tp_printer *p, uint64_t id, const void *raw, size_t size, int cpu,
		     uint64_t time, char *buf, size_t n)
{
	(void)p;
	(void)id;
	(void)raw;
	(void)size;
	(void)cpu;
	(void)time;
	(void)buf;
	(void)n;
	return -EOPNOTSUPP;
}

#endif
