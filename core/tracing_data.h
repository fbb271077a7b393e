/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TRACING_DATA blob perf needs to print tracepoint samples: the event format files of the
 * recorded tracepoints, copied from tracefs, in perf's "tracing 0.6" layout:
 *
 *	"\x17\x08Dtracing" "0.6\0"  u8 endian (0 little)  u8 sizeof(long)  u32 page size
 *	"header_page\0"  u64 size  <events/header_page>
 *	"header_event\0" u64 size  <events/header_event>
 *	u32 nr ftrace formats (0)
 *	u32 nr systems, per system: "name\0" u32 nr, per event: u64 size <events/SYS/NAME/format>
 *	u32 size <kallsyms> (0)   u32 size <printk_formats>   u64 size <saved_cmdlines> (0)
 *
 * (Layout read off a file written by perf 6.1 on this machine.)
 */
#ifndef AUXCAP_TRACING_DATA_H
#define AUXCAP_TRACING_DATA_H

#include <stddef.h>

/**
 * Build the blob for the @nr tracepoints @tps ("sys:name", borrowed) from tracefs at
 * @tracefs_root.  On success *@ret_buf (owned by the caller, free()) holds *@ret_len bytes.
 * Returns -EINVAL for a name without ':', the errno of reading a tracefs file (-ENOENT for an
 * unknown tracepoint), or -ENOMEM.
 */
int auxcap_tracing_data_build(const char *tracefs_root, const char *const *tps, size_t nr,
			      void **ret_buf, size_t *ret_len);

#endif
