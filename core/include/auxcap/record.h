/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Decoded perf_event records.
 *
 * auxcap_record_parse() turns the bytes of one kernel record (as read from a data ring or a
 * perf.data file) into a struct auxcap_record.  Scalars are copied out; variable-length
 * payloads (file names, callchains, raw data, AUX samples, ...) are *borrowed* pointers into
 * the caller's buffer, valid as long as that buffer is.  Borrowed arrays may be unaligned:
 * read their elements with auxcap_get_u64().
 *
 * Layouts follow spec/kernel-aux-abi.md section 6: PERF_RECORD_SAMPLE fields in the kernel's
 * output order (not bit order), and the sample_id trailer on every other record when
 * attr.sample_id_all is set.
 */
#ifndef AUXCAP_RECORD_H
#define AUXCAP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct perf_event_attr;

/** What the parser needs to know of the attr that produced a record. */
struct auxcap_sample_layout {
	uint64_t sample_type;        /* attr.sample_type (PERF_SAMPLE_* bits) */
	uint64_t read_format;        /* attr.read_format (PERF_FORMAT_* bits) */
	uint64_t branch_sample_type; /* attr.branch_sample_type (for BRANCH_HW_INDEX) */
	uint64_t sample_regs_user;   /* attr.sample_regs_user (register mask) */
	uint64_t sample_regs_intr;   /* attr.sample_regs_intr (register mask) */
	bool sample_id_all;          /* attr.sample_id_all */
};

/** The sample_id trailer of non-SAMPLE records; fields valid per @present. */
struct auxcap_sample_id {
	uint64_t present; /* PERF_SAMPLE_{TID,TIME,ID,STREAM_ID,CPU,IDENTIFIER} bits present */
	uint32_t pid, tid;
	uint64_t time;    /* perf clock, ns */
	uint64_t id;      /* event id (ID or IDENTIFIER) */
	uint64_t stream_id;
	uint32_t cpu;
};

struct auxcap_sample {
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time; /* perf clock, ns */
	uint64_t addr;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t period;
	struct {
		const void *data; /* borrowed, read_format layout */
		size_t size;      /* bytes */
	} read;
	struct {
		uint64_t nr;
		const void *ips; /* borrowed, nr u64 */
	} callchain;
	struct {
		uint32_t size;    /* bytes, including padding */
		const void *data; /* borrowed */
	} raw;
	struct {
		uint64_t nr;
		uint64_t hw_idx;       /* valid with PERF_SAMPLE_BRANCH_HW_INDEX */
		const void *entries;   /* borrowed, nr entries of 24 bytes: from, to, flags */
	} branch_stack;
	struct {
		uint64_t abi;
		unsigned int nr;  /* number of registers (popcount of the mask), 0 if abi is 0 */
		const void *regs; /* borrowed, nr u64 */
	} regs_user, regs_intr;
	struct {
		uint64_t size; /* bytes of stack data */
		const void *data;
		uint64_t dyn_size;
	} stack_user;
	uint64_t weight; /* WEIGHT, or the raw WEIGHT_STRUCT word */
	uint64_t data_src;
	uint64_t transaction;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;
	struct {
		uint64_t size; /* bytes */
		const void *data; /* borrowed */
	} aux;
};

struct auxcap_record {
	uint32_t type; /* PERF_RECORD_* */
	uint16_t misc;
	uint16_t size; /* bytes, header included */
	const void *data; /* borrowed: the whole record */
	union {
		struct { /* MMAP and MMAP2 */
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t maj, min;           /* MMAP2 without build id */
			uint64_t ino, ino_generation; /* MMAP2 without build id */
			uint8_t build_id_size;       /* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
			const uint8_t *build_id;     /* borrowed, build_id_size bytes */
			uint32_t prot, flags;        /* MMAP2 */
			const char *filename;        /* borrowed, NUL-terminated */
		} mmap;
		struct {
			uint64_t id, lost;
		} lost;
		struct {
			uint32_t pid, tid;
			const char *comm; /* borrowed, NUL-terminated */
		} comm;
		struct { /* FORK and EXIT */
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} task;
		struct { /* THROTTLE and UNTHROTTLE */
			uint64_t time, id, stream_id;
		} throttle;
		struct {
			uint32_t pid, tid;
			const void *values; /* borrowed, read_format layout */
			size_t size;
		} read;
		struct auxcap_sample sample;
		struct {
			uint64_t aux_offset, aux_size, flags; /* PERF_AUX_FLAG_* */
		} aux;
		struct {
			uint32_t pid, tid;
		} itrace_start;
		struct {
			uint64_t lost;
		} lost_samples;
		struct {
			uint32_t next_prev_pid, next_prev_tid; /* SWITCH_CPU_WIDE only */
		} context_switch;
		struct {
			uint32_t pid, tid;
			uint64_t nr;
			const void *link_info; /* borrowed, nr {dev, inode} u64 pairs */
		} namespaces;
		struct {
			uint64_t addr;
			uint32_t len;
			uint16_t ksym_type, flags;
			const char *name; /* borrowed */
		} ksymbol;
		struct {
			uint16_t type, flags;
			uint32_t id;
			uint8_t tag[8];
		} bpf_event;
		struct {
			uint64_t id;
			const char *path; /* borrowed */
		} cgroup;
		struct {
			uint64_t addr;
			uint16_t old_len, new_len;
			const void *bytes; /* borrowed, old_len + new_len bytes */
		} text_poke;
		struct {
			uint64_t hw_id;
		} aux_output_hw_id;
	} u;
	bool has_sample_id;           /* @sid holds a trailer (non-SAMPLE with sample_id_all) */
	struct auxcap_sample_id sid;
};

/** Fill @l from the fields of @attr that shape records. */
void auxcap_sample_layout_from_attr(const struct perf_event_attr *attr,
				    struct auxcap_sample_layout *l);

/** Bytes of the sample_id trailer @l implies (0 without sample_id_all). */
size_t auxcap_sample_id_size(const struct auxcap_sample_layout *l);

/**
 * Byte offset of the time field in a PERF_RECORD_SAMPLE laid out as @l (from the record
 * header; the fields before it are IDENTIFIER, IP and TID), or 0 if it has none.
 */
size_t auxcap_sample_time_offset(const struct auxcap_sample_layout *l);

/**
 * Encode the sample_id trailer of @sid as @l lays it out (for records a tool synthesizes,
 * e.g. COMM or MMAP2 of pre-existing threads).  @buf must hold auxcap_sample_id_size(@l)
 * bytes; fields of @sid that @l does not carry are ignored, reserved words are zero.
 *
 * Returns the bytes written (0 without sample_id_all).
 */
size_t auxcap_sample_id_encode(const struct auxcap_sample_layout *l,
			       const struct auxcap_sample_id *sid, void *buf);

/**
 * Decode one kernel record (types 1..PERF_RECORD_MAX of the kernel).
 *
 * @buf holds @len bytes starting at the record header; the record's own size must fit.  The
 * result borrows from @buf.  Record types this version does not know are returned with only
 * the header fields and the trailer (if any) filled in.
 *
 * Returns 0 and fills @ret on success, a negative errno otherwise; @ret is then untouched.
 * Returns -EINVAL if an argument is NULL.
 * Returns -EBADMSG if the record is shorter than its layout needs, its size is not a multiple
 * of 8, a string is not NUL-terminated inside the record, or a count overflows the record.
 */
int auxcap_record_parse(const struct auxcap_sample_layout *l, const void *buf, size_t len,
			struct auxcap_record *ret);

/**
 * Find the event id of a record without decoding it, for picking its attr among several.
 *
 * Needs PERF_SAMPLE_IDENTIFIER in @l->sample_type (perf's rule for mixed streams): a SAMPLE
 * has it right after the header, any other record (with sample_id_all) as its last 8 bytes.
 *
 * Returns 0 and sets @ret_id on success.
 * Returns -ENOENT if the record carries no identifier under @l.
 * Returns -EBADMSG if the record is too short.
 */
int auxcap_record_peek_id(const struct auxcap_sample_layout *l, const void *buf, size_t len,
			  uint64_t *ret_id);

/** A frame of a sample's callchain (PERF_SAMPLE_CALLCHAIN). */
struct auxcap_callchain_frame {
	uint64_t ip; /* the interrupted IP (the first frame of a context), else a return address */
	bool kernel; /* a kernel frame (PERF_CONTEXT_KERNEL), else a user one */
	bool ret;    /* @ip is a return address: its function is the one at @ip - 1 */
};

/**
 * The frames of @s's callchain, innermost first, into @ret (up to @max of them).
 *
 * The kernel's context markers (PERF_CONTEXT_KERNEL, _USER, ...) are not frames: they say
 * whose the frames after them are.  Frames of a hypervisor or a guest, and entries before any
 * marker, are left out.
 *
 * Returns how many frames the callchain has (more than @max if it did not fit); 0 if @s has
 * none.
 */
size_t auxcap_sample_callchain(const struct auxcap_sample *s, struct auxcap_callchain_frame *ret,
			       size_t max);

/** Where to look up the function of a callchain frame: before a return address (the call). */
static inline uint64_t auxcap_callchain_frame_lookup(const struct auxcap_callchain_frame *f)
{
	return f->ret && f->ip ? f->ip - 1 : f->ip;
}

/** Name of a record type ("SAMPLE", "AUXTRACE", ...), or NULL if unknown. */
const char *auxcap_record_type_name(uint32_t type);

static inline uint64_t auxcap_get_u64(const void *p, size_t idx)
{
	uint64_t v;

	memcpy(&v, (const unsigned char *)p + idx * 8, sizeof(v));
	return v;
}

#endif /* AUXCAP_RECORD_H */
