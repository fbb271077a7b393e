/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core/proc.c on a made-up procfs tree: maps lines, the address of a file offset, and the
 * COMM/MMAP2 records synthesized for a running task, decoded back with the record parser.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <sys/utsname.h>

#include <cmocka.h>
#include <elf.h>

#include "auxcap/proc.h"
#include "auxcap/record.h"
#include "util.h"

static char root[64];

static void put_file(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup_proc(void **state)
{
	char path[256];

	(void)state;
	snprintf(root, sizeof(root), "/tmp/auxcap-test-proc-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(path, sizeof(path), "%s/4242", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/4242/task", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/4242/task/4243", root);
	mkdir(path, 0755);
	put_file("4242/status", "Name:\tworker\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\n");
	put_file("4242/task/4243/comm", "worker-2\n");
	put_file("4242/maps",
		 "55e8c0a00000-55e8c0a01000 r--p 00000000 fe:00 5350898    /usr/bin/prog\n"
		 "55e8c0a01000-55e8c0a02000 r-xp 00001000 fe:00 5350898    /usr/bin/prog\n"
		 "55e8c0a02000-55e8c0a03000 rw-p 00002000 fe:00 5350898    /usr/bin/prog\n"
		 "7f0000000000-7f0000010000 rwxp 00000000 00:00 0 \n"
		 "7f1000000000-7f1000002000 r-xs 00004000 08:11 77         /opt/lib/a b.so\n"
		 "7ffd1000c000-7ffd1000e000 r-xp 00000000 00:00 0          [vdso]\n");
	/* 4243 is a thread of 4242 as /proc lists it at the top level too */
	snprintf(path, sizeof(path), "%s/4243", root);
	mkdir(path, 0755);
	put_file("4243/status", "Name:\tworker-2\nTgid:\t4242\nPid:\t4243\n");
	return 0;
}

static int teardown_proc(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_map_parse(void **state)
{
	struct auxcap_proc_map m, keep;

	(void)state;
	assert_int_equal(auxcap_proc_map_parse("55e8c0a01000-55e8c0a02000 r-xp 00001000 fe:00 "
					       "5350898                    /usr/bin/prog\n",
					       &m),
			 0);
	assert_int_equal(m.start, 0x55e8c0a01000ULL);
	assert_int_equal(m.end, 0x55e8c0a02000ULL);
	assert_int_equal(m.pgoff, 0x1000);
	assert_int_equal(m.prot, PROT_READ | PROT_EXEC);
	assert_int_equal(m.flags, MAP_PRIVATE);
	assert_int_equal(m.maj, 0xfe);
	assert_int_equal(m.min, 0);
	assert_int_equal(m.ino, 5350898);
	assert_string_equal(m.path, "/usr/bin/prog");
	/* Anonymous: the inode ends the line (or a blank does); no path. */
	assert_int_equal(auxcap_proc_map_parse("7f00-8f00 rw-s 00000000 00:00 0", &m), 0);
	assert_string_equal(m.path, "");
	assert_int_equal(m.flags, MAP_SHARED);
	assert_int_equal(m.prot, PROT_READ | PROT_WRITE);
	assert_int_equal(auxcap_proc_map_parse("1000-2000 ---p 00000000 00:00 0 [stack]\n", &m), 0);
	assert_string_equal(m.path, "[stack]");
	assert_int_equal(m.prot, 0);
	/* Paths keep their blanks. */
	assert_int_equal(
		auxcap_proc_map_parse("1000-2000 r-xp 0 08:11 77 /tmp/a b (deleted)\n", &m), 0);
	assert_string_equal(m.path, "/tmp/a b (deleted)");
	/* Malformed lines leave the output alone. */
	keep = m;
	assert_int_equal(auxcap_proc_map_parse("zz-2000 r-xp 0 08:11 77 /x", &m), -EBADMSG);
	assert_int_equal(auxcap_proc_map_parse("2000-1000 r-xp 0 08:11 77 /x", &m), -EBADMSG);
	assert_int_equal(auxcap_proc_map_parse("1000-2000 rwxq 0 08:11 77 /x", &m), -EBADMSG);
	assert_int_equal(auxcap_proc_map_parse("1000-2000 r-xp 0 0811 77 /x", &m), -EBADMSG);
	assert_int_equal(auxcap_proc_map_parse("1000-2000 r-xp 0 08:11 /x", &m), -EBADMSG);
	assert_int_equal(auxcap_proc_map_parse("1000-2000 r-x", &m), -EBADMSG);
	assert_int_equal(auxcap_proc_map_parse("11112222333344445-2000 r-xp 0 08:11 7 /x", &m),
			 -EBADMSG);
	assert_int_equal(auxcap_proc_map_parse(NULL, &m), -EINVAL);
	assert_memory_equal(&m, &keep, sizeof(m));
}

static void test_tgid_and_find_addr(void **state)
{
	uint64_t addr = 1;
	pid_t tgid = 0;

	(void)state;
	assert_int_equal(auxcap_proc_tgid(root, 4243, &tgid), 0);
	assert_int_equal(tgid, 4242);
	assert_int_equal(auxcap_proc_tgid(root, 999999, &tgid), -ESRCH);
	{
		long v = 0;

		assert_int_equal(auxcap_proc_status(root, 4243, "Pid", &v), 0);
		assert_int_equal(v, 4243);
		/* the key whole: "Tgi" is not "Tgid", and a missing line is an error */
		assert_int_equal(auxcap_proc_status(root, 4243, "Tgi", &v), -EBADMSG);
		assert_int_equal(auxcap_proc_status(root, 4243, "TracerPid", &v), -EBADMSG);
		assert_int_equal(auxcap_proc_status(root, 999999, "Pid", &v), -ESRCH);
	}
	/* The executable mapping holding offset 0x1234 of the file (matched by path here). */
	assert_int_equal(auxcap_proc_find_addr(root, 4242, "/usr/bin/prog", 0x1234, &addr), 0);
	assert_int_equal(addr, 0x55e8c0a01234ULL);
	/* An offset only a read-only mapping holds is still found there. */
	assert_int_equal(auxcap_proc_find_addr(root, 4242, "/usr/bin/prog", 0x10, &addr), 0);
	assert_int_equal(addr, 0x55e8c0a00010ULL);
	addr = 1;
	assert_int_equal(auxcap_proc_find_addr(root, 4242, "/usr/bin/prog", 0x3000, &addr), -ENXIO);
	assert_int_equal(auxcap_proc_find_addr(root, 4242, "/usr/bin/other", 0x1000, &addr),
			 -ENXIO);
	assert_int_equal(auxcap_proc_find_addr(root, 999999, "/usr/bin/prog", 0, &addr), -ESRCH);
	assert_int_equal(addr, 1);
}

struct collected {
	unsigned char buf[8192];
	size_t len;
	int n;
};

static int collect(void *ctx, const void *rec, size_t len)
{
	struct collected *c = ctx;

	assert_true(c->len + len <= sizeof(c->buf));
	memcpy(c->buf + c->len, rec, len);
	c->len += len;
	c->n++;
	return 0;
}

static int refuse(void *ctx, const void *rec, size_t len)
{
	(void)ctx;
	(void)rec;
	(void)len;
	return -ENOSPC;
}

static void test_synthesize(void **state)
{
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CPU,
		.sample_id_all = 1,
	};
	struct auxcap_sample_layout l;
	struct auxcap_sample_id sid = { .id = 555, .cpu = 3, .time = 0 };
	static const struct {
		uint64_t addr, len, pgoff, ino;
		uint32_t prot, flags;
		const char *name;
	} want[] = {
		{ 0x55e8c0a01000ULL, 0x1000, 0x1000, 5350898, PROT_READ | PROT_EXEC, MAP_PRIVATE,
		  "/usr/bin/prog" },
		{ 0x7f0000000000ULL, 0x10000, 0, 0, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE,
		  "//anon" },
		{ 0x7f1000000000ULL, 0x2000, 0x4000, 77, PROT_READ | PROT_EXEC, MAP_SHARED,
		  "/opt/lib/a b.so" },
		{ 0x7ffd1000c000ULL, 0x2000, 0, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, "[vdso]" },
	};
	static struct collected c;
	struct auxcap_record rec;
	size_t off = 0;
	int k = 0;

	(void)state;
	auxcap_sample_layout_from_attr(&a, &l);
	memset(&c, 0, sizeof(c));
	assert_int_equal(auxcap_proc_synthesize(root, 4242, 4243, true, &l, &sid, collect, &c), 5);
	assert_int_equal(c.n, 5);
	while (off < c.len) {
		const struct perf_event_header *h = (const void *)(c.buf + off);

		assert_int_equal(h->size % 8, 0);
		assert_int_equal(auxcap_record_parse(&l, h, h->size, &rec), 0);
		assert_true(rec.has_sample_id);
		assert_int_equal(rec.sid.id, 555);
		assert_int_equal(rec.sid.time, 0);
		assert_int_equal(rec.sid.cpu, 3);
		assert_int_equal(rec.sid.pid, 4242);
		if (k == 0) {
			assert_int_equal(rec.type, PERF_RECORD_COMM);
			assert_int_equal(rec.u.comm.pid, 4242);
			assert_int_equal(rec.u.comm.tid, 4243);
			assert_int_equal(rec.sid.tid, 4243);
			assert_string_equal(rec.u.comm.comm, "worker-2");
		} else {
			assert_int_equal(rec.type, PERF_RECORD_MMAP2);
			assert_int_equal(rec.misc & PERF_RECORD_MISC_CPUMODE_MASK,
					 PERF_RECORD_MISC_USER);
			assert_int_equal(rec.u.mmap.pid, 4242);
			assert_int_equal(rec.u.mmap.tid, 4242);
			assert_int_equal(rec.u.mmap.addr, want[k - 1].addr);
			assert_int_equal(rec.u.mmap.len, want[k - 1].len);
			assert_int_equal(rec.u.mmap.pgoff, want[k - 1].pgoff);
			assert_int_equal(rec.u.mmap.ino, want[k - 1].ino);
			assert_int_equal(rec.u.mmap.prot, want[k - 1].prot);
			assert_int_equal(rec.u.mmap.flags, want[k - 1].flags);
			assert_string_equal(rec.u.mmap.filename, want[k - 1].name);
		}
		off += h->size;
		k++;
	}
	assert_int_equal(k, 5);
	/* Without maps: the COMM only; a task that is gone; the consumer's error. */
	memset(&c, 0, sizeof(c));
	assert_int_equal(auxcap_proc_synthesize(root, 4242, 4243, false, &l, &sid, collect, &c), 1);
	assert_int_equal(auxcap_proc_synthesize(root, 4242, 4299, true, &l, &sid, collect, &c),
			 -ESRCH);
	assert_int_equal(auxcap_proc_synthesize(root, 4242, 4243, true, &l, &sid, refuse, NULL),
			 -ENOSPC);
}

/* Every task of a /proc: each process's threads a COMM each and its mappings once; what is
 * not a process, or is gone, is left out. */
static void test_synthesize_all(void **state)
{
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
	};
	const char *dirs[] = { "5000", "5000/task", "5000/task/5000", "5000/task/5001", "6000",
			       "6000/task", "6000/task/6000", "self" };
	struct auxcap_sample_layout l;
	struct auxcap_sample_id sid = { .id = 7 };
	static struct collected c;
	struct auxcap_record rec;
	int comms = 0, mmaps = 0, of5000 = 0;
	char path[256];

	(void)state;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		assert_int_equal(mkdir(path, 0755), 0);
	}
	/* 5000: a kernel thread's like, two threads, no mappings; 6000: gone (no comm) */
	put_file("5000/task/5000/comm", "kworker\n");
	put_file("5000/task/5001/comm", "kworker-b\n");
	put_file("5000/maps", "");
	put_file("version", "Linux\n");
	auxcap_sample_layout_from_attr(&a, &l);
	memset(&c, 0, sizeof(c));
	assert_int_equal(auxcap_proc_synthesize_all(root, &l, &sid, collect, &c), 7);
	for (size_t off = 0; off < c.len;) {
		const struct perf_event_header *h = (const void *)(c.buf + off);

		assert_int_equal(auxcap_record_parse(&l, h, h->size, &rec), 0);
		assert_int_equal(rec.sid.id, 7);
		if (rec.type == PERF_RECORD_COMM) {
			comms++;
			if (rec.u.comm.pid == 5000) {
				of5000++;
				assert_true(rec.u.comm.tid == 5000 || rec.u.comm.tid == 5001);
			} else {
				assert_int_equal(rec.u.comm.pid, 4242);
				assert_int_equal(rec.u.comm.tid, 4243);
			}
		} else {
			assert_int_equal(rec.type, PERF_RECORD_MMAP2);
			assert_int_equal(rec.u.mmap.pid, 4242);
			mmaps++;
		}
		off += h->size;
	}
	assert_int_equal(comms, 3);
	assert_int_equal(of5000, 2);
	assert_int_equal(mmaps, 4);
	assert_int_equal(auxcap_proc_synthesize_all(root, &l, &sid, refuse, NULL), -ENOSPC);
	snprintf(path, sizeof(path), "%s/nonexistent", root);
	assert_int_equal(auxcap_proc_synthesize_all(path, &l, &sid, collect, &c), -ENOENT);
}

/* The kernel's text from kallsyms, and its mapping as perf record writes it. */
static void test_kernel_text(void **state)
{
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
	};
	struct auxcap_sample_layout l;
	struct auxcap_sample_id sid = { .id = 9 };
	static struct collected c;
	struct auxcap_record rec;
	uint64_t start = 0, end = 0;
	char other[128];

	(void)state;
	put_file("kallsyms", "0000000000000000 A fixed_percpu_data\n"
			     "ffffffff81000000 T _stext\n"
			     "ffffffff81000000 T _text\n"
			     "ffffffff81001000 t some_function\n"
			     "ffffffff82276f48 T _etext\n"
			     "ffffffffc0000000 t mod_fn\t[some_module]\n");
	assert_int_equal(auxcap_proc_kernel_text(root, &start, &end), 0);
	assert_int_equal(start, 0xffffffff81000000ULL);
	assert_int_equal(end, 0xffffffff82276f48ULL);
	auxcap_sample_layout_from_attr(&a, &l);
	memset(&c, 0, sizeof(c));
	assert_int_equal(auxcap_proc_synthesize_kernel(root, &l, &sid, collect, &c), 1);
	assert_int_equal(auxcap_record_parse(&l, (const void *)c.buf, c.len, &rec), 0);
	assert_int_equal(rec.type, PERF_RECORD_MMAP);
	assert_int_equal(rec.misc & PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_KERNEL);
	assert_int_equal(rec.u.mmap.pid, (uint32_t)-1);
	assert_int_equal(rec.u.mmap.tid, 0);
	assert_int_equal(rec.u.mmap.addr, 0xffffffff81000000ULL);
	assert_int_equal(rec.u.mmap.len, 0x1276f48);
	assert_int_equal(rec.u.mmap.pgoff, 0xffffffff81000000ULL);
	assert_string_equal(rec.u.mmap.filename, "[kernel.kallsyms]_text");
	assert_int_equal(rec.sid.id, 9);
	/* kptr_restrict: the addresses read as zeros */
	snprintf(other, sizeof(other), "%s/hidden", root);
	assert_int_equal(mkdir(other, 0755), 0);
	put_file("hidden/kallsyms", "0000000000000000 T _text\n0000000000000000 T _etext\n");
	assert_int_equal(auxcap_proc_kernel_text(other, &start, &end), -EACCES);
	assert_int_equal(auxcap_proc_synthesize_kernel(other, &l, &sid, collect, &c), -EACCES);
	snprintf(other, sizeof(other), "%s/nonexistent", root);
	assert_int_equal(auxcap_proc_kernel_text(other, &start, &end), -ENOENT);
	/* the running kernel: its release and _text, nothing else */
	if (auxcap_proc_kernel_text(NULL, &start, &end) == 0) {
		struct utsname u;

		assert_int_equal(uname(&u), 0);
		assert_true(auxcap_proc_kernel_is(u.release, start));
		assert_false(auxcap_proc_kernel_is(u.release, start + 0x200000));
		assert_false(auxcap_proc_kernel_is("0.0.0-other", start));
		assert_false(auxcap_proc_kernel_is(u.release, 0));
	}
}

/* The bytes of @path at [@off, @off + @n). */
static void read_at(const char *path, uint64_t off, void *buf, size_t n)
{
	FILE *f = fopen(path, "rb");

	assert_non_null(f);
	assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
	assert_int_equal(fread(buf, 1, n, f), n);
	fclose(f);
}

/*
 * record --kcore's copy: the text [_text, _etext) and each live module whose range kcore
 * holds, at their addresses, with kcore's bytes; nothing else.
 */
static void test_kcore_copy(void **state)
{
	static uint8_t text[0x4000], mods[0x8000], other[0x100], got[0x4000];
	const struct test_kseg segs[] = {
		{ 0xffffc90000000000ULL, other, sizeof(other) },
		{ 0xffffffff81000000ULL, text, sizeof(text) },
		{ 0xffffffffc0000000ULL, mods, sizeof(mods) },
	};
	char dir[128], path[192], dst[192];
	Elf64_Ehdr eh;
	Elf64_Phdr ph[2];
	struct stat st;
	uint64_t bytes = 7;

	(void)state;
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (uint8_t)(i * 7 + 1);
	for (size_t i = 0; i < sizeof(mods); i++)
		mods[i] = (uint8_t)(i * 13 + 5);
	memset(other, 0xee, sizeof(other));
	snprintf(dir, sizeof(dir), "%s/kc", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dst, sizeof(dst), "%s/copy", dir);
	/* no kcore (CONFIG_PROC_KCORE off) */
	put_file("kc/kallsyms", "ffffffff81000000 T _text\n"
				"ffffffff81000010 t f\n"
				"ffffffff81002100 T _etext\n"
				"ffffffffc0001000 t m_fn\t[modA]\n");
	assert_int_equal(auxcap_proc_kcore_copy(dir, dst, &bytes), -ENOENT);
	snprintf(path, sizeof(path), "%s/kcore", dir);
	assert_int_equal(test_write_kcore(path, segs, 3), 0);
	put_file("kc/modules", "modA 8192 0 - Live 0xffffffffc0001000\n"
			       "modB 4096 0 - Loading 0xffffffffc0004000\n"
			       "modC 4096 1 modA, Live 0xffffffffd0000000 (OE)\n"
			       "modD 4096 0 - Live 0x0000000000000000\n");
	assert_int_equal(auxcap_proc_kcore_copy(dir, dst, &bytes), 1); /* one module */
	assert_int_equal(bytes, 7 + 0x2100 + 8192);
	assert_int_equal(stat(dst, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	read_at(dst, 0, &eh, sizeof(eh));
	assert_memory_equal(eh.e_ident, ELFMAG, SELFMAG);
	assert_int_equal(eh.e_ident[EI_CLASS], ELFCLASS64);
	assert_int_equal(eh.e_type, ET_CORE);
	assert_int_equal(eh.e_machine, EM_X86_64);
	assert_int_equal(eh.e_phnum, 2);
	read_at(dst, eh.e_phoff, ph, sizeof(ph));
	assert_int_equal(ph[0].p_type, PT_LOAD);
	assert_true(ph[0].p_flags & PF_X);
	assert_int_equal(ph[0].p_vaddr, 0xffffffff81000000ULL);
	assert_int_equal(ph[0].p_filesz, 0x2100);
	read_at(dst, ph[0].p_offset, got, 0x2100);
	assert_memory_equal(got, text, 0x2100);
	assert_int_equal(ph[1].p_vaddr, 0xffffffffc0001000ULL);
	assert_int_equal(ph[1].p_filesz, 8192);
	read_at(dst, ph[1].p_offset, got, 8192);
	assert_memory_equal(got, mods + 0x1000, 8192);
	/* a kcore without the text (another kernel's): refused, the copy left as it was */
	put_file("kc/kallsyms", "ffffffff9a000000 T _text\nffffffff9a002100 T _etext\n");
	assert_int_equal(auxcap_proc_kcore_copy(dir, dst, NULL), -EBADMSG);
	read_at(dst, ph[0].p_offset, got, 0x2100);
	assert_memory_equal(got, text, 0x2100);
	/* kptr_restrict: kallsyms shows zeros */
	put_file("kc/kallsyms", "0000000000000000 T _text\n0000000000000000 T _etext\n");
	assert_int_equal(auxcap_proc_kcore_copy(dir, dst, NULL), -EACCES);
	/* not ELF */
	put_file("kc/kallsyms", "ffffffff81000000 T _text\nffffffff81002100 T _etext\n");
	put_file("kc/kcore", "not an ELF file, but long enough to hold a header of one...\n");
	assert_int_equal(auxcap_proc_kcore_copy(dir, dst, NULL), -EBADMSG);
	/* a destination that cannot be made: nothing left behind */
	snprintf(path, sizeof(path), "%s/kcore", dir);
	assert_int_equal(test_write_kcore(path, segs, 3), 0);
	snprintf(dst, sizeof(dst), "%s/missing/copy", dir);
	assert_int_equal(auxcap_proc_kcore_copy(dir, dst, NULL), -ENOENT);
}

/* The kernel's build-id from its notes (/sys/kernel/notes): the GNU note among others. */
static void test_kernel_build_id(void **state)
{
	static const uint8_t notes[] = {
		/* a Xen note: name "Xen", 8 bytes of desc */
		4, 0, 0, 0, 8, 0, 0, 0, 6, 0, 0, 0, 'X', 'e', 'n', 0, 1, 2, 3, 4, 5, 6, 7, 8,
		/* the build-id: name "GNU", type 3, 20 bytes */
		4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0,
		0x85, 0xc7, 0xe4, 0xe2, 0xed, 0x76, 0xf4, 0x41, 0x7e, 0x8a,
		0xaa, 0xd7, 0xc6, 0xb0, 0x40, 0xd2, 0xbb, 0x89, 0x7a, 0x26,
		/* Linux's own, with a 6-byte name */
		6, 0, 0, 0, 4, 0, 0, 0, 1, 1, 0, 0, 'L', 'i', 'n', 'u', 'x', 0, 0, 0, 0, 1, 2, 3,
	};
	uint8_t id[20], small[8];
	char dir[128], path[192];
	FILE *f;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/sys", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/kernel", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(auxcap_proc_kernel_build_id(dir, id, sizeof(id)), -ENOENT);
	snprintf(path, sizeof(path), "%s/kernel/notes", dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(notes, 1, sizeof(notes), f), sizeof(notes));
	fclose(f);
	assert_int_equal(auxcap_proc_kernel_build_id(dir, id, sizeof(id)), 20);
	assert_memory_equal(id, notes + 40, 20);
	assert_int_equal(auxcap_proc_kernel_build_id(dir, small, sizeof(small)), -ENOSPC);
	/* notes cut inside the build-id's: none */
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(notes, 1, 50, f), 50);
	fclose(f);
	assert_int_equal(auxcap_proc_kernel_build_id(dir, id, sizeof(id)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_parse),
		cmocka_unit_test(test_tgid_and_find_addr),
		cmocka_unit_test(test_synthesize),
		cmocka_unit_test(test_synthesize_all),
		cmocka_unit_test(test_kernel_text),
		cmocka_unit_test(test_kcore_copy),
		cmocka_unit_test(test_kernel_build_id),
	};

	return cmocka_run_group_tests_name("core/proc", tests, setup_proc, teardown_proc);
}
