/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Logging.  Library code never prints: it reports through a callback the application sets
 * (the CLI prints to stderr).  Without a callback messages are dropped.
 */
#ifndef AUXCAP_LOG_H
#define AUXCAP_LOG_H

#include <stdarg.h>

#include "auxcap/api.h"

enum auxcap_log_level {
	AUXCAP_LOG_ERROR = 0,
	AUXCAP_LOG_WARN,
	AUXCAP_LOG_INFO,
	AUXCAP_LOG_DEBUG,
};

typedef void (*auxcap_log_fn)(void *userdata, enum auxcap_log_level level, const char *msg);

/** Install @fn (NULL to silence).  Process-wide; not thread-safe against concurrent logging. */
AUXCAP_API void auxcap_log_set(auxcap_log_fn fn, void *userdata, enum auxcap_log_level max_level);

/** Format and report a message.  Used by library code. */
AUXCAP_API void auxcap_log(enum auxcap_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* AUXCAP_LOG_H */
