/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Creating output files safely.
 *
 * auxcap runs as root next to programs and users it does not trust, and writes captures that
 * hold their memory contents.  Every file it writes is created by auxcap_file_create():
 *
 *  - mode 0600 (the umask can only remove bits), owned by the caller;
 *  - created with O_CREAT | O_EXCL, so nothing that exists at the path is ever written
 *    through: an existing file is first moved aside or removed as the mode says, and a file
 *    that appears in between makes the call fail;
 *  - a symbolic link at the path is refused (-ELOOP), whatever the mode, and O_NOFOLLOW guards
 *    the open itself;
 *  - run as root, a directory owned by another user is refused (-EPERM): its owner could swap
 *    the entry between our checks and our writes, or read what we write;
 *  - the directory is opened once and every step is relative to that descriptor, so the
 *    checks and the creation see the same directory.
 */
#ifndef AUXCAP_FILE_H
#define AUXCAP_FILE_H

#include <stddef.h>

/** What to do with an existing file at the path (never with a symlink: that is refused). */
enum auxcap_file_mode {
	AUXCAP_FILE_EXCL = 1,	  /* fail with -EEXIST */
	AUXCAP_FILE_KEEP_OLD = 2, /* rename a regular file to PATH.old (as perf record does) */
	AUXCAP_FILE_REPLACE = 3,  /* remove a regular file (its hard links elsewhere stay) */
};

/**
 * Create @path for writing (O_RDWR) as described above.  An existing file that is not a
 * regular file (a character device such as /dev/null, a FIFO) is opened as it is with
 * AUXCAP_FILE_KEEP_OLD and AUXCAP_FILE_REPLACE.
 *
 * On failure a one-line message naming the path (and the directory) and the fix is written to
 * @errbuf (@errbuf_size bytes, may be 0); the caller's option names are not known here.
 *
 * Returns the new file descriptor (O_CLOEXEC; owned by the caller) on success.
 * Returns -EINVAL if @path is NULL or empty or @mode is unknown.
 * Returns -EEXIST if something exists at @path with AUXCAP_FILE_EXCL, or appeared while
 * creating it.
 * Returns -ELOOP if @path is a symbolic link.
 * Returns -EISDIR if @path is a directory (or ends in "/", ".", "..").
 * Returns -EPERM if running as root (euid 0) and the directory holding @path belongs to
 * another user.
 * Returns the errno of open/rename/unlink otherwise (-ENOENT for a missing directory,
 * -EACCES, -EROFS, -ENOSPC, ...).
 */
int auxcap_file_create(const char *path, enum auxcap_file_mode mode, char *errbuf,
		       size_t errbuf_size);

/**
 * Open @path for reading if it is a regular file: for files a capture names (binaries), where
 * a FIFO would make open() wait for a writer and a device would give reads that never end.
 *
 * Returns the file descriptor (O_CLOEXEC; owned by the caller), -EINVAL if @path is not a
 * regular file, or the errno of open() (-ENOENT, -EACCES, ...).
 */
int auxcap_file_open_regular(const char *path);

/**
 * Write the @len bytes at @buf to @fd, retrying short writes and EINTR.
 *
 * Returns 0, or the errno of write() (-ENOSPC, -EIO, ...; -EIO if it wrote nothing).
 */
int auxcap_file_write_all(int fd, const void *buf, size_t len);

#endif /* AUXCAP_FILE_H */
