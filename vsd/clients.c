// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control socket's connections, served from vsd's one poll loop: each
 * client socket is non-blocking, a request is read as its parts arrive, and
 * a reply is written as the client takes it, so no client waits on another
 * one's bytes. Two limits keep that true against a client that connects and
 * sends nothing, or sends a byte at a time:
 *  - a deadline for the whole request (CTL_DEADLINE_MS from the accept), and
 *    another for the whole reply (from when it is ready); the time vsd spends
 *    running other clients' commands does not count against it;
 *  - at most CTL_CLIENTS_MAX connections; a new one past that pushes out
 *    the oldest connection of the uid that holds the most, so one user's
 *    flood costs that user, not the others.
 * Commands themselves run one at a time, in the loop (see vsd(8)).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "lib/log.h"
#include "lib/util.h"
#include "vsd.h"

#define CTL_DEADLINE_S	2	/* vsd(8) promises this */
#define CTL_DEADLINE_MS	(CTL_DEADLINE_S * 1000)
#define STR(x)		#x
#define XSTR(x)		STR(x)
#define CTL_CLIENTS_MAX	64	/* vsd(8): as many as the listen backlog */

struct ctl_client {
	int		 fd;
	struct ucred	 cr;
	uint64_t	 seq;		/* accept order: lower is older */
	uint64_t	 deadline;	/* CLOCK_MONOTONIC ns, for the phase it is in */
	uint64_t	 busy_at;	/* the set's busy_ns when the phase began */
	struct proto_rx	 rx;
	struct buf	 out;		/* the framed reply; writing once out.len > 0 */
	size_t		 off;		/* bytes of out already sent */
	short		 revents;
};

static void
phase_start(struct ctl_set *cs, struct ctl_client *c)
{
	c->deadline = mono_ns() + CTL_DEADLINE_MS * 1000000ull;
	c->busy_at = cs->busy_ns;
}

/* When the phase's deadline falls, moved on by the time spent on others' commands. */
static uint64_t
due(const struct ctl_set *cs, const struct ctl_client *c)
{
	return c->deadline + (cs->busy_ns - c->busy_at);
}

static void
drop(struct ctl_client *c)
{
	close(c->fd);
	c->fd = -1;
	proto_rx_free(&c->rx);
	buf_free(&c->out);
}

/* Send what the client takes now; 1 when all is sent or it cannot be. */
static int
flush(struct ctl_client *c)
{
	while (c->off < c->out.len) {
		ssize_t n = send(c->fd, c->out.p + c->off, c->out.len - c->off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return 1;	/* the client left: nothing more to do */
		c->off += (size_t)n;
	}
	return 1;
}

/* The reply is framed in c->out: send it, now or as the client reads. */
static void
reply(struct ctl_set *cs, struct ctl_client *c)
{
	proto_rx_free(&c->rx);
	if (c->out.oom) {
		buf_reset(&c->out);
		control_error(&c->out, 0, VX_INTERNAL, "out of memory");
	}
	c->off = 0;
	phase_start(cs, c);
	if (flush(c))
		drop(c);
}

/* A client past its deadline or pushed out: a last word, then the door. */
static void
cut_off(struct ctl_client *c, const char *why)
{
	log_debug("control: client pid %d uid %u: %s", (int)c->cr.pid, (unsigned)c->cr.uid, why);
	if (c->out.len == 0) {
		control_error(&c->out, 0, VX_INTERNAL, why);
		flush(c);
	}
	drop(c);
}

static void
on_readable(struct vsd *d, struct ctl_client *c)
{
	struct ctl_set *cs = &d->ctl;
	struct request req = { .fd = -1 };
	const char *why;
	uint64_t t0;
	int r;

	r = proto_rx_step(c->fd, &c->rx, &req, &why);
	if (r == -EAGAIN || r == -EWOULDBLOCK)
		return;
	if (r == -EBADMSG) {
		log_debug("malformed request from pid %d: %s", (int)c->cr.pid, why);
		control_error(&c->out, 0, VX_USAGE, why);
	} else if (r == 0) {
		t0 = mono_ns();
		control_run(d, &req, c->fd, &c->cr, &c->out);
		cs->busy_ns += mono_ns() - t0;
	}
	proto_request_free(&req);
	if (r == 0 || r == -EBADMSG)
		reply(cs, c);
	else
		drop(c);	/* the connection failed: nobody to answer */
}

/* The connection to push out when the set is full: the oldest of the uid with the most. */
static struct ctl_client *
victim(struct ctl_set *cs)
{
	struct ctl_client *v = NULL;
	size_t i, j, most = 0;

	for (i = 0; i < cs->n; i++) {
		struct ctl_client *c = &cs->v[i], *oldest = c;
		size_t k = 0;

		for (j = 0; j < cs->n; j++) {
			if (cs->v[j].cr.uid != c->cr.uid)
				continue;
			k++;
			if (cs->v[j].seq < oldest->seq)
				oldest = &cs->v[j];
		}
		if (k > most || (k == most && oldest->seq < v->seq)) {
			most = k;
			v = oldest;
		}
	}
	return v;
}

/* Close the dropped ones and close up the array. */
static void
compact(struct ctl_set *cs)
{
	size_t i, n = 0;

	for (i = 0; i < cs->n; i++)
		if (cs->v[i].fd >= 0)
			cs->v[n++] = cs->v[i];
	cs->n = n;
}

static void
admit(struct vsd *d, int fd)
{
	struct ctl_set *cs = &d->ctl;
	struct ctl_client c = { .fd = fd };

	proto_rx_init(&c.rx);
	if (control_admit(d, fd, &c.cr, &c.out) < 0) {
		flush(&c);	/* a refusal fits the socket's buffer */
		drop(&c);
		return;
	}
	if (cs->n == CTL_CLIENTS_MAX) {
		cut_off(victim(cs), "too many clients: this oldest connection of its user "
			"was closed to let another in");
		compact(cs);
	}
	c.seq = ++cs->seq;
	phase_start(cs, &c);
	cs->v[cs->n++] = c;
}

void
ctl_accept(struct vsd *d, int lfd)
{
	struct ctl_set *cs = &d->ctl;
	int fd;

	if (!cs->v && !(cs->v = calloc(CTL_CLIENTS_MAX, sizeof(*cs->v)))) {
		log_warnx("control: out of memory");
		return;
	}
	/* all that wait: the backlog is where a flood would queue up otherwise */
	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0)
		admit(d, fd);
	if (errno == EMFILE || errno == ENFILE)
		log_warn("control: accept");
}

size_t
ctl_pollfds(struct vsd *d, struct pollfd *p, size_t max)
{
	struct ctl_set *cs = &d->ctl;
	size_t i;

	for (i = 0; i < cs->n && i < max; i++)
		p[i] = (struct pollfd){ .fd = cs->v[i].fd,
					.events = cs->v[i].out.len ? POLLOUT : POLLIN };
	return i;
}

void
ctl_events(struct vsd *d, const struct pollfd *p, size_t np)
{
	struct ctl_set *cs = &d->ctl;
	uint64_t now;
	size_t i;

	/* the set does not change until compact(): p[i] is still v[i] */
	for (i = 0; i < cs->n; i++)
		cs->v[i].revents = i < np ? p[i].revents : 0;
	for (i = 0; i < cs->n; i++) {
		struct ctl_client *c = &cs->v[i];

		if (!c->revents)
			continue;
		if (c->out.len) {
			if (flush(c))
				drop(c);
		} else {
			on_readable(d, c);
		}
	}
	now = mono_ns();
	for (i = 0; i < cs->n; i++) {
		struct ctl_client *c = &cs->v[i];

		if (c->fd >= 0 && now >= due(cs, c))
			cut_off(c, c->out.len ? "the reply was not read within " XSTR(CTL_DEADLINE_S) " s" :
				"no whole request within " XSTR(CTL_DEADLINE_S) " s");
	}
	compact(cs);
}

int
ctl_timeout_ms(const struct vsd *d, int other_ms)
{
	const struct ctl_set *cs = &d->ctl;
	uint64_t now = mono_ns(), first = UINT64_MAX;
	size_t i;
	int ms;

	for (i = 0; i < cs->n; i++)
		if (due(cs, &cs->v[i]) < first)
			first = due(cs, &cs->v[i]);
	if (first == UINT64_MAX)
		return other_ms;
	ms = first <= now ? 0 : (int)((first - now + 999999) / 1000000);
	return other_ms < 0 || ms < other_ms ? ms : other_ms;
}

void
ctl_close_all(struct vsd *d)
{
	struct ctl_set *cs = &d->ctl;
	size_t i;

	for (i = 0; i < cs->n; i++)
		drop(&cs->v[i]);
	free(cs->v);
	memset(cs, 0, sizeof(*cs));
}
