// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Opening files with a client's permissions (privs.h): the file-system ids
 * and supplementary groups of the calling thread only. The raw system
 * calls: glibc's setgroups() sets them in every thread of the process
 * (POSIX), and vsd's other threads must keep root's.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "privs.h"

int
privs_from_peer(int fd, struct privs_user *u)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	memset(u, 0, sizeof(*u));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return -errno;
	u->uid = cr.uid;
	u->gid = cr.gid;
	len = sizeof(u->groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, u->groups, &len) < 0)	/* Linux 4.13 */
		return errno == ERANGE ? -E2BIG : -errno;
	u->ngroups = (int)(len / sizeof(gid_t));
	return 0;
}

static long
set_fsuid(uid_t uid)
{
	return syscall(SYS_setfsuid, uid);
}

static long
set_fsgid(gid_t gid)
{
	return syscall(SYS_setfsgid, gid);
}

int
privs_fs_enter(const struct privs_user *u, struct privs_fs_saved *s)
{
	int n;

	s->uid = (uid_t)set_fsuid((uid_t)-1);	/* -1: only says the current one */
	s->gid = (gid_t)set_fsgid((gid_t)-1);
	if ((n = getgroups(PRIVS_GROUPS_MAX, s->groups)) < 0)
		return -errno;
	s->ngroups = n;
	if (syscall(SYS_setgroups, (size_t)u->ngroups, u->groups) < 0)
		return -errno;
	set_fsgid(u->gid);
	/* a change of the fsuid from 0 clears CAP_DAC_OVERRIDE and the other
	 * file capabilities from the effective set; back to 0 restores them */
	set_fsuid(u->uid);
	if ((uid_t)set_fsuid((uid_t)-1) != u->uid || (gid_t)set_fsgid((gid_t)-1) != u->gid) {
		privs_fs_leave(s);
		return -EPERM;
	}
	return 0;
}

void
privs_fs_leave(const struct privs_fs_saved *s)
{
	set_fsuid(s->uid);
	set_fsgid(s->gid);
	syscall(SYS_setgroups, (size_t)s->ngroups, s->groups);
}
