/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Arm SPE packet decoder, record assembler and resynchronisation.  See spe_decode.h for the
 * packet format and the resynchronisation rule.
 */
#include "spe_decode.h"

#include <errno.h>
#include <string.h>

/* Header byte 0 bits [5:4]: payload size 1 << sz bytes. */
static unsigned int hdr_payload_size(unsigned char h)
{
	return 1U << ((h >> 4) & 3);
}

static uint64_t get_le(const unsigned char *p, unsigned int n)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/*
 * Classify an address/counter header byte (short form, or byte 1 of the extended form):
 * 0b10 sz t iii, t = 0 address (sz must be 0b11), t = 1 counter (sz must be 0b01).
 * Returns 0 and sets *type, or -EBADMSG / -EMSGSIZE.
 */
static int classify_addr_counter(unsigned char h, enum auxcap_spe_pkt_type *type)
{
	unsigned int sz = (h >> 4) & 3;

	if ((h & 0xc0) != 0x80)
		return -EBADMSG;
	if (!(h & 0x08)) {
		*type = AUXCAP_SPE_PKT_ADDRESS;
		return sz == 3 ? 0 : -EMSGSIZE;
	}
	*type = AUXCAP_SPE_PKT_COUNTER;
	return sz == 1 ? 0 : -EMSGSIZE;
}

/*
 * Classify a short-form header byte of the 0b01 sz nnnn group.  Returns 0 and sets *type and
 * *index, or -EBADMSG / -EMSGSIZE.
 */
static int classify_01(unsigned char h, enum auxcap_spe_pkt_type *type, unsigned int *index)
{
	unsigned int sz = (h >> 4) & 3;
	unsigned int n = h & 0x0f;

	*index = 0;
	if (n == 1) {
		*type = AUXCAP_SPE_PKT_TIMESTAMP;
		return sz == 3 ? 0 : -EMSGSIZE;
	}
	if (n == 2) {
		*type = AUXCAP_SPE_PKT_EVENTS;
		return 0;
	}
	if (n == 3) {
		*type = AUXCAP_SPE_PKT_DATA_SOURCE;
		return 0;
	}
	if ((n & 0x0c) == 0x04) {
		*type = AUXCAP_SPE_PKT_CONTEXT;
		*index = n & 3;
		return sz == 2 ? 0 : -EMSGSIZE;
	}
	if ((n & 0x0c) == 0x08) {
		if ((n & 3) == 3)
			return -EBADMSG; /* reserved operation class */
		*type = AUXCAP_SPE_PKT_OP_TYPE;
		*index = n & 3;
		return sz == 0 ? 0 : -EMSGSIZE;
	}
	return -EBADMSG;
}

int auxcap_spe_pkt_decode(const void *buf, size_t len, uint64_t offset,
			  struct auxcap_spe_packet *ret)
{
	const unsigned char *p = buf;
	struct auxcap_spe_packet pkt;
	unsigned char h;
	unsigned int hsize = 1, psize = 0;
	int err;

	if (!buf || !ret || !len)
		return -EINVAL;

	memset(&pkt, 0, sizeof(pkt));
	pkt.offset = offset;
	h = p[0];

	if (h == AUXCAP_SPE_HDR_PAD) {
		size_t run = 1;

		while (run < len && p[run] == 0 && run < (1U << 30))
			run++;
		pkt.type = AUXCAP_SPE_PKT_PAD;
		pkt.size = (unsigned int)run;
		pkt.header_size = 1;
		*ret = pkt;
		return (int)run;
	}

	if (h == AUXCAP_SPE_HDR_END) {
		pkt.type = AUXCAP_SPE_PKT_END;
	} else if ((h & AUXCAP_SPE_HDR_EXT_MASK) == AUXCAP_SPE_HDR_EXT) {
		if (len < 2)
			return -ENODATA;
		err = classify_addr_counter(p[1], &pkt.type);
		if (err)
			return err;
		hsize = 2;
		psize = hdr_payload_size(p[1]);
		pkt.index = ((h & 3U) << 3) | (p[1] & 7U);
	} else if ((h & 0xc0) == 0x40) {
		err = classify_01(h, &pkt.type, &pkt.index);
		if (err)
			return err;
		psize = hdr_payload_size(h);
	} else if ((h & 0xc0) == 0x80) {
		err = classify_addr_counter(h, &pkt.type);
		if (err)
			return err;
		psize = hdr_payload_size(h);
		pkt.index = h & 7U;
	} else {
		return -EBADMSG;
	}

	if (len < (size_t)hsize + psize)
		return -ENODATA;

	pkt.header_size = hsize;
	pkt.payload_size = psize;
	pkt.size = hsize + psize;
	pkt.payload = get_le(p + hsize, psize);
	memcpy(pkt.raw, p, pkt.size);
	*ret = pkt;
	return (int)pkt.size;
}

/* Sign-extend a 56-bit virtual address from bit 55. */
static uint64_t sext56(uint64_t v)
{
	v &= (1ULL << 56) - 1;
	if (v & (1ULL << 55))
		v |= 0xffULL << 56;
	return v;
}

void auxcap_spe_addr_decode(const struct auxcap_spe_packet *pkt, struct auxcap_spe_addr *ret)
{
	uint64_t v = pkt->payload;

	memset(ret, 0, sizeof(*ret));
	ret->raw = v & ((1ULL << 56) - 1);
	switch (pkt->index) {
	case AUXCAP_SPE_ADDR_DATA_VA:
		ret->addr = sext56(v);
		ret->tag = (uint8_t)(v >> 56);
		break;
	case AUXCAP_SPE_ADDR_DATA_PA:
		ret->addr = ret->raw;
		ret->ns = (v >> 63) & 1;
		ret->checked = (v >> 62) & 1;
		ret->pat = (uint8_t)((v >> 56) & 0xf);
		break;
	default: /* PC, branch target, previous branch target, and unknown indices */
		ret->addr = sext56(v);
		ret->ns = (v >> 63) & 1;
		ret->el = (unsigned int)((v >> 61) & 3);
		break;
	}
}

static enum auxcap_spe_ldst_subclass ldst_subclass(uint8_t v)
{
	if (v == 0x25)
		return AUXCAP_SPE_LDST_MEMSET;
	switch (v & 0xfe) {
	case 0x00:
		return AUXCAP_SPE_LDST_GP_REG;
	case 0x04:
		return AUXCAP_SPE_LDST_SIMD_FP;
	case 0x10:
		return AUXCAP_SPE_LDST_UNSPEC_REG;
	case 0x14:
		return AUXCAP_SPE_LDST_MTE_TAG;
	case 0x20:
		return AUXCAP_SPE_LDST_MEMCPY;
	case 0x30:
		return AUXCAP_SPE_LDST_NV_SYSREG;
	default:
		break;
	}
	if ((v & 0xe2) == 0x02)
		return AUXCAP_SPE_LDST_EXTENDED;
	if ((v & 0x0a) == 0x08)
		return AUXCAP_SPE_LDST_SVE;
	return AUXCAP_SPE_LDST_UNKNOWN;
}

/* SVE effective vector length: 32 << payload bits [6:4]. */
static unsigned int sve_evl(uint8_t v)
{
	return 32U << ((v >> 4) & 7);
}

void auxcap_spe_op_decode(const struct auxcap_spe_packet *pkt, struct auxcap_spe_op *ret)
{
	uint8_t v = (uint8_t)pkt->payload;

	memset(ret, 0, sizeof(*ret));
	ret->cls = (enum auxcap_spe_op_class)pkt->index;
	ret->raw = v;
	ret->subclass = AUXCAP_SPE_LDST_UNKNOWN;

	switch (pkt->index) {
	case AUXCAP_SPE_OP_CLASS_OTHER:
		if ((v & 0x89) == 0x08) {
			ret->flags |= AUXCAP_SPE_OP_SVE;
			ret->sve_evl = sve_evl(v);
			if (v & 0x02)
				ret->flags |= AUXCAP_SPE_OP_SVE_FP;
			if (v & 0x04)
				ret->flags |= AUXCAP_SPE_OP_SVE_PRED;
		} else if (v & 0x01) {
			ret->flags |= AUXCAP_SPE_OP_COND;
		}
		break;
	case AUXCAP_SPE_OP_CLASS_LDST:
		if (v & 0x01)
			ret->flags |= AUXCAP_SPE_OP_ST;
		ret->subclass = ldst_subclass(v);
		if (ret->subclass == AUXCAP_SPE_LDST_EXTENDED) {
			if (v & 0x04)
				ret->flags |= AUXCAP_SPE_OP_ATOMIC;
			if (v & 0x08)
				ret->flags |= AUXCAP_SPE_OP_EXCL;
			if (v & 0x10)
				ret->flags |= AUXCAP_SPE_OP_ACQREL;
		} else if (ret->subclass == AUXCAP_SPE_LDST_SVE) {
			ret->flags |= AUXCAP_SPE_OP_SVE;
			ret->sve_evl = sve_evl(v);
			if (v & 0x04)
				ret->flags |= AUXCAP_SPE_OP_SVE_PRED;
			if (v & 0x80)
				ret->flags |= AUXCAP_SPE_OP_SVE_SG;
		}
		break;
	case AUXCAP_SPE_OP_CLASS_BRANCH:
		if (v & 0x01)
			ret->flags |= AUXCAP_SPE_OP_COND;
		if (v & 0x02)
			ret->flags |= AUXCAP_SPE_OP_INDIRECT;
		if (v & 0x04)
			ret->flags |= AUXCAP_SPE_OP_GCS;
		switch ((v >> 3) & 3) {
		case 1:
			ret->flags |= AUXCAP_SPE_OP_CALL;
			break;
		case 2:
			ret->flags |= AUXCAP_SPE_OP_RET;
			break;
		case 3:
			ret->flags |= AUXCAP_SPE_OP_NOT_CALL_RET;
			break;
		default:
			break;
		}
		break;
	default:
		break;
	}
}

void auxcap_spe_decoder_init(struct auxcap_spe_decoder *dec, const void *buf, size_t len,
			     unsigned int flags)
{
	memset(dec, 0, sizeof(*dec));
	dec->buf = buf;
	dec->len = buf ? len : 0;
	dec->flags = flags;
}

uint64_t auxcap_spe_decoder_offset(const struct auxcap_spe_decoder *dec)
{
	return dec->pos;
}

static bool is_terminator(const struct auxcap_spe_packet *pkt)
{
	return pkt->type == AUXCAP_SPE_PKT_END || pkt->type == AUXCAP_SPE_PKT_TIMESTAMP;
}

/* Fold one non-PAD packet into the record under assembly. */
static void sample_add(struct auxcap_spe_sample *s, const struct auxcap_spe_packet *pkt)
{
	struct auxcap_spe_addr a;

	s->nr_packets++;
	switch (pkt->type) {
	case AUXCAP_SPE_PKT_ADDRESS:
		auxcap_spe_addr_decode(pkt, &a);
		switch (pkt->index) {
		case AUXCAP_SPE_ADDR_PC:
			s->pc = a.addr;
			s->el = a.el;
			s->ns = a.ns;
			s->present |= AUXCAP_SPE_HAS_PC;
			break;
		case AUXCAP_SPE_ADDR_BRANCH_TARGET:
			s->target = a.addr;
			s->target_el = a.el;
			s->present |= AUXCAP_SPE_HAS_TARGET;
			break;
		case AUXCAP_SPE_ADDR_PREV_BRANCH:
			s->prev_branch = a.addr;
			s->present |= AUXCAP_SPE_HAS_PREV_BRANCH;
			break;
		case AUXCAP_SPE_ADDR_DATA_VA:
			s->data_va = a.addr;
			s->data_va_tag = a.tag;
			s->present |= AUXCAP_SPE_HAS_DATA_VA;
			break;
		case AUXCAP_SPE_ADDR_DATA_PA:
			s->data_pa = a.addr;
			s->data_pa_ns = a.ns;
			s->present |= AUXCAP_SPE_HAS_DATA_PA;
			break;
		default:
			break;
		}
		break;
	case AUXCAP_SPE_PKT_COUNTER:
		switch (pkt->index) {
		case AUXCAP_SPE_CNT_TOTAL:
			s->total_lat = (uint32_t)pkt->payload;
			s->present |= AUXCAP_SPE_HAS_TOTAL_LAT;
			break;
		case AUXCAP_SPE_CNT_ISSUE:
			s->issue_lat = (uint32_t)pkt->payload;
			s->present |= AUXCAP_SPE_HAS_ISSUE_LAT;
			break;
		case AUXCAP_SPE_CNT_TRANSLATION:
			s->xlat_lat = (uint32_t)pkt->payload;
			s->present |= AUXCAP_SPE_HAS_XLAT_LAT;
			break;
		default:
			break;
		}
		break;
	case AUXCAP_SPE_PKT_EVENTS:
		s->events |= pkt->payload;
		s->present |= AUXCAP_SPE_HAS_EVENTS;
		break;
	case AUXCAP_SPE_PKT_DATA_SOURCE:
		s->data_source = pkt->payload;
		s->present |= AUXCAP_SPE_HAS_DATA_SOURCE;
		break;
	case AUXCAP_SPE_PKT_OP_TYPE:
		auxcap_spe_op_decode(pkt, &s->op);
		s->present |= AUXCAP_SPE_HAS_OP;
		break;
	case AUXCAP_SPE_PKT_CONTEXT:
		s->context_id = (uint32_t)pkt->payload;
		s->context_el = pkt->index + 1;
		s->present |= AUXCAP_SPE_HAS_CONTEXT;
		break;
	case AUXCAP_SPE_PKT_TIMESTAMP:
		s->timestamp = pkt->payload;
		s->by_timestamp = true;
		s->present |= AUXCAP_SPE_HAS_TIMESTAMP;
		break;
	case AUXCAP_SPE_PKT_END:
	case AUXCAP_SPE_PKT_PAD:
		break;
	}
}

/*
 * Resynchronisation.  A candidate (the byte after an END, or after a TIMESTAMP and its payload)
 * is accepted when the packets from it reach an END or TIMESTAMP, the end of the data (a
 * truncated packet there included), or a point RESYNC_SPAN bytes on, without a bad header or
 * size.  The span is twice the largest record the architecture allows, so a wrong candidate
 * is accepted only if 4 KiB of data decode as packets.
 *
 * Candidates' packet chains merge (a chain is fixed by its start), so a chain that failed is
 * remembered: a later candidate whose chain reaches one of its positions fails too.  This is
 * exact because a later candidate's span ends later.  The memo is a bitmap of the positions
 * [lo, lo + RESYNC_MEMO_BITS), lo being the scan position, which never decreases; every chain
 * walked lies within it.  Each position is then walked by failing chains at most twice (walk
 * and mark), which keeps resynchronisation linear in the bytes skipped plus RESYNC_SPAN.
 */
#define RESYNC_SPAN	 ((size_t)2 * AUXCAP_SPE_MAX_RECORD_SIZE)
#define RESYNC_MEMO_BITS ((size_t)2 * RESYNC_SPAN)

struct resync_memo {
	size_t lo;				  /* position of the window's first bit */
	unsigned char bits[RESYNC_MEMO_BITS / 8]; /* bit (p % RESYNC_MEMO_BITS): p failed */
};

static bool memo_get(const struct resync_memo *m, size_t p)
{
	if (p < m->lo || p - m->lo >= RESYNC_MEMO_BITS)
		return false;
	p %= RESYNC_MEMO_BITS;
	return m->bits[p / 8] & (1U << (p % 8));
}

static void memo_set(struct resync_memo *m, size_t p)
{
	if (p < m->lo || p - m->lo >= RESYNC_MEMO_BITS)
		return;
	p %= RESYNC_MEMO_BITS;
	m->bits[p / 8] |= (unsigned char)(1U << (p % 8));
}

/* Move the window to start at @lo (>= the old start), forgetting the positions left behind. */
static void memo_advance(struct resync_memo *m, size_t lo)
{
	size_t p;

	if (lo - m->lo >= RESYNC_MEMO_BITS) {
		memset(m->bits, 0, sizeof(m->bits));
	} else {
		for (p = m->lo; p < lo; p++)
			m->bits[(p % RESYNC_MEMO_BITS) / 8] &=
				(unsigned char)~(1U << (p % RESYNC_MEMO_BITS % 8));
	}
	m->lo = lo;
}

static bool record_decodes_at(const unsigned char *buf, size_t len, size_t start,
			      struct resync_memo *memo)
{
	struct auxcap_spe_packet pkt = { .type = AUXCAP_SPE_PKT_PAD };
	size_t q = start;
	int r;

	for (;;) {
		if (q >= len || q - start >= RESYNC_SPAN)
			return true;
		if (memo_get(memo, q))
			break;
		r = auxcap_spe_pkt_decode(buf + q, len - q, q, &pkt);
		if (r == -ENODATA)
			return true;
		if (r < 0)
			break;
		q += (size_t)r;
		if (is_terminator(&pkt))
			return true;
	}

	/* Failed at q: remember the chain from start to q. */
	memo_set(memo, q);
	while (start < q) {
		memo_set(memo, start);
		r = auxcap_spe_pkt_decode(buf + start, len - start, start, &pkt);
		if (r <= 0)
			break; /* cannot happen: these packets decoded above */
		start += (size_t)r;
	}
	return false;
}

/* The first candidate at or after @from that is accepted, or the end of the data. */
static size_t resync(const unsigned char *buf, size_t len, size_t from)
{
	struct resync_memo memo;
	size_t p, cand;

	memset(&memo, 0, sizeof(memo));
	memo.lo = from;
	for (p = from; p < len; p++) {
		if (buf[p] == AUXCAP_SPE_HDR_END)
			cand = p + 1;
		else if (buf[p] == AUXCAP_SPE_HDR_TIMESTAMP && len - p >= 9)
			cand = p + 9;
		else
			continue;
		memo_advance(&memo, p);
		if (record_decodes_at(buf, len, cand, &memo))
			return cand;
	}
	return len;
}

static void make_error(struct auxcap_spe_decoder *dec, int code, struct auxcap_spe_event *ret)
{
	struct auxcap_spe_error *e = &ret->error;
	size_t next;

	memset(ret, 0, sizeof(*ret));
	ret->type = AUXCAP_SPE_EVENT_ERROR;
	e->code = code;
	if (code == -EBADMSG)
		e->kind = AUXCAP_SPE_ERR_BAD_HEADER;
	else if (code == -EMSGSIZE)
		e->kind = AUXCAP_SPE_ERR_BAD_SIZE;
	else
		e->kind = AUXCAP_SPE_ERR_TRUNCATED;
	e->offset = dec->pos;
	e->record_offset = dec->in_record ? dec->cur.offset : dec->pos;
	e->header[0] = dec->buf[dec->pos];
	e->header_len = 1;
	if ((e->header[0] & AUXCAP_SPE_HDR_EXT_MASK) == AUXCAP_SPE_HDR_EXT &&
	    dec->pos + 1 < dec->len) {
		e->header[1] = dec->buf[dec->pos + 1];
		e->header_len = 2;
	}

	next = resync(dec->buf, dec->len, dec->pos + 1);
	e->skipped = next - dec->pos;
	dec->stats.error_bytes += e->skipped;
	dec->stats.errors++;
	dec->pos = next;
	dec->in_record = false;
}

int auxcap_spe_decoder_next(struct auxcap_spe_decoder *dec, struct auxcap_spe_event *ret)
{
	struct auxcap_spe_packet pkt;
	bool packets;
	int r;

	if (!dec || !ret)
		return -EINVAL;
	packets = dec->flags & AUXCAP_SPE_DECODER_PACKETS;

	if (dec->sample_pending) {
		dec->sample_pending = false;
		dec->in_record = false;
		memset(ret, 0, sizeof(*ret));
		ret->type = AUXCAP_SPE_EVENT_SAMPLE;
		ret->sample = dec->cur;
		return 1;
	}

	for (;;) {
		if (dec->pos >= dec->len) {
			if (!dec->in_record)
				return 0;
			memset(ret, 0, sizeof(*ret));
			ret->type = AUXCAP_SPE_EVENT_ERROR;
			ret->error.kind = AUXCAP_SPE_ERR_UNTERMINATED;
			ret->error.code = -ENODATA;
			ret->error.offset = dec->cur.offset;
			ret->error.record_offset = dec->cur.offset;
			dec->stats.errors++;
			dec->in_record = false;
			return 1;
		}

		r = auxcap_spe_pkt_decode(dec->buf + dec->pos, dec->len - dec->pos, dec->pos, &pkt);
		if (r < 0) {
			make_error(dec, r, ret);
			return 1;
		}
		dec->pos += (size_t)r;

		if (pkt.type == AUXCAP_SPE_PKT_PAD) {
			dec->stats.pad_bytes += (uint64_t)r;
			if (!packets)
				continue;
			memset(ret, 0, sizeof(*ret));
			ret->type = AUXCAP_SPE_EVENT_PACKET;
			ret->packet = pkt;
			return 1;
		}

		dec->stats.packets++;
		dec->stats.packet_bytes += (uint64_t)r;
		if (!dec->in_record) {
			memset(&dec->cur, 0, sizeof(dec->cur));
			dec->cur.offset = pkt.offset;
			dec->in_record = true;
		}
		sample_add(&dec->cur, &pkt);

		if (is_terminator(&pkt)) {
			dec->cur.size = (uint32_t)(dec->pos - dec->cur.offset);
			if (pkt.type == AUXCAP_SPE_PKT_END && dec->cur.nr_packets == 1) {
				dec->stats.empty_records++;
				dec->in_record = false;
			} else {
				dec->stats.samples++;
				if (!packets) {
					dec->in_record = false;
					memset(ret, 0, sizeof(*ret));
					ret->type = AUXCAP_SPE_EVENT_SAMPLE;
					ret->sample = dec->cur;
					return 1;
				}
				dec->sample_pending = true;
			}
		}
		if (packets) {
			memset(ret, 0, sizeof(*ret));
			ret->type = AUXCAP_SPE_EVENT_PACKET;
			ret->packet = pkt;
			return 1;
		}
	}
}

void auxcap_spe_pkt_iter_init(struct auxcap_spe_pkt_iter *it, const void *buf, size_t len)
{
	memset(it, 0, sizeof(*it));
	it->buf = buf;
	it->len = buf ? len : 0;
}

int auxcap_spe_pkt_next(struct auxcap_spe_pkt_iter *it, struct auxcap_spe_packet *ret)
{
	int r;

	if (!it || !ret)
		return -EINVAL;
	if (it->pos >= it->len)
		return 0;
	r = auxcap_spe_pkt_decode(it->buf + it->pos, it->len - it->pos, it->pos, ret);
	if (r < 0)
		return r;
	it->pos += (size_t)r;
	return 1;
}

uint64_t auxcap_spe_pkt_iter_offset(const struct auxcap_spe_pkt_iter *it)
{
	return it->pos;
}

uint64_t auxcap_spe_pkt_iter_resync(struct auxcap_spe_pkt_iter *it)
{
	size_t from = it->pos;

	if (from >= it->len)
		return 0;
	it->pos = resync(it->buf, it->len, from + 1);
	return it->pos - from;
}
