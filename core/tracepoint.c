/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tracepoint formats and their fields (auxcap/tracepoint.h): the field lines of a tracefs
 * format file, and each field's value in a sample's raw data as text.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxcap/tracepoint.h"

#define MAX_OFFSET 65536 /* raw data is at most a record: 64 KiB */

void auxcap_tp_format_free(struct auxcap_tp_format *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nr_fields; i++)
		free(f->fields[i].name);
	free(f->fields);
	free(f->name);
	free(f);
}

/* The number after "@key:" in @line (up to @end), -1 if absent or bad. */
static long line_num(const char *line, const char *end, const char *key)
{
	size_t klen = strlen(key);

	for (const char *p = line; p + klen < end; p++) {
		if (!strncmp(p, key, klen) && p[klen] == ':' &&
		    (p == line || !isalnum((unsigned char)p[-1]))) {
			char *e;
			long v = strtol(p + klen + 1, &e, 10);

			return e == p + klen + 1 || v < 0 ? -1 : v;
		}
	}
	return -1;
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* "field:DECL;\toffset:N;\tsize:N;\tsigned:N;" between @line and @end into @fld. */
static int parse_field(const char *line, const char *end, struct auxcap_tp_field *fld)
{
	const char *decl = strstr(line, "field:"), *dend, *nend, *nstart, *bracket = NULL;
	long off = line_num(line, end, "offset"), size = line_num(line, end, "size"),
	     sgn = line_num(line, end, "signed");
	size_t tlen;
	unsigned long n = 0;
	char type[256];

	memset(fld, 0, sizeof(*fld));
	if (!decl || decl >= end || off < 0 || size < 0 || off + size > MAX_OFFSET)
		return -EBADMSG;
	decl += 6;
	dend = memchr(decl, ';', (size_t)(end - decl));
	if (!dend)
		return -EBADMSG;
	nend = dend;
	while (nend > decl && isspace((unsigned char)nend[-1]))
		nend--;
	if (nend > decl && nend[-1] == ']') { /* NAME[N] */
		const char *b = nend - 1;

		while (b > decl && *b != '[')
			b--;
		if (*b != '[')
			return -EBADMSG;
		bracket = b;
		n = strtoul(b + 1, NULL, 10);
		nend = b;
	}
	if (size == 0 && !bracket)
		return -EBADMSG; /* (only a flexible array, NAME[], takes no bytes) */
	nstart = nend;
	while (nstart > decl && ident_char(nstart[-1]))
		nstart--;
	if (nstart == nend)
		return -EBADMSG;
	tlen = (size_t)(nstart - decl);
	if (tlen >= sizeof(type))
		tlen = sizeof(type) - 1;
	memcpy(type, decl, tlen);
	type[tlen] = '\0';

	fld->name = strndup(nstart, (size_t)(nend - nstart));
	if (!fld->name)
		return -ENOMEM;
	fld->offset = (uint32_t)off;
	fld->size = (uint32_t)size;
	fld->is_signed = sgn > 0;
	fld->common = !strncmp(fld->name, "common_", 7);
	fld->dynamic = !strncmp(type, "__data_loc", 10) || !strncmp(type, "__rel_loc", 9);
	fld->relative = !strncmp(type, "__rel_loc", 9);
	if (fld->dynamic) {
		fld->kind = strstr(type, "char") ? AUXCAP_TP_STRING : AUXCAP_TP_BYTES;
		if (size < 4)
			return -EBADMSG;
	} else if (bracket) {
		fld->flexible = size == 0;
		if (strstr(type, "char") && !strchr(type, '*'))
			fld->kind = AUXCAP_TP_STRING;
		else if (n && size % (long)n == 0 &&
			 (size / (long)n == 1 || size / (long)n == 2 || size / (long)n == 4 ||
			  size / (long)n == 8)) {
			fld->kind = AUXCAP_TP_ARRAY;
			fld->elem_size = (uint32_t)(size / (long)n);
		} else {
			fld->kind = AUXCAP_TP_BYTES;
		}
	} else if (strchr(type, '*') && (size == 4 || size == 8)) {
		fld->kind = AUXCAP_TP_POINTER;
	} else if (size == 1 || size == 2 || size == 4 || size == 8) {
		fld->kind = AUXCAP_TP_INT;
	} else {
		fld->kind = AUXCAP_TP_BYTES;
	}
	return 0;
}

int auxcap_tp_format_parse(const char *text, size_t len, struct auxcap_tp_format **ret)
{
	struct auxcap_tp_format *f;
	const char *p, *end;
	char *copy;
	size_t cap = 0;
	bool has_id = false;
	int r = 0;

	if (!text || !ret)
		return -EINVAL;
	/* A NUL-terminated copy: the numbers and names below are read with the C library's
	 * string functions, which must not run past @len (the text is not terminated). */
	copy = malloc(len + 1);
	f = calloc(1, sizeof(*f));
	if (!copy || !f) {
		free(copy);
		free(f);
		return -ENOMEM;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	p = copy;
	end = copy + strlen(copy); /* (a NUL inside ends the text) */
	while (p < end && r == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
		const char *s = p;

		while (s < le && isspace((unsigned char)*s))
			s++;
		if ((size_t)(le - s) > 3 && !strncmp(s, "ID:", 3)) {
			char *e;
			unsigned long long id = strtoull(s + 3, &e, 10);

			if (e == s + 3)
				r = -EBADMSG;
			f->id = id;
			has_id = true;
		} else if ((size_t)(le - s) > 5 && !strncmp(s, "name:", 5) && !f->name) {
			const char *n = s + 5, *ne = le;

			while (n < ne && isspace((unsigned char)*n))
				n++;
			while (ne > n && isspace((unsigned char)ne[-1]))
				ne--;
			f->name = strndup(n, (size_t)(ne - n));
			if (!f->name)
				r = -ENOMEM;
		} else if ((size_t)(le - s) > 6 && !strncmp(s, "field:", 6)) {
			if (f->nr_fields == cap) {
				size_t nc = cap ? 2 * cap : 16;
				struct auxcap_tp_field *nf = realloc(f->fields, nc * sizeof(*nf));

				if (!nf) {
					r = -ENOMEM;
					break;
				}
				f->fields = nf;
				cap = nc;
			}
			r = parse_field(s, le, &f->fields[f->nr_fields]);
			if (r == 0 || f->fields[f->nr_fields].name)
				f->nr_fields++; /* (a field that failed with its name: freed below) */
		}
		p = nl ? nl + 1 : end;
	}
	free(copy);
	if (r == 0 && !has_id)
		r = -EBADMSG;
	if (r < 0) {
		auxcap_tp_format_free(f);
		return r;
	}
	*ret = f;
	return 0;
}

static uint64_t get_uint(const unsigned char *p, uint32_t size)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64 = 0;

	switch (size) {
	case 1: memcpy(&u8, p, 1); return u8;
	case 2: memcpy(&u16, p, 2); return u16;
	case 4: memcpy(&u32, p, 4); return u32;
	default: memcpy(&u64, p, 8); return u64;
	}
}

static uint64_t sign_extend(uint64_t v, uint32_t size)
{
	unsigned int bits = size * 8;

	if (bits >= 64)
		return v;
	return (v ^ (1ULL << (bits - 1))) - (1ULL << (bits - 1));
}

int auxcap_tp_field_int(const struct auxcap_tp_field *fld, const void *raw, size_t size,
			uint64_t *ret)
{
	uint64_t v;

	if (fld->kind != AUXCAP_TP_INT && fld->kind != AUXCAP_TP_POINTER)
		return -EINVAL;
	if ((size_t)fld->offset + fld->size > size)
		return -ERANGE;
	v = get_uint((const unsigned char *)raw + fld->offset, fld->size);
	*ret = fld->is_signed ? sign_extend(v, fld->size) : v;
	return 0;
}

/* Appending to a fixed buffer: what fits is kept, the length counts what fit. */
struct tbuf {
	char *p;
	size_t cap, len;
};

static void tput(struct tbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tput(struct tbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->len + 1 >= b->cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len = b->len + (size_t)n < b->cap ? b->len + (size_t)n : b->cap - 1;
}

int auxcap_tp_field_text(const struct auxcap_tp_field *fld, const void *raw, size_t size,
			 char *buf, size_t bufsize)
{
	const unsigned char *data = raw, *p;
	struct tbuf b = { buf, bufsize, 0 };
	uint64_t v, len;

	if (bufsize)
		buf[0] = '\0';
	if ((size_t)fld->offset + fld->size > size)
		return -ERANGE;
	p = data + fld->offset;
	len = fld->flexible ? size - fld->offset : fld->size;
	if (fld->dynamic) {
		uint64_t loc = get_uint(p, 4), at = loc & 0xffff;

		len = loc >> 16;
		if (fld->relative)
			at += (uint64_t)fld->offset + fld->size;
		if (at + len > size)
			return -ERANGE;
		p = data + at;
	}
	switch (fld->kind) {
	case AUXCAP_TP_INT:
		v = get_uint(p, fld->size);
		if (fld->is_signed)
			tput(&b, "%" PRId64, (int64_t)sign_extend(v, fld->size));
		else
			tput(&b, "%" PRIu64, v);
		break;
	case AUXCAP_TP_POINTER:
		tput(&b, "0x%" PRIx64, get_uint(p, fld->size));
		break;
	case AUXCAP_TP_STRING:
		for (uint64_t i = 0; i < len && p[i]; i++) {
			if (p[i] < 0x20 || p[i] > 0x7e || p[i] == '\\')
				tput(&b, "\\x%02x", p[i]);
			else
				tput(&b, "%c", p[i]);
		}
		break;
	case AUXCAP_TP_ARRAY:
		for (uint64_t i = 0; i + fld->elem_size <= len; i += fld->elem_size)
			tput(&b, "%s0x%" PRIx64, i ? "," : "", get_uint(p + i, fld->elem_size));
		break;
	default:
		for (uint64_t i = 0; i < len; i++)
			tput(&b, "%02x", p[i]);
		break;
	}
	return (int)b.len;
}
