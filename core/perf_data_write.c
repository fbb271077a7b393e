/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The perf.data writer (spec/perf-data-and-perf-tool.md section 1).
 *
 * Small records are gathered in a 64 KiB buffer that only ever holds whole records and is
 * written with one call; AUXTRACE payloads go straight from the caller's memory with one
 * vectored write (record, piece 1, piece 2, padding).  @committed is the end of the last record
 * known to be on disk: after an I/O error the file is cut there.
 *
 * Divisions: the I/O seam, set-up, attrs and features, the file header, records, close.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/uio.h>

#include "auxcap/file.h"
#include "auxcap/log.h"
#include "auxcap/perf_data.h"
#include "perf_data_int.h"

_Static_assert(sizeof(struct perf_event_attr) >= AUXCAP_PERF_ATTR_SIZE,
	       "perf_event_attr smaller than what perf 6.1 writes");

#define WBUF_SIZE	    (64 * 1024)			 /* flush threshold of the record buffer */
#define HEADER_UPDATE_BYTES ((uint64_t)4 * 1024 * 1024)	 /* default header refresh interval */
#define ATTR_ENTRY_SIZE	    (AUXCAP_PERF_ATTR_SIZE + 16) /* attr + ids {offset, size} */
#define RESERVE_STEP	    ((uint64_t)1 << 20) /* bytes per fallocate of the reserving thread */
#define RESERVE_NICE	    10			/* its nice value */

/* --- the I/O seam ----------------------------------------------------------------------- */

static ssize_t linux_writev(void *ctx, int fd, const struct iovec *iov, int iovcnt, int64_t off)
{
	ssize_t n;

	(void)ctx;
	if (off < 0)
		n = writev(fd, iov, iovcnt);
	else
		n = pwritev(fd, iov, iovcnt, (off_t)off);
	return n < 0 ? -errno : n;
}

static int linux_truncate(void *ctx, int fd, uint64_t len)
{
	(void)ctx;
	return ftruncate(fd, (off_t)len) < 0 ? -errno : 0;
}

static int linux_fallocate(void *ctx, int fd, int mode, uint64_t off, uint64_t len)
{
	(void)ctx;
	return fallocate(fd, mode, (off_t)off, (off_t)len) < 0 ? -errno : 0;
}

const struct auxcap_perf_io auxcap_perf_io_linux = {
	.ctx = NULL,
	.writev = linux_writev,
	.truncate = linux_truncate,
	.fallocate = linux_fallocate,
};

struct wattr {
	struct perf_event_attr attr; /* copy, size set to AUXCAP_PERF_ATTR_SIZE */
	char *name;		     /* owned, may be NULL */
	uint64_t *ids;		     /* owned */
	size_t nr_ids;
};

struct auxcap_perf_writer {
	int fd;				 /* output */
	bool own_fd;			 /* close @fd at the end */
	bool pipe;			 /* pipe-mode stream */
	const struct auxcap_perf_io *io; /* borrowed */
	uint64_t header_update_bytes;	 /* data bytes between header refreshes */
	struct wattr *attrs;		 /* owned array */
	size_t nr_attrs;
	bool started;	      /* file/pipe header and attrs are out */
	int err;	      /* sticky I/O error, 0 if none */
	uint64_t data_offset; /* file offset of the data section (file mode) */
	uint64_t pos;	      /* offset where @buf goes (bytes written so far in pipes) */
	uint64_t committed;   /* end of the last record on disk */
	uint64_t last_update; /* data size at the last header refresh, bytes */
	uint64_t reserved_end; /* file offset up to which space was asked to be reserved, 0: none */
	/*
	 * The reserving thread (auxcap_perf_writer_reserve()): it fallocates [res_from, res_to)
	 * in RESERVE_STEP steps.  The fields below @res_lock are shared with it.
	 */
	pthread_t res_thread;
	bool res_started;
	pthread_mutex_t res_lock;
	pthread_cond_t res_cond;
	uint64_t res_from, res_to;
	bool res_stop;
	struct pd_buf buf;    /* whole records not written yet */
	struct pd_buf feat[AUXCAP_PERF_FEAT_BITS]; /* payloads set by the caller */
	bool feat_set[AUXCAP_PERF_FEAT_BITS];
	struct pd_buf build_ids;    /* BUILD_ID entries */
	size_t pipe_build_ids_sent; /* bytes of @build_ids already in a pipe stream */
	uint64_t *aux_index;	    /* owned: file offsets of AUXTRACE records */
	size_t nr_aux_index, cap_aux_index;
	struct auxcap_perf_snapshot *snapshots; /* owned: the AUXCAP_SNAPSHOTS entries */
	size_t nr_snapshots, cap_snapshots;
	uint64_t first_time, last_time; /* SAMPLE time span for SAMPLE_TIME, ns (0: none) */
	struct wfile {
		char *name;	  /* owned */
		uint16_t cpumode; /* header.misc & PERF_RECORD_MISC_CPUMODE_MASK */
	} *files;		  /* owned: distinct executable mappings seen, for build-ids */
	size_t nr_files, cap_files;
};

/* Write all of @iov at @off (-1: sequential), retrying short writes and EINTR. */
static int write_all(struct auxcap_perf_writer *w, struct iovec *iov, int cnt, int64_t off)
{
	while (cnt > 0) {
		ssize_t n;

		if (iov->iov_len == 0) {
			iov++;
			cnt--;
			continue;
		}
		n = w->io->writev(w->io->ctx, w->fd, iov, cnt, off);
		if (n == -EINTR)
			continue;
		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO;
		if (off >= 0)
			off += n;
		while (cnt > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

static int write_at(struct auxcap_perf_writer *w, const void *data, size_t len, uint64_t off)
{
	struct iovec iov = { (void *)data, len };

	return write_all(w, &iov, 1, w->pipe ? -1 : (int64_t)off);
}

/* --- set-up ----------------------------------------------------------------------------- */

int auxcap_perf_writer_open_fd(int fd, const struct auxcap_perf_writer_opts *opts,
			       struct auxcap_perf_writer **ret)
{
	struct auxcap_perf_writer *w;

	if (fd < 0 || !ret)
		return -EINVAL;
	if (opts && opts->sz < sizeof(*opts))
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = fd;
	w->io = &auxcap_perf_io_linux;
	w->header_update_bytes = HEADER_UPDATE_BYTES;
	if (opts) {
		w->pipe = opts->pipe;
		if (opts->io)
			w->io = opts->io;
		if (opts->header_update_bytes)
			w->header_update_bytes = opts->header_update_bytes;
	}
	*ret = w;
	return 0;
}

int auxcap_perf_writer_open(const char *path, const struct auxcap_perf_writer_opts *opts,
			    struct auxcap_perf_writer **ret)
{
	struct auxcap_perf_writer *w;
	int fd, r;

	if (!path || !ret)
		return -EINVAL;
	if (opts && opts->sz < sizeof(*opts))
		return -EINVAL;
	fd = auxcap_file_create(path,
				opts && opts->file_mode ? opts->file_mode : AUXCAP_FILE_REPLACE,
				opts ? opts->errbuf : NULL, opts ? opts->errbuf_size : 0);
	if (fd < 0)
		return fd;
	r = auxcap_perf_writer_open_fd(fd, opts, &w);
	if (r < 0) {
		close(fd);
		return r;
	}
	w->own_fd = true;
	*ret = w;
	return 0;
}

/* --- attrs and features ----------------------------------------------------------------- */

static bool id_used(const struct auxcap_perf_writer *w, uint64_t id)
{
	for (size_t i = 0; i < w->nr_attrs; i++)
		for (size_t j = 0; j < w->attrs[i].nr_ids; j++)
			if (w->attrs[i].ids[j] == id)
				return true;
	return false;
}

int auxcap_perf_writer_add_attr(struct auxcap_perf_writer *w, const struct perf_event_attr *attr,
				const char *name, const uint64_t *ids, size_t nr_ids)
{
	struct wattr a, *v;

	if (!w || !attr || !ids || nr_ids == 0 || nr_ids > 4096)
		return -EINVAL;
	if (w->started)
		return -EBUSY;
	for (size_t i = 0; i < nr_ids; i++) {
		if (id_used(w, ids[i]))
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (ids[j] == ids[i])
				return -EINVAL;
	}
	if (w->nr_attrs) {
		const struct perf_event_attr *f = &w->attrs[0].attr;

		if (!(attr->sample_type & PERF_SAMPLE_IDENTIFIER) ||
		    !(f->sample_type & PERF_SAMPLE_IDENTIFIER) ||
		    attr->sample_id_all != f->sample_id_all)
			return -EINVAL;
	}
	memset(&a, 0, sizeof(a));
	memcpy(&a.attr, attr, AUXCAP_PERF_ATTR_SIZE);
	a.attr.size = AUXCAP_PERF_ATTR_SIZE;
	a.ids = malloc(nr_ids * sizeof(*ids));
	if (name)
		a.name = strdup(name);
	v = realloc(w->attrs, (w->nr_attrs + 1) * sizeof(*v));
	if (!a.ids || (name && !a.name) || !v) {
		free(a.ids);
		free(a.name);
		if (v)
			w->attrs = v;
		return -ENOMEM;
	}
	memcpy(a.ids, ids, nr_ids * sizeof(*ids));
	a.nr_ids = nr_ids;
	w->attrs = v;
	w->attrs[w->nr_attrs++] = a;
	return 0;
}

int auxcap_perf_writer_set_feature(struct auxcap_perf_writer *w, unsigned int feat,
				   const void *data, size_t size)
{
	struct pd_buf b = { 0 };
	int r;

	if (!w || feat == 0 || feat >= AUXCAP_PERF_FEAT_BITS || feat == AUXCAP_PERF_FEAT_AUXTRACE ||
	    (!data && size))
		return -EINVAL;
	r = pd_buf_put(&b, data, size);
	if (r < 0)
		return r;
	if (feat == AUXCAP_PERF_FEAT_BUILD_ID) {
		pd_buf_free(&w->build_ids);
		w->build_ids = b;
		w->pipe_build_ids_sent = 0;
		return 0;
	}
	pd_buf_free(&w->feat[feat]);
	w->feat[feat] = b;
	w->feat_set[feat] = true;
	return 0;
}

int auxcap_perf_writer_add_snapshot(struct auxcap_perf_writer *w,
				    const struct auxcap_perf_snapshot *snap)
{
	if (!w || !snap)
		return -EINVAL;
	if (w->nr_snapshots == w->cap_snapshots) {
		size_t cap = w->cap_snapshots ? w->cap_snapshots * 2 : 16;
		struct auxcap_perf_snapshot *p = realloc(w->snapshots, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		w->snapshots = p;
		w->cap_snapshots = cap;
	}
	w->snapshots[w->nr_snapshots++] = *snap;
	return 0;
}

int auxcap_perf_writer_set_string(struct auxcap_perf_writer *w, unsigned int feat, const char *s)
{
	struct pd_buf b = { 0 };
	int r;

	if (!w || !s)
		return -EINVAL;
	switch (feat) {
	case AUXCAP_PERF_FEAT_HOSTNAME:
	case AUXCAP_PERF_FEAT_OSRELEASE:
	case AUXCAP_PERF_FEAT_VERSION:
	case AUXCAP_PERF_FEAT_ARCH:
	case AUXCAP_PERF_FEAT_CPUDESC:
	case AUXCAP_PERF_FEAT_CPUID:
		break;
	default:
		return -EINVAL;
	}
	r = pd_buf_put_string(&b, s);
	if (r < 0) {
		pd_buf_free(&b);
		return r;
	}
	pd_buf_free(&w->feat[feat]);
	w->feat[feat] = b;
	w->feat_set[feat] = true;
	return 0;
}

int auxcap_perf_writer_set_cmdline(struct auxcap_perf_writer *w, int argc, const char *const *argv)
{
	struct pd_buf b = { 0 };
	int r;

	if (!w || argc < 0 || (argc && !argv))
		return -EINVAL;
	r = pd_buf_put_u32(&b, (uint32_t)argc);
	for (int i = 0; i < argc && r == 0; i++)
		r = pd_buf_put_string(&b, argv[i] ? argv[i] : "");
	if (r < 0) {
		pd_buf_free(&b);
		return r;
	}
	pd_buf_free(&w->feat[AUXCAP_PERF_FEAT_CMDLINE]);
	w->feat[AUXCAP_PERF_FEAT_CMDLINE] = b;
	w->feat_set[AUXCAP_PERF_FEAT_CMDLINE] = true;
	return 0;
}

int auxcap_perf_writer_set_host_features(struct auxcap_perf_writer *w)
{
	struct pd_host_feats h;
	int r;

	if (!w)
		return -EINVAL;
	r = pd_feat_host(&h);
	if (r < 0)
		return r;
	for (unsigned int i = 0; i < AUXCAP_PERF_FEAT_LAST; i++) {
		if (!h.feat[i].len)
			continue;
		pd_buf_free(&w->feat[i]);
		w->feat[i] = h.feat[i];
		w->feat_set[i] = true;
	}
	return 0;
}

static const char *find_tracefs(void)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[128];

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/header_page", roots[i]);
		if (access(path, R_OK) == 0)
			return roots[i];
	}
	return NULL;
}

int auxcap_perf_writer_set_tracing_data(struct auxcap_perf_writer *w, const char *tracefs,
					const char *const *events, size_t nr)
{
	struct pd_buf b = { 0 };
	int r;

	if (!w || (!events && nr))
		return -EINVAL;
	for (size_t i = 0; i < nr; i++)
		if (!events[i])
			return -EINVAL;
	if (!tracefs)
		tracefs = find_tracefs();
	if (!tracefs)
		return -ENOENT;
	r = pd_feat_tracing_data(&b, tracefs, events, nr);
	if (r < 0) {
		pd_buf_free(&b);
		return r;
	}
	pd_buf_free(&w->feat[AUXCAP_PERF_FEAT_TRACING_DATA]);
	w->feat[AUXCAP_PERF_FEAT_TRACING_DATA] = b;
	w->feat_set[AUXCAP_PERF_FEAT_TRACING_DATA] = true;
	return 0;
}

/* TRACING_DATA for the tracepoint attrs, unless the caller set it; failures are logged. */
static void auto_tracing_data(struct auxcap_perf_writer *w)
{
	const char **names;
	size_t nr = 0;
	int r;

	if (w->feat_set[AUXCAP_PERF_FEAT_TRACING_DATA])
		return;
	names = calloc(w->nr_attrs ? w->nr_attrs : 1, sizeof(*names));
	if (!names)
		return;
	for (size_t i = 0; i < w->nr_attrs; i++) {
		if (w->attrs[i].attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		if (!w->attrs[i].name || !strchr(w->attrs[i].name, ':')) {
			auxcap_log(AUXCAP_LOG_WARN,
				   "tracepoint event %zu has no \"sys:name\" name; perf will not "
				   "open the file without its format",
				   i);
			continue;
		}
		names[nr++] = w->attrs[i].name;
	}
	if (nr) {
		r = auxcap_perf_writer_set_tracing_data(w, NULL, names, nr);
		if (r < 0)
			auxcap_log(AUXCAP_LOG_WARN,
				   "cannot read tracepoint formats from tracefs (%s); perf will "
				   "not open the file",
				   strerror(-r));
	}
	free(names);
}

int auxcap_perf_writer_set_clock(struct auxcap_perf_writer *w, int clockid)
{
	struct timespec res, tod, clk;
	uint64_t v[3];
	uint32_t head[2] = { 1, (uint32_t)clockid }; /* version 1 */
	unsigned char data[24];
	int r;

	if (!w)
		return -EINVAL;
	if (clock_getres(clockid, &res) < 0 || clock_gettime(CLOCK_REALTIME, &tod) < 0 ||
	    clock_gettime(clockid, &clk) < 0)
		return -EINVAL;
	v[0] = (uint64_t)res.tv_sec * 1000000000ULL + (uint64_t)res.tv_nsec;
	v[1] = (uint64_t)tod.tv_sec * 1000000000ULL + (uint64_t)tod.tv_nsec;
	v[2] = (uint64_t)clk.tv_sec * 1000000000ULL + (uint64_t)clk.tv_nsec;
	r = auxcap_perf_writer_set_feature(w, AUXCAP_PERF_FEAT_CLOCKID, &v[0], 8);
	if (r < 0)
		return r;
	memcpy(data, head, 8);
	memcpy(data + 8, &v[1], 16);
	return auxcap_perf_writer_set_feature(w, AUXCAP_PERF_FEAT_CLOCK_DATA, data, sizeof(data));
}

int auxcap_perf_writer_add_build_id(struct auxcap_perf_writer *w, uint16_t cpumode, int32_t pid,
				    const uint8_t *build_id, size_t size, const char *filename)
{
	if (!w || !build_id || !filename || size > 20)
		return -EINVAL;
	return pd_feat_encode_build_id(&w->build_ids, cpumode, pid, build_id, size, filename);
}

/* --- the file header -------------------------------------------------------------------- */

static uint64_t attrs_offset(const struct auxcap_perf_writer *w)
{
	uint64_t off = AUXCAP_PERF_HEADER_SIZE;

	for (size_t i = 0; i < w->nr_attrs; i++)
		off += w->attrs[i].nr_ids * 8;
	return off;
}

/* Rewrite the 104-byte header: data section of @data_size bytes, feature bitmap @feats. */
static int write_file_header(struct auxcap_perf_writer *w, uint64_t data_size,
			     const uint64_t feats[4])
{
	uint64_t h[AUXCAP_PERF_HEADER_SIZE / 8];

	memset(h, 0, sizeof(h));
	h[0] = AUXCAP_PERF_MAGIC;
	h[1] = AUXCAP_PERF_HEADER_SIZE;
	h[2] = ATTR_ENTRY_SIZE;
	h[3] = attrs_offset(w);
	h[4] = w->nr_attrs * ATTR_ENTRY_SIZE;
	h[5] = w->data_offset;
	h[6] = data_size;
	/* h[7], h[8]: event_types, unused */
	if (feats)
		memcpy(&h[9], feats, 4 * sizeof(uint64_t));
	return write_at(w, h, sizeof(h), 0);
}

static int append(struct auxcap_perf_writer *w, const void *data, size_t n);

static int feature_payload(struct auxcap_perf_writer *w, unsigned int f, struct pd_buf *out);

static int start_pipe(struct auxcap_perf_writer *w)
{
	uint64_t ph[2] = { AUXCAP_PERF_MAGIC, AUXCAP_PERF_PIPE_HEADER_SIZE };
	struct pd_buf one = { 0 };
	struct perf_event_header h;
	int r;

	auto_tracing_data(w);
	r = pd_buf_put(&w->buf, ph, sizeof(ph));
	for (size_t i = 0; i < w->nr_attrs && r == 0; i++) {
		const struct wattr *a = &w->attrs[i];
		size_t size = sizeof(h) + AUXCAP_PERF_ATTR_SIZE + a->nr_ids * 8;

		if (size > UINT16_MAX) {
			pd_buf_free(&one);
			return -E2BIG;
		}
		h.type = AUXCAP_PERF_RECORD_HEADER_ATTR;
		h.misc = 0;
		h.size = (uint16_t)size;
		r = pd_buf_put(&w->buf, &h, sizeof(h));
		if (r == 0)
			r = pd_buf_put(&w->buf, &a->attr, AUXCAP_PERF_ATTR_SIZE);
		if (r == 0)
			r = pd_buf_put(&w->buf, a->ids, a->nr_ids * 8);
	}
	/* Tracepoint formats travel as a record followed by the data, padded to 8. */
	if (r == 0 && w->feat_set[AUXCAP_PERF_FEAT_TRACING_DATA]) {
		const struct pd_buf *td = &w->feat[AUXCAP_PERF_FEAT_TRACING_DATA];

		if (pd_align8(td->len) > UINT32_MAX) {
			pd_buf_free(&one);
			return -E2BIG;
		}
		h.type = AUXCAP_PERF_RECORD_HEADER_TRACING_DATA;
		h.misc = 0;
		h.size = 16;
		r = pd_buf_put(&w->buf, &h, sizeof(h));
		if (r == 0)
			r = pd_buf_put_u32(&w->buf, (uint32_t)pd_align8(td->len));
		if (r == 0)
			r = pd_buf_put_u32(&w->buf, 0);
		if (r == 0)
			r = pd_buf_put(&w->buf, td->p, td->len);
		if (r == 0)
			r = pd_buf_put_zeros(&w->buf, pd_align8(td->len) - td->len);
	}
	/*
	 * Features that perf synthesizes in pipes: not BUILD_ID, TRACING_DATA, AUXTRACE, nor
	 * auxcap's own (see close_pipe()).
	 */
	for (unsigned int f = 1; f < AUXCAP_PERF_FEAT_BITS && r == 0; f++) {
		size_t size;

		if (f == AUXCAP_PERF_FEAT_TRACING_DATA || f == AUXCAP_PERF_FEAT_BUILD_ID ||
		    f == AUXCAP_PERF_FEAT_AUXTRACE || f == AUXCAP_PERF_FEAT_AUXCAP_SNAPSHOTS)
			continue;
		r = feature_payload(w, f, &one);
		if (r <= 0)
			continue;
		r = 0;
		size = one.len;
		if (sizeof(h) + 8 + pd_align8(size) > UINT16_MAX) {
			auxcap_log(
				AUXCAP_LOG_WARN,
				"feature %s (%zu bytes) does not fit a pipe-mode record; left out",
				auxcap_perf_feat_name(f) ? auxcap_perf_feat_name(f) : "?", size);
			continue;
		}
		h.type = AUXCAP_PERF_RECORD_HEADER_FEATURE;
		h.misc = 0;
		h.size = (uint16_t)(sizeof(h) + 8 + pd_align8(size));
		r = pd_buf_put(&w->buf, &h, sizeof(h));
		if (r == 0)
			r = pd_buf_put_u64(&w->buf, f);
		if (r == 0)
			r = pd_buf_put(&w->buf, one.p, size);
		if (r == 0)
			r = pd_buf_put_zeros(&w->buf, pd_align8(size) - size);
	}
	pd_buf_free(&one);
	return r;
}

static int start_file(struct auxcap_perf_writer *w)
{
	struct pd_buf b = { 0 };
	uint64_t ids_off = AUXCAP_PERF_HEADER_SIZE;
	int r = 0;

	w->data_offset = attrs_offset(w) + w->nr_attrs * ATTR_ENTRY_SIZE;
	for (size_t i = 0; i < w->nr_attrs && r == 0; i++)
		r = pd_buf_put(&b, w->attrs[i].ids, w->attrs[i].nr_ids * 8);
	for (size_t i = 0; i < w->nr_attrs && r == 0; i++) {
		r = pd_buf_put(&b, &w->attrs[i].attr, AUXCAP_PERF_ATTR_SIZE);
		if (r == 0)
			r = pd_buf_put_u64(&b, ids_off);
		if (r == 0)
			r = pd_buf_put_u64(&b, w->attrs[i].nr_ids * 8);
		ids_off += w->attrs[i].nr_ids * 8;
	}
	if (r == 0)
		r = write_file_header(w, 0, NULL);
	if (r == 0)
		r = write_at(w, b.p, b.len, AUXCAP_PERF_HEADER_SIZE);
	pd_buf_free(&b);
	if (r < 0)
		return r;
	w->pos = w->committed = w->data_offset;
	return 0;
}

static int start(struct auxcap_perf_writer *w)
{
	int r;

	if (w->started)
		return 0;
	if (!w->nr_attrs)
		return -ENODATA;
	r = w->pipe ? start_pipe(w) : start_file(w);
	if (r < 0) {
		w->err = r;
		return r;
	}
	w->started = true;
	return 0;
}

/* --- records ---------------------------------------------------------------------------- */

static int flush(struct auxcap_perf_writer *w)
{
	int r;

	if (w->err)
		return w->err;
	if (!w->buf.len)
		return 0;
	r = write_at(w, w->buf.p, w->buf.len, w->pos);
	if (r < 0) {
		w->err = r;
		return r;
	}
	w->pos += w->buf.len;
	w->committed = w->pos;
	w->buf.len = 0;
	return 0;
}

/* Queue one whole record. */
static int append(struct auxcap_perf_writer *w, const void *data, size_t n)
{
	int r;

	if (w->err)
		return w->err;
	r = start(w);
	if (r < 0)
		return r;
	if (w->buf.len + n > (size_t)WBUF_SIZE) {
		r = flush(w);
		if (r < 0)
			return r;
	}
	return pd_buf_put(&w->buf, data, n);
}

/* Widen the SAMPLE time span with the SAMPLE at @rec (its attr found by IDENTIFIER). */
static void note_sample_time(struct auxcap_perf_writer *w, const unsigned char *rec, uint16_t size)
{
	const struct perf_event_attr *attr = &w->attrs[0].attr;
	struct auxcap_sample_layout l = { 0 };
	size_t off;
	uint64_t t;

	if (w->nr_attrs > 1) {
		uint64_t id;

		if (size < 16)
			return;
		memcpy(&id, rec + 8, 8);
		attr = NULL;
		for (size_t i = 0; i < w->nr_attrs && !attr; i++)
			for (size_t j = 0; j < w->attrs[i].nr_ids; j++)
				if (w->attrs[i].ids[j] == id)
					attr = &w->attrs[i].attr;
		if (!attr)
			return;
	}
	l.sample_type = attr->sample_type;
	off = auxcap_sample_time_offset(&l);
	if (!off || off + 8 > size)
		return;
	memcpy(&t, rec + off, 8);
	if (!w->first_time || t < w->first_time)
		w->first_time = t;
	if (t > w->last_time)
		w->last_time = t;
}

/*
 * Remember the file of an executable MMAP/MMAP2 record, once per path, so the caller can add
 * its build-id at the end.  Best effort: a path that does not fit or cannot be stored is left
 * out (the build-id table is metadata; the record itself is written regardless).
 */
static void note_mapping(struct auxcap_perf_writer *w, const unsigned char *rec, uint16_t size)
{
	struct perf_event_header h;
	size_t off = 0;
	uint32_t prot;
	const char *name;
	size_t len;

	memcpy(&h, rec, sizeof(h));
	if (h.type == PERF_RECORD_MMAP) {
		if (h.misc & PERF_RECORD_MISC_MMAP_DATA)
			return;
		off = 40; /* header, pid, tid, addr, len, pgoff */
	} else if (h.type == PERF_RECORD_MMAP2) {
		if (size < 72)
			return;
		memcpy(&prot, rec + 64, 4);
		if (!(prot & PROT_EXEC))
			return;
		off = 72; /* ... maj/min/ino/ino_gen or build-id, prot, flags */
	} else {
		return;
	}
	if (size <= off)
		return;
	name = (const char *)rec + off;
	len = strnlen(name, size - off);
	/* files, the vdso (its image is saved by build-id: decode/binaries.c) and the kernel
	 * (its build-id, from its notes) */
	if (len == size - off || len == 0 ||
	    (name[0] == '[' && strcmp(name, "[vdso]") && strncmp(name, "[kernel.kallsyms]", 17)) ||
	    !strncmp(name, "//anon", 6))
		return;
	for (size_t i = 0; i < w->nr_files; i++)
		if (!strcmp(w->files[i].name, name))
			return;
	if (w->nr_files == w->cap_files) {
		size_t cap = w->cap_files ? 2 * w->cap_files : 16;
		struct wfile *f = realloc(w->files, cap * sizeof(*f));

		if (!f)
			return;
		w->files = f;
		w->cap_files = cap;
	}
	w->files[w->nr_files].name = strdup(name);
	if (!w->files[w->nr_files].name)
		return;
	w->files[w->nr_files++].cpumode = h.misc & PERF_RECORD_MISC_CPUMODE_MASK;
}

size_t auxcap_perf_writer_nr_mapped_files(const struct auxcap_perf_writer *w)
{
	return w ? w->nr_files : 0;
}

const char *auxcap_perf_writer_mapped_file(const struct auxcap_perf_writer *w, size_t i,
					   uint16_t *ret_cpumode)
{
	if (!w || i >= w->nr_files)
		return NULL;
	if (ret_cpumode)
		*ret_cpumode = w->files[i].cpumode;
	return w->files[i].name;
}

int auxcap_perf_writer_write(struct auxcap_perf_writer *w, const void *rec)
{
	struct perf_event_header h;
	int r;

	if (!w || !rec)
		return -EINVAL;
	memcpy(&h, rec, sizeof(h));
	if (h.size < sizeof(h) || (h.size & 7) || h.type == 0 ||
	    h.type >= AUXCAP_PERF_RECORD_HEADER_MAX || h.type == AUXCAP_PERF_RECORD_AUXTRACE ||
	    h.type == AUXCAP_PERF_RECORD_HEADER_ATTR ||
	    h.type == AUXCAP_PERF_RECORD_HEADER_FEATURE ||
	    h.type == AUXCAP_PERF_RECORD_HEADER_TRACING_DATA)
		return -EINVAL;
	r = append(w, rec, h.size);
	if (r == 0 && h.type == PERF_RECORD_SAMPLE && w->nr_attrs)
		note_sample_time(w, rec, h.size);
	if (r == 0 && (h.type == PERF_RECORD_MMAP || h.type == PERF_RECORD_MMAP2))
		note_mapping(w, rec, h.size);
	return r;
}

int auxcap_perf_writer_write_auxtrace(struct auxcap_perf_writer *w,
				      const struct auxcap_perf_auxtrace *at, const void *p1,
				      size_t len1, const void *p2, size_t len2)
{
	static const unsigned char zeros[8];
	unsigned char rec[AUXCAP_PERF_AUXTRACE_SIZE];
	struct perf_event_header h = { AUXCAP_PERF_RECORD_AUXTRACE, 0, AUXCAP_PERF_AUXTRACE_SIZE };
	uint64_t size, pad, reserved = 0;
	struct iovec iov[4];
	uint64_t *nv;
	int r;

	if (!w || !at || (!p1 && len1) || (!p2 && len2) || len1 + len2 == 0 ||
	    len1 > UINT64_MAX - len2 - 8)
		return -EINVAL;
	if (w->err)
		return w->err;
	r = start(w);
	if (r == 0)
		r = flush(w);
	if (r < 0)
		return r;
	size = pd_align8((uint64_t)len1 + len2);
	pad = size - len1 - len2;
	memcpy(rec, &h, 8);
	memcpy(rec + 8, &size, 8);
	memcpy(rec + 16, &at->offset, 8);
	memcpy(rec + 24, &at->reference, 8);
	memcpy(rec + 32, &at->idx, 4);
	memcpy(rec + 36, &at->tid, 4);
	memcpy(rec + 40, &at->cpu, 4);
	memcpy(rec + 44, &reserved, 4);
	if (!w->pipe && w->nr_aux_index == w->cap_aux_index) {
		size_t cap = w->cap_aux_index ? w->cap_aux_index * 2 : 64;

		nv = realloc(w->aux_index, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		w->aux_index = nv;
		w->cap_aux_index = cap;
	}
	iov[0] = (struct iovec){ rec, sizeof(rec) };
	iov[1] = (struct iovec){ (void *)p1, len1 };
	iov[2] = (struct iovec){ (void *)p2, len2 };
	iov[3] = (struct iovec){ (void *)zeros, pad };
	r = write_all(w, iov, 4, w->pipe ? -1 : (int64_t)w->pos);
	if (r < 0) {
		w->err = r;
		return r;
	}
	if (!w->pipe)
		w->aux_index[w->nr_aux_index++] = w->pos;
	w->pos += sizeof(rec) + size;
	w->committed = w->pos;
	return 0;
}

int auxcap_perf_writer_write_auxtrace_info(struct auxcap_perf_writer *w, uint32_t type,
					   const uint64_t *priv, size_t nr)
{
	unsigned char rec[UINT16_MAX & ~7];
	struct perf_event_header h = { AUXCAP_PERF_RECORD_AUXTRACE_INFO, 0, 0 };
	uint32_t reserved = 0;

	if (!w || (!priv && nr) || nr > (sizeof(rec) - 16) / 8)
		return -EINVAL;
	h.size = (uint16_t)(16 + nr * 8);
	memcpy(rec, &h, 8);
	memcpy(rec + 8, &type, 4);
	memcpy(rec + 12, &reserved, 4);
	if (nr)
		memcpy(rec + 16, priv, nr * 8);
	return append(w, rec, h.size);
}

int auxcap_perf_writer_write_time_conv(struct auxcap_perf_writer *w,
				       const struct auxcap_perf_time_conv *tc)
{
	unsigned char rec[56];
	struct perf_event_header h = { AUXCAP_PERF_RECORD_TIME_CONV, 0, sizeof(rec) };

	if (!w || !tc)
		return -EINVAL;
	memset(rec, 0, sizeof(rec));
	memcpy(rec, &h, 8);
	memcpy(rec + 8, &tc->time_shift, 8);
	memcpy(rec + 16, &tc->time_mult, 8);
	memcpy(rec + 24, &tc->time_zero, 8);
	memcpy(rec + 32, &tc->time_cycles, 8);
	memcpy(rec + 40, &tc->time_mask, 8);
	rec[48] = tc->cap_user_time_zero;
	rec[49] = tc->cap_user_time_short;
	return append(w, rec, sizeof(rec));
}

int auxcap_perf_writer_write_auxtrace_error(struct auxcap_perf_writer *w,
					    const struct auxcap_perf_auxtrace_error *e)
{
	unsigned char rec[112];
	struct perf_event_header h = { AUXCAP_PERF_RECORD_AUXTRACE_ERROR, 0, 0 };
	uint32_t u[6];
	size_t msg_len;

	if (!w || !e)
		return -EINVAL;
	msg_len = strnlen(e->msg, sizeof(e->msg) - 1);
	memset(rec, 0, sizeof(rec));
	u[0] = e->type;
	u[1] = e->code;
	u[2] = e->cpu;
	u[3] = e->pid;
	u[4] = e->tid;
	u[5] = 1; /* fmt 1: time present */
	memcpy(rec + 8, u, sizeof(u));
	memcpy(rec + 32, &e->ip, 8);
	memcpy(rec + 40, &e->time, 8);
	memcpy(rec + 48, e->msg, msg_len);
	h.size = (uint16_t)pd_align8(48 + msg_len + 1);
	memcpy(rec, &h, 8);
	return append(w, rec, h.size);
}

int auxcap_perf_writer_write_id_index(struct auxcap_perf_writer *w,
				      const struct auxcap_perf_id_index_entry *e, size_t nr)
{
	struct perf_event_header h = { AUXCAP_PERF_RECORD_ID_INDEX, 0, 0 };
	struct pd_buf b = { 0 };
	int r = 0;

	if (!w || (!e && nr))
		return -EINVAL;
	for (size_t i = 0; i < nr; i++)
		if (!id_used(w, e[i].id))
			return -EINVAL;
	for (size_t done = 0; done < nr && r == 0;) {
		size_t n = nr - done < PD_ID_INDEX_MAX ? nr - done : PD_ID_INDEX_MAX;

		b.len = 0;
		h.size = (uint16_t)(16 + n * 32);
		r = pd_buf_put(&b, &h, sizeof(h));
		if (r == 0)
			r = pd_buf_put_u64(&b, n);
		if (r == 0)
			r = pd_buf_put(&b, e + done, n * 32);
		if (r == 0)
			r = append(w, b.p, b.len);
		done += n;
	}
	pd_buf_free(&b);
	return r;
}

/* Addresses of _text and _etext from /proc/kallsyms; -ENOENT if hidden or absent. */
static int kernel_text(uint64_t *ret_start, uint64_t *ret_end)
{
	char line[512], name[256], type;
	unsigned long long addr, start = 0, end = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return -ENOENT;
	while ((!start || !end) && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "_text"))
			start = addr;
		else if (!strcmp(name, "_etext"))
			end = addr;
	}
	fclose(f);
	if (!start || end <= start)
		return -ENOENT;
	*ret_start = start;
	*ret_end = end;
	return 0;
}

int auxcap_perf_writer_write_kernel_mmap(struct auxcap_perf_writer *w)
{
	static const char name[] = "[kernel.kallsyms]_text";
	struct perf_event_header h = { PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, 0 };
	struct auxcap_sample_layout l;
	struct auxcap_sample_id sid;
	unsigned char rec[256];
	uint32_t pt[2] = { (uint32_t)-1, 0 };
	uint64_t start, end, len;
	size_t off;
	int r;

	if (!w)
		return -EINVAL;
	if (!w->nr_attrs)
		return -ENODATA;
	r = kernel_text(&start, &end);
	if (r < 0)
		return r;
	len = end - start;
	memset(rec, 0, sizeof(rec));
	memcpy(rec + 8, pt, 8);
	memcpy(rec + 16, &start, 8);
	memcpy(rec + 24, &len, 8);
	memcpy(rec + 32, &start, 8);
	memcpy(rec + 40, name, sizeof(name));
	off = 40 + pd_align8(sizeof(name));
	auxcap_sample_layout_from_attr(&w->attrs[0].attr, &l);
	memset(&sid, 0, sizeof(sid));
	off += auxcap_sample_id_encode(&l, &sid, rec + off);
	h.size = (uint16_t)off;
	memcpy(rec, &h, sizeof(h));
	return append(w, rec, off);
}

int auxcap_perf_writer_write_finished_round(struct auxcap_perf_writer *w)
{
	struct perf_event_header h = { AUXCAP_PERF_RECORD_FINISHED_ROUND, 0, sizeof(h) };
	int r;

	if (!w)
		return -EINVAL;
	r = append(w, &h, sizeof(h));
	if (r == 0)
		r = flush(w);
	if (r < 0 || w->pipe)
		return r;
	if (w->committed - w->data_offset - w->last_update >= w->header_update_bytes) {
		r = write_file_header(w, w->committed - w->data_offset, NULL);
		if (r < 0) {
			w->err = r;
			return r;
		}
		w->last_update = w->committed - w->data_offset;
	}
	return 0;
}

int auxcap_perf_writer_write_finished_init(struct auxcap_perf_writer *w)
{
	struct perf_event_header h = { AUXCAP_PERF_RECORD_FINISHED_INIT, 0, sizeof(h) };

	if (!w)
		return -EINVAL;
	return append(w, &h, sizeof(h));
}

uint64_t auxcap_perf_writer_data_size(const struct auxcap_perf_writer *w)
{
	if (!w || !w->started)
		return 0;
	if (w->pipe)
		return w->pos + w->buf.len;
	return w->pos + w->buf.len - w->data_offset;
}

/*
 * The reserving thread: fallocate what auxcap_perf_writer_reserve() asked for, a step at a
 * time (tmpfs holds the inode lock for a whole fallocate: a write of the writer's thread
 * waits for one step at most).  A failure drops the rest of the range; the writes then
 * allocate as usual.
 */
static void *reserve_main(void *arg)
{
	struct auxcap_perf_writer *w = arg;

	/* Background work: it must not delay the capture loop (Linux: nice is per thread). */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), RESERVE_NICE);
	pthread_mutex_lock(&w->res_lock);
	for (;;) {
		uint64_t from, len;

		while (!w->res_stop && w->res_from == w->res_to)
			pthread_cond_wait(&w->res_cond, &w->res_lock);
		if (w->res_stop)
			break;
		from = w->res_from;
		len = w->res_to - from < RESERVE_STEP ? w->res_to - from : RESERVE_STEP;
		pthread_mutex_unlock(&w->res_lock);
		len = w->io->fallocate(w->io->ctx, w->fd, FALLOC_FL_KEEP_SIZE, from, len) < 0
			      ? UINT64_MAX
			      : len;
		pthread_mutex_lock(&w->res_lock);
		w->res_from = len == UINT64_MAX ? w->res_to : from + len;
	}
	pthread_mutex_unlock(&w->res_lock);
	return NULL;
}

int auxcap_perf_writer_reserve(struct auxcap_perf_writer *w, uint64_t bytes)
{
	uint64_t from, to;
	int r;

	if (!w)
		return -EINVAL;
	if (w->pipe || !w->io->fallocate)
		return -EOPNOTSUPP;
	if (w->err)
		return w->err;
	r = start(w);
	if (r < 0)
		return r;
	from = w->pos + w->buf.len;
	to = from + bytes;
	if (w->reserved_end > from)
		from = w->reserved_end;
	if (to <= from)
		return 0;
	if (!w->res_started) {
		/* Whether this filesystem can at all, with the first byte, here. */
		r = w->io->fallocate(w->io->ctx, w->fd, FALLOC_FL_KEEP_SIZE, from, 1);
		if (r < 0)
			return r;
		pthread_mutex_init(&w->res_lock, NULL);
		pthread_cond_init(&w->res_cond, NULL);
		w->res_from = w->res_to = from;
		r = -pthread_create(&w->res_thread, NULL, reserve_main, w);
		if (r < 0) {
			pthread_cond_destroy(&w->res_cond);
			pthread_mutex_destroy(&w->res_lock);
			return r;
		}
		w->res_started = true;
	}
	pthread_mutex_lock(&w->res_lock);
	if (w->res_from == w->res_to)
		w->res_from = from;
	w->res_to = to;
	pthread_cond_signal(&w->res_cond);
	pthread_mutex_unlock(&w->res_lock);
	w->reserved_end = to;
	return 0;
}

/* --- close ------------------------------------------------------------------------------ */

/* Stop the reserving thread (what it has not done yet is not done). */
static void reserve_stop(struct auxcap_perf_writer *w)
{
	if (!w->res_started)
		return;
	pthread_mutex_lock(&w->res_lock);
	w->res_stop = true;
	pthread_cond_signal(&w->res_cond);
	pthread_mutex_unlock(&w->res_lock);
	pthread_join(w->res_thread, NULL);
	pthread_cond_destroy(&w->res_cond);
	pthread_mutex_destroy(&w->res_lock);
	w->res_started = false;
}

/* Give back the space reserved past @end, the file's final size. */
static void unreserve(struct auxcap_perf_writer *w, uint64_t end)
{
	if (w->reserved_end > end)
		(void)w->io->fallocate(w->io->ctx, w->fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE,
				       end, w->reserved_end - end);
	w->reserved_end = 0;
}

/* The payload of feature @f as it goes to the file, or NULL if it is not written. */
static int feature_payload(struct auxcap_perf_writer *w, unsigned int f, struct pd_buf *out)
{
	struct pd_attr_desc *d;
	int r = 0;

	out->len = 0;
	if (f == AUXCAP_PERF_FEAT_AUXTRACE) {
		if (!w->nr_aux_index)
			return 0;
		r = pd_buf_put_u64(out, w->nr_aux_index);
		for (size_t i = 0; i < w->nr_aux_index && r == 0; i++) {
			r = pd_buf_put_u64(out, w->aux_index[i]);
			if (r == 0)
				r = pd_buf_put_u64(out, AUXCAP_PERF_AUXTRACE_SIZE);
		}
		return r < 0 ? r : 1;
	}
	if (f == AUXCAP_PERF_FEAT_AUXCAP_SNAPSHOTS && !w->feat_set[f]) {
		if (!w->nr_snapshots)
			return 0;
		r = pd_feat_encode_snapshots(out, w->snapshots, w->nr_snapshots);
		return r < 0 ? r : 1;
	}
	if (f == AUXCAP_PERF_FEAT_BUILD_ID) {
		if (!w->build_ids.len)
			return 0;
		r = pd_buf_put(out, w->build_ids.p, w->build_ids.len);
		return r < 0 ? r : 1;
	}
	if (f == AUXCAP_PERF_FEAT_SAMPLE_TIME && !w->feat_set[f]) {
		if (!w->last_time)
			return 0;
		r = pd_buf_put_u64(out, w->first_time);
		if (r == 0)
			r = pd_buf_put_u64(out, w->last_time);
		return r < 0 ? r : 1;
	}
	if (f == AUXCAP_PERF_FEAT_EVENT_DESC && !w->feat_set[f]) {
		d = calloc(w->nr_attrs ? w->nr_attrs : 1, sizeof(*d));
		if (!d)
			return -ENOMEM;
		for (size_t i = 0; i < w->nr_attrs; i++)
			d[i] = (struct pd_attr_desc){ &w->attrs[i].attr, w->attrs[i].name,
						      w->attrs[i].ids, w->attrs[i].nr_ids };
		r = pd_feat_encode_event_desc(out, d, w->nr_attrs);
		free(d);
		return r < 0 ? r : (w->nr_attrs ? 1 : 0);
	}
	if (!w->feat_set[f])
		return 0;
	r = pd_buf_put(out, w->feat[f].p, w->feat[f].len);
	return r < 0 ? r : 1;
}

/* Table of {offset, size} per feature in bit order, then the payloads, at @w->committed. */
static int write_features(struct auxcap_perf_writer *w, uint64_t feats[4], uint64_t *ret_end)
{
	struct pd_buf table = { 0 }, body = { 0 }, one = { 0 };
	unsigned int nr = 0;
	uint64_t off;
	struct iovec iov[2];
	int r = 0;

	memset(feats, 0, 4 * sizeof(uint64_t));
	for (unsigned int f = 1; f < AUXCAP_PERF_FEAT_BITS && r == 0; f++) {
		r = feature_payload(w, f, &one);
		if (r == 1) {
			feats[f / 64] |= 1ULL << (f % 64);
			nr++;
			r = pd_buf_put(&body, one.p, one.len);
			if (r == 0)
				r = pd_buf_put_u64(&table, one.len); /* offset fixed up below */
			if (r == 0)
				r = pd_buf_put_u64(&table, one.len);
		}
	}
	if (r < 0 || (nr && !table.p))
		goto out;
	off = w->committed + (uint64_t)nr * 16;
	for (unsigned int i = 0; i < nr; i++) {
		uint64_t size;

		memcpy(&size, table.p + (size_t)i * 16 + 8, 8);
		memcpy(table.p + (size_t)i * 16, &off, 8);
		off += size;
	}
	iov[0] = (struct iovec){ table.p, table.len };
	iov[1] = (struct iovec){ body.p, body.len };
	r = write_all(w, iov, 2, (int64_t)w->committed);
	if (r == 0)
		*ret_end = off;
out:
	pd_buf_free(&table);
	pd_buf_free(&body);
	pd_buf_free(&one);
	return r;
}

static bool is_regular(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * After a failed write part of the buffer may be on disk beyond @w->committed: find the end of
 * the last complete record in the file (AUXTRACE payloads included) so the header covers it.
 */
static void recover_committed(struct auxcap_perf_writer *w)
{
	struct stat st;
	uint64_t pos = w->committed, end;

	if (fstat(w->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	end = (uint64_t)st.st_size;
	while (pos + sizeof(struct perf_event_header) <= end) {
		struct perf_event_header h;
		uint64_t len, payload = 0;

		if (pread(w->fd, &h, sizeof(h), (off_t)pos) != (ssize_t)sizeof(h) ||
		    h.size < sizeof(h) || (h.size & 7))
			break;
		len = h.size;
		if (h.type == AUXCAP_PERF_RECORD_AUXTRACE) {
			if (h.size < 16 ||
			    pread(w->fd, &payload, 8, (off_t)(pos + 8)) != 8 || (payload & 7))
				break;
			len += payload;
		}
		if (pos + len > end)
			break;
		pos += len;
	}
	w->committed = pos;
}

static int close_file(struct auxcap_perf_writer *w)
{
	uint64_t feats[4], end = 0;
	int r;

	if (!w->err && !w->started)
		(void)start(w);
	if (!w->err)
		(void)flush(w);
	if (!w->started) {
		/* Not even the header and attrs made it: leave no half-written header. */
		if (is_regular(w->fd))
			(void)w->io->truncate(w->io->ctx, w->fd, 0);
		return w->err ? w->err : -ENODATA;
	}
	if (!w->err) {
		auto_tracing_data(w);
		r = write_features(w, feats, &end);
		if (r == 0 && is_regular(w->fd))
			r = w->io->truncate(w->io->ctx, w->fd, end);
		if (r == 0)
			unreserve(w, end);
		if (r == 0)
			r = write_file_header(w, w->committed - w->data_offset, feats);
		if (r == 0)
			return 0;
		w->err = r;
	}
	/* Failure: keep every complete record, drop the rest, no features. */
	recover_committed(w);
	if (is_regular(w->fd))
		(void)w->io->truncate(w->io->ctx, w->fd, w->committed);
	unreserve(w, w->committed);
	(void)write_file_header(w, w->committed - w->data_offset, NULL);
	return w->err;
}

static int close_pipe(struct auxcap_perf_writer *w)
{
	if (!w->err && !w->started)
		(void)start(w);
	if (w->err)
		return w->err;
	/*
	 * Build-ids travel as HEADER_BUILD_ID records: the feature entries have the same layout,
	 * but perf leaves their type 0 in files, so set it.
	 */
	for (size_t off = w->pipe_build_ids_sent;
	     off + sizeof(struct perf_event_header) <= w->build_ids.len;) {
		struct perf_event_header h;

		memcpy(&h, w->build_ids.p + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > w->build_ids.len - off)
			break; /* a malformed copied feature: send what is sound */
		h.type = AUXCAP_PERF_RECORD_HEADER_BUILD_ID;
		if (pd_buf_put(&w->buf, &h, sizeof(h)) < 0 ||
		    pd_buf_put(&w->buf, w->build_ids.p + off + sizeof(h), h.size - sizeof(h)) < 0)
			return -ENOMEM;
		off += h.size;
	}
	w->pipe_build_ids_sent = w->build_ids.len;
	/*
	 * No snapshot table here: perf 6.1 aborts on a HEADER_FEATURE record of a bit it does
	 * not know ("failed: wrong feature ID: 255"), so it exists in file mode only.
	 */
	return flush(w);
}

int auxcap_perf_writer_close(struct auxcap_perf_writer *w)
{
	int r;

	if (!w)
		return 0;
	reserve_stop(w);
	r = w->pipe ? close_pipe(w) : close_file(w);
	if (w->own_fd && close(w->fd) < 0 && r == 0)
		r = -errno;
	for (size_t i = 0; i < w->nr_attrs; i++) {
		free(w->attrs[i].ids);
		free(w->attrs[i].name);
	}
	free(w->attrs);
	for (unsigned int i = 0; i < AUXCAP_PERF_FEAT_BITS; i++)
		pd_buf_free(&w->feat[i]);
	pd_buf_free(&w->build_ids);
	pd_buf_free(&w->buf);
	free(w->aux_index);
	for (size_t i = 0; i < w->nr_files; i++)
		free(w->files[i].name);
	free(w->files);
	free(w->snapshots);
	free(w);
	return r;
}
