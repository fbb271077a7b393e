/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap info FILE: header, events, features, record counts, AUX buffers, losses.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "auxcap/perf_data.h"
#include "auxcap/tracepoint.h"
#include "auxcap/session.h"
#include "cli.h"

#define NR_TYPES 128 /* record types counted one by one; others are "unknown" */

struct aux_queue {
	uint32_t idx, cpu, tid;
	uint64_t records; /* AUXTRACE records */
	uint64_t bytes;	  /* payload bytes */
};

struct info_stats {
	uint64_t count[NR_TYPES];
	uint64_t unknown;
	uint64_t lost_sum;	   /* sum of LOST.lost */
	uint64_t lost_samples_sum; /* sum of LOST_SAMPLES.lost */
	uint64_t aux_flags[4];	   /* TRUNCATED, OVERWRITE, PARTIAL, COLLISION */
	uint64_t aux_bytes;	   /* bytes the kernel reported in AUX records */
	bool have_auxtrace_info;   /* an AUXTRACE_INFO record was seen (the last one below) */
	uint32_t auxtrace_type;	   /* its auxtrace type */
	size_t auxtrace_priv;	   /* its number of u64 words */
	bool have_time_conv;	   /* a TIME_CONV record was seen (the last one below) */
	struct auxcap_perf_time_conv time_conv;
	uint64_t first_time, last_time; /* sample time span, ns (0: no timed sample) */
	struct aux_queue *queues;
	size_t nr_queues;
};

static int add_aux(struct info_stats *s, const struct auxcap_perf_event *ev)
{
	struct aux_queue *q = NULL, *nv;

	for (size_t i = 0; i < s->nr_queues; i++)
		if (s->queues[i].idx == ev->u.auxtrace.idx &&
		    s->queues[i].cpu == ev->u.auxtrace.cpu &&
		    s->queues[i].tid == ev->u.auxtrace.tid)
			q = &s->queues[i];
	if (!q) {
		nv = realloc(s->queues, (s->nr_queues + 1) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->queues = nv;
		q = &s->queues[s->nr_queues++];
		memset(q, 0, sizeof(*q));
		q->idx = ev->u.auxtrace.idx;
		q->cpu = ev->u.auxtrace.cpu;
		q->tid = ev->u.auxtrace.tid;
	}
	q->records++;
	q->bytes += ev->u.auxtrace.size;
	return 0;
}

static int account(struct info_stats *s, const struct auxcap_perf_event *ev)
{
	uint32_t t = ev->rec.type;

	if (t < NR_TYPES)
		s->count[t]++;
	else
		s->unknown++;
	switch (t) {
	case PERF_RECORD_LOST:
		s->lost_sum += ev->rec.u.lost.lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		s->lost_samples_sum += ev->rec.u.lost_samples.lost;
		break;
	case PERF_RECORD_AUX:
		s->aux_bytes += ev->rec.u.aux.aux_size;
		for (unsigned int b = 0; b < 4; b++)
			if (ev->rec.u.aux.flags & (1u << b))
				s->aux_flags[b]++;
		break;
	case PERF_RECORD_SAMPLE:
		if (ev->evsel && (ev->evsel->attr->sample_type & PERF_SAMPLE_TIME)) {
			uint64_t ts = ev->rec.u.sample.time;

			if (!s->first_time || ts < s->first_time)
				s->first_time = ts;
			if (ts > s->last_time)
				s->last_time = ts;
		}
		break;
	case AUXCAP_PERF_RECORD_AUXTRACE_INFO:
		s->have_auxtrace_info = true;
		s->auxtrace_type = ev->u.auxtrace_info.type;
		s->auxtrace_priv = ev->u.auxtrace_info.nr;
		break;
	case AUXCAP_PERF_RECORD_TIME_CONV:
		s->have_time_conv = true;
		s->time_conv = ev->u.time_conv;
		break;
	case AUXCAP_PERF_RECORD_AUXTRACE:
		return add_aux(s, ev);
	default:
		break;
	}
	return 0;
}

static void print_sample_type(uint64_t t)
{
	static const char *const names[] = { "IP",
					     "TID",
					     "TIME",
					     "ADDR",
					     "READ",
					     "CALLCHAIN",
					     "ID",
					     "CPU",
					     "PERIOD",
					     "STREAM_ID",
					     "RAW",
					     "BRANCH_STACK",
					     "REGS_USER",
					     "STACK_USER",
					     "WEIGHT",
					     "DATA_SRC",
					     "IDENTIFIER",
					     "TRANSACTION",
					     "REGS_INTR",
					     "PHYS_ADDR",
					     "AUX",
					     "CGROUP",
					     "DATA_PAGE_SIZE",
					     "CODE_PAGE_SIZE",
					     "WEIGHT_STRUCT" };
	const char *sep = "";

	printf("0x%" PRIx64 " (", t);
	for (unsigned int b = 0; b < 64; b++) {
		if (!(t & (1ULL << b)))
			continue;
		if (b < sizeof(names) / sizeof(names[0]))
			printf("%s%s", sep, names[b]);
		else
			printf("%sbit%u", sep, b);
		sep = "|";
	}
	printf(")");
}

static void print_events(const struct auxcap_perf_reader *r)
{
	size_t n = auxcap_perf_reader_nr_evsels(r);

	printf("events: %zu\n", n);
	for (size_t i = 0; i < n; i++) {
		const struct auxcap_perf_evsel *e = auxcap_perf_reader_evsel(r, i);

		printf("  [%zu] %s: type %u config 0x%" PRIx64 " sample_type ", i,
		       e->name ? e->name : "(unnamed)", e->attr->type, (uint64_t)e->attr->config);
		print_sample_type(e->attr->sample_type);
		printf(" sample_id_all %u\n      ids (%zu):", e->attr->sample_id_all, e->nr_ids);
		for (size_t j = 0; j < e->nr_ids && j < 16; j++)
			printf(" %" PRIu64, e->ids[j]);
		if (e->nr_ids > 16)
			printf(" ...");
		printf("\n");
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The AUXCAP_SNAPSHOTS table: a summary line, then one line per snapshot (the first 64). */
static void print_snapshots(const struct auxcap_perf_features *f)
{
	uint64_t by_source[AUXCAP_TRIGGER_SOURCE_MAX] = { 0 }, *lat;
	size_t n = f->nr_snapshots;
	const char *sep = "";

	printf("  %-10s %zu:", "auxcap_snapshots", n);
	for (size_t i = 0; i < n; i++)
		by_source[f->snapshots[i].source < AUXCAP_TRIGGER_SOURCE_MAX
				  ? f->snapshots[i].source
				  : 0]++;
	for (unsigned int k = 0; k < AUXCAP_TRIGGER_SOURCE_MAX; k++) {
		if (!by_source[k])
			continue;
		printf("%s %" PRIu64 " %s", sep, by_source[k], auxcap_trigger_source_name(k));
		sep = ",";
	}
	lat = calloc(n ? n : 1, sizeof(*lat));
	if (lat && n) {
		for (size_t i = 0; i < n; i++)
			lat[i] = f->snapshots[i].frozen_ns > f->snapshots[i].trigger_ns
					 ? f->snapshots[i].frozen_ns - f->snapshots[i].trigger_ns
					 : 0;
		size_t mid = n / 2;

		qsort(lat, n, sizeof(*lat), cmp_u64);
		printf("; trigger to frozen: min %.1f us, median %.1f us, max %.1f us",
		       (double)lat[0] / 1e3, (double)lat[mid] / 1e3, (double)lat[n - 1] / 1e3);
	}
	free(lat);
	printf("\n");
	for (size_t i = 0; i < n && i < 64; i++) {
		const struct auxcap_perf_snapshot *sn = &f->snapshots[i];

		printf("    #%zu %s", i, auxcap_trigger_source_name(sn->source));
		if (sn->tid != (uint32_t)-1)
			printf(" tid %u", sn->tid);
		if (sn->cpu != (uint32_t)-1)
			printf(" cpu %u", sn->cpu);
		printf(": at %" PRIu64 ".%09" PRIu64 " s, frozen after %.1f us, %u coalesced, "
		       "data to %" PRIu64,
		       sn->trigger_ns / 1000000000, sn->trigger_ns % 1000000000,
		       sn->frozen_ns > sn->trigger_ns ? (double)(sn->frozen_ns - sn->trigger_ns) / 1e3
						      : 0.0,
		       sn->coalesced, sn->data_end);
		if (sn->call_ns) {
			char b[32];

			printf(", after a call of %s", cli_duration_str(b, sizeof(b), sn->call_ns));
		}
		putchar('\n');
	}
	if (n > 64)
		printf("    ... %zu more\n", n - 64);
}

/* ", N tracepoint formats: sched:sched_switch (ID 372), ..." */
static void print_tp_formats(const struct auxcap_perf_features *f)
{
	printf(", %zu tracepoint format%s%s", f->nr_tp_formats, f->nr_tp_formats == 1 ? "" : "s",
	       f->nr_tp_formats ? ":" : " (none readable)");
	for (size_t i = 0; i < f->nr_tp_formats; i++) {
		struct auxcap_tp_format *tf;

		if (auxcap_tp_format_parse(f->tp_formats[i].text, f->tp_formats[i].len, &tf) < 0) {
			printf("%s %s:? (unreadable)", i ? "," : "", f->tp_formats[i].system);
			continue;
		}
		printf("%s %s:%s (ID %" PRIu64 ", %zu fields)", i ? "," : "", f->tp_formats[i].system,
		       tf->name ? tf->name : "?", tf->id, tf->nr_fields);
		auxcap_tp_format_free(tf);
	}
}

static void print_features(const struct auxcap_perf_reader *r)
{
	const struct auxcap_perf_features *f = auxcap_perf_reader_features(r);
	const char *strs[][2] = {
		{ "hostname", f->hostname }, { "osrelease", f->osrelease },
		{ "version", f->version },   { "arch", f->arch },
		{ "cpudesc", f->cpudesc },   { "cpuid", f->cpuid },
	};
	const char *sep = "";

	printf("features:");
	for (unsigned int b = 0; b < AUXCAP_PERF_FEAT_BITS; b++) {
		const char *name = auxcap_perf_feat_name(b);

		if (!(f->present[b / 64] & (1ULL << (b % 64))))
			continue;
		if (name)
			printf("%s %s", sep, name);
		else
			printf("%s bit%u", sep, b);
		sep = ",";
	}
	printf("\n");
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (strs[i][1])
			printf("  %-10s %s\n", strs[i][0], strs[i][1]);
	if (f->nr_cpus_avail)
		printf("  %-10s %u available, %u online\n", "nrcpus", f->nr_cpus_avail,
		       f->nr_cpus_online);
	if (f->total_mem)
		printf("  %-10s %" PRIu64 " kB\n", "total_mem", f->total_mem);
	if (f->nr_cmdline) {
		printf("  %-10s", "cmdline");
		for (size_t i = 0; i < f->nr_cmdline; i++)
			printf(" %s", f->cmdline[i]);
		printf("\n");
	}
	if (f->nr_build_ids)
		printf("  %-10s %zu entries\n", "build_id", f->nr_build_ids);
	for (size_t i = 0; i < f->nr_build_ids && i < 8; i++) {
		const struct auxcap_perf_build_id *b = &f->build_ids[i];

		printf("    ");
		for (unsigned int j = 0; j < b->size; j++)
			printf("%02x", b->id[j]);
		printf(" %s\n", b->filename);
	}
	if (f->nr_auxtrace_index)
		printf("  %-10s %zu AUXTRACE records indexed\n", "auxtrace", f->nr_auxtrace_index);
	for (unsigned int b = 0; b < AUXCAP_PERF_FEAT_BITS; b++) {
		static const unsigned int shown[] = {
			AUXCAP_PERF_FEAT_HOSTNAME,   AUXCAP_PERF_FEAT_OSRELEASE,
			AUXCAP_PERF_FEAT_VERSION,    AUXCAP_PERF_FEAT_ARCH,
			AUXCAP_PERF_FEAT_CPUDESC,    AUXCAP_PERF_FEAT_CPUID,
			AUXCAP_PERF_FEAT_NRCPUS,     AUXCAP_PERF_FEAT_TOTAL_MEM,
			AUXCAP_PERF_FEAT_CMDLINE,    AUXCAP_PERF_FEAT_BUILD_ID,
			AUXCAP_PERF_FEAT_AUXTRACE,   AUXCAP_PERF_FEAT_CLOCKID,
			AUXCAP_PERF_FEAT_CLOCK_DATA, AUXCAP_PERF_FEAT_SAMPLE_TIME,
			AUXCAP_PERF_FEAT_AUXCAP_SNAPSHOTS,
		};
		const char *name = auxcap_perf_feat_name(b);
		const void *p;
		size_t len;
		bool done = false;

		for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
			done = done || shown[i] == b;
		if (done)
			continue;
		if (auxcap_perf_reader_feature_raw(r, b, &p, &len) < 0) {
			if (b == AUXCAP_PERF_FEAT_TRACING_DATA) { /* a pipe's TRACING_DATA record */
				printf("  %-10s in the stream", name);
				print_tp_formats(f);
				putchar('\n');
			}
			continue;
		}
		if (name)
			printf("  %-10s %zu bytes", name, len);
		else
			printf("  bit%-7u %zu bytes", b, len);
		if (b == AUXCAP_PERF_FEAT_TRACING_DATA)
			print_tp_formats(f);
		putchar('\n');
	}
	if (f->present[0] & (1ULL << AUXCAP_PERF_FEAT_SAMPLE_TIME))
		printf("  %-10s %" PRIu64 " to %" PRIu64 " ns\n", "sample_time",
		       f->sample_time_first, f->sample_time_last);
	if (f->clockid_res_ns)
		printf("  %-10s resolution %" PRIu64 " ns\n", "clockid", f->clockid_res_ns);
	if (f->has_clock_data)
		printf("  %-10s clockid %u, tod %" PRIu64 " ns = clock %" PRIu64 " ns\n",
		       "clock_data", f->clockid, f->clock_tod_ns, f->clock_clockid_ns);
	if (f->present[AUXCAP_PERF_FEAT_AUXCAP_SNAPSHOTS / 64] &
	    (1ULL << (AUXCAP_PERF_FEAT_AUXCAP_SNAPSHOTS % 64)))
		print_snapshots(f);
}

static const char *auxtrace_type_name(uint32_t t)
{
	static const char *const names[] = { "unknown", "intel_pt",    "intel_bts", "cs_etm",
					     "arm_spe", "s390_cpumsf", "hisi_ptt" };

	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

static void print_stats(const struct info_stats *s)
{
	static const char *const flag_names[] = { "TRUNCATED", "OVERWRITE", "PARTIAL",
						  "COLLISION" };
	uint64_t total = s->unknown;

	for (unsigned int t = 0; t < NR_TYPES; t++)
		total += s->count[t];
	printf("records: %" PRIu64 "\n", total);
	for (unsigned int t = 0; t < NR_TYPES; t++) {
		const char *name = auxcap_record_type_name(t);

		if (!s->count[t])
			continue;
		if (name)
			printf("  %-18s %" PRIu64 "\n", name, s->count[t]);
		else
			printf("  type %-13u %" PRIu64 "\n", t, s->count[t]);
	}
	if (s->unknown)
		printf("  %-18s %" PRIu64 "\n", "(type >= 128)", s->unknown);

	if (s->last_time)
		printf("samples: time %" PRIu64 ".%09" PRIu64 " to %" PRIu64 ".%09" PRIu64
		       " (%.6f s)\n",
		       s->first_time / 1000000000, s->first_time % 1000000000,
		       s->last_time / 1000000000, s->last_time % 1000000000,
		       (double)(s->last_time - s->first_time) / 1e9);
	if (s->have_auxtrace_info)
		printf("AUXTRACE_INFO: type %u (%s), %zu u64 of backend data\n", s->auxtrace_type,
		       auxtrace_type_name(s->auxtrace_type), s->auxtrace_priv);
	if (s->have_time_conv)
		printf("TIME_CONV: shift %" PRIu64 " mult %" PRIu64 " zero %" PRIu64
		       " cap_user_time_zero %d\n",
		       s->time_conv.time_shift, s->time_conv.time_mult, s->time_conv.time_zero,
		       s->time_conv.cap_user_time_zero);
	printf("AUX buffers: %zu\n", s->nr_queues);
	for (size_t i = 0; i < s->nr_queues; i++) {
		const struct aux_queue *q = &s->queues[i];

		printf("  idx %u cpu %d tid %d: %" PRIu64 " records, %" PRIu64 " bytes\n", q->idx,
		       (int32_t)q->cpu, (int32_t)q->tid, q->records, q->bytes);
	}
	printf("loss:\n");
	printf("  LOST: %" PRIu64 " records, %" PRIu64 " events lost\n", s->count[PERF_RECORD_LOST],
	       s->lost_sum);
	printf("  LOST_SAMPLES: %" PRIu64 " records, %" PRIu64 " samples lost\n",
	       s->count[PERF_RECORD_LOST_SAMPLES], s->lost_samples_sum);
	printf("  AUX records: %" PRIu64 " (%" PRIu64 " bytes);", s->count[PERF_RECORD_AUX],
	       s->aux_bytes);
	for (unsigned int b = 0; b < 4; b++)
		printf(" %s %" PRIu64, flag_names[b], s->aux_flags[b]);
	printf("\n  AUXTRACE_ERROR: %" PRIu64 "\n", s->count[AUXCAP_PERF_RECORD_AUXTRACE_ERROR]);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: auxcap info FILE   ('-' reads a pipe-mode stream from stdin)\n");
}

static int cmd_info_run(int argc, char **argv)
{
	struct auxcap_perf_reader_opts opts;
	struct auxcap_perf_reader *r = NULL;
	const struct auxcap_perf_file_info *fi;
	struct auxcap_perf_event ev;
	struct info_stats st;
	char err[256] = "";
	const char *path;
	int ret, status = CLI_ERR;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return CLI_OK;
	}
	if (argc != 2 || (argv[1][0] == '-' && argv[1][1])) {
		if (argc < 2)
			cli_err("info: give the capture to show: auxcap info FILE");
		else if (argv[1][0] == '-')
			cli_err("info: unknown option '%s'; run 'auxcap info --help'", argv[1]);
		else
			cli_err("info: one capture at a time ('%s' and '%s')", argv[1], argv[2]);
		return CLI_ERR;
	}
	path = argv[1];
	memset(&opts, 0, sizeof(opts));
	opts.sz = sizeof(opts);
	opts.errbuf = err;
	opts.errbuf_size = sizeof(err);
	if (!strcmp(path, "-"))
		ret = auxcap_perf_reader_open_fd(STDIN_FILENO, &opts, &r);
	else
		ret = auxcap_perf_reader_open(path, &opts, &r);
	if (ret == -ENOENT) {
		cli_err("%s: no such file; check the path", path);
		return CLI_ERR;
	}
	if (ret == -EBADMSG) {
		cli_err("%s: invalid perf.data: %s", path, err);
		return CLI_ERR;
	}
	if (ret < 0) {
		cli_err("%s: cannot read: %s", path, err[0] ? err : strerror(-ret));
		return CLI_ERR;
	}

	fi = auxcap_perf_reader_info(r);
	printf("file: %s\n", path);
	if (fi->pipe)
		printf("mode: pipe\n");
	else
		printf("mode: file, %" PRIu64 " bytes; attrs at %" PRIu64 " (%" PRIu64
		       " bytes, attr_size %" PRIu64 "); data at %" PRIu64 " (%" PRIu64 " bytes)\n",
		       fi->file_size, fi->attrs_offset, fi->attrs_size, fi->attr_size,
		       fi->data_offset, fi->data_size);

	memset(&st, 0, sizeof(st));
	while ((ret = auxcap_perf_reader_next(r, &ev)) > 0) {
		if (account(&st, &ev) < 0) {
			ret = -ENOMEM;
			break;
		}
	}
	/* Events and features last: pipe streams bring them inside the stream. */
	print_events(r);
	print_features(r);
	print_stats(&st);
	if (ret < 0) {
		cli_err("%s: %s; the counts above stop there", path,
			ret == -EBADMSG ? auxcap_perf_reader_error(r) : strerror(-ret));
	} else {
		status = CLI_OK;
		if (fi->recovered)
			cli_warn("%s: the file was not finalized (capture killed or disk full?); "
				 "records recovered up to offset %" PRIu64 "%s",
				 path, fi->recovered_end,
				 fi->features_lost ? ", feature sections missing" : "");
	}
	free(st.queues);
	auxcap_perf_reader_close(r);
	return status;
}

const struct cli_cmd cmd_info = {
	.name = "info",
	.summary = "show a perf.data file: header, events, features, AUX buffers, losses",
	.run = cmd_info_run,
};
