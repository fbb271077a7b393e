/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the live tracer's pieces that need no child process: option validation,
 * /proc/PID/maps parsing, and instruction classification + data address computation.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <sys/mman.h>

#include <cmocka.h>

#include "tracer_int.h"
#include "util.h"

static int sink(void *ctx, const void *bytes, size_t len)
{
	(void)ctx;
	(void)bytes;
	(void)len;
	return 0;
}

static void test_tracer_new_rejects_bad_options(void **state)
{
	struct auxcap_tracer_opts opts = { .sz = sizeof(opts), .on_trace = sink };
	unsigned char big[sizeof(opts) + 8];
	struct auxcap_tracer *tr = NULL;

	(void)state;
	assert_int_equal(auxcap_tracer_new(NULL, &tr), -EINVAL);
	assert_int_equal(auxcap_tracer_new(&opts, NULL), -EINVAL);
	opts.sz = 8;
	assert_int_equal(auxcap_tracer_new(&opts, &tr), -EINVAL);
	opts.sz = sizeof(opts);
	opts.format = AUXCAP_TRACER_FORMAT_MAX;
	assert_int_equal(auxcap_tracer_new(&opts, &tr), -EINVAL);
	opts.format = AUXCAP_TRACER_INTEL_PT;
	opts.filter_start = 0x2000;
	opts.filter_end = 0x1000;
	assert_int_equal(auxcap_tracer_new(&opts, &tr), -EINVAL);
	opts.filter_start = opts.filter_end = 0;
	memset(big, 0, sizeof(big));
	memcpy(big, &opts, sizeof(opts));
	((struct auxcap_tracer_opts *)(void *)big)->sz = sizeof(big);
	big[sizeof(opts) + 3] = 1;
	assert_int_equal(auxcap_tracer_new((struct auxcap_tracer_opts *)(void *)big, &tr), -E2BIG);
	assert_null(tr);
	big[sizeof(opts) + 3] = 0;
	assert_int_equal(auxcap_tracer_new((struct auxcap_tracer_opts *)(void *)big, &tr), 0);
	assert_non_null(tr);
	/* No child yet. */
	assert_int_equal(auxcap_tracer_step(tr, 1), -EINVAL);
	assert_int_equal(auxcap_tracer_pid(tr), -1);
	auxcap_tracer_free(tr);
	auxcap_tracer_free(NULL);
	assert_string_equal(auxcap_tracer_format_name(AUXCAP_TRACER_ARM_SPE), "arm_spe");
	assert_null(auxcap_tracer_format_name(AUXCAP_TRACER_FORMAT_MAX));
}

static void test_map_parse_file_anon_and_malformed(void **state)
{
	struct auxcap_tracer_map m;

	(void)state;
	assert_int_equal(
		auxcap_tracer_map_parse("7f12a000-7f12c000 r-xp 00026000 fe:01 332835    "
					"             /usr/lib/x86_64-linux-gnu/libc.so.6\n",
					&m),
		0);
	assert_int_equal(m.start, 0x7f12a000);
	assert_int_equal(m.end, 0x7f12c000);
	assert_int_equal(m.pgoff, 0x26000);
	assert_int_equal(m.prot, PROT_READ | PROT_EXEC);
	assert_int_equal(m.flags, MAP_PRIVATE);
	assert_int_equal(m.maj, 0xfe);
	assert_int_equal(m.min, 1);
	assert_int_equal(m.ino, 332835);
	assert_string_equal(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");

	assert_int_equal(auxcap_tracer_map_parse("1000-3000 rw-s 00000000 00:00 0 \n", &m), 0);
	assert_int_equal(m.prot, PROT_READ | PROT_WRITE);
	assert_int_equal(m.flags, MAP_SHARED);
	assert_string_equal(m.path, "//anon");

	assert_int_equal(
		auxcap_tracer_map_parse("7ffd000-7ffe000 r-xp 00000000 00:00 0 [vdso]", &m), 0);
	assert_string_equal(m.path, "[vdso]");

	assert_int_equal(auxcap_tracer_map_parse("garbage\n", &m), -EBADMSG);
	assert_int_equal(auxcap_tracer_map_parse("3000-1000 r-xp 0 00:00 0 x\n", &m), -EBADMSG);
	assert_int_equal(auxcap_tracer_map_parse(NULL, &m), -EINVAL);
}

struct disasm_case {
	const char *what; /* assembly, for failure messages */
	uint8_t code[16]; /* bytes */
	size_t size;	  /* bytes in @code */
	enum auxcap_tracer_kind kind;
	uint8_t len;	 /* expected length */
	uint64_t target; /* expected direct target */
	uint8_t mem;	 /* expected access flags */
	uint64_t addr;	 /* expected data address with the registers below */
	bool rep;	 /* expected REP string flag */
};

static void test_disasm_classifies_and_computes_addresses(void **state)
{
	const uint64_t ip = 0x401000;
	const struct disasm_case cases[] = {
		{ "je +5", { 0x74, 0x05 }, 2, AUXCAP_TRACER_COND, 2, ip + 7, 0, 0, false },
		{ "call +0", { 0xe8, 0, 0, 0, 0 }, 5, AUXCAP_TRACER_CALL, 5, ip + 5, 0, 0, false },
		{ "jmp -2", { 0xeb, 0xfe }, 2, AUXCAP_TRACER_JUMP, 2, ip, 0, 0, false },
		{ "call *%rax", { 0xff, 0xd0 }, 2, AUXCAP_TRACER_IND_CALL, 2, 0, 0, 0, false },
		{ "ret", { 0xc3 }, 1, AUXCAP_TRACER_RETURN, 1, 0, 0, 0, false },
		{ "syscall", { 0x0f, 0x05 }, 2, AUXCAP_TRACER_FAR, 2, 0, 0, 0, false },
		{ "jmp *0x402010(,%rax,8)",
		  { 0xff, 0x24, 0xc5, 0x10, 0x20, 0x40, 0x00 },
		  7,
		  AUXCAP_TRACER_IND_JUMP,
		  7,
		  0,
		  AUXCAP_TRACER_MEM_LOAD,
		  0x402010 + 2 * 8,
		  false },
		{ "mov %rax,0x10(%rip)",
		  { 0x48, 0x89, 0x05, 0x10, 0, 0, 0 },
		  7,
		  AUXCAP_TRACER_OTHER,
		  7,
		  0,
		  AUXCAP_TRACER_MEM_STORE,
		  ip + 7 + 0x10,
		  false },
		{ "mov -0x8(%rbp),%rax",
		  { 0x48, 0x8b, 0x45, 0xf8 },
		  4,
		  AUXCAP_TRACER_OTHER,
		  4,
		  0,
		  AUXCAP_TRACER_MEM_LOAD,
		  0x7ffc0000 - 8,
		  false },
		{ "rep stos %rax,(%rdi)",
		  { 0xf3, 0x48, 0xab },
		  3,
		  AUXCAP_TRACER_OTHER,
		  3,
		  0,
		  AUXCAP_TRACER_MEM_STORE,
		  0x5000,
		  true },
		{ "mov %fs:0x28,%rax",
		  { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 },
		  9,
		  AUXCAP_TRACER_OTHER,
		  9,
		  0,
		  AUXCAP_TRACER_MEM_LOAD,
		  0x7f0000001000 + 0x28,
		  false },
		{ "push %rbx",
		  { 0x53 },
		  1,
		  AUXCAP_TRACER_OTHER,
		  1,
		  0,
		  AUXCAP_TRACER_MEM_STORE,
		  0x7ffd0000 - 8,
		  false },
		{ "pop %rbx",
		  { 0x5b },
		  1,
		  AUXCAP_TRACER_OTHER,
		  1,
		  0,
		  AUXCAP_TRACER_MEM_LOAD,
		  0x7ffd0000,
		  false },
		{ "lea 0x8(%rax),%rbx",
		  { 0x48, 0x8d, 0x58, 0x08 },
		  4,
		  AUXCAP_TRACER_OTHER,
		  4,
		  0,
		  0,
		  0,
		  false },
		{ "add %rbx,(%rax,%rcx,4)",
		  { 0x48, 0x01, 0x1c, 0x88 },
		  4,
		  AUXCAP_TRACER_OTHER,
		  4,
		  0,
		  AUXCAP_TRACER_MEM_LOAD | AUXCAP_TRACER_MEM_STORE,
		  2 + 3 * 4,
		  false },
	};
	struct auxcap_tracer_disasm *dis;
	struct user_regs_struct regs;

	(void)state;
	memset(&regs, 0, sizeof(regs));
	regs.rax = 2;
	regs.rcx = 3;
	regs.rbp = 0x7ffc0000;
	regs.rsp = 0x7ffd0000;
	regs.rdi = 0x5000;
	regs.fs_base = 0x7f0000001000;
	assert_int_equal(auxcap_tracer_disasm_new(&dis), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct disasm_case *c = &cases[i];
		struct auxcap_tracer_decoded d;

		assert_int_equal(auxcap_tracer_disasm_decode(dis, c->code, c->size, ip, &d), 0);
		if (d.kind != c->kind || d.len != c->len || d.target != c->target ||
		    d.mem.flags != c->mem || d.rep != c->rep ||
		    auxcap_tracer_memop_addr(&d.mem, &regs, ip + d.len) != c->addr)
			fail_msg("%s: kind %d len %u target %#llx mem %u rep %d addr %#llx",
				 c->what, d.kind, d.len, (unsigned long long)d.target, d.mem.flags,
				 d.rep,
				 (unsigned long long)auxcap_tracer_memop_addr(&d.mem, &regs,
									      ip + d.len));
	}
	auxcap_tracer_disasm_free(dis);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tracer_new_rejects_bad_options),
		cmocka_unit_test(test_map_parse_file_anon_and_malformed),
		cmocka_unit_test(test_disasm_classifies_and_computes_addresses),
	};

	return cmocka_run_group_tests_name("emu/tracer_unit", tests, NULL, NULL);
}
