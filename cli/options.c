/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Option parsing shared by the commands that read a capture (decode, report, diff,
 * annotate): "--opt=V" and "--opt V" values, the output file option, the thread filter,
 * --top; and the end of their output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
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

/* A file option: short @s ("-o"), long @l ("--output"). */
static int file_opt(int argc, char **argv, int *i, const char *s, const char *l,
		    const char **ret)
{
	const char *arg = argv[*i], *v;

	if (!strcmp(arg, s))
		v = *i + 1 < argc ? argv[++*i] : NULL;
	else if (cli_is_opt(arg, l))
		v = cli_opt_value(argc, argv, i, l);
	else
		return 0;
	if (!v || !*v) {
		cli_err("%s needs a file name", arg);
		return -EINVAL;
	}
	*ret = v;
	return 1;
}

int cli_output_opt(int argc, char **argv, int *i, const char **ret)
{
	return file_opt(argc, argv, i, "-o", "--output", ret);
}

int cli_vmlinux_opt(int argc, char **argv, int *i, const char **ret)
{
	return file_opt(argc, argv, i, "-k", "--vmlinux", ret);
}

/* What a filter option takes, for its messages: "event names", "cpu-clock,sched:sched_switch" */
struct filter_kind {
	const char *opt, *what, *example;
};

static const struct filter_kind k_event = { "--event", "event names",
					    "cpu-clock,sched:sched_switch" };
static const struct filter_kind k_pid = { "--pid", "process or thread ids", "1234,1240" };
static const struct filter_kind k_tid = { "--tid", "process or thread ids", "1234,1240" };
static const struct filter_kind k_comm = { "--comm", "command names", "make,cc1" };

/* "A,B,C", the value of option @k, into @f: numbers into @ids, else names into @f->buf and
 * @names; *@nr counts them. */
static int filter_list(struct cli_filter *f, const struct filter_kind *k, const char *v,
		       int32_t *ids, const char **names, size_t *nr)
{
	const char *p = v;

	if (!v || !*v) {
		cli_err("%s needs a value: %s, e.g. %s", k->opt, k->what, k->example);
		return -EINVAL;
	}
	while (*p) {
		size_t len = strcspn(p, ",");

		if (*nr == CLI_FILTER_MAX) {
			cli_err("%s: at most %d entries", k->opt, CLI_FILTER_MAX);
			return -EINVAL;
		}
		if (ids) {
			char *end;
			long n = strtol(p, &end, 10);

			if (end != p + len || !len || n < 0 || n > INT32_MAX) {
				cli_err("bad %s '%.*s': give %s, e.g. %s %s", k->opt, (int)len, p,
					k->what, k->opt, k->example);
				return -EINVAL;
			}
			ids[(*nr)++] = (int32_t)n;
		} else {
			if (!len || f->used + len + 1 > sizeof(f->buf)) {
				cli_err("bad %s '%s': give %s, e.g. %s %s", k->opt, v, k->what, k->opt,
					k->example);
				return -EINVAL;
			}
			memcpy(f->buf + f->used, p, len);
			f->buf[f->used + len] = '\0';
			names[(*nr)++] = f->buf + f->used;
			f->used += len + 1;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

int cli_filter_opt(int argc, char **argv, int *i, struct cli_filter *f)
{
	const char *arg = argv[*i];

	f->f.pids = f->pids;
	f->f.tids = f->tids;
	f->f.comms = f->comms;
	f->f.events = f->events;
	if (cli_is_opt(arg, "--event"))
		return filter_list(f, &k_event, cli_opt_value(argc, argv, i, "--event"), NULL,
				   f->events, &f->f.nr_events) < 0 ? -EINVAL : 1;
	if (cli_is_opt(arg, "--pid"))
		return filter_list(f, &k_pid, cli_opt_value(argc, argv, i, "--pid"), f->pids, NULL,
				   &f->f.nr_pids) < 0 ? -EINVAL : 1;
	if (cli_is_opt(arg, "--tid"))
		return filter_list(f, &k_tid, cli_opt_value(argc, argv, i, "--tid"), f->tids, NULL,
				   &f->f.nr_tids) < 0 ? -EINVAL : 1;
	if (cli_is_opt(arg, "--comm") || cli_is_opt(arg, "--comms")) /* (perf's name) */
		return filter_list(f, &k_comm,
				   cli_opt_value(argc, argv, i, arg[6] == 's' ? "--comms" : "--comm"),
				   NULL, f->comms, &f->f.nr_comms) < 0 ? -EINVAL : 1;
	return 0;
}

static const struct filter_kind k_syms = { "--symbols", "function names", "work,main" };
static const struct filter_kind k_latency = { "--latency", "function names (NAME or NAME@FILE)",
					      "work,leaf_add@a.out" };

int cli_latency_opt(int argc, char **argv, int *i, struct cli_filter *f)
{
	if (!cli_is_opt(argv[*i], "--latency"))
		return 0;
	return filter_list(f, &k_latency, cli_opt_value(argc, argv, i, "--latency"), NULL,
			   f->syms, &f->nr_syms) < 0 ? -EINVAL : 1;
}

bool cli_func_spec_is(const char *name, const char *dso, const char *spec)
{
	const char *at = strrchr(spec, '@');
	char want[512];
	size_t n = at ? (size_t)(at - spec) : strlen(spec);

	if (cli_sym_is(name, spec)) /* (also "memcpy@plt", a PLT entry's name) */
		return true;
	if (!at || n >= sizeof(want))
		return false;
	memcpy(want, spec, n);
	want[n] = '\0';
	return cli_sym_is(name, want) && cli_dso_is(dso, at + 1);
}
static const struct filter_kind k_dsos = { "--dsos", "files of code", "libc.so.6,a.out" };

int cli_code_filter_opt(int argc, char **argv, int *i, struct cli_filter *f)
{
	const char *arg = argv[*i];

	if (cli_is_opt(arg, "--symbols"))
		return filter_list(f, &k_syms, cli_opt_value(argc, argv, i, "--symbols"), NULL,
				   f->syms, &f->nr_syms) < 0 ? -EINVAL : 1;
	if (cli_is_opt(arg, "--dsos"))
		return filter_list(f, &k_dsos, cli_opt_value(argc, argv, i, "--dsos"), NULL,
				   f->dsos, &f->nr_dsos) < 0 ? -EINVAL : 1;
	return 0;
}

/* Whether address @addr of @pid is in one of @f's functions and files. */
static bool code_match(const struct cli_filter *f, struct auxcap_decode *d, int32_t pid,
		       uint64_t addr)
{
	const char *name = NULL, *dso = NULL;
	size_t i;

	if (auxcap_decode_symbolize(d, pid, addr, &name, NULL, &dso) == 0)
		return false;
	for (i = 0; i < f->nr_syms && !cli_sym_is(name, f->syms[i]); i++)
		;
	if (f->nr_syms && i == f->nr_syms)
		return false;
	for (i = 0; i < f->nr_dsos && !cli_dso_is(dso, f->dsos[i]); i++)
		;
	return !f->nr_dsos || i < f->nr_dsos;
}

bool cli_code_filter_match(const struct cli_filter *f, struct auxcap_decode *d,
			   const struct auxcap_decode_event *ev)
{
	const struct auxcap_trace_event *t = ev->trace;

	if (!f->nr_syms && !f->nr_dsos)
		return true;
	switch (ev->kind) {
	case AUXCAP_DECODE_LOSS:
		return true;
	case AUXCAP_DECODE_SAMPLE:
		return code_match(f, d, ev->pid,
				  ev->ctx ? ev->ctx->ip : ev->rec ? ev->rec->u.sample.ip : 0);
	case AUXCAP_DECODE_TRACE:
		if (t->kind == AUXCAP_TRACE_GAP)
			return true;
		if (t->flags & AUXCAP_TRACE_F_IP_UNKNOWN)
			return false;
		return code_match(f, d, ev->pid, t->ip) ||
		       (t->kind == AUXCAP_TRACE_BRANCH && code_match(f, d, ev->pid, t->to));
	default:
		return false;
	}
}

const struct auxcap_decode_filter *cli_filter_get(const struct cli_filter *f)
{
	return f->f.nr_pids || f->f.nr_tids || f->f.nr_comms || f->f.nr_events ? &f->f : NULL;
}

const char *cli_base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

void cli_print_dso(FILE *f, const char *dso)
{
	if (dso && dso[0] == '[')
		fprintf(f, "  %s", dso); /* [kernel.kallsyms], [vdso] */
	else if (dso)
		fprintf(f, "  [%s]", cli_base_name(dso));
}

int cli_top_opt(int argc, char **argv, int *i, size_t *ret)
{
	const char *v;
	char *end;
	unsigned long long n;

	if (!cli_is_opt(argv[*i], "--top"))
		return 0;
	v = cli_opt_value(argc, argv, i, "--top");
	errno = 0;
	n = v && *v && *v != '-' ? strtoull(v, &end, 10) : 0;
	if (!v || !*v || *v == '-' || errno || *end || n > 1000000) {
		cli_err("bad --top '%s': give a number of functions (0: all)", v ? v : "");
		return -EINVAL;
	}
	*ret = (size_t)n;
	return 1;
}

int cli_output_close(FILE *out, const char *path, const char *what, int ret)
{
	if (ret == CLI_OK && (fflush(out) == EOF || ferror(out))) {
		cli_err("writing %s failed: %s", path ? path : what, strerror(errno));
		ret = CLI_ERR;
	}
	if (out != stdout && fclose(out) == EOF && ret == CLI_OK) {
		cli_err("writing '%s' failed: %s", path, strerror(errno));
		ret = CLI_ERR;
	}
	return ret;
}

const char *cli_duration_str(char *buf, size_t n, uint64_t ns)
{
	if (ns >= 1000000000ull)
		snprintf(buf, n, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, n, "%.2f ms", (double)ns / 1e6);
	else if (ns >= 1000ull)
		snprintf(buf, n, "%.1f us", (double)ns / 1e3);
	else
		snprintf(buf, n, "%" PRIu64 " ns", ns);
	return buf;
}

int cli_duration_parse(const char *s, uint64_t *ret)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	char *end;
	double v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			v *= units[i].ns;
			if (!(v >= 1 && v < 1.8e19))
				return -EINVAL;
			*ret = (uint64_t)(v + 0.5);
			return 0;
		}
	return -EINVAL;
}

bool cli_sym_is(const char *name, const char *want)
{
	size_t n;

	if (!name || !want)
		return false;
	if (!strcmp(name, want))
		return true;
	/* "ns::f" for "ns::f(int)" (and "ns::f(int) [clone .cold]"): a C++ name without its
	 * parameters */
	n = strlen(want);
	return n && !strchr(want, '(') && !strncmp(name, want, n) && name[n] == '(';
}

bool cli_dso_is(const char *dso, const char *name)
{
	return dso && (!strcmp(dso, name) || !strcmp(cli_base_name(dso), name));
}
