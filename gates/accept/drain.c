// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Draining a listener: everything the kernel has queued goes into the
 * gate's per-VS queues (enqueue.c classifies each connection, hold.c keeps
 * those classified by their params), never blocking; and closing a
 * connection the decision picked whose client hung up while queued.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gate.h"
#include "profile.h"
#include "lib/log.h"

static int readable(int fd);
static int conn_dead(struct queued_conn *c);

/*
 * Move everything the kernel has queued into our per-VS queues, never
 * blocking. Our dup shares the service's open file description, so we must
 * not set O_NONBLOCK on it: we accept only what the kernel says is queued.
 * We are the only acceptor (every accept of the service comes to us), so a
 * queued connection does not vanish before our accept4.
 */
void
gate_drain(struct gate *g, struct gated_listener *l)
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

static int
readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

int
gate_drop_dead(struct gate *g, struct queued_conn *c)
{
	PROF_BEGIN();
	int d = conn_dead(c);
	PROF_MARK(PROF_DEAD);

	if (!d)
		return 0;
	g->dropped_dead++;
	trace_conn(g, "dead", c);
	close(c->fd);
	free(c);
	return 1;
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
