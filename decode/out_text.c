/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The text writer: perf-script-like lines, one per event (README "Decode" documents them).
 *
 * Raw trace files keep the layout of the first auxcap releases: the TSC (or "-"), then the
 * event.  Captures put the thread and time first: "comm tid [cpu] sec.nsec: ".  The event
 * part is the same in both:
 *
 *   call     00000000004011d6 work+0x16 => 0000000000401126 leaf_add+0x0     (--itrace=b)
 *      2   call   leaf_add+0x0 (from work+0x16)                              (--itrace=c)
 *   0000000000401126 leaf_add+0x0                     lea rax, [rdi + rsi]   (--itrace=i)
 *   !! gap at trace offset 0x2b: <reason> (ip 0x...); decoding resumes at the next sync point
 *   -- <trace event> [at ADDR SYM] (trace offset 0x...)
 *   sample   cpu-clock 00000000004011d6 work+0x16 period=250000 [addr=0x...]
 *   	callchain: work+0x16 <- run+0x31 <- main+0x40	(with PERF_SAMPLE_CALLCHAIN)
 *   	stack: work+0x16 <- run+0x2c <- main+0x3b
 *   	branch: call 0000000000401200 run+0x27 => 00000000004011c0 work+0x0
 *   	srcline: example_loop.c:34	(--srcline; an instruction's at the end of its line)
 *   	inline: inner prog.c:17 <- middle prog.c:22 <- outer prog.c:30	(--inline)
 *   !! LOST 3 records
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "decode_int.h"
#include "disasm.h"
#include "out_int.h"

struct text {
	bool raw;
	/* the "comm tid [cpu] " and "sec." parts of the last line, reused while they last */
	bool pre_valid;
	char pre_comm[17]; /* a copy: a thread's name may change in place */
	int32_t pre_tid, pre_cpu;
	char pre[48];
	size_t pre_n;
	uint64_t sec;
	char sec_s[24];
	size_t sec_n;
	struct auxcap_disasm *disasm; /* NULL if not built or not needed */
	struct out_tmap *depth;	      /* per thread: long, the --itrace=c call depth */
	struct addr_text *atext;      /* ADDR_TEXT entries, NULL until first needed */
	uint32_t atext_gen;	      /* auxcap_decode_sym_gen() they were made with */
	/* the backend's text of its own fields of an event (Arm SPE's samples), NULL: none */
	int (*describe)(const struct auxcap_trace_event *ev, char *buf, size_t len);
};

/*
 * "%016" PRIx64 " name+0xOFF" of an address, as a branch line prints it, cached: a branch
 * line has two, from a few thousand branch sites, and formatting them and looking their
 * symbols up was a sixth of `auxcap decode --itrace=b`.  Direct-mapped; one cache line each.
 */
#define ADDR_TEXT 4096

struct addr_text {
	uint64_t addr;
	int32_t pid;
	uint8_t len; /* 0: empty */
	char text[51];
};

static int text_init(struct auxcap_out *w)
{
	const struct auxcap_decode_info *info = auxcap_decode_get_info(w->d);
	const struct auxcap_backend_ops *be;
	struct text *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	w->priv = t;
	t->raw = info->raw;
	be = info->backend ? auxcap_backend_find(info->backend) : NULL;
	t->describe = be ? be->describe : NULL;
	if (w->opts.insns)
		(void)auxcap_disasm_new(&t->disasm);
	r = out_tmap_new(&t->depth, sizeof(long));
	if (r < 0)
		return r;
	if (!t->raw) {
		for (size_t i = 0; i < info->nr_queues; i++) {
			const struct auxcap_decode_queue *q = auxcap_decode_get_queue(w->d, i);

			fprintf(w->f, "# %s %zu: idx %u cpu %d tid %d, %" PRIu64 " bytes\n",
				q->snapshot ? "snapshot" : "AUX stream", i, q->idx, q->cpu, q->tid,
				q->bytes);
		}
	}
	return 0;
}

static void text_fini(struct auxcap_out *w)
{
	struct text *t = w->priv;

	if (!t)
		return;
	auxcap_disasm_free(t->disasm);
	out_tmap_free(t->depth);
	free(t->atext);
	free(t);
}

/*
 * Lines are built in a buffer by hand and written with one fwrite: branch lines come by the
 * million, and printf's format parsing was half the time of `auxcap decode --itrace=b`.  The
 * output is byte for byte what the printf formats in the comments give.
 */
struct line {
	char b[1024];
	size_t n;
};

static void ln_mem(struct line *l, const char *s, size_t n)
{
	if (n > sizeof(l->b) - l->n)
		n = sizeof(l->b) - l->n;
	memcpy(l->b + l->n, s, n);
	l->n += n;
}

static void ln_str(struct line *l, const char *s)
{
	ln_mem(l, s, strlen(s));
}

static void ln_pad(struct line *l, size_t n)
{
	if (n > sizeof(l->b) - l->n)
		n = sizeof(l->b) - l->n;
	memset(l->b + l->n, ' ', n);
	l->n += n;
}

/* "%-Ws" (@max: "%-W.MAXs") */
static void ln_left(struct line *l, const char *s, size_t width, size_t max)
{
	size_t n = strlen(s);

	if (n > max)
		n = max;
	ln_mem(l, s, n);
	if (n < width)
		ln_pad(l, width - n);
}

/* @v in base 10 or 16 (lower case), at least @digits digits (zero-filled), right-aligned
 * in @width: "%0*x", "%*u", "%0*d" with a minus sign for negatives */
static void ln_num(struct line *l, uint64_t v, bool neg, unsigned int base, size_t digits,
		   size_t width)
{
	static const char digit[] = "0123456789abcdef";
	char tmp[24];
	size_t n = 0;

	/* constant divisors: the compiler turns them into multiplications and shifts */
	if (base == 16) {
		do {
			tmp[n++] = digit[v & 15];
			v >>= 4;
		} while (v);
	} else {
		do {
			tmp[n++] = digit[v % 10];
			v /= 10;
		} while (v);
	}
	while (n < digits)
		tmp[n++] = '0';
	if (neg)
		tmp[n++] = '-';
	if (n < width)
		ln_pad(l, width - n);
	if (n > sizeof(l->b) - l->n)
		return;
	while (n)
		l->b[l->n++] = tmp[--n];
}

/* "%016" PRIx64: two digits per table lookup */
static void ln_hex16(struct line *l, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char *p;

	if (sizeof(l->b) - l->n < 16)
		return;
	p = l->b + l->n;
	for (int i = 15; i >= 0; i--, v >>= 4)
		p[i] = hex[v & 15];
	l->n += 16;
}

/* "%09" PRIu64 for @v < 10^9: two digits per division */
static void ln_dec9(struct line *l, uint64_t v)
{
	char *p;

	if (sizeof(l->b) - l->n < 9)
		return;
	p = l->b + l->n;
	for (int i = 8; i > 0; i -= 2, v /= 100) {
		unsigned int d = (unsigned int)(v % 100);

		p[i] = (char)('0' + d % 10);
		p[i - 1] = (char)('0' + d / 10);
	}
	p[0] = (char)('0' + v % 10);
	l->n += 9;
}

/* The line's start: the TSC (raw files), or "comm tid [cpu] time: ". */
static void prefix_line(struct auxcap_out *w, const struct auxcap_decode_event *ev,
			struct line *l)
{
	struct text *t = w->priv;
	const char *comm;

	if (t->raw) {
		/* "%16" PRIu64 " " or "%16s " "-" */
		if (ev->trace && (ev->trace->flags & AUXCAP_TRACE_F_HAS_TSC))
			ln_num(l, ev->trace->tsc, false, 10, 1, 16);
		else
		{
			ln_pad(l, 15);
			ln_str(l, "-");
		}
		ln_str(l, " ");
		return;
	}
	/* "%-16.16s %6d ", then "[%03d] " or "[---] ", then "%" PRIu64 ".%09" PRIu64 ": " */
	comm = ev->comm ? ev->comm : ":-";
	if (!t->pre_valid || t->pre_tid != ev->tid || t->pre_cpu != ev->cpu ||
	    strncmp(t->pre_comm, comm, sizeof(t->pre_comm))) {
		struct line p;

		p.n = 0;
		ln_left(&p, comm, 16, 16);
		ln_str(&p, " ");
		ln_num(&p, ev->tid < 0 ? (uint64_t)-(int64_t)ev->tid : (uint64_t)ev->tid,
		       ev->tid < 0, 10, 1, 6);
		if (ev->cpu >= 0) {
			ln_str(&p, " [");
			ln_num(&p, (uint64_t)ev->cpu, false, 10, 3, 3);
			ln_str(&p, "] ");
		} else {
			ln_str(&p, " [---] ");
		}
		t->pre_valid = p.n <= sizeof(t->pre) && strlen(comm) < sizeof(t->pre_comm);
		if (t->pre_valid) {
			memcpy(t->pre, p.b, p.n);
			t->pre_n = p.n;
			strcpy(t->pre_comm, comm);
			t->pre_tid = ev->tid;
			t->pre_cpu = ev->cpu;
		}
		ln_mem(l, p.b, p.n);
	} else {
		ln_mem(l, t->pre, t->pre_n);
	}
	if (!t->sec_n || t->sec != ev->time / 1000000000u) {
		struct line p;

		p.n = 0;
		t->sec = ev->time / 1000000000u;
		ln_num(&p, t->sec, false, 10, 1, 1);
		ln_str(&p, ".");
		t->sec_n = p.n;
		memcpy(t->sec_s, p.b, p.n);
	}
	ln_mem(l, t->sec_s, t->sec_n);
	ln_dec9(l, ev->time % 1000000000u);
	ln_str(l, ": ");
}

static void prefix(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	struct line l;

	l.n = 0;
	prefix_line(w, ev, &l);
	fwrite_unlocked(l.b, 1, l.n, w->f); /* one writer per stream */
}

/* "%016" PRIx64 " %s" with out_sym()'s "name+0x%" PRIx64 or "[unknown]", else
 * "%16s %s" "0" "[untraced]" */
static void addr_sym_line(struct auxcap_out *w, int32_t pid, uint64_t addr, bool known,
			  struct line *l)
{
	struct text *t = w->priv;
	struct addr_text *e = NULL;
	const char *text;
	size_t len, start;

	if (!known) {
		ln_pad(l, 15);
		ln_str(l, "0 [untraced]");
		return;
	}
	if (!t->atext || t->atext_gen != auxcap_decode_sym_gen(w->d)) {
		if (!t->atext)
			t->atext = malloc(ADDR_TEXT * sizeof(*t->atext));
		if (t->atext)
			for (size_t i = 0; i < ADDR_TEXT; i++)
				t->atext[i].len = 0;
		t->atext_gen = auxcap_decode_sym_gen(w->d);
	}
	if (t->atext) {
		e = &t->atext[((addr ^ ((uint64_t)(uint32_t)pid << 40)) * 0x9e3779b97f4a7c15ull) >>
			      52];
		if (e->len && e->addr == addr && e->pid == pid) {
			/* the whole entry (a constant size: no `rep movsb` start-up), then the
			 * length */
			if (sizeof(l->b) - l->n >= sizeof(e->text)) {
				memcpy(l->b + l->n, e->text, sizeof(e->text));
				l->n += e->len;
			} else {
				ln_mem(l, e->text, e->len);
			}
			return;
		}
	}
	start = l->n;
	ln_hex16(l, addr);
	ln_str(l, " ");
	auxcap_decode_sym_text(w->d, pid, addr, &text, &len);
	ln_mem(l, text, len);
	if (e && l->n - start <= sizeof(e->text)) {
		e->addr = addr;
		e->pid = pid;
		e->len = (uint8_t)(l->n - start);
		memcpy(e->text, l->b + start, e->len);
	}
}

static void addr_sym(struct auxcap_out *w, int32_t pid, uint64_t addr, bool known)
{
	struct line l;

	l.n = 0;
	addr_sym_line(w, pid, addr, known, &l);
	fwrite_unlocked(l.b, 1, l.n, w->f); /* one writer per stream */
}

static void branch_line(struct auxcap_out *w, const struct auxcap_decode_event *ev,
			const char *kind, uint64_t from, bool has_from, uint64_t to, bool has_to)
{
	struct line l;

	if (!w->opts.branches)
		return;
	l.n = 0;
	prefix_line(w, ev, &l);
	ln_left(&l, kind, 9, SIZE_MAX); /* "%-9s" */
	addr_sym_line(w, ev->pid, from, has_from, &l);
	ln_str(&l, " => ");
	addr_sym_line(w, ev->pid, to, has_to, &l);
	ln_str(&l, "\n");
	fwrite_unlocked(l.b, 1, l.n, w->f); /* one writer per stream */
}

static int callret_line(struct auxcap_out *w, const struct auxcap_decode_event *ev, bool call)
{
	struct text *t = w->priv;
	char fs[256], ts[256];
	bool is_new;
	long *depth = out_tmap_get(t->depth, ev->tid >= 0 ? ev->tid : -1 - ev->queue, &is_new);
	long dep;

	if (!depth)
		return -ENOMEM;
	if (call)
		dep = (*depth)++;
	else
		dep = *depth > 0 ? --*depth : 0;
	if (!w->opts.calls)
		return 0;
	prefix(w, ev);
	fprintf(w->f, "%4ld %*s%s %s (from %s)\n", dep, (int)(2 * (dep < 40 ? dep : 40)), "",
		call ? "call  " : "return", out_sym(w, ev->pid, ev->trace->to, true, ts, sizeof(ts)),
		out_sym(w, ev->pid, ev->trace->ip, true, fs, sizeof(fs)));
	return 0;
}

/* With --inline, the functions inlined at @addr, innermost first, as "@lead inner <- middle"
 * (each followed by @each); nothing where none is.  Returns how many were written. */
static int inlined_names(struct auxcap_out *w, int32_t pid, uint64_t addr, const char *lead,
			 const char *each)
{
	struct auxcap_decode_inline fr[AUXCAP_DECODE_INLINE_MAX];
	int k = out_inlines(w, pid, addr, fr);

	for (int i = 0; i + 1 < k; i++)
		fprintf(w->f, "%s%s%s", i ? " <- " : lead, out_inline_name(&fr[i]), each);
	return k > 1 ? k - 1 : 0;
}

/* With --inline, a sample's chain of inlined functions at @addr with their source lines. */
static void inline_line(struct auxcap_out *w, int32_t pid, uint64_t addr)
{
	struct auxcap_decode_inline fr[AUXCAP_DECODE_INLINE_MAX];
	int k = out_inlines(w, pid, addr, fr);

	if (!k)
		return;
	fputs("\tinline:", w->f);
	for (int i = 0; i < k; i++) {
		const char *base = fr[i].file ? strrchr(fr[i].file, '/') : NULL;

		fprintf(w->f, "%s%s", i ? " <- " : " ", out_inline_name(&fr[i]));
		if (fr[i].file)
			fprintf(w->f, " %s:%u", base ? base + 1 : fr[i].file, fr[i].line);
	}
	putc('\n', w->f);
}

static void insn_line(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	const struct auxcap_trace_event *te = ev->trace;
	struct text *t = w->priv;
	char sym[256], text[160] = "(no disassembler)";

	if (t->disasm &&
	    auxcap_disasm_insn(t->disasm, 64, te->raw, te->size, te->ip, text, sizeof(text)) < 0)
		snprintf(text, sizeof(text), "(bad instruction)");
	prefix(w, ev);
	fprintf(w->f, "%016" PRIx64 " %-32s %s%s", te->ip,
		out_sym(w, ev->pid, te->ip, true, sym, sizeof(sym)),
		te->flags & AUXCAP_TRACE_F_SPECULATIVE ? "? " : "", text);
	if (w->opts.srcline && out_srcline(w, ev->pid, te->ip, sym, sizeof(sym)))
		fprintf(w->f, "  %s", sym);
	inlined_names(w, ev->pid, te->ip, "  inlined: ", "");
	putc('\n', w->f);
}

static int trace_event(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	const struct auxcap_trace_event *te = ev->trace;
	bool has_ip = !(te->flags & AUXCAP_TRACE_F_IP_UNKNOWN);
	char sym[256];

	switch (te->kind) {
	case AUXCAP_TRACE_BRANCH:
		branch_line(w, ev, out_branch_kind(te->branch), te->ip, true, te->to,
			    te->branch != AUXCAP_BR_ASYNC || has_ip);
		if (te->branch == AUXCAP_BR_CALL || te->branch == AUXCAP_BR_SYSCALL)
			return callret_line(w, ev, true);
		if (te->branch == AUXCAP_BR_RETURN || te->branch == AUXCAP_BR_SYSRET)
			return callret_line(w, ev, false);
		return 0;
	case AUXCAP_TRACE_INSN:
		if (w->opts.insns)
			insn_line(w, ev);
		return 0;
	case AUXCAP_TRACE_ENABLE:
		branch_line(w, ev, "tr strt", 0, false, te->ip, has_ip);
		return 0;
	case AUXCAP_TRACE_DISABLE:
		branch_line(w, ev, "tr end", te->ip, has_ip, 0, false);
		return 0;
	case AUXCAP_TRACE_GAP:
		prefix(w, ev);
		fprintf(w->f, "!! gap at trace offset 0x%" PRIx64 ": %s", te->offset,
			te->what ? te->what : "undecodable trace");
		if (te->ip)
			fprintf(w->f, " (ip 0x%" PRIx64 ")", te->ip);
		fputs("; decoding resumes at the next sync point\n", w->f);
		return 0;
	case AUXCAP_TRACE_SAMPLE: {
		const struct text *t = w->priv;
		char desc[512];

		prefix(w, ev);
		fprintf(w->f, "trace-sample %016" PRIx64 " %s", te->ip,
			out_sym(w, ev->pid, te->ip, true, sym, sizeof(sym)));
		if (t->describe && t->describe(te, desc, sizeof(desc)) > 0) {
			fputs(desc, w->f);
		} else {
			if (te->flags & AUXCAP_TRACE_F_HAS_ADDR)
				fprintf(w->f, " addr=0x%" PRIx64, te->addr);
			if (te->total_latency)
				fprintf(w->f, " lat=%u", te->total_latency);
		}
		/* the variable there (perf mem's symbol_daddr), else its mapping (dso_daddr) */
		if ((te->flags & AUXCAP_TRACE_F_HAS_ADDR) &&
		    auxcap_decode_data_name_at(w->d, ev->pid, te->addr, ev->time, desc,
					       sizeof(desc)))
			fprintf(w->f, " data=%s", desc);
		putc('\n', w->f);
		return 0;
	}
	default:
		prefix(w, ev);
		fprintf(w->f, "-- %s", te->what ? te->what : "event");
		if (te->what && !strcmp(te->what, "paging"))
			fprintf(w->f, " cr3=0x%" PRIx64, te->payload);
		else if (te->what && !strcmp(te->what, "ptwrite"))
			fprintf(w->f, " 0x%" PRIx64, te->payload);
		if (has_ip && te->ip)
			fprintf(w->f, " at %016" PRIx64 " %s", te->ip,
				out_sym(w, ev->pid, te->ip, true, sym, sizeof(sym)));
		fprintf(w->f, " (trace offset 0x%" PRIx64 ")\n", te->offset);
		return 0;
	}
}

/* A tracepoint sample's fields (its raw data by the capture's format), the kernel's own
 * common_* ones left out: "\tfields: prev_comm=bash prev_pid=12 ..."; then, where the format's
 * print expression can be evaluated (libtraceevent), "\ttrace: " and the kernel's text. */
static void fields_line(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	const struct auxcap_tp_format *tf = auxcap_decode_tp_format(w->d, ev->evsel);
	const struct auxcap_sample *sa = &ev->rec->u.sample;
	bool any = false;
	char v[512], t[OUT_TP_TEXT_MAX];

	if (!tf || !sa->raw.data)
		return;
	for (size_t i = 0; i < tf->nr_fields; i++) {
		const struct auxcap_tp_field *fld = &tf->fields[i];

		if (fld->common)
			continue;
		if (!any)
			fputs("\tfields:", w->f);
		any = true;
		if (auxcap_tp_field_text(fld, sa->raw.data, sa->raw.size, v, sizeof(v)) < 0)
			fprintf(w->f, " %s=?", fld->name);
		else
			fprintf(w->f, " %s=%s", fld->name, v);
	}
	if (any)
		putc('\n', w->f);
	/* and as the kernel prints it, by its print format (perf script's text) */
	if (any && auxcap_decode_tp_print(w->d, ev, t, sizeof(t)) > 0)
		fprintf(w->f, "\ttrace: %s\n", t);
}

/* The sample's callchain (PERF_SAMPLE_CALLCHAIN), innermost first: frame pointers' view. */
static void callchain_line(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	struct auxcap_callchain_frame fr[OUT_MAX_CALLCHAIN];
	size_t n = auxcap_sample_callchain(&ev->rec->u.sample, fr, OUT_MAX_CALLCHAIN);
	char sym[256];

	if (!n)
		return;
	fputs("\tcallchain:", w->f);
	for (size_t i = 0; i < n && i < OUT_MAX_CALLCHAIN; i++) {
		fputs(i ? " <- " : " ", w->f);
		if (inlined_names(w, ev->pid, auxcap_callchain_frame_lookup(&fr[i]), "",
				  " (inlined)"))
			fputs(" <- ", w->f);
		fputs(out_sym(w, ev->pid, fr[i].ip, true, sym, sizeof(sym)), w->f);
	}
	if (n > OUT_MAX_CALLCHAIN)
		fprintf(w->f, " <- ... (%zu more)", n - OUT_MAX_CALLCHAIN);
	putc('\n', w->f);
}

static void sample_lines(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	const struct auxcap_sample *sa = &ev->rec->u.sample;
	const struct auxcap_decode_sample_ctx *x = ev->ctx;
	char sym[256], name[64];

	prefix(w, ev);
	fprintf(w->f, "sample   %s %016" PRIx64 " %s", out_evsel_name(ev->evsel, name, sizeof(name)),
		sa->ip, out_sym(w, ev->pid, sa->ip, true, sym, sizeof(sym)));
	if (ev->evsel && (ev->evsel->layout.sample_type & PERF_SAMPLE_PERIOD))
		fprintf(w->f, " period=%" PRIu64, sa->period);
	if (ev->evsel && (ev->evsel->layout.sample_type & PERF_SAMPLE_ADDR))
		fprintf(w->f, " addr=0x%" PRIx64, sa->addr);
	putc('\n', w->f);
	if (w->opts.srcline && out_srcline(w, ev->pid, x ? x->ip : sa->ip, sym, sizeof(sym)))
		fprintf(w->f, "\tsrcline: %s\n", sym);
	inline_line(w, ev->pid, x ? x->ip : sa->ip);
	fields_line(w, ev);
	callchain_line(w, ev);
	if (!x) {
		/* (a sampled trace, Arm SPE's, gives no sample a context, nor a capture without
		 * trace: nothing to say) */
		if (!auxcap_decode_get_info(w->d)->sampled && auxcap_decode_get_info(w->d)->backend)
			fputs("\tno trace of this thread\n", w->f);
		return;
	}
	fputs(x->aligned ? "\tstack:" : "\tstack (ip not found in the trace near it):", w->f);
	for (size_t i = 0; i < x->nr_stack; i++) {
		uint64_t at = i ? x->stack[i - 1].call_site : x->ip;

		fputs(i ? " <- " : " ", w->f);
		if (at && inlined_names(w, ev->pid, at, "", " (inlined)"))
			fputs(" <- ", w->f);
		fputs(out_sym(w, ev->pid, at ? at : x->stack[i].func, true, sym, sizeof(sym)), w->f);
	}
	putc('\n', w->f);
	for (size_t i = 0; i < x->nr_branches; i++) {
		const struct auxcap_decode_branch *b = &x->branches[i];

		fprintf(w->f, "\tbranch: %-7s ", out_branch_kind(b->type));
		addr_sym(w, ev->pid, b->from, true);
		fputs(" => ", w->f);
		addr_sym(w, ev->pid, b->to, true);
		putc('\n', w->f);
	}
	if (w->opts.func_time && x->nr_ftime) {
		fprintf(w->f, "\tftime: %" PRIu64 " ns traced:", x->trace_ns);
		for (size_t i = 0; i < x->nr_ftime; i++)
			fprintf(w->f, "%s %s %" PRIu64 " ns", i ? "," : "",
				out_sym(w, ev->pid, x->ftime[i].func, false, sym, sizeof(sym)),
				x->ftime[i].ns);
		putc('\n', w->f);
	}
}

static void loss_line(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	prefix(w, ev);
	if (ev->auxtrace_error) {
		fprintf(w->f, "!! AUXTRACE_ERROR type %u code %u ip 0x%" PRIx64 ": %s\n",
			ev->auxtrace_error->type, ev->auxtrace_error->code, ev->auxtrace_error->ip,
			ev->auxtrace_error->msg);
	} else if (ev->rec && ev->rec->type == PERF_RECORD_AUX) {
		fprintf(w->f, "!! %s: AUX offset 0x%" PRIx64 " size %" PRIu64 " flags 0x%" PRIx64 "\n",
			ev->loss, ev->rec->u.aux.aux_offset, ev->rec->u.aux.aux_size,
			ev->rec->u.aux.flags);
	} else {
		fprintf(w->f, "!! %s: %" PRIu64 " %s lost\n", ev->loss, ev->lost,
			ev->rec && ev->rec->type == PERF_RECORD_LOST ? "records" : "samples");
	}
}

static void sideband_line(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	const struct auxcap_record *rec = ev->rec;
	const char *name = auxcap_record_type_name(rec->type);

	prefix(w, ev);
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		fprintf(w->f, "%-9s%016" PRIx64 " len 0x%" PRIx64 " pgoff 0x%" PRIx64 " %s\n", name,
			rec->u.mmap.addr, rec->u.mmap.len, rec->u.mmap.pgoff, rec->u.mmap.filename);
		break;
	case PERF_RECORD_COMM:
		fprintf(w->f, "COMM     %s%s\n", rec->u.comm.comm,
			rec->misc & PERF_RECORD_MISC_COMM_EXEC ? " (exec)" : "");
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		fprintf(w->f, "%-9s%u/%u (parent %u/%u)\n", name, rec->u.task.pid, rec->u.task.tid,
			rec->u.task.ppid, rec->u.task.ptid);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		fprintf(w->f, "SWITCH   %s", rec->misc & PERF_RECORD_MISC_SWITCH_OUT ? "out" : "in");
		if (rec->type == PERF_RECORD_SWITCH_CPU_WIDE)
			fprintf(w->f, " %s %u/%u",
				rec->misc & PERF_RECORD_MISC_SWITCH_OUT ? "next" : "prev",
				rec->u.context_switch.next_prev_pid,
				rec->u.context_switch.next_prev_tid);
		putc('\n', w->f);
		break;
	case PERF_RECORD_AUX:
		fprintf(w->f, "AUX      offset 0x%" PRIx64 " size %" PRIu64 " flags 0x%" PRIx64 "\n",
			rec->u.aux.aux_offset, rec->u.aux.aux_size, rec->u.aux.flags);
		break;
	case PERF_RECORD_ITRACE_START:
		fprintf(w->f, "ITRACE_START %u/%u\n", rec->u.itrace_start.pid,
			rec->u.itrace_start.tid);
		break;
	default:
		fprintf(w->f, "%s\n", name ? name : "record");
		break;
	}
}

static int text_event(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	switch (ev->kind) {
	case AUXCAP_DECODE_TRACE:
		return trace_event(w, ev);
	case AUXCAP_DECODE_SAMPLE:
		sample_lines(w, ev);
		return 0;
	case AUXCAP_DECODE_LOSS:
		loss_line(w, ev);
		return 0;
	case AUXCAP_DECODE_SIDEBAND:
		if (w->opts.sideband)
			sideband_line(w, ev);
		return 0;
	}
	return 0;
}

static int text_finish(struct auxcap_out *w)
{
	(void)w;
	return 0;
}

const struct out_ops auxcap_out_text_ops = {
	.init = text_init,
	.event = text_event,
	.finish = text_finish,
	.fini = text_fini,
};
