/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Instruction flow decoding over libipt's instruction decoder (pt_insn_*) or block decoder
 * (pt_blk_*), turned into one iterator of items: instructions or blocks, events, and gaps.
 *
 * The two libipt decoders have the same shape (sync_forward, next, event, time,
 * get_offset); a small table of function pointers hides which one runs.  The state machine:
 *
 *   NEED_SYNC --sync_forward ok--> RUNNING --error--> (GAP item) NEED_SYNC
 *       |                             |
 *       +--no more PSB--> DONE <------+ (end of stream: back to NEED_SYNC, then DONE)
 *
 * While RUNNING, pending events (status bit pts_event_pending) are drained before the next
 * instruction, as libipt requires.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "ipt.h"
#include "ipt_internal.h"

enum dec_state {
	STATE_NEED_SYNC = 0,
	STATE_RUNNING,
	STATE_DONE,
};

struct auxcap_ipt_decoder {
	struct auxcap_ipt_decoder_opts opts; /* copied from the caller */
	struct pt_insn_decoder *insn;	     /* owned; NULL in block mode */
	struct pt_block_decoder *blk;	     /* owned; NULL in instruction mode */
	struct auxcap_ipt_image *image;	     /* borrowed */
	enum dec_state state;
	int status;	    /* last non-negative libipt status (pts_* bits) */
	bool synced_once;   /* the first sync happened (leading bytes were reported) */
	const uint8_t *buf; /* the trace (borrowed, or @owned) */
	void *owned;	    /* a copy of the trace with a readable end (auxcap_ipt_readable_end()) */
	size_t len;	    /* its size (bytes) */
	bool have_resync;   /* resync_at is valid: sync there instead of sync_forward */
	uint64_t resync_at; /* offset of the PSB to try after a failed sync */
	uint64_t last_ip;   /* ip of the last instruction or block produced */
	uint64_t err_ip;    /* ip libipt reported with the last failed next() */
	int pending_err;    /* a libipt error held back while what was decoded before it is
			     * handed out (next_block(), next_insn()); 0 if none */
	uint64_t gaps;	    /* GAP items produced */
	uint64_t progress_offset; /* trace offset when @stalled_insns was last reset */
	uint64_t stalled_insns;	  /* instructions decoded since the offset last moved */
	struct raw_entry *raw_cache; /* owned, RAW_CACHE entries or NULL: bytes at block ends */
};

/*
 * The bytes of the last instruction of a block (for a conditional jump: its length tells a
 * taken jump from a fall-through) come from the image section cache, which locks and maps
 * the section for every read: hot loops end blocks at the same few addresses, so they are
 * kept here, direct-mapped by address (emptied when the decoder changes image).
 */
#define RAW_CACHE 8192

struct raw_entry {
	uint64_t ip; /* 0: empty */
	int isid;
	uint8_t size;
	uint8_t raw[15];
};

static int read_end_bytes(struct auxcap_ipt_decoder *dec, int isid, uint64_t ip, uint8_t *out,
			  size_t len)
{
	struct raw_entry *e;
	int r;

	if (!dec->raw_cache)
		dec->raw_cache = calloc(RAW_CACHE, sizeof(*dec->raw_cache));
	if (!dec->raw_cache)
		return auxcap_ipt_image_read(dec->image, isid, ip, out, len);
	e = &dec->raw_cache[(ip * 0x9e3779b97f4a7c15ull) >> 51];
	if (e->ip != ip || e->isid != isid) {
		r = auxcap_ipt_image_read(dec->image, isid, ip, e->raw, sizeof(e->raw));
		if (r <= 0)
			return r;
		e->ip = ip;
		e->isid = isid;
		e->size = (uint8_t)r;
	}
	memcpy(out, e->raw, len < e->size ? len : e->size);
	return len < e->size ? (int)len : e->size;
}

/*
 * Items are cleared by copying this: memset() of a struct this size compiles to `rep stosq`,
 * whose start-up cost showed in profiles at one item per block.
 */
static const struct auxcap_ipt_item zero_item;

/*
 * Instructions decoded without consuming a trace byte before the flow is declared stuck.  Code
 * runs without trace only through direct branches and straight-line code (conditional branches
 * take TNT bits, at most 47 per packet; indirect ones take TIPs), so real hardware never gets
 * near this; a corrupt trace or a wrong image can send libipt round a loop of direct branches
 * forever (perf's decoder stops such walks too: "Never-ending loop").
 */
#define MAX_STALLED_INSNS (1u << 20)

static int dec_sync_forward(struct auxcap_ipt_decoder *dec)
{
	return dec->insn ? pt_insn_sync_forward(dec->insn) : pt_blk_sync_forward(dec->blk);
}

/*
 * The decoder's position in the trace.  At most the trace's end: on SKZ84 parts libipt
 * (2.0.5 to 2.1) skips a TMA with reserved bits set as 8 bytes, one more than a TMA, so a
 * trace that ends with such a TMA leaves the decoder one byte past its end.
 */
static int dec_get_offset(struct auxcap_ipt_decoder *dec, uint64_t *offset)
{
	int r = dec->insn ? pt_insn_get_offset(dec->insn, offset)
			  : pt_blk_get_offset(dec->blk, offset);

	if (r >= 0 && *offset > dec->len)
		*offset = dec->len;
	return r;
}

/*
 * The image in place at @tsc (opts.image_at), if it is another one: set it in libipt's
 * decoder.  The bytes kept for block ends belong to the old image's sections.
 */
static void dec_image_at(struct auxcap_ipt_decoder *dec, uint64_t tsc)
{
	struct auxcap_ipt_image *image = dec->opts.image_at(dec->opts.image_arg, tsc);
	int r;

	if (!image || image == dec->image)
		return;
	r = dec->insn ? pt_insn_set_image(dec->insn, auxcap_ipt_image_pt(image))
		      : pt_blk_set_image(dec->blk, auxcap_ipt_image_pt(image));
	if (r < 0)
		return; /* libipt refuses only a NULL decoder: keep the old image */
	dec->image = image;
	if (dec->raw_cache)
		memset(dec->raw_cache, 0, RAW_CACHE * sizeof(*dec->raw_cache));
}

/* After a sync: the image in place at the PSB+'s timestamp. */
static void dec_image_after_sync(struct auxcap_ipt_decoder *dec)
{
	uint64_t tsc = 0;
	uint32_t lost_mtc = 0, lost_cyc = 0;
	int r;

	if (!dec->opts.image_at)
		return;
	r = dec->insn ? pt_insn_time(dec->insn, &tsc, &lost_mtc, &lost_cyc)
		      : pt_blk_time(dec->blk, &tsc, &lost_mtc, &lost_cyc);
	if (r >= 0)
		dec_image_at(dec, tsc);
}

static int dec_get_sync_offset(struct auxcap_ipt_decoder *dec, uint64_t *offset)
{
	return dec->insn ? pt_insn_get_sync_offset(dec->insn, offset)
			 : pt_blk_get_sync_offset(dec->blk, offset);
}

static int dec_event(struct auxcap_ipt_decoder *dec, struct pt_event *ev)
{
	return dec->insn ? pt_insn_event(dec->insn, ev, sizeof(*ev))
			 : pt_blk_event(dec->blk, ev, sizeof(*ev));
}

static void dec_time(struct auxcap_ipt_decoder *dec, struct auxcap_ipt_item *item)
{
	uint64_t tsc;
	int r;

	r = dec->insn ? pt_insn_time(dec->insn, &tsc, NULL, NULL)
		      : pt_blk_time(dec->blk, &tsc, NULL, NULL);
	if (r >= 0) {
		item->tsc = tsc;
		item->flags |= AUXCAP_IPT_F_HAS_TSC;
	}
}

static enum auxcap_ipt_iclass map_iclass(enum pt_insn_class c)
{
	switch (c) {
	case ptic_other:
		return AUXCAP_IPT_IC_OTHER;
	case ptic_call:
		return AUXCAP_IPT_IC_CALL;
	case ptic_return:
		return AUXCAP_IPT_IC_RETURN;
	case ptic_jump:
		return AUXCAP_IPT_IC_JUMP;
	case ptic_cond_jump:
		return AUXCAP_IPT_IC_COND_JUMP;
	case ptic_far_call:
		return AUXCAP_IPT_IC_FAR_CALL;
	case ptic_far_return:
		return AUXCAP_IPT_IC_FAR_RETURN;
	case ptic_far_jump:
		return AUXCAP_IPT_IC_FAR_JUMP;
	case ptic_ptwrite:
		return AUXCAP_IPT_IC_PTWRITE;
	case ptic_error:
	default:
		return AUXCAP_IPT_IC_ERROR;
	}
}

static enum auxcap_ipt_exec_mode map_mode(enum pt_exec_mode m)
{
	switch (m) {
	case ptem_16bit:
		return AUXCAP_IPT_MODE_16;
	case ptem_32bit:
		return AUXCAP_IPT_MODE_32;
	case ptem_64bit:
		return AUXCAP_IPT_MODE_64;
	default:
		return AUXCAP_IPT_MODE_UNKNOWN;
	}
}

int auxcap_ipt_decoder_new(const uint8_t *buf, size_t len, struct auxcap_ipt_image *image,
			   const struct auxcap_ipt_params *params,
			   const struct auxcap_ipt_decoder_opts *opts,
			   struct auxcap_ipt_decoder **ret_dec)
{
	struct auxcap_ipt_decoder *dec;
	struct pt_config config;
	int r;

	if ((!buf && len) || !image || !ret_dec)
		return -EINVAL;
	if (auxcap_ipt_params_valid(params) < 0 || (opts && opts->sz < sizeof(*opts)))
		return -EINVAL;
	if (opts && opts->start && opts->start >= len)
		return -EINVAL;

	dec = calloc(1, sizeof(*dec));
	if (!dec)
		return -ENOMEM;
	buf = auxcap_ipt_readable_end(buf, len, &dec->owned);
	if (!buf && len) {
		free(dec);
		return -ENOMEM;
	}
	r = auxcap_ipt_config_init(&config, buf, len, params);
	if (r < 0) {
		free(dec->owned);
		free(dec);
		return auxcap_ipt_errno(r);
	}
	dec->image = image;
	dec->buf = buf;
	dec->len = len;
	if (opts)
		dec->opts = *opts;
	dec->opts.sz = sizeof(dec->opts);
	if (dec->opts.start) {
		/* the first sync goes straight there; what lies before is someone else's */
		dec->have_resync = true;
		dec->resync_at = dec->opts.start;
		dec->synced_once = true;
	}

	if (dec->opts.block) {
		config.flags.variant.block.enable_tick_events = dec->opts.tick_events;
		/* End blocks on calls and jumps too, so every taken branch ends a block. */
		config.flags.variant.block.end_on_call = 1;
		config.flags.variant.block.end_on_jump = 1;
		dec->blk = pt_blk_alloc_decoder(&config);
		if (!dec->blk) {
			r = -ENOMEM;
			goto err_free;
		}
		r = pt_blk_set_image(dec->blk, auxcap_ipt_image_pt(image));
	} else {
		config.flags.variant.insn.enable_tick_events = dec->opts.tick_events;
		dec->insn = pt_insn_alloc_decoder(&config);
		if (!dec->insn) {
			r = -ENOMEM;
			goto err_free;
		}
		r = pt_insn_set_image(dec->insn, auxcap_ipt_image_pt(image));
	}
	if (r < 0) {
		r = auxcap_ipt_errno(r);
		goto err_dec;
	}
	*ret_dec = dec;
	return 0;

err_dec:
	pt_insn_free_decoder(dec->insn);
	pt_blk_free_decoder(dec->blk);
err_free:
	free(dec->owned);
	free(dec);
	return r;
}

int auxcap_ipt_decoder_restart(struct auxcap_ipt_decoder *dec, uint64_t start)
{
	if (!dec || !start || start >= dec->len)
		return -EINVAL;
	/* as auxcap_ipt_decoder_new() with opts.start; libipt's sync_set resets its decoder */
	dec->opts.start = start;
	dec->state = STATE_NEED_SYNC;
	dec->status = 0;
	dec->synced_once = true;
	dec->have_resync = true;
	dec->resync_at = start;
	dec->last_ip = 0;
	dec->err_ip = 0;
	dec->pending_err = 0;
	dec->progress_offset = 0;
	dec->stalled_insns = 0;
	return 0;
}

void auxcap_ipt_decoder_free(struct auxcap_ipt_decoder *dec)
{
	if (!dec)
		return;
	if (dec->insn)
		pt_insn_free_decoder(dec->insn);
	if (dec->blk)
		pt_blk_free_decoder(dec->blk);
	free(dec->raw_cache);
	free(dec->owned);
	free(dec);
}

uint64_t auxcap_ipt_decoder_gaps(const struct auxcap_ipt_decoder *dec)
{
	return dec ? dec->gaps : 0;
}

static int make_gap(struct auxcap_ipt_decoder *dec, struct auxcap_ipt_item *item, int pte,
		    uint64_t ip)
{
	uint64_t offset = 0;

	memset(item, 0, sizeof(*item));
	(void)dec_get_offset(dec, &offset);
	item->kind = AUXCAP_IPT_ITEM_GAP;
	item->offset = offset;
	item->ip = ip;
	item->err = auxcap_ipt_errno(pte);
	item->native = pt_errcode(pte);
	dec->gaps++;
	return 1;
}

static void fill_event(struct auxcap_ipt_item *item, const struct pt_event *ev)
{
	item->kind = AUXCAP_IPT_ITEM_EVENT;
	if (ev->ip_suppressed)
		item->flags |= AUXCAP_IPT_F_IP_SUPPRESSED;
	if (ev->status_update)
		item->flags |= AUXCAP_IPT_F_STATUS_UPDATE;
	if (ev->has_tsc) {
		item->flags |= AUXCAP_IPT_F_HAS_TSC;
		item->tsc = ev->tsc;
	}
	switch (ev->type) {
	case ptev_enabled:
		item->event = AUXCAP_IPT_EV_ENABLED;
		item->ip = ev->variant.enabled.ip;
		if (ev->variant.enabled.resumed)
			item->flags |= AUXCAP_IPT_F_RESUMED;
		break;
	case ptev_disabled:
		item->event = AUXCAP_IPT_EV_DISABLED;
		item->ip = ev->variant.disabled.ip;
		break;
	case ptev_async_disabled:
		item->event = AUXCAP_IPT_EV_ASYNC_DISABLED;
		item->at = ev->variant.async_disabled.at;
		item->ip = ev->variant.async_disabled.ip;
		break;
	case ptev_async_branch:
		item->event = AUXCAP_IPT_EV_ASYNC_BRANCH;
		item->at = ev->variant.async_branch.from;
		item->ip = ev->variant.async_branch.to;
		break;
	case ptev_paging:
		item->event = AUXCAP_IPT_EV_PAGING;
		item->payload = ev->variant.paging.cr3;
		if (ev->variant.paging.non_root)
			item->flags |= AUXCAP_IPT_F_NON_ROOT;
		break;
	case ptev_async_paging:
		item->event = AUXCAP_IPT_EV_ASYNC_PAGING;
		item->payload = ev->variant.async_paging.cr3;
		item->ip = ev->variant.async_paging.ip;
		if (ev->variant.async_paging.non_root)
			item->flags |= AUXCAP_IPT_F_NON_ROOT;
		break;
	case ptev_overflow:
		item->event = AUXCAP_IPT_EV_OVERFLOW;
		item->ip = ev->variant.overflow.ip;
		break;
	case ptev_exec_mode:
		item->event = AUXCAP_IPT_EV_EXEC_MODE;
		item->mode = map_mode(ev->variant.exec_mode.mode);
		item->ip = ev->variant.exec_mode.ip;
		break;
	case ptev_tsx:
		item->event = AUXCAP_IPT_EV_TSX;
		item->ip = ev->variant.tsx.ip;
		if (ev->variant.tsx.speculative)
			item->flags |= AUXCAP_IPT_F_TSX_SPECULATIVE;
		if (ev->variant.tsx.aborted)
			item->flags |= AUXCAP_IPT_F_TSX_ABORTED;
		break;
	case ptev_stop:
		item->event = AUXCAP_IPT_EV_STOP;
		break;
	case ptev_vmcs:
		item->event = AUXCAP_IPT_EV_VMCS;
		item->payload = ev->variant.vmcs.base;
		break;
	case ptev_async_vmcs:
		item->event = AUXCAP_IPT_EV_ASYNC_VMCS;
		item->payload = ev->variant.async_vmcs.base;
		item->ip = ev->variant.async_vmcs.ip;
		break;
	case ptev_exstop:
		item->event = AUXCAP_IPT_EV_EXSTOP;
		item->ip = ev->variant.exstop.ip;
		break;
	case ptev_mwait:
		item->event = AUXCAP_IPT_EV_MWAIT;
		item->ip = ev->variant.mwait.ip;
		item->payload = ev->variant.mwait.hints;
		item->payload2 = ev->variant.mwait.ext;
		break;
	case ptev_pwre:
		item->event = AUXCAP_IPT_EV_PWRE;
		item->payload2 = (uint32_t)ev->variant.pwre.state << 8 | ev->variant.pwre.sub_state;
		if (ev->variant.pwre.hw)
			item->flags |= AUXCAP_IPT_F_PWRE_HW;
		break;
	case ptev_pwrx:
		item->event = AUXCAP_IPT_EV_PWRX;
		item->payload2 = (uint32_t)ev->variant.pwrx.last << 8 | ev->variant.pwrx.deepest;
		if (ev->variant.pwrx.interrupt)
			item->flags |= AUXCAP_IPT_F_PWRX_INTERRUPT;
		if (ev->variant.pwrx.store)
			item->flags |= AUXCAP_IPT_F_PWRX_STORE;
		if (ev->variant.pwrx.autonomous)
			item->flags |= AUXCAP_IPT_F_PWRX_AUTONOMOUS;
		break;
	case ptev_ptwrite:
		item->event = AUXCAP_IPT_EV_PTWRITE;
		item->ip = ev->variant.ptwrite.ip;
		item->payload = ev->variant.ptwrite.payload;
		item->payload2 = ev->variant.ptwrite.size;
		break;
	case ptev_tick:
		item->event = AUXCAP_IPT_EV_TICK;
		item->ip = ev->variant.tick.ip;
		break;
	case ptev_cbr:
		item->event = AUXCAP_IPT_EV_CBR;
		item->payload = ev->variant.cbr.ratio;
		break;
	case ptev_mnt:
		item->event = AUXCAP_IPT_EV_MNT;
		item->payload = ev->variant.mnt.payload;
		break;
	}
}

/* Offset of the first PSB (02 82 repeated 8 times) at or after @from, or @len if none. */
static uint64_t find_psb(const uint8_t *buf, size_t len, uint64_t from)
{
	for (uint64_t i = from; i + 16 <= len; i++) {
		size_t k = 0;

		while (k < 16 && buf[i + k] == (k & 1 ? 0x82 : 0x02))
			k++;
		if (k == 16)
			return i;
	}
	return len;
}

/* Synchronize at the next PSB; returns 1 with a GAP item, 0 synced, or -1 when done. */
static int do_sync(struct auxcap_ipt_decoder *dec, struct auxcap_ipt_item *item)
{
	uint64_t offset = 0;
	int r;

	if (dec->have_resync) {
		dec->have_resync = false;
		r = dec->insn ? pt_insn_sync_set(dec->insn, dec->resync_at)
			      : pt_blk_sync_set(dec->blk, dec->resync_at);
	} else {
		r = dec_sync_forward(dec);
	}
	if (r == -pte_eos) {
		dec->state = STATE_DONE;
		return -1;
	}
	if (r < 0) {
		/* A PSB was found but its PSB+ does not decode.  Report it, and try the next
		 * PSB after the failure next time: found by scanning, so that progress does not
		 * depend on where libipt left its position. */
		(void)dec_get_offset(dec, &offset);
		dec->synced_once = true;
		dec->resync_at = find_psb(dec->buf, dec->len, offset + 1);
		if (dec->resync_at < dec->len)
			dec->have_resync = true;
		else
			dec->state = STATE_DONE;
		return make_gap(dec, item, r, dec->last_ip);
	}
	dec->status = r;
	dec->state = STATE_RUNNING;
	dec->pending_err = 0;
	dec_image_after_sync(dec);
	if (!dec->synced_once) {
		dec->synced_once = true;
		if (dec_get_sync_offset(dec, &offset) >= 0 && offset > 0) {
			memset(item, 0, sizeof(*item));
			item->kind = AUXCAP_IPT_ITEM_GAP;
			item->err = -ENODATA;
			dec->gaps++;
			return 1;
		}
	}
	return 0;
}

static int next_insn(struct auxcap_ipt_decoder *dec, struct auxcap_ipt_item *item)
{
	struct pt_insn insn;
	int r;

	memset(&insn, 0, sizeof(insn));
	r = pt_insn_next(dec->insn, &insn, sizeof(insn));
	dec->err_ip = insn.ip;
	if (r < 0) {
		/*
		 * An instruction libipt decoded before the error (where it goes was not found):
		 * it was reached, as the block decoder's last one is (next_block()); handed out,
		 * the error with the next call.  Not one it could not read (ptic_error).
		 */
		if (insn.iclass == ptic_error || !insn.size || r == -pte_nomem)
			return r;
		dec->pending_err = r;
	} else {
		dec->status = r;
	}
	memset(item, 0, sizeof(*item));
	item->kind = AUXCAP_IPT_ITEM_INSN;
	item->ip = insn.ip;
	item->end_ip = insn.ip;
	item->ninsn = 1;
	item->iclass = map_iclass(insn.iclass);
	item->mode = map_mode(insn.mode);
	item->size = insn.size;
	memcpy(item->raw, insn.raw,
	       sizeof(item->raw) < sizeof(insn.raw) ? sizeof(item->raw) : sizeof(insn.raw));
	if (insn.speculative)
		item->flags |= AUXCAP_IPT_F_SPECULATIVE;
	dec->last_ip = insn.ip;
	return 1;
}

/*
 * What a control transfer that libipt's block cache left unclassified is.  Reached through
 * the cache, a block that ends in an indirect jump or a far transfer has iclass ptic_error
 * ("the caller may decode it"): only those two kinds end up there (near calls and returns
 * have their own cache entries).  @p/@n are the instruction's bytes.
 */
static enum auxcap_ipt_iclass classify_transfer(const uint8_t *p, size_t n,
						enum auxcap_ipt_exec_mode mode)
{
	size_t i = 0;

	/* legacy prefixes, then REX in 64-bit mode */
	while (i < n && (p[i] == 0x26 || p[i] == 0x2e || p[i] == 0x36 || p[i] == 0x3e ||
			 p[i] == 0x64 || p[i] == 0x65 || p[i] == 0x66 || p[i] == 0x67 ||
			 p[i] == 0xf0 || p[i] == 0xf2 || p[i] == 0xf3))
		i++;
	if (mode == AUXCAP_IPT_MODE_64 && i < n && (p[i] & 0xf0) == 0x40)
		i++;
	if (i >= n)
		return AUXCAP_IPT_IC_ERROR;
	switch (p[i]) {
	case 0xff: /* group 5: /3 call far, /4 jmp near indirect, /5 jmp far */
		if (i + 1 >= n)
			return AUXCAP_IPT_IC_ERROR;
		switch ((p[i + 1] >> 3) & 7) {
		case 3: return AUXCAP_IPT_IC_FAR_CALL;
		case 4: return AUXCAP_IPT_IC_JUMP;
		case 5: return AUXCAP_IPT_IC_FAR_JUMP;
		default: return AUXCAP_IPT_IC_ERROR;
		}
	case 0x9a: case 0xcc: case 0xcd: case 0xce: case 0xf1: /* call far, int3, int, into, int1 */
		return AUXCAP_IPT_IC_FAR_CALL;
	case 0xea:
		return AUXCAP_IPT_IC_FAR_JUMP;
	case 0xca: case 0xcb: case 0xcf: /* ret far, iret */
		return AUXCAP_IPT_IC_FAR_RETURN;
	case 0x0f:
		if (i + 1 >= n)
			return AUXCAP_IPT_IC_ERROR;
		switch (p[i + 1]) {
		case 0x05: case 0x34: return AUXCAP_IPT_IC_FAR_CALL;   /* syscall, sysenter */
		case 0x07: case 0x35: return AUXCAP_IPT_IC_FAR_RETURN; /* sysret, sysexit */
		default: return AUXCAP_IPT_IC_ERROR;
		}
	default:
		return AUXCAP_IPT_IC_ERROR;
	}
}

/* Give a block whose last instruction libipt did not classify its class, from its bytes. */
static void classify_block_end(struct auxcap_ipt_decoder *dec, const struct pt_block *block,
			       struct auxcap_ipt_item *item)
{
	uint8_t raw[15];
	int n = 0;

	if (block->truncated) {
		n = block->size;
		memcpy(raw, block->raw, block->size);
	} else if (block->isid > 0) {
		n = read_end_bytes(dec, block->isid, block->end_ip, raw, sizeof(raw));
	}
	if (n > 0)
		item->iclass = classify_transfer(raw, (size_t)n, item->mode);
}

static int next_block(struct auxcap_ipt_decoder *dec, struct auxcap_ipt_item *item)
{
	struct pt_block block;
	int r;

	/* pt_blk_next() initializes @block itself (on an error: with what came before it) */
	r = pt_blk_next(dec->blk, &block, sizeof(block));
	dec->err_ip = block.ip;
	if (r < 0) {
		/*
		 * libipt hands back the instructions it decoded before the error: they ran, and
		 * how many there are depends on where its block cache cut the flow into blocks.
		 * Hand them out first and the error with the next call (the gap is then at the
		 * block's last instruction, the one the instruction decoder hands out before
		 * the same error: next_insn()), so that no instruction before an error is lost.
		 */
		if (!block.ninsn || r == -pte_nomem)
			return r;
		dec->pending_err = r;
		dec->err_ip = block.end_ip;
	} else {
		dec->status = r;
	}
	/* An empty block only carries status (pending events, eos). */
	if (!block.ninsn)
		return 0;
	*item = zero_item;
	item->kind = AUXCAP_IPT_ITEM_BLOCK;
	item->ip = block.ip;
	item->end_ip = block.end_ip;
	item->ninsn = block.ninsn;
	item->iclass = map_iclass(block.iclass);
	item->mode = map_mode(block.mode);
	if (block.iclass == ptic_error)
		classify_block_end(dec, &block, item);
	if (block.speculative)
		item->flags |= AUXCAP_IPT_F_SPECULATIVE;
	/* The bytes at end_ip, so callers can tell a taken conditional jump from a
	 * fall-through (the only case where the last instruction's length matters). */
	if (block.iclass != ptic_cond_jump) {
		item->size = 0;
	} else if (block.truncated) {
		item->size = block.size;
		memcpy(item->raw, block.raw, block.size);
	} else if (block.isid > 0) {
		r = read_end_bytes(dec, block.isid, block.end_ip, item->raw, sizeof(item->raw));
		item->size = r > 0 ? (uint8_t)r : 0;
	}
	dec->last_ip = block.end_ip;
	return 1;
}

/*
 * The trace has ended (pts_eos) while tracing was on: where the flow went from the last
 * instruction handed out, if libipt knows it (an indirect branch or a return whose TIP it
 * read, a conditional jump whose TNT bit it read, a direct branch), else 0.  Asked by
 * decoding one more block or instruction, which is not handed out: the trace does not show
 * it ran (libipt's ptxed ends the trace there too); the branch into it did.
 */
static uint64_t flow_target(struct auxcap_ipt_decoder *dec)
{
	if (dec->insn) {
		struct pt_insn insn;

		memset(&insn, 0, sizeof(insn));
		(void)pt_insn_next(dec->insn, &insn, sizeof(insn));
		return insn.iclass != ptic_error && insn.size ? insn.ip : 0;
	} else {
		struct pt_block block;

		memset(&block, 0, sizeof(block));
		(void)pt_blk_next(dec->blk, &block, sizeof(block));
		return block.ninsn ? block.ip : 0;
	}
}

/* Count the instructions of @item against the trace offset; true once the flow is stuck. */
static bool stalled(struct auxcap_ipt_decoder *dec, const struct auxcap_ipt_item *item)
{
	if (item->offset != dec->progress_offset) {
		dec->progress_offset = item->offset;
		dec->stalled_insns = 0;
	}
	dec->stalled_insns += item->ninsn;
	return dec->stalled_insns >
	       (dec->opts.max_stalled_insns ? dec->opts.max_stalled_insns : MAX_STALLED_INSNS);
}

/* Replace @item by a GAP (-ELOOP) and resume at the next PSB after the current offset. */
static int stall_gap(struct auxcap_ipt_decoder *dec, struct auxcap_ipt_item *item)
{
	uint64_t ip = item->ip, offset = item->offset;

	memset(item, 0, sizeof(*item));
	item->kind = AUXCAP_IPT_ITEM_GAP;
	item->offset = offset;
	item->ip = ip;
	item->err = -ELOOP;
	dec->gaps++;
	dec->stalled_insns = 0;
	dec->pending_err = 0; /* the flow is cut here anyway */
	dec->resync_at = find_psb(dec->buf, dec->len, offset + 1);
	dec->have_resync = dec->resync_at < dec->len;
	dec->state = dec->have_resync ? STATE_NEED_SYNC : STATE_DONE;
	return 1;
}

int auxcap_ipt_decoder_next(struct auxcap_ipt_decoder *dec, struct auxcap_ipt_item *item)
{
	struct pt_event ev;
	uint64_t offset;
	int r;

	if (!dec || !item)
		return -EINVAL;
	for (;;) {
		if (dec->state == STATE_DONE)
			return 0;
		if (dec->state == STATE_NEED_SYNC) {
			r = do_sync(dec, item);
			if (r < 0)
				return 0;
			if (r > 0)
				return 1;
			continue;
		}

		if (dec->pending_err) {
			/* the error after the block or instruction handed out last */
			r = dec->pending_err;
			dec->pending_err = 0;
			goto failed;
		}
		if (dec->status & pts_event_pending) {
			memset(&ev, 0, sizeof(ev));
			r = dec_event(dec, &ev);
			if (r < 0) {
				dec->state = STATE_NEED_SYNC;
				return make_gap(dec, item, r, dec->last_ip);
			}
			dec->status = r;
			memset(item, 0, sizeof(*item));
			if (dec_get_offset(dec, &offset) >= 0)
				item->offset = offset;
			fill_event(item, &ev);
			/* Tracing resumes (after an execve, or in another process where a CPU
			 * switched tasks), or the address space changes (PIP: with the kernel
			 * traced, a switch): the image in place from here may be another one. */
			if ((ev.type == ptev_enabled || ev.type == ptev_paging ||
			     ev.type == ptev_async_paging) &&
			    ev.has_tsc && dec->opts.image_at)
				dec_image_at(dec, ev.tsc);
			return 1;
		}
		if (dec->status & pts_eos) {
			/* The trace ends; say so if the flow was cut while tracing was on. */
			bool cut = !(dec->status & pts_ip_suppressed);

			dec->status = 0;
			dec->state = STATE_NEED_SYNC;
			if (cut) {
				uint64_t to = flow_target(dec);

				memset(item, 0, sizeof(*item));
				item->kind = AUXCAP_IPT_ITEM_EVENT;
				item->event = AUXCAP_IPT_EV_END_OF_TRACE;
				item->ip = dec->last_ip;
				if (to) {
					item->flags |= AUXCAP_IPT_F_FLOW_TO;
					item->payload = to;
				}
				if (dec_get_offset(dec, &offset) >= 0)
					item->offset = offset;
				return 1;
			}
			continue;
		}

		r = dec->insn ? next_insn(dec, item) : next_block(dec, item);
		if (r == 0)
			continue;
		if (r > 0) {
			if (dec_get_offset(dec, &offset) >= 0)
				item->offset = offset;
			if (stalled(dec, item))
				return stall_gap(dec, item);
			dec_time(dec, item);
			return 1;
		}
failed:
		if (r == -pte_nomem)
			return -ENOMEM;
		dec->state = STATE_NEED_SYNC;
		if (r == -pte_eos)
			continue;
		return make_gap(dec, item, r, dec->err_ip);
	}
}
