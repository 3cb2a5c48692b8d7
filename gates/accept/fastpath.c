// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fast path: answer an accept with SECCOMP_USER_NOTIF_FLAG_CONTINUE
 * whenever the kernel would hand out the connection the gate would choose,
 * and hand over with ADDFD (handover.c) only when the order must change. A
 * hand-over costs the service a wake-up by a plain complete() (45-50 µs
 * here); a CONTINUE is a NOTIF_SEND, which honours the sync wake-up flag.
 *
 * The gate learns the kernel's accept queue without accepting from it: the
 * socket gate appends each connection to a registered listener to that
 * listener's ring, in the softirq that queues it, before the listener is
 * woken (gates/socket/socket.h, "Gated listeners"); and when a thread's
 * accept returns one of them, programs vsd loads and we attach
 * (gates/socket/records.bpf.c, records.c) append an accept record (the thread, the connection, its VS) to the same
 * ring. The gate keeps a model of the
 * queue: the arrivals it has read, in order, that it does not know to be
 * accepted (q), and the connections it has promised to threads it let
 * through (pr, expect of them), each promise kept when an accept record
 * names it. The model is trusted while the kernel's count (tcpi_unacked)
 * equals qn + expect: a record that lags its connection (either kind)
 * makes them differ, so no connection is hidden from the model.
 *
 * Three answers, for an accept with nothing in the gate's own queues (the
 * choice is fp-decision.c's, without I/O, from what this file read of the
 * model and the listener, struct fp_view; this file carries it out):
 * - connections queued, and the VS of the kernel's head is the one the gate
 *   would pick (the same order as queue.c: rank, aged by the wait): re-bind
 *   the thread to it if needed, CONTINUE; the kernel hands out that head;
 * - nothing queued, a blocking listener, no other thread let through, and
 *   the latest FP_RUN arrivals of the VS the thread sits in: let the
 *   thread block in the kernel's accept (a "direct" waiter). An arrival of
 *   that VS needs nothing from us (its record is read at the thread's next
 *   accept); for one of another VS the ring wakes the gate
 *   (vsd_ringctl.wake), and the gate moves the thread. The thread is woken
 *   by the same softirq and may run before the gate has moved it: the CPU
 *   it spends meanwhile stays in its previous VS, measured per such move
 *   (the thread's own CPU time, schedstat) and reported by status;
 * - otherwise: the drain and hand-over (drain.c, handover.c). A drained connection takes
 *   its VS from its ring record (matched by SO_COOKIE).
 *
 * Races, and what they cost:
 * - two final ACKs on two CPUs can queue in one order and reach the ring
 *   in the other. Records closer than FP_CLOSE_NS apart of different VSs
 *   are taken as of unknown order: no CONTINUE for such a head (drain
 *   instead); a direct waiter takes what the kernel gives it, so at most
 *   its one request is charged to the other VS, and the model is then
 *   dropped until a drain has emptied the queue. A CPU that stalls longer
 *   than FP_CLOSE_NS between queueing a connection and recording it (a
 *   vCPU preempted by its host) can still invert two records: a thread let
 *   through for one takes the other. Its accept record shows it: counted
 *   (misordered) if the VS differs, and the model is dropped, so the order
 *   got wrong costs that one request. Threads let through for the same
 *   model are all of one VS (expect_vs), so none of them can take a
 *   second connection of another VS from the same inversion, as long as
 *   the gate does not drain the queue under them: after a drop it waits
 *   until they have dequeued (or FP_EXPECT_NS), since a drain would take
 *   their promised connections and leave them the next arrivals, of any
 *   VS (seen under a loaded VM: two requests misattributed by one race);
 * - a record lags its connection in the queue by the softirq's few us
 *   (TCP Fast Open's precedes it), an accept record its dequeue by the
 *   rest of the accept call: the counts disagree, no CONTINUE;
 * - a Fast Open connection is queued at its SYN, before its handshake
 *   ends; the socket gate records the connecting side as its SYN leaves,
 *   so its record is there, but its arrival may still lag: no thread
 *   waits in the kernel's accept on a listener with Fast Open on
 *   (tfo_listener), and the drain looks its VS up when it takes it
 *   (tests/gate-tfo.sh);
 * - a client that resets while queued stays in the kernel's queue (accept
 *   returns it); seen to drop the model once (tests/gate-fast.sh), which
 *   costs a drain, not a misattribution;
 * - a thread killed between our CONTINUE and its dequeue, or interrupted:
 *   another thread takes the promised connection (threads let through
 *   together may take each other's), or, if none does within FP_EXPECT_NS,
 *   the promise is forgotten, the model dropped and the drain takes over;
 * - the listener's identity: listener.c knows a thread's listener by its
 *   descriptor number, checked with kcmp() before reuse, except right
 *   after the listener's ring showed the thread's previous accept taking
 *   one of its connections (fd_seen). A service that puts another socket
 *   on that number in between has its next accept taken for the old
 *   listener's: that request. The other listener's record shows it
 *   (on_record): an accept outside the gate's decision, counted (fd_moved,
 *   and outside), logged, and the thread moved to the connection's VS if
 *   it is still serving it (fp-model.c, outside_apply()); read after the
 *   thread's next accept, whose kcmp found the number changed with no
 *   record come (fd_unseen), it is counted and logged, the request over.
 * The kernel hands out each connection once whatever we believe: a wrong
 * belief misattributes, it never loses or doubles a connection, and every
 * misattributed request is one the gate counts (direct_moved, misordered,
 * fd_moved), unless records were lost (a full ring, counted by the socket
 * gate; the model is dropped then too).
 */
#include "config.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "decision.h"
#include "fp.h"

/*
 * While a thread waits in the kernel: wake us for an arrival of a VS other
 * than vs, the one it sits in (it must be moved; one of vs needs nothing,
 * and we read its record at the thread's next accept), or for every
 * arrival while other threads wait in the gate (they must be served).
 */
static void
wake_set(struct gated_listener *l, uint32_t vs)
{
	__atomic_store_n(&l->fp->ctl->wake, l->wait_head || !vs ? VSD_WAKE_ALWAYS : vs,
	    __ATOMIC_SEQ_CST);
}

/* What the choice (fp-decision.c) reads of f, l and th. */
static struct fp_view
view(struct gate *g, struct gated_listener *l, uint32_t bound)
{
	struct fp_listener *f = l->fp;

	return (struct fp_view){
		.records = fp_records_on(), .fed = f->fed, .want_attrs = g->want_attrs,
		.queued = l->queued != 0, .held = l->held != 0, .direct = f->direct != NULL,
		.on = g->fast == GATE_FAST_ON, .kq = -1,
		.lost = f->lost, .expect = f->expect, .expect_vs = f->expect_vs, .q = f->q,
		.qh = f->qh, .qn = f->qn, .qcap = QCAP, .run_vs = f->run_vs,
		.run_len = f->run_len, .nonblock = -1, .bound = bound,
	};
}

static void
count_rule(struct gate *g, int rule)
{
	if (rule >= 0 && (unsigned)rule < ARRAY_SIZE(g->decided))
		g->decided[rule]++;
}

/*
 * New rules (a push from vsd): the direct waiter sits, blocked in the
 * kernel's accept, in the VS the old rules chose for its run's arrivals,
 * and an arrival of that VS does not wake us. So move it now, where the new
 * rules put those arrivals: it cannot run before the move completes, and
 * the next connection of the run is served under the rules in force.
 * Arrivals of other VSs still wake us as before.
 */
void
fp_rules_changed(struct gate *g, struct gated_listener *l)
{
	struct fp_listener *f = l->fp;
	struct decision_state s;
	struct fp_view v;
	struct fp_decision a;

	if (!f || !f->direct)
		return;
	v = view(g, l, f->direct->bound);
	gate_decision_state(g, &s);
	a = fp_decide_rules(&s, &v);
	count_rule(g, a.rule);
	trace_fp(g, l, f->direct, "rules", &v, &a);
	if (a.kind == FP_MOVE)
		gate_bind(g, f->direct, &a.where);
}

/* Fast Open on the listener (set by the service, or for all listeners by
 * net.ipv4.tcp_fastopen), read when it matters: a service may set it after
 * listen(). No thread may wait in the kernel on it (the header's races). */
static int
tfo_listener(int fd)
{
	int qlen = 0;
	socklen_t sl = sizeof(qlen);

	return getsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN, &qlen, &sl) == 0 && qlen > 0;
}

/*
 * May no thread wait in the kernel on l: a non-blocking listener (only a
 * blocking call may wait), or one with Fast Open? Read at most every
 * FP_FLAGS_NS, not at each accept that finds the queue empty (two system
 * calls): a service that changes either on a listener it serves is seen
 * that much later. Until then a thread may be let into the kernel's accept
 * once more: on a non-blocking listener the kernel answers EAGAIN itself,
 * as the call's semantics want, and the thread's next accept ends the wait
 * we believed in (an arrival of another VS meanwhile moves it for nothing,
 * and its promise lapses after FP_EXPECT_NS, the model with it); with Fast
 * Open that thread is subject to the header's race (counted).
 */
static int
no_wait(struct fp_listener *f, int fd, uint64_t now)
{
	int fl;

	if (f->no_wait_t && now - f->no_wait_t < FP_FLAGS_NS)
		return f->no_wait;
	f->no_wait = (fl = fcntl(fd, F_GETFL)) < 0 || (fl & O_NONBLOCK) || tfo_listener(fd);
	f->no_wait_t = now;
	return f->no_wait;
}

/* th was let through for the connection cookie (0: whichever comes) */
static void
promise(struct fp_listener *f, struct service_thread *th, uint64_t cookie)
{
	th->fp_id = f->id;
	th->fp_gen = f->gen;
	th->fp_cookie = cookie;
	th->fp_vs = th->bound;
}

/*
 * Let th's accept (notification id) through, for the model's head or, with
 * nothing queued, as the direct waiter, as the choice says (fp-decision.c).
 * 1: answered; 0: the caller takes the drain path (or waits).
 */
static int
fp_let_through(struct gate *g, struct gated_listener *l, struct service_thread *th,
    uint64_t id, uint64_t now)
{
	struct fp_listener *f = l->fp;
	struct fp_view v = view(g, l, th->bound);
	struct decision_state s;
	struct fp_decision a;
	struct gate_vs *to;
	int fl;

	if (!fp_may(&v))
		return 0;
	/* wake us for the next arrival before we look at the queue for the
	 * last time, in case this thread is to wait in the kernel: an
	 * arrival after the look then wakes us */
	if (v.on)
		wake_set(l, th->bound);
	fl = fp_sync(g, l, now);
	v = view(g, l, th->bound);	/* the model as the ring has it now */
	v.kq = fl;
	gate_decision_state(g, &s);
	a = fp_decide_accept(&s, &v);
	if (a.kind == FP_ASK_NONBLOCK) {
		/* read only when nothing is queued: the call's own semantics */
		v.nonblock = no_wait(f, l->fd, now);
		a = fp_decide_accept(&s, &v);
	}
	count_rule(g, a.rule);
	trace_fp(g, l, th, "accept", &v, &a);
	if (a.kind == FP_DIRECT) {
		f->direct = th;
		th->direct_l = l;
		guard_live(f, 1);
		charge_settle(g, th);
		f->direct_cpu = th->cpu_mark;
		if (gate_continue(g, id) < 0)
			fp_direct_end(f);	/* interrupted meanwhile */
		else
			promise(f, th, 0);
		return 1;
	}
	if (v.on)
		__atomic_store_n(&f->ctl->wake, VSD_WAKE_NEVER, __ATOMIC_SEQ_CST);
	if (a.kind != FP_HEAD)
		return 0;
	gate_vs_active(g, a.active, now);
	to = gate_bind(g, th, &a.where);
	if (gate_continue(g, id) < 0)
		return 1;	/* interrupted: it took nothing, the model stands */
	promise(f, th, a.head->cookie);
	if (to)
		to->served++;
	g->fp_continued++;
	f->expect_vs = a.head->vs;
	f->pr[f->expect++] = *a.head;
	f->expect_t = now;
	fp_q_pop(f);
	return 1;
}

/*
 * th, let through before, calls accept again: the record of what it took
 * then is in its listener's ring by now (written as that call returned), or
 * it took nothing (interrupted, or a non-blocking call that found the queue
 * empty). Apply it now, so that no later record of th (a hand-over) is
 * taken for it; its promise, if it took nothing, waits for another thread
 * or for FP_EXPECT_NS.
 */
static void
fp_settle(struct gate *g, struct gated_listener *l, struct service_thread *th, uint64_t now)
{
	struct gated_listener *o = l;

	/* Mostly the listener it accepts on again; the id, not a pointer kept
	 * in th, since a listener can go while a thread is let through. */
	if (!o || !o->fp || o->fp->id != th->fp_id)
		for (o = g->listeners; o; o = o->next)
			if (o->fp && o->fp->id == th->fp_id)
				break;
	if (o)
		fp_read(g, o, now);
	/* no record: it took nothing; let through before a drop, it no
	 * longer waits to dequeue */
	if (o && th->fp_id && th->fp_gen != o->fp->gen && o->fp->void_n)
		o->fp->void_n--;
	th->fd_unseen = th->fp_id != 0;	/* fp_events() clears it for a record */
	th->fp_id = 0;
}

/*
 * th calls accept again, on whichever descriptor: it no longer waits in the
 * kernel where it did (with the connection the ring told us of, or without:
 * a signal, or its descriptor names another listener now), and what it took
 * when let through is in that listener's ring by now.
 */
void
fp_thread_settle(struct gate *g, struct service_thread *th)
{
	struct gated_listener *d = th->direct_l;
	uint64_t now = now_ns();

	if (d && d->fp && d->fp->direct == th) {
		/* its accept record, once read, says what it took (its
		 * arrival's record comes before it in the ring): then the
		 * kernel's count need not be asked for a lagging record; the
		 * choice that follows asks it anyway */
		fp_read(g, d, now);
		if (d->fp->direct == th || th->fp_id)
			fp_sync(g, d, now);
		if (d->fp->direct == th)
			fp_direct_end(d->fp);
	}
	if (th->fp_id)
		fp_settle(g, th->last_l, th, now);
}

int
fp_accept(struct gate *g, struct gated_listener *l, struct service_thread *th, uint64_t id)
{
	return !l->wait_head && fp_let_through(g, l, th, id, now_ns());
}

int
fp_ready(struct gate *g, struct gated_listener *l, int serve)
{
	struct fp_listener *f = l->fp;
	uint64_t now = now_ns();

	/* the ring woke us for a thread waiting in the kernel, or the
	 * listener is readable with nobody to serve: bring the model up */
	if (f->direct || !l->wait_head)
		fp_sync(g, l, now);
	while (serve && l->wait_head && fp_let_through(g, l, l->wait_head->th, l->wait_head->id, now))
		waiter_del(g, l->wait_head);
	if (!l->wait_head)
		return 1;
	if (f->direct)
		wake_set(l, 0);	/* threads wait in the gate now */
	/* threads wait; the drain may run only if nobody else can dequeue */
	return f->expect || f->direct || fp_voided(f);
}
