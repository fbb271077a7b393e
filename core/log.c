/* SPDX-License-Identifier: BSD-3-Clause */
/* The process-wide log callback. */
#include <stdio.h>

#include "auxcap/log.h"

static auxcap_log_fn log_fn;
static void *log_userdata;
static enum auxcap_log_level log_max = AUXCAP_LOG_WARN;

void auxcap_log_set(auxcap_log_fn fn, void *userdata, enum auxcap_log_level max_level)
{
	log_fn = fn;
	log_userdata = userdata;
	log_max = max_level;
}

void auxcap_log(enum auxcap_log_level level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!log_fn || level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(log_userdata, level, msg);
}
