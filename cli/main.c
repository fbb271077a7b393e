/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap: subcommand table and dispatch, error printing.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auxcap/backend.h"
#include "auxcap/log.h"
#include "cli.h"
#include "config.h"
#include "progress.h"

extern const struct cli_cmd cli_cmd_decode;
extern const struct cli_cmd cli_cmd_report;
extern const struct cli_cmd cli_cmd_diff;
extern const struct cli_cmd cli_cmd_annotate;
#if AUXCAP_HAVE_LIBELF
extern const struct cli_cmd cli_cmd_archive;
#endif

static const struct cli_cmd *const commands[] = {
	&cli_cmd_list,
	&cmd_record,
	&cmd_info,
	&cli_cmd_decode,
	&cli_cmd_report,
	&cli_cmd_diff,
	&cli_cmd_annotate,
#if AUXCAP_HAVE_LIBELF
	&cli_cmd_archive,
#endif
	NULL,
};

void cli_err(const char *fmt, ...)
{
	va_list ap;

	cli_progress_clear();
	fputs("auxcap: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	cli_progress_clear();
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
	cli_progress_clear();
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
	fprintf(f, "usage: auxcap [--plugin PATH]... <command> [options]\n\ncommands:\n");
	for (size_t i = 0; commands[i]; i++)
		fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f,
		"\n'auxcap <command> --help' describes a command's options.\n"
		"\n"
		"  --plugin PATH   load the out-of-tree backend PATH (a shared object; also accepted\n"
		"                  after the command name, before '--').  The plug-ins of the\n"
		"                  directory $AUXCAP_PLUGIN_DIR are loaded too (AUXCAP_PLUGIN_DIR=\n"
		"                  loads none), by default of\n"
		"                  %s\n",
		AUXCAP_PLUGIN_DIR_DEFAULT);
}

#define MAX_PLUGIN_ARGS 32

static void plugin_dir_report(void *arg, const char *path, int err, const char *reason)
{
	(void)arg;
	(void)path;
	(void)err;
	cli_warn("plug-in directory: %s (skipped)", reason);
}

/*
 * Take --plugin PATH / --plugin=PATH out of @argv (up to a "--": what follows is the traced
 * command's), load those plug-ins, then those of the plug-in directory.  Explicit plug-ins
 * come first: they win a name clash and are asked first for a PMU.
 * Returns 0, or -1 after printing why an explicit plug-in could not be loaded.
 */
static int load_plugins(int *argc, char **argv)
{
	const char *paths[MAX_PLUGIN_ARGS], *dir;
	size_t n = 0;
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "--")) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "--plugin")) {
			if (i + 1 >= *argc) {
				cli_err("--plugin needs the path of a plug-in (a .so file)");
				return -1;
			}
			v = argv[++i];
		} else if (!strncmp(argv[i], "--plugin=", 9)) {
			v = argv[i] + 9;
		}
		if (!v) {
			argv[out++] = argv[i];
			continue;
		}
		if (n == MAX_PLUGIN_ARGS) {
			cli_err("too many --plugin options (at most %d)", MAX_PLUGIN_ARGS);
			return -1;
		}
		paths[n++] = v;
	}
	argv[out] = NULL;
	*argc = out;

	for (size_t i = 0; i < n; i++) {
		char err[1024];

		if (auxcap_backend_load(paths[i], NULL, err, sizeof(err)) < 0) {
			cli_err("%s", err);
			return -1;
		}
	}
	dir = getenv("AUXCAP_PLUGIN_DIR");
	if (!dir)
		dir = AUXCAP_PLUGIN_DIR_DEFAULT;
	if (*dir) {
		int r = auxcap_backend_load_dir(dir, plugin_dir_report, NULL);

		if (r < 0)
			cli_warn("cannot read the plug-in directory '%s': %s", dir, strerror(-r));
	}
	return 0;
}

int main(int argc, char **argv)
{
	cli_log_init(0);
	if (load_plugins(&argc, argv) < 0)
		return CLI_ERR;
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
