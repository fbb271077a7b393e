/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capstone adapter of the live tracer: the only file that includes <capstone/capstone.h>.
 *
 * It classifies an x86-64 instruction (length, branch kind, direct target, REP string) and
 * describes its memory operand in terms of struct user_regs_struct slots, so the rest of the
 * tracer never sees capstone types.  auxcap_tracer_memop_addr() then computes the address
 * from the registers at the stop before the instruction ran.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "tracer_int.h"

struct auxcap_tracer_disasm {
	csh cs;	       /* capstone handle, detail mode on */
	cs_insn *insn; /* reusable instruction from cs_malloc() */
};

int auxcap_tracer_disasm_new(struct auxcap_tracer_disasm **ret_dis)
{
	struct auxcap_tracer_disasm *dis;

	if (!ret_dis)
		return -EINVAL;
	dis = calloc(1, sizeof(*dis));
	if (!dis)
		return -ENOMEM;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &dis->cs) != CS_ERR_OK)
		goto err_free;
	if (cs_option(dis->cs, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK)
		goto err_close;
	dis->insn = cs_malloc(dis->cs);
	if (!dis->insn)
		goto err_close;
	*ret_dis = dis;
	return 0;

err_close:
	cs_close(&dis->cs);
err_free:
	free(dis);
	return -ENOMEM;
}

void auxcap_tracer_disasm_free(struct auxcap_tracer_disasm *dis)
{
	if (!dis)
		return;
	cs_free(dis->insn, 1);
	cs_close(&dis->cs);
	free(dis);
}

#define SLOT(field) ((int8_t)(offsetof(struct user_regs_struct, field) / 8))

/* Map a capstone register to a user_regs_struct slot; @narrow is set for 32-bit names. */
static int8_t reg_slot(x86_reg r, uint8_t *narrow)
{
	*narrow = 0;
	switch (r) {
	case X86_REG_INVALID:
		return AUXCAP_TRACER_REG_NONE;
	case X86_REG_RIP:
		return AUXCAP_TRACER_REG_RIP;
	case X86_REG_RAX:
		return SLOT(rax);
	case X86_REG_RBX:
		return SLOT(rbx);
	case X86_REG_RCX:
		return SLOT(rcx);
	case X86_REG_RDX:
		return SLOT(rdx);
	case X86_REG_RSI:
		return SLOT(rsi);
	case X86_REG_RDI:
		return SLOT(rdi);
	case X86_REG_RBP:
		return SLOT(rbp);
	case X86_REG_RSP:
		return SLOT(rsp);
	case X86_REG_R8:
		return SLOT(r8);
	case X86_REG_R9:
		return SLOT(r9);
	case X86_REG_R10:
		return SLOT(r10);
	case X86_REG_R11:
		return SLOT(r11);
	case X86_REG_R12:
		return SLOT(r12);
	case X86_REG_R13:
		return SLOT(r13);
	case X86_REG_R14:
		return SLOT(r14);
	case X86_REG_R15:
		return SLOT(r15);
	default:
		break;
	}
	*narrow = 1;
	switch (r) {
	case X86_REG_EIP:
		return AUXCAP_TRACER_REG_RIP;
	case X86_REG_EAX:
		return SLOT(rax);
	case X86_REG_EBX:
		return SLOT(rbx);
	case X86_REG_ECX:
		return SLOT(rcx);
	case X86_REG_EDX:
		return SLOT(rdx);
	case X86_REG_ESI:
		return SLOT(rsi);
	case X86_REG_EDI:
		return SLOT(rdi);
	case X86_REG_EBP:
		return SLOT(rbp);
	case X86_REG_ESP:
		return SLOT(rsp);
	case X86_REG_R8D:
		return SLOT(r8);
	case X86_REG_R9D:
		return SLOT(r9);
	case X86_REG_R10D:
		return SLOT(r10);
	case X86_REG_R11D:
		return SLOT(r11);
	case X86_REG_R12D:
		return SLOT(r12);
	case X86_REG_R13D:
		return SLOT(r13);
	case X86_REG_R14D:
		return SLOT(r14);
	case X86_REG_R15D:
		return SLOT(r15);
	default:
		/* Vector index registers (gathers) and others: no single address. */
		return -3;
	}
}

static bool is_cond_jump(unsigned int id)
{
	switch (id) {
	case X86_INS_JAE:
	case X86_INS_JA:
	case X86_INS_JBE:
	case X86_INS_JB:
	case X86_INS_JCXZ:
	case X86_INS_JECXZ:
	case X86_INS_JRCXZ:
	case X86_INS_JE:
	case X86_INS_JGE:
	case X86_INS_JG:
	case X86_INS_JLE:
	case X86_INS_JL:
	case X86_INS_JNE:
	case X86_INS_JNO:
	case X86_INS_JNP:
	case X86_INS_JNS:
	case X86_INS_JO:
	case X86_INS_JP:
	case X86_INS_JS:
	case X86_INS_LOOP:
	case X86_INS_LOOPE:
	case X86_INS_LOOPNE:
		return true;
	default:
		return false;
	}
}

static void classify(const cs_insn *in, struct auxcap_tracer_decoded *d)
{
	const cs_x86 *x = &in->detail->x86;
	bool imm = x->op_count >= 1 && x->operands[0].type == X86_OP_IMM;

	switch (in->id) {
	case X86_INS_CALL:
		d->kind = imm ? AUXCAP_TRACER_CALL : AUXCAP_TRACER_IND_CALL;
		break;
	case X86_INS_JMP:
		d->kind = imm ? AUXCAP_TRACER_JUMP : AUXCAP_TRACER_IND_JUMP;
		break;
	case X86_INS_RET:
		d->kind = AUXCAP_TRACER_RETURN;
		break;
	case X86_INS_SYSCALL:
	case X86_INS_SYSENTER:
	case X86_INS_INT:
	case X86_INS_INT1:
	case X86_INS_INT3:
	case X86_INS_INTO:
	case X86_INS_LCALL:
	case X86_INS_LJMP:
	case X86_INS_RETF:
	case X86_INS_RETFQ:
	case X86_INS_IRET:
	case X86_INS_IRETD:
	case X86_INS_IRETQ:
	case X86_INS_UD2:
		d->kind = AUXCAP_TRACER_FAR;
		break;
	default:
		d->kind = is_cond_jump(in->id) ? AUXCAP_TRACER_COND : AUXCAP_TRACER_OTHER;
		break;
	}
	if (imm && (d->kind == AUXCAP_TRACER_COND || d->kind == AUXCAP_TRACER_JUMP ||
		    d->kind == AUXCAP_TRACER_CALL))
		d->target = (uint64_t)x->operands[0].imm;
}

static bool is_string_op(unsigned int id)
{
	switch (id) {
	case X86_INS_MOVSB:
	case X86_INS_MOVSW:
	case X86_INS_MOVSD:
	case X86_INS_MOVSQ:
	case X86_INS_STOSB:
	case X86_INS_STOSW:
	case X86_INS_STOSD:
	case X86_INS_STOSQ:
	case X86_INS_LODSB:
	case X86_INS_LODSW:
	case X86_INS_LODSD:
	case X86_INS_LODSQ:
	case X86_INS_CMPSB:
	case X86_INS_CMPSW:
	case X86_INS_CMPSD:
	case X86_INS_CMPSQ:
	case X86_INS_SCASB:
	case X86_INS_SCASW:
	case X86_INS_SCASD:
	case X86_INS_SCASQ:
	case X86_INS_INSB:
	case X86_INS_INSW:
	case X86_INS_INSD:
	case X86_INS_OUTSB:
	case X86_INS_OUTSW:
	case X86_INS_OUTSD:
		return true;
	default:
		return false;
	}
}

/* Describe the first explicit memory operand (or the implicit stack slot of push/pop). */
static void describe_mem(const cs_insn *in, struct auxcap_tracer_memop *m)
{
	const cs_x86 *x = &in->detail->x86;
	uint8_t n1, n2;

	memset(m, 0, sizeof(*m));
	m->base = AUXCAP_TRACER_REG_NONE;
	m->index = AUXCAP_TRACER_REG_NONE;
	m->scale = 1;
	if (in->id == X86_INS_LEA || in->id == X86_INS_NOP || in->id == X86_INS_PREFETCH ||
	    in->id == X86_INS_PREFETCHNTA || in->id == X86_INS_PREFETCHT0 ||
	    in->id == X86_INS_PREFETCHT1 || in->id == X86_INS_PREFETCHT2)
		return;
	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		int8_t b, ix;

		if (op->type != X86_OP_MEM)
			continue;
		b = reg_slot(op->mem.base, &n1);
		ix = reg_slot(op->mem.index, &n2);
		if (b == -3 || ix == -3)
			return;
		if (op->access & CS_AC_WRITE)
			m->flags |= AUXCAP_TRACER_MEM_STORE;
		if (op->access & CS_AC_READ)
			m->flags |= AUXCAP_TRACER_MEM_LOAD;
		/* Branches through memory (jmp *mem) are loads whatever capstone says. */
		if (!m->flags)
			m->flags = AUXCAP_TRACER_MEM_LOAD;
		m->base = b;
		m->index = ix;
		m->scale = op->mem.scale > 0 ? (uint8_t)op->mem.scale : 1;
		m->narrow = n1 || n2;
		m->disp = op->mem.disp;
		if (op->mem.segment == X86_REG_FS)
			m->seg = 1;
		else if (op->mem.segment == X86_REG_GS)
			m->seg = 2;
		return;
	}
	if (in->id == X86_INS_PUSH) {
		m->flags = AUXCAP_TRACER_MEM_STORE;
		m->base = SLOT(rsp);
		m->stack = -8;
	} else if (in->id == X86_INS_POP) {
		m->flags = AUXCAP_TRACER_MEM_LOAD;
		m->base = SLOT(rsp);
		m->stack = 1;
	}
}

int auxcap_tracer_disasm_decode(struct auxcap_tracer_disasm *dis, const uint8_t *code, size_t size,
				uint64_t ip, struct auxcap_tracer_decoded *ret)
{
	struct auxcap_tracer_decoded d;
	const uint8_t *p = code;
	uint64_t addr = ip;

	if (!dis || !code || !ret)
		return -EINVAL;
	if (!cs_disasm_iter(dis->cs, &p, &size, &addr, dis->insn))
		return -EFAULT;
	memset(&d, 0, sizeof(d));
	d.ip = ip;
	d.len = (uint8_t)dis->insn->size;
	classify(dis->insn, &d);
	if (d.kind == AUXCAP_TRACER_OTHER && is_string_op(dis->insn->id)) {
		uint8_t pfx = dis->insn->detail->x86.prefix[0];

		d.rep = pfx == X86_PREFIX_REP || pfx == X86_PREFIX_REPNE;
	}
	describe_mem(dis->insn, &d.mem);
	*ret = d;
	return 0;
}

uint64_t auxcap_tracer_memop_addr(const struct auxcap_tracer_memop *mem,
				  const struct user_regs_struct *regs, uint64_t next_ip)
{
	uint64_t words[sizeof(*regs) / 8];
	uint64_t a = 0;

	if (!mem->flags)
		return 0;
	memcpy(words, regs, sizeof(words));
	if (mem->base == AUXCAP_TRACER_REG_RIP)
		a = next_ip;
	else if (mem->base >= 0)
		a = words[mem->base];
	if (mem->index >= 0)
		a += words[mem->index] * mem->scale;
	a += (uint64_t)mem->disp;
	if (mem->stack < 0)
		a -= 8;
	if (mem->narrow)
		a &= 0xffffffffu;
	if (mem->seg == 1)
		a += regs->fs_base;
	else if (mem->seg == 2)
		a += regs->gs_base;
	return a;
}
