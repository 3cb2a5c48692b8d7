// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The hand-over: a queued connection installed in the waiting caller and
 * returned as its accept's result in one step (ADDFD with
 * SECCOMP_ADDFD_FLAG_SEND, Linux 5.14), after re-binding the thread
 * (place.c) and writing the peer address into the caller's buffer. On
 * failure the connection goes back to the head of its queue: an accepted
 * fd lives in exactly one place, a queue or the service.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/seccomp.h>

#include "decision.h"
#include "gate.h"
#include "profile.h"

static int copy_peer(struct pending_accept *w, struct queued_conn *c);

/*
 * Hand c to waiter w as its accept's result. Returns 0 (done), or -ENOENT
 * (w was interrupted) / another -errno (w got that error); in both error
 * cases c is back at the head of its queue and w is gone.
 */
int
gate_handover(struct gate *g, struct pending_accept *w, const struct decision *d)
{
	struct queued_conn *c = d->c;
	struct seccomp_notif_addfd a = {
		.id = w->id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,	/* Linux 5.14 */
		.srcfd = (uint32_t)c->fd,
		.newfd_flags = (w->flags & SOCK_CLOEXEC) ? O_CLOEXEC : 0,
	};
	struct gated_listener *l = w->l;
	struct gate_vs *v;
	int nb = !!(w->flags & SOCK_NONBLOCK), r;

	v = gate_bind(g, w->th, d);
	/* O_NONBLOCK lives in the open file description the service gets; a
	 * connection re-queued after a failed hand-over may carry the last
	 * caller's setting */
	if (nb != c->nonblock && fcntl(c->fd, F_SETFL, nb ? O_NONBLOCK : 0) == 0)
		c->nonblock = nb;
	/* revalidate after writing into its memory (the TID may have been
	 * reused); with no address to write, ADDFD itself says ENOENT */
	if ((r = copy_peer(w, c)) == 0 && w->addr && !gate_id_valid(g, w->id))
		r = -ENOENT;
	PROF_BEGIN();
	if (r == 0 && ioctl(g->notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a) < 0)
		r = -errno;
	PROF_MARK(PROF_ADDFD);
	if (r == 0) {
		if (v)
			v->served++;
		workers_take(&g->wk, w->th, c->vs_id);
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
	trace_conn(g, "requeue", c);
	queue_push_head(l, c, &g->tab);
	if (r != -ENOENT)
		gate_respond(g, w->id, r, 0);
	waiter_del(g, w);
	return r;
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
