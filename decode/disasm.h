/* SPDX-License-Identifier: BSD-3-Clause */
/* x86 disassembly for instruction output (capstone adapter; decode/disasm.c only). */
#ifndef AUXCAP_DECODE_DISASM_H
#define AUXCAP_DECODE_DISASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct auxcap_disasm;

/**
 * Create a disassembler for x86 (16-, 32- and 64-bit code, Intel syntax).
 *
 * Owned by the caller; free with auxcap_disasm_free().
 *
 * Returns 0 and the object in @ret on success.
 * Returns -EINVAL if @ret is NULL.
 * Returns -ENOMEM if out of memory.
 * Returns -EOPNOTSUPP if the build has no disassembler (no capstone) or capstone lacks x86.
 */
int auxcap_disasm_new(struct auxcap_disasm **ret);

/** Free @d (NULL is a no-op). */
void auxcap_disasm_free(struct auxcap_disasm *d);

/**
 * Disassemble the instruction at the start of @code (@len bytes) located at @addr, in
 * @mode_bits (16, 32 or 64) mode, into @buf as "mnemonic operands" (NUL-terminated,
 * truncated to @bufsz).
 *
 * Returns the instruction length in bytes on success.
 * Returns -EINVAL if an argument is NULL or @mode_bits is not 16, 32 or 64.
 * Returns -EBADMSG if the bytes are not a valid instruction.
 */
int auxcap_disasm_insn(struct auxcap_disasm *d, int mode_bits, const uint8_t *code, size_t len,
		       uint64_t addr, char *buf, size_t bufsz);

/**
 * Whether the instruction @text (as auxcap_disasm_insn() wrote it) transfers control: a jump,
 * conditional jump, loop, call, return, system call or interrupt.
 */
bool auxcap_disasm_is_branch(const char *text);

#endif
