// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Workers as a share: a VS with a worker limit (vsrules(5) `workers N` or
 * `workers P%`) holds at most that many of the pool's workers at once.
 *
 * A worker holds a VS from the hand-over of a connection of that VS (the
 * gate's ADDFD) until the same thread calls accept again, or ends. That is
 * the event the gate observes for certain: a close of the connection is
 * not seen (the service owns the descriptor), and a prefork worker is busy
 * with its request until it calls accept again.
 *
 * The pool is the live threads of the service that have called accept
 * (the filter sends the gate every accept): what the gate sees, whatever
 * the service's configuration says. A percentage is of that count, rounded down, and at least 1.
 *
 * The queues stay the gate's (queue.c): a connection of a VS at its limit
 * is passed over, not refused, and counted once as a wait; it is served
 * when one of its VS's workers comes back. No I/O here; the state is per
 * VS id, and the hooks are one call each at accept, at hand-over and when
 * a thread is forgotten.
 */
#include "config.h"

#include <stdlib.h>

#include "gate.h"
#include "rules/rules.h"

struct wk_vs {
	uint32_t id;
	unsigned held;
	uint64_t waits;
};

static struct wk_vs *vss;
static size_t nvss, capvss;
static size_t pool;

static struct wk_vs *
find(uint32_t id, int create)
{
	struct wk_vs *n;
	size_t i;

	for (i = 0; i < nvss; i++)
		if (vss[i].id == id)
			return &vss[i];
	if (!create || id == 0)
		return NULL;
	if (nvss == capvss) {
		size_t cap = capvss ? capvss * 2 : 16;

		if (!(n = realloc(vss, cap * sizeof(*n))))
			return NULL;
		vss = n;
		capvss = cap;
	}
	vss[nvss] = (struct wk_vs){ .id = id };
	return &vss[nvss++];
}

unsigned
workers_limit(unsigned n, unsigned bp, size_t npool)
{
	uint64_t k;

	if (n)
		return n;
	if (!bp)
		return 0;
	k = (uint64_t)npool * bp / 10000;
	return k ? (unsigned)k : 1;
}

size_t
workers_pool(void)
{
	return pool;
}

unsigned
workers_held(uint32_t vs_id)
{
	struct wk_vs *w = find(vs_id, 0);

	return w ? w->held : 0;
}

uint64_t
workers_waits(uint32_t vs_id)
{
	struct wk_vs *w = find(vs_id, 0);

	return w ? w->waits : 0;
}

int
workers_full(uint32_t vs_id, unsigned n, unsigned bp)
{
	unsigned lim = workers_limit(n, bp, pool);

	return lim && workers_held(vs_id) >= lim;
}

void
workers_wait(uint32_t vs_id)
{
	struct wk_vs *w = find(vs_id, 1);

	if (w)
		w->waits++;
}

uint32_t
workers_back(struct service_thread *th)
{
	struct wk_vs *w;
	uint32_t id = th->wk_vs;

	if (!th->wk_pool) {
		th->wk_pool = 1;
		pool++;
	}
	th->wk_vs = 0;
	if (id && (w = find(id, 0)) && w->held)
		w->held--;
	return id;
}

void
workers_take(struct service_thread *th, uint32_t vs_id)
{
	struct wk_vs *w;

	workers_back(th);
	if ((w = find(vs_id, 1))) {
		w->held++;
		th->wk_vs = vs_id;
	}
}

void
workers_thread_gone(struct service_thread *th)
{
	if (!th->wk_pool)
		return;
	workers_back(th);
	th->wk_pool = 0;
	pool--;
}

/* The rules' worker limit of the VS with that id, 0/0 if none. */
static void
limit_of(struct gate *g, uint32_t id, unsigned *n, unsigned *bp)
{
	struct gate_vs *v = vs_table_find(&g->tab, id);

	*n = *bp = 0;
	if (g->rules && v && v->ridx >= 0 && (size_t)v->ridx < g->rules->nvs) {
		*n = g->rules->vs[v->ridx].workers_n;
		*bp = g->rules->vs[v->ridx].workers_bp;
	}
}

int
workers_on(struct gate *g)
{
	static const struct rules *seen;
	static uint64_t seen_hash;
	static int on;
	size_t i;

	if (g->rules != seen || g->rules_hash != seen_hash) {
		seen = g->rules;
		seen_hash = g->rules_hash;
		on = 0;
		for (i = 0; seen && i < seen->nvs; i++)
			if (seen->vs[i].workers_n || seen->vs[i].workers_bp)
				on = 1;
	}
	return on;
}

int
workers_may_take(struct vs_queue *q, void *arg)
{
	unsigned n, bp;

	limit_of(arg, q->vs_id, &n, &bp);
	if (!workers_full(q->vs_id, n, bp))
		return 1;
	if (!q->head->wk_waited) {
		q->head->wk_waited = 1;
		workers_wait(q->vs_id);
	}
	return 0;
}
