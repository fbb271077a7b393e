/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf-compatible event string parser (grammar in evparse.h).
 *
 * Divisions: the symbol table; error and term bookkeeping; numbers; terms and modifiers;
 * the four forms (PMU, symbol, tracepoint, breakpoint); the entry point.
 */
#include "evparse.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/mount.h>
#include <sys/stat.h>

/* ---- symbols ----------------------------------------------------------------------------- */

#define HW(n, c, a)                                         \
	{                                                   \
		n, PERF_TYPE_HARDWARE, PERF_COUNT_HW_##c, a \
	}
#define SW(n, c, a)                                         \
	{                                                   \
		n, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##c, a \
	}

static const struct auxcap_event_symbol symbols[] = {
	HW("cycles", CPU_CYCLES, "cpu-cycles"),
	HW("instructions", INSTRUCTIONS, NULL),
	HW("cache-references", CACHE_REFERENCES, NULL),
	HW("cache-misses", CACHE_MISSES, NULL),
	HW("branches", BRANCH_INSTRUCTIONS, "branch-instructions"),
	HW("branch-misses", BRANCH_MISSES, NULL),
	HW("bus-cycles", BUS_CYCLES, NULL),
	HW("stalled-cycles-frontend", STALLED_CYCLES_FRONTEND, "idle-cycles-frontend"),
	HW("stalled-cycles-backend", STALLED_CYCLES_BACKEND, "idle-cycles-backend"),
	HW("ref-cycles", REF_CPU_CYCLES, NULL),
	SW("cpu-clock", CPU_CLOCK, NULL),
	SW("task-clock", TASK_CLOCK, NULL),
	SW("page-faults", PAGE_FAULTS, "faults"),
	SW("context-switches", CONTEXT_SWITCHES, "cs"),
	SW("cpu-migrations", CPU_MIGRATIONS, "migrations"),
	SW("minor-faults", PAGE_FAULTS_MIN, NULL),
	SW("major-faults", PAGE_FAULTS_MAJ, NULL),
	SW("alignment-faults", ALIGNMENT_FAULTS, NULL),
	SW("emulation-faults", EMULATION_FAULTS, NULL),
	SW("dummy", DUMMY, NULL),
	SW("bpf-output", BPF_OUTPUT, NULL),
	SW("cgroup-switches", CGROUP_SWITCHES, NULL),
};

const struct auxcap_event_symbol *auxcap_event_symbol_get(size_t i)
{
	return i < sizeof(symbols) / sizeof(symbols[0]) ? &symbols[i] : NULL;
}

static const struct auxcap_event_symbol *symbol_find(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
		const struct auxcap_event_symbol *sym = &symbols[i];

		if (strlen(sym->name) == n && !strncmp(sym->name, s, n))
			return sym;
		if (sym->alias && strlen(sym->alias) == n && !strncmp(sym->alias, s, n))
			return sym;
	}
	return NULL;
}

/* ---- bookkeeping ------------------------------------------------------------------------- */

static const char *const generic_terms = "config, config1, config2, config3, period, freq, name";

struct ctx {
	const char *str;			/* the whole input */
	const struct auxcap_evparse_opts *opts; /* never NULL */
	struct auxcap_evparse_error *err;	/* may be NULL */
	struct auxcap_event_spec *spec;		/* being built */
	const struct auxcap_pmu *pmu;		/* PMU of the PMU form, else NULL */
	bool generic_only;			/* symbols: only period/freq/name */
};

static int fail(struct ctx *c, int r, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct ctx *c, int r, size_t pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (c->err) {
		c->err->err = r;
		c->err->pos = pos;
		vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
	}
	va_end(ap);
	return r;
}

static bool is_name_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '-' || ch == '.';
}

static bool all_name_chars(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_name_char(s[i]))
			return false;
	return true;
}

static struct auxcap_evterm *term_add(struct ctx *c, const char *name, size_t name_len)
{
	struct auxcap_event_spec *spec = c->spec;
	struct auxcap_evterm *terms, *t;

	terms = realloc(spec->terms, (spec->nr_terms + 1) * sizeof(*terms));
	if (!terms)
		return NULL;
	spec->terms = terms;
	t = &terms[spec->nr_terms];
	memset(t, 0, sizeof(*t));
	t->name = strndup(name, name_len);
	if (!t->name)
		return NULL;
	spec->nr_terms++;
	return t;
}

static int oom(struct ctx *c, size_t pos)
{
	return fail(c, -ENOMEM, pos, "out of memory while parsing '%s'", c->str);
}

/* ---- numbers ----------------------------------------------------------------------------- */

/* Decimal or 0x-hex, the whole of [s, s+n).  Returns 0, -EINVAL or -ERANGE (overflow). */
static int parse_u64(const char *s, size_t n, uint64_t *ret)
{
	unsigned int base = 10;
	uint64_t v = 0;
	size_t i = 0;

	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == n)
		return -EINVAL;
	for (; i < n; i++) {
		unsigned int d;

		if (isdigit((unsigned char)s[i]))
			d = (unsigned int)(s[i] - '0');
		else if (base == 16 && isxdigit((unsigned char)s[i]))
			d = (unsigned int)(tolower((unsigned char)s[i]) - 'a' + 10);
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*ret = v;
	return 0;
}

/* ---- terms ------------------------------------------------------------------------------- */

/* "; valid: a, b, c" for the unknown-term message, truncated to fit. */
static void valid_terms(const struct ctx *c, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (c->generic_only) {
		snprintf(buf, len, "period, freq, name");
		return;
	}
	for (size_t i = 0; c->pmu && i < c->pmu->nr_formats && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
				      c->pmu->formats[i].name);
	if (c->pmu && c->pmu->nr_aliases && n < len) {
		n += (size_t)snprintf(buf + n, len - n, "%sevents: ", n ? "; " : "");
		for (size_t i = 0; i < c->pmu->nr_aliases && n < len; i++)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
					      c->pmu->aliases[i].name);
	}
	if (n < len)
		snprintf(buf + n, len - n, "%sgeneric: %s", n ? "; " : "", generic_terms);
}

/* One term being applied. */
struct term_in {
	const char *name;  /* as written, not terminated */
	size_t name_len;   /* bytes at @name */
	char tname[128];   /* @name, terminated */
	const char *val;   /* value text after '=', not terminated; NULL for a bare term */
	size_t val_len;	   /* bytes at @val */
	bool has_value;	   /* an '=' was given */
	uint64_t v;	   /* numeric value; 1 for a bare term */
	size_t pos;	   /* offset in the input, for errors */
	const char *alias; /* events/ alias being expanded, or NULL */
};

/* Record @in in the spec's term list as @kind; returns the term or NULL (out of memory). */
static struct auxcap_evterm *term_record(struct ctx *c, const struct term_in *in,
					 enum auxcap_evterm_kind kind)
{
	struct auxcap_evterm *t = term_add(c, in->name, in->name_len);

	if (!t)
		return NULL;
	t->kind = kind;
	t->value = in->v;
	t->has_value = in->has_value;
	if (in->alias && !(t->alias = strdup(in->alias)))
		return NULL;
	return t;
}

static int term_name(struct ctx *c, struct term_in *in)
{
	const char *val = in->val;
	size_t len = in->val_len;
	struct auxcap_evterm *t;

	if (!in->has_value || !len)
		return fail(c, -EINVAL, in->pos, "term 'name' needs a value, e.g. name=myevent");
	if (len >= 2 && val[0] == '\'' && val[len - 1] == '\'') {
		val++;
		len -= 2;
	}
	in->v = 0;
	t = term_record(c, in, AUXCAP_EVTERM_NAME);
	if (!t || !(t->str = strndup(val, len)))
		return oom(c, in->pos);
	free(c->spec->name);
	c->spec->name = strndup(val, len);
	return c->spec->name ? 0 : oom(c, in->pos);
}

static int term_period(struct ctx *c, const struct term_in *in, bool freq)
{
	struct perf_event_attr *a = &c->spec->attr.attr;

	if (!in->has_value)
		return fail(c, -EINVAL, in->pos, "term '%s' needs a value, e.g. %s=%s", in->tname,
			    in->tname, freq ? "1000" : "100000");
	if (!term_record(c, in, freq ? AUXCAP_EVTERM_FREQ : AUXCAP_EVTERM_PERIOD))
		return oom(c, in->pos);
	a->freq = freq;
	if (freq)
		a->sample_freq = in->v;
	else
		a->sample_period = in->v;
	return 0;
}

static int term_config(struct ctx *c, const struct term_in *in, enum auxcap_attr_word word)
{
	struct auxcap_evterm *t;

	if (!in->has_value)
		return fail(c, -EINVAL, in->pos, "term '%s' needs a value, e.g. %s=0x1", in->tname,
			    in->tname);
	t = term_record(c, in, AUXCAP_EVTERM_CONFIG);
	if (!t)
		return oom(c, in->pos);
	t->word = word;
	t->mask = ~UINT64_C(0);
	auxcap_attr_word_set(&c->spec->attr, word, in->v);
	return 0;
}

static int term_format(struct ctx *c, const struct term_in *in, const struct auxcap_pmu_format *f)
{
	struct auxcap_evterm *t;
	char where[256];
	int r;

	r = auxcap_pmu_format_put(f, in->v, &c->spec->attr);
	if (r == -ERANGE) {
		auxcap_pmu_format_str(f, where, sizeof(where));
		return fail(c, -ERANGE, in->pos,
			    "value %llu of term '%s' for %s is out of range: %s holds 0..%llu",
			    (unsigned long long)in->v, in->tname, c->spec->pmu, where,
			    (unsigned long long)auxcap_pmu_format_max(f));
	}
	if (r < 0)
		return fail(c, r, in->pos, "cannot set term '%s': %s", in->tname, strerror(-r));
	t = term_record(c, in, AUXCAP_EVTERM_FORMAT);
	if (!t)
		return oom(c, in->pos);
	t->word = f->word;
	t->mask = f->mask;
	return 0;
}

static int term_unknown(struct ctx *c, const struct term_in *in)
{
	char valid[700];

	valid_terms(c, valid, sizeof(valid));
	if (in->alias)
		return fail(c, -EINVAL, in->pos,
			    "event '%s' of %s uses unknown term '%s'; valid: %s", in->alias,
			    c->spec->pmu, in->tname, valid);
	return fail(c, -EINVAL, in->pos, "unknown term '%s' for %s; valid: %s", in->tname,
		    c->spec->pmu, valid);
}

/* config, config1, config2, config3 -> the word; anything else -> AUXCAP_ATTR_WORD_MAX. */
static enum auxcap_attr_word config_word(const char *tname)
{
	if (strncmp(tname, "config", 6) != 0)
		return AUXCAP_ATTR_WORD_MAX;
	if (!tname[6])
		return AUXCAP_ATTR_CONFIG;
	if (tname[6] >= '1' && tname[6] <= '3' && !tname[7])
		return (enum auxcap_attr_word)(tname[6] - '0');
	return AUXCAP_ATTR_WORD_MAX;
}

static int parse_terms(struct ctx *c, const char *s, size_t n, size_t pos, const char *alias);

/*
 * Apply one term.  Generic terms first (perf treats them as keywords), then the PMU's format
 * terms, then its events/ aliases.  Alias expansion recurses once: terms inside an alias are
 * applied with @alias set, which disables alias lookup.
 */
/* NOLINTNEXTLINE(misc-no-recursion): one level of alias expansion, see above */
static int apply_term(struct ctx *c, struct term_in *in)
{
	const struct auxcap_pmu_format *f;
	enum auxcap_attr_word word;
	const char *terms;
	int r;

	if (in->name_len >= sizeof(in->tname) || !all_name_chars(in->name, in->name_len))
		return fail(
			c, -EINVAL, in->pos,
			"bad term name '%.*s' in '%s'; term names are letters, digits, '_' and '-'",
			(int)in->name_len, in->name, c->str);
	memcpy(in->tname, in->name, in->name_len);
	in->tname[in->name_len] = '\0';

	/* name= takes a string, everything else a number */
	if (!strcmp(in->tname, "name"))
		return term_name(c, in);
	in->v = 1;
	if (in->has_value) {
		r = parse_u64(in->val, in->val_len, &in->v);
		if (r == -ERANGE)
			return fail(c, -ERANGE, in->pos,
				    "value '%.*s' of term '%s' does not fit in 64 bits",
				    (int)in->val_len, in->val, in->tname);
		if (r < 0)
			return fail(
				c, -EINVAL, in->pos,
				"bad value '%.*s' for term '%s' in '%s'; use a decimal or 0x-hex number",
				(int)in->val_len, in->val, in->tname, c->str);
	}
	if (!strcmp(in->tname, "period") || !strcmp(in->tname, "freq"))
		return term_period(c, in, in->tname[0] == 'f');
	if (c->generic_only)
		return term_unknown(c, in);
	word = config_word(in->tname);
	if (word != AUXCAP_ATTR_WORD_MAX)
		return term_config(c, in, word);
	f = auxcap_pmu_format_find(c->pmu, in->tname);
	if (f)
		return term_format(c, in, f);
	terms = in->alias ? NULL : auxcap_pmu_alias_find(c->pmu, in->tname);
	if (terms) {
		if (in->has_value)
			return fail(c, -EINVAL, in->pos,
				    "event '%s' of %s takes no value (it means '%s')", in->tname,
				    c->spec->pmu, terms);
		return parse_terms(c, terms, strlen(terms), in->pos, in->tname);
	}
	return term_unknown(c, in);
}

/* Apply the comma-separated terms [s, s+n); @pos is s's offset in the input (for errors). */
/* NOLINTNEXTLINE(misc-no-recursion): one level of alias expansion, see apply_term() */
static int parse_terms(struct ctx *c, const char *s, size_t n, size_t pos, const char *alias)
{
	size_t i = 0;

	if (!n)
		return 0;
	for (;;) {
		size_t start = i, eq = SIZE_MAX;
		size_t tpos = alias ? pos : pos + start;
		struct term_in in;
		int r;

		while (i < n && s[i] != ',') {
			if (s[i] == '=' && eq == SIZE_MAX)
				eq = i;
			i++;
		}
		if (i == start)
			return fail(c, -EINVAL, tpos,
				    "empty term in '%s' (two commas, or a comma at an end)",
				    c->str);
		memset(&in, 0, sizeof(in));
		in.name = s + start;
		in.name_len = (eq == SIZE_MAX ? i : eq) - start;
		if (eq != SIZE_MAX) {
			in.val = s + eq + 1;
			in.val_len = i - eq - 1;
			in.has_value = true;
		}
		in.pos = tpos;
		in.alias = alias;
		r = apply_term(c, &in);
		if (r < 0)
			return r;
		if (i == n)
			return 0;
		i++; /* the ',' */
	}
}

/* ---- modifiers --------------------------------------------------------------------------- */

static int parse_mods(struct ctx *c, const char *s, size_t pos)
{
	struct perf_event_attr *a = &c->spec->attr.attr;
	bool u = false, k = false, h = false;
	unsigned int p = 0;
	size_t n = strlen(s);

	if (n >= sizeof(c->spec->mods))
		return fail(c, -EINVAL, pos,
			    "modifier list '%s' is too long; valid: u, k, h, p (pp, ppp)", s);
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case 'u':
			u = true;
			break;
		case 'k':
			k = true;
			break;
		case 'h':
			h = true;
			break;
		case 'p':
			p++;
			break;
		default:
			return fail(c, -EINVAL, pos + i,
				    "bad modifier '%c' in '%s'; valid: u, k, h, p (pp, ppp)", s[i],
				    c->str);
		}
	}
	if (p > 3)
		return fail(c, -EINVAL, pos,
			    "too many 'p' modifiers in '%s'; at most ppp (precise_ip 3)", c->str);
	if (u || k || h) {
		a->exclude_user = !u;
		a->exclude_kernel = !k;
		a->exclude_hv = !h;
	}
	a->precise_ip = p & 3;
	memcpy(c->spec->mods, s, n + 1);
	return 0;
}

/* ---- the PMU form ------------------------------------------------------------------------ */

static bool is_emulatable(const char *name)
{
	if (!strcmp(name, "intel_pt") || !strcmp(name, "intel_bts"))
		return true;
	if (!strncmp(name, "arm_spe", 7))
		return true;
	return false;
}

static int unknown_pmu(struct ctx *c, const char *name, size_t pos)
{
	const char *root = c->opts->sysfs_root ? c->opts->sysfs_root : AUXCAP_PMU_SYSFS_ROOT;

	if (is_emulatable(name))
		return fail(
			c, -ENOENT, pos,
			"no PMU '%s' on this machine (not in %s); run 'auxcap list' to see the PMUs here, or add --emulate to use an emulated %s",
			name, root, name);
	return fail(
		c, -ENOENT, pos,
		"unknown event or PMU '%s' (not in %s); run 'auxcap list' to see the events and PMUs here",
		name, root);
}

static int parse_pmu_form(struct ctx *c, const char *slash)
{
	const char *str = c->str;
	size_t name_len = (size_t)(slash - str);
	const char *body = slash + 1, *close, *rest;
	const struct auxcap_event_symbol *sym;
	struct auxcap_pmu *owned = NULL;
	char name[256];
	int r;

	if (!name_len)
		return fail(c, -EINVAL, 0, "missing PMU name before '/' in '%s' (e.g. intel_pt//)",
			    str);
	if (name_len >= sizeof(name) || !all_name_chars(str, name_len))
		return fail(c, -EINVAL, 0, "bad PMU name '%.*s' in '%s'", (int)name_len, str, str);
	memcpy(name, str, name_len);
	name[name_len] = '\0';

	close = strchr(body, '/');
	if (!close)
		return fail(c, -EINVAL, strlen(str),
			    "unterminated term list in '%s': add the closing '/' (e.g. %s/%s/)",
			    str, name, body);

	sym = symbol_find(name, name_len);
	if (sym) {
		c->generic_only = true;
		c->spec->kind = sym->type == PERF_TYPE_HARDWARE ? AUXCAP_EVENT_HARDWARE
								: AUXCAP_EVENT_SOFTWARE;
		c->spec->attr.attr.type = sym->type;
		c->spec->attr.attr.config = sym->config;
		c->spec->pmu = strdup(sym->type == PERF_TYPE_HARDWARE ? "hardware" : "software");
		c->spec->event = strdup(sym->name);
		if (!c->spec->pmu || !c->spec->event)
			return oom(c, 0);
	} else {
		c->pmu = auxcap_pmu_list_find(c->opts->pmus, name);
		if (!c->pmu) {
			r = auxcap_pmu_new(c->opts->sysfs_root, name, &owned);
			if (r == -ENOENT || r == -ENOTDIR)
				return unknown_pmu(c, name, 0);
			if (r == -EBADMSG)
				return fail(c, r, 0,
					    "PMU '%s' has malformed sysfs files; check %s/%s", name,
					    c->opts->sysfs_root ? c->opts->sysfs_root
								: AUXCAP_PMU_SYSFS_ROOT,
					    name);
			if (r < 0)
				return fail(c, r, 0, "cannot read PMU '%s': %s", name,
					    strerror(-r));
			c->pmu = owned;
		}
		c->spec->kind = AUXCAP_EVENT_PMU;
		c->spec->attr.attr.type = c->pmu->type;
		c->spec->pmu = strdup(name);
		if (!c->spec->pmu) {
			r = oom(c, 0);
			goto out;
		}
	}

	r = parse_terms(c, body, (size_t)(close - body), (size_t)(body - str), NULL);
	if (r < 0)
		goto out;
	rest = close + 1;
	if (*rest == ':')
		rest++;
	r = parse_mods(c, rest, (size_t)(rest - str));
out:
	c->pmu = NULL;
	auxcap_pmu_free(owned);
	return r;
}

/* ---- symbols and tracepoints ------------------------------------------------------------- */

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int tracefs_root(struct ctx *c, char *buf, size_t len)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char events[512];

	if (c->opts->tracefs_root) {
		snprintf(buf, len, "%s", c->opts->tracefs_root);
		return 0;
	}
	for (size_t i = 0; i < 2; i++) {
		snprintf(events, sizeof(events), "%s/events", roots[i]);
		if (is_dir(events)) {
			snprintf(buf, len, "%s", roots[i]);
			return 0;
		}
	}
	/* perf mounts tracefs too when it is missing; only root may */
	if (geteuid() == 0 && mount("nodev", roots[0], "tracefs", 0, NULL) == 0) {
		snprintf(events, sizeof(events), "%s/events", roots[0]);
		if (is_dir(events)) {
			snprintf(buf, len, "%s", roots[0]);
			return 0;
		}
	}
	return -ENOENT;
}

static int read_tracepoint_id(const char *path, uint64_t *ret)
{
	char buf[64];
	size_t n = 0;
	ssize_t got;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno > 0 ? -errno : -EIO;
	while (n < sizeof(buf) - 1) {
		got = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = errno > 0 ? -errno : -EIO;
			(void)close(fd);
			return r;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	(void)close(fd);
	while (n && isspace((unsigned char)buf[n - 1]))
		n--;
	if (!n || parse_u64(buf, n, ret) < 0)
		return -EBADMSG;
	return 0;
}

static int parse_tracepoint(struct ctx *c, const char *colon)
{
	const char *str = c->str, *name = colon + 1, *end, *mods = "";
	size_t sys_len = (size_t)(colon - str), name_len;
	char root[256], path[1024];
	uint64_t id = 0;
	int r;

	end = strchr(name, ':');
	name_len = end ? (size_t)(end - name) : strlen(name);
	if (end)
		mods = end + 1;
	if (!sys_len)
		return fail(
			c, -EINVAL, 0,
			"missing tracepoint system before ':' in '%s'; write SYS:NAME, e.g. raw_syscalls:sys_enter",
			str);
	for (size_t i = 0; i < sys_len; i++)
		if (!isalnum((unsigned char)str[i]) && str[i] != '_' && str[i] != '-')
			return fail(
				c, -EINVAL, i,
				"bad tracepoint system '%.*s' in '%s'; write SYS:NAME, e.g. raw_syscalls:sys_enter",
				(int)sys_len, str, str);
	if (!name_len)
		return fail(
			c, -EINVAL, (size_t)(name - str),
			"missing tracepoint name after '%.*s:'; write SYS:NAME, e.g. raw_syscalls:sys_enter",
			(int)sys_len, str);
	for (size_t i = 0; i < name_len; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_' && name[i] != '-')
			return fail(
				c, -EINVAL, (size_t)(name - str) + i,
				"bad tracepoint name '%.*s' in '%s' (globs and filters are not supported); write SYS:NAME, e.g. raw_syscalls:sys_enter",
				(int)name_len, name, str);

	r = tracefs_root(c, root, sizeof(root));
	if (r < 0)
		return fail(
			c, r, 0,
			"tracefs is not mounted (looked in /sys/kernel/tracing and /sys/kernel/debug/tracing); as root run 'mount -t tracefs nodev /sys/kernel/tracing'");
	snprintf(path, sizeof(path), "%s/events/%.*s/%.*s/id", root, (int)sys_len, str,
		 (int)name_len, name);
	r = read_tracepoint_id(path, &id);
	if (r == -ENOENT || r == -ENOTDIR)
		return fail(
			c, -ENOENT, 0,
			"unknown tracepoint '%.*s:%.*s' (no %s); see the list with 'ls %s/events/%.*s' or 'perf list tracepoint'",
			(int)sys_len, str, (int)name_len, name, path, root, (int)sys_len, str);
	if (r == -EACCES || r == -EPERM)
		return fail(
			c, r, 0,
			"cannot read %s (%s); tracepoint ids need root or read access to tracefs",
			path, strerror(-r));
	if (r == -EBADMSG)
		return fail(c, r, 0, "malformed tracepoint id in %s", path);
	if (r < 0)
		return fail(c, r, 0, "cannot read %s: %s", path, strerror(-r));

	c->spec->kind = AUXCAP_EVENT_TRACEPOINT;
	c->spec->attr.attr.type = PERF_TYPE_TRACEPOINT;
	c->spec->attr.attr.config = id;
	c->spec->attr.attr.sample_period = 1;
	c->spec->pmu = strdup("tracepoint");
	c->spec->event = strndup(str, (size_t)(name + name_len - str));
	if (!c->spec->pmu || !c->spec->event)
		return oom(c, 0);
	return parse_mods(c, mods, (size_t)(mods - str));
}

/* "r" and 1..16 hex digits: a raw event, unless a symbol claimed the name first. */
static bool is_raw(const char *s, size_t n)
{
	if (n < 2 || s[0] != 'r')
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static int parse_symbol_or_tracepoint(struct ctx *c, const char *colon)
{
	const char *str = c->str;
	size_t n = colon ? (size_t)(colon - str) : strlen(str);
	const struct auxcap_event_symbol *sym = symbol_find(str, n);
	const char *root = c->opts->sysfs_root ? c->opts->sysfs_root : AUXCAP_PMU_SYSFS_ROOT;
	char path[1024];

	if (sym) {
		c->spec->kind = sym->type == PERF_TYPE_HARDWARE ? AUXCAP_EVENT_HARDWARE
								: AUXCAP_EVENT_SOFTWARE;
		c->spec->attr.attr.type = sym->type;
		c->spec->attr.attr.config = sym->config;
		c->spec->pmu = strdup(sym->type == PERF_TYPE_HARDWARE ? "hardware" : "software");
		c->spec->event = strdup(sym->name);
		if (!c->spec->pmu || !c->spec->event)
			return oom(c, 0);
		return parse_mods(c, colon ? colon + 1 : "", colon ? n + 1 : n);
	}
	if (is_raw(str, n)) {
		/* perf's rNNN: a raw hardware event code in hex */
		uint64_t code;
		char hex[24];

		if (n - 1 >= sizeof(hex) - 2)
			return fail(c, -ERANGE, 1, "raw event code '%.*s' does not fit in 64 bits",
				    (int)(n - 1), str + 1);
		snprintf(hex, sizeof(hex), "0x%.*s", (int)(n - 1), str + 1);
		if (parse_u64(hex, strlen(hex), &code) < 0)
			return fail(c, -ERANGE, 1, "raw event code '%.*s' does not fit in 64 bits",
				    (int)(n - 1), str + 1);
		c->spec->kind = AUXCAP_EVENT_RAW;
		c->spec->attr.attr.type = PERF_TYPE_RAW;
		c->spec->attr.attr.config = code;
		c->spec->pmu = strdup("raw");
		c->spec->event = strndup(str, n);
		if (!c->spec->pmu || !c->spec->event)
			return oom(c, 0);
		return parse_mods(c, colon ? colon + 1 : "", colon ? n + 1 : n);
	}
	if (colon)
		return parse_tracepoint(c, colon);
	if (!all_name_chars(str, n))
		return fail(
			c, -EINVAL, 0,
			"cannot parse event '%s'; write a symbol (cpu-clock), PMU/TERMS/ (intel_pt//) or SYS:NAME (raw_syscalls:sys_enter)",
			str);
	snprintf(path, sizeof(path), "%s/%s", root, str);
	if (auxcap_pmu_list_find(c->opts->pmus, str) || is_dir(path))
		return fail(c, -EINVAL, n,
			    "'%s' is a PMU: write it as '%s//' (terms go between the slashes)", str,
			    str);
	return unknown_pmu(c, str, 0);
}

/* ---- breakpoints ------------------------------------------------------------------------- */

static int parse_breakpoint(struct ctx *c)
{
	const char *str = c->str, *p = str + 4, *q, *mods = "";
	struct perf_event_attr *a = &c->spec->attr.attr;
	uint64_t addr, len = 0;
	unsigned int type = 0;
	bool have_len = false;

	q = p;
	while (*q && *q != '/' && *q != ':')
		q++;
	if (parse_u64(p, (size_t)(q - p), &addr) < 0)
		return fail(
			c, -EINVAL, 4,
			"bad address '%.*s' in '%s'; write mem:ADDR[/LEN][:rwx], e.g. mem:0x1000/8:w",
			(int)(q - p), p, str);
	if (*q == '/') {
		p = q + 1;
		q = p;
		while (*q && *q != ':')
			q++;
		if (parse_u64(p, (size_t)(q - p), &len) < 0 ||
		    (len != 1 && len != 2 && len != 4 && len != 8))
			return fail(
				c, -EINVAL, (size_t)(p - str),
				"bad length '%.*s' in '%s'; a breakpoint covers 1, 2, 4 or 8 bytes",
				(int)(q - p), p, str);
		have_len = true;
	}
	if (*q == ':') {
		p = q + 1;
		q = p;
		while (*q && *q != ':') {
			unsigned int bit = *q == 'r'   ? HW_BREAKPOINT_R
					   : *q == 'w' ? HW_BREAKPOINT_W
					   : *q == 'x' ? HW_BREAKPOINT_X
						       : 0;

			if (!bit || (type & bit))
				return fail(
					c, -EINVAL, (size_t)(q - str),
					"bad access type '%.*s' in '%s'; use r, w and x once each (e.g. rw); modifiers go after a second ':' as in mem:0x1000:w:u",
					(int)strcspn(p, ":"), p, str);
			type |= bit;
			q++;
		}
		if (q == p)
			return fail(c, -EINVAL, (size_t)(p - str),
				    "empty access type in '%s'; use r, w, x (e.g. mem:0x1000:rw)",
				    str);
		if (*q == ':')
			mods = q + 1;
	}
	if (!type)
		type = HW_BREAKPOINT_R | HW_BREAKPOINT_W;
	if (!have_len)
		len = type == HW_BREAKPOINT_X ? sizeof(long) : HW_BREAKPOINT_LEN_4;

	c->spec->kind = AUXCAP_EVENT_BREAKPOINT;
	a->type = PERF_TYPE_BREAKPOINT;
	a->bp_type = type;
	a->bp_addr = addr;
	a->bp_len = len;
	a->sample_period = 1;
	c->spec->pmu = strdup("breakpoint");
	c->spec->event = strndup(str, *mods ? (size_t)(mods - 1 - str) : strlen(str));
	if (!c->spec->pmu || !c->spec->event)
		return oom(c, 0);
	return parse_mods(c, mods, (size_t)(mods - str));
}

/* ---- entry point ------------------------------------------------------------------------- */

void auxcap_event_spec_free(struct auxcap_event_spec *spec)
{
	if (!spec)
		return;
	for (size_t i = 0; i < spec->nr_terms; i++) {
		free(spec->terms[i].name);
		free(spec->terms[i].str);
		free(spec->terms[i].alias);
	}
	free(spec->terms);
	free(spec->pmu);
	free(spec->name);
	free(spec->event);
	free(spec);
}

const struct auxcap_evterm *auxcap_event_spec_term(const struct auxcap_event_spec *spec,
						   const char *name)
{
	if (!spec || !name)
		return NULL;
	for (size_t i = spec->nr_terms; i > 0; i--)
		if (!strcmp(spec->terms[i - 1].name, name))
			return &spec->terms[i - 1];
	return NULL;
}

uint64_t auxcap_event_spec_user_set(const struct auxcap_event_spec *spec,
				    enum auxcap_attr_word word)
{
	uint64_t bits = 0;

	if (!spec || word >= AUXCAP_ATTR_WORD_MAX)
		return 0;
	for (size_t i = 0; i < spec->nr_terms; i++) {
		const struct auxcap_evterm *t = &spec->terms[i];

		if ((t->kind == AUXCAP_EVTERM_FORMAT || t->kind == AUXCAP_EVTERM_CONFIG) &&
		    t->word == word)
			bits |= t->mask;
	}
	return bits;
}

/* The opts-struct rule: too small is -EINVAL, a larger tail must be zero (-E2BIG). */
static int opts_check(const struct auxcap_evparse_opts *opts)
{
	const unsigned char *tail;

	if (!opts)
		return 0;
	if (opts->sz < sizeof(*opts))
		return -EINVAL;
	tail = (const unsigned char *)opts + sizeof(*opts);
	for (size_t i = 0; i < opts->sz - sizeof(*opts); i++)
		if (tail[i])
			return -E2BIG;
	return 0;
}

int auxcap_event_spec_parse(const char *str, const struct auxcap_evparse_opts *opts,
			    struct auxcap_event_spec **ret, struct auxcap_evparse_error *err)
{
	static const struct auxcap_evparse_opts no_opts = { .sz = sizeof(no_opts) };
	struct ctx c = { .str = str, .opts = opts ? opts : &no_opts, .err = err };
	const char *slash, *colon;
	int r;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!str || !ret)
		return fail(&c, -EINVAL, 0, "no event string given");
	r = opts_check(opts);
	if (r < 0)
		return fail(&c, r, 0,
			    "bad struct auxcap_evparse_opts (sz %zu, this build knows %zu)",
			    opts->sz, sizeof(*opts));
	if (!*str)
		return fail(
			&c, -EINVAL, 0,
			"empty event string; give an event such as cpu-clock, raw_syscalls:sys_enter or intel_pt// (see 'auxcap list')");
	/* Messages quote the input: keep them one printable line. */
	for (const char *p = str; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return fail(&c, -EINVAL, (size_t)(p - str),
				    "control character 0x%02x at offset %zu of the event string; "
				    "events are printable text such as cpu-clock or intel_pt//u",
				    (unsigned char)*p, (size_t)(p - str));

	c.spec = calloc(1, sizeof(*c.spec));
	if (!c.spec)
		return oom(&c, 0);

	slash = strchr(str, '/');
	colon = strchr(str, ':');
	if (!strncmp(str, "mem:", 4))
		r = parse_breakpoint(&c);
	else if (slash && (!colon || slash < colon))
		r = parse_pmu_form(&c, slash);
	else
		r = parse_symbol_or_tracepoint(&c, colon);
	if (r < 0)
		goto fail;
	if (!c.spec->name) {
		c.spec->name = strdup(str);
		if (!c.spec->name) {
			r = oom(&c, 0);
			goto fail;
		}
	}
	*ret = c.spec;
	return 0;
fail:
	auxcap_event_spec_free(c.spec);
	return r;
}

/* ---- event lists ------------------------------------------------------------------------- */

void auxcap_event_list_free(char **events, size_t nr)
{
	if (!events)
		return;
	for (size_t i = 0; i < nr; i++)
		free(events[i]);
	free(events);
}

int auxcap_event_list_split(const char *str, char ***ret_events, size_t *ret_nr)
{
	char **events = NULL, **grown;
	size_t nr = 0;
	const char *p;
	int r;

	if (!str || !ret_events || !ret_nr)
		return -EINVAL;
	p = str;
	for (;;) {
		const char *q = p;
		bool in_terms = false;

		/* a breakpoint's one '/' separates its length; a PMU event's two enclose terms */
		if (strncmp(p, "mem:", 4) != 0) {
			for (; *q && (in_terms || *q != ','); q++)
				if (*q == '/')
					in_terms = !in_terms;
		} else {
			q += strcspn(q, ",");
		}
		if (q == p) {
			r = -EINVAL;
			goto fail;
		}
		grown = realloc(events, (nr + 1) * sizeof(*events));
		if (!grown) {
			r = -ENOMEM;
			goto fail;
		}
		events = grown;
		events[nr] = strndup(p, (size_t)(q - p));
		if (!events[nr]) {
			r = -ENOMEM;
			goto fail;
		}
		nr++;
		if (!*q)
			break;
		p = q + 1;
	}
	*ret_events = events;
	*ret_nr = nr;
	return 0;
fail:
	auxcap_event_list_free(events, nr);
	return r;
}
