/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the live tracer: the instruction classifier (the capstone adapter, insn.c), the
 * output staging buffer shared by the encoders, and the encoder ops table.
 */
#ifndef AUXCAP_EMU_TRACER_INT_H
#define AUXCAP_EMU_TRACER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/user.h>

#include "tracer.h"

/* Register slots: indices of 64-bit words in struct user_regs_struct. */
#define AUXCAP_TRACER_REG_NONE (-1)
#define AUXCAP_TRACER_REG_RIP  (-2)

/** The memory operand of an instruction, independent of register values. */
struct auxcap_tracer_memop {
	uint8_t flags;	/* enum auxcap_tracer_mem_flags; 0 if there is no data access */
	int8_t base;	/* register slot, AUXCAP_TRACER_REG_NONE or _RIP */
	int8_t index;	/* register slot or AUXCAP_TRACER_REG_NONE */
	uint8_t scale;	/* 1, 2, 4 or 8 */
	uint8_t narrow; /* 32-bit address size: truncate the sum to 32 bits */
	uint8_t seg;	/* 0: none, 1: fs, 2: gs */
	int8_t stack;	/* push: -8 (store at rsp-8), pop: +1 (load at rsp), else 0 */
	int64_t disp;	/* displacement, bytes */
};

/** A decoded instruction: what the tracer needs from the disassembler. */
struct auxcap_tracer_decoded {
	uint64_t ip;	 /* address it was decoded at */
	uint64_t target; /* direct branch target, else 0 */
	enum auxcap_tracer_kind kind;
	uint8_t len; /* bytes */
	bool rep;    /* REP/REPE/REPNE string instruction (stops per iteration) */
	struct auxcap_tracer_memop mem;
};

struct auxcap_tracer_disasm;

/** Open the x86-64 disassembler.  Returns 0, -ENOMEM, or -ENOSYS without capstone. */
int auxcap_tracer_disasm_new(struct auxcap_tracer_disasm **ret_dis);
void auxcap_tracer_disasm_free(struct auxcap_tracer_disasm *dis);

/**
 * Decode the instruction in @code (@size bytes read at @ip) into @ret.
 *
 * Returns 0 on success, -EFAULT if the bytes are not a valid instruction, -EINVAL on NULL.
 */
int auxcap_tracer_disasm_decode(struct auxcap_tracer_disasm *dis, const uint8_t *code, size_t size,
				uint64_t ip, struct auxcap_tracer_decoded *ret);

/**
 * The data address of @mem given the registers before the instruction ran.  @next_ip is the
 * address of the following instruction (RIP-relative base).  Returns 0 if @mem has no access.
 */
uint64_t auxcap_tracer_memop_addr(const struct auxcap_tracer_memop *mem,
				  const struct user_regs_struct *regs, uint64_t next_ip);

/** Where encoders put their bytes: staged, then passed to on_trace. */
struct auxcap_tracer_out {
	auxcap_tracer_trace_fn fn;	   /* borrowed from the opts */
	void *ctx;			   /* borrowed */
	struct auxcap_tracer_stats *stats; /* the tracer's counters */
	size_t len;			   /* bytes staged in @buf */
	uint8_t buf[16384];		   /* staging buffer */
};

/** Append @len bytes of one packet/record; flushes when the stage is full. Returns 0 or -errno. */
int auxcap_tracer_out_put(struct auxcap_tracer_out *out, const void *bytes, size_t len);
/** Pass the staged bytes to on_trace.  Returns 0 or the callback's negative errno. */
int auxcap_tracer_out_flush(struct auxcap_tracer_out *out);

/** Where and when tracing starts or resumes. */
struct auxcap_tracer_begin {
	uint64_t ip;  /* next instruction to execute */
	bool traced;  /* @ip is in the filter */
	uint64_t tsc; /* TSC now */
	uint32_t pid; /* process id (SPE context) */
	uint32_t tid; /* thread id */
};

/**
 * An encoder: turns the instruction stream into one trace format.  The tracer allocates and
 * zeroes priv_size bytes and passes them to every op.  All ops return 0 or a negative errno.
 */
struct auxcap_tracer_encoder_ops {
	const char *name; /* "intel_pt", ... */
	size_t priv_size; /* bytes of private state */
	/** Set up @priv from @opts; @out is borrowed for the encoder's lifetime. */
	int (*init)(void *priv, const struct auxcap_tracer_opts *opts,
		    struct auxcap_tracer_out *out);
	/** Tracing starts (after exec or attach). */
	int (*begin)(void *priv, const struct auxcap_tracer_begin *b);
	/** One executed instruction (traced or not: check insn->traced). */
	int (*insn)(void *priv, const struct auxcap_tracer_insn *insn);
	/** Control moved from @from (not executed) to @to without an instruction (signal). */
	int (*async)(void *priv, uint64_t from, uint64_t to, bool to_traced, uint64_t tsc);
	/** Tracing ends with @ip the next instruction (0 if the task ended). */
	int (*end)(void *priv, uint64_t ip, uint64_t tsc);
	/**
	 * Optional: make the trace so far decodable to its last instruction now, @ip being the
	 * next one (PT: a PSB+ there, which writes out the pending TNT bits first and gives a
	 * decoder its position; a trace that ends in a TNT packet leaves its last bits unread
	 * by libipt and perf, which look for a packet after it); tracing goes on.
	 */
	int (*flush)(void *priv, uint64_t ip, uint64_t tsc);
	/**
	 * Optional: the next instruction, traced, is a far transfer that will be stepped later
	 * (a system call, which may block: opts.break_at_far): what it writes on its way out of
	 * the traced code, written now (PT: the pending TNT bits, the TIP.PGD and the TSC @tsc
	 * of entering the kernel), so the trace decodes up to it while it blocks.  Its insn()
	 * call then only does the rest.
	 */
	int (*far_enter)(void *priv, uint64_t tsc);
	/** Release what init allocated; may be called after a failed init. */
	void (*fini)(void *priv);
};

/**
 * The memory hierarchy model of the emulated SPE unit (spe_cache.c): an L1 data cache
 * (32 KiB, 8-way), a private L2 (256 KiB, 8-way), a last-level cache (2 MiB, 16-way), all of
 * 64-byte lines, and a data TLB (64 entries, 4-way, 4 KiB pages), true LRU, looked up by
 * virtual address.
 */
struct auxcap_tracer_spe_cache;

/** What one access missed: bits of auxcap_tracer_spe_cache_access()'s result. */
enum auxcap_tracer_spe_cache_miss {
	AUXCAP_TRACER_SPE_CACHE_L1_MISS = 1u << 0,  /* not in the L1D (then filled) */
	AUXCAP_TRACER_SPE_CACHE_L2_MISS = 1u << 3,  /* not in the L2 either (then filled) */
	AUXCAP_TRACER_SPE_CACHE_LLC_MISS = 1u << 1, /* not in the LLC either (then filled) */
	AUXCAP_TRACER_SPE_CACHE_TLB_WALK = 1u << 2, /* not in the DTLB: a table walk */
};

/**
 * Allocate an empty model (every line and TLB entry invalid) into @ret_cache, owned by the
 * caller (auxcap_tracer_spe_cache_free()).
 *
 * Returns -EINVAL if @ret_cache is NULL.
 * Returns -ENOMEM if out of memory.
 */
int auxcap_tracer_spe_cache_new(struct auxcap_tracer_spe_cache **ret_cache);
/** Free @cache (NULL is fine). */
void auxcap_tracer_spe_cache_free(struct auxcap_tracer_spe_cache *cache);
/**
 * One data access at virtual address @addr, load or store alike: the TLB and the caches are
 * looked up and updated (LRU order, fills on misses); the caches in order, down to the first
 * that holds the line (an L2 hit does not look the LLC up).  The access is one line, the line
 * of @addr (its first byte).  Returns its enum auxcap_tracer_spe_cache_miss bits (0: hits);
 * L2_MISS comes only with L1_MISS, LLC_MISS only with L2_MISS.
 */
unsigned int auxcap_tracer_spe_cache_access(struct auxcap_tracer_spe_cache *cache, uint64_t addr);

extern const struct auxcap_tracer_encoder_ops auxcap_tracer_enc_pt;
extern const struct auxcap_tracer_encoder_ops auxcap_tracer_enc_bts;
extern const struct auxcap_tracer_encoder_ops auxcap_tracer_enc_spe;

#endif /* AUXCAP_EMU_TRACER_INT_H */
