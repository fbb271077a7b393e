/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap archive FILE: copy the binaries a capture needs (its BUILD_ID table) into
 * FILE.archive/.build-id/xx/rest, so that `auxcap decode FILE` works on another machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "auxcap/perf_data.h"
#include "auxcap/proc.h"
#include "binaries.h"
#include "auxcap/file.h"
#include "cli.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: auxcap archive FILE\n"
		   "\n"
		   "Copy every binary the capture FILE maps (found by its build-id: the path it was\n"
		   "recorded from, or perf's build-id cache ~/.debug) into FILE.archive/, where\n"
		   "'auxcap decode FILE' looks for them.  Move FILE and FILE.archive/ together.\n");
}

/*
 * Whether @dir may hold what we write: a real directory (not a symlink to one) and, when we
 * run as root, one we own, as auxcap_file_create() demands of the directory of a capture.
 */
static int check_dir(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (geteuid() == 0 && st.st_uid != 0)
		return -EPERM;
	return 0;
}

/* mkdir -p for the directories of @path below @root (which exists), each checked. */
static int make_parents(char *path, size_t root_len)
{
	for (char *p = path + root_len + 1; *p; p++) {
		int r;

		if (*p != '/')
			continue;
		*p = '\0';
		r = mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : check_dir(path);
		*p = '/';
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Copy @src to @dst, never over an existing file or through a symlink.  The copy gets the
 * source's permission bits (without write for others and set-id bits): a binary only its
 * owner could read stays so.
 */
static int copy_file(const char *src, const char *dst, uint64_t *ret_bytes)
{
	char tmp[4096 + 16], buf[1 << 16];
	struct stat st;
	int in, out, r = 0;
	ssize_t n;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", dst) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	in = auxcap_file_open_regular(src);
	if (in < 0)
		return in;
	if (fstat(in, &st) < 0) {
		r = -errno;
		close(in);
		return r;
	}
	(void)unlink(tmp);
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		   st.st_mode & 0755);
	if (out < 0) {
		r = -errno;
		close(in);
		return r;
	}
	*ret_bytes = 0;
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		r = auxcap_file_write_all(out, buf, (size_t)n);
		if (r < 0)
			break;
		*ret_bytes += (uint64_t)n;
	}
	close(in);
	if (close(out) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, dst) < 0)
		r = -errno;
	if (r < 0)
		(void)unlink(tmp);
	return r;
}

/*
 * The _text of the kernel that made @file, from its [kernel.kallsyms]_text mapping (written
 * before the captured records); 0 if it has none.
 */
static uint64_t capture_ktext(const char *file)
{
	struct auxcap_perf_reader *rd = NULL;
	struct auxcap_perf_event ev;
	uint64_t ktext = 0;

	if (auxcap_perf_reader_open(file, NULL, &rd) < 0)
		return 0;
	while (!ktext && auxcap_perf_reader_next(rd, &ev) > 0) {
		const struct auxcap_record *rec = &ev.rec;

		if (rec->type == PERF_RECORD_MMAP && rec->u.mmap.filename &&
		    !strncmp(rec->u.mmap.filename, "[kernel.kallsyms]", 17))
			ktext = rec->u.mmap.pgoff;
		else if (rec->type == PERF_RECORD_SAMPLE || rec->type == PERF_RECORD_AUX)
			break; /* past the side-band written before the capture */
	}
	auxcap_perf_reader_close(rd);
	return ktext;
}

int cli_archive_kernel(const char *dir, bool code, bool replace, uint64_t *bytes,
		       const char **what)
{
	uint64_t n = 0;
	char *dst = NULL;
	int r, copied = 0;

	*what = "/proc/kallsyms";
	r = mkdir(dir, 0755) < 0 && errno != EEXIST ? -errno : check_dir(dir);
	if (r == 0 && asprintf(&dst, "%s/kallsyms", dir) < 0) {
		dst = NULL;
		r = -ENOMEM;
	}
	if (r == 0 && replace)
		(void)unlink(dst);
	if (r == 0 && access(dst, F_OK) < 0) {
		r = copy_file("/proc/kallsyms", dst, &n);
		copied |= r == 0;
	}
	free(dst);
	dst = NULL;
	if (r == 0 && code) {
		*what = "/proc/kcore";
		if (asprintf(&dst, "%s/kcore", dir) < 0) {
			dst = NULL;
			r = -ENOMEM;
		} else if (replace || access(dst, F_OK) < 0) {
			r = auxcap_proc_kcore_copy(NULL, dst, &n);
			r = r < 0 ? r : 0;
			copied |= r == 0 ? 2 : 0;
		}
		free(dst);
	}
	*bytes += n;
	return r < 0 ? r : copied;
}

/* Whether @rd's AUX event is Intel PT's tracing kernel code (its decode needs the code). */
static bool traces_kernel_code(const struct auxcap_perf_reader *rd)
{
	for (size_t i = 0; i < auxcap_perf_reader_nr_evsels(rd); i++) {
		const struct auxcap_perf_evsel *es = auxcap_perf_reader_evsel(rd, i);

		if (es->name && !strncmp(es->name, "intel_pt/", 9) && es->attr &&
		    !es->attr->exclude_kernel)
			return true;
	}
	return false;
}

/*
 * FILE.archive/kallsyms, and for a trace of kernel code FILE.archive/kcore: this machine's
 * when the capture was made by the running kernel in this boot (its release and _text), for
 * decode to name and decode kernel code elsewhere; what is there already (the same boot's)
 * is kept.  Returns what cli_archive_kernel() copied (0 if not the capture's kernel).
 */
static int archive_kernel(const char *file, const char *dir, const struct auxcap_perf_reader *rd,
			  uint64_t *bytes, const char **what)
{
	const struct auxcap_perf_features *f = auxcap_perf_reader_features(rd);

	*what = "/proc/kallsyms";
	if (!auxcap_proc_kernel_is(f->osrelease, capture_ktext(file)))
		return 0;
	return cli_archive_kernel(dir, traces_kernel_code(rd) && access("/proc/kcore", F_OK) == 0,
				  false, bytes, what);
}

static int run_archive(int argc, char **argv)
{
	struct auxcap_perf_reader_opts opts;
	const struct auxcap_perf_features *f;
	struct auxcap_perf_reader *rd = NULL;
	size_t copied = 0, present = 0, missing = 0;
	uint64_t bytes = 0;
	size_t root_len;
	char err[256] = "", *dir = NULL;
	const char *file;
	int r, ret = CLI_ERR;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return CLI_OK;
	}
	if (argc != 2 || argv[1][0] == '-') {
		if (argc < 2)
			cli_err("archive: give the capture whose binaries to copy: auxcap archive "
				"FILE");
		else if (!strcmp(argv[1], "-"))
			cli_err("archive: '-' is not a file: archive a saved capture");
		else if (argv[1][0] == '-')
			cli_err("archive: unknown option '%s'; run 'auxcap archive --help'", argv[1]);
		else
			cli_err("archive: one capture at a time ('%s' and '%s')", argv[1], argv[2]);
		return CLI_ERR;
	}
	file = argv[1];
	memset(&opts, 0, sizeof(opts));
	opts.sz = sizeof(opts);
	opts.errbuf = err;
	opts.errbuf_size = sizeof(err);
	r = auxcap_perf_reader_open(file, &opts, &rd);
	if (r == -ENOENT) {
		cli_err("%s: no such file; check the path", file);
		return CLI_ERR;
	}
	if (r < 0) {
		cli_err("%s: %s: %s", file, r == -EBADMSG ? "invalid perf.data" : "cannot read",
			err[0] ? err : strerror(-r));
		return CLI_ERR;
	}
	/* A pipe-mode capture carries its build-ids as HEADER_BUILD_ID records at the end of the
	 * stream: read through it (the reader gathers them into the features). */
	if (auxcap_perf_reader_info(rd)->pipe) {
		struct auxcap_perf_event ev;

		while ((r = auxcap_perf_reader_next(rd, &ev)) > 0)
			;
		if (r < 0)
			cli_warn("%s: %s; archiving the binaries of the build-ids read before it",
				 file, r == -EBADMSG ? auxcap_perf_reader_error(rd) : strerror(-r));
	}
	f = auxcap_perf_reader_features(rd);
	if (!f->nr_build_ids) {
		cli_err("%s has no build-id table (recorded without libelf, or cut short before "
			"its features were written); nothing to archive",
			file);
		goto out;
	}
	if (auxcap_archive_dir(file, &dir) < 0)
		goto oom;
	/* The directory FILE is in holds FILE.archive/: checked as a capture's directory is. */
	{
		char *slash = strrchr(dir, '/');

		root_len = slash ? (size_t)(slash - dir) : 0;
		if (slash)
			*slash = '\0';
		r = check_dir(slash ? (root_len ? dir : "/") : ".");
		if (slash)
			*slash = '/';
		if (r < 0) {
			cli_err("will not write %s/: %s%s", dir, strerror(-r),
				r == -EPERM ? " (its directory belongs to another user; as root, "
					      "archive in a directory root owns)"
					    : "");
			goto out;
		}
	}
	for (size_t i = 0; i < f->nr_build_ids; i++) {
		const struct auxcap_perf_build_id *b = &f->build_ids[i];
		char hex[AUXCAP_BUILD_ID_HEX_MAX], *src = NULL, *dst = NULL;
		uint64_t n = 0;

		/* the kernel has no file of its own here: its symbols and code are copied below */
		if (!strncmp(b->filename, "[kernel.kallsyms]", 17))
			continue;
		auxcap_build_id_hex(b->id, b->size, hex);
		if (auxcap_archive_path(file, b->id, b->size, &dst) < 0)
			goto oom;
		if (access(dst, F_OK) == 0) {
			present++;
			free(dst);
			continue;
		}
		r = auxcap_binary_find(NULL, b->filename, b->id, b->size, &src);
		if (r == -ENOMEM) {
			free(dst);
			goto oom;
		}
		if (r < 0) {
			cli_warn("%s (build-id %s) is not on this machine any more (or was rebuilt); "
				 "decode will skip its code",
				 b->filename, hex);
			missing++;
			free(dst);
			continue;
		}
		r = make_parents(dst, root_len);
		if (r < 0) {
			cli_err("will not write %s: %s%s", dst, strerror(-r),
				r == -EPERM ? " (a directory on the way belongs to another user; "
					      "remove it or archive elsewhere)"
					    : "");
			free(src);
			free(dst);
			goto out;
		}
		r = copy_file(src, dst, &n);
		if (r < 0) {
			cli_err("cannot copy %s to %s: %s", src, dst, strerror(-r));
			free(src);
			free(dst);
			goto out;
		}
		copied++;
		bytes += n;
		free(src);
		free(dst);
	}
	{
		const char *what;

		r = archive_kernel(file, dir, rd, &bytes, &what);
		if (r < 0)
			cli_warn("cannot copy %s to %s/: %s%s", what, dir, strerror(-r),
				 !strcmp(what, "/proc/kallsyms")
					 ? "; kernel addresses will be unnamed elsewhere"
				 : r == -EACCES ? "; kernel code will not be decoded elsewhere (run "
						  "as root, or decode with --vmlinux)"
						: "; kernel code will not be decoded elsewhere");
	}
	printf("archived %zu binaries%s (%" PRIu64 " bytes) into %s/", copied,
	       r == 3	 ? " and the kernel's symbols and code"
	       : r == 2 ? " and the kernel's code"
	       : r == 1 ? " and the kernel's symbols"
			: "",
	       bytes, dir);
	if (present)
		printf(", %zu already there", present);
	if (missing)
		printf(", %zu missing", missing);
	printf("\n");
	ret = CLI_OK;
	goto out;
oom:
	cli_err("out of memory");
out:
	free(dir);
	auxcap_perf_reader_close(rd);
	return ret;
}

const struct cli_cmd cli_cmd_archive = {
	.name = "archive",
	.summary = "copy the binaries a capture needs next to it (FILE.archive/)",
	.run = run_archive,
};
