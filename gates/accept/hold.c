// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Classification by what a request asks for (vsrules(5): host, docroot,
 * script rules and sites). When the rules match request content for this
 * service (rules_wants_attrs()), a drained connection is not queued at once:
 * it is held here until the front end's FastCGI BEGIN_REQUEST and PARAMS
 * records have arrived, read with MSG_PEEK (never consumed: the service
 * reads the connection from its first byte), parsed by fcgi.c and classified
 * by rules_query_attrs(); then it is queued as drain() queues any other.
 *
 * - The whole params stream is parsed (fcgi.c keeps only the values it
 *   wants), up to FCGI_PARAMS_MAX bytes of the connection's start; a TCP
 *   connection's receive buffer is raised to hold that much while it waits
 *   (room_for_params()).
 * - Complete: classified by its DOCUMENT_ROOT (else SCRIPT_FILENAME) and by
 *   SERVER_NAME (else HTTP_HOST), rules_query_attrs(); no content rule
 *   matches: by the requester, as without content rules.
 * - Unclassified, served from the VS the service's rules name for it
 *   (`unclassified VS`, by default its home; never the requester, which is
 *   the front end every tenant's clients reach): not FastCGI or malformed;
 *   params that do not end within FCGI_PARAMS_MAX bytes, before the peer
 *   stops sending, or within the bound in time (the rule file's
 *   attrs-timeout, or the default rules_wants_attrs() gives; checked by
 *   gate_tick(), every 10 ms while anything is held, so kept within 10 ms).
 *   Of a cut stream only a DOCUMENT_ROOT already read may classify it: a
 *   host name read before it is the client's, and would have lost to it.
 * - Nothing waits behind a held connection: it is in no queue, so the
 *   gate's waiters take the connections that are queued, and a non-blocking
 *   accept gets EAGAIN if none is. When a held connection is queued, the
 *   waiters are served, or an event loop's listener is made readable again
 *   (wakeup.c).
 * - Exactly once: a held connection's fd is in the held list and nowhere
 *   else until it moves to a queue; the epoll set holds no reference of its
 *   own that could outlive it (EPOLL_CTL_DEL before it moves: after the
 *   hand-over the service's reference would keep an epoll entry alive).
 *
 * Readiness: one epoll set for every held connection, edge-triggered (a
 * partial peek leaves the socket readable; the next edge is more data),
 * polled by the supervisor's loop as one descriptor. A connection whose
 * params are already there when it is drained is classified at once,
 * without touching the epoll set: the usual case with a front end that
 * writes its whole request header at once. Cost per accept:
 * benchmarks/results/accept-attrs-cost.md.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fcgi.h"
#include "gate.h"
#include "lib/log.h"
#include "rules/rules.h"

/* not on the stack: 1 MiB and 16 KiB, and the gate is single-threaded */
static uint8_t peekbuf[FCGI_PARAMS_MAX];
static struct fcgi_stream stream;

static void
held_unlink(struct gate *g, struct queued_conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		g->held_head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		g->held_tail = c->prev;
	c->next = c->prev = NULL;
	if (c->held_l)
		c->held_l->held--;
	c->held_l = NULL;
	g->nheld--;
}

/* The requester's VS now (it may have been destroyed while c waited). */
static struct gate_vs *
requester(struct gate *g, struct queued_conn *c)
{
	return c->req_id ? vs_table_find(&g->tab, c->req_id) : NULL;
}

/* c cannot be classified by its params: the service's unclassified VS
 * decides it, never the requester (the front end). */
static struct gate_vs *
unclassified(struct gate *g, struct queued_conn *c, uint64_t *why)
{
	(*why)++;
	g->unclassified++;
	c->by_content = 1;
	return gate_unclassified_vs(g);
}

/* The VS a site or content rule gives c by a's values; NULL if none. */
static struct gate_vs *
by_attrs(struct gate *g, struct queued_conn *c, const struct rules_req_attrs *a)
{
	struct gate_vs *v = gate_decide_attrs(g, requester(g, c), a);

	if (v) {
		c->by_content = 1;
		g->by_content++;
	}
	return v;
}

/*
 * Look at what c sent so far. 1 if c is classified (*out, by_content set;
 * the caller queues it), 0 if its params are still to come. final: the
 * peer will send nothing more, or its time is up.
 */
static int
try_classify(struct gate *g, struct queued_conn *c, struct gate_vs **out, int final,
	     uint64_t *why_final)
{
	struct rules_req_attrs a = { 0 };
	enum fcgi_status s;
	ssize_t n;
	size_t got;

	*out = NULL;
	/* from the start each time (MSG_PEEK): at most the bound is copied */
	n = recv(c->fd, peekbuf, sizeof(peekbuf), MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !final)
		return 0;
	if (n <= 0 && why_final != &g->attrs_timeout) {
		/* gone, or closed without a word: home, where pick() drops it
		 * (conn_dead) or the service sees the end of file */
		return 1;
	}
	got = n > 0 ? (size_t)n : 0;
	s = fcgi_parse(peekbuf, got, &stream);
	if (s == FCGI_MORE && got < sizeof(peekbuf) && !final)
		return 0;
	if (s == FCGI_BAD) {
		*out = unclassified(g, c, &g->attrs_bad);
		return 1;
	}
	if (s == FCGI_MORE) {
		/*
		 * Cut short: by the bound, the end of the connection or the
		 * time. Only the document root, which the front end sets, may
		 * classify it now: a host name that came first is the client's,
		 * and would lose to the document root still to come.
		 */
		a.docroot = stream.p.docroot;
		if (!a.docroot || !(*out = by_attrs(g, c, &a)))
			*out = unclassified(g, c, got >= sizeof(peekbuf) ? &g->attrs_long :
			    why_final ? why_final : &g->attrs_cut);
		return 1;
	}
	/* the name the front end chose its server block or virtual host by,
	 * else the one the client sent */
	a.host = stream.p.server_name ? stream.p.server_name : stream.p.http_host;
	a.docroot = stream.p.docroot;
	a.script = stream.p.script;
	if (!(*out = by_attrs(g, c, &a))) {
		/* complete, and no rule claims it: as without content rules */
		g->attrs_nomatch++;
		*out = requester(g, c);
	}
	return 1;
}

/*
 * A TCP connection peeked at holds what its receive buffer holds; let it
 * hold the bound, so the params a front end may send all fit (the window
 * reopens with the next peek). A Unix stream socket holds what the
 * sender's send buffer allows (net.core.wmem_default): nothing to raise
 * here. As root (CAP_NET_ADMIN) past net.core.rmem_max, else up to it.
 */
static void
room_for_params(int fd)
{
	int want = FCGI_PARAMS_MAX, have = 0;
	socklen_t len = sizeof(have);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0 ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
		return;
	/* the kernel doubles what it is given, for its bookkeeping */
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &have, &len) == 0 && have >= 2 * want)
		return;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));
}

void
hold_add(struct gate *g, struct gated_listener *l, struct queued_conn *c, uint64_t now)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.ptr = c };
	struct gate_vs *v;

	c->req_id = 0;
	if ((v = gate_requester(g, l, c)))
		c->req_id = v->id;
	g->held_total++;
	c->by_content = 0;
	if (try_classify(g, c, &v, 0, NULL)) {
		gate_enqueue(g, l, c, v, now);
		return;
	}
	if (!g->hold_open) {
		if ((g->hold_epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
			log_warn("%s: epoll_create1", __func__);
			gate_enqueue(g, l, c, requester(g, c), now);
			return;
		}
		g->hold_open = 1;
	}
	if (epoll_ctl(g->hold_epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
		log_warn("%s: epoll_ctl", __func__);
		gate_enqueue(g, l, c, requester(g, c), now);
		return;
	}
	g->attrs_waited++;
	room_for_params(c->fd);
	c->deadline = now + (uint64_t)g->attrs_timeout_ms * 1000000ull;
	c->held_l = l;
	c->next = NULL;
	c->prev = g->held_tail;
	if (g->held_tail)
		g->held_tail->next = c;
	else
		g->held_head = c;
	g->held_tail = c;
	g->nheld++;
	l->held++;
}

/* c leaves the held set for v's queue (home's if NULL); its listener,
 * whose waiters the shell serves now. */
static struct gated_listener *
release(struct gate *g, struct queued_conn *c, struct gate_vs *v, uint64_t now)
{
	struct gated_listener *l = c->held_l;

	epoll_ctl(g->hold_epfd, EPOLL_CTL_DEL, c->fd, NULL);
	held_unlink(g, c);
	gate_enqueue(g, l, c, v, now);
	return l;
}

/* One epoll_wait() per round of hold_ready_next(), as the shell calls it
 * until NULL. */
static struct epoll_event ready[64];
static int nready = -1, iready;
static uint64_t ready_now;

struct gated_listener *
hold_ready_next(struct gate *g)
{
	struct gate_vs *v;

	if (!g->hold_open)
		return NULL;
	if (nready < 0) {
		nready = epoll_wait(g->hold_epfd, ready, (int)ARRAY_SIZE(ready), 0);
		iready = 0;
		ready_now = 0;
	}
	while (iready < nready) {
		struct queued_conn *c = ready[iready].data.ptr;
		int eof = !!(ready[iready++].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR));

		if (!try_classify(g, c, &v, eof, eof ? &g->attrs_cut : NULL))
			continue;
		if (!ready_now)
			ready_now = now_ns();
		return release(g, c, v, ready_now);
	}
	nready = -1;
	return NULL;
}

struct gated_listener *
hold_expire_next(struct gate *g, uint64_t now)
{
	struct queued_conn *c;
	struct gate_vs *v;

	for (c = g->held_head; c; c = c->next) {
		if (now < c->deadline)
			continue;
		/* its params did not all come in time: never held forever */
		try_classify(g, c, &v, 1, &g->attrs_timeout);
		return release(g, c, v, now);
	}
	return NULL;
}

void
hold_close(struct gate *g, struct gated_listener *l)
{
	struct queued_conn *c, *next;

	for (c = g->held_head; c; c = next) {
		next = c->next;
		if (l && c->held_l != l)
			continue;
		epoll_ctl(g->hold_epfd, EPOLL_CTL_DEL, c->fd, NULL);
		held_unlink(g, c);
		close(c->fd);
		free(c);
	}
	if (!l && g->hold_open) {
		close(g->hold_epfd);
		g->hold_open = 0;
	}
}
