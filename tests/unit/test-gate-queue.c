// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's per-listener queues (gates/accept/queue.c): FIFO within a
 * VS, the VS with the largest key first (its remaining share relative to its
 * share, share_rank()), the age term (0.1 bp per ms waited)
 * and the starvation bound it gives, re-queueing at the head, and rerouting a
 * destroyed VS's connections home. No sockets: fds are -1.
 */
#include "config.h"

#include <stdlib.h>

#include "gates/accept/gate.h"
#include "tap.h"

#define MS	1000000ull

static struct vs_table tab;

/* three VSs with these ranks (remaining share relative to the share) */
static void
table(int rank1, int rank2, int rank3)
{
	static struct gate_vs v[3];

	for (int i = 0; i < 3; i++)
		v[i] = (struct gate_vs){ .id = (uint32_t)i + 1 };
	v[0].rank_bp = rank1;
	v[1].rank_bp = rank2;
	v[2].rank_bp = rank3;
	tab = (struct vs_table){ .v = v, .n = 3 };
}

/* shares in bp and use in bp of the machine, ranked by share_rank() */
static void
table_used(unsigned s1, double u1, unsigned s2, double u2, unsigned s3, double u3)
{
	table(share_rank(s1, u1), share_rank(s2, u2), share_rank(s3, u3));
}

static struct queued_conn *
conn(uint32_t vs, uint64_t t)
{
	struct queued_conn *c = calloc(1, sizeof(*c));

	c->fd = -1;
	c->vs_id = vs;
	c->t_enq = t;
	return c;
}

/* Pop everything; the VS ids in order, as digits ("1223"). */
static const char *
drain_order(struct gated_listener *l)
{
	static char buf[64];
	struct queued_conn *c;
	size_t n = 0;

	while ((c = queue_pop_best(l)) && n < sizeof(buf) - 1) {
		buf[n++] = (char)('0' + c->vs_id);
		free(c);
	}
	buf[n] = '\0';
	return buf;
}

int
main(void)
{
	struct gated_listener *l = listen_new(-1, 0, 0);
	uint64_t t = now_ns();
	struct queued_conn *a, *b, *c;

	table(0, 0, 0);
	ok(queue_pop_best(l) == NULL, "an empty listener gives nothing");

	/* FIFO within one VS */
	a = conn(1, t), b = conn(1, t + MS), c = conn(1, t + 2 * MS);
	queue_push_tail(l, a, &tab);
	queue_push_tail(l, b, &tab);
	queue_push_tail(l, c, &tab);
	ok(l->queued == 3 && queue_get(l, 1, 0)->len == 3, "three queued in VS 1");
	ok(queue_pop_best(l) == a && queue_pop_best(l) == b && queue_pop_best(l) == c,
	   "one VS's connections come out first in, first out");
	ok(l->queued == 0 && l->nheap == 0, "the empty queue leaves the heap");
	free(a), free(b), free(c);

	/* the largest rank first, whatever the arrival order */
	table(1000, 3000, 2000);
	queue_push_tail(l, conn(1, t), &tab);
	queue_push_tail(l, conn(3, t), &tab);
	queue_push_tail(l, conn(2, t), &tab);
	queue_push_tail(l, conn(2, t), &tab);
	is_str(drain_order(l), "2231", "VS 2 (rank 3000), then 3 (2000), then 1 (1000)");

	/* relative, not absolute: two 40% VSs that outside load holds at 30% and
	 * 25% (1000 and 1500 bp left) and a 5% VS at 1% (400 bp left, but 80% of
	 * its share): the small VS first */
	table_used(4000, 3000, 4000, 2500, 500, 100);
	queue_push_tail(l, conn(1, t), &tab);
	queue_push_tail(l, conn(2, t), &tab);
	queue_push_tail(l, conn(3, t), &tab);
	is_str(drain_order(l), "321", "5%% VS at 1%% before 40%% VSs at 25%% and 30%%");
	/* and the small VS at its share waits for the big ones below theirs */
	table_used(4000, 3000, 4000, 2500, 500, 500);
	queue_push_tail(l, conn(3, t), &tab);
	queue_push_tail(l, conn(1, t), &tab);
	queue_push_tail(l, conn(2, t), &tab);
	is_str(drain_order(l), "213", "5%% VS at 5%% after 40%% VSs below 40%%");
	/* 70/20, both at half their share: equal ranks, arrival order */
	table_used(7000, 3500, 2000, 1000, 0, 0);
	queue_push_tail(l, conn(2, t), &tab);
	queue_push_tail(l, conn(1, t + MS), &tab);
	is_str(drain_order(l), "21", "70%% VS at 35%% and 20%% VS at 10%% rank equal: first come first");

	/* aging: 0.1 bp per ms waited. 500 ms older is worth 50 bp: not enough
	 * against 100 bp; 2 s older is worth 200 bp: enough. */
	table(1000, 1100, 0);
	queue_push_tail(l, conn(1, t + 1000 * MS), &tab);
	queue_push_tail(l, conn(2, t + 1500 * MS), &tab);
	is_str(drain_order(l), "21", "a head 500 ms older does not beat 100 bp more share");
	queue_push_tail(l, conn(1, t + 1000 * MS), &tab);
	queue_push_tail(l, conn(2, t + 3000 * MS), &tab);
	is_str(drain_order(l), "12", "a head 2 s older beats 100 bp more share");

	/* the starvation bound: ranks differ by at most 2 x 10000 bp, so a head
	 * waiting 200 s longer is served first however overdrawn (a 1% VS at
	 * 100%, against an idle one) */
	table_used(100, 10000, 100, 0, 0, 0);
	queue_push_tail(l, conn(1, t), &tab);
	queue_push_tail(l, conn(2, t + 200100 * MS), &tab);
	is_str(drain_order(l), "12", "a head 200.1 s older beats the 20000 bp extreme");
	queue_push_tail(l, conn(1, t), &tab);
	queue_push_tail(l, conn(2, t + 199900 * MS), &tab);
	is_str(drain_order(l), "21", "199.9 s older does not (the bound is tight)");

	/* a re-keyed table changes the order (queue_rekey after sampling) */
	table(1000, 2000, 0);
	queue_push_tail(l, conn(1, t), &tab);
	queue_push_tail(l, conn(2, t), &tab);
	table(3000, 2000, 0);
	queue_rekey(l, &tab);
	is_str(drain_order(l), "12", "queue_rekey puts the VS with the higher rank first");

	/* push_head: a connection ADDFD could not hand over goes back in front */
	table(0, 0, 0);
	a = conn(1, t), b = conn(1, t + MS);
	queue_push_tail(l, a, &tab);
	queue_push_tail(l, b, &tab);
	c = queue_pop_best(l);
	queue_push_head(l, c, &tab);
	ok(c == a && queue_pop_best(l) == a && queue_pop_best(l) == b,
	   "a connection pushed back at the head comes out next, before younger ones");
	free(a), free(b);

	/* reroute: a destroyed VS's connections join home's queue, behind it */
	table(0, 0, 0);
	a = conn(1, t), b = conn(3, t + MS), c = conn(3, t + 2 * MS);
	queue_push_tail(l, a, &tab);
	queue_push_tail(l, b, &tab);
	queue_push_tail(l, c, &tab);
	queue_reroute(l, 3, 1, &tab);
	ok(queue_get(l, 3, 0)->len == 0 && queue_get(l, 1, 0)->len == 3 && l->queued == 3,
	   "VS 3's two connections are now queued for home (VS 1)");
	ok(b->vs_id == 1 && c->vs_id == 1, "and carry home's id");
	ok(queue_pop_best(l) == a && queue_pop_best(l) == b && queue_pop_best(l) == c,
	   "home's own connection first, then the rerouted ones in their order");
	free(a), free(b), free(c);
	ok(queue_pop_best(l) == NULL && l->queued == 0, "nothing is left or lost");

	listen_free(l);
	return tap_done();
}
