/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Running a service as a user, and keeping only the capabilities a process
 * uses. No libcap: capget/capset and prctl are enough for what we do.
 *
 * Root inside a VS can leave it: a process with CAP_SYS_ADMIN (or simply
 * uid 0, which owns the cgroup files) in the init namespaces can write its
 * PID into any cgroup.procs or tasks file. A VS insulates what runs in it
 * only when that runs as another user: hence --user.
 */
#ifndef VSD_PRIVS_H
#define VSD_PRIVS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PRIVS_NAME_MAX	32	/* useradd's limit */
#define PRIVS_GROUPS_MAX 256

/* A user resolved once, so that a forked child needs no NSS lookup. */
struct privs_user {
	char	 user[PRIVS_NAME_MAX + 1];
	char	 group[PRIVS_NAME_MAX + 1];
	uid_t	 uid;
	gid_t	 gid;
	int	 ngroups;		/* the user's supplementary groups (initgroups) */
	gid_t	 groups[PRIVS_GROUPS_MAX];
};

/*
 * 1 if s can be a user or group name: [A-Za-z0-9_][A-Za-z0-9_.-]* with an
 * optional trailing $, at most PRIVS_NAME_MAX; or a decimal id.
 */
int privs_name_valid(const char *s);

/*
 * Resolve user (a name or a number) and group (NULL: the user's primary
 * group). 0, or -errno with a message in err: -EINVAL for a bad name,
 * -ENOENT for an unknown user or group.
 */
int privs_resolve(const char *user, const char *group, struct privs_user *u,
		  char *err, size_t errlen);

/*
 * Become u, for good: drop every capability from the bounding set (while we
 * still may), set the supplementary groups, the gid and the uid (real,
 * effective, saved), set no_new_privs, and check that no capability is
 * left in any set. For a forked child: no allocation, no NSS. 0, or -errno
 * with what failed in err.
 */
int privs_become(const struct privs_user *u, char *err, size_t errlen);

/*
 * Keep only the capabilities in keep (a mask of 1ull << CAP_*) in the
 * effective, permitted, inheritable, ambient and bounding sets. 0 or -errno.
 */
int privs_keep(uint64_t keep);

/* The capabilities in the permitted set (1ull << CAP_*), or -errno. */
int privs_permitted(uint64_t *mask);

/*
 * A Unix socket's peer as a user (uid, gid and supplementary groups, from
 * SO_PEERCRED and SO_PEERGROUPS; no names), for privs_fs_enter(). 0 or -errno.
 */
int privs_from_peer(int fd, struct privs_user *u);

/*
 * Open files as u until privs_fs_leave(): the calling thread's file-system
 * uid and gid and its supplementary groups become u's (lib/privs-fs.c);
 * the real and effective ids, and every other thread, stay as they were.
 * So a root daemon reads a file for a client with no more than the
 * client's own permissions. 0, or -errno (nothing changed).
 */
struct privs_fs_saved {
	uid_t	 uid;
	gid_t	 gid;
	int	 ngroups;
	gid_t	 groups[PRIVS_GROUPS_MAX];
};
int privs_fs_enter(const struct privs_user *u, struct privs_fs_saved *s);
void privs_fs_leave(const struct privs_fs_saved *s);

#endif
