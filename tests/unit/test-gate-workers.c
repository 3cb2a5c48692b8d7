// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Workers as a share (gates/accept/workers.c): the limit from a count or a
 * percentage of the pool, holding from hand-over to the next accept, a
 * thread that ends releasing its VS, and the queue's choice
 * (queue_pop_best_if) passing over a VS at its limit, counting each
 * connection passed over once. No sockets: fds are -1.
 */
#include "config.h"

#include <stdlib.h>

#include "gates/accept/gate.h"
#include "tap.h"

#define is_int(got, want, ...) do {					\
	long long g_ = (long long)(got), w_ = (long long)(want);	\
	ok(g_ == w_, __VA_ARGS__);					\
	if (g_ != w_)							\
		printf("#   got %lld, want %lld\n", g_, w_);		\
} while (0)

static struct queued_conn *
conn(uint32_t vs, uint64_t t)
{
	struct queued_conn *c = calloc(1, sizeof(*c));

	c->fd = -1;
	c->vs_id = vs;
	c->t_enq = t;
	return c;
}

/* VS 1 limited to `limit` workers; every other VS unlimited */
static unsigned limit;
static struct workers wk;

static int
may_take(struct vs_queue *q, void *arg)
{
	(void)arg;
	if (q->vs_id != 1 || !workers_full(&wk, 1, limit, 0))
		return 1;
	if (!q->head->wk_waited) {
		q->head->wk_waited = 1;
		workers_wait(&wk, 1);
	}
	return 0;
}

int
main(void)
{
	struct service_thread th[4] = { 0 };
	static struct gate_vs v[2] = { { .id = 1, .rank_bp = 9000 },
				       { .id = 2, .rank_bp = -9000 } };
	struct vs_table tab = { .v = v, .n = 2 };
	struct gated_listener *l = listen_new(-1, 0, 0);
	struct queued_conn *c;
	int i;

	/* the limit */
	is_int(workers_limit(0, 0, 8), 0, "no limit set: none");
	is_int(workers_limit(3, 0, 8), 3, "a count is the limit, whatever the pool");
	is_int(workers_limit(0, 5000, 8), 4, "50%% of 8 workers is 4");
	is_int(workers_limit(0, 3000, 8), 2, "30%% of 8 is 2 (rounded down)");
	is_int(workers_limit(0, 100, 8), 1, "1%% of 8 is still 1 worker");
	is_int(workers_limit(0, 5000, 0), 1, "no pool seen yet: 1");

	/* the pool: threads that called accept, once each */
	for (i = 0; i < 4; i++)
		workers_back(&wk, &th[i]);
	workers_back(&wk, &th[0]);
	is_int(wk.pool, 4, "four threads called accept (one twice): a pool of 4");
	ok(!workers_full(&wk, 1, 0, 2500), "25%% of 4: VS 1 holds none, not full");

	/* holding: from hand-over to the next accept */
	workers_take(&wk, &th[0], 1);
	is_int(workers_held(&wk, 1), 1, "handed a connection of VS 1: it holds one worker");
	ok(workers_full(&wk, 1, 0, 2500), "25%% of 4 = 1: full");
	ok(workers_full(&wk, 1, 1, 0) && !workers_full(&wk, 1, 2, 0),
	   "full at workers 1, not at workers 2");
	workers_take(&wk, &th[1], 1);
	is_int(workers_held(&wk, 1), 2, "a second worker with VS 1: two");
	workers_take(&wk, &th[1], 2);
	ok(workers_held(&wk, 1) == 1 && workers_held(&wk, 2) == 1,
	   "a worker handed another VS's connection releases the first");
	is_int(workers_back(&wk, &th[0]), 1, "a worker back at accept says which VS it held");
	is_int(workers_held(&wk, 1), 0, "...and VS 1 holds none");
	is_int(workers_back(&wk, &th[0]), 0, "back again without a connection: it held none");

	/* a thread that ends releases its VS and leaves the pool */
	workers_take(&wk, &th[2], 1);
	workers_thread_gone(&wk, &th[2]);
	ok(workers_held(&wk, 1) == 0 && wk.pool == 3, "a thread that ended: VS 1 released, pool 3");
	workers_thread_gone(&wk, &th[2]);
	is_int(wk.pool, 3, "forgotten twice: counted once");

	/* the queue: VS 1 ranks first, but at its limit its connections wait */
	limit = 1;
	workers_take(&wk, &th[0], 1);
	queue_push_tail(l, conn(1, 1), &tab);
	queue_push_tail(l, conn(1, 2), &tab);
	queue_push_tail(l, conn(2, 3), &tab);
	c = queue_pop_best_if(l, may_take, NULL);
	ok(c && c->vs_id == 2, "VS 1 at its limit: the next worker takes VS 2's connection");
	free(c);
	ok(!queue_pop_best_if(l, may_take, NULL), "only VS 1's left: nothing is taken");
	ok(!queue_pop_best_if(l, may_take, NULL), "asked again: still nothing");
	is_int(l->queued, 2, "VS 1's two connections stay queued (never refused)");
	is_int(workers_waits(&wk, 1), 1, "the head passed over three times counts one wait");
	workers_back(&wk, &th[0]);
	c = queue_pop_best_if(l, may_take, NULL);
	ok(c && c->vs_id == 1 && c->t_enq == 1, "its worker back: VS 1's first connection goes");
	workers_take(&wk, &th[3], 1);
	free(c);
	ok(!queue_pop_best_if(l, may_take, NULL), "held again: its second waits");
	is_int(workers_waits(&wk, 1), 2, "the second connection passed over: two waits");
	workers_back(&wk, &th[3]);
	c = queue_pop_best_if(l, may_take, NULL);
	ok(c && c->vs_id == 1 && c->t_enq == 2, "then the second goes");
	free(c);
	ok(!queue_pop_best_if(l, may_take, NULL) && l->queued == 0, "all served");
	is_int(workers_waits(&wk, 2), 0, "the unlimited VS never waited");
	listen_free(l);
	workers_free(&wk);
	return tap_done();
}
