/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private helpers shared by the perf.data reader, writer and feature code: a growable byte
 * buffer, the perf header-string encoding, and the feature store of a reader.
 */
#ifndef AUXCAP_PERF_DATA_INT_H
#define AUXCAP_PERF_DATA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auxcap/perf_data.h"

#define PD_NAME_ALIGN	      64     /* header strings are padded to this, bytes */
#define PD_BUILD_ID_FIXED     36     /* header + pid + 24-byte build-id union, bytes */
#define PD_MISC_BUILD_ID_SIZE 0x8000 /* build-id record: the size byte is valid */
#define PD_ID_INDEX_MAX	      2000   /* entries per ID_INDEX record (64 KiB limit) */

static inline uint64_t pd_align8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

/** A growable byte buffer; all functions return 0 or -ENOMEM. */
struct pd_buf {
	unsigned char *p; /* owned */
	size_t len;	  /* bytes used */
	size_t cap;	  /* bytes allocated */
};

int pd_buf_put(struct pd_buf *b, const void *data, size_t n);
int pd_buf_put_u32(struct pd_buf *b, uint32_t v);
int pd_buf_put_u64(struct pd_buf *b, uint64_t v);
int pd_buf_put_zeros(struct pd_buf *b, size_t n);
/** A perf header string: u32 len (NUL included, rounded up to 64), bytes, zero padding. */
int pd_buf_put_string(struct pd_buf *b, const char *s);
void pd_buf_free(struct pd_buf *b);

/** Attr + name + ids as the writer keeps them and EVENT_DESC encodes them. */
struct pd_attr_desc {
	const struct perf_event_attr *attr; /* borrowed */
	const char *name;		    /* borrowed, may be NULL */
	const uint64_t *ids;		    /* borrowed */
	size_t nr_ids;
};

/** Encode EVENT_DESC for @nr events (attrs written with size AUXCAP_PERF_ATTR_SIZE). */
int pd_feat_encode_event_desc(struct pd_buf *b, const struct pd_attr_desc *d, size_t nr);

/** Encode the AUXCAP_SNAPSHOTS payload for @nr entries. */
int pd_feat_encode_snapshots(struct pd_buf *b, const struct auxcap_perf_snapshot *s, size_t nr);

/** Encode one BUILD_ID entry (the feature payload is a run of these). */
int pd_feat_encode_build_id(struct pd_buf *b, uint16_t cpumode, int32_t pid,
			    const uint8_t *build_id, size_t size, const char *filename);

/** Encode the host's features into @payload[feat] / @size[feat] (allocations owned by caller). */
struct pd_host_feats {
	struct pd_buf feat[AUXCAP_PERF_FEAT_LAST]; /* empty buffer = not found */
};
int pd_feat_host(struct pd_host_feats *h);

/**
 * Encode TRACING_DATA (perf's "0.6" tracing-data layout) for the @nr tracepoints @events
 * ("sys:name") from the tracefs mounted at @tracefs.
 * Returns 0, -EINVAL for a malformed name, the errno of a missing format file, -ENOMEM.
 */
int pd_feat_tracing_data(struct pd_buf *b, const char *tracefs, const char *const *events,
			 size_t nr);

/** Owned storage behind a reader's struct auxcap_perf_features. */
struct pd_feat_store {
	struct auxcap_perf_features f;	      /* what users see; points into the fields below */
	char *strings[AUXCAP_PERF_FEAT_LAST]; /* owned, indexed by feature bit */
	char **cmdline;			      /* owned array of owned strings */
	size_t nr_cmdline;
	struct auxcap_perf_build_id *build_ids; /* owned; filenames owned */
	size_t nr_build_ids;
	struct auxcap_perf_auxtrace_index_entry *auxtrace_index; /* owned */
	size_t nr_auxtrace_index;
	struct auxcap_perf_snapshot *snapshots; /* owned */
	size_t nr_snapshots;
	struct auxcap_perf_tp_format_text *tp_formats; /* owned; strings owned */
	size_t nr_tp_formats;
};

/** A name of an EVENT_DESC entry, for the reader to match to its evsels. */
typedef void (*pd_event_name_fn)(void *ctx, const uint64_t *ids, size_t nr_ids, const char *name);

/**
 * Decode feature @feat of @len bytes at @p (starting at file offset @off) into @st.
 * Unknown features are ignored.  @name_fn is called for each EVENT_DESC entry.
 * Returns 0, -ENOMEM, or -EBADMSG with a message in @err.
 */
int pd_feat_parse(struct pd_feat_store *st, unsigned int feat, const unsigned char *p, size_t len,
		  uint64_t off, pd_event_name_fn name_fn, void *name_ctx, char *err,
		  size_t err_size);

void pd_feat_store_fini(struct pd_feat_store *st);

#endif /* AUXCAP_PERF_DATA_INT_H */
