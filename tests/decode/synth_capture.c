/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap-synth-capture: run a real program under the live tracer (emu/tracer: ptrace
 * single-step, Intel PT encoded with libipt) and write what a capture of it with Intel PT and
 * a cpu-clock counter would hold: COMM, MMAP2, ITRACE_START, the trace as AUXTRACE buffers,
 * and counter samples, with a PERF_RECORD_TIME_CONV that turns the trace's TSC into the
 * records' clock.
 *
 * The samples are taken the way the kernel's timer takes them: every N-th executed
 * instruction (N varied pseudo-randomly around --sample-every), the sample's IP is the next
 * instruction to run and its time the TSC read at that stop, converted with the TIME_CONV.
 *
 * usage: auxcap-synth-capture OUT [--split OUT2:N] [--sample-every N] [--psb-period N]
 *                             [--no-time-conv] -- PROGRAM ARGS...
 *   OUT        the trace in one AUXTRACE buffer
 *   --split    the same capture, its trace cut into N contiguous buffers at pseudo-random
 *              byte offsets (packets and flow split anywhere)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>

#include "auxcap/timeconv.h"
#include "capture_builder.h"
#include "grow.h"
#include "tracer.h"

struct sb {
	struct auxcap_tracer_sideband sb;
	char *str;
};

struct sample {
	uint64_t ip, tsc;
};

struct state {
	uint8_t *trace;
	size_t len, cap;
	struct sb *sbs;
	size_t nsb, capsb;
	struct sample *samples;
	size_t ns, caps;
	uint64_t every, countdown, seed;
	uint64_t first_tsc, last_tsc;
	uint32_t pid;
};

static int on_trace(void *ctx, const void *bytes, size_t len)
{
	struct state *s = ctx;

	if (auxcap_grow(&s->trace, &s->cap, s->len + len, 1 << 20) < 0)
		return -ENOMEM;
	memcpy(s->trace + s->len, bytes, len);
	s->len += len;
	return 0;
}

static int on_sideband(void *ctx, const struct auxcap_tracer_sideband *sb)
{
	struct state *s = ctx;
	struct sb *e;

	if (s->nsb == s->capsb) {
		size_t cap = s->capsb ? 2 * s->capsb : 64;
		struct sb *n = realloc(s->sbs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->sbs = n;
		s->capsb = cap;
	}
	e = &s->sbs[s->nsb++];
	e->sb = *sb;
	e->str = NULL;
	if (sb->type == AUXCAP_TRACER_SB_COMM)
		e->str = strdup(sb->comm.comm);
	else if (sb->type == AUXCAP_TRACER_SB_MMAP)
		e->str = strdup(sb->mmap.path);
	if (sb->type == AUXCAP_TRACER_SB_START || sb->type == AUXCAP_TRACER_SB_COMM)
		s->pid = sb->pid;
	if (!s->first_tsc)
		s->first_tsc = sb->tsc;
	return 0;
}

static uint64_t rnd(struct state *s)
{
	s->seed ^= s->seed << 13;
	s->seed ^= s->seed >> 7;
	s->seed ^= s->seed << 17;
	return s->seed;
}

static int on_insn(void *ctx, const struct auxcap_tracer_insn *in)
{
	struct state *s = ctx;

	s->last_tsc = in->tsc;
	if (--s->countdown)
		return 0;
	s->countdown = s->every / 2 + rnd(s) % s->every + 1;
	if (!in->next_traced || in->ended || in->kind == AUXCAP_TRACER_FAR)
		return 0;
	if (s->ns == s->caps) {
		size_t cap = s->caps ? 2 * s->caps : 256;
		struct sample *n = realloc(s->samples, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->samples = n;
		s->caps = cap;
	}
	s->samples[s->ns++] = (struct sample){ in->next_ip, in->tsc };
	return 0;
}

static int write_capture(const char *path, struct state *s, size_t pieces, bool time_conv)
{
	struct auxcap_perf_time_conv tc = { 0 };
	uint64_t info[17] = { 0 };
	size_t *cuts, k = 0;
	struct cb *b;
	int r;

	/* perf time = TSC * 2/3 (+ a zero), a conversion with a shift and a remainder. */
	tc.time_shift = 10;
	tc.time_mult = 683;
	tc.time_zero = 1000000;
	tc.cap_user_time_zero = true;
	b = cb_open(path, "intel_pt//u", 0x7000);
	if (!b)
		return -errno;
	if (time_conv)
		cb_time_conv(b, &tc);
	cb_auxtrace_info(b, 1, info, 17);
	/* Side-band and samples in TSC order. */
	for (size_t i = 0, j = 0; i < s->nsb || j < s->ns;) {
		bool take_sb = i < s->nsb && (j == s->ns || s->sbs[i].sb.tsc <= s->samples[j].tsc);

		if (take_sb) {
			const struct auxcap_tracer_sideband *e = &s->sbs[i].sb;
			uint64_t t = auxcap_time_conv_to_ns(&tc, e->tsc);

			if (e->type == AUXCAP_TRACER_SB_COMM)
				cb_comm(b, e->pid, e->tid, s->sbs[i].str, e->comm.exec, t, 0);
			else if (e->type == AUXCAP_TRACER_SB_MMAP)
				cb_mmap2(b, e->pid, e->tid, e->mmap.addr, e->mmap.len, e->mmap.pgoff,
					 e->mmap.prot, s->sbs[i].str, t, 0);
			else if (e->type == AUXCAP_TRACER_SB_START)
				cb_itrace_start(b, e->pid, e->tid, t, 0);
			i++;
		} else {
			cb_sample(b, 1, s->samples[j].ip, s->pid, s->pid,
				  auxcap_time_conv_to_ns(&tc, s->samples[j].tsc), 0, 100000);
			j++;
		}
		if (++k % 1000 == 0)
			cb_round(b);
	}
	/* The trace: @pieces contiguous buffers cut at pseudo-random offsets. */
	cuts = calloc(pieces + 1, sizeof(*cuts));
	if (!cuts)
		return -ENOMEM;
	cuts[pieces] = s->len;
	for (size_t i = 1; i < pieces; i++)
		cuts[i] = s->len * i / pieces + (size_t)(rnd(s) % 97) - 48;
	for (size_t i = 0; i < pieces; i++) {
		size_t len = cuts[i + 1] - cuts[i];
		uint64_t t = auxcap_time_conv_to_ns(&tc, s->last_tsc);

		cb_aux(b, cuts[i], len, 0, s->pid, s->pid, t, 0);
		cb_auxtrace(b, s->trace + cuts[i], len, cuts[i], 0, s->pid, (uint32_t)-1);
	}
	free(cuts);
	cb_round(b);
	r = cb_close(b);
	return r;
}

int main(int argc, char **argv)
{
	struct auxcap_tracer_opts o = { .sz = sizeof(o) };
	struct state s = { .every = 997, .seed = 0x9e3779b97f4a7c15ull };
	struct auxcap_tracer *tr = NULL;
	const char *out = NULL, *out2 = NULL;
	size_t pieces = 1;
	bool time_conv = true;
	int i, r;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--split") && i + 1 < argc) {
			char *colon = strrchr(argv[++i], ':');

			if (!colon || atoi(colon + 1) < 2) {
				fprintf(stderr, "synth-capture: --split OUT2:N with N >= 2\n");
				return 2;
			}
			*colon = '\0';
			out2 = argv[i];
			pieces = (size_t)atoi(colon + 1);
		} else if (!strcmp(argv[i], "--sample-every") && i + 1 < argc) {
			s.every = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--psb-period") && i + 1 < argc) {
			o.psb_period = (uint32_t)strtoul(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--no-time-conv")) {
			time_conv = false;
		} else if (!out) {
			out = argv[i];
		} else {
			fprintf(stderr, "synth-capture: unexpected '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!out || i + 1 >= argc || !s.every) {
		fprintf(stderr, "usage: %s OUT [--split OUT2:N] [--sample-every N] "
				"[--psb-period N] [--no-time-conv] -- PROGRAM ARGS...\n",
			argv[0]);
		return 2;
	}
	s.countdown = s.every;
	o.format = AUXCAP_TRACER_INTEL_PT;
	o.on_trace = on_trace;
	o.on_sideband = on_sideband;
	o.on_insn = on_insn;
	o.ctx = &s;
	r = auxcap_tracer_new(&o, &tr);
	if (r == 0)
		r = auxcap_tracer_start(tr, argv + i + 1);
	if (r == 0) {
		do
			r = auxcap_tracer_step(tr, 0);
		while (r == 1);
	}
	auxcap_tracer_free(tr);
	if (r < 0) {
		fprintf(stderr, "synth-capture: tracing %s failed: %s\n", argv[i + 1], strerror(-r));
		return 1;
	}
	r = write_capture(out, &s, 1, time_conv);
	if (r == 0 && out2)
		r = write_capture(out2, &s, pieces, time_conv);
	if (r < 0) {
		fprintf(stderr, "synth-capture: writing failed: %s\n", strerror(-r));
		return 1;
	}
	printf("%zu trace bytes, %zu samples, %zu side-band records\n", s.len, s.ns, s.nsb);
	for (size_t k = 0; k < s.nsb; k++)
		free(s.sbs[k].str);
	free(s.sbs);
	free(s.samples);
	free(s.trace);
	return 0;
}
