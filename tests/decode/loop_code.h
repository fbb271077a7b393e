/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loop the decode_merge bench synthesizes Intel PT for (bench/decode_merge.c), shared
 * with the decode fuzz target (tests/fuzz/fuzz_decode.c), which adds it as raw code so that
 * the bench's captures decode whole as its seeds.
 */
#ifndef AUXCAP_TESTS_LOOP_CODE_H
#define AUXCAP_TESTS_LOOP_CODE_H

#include <stdint.h>

#define LOOP_CODE_ADDR 0x401000ull

/*
 * The code (at LOOP_CODE_ADDR), basic blocks of a few instructions as in compiled code:
 *   +0x00  e8 1b 00 00 00      call +0x20        F
 *   +0x05  48 01 d8            add rax, rbx
 *   +0x08  48 31 c9            xor rcx, rcx
 *   +0x0b  48 89 c2            mov rdx, rax
 *   +0x0e  48 ff c3            inc rbx
 *   +0x11  75 ed               jnz +0x00         taken: the loop
 *   +0x13  e9 e8 ff ff ff      jmp +0x00
 *   +0x20  48 89 f8            F: mov rax, rdi
 *   +0x23  48 01 f0            add rax, rsi
 *   +0x26  48 0f af c0         imul rax, rax
 *   +0x2a  a8 01               test al, 1
 *   +0x2c  74 04               jz +0x32          taken every other time
 *   +0x2e  90 90 90 90         nops
 *   +0x32  48 d1 e0            shl rax, 1
 *   +0x35  c3                  ret
 * Per iteration: call (no packet), jz (TNT bit), ret (TIP +0x05, no return compression),
 * jnz (TNT bit).  Each TIP is preceded by a TNT.8 of two bits: the previous jnz and this jz.
 */
static const uint8_t auxcap_loop_code[] = {
	0xe8, 0x1b, 0x00, 0x00, 0x00, 0x48, 0x01, 0xd8, 0x48, 0x31, 0xc9, 0x48, 0x89, 0xc2,
	0x48, 0xff, 0xc3, 0x75, 0xed, 0xe9, 0xe8, 0xff, 0xff, 0xff, 0x90, 0x90, 0x90, 0x90,
	0x90, 0x90, 0x90, 0x90, 0x48, 0x89, 0xf8, 0x48, 0x01, 0xf0, 0x48, 0x0f, 0xaf, 0xc0,
	0xa8, 0x01, 0x74, 0x04, 0x90, 0x90, 0x90, 0x90, 0x48, 0xd1, 0xe0, 0xc3,
};

#endif /* AUXCAP_TESTS_LOOP_CODE_H */
