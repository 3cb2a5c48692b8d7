// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Opening a rule file so that what is read is what was checked. The path is
 * walked one name at a time from "/" with openat(O_PATH | O_NOFOLLOW), so no
 * name is looked up twice and no symbolic link is followed behind our back:
 *  - every directory passed must belong to root or to the uid the file is
 *    read for, and be writable by its owner only, or else have the sticky
 *    bit and belong to root (as /tmp): there only an entry's owner may
 *    rename or remove the entry, and every entry we use (directory, link,
 *    file) must itself belong to root or that uid. A directory others can
 *    write lets them put another file, or a link to one, under the name;
 *  - a symbolic link is followed only if it belongs to root or that uid
 *    (who chose where it points; as fs.protected_symlinks), and the walk
 *    goes on from where it points, with the same checks;
 *  - the file itself must be a regular file, opened without following a
 *    link, and must not live on a kernel pseudo file system: /proc and /sys
 *    files are regular but their size is 0 or a page, whatever they hold.
 * RULES_PERM_WARN turns the ownership and mode findings into warnings (vsctl
 * check); RULES_NO_PERM_CHECK skips them. A file that is not a regular file
 * is refused in every mode: it is not a rule file.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/util.h"
#include "ctx.h"

#define LINKS_MAX	40	/* as the kernel's path walk (ELOOP) */

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC	0x63677270
#endif
#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC		0x74726163
#endif
#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC		0xcafe4a11
#endif

/* File systems whose files the kernel makes up as they are read. */
static const struct {
	unsigned long	 type;
	const char	*name;
} pseudo_fs[] = {
	{ PROC_SUPER_MAGIC, "/proc (procfs)" },
	{ SYSFS_MAGIC, "/sys (sysfs)" },
	{ CGROUP_SUPER_MAGIC, "a cgroup file system" },
	{ CGROUP2_SUPER_MAGIC, "a cgroup file system" },
	{ DEBUGFS_MAGIC, "debugfs" },
	{ TRACEFS_MAGIC, "tracefs" },
	{ SECURITYFS_MAGIC, "securityfs" },
	{ BPF_FS_MAGIC, "bpffs" },
};

static int
trusted(const struct rules_ctx *c, uid_t uid)
{
	return uid == 0 || uid == c->owner;
}

/*
 * A finding about the ownership or mode of something on the path: a warning
 * with RULES_PERM_WARN, else an error that refuses the file.
 */
static int
perm_finding(struct rules_ctx *c, const struct rules_loc *from, const char *path,
	     const char *what)
{
	if (c->flags & RULES_PERM_WARN) {
		buf_printf(c->errs, "%s: warning: %s: vsd refuses to apply a rule file others "
			   "could replace\n", path, what);
		return 0;
	}
	file_err(c, from, path, "refused: %s; others could replace the file", what);
	return -EPERM;
}

static int
check_dir(struct rules_ctx *c, const struct rules_loc *from, const char *path,
	  const char *dir, const struct stat *st)
{
	char what[PATH_MAX + 100];
	mode_t m = st->st_mode;

	if (c->flags & RULES_NO_PERM_CHECK)
		return 0;
	if (!trusted(c, st->st_uid)) {
		snprintf(what, sizeof(what), "directory %s belongs to uid %u", dir,
			 (unsigned)st->st_uid);
		return perm_finding(c, from, path, what);
	}
	if ((m & (S_IWGRP | S_IWOTH)) && !((m & S_ISVTX) && st->st_uid == 0)) {
		snprintf(what, sizeof(what), "directory %s is %s (mode %04o)", dir,
			 (m & S_IWGRP) && (m & S_IWOTH) ? "group- and world-writable" :
			 m & S_IWGRP ? "group-writable" : "world-writable",
			 (unsigned)(m & 07777));
		return perm_finding(c, from, path, what);
	}
	return 0;
}

static int
check_link(struct rules_ctx *c, const struct rules_loc *from, const char *path,
	   const char *link, const struct stat *st)
{
	char what[PATH_MAX + 100];

	if ((c->flags & RULES_NO_PERM_CHECK) || trusted(c, st->st_uid))
		return 0;
	snprintf(what, sizeof(what), "symbolic link %s belongs to uid %u", link,
		 (unsigned)st->st_uid);
	return perm_finding(c, from, path, what);
}

/* walked: the directories passed so far, for messages; name appended or "..". */
static void
walk_name(char *walked, const char *name)
{
	size_t n = strlen(walked);
	char *slash;

	if (strcmp(name, "..") == 0) {
		if (n > 1 && (slash = strrchr(walked, '/')))
			slash[slash == walked ? 1 : 0] = '\0';
		return;
	}
	snprintf(walked + n, PATH_MAX - n, "%s%s", n > 1 ? "/" : "", name);
}

static int
open_root(struct rules_ctx *c, const struct rules_loc *from, const char *path, char *walked)
{
	struct stat st;
	int fd, r;

	strcpy(walked, "/");
	if ((fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		file_err(c, from, path, "cannot open /: %s", strerror(-r));
		if (fd >= 0)
			close(fd);
		return r;
	}
	if ((r = check_dir(c, from, path, walked, &st)) < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* The last name: a regular file, opened for reading, and the same inode. */
static int
open_last(struct rules_ctx *c, const struct rules_loc *from, const char *path, int dfd,
	  const char *name, const struct stat *seen, struct stat *st)
{
	struct statfs sf;
	size_t i;
	int fd, r;

	if (!S_ISREG(seen->st_mode)) {
		file_err(c, from, path, "not a regular file");
		return -EINVAL;
	}
	/* O_NONBLOCK: should it have become a FIFO, it must not hang the loader */
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, st) < 0 || fstatfs(fd, &sf) < 0) {
		r = -errno;
		file_err(c, from, path, "cannot open: %s", strerror(-r));
		if (fd >= 0)
			close(fd);
		return r;
	}
	if (st->st_dev != seen->st_dev || st->st_ino != seen->st_ino) {
		file_err(c, from, path, "replaced while it was being opened");
		close(fd);
		return -EAGAIN;
	}
	for (i = 0; i < sizeof(pseudo_fs) / sizeof(pseudo_fs[0]); i++) {
		if ((unsigned long)sf.f_type == pseudo_fs[i].type) {
			file_err(c, from, path, "not a rule file: it is on %s, whose files the "
				 "kernel makes up as they are read", pseudo_fs[i].name);
			close(fd);
			return -EINVAL;
		}
	}
	return fd;
}

int
open_rule_file(struct rules_ctx *c, const struct rules_loc *from, const char *path,
	       struct stat *st)
{
	char rest[PATH_MAX], walked[PATH_MAX], target[PATH_MAX], name[NAME_MAX + 1];
	const char *p;
	char *abs;
	struct stat s;
	int dfd, fd, links = 0, r;

	/* a relative name is relative to the working directory, whose parents count too */
	if (!(abs = path_absolute(path)) || strlen(abs) >= sizeof(rest)) {
		r = !abs ? (errno == ERANGE ? -ENAMETOOLONG : -errno) : -ENAMETOOLONG;
		file_err(c, from, path, "cannot open: %s", strerror(-r));
		free(abs);
		return r;
	}
	strcpy(rest, abs);
	free(abs);
	if ((dfd = open_root(c, from, path, walked)) < 0)
		return dfd;
	p = rest;
	for (;;) {
		size_t n;
		int last;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 0) {		/* "/" or a name ending in "/" */
			file_err(c, from, path, "not a regular file");
			r = -EINVAL;
			break;
		}
		if (n > NAME_MAX) {
			r = -ENAMETOOLONG;
			file_err(c, from, path, "cannot open: %s", strerror(-r));
			break;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		p += n;
		last = *p == '\0';	/* "file/" is not the file: ENOTDIR */
		if (strcmp(name, ".") == 0 && !last)
			continue;
		if ((fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
		    fstat(fd, &s) < 0) {
			r = -errno;
			file_err(c, from, path, "cannot open: %s", strerror(-r));
			if (fd >= 0)
				close(fd);
			break;
		}
		if (S_ISLNK(s.st_mode)) {
			ssize_t len;

			walk_name(walked, name);
			r = check_link(c, from, path, walked, &s);
			walk_name(walked, "..");
			if (r == 0 && ++links > LINKS_MAX) {
				r = -ELOOP;
				file_err(c, from, path, "cannot open: %s", strerror(-r));
			}
			len = r < 0 ? 0 : readlinkat(fd, "", target, sizeof(target));
			close(fd);
			if (r < 0)
				break;
			if (len < 0 || (size_t)len >= sizeof(target)) {
				r = len < 0 ? -errno : -ENAMETOOLONG;
				file_err(c, from, path, "cannot read the link %s/%s: %s", walked,
					 name, strerror(-r));
				break;
			}
			target[len] = '\0';
			/* what is left of the path now follows where the link points */
			if ((size_t)len + strlen(p) >= sizeof(rest)) {
				r = -ENAMETOOLONG;
				file_err(c, from, path, "cannot open: %s", strerror(-r));
				break;
			}
			memmove(rest + len, p, strlen(p) + 1);
			memcpy(rest, target, (size_t)len);
			p = rest;
			if (target[0] == '/') {
				close(dfd);
				if ((dfd = open_root(c, from, path, walked)) < 0)
					return dfd;
			}
			continue;
		}
		if (S_ISDIR(s.st_mode) && !last) {
			walk_name(walked, name);
			if ((r = check_dir(c, from, path, walked, &s)) < 0) {
				close(fd);
				break;
			}
			close(dfd);
			dfd = fd;
			continue;
		}
		close(fd);
		if (!last) {
			r = -ENOTDIR;
			file_err(c, from, path, "cannot open: %s", strerror(-r));
			break;
		}
		r = open_last(c, from, path, dfd, name, &s, st);
		break;
	}
	close(dfd);
	return r;
}
