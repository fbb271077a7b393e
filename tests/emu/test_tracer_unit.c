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
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>

#include <cmocka.h>
#include <intel-pt.h>

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

/* Collects encoder output for the encoder-level tests. */
struct capture {
	uint8_t buf[4096]; /* bytes */
	size_t len;	   /* bytes used */
};

static int capture_fn(void *ctx, const void *bytes, size_t len)
{
	struct capture *c = ctx;

	assert_true(c->len + len <= sizeof(c->buf));
	memcpy(c->buf + c->len, bytes, len);
	c->len += len;
	return 0;
}

static struct auxcap_tracer_insn mk(uint64_t ip, uint8_t len, enum auxcap_tracer_kind kind,
				    uint64_t next, bool taken)
{
	struct auxcap_tracer_insn in;

	memset(&in, 0, sizeof(in));
	in.ip = ip;
	in.len = len;
	in.kind = kind;
	in.next_ip = next;
	in.taken = taken;
	in.traced = true;
	in.next_traced = true;
	in.tsc = 1000 + ip;
	return in;
}

/* The IP-compressed TIPs and the TNT packing, read back with libipt's packet decoder. */
static void test_pt_encoder_ip_compression_and_tnt(void **state)
{
	struct auxcap_tracer_opts opts = { .sz = sizeof(opts), .psb_period = 1 << 20 };
	struct auxcap_tracer_stats stats;
	struct auxcap_tracer_out out;
	struct auxcap_tracer_begin b = { .ip = 0x401000, .traced = true, .tsc = 77 };
	const struct auxcap_tracer_encoder_ops *ops = &auxcap_tracer_enc_pt;
	const struct {
		uint64_t to;
		enum pt_ip_compression ipc;
	} tips[] = {
		{ 0x401234, pt_ipc_update_16 },		/* same upper 48 bits */
		{ 0x12345678, pt_ipc_update_32 },	/* same upper 32 bits */
		{ 0x7fff12345678, pt_ipc_update_48 },	/* same upper 16 bits */
		{ 0xffff800000001000, pt_ipc_sext_48 }, /* canonical, upper bits differ */
		{ 0x0001000000000000, pt_ipc_full },	/* not a sign-extended 48-bit address */
	};
	const enum pt_packet_type want[] = { ppt_psb,	  ppt_tsc,   ppt_psbend, ppt_mode,
					     ppt_tip_pge, ppt_tnt_8, ppt_tnt_8,	 ppt_tip,
					     ppt_tip,	  ppt_tip,   ppt_tip,	 ppt_tip,
					     ppt_tip_pgd };
	struct pt_packet_decoder *dec;
	struct capture cap = { .len = 0 };
	struct pt_packet pkt;
	struct pt_config cfg;
	uint64_t ip = 0x401000;
	void *priv;
	size_t n = 0, ntip = 0;

	(void)state;
	memset(&stats, 0, sizeof(stats));
	memset(&out, 0, sizeof(out));
	out.fn = capture_fn;
	out.ctx = &cap;
	out.stats = &stats;
	priv = calloc(1, ops->priv_size);
	assert_non_null(priv);
	assert_int_equal(ops->init(priv, &opts, &out), 0);
	assert_int_equal(ops->begin(priv, &b), 0);
	/* 7 conditional branches: taken, not taken, ...: a full 6-bit TNT, then 1 bit. */
	for (int i = 0; i < 7; i++) {
		struct auxcap_tracer_insn in = mk(ip, 2, AUXCAP_TRACER_COND, ip + 2, i % 2 == 0);

		assert_int_equal(ops->insn(priv, &in), 0);
		ip += 2;
	}
	for (size_t i = 0; i < sizeof(tips) / sizeof(tips[0]); i++) {
		struct auxcap_tracer_insn in = mk(ip, 2, AUXCAP_TRACER_IND_JUMP, tips[i].to, true);

		assert_int_equal(ops->insn(priv, &in), 0);
		ip = tips[i].to;
	}
	assert_int_equal(ops->end(priv, 0, 99), 0);
	assert_int_equal(auxcap_tracer_out_flush(&out), 0);
	ops->fini(priv);
	free(priv);
	assert_int_equal(stats.trace_bytes, cap.len);

	pt_config_init(&cfg);
	cfg.begin = cap.buf;
	cfg.end = cap.buf + cap.len;
	dec = pt_pkt_alloc_decoder(&cfg);
	assert_non_null(dec);
	assert_int_equal(pt_pkt_sync_forward(dec), 0);
	while (pt_pkt_next(dec, &pkt, sizeof(pkt)) > 0) {
		assert_true(n < sizeof(want) / sizeof(want[0]));
		assert_int_equal(pkt.type, want[n]);
		if (pkt.type == ppt_tnt_8 && n == 5) {
			assert_int_equal(pkt.payload.tnt.bit_size, 6);
			assert_int_equal(pkt.payload.tnt.payload,
					 0x2a); /* T N T N T N, oldest high */
		} else if (pkt.type == ppt_tnt_8) {
			assert_int_equal(pkt.payload.tnt.bit_size, 1);
			assert_int_equal(pkt.payload.tnt.payload, 1);
		} else if (pkt.type == ppt_tip) {
			assert_int_equal(pkt.payload.ip.ipc, tips[ntip].ipc);
			ntip++;
		} else if (pkt.type == ppt_tip_pgd) {
			assert_int_equal(pkt.payload.ip.ipc, pt_ipc_suppressed);
		} else if (pkt.type == ppt_tsc) {
			assert_int_equal(pkt.payload.tsc.tsc, 77);
		}
		n++;
	}
	pt_pkt_free_decoder(dec);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	assert_int_equal(stats.packets, n);
}

/* A system call: TSC (entering the kernel), TIP.PGD without IP, then TSC, MODE.EXEC, TIP.PGE at
 * the return address. */
static void test_pt_encoder_syscall_disables_and_reenables(void **state)
{
	struct auxcap_tracer_opts opts = { .sz = sizeof(opts) };
	struct auxcap_tracer_stats stats;
	struct auxcap_tracer_out out;
	struct auxcap_tracer_begin b = { .ip = 0x401000, .traced = true, .tsc = 5 };
	const struct auxcap_tracer_encoder_ops *ops = &auxcap_tracer_enc_pt;
	const enum pt_packet_type want[] = { ppt_psb,	  ppt_tsc,     ppt_psbend, ppt_mode,
					     ppt_tip_pge, ppt_tsc,     ppt_tip_pgd, ppt_tsc,
					     ppt_mode,	  ppt_tip_pge, ppt_fup,	    ppt_tip_pgd };
	struct auxcap_tracer_insn in = mk(0x401000, 2, AUXCAP_TRACER_FAR, 0x401002, true);
	struct pt_packet_decoder *dec;
	struct capture cap = { .len = 0 };
	struct pt_packet pkt;
	struct pt_config cfg;
	void *priv;
	size_t n = 0;

	(void)state;
	memset(&stats, 0, sizeof(stats));
	memset(&out, 0, sizeof(out));
	out.fn = capture_fn;
	out.ctx = &cap;
	out.stats = &stats;
	priv = calloc(1, ops->priv_size);
	assert_non_null(priv);
	assert_int_equal(ops->init(priv, &opts, &out), 0);
	assert_int_equal(ops->begin(priv, &b), 0);
	in.tsc_delta = 300; /* the call took that long */
	assert_int_equal(ops->insn(priv, &in), 0);
	assert_int_equal(ops->end(priv, 0x401002, 9), 0);
	assert_int_equal(auxcap_tracer_out_flush(&out), 0);
	ops->fini(priv);
	free(priv);

	pt_config_init(&cfg);
	cfg.begin = cap.buf;
	cfg.end = cap.buf + cap.len;
	dec = pt_pkt_alloc_decoder(&cfg);
	assert_non_null(dec);
	assert_int_equal(pt_pkt_sync_forward(dec), 0);
	while (pt_pkt_next(dec, &pkt, sizeof(pkt)) > 0) {
		assert_true(n < sizeof(want) / sizeof(want[0]));
		assert_int_equal(pkt.type, want[n]);
		if (pkt.type == ppt_tip_pgd && n == 6)
			assert_int_equal(pkt.payload.ip.ipc, pt_ipc_suppressed);
		if (pkt.type == ppt_tsc && n == 5) /* the stop before the call */
			assert_int_equal(pkt.payload.tsc.tsc, in.tsc - in.tsc_delta);
		if (pkt.type == ppt_tsc && n == 7) /* the stop after it */
			assert_int_equal(pkt.payload.tsc.tsc, in.tsc);
		if (pkt.type == ppt_tip_pge && n == 9) {
			assert_int_equal(pkt.payload.ip.ipc, pt_ipc_update_16);
			assert_int_equal(pkt.payload.ip.ip & 0xffff, 0x1002);
		}
		n++;
	}
	pt_pkt_free_decoder(dec);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tracer_new_rejects_bad_options),
		cmocka_unit_test(test_disasm_classifies_and_computes_addresses),
		cmocka_unit_test(test_pt_encoder_ip_compression_and_tnt),
		cmocka_unit_test(test_pt_encoder_syscall_disables_and_reenables),
	};

	return cmocka_run_group_tests_name("emu/tracer_unit", tests, NULL, NULL);
}
