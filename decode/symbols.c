/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Symbols of the traced address spaces: executable mappings (pid, address range, file offset,
 * path) and, for each file, its ELF symbol table (decode/elf_file.c, opened on first use).
 *
 * An address becomes a symbol through the file offset it maps to: offset = addr - start +
 * pgoff; the PT_LOAD segment holding that offset gives the link-time address, which the
 * symbol table names.  This works for executables, PIEs and shared objects alike, whatever
 * segment of the file the mapping covers.  A direct-mapped cache in front keeps repeated
 * look-ups (the same branch sites over and over) cheap.
 *
 * A process that exec'd had other mappings before: each mapping has the span of time it was
 * in place (auxcap_symbols_set_span()), and look-ups answer for the time the decode has
 * reached (auxcap_symbols_set_time(); before that, for the end of the capture).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <inttypes.h>
#include <stdio.h>

#include "auxcap/file.h"
#include "auxcap/proc.h"
#include "decode_int.h"
#include "grow.h"
#include "sorted.h"
#if AUXCAP_HAVE_LIBELF
#include "elf_file.h"
#endif

#define CACHE_SIZE 4096 /* entries, power of two */

struct sym_file {
	char *path;
	int fd; /* for reading code, -1 until opened (or if it cannot be) */
	bool fd_tried;
#if AUXCAP_HAVE_LIBELF
	struct auxcap_elf *elf; /* owned, NULL until opened or if it cannot be */
#endif
	bool tried;
};

struct sym_map {
	int32_t pid;
	bool dropped;
	uint64_t start, end, pgoff;
	uint64_t time; /* when it was made, 0 if not known */
	uint64_t since, until; /* when it was in place (auxcap_symbols_set_span()) */
	size_t file; /* index into files */
};

struct sym_cache {
	uint64_t addr;
	int32_t pid;
	bool valid;
	int result;
	const char *name, *dso;
	uint64_t off;
	uint8_t text_len; /* 0: @text not formatted yet (auxcap_symbols_text()) */
	char text[47];	  /* "name+0xOFF" when it fits */
};

struct auxcap_symbols {
	struct sym_map *maps;
	size_t n, cap;
	struct sym_file *files;
	size_t nfiles, capfiles;
	struct sym_cache *cache;
	size_t last; /* map of the last hit */
	uint32_t gen; /* bumped whenever the mappings change (auxcap_symbols_gen()) */
	uint64_t now;	     /* the time look-ups are for (auxcap_symbols_set_time()) */
	uint64_t now_lo, now_hi; /* the stretch around @now with the same mappings */
	uint64_t *bounds;    /* the times the mappings change (ascending, distinct) */
	size_t nr_bounds;
	bool bounds_stale;   /* a span changed since @bounds was made */
	char text_big[256]; /* auxcap_symbols_text() of a name too long for its cache entry */
	bool raw_names;	    /* names as the files have them, not demangled */
	/* The kernel's functions (auxcap_symbols_set_kallsyms()), loaded on first use. */
	char *kallsyms_path;	/* NULL: kernel addresses stay unnamed */
	bool kallsyms_tried;
	struct ksym *ksyms;	/* sorted by address */
	size_t nr_ksyms;
	char *knames;		/* their names, NUL-separated */
};

struct ksym {
	uint64_t addr;
	size_t name; /* offset in knames */
};

static const char kernel_dso[] = "[kernel.kallsyms]";

int auxcap_symbols_new(struct auxcap_symbols **ret)
{
	struct auxcap_symbols *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->cache = calloc(CACHE_SIZE, sizeof(*s->cache));
	if (!s->cache) {
		free(s);
		return -ENOMEM;
	}
	s->now = UINT64_MAX; /* until told otherwise: the mappings at the end */
	s->now_lo = 0;
	s->now_hi = UINT64_MAX;
	*ret = s;
	return 0;
}

void auxcap_symbols_free(struct auxcap_symbols *s)
{
	if (s) {
		free(s->kallsyms_path);
		free(s->ksyms);
		free(s->knames);
	}
	if (!s)
		return;
	for (size_t i = 0; i < s->nfiles; i++) {
#if AUXCAP_HAVE_LIBELF
		auxcap_elf_free(s->files[i].elf);
#endif
		if (s->files[i].fd >= 0)
			(void)close(s->files[i].fd);
		free(s->files[i].path);
	}
	free(s->files);
	free(s->maps);
	free(s->cache);
	free(s->bounds);
	free(s);
}

static void cache_clear(struct auxcap_symbols *s)
{
	memset(s->cache, 0, CACHE_SIZE * sizeof(*s->cache));
	s->gen++;
}

void auxcap_symbols_set_raw_names(struct auxcap_symbols *s, bool raw)
{
	s->raw_names = raw;
#if AUXCAP_HAVE_LIBELF
	for (size_t i = 0; i < s->nfiles; i++)
		auxcap_elf_set_raw_names(s->files[i].elf, raw);
#endif
	cache_clear(s);
}

uint32_t auxcap_symbols_gen(const struct auxcap_symbols *s)
{
	return s->gen;
}

int auxcap_symbols_add(struct auxcap_symbols *s, int32_t pid, uint64_t start, uint64_t len,
		       uint64_t pgoff, const char *path, uint64_t time)
{
	size_t f;

	for (f = 0; f < s->nfiles; f++)
		if (!strcmp(s->files[f].path, path))
			break;
	if (f == s->nfiles) {
		if (s->nfiles == s->capfiles) {
			size_t cap = s->capfiles ? 2 * s->capfiles : 16;
			struct sym_file *nf = realloc(s->files, cap * sizeof(*nf));

			if (!nf)
				return -ENOMEM;
			s->files = nf;
			s->capfiles = cap;
		}
		memset(&s->files[f], 0, sizeof(s->files[f]));
		s->files[f].fd = -1;
		s->files[f].path = strdup(path);
		if (!s->files[f].path)
			return -ENOMEM;
		s->nfiles++;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 32;
		struct sym_map *nm = realloc(s->maps, cap * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		s->maps = nm;
		s->cap = cap;
	}
	s->maps[s->n++] = (struct sym_map){ pid, false, start, start + len, pgoff, time, 0,
					    UINT64_MAX, f };
	cache_clear(s);
	return 0;
}

int auxcap_symbols_set_span(struct auxcap_symbols *s, size_t i, uint64_t since, uint64_t until)
{
	if (i >= s->n || since >= until)
		return -EINVAL;
	s->maps[i].since = since;
	s->maps[i].until = until;
	s->bounds_stale = true;
	s->now_lo = s->now_hi = s->now; /* not known until set_time() */
	cache_clear(s);
	return 0;
}

static int make_bounds(struct auxcap_symbols *s)
{
	size_t n = 0;

	free(s->bounds);
	s->bounds = NULL;
	s->nr_bounds = 0;
	for (size_t i = 0; i < s->n; i++)
		n += (s->maps[i].since != 0) + (s->maps[i].until != UINT64_MAX);
	if (n) {
		s->bounds = malloc(n * sizeof(*s->bounds));
		if (!s->bounds)
			return -ENOMEM;
		n = 0;
		for (size_t i = 0; i < s->n; i++) {
			if (s->maps[i].since != 0)
				s->bounds[n++] = s->maps[i].since;
			if (s->maps[i].until != UINT64_MAX)
				s->bounds[n++] = s->maps[i].until;
		}
		s->nr_bounds = auxcap_sort_unique_u64(s->bounds, n);
	}
	s->bounds_stale = false;
	return 0;
}

void auxcap_symbols_set_time(struct auxcap_symbols *s, uint64_t t, uint64_t *ret_lo,
			     uint64_t *ret_hi)
{
	size_t lo;

	if (s->bounds_stale && make_bounds(s) < 0) {
		/* out of memory: look-ups stay as they were, asked again at every change */
		*ret_lo = *ret_hi = t;
		return;
	}
	lo = auxcap_upper_bound_u64(s->bounds, s->nr_bounds, t);
	*ret_lo = lo ? s->bounds[lo - 1] : 0;
	*ret_hi = lo < s->nr_bounds ? s->bounds[lo] : UINT64_MAX;
	/* another stretch: other mappings, other answers */
	if (s->now < *ret_lo || s->now >= *ret_hi || (s->now == UINT64_MAX && s->nr_bounds))
		cache_clear(s);
	s->now = t;
	s->now_lo = *ret_lo;
	s->now_hi = *ret_hi;
}

void auxcap_symbols_drop_pid(struct auxcap_symbols *s, int32_t pid, uint64_t time)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->maps[i].pid == pid && s->maps[i].time < time)
			s->maps[i].dropped = true;
	cache_clear(s);
}

static bool map_has(const struct sym_map *m, int32_t pid, uint64_t addr, uint64_t now)
{
	return !m->dropped && addr >= m->start && addr < m->end &&
	       (pid < 0 || m->pid < 0 || m->pid == pid) && now >= m->since &&
	       (now < m->until || m->until == UINT64_MAX);
}

/*
 * The newest mapping holding @addr in @pid (later mappings replace earlier ones), else in any
 * process (a thread whose process is not known, or whose mappings the capture lacks).
 */
static const struct sym_map *find_map(struct auxcap_symbols *s, int32_t pid, uint64_t addr,
				      uint64_t now)
{
	if (s->last < s->n && map_has(&s->maps[s->last], pid, addr, now))
		return &s->maps[s->last];
	for (int pass = 0; pass < 2; pass++, pid = -1)
		for (size_t i = s->n; i-- > 0;)
			if (map_has(&s->maps[i], pid, addr, now)) {
				s->last = i;
				return &s->maps[i];
			}
	return NULL;
}

int auxcap_symbols_set_kallsyms(struct auxcap_symbols *s, const char *path)
{
	char *p = path ? strdup(path) : NULL;

	if (path && !p)
		return -ENOMEM;
	free(s->kallsyms_path);
	s->kallsyms_path = p;
	s->kallsyms_tried = false;
	cache_clear(s);
	return 0;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

struct kload {
	struct auxcap_symbols *s;
	size_t cap, ncap, nlen;
};

/* A text symbol (T, t, W, w) of kallsyms, modules' too, joins the table. */
static int add_ksym(void *ctx, uint64_t addr, char type, const char *name, bool module)
{
	struct kload *l = ctx;
	struct auxcap_symbols *s = l->s;
	size_t len = strlen(name) + 1;

	(void)module;
	if (!addr || (type != 'T' && type != 't' && type != 'W' && type != 'w'))
		return 0;
	if (auxcap_grow_array(&s->ksyms, &l->cap, s->nr_ksyms + 1, 65536, sizeof(*s->ksyms)) < 0 ||
	    auxcap_grow(&s->knames, &l->ncap, l->nlen + len, 1 << 20) < 0)
		return -ENOMEM;
	memcpy(s->knames + l->nlen, name, len);
	s->ksyms[s->nr_ksyms++] = (struct ksym){ addr, l->nlen };
	l->nlen += len;
	return 0;
}

/* The kernel's functions from the kallsyms file; none if it cannot be read (what was read
 * before running out of memory is kept). */
static void load_kallsyms(struct auxcap_symbols *s)
{
	struct kload l = { s, 0, 0, 0 };

	s->kallsyms_tried = true;
	(void)auxcap_proc_kallsyms(s->kallsyms_path, add_ksym, &l);
	if (s->nr_ksyms)
		qsort(s->ksyms, s->nr_ksyms, sizeof(*s->ksyms), cmp_ksym);
}

int auxcap_symbols_kernel_each(struct auxcap_symbols *s,
			       int (*fn)(void *arg, const char *name, uint64_t addr), void *arg)
{
	if (!s->kallsyms_path)
		return 0;
	if (!s->kallsyms_tried)
		load_kallsyms(s);
	for (size_t i = 0; i < s->nr_ksyms; i++) {
		int r = fn(arg, s->knames + s->ksyms[i].name, s->ksyms[i].addr);

		if (r < 0)
			return r;
	}
	return (int)(s->nr_ksyms > INT32_MAX ? INT32_MAX : s->nr_ksyms);
}

/* The kallsyms function holding kernel address @addr: its index + 1 (it ends where the next
 * one starts), 0 if none (before the first; the last one ends nowhere). */
static size_t ksym_find(struct auxcap_symbols *s, uint64_t addr)
{
	size_t lo;

	if (!s->kallsyms_tried)
		load_kallsyms(s);
	lo = auxcap_upper_bound_by_key(s->ksyms, s->nr_ksyms, sizeof(*s->ksyms), addr);
	return lo == s->nr_ksyms ? 0 : lo;
}

/* A kernel address by kallsyms: the function at or below it. */
static int kernel_lookup(struct auxcap_symbols *s, uint64_t addr, const char **ret_name,
			 uint64_t *ret_off, const char **ret_dso)
{
	size_t lo = ksym_find(s, addr);

	if (!lo)
		return 0;
	*ret_name = s->knames + s->ksyms[lo - 1].name;
	*ret_off = addr - s->ksyms[lo - 1].addr;
	*ret_dso = kernel_dso;
	return 1;
}

#if AUXCAP_HAVE_LIBELF
/*
 * The ELF file of mapping @m (opened on first use) and in *@ret_vaddr the link-time address
 * that @addr maps to; NULL if the file cannot be read or no segment holds the address.
 */
static struct auxcap_elf *map_elf(struct auxcap_symbols *s, const struct sym_map *m,
				  uint64_t addr, uint64_t *ret_vaddr)
{
	struct sym_file *f = &s->files[m->file];
	const struct auxcap_elf_segment *segs;
	uint64_t fo = addr - m->start + m->pgoff;
	size_t n;

	if (!f->tried) {
		f->tried = true;
		if (auxcap_elf_open(f->path, &f->elf) < 0)
			f->elf = NULL;
		auxcap_elf_set_raw_names(f->elf, s->raw_names);
	}
	if (!f->elf)
		return NULL;
	n = auxcap_elf_segments(f->elf, &segs);
	for (size_t i = 0; i < n; i++) {
		if (fo >= segs[i].offset && fo - segs[i].offset < segs[i].filesz) {
			*ret_vaddr = segs[i].vaddr + (fo - segs[i].offset);
			return f->elf;
		}
	}
	return NULL;
}
#endif

static int lookup(struct auxcap_symbols *s, int32_t pid, uint64_t addr, const char **ret_name,
		  uint64_t *ret_off, const char **ret_dso)
{
	bool kernel = addr >> 63;
	const struct sym_map *m;
	struct sym_file *f;

	/* A kernel address: by the vmlinux mapped there (decode --vmlinux), else by kallsyms (a
	 * copy of the kernel's code mapped there has no symbols) */
	m = find_map(s, pid, addr, s->now);
	if (!m)
		return kernel && s->kallsyms_path ? kernel_lookup(s, addr, ret_name, ret_off, ret_dso)
						  : 0;
	f = &s->files[m->file];
	*ret_dso = kernel ? kernel_dso : f->path;
#if AUXCAP_HAVE_LIBELF
	{
		uint64_t vaddr;
		struct auxcap_elf *elf = map_elf(s, m, addr, &vaddr);

		if (elf && auxcap_elf_symbolize(elf, vaddr, ret_name, ret_off) == 1)
			return 1;
	}
#endif
	if (kernel && s->kallsyms_path && kernel_lookup(s, addr, ret_name, ret_off, ret_dso) == 1)
		return 1;
	return 2;
}

#if AUXCAP_HAVE_LIBELF
/* The file holding address @addr of process @pid as mapped now (a kernel address: the
 * vmlinux or the kernel code's copy mapped there), and the link-time address there in
 * *@ret_vaddr; NULL if none (no mapping, not an ELF). */
static struct auxcap_elf *elf_now(struct auxcap_symbols *s, int32_t pid, uint64_t addr,
				  uint64_t *ret_vaddr)
{
	const struct sym_map *m = find_map(s, pid, addr, s->now);

	return m ? map_elf(s, m, addr, ret_vaddr) : NULL;
}
#endif

int auxcap_symbols_srcline(struct auxcap_symbols *s, int32_t pid, uint64_t addr,
			   const char **ret_file, unsigned int *ret_line, const char **ret_dir)
{
#if AUXCAP_HAVE_LIBELF
	uint64_t vaddr;
	struct auxcap_elf *elf = elf_now(s, pid, addr, &vaddr);

	if (elf)
		return auxcap_elf_srcline_dir(elf, vaddr, ret_file, ret_line, ret_dir);
#else
	(void)s;
	(void)pid;
	(void)addr;
	(void)ret_file;
	(void)ret_line;
	(void)ret_dir;
#endif
	return 0;
}

#if AUXCAP_HAVE_LIBELF
/* auxcap_elf_inlines() as the decode API gives it. */
static int elf_inlines(struct auxcap_elf *elf, uint64_t vaddr, struct auxcap_decode_inline *frames,
		       size_t n)
{
	struct auxcap_elf_inline fr[AUXCAP_ELF_INLINE_MAX];
	int k = auxcap_elf_inlines(elf, vaddr, fr,
				   n < AUXCAP_ELF_INLINE_MAX ? n : AUXCAP_ELF_INLINE_MAX);

	for (int i = 0; i < k; i++)
		frames[i] = (struct auxcap_decode_inline){ fr[i].name, fr[i].file, fr[i].line };
	return k;
}
#endif

int auxcap_symbols_inlines(struct auxcap_symbols *s, int32_t pid, uint64_t addr,
			   struct auxcap_decode_inline *frames, size_t n)
{
#if AUXCAP_HAVE_LIBELF
	uint64_t vaddr;
	struct auxcap_elf *elf = elf_now(s, pid, addr, &vaddr);

	return elf ? elf_inlines(elf, vaddr, frames, n) : 0;
#else
	(void)s;
	(void)pid;
	(void)addr;
	(void)frames;
	(void)n;
	return 0;
#endif
}

int auxcap_symbols_lookup(struct auxcap_symbols *s, int32_t pid, uint64_t addr,
			  const char **ret_name, uint64_t *ret_off, const char **ret_dso)
{
	size_t slot = (size_t)(((addr ^ ((uint64_t)(uint32_t)pid << 40)) * 0x9e3779b97f4a7c15ull) >>
			       52) &
		      (CACHE_SIZE - 1);
	struct sym_cache *c = &s->cache[slot];

	if (!c->valid || c->addr != addr || c->pid != pid) {
		c->valid = true;
		c->addr = addr;
		c->pid = pid;
		c->name = c->dso = NULL;
		c->off = 0;
		c->text_len = 0;
		c->result = lookup(s, pid, addr, &c->name, &c->off, &c->dso);
	}
	if (c->result == 1) {
		if (ret_name)
			*ret_name = c->name;
		if (ret_off)
			*ret_off = c->off;
	}
	if (c->result && ret_dso)
		*ret_dso = c->dso;
	return c->result;
}

int auxcap_symbols_lookup_at(struct auxcap_symbols *s, int32_t pid, uint64_t addr, uint64_t t,
			     const char **ret_name, uint64_t *ret_off, const char **ret_dso)
{
	uint64_t now = s->now;
	const char *name = NULL, *dso = NULL;
	uint64_t off = 0;
	int r;

	if (t >= s->now_lo && t < s->now_hi)
		return auxcap_symbols_lookup(s, pid, addr, ret_name, ret_off, ret_dso);
	/* another stretch: looked up past the cache, which holds the current one's answers */
	s->now = t;
	r = lookup(s, pid, addr, &name, &off, &dso);
	s->now = now;
	if (r == 1) {
		if (ret_name)
			*ret_name = name;
		if (ret_off)
			*ret_off = off;
	}
	if (r && ret_dso)
		*ret_dso = dso;
	return r;
}

int auxcap_symbols_data_lookup_at(struct auxcap_symbols *s, int32_t pid, uint64_t addr,
				  uint64_t t, const char **ret_name, uint64_t *ret_off,
				  const char **ret_dso)
{
#if AUXCAP_HAVE_LIBELF
	/*
	 * A variable lives in its file's data segment, which the capture has no mapping of
	 * (MMAP2 records are of code): through each code mapping of @pid in place at @t, the
	 * file's load bias (where its link-time addresses are), then the data segments of
	 * that file at that bias.
	 */
	if (addr >> 63)
		return 0;
	for (size_t i = s->n; i-- > 0;) {
		const struct sym_map *m = &s->maps[i];
		const struct auxcap_elf_segment *segs;
		struct auxcap_elf *elf;
		uint64_t v, bias;
		size_t n;

		if (m->pid != pid || !map_has(m, pid, m->start, t) ||
		    !(elf = map_elf(s, m, m->start, &v)))
			continue;
		bias = m->start - v;
		n = auxcap_elf_segments(elf, &segs);
		for (size_t k = 0; k < n; k++) {
			uint64_t dv = addr - bias;

			if (segs[k].exec || dv < segs[k].vaddr || dv - segs[k].vaddr >= segs[k].memsz)
				continue;
			if (auxcap_elf_data_symbolize(elf, dv, ret_name, ret_off) != 1)
				return 0;
			if (ret_dso)
				*ret_dso = s->files[m->file].path;
			return 1;
		}
	}
#else
	(void)s, (void)pid, (void)addr, (void)t, (void)ret_name, (void)ret_off, (void)ret_dso;
#endif
	return 0;
}

int auxcap_symbols_read(struct auxcap_symbols *s, int32_t pid, uint64_t addr, uint8_t *buf,
			size_t len)
{
	return auxcap_symbols_read_at(s, pid, addr, s->now, buf, len);
}

int auxcap_symbols_read_at(struct auxcap_symbols *s, int32_t pid, uint64_t addr, uint64_t t,
			   uint8_t *buf, size_t len)
{
	const struct sym_map *m = find_map(s, pid, addr, t);
	struct sym_file *f;
	ssize_t n;

	if (!m)
		return -ENOENT;
	f = &s->files[m->file];
	if (!f->fd_tried) {
		f->fd_tried = true;
		f->fd = auxcap_file_open_regular(f->path);
	}
	if (f->fd < 0)
		return -ENOENT;
	if (len > m->end - addr)
		len = (size_t)(m->end - addr);
	n = pread(f->fd, buf, len, (off_t)(addr - m->start + m->pgoff));
	return n < 0 ? -errno : (int)n;
}

int auxcap_symbols_func_at(struct auxcap_symbols *s, int32_t pid, uint64_t addr, uint64_t t,
			   struct auxcap_sym_func *ret)
{
	const struct sym_map *m = find_map(s, pid, addr, t);
	size_t k;

	memset(ret, 0, sizeof(*ret));
	if (!m)
		return 0;
	ret->dso = (addr >> 63) ? kernel_dso : s->files[m->file].path;
	ret->file = m->file;
	ret->start = addr;
#if AUXCAP_HAVE_LIBELF
	{
		const char *name;
		uint64_t vaddr, off, size;
		struct auxcap_elf *elf = map_elf(s, m, addr, &vaddr);

		if (elf && auxcap_elf_symbolize_sized(elf, vaddr, &name, &off, &size) == 1) {
			ret->name = name;
			ret->start = addr - off;
			ret->vaddr = vaddr - off;
			/* not past its mapping (a symbol table that does not match the file) */
			ret->size = size < m->end - ret->start ? size : m->end - ret->start;
			ret->elf = elf;
			return 1;
		}
	}
#endif
	/* kernel code without symbols of its own (a copy of the kernel's): by kallsyms, up to
	 * the next symbol, within the copy */
	if ((addr >> 63) && s->kallsyms_path && (k = ksym_find(s, addr)) &&
	    s->ksyms[k - 1].addr >= m->start) {
		ret->name = s->knames + s->ksyms[k - 1].name;
		ret->start = s->ksyms[k - 1].addr;
		ret->vaddr = ret->start;
		ret->size = (s->ksyms[k].addr < m->end ? s->ksyms[k].addr : m->end) - ret->start;
		return 1;
	}
	return 2;
}

int auxcap_symbols_func_srcline(const struct auxcap_sym_func *fn, uint64_t off,
				const char **ret_file, unsigned int *ret_line, const char **ret_dir)
{
#if AUXCAP_HAVE_LIBELF
	if (fn->elf)
		return auxcap_elf_srcline_dir(fn->elf, fn->vaddr + off, ret_file, ret_line,
					      ret_dir);
#else
	(void)fn;
	(void)off;
	(void)ret_file;
	(void)ret_line;
	(void)ret_dir;
#endif
	return 0;
}

int auxcap_symbols_func_inlines(const struct auxcap_sym_func *fn, uint64_t off,
				struct auxcap_decode_inline *frames, size_t n)
{
#if AUXCAP_HAVE_LIBELF
	return fn->elf ? elf_inlines(fn->elf, fn->vaddr + off, frames, n) : 0;
#else
	(void)fn;
	(void)off;
	(void)frames;
	(void)n;
	return 0;
#endif
}

int auxcap_symbols_cov_rows(const struct auxcap_sym_func *fn,
			    int (*row)(void *arg, const char *file, const char *dir,
				       unsigned int line, uint64_t vaddr),
			    void *arg)
{
#if AUXCAP_HAVE_LIBELF
	if (fn->elf)
		return auxcap_elf_line_rows(fn->elf, row, arg);
#else
	(void)fn;
	(void)row;
	(void)arg;
#endif
	return 0;
}

int auxcap_symbols_cov_func(const struct auxcap_sym_func *fn, size_t i, const char **ret_name,
			    uint64_t *ret_vaddr, const char **ret_file, unsigned int *ret_line,
			    const char **ret_dir)
{
#if AUXCAP_HAVE_LIBELF
	uint64_t size;

	if (!fn->elf || !auxcap_elf_sym(fn->elf, i, ret_name, ret_vaddr, &size))
		return 0;
	if (auxcap_elf_srcline_dir(fn->elf, *ret_vaddr, ret_file, ret_line, ret_dir) != 1)
		*ret_file = *ret_dir = NULL;
	return 1;
#else
	(void)fn;
	(void)i;
	(void)ret_name;
	(void)ret_vaddr;
	(void)ret_file;
	(void)ret_line;
	(void)ret_dir;
	return 0;
#endif
}

void auxcap_symbols_text(struct auxcap_symbols *s, int32_t pid, uint64_t addr,
			 const char **ret_text, size_t *ret_len)
{
	char *big = s->text_big;
	const char *name = NULL;
	uint64_t off = 0;
	size_t slot = (size_t)(((addr ^ ((uint64_t)(uint32_t)pid << 40)) * 0x9e3779b97f4a7c15ull) >>
			       52) &
		      (CACHE_SIZE - 1);
	struct sym_cache *c;
	int n;

	if (auxcap_symbols_lookup(s, pid, addr, &name, &off, NULL) != 1) {
		*ret_text = "[unknown]";
		*ret_len = 9;
		return;
	}
	c = &s->cache[slot]; /* the entry the lookup just filled or hit */
	if (c->text_len) {
		*ret_text = c->text;
		*ret_len = c->text_len;
		return;
	}
	n = snprintf(big, sizeof(s->text_big), "%s+0x%" PRIx64, name, off);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(s->text_big))
		n = sizeof(s->text_big) - 1;
	if ((size_t)n <= sizeof(c->text)) {
		memcpy(c->text, big, (size_t)n);
		c->text_len = (uint8_t)n;
		*ret_text = c->text;
	} else {
		*ret_text = big;
	}
	*ret_len = (size_t)n;
}
