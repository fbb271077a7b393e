/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stand-in for a kernel's vmlinux (tests/decode/test_decode_kernel.c): code linked at a
 * kernel address, with symbols and DWARF lines, whose flow the test's trace follows:
 *
 *   kentry: call khelper; (khelper: jne taken, ret) test; jz taken; pop; jmp ktail
 *   ktail:  nop; ret (where tracing stops)
 *
 * The labels kentry_* mark the branches and their targets for the test.
 */
	.text
	.globl	kentry
	.type	kentry, @function
kentry:
	push	%rbp
	mov	%rsp, %rbp
	.globl	kentry_call
kentry_call:
	call	khelper
	.globl	kentry_back
kentry_back:
	test	%eax, %eax
	.globl	kentry_jz
kentry_jz:
	jz	1f
	nop
	nop
1:
	.globl	kentry_skip
kentry_skip = 1b
	pop	%rbp
	.globl	kentry_jmp
kentry_jmp:
	jmp	ktail
	.size	kentry, .-kentry

	.globl	khelper
	.type	khelper, @function
khelper:
	xor	%eax, %eax
	cmp	$1, %edi
	.globl	khelper_jne
khelper_jne:
	jne	2f
	inc	%eax
2:
	.globl	khelper_ret
khelper_ret:
	ret
	.size	khelper, .-khelper

	.globl	ktail
	.type	ktail, @function
ktail:
	nop
	.globl	ktail_ret
ktail_ret:
	ret
	.size	ktail, .-ktail
	.section .note.GNU-stack,"",@progbits
