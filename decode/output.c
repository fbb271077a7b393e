/* SPDX-License-Identifier: BSD-3-Clause */
/* The writers' common part: selection, symbols, JSON strings, per-thread tables. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "out_int.h"

int auxcap_out_parse_format(const char *name, enum auxcap_out_format *ret)
{
	static const char *const names[] = { "text", "json", "perfetto", "folded" };

	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i])) {
			*ret = (enum auxcap_out_format)i;
			return 0;
		}
	return -EINVAL;
}

int auxcap_out_new(FILE *f, struct auxcap_decode *d, const struct auxcap_out_opts *opts,
		   struct auxcap_out **ret)
{
	struct auxcap_out *w;
	int r;

	if (!f || !d || !opts || opts->sz < sizeof(*opts) || !ret)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->f = f;
	w->d = d;
	w->opts = *opts;
	switch (opts->format) {
	case AUXCAP_OUT_TEXT:
		w->ops = &auxcap_out_text_ops;
		break;
	case AUXCAP_OUT_JSON:
		w->ops = &auxcap_out_json_ops;
		break;
	case AUXCAP_OUT_PERFETTO:
		w->ops = &auxcap_out_perfetto_ops;
		break;
	case AUXCAP_OUT_FOLDED:
		w->ops = &auxcap_out_folded_ops;
		break;
	default:
		free(w);
		return -EINVAL;
	}
	r = w->ops->init(w);
	if (r == 0 && ferror(f))
		r = -EIO;
	if (r < 0) {
		auxcap_out_free(w);
		return r;
	}
	*ret = w;
	return 0;
}

/* A thread's place in the instruction period. */
struct insn_period {
	uint64_t count; /* INSN events since the last one written */
	uint64_t next;	/* the time the next one may be written at (ns periods) */
};

/*
 * perf's --itrace=iPERIOD: an INSN event is written if it is the first of its thread, or
 * @insn_period more since the last one written, or the first at or after the end of the
 * @insn_period_ns span of perf time the last one written fell in.
 * Returns 1 to write @ev, 0 to skip it, -ENOMEM.
 */
static int insn_due(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	struct insn_period *p;
	bool is_new;

	if (!w->period && out_tmap_new(&w->period, sizeof(*p)) < 0)
		return -ENOMEM;
	p = out_tmap_get(w->period, ev->tid >= 0 ? ev->tid : -1 - (int64_t)ev->queue, &is_new);
	if (!p)
		return -ENOMEM;
	if (w->opts.insn_period_ns) {
		if (!is_new && ev->time < p->next)
			return 0;
		p->next = (ev->time / w->opts.insn_period_ns + 1) * w->opts.insn_period_ns;
		return 1;
	}
	if (!is_new && ++p->count < w->opts.insn_period)
		return 0;
	p->count = 0;
	return 1;
}

int auxcap_out_event(struct auxcap_out *w, const struct auxcap_decode_event *ev)
{
	int r;

	if (!w || !ev)
		return -EINVAL;
	if ((w->opts.insn_period > 1 || w->opts.insn_period_ns) &&
	    ev->kind == AUXCAP_DECODE_TRACE && ev->trace->kind == AUXCAP_TRACE_INSN) {
		r = insn_due(w, ev);
		if (r <= 0)
			return r;
	}
	r = w->ops->event(w, ev);
	if (r < 0)
		return r;
	return ferror(w->f) ? -EIO : 0;
}

int auxcap_out_finish(struct auxcap_out *w)
{
	int r;

	if (!w)
		return -EINVAL;
	r = w->ops->finish(w);
	if (r < 0)
		return r;
	if (fflush(w->f) == EOF || ferror(w->f))
		return -EIO;
	return 0;
}

void auxcap_out_free(struct auxcap_out *w)
{
	if (!w)
		return;
	if (w->ops && w->ops->fini)
		w->ops->fini(w);
	out_tmap_free(w->period);
	free(w);
}

const char *out_srcline(struct auxcap_out *w, int32_t pid, uint64_t addr, char *buf, size_t n)
{
	const char *file, *base;
	unsigned int line;

	if (auxcap_decode_srcline(w->d, pid, addr, &file, &line) != 1)
		return NULL;
	base = strrchr(file, '/');
	snprintf(buf, n, "%s:%u", base ? base + 1 : file, line);
	return buf;
}

int out_inlines(struct auxcap_out *w, int32_t pid, uint64_t addr,
		struct auxcap_decode_inline fr[AUXCAP_DECODE_INLINE_MAX])
{
	int k;

	if (!w->opts.inlines)
		return 0;
	k = auxcap_decode_inlines(w->d, pid, addr, fr, AUXCAP_DECODE_INLINE_MAX);
	return k > 0 ? k : 0;
}

const char *out_inline_name(const struct auxcap_decode_inline *f)
{
	return f->name ? f->name : "[unknown]";
}

const char *out_sym(struct auxcap_out *w, int32_t pid, uint64_t addr, bool with_off, char *buf,
		    size_t n)
{
	const char *name = NULL;
	uint64_t off = 0;

	if (auxcap_decode_symbolize(w->d, pid, addr, &name, &off, NULL) == 1) {
		if (with_off)
			snprintf(buf, n, "%s+0x%" PRIx64, name, off);
		else
			snprintf(buf, n, "%s", name);
	} else {
		snprintf(buf, n, "[unknown]");
	}
	return buf;
}

const char *out_sym_at(struct auxcap_out *w, int32_t pid, uint64_t addr, uint64_t time, char *buf,
		       size_t n)
{
	const char *name = NULL;

	if (auxcap_decode_symbolize_at(w->d, pid, addr, time, &name, NULL, NULL) == 1)
		snprintf(buf, n, "%s", name);
	else
		snprintf(buf, n, "[unknown]");
	return buf;
}

const char *out_branch_kind(enum auxcap_branch_type t)
{
	switch (t) {
	case AUXCAP_BR_CALL:
		return "call";
	case AUXCAP_BR_RETURN:
		return "return";
	case AUXCAP_BR_JUMP:
		return "jmp";
	case AUXCAP_BR_COND:
		return "jcc";
	case AUXCAP_BR_SYSCALL:
		return "syscall";
	case AUXCAP_BR_SYSRET:
		return "sysret";
	case AUXCAP_BR_FAR_JUMP:
		return "far-jmp";
	case AUXCAP_BR_ASYNC:
		return "interrupt";
	default:
		return "branch";
	}
}

void out_json_tp_trace(struct auxcap_out *w, const struct auxcap_decode_event *ev,
		       const char *key, bool null_if_none)
{
	char t[OUT_TP_TEXT_MAX];

	if (auxcap_decode_tp_print(w->d, ev, t, sizeof(t)) > 0) {
		fprintf(w->f, ",\"%s\":", key);
		out_json_str(w->f, t);
	} else if (null_if_none) {
		fprintf(w->f, ",\"%s\":null", key);
	}
}

void out_json_tp_fields(struct auxcap_out *w, const struct auxcap_decode_event *ev,
			const char *key, bool null_if_none)
{
	const struct auxcap_tp_format *tf = auxcap_decode_tp_format(w->d, ev->evsel);
	const struct auxcap_sample *sa = &ev->rec->u.sample;
	bool first = true;
	char v[512];

	if (!tf || !sa->raw.data) {
		if (null_if_none)
			fprintf(w->f, ",\"%s\":null", key);
		return;
	}
	fprintf(w->f, ",\"%s\":{", key);
	for (size_t i = 0; i < tf->nr_fields; i++) {
		const struct auxcap_tp_field *fld = &tf->fields[i];
		uint64_t n;

		if (fld->common)
			continue;
		if (!first)
			putc(',', w->f);
		first = false;
		out_json_str(w->f, fld->name);
		putc(':', w->f);
		if (fld->kind == AUXCAP_TP_INT &&
		    auxcap_tp_field_int(fld, sa->raw.data, sa->raw.size, &n) == 0)
			fld->is_signed ? fprintf(w->f, "%" PRId64, (int64_t)n)
				       : fprintf(w->f, "%" PRIu64, n);
		else if (auxcap_tp_field_text(fld, sa->raw.data, sa->raw.size, v, sizeof(v)) >= 0)
			out_json_str(w->f, v);
		else
			fputs("null", w->f); /* outside the raw data */
	}
	putc('}', w->f);
}

void auxcap_out_json_inlines(FILE *f, const struct auxcap_decode_inline *fr, size_t n)
{
	if (n < 2) {
		fputs("null", f);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",{\"func\":" : "[{\"func\":", f);
		auxcap_out_json_str(f, fr[i].name);
		fputs(",\"file\":", f);
		auxcap_out_json_str(f, fr[i].file);
		if (fr[i].line)
			fprintf(f, ",\"line\":%u}", fr[i].line);
		else
			fputs(",\"line\":null}", f);
	}
	putc(']', f);
}

void auxcap_out_json_str(FILE *f, const char *s)
{
	if (s)
		out_json_str(f, s);
	else
		fputs("null", f);
}

void out_json_str(FILE *f, const char *s)
{
	putc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else if (*p >= 0x80) {
			/* Keep valid UTF-8 sequences, escape stray bytes. */
			int len = (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3
							  : (*p & 0xf8) == 0xf0 ? 4 : 0;
			int k;

			for (k = 1; k < len && (p[k] & 0xc0) == 0x80; k++)
				;
			if (len && k == len) {
				fwrite(p, 1, (size_t)len, f);
				p += len - 1;
			} else {
				fprintf(f, "\\u%04x", *p);
			}
		} else {
			putc(*p, f);
		}
	}
	putc('"', f);
}

const char *out_evsel_name(const struct auxcap_perf_evsel *es, char *buf, size_t n)
{
	if (es && es->name)
		return es->name;
	snprintf(buf, n, "event");
	return buf;
}

/* ---- per-thread tables ----------------------------------------------------------------- */

struct out_tmap {
	size_t vsize, cap, n;
	unsigned char *slots; /* [used:1][pad][key:8][value] */
};

static size_t slot_size(const struct out_tmap *m)
{
	return 16 + ((m->vsize + 7) & ~(size_t)7);
}

int out_tmap_new(struct out_tmap **ret, size_t value_size)
{
	struct out_tmap *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->vsize = value_size;
	*ret = m;
	return 0;
}

void out_tmap_free(struct out_tmap *m)
{
	if (!m)
		return;
	free(m->slots);
	free(m);
}

static unsigned char *probe(unsigned char *slots, size_t cap, size_t ss, int64_t key)
{
	size_t i = (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);

	for (;; i = (i + 1) & (cap - 1)) {
		unsigned char *s = slots + i * ss;
		int64_t k;

		if (!s[0])
			return s;
		memcpy(&k, s + 8, 8);
		if (k == key)
			return s;
	}
}

void *out_tmap_get(struct out_tmap *m, int64_t key, bool *ret_new)
{
	size_t ss = slot_size(m);
	unsigned char *s;

	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		unsigned char *ns = calloc(cap, ss);

		if (!ns)
			return NULL;
		for (size_t i = 0; i < m->cap; i++) {
			unsigned char *o = m->slots + i * ss;
			int64_t k;

			if (!o[0])
				continue;
			memcpy(&k, o + 8, 8);
			memcpy(probe(ns, cap, ss, k), o, ss);
		}
		free(m->slots);
		m->slots = ns;
		m->cap = cap;
	}
	s = probe(m->slots, m->cap, ss, key);
	*ret_new = !s[0];
	if (!s[0]) {
		s[0] = 1;
		memcpy(s + 8, &key, 8);
		m->n++;
	}
	return s + 16;
}

void out_tmap_each(struct out_tmap *m, void (*fn)(void *arg, int64_t key, void *value), void *arg)
{
	size_t ss = slot_size(m);

	for (size_t i = 0; i < m->cap; i++) {
		unsigned char *s = m->slots + i * ss;
		int64_t k;

		if (!s[0])
			continue;
		memcpy(&k, s + 8, 8);
		fn(arg, k, s + 16);
	}
}
