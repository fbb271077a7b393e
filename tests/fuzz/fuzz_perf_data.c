/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the perf.data reader (core/perf_data_read.c, core/perf_data_feat.c,
 * core/record.c).
 *
 * The input is a whole file.  It is read twice: as a regular file (a memfd, mapped by the
 * reader) with decoded records, and as a stream through a pipe (pipe mode; a file-mode header
 * is refused there, a pipe-mode one is read record by record), then once more as a file with
 * AUXCAP_PERF_READ_RAW.  Every borrowed pointer the reader hands out (strings, arrays,
 * AUXTRACE payloads) is read through, the AUXTRACE index is checked against the records, and
 * a rewound second walk must return the same records.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "auxcap/perf_data.h"
#include "auxcap/tracepoint.h"
#include "fuzz.h"

#define MAX_RECORDS 200000 /* bound per walk; a walk always ends, this only caps time */

static int g_memfd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	g_memfd = memfd_create("fuzz-perf-data", MFD_CLOEXEC);
	if (g_memfd < 0) {
		perror("memfd_create");
		abort();
	}
	return 0;
}

static void touch_sample(const struct auxcap_sample *s)
{
	fuzz_touch(s->read.data, s->read.size);
	fuzz_touch(s->callchain.ips, (size_t)s->callchain.nr * 8);
	fuzz_touch(s->raw.data, s->raw.size);
	fuzz_touch(s->branch_stack.entries, (size_t)s->branch_stack.nr * 24);
	fuzz_touch(s->regs_user.regs, (size_t)s->regs_user.nr * 8);
	fuzz_touch(s->regs_intr.regs, (size_t)s->regs_intr.nr * 8);
	fuzz_touch(s->stack_user.data, (size_t)s->stack_user.size);
	fuzz_touch(s->aux.data, (size_t)s->aux.size);
}

static void touch_record(const struct auxcap_record *rec)
{
	fuzz_touch(rec->data, rec->size);
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		fuzz_strlen(rec->u.mmap.filename);
		fuzz_touch(rec->u.mmap.build_id, rec->u.mmap.build_id_size);
		break;
	case PERF_RECORD_COMM:
		fuzz_strlen(rec->u.comm.comm);
		break;
	case PERF_RECORD_READ:
		fuzz_touch(rec->u.read.values, rec->u.read.size);
		break;
	case PERF_RECORD_SAMPLE:
		touch_sample(&rec->u.sample);
		break;
	case PERF_RECORD_NAMESPACES:
		fuzz_touch(rec->u.namespaces.link_info, (size_t)rec->u.namespaces.nr * 16);
		break;
	case PERF_RECORD_KSYMBOL:
		fuzz_strlen(rec->u.ksymbol.name);
		break;
	case PERF_RECORD_CGROUP:
		fuzz_strlen(rec->u.cgroup.path);
		break;
	case PERF_RECORD_TEXT_POKE:
		fuzz_touch(rec->u.text_poke.bytes,
			   (size_t)rec->u.text_poke.old_len + rec->u.text_poke.new_len);
		break;
	default:
		break;
	}
}

static void touch_event(const struct auxcap_perf_event *ev, unsigned int flags)
{
	FUZZ_CHECK(ev->rec.size >= 8);
	switch (ev->rec.type) {
	case AUXCAP_PERF_RECORD_AUXTRACE:
		fuzz_touch(ev->u.auxtrace.data, (size_t)ev->u.auxtrace.size);
		break;
	case AUXCAP_PERF_RECORD_AUXTRACE_INFO:
		fuzz_touch(ev->u.auxtrace_info.priv, ev->u.auxtrace_info.nr * 8);
		break;
	case AUXCAP_PERF_RECORD_AUXTRACE_ERROR:
		FUZZ_CHECK(memchr(ev->u.auxtrace_error.msg, 0, sizeof(ev->u.auxtrace_error.msg)));
		break;
	case AUXCAP_PERF_RECORD_ID_INDEX:
		fuzz_touch(ev->u.id_index.entries, (size_t)ev->u.id_index.nr * 32);
		break;
	default:
		if (ev->rec.type < AUXCAP_PERF_RECORD_HEADER_ATTR && !(flags & AUXCAP_PERF_READ_RAW))
			touch_record(&ev->rec);
		else
			fuzz_touch(ev->rec.data, ev->rec.size);
		break;
	}
	if (ev->evsel)
		fuzz_touch(ev->evsel->attr, sizeof(*ev->evsel->attr));
}

static void touch_features(const struct auxcap_perf_features *f)
{
	fuzz_strlen(f->hostname);
	fuzz_strlen(f->osrelease);
	fuzz_strlen(f->version);
	fuzz_strlen(f->arch);
	fuzz_strlen(f->cpudesc);
	fuzz_strlen(f->cpuid);
	for (size_t i = 0; i < f->nr_cmdline; i++)
		fuzz_strlen(f->cmdline[i]);
	for (size_t i = 0; i < f->nr_build_ids; i++) {
		FUZZ_CHECK(f->build_ids[i].size <= 20);
		fuzz_strlen(f->build_ids[i].filename);
	}
	fuzz_touch(f->auxtrace_index, f->nr_auxtrace_index * sizeof(*f->auxtrace_index));
	for (size_t i = 0; i < f->nr_tp_formats; i++) {
		struct auxcap_tp_format *tf;

		fuzz_strlen(f->tp_formats[i].system);
		fuzz_touch(f->tp_formats[i].text, f->tp_formats[i].len);
		/* the format text too: parsed, every field inside a record */
		if (auxcap_tp_format_parse(f->tp_formats[i].text, f->tp_formats[i].len, &tf) == 0) {
			for (size_t k = 0; k < tf->nr_fields; k++)
				FUZZ_CHECK(tf->fields[k].offset + tf->fields[k].size <= 65536);
			auxcap_tp_format_free(tf);
		}
	}
}

/* Walk the records; returns how many, and a checksum of their offsets and types. */
static size_t walk(struct auxcap_perf_reader *r, unsigned int flags, uint64_t *sum)
{
	struct auxcap_perf_event ev;
	uint64_t last = 0;
	size_t n = 0;
	int ret;

	memset(&ev, 0, sizeof(ev));
	*sum = 0;
	while (n < MAX_RECORDS && (ret = auxcap_perf_reader_next(r, &ev)) == 1) {
		/* Records come in stream order. */
		FUZZ_CHECK(n == 0 || ev.offset > last);
		last = ev.offset;
		touch_event(&ev, flags);
		*sum = *sum * 31 + ev.offset * 7 + ev.rec.type;
		n++;
	}
	if (n < MAX_RECORDS) {
		FUZZ_CHECK(ret <= 0);
		if (ret < 0)
			fuzz_strlen(auxcap_perf_reader_error(r));
	}
	return n;
}

static void check_reader(struct auxcap_perf_reader *r, unsigned int flags)
{
	const struct auxcap_perf_file_info *info = auxcap_perf_reader_info(r);
	const struct auxcap_perf_auxtrace_index_entry *idx;
	size_t nsel = auxcap_perf_reader_nr_evsels(r), nidx, n1, n2;
	uint64_t s1, s2;

	FUZZ_CHECK(info);
	for (size_t i = 0; i < nsel; i++) {
		const struct auxcap_perf_evsel *e = auxcap_perf_reader_evsel(r, i);

		FUZZ_CHECK(e && e->attr);
		fuzz_touch(e->ids, e->nr_ids * 8);
		fuzz_strlen(e->name);
		for (size_t k = 0; k < e->nr_ids; k++)
			FUZZ_CHECK(auxcap_perf_reader_find_id(r, e->ids[k]) == e);
	}
	FUZZ_CHECK(!auxcap_perf_reader_evsel(r, nsel));
	touch_features(auxcap_perf_reader_features(r));
	for (unsigned int f = 0; f < AUXCAP_PERF_FEAT_BITS; f++) {
		const void *d;
		size_t sz;

		if (auxcap_perf_reader_feature_raw(r, f, &d, &sz) == 0)
			fuzz_touch(d, sz);
	}
	n1 = walk(r, flags, &s1);
	if (auxcap_perf_reader_auxtrace_index(r, &idx, &nidx) == 0) {
		for (size_t i = 0; i < nidx; i++)
			FUZZ_CHECK(idx[i].size >= AUXCAP_PERF_AUXTRACE_SIZE &&
				   idx[i].offset < info->file_size);
	}
	if (auxcap_perf_reader_rewind(r) == 0) {
		n2 = walk(r, flags, &s2);
		FUZZ_CHECK(n1 == n2 && s1 == s2);
	}
}

static void run_file(const uint8_t *data, size_t size, unsigned int flags)
{
	struct auxcap_perf_reader_opts o = { .sz = sizeof(o), .flags = flags };
	struct auxcap_perf_reader *r;
	char errbuf[256];

	o.errbuf = errbuf;
	o.errbuf_size = sizeof(errbuf);
	errbuf[0] = '\0';
	if (auxcap_perf_reader_open_fd(g_memfd, &o, &r) < 0) {
		FUZZ_CHECK(memchr(errbuf, 0, sizeof(errbuf)));
		return;
	}
	(void)data;
	(void)size;
	check_reader(r, flags);
	auxcap_perf_reader_close(r);
}

static void run_pipe(const uint8_t *data, size_t size)
{
	struct auxcap_perf_reader_opts o = { .sz = sizeof(o), .max_payload = 1 << 20 };
	struct auxcap_perf_reader *r;
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	/* The whole input must fit in the pipe: nobody reads while we write. */
	if (size > 65536 && (fcntl(p[1], F_SETPIPE_SZ, (int)size) < 0 ||
			     (size_t)fcntl(p[1], F_GETPIPE_SZ) < size))
		goto out;
	if (size && write(p[1], data, size) != (ssize_t)size)
		goto out;
	close(p[1]);
	p[1] = -1;
	if (auxcap_perf_reader_open_fd(p[0], &o, &r) == 0) {
		check_reader(r, 0);
		auxcap_perf_reader_close(r);
	}
out:
	close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (g_memfd < 0)
		LLVMFuzzerInitialize(NULL, NULL);
	if (size > (8u << 20))
		return 0;
	if (ftruncate(g_memfd, 0) < 0 || (size && pwrite(g_memfd, data, size, 0) != (ssize_t)size))
		abort();
	run_file(data, size, 0);
	run_file(data, size, AUXCAP_PERF_READ_RAW);
	run_pipe(data, size);
	return 0;
}
