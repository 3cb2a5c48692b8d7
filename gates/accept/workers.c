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
 * when one of its VS's workers comes back. No I/O here and no global: the
 * state is the gate's struct workers, per VS id, which the decision reads
 * (decision.c passes a VS at its limit over). The shell's hooks are one
 * call each at accept (gate.c), at hand-over (handover.c, and fp-model.c
 * for a thread that took the kernel's head) and when a thread is reaped.
 */
#include "config.h"

#include <stdlib.h>

#include "gate.h"
#include "rules/rules.h"

static struct wk_vs *
find(const struct workers *w, uint32_t id)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->v[i].id == id)
			return &w->v[i];
	return NULL;
}

static struct wk_vs *
find_add(struct workers *w, uint32_t id)
{
	struct wk_vs *v;

	if ((v = find(w, id)) || id == 0)
		return v;
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;

		if (!(v = realloc(w->v, cap * sizeof(*v))))
			return NULL;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n] = (struct wk_vs){ .id = id };
	return &w->v[w->n++];
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

unsigned
workers_held(const struct workers *w, uint32_t vs_id)
{
	const struct wk_vs *v = find(w, vs_id);

	return v ? v->held : 0;
}

uint64_t
workers_waits(const struct workers *w, uint32_t vs_id)
{
	const struct wk_vs *v = find(w, vs_id);

	return v ? v->waits : 0;
}

int
workers_full(const struct workers *w, uint32_t vs_id, unsigned n, unsigned bp)
{
	unsigned lim = workers_limit(n, bp, w->pool);

	return lim && workers_held(w, vs_id) >= lim;
}

void
workers_wait(struct workers *w, uint32_t vs_id)
{
	struct wk_vs *v = find_add(w, vs_id);

	if (v)
		v->waits++;
}

uint32_t
workers_back(struct workers *w, struct service_thread *th)
{
	struct wk_vs *v;
	uint32_t id = th->wk_vs;

	if (!th->wk_pool) {
		th->wk_pool = 1;
		w->pool++;
	}
	th->wk_vs = 0;
	if (id && (v = find(w, id)) && v->held)
		v->held--;
	return id;
}

void
workers_take(struct workers *w, struct service_thread *th, uint32_t vs_id)
{
	struct wk_vs *v;

	workers_back(w, th);
	if ((v = find_add(w, vs_id))) {
		v->held++;
		th->wk_vs = vs_id;
	}
}

void
workers_thread_gone(struct workers *w, struct service_thread *th)
{
	if (!th->wk_pool)
		return;
	workers_back(w, th);
	th->wk_pool = 0;
	w->pool--;
}

int
workers_on(struct workers *w, const struct rules *rs, uint64_t hash)
{
	size_t i;

	if (rs != w->seen || hash != w->seen_hash) {
		w->seen = rs;
		w->seen_hash = hash;
		w->on = 0;
		for (i = 0; rs && i < rs->nvs; i++)
			if (rs->vs[i].workers_n || rs->vs[i].workers_bp)
				w->on = 1;
	}
	return w->on;
}

void
workers_free(struct workers *w)
{
	free(w->v);
	*w = (struct workers){ 0 };
}
