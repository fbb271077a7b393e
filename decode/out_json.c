/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The JSON lines writer: one JSON object per event, one per line.  docs/decode-json.md
 * describes every field and docs/decode-json.schema.json is the schema the tests validate
 * against.  Addresses are strings ("0x4011d6"), times integers in ns, unknown values null.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "disasm.h"
#include "auxcap/decode_report.h"
#include "out_int.h"

struct json {
	struct auxcap_disasm *disasm;
};

static int json_init(struct auxcap_out *w)
{
	struct json *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	w->priv = j;
	if (w->opts.insns)
		(void)auxcap_disasm_new(&j->disasm);
	return 0;
}

static void json_fini(struct auxcap_out *w)
{
	struct json *j = w->priv;

	if (!j)
		return;
	auxcap_disasm_free(j->disasm);
	free(j);
}

static void int_or_null(FILE *f, const char *key, int64_t v, bool known)
{
	if (known)
		fprintf(f, ",\"%s\":%" PRId64, key, v);
	else
		fprintf(f, ",\"%s\":null", key);
}

static void addr(FILE *f, const char *key, uint64_t a)
{
	fprintf(f, ",\"%s\":\"0x%" PRIx64 "\"", key, a);
}

/* ,"KEY":"0x..","KEY_sym":"name+0x.." (or null) */
static void addr_sym(struct auxcap_out *w, int32_t pid, const char *key, uint64_t a)
{
	const char *name = NULL;
	uint64_t off = 0;
	char buf[300];

	addr(w->f, key, a);
	fprintf(w->f, ",\"%s_sym\":", key);
	if (auxcap_decode_symbolize(w->d, pid, a, &name, &off, NULL) == 1) {
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, name, off);
		out_json_str(w->f, buf);
	} else {
		fputs("null", w->f);
	}
}

static void head(struct auxcap_out *w, const char *type, const struct auxcap_decode_event *ev)
{
	FILE *f = w->f;

	fprintf(f, "{\"type\":\"%s\",\"time\":%" PRIu64 ",\"time_exact\":%s", type, ev->time,
		ev->has_time ? "true" : "false");
	int_or_null(f, "cpu", ev->cpu, ev->cpu >= 0);
	int_or_null(f, "pid", ev->pid, ev->pid >= 0);
	int_or_null(f, "tid", ev->tid, ev->tid >= 0);
	fputs(",\"comm\":", f);
	if (ev->comm)
		out_json_str(f, ev->comm);
	else
		fputs("null", f);
}

static void trace_head(struct auxcap_out *w, const char *type, const struct auxcap_decode_event *ev)
{
	const struct auxcap_trace_event *te = ev->trace;

	head(w, type, ev);
	fprintf(w->f, ",\"queue\":%d,\"offset\":%" PRIu64, ev->queue, te->offset);
	int_or_null(w->f, "tsc", (int64_t)te->tsc, (te->flags & AUXCAP_TRACE_F_HAS_TSC) != 0);
}

static void stack_change(FILE *f, const struct auxcap_decode_stack_change *sc)
{
	fprintf(f, ",\"depth\":%u,\"popped\":%u,\"pushed\":%s,\"rebased\":%s", sc->depth, sc->popped,
		sc->pushed ? "true" : "false", sc->rebased ? "true" : "false");
}

/* With --srcline: ,"srcline":{"file":..,"line":..,"dir":..} of @addr (the file as the DWARF
 * line table names it, the compilation directory a relative one is in), or null when there is
 * none. */
static void srcline(struct auxcap_out *w, int32_t pid, uint64_t addr)
{
	const char *file, *dir;
	unsigned int line;

	if (!w->opts.srcline)
		return;
	if (auxcap_decode_srcline_dir(w->d, pid, addr, &file, &line, &dir) != 1) {
		fputs(",\"srcline\":null", w->f);
		return;
	}
	fputs(",\"srcline\":{\"file\":", w->f);
	out_json_str(w->f, file);
	fprintf(w->f, ",\"line\":%u,\"dir\":", line);
	auxcap_out_json_str(w->f, dir);
	putc('}', w->f);
}

/* With --inline: ,"inline":[{"func":..,"file":..,"line":..},..] at @addr (innermost first,
 * the function the code is in last), or null where nothing is inlined. */
static void inlines(struct auxcap_out *w, int32_t pid, uint64_t addr)
{
	struct auxcap_decode_inline fr[AUXCAP_DECODE_INLINE_MAX];
	int k;

	if (!w->opts.inlines)
		return;
	k = out_inlines(w, pid, addr, fr);
	fputs(",\"inline\":", w->f);
	auxcap_out_json_inlines(w->f, fr, (size_t)k);
}

static void trace_event(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	const struct auxcap_trace_event *te = ev->trace;
	struct json *j = w->priv;
	bool has_ip = !(te->flags & AUXCAP_TRACE_F_IP_UNKNOWN);
	FILE *f = w->f;

	switch (te->kind) {
	case AUXCAP_TRACE_BRANCH:
		if (!w->opts.branches &&
		    !(w->opts.calls &&
		      (te->branch == AUXCAP_BR_CALL || te->branch == AUXCAP_BR_RETURN)))
			return;
		trace_head(w, "branch", ev);
		fprintf(f, ",\"kind\":\"%s\"", out_branch_kind(te->branch));
		addr_sym(w, ev->pid, "from", te->ip);
		if (has_ip)
			addr_sym(w, ev->pid, "to", te->to);
		else
			fputs(",\"to\":null,\"to_sym\":null", f);
		fprintf(f, ",\"insns\":%u", te->ninsn);
		stack_change(f, &ev->stack);
		break;
	case AUXCAP_TRACE_INSN: {
		char text[160] = "";

		if (!w->opts.insns)
			return;
		trace_head(w, "insn", ev);
		addr_sym(w, ev->pid, "ip", te->ip);
		fprintf(f, ",\"size\":%u,\"bytes\":\"", te->size);
		for (unsigned int i = 0; i < te->size && i < sizeof(te->raw); i++)
			fprintf(f, "%02x", te->raw[i]);
		putc('"', f);
		fputs(",\"asm\":", f);
		if (j->disasm && auxcap_disasm_insn(j->disasm, 64, te->raw, te->size, te->ip, text,
						    sizeof(text)) > 0)
			out_json_str(f, text);
		else
			fputs("null", f);
		srcline(w, ev->pid, te->ip);
		inlines(w, ev->pid, te->ip);
		break;
	}
	case AUXCAP_TRACE_ENABLE:
	case AUXCAP_TRACE_DISABLE:
		trace_head(w, te->kind == AUXCAP_TRACE_ENABLE ? "trace_start" : "trace_end", ev);
		if (has_ip)
			addr_sym(w, ev->pid, "ip", te->ip);
		else
			fputs(",\"ip\":null,\"ip_sym\":null", f);
		if (te->kind == AUXCAP_TRACE_DISABLE)
			fprintf(f, ",\"insns\":%u", te->ninsn);
		stack_change(f, &ev->stack);
		break;
	case AUXCAP_TRACE_GAP:
		trace_head(w, "gap", ev);
		fputs(",\"reason\":", f);
		out_json_str(f, te->what ? te->what : "undecodable trace");
		fprintf(f, ",\"errno\":%d,\"native\":%d", -te->err, te->native);
		if (te->ip)
			addr(f, "ip", te->ip);
		else
			fputs(",\"ip\":null", f);
		break;
	case AUXCAP_TRACE_SAMPLE:
		trace_head(w, "trace_sample", ev);
		addr_sym(w, ev->pid, "ip", te->ip);
		if (te->flags & AUXCAP_TRACE_F_HAS_ADDR) {
			const char *name;
			uint64_t off;
			char buf[300];

			addr(f, "addr", te->addr);
			fputs(",\"addr_sym\":", f);
			if (auxcap_decode_data_symbolize_at(w->d, ev->pid, te->addr, ev->time, &name,
							    &off, NULL) == 1) {
				snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, name, off);
				out_json_str(f, buf);
			} else {
				fputs("null", f);
			}
			/* the mapping it is in ([stack], //anon, a file) */
			fputs(",\"addr_map\":", f);
			if (auxcap_decode_data_map_at(w->d, ev->pid, te->addr, ev->time, &name,
						      &off) == 1) {
				fputs("{\"name\":", f);
				out_json_str(f, name);
				fprintf(f, ",\"off\":%" PRIu64 "}", off);
			} else {
				fputs("null", f);
			}
		}
		fprintf(f, ",\"latency\":%u,\"events\":%" PRIu64 ",\"op\":%u", te->total_latency,
			te->events, te->op);
		if (te->mem) {
			fprintf(f, ",\"mem\":{\"load\":%s,\"store\":%s,\"level\":\"%s\","
				   "\"tlb_walk\":%s,\"remote\":%s",
				te->mem & AUXCAP_TRACE_MEM_LOAD ? "true" : "false",
				te->mem & AUXCAP_TRACE_MEM_STORE ? "true" : "false",
				auxcap_report_mem_level_key(
					auxcap_report_mem_level_from(te->mem, te->source)),
				te->mem & AUXCAP_TRACE_MEM_TLB_MISS ? "true" : "false",
				auxcap_report_mem_remote(te->mem, te->source) ? "true" : "false");
			if (te->source && auxcap_report_mem_source_key(te->source))
				fprintf(f, ",\"source\":\"%s\"",
					auxcap_report_mem_source_key(te->source));
			putc('}', f);
		}
		break;
	default:
		trace_head(w, "trace_event", ev);
		fputs(",\"name\":", f);
		out_json_str(f, te->what ? te->what : "event");
		if (has_ip && te->ip)
			addr_sym(w, ev->pid, "ip", te->ip);
		fprintf(f, ",\"payload\":%" PRIu64, te->payload);
		break;
	}
	fputs("}\n", f);
}

/* ,"callchain":[{"kernel":..,"ip":..,"ip_sym":..},...] innermost first, or null when the
 * event records none. */
static void callchain(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	struct auxcap_callchain_frame fr[OUT_MAX_CALLCHAIN];
	size_t n;

	if (!ev->evsel || !(ev->evsel->layout.sample_type & PERF_SAMPLE_CALLCHAIN)) {
		fputs(",\"callchain\":null", w->f);
		return;
	}
	n = auxcap_sample_callchain(&ev->rec->u.sample, fr, OUT_MAX_CALLCHAIN);
	fputs(",\"callchain\":[", w->f);
	for (size_t i = 0; i < n && i < OUT_MAX_CALLCHAIN; i++) {
		if (i)
			putc(',', w->f);
		fprintf(w->f, "{\"kernel\":%s", fr[i].kernel ? "true" : "false");
		addr_sym(w, ev->pid, "ip", fr[i].ip);
		inlines(w, ev->pid, auxcap_callchain_frame_lookup(&fr[i]));
		putc('}', w->f);
	}
	putc(']', w->f);
}

static void sample_event(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	const struct auxcap_sample *sa = &ev->rec->u.sample;
	const struct auxcap_decode_sample_ctx *x = ev->ctx;
	char name[64], sym[256];
	FILE *f = w->f;

	head(w, "sample", ev);
	fputs(",\"event\":", f);
	out_json_str(f, out_evsel_name(ev->evsel, name, sizeof(name)));
	addr_sym(w, ev->pid, "ip", sa->ip);
	int_or_null(f, "period", (int64_t)sa->period,
		    ev->evsel && (ev->evsel->layout.sample_type & PERF_SAMPLE_PERIOD));
	if (ev->evsel && (ev->evsel->layout.sample_type & PERF_SAMPLE_ADDR))
		addr(f, "addr", sa->addr);
	else
		fputs(",\"addr\":null", f);
	callchain(w, ev);
	srcline(w, ev->pid, x ? x->ip : sa->ip);
	inlines(w, ev->pid, x ? x->ip : sa->ip);
	out_json_tp_fields(w, ev, "fields", true);
	out_json_tp_trace(w, ev, "trace", true);
	if (!x) {
		fputs(",\"context\":null}\n", f);
		return;
	}
	/* addr_sym() writes ",key...": the first member is written here. */
	fprintf(f, ",\"context\":{\"ip\":\"0x%" PRIx64 "\",\"ip_sym\":", x->ip);
	{
		const char *sname = NULL;
		uint64_t off = 0;
		char buf[300];

		if (auxcap_decode_symbolize(w->d, ev->pid, x->ip, &sname, &off, NULL) == 1) {
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, sname, off);
			out_json_str(f, buf);
		} else {
			fputs("null", f);
		}
	}
	fprintf(f, ",\"aligned\":%s,\"delta_ns\":%" PRId64 ",\"window\":[%" PRIu64 ",%" PRIu64 "]",
		x->aligned ? "true" : "false", x->delta_ns, x->window_lo, x->window_hi);
	if (x->aligned)
		addr(f, "seq_from", x->seq_from);
	else
		fputs(",\"seq_from\":null", f);
	fprintf(f, ",\"seq_from_start\":%s", x->seq_from_start ? "true" : "false");
	fputs(",\"stack\":[", f);
	for (size_t i = 0; i < x->nr_stack; i++) {
		uint64_t at = i ? x->stack[i - 1].call_site : x->ip;

		fprintf(f, "%s{\"func\":\"0x%" PRIx64 "\",\"func_sym\":", i ? "," : "",
			x->stack[i].func);
		out_json_str(f, out_sym(w, ev->pid, x->stack[i].func, false, sym, sizeof(sym)));
		fprintf(f, ",\"at\":\"0x%" PRIx64 "\"", at ? at : x->stack[i].func);
		if (at)
			inlines(w, ev->pid, at);
		else if (w->opts.inlines) /* (no place in the function known) */
			fputs(",\"inline\":null", f);
		putc('}', f);
	}
	fputs("],\"branches\":[", f);
	for (size_t i = 0; i < x->nr_branches; i++) {
		const struct auxcap_decode_branch *b = &x->branches[i];

		fprintf(f, "%s{\"kind\":\"%s\",\"time\":%" PRIu64, i ? "," : "",
			out_branch_kind(b->type), b->time);
		addr_sym(w, ev->pid, "from", b->from);
		addr_sym(w, ev->pid, "to", b->to);
		putc('}', f);
	}
	fputs("],\"func_time\":[", f);
	for (size_t i = 0; i < x->nr_ftime; i++) {
		fprintf(f, "%s{\"func\":\"0x%" PRIx64 "\",\"func_sym\":", i ? "," : "",
			x->ftime[i].func);
		out_json_str(f, out_sym(w, ev->pid, x->ftime[i].func, false, sym, sizeof(sym)));
		fprintf(f, ",\"ns\":%" PRIu64 "}", x->ftime[i].ns);
	}
	fprintf(f, "],\"trace_ns\":%" PRIu64 "}}\n", x->trace_ns);
}

static void record_event(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	const struct auxcap_record *rec = ev->rec;
	FILE *f = w->f;

	if (ev->kind == AUXCAP_DECODE_LOSS) {
		head(w, "loss", ev);
		fputs(",\"what\":", f);
		out_json_str(f, ev->loss);
		fprintf(f, ",\"lost\":%" PRIu64, ev->lost);
		if (ev->auxtrace_error) {
			fprintf(f, ",\"code\":%u", ev->auxtrace_error->code);
			addr(f, "ip", ev->auxtrace_error->ip);
			fputs(",\"message\":", f);
			out_json_str(f, ev->auxtrace_error->msg);
		} else if (rec && rec->type == PERF_RECORD_AUX) {
			fprintf(f, ",\"aux_offset\":%" PRIu64 ",\"aux_size\":%" PRIu64
				   ",\"flags\":%" PRIu64,
				rec->u.aux.aux_offset, rec->u.aux.aux_size, rec->u.aux.flags);
		}
		fputs("}\n", f);
		return;
	}
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		head(w, "mmap", ev);
		addr(f, "addr", rec->u.mmap.addr);
		fprintf(f, ",\"len\":%" PRIu64 ",\"pgoff\":%" PRIu64 ",\"filename\":", rec->u.mmap.len,
			rec->u.mmap.pgoff);
		out_json_str(f, rec->u.mmap.filename);
		break;
	case PERF_RECORD_COMM:
		head(w, "comm", ev);
		fputs(",\"name\":", f);
		out_json_str(f, rec->u.comm.comm);
		fprintf(f, ",\"exec\":%s", rec->misc & PERF_RECORD_MISC_COMM_EXEC ? "true" : "false");
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		head(w, rec->type == PERF_RECORD_FORK ? "fork" : "exit", ev);
		fprintf(f, ",\"ppid\":%u,\"ptid\":%u", rec->u.task.ppid, rec->u.task.ptid);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		head(w, "switch", ev);
		fprintf(f, ",\"out\":%s", rec->misc & PERF_RECORD_MISC_SWITCH_OUT ? "true" : "false");
		int_or_null(f, "next_prev_tid", rec->u.context_switch.next_prev_tid,
			    rec->type == PERF_RECORD_SWITCH_CPU_WIDE);
		break;
	case PERF_RECORD_AUX:
		head(w, "aux", ev);
		fprintf(f, ",\"aux_offset\":%" PRIu64 ",\"aux_size\":%" PRIu64 ",\"flags\":%" PRIu64,
			rec->u.aux.aux_offset, rec->u.aux.aux_size, rec->u.aux.flags);
		break;
	case PERF_RECORD_ITRACE_START:
		head(w, "itrace_start", ev);
		break;
	default: {
		const char *name = auxcap_record_type_name(rec->type);

		head(w, "record", ev);
		fputs(",\"record\":", f);
		out_json_str(f, name ? name : "unknown");
		break;
	}
	}
	fputs("}\n", f);
}

static int json_event(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	switch (ev->kind) {
	case AUXCAP_DECODE_TRACE:
		trace_event(w, ev);
		break;
	case AUXCAP_DECODE_SAMPLE:
		sample_event(w, ev);
		break;
	case AUXCAP_DECODE_SIDEBAND:
	case AUXCAP_DECODE_LOSS:
		record_event(w, ev);
		break;
	}
	return 0;
}

static int json_finish(struct auxcap_out *w)
{
	(void)w;
	return 0;
}

const struct out_ops auxcap_out_json_ops = {
	.init = json_init,
	.event = json_event,
	.finish = json_finish,
	.fini = json_fini,
};
