/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A trace of kernel code (intel_pt//k) decoded with the kernel's code from each place a user
 * has it: the kernel build's vmlinux (decode --vmlinux), or the copy of the running kernel's
 * code that record --kcore and archive make from /proc/kcore (FILE.archive/kcore).  The
 * kernel is tests/decode/kernel_image.S, linked at a kernel address ($AUXCAP_TEST_VMLINUX);
 * the capture says it ran KASLR-moved by SHIFT.  The trace, made with libipt's encoder,
 * follows its flow:
 *
 *   kentry: push; mov; call khelper -> xor; cmp; jne (taken); ret -> test; jz (taken);
 *           pop; jmp ktail -> nop; ret (tracing stops)
 *
 * and a cpu-clock sample is taken at khelper's ret.  Every instruction and branch must be
 * decoded at the moved addresses, the sample found in the trace with its stack, and the
 * addresses named (by the vmlinux's symbols and lines, or by the capture's kallsyms).
 * Without the code, or with another boot's copy, nothing of the kernel is decoded.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
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
#include <sys/wait.h>

#include <cmocka.h>
#include <intel-pt.h>

#include "auxcap/backend.h"
#include "auxcap/decode.h"
#include "auxcap/proc.h"
#include "capture_builder.h"
#include "pt_synth.h"
#include "util.h"

#define SHIFT 0x1a000000ull /* KASLR: where the capture's kernel ran, from the link address */
#define T0 1000000000ull    /* TSC ticks = ns: TIME_CONV is the identity */
#define PID 10

static char g_dir[256];

/* The stand-in vmlinux: its code segment and the link addresses of its labels. */
static struct {
	const char *path;
	uint64_t vaddr, offset, size; /* the executable PT_LOAD segment */
	uint8_t *code;
	uint64_t kentry, kentry_call, kentry_back, kentry_jz, kentry_skip, kentry_jmp;
	uint64_t khelper, khelper_jne, khelper_ret, ktail, ktail_ret;
	uint8_t id[20]; /* its GNU build-id */
	size_t id_size;
} k;

/* The GNU build-id of @e into k.id. */
static void read_build_id(Elf *e)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *data;
		size_t off = 0, name, desc;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &name, &desc)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= sizeof(k.id)) {
				memcpy(k.id, (const uint8_t *)data->d_buf + desc, nh.n_descsz);
				k.id_size = nh.n_descsz;
				return;
			}
		}
	}
}

static uint64_t sym(Elf *e, const char *name)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			if (gelf_getsym(data, (int)i, &s) &&
			    !strcmp(elf_strptr(e, sh.sh_link, s.st_name), name))
				return s.st_value;
		}
	}
	fail_msg("%s: no symbol %s", k.path, name);
	return 0;
}

static void load_vmlinux(void)
{
	size_t nph;
	Elf *e;
	int fd;

	k.path = getenv("AUXCAP_TEST_VMLINUX");
	if (!k.path || !*k.path)
		skip();
	if (k.code)
		return;
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	fd = open(k.path, O_RDONLY);
	assert_true(fd >= 0);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_int_equal(elf_getphdrnum(e, &nph), 0);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			k.vaddr = ph.p_vaddr;
			k.offset = ph.p_offset;
			k.size = ph.p_filesz;
			break;
		}
	}
	assert_true(k.size > 0);
	k.code = malloc(k.size);
	assert_non_null(k.code);
	assert_int_equal(pread(fd, k.code, k.size, (off_t)k.offset), (ssize_t)k.size);
	k.kentry = sym(e, "kentry");
	k.kentry_call = sym(e, "kentry_call");
	k.kentry_back = sym(e, "kentry_back");
	k.kentry_jz = sym(e, "kentry_jz");
	k.kentry_skip = sym(e, "kentry_skip");
	k.kentry_jmp = sym(e, "kentry_jmp");
	k.khelper = sym(e, "khelper");
	k.khelper_jne = sym(e, "khelper_jne");
	k.khelper_ret = sym(e, "khelper_ret");
	k.ktail = sym(e, "ktail");
	k.ktail_ret = sym(e, "ktail_ret");
	read_build_id(e);
	assert_true(k.id_size >= 2);
	elf_end(e);
	close(fd);
}

/* The flow of the file's comment, at the moved addresses. */
static size_t gen_trace(uint8_t *buf, size_t size)
{
	struct pts x;

	pts_begin(&x, buf, size);
	pts_psb(&x, T0, 0);
	pts_put_ip(&x, ppt_tip_pge, pt_ipc_sext_48, k.kentry + SHIFT);
	/* jne taken, khelper's ret (a compressed return), jz taken */
	x.p.payload.tnt.bit_size = 3;
	x.p.payload.tnt.payload = 0x7;
	pts_put(&x, ppt_tnt_8);
	pts_put_tsc(&x, T0 + 1000);
	pts_put_ip(&x, ppt_tip_pgd, pt_ipc_suppressed, 0);
	return pts_end(&x);
}

/* A capture of the trace at @path, its kernel's text at the moved address; with @id, the
 * kernel's build-id listed as record lists it; with @user_only, its AUX event excludes the
 * kernel (intel_pt//u). */
static void write_capture_id(const char *path, const uint8_t *id, size_t id_size,
			     bool user_only)
{
	static uint8_t trace[1024];
	struct auxcap_perf_time_conv tc = { 0 };
	uint64_t info[17] = { 0 };
	size_t len = gen_trace(trace, sizeof(trace));
	struct cb *b;

	b = cb_open_ex(path, user_only ? "intel_pt//u" : "intel_pt//k", 0x7000, user_only);
	assert_non_null(b);
	tc.time_mult = 1;
	tc.cap_user_time_zero = true;
	cb_time_conv(b, &tc);
	cb_auxtrace_info(b, AUXCAP_AUXTRACE_INTEL_PT, info, 17);
	cb_mmap_kernel(b, k.vaddr + SHIFT, k.size, T0 - 3000);
	cb_comm(b, PID, PID, "task", true, T0 - 1000, 0);
	cb_itrace_start(b, PID, PID, T0 - 800, 0);
	cb_round(b);
	cb_sample(b, 1, k.khelper_ret + SHIFT, PID, PID, T0 + 500, 0, 100000);
	cb_aux(b, 0, len, 0, PID, PID, T0 + 5000, 0);
	cb_auxtrace(b, trace, len, 0, 0, (uint32_t)-1, 0);
	cb_round(b);
	if (id)
		cb_build_id(b, PERF_RECORD_MISC_KERNEL, id, id_size, "[kernel.kallsyms]");
	assert_int_equal(cb_close(b), 0);
}

static void write_capture(const char *path)
{
	write_capture_id(path, NULL, 0, false);
}

struct seen {
	uint64_t insns[64];
	size_t nr_insns;
	uint64_t from[16], to[16];
	size_t nr_branches;
	size_t samples, aligned, gaps;
	uint64_t stack[4];
	size_t nr_stack;
};

static int open_capture(const char *path, const char *vmlinux, struct auxcap_decode **d)
{
	struct auxcap_decode_opts o = { .sz = sizeof(o) };
	static char err[512];

	err[0] = '\0';
	o.per_insn = true;
	o.vmlinux = vmlinux;
	o.errbuf = err;
	o.errlen = sizeof(err);
	return auxcap_decode_open(path, &o, d);
}

static void decode(const char *path, const char *vmlinux, struct seen *s)
{
	const struct auxcap_decode_event *ev;
	struct auxcap_decode *d;
	int r;

	memset(s, 0, sizeof(*s));
	assert_int_equal(open_capture(path, vmlinux, &d), 0);
	while ((r = auxcap_decode_next(d, &ev)) == 1) {
		const struct auxcap_trace_event *t = ev->trace;

		if (ev->kind == AUXCAP_DECODE_SAMPLE && ev->ctx) {
			s->samples++;
			s->aligned += ev->ctx->aligned;
			s->nr_stack = ev->ctx->nr_stack < 4 ? ev->ctx->nr_stack : 4;
			for (size_t i = 0; i < s->nr_stack; i++)
				s->stack[i] = ev->ctx->stack[i].func;
		}
		if (ev->kind != AUXCAP_DECODE_TRACE)
			continue;
		if (t->kind == AUXCAP_TRACE_GAP)
			s->gaps++;
		if (t->kind == AUXCAP_TRACE_INSN && s->nr_insns < 64)
			s->insns[s->nr_insns++] = t->ip;
		if (t->kind == AUXCAP_TRACE_BRANCH && s->nr_branches < 16) {
			s->from[s->nr_branches] = t->ip;
			s->to[s->nr_branches++] = t->to;
		}
	}
	assert_int_equal(r, 0);
	auxcap_decode_close(d);
}

/* Every instruction and branch of the flow at the moved addresses; the sample in it. */
static void check_flow(const struct seen *s)
{
	const uint64_t insns[] = {
		k.kentry, k.kentry + 1, k.kentry_call, k.khelper, k.khelper + 2, k.khelper_jne,
		k.khelper_ret, k.kentry_back, k.kentry_jz, k.kentry_skip, k.kentry_jmp, k.ktail,
		k.ktail_ret,
	};
	const uint64_t from[] = { k.kentry_call, k.khelper_jne, k.khelper_ret, k.kentry_jz,
				  k.kentry_jmp };
	const uint64_t to[] = { k.khelper, k.khelper_ret, k.kentry_back, k.kentry_skip, k.ktail };
	size_t n = sizeof(insns) / sizeof(insns[0]);

	assert_int_equal(s->gaps, 0);
	assert_int_equal(s->nr_insns, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(s->insns[i], insns[i] + SHIFT);
	assert_int_equal(s->nr_branches, 5);
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(s->from[i], from[i] + SHIFT);
		assert_int_equal(s->to[i], to[i] + SHIFT);
	}
	assert_int_equal(s->samples, 1);
	assert_int_equal(s->aligned, 1);
	assert_int_equal(s->nr_stack, 2);
	assert_int_equal(s->stack[0], k.khelper + SHIFT);
	assert_int_equal(s->stack[1], k.kentry + SHIFT);
}

/* The name of the moved @link_addr: @name+@off in [kernel.kallsyms]. */
static void check_name(struct auxcap_decode *d, uint64_t link_addr, const char *name,
		       uint64_t off)
{
	const char *got = NULL, *dso = NULL;
	uint64_t got_off = ~0ull;

	assert_int_equal(auxcap_decode_symbolize(d, PID, link_addr + SHIFT, &got, &got_off, &dso),
			 1);
	assert_string_equal(got, name);
	assert_int_equal(got_off, off);
	assert_string_equal(dso, "[kernel.kallsyms]");
}

/* Run the shell command @cmd, its output (both streams) in @out; its exit status. */
static int run(const char *cmd, char *out, size_t size)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	int st;

	assert_non_null(p);
	while (n + 1 < size && !feof(p))
		n += fread(out + n, 1, size - 1 - n, p);
	out[n] = '\0';
	while (fgetc(p) != EOF)
		;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

static void test_vmlinux(void **state)
{
	char path[300];
	struct auxcap_decode *d;
	struct seen s;
	const char *file = NULL;
	unsigned int line_call = 0, line_ret = 0;

	(void)state;
	load_vmlinux();
	snprintf(path, sizeof(path), "%s/vmlinux.data", g_dir);
	write_capture(path);
	decode(path, k.path, &s);
	check_flow(&s);
	/* named by the vmlinux's symbols, with its lines */
	assert_int_equal(open_capture(path, k.path, &d), 0);
	check_name(d, k.kentry_call, "kentry", k.kentry_call - k.kentry);
	check_name(d, k.khelper_ret, "khelper", k.khelper_ret - k.khelper);
	check_name(d, k.ktail, "ktail", 0);
	assert_int_equal(auxcap_decode_srcline(d, PID, k.kentry_call + SHIFT, &file, &line_call),
			 1);
	assert_non_null(strstr(file, "kernel_image.S"));
	assert_int_equal(auxcap_decode_srcline(d, PID, k.khelper_ret + SHIFT, &file, &line_ret), 1);
	assert_true(line_call > 0 && line_ret > line_call);
	auxcap_decode_close(d);
	/* a vmlinux that is not ELF: an error naming it */
	assert_int_equal(open_capture(path, "/dev/null", &d) < 0, 1);
}

/*
 * A fake /proc of a kernel whose text starts @pad bytes before the code at @shift, with a
 * kcore of it: @pad 0 is the capture's kernel; else another boot's, whose copy still holds
 * the same bytes at the capture's addresses (only its text's start tells them apart).  With
 * @text_at_code, kallsyms puts _text at the code whatever @pad (perf's kcore_dir: its copy
 * starts before the text).
 */
static void fake_proc(const char *proc, uint64_t shift, size_t pad, bool text_at_code)
{
	uint8_t *bytes = calloc(1, pad + k.size);
	const struct test_kseg seg = { k.vaddr + shift - pad, bytes, pad + k.size };
	char path[400];
	FILE *f;

	assert_non_null(bytes);
	memcpy(bytes + pad, k.code, k.size);
	(void)mkdir(proc, 0755);
	snprintf(path, sizeof(path), "%s/kcore", proc);
	assert_int_equal(test_write_kcore(path, &seg, 1), 0);
	free(bytes);
	snprintf(path, sizeof(path), "%s/kallsyms", proc);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"%016" PRIx64 " T _text\n%016" PRIx64 " T kentry\n%016" PRIx64 " T khelper\n"
		"%016" PRIx64 " T ktail\n%016" PRIx64 " T _etext\n",
		k.vaddr + shift - (text_at_code ? 0 : pad), k.kentry + shift, k.khelper + shift,
		k.ktail + shift,
		k.vaddr + k.size + shift);
	assert_int_equal(fclose(f), 0);
}

/* record --kcore's and archive's copy: the capture's FILE.archive/kcore and kallsyms. */
static void archive_kernel(const char *capture, const char *proc);

/* g_dir/@name, a capture with the copy of the kernel fake_proc(g_dir/@proc, SHIFT, @pad) makes
 * in its archive; its path in @path. */
static void archived_capture(char *path, size_t size, const char *name, const char *proc,
			     size_t pad)
{
	char dir[400];

	snprintf(path, size, "%s/%s", g_dir, name);
	snprintf(dir, sizeof(dir), "%s/%s", g_dir, proc);
	write_capture(path);
	fake_proc(dir, SHIFT, pad, false);
	archive_kernel(path, dir);
}

static void archive_kernel(const char *capture, const char *proc)
{
	char dir[400], dst[450], src[450], cmd[1000];

	snprintf(dir, sizeof(dir), "%s.archive", capture);
	(void)mkdir(dir, 0755);
	snprintf(dst, sizeof(dst), "%s/kcore", dir);
	assert_true(auxcap_proc_kcore_copy(proc, dst, NULL) >= 0);
	snprintf(src, sizeof(src), "%s/kallsyms", proc);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/kallsyms'", src, dir);
	assert_int_equal(system(cmd), 0);
}

static void test_kcore_copy(void **state)
{
	char path[300], proc[400];
	struct auxcap_decode *d;
	struct seen s;
	const char *file;
	unsigned int line;

	(void)state;
	load_vmlinux();
	archived_capture(path, sizeof(path), "kcore.data", "proc", 0);
	decode(path, NULL, &s);
	check_flow(&s);
	/* named by the kallsyms kept with it; a copy has no lines */
	assert_int_equal(open_capture(path, NULL, &d), 0);
	check_name(d, k.kentry_call, "kentry", k.kentry_call - k.kentry);
	check_name(d, k.khelper_ret, "khelper", k.khelper_ret - k.khelper);
	assert_int_equal(auxcap_decode_srcline(d, PID, k.kentry_call + SHIFT, &file, &line), 0);
	auxcap_decode_close(d);
	/* annotate: the function as kallsyms bounds it (to the next symbol), no lines */
	if (getenv("AUXCAP")) {
		static char out[65536];
		char cmd[1000];

		snprintf(cmd, sizeof(cmd), "'%s' annotate '%s' khelper 2>&1", getenv("AUXCAP"),
			 path);
		assert_int_equal(run(cmd, out, sizeof(out)), 0);
		assert_non_null(strstr(out, "## khelper  [kernel.kallsyms]"));
		assert_non_null(strstr(out, "4 instructions run here (30.77% of 13)"));
		assert_null(strstr(out, "kernel_image.S"));
	}
	/* $AUXCAP_KCORE names the copy; one that is not there is an error */
	snprintf(proc, sizeof(proc), "%s.archive/kcore", path);
	assert_int_equal(setenv("AUXCAP_KCORE", proc, 1), 0);
	decode(path, NULL, &s);
	check_flow(&s);
	assert_int_equal(setenv("AUXCAP_KCORE", "/nonexistent/kcore", 1), 0);
	assert_true(open_capture(path, NULL, &d) < 0);
	assert_int_equal(unsetenv("AUXCAP_KCORE"), 0);
}

/* Without the code, or with another boot's copy (its text starts elsewhere): no kernel
 * code. */
static void test_no_code(void **state)
{
	char path[300];
	struct seen s;

	(void)state;
	load_vmlinux();
	snprintf(path, sizeof(path), "%s/none.data", g_dir);
	write_capture(path);
	decode(path, NULL, &s);
	assert_int_equal(s.nr_insns, 0);
	assert_int_equal(s.aligned, 0);
	archived_capture(path, sizeof(path), "other.data", "proc-other", 0x1000);
	decode(path, NULL, &s);
	assert_int_equal(s.nr_insns, 0);
}

/* The commands: decode --vmlinux, the warning without the code, record --kcore. */
static void test_cli(void **state)
{
	static char out[65536];
	const char *auxcap = getenv("AUXCAP");
	char path[300], cmd[1200], ktext[32] = "";
	FILE *f;
	int st;

	(void)state;
	load_vmlinux();
	if (!auxcap)
		skip();
	snprintf(path, sizeof(path), "%s/cli.data", g_dir);
	write_capture(path);
	snprintf(cmd, sizeof(cmd), "'%s' decode --vmlinux '%s' --itrace=i --srcline '%s' 2>&1",
		 auxcap, k.path, path);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	/* each instruction named, disassembled and with its line; the sample's stack */
	assert_int_equal(count(out, "  kernel_image.S:"), 13);
	assert_non_null(strstr(out, "kentry+0x4 "));
	assert_non_null(strstr(out, "ktail+0x1 "));
	assert_non_null(strstr(out, "stack: khelper+0x9 <- kentry+0x4"));
	assert_null(strstr(out, "gap"));
	snprintf(cmd, sizeof(cmd), "'%s' report -k '%s' '%s' 2>&1", auxcap, k.path, path);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "kentry  [kernel.kallsyms]"));
	/* annotate: the kernel function instruction by instruction, with its source */
	snprintf(cmd, sizeof(cmd), "'%s' annotate -k '%s' '%s' khelper 2>&1", auxcap, k.path,
		 path);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "## khelper  [kernel.kallsyms]"));
	assert_non_null(strstr(out, "4 instructions run here (30.77% of 13)"));
	assert_non_null(strstr(out, "1 samples here of 1"));
	assert_non_null(strstr(out, "kernel_image.S:"));
	/* without the kernel's code: said, with what to do */
	snprintf(cmd, sizeof(cmd), "'%s' decode '%s' 2>&1", auxcap, path);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "record with --kcore"));
	snprintf(cmd, sizeof(cmd), "'%s' decode --vmlinux /nonexistent/vmlinux '%s' 2>&1", auxcap,
		 path);
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "/nonexistent/vmlinux"));
	/* record --kcore: refused for a pipe; else the running kernel's copy, or why not */
	snprintf(cmd, sizeof(cmd), "'%s' record --kcore -o - -- true 2>&1 >/dev/null", auxcap);
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "give -o FILE"));
	snprintf(path, sizeof(path), "%s/rec.data", g_dir);
	snprintf(cmd, sizeof(cmd), "'%s' record -q --kcore -o '%s' -- true 2>&1", auxcap, path);
	st = run(cmd, out, sizeof(out));
	if (access("/proc/kcore", F_OK) < 0) {
		assert_int_equal(st, 1);
		assert_non_null(strstr(out, "CONFIG_PROC_KCORE"));
		assert_int_not_equal(access(path, F_OK), 0); /* nothing recorded */
		return;
	}
	if (access("/proc/kcore", R_OK) < 0) {
		assert_int_equal(st, 1);
		assert_non_null(strstr(out, "root"));
		return;
	}
	/* the copy's text starts at this kernel's _text */
	assert_int_equal(st, 0);
	f = popen("awk '$3 == \"_text\" { print $1; exit }' /proc/kallsyms", "r");
	assert_non_null(f);
	assert_non_null(fgets(ktext, sizeof(ktext), f));
	pclose(f);
	snprintf(cmd, sizeof(cmd), "readelf -lW '%s.archive/kcore' | awk '$1 == \"LOAD\" { print $3; exit }'",
		 path);
	run(cmd, out, sizeof(out));
	assert_int_equal(strtoull(out, NULL, 16), strtoull(ktext, NULL, 16));
}

/*
 * The vmlinux of the capture's kernel found by its build-id where debug packages install it
 * (DIR/.build-id/xx/rest.debug under $AUXCAP_DEBUG_DIRS), as --vmlinux uses it: the flow,
 * names and lines.  A file there with another build-id is not taken, nor looked for when the
 * AUX event excludes the kernel.
 */
static void test_vmlinux_by_build_id(void **state)
{
	char path[300], dbg[300], dst[400], cmd[1000], hex[41];
	struct auxcap_decode *d;
	const char *file = NULL;
	unsigned int line = 0;
	struct seen s;

	(void)state;
	load_vmlinux();
	for (size_t i = 0; i < k.id_size; i++)
		snprintf(hex + 2 * i, 3, "%02x", k.id[i]);
	snprintf(dbg, sizeof(dbg), "%s/debug", g_dir);
	snprintf(dst, sizeof(dst), "%s/.build-id/%.2s", dbg, hex);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp '%s' '%s/%s.debug'", dst, k.path, dst,
		 hex + 2);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(setenv("AUXCAP_DEBUG_DIRS", dbg, 1), 0);
	snprintf(path, sizeof(path), "%s/bid.data", g_dir);
	write_capture_id(path, k.id, k.id_size, false);
	decode(path, NULL, &s);
	check_flow(&s);
	assert_int_equal(open_capture(path, NULL, &d), 0);
	check_name(d, k.khelper_ret, "khelper", k.khelper_ret - k.khelper);
	assert_int_equal(auxcap_decode_srcline(d, PID, k.khelper_ret + SHIFT, &file, &line), 1);
	assert_non_null(strstr(file, "kernel_image.S"));
	auxcap_decode_close(d);
	/* another kernel's build-id: the file is not this kernel's */
	k.id[0] ^= 0xff;
	write_capture_id(path, k.id, k.id_size, false);
	k.id[0] ^= 0xff;
	decode(path, NULL, &s);
	assert_int_equal(s.nr_insns, 0);
	/* a trace of user code only: no vmlinux looked for (nor opened) */
	write_capture_id(path, k.id, k.id_size, true);
	decode(path, NULL, &s);
	assert_int_equal(s.nr_insns, 0);
	assert_int_equal(unsetenv("AUXCAP_DEBUG_DIRS"), 0);
}

/*
 * perf record --kcore's directory: the capture as its file "data", the copy in kcore_dir/
 * (starting a page before the text) with that boot's kallsyms.  Another boot's kallsyms:
 * nothing decoded; perf record --threads' streams beside "data": refused.
 */
static void test_perf_dir(void **state)
{
	char dir[300], path[400], kdir[400];
	struct auxcap_decode *d;
	struct seen s;
	FILE *f;

	(void)state;
	load_vmlinux();
	snprintf(dir, sizeof(dir), "%s/perf.data", g_dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/data", dir);
	write_capture(path);
	snprintf(kdir, sizeof(kdir), "%s/kcore_dir", dir);
	fake_proc(kdir, SHIFT, 0x1000, true);
	decode(dir, NULL, &s);
	check_flow(&s);
	assert_int_equal(open_capture(dir, NULL, &d), 0);
	check_name(d, k.khelper_ret, "khelper", k.khelper_ret - k.khelper);
	auxcap_decode_close(d);
	fake_proc(kdir, SHIFT, 0x1000, false); /* kallsyms: _text a page lower */
	decode(dir, NULL, &s);
	assert_int_equal(s.nr_insns, 0);
	snprintf(path, sizeof(path), "%s/data.0", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(open_capture(dir, NULL, &d), -EOPNOTSUPP);
	/* a directory that is not perf's */
	assert_int_equal(open_capture(kdir, NULL, &d), -EISDIR);
}

static int setup(void **state)
{
	(void)state;
	return test_tmpdir(g_dir, sizeof(g_dir), "decode-kernel");
}

static int teardown(void **state)
{
	(void)state;
	free(k.code);
	return test_rmtree(g_dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vmlinux),
		cmocka_unit_test(test_kcore_copy),
		cmocka_unit_test(test_no_code),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_perf_dir),
		cmocka_unit_test(test_vmlinux_by_build_id),
	};

	return cmocka_run_group_tests_name("decode/kernel", tests, setup, teardown);
}
