// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The listeners the gate serves: which socket a caller's descriptor is
 * (cached per thread, checked with kcmp()), registering a new one (and its
 * fast path), and dropping our dup once the service no longer has it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "gate.h"

static pid_t self_pid;		/* for kcmp(), once: no getpid() per accept */

static void listener_note_local(struct gated_listener *l);
static void forget_listener(struct service_thread *th, void *l);

void
listener_init(void)
{
	self_pid = getpid();
}

struct gated_listener *
listener_get(struct gate *g, struct service_thread *th, int fd, int *not_ours)
{
	struct gated_listener *l;
	int sfd, fresh, moved = 0;

	*not_ours = 1;
	/* fast path: the same fd as last time, still the same file (one kcmp
	 * instead of pidfd_getfd + fstat + close); not even that when the
	 * listener's ring has just shown the thread's last accept taking a
	 * connection of this listener (fastpath.c, "the listener's identity") */
	if (th->last_l && th->last_fd == fd) {
		int seen = th->fd_seen && th->fd_seen == fp_listener_id(th->last_l);

		th->fd_seen = 0;
		if (seen || syscall(SYS_kcmp, th->tid, self_pid, KCMP_FILE, fd, th->last_l->fd) == 0) {
			th->fd_unseen = 0;
			*not_ours = 0;
			return th->last_l;
		}
		/* the number names another file now: its last accept, let
		 * through with no record seen, may have gone to that file */
		moved = th->fd_unseen;
	}
	th->fd_seen = 0;
	th->fd_unseen = 0;
	if ((sfd = pidfd_getfd(th->pidfd, fd, 0)) < 0)	/* Linux 5.6 */
		return NULL;	/* bad fd: the kernel will say EBADF */
	if (!(l = listener_of(g, sfd, 0, &fresh)))
		return NULL;
	/* that accept's record, if it took one of l's, is yet to be read: it
	 * counts it, as fd_moved and outside, and logs it (fp-model.c). A
	 * listener off the fast path writes no records: it may have, which
	 * is all we can count (fd_moved) */
	if (moved) {
		th->fd_moved_to = fp_listener_id(l);
		if (!th->fd_moved_to)
			g->fp_fd_moved++;
	}
	*not_ours = 0;
	th->last_fd = fd;
	th->last_l = l;
	return l;
}

/*
 * The gated listener that sfd (our dup of a service's descriptor) is, known
 * or new (*fresh); NULL if it is no listener we gate. sfd is the
 * listener's own descriptor then, or closed. before_listen: a TCP socket
 * that is about to listen (handle_listen()).
 */
struct gated_listener *
listener_of(struct gate *g, int sfd, int before_listen, int *fresh)
{
	struct gated_listener *l;
	struct stat st;
	int one = 0, dom;
	socklen_t sl = sizeof(int);

	*fresh = 0;
	if (fstat(sfd, &st) < 0 || !S_ISSOCK(st.st_mode))
		goto pass;
	/* cached by inode; our dup keeps the socket, so the inode is not reused */
	for (l = g->listeners; l; l = l->next)
		if (l->ino == st.st_ino && l->dev == st.st_dev) {
			close(sfd);
			return l;
		}
	if (!before_listen && (getsockopt(sfd, SOL_SOCKET, SO_ACCEPTCONN, &one, &sl) < 0 || !one))
		goto pass;
	if (!(dom = listener_family(sfd)))
		goto pass;
	if (!(l = listen_new(sfd, st.st_dev, st.st_ino)))
		goto pass;
	l->family = dom;
	listener_note_local(l);
	fp_attach(g, l);
	l->next = g->listeners;
	g->listeners = l;
	*fresh = 1;
	return l;
pass:
	close(sfd);
	return NULL;
}

/*
 * The listeners we gate: TCP over IPv4 or IPv6, and Unix stream sockets
 * (what PHP-FPM listens on in Debian's pools). Returns the family, 0 for
 * anything else (UDP cannot listen; SOCK_SEQPACKET Unix listeners, SCTP,
 * vsock ... go through unchanged).
 */
int
listener_family(int fd)
{
	int dom = 0, type = 0, proto = 0;
	socklen_t sl = sizeof(int);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &sl) < 0)
		return 0;
	sl = sizeof(int);
	if (dom == AF_UNIX)
		return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &sl) == 0 &&
		    type == SOCK_STREAM ? AF_UNIX : 0;
	if (dom != AF_INET && dom != AF_INET6)
		return 0;
	return getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &sl) == 0 &&
	    proto == IPPROTO_TCP ? dom : 0;
}

/* A listener bound to one address (not INADDR_ANY / in6addr_any): remember it. */
static void
listener_note_local(struct gated_listener *l)
{
	socklen_t sl = sizeof(l->local);

	l->local_len = 0;
	if (getsockname(l->fd, (struct sockaddr *)&l->local, &sl) < 0)
		return;
	if (l->local.ss_family == AF_INET &&
	    ((struct sockaddr_in *)&l->local)->sin_addr.s_addr != htonl(INADDR_ANY))
		l->local_len = sl;
	else if (l->local.ss_family == AF_INET6 &&
	    !IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&l->local)->sin6_addr))
		l->local_len = sl;
}

/* Is the socket bound to a port (not one that listen() is to choose)? */
int
listener_port_bound(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return 0;
	if (ss.ss_family == AF_INET)
		return ((struct sockaddr_in *)&ss)->sin_port != 0;
	return ss.ss_family == AF_INET6 && ((struct sockaddr_in6 *)&ss)->sin6_port != 0;
}

/* The TCP port of a socket address, network order; 0 for anything else. */
static in_port_t
addr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_port;
	return ss->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)ss)->sin6_port : 0;
}

/*
 * The service binds a socket to addr: our dups of listeners on its port
 * that the service no longer has (listener_in_use()) and that hold nothing
 * for it are dropped now rather than at the tick's 5 s, so that the port
 * is free for its new listener, and so is the port's registration.
 */
void
listener_release_port(struct gate *g, const struct sockaddr_storage *addr)
{
	struct gated_listener *l, **pl;
	in_port_t port = addr_port(addr);

	if (!port)
		return;
	for (pl = &g->listeners; (l = *pl);) {
		if (l->family != AF_UNIX && addr_port(&l->local) == port &&
		    !l->wait_head && !l->queued && !l->held && !listener_in_use(l)) {
			*pl = l->next;
			listener_drop(l);
			continue;
		}
		pl = &l->next;
	}
}

/* Forget l, registered for a listen() that failed. */
void
listener_unlink(struct gate *g, struct gated_listener *l)
{
	struct gated_listener **pl;

	for (pl = &g->listeners; *pl; pl = &(*pl)->next)
		if (*pl == l) {
			*pl = l->next;
			listener_drop(l);
			return;
		}
}

/*
 * Until a thread accepts on l, the listener_in_use() test has no thread to
 * ask: l is kept while the one that listened still has it at fd (held by
 * a pidfd of its own, since th may be forgotten).
 */
void
listener_own(struct gated_listener *l, const struct service_thread *th, int fd)
{
	if (l->owner_pidfd >= 0)
		return;
	if ((l->owner_pidfd = fcntl(th->pidfd, F_DUPFD_CLOEXEC, 3)) >= 0)
		l->owner_fd = fd;
}

static void
forget_listener(struct service_thread *th, void *l)
{
	if (th->last_l == l)
		th->last_l = NULL;
}

struct in_use {
	const struct gated_listener *l;
	int any;	/* whichever listener the thread last accepted on */
	int yes;
};

static void
in_use_by(struct service_thread *th, void *arg)
{
	struct in_use *u = arg;

	if (!u->yes && (u->any || th->last_l == u->l) &&
	    syscall(SYS_kcmp, th->tid, self_pid, KCMP_FILE, th->last_fd, u->l->fd) == 0)
		u->yes = 1;
}

/* The thread that listened on l still has it at that number. */
static int
owner_has(struct gated_listener *l)
{
	struct stat st;
	int sfd, yes = 0;

	if (l->owner_pidfd < 0)
		return 0;
	if ((sfd = pidfd_getfd(l->owner_pidfd, l->owner_fd, 0)) >= 0) {
		yes = fstat(sfd, &st) == 0 && st.st_ino == l->ino && st.st_dev == l->dev;
		close(sfd);
	}
	if (!yes) {	/* gone, or that number names another file now */
		close(l->owner_pidfd);
		l->owner_pidfd = -1;
	}
	return yes;
}

/*
 * Does a thread that accepted on l still have it at that descriptor? Then
 * l is the service's still, however long ago its last accept came: the
 * thread may be serving a long request, or waiting in the kernel's accept
 * (fastpath.c), and a listener dropped meanwhile would lose its socket
 * gate registration, so connections queued then would go unrecorded and
 * be served at home. So does the thread that listened on it
 * (listener_own()), which may not have accepted yet. And so does a thread
 * that has l at the number it last accepted another listener on: the
 * service put l there (dup2), and the thread may wait on it in the
 * kernel's accept, taken for the other one until its next accept
 * (fastpath.c, "the listener's identity"), while l's own number is closed.
 * That last look asks every thread, so it comes only when the others
 * found nothing, for a listener about to be dropped.
 */
int
listener_in_use(struct gated_listener *l)
{
	struct in_use u = { l, 0, 0 };

	thread_foreach(in_use_by, &u);
	if (u.yes || owner_has(l))
		return 1;
	u.any = 1;
	thread_foreach(in_use_by, &u);
	return u.yes;
}

void
listener_drop(struct gated_listener *l)
{
	fp_detach(l);
	thread_foreach(forget_listener, l);
	listen_free(l);
}
