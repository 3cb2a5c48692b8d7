// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Carrying out where a thread serves a connection: the decision said where
 * (decision.c); the thread is moved there (rebind.c) and its CPU time so
 * far settled where it ran (charge.c). What the kernel refuses is handled
 * here: a VS destroyed under us serves from home, any other refusal leaves
 * the thread (and the charge) where it is. Returns the VS charged.
 */
#include "config.h"

#include <errno.h>

#include "decision.h"
#include "gate.h"

void
gate_decision_state(struct gate *g, struct decision_state *s)
{
	*s = (struct decision_state){ &g->tab, g->home, g->rules, g->id_of, g->nid_of,
				      workers_on(&g->wk, g->rules, g->rules_hash) ? &g->wk : NULL };
}

/* Where th is now, home while that is unknown: the VS charged if it stays. */
static struct gate_vs *
current(struct gate *g, struct service_thread *th)
{
	struct gate_vs *cur = th->bound ? vs_table_find(&g->tab, th->bound) : NULL;

	return cur ? cur : vs_table_find(&g->tab, g->home);
}

struct gate_vs *
gate_bind(struct gate *g, struct service_thread *th, const struct decision *d)
{
	struct gate_vs *v = d->vs, *home;
	int r;

	if (d->rule >= 0 && (unsigned)d->rule < ARRAY_SIZE(g->decided))
		g->decided[d->rule]++;
	if (d->stay)	/* no move; the work is charged where the thread is */
		return current(g, th);
	if (!v)
		return NULL;
	/* a database's accepting thread stays home: dbthreads.c moves the
	 * threads that serve the connection */
	if (gate_db_mode(g))
		return v;
	r = bind_thread(th, v);
	if (r == 1 || !th->cpu_mark)	/* moved, or new: its CPU so far goes where it was */
		charge_settle(g, th);
	if (r == -ENOENT || r == -ENODEV) {
		/* the VS was destroyed under us: serve the request from home */
		g->refresh_asked = 1;
		if (v->id != g->home && (home = vs_table_find(&g->tab, g->home))) {
			if (d->c)
				d->c->vs_id = g->home;
			v = home;
			if (bind_thread(th, v) == 1)
				charge_settle(g, th);
		}
	} else if (r < 0) {
		/* the kernel refused the move (counted, logged by rebind.c): the
		 * work runs, and is charged, where the thread is */
		return current(g, th);
	}
	return v;
}

struct gate_vs *
gate_rebind_vs(struct gate *g, struct service_thread *th, uint32_t vs_id)
{
	struct decision_state s;
	struct decision d;

	gate_decision_state(g, &s);
	d = decide_conn(&s, th->bound, vs_id, 0);
	return gate_bind(g, th, &d);
}
