/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMU discovery from sysfs.
 *
 * Every perf PMU the kernel registers appears as a directory under
 * /sys/bus/event_source/devices/<name>/ with:
 *
 *	type                        decimal perf_event_attr.type of the PMU
 *	format/<term>               where a named term lives in the attr: "config:0-7",
 *	                            "config1:3", "config2:0-31", "config3:0-11", or several
 *	                            comma-separated ranges "config:0-7,32-35"
 *	caps/<name>                 driver capabilities, one value per file (intel_pt writes hex
 *	                            without a prefix, arm_spe decimal; see auxcap_pmu_cap_u64())
 *	events/<alias>              named events as term lists, e.g. msr's "tsc" = "event=0x00"
 *	nr_addr_filters             decimal; the file exists only when the PMU has filters
 *	cpumask                     cpu list "0-3,8" of the CPUs the PMU counts on (uncore, SPE)
 *	perf_event_mux_interval_ms  decimal
 *
 * auxcap_pmu_new() reads one such directory into a struct auxcap_pmu; auxcap_pmu_list_new()
 * reads them all.  The root is a parameter so tests and `auxcap list --sysfs DIR` can point it
 * at fixture trees (fixtures/sysfs/).
 *
 * config3 (attr offset 128, kernel 6.3) is missing from older uapi headers such as Debian 12's
 * 6.1: struct auxcap_attr gives every perf_event_attr room for it, and auxcap_attr_word_get()
 * / auxcap_attr_word_set() reach all four config words the same way.
 */
#ifndef AUXCAP_PMU_H
#define AUXCAP_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "auxcap/api.h"

/** The default sysfs root of the perf PMUs. */
#define AUXCAP_PMU_SYSFS_ROOT "/sys/bus/event_source/devices"

/** attr.size of the first layout with config3 (PERF_ATTR_SIZE_VER8, kernel 6.3). */
#define AUXCAP_ATTR_SIZE_VER8 136
/** Offset of attr.config3 in bytes (spec/kernel-aux-abi.md section 6.6). */
#define AUXCAP_ATTR_CONFIG3_OFFSET 128

/**
 * A perf_event_attr with room for the fields this build's uapi header may lack (config3).
 * Zero it, fill @attr, and set config3 only through auxcap_attr_word_set().  When config3 is
 * non-zero the kernel must be told attr.size >= AUXCAP_ATTR_SIZE_VER8; auxcap_attr_size()
 * says which size to pass.
 */
struct auxcap_attr {
	union {
		struct perf_event_attr attr;		    /* the header's view */
		unsigned char bytes[AUXCAP_ATTR_SIZE_VER8]; /* raw view, VER8 bytes at least */
	};
};

/** The four config words of an attr that format terms can live in. */
enum auxcap_attr_word {
	AUXCAP_ATTR_CONFIG = 0, /* attr.config, offset 8 */
	AUXCAP_ATTR_CONFIG1,	/* attr.config1 (bp_addr), offset 56 */
	AUXCAP_ATTR_CONFIG2,	/* attr.config2 (bp_len), offset 64 */
	AUXCAP_ATTR_CONFIG3,	/* attr.config3, offset 128 (kernel 6.3+) */
	AUXCAP_ATTR_WORD_MAX,
};

/** "config", "config1", "config2" or "config3"; NULL for an invalid @word. */
AUXCAP_API const char *auxcap_attr_word_name(enum auxcap_attr_word word);

/** The value of config word @word of @a (0 for an invalid @word). */
AUXCAP_API uint64_t auxcap_attr_word_get(const struct auxcap_attr *a, enum auxcap_attr_word word);

/** Store @value into config word @word of @a (ignored for an invalid @word). */
AUXCAP_API void
auxcap_attr_word_set(struct auxcap_attr *a, enum auxcap_attr_word word, uint64_t value);

/**
 * The attr.size to hand the kernel for @a: AUXCAP_ATTR_SIZE_VER8 when config3 is non-zero,
 * else sizeof(struct perf_event_attr) of this build.
 */
AUXCAP_API uint32_t auxcap_attr_size(const struct auxcap_attr *a);

/** One format term: a named bit field scattered over one config word. */
struct auxcap_pmu_format {
	char *name;		    /* owned: file name under format/, e.g. "mtc_period" */
	enum auxcap_attr_word word; /* which config word */
	uint64_t mask;		    /* bits of the word the field occupies */
	unsigned int width;	    /* number of bits in @mask (1..64) */
};

/** One capability file under caps/, kept as text because its base depends on the driver. */
struct auxcap_pmu_cap {
	char *name;  /* owned: file name */
	char *value; /* owned: content without surrounding white space */
};

/** One named event under events/ (the .scale/.unit/... companions are skipped). */
struct auxcap_pmu_alias {
	char *name;  /* owned: file name, e.g. "tsc" */
	char *terms; /* owned: term list, e.g. "event=0x00" */
};

/** What sysfs says about one PMU. */
struct auxcap_pmu {
	char *name;			   /* owned: directory name, e.g. "intel_pt" */
	uint32_t type;			   /* perf_event_attr.type for this PMU */
	size_t nr_formats;		   /* entries in @formats */
	struct auxcap_pmu_format *formats; /* owned, sorted by name */
	size_t nr_caps;			   /* entries in @caps */
	struct auxcap_pmu_cap *caps;	   /* owned, sorted by name */
	size_t nr_aliases;		   /* entries in @aliases */
	struct auxcap_pmu_alias *aliases;  /* owned, sorted by name */
	uint32_t nr_addr_filters;	   /* address filters; 0 when the file is absent */
	bool has_cpumask;		   /* a cpumask file exists */
	size_t nr_cpus;			   /* entries in @cpus */
	int *cpus;			   /* owned: cpumask as ascending CPU numbers */
	int32_t mux_interval_ms;	   /* perf_event_mux_interval_ms, ms; -1 if absent */
	/**
	 * Other readable regular files of the PMU directory itself: the driver's own
	 * attributes (intel_pt: max_nonturbo_ratio, tsc_art_ratio), as text.  Appended field.
	 */
	size_t nr_attrs;		  /* entries in @attrs */
	struct auxcap_pmu_cap *attrs;	  /* owned, sorted by name */
};

/**
 * Parse the content of one format/ file into @ret.
 *
 * Accepts "<word>:<bits>" where word is config, config1, config2 or config3 and bits is a
 * comma-separated list of "N" or "LO-HI" (0 <= LO <= HI <= 63), with optional trailing white
 * space.  Ranges are OR-ed into one mask; a value is scattered into it low bits first.
 * @ret->name is left NULL.
 *
 * Returns 0 on success; @ret is untouched on failure.
 * Returns -EINVAL if @text or @ret is NULL or @text is malformed ("config:", "config:9-3",
 * "foo:1", "config:0-70", trailing garbage).
 */
AUXCAP_API int auxcap_pmu_format_parse(const char *text, struct auxcap_pmu_format *ret);

/**
 * Parse a kernel cpu list ("0-3,8", "" for none) into a malloc'd ascending array.
 *
 * On success *@ret_cpus is owned by the caller (free()) and may be NULL when *@ret_nr is 0.
 * Returns 0 on success.
 * Returns -EINVAL if the list is malformed (or an argument is NULL).
 * Returns -ENOMEM if memory runs out.
 */
AUXCAP_API int auxcap_cpulist_parse(const char *text, int **ret_cpus, size_t *ret_nr);

/** The default sysfs directory of the CPUs. */
#define AUXCAP_CPU_SYSFS_ROOT "/sys/devices/system/cpu"

/**
 * The MIDR_EL1 of an arm64 CPU as the kernel exports it (cpuN/regs/identification/midr_el1
 * under @root, NULL: AUXCAP_CPU_SYSFS_ROOT), of the lowest-numbered CPU that has one, into
 * @buf of @len bytes: "0x00000000410fd0c0", what perf records as the CPUID feature on arm64
 * (an Arm SPE decoder reads the data-source encoding from it).
 *
 * Returns 0 on success.
 * Returns -ENOENT if no CPU exports one (not an arm64 machine, or no such @root).
 * Returns -EBADMSG if the file does not hold "0x" and hex digits.
 * Returns -ENAMETOOLONG if @len is too short, -EINVAL for a NULL argument.
 */
AUXCAP_API int auxcap_cpu_midr(const char *root, char *buf, size_t len);

/**
 * Read PMU @name under @root (NULL: AUXCAP_PMU_SYSFS_ROOT).
 *
 * On success *@ret_pmu is owned by the caller; free it with auxcap_pmu_free().
 * Returns 0 on success.
 * Returns -EINVAL if @name or @ret_pmu is NULL, or @name is empty or contains '/'.
 * Returns -ENOENT if there is no such PMU directory or it has no type file.
 * Returns -ENOTDIR if @root/@name is not a directory.
 * Returns -ENAMETOOLONG if the path does not fit in PATH_MAX.
 * Returns -EBADMSG if type, nr_addr_filters, cpumask or a format file is malformed.
 * Returns -ENOMEM if memory runs out, or the errno of a failing read.
 */
AUXCAP_API int auxcap_pmu_new(const char *root, const char *name, struct auxcap_pmu **ret_pmu);

/** Free @pmu and everything it owns (NULL-safe). */
AUXCAP_API void auxcap_pmu_free(struct auxcap_pmu *pmu);

/** The format term @name of @pmu, or NULL.  Borrowed from @pmu. */
AUXCAP_API const struct auxcap_pmu_format *auxcap_pmu_format_find(const struct auxcap_pmu *pmu,
								  const char *name);

/** The largest value the field @f can hold. */
AUXCAP_API uint64_t auxcap_pmu_format_max(const struct auxcap_pmu_format *f);

/**
 * Write @value into field @f of @attr: the field's bits are cleared, then the value's bits are
 * scattered into them, lowest value bit into the lowest field bit.  Other bits are untouched.
 *
 * Returns 0 on success (@attr untouched on failure).
 * Returns -EINVAL if an argument is NULL.
 * Returns -ERANGE if @value does not fit in the field's width.
 */
AUXCAP_API int auxcap_pmu_format_put(const struct auxcap_pmu_format *f, uint64_t value,
				     struct auxcap_attr *attr);

/** Read field @f back out of @attr (the inverse of auxcap_pmu_format_put()). */
AUXCAP_API uint64_t
auxcap_pmu_format_get(const struct auxcap_pmu_format *f, const struct auxcap_attr *attr);

/**
 * Set the named format term @term of @pmu to @value in @attr.
 *
 * Returns 0 on success (@attr untouched on failure).
 * Returns -EINVAL if an argument is NULL.
 * Returns -ENOENT if @pmu has no format term @term.
 * Returns -ERANGE if @value does not fit in the field.
 */
AUXCAP_API int auxcap_pmu_set_term(const struct auxcap_pmu *pmu, const char *term, uint64_t value,
				   struct auxcap_attr *attr);

/**
 * Write @f as sysfs would ("config:0-7,32-35") into @buf of @len bytes (always terminated
 * when @len > 0).  Returns the length the full string needs, like snprintf().
 */
AUXCAP_API int auxcap_pmu_format_str(const struct auxcap_pmu_format *f, char *buf, size_t len);

/** The text of capability @name of @pmu, or NULL.  Borrowed from @pmu. */
AUXCAP_API const char *auxcap_pmu_cap_text(const struct auxcap_pmu *pmu, const char *name);

/**
 * Capability @name of @pmu as a number in @base (16 for intel_pt, which writes "%x"; 10 for
 * arm_spe, which writes "%u"; 0 to accept a "0x" prefix and otherwise read decimal).
 *
 * Returns 0 and stores the value in *@ret on success (untouched on failure).
 * Returns -EINVAL if an argument is NULL or @base is not 0, 10 or 16.
 * Returns -ENOENT if @pmu has no such capability.
 * Returns -EBADMSG if its text is not a number in @base.
 */
AUXCAP_API int
auxcap_pmu_cap_u64(const struct auxcap_pmu *pmu, const char *name, int base, uint64_t *ret);

/**
 * The text of driver attribute file @name of @pmu (a file in the PMU directory itself other
 * than type, nr_addr_filters, cpumask, perf_event_mux_interval_ms and uevent), or NULL.
 * Borrowed from @pmu.
 */
const char *auxcap_pmu_attr_text(const struct auxcap_pmu *pmu, const char *name);

/** The term list of event alias @name of @pmu, or NULL.  Borrowed from @pmu. */
AUXCAP_API const char *auxcap_pmu_alias_find(const struct auxcap_pmu *pmu, const char *name);

/** All PMUs under one root, sorted by name. */
struct auxcap_pmu_list {
	size_t nr; /* entries in @entries */
	struct auxcap_pmu_list_entry {
		char *name;		/* owned: directory name */
		struct auxcap_pmu *pmu; /* owned, NULL when it could not be read */
		int err;		/* 0, or the negative errno auxcap_pmu_new() returned */
	} * entries;			/* owned */
};

/**
 * Read every PMU under @root (NULL: AUXCAP_PMU_SYSFS_ROOT).  A PMU that cannot be read does
 * not fail the whole list: its entry has pmu == NULL and err set.
 *
 * On success *@ret_list is owned by the caller; free it with auxcap_pmu_list_free().
 * Returns 0 on success.
 * Returns -EINVAL if @ret_list is NULL.
 * Returns -ENOENT if @root does not exist, -ENOTDIR if it is not a directory, the errno of
 * opendir() otherwise, or -ENOMEM.
 */
AUXCAP_API int auxcap_pmu_list_new(const char *root, struct auxcap_pmu_list **ret_list);

/** Free @list and every PMU in it (NULL-safe). */
AUXCAP_API void auxcap_pmu_list_free(struct auxcap_pmu_list *list);

/** The PMU called @name in @list, or NULL (also when it was listed but unreadable). */
AUXCAP_API const struct auxcap_pmu *
auxcap_pmu_list_find(const struct auxcap_pmu_list *list, const char *name);

#endif /* AUXCAP_PMU_H */
