/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Decoding of kernel perf_event records (spec/kernel-aux-abi.md section 6).
 *
 * A small bounds-checked cursor walks the record; every read checks what is left, so a
 * malformed record yields -EBADMSG, never a read past its end.  Divisions: the cursor, the
 * sample_id trailer, PERF_RECORD_SAMPLE, the other record types, names.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <string.h>

#include "auxcap/record.h"

/* --- the cursor ------------------------------------------------------------------------- */

struct cur {
	const unsigned char *p;
	size_t left;
	int err;
};

static uint64_t cur_u64(struct cur *c)
{
	uint64_t v = 0;

	if (c->left < 8) {
		c->err = -EBADMSG;
		c->left = 0;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	c->left -= 8;
	return v;
}

static uint32_t cur_u32(struct cur *c)
{
	uint32_t v = 0;

	if (c->left < 4) {
		c->err = -EBADMSG;
		c->left = 0;
		return 0;
	}
	memcpy(&v, c->p, 4);
	c->p += 4;
	c->left -= 4;
	return v;
}

static uint16_t cur_u16(struct cur *c)
{
	uint16_t v = 0;

	if (c->left < 2) {
		c->err = -EBADMSG;
		c->left = 0;
		return 0;
	}
	memcpy(&v, c->p, 2);
	c->p += 2;
	c->left -= 2;
	return v;
}

/* Borrow @n bytes; NULL (and an error) if fewer are left. */
static const void *cur_take(struct cur *c, uint64_t n)
{
	const void *v = c->p;

	if (n > c->left) {
		c->err = -EBADMSG;
		c->left = 0;
		return NULL;
	}
	c->p += n;
	c->left -= (size_t)n;
	return v;
}

/* Borrow a string padded to 8 bytes that ends @tail_bytes before the end of the record. */
static const char *cur_string(struct cur *c, size_t tail_bytes)
{
	const char *s = (const char *)c->p;
	size_t n;

	if (c->left < tail_bytes) {
		c->err = -EBADMSG;
		return NULL;
	}
	n = c->left - tail_bytes;
	if (n == 0 || !memchr(s, '\0', n)) {
		c->err = -EBADMSG;
		return NULL;
	}
	c->p += n;
	c->left -= n;
	return s;
}

/* --- layout ---------------------------------------------------------------------------- */

void auxcap_sample_layout_from_attr(const struct perf_event_attr *attr,
				    struct auxcap_sample_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->sample_type = attr->sample_type;
	l->read_format = attr->read_format;
	l->branch_sample_type = attr->branch_sample_type;
	l->sample_regs_user = attr->sample_regs_user;
	l->sample_regs_intr = attr->sample_regs_intr;
	l->sample_id_all = attr->sample_id_all;
}

#define SAMPLE_ID_BITS                                                                     \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |        \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

size_t auxcap_sample_id_size(const struct auxcap_sample_layout *l)
{
	if (!l->sample_id_all)
		return 0;
	return 8 * (size_t)__builtin_popcountll(l->sample_type & SAMPLE_ID_BITS);
}

size_t auxcap_sample_time_offset(const struct auxcap_sample_layout *l)
{
	uint64_t t = l->sample_type;

	if (!(t & PERF_SAMPLE_TIME))
		return 0;
	return 8 + 8 * (size_t)(!!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) +
				!!(t & PERF_SAMPLE_TID));
}

size_t auxcap_sample_id_encode(const struct auxcap_sample_layout *l,
			       const struct auxcap_sample_id *sid, void *buf)
{
	unsigned char *p = buf;
	uint64_t t = l->sample_type;
	uint32_t u[2];

	if (!l->sample_id_all)
		return 0;
	if (t & PERF_SAMPLE_TID) {
		u[0] = sid->pid;
		u[1] = sid->tid;
		memcpy(p, u, 8);
		p += 8;
	}
	if (t & PERF_SAMPLE_TIME) {
		memcpy(p, &sid->time, 8);
		p += 8;
	}
	if (t & PERF_SAMPLE_ID) {
		memcpy(p, &sid->id, 8);
		p += 8;
	}
	if (t & PERF_SAMPLE_STREAM_ID) {
		memcpy(p, &sid->stream_id, 8);
		p += 8;
	}
	if (t & PERF_SAMPLE_CPU) {
		u[0] = sid->cpu;
		u[1] = 0;
		memcpy(p, u, 8);
		p += 8;
	}
	if (t & PERF_SAMPLE_IDENTIFIER) {
		memcpy(p, &sid->id, 8);
		p += 8;
	}
	return (size_t)(p - (unsigned char *)buf);
}

static void parse_sample_id(const struct auxcap_sample_layout *l, struct cur *c,
			    struct auxcap_sample_id *sid)
{
	uint64_t t = l->sample_type;

	memset(sid, 0, sizeof(*sid));
	sid->present = t & SAMPLE_ID_BITS;
	if (t & PERF_SAMPLE_TID) {
		sid->pid = cur_u32(c);
		sid->tid = cur_u32(c);
	}
	if (t & PERF_SAMPLE_TIME)
		sid->time = cur_u64(c);
	if (t & PERF_SAMPLE_ID)
		sid->id = cur_u64(c);
	if (t & PERF_SAMPLE_STREAM_ID)
		sid->stream_id = cur_u64(c);
	if (t & PERF_SAMPLE_CPU) {
		sid->cpu = cur_u32(c);
		(void)cur_u32(c);
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		sid->id = cur_u64(c);
}

/* --- PERF_RECORD_SAMPLE ---------------------------------------------------------------- */

/* Bytes of one read_format block for a single event or a group of @nr. */
static int read_format_size(uint64_t rf, struct cur *c, size_t *ret)
{
	size_t per = 8 + ((rf & PERF_FORMAT_ID) ? 8 : 0) + ((rf & PERF_FORMAT_LOST) ? 8 : 0);
	size_t fixed = ((rf & PERF_FORMAT_TOTAL_TIME_ENABLED) ? 8 : 0) +
		       ((rf & PERF_FORMAT_TOTAL_TIME_RUNNING) ? 8 : 0);
	uint64_t nr;

	if (!(rf & PERF_FORMAT_GROUP)) {
		*ret = per + fixed;
		return 0;
	}
	if (c->left < 8)
		return -EBADMSG;
	memcpy(&nr, c->p, 8);
	if (nr > c->left / per)
		return -EBADMSG;
	*ret = 8 + fixed + (size_t)nr * per;
	return 0;
}

static void parse_regs(struct cur *c, uint64_t mask, __typeof__(((struct auxcap_sample *)0)->regs_user) *regs)
{
	regs->abi = cur_u64(c);
	regs->nr = 0;
	regs->regs = NULL;
	if (regs->abi == 0)
		return;
	regs->nr = (unsigned int)__builtin_popcountll(mask);
	regs->regs = cur_take(c, (uint64_t)regs->nr * 8);
}

static int parse_sample(const struct auxcap_sample_layout *l, struct cur *c,
			struct auxcap_sample *s)
{
	uint64_t t = l->sample_type;
	size_t n;
	int r;

	if (t & PERF_SAMPLE_IDENTIFIER)
		s->id = cur_u64(c);
	if (t & PERF_SAMPLE_IP)
		s->ip = cur_u64(c);
	if (t & PERF_SAMPLE_TID) {
		s->pid = cur_u32(c);
		s->tid = cur_u32(c);
	}
	if (t & PERF_SAMPLE_TIME)
		s->time = cur_u64(c);
	if (t & PERF_SAMPLE_ADDR)
		s->addr = cur_u64(c);
	if (t & PERF_SAMPLE_ID)
		s->id = cur_u64(c);
	if (t & PERF_SAMPLE_STREAM_ID)
		s->stream_id = cur_u64(c);
	if (t & PERF_SAMPLE_CPU) {
		s->cpu = cur_u32(c);
		(void)cur_u32(c);
	}
	if (t & PERF_SAMPLE_PERIOD)
		s->period = cur_u64(c);
	if (t & PERF_SAMPLE_READ) {
		r = read_format_size(l->read_format, c, &n);
		if (r < 0)
			return r;
		s->read.size = n;
		s->read.data = cur_take(c, n);
	}
	if (t & PERF_SAMPLE_CALLCHAIN) {
		s->callchain.nr = cur_u64(c);
		if (s->callchain.nr > c->left / 8)
			return -EBADMSG;
		s->callchain.ips = cur_take(c, s->callchain.nr * 8);
	}
	if (t & PERF_SAMPLE_RAW) {
		s->raw.size = cur_u32(c);
		s->raw.data = cur_take(c, s->raw.size);
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		s->branch_stack.nr = cur_u64(c);
		if (l->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			s->branch_stack.hw_idx = cur_u64(c);
		if (s->branch_stack.nr > c->left / 24)
			return -EBADMSG;
		s->branch_stack.entries = cur_take(c, s->branch_stack.nr * 24);
	}
	if (t & PERF_SAMPLE_REGS_USER)
		parse_regs(c, l->sample_regs_user, &s->regs_user);
	if (t & PERF_SAMPLE_STACK_USER) {
		s->stack_user.size = cur_u64(c);
		if (s->stack_user.size > c->left)
			return -EBADMSG;
		s->stack_user.data = cur_take(c, s->stack_user.size);
		if (s->stack_user.size)
			s->stack_user.dyn_size = cur_u64(c);
	}
	if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		s->weight = cur_u64(c);
	if (t & PERF_SAMPLE_DATA_SRC)
		s->data_src = cur_u64(c);
	if (t & PERF_SAMPLE_TRANSACTION)
		s->transaction = cur_u64(c);
	if (t & PERF_SAMPLE_REGS_INTR)
		parse_regs(c, l->sample_regs_intr, &s->regs_intr);
	if (t & PERF_SAMPLE_PHYS_ADDR)
		s->phys_addr = cur_u64(c);
	if (t & PERF_SAMPLE_CGROUP)
		s->cgroup = cur_u64(c);
	if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
		s->data_page_size = cur_u64(c);
	if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
		s->code_page_size = cur_u64(c);
	if (t & PERF_SAMPLE_AUX) {
		s->aux.size = cur_u64(c);
		s->aux.data = cur_take(c, s->aux.size);
	}
	return c->err;
}

/* --- the other kernel records ---------------------------------------------------------- */

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

static void parse_mmap(struct cur *c, struct auxcap_record *rec, size_t tail)
{
	rec->u.mmap.pid = cur_u32(c);
	rec->u.mmap.tid = cur_u32(c);
	rec->u.mmap.addr = cur_u64(c);
	rec->u.mmap.len = cur_u64(c);
	rec->u.mmap.pgoff = cur_u64(c);
	if (rec->type == PERF_RECORD_MMAP2) {
		if (rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			const uint8_t *b;

			rec->u.mmap.build_id_size = (uint8_t)(c->left ? c->p[0] : 0);
			b = cur_take(c, 24); /* u8 size, u8 reserved[3], u8 build_id[20] */
			if (rec->u.mmap.build_id_size > 20)
				c->err = -EBADMSG;
			rec->u.mmap.build_id = b ? b + 4 : NULL;
		} else {
			rec->u.mmap.maj = cur_u32(c);
			rec->u.mmap.min = cur_u32(c);
			rec->u.mmap.ino = cur_u64(c);
			rec->u.mmap.ino_generation = cur_u64(c);
		}
		rec->u.mmap.prot = cur_u32(c);
		rec->u.mmap.flags = cur_u32(c);
	}
	rec->u.mmap.filename = cur_string(c, tail);
}

static void parse_other(struct cur *c, struct auxcap_record *rec, size_t tail)
{
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		parse_mmap(c, rec, tail);
		break;
	case PERF_RECORD_LOST:
		rec->u.lost.id = cur_u64(c);
		rec->u.lost.lost = cur_u64(c);
		break;
	case PERF_RECORD_COMM:
		rec->u.comm.pid = cur_u32(c);
		rec->u.comm.tid = cur_u32(c);
		rec->u.comm.comm = cur_string(c, tail);
		break;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		rec->u.task.pid = cur_u32(c);
		rec->u.task.ppid = cur_u32(c);
		rec->u.task.tid = cur_u32(c);
		rec->u.task.ptid = cur_u32(c);
		rec->u.task.time = cur_u64(c);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		rec->u.throttle.time = cur_u64(c);
		rec->u.throttle.id = cur_u64(c);
		rec->u.throttle.stream_id = cur_u64(c);
		break;
	case PERF_RECORD_READ:
		rec->u.read.pid = cur_u32(c);
		rec->u.read.tid = cur_u32(c);
		if (c->left < tail) {
			c->err = -EBADMSG;
			break;
		}
		rec->u.read.size = c->left - tail;
		rec->u.read.values = cur_take(c, rec->u.read.size);
		break;
	case PERF_RECORD_AUX:
		rec->u.aux.aux_offset = cur_u64(c);
		rec->u.aux.aux_size = cur_u64(c);
		rec->u.aux.flags = cur_u64(c);
		break;
	case PERF_RECORD_ITRACE_START:
		rec->u.itrace_start.pid = cur_u32(c);
		rec->u.itrace_start.tid = cur_u32(c);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		rec->u.lost_samples.lost = cur_u64(c);
		break;
	case PERF_RECORD_SWITCH:
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		rec->u.context_switch.next_prev_pid = cur_u32(c);
		rec->u.context_switch.next_prev_tid = cur_u32(c);
		break;
	case PERF_RECORD_NAMESPACES:
		rec->u.namespaces.pid = cur_u32(c);
		rec->u.namespaces.tid = cur_u32(c);
		rec->u.namespaces.nr = cur_u64(c);
		if (rec->u.namespaces.nr > c->left / 16) {
			c->err = -EBADMSG;
			break;
		}
		rec->u.namespaces.link_info = cur_take(c, rec->u.namespaces.nr * 16);
		break;
	case PERF_RECORD_KSYMBOL:
		rec->u.ksymbol.addr = cur_u64(c);
		rec->u.ksymbol.len = cur_u32(c);
		rec->u.ksymbol.ksym_type = cur_u16(c);
		rec->u.ksymbol.flags = cur_u16(c);
		rec->u.ksymbol.name = cur_string(c, tail);
		break;
	case PERF_RECORD_BPF_EVENT: {
		const void *tag;

		rec->u.bpf_event.type = cur_u16(c);
		rec->u.bpf_event.flags = cur_u16(c);
		rec->u.bpf_event.id = cur_u32(c);
		tag = cur_take(c, 8);
		if (tag)
			memcpy(rec->u.bpf_event.tag, tag, 8);
		break;
	}
	case PERF_RECORD_CGROUP:
		rec->u.cgroup.id = cur_u64(c);
		rec->u.cgroup.path = cur_string(c, tail);
		break;
	case PERF_RECORD_TEXT_POKE:
		rec->u.text_poke.addr = cur_u64(c);
		rec->u.text_poke.old_len = cur_u16(c);
		rec->u.text_poke.new_len = cur_u16(c);
		rec->u.text_poke.bytes = cur_take(c, (uint64_t)rec->u.text_poke.old_len +
							    rec->u.text_poke.new_len);
		break;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		rec->u.aux_output_hw_id.hw_id = cur_u64(c);
		break;
	default:
		/* Unknown: header and trailer only. */
		if (c->left >= tail)
			(void)cur_take(c, c->left - tail);
		break;
	}
}

/* SAMPLE fields of one u64 each (TID and CPU are two u32); WEIGHT_STRUCT shares WEIGHT's. */
#define SAMPLE_FIXED_BITS                                                                  \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |       \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |         \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT |                 \
	 PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_PHYS_ADDR |              \
	 PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE)

/* Bytes a SAMPLE of only SAMPLE_FIXED_BITS fields takes after its header. */
static size_t sample_fixed_size(uint64_t t)
{
	uint64_t one_word = t & ~(uint64_t)PERF_SAMPLE_WEIGHT_STRUCT;

	if ((t & PERF_SAMPLE_WEIGHT_STRUCT) && !(t & PERF_SAMPLE_WEIGHT))
		one_word |= PERF_SAMPLE_WEIGHT;
	return 8 * (size_t)__builtin_popcountll(one_word);
}

static uint64_t take_u64(const unsigned char **p)
{
	uint64_t v;

	memcpy(&v, *p, 8);
	*p += 8;
	return v;
}

/*
 * Decode a SAMPLE of only SAMPLE_FIXED_BITS fields at @p (known to be long enough) into @s,
 * setting every field of @s: absent scalars and all variable-size parts to zero.
 */
static void fill_fixed_sample(uint64_t t, const unsigned char *p, struct auxcap_sample *s)
{
	uint64_t v;

	memset(&s->read, 0, offsetof(struct auxcap_sample, weight) -
				    offsetof(struct auxcap_sample, read));
	memset(&s->aux, 0, sizeof(s->aux));
	s->id = (t & PERF_SAMPLE_IDENTIFIER) ? take_u64(&p) : 0;
	s->ip = (t & PERF_SAMPLE_IP) ? take_u64(&p) : 0;
	v = (t & PERF_SAMPLE_TID) ? take_u64(&p) : 0;
	memcpy(&s->pid, (const unsigned char *)&v, 4);
	memcpy(&s->tid, (const unsigned char *)&v + 4, 4);
	s->time = (t & PERF_SAMPLE_TIME) ? take_u64(&p) : 0;
	s->addr = (t & PERF_SAMPLE_ADDR) ? take_u64(&p) : 0;
	if (t & PERF_SAMPLE_ID)
		s->id = take_u64(&p);
	s->stream_id = (t & PERF_SAMPLE_STREAM_ID) ? take_u64(&p) : 0;
	v = (t & PERF_SAMPLE_CPU) ? take_u64(&p) : 0;
	memcpy(&s->cpu, &v, 4);
	s->period = (t & PERF_SAMPLE_PERIOD) ? take_u64(&p) : 0;
	s->weight = (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) ? take_u64(&p) : 0;
	s->data_src = (t & PERF_SAMPLE_DATA_SRC) ? take_u64(&p) : 0;
	s->transaction = (t & PERF_SAMPLE_TRANSACTION) ? take_u64(&p) : 0;
	s->phys_addr = (t & PERF_SAMPLE_PHYS_ADDR) ? take_u64(&p) : 0;
	s->cgroup = (t & PERF_SAMPLE_CGROUP) ? take_u64(&p) : 0;
	s->data_page_size = (t & PERF_SAMPLE_DATA_PAGE_SIZE) ? take_u64(&p) : 0;
	s->code_page_size = (t & PERF_SAMPLE_CODE_PAGE_SIZE) ? take_u64(&p) : 0;
}

int auxcap_record_parse(const struct auxcap_sample_layout *l, const void *buf, size_t len,
			struct auxcap_record *ret)
{
	struct perf_event_header h;
	struct auxcap_record rec;
	struct cur c;
	size_t tail;
	int r;

	if (!l || !buf || !ret)
		return -EINVAL;
	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (h.size < sizeof(h) || h.size > len || (h.size & 7))
		return -EBADMSG;

	if (h.type == PERF_RECORD_SAMPLE && !(l->sample_type & ~SAMPLE_FIXED_BITS) &&
	    h.size - sizeof(h) >= sample_fixed_size(l->sample_type)) {
		/*
		 * Only fixed-size fields, and all of them fit: parsing cannot fail, so decode
		 * straight into @ret and save building the record aside and copying it.
		 */
		ret->type = h.type;
		ret->misc = h.misc;
		ret->size = h.size;
		ret->data = buf;
		ret->has_sample_id = false;
		memset(&ret->sid, 0, sizeof(ret->sid));
		fill_fixed_sample(l->sample_type, (const unsigned char *)buf + sizeof(h),
				  &ret->u.sample);
		return 0;
	}

	memset(&rec, 0, sizeof(rec));
	rec.type = h.type;
	rec.misc = h.misc;
	rec.size = h.size;
	rec.data = buf;
	c.p = (const unsigned char *)buf + sizeof(h);
	c.left = h.size - sizeof(h);
	c.err = 0;

	if (h.type == PERF_RECORD_SAMPLE) {
		r = parse_sample(l, &c, &rec.u.sample);
		if (r < 0)
			return r;
	} else {
		tail = auxcap_sample_id_size(l);
		parse_other(&c, &rec, tail);
		if (c.err < 0)
			return c.err;
		if (tail) {
			if (c.left < tail)
				return -EBADMSG;
			/* Skip padding the record may carry before its trailer. */
			c.p += c.left - tail;
			c.left = tail;
			parse_sample_id(l, &c, &rec.sid);
			rec.has_sample_id = true;
		}
	}
	if (c.err < 0)
		return c.err;

	*ret = rec;
	return 0;
}

int auxcap_record_peek_id(const struct auxcap_sample_layout *l, const void *buf, size_t len,
			  uint64_t *ret_id)
{
	struct perf_event_header h;

	if (!l || !buf || !ret_id)
		return -EINVAL;
	if (!(l->sample_type & PERF_SAMPLE_IDENTIFIER))
		return -ENOENT;
	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (h.size < sizeof(h) + 8 || h.size > len)
		return -EBADMSG;
	if (h.type == PERF_RECORD_SAMPLE) {
		memcpy(ret_id, (const unsigned char *)buf + sizeof(h), 8);
		return 0;
	}
	if (!l->sample_id_all)
		return -ENOENT;
	memcpy(ret_id, (const unsigned char *)buf + h.size - 8, 8);
	return 0;
}

/* --- names ------------------------------------------------------------------------------ */

static const char *const record_names[] = {
	[PERF_RECORD_MMAP] = "MMAP",
	[PERF_RECORD_LOST] = "LOST",
	[PERF_RECORD_COMM] = "COMM",
	[PERF_RECORD_EXIT] = "EXIT",
	[PERF_RECORD_THROTTLE] = "THROTTLE",
	[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	[PERF_RECORD_FORK] = "FORK",
	[PERF_RECORD_READ] = "READ",
	[PERF_RECORD_SAMPLE] = "SAMPLE",
	[PERF_RECORD_MMAP2] = "MMAP2",
	[PERF_RECORD_AUX] = "AUX",
	[PERF_RECORD_ITRACE_START] = "ITRACE_START",
	[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	[PERF_RECORD_SWITCH] = "SWITCH",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PERF_RECORD_NAMESPACES] = "NAMESPACES",
	[PERF_RECORD_KSYMBOL] = "KSYMBOL",
	[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
	[PERF_RECORD_CGROUP] = "CGROUP",
	[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
	[PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	[64] = "HEADER_ATTR",
	[65] = "HEADER_EVENT_TYPE",
	[66] = "HEADER_TRACING_DATA",
	[67] = "HEADER_BUILD_ID",
	[68] = "FINISHED_ROUND",
	[69] = "ID_INDEX",
	[70] = "AUXTRACE_INFO",
	[71] = "AUXTRACE",
	[72] = "AUXTRACE_ERROR",
	[73] = "THREAD_MAP",
	[74] = "CPU_MAP",
	[75] = "STAT_CONFIG",
	[76] = "STAT",
	[77] = "STAT_ROUND",
	[78] = "EVENT_UPDATE",
	[79] = "TIME_CONV",
	[80] = "HEADER_FEATURE",
	[81] = "COMPRESSED",
	[82] = "FINISHED_INIT",
};

/* The kernel's callchain context markers (uapi perf_event.h, enum perf_callchain_context):
 * entries at or above PERF_CONTEXT_MAX are markers, not addresses. */
#define CTX_KERNEL ((uint64_t)-128)
#define CTX_USER ((uint64_t)-512)
#define CTX_MAX ((uint64_t)-4095)

size_t auxcap_sample_callchain(const struct auxcap_sample *s, struct auxcap_callchain_frame *ret,
			       size_t max)
{
	enum { NONE, KERNEL, USER } ctx = NONE;
	bool first = false;
	size_t n = 0;

	for (uint64_t i = 0; i < s->callchain.nr; i++) {
		uint64_t v = auxcap_get_u64(s->callchain.ips, (size_t)i);

		if (v >= CTX_MAX) {
			/* HV, GUEST, GUEST_KERNEL, GUEST_USER: not this machine's addresses */
			ctx = v == CTX_KERNEL ? KERNEL : v == CTX_USER ? USER : NONE;
			first = true;
			continue;
		}
		if (ctx == NONE)
			continue;
		if (n < max) {
			ret[n].ip = v;
			ret[n].kernel = ctx == KERNEL;
			ret[n].ret = !first;
		}
		first = false;
		n++;
	}
	return n;
}

const char *auxcap_record_type_name(uint32_t type)
{
	if (type >= sizeof(record_names) / sizeof(record_names[0]))
		return NULL;
	return record_names[type];
}
