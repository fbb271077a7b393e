/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMU discovery from sysfs (see auxcap/pmu.h for the layout the kernel exports).
 *
 * Divisions: config words of an attr; text helpers (file reading, trimming, numbers);
 * format-term parsing and bit scattering; cpu lists; reading one PMU directory; listing all.
 */
#include "auxcap/pmu.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "auxcap/log.h"

/* sysfs attribute files hold at most one page. */
#define SYSFS_TEXT_MAX 4096
/* Larger CPU numbers in a cpumask are treated as garbage (CONFIG_NR_CPUS tops out at 8192). */
#define CPU_NUMBER_MAX 65536

/* ---- config words ------------------------------------------------------------------------ */

static const char *const word_names[AUXCAP_ATTR_WORD_MAX] = {
	"config",
	"config1",
	"config2",
	"config3",
};

static const size_t word_offsets[AUXCAP_ATTR_WORD_MAX] = {
	offsetof(struct perf_event_attr, config),
	offsetof(struct perf_event_attr, config1),
	offsetof(struct perf_event_attr, config2),
	AUXCAP_ATTR_CONFIG3_OFFSET,
};

_Static_assert(sizeof(struct auxcap_attr) >= AUXCAP_ATTR_SIZE_VER8,
	       "struct auxcap_attr must have room for config3");
_Static_assert(sizeof(struct perf_event_attr) >= AUXCAP_ATTR_CONFIG3_OFFSET,
	       "the uapi perf_event_attr must reach at least VER7 (128 bytes)");

const char *auxcap_attr_word_name(enum auxcap_attr_word word)
{
	if ((unsigned int)word >= AUXCAP_ATTR_WORD_MAX)
		return NULL;
	return word_names[word];
}

uint64_t auxcap_attr_word_get(const struct auxcap_attr *a, enum auxcap_attr_word word)
{
	uint64_t v;

	if (!a || (unsigned int)word >= AUXCAP_ATTR_WORD_MAX)
		return 0;
	/* memcpy: config3 has no member in older headers, so it is reached through bytes[] */
	memcpy(&v, a->bytes + word_offsets[word], sizeof(v));
	return v;
}

void auxcap_attr_word_set(struct auxcap_attr *a, enum auxcap_attr_word word, uint64_t value)
{
	if (!a || (unsigned int)word >= AUXCAP_ATTR_WORD_MAX)
		return;
	memcpy(a->bytes + word_offsets[word], &value, sizeof(value));
}

uint32_t auxcap_attr_size(const struct auxcap_attr *a)
{
	if (a && auxcap_attr_word_get(a, AUXCAP_ATTR_CONFIG3) &&
	    sizeof(struct perf_event_attr) < AUXCAP_ATTR_SIZE_VER8)
		return AUXCAP_ATTR_SIZE_VER8;
	return sizeof(struct perf_event_attr);
}

/* ---- text helpers ------------------------------------------------------------------------ */

/* errno as a negative errno, never 0 (so a caller cannot mistake a failure for success). */
static int neg_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/* @a/@b into @buf; -ENAMETOOLONG if it does not fit. */
static int path_join(char *buf, size_t len, const char *a, const char *b)
{
	int n = snprintf(buf, len, "%s/%s", a, b);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/*
 * Read the file @dir/@name (name may be NULL) into a malloc'd, NUL-terminated string with
 * surrounding white space removed.  Returns 0, -ENOENT, -ENOMEM, -EBADMSG (NUL bytes or more
 * than a sysfs page), or the errno of open/read.
 */
static int read_text(const char *dir, const char *name, char **ret)
{
	char path[4096];
	char *buf = NULL, *start, *end;
	size_t len = 0;
	int fd, r, n;

	n = name ? snprintf(path, sizeof(path), "%s/%s", dir, name)
		 : snprintf(path, sizeof(path), "%s", dir);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return neg_errno();
	buf = malloc(SYSFS_TEXT_MAX + 1);
	if (!buf) {
		r = -ENOMEM;
		goto out_close;
	}
	for (;;) {
		ssize_t got = read(fd, buf + len, SYSFS_TEXT_MAX + 1 - len);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			r = neg_errno();
			goto out_free;
		}
		if (got == 0)
			break;
		len += (size_t)got;
		if (len > SYSFS_TEXT_MAX) {
			r = -EBADMSG;
			goto out_free;
		}
	}
	buf[len] = '\0';
	if (strlen(buf) != len) {
		r = -EBADMSG;
		goto out_free;
	}
	start = buf;
	while (*start && isspace((unsigned char)*start))
		start++;
	end = start + strlen(start);
	while (end > start && isspace((unsigned char)end[-1]))
		end--;
	*end = '\0';
	memmove(buf, start, (size_t)(end - start) + 1);
	*ret = buf;
	buf = NULL;
	r = 0;
out_free:
	free(buf);
out_close:
	(void)close(fd);
	return r;
}

/* Parse decimal digits at *@p into *@ret (<= @max); advances *@p.  Returns 0 or -EINVAL. */
static int parse_dec(const char **p, uint64_t max, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	while (isdigit((unsigned char)*s)) {
		unsigned int d = (unsigned int)(*s - '0');

		if (v > (max - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
		s++;
	}
	*p = s;
	*ret = v;
	return 0;
}

/* A whole string holding one decimal number <= @max. */
static int parse_dec_str(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v;

	if (!s || parse_dec(&s, max, &v) < 0 || *s)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int cmp_str_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The names of the regular entries (no dot files) of @dir/@sub, sorted, in a malloc'd array
 * of malloc'd strings.  A missing directory gives an empty list.
 */
static int list_dir(const char *dir, const char *sub, char ***ret_names, size_t *ret_nr)
{
	char path[4096];
	char **names = NULL, **grown;
	size_t nr = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int r, n;

	n = sub ? snprintf(path, sizeof(path), "%s/%s", dir, sub)
		: snprintf(path, sizeof(path), "%s", dir);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	d = opendir(path);
	if (!d) {
		if (errno == ENOENT && sub) {
			*ret_names = NULL;
			*ret_nr = 0;
			return 0;
		}
		return neg_errno();
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (nr == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(names, cap * sizeof(*names));
			if (!grown) {
				r = -ENOMEM;
				goto fail;
			}
			names = grown;
		}
		names[nr] = strdup(de->d_name);
		if (!names[nr]) {
			r = -ENOMEM;
			goto fail;
		}
		nr++;
	}
	(void)closedir(d);
	if (nr)
		qsort(names, nr, sizeof(*names), cmp_str_ptr);
	*ret_names = names;
	*ret_nr = nr;
	return 0;
fail:
	while (nr)
		free(names[--nr]);
	free(names);
	(void)closedir(d);
	return r;
}

static void free_names(char **names, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(names[i]);
	free(names);
}

/* ---- format terms ------------------------------------------------------------------------ */

static uint64_t bit_range(unsigned int lo, unsigned int hi)
{
	uint64_t upto_hi = hi >= 63 ? ~UINT64_C(0) : (UINT64_C(1) << (hi + 1)) - 1;

	return upto_hi & ~((UINT64_C(1) << lo) - 1);
}

static unsigned int popcount64(uint64_t v)
{
	return (unsigned int)__builtin_popcountll(v);
}

int auxcap_pmu_format_parse(const char *text, struct auxcap_pmu_format *ret)
{
	enum auxcap_attr_word word;
	const char *p;
	uint64_t mask = 0;

	if (!text || !ret)
		return -EINVAL;
	if (strncmp(text, "config", 6) != 0)
		return -EINVAL;
	p = text + 6;
	if (*p == ':') {
		word = AUXCAP_ATTR_CONFIG;
	} else if (*p >= '1' && *p <= '3' && p[1] == ':') {
		word = (enum auxcap_attr_word)(*p - '0');
		p++;
	} else {
		return -EINVAL;
	}
	p++; /* the ':' */
	for (;;) {
		uint64_t lo, hi;

		if (parse_dec(&p, 63, &lo) < 0)
			return -EINVAL;
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_dec(&p, 63, &hi) < 0 || hi < lo)
				return -EINVAL;
		}
		mask |= bit_range((unsigned int)lo, (unsigned int)hi);
		if (*p != ',')
			break;
		p++;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p)
		return -EINVAL;
	ret->name = NULL;
	ret->word = word;
	ret->mask = mask;
	ret->width = popcount64(mask);
	return 0;
}

uint64_t auxcap_pmu_format_max(const struct auxcap_pmu_format *f)
{
	if (!f || !f->width)
		return 0;
	return f->width >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << f->width) - 1;
}

int auxcap_pmu_format_put(const struct auxcap_pmu_format *f, uint64_t value,
			  struct auxcap_attr *attr)
{
	uint64_t word, mask;
	unsigned int i = 0;

	if (!f || !attr)
		return -EINVAL;
	if (value > auxcap_pmu_format_max(f))
		return -ERANGE;
	word = auxcap_attr_word_get(attr, f->word) & ~f->mask;
	for (mask = f->mask; mask; mask &= mask - 1, i++) {
		uint64_t bit = mask & -mask; /* lowest remaining field bit */

		if ((value >> i) & 1)
			word |= bit;
	}
	auxcap_attr_word_set(attr, f->word, word);
	return 0;
}

uint64_t auxcap_pmu_format_get(const struct auxcap_pmu_format *f, const struct auxcap_attr *attr)
{
	uint64_t word, mask, value = 0;
	unsigned int i = 0;

	if (!f || !attr)
		return 0;
	word = auxcap_attr_word_get(attr, f->word);
	for (mask = f->mask; mask; mask &= mask - 1, i++)
		if (word & (mask & -mask))
			value |= UINT64_C(1) << i;
	return value;
}

int auxcap_pmu_format_str(const struct auxcap_pmu_format *f, char *buf, size_t len)
{
	char tmp[256];
	size_t n = 0;
	unsigned int bit = 0;
	bool first = true;

	if (!f)
		return -EINVAL;
	n += (size_t)snprintf(
		tmp + n, sizeof(tmp) - n,
		"%s:", auxcap_attr_word_name(f->word) ? auxcap_attr_word_name(f->word) : "?");
	while (bit < 64) {
		unsigned int lo;

		if (!(f->mask & (UINT64_C(1) << bit))) {
			bit++;
			continue;
		}
		lo = bit;
		while (bit < 64 && (f->mask & (UINT64_C(1) << bit)))
			bit++;
		/* at most 32 ranges of "NN-NN," fit comfortably in tmp */
		if (lo == bit - 1)
			n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%s%u", first ? "" : ",",
					      lo);
		else
			n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%s%u-%u", first ? "" : ",",
					      lo, bit - 1);
		first = false;
	}
	if (len)
		snprintf(buf, len, "%s", tmp);
	return (int)n;
}

const struct auxcap_pmu_format *auxcap_pmu_format_find(const struct auxcap_pmu *pmu,
						       const char *name)
{
	if (!pmu || !name)
		return NULL;
	for (size_t i = 0; i < pmu->nr_formats; i++)
		if (!strcmp(pmu->formats[i].name, name))
			return &pmu->formats[i];
	return NULL;
}

int auxcap_pmu_set_term(const struct auxcap_pmu *pmu, const char *term, uint64_t value,
			struct auxcap_attr *attr)
{
	const struct auxcap_pmu_format *f;

	if (!pmu || !term || !attr)
		return -EINVAL;
	f = auxcap_pmu_format_find(pmu, term);
	if (!f)
		return -ENOENT;
	return auxcap_pmu_format_put(f, value, attr);
}

/* ---- caps and aliases -------------------------------------------------------------------- */

const char *auxcap_pmu_cap_text(const struct auxcap_pmu *pmu, const char *name)
{
	if (!pmu || !name)
		return NULL;
	for (size_t i = 0; i < pmu->nr_caps; i++)
		if (!strcmp(pmu->caps[i].name, name))
			return pmu->caps[i].value;
	return NULL;
}

int auxcap_pmu_cap_u64(const struct auxcap_pmu *pmu, const char *name, int base, uint64_t *ret)
{
	const char *text, *p;
	uint64_t v = 0;

	if (!pmu || !name || !ret || (base != 0 && base != 10 && base != 16))
		return -EINVAL;
	text = auxcap_pmu_cap_text(pmu, name);
	if (!text)
		return -ENOENT;
	p = text;
	if (base == 0) {
		base = 10;
		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
			base = 16;
			p += 2;
		}
	}
	if (!*p)
		return -EBADMSG;
	for (; *p; p++) {
		unsigned int d;

		if (isdigit((unsigned char)*p))
			d = (unsigned int)(*p - '0');
		else if (base == 16 && isxdigit((unsigned char)*p))
			d = (unsigned int)(tolower((unsigned char)*p) - 'a' + 10);
		else
			return -EBADMSG;
		if (v > (UINT64_MAX - d) / (unsigned int)base)
			return -EBADMSG;
		v = v * (unsigned int)base + d;
	}
	*ret = v;
	return 0;
}

const char *auxcap_pmu_attr_text(const struct auxcap_pmu *pmu, const char *name)
{
	if (!pmu || !name)
		return NULL;
	for (size_t i = 0; i < pmu->nr_attrs; i++)
		if (!strcmp(pmu->attrs[i].name, name))
			return pmu->attrs[i].value;
	return NULL;
}

const char *auxcap_pmu_alias_find(const struct auxcap_pmu *pmu, const char *name)
{
	if (!pmu || !name)
		return NULL;
	for (size_t i = 0; i < pmu->nr_aliases; i++)
		if (!strcmp(pmu->aliases[i].name, name))
			return pmu->aliases[i].terms;
	return NULL;
}

/* ---- cpu lists --------------------------------------------------------------------------- */

int auxcap_cpulist_parse(const char *text, int **ret_cpus, size_t *ret_nr)
{
	const char *p;
	int *cpus = NULL, *grown;
	size_t nr = 0, cap = 0;
	int r;

	if (!text || !ret_cpus || !ret_nr)
		return -EINVAL;
	p = text;
	while (isspace((unsigned char)*p))
		p++;
	while (*p && !isspace((unsigned char)*p)) {
		uint64_t lo, hi;

		if (parse_dec(&p, CPU_NUMBER_MAX - 1, &lo) < 0) {
			r = -EINVAL;
			goto fail;
		}
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_dec(&p, CPU_NUMBER_MAX - 1, &hi) < 0 || hi < lo) {
				r = -EINVAL;
				goto fail;
			}
		}
		/* ascending and non-overlapping, as the kernel prints them */
		if (nr && (uint64_t)cpus[nr - 1] >= lo) {
			r = -EINVAL;
			goto fail;
		}
		for (uint64_t c = lo; c <= hi; c++) {
			if (nr == cap) {
				cap = cap ? cap * 2 : 16;
				grown = realloc(cpus, cap * sizeof(*cpus));
				if (!grown) {
					r = -ENOMEM;
					goto fail;
				}
				cpus = grown;
			}
			cpus[nr++] = (int)c;
		}
		if (*p == ',') {
			p++;
			if (!isdigit((unsigned char)*p)) {
				r = -EINVAL;
				goto fail;
			}
		}
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p) {
		r = -EINVAL;
		goto fail;
	}
	*ret_cpus = cpus;
	*ret_nr = nr;
	return 0;
fail:
	free(cpus);
	return r;
}

/* ---- one PMU ----------------------------------------------------------------------------- */

int auxcap_cpu_midr(const char *root, char *buf, size_t len)
{
	char **names = NULL;
	size_t nr = 0;
	uint64_t best = UINT64_MAX;
	char *text = NULL;
	int r;

	if (!buf || !len)
		return -EINVAL;
	if (!root)
		root = AUXCAP_CPU_SYSFS_ROOT;
	r = list_dir(root, NULL, &names, &nr);
	if (r < 0)
		return r == -ENOTDIR ? -ENOENT : r;
	/* the lowest-numbered cpuN that has the file (names sort as text: cpu10 before cpu2) */
	for (size_t i = 0; i < nr; i++) {
		char dir[4096];
		uint64_t n;
		char *t;

		if (strncmp(names[i], "cpu", 3) || parse_dec_str(names[i] + 3, INT32_MAX, &n) < 0 ||
		    n >= best)
			continue;
		if (path_join(dir, sizeof(dir), root, names[i]) < 0 ||
		    read_text(dir, "regs/identification/midr_el1", &t) < 0)
			continue;
		free(text);
		text = t;
		best = n;
	}
	free_names(names, nr);
	if (!text)
		return -ENOENT;
	if (strncmp(text, "0x", 2) || !text[2] ||
	    text[2 + strspn(text + 2, "0123456789abcdefABCDEF")])
		r = -EBADMSG;
	else if (strlen(text) >= len)
		r = -ENAMETOOLONG;
	else
		memcpy(buf, text, strlen(text) + 1);
	free(text);
	return r;
}

void auxcap_pmu_free(struct auxcap_pmu *pmu)
{
	if (!pmu)
		return;
	for (size_t i = 0; i < pmu->nr_formats; i++)
		free(pmu->formats[i].name);
	for (size_t i = 0; i < pmu->nr_caps; i++) {
		free(pmu->caps[i].name);
		free(pmu->caps[i].value);
	}
	for (size_t i = 0; i < pmu->nr_aliases; i++) {
		free(pmu->aliases[i].name);
		free(pmu->aliases[i].terms);
	}
	for (size_t i = 0; i < pmu->nr_attrs; i++) {
		free(pmu->attrs[i].name);
		free(pmu->attrs[i].value);
	}
	free(pmu->attrs);
	free(pmu->formats);
	free(pmu->caps);
	free(pmu->aliases);
	free(pmu->cpus);
	free(pmu->name);
	free(pmu);
}

static int read_formats(struct auxcap_pmu *pmu, const char *dir)
{
	char sub[4096];
	char **names = NULL;
	size_t nr = 0;
	int r;

	r = list_dir(dir, "format", &names, &nr);
	if (r < 0)
		return r;
	if (!nr)
		return 0;
	pmu->formats = calloc(nr, sizeof(*pmu->formats));
	if (!pmu->formats) {
		r = -ENOMEM;
		goto out;
	}
	r = path_join(sub, sizeof(sub), dir, "format");
	if (r < 0)
		goto out;
	for (size_t i = 0; i < nr; i++) {
		struct auxcap_pmu_format f;
		char *text = NULL;

		r = read_text(sub, names[i], &text);
		if (r < 0)
			goto out;
		r = auxcap_pmu_format_parse(text, &f);
		if (r < 0) {
			auxcap_log(AUXCAP_LOG_WARN, "%s/%s: malformed format '%s'", sub, names[i],
				   text);
			free(text);
			r = -EBADMSG;
			goto out;
		}
		free(text);
		f.name = names[i];
		names[i] = NULL;
		pmu->formats[pmu->nr_formats++] = f;
	}
	r = 0;
out:
	free_names(names, nr);
	return r;
}

static int read_caps(struct auxcap_pmu *pmu, const char *dir)
{
	char sub[4096];
	char **names = NULL;
	size_t nr = 0;
	int r;

	r = list_dir(dir, "caps", &names, &nr);
	if (r < 0)
		return r;
	if (!nr)
		return 0;
	pmu->caps = calloc(nr, sizeof(*pmu->caps));
	if (!pmu->caps) {
		r = -ENOMEM;
		goto out;
	}
	r = path_join(sub, sizeof(sub), dir, "caps");
	if (r < 0)
		goto out;
	for (size_t i = 0; i < nr; i++) {
		char *text = NULL;

		r = read_text(sub, names[i], &text);
		if (r < 0)
			goto out;
		pmu->caps[pmu->nr_caps].name = names[i];
		pmu->caps[pmu->nr_caps].value = text;
		pmu->nr_caps++;
		names[i] = NULL;
	}
	r = 0;
out:
	free_names(names, nr);
	return r;
}

/*
 * The driver's attribute files in the PMU directory itself.  Entries that are not regular
 * files (caps/, format/, power/, subsystem) and the files read elsewhere are skipped; so is a
 * file that cannot be read (sysfs has write-only attributes), which is not an error.
 */
static int read_attrs(struct auxcap_pmu *pmu, const char *dir)
{
	static const char *const known[] = { "type", "nr_addr_filters", "cpumask",
					     "perf_event_mux_interval_ms", "uevent" };
	char path[4096];
	char **names = NULL;
	size_t nr = 0;
	int r;

	r = list_dir(dir, NULL, &names, &nr);
	if (r < 0)
		return r;
	if (!nr)
		return 0;
	pmu->attrs = calloc(nr, sizeof(*pmu->attrs));
	if (!pmu->attrs) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		bool skip = false;
		struct stat st;
		char *text = NULL;

		for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			skip |= !strcmp(names[i], known[k]);
		r = path_join(path, sizeof(path), dir, names[i]);
		if (r < 0)
			goto out;
		if (skip || lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		r = read_text(dir, names[i], &text);
		if (r == -ENOMEM)
			goto out;
		if (r < 0)
			continue;
		pmu->attrs[pmu->nr_attrs].name = names[i];
		pmu->attrs[pmu->nr_attrs].value = text;
		pmu->nr_attrs++;
		names[i] = NULL;
	}
	r = 0;
out:
	free_names(names, nr);
	return r;
}

static int read_aliases(struct auxcap_pmu *pmu, const char *dir)
{
	char sub[4096];
	char **names = NULL;
	size_t nr = 0;
	int r;

	r = list_dir(dir, "events", &names, &nr);
	if (r < 0)
		return r;
	if (!nr)
		return 0;
	pmu->aliases = calloc(nr, sizeof(*pmu->aliases));
	if (!pmu->aliases) {
		r = -ENOMEM;
		goto out;
	}
	r = path_join(sub, sizeof(sub), dir, "events");
	if (r < 0)
		goto out;
	for (size_t i = 0; i < nr; i++) {
		char *text = NULL;

		/* "<event>.scale", ".unit", ".per-pkg", ".snapshot" describe an event */
		if (strchr(names[i], '.'))
			continue;
		r = read_text(sub, names[i], &text);
		if (r < 0)
			goto out;
		pmu->aliases[pmu->nr_aliases].name = names[i];
		pmu->aliases[pmu->nr_aliases].terms = text;
		pmu->nr_aliases++;
		names[i] = NULL;
	}
	r = 0;
out:
	free_names(names, nr);
	return r;
}

/* Read an optional decimal file: 0 and *@present=false when it does not exist. */
static int read_opt_dec(const char *dir, const char *name, uint64_t max, uint64_t *ret,
			bool *present)
{
	char *text = NULL;
	int r;

	r = read_text(dir, name, &text);
	if (r == -ENOENT) {
		*present = false;
		return 0;
	}
	if (r < 0)
		return r;
	r = parse_dec_str(text, max, ret);
	if (r < 0)
		auxcap_log(AUXCAP_LOG_WARN, "%s/%s: not a decimal number: '%s'", dir, name, text);
	free(text);
	if (r < 0)
		return -EBADMSG;
	*present = true;
	return 0;
}

int auxcap_pmu_new(const char *root, const char *name, struct auxcap_pmu **ret_pmu)
{
	char dir[4096];
	struct auxcap_pmu *pmu;
	struct stat st;
	uint64_t v;
	bool present;
	char *text = NULL;
	int r, n;

	if (!name || !ret_pmu || !*name || strchr(name, '/'))
		return -EINVAL;
	if (!root)
		root = AUXCAP_PMU_SYSFS_ROOT;
	n = snprintf(dir, sizeof(dir), "%s/%s", root, name);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return -ENAMETOOLONG;
	if (stat(dir, &st) < 0)
		return neg_errno();
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;

	pmu = calloc(1, sizeof(*pmu));
	if (!pmu)
		return -ENOMEM;
	pmu->mux_interval_ms = -1;
	pmu->name = strdup(name);
	if (!pmu->name) {
		r = -ENOMEM;
		goto fail;
	}

	r = read_opt_dec(dir, "type", UINT32_MAX, &v, &present);
	if (r < 0)
		goto fail;
	if (!present) {
		auxcap_log(AUXCAP_LOG_DEBUG, "%s: no type file, not a PMU", dir);
		r = -ENOENT;
		goto fail;
	}
	pmu->type = (uint32_t)v;

	r = read_opt_dec(dir, "nr_addr_filters", UINT32_MAX, &v, &present);
	if (r < 0)
		goto fail;
	pmu->nr_addr_filters = present ? (uint32_t)v : 0;

	r = read_opt_dec(dir, "perf_event_mux_interval_ms", INT32_MAX, &v, &present);
	if (r < 0)
		goto fail;
	pmu->mux_interval_ms = present ? (int32_t)v : -1;

	r = read_text(dir, "cpumask", &text);
	if (r == 0) {
		r = auxcap_cpulist_parse(text, &pmu->cpus, &pmu->nr_cpus);
		if (r == -EINVAL) {
			auxcap_log(AUXCAP_LOG_WARN, "%s/cpumask: not a cpu list: '%s'", dir, text);
			r = -EBADMSG;
		}
		free(text);
		if (r < 0)
			goto fail;
		pmu->has_cpumask = true;
	} else if (r != -ENOENT) {
		goto fail;
	}

	r = read_formats(pmu, dir);
	if (r < 0)
		goto fail;
	r = read_caps(pmu, dir);
	if (r < 0)
		goto fail;
	r = read_aliases(pmu, dir);
	if (r < 0)
		goto fail;
	r = read_attrs(pmu, dir);
	if (r < 0)
		goto fail;

	*ret_pmu = pmu;
	return 0;
fail:
	auxcap_pmu_free(pmu);
	return r;
}

/* ---- all PMUs ---------------------------------------------------------------------------- */

void auxcap_pmu_list_free(struct auxcap_pmu_list *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->nr; i++) {
		free(list->entries[i].name);
		auxcap_pmu_free(list->entries[i].pmu);
	}
	free(list->entries);
	free(list);
}

int auxcap_pmu_list_new(const char *root, struct auxcap_pmu_list **ret_list)
{
	struct auxcap_pmu_list *list;
	char **names = NULL;
	size_t nr = 0;
	int r;

	if (!ret_list)
		return -EINVAL;
	if (!root)
		root = AUXCAP_PMU_SYSFS_ROOT;
	r = list_dir(root, NULL, &names, &nr);
	if (r < 0)
		return r;
	list = calloc(1, sizeof(*list));
	if (!list) {
		r = -ENOMEM;
		goto out;
	}
	if (nr) {
		list->entries = calloc(nr, sizeof(*list->entries));
		if (!list->entries) {
			r = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < nr; i++) {
		char path[4096];
		struct stat st;
		struct auxcap_pmu_list_entry *e;
		int n;

		/* sysfs holds symlinks to directories; fixture trees also hold README files */
		n = snprintf(path, sizeof(path), "%s/%s", root, names[i]);
		if (n < 0 || (size_t)n >= sizeof(path) || stat(path, &st) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		e = &list->entries[list->nr++];
		e->name = names[i];
		names[i] = NULL;
		e->err = auxcap_pmu_new(root, e->name, &e->pmu);
		if (e->err == -ENOMEM) {
			r = -ENOMEM;
			goto out;
		}
	}
	*ret_list = list;
	list = NULL;
	r = 0;
out:
	auxcap_pmu_list_free(list);
	free_names(names, nr);
	return r;
}

const struct auxcap_pmu *auxcap_pmu_list_find(const struct auxcap_pmu_list *list, const char *name)
{
	if (!list || !name)
		return NULL;
	for (size_t i = 0; i < list->nr; i++)
		if (!strcmp(list->entries[i].name, name))
			return list->entries[i].pmu;
	return NULL;
}
