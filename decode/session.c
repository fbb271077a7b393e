/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The decode session: opening a capture and the first pass over its records.
 *
 * The first pass reads every record once and keeps only what decoding needs before any
 * trace is decoded: the executable mappings (the image, and the symbols), thread names and
 * process ids, the AUXTRACE_INFO words, the time conversion, and the AUXTRACE buffers
 * grouped into queues (by idx; in snapshot mode one queue per snapshot, or per run of
 * snapshots that continue each other: see queue_for()).  Trace payloads stay
 * in the reader's file mapping.  The merged stream (merge.c) then reads the records again.
 *
 * Data lost at a TRUNCATED AUX record cuts a queue's stream: the hardware stopped where the
 * data of its last transaction ended, possibly inside a record or packet, and what follows
 * in the AUX area (the driver's padding, then what was written once the event ran again)
 * does not continue it.  The piece holding that point is split there and the part after it
 * starts a new stretch (not contiguous), so no backend reads the padding as the rest of the
 * cut record (Arm SPE: a timestamp packet completed with padding bytes gave a wrong time).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "auxcap/log.h"
#include "auxcap/proc.h"
#include "auxcap/timeconv.h"
#include "auxcap/tracepoint.h"
#include "decode_int.h"
#include "grow.h"
#include "sorted.h"
#if AUXCAP_HAVE_LIBELF
#include "binaries.h"
#include "elf_file.h"
#endif

#define AUX_FLAG_TRUNCATED 0x01 /* PERF_AUX_FLAG_TRUNCATED */
#define AUX_FLAG_OVERWRITE 0x02 /* PERF_AUX_FLAG_OVERWRITE */

static void set_err(struct auxcap_decode *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_err(struct auxcap_decode *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->errtext, sizeof(d->errtext), fmt, ap);
	va_end(ap);
	if (d->opts.errbuf && d->opts.errlen)
		snprintf(d->opts.errbuf, d->opts.errlen, "%s", d->errtext);
}

/* ---- threads --------------------------------------------------------------------------- */

struct tid_info *decode_tid(struct auxcap_decode *d, int32_t tid, bool create)
{
	size_t mask, i;

	if (tid < 0)
		return NULL;
	if (create && (d->tids_n + 1) * 2 > d->tids_cap) {
		size_t cap = d->tids_cap ? 2 * d->tids_cap : 64;
		struct tid_info *nt = calloc(cap, sizeof(*nt));

		if (!nt)
			return NULL;
		for (size_t k = 0; k < cap; k++)
			nt[k].tid = -1;
		for (size_t k = 0; k < d->tids_cap; k++) {
			if (d->tids[k].tid < 0)
				continue;
			for (i = (size_t)d->tids[k].tid & (cap - 1); nt[i].tid >= 0; i = (i + 1) & (cap - 1))
				;
			nt[i] = d->tids[k];
		}
		free(d->tids);
		d->tids = nt;
		d->tids_cap = cap;
		d->tid_gen++;
	}
	if (!d->tids_cap)
		return NULL;
	mask = d->tids_cap - 1;
	for (i = (size_t)tid & mask; d->tids[i].tid >= 0; i = (i + 1) & mask)
		if (d->tids[i].tid == tid)
			return &d->tids[i];
	if (!create)
		return NULL;
	d->tid_gen++;
	d->tids[i].tid = tid;
	d->tids[i].pid = -1;
	d->tids[i].comm[0] = '\0';
	d->tids_n++;
	return &d->tids[i];
}

static void note_tid(struct auxcap_decode *d, uint32_t pid, uint32_t tid, const char *comm)
{
	struct tid_info *t;

	if ((int32_t)tid < 0)
		return;
	t = decode_tid(d, (int32_t)tid, true);
	if (!t)
		return;
	if ((int32_t)pid >= 0)
		t->pid = (int32_t)pid;
	if (comm)
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
	d->tid_gen++;
}

const char *auxcap_decode_comm(const struct auxcap_decode *d, int32_t tid)
{
	struct tid_info *t = decode_tid((struct auxcap_decode *)d, tid, false);

	return t && t->comm[0] ? t->comm : NULL;
}

/* ---- time ------------------------------------------------------------------------------ */

uint64_t decode_record_time(const struct auxcap_perf_event *ev, bool *has_time)
{
	const struct auxcap_record *rec = &ev->rec;

	*has_time = false;
	if (rec->type == PERF_RECORD_SAMPLE) {
		if (ev->evsel && (ev->evsel->layout.sample_type & PERF_SAMPLE_TIME)) {
			*has_time = true;
			return rec->u.sample.time;
		}
		return 0;
	}
	if (rec->type == AUXCAP_PERF_RECORD_AUXTRACE_ERROR) {
		if (ev->u.auxtrace_error.fmt >= 1 && ev->u.auxtrace_error.time) {
			*has_time = true;
			return ev->u.auxtrace_error.time;
		}
		return 0;
	}
	if (rec->type < AUXCAP_PERF_RECORD_HEADER_ATTR && rec->has_sample_id &&
	    (rec->sid.present & PERF_SAMPLE_TIME)) {
		*has_time = true;
		return rec->sid.time;
	}
	return 0;
}

/* ---- the image ------------------------------------------------------------------------- */

/* @time: when the mapping was made (perf time), 0 if not known. */
static int add_map(struct auxcap_decode *d, const char *path, uint64_t off, uint64_t size,
		   uint64_t vaddr, int64_t pid, uint64_t time)
{
	struct auxcap_image_map *m;
	char *p;

	if (d->nr_maps == d->cap_maps) {
		size_t cap = d->cap_maps ? 2 * d->cap_maps : 16;
		struct auxcap_image_map *nm = realloc(d->maps, cap * sizeof(*nm));
		struct auxcap_image_span *ns;
		uint64_t *nt;

		if (!nm)
			return -ENOMEM;
		d->maps = nm;
		nt = realloc(d->map_times, cap * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		d->map_times = nt;
		ns = realloc(d->map_spans, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		d->map_spans = ns;
		d->cap_maps = cap;
	}
	p = strdup(path);
	if (!p)
		return -ENOMEM;
	d->map_times[d->nr_maps] = time;
	d->map_spans[d->nr_maps] = (struct auxcap_image_span){ 0, UINT64_MAX };
	m = &d->maps[d->nr_maps++];
	*m = (struct auxcap_image_map){ p, off, size, vaddr, pid };
	return auxcap_symbols_add(d->syms, (int32_t)pid, vaddr, size, off, path, time);
}

/*
 * The execs of the capture with a time, for when each mapping was in place.  Records reach
 * the file in the order the rings were drained, not in time order: with a ring per CPU, a
 * process that exec'd on one CPU and mapped its libraries on another can have those MMAP2
 * records written before its COMM exec.  So a mapping belongs to the image its time falls in
 * (set_spans()), whatever its place in the file.
 */
struct exec_at {
	int32_t pid;
	uint64_t time;
};

struct execs {
	struct exec_at *v;
	size_t n, cap;
};

/*
 * FORKs met before their parent's COMM (the records of several CPUs' rings come in the order
 * they were copied out, not in time order): the new task takes its parent's command once the
 * pass has seen it.
 */
struct late_forks {
	struct late_fork {
		uint32_t pid, tid, ptid;
	} *v;
	size_t n, cap;
};

static int exec_add(struct execs *e, int32_t pid, uint64_t time)
{
	if (auxcap_grow_array(&e->v, &e->cap, e->n + 1, 8, sizeof(*e->v)) < 0)
		return -ENOMEM;
	e->v[e->n++] = (struct exec_at){ pid, time };
	return 0;
}

static int cmp_exec(const void *a, const void *b)
{
	const struct exec_at *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->time < y->time ? -1 : x->time > y->time;
}

/*
 * CPU @cpu runs process @pid (-1: one the capture does not follow) from @time on.  Records
 * come nearly in time order: each goes in after those at its time or earlier.
 */
static int note_task(struct auxcap_decode *d, uint32_t cpu, int64_t pid, uint64_t time)
{
	struct cpu_tasks *ct;
	size_t i;

	if (cpu >= 4096)
		return 0; /* not a CPU number: ignored, as a record without one */
	if (cpu >= d->nr_cpu_tasks) {
		size_t n = d->nr_cpu_tasks;

		if (auxcap_grow_array(&d->cpu_tasks, &n, cpu + 1, 8, sizeof(*d->cpu_tasks)) < 0)
			return -ENOMEM;
		memset(d->cpu_tasks + d->nr_cpu_tasks, 0,
		       (n - d->nr_cpu_tasks) * sizeof(*d->cpu_tasks));
		d->nr_cpu_tasks = n;
	}
	ct = &d->cpu_tasks[cpu];
	if (ct->n && ct->v[ct->n - 1].pid == pid && ct->v[ct->n - 1].since <= time)
		return 0; /* no change */
	if (auxcap_grow_array(&ct->v, &ct->cap, ct->n + 1, 16, sizeof(*ct->v)) < 0)
		return -ENOMEM;
	for (i = ct->n; i && ct->v[i - 1].since > time; i--)
		;
	memmove(ct->v + i + 1, ct->v + i, (ct->n - i) * sizeof(*ct->v));
	ct->v[i] = (struct auxcap_cpu_task){ time, pid };
	ct->n++;
	return 0;
}

/* The process a context switch or ITRACE_START record puts on its CPU (note_task()). */
static int note_switch(struct auxcap_decode *d, const struct auxcap_record *rec, uint64_t t)
{
	const struct auxcap_sample_id *sid = &rec->sid;
	bool out = (rec->misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
	int64_t pid;

	if (!rec->has_sample_id || !(sid->present & PERF_SAMPLE_CPU))
		return 0;
	if (rec->type == PERF_RECORD_ITRACE_START)
		pid = rec->u.itrace_start.pid;
	else if (!out)
		pid = (sid->present & PERF_SAMPLE_TID) ? (int64_t)sid->pid : -1;
	else if (rec->type == PERF_RECORD_SWITCH_CPU_WIDE)
		pid = rec->u.context_switch.next_prev_pid; /* the one coming in */
	else
		pid = -1; /* a followed task leaves: who comes next is not recorded */
	return note_task(d, sid->cpu, pid, t);
}

/*
 * After the first pass: in each CPU's list a process without mappings of its own becomes -1
 * (its queue's decoder sees every mapping, as decode_queue_maps() gives a task's queue), and
 * a CPU that ran two such processes or more is marked for its decoders.
 */
static int settle_tasks(struct auxcap_decode *d)
{
	uint64_t *pids; /* the processes with mappings of their own, ascending */
	size_t np = 0;

	if (!d->nr_cpu_tasks)
		return 0;
	pids = malloc((d->nr_maps + 1) * sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	for (size_t i = 0; i < d->nr_maps; i++)
		if (d->maps[i].pid >= 0)
			pids[np++] = (uint64_t)d->maps[i].pid;
	np = auxcap_sort_unique_u64(pids, np);
	for (size_t c = 0; c < d->nr_cpu_tasks; c++) {
		struct cpu_tasks *ct = &d->cpu_tasks[c];
		int64_t first = -1;

		for (size_t i = 0; i < ct->n; i++) {
			int64_t pid = ct->v[i].pid;
			size_t k = pid >= 0 ? auxcap_upper_bound_u64(pids, np, (uint64_t)pid) : 0;

			if (pid >= 0 && !(k && pids[k - 1] == (uint64_t)pid))
				pid = ct->v[i].pid = -1;
			if (pid < 0)
				continue;
			if (first < 0)
				first = pid;
			else if (pid != first)
				ct->several = true;
		}
	}
	free(pids);
	return 0;
}

/* The first exec of a later process than @pid, or of @pid after @t. */
static size_t exec_after(const struct execs *e, int64_t pid, uint64_t t)
{
	size_t lo = 0, hi = e->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->v[mid].pid < pid || (e->v[mid].pid == pid && e->v[mid].time <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Each mapping's span: from the last exec of its process at or before the time it was made
 * to the next exec after it (UINT64_MAX if none).  A mapping whose time is not known is taken
 * for one made at the start.  A process's first exec starts its first span only when it had
 * mappings before it (a traced command's own exec does not: its image is there from the
 * start).  The symbols get the same spans.
 */
static int set_spans(struct auxcap_decode *d, struct execs *e)
{
	bool *before; /* per exec: its process had mappings before it */

	if (!e->n)
		return 0;
	d->exec_times = malloc(e->n * sizeof(*d->exec_times));
	if (!d->exec_times)
		return -ENOMEM;
	for (size_t i = 0; i < e->n; i++)
		d->exec_times[i] = e->v[i].time;
	qsort(d->exec_times, e->n, sizeof(*d->exec_times), auxcap_cmp_u64);
	d->nr_exec_times = e->n;
	qsort(e->v, e->n, sizeof(*e->v), cmp_exec);
	d->exec_pids = malloc(e->n * sizeof(*d->exec_pids));
	d->exec_pid_times = malloc(e->n * sizeof(*d->exec_pid_times));
	if (!d->exec_pids || !d->exec_pid_times)
		return -ENOMEM;
	for (size_t i = 0; i < e->n; i++) {
		d->exec_pids[i] = e->v[i].pid;
		d->exec_pid_times[i] = e->v[i].time;
	}
	before = calloc(e->n, sizeof(*before));
	if (!before)
		return -ENOMEM;
	for (size_t i = 0; i < d->nr_maps; i++) {
		int64_t pid = d->maps[i].pid;
		size_t k = exec_after(e, pid, d->map_times[i]);

		if (pid >= 0 && k < e->n && e->v[k].pid == pid && (!k || e->v[k - 1].pid != pid))
			before[k] = true;
	}
	for (size_t i = 0; i < d->nr_maps; i++) {
		int64_t pid = d->maps[i].pid;
		struct auxcap_image_span sp = { 0, UINT64_MAX };
		size_t k;

		if (pid < 0)
			continue;
		k = exec_after(e, pid, d->map_times[i]);
		if (k < e->n && e->v[k].pid == pid)
			sp.until = e->v[k].time;
		if (k > 0 && e->v[k - 1].pid == pid) {
			bool first = k == 1 || e->v[k - 2].pid != pid;

			if (!first || before[k - 1])
				sp.since = e->v[k - 1].time;
		}
		if (sp.since == 0 && sp.until == UINT64_MAX)
			continue;
		d->map_spans[i] = sp;
		d->have_spans = true;
		auxcap_symbols_set_span(d->syms, i, sp.since, sp.until);
	}
	free(before);
	return 0;
}

/* Forget @pid's mappings made before @time (UINT64_MAX: all of them). */
static void drop_maps_before(struct auxcap_decode *d, int32_t pid, uint64_t time)
{
	auxcap_symbols_drop_pid(d->syms, pid, time);
	if (time == UINT64_MAX)
		data_maps_drop(&d->dmaps, pid);
	for (size_t i = 0; i < d->nr_maps; i++)
		if (d->maps[i].pid == (int64_t)pid && d->map_times[i] < time)
			d->maps[i].pid = -2; /* never matches */
}

struct missing {
	char **paths;
	size_t n, cap;
};

static bool missing_has(const struct missing *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->paths[i], path))
			return true;
	return false;
}

static void missing_add(struct missing *m, const char *path)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 8;
		char **np = realloc(m->paths, cap * sizeof(*np));

		if (!np)
			return;
		m->paths = np;
		m->cap = cap;
	}
	m->paths[m->n] = strdup(path);
	if (m->paths[m->n])
		m->n++;
}

/* The build-id the capture recorded for @path (MMAP2 with build-id, or the BUILD_ID
 * feature), 0 bytes if none. */
static size_t mapping_build_id(const struct auxcap_decode *d, const struct auxcap_record *rec,
			       const uint8_t **ret_id)
{
	const struct auxcap_perf_features *f = auxcap_perf_reader_features(d->rd);

	if (rec->type == PERF_RECORD_MMAP2 && rec->u.mmap.build_id_size) {
		*ret_id = rec->u.mmap.build_id;
		return rec->u.mmap.build_id_size;
	}
	for (size_t i = 0; i < f->nr_build_ids; i++)
		if (f->build_ids[i].filename && !strcmp(f->build_ids[i].filename,
							rec->u.mmap.filename)) {
			*ret_id = f->build_ids[i].id;
			return f->build_ids[i].size;
		}
	return 0;
}

/* The file @path was found at (a previous mapping of it), or NULL. */
static const char *path_found(struct auxcap_decode *d, const char *path)
{
	for (size_t i = 0; i < d->nr_found; i++)
		if (!strcmp(d->found[i].mapped, path))
			return d->found[i].file;
	return NULL;
}

/*
 * An executable mapping of the capture joins the image and the symbols.  Its binary is the
 * mapped path when its build-id matches the one recorded (or none was), else the copy in the
 * capture's archive or perf's build-id cache (decode/binaries.h); a missing one is reported
 * once.
 */
static int on_mmap(struct auxcap_decode *d, const struct auxcap_record *rec, uint64_t time,
		   struct missing *miss)
{
	const char *fn = rec->u.mmap.filename, *file;
	const uint8_t *id = NULL;
	size_t id_size;
	char *found = NULL;
	bool vdso;
	int r;

	/* Every mapping of user space, code and data, names data addresses. */
	if (fn && (rec->misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_KERNEL) {
		r = data_maps_add(&d->dmaps, (int32_t)rec->u.mmap.pid, rec->u.mmap.addr,
				  rec->u.mmap.len, rec->u.mmap.pgoff, fn, time);
		if (r < 0)
			return r;
	}
	if (rec->type == PERF_RECORD_MMAP2 && !(rec->u.mmap.prot & PROT_EXEC))
		return 0;
	if (rec->type == PERF_RECORD_MMAP && (rec->misc & PERF_RECORD_MISC_MMAP_DATA))
		return 0;
	if (!fn)
		return 0;
	/* The kernel's text, as perf record writes it: its _text is the pgoff. */
	if (rec->type == PERF_RECORD_MMAP && !strncmp(fn, "[kernel.kallsyms]", 17) &&
	    (rec->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
		d->ktext = rec->u.mmap.pgoff;
	/* [kernel.kallsyms]_text, //anon, ...: no code; the vdso's only by its build-id (the
	 * image auxcap record saved in the build-id cache) */
	vdso = !strcmp(fn, "[vdso]");
	if (fn[0] != '/' && !vdso)
		return 0;
	if (missing_has(miss, fn))
		return 0;
	file = path_found(d, fn);
	if (!file) {
		id_size = mapping_build_id(d, rec, &id);
		if (vdso && !id_size)
			return 0; /* a capture from before the vdso was saved */
#if AUXCAP_HAVE_LIBELF
		r = auxcap_binary_find(d->path, fn, id, id_size, &found);
		/* Not ELF (raw code, a JIT's file) and no build-id to check: the file as it is. */
		if (r == -ENOENT && !id_size && access(fn, R_OK) == 0) {
			found = strdup(fn);
			r = found ? 0 : -ENOMEM;
		}
#else
		r = access(fn, R_OK) < 0 ? -errno : 0;
		found = r == 0 ? strdup(fn) : NULL;
		if (r == 0 && !found)
			r = -ENOMEM;
#endif
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			auxcap_log(AUXCAP_LOG_WARN,
				   "'%s' (mapped at 0x%" PRIx64 ") %s; its code is not decoded (run "
				   "'auxcap archive' where it was recorded, or copy it back)",
				   fn, rec->u.mmap.addr,
				   vdso ? "has no saved image (neither in the capture's archive nor in "
					  "~/.debug/.build-id)"
				   : id_size ? "is missing or was rebuilt (build-id differs)"
					     : "cannot be read");
			d->info.missing_binaries++;
			missing_add(miss, fn);
			return 0;
		}
		if (d->nr_found == d->cap_found) {
			size_t cap = d->cap_found ? 2 * d->cap_found : 8;
			struct found_file *nf = realloc(d->found, cap * sizeof(*nf));

			if (!nf) {
				free(found);
				return -ENOMEM;
			}
			d->found = nf;
			d->cap_found = cap;
		}
		d->found[d->nr_found].file = found;
		d->found[d->nr_found].mapped = strdup(fn);
		if (!d->found[d->nr_found].mapped) {
			free(found);
			return -ENOMEM;
		}
		file = d->found[d->nr_found++].file;
	}
	return add_map(d, file, rec->u.mmap.pgoff, rec->u.mmap.len, rec->u.mmap.addr,
		       (int32_t)rec->u.mmap.pid, time);
}

/* ---- queues ---------------------------------------------------------------------------- */

static struct dqueue *new_queue(struct auxcap_decode *d)
{
	struct dqueue *q;

	if (d->nr_queues == d->cap_queues) {
		size_t cap = d->cap_queues ? 2 * d->cap_queues : 8;
		struct dqueue *nq = realloc(d->queues, cap * sizeof(*nq));

		if (!nq)
			return NULL;
		d->queues = nq;
		d->cap_queues = cap;
	}
	q = &d->queues[d->nr_queues++];
	memset(q, 0, sizeof(*q));
	return q;
}

/* Whether a buffer at stream position @offset follows @prev without a hole.  The writer pads
 * each payload to 8 bytes; the next buffer's offset says how many of @prev's were trace. */
static bool piece_continues(const struct dpiece *prev, uint64_t offset)
{
	uint64_t end = prev->offset + prev->len;

	return offset <= end && offset + 8 > end && offset >= prev->offset;
}

static int add_piece(struct dqueue *q, const uint8_t *data, uint64_t len, uint64_t offset,
		     uint64_t time_hint, uint64_t first_time)
{
	struct dpiece *p;

	if (q->info.nr_pieces == q->cap_pieces) {
		size_t cap = q->cap_pieces ? 2 * q->cap_pieces : 4;
		struct dpiece *np = realloc(q->pieces, cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		q->pieces = np;
		q->cap_pieces = cap;
	}
	p = &q->pieces[q->info.nr_pieces];
	*p = (struct dpiece){ data, len, offset, time_hint, 0, false };
	if (!q->info.nr_pieces && !q->info.snapshot)
		p->time_from = first_time; /* a full trace: written since tracing began */
	if (q->info.nr_pieces) {
		struct dpiece *prev = p - 1;

		if (piece_continues(prev, offset)) {
			q->info.bytes -= prev->len - (offset - prev->offset);
			prev->len = offset - prev->offset;
			p->contiguous = true;
			if (!q->info.snapshot)
				p->time_from = prev->time_hint;
		} else {
			q->info.discontinuities++;
		}
	}
	q->info.nr_pieces++;
	q->info.bytes += len;
	return 0;
}

/*
 * The queue of an AUXTRACE buffer: its stream's (by idx); in snapshot mode the previous
 * snapshot's of the same buffer (idx, CPU, task) when the buffer starts where that one
 * ended (the capture wrote only what was new since: one stream), else a queue of its own,
 * marked as following lost trace when an earlier snapshot of the buffer exists.
 */
static struct dqueue *queue_for(struct auxcap_decode *d, const struct auxcap_perf_event *ev,
				bool snapshot)
{
	uint32_t idx = ev->u.auxtrace.idx;
	int32_t cpu = (int32_t)ev->u.auxtrace.cpu, tid = (int32_t)ev->u.auxtrace.tid;
	bool lost_before = false;
	struct dqueue *q;

	for (size_t i = 0; !snapshot && i < d->nr_queues; i++)
		if (d->queues[i].info.idx == idx)
			return &d->queues[i];
	for (size_t i = d->nr_queues; snapshot && i-- > 0;) {
		q = &d->queues[i];
		if (!q->info.snapshot || q->info.idx != idx || q->info.cpu != cpu ||
		    q->info.tid != tid)
			continue;
		/* the newest snapshot of this buffer */
		if (q->info.nr_pieces && piece_continues(&q->pieces[q->info.nr_pieces - 1],
							 ev->u.auxtrace.offset))
			return q;
		lost_before = true;
		break;
	}
	q = new_queue(d);
	if (!q)
		return NULL;
	q->info.idx = idx;
	q->info.cpu = cpu;
	q->info.tid = tid;
	q->info.pid = -1;
	q->info.snapshot = snapshot;
	q->lost_before = lost_before;
	return q;
}

/* ---- data lost at TRUNCATED AUX records ---------------------------------------------------- */

/* One AUX event's stream as its PERF_RECORD_AUX records describe it. */
struct aux_stream {
	uint64_t id;	  /* sample id of its AUX records (0: none) */
	int32_t cpu, tid; /* of its records, -1 if not known */
	uint64_t end;	  /* stream position where its last data ended */
	bool have_end;
};

struct aux_cut {
	int32_t cpu, tid; /* the stream's, to find its queue */
	uint64_t pos;	  /* stream position where the hardware stopped */
};

struct aux_cuts {
	struct aux_stream *st;
	size_t nst, cap_st;
	struct aux_cut *cut;
	size_t ncut, cap_cut;
};

static void aux_cuts_fini(struct aux_cuts *c)
{
	free(c->st);
	free(c->cut);
}

/* A PERF_RECORD_AUX: note where its data ends; a TRUNCATED one cuts the stream there. */
static int aux_cuts_note(struct aux_cuts *c, const struct auxcap_record *rec)
{
	const struct auxcap_sample_id *sid = &rec->sid;
	uint64_t id = rec->has_sample_id && (sid->present & (PERF_SAMPLE_ID |
							     PERF_SAMPLE_IDENTIFIER)) ? sid->id : 0;
	int32_t cpu = rec->has_sample_id && (sid->present & PERF_SAMPLE_CPU) ? (int32_t)sid->cpu
									      : -1;
	int32_t tid = rec->has_sample_id && (sid->present & PERF_SAMPLE_TID) ? (int32_t)sid->tid
									      : -1;
	struct aux_stream *st = NULL;
	uint64_t pos;

	/* Per CPU the records name the task running, per task the CPU it ran on: the id is
	 * the event's own. */
	for (size_t i = 0; i < c->nst; i++)
		if (id ? c->st[i].id == id : c->st[i].cpu == cpu && c->st[i].tid == tid)
			st = &c->st[i];
	if (!st) {
		if (c->nst == c->cap_st) {
			size_t cap = c->cap_st ? 2 * c->cap_st : 4;
			struct aux_stream *n = realloc(c->st, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			c->st = n;
			c->cap_st = cap;
		}
		st = &c->st[c->nst++];
		*st = (struct aux_stream){ id, cpu, tid, 0, false };
	}
	if (rec->u.aux.aux_size || !st->have_end) {
		st->end = rec->u.aux.aux_offset + rec->u.aux.aux_size;
		st->have_end = true;
	}
	if (!(rec->u.aux.flags & AUX_FLAG_TRUNCATED) || (rec->u.aux.flags & AUX_FLAG_OVERWRITE))
		return 0;
	pos = st->end;
	if (c->ncut == c->cap_cut) {
		size_t cap = c->cap_cut ? 2 * c->cap_cut : 8;
		struct aux_cut *n = realloc(c->cut, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->cut = n;
		c->cap_cut = cap;
	}
	c->cut[c->ncut++] = (struct aux_cut){ st->cpu, st->tid, pos };
	return 0;
}

/* Cut @q's stream at @pos: the piece starting there, or the part of a piece after it, does
 * not continue what came before. */
static int queue_cut(struct dqueue *q, uint64_t pos)
{
	for (size_t i = 0; i < q->info.nr_pieces; i++) {
		struct dpiece *p = &q->pieces[i];

		if (p->offset >= pos) {
			if (p->offset == pos && p->contiguous) {
				p->contiguous = false;
				q->info.discontinuities++;
			}
			return 0;
		}
		if (pos < p->offset + p->len) {
			uint64_t head = pos - p->offset;

			if (q->info.nr_pieces == q->cap_pieces) {
				size_t cap = 2 * q->cap_pieces;
				struct dpiece *np = realloc(q->pieces, cap * sizeof(*np));

				if (!np)
					return -ENOMEM;
				q->pieces = np;
				q->cap_pieces = cap;
				p = &q->pieces[i];
			}
			memmove(p + 2, p + 1, (q->info.nr_pieces - i - 1) * sizeof(*p));
			p[1] = (struct dpiece){ p->data + head, p->len - head, pos, p->time_hint,
						false };
			p->len = head;
			q->info.nr_pieces++;
			q->info.discontinuities++;
			return 0;
		}
	}
	return 0;
}

static int apply_cuts(struct auxcap_decode *d, const struct aux_cuts *c)
{
	size_t streams = 0;

	for (size_t i = 0; i < d->nr_queues; i++)
		streams += !d->queues[i].info.snapshot;
	for (size_t k = 0; k < c->ncut; k++) {
		const struct aux_cut *x = &c->cut[k];

		for (size_t i = 0; i < d->nr_queues; i++) {
			struct dqueue *q = &d->queues[i];
			bool mine = q->info.cpu >= 0 ? x->cpu == q->info.cpu
				    : x->tid >= 0    ? x->tid == q->info.tid
						     : streams == 1;
			int r;

			if (q->info.snapshot || !mine)
				continue;
			r = queue_cut(q, x->pos);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* ---- backend selection ----------------------------------------------------------------- */

/* The backend of the AUX event named @name ("intel_pt//u", "arm_spe_0/ts_enable=1/"). */
static const struct auxcap_backend_ops *backend_of_name(const char *name)
{
	char pmu[64];
	size_t n;

	if (!name)
		return NULL;
	n = strcspn(name, "/:");
	if (!n || n >= sizeof(pmu))
		return NULL;
	memcpy(pmu, name, n);
	pmu[n] = '\0';
	return auxcap_backend_for_pmu(pmu, NULL);
}

/* perf record --kcore's copy of the kernel's @name ("kcore", "kallsyms") in the capture's
 * directory of perf's format (the capture path is that directory): malloc'd, or NULL. */
static char *perf_kcore_dir(const struct auxcap_decode *d, const char *name)
{
	struct stat st;
	char *p;

	if (!d->path || stat(d->path, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    asprintf(&p, "%s/kcore_dir/%s", d->path, name) < 0)
		return NULL;
	if (access(p, R_OK) == 0)
		return p;
	free(p);
	return NULL;
}

/*
 * Kernel addresses are named by $AUXCAP_KALLSYMS when set (a copy of the capturing machine's
 * /proc/kallsyms), else by perf record --kcore's copy in the capture's directory, else by
 * FILE.archive/kallsyms (auxcap archive's and record --kcore's copy), else by this
 * machine's /proc/kallsyms when the capture was made by this very kernel, boot and layout:
 * the same release and the same _text (KASLR moves it at each boot) as the capture's
 * [kernel.kallsyms]_text mapping.  Otherwise they stay unnamed.
 */
static int kernel_symbols(struct auxcap_decode *d)
{
	const struct auxcap_perf_features *ft = auxcap_perf_reader_features(d->rd);
	const char *env = getenv("AUXCAP_KALLSYMS");
	char *dir = NULL, *saved = NULL;
	int r = 0;

	if (env && *env)
		return auxcap_symbols_set_kallsyms(d->syms, env);
	if (!d->ktext)
		return 0;
	/* perf record --kcore's, in its directory: the capture's own kernel */
	saved = perf_kcore_dir(d, "kallsyms");
	if (saved) {
		r = auxcap_symbols_set_kallsyms(d->syms, saved);
		free(saved);
		return r;
	}
	/* the copy auxcap archive kept beside the capture: the capture's own kernel */
	if (d->path && auxcap_archive_dir(d->path, &dir) == 0 &&
	    asprintf(&saved, "%s/kallsyms", dir) < 0)
		saved = NULL; /* (asprintf() leaves it undefined) */
	if (saved && access(saved, R_OK) == 0)
		r = auxcap_symbols_set_kallsyms(d->syms, saved);
	else if (ft && auxcap_proc_kernel_is(ft->osrelease, d->ktext))
		r = auxcap_symbols_set_kallsyms(d->syms, "/proc/kallsyms");
	free(dir);
	free(saved);
	return r;
}

/*
 * The kernel's code, for a trace of it (intel_pt//k, intel_pt//): @vmlinux (opts.vmlinux),
 * its executable segments moved to where the capture's kernel had its text (KASLR), else the
 * copy of the capturing kernel's code that record --kcore or archive made ($AUXCAP_KCORE, else
 * perf record --kcore's in the capture's directory, else FILE.archive/kcore), when its text
 * is where the capture's kernel had it (perf's: when its kallsyms says so: perf's copy
 * starts a little before the text, at a page or a symbol), else, for a trace that can hold
 * kernel code, the vmlinux with the build-id of the capture's kernel (auxcap_vmlinux_find():
 * debug packages).  Added for every
 * process, to the symbols too: a vmlinux names kernel addresses (and has their lines), a
 * copy has no symbols and kallsyms names them.  Returns 1 if the kernel's code is in the
 * image, 0 if not, or a negative errno (an unreadable file given explicitly; error set).
 */
static int kernel_code(struct auxcap_decode *d, const char *vmlinux)
{
#if AUXCAP_HAVE_LIBELF
	const struct auxcap_perf_features *ft = auxcap_perf_reader_features(d->rd);
	const char *env = getenv("AUXCAP_KCORE"), *path = vmlinux;
	const struct auxcap_elf_segment *segs;
	struct auxcap_elf *elf = NULL;
	char *dir = NULL, *copy = NULL, *found = NULL;
	bool given = true, perf = false, image = vmlinux != NULL;
	bool traced = d->aux_attr && !d->aux_attr->exclude_kernel;
	uint64_t bias = 0;
	size_t n, added = 0, first;
	int r = 0;

	if (!path && env && *env)
		path = env;
	if (!path && d->ktext && (copy = perf_kcore_dir(d, "kcore"))) {
		uint64_t lo, hi;

		if (asprintf(&dir, "%s/kcore_dir", d->path) < 0)
			dir = NULL;
		if (!dir || auxcap_proc_kernel_text(dir, &lo, &hi) < 0 || lo != d->ktext) {
			auxcap_log(AUXCAP_LOG_WARN,
				   "'%s' is not the capture's kernel (its kallsyms is missing or puts "
				   "_text elsewhere); kernel code is not decoded",
				   copy);
			goto out;
		}
		path = copy;
		given = false;
		perf = true;
	}
	if (!path && d->ktext && d->path && auxcap_archive_dir(d->path, &dir) == 0 &&
	    asprintf(&copy, "%s/kcore", dir) >= 0 && access(copy, R_OK) == 0) {
		path = copy;
		given = false;
	}
	/* the vmlinux of the capture's kernel, by its build-id, where debug packages put it:
	 * looked for (and opened) only when the trace can hold kernel code */
	for (size_t i = 0; !path && traced && i < ft->nr_build_ids; i++) {
		const struct auxcap_perf_build_id *b = &ft->build_ids[i];

		if (strcmp(b->filename, "[kernel.kallsyms]"))
			continue;
		r = auxcap_vmlinux_find(d->path, ft->osrelease, b->id, b->size, &found);
		if (r == -ENOMEM)
			goto out;
		r = 0;
		if (found) {
			path = found;
			given = false;
			image = true;
		}
		break;
	}
	if (!path)
		goto out;
	r = auxcap_elf_open(path, &elf);
	if (r < 0) {
		if (r == -ENOMEM || given)
			set_err(d, "cannot read the kernel's code '%s': %s%s", path,
				r == -ENOEXEC ? "not an ELF file" : strerror(-r),
				vmlinux ? " (--vmlinux takes the kernel build's vmlinux)"
					: " ($AUXCAP_KCORE takes a copy made by record --kcore)");
		else
			auxcap_log(AUXCAP_LOG_WARN, "cannot read '%s': %s; kernel code is not decoded",
				   path, strerror(-r));
		r = r == -ENOMEM || given ? r : 0;
		goto out;
	}
	n = auxcap_elf_segments(elf, &segs);
	for (first = 0; first < n && !(segs[first].exec && segs[first].filesz); first++)
		;
	if (first == n) {
		auxcap_log(AUXCAP_LOG_WARN, "'%s' has no kernel code (no executable segment)", path);
		goto out;
	}
	if (image && d->ktext) {
		bias = d->ktext - segs[first].vaddr;
	} else if (!image && !perf && d->ktext && segs[first].vaddr != d->ktext) {
		auxcap_log(AUXCAP_LOG_WARN,
			   "'%s' holds another boot's kernel code (its text at 0x%" PRIx64
			   ", the capture's at 0x%" PRIx64 "); kernel code is not decoded",
			   path, segs[first].vaddr, d->ktext);
		goto out;
	}
	for (size_t i = first; i < n && r >= 0; i++) {
		if (!segs[i].exec || !segs[i].filesz)
			continue;
		r = add_map(d, path, segs[i].offset, segs[i].filesz, segs[i].vaddr + bias, -1, 0);
		added++;
	}
	if (r == 0)
		r = added > 0;
out:
	auxcap_elf_free(elf);
	free(found);
	free(copy);
	free(dir);
	return r;
#else
	if (vmlinux) {
		set_err(d, "cannot read the kernel's code '%s': this build has no libelf", vmlinux);
		return -EOPNOTSUPP;
	}
	(void)d;
	return 0;
#endif
}

static void pick_aux_evsel(struct auxcap_decode *d)
{
	for (size_t i = 0; i < auxcap_perf_reader_nr_evsels(d->rd); i++) {
		const struct auxcap_perf_evsel *es = auxcap_perf_reader_evsel(d->rd, i);
		const struct auxcap_backend_ops *b = backend_of_name(es->name);

		/* The event's name decides only without AUXTRACE_INFO: with one, its type does
		 * (an unknown type is a plug-in's trace, not the PMU's built-in format). */
		if (b && (b == d->backend || (!d->backend && !d->auxtrace_type))) {
			d->aux_evsel = es;
			if (!d->backend)
				d->backend = b;
			break;
		}
		if (!d->aux_evsel && es->attr->type >= PERF_TYPE_MAX)
			d->aux_evsel = es;
	}
	if (d->aux_evsel)
		d->aux_attr = d->aux_evsel->attr;
}

/* ---- the first pass -------------------------------------------------------------------- */

/*
 * A capture saved from a pipe-mode stream (record -o -) has its build-ids as HEADER_BUILD_ID
 * records at the end of the stream, after the mappings that need them to find the binaries
 * in the capture's archive: read through the file once for them (the reader gathers them
 * into the features), then start over.  A damaged stream is first_pass()'s to report.
 */
static int build_ids_ahead(struct auxcap_decode *d)
{
	struct auxcap_perf_event ev;
	int r;

	if (!auxcap_perf_reader_info(d->rd)->pipe)
		return 0;
	while ((r = auxcap_perf_reader_next(d->rd, &ev)) == 1)
		;
	if (r == -ENOMEM)
		return r;
	return auxcap_perf_reader_rewind(d->rd);
}

static int first_pass(struct auxcap_decode *d)
{
	struct auxcap_perf_event ev;
	struct missing miss = { 0 };
	struct execs execs = { 0 };
	struct late_forks late = { 0 };
	struct aux_cuts cuts = { 0 };
	uint64_t last_time = 0, first_time = 0;
	bool snapshot = false, has_tc = false, short_tc = false, several_evsels = false;
	const struct auxcap_perf_evsel *sample_evsel = NULL;
	const struct auxcap_perf_file_info *fi = auxcap_perf_reader_info(d->rd);
	uint64_t data_start = fi->data_offset, data_len = 0, nrec = 0;
	int r;

	/* Progress: bytes of the data section (a recovered file's: up to its end). */
	if (d->opts.progress) {
		data_len = fi->data_size;
		if ((fi->recovered || !data_len) && fi->file_size > data_start)
			data_len = fi->file_size - data_start;
		d->opts.progress(d->opts.progress_arg, AUXCAP_DECODE_PHASE_READ, 0, data_len);
	}
	while ((r = auxcap_perf_reader_next(d->rd, &ev)) == 1) {
		const struct auxcap_record *rec = &ev.rec;
		bool has_time;
		uint64_t t = decode_record_time(&ev, &has_time);

		if (d->opts.progress && !(++nrec & 4095) && ev.offset >= data_start)
			d->opts.progress(d->opts.progress_arg, AUXCAP_DECODE_PHASE_READ,
					 ev.offset - data_start < data_len ? ev.offset - data_start
									   : data_len,
					 data_len);

		if (has_time && t > last_time)
			last_time = t;
		if (has_time && t && !first_time)
			first_time = t;
		switch (rec->type) {
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
			note_tid(d, rec->u.mmap.pid, rec->u.mmap.tid, NULL);
			r = on_mmap(d, rec, has_time ? t : 0, &miss);
			break;
		case PERF_RECORD_COMM:
			if (rec->misc & PERF_RECORD_MISC_COMM_EXEC) {
				/* The process runs another image from here: the mappings before
				 * the exec are in place until its time (set_spans()).  Without a
				 * time, every one seen so far is before it, and gone. */
				if (has_time)
					r = exec_add(&execs, (int32_t)rec->u.comm.pid, t);
				else
					drop_maps_before(d, (int32_t)rec->u.comm.pid, UINT64_MAX);
			}
			note_tid(d, rec->u.comm.pid, rec->u.comm.tid, rec->u.comm.comm);
			break;
		case PERF_RECORD_FORK: {
			/* A new task runs its parent's command until it execs (perf's rule);
			 * copied: note_tid() may move the table the parent's name is in */
			const char *pc = auxcap_decode_comm(d, (int32_t)rec->u.task.ptid);
			char comm[sizeof(d->tids[0].comm)];

			snprintf(comm, sizeof(comm), "%s", pc ? pc : "");
			if (!pc) {
				r = auxcap_grow_array(&late.v, &late.cap, late.n + 1, 8,
						      sizeof(*late.v));
				if (r < 0)
					break;
				late.v[late.n++] = (struct late_fork){ rec->u.task.pid,
								       rec->u.task.tid,
								       rec->u.task.ptid };
			}
			note_tid(d, rec->u.task.pid, rec->u.task.tid,
				 pc && !auxcap_decode_comm(d, (int32_t)rec->u.task.tid) ? comm
											: NULL);
			break;
		}
		case PERF_RECORD_ITRACE_START:
			note_tid(d, rec->u.itrace_start.pid, rec->u.itrace_start.tid, NULL);
			if (has_time)
				r = note_switch(d, rec, t);
			break;
		case PERF_RECORD_SWITCH:
		case PERF_RECORD_SWITCH_CPU_WIDE:
			if (has_time)
				r = note_switch(d, rec, t);
			break;
		case PERF_RECORD_SAMPLE:
			if (ev.evsel && (ev.evsel->layout.sample_type & PERF_SAMPLE_TID))
				note_tid(d, rec->u.sample.pid, rec->u.sample.tid, NULL);
			if (!sample_evsel)
				sample_evsel = ev.evsel;
			else if (ev.evsel != sample_evsel)
				several_evsels = true;
			break;
		case PERF_RECORD_AUX:
			snapshot |= (rec->u.aux.flags & AUX_FLAG_OVERWRITE) != 0;
			r = aux_cuts_note(&cuts, rec);
			break;
		case AUXCAP_PERF_RECORD_AUXTRACE_INFO:
			free(d->info_words);
			d->info_words = NULL;
			d->nr_info = 0;
			d->auxtrace_type = ev.u.auxtrace_info.type;
			if (ev.u.auxtrace_info.nr) {
				d->info_words = calloc(ev.u.auxtrace_info.nr, sizeof(uint64_t));
				if (!d->info_words) {
					r = -ENOMEM;
					break;
				}
				for (size_t i = 0; i < ev.u.auxtrace_info.nr; i++)
					d->info_words[i] = auxcap_get_u64(ev.u.auxtrace_info.priv, i);
				d->nr_info = ev.u.auxtrace_info.nr;
			}
			break;
		case AUXCAP_PERF_RECORD_TIME_CONV:
			d->tc = ev.u.time_conv;
			has_tc = true;
			short_tc = rec->size < 50;
			break;
		case AUXCAP_PERF_RECORD_AUXTRACE: {
			struct dqueue *q = queue_for(d, &ev, snapshot);

			r = q ? add_piece(q, ev.u.auxtrace.data, ev.u.auxtrace.size,
					  ev.u.auxtrace.offset, last_time, first_time)
			      : -ENOMEM;
			break;
		}
		default:
			break;
		}
		if (r < 0)
			break;
		r = 0;
	}
	for (size_t i = 0; i < miss.n; i++)
		free(miss.paths[i]);
	free(miss.paths);
	/* in the order met: a task forked by one that was itself forked late gets its name */
	for (size_t i = 0; i < late.n && r == 0; i++) {
		const char *pc = auxcap_decode_comm(d, (int32_t)late.v[i].ptid);
		char comm[sizeof(d->tids[0].comm)];

		if (!pc || auxcap_decode_comm(d, (int32_t)late.v[i].tid))
			continue;
		snprintf(comm, sizeof(comm), "%s", pc);
		note_tid(d, late.v[i].pid, late.v[i].tid, comm);
	}
	free(late.v);
	if (r == 0)
		r = set_spans(d, &execs);
	if (r == 0)
		r = settle_tasks(d);
	free(execs.v);
	if (r == 0)
		r = apply_cuts(d, &cuts);
	aux_cuts_fini(&cuts);
	if (r < 0)
		return r;
	if (d->opts.progress)
		d->opts.progress(d->opts.progress_arg, AUXCAP_DECODE_PHASE_READ, data_len, data_len);
	d->info.snapshot = snapshot;
	/* Counter samples (decided again once the AUX event is known). */
	d->sample_evsel = several_evsels ? NULL : sample_evsel;
	d->want_context = several_evsels || sample_evsel;
	/* TIME_CONV records from before cap_user_time_zero was in them are trusted. */
	d->have_tc = has_tc && d->tc.time_mult && d->tc.time_shift < 64 &&
		     (d->tc.cap_user_time_zero || short_tc);
	d->info.has_time_conv = d->have_tc;
	return 0;
}

/* ---- the queues' view of the image ----------------------------------------------------- */

int decode_queue_maps(struct auxcap_decode *d, const struct dqueue *q,
		      const struct auxcap_image_map **ret, size_t *ret_n)
{
	size_t n = 0;

	if (!d->qmaps && d->nr_maps) {
		d->qmaps = calloc(d->nr_maps, sizeof(*d->qmaps));
		d->qspans = calloc(d->nr_maps, sizeof(*d->qspans));
		if (!d->qmaps || !d->qspans)
			return -ENOMEM;
	}
	/* A per-task queue sees its process (and global code); a per-CPU one sees all, and so
	 * does a task whose process has no mapping of its own in the capture. */
	for (int pass = 0; pass < 2 && !n; pass++)
		for (size_t i = 0; i < d->nr_maps; i++) {
			const struct auxcap_image_map *m = &d->maps[i];

			if (m->pid == -2)
				continue;
			if (!pass && q->info.pid >= 0 && m->pid >= 0 && m->pid != q->info.pid)
				continue;
			d->qspans[n] = d->map_spans[i];
			d->qmaps[n++] = *m;
		}
	*ret = d->qmaps;
	*ret_n = n;
	return 0;
}

void decode_queue_execs(const struct auxcap_decode *d, const struct dqueue *q,
			const uint64_t **ret, size_t *ret_n)
{
	size_t lo = 0, hi, n = d->nr_exec_times;

	*ret = d->exec_times;
	*ret_n = n;
	if (q->info.pid < 0 || !n)
		return; /* a CPU's queue: anyone's */
	/* a task's: its process's, the run of them in (pid, time) order */
	while (lo < n && d->exec_pids[lo] < q->info.pid)
		lo++;
	for (hi = lo; hi < n && d->exec_pids[hi] == q->info.pid; hi++)
		;
	*ret = d->exec_pid_times + lo;
	*ret_n = hi - lo;
}

void decode_queue_tasks(const struct auxcap_decode *d, const struct dqueue *q,
			const struct auxcap_cpu_task **ret, size_t *ret_n)
{
	const struct cpu_tasks *ct;

	*ret = NULL;
	*ret_n = 0;
	if (q->info.pid >= 0 || q->info.cpu < 0 || (size_t)q->info.cpu >= d->nr_cpu_tasks)
		return;
	ct = &d->cpu_tasks[q->info.cpu];
	*ret = ct->v;
	*ret_n = ct->n;
}

void decode_fill_ctx(struct auxcap_decode *d, const struct dqueue *q,
		     struct auxcap_decode_ctx *ctx, char *errbuf, size_t errlen)
{
	const struct auxcap_perf_features *f = d->rd ? auxcap_perf_reader_features(d->rd) : NULL;

	memset(ctx, 0, sizeof(*ctx));
	ctx->sz = sizeof(*ctx);
	ctx->auxtrace_type = d->auxtrace_type;
	ctx->info = d->info_words;
	ctx->nr_info = d->nr_info;
	ctx->time_conv = d->have_tc ? &d->tc : NULL;
	ctx->cpu = q ? q->info.cpu : -1;
	ctx->per_insn = d->opts.per_insn;
	ctx->options = d->backend_options;
	ctx->errbuf = errbuf;
	ctx->errlen = errlen;
	ctx->cpuid = f ? f->cpuid : NULL;
	ctx->attr = d->aux_attr;
	if (q && decode_queue_maps(d, q, &ctx->maps, &ctx->nr_maps) == 0 && d->have_spans)
		ctx->map_spans = d->qspans;
	/* a CPU's queue that ran several processes: which one ran when */
	if (q) {
		const struct auxcap_cpu_task *t;
		size_t n;

		decode_queue_tasks(d, q, &t, &n);
		if (t && d->cpu_tasks[q->info.cpu].several) {
			ctx->tasks = t;
			ctx->nr_tasks = n;
		}
	}
}

/* ---- code given by the caller ---------------------------------------------------------- */

static int add_raw_code(struct auxcap_decode *d, const struct auxcap_decode_code *c)
{
	struct stat st;
	int r;

	if (stat(c->path, &st) < 0) {
		r = -errno;
		set_err(d, "cannot read raw code '%s': %s", c->path, strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode) || !st.st_size || access(c->path, R_OK) < 0) {
		r = !S_ISREG(st.st_mode) ? -EINVAL : !st.st_size ? -ERANGE : -errno;
		set_err(d, "cannot read raw code '%s': %s", c->path,
			r == -ERANGE ? "file is empty" : strerror(-r));
		return r;
	}
	return add_map(d, c->path, 0, (uint64_t)st.st_size, c->addr, -1, 0);
}

static int add_code(struct auxcap_decode *d, const struct auxcap_decode_code *c)
{
#if AUXCAP_HAVE_LIBELF
	const struct auxcap_elf_segment *segs;
	struct auxcap_elf *elf = NULL;
	uint64_t bias = 0;
	size_t n, added = 0;
	int r;
#endif

	if (!c->path)
		return -EINVAL;
	if (c->raw)
		return add_raw_code(d, c);
#if AUXCAP_HAVE_LIBELF
	r = auxcap_elf_open(c->path, &elf);
	if (r < 0) {
		set_err(d, "cannot read ELF '%s': %s", c->path,
			r == -ENOEXEC ? "not an ELF file (raw code needs its load address)"
				      : strerror(-r));
		return r;
	}
	if (c->has_addr)
		bias = c->addr - auxcap_elf_link_base(elf);
	else if (auxcap_elf_is_dyn(elf) && !auxcap_elf_link_base(elf))
		auxcap_log(AUXCAP_LOG_WARN,
			   "'%s' is position independent; without its load address it is decoded "
			   "at address 0",
			   c->path);
	n = auxcap_elf_segments(elf, &segs);
	for (size_t i = 0; i < n && r >= 0; i++) {
		if (!segs[i].exec || !segs[i].filesz)
			continue;
		r = add_map(d, c->path, segs[i].offset, segs[i].filesz, segs[i].vaddr + bias, -1,
			    0);
		added++;
	}
	auxcap_elf_free(elf);
	if (r < 0)
		return r;
	if (!added)
		auxcap_log(AUXCAP_LOG_WARN, "'%s' has no executable segment; nothing of it is decoded",
			   c->path);
	return 0;
#else
	set_err(d, "cannot read ELF '%s': this build has no libelf (give raw code instead)",
		c->path);
	return -EOPNOTSUPP;
#endif
}

/* ---- raw trace files ------------------------------------------------------------------- */

static int open_raw(struct auxcap_decode *d, const char *path, const char *shown)
{
	struct dqueue *q;
	struct stat st;
	void *p = NULL;
	int fd, r;

	d->backend = auxcap_backend_find(d->opts.raw_backend);
	if (!d->backend || !d->backend->decoder_new) {
		set_err(d, "no decoder for '%s' traces in this build", d->opts.raw_backend);
		return -EPROTONOSUPPORT;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		set_err(d, "cannot read trace file '%s': %s", shown, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		(void)close(fd);
		set_err(d, "cannot read trace file '%s': %s", shown, strerror(-r));
		return r;
	}
	if (st.st_size) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			r = -errno;
			(void)close(fd);
			set_err(d, "cannot map trace file '%s': %s", shown, strerror(-r));
			return r;
		}
	}
	(void)close(fd);
	d->raw_buf = p;
	d->raw_len = (size_t)st.st_size;
	d->info.raw = true;
	q = new_queue(d);
	if (!q)
		return -ENOMEM;
	q->info.cpu = -1;
	q->info.tid = -1;
	q->info.pid = -1;
	if (d->raw_len)
		return add_piece(q, d->raw_buf, d->raw_len, 0, 0, 0);
	return 0;
}

/* ---- open / close ---------------------------------------------------------------------- */

static int copy_opts(struct auxcap_decode *d, const struct auxcap_decode_opts *opts)
{
	if (!opts)
		return 0;
	if (opts->sz < sizeof(*opts) || opts->last_branches > AUXCAP_DECODE_MAX_BRANCHES ||
	    (opts->nr_code && !opts->code))
		return -EINVAL;
	d->opts = *opts;
	d->opts.code = NULL;
	d->opts.nr_code = 0;
	d->opts.backend_options = NULL;
	d->opts.name = NULL; /* borrowed only during open() */
	d->opts.vmlinux = NULL;
	if (opts->backend_options) {
		d->backend_options = strdup(opts->backend_options);
		if (!d->backend_options)
			return -ENOMEM;
	}
	return 0;
}

int auxcap_decode_open(const char *path, const struct auxcap_decode_opts *opts,
		       struct auxcap_decode **ret)
{
	struct auxcap_perf_reader_opts ro = { .sz = sizeof(ro) };
	char rerr[256] = "";
	struct auxcap_decode *d;
	int r;
	const char *shown = opts && opts->sz >= sizeof(*opts) && opts->name ? opts->name : path;
	const struct auxcap_perf_file_info *fi;

	if (!path || !ret)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->opts.sz = sizeof(d->opts);
	r = copy_opts(d, opts);
	if (r < 0) {
		free(d);
		return r;
	}
	r = auxcap_symbols_new(&d->syms);
	if (r < 0)
		goto err;
	auxcap_symbols_set_raw_names(d->syms, d->opts.raw_names);
	for (size_t i = 0; opts && i < opts->nr_code; i++) {
		r = add_code(d, &opts->code[i]);
		if (r < 0)
			goto err;
	}

	d->path = strdup(path);
	if (!d->path) {
		r = -ENOMEM;
		goto err;
	}
	if (d->opts.raw_backend) {
		r = open_raw(d, path, shown);
		if (r < 0)
			goto err;
	} else {
		ro.errbuf = rerr;
		ro.errbuf_size = sizeof(rerr);
		r = auxcap_perf_reader_open(path, &ro, &d->rd);
		if (r < 0) {
			set_err(d, "cannot read '%s': %s", shown, rerr[0] ? rerr : strerror(-r));
			goto err;
		}
		if (auxcap_perf_reader_info(d->rd)->streaming) {
			set_err(d, "'%s' is a pipe: decoding needs a file (save the stream first)",
				path);
			r = -ESPIPE;
			goto err;
		}
		r = build_ids_ahead(d);
		if (r == 0)
			r = first_pass(d);
		if (r < 0) {
			set_err(d, "reading '%s' failed: %s", shown,
				r == -EBADMSG ? auxcap_perf_reader_error(d->rd) : strerror(-r));
			goto err;
		}
		{
			const char *arch = auxcap_perf_reader_features(d->rd)->arch;

			/* PERF_REG_X86_IP, PERF_REG_ARM64_PC (asm/perf_regs.h) */
			d->ip_reg = !arch ? -1
				    : !strcmp(arch, "x86_64") ? 8
				    : !strcmp(arch, "aarch64") || !strcmp(arch, "arm64") ? 32
											: -1;
		}
		if (d->auxtrace_type)
			d->backend = auxcap_backend_for_type(d->auxtrace_type);
		r = kernel_symbols(d);
		if (r < 0)
			goto err;
		pick_aux_evsel(d);
		r = kernel_code(d, opts ? opts->vmlinux : NULL);
		if (r < 0)
			goto err;
		if (!r && d->ktext && d->aux_attr && !d->aux_attr->exclude_kernel && d->backend &&
		    !strcmp(d->backend->name, "intel_pt"))
			auxcap_log(AUXCAP_LOG_WARN,
				   "the trace covers kernel code, which is not decoded without a copy "
				   "of it: record with --kcore, run 'auxcap archive %s' as root where "
				   "it was recorded, give --vmlinux, or install the kernel's debug "
				   "package (its vmlinux is found by build-id)",
				   shown);
		if (d->sample_evsel && d->sample_evsel == d->aux_evsel)
			d->want_context = false; /* only the AUX event's own samples */
		if (d->backend && (d->backend->flags & AUXCAP_BACKEND_F_SAMPLED)) {
			d->info.sampled = true; /* no flow to give samples a context */
			d->want_context = false;
		}
		fi = auxcap_perf_reader_info(d->rd);
		if (!d->nr_queues && !fi->recovered && !d->aux_evsel && !d->auxtrace_type &&
		    d->want_context) {
			/* No AUX event at all, but counter samples (a plain 'record -- prog'): they
			 * and the side-band are the stream, as perf report reads them. */
			d->want_context = false;
		} else if (!d->nr_queues) {
			if (fi->recovered)
				set_err(d,
					"'%s' holds no AUX trace: the file was not finalized (capture "
					"killed or disk full?) and its records end at offset %" PRIu64
					", before any AUXTRACE record",
					shown, fi->recovered_end);
			else if (d->aux_evsel && d->aux_evsel->name)
				set_err(d,
					"'%s' holds no AUX trace: its AUX event %s wrote none (the "
					"command ran no traced code?)",
					shown, d->aux_evsel->name);
			else
				set_err(d,
					"'%s' holds no AUX trace and no counter samples; record with an "
					"AUX event, e.g. auxcap record -e intel_pt//u (or --emulate)",
					shown);
			r = -ENODATA;
			goto err;
		}
		if (fi->recovered)
			auxcap_log(AUXCAP_LOG_WARN,
				   "'%s' was not finalized (capture killed or disk full?): its "
				   "records end at offset %" PRIu64 ", and are decoded up to there",
				   shown, fi->recovered_end);
		if (!d->backend && d->nr_queues) {
			if (d->auxtrace_type)
				set_err(d,
					"'%s' holds AUX trace of type %u, which no backend of this "
					"build decodes%s",
					path, d->auxtrace_type,
					d->auxtrace_type >= AUXCAP_AUXTRACE_PRIVATE
						? " (a plug-in's format: load that plug-in with "
						  "--plugin PATH)"
						: "");
			else
				set_err(d,
					"'%s' holds AUX trace of an event no backend of this build "
					"serves",
					path);
			r = -EPROTONOSUPPORT;
			goto err;
		}
		for (size_t i = 0; i < d->nr_queues; i++) {
			struct dqueue *q = &d->queues[i];
			struct tid_info *t = decode_tid(d, q->info.tid, false);

			if (t)
				q->info.pid = t->pid;
		}
	}
	d->info.backend = d->backend ? d->backend->name : NULL;
	d->info.nr_queues = d->nr_queues;
	*ret = d;
	return 0;
err:
	auxcap_decode_close(d);
	return r;
}

void auxcap_decode_close(struct auxcap_decode *d)
{
	if (!d)
		return;
	merge_fini(d);
	for (size_t i = 0; i < d->nr_queues; i++) {
		queue_fini(d, &d->queues[i]);
		free(d->queues[i].pieces);
	}
	free(d->queues);
	for (size_t i = 0; i < d->nr_maps; i++)
		free((char *)d->maps[i].path);
	free(d->maps);
	free(d->map_times);
	free(d->map_spans);
	free(d->exec_times);
	free(d->exec_pids);
	for (size_t c = 0; c < d->nr_cpu_tasks; c++)
		free(d->cpu_tasks[c].v);
	free(d->cpu_tasks);
	free(d->exec_pid_times);
	free(d->qmaps);
	free(d->qspans);
	auxcap_symbols_free(d->syms);
	data_maps_free(&d->dmaps);
	free(d->tids);
	for (size_t i = 0; i < d->nr_found; i++) {
		free(d->found[i].file);
		free(d->found[i].mapped);
	}
	free(d->found);
	free(d->path);
	free(d->info_words);
	free(d->backend_options);
	tp_printer_free(d->tp_printer);
	for (size_t i = 0; i < d->nr_tp_formats; i++)
		auxcap_tp_format_free(d->tp_formats[i]);
	free(d->tp_formats);
	auxcap_perf_reader_close(d->rd);
	if (d->raw_buf)
		(void)munmap((void *)d->raw_buf, d->raw_len);
	free(d);
}

const struct auxcap_decode_info *auxcap_decode_get_info(const struct auxcap_decode *d)
{
	return d ? &d->info : NULL;
}

const struct auxcap_decode_queue *auxcap_decode_get_queue(const struct auxcap_decode *d,
							  size_t i)
{
	return d && i < d->nr_queues ? &d->queues[i].info : NULL;
}

size_t auxcap_decode_nr_evsels(const struct auxcap_decode *d)
{
	return d && d->rd ? auxcap_perf_reader_nr_evsels(d->rd) : 0;
}

const struct auxcap_perf_evsel *auxcap_decode_evsel(const struct auxcap_decode *d, size_t i)
{
	return d && d->rd ? auxcap_perf_reader_evsel(d->rd, i) : NULL;
}

size_t decode_evsel_slot(const struct auxcap_decode *d, struct evsel_slot_cache *c,
			 const struct auxcap_perf_evsel *es)
{
	size_t n = auxcap_decode_nr_evsels(d);

	if (es && es == c->es)
		return c->slot;
	for (size_t i = 0; i < n; i++)
		if (auxcap_decode_evsel(d, i) == es) {
			c->es = es;
			c->slot = i;
			return i;
		}
	return n;
}

const struct auxcap_perf_features *auxcap_decode_features(const struct auxcap_decode *d)
{
	return d && d->rd ? auxcap_perf_reader_features(d->rd) : NULL;
}

const struct auxcap_tp_format *auxcap_decode_tp_format(struct auxcap_decode *d,
						       const struct auxcap_perf_evsel *es)
{
	const struct auxcap_perf_features *ft;

	if (!d || !es || !es->attr || es->attr->type != PERF_TYPE_TRACEPOINT)
		return NULL;
	if (!d->tp_parsed && (ft = auxcap_decode_features(d)) && ft->nr_tp_formats) {
		d->tp_parsed = true;
		d->tp_formats = calloc(ft->nr_tp_formats, sizeof(*d->tp_formats));
		if (!d->tp_formats)
			return NULL; /* (no fields, as without formats) */
		d->nr_tp_formats = ft->nr_tp_formats;
		for (size_t i = 0; i < ft->nr_tp_formats; i++)
			if (auxcap_tp_format_parse(ft->tp_formats[i].text, ft->tp_formats[i].len,
						   &d->tp_formats[i]) < 0)
				d->tp_formats[i] = NULL;
	}
	for (size_t i = 0; i < d->nr_tp_formats; i++)
		if (d->tp_formats[i] && d->tp_formats[i]->id == es->attr->config)
			return d->tp_formats[i];
	return NULL;
}

int auxcap_decode_tp_print(struct auxcap_decode *d, const struct auxcap_decode_event *ev,
			   char *buf, size_t n)
{
	const struct auxcap_sample *sa;
	int r;

	if (!d || !ev || !buf || !n)
		return -EINVAL;
	buf[0] = '\0';
	if (ev->kind != AUXCAP_DECODE_SAMPLE || !ev->evsel || !ev->evsel->attr ||
	    ev->evsel->attr->type != PERF_TYPE_TRACEPOINT || !ev->rec)
		return 0;
	sa = &ev->rec->u.sample;
	if (!sa->raw.data)
		return 0;
	if (!d->tp_printer_tried) {
		d->tp_printer_tried = true;
		r = tp_printer_new(auxcap_decode_features(d), &d->tp_printer);
		if (r == -EOPNOTSUPP)
			return r;
		/* the kernel's functions, for call sites and handlers (what perf names them by) */
		if (d->tp_printer && auxcap_symbols_kernel_each(d->syms, tp_printer_add_function,
								 d->tp_printer) < 0) {
			tp_printer_free(d->tp_printer);
			d->tp_printer = NULL;
		}
	}
	if (!d->tp_printer)
		return AUXCAP_HAVE_LIBTRACEEVENT ? 0 : -EOPNOTSUPP;
	return tp_printer_print(d->tp_printer, ev->evsel->attr->config, sa->raw.data, sa->raw.size,
				ev->cpu, ev->time, buf, n);
}

const struct auxcap_perf_evsel *auxcap_decode_aux_evsel(const struct auxcap_decode *d)
{
	return d ? d->aux_evsel : NULL;
}

int auxcap_decode_symbolize(struct auxcap_decode *d, int32_t pid, uint64_t addr,
			    const char **ret_name, uint64_t *ret_off, const char **ret_dso)
{
	if (!d)
		return 0;
	return auxcap_symbols_lookup(d->syms, pid, addr, ret_name, ret_off, ret_dso);
}

int auxcap_decode_symbolize_at(struct auxcap_decode *d, int32_t pid, uint64_t addr,
			       uint64_t time, const char **ret_name, uint64_t *ret_off,
			       const char **ret_dso)
{
	if (!d)
		return 0;
	return auxcap_symbols_lookup_at(d->syms, pid, addr, time, ret_name, ret_off, ret_dso);
}

int auxcap_decode_data_symbolize_at(struct auxcap_decode *d, int32_t pid, uint64_t addr,
				    uint64_t time, const char **ret_name, uint64_t *ret_off,
				    const char **ret_dso)
{
	if (!d || !ret_name || !ret_off)
		return 0;
	return auxcap_symbols_data_lookup_at(d->syms, pid, addr, time, ret_name, ret_off, ret_dso);
}

int auxcap_decode_data_map_at(struct auxcap_decode *d, int32_t pid, uint64_t addr, uint64_t time,
			      const char **ret_name, uint64_t *ret_off)
{
	const struct data_map *dm;
	const uint64_t *execs = NULL;
	size_t n = 0, lo = 0;

	if (!d || !ret_name || !ret_off || pid < 0)
		return 0;
	/* @pid's execs with a time: the run of them in (pid, time) order */
	while (lo < d->nr_exec_times && d->exec_pids[lo] < pid)
		lo++;
	while (lo + n < d->nr_exec_times && d->exec_pids[lo + n] == pid)
		n++;
	if (n)
		execs = d->exec_pid_times + lo;
	dm = data_maps_find(&d->dmaps, pid, addr, time, execs, n);
	if (!dm)
		return 0;
	*ret_name = data_map_name(&d->dmaps, dm);
	/* a file's offset; anonymous memory's ([stack], //anon) from the mapping's start */
	*ret_off = addr - dm->start + (data_map_name_is_file(*ret_name) ? dm->pgoff : 0);
	return 1;
}

int auxcap_decode_data_name_at(struct auxcap_decode *d, int32_t pid, uint64_t addr,
			       uint64_t time, char *buf, size_t n)
{
	const char *name, *base;
	uint64_t off;

	if (!buf || !n)
		return 0;
	buf[0] = '\0';
	if (auxcap_decode_data_symbolize_at(d, pid, addr, time, &name, &off, NULL) == 1) {
		snprintf(buf, n, "%s+0x%" PRIx64, name, off);
		return 1;
	}
	if (auxcap_decode_data_map_at(d, pid, addr, time, &name, &off) != 1)
		return 0;
	/* a file by its base name */
	base = data_map_name_is_file(name) && strrchr(name, '/')[1] ? strrchr(name, '/') + 1 : name;
	snprintf(buf, n, "%s+0x%" PRIx64, base, off);
	return 2;
}

int auxcap_decode_srcline(struct auxcap_decode *d, int32_t pid, uint64_t addr,
			  const char **ret_file, unsigned int *ret_line)
{
	if (!d || !ret_file || !ret_line)
		return 0;
	return auxcap_symbols_srcline(d->syms, pid, addr, ret_file, ret_line, NULL);
}

int auxcap_decode_srcline_dir(struct auxcap_decode *d, int32_t pid, uint64_t addr,
			      const char **ret_file, unsigned int *ret_line, const char **ret_dir)
{
	if (!d || !ret_file || !ret_line || !ret_dir)
		return 0;
	*ret_dir = NULL;
	return auxcap_symbols_srcline(d->syms, pid, addr, ret_file, ret_line, ret_dir);
}

int auxcap_decode_inlines(struct auxcap_decode *d, int32_t pid, uint64_t addr,
			  struct auxcap_decode_inline *frames, size_t n)
{
	if (!d || !frames || n < 2)
		return 0;
	return auxcap_symbols_inlines(d->syms, pid, addr, frames, n);
}

void auxcap_decode_sym_text(struct auxcap_decode *d, int32_t pid, uint64_t addr,
			    const char **ret_text, size_t *ret_len)
{
	auxcap_symbols_text(d->syms, pid, addr, ret_text, ret_len);
}

uint32_t auxcap_decode_sym_gen(const struct auxcap_decode *d)
{
	return auxcap_symbols_gen(d->syms);
}

int auxcap_decode_queue_bytes(const struct auxcap_decode *d, size_t i, uint8_t **ret_buf,
			      size_t *ret_len)
{
	const struct dqueue *q;
	size_t len = 0;
	uint8_t *buf;

	if (!d || i >= d->nr_queues || !ret_buf || !ret_len)
		return -EINVAL;
	q = &d->queues[i];
	for (size_t k = 0; k < q->info.nr_pieces; k++)
		len += (size_t)q->pieces[k].len;
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	len = 0;
	for (size_t k = 0; k < q->info.nr_pieces; k++) {
		memcpy(buf + len, q->pieces[k].data, (size_t)q->pieces[k].len);
		len += (size_t)q->pieces[k].len;
	}
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

int auxcap_decode_dump(struct auxcap_decode *d, auxcap_backend_line_fn fn, void *arg)
{
	char line[160], errbuf[256] = "";
	int total = 0, r;

	if (!d || !fn)
		return -EINVAL;
	if (!d->backend || !d->backend->dump)
		return -EOPNOTSUPP; /* (no backend: a capture without trace) */
	for (size_t i = 0; i < d->nr_queues; i++) {
		struct dqueue *q = &d->queues[i];
		struct auxcap_decode_ctx ctx;

		if (!d->info.raw) {
			snprintf(line, sizeof(line),
				 "# %s %zu: idx %u cpu %d tid %d, %" PRIu64 " bytes",
				 q->info.snapshot ? "snapshot" : "AUX stream", i, q->info.idx,
				 q->info.cpu, q->info.tid, q->info.bytes);
			r = fn(arg, line);
			if (r < 0)
				return r;
		}
		decode_fill_ctx(d, q, &ctx, errbuf, sizeof(errbuf));
		/* Contiguous pieces are listed as one stream (packets may straddle them). */
		for (size_t k = 0, e; k < q->info.nr_pieces; k = e) {
			const uint8_t *buf = q->pieces[k].data;
			uint8_t *joined = NULL;
			size_t len = (size_t)q->pieces[k].len;

			for (e = k + 1; e < q->info.nr_pieces && q->pieces[e].contiguous; e++)
				len += (size_t)q->pieces[e].len;
			if (e > k + 1) {
				joined = malloc(len);
				if (!joined)
					return -ENOMEM;
				len = 0;
				for (size_t j = k; j < e; j++) {
					memcpy(joined + len, q->pieces[j].data,
					       (size_t)q->pieces[j].len);
					len += (size_t)q->pieces[j].len;
				}
				buf = joined;
			}
			ctx.stream_offset = q->pieces[k].offset;
			r = d->backend->dump(&ctx, buf, len, fn, arg);
			free(joined);
			if (r < 0)
				return r;
			total += r;
		}
		if (!q->info.nr_pieces) {
			r = d->backend->dump(&ctx, (const uint8_t *)"", 0, fn, arg);
			if (r < 0)
				return r;
		}
	}
	return total;
}

static bool in_list(const int32_t *v, size_t n, int32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* Whether event @name is @want, or @want with modifiers ("cycles:u" for "cycles"). */
static bool event_named(const char *name, const char *want)
{
	size_t n = strlen(want);

	if (!name || strncmp(name, want, n))
		return false;
	if (!name[n])
		return true;
	return name[n] == ':' && name[n + 1] && strspn(name + n + 1, "ukhGHpPSDIWe") ==
							  strlen(name + n + 1);
}

bool auxcap_decode_filter_match(const struct auxcap_decode_filter *f,
				const struct auxcap_decode_event *ev)
{
	if (!f || ev->kind == AUXCAP_DECODE_LOSS)
		return true;
	if (f->nr_pids && !in_list(f->pids, f->nr_pids, ev->pid))
		return false;
	if (f->nr_tids && !in_list(f->tids, f->nr_tids, ev->tid))
		return false;
	if (f->nr_comms) {
		size_t i = 0;

		while (i < f->nr_comms && (!ev->comm || strcmp(f->comms[i], ev->comm)))
			i++;
		if (i == f->nr_comms)
			return false;
	}
	if (f->nr_events && ev->kind == AUXCAP_DECODE_SAMPLE) {
		size_t i = 0;

		while (i < f->nr_events &&
		       !event_named(ev->evsel ? ev->evsel->name : NULL, f->events[i]))
			i++;
		if (i == f->nr_events)
			return false;
	}
	return true;
}
