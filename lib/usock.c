// SPDX-License-Identifier: GPL-2.0-or-later
/* Unix sockets only root (or one group) may use; see usock.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "usock.h"

int
usock_listen(const char *path, gid_t group, int backlog)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, r;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_warnx("socket path %s is too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return -errno;
	/* Only ever a stale socket: a mistyped path must not cost a file. */
	if ((r = unlink_socket(path)) < 0) {
		if (r == -ENOTSOCK)
			log_warnx("%s exists and is not a socket; not removing it", path);
		else
			log_warnx("cannot remove the stale socket %s: %s", path, strerror(-r));
		goto fail;
	}
	/* The mode comes from the umask at bind: never a moment wider than
	 * 0600, or 0660 with our own (root's) group until the chown. */
	old = umask(group != (gid_t)-1 ? 0117 : 0177);
	r = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (r < 0) {
		r = -errno;
		log_warn("bind %s", path);
		goto fail;
	}
	/* fchown on a socket does not reach the file: the path it is, with no
	 * link followed should another have been put there since the bind */
	if (group != (gid_t)-1 && fchownat(AT_FDCWD, path, (uid_t)-1, group, AT_SYMLINK_NOFOLLOW) < 0) {
		r = -errno;
		log_warn("chown %s", path);
		goto fail;
	}
	if (listen(fd, backlog) < 0) {
		r = -errno;
		log_warn("listen %s", path);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return r;
}

int
usock_peer_allowed(int fd, gid_t group, struct ucred *cr)
{
	socklen_t len = sizeof(*cr);
	gid_t groups[256];
	size_t i;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cr, &len) < 0) {
		cr->uid = (uid_t)-1;
		cr->pid = 0;
		return 0;
	}
	if (cr->uid == 0 || cr->uid == geteuid())
		return 1;
	if (group == (gid_t)-1)
		return 0;
	if (cr->gid == group)
		return 1;
	len = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)	/* Linux 4.13 */
		return 0;
	for (i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == group)
			return 1;
	return 0;
}
