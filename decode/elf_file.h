/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ELF files for offline decoding: the loadable segments (to build the traced memory image)
 * and the symbol table (to name addresses as symbol+offset).  Read with libelf.
 */
#ifndef AUXCAP_DECODE_ELF_H
#define AUXCAP_DECODE_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** A PT_LOAD segment. */
struct auxcap_elf_segment {
	uint64_t vaddr;	 /* link-time virtual address (p_vaddr) */
	uint64_t offset; /* file offset (bytes, p_offset) */
	uint64_t filesz; /* bytes present in the file (p_filesz) */
	bool exec;	 /* PF_X: contains code */
	uint64_t memsz;	 /* bytes in memory (p_memsz: .bss included) */
};

struct auxcap_elf;

/**
 * Open and index the ELF file @path: its PT_LOAD segments and its function symbols
 * (.symtab; when stripped, the .symtab of its separate debug file, found by build-id or
 * .gnu_debuglink under each directory of $AUXCAP_DEBUG_DIRS, default /usr/lib/debug, else
 * .dynsym), plus SYMBOL@plt names for the PLT entries.
 *
 * The returned object is owned by the caller (auxcap_elf_free()); it does not keep the
 * file open.  @path is copied.
 *
 * Returns 0 and the object in @ret_elf on success.
 * Returns -EINVAL if @path or @ret_elf is NULL.
 * Returns the negative errno of open() (-ENOENT, -EACCES, ...) if @path cannot be opened.
 * Returns -ENOEXEC if @path is not an ELF file (or not a regular file: a FIFO or a device
 * named by a capture is not opened for reading, so it cannot hang the decode).
 * Returns -EBADMSG if the ELF file is malformed (headers or tables cannot be read).
 * Returns -ENOMEM if out of memory.
 */
int auxcap_elf_open(const char *path, struct auxcap_elf **ret_elf);

/** Free @elf (NULL is a no-op). */
void auxcap_elf_free(struct auxcap_elf *elf);

/** The path @elf was opened from (borrowed, valid until auxcap_elf_free()). */
const char *auxcap_elf_path(const struct auxcap_elf *elf);

/** True for ET_DYN (PIE, shared object): the load address is chosen at run time. */
bool auxcap_elf_is_dyn(const struct auxcap_elf *elf);

/** Lowest PT_LOAD p_vaddr, rounded down to 4 KiB: the link-time load address. */
uint64_t auxcap_elf_link_base(const struct auxcap_elf *elf);

/**
 * The PT_LOAD segments of @elf in @ret_segs (borrowed, valid until auxcap_elf_free()).
 *
 * Returns the number of segments.
 */
size_t auxcap_elf_segments(const struct auxcap_elf *elf,
			   const struct auxcap_elf_segment **ret_segs);

/** Number of function symbols indexed. */
size_t auxcap_elf_nsyms(const struct auxcap_elf *elf);

/**
 * Name the link-time address @addr: the function symbol containing it (or, for symbols of
 * size 0, the closest one below it in the same segment).
 *
 * @ret_name is borrowed (valid until auxcap_elf_free()); outputs are untouched when no
 * symbol matches.
 *
 * Returns 1 if a symbol was found, 0 if none matches.
 */
int auxcap_elf_symbolize(const struct auxcap_elf *elf, uint64_t addr, const char **ret_name,
			 uint64_t *ret_off);

/**
 * auxcap_elf_symbolize() that also gives the symbol's size in *@ret_size (may be NULL): its
 * own, or for a symbol without one, up to the next symbol or its section's end (0 if neither
 * is known).
 */
int auxcap_elf_symbolize_sized(const struct auxcap_elf *elf, uint64_t addr, const char **ret_name,
			       uint64_t *ret_off, uint64_t *ret_size);

/**
 * Name the link-time data address @addr: the data object (STT_OBJECT of a size, as the
 * function symbols from .symtab, the debug file's or .dynsym) containing it: a global or
 * static variable, a table.  @ret_name is borrowed (valid until auxcap_elf_free()).
 * Returns 1 if one covers it, 0 if none.
 */
int auxcap_elf_data_symbolize(const struct auxcap_elf *elf, uint64_t addr, const char **ret_name,
			      uint64_t *ret_off);

/**
 * The source line of the link-time address @addr, from the DWARF line table of the file (or of
 * the separate debug file its symbols came from), opened on first use: *@ret_file is the name
 * the table gives (borrowed until auxcap_elf_free()), *@ret_line its line.
 * Returns 1 if found, 0 if not (no DWARF, no line for it, built without libdw).
 */
int auxcap_elf_srcline(struct auxcap_elf *elf, uint64_t addr, const char **ret_file,
		       unsigned int *ret_line);

/** auxcap_elf_srcline() that also gives the compilation directory of the unit (a relative
 * file name is relative to it) in *@ret_dir (may be NULL; NULL when the unit has none). */
int auxcap_elf_srcline_dir(struct auxcap_elf *elf, uint64_t addr, const char **ret_file,
			   unsigned int *ret_line, const char **ret_dir);

/** A source-level frame at an address: a function (DWARF name, NULL if it has none) and the
 * place in it (@file NULL and @line 0 if not known).  Strings borrowed until auxcap_elf_free(). */
struct auxcap_elf_inline {
	const char *name;
	const char *file;
	unsigned int line;
};

/** The deepest chain auxcap_elf_inlines() gives. */
#define AUXCAP_ELF_INLINE_MAX 16

/**
 * The functions inlined at the link-time address @addr (DWARF DW_TAG_inlined_subroutine), as
 * frames into @out (@n entries, at least 2), innermost first: the inlined functions, each with
 * the place it was at (the innermost one's is @addr's line; each other's is where the one
 * inside it was inlined), then the function the code belongs to, with the place of the
 * outermost inlined call.  At most @n frames, the innermost (a chain deeper than
 * AUXCAP_ELF_INLINE_MAX keeps its outer ones).  Answers are cached per address.
 * Returns the frames written (at least 2), 0 if no function is inlined there (or no DWARF,
 * built without libdw), -ENOMEM.
 */
int auxcap_elf_inlines(struct auxcap_elf *elf, uint64_t addr, struct auxcap_elf_inline *out,
		       size_t n);

/** A row of a line table: source @file (in @dir if relative; @dir may be NULL), @line, and
 * the link-time address @vaddr of its first instruction.  Negative: stop with that. */
typedef int (*auxcap_elf_row_fn)(void *arg, const char *file, const char *dir,
				 unsigned int line, uint64_t vaddr);

/**
 * Every row of the file's DWARF line tables (as auxcap_elf_srcline() reads them: the file's
 * own, or its debug file's) but the ends of sequences, in order, to @fn.
 * Returns the rows given, 0 without DWARF (or libdw), or @fn's negative value.
 */
int auxcap_elf_line_rows(struct auxcap_elf *elf, auxcap_elf_row_fn fn, void *arg);

/** Function symbol @i in address order: its name, link-time address and size as read (for one
 * without a size of its own: to its section's end, or 0).  1, or 0 past the end. */
int auxcap_elf_sym(const struct auxcap_elf *elf, size_t i, const char **ret_name,
		   uint64_t *ret_addr, uint64_t *ret_size);

/**
 * Whether the names symbols are given by (auxcap_elf_symbolize(), auxcap_elf_sym()) are the
 * file's own (@raw) or, the default, demangled where they are C++ or Rust names ("ns::f(int)"
 * for "_ZN2ns1fEi"; a PLT entry's "ns::f(int)@plt"; built without libiberty: the file's).
 * auxcap_elf_symbol_lookup() finds a symbol by either name.
 */
void auxcap_elf_set_raw_names(struct auxcap_elf *elf, bool raw);

/** Largest build-id we keep (bytes); perf's files hold at most 20. */
#define AUXCAP_ELF_BUILD_ID_MAX 20

/**
 * The file's GNU build-id (NT_GNU_BUILD_ID note) into *@ret_id (borrowed, lives as long as
 * @elf).  Returns its size in bytes, 0 if the file has none (or one longer than
 * AUXCAP_ELF_BUILD_ID_MAX); *@ret_id is then untouched.
 */
size_t auxcap_elf_build_id(const struct auxcap_elf *elf, const uint8_t **ret_id);

/**
 * Find the function symbol called @name (the lowest-addressed one if several have that name)
 * and where its first byte is: its link-time address and its offset in the file, from the
 * PT_LOAD segment holding it (what a uprobe on the file needs).
 *
 * Returns 1 and sets @ret_addr and @ret_file_offset, 0 if no function symbol has that name
 * (outputs untouched).
 * Returns -ENXIO if the symbol is not inside a segment's file bytes.
 */
int auxcap_elf_symbol_lookup(const struct auxcap_elf *elf, const char *name, uint64_t *ret_addr,
			     uint64_t *ret_file_offset);

/**
 * The file offset of link-time address @addr: the PT_LOAD segment whose file bytes hold it
 * (an executable one first).
 * Returns 0 and sets @ret_offset, -ENXIO if no segment holds @addr.
 */
int auxcap_elf_addr_to_offset(const struct auxcap_elf *elf, uint64_t addr, uint64_t *ret_offset);

#endif
