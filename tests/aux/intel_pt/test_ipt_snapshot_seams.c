/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Consecutive snapshots of an Intel PT capture, decoded by `auxcap decode --itrace=b` and by
 * `perf script --itrace=b` (perf 6.1): every branch the traced program took must come out
 * exactly once, none dropped at the seams between snapshots, none repeated.
 *
 * The capture core writes a snapshot's AUX chunk from where the previous one ended (the
 * overlap trimmed, AUXTRACE offsets continuing: core/session.c, tests/core/session_emu_live),
 * cut at any byte, in mid-packet.  Decoders that trim the overlap again, or that decode each
 * snapshot on its own from its first PSB, lose the trace around every seam.
 *
 * Two snapshot captures are checked.  In the first the chunks are cut at any byte, as the
 * emulated PMU can cut them (its producer hands over bytes, not packets): auxcap decode must
 * give the ground truth; perf 6.1 joins the chunks (SNAPSHOT_MODE 0) but cannot decode a
 * packet cut in two by a record boundary (its "Bad packet" errors; the same happens to it at
 * the buffer boundaries of a full trace), so its count is only printed.  In the second the
 * chunks end at packet boundaries, as real hardware's do (the trace is flushed in whole
 * packets when the event is stopped for the snapshot; the zero bytes that pad a record to 8
 * bytes are then PAD packets): both decoders must give the ground truth.
 *
 * The ground truth is the tracer's whole stream: `auxcap record --emulate` of the example
 * program in full-trace mode (nothing dropped; its instructions as many as the tracer says it
 * ran), every taken branch read off libipt's instruction flow (a jump, call or return, or a
 * conditional jump whose successor is not the next instruction in memory).  The
 * snapshot capture is that file with its AUX stream cut into consecutive chunks at chosen
 * and pseudo-random offsets (some in mid-packet, one right at a PSB, one just after one),
 * each chunk written as a snapshot is: a PERF_RECORD_AUX with the flags `auxcap record -S`
 * gives it, then its AUXTRACE record, and the AUXTRACE_INFO's SNAPSHOT_MODE word as
 * `auxcap record -S` writes it (both read from a real snapshot capture made here).
 *
 * perf's part is skipped (with a message) when perf is not installed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <intel-pt.h>

#include "auxcap/perf_data.h"
#include "ipt.h"
#include "ipt_record.h"
#include "util.h"

#define MAX_MAPS 32
#define NR_CUTS 12
#define AUX_FLAG_OVERWRITE 0x02

struct pairs {
	uint64_t (*v)[2]; /* (from, to) */
	size_t n, cap;
};

static void pairs_add(struct pairs *p, uint64_t from, uint64_t to)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 65536;
		p->v = realloc(p->v, p->cap * sizeof(*p->v));
		assert_non_null(p->v);
	}
	p->v[p->n][0] = from;
	p->v[p->n][1] = to;
	p->n++;
}

struct capture {
	uint8_t *aux; /* the AUX stream, the records' payloads joined by their offsets */
	size_t aux_len;
	struct {
		uint64_t addr, len, pgoff;
		char path[512];
	} maps[MAX_MAPS];
	size_t nmaps;
	uint64_t snapshot_mode; /* the AUXTRACE_INFO word */
	uint64_t aux_flags;	/* of the last PERF_RECORD_AUX */
	size_t nr_aux, nr_auxtrace;
};

/* Run @argv, its standard output to @out_path (NULL: /dev/null), its standard error to
 * @err_path (NULL: ours). */
static void run(char *const argv[], const char *out_path, const char *err_path)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		int out = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(out, 1);
		if (err_path) {
			int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

			dup2(err, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("%s %s exited with status 0x%x", argv[0], argv[1], st);
}

static void read_capture(const char *path, struct capture *c)
{
	struct auxcap_perf_reader *rd;
	struct auxcap_perf_event ev;
	uint64_t end = 0;
	int r;

	memset(c, 0, sizeof(*c));
	assert_int_equal(auxcap_perf_reader_open(path, NULL, &rd), 0);
	while ((r = auxcap_perf_reader_next(rd, &ev)) == 1) {
		const struct auxcap_record *rec = &ev.rec;

		switch (rec->type) {
		case PERF_RECORD_MMAP2:
			if ((rec->u.mmap.prot & PROT_EXEC) && rec->u.mmap.filename[0] == '/' &&
			    c->nmaps < MAX_MAPS) {
				c->maps[c->nmaps].addr = rec->u.mmap.addr;
				c->maps[c->nmaps].len = rec->u.mmap.len;
				c->maps[c->nmaps].pgoff = rec->u.mmap.pgoff;
				snprintf(c->maps[c->nmaps].path, sizeof(c->maps[0].path), "%s",
					 rec->u.mmap.filename);
				c->nmaps++;
			}
			break;
		case PERF_RECORD_AUX:
			c->aux_flags = rec->u.aux.flags;
			c->nr_aux++;
			break;
		case AUXCAP_PERF_RECORD_AUXTRACE_INFO:
			assert_true(ev.u.auxtrace_info.nr > AUXCAP_IPT_INFO_SNAPSHOT_MODE);
			c->snapshot_mode =
				auxcap_get_u64(ev.u.auxtrace_info.priv, AUXCAP_IPT_INFO_SNAPSHOT_MODE);
			break;
		case AUXCAP_PERF_RECORD_AUXTRACE:
			/* the payloads are padded to 8 bytes: the offsets say where they go */
			if (c->nr_auxtrace)
				assert_true(ev.u.auxtrace.offset <= end &&
					    ev.u.auxtrace.offset + 8 > end);
			c->aux_len = (size_t)ev.u.auxtrace.offset;
			c->aux = realloc(c->aux, c->aux_len + ev.u.auxtrace.size);
			assert_non_null(c->aux);
			memcpy(c->aux + c->aux_len, ev.u.auxtrace.data, ev.u.auxtrace.size);
			c->aux_len += ev.u.auxtrace.size;
			end = ev.u.auxtrace.offset + ev.u.auxtrace.size;
			c->nr_auxtrace++;
			break;
		default:
			break;
		}
	}
	assert_int_equal(r, 0);
	auxcap_perf_reader_close(rd);
}

/* The taken branches of @c's stream: libipt's instruction flow, one INSN item after another. */
static void ground_truth(const struct capture *c, struct pairs *p, uint64_t *ninsn)
{
	struct auxcap_ipt_decoder_opts o = { .sz = sizeof(o) };
	struct auxcap_ipt_image *img;
	struct auxcap_ipt_decoder *dec;
	struct auxcap_ipt_item it;
	uint64_t prev_ip = 0, prev_next = 0;
	enum auxcap_ipt_iclass prev_class = AUXCAP_IPT_IC_OTHER;
	bool have_prev = false;
	int r;

	assert_int_equal(auxcap_ipt_image_new(&img), 0);
	for (size_t i = 0; i < c->nmaps; i++)
		assert_int_equal(auxcap_ipt_image_add_raw(img, c->maps[i].path, c->maps[i].pgoff,
							  c->maps[i].len, c->maps[i].addr),
				 0);
	assert_int_equal(auxcap_ipt_decoder_new(c->aux, c->aux_len, img, NULL, &o, &dec), 0);
	*ninsn = 0;
	while ((r = auxcap_ipt_decoder_next(dec, &it)) == 1) {
		if (it.kind == AUXCAP_IPT_ITEM_INSN) {
			/* a jump, call or return is taken even to the next instruction */
			if (have_prev && (it.ip != prev_next || (prev_class != AUXCAP_IPT_IC_OTHER &&
								 prev_class != AUXCAP_IPT_IC_COND_JUMP)))
				pairs_add(p, prev_ip, it.ip);
			have_prev = true;
			prev_ip = it.ip;
			prev_next = it.ip + it.size;
			prev_class = it.iclass;
			(*ninsn)++;
		} else if (it.kind == AUXCAP_IPT_ITEM_GAP ||
			   (it.kind == AUXCAP_IPT_ITEM_EVENT &&
			    !(it.flags & AUXCAP_IPT_F_STATUS_UPDATE) &&
			    it.event != AUXCAP_IPT_EV_EXEC_MODE && it.event != AUXCAP_IPT_EV_PAGING)) {
			/* tracing stopped or restarted: the flow does not go on from prev */
			have_prev = false;
		}
	}
	assert_int_equal(r, 0);
	assert_int_equal(auxcap_ipt_decoder_gaps(dec), 0);
	auxcap_ipt_decoder_free(dec);
	auxcap_ipt_image_free(img);
}

static bool hex_word(const char *s, size_t n, uint64_t *ret)
{
	char buf[24];

	if (n > 2 && s[0] == '0' && s[1] == 'x') {
		s += 2;
		n -= 2;
	}
	if (!n || n > 16)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*ret = strtoull(buf, NULL, 16);
	return true;
}

/*
 * The branches of a decoder's text output (auxcap's or perf's): on a line with " => ", the
 * last hex word before it and the first after it; lines with a zero address (trace started
 * or stopped) are not branches of the flow.
 */
static void read_branches(const char *path, struct pairs *p)
{
	FILE *f = fopen(path, "r");
	char line[4096];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *arrow = strstr(line, " => "), *s;
		uint64_t from = 0, to = 0, v;
		bool have_from = false, have_to = false;

		if (line[0] == '#' || !arrow)
			continue;
		for (s = line; s < arrow;) {
			char *w;

			while (s < arrow && *s == ' ')
				s++;
			w = s;
			while (s < arrow && *s != ' ')
				s++;
			if (s > w && hex_word(w, (size_t)(s - w), &v)) {
				from = v;
				have_from = true;
			}
		}
		for (s = arrow + 4; *s && !have_to;) {
			char *w;

			while (*s == ' ')
				s++;
			w = s;
			while (*s && *s != ' ' && *s != '\n')
				s++;
			if (s > w && hex_word(w, (size_t)(s - w), &v)) {
				to = v;
				have_to = true;
			}
			if (*s == '\n')
				break;
		}
		assert_true(have_from && have_to);
		if (from && to)
			pairs_add(p, from, to);
	}
	fclose(f);
}

/* @got must be @want, pair for pair; says where they part. */
static void assert_same_branches(const char *who, const struct pairs *got,
				 const struct pairs *want)
{
	size_t i = 0;

	while (i < got->n && i < want->n && !memcmp(got->v[i], want->v[i], sizeof(got->v[i])))
		i++;
	print_message("%s: %zu branches, ground truth %zu\n", who, got->n, want->n);
	if (i < got->n || i < want->n)
		fail_msg("%s: branch %zu differs: %" PRIx64 " => %" PRIx64 " where the ground truth "
			 "has %" PRIx64 " => %" PRIx64 " (%zu branches, ground truth %zu)",
			 who, i, i < got->n ? got->v[i][0] : 0, i < got->n ? got->v[i][1] : 0,
			 i < want->n ? want->v[i][0] : 0, i < want->n ? want->v[i][1] : 0, got->n,
			 want->n);
}

/* Offsets of the PSBs in [@buf, @buf + @len). */
static size_t find_psbs(const uint8_t *buf, size_t len, size_t *out, size_t max)
{
	static const uint8_t psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };
	size_t n = 0;

	for (size_t i = 0; i + sizeof(psb) <= len && n < max; i++)
		if (!memcmp(buf + i, psb, sizeof(psb)))
			out[n++] = i;
	return n;
}

/* The offset of the first packet boundary at or after @at (the stream decoded from its first
 * PSB, as libipt's packet decoder walks it). */
static size_t packet_boundary(const uint8_t *buf, size_t len, size_t first_psb, size_t at)
{
	struct pt_config cfg;
	struct pt_packet_decoder *pkt;
	struct pt_packet p;
	uint64_t off = first_psb;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	pkt = pt_pkt_alloc_decoder(&cfg);
	assert_non_null(pkt);
	assert_int_equal(pt_pkt_sync_set(pkt, first_psb), 0);
	while (off < at && pt_pkt_next(pkt, &p, sizeof(p)) > 0)
		assert_int_equal(pt_pkt_get_offset(pkt, &off), 0);
	pt_pkt_free_decoder(pkt);
	return (size_t)off;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Write @out: @full's records and features, its AUX stream cut at @cuts into consecutive
 * snapshot chunks (a PERF_RECORD_AUX with @aux_flags before each), its AUXTRACE_INFO with
 * SNAPSHOT_MODE @snapshot_mode.
 */
static void write_snapshots(const char *full, const char *out, const struct capture *c,
			    const size_t *cuts, size_t nr_cuts, uint64_t aux_flags,
			    uint64_t snapshot_mode)
{
	struct auxcap_perf_reader *rd;
	struct auxcap_perf_writer *w;
	struct auxcap_perf_event ev;
	uint8_t aux_rec[512];
	size_t aux_rec_len = 0;
	bool done = false;
	int r;

	assert_int_equal(auxcap_perf_reader_open(full, NULL, &rd), 0);
	assert_int_equal(auxcap_perf_writer_open(out, NULL, &w), 0);
	for (size_t i = 0; i < auxcap_perf_reader_nr_evsels(rd); i++) {
		const struct auxcap_perf_evsel *e = auxcap_perf_reader_evsel(rd, i);

		assert_int_equal(auxcap_perf_writer_add_attr(w, e->attr, e->name, e->ids, e->nr_ids),
				 0);
	}
	for (unsigned int f = 1; f < AUXCAP_PERF_FEAT_BITS; f++) {
		const void *data;
		size_t size;

		if (f == AUXCAP_PERF_FEAT_AUXTRACE || f == AUXCAP_PERF_FEAT_SAMPLE_TIME)
			continue;
		if (auxcap_perf_reader_feature_raw(rd, f, &data, &size) == 0)
			(void)auxcap_perf_writer_set_feature(w, f, data, size);
	}
	/* a PERF_RECORD_AUX of the capture, as a template (its sample_id kept) */
	while ((r = auxcap_perf_reader_next(rd, &ev)) == 1)
		if (ev.rec.type == PERF_RECORD_AUX && !aux_rec_len) {
			aux_rec_len = ev.rec.size;
			assert_true(aux_rec_len <= sizeof(aux_rec) && aux_rec_len >= 32);
			memcpy(aux_rec, ev.rec.data, aux_rec_len);
		}
	assert_true(aux_rec_len > 0);
	assert_int_equal(auxcap_perf_reader_rewind(rd), 0);
	while ((r = auxcap_perf_reader_next(rd, &ev)) == 1) {
		uint32_t t = ev.rec.type;

		if (t == PERF_RECORD_AUX)
			continue;
		if (t == AUXCAP_PERF_RECORD_AUXTRACE_INFO) {
			uint8_t rec[1024];

			assert_true(ev.rec.size <= sizeof(rec));
			memcpy(rec, ev.rec.data, ev.rec.size);
			/* header, type, reserved, then the words */
			memcpy(rec + 16 + 8 * AUXCAP_IPT_INFO_SNAPSHOT_MODE, &snapshot_mode, 8);
			assert_int_equal(auxcap_perf_writer_write(w, rec), 0);
			continue;
		}
		if (t == AUXCAP_PERF_RECORD_AUXTRACE) {
			if (done)
				continue;
			done = true;
			for (size_t k = 0; k <= nr_cuts; k++) {
				size_t from = k ? cuts[k - 1] : 0, to = k < nr_cuts ? cuts[k] : c->aux_len;
				struct auxcap_perf_auxtrace at = {
					.offset = from,
					.reference = ev.u.auxtrace.reference + k,
					.idx = ev.u.auxtrace.idx,
					.tid = ev.u.auxtrace.tid,
					.cpu = ev.u.auxtrace.cpu,
				};
				uint64_t v;

				/* the snapshot's PERF_RECORD_AUX: aux_offset, aux_size, flags */
				v = from;
				memcpy(aux_rec + 8, &v, 8);
				v = to - from;
				memcpy(aux_rec + 16, &v, 8);
				memcpy(aux_rec + 24, &aux_flags, 8);
				assert_int_equal(auxcap_perf_writer_write(w, aux_rec), 0);
				assert_int_equal(auxcap_perf_writer_write_auxtrace(w, &at, c->aux + from,
										   to - from, NULL, 0),
						 0);
				assert_int_equal(auxcap_perf_writer_write_finished_round(w), 0);
			}
			continue;
		}
		if (t == AUXCAP_PERF_RECORD_FINISHED_INIT)
			r = auxcap_perf_writer_write_finished_init(w);
		else if (t == AUXCAP_PERF_RECORD_FINISHED_ROUND)
			r = auxcap_perf_writer_write_finished_round(w);
		else
			r = auxcap_perf_writer_write(w, ev.rec.data);
		assert_int_equal(r, 0);
	}
	assert_int_equal(r, 0);
	assert_true(done);
	assert_int_equal(auxcap_perf_writer_close(w), 0);
	auxcap_perf_reader_close(rd);
}

static bool have_perf(void)
{
	return system("perf --version >/dev/null 2>&1") == 0;
}

static void test_snapshot_seams(void **state)
{
	const char *auxcap = getenv("AUXCAP"), *prog = getenv("AUXCAP_EXAMPLE_LOOP");
	char dir[] = "/tmp/auxcap-seams-XXXXXX", full[4200], snap[4200], ref[4200], out[4200];
	struct capture c, cref, csnap;
	struct pairs truth = { 0 }, got = { 0 };
	size_t psbs[4096], nr_psbs, cuts[NR_CUTS];
	uint64_t ninsn, tracer_insns = 0, x = 0x2545f4914f6cdd1dull;

	(void)state;
	if (!auxcap || !prog)
		test_skip("AUXCAP or AUXCAP_EXAMPLE_LOOP is not set (run through meson test)");
	assert_non_null(mkdtemp(dir));
	snprintf(full, sizeof(full), "%s/full.data", dir);
	snprintf(snap, sizeof(snap), "%s/snap.data", dir);
	snprintf(ref, sizeof(ref), "%s/ref.data", dir);
	snprintf(out, sizeof(out), "%s/out.txt", dir);

	/* the tracer's whole stream, and what a snapshot capture's records say */
	{
		char *a[] = { (char *)auxcap, "record", "--emulate", "-f", "-o", full, "--",
			      (char *)prog, "2000", NULL };
		char *b[] = { (char *)auxcap, "record", "--emulate", "--snapshot=e", "-f", "-o",
			      ref, "--", (char *)prog, "20", NULL };

		run(a, NULL, out);
		run(b, NULL, NULL);
	}
	/* what the tracer executed, as record reports it */
	{
		FILE *f = fopen(out, "r");
		char line[512];

		assert_non_null(f);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "auxcap: emulated trace: %" SCNu64 " instructions",
				   &tracer_insns) == 1)
				break;
		fclose(f);
		assert_true(tracer_insns > 0);
	}
	read_capture(full, &c);
	read_capture(ref, &cref);
	assert_true(cref.nr_aux > 0 && (cref.aux_flags & AUX_FLAG_OVERWRITE));
	print_message("auxcap record -S: AUX flags 0x%" PRIx64 ", SNAPSHOT_MODE %" PRIu64 "\n",
		      cref.aux_flags, cref.snapshot_mode);
	ground_truth(&c, &truth, &ninsn);
	print_message("ground truth: %" PRIu64 " instructions, %zu taken branches, %zu trace bytes\n",
		      ninsn, truth.n, c.aux_len);
	/* every instruction the tracer executed is in the stream */
	assert_int_equal(ninsn, tracer_insns);
	assert_true(truth.n > 10000);

	/* cuts: right at a PSB, one byte into one, and pseudo-random bytes (packets cut) */
	nr_psbs = find_psbs(c.aux, c.aux_len, psbs, 4096);
	assert_true(nr_psbs >= 3);
	cuts[0] = psbs[1];
	cuts[1] = psbs[nr_psbs - 1] + 1;
	for (size_t k = 2; k < NR_CUTS; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		cuts[k] = 1 + (size_t)(x % (c.aux_len - 1));
	}
	{
		char *a[] = { (char *)auxcap, "decode", full, "--itrace=b", NULL };

		run(a, out, NULL);
		read_branches(out, &got);
		assert_same_branches("auxcap decode, full trace", &got, &truth);
	}
	for (int pass = 0; pass < 2; pass++) {
		char *a[] = { (char *)auxcap, "decode", snap, "--itrace=b", NULL };
		char *b[] = { "perf", "script", "-f", "-i", snap, "--itrace=b", "-F", "ip,addr",
			      NULL };
		size_t at[NR_CUTS];

		print_message("%s\n", pass ? "snapshots ending at packet boundaries"
					   : "snapshots cut at any byte");
		memcpy(at, cuts, sizeof(at));
		for (size_t k = 0; pass && k < NR_CUTS; k++)
			at[k] = packet_boundary(c.aux, c.aux_len, psbs[0], cuts[k]);
		qsort(at, NR_CUTS, sizeof(*at), cmp_size);
		/*
		 * Two cuts in one packet end at the same boundary: the later one moves to the
		 * next (the order holds, as a cut after it is at that boundary or past it).
		 */
		for (size_t k = 1; pass && k < NR_CUTS; k++)
			if (at[k] <= at[k - 1])
				at[k] = packet_boundary(c.aux, c.aux_len, psbs[0], at[k - 1] + 1);
		for (size_t k = 1; k < NR_CUTS; k++)
			assert_true(at[k] > at[k - 1] && at[k] < c.aux_len);
		write_snapshots(full, snap, &c, at, NR_CUTS, cref.aux_flags, cref.snapshot_mode);
		read_capture(snap, &csnap);
		assert_int_equal(csnap.nr_auxtrace, NR_CUTS + 1);
		assert_true(csnap.aux_len >= c.aux_len && csnap.aux_len < c.aux_len + 8);
		assert_memory_equal(csnap.aux, c.aux, c.aux_len);
		free(csnap.aux);

		got.n = 0;
		run(a, out, NULL);
		read_branches(out, &got);
		assert_same_branches("  auxcap decode", &got, &truth);
		if (!have_perf()) {
			print_message("  perf is not installed: its part is skipped\n");
			continue;
		}
		got.n = 0;
		run(b, out, NULL);
		read_branches(out, &got);
		if (pass)
			assert_same_branches("  perf script", &got, &truth);
		else
			print_message("  perf script: %zu branches (not checked: see above)\n",
				      got.n);
	}
	unlink(full);
	unlink(snap);
	unlink(ref);
	unlink(out);
	rmdir(dir);
	free(c.aux);
	free(cref.aux);
	free(truth.v);
	free(got.v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshot_seams),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
