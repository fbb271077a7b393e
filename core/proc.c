/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * procfs for attached captures (see auxcap/proc.h).  Divisions: maps lines, lookups, record
 * synthesis.
 */
#include "auxcap/proc.h"

#include <elf.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>

#include "auxcap/file.h"

#define PROC_RECORD_MAX 65535 /* header.size is a u16 */

static const char *root_of(const char *proc)
{
	return proc ? proc : "/proc";
}

/* --- maps lines ----------------------------------------------------------------------------- */

/* A hexadecimal number ending at @stop; advances *@p past @stop. */
static int hex_until(const char **p, char stop, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;
	size_t n = 0;

	for (; *s && *s != stop; s++, n++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -EBADMSG;
		if (n >= 16)
			return -EBADMSG;
		v = v << 4 | (uint64_t)d;
	}
	if (!n || *s != stop)
		return -EBADMSG;
	*ret = v;
	*p = s + 1;
	return 0;
}

int auxcap_proc_map_parse(const char *line, struct auxcap_proc_map *ret)
{
	struct auxcap_proc_map m;
	const char *p = line;
	uint64_t maj, min;
	size_t n;

	if (!line || !ret)
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	if (hex_until(&p, '-', &m.start) < 0 || hex_until(&p, ' ', &m.end) < 0 || m.end <= m.start)
		return -EBADMSG;
	/* perms: four characters, then a blank */
	if (strnlen(p, 5) < 5 || p[4] != ' ' || !strchr("r-", p[0]) || !strchr("w-", p[1]) ||
	    !strchr("x-", p[2]) || !strchr("ps", p[3]))
		return -EBADMSG;
	m.prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		 (p[2] == 'x' ? PROT_EXEC : 0);
	m.flags = p[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	p += 5;
	if (hex_until(&p, ' ', &m.pgoff) < 0 || hex_until(&p, ':', &maj) < 0 ||
	    hex_until(&p, ' ', &min) < 0 || maj > UINT32_MAX || min > UINT32_MAX)
		return -EBADMSG;
	m.maj = (uint32_t)maj;
	m.min = (uint32_t)min;
	/* The inode, decimal; it ends the line when there is no path. */
	n = strspn(p, "0123456789");
	if (!n || n > 20 || (p[n] != ' ' && p[n] != '\n' && p[n] != '\0'))
		return -EBADMSG;
	m.ino = strtoull(p, NULL, 10);
	p += n;
	p += strspn(p, " \t");
	n = strcspn(p, "\n");
	if (n >= sizeof(m.path))
		return -EBADMSG;
	memcpy(m.path, p, n);
	m.path[n] = '\0';
	*ret = m;
	return 0;
}

/* --- lookups ------------------------------------------------------------------------------- */

static FILE *open_task_file(const char *proc, pid_t pid, const char *name, int *ret_err)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/%s", root_of(proc), (int)pid, name);
	f = fopen(path, "re");
	if (!f)
		*ret_err = errno == ENOENT ? -ESRCH : -errno;
	return f;
}

int auxcap_proc_status(const char *proc, pid_t tid, const char *key, long *ret)
{
	size_t klen = key ? strlen(key) : 0;
	char line[256];
	int err = 0, r = -EBADMSG;
	FILE *f;

	if (!key || !ret || tid <= 0)
		return -EINVAL;
	f = open_task_file(proc, tid, "status", &err);
	if (!f)
		return err;
	while (r < 0 && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':' &&
		    sscanf(line + klen + 1, "%ld", ret) == 1)
			r = 0;
	fclose(f);
	return r;
}

int auxcap_proc_tgid(const char *proc, pid_t tid, pid_t *ret_tgid)
{
	long v = -1;
	int r;

	if (!ret_tgid || tid <= 0)
		return -EINVAL;
	r = auxcap_proc_status(proc, tid, "Tgid", &v);
	if (r < 0)
		return r;
	if (v <= 0)
		return -EBADMSG;
	*ret_tgid = (pid_t)v;
	return 0;
}

int auxcap_proc_find_addr(const char *proc, pid_t pid, const char *path, uint64_t file_offset,
			  uint64_t *ret_addr)
{
	struct auxcap_proc_map *m;
	char line[4096 + 256], real[PATH_MAX];
	struct stat st;
	bool have_st, have_real, found = false, found_exec = false;
	uint64_t addr = 0;
	int err = 0;
	FILE *f;

	if (!path || !ret_addr || pid <= 0)
		return -EINVAL;
	have_st = stat(path, &st) == 0;
	have_real = realpath(path, real) != NULL;
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	f = open_task_file(proc, pid, "maps", &err);
	if (!f) {
		free(m);
		return err;
	}
	while (fgets(line, sizeof(line), f)) {
		bool same;

		if (auxcap_proc_map_parse(line, m) < 0 || !m->ino)
			continue;
		same = (have_st && m->ino == st.st_ino && m->maj == major(st.st_dev) &&
			m->min == minor(st.st_dev)) ||
		       (have_real && !strcmp(m->path, real)) || !strcmp(m->path, path);
		if (!same || file_offset < m->pgoff || file_offset - m->pgoff >= m->end - m->start)
			continue;
		/* Code is where a probe goes: an executable mapping wins over a read-only one. */
		if (!found || (!found_exec && (m->prot & PROT_EXEC))) {
			addr = m->start + (file_offset - m->pgoff);
			found = true;
			found_exec = (m->prot & PROT_EXEC) != 0;
		}
	}
	fclose(f);
	free(m);
	if (!found)
		return -ENXIO;
	*ret_addr = addr;
	return 0;
}

/* --- record synthesis ------------------------------------------------------------------------ */

struct rec_buf {
	unsigned char b[PROC_RECORD_MAX + 1];
	size_t len;
};

static void put(struct rec_buf *r, const void *p, size_t n)
{
	memcpy(r->b + r->len, p, n);
	r->len += n;
}

/* Header, @fixed bytes, a NUL-terminated @name padded to 8, the trailer; then hand it out. */
static int emit(uint32_t type, uint16_t misc, const void *fixed, size_t fixed_len, const char *name,
		const struct auxcap_sample_layout *l, const struct auxcap_sample_id *sid,
		struct rec_buf *r, auxcap_proc_record_fn fn, void *ctx)
{
	size_t name_len = strlen(name) + 1, padded = (name_len + 7) & ~(size_t)7;
	size_t total =
		sizeof(struct perf_event_header) + fixed_len + padded + auxcap_sample_id_size(l);
	struct perf_event_header h;

	if (total > PROC_RECORD_MAX)
		return -ENAMETOOLONG;
	h.type = type;
	h.misc = misc;
	h.size = (uint16_t)total;
	r->len = 0;
	put(r, &h, sizeof(h));
	put(r, fixed, fixed_len);
	memset(r->b + r->len, 0, padded);
	memcpy(r->b + r->len, name, name_len);
	r->len += padded;
	r->len += auxcap_sample_id_encode(l, sid, r->b + r->len);
	return fn(ctx, r->b, r->len);
}

static int synth_comm(const char *proc, pid_t tgid, pid_t tid, const struct auxcap_sample_layout *l,
		      const struct auxcap_sample_id *sid, struct rec_buf *r,
		      auxcap_proc_record_fn fn, void *ctx)
{
	char path[PATH_MAX], comm[64];
	uint32_t ids[2] = { (uint32_t)tgid, (uint32_t)tid };
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/task/%d/comm", root_of(proc), (int)tgid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	return emit(PERF_RECORD_COMM, 0, ids, sizeof(ids), comm, l, sid, r, fn, ctx);
}

/* The MMAP2 body after the header, before the file name. */
struct mmap2_body {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
};

static int synth_mmaps(const char *proc, pid_t tgid, const struct auxcap_sample_layout *l,
		       const struct auxcap_sample_id *sid, struct rec_buf *r,
		       auxcap_proc_record_fn fn, void *ctx)
{
	struct auxcap_proc_map *m;
	char line[4096 + 256];
	int err = 0, n = 0, rc = 0;
	FILE *f;

	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	f = open_task_file(proc, tgid, "maps", &err);
	if (!f) {
		free(m);
		return err;
	}
	while (rc >= 0 && fgets(line, sizeof(line), f)) {
		struct mmap2_body b;

		if (auxcap_proc_map_parse(line, m) < 0 || !(m->prot & PROT_EXEC))
			continue;
		memset(&b, 0, sizeof(b));
		b.pid = b.tid = (uint32_t)tgid;
		b.addr = m->start;
		b.len = m->end - m->start;
		b.pgoff = m->pgoff;
		b.maj = m->maj;
		b.min = m->min;
		b.ino = m->ino;
		b.prot = m->prot;
		b.flags = m->flags;
		rc = emit(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, &b, sizeof(b),
			  m->path[0] ? m->path : "//anon", l, sid, r, fn, ctx);
		n += rc >= 0;
	}
	if (rc >= 0 && ferror(f))
		rc = -EIO;
	fclose(f);
	free(m);
	return rc < 0 ? rc : n;
}

int auxcap_proc_synthesize(const char *proc, pid_t tgid, pid_t tid, bool mmaps,
			   const struct auxcap_sample_layout *layout,
			   const struct auxcap_sample_id *sid, auxcap_proc_record_fn fn, void *ctx)
{
	struct auxcap_sample_id id;
	struct rec_buf *r;
	int rc, n = 0;

	if (tgid <= 0 || tid <= 0 || !layout || !sid || !fn)
		return -EINVAL;
	r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	id = *sid;
	id.pid = (uint32_t)tgid;
	id.tid = (uint32_t)tid;
	rc = synth_comm(proc, tgid, tid, layout, &id, r, fn, ctx);
	if (rc >= 0) {
		n = 1;
		if (mmaps) {
			id.tid = (uint32_t)tgid;
			rc = synth_mmaps(proc, tgid, layout, &id, r, fn, ctx);
			n += rc > 0 ? rc : 0;
		}
	}
	free(r);
	return rc < 0 ? rc : n;
}

/* A task id from a /proc directory entry's name, or 0. */
static pid_t task_id(const struct dirent *de)
{
	char *end;
	long v = strtol(de->d_name, &end, 10);

	return de->d_name[0] >= '1' && de->d_name[0] <= '9' && !*end && v > 0 && v <= INT_MAX
		       ? (pid_t)v
		       : 0;
}

int auxcap_proc_synthesize_all(const char *proc, const struct auxcap_sample_layout *layout,
			       const struct auxcap_sample_id *sid, auxcap_proc_record_fn fn,
			       void *ctx)
{
	const char *root = root_of(proc);
	struct dirent *de;
	int n = 0, rc = 0;
	DIR *d;

	if (!layout || !sid || !fn)
		return -EINVAL;
	d = opendir(root);
	if (!d)
		return -errno;
	while (rc >= 0 && (de = readdir(d))) {
		pid_t tgid = task_id(de);
		char path[PATH_MAX];
		struct dirent *te;
		bool first = true;
		DIR *td;

		if (!tgid)
			continue;
		snprintf(path, sizeof(path), "%s/%d/task", root, (int)tgid);
		td = opendir(path);
		if (!td)
			continue; /* gone since the listing */
		while (rc >= 0 && (te = readdir(td))) {
			pid_t tid = task_id(te);

			if (!tid)
				continue;
			rc = auxcap_proc_synthesize(proc, tgid, tid, first, layout, sid, fn, ctx);
			if (rc >= 0) {
				n += rc;
				first = false;
			} else if (rc == -ESRCH || rc == -ENOENT || rc == -EACCES || rc == -EPERM) {
				rc = 0; /* gone, or not ours to read: as perf, go on without it */
			}
		}
		closedir(td);
	}
	closedir(d);
	return rc < 0 ? rc : n;
}

int auxcap_proc_kallsyms(const char *path, auxcap_proc_ksym_fn fn, void *ctx)
{
	char line[512];
	int r = 0;
	FILE *f;

	if (!path || !fn)
		return -EINVAL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (r == 0 && fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256];

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3)
			r = fn(ctx, (uint64_t)addr, type, name, strchr(line, '[') != NULL);
	}
	fclose(f);
	return r;
}

struct ktext {
	uint64_t start, end;
	bool have_start, have_end;
};

static int ktext_sym(void *ctx, uint64_t addr, char type, const char *name, bool module)
{
	struct ktext *k = ctx;

	if (module || (type != 'T' && type != 't'))
		return 0;
	if (!strcmp(name, "_text")) {
		k->start = addr;
		k->have_start = true;
	} else if (!strcmp(name, "_etext")) {
		k->end = addr;
		k->have_end = true;
	}
	return k->have_start && k->have_end;
}

int auxcap_proc_kernel_text(const char *proc, uint64_t *ret_start, uint64_t *ret_end)
{
	char path[PATH_MAX];
	struct ktext k = { 0 };
	int r;

	if (!ret_start || !ret_end)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/kallsyms", root_of(proc));
	r = auxcap_proc_kallsyms(path, ktext_sym, &k);
	if (r < 0)
		return r;
	if (!k.have_start || !k.have_end)
		return -ENOENT;
	if (!k.start || k.end <= k.start)
		return -EACCES; /* kptr_restrict shows zeros */
	*ret_start = k.start;
	*ret_end = k.end;
	return 0;
}

/* Only _text: it comes at the top of kallsyms, _etext near its end (reading the whole file
 * takes the kernel about 100 ms). */
static int ktext_start_sym(void *ctx, uint64_t addr, char type, const char *name, bool module)
{
	if (module || (type != 'T' && type != 't') || strcmp(name, "_text"))
		return 0;
	*(uint64_t *)ctx = addr;
	return 1;
}

bool auxcap_proc_kernel_is(const char *osrelease, uint64_t ktext)
{
	char path[PATH_MAX];
	uint64_t start = 0;
	struct utsname u;

	if (!ktext || !osrelease || uname(&u) < 0 || strcmp(u.release, osrelease))
		return false;
	snprintf(path, sizeof(path), "%s/kallsyms", root_of(NULL));
	return auxcap_proc_kallsyms(path, ktext_start_sym, &start) == 1 && start == ktext;
}

size_t auxcap_notes_build_id(const uint8_t *notes, size_t len, const uint8_t **ret_id)
{
	/* each: namesz, descsz, type (4 bytes each), the name and the desc, each padded to 4 */
	for (size_t off = 0; len - off >= 12;) {
		uint32_t namesz, descsz, type;
		size_t name, desc;

		memcpy(&namesz, notes + off, 4);
		memcpy(&descsz, notes + off + 4, 4);
		memcpy(&type, notes + off + 8, 4);
		name = ((size_t)namesz + 3) & ~(size_t)3;
		desc = ((size_t)descsz + 3) & ~(size_t)3;
		if (name > len - off - 12 || desc > len - off - 12 - name)
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(notes + off + 12, "GNU", 4) &&
		    descsz >= 2 && descsz <= 20) {
			*ret_id = notes + off + 12 + name;
			return descsz;
		}
		off += 12 + name + desc;
	}
	return 0;
}

int auxcap_proc_kernel_build_id(const char *sys, uint8_t *id, size_t cap)
{
	const uint8_t *found;
	uint8_t buf[4096];
	char path[PATH_MAX];
	size_t n;
	FILE *f;

	if (!id)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/kernel/notes", sys ? sys : "/sys");
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	n = auxcap_notes_build_id(buf, n, &found);
	if (!n)
		return -ENOENT;
	if (n > cap)
		return -ENOSPC;
	memcpy(id, found, n);
	return (int)n;
}

/* --- kcore ---------------------------------------------------------------------------------- */

/* A stretch of kernel code to copy: [lo, hi). */
struct kspan {
	uint64_t lo, hi;
};

#define KCORE_MAX_SPANS 4096 /* the text and up to this many modules, less one */
#define KCORE_ALIGN 4096u

/* The loaded ("Live") modules' ranges from @proc's modules, after the text in @v[0]. */
static size_t module_spans(const char *proc, struct kspan *v, size_t n)
{
	char path[PATH_MAX], line[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/modules", proc);
	f = fopen(path, "re");
	if (!f)
		return n; /* no modules (a kernel without them) */
	while (n < KCORE_MAX_SPANS && fgets(line, sizeof(line), f)) {
		unsigned long long size, addr;
		char state[32];

		if (sscanf(line, "%*s %llu %*s %*s %31s %llx", &size, state, &addr) == 3 &&
		    !strcmp(state, "Live") && addr && size && addr + size > addr)
			v[n++] = (struct kspan){ addr, addr + size };
	}
	fclose(f);
	return n;
}

/* @lo..@hi inside one of @ph's PT_LOAD segments: the file offset of @lo there, else -1. */
static int64_t kcore_offset(const Elf64_Phdr *ph, size_t nph, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < nph; i++)
		if (ph[i].p_type == PT_LOAD && lo >= ph[i].p_vaddr &&
		    hi - ph[i].p_vaddr <= ph[i].p_filesz &&
		    ph[i].p_offset <= INT64_MAX - (lo - ph[i].p_vaddr))
			return (int64_t)(ph[i].p_offset + (lo - ph[i].p_vaddr));
	return -1;
}

/* @len bytes of @in at @off to @out. */
static int copy_range(int in, int64_t off, uint64_t len, int out, uint8_t *buf, size_t bufsz)
{
	while (len) {
		size_t want = len < bufsz ? (size_t)len : bufsz;
		ssize_t n = pread(in, buf, want, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* kcore shorter than its own header says */
		int r = auxcap_file_write_all(out, buf, (size_t)n);

		if (r < 0)
			return r;
		off += n;
		len -= (uint64_t)n;
	}
	return 0;
}

/* The header of kcore @fd and its program headers (*@ret_ph, malloc'd). */
static int kcore_headers(int fd, Elf64_Ehdr *eh, Elf64_Phdr **ret_ph)
{
	Elf64_Phdr *ph;
	size_t size;

	if (pread(fd, eh, sizeof(*eh), 0) != (ssize_t)sizeof(*eh))
		return errno == EACCES || errno == EPERM ? -EACCES : -EBADMSG;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || !eh->e_phnum || eh->e_phnum >= PN_XNUM)
		return -EBADMSG;
	size = (size_t)eh->e_phnum * sizeof(*ph);
	ph = malloc(size);
	if (!ph)
		return -ENOMEM;
	if (pread(fd, ph, size, (off_t)eh->e_phoff) != (ssize_t)size) {
		free(ph);
		return -EBADMSG;
	}
	*ret_ph = ph;
	return 0;
}

int auxcap_proc_kcore_copy(const char *proc, const char *dst, uint64_t *ret_bytes)
{
	struct kspan *v = NULL;
	Elf64_Phdr *kph = NULL, *out_ph = NULL;
	int64_t *src_off = NULL;
	uint8_t *buf = NULL;
	char path[PATH_MAX], *tmp = NULL;
	size_t n = 0, nout = 0;
	uint64_t pos, bytes = 0;
	Elf64_Ehdr eh, oh;
	int in = -1, out = -1, r;

	if (!dst)
		return -EINVAL;
	proc = root_of(proc);
	snprintf(path, sizeof(path), "%s/kcore", proc);
	in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return errno == EPERM ? -EACCES : -errno;
	v = malloc(KCORE_MAX_SPANS * sizeof(*v));
	buf = malloc(1u << 20);
	if (!v || !buf) {
		r = -ENOMEM;
		goto out;
	}
	r = auxcap_proc_kernel_text(proc, &v[0].lo, &v[0].hi);
	if (r < 0)
		goto out;
	n = module_spans(proc, v, 1);
	r = kcore_headers(in, &eh, &kph);
	if (r < 0)
		goto out;
	out_ph = calloc(n, sizeof(*out_ph));
	src_off = calloc(n, sizeof(*src_off));
	if (!out_ph || !src_off) {
		r = -ENOMEM;
		goto out;
	}
	pos = (sizeof(oh) + n * sizeof(*out_ph) + KCORE_ALIGN - 1) & ~(uint64_t)(KCORE_ALIGN - 1);
	for (size_t i = 0; i < n; i++) {
		int64_t off = kcore_offset(kph, eh.e_phnum, v[i].lo, v[i].hi);

		if (off < 0) {
			if (i == 0) {
				r = -EBADMSG; /* the text is not in it: not this kernel's kcore */
				goto out;
			}
			continue; /* a module kcore does not show (it went meanwhile) */
		}
		src_off[nout] = off;
		out_ph[nout] = (Elf64_Phdr){ .p_type = PT_LOAD,
					     .p_flags = PF_R | PF_X,
					     .p_offset = pos,
					     .p_vaddr = v[i].lo,
					     .p_filesz = v[i].hi - v[i].lo,
					     .p_memsz = v[i].hi - v[i].lo,
					     .p_align = KCORE_ALIGN };
		pos = (pos + out_ph[nout].p_filesz + KCORE_ALIGN - 1) & ~(uint64_t)(KCORE_ALIGN - 1);
		nout++;
	}
	memset(&oh, 0, sizeof(oh));
	memcpy(oh.e_ident, eh.e_ident, EI_NIDENT);
	oh.e_type = ET_CORE;
	oh.e_machine = eh.e_machine;
	oh.e_version = EV_CURRENT;
	oh.e_phoff = sizeof(oh);
	oh.e_ehsize = sizeof(oh);
	oh.e_phentsize = sizeof(Elf64_Phdr);
	oh.e_phnum = (Elf64_Half)nout;
	if (asprintf(&tmp, "%s.tmp.XXXXXX", dst) < 0) {
		tmp = NULL;
		r = -ENOMEM;
		goto out;
	}
	out = mkostemp(tmp, O_CLOEXEC);
	if (out < 0) {
		r = -errno;
		goto out;
	}
	r = auxcap_file_write_all(out, &oh, sizeof(oh));
	if (r == 0)
		r = auxcap_file_write_all(out, out_ph, nout * sizeof(*out_ph));
	for (size_t i = 0; r == 0 && i < nout; i++) {
		if (lseek(out, (off_t)out_ph[i].p_offset, SEEK_SET) < 0)
			r = -errno;
		else
			r = copy_range(in, src_off[i], out_ph[i].p_filesz, out, buf, 1u << 20);
		bytes += out_ph[i].p_filesz;
	}
	if (close(out) < 0 && r == 0)
		r = -errno;
	out = -1;
	if (r == 0 && rename(tmp, dst) < 0)
		r = -errno;
	if (r < 0)
		(void)unlink(tmp);
	else if (ret_bytes)
		*ret_bytes += bytes;
	if (r == 0)
		r = (int)nout - 1;
out:
	close(in);
	free(tmp);
	free(src_off);
	free(out_ph);
	free(kph);
	free(buf);
	free(v);
	return r;
}

int auxcap_proc_synthesize_kernel(const char *proc, const struct auxcap_sample_layout *layout,
				  const struct auxcap_sample_id *sid, auxcap_proc_record_fn fn,
				  void *ctx)
{
	struct {
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
	} b;
	struct auxcap_sample_id id;
	uint64_t start, end;
	struct rec_buf *r;
	int rc;

	if (!layout || !sid || !fn)
		return -EINVAL;
	rc = auxcap_proc_kernel_text(proc, &start, &end);
	if (rc < 0)
		return rc;
	r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	memset(&b, 0, sizeof(b));
	b.pid = (uint32_t)-1; /* the host kernel, as perf writes it */
	b.tid = 0;
	b.start = start;
	b.len = end - start;
	b.pgoff = start; /* the address of _text: what the name's suffix refers to */
	id = *sid;
	id.pid = (uint32_t)-1;
	id.tid = 0;
	rc = emit(PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, &b, sizeof(b), "[kernel.kallsyms]_text",
		  layout, &id, r, fn, ctx);
	free(r);
	return rc < 0 ? rc : 1;
}
