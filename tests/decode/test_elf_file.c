/* SPDX-License-Identifier: BSD-3-Clause */
/* decode/elf_file.c: segments and symbols of a real ELF file (this test binary itself). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "config.h"
#include "elf_file.h"

#ifndef AUXCAP_TEST_LIBC
#define AUXCAP_TEST_LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#endif
#ifndef AUXCAP_TEST_LIBSTDCXX
#define AUXCAP_TEST_LIBSTDCXX "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
#endif

/* A function with a known name and a size, to be found by address (and its source lines). */
__attribute__((noinline)) int auxcap_test_elf_marker(int x);
enum { MARKER_LINE_BEFORE = __LINE__ };
__attribute__((noinline)) int auxcap_test_elf_marker(int x)
{
	return x * 3 + 1;
}
enum { MARKER_LINE_AFTER = __LINE__ };

/* This test was built with -g: it has a DWARF line table (a release build has none). */
static bool has_line_table(void)
{
	char self[1024], cmd[1200];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	assert_true(len > 0);
	self[len] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -S '%s' 2>/dev/null | grep -q '\\.debug_line'", self);
	return system(cmd) == 0;
}

/* The marker's first instruction is on one of its own lines of this file. */
static void check_marker_line(struct auxcap_elf *elf, uint64_t link_addr, bool lines)
{
	const char *file = NULL, *base;
	unsigned int line = 0;
	int r = auxcap_elf_srcline(elf, link_addr, &file, &line);

	if (!lines || !AUXCAP_HAVE_LIBDW) {
		assert_int_equal(r, 0);
		return;
	}
	assert_int_equal(r, 1);
	base = strrchr(file, '/');
	assert_string_equal(base ? base + 1 : file, "test_elf_file.c");
	assert_true(line > MARKER_LINE_BEFORE && line < MARKER_LINE_AFTER);
}

static void test_elf_open_self_finds_segments_and_symbols(void **state)
{
	struct auxcap_elf *elf = NULL;
	const struct auxcap_elf_segment *segs;
	uint64_t link_addr, off = 99;
	const char *name = NULL;
	size_t nsegs, nexec = 0;
	Dl_info info;

	(void)state;
	assert_int_equal(auxcap_elf_open("/proc/self/exe", &elf), 0);
	nsegs = auxcap_elf_segments(elf, &segs);
	for (size_t i = 0; i < nsegs; i++)
		nexec += segs[i].exec;
	assert_true(nexec >= 1);
	assert_true(auxcap_elf_nsyms(elf) > 0);

	/* Link-time address of the marker = run-time address - load base (PIE or not). */
	assert_true(dladdr((void *)auxcap_test_elf_marker, &info) != 0);
	link_addr = (uint64_t)(uintptr_t)auxcap_test_elf_marker;
	if (auxcap_elf_is_dyn(elf))
		link_addr -= (uint64_t)(uintptr_t)info.dli_fbase;
	assert_int_equal(auxcap_elf_symbolize(elf, link_addr, &name, &off), 1);
	assert_string_equal(name, "auxcap_test_elf_marker");
	assert_int_equal(off, 0);
	assert_int_equal(auxcap_elf_symbolize(elf, link_addr + 2, &name, &off), 1);
	assert_string_equal(name, "auxcap_test_elf_marker");
	assert_int_equal(off, 2);
	/* Below every symbol: nothing, and the outputs stay untouched. */
	name = "untouched";
	off = 7;
	assert_int_equal(auxcap_elf_symbolize(elf, 0, &name, &off), 0);
	assert_string_equal(name, "untouched");
	assert_int_equal(off, 7);
	assert_string_equal(auxcap_elf_path(elf), "/proc/self/exe");
	check_marker_line(elf, link_addr, has_line_table());
	{
		unsigned int line = 7;

		assert_int_equal(auxcap_elf_srcline(elf, 0, &name, &line), 0);
		assert_int_equal(line, 7);
	}
	auxcap_elf_free(elf);
	(void)auxcap_test_elf_marker(1);
}

/* Data objects of this test binary: a static array in .bss, a global in .data. */
static uint64_t test_bss_table[32];
uint32_t auxcap_test_data_word = 7;

static void test_elf_data_objects(void **state)
{
	struct auxcap_elf *elf = NULL;
	const struct auxcap_elf_segment *segs;
	uint64_t base = 0, tbl, word, off = 99;
	const char *name = NULL;
	size_t nsegs;
	bool in_seg = false;
	Dl_info info;

	(void)state;
	test_bss_table[3] = auxcap_test_data_word; /* (kept) */
	assert_int_equal(auxcap_elf_open("/proc/self/exe", &elf), 0);
	assert_true(dladdr((void *)&auxcap_test_data_word, &info) != 0);
	if (auxcap_elf_is_dyn(elf))
		base = (uint64_t)(uintptr_t)info.dli_fbase;
	tbl = (uint64_t)(uintptr_t)test_bss_table - base;
	word = (uint64_t)(uintptr_t)&auxcap_test_data_word - base;
	/* .bss is past the file's bytes of its segment: memsz covers it */
	nsegs = auxcap_elf_segments(elf, &segs);
	for (size_t i = 0; i < nsegs; i++)
		in_seg |= !segs[i].exec && tbl >= segs[i].vaddr && tbl - segs[i].vaddr < segs[i].memsz;
	assert_true(in_seg);
	assert_int_equal(auxcap_elf_data_symbolize(elf, tbl, &name, &off), 1);
	assert_string_equal(name, "test_bss_table");
	assert_int_equal(off, 0);
	assert_int_equal(auxcap_elf_data_symbolize(elf, tbl + 8 * 31 + 7, &name, &off), 1);
	assert_string_equal(name, "test_bss_table");
	assert_int_equal(off, 8 * 31 + 7);
	assert_int_equal(auxcap_elf_data_symbolize(elf, word + 2, &name, &off), 1);
	assert_string_equal(name, "auxcap_test_data_word");
	assert_int_equal(off, 2);
	/* a function is not a data object, and past an object's end is not in it */
	name = "untouched";
	assert_int_equal(auxcap_elf_data_symbolize(elf, (uint64_t)(uintptr_t)auxcap_test_elf_marker -
								 base,
						   &name, &off),
			 0);
	assert_string_equal(name, "untouched");
	if (auxcap_elf_data_symbolize(elf, tbl + sizeof(test_bss_table), &name, &off) == 1)
		assert_string_not_equal(name, "test_bss_table");
	assert_int_equal(auxcap_elf_data_symbolize(NULL, tbl, &name, &off), 0);
	auxcap_elf_free(elf);
}

#if defined(__x86_64__)
/*
 * Code labels without a type, as hand-written entry points are (ld.so's _start): one between
 * functions, which names its code up to the next symbol, and one inside a sized function,
 * which does not split it.
 */
__asm__(".text\n"
	".globl auxcap_test_label_entry\n"
	"auxcap_test_label_entry:\n"
	"\tnop\n\tnop\n\tnop\n\tret\n"
	".globl auxcap_test_sized_fn\n"
	".type auxcap_test_sized_fn, @function\n"
	"auxcap_test_sized_fn:\n"
	"\tnop\n"
	"auxcap_test_inner_label:\n"
	"\tnop\n\tret\n"
	".size auxcap_test_sized_fn, .-auxcap_test_sized_fn\n");
extern char auxcap_test_label_entry[], auxcap_test_sized_fn[];

static void test_elf_code_labels(void **state)
{
	struct auxcap_elf *elf = NULL;
	uint64_t base = 0, label, fn, off = 0;
	const char *name = NULL;
	Dl_info info;

	(void)state;
	assert_int_equal(auxcap_elf_open("/proc/self/exe", &elf), 0);
	assert_true(dladdr((void *)auxcap_test_sized_fn, &info) != 0);
	if (auxcap_elf_is_dyn(elf))
		base = (uint64_t)(uintptr_t)info.dli_fbase;
	label = (uint64_t)(uintptr_t)auxcap_test_label_entry - base;
	fn = (uint64_t)(uintptr_t)auxcap_test_sized_fn - base;
	assert_int_equal(fn, label + 4);
	assert_int_equal(auxcap_elf_symbolize(elf, label, &name, &off), 1);
	assert_string_equal(name, "auxcap_test_label_entry");
	assert_int_equal(off, 0);
	assert_int_equal(auxcap_elf_symbolize(elf, label + 3, &name, &off), 1);
	assert_string_equal(name, "auxcap_test_label_entry");
	assert_int_equal(off, 3);
	/* the label ends where the function starts; the function keeps its inner label */
	assert_int_equal(auxcap_elf_symbolize(elf, fn, &name, &off), 1);
	assert_string_equal(name, "auxcap_test_sized_fn");
	assert_int_equal(auxcap_elf_symbolize(elf, fn + 1, &name, &off), 1);
	assert_string_equal(name, "auxcap_test_sized_fn");
	assert_int_equal(off, 1);
	auxcap_elf_free(elf);
}
#endif

static void test_elf_open_errors(void **state)
{
	char path[] = "/tmp/auxcap-test-elf-XXXXXX";
	struct auxcap_elf *elf = (struct auxcap_elf *)(uintptr_t)0x1;
	int fd;

	(void)state;
	assert_int_equal(auxcap_elf_open(NULL, &elf), -EINVAL);
	assert_int_equal(auxcap_elf_open("/proc/self/exe", NULL), -EINVAL);
	assert_int_equal(auxcap_elf_open("/nonexistent/auxcap", &elf), -ENOENT);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hello, not an ELF\n", 18), 18);
	close(fd);
	assert_int_equal(auxcap_elf_open(path, &elf), -ENOEXEC);
	/* A truncated ELF header is not an ELF either. */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "\177ELF\2\1\1", 7), 7);
	close(fd);
	assert_int_equal(auxcap_elf_open(path, &elf), -ENOEXEC);
	unlink(path);
	/* Not a regular file: a FIFO without a writer (open() would wait), a device. */
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(auxcap_elf_open(path, &elf), -ENOEXEC);
	unlink(path);
	assert_int_equal(auxcap_elf_open("/dev/zero", &elf), -ENOEXEC);
	assert_int_equal(auxcap_elf_open("/tmp", &elf), -ENOEXEC);
	/* ret_elf untouched on failure */
	assert_ptr_equal(elf, (struct auxcap_elf *)(uintptr_t)0x1);
	auxcap_elf_free(NULL);
}

/*
 * Symbol by name: its link-time address agrees with dladdr(), and the bytes at the file
 * offset it gives are the function's code as the loader mapped it (what a uprobe needs).
 */
static void test_elf_symbol_lookup_gives_file_offset(void **state)
{
	struct auxcap_elf *elf = NULL;
	uint64_t addr = 5, off = 6, link_addr;
	unsigned char file_bytes[16];
	Dl_info info;
	int fd;

	(void)state;
	assert_int_equal(auxcap_elf_open("/proc/self/exe", &elf), 0);
	assert_int_equal(auxcap_elf_symbol_lookup(elf, "auxcap_test_elf_marker", &addr, &off), 1);
	assert_true(dladdr((void *)auxcap_test_elf_marker, &info) != 0);
	link_addr = (uint64_t)(uintptr_t)auxcap_test_elf_marker;
	if (auxcap_elf_is_dyn(elf))
		link_addr -= (uint64_t)(uintptr_t)info.dli_fbase;
	assert_int_equal(addr, link_addr);
	fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, file_bytes, sizeof(file_bytes), (off_t)off),
			 (ssize_t)sizeof(file_bytes));
	close(fd);
	assert_memory_equal(file_bytes, (const void *)(uintptr_t)auxcap_test_elf_marker,
			    sizeof(file_bytes));
	/* Unknown names leave the outputs alone; addresses outside the file have no offset. */
	addr = off = 7;
	assert_int_equal(auxcap_elf_symbol_lookup(elf, "auxcap_no_such_function", &addr, &off), 0);
	assert_int_equal(addr, 7);
	assert_int_equal(off, 7);
	assert_int_equal(auxcap_elf_addr_to_offset(elf, UINT64_MAX - 16, &off), -ENXIO);
	auxcap_elf_free(elf);
}

/*
 * PLT entries are named SYMBOL@plt like objdump names them (an independent reader of the
 * same relocations): every "<NAME@plt>:" label objdump prints for .plt/.plt.sec of this test
 * binary and of libc is what auxcap_elf_symbolize() gives at that address, at offset 0.
 */
/* objdump -C: names demangled as auxcap shows them (C++ ones of libstdc++'s PLT) */
static void check_plt_against_objdump(const char *path, const char *what)
{
	struct auxcap_elf *elf = NULL;
	char cmd[4200], line[4096];
	size_t n = 0;
	FILE *f;

	assert_int_equal(auxcap_elf_open(path, &elf), 0);
	snprintf(cmd, sizeof(cmd), "objdump -d -C -j .plt -j .plt.sec '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char *label = strchr(line, '<'), *end = strstr(line, ">:\n");
		const char *name = NULL;
		uint64_t off = 1;

		/* "0000000000012340 <LABEL>:" (a demangled LABEL may hold '<' and '>') */
		if (sscanf(line, "%llx <", &addr) != 1 || !label || !end || end < label)
			continue;
		label++;
		*end = '\0';
		if (!strstr(label, "@plt") || strstr(label, "@plt-") || strstr(label, "@plt+"))
			continue; /* the PLT header, labelled relative to its first entry */
		if (auxcap_elf_symbolize(elf, addr, &name, &off) != 1 || strcmp(name, label) ||
		    off)
			fail_msg("%s: 0x%llx is %s in objdump, %s+0x%llx here", what, addr, label,
				 name ? name : "(nothing)", (unsigned long long)off);
		n++;
	}
	assert_int_equal(pclose(f), 0);
	printf("# %s: %zu PLT entries named as objdump names them\n", what, n);
	assert_true(n > 0);
	auxcap_elf_free(elf);
}

static void test_elf_plt_entries_named_like_objdump(void **state)
{
	(void)state;

	if (system("objdump --version >/dev/null 2>&1") != 0)
		skip(); /* binutils absent: nothing independent to compare with */
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	assert_true(len > 0);
	self[len] = '\0'; /* objdump's own /proc/self/exe is objdump */
	check_plt_against_objdump(self, "this test");
	check_plt_against_objdump(AUXCAP_TEST_LIBC, "libc");
	if (AUXCAP_HAVE_DEMANGLE && access(AUXCAP_TEST_LIBSTDCXX, R_OK) == 0)
		check_plt_against_objdump(AUXCAP_TEST_LIBSTDCXX, "libstdc++ (C++ names)");
}

/*
 * A stripped binary gets its function names from its separate debug file, found by build-id
 * (DIR/.build-id/xx/rest.debug) or by .gnu_debuglink, as gdb and perf find it; the files are
 * made from this test binary with objcopy and strip.
 */
static void test_elf_stripped_uses_debug_file(void **state)
{
	char self[1024], dir[] = "/tmp/auxcap-test-dbg-XXXXXX", bid[64];
	char cmd[4096], prog[1100], dbg[1100], aside[1100], bdir[1200], bfile[1300], env[1200];
	struct auxcap_elf *elf = NULL;
	const uint8_t *id;
	const char *name = NULL;
	uint64_t link_addr, off = 0;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	size_t idlen;
	Dl_info info;

	(void)state;
	if (system("objcopy --version >/dev/null 2>&1 && strip --version >/dev/null 2>&1") != 0)
		skip(); /* binutils absent */
	assert_true(len > 0);
	self[len] = '\0';
	assert_non_null(mkdtemp(dir));
	assert_int_equal(auxcap_elf_open(self, &elf), 0);
	idlen = auxcap_elf_build_id(elf, &id);
	assert_true(idlen > 1 && idlen <= 20);
	for (size_t i = 0; i < idlen; i++)
		snprintf(bid + 2 * i, 3, "%02x", id[i]);
	auxcap_elf_free(elf);
	assert_true(dladdr((void *)auxcap_test_elf_marker, &info) != 0);
	link_addr = (uint64_t)(uintptr_t)auxcap_test_elf_marker;
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(dbg, sizeof(dbg), "%s/prog.debug", dir);
	snprintf(aside, sizeof(aside), "%s/aside", dir);
	snprintf(bdir, sizeof(bdir), "%s/d/.build-id/%.2s", dir, bid);
	snprintf(bfile, sizeof(bfile), "%s/%s.debug", bdir, bid + 2);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && objcopy --only-keep-debug '%s' prog.debug && strip -o prog '%s' && "
		 "objcopy --add-gnu-debuglink=prog.debug prog && mkdir -p %s",
		 dir, self, self, bdir);
	assert_int_equal(system(cmd), 0);

	/* The stripped copy alone does not know the marker (not exported). */
	setenv("AUXCAP_DEBUG_DIRS", "/nonexistent", 1);
	assert_int_equal(rename(dbg, aside), 0);
	assert_int_equal(auxcap_elf_open(prog, &elf), 0);
	if (auxcap_elf_is_dyn(elf))
		link_addr -= (uint64_t)(uintptr_t)info.dli_fbase;
	assert_true(auxcap_elf_symbolize(elf, link_addr, &name, &off) == 0 ||
		    strcmp(name, "auxcap_test_elf_marker") != 0);
	auxcap_elf_free(elf);

	/* By .gnu_debuglink, next to the binary; its source lines from there too. */
	assert_int_equal(rename(aside, dbg), 0);
	assert_int_equal(auxcap_elf_open(prog, &elf), 0);
	assert_int_equal(auxcap_elf_symbolize(elf, link_addr, &name, &off), 1);
	assert_string_equal(name, "auxcap_test_elf_marker");
	assert_int_equal(off, 0);
	check_marker_line(elf, link_addr, has_line_table());
	auxcap_elf_free(elf);
	/* ... also when the binary is named without a directory ("prog", in the current one:
	 * the link was looked for at "/prog.debug") */
	{
		char cwd[4096];

		assert_non_null(getcwd(cwd, sizeof(cwd)));
		assert_int_equal(chdir(dir), 0);
		assert_int_equal(auxcap_elf_open("prog", &elf), 0);
		assert_int_equal(chdir(cwd), 0);
		assert_int_equal(auxcap_elf_symbolize(elf, link_addr, &name, &off), 1);
		assert_string_equal(name, "auxcap_test_elf_marker");
		auxcap_elf_free(elf);
	}

	/* By build-id, in a debug directory of $AUXCAP_DEBUG_DIRS (the link finds nothing). */
	assert_int_equal(rename(dbg, bfile), 0);
	snprintf(env, sizeof(env), "/nonexistent:%s/d", dir);
	setenv("AUXCAP_DEBUG_DIRS", env, 1);
	assert_int_equal(auxcap_elf_open(prog, &elf), 0);
	assert_int_equal(auxcap_elf_symbolize(elf, link_addr + 1, &name, &off), 1);
	assert_string_equal(name, "auxcap_test_elf_marker");
	assert_int_equal(off, 1);
	auxcap_elf_free(elf);
	unsetenv("AUXCAP_DEBUG_DIRS");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

struct marker_rows {
	uint64_t addr;
	size_t rows, at_marker;
};

static int marker_row(void *arg, const char *file, const char *dir, unsigned int line,
		      uint64_t vaddr)
{
	struct marker_rows *m = arg;
	const char *base = strrchr(file, '/');

	(void)dir;
	m->rows++;
	if (vaddr == m->addr && !strcmp(base ? base + 1 : file, "test_elf_file.c") &&
	    line > MARKER_LINE_BEFORE && line < MARKER_LINE_AFTER)
		m->at_marker++;
	return 0;
}

/*
 * Source lines of a binary without .debug_aranges (clang leaves it out): the unit holding an
 * address is found by the units' own ranges.  And the line-table rows: one at the marker.
 */
static void test_elf_lines_without_aranges(void **state)
{
	char self[1024], dir[] = "/tmp/auxcap-test-ar-XXXXXX", cmd[2400], prog[1100];
	struct auxcap_elf *elf = NULL;
	struct marker_rows m = { 0 };
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	Dl_info info;
	bool lines = has_line_table();

	(void)state;
	if (system("objcopy --version >/dev/null 2>&1") != 0)
		skip(); /* binutils absent */
	assert_true(len > 0);
	self[len] = '\0';
	assert_non_null(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(cmd, sizeof(cmd), "objcopy --remove-section .debug_aranges '%s' '%s'", self, prog);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(auxcap_elf_open(prog, &elf), 0);
	assert_true(dladdr((void *)auxcap_test_elf_marker, &info) != 0);
	m.addr = (uint64_t)(uintptr_t)auxcap_test_elf_marker;
	if (auxcap_elf_is_dyn(elf))
		m.addr -= (uint64_t)(uintptr_t)info.dli_fbase;
	check_marker_line(elf, m.addr, lines);
	if (lines && AUXCAP_HAVE_LIBDW) {
		int n = auxcap_elf_line_rows(elf, marker_row, &m);

		assert_int_equal(n, (int)m.rows);
		assert_true(m.rows > 100);
		assert_true(m.at_marker >= 1);
	} else {
		assert_int_equal(auxcap_elf_line_rows(elf, marker_row, &m), 0);
	}
	auxcap_elf_free(elf);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Every byte of function @fn of @prog (open as @elf): its inline chain as addr2line -i -f (with
 * -C for C++) gives it, each frame's file @src; counts the chains by depth into @chains. */
static void check_inlines(struct auxcap_elf *elf, const char *prog, const char *fn,
			  const char *src, bool cxx, size_t chains[4])
{
	uint64_t addr = 0, size = 0, off;
	const char *sym;
	char cmd[2048], line[1024];
	FILE *p;

	assert_int_equal(auxcap_elf_symbol_lookup(elf, fn, &addr, &off), 1);
	assert_int_equal(auxcap_elf_symbolize_sized(elf, addr, &sym, &off, &size), 1);
	assert_true(size > 8 && size < 256);
	for (uint64_t a = addr; a < addr + size; a++) {
		struct auxcap_elf_inline fr[AUXCAP_ELF_INLINE_MAX];
		char name[8][128];
		unsigned int lines[8];
		int n = auxcap_elf_inlines(elf, a, fr, AUXCAP_ELF_INLINE_MAX), k = 0;

		snprintf(cmd, sizeof(cmd), "addr2line -i -f %s -e '%s' 0x%" PRIx64, cxx ? "-C" : "",
			 prog, a);
		p = popen(cmd, "r");
		assert_non_null(p);
		/* pairs of lines: the function, then FILE:LINE [(discriminator N)] */
		while (k < 8 && fgets(line, sizeof(line), p)) {
			char *c;

			line[strcspn(line, "\n")] = '\0';
			snprintf(name[k], sizeof(name[k]), "%.127s", line);
			assert_non_null(fgets(line, sizeof(line), p));
			c = strrchr(line, ':');
			assert_non_null(c);
			lines[k++] = (unsigned int)strtoul(c + 1, NULL, 10);
		}
		assert_int_equal(pclose(p), 0);
		assert_true(k >= 1);
		if (k == 1) { /* not inlined code */
			assert_int_equal(n, 0);
			chains[0]++;
			continue;
		}
		assert_int_equal(n, k);
		for (int i = 0; i < k; i++) {
			assert_non_null(fr[i].name);
			assert_string_equal(fr[i].name, name[i]);
			assert_int_equal(fr[i].line, lines[i]);
			assert_non_null(fr[i].file);
			assert_non_null(strstr(fr[i].file, src));
		}
		chains[k < 3 ? k : 3]++;
	}
}

/* The inline chain of every byte of tests/decode/inline_prog.c's outer() and twice() (one
 * function inlined into another inlined into outer(), one inlined twice into twice()) against
 * binutils' addr2line -i -f, which reads the same DWARF with a reader of its own. */
static void test_elf_inlines_like_addr2line(void **state)
{
	const char *prog = getenv("AUXCAP_INLINE_PROG");
	struct auxcap_elf *elf = NULL;
	size_t chains[4] = { 0 }; /* by depth: 0 (none), 1 (unused), 2, 3 and more */
	struct auxcap_elf_inline fr[2];
	uint64_t outer = 0, off;

	(void)state;
	if (!prog)
		skip(); /* not run by meson */
	if (system("addr2line --version >/dev/null 2>&1") != 0)
		skip(); /* binutils absent */
	assert_int_equal(auxcap_elf_open(prog, &elf), 0);
	check_inlines(elf, prog, "outer", "inline_prog.c", false, chains);
	check_inlines(elf, prog, "twice", "inline_prog.c", false, chains);
	/* outer(): inner in middle in outer; twice(): inner in twice */
	assert_true(chains[3] > 0);
	assert_true(chains[2] > 0);
	assert_true(chains[0] > 0);
	/* an address outside any function, and bad arguments */
	assert_int_equal(auxcap_elf_symbol_lookup(elf, "outer", &outer, &off), 1);
	assert_int_equal(auxcap_elf_inlines(elf, 0, fr, 2), 0);
	assert_int_equal(auxcap_elf_inlines(elf, outer, fr, 2), 2); /* cut to the innermost */
	assert_int_equal(auxcap_elf_inlines(elf, outer, fr, 1), 0);
	assert_int_equal(auxcap_elf_inlines(NULL, outer, fr, 2), 0);
	auxcap_elf_free(elf);
}

/* The same in C++: a template's methods inlined into auxcap::run(unsigned long), named by their
 * DWARF linkage names demangled as addr2line -C names them ("auxcap::Box<unsigned
 * long>::get() const"); with raw names, the linkage names themselves. */
static void test_elf_inlines_cxx(void **state)
{
	const char *prog = getenv("AUXCAP_INLINE_CXX");
	struct auxcap_elf *elf = NULL;
	struct auxcap_elf_inline fr[AUXCAP_ELF_INLINE_MAX];
	size_t chains[4] = { 0 };
	uint64_t addr = 0, off;

	(void)state;
	if (!prog)
		skip(); /* no C++ compiler at build time, or not run by meson */
	if (!AUXCAP_HAVE_DEMANGLE || system("addr2line --version >/dev/null 2>&1") != 0)
		skip(); /* built without libiberty, or binutils absent */
	assert_int_equal(auxcap_elf_open(prog, &elf), 0);
	check_inlines(elf, prog, "auxcap::run(unsigned long)", "inline_cxx.cc", true, chains);
	assert_true(chains[3] > 0 || chains[2] > 0);
	/* the file's own names */
	auxcap_elf_set_raw_names(elf, true);
	assert_int_equal(auxcap_elf_symbol_lookup(elf, "_ZN6auxcap3runEm", &addr, &off), 1);
	for (uint64_t a = addr; a < addr + 64; a++) {
		int n = auxcap_elf_inlines(elf, a, fr, AUXCAP_ELF_INLINE_MAX);

		if (n >= 2) {
			assert_string_equal(fr[n - 1].name, "_ZN6auxcap3runEm");
			assert_true(strncmp(fr[0].name, "_ZN", 3) == 0 ||
				    strncmp(fr[0].name, "_ZNK", 4) == 0);
			break;
		}
		assert_true(a + 1 < addr + 64); /* some code of the first 64 bytes is inlined */
	}
	auxcap_elf_free(elf);
}

/* c++filt's reading of @raw, without what a Rust name's demangling leaves out (perf's and
 * ours): a legacy name's hash ("::h0123456789abcdef") and a v0 crate's disambiguator. */
static void cxxfilt(const char *raw, char *out, size_t n)
{
	char cmd[512], *h;
	FILE *p;
	size_t k = 0;

	snprintf(cmd, sizeof(cmd), "c++filt '%s'", raw);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(out, (int)n, p));
	assert_int_equal(pclose(p), 0);
	out[strcspn(out, "\n")] = '\0';
	if ((h = strstr(out, "::h")) && strlen(h) == 3 + 16)
		*h = '\0';
	for (size_t i = 0; out[i]; i++) { /* "auxcap[3c1c0]::shift" -> "auxcap::shift" */
		if (out[i] == '[' && raw[1] == 'R') {
			while (out[i] && out[i] != ']')
				i++;
			continue;
		}
		out[k++] = out[i];
	}
	out[k] = '\0';
}

/* C++ and Rust (legacy, v0) names of tests/decode/inline_prog.c's functions: shown as
 * c++filt reads them, the file's own with auxcap_elf_set_raw_names(), found by either. */
static void test_elf_names_demangled(void **state)
{
	const char *prog = getenv("AUXCAP_INLINE_PROG");
	static const char *const raw[] = { "_ZN6auxcap4demo5scaleEm", "_ZNK6auxcap3BoxIiE3getEv",
					   "_ZN6auxcap5shift17h0123456789abcdefE",
					   "_RNvCs1234_6auxcap5shift" };
	struct auxcap_elf *elf = NULL;

	(void)state;
	if (!prog)
		skip(); /* not run by meson */
	if (!AUXCAP_HAVE_DEMANGLE || system("c++filt --version >/dev/null 2>&1") != 0)
		skip(); /* built without libiberty, or binutils absent */
	assert_int_equal(auxcap_elf_open(prog, &elf), 0);
	for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
		uint64_t addr = 0, off = 1, a2 = 0;
		const char *name = NULL;
		char want[512];

		cxxfilt(raw[i], want, sizeof(want));
		assert_string_not_equal(want, raw[i]);
		assert_int_equal(auxcap_elf_symbol_lookup(elf, raw[i], &addr, &off), 1);
		assert_int_equal(auxcap_elf_symbolize(elf, addr, &name, &off), 1);
		assert_int_equal(off, 0);
		assert_string_equal(name, want);
		printf("# %s -> %s\n", raw[i], name);
		/* found by the name shown too (the two Rust names are the same function's) */
		assert_int_equal(auxcap_elf_symbol_lookup(elf, want, &a2, &off), 1);
		if (raw[i][1] == 'Z' && strstr(raw[i], "shift") == NULL)
			assert_int_equal(a2, addr);
		auxcap_elf_set_raw_names(elf, true);
		assert_int_equal(auxcap_elf_symbolize(elf, addr, &name, &off), 1);
		assert_string_equal(name, raw[i]);
		auxcap_elf_set_raw_names(elf, false);
	}
	auxcap_elf_free(elf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elf_open_self_finds_segments_and_symbols),
		cmocka_unit_test(test_elf_data_objects),
		cmocka_unit_test(test_elf_lines_without_aranges),
		cmocka_unit_test(test_elf_inlines_like_addr2line),
		cmocka_unit_test(test_elf_inlines_cxx),
		cmocka_unit_test(test_elf_names_demangled),
		cmocka_unit_test(test_elf_open_errors),
#if defined(__x86_64__)
		cmocka_unit_test(test_elf_code_labels),
#endif
		cmocka_unit_test(test_elf_symbol_lookup_gives_file_offset),
		cmocka_unit_test(test_elf_plt_entries_named_like_objdump),
		cmocka_unit_test(test_elf_stripped_uses_debug_file),
	};

	return cmocka_run_group_tests_name("decode/elf_file", tests, NULL, NULL);
}
