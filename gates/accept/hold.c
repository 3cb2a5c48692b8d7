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
 * - At most FCGI_PEEK_MAX bytes are peeked; params longer than that are
 *   classified by the attributes in the part that fits.
 * - Not FastCGI, or malformed: classified by the requester, as without
 *   content rules. No content rule matches: the same.
 * - The params have not all arrived within the bound (the rule file's, or
 *   the default rules_wants_attrs() gives): served from the home VS. The
 *   bound is checked by gate_tick(), every 10 ms while anything is held, so
 *   it is kept within 10 ms.
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

/* not on the stack: 24 KiB, and the gate is single-threaded */
static uint8_t peekbuf[FCGI_PEEK_MAX];
static struct fcgi_params params;

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

/*
 * Look at what c sent so far. 1 if c is classified (c->vs_id, by_content
 * set; the caller queues it), 0 if its params are still to come. eof: the
 * peer will send nothing more.
 */
static int
try_classify(struct gate *g, struct queued_conn *c, struct gate_vs **out, int eof)
{
	struct rules_req_attrs a;
	enum fcgi_status s;
	ssize_t n;

	*out = NULL;
	n = recv(c->fd, peekbuf, sizeof(peekbuf), MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !eof)
		return 0;
	if (n <= 0) {
		/* gone, or closed without a word: home, where pick() drops it
		 * (conn_dead) or the service sees the end of file */
		return 1;
	}
	s = fcgi_parse(peekbuf, (size_t)n, &params);
	if (s == FCGI_MORE && (size_t)n < sizeof(peekbuf) && !eof)
		return 0;
	if (s == FCGI_BAD) {
		g->attrs_bad++;
		*out = requester(g, c);
		return 1;
	}
	a.host = params.http_host ? params.http_host : params.server_name;
	a.docroot = params.docroot;
	a.script = params.script;
	if ((*out = gate_decide_attrs(g, requester(g, c), &a))) {
		c->by_content = 1;
		g->by_content++;
	} else {
		g->attrs_nomatch++;
		*out = requester(g, c);
	}
	return 1;
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
	if (try_classify(g, c, &v, 0)) {
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

/* c leaves the held set for v's queue (home's if NULL). */
static void
release(struct gate *g, struct queued_conn *c, struct gate_vs *v, uint64_t now)
{
	struct gated_listener *l = c->held_l;

	epoll_ctl(g->hold_epfd, EPOLL_CTL_DEL, c->fd, NULL);
	held_unlink(g, c);
	gate_enqueue(g, l, c, v, now);
	gate_released(g, l);
}

void
gate_hold_ready(struct gate *g)
{
	struct epoll_event ev[64];
	struct gate_vs *v;
	uint64_t now = 0;
	int n, i;

	if (!g->hold_open)
		return;
	n = epoll_wait(g->hold_epfd, ev, (int)ARRAY_SIZE(ev), 0);
	for (i = 0; i < n; i++) {
		struct queued_conn *c = ev[i].data.ptr;
		int eof = !!(ev[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR));

		if (!try_classify(g, c, &v, eof))
			continue;
		if (!now)
			now = now_ns();
		release(g, c, v, now);
	}
}

int
hold_expire(struct gate *g, uint64_t now)
{
	struct queued_conn *c, *next;

	for (c = g->held_head; c; c = next) {
		next = c->next;
		if (now < c->deadline)
			continue;
		/* its params did not come in time: home, never held forever */
		g->attrs_timeout++;
		release(g, c, NULL, now);
	}
	return g->nheld > 0;
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
