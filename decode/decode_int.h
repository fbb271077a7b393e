/* SPDX-License-Identifier: BSD-3-Clause */
/* Internals shared by the files of the decode stage (decode/session.c, queue.c, sideband.c,
 * merge.c, symbols.c).  Not installed. */
#ifndef AUXCAP_DECODE_INT_H
#define AUXCAP_DECODE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auxcap/decode.h"
#include "auxcap/perf_data.h"
#include "data_maps.h"

/* ---- tracepoint print formats (tp_print.c: libtraceevent) --------------------------------- */

struct tp_printer;
/* A printer of the capture's tracepoint formats @ft.  -ENOENT if none parses, -EOPNOTSUPP built
 * without libtraceevent, -ENOMEM. */
int tp_printer_new(const struct auxcap_perf_features *ft, struct tp_printer **ret);
/* Name kernel function @name at @addr in the texts (%pS, %ps: a call site, a handler). */
int tp_printer_add_function(void *p, const char *name, uint64_t addr);
void tp_printer_free(struct tp_printer *p);
/* The text of raw data @raw (@size bytes) of tracepoint @id by its print format into @buf (@n
 * bytes, NUL-terminated): its length, 0 if @id has no format. */
int tp_printer_print(struct tp_printer *p, uint64_t id, const void *raw, size_t size, int cpu,
		     uint64_t time, char *buf, size_t n);

/* ---- symbols (symbols.c) ---------------------------------------------------------------- */

struct auxcap_symbols;
struct auxcap_elf;

int auxcap_symbols_new(struct auxcap_symbols **ret);
void auxcap_symbols_free(struct auxcap_symbols *s);
/* Add an executable mapping of @path (copied) for @pid (-1: all), made at @time (perf time;
 * 0 if not known). */
int auxcap_symbols_add(struct auxcap_symbols *s, int32_t pid, uint64_t start, uint64_t len,
		       uint64_t pgoff, const char *path, uint64_t time);
/* Forget the mappings of @pid made before @time (an exec at @time replaced its address space;
 * UINT64_MAX: every one). */
void auxcap_symbols_drop_pid(struct auxcap_symbols *s, int32_t pid, uint64_t time);
/* Name kernel addresses (the upper half) by the kallsyms file @path (NULL: leave them
 * unnamed), read on the first such look-up; the dso is "[kernel.kallsyms]". */
int auxcap_symbols_set_kallsyms(struct auxcap_symbols *s, const char *path);
/* Map @i (in the order added) was in place from perf time @since to @until (exclusive). */
int auxcap_symbols_set_span(struct auxcap_symbols *s, size_t i, uint64_t since, uint64_t until);
/* Look-ups from now on are for perf time @t (the mappings in place then); [*ret_lo,
 * *ret_hi) is the stretch around @t over which the answers stay the same. */
void auxcap_symbols_set_time(struct auxcap_symbols *s, uint64_t t, uint64_t *ret_lo,
			     uint64_t *ret_hi);
/* Read up to @len bytes of code at @addr of @pid from its file.  Returns the bytes read, or
 * -ENOENT if no readable mapping holds @addr. */
int auxcap_symbols_read(struct auxcap_symbols *s, int32_t pid, uint64_t addr, uint8_t *buf,
			size_t len);
/* auxcap_symbols_read() of the mappings in place at perf time @t. */
int auxcap_symbols_read_at(struct auxcap_symbols *s, int32_t pid, uint64_t addr, uint64_t t,
			   uint8_t *buf, size_t len);

/* The function symbol holding an address (auxcap_symbols_func_at()). */
struct auxcap_sym_func {
	const char *name;  /* NULL: no symbol (the rest tells the file) */
	const char *dso;   /* the mapping's file, NULL: no mapping */
	size_t file;	   /* the file's index: one per path (with @vaddr, the function's key) */
	uint64_t start;	   /* run-time address of its first byte (no symbol: the address) */
	uint64_t size;	   /* bytes, within its mapping; 0 if not known */
	uint64_t vaddr;	   /* link-time address of its first byte */
	struct auxcap_elf *elf; /* the file's symbols and lines (borrowed), NULL */
};
/* The function at @addr of @pid with the mappings in place at perf time @t into *@ret.
 * Returns 1 with a symbol, 2 with only the file, 0 if no mapping holds @addr (kernel code
 * without the kernel's code: decode --vmlinux, record --kcore).  Kernel code in a copy of
 * the kernel's is named by kallsyms (@elf NULL), its @dso is "[kernel.kallsyms]". */
int auxcap_symbols_func_at(struct auxcap_symbols *s, int32_t pid, uint64_t addr, uint64_t t,
			   struct auxcap_sym_func *ret);
/* The source line of the byte @off of function @fn (as auxcap_decode_srcline()), and its
 * unit's compilation directory in *@ret_dir (NULL if none). */
int auxcap_symbols_func_srcline(const struct auxcap_sym_func *fn, uint64_t off,
				const char **ret_file, unsigned int *ret_line, const char **ret_dir);
/* The functions inlined at the byte @off of function @fn (as auxcap_decode_inlines()). */
int auxcap_symbols_func_inlines(const struct auxcap_sym_func *fn, uint64_t off,
				struct auxcap_decode_inline *frames, size_t n);
/* Every row of the line tables of @fn's file (auxcap_elf_line_rows()): the rows
 * given, 0 without lines, or @row's negative value. */
int auxcap_symbols_cov_rows(const struct auxcap_sym_func *fn,
			    int (*row)(void *arg, const char *file, const char *dir,
				       unsigned int line, uint64_t vaddr),
			    void *arg);
/* Function symbol @i of @fn's file: its name and link-time address, and the source line of
 * its first byte (*@ret_file NULL if none).  1, or 0 past the end. */
int auxcap_symbols_cov_func(const struct auxcap_sym_func *fn, size_t i, const char **ret_name,
			    uint64_t *ret_vaddr, const char **ret_file, unsigned int *ret_line,
			    const char **ret_dir);
/* Each kernel function of the kallsyms file (read on first use) to @fn, by address: how many,
 * 0 without one, or @fn's negative value. */
int auxcap_symbols_kernel_each(struct auxcap_symbols *s,
			       int (*fn)(void *arg, const char *name, uint64_t addr), void *arg);
/* As auxcap_decode_symbolize(). */
int auxcap_symbols_lookup(struct auxcap_symbols *s, int32_t pid, uint64_t addr,
			  const char **ret_name, uint64_t *ret_off, const char **ret_dso);
/* auxcap_symbols_lookup() with the mappings in place at perf time @t. */
int auxcap_symbols_lookup_at(struct auxcap_symbols *s, int32_t pid, uint64_t addr, uint64_t t,
			     const char **ret_name, uint64_t *ret_off, const char **ret_dso);
/* As auxcap_decode_data_symbolize_at(). */
int auxcap_symbols_data_lookup_at(struct auxcap_symbols *s, int32_t pid, uint64_t addr,
				  uint64_t t, const char **ret_name, uint64_t *ret_off,
				  const char **ret_dso);
/* As auxcap_decode_srcline_dir() (@ret_dir may be NULL). */
int auxcap_symbols_srcline(struct auxcap_symbols *s, int32_t pid, uint64_t addr,
			   const char **ret_file, unsigned int *ret_line, const char **ret_dir);

/* Names as the files have them (@raw), or C++ and Rust names demangled (the default). */
void auxcap_symbols_set_raw_names(struct auxcap_symbols *s, bool raw);
/* As auxcap_decode_inlines(). */
int auxcap_symbols_inlines(struct auxcap_symbols *s, int32_t pid, uint64_t addr,
			   struct auxcap_decode_inline *frames, size_t n);

/*
 * "name+0xOFF" (out_sym()'s form, at most 255 characters) or "[unknown]" for @addr of @pid,
 * formatted once per entry of the lookup cache: *@ret_text (not NUL-terminated, @ret_len
 * bytes) is valid until the next call.
 */
void auxcap_symbols_text(struct auxcap_symbols *s, int32_t pid, uint64_t addr,
			 const char **ret_text, size_t *ret_len);
/* The same through a decode session. */
void auxcap_decode_sym_text(struct auxcap_decode *d, int32_t pid, uint64_t addr,
			    const char **ret_text, size_t *ret_len);
/*
 * A number that changes whenever the mappings do (and with them what an address's symbol
 * text is): for caches of formatted text in front of auxcap_symbols_text().
 */
uint32_t auxcap_symbols_gen(const struct auxcap_symbols *s);
uint32_t auxcap_decode_sym_gen(const struct auxcap_decode *d);

/* ---- one AUX queue (queue.c) ---------------------------------------------------------------- */

/* An AUXTRACE buffer of a queue. */
struct dpiece {
	const uint8_t *data; /* borrowed from the file mapping */
	uint64_t len;	     /* trace bytes (padding removed when the next piece says so) */
	uint64_t offset;     /* AUX stream position */
	uint64_t time_hint;  /* perf time of the last record before it (timeless placement) */
	uint64_t time_from;  /* full trace: perf time its bytes began to be written (the piece
			      * before's hint, the capture's first time for the first), when
			      * it follows that piece without a hole; else 0 (see close_run()) */
	bool contiguous;     /* follows the previous piece without a hole */
};

/*
 * A decoded event waiting in a queue, with its time: 88 bytes, so that a run of them stays
 * in the first-level cache (whole 152-byte events did not: the stage's misses slowed it and
 * the backend down).  Its first fields are those of struct auxcap_trace_event before @size,
 * in the same layout (copied as one block, QEV_HEAD bytes); an event with any later field
 * set (an instruction's bytes, SPE sample fields, a gap's reason, ...) is also kept whole in
 * the queue's spill ring (@full), in the same order.
 */
struct qev {
	enum auxcap_trace_kind kind; /* as in struct auxcap_trace_event */
	uint32_t flags;
	uint64_t offset, tsc, time, ip, to;
	uint32_t ninsn;
	enum auxcap_branch_type branch;
	uint64_t run_lo; /* the hardware timestamps around it, as perf time (ns); next to */
	uint64_t run_hi; /* each other, so that close_run() stores both at once */
	uint64_t key;	 /* perf time it is merged at (interpolated), ns; while its run is
			  * open: the run's instructions up to and including it */
	union {
		struct {
			bool has_time; /* @key comes from the trace's own time */
			bool quick;    /* a BRANCH of known type and known IP in a timed run,
					* no tid of its own, not @full: what the quick way of
					* auxcap_decode_next() can take (false: the general
					* way) */
			bool full;     /* the whole event is in the spill ring */
		};
		uint32_t marks; /* the three at once (QEV_MARKS_QUICK) */
	};
};

/* @marks of a quick event: has_time and quick, not full (little-endian bytes). */
#define QEV_MARKS_QUICK 0x0101u

#define QEV_HEAD offsetof(struct auxcap_trace_event, size)

#define QUEUE_DEC_BATCH 16 /* events decoded before their times are worked out */

struct dqueue {
	struct auxcap_decode_queue info;
	struct dpiece *pieces;
	size_t cap_pieces;
	size_t piece;	     /* next piece to start */
	struct auxcap_trace_piece *prev; /* scratch: the pieces before the one started */
	size_t cap_prev;
	void *dec;	     /* the backend decoder of piece - 1, NULL when none */
	struct auxcap_trace_event batch[QUEUE_DEC_BATCH]; /* the events being decoded */
	struct auxcap_trace_event *spill; /* ring of the whole events of @full entries */
	size_t spill_cap, spill_head, spill_tail;
	bool lost_before;    /* a snapshot after trace was lost: starts with a GAP event */
	bool done;	     /* no more events */
	int error;	     /* a failure that ended the queue */
	/* Ring of events: [head, ready) are final, [ready, tail) are the open timing run. */
	struct qev *ring;
	size_t cap;	     /* power of two */
	size_t head, ready, tail;
	bool held;	     /* the head is the event handed out last (auxcap_decode_next()) */
	bool run_has_clock;  /* the open run has a timestamp */
	bool run_from_tsc;   /* ... converted from the counter value @run_tsc */
	uint64_t run_tsc;
	uint64_t run_insns;  /* instructions of the open run's events */
	bool run_gap;	     /* the open run holds a gap */
	bool run_untraced;   /* the open run holds a DISABLE: untraced time follows it */
	const uint64_t *execs; /* the capture's exec times, ascending (borrowed from the
				* decode) */
	size_t nr_execs;
	const struct auxcap_cpu_task *tasks; /* a CPU's queue: which process it ran when,
					      * ascending (borrowed from the decode), else NULL */
	size_t nr_tasks;
	uint64_t run_clock;  /* its perf time */
	uint64_t last_key;   /* key of the last final event (keys never go back) */
	int32_t c_tid, c_pid; /* the thread of the last event handed out, its process */
	const char *c_comm;   /* and its name (borrowed from the thread table) */
	uint64_t c_gen;	      /* tid_gen when they were looked up */
	uint64_t c_tsc, c_clock; /* the last timestamp converted, and its perf time */
	bool c_have;
	uint64_t last_run_hi;
	uint64_t prog_base; /* trace bytes of the pieces before the one being decoded */
	uint64_t prog;	    /* trace bytes of this queue counted as decoded */
};

/* ---- the ordered ordinary records (sideband.c) ----------------------------------------------- */

struct sb_entry {
	uint64_t time;	/* perf time, or the last one seen for records without time */
	uint64_t seq;	/* file order */
	bool has_time;
	uint32_t type;
	const void *data; /* the record in the file mapping */
	const struct auxcap_perf_evsel *evsel;
	struct auxcap_perf_auxtrace_error *err; /* AUXTRACE_ERROR: owned copy */
};

struct sb_cursor {
	struct auxcap_perf_reader *rd; /* borrowed */
	struct sb_entry *heap;
	size_t n, cap;
	uint64_t seq;
	uint64_t limit;	     /* entries with time <= limit are final (perf's rounds) */
	uint64_t next_flush; /* the limit at the next FINISHED_ROUND */
	uint64_t max_time;
	bool eof;
	bool no_rounds;	     /* the file has no FINISHED_ROUND: all records are read first */
};

int sb_init(struct sb_cursor *sb, struct auxcap_perf_reader *rd);
void sb_fini(struct sb_cursor *sb);
/* The next record in time order; 1, 0 at the end, or a negative errno. */
int sb_peek(struct sb_cursor *sb, const struct sb_entry **ret);
void sb_pop(struct sb_cursor *sb);

/* ---- per-thread state (merge.c) ------------------------------------------------------------ */

enum hist_undo {
	UNDO_NONE = 0,
	UNDO_PUSHED,  /* pop the frame pushed */
	UNDO_POPPED,  /* push @saved back */
	UNDO_REBASED, /* the outermost frame was @saved */
	UNDO_LOST,    /* cannot be undone (several frames popped) */
	UNDO_RETARGETED, /* a tail call: the innermost frame was @saved */
};

struct hist {
	uint64_t from, to; /* BRANCH; DISABLE: from = last ip, to = 0 */
	uint64_t seq_from; /* where the sequential run that ends at @from began, 0 if unknown */
	uint64_t time;
	uint8_t type;	   /* enum auxcap_branch_type; AUXCAP_BR_NONE for DISABLE */
	uint8_t undo;	   /* enum hist_undo */
	bool seq_start;	   /* @seq_from is where tracing (re)started */
	struct auxcap_decode_frame saved;
};

struct ftime_slot {
	uint64_t func;
	uint64_t ns;
};

struct dthread {
	int32_t tid, pid;
	bool used;
	bool has_trace;
	struct auxcap_decode_frame *stack; /* outermost first */
	uint32_t depth, cap_stack;
	struct hist *hist; /* ring of hcap entries, the newest just before hnext (wrapping) */
	struct hist scratch; /* stands in for history entries when none are kept */
	uint32_t hcap;
	struct hist *hnext; /* where the next entry goes */
	struct hist *hend;  /* hist + hcap */
	bool hwrapped;	    /* hcap entries or more were pushed: every entry is kept */
	uint64_t seq_from; /* where the current sequential run began, 0 if not known */
	bool seq_start;	   /* ... at a trace (re)start */
	uint64_t last_time; /* of the last trace event */
	uint64_t last_run_lo, last_run_hi;
	struct dqueue *queue; /* the queue of its last trace event */
	/* per-function time since the last sample */
	struct ftime_slot *ft;
	uint32_t ft_cap, ft_n;
	uint32_t *ft_used; /* the indexes of the ft_n slots in use, in the order claimed
			    * (ft_cap / 2 of them at most: a sample reads and clears only those) */
	uint64_t ft_since; /* time the current function has been accounted up to */
	uint64_t ft_last_func[2]; /* the last two functions accounted, and their slots */
	uint32_t ft_last_slot[2];
	unsigned int ft_last_valid; /* bit k: entry k is valid */
	bool ft_paused;	   /* tracing stopped: the next event restarts the accounting */
	uint64_t trace_ns;
};

/* ---- the session ------------------------------------------------------------------------- */

struct tid_info {
	int32_t tid, pid;
	char comm[16];
};

/* A binary the capture mapped, and the file decode reads it from (archive, cache, ...). */
struct found_file {
	char *mapped; /* owned */
	char *file;   /* owned */
};

/* Which process a CPU ran when, from the context switches (ctx->tasks of its queues). */
struct cpu_tasks {
	struct auxcap_cpu_task *v; /* ascending by since */
	size_t n, cap;
	bool several; /* two processes or more with mappings of their own: given to the backend */
};

struct auxcap_decode {
	struct auxcap_decode_opts opts; /* copied; strings below */
	char *path;		  /* the capture (owned) */
	struct found_file *found; /* binaries found so far */
	size_t nr_found, cap_found;
	char *backend_options;
	struct auxcap_image_map *extra_maps;
	char errtext[256];

	struct auxcap_perf_reader *rd; /* owned; NULL in raw mode */
	struct tp_printer *tp_printer;	      /* owned: auxcap_decode_tp_print(), on first use */
	bool tp_printer_tried;
	struct auxcap_tp_format **tp_formats; /* owned: TRACING_DATA's, parsed on first use
					       * (NULL entries: unusable) */
	size_t nr_tp_formats;
	bool tp_parsed;
	const uint8_t *raw_buf;	       /* raw mode: the mapped trace file */
	size_t raw_len;

	const struct auxcap_backend_ops *backend;
	uint32_t auxtrace_type;
	uint64_t *info_words; /* AUXTRACE_INFO private words, owned */
	size_t nr_info;
	struct auxcap_perf_time_conv tc;
	bool have_tc;
	const struct perf_event_attr *aux_attr; /* the AUX event's attr, NULL if not known */
	const struct auxcap_perf_evsel *aux_evsel;

	/* The image: executable mappings with readable files. */
	struct auxcap_image_map *maps; /* paths owned */
	uint64_t *map_times;	       /* parallel to @maps: when each was made, 0 if not known */
	struct auxcap_image_span *map_spans; /* parallel to @maps: when each was in place (its
					      * process's execs around it) */
	size_t nr_maps, cap_maps;
	bool have_spans;		/* a map's span is not the whole capture */
	uint64_t *exec_times; /* every exec with a time, ascending */
	size_t nr_exec_times;
	int32_t *exec_pids;	    /* every exec with a time by process: its pid, */
	uint64_t *exec_pid_times; /* and its time, ascending by (pid, time) */
	struct cpu_tasks *cpu_tasks; /* per CPU: which process ran when (note_task()) */
	size_t nr_cpu_tasks;
	struct auxcap_image_map *qmaps; /* scratch for one queue's maps */
	struct auxcap_image_span *qspans; /* and their spans */
	struct auxcap_symbols *syms;
	struct data_maps dmaps; /* every user mapping, data too: auxcap_decode_data_map_at() */

	struct tid_info *tids; /* hash table by tid */
	size_t tids_cap, tids_n;

	struct dqueue *queues;
	size_t nr_queues, cap_queues;

	/* the merge */
	struct sb_cursor sb;
	bool sb_ready;
	size_t *heap; /* cursor indices: 0..nr_queues-1 queues, nr_queues the records */
	uint64_t *ckey; /* each cursor's head key */
	uint64_t tid_gen; /* bumped whenever thread names or pids may have changed */
	size_t heap_n;
	bool started;
	int32_t *cpu_tid; /* per CPU: the thread running, -1 */
	size_t nr_cpus;
	struct dthread *threads; /* hash table by tid */
	size_t threads_cap, threads_n;
	struct dthread *last_thread;
	struct dqueue *held_q; /* the queue whose head is the event handed out */
	size_t held_c;	       /* its cursor */
	uint64_t lim_key;      /* while the top queue hands out events: the smallest key of */
	size_t lim_c;	       /* the other cursors, and that cursor (see set_limit()) */
	struct dthread *fast_t; /* the thread of the last event, a trace event, NULL after a
				   record (the quick way of auxcap_decode_next()) */
	const struct qev *fast_first; /* the window's first event (held_q's head moves on by
				       * fast_next - fast_first: merge_next()) */
	const struct qev *fast_next; /* the window the quick way hands out from: events of */
	const struct qev *fast_end;  /* held_q after the held one (see set_fast_window()), */
	uint64_t fast_lim;	     /* with keys below this */
	uint64_t sym_lo, sym_hi; /* the stretch of time the symbols answer for now (the
				  * mappings in place then; auxcap_symbols_set_time()) */

	/* the event handed out, and what it points to */
	struct auxcap_decode_event out;
	bool out_record; /* @out holds a record's fields (cleared for the next trace event) */
	struct auxcap_trace_event trace; /* the trace event handed out (queue_expand()) */
	bool trace_full;		 /* @trace has fields past QEV_HEAD set */
	struct auxcap_record rec;
	struct auxcap_perf_auxtrace_error *err_hold;
	struct auxcap_decode_sample_ctx sctx;
	struct auxcap_decode_frame *sstack;
	size_t sstack_cap;
	struct auxcap_decode_frame *swork; /* scratch: the thread's stack taken back or forward
					    * to a sample's point (sample_context()) */
	uint32_t swork_cap;
	struct auxcap_decode_branch *sbranches;
	struct auxcap_decode_ftime *sftime;
	size_t sftime_cap;
	struct hist *fwd; /* scratch for the forward part of a sample's branches */
	size_t fwd_cap;

	struct auxcap_decode_info info;
	int ip_reg; /* the IP's index in perf's user register set of the capture's arch, -1 */
	uint64_t ktext; /* _text of the capture's kernel ([kernel.kallsyms]_text MMAP), 0 */
	bool warned_timeless;
	struct auxcap_disasm *disasm; /* for branches of unknown type, NULL if none */
	bool disasm_tried;
	struct br_class { uint64_t addr; uint8_t type; bool valid; } *brc; /* cache by address */
	/* Whether a jump's target starts a function (a tail call: jump_to_start()), cached by
	 * target and process for the symbols' generation @jmpc_gen and stretch @jmpc_lo; an
	 * entry that never matches has @to UINT64_MAX. */
	struct jmp_class { uint64_t to; int32_t pid; bool start; } *jmpc;
	uint32_t jmpc_gen;
	uint64_t jmpc_lo;
	bool want_context; /* the capture has counter samples: keep history and function time */
	uint64_t prog_done, prog_total; /* decode progress: trace bytes (opts.progress) */
	uint32_t prog_tick;		/* trace events since the last progress call */
	bool prog_finished;		/* the end was reported */
	const struct auxcap_perf_evsel *sample_evsel; /* the one event with samples, or NULL */
};

/* session.c */
/* The exec times queue @q's runs are not spread across (its process's, or anyone's for a CPU's
 * queue), ascending; borrowed from @d. */
void decode_queue_execs(const struct auxcap_decode *d, const struct dqueue *q,
			const uint64_t **ret, size_t *ret_n);
/* A CPU's queue: which process the CPU ran when (the context switches), else NULL, 0. */
void decode_queue_tasks(const struct auxcap_decode *d, const struct dqueue *q,
			const struct auxcap_cpu_task **ret, size_t *ret_n);
int decode_queue_maps(struct auxcap_decode *d, const struct dqueue *q,
		      const struct auxcap_image_map **ret, size_t *ret_n);
void decode_fill_ctx(struct auxcap_decode *d, const struct dqueue *q,
		     struct auxcap_decode_ctx *ctx, char *errbuf, size_t errlen);
struct tid_info *decode_tid(struct auxcap_decode *d, int32_t tid, bool create);
uint64_t decode_record_time(const struct auxcap_perf_event *ev, bool *has_time);

/* queue.c */
/* Progress: queue @q has decoded @pos of its bytes; @call: tell opts.progress now. */
void queue_progress(struct auxcap_decode *d, struct dqueue *q, uint64_t pos, bool call);
/* The next final event of @q (filling the ring as needed): 1, 0 at the end, or an error. */
int queue_fill(struct auxcap_decode *d, struct dqueue *q, struct qev **ret);
static inline int queue_peek(struct auxcap_decode *d, struct dqueue *q, struct qev **ret)
{
	size_t first = q->head + (q->held ? 1 : 0);

	if (first != q->ready) { /* the usual case: a final event is waiting */
		*ret = &q->ring[first & (q->cap - 1)];
		return 1;
	}
	return queue_fill(d, q, ret);
}
/* The head was handed out: keep it until queue_release(), which drops it. */
void queue_hold(struct dqueue *q);
/* The event handed out last, held. */
static inline const struct qev *queue_held(const struct dqueue *q)
{
	return &q->ring[q->head & (q->cap - 1)];
}
/* The whole event of @e, the first event of @q not handed out, rebuilt in d->trace (valid
 * until the next call). */
const struct auxcap_trace_event *queue_expand(struct auxcap_decode *d, const struct dqueue *q,
					      const struct qev *e);
/* The tid field of @e, the first event of @q not handed out. */
int64_t queue_head_tid(const struct dqueue *q, const struct qev *e);
void queue_release(struct dqueue *q);
/* Final events after the head: the @i-th (0 = head), NULL past them (events of the open run
 * have no time yet: see queue_final_at()). */
const struct qev *queue_at(const struct dqueue *q, size_t i);
/* The @i-th event after the head (0 = head) with its final time, decoding as far as needed;
 * NULL if the queue ends (or fails: the error comes with the merge's next event) first.
 * Events already returned may move: call again rather than keep pointers across calls. */
const struct qev *queue_final_at(struct auxcap_decode *d, struct dqueue *q, size_t i);
void queue_fini(struct auxcap_decode *d, struct dqueue *q);

/* merge.c */
/* The index of event @es among the capture's (auxcap_decode_evsel()), or their number if it is
 * none of them (a sample slot: the report's and the annotation's); @c (zeroed first) keeps
 * the last answer. */
struct evsel_slot_cache {
	const struct auxcap_perf_evsel *es;
	size_t slot;
};
size_t decode_evsel_slot(const struct auxcap_decode *d, struct evsel_slot_cache *c,
			 const struct auxcap_perf_evsel *es);

int merge_next(struct auxcap_decode *d);
void merge_fini(struct auxcap_decode *d);

#endif /* AUXCAP_DECODE_INT_H */
