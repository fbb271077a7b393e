/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf.data feature sections: names, encoding (writer), decoding (reader), and the values of
 * this machine.  Divisions: the byte buffer, encoders, host values, decoders.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/utsname.h>

#include "auxcap/pmu.h"
#include "perf_data_int.h"
#include "grow.h"

static const char *const feat_names[AUXCAP_PERF_FEAT_LAST] = {
	[AUXCAP_PERF_FEAT_TRACING_DATA] = "tracing_data",
	[AUXCAP_PERF_FEAT_BUILD_ID] = "build_id",
	[AUXCAP_PERF_FEAT_HOSTNAME] = "hostname",
	[AUXCAP_PERF_FEAT_OSRELEASE] = "osrelease",
	[AUXCAP_PERF_FEAT_VERSION] = "version",
	[AUXCAP_PERF_FEAT_ARCH] = "arch",
	[AUXCAP_PERF_FEAT_NRCPUS] = "nrcpus",
	[AUXCAP_PERF_FEAT_CPUDESC] = "cpudesc",
	[AUXCAP_PERF_FEAT_CPUID] = "cpuid",
	[AUXCAP_PERF_FEAT_TOTAL_MEM] = "total_mem",
	[AUXCAP_PERF_FEAT_CMDLINE] = "cmdline",
	[AUXCAP_PERF_FEAT_EVENT_DESC] = "event_desc",
	[AUXCAP_PERF_FEAT_CPU_TOPOLOGY] = "cpu_topology",
	[AUXCAP_PERF_FEAT_NUMA_TOPOLOGY] = "numa_topology",
	[AUXCAP_PERF_FEAT_BRANCH_STACK] = "branch_stack",
	[AUXCAP_PERF_FEAT_PMU_MAPPINGS] = "pmu_mappings",
	[AUXCAP_PERF_FEAT_GROUP_DESC] = "group_desc",
	[AUXCAP_PERF_FEAT_AUXTRACE] = "auxtrace",
	[AUXCAP_PERF_FEAT_STAT] = "stat",
	[AUXCAP_PERF_FEAT_CACHE] = "cache",
	[AUXCAP_PERF_FEAT_SAMPLE_TIME] = "sample_time",
	[AUXCAP_PERF_FEAT_MEM_TOPOLOGY] = "mem_topology",
	[AUXCAP_PERF_FEAT_CLOCKID] = "clockid",
	[AUXCAP_PERF_FEAT_DIR_FORMAT] = "dir_format",
	[AUXCAP_PERF_FEAT_BPF_PROG_INFO] = "bpf_prog_info",
	[AUXCAP_PERF_FEAT_BPF_BTF] = "bpf_btf",
	[AUXCAP_PERF_FEAT_COMPRESSED] = "compressed",
	[AUXCAP_PERF_FEAT_CPU_PMU_CAPS] = "cpu_pmu_caps",
	[AUXCAP_PERF_FEAT_CLOCK_DATA] = "clock_data",
	[AUXCAP_PERF_FEAT_HYBRID_TOPOLOGY] = "hybrid_topology",
	[AUXCAP_PERF_FEAT_PMU_CAPS] = "pmu_caps",
};

const char *auxcap_perf_feat_name(unsigned int feat)
{
	if (feat == AUXCAP_PERF_FEAT_AUXCAP_SNAPSHOTS)
		return "auxcap_snapshots";
	if (feat >= AUXCAP_PERF_FEAT_LAST)
		return NULL;
	return feat_names[feat];
}

/* --- the byte buffer -------------------------------------------------------------------- */

int pd_buf_put(struct pd_buf *b, const void *data, size_t n)
{
	if (n > SIZE_MAX / 2 - b->len || auxcap_grow(&b->p, &b->cap, b->len + n, 256) < 0)
		return -ENOMEM;
	if (data)
		memcpy(b->p + b->len, data, n);
	else
		memset(b->p + b->len, 0, n);
	b->len += n;
	return 0;
}

int pd_buf_put_u32(struct pd_buf *b, uint32_t v)
{
	return pd_buf_put(b, &v, sizeof(v));
}

int pd_buf_put_u64(struct pd_buf *b, uint64_t v)
{
	return pd_buf_put(b, &v, sizeof(v));
}

int pd_buf_put_zeros(struct pd_buf *b, size_t n)
{
	return pd_buf_put(b, NULL, n);
}

int pd_buf_put_string(struct pd_buf *b, const char *s)
{
	size_t n = strlen(s) + 1;
	size_t padded = (n + PD_NAME_ALIGN - 1) / PD_NAME_ALIGN * PD_NAME_ALIGN;
	int r;

	if (padded > UINT32_MAX)
		return -ENOMEM;
	r = pd_buf_put_u32(b, (uint32_t)padded);
	if (r == 0)
		r = pd_buf_put(b, s, n);
	if (r == 0)
		r = pd_buf_put_zeros(b, padded - n);
	return r;
}

void pd_buf_free(struct pd_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* --- encoders --------------------------------------------------------------------------- */

int pd_feat_encode_event_desc(struct pd_buf *b, const struct pd_attr_desc *d, size_t nr)
{
	struct perf_event_attr a;
	int r;

	if (nr > UINT32_MAX)
		return -ENOMEM;
	r = pd_buf_put_u32(b, (uint32_t)nr);
	if (r == 0)
		r = pd_buf_put_u32(b, AUXCAP_PERF_ATTR_SIZE);
	for (size_t i = 0; i < nr && r == 0; i++) {
		memset(&a, 0, sizeof(a));
		memcpy(&a, d[i].attr, sizeof(a));
		a.size = AUXCAP_PERF_ATTR_SIZE;
		r = pd_buf_put(b, &a, AUXCAP_PERF_ATTR_SIZE);
		if (r == 0)
			r = pd_buf_put_u32(b, (uint32_t)d[i].nr_ids);
		if (r == 0)
			r = pd_buf_put_string(b, d[i].name ? d[i].name : "");
		if (r == 0)
			r = pd_buf_put(b, d[i].ids, d[i].nr_ids * sizeof(uint64_t));
	}
	return r;
}

int pd_feat_encode_snapshots(struct pd_buf *b, const struct auxcap_perf_snapshot *s, size_t nr)
{
	int r;

	r = pd_buf_put_u32(b, AUXCAP_PERF_SNAPSHOTS_VERSION);
	if (r == 0)
		r = pd_buf_put_u32(b, AUXCAP_PERF_SNAPSHOT_ENTRY_SIZE);
	if (r == 0)
		r = pd_buf_put_u64(b, nr);
	for (size_t i = 0; i < nr && r == 0; i++) {
		r = pd_buf_put_u64(b, s[i].trigger_ns);
		if (r == 0)
			r = pd_buf_put_u64(b, s[i].frozen_ns);
		if (r == 0)
			r = pd_buf_put_u64(b, s[i].data_end);
		if (r == 0)
			r = pd_buf_put_u32(b, s[i].source);
		if (r == 0)
			r = pd_buf_put_u32(b, s[i].coalesced);
		if (r == 0)
			r = pd_buf_put_u32(b, s[i].tid);
		if (r == 0)
			r = pd_buf_put_u32(b, s[i].cpu);
		if (r == 0)
			r = pd_buf_put_u64(b, s[i].call_ns);
	}
	return r;
}

int pd_feat_encode_build_id(struct pd_buf *b, uint16_t cpumode, int32_t pid,
			    const uint8_t *build_id, size_t size, const char *filename)
{
	size_t n = strlen(filename) + 1;
	size_t padded = (n + PD_NAME_ALIGN - 1) / PD_NAME_ALIGN * PD_NAME_ALIGN;
	struct perf_event_header h;
	uint8_t id[24];
	int r;

	if (size > 20 || PD_BUILD_ID_FIXED + padded > UINT16_MAX)
		return -EINVAL;
	h.type = AUXCAP_PERF_RECORD_HEADER_BUILD_ID;
	h.misc = (uint16_t)(cpumode | PD_MISC_BUILD_ID_SIZE);
	h.size = (uint16_t)(PD_BUILD_ID_FIXED + padded);
	memset(id, 0, sizeof(id));
	memcpy(id, build_id, size);
	id[20] = (uint8_t)size;
	r = pd_buf_put(b, &h, sizeof(h));
	if (r == 0)
		r = pd_buf_put(b, &pid, sizeof(pid));
	if (r == 0)
		r = pd_buf_put(b, id, sizeof(id));
	if (r == 0)
		r = pd_buf_put(b, filename, n);
	if (r == 0)
		r = pd_buf_put_zeros(b, padded - n);
	return r;
}

/* --- host values ------------------------------------------------------------------------ */

/* Value of the first "key<spaces>: value" line of /proc/cpuinfo, squeezed; NULL if none. */
static char *cpuinfo_value(const char *key)
{
	char line[512];
	char *val = NULL;
	size_t klen = strlen(key);
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		char out[512];
		size_t n = 0;
		const char *p;

		if (strncmp(line, key, klen) != 0 ||
		    (line[klen] != '\t' && line[klen] != ' ' && line[klen] != ':'))
			continue;
		p = strchr(line, ':');
		if (!p)
			continue;
		/* blanks squeezed to one space, none at either end */
		for (p++; *p && *p != '\n' && n < sizeof(out) - 1; p++) {
			char ch = (char)(*p == '\t' ? ' ' : *p);

			if (ch == ' ' && (n == 0 || out[n - 1] == ' '))
				continue;
			out[n++] = ch;
		}
		while (n && out[n - 1] == ' ')
			n--;
		out[n] = '\0';
		val = strdup(out);
		break;
	}
	fclose(f);
	return val;
}

static uint64_t meminfo_total_kb(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int put_string_feat(struct pd_host_feats *h, unsigned int feat, const char *s)
{
	if (!s || !*s)
		return 0;
	return pd_buf_put_string(&h->feat[feat], s);
}

int pd_feat_host(struct pd_host_feats *h)
{
	struct utsname u;
	char host[256];
	char cpuid[256];
	char *vendor, *family, *model, *stepping, *desc;
	long avail, online;
	uint64_t mem;
	int r = 0;

	memset(h, 0, sizeof(*h));
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		r = put_string_feat(h, AUXCAP_PERF_FEAT_HOSTNAME, host);
	}
	if (r == 0 && uname(&u) == 0) {
		r = put_string_feat(h, AUXCAP_PERF_FEAT_OSRELEASE, u.release);
		if (r == 0)
			r = put_string_feat(h, AUXCAP_PERF_FEAT_ARCH, u.machine);
	}
	if (r == 0)
		r = put_string_feat(h, AUXCAP_PERF_FEAT_VERSION, "auxcap " AUXCAP_VERSION);
	avail = sysconf(_SC_NPROCESSORS_CONF);
	online = sysconf(_SC_NPROCESSORS_ONLN);
	if (r == 0 && avail > 0 && online > 0) {
		r = pd_buf_put_u32(&h->feat[AUXCAP_PERF_FEAT_NRCPUS], (uint32_t)avail);
		if (r == 0)
			r = pd_buf_put_u32(&h->feat[AUXCAP_PERF_FEAT_NRCPUS], (uint32_t)online);
	}
	mem = meminfo_total_kb();
	if (r == 0 && mem)
		r = pd_buf_put_u64(&h->feat[AUXCAP_PERF_FEAT_TOTAL_MEM], mem);

	desc = cpuinfo_value("model name");
	if (r == 0)
		r = put_string_feat(h, AUXCAP_PERF_FEAT_CPUDESC, desc);
	free(desc);
	vendor = cpuinfo_value("vendor_id");
	family = cpuinfo_value("cpu family");
	model = cpuinfo_value("model");
	stepping = cpuinfo_value("stepping");
	if (r == 0 && vendor && family && model && stepping) {
		snprintf(cpuid, sizeof(cpuid), "%s,%s,%s,%s", vendor, family, model, stepping);
		r = put_string_feat(h, AUXCAP_PERF_FEAT_CPUID, cpuid);
	} else if (r == 0 && auxcap_cpu_midr(NULL, cpuid, sizeof(cpuid)) == 0) {
		/* arm64: the MIDR, as perf writes it (what its SPE decoder reads the data-source
		 * encoding from) */
		r = put_string_feat(h, AUXCAP_PERF_FEAT_CPUID, cpuid);
	}
	free(vendor);
	free(family);
	free(model);
	free(stepping);
	if (r < 0) {
		for (unsigned int i = 0; i < AUXCAP_PERF_FEAT_LAST; i++)
			pd_buf_free(&h->feat[i]);
	}
	return r;
}

/* --- tracing data ----------------------------------------------------------------------- */

/* Append the whole of @path (tracefs files report size 0: read to EOF) into @b. */
static int put_file(struct pd_buf *b, const char *path, size_t *ret_len)
{
	char chunk[4096];
	size_t start = b->len;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		r = pd_buf_put(b, chunk, (size_t)n);
		if (r < 0)
			break;
	}
	close(fd);
	if (r < 0) {
		b->len = start;
		return r;
	}
	*ret_len = b->len - start;
	return 0;
}

/* ["label\0"] + u64 (or u32) size + the file; nothing is appended on failure. */
static int put_sized_file(struct pd_buf *b, const char *label, const char *path, bool u64_size)
{
	size_t start = b->len, at, len = 0;
	uint64_t size;
	uint32_t size32;
	int r = 0;

	if (label)
		r = pd_buf_put(b, label, strlen(label) + 1);
	at = b->len;
	if (r == 0)
		r = pd_buf_put_zeros(b, u64_size ? 8 : 4);
	if (r == 0)
		r = put_file(b, path, &len);
	if (r < 0) {
		b->len = start;
		return r;
	}
	size = len;
	size32 = (uint32_t)len;
	if (u64_size)
		memcpy(b->p + at, &size, 8);
	else
		memcpy(b->p + at, &size32, 4);
	return 0;
}

static bool same_system(const char *a, const char *b)
{
	size_t la = strcspn(a, ":"), lb = strcspn(b, ":");

	return la == lb && !strncmp(a, b, la);
}

int pd_feat_tracing_data(struct pd_buf *b, const char *tracefs, const char *const *events,
			 size_t nr)
{
	static const unsigned char magic[] = {
		0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g'
	};
	char path[512];
	uint32_t nr_sys = 0, page = (uint32_t)sysconf(_SC_PAGESIZE);
	unsigned char endian_long[2] = { 0, sizeof(long) };
	size_t nr_sys_at;
	int r;

	for (size_t i = 0; i < nr; i++)
		if (!strchr(events[i], ':') || strchr(events[i], '/') || strstr(events[i], ".."))
			return -EINVAL;
	r = pd_buf_put(b, magic, sizeof(magic));
	if (r == 0)
		r = pd_buf_put(b, "0.6", 4);
	if (r == 0)
		r = pd_buf_put(b, endian_long, 2);
	if (r == 0)
		r = pd_buf_put_u32(b, page);
	snprintf(path, sizeof(path), "%s/events/header_page", tracefs);
	if (r == 0)
		r = put_sized_file(b, "header_page", path, true);
	snprintf(path, sizeof(path), "%s/events/header_event", tracefs);
	if (r == 0)
		r = put_sized_file(b, "header_event", path, true);
	if (r == 0)
		r = pd_buf_put_u32(b, 0); /* ftrace's own events: none */
	nr_sys_at = b->len;
	if (r == 0)
		r = pd_buf_put_u32(b, 0); /* systems, fixed up below */
	/* One block per system, in first-seen order, with all its events. */
	for (size_t i = 0; i < nr && r == 0; i++) {
		size_t sys_len = strcspn(events[i], ":");
		uint32_t count = 0;
		size_t count_at;
		bool seen = false;

		for (size_t j = 0; j < i; j++)
			seen = seen || same_system(events[i], events[j]);
		if (seen)
			continue;
		r = pd_buf_put(b, events[i], sys_len);
		if (r == 0)
			r = pd_buf_put_zeros(b, 1);
		count_at = b->len;
		if (r == 0)
			r = pd_buf_put_u32(b, 0);
		for (size_t j = i; j < nr && r == 0; j++) {
			bool dup = false;

			if (!same_system(events[i], events[j]))
				continue;
			for (size_t k = i; k < j; k++)
				dup = dup || !strcmp(events[k], events[j]);
			if (dup)
				continue;
			snprintf(path, sizeof(path), "%s/events/%.*s/%s/format", tracefs,
				 (int)sys_len, events[j], events[j] + sys_len + 1);
			r = put_sized_file(b, NULL, path, true);
			count++;
		}
		if (r == 0)
			memcpy(b->p + count_at, &count, 4);
		nr_sys++;
	}
	if (r == 0)
		memcpy(b->p + nr_sys_at, &nr_sys, 4);
	if (r == 0)
		r = pd_buf_put_u32(b, 0); /* kallsyms: none */
	snprintf(path, sizeof(path), "%s/printk_formats", tracefs);
	if (r == 0 && put_sized_file(b, NULL, path, false) < 0)
		r = pd_buf_put_u32(b, 0); /* printk formats are optional */
	if (r == 0)
		r = pd_buf_put_u64(b, 0); /* saved cmdlines: none */
	return r;
}

/* --- decoders --------------------------------------------------------------------------- */

struct fcur {
	const unsigned char *p;
	size_t len;
	size_t pos;
	uint64_t off; /* file offset of p[0] */
	char *err;
	size_t err_size;
	const char *what;
};

static int fbad(struct fcur *c, const char *why)
{
	snprintf(c->err, c->err_size, "feature %s at offset %llu: %s", c->what,
		 (unsigned long long)c->off + c->pos, why);
	return -EBADMSG;
}

static int fget(struct fcur *c, void *v, size_t n)
{
	if (n > c->len - c->pos)
		return fbad(c, "truncated");
	memcpy(v, c->p + c->pos, n);
	c->pos += n;
	return 0;
}

/* A perf header string: u32 length then that many bytes holding a NUL. */
static int fstring(struct fcur *c, char **ret)
{
	uint32_t n;
	const char *s;
	char *dup;
	int r;

	r = fget(c, &n, 4);
	if (r < 0)
		return r;
	if (n > c->len - c->pos)
		return fbad(c, "string longer than the section");
	s = (const char *)c->p + c->pos;
	if (n == 0 || !memchr(s, '\0', n))
		return fbad(c, "string not NUL-terminated");
	dup = strdup(s);
	if (!dup)
		return -ENOMEM;
	c->pos += n;
	*ret = dup;
	return 0;
}

static int parse_cmdline(struct pd_feat_store *st, struct fcur *c)
{
	uint32_t nr;
	char **v;
	int r;

	r = fget(c, &nr, 4);
	if (r < 0)
		return r;
	if (nr > (c->len - c->pos) / 5)
		return fbad(c, "too many strings for the section");
	v = calloc(nr ? nr : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr; i++) {
		r = fstring(c, &v[i]);
		if (r < 0) {
			for (uint32_t j = 0; j < i; j++)
				free(v[j]);
			free(v);
			return r;
		}
	}
	for (size_t i = 0; i < st->nr_cmdline; i++)
		free(st->cmdline[i]);
	free(st->cmdline);
	st->cmdline = v;
	st->nr_cmdline = nr;
	return 0;
}

static bool build_id_known(const struct pd_feat_store *st, const struct auxcap_perf_build_id *b)
{
	for (size_t i = 0; i < st->nr_build_ids; i++) {
		const struct auxcap_perf_build_id *o = &st->build_ids[i];

		if (o->pid == b->pid && o->cpumode == b->cpumode && o->size == b->size &&
		    !memcmp(o->id, b->id, b->size) && !strcmp(o->filename, b->filename))
			return true;
	}
	return false;
}

static int parse_build_ids(struct pd_feat_store *st, struct fcur *c)
{
	struct auxcap_perf_build_id *v = NULL, *nv;
	size_t nr = 0, cap = 0;
	int r = 0;

	while (c->pos < c->len) {
		struct perf_event_header h;
		const unsigned char *rec = c->p + c->pos;
		const char *name;
		struct auxcap_perf_build_id *b;
		int32_t pid;

		if (c->len - c->pos < PD_BUILD_ID_FIXED) {
			r = fbad(c, "truncated build-id entry");
			goto fail;
		}
		memcpy(&h, rec, sizeof(h));
		if (h.size < PD_BUILD_ID_FIXED + 1 || h.size > c->len - c->pos) {
			r = fbad(c, "bad build-id entry size");
			goto fail;
		}
		name = (const char *)rec + PD_BUILD_ID_FIXED;
		if (!memchr(name, '\0', h.size - PD_BUILD_ID_FIXED)) {
			r = fbad(c, "build-id file name not NUL-terminated");
			goto fail;
		}
		if (nr == cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				r = -ENOMEM;
				goto fail;
			}
			v = nv;
		}
		b = &v[nr];
		memset(b, 0, sizeof(*b));
		memcpy(&pid, rec + 8, 4);
		b->pid = pid;
		b->cpumode = h.misc & PERF_RECORD_MISC_CPUMODE_MASK;
		memcpy(b->id, rec + 12, 20);
		b->size = (h.misc & PD_MISC_BUILD_ID_SIZE) ? rec[32] : 20;
		if (b->size > 20)
			b->size = 20;
		b->filename = strdup(name);
		if (!b->filename) {
			r = -ENOMEM;
			goto fail;
		}
		nr++;
		c->pos += h.size;
	}
	/* Append: pipe mode brings build-ids one record at a time, and a reader that walks
	 * the stream again meets them again (kept once). */
	if (nr) {
		nv = realloc(st->build_ids, (st->nr_build_ids + nr) * sizeof(*nv));
		if (!nv) {
			r = -ENOMEM;
			goto fail;
		}
		st->build_ids = nv;
		for (size_t i = 0; i < nr; i++) {
			if (build_id_known(st, &v[i])) {
				free((char *)v[i].filename);
				continue;
			}
			nv[st->nr_build_ids++] = v[i];
		}
	}
	free(v);
	return 0;
fail:
	for (size_t i = 0; i < nr; i++)
		free((char *)v[i].filename);
	free(v);
	return r;
}

static int parse_event_desc(struct fcur *c, pd_event_name_fn fn, void *ctx)
{
	uint32_t nr, attr_size, nr_ids;
	uint64_t ids[64];
	char *name;
	int r;

	r = fget(c, &nr, 4);
	if (r == 0)
		r = fget(c, &attr_size, 4);
	if (r < 0)
		return r;
	if (attr_size < 64 || attr_size > c->len)
		return fbad(c, "bad attr size");
	for (uint32_t i = 0; i < nr; i++) {
		if (attr_size > c->len - c->pos)
			return fbad(c, "truncated event");
		c->pos += attr_size;
		r = fget(c, &nr_ids, 4);
		if (r == 0)
			r = fstring(c, &name);
		if (r < 0)
			return r;
		if (nr_ids > (c->len - c->pos) / 8) {
			free(name);
			return fbad(c, "more ids than the section holds");
		}
		/* Names are matched by the first ids; keep at most 64 of them. */
		memcpy(ids, c->p + c->pos, (size_t)(nr_ids < 64 ? nr_ids : 64) * 8);
		c->pos += (size_t)nr_ids * 8;
		if (fn)
			fn(ctx, ids, nr_ids < 64 ? nr_ids : 64, name);
		free(name);
	}
	return 0;
}

static int parse_auxtrace_index(struct pd_feat_store *st, struct fcur *c)
{
	struct auxcap_perf_auxtrace_index_entry *v, *nv;
	uint64_t nr;
	size_t total = st->nr_auxtrace_index;
	int r;

	/* perf writes one or more blocks of {u64 nr, nr × {offset, size}}. */
	v = st->auxtrace_index;
	while (c->pos < c->len) {
		r = fget(c, &nr, 8);
		if (r < 0)
			return r;
		if (nr > (c->len - c->pos) / 16)
			return fbad(c, "more index entries than the section holds");
		if (!nr)
			continue;
		nv = realloc(v, (total + nr) * sizeof(*v));
		if (!nv)
			return -ENOMEM;
		v = nv;
		st->auxtrace_index = v;
		memcpy(v + total, c->p + c->pos, nr * 16);
		c->pos += nr * 16;
		total += nr;
		st->nr_auxtrace_index = total;
	}
	return 0;
}

static int parse_snapshots(struct pd_feat_store *st, struct fcur *c)
{
	struct auxcap_perf_snapshot *v;
	uint32_t version, esize;
	uint64_t nr;
	int r;

	r = fget(c, &version, 4);
	if (r == 0)
		r = fget(c, &esize, 4);
	if (r == 0)
		r = fget(c, &nr, 8);
	if (r < 0)
		return r;
	if (version != AUXCAP_PERF_SNAPSHOTS_VERSION)
		return 0; /* a later layout: left out, the rest of the file reads */
	if (esize < AUXCAP_PERF_SNAPSHOT_ENTRY_MIN)
		return fbad(c, "entries too small");
	if (nr > (c->len - c->pos) / esize)
		return fbad(c, "more entries than the section holds");
	v = calloc(nr ? nr : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint64_t i = 0; i < nr; i++) {
		const unsigned char *e = c->p + c->pos + i * esize;

		memcpy(&v[i].trigger_ns, e, 8);
		memcpy(&v[i].frozen_ns, e + 8, 8);
		memcpy(&v[i].data_end, e + 16, 8);
		memcpy(&v[i].source, e + 24, 4);
		memcpy(&v[i].coalesced, e + 28, 4);
		memcpy(&v[i].tid, e + 32, 4);
		memcpy(&v[i].cpu, e + 36, 4);
		if (esize >= 48)
			memcpy(&v[i].call_ns, e + 40, 8);
	}
	c->pos += nr * esize;
	free(st->snapshots);
	st->snapshots = v;
	st->nr_snapshots = nr;
	return 0;
}

static void tp_formats_free(struct pd_feat_store *st)
{
	for (size_t i = 0; i < st->nr_tp_formats; i++) {
		free((char *)st->tp_formats[i].system);
		free((char *)st->tp_formats[i].text);
	}
	free(st->tp_formats);
	st->tp_formats = NULL;
	st->nr_tp_formats = 0;
}

/* A NUL-terminated string at the cursor (borrowed), NULL if there is none. */
static const char *fcstr(struct fcur *c)
{
	const char *s = (const char *)c->p + c->pos;
	const char *nul = memchr(s, '\0', c->len - c->pos);

	if (!nul)
		return NULL;
	c->pos += (size_t)(nul - s) + 1;
	return s;
}

/* A u64 size then that many bytes: borrowed into *@ret, -EBADMSG if they do not fit. */
static int fsized(struct fcur *c, const unsigned char **ret, uint64_t *ret_len)
{
	uint64_t n;

	if (fget(c, &n, 8) < 0 || n > c->len - c->pos)
		return -EBADMSG;
	*ret = c->p + c->pos;
	*ret_len = n;
	c->pos += n;
	return 0;
}

static int add_tp_format(struct pd_feat_store *st, const char *system, const unsigned char *p,
			 uint64_t len)
{
	struct auxcap_perf_tp_format_text *v, *e;

	v = realloc(st->tp_formats, (st->nr_tp_formats + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	st->tp_formats = v;
	e = &v[st->nr_tp_formats];
	e->system = strdup(system);
	e->text = malloc(len ? len : 1);
	e->len = len;
	if (!e->system || !e->text) {
		free((char *)e->system);
		free((char *)e->text);
		return -ENOMEM;
	}
	memcpy((char *)e->text, p, len);
	st->nr_tp_formats++;
	return 0;
}

/*
 * TRACING_DATA (spec/perf-data-and-perf-tool.md, feature 1): magic, version, endianness, long
 * and page size, header_page, header_event, ftrace's formats, then per system its events'
 * format files (the rest, kallsyms, printk formats and saved cmdlines, is not needed).  The
 * formats only name the fields of tracepoint samples, so a section that is not as expected
 * ends the list where it stops making sense instead of failing the file.
 */
static int parse_tracing_data(struct pd_feat_store *st, struct fcur *c)
{
	static const unsigned char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n',
					       'g' };
	unsigned char m[sizeof(magic)], endian_long[2];
	const unsigned char *p;
	const char *s;
	uint64_t len;
	uint32_t n, page;
	int r;

	tp_formats_free(st);
	if (fget(c, m, sizeof(m)) < 0 || memcmp(m, magic, sizeof(m)) || !fcstr(c) ||
	    fget(c, endian_long, 2) < 0 || endian_long[0] != 0 /* little-endian */ ||
	    fget(c, &page, 4) < 0)
		return 0;
	for (int i = 0; i < 2; i++) { /* header_page, header_event */
		if (!(s = fcstr(c)) || fsized(c, &p, &len) < 0)
			return 0;
	}
	if (fget(c, &n, 4) < 0)
		return 0;
	for (uint32_t i = 0; i < n; i++) /* ftrace's own events */
		if (fsized(c, &p, &len) < 0)
			return 0;
	if (fget(c, &n, 4) < 0)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		const char *system = fcstr(c);
		uint32_t count;

		if (!system || fget(c, &count, 4) < 0)
			return 0;
		for (uint32_t j = 0; j < count; j++) {
			if (fsized(c, &p, &len) < 0)
				return 0;
			r = add_tp_format(st, system, p, len);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int pd_feat_parse(struct pd_feat_store *st, unsigned int feat, const unsigned char *p, size_t len,
		  uint64_t off, pd_event_name_fn name_fn, void *name_ctx, char *err,
		  size_t err_size)
{
	struct fcur c = { p, len, 0, off, err, err_size, NULL };
	struct auxcap_perf_features *f = &st->f;
	char *s;
	int r = 0;

	c.what = auxcap_perf_feat_name(feat);
	if (!c.what)
		return 0;
	switch (feat) {
	case AUXCAP_PERF_FEAT_HOSTNAME:
	case AUXCAP_PERF_FEAT_OSRELEASE:
	case AUXCAP_PERF_FEAT_VERSION:
	case AUXCAP_PERF_FEAT_ARCH:
	case AUXCAP_PERF_FEAT_CPUDESC:
	case AUXCAP_PERF_FEAT_CPUID:
		r = fstring(&c, &s);
		if (r < 0)
			return r;
		free(st->strings[feat]);
		st->strings[feat] = s;
		break;
	case AUXCAP_PERF_FEAT_NRCPUS:
		r = fget(&c, &f->nr_cpus_avail, 4);
		if (r == 0)
			r = fget(&c, &f->nr_cpus_online, 4);
		break;
	case AUXCAP_PERF_FEAT_TOTAL_MEM:
		r = fget(&c, &f->total_mem, 8);
		break;
	case AUXCAP_PERF_FEAT_CMDLINE:
		r = parse_cmdline(st, &c);
		break;
	case AUXCAP_PERF_FEAT_BUILD_ID:
		r = parse_build_ids(st, &c);
		break;
	case AUXCAP_PERF_FEAT_EVENT_DESC:
		r = parse_event_desc(&c, name_fn, name_ctx);
		break;
	case AUXCAP_PERF_FEAT_AUXTRACE:
		r = parse_auxtrace_index(st, &c);
		break;
	case AUXCAP_PERF_FEAT_AUXCAP_SNAPSHOTS:
		r = parse_snapshots(st, &c);
		break;
	case AUXCAP_PERF_FEAT_TRACING_DATA:
		r = parse_tracing_data(st, &c);
		break;
	case AUXCAP_PERF_FEAT_CLOCKID:
		r = fget(&c, &f->clockid_res_ns, 8);
		break;
	case AUXCAP_PERF_FEAT_SAMPLE_TIME:
		r = fget(&c, &f->sample_time_first, 8);
		if (r == 0)
			r = fget(&c, &f->sample_time_last, 8);
		break;
	case AUXCAP_PERF_FEAT_CLOCK_DATA: {
		uint32_t version;

		r = fget(&c, &version, 4);
		if (r == 0)
			r = fget(&c, &f->clockid, 4);
		if (r == 0)
			r = fget(&c, &f->clock_tod_ns, 8);
		if (r == 0)
			r = fget(&c, &f->clock_clockid_ns, 8);
		if (r == 0 && version != 1)
			r = fbad(&c, "unknown clock_data version");
		if (r == 0)
			f->has_clock_data = true;
		break;
	}
	default:
		break;
	}
	if (r < 0)
		return r;
	f->hostname = st->strings[AUXCAP_PERF_FEAT_HOSTNAME];
	f->osrelease = st->strings[AUXCAP_PERF_FEAT_OSRELEASE];
	f->version = st->strings[AUXCAP_PERF_FEAT_VERSION];
	f->arch = st->strings[AUXCAP_PERF_FEAT_ARCH];
	f->cpudesc = st->strings[AUXCAP_PERF_FEAT_CPUDESC];
	f->cpuid = st->strings[AUXCAP_PERF_FEAT_CPUID];
	f->cmdline = (const char *const *)st->cmdline;
	f->nr_cmdline = st->nr_cmdline;
	f->build_ids = st->build_ids;
	f->nr_build_ids = st->nr_build_ids;
	f->auxtrace_index = st->auxtrace_index;
	f->nr_auxtrace_index = st->nr_auxtrace_index;
	f->snapshots = st->snapshots;
	f->nr_snapshots = st->nr_snapshots;
	f->tp_formats = st->tp_formats;
	f->nr_tp_formats = st->nr_tp_formats;
	if (feat < AUXCAP_PERF_FEAT_BITS)
		f->present[feat / 64] |= 1ULL << (feat % 64);
	return 0;
}

void pd_feat_store_fini(struct pd_feat_store *st)
{
	for (unsigned int i = 0; i < AUXCAP_PERF_FEAT_LAST; i++)
		free(st->strings[i]);
	for (size_t i = 0; i < st->nr_cmdline; i++)
		free(st->cmdline[i]);
	free(st->cmdline);
	for (size_t i = 0; i < st->nr_build_ids; i++)
		free((char *)st->build_ids[i].filename);
	free(st->build_ids);
	free(st->auxtrace_index);
	free(st->snapshots);
	tp_formats_free(st);
	memset(st, 0, sizeof(*st));
}
