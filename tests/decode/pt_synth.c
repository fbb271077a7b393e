/* SPDX-License-Identifier: BSD-3-Clause */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pt_synth.h"

void pts_begin(struct pts *x, uint8_t *buf, size_t size)
{
	struct pt_config config;

	memset(x, 0, sizeof(*x));
	pt_config_init(&config);
	config.begin = buf;
	config.end = buf + size;
	x->e = pt_alloc_encoder(&config);
	assert_non_null(x->e);
}

void pts_put(struct pts *x, enum pt_packet_type type)
{
	x->p.type = type;
	assert_true(pt_enc_next(x->e, &x->p) >= 0);
	memset(&x->p, 0, sizeof(x->p));
}

void pts_put_ip(struct pts *x, enum pt_packet_type type, enum pt_ip_compression ipc,
		uint64_t ip)
{
	x->p.payload.ip.ipc = ipc;
	x->p.payload.ip.ip = ip;
	pts_put(x, type);
}

void pts_put_tsc(struct pts *x, uint64_t tsc)
{
	x->p.payload.tsc.tsc = tsc;
	pts_put(x, ppt_tsc);
}

void pts_psb(struct pts *x, uint64_t tsc, uint64_t cr3)
{
	pts_put(x, ppt_psb);
	pts_put_tsc(x, tsc);
	x->p.payload.mode.leaf = pt_mol_exec;
	x->p.payload.mode.bits.exec.csl = 1;
	pts_put(x, ppt_mode);
	if (cr3) {
		x->p.payload.pip.cr3 = cr3;
		pts_put(x, ppt_pip);
	}
	pts_put(x, ppt_psbend);
}

size_t pts_end(struct pts *x)
{
	uint64_t off;

	assert_true(pt_enc_get_offset(x->e, &off) >= 0);
	pt_free_encoder(x->e);
	x->e = NULL;
	return (size_t)off;
}
