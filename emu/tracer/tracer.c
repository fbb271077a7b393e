/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The live tracer: ptrace single-step loop, instruction classification, mappings sideband.
 *
 * Divisions of this file:
 *   1. object lifetime (new/free, options)
 *   2. output staging and sideband (out_put/flush, COMM/MMAP/START/EXIT, /proc/PID/maps scans)
 *   3. starting: fork + PTRACE_TRACEME + exec, or PTRACE_ATTACH
 *   4. the step loop: one instruction per ptrace stop, turned into struct auxcap_tracer_insn
 *   5. stopping
 *
 * How an instruction is observed: at a stop the registers hold the state before the next
 * instruction.  The tracer decodes that instruction (cached by address), remembers the
 * registers (to compute its data address), single-steps, and reads RIP at the next stop.
 * The new RIP tells the branch outcome: a conditional branch is taken when RIP is its target,
 * an indirect branch or return went to RIP.  A system call returns to the next instruction
 * (or elsewhere, for rt_sigreturn and execve); the encoders see it as a far transfer into the
 * kernel and back, as user-only hardware tracing does.  One that a signal interrupted and the
 * kernel restarts does not return: it is seen as a transfer into the kernel only, and the
 * next step is the call again (see syscall_restarts()).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <sched.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "auxcap/proc.h"
#include "tracer_int.h"

#define DCACHE_SIZE 4096u /* decoded-instruction cache entries (power of two) */

struct dcache_entry {
	uint64_t ip;			/* address of the cached instruction; 0: empty */
	struct auxcap_tracer_decoded d; /* its decoding */
};

enum tracer_state {
	TRACER_IDLE = 0, /* no child yet */
	TRACER_TRACING,	 /* child stopped under ptrace, trace enabled */
	TRACER_DONE,	 /* child exited, detached or killed */
};

struct auxcap_tracer {
	struct auxcap_tracer_opts opts;		     /* copy of the caller's options */
	const struct auxcap_tracer_encoder_ops *enc; /* the format's encoder */
	void *enc_priv;				     /* enc->priv_size bytes, owned */
	struct auxcap_tracer_out *out;		     /* staging buffer, owned */
	struct auxcap_tracer_disasm *dis;	     /* owned */
	struct dcache_entry *dcache;		     /* DCACHE_SIZE entries, owned */
	struct auxcap_tracer_stats stats;
	struct auxcap_proc_map *maps; /* known executable mappings, owned */
	size_t nmaps;			/* entries used in @maps */
	size_t maps_cap;		/* entries allocated in @maps */
	size_t map_hint;		/* index of the mapping last hit */
	uint64_t stack_lo; /* opts.data_maps: the [stack] mapping's start at the last scan */
	enum tracer_state state;
	bool yield; /* auxcap_tracer_yield(): end the current auxcap_tracer_step() */
	pid_t pid;		      /* traced thread (== process for started children); -1 */
	pid_t tgid;		      /* its process (thread group) */
	bool kicked;		      /* opts.stop_req: a SIGSTOP was sent to end a blocking
				       * system call, its stop not seen yet */
	bool ours;		      /* we forked it (else attached) */
	bool exited;		      /* reaped: @status is valid */
	bool reaped;		      /* no zombie left to wait for */
	int status;		      /* wait status once exited */
	int memfd;		      /* /proc/PID/mem, or -1 */
	int pending_sig;	      /* signal to deliver with the next step */
	bool restart;		      /* the last system call is to be restarted (see
				       * syscall_restarts()): control is in the kernel */
	struct user_regs_struct regs; /* registers at the current stop */
	uint64_t tsc;		      /* TSC at the current stop */
};

static const struct auxcap_tracer_encoder_ops *const encoders[AUXCAP_TRACER_FORMAT_MAX] = {
	[AUXCAP_TRACER_INTEL_PT] = &auxcap_tracer_enc_pt,
	[AUXCAP_TRACER_INTEL_BTS] = &auxcap_tracer_enc_bts,
	[AUXCAP_TRACER_ARM_SPE] = &auxcap_tracer_enc_spe,
};

/* ptrace(2) takes signal numbers and option bits in its pointer argument. */
static void *ptrace_arg(long v)
{
	return (void *)v; /* NOLINT(performance-no-int-to-ptr) */
}

const char *auxcap_tracer_format_name(enum auxcap_tracer_format format)
{
	if ((unsigned int)format >= AUXCAP_TRACER_FORMAT_MAX)
		return NULL;
	return encoders[format]->name;
}

/* ---- 1. lifetime ------------------------------------------------------------------------- */

static int opts_copy(struct auxcap_tracer_opts *dst, const struct auxcap_tracer_opts *src)
{
	size_t known = sizeof(*dst);

	if (src->sz < offsetof(struct auxcap_tracer_opts, ctx) + sizeof(src->ctx))
		return -EINVAL;
	if (src->sz > known) {
		const unsigned char *tail = (const unsigned char *)src + known;

		for (size_t i = 0; i < src->sz - known; i++)
			if (tail[i])
				return -E2BIG;
	}
	memcpy(dst, src, known);
	dst->sz = known;
	return 0;
}

int auxcap_tracer_new(const struct auxcap_tracer_opts *opts, struct auxcap_tracer **ret_tr)
{
	struct auxcap_tracer *tr;
	int r;

	if (!opts || !ret_tr)
		return -EINVAL;
	tr = calloc(1, sizeof(*tr));
	if (!tr)
		return -ENOMEM;
	tr->pid = -1;
	tr->memfd = -1;
	r = opts_copy(&tr->opts, opts);
	if (r < 0)
		goto err_free;
	r = -EINVAL;
	if (!tr->opts.on_trace || (unsigned int)tr->opts.format >= AUXCAP_TRACER_FORMAT_MAX)
		goto err_free;
	if ((tr->opts.filter_start || tr->opts.filter_end) &&
	    tr->opts.filter_start >= tr->opts.filter_end)
		goto err_free;
	tr->enc = encoders[tr->opts.format];
	r = -ENOMEM;
	tr->out = calloc(1, sizeof(*tr->out));
	tr->dcache = calloc(DCACHE_SIZE, sizeof(*tr->dcache));
	tr->enc_priv = calloc(1, tr->enc->priv_size);
	if (!tr->out || !tr->dcache || !tr->enc_priv)
		goto err_free;
	tr->out->fn = tr->opts.on_trace;
	tr->out->ctx = tr->opts.ctx;
	tr->out->stats = &tr->stats;
	r = auxcap_tracer_disasm_new(&tr->dis);
	if (r < 0)
		goto err_free;
	r = tr->enc->init(tr->enc_priv, &tr->opts, tr->out);
	if (r < 0)
		goto err_fini;
	*ret_tr = tr;
	return 0;

err_fini:
	tr->enc->fini(tr->enc_priv);
err_free:
	auxcap_tracer_disasm_free(tr->dis);
	free(tr->enc_priv);
	free(tr->dcache);
	free(tr->out);
	free(tr);
	return r;
}

static void reap(struct auxcap_tracer *tr)
{
	int st;

	if (tr->pid <= 0 || tr->reaped)
		return;
	if (waitpid(tr->pid, &st, __WALL) == tr->pid && !tr->exited) {
		tr->exited = true;
		tr->status = st;
	}
	tr->reaped = true;
}

void auxcap_tracer_free(struct auxcap_tracer *tr)
{
	if (!tr)
		return;
	if (tr->state == TRACER_TRACING)
		(void)auxcap_tracer_stop(tr, tr->ours);
	if (tr->ours && !tr->reaped) {
		int st;

		if (waitpid(tr->pid, &st, WNOHANG | __WALL) == 0) {
			(void)kill(tr->pid, SIGKILL);
			reap(tr);
		}
		tr->reaped = true;
	}
	if (tr->memfd >= 0)
		(void)close(tr->memfd);
	tr->enc->fini(tr->enc_priv);
	auxcap_tracer_disasm_free(tr->dis);
	free(tr->maps);
	free(tr->enc_priv);
	free(tr->dcache);
	free(tr->out);
	free(tr);
}

int auxcap_tracer_get_stats(const struct auxcap_tracer *tr, struct auxcap_tracer_stats *ret_stats)
{
	if (!tr || !ret_stats)
		return -EINVAL;
	*ret_stats = tr->stats;
	return 0;
}

pid_t auxcap_tracer_pid(const struct auxcap_tracer *tr)
{
	return tr ? tr->pid : -1;
}

int auxcap_tracer_exit_status(const struct auxcap_tracer *tr, int *ret_status)
{
	if (!tr || !ret_status)
		return -EINVAL;
	if (!tr->exited)
		return 0;
	*ret_status = tr->status;
	return 1;
}

/* ---- 2. output and sideband -------------------------------------------------------------- */

int auxcap_tracer_out_flush(struct auxcap_tracer_out *out)
{
	int r;

	if (!out->len)
		return 0;
	r = out->fn(out->ctx, out->buf, out->len);
	if (r < 0)
		return r;
	out->stats->trace_bytes += out->len;
	out->len = 0;
	return 0;
}

int auxcap_tracer_out_put(struct auxcap_tracer_out *out, const void *bytes, size_t len)
{
	int r;

	if (len > sizeof(out->buf))
		return -EINVAL;
	if (out->len + len > sizeof(out->buf)) {
		r = auxcap_tracer_out_flush(out);
		if (r < 0)
			return r;
	}
	memcpy(out->buf + out->len, bytes, len);
	out->len += len;
	return 0;
}

static int emit_sideband(struct auxcap_tracer *tr, struct auxcap_tracer_sideband *sb)
{
	int r;

	if (!tr->opts.on_sideband)
		return 0;
	/* Trace produced before this point is delivered first, as the kernel would order it. */
	r = auxcap_tracer_out_flush(tr->out);
	if (r < 0)
		return r;
	sb->pid = (uint32_t)tr->tgid;
	sb->tid = (uint32_t)tr->pid;
	sb->tsc = tr->tsc;
	tr->stats.sideband++;
	return tr->opts.on_sideband(tr->opts.ctx, sb);
}

static int emit_comm(struct auxcap_tracer *tr, bool exec)
{
	struct auxcap_tracer_sideband sb;
	char path[64], comm[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tr->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, comm, sizeof(comm) - 1);
	(void)close(fd);
	if (n < 0)
		return -errno;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	comm[15] = '\0';
	memset(&sb, 0, sizeof(sb));
	sb.type = AUXCAP_TRACER_SB_COMM;
	sb.comm.comm = comm;
	sb.comm.exec = exec;
	return emit_sideband(tr, &sb);
}

static bool map_same(const struct auxcap_proc_map *a, const struct auxcap_proc_map *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       a->ino == b->ino && a->prot == b->prot && strcmp(a->path, b->path) == 0;
}

/*
 * Re-read /proc/PID/maps: report executable mappings (with opts.data_maps, every mapping) not
 * seen before as MMAP sideband and make the known set equal to the current ones.
 */
static int scan_maps(struct auxcap_tracer *tr)
{
	struct auxcap_proc_map *cur = NULL, m;
	size_t ncur = 0, cap = 0;
	char path[64], line[4096 + 128];
	FILE *f;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)tr->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	tr->stats.map_scans++;
	while (fgets(line, sizeof(line), f)) {
		if (auxcap_proc_map_parse(line, &m) < 0 ||
		    !((m.prot & PROT_EXEC) || tr->opts.data_maps))
			continue;
		if (!m.path[0])
			strcpy(m.path, "//anon"); /* the kernel's name for anonymous memory */
		if (ncur == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct auxcap_proc_map *n = realloc(cur, ncap * sizeof(*n));

			if (!n) {
				r = -ENOMEM;
				goto out;
			}
			cur = n;
			cap = ncap;
		}
		cur[ncur++] = m;
	}
	for (size_t i = 0; i < ncur; i++) {
		struct auxcap_tracer_sideband sb;
		bool known = false;

		if (!strcmp(cur[i].path, "[stack]"))
			tr->stack_lo = cur[i].start;
		for (size_t j = 0; j < tr->nmaps && !known; j++)
			known = map_same(&cur[i], &tr->maps[j]);
		if (known)
			continue;
		memset(&sb, 0, sizeof(sb));
		sb.type = AUXCAP_TRACER_SB_MMAP;
		sb.mmap.addr = cur[i].start;
		sb.mmap.len = cur[i].end - cur[i].start;
		sb.mmap.pgoff = cur[i].pgoff;
		sb.mmap.prot = cur[i].prot;
		sb.mmap.flags = cur[i].flags;
		sb.mmap.maj = cur[i].maj;
		sb.mmap.min = cur[i].min;
		sb.mmap.ino = cur[i].ino;
		sb.mmap.path = cur[i].path;
		r = emit_sideband(tr, &sb);
		if (r < 0)
			goto out;
	}
	free(tr->maps);
	tr->maps = cur;
	tr->nmaps = ncur;
	tr->maps_cap = cap;
	tr->map_hint = 0;
	cur = NULL;
out:
	free(cur);
	fclose(f);
	return r;
}

/* @ip is in a known executable mapping (data ones cannot hold code that runs). */
static bool in_known_map(struct auxcap_tracer *tr, uint64_t ip)
{
	if (tr->map_hint < tr->nmaps && ip >= tr->maps[tr->map_hint].start &&
	    ip < tr->maps[tr->map_hint].end && (tr->maps[tr->map_hint].prot & PROT_EXEC))
		return true;
	for (size_t i = 0; i < tr->nmaps; i++) {
		if (ip >= tr->maps[i].start && ip < tr->maps[i].end &&
		    (tr->maps[i].prot & PROT_EXEC)) {
			tr->map_hint = i;
			return true;
		}
	}
	return false;
}

static bool in_filter(const struct auxcap_tracer *tr, uint64_t ip)
{
	if (!tr->opts.filter_start && !tr->opts.filter_end)
		return true;
	return ip >= tr->opts.filter_start && ip < tr->opts.filter_end;
}

/* ---- 3. starting ------------------------------------------------------------------------- */

static int get_regs(struct auxcap_tracer *tr)
{
	if (ptrace(PTRACE_GETREGS, tr->pid, NULL, &tr->regs) < 0)
		return -errno;
	return 0;
}

static int open_mem(struct auxcap_tracer *tr)
{
	char path[64];

	if (tr->memfd >= 0)
		(void)close(tr->memfd);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)tr->pid);
	tr->memfd = open(path, O_RDONLY | O_CLOEXEC);
	return tr->memfd < 0 ? -errno : 0;
}

/* The child is stopped at its first instruction: sideband, then the trace begins. */
static int begin_tracing(struct auxcap_tracer *tr, bool exec)
{
	struct auxcap_tracer_sideband sb;
	struct auxcap_tracer_begin b;
	int r;

	tr->tsc = __rdtsc();
	r = get_regs(tr);
	if (r < 0)
		return r;
	r = open_mem(tr);
	if (r < 0)
		return r;
	tr->state = TRACER_TRACING;
	r = emit_comm(tr, exec);
	if (r < 0)
		return r;
	memset(&sb, 0, sizeof(sb));
	sb.type = AUXCAP_TRACER_SB_START;
	r = emit_sideband(tr, &sb);
	if (r < 0)
		return r;
	r = scan_maps(tr);
	if (r < 0)
		return r;
	b.ip = tr->regs.rip;
	b.traced = in_filter(tr, b.ip);
	b.tsc = tr->tsc;
	b.pid = (uint32_t)tr->tgid;
	b.tid = (uint32_t)tr->pid;
	return tr->enc->begin(tr->enc_priv, &b);
}

static int wait_child(pid_t pid, int *status)
{
	for (;;) {
		pid_t w = waitpid(pid, status, __WALL);

		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return -errno;
	}
}

int auxcap_tracer_start(struct auxcap_tracer *tr, char *const argv[])
{
	int pfd[2], status, err = 0, r;
	ssize_t n;
	pid_t pid;

	if (!tr || !argv || !argv[0] || tr->state != TRACER_IDLE)
		return -EINVAL;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		(void)close(pfd[0]);
		(void)close(pfd[1]);
		return r;
	}
	if (pid == 0) {
		/* Child: only async-signal-safe calls until exec. */
		(void)close(pfd[0]);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
			execvp(argv[0], argv);
		err = errno;
		(void)!write(pfd[1], &err, sizeof(err));
		_exit(127);
	}
	(void)close(pfd[1]);
	do {
		n = read(pfd[0], &err, sizeof(err));
	} while (n < 0 && errno == EINTR);
	(void)close(pfd[0]);
	tr->pid = pid;
	tr->tgid = pid;
	tr->ours = true;
	r = wait_child(pid, &status);
	if (r < 0)
		return r;
	if (n == (ssize_t)sizeof(err)) {
		/* exec (or PTRACE_TRACEME) failed; the child has exited. */
		tr->exited = true;
		tr->reaped = true;
		tr->status = status;
		tr->state = TRACER_DONE;
		return err ? -err : -ENOEXEC;
	}
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP) {
		tr->state = TRACER_DONE;
		if (!WIFSTOPPED(status)) {
			tr->exited = true;
			tr->reaped = true;
			tr->status = status;
		}
		return -ECHILD;
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   ptrace_arg(PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC)) < 0)
		return -errno;
	return begin_tracing(tr, true);
}

int auxcap_tracer_start_child(struct auxcap_tracer *tr, pid_t pid, int go_fd)
{
	int status, sig = 0, r;

	if (!tr || pid <= 0 || go_fd < 0 || tr->state != TRACER_IDLE)
		return -EINVAL;
	if (ptrace(PTRACE_SEIZE, pid, NULL,
		   ptrace_arg(PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC)) < 0) {
		r = -errno;
		(void)close(go_fd);
		return r;
	}
	tr->pid = pid;
	tr->tgid = pid;
	tr->ours = true;
	/* Let it exec; it runs untraced until the exec stop. */
	r = write(go_fd, "g", 1) == 1 ? 0 : -errno;
	(void)close(go_fd);
	if (r < 0)
		return r;
	for (;;) {
		r = wait_child(pid, &status);
		if (r < 0)
			return r;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			/* It never reached exec (the command could not be run). */
			tr->exited = true;
			tr->reaped = true;
			tr->status = status;
			tr->state = TRACER_DONE;
			return -ENOEXEC;
		}
		if (!WIFSTOPPED(status))
			return -ECHILD;
		if (status >> 16 == PTRACE_EVENT_EXEC)
			break;
		/* A signal before the exec, or a group stop: deliver it and go on. */
		sig = status >> 16 ? 0 : WSTOPSIG(status);
		if (ptrace(PTRACE_CONT, pid, NULL, ptrace_arg(sig)) < 0)
			return -errno;
	}
	/* Stopped at the end of execve, at the new image's first instruction. */
	return begin_tracing(tr, true);
}

int auxcap_tracer_attach(struct auxcap_tracer *tr, pid_t tid)
{
	int status, r;

	if (!tr || tid <= 0 || tr->state != TRACER_IDLE)
		return -EINVAL;
	if (ptrace(PTRACE_ATTACH, tid, NULL, NULL) < 0)
		return -errno;
	tr->pid = tid;
	if (auxcap_proc_tgid(NULL, tid, &tr->tgid) < 0)
		tr->tgid = tid;
	tr->ours = false;
	tr->reaped = true; /* not our child: nothing to reap */
	for (;;) {
		r = wait_child(tid, &status);
		if (r < 0)
			return r;
		if (!WIFSTOPPED(status)) {
			tr->state = TRACER_DONE;
			return -ESRCH;
		}
		if (WSTOPSIG(status) == SIGSTOP)
			break;
		/* Another signal arrived first: deliver it later, wait for our SIGSTOP. */
		tr->pending_sig = WSTOPSIG(status);
		if (ptrace(PTRACE_CONT, tid, NULL, NULL) < 0)
			return -errno;
	}
	if (ptrace(PTRACE_SETOPTIONS, tid, NULL, ptrace_arg(PTRACE_O_TRACEEXEC)) < 0)
		return -errno;
	return begin_tracing(tr, false);
}

int auxcap_tracer_read_mem(struct auxcap_tracer *tr, uint64_t addr, void *buf, size_t len)
{
	ssize_t n;

	if (!tr || !buf || tr->memfd < 0 || tr->state != TRACER_TRACING)
		return -EINVAL;
	n = pread(tr->memfd, buf, len, (off_t)addr);
	if (n < 0 || (size_t)n != len)
		return -EFAULT;
	return 0;
}

/* ---- 4. the step loop -------------------------------------------------------------------- */

static int decode_at(struct auxcap_tracer *tr, uint64_t ip, struct auxcap_tracer_decoded *ret)
{
	struct dcache_entry *e = &tr->dcache[(ip ^ (ip >> 12)) & (DCACHE_SIZE - 1)];
	uint8_t code[16];
	ssize_t n;
	int r;

	if (e->ip == ip && ip) {
		*ret = e->d;
		return 0;
	}
	tr->stats.decode_misses++;
	n = pread(tr->memfd, code, sizeof(code), (off_t)ip);
	if (n <= 0)
		return -EFAULT;
	r = auxcap_tracer_disasm_decode(tr->dis, code, (size_t)n, ip, &e->d);
	if (r < 0) {
		/*
		 * capstone 4 does not know every encoding (some AVX-512 forms glibc uses).  Those
		 * are never branches: treat it as a non-branch without a known memory operand and
		 * learn its length from the step (len 0 until then).
		 */
		memset(&e->d, 0, sizeof(e->d));
		e->d.ip = ip;
		e->d.kind = AUXCAP_TRACER_OTHER;
		e->d.mem.base = AUXCAP_TRACER_REG_NONE;
		e->d.mem.index = AUXCAP_TRACER_REG_NONE;
		tr->stats.unknown_insns++;
	}
	e->ip = ip;
	*ret = e->d;
	return 0;
}

static void set_len(struct auxcap_tracer *tr, uint64_t ip, uint8_t len)
{
	struct dcache_entry *e = &tr->dcache[(ip ^ (ip >> 12)) & (DCACHE_SIZE - 1)];

	if (e->ip == ip)
		e->d.len = len;
}

static void dcache_clear(struct auxcap_tracer *tr)
{
	memset(tr->dcache, 0, DCACHE_SIZE * sizeof(*tr->dcache));
}

static bool stop_asked(const struct auxcap_tracer *tr)
{
	return tr->opts.stop_req && __atomic_load_n(tr->opts.stop_req, __ATOMIC_ACQUIRE);
}

/*
 * Wait for the step just resumed.  One that may block for as long as a call does (@may_block:
 * a system call's, or the first step, which finishes the call a task attached to was in) is
 * polled when opts.stop_req is set; once a stop is asked for, the task is sent a SIGSTOP (by
 * this thread, which traces it still: the signal cannot reach it untraced).  It ends the call
 * with a signal-delivery stop, which step_one() swallows (the kernel restarts the call when
 * the task runs on); tr->kicked until that stop is seen.
 */
static int wait_step(struct auxcap_tracer *tr, bool may_block, int *status)
{
	unsigned int polls = 0;

	if (!may_block || !tr->opts.stop_req)
		return wait_child(tr->pid, status);
	for (;;) {
		pid_t w = waitpid(tr->pid, status, __WALL | WNOHANG);

		if (w == tr->pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (stop_asked(tr) && !tr->kicked) {
			if (syscall(SYS_tgkill, tr->tgid, tr->pid, SIGSTOP) < 0)
				return -errno;
			tr->kicked = true;
			return wait_child(tr->pid, status);
		}
		/* Most calls return within microseconds: yield first, then sleep a little. */
		if (++polls < 50)
			sched_yield();
		else
			(void)nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
}

/*
 * Before letting the task go: the SIGSTOP wait_step() sent, if the call returned before it
 * came, is still pending; a step takes it (a signal-delivery stop before any instruction
 * runs), so that it does not stop the task once detached.
 */
static void take_kick(struct auxcap_tracer *tr)
{
	int status;

	if (!tr->kicked)
		return;
	tr->kicked = false;
	if (ptrace(PTRACE_SINGLESTEP, tr->pid, NULL, NULL) == 0)
		(void)wait_child(tr->pid, &status);
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static void count_insn(struct auxcap_tracer_stats *st, const struct auxcap_tracer_insn *ev)
{
	st->insns++;
	st->traced_insns += ev->traced;
	if (ev->kind >= AUXCAP_TRACER_COND && ev->kind <= AUXCAP_TRACER_RETURN)
		st->branches++;
	if (ev->kind == AUXCAP_TRACER_COND) {
		st->cond++;
		st->cond_taken += ev->taken;
	}
	st->far += ev->kind == AUXCAP_TRACER_FAR;
	st->restarts += ev->restarts;
	st->async += ev->async_after;
}

/* Pass one executed instruction @ev on: statistics, the on_insn hook, the encoder. */
static int emit_insn(struct auxcap_tracer *tr, struct auxcap_tracer_insn *ev)
{
	int r;

	count_insn(&tr->stats, ev);
	if (tr->opts.on_insn) {
		r = tr->opts.on_insn(tr->opts.ctx, ev);
		if (r < 0)
			return r;
	}
	return tr->enc->insn(tr->enc_priv, ev);
}

/* The child exited or was killed while running the instruction @d. */
static int child_ended(struct auxcap_tracer *tr, const struct auxcap_tracer_decoded *d,
		       const struct auxcap_tracer_insn *proto, int status)
{
	struct auxcap_tracer_sideband sb;
	int r;

	tr->exited = true;
	tr->reaped = true;
	tr->status = status;
	tr->state = TRACER_DONE;
	if (d->kind == AUXCAP_TRACER_FAR && !tr->restart) {
		/* exit/exit_group: the system call ran, control never came back. */
		struct auxcap_tracer_insn ev = *proto;

		ev.ended = true;
		r = emit_insn(tr, &ev);
		if (r < 0)
			return r;
		r = tr->enc->end(tr->enc_priv, 0, tr->tsc);
	} else {
		/* Killed before the instruction completed. */
		r = tr->enc->end(tr->enc_priv, d->ip, tr->tsc);
	}
	if (r < 0)
		return r;
	r = auxcap_tracer_out_flush(tr->out);
	if (r < 0)
		return r;
	memset(&sb, 0, sizeof(sb));
	sb.type = AUXCAP_TRACER_SB_EXIT;
	sb.exit.status = status;
	return emit_sideband(tr, &sb);
}

/*
 * With opts.data_maps: the access at @addr (0: none) was below the stack's mapping as last
 * scanned, within the 8 MiB it may grow to: the kernel grew it (no system call), and writes
 * a [stack] MMAP2 of its new size, so the mappings are read again.
 */
static bool stack_grew(const struct auxcap_tracer *tr, uint64_t addr)
{
	if (!tr->opts.data_maps || !addr || !tr->stack_lo || addr >= tr->stack_lo ||
	    tr->stack_lo - addr > (8u << 20))
		return false;
	for (size_t i = 0; i < tr->nmaps; i++)
		if (addr >= tr->maps[i].start && addr < tr->maps[i].end)
			return false; /* another mapping's: nothing grew */
	return true;
}

static bool changes_mappings(uint64_t nr)
{
	return nr == SYS_mmap || nr == SYS_mprotect || nr == SYS_munmap || nr == SYS_mremap ||
	       nr == SYS_pkey_mprotect || nr == SYS_shmat;
}

/*
 * After a system call (@before: the registers it was made with; the result in tr->regs.rax):
 * a thread or a process it created, which the tracer does not follow (the live tracer steps
 * the one thread it started with), is counted (stats.untraced_threads, untraced_children).
 */
static void count_new_task(struct auxcap_tracer *tr, const struct user_regs_struct *before)
{
	uint64_t flags = 0;

	if ((int64_t)tr->regs.rax <= 0)
		return; /* failed, or the child's side */
	if (before->rax == SYS_clone) {
		flags = before->rdi;
	} else if (before->rax == SYS_clone3) {
		/* struct clone_args starts with its flags */
		if (auxcap_tracer_read_mem(tr, before->rdi, &flags, sizeof(flags)) < 0)
			flags = 0;
	} else if (before->rax != SYS_fork && before->rax != SYS_vfork) {
		return;
	}
	if (flags & CLONE_THREAD)
		tr->stats.untraced_threads++;
	else
		tr->stats.untraced_children++;
}

/* Decide the branch outcome of @ev from where the child stopped next (ev->next_ip). */
static int judge_outcome(struct auxcap_tracer *tr, const struct auxcap_tracer_decoded *d,
			 struct auxcap_tracer_insn *ev)
{
	uint64_t ip = ev->ip, fall = ip + d->len;

	switch (d->kind) {
	case AUXCAP_TRACER_OTHER:
		if (ev->next_ip != fall && ev->next_ip > ip && ev->next_ip - ip <= 15) {
			/* Length unknown to (or misjudged by) the disassembler: the step tells. */
			ev->len = (uint8_t)(ev->next_ip - ip);
			fall = ev->next_ip;
			set_len(tr, ip, ev->len);
		} else if (!d->len) {
			return -EFAULT;
		}
		ev->async_after = ev->next_ip != fall;
		break;
	case AUXCAP_TRACER_COND:
		ev->taken = ev->next_ip != fall;
		ev->async_after = ev->next_ip != fall && ev->next_ip != d->target;
		if (ev->async_after)
			ev->taken = false;
		break;
	case AUXCAP_TRACER_JUMP:
	case AUXCAP_TRACER_CALL:
		ev->async_after = ev->next_ip != d->target;
		break;
	default:
		break;
	}
	return 0;
}

/*
 * Whether the instruction at @ip is one a hypervisor may run for the guest (it traps to the
 * host, which emulates it and moves RIP on): CPUID, RDTSC, RDTSCP, RDPMC.  Some hypervisors
 * then deliver the single-step trap only after the next instruction (seen on a KVM guest on
 * an AMD Zen 5 host: every step over CPUID stopped one instruction late).
 */
static bool hypervisor_emulated(struct auxcap_tracer *tr, uint64_t ip)
{
	uint8_t b[3];

	if (pread(tr->memfd, b, sizeof(b), (off_t)ip) != (ssize_t)sizeof(b) || b[0] != 0x0f)
		return false;
	return b[1] == 0xa2 || b[1] == 0x31 || b[1] == 0x33 ||
	       (b[1] == 0x01 && b[2] == 0xf9);
}

/*
 * Whether the stop just taken reports the end of a system call rather than a step.  The task
 * was inside one when stepping began: a command started with PTRACE_SEIZE is stopped in its
 * execve (PTRACE_EVENT_EXEC), an attached task may be blocked in a call.  The kernel's
 * system-call exit reports the pending single step there as a trap (si_code TRAP_BRKPT)
 * before any user instruction runs; a step that ran one reports TRAP_TRACE.  Asked only when
 * the IP did not move, where a step rarely leaves it (a jump to itself).
 */
static bool syscall_exit_stop(struct auxcap_tracer *tr)
{
	siginfo_t si;

	return ptrace(PTRACE_GETSIGINFO, tr->pid, NULL, &si) == 0 && si.si_signo == SIGTRAP &&
	       si.si_code == TRAP_BRKPT;
}

#define MAX_STEPPED_OVER 2 /* instructions a late trap may have run past */

/*
 * The step over @d (an instruction the hypervisor emulates, @ev its event) stopped at
 * ev->next_ip, past its fall-through: the trap came late and the instructions from the
 * fall-through on ran too.  If they lead there (non-branches, at most the last a branch
 * whose outcome the stop tells), log @ev as ending at its fall-through and them after it.
 * Returns 1 if so, 0 if they do not (nothing logged), a negative errno.
 */
static int stepped_over(struct auxcap_tracer *tr, const struct auxcap_tracer_decoded *d,
			struct auxcap_tracer_insn *ev)
{
	struct auxcap_tracer_decoded chain[MAX_STEPPED_OVER];
	uint64_t at = ev->ip + d->len, stop = ev->next_ip;
	size_t n = 0;
	int r;

	while (n < MAX_STEPPED_OVER) {
		struct auxcap_tracer_decoded *x = &chain[n];

		if (decode_at(tr, at, x) < 0 || !x->len || x->rep || x->kind == AUXCAP_TRACER_FAR)
			return 0;
		n++;
		if (x->kind != AUXCAP_TRACER_OTHER)
			break; /* a branch: where it went is the stop */
		at += x->len;
		if (at == stop)
			break;
	}
	if (chain[n - 1].kind == AUXCAP_TRACER_OTHER && at != stop)
		return 0;
	ev->next_ip = ev->ip + d->len;
	ev->next_traced = in_filter(tr, ev->next_ip);
	r = emit_insn(tr, ev);
	for (size_t i = 0; i < n && r >= 0; i++) {
		const struct auxcap_tracer_decoded *x = &chain[i];
		struct auxcap_tracer_insn e;

		memset(&e, 0, sizeof(e));
		e.ip = x->ip;
		e.len = x->len;
		e.kind = x->kind;
		e.target = x->target;
		e.traced = in_filter(tr, e.ip);
		e.taken = x->kind != AUXCAP_TRACER_OTHER && x->kind != AUXCAP_TRACER_COND;
		e.tsc = ev->tsc;
		e.next_ip = i + 1 < n ? chain[i + 1].ip : stop;
		e.next_traced = in_filter(tr, e.next_ip);
		r = judge_outcome(tr, x, &e);
		if (r == 0)
			r = emit_insn(tr, &e);
		tr->stats.stepped_over++;
	}
	return r < 0 ? r : 1;
}

/* Inside execve (PTRACE_EVENT_EXEC): a new image, new mappings, a new COMM. */
static int on_exec_event(struct auxcap_tracer *tr)
{
	int r;

	dcache_clear(tr);
	tr->nmaps = 0;
	r = open_mem(tr);
	if (r == 0)
		r = emit_comm(tr, true);
	if (r == 0)
		r = scan_maps(tr);
	return r;
}

/*
 * A REP string instruction stops once per iteration under single-step (a memset of 1 MB,
 * a million stops): with this many iterations or more to go, it runs to its end at once,
 * up to an execute breakpoint on the next instruction.
 */
#define REP_RUN_MIN 16

/* Execute breakpoint on @ip in debug register 0 of the child's thread (DR7 bit 0: local
 * enable, its R/W and LEN bits 0: execution). */
static int set_exec_bp(struct auxcap_tracer *tr, uint64_t ip)
{
	if (ptrace(PTRACE_POKEUSER, tr->pid, (void *)offsetof(struct user, u_debugreg[0]),
		   (void *)ip) < 0 ||
	    ptrace(PTRACE_POKEUSER, tr->pid, (void *)offsetof(struct user, u_debugreg[7]),
		   (void *)1ul) < 0)
		return -errno;
	return 0;
}

static void clear_exec_bp(struct auxcap_tracer *tr)
{
	(void)ptrace(PTRACE_POKEUSER, tr->pid, (void *)offsetof(struct user, u_debugreg[7]), NULL);
}

/*
 * Whether the system call just stepped over (the registers at the stop after it: @rax its
 * result) was interrupted by a signal and is to be restarted: the kernel's internal
 * -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND, -ERESTART_RESTARTBLOCK, which user space
 * never sees.  The stop comes before the signal is handled; what the kernel does next is
 * known at the next stop.  Without a handler (an ignored or stopping signal, which a
 * traced task still wakes for, or none) it moves RIP back to the call and control goes on
 * there: user-only trace shows TIP.PGE at the call and the call again, not a return after
 * it.  With a handler, control goes to it (its rt_sigreturn comes back to the call or after
 * it); a fatal signal ends the task in the kernel.
 */
static bool syscall_restarts(const struct user_regs_struct *r, uint8_t len)
{
	int64_t rax = (int64_t)r->rax;

	return len == 2 && (int64_t)r->orig_rax >= 0 &&
	       (rax == -512 || rax == -513 || rax == -514 || rax == -516);
}

/*
 * Execute one instruction.  Returns 1 if an instruction completed, 0 if the stop made no
 * progress (signal delivery, REP iteration) or the child ended, a negative errno on error.
 */
static int step_one(struct auxcap_tracer *tr)
{
	struct auxcap_tracer_decoded d;
	struct auxcap_tracer_insn ev;
	struct user_regs_struct before;
	uint64_t ip = tr->regs.rip, tsc0 = tr->tsc, fall;
	siginfo_t si;
	bool run_rep;
	int sig, status, r;

	r = decode_at(tr, ip, &d);
	if (r < 0)
		return r;
	before = tr->regs;
	fall = ip + d.len;
	memset(&ev, 0, sizeof(ev));
	ev.ip = ip;
	ev.len = d.len;
	ev.kind = d.kind;
	ev.target = d.target;
	ev.mem = d.mem.flags;
	ev.data_addr = auxcap_tracer_memop_addr(&d.mem, &before, fall);
	ev.sp = before.rsp;
	ev.traced = in_filter(tr, ip);
	ev.taken = d.kind != AUXCAP_TRACER_OTHER && d.kind != AUXCAP_TRACER_COND;

	sig = tr->pending_sig;
	tr->pending_sig = 0;
	/* Not with a signal to deliver: its handler would run unstepped up to the breakpoint. */
	run_rep = d.rep && d.len && !sig && before.rcx >= REP_RUN_MIN && set_exec_bp(tr, fall) == 0;
	for (;;) {
		if (ptrace(run_rep ? PTRACE_CONT : PTRACE_SINGLESTEP, tr->pid, NULL,
			   ptrace_arg(sig)) < 0) {
			r = -errno;
			if (run_rep)
				clear_exec_bp(tr);
			return r;
		}
		/* (the first step may finish a call the task was in when traced: a sleep) */
		r = wait_step(tr, d.kind == AUXCAP_TRACER_FAR || !tr->stats.stops, &status);
		if (run_rep) {
			/* at the breakpoint, or a signal stopped it part way: single steps again */
			clear_exec_bp(tr);
			run_rep = false;
			tr->stats.rep_runs++;
		}
		if (r < 0)
			return r;
		tr->tsc = __rdtsc();
		tr->stats.stops++;
		ev.tsc = tr->tsc;
		ev.tsc_delta = tr->tsc - tsc0;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			r = child_ended(tr, &d, &ev, status);
			return r < 0 ? r : 0;
		}
		if (!WIFSTOPPED(status))
			return -ECHILD;
		if (status >> 16 == PTRACE_EVENT_EXEC) {
			/* Finish the execve system call with another step. */
			r = on_exec_event(tr);
			if (r < 0)
				return r;
			sig = 0;
			continue;
		}
		if (status >> 16) {
			sig = 0;
			continue;
		}
		if (WSTOPSIG(status) != SIGTRAP) {
			/* Signal-delivery stop: nothing ran; deliver it with the next step. */
			if (!is_stop_signal(WSTOPSIG(status)))
				tr->pending_sig = WSTOPSIG(status);
			else if (WSTOPSIG(status) == SIGSTOP)
				tr->kicked = false; /* (wait_step()'s, if it sent one) */
			return 0;
		}
		break;
	}
	r = get_regs(tr);
	if (r < 0)
		return r;
	ev.next_ip = tr->regs.rip;
	ev.next_traced = in_filter(tr, ev.next_ip);

	if (!in_known_map(tr, ev.next_ip) ||
	    (d.kind == AUXCAP_TRACER_FAR &&
	     (changes_mappings(before.rax) || (tr->opts.data_maps && before.rax == SYS_brk))) ||
	    stack_grew(tr, ev.data_addr)) {
		if (d.kind == AUXCAP_TRACER_FAR)
			dcache_clear(tr);
		r = scan_maps(tr);
		if (r < 0)
			return r;
	}

	if (sig && ptrace(PTRACE_GETSIGINFO, tr->pid, NULL, &si) == 0 && si.si_code == SIGTRAP) {
		/*
		 * A signal handler was set up and the kernel reported the stop before its first
		 * instruction: @ip did not run, control moved to the handler.
		 */
		tr->stats.async++;
		tr->restart = false; /* tracing is off since the call: the handler enables it */
		return tr->enc->async(tr->enc_priv, ip, ev.next_ip, ev.next_traced, tr->tsc);
	}
	if (d.rep && ev.next_ip == ip)
		return 0; /* one more iteration of a REP string instruction */
	if (ev.next_ip == ip && d.kind != AUXCAP_TRACER_FAR && syscall_exit_stop(tr))
		return 0; /* nothing ran: the step only finished the call tracing began in */
	if (d.kind == AUXCAP_TRACER_OTHER && d.len && ev.next_ip != fall &&
	    hypervisor_emulated(tr, ip)) {
		r = stepped_over(tr, &d, &ev);
		if (r != 0)
			return r;
	}
	if (tr->restart) {
		/* Control came back to user space at the call (@ip), which ran again: the
		 * enable there goes first. */
		tr->restart = false;
		r = tr->enc->async(tr->enc_priv, 0, ip, ev.traced, tsc0);
		if (r < 0)
			return r;
	}
	if (d.kind == AUXCAP_TRACER_FAR && ev.next_ip == fall && syscall_restarts(&tr->regs, d.len)) {
		/* Into the kernel, not back: what the encoders write for a call that does not
		 * return (exit).  The next step decodes the call again, with the registers the
		 * kernel restarts it with. */
		ev.ended = true;
		ev.restarts = true;
		ev.next_traced = false;
		r = emit_insn(tr, &ev);
		if (r < 0)
			return r;
		tr->restart = true;
		tr->regs.rax = (int64_t)tr->regs.rax == -516 ? SYS_restart_syscall : tr->regs.orig_rax;
		tr->regs.rip = ip;
		return 1;
	}
	if (d.kind == AUXCAP_TRACER_FAR)
		count_new_task(tr, &before);
	r = judge_outcome(tr, &d, &ev);
	if (r < 0)
		return r;
	r = emit_insn(tr, &ev);
	return r < 0 ? r : 1;
}

/* ---- 5. stopping ------------------------------------------------------------------------- */

int auxcap_tracer_stop(struct auxcap_tracer *tr, bool kill_child)
{
	int r;

	if (!tr)
		return -EINVAL;
	if (tr->state != TRACER_TRACING)
		return 0;
	tr->state = TRACER_DONE;
	r = tr->enc->end(tr->enc_priv, tr->regs.rip, __rdtsc());
	if (r == 0)
		r = auxcap_tracer_out_flush(tr->out);
	if (tr->memfd >= 0) {
		(void)close(tr->memfd);
		tr->memfd = -1;
	}
	if (kill_child) {
		(void)kill(tr->pid, SIGKILL);
		if (tr->ours)
			reap(tr);
		else
			(void)ptrace(PTRACE_DETACH, tr->pid, NULL, NULL);
	} else {
		take_kick(tr);
		(void)ptrace(PTRACE_DETACH, tr->pid, NULL, ptrace_arg(tr->pending_sig));
	}
	return r;
}

void auxcap_tracer_yield(struct auxcap_tracer *tr)
{
	if (tr)
		tr->yield = true;
}

bool auxcap_tracer_at_far(struct auxcap_tracer *tr)
{
	struct auxcap_tracer_decoded d;

	return tr && tr->state == TRACER_TRACING && decode_at(tr, tr->regs.rip, &d) == 0 &&
	       d.kind == AUXCAP_TRACER_FAR;
}

int auxcap_tracer_step(struct auxcap_tracer *tr, uint64_t max_steps)
{
	uint64_t stops0;
	int r = 0;

	if (!tr || tr->state == TRACER_IDLE)
		return -EINVAL;
	/* Counted in stops, not instructions: a REP string instruction stops once per
	 * iteration (a memset of 140 KB took 4 s of the caller's time in one call). */
	stops0 = tr->stats.stops;
	while (tr->state == TRACER_TRACING && (!max_steps || tr->stats.stops - stops0 < max_steps)) {
		if ((tr->opts.max_insns && tr->stats.insns >= tr->opts.max_insns) ||
		    stop_asked(tr)) {
			r = auxcap_tracer_stop(tr, false);
			break;
		}
		/* A system call, which may block, is the first step of a call of its own; what it
		 * writes on its way out goes with this call's trace. */
		if (tr->opts.break_at_far && tr->stats.stops != stops0 && auxcap_tracer_at_far(tr)) {
			if (tr->enc->far_enter && in_filter(tr, tr->regs.rip))
				r = tr->enc->far_enter(tr->enc_priv, tr->tsc);
			break;
		}
		r = step_one(tr);
		if (r < 0)
			break;
		if (tr->yield) {
			/* What the trace holds back goes out too: it decodes up to here. */
			tr->yield = false;
			if (tr->enc->flush && tr->state == TRACER_TRACING)
				r = tr->enc->flush(tr->enc_priv, tr->regs.rip, tr->tsc);
			break;
		}
	}
	if (r < 0) {
		if (tr->state == TRACER_TRACING)
			(void)auxcap_tracer_stop(tr, tr->ours);
		return r;
	}
	r = auxcap_tracer_out_flush(tr->out);
	if (r < 0)
		return r;
	return tr->state == TRACER_TRACING ? 1 : 0;
}
