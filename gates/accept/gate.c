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
 * - a client that disconnected while queued is closed, not handed over;
 * - a listener shut down: what was queued is handed over, then each caller
 *   gets EINVAL, as from the kernel, at the next slow tick (fail_if_shut).
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

#include "decision.h"
#include "gate.h"
#include "profile.h"
#include "lib/log.h"

#define GATE_REFRESH_MS		2000	/* a --vs-table file is read this often */
#define GATE_IDLE_HOME_MS	100	/* a thread waiting this long goes home */
#define GATE_LISTEN_GC_MS	5000	/* drop our dup of an unused listener */
#define GATE_ACTIVE_NS		10000000000ull	/* keep sampling a VS 10 s after its last connection */
#define GATE_BUSY_NS		1000000000ull	/* tick every 10 ms for 1 s after a connection */

static struct seccomp_notif *req;
static struct seccomp_notif_resp *resp;
static size_t req_size;
static uint32_t native_arch;

/*
 * The per-accept path, top to bottom: gate_notify() takes one notification;
 * an accept goes to handle_accept(), which finds the listener (listener.c),
 * asks the fast path (fastpath.c), else drains the kernel queue into the
 * per-VS queues (drain.c, enqueue.c), picks the best queue (drain.c) and
 * hands the connection over (handover.c, place.c); callers that must wait
 * are served when the listener becomes readable (gate_listener_ready).
 * This file is the shell: the files it calls never call back into it, and
 * what they find for it to do they return (hold.c's released listeners,
 * rebind.c's forgotten threads). Housekeeping (init, the tick) comes last.
 */
static void handle_accept(struct gate *g, int is_accept4);
static void handle_socket(struct gate *g);
static void handle_listen(struct gate *g);
static void handle_bind(struct gate *g);
static void serve_waiters(struct gate *g, struct gated_listener *l);
static void listener_ready(struct gate *g, struct gated_listener *l, int fast);
static void tick_waiters(struct gate *g, struct gated_listener *l, uint64_t now);
static void reap(struct gate *g);
static struct service_thread *thread_of(struct gate *g, pid_t tid, int *is_new);

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
	case SYS_bind:
		handle_bind(g);
		break;
	default:
		gate_let_through(g, req->id);
	}
	return 0;
}

static void
handle_accept(struct gate *g, int is_accept4)
{
	struct pending_accept *w;
	struct service_thread *th;
	struct gated_listener *l;
	int is_new, not_ours, fl, tried, wk;
	int flags = is_accept4 ? (int)req->data.args[3] : 0;

	PROF_BEGIN();
	th = thread_of(g, (pid_t)req->pid, &is_new);
	PROF_MARK(PROF_THREAD);
	if (!th) {
		gate_let_through(g, req->id);	/* it is gone; SEND says ENOENT */
		return;
	}
	/* the pidfd was opened after the notification: is it still that thread? */
	if (is_new && !gate_id_valid(g, req->id))
		return;
	if (th->waiter)		/* it was interrupted; a thread waits once */
		waiter_del(g, th->waiter);
	if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) {
		gate_respond(g, req->id, -EINVAL, 0);
		return;
	}
	if (th->fp_id || th->direct_l)	/* before listener_get: it may confirm th's listener */
		fp_thread_settle(g, th);
	/* a worker came back (after the settling, which may say what it took):
	 * what its VS's limit held back may go to those waiting */
	wk = workers_on(&g->wk, g->rules, g->rules_hash);
	if (workers_back(&g->wk, th) && wk)
		for (l = g->listeners; l; l = l->next)
			serve_waiters(g, l);
	l = listener_get(g, th, (int)req->data.args[0], &not_ours);
	PROF_MARK(PROF_LISTENER);
	if (!l || not_ours) {
		gate_let_through(g, req->id);
		return;
	}
	/* a worker limit: the gate chooses every connection (workers.c) */
	tried = l->fp && !l->wait_head && !wk;	/* fp_accept() tries only then */
	PROF_RESTART();
	if (l->fp && !wk && fp_accept(g, l, th, req->id)) {
		PROF_MARK(PROF_FAST);
		l->last_use = now_ns();
		pmqos_note(g, l->last_use);
		return;
	}
	if (!(w = calloc(1, sizeof(*w)))) {
		gate_respond(g, req->id, -ENOMEM, 0);
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

	listener_ready(g, l, !tried && !wk);
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
		gate_respond(g, w->id, -EAGAIN, 0);
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

	if (!(th = thread_of(g, (pid_t)req->pid, &is_new))) {
		gate_let_through(g, req->id);
		return;
	}
	/* the pidfd was opened after the notification: is it still that thread? */
	if ((is_new && !gate_id_valid(g, req->id)) || (sfd = pidfd_getfd(th->pidfd, fd, 0)) < 0) {
		gate_let_through(g, req->id);
		goto out;
	}
	if ((dom = listener_family(sfd)) != AF_INET && dom != AF_INET6) {
		close(sfd);
		gate_let_through(g, req->id);
		goto out;
	}
	if (listener_port_bound(sfd) && (dfd = fcntl(sfd, F_DUPFD_CLOEXEC, 3)) >= 0)
		l = listener_of(g, dfd, 1, &fresh);
	if (listen(sfd, (int)req->data.args[1]) < 0) {
		if (l && fresh)
			listener_unlink(g, l);
		close(sfd);
		gate_let_through(g, req->id);
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
	gate_respond(g, req->id, 0, 0);
out:
	/* a thread that only listened is not one the gate serves: kept, it
	 * would count as a sibling busy serving (thread_move_disturbs()), and
	 * where a move takes the whole process no idle thread of it would go
	 * home */
	if (is_new) {
		thread_forget(th);
		reap(g);
	}
}

/*
 * bind(): a service that closed a TCP listener and binds its port again (a
 * graceful reload) would get EADDRINUSE while our dup of the closed one
 * still listens there, and the new listener's registration would find the
 * old one's: a listener the service no longer has is let go first
 * (listener_release_port()). The call goes on in the kernel.
 */
static void
handle_bind(struct gate *g)
{
	struct sockaddr_storage ss;
	size_t len = req->data.args[2] < sizeof(ss) ? (size_t)req->data.args[2] : sizeof(ss);
	struct iovec lo = { &ss, len };
	struct iovec re = { (void *)(uintptr_t)req->data.args[1], len };

	memset(&ss, 0, sizeof(ss));
	if (g->listeners && len > offsetof(struct sockaddr_in, sin_port) + sizeof(in_port_t) &&
	    process_vm_readv((pid_t)req->pid, &lo, 1, &re, 1, 0) == (ssize_t)len)
		listener_release_port(g, &ss);
	gate_let_through(g, req->id);
}

/* Ask the decision for each waiter in turn, and carry out its answer. */
static void
serve_waiters(struct gate *g, struct gated_listener *l)
{
	struct decision_state s;

	gate_decision_state(g, &s);
	while (l->wait_head) {
		struct pending_accept *w = l->wait_head;
		struct decision d = decide_accept(&s, l, w->th->bound);

		trace_decision(g, l, w, &d);
		if (d.kind == DECIDE_EMPTY)
			break;
		if (gate_drop_dead(g, d.c))
			continue;
		gate_handover(g, w, &d);
	}
}

void
gate_hold_ready(struct gate *g)
{
	struct gated_listener *l;

	while ((l = hold_ready_next(g)))
		gate_released(g, l);
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

static void
listener_ready(struct gate *g, struct gated_listener *l, int fast)
{
	/* the fast path first; while threads it let through may still take
	 * queued connections, only our own queues are served */
	if (!l->fp || !fp_ready(g, l, fast))
		gate_drain(g, l);
	serve_waiters(g, l);
}

void
gate_listener_ready(struct gate *g, struct gated_listener *l)
{
	listener_ready(g, l, !workers_on(&g->wk, g->rules, g->rules_hash));
}

static void
handle_socket(struct gate *g)
{
	struct service_thread *th;
	struct gate_vs *v;
	int is_new;

	/* lazy cgroup2 move: only a bound thread creating a socket needs it */
	if ((th = thread_of(g, (pid_t)req->pid, &is_new)) && th->bound &&
	    (v = vs_table_find(&g->tab, th->bound)))
		bind_cgroup2(th, v);
	gate_let_through(g, req->id);
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
	gate_answer_init(resp);
	listener_init();
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
			trace_rekey(g, l);
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
	if (g->nheld) {
		while ((l = hold_expire_next(g, now)))
			gate_released(g, l);
		busy = g->nheld > 0 || busy;
	}
	if (now - last_slow >= 100000000ull) {
		last_slow = now;
		for (pl = &g->listeners; (l = *pl);) {
			tick_waiters(g, l, now);
			if (!l->wait_head && !l->queued && !l->held &&
			    now - l->last_use > GATE_LISTEN_GC_MS * 1000000ull &&
			    !listener_in_use(l)) {
				*pl = l->next;	/* the service has closed it */
				listener_drop(l);
				continue;
			}
			pl = &l->next;
		}
	}
	if (now - last_sweep >= 1000000000ull) {
		last_sweep = now;
		thread_sweep();
	}
	reap(g);	/* those, and threads fp_tick() found with their TID reused */
	/* a --vs-table file is read again; vsd pushes its changes */
	if (g->table_file && (g->refresh_asked ||
	    now - g->last_refresh >= GATE_REFRESH_MS * 1000000ull))
		gate_refresh(g, 1);
	pmqos_tick(g, now);
	dbthreads_settle(g, 0);
	return soon ? 1 : queued || busy ? 10 : 100;
}

/* The thread behind a notification, with the threads its lookup forgot
 * already ended above the cache. */
static struct service_thread *
thread_of(struct gate *g, pid_t tid, int *is_new)
{
	struct service_thread *th = thread_get(tid, is_new);

	reap(g);
	return th;
}

/* Threads the cache forgot (rebind.c): their pending accept (their
 * notification died with them) and their fast path state end, then they go. */
static void
reap(struct gate *g)
{
	struct service_thread *th;

	while ((th = thread_reap())) {
		if (th->waiter)
			waiter_del(g, th->waiter);
		fp_thread_gone(th);
		workers_thread_gone(&g->wk, th);
		thread_free(th);
	}
}

/*
 * A listener shut down listens no more, and polls as hung up, not readable
 * (the kernel's accept fails with EINVAL): no readiness comes for it, and
 * with a thread waiting in the kernel it is not polled at all. So the tick
 * gives its waiters that EINVAL, once what was queued is served.
 */
static void
fail_if_shut(struct gate *g, struct gated_listener *l)
{
	int on = 1;
	socklen_t sl = sizeof(on);

	if (!l->wait_head || l->queued ||
	    getsockopt(l->fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &sl) < 0 || on)
		return;
	while (l->wait_head) {
		gate_respond(g, l->wait_head->id, -EINVAL, 0);
		waiter_del(g, l->wait_head);
	}
}

static void
tick_waiters(struct gate *g, struct gated_listener *l, uint64_t now)
{
	struct pending_accept *w, *next;
	struct gate_vs *home = vs_table_find(&g->tab, g->home);

	fail_if_shut(g, l);
	for (w = l->wait_head; w; w = next) {
		next = w->next;
		if (!gate_id_valid(g, w->id)) {
			waiter_del(g, w);	/* interrupted by a signal */
			continue;
		}
		/* serving nobody: back to the home VS, off the hot path. Not
		 * where that moves the whole process while another of its
		 * threads serves a request, which would then run at home. A
		 * database's accepting thread never left home (dbthreads.c). */
		if (home && w->th->bound != g->home && !gate_db_mode(g) &&
		    now - w->t >= GATE_IDLE_HOME_MS * 1000000ull &&
		    !thread_move_disturbs(w->th) &&
		    bind_thread(w->th, home) == 1)
			charge_settle(g, w->th);
	}
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
		listener_drop(l);
	}
}
