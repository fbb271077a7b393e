/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The live tracer as a trace source of the emulated AUX PMU.
 *
 * The emulator pulls items (struct auxcap_emu_source_ops) from its producer thread; the first
 * pull starts the command under the tracer on that thread (ptrace requests must all come
 * from the thread that started the child), later pulls single-step it in batches and hand out
 * the side-band (COMM, MMAP2) and the trace bytes the encoder produced, in order.  A batch
 * ends before a system call, which the producer thread steps without the emulator's lock
 * (advance()): a command blocked in one does not hold off the consumer.  When the command has
 * exited the source reports the end of the stream.
 */
#ifndef AUXCAP_LIVE_SOURCE_H
#define AUXCAP_LIVE_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "auxcap/emu.h"
#include "tracer.h"

struct auxcap_live_source;

/** Pull-side operations; @ctx is a struct auxcap_live_source. */
extern const struct auxcap_emu_source_ops auxcap_live_source_ops;

/**
 * A source that will run @argv (copied) traced in @format, at most @max_insns instructions
 * (0: no limit).  Owned by the caller until attached (auxcap_emu_source_attach() with
 * auxcap_live_source_ops), then by the emulator, which frees it when the event is closed.
 * Returns 0, -EINVAL, or -ENOMEM.
 */
int auxcap_live_source_new(enum auxcap_tracer_format format, char *const argv[],
			   uint64_t max_insns, struct auxcap_live_source **ret);

/**
 * A source that traces @pid, a child the caller forked to run a command, waiting before its
 * exec for one byte on the pipe whose write end is @go_fd (see auxcap_tracer_start_child()).
 * The first pull, on the emulator's producer thread, seizes it and lets it exec; so the caller
 * can open perf events on @pid (enable_on_exec) before the command runs.  The source owns
 * @go_fd from now on (closed unused if the source is freed before it started: the child then
 * exits without running the command), and the child: the caller must not wait for it.
 * Returns 0, -EINVAL (bad argument), or -ENOMEM (then @go_fd is still the caller's).
 */
int auxcap_live_source_new_child(enum auxcap_tracer_format format, pid_t pid, int go_fd,
				 uint64_t max_insns, struct auxcap_live_source **ret);

/**
 * A source that attaches to the running thread @tid (auxcap_tracer_attach(): ptrace, no
 * fork) on its first pull and traces it until it exits, @max_insns are traced, or
 * auxcap_live_source_request_stop(); then the thread is detached and runs on.  Its side-band
 * names its process (the thread group) as pid.  Returns 0, -EINVAL, or -ENOMEM.
 */
int auxcap_live_source_new_attach(enum auxcap_tracer_format format, pid_t tid,
				  uint64_t max_insns, struct auxcap_live_source **ret);

/**
 * Ask the tracer to stop and let its task go (safe from any thread; NULL is a no-op): the
 * producer thread ends the trace at its next step, or, if the task is blocked in a system
 * call, interrupts the call (which the kernel restarts once the task runs on), then detaches.
 * The source ends as it does when the task exits (auxcap_live_source_ended()).
 */
void auxcap_live_source_request_stop(struct auxcap_live_source *ls);

/** Free a source that was never attached (NULL-safe): a command it started is killed, a thread
 * it attached to is detached. */
void auxcap_live_source_free(struct auxcap_live_source *ls);

/**
 * Whether the traced command has ended (or failed to start); safe from any thread.  Then
 * *@ret_err (if not NULL) is 0 or the negative errno that stopped it, *@ret_status the wait
 * status of the command (if it exited while traced).
 */
bool auxcap_live_source_ended(const struct auxcap_live_source *ls, int *ret_err, int *ret_status);

/**
 * Receives a hit of the watched function (auxcap_live_source_set_trigger()): @time_ns is when
 * the tracer saw its first instruction execute (CLOCK_MONOTONIC, at the ptrace stop right
 * after it), @pid/@tid the task; with a minimum duration, when the call returned, and
 * @call_ns how long it took (else 0).  Runs on the emulator's producer thread, under the
 * emulator's lock: it must not call into the emulator.
 */
typedef void (*auxcap_live_source_hit_fn)(void *ctx, uint64_t time_ns, uint32_t pid,
					  uint32_t tid, uint64_t call_ns);

/**
 * Watch the function whose first byte is at @file_offset in the file @binary: whenever the
 * traced command executes that byte of any executable mapping of the file (found by device
 * and inode in the mappings the tracer reports, so a PIE or a library loaded later is found
 * too), @on_hit is called.  The code is not patched (a uprobe's int3 would be read as the
 * instruction).  Call before the emulator starts pulling.
 * Returns 0, -EINVAL (bad argument, or the source started already), or the errno of stat().
 */
int auxcap_live_source_set_trigger(struct auxcap_live_source *ls, const char *binary,
				   uint64_t file_offset, auxcap_live_source_hit_fn on_hit,
				   void *ctx);

/**
 * After auxcap_live_source_set_trigger(): a hit only for a call of at least @min_ns (0: at
 * every entry, the default).  A call lasts from the function's first instruction to the ret
 * that pops the return address the stack pointer pointed at then (through a PLT stub or a
 * tail call too; recursion pairs up; a call unwound past by a longjmp is not timed); the hit
 * is timed at the stop after that ret.  Call before the emulator starts pulling.  Returns 0
 * or -EINVAL.
 */
int auxcap_live_source_set_trigger_min(struct auxcap_live_source *ls, uint64_t min_ns);

/** With a minimum duration: the calls timed so far and the longest; safe from any thread. */
void auxcap_live_source_calls(const struct auxcap_live_source *ls, uint64_t *calls,
			      uint64_t *max_ns);

/** Hits of the watched function so far; safe from any thread. */
uint64_t auxcap_live_source_hits(const struct auxcap_live_source *ls);

/**
 * Single steps per refill (0: the default, 4096): ptrace stops, an instruction each, or an
 * iteration of a REP string instruction.  The emulator's lock is held for a whole refill, so
 * a consumer's ioctl (a snapshot's freeze) waits for the rest of it: fewer per refill let it
 * in sooner, at some cost in speed.  Call before the emulator starts pulling.
 */
void auxcap_live_source_set_batch(struct auxcap_live_source *ls, uint64_t steps);

struct auxcap_perf_time_conv;

/**
 * Stamp the side-band items (COMM, MMAP2) with the perf time of the tracer's TSC when it saw
 * them, converted with @tc (copied), instead of the time they are written: a decoder then
 * finds each mapping in place before the first instruction that runs from it.  Call before
 * the emulator starts pulling (the capture's own conversion, so both agree).  NULL: the time
 * of writing again.
 */
void auxcap_live_source_set_time_conv(struct auxcap_live_source *ls,
				      const struct auxcap_perf_time_conv *tc);

/**
 * Whether the source has handed out its last item (after the command ended, everything the
 * tracer produced has reached the emulator); safe from any thread.
 */
bool auxcap_live_source_drained(const struct auxcap_live_source *ls);

/** Pid of the traced command once started, else 0; safe from any thread. */
pid_t auxcap_live_source_pid(const struct auxcap_live_source *ls);

/** Counters of the tracer (valid once ended). */
void auxcap_live_source_stats(const struct auxcap_live_source *ls, struct auxcap_tracer_stats *ret);

#endif
