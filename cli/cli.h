/* SPDX-License-Identifier: BSD-3-Clause */
/* The auxcap command-line tool: subcommands and shared helpers.  Only cli/ prints or exits. */
#ifndef AUXCAP_CLI_H
#define AUXCAP_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* Exit status: 0 success, 1 usage or input error, 2 capture lost data under --strict. */
enum { CLI_OK = 0, CLI_ERR = 1, CLI_LOST = 2 };

struct cli_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
};

/* The subcommands, one file each (cmd_*.c). */
extern const struct cli_cmd cmd_info;
extern const struct cli_cmd cmd_record;
extern const struct cli_cmd cli_cmd_list;

/*
 * Create the output file @path as every auxcap output is (auxcap_file_create(): 0600, an
 * existing entry replaced, never through a symlink) and open it for writing.  Prints the
 * reason and returns NULL on failure.
 */
FILE *cli_output_open(const char *path);

/* Print "auxcap: <message>" to stderr, one line. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Route library log messages to stderr (verbosity: 0 warnings, 1 info, 2 debug). */
void cli_log_init(int verbosity);

#endif /* AUXCAP_CLI_H */
