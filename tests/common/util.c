/* SPDX-License-Identifier: BSD-3-Clause */
#include <elf.h>
#include <errno.h>
#include <ftw.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auxcap/sys.h"
#include "event.h"
#include "util.h"

void test_skip(const char *fmt, ...)
{
	va_list ap;

	printf("SKIP: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(TEST_SKIP);
}

static int has_events_dir(const char *root)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/events", root);
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *test_tracefs(void)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

	for (size_t i = 0; i < 2; i++)
		if (has_events_dir(roots[i]))
			return roots[i];
	if (mount("nodev", roots[0], "tracefs", 0, NULL) == 0 && has_events_dir(roots[0]))
		return roots[0];
	return NULL;
}

int64_t test_tracepoint_id(const char *sys, const char *name)
{
	const char *root = test_tracefs();
	char p[512];
	FILE *f;
	long long id;

	if (!root)
		return -ENOENT;
	snprintf(p, sizeof(p), "%s/events/%s/%s/id", root, sys, name);
	f = fopen(p, "r");
	if (!f)
		return -errno;
	if (fscanf(f, "%lld", &id) != 1)
		id = -EBADMSG;
	fclose(f);
	return id;
}

void test_require_perf(int need_tracefs)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.disabled = 1;
	fd = auxcap_event_open(&auxcap_sys_linux, &attr, 0, -1, -1, 0);
	if (fd < 0)
		test_skip("perf_event_open is not permitted here (%s); run as root or lower "
			  "/proc/sys/kernel/perf_event_paranoid",
			  strerror(-fd));
	close(fd);
	if (need_tracefs && !test_tracefs())
		test_skip("tracefs is not mounted and cannot be mounted here (needs root)");
}

void fake_ring_init(struct fake_ring *fr, size_t data_size)
{
	struct perf_event_mmap_page *pc;

	memset(fr, 0, sizeof(*fr));
	fr->data_size = data_size;
	fr->map_len = 4096 + data_size;
	fr->base = aligned_alloc(4096, fr->map_len);
	memset(fr->base, 0, fr->map_len);
	pc = fr->base;
	pc->data_offset = 4096;
	pc->data_size = data_size;
}

void fake_ring_fini(struct fake_ring *fr)
{
	free(fr->base);
	fr->base = NULL;
}

void fake_ring_put(struct fake_ring *fr, const void *rec, size_t len)
{
	unsigned char *data = (unsigned char *)fr->base + 4096;

	for (size_t i = 0; i < len; i++)
		data[(fr->head + i) & (fr->data_size - 1)] = ((const unsigned char *)rec)[i];
	fr->head += len;
}

void fake_ring_publish(struct fake_ring *fr)
{
	struct perf_event_mmap_page *pc = fr->base;

	__atomic_store_n(&pc->data_head, fr->head, __ATOMIC_RELEASE);
}

void fake_record(void *buf, uint32_t type, uint16_t size, uint64_t seq)
{
	struct perf_event_header h = { .type = type, .misc = 0, .size = size };

	memcpy(buf, &h, sizeof(h));
	for (size_t i = 8; i + 8 <= size; i += 8) {
		uint64_t v = seq + (i - 8) / 8;

		memcpy((unsigned char *)buf + i, &v, 8);
	}
}

pid_t test_spawn(char *const argv[], int *ret_go_fd)
{
	int p[2];
	pid_t pid;

	if (pipe(p) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(126);
		close(p[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[0]);
	*ret_go_fd = p[1];
	return pid;
}

void test_spawn_go(int go_fd)
{
	char c = 'g';

	if (write(go_fd, &c, 1) != 1)
		abort();
	close(go_fd);
}

int test_wait(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

int test_tmpdir(char *dir, size_t n, const char *tag)
{
	int k = snprintf(dir, n, "/tmp/auxcap-%s-XXXXXX", tag);

	return k > 0 && (size_t)k < n && mkdtemp(dir) ? 0 : -1;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int test_rmtree(const char *dir)
{
	return nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int test_write_kcore(const char *path, const struct test_kseg *segs, size_t n)
{
	Elf64_Ehdr eh = { 0 };
	uint64_t off = sizeof(eh) + n * sizeof(Elf64_Phdr);
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = (Elf64_Half)n;
	ok = fwrite(&eh, sizeof(eh), 1, f) == 1;
	for (size_t i = 0; ok && i < n; i++) {
		Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X,
				  .p_offset = off, .p_vaddr = segs[i].vaddr,
				  .p_filesz = segs[i].size, .p_memsz = segs[i].size,
				  .p_align = 4096 };

		ok = fwrite(&ph, sizeof(ph), 1, f) == 1;
		off += segs[i].size;
	}
	for (size_t i = 0; ok && i < n; i++)
		ok = fwrite(segs[i].bytes, 1, segs[i].size, f) == segs[i].size;
	if (fclose(f) != 0)
		ok = 0;
	return ok ? 0 : -1;
}
