/* SPDX-License-Identifier: BSD-3-Clause */
/* Enumerating and comparing the libipt test vectors (see ptt_fixture.h). */
#include "ptt_fixture.h"

#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

/* snprintf without the truncation warnings: paths here are far below the buffer sizes. */
static void pf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void pf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, n, fmt, ap);
	va_end(ap);
}

const char *ptt_root(void)
{
	static char root[512];
	const char *env = getenv("AUXCAP_SHARED_FIXTURES");
	struct stat st;

	if (!env)
		return NULL;
	pf(root, sizeof(root), "%s/libipt-ptt", env);
	if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode))
		return NULL;
	return root;
}

uint8_t *ptt_read_file(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[n] = 0;
			*ret_len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

/* Collect "; opt:<tool> ..." options and the org address from the .ptt source. */
static void read_ptt(struct ptt_vector *v, const char *tool)
{
	char key[32];
	size_t len;
	char *text = (char *)ptt_read_file(v->ptt, &len);
	char *line, *save = NULL;

	v->opts[0] = 0;
	if (!text)
		return;
	pf(key, sizeof(key), "opt:%s", tool);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = line;

		while (isspace((unsigned char)*p))
			p++;
		if (*p == ';') {
			p++;
			while (isspace((unsigned char)*p))
				p++;
			if (!strncmp(p, key, strlen(key)) &&
			    isspace((unsigned char)p[strlen(key)])) {
				p += strlen(key);
				while (isspace((unsigned char)*p))
					p++;
				if (v->opts[0])
					strncat(v->opts, " ",
						sizeof(v->opts) - strlen(v->opts) - 1);
				strncat(v->opts, p, sizeof(v->opts) - strlen(v->opts) - 1);
			}
			continue;
		}
		if (!strncasecmp(p, "org", 3) && isspace((unsigned char)p[3])) {
			v->org = strtoull(p + 3, NULL, 0);
			v->has_org = true;
		}
	}
	free(text);
}

static int cmp_vec(const void *a, const void *b)
{
	return strcmp(((const struct ptt_vector *)a)->variant,
		      ((const struct ptt_vector *)b)->variant);
}

static void scan(const char *gen, const char *src, const char *sub, const char *tool,
		 struct ptt_vector **vecs, size_t *n, size_t *cap)
{
	char path[600], marker[40];
	struct dirent *de;
	DIR *d;

	pf(path, sizeof(path), "%s/%s", gen, sub);
	d = opendir(path);
	if (!d)
		return;
	pf(marker, sizeof(marker), "-%s", tool);
	while ((de = readdir(d))) {
		char dir[700];
		struct dirent *fe;
		DIR *dd;

		if (de->d_name[0] == '.')
			continue;
		pf(dir, sizeof(dir), "%s/%s", path, de->d_name);
		dd = opendir(dir);
		if (!dd)
			continue;
		while ((fe = readdir(dd))) {
			size_t nl = strlen(de->d_name), fl = strlen(fe->d_name);
			struct ptt_vector *v;
			const char *rest;

			if (fl < 5 || strcmp(fe->d_name + fl - 4, ".exp"))
				continue;
			if (strncmp(fe->d_name, de->d_name, nl) ||
			    strncmp(fe->d_name + nl, marker, strlen(marker)))
				continue;
			rest = fe->d_name + nl + strlen(marker);
			if (*rest != '.' && *rest != '-')
				continue;
			if (*n == *cap) {
				*cap = *cap ? 2 * *cap : 256;
				*vecs = realloc(*vecs, *cap * sizeof(**vecs));
			}
			v = &(*vecs)[(*n)++];
			memset(v, 0, sizeof(*v));
			pf(v->name, sizeof(v->name), "%s", de->d_name);
			pf(v->variant, sizeof(v->variant), "%.*s", (int)(fl - 4), fe->d_name);
			pf(v->dir, sizeof(v->dir), "%s", dir);
			pf(v->exp, sizeof(v->exp), "%s/%s", dir, fe->d_name);
			pf(v->pt, sizeof(v->pt), "%s/%s.pt", dir, de->d_name);
			pf(v->bin, sizeof(v->bin), "%s/%s.bin", dir, de->d_name);
			pf(v->ptt, sizeof(v->ptt), "%s/%s/%s.ptt", src, sub, de->d_name);
			if (!strncmp(rest, "-cpu_", 5)) {
				unsigned f, m;

				if (sscanf(rest + 5, "%u_%u", &f, &m) == 2)
					pf(v->cpu, sizeof(v->cpu), "%u/%u", f, m);
			}
			read_ptt(v, tool);
		}
		closedir(dd);
	}
	closedir(d);
}

size_t ptt_vectors(const char *tool, struct ptt_vector **ret)
{
	static const char *const subs[] = { "test/src", "test/pevent/src", "pttc/test/src" };
	const char *root = ptt_root();
	struct ptt_vector *vecs = NULL;
	size_t n = 0, cap = 0;
	char gen[600], src[600];

	*ret = NULL;
	if (!root)
		return 0;
	pf(gen, sizeof(gen), "%s/generated-by-pttc", root);
	pf(src, sizeof(src), "%s/ptt-src", root);
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		scan(gen, src, subs[i], tool, &vecs, &n, &cap);
	if (n)
		qsort(vecs, n, sizeof(*vecs), cmp_vec);
	*ret = vecs;
	return n;
}

/* Next line of @s normalised into @buf (runs of blanks -> one space, trimmed). */
static const char *next_norm(const char *s, char *buf, size_t bufsz, bool *ret_have)
{
	size_t o = 0;
	bool space = false;

	*ret_have = *s != 0;
	for (; *s && *s != '\n'; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\r') {
			space = o > 0;
			continue;
		}
		if (space && o + 1 < bufsz)
			buf[o++] = ' ';
		space = false;
		if (o + 1 < bufsz)
			buf[o++] = *s;
	}
	buf[o] = 0;
	return *s ? s + 1 : s;
}

long ptt_compare(const char *exp, const char *out)
{
	char a[1024], b[1024];
	long line = 0;

	for (;; line++) {
		bool ha, hb;

		exp = next_norm(exp, a, sizeof(a), &ha);
		out = next_norm(out, b, sizeof(b), &hb);
		if (!ha && !hb)
			return -1;
		if (ha != hb || strcmp(a, b))
			return line;
	}
}

void ptt_text_addf(struct ptt_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = t->cap - t->len;

		va_start(ap, fmt);
		n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if (t->s && (size_t)n < room) {
			t->len += (size_t)n;
			return;
		}
		t->cap = (t->cap + (size_t)n + 1) * 2;
		t->s = realloc(t->s, t->cap);
		if (!t->s)
			abort();
	}
}

void ptt_text_free(struct ptt_text *t)
{
	free(t->s);
	memset(t, 0, sizeof(*t));
}

const char *ptt_listed(const char *const (*list)[2], const char *name)
{
	for (size_t i = 0; list[i][0]; i++)
		if (!strcmp(list[i][0], name))
			return list[i][1];
	return NULL;
}
