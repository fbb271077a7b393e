/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the live tracer's tests (see tracer_run.h). */
#include "tracer_run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "util.h"

const char *tr_prog(void)
{
	const char *p = getenv("AUXCAP_TRACER_PROG");

	if (!p || access(p, X_OK) != 0)
		test_skip(
			"AUXCAP_TRACER_PROG does not name the test program; run through meson test");
	return p;
}

static int on_trace(void *ctx, const void *bytes, size_t len)
{
	struct tr_run *run = ctx;

	if (run->trace_len + len > run->trace_cap) {
		size_t cap = (run->trace_cap ? run->trace_cap * 2 : 65536) + len;
		uint8_t *n = realloc(run->trace, cap);

		if (!n)
			return -ENOMEM;
		run->trace = n;
		run->trace_cap = cap;
	}
	memcpy(run->trace + run->trace_len, bytes, len);
	run->trace_len += len;
	run->trace_calls++;
	return 0;
}

static int on_sideband(void *ctx, const struct auxcap_tracer_sideband *sb)
{
	struct tr_run *run = ctx;
	struct tr_map *m;

	switch (sb->type) {
	case AUXCAP_TRACER_SB_COMM:
		snprintf(run->comm, sizeof(run->comm), "%s", sb->comm.comm);
		if (run->ncomm < 4)
			run->comm_at_map[run->ncomm] = run->nmaps;
		run->ncomm++;
		run->comm_exec += sb->comm.exec;
		if (run->trace_len)
			run->order_ok = 0;
		break;
	case AUXCAP_TRACER_SB_START:
		run->nstart++;
		run->tid = sb->tid;
		run->pid = sb->pid;
		if (run->trace_len)
			run->order_ok = 0;
		break;
	case AUXCAP_TRACER_SB_EXIT:
		run->nexit++;
		run->exit_status = sb->exit.status;
		break;
	case AUXCAP_TRACER_SB_MMAP:
		if (run->nmaps == sizeof(run->maps) / sizeof(run->maps[0]))
			return -ENOSPC;
		m = &run->maps[run->nmaps++];
		memset(m, 0, sizeof(*m));
		m->addr = sb->mmap.addr;
		m->len = sb->mmap.len;
		m->pgoff = sb->mmap.pgoff;
		snprintf(m->path, sizeof(m->path), "%s", sb->mmap.path);
		if (m->path[0] != '/') {
			/* [vdso] and anonymous code: keep a copy of the bytes for the decoder. */
			m->bytes = malloc(m->len);
			if (!m->bytes)
				return -ENOMEM;
			if (auxcap_tracer_read_mem(run->tr, m->addr, m->bytes, m->len) < 0) {
				free(m->bytes);
				m->bytes = NULL;
			}
		}
		break;
	}
	return 0;
}

static int on_insn(void *ctx, const struct auxcap_tracer_insn *in)
{
	struct tr_run *run = ctx;
	struct tr_insn *e;

	if (run->nlog == run->log_cap) {
		size_t cap = run->log_cap ? run->log_cap * 2 : 65536;
		struct tr_insn *n = realloc(run->log, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		run->log = n;
		run->log_cap = cap;
	}
	if (in->kind == AUXCAP_TRACER_FAR && run->in_step)
		run->far_not_first++;
	run->in_step++;
	e = &run->log[run->nlog++];
	e->ip = in->ip;
	e->next_ip = in->next_ip;
	e->data_addr = in->data_addr;
	e->tsc_delta = in->tsc_delta;
	e->kind = (uint8_t)in->kind;
	e->mem = in->mem;
	e->taken = in->taken;
	e->traced = in->traced;
	e->ended = in->ended;
	e->restarts = in->restarts;
	e->async = in->async_after;
	if (run->nlog == run->yield_at)
		auxcap_tracer_yield(run->tr);
	return 0;
}

/* Start with @argv, or attach to @tid, or (with @go_fd >= 0) adopt the waiting child @tid. */
static int run_common(struct tr_run *run, const struct auxcap_tracer_opts *opts, char *const argv[],
		      pid_t tid, int go_fd)
{
	struct auxcap_tracer_opts o = *opts;
	struct timespec t0, t1;
	int r;

	size_t yield_at = run->yield_at, far_break_after = run->far_break_after;
	uint64_t step_max = run->step_max;

	memset(run, 0, sizeof(*run));
	run->yield_at = yield_at;
	run->step_max = step_max;
	run->far_break_after = far_break_after;
	run->order_ok = 1;
	o.sz = sizeof(o);
	o.on_trace = on_trace;
	o.on_sideband = on_sideband;
	o.on_insn = on_insn;
	o.ctx = run;
	r = auxcap_tracer_new(&o, &run->tr);
	if (r < 0)
		return r;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = argv	   ? auxcap_tracer_start(run->tr, argv)
	    : go_fd >= 0 ? auxcap_tracer_start_child(run->tr, tid, go_fd)
			 : auxcap_tracer_attach(run->tr, tid);
	if (r == -EPERM) {
		auxcap_tracer_free(run->tr);
		test_skip(
			"ptrace is not permitted here (seccomp, Yama ptrace_scope or a container)");
	}
	if (r == 0) {
		do {
			struct auxcap_tracer_stats s0, s1;
			uint64_t stops;

			auxcap_tracer_get_stats(run->tr, &s0);
			run->in_step = 0;
			r = auxcap_tracer_step(run->tr, run->step_max);
			auxcap_tracer_get_stats(run->tr, &s1);
			stops = s1.stops - s0.stops;
			if (stops > run->max_stops)
				run->max_stops = stops;
			if (r > 0 && run->step_max && stops < run->step_max) {
				if (!auxcap_tracer_at_far(run->tr)) {
					run->early_other++;
				} else {
					run->far_breaks++;
					if (!run->far_break_steps &&
					    run->nlog >= run->far_break_after) {
						run->far_break_steps = run->nlog;
						run->far_break_trace = run->trace_len;
					}
				}
			}
			if (r > 0 && run->yield_at && !run->steps_at_yield) {
				run->steps_at_yield = run->nlog;
				run->trace_at_yield = run->trace_len;
			}
		} while (r > 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	run->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	auxcap_tracer_get_stats(run->tr, &run->stats);
	auxcap_tracer_free(run->tr);
	run->tr = NULL;
	return r;
}

int tr_run(struct tr_run *run, const struct auxcap_tracer_opts *opts, char *const argv[])
{
	return run_common(run, opts, argv, 0, -1);
}

int tr_attach(struct tr_run *run, const struct auxcap_tracer_opts *opts, pid_t tid)
{
	return run_common(run, opts, NULL, tid, -1);
}

int tr_start_child(struct tr_run *run, const struct auxcap_tracer_opts *opts, pid_t pid, int go_fd)
{
	return run_common(run, opts, NULL, pid, go_fd);
}

void tr_run_fini(struct tr_run *run)
{
	for (size_t i = 0; i < run->nmaps; i++)
		free(run->maps[i].bytes);
	free(run->trace);
	free(run->log);
	memset(run, 0, sizeof(*run));
}

static int elf_open(const char *path, int *fd, Elf **elf)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return errno > 0 ? -errno : -EIO;
	*elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (!*elf) {
		close(*fd);
		return -EBADMSG;
	}
	return 0;
}

int tr_elf_text(const char *path, uint64_t *start, uint64_t *end)
{
	size_t n;
	Elf *elf;
	int fd, r = -ENOENT;

	if (elf_open(path, &fd, &elf) < 0)
		return -EBADMSG;
	if (elf_getphdrnum(elf, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_flags & PF_X)) {
				*start = ph.p_vaddr;
				*end = ph.p_vaddr + ph.p_memsz;
				r = 0;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return r;
}

int tr_elf_symbol(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd, r = -ENOENT;

	if (elf_open(path, &fd, &elf) < 0)
		return -EBADMSG;
	while (r != 0 && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && strcmp(s, name) == 0) {
				*addr = sym.st_value;
				if (size)
					*size = sym.st_size;
				r = 0;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return r;
}
