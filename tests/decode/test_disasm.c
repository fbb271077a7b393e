/* SPDX-License-Identifier: BSD-3-Clause */
/* decode/disasm.c: capstone adapter. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "disasm.h"

static void test_disasm_x86_modes(void **state)
{
	static const uint8_t mov_rax_1[] = { 0x48, 0xc7, 0xc0, 0x01, 0x00, 0x00, 0x00 };
	static const uint8_t jmp_rel8[] = { 0xeb, 0x04 };
	static const uint8_t ret_and_more[] = { 0xc3, 0x90, 0x90 };
	struct auxcap_disasm *d = NULL;
	char text[64];

	(void)state;
	assert_int_equal(auxcap_disasm_new(&d), 0);
	assert_int_equal(
		auxcap_disasm_insn(d, 64, mov_rax_1, sizeof(mov_rax_1), 0x1000, text, sizeof(text)),
		7);
	assert_string_equal(text, "mov rax, 1");
	/* Relative targets are resolved with the address. */
	assert_int_equal(
		auxcap_disasm_insn(d, 64, jmp_rel8, sizeof(jmp_rel8), 0x1000, text, sizeof(text)),
		2);
	assert_string_equal(text, "jmp 0x1006");
	/* Only the first instruction is decoded. */
	assert_int_equal(auxcap_disasm_insn(d, 32, ret_and_more, sizeof(ret_and_more), 0, text,
					    sizeof(text)),
			 1);
	assert_string_equal(text, "ret");
	/* In 32-bit mode 0x48 is "dec eax", one byte. */
	assert_int_equal(
		auxcap_disasm_insn(d, 32, mov_rax_1, sizeof(mov_rax_1), 0, text, sizeof(text)), 1);
	assert_string_equal(text, "dec eax");
	auxcap_disasm_free(d);
}

static void test_disasm_errors(void **state)
{
	static const uint8_t truncated[] = { 0x48, 0xc7 };
	struct auxcap_disasm *d = NULL;
	char text[64];

	(void)state;
	assert_int_equal(auxcap_disasm_new(NULL), -EINVAL);
	assert_int_equal(auxcap_disasm_new(&d), 0);
	assert_int_equal(
		auxcap_disasm_insn(d, 64, truncated, sizeof(truncated), 0, text, sizeof(text)),
		-EBADMSG);
	assert_int_equal(
		auxcap_disasm_insn(d, 48, truncated, sizeof(truncated), 0, text, sizeof(text)),
		-EINVAL);
	assert_int_equal(auxcap_disasm_insn(d, 64, NULL, 0, 0, text, sizeof(text)), -EINVAL);
	auxcap_disasm_free(d);
	auxcap_disasm_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disasm_x86_modes),
		cmocka_unit_test(test_disasm_errors),
	};

	return cmocka_run_group_tests_name("decode/disasm", tests, NULL, NULL);
}
