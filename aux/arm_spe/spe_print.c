/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Text forms of SPE packets, samples and errors, written to a caller-provided FILE*.  The packet
 * lines follow the layout of perf report -D (offset, raw bytes in 16 columns, description).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "spe_backend.h"
#include "spe_decode.h"

/* snprintf into a moving window; keeps counting the needed length after the buffer is full. */
struct strbuf {
	char *buf;
	size_t size;
	size_t len; /* characters the full text needs so far */
};

__attribute__((format(printf, 2, 3))) static void sb_add(struct strbuf *sb, const char *fmt, ...)
{
	char *dst = sb->len < sb->size ? sb->buf + sb->len : NULL;
	size_t room = dst ? sb->size - sb->len : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): false positive, va_start above */
	n = vsnprintf(dst, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		sb->len += (size_t)n;
}

const char *auxcap_spe_pkt_name(enum auxcap_spe_pkt_type type)
{
	switch (type) {
	case AUXCAP_SPE_PKT_PAD:
		return "PAD";
	case AUXCAP_SPE_PKT_END:
		return "END";
	case AUXCAP_SPE_PKT_TIMESTAMP:
		return "TS";
	case AUXCAP_SPE_PKT_ADDRESS:
		return "ADDR";
	case AUXCAP_SPE_PKT_COUNTER:
		return "LAT";
	case AUXCAP_SPE_PKT_EVENTS:
		return "EV";
	case AUXCAP_SPE_PKT_DATA_SOURCE:
		return "DATA-SOURCE";
	case AUXCAP_SPE_PKT_OP_TYPE:
		return "OP-TYPE";
	case AUXCAP_SPE_PKT_CONTEXT:
		return "CONTEXT";
	}
	return "UNKNOWN";
}

const char *auxcap_spe_error_str(enum auxcap_spe_error_kind kind)
{
	switch (kind) {
	case AUXCAP_SPE_ERR_BAD_HEADER:
		return "bad header";
	case AUXCAP_SPE_ERR_BAD_SIZE:
		return "impossible payload size";
	case AUXCAP_SPE_ERR_TRUNCATED:
		return "truncated packet";
	case AUXCAP_SPE_ERR_UNTERMINATED:
		return "record not ended by END or TIMESTAMP";
	}
	return "unknown error";
}

const char *auxcap_spe_event_name(uint64_t bit)
{
	switch (bit) {
	case AUXCAP_SPE_EV_EXCEPTION_GEN:
		return "EXCEPTION-GEN";
	case AUXCAP_SPE_EV_RETIRED:
		return "RETIRED";
	case AUXCAP_SPE_EV_L1D_ACCESS:
		return "L1D-ACCESS";
	case AUXCAP_SPE_EV_L1D_REFILL:
		return "L1D-REFILL";
	case AUXCAP_SPE_EV_TLB_ACCESS:
		return "TLB-ACCESS";
	case AUXCAP_SPE_EV_TLB_WALK:
		return "TLB-WALK";
	case AUXCAP_SPE_EV_NOT_TAKEN:
		return "NOT-TAKEN";
	case AUXCAP_SPE_EV_MISPREDICTED:
		return "MISPRED";
	case AUXCAP_SPE_EV_LLC_ACCESS:
		return "LLC-ACCESS";
	case AUXCAP_SPE_EV_LLC_MISS:
		return "LLC-MISS";
	case AUXCAP_SPE_EV_REMOTE_ACCESS:
		return "REMOTE-ACCESS";
	case AUXCAP_SPE_EV_ALIGNMENT:
		return "ALIGNMENT";
	case AUXCAP_SPE_EV_TRANSACTIONAL:
		return "TXN";
	case AUXCAP_SPE_EV_SVE_PARTIAL:
		return "SVE-PARTIAL-PRED";
	case AUXCAP_SPE_EV_SVE_EMPTY:
		return "SVE-EMPTY-PRED";
	default:
		return NULL;
	}
}

const char *auxcap_spe_data_source_name(uint64_t source)
{
	switch (source) {
	case 0x0:
		return "L1D";
	case 0x8:
		return "L2";
	case 0x9:
		return "PEER-CORE";
	case 0xa:
		return "LOCAL-CLUSTER";
	case 0xb:
		return "SYS-CACHE";
	case 0xc:
		return "PEER-CLUSTER";
	case 0xd:
		return "REMOTE";
	case 0xe:
		return "DRAM";
	default:
		return NULL;
	}
}

static const char *ldst_subclass_name(enum auxcap_spe_ldst_subclass sc)
{
	switch (sc) {
	case AUXCAP_SPE_LDST_GP_REG:
		return "GP-REG";
	case AUXCAP_SPE_LDST_SIMD_FP:
		return "SIMD-FP";
	case AUXCAP_SPE_LDST_UNSPEC_REG:
		return "UNSPEC-REG";
	case AUXCAP_SPE_LDST_NV_SYSREG:
		return "NV-SYSREG";
	case AUXCAP_SPE_LDST_MTE_TAG:
		return "MTE-TAG";
	case AUXCAP_SPE_LDST_MEMCPY:
		return "MEMCPY";
	case AUXCAP_SPE_LDST_MEMSET:
		return "MEMSET";
	case AUXCAP_SPE_LDST_EXTENDED:
	case AUXCAP_SPE_LDST_SVE:
	case AUXCAP_SPE_LDST_UNKNOWN:
		break;
	}
	return NULL;
}

static void desc_events(struct strbuf *sb, uint64_t ev)
{
	uint64_t unknown = 0;
	unsigned int i;

	for (i = 0; i < 64; i++) {
		uint64_t bit = 1ULL << i;
		const char *name;

		if (!(ev & bit))
			continue;
		name = auxcap_spe_event_name(bit);
		if (name)
			sb_add(sb, " %s", name);
		else
			unknown |= bit;
	}
	if (unknown)
		sb_add(sb, " 0x%" PRIx64, unknown);
}

static void desc_op(struct strbuf *sb, const struct auxcap_spe_op *op)
{
	const char *name;

	switch (op->cls) {
	case AUXCAP_SPE_OP_CLASS_OTHER:
		if (op->flags & AUXCAP_SPE_OP_SVE) {
			sb_add(sb, "SVE-OTHER EVLEN %u", op->sve_evl);
			if (op->flags & AUXCAP_SPE_OP_SVE_FP)
				sb_add(sb, " FP");
			if (op->flags & AUXCAP_SPE_OP_SVE_PRED)
				sb_add(sb, " PRED");
		} else {
			sb_add(sb, "OTHER %s",
			       op->flags & AUXCAP_SPE_OP_COND ? "COND-SELECT" : "INSN-OTHER");
		}
		return;
	case AUXCAP_SPE_OP_CLASS_LDST:
		sb_add(sb, "%s", op->flags & AUXCAP_SPE_OP_ST ? "ST" : "LD");
		if (op->flags & AUXCAP_SPE_OP_ATOMIC)
			sb_add(sb, " AT");
		if (op->flags & AUXCAP_SPE_OP_EXCL)
			sb_add(sb, " EXCL");
		if (op->flags & AUXCAP_SPE_OP_ACQREL)
			sb_add(sb, " AR");
		name = ldst_subclass_name(op->subclass);
		if (name)
			sb_add(sb, " %s", name);
		if (op->subclass == AUXCAP_SPE_LDST_SVE) {
			sb_add(sb, " SVE EVLEN %u", op->sve_evl);
			if (op->flags & AUXCAP_SPE_OP_SVE_PRED)
				sb_add(sb, " PRED");
			if (op->flags & AUXCAP_SPE_OP_SVE_SG)
				sb_add(sb, " SG");
		}
		if (op->subclass == AUXCAP_SPE_LDST_UNKNOWN)
			sb_add(sb, " 0x%02x", op->raw);
		return;
	case AUXCAP_SPE_OP_CLASS_BRANCH:
		sb_add(sb, "B");
		if (op->flags & AUXCAP_SPE_OP_COND)
			sb_add(sb, " COND");
		if (op->flags & AUXCAP_SPE_OP_INDIRECT)
			sb_add(sb, " IND");
		if (op->flags & AUXCAP_SPE_OP_GCS)
			sb_add(sb, " GCS");
		if (op->flags & AUXCAP_SPE_OP_CALL)
			sb_add(sb, " CR-BL");
		if (op->flags & AUXCAP_SPE_OP_RET)
			sb_add(sb, " CR-RET");
		if (op->flags & AUXCAP_SPE_OP_NOT_CALL_RET)
			sb_add(sb, " CR-NON-BL-RET");
		return;
	}
	sb_add(sb, "OP class %u 0x%02x", (unsigned int)op->cls, op->raw);
}

static void desc_addr(struct strbuf *sb, const struct auxcap_spe_packet *pkt)
{
	static const char *const names[] = { "PC", "TGT", "VA", "PA", "PBT" };
	struct auxcap_spe_addr a;

	auxcap_spe_addr_decode(pkt, &a);
	switch (pkt->index) {
	case AUXCAP_SPE_ADDR_PC:
	case AUXCAP_SPE_ADDR_BRANCH_TARGET:
	case AUXCAP_SPE_ADDR_PREV_BRANCH:
		sb_add(sb, "%s 0x%" PRIx64 " el%u ns=%d", names[pkt->index], a.raw, a.el, a.ns);
		break;
	case AUXCAP_SPE_ADDR_DATA_VA:
		sb_add(sb, "VA 0x%" PRIx64, a.raw);
		if (a.tag)
			sb_add(sb, " tag=0x%02x", a.tag);
		break;
	case AUXCAP_SPE_ADDR_DATA_PA:
		sb_add(sb, "PA 0x%" PRIx64 " ns=%d ch=%d pat=%x", a.raw, a.ns, a.checked, a.pat);
		break;
	default:
		sb_add(sb, "ADDR idx=%u 0x%016" PRIx64, pkt->index, pkt->payload);
		break;
	}
}

int auxcap_spe_pkt_desc(const struct auxcap_spe_packet *pkt, char *buf, size_t size)
{
	struct strbuf sb = { .buf = buf, .size = buf ? size : 0, .len = 0 };
	struct auxcap_spe_op op;

	if (sb.size)
		buf[0] = '\0';
	switch (pkt->type) {
	case AUXCAP_SPE_PKT_PAD:
	case AUXCAP_SPE_PKT_END:
		sb_add(&sb, "%s", auxcap_spe_pkt_name(pkt->type));
		break;
	case AUXCAP_SPE_PKT_TIMESTAMP:
		sb_add(&sb, "TS %" PRIu64, pkt->payload);
		break;
	case AUXCAP_SPE_PKT_ADDRESS:
		desc_addr(&sb, pkt);
		break;
	case AUXCAP_SPE_PKT_COUNTER:
		sb_add(&sb, "LAT %" PRIu64, pkt->payload);
		if (pkt->index == AUXCAP_SPE_CNT_TOTAL)
			sb_add(&sb, " TOT");
		else if (pkt->index == AUXCAP_SPE_CNT_ISSUE)
			sb_add(&sb, " ISSUE");
		else if (pkt->index == AUXCAP_SPE_CNT_TRANSLATION)
			sb_add(&sb, " XLAT");
		else
			sb_add(&sb, " idx=%u", pkt->index);
		break;
	case AUXCAP_SPE_PKT_EVENTS:
		sb_add(&sb, "EV");
		desc_events(&sb, pkt->payload);
		break;
	case AUXCAP_SPE_PKT_DATA_SOURCE:
		sb_add(&sb, "DATA-SOURCE %" PRIu64, pkt->payload);
		break;
	case AUXCAP_SPE_PKT_OP_TYPE:
		auxcap_spe_op_decode(pkt, &op);
		desc_op(&sb, &op);
		break;
	case AUXCAP_SPE_PKT_CONTEXT:
		sb_add(&sb, "CONTEXT 0x%" PRIx64 " el%u", pkt->payload, pkt->index + 1);
		break;
	}
	return (int)sb.len;
}

/* One ".  %08x: " line with up to 16 raw bytes and a description. */
static void raw_line(FILE *out, uint64_t offset, const unsigned char *bytes, size_t n,
		     const char *desc)
{
	size_t i;

	fprintf(out, ".  %08" PRIx64 ": ", offset);
	for (i = 0; i < n; i++)
		fprintf(out, " %02x", bytes[i]);
	for (; i < 16; i++)
		fputs("   ", out);
	fprintf(out, " %s\n", desc);
}

static int check_out(FILE *out)
{
	return ferror(out) ? -EIO : 0;
}

int auxcap_spe_packet_print(FILE *out, const struct auxcap_spe_packet *pkt)
{
	static const unsigned char zeros[16];
	char desc[256];

	if (!out || !pkt)
		return -EINVAL;
	if (pkt->type == AUXCAP_SPE_PKT_PAD) {
		uint64_t done = 0;

		while (done < pkt->size) {
			size_t n = pkt->size - done > 16 ? 16 : (size_t)(pkt->size - done);

			raw_line(out, pkt->offset + done, zeros, n, "PAD");
			done += n;
		}
		return check_out(out);
	}
	auxcap_spe_pkt_desc(pkt, desc, sizeof(desc));
	raw_line(out, pkt->offset, pkt->raw, pkt->size, desc);
	return check_out(out);
}

static void sample_events(struct strbuf *sb, uint64_t ev)
{
	const char *sep = "";
	uint64_t unknown = 0;
	unsigned int i;

	if (!ev) {
		sb_add(sb, "none");
		return;
	}
	for (i = 0; i < 64; i++) {
		uint64_t bit = 1ULL << i;
		const char *name;

		if (!(ev & bit))
			continue;
		name = auxcap_spe_event_name(bit);
		if (!name) {
			unknown |= bit;
			continue;
		}
		sb_add(sb, "%s%s", sep, name);
		sep = ",";
	}
	if (unknown)
		sb_add(sb, "%s0x%" PRIx64, sep, unknown);
}

static void sample_op(struct strbuf *sb, const struct auxcap_spe_op *op)
{
	sb_add(sb, " op=");
	desc_op(sb, op);
}

int auxcap_spe_sample_print(FILE *out, const struct auxcap_spe_sample *s)
{
	char line[512];
	struct strbuf sb = { .buf = line, .size = sizeof(line), .len = 0 };

	if (!out || !s)
		return -EINVAL;
	sb_add(&sb, "sample 0x%08" PRIx64 ":", s->offset);
	if (s->present & AUXCAP_SPE_HAS_TIMESTAMP)
		sb_add(&sb, " ts=%" PRIu64, s->timestamp);
	if (s->present & AUXCAP_SPE_HAS_CONTEXT)
		sb_add(&sb, " ctx=0x%" PRIx32 "/el%u", s->context_id, s->context_el);
	if (s->present & AUXCAP_SPE_HAS_PC)
		sb_add(&sb, " pc=0x%016" PRIx64 " el%u%s", s->pc, s->el, s->ns ? "" : " secure");
	if (s->present & AUXCAP_SPE_HAS_OP)
		sample_op(&sb, &s->op);
	if (s->present & AUXCAP_SPE_HAS_TARGET)
		sb_add(&sb, " tgt=0x%016" PRIx64, s->target);
	if (s->present & AUXCAP_SPE_HAS_PREV_BRANCH)
		sb_add(&sb, " pbt=0x%016" PRIx64, s->prev_branch);
	if (s->present & AUXCAP_SPE_HAS_DATA_VA)
		sb_add(&sb, " va=0x%016" PRIx64, s->data_va);
	if (s->present & AUXCAP_SPE_HAS_DATA_PA)
		sb_add(&sb, " pa=0x%" PRIx64, s->data_pa);
	if (s->present & AUXCAP_SPE_HAS_TOTAL_LAT)
		sb_add(&sb, " tot=%" PRIu32, s->total_lat);
	if (s->present & AUXCAP_SPE_HAS_ISSUE_LAT)
		sb_add(&sb, " issue=%" PRIu32, s->issue_lat);
	if (s->present & AUXCAP_SPE_HAS_XLAT_LAT)
		sb_add(&sb, " xlat=%" PRIu32, s->xlat_lat);
	if (s->present & AUXCAP_SPE_HAS_EVENTS) {
		sb_add(&sb, " ev=");
		sample_events(&sb, s->events);
	}
	if (s->present & AUXCAP_SPE_HAS_DATA_SOURCE)
		sb_add(&sb, " src=%" PRIu64, s->data_source);
	fprintf(out, "%s\n", line);
	return check_out(out);
}

int auxcap_spe_event_text(const struct auxcap_trace_event *ev, char *buf, size_t len)
{
	struct strbuf sb = { .buf = buf, .size = len, .len = 0 };

	if (!ev || (!buf && len))
		return -EINVAL;
	if (len)
		buf[0] = '\0';
	if (ev->kind != AUXCAP_TRACE_SAMPLE)
		return 0;
	{
		/* the operation type packet again (op 0, the plain "other" class, as well) */
		struct auxcap_spe_packet pkt = { .type = AUXCAP_SPE_PKT_OP_TYPE };
		struct auxcap_spe_op op;

		pkt.index = AUXCAP_SPE_EVENT_OP_CLASS(ev->op);
		pkt.payload = AUXCAP_SPE_EVENT_OP_PAYLOAD(ev->op);
		auxcap_spe_op_decode(&pkt, &op);
		sample_op(&sb, &op);
		if (op.cls == AUXCAP_SPE_OP_CLASS_BRANCH && ev->to)
			sb_add(&sb, " tgt=0x%016" PRIx64, ev->to);
	}
	if (ev->flags & AUXCAP_TRACE_F_HAS_ADDR)
		sb_add(&sb, " va=0x%016" PRIx64, ev->addr);
	if (ev->flags & AUXCAP_TRACE_F_HAS_PHYS)
		sb_add(&sb, " pa=0x%" PRIx64, ev->phys_addr);
	if (ev->total_latency)
		sb_add(&sb, " tot=%" PRIu32, ev->total_latency);
	if (ev->issue_latency)
		sb_add(&sb, " issue=%" PRIu32, ev->issue_latency);
	if (ev->translation_latency)
		sb_add(&sb, " xlat=%" PRIu32, ev->translation_latency);
	if (ev->events) {
		sb_add(&sb, " ev=");
		sample_events(&sb, ev->events);
	}
	if (ev->source && ev->source < AUXCAP_TRACE_SRC_COUNT) {
		/* the data source, as the CPU's encoding says (auxcap_trace_mem_source) */
		static const char *const names[AUXCAP_TRACE_SRC_COUNT] = {
			[AUXCAP_TRACE_SRC_L1] = "L1D",
			[AUXCAP_TRACE_SRC_L2] = "L2",
			[AUXCAP_TRACE_SRC_PEER_CORE] = "PEER-CORE",
			[AUXCAP_TRACE_SRC_LOCAL_CLUSTER] = "LOCAL-CLUSTER",
			[AUXCAP_TRACE_SRC_SYS_CACHE] = "SYS-CACHE",
			[AUXCAP_TRACE_SRC_PEER_CLUSTER] = "PEER-CLUSTER",
			[AUXCAP_TRACE_SRC_REMOTE] = "REMOTE",
			[AUXCAP_TRACE_SRC_DRAM] = "DRAM",
		};

		sb_add(&sb, " src=%s", names[ev->source]);
	}
	return sb.len > INT32_MAX ? -EOVERFLOW : (int)sb.len;
}

int auxcap_spe_error_print(FILE *out, const struct auxcap_spe_error *err, const void *buf,
			   size_t len)
{
	const unsigned char *p = buf;
	uint64_t off, end;

	if (!out || !err)
		return -EINVAL;
	fprintf(out, "error 0x%08" PRIx64 ": %s", err->offset, auxcap_spe_error_str(err->kind));
	if (err->kind != AUXCAP_SPE_ERR_UNTERMINATED) {
		fprintf(out, " (header 0x%02x", err->header[0]);
		if (err->header_len > 1)
			fprintf(out, " 0x%02x", err->header[1]);
		fputc(')', out);
	}
	if (err->record_offset != err->offset)
		fprintf(out, ", record at 0x%08" PRIx64 " dropped", err->record_offset);
	if (err->skipped)
		fprintf(out, ", skipped %" PRIu64 " bytes to 0x%08" PRIx64, err->skipped,
			err->offset + err->skipped);
	fputc('\n', out);

	end = err->offset + err->skipped;
	if (p && end <= len) {
		for (off = err->offset; off < end; off += 16) {
			size_t n = end - off > 16 ? 16 : (size_t)(end - off);

			raw_line(out, off, p + off, n,
				 off == err->offset ? "Bad packet!" : "(skipped)");
		}
	}
	return check_out(out);
}

int auxcap_spe_dump_raw(const void *buf, size_t len, FILE *out, unsigned int flags,
			struct auxcap_spe_stats *ret)
{
	struct auxcap_spe_decoder dec;
	struct auxcap_spe_event ev;
	int err = 0;

	if ((!buf && len) || !out)
		return -EINVAL;

	auxcap_spe_decoder_init(&dec, buf, len,
				flags & AUXCAP_SPE_DUMP_PACKETS ? AUXCAP_SPE_DECODER_PACKETS : 0);
	if (flags & AUXCAP_SPE_DUMP_PACKETS)
		fprintf(out, ". ... ARM SPE data: size %zu bytes\n", len);

	while (!err && auxcap_spe_decoder_next(&dec, &ev) == 1) {
		switch (ev.type) {
		case AUXCAP_SPE_EVENT_PACKET:
			err = auxcap_spe_packet_print(out, &ev.packet);
			break;
		case AUXCAP_SPE_EVENT_SAMPLE:
			if (flags & AUXCAP_SPE_DUMP_SAMPLES)
				err = auxcap_spe_sample_print(out, &ev.sample);
			break;
		case AUXCAP_SPE_EVENT_ERROR:
			err = auxcap_spe_error_print(
				out, &ev.error, flags & AUXCAP_SPE_DUMP_PACKETS ? buf : NULL, len);
			break;
		}
	}
	if (err)
		return err;

	if (flags & AUXCAP_SPE_DUMP_SUMMARY)
		fprintf(out,
			"arm_spe: %zu bytes: %" PRIu64 " packets (%" PRIu64 " bytes), %" PRIu64
			" padding bytes, %" PRIu64 " errors (%" PRIu64 " bytes skipped), %" PRIu64
			" samples\n",
			len, dec.stats.packets, dec.stats.packet_bytes, dec.stats.pad_bytes,
			dec.stats.errors, dec.stats.error_bytes, dec.stats.samples);
	if (fflush(out) || ferror(out))
		return -EIO;
	if (ret)
		*ret = dec.stats;
	return 0;
}
