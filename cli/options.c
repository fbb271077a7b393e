/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Option parsing shared by the commands that read a capture (decode, report): "--opt=V" and
 * "--opt V" values, and the output file option.
 */
#include <errno.h>
#include <string.h>

#include "cli.h"

const char *cli_opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (!strcmp(argv[*i], name))
		return *i + 1 < argc ? argv[++*i] : NULL;
	return NULL;
}

bool cli_is_opt(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && (arg[n] == '\0' || arg[n] == '=');
}

int cli_output_opt(int argc, char **argv, int *i, const char **ret)
{
	const char *arg = argv[*i], *v;

	if (!strcmp(arg, "-o"))
		v = *i + 1 < argc ? argv[++*i] : NULL;
	else if (cli_is_opt(arg, "--output"))
		v = cli_opt_value(argc, argv, i, "--output");
	else
		return 0;
	if (!v || !*v) {
		cli_err("%s needs a file name", arg);
		return -EINVAL;
	}
	*ret = v;
	return 1;
}
