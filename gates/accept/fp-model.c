// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fast path's model of each listener's kernel accept queue, kept from
 * the ring the socket gate writes (fastpath.c describes it, and the races
 * it allows): the arrivals read and not known to be accepted (q), the
 * connections promised to threads let through (pr, expect of them),
 * cookies drained before their record was read (early), cookies handed
 * over (handed), and the accepts the gate did not answer (out).
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "fp.h"
#include "lib/log.h"

static int handed_take(struct fp_listener *f, uint64_t cookie);
static void outside_add(struct fp_listener *f, const struct vsd_arrival *a,
    enum fp_out_kind kind);
static int q_find(struct fp_listener *f, uint64_t cookie);
static void q_remove(struct fp_listener *f, unsigned i);

/* Was th let through for another listener before its descriptor named f's,
 * as its next accept found (listener_get())? (once) */
static int
fd_moved_take(struct service_thread *th, const struct fp_listener *f)
{
	if (th->fd_moved_to != f->id)
		return 0;
	th->fd_moved_to = 0;
	return 1;
}

/* threads let through whose accept record was not read when they ended */
static pid_t gone[FP_GONE];
static unsigned gone_i;

/* Was tid let through and has it ended since? (once) */
static int
gone_take(pid_t tid)
{
	unsigned i;

	for (i = 0; i < FP_GONE; i++)
		if (gone[i] == tid) {
			gone[i] = 0;
			return 1;
		}
	return 0;
}

int
fp_on_record(void *ctx, void *data, size_t len)
{
	struct fp_listener *f = ctx;
	const struct vsd_arrival *a = data;
	unsigned i;

	if (len < sizeof(*a))
		return 0;
	if (a->tid) {		/* an accept: applied after the read (fp_sync) */
		struct service_thread *th = thread_find((pid_t)a->tid);
		int j;

		if (!th || !th->fp_id) {
			/* not let through by us: the connection has left the
			 * queue all the same. Not an accept outside the
			 * gate's decision if we handed it over (the
			 * tracepoint records the accept that returned it), or
			 * let the thread through before it ended (its record
			 * read late). Let through for another listener before
			 * the service put this one on its descriptor, it is
			 * one, read after the thread's next accept */
			if ((j = q_find(f, a->cookie)) >= 0)
				q_remove(f, (unsigned)j);
			else
				f->early[f->early_i++ % FP_EARLY] = a->cookie;
			if (th ? handed_take(f, a->cookie) : gone_take((pid_t)a->tid))
				return 0;
			outside_add(f, a, th && fd_moved_take(th, f) ?
			    FP_OUT_MOVED_DONE : FP_OUT_UNANSWERED);
			return 0;
		}
		if (th->fp_id != f->id) {
			/* not let through here: the connection has left the
			 * queue all the same (a hand-over's was drained) */
			if ((j = q_find(f, a->cookie)) >= 0)
				q_remove(f, (unsigned)j);
			else
				f->early[f->early_i++ % FP_EARLY] = a->cookie;
			/* let through for another listener, it took one of
			 * ours: its descriptor names this one now. No longer
			 * in that listener's accept: as its direct waiter, a
			 * connection there would move it off this one's VS */
			if (th->direct_l && th->direct_l->fp && th->direct_l->fp->direct == th)
				fp_direct_end(th->direct_l->fp);
			outside_add(f, a, FP_OUT_MOVED);
			th->last_l = NULL;
			th->fd_seen = 0;
			return 0;
		}
		if (f->nev == FP_EVENTS)
			f->ev_lost = 1;
		else
			f->ev[f->nev++] = *a;
		return 0;
	}
	for (i = 0; i < FP_EARLY; i++)
		if (f->early[i] == a->cookie) {	/* drained before we read it */
			f->early[i] = 0;
			f->fed = 1;
			return 0;
		}
	if (f->qn == QCAP) {
		f->lost = 1;
		return 0;
	}
	f->q[(f->qh + f->qn++) % QCAP] = (struct fp_entry){ a->cookie, a->t, a->vs_id };
	if (a->vs_id != f->run_vs) {
		f->run_vs = a->vs_id;
		f->run_len = 0;
	}
	f->run_len++;
	return 0;
}

void
fp_thread_gone(struct service_thread *th)
{
	if (th->fp_id)		/* its record may be read after this */
		gone[gone_i++ % FP_GONE] = th->tid;
	if (th->direct_l && th->direct_l->fp && th->direct_l->fp->direct == th)
		fp_direct_end(th->direct_l->fp);
	th->direct_l = NULL;
	th->fp_id = 0;
}

struct fp_entry *
fp_q_at(struct fp_listener *f, unsigned i)
{
	return &f->q[(f->qh + i) % QCAP];
}

void
fp_q_pop(struct fp_listener *f)
{
	f->qh = (f->qh + 1) % QCAP;
	f->qn--;
}

/*
 * The model is off: start again once the kernel's queue has been emptied.
 * The threads let through until now still take a connection each from the
 * kernel's head: until they have (their accept records), or FP_EXPECT_NS
 * has passed, the gate does not drain the queue under them (fp_ready,
 * fp_busy), or a promised connection would go to the drain and the thread
 * take the next arrival, of whichever VS: one race, two requests in the
 * wrong VS.
 */
void
fp_lose(struct gate *g, struct fp_listener *f)
{
	f->void_n += f->expect;
	f->void_t = now_ns();
	f->lost = 1;
	f->qn = 0;
	f->expect = 0;
	f->gen++;		/* the promises made so far are void */
	g->fp_resync++;
}

/* Threads let through before the last drop may still dequeue. */
int
fp_voided(const struct fp_listener *f)
{
	return f->void_n && now_ns() - f->void_t <= FP_EXPECT_NS;
}

void
fp_direct_end(struct fp_listener *f)
{
	if (f->direct)
		f->direct->direct_l = NULL;
	f->direct = NULL;
	guard_live(f, 0);
	__atomic_store_n(&f->ctl->wake, VSD_WAKE_NEVER, __ATOMIC_SEQ_CST);
}

/* The VS a record names, as the drain path would queue it (home if unknown). */
struct gate_vs *
fp_entry_vs(struct gate *g, const struct fp_entry *e)
{
	struct gate_vs *v = e->vs ? vs_table_find(&g->tab, e->vs) : NULL;

	return v ? v : vs_table_find(&g->tab, g->home);
}

/* The direct waiter took the model's head (it has, or will: it is the only
 * thread in the kernel's accept): re-bind it there, measure what it ran
 * in the VS it was in. */
static void
direct_took_head(struct gate *g, struct gated_listener *l, uint64_t now)
{
	struct fp_listener *f = l->fp;
	struct service_thread *th = f->direct;
	struct fp_entry *e = fp_q_at(f, 0);
	struct gate_vs *v;
	uint64_t cpu;

	/* two arrivals too close to tell apart, of different VSs: the thread
	 * may have the other one; serve it as the first, then drop the model */
	int unsure = f->qn > 1 && fp_q_at(f, 1)->vs != e->vs &&
	    (int64_t)(fp_q_at(f, 1)->t - e->t) < (int64_t)FP_CLOSE_NS;

	uint32_t was = th->bound;

	gate_vs_by_id(g, e->vs);	/* a VS created after our table was made */
	gate_vs_active(g, fp_entry_vs(g, e), now);
	if ((v = gate_rebind_vs(g, th, e->vs ? e->vs : g->home)))
		v->served++;
	workers_take(&g->wk, th, e->vs ? e->vs : g->home);	/* a limit set while it waited */
	/* the CPU it ran since it was let through, in the VS it was in: only
	 * an error if that was another VS. The move settled its account
	 * (gate_bind()), so th->cpu_mark is that CPU time, read just now: no
	 * second read, and none at all when it stays */
	cpu = th->cpu_mark;
	if (th->bound != was && cpu > f->direct_cpu) {
		uint64_t d = cpu - f->direct_cpu;

		g->fp_direct_moved++;
		g->fp_direct_cpu_ns += d;
		if (d > g->fp_direct_cpu_max)
			g->fp_direct_cpu_max = d;
	}
	g->fp_direct++;
	th->fp_cookie = e->cookie;	/* its accept record tells if it was */
	th->fp_vs = th->bound;
	if (f->expect == 0 || f->expect_vs != e->vs)
		f->expect_vs = f->expect ? 0 : e->vs;
	f->pr[f->expect++] = *e;
	f->expect_t = now;
	fp_q_pop(f);
	fp_direct_end(f);
	if (unsure)
		fp_lose(g, f);
}

static void
q_remove(struct fp_listener *f, unsigned i)
{
	for (; i + 1 < f->qn; i++)
		*fp_q_at(f, i) = *fp_q_at(f, i + 1);
	f->qn--;
}

static int
q_find(struct fp_listener *f, uint64_t cookie)
{
	unsigned i;

	for (i = 0; i < f->qn; i++)
		if (fp_q_at(f, i)->cookie == cookie)
			return (int)i;
	return -1;
}

/* cookie was promised: it is no more; 0 if it was not */
static int
pr_take(struct fp_listener *f, uint64_t cookie)
{
	unsigned i;

	for (i = 0; i < f->expect; i++)
		if (f->pr[i].cookie == cookie) {
			f->pr[i] = f->pr[--f->expect];
			return 1;
		}
	return 0;
}

/* A connection promised is still queued after all: back to the front. */
static void
pr_unpromise(struct fp_listener *f)
{
	if (f->qn == QCAP) {
		f->lost = 1;
		return;
	}
	f->qh = (f->qh + QCAP - 1) % QCAP;
	f->q[f->qh] = f->pr[--f->expect];
	f->qn++;
}

/*
 * Apply the accept records read (on_record keeps those of threads we let
 * through here): each says which connection a thread took, and of which
 * VS. If that VS is not the one we bound the thread to, its request began
 * in the wrong VS: counted (misordered). The connection should be one we
 * promised, to this thread or to another let through with it (they may
 * dequeue in any order; all theirs are of one VS): it is no longer
 * queued. If it is not, two connections were queued in the other order
 * than their records came (on two CPUs). Of one VS that costs nothing:
 * the one taken leaves the model, one promised goes back to its front.
 * Of two VSs (farther apart than FP_CLOSE_NS, else no thread is let
 * through by their order: a CPU stalled between queueing one and recording
 * it) the model is dropped. Records of promises made before the model was
 * last dropped count only for the VS.
 */
static void
fp_events(struct gate *g, struct gated_listener *l, uint64_t now)
{
	struct fp_listener *f = l->fp;
	unsigned i;
	int j;

	for (i = 0; i < f->nev; i++) {
		const struct vsd_arrival *a = &f->ev[i];
		struct service_thread *th = thread_find((pid_t)a->tid);
		uint32_t vs = a->vs_id ? a->vs_id : g->home;

		if (!th || th->fp_id != f->id)
			continue;
		th->fp_id = 0;
		th->fd_seen = f->id;	/* its descriptor was this listener then */
		if (th == f->direct) {	/* before we had read its arrival */
			struct gate_vs *v = vs_table_find(&g->tab, vs);

			fp_direct_end(f);
			g->fp_direct++;
			if (v)
				v->served++;
			workers_take(&g->wk, th, vs);	/* a limit set while it waited */
		}
		if (vs != th->fp_vs)
			g->fp_misordered++;
		if (th->fp_gen != f->gen) {	/* let through before a drop */
			if (f->void_n)
				f->void_n--;
			continue;
		}
		if (pr_take(f, a->cookie)) {
			f->expect_t = now;
			continue;
		}
		if ((j = q_find(f, a->cookie)) >= 0)
			q_remove(f, (unsigned)j);
		else	/* its arrival is yet to be read */
			f->early[f->early_i++ % FP_EARLY] = a->cookie;
		if (!th->fp_cookie)	/* the direct waiter, before its arrival */
			continue;
		if (vs == th->fp_vs && f->expect)
			pr_unpromise(f);
		else {
			fp_lose(g, f);
			if (f->void_n)	/* this one has dequeued */
				f->void_n--;
		}
	}
	f->nev = 0;
	if (f->ev_lost) {	/* more than FP_EVENTS threads in flight */
		f->ev_lost = 0;
		fp_lose(g, f);
	}
}

/* Is tid's process the service's: a descendant of ours? We are the
 * service's subreaper, so none of its processes leaves our tree; a
 * process that got a listener from it (SCM_RIGHTS) is not in it. */
static int
in_service(pid_t tid)
{
	pid_t p = tid, self = getpid();
	int depth;

	for (depth = 0; depth < 64 && p > 1; depth++)
		if ((p = proc_parent(p)) == self)
			return 1;
	return 0;
}

/*
 * An accept the gate did not decide (on_record), to be applied. One that a
 * thread let through for another listener made on this one is also one
 * "fd_moved" (fastpath.c, "the listener's identity"), counted here even if
 * the list is full.
 */
static void
outside_add(struct fp_listener *f, const struct vsd_arrival *a, enum fp_out_kind kind)
{
	if (kind != FP_OUT_UNANSWERED)
		f->fd_moved++;
	if (f->nout < FP_OUTSIDE)
		f->out[f->nout++] = (struct fp_out){ *a, kind };
	else
		f->out_lost++;
}

/* Is tid, let through for another listener, still serving the connection
 * of f's it took? Its next accept ends that (fp_settle()). */
static int
moved_serving(const struct fp_listener *f, pid_t tid)
{
	struct service_thread *th = thread_find(tid);

	return th && th->fp_id && th->fp_id != f->id;
}

/*
 * Accepts on l the gate did not decide (on_record): the service's own
 * thread took a connection without our CONTINUE (a race, or a way past the
 * filter), or one let through for another listener took one of l's (the
 * service put l on that descriptor number between two accepts: fd_moved),
 * or a process outside the service did, on a listener it was given. Each
 * is counted as "outside", the count vsctl services and the metrics show:
 * whatever the service does with its descriptors, no connection is served
 * unseen there. fd_moved says how many of them that way. A service thread
 * still serving the connection is moved to its VS, so the rest of its
 * request runs and is charged there (not one that has accepted again: the
 * gate is deciding its next connection); logged at most every
 * FP_OUTSIDE_LOG_NS.
 */
static void
outside_apply(struct gate *g, struct gated_listener *l, uint64_t now)
{
	static uint64_t logged_at, unlogged;
	struct fp_listener *f = l->fp;
	unsigned i;

	g->outside += f->out_lost;
	unlogged += f->out_lost;
	f->out_lost = 0;
	for (i = 0; i < f->nout; i++) {
		const struct vsd_arrival *a = &f->out[i].a;
		enum fp_out_kind kind = f->out[i].kind;
		uint32_t vs = a->vs_id ? a->vs_id : g->home;
		struct service_thread *th = NULL;
		struct gate_vs *v = NULL, *named;
		int is_new, mine = kind != FP_OUT_UNANSWERED || in_service((pid_t)a->tid);

		g->outside++;
		if (kind == FP_OUT_MOVED && !moved_serving(f, (pid_t)a->tid))
			kind = FP_OUT_MOVED_DONE;	/* applied after its next accept */
		if (mine && kind != FP_OUT_MOVED_DONE &&
		    (th = thread_get((pid_t)a->tid, &is_new)) && !th->waiter) {
			gate_vs_by_id(g, vs);
			if ((v = gate_rebind_vs(g, th, vs))) {
				v->served++;
				gate_vs_active(g, v, now);
			}
		}
		if (logged_at && now - logged_at < FP_OUTSIDE_LOG_NS) {
			unlogged++;
			continue;
		}
		named = vs_table_find(&g->tab, vs);
		log_warnx("port %u: thread %u %s accepted a connection of VS %s without the "
		    "gate%s; counted (status \"outside\"%s)%s (%llu more not logged)",
		    f->key.port, a->tid, mine ? "of the service" : "outside the service",
		    named ? named->name : "?",
		    kind == FP_OUT_UNANSWERED ? "" : " (let through for another listener, "
		    "whose descriptor number names this one now)",
		    kind == FP_OUT_UNANSWERED ? "" : ", \"fd_moved\"",
		    v ? ", re-bound there" : kind == FP_OUT_MOVED_DONE ?
		    ", not moved: it has accepted again" : ", not moved",
		    (unsigned long long)unlogged);
		logged_at = now;
		unlogged = 0;
	}
	f->nout = 0;
}

/* Read what the ring has, account for the direct waiter and for the
 * threads let through (their accept records). */
void
fp_read(struct gate *g, struct gated_listener *l, uint64_t now)
{
	struct fp_listener *f = l->fp;
	uint64_t dropped;

	ring_buffer__consume(f->rb);
	g->fp_fd_moved += f->fd_moved;
	f->fd_moved = 0;
	if (f->nout || f->out_lost)
		outside_apply(g, l, now);
	dropped = __atomic_load_n(&f->ctl->dropped, __ATOMIC_SEQ_CST);
	if (dropped != f->dropped) {
		f->dropped = dropped;
		fp_lose(g, f);
	}
	if (f->direct && f->qn > 0)
		direct_took_head(g, l, now);
	fp_events(g, l, now);
}

/*
 * Accepts nobody asked us about (outside the gate) are in the ring only:
 * read it on the tick too, while no thread of the service accepts.
 */
void
fp_tick(struct gate *g, struct gated_listener *l, uint64_t now)
{
	if (l->fp)
		fp_read(g, l, now);
}

/*
 * fp_read, then: the kernel's queue length, or -1 when it is unknown or the
 * model is off. A record lags its connection by a softirq's or an accept
 * call's few microseconds on another CPU: a mismatch with the model is read
 * again for up to FP_LAG_NS before we give up (the choice, fp-decision.c,
 * then drains), since a drain fills the gate's own queue, which keeps the
 * fast path off until it has been served.
 *
 * An empty model (nothing read and not accepted, nothing promised, no
 * record lost) is taken as an empty queue without asking the kernel: the
 * one system call the gate adds to most accepts of a busy VS. What the
 * question would catch is an arrival whose record lags by a few
 * microseconds. With nothing queued the choice is a thread let wait in the
 * kernel, or a wait in the gate for the listener to become readable: the
 * first may take that arrival at once, which is the direct waiter's race
 * (fastpath.c: the ring wakes us, we move it, the CPU it ran before is
 * counted in direct_cpu_usec), and the second is woken by the readiness.
 * So skipping the question adds to that race's window, never a connection
 * served where the gate did not see it. The kernel is still asked at least
 * every FP_ASK_NS, so that connections no record will ever name (the
 * socket gate's settings gone from the listener's VS) cannot go unseen
 * for longer: at the first mismatch the gate drains, as before.
 */
int
fp_sync(struct gate *g, struct gated_listener *l, uint64_t now)
{
	struct fp_listener *f = l->fp;
	uint64_t t = now;
	int qlen, d;

	for (;;) {
		fp_read(g, l, t);
		if (f->lost)
			return -1;
		if (f->qn == 0 && f->expect == 0 && f->fed && t - f->agreed_t < FP_ASK_NS)
			return 0;
		if ((qlen = gate_backlog(l->fd)) < 0)
			return -1;
		if (f->expect && t - f->expect_t > FP_EXPECT_NS) {
			f->expect = 0;	/* a thread let through died before its dequeue */
			fp_lose(g, f);
			return -1;
		}
		/* equal, unless a record lags its connection (either kind: an
		 * arrival or an accept), so that no connection is hidden */
		d = qlen - (int)f->qn;
		if (d == (int)f->expect) {
			f->agreed_t = t;
			return qlen;
		}
		if ((t = now_ns()) - now > FP_LAG_NS)
			return qlen;
	}
}

int
fp_drained(struct gated_listener *l, int fd, uint32_t *vs, uint64_t *cookie_out)
{
	struct fp_listener *f = l->fp;
	uint64_t cookie = 0;
	socklen_t sl = sizeof(cookie);
	unsigned i;

	if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &sl) < 0)
		return 0;
	*cookie_out = cookie;
	ring_buffer__consume(f->rb);
	for (i = 0; i < f->qn; i++) {
		struct fp_entry *e = fp_q_at(f, i);

		if (e->cookie != cookie)
			continue;
		*vs = e->vs;
		/* the ones before it are not in the kernel's queue (stale) */
		while (i-- > 0)
			fp_q_pop(f);
		fp_q_pop(f);
		f->fed = 1;
		return *vs != 0;
	}
	f->early[f->early_i++ % FP_EARLY] = cookie;
	return 0;
}

void
fp_handed(struct gated_listener *l, struct queued_conn *c)
{
	struct fp_listener *f = l->fp;
	socklen_t sl = sizeof(c->cookie);

	/* a held connection (hold.c) was drained without fp_drained() */
	if (!c->cookie && getsockopt(c->fd, SOL_SOCKET, SO_COOKIE, &c->cookie, &sl) < 0)
		return;
	if (f->hn == HCAP) {	/* the oldest: its record was read, or lost */
		f->hh = (f->hh + 1) % HCAP;
		f->hn--;
	}
	f->handed[(f->hh + f->hn++) % HCAP] = c->cookie;
}

/* Was cookie handed over? (once) Records come mostly in hand-over order. */
static int
handed_take(struct fp_listener *f, uint64_t cookie)
{
	unsigned i;

	for (i = 0; i < f->hn; i++)
		if (f->handed[(f->hh + i) % HCAP] == cookie)
			break;
	if (i == f->hn)
		return 0;
	f->handed[(f->hh + i) % HCAP] = 0;
	while (f->hn && !f->handed[f->hh]) {	/* taken ones at the front */
		f->hh = (f->hh + 1) % HCAP;
		f->hn--;
	}
	return 1;
}

void
fp_drain_done(struct gate *g, struct gated_listener *l)
{
	struct fp_listener *f = l->fp;
	int qlen = gate_backlog(l->fd);

	if (qlen == 0 && f->expect == 0 && !f->direct && !fp_voided(f)) {
		if (f->qn)	/* records of connections no longer queued */
			g->fp_stale += f->qn;
		f->qn = 0;
		f->lost = 0;
	}
}

int
fp_pollfd(const struct gated_listener *l)
{
	return l->fp && l->fp->direct ? l->fp->rb_fd : -1;
}

int
fp_busy(const struct gated_listener *l)
{
	return l->fp && (l->fp->expect > 0 || fp_voided(l->fp));
}

uint32_t
fp_listener_id(const struct gated_listener *l)
{
	return l->fp ? l->fp->id : 0;
}
