/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap: subcommand table and dispatch, error printing.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxcap/log.h"
#include "cli.h"
#include "config.h"

extern const struct cli_cmd cli_cmd_decode;
#if AUXCAP_HAVE_LIBELF
extern const struct cli_cmd cli_cmd_archive;
#endif

static const struct cli_cmd *const commands[] = {
	&cli_cmd_list,
	&cmd_record,
	&cmd_info,
	&cli_cmd_decode,
#if AUXCAP_HAVE_LIBELF
	&cli_cmd_archive,
#endif
	NULL,
};

void cli_err(const char *fmt, ...)
{
	va_list ap;

	fputs("auxcap: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("auxcap: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void log_to_stderr(void *userdata, enum auxcap_log_level level, const char *msg)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };

	(void)userdata;
	fprintf(stderr, "auxcap: %s: %s\n", names[level], msg);
}

void cli_log_init(int verbosity)
{
	enum auxcap_log_level max = AUXCAP_LOG_WARN;

	if (verbosity == 1)
		max = AUXCAP_LOG_INFO;
	else if (verbosity > 1)
		max = AUXCAP_LOG_DEBUG;
	auxcap_log_set(log_to_stderr, NULL, max);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: auxcap <command> [options]\n\ncommands:\n");
	for (size_t i = 0; commands[i]; i++)
		fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\n'auxcap <command> --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
	cli_log_init(0);
	if (argc < 2) {
		usage(stderr);
		return CLI_ERR;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return CLI_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("auxcap %s\n", AUXCAP_VERSION);
		return CLI_OK;
	}
	for (size_t i = 0; commands[i]; i++)
		if (!strcmp(argv[1], commands[i]->name))
			return commands[i]->run(argc - 1, argv + 1);
	cli_err("unknown command '%s'; run 'auxcap --help' for the list", argv[1]);
	return CLI_ERR;
}
