/* SPDX-License-Identifier: BSD-3-Clause */
/* The auxcap command-line tool: subcommands and shared helpers.  Only cli/ prints or exits. */
#ifndef AUXCAP_CLI_H
#define AUXCAP_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "auxcap/decode.h"

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

/*
 * The path to open for input FILE of decode/report: FILE itself, or for "-" standard input
 * (a regular file as it is; a pipe saved first to an unlinked temporary file, whose fd is
 * returned in *@ret_fd for the caller to close, else -1).  Errors are printed; returns 0 or
 * a negative errno.
 */
int cli_input_open(const char *file, char *path, size_t path_size, int *ret_fd);

/*
 * Open capture @file ("-": standard input, as cli_input_open()) into a decode session *@ret
 * for command @cmd ("report", "annotate", "diff"), which reads its decoded events: a capture
 * whose backend only prints its trace is an error naming @cmd.  With @progress the session
 * reports to the progress bar (cli_progress_begin() first); @raw_names and @vmlinux (NULL:
 * none) are auxcap_decode_opts'.  Errors are printed; returns 0 or
 * a negative errno (*@ret NULL).
 */
int cli_capture_open(const char *cmd, const char *file, bool progress, bool raw_names,
		     const char *vmlinux, struct auxcap_decode **ret);

/*
 * Finish writing output @out (standard output, or the file @path opened by
 * cli_output_open(), which is closed): flushed and checked, a failure printed naming @path
 * or @what.  Returns @ret, or CLI_ERR if writing failed.
 */
int cli_output_close(FILE *out, const char *path, const char *what, int ret);

/* "--top N" (report, diff, annotate) at argv[*i]: N into *@ret and 1; 0 if argv[*i] is another
 * option; -EINVAL (printed) if N is not a number of functions (0..1000000). */
int cli_top_opt(int argc, char **argv, int *i, size_t *ret);

/* Value of "--opt=V" or "--opt V" at argv[*i] (advancing *i for the second form), NULL if
 * argv[*i] is not @name or its value is missing. */
const char *cli_opt_value(int argc, char **argv, int *i, const char *name);

/* Whether @arg is the option @name ("--name" or "--name=..."). */
bool cli_is_opt(const char *arg, const char *name);

/* "-o FILE", "--output FILE" or "--output=FILE" at argv[*i]: the file in *@ret (borrowed from
 * argv) and 1; 0 if argv[*i] is another option; -EINVAL (printed) if the name is missing. */
int cli_output_opt(int argc, char **argv, int *i, const char **ret);

/* "-k FILE", "--vmlinux FILE" or "--vmlinux=FILE" (perf's): the kernel's ELF image, as
 * cli_output_opt() (auxcap_decode_opts.vmlinux). */
int cli_vmlinux_opt(int argc, char **argv, int *i, const char **ret);

/*
 * This machine's kernel into @dir (made if missing), for decode to name and decode kernel
 * code: its kallsyms, and with @code a copy of its code from /proc/kcore
 * (auxcap_proc_kcore_copy()), each unless already there (with @replace: copied again, over
 * what is there).  Adds the bytes copied to *@bytes.
 * Returns what was copied (1: kallsyms, 2: the code, both: 3), or a negative errno and in
 * *@what the file that could not be copied.  (With libelf only: cmd_archive.c.)
 */
int cli_archive_kernel(const char *dir, bool code, bool replace, uint64_t *bytes,
		       const char **what);

/* --pid LIST, --tid LIST, --comm LIST (decode, report): the threads whose events are kept;
 * --event LIST: the events whose samples are.  @f points into the struct: do not copy it. */
#define CLI_FILTER_MAX 64
struct cli_filter {
	int32_t pids[CLI_FILTER_MAX], tids[CLI_FILTER_MAX];
	const char *comms[CLI_FILTER_MAX]; /* into @buf */
	const char *events[CLI_FILTER_MAX]; /* into @buf */
	char buf[1024];
	size_t used; /* bytes of @buf taken */
	struct auxcap_decode_filter f;
	/* decode's --symbols, --dsos (cli_code_filter_opt()): into @buf */
	const char *syms[CLI_FILTER_MAX], *dsos[CLI_FILTER_MAX];
	size_t nr_syms, nr_dsos;
};

/* One of them at argv[*i] added to @f (zero-filled first): 1; 0 if argv[*i] is another
 * option; -EINVAL (printed) if its value is bad. */
int cli_filter_opt(int argc, char **argv, int *i, struct cli_filter *f);

/* --symbols NAMES, --dsos FILES (perf script's) at argv[*i] added to @f: 1; 0 if argv[*i] is
 * another option; -EINVAL (printed) if the list is bad. */
int cli_code_filter_opt(int argc, char **argv, int *i, struct cli_filter *f);

/*
 * Whether @ev of session @d passes @f's --symbols and --dsos (true when neither was given): a
 * trace event whose address (a branch's source or target) is in one of the functions or files,
 * a sample whose IP (the one decode looks up) is; losses and gaps always pass, other records
 * do not.  Files match by path or last component.
 */
bool cli_code_filter_match(const struct cli_filter *f, struct auxcap_decode *d,
			   const struct auxcap_decode_event *ev);

/* report's --latency NAMES at argv[*i] into @f's syms: 1; 0 if argv[*i] is another option;
 * -EINVAL (printed) if the list is bad.  Each is NAME or NAME@FILE (cli_func_spec_is()). */
int cli_latency_opt(int argc, char **argv, int *i, struct cli_filter *f);

/* Whether function @name of file @dso is the one @spec names: NAME (cli_sym_is(); a PLT
 * entry's "memcpy@plt" too) or NAME@FILE (and @dso is FILE: cli_dso_is()). */
bool cli_func_spec_is(const char *name, const char *dso, const char *spec);

/* The filter @f's options gave, NULL if none. */
const struct auxcap_decode_filter *cli_filter_get(const struct cli_filter *f);

/* A time with its unit ("500us", "2ms", "1.5s", "100ns") in ns, at least 1: 0, or -EINVAL
 * (nothing printed). */
int cli_duration_parse(const char *s, uint64_t *ret);

/* @ns as "1.553 s", "12.35 ms", "456.0 us", "789 ns" in @buf (returned). */
const char *cli_duration_str(char *buf, size_t n, uint64_t ns);

/* Whether function @name (as shown; NULL: none) is the one a user named @want (annotate
 * SYMBOL, --symbols): the same name, or a C++ name without its parameter list ("ns::f" for
 * "ns::f(int)"). */
bool cli_sym_is(const char *name, const char *want);

/* Whether file @dso (a path; NULL: none) is the one a user named @name: its path or its last
 * component (--dso, --dsos). */
bool cli_dso_is(const char *dso, const char *name);

/* The last component of @path (@path itself without a '/'; NULL for NULL). */
const char *cli_base_name(const char *path);

/* A function's file as report and diff print it after its name: "  [libc.so.6]" (the last
 * component), "  [kernel.kallsyms]" or "  [vdso]" as they are; nothing for NULL. */
void cli_print_dso(FILE *f, const char *dso);

#endif /* AUXCAP_CLI_H */
