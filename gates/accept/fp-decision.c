// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fast path's choice, without I/O (decision.h): CONTINUE for the
 * kernel's head, a thread let wait in the kernel (the direct waiter), or
 * the drain; and, on new rules, whether the direct waiter must move. Its
 * state is struct fp_view, what fastpath.c read of the model of the
 * kernel's queue (fp-model.c) and of the listener; fastpath.c carries the
 * answer out and says why each case is safe. No system call, no global: a
 * trace replays through it (tests/unit/test-gate-decide.c).
 */
#include "config.h"

#include "decision.h"
#include "fp.h"

/* The VS an entry names, as the drain path would queue it (home if unknown). */
static struct gate_vs *
entry_vs(const struct decision_state *s, const struct fp_entry *e)
{
	struct gate_vs *v = e->vs ? vs_table_find(s->tab, e->vs) : NULL;

	return v ? v : vs_table_find(s->tab, s->home);
}

static const struct fp_entry *
at(const struct fp_view *v, unsigned i)
{
	return &v->q[(v->qh + i) % v->qcap];
}

/*
 * Is the model's head the connection the gate would serve first? By
 * queue.c's order: the VS's rank, plus GATE_AGE_BP_PER_MS a ms waited.
 */
static int
head_is_pick(const struct decision_state *s, const struct fp_view *v)
{
	const struct fp_entry *h = at(v, 0);
	struct gate_vs *hv = entry_vs(s, h);
	double hk = hv ? hv->rank_bp : 0;
	unsigned i;

	if (!h->vs || !vs_table_find(s->tab, h->vs))
		return 0;	/* another host's (its mark says), or a VS we do not know yet */
	if (v->qn > FP_SCAN)
		return 0;
	for (i = 1; i < v->qn; i++) {
		const struct fp_entry *e = at(v, i);
		struct gate_vs *ev;

		if (e->vs == h->vs)
			continue;
		if ((int64_t)(e->t - h->t) < (int64_t)FP_CLOSE_NS)
			return 0;	/* their order in the kernel's queue is not sure */
		ev = entry_vs(s, e);
		if ((ev ? ev->rank_bp : 0) - GATE_AGE_BP_PER_MS * (double)(e->t - h->t) / 1e6 > hk)
			return 0;
	}
	return 1;
}

/*
 * May a thread in bound wait in the kernel? Only where the next connection
 * is likely to need no move: the latest FP_RUN arrivals were of one VS, and
 * a connection of it would be served where the thread sits. A connection
 * of another VS then runs in the thread's VS until the gate has moved it
 * (the error status reports); afterwards the run starts again, so that
 * costs one request per change of VS after a run, and a listener whose VSs
 * alternate is served exactly. *rule: the rule asked, -1 if none was.
 */
static int
direct_fits(const struct decision_state *s, const struct fp_view *v, int *rule)
{
	struct gate_vs *run, *to;

	*rule = -1;
	if (v->run_len < FP_RUN || !v->run_vs || !v->bound ||
	    !(run = vs_table_find(s->tab, v->run_vs)))
		return 0;
	to = decide_target(s, v->bound, run, rule);
	return !to || to->id == v->bound;
}

int
fp_may(const struct fp_view *v)
{
	return v->records && v->fed && !v->want_attrs && !v->queued && !v->held &&
	    !v->direct;
}

struct fp_decision
fp_decide_accept(const struct decision_state *s, const struct fp_view *v)
{
	struct fp_decision a = { .kind = FP_DRAIN, .rule = -1 };
	const struct fp_entry *e;

	if (!fp_may(v))
		return a;
	/* the model is trusted while the kernel's count is what it holds:
	 * the arrivals not known to be accepted and the promised ones */
	if (v->kq < 0 || v->lost || v->kq - (int)v->qn != (int)v->expect)
		return a;
	if (v->on && v->kq == 0 && v->expect == 0 && direct_fits(s, v, &a.rule)) {
		/* only a blocking call may wait in the kernel */
		if (v->nonblock < 0) {
			a.kind = FP_ASK_NONBLOCK;
			return a;
		}
		if (!v->nonblock) {
			a.kind = FP_DIRECT;
			a.vs = vs_table_find(s->tab, v->bound);
			return a;
		}
	}
	if (v->kq <= 0 || (int)v->expect >= v->kq || v->qn == 0)
		return a;
	e = at(v, 0);
	/* threads let through before may dequeue in any order: only if all
	 * of theirs are of this VS */
	if ((v->expect && v->expect_vs != e->vs) || v->expect == FP_PROMISED ||
	    !head_is_pick(s, v))
		return a;
	a.kind = FP_HEAD;
	a.head = e;
	a.active = entry_vs(s, e);
	a.where = decide_conn(s, v->bound, e->vs, 0);
	return a;
}

struct fp_decision
fp_decide_rules(const struct decision_state *s, const struct fp_view *v)
{
	struct fp_decision a = { .kind = FP_KEEP, .rule = -1 };

	if (!v->direct || direct_fits(s, v, &a.rule))
		return a;
	a.kind = FP_MOVE;
	a.where = decide_conn(s, v->bound, v->run_vs, 0);
	return a;
}
