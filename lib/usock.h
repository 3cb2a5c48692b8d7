/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unix sockets only root (or one group) may use: vsd's control socket, vsd-gate's status socket. */
#ifndef VSD_USOCK_H
#define VSD_USOCK_H

#include <sys/socket.h>
#include <sys/types.h>

/*
 * Bind and listen on a non-blocking stream socket at path (whatever is there
 * is replaced): mode 0600 whatever the umask, or 0660 with group if group is
 * not (gid_t)-1. Returns the socket, or -errno (logged).
 */
int usock_listen(const char *path, gid_t group, int backlog);
/*
 * 1 if the peer on fd may talk to us: root, our own uid, or a member of
 * group (primary or supplementary, SO_PEERGROUPS) if group is not (gid_t)-1.
 * *cr gets the peer's credentials (SO_PEERCRED); uid (uid_t)-1 if unknown.
 */
int usock_peer_allowed(int fd, gid_t group, struct ucred *cr);

#endif
