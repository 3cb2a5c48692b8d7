// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Per listening socket: one FIFO of accepted connections per VS, and a
 * binary max-heap of the NON-EMPTY FIFOs, so a decision costs O(log k) for
 * k VSs with something queued, independent of how many VSs exist.
 *
 * Order: key = rank_bp + GATE_AGE_BP_PER_MS * (now - t_head_ms), where
 * rank_bp is the VS's remaining share relative to its share (share.c).
 * "now" is common to all queues, so the key is stored as
 * rank_bp - GATE_AGE_BP_PER_MS * t_head_ms and the heap stays valid as
 * time passes; it changes only when a head changes (pop/push-head) or when
 * the remaining shares are re-sampled (queue_rekey, every few ms while
 * connections are queued).
 *
 * Aging: a head gains GATE_AGE_BP_PER_MS basis points per ms waited. Two
 * ranks differ by at most 2 * BP_MAX, so no connection waits more than
 * 2 * BP_MAX / GATE_AGE_BP_PER_MS ms (200 s) behind connections that arrived
 * after it: strict share order never starves a VS. That is the worst case;
 * two sites with 45% shares each, both busy, differ by about 10 points of
 * use, 2,200 bp of rank, which the age term outweighs after 22 s. Share
 * order is self-correcting besides: a VS served ahead uses more and falls
 * behind.
 *
 * Why so small (measured when the key was the absolute remaining share):
 * under overload a request waits hundreds of ms, and the two
 * sites' remaining shares differ by ~1,000 bp. At 10 bp/ms the age term won
 * after 100 ms and the order became first come, first served (insulation
 * benchmark at B = 60: A(gate)/A(insulation-only) 1.08, CPU split 36/58).
 * At 0.5 bp/ms it still tilted the CPU split 47/50 towards the site with
 * more connections (its requests wait longer); at 0.1 bp/ms the split is
 * 48/49, as close as a single shared server gets. See
 * benchmarks/results/insulation.md.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"
#include "lib/log.h"

#define NHASH			64

static uint64_t t0;

struct gated_listener *
listen_new(int fd, dev_t dev, ino_t ino)
{
	struct gated_listener *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	if (!(l->hash = calloc(NHASH, sizeof(*l->hash)))) {
		free(l);
		return NULL;
	}
	if (!t0)
		t0 = now_ns();
	l->nhash = NHASH;
	l->fd = fd;
	l->wakeup_fd = -1;
	l->owner_pidfd = -1;
	l->dev = dev;
	l->ino = ino;
	return l;
}

uint64_t
queue_epoch(void)
{
	return t0;
}

void
listen_free(struct gated_listener *l)
{
	size_t i;

	for (i = 0; i < l->nhash; i++) {
		struct vs_queue *q = l->hash[i], *nq;

		for (; q; q = nq) {
			struct queued_conn *c, *nc;

			nq = q->hnext;
			for (c = q->head; c; c = nc) {
				nc = c->next;
				close(c->fd);
				free(c);
			}
			free(q);
		}
	}
	free(l->hash);
	free(l->heap);
	if (l->wakeup_fd >= 0)
		close(l->wakeup_fd);
	if (l->owner_pidfd >= 0)
		close(l->owner_pidfd);
	close(l->fd);
	free(l);
}

struct vs_queue *
queue_get(struct gated_listener *l, uint32_t vs_id, int create)
{
	struct vs_queue **b = &l->hash[vs_id % l->nhash], *q;

	for (q = *b; q; q = q->hnext)
		if (q->vs_id == vs_id)
			return q;
	if (!create || !(q = calloc(1, sizeof(*q))))
		return NULL;
	q->vs_id = vs_id;
	q->heap_i = -1;
	q->hnext = *b;
	*b = q;
	return q;
}

static double
queue_key(struct vs_queue *q, struct vs_table *t)
{
	struct gate_vs *v = vs_table_find(t, q->vs_id);
	double rank = v ? v->rank_bp : 0;

	return rank - GATE_AGE_BP_PER_MS * (double)(q->head->t_enq - t0) / 1e6;
}

static int
higher(struct vs_queue *a, struct vs_queue *b)
{
	if (a->key != b->key)
		return a->key > b->key;
	return a->head->t_enq < b->head->t_enq;
}

static void
heap_set(struct gated_listener *l, size_t i, struct vs_queue *q)
{
	l->heap[i] = q;
	q->heap_i = (ssize_t)i;
}

static void
sift_up(struct gated_listener *l, size_t i)
{
	struct vs_queue *q = l->heap[i];

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!higher(q, l->heap[p]))
			break;
		heap_set(l, i, l->heap[p]);
		i = p;
	}
	heap_set(l, i, q);
}

static void
sift_down(struct gated_listener *l, size_t i)
{
	struct vs_queue *q = l->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= l->nheap)
			break;
		if (c + 1 < l->nheap && higher(l->heap[c + 1], l->heap[c]))
			c++;
		if (!higher(l->heap[c], q))
			break;
		heap_set(l, i, l->heap[c]);
		i = c;
	}
	heap_set(l, i, q);
}

static int
heap_insert(struct gated_listener *l, struct vs_queue *q)
{
	if (l->nheap == l->capheap) {
		size_t cap = l->capheap ? l->capheap * 2 : 16;
		struct vs_queue **nh = realloc(l->heap, cap * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		l->heap = nh;
		l->capheap = cap;
	}
	heap_set(l, l->nheap++, q);
	sift_up(l, l->nheap - 1);
	return 0;
}

static void
heap_remove(struct gated_listener *l, struct vs_queue *q)
{
	size_t i = (size_t)q->heap_i;
	struct vs_queue *m;

	q->heap_i = -1;
	if (i == --l->nheap)
		return;
	m = l->heap[l->nheap];
	heap_set(l, i, m);
	sift_down(l, i);
	sift_up(l, (size_t)m->heap_i);
}

/* The head of q changed: fix its place. */
static void
heap_fix(struct gated_listener *l, struct vs_queue *q, struct vs_table *t)
{
	q->key = queue_key(q, t);
	sift_down(l, (size_t)q->heap_i);
	sift_up(l, (size_t)q->heap_i);
}

static void
enqueue(struct gated_listener *l, struct queued_conn *c, struct vs_table *t, int at_head)
{
	struct vs_queue *q = queue_get(l, c->vs_id, 1);

	if (!q) {
		/* out of memory: the home queue exists already (see gate.c) */
		log_warnx("%s: out of memory, connection closed", __func__);
		close(c->fd);
		free(c);
		return;
	}
	if (at_head) {
		c->prev = NULL;
		c->next = q->head;
		if (q->head)
			q->head->prev = c;
		else
			q->tail = c;
		q->head = c;
	} else {
		c->next = NULL;
		c->prev = q->tail;
		if (q->tail)
			q->tail->next = c;
		else
			q->head = c;
		q->tail = c;
	}
	q->len++;
	l->queued++;
	if (q->heap_i < 0) {
		q->key = queue_key(q, t);
		if (heap_insert(l, q) < 0)
			log_warnx("%s: out of memory", __func__);
	} else if (at_head) {
		heap_fix(l, q, t);
	}
}

void
queue_push_tail(struct gated_listener *l, struct queued_conn *c, struct vs_table *t)
{
	enqueue(l, c, t, 0);
}

void
queue_push_head(struct gated_listener *l, struct queued_conn *c, struct vs_table *t)
{
	enqueue(l, c, t, 1);
}

/* Take the head of q, the heap's entry i. */
static struct queued_conn *
pop_at(struct gated_listener *l, size_t i)
{
	struct vs_queue *q = l->heap[i];
	struct queued_conn *c;

	c = q->head;
	q->head = c->next;
	if (q->head)
		q->head->prev = NULL;
	else
		q->tail = NULL;
	q->len--;
	l->queued--;
	c->next = c->prev = NULL;
	if (q->len == 0) {
		heap_remove(l, q);
	} else {
		/* the next head is younger: its key can only drop; rem is unchanged */
		q->key -= GATE_AGE_BP_PER_MS * (double)(q->head->t_enq - c->t_enq) / 1e6;
		sift_down(l, i);
	}
	return c;
}

struct queued_conn *
queue_pop_best(struct gated_listener *l)
{
	return l->nheap ? pop_at(l, 0) : NULL;
}

/*
 * The best queue that ok() takes: the heap's top if it does, else a scan of
 * the non-empty queues (one per VS with connections waiting: few), each
 * asked only if it would beat the best found so far.
 */
struct queued_conn *
queue_pop_best_if(struct gated_listener *l, int (*ok)(struct vs_queue *q, void *arg), void *arg)
{
	size_t i, best = SIZE_MAX;

	if (l->nheap == 0)
		return NULL;
	if (ok(l->heap[0], arg))
		return pop_at(l, 0);
	for (i = 1; i < l->nheap; i++)
		if ((best == SIZE_MAX || l->heap[i]->key > l->heap[best]->key) && ok(l->heap[i], arg))
			best = i;
	return best == SIZE_MAX ? NULL : pop_at(l, best);
}

void
queue_sample_shares(struct gated_listener *l, struct vs_table *t, uint64_t now)
{
	size_t i;

	for (i = 0; i < l->nheap; i++) {
		struct gate_vs *v = vs_table_find(t, l->heap[i]->vs_id);

		if (v)
			share_sample_lazy(v, now);
	}
}

void
queue_rekey(struct gated_listener *l, struct vs_table *t)
{
	size_t i;

	for (i = 0; i < l->nheap; i++)
		l->heap[i]->key = queue_key(l->heap[i], t);
	/* Floyd's heapify: O(k) */
	for (i = l->nheap / 2; i-- > 0;)
		sift_down(l, i);
}

void
queue_reroute(struct gated_listener *l, uint32_t vs_id, uint32_t home, struct vs_table *t)
{
	struct vs_queue *q = queue_get(l, vs_id, 0);
	struct queued_conn *c, *nc;

	if (!q || q->len == 0 || vs_id == home)
		return;
	c = q->head;
	q->head = q->tail = NULL;
	l->queued -= q->len;
	q->len = 0;
	heap_remove(l, q);
	for (; c; c = nc) {
		nc = c->next;
		c->vs_id = home;
		enqueue(l, c, t, 0);
	}
}

void
waiter_del(struct gate *g, struct pending_accept *w)
{
	struct gated_listener *l = w->l;

	if (w->prev)
		w->prev->next = w->next;
	else
		l->wait_head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		l->wait_tail = w->prev;
	if (w->th->waiter == w)
		w->th->waiter = NULL;
	g->nwaiters--;
	free(w);
}
