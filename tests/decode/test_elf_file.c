/* SPDX-License-Identifier: BSD-3-Clause */
/* decode/elf_file.c: segments and symbols of a real ELF file (this test binary itself). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf_file.h"

/* A function with a known name and a size, to be found by address. */
__attribute__((noinline)) int auxcap_test_elf_marker(int x);
__attribute__((noinline)) int auxcap_test_elf_marker(int x)
{
	return x * 3 + 1;
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
	auxcap_elf_free(elf);
	(void)auxcap_test_elf_marker(1);
}

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elf_open_self_finds_segments_and_symbols),
		cmocka_unit_test(test_elf_open_errors),
		cmocka_unit_test(test_elf_symbol_lookup_gives_file_offset),
	};

	return cmocka_run_group_tests_name("decode/elf_file", tests, NULL, NULL);
}
