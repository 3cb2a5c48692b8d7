// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One accept()/accept4() notification, with the semantics of the real call:
 *
 * - not a TCP or Unix stream listening socket (or not a socket): the
 *   kernel runs the call unchanged (SECCOMP_USER_NOTIF_FLAG_CONTINUE is
 *   safe here: we make no security decision, only a scheduling one);
 * - a connection is queued: it is handed over at once;
 * - nothing queued, O_NONBLOCK listener: EAGAIN;
 * - nothing queued, blocking: the notification stays pending (the caller
 *   blocks, the supervisor does not) and is answered when the listener
 *   becomes readable; many callers can wait at once, served in arrival order;
 * - a signal: the kernel drops the notification and the caller gets EINTR or
 *   restarts; if that races with our hand-over, ADDFD fails with ENOENT and
 *   the connection goes back to the HEAD of its queue. Nothing is lost, and
 *   nothing is handed over twice, because an accepted fd lives in exactly one
 *   place: a queue, or (after ADDFD succeeded) the service.
 * - a client that disconnected while queued is closed, not handed over.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "gate.h"
#include "profile.h"
#include "lib/log.h"

#define GATE_REFRESH_MS		2000	/* a --vs-table file is read this often */
#define GATE_REFRESH_MIN_MS	200	/* at most this often unless forced */
#define GATE_IDLE_HOME_MS	100	/* a thread waiting this long goes home */
#define GATE_LISTEN_GC_MS	5000	/* drop our dup of an unused listener */
#define GATE_ACTIVE_NS		10000000000ull	/* keep sampling a VS 10 s after its last connection */
#define GATE_BUSY_NS		1000000000ull	/* tick every 10 ms for 1 s after a connection */

static struct seccomp_notif *req;
static struct seccomp_notif_resp *resp;
static size_t req_size;
static uint32_t native_arch;
static pid_t self_pid;		/* for kcmp(), once: no getpid() per accept */

/*
 * The per-accept path, top to bottom: gate_notify() takes one notification;
 * an accept goes to handle_accept(), which finds the listener, drains the
 * kernel queue into the per-VS queues (drain, classify), picks the best
 * queue (pick) and hands the connection over (handover, rebind); callers
 * that must wait are served when the listener becomes readable
 * (gate_listener_ready). Housekeeping (init, refresh, the tick) comes last.
 */
static void handle_accept(struct gate *g, int is_accept4);
static struct gated_listener *listener_get(struct gate *g, struct service_thread *th, int fd, int *not_ours);
static struct gated_listener *listener_of(struct gate *g, int sfd, int before_listen, int *fresh);
static int port_bound(int fd);
static void listener_unlink(struct gate *g, struct gated_listener *l);
static int listener_family(int fd);
static void listener_note_local(struct gated_listener *l);
static void serve_waiters(struct gate *g, struct gated_listener *l);
static void listener_ready(struct gate *g, struct gated_listener *l, int fast);
static void drain(struct gate *g, struct gated_listener *l);
static int readable(int fd);
static struct queued_conn *pick(struct gate *g, struct gated_listener *l);
static int conn_dead(struct queued_conn *c);
static int handover(struct gate *g, struct pending_accept *w, struct queued_conn *c);
static struct gate_vs *rebind(struct gate *g, struct service_thread *th, struct queued_conn *c);
static int copy_peer(struct pending_accept *w, struct queued_conn *c);
static void respond(struct gate *g, uint64_t id, int error, uint32_t flags);
static void let_through(struct gate *g, uint64_t id);
static int id_valid(struct gate *g, uint64_t id);
static void waiter_del(struct gate *g, struct pending_accept *w);
static void handle_socket(struct gate *g);
static void handle_listen(struct gate *g);
static void listener_own(struct gated_listener *l, const struct service_thread *th, int fd);
static void tick_waiters(struct gate *g, struct gated_listener *l, uint64_t now);
static void forget_listener(struct service_thread *th, void *l);
static void drop_listener(struct gated_listener *l);
static int listener_in_use(struct gated_listener *l);

int
gate_notify(struct gate *g)
{
	memset(req, 0, req_size);
	PROF_BEGIN();
	int rr = ioctl(g->notify_fd, SECCOMP_IOCTL_NOTIF_RECV, req);
	PROF_MARK(PROF_RECV);
	if (rr < 0) {
		if (errno == EINTR || errno == ENOENT)
			return 0;	/* the caller went away before we read it */
		return -errno;
	}
	if (refuse_wanted(req, native_arch)) {
		refuse_call(g, req, native_arch);
		return 0;
	}
	switch (req->data.nr) {
	case SYS_accept:
		handle_accept(g, 0);
		break;
	case SYS_accept4:
		handle_accept(g, 1);
		break;
	case SYS_socket:
		handle_socket(g);
		break;
	case SYS_listen:
		handle_listen(g);
		break;
	default:
		let_through(g, req->id);
	}
	return 0;
}

static void
handle_accept(struct gate *g, int is_accept4)
{
	struct pending_accept *w;
	struct service_thread *th;
	struct gated_listener *l;
	int is_new, not_ours, fl, tried;
	int flags = is_accept4 ? (int)req->data.args[3] : 0;

	PROF_BEGIN();
	th = thread_get((pid_t)req->pid, &is_new);
	PROF_MARK(PROF_THREAD);
	if (!th) {
		let_through(g, req->id);	/* it is gone; SEND says ENOENT */
		return;
	}
	/* the pidfd was opened after the notification: is it still that thread? */
	if (is_new && !id_valid(g, req->id))
		return;
	if (th->waiter)		/* it was interrupted; a thread waits once */
		waiter_del(g, th->waiter);
	if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) {
		respond(g, req->id, -EINVAL, 0);
		return;
	}
	if (th->fp_id || th->direct_l)	/* before listener_get: it may confirm th's listener */
		fp_thread_settle(g, th);
	l = listener_get(g, th, (int)req->data.args[0], &not_ours);
	PROF_MARK(PROF_LISTENER);
	if (!l || not_ours) {
		let_through(g, req->id);
		return;
	}
	tried = l->fp && !l->wait_head;	/* fp_accept() tries only then */
	PROF_RESTART();
	if (l->fp && fp_accept(g, l, th, req->id)) {
		PROF_MARK(PROF_FAST);
		l->last_use = now_ns();
		pmqos_note(g, l->last_use);
		return;
	}
	if (!(w = calloc(1, sizeof(*w)))) {
		respond(g, req->id, -ENOMEM, 0);
		return;
	}
	w->id = req->id;
	w->th = th;
	w->l = l;
	w->addr = req->data.args[1];
	w->addrlen = req->data.args[2];
	w->flags = flags;
	w->t = now_ns();
	pmqos_note(g, w->t);
	th->waiter = w;
	w->prev = l->wait_tail;
	if (l->wait_tail)
		l->wait_tail->next = w;
	else
		l->wait_head = w;
	l->wait_tail = w;
	g->nwaiters++;
	l->last_use = w->t;

	listener_ready(g, l, !tried);
	if (th->waiter != w) {
		/* answered; an event loop may wait for readiness before the next
		 * accept: keep the listener readable while we hold connections */
		if (l->queued && (fl = fcntl(l->fd, F_GETFL)) >= 0 && (fl & O_NONBLOCK))
			wakeup_arm(l);
		return;
	}
	PROF_RESTART();
	fl = fcntl(l->fd, F_GETFL);
	PROF_MARK(PROF_FCNTL);
	if (fl >= 0 && (fl & O_NONBLOCK)) {
		g->eagain++;
		respond(g, w->id, -EAGAIN, 0);
		waiter_del(g, w);
	}
}

/*
 * listen(): a TCP socket is registered with the socket gate (fastpath.c)
 * before it can queue a connection, since the socket gate records the
 * connecting side only for a port that has a gated listener, and a
 * connection it did not record is served at home. Registered at the
 * service's first accept instead, a client that connected in between (it
 * knows the port once listen() returns; or in advance, a service restarted
 * under load) was served at home. So we listen on our dup (the same
 * socket) and answer for the call: a socket bound to its port is
 * registered before our listen(), so that no connection can come first;
 * one that listen() binds (port 0) right after, before the service can
 * learn its port. Anything but a TCP socket goes through unchanged, and so
 * does a call our listen() fails for: the kernel gives its own answer,
 * with the service's rights.
 */
static void
handle_listen(struct gate *g)
{
	struct service_thread *th;
	struct gated_listener *l = NULL;
	int sfd, dfd, is_new, dom, fresh = 0, fd = (int)req->data.args[0];

	if (g->fast == GATE_FAST_OFF || !(th = thread_get((pid_t)req->pid, &is_new))) {
		let_through(g, req->id);
		return;
	}
	/* the pidfd was opened after the notification: is it still that thread? */
	if ((is_new && !id_valid(g, req->id)) || (sfd = pidfd_getfd(th->pidfd, fd, 0)) < 0) {
		let_through(g, req->id);
		goto out;
	}
	if ((dom = listener_family(sfd)) != AF_INET && dom != AF_INET6) {
		close(sfd);
		let_through(g, req->id);
		goto out;
	}
	if (port_bound(sfd) && (dfd = fcntl(sfd, F_DUPFD_CLOEXEC, 3)) >= 0)
		l = listener_of(g, dfd, 1, &fresh);
	if (listen(sfd, (int)req->data.args[1]) < 0) {
		if (l && fresh)
			listener_unlink(g, l);
		close(sfd);
		let_through(g, req->id);
		goto out;
	}
	if (!l)
		l = listener_of(g, sfd, 0, &fresh);
	else
		close(sfd);
	if (l) {
		l->last_use = now_ns();
		listener_own(l, th, fd);
	}
	respond(g, req->id, 0, 0);
out:
	/* a thread that only listened is not one the gate serves: kept, it
	 * would count as a sibling busy serving (thread_siblings_busy()), and
	 * on pure cgroup2 no idle thread of its process would go home */
	if (is_new)
		thread_forget(th);
}

/* Is the socket bound to a port (not one that listen() is to choose)? */
static int
port_bound(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return 0;
	if (ss.ss_family == AF_INET)
		return ((struct sockaddr_in *)&ss)->sin_port != 0;
	return ss.ss_family == AF_INET6 && ((struct sockaddr_in6 *)&ss)->sin6_port != 0;
}

/* Forget l, registered for a listen() that failed. */
static void
listener_unlink(struct gate *g, struct gated_listener *l)
{
	struct gated_listener **pl;

	for (pl = &g->listeners; *pl; pl = &(*pl)->next)
		if (*pl == l) {
			*pl = l->next;
			drop_listener(l);
			return;
		}
}

/*
 * Until a thread accepts on l, the listener_in_use() test has no thread to
 * ask: l is kept while the one that listened still has it at fd (held by
 * a pidfd of its own, since th may be forgotten).
 */
static void
listener_own(struct gated_listener *l, const struct service_thread *th, int fd)
{
	if (l->owner_pidfd >= 0)
		return;
	if ((l->owner_pidfd = fcntl(th->pidfd, F_DUPFD_CLOEXEC, 3)) >= 0)
		l->owner_fd = fd;
}

static struct gated_listener *
listener_get(struct gate *g, struct service_thread *th, int fd, int *not_ours)
{
	struct gated_listener *l;
	int sfd, fresh;

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
		/* the number names another file now: if its last accept, let
		 * through with no record seen, may have gone to that file, count
		 * it (a listener not on the fast path writes no records) */
		if (th->fd_unseen)
			g->fp_fd_moved++;
	}
	th->fd_seen = 0;
	th->fd_unseen = 0;
	if ((sfd = pidfd_getfd(th->pidfd, fd, 0)) < 0)	/* Linux 5.6 */
		return NULL;	/* bad fd: the kernel will say EBADF */
	if (!(l = listener_of(g, sfd, 0, &fresh)))
		return NULL;
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
static struct gated_listener *
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
	if (g->fast != GATE_FAST_OFF)
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
static int
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

static void
serve_waiters(struct gate *g, struct gated_listener *l)
{
	while (l->wait_head) {
		struct queued_conn *c = pick(g, l);

		if (!c)
			break;
		handover(g, l->wait_head, c);
	}
}

/*
 * Move everything the kernel has queued into our per-VS queues, never
 * blocking. Our dup shares the service's open file description, so we must
 * not set O_NONBLOCK on it: we accept only what the kernel says is queued.
 * We are the only acceptor (every accept of the service comes to us), so a
 * queued connection does not vanish before our accept4.
 */
static void
drain(struct gate *g, struct gated_listener *l)
{
	uint64_t now = 0;
	PROF_BEGIN();
	int n = gate_backlog(l->fd), polled = n < 0;
	PROF_MARK(PROF_BACKLOG);

	if (polled)
		n = readable(l->fd);
	while (n > 0) {
		struct queued_conn *c;
		struct gate_vs *v;
		uint32_t id;
		int fd;

		if (!(c = calloc(1, sizeof(*c))))
			break;
		c->peerlen = sizeof(c->peer);
		PROF_RESTART();
		fd = accept4(l->fd, (struct sockaddr *)&c->peer, &c->peerlen, SOCK_CLOEXEC);
		PROF_MARK(PROF_ACCEPT4);
		n = polled ? readable(l->fd) : n - 1;
		if (fd < 0) {
			int e = errno;

			free(c);
			if (e == ECONNABORTED || e == EINTR)
				continue;
			if (e != EAGAIN)
				log_warn("%s: accept4", __func__);
			break;
		}
		c->fd = fd;
		if (wakeup_is_ours(l, c)) {
			close(fd);
			free(c);
			continue;
		}
		if (!now)
			now = now_ns();
		c->t_enq = now;
		if (g->want_attrs) {
			/* classified by its params: queued once they are here */
			hold_add(g, l, c, now);
			continue;
		}
		PROF_RESTART();
		v = l->fp && fp_drained(l, fd, &id, &c->cookie) ? gate_vs_by_id(g, id) :
		    gate_requester(g, l, c);
		PROF_MARK(PROF_CLASSIFY);
		gate_enqueue(g, l, c, v, now);
	}
	if (l->fp)
		fp_drain_done(g, l);
}

void
gate_enqueue(struct gate *g, struct gated_listener *l, struct queued_conn *c,
    struct gate_vs *v, uint64_t now)
{
	if (!v) {
		c->vs_id = g->home;
		v = vs_table_find(&g->tab, g->home);
	} else {
		c->vs_id = v->id;
	}
	gate_vs_active(g, v, now);
	queue_push_tail(l, c, &g->tab);
}

void
gate_vs_active(struct gate *g, struct gate_vs *v, uint64_t now)
{
	(void)g;
	if (!v)
		return;
	/* the window is kept current by gate_tick(), off this path; only a
	 * VS seen for the first time needs its first sample */
	if (!v->sample_t)
		share_sample(v, now);
	v->active_t = now;
}

void
gate_released(struct gate *g, struct gated_listener *l)
{
	int fl;

	serve_waiters(g, l);
	/* nobody waits: an event loop learns of it by readiness */
	if (!l->wait_head && l->queued && (fl = fcntl(l->fd, F_GETFL)) >= 0 && (fl & O_NONBLOCK))
		wakeup_arm(l);
}

/*
 * How many connections wait in the kernel's accept queue: a listener's
 * tcp_info reports it in tcpi_unacked (tcp_get_info(), Linux 2.6.x). One call
 * per drain instead of a poll() before every accept4() and one after the
 * last. -1 if that fails (then we poll).
 */
int
gate_backlog(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 ||
	    len < offsetof(struct tcp_info, tcpi_unacked) + sizeof(ti.tcpi_unacked) ||
	    ti.tcpi_state != TCP_LISTEN)
		return -1;
	return (int)ti.tcpi_unacked;
}

static int
readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

struct gate_vs *
gate_requester(struct gate *g, struct gated_listener *l, struct queued_conn *c)
{
	/* a listener bound to one address: every connection's local end is
	 * that address (no getsockname per connection); a Unix peer by the
	 * cgroup of its socket (unixpeer.c) */
	uint32_t id = l->family == AF_UNIX ? unixpeer_lookup(&g->tab, c->fd) :
	    conns_lookup(c->fd, l->local_len ? &l->local : NULL, &c->peer, c->peerlen);

	/* a TCP connection not made on this host: a remote line's mark? (the
	 * marks come from nftables on incoming SYNs; a Unix socket has none) */
	if (id == 0 && l->family != AF_UNIX)
		id = conns_by_mark(c->fd);
	return gate_vs_by_id(g, id);
}

/*
 * vsd pushes every change of the table before it answers the command that
 * made it (vs-table-vsd.c), so an id we do not know is a VS that is gone:
 * NULL, and the caller serves the connection at home. Nothing on this path
 * asks vsd.
 */
struct gate_vs *
gate_vs_by_id(struct gate *g, uint32_t id)
{
	return id != 0 ? vs_table_find(&g->tab, id) : NULL;
}

static struct queued_conn *
pick(struct gate *g, struct gated_listener *l)
{
	struct queued_conn *c;

	PROF_BEGIN();
	while ((c = queue_pop_best(l))) {
		int d = conn_dead(c);
		PROF_MARK(PROF_DEAD);
		if (!d)
			return c;
		g->dropped_dead++;
		close(c->fd);
		free(c);
	}
	return NULL;
}

/*
 * A client that hung up while queued: RST, or FIN with nothing left to read.
 * A Unix peer that closed gives POLLHUP at once, also when it sent its whole
 * request first (TCP would show only the FIN): that request is still served,
 * as without the gate, so a hang-up counts only with nothing left to read.
 */
static int
conn_dead(struct queued_conn *c)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN | POLLRDHUP };
	int avail = 0;

	if (poll(&p, 1, 0) <= 0)
		return 0;
	if (p.revents & POLLERR)
		return 1;
	if (p.revents & (POLLHUP | POLLRDHUP))
		return ioctl(c->fd, FIONREAD, &avail) == 0 && avail == 0;
	return 0;
}

/*
 * Hand c to waiter w as its accept's result. Returns 0 (done), or -ENOENT
 * (w was interrupted) / another -errno (w got that error); in both error
 * cases c is back at the head of its queue and w is gone.
 */
static int
handover(struct gate *g, struct pending_accept *w, struct queued_conn *c)
{
	struct seccomp_notif_addfd a = {
		.id = w->id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,	/* Linux 5.14 */
		.srcfd = (uint32_t)c->fd,
		.newfd_flags = (w->flags & SOCK_CLOEXEC) ? O_CLOEXEC : 0,
	};
	struct gated_listener *l = w->l;
	struct gate_vs *v;
	int nb = !!(w->flags & SOCK_NONBLOCK), r;

	v = rebind(g, w->th, c);
	/* O_NONBLOCK lives in the open file description the service gets; a
	 * connection re-queued after a failed hand-over may carry the last
	 * caller's setting */
	if (nb != c->nonblock && fcntl(c->fd, F_SETFL, nb ? O_NONBLOCK : 0) == 0)
		c->nonblock = nb;
	/* revalidate after writing into its memory (the TID may have been
	 * reused); with no address to write, ADDFD itself says ENOENT */
	if ((r = copy_peer(w, c)) == 0 && w->addr && !id_valid(g, w->id))
		r = -ENOENT;
	PROF_BEGIN();
	if (r == 0 && ioctl(g->notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a) < 0)
		r = -errno;
	PROF_MARK(PROF_ADDFD);
	if (r == 0) {
		if (v)
			v->served++;
		g->handed++;
		if (l->fp)
			fp_handed(l, c);
		l->last_use = now_ns();
		close(c->fd);
		PROF_MARK(PROF_CLOSE);
		free(c);
		waiter_del(g, w);
		return 0;
	}
	g->requeued++;
	queue_push_head(l, c, &g->tab);
	if (r != -ENOENT)
		respond(g, w->id, r, 0);
	waiter_del(g, w);
	return r;
}

/*
 * Bind th where the rules say it serves c (by default c's VS; home if that
 * is gone); returns the VS the work is charged to.
 */
static struct gate_vs *
rebind(struct gate *g, struct service_thread *th, struct queued_conn *c)
{
	struct gate_vs *v = vs_table_find(&g->tab, c->vs_id), *home, *cur;
	int r;

	if (!v && (v = vs_table_find(&g->tab, g->home)))
		c->vs_id = g->home;
	if (!v)
		return NULL;
	/* by its params: the content rule already said where (hold.c) */
	if (!c->by_content && !(v = gate_decide(g, th->bound, v))) {
		/* stay: no move; the work is charged where the thread is */
		cur = th->bound ? vs_table_find(&g->tab, th->bound) : NULL;
		return cur ? cur : vs_table_find(&g->tab, g->home);
	}
	/* a database's accepting thread stays home: dbthreads.c moves the
	 * threads that serve the connection */
	if (gate_db_mode(g))
		return v;
	r = bind_thread(th, v);
	if (r == 1 || !th->cpu_mark)	/* moved, or new: its CPU so far goes where it was */
		charge_settle(g, th);
	if (r == -ENOENT || r == -ENODEV) {
		/* the VS was destroyed under us: serve the request from home */
		g->refresh_asked = 1;
		if (v->id != g->home && (home = vs_table_find(&g->tab, g->home))) {
			c->vs_id = g->home;
			v = home;
			if (bind_thread(th, v) == 1)
				charge_settle(g, th);
		}
	} else if (r < 0) {
		/* the kernel refused the move (counted, logged by rebind.c): the
		 * work runs, and is charged, where the thread is */
		cur = th->bound ? vs_table_find(&g->tab, th->bound) : NULL;
		return cur ? cur : vs_table_find(&g->tab, g->home);
	}
	return v;
}

struct gate_vs *
gate_rebind_vs(struct gate *g, struct service_thread *th, uint32_t vs_id)
{
	struct queued_conn c = { .vs_id = vs_id };

	return rebind(g, th, &c);
}

static int
copy_peer(struct pending_accept *w, struct queued_conn *c)
{
	pid_t tid = w->th->tid;
	int len;
	size_t n;
	struct iovec loc[2] = { { &len, sizeof(len) } }, rem[2] = { { (void *)w->addrlen, sizeof(len) } };

	if (!w->addr)
		return 0;
	if (process_vm_readv(tid, loc, 1, rem, 1, 0) != sizeof(len))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;
	/* one write: the address (truncated to the caller's buffer, as accept(2)
	 * does) and its real length */
	n = (size_t)len < c->peerlen ? (size_t)len : c->peerlen;
	len = (int)c->peerlen;
	loc[0] = (struct iovec){ &c->peer, n };
	loc[1] = (struct iovec){ &len, sizeof(len) };
	rem[0] = (struct iovec){ (void *)w->addr, n };
	rem[1] = (struct iovec){ (void *)w->addrlen, sizeof(len) };
	if (process_vm_writev(tid, loc, 2, rem, 2, 0) != (ssize_t)(n + sizeof(len)))
		return -EFAULT;
	return 0;
}

static void
respond(struct gate *g, uint64_t id, int error, uint32_t flags)
{
	resp->id = id;
	resp->val = 0;
	resp->error = error;
	resp->flags = flags;
	/* ENOENT: the caller was interrupted or died meanwhile; that is normal */
	if (ioctl(g->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT)
		log_warn("%s: SECCOMP_IOCTL_NOTIF_SEND", __func__);
}

int
gate_continue(struct gate *g, uint64_t id)
{
	resp->id = id;
	resp->val = 0;
	resp->error = 0;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	if (ioctl(g->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0)
		return -errno;
	return 0;
}

void
gate_waiter_done(struct gate *g, struct pending_accept *w)
{
	waiter_del(g, w);
}

static void
let_through(struct gate *g, uint64_t id)
{
	g->passed++;
	respond(g, id, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

static int
id_valid(struct gate *g, uint64_t id)
{
	return ioctl(g->notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static void
waiter_del(struct gate *g, struct pending_accept *w)
{
	struct gated_listener *l = w->l;

	if (w->prev)
		w->prev->next = w->next;
	else
		l->wait_head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		l->wait_tail = w->prev;
	if (w->th->waiter == w)
		w->th->waiter = NULL;
	g->nwaiters--;
	free(w);
}

static void
listener_ready(struct gate *g, struct gated_listener *l, int fast)
{
	/* the fast path first; while threads it let through may still take
	 * queued connections, only our own queues are served */
	if (!l->fp || !fp_ready(g, l, fast))
		drain(g, l);
	serve_waiters(g, l);
}

void
gate_listener_ready(struct gate *g, struct gated_listener *l)
{
	listener_ready(g, l, 1);
}

static void
handle_socket(struct gate *g)
{
	struct service_thread *th;
	struct gate_vs *v;
	int is_new;

	/* lazy cgroup2 move: only a bound thread creating a socket needs it */
	if ((th = thread_get((pid_t)req->pid, &is_new)) && th->bound &&
	    (v = vs_table_find(&g->tab, th->bound)))
		bind_cgroup2(th, v);
	let_through(g, req->id);
}

int
gate_init(struct gate *g, int notify_fd)
{
	struct seccomp_notif_sizes sz;

	g->notify_fd = notify_fd;
	if (!req && seccomp_notify_alloc(&req, &resp) < 0)
		return -ENOMEM;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		return -errno;
	req_size = sz.seccomp_notif;
	native_arch = seccomp_arch_native();
	self_pid = getpid();
	return 0;
}

/*
 * The listeners that have waiters, for the supervisor's poll() (listeners are
 * polled only while a thread waits on them, and poll() needs no epoll_ctl
 * per accept). Returns how many there are; fills out[] up to max.
 */
size_t
gate_waiting_listeners(struct gate *g, struct gated_listener **out, size_t max)
{
	struct gated_listener *l;
	size_t n = 0;

	for (l = g->listeners; l; l = l->next)
		if ((l->wait_head && !fp_busy(l)) || fp_pollfd(l) >= 0) {
			if (n < max)
				out[n] = l;
			n++;
		}
	return n;
}

int
gate_listener_pollfd(const struct gated_listener *l)
{
	int fd = fp_pollfd(l);

	/* a thread waits in the kernel: its arrival wakes us through the ring */
	return fd >= 0 ? fd : l->fd;
}

void
gate_install(struct gate *g, struct vs_table *fresh, int from_vsd,
	     int (*rules)(void *arg, struct rules **rs), void *arg)
{
	uint32_t gone[256];
	size_t ngone = ARRAY_SIZE(gone), i;
	struct gated_listener *l;
	uint64_t hash = fresh->rules_hash;

	vs_table_merge(&g->tab, fresh, gone, &ngone);
	if (from_vsd && hash != g->rules_hash) {
		struct rules *rs = NULL;

		if (!hash)
			gate_rules_update(g, 0, NULL);
		else if (rules(arg, &rs) == 0)
			gate_rules_update(g, hash, rs);
		else
			gate_rules_index(g);	/* the last good rules, the new table */
	} else {
		gate_rules_index(g);
	}
	if (g->home && !vs_table_find(&g->tab, g->home))
		log_warnx("home VS %u is gone; connections are served unbound", g->home);
	for (l = g->listeners; l; l = l->next)
		fp_rules_changed(g, l);
	for (i = 0; i < ngone; i++) {
		log_info("VS %u is gone; its queued connections go to the home VS", gone[i]);
		for (l = g->listeners; l; l = l->next)
			queue_reroute(l, gone[i], g->home, &g->tab);
	}
}

static int
rules_pulled(void *arg, struct rules **rs)
{
	struct gate *g = arg;

	g->vsd_pulls++;
	return gate_rules_load_vsd(g->vsd_socket, rs);
}

void
gate_refresh(struct gate *g, int force)
{
	struct vs_table fresh;
	uint64_t now = now_ns();
	int r;

	if (!force && now - g->last_refresh < GATE_REFRESH_MIN_MS * 1000000ull)
		return;
	g->last_refresh = now;
	g->refresh_asked = 0;
	if (g->vsd_socket) {
		g->vsd_pulls++;
		r = vs_table_load_vsd(&fresh, g->vsd_socket);
	} else if (g->table_file) {
		r = vs_table_load_file(&fresh, g->table_file);
	} else {
		return;
	}
	if (r == 0)		/* else keep the last good table while vsd is away */
		gate_install(g, &fresh, g->vsd_socket != NULL, rules_pulled, g);
}

unsigned
gate_tick(struct gate *g)
{
	static uint64_t last_slow, last_sweep;
	uint64_t now = now_ns();
	struct gated_listener *l, **pl;
	size_t queued = 0, i;
	int busy = 0, soon = 0;

	/* Keep the window of recently active VSs current, so a VS's first
	 * connection after a pause is ranked by its real use, not by "no
	 * history". This is the only place the usage counters are read (plus a
	 * VS's very first sample): never on the accept path. It walks the table
	 * once per tick (10 ms while connections come, else 100 ms). */
	for (i = 0; i < g->tab.n; i++) {
		struct gate_vs *v = &g->tab.v[i];

		if (v->active_t && now - v->active_t < GATE_ACTIVE_NS)
			share_sample_lazy(v, now);
		if (v->active_t && now - v->active_t < GATE_BUSY_NS)
			busy = 1;
	}
	for (l = g->listeners; l; l = l->next) {
		if (l->queued) {
			queue_sample_shares(l, &g->tab, now);
			queue_rekey(l, &g->tab);
			queued += l->queued;
		}
		fp_tick(g, l, now);
		/* threads wait while others let through have not dequeued
		 * yet: look again soon (the listener is not polled meanwhile) */
		if (l->wait_head && fp_busy(l)) {
			gate_listener_ready(g, l);
			if (l->wait_head && fp_busy(l))
				soon = 1;
		}
	}
	/* the params' bound, to the tick (10 ms while anything is held) */
	if (g->nheld && hold_expire(g, now))
		busy = 1;
	if (now - last_slow >= 100000000ull) {
		last_slow = now;
		for (pl = &g->listeners; (l = *pl);) {
			tick_waiters(g, l, now);
			if (!l->wait_head && !l->queued && !l->held &&
			    now - l->last_use > GATE_LISTEN_GC_MS * 1000000ull &&
			    !listener_in_use(l)) {
				*pl = l->next;	/* the service has closed it */
				drop_listener(l);
				continue;
			}
			pl = &l->next;
		}
	}
	if (now - last_sweep >= 1000000000ull) {
		last_sweep = now;
		thread_sweep();
	}
	/* a --vs-table file is read again; vsd pushes its changes */
	if (g->table_file && (g->refresh_asked ||
	    now - g->last_refresh >= GATE_REFRESH_MS * 1000000ull))
		gate_refresh(g, 1);
	pmqos_tick(g, now);
	return soon ? 1 : queued || busy ? 10 : 100;
}

static void
tick_waiters(struct gate *g, struct gated_listener *l, uint64_t now)
{
	struct pending_accept *w, *next;
	struct gate_vs *home = vs_table_find(&g->tab, g->home);

	for (w = l->wait_head; w; w = next) {
		next = w->next;
		if (!id_valid(g, w->id)) {
			waiter_del(g, w);	/* interrupted by a signal */
			continue;
		}
		/* serving nobody: back to the home VS, off the hot path. On pure
		 * v2 that moves the whole process: not while another of its
		 * threads serves a request, which would then run at home. */
		if (home && w->th->bound != g->home &&
		    now - w->t >= GATE_IDLE_HOME_MS * 1000000ull &&
		    !(g->tab.pure_v2 && thread_siblings_busy(w->th)) &&
		    bind_thread(w->th, home) == 1)
			charge_settle(g, w->th);
	}
}

static void
forget_listener(struct service_thread *th, void *l)
{
	if (th->last_l == l)
		th->last_l = NULL;
}

struct in_use {
	const struct gated_listener *l;
	int yes;
};

static void
in_use_by(struct service_thread *th, void *arg)
{
	struct in_use *u = arg;

	if (!u->yes && th->last_l == u->l &&
	    syscall(SYS_kcmp, th->tid, self_pid, KCMP_FILE, th->last_fd, u->l->fd) == 0)
		u->yes = 1;
}

/*
 * Does a thread that accepted on l still have it at that descriptor? Then
 * l is the service's still, however long ago its last accept came: the
 * thread may be serving a long request, or waiting in the kernel's accept
 * (fastpath.c), and a listener dropped meanwhile would lose its socket
 * gate registration, so connections queued then would go unrecorded. So
 * does the thread that listened on it (listener_own()), which may not
 * have accepted yet.
 */
static int
listener_in_use(struct gated_listener *l)
{
	struct in_use u = { l, 0 };
	struct stat st;
	int sfd;

	thread_foreach(in_use_by, &u);
	if (u.yes || l->owner_pidfd < 0)
		return u.yes;
	if ((sfd = pidfd_getfd(l->owner_pidfd, l->owner_fd, 0)) >= 0) {
		u.yes = fstat(sfd, &st) == 0 && st.st_ino == l->ino && st.st_dev == l->dev;
		close(sfd);
	}
	if (!u.yes) {	/* gone, or that number names another file now */
		close(l->owner_pidfd);
		l->owner_pidfd = -1;
	}
	return u.yes;
}

static void
drop_listener(struct gated_listener *l)
{
	fp_detach(l);
	thread_foreach(forget_listener, l);
	listen_free(l);
}

#ifdef GATE_PROF
uint64_t prof_ns[PROF_MAX], prof_n[PROF_MAX];

void
prof_dump(void)
{
	static const char *const name[PROF_MAX] = {
		"RECV", "thread_get", "listener_get", "backlog", "accept4", "classify",
		"conn_dead", "ADDFD", "close", "fcntl", "poll", "fast_path",
	};
	int i;

	for (i = 0; i < PROF_MAX; i++)
		if (prof_n[i])
			fprintf(stderr, "prof %-12s n %8llu avg %8.0f ns\n", name[i],
			    (unsigned long long)prof_n[i], (double)prof_ns[i] / (double)prof_n[i]);
}

#endif

void
gate_close_all(struct gate *g)
{
	struct gated_listener *l;

	prof_dump();

	pmqos_release(g);
	hold_close(g, NULL);
	while ((l = g->listeners)) {
		while (l->wait_head)
			waiter_del(g, l->wait_head);
		g->listeners = l->next;
		drop_listener(l);
	}
}
