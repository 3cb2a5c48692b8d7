// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Replacing a file as root in a directory someone else may own (the metrics
 * file in node_exporter's textfile directory, which belongs to prometheus),
 * so that nothing the directory's owner plants there is followed or
 * written:
 *  - the directory is opened once, without following a link, and every
 *    name below is looked up in it (openat, linkat, renameat);
 *  - the new file has no name while it is written (O_TMPFILE); it gets a
 *    random one (linkat, which never replaces a name) and is then renamed
 *    over the old file (rename replaces a link itself, never its target).
 *    Where the file system has no O_TMPFILE, the random name is created
 *    with O_CREAT | O_EXCL | O_NOFOLLOW, which fails on anything there;
 *  - the mode is set through the descriptor.
 * A directory anyone may write, without the sticky bit, is refused: there
 * any local user could replace or remove the file.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

int
dir_writers_ok(int dfd)
{
	struct stat st;

	if (fstat(dfd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
		return -EPERM;
	return 0;
}

const char *
dir_why(int r)
{
	static char buf[128];

	if (r == -EPERM)
		return " " DIR_UNSAFE_WHY;
	if (r == -ELOOP)
		return " is a symbolic link: root follows none to write there";
	snprintf(buf, sizeof(buf), ": %s", strerror(-r));
	return buf;
}

int
dir_open_nofollow(const char *dir)
{
	int dfd, r;

	struct stat st;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		/* O_DIRECTORY | O_NOFOLLOW on a link: ENOTDIR; say what it is */
		if (errno == ENOTDIR && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
			return -ELOOP;
		return -errno;
	}
	if ((r = dir_writers_ok(dfd)) < 0) {
		close(dfd);
		return r;
	}
	return dfd;
}

/* ".NAME.XXXXXXXXXXXXXXXX.tmp", random: no name the directory's owner can plant first. */
static int
tmp_name(char *buf, size_t len, const char *name)
{
	unsigned long long v;

	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		return -EIO;
	return path_fmt(buf, len, ".%s.%016llx.tmp", name, v);
}

static int
write_all(int fd, const char *data, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)n;
	}
	return 0;
}

/* A new file in dfd with no name (O_TMPFILE), or else under a random name
 * (*named); its descriptor, or -errno. */
static int
create_tmp(int dfd, const char *name, unsigned mode, char *tmp, size_t tmplen, int *named)
{
	int fd, r, tries;

	*named = 0;
	/* never wider than the owner's while it is written */
	if ((fd = openat(dfd, ".", O_WRONLY | O_TMPFILE | O_CLOEXEC, (mode_t)(mode & 0600))) >= 0)
		return fd;
	if (errno != EOPNOTSUPP && errno != EISDIR)	/* EISDIR: a kernel without it */
		return -errno;
	for (tries = 0; tries < 8; tries++) {
		if ((r = tmp_name(tmp, tmplen, name)) < 0)
			return r;
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    (mode_t)(mode & 0600));
		if (fd >= 0) {
			*named = 1;
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* Give the unnamed file fd a random name in dfd: linkat never replaces one. */
static int
link_tmp(int dfd, int fd, const char *name, char *tmp, size_t tmplen)
{
	char proc[64];
	int r, tries;

	if ((r = path_fmt(proc, sizeof(proc), "/proc/self/fd/%d", fd)) < 0)
		return r;
	for (tries = 0; tries < 8; tries++) {
		if ((r = tmp_name(tmp, tmplen, name)) < 0)
			return r;
		/* AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH before Linux 6.10 */
		if (linkat(AT_FDCWD, proc, dfd, tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int
write_file_replace_at(int dfd, const char *name, const char *data, size_t len,
		      unsigned mode, int sync)
{
	char tmp[4096];
	int fd, named, r;

	if ((r = dir_writers_ok(dfd)) < 0)
		return r;
	if ((fd = create_tmp(dfd, name, mode, tmp, sizeof(tmp), &named)) < 0)
		return fd;
	/* the umask must not narrow it: a reader of another user may need it */
	if ((r = write_all(fd, data, len)) == 0 && fchmod(fd, (mode_t)mode) < 0)
		r = -errno;
	if (r == 0 && sync && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && !named && (r = link_tmp(dfd, fd, name, tmp, sizeof(tmp))) == 0)
		named = 1;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r < 0) {
		if (named)
			unlinkat(dfd, tmp, 0);
		return r;
	}
	if (sync)
		fsync(dfd);
	return 0;
}

int
write_file_replace(const char *dir, const char *name, const char *data, size_t len,
		   unsigned mode, int sync)
{
	int dfd, r;

	if ((dfd = dir_open_nofollow(dir)) < 0)
		return dfd;
	r = write_file_replace_at(dfd, name, data, len, mode, sync);
	close(dfd);
	return r;
}
