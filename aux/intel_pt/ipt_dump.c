/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet listing: walk an Intel PT stream with libipt's packet decoder and format each
 * packet as one text line with the columns libipt's ptdump uses by default (offset, packet
 * name, payload, and for some packets a decoded extra column).  The formatter is ours; the
 * layout was matched against the expected outputs of libipt's test vectors.
 *
 * Layout of a line:  [OFFSET  ][RAW-BYTES  ]NAME PAYLOAD [EXTRA]
 * where NAME is padded to 11 columns and PAYLOAD to 21 when an EXTRA column follows.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "ipt.h"
#include "ipt_internal.h"

#define LINE_MAX_LEN 256

struct dump_state {
	const struct auxcap_ipt_dump_opts *opts;
	const uint8_t *buf; /* the trace (borrowed) */
	auxcap_ipt_line_fn line_fn;
	void *ctx;
	uint64_t last_ip; /* reconstructed IP for --lastip */
	uint64_t offset;  /* offset of the packet being formatted (bytes) */
	char line[LINE_MAX_LEN];
	size_t pos; /* bytes used in @line */
};

static void put(struct dump_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct dump_state *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->pos >= sizeof(s->line) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(s->line + s->pos, sizeof(s->line) - s->pos, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	s->pos += (size_t)n;
	if (s->pos >= sizeof(s->line))
		s->pos = sizeof(s->line) - 1;
}

/* Pad the line with spaces up to column @col (at least one space). */
static void pad_to(struct dump_state *s, size_t start, size_t width)
{
	size_t used = s->pos - start;

	do {
		put(s, " ");
		used++;
	} while (used < width);
}

static int flush(struct dump_state *s)
{
	while (s->pos && s->line[s->pos - 1] == ' ')
		s->pos--;
	s->line[s->pos] = '\0';
	s->pos = 0;
	return s->line_fn(s->ctx, s->line);
}

static int diag(struct dump_state *s, uint64_t offset, const char *what, int pte)
{
	put(s, "[%" PRIx64 ": %s: %s]", offset, what, auxcap_ipt_strerror(pte));
	return flush(s);
}

static void put_ip(struct dump_state *s, const struct pt_packet_ip *ip)
{
	put(s, "%d: ", (int)ip->ipc);
	switch (ip->ipc) {
	case pt_ipc_suppressed:
		put(s, "????????????????");
		break;
	case pt_ipc_update_16:
		put(s, "????????????%04" PRIx64, ip->ip & 0xffffu);
		break;
	case pt_ipc_update_32:
		put(s, "????????%08" PRIx64, ip->ip & 0xffffffffu);
		break;
	case pt_ipc_update_48:
		put(s, "????%012" PRIx64, ip->ip & UINT64_C(0xffffffffffff));
		break;
	case pt_ipc_sext_48:
		put(s, "%016" PRIx64,
		    (ip->ip & 0x800000000000ull) ? (ip->ip | UINT64_C(0xffff000000000000))
						 : (ip->ip & UINT64_C(0xffffffffffff)));
		break;
	case pt_ipc_full:
	default:
		put(s, "%016" PRIx64, ip->ip);
		break;
	}
}

/* Update the last IP as the hardware does; returns false if the IP stays unknown. */
static bool update_last_ip(struct dump_state *s, const struct pt_packet_ip *ip)
{
	switch (ip->ipc) {
	case pt_ipc_suppressed:
		return false;
	case pt_ipc_update_16:
		s->last_ip = (s->last_ip & ~0xffffull) | (ip->ip & 0xffffull);
		return true;
	case pt_ipc_update_32:
		s->last_ip = (s->last_ip & ~0xffffffffull) | (ip->ip & 0xffffffffull);
		return true;
	case pt_ipc_update_48:
		s->last_ip =
			(s->last_ip & ~0xffffffffffffull) | (ip->ip & UINT64_C(0xffffffffffff));
		return true;
	case pt_ipc_sext_48:
		s->last_ip = (ip->ip & 0x800000000000ull) ? (ip->ip | UINT64_C(0xffff000000000000))
							  : (ip->ip & UINT64_C(0xffffffffffff));
		return true;
	case pt_ipc_full:
	default:
		s->last_ip = ip->ip;
		return true;
	}
}

/*
 * Packets libipt 2.0.5 does not know (Intel SDM, "Event Trace" and "Trigger Tracing"):
 *   CFE   02 13 [ip:1 | 0:2 | type:5] [vector]                         4 bytes
 *   EVD   02 53 [0:2 | type:6] [payload: 8 bytes, little endian]       11 bytes
 *   TRIG  d9 [ip:1 | icntv:1 | mult:1 | 0:5] [trbv] [icnt: 2 bytes, if icntv]
 * They reach us through libipt's unknown-packet callback; we return their size so the
 * walk continues, and format them from the raw bytes.
 */
enum {
	EXT_CFE = 0x13,
	EXT_EVD = 0x53,
	OPC_TRIG = 0xd9,
};

static int newer_packet_size(const uint8_t *pos, const uint8_t *end)
{
	size_t left = (size_t)(end - pos);

	if (left >= 2 && pos[0] == 0x02 && pos[1] == EXT_CFE)
		return left >= 4 ? 4 : -pte_eos;
	if (left >= 2 && pos[0] == 0x02 && pos[1] == EXT_EVD)
		return left >= 11 ? 11 : -pte_eos;
	if (left >= 1 && pos[0] == OPC_TRIG) {
		if (left < 3)
			return -pte_eos;
		if (pos[1] & 0x1f)
			return -pte_bad_packet;
		if (pos[1] & 0x40)
			return left >= 5 ? 5 : -pte_eos;
		return 3;
	}
	return -pte_bad_opc;
}

static int decode_unknown(struct pt_packet_unknown *unknown, const struct pt_config *config,
			  const uint8_t *pos, void *context)
{
	(void)context;
	unknown->packet = pos;
	unknown->priv = NULL;
	return newer_packet_size(pos, config->end);
}

static const char *cfe_type_name(unsigned type)
{
	static const char *const names[] = {
		[1] = "intr",	     [2] = "iret",	[3] = "smi",	 [4] = "rsm",
		[5] = "sipi",	     [6] = "init",	[7] = "vmentry", [8] = "vmexit",
		[9] = "vmexit_intr", [10] = "shutdown", [12] = "uintr",	 [13] = "uiret",
		[14] = "swintr",     [15] = "syscall",
	};

	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	return "unknown";
}

static const char *evd_type_name(unsigned type)
{
	switch (type) {
	case 0:
		return "cr2";
	case 1:
		return "vmxq";
	case 2:
		return "vmxr";
	default:
		return "unknown";
	}
}

static const char *unknown_name(const uint8_t *raw)
{
	if (raw[0] == OPC_TRIG)
		return "trig";
	return raw[1] == EXT_CFE ? "cfe" : "evd";
}

static void put_unknown(struct dump_state *s, const uint8_t *raw, char *extra, size_t n)
{
	if (raw[0] == OPC_TRIG) {
		put(s, "%02x", raw[2]);
		if (raw[1] & 0x80)
			put(s, ", ip");
		if (raw[1] & 0x20)
			put(s, ", mult");
		if (raw[1] & 0x40)
			put(s, ", icnt: %u", (unsigned)raw[3] | (unsigned)raw[4] << 8);
	} else if (raw[1] == EXT_CFE) {
		unsigned type = raw[2] & 0x1f;

		put(s, "%u", type);
		/* Only these types carry a vector: interrupts print it in decimal, SIPI
		 * its start page in hex. */
		if (type == 1 || type == 9 || type == 12 || type == 14)
			put(s, ": %u", (unsigned)raw[3]);
		else if (type == 5)
			put(s, ": %x", (unsigned)raw[3]);
		if (raw[2] & 0x80)
			put(s, ", ip");
		snprintf(extra, n, "type %s", cfe_type_name(type));
	} else {
		uint64_t payload = 0;
		unsigned type = raw[2] & 0x3f;

		for (int i = 7; i >= 0; i--)
			payload = payload << 8 | raw[3 + i];
		put(s, "%u: %" PRIx64, type, payload);
		snprintf(extra, n, "type %s", evd_type_name(type));
	}
}

static const char *packet_name(const struct pt_packet *p)
{
	switch (p->type) {
	case ppt_pad:
		return "pad";
	case ppt_psb:
		return "psb";
	case ppt_psbend:
		return "psbend";
	case ppt_fup:
		return "fup";
	case ppt_tip:
		return "tip";
	case ppt_tip_pge:
		return "tip.pge";
	case ppt_tip_pgd:
		return "tip.pgd";
	case ppt_tnt_8:
		return "tnt.8";
	case ppt_tnt_64:
		return "tnt.64";
	case ppt_mode:
		return p->payload.mode.leaf == pt_mol_tsx ? "mode.tsx" : "mode.exec";
	case ppt_pip:
		return "pip";
	case ppt_vmcs:
		return "vmcs";
	case ppt_cbr:
		return "cbr";
	case ppt_tsc:
		return "tsc";
	case ppt_tma:
		return "tma";
	case ppt_mtc:
		return "mtc";
	case ppt_cyc:
		return "cyc";
	case ppt_stop:
		return "stop";
	case ppt_ovf:
		return "ovf";
	case ppt_mnt:
		return "mnt";
	case ppt_exstop:
		return "exstop";
	case ppt_mwait:
		return "mwait";
	case ppt_pwre:
		return "pwre";
	case ppt_pwrx:
		return "pwrx";
	case ppt_ptw:
		return "ptw";
	case ppt_unknown:
		return unknown_name(p->payload.unknown.packet);
	case ppt_invalid:
	default:
		return "<invalid>";
	}
}

static const char *exec_mode_name(enum pt_exec_mode mode)
{
	switch (mode) {
	case ptem_16bit:
		return "16-bit";
	case ptem_32bit:
		return "32-bit";
	case ptem_64bit:
		return "64-bit";
	default:
		return "unknown";
	}
}

/* Format the payload of @p; writes the extra column text into @extra (may stay empty). */
static void put_payload(struct dump_state *s, const struct pt_packet *p, char *extra, size_t n)
{
	const char *sep = "";

	extra[0] = '\0';
	switch (p->type) {
	case ppt_fup:
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
		put_ip(s, &p->payload.ip);
		if (update_last_ip(s, &p->payload.ip) && s->opts->lastip)
			snprintf(extra, n, "ip %016" PRIx64, s->last_ip);
		break;
	case ppt_tnt_8:
	case ppt_tnt_64:
		/* The oldest branch is the most significant payload bit. */
		for (int i = (int)p->payload.tnt.bit_size - 1; i >= 0; i--)
			put(s, "%c", (p->payload.tnt.payload >> i) & 1 ? '!' : '.');
		break;
	case ppt_mode:
		if (p->payload.mode.leaf == pt_mol_tsx) {
			if (p->payload.mode.bits.tsx.intx) {
				put(s, "intx");
				sep = ", ";
			}
			if (p->payload.mode.bits.tsx.abrt)
				put(s, "%sabrt", sep);
			break;
		}
		if (p->payload.mode.bits.exec.csl) {
			put(s, "cs.l");
			sep = ", ";
		}
		if (p->payload.mode.bits.exec.csd) {
			put(s, "%scs.d", sep);
			sep = ", ";
		}
		/* Bit 2 is IF (interrupt flag, with Event Trace); libipt 2.0.5 drops it. */
		if (p->size == 2 && (s->buf[s->offset + 1] & 0x04))
			put(s, "%sif", sep);
		if (s->opts->exec_mode)
			snprintf(extra, n, "em %s",
				 exec_mode_name(pt_get_exec_mode(&p->payload.mode.bits.exec)));
		break;
	case ppt_pip:
		put(s, "%" PRIx64 "%s", p->payload.pip.cr3, p->payload.pip.nr ? ", nr" : "");
		snprintf(extra, n, "cr3 %016" PRIx64, p->payload.pip.cr3);
		break;
	case ppt_vmcs:
		put(s, "%" PRIx64, p->payload.vmcs.base);
		snprintf(extra, n, "vmcs %016" PRIx64, p->payload.vmcs.base);
		break;
	case ppt_tsc:
		put(s, "%" PRIx64, p->payload.tsc.tsc);
		break;
	case ppt_cbr:
		put(s, "%x", (unsigned)p->payload.cbr.ratio);
		break;
	case ppt_tma:
		put(s, "%x, %x", (unsigned)p->payload.tma.ctc, (unsigned)p->payload.tma.fc);
		break;
	case ppt_mtc:
		put(s, "%x", (unsigned)p->payload.mtc.ctc);
		break;
	case ppt_cyc:
		put(s, "%" PRIx64, p->payload.cyc.value);
		break;
	case ppt_mnt:
		put(s, "%" PRIx64, p->payload.mnt.payload);
		break;
	case ppt_exstop:
		if (p->payload.exstop.ip)
			put(s, "ip");
		break;
	case ppt_mwait:
		put(s, "%08x, %08x", p->payload.mwait.hints, p->payload.mwait.ext);
		break;
	case ppt_pwre:
		/* The fields hold the C-state minus one, modulo 16 (0xf is C0). */
		put(s, "c%u.%u%s", (p->payload.pwre.state + 1u) & 0xfu,
		    (p->payload.pwre.sub_state + 1u) & 0xfu, p->payload.pwre.hw ? ", hw" : "");
		break;
	case ppt_pwrx:
		if (p->payload.pwrx.interrupt) {
			put(s, "int");
			sep = ", ";
		}
		if (p->payload.pwrx.store) {
			put(s, "%sst", sep);
			sep = ", ";
		}
		if (p->payload.pwrx.autonomous)
			put(s, "%shw", sep);
		put(s, ": c%u, c%u", (p->payload.pwrx.last + 1u) & 0xfu,
		    (p->payload.pwrx.deepest + 1u) & 0xfu);
		break;
	case ppt_ptw:
		put(s, "%u: %" PRIx64 "%s", (unsigned)p->payload.ptw.plc, p->payload.ptw.payload,
		    p->payload.ptw.ip ? ", ip" : "");
		break;
	case ppt_unknown:
		put_unknown(s, p->payload.unknown.packet, extra, n);
		break;
	case ppt_psb:
		/* A PSB resets the last-IP compression state. */
		s->last_ip = 0;
		break;
	default:
		break;
	}
}

static int dump_packet(struct dump_state *s, uint64_t offset, const struct pt_packet *p)
{
	char extra[64];
	size_t start;

	s->offset = offset;
	if (!s->opts->no_offset)
		put(s, "%016" PRIx64 "  ", offset);
	if (s->opts->raw) {
		start = s->pos;
		for (uint8_t i = 0; i < p->size; i++)
			put(s, "%02x", s->buf[offset + i]);
		pad_to(s, start, 34);
	}
	start = s->pos;
	put(s, "%s", packet_name(p));
	pad_to(s, start, 11);
	start = s->pos;
	put_payload(s, p, extra, sizeof(extra));
	if (extra[0]) {
		pad_to(s, start, 21);
		put(s, "%s", extra);
	}
	return flush(s);
}

/* SKD007 (same as SKL049, KBL041): OVF bytes (02 f3) right after a CYC's first byte. */
static bool is_skd007_ovf(const uint8_t *buf, size_t len, uint64_t offset)
{
	return offset + 3 <= len && (buf[offset] & 0x04) && buf[offset + 1] == 0x02 &&
	       buf[offset + 2] == 0xf3;
}

int auxcap_ipt_dump(const uint8_t *buf, size_t len, const struct auxcap_ipt_params *params,
		    const struct auxcap_ipt_dump_opts *opts, auxcap_ipt_line_fn line_fn, void *ctx)
{
	static const struct auxcap_ipt_dump_opts no_opts = { .sz = sizeof(no_opts) };
	struct dump_state s = { .buf = buf, .line_fn = line_fn, .ctx = ctx };
	struct pt_packet_decoder *dec;
	struct pt_errata errata;
	struct pt_config config;
	struct pt_packet packet;
	uint64_t offset = 0;
	void *owned = NULL;
	int errors = 0;
	int r;

	if ((!buf && len) || !line_fn)
		return -EINVAL;
	if (auxcap_ipt_params_valid(params) < 0 || (opts && opts->sz < sizeof(*opts)))
		return -EINVAL;
	s.opts = opts ? opts : &no_opts;

	r = auxcap_ipt_errata(params, &errata);
	if (r < 0) {
		r = diag(&s, 0, "failed to determine errata", r);
		if (r < 0)
			return r;
	}
	buf = auxcap_ipt_readable_end(buf, len, &owned);
	if (!buf && len)
		return -ENOMEM;
	s.buf = buf;
	r = auxcap_ipt_config_init(&config, buf, len, params);
	if (r < 0) {
		free(owned);
		return auxcap_ipt_errno(r);
	}
	config.decode.callback = decode_unknown;
	dec = pt_pkt_alloc_decoder(&config);
	if (!dec) {
		free(owned);
		return -ENOMEM;
	}

	if (s.opts->no_sync)
		r = pt_pkt_sync_set(dec, 0);
	else
		r = pt_pkt_sync_forward(dec);
	while (r >= 0) {
		r = pt_pkt_get_offset(dec, &offset);
		if (r < 0)
			break;
		r = pt_pkt_next(dec, &packet, sizeof(packet));
		if (r >= 0 && packet.type == ppt_cyc && config.errata.skd007 &&
		    is_skd007_ovf(buf, len, offset)) {
			/* SKD007: an OVF replaced the rest of a multi-byte CYC. */
			memset(&packet, 0, sizeof(packet));
			packet.type = ppt_ovf;
			packet.size = 3;
			r = pt_pkt_sync_set(dec, offset + 3);
			if (r < 0)
				break;
		}
		if (r >= 0 && packet.size > len - offset) {
			/* libipt (2.0.5 to 2.1) passes a TMA with reserved bits set on SKZ84 parts
			 * as an invalid packet one byte longer than a TMA, even when the trace
			 * ends with the TMA's 7 bytes. */
			errors++;
			r = diag(&s, offset, "packet runs past the end of the trace", -pte_eos);
			if (r < 0)
				goto out;
			r = -pte_eos;
			break;
		}
		if (r >= 0) {
			r = dump_packet(&s, offset, &packet);
			if (r < 0)
				goto out;
			continue;
		}
		if (r == -pte_eos)
			break;
		/* Report where decoding failed, then resume at the next PSB. */
		errors++;
		(void)pt_pkt_get_offset(dec, &offset);
		r = diag(&s, offset, "error decoding packet", r);
		if (r < 0)
			goto out;
		r = pt_pkt_sync_forward(dec);
	}
	if (r == -pte_eos || r >= 0) {
		r = errors;
	} else {
		errors++;
		r = diag(&s, offset, "sync error", r);
		if (r >= 0)
			r = errors;
	}
out:
	pt_pkt_free_decoder(dec);
	free(owned);
	return r;
}
