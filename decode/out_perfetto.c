/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Perfetto / Chrome trace-event writer (the "JSON Object Format" of the Trace Event
 * Format): {"traceEvents":[...],"displayTimeUnit":"ns","otherData":{...}}.
 *
 *   - per thread, a duration slice ("B"/"E") for every frame of the call stack the trace
 *     reconstructs (decode stage): a call opens one, a return closes the frames it ends; the
 *     frame a thread is in when its trace starts is opened then; all are closed at the
 *     thread's last event, so slices nest on each thread;
 *   - counter samples: thread-scoped instant events ("i", "s":"t") with the IP, stack (with
 *     opts.inlines, the functions inlined in each frame before it: "inner (inlined)") and
 *     callchain (PERF_SAMPLE_CALLCHAIN, innermost first, return addresses as recorded);
 *   - trace samples (Arm SPE records): thread-scoped instant events ("i", category
 *     "trace_sample") named by the function of their PC, with the PC, the total latency and,
 *     for a load or store, its data address, the variable there and the level that served
 *     it; and a counter track per process, "data access latency (cycles)", of the loads' and
 *     stores' latencies;
 *   - decode gaps: complete events ("X", category "gap"), from the gap to the queue's next
 *     event, on a track of the process named "trace gaps (AUX queue N)";
 *   - losses (LOST, LOST_SAMPLES, flagged AUX records, AUXTRACE_ERROR): global instant
 *     events ("s":"g", category "loss");
 *   - process_name / thread_name metadata ("M") from COMM.
 * "ts" and "dur" are microseconds with ns precision, relative to the first event with a time
 * (its perf time is otherData.time_base_ns; events without one are at 0).  Threads whose id is not known get tid 1000000000 + queue.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "auxcap/decode_report.h"
#include "out_int.h"

struct pthread {
	int32_t pid, tid;
	uint32_t open; /* "B" without "E" */
	uint64_t last;
	bool named;
	char name[16]; /* the name given */
};

struct pgap {
	bool pending;
	bool named; /* its track has a name */
	uint64_t start, offset;
	int32_t pid, tid;
	const char *what;
};

struct perfetto {
	bool first;	  /* no event written yet */
	bool have_base;
	uint64_t base;	  /* perf time of ts 0 */
	uint64_t last;	  /* latest time seen */
	struct out_tmap *threads;
	struct pgap *gaps; /* per queue */
	size_t nr_gaps;
	struct out_tmap *pids; /* process_name written */
};

static int pf_init(struct auxcap_out *w)
{
	const struct auxcap_decode_info *info = auxcap_decode_get_info(w->d);
	struct perfetto *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	w->priv = p;
	p->first = true;
	p->nr_gaps = info->nr_queues;
	p->gaps = calloc(p->nr_gaps ? p->nr_gaps : 1, sizeof(*p->gaps));
	if (!p->gaps)
		return -ENOMEM;
	r = out_tmap_new(&p->threads, sizeof(struct pthread));
	if (r == 0)
		r = out_tmap_new(&p->pids, sizeof(int));
	if (r < 0)
		return r;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", w->f);
	return 0;
}

static void pf_fini(struct auxcap_out *w)
{
	struct perfetto *p = w->priv;

	if (!p)
		return;
	out_tmap_free(p->threads);
	out_tmap_free(p->pids);
	free(p->gaps);
	free(p);
}

static void sep(struct auxcap_out *w)
{
	struct perfetto *p = w->priv;

	fputs(p->first ? "\n" : ",\n", w->f);
	p->first = false;
}

static void ts(struct auxcap_out *w, const char *key, uint64_t t)
{
	struct perfetto *p = w->priv;
	uint64_t rel = t > p->base ? t - p->base : 0;

	fprintf(w->f, ",\"%s\":%" PRIu64 ".%03" PRIu64, key, rel / 1000, rel % 1000);
}

/* {"ph":PH,"name":NAME,"cat":CAT,"ts":T,"pid":P,"tid":T  (left open for more fields) */
static void ev_open(struct auxcap_out *w, const char *ph, const char *name, const char *cat,
		    uint64_t t, int32_t pid, int32_t tid)
{
	sep(w);
	fprintf(w->f, "{\"ph\":\"%s\",\"name\":", ph);
	out_json_str(w->f, name);
	if (cat)
		fprintf(w->f, ",\"cat\":\"%s\"", cat);
	ts(w, "ts", t);
	fprintf(w->f, ",\"pid\":%d,\"tid\":%d", pid, tid);
}

static void metadata(struct auxcap_out *w, const char *what, int32_t pid, int32_t tid,
		     const char *name)
{
	sep(w);
	fprintf(w->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
		what, pid, tid);
	out_json_str(w->f, name);
	fputs("}}", w->f);
}

static void name_thread(struct auxcap_out *w, struct pthread *t, const char *comm)
{
	struct perfetto *p = w->priv;
	bool is_new;
	int *named;

	if (!comm || (t->named && !strncmp(t->name, comm, sizeof(t->name) - 1)))
		return;
	snprintf(t->name, sizeof(t->name), "%s", comm);
	metadata(w, "thread_name", t->pid, t->tid, comm);
	t->named = true;
	named = out_tmap_get(p->pids, t->pid, &is_new);
	if (named && (is_new || t->pid == t->tid)) {
		metadata(w, "process_name", t->pid, t->pid, comm);
		*named = 1;
	}
}

static struct pthread *thread_of(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	struct perfetto *p = w->priv;
	int64_t key = ev->tid >= 0 ? ev->tid : -1 - (int64_t)(ev->queue >= 0 ? ev->queue : 0);
	bool is_new;
	struct pthread *t = out_tmap_get(p->threads, key, &is_new);

	if (!t)
		return NULL;
	if (is_new) {
		t->tid = ev->tid >= 0 ? ev->tid : 1000000000 + (ev->queue >= 0 ? ev->queue : 0);
		t->pid = ev->pid >= 0 ? ev->pid : (ev->tid >= 0 ? ev->tid : 0);
		name_thread(w, t, ev->comm);
	}
	return t;
}

/* Name of the function at @addr: its symbol, else the address. */
static const char *func_name(struct auxcap_out *w, int32_t pid, uint64_t addr, char *buf,
			     size_t n)
{
	const char *name = NULL;

	if (auxcap_decode_symbolize(w->d, pid, addr, &name, NULL, NULL) == 1)
		snprintf(buf, n, "%s", name);
	else
		snprintf(buf, n, "0x%" PRIx64, addr);
	return buf;
}

static void slice_begin(struct auxcap_out *w, struct pthread *t, uint64_t at, uint64_t time)
{
	char name[256];

	ev_open(w, "B", func_name(w, t->pid, at, name, sizeof(name)), "call", time, t->pid, t->tid);
	fputs("}", w->f);
	t->open++;
}

static void slice_end(struct auxcap_out *w, struct pthread *t, uint64_t time)
{
	sep(w);
	fputs("{\"ph\":\"E\"", w->f);
	ts(w, "ts", time);
	fprintf(w->f, ",\"pid\":%d,\"tid\":%d}", t->pid, t->tid);
	t->open--;
}

static void gap_slice(struct auxcap_out *w, struct pgap *g, uint64_t end)
{
	char name[200];
	uint64_t dur = end > g->start ? end - g->start : 0;

	snprintf(name, sizeof(name), "trace gap: %s", g->what ? g->what : "undecodable trace");
	ev_open(w, "X", name, "gap", g->start, g->pid, g->tid);
	fprintf(w->f, ",\"dur\":%" PRIu64 ".%03" PRIu64, dur / 1000, dur % 1000);
	fprintf(w->f, ",\"args\":{\"offset\":%" PRIu64 "}}", g->offset);
	g->pending = false;
}

/* A trace sample (an Arm SPE record): an instant on its thread, and for a data access, the
 * process's latency counter. */
static void trace_sample(struct auxcap_out *w, const struct pthread *t,
			 const struct auxcap_decode_event *ev)
{
	const struct auxcap_trace_event *te = ev->trace;
	char sym[256];

	ev_open(w, "i", out_sym(w, ev->pid, te->ip, false, sym, sizeof(sym)), "trace_sample",
		ev->time, t->pid, t->tid);
	fprintf(w->f, ",\"s\":\"t\",\"args\":{\"ip\":\"0x%" PRIx64 "\",\"sym\":", te->ip);
	out_json_str(w->f, out_sym(w, ev->pid, te->ip, true, sym, sizeof(sym)));
	fprintf(w->f, ",\"latency\":%u", te->total_latency);
	if (te->mem) {
		fprintf(w->f, ",\"op\":\"%s\",\"level\":\"%s\",\"tlb_walk\":%s",
			(te->mem & AUXCAP_TRACE_MEM_LOAD) && (te->mem & AUXCAP_TRACE_MEM_STORE)
				? "atomic"
			: te->mem & AUXCAP_TRACE_MEM_STORE ? "store"
							   : "load",
			auxcap_report_mem_level_key(auxcap_report_mem_level_from(te->mem, te->source)),
			te->mem & AUXCAP_TRACE_MEM_TLB_MISS ? "true" : "false");
		if (te->source && auxcap_report_mem_source_key(te->source))
			fprintf(w->f, ",\"source\":\"%s\"", auxcap_report_mem_source_key(te->source));
	}
	if (te->flags & AUXCAP_TRACE_F_HAS_ADDR) {
		fprintf(w->f, ",\"addr\":\"0x%" PRIx64 "\",\"data\":", te->addr);
		if (auxcap_decode_data_name_at(w->d, ev->pid, te->addr, ev->time, sym,
					       sizeof(sym))) {
			out_json_str(w->f, sym);
		} else {
			fputs("null", w->f);
		}
	}
	fputs("}}", w->f);
	if (te->mem) {
		ev_open(w, "C", "data access latency (cycles)", NULL, ev->time, t->pid, t->tid);
		fprintf(w->f, ",\"args\":{\"latency\":%u}}", te->total_latency);
	}
}

static void trace_event(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	struct perfetto *p = w->priv;
	const struct auxcap_trace_event *te = ev->trace;
	const struct auxcap_decode_stack_change *sc = &ev->stack;
	struct pgap *g = ev->queue >= 0 && (size_t)ev->queue < p->nr_gaps ? &p->gaps[ev->queue]
									   : NULL;
	struct pthread *t;
	uint32_t before;

	if (g && g->pending)
		gap_slice(w, g, ev->time);
	t = thread_of(w, ev);
	if (!t)
		return;
	if (!t->named && ev->comm)
		name_thread(w, t, ev->comm);
	t->last = ev->time;
	if (te->kind == AUXCAP_TRACE_GAP) {
		if (g) {
			/* On a track of its own: a gap slice on the thread could overlap call
			 * slices that another queue (CPU) of the thread opens meanwhile. */
			if (!g->named) {
				char tn[64];

				snprintf(tn, sizeof(tn), "trace gaps (AUX queue %d)", ev->queue);
				metadata(w, "thread_name", t->pid, 2000000000 + ev->queue, tn);
				g->named = true;
			}
			g->pending = true;
			g->start = ev->time;
			g->offset = te->offset;
			g->pid = t->pid;
			g->tid = 2000000000 + ev->queue;
			g->what = te->what;
		}
		return;
	}
	if (te->kind == AUXCAP_TRACE_SAMPLE) {
		trace_sample(w, t, ev);
		return;
	}
	/* Frames the thread had before this event that are not open yet: its first frame. */
	before = sc->depth + sc->popped - (sc->pushed ? 1 : 0) - (sc->rebased ? 1 : 0);
	while (t->open < before)
		slice_begin(w, t, te->ip, ev->time);
	while (t->open > before)
		slice_end(w, t, ev->time);
	for (uint32_t i = 0; i < sc->popped && t->open; i++)
		slice_end(w, t, ev->time);
	if (sc->rebased)
		slice_begin(w, t, te->to, ev->time);
	if (sc->pushed)
		slice_begin(w, t, te->to, ev->time);
}

static void sample_event(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	const struct auxcap_decode_sample_ctx *x = ev->ctx;
	uint64_t ip = ev->rec->u.sample.ip;
	struct pthread *t = thread_of(w, ev);
	struct auxcap_callchain_frame fr[OUT_MAX_CALLCHAIN];
	char name[64], sym[256];
	size_t n;

	if (!t)
		return;
	ev_open(w, "i", out_evsel_name(ev->evsel, name, sizeof(name)), "sample", ev->time, t->pid,
		t->tid);
	fprintf(w->f, ",\"s\":\"t\",\"args\":{\"ip\":\"0x%" PRIx64 "\",\"sym\":", ip);
	out_json_str(w->f, out_sym(w, ev->pid, ip, true, sym, sizeof(sym)));
	if (x) {
		fprintf(w->f, ",\"aligned\":%s,\"stack\":[", x->aligned ? "true" : "false");
		for (size_t i = 0; i < x->nr_stack; i++) {
			struct auxcap_decode_inline in[AUXCAP_DECODE_INLINE_MAX];
			uint64_t at = i ? x->stack[i - 1].call_site : x->ip;
			int k = at ? out_inlines(w, ev->pid, at, in) : 0;

			if (i)
				putc(',', w->f);
			for (int j = 0; j + 1 < k; j++) { /* --inline: "inner (inlined)" first */
				snprintf(sym, sizeof(sym), "%s (inlined)", out_inline_name(&in[j]));
				out_json_str(w->f, sym);
				putc(',', w->f);
			}
			out_json_str(w->f, out_sym(w, ev->pid, x->stack[i].func, false, sym,
						   sizeof(sym)));
		}
		putc(']', w->f);
	}
	out_json_tp_fields(w, ev, "fields", false);
	out_json_tp_trace(w, ev, "trace", false);
	n = auxcap_sample_callchain(&ev->rec->u.sample, fr, OUT_MAX_CALLCHAIN);
	if (n) {
		fputs(",\"callchain\":[", w->f);
		for (size_t i = 0; i < n && i < OUT_MAX_CALLCHAIN; i++) {
			if (i)
				putc(',', w->f);
			out_json_str(w->f, out_sym(w, ev->pid, fr[i].ip, true, sym, sizeof(sym)));
		}
		putc(']', w->f);
	}
	fputs("}}", w->f);
}

static void loss_event(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	char name[200];

	if (ev->auxtrace_error)
		snprintf(name, sizeof(name), "AUXTRACE_ERROR: %s", ev->auxtrace_error->msg);
	else if (ev->lost)
		snprintf(name, sizeof(name), "%s: %" PRIu64 " lost", ev->loss, ev->lost);
	else
		snprintf(name, sizeof(name), "%s", ev->loss);
	ev_open(w, "i", name, "loss", ev->time, ev->pid >= 0 ? ev->pid : 0,
		ev->tid >= 0 ? ev->tid : 0);
	fputs(",\"s\":\"g\"}", w->f);
}

static int pf_event(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	struct perfetto *p = w->priv;

	if (!p->have_base && ev->time) { /* (records without a time, synthesized ones, have 0) */
		p->have_base = true;
		p->base = ev->time;
	}
	if (ev->time > p->last)
		p->last = ev->time;
	switch (ev->kind) {
	case AUXCAP_DECODE_TRACE:
		trace_event(w, ev);
		break;
	case AUXCAP_DECODE_SAMPLE:
		sample_event(w, ev);
		break;
	case AUXCAP_DECODE_LOSS:
		loss_event(w, ev);
		break;
	case AUXCAP_DECODE_SIDEBAND:
		if (ev->rec && ev->rec->type == PERF_RECORD_COMM && ev->tid >= 0) {
			struct pthread *t = thread_of(w, ev);

			/* an exec: the old image's frames end */
			for (uint32_t i = 0; t && i < ev->stack.popped && t->open; i++)
				slice_end(w, t, ev->time);
			if (t)
				name_thread(w, t, ev->rec->u.comm.comm);
		}
		break;
	}
	return 0;
}

static void close_thread(void *arg, int64_t key, void *value)
{
	struct auxcap_out *w = arg;
	struct pthread *t = value;

	(void)key;
	while (t->open)
		slice_end(w, t, t->last);
}

static int pf_finish(struct auxcap_out *w)
{
	struct perfetto *p = w->priv;

	for (size_t i = 0; i < p->nr_gaps; i++)
		if (p->gaps[i].pending)
			gap_slice(w, &p->gaps[i], p->last);
	out_tmap_each(p->threads, close_thread, w);
	fprintf(w->f, "\n],\"otherData\":{\"producer\":\"auxcap\",\"time_base_ns\":\"%" PRIu64 "\"}}\n",
		p->base);
	return 0;
}

const struct out_ops auxcap_out_perfetto_ops = {
	.init = pf_init,
	.event = pf_event,
	.finish = pf_finish,
	.fini = pf_fini,
};
