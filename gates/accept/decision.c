// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's decision (decision.h): which queued connection an
 * accept gets, and where the thread serves it. No system call, no global
 * (the worker counts are the state's, workers.c):
 * a trace recorded from the real gate replays through these functions and
 * gives the same answers (tests/unit/test-gate-decide.c).
 */
#include "config.h"

#include "decision.h"
#include "gate.h"
#include "rules/rules.h"

struct gate_vs *
decide_by_index(const struct decision_state *s, int idx)
{
	return idx >= 0 && (size_t)idx < s->nid_of && s->id_of[idx] ?
	    vs_table_find(s->tab, s->id_of[idx]) : NULL;
}

struct gate_vs *
decide_target(const struct decision_state *s, uint32_t bound, struct gate_vs *req, int *rule)
{
	struct rules_decision d;
	struct gate_vs *t, *caller;

	*rule = RULES_TO_REQUESTER;
	if (!s->rules)		/* the default rule: no lookup at all */
		return req;
	/* the caller: the VS the thread sits in, home while that is unknown */
	if (!bound || !(caller = vs_table_find(s->tab, bound)))
		caller = vs_table_find(s->tab, s->home);
	if ((!caller || caller->ridx >= 0) && req->ridx >= 0)
		d = rules_query(s->rules, RULES_GATE_ACCEPT, caller ? caller->ridx : -1, req->ridx);
	else
		d = rules_query_name(s->rules, RULES_GATE_ACCEPT, caller ? caller->name : NULL,
				     req->name);
	*rule = (int)d.action;
	switch (d.action) {
	case RULES_STAY:
		return NULL;
	case RULES_TO_HOME:
		return vs_table_find(s->tab, s->home);
	case RULES_TO_VS:
		/* a VS of the file that vsd does not have (yet): serve at home */
		return (t = decide_by_index(s, d.vs)) ? t : vs_table_find(s->tab, s->home);
	case RULES_TO_REQUESTER:
	default:
		return req;
	}
}

struct decision
decide_conn(const struct decision_state *s, uint32_t bound, uint32_t vs_id, int by_content)
{
	struct decision d = { .kind = DECIDE_HANDOVER, .rule = -1 };

	/* a VS we do not know is one that is gone (vsd pushes every new one
	 * before its connections can come): home's */
	if (!(d.vs = vs_id ? vs_table_find(s->tab, vs_id) : NULL))
		d.vs = vs_table_find(s->tab, s->home);
	/* by its params: the content rule already said where (hold.c) */
	if (d.vs && !by_content && !(d.vs = decide_target(s, bound, d.vs, &d.rule)))
		d.stay = 1;
	return d;
}

/* queue_pop_best_if()'s test while a worker limit is in force. */
struct held_ask {
	const struct decision_state *s;
	uint32_t held_back;	/* the first VS passed over: the heap's top */
};

/* 0 if q's VS holds its worker limit: its head waits (counted once). */
static int
may_take(struct vs_queue *q, void *arg)
{
	struct held_ask *h = arg;
	const struct decision_state *s = h->s;
	struct gate_vs *v = vs_table_find(s->tab, q->vs_id);
	const struct rules_vs *r;

	if (!s->rules || !v || v->ridx < 0 || (size_t)v->ridx >= s->rules->nvs)
		return 1;
	r = &s->rules->vs[v->ridx];
	if (!workers_full(s->wk, q->vs_id, r->workers_n, r->workers_bp))
		return 1;
	if (!q->head->wk_waited) {
		q->head->wk_waited = 1;
		workers_wait(s->wk, q->vs_id);
	}
	if (!h->held_back)
		h->held_back = q->vs_id;
	return 0;
}

struct decision
decide_accept(const struct decision_state *s, struct gated_listener *l, uint32_t bound)
{
	struct held_ask h = { s, 0 };
	struct queued_conn *c = s->wk ? queue_pop_best_if(l, may_take, &h) : queue_pop_best(l);
	struct decision d = { .kind = DECIDE_EMPTY, .held_back = h.held_back };

	if (!c)
		return d;
	d = decide_conn(s, bound, c->vs_id, c->by_content);
	d.held_back = h.held_back;
	/* the connection is served as home's if its VS is gone */
	if (!vs_table_find(s->tab, c->vs_id) && vs_table_find(s->tab, s->home))
		c->vs_id = s->home;
	d.c = c;
	return d;
}
