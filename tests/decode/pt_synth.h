/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intel PT trace written packet by packet with libipt's encoder, for the decode stage's tests
 * (cmocka: a packet that cannot be written fails the test).
 */
#ifndef AUXCAP_TEST_PT_SYNTH_H
#define AUXCAP_TEST_PT_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include <intel-pt.h>

struct pts {
	struct pt_encoder *e;
	struct pt_packet p; /* the next packet: set its payload, then pts_put() */
};

/* Start writing into @buf (@size bytes). */
void pts_begin(struct pts *x, uint8_t *buf, size_t size);
/* Write x->p as a packet of @type; x->p is cleared for the next. */
void pts_put(struct pts *x, enum pt_packet_type type);
void pts_put_ip(struct pts *x, enum pt_packet_type type, enum pt_ip_compression ipc,
		uint64_t ip);
void pts_put_tsc(struct pts *x, uint64_t tsc);
/* A PSB+ of 64-bit code at TSC @tsc: PSB, TSC, MODE.exec (CS.L), a PIP of @cr3 unless 0,
 * PSBEND. */
void pts_psb(struct pts *x, uint64_t tsc, uint64_t cr3);
/* The bytes written; the encoder is freed. */
size_t pts_end(struct pts *x);

#endif
