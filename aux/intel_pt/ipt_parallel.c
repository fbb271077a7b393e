/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parallel decoding of one Intel PT stream (see ipt.h, auxcap_ipt_decode_parallel()).
 *
 * Divisions: choosing the cut points; the pieces and their stitching; the worker threads and
 * the in-order hand-out.
 *
 * Why the cut is exact.  A PSB+ whose FUP gives the current IP lets a decoder start there with
 * nothing from before (libipt clears its return stack at a PSB, and the hardware does not
 * compress returns across one).  A decoder that runs through such a PSB mid-stream reports its
 * PSB+ as status-update events bound to that IP: the flow before them is the flow before the
 * PSB, the flow after them is what a decoder synchronized at the PSB produces.  So piece k is
 * decoded from its PSB on, over the rest of the stream (libipt reads a few packets ahead), and
 * stops at the first status-update event it reports at or past the next piece's PSB; piece
 * k + 1 reports that PSB+ itself.  A decode error is where this stops holding: the decoder
 * resynchronizes at the first PSB after where its read-ahead left it, possibly past the next
 * pieces' PSBs, which a decoder starting there would decode.  So from a piece's first GAP on,
 * the rest of the stream is decoded by one decoder, as the sequential decode does (a damaged
 * trace loses the speed-up after its first error, never exactness).
 * tests/aux/intel_pt/test_ipt_parallel.c checks the items are the sequential ones.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <intel-pt.h>

#include "ipt.h"
#include "ipt_internal.h"

#define DEFAULT_CHUNK (64u * 1024u)
#define MAX_THREADS 64u

/* ---- cut points ----------------------------------------------------------------------------- */

/* Offset of the first PSB (02 82 repeated 8 times) at or after @from, or @len if none. */
static uint64_t next_psb(const uint8_t *buf, size_t len, uint64_t from)
{
	static const uint8_t psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };

	while (from + sizeof(psb) <= len) {
		const uint8_t *p = memchr(buf + from, 0x02, len - sizeof(psb) + 1 - from);

		if (!p)
			break;
		if (!memcmp(p, psb, sizeof(psb)))
			return (uint64_t)(p - buf);
		from = (uint64_t)(p - buf) + 1;
	}
	return len;
}

/* Does the PSB+ at @off carry a FUP (tracing on, so the flow continues at a known IP)? */
static bool psb_has_fup(struct pt_packet_decoder *pkt, uint64_t off)
{
	struct pt_packet p;

	if (pt_pkt_sync_set(pkt, off) < 0)
		return false;
	for (int i = 0; i < 32; i++) {
		if (pt_pkt_next(pkt, &p, sizeof(p)) < 0)
			return false;
		if (p.type == ppt_fup)
			return true;
		if (p.type == ppt_psbend)
			return false;
	}
	return false;
}

ssize_t auxcap_ipt_split(const uint8_t *buf, size_t len, size_t chunk, uint64_t *ret_starts,
			 size_t max)
{
	struct pt_packet_decoder *pkt;
	struct pt_config config;
	size_t n = 0;
	uint64_t at;

	if ((!buf && len) || !ret_starts || !max)
		return -EINVAL;
	if (!chunk)
		chunk = DEFAULT_CHUNK;
	ret_starts[n++] = 0;
	if (!len)
		return (ssize_t)n;
	if (auxcap_ipt_config_init(&config, buf, len, NULL) < 0)
		return -EINVAL;
	pkt = pt_pkt_alloc_decoder(&config);
	if (!pkt)
		return -ENOMEM;
	for (at = chunk; n < max && at < len;) {
		uint64_t p = next_psb(buf, len, at);

		while (p < len && !psb_has_fup(pkt, p))
			p = next_psb(buf, len, p + 1);
		if (p >= len)
			break;
		ret_starts[n++] = p;
		at = p + chunk;
	}
	pt_pkt_free_decoder(pkt);
	return (ssize_t)n;
}

/* ---- pieces ------------------------------------------------------------------------------- */

/*
 * A block as a piece keeps it: a third of struct auxcap_ipt_item.  A trace byte makes about
 * one and a half blocks, so a piece of 64 KiB made 11 MB of whole items, written on one core
 * and read on another: that traffic, not the decoding, was what two threads spent their time
 * on.  Other items (events, gaps, instructions) are kept whole in a side array, as are the
 * bytes of blocks that end in a conditional jump; both are read back in order.
 */
struct cblock {
	uint64_t ip, end_ip, tsc;
	uint32_t offset; /* trace offset - the piece's start */
	uint32_t ninsn;
	uint32_t flags;
	uint8_t iclass, mode;
	uint8_t size; /* bytes in the next entry of the side array of bytes */
	uint8_t whole; /* not a block: the item is the next one of the side array of items */
};

/*
 * The buffers of a piece being decoded or handed out.  There are window + 1 of them, used in
 * turn: piece k takes buffer k % (window + 1), which piece k - window - 1 has left, since no
 * piece is decoded window or more pieces ahead of the one being handed out.
 */
struct pbuf {
	struct cblock *v;
	size_t nr, cap;
	uint8_t (*raw)[15];
	size_t nr_raw, cap_raw;
	struct auxcap_ipt_item *whole;
	size_t nr_whole, cap_whole;
};

struct piece {
	uint64_t start; /* PSB it starts at (0 for the first piece) */
	uint64_t stop;	/* the next piece's start, 0 for the last */
	int err;	/* a failure that ended the piece (not a GAP: those are items) */
	bool done;	/* decoded (under the lock) */
	bool gap;	/* a worker met a decode error in it: decoded again by the hand-out */
	bool rest;	/* decoded on to the end of the stream (after a decode error) */
};

static void *grow(void *p, size_t *cap, size_t size)
{
	/* a piece of n trace bytes holds about 1.5 n blocks */
	size_t n = *cap ? *cap * 2 : 16384;
	void *q = realloc(p, n * size);

	if (q)
		*cap = n;
	return q;
}

/* Keep @it in @b (of the piece starting at @start). */
static int pbuf_add(struct pbuf *b, uint64_t start, const struct auxcap_ipt_item *it)
{
	struct cblock *c;
	bool whole = it->kind != AUXCAP_IPT_ITEM_BLOCK || it->offset - start > UINT32_MAX ||
		     it->err || it->native || it->event || it->at || it->payload || it->payload2;

	if (b->nr == b->cap) {
		struct cblock *v = grow(b->v, &b->cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		b->v = v;
	}
	c = &b->v[b->nr];
	if (whole) {
		if (b->nr_whole == b->cap_whole) {
			struct auxcap_ipt_item *v = grow(b->whole, &b->cap_whole, sizeof(*v));

			if (!v)
				return -ENOMEM;
			b->whole = v;
		}
		b->whole[b->nr_whole++] = *it;
		c->whole = 1;
		b->nr++;
		return 0;
	}
	if (it->size) {
		if (b->nr_raw == b->cap_raw) {
			uint8_t(*v)[15] = grow(b->raw, &b->cap_raw, sizeof(*v));

			if (!v)
				return -ENOMEM;
			b->raw = v;
		}
		memcpy(b->raw[b->nr_raw++], it->raw, sizeof(it->raw));
	}
	c->ip = it->ip;
	c->end_ip = it->end_ip;
	c->tsc = it->tsc;
	c->offset = (uint32_t)(it->offset - start);
	c->ninsn = it->ninsn;
	c->flags = it->flags;
	c->iclass = (uint8_t)it->iclass;
	c->mode = (uint8_t)it->mode;
	c->size = it->size;
	c->whole = 0;
	b->nr++;
	return 0;
}

/* Hand the items of @b (of the piece starting at @start) to @fn(@ctx) in order. */
static int pbuf_hand_out(const struct pbuf *b, uint64_t start, auxcap_ipt_item_fn fn, void *ctx)
{
	size_t iraw = 0, iwhole = 0;
	struct auxcap_ipt_item it;
	int r = 0;

	for (size_t i = 0; r == 0 && i < b->nr; i++) {
		const struct cblock *c = &b->v[i];

		if (c->whole) {
			r = fn(ctx, &b->whole[iwhole++]);
			continue;
		}
		memset(&it, 0, sizeof(it));
		it.kind = AUXCAP_IPT_ITEM_BLOCK;
		it.flags = c->flags;
		it.offset = start + c->offset;
		it.tsc = c->tsc;
		it.ip = c->ip;
		it.end_ip = c->end_ip;
		it.ninsn = c->ninsn;
		it.iclass = (enum auxcap_ipt_iclass)c->iclass;
		it.mode = (enum auxcap_ipt_exec_mode)c->mode;
		it.size = c->size;
		if (c->size)
			memcpy(it.raw, b->raw[iraw++], sizeof(it.raw));
		r = fn(ctx, &it);
	}
	return r;
}

static void pbuf_free(struct pbuf *b)
{
	free(b->v);
	free(b->raw);
	free(b->whole);
}

/* Is @it the first status update of the next piece's PSB+: where @pc stops? */
static bool piece_ends_at(const struct piece *pc, const struct auxcap_ipt_item *it)
{
	return pc->stop && it->kind == AUXCAP_IPT_ITEM_EVENT &&
	       (it->flags & AUXCAP_IPT_F_STATUS_UPDATE) && it->offset >= pc->stop;
}

/*
 * Decode @pc from its PSB up to the status updates of the next piece's PSB+: into @b (@fn
 * NULL), or to @fn(@ctx) as they come.  *@dec is the thread's decoder over @image, made on
 * first use and started over at each piece after that (its caches stay warm).
 */
static int piece_decode(struct piece *pc, struct auxcap_ipt_decoder **dec, const uint8_t *buf,
			size_t len, struct auxcap_ipt_image *image,
			const struct auxcap_ipt_params *params,
			const struct auxcap_ipt_decoder_opts *dopts, struct pbuf *b,
			auxcap_ipt_item_fn fn, void *ctx)
{
	struct auxcap_ipt_item it;
	int r;

	if (b)
		b->nr = b->nr_raw = b->nr_whole = 0;
	if (*dec && pc->start) {
		r = auxcap_ipt_decoder_restart(*dec, pc->start);
	} else {
		struct auxcap_ipt_decoder_opts o = *dopts;

		auxcap_ipt_decoder_free(*dec);
		*dec = NULL;
		o.sz = sizeof(o);
		o.start = pc->start;
		r = auxcap_ipt_decoder_new(buf, len, image, params, &o, dec);
	}
	if (r < 0)
		return r;
	for (;;) {
		r = auxcap_ipt_decoder_next(*dec, &it);
		if (r <= 0)
			break;
		if (!pc->rest && piece_ends_at(pc, &it)) {
			r = 0;
			break;
		}
		/*
		 * After a decode error the decoder resynchronizes at the first PSB after where its
		 * read-ahead left it, which can be past the next pieces' PSBs: those pieces would
		 * decode flow the sequential decoder skips.  From a GAP on, the flow is decoded
		 * as one decoder does, to the end of the stream: by the hand-out (a worker drops
		 * what it kept of the piece).
		 */
		if (it.kind == AUXCAP_IPT_ITEM_GAP && !pc->rest) {
			if (!fn) {
				pc->gap = true;
				r = 0;
				break;
			}
			pc->rest = true;
		}
		r = fn ? fn(ctx, &it) : pbuf_add(b, pc->start, &it);
		if (r < 0)
			break;
	}
	return r;
}

/* ---- workers and hand-out ------------------------------------------------------------------- */

struct par {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a piece is done, or one was handed out */
	const uint8_t *buf;
	size_t len;
	struct auxcap_ipt_image *image; /* borrowed: cloned per worker */
	const struct auxcap_ipt_params *params;
	struct auxcap_ipt_decoder_opts dopts;
	struct piece *pieces;
	size_t nr;
	struct pbuf *bufs; /* window + 1 */
	size_t next;	   /* next piece a worker takes */
	size_t consumed;   /* pieces handed out */
	size_t window;	   /* pieces decoded ahead of the hand-out, at most */
	bool stop;	   /* the caller stopped, or a worker failed to start */
};

static struct pbuf *piece_buf(struct par *p, size_t k)
{
	return &p->bufs[k % (p->window + 1)];
}

static void *worker(void *arg)
{
	struct par *p = arg;
	struct auxcap_ipt_image *mine = NULL;
	struct auxcap_ipt_decoder *dec = NULL;
	int r = auxcap_ipt_image_clone(p->image, &mine);

	for (;;) {
		struct piece *pc;
		size_t k;

		pthread_mutex_lock(&p->lock);
		while (!p->stop && p->next < p->nr && p->next >= p->consumed + p->window)
			pthread_cond_wait(&p->cond, &p->lock);
		if (p->stop || p->next >= p->nr) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		k = p->next++;
		pthread_mutex_unlock(&p->lock);

		pc = &p->pieces[k];
		if (r == 0)
			pc->err = piece_decode(pc, &dec, p->buf, p->len, mine, p->params, &p->dopts,
					       piece_buf(p, k), NULL, NULL);
		else
			pc->err = r; /* no image of our own: the piece fails, the caller says so */

		pthread_mutex_lock(&p->lock);
		pc->done = true;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
	}
	auxcap_ipt_decoder_free(dec);
	auxcap_ipt_image_free(mine);
	return NULL;
}

/* One thread: one decoder over the whole stream, its items straight to @fn. */
static int decode_here(const uint8_t *buf, size_t len, struct auxcap_ipt_image *image,
		       const struct auxcap_ipt_params *params,
		       const struct auxcap_ipt_decoder_opts *dopts, auxcap_ipt_item_fn fn, void *ctx)
{
	struct auxcap_ipt_decoder *dec = NULL;
	struct auxcap_ipt_item it;
	int r;

	r = auxcap_ipt_decoder_new(buf, len, image, params, dopts, &dec);
	if (r < 0)
		return r;
	while ((r = auxcap_ipt_decoder_next(dec, &it)) == 1) {
		r = fn(ctx, &it);
		if (r < 0)
			break;
	}
	auxcap_ipt_decoder_free(dec);
	return r < 0 ? r : 0;
}

static unsigned int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned int)n : 1;
}

int auxcap_ipt_decode_parallel(const uint8_t *buf, size_t len, struct auxcap_ipt_image *image,
			       const struct auxcap_ipt_params *params,
			       const struct auxcap_ipt_parallel_opts *opts, auxcap_ipt_item_fn fn,
			       void *ctx)
{
	struct par p;
	pthread_t th[MAX_THREADS];
	struct auxcap_ipt_decoder *dec = NULL; /* the calling thread's */
	unsigned int nth, started = 0;
	uint64_t *starts = NULL;
	size_t chunk, max;
	ssize_t n;
	int r = 0;

	if ((!buf && len) || !image || !fn || (opts && opts->sz < sizeof(*opts)) ||
	    auxcap_ipt_params_valid(params) < 0)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	chunk = opts && opts->chunk ? opts->chunk : DEFAULT_CHUNK;
	nth = opts && opts->threads ? opts->threads : online_cpus();
	if (nth > MAX_THREADS)
		nth = MAX_THREADS;
	if (opts)
		p.dopts = opts->dec;
	p.dopts.sz = sizeof(p.dopts);
	p.dopts.start = 0;
	if (nth == 1)
		return decode_here(buf, len, image, params, &p.dopts, fn, ctx);

	max = len / chunk + 2;
	starts = calloc(max, sizeof(*starts));
	if (!starts)
		return -ENOMEM;
	n = auxcap_ipt_split(buf, len, chunk, starts, max);
	if (n < 0) {
		free(starts);
		return (int)n;
	}
	/* the calling thread decodes too: nth - 1 workers, pieces at most nth + 1 ahead */
	p.window = nth + 1;
	p.pieces = calloc((size_t)n, sizeof(*p.pieces));
	p.bufs = calloc(p.window + 1, sizeof(*p.bufs));
	if (!p.pieces || !p.bufs) {
		free(starts);
		free(p.pieces);
		free(p.bufs);
		return -ENOMEM;
	}
	for (ssize_t k = 0; k < n; k++) {
		p.pieces[k].start = starts[k];
		p.pieces[k].stop = k + 1 < n ? starts[k + 1] : 0;
	}
	free(starts);
	p.nr = (size_t)n;
	p.buf = buf;
	p.len = len;
	p.image = image;
	p.params = params;
	nth = nth - 1 < p.nr ? nth - 1 : (unsigned int)p.nr;
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.cond, NULL);
	for (; started < nth; started++)
		if (pthread_create(&th[started], NULL, worker, &p))
			break; /* fewer workers: the calling thread decodes what they leave */

	/*
	 * Hand the pieces out in order.  The piece at the head that no worker has taken yet is
	 * decoded here, its items going straight to @fn; the others are handed out of their
	 * buffers as they complete.
	 */
	for (size_t k = 0; r == 0 && k < p.nr; k++) {
		struct piece *pc = &p.pieces[k];
		bool mine = false;

		pthread_mutex_lock(&p.lock);
		if (p.next == k) {
			p.next++;
			mine = true;
		}
		while (!mine && !pc->done) {
			/* A worker has it: rather than wait, decode a later piece like a worker. */
			if (p.next < p.nr && p.next < k + p.window) {
				size_t a = p.next++;
				struct piece *ahead = &p.pieces[a];

				pthread_mutex_unlock(&p.lock);
				ahead->err = piece_decode(ahead, &dec, buf, len, image, params,
							  &p.dopts, piece_buf(&p, a), NULL, NULL);
				pthread_mutex_lock(&p.lock);
				ahead->done = true;
				continue;
			}
			pthread_cond_wait(&p.cond, &p.lock);
		}
		pthread_mutex_unlock(&p.lock);
		if (mine || pc->gap) {
			r = piece_decode(pc, &dec, buf, len, image, params, &p.dopts, NULL, fn, ctx);
		} else {
			r = pbuf_hand_out(piece_buf(&p, k), pc->start, fn, ctx);
			if (r == 0 && pc->err < 0)
				r = pc->err;
		}
		pthread_mutex_lock(&p.lock);
		p.consumed = k + 1;
		pthread_cond_broadcast(&p.cond);
		pthread_mutex_unlock(&p.lock);
		if (pc->rest)
			break; /* the rest of the stream went out with it */
	}

	pthread_mutex_lock(&p.lock);
	p.stop = true;
	pthread_cond_broadcast(&p.cond);
	pthread_mutex_unlock(&p.lock);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	auxcap_ipt_decoder_free(dec);
	for (size_t i = 0; i <= p.window; i++)
		pbuf_free(&p.bufs[i]);
	free(p.bufs);
	free(p.pieces);
	pthread_cond_destroy(&p.cond);
	pthread_mutex_destroy(&p.lock);
	return r < 0 ? r : 0;
}
