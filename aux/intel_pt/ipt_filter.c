/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intel PT address filters (see ipt_record.h, auxcap_ipt_filter_resolve()).
 *
 * Divisions: symbol tables (ELF files through libelf, the kernel through /proc/kallsyms);
 * parsing perf's syntax; resolution into the kernel's syntax.
 *
 * The kernel's address filter takes, for a file, an offset into that file (it finds the
 * mapping of the file's inode at run time), so a symbol's link-time address is turned into a
 * file offset with the PT_LOAD segment that holds it: offset = st_value - p_vaddr + p_offset.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if AUXCAP_HAVE_LIBELF
#include <gelf.h>
#include <libelf.h>
#endif

#include "auxcap/proc.h"
#include "ipt_record.h"

#define MAX_FILTERS 32

/* ---- symbol tables ----------------------------------------------------------------------- */

struct fsym {
	char *name;	/* owned */
	uint64_t addr;	/* link-time address (ELF) or kernel address */
	uint64_t size;	/* bytes; 0 unknown */
	bool global;	/* STB_GLOBAL, or an upper-case kallsyms type */
};

struct segment {
	uint64_t vaddr, offset, filesz;
};

struct symtab {
	struct fsym *syms; /* owned, sorted by address */
	size_t nr, cap;
	struct segment *segs; /* owned (ELF only) */
	size_t nsegs;
	uint64_t end; /* kallsyms: the highest symbol address seen (of any type) */
};

static void symtab_free(struct symtab *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->syms[i].name);
	free(t->syms);
	free(t->segs);
	memset(t, 0, sizeof(*t));
}

static int symtab_add(struct symtab *t, const char *name, uint64_t addr, uint64_t size,
		      bool global)
{
	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct fsym *p = realloc(t->syms, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->syms = p;
		t->cap = cap;
	}
	t->syms[t->nr].name = strdup(name);
	if (!t->syms[t->nr].name)
		return -ENOMEM;
	t->syms[t->nr].addr = addr;
	t->syms[t->nr].size = size;
	t->syms[t->nr].global = global;
	t->nr++;
	return 0;
}

static int cmp_fsym(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr ? 1 : strcmp(x->name, y->name);
}

/* Sort, and give symbols of size 0 the distance to the next higher symbol (or @end). */
static void symtab_finish(struct symtab *t)
{
	if (t->nr)
		qsort(t->syms, t->nr, sizeof(*t->syms), cmp_fsym);
	for (size_t i = 0; i < t->nr; i++) {
		if (t->syms[i].size)
			continue;
		for (size_t k = i + 1; k < t->nr; k++) {
			if (t->syms[k].addr > t->syms[i].addr) {
				t->syms[i].size = t->syms[k].addr - t->syms[i].addr;
				break;
			}
		}
		if (!t->syms[i].size && t->end > t->syms[i].addr)
			t->syms[i].size = t->end - t->syms[i].addr;
	}
}

static int fail(char *errbuf, size_t errlen, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *errbuf, size_t errlen, int r, const char *fmt, ...)
{
	va_list ap;

	if (errbuf && errlen) {
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return r;
}

#if AUXCAP_HAVE_LIBELF
/* Function symbols of @path (.symtab, else .dynsym) and its PT_LOAD segments. */
static int symtab_load_elf(const char *path, struct symtab *t, char *errbuf, size_t errlen)
{
	Elf_Scn *scn = NULL, *use = NULL;
	GElf_Shdr shdr, use_shdr = { 0 };
	size_t nph = 0;
	Elf_Data *data;
	Elf *elf;
	int fd, r = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(errbuf, errlen, -EINVAL, "libelf is unusable");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(errbuf, errlen, -EINVAL, "cannot open '%s' for its symbols: %s", path,
			    strerror(errno));
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		r = fail(errbuf, errlen, -EINVAL, "'%s' is not an ELF file", path);
		goto out;
	}
	if (elf_getphdrnum(elf, &nph) < 0) {
		r = fail(errbuf, errlen, -EINVAL, "'%s': cannot read its program headers", path);
		goto out;
	}
	t->segs = calloc(nph ? nph : 1, sizeof(*t->segs));
	if (!t->segs) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			t->segs[t->nsegs++] = (struct segment){ ph.p_vaddr, ph.p_offset, ph.p_filesz };
	}
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			continue;
		if (shdr.sh_type == SHT_SYMTAB || (shdr.sh_type == SHT_DYNSYM && !use)) {
			use = scn;
			use_shdr = shdr;
		}
	}
	if (!use) {
		r = fail(errbuf, errlen, -EINVAL, "'%s' has no symbol table", path);
		goto out;
	}
	data = elf_getdata(use, NULL);
	for (size_t i = 0; data && use_shdr.sh_entsize && i < use_shdr.sh_size / use_shdr.sh_entsize;
	     i++) {
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value)
			continue;
		name = elf_strptr(elf, use_shdr.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		r = symtab_add(t, name, sym.st_value, sym.st_size,
			       GELF_ST_BIND(sym.st_info) == STB_GLOBAL);
		if (r < 0)
			goto out;
	}
	symtab_finish(t);
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return r;
}
#else
static int symtab_load_elf(const char *path, struct symtab *t, char *errbuf, size_t errlen)
{
	(void)t;
	return fail(errbuf, errlen, -EINVAL,
		    "cannot resolve symbols of '%s': this build has no libelf; give file offsets",
		    path);
}
#endif

struct kload {
	struct symtab *t;
	bool nonzero;
};

static int kallsyms_sym(void *ctx, uint64_t addr, char type, const char *name, bool module)
{
	struct kload *l = ctx;

	l->nonzero |= addr != 0;
	if (addr > l->t->end && !module)
		l->t->end = addr;
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	return symtab_add(l->t, name, addr, 0, isupper((unsigned char)type) != 0);
}

static int symtab_load_kallsyms(struct symtab *t, char *errbuf, size_t errlen)
{
	struct kload l = { t, false };
	int r = auxcap_proc_kallsyms("/proc/kallsyms", kallsyms_sym, &l);

	if (r < 0 && r != -ENOMEM)
		return fail(errbuf, errlen, -EINVAL, "cannot read /proc/kallsyms: %s",
			    strerror(-r));
	if (r < 0)
		return r;
	if (!l.nonzero)
		return fail(errbuf, errlen, -EINVAL,
			    "kernel addresses are hidden in /proc/kallsyms (kptr_restrict): run as "
			    "root or give addresses");
	symtab_finish(t);
	return 0;
}

/*
 * The function symbol @name (@idx: -1 any single one, 0 the global one, N the N-th by
 * address, 1-based).  Returns its index or a negative errno with the reason in @errbuf.
 */
static int symtab_find(const struct symtab *t, const char *name, int idx, const char *where,
		       char *errbuf, size_t errlen)
{
	int found = -1, count = 0;

	for (size_t i = 0; i < t->nr; i++) {
		if (strcmp(t->syms[i].name, name))
			continue;
		/* aliases at the same address are one function */
		if (found >= 0 && t->syms[found].addr == t->syms[i].addr)
			continue;
		count++;
		if ((idx < 0 && found < 0) || (idx == 0 && t->syms[i].global && found < 0) ||
		    (idx > 0 && count == idx))
			found = (int)i;
	}
	if (idx < 0 && count > 1)
		return fail(errbuf, errlen, -EINVAL,
			    "symbol '%s' is defined %d times in %s: pick one with '%s #N' (N = 1.."
			    "%d, by address) or the global one with '%s #g'",
			    name, count, where, name, count, name);
	if (found >= 0)
		return found;
	if (idx > 0)
		return fail(errbuf, errlen, -EINVAL, "%s has %d function symbol%s '%s', not #%d",
			    where, count, count == 1 ? "" : "s", name, idx);
	return fail(errbuf, errlen, -EINVAL, "%s has no %sfunction symbol '%s'", where,
		    idx == 0 ? "global " : "", name);
}

/* The file offset of link-time address @addr of an ELF file. */
static int elf_offset(const struct symtab *t, uint64_t addr, const char *name, const char *path,
		      uint64_t *ret, char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct segment *s = &t->segs[i];

		if (addr >= s->vaddr && addr < s->vaddr + s->filesz) {
			*ret = addr - s->vaddr + s->offset;
			return 0;
		}
	}
	return fail(errbuf, errlen, -EINVAL, "symbol '%s' (0x%" PRIx64 ") of '%s' lies in no "
		    "loadable segment", name, addr, path);
}

/* ---- parsing ------------------------------------------------------------------------------ */

struct addr_spec {
	bool is_sym;
	uint64_t num;
	char sym[256];
	int idx; /* -1 none, 0 "#g", N "#N" */
};

struct filter {
	char action[16]; /* filter, start, stop */
	bool range;	 /* a range (filter, tracestop, or START/SIZE) */
	struct addr_spec from;
	bool has_to;
	struct addr_spec to;
	char file[PATH_MAX]; /* "" for the kernel */
};

static const char *skip_sep(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == ',')
		p++;
	return p;
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static int parse_addr(const char **pp, struct addr_spec *a, char *errbuf, size_t errlen)
{
	const char *p = skip_space(*pp);
	size_t n;

	memset(a, 0, sizeof(*a));
	a->idx = -1;
	if (isdigit((unsigned char)*p)) {
		char *end;

		errno = 0;
		a->num = strtoull(p, &end, 0);
		if (errno || end == p)
			return fail(errbuf, errlen, -EINVAL, "bad number at '%s'", p);
		*pp = end;
		return 0;
	}
	n = strcspn(p, " \t,/@#");
	if (!n)
		return fail(errbuf, errlen, -EINVAL, "expected an address or a symbol at '%s'",
			    *p ? p : "(end)");
	if (n >= sizeof(a->sym))
		return fail(errbuf, errlen, -EINVAL, "symbol name too long at '%.40s'", p);
	memcpy(a->sym, p, n);
	a->sym[n] = '\0';
	a->is_sym = true;
	p = skip_space(p + n);
	if (*p == '#') {
		p++;
		if (*p == 'g' || *p == 'G') {
			a->idx = 0;
			p++;
		} else {
			char *end;
			long v = strtol(p, &end, 10);

			if (end == p || v <= 0 || v > INT_MAX)
				return fail(errbuf, errlen, -EINVAL,
					    "bad symbol index after '%s #': give #N (N >= 1) or #g",
					    a->sym);
			a->idx = (int)v;
			p = end;
		}
	}
	*pp = p;
	return 0;
}

static int parse_one(const char **pp, struct filter *f, char *errbuf, size_t errlen)
{
	const char *p = *pp;
	size_t n = strcspn(p, " \t,");
	int r;

	memset(f, 0, sizeof(*f));
	if (n == 6 && !strncmp(p, "filter", 6)) {
		strcpy(f->action, "filter");
		f->range = true;
	} else if (n == 5 && !strncmp(p, "start", 5)) {
		strcpy(f->action, "start");
	} else if (n == 4 && !strncmp(p, "stop", 4)) {
		strcpy(f->action, "stop");
	} else if (n == 9 && !strncmp(p, "tracestop", 9)) {
		strcpy(f->action, "stop");
		f->range = true;
	} else {
		return fail(errbuf, errlen, -EINVAL,
			    "unknown filter action '%.*s': use filter, start, stop or tracestop",
			    (int)(n < 32 ? n : 32), p);
	}
	p += n;
	r = parse_addr(&p, &f->from, errbuf, errlen);
	if (r < 0)
		return r;
	p = skip_space(p);
	if (*p == '/') {
		p++;
		r = parse_addr(&p, &f->to, errbuf, errlen);
		if (r < 0)
			return r;
		f->has_to = true;
		f->range = true;
		p = skip_space(p);
	}
	if (*p == '@') {
		p = skip_space(p + 1);
		n = strcspn(p, " \t,");
		if (!n)
			return fail(errbuf, errlen, -EINVAL, "'@' without a file name");
		if (n >= sizeof(f->file))
			return fail(errbuf, errlen, -EINVAL, "file name too long");
		memcpy(f->file, p, n);
		f->file[n] = '\0';
		p += n;
	}
	p = skip_space(p);
	if (*p && *p != ',')
		return fail(errbuf, errlen, -EINVAL, "unexpected '%.40s' in a filter", p);
	*pp = skip_sep(p);
	return 0;
}

/* ---- resolution ----------------------------------------------------------------------------- */

/* Address (file offset or kernel address) and size of symbol @a in @t. */
static int resolve_sym(const struct symtab *t, const struct filter *f, const struct addr_spec *a,
		       uint64_t *ret_addr, uint64_t *ret_size, char *errbuf, size_t errlen)
{
	const char *where = f->file[0] ? f->file : "the kernel (/proc/kallsyms)";
	int i = symtab_find(t, a->sym, a->idx, where, errbuf, errlen);
	int r;

	if (i < 0)
		return i;
	*ret_size = t->syms[i].size;
	if (!f->file[0]) {
		*ret_addr = t->syms[i].addr;
		return 0;
	}
	r = elf_offset(t, t->syms[i].addr, a->sym, f->file, ret_addr, errbuf, errlen);
	return r;
}

static int resolve_one(const struct filter *f, char *out, size_t len, char *errbuf,
		       size_t errlen)
{
	struct symtab t = { 0 };
	char real[PATH_MAX] = "";
	uint64_t addr = f->from.num, size = f->has_to ? f->to.num : 0, a2, s2;
	bool need_syms = f->from.is_sym || (f->has_to && f->to.is_sym);
	int r = 0, n;

	if (f->file[0] && !realpath(f->file, real))
		return fail(errbuf, errlen, -EINVAL, "filter file '%s': %s", f->file,
			    strerror(errno));
	if (need_syms) {
		r = f->file[0] ? symtab_load_elf(real, &t, errbuf, errlen)
			       : symtab_load_kallsyms(&t, errbuf, errlen);
		if (r < 0)
			goto out;
	}
	if (f->from.is_sym && !strcmp(f->from.sym, "*")) {
		/* the whole file's or kernel's code: first function to the end of the last */
		uint64_t lo = UINT64_MAX, hi = 0;

		for (size_t i = 0; i < t.nr; i++) {
			lo = t.syms[i].addr < lo ? t.syms[i].addr : lo;
			if (t.syms[i].addr + t.syms[i].size > hi)
				hi = t.syms[i].addr + t.syms[i].size;
		}
		if (!t.nr || hi <= lo) {
			r = fail(errbuf, errlen, -EINVAL, "no function symbols in %s",
				 f->file[0] ? real : "/proc/kallsyms");
			goto out;
		}
		if (f->file[0]) {
			r = elf_offset(&t, lo, "*", real, &addr, errbuf, errlen);
			if (r < 0)
				goto out;
		} else {
			addr = lo;
		}
		size = hi - lo;
	} else if (f->from.is_sym) {
		r = resolve_sym(&t, f, &f->from, &addr, &s2, errbuf, errlen);
		if (r < 0)
			goto out;
		if (f->range && !f->has_to)
			size = s2;
	}
	if (f->has_to && f->to.is_sym) {
		r = resolve_sym(&t, f, &f->to, &a2, &s2, errbuf, errlen);
		if (r < 0)
			goto out;
		if (a2 + s2 < addr) {
			r = fail(errbuf, errlen, -EINVAL,
				 "symbol '%s' (0x%" PRIx64 ") comes before the start 0x%" PRIx64,
				 f->to.sym, a2, addr);
			goto out;
		}
		size = a2 + s2 - addr;
	}
	if (f->range && !size) {
		r = fail(errbuf, errlen, -EINVAL,
			 "cannot tell the size of the range starting at %s: give START/SIZE",
			 f->from.is_sym ? f->from.sym : "that address");
		goto out;
	}
	if (f->range)
		n = snprintf(out, len, "%s 0x%" PRIx64 "/0x%" PRIx64 "%s%s", f->action, addr, size,
			     real[0] ? "@" : "", real);
	else
		n = snprintf(out, len, "%s 0x%" PRIx64 "%s%s", f->action, addr, real[0] ? "@" : "",
			     real);
	if (n < 0 || (size_t)n >= len)
		r = -ENOSPC;
out:
	symtab_free(&t);
	return r;
}

int auxcap_ipt_filter_resolve(const char *text, uint32_t max_filters, char *buf, size_t len,
			      char *errbuf, size_t errlen)
{
	const char *p;
	size_t used = 0, count = 0;
	struct filter *f;
	int r = 0;

	if (!text || !buf || !len)
		return -EINVAL;
	buf[0] = '\0';
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (p = skip_sep(text); *p;) {
		char one[PATH_MAX + 128];

		r = parse_one(&p, f, errbuf, errlen);
		if (r < 0)
			goto out;
		if (++count > MAX_FILTERS || count > max_filters) {
			r = fail(errbuf, errlen, -E2BIG,
				 "%zu or more address filters given; the PMU has %u (nr_addr_filters)",
				 count, max_filters);
			goto out;
		}
		r = resolve_one(f, one, sizeof(one), errbuf, errlen);
		if (r < 0)
			goto out;
		if (used + !!used + strlen(one) + 1 > len) {
			r = -ENOSPC;
			goto out;
		}
		used += (size_t)sprintf(buf + used, "%s%s", used ? "," : "", one);
	}
	if (!count)
		r = fail(errbuf, errlen, -EINVAL, "empty address filter");
out:
	if (r == -ENOSPC)
		(void)fail(errbuf, errlen, r, "the address filter is too long");
	if (r < 0)
		buf[0] = '\0';
	free(f);
	return r;
}
