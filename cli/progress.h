/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A progress bar on standard error for long decodes (auxcap report, auxcap decode): fed by the
 * decode session's progress callback (auxcap_decode_opts.progress), redrawn at most 10 times
 * a second, erased at the end and before any message auxcap prints to standard error.
 */
#ifndef AUXCAP_CLI_PROGRESS_H
#define AUXCAP_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "auxcap/decode.h"

enum cli_progress_mode {
	CLI_PROGRESS_AUTO = 0, /* when standard error is a terminal */
	CLI_PROGRESS_ON,       /* --progress: always */
	CLI_PROGRESS_OFF,      /* --no-progress: never */
};

/*
 * Decide whether to draw: AUTO draws when standard error is a terminal and @output_on_tty is
 * false (the command's output does not go to that same terminal, where the bar would cut into
 * it).  Returns true if the bar is on; then pass cli_progress_update to the session.
 */
bool cli_progress_begin(enum cli_progress_mode mode, bool output_on_tty);

/* An auxcap_decode_progress_fn (@arg unused). */
void cli_progress_update(void *arg, enum auxcap_decode_phase phase, uint64_t done,
			 uint64_t total);

/* Erase the bar if it is drawn (it comes back at the next update). */
void cli_progress_clear(void);

/* Erase the bar and stop drawing. */
void cli_progress_end(void);

#endif /* AUXCAP_CLI_PROGRESS_H */
