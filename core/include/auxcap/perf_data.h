/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf.data reading and writing (spec/perf-data-and-perf-tool.md sections 0 and 1).
 *
 * Contents: on-disk constants; the I/O seam; the writer; feature values; the reader.
 *
 * Writer, file mode:
 *
 *	auxcap_perf_writer_open(path, &opts, &w);
 *	auxcap_perf_writer_add_attr(w, &attr, "cpu-clock", ids, nr_ids);   every attr first
 *	auxcap_perf_writer_set_host_features(w);                        any time before close
 *	auxcap_perf_writer_write(w, kernel_record);                      records as they come
 *	auxcap_perf_writer_write_auxtrace(w, &at, piece1, len1, piece2, len2);
 *	auxcap_perf_writer_write_finished_round(w);
 *	auxcap_perf_writer_close(w);                                     features + final header
 *
 * The writer adds EVENT_DESC (from the attrs' names), SAMPLE_TIME (the span of the SAMPLE
 * records' times), the AUXTRACE index (file mode) and, for tracepoint attrs, TRACING_DATA on
 * its own.
 *
 * Crash safety: the file header, the ids and the attrs are written with the first record,
 * the header with data.size = 0 and no feature bits; at a FINISHED_ROUND the header is
 * rewritten with the current data.size (still no feature bits) once opts.header_update_bytes
 * more data were written; the final header with the feature bits is written last, after the
 * feature sections, by auxcap_perf_writer_close().  A capture killed in between is a valid
 * perf.data file up to the last header update (perf reads that much), and the reader reads
 * every complete record on disk past it (auxcap_perf_reader_info()->recovered says so).  An
 * I/O error (e.g. -ENOSPC) makes the writer refuse further records with the same error;
 * close then truncates the file after the last complete record and writes a header for it.
 *
 * Pipe mode (opts.pipe): the 16-byte pipe header, HEADER_ATTR records, TRACING_DATA, then
 * HEADER_FEATURE records for the features set so far are written with the first record, so
 * set the features before it; build-ids go out as HEADER_BUILD_ID records at close.  (Feed
 * such a stream to perf through a real pipe: perf seeks a regular file given as standard
 * input by stream offsets and then misreads AUXTRACE payloads.)
 */
#ifndef AUXCAP_PERF_DATA_H
#define AUXCAP_PERF_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/uio.h>

#include "auxcap/file.h"
#include "auxcap/record.h"

struct perf_event_attr;

/* --- on-disk constants -------------------------------------------------------------------- */

#define AUXCAP_PERF_MAGIC	     0x32454c4946524550ULL /* "PERFILE2" read as a native u64 */
#define AUXCAP_PERF_MAGIC_SWAPPED    0x50455246494c4532ULL /* the same, other-endian writer */
#define AUXCAP_PERF_HEADER_SIZE	     104		   /* struct perf_file_header, bytes */
#define AUXCAP_PERF_PIPE_HEADER_SIZE 16			   /* magic + size, bytes */
#define AUXCAP_PERF_ATTR_SIZE	     128		   /* perf_event_attr size perf 6.1 knows */
#define AUXCAP_PERF_AUXTRACE_SIZE    48			   /* header.size of PERF_RECORD_AUXTRACE */

/** Record types perf's tools write (not the kernel). */
enum auxcap_perf_user_type {
	AUXCAP_PERF_RECORD_HEADER_ATTR = 64,
	AUXCAP_PERF_RECORD_HEADER_EVENT_TYPE = 65,
	AUXCAP_PERF_RECORD_HEADER_TRACING_DATA = 66,
	AUXCAP_PERF_RECORD_HEADER_BUILD_ID = 67,
	AUXCAP_PERF_RECORD_FINISHED_ROUND = 68,
	AUXCAP_PERF_RECORD_ID_INDEX = 69,
	AUXCAP_PERF_RECORD_AUXTRACE_INFO = 70,
	AUXCAP_PERF_RECORD_AUXTRACE = 71,
	AUXCAP_PERF_RECORD_AUXTRACE_ERROR = 72,
	AUXCAP_PERF_RECORD_THREAD_MAP = 73,
	AUXCAP_PERF_RECORD_CPU_MAP = 74,
	AUXCAP_PERF_RECORD_STAT_CONFIG = 75,
	AUXCAP_PERF_RECORD_STAT = 76,
	AUXCAP_PERF_RECORD_STAT_ROUND = 77,
	AUXCAP_PERF_RECORD_EVENT_UPDATE = 78,
	AUXCAP_PERF_RECORD_TIME_CONV = 79,
	AUXCAP_PERF_RECORD_HEADER_FEATURE = 80,
	AUXCAP_PERF_RECORD_COMPRESSED = 81,
	AUXCAP_PERF_RECORD_FINISHED_INIT = 82,
	AUXCAP_PERF_RECORD_HEADER_MAX = 83, /* first type perf 6.1 rejects */
};

/** Feature section bits (perf 6.1 numbering). */
enum auxcap_perf_feat {
	AUXCAP_PERF_FEAT_TRACING_DATA = 1,
	AUXCAP_PERF_FEAT_BUILD_ID = 2,
	AUXCAP_PERF_FEAT_HOSTNAME = 3,
	AUXCAP_PERF_FEAT_OSRELEASE = 4,
	AUXCAP_PERF_FEAT_VERSION = 5,
	AUXCAP_PERF_FEAT_ARCH = 6,
	AUXCAP_PERF_FEAT_NRCPUS = 7,
	AUXCAP_PERF_FEAT_CPUDESC = 8,
	AUXCAP_PERF_FEAT_CPUID = 9,
	AUXCAP_PERF_FEAT_TOTAL_MEM = 10,
	AUXCAP_PERF_FEAT_CMDLINE = 11,
	AUXCAP_PERF_FEAT_EVENT_DESC = 12,
	AUXCAP_PERF_FEAT_CPU_TOPOLOGY = 13,
	AUXCAP_PERF_FEAT_NUMA_TOPOLOGY = 14,
	AUXCAP_PERF_FEAT_BRANCH_STACK = 15,
	AUXCAP_PERF_FEAT_PMU_MAPPINGS = 16,
	AUXCAP_PERF_FEAT_GROUP_DESC = 17,
	AUXCAP_PERF_FEAT_AUXTRACE = 18,
	AUXCAP_PERF_FEAT_STAT = 19,
	AUXCAP_PERF_FEAT_CACHE = 20,
	AUXCAP_PERF_FEAT_SAMPLE_TIME = 21,
	AUXCAP_PERF_FEAT_MEM_TOPOLOGY = 22,
	AUXCAP_PERF_FEAT_CLOCKID = 23,
	AUXCAP_PERF_FEAT_DIR_FORMAT = 24,
	AUXCAP_PERF_FEAT_BPF_PROG_INFO = 25,
	AUXCAP_PERF_FEAT_BPF_BTF = 26,
	AUXCAP_PERF_FEAT_COMPRESSED = 27,
	AUXCAP_PERF_FEAT_CPU_PMU_CAPS = 28,
	AUXCAP_PERF_FEAT_CLOCK_DATA = 29,
	AUXCAP_PERF_FEAT_HYBRID_TOPOLOGY = 30,
	AUXCAP_PERF_FEAT_PMU_CAPS = 31,
	AUXCAP_PERF_FEAT_LAST = 32,  /* perf 6.1 skips bits from here on */
	/**
	 * auxcap's own section, at the last bit: perf reads only bits below its
	 * HEADER_LAST_FEATURE, and the table entry of this bit comes after all of perf's, so
	 * perf's own sections are found where it expects them.  Payload (native endian):
	 * u32 version (1), u32 entry_size (48, bytes per entry; readers skip bytes past the
	 * fields they know, and read entries of 40 bytes, the first size, without call_ns),
	 * u64 nr, then nr entries of struct auxcap_perf_snapshot's fields in order: u64
	 * trigger_ns, u64 frozen_ns, u64 data_end, u32 source, u32 coalesced, u32 tid, u32 cpu,
	 * u64 call_ns.
	 */
	AUXCAP_PERF_FEAT_AUXCAP_SNAPSHOTS = 255,
	AUXCAP_PERF_FEAT_BITS = 256, /* size of the header's feature bitmap */
};

#define AUXCAP_PERF_SNAPSHOTS_VERSION	 1  /* payload version of AUXCAP_SNAPSHOTS */
#define AUXCAP_PERF_SNAPSHOT_ENTRY_SIZE 48 /* bytes per snapshot entry written, version 1 */
#define AUXCAP_PERF_SNAPSHOT_ENTRY_MIN 40  /* ... the first entries' (no call_ns) */

/** Name of a feature bit ("hostname", "auxtrace", "auxcap_snapshots"...), or NULL if unknown. */
const char *auxcap_perf_feat_name(unsigned int feat);

/* --- the I/O seam ----------------------------------------------------------------------- */

/**
 * How the writer writes.  auxcap_perf_io_linux uses pwritev(2)/writev(2); tests substitute
 * one that fails on purpose.
 */
struct auxcap_perf_io {
	void *ctx; /* passed back to every function */
	/**
	 * Write @iovcnt buffers to @fd at file offset @off, or at the current position when
	 * @off is -1 (pipes).  May write less than asked.  Returns the bytes written or a
	 * negative errno (-EINTR is retried by the caller).
	 */
	ssize_t (*writev)(void *ctx, int fd, const struct iovec *iov, int iovcnt, int64_t off);
	/** ftruncate(2).  Returns 0 or a negative errno. */
	int (*truncate)(void *ctx, int fd, uint64_t len);
	/**
	 * fallocate(2) with @mode (FALLOC_FL_KEEP_SIZE, with FALLOC_FL_PUNCH_HOLE to give the
	 * space back).  Optional: NULL means no space is ever reserved
	 * (auxcap_perf_writer_reserve() returns -EOPNOTSUPP).  Returns 0 or a negative errno.
	 */
	int (*fallocate)(void *ctx, int fd, int mode, uint64_t off, uint64_t len);
};

extern const struct auxcap_perf_io auxcap_perf_io_linux;

/* --- the writer ------------------------------------------------------------------------- */

struct auxcap_perf_writer;

/** Writer options; caller-owned, copied in.  Zero-fill, then set @sz = sizeof. */
struct auxcap_perf_writer_opts {
	size_t sz;			 /* sizeof(struct auxcap_perf_writer_opts) */
	bool pipe;			 /* pipe-mode stream instead of a seekable file */
	const struct auxcap_perf_io *io; /* borrowed, outlives the writer; NULL: the real one */
	uint64_t header_update_bytes;	 /* rewrite the header every this many data bytes, at the
					* next FINISHED_ROUND; 0: 4 MiB; UINT64_MAX: never */
	enum auxcap_file_mode file_mode; /* auxcap_perf_writer_open(): what to do with an
					    existing file; 0: AUXCAP_FILE_REPLACE */
	char *errbuf;	  /* caller-owned: auxcap_perf_writer_open() writes why it failed here */
	size_t errbuf_size; /* bytes at @errbuf */
};

/**
 * Create @path with auxcap_file_create() (mode 0600, O_EXCL, never through a symlink, as root
 * never in another user's directory; an existing file is replaced, or handled as
 * @opts->file_mode says) and start a perf.data writer on it.
 *
 * @opts may be NULL (file mode, defaults).  On success *@ret owns the fd; release it with
 * auxcap_perf_writer_close().  On failure a one-line reason goes to @opts->errbuf.
 * Returns -EINVAL if @path or @ret is NULL or @opts->sz is too small.
 * Returns -ENOMEM if out of memory, or an errno of auxcap_file_create() (-EEXIST, -ELOOP,
 * -EPERM, -EISDIR, -ENOENT, -EACCES, ...).
 */
int auxcap_perf_writer_open(const char *path, const struct auxcap_perf_writer_opts *opts,
			    struct auxcap_perf_writer **ret);

/**
 * Start a writer on @fd (borrowed: not closed by the writer).  In file mode @fd must be
 * seekable; the file is written from offset 0 and truncated at close.
 * Returns -EINVAL if @fd is negative or @ret is NULL, -ENOMEM if out of memory.
 */
int auxcap_perf_writer_open_fd(int fd, const struct auxcap_perf_writer_opts *opts,
			       struct auxcap_perf_writer **ret);

/**
 * Add an event: its attr (copied; written with size 128 as perf 6.1 expects), its name
 * (copied, for EVENT_DESC; NULL for none) and the @nr_ids kernel ids of its fds (copied).
 *
 * All attrs come before the first record.  With several attrs every one needs
 * PERF_SAMPLE_IDENTIFIER and the same sample_id_all (perf rejects the file otherwise).
 * Returns -EINVAL if an argument is NULL, @nr_ids is 0, an id is already used, or the rules
 * above are broken.
 * Returns -EBUSY if a record was already written.
 * Returns -ENOMEM if out of memory.
 */
int auxcap_perf_writer_add_attr(struct auxcap_perf_writer *w, const struct perf_event_attr *attr,
				const char *name, const uint64_t *ids, size_t nr_ids);

/**
 * Set the payload of feature @feat to @size bytes at @data (copied), replacing a previous
 * one.  The payload is written as is: use it to copy a feature from another file.
 * Returns -EINVAL if @feat is 0, >= AUXCAP_PERF_FEAT_BITS, AUXCAP_PERF_FEAT_AUXTRACE (the
 * writer builds that one), or @data is NULL with @size > 0.
 * Returns -ENOMEM if out of memory.
 */
int auxcap_perf_writer_set_feature(struct auxcap_perf_writer *w, unsigned int feat,
				   const void *data, size_t size);

/**
 * Set a string feature (HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC, CPUID) to @s.
 * Returns -EINVAL if @feat is not a string feature or @s is NULL, -ENOMEM.
 */
int auxcap_perf_writer_set_string(struct auxcap_perf_writer *w, unsigned int feat, const char *s);

/** Set CMDLINE to @argc strings.  Returns -EINVAL if @argv is NULL, -ENOMEM. */
int auxcap_perf_writer_set_cmdline(struct auxcap_perf_writer *w, int argc, const char *const *argv);

/**
 * Set HOSTNAME, OSRELEASE, VERSION, ARCH, NRCPUS, CPUDESC, CPUID and TOTAL_MEM from this
 * machine (uname, sysconf, /proc/cpuinfo, /proc/meminfo).  Features it cannot find are left
 * unset.
 * Returns 0, or -ENOMEM.
 */
int auxcap_perf_writer_set_host_features(struct auxcap_perf_writer *w);

/**
 * Set TRACING_DATA, the tracepoint formats perf needs to open a file that has tracepoint
 * events (it refuses the file without them), from the tracefs mounted at @tracefs (NULL:
 * /sys/kernel/tracing, then /sys/kernel/debug/tracing), for the @nr tracepoints @events
 * ("sys:name").  Without this call the writer does the same at close (pipe mode: at the first
 * record) for its PERF_TYPE_TRACEPOINT attrs whose names are "sys:name", and logs a warning
 * if it cannot.
 * Returns -EINVAL for a NULL argument or a name without ':'.
 * Returns -ENOENT if tracefs or a format file is missing, -EACCES, -ENOMEM.
 */
int auxcap_perf_writer_set_tracing_data(struct auxcap_perf_writer *w, const char *tracefs,
					const char *const *events, size_t nr);

/**
 * Set CLOCKID (the resolution of @clockid) and CLOCK_DATA (a CLOCK_REALTIME / @clockid pair
 * read now), as perf record -k does, for captures whose events use attr.use_clockid.
 * Returns -EINVAL if @clockid cannot be read, -ENOMEM.
 */
int auxcap_perf_writer_set_clock(struct auxcap_perf_writer *w, int clockid);

/**
 * Add a BUILD_ID entry: @cpumode (PERF_RECORD_MISC_USER or _KERNEL), @pid (-1 for the host),
 * @build_id of @size bytes (at most 20), @filename (copied).
 * Returns -EINVAL if @size > 20 or a pointer is NULL, -ENOMEM.
 */
int auxcap_perf_writer_add_build_id(struct auxcap_perf_writer *w, uint16_t cpumode, int32_t pid,
				    const uint8_t *build_id, size_t size, const char *filename);

/** A tracepoint's format file, as TRACING_DATA keeps it (auxcap/tracepoint.h parses it). */
struct auxcap_perf_tp_format_text {
	const char *system; /* "sched" */
	const char *text;   /* the file: "name: sched_switch\nID: 372\nformat:\n..." */
	size_t len;	    /* bytes at @text (not NUL-terminated) */
};

/** One snapshot of a capture (the AUXCAP_SNAPSHOTS feature). */
struct auxcap_perf_snapshot {
	uint64_t trigger_ns; /* CLOCK_MONOTONIC, ns: the request, or the trigger event's sample */
	uint64_t frozen_ns;  /* CLOCK_MONOTONIC, ns: the AUX events and sample rings frozen */
	uint64_t data_end;   /* data section bytes written once the snapshot was out */
	uint32_t source;     /* enum auxcap_trigger_source (auxcap/session.h): 0 api, 1 signal,
				2 hotkey, 3 fifo, 4 function, 5 exit */
	uint32_t coalesced;  /* further requests merged into it */
	uint32_t tid;	     /* thread that hit a function trigger, else (uint32_t)-1 */
	uint32_t cpu;	     /* its CPU, else (uint32_t)-1 */
	uint64_t call_ns;    /* a minimum-duration trigger: the call's duration (it ended at
				@trigger_ns), else 0 */
};

/**
 * Append @snap (copied) to the AUXCAP_SNAPSHOTS feature, written at close in file mode.  Pipe
 * mode has no room for it: perf 6.1 aborts on a HEADER_FEATURE record of a bit it does not
 * know ("wrong feature ID"), so the table is left out there.  An explicit
 * auxcap_perf_writer_set_feature() of that bit replaces what was appended.
 * Returns -EINVAL if an argument is NULL, -ENOMEM.
 */
int auxcap_perf_writer_add_snapshot(struct auxcap_perf_writer *w,
				    const struct auxcap_perf_snapshot *snap);

/**
 * Write one complete record (kernel record bytes as read from the ring, or a user record
 * without trailing payload), header.size bytes at @rec.
 * Returns -EINVAL if the header size is < 8 or not a multiple of 8, or the type is 0, one perf
 * 6.1 aborts on (>= AUXCAP_PERF_RECORD_HEADER_MAX), AUXTRACE (use
 * auxcap_perf_writer_write_auxtrace()), HEADER_ATTR, HEADER_FEATURE or HEADER_TRACING_DATA
 * (the writer makes those).
 * Returns -ENODATA if no attr was added.
 * Returns the sticky error of an earlier failed write, or the I/O error (-ENOSPC, -EIO, ...).
 */
int auxcap_perf_writer_write(struct auxcap_perf_writer *w, const void *rec);

/** PERF_RECORD_AUXTRACE fields (the payload size is computed by the writer). */
struct auxcap_perf_auxtrace {
	uint64_t offset;    /* position of the first payload byte in the AUX stream, bytes */
	uint64_t reference; /* backend token, TSC for Intel PT/BTS */
	uint32_t idx;	    /* mmap index (not the CPU) */
	uint32_t tid;	    /* traced tid, or (uint32_t)-1 */
	uint32_t cpu;	    /* CPU, or (uint32_t)-1 per-thread */
};

/**
 * Write a PERF_RECORD_AUXTRACE whose payload is @len1 bytes at @p1 followed by @len2 bytes
 * at @p2 (the two pieces of a wrapped AUX ring; @len2 may be 0), zero-padded to 8 bytes.
 * The pieces are written straight from the caller's memory.  In file mode the record is added
 * to the AUXTRACE index feature.
 * Returns -EINVAL if a piece is NULL with a non-zero length or the payload is empty.
 * Returns an I/O error or the sticky error as auxcap_perf_writer_write().
 */
int auxcap_perf_writer_write_auxtrace(struct auxcap_perf_writer *w,
				      const struct auxcap_perf_auxtrace *at, const void *p1,
				      size_t len1, const void *p2, size_t len2);

/**
 * Write PERF_RECORD_AUXTRACE_INFO of auxtrace @type (1 Intel PT, 2 BTS, 4 Arm SPE, ...) with
 * the backend's @nr u64 words @priv (opaque to the writer).
 * Returns -EINVAL if the record would exceed 65535 bytes; I/O errors as above.
 */
int auxcap_perf_writer_write_auxtrace_info(struct auxcap_perf_writer *w, uint32_t type,
					   const uint64_t *priv, size_t nr);

/** PERF_RECORD_TIME_CONV values (copies of the control page's). */
struct auxcap_perf_time_conv {
	uint64_t time_shift;
	uint64_t time_mult;
	uint64_t time_zero;   /* ns */
	uint64_t time_cycles; /* cycles */
	uint64_t time_mask;
	bool cap_user_time_zero;
	bool cap_user_time_short;
};

/** Write a 56-byte PERF_RECORD_TIME_CONV.  I/O errors as above. */
int auxcap_perf_writer_write_time_conv(struct auxcap_perf_writer *w,
				       const struct auxcap_perf_time_conv *tc);

/** PERF_RECORD_AUXTRACE_ERROR fields (fmt 1 layout). */
struct auxcap_perf_auxtrace_error {
	uint32_t type; /* 1: instruction trace */
	uint32_t code; /* decoder- or capture-specific */
	uint32_t cpu;
	uint32_t pid;
	uint32_t tid;
	uint32_t fmt; /* 1 when read with a time field, 0 for the oldest layout */
	uint64_t ip;
	uint64_t time; /* perf clock, ns */
	char msg[64];  /* NUL-terminated */
};

/** Write a PERF_RECORD_AUXTRACE_ERROR (fmt 1).  I/O errors as above. */
int auxcap_perf_writer_write_auxtrace_error(struct auxcap_perf_writer *w,
					    const struct auxcap_perf_auxtrace_error *e);

/** One PERF_RECORD_ID_INDEX entry. */
struct auxcap_perf_id_index_entry {
	uint64_t id;  /* an id given to auxcap_perf_writer_add_attr() */
	uint64_t idx; /* mmap index */
	uint64_t cpu; /* CPU or (uint64_t)-1 */
	uint64_t tid; /* tid or (uint64_t)-1 */
};

/**
 * Write PERF_RECORD_ID_INDEX for @nr entries (split into records of at most 2000 entries).
 * Returns -EINVAL if an id is not one of the attrs' ids.  I/O errors as above.
 */
int auxcap_perf_writer_write_id_index(struct auxcap_perf_writer *w,
				      const struct auxcap_perf_id_index_entry *e, size_t nr);

/**
 * Write the PERF_RECORD_MMAP perf record synthesizes for the kernel ("[kernel.kallsyms]_text",
 * pid -1, from _text to _etext of /proc/kallsyms, misc KERNEL, an all-zero sample_id trailer);
 * without it perf warns that kernel addresses cannot be resolved.
 * Returns -ENOENT if /proc/kallsyms does not show the addresses (kptr_restrict, no root).
 * Returns -ENODATA if no attr was added; I/O errors as above.
 */
int auxcap_perf_writer_write_kernel_mmap(struct auxcap_perf_writer *w);

/** Header-only records: FINISHED_ROUND (may update the file header), FINISHED_INIT. */
int auxcap_perf_writer_write_finished_round(struct auxcap_perf_writer *w);
int auxcap_perf_writer_write_finished_init(struct auxcap_perf_writer *w);

/** Bytes of record stream written so far (the data section size). */
uint64_t auxcap_perf_writer_data_size(const struct auxcap_perf_writer *w);

/**
 * Reserve file space for the next @bytes of record stream (fallocate(2) with
 * FALLOC_FL_KEEP_SIZE: the file size does not change), so that writing them later does not
 * allocate it: on tmpfs, allocating the page is about half the cost of a write, so a flight
 * recorder that reserves a snapshot's worth after each snapshot writes the next one in about
 * half the time.  The call returns at once: a thread of the writer does it in 1 MiB steps
 * (a write waits for one step at most), at nice 10 so as not to delay the capture, stopped
 * at close; space already asked for is not
 * asked again, and what is left unused is given back at close.  Call it once every attr is
 * added (it writes the header if it is not out yet).
 * Returns 0, or a negative errno: -EOPNOTSUPP for a pipe, an I/O seam without fallocate or a
 * filesystem without it (tried on the first byte); -ENOSPC; the writer's sticky error; the
 * errno of pthread_create().  Later failures of the thread only leave the space unreserved.
 */
int auxcap_perf_writer_reserve(struct auxcap_perf_writer *w, uint64_t bytes);

/**
 * Finish the file (features, EVENT_DESC from the attrs' names unless set explicitly, the
 * AUXTRACE index, the final header) and free @w (NULL-safe); the fd is closed if the writer
 * opened it.  After an earlier I/O error the file is cut after the last complete record and
 * given a header without features, and that error is returned.
 * Returns 0, the sticky error, or the error of the final writes.
 */
int auxcap_perf_writer_close(struct auxcap_perf_writer *w);

/**
 * Number of distinct files that executable PERF_RECORD_MMAP/MMAP2 records written so far map
 * (anonymous, bracketed and data mappings left out, but for "[vdso]" and the kernel's
 * "[kernel.kallsyms]_text"): the files whose build-ids the caller should add with
 * auxcap_perf_writer_add_build_id() before closing.
 */
size_t auxcap_perf_writer_nr_mapped_files(const struct auxcap_perf_writer *w);

/**
 * The @i-th of those files: its path (borrowed, valid until @w is closed), and through
 * @ret_cpumode (may be NULL) the cpumode of the record that mapped it.  NULL past the end.
 */
const char *auxcap_perf_writer_mapped_file(const struct auxcap_perf_writer *w, size_t i,
					   uint16_t *ret_cpumode);

/* --- feature values (reader side) ----------------------------------------------------------- */

struct auxcap_perf_build_id {
	uint16_t cpumode; /* header.misc & cpumode bits */
	int32_t pid;	  /* machine pid, -1 = host */
	uint8_t size;	  /* bytes of @id used (20 when the file does not say) */
	uint8_t id[20];
	const char *filename; /* owned by the reader */
};

struct auxcap_perf_auxtrace_index_entry {
	uint64_t offset; /* file offset of the AUXTRACE record */
	uint64_t size;	 /* its header.size (48) */
};

/** Feature values a reader found; strings NULL when absent; all owned by the reader. */
struct auxcap_perf_features {
	uint64_t present[4]; /* feature bitmap as in the file (bit n = feature n) */
	const char *hostname;
	const char *osrelease;
	const char *version;
	const char *arch;
	const char *cpudesc;
	const char *cpuid;
	uint32_t nr_cpus_avail; /* NRCPUS */
	uint32_t nr_cpus_online;
	uint64_t total_mem; /* kB */
	size_t nr_cmdline;
	const char *const *cmdline;
	size_t nr_build_ids;
	const struct auxcap_perf_build_id *build_ids;
	size_t nr_auxtrace_index;
	const struct auxcap_perf_auxtrace_index_entry *auxtrace_index;
	uint64_t clockid_res_ns; /* CLOCKID */
	bool has_clock_data;	 /* CLOCK_DATA */
	uint32_t clockid;
	uint64_t clock_tod_ns, clock_clockid_ns;      /* reference pair, ns */
	uint64_t sample_time_first, sample_time_last; /* SAMPLE_TIME, ns */
	size_t nr_snapshots; /* AUXCAP_SNAPSHOTS */
	const struct auxcap_perf_snapshot *snapshots;
	/* TRACING_DATA (file mode; a pipe's TRACING_DATA record): the tracepoints' formats, as
	 * many as could be read (a malformed or big-endian section gives fewer, or none) */
	size_t nr_tp_formats;
	const struct auxcap_perf_tp_format_text *tp_formats;
};

/* --- the reader ------------------------------------------------------------------------- */

struct auxcap_perf_reader;

/** An event (attr) of a file. */
struct auxcap_perf_evsel {
	struct perf_event_attr *attr; /* owned by the reader; full 128-byte struct */
	const char *name;	      /* from EVENT_DESC, or NULL */
	const uint64_t *ids;	      /* owned by the reader */
	size_t nr_ids;
	struct auxcap_sample_layout layout; /* how its records are laid out */
};

enum auxcap_perf_read_flags {
	AUXCAP_PERF_READ_RAW = 1u << 0, /* do not decode kernel records (rec holds the header) */
};

/** Reader options; caller-owned, copied in.  Zero-fill, then set @sz. */
struct auxcap_perf_reader_opts {
	size_t sz;	      /* sizeof(struct auxcap_perf_reader_opts) */
	unsigned int flags;   /* enum auxcap_perf_read_flags */
	uint64_t max_payload; /* pipe mode: largest AUXTRACE payload held, bytes; 0: 1 GiB */
	char *errbuf;	      /* caller-owned: open() writes its error message here */
	size_t errbuf_size;   /* bytes at @errbuf */
};

/** What auxcap_perf_reader_next() returns. */
struct auxcap_perf_event {
	uint64_t offset;		       /* file (or stream) offset of the record */
	const struct auxcap_perf_evsel *evsel; /* the record's event, NULL if not known */
	struct auxcap_record rec;	       /* type/misc/size/data/has_sample_id always; the rest
				   * only for kernel types without READ_RAW */
	union {
		struct {
			uint64_t size;	 /* payload bytes incl. padding */
			uint64_t offset; /* AUX stream position, bytes */
			uint64_t reference;
			uint32_t idx, tid, cpu;
			const void *data; /* borrowed payload: the file mapping or pipe buffer */
			uint64_t data_offset; /* file offset of the payload */
		} auxtrace;
		struct {
			uint32_t type;	  /* auxtrace type */
			size_t nr;	  /* u64 words at @priv */
			const void *priv; /* borrowed; read with auxcap_get_u64() */
		} auxtrace_info;
		struct auxcap_perf_time_conv time_conv;
		struct auxcap_perf_auxtrace_error auxtrace_error;
		struct {
			uint64_t nr;
			const void *entries; /* borrowed, nr × 4 u64 {id, idx, cpu, tid} */
		} id_index;
		struct {
			uint64_t feat; /* HEADER_FEATURE: the feature bit */
		} feature;
	} u;
};

/** File-level facts. */
struct auxcap_perf_file_info {
	bool pipe;	    /* pipe-mode format (a stream, or such a stream saved to a file) */
	bool streaming;	    /* read from a pipe record by record: no rewind, no AUXTRACE index */
	uint64_t file_size; /* bytes (file mode) */
	uint64_t attr_size; /* header.attr_size */
	uint64_t attrs_offset, attrs_size;
	uint64_t data_offset, data_size; /* as the header says */
	bool recovered;		/* the header was not final: records read up to @recovered_end */
	uint64_t recovered_end; /* offset after the last complete record (once read) */
	bool features_lost;	/* the feature sections are missing (truncated file) */
};

/**
 * Open @path and read its header, attrs and features; "-" is not special (use
 * auxcap_perf_reader_open_fd(0, ...)).  @opts may be NULL.  A directory of perf's format
 * (perf record --kcore's: the capture is its file "data") is read as that file; one without
 * "data" is -EISDIR, one with perf record --threads' streams (data.N) -EOPNOTSUPP.
 * On success *@ret owns the fd and the mapping: release with auxcap_perf_reader_close().
 * Returns -EINVAL if @path or @ret is NULL.
 * Returns the errno of open/fstat/mmap (-ENOENT, -EACCES, ...).
 * Returns -EBADMSG if the file is not a perf.data file or its header, attrs or features are
 * corrupt (message with the offset in @opts->errbuf).
 * Returns -EPROTONOSUPPORT for an other-endian file, -ENOMEM if out of memory.
 */
int auxcap_perf_reader_open(const char *path, const struct auxcap_perf_reader_opts *opts,
			    struct auxcap_perf_reader **ret);

/**
 * As auxcap_perf_reader_open() on @fd (borrowed).  A regular file is mapped; anything else
 * (pipe, socket, tty) is read as a pipe-mode stream.
 */
int auxcap_perf_reader_open_fd(int fd, const struct auxcap_perf_reader_opts *opts,
			       struct auxcap_perf_reader **ret);

/**
 * Next record of the data section.  Borrowed pointers in @ev stay valid until the next call
 * (pipe mode) or until close (file mode).  HEADER_ATTR and HEADER_FEATURE records of a pipe
 * are applied (new evsels, features) and returned too.  Fields that do not apply to the
 * record's type (rec.u of a user record, u of a kernel record) keep what an earlier call
 * left there.
 *
 * Returns 1 and fills @ev, 0 at the end, a negative errno otherwise (@ev untouched).
 * Returns -EBADMSG for a corrupt record (auxcap_perf_reader_error() says what and where).
 * Returns -ENOMEM, or a read(2) error in pipe mode.
 */
int auxcap_perf_reader_next(struct auxcap_perf_reader *r, struct auxcap_perf_event *ev);

/**
 * Start the record stream over (file mode).  The reader is back in the state open() left:
 * events that HEADER_ATTR records in the stream added count again (nr_evsels, find_id, record
 * decoding) only once the walk meets their records anew; their evsel pointers stay valid.
 * Returns -ESPIPE in pipe mode.
 */
int auxcap_perf_reader_rewind(struct auxcap_perf_reader *r);

/** File facts (borrowed, valid until close). */
const struct auxcap_perf_file_info *auxcap_perf_reader_info(const struct auxcap_perf_reader *r);

/** Feature values (borrowed, valid until close; grows in pipe mode). */
const struct auxcap_perf_features *auxcap_perf_reader_features(const struct auxcap_perf_reader *r);

/** Number of events, and event @i (borrowed, NULL if out of range). */
size_t auxcap_perf_reader_nr_evsels(const struct auxcap_perf_reader *r);
const struct auxcap_perf_evsel *auxcap_perf_reader_evsel(const struct auxcap_perf_reader *r,
							 size_t i);

/** The event of sample id @id, or NULL. */
const struct auxcap_perf_evsel *auxcap_perf_reader_find_id(const struct auxcap_perf_reader *r,
							   uint64_t id);

/**
 * The raw payload of feature @feat in a file (borrowed from the mapping).
 * Returns 0 and sets *@ret_data and *@ret_size, -ENOENT if absent (or pipe mode).
 */
int auxcap_perf_reader_feature_raw(const struct auxcap_perf_reader *r, unsigned int feat,
				   const void **ret_data, size_t *ret_size);

/**
 * The file offsets of all AUXTRACE records (file mode), for decoders that queue AUX buffers
 * before walking the stream.  Taken from the AUXTRACE feature when present (each entry is
 * checked to point at an AUXTRACE record inside the data section), built by scanning the
 * record headers otherwise (pipe-format files, recovered files, writers without the index).
 * The array is owned by the reader, valid until close.
 *
 * Returns 0 and sets *@ret_entries, *@ret_nr.
 * Returns -ESPIPE in pipe mode (read from a pipe), -EBADMSG for a bad index entry or record
 * header (message in auxcap_perf_reader_error()), -ENOMEM.
 */
int auxcap_perf_reader_auxtrace_index(struct auxcap_perf_reader *r,
				      const struct auxcap_perf_auxtrace_index_entry **ret_entries,
				      size_t *ret_nr);

/**
 * The caller is done with the @len bytes at @p (a payload the reader handed out, in file mode)
 * for now: the whole pages inside them are dropped from the process's memory
 * (MADV_DONTNEED on the read-only file mapping).  Pointers stay valid: a later access reads
 * the bytes from the file again.  Decoders call it on AUX buffers they are past, so that
 * decoding a large capture does not keep all of it resident.
 * Returns 0 (also when nothing whole lies inside, or in pipe mode, where payloads are not
 * mapped), -EINVAL if @r is NULL or the range is not inside the file mapping.
 */
int auxcap_perf_reader_drop(struct auxcap_perf_reader *r, const void *p, size_t len);

/** The last error message ("" if none), with the file offset; borrowed. */
const char *auxcap_perf_reader_error(const struct auxcap_perf_reader *r);

/** Unmap, close the fd if the reader opened it, free.  NULL-safe. */
void auxcap_perf_reader_close(struct auxcap_perf_reader *r);

#endif /* AUXCAP_PERF_DATA_H */
