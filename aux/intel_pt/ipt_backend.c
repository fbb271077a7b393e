/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Intel PT backend's ops table (auxcap/backend.h).  Record side in ipt_record.c and
 * ipt_filter.c.
 *
 * Decode side: the libipt adapter of ipt.h turned into backend-neutral trace events.
 *
 *   - Branches.  libipt gives instructions (or blocks of them) and events; a taken branch is
 *     seen when the next instruction is known: the last instruction of the previous
 *     block/instruction is a branch and the flow continues at its target.  A conditional
 *     jump is taken when the flow does not continue right after it (its length comes from
 *     its bytes, see jcc_length()).  Each BRANCH carries the number of instructions run
 *     since the previous event, the branch included.  Without per-instruction output the
 *     stream is BRANCH, ENABLE, DISABLE, GAP and OTHER events only (blocks are folded into
 *     the branches' instruction counts); with ctx->per_insn every instruction is an INSN
 *     event as well.
 *   - Seams.  One queue's trace may come in several consecutive pieces (AUXTRACE buffers)
 *     that split packets and flow at arbitrary bytes.  A piece's sync points are the PSBs
 *     whose PSB+ lies wholly in it.  A decoder with ctx->more stops at the end of the PSB+ of
 *     its last sync point (the flow then ends exactly at that PSB's FUP address: libipt
 *     stops the block there to deliver the PSB+ status update, and drops the unfinished
 *     block that follows); the next piece's decoder first decodes a copy of [that sync
 *     point, the end of the pieces before it) joined to its own bytes up to the end of its
 *     first sync point's PSB+, then its own bytes from that PSB on.  At a cut, a branch whose
 *     target is the sync point's FUP address is completed with that address (the decoder
 *     that starts there cannot see it).  A piece without a sync point is decoded inside the
 *     seam of the next piece that has one (or, last, on its own).  Every instruction and
 *     event comes out once.
 *   - Time: the TSC of each event; perf time too when the capture has no TIME_CONV record
 *     but the AUXTRACE_INFO words hold the conversion (cap_user_time_zero).
 *   - Images: the code is read from ctx->maps.  When a traced process exec'd, the maps come
 *     with the spans of time they were in place (ctx->map_spans): the decoder then reads the
 *     code in place at the trace's own time, asking again after every sync and where tracing
 *     resumes (an execve returns into the new image), with an image per stretch between two
 *     execs made on first use.  A per-CPU stream that ran several processes comes with
 *     which one ran when (ctx->tasks): the image is then that process's mappings and the
 *     global ones, asked for there and where the address space changes (PIP), one per
 *     process and stretch, made on first use.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include <intel-pt.h>

#include "auxcap/backend.h"
#include "auxcap/session.h"
#include "auxcap/timeconv.h"
#include "grow.h"
#include "ipt.h"
#include "ipt_record.h"
#include "sorted.h"

/* perf's intel_pt AUXTRACE_INFO words (spec/perf-data-and-perf-tool.md section 1.5). */
enum {
	INFO_TIME_SHIFT = 1,
	INFO_TIME_MULT = 2,
	INFO_TIME_ZERO = 3,
	INFO_CAP_USER_TIME_ZERO = 4,
	INFO_MTC_FREQ_BITS = 11,
	INFO_TSC_CTC_N = 12,
	INFO_TSC_CTC_D = 13,
	INFO_MAX_NONTURBO_RATIO = 15,
};

static int ipt_probe(const char *pmu_name, const struct auxcap_pmu *pmu)
{
	(void)pmu;
	return !strcmp(pmu_name, "intel_pt");
}

/* ---- options ---------------------------------------------------------------------------- */

struct ipt_opts {
	struct auxcap_ipt_params params;
	struct auxcap_ipt_dump_opts dump;
	bool insn_decoder; /* decode per instruction even without INSN output */
};

/* "@what '@val'@hint" into ctx->errbuf. */
static void set_err(const struct auxcap_decode_ctx *ctx, const char *what, const char *val,
		    const char *hint)
{
	if (ctx->errbuf && ctx->errlen)
		snprintf(ctx->errbuf, ctx->errlen, "%s '%.80s'%s", what, val, hint);
}

static int parse_num(const char *s, uint64_t max, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* "GenuineIntel,6,142,10" -> the CPU of @p (other vendors and bad text are ignored). */
static void cpu_from_cpuid(struct auxcap_ipt_params *p, const char *cpuid)
{
	unsigned int family, model, stepping;

	if (!cpuid || strncmp(cpuid, "GenuineIntel,", 13))
		return;
	if (sscanf(cpuid + 13, "%u,%u,%u", &family, &model, &stepping) != 3 || family > 0xffff ||
	    model > 0xff || stepping > 0xff)
		return;
	p->cpu_set = true;
	p->cpu_family = (uint16_t)family;
	p->cpu_model = (uint8_t)model;
	p->cpu_stepping = (uint8_t)stepping;
}

/* The decoder parameters: AUXTRACE_INFO and the capture's CPU, then ctx->options. */
static int parse_opts(const struct auxcap_decode_ctx *ctx, struct ipt_opts *o)
{
	const uint64_t *info = ctx->nr_info ? ctx->info : NULL;
	size_t n = info ? ctx->nr_info : 0;
	char buf[512], *tok, *save = NULL;

	memset(o, 0, sizeof(*o));
	o->params.sz = sizeof(o->params);
	o->dump.sz = sizeof(o->dump);
	if (ctx->sz >= offsetof(struct auxcap_decode_ctx, attr) + sizeof(ctx->attr)) {
		cpu_from_cpuid(&o->params, ctx->cpuid);
		if (ctx->attr && n > INFO_MTC_FREQ_BITS && info[INFO_MTC_FREQ_BITS]) {
			uint64_t bits = info[INFO_MTC_FREQ_BITS];

			o->params.mtc_freq = (uint8_t)((ctx->attr->config & bits) >>
						       __builtin_ctzll(bits));
		}
	}
	if (n > INFO_TSC_CTC_D) {
		o->params.cpuid_0x15_ebx = (uint32_t)info[INFO_TSC_CTC_N];
		o->params.cpuid_0x15_eax = (uint32_t)info[INFO_TSC_CTC_D];
	}
	if (n > INFO_MAX_NONTURBO_RATIO && info[INFO_MAX_NONTURBO_RATIO] <= 0xff)
		o->params.nom_freq = (uint8_t)info[INFO_MAX_NONTURBO_RATIO];

	if (!ctx->options || !*ctx->options)
		return 0;
	if (strlen(ctx->options) >= sizeof(buf)) {
		set_err(ctx, "intel_pt options too long:", ctx->options, "");
		return -EINVAL;
	}
	strcpy(buf, ctx->options);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *v = strchr(tok, '=');
		uint64_t x;

		if (v)
			*v++ = '\0';
		if (!strcmp(tok, "insn-decoder") && !v) {
			o->insn_decoder = true;
		} else if (!strcmp(tok, "no-offset") && !v) {
			o->dump.no_offset = true;
		} else if (!strcmp(tok, "raw-bytes") && !v) {
			o->dump.raw = true;
		} else if (!strcmp(tok, "lastip") && !v) {
			o->dump.lastip = true;
		} else if (!strcmp(tok, "exec-mode") && !v) {
			o->dump.exec_mode = true;
		} else if (!strcmp(tok, "no-sync") && !v) {
			o->dump.no_sync = true;
		} else if (!strcmp(tok, "cpu") && v) {
			if (auxcap_ipt_params_parse_cpu(&o->params, v) < 0) {
				set_err(ctx, "bad intel_pt cpu", v,
					": expected FAMILY/MODEL[/STEPPING]");
				return -EINVAL;
			}
		} else if (!strcmp(tok, "mtc-freq") && v && !parse_num(v, 15, &x)) {
			o->params.mtc_freq = (uint8_t)x;
		} else if (!strcmp(tok, "nom-freq") && v && !parse_num(v, 255, &x)) {
			o->params.nom_freq = (uint8_t)x;
		} else if (!strcmp(tok, "cpuid-0x15.eax") && v && !parse_num(v, UINT32_MAX, &x)) {
			o->params.cpuid_0x15_eax = (uint32_t)x;
		} else if (!strcmp(tok, "cpuid-0x15.ebx") && v && !parse_num(v, UINT32_MAX, &x)) {
			o->params.cpuid_0x15_ebx = (uint32_t)x;
		} else {
			set_err(ctx, "bad intel_pt option", tok,
				": known are cpu=F/M[/S], mtc-freq=N, nom-freq=N, cpuid-0x15.eax=N, "
				"cpuid-0x15.ebx=N, insn-decoder, no-offset, raw-bytes, lastip, "
				"exec-mode, no-sync");
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- PSB sync points -------------------------------------------------------------------- */

static bool is_psb_at(const uint8_t *buf, size_t len, size_t i)
{
	static const uint8_t psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };

	return i + sizeof(psb) <= len && !memcmp(buf + i, psb, sizeof(psb));
}

/*
 * End of the PSB+ of the PSB at @psb (the offset after its PSBEND), or 0 if the PSB+ does not
 * end inside [@buf, @buf + @len) or does not decode.  *@ret_ip gets the IP of its FUP (where
 * the flow is at the PSB), 0 if it has none.
 */
static size_t psb_plus_end(const uint8_t *buf, size_t len, size_t psb, uint64_t *ret_ip)
{
	struct pt_packet_decoder *pkt;
	struct pt_config config;
	struct pt_packet packet;
	uint64_t off = 0;
	size_t end = 0;

	*ret_ip = 0;

	pt_config_init(&config);
	config.begin = (uint8_t *)(uintptr_t)buf;
	config.end = (uint8_t *)(uintptr_t)buf + len;
	pkt = pt_pkt_alloc_decoder(&config);
	if (!pkt)
		return 0;
	if (pt_pkt_sync_set(pkt, psb) >= 0) {
		for (int n = 0; n < 64; n++) {
			if (pt_pkt_next(pkt, &packet, sizeof(packet)) < 0)
				break;
			if (n == 0 && packet.type != ppt_psb)
				break;
			if (packet.type == ppt_fup && packet.payload.ip.ipc == pt_ipc_sext_48)
				*ret_ip = (uint64_t)((int64_t)(packet.payload.ip.ip << 16) >> 16);
			else if (packet.type == ppt_fup && packet.payload.ip.ipc == pt_ipc_full)
				*ret_ip = packet.payload.ip.ip;
			if (packet.type == ppt_psbend) {
				if (pt_pkt_get_offset(pkt, &off) >= 0)
					end = (size_t)off;
				break;
			}
		}
	}
	pt_pkt_free_decoder(pkt);
	return end;
}

/* A sync point: a PSB whose PSB+ ends inside its piece. */
struct sync {
	size_t psb;	/* offset of the PSB */
	size_t end;	/* offset after its PSBEND */
	uint64_t ip;	/* its FUP's IP (the flow resumes there), 0 if none */
};

/* The first sync point of @buf, or false. */
static bool first_sync(const uint8_t *buf, size_t len, struct sync *ret)
{
	for (size_t i = 0; i + 16 <= len; i++) {
		if (!is_psb_at(buf, len, i))
			continue;
		ret->end = psb_plus_end(buf, len, i, &ret->ip);
		if (ret->end) {
			ret->psb = i;
			return true;
		}
	}
	return false;
}

/* The last sync point of @buf, or false. */
static bool last_sync(const uint8_t *buf, size_t len, struct sync *ret)
{
	for (size_t i = len >= 16 ? len - 16 + 1 : 0; i-- > 0;) {
		if (!is_psb_at(buf, len, i))
			continue;
		ret->end = psb_plus_end(buf, len, i, &ret->ip);
		if (ret->end) {
			ret->psb = i;
			return true;
		}
	}
	return false;
}

/* ---- the decoder ---------------------------------------------------------------------------- */

/* A stretch of trace decoded by one libipt decoder. */
struct part {
	const uint8_t *buf; /* borrowed (the piece) or the decoder's seam copy */
	size_t len;	    /* bytes */
	uint64_t base;	    /* stream position of @buf[0] */
	bool cut;	    /* ends at a sync point with more trace to come: no end-of-trace */
	uint64_t resume_ip; /* cut: where the flow goes on (the sync point's FUP), 0 if unknown */
};

/*
 * The traced code over time, for a process that exec'd (ctx->map_spans): an image per
 * stretch of time between two changes of the mappings, made when the trace first reaches
 * that stretch.
 */
struct epoch_map {
	char *path; /* owned */
	uint64_t offset, size, vaddr;
	int64_t pid; /* -1: every process */
	struct auxcap_image_span span;
};

/* The image of one process (@pid) over one stretch (@lo), made on first use. */
struct task_image {
	size_t lo;
	int64_t pid;
	struct auxcap_ipt_image *image; /* owned */
};

struct epochs {
	struct epoch_map *maps; /* owned */
	size_t nr_maps;
	uint64_t *bounds; /* owned: the times the mappings change, ascending, distinct */
	size_t nr_bounds;
	struct auxcap_ipt_image **images; /* owned: nr_bounds + 1, NULL until made; the last
					    * is the decoder's @image */
	struct auxcap_perf_time_conv tc;  /* hardware time to perf time */
	struct auxcap_cpu_task *tasks;	  /* owned copy of ctx->tasks, NULL without */
	size_t nr_tasks;
	struct task_image *timages;	  /* owned: the images per process made so far */
	size_t nr_timages, cap_timages, last_timage;
};

struct ipt_dec {
	struct ipt_opts opts;
	struct auxcap_ipt_image *image; /* owned: the code at the end of the capture */
	struct epochs *epochs;		/* owned, NULL when the code does not change */
	struct auxcap_ipt_decoder *dec; /* owned: the decoder of parts[cur] */
	uint8_t *seam;			/* owned copy for the seam part, or NULL */
	struct part parts[2];
	int nparts, cur;
	bool per_insn;		      /* INSN events wanted */
	struct auxcap_perf_time_conv tc; /* from AUXTRACE_INFO, valid with @have_tc */
	bool have_tc;

	/* The flow: the last instruction seen (a branch ends there when the next one is known). */
	bool have_prev;
	uint64_t prev_ip;   /* address of the last instruction */
	uint64_t prev_next; /* address after it, 0 if not known (jcc of unknown length) */
	enum auxcap_ipt_iclass prev_class;
	uint64_t prev_tsc;
	bool prev_has_tsc;
	uint32_t insns; /* instructions since the last event that carried a count */

	bool flushed; /* the cut of the current part was handled */

	/* Events made from one libipt item, handed out one per decoder_next(). */
	struct auxcap_trace_event out[2];
	int nout, iout;
	int err; /* decoder_next_batch(): the failure that ended decoding, returned from then on */
};

/*
 * Length of the conditional jump encoded in @raw (@size bytes) in @mode, or 0 if @raw is not
 * one: Jcc rel8 (70-7f), JRCXZ/LOOP* rel8 (e0-e3), Jcc rel16/32 (0f 80-8f), after legacy
 * prefixes and (64-bit mode) a REX prefix.
 */
static unsigned int jcc_length(const uint8_t *raw, unsigned int size, enum auxcap_ipt_exec_mode mode)
{
	bool opsize = false;
	unsigned int i = 0;

	while (i < size && i < 14) {
		uint8_t b = raw[i];

		if (b == 0x66) {
			opsize = true;
		} else if (!(b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 ||
			     b == 0x65 || b == 0x67 || b == 0xf2 || b == 0xf3)) {
			break;
		}
		i++;
	}
	if (mode == AUXCAP_IPT_MODE_64 && i < size && (raw[i] & 0xf0) == 0x40)
		i++;
	if (i >= size)
		return 0;
	if ((raw[i] >= 0x70 && raw[i] <= 0x7f) || (raw[i] >= 0xe0 && raw[i] <= 0xe3))
		return i + 2;
	if (raw[i] == 0x0f && i + 1 < size && raw[i + 1] >= 0x80 && raw[i + 1] <= 0x8f) {
		/* rel32, except rel16 with an operand-size prefix outside 64-bit mode */
		if (opsize && mode != AUXCAP_IPT_MODE_64)
			return i + 4;
		return i + 6;
	}
	return 0;
}

static enum auxcap_branch_type branch_type(enum auxcap_ipt_iclass c)
{
	switch (c) {
	case AUXCAP_IPT_IC_CALL:
		return AUXCAP_BR_CALL;
	case AUXCAP_IPT_IC_RETURN:
		return AUXCAP_BR_RETURN;
	case AUXCAP_IPT_IC_JUMP:
		return AUXCAP_BR_JUMP;
	case AUXCAP_IPT_IC_COND_JUMP:
		return AUXCAP_BR_COND;
	case AUXCAP_IPT_IC_FAR_CALL:
		return AUXCAP_BR_SYSCALL;
	case AUXCAP_IPT_IC_FAR_RETURN:
		return AUXCAP_BR_SYSRET;
	case AUXCAP_IPT_IC_FAR_JUMP:
		return AUXCAP_BR_FAR_JUMP;
	default:
		return AUXCAP_BR_NONE;
	}
}

/* Events are cleared by copying this (memset() of this size is `rep stosq`, slow to start). */
static const struct auxcap_trace_event zero_event;

static struct auxcap_trace_event *emit(struct ipt_dec *d, enum auxcap_trace_kind kind,
				       const struct auxcap_ipt_item *it)
{
	struct auxcap_trace_event *ev = &d->out[d->nout++];

	*ev = zero_event;
	ev->kind = kind;
	ev->offset = d->parts[d->cur].base + it->offset;
	if (it->flags & AUXCAP_IPT_F_HAS_TSC) {
		ev->tsc = it->tsc;
		ev->flags |= AUXCAP_TRACE_F_HAS_TSC;
	}
	if (it->flags & AUXCAP_IPT_F_SPECULATIVE)
		ev->flags |= AUXCAP_TRACE_F_SPECULATIVE;
	return ev;
}

/* The flow went on at @ip: a BRANCH if the previous instruction was a taken branch. */
static void flow_to(struct ipt_dec *d, const struct auxcap_ipt_item *it, uint64_t ip)
{
	enum auxcap_ipt_iclass c = d->prev_class;
	struct auxcap_trace_event *ev;

	if (!d->have_prev || branch_type(c) == AUXCAP_BR_NONE)
		return;
	if (c == AUXCAP_IPT_IC_COND_JUMP && (!d->prev_next || ip == d->prev_next))
		return;
	ev = emit(d, AUXCAP_TRACE_BRANCH, it);
	ev->ip = d->prev_ip;
	ev->to = ip;
	ev->branch = branch_type(c);
	ev->ninsn = d->insns;
	/* The branch ran at the end of the previous item: date it by that item's time. */
	ev->flags &= ~(uint32_t)AUXCAP_TRACE_F_HAS_TSC;
	ev->tsc = 0;
	if (d->prev_has_tsc) {
		ev->tsc = d->prev_tsc;
		ev->flags |= AUXCAP_TRACE_F_HAS_TSC;
	}
	d->insns = 0;
}

static void flow_reset(struct ipt_dec *d)
{
	d->have_prev = false;
	d->insns = 0;
}

static const char *event_name(const struct auxcap_ipt_item *it)
{
	switch (it->event) {
	case AUXCAP_IPT_EV_PAGING:
	case AUXCAP_IPT_EV_ASYNC_PAGING:
		return "paging";
	case AUXCAP_IPT_EV_TSX:
		return it->flags & AUXCAP_IPT_F_TSX_SPECULATIVE ? "begin transaction"
		       : it->flags & AUXCAP_IPT_F_TSX_ABORTED	? "aborted"
								: "committed";
	case AUXCAP_IPT_EV_STOP:
		return "stopped";
	case AUXCAP_IPT_EV_VMCS:
	case AUXCAP_IPT_EV_ASYNC_VMCS:
		return "vmcs";
	case AUXCAP_IPT_EV_EXSTOP:
		return "exstop";
	case AUXCAP_IPT_EV_MWAIT:
		return "mwait";
	case AUXCAP_IPT_EV_PWRE:
		return "pwre";
	case AUXCAP_IPT_EV_PWRX:
		return "pwrx";
	case AUXCAP_IPT_EV_PTWRITE:
		return "ptwrite";
	case AUXCAP_IPT_EV_MNT:
		return "mnt";
	default:
		return "event";
	}
}

static void translate_event(struct ipt_dec *d, const struct auxcap_ipt_item *it)
{
	bool has_ip = !(it->flags & AUXCAP_IPT_F_IP_SUPPRESSED);
	struct auxcap_trace_event *ev;

	if (it->flags & AUXCAP_IPT_F_STATUS_UPDATE)
		return;
	switch (it->event) {
	case AUXCAP_IPT_EV_TICK:
	case AUXCAP_IPT_EV_EXEC_MODE:
	case AUXCAP_IPT_EV_CBR:
		return;
	case AUXCAP_IPT_EV_ENABLED:
		ev = emit(d, AUXCAP_TRACE_ENABLE, it);
		ev->ip = it->ip;
		if (!has_ip)
			ev->flags |= AUXCAP_TRACE_F_IP_UNKNOWN;
		if (it->flags & AUXCAP_IPT_F_RESUMED)
			ev->what = "resumed";
		flow_reset(d);
		return;
	case AUXCAP_IPT_EV_DISABLED:
	case AUXCAP_IPT_EV_ASYNC_DISABLED:
		ev = emit(d, AUXCAP_TRACE_DISABLE, it);
		ev->ninsn = d->insns;
		if (it->event == AUXCAP_IPT_EV_ASYNC_DISABLED)
			ev->ip = it->at;
		else if (d->have_prev)
			ev->ip = d->prev_ip;
		else
			ev->flags |= AUXCAP_TRACE_F_IP_UNKNOWN;
		flow_reset(d);
		return;
	case AUXCAP_IPT_EV_ASYNC_BRANCH:
		ev = emit(d, AUXCAP_TRACE_BRANCH, it);
		ev->ip = it->at;
		ev->to = it->ip;
		ev->branch = AUXCAP_BR_ASYNC;
		ev->ninsn = d->insns;
		if (!has_ip)
			ev->flags |= AUXCAP_TRACE_F_IP_UNKNOWN;
		flow_reset(d);
		return;
	case AUXCAP_IPT_EV_OVERFLOW:
		ev = emit(d, AUXCAP_TRACE_GAP, it);
		ev->ip = has_ip ? it->ip : 0;
		ev->err = -EOVERFLOW;
		ev->what = "overflow (trace lost)";
		flow_reset(d);
		return;
	case AUXCAP_IPT_EV_END_OF_TRACE:
		if (d->parts[d->cur].cut)
			return; /* the flow goes on in the next part: see ipt_decoder_next() */
		/* The last branch before the end, when the trace says where it went (the return
		 * a snapshot was taken at): the flow is cut at its target. */
		if (it->flags & AUXCAP_IPT_F_FLOW_TO)
			flow_to(d, it, it->payload);
		flow_reset(d);
		ev = emit(d, AUXCAP_TRACE_OTHER, it);
		ev->ip = it->flags & AUXCAP_IPT_F_FLOW_TO ? it->payload : it->ip;
		ev->what = "end of trace (flow cut)";
		return;
	default:
		ev = emit(d, AUXCAP_TRACE_OTHER, it);
		ev->what = event_name(it);
		ev->payload = it->payload;
		if (has_ip)
			ev->ip = it->ip;
		else
			ev->flags |= AUXCAP_TRACE_F_IP_UNKNOWN;
		return;
	}
}

/* Turn one libipt item into 0..2 events in d->out. */
static void translate(struct ipt_dec *d, const struct auxcap_ipt_item *it)
{
	struct auxcap_trace_event *ev;

	d->nout = d->iout = 0;
	switch (it->kind) {
	case AUXCAP_IPT_ITEM_INSN:
	case AUXCAP_IPT_ITEM_BLOCK:
		flow_to(d, it, it->ip);
		d->insns += it->ninsn;
		if (it->kind == AUXCAP_IPT_ITEM_INSN && d->per_insn) {
			ev = emit(d, AUXCAP_TRACE_INSN, it);
			ev->ip = it->ip;
			ev->to = it->ip;
			ev->ninsn = 1;
			ev->branch = branch_type(it->iclass);
			ev->size = it->size;
			memcpy(ev->raw, it->raw, sizeof(ev->raw));
		}
		d->have_prev = true;
		d->prev_ip = it->end_ip;
		d->prev_class = it->iclass;
		d->prev_has_tsc = (it->flags & AUXCAP_IPT_F_HAS_TSC) != 0;
		d->prev_tsc = it->tsc;
		if (it->kind == AUXCAP_IPT_ITEM_INSN)
			d->prev_next = it->ip + it->size;
		else if (d->prev_class == AUXCAP_IPT_IC_COND_JUMP && it->size) {
			unsigned int n = jcc_length(it->raw, it->size, it->mode);

			d->prev_next = n ? it->end_ip + n : 0;
		} else {
			d->prev_next = 0;
		}
		return;
	case AUXCAP_IPT_ITEM_EVENT:
		translate_event(d, it);
		return;
	case AUXCAP_IPT_ITEM_GAP:
		ev = emit(d, AUXCAP_TRACE_GAP, it);
		ev->ip = it->ip;
		ev->err = it->err;
		ev->native = it->native;
		if (it->native)
			ev->what = auxcap_ipt_strerror(it->native);
		else if (it->err == -ELOOP)
			ev->what = "the flow loops without consuming trace (corrupt trace, or the "
				   "binary does not match it)";
		else if (it->err == -ENODATA)
			ev->what = "bytes before the first PSB cannot be decoded";
		else
			ev->what = "undecodable trace";
		if (!it->native && it->err == -ENODATA)
			ev->offset = d->parts[d->cur].base;
		flow_reset(d);
		return;
	}
}

/* Whether @sp holds perf time @t. */
static bool span_has(const struct auxcap_image_span *sp, uint64_t t)
{
	return sp->since <= t && t < sp->until;
}

/*
 * The image in place at hardware time @tsc (auxcap_ipt_decoder_opts.image_at): the stretch
 * between two changes of the mappings that holds it, its image made on first use.  NULL keeps
 * the decoder's current image (out of memory: the code may be wrong, as without spans).
 */
_Static_assert(offsetof(struct auxcap_cpu_task, since) == 0,
	       "a task list is searched by its leading key");

/* The process running at perf time @t (ep->tasks), -1 if not known. */
static int64_t task_at(const struct epochs *ep, uint64_t t)
{
	size_t k = auxcap_upper_bound_by_key(ep->tasks, ep->nr_tasks, sizeof(*ep->tasks), t);

	return k ? ep->tasks[k - 1].pid : -1;
}

/* A new image of the maps in place at @from: those of process @pid and every process's
 * (@pid -1: all of them).  NULL when out of memory. */
static struct auxcap_ipt_image *image_of(const struct epochs *ep, uint64_t from, int64_t pid)
{
	struct auxcap_ipt_image *image;

	if (auxcap_ipt_image_new(&image) < 0)
		return NULL;
	for (size_t i = 0; i < ep->nr_maps; i++) {
		const struct epoch_map *m = &ep->maps[i];

		if (span_has(&m->span, from) && (pid < 0 || m->pid < 0 || m->pid == pid))
			(void)auxcap_ipt_image_add_raw(image, m->path, m->offset, m->size,
						       m->vaddr);
	}
	return image;
}

/* The image of process @pid over stretch @lo (ep->timages), made on first use. */
static struct auxcap_ipt_image *task_image(struct epochs *ep, size_t lo, int64_t pid)
{
	struct task_image *ti = ep->nr_timages ? &ep->timages[ep->last_timage] : NULL;

	if (ti && ti->lo == lo && ti->pid == pid)
		return ti->image;
	for (size_t i = 0; i < ep->nr_timages; i++)
		if (ep->timages[i].lo == lo && ep->timages[i].pid == pid) {
			ep->last_timage = i;
			return ep->timages[i].image;
		}
	if (auxcap_grow_array(&ep->timages, &ep->cap_timages, ep->nr_timages + 1, 8,
			      sizeof(*ep->timages)) < 0)
		return NULL;
	ti = &ep->timages[ep->nr_timages];
	ti->image = image_of(ep, lo ? ep->bounds[lo - 1] : 0, pid);
	if (!ti->image)
		return NULL;
	ti->lo = lo;
	ti->pid = pid;
	ep->last_timage = ep->nr_timages++;
	return ti->image;
}

static struct auxcap_ipt_image *image_at(void *arg, uint64_t tsc)
{
	struct epochs *ep = arg;
	uint64_t t = auxcap_time_conv_to_ns(&ep->tc, tsc);
	size_t lo = auxcap_upper_bound_u64(ep->bounds, ep->nr_bounds, t); /* changes by @t */
	int64_t pid = ep->tasks ? task_at(ep, t) : -1;

	if (pid >= 0)
		return task_image(ep, lo, pid);
	if (!ep->images[lo])
		ep->images[lo] = image_of(ep, lo ? ep->bounds[lo - 1] : 0, -1);
	return ep->images[lo];
}

/*
 * The code over time from ctx->map_spans (d->epochs), when the mappings change during the
 * capture and the trace's time can be turned into perf time; the maps in place at the end go
 * into d->image (the image until the trace's time is known, and without epochs).  Without
 * spans every map goes there.
 */
static int setup_images(struct ipt_dec *d, const struct auxcap_decode_ctx *ctx)
{
	const struct auxcap_image_span *spans =
		ctx->sz >= offsetof(struct auxcap_decode_ctx, map_spans) + sizeof(ctx->map_spans)
			? ctx->map_spans
			: NULL;
	const struct auxcap_cpu_task *tasks =
		ctx->sz >= offsetof(struct auxcap_decode_ctx, nr_tasks) + sizeof(ctx->nr_tasks) &&
				ctx->nr_tasks
			? ctx->tasks
			: NULL;
	struct epochs *ep = NULL;
	size_t nb = 0;
	int r;

	if (!ctx->time_conv && !d->have_tc)
		spans = NULL, tasks = NULL; /* the trace's time cannot be placed */
	if (spans) {
		for (size_t i = 0; i < ctx->nr_maps; i++)
			nb += (spans[i].since != 0) + (spans[i].until != UINT64_MAX);
	}
	if (nb || tasks) {
		ep = calloc(1, sizeof(*ep));
		if (!ep)
			return -ENOMEM;
		d->epochs = ep;
		ep->tc = ctx->time_conv ? *ctx->time_conv : d->tc;
		ep->maps = calloc(ctx->nr_maps ? ctx->nr_maps : 1, sizeof(*ep->maps));
		ep->bounds = malloc((nb ? nb : 1) * sizeof(*ep->bounds));
		if (!ep->maps || !ep->bounds)
			return -ENOMEM;
		if (tasks) {
			ep->tasks = malloc(ctx->nr_tasks * sizeof(*ep->tasks));
			if (!ep->tasks)
				return -ENOMEM;
			memcpy(ep->tasks, tasks, ctx->nr_tasks * sizeof(*ep->tasks));
			ep->nr_tasks = ctx->nr_tasks;
		}
		nb = 0;
		for (size_t i = 0; i < ctx->nr_maps; i++) {
			struct epoch_map *m = &ep->maps[ep->nr_maps];

			m->path = strdup(ctx->maps[i].path);
			if (!m->path)
				return -ENOMEM;
			m->offset = ctx->maps[i].file_offset;
			m->size = ctx->maps[i].size;
			m->vaddr = ctx->maps[i].vaddr;
			m->pid = ctx->maps[i].pid;
			m->span = spans ? spans[i] : (struct auxcap_image_span){ 0, UINT64_MAX };
			ep->nr_maps++;
			if (m->span.since != 0)
				ep->bounds[nb++] = m->span.since;
			if (m->span.until != UINT64_MAX)
				ep->bounds[nb++] = m->span.until;
		}
		ep->nr_bounds = auxcap_sort_unique_u64(ep->bounds, nb);
		ep->images = calloc(ep->nr_bounds + 1, sizeof(*ep->images));
		if (!ep->images)
			return -ENOMEM;
	}
	r = auxcap_ipt_image_new(&d->image);
	if (r < 0)
		return r;
	/* Files the decode stage could not read were left out by it; skip any that vanished. */
	for (size_t i = 0; i < ctx->nr_maps; i++)
		if (!spans || spans[i].until == UINT64_MAX)
			(void)auxcap_ipt_image_add_raw(d->image, ctx->maps[i].path,
						       ctx->maps[i].file_offset, ctx->maps[i].size,
						       ctx->maps[i].vaddr);
	if (ep)
		ep->images[ep->nr_bounds] = d->image;
	return 0;
}

static int start_part(struct ipt_dec *d)
{
	struct auxcap_ipt_decoder_opts o = { .sz = sizeof(o) };
	const struct part *p = &d->parts[d->cur];

	/* Blocks are enough unless instructions are wanted, or asked for. */
	o.block = !d->per_insn && !d->opts.insn_decoder;
	if (d->epochs) {
		o.image_at = image_at;
		o.image_arg = d->epochs;
	}
	auxcap_ipt_decoder_free(d->dec);
	d->dec = NULL;
	flow_reset(d);
	return auxcap_ipt_decoder_new(p->buf, p->len, d->image, &d->opts.params, &o, &d->dec);
}

static void epochs_free(struct epochs *ep)
{
	if (!ep)
		return;
	for (size_t i = 0; i < ep->nr_maps; i++)
		free(ep->maps[i].path);
	/* the last image is the decoder's own */
	for (size_t k = 0; ep->images && k < ep->nr_bounds; k++)
		auxcap_ipt_image_free(ep->images[k]);
	for (size_t k = 0; k < ep->nr_timages; k++)
		auxcap_ipt_image_free(ep->timages[k].image);
	free(ep->timages);
	free(ep->tasks);
	free(ep->images);
	free(ep->bounds);
	free(ep->maps);
	free(ep);
}

static void ipt_decoder_free(void *p)
{
	struct ipt_dec *d = p;

	if (!d)
		return;
	auxcap_ipt_decoder_free(d->dec);
	epochs_free(d->epochs);
	auxcap_ipt_image_free(d->image);
	free(d->seam);
	free(d);
}

/*
 * Split [@buf, @buf + @len) (and the tail of ctx->prev) into the parts described on top.  The
 * sync points of a piece are the PSBs whose PSB+ lies wholly in it; every decoder finds the
 * same ones in the same piece, so cuts and restarts meet.
 */
static int plan_parts(struct ipt_dec *d, const struct auxcap_decode_ctx *ctx, const uint8_t *buf,
		      size_t len)
{
	bool v2 = ctx->sz >= offsetof(struct auxcap_decode_ctx, more) + sizeof(ctx->more);
	const struct auxcap_trace_piece *prev = v2 ? ctx->prev : NULL;
	size_t nprev = prev ? ctx->nr_prev : 0, start = 0, stop = len, j = nprev;
	uint64_t base = v2 ? ctx->stream_offset : 0;
	bool more = v2 && ctx->more;
	struct sync first, last, before;
	bool have_first = first_sync(buf, len, &first);

	/* Without a sync point of its own, a piece's flow is decoded with the next one's. */
	if (more && !have_first)
		return 0;
	/* The last sync point before @buf: the flow from there on is this decoder's. */
	while (j-- > 0)
		if (last_sync(prev[j].buf, prev[j].len, &before))
			break;
	/* None wholly in them (the stream's first PSB+ cut by a buffer boundary): their
	 * decoders decoded nothing, the flow from their start is this one's. */
	if (j >= nprev && nprev) {
		j = 0;
		before.psb = 0;
	}
	if (j < nprev) {
		size_t tail = prev[j].len - before.psb, head = have_first ? first.end : len;
		size_t n = tail + head;
		uint64_t back = tail;
		uint8_t *p;

		for (size_t k = j + 1; k < nprev; k++) {
			n += prev[k].len;
			back += prev[k].len;
		}
		d->seam = malloc(n ? n : 1);
		if (!d->seam)
			return -ENOMEM;
		p = d->seam;
		memcpy(p, prev[j].buf + before.psb, tail);
		p += tail;
		for (size_t k = j + 1; k < nprev; k++) {
			memcpy(p, prev[k].buf, prev[k].len);
			p += prev[k].len;
		}
		memcpy(p, buf, head);
		d->parts[d->nparts++] = (struct part){ d->seam, n, base - back, have_first || more,
						       have_first ? first.ip : 0 };
		if (!have_first)
			return 0;
		start = first.psb;
	}
	if (more) {
		/* the piece has a sync point of its own (above): its last one is found */
		if (!last_sync(buf, len, &last))
			last = first;
		stop = last.end;
	}
	d->parts[d->nparts++] = (struct part){ buf + start, stop - start, base + start, more,
					       more ? last.ip : 0 };
	return 0;
}

static int ipt_decoder_new(const struct auxcap_decode_ctx *ctx, const uint8_t *buf, size_t len,
			   void **ret_dec)
{
	struct ipt_dec *d;
	int r;

	if (!ctx || ctx->sz < offsetof(struct auxcap_decode_ctx, errlen) + sizeof(ctx->errlen) ||
	    (!buf && len) || !ret_dec)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->per_insn = ctx->per_insn;
	r = parse_opts(ctx, &d->opts);
	if (r < 0)
		goto err;
	if (!ctx->time_conv && ctx->info && ctx->nr_info > INFO_CAP_USER_TIME_ZERO &&
	    ctx->info[INFO_CAP_USER_TIME_ZERO]) {
		d->tc.time_shift = ctx->info[INFO_TIME_SHIFT];
		d->tc.time_mult = ctx->info[INFO_TIME_MULT];
		d->tc.time_zero = ctx->info[INFO_TIME_ZERO];
		d->tc.cap_user_time_zero = true;
		d->have_tc = d->tc.time_mult && d->tc.time_shift < 64;
	}
	r = setup_images(d, ctx);
	if (r < 0)
		goto err;
	r = plan_parts(d, ctx, buf, len);
	if (r < 0)
		goto err;
	if (d->nparts) {
		r = start_part(d);
		if (r < 0)
			goto err;
	}
	*ret_dec = d;
	return 0;
err:
	ipt_decoder_free(d);
	return r;
}

/* Decode until events are waiting in d->out: 1, 0 at the end of the piece, or an error. */
static int refill(struct ipt_dec *d)
{
	struct auxcap_ipt_item item;
	int r;

	while (d->iout == d->nout) {
		if (!d->dec)
			return 0; /* nothing of this piece is ours */
		r = auxcap_ipt_decoder_next(d->dec, &item);
		if (r < 0)
			return r;
		if (r == 0) {
			const struct part *cur = &d->parts[d->cur];

			/* At a cut the last branch's target is the sync point's FUP: the next
			 * decoder starts there without knowing how the flow got there. */
			if (cur->cut && cur->resume_ip && !d->flushed) {
				memset(&item, 0, sizeof(item));
				item.offset = cur->len;
				d->nout = d->iout = 0;
				flow_to(d, &item, cur->resume_ip);
				flow_reset(d);
				d->flushed = true;
				continue;
			}
			if (d->cur + 1 >= d->nparts)
				return 0;
			d->cur++;
			d->flushed = false;
			r = start_part(d);
			if (r < 0)
				return r;
			continue;
		}
		translate(d, &item);
	}
	return 1;
}

/* The perf time of an event with a TSC, as both ways of handing events out give it. */
static void set_time(const struct ipt_dec *d, struct auxcap_trace_event *ev)
{
	if (d->have_tc && (ev->flags & AUXCAP_TRACE_F_HAS_TSC)) {
		ev->time = auxcap_time_conv_to_ns(&d->tc, ev->tsc);
		ev->flags |= AUXCAP_TRACE_F_HAS_TIME;
	}
}

static int ipt_decoder_next(void *p, struct auxcap_trace_event *ev)
{
	struct ipt_dec *d = p;
	int r;

	if (!d || !ev)
		return -EINVAL;
	r = refill(d);
	if (r <= 0)
		return r;
	*ev = d->out[d->iout++];
	set_time(d, ev);
	return 1;
}

_Static_assert(sizeof(struct auxcap_trace_head) == offsetof(struct auxcap_trace_event, size),
	       "struct auxcap_trace_head is the head of struct auxcap_trace_event");

static int ipt_decoder_next_batch(void *p, void *heads, size_t stride,
				  struct auxcap_trace_event *whole, size_t max)
{
	struct ipt_dec *d = p;
	unsigned char *h = heads;
	size_t n = 0;
	int r;

	if (!d || !heads || !whole || stride < sizeof(struct auxcap_trace_head) || !max)
		return -EINVAL;
	if (d->err)
		return d->err; /* the failure after the events of an earlier call: it ends decoding */
	do {
		struct auxcap_trace_event *ev;

		r = refill(d);
		if (r <= 0)
			break;
		ev = &d->out[d->iout++];
		set_time(d, ev);
		/* a BRANCH has nothing past its head; the other kinds go whole (not many) */
		if (ev->kind != AUXCAP_TRACE_BRANCH) {
			ev->flags |= AUXCAP_TRACE_F_WHOLE;
			whole[n] = *ev;
		}
		memcpy(h, ev, sizeof(struct auxcap_trace_head));
		h += stride;
	} while (++n < max);
	if (r < 0 && n)
		d->err = r; /* the next call returns it */
	return n ? (int)n : r;
}

static int ipt_dump(const struct auxcap_decode_ctx *ctx, const uint8_t *buf, size_t len,
		    auxcap_backend_line_fn fn, void *arg)
{
	struct ipt_opts o;
	int r;

	if (!ctx || !fn)
		return -EINVAL;
	r = parse_opts(ctx, &o);
	if (r < 0)
		return r;
	return auxcap_ipt_dump(buf, len, &o.params, &o.dump, fn, arg);
}

const struct auxcap_backend_ops auxcap_backend_intel_pt = {
	.abi = AUXCAP_BACKEND_ABI,
	.name = "intel_pt",
	.description = "Intel Processor Trace (libipt decoder)",
	.auxtrace_type = AUXCAP_AUXTRACE_INTEL_PT,
	.probe = ipt_probe,
	.recording_options = auxcap_ipt_recording_options,
	.info_size = auxcap_ipt_info_size,
	.info_fill = auxcap_ipt_info_fill,
	/*
	 * perf's "first wrap" test: AUX pages start zeroed, so the buffer has wrapped once any
	 * of its last 512 u64 words is non-zero (remembered per buffer); then the whole buffer
	 * ending at the driver's in-buffer head is trace, before that only [old, head).  (perf
	 * switches to comparing a reference copy for snapshots over 64 KiB; its copy is taken
	 * before the head but compared at the end of the buffer, so from the second snapshot on
	 * it answers "wrapped", which this test also answers once the buffer has filled, without
	 * claiming the zeros of a buffer that never did.)
	 */
	.find_snapshot = auxcap_find_snapshot_zero_tail,
	.reference = auxcap_counter_now,
	.addr_filter = auxcap_ipt_addr_filter,
	.decoder_new = ipt_decoder_new,
	.decoder_next = ipt_decoder_next,
	.decoder_next_batch = ipt_decoder_next_batch,
	.decoder_free = ipt_decoder_free,
	.dump = ipt_dump,
};
