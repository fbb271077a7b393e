/* SPDX-License-Identifier: BSD-3-Clause */
/* Creating output files safely (see auxcap/file.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "auxcap/file.h"

__attribute__((format(printf, 4, 5))) static int fail(char *buf, size_t size, int err,
						       const char *fmt, ...)
{
	va_list ap;

	if (buf && size) {
		va_start(ap, fmt);
		vsnprintf(buf, size, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* Split @path into its directory (into @dir) and its last component (returned). */
static const char *split(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		snprintf(dir, len, ".");
		return path;
	}
	if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
	return slash + 1;
}

int auxcap_file_create(const char *path, enum auxcap_file_mode mode, char *errbuf,
		       size_t errbuf_size)
{
	char dir[PATH_MAX], old[NAME_MAX + 8];
	const char *base;
	struct stat st;
	int dfd, fd, r;

	if (!path || !*path)
		return fail(errbuf, errbuf_size, -EINVAL, "no output file name given");
	if (mode != AUXCAP_FILE_EXCL && mode != AUXCAP_FILE_KEEP_OLD && mode != AUXCAP_FILE_REPLACE)
		return fail(errbuf, errbuf_size, -EINVAL, "bad file creation mode %d", (int)mode);
	if (strlen(path) >= sizeof(dir))
		return fail(errbuf, errbuf_size, -ENAMETOOLONG, "output path too long: '%.64s...'",
			    path);
	base = split(path, dir, sizeof(dir));
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return fail(errbuf, errbuf_size, -EISDIR,
			    "'%s' names a directory; give a file name, e.g. '%s%sauxcap.data'",
			    path, path, *base ? "/" : "");
	if (strlen(base) > NAME_MAX)
		return fail(errbuf, errbuf_size, -ENAMETOOLONG, "file name too long in '%s'", path);

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		r = -errno;
		return fail(errbuf, errbuf_size, r, "cannot write '%s': its directory '%s': %s",
			    path, dir, strerror(-r));
	}
	if (fstat(dfd, &st) < 0) {
		r = -errno;
		fail(errbuf, errbuf_size, r, "cannot write '%s': its directory '%s': %s", path,
		     dir, strerror(-r));
		goto out;
	}
	if (geteuid() == 0 && st.st_uid != 0) {
		r = fail(errbuf, errbuf_size, -EPERM,
			 "refusing to write '%s' as root into directory '%s' owned by uid %u (that "
			 "user could swap the file for a link to one of root's); write into a "
			 "directory root owns (e.g. /root/%s) or run as uid %u",
			 path, dir, (unsigned int)st.st_uid, base, (unsigned int)st.st_uid);
		goto out;
	}

	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode)) {
			r = fail(errbuf, errbuf_size, -ELOOP,
				 "'%s' is a symbolic link; auxcap does not write through links: give "
				 "the real path, or remove the link",
				 path);
			goto out;
		}
		if (S_ISDIR(st.st_mode)) {
			r = fail(errbuf, errbuf_size, -EISDIR,
				 "'%s' is a directory; give a file name, e.g. '%s/auxcap.data'", path,
				 path);
			goto out;
		}
		if (mode == AUXCAP_FILE_EXCL) {
			r = fail(errbuf, errbuf_size, -EEXIST, "'%s' exists; remove it or choose "
							       "another name", path);
			goto out;
		}
		if (!S_ISREG(st.st_mode)) {
			/* A device or FIFO (e.g. /dev/null): write to it as it is. */
			fd = openat(dfd, base, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
			r = fd < 0 ? -errno : fd;
			if (r < 0)
				fail(errbuf, errbuf_size, r, "cannot write '%s': %s", path,
				     strerror(-r));
			goto out;
		}
		if (mode == AUXCAP_FILE_KEEP_OLD) {
			snprintf(old, sizeof(old), "%s.old", base);
			if (renameat(dfd, base, dfd, old) < 0) {
				r = -errno;
				fail(errbuf, errbuf_size, r, "cannot keep the existing '%s' as '%s.old': %s",
				     path, path, strerror(-r));
				goto out;
			}
		} else if (unlinkat(dfd, base, 0) < 0) {
			r = -errno;
			fail(errbuf, errbuf_size, r, "cannot replace '%s': %s", path, strerror(-r));
			goto out;
		}
	} else if (errno != ENOENT) {
		r = -errno;
		fail(errbuf, errbuf_size, r, "cannot write '%s': %s", path, strerror(-r));
		goto out;
	}

	fd = openat(dfd, base, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = -errno;
		if (r == -EEXIST)
			fail(errbuf, errbuf_size, r, "'%s' appeared while auxcap was creating it; "
						     "refusing to write into it", path);
		else
			fail(errbuf, errbuf_size, r, "cannot write '%s': %s", path, strerror(-r));
		goto out;
	}
	r = fd;
out:
	close(dfd);
	return r;
}

int auxcap_file_open_regular(const char *path)
{
	struct stat st;
	int fd;

	if (!path)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		(void)close(fd);
		return -EINVAL;
	}
	return fd;
}

int auxcap_file_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf, *end = p + len;

	while (p < end) {
		ssize_t n = write(fd, p, (size_t)(end - p));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
	}
	return 0;
}
