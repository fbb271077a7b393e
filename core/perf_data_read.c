/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The perf.data reader (spec/perf-data-and-perf-tool.md section 1).
 *
 * A regular file is mapped read-only and walked in place: records and AUXTRACE payloads are
 * borrowed pointers into the mapping.  Anything else (a pipe) is read record by record into a
 * buffer that grows with the data actually received, so a lying size field cannot make it
 * allocate more than the stream delivers.  A pipe-format stream saved to a file is mapped too.
 *
 * Every offset and size from the file is checked against the mapping (or the stream) before
 * use; a bad one yields -EBADMSG and a message naming the file offset.
 *
 * Recovery: when the header is not final (data.size 0, a data section past the end of the
 * file, or no features with bytes after the data section) the data section is read up to the
 * last complete record and the reader says so (info.recovered).
 *
 * Divisions: errors, evsels and ids, the file header, features, records, the two sources,
 * open/close and accessors.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "auxcap/perf_data.h"
#include "perf_data_int.h"

#define DEFAULT_MAX_PAYLOAD (1ULL << 30) /* pipe mode: largest AUXTRACE payload held */
#define PIPE_CHUNK	    (1u << 20)	 /* pipe mode: buffer growth step for payloads */
#define EVENT_UPDATE_NAME   2		 /* PERF_EVENT_UPDATE__NAME */

struct rsel {
	struct auxcap_perf_evsel pub; /* what users see */
	size_t index;		      /* position in the reader's list */
	struct perf_event_attr attr;  /* owned copy behind pub.attr */
	uint64_t *ids;		      /* owned */
	char *name;		      /* owned */
	char *old_name;		      /* owned: the name before a renaming, kept till close (a
				       * caller may hold pub.name) */
};

struct idmap_ent {
	uint64_t id;
	struct rsel *sel; /* borrowed from the reader's evsel list */
};

struct auxcap_perf_reader {
	int fd;		      /* input */
	bool own_fd;	      /* close @fd at the end */
	unsigned int flags;   /* enum auxcap_perf_read_flags */
	uint64_t max_payload; /* pipe mode, bytes */
	struct auxcap_perf_file_info info;
	const unsigned char *map; /* owned mapping of a regular file, or NULL */
	size_t map_len;		  /* bytes mapped */
	uint64_t start;		  /* offset of the first record */
	uint64_t pos;		  /* offset of the next record */
	uint64_t end;		  /* end of the record stream in the mapping */
	bool tolerate_trunc;	  /* a cut last record ends the stream (recovery, pipes) */
	bool done;		  /* the stream ended */
	bool index_ready;	  /* the AUXTRACE index was checked or built */
	struct rsel **sels;	  /* owned array of owned evsels */
	size_t nr_sels;
	size_t nr_header_sels;	  /* evsels from the file header's attrs section */
	/*
	 * Evsels known at the current stream position: all of them, except after a rewind,
	 * where those of HEADER_ATTR records come back as the walk meets their records again
	 * (they stay allocated: pointers handed out remain valid until close).
	 */
	size_t nr_visible_sels;
	uint64_t attrs_applied;	  /* HEADER_ATTR records before this stream offset were applied */
	struct idmap_ent *idmap; /* owned, sorted by id */
	size_t nr_idmap;
	struct {
		uint64_t offset, size;
	} feat_sec[AUXCAP_PERF_FEAT_BITS]; /* file mode feature sections */
	struct pd_feat_store fs;
	unsigned char *pbuf; /* pipe mode: current record (and payload) */
	size_t pcap;	     /* bytes allocated at @pbuf */
	char err[256];
};

/* --- errors ----------------------------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static int bad(struct auxcap_perf_reader *r, uint64_t off,
						     const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->err, sizeof(r->err), "%s at offset %llu", msg, (unsigned long long)off);
	return -EBADMSG;
}

/* --- evsels and ids --------------------------------------------------------------------- */

static int idmap_cmp(const void *a, const void *b)
{
	const struct idmap_ent *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static struct rsel *find_id(const struct auxcap_perf_reader *r, uint64_t id)
{
	struct idmap_ent key = { id, NULL }, *e;

	if (!r->nr_idmap)
		return NULL; /* bsearch() must not see a NULL array */
	e = bsearch(&key, r->idmap, r->nr_idmap, sizeof(key), idmap_cmp);
	return e && e->sel->index < r->nr_visible_sels ? e->sel : NULL;
}

/* Add an evsel from @attr_bytes (@attr_len bytes, at most 128 used) and its @nr_ids ids. */
static int add_sel(struct auxcap_perf_reader *r, const void *attr_bytes, size_t attr_len,
		   const void *ids, size_t nr_ids, uint64_t off)
{
	struct rsel *s, **nv;
	struct idmap_ent *nm;

	if (nr_ids > SIZE_MAX / 8 - 1 || r->nr_sels >= 65536)
		return bad(r, off, "too many events or ids");
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(&s->attr, attr_bytes, attr_len < sizeof(s->attr) ? attr_len : sizeof(s->attr));
	s->ids = malloc((nr_ids ? nr_ids : 1) * 8);
	nv = realloc(r->sels, (r->nr_sels + 1) * sizeof(struct rsel *));
	if (nv)
		r->sels = nv;
	nm = realloc(r->idmap, (r->nr_idmap + nr_ids + 1) * sizeof(*nm));
	if (nm)
		r->idmap = nm;
	if (!s->ids || !nv || !nm) {
		free(s->ids);
		free(s);
		return -ENOMEM;
	}
	if (nr_ids)
		memcpy(s->ids, ids, nr_ids * 8);
	s->pub.attr = &s->attr;
	s->pub.ids = s->ids;
	s->pub.nr_ids = nr_ids;
	auxcap_sample_layout_from_attr(&s->attr, &s->pub.layout);
	for (size_t i = 0; i < nr_ids; i++) {
		if (find_id(r, s->ids[i])) {
			free(s->ids);
			free(s);
			return bad(r, off, "event id %llu used twice",
				   (unsigned long long)auxcap_get_u64(ids, i));
		}
		r->idmap[r->nr_idmap + i] = (struct idmap_ent){ s->ids[i], s };
	}
	/* Only now commit: the duplicate check above looked at the old map. */
	r->nr_idmap += nr_ids;
	qsort(r->idmap, r->nr_idmap, sizeof(*r->idmap), idmap_cmp);
	for (size_t i = 1; i < r->nr_idmap; i++) {
		if (r->idmap[i].id == r->idmap[i - 1].id) {
			/* A repeat inside @ids itself: undo. */
			size_t k = 0;

			for (size_t j = 0; j < r->nr_idmap; j++)
				if (r->idmap[j].sel != s)
					r->idmap[k++] = r->idmap[j];
			r->nr_idmap = k;
			free(s->ids);
			free(s);
			return bad(r, off, "event id %llu used twice",
				   (unsigned long long)r->idmap[i].id);
		}
	}
	s->index = r->nr_sels;
	r->sels[r->nr_sels++] = s;
	r->nr_visible_sels = r->nr_sels;
	return 0;
}

static void set_name(struct rsel *s, const char *name)
{
	char *dup;

	if (!s || !name || !*name || (s->name && !strcmp(s->name, name)))
		return; /* (a stream read again names its events again: the pointer stays) */
	dup = strdup(name);
	if (!dup)
		return; /* names are cosmetic */
	free(s->old_name);
	s->old_name = s->name;
	s->name = dup;
	s->pub.name = dup;
}

static void event_desc_name(void *ctx, const uint64_t *ids, size_t nr_ids, const char *name)
{
	struct auxcap_perf_reader *r = ctx;

	if (nr_ids)
		set_name(find_id(r, ids[0]), name);
}

/* The evsel whose layout decodes the kernel record at @buf, or NULL if unknown. */
static struct rsel *pick_sel(struct auxcap_perf_reader *r, const void *buf, size_t len)
{
	const struct auxcap_sample_layout *l0;
	struct auxcap_record rec;
	uint64_t id;

	if (r->nr_visible_sels == 1)
		return r->sels[0];
	l0 = &r->sels[0]->pub.layout;
	if (l0->sample_type & PERF_SAMPLE_IDENTIFIER) {
		if (auxcap_record_peek_id(l0, buf, len, &id) < 0)
			return NULL;
		return find_id(r, id);
	}
	if (!(l0->sample_type & PERF_SAMPLE_ID) || auxcap_record_parse(l0, buf, len, &rec) < 0)
		return NULL;
	if (rec.type == PERF_RECORD_SAMPLE)
		return find_id(r, rec.u.sample.id);
	return rec.has_sample_id ? find_id(r, rec.sid.id) : NULL;
}

/* --- the file header -------------------------------------------------------------------- */

static int read_attrs(struct auxcap_perf_reader *r, uint64_t attr_size, uint64_t off, uint64_t size)
{
	uint64_t nr, pos = off, end = off + size;

	if (attr_size < 64 + 16 || attr_size > 4096)
		return bad(r, 16, "attr_size %llu is not a perf_event_attr entry size",
			   (unsigned long long)attr_size);
	if (off > r->map_len || size > r->map_len - off)
		return bad(r, 24, "attrs section [%llu, +%llu) outside the file (%zu bytes)",
			   (unsigned long long)off, (unsigned long long)size, r->map_len);
	nr = size / attr_size;
	for (uint64_t i = 0; i < nr; i++) {
		uint32_t asz;
		uint64_t ids_off, ids_size;
		int ret;

		if (end - pos < 64 + 16)
			return bad(r, pos, "attr %llu truncated", (unsigned long long)i);
		memcpy(&asz, r->map + pos + 4, 4);
		if (asz == 0)
			asz = 64;
		if (asz < 64 || asz > end - pos - 16)
			return bad(r, pos + 4, "attr %llu has size %u", (unsigned long long)i, asz);
		memcpy(&ids_off, r->map + pos + asz, 8);
		memcpy(&ids_size, r->map + pos + asz + 8, 8);
		if (ids_off > r->map_len || ids_size > r->map_len - ids_off || (ids_size & 7))
			return bad(r, pos + asz, "ids of attr %llu [%llu, +%llu) outside the file",
				   (unsigned long long)i, (unsigned long long)ids_off,
				   (unsigned long long)ids_size);
		ret = add_sel(r, r->map + pos, asz, r->map + ids_off, ids_size / 8, pos);
		if (ret < 0)
			return ret;
		pos += asz + 16;
	}
	return 0;
}

/* --- features --------------------------------------------------------------------------- */

static int read_features(struct auxcap_perf_reader *r, const uint64_t bits[4], uint64_t table)
{
	unsigned int n = 0;
	int ret;

	for (unsigned int f = 0; f < AUXCAP_PERF_FEAT_BITS; f++) {
		uint64_t d[2];

		if (!(bits[f / 64] & (1ULL << (f % 64))))
			continue;
		if (table + (uint64_t)n * 16 + 16 > r->map_len) {
			r->info.features_lost = true;
			return 0;
		}
		memcpy(d, r->map + table + (uint64_t)n * 16, 16);
		n++;
		if (d[0] > r->map_len || d[1] > r->map_len - d[0]) {
			if (d[0] <= UINT64_MAX - d[1] && d[0] >= table) {
				/* Points past the end: the file was cut. */
				r->info.features_lost = true;
				return 0;
			}
			return bad(r, table + (uint64_t)(n - 1) * 16,
				   "feature %u section outside the file", f);
		}
		r->feat_sec[f].offset = d[0];
		r->feat_sec[f].size = d[1];
		ret = pd_feat_parse(&r->fs, f, r->map + d[0], d[1], d[0], event_desc_name, r,
				    r->err, sizeof(r->err));
		if (ret < 0)
			return ret;
	}
	for (unsigned int i = 0; i < 4; i++)
		r->fs.f.present[i] = bits[i];
	return 0;
}

static int read_file_header(struct auxcap_perf_reader *r)
{
	uint64_t h[AUXCAP_PERF_HEADER_SIZE / 8];
	uint64_t data_end, fsize = r->map_len;
	bool no_feats;
	int ret;

	memcpy(h, r->map, 16);
	if (h[1] == AUXCAP_PERF_PIPE_HEADER_SIZE) {
		/* A pipe-mode stream saved to a file. */
		r->info.pipe = true;
		r->start = r->pos = AUXCAP_PERF_PIPE_HEADER_SIZE;
		r->end = fsize;
		r->tolerate_trunc = true;
		return 0;
	}
	if (h[1] != AUXCAP_PERF_HEADER_SIZE)
		return bad(r, 8, "header size %llu, expected %d (or 16 for a pipe stream)",
			   (unsigned long long)h[1], AUXCAP_PERF_HEADER_SIZE);
	if (fsize < AUXCAP_PERF_HEADER_SIZE)
		return bad(r, fsize, "file header truncated");
	memcpy(h, r->map, sizeof(h));
	r->info.attr_size = h[2];
	r->info.attrs_offset = h[3];
	r->info.attrs_size = h[4];
	r->info.data_offset = h[5];
	r->info.data_size = h[6];
	ret = read_attrs(r, h[2], h[3], h[4]);
	if (ret < 0)
		return ret;
	r->nr_header_sels = r->nr_sels;
	if (!r->nr_sels)
		return bad(r, 32, "no events in the attrs section");
	if (h[5] > fsize || h[5] < AUXCAP_PERF_HEADER_SIZE)
		return bad(r, 40, "data offset %llu outside the file (%llu bytes)",
			   (unsigned long long)h[5], (unsigned long long)fsize);
	r->start = r->pos = h[5];
	no_feats = !(h[9] | h[10] | h[11] | h[12]);
	data_end = h[5] + h[6];
	if (h[6] == 0 && !no_feats) {
		/*
		 * A final header of an empty capture, or a provisional one of a writer that sets
		 * feature bits early: it is final only if a sound feature table follows.
		 */
		r->end = data_end;
		ret = read_features(r, &h[9], data_end);
		if (ret == 0 && !r->info.features_lost)
			return 0;
		pd_feat_store_fini(&r->fs);
		memset(r->feat_sec, 0, sizeof(r->feat_sec));
		r->err[0] = '\0';
	}
	if (h[6] == 0 || h[6] > fsize - h[5] || (no_feats && fsize > data_end)) {
		/* Not finalized: read what is there. */
		r->info.recovered = true;
		r->tolerate_trunc = true;
		r->end = fsize;
		r->info.features_lost = !no_feats || h[6] > fsize - h[5];
		return 0;
	}
	r->end = data_end;
	ret = read_features(r, &h[9], data_end);
	if (ret < 0)
		return ret;
	if (r->info.features_lost) {
		r->info.recovered = true;
		r->info.recovered_end = data_end;
	}
	return 0;
}

/* --- records ---------------------------------------------------------------------------- */

/* Header fields of @ev->rec from the record at @buf (the rest of rec is not touched). */
static void set_header(struct auxcap_perf_event *ev, const unsigned char *buf, uint64_t off)
{
	struct perf_event_header h;

	memcpy(&h, buf, sizeof(h));
	ev->offset = off;
	ev->rec.type = h.type;
	ev->rec.misc = h.misc;
	ev->rec.size = h.size;
	ev->rec.data = buf;
	ev->rec.has_sample_id = false;
}

static int decode_kernel(struct auxcap_perf_reader *r, const unsigned char *buf, size_t len,
			 uint64_t off, struct auxcap_perf_event *ret)
{
	struct perf_event_header h;
	struct rsel *s;
	int err;

	memcpy(&h, buf, sizeof(h));
	if (!r->nr_visible_sels)
		return bad(r, off, "kernel record (type %u) before any event attr", h.type);
	s = pick_sel(r, buf, len);
	if (!(r->flags & AUXCAP_PERF_READ_RAW)) {
		/* Parses into ret->rec only on success. */
		err = auxcap_record_parse(s ? &s->pub.layout : &r->sels[0]->pub.layout, buf, len,
					  &ret->rec);
		if (err < 0) {
			const char *name = auxcap_record_type_name(h.type);

			if (name)
				return bad(r, off, "malformed %s record (size %u)", name, h.size);
			return bad(r, off, "malformed record type %u (size %u)", h.type, h.size);
		}
	}
	if (r->flags & AUXCAP_PERF_READ_RAW)
		set_header(ret, buf, off);
	ret->offset = off;
	ret->evsel = s ? &s->pub : NULL;
	return 0;
}

/* AUXTRACE_ERROR of @len >= 40 bytes: fmt 0 has no time, fmt >= 1 has it before msg. */
static void decode_auxtrace_error(const unsigned char *buf, size_t len,
				  struct auxcap_perf_auxtrace_error *e)
{
	uint32_t u[6];
	size_t msg_off = 40, n;

	memcpy(u, buf + 8, sizeof(u));
	e->type = u[0];
	e->code = u[1];
	e->cpu = u[2];
	e->pid = u[3];
	e->tid = u[4];
	e->fmt = u[5];
	memcpy(&e->ip, buf + 32, 8);
	if (e->fmt >= 1 && len >= 48) {
		memcpy(&e->time, buf + 40, 8);
		msg_off = 48;
	}
	n = len - msg_off < sizeof(e->msg) - 1 ? len - msg_off : sizeof(e->msg) - 1;
	memcpy(e->msg, buf + msg_off, n);
	e->msg[n] = '\0';
}

/* Decode a user-type record of @len bytes (header included); payloads are handled by callers. */
static int decode_user(struct auxcap_perf_reader *r, const unsigned char *buf, size_t len,
		       uint64_t off, struct auxcap_perf_event *ev)
{
	uint32_t type = ev->rec.type;
	int ret;

	switch (type) {
	case AUXCAP_PERF_RECORD_AUXTRACE:
		if (len < AUXCAP_PERF_AUXTRACE_SIZE)
			return bad(r, off, "AUXTRACE record of %zu bytes", len);
		memcpy(&ev->u.auxtrace.size, buf + 8, 8);
		memcpy(&ev->u.auxtrace.offset, buf + 16, 8);
		memcpy(&ev->u.auxtrace.reference, buf + 24, 8);
		memcpy(&ev->u.auxtrace.idx, buf + 32, 4);
		memcpy(&ev->u.auxtrace.tid, buf + 36, 4);
		memcpy(&ev->u.auxtrace.cpu, buf + 40, 4);
		break;
	case AUXCAP_PERF_RECORD_AUXTRACE_INFO:
		if (len < 16)
			return bad(r, off, "AUXTRACE_INFO record of %zu bytes", len);
		memcpy(&ev->u.auxtrace_info.type, buf + 8, 4);
		ev->u.auxtrace_info.nr = (len - 16) / 8;
		ev->u.auxtrace_info.priv = buf + 16;
		break;
	case AUXCAP_PERF_RECORD_TIME_CONV:
		if (len < 32)
			return bad(r, off, "TIME_CONV record of %zu bytes", len);
		memcpy(&ev->u.time_conv.time_shift, buf + 8, 8);
		memcpy(&ev->u.time_conv.time_mult, buf + 16, 8);
		memcpy(&ev->u.time_conv.time_zero, buf + 24, 8);
		if (len >= 50) {
			memcpy(&ev->u.time_conv.time_cycles, buf + 32, 8);
			memcpy(&ev->u.time_conv.time_mask, buf + 40, 8);
			ev->u.time_conv.cap_user_time_zero = buf[48];
			ev->u.time_conv.cap_user_time_short = buf[49];
		}
		break;
	case AUXCAP_PERF_RECORD_AUXTRACE_ERROR:
		if (len < 40)
			return bad(r, off, "AUXTRACE_ERROR record of %zu bytes", len);
		decode_auxtrace_error(buf, len, &ev->u.auxtrace_error);
		break;
	case AUXCAP_PERF_RECORD_ID_INDEX: {
		uint64_t nr;

		if (len < 16)
			return bad(r, off, "ID_INDEX record of %zu bytes", len);
		memcpy(&nr, buf + 8, 8);
		if (nr > (len - 16) / 32)
			return bad(r, off, "ID_INDEX says %llu entries, the record holds %zu",
				   (unsigned long long)nr, (len - 16) / 32);
		ev->u.id_index.nr = nr;
		ev->u.id_index.entries = buf + 16;
		break;
	}
	case AUXCAP_PERF_RECORD_HEADER_ATTR: {
		uint32_t asz;

		if (len < 8 + 64)
			return bad(r, off, "HEADER_ATTR record of %zu bytes", len);
		memcpy(&asz, buf + 8 + 4, 4);
		if (asz == 0)
			asz = 64;
		if (asz < 64 || asz > len - 8)
			return bad(r, off, "HEADER_ATTR with attr size %u in %zu bytes", asz, len);
		if (off < r->attrs_applied) {
			/* Read again after a rewind: its evsel exists already, show it again. */
			if (r->nr_visible_sels < r->nr_sels)
				r->nr_visible_sels++;
			ev->evsel = &r->sels[r->nr_visible_sels - 1]->pub;
			break;
		}
		ret = add_sel(r, buf + 8, asz, buf + 8 + asz, (len - 8 - asz) / 8, off);
		if (ret < 0)
			return ret;
		r->attrs_applied = off + 1;
		ev->evsel = &r->sels[r->nr_sels - 1]->pub;
		break;
	}
	case AUXCAP_PERF_RECORD_HEADER_FEATURE: {
		uint64_t feat;

		if (len < 16)
			return bad(r, off, "HEADER_FEATURE record of %zu bytes", len);
		memcpy(&feat, buf + 8, 8);
		ev->u.feature.feat = feat;
		if (feat == 0 || feat >= AUXCAP_PERF_FEAT_BITS)
			break;
		ret = pd_feat_parse(&r->fs, (unsigned int)feat, buf + 16, len - 16, off + 16,
				    event_desc_name, r, r->err, sizeof(r->err));
		if (ret < 0)
			return ret;
		break;
	}
	case AUXCAP_PERF_RECORD_HEADER_BUILD_ID:
		ret = pd_feat_parse(&r->fs, AUXCAP_PERF_FEAT_BUILD_ID, buf, len, off, NULL, NULL,
				    r->err, sizeof(r->err));
		if (ret < 0)
			return ret;
		break;
	case AUXCAP_PERF_RECORD_EVENT_UPDATE: {
		uint64_t t, id;

		if (len < 24)
			return bad(r, off, "EVENT_UPDATE record of %zu bytes", len);
		memcpy(&t, buf + 8, 8);
		memcpy(&id, buf + 16, 8);
		if (t == EVENT_UPDATE_NAME && len > 24 && memchr(buf + 24, '\0', len - 24))
			set_name(find_id(r, id), (const char *)buf + 24);
		break;
	}
	default:
		break;
	}
	return 0;
}

/* Bytes that follow the record outside header.size (AUXTRACE data, TRACING_DATA). */
static int trailing_payload(struct auxcap_perf_reader *r, const unsigned char *buf, size_t len,
			    uint64_t off, uint32_t type, uint64_t *ret)
{
	uint32_t sz32;

	*ret = 0;
	if (type == AUXCAP_PERF_RECORD_AUXTRACE) {
		if (len < AUXCAP_PERF_AUXTRACE_SIZE)
			return bad(r, off, "AUXTRACE record of %zu bytes", len);
		memcpy(ret, buf + 8, 8);
	} else if (type == AUXCAP_PERF_RECORD_HEADER_TRACING_DATA) {
		if (len < 16)
			return bad(r, off, "TRACING_DATA record of %zu bytes", len);
		memcpy(&sz32, buf + 8, 4);
		*ret = sz32;
	}
	return 0;
}

/*
 * Decode the record at @buf into @ret, which is written only on success.  Kernel records fill
 * @ret->rec (header fields only with AUXCAP_PERF_READ_RAW); user records fill the header
 * fields of @ret->rec and @ret->u.
 */
static int decode(struct auxcap_perf_reader *r, const unsigned char *buf, size_t len, uint64_t off,
		  struct auxcap_perf_event *ret)
{
	struct auxcap_perf_event ev;
	uint32_t type;
	int err;

	memcpy(&type, buf, sizeof(type));
	if (type < AUXCAP_PERF_RECORD_HEADER_ATTR)
		return decode_kernel(r, buf, len, off, ret);
	set_header(&ev, buf, off);
	ev.evsel = NULL;
	memset(&ev.u, 0, sizeof(ev.u));
	err = decode_user(r, buf, len, off, &ev);
	if (err < 0)
		return err;
	set_header(ret, buf, off);
	ret->evsel = ev.evsel;
	ret->u = ev.u;
	return 0;
}

/* --- the two sources -------------------------------------------------------------------- */

/* End of the stream at @off: a cut record is tolerated (and reported) or an error. */
static int cut(struct auxcap_perf_reader *r, uint64_t off, const char *what)
{
	if (r->tolerate_trunc) {
		r->info.recovered = true;
		r->info.recovered_end = off;
		r->done = true;
		return 0;
	}
	return bad(r, off, "%s", what);
}

/* A pipe's TRACING_DATA record: its payload (@len bytes at @p) is the feature's section. */
static int tracing_data(struct auxcap_perf_reader *r, const unsigned char *p, uint64_t len,
			uint64_t off)
{
	return pd_feat_parse(&r->fs, AUXCAP_PERF_FEAT_TRACING_DATA, p, (size_t)len, off, NULL,
			     NULL, r->err, sizeof(r->err));
}

static int next_mapped(struct auxcap_perf_reader *r, struct auxcap_perf_event *ret)
{
	struct perf_event_header h;
	uint64_t off = r->pos, left = r->end - r->pos, extra;
	int ret_code;

	if (left == 0) {
		if (r->tolerate_trunc) {
			r->info.recovered_end = off;
			r->done = true;
		}
		return 0;
	}
	if (left < sizeof(h))
		return cut(r, off, "truncated record header");
	memcpy(&h, r->map + off, sizeof(h));
	if (h.size < sizeof(h) || h.type == 0)
		return cut(r, off, "record header with size < 8 or type 0");
	if (h.size > left)
		return cut(r, off, "record runs past the end of the data section");
	ret_code = trailing_payload(r, r->map + off, h.size, off, h.type, &extra);
	if (ret_code < 0)
		return r->tolerate_trunc ? cut(r, off, r->err) : ret_code;
	if (extra > left - h.size)
		return cut(r, off, "AUXTRACE payload runs past the end of the data section");
	ret_code = decode(r, r->map + off, h.size, off, ret);
	if (ret_code == 0 && h.type == AUXCAP_PERF_RECORD_HEADER_TRACING_DATA)
		ret_code = tracing_data(r, r->map + off + h.size, extra, off + h.size);
	if (ret_code < 0)
		return ret_code;
	if (h.type == AUXCAP_PERF_RECORD_AUXTRACE) {
		ret->u.auxtrace.data = r->map + off + h.size;
		ret->u.auxtrace.data_offset = off + h.size;
	}
	r->pos = off + h.size + extra;
	return 1;
}

/* Read up to @n bytes from the pipe into @dst; returns the bytes read (< @n only at EOF). */
static ssize_t read_full(struct auxcap_perf_reader *r, void *dst, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(r->fd, (char *)dst + got, n - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

static int pbuf_reserve(struct auxcap_perf_reader *r, size_t n)
{
	unsigned char *p;
	size_t cap = r->pcap ? r->pcap : 65536;

	if (n <= r->pcap)
		return 0;
	while (cap < n)
		cap = cap > SIZE_MAX / 2 ? n : cap * 2;
	p = realloc(r->pbuf, cap);
	if (!p)
		return -ENOMEM;
	r->pbuf = p;
	r->pcap = cap;
	return 0;
}

/* Read @n more bytes after the first @have of pbuf, growing as data arrives. */
static int pipe_read_more(struct auxcap_perf_reader *r, size_t have, uint64_t n, bool keep)
{
	uint64_t got = 0;

	while (got < n) {
		size_t step = n - got < PIPE_CHUNK ? (size_t)(n - got) : PIPE_CHUNK;
		size_t at = keep ? have + (size_t)got : have;
		ssize_t k;
		int ret = pbuf_reserve(r, at + step);

		if (ret < 0)
			return ret;
		k = read_full(r, r->pbuf + at, step);
		if (k < 0)
			return (int)k;
		got += (uint64_t)k;
		if ((size_t)k < step)
			return 1; /* EOF */
	}
	return 0;
}

static int next_pipe(struct auxcap_perf_reader *r, struct auxcap_perf_event *ret)
{
	struct perf_event_header h;
	uint64_t off = r->pos, extra;
	ssize_t k;
	int ret_code;

	ret_code = pbuf_reserve(r, 65536);
	if (ret_code < 0)
		return ret_code;
	k = read_full(r, r->pbuf, sizeof(h));
	if (k < 0)
		return (int)k;
	if (k == 0) {
		r->info.recovered_end = off;
		r->done = true;
		return 0;
	}
	if ((size_t)k < sizeof(h))
		return cut(r, off, "truncated record header");
	memcpy(&h, r->pbuf, sizeof(h));
	if (h.size < sizeof(h) || h.type == 0)
		return bad(r, off, "record header with size %u, type %u", h.size, h.type);
	ret_code = pipe_read_more(r, sizeof(h), h.size - sizeof(h), true);
	if (ret_code < 0)
		return ret_code;
	if (ret_code > 0)
		return cut(r, off, "truncated record");
	ret_code = trailing_payload(r, r->pbuf, h.size, off, h.type, &extra);
	if (ret_code < 0)
		return ret_code;
	if (extra > r->max_payload)
		return bad(r, off, "payload of %llu bytes exceeds the limit of %llu",
			   (unsigned long long)extra, (unsigned long long)r->max_payload);
	/* AUXTRACE data and tracing data are kept after the record. */
	ret_code = pipe_read_more(r, h.size, extra,
				  h.type == AUXCAP_PERF_RECORD_AUXTRACE ||
					  h.type == AUXCAP_PERF_RECORD_HEADER_TRACING_DATA);
	if (ret_code < 0)
		return ret_code;
	if (ret_code > 0)
		return cut(r, off, "truncated payload");
	ret_code = decode(r, r->pbuf, h.size, off, ret);
	if (ret_code == 0 && h.type == AUXCAP_PERF_RECORD_HEADER_TRACING_DATA)
		ret_code = tracing_data(r, r->pbuf + h.size, extra, off + h.size);
	if (ret_code < 0)
		return ret_code;
	if (h.type == AUXCAP_PERF_RECORD_AUXTRACE) {
		ret->u.auxtrace.data = r->pbuf + h.size;
		ret->u.auxtrace.data_offset = off + h.size;
	}
	r->pos = off + h.size + extra;
	return 1;
}

int auxcap_perf_reader_next(struct auxcap_perf_reader *r, struct auxcap_perf_event *ev)
{
	if (!r || !ev)
		return -EINVAL;
	if (r->done)
		return 0;
	return r->map ? next_mapped(r, ev) : next_pipe(r, ev);
}

int auxcap_perf_reader_rewind(struct auxcap_perf_reader *r)
{
	if (!r)
		return -EINVAL;
	if (!r->map)
		return -ESPIPE;
	r->pos = r->start;
	r->done = false;
	r->nr_visible_sels = r->nr_header_sels;
	return 0;
}

/* --- open/close and accessors ----------------------------------------------------------- */

static int open_stream(struct auxcap_perf_reader *r)
{
	uint64_t ph[2];
	ssize_t k;

	r->info.pipe = true;
	r->info.streaming = true;
	r->tolerate_trunc = true;
	k = read_full(r, ph, sizeof(ph));
	if (k < 0)
		return (int)k;
	if (k == 0)
		return bad(r, 0, "empty input, not a perf.data stream");
	if ((size_t)k < sizeof(ph))
		return bad(r, (uint64_t)k, "stream header truncated");
	if (ph[0] == AUXCAP_PERF_MAGIC_SWAPPED) {
		snprintf(r->err, sizeof(r->err),
			 "the stream was written on an other-endian machine (not supported)");
		return -EPROTONOSUPPORT;
	}
	if (ph[0] != AUXCAP_PERF_MAGIC)
		return bad(r, 0, "bad magic (not a perf.data stream)");
	if (ph[1] != AUXCAP_PERF_PIPE_HEADER_SIZE)
		return bad(r, 8,
			   "a seekable perf.data file cannot be read from a pipe; pass it "
			   "as a file");
	r->start = r->pos = AUXCAP_PERF_PIPE_HEADER_SIZE;
	return 0;
}

static int open_mapped(struct auxcap_perf_reader *r, uint64_t size)
{
	uint64_t magic;
	void *m;

	r->info.file_size = size;
	if (size < 16)
		return bad(r, 0, "file of %llu bytes is too small for a perf.data header",
			   (unsigned long long)size);
	if (size > SIZE_MAX)
		return -EFBIG;
	m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, r->fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	r->map = m;
	r->map_len = (size_t)size;
	memcpy(&magic, r->map, 8);
	if (magic == AUXCAP_PERF_MAGIC_SWAPPED) {
		snprintf(r->err, sizeof(r->err),
			 "the file was written on an other-endian machine (not supported)");
		return -EPROTONOSUPPORT;
	}
	if (!memcmp(r->map, "PERFFILE", 8)) {
		snprintf(r->err, sizeof(r->err),
			 "version 1 perf.data file (\"PERFFILE\"); re-record with a newer perf");
		return -EPROTONOSUPPORT;
	}
	if (magic != AUXCAP_PERF_MAGIC)
		return bad(r, 0, "bad magic (not a perf.data file)");
	return read_file_header(r);
}

static void reader_free(struct auxcap_perf_reader *r)
{
	if (r->map)
		munmap((void *)r->map, r->map_len);
	if (r->own_fd)
		close(r->fd);
	for (size_t i = 0; i < r->nr_sels; i++) {
		free(r->sels[i]->ids);
		free(r->sels[i]->name);
		free(r->sels[i]->old_name);
		free(r->sels[i]);
	}
	free(r->sels);
	free(r->idmap);
	pd_feat_store_fini(&r->fs);
	free(r->pbuf);
	free(r);
}

static int reader_open(int fd, bool own_fd, const struct auxcap_perf_reader_opts *opts,
		       struct auxcap_perf_reader **ret)
{
	struct auxcap_perf_reader *r;
	struct stat st;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r) {
		if (own_fd)
			close(fd);
		return -ENOMEM;
	}
	r->fd = fd;
	r->own_fd = own_fd;
	r->max_payload = DEFAULT_MAX_PAYLOAD;
	if (opts) {
		r->flags = opts->flags;
		if (opts->max_payload)
			r->max_payload = opts->max_payload;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (S_ISREG(st.st_mode))
		err = open_mapped(r, (uint64_t)st.st_size);
	else
		err = open_stream(r);
	if (err < 0)
		goto fail;
	*ret = r;
	return 0;
fail:
	if (opts && opts->errbuf && opts->errbuf_size) {
		if (r->err[0])
			snprintf(opts->errbuf, opts->errbuf_size, "%s", r->err);
		else
			snprintf(opts->errbuf, opts->errbuf_size, "%s", strerror(-err));
	}
	reader_free(r);
	return err;
}

int auxcap_perf_reader_open_fd(int fd, const struct auxcap_perf_reader_opts *opts,
			       struct auxcap_perf_reader **ret)
{
	if (fd < 0 || !ret || (opts && opts->sz < sizeof(*opts)))
		return -EINVAL;
	return reader_open(fd, false, opts, ret);
}

/*
 * perf's directory format (perf record --kcore, --threads): directory @dfd holds the capture
 * as its file "data", with "kcore_dir/" beside it; --threads adds a stream per thread,
 * "data.N", which this reader does not merge.  The fd of "data", or a negative errno with
 * the reason in @opts->errbuf.
 */
static int open_dir_format(int dfd, const char *path, const struct auxcap_perf_reader_opts *opts)
{
	bool msg = opts && opts->errbuf && opts->errbuf_size;
	size_t threads = 0;
	struct dirent *e;
	int fd, r;
	DIR *dir;

	fd = openat(dfd, "data", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (msg)
			snprintf(opts->errbuf, opts->errbuf_size,
				 "'%s' is a directory%s; give a perf.data file (or a directory of "
				 "perf's format, as perf record --kcore writes, holding one named "
				 "'data')",
				 path, r == -ENOENT ? " without a 'data' file" : "");
		return r == -ENOENT ? -EISDIR : r;
	}
	r = dup(dfd);
	dir = r >= 0 ? fdopendir(r) : NULL;
	if (!dir && r >= 0)
		close(r);
	while (dir && (e = readdir(dir)))
		threads += !strncmp(e->d_name, "data.", 5);
	if (dir)
		closedir(dir);
	if (threads) {
		if (msg)
			snprintf(opts->errbuf, opts->errbuf_size,
				 "'%s' holds %zu more streams beside its 'data' (data.N: perf record "
				 "--threads), which auxcap does not merge; record without --threads",
				 path, threads);
		close(fd);
		return -EOPNOTSUPP;
	}
	return fd;
}

int auxcap_perf_reader_open(const char *path, const struct auxcap_perf_reader_opts *opts,
			    struct auxcap_perf_reader **ret)
{
	struct stat st;
	int fd;

	if (!path || !ret || (opts && opts->sz < sizeof(*opts)))
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		if (opts && opts->errbuf && opts->errbuf_size)
			snprintf(opts->errbuf, opts->errbuf_size, "%s: %s", path, strerror(-err));
		return err;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		int dfd = fd;

		fd = open_dir_format(dfd, path, opts);
		close(dfd);
		if (fd < 0)
			return fd;
	}
	return reader_open(fd, true, opts, ret);
}

void auxcap_perf_reader_close(struct auxcap_perf_reader *r)
{
	if (r)
		reader_free(r);
}

const struct auxcap_perf_file_info *auxcap_perf_reader_info(const struct auxcap_perf_reader *r)
{
	return r ? &r->info : NULL;
}

const struct auxcap_perf_features *auxcap_perf_reader_features(const struct auxcap_perf_reader *r)
{
	return r ? &r->fs.f : NULL;
}

size_t auxcap_perf_reader_nr_evsels(const struct auxcap_perf_reader *r)
{
	return r ? r->nr_visible_sels : 0;
}

const struct auxcap_perf_evsel *auxcap_perf_reader_evsel(const struct auxcap_perf_reader *r,
							 size_t i)
{
	if (!r || i >= r->nr_visible_sels)
		return NULL;
	return &r->sels[i]->pub;
}

const struct auxcap_perf_evsel *auxcap_perf_reader_find_id(const struct auxcap_perf_reader *r,
							   uint64_t id)
{
	struct rsel *s;

	if (!r)
		return NULL;
	s = find_id(r, id);
	return s ? &s->pub : NULL;
}

int auxcap_perf_reader_feature_raw(const struct auxcap_perf_reader *r, unsigned int feat,
				   const void **ret_data, size_t *ret_size)
{
	if (!r || !ret_data || !ret_size || feat >= AUXCAP_PERF_FEAT_BITS)
		return -EINVAL;
	if (!r->map || !(r->fs.f.present[feat / 64] & (1ULL << (feat % 64))) ||
	    !r->feat_sec[feat].offset)
		return -ENOENT;
	*ret_data = r->map + r->feat_sec[feat].offset;
	*ret_size = (size_t)r->feat_sec[feat].size;
	return 0;
}

/* Check the AUXTRACE feature's entries against the data section. */
static int check_index(struct auxcap_perf_reader *r)
{
	for (size_t i = 0; i < r->fs.nr_auxtrace_index; i++) {
		const struct auxcap_perf_auxtrace_index_entry *e = &r->fs.auxtrace_index[i];
		struct perf_event_header h;
		uint64_t size;

		if (e->offset < r->start || e->offset > r->end ||
		    r->end - e->offset < AUXCAP_PERF_AUXTRACE_SIZE)
			return bad(r, e->offset,
				   "AUXTRACE index entry %zu outside the data section", i);
		memcpy(&h, r->map + e->offset, sizeof(h));
		memcpy(&size, r->map + e->offset + 8, 8);
		if (h.type != AUXCAP_PERF_RECORD_AUXTRACE || h.size != e->size ||
		    h.size < AUXCAP_PERF_AUXTRACE_SIZE || size > r->end - e->offset - h.size)
			return bad(r, e->offset,
				   "AUXTRACE index entry %zu is not an AUXTRACE record", i);
	}
	return 0;
}

/* Collect the AUXTRACE records by walking the record headers of the data section. */
static int scan_index(struct auxcap_perf_reader *r)
{
	struct auxcap_perf_auxtrace_index_entry *v = NULL, *nv;
	size_t nr = 0, cap = 0;
	uint64_t pos = r->start;

	while (r->end - pos >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		uint64_t extra = 0;

		memcpy(&h, r->map + pos, sizeof(h));
		if (h.size < sizeof(h) || h.type == 0 || h.size > r->end - pos)
			break;
		if (trailing_payload(r, r->map + pos, h.size, pos, h.type, &extra) < 0 ||
		    extra > r->end - pos - h.size)
			break;
		if (h.type == AUXCAP_PERF_RECORD_AUXTRACE) {
			if (nr == cap) {
				cap = cap ? cap * 2 : 64;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
			}
			v[nr].offset = pos;
			v[nr].size = h.size;
			nr++;
		}
		pos += h.size + extra;
	}
	/* A cut record ends a recovered stream; anywhere else it is corruption. */
	if (pos != r->end && !r->tolerate_trunc) {
		free(v);
		return bad(r, pos, "bad record header while scanning for AUXTRACE records");
	}
	free(r->fs.auxtrace_index);
	r->fs.auxtrace_index = v;
	r->fs.nr_auxtrace_index = nr;
	r->fs.f.auxtrace_index = v;
	r->fs.f.nr_auxtrace_index = nr;
	return 0;
}

int auxcap_perf_reader_auxtrace_index(struct auxcap_perf_reader *r,
				      const struct auxcap_perf_auxtrace_index_entry **ret_entries,
				      size_t *ret_nr)
{
	int err;

	if (!r || !ret_entries || !ret_nr)
		return -EINVAL;
	if (!r->map)
		return -ESPIPE;
	if (!r->index_ready) {
		if (r->fs.nr_auxtrace_index)
			err = check_index(r);
		else
			err = scan_index(r);
		if (err < 0)
			return err;
		r->index_ready = true;
	}
	*ret_entries = r->fs.auxtrace_index;
	*ret_nr = r->fs.nr_auxtrace_index;
	return 0;
}

const char *auxcap_perf_reader_error(const struct auxcap_perf_reader *r)
{
	return r ? r->err : "";
}

int auxcap_perf_reader_drop(struct auxcap_perf_reader *r, const void *p, size_t len)
{
	const unsigned char *a = p;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo, hi;

	if (!r)
		return -EINVAL;
	if (!r->map || !len)
		return 0;
	if (!a || a < r->map || len > r->map_len || (size_t)(a - r->map) > r->map_len - len)
		return -EINVAL;
	/* only pages entirely inside: neighbours may still be in use */
	lo = ((uintptr_t)a + page - 1) & ~(page - 1);
	hi = ((uintptr_t)a + len) & ~(page - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
	return 0;
}
