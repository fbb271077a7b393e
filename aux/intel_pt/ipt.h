/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intel PT decode side: the libipt adapter.
 *
 * This header is the whole interface of aux/intel_pt/'s decode side.  It does not include
 * <intel-pt.h>: libipt types stay inside aux/intel_pt/ (the only directory that includes it),
 * so callers (the CLI, the decode stage, tests) see only auxcap_ipt_* types.
 *
 * Parts:
 *   - parameters (CPU, timing) and libipt error mapping      ipt_config.c
 *   - packet listing in ptdump's text format                  ipt_dump.c
 *   - the traced memory image (raw binaries, ELF segments)    ipt_image.c
 *   - instruction / block flow decoding with gap events       ipt_decode.c
 *
 * Errors follow the house style: negative errno at this boundary; the libipt code (a
 * positive enum pt_error_code value) and its pt_errstr() text stay available through
 * auxcap_ipt_strerror() and the gap items for messages.
 */
#ifndef AUXCAP_IPT_H
#define AUXCAP_IPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/** Decoder parameters: what libipt needs to know about the CPU and timing set-up. */
struct auxcap_ipt_params {
	size_t sz;		 /* sizeof(struct auxcap_ipt_params) */
	bool cpu_set;		 /* the three cpu_* fields below are valid */
	uint16_t cpu_family;	 /* CPUID.1:EAX family (display family, e.g. 6) */
	uint8_t cpu_model;	 /* CPUID.1:EAX model (display model, e.g. 142) */
	uint8_t cpu_stepping;	 /* CPUID.1:EAX stepping */
	uint8_t mtc_freq;	 /* IA32_RTIT_CTL.MTCFreq (MTC period is 2^N CTC ticks) */
	uint8_t nom_freq;	 /* MSR_PLATFORM_INFO[15:8], max non-turbo ratio, 0 = unknown */
	uint32_t cpuid_0x15_eax; /* CPUID.(EAX=0x15):EAX, TSC/CTC ratio denominator */
	uint32_t cpuid_0x15_ebx; /* CPUID.(EAX=0x15):EBX, TSC/CTC ratio numerator */
	uint64_t addr_cfg;	 /* IA32_RTIT_CTL.ADDRn_CFG bits 32..47 as 4-bit fields, n = 0..3
				  * (1 = filter, 2 = stop), shifted down to bit 0 */
	uint64_t addr_a[4];	 /* IA32_RTIT_ADDRn_A: range start (inclusive) */
	uint64_t addr_b[4];	 /* IA32_RTIT_ADDRn_B: range end (inclusive) */
};

/**
 * Parse "FAMILY/MODEL[/STEPPING]" (decimal or 0x-prefixed hex, as ptxed's --cpu) into
 * @params->cpu_*.
 *
 * @params is updated only on success.
 *
 * Returns 0 on success.
 * Returns -EINVAL if @s or @params is NULL, or @s is malformed or out of range
 * (family > 0xffff, model or stepping > 0xff).
 */
int auxcap_ipt_params_parse_cpu(struct auxcap_ipt_params *params, const char *s);

/**
 * Check that the errata of @params' CPU are known.
 *
 * The errata table is libipt's, extended with the models newer libipt releases know (the
 * errata each has are facts from Intel's specification updates).  Decoding an unknown CPU
 * still works, without errata workarounds.
 *
 * Returns 0 if no CPU is set or its errata are known.
 * Returns -EINVAL if @params is NULL.
 * Returns -ENOENT if the CPU is not known (libipt's -pte_bad_cpu).
 */
int auxcap_ipt_params_check_cpu(const struct auxcap_ipt_params *params);

/**
 * Map a libipt status to a negative errno.
 *
 * @pte is a libipt return value (a negated enum pt_error_code).  Non-negative values are
 * returned unchanged.  -pte_nomem maps to -ENOMEM, -pte_invalid to -EINVAL, -pte_eos to
 * -ENODATA, -pte_nomap to -EFAULT, -pte_bad_file to -EIO, -pte_bad_cpu to -ENOENT,
 * -pte_not_supported to -EOPNOTSUPP, and malformed or inconsistent trace (bad opcode,
 * packet, context, query, status update, ...) to -EBADMSG.
 */
int auxcap_ipt_errno(int pte);

/**
 * The text libipt gives for its error @code (a positive enum pt_error_code, or the negated
 * return value of a libipt call; the sign is ignored).
 *
 * Returns a static string, never NULL.
 */
const char *auxcap_ipt_strerror(int code);

/* -------------------------------------------------------------------------------------- */
/* Packet listing */

/** Options of the packet listing (ptdump's options of the same names). */
struct auxcap_ipt_dump_opts {
	size_t sz;	/* sizeof(struct auxcap_ipt_dump_opts) */
	bool no_offset; /* do not print the trace offset column */
	bool raw;	/* print the raw packet bytes in hex before the packet */
	bool lastip;	/* print the reconstructed IP after IP packets ("ip ...") */
	bool exec_mode; /* print the execution mode after mode.exec packets ("em ...") */
	bool no_sync;	/* decode from offset 0 instead of synchronizing at the first PSB */
};

/**
 * Receives one line of output (no trailing newline).
 *
 * @line is borrowed for the duration of the call.  Return 0 to continue, a negative errno
 * to stop the walk (that value is then returned by the walker).
 */
typedef int (*auxcap_ipt_line_fn)(void *ctx, const char *line);

/**
 * List every packet of the Intel PT stream [@buf, @buf + @len) as text lines.
 *
 * Lines have the layout of libipt's ptdump: the offset (16 hex digits), the packet name
 * and its payload, and diagnostics in brackets ("[1a: error decoding packet: unknown
 * opcode]").  Decoding errors are reported as such a line and the walk resumes at the next
 * PSB; they do not stop the listing.  An unknown CPU in @params is reported as a line and
 * the listing goes on without errata.
 *
 * @buf is borrowed for the duration of the call; @params and @opts (both optional) are
 * read during the call only.
 *
 * Returns the number of decoding errors reported (>= 0) on success.
 * Returns -EINVAL if @buf is NULL while @len is not 0, or @line_fn is NULL.
 * Returns -EINVAL if @params or @opts has a too small sz.
 * Returns -ENOMEM if a libipt decoder cannot be allocated.
 * Returns the negative errno returned by @line_fn, if it returned one.
 */
int auxcap_ipt_dump(const uint8_t *buf, size_t len, const struct auxcap_ipt_params *params,
		    const struct auxcap_ipt_dump_opts *opts, auxcap_ipt_line_fn line_fn, void *ctx);

/* -------------------------------------------------------------------------------------- */
/* Traced memory image */

/** The code the trace ran through: raw binaries and ELF segments at load addresses. */
struct auxcap_ipt_image;

/**
 * Allocate an empty image.
 *
 * The image is owned by the caller and freed with auxcap_ipt_image_free(); decoders borrow
 * it and it must outlive them.
 *
 * Returns 0 and the image in @ret_image on success.
 * Returns -EINVAL if @ret_image is NULL.
 * Returns -ENOMEM if out of memory.
 */
int auxcap_ipt_image_new(struct auxcap_ipt_image **ret_image);

/** Free @image (NULL is a no-op).  No decoder may use it any more. */
void auxcap_ipt_image_free(struct auxcap_ipt_image *image);

/**
 * Map @size bytes of @path starting at file offset @offset at virtual address @vaddr
 * (ptxed's --raw FILE[:OFFSET[-SIZE]]:ADDR).  @size 0 means "to the end of the file".
 *
 * Later sections replace the overlapping parts of earlier ones.  @path is copied.
 *
 * Returns 0 on success.
 * Returns -EINVAL if @image or @path is NULL.
 * Returns the negative errno of open()/fstat() if @path cannot be read (-ENOENT, -EACCES).
 * Returns -ERANGE if @offset is beyond the end of the file.
 * Returns -ENOMEM if out of memory.
 */
int auxcap_ipt_image_add_raw(struct auxcap_ipt_image *image, const char *path, uint64_t offset,
			     uint64_t size, uint64_t vaddr);

/**
 * A second image with the same sections as @src, for a decoder on another thread: libipt's
 * pt_image is not safe for concurrent use.  The clone has section objects of its own (libipt
 * keeps a block cache in each section; decoders on two CPUs sharing one slowed each other
 * down 2x); the files are mapped again and share the page cache.  Sections added to @src
 * later are not in the clone.
 *
 * The clone is owned by the caller (auxcap_ipt_image_free()); it does not refer to @src.
 *
 * Returns 0 and the clone in @ret_image.
 * Returns -EINVAL if an argument is NULL.
 * Returns -ENOMEM if out of memory.
 */
int auxcap_ipt_image_clone(const struct auxcap_ipt_image *src, struct auxcap_ipt_image **ret_image);

/* -------------------------------------------------------------------------------------- */
/* Instruction flow decoding */

/** Coarse instruction class (libipt's enum pt_insn_class, in our names). */
enum auxcap_ipt_iclass {
	AUXCAP_IPT_IC_ERROR = 0,  /* could not be classified */
	AUXCAP_IPT_IC_OTHER,	  /* not a branch */
	AUXCAP_IPT_IC_CALL,	  /* near call */
	AUXCAP_IPT_IC_RETURN,	  /* near return */
	AUXCAP_IPT_IC_JUMP,	  /* near unconditional jump */
	AUXCAP_IPT_IC_COND_JUMP,  /* near conditional jump */
	AUXCAP_IPT_IC_FAR_CALL,	  /* syscall, sysenter, far call, int n */
	AUXCAP_IPT_IC_FAR_RETURN, /* sysret, sysexit, iret, far ret */
	AUXCAP_IPT_IC_FAR_JUMP,	  /* far jmp */
	AUXCAP_IPT_IC_PTWRITE,	  /* ptwrite */
};

/** What an item of the decoded flow is. */
enum auxcap_ipt_item_kind {
	AUXCAP_IPT_ITEM_INSN = 1, /* one executed instruction (instruction decoder) */
	AUXCAP_IPT_ITEM_BLOCK,	  /* a run of sequentially executed instructions (block decoder) */
	AUXCAP_IPT_ITEM_EVENT,	  /* a trace event (enable, disable, overflow, ...) */
	AUXCAP_IPT_ITEM_GAP,	  /* decoding failed; the flow resumes at the next PSB */
};

/** Trace events (libipt's enum pt_event_type, in our names). */
enum auxcap_ipt_event_type {
	AUXCAP_IPT_EV_ENABLED = 1,    /* tracing enabled at ip (resumed: at the disable ip) */
	AUXCAP_IPT_EV_DISABLED,	      /* tracing disabled (ip: first target outside the filter) */
	AUXCAP_IPT_EV_ASYNC_DISABLED, /* disabled asynchronously at @at */
	AUXCAP_IPT_EV_ASYNC_BRANCH,   /* interrupt/exception from @at to @ip */
	AUXCAP_IPT_EV_PAGING,	      /* CR3 write (payload: cr3) */
	AUXCAP_IPT_EV_ASYNC_PAGING,   /* CR3 change on an async branch, at @ip */
	AUXCAP_IPT_EV_OVERFLOW,	      /* internal buffer overflow: trace was lost; resumes at ip */
	AUXCAP_IPT_EV_EXEC_MODE,      /* execution mode change (payload: mode bits) */
	AUXCAP_IPT_EV_TSX,	      /* transaction begin/commit/abort */
	AUXCAP_IPT_EV_STOP,	      /* TraceStop */
	AUXCAP_IPT_EV_VMCS,	      /* VMCS base change (payload: base) */
	AUXCAP_IPT_EV_ASYNC_VMCS,     /* VMCS base change on an async branch */
	AUXCAP_IPT_EV_EXSTOP,	      /* execution stopped */
	AUXCAP_IPT_EV_MWAIT,	      /* mwait (payload: hints, ext) */
	AUXCAP_IPT_EV_PWRE,	      /* power state entry (payload: state, sub_state, hw) */
	AUXCAP_IPT_EV_PWRX,	      /* power state exit (payload: last, deepest, reasons) */
	AUXCAP_IPT_EV_PTWRITE,	      /* ptwrite (payload: value) */
	AUXCAP_IPT_EV_TICK,	      /* timing update */
	AUXCAP_IPT_EV_CBR,	      /* core:bus ratio change (payload: ratio) */
	AUXCAP_IPT_EV_MNT,	      /* maintenance packet (payload: raw) */
	AUXCAP_IPT_EV_END_OF_TRACE,   /* the trace ends while tracing was on: flow is cut here */
};

/** Bits of auxcap_ipt_item.flags. */
enum {
	AUXCAP_IPT_F_SPECULATIVE = 1u << 0,	 /* insn/block executed inside a transaction */
	AUXCAP_IPT_F_IP_SUPPRESSED = 1u << 1,	 /* event: ip is not known */
	AUXCAP_IPT_F_HAS_TSC = 1u << 2,		 /* tsc is valid */
	AUXCAP_IPT_F_RESUMED = 1u << 3,		 /* enabled event: resumed where it was disabled */
	AUXCAP_IPT_F_STATUS_UPDATE = 1u << 4,	 /* event re-states state at a PSB (not a change) */
	AUXCAP_IPT_F_TSX_SPECULATIVE = 1u << 5,	 /* tsx event: now inside a transaction */
	AUXCAP_IPT_F_TSX_ABORTED = 1u << 6,	 /* tsx event: the transaction aborted */
	AUXCAP_IPT_F_NON_ROOT = 1u << 7,	 /* paging event: VMX non-root */
	AUXCAP_IPT_F_PWRX_INTERRUPT = 1u << 8,	 /* pwrx: woken by an interrupt */
	AUXCAP_IPT_F_PWRX_STORE = 1u << 9,	 /* pwrx: woken by a store to the monitored line */
	AUXCAP_IPT_F_PWRX_AUTONOMOUS = 1u << 10, /* pwrx: hardware-autonomous wake */
	AUXCAP_IPT_F_PWRE_HW = 1u << 11,	 /* pwre: entry initiated by hardware */
	AUXCAP_IPT_F_FLOW_TO = 1u << 12,	 /* end of trace: the last instruction handed out
						  * went on to @payload (a branch's target) */
};

/** Execution modes (auxcap_ipt_item.mode). */
enum auxcap_ipt_exec_mode {
	AUXCAP_IPT_MODE_UNKNOWN = 0,
	AUXCAP_IPT_MODE_16 = 16,
	AUXCAP_IPT_MODE_32 = 32,
	AUXCAP_IPT_MODE_64 = 64,
};

/** One item of the decoded flow.  Which fields are valid depends on @kind. */
struct auxcap_ipt_item {
	enum auxcap_ipt_item_kind kind;
	uint32_t flags;	 /* AUXCAP_IPT_F_* */
	uint64_t offset; /* trace offset (bytes) of the decoder when this item was made */
	uint64_t tsc;	 /* TSC ticks at the last timing packet; valid with F_HAS_TSC */
	uint64_t
		ip; /* INSN/BLOCK: first instruction; EVENT: event ip; GAP: ip at the error (0: unknown) */
	uint64_t end_ip;		/* BLOCK: last instruction's address */
	uint32_t ninsn;			/* BLOCK: number of instructions (INSN: 1) */
	enum auxcap_ipt_iclass iclass;	/* INSN, BLOCK: class of the (last) instruction */
	enum auxcap_ipt_exec_mode mode; /* INSN, BLOCK, EXEC_MODE event: execution mode */
	uint8_t size;	 /* INSN: instruction length; BLOCK: bytes valid in @raw (bytes) */
	uint8_t raw[15]; /* INSN: instruction bytes; BLOCK ending in a conditional jump: up
			  * to 15 bytes at @end_ip (its encoding) */
	enum auxcap_ipt_event_type event; /* EVENT: which */
	uint64_t at;			  /* EVENT async_branch/async_disabled: source address */
	uint64_t payload;  /* EVENT: cr3, vmcs base, ptwrite value, mnt payload, cbr ratio */
	uint32_t payload2; /* EVENT: mwait ext, pwre/pwrx states ((a << 8) | b), ptw size */
	int err;	   /* GAP: negative errno */
	int native;	   /* GAP: libipt error code (positive enum pt_error_code) */
};

/** Decoder options. */
struct auxcap_ipt_decoder_opts {
	size_t sz;	  /* sizeof(struct auxcap_ipt_decoder_opts) */
	bool block;	  /* use libipt's block decoder (BLOCK items; faster) */
	bool tick_events; /* ask libipt for TICK events on timing updates */
	/**
	 * Bytes: start at the PSB at this offset of the trace (libipt's sync_set) instead of the
	 * first one; the bytes before it are not looked at (no leading GAP).  0: the first PSB.
	 */
	uint64_t start;
	uint32_t max_stalled_insns; /* instructions decoded without consuming trace before the
				       flow is cut with a -ELOOP gap; 0: 2^20 */
	/**
	 * Optional, for code that changes during the trace (a process exec'd, a CPU switched
	 * between processes): the image in place at hardware timestamp @tsc, or NULL to keep
	 * the current one.  Asked after every sync and at every enabled or paging (PIP) event
	 * that carries a timestamp (tracing resumes in the new image after an execve or a
	 * switch; the address space changes), before any code is read there.  What it returns
	 * is borrowed as @image is.
	 */
	struct auxcap_ipt_image *(*image_at)(void *arg, uint64_t tsc);
	void *image_arg; /* passed to @image_at */
};

struct auxcap_ipt_decoder;

/**
 * Create a flow decoder over [@buf, @buf + @len) and the code in @image.
 *
 * @buf and @image are borrowed and must stay valid until auxcap_ipt_decoder_free().
 * @params and @opts (both optional) are copied.  An unknown CPU is not an error here (see
 * auxcap_ipt_params_check_cpu()); errata are then not applied.
 *
 * Returns 0 and the decoder in @ret_dec on success.
 * Returns -EINVAL if @buf is NULL with a non-zero @len, @image or @ret_dec is NULL,
 * @params / @opts has a too small sz, or @opts->start is not inside the trace.
 * Returns -ENOMEM if out of memory.
 */
int auxcap_ipt_decoder_new(const uint8_t *buf, size_t len, struct auxcap_ipt_image *image,
			   const struct auxcap_ipt_params *params,
			   const struct auxcap_ipt_decoder_opts *opts,
			   struct auxcap_ipt_decoder **ret_dec);

/** Free @dec (NULL is a no-op). */
void auxcap_ipt_decoder_free(struct auxcap_ipt_decoder *dec);

/**
 * Produce the next item of the flow into @item.
 *
 * The decoder synchronizes at the first PSB.  Every decoding error (bad packet, memory
 * not in the image, inconsistent trace) is returned as one GAP item with the trace offset
 * where decoding stopped (for a PSB+ that does not decode: that PSB's offset), the libipt
 * code and the ip libipt was at (0 if none); the decoder then resumes at the next PSB, and
 * the GAP covers the trace in between.  What libipt decoded before an error comes first: the
 * instructions of the block it was in (block decoder: however its block cache cut the flow
 * into blocks, the same flow) or the instruction it stopped at (instruction decoder, as
 * ptxed shows it), the GAP's ip then being that last instruction's.  libipt reads ahead, so damage can surface a few
 * packets after the damaged bytes, never before them.  Bytes before the first PSB cannot
 * be decoded (no sync point); when there are any they are reported as a GAP with err
 * -ENODATA, native 0 and offset 0.  A flow that runs for more than 2^20 instructions (or
 * @opts->max_stalled_insns) without consuming a trace byte cannot come from hardware (a corrupt trace or a wrong image sends the
 * decoder round a loop of direct branches forever): it is cut with a GAP with err -ELOOP and
 * native 0, and decoding resumes at the next PSB.  Items are produced in trace order; an
 * item's @offset is the decoder's position when it was produced.
 *
 * Returns 1 when @item was filled, 0 at the end of the trace, a negative errno otherwise.
 * Returns -EINVAL if @dec or @item is NULL.
 * Returns -ENOMEM if libipt ran out of memory.
 */
int auxcap_ipt_decoder_next(struct auxcap_ipt_decoder *dec, struct auxcap_ipt_item *item);

/** Number of GAP items produced so far. */
uint64_t auxcap_ipt_decoder_gaps(const struct auxcap_ipt_decoder *dec);

/* -------------------------------------------------------------------------------------- */
/* Parallel decoding */

/**
 * Where to cut the Intel PT stream [@buf, @buf + @len) to decode its pieces independently:
 * offsets of PSB packets whose PSB+ carries a FUP (tracing on: the decoder knows where the
 * flow continues), about @chunk bytes apart (0: 64 KiB).  The first piece starts at 0 (it
 * holds what lies before the first PSB), the others at the PSBs.
 *
 * @ret_starts (caller-owned, @max entries) receives the starts in increasing order.
 *
 * Returns the number of pieces (>= 1; 1 for an empty stream), at most @max.
 * Returns -EINVAL if @buf is NULL with a non-zero @len, @ret_starts is NULL or @max is 0.
 */
ssize_t auxcap_ipt_split(const uint8_t *buf, size_t len, size_t chunk, uint64_t *ret_starts,
			 size_t max);

/** Receives the items of a parallel decode in trace order.  Returns < 0 to stop. */
typedef int (*auxcap_ipt_item_fn)(void *ctx, const struct auxcap_ipt_item *item);

/** Options of auxcap_ipt_decode_parallel(). */
struct auxcap_ipt_parallel_opts {
	size_t sz;			     /* sizeof(struct auxcap_ipt_parallel_opts) */
	unsigned int threads;		     /* decoding threads, 0: the online CPUs */
	size_t chunk;			     /* bytes of trace per piece, 0: 64 KiB */
	struct auxcap_ipt_decoder_opts dec;  /* per piece (block or instruction decoder, tick
						events); dec.start is ignored */
};

/**
 * Decode the Intel PT stream [@buf, @buf + @len) on several threads and hand its items to
 * @fn(@ctx, item) on the calling thread, in trace order: the same items, in the same order,
 * as one auxcap_ipt_decoder over the whole stream gives.
 *
 * The stream is cut at PSBs (auxcap_ipt_split()); each piece is decoded from its PSB on by
 * one of threads - 1 workers, each with its own clone of @image (auxcap_ipt_image_clone(),
 * with section objects of its own), or by the calling thread: the head piece when no worker has
 * taken it (its items then go to @fn as they come), later ones while it waits for a worker.
 * A piece stops where the next one starts: at the status updates of the next piece's PSB+,
 * which the next piece reports when it starts there.  Decoding stays at most threads + 1
 * pieces ahead of the hand-out, so that many pieces of items are held at a time.  On one
 * thread it is one decoder over the whole stream, on the calling thread.  (With MTC
 * or CYC packets, libipt's timing calibration restarts at each piece: times between two TSCs
 * can differ from one sequential decode.)
 *
 * @buf and @image are borrowed for the call; no section may be added to @image meanwhile.
 *
 * Returns 0 when the whole stream was decoded, the negative value @fn returned if it stopped,
 * or a negative errno.
 * Returns -EINVAL if @buf is NULL with a non-zero @len, @image or @fn is NULL, or @opts /
 * @params has a too small sz.
 * Returns -ENOMEM if out of memory.
 */
int auxcap_ipt_decode_parallel(const uint8_t *buf, size_t len, struct auxcap_ipt_image *image,
			       const struct auxcap_ipt_params *params,
			       const struct auxcap_ipt_parallel_opts *opts, auxcap_ipt_item_fn fn,
			       void *ctx);

#endif /* AUXCAP_IPT_H */
