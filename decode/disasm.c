/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * x86 disassembly with capstone: the only file that includes <capstone/capstone.h>.
 * One capstone handle per execution mode, opened on first use.
 */
#include "disasm.h"

#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

bool auxcap_disasm_is_branch(const char *text)
{
	static const char *const prefixes[] = { "bnd ", "notrack ", "repz ", "rep " };
	static const char *const names[] = { "call", "ret", "loop", "syscall", "sysenter",
					     "sysexit", "sysret", "int", "iret", "lcall", "ljmp" };

	if (!text)
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(text, prefixes[i], strlen(prefixes[i])))
			text += strlen(prefixes[i]);
	if (text[0] == 'j')
		return true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(text, names[i], strlen(names[i])))
			return true;
	return false;
}

#if AUXCAP_HAVE_CAPSTONE
#include <capstone/capstone.h>

struct auxcap_disasm {
	csh handle[3]; /* 16-, 32-, 64-bit handles (valid where open[i]) */
	bool open[3];
	cs_insn *insn; /* scratch for cs_disasm_iter, allocated with the 64-bit handle */
};

int auxcap_disasm_new(struct auxcap_disasm **ret)
{
	struct auxcap_disasm *d;

	if (!ret)
		return -EINVAL;
	if (!cs_support(CS_ARCH_X86))
		return -EOPNOTSUPP;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	*ret = d;
	return 0;
}

void auxcap_disasm_free(struct auxcap_disasm *d)
{
	if (!d)
		return;
	if (d->insn)
		cs_free(d->insn, 1);
	for (int i = 0; i < 3; i++)
		if (d->open[i])
			(void)cs_close(&d->handle[i]);
	free(d);
}

static int handle_for(struct auxcap_disasm *d, int mode_bits, csh *ret)
{
	static const cs_mode modes[3] = { CS_MODE_16, CS_MODE_32, CS_MODE_64 };
	int i;

	switch (mode_bits) {
	case 16:
		i = 0;
		break;
	case 32:
		i = 1;
		break;
	case 64:
		i = 2;
		break;
	default:
		return -EINVAL;
	}
	if (!d->open[i]) {
		if (cs_open(CS_ARCH_X86, modes[i], &d->handle[i]) != CS_ERR_OK)
			return -ENOMEM;
		d->open[i] = true;
	}
	if (!d->insn) {
		d->insn = cs_malloc(d->handle[i]);
		if (!d->insn)
			return -ENOMEM;
	}
	*ret = d->handle[i];
	return 0;
}

int auxcap_disasm_insn(struct auxcap_disasm *d, int mode_bits, const uint8_t *code, size_t len,
		       uint64_t addr, char *buf, size_t bufsz)
{
	const uint8_t *p = code;
	size_t n = len;
	uint64_t a = addr;
	csh h;
	int r;

	if (!d || !code || !buf || !bufsz)
		return -EINVAL;
	r = handle_for(d, mode_bits, &h);
	if (r < 0)
		return r;
	if (!cs_disasm_iter(h, &p, &n, &a, d->insn))
		return -EBADMSG;
	if (d->insn->op_str[0])
		snprintf(buf, bufsz, "%s %s", d->insn->mnemonic, d->insn->op_str);
	else
		snprintf(buf, bufsz, "%s", d->insn->mnemonic);
	return (int)d->insn->size;
}

#else /* !AUXCAP_HAVE_CAPSTONE */

int auxcap_disasm_new(struct auxcap_disasm **ret)
{
	(void)ret;
	return -EOPNOTSUPP;
}

void auxcap_disasm_free(struct auxcap_disasm *d)
{
	(void)d;
}

int auxcap_disasm_insn(struct auxcap_disasm *d, int mode_bits, const uint8_t *code, size_t len,
		       uint64_t addr, char *buf, size_t bufsz)
{
	(void)d;
	(void)mode_bits;
	(void)code;
	(void)len;
	(void)addr;
	(void)buf;
	(void)bufsz;
	return -EOPNOTSUPP;
}

#endif
