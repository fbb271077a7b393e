/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ELF segments and function symbols with libelf.  The file is read once at open: segments
 * are copied into an array and symbols into a sorted array whose names live in one pool.
 */
#include "elf_file.h"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>
#if AUXCAP_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#endif

#include "auxcap/file.h"
#include "demangle.h"
#include "grow.h"
#include "sorted.h"

struct elf_sym {
	uint64_t addr; /* st_value (link-time address) */
	uint64_t size; /* st_size (bytes; 0 = unknown) */
	size_t name;   /* offset of the name in auxcap_elf.names */
	size_t shown;  /* ... of the name shown: demangled (C++, Rust), else @name */
	bool label;    /* STT_NOTYPE in code (see read_symtab()) */
	bool sized;    /* @size is the symbol's own (else to its section's end, or 0) */
};

struct auxcap_elf {
	char *path;			 /* owned copy */
	bool dyn;			 /* ET_DYN */
	struct auxcap_elf_segment *segs; /* owned, nsegs entries */
	size_t nsegs;
	struct elf_sym *syms; /* owned, sorted by addr */
	size_t nsyms;
	struct elf_sym *dsyms; /* data objects (owned, sorted by addr; sized) */
	size_t ndsyms, cap_dsyms;
	char *names;	  /* owned pool of NUL-terminated names */
	size_t names_len; /* bytes used in @names */
	size_t names_cap; /* bytes allocated at @names */
	bool raw_names;	  /* show symbols' names as the file has them (auxcap_elf_set_raw_names()) */
	uint8_t build_id[AUXCAP_ELF_BUILD_ID_MAX]; /* NT_GNU_BUILD_ID descriptor */
	size_t build_id_size;			   /* bytes in @build_id, 0: none */
	char *debug_path; /* the separate debug file whose symbols were read (owned), or NULL */
	bool has_lines;	  /* the file itself has .debug_line */
	/* Source lines (auxcap_elf_srcline()): opened on first use */
	bool dwarf_tried;
	int dwarf_fd;
#if AUXCAP_HAVE_LIBDW
	Dwarf *dwarf;
	/* the units' address ranges, for files without .debug_aranges (clang's): built on first
	 * need, sorted by @lo */
	struct cu_range {
		uint64_t lo, hi;
		Dwarf_Off off; /* the unit's DIE (a function's in @funcs) */
	} *cu_ranges;
	size_t nr_cu_ranges;
	bool cu_ranges_tried;
	struct inline_cache *inl; /* auxcap_elf_inlines()'s answers, allocated on first use */
	/* the functions' (DW_TAG_subprogram) address ranges (@off: the function's DIE), sorted by
	 * @lo, built on the first auxcap_elf_inlines() */
	struct cu_range *funcs;
	size_t nr_funcs;
	bool funcs_tried;
	/* DWARF linkage names demangled (die_name()), by the name's address in libdw's string
	 * table; open addressing, @shown NULL where it did not demangle */
	struct dname {
		const char *key;
		char *shown; /* owned */
	} *dnames;
	size_t nr_dnames, cap_dnames;
#endif
};

static int cmp_sym(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Prefer sized symbols first among aliases. */
	return (x->size < y->size) - (x->size > y->size);
}

static int read_segments(Elf *e, struct auxcap_elf *elf)
{
	size_t n;

	if (elf_getphdrnum(e, &n) != 0)
		return -EBADMSG;
	elf->segs = calloc(n ? n : 1, sizeof(*elf->segs));
	if (!elf->segs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph))
			return -EBADMSG;
		if (ph.p_type != PT_LOAD)
			continue;
		elf->segs[elf->nsegs++] = (struct auxcap_elf_segment){
			.vaddr = ph.p_vaddr,
			.offset = ph.p_offset,
			.filesz = ph.p_filesz,
			.exec = (ph.p_flags & PF_X) != 0,
			.memsz = ph.p_memsz,
		};
	}
	return 0;
}

/* @name then @suffix into the pool, as one name at *@ret_off. */
static int add_name(struct auxcap_elf *elf, const char *name, const char *suffix,
		    size_t *ret_off)
{
	size_t len = strlen(name), slen = strlen(suffix);

	/* a debug file has tens of thousands of names: the pool doubles (grow.h) */
	if (auxcap_grow(&elf->names, &elf->names_cap, elf->names_len + len + slen + 1, 4096) < 0)
		return -ENOMEM;
	memcpy(elf->names + elf->names_len, name, len);
	memcpy(elf->names + elf->names_len + len, suffix, slen + 1);
	*ret_off = elf->names_len;
	elf->names_len += len + slen + 1;
	return 0;
}

/* Symbol @s's name, @name with @suffix ("@plt", or ""), and the one shown: @name demangled,
 * with @suffix, when it is a mangled name. */
static int add_sym_name(struct auxcap_elf *elf, struct elf_sym *s, const char *name,
			const char *suffix)
{
	char *dm = NULL;
	int r = add_name(elf, name, suffix, &s->name);

	s->shown = s->name;
	if (r == 0 && (r = auxcap_demangle(name, &dm)) == 1) {
		r = add_name(elf, dm, suffix, &s->shown);
		free(dm);
	}
	return r < 0 ? r : 0;
}

/* The name of @s shown: demangled unless raw names were asked for. */
static const char *shown_name(const struct auxcap_elf *elf, const struct elf_sym *s)
{
	return elf->names + (elf->raw_names ? s->name : s->shown);
}

void auxcap_elf_set_raw_names(struct auxcap_elf *elf, bool raw)
{
	if (!elf)
		return;
	elf->raw_names = raw;
#if AUXCAP_HAVE_LIBDW
	free(elf->inl); /* (its names were of the other kind) */
	elf->inl = NULL;
#endif
}

/*
 * A label with no type in code: an entry point written in assembly (ld.so's _start and
 * _dl_start_user, which the trace of every program begins with), named as perf names it.
 */
static bool code_label(Elf *e, const GElf_Sym *sym)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (GELF_ST_TYPE(sym->st_info) != STT_NOTYPE || !sym->st_name ||
	    sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE)
		return false;
	scn = elf_getscn(e, sym->st_shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) &&
	       sym->st_value >= sh.sh_addr && sym->st_value < sh.sh_addr + sh.sh_size;
}

/*
 * Sorted symbols: drop the labels that fall inside a sized function (a jump target within
 * it, not a function of its own), and end each label where the next symbol starts.
 */
static void settle_labels(struct auxcap_elf *elf)
{
	uint64_t func_end = 0;
	size_t k = 0;

	for (size_t i = 0; i < elf->nsyms; i++) {
		struct elf_sym *s = &elf->syms[i];

		if (s->label && s->addr < func_end)
			continue;
		if (!s->label && s->sized && s->addr + s->size > func_end)
			func_end = s->addr + s->size;
		elf->syms[k++] = *s;
	}
	elf->nsyms = k;
	for (size_t i = 0; i + 1 < elf->nsyms; i++) {
		struct elf_sym *s = &elf->syms[i];

		for (size_t j = i + 1; s->label && j < elf->nsyms; j++)
			if (elf->syms[j].addr > s->addr) {
				if (!s->size || elf->syms[j].addr - s->addr < s->size)
					s->size = elf->syms[j].addr - s->addr;
				break;
			}
	}
}

/* A data object of a symbol table (a variable: sized, defined, at an address). */
static int add_data_sym(Elf *e, const GElf_Shdr *sh, const GElf_Sym *sym, struct auxcap_elf *elf)
{
	const char *name;
	struct elf_sym *d;

	if (!sym->st_size || sym->st_shndx == SHN_UNDEF || sym->st_shndx == SHN_COMMON ||
	    !sym->st_value)
		return 0;
	name = elf_strptr(e, sh->sh_link, sym->st_name);
	if (!name || !*name)
		return 0;
	if (auxcap_grow_array(&elf->dsyms, &elf->cap_dsyms, elf->ndsyms + 1, 64,
			      sizeof(*elf->dsyms)) < 0)
		return -ENOMEM;
	d = &elf->dsyms[elf->ndsyms];
	memset(d, 0, sizeof(*d));
	d->addr = sym->st_value;
	d->size = sym->st_size;
	d->sized = true;
	if (add_sym_name(elf, d, name, "") < 0)
		return -ENOMEM;
	elf->ndsyms++;
	return 0;
}

static int read_symtab(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct auxcap_elf *elf)
{
	Elf_Data *data;
	size_t n, cap;
	int r;

	if (!sh->sh_entsize)
		return -EBADMSG;
	data = elf_getdata(scn, NULL);
	if (!data)
		return -EBADMSG;
	n = sh->sh_size / sh->sh_entsize;
	cap = elf->nsyms + n;
	if (cap) {
		struct elf_sym *p = realloc(elf->syms, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		elf->syms = p;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym))
			return -EBADMSG;
		if (GELF_ST_TYPE(sym.st_info) == STT_OBJECT) {
			r = add_data_sym(e, sh, &sym, elf);
			if (r < 0)
				return r;
			continue;
		}
		if ((GELF_ST_TYPE(sym.st_info) != STT_FUNC && !code_label(e, &sym)) ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		elf->syms[elf->nsyms].addr = sym.st_value;
		elf->syms[elf->nsyms].size = sym.st_size;
		elf->syms[elf->nsyms].label = GELF_ST_TYPE(sym.st_info) != STT_FUNC;
		elf->syms[elf->nsyms].sized = sym.st_size != 0;
		/*
		 * A symbol without a size (_init, _start in some builds, hand-written assembly)
		 * covers the rest of its section at most: not the PLT that follows .init.
		 */
		if (!sym.st_size && sym.st_shndx < SHN_LORESERVE) {
			GElf_Shdr ssh;
			Elf_Scn *sscn = elf_getscn(e, sym.st_shndx);

			if (sscn && gelf_getshdr(sscn, &ssh) && sym.st_value >= ssh.sh_addr &&
			    sym.st_value < ssh.sh_addr + ssh.sh_size)
				elf->syms[elf->nsyms].size = ssh.sh_addr + ssh.sh_size - sym.st_value;
		}
		r = add_sym_name(elf, &elf->syms[elf->nsyms], name, "");
		if (r < 0)
			return r;
		elf->nsyms++;
	}
	return 0;
}

/* The section called @name, with its header in @ret_sh; NULL if there is none. */
static Elf_Scn *section_by_name(Elf *e, const char *name, GElf_Shdr *ret_sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, ret_sh))
			return NULL;
		n = elf_strptr(e, shstrndx, ret_sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/*
 * The GOT slot a PLT entry of @len bytes at @addr jumps through, 0 if it is not a form we
 * know.  x86-64: "jmp *disp32(%rip)" (ff 25), possibly after endbr64 or a bnd prefix.
 * AArch64: "adrp x16, PAGE; ldr x17, [x16, #OFF]".
 */
static uint64_t plt_entry_slot(uint16_t machine, const uint8_t *p, size_t len, uint64_t addr)
{
	if (machine == EM_X86_64) {
		for (size_t k = 0; k + 6 <= len; k++) {
			int32_t disp;

			if (p[k] != 0xff || p[k + 1] != 0x25)
				continue;
			memcpy(&disp, p + k + 2, 4);
			return addr + k + 6 + (uint64_t)(int64_t)disp;
		}
		return 0;
	}
	if (machine == EM_AARCH64 && len >= 8) {
		uint32_t adrp, ldr;
		uint64_t imm, page;

		memcpy(&adrp, p, 4);
		memcpy(&ldr, p + 4, 4);
		if ((adrp & 0x9f00001fu) != 0x90000010u || (ldr & 0xffc003ffu) != 0xf9400211u)
			return 0; /* not adrp x16 / ldr x17, [x16, #imm] */
		imm = ((uint64_t)((adrp >> 5) & 0x7ffff) << 2) | ((adrp >> 29) & 3);
		if (imm & (1ull << 20))
			imm |= ~((1ull << 21) - 1); /* sign-extend the 21-bit page count */
		page = (addr & ~0xfffull) + (imm << 12);
		return page + (((ldr >> 10) & 0xfff) << 3);
	}
	return 0;
}

/*
 * Name the PLT entries "SYMBOL@plt", as perf and objdump do.  Each entry of .plt.sec (IBT
 * builds) or .plt jumps through a GOT slot, which a .rela.plt relocation names: the entry
 * takes the relocation's symbol, or for IRELATIVE (no symbol) "*ABS*+0xADDEND@plt", objdump's
 * name.  Entries are 16 bytes; the PLT header (entries with no relocation) stays unnamed.
 */
static int read_plt(Elf *e, const GElf_Ehdr *eh, struct auxcap_elf *elf)
{
	const uint64_t entsize = 16;
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rscn, *pscn, *dscn;
	Elf_Data *rdata, *pdata, *ddata;
	size_t nrel, nent;
	int r;

	if (eh->e_machine != EM_X86_64 && eh->e_machine != EM_AARCH64)
		return 0;
	rscn = section_by_name(e, ".rela.plt", &rsh);
	if (!rscn || rsh.sh_type != SHT_RELA || !rsh.sh_entsize)
		return 0;
	pscn = section_by_name(e, ".plt.sec", &psh);
	if (!pscn)
		pscn = section_by_name(e, ".plt", &psh);
	if (!pscn || psh.sh_type != SHT_PROGBITS)
		return 0;
	dscn = elf_getscn(e, rsh.sh_link);
	rdata = elf_getdata(rscn, NULL);
	pdata = elf_getdata(pscn, NULL);
	if (!dscn || !gelf_getshdr(dscn, &dsh) || !rdata || !pdata || !pdata->d_buf ||
	    pdata->d_size < psh.sh_size)
		return 0;
	ddata = elf_getdata(dscn, NULL);
	nrel = rsh.sh_size / rsh.sh_entsize;
	nent = psh.sh_size / entsize;
	if (!nrel || !nent)
		return 0;
	{
		struct elf_sym *p = realloc(elf->syms, (elf->nsyms + nent) * sizeof(*p));

		if (!p)
			return -ENOMEM;
		elf->syms = p;
	}
	for (size_t i = 0; i < nent; i++) {
		uint64_t addr = psh.sh_addr + i * entsize, slot;
		const uint8_t *code = (const uint8_t *)pdata->d_buf + i * entsize;
		GElf_Rela rela;
		GElf_Sym sym;
		const char *name;
		char buf[64];
		size_t k;

		slot = plt_entry_slot(eh->e_machine, code, entsize, addr);
		if (!slot)
			continue;
		/* The relocations usually follow the entries: look at the i-th ones first. */
		for (k = 0; k < nrel; k++) {
			size_t idx = (i + k) % nrel;

			if (gelf_getrela(rdata, (int)idx, &rela) && rela.r_offset == slot)
				break;
		}
		if (k == nrel)
			continue; /* the header, or a slot no relocation names */
		if (!GELF_R_SYM(rela.r_info)) {
			snprintf(buf, sizeof(buf), "*ABS*+0x%" PRIx64, (uint64_t)rela.r_addend);
			name = buf;
		} else {
			if (!ddata || !gelf_getsym(ddata, (int)GELF_R_SYM(rela.r_info), &sym))
				continue;
			name = elf_strptr(e, dsh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
		}
		elf->syms[elf->nsyms].addr = addr;
		elf->syms[elf->nsyms].size = entsize;
		elf->syms[elf->nsyms].label = false;
		elf->syms[elf->nsyms].sized = true;
		r = add_sym_name(elf, &elf->syms[elf->nsyms], name, "@plt");
		if (r < 0)
			return r;
		elf->nsyms++;
	}
	return 0;
}

static void read_build_id(Elf *e, struct auxcap_elf *elf);

/* The .symtab of @e, or NULL; its header in @ret_sh. */
static Elf_Scn *find_symtab(Elf *e, GElf_Shdr *ret_sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, ret_sh) && ret_sh->sh_type == SHT_SYMTAB)
			return scn;
	return NULL;
}

/*
 * Read the function symbols of @elf's separate debug file, when there is one with the same
 * build-id: DIR/.build-id/xx/rest.debug, or the .gnu_debuglink name @link in DIR/<directory
 * of the binary>/, <directory>/ and <directory>/.debug/, for each DIR of $AUXCAP_DEBUG_DIRS
 * (colon-separated; default /usr/lib/debug), as gdb and perf look.  Returns 1 if its .symtab
 * was read, 0 if there is none, a negative errno on allocation failure.
 */
static int read_debug_symbols(struct auxcap_elf *elf, const char *link)
{
	const char *dirs = getenv("AUXCAP_DEBUG_DIRS");
	char hex[2 * AUXCAP_ELF_BUILD_ID_MAX + 1], bindir[4096];
	char *abs = realpath(elf->path, NULL); /* (the binary's directory, "prog" given: cwd) */
	const char *path = abs ? abs : elf->path, *slash = strrchr(path, '/');

	if (!elf->build_id_size) {
		free(abs);
		return 0;
	}
	for (size_t i = 0; i < elf->build_id_size; i++)
		snprintf(hex + 2 * i, 3, "%02x", elf->build_id[i]);
	snprintf(bindir, sizeof(bindir), "%.*s", slash ? (int)(slash - path) : 1,
		 slash ? path : ".");
	free(abs);
	if (!dirs || !*dirs)
		dirs = "/usr/lib/debug";
	for (const char *d = dirs; *d;) {
		size_t dlen = strcspn(d, ":");
		char cand[4][8192];
		int nc = 0;

		snprintf(cand[nc++], sizeof(cand[0]), "%.*s/.build-id/%.2s/%s.debug", (int)dlen, d,
			 hex, hex + 2);
		if (link && *link) {
			snprintf(cand[nc++], sizeof(cand[0]), "%.*s%s/%s", (int)dlen, d, bindir, link);
			if (d == dirs) {
				snprintf(cand[nc++], sizeof(cand[0]), "%s/%s", bindir, link);
				snprintf(cand[nc++], sizeof(cand[0]), "%s/.debug/%s", bindir, link);
			}
		}
		for (int c = 0; c < nc; c++) {
			struct auxcap_elf dbg;
			GElf_Shdr sh;
			Elf_Scn *scn;
			Elf *e;
			int fd, r;

			if (!strcmp(cand[c], elf->path))
				continue;
			fd = auxcap_file_open_regular(cand[c]);
			if (fd < 0)
				continue;
			e = elf_begin(fd, ELF_C_READ, NULL);
			memset(&dbg, 0, sizeof(dbg));
			if (e && elf_kind(e) == ELF_K_ELF)
				read_build_id(e, &dbg);
			scn = e && dbg.build_id_size == elf->build_id_size &&
					      !memcmp(dbg.build_id, elf->build_id, elf->build_id_size)
				      ? find_symtab(e, &sh)
				      : NULL;
			r = scn ? read_symtab(e, scn, &sh, elf) : 0;
			if (e)
				(void)elf_end(e);
			(void)close(fd);
			if (r < 0)
				return r;
			if (scn) {
				elf->debug_path = strdup(cand[c]); /* (NULL: no source lines) */
				return 1;
			}
		}
		d += dlen;
		if (*d == ':')
			d++;
	}
	return 0;
}

/* The file name a .gnu_debuglink section of @e names, or NULL (borrowed from @e's data). */
static const char *debuglink(Elf *e)
{
	GElf_Shdr sh;
	Elf_Scn *scn = section_by_name(e, ".gnu_debuglink", &sh);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;

	if (!data || !data->d_buf || !data->d_size ||
	    !memchr(data->d_buf, '\0', data->d_size))
		return NULL;
	return data->d_buf;
}

static int read_symbols(Elf *e, const GElf_Ehdr *eh, struct auxcap_elf *elf)
{
	Elf_Scn *scn = NULL, *dynsym = NULL;
	GElf_Shdr sh, dynsh;
	bool have_symtab = false;
	int r;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return -EBADMSG;
		if (sh.sh_type == SHT_SYMTAB) {
			r = read_symtab(e, scn, &sh, elf);
			if (r < 0)
				return r;
			have_symtab = true;
		} else if (sh.sh_type == SHT_DYNSYM) {
			dynsym = scn;
			dynsh = sh;
		}
	}
	/* Stripped: the separate debug file's full table, else the dynamic symbols. */
	if (!have_symtab) {
		r = read_debug_symbols(elf, debuglink(e));
		if (r < 0)
			return r;
		have_symtab = r > 0;
	}
	if (!have_symtab && dynsym) {
		r = read_symtab(e, dynsym, &dynsh, elf);
		if (r < 0)
			return r;
	}
	r = read_plt(e, eh, elf);
	if (r < 0)
		return r;
	if (elf->nsyms) {
		qsort(elf->syms, elf->nsyms, sizeof(*elf->syms), cmp_sym);
		settle_labels(elf);
	}
	if (elf->ndsyms)
		qsort(elf->dsyms, elf->ndsyms, sizeof(*elf->dsyms), cmp_sym);
	return 0;
}

/* The NT_GNU_BUILD_ID note of a note section or segment's @data, if it has one. */
static void scan_notes(Elf_Data *data, struct auxcap_elf *elf)
{
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off;

	while (data && !elf->build_id_size &&
	       (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0 &&
		    nh.n_descsz <= sizeof(elf->build_id)) {
			memcpy(elf->build_id, (const char *)data->d_buf + desc_off, nh.n_descsz);
			elf->build_id_size = nh.n_descsz;
		}
	}
}

/* Reads the build-id from the SHT_NOTE sections (or, for stripped files, PT_NOTE segments). */
static void read_build_id(Elf *e, struct auxcap_elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t n;

	while (!elf->build_id_size && (scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
			scan_notes(elf_getdata(scn, NULL), elf);
	}
	if (elf->build_id_size || elf_getphdrnum(e, &n) != 0)
		return;
	for (size_t i = 0; i < n && !elf->build_id_size; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_NOTE)
			scan_notes(elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz,
							ELF_T_NHDR),
				   elf);
	}
}

int auxcap_elf_open(const char *path, struct auxcap_elf **ret_elf)
{
	struct auxcap_elf *elf;
	GElf_Ehdr eh;
	Elf *e;
	int fd, r;

	if (!path || !ret_elf)
		return -EINVAL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EOPNOTSUPP;
	fd = auxcap_file_open_regular(path); /* a FIFO or device named by a capture: no */
	if (fd < 0)
		return fd == -EINVAL ? -ENOEXEC : fd;
	elf = calloc(1, sizeof(*elf));
	if (!elf) {
		r = -ENOMEM;
		goto err_close;
	}
	elf->dwarf_fd = -1;
	elf->path = strdup(path);
	if (!elf->path) {
		r = -ENOMEM;
		goto err_free;
	}
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e) {
		r = -ENOEXEC;
		goto err_free;
	}
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		r = -ENOEXEC;
		goto err_end;
	}
	elf->dyn = eh.e_type == ET_DYN;
	elf->has_lines = section_by_name(e, ".debug_line", &(GElf_Shdr){ 0 }) != NULL;
	r = read_segments(e, elf);
	if (r < 0)
		goto err_end;
	read_build_id(e, elf);
	r = read_symbols(e, &eh, elf);
	if (r < 0)
		goto err_end;
	(void)elf_end(e);
	(void)close(fd);
	*ret_elf = elf;
	return 0;

err_end:
	(void)elf_end(e);
err_free:
	auxcap_elf_free(elf);
err_close:
	(void)close(fd);
	return r;
}

void auxcap_elf_free(struct auxcap_elf *elf)
{
	if (!elf)
		return;
#if AUXCAP_HAVE_LIBDW
	if (elf->dwarf)
		(void)dwarf_end(elf->dwarf);
	free(elf->cu_ranges);
	free(elf->inl);
	free(elf->funcs);
	for (size_t i = 0; i < elf->cap_dnames; i++)
		free(elf->dnames[i].shown);
	free(elf->dnames);
#endif
	if (elf->dwarf_fd >= 0)
		(void)close(elf->dwarf_fd);
	free(elf->debug_path);
	free(elf->path);
	free(elf->segs);
	free(elf->syms);
	free(elf->dsyms);
	free(elf->names);
	free(elf);
}

const char *auxcap_elf_path(const struct auxcap_elf *elf)
{
	return elf->path;
}

bool auxcap_elf_is_dyn(const struct auxcap_elf *elf)
{
	return elf->dyn;
}

uint64_t auxcap_elf_link_base(const struct auxcap_elf *elf)
{
	uint64_t base = UINT64_MAX;

	for (size_t i = 0; i < elf->nsegs; i++)
		if (elf->segs[i].vaddr < base)
			base = elf->segs[i].vaddr;
	return base == UINT64_MAX ? 0 : base & ~0xfffull;
}

size_t auxcap_elf_segments(const struct auxcap_elf *elf, const struct auxcap_elf_segment **ret_segs)
{
	*ret_segs = elf->segs;
	return elf->nsegs;
}

size_t auxcap_elf_nsyms(const struct auxcap_elf *elf)
{
	return elf->nsyms;
}

int auxcap_elf_data_symbolize(const struct auxcap_elf *elf, uint64_t addr, const char **ret_name,
			      uint64_t *ret_off)
{
	/* the last object at or below @addr, then back over the ones before it: an alias or an
	 * object that holds others (a struct and its members' symbols) may still cover it */
	size_t lo = elf ? auxcap_upper_bound_by_key(elf->dsyms, elf->ndsyms, sizeof(*elf->dsyms),
						    addr)
			: 0;

	for (size_t i = lo; i-- > 0 && lo - i <= 8;) {
		const struct elf_sym *d = &elf->dsyms[i];

		if (addr - d->addr < d->size) {
			*ret_name = shown_name(elf, d);
			*ret_off = addr - d->addr;
			return 1;
		}
	}
	return 0;
}

int auxcap_elf_symbolize(const struct auxcap_elf *elf, uint64_t addr, const char **ret_name,
			 uint64_t *ret_off)
{
	return auxcap_elf_symbolize_sized(elf, addr, ret_name, ret_off, NULL);
}

int auxcap_elf_symbolize_sized(const struct auxcap_elf *elf, uint64_t addr, const char **ret_name,
			       uint64_t *ret_off, uint64_t *ret_size)
{
	/* the last symbol with addr <= @addr */
	size_t lo = auxcap_upper_bound_by_key(elf->syms, elf->nsyms, sizeof(*elf->syms), addr);
	const struct elf_sym *s;

	if (!lo)
		return 0;
	s = &elf->syms[lo - 1];
	/* Among aliases at the same address the sized one sorts first. */
	while (lo - 1 > 0 && elf->syms[lo - 2].addr == s->addr)
		s = &elf->syms[--lo - 1];
	if (s->size && addr - s->addr >= s->size)
		return 0;
	*ret_name = shown_name(elf, s);
	*ret_off = addr - s->addr;
	if (ret_size) {
		/* a symbol without a size of its own ends where the next one starts */
		*ret_size = s->size;
		for (size_t i = lo; !s->sized && i < elf->nsyms; i++)
			if (elf->syms[i].addr > s->addr) {
				if (!*ret_size || elf->syms[i].addr - s->addr < *ret_size)
					*ret_size = elf->syms[i].addr - s->addr;
				break;
			}
	}
	return 1;
}

size_t auxcap_elf_build_id(const struct auxcap_elf *elf, const uint8_t **ret_id)
{
	if (!elf || !elf->build_id_size)
		return 0;
	if (ret_id)
		*ret_id = elf->build_id;
	return elf->build_id_size;
}

int auxcap_elf_addr_to_offset(const struct auxcap_elf *elf, uint64_t addr, uint64_t *ret_offset)
{
	const struct auxcap_elf_segment *best = NULL;

	for (size_t i = 0; i < elf->nsegs; i++) {
		const struct auxcap_elf_segment *g = &elf->segs[i];

		if (addr < g->vaddr || addr - g->vaddr >= g->filesz)
			continue;
		if (!best || (g->exec && !best->exec))
			best = g;
	}
	if (!best)
		return -ENXIO;
	*ret_offset = addr - best->vaddr + best->offset;
	return 0;
}

int auxcap_elf_symbol_lookup(const struct auxcap_elf *elf, const char *name, uint64_t *ret_addr,
			     uint64_t *ret_file_offset)
{
	uint64_t off;
	int r;

	/* Sorted by address: the first match is the lowest-addressed one. */
	for (size_t i = 0; i < elf->nsyms; i++) {
		if (strcmp(elf->names + elf->syms[i].name, name) != 0 &&
		    strcmp(elf->names + elf->syms[i].shown, name) != 0)
			continue;
		r = auxcap_elf_addr_to_offset(elf, elf->syms[i].addr, &off);
		if (r < 0)
			return r;
		*ret_addr = elf->syms[i].addr;
		*ret_file_offset = off;
		return 1;
	}
	return 0;
}

int auxcap_elf_srcline(struct auxcap_elf *elf, uint64_t addr, const char **ret_file,
		       unsigned int *ret_line)
{
	return auxcap_elf_srcline_dir(elf, addr, ret_file, ret_line, NULL);
}

#if AUXCAP_HAVE_LIBDW
/* The file's DWARF, opened on first use: its own, else its debug file's (the one its symbols
 * came from); NULL if neither has any. */
static Dwarf *elf_dwarf(struct auxcap_elf *elf)
{
	if (!elf->dwarf_tried) {
		const char *path = elf->has_lines ? elf->path : elf->debug_path;

		elf->dwarf_tried = true;
		elf->dwarf_fd = path ? auxcap_file_open_regular(path) : -1;
		if (elf->dwarf_fd >= 0)
			elf->dwarf = dwarf_begin(elf->dwarf_fd, DWARF_C_READ);
	}
	return elf->dwarf;
}
#endif

#if AUXCAP_HAVE_LIBDW
static int cmp_cu_range(const void *pa, const void *pb)
{
	const struct cu_range *x = pa, *y = pb;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* The ranges of every unit (dwarf_ranges()), once. */
static void read_cu_ranges(struct auxcap_elf *elf)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0;

	elf->cu_ranges_tried = true;
	for (; dwarf_nextcu(elf->dwarf, off, &next, &hsize, NULL, NULL, NULL) == 0; off = next) {
		Dwarf_Die cu;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t it = 0;

		if (!dwarf_offdie(elf->dwarf, off + hsize, &cu))
			continue;
		while ((it = dwarf_ranges(&cu, it, &base, &lo, &hi)) > 0) {
			if (elf->nr_cu_ranges == cap) {
				size_t c = cap ? cap * 2 : 64;
				struct cu_range *v = realloc(elf->cu_ranges, c * sizeof(*v));

				if (!v)
					return; /* (what was read is still sorted below) */
				elf->cu_ranges = v;
				cap = c;
			}
			elf->cu_ranges[elf->nr_cu_ranges++] = (struct cu_range){ lo, hi, off + hsize };
		}
	}
	if (elf->nr_cu_ranges)
		qsort(elf->cu_ranges, elf->nr_cu_ranges, sizeof(*elf->cu_ranges), cmp_cu_range);
}

/* The DIE of the range of @v (@n, sorted by @lo) holding @addr into *@ret. */
static bool range_die(Dwarf *dw, const struct cu_range *v, size_t n, uint64_t addr,
		      Dwarf_Die *ret)
{
	size_t lo = 0, hi = n;

	while (lo < hi) { /* the last range starting at or before @addr */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* (ranges of different units or functions do not overlap; look back a few for nested
	 * ones) */
	for (size_t i = lo; i-- > 0 && lo - i <= 8;)
		if (addr < v[i].hi)
			return dwarf_offdie(dw, v[i].off, ret) != NULL;
	return false;
}

/* The unit holding @addr: by .debug_aranges (dwarf_addrdie()), else by the units' ranges. */
static bool unit_of(struct auxcap_elf *elf, uint64_t addr, Dwarf_Die *ret)
{
	if (dwarf_addrdie(elf->dwarf, addr, ret))
		return true;
	if (!elf->cu_ranges_tried)
		read_cu_ranges(elf);
	return range_die(elf->dwarf, elf->cu_ranges, elf->nr_cu_ranges, addr, ret);
}
#endif

int auxcap_elf_line_rows(struct auxcap_elf *elf, auxcap_elf_row_fn fn, void *arg)
{
#if AUXCAP_HAVE_LIBDW
	Dwarf *dw = elf_dwarf(elf);
	Dwarf_Off off = 0, next;
	size_t hsize;
	int n = 0;

	if (!dw)
		return 0;
	for (; dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0; off = next) {
		Dwarf_Die cu;
		Dwarf_Attribute attr;
		Dwarf_Lines *lines;
		const char *dir;
		size_t nl;

		if (!dwarf_offdie(dw, off + hsize, &cu) || dwarf_getsrclines(&cu, &lines, &nl) != 0)
			continue;
		dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
		for (size_t i = 0; i < nl; i++) {
			Dwarf_Line *l = dwarf_onesrcline(lines, i);
			Dwarf_Addr a;
			bool end = false;
			const char *file;
			int line, r;

			if (!l || dwarf_lineaddr(l, &a) != 0 || dwarf_lineno(l, &line) != 0 ||
			    line <= 0 || dwarf_lineendsequence(l, &end) != 0 || end ||
			    !(file = dwarf_linesrc(l, NULL, NULL)))
				continue;
			r = fn(arg, file, dir, (unsigned int)line, a);
			if (r < 0)
				return r;
			n++;
		}
	}
	return n;
#else
	(void)elf;
	(void)fn;
	(void)arg;
	return 0;
#endif
}

int auxcap_elf_sym(const struct auxcap_elf *elf, size_t i, const char **ret_name,
		   uint64_t *ret_addr, uint64_t *ret_size)
{
	const struct elf_sym *s;

	if (i >= elf->nsyms)
		return 0;
	s = &elf->syms[i];
	*ret_name = shown_name(elf, s);
	*ret_addr = s->addr;
	*ret_size = s->size;
	return 1;
}

int auxcap_elf_srcline_dir(struct auxcap_elf *elf, uint64_t addr, const char **ret_file,
			   unsigned int *ret_line, const char **ret_dir)
{
#if AUXCAP_HAVE_LIBDW
	Dwarf_Attribute attr;
	Dwarf_Die cu;
	Dwarf_Line *l;
	const char *file;
	int line;

	if (!elf_dwarf(elf) || !unit_of(elf, addr, &cu))
		return 0;
	l = dwarf_getsrc_die(&cu, addr);
	file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
	if (!file || dwarf_lineno(l, &line) != 0 || line <= 0)
		return 0;
	*ret_file = file;
	*ret_line = (unsigned int)line;
	if (ret_dir)
		*ret_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
	return 1;
#else
	(void)elf;
	(void)addr;
	(void)ret_file;
	(void)ret_line;
	(void)ret_dir;
	return 0;
#endif
}

#if AUXCAP_HAVE_LIBDW
/* The demangled form of the linkage name @ln (kept until the file is freed), NULL if it is
 * not a mangled name or memory ran out. */
static const char *dname_shown(struct auxcap_elf *elf, const char *ln)
{
	size_t h;
	char *dm = NULL;

	if ((elf->nr_dnames + 1) * 2 > elf->cap_dnames) {
		size_t cap = elf->cap_dnames ? elf->cap_dnames * 2 : 256;
		struct dname *v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (size_t i = 0; i < elf->cap_dnames; i++) {
			if (!elf->dnames[i].key)
				continue;
			h = ((uintptr_t)elf->dnames[i].key * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
			while (v[h].key)
				h = (h + 1) & (cap - 1);
			v[h] = elf->dnames[i];
		}
		free(elf->dnames);
		elf->dnames = v;
		elf->cap_dnames = cap;
	}
	h = ((uintptr_t)ln * 0x9e3779b97f4a7c15ull >> 20) & (elf->cap_dnames - 1);
	for (; elf->dnames[h].key; h = (h + 1) & (elf->cap_dnames - 1))
		if (elf->dnames[h].key == ln)
			return elf->dnames[h].shown;
	if (auxcap_demangle(ln, &dm) < 0)
		return NULL;
	elf->dnames[h] = (struct dname){ ln, dm };
	elf->nr_dnames++;
	return dm;
}

/* The name of function @die, following DW_AT_abstract_origin and DW_AT_specification (an
 * inlined instance names its function through its abstract origin): its linkage name
 * demangled where it has one (C++: "ns::Box<int>::get() const", as symbols are shown; the
 * linkage name itself with raw names), else its DW_AT_name. */
static const char *die_name(struct auxcap_elf *elf, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *ln = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));

	if (!ln)
		ln = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (ln && elf->raw_names)
		return ln;
	if (ln) {
		const char *s = dname_shown(elf, ln);

		if (s)
			return s;
	}
	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
}

/* auxcap_elf_inlines()'s answers by address, direct-mapped (a decode asks for the same few
 * addresses again and again, and each answer walks the function's DIEs). */
#define INLINE_CACHE 1024

struct inline_entry {
	uint64_t addr;
	bool valid;
	uint8_t n; /* frames, 0: nothing inlined there */
	struct auxcap_elf_inline frames[AUXCAP_ELF_INLINE_MAX];
};

struct inline_cache {
	struct inline_entry e[INLINE_CACHE];
};

struct inline_walk {
	struct auxcap_elf *elf;
	uint64_t addr;
	Dwarf_Files *files; /* the unit's file table (NULL: none) */
	struct auxcap_elf_inline *out;
	size_t n, max;
};

/* Add the inlined instance @die (holding the address) to the chain: the place of the call is
 * where its caller's frame is; the name, its own. */
static void inline_add(struct inline_walk *iw, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word file = 0, line = 0;
	const char *fname = NULL;

	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &file) == 0 && iw->files)
		fname = dwarf_filesrc(iw->files, (size_t)file, NULL, NULL);
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &line) != 0)
		line = 0;
	/* iw->out[k] is outermost first while walking; reversed at the end */
	if (iw->n < iw->max) {
		iw->out[iw->n].name = die_name(iw->elf, die);
		iw->out[iw->n].file = fname; /* the caller's place, moved to it below */
		iw->out[iw->n].line = (unsigned int)line;
		iw->n++;
	}
}

static bool scope_tag(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_module;
}

/* Walk down from @parent (a function, or a scope in it) to the innermost scope holding the
 * address, adding the inlined instances on the way. */
static void inline_walk(struct inline_walk *iw, Dwarf_Die *parent, int level)
{
	Dwarf_Die child;

	if (level > 64 || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);

		if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) &&
		    dwarf_haspc(&child, iw->addr) == 1) {
			if (tag == DW_TAG_inlined_subroutine)
				inline_add(iw, &child);
			inline_walk(iw, &child, level + 1);
			return;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* The ranges of the functions under @parent (a unit, or a namespace or class in it). */
static int index_funcs(struct auxcap_elf *elf, Dwarf_Die *parent, size_t *cap, int level)
{
	Dwarf_Die child;

	if (level > 16 || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t it = 0;

			while ((it = dwarf_ranges(&child, it, &base, &lo, &hi)) > 0) {
				if (auxcap_grow_array(&elf->funcs, cap, elf->nr_funcs + 1, 256,
						      sizeof(*elf->funcs)) < 0)
					return -ENOMEM;
				elf->funcs[elf->nr_funcs++] =
					(struct cu_range){ lo, hi, dwarf_dieoffset(&child) };
			}
		} else if (scope_tag(tag) && index_funcs(elf, &child, cap, level + 1) < 0) {
			return -ENOMEM;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The function (DW_TAG_subprogram) whose code holds @addr, from the index of every unit's
 * functions made on first use. */
static bool func_of(struct auxcap_elf *elf, uint64_t addr, Dwarf_Die *ret)
{
	if (!elf->funcs_tried) {
		Dwarf_Off off = 0, next;
		size_t hsize, cap = 0;

		elf->funcs_tried = true;
		for (; dwarf_nextcu(elf->dwarf, off, &next, &hsize, NULL, NULL, NULL) == 0;
		     off = next) {
			Dwarf_Die cu;

			if (dwarf_offdie(elf->dwarf, off + hsize, &cu) &&
			    index_funcs(elf, &cu, &cap, 0) < 0)
				break; /* (what was read is still sorted below) */
		}
		if (elf->nr_funcs)
			qsort(elf->funcs, elf->nr_funcs, sizeof(*elf->funcs), cmp_cu_range);
	}
	return range_die(elf->dwarf, elf->funcs, elf->nr_funcs, addr, ret);
}

/* The frames at @addr into @out (AUXCAP_ELF_INLINE_MAX entries); see auxcap_elf_inlines(). */
static size_t inlines_read(struct auxcap_elf *elf, uint64_t addr, struct auxcap_elf_inline *out)
{
	struct inline_walk iw = {
		.elf = elf, .addr = addr, .out = out, .max = AUXCAP_ELF_INLINE_MAX - 1
	};
	const char *func, *file = NULL;
	unsigned int line = 0;
	size_t nfiles;
	Dwarf_Die sub, cu;

	if (!elf_dwarf(elf) || !func_of(elf, addr, &sub) || !dwarf_diecu(&sub, &cu, NULL, NULL))
		return 0;
	if (dwarf_getsrcfiles(&cu, &iw.files, &nfiles) != 0)
		iw.files = NULL;
	func = die_name(elf, &sub);
	inline_walk(&iw, &sub, 0);
	if (!iw.n)
		return 0;
	/* out[0..n) holds the inlined instances outermost first, each with the place of its call
	 * (in the frame outside it).  Made innermost first, with each frame's own place: the
	 * function's is where instance 0 was called, instance k's where k + 1 was, the innermost
	 * one's the line of @addr. */
	for (size_t k = iw.n; k > 0; k--)
		out[k].name = out[k - 1].name;
	out[0].name = func;
	if (auxcap_elf_srcline(elf, addr, &file, &line) != 1) {
		file = NULL;
		line = 0;
	}
	out[iw.n].file = file;
	out[iw.n].line = line;
	for (size_t i = 0, j = iw.n; i < j; i++, j--) {
		struct auxcap_elf_inline t = out[i];

		out[i] = out[j];
		out[j] = t;
	}
	return iw.n + 1;
}
#endif

int auxcap_elf_inlines(struct auxcap_elf *elf, uint64_t addr, struct auxcap_elf_inline *out,
		       size_t n)
{
#if AUXCAP_HAVE_LIBDW
	struct inline_entry *e;

	if (!elf || !out || n < 2)
		return 0;
	if (!elf->inl && !(elf->inl = calloc(1, sizeof(*elf->inl))))
		return -ENOMEM;
	e = &elf->inl->e[(size_t)((addr * 0x9e3779b97f4a7c15ull) >> 54) & (INLINE_CACHE - 1)];
	if (!e->valid || e->addr != addr) {
		e->valid = true;
		e->addr = addr;
		e->n = (uint8_t)inlines_read(elf, addr, e->frames);
	}
	if (!e->n)
		return 0;
	n = n < e->n ? n : e->n;
	memcpy(out, e->frames, n * sizeof(*out));
	return (int)n;
#else
	(void)elf;
	(void)addr;
	(void)out;
	(void)n;
	return 0;
#endif
}
