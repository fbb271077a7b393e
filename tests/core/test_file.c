/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auxcap_file_create(): 0600, O_EXCL, symlinks refused, existing files moved aside or
 * removed (never written through), root refusing another user's directory.  Every case runs
 * in a fresh directory under /tmp and checks the file system afterwards with lstat/read.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include <cmocka.h>

#include "auxcap/file.h"

struct dir {
	char path[64];
	char buf[PATH_MAX]; /* scratch for path joins */
};

static int setup(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));

	if (!d)
		return -1;
	snprintf(d->path, sizeof(d->path), "/tmp/auxcap-file-XXXXXX");
	if (!mkdtemp(d->path))
		return -1;
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct dir *d = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->path);
	if (system(cmd) != 0)
		return -1;
	free(d);
	return 0;
}

static const char *at(struct dir *d, const char *name)
{
	snprintf(d->buf, sizeof(d->buf), "%s/%s", d->path, name);
	return d->buf;
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* The content of @path ("" if empty), in a static buffer. */
static const char *get(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
	return buf;
}

/* A created file: regular, 0600, empty, close-on-exec, the given fd. */
static void check_new(const char *path, int fd)
{
	struct stat st, fst;

	assert_true(fd >= 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(fstat(fd, &fst), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_true(st.st_ino == fst.st_ino && st.st_dev == fst.st_dev);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_size, 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(write(fd, "new", 3), 3);
	close(fd);
}

static void test_file_create_new_is_0600(void **state)
{
	struct dir *d = *state;
	mode_t old = umask(0);
	char err[256] = "";

	/* Whatever the umask allows, the file is 0600. */
	check_new(at(d, "a.data"), auxcap_file_create(at(d, "a.data"), AUXCAP_FILE_EXCL, err,
						      sizeof(err)));
	umask(old);
	assert_string_equal(err, "");
	assert_string_equal(get(at(d, "a.data")), "new");
}

static void test_file_create_excl_refuses_existing(void **state)
{
	struct dir *d = *state;
	char err[256] = "";

	put(at(d, "a.data"), "keep");
	assert_int_equal(auxcap_file_create(at(d, "a.data"), AUXCAP_FILE_EXCL, err, sizeof(err)),
			 -EEXIST);
	assert_string_equal(get(at(d, "a.data")), "keep");
	assert_non_null(strstr(err, "a.data' exists"));
	assert_null(strchr(err, '\n'));
}

static void test_file_create_keep_old(void **state)
{
	struct dir *d = *state;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s", at(d, "a.data"));
	put(path, "first");
	put(at(d, "a.data.old"), "older");
	check_new(path, auxcap_file_create(path, AUXCAP_FILE_KEEP_OLD, NULL, 0));
	/* The previous file became a.data.old (replacing the older one), untouched. */
	assert_string_equal(get(at(d, "a.data.old")), "first");
	assert_string_equal(get(path), "new");
}

static void test_file_create_replace_keeps_other_links(void **state)
{
	struct dir *d = *state;
	char path[PATH_MAX], other[PATH_MAX];
	struct stat before, after;

	snprintf(path, sizeof(path), "%s", at(d, "a.data"));
	snprintf(other, sizeof(other), "%s", at(d, "precious"));
	put(other, "precious content");
	assert_int_equal(link(other, path), 0);
	assert_int_equal(stat(other, &before), 0);
	/* The entry is replaced, never truncated: the file behind the other link is intact. */
	check_new(path, auxcap_file_create(path, AUXCAP_FILE_REPLACE, NULL, 0));
	assert_string_equal(get(other), "precious content");
	assert_int_equal(stat(other, &after), 0);
	assert_int_equal(after.st_nlink, 1);
	assert_int_equal(after.st_mode & 07777, before.st_mode & 07777);
}

static void test_file_create_refuses_symlink(void **state)
{
	static const enum auxcap_file_mode modes[] = { AUXCAP_FILE_EXCL, AUXCAP_FILE_KEEP_OLD,
						       AUXCAP_FILE_REPLACE };
	struct dir *d = *state;
	char path[PATH_MAX], target[PATH_MAX], dangling[PATH_MAX];
	struct stat st;
	char err[512];

	snprintf(path, sizeof(path), "%s", at(d, "a.data"));
	snprintf(target, sizeof(target), "%s", at(d, "target"));
	snprintf(dangling, sizeof(dangling), "%s", at(d, "nothing-here"));
	put(target, "target content");
	assert_int_equal(symlink(target, path), 0);
	for (size_t i = 0; i < 3; i++) {
		err[0] = '\0';
		assert_int_equal(auxcap_file_create(path, modes[i], err, sizeof(err)), -ELOOP);
		assert_non_null(strstr(err, "symbolic link"));
		assert_non_null(strstr(err, path));
		/* Neither the link nor its target changed, and no .old appeared. */
		assert_int_equal(lstat(path, &st), 0);
		assert_true(S_ISLNK(st.st_mode));
		assert_string_equal(get(target), "target content");
		assert_int_equal(lstat(at(d, "a.data.old"), &st), -1);
	}
	/* A dangling link is not followed to create its target either. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(dangling, path), 0);
	assert_int_equal(auxcap_file_create(path, AUXCAP_FILE_REPLACE, NULL, 0), -ELOOP);
	assert_int_equal(lstat(dangling, &st), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_file_create_directories(void **state)
{
	struct dir *d = *state;
	char path[PATH_MAX], err[512] = "";

	snprintf(path, sizeof(path), "%s", at(d, "sub"));
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(auxcap_file_create(path, AUXCAP_FILE_REPLACE, NULL, 0), -EISDIR);
	strcat(path, "/");
	assert_int_equal(auxcap_file_create(path, AUXCAP_FILE_REPLACE, NULL, 0), -EISDIR);
	assert_int_equal(auxcap_file_create(at(d, "missing/a.data"), AUXCAP_FILE_EXCL, err,
					    sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "missing"));
	assert_int_equal(auxcap_file_create("", AUXCAP_FILE_EXCL, NULL, 0), -EINVAL);
	assert_int_equal(auxcap_file_create(NULL, AUXCAP_FILE_EXCL, NULL, 0), -EINVAL);
	assert_int_equal(auxcap_file_create(at(d, "x"), (enum auxcap_file_mode)0, NULL, 0), -EINVAL);
}

static void test_file_create_device_opened_as_is(void **state)
{
	struct stat st;
	int fd;

	(void)state;
	fd = auxcap_file_create("/dev/null", AUXCAP_FILE_REPLACE, NULL, 0);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(auxcap_file_create("/dev/null", AUXCAP_FILE_EXCL, NULL, 0), -EEXIST);
}

/* Input files a capture names: only regular files, and a FIFO never waits for a writer. */
static void test_file_open_regular(void **state)
{
	struct dir *d = *state;
	char buf[8] = "";
	int fd;

	put(at(d, "reg"), "abc");
	fd = auxcap_file_open_regular(at(d, "reg"));
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 3);
	assert_string_equal(buf, "abc");
	close(fd);
	assert_int_equal(mkfifo(at(d, "fifo"), 0600), 0);
	assert_int_equal(auxcap_file_open_regular(at(d, "fifo")), -EINVAL);
	assert_int_equal(auxcap_file_open_regular("/dev/null"), -EINVAL);
	assert_int_equal(auxcap_file_open_regular(d->path), -EINVAL);
	assert_int_equal(auxcap_file_open_regular(at(d, "missing")), -ENOENT);
	assert_int_equal(auxcap_file_open_regular(NULL), -EINVAL);
}

static void test_file_create_root_refuses_foreign_dir(void **state)
{
	struct dir *d = *state;
	char sub[PATH_MAX], path[PATH_MAX + 16], err[512] = "";
	struct stat st;

	if (geteuid() != 0) {
		print_message("not root: the foreign-directory rule applies to root only\n");
		skip();
	}
	snprintf(sub, sizeof(sub), "%s", at(d, "user-dir"));
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(chown(sub, 12345, 12345), 0);
	snprintf(path, sizeof(path), "%s/a.data", sub);
	assert_int_equal(auxcap_file_create(path, AUXCAP_FILE_REPLACE, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, sub));
	assert_non_null(strstr(err, "uid 12345"));
	assert_int_equal(lstat(path, &st), -1);
	/* Back to root's: allowed. */
	assert_int_equal(chown(sub, 0, 0), 0);
	check_new(path, auxcap_file_create(path, AUXCAP_FILE_REPLACE, NULL, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_file_create_new_is_0600, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_create_excl_refuses_existing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_file_create_keep_old, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_create_replace_keeps_other_links, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_file_create_refuses_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_create_directories, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_create_device_opened_as_is, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_open_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_create_root_refuses_foreign_dir, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("core/file", tests, NULL, NULL);
}
