/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The accept gate's decision, without I/O (the sans-I/O shape of ngtcp2):
 * from an event and the gate's state to the action the shell carries out.
 * It makes no system call and reads no global: everything it decides by is
 * in struct decision_state, and what it changes is the listener's queues it
 * is given (queue.c, a mechanism below it) and the wait counts of the
 * workers state it is given (workers.c). The shell (gate.c) receives the
 * notifications, asks, and carries out the answer: a hand-over (handover.c)
 * after re-binding the thread (place.c), or the accept waits. A trace of
 * the events and the answers (trace.c, vsd-gate --trace) replays through it
 * (tests/unit/test-gate-decide.c).
 *
 * State: the VS table (each VS's rank, which share.c samples for the shell),
 * the home VS, the rules vsd applied (NULL: the default rule, (accept, *,
 * req = *) => (requester)), per listener the gate's queues, and while any
 * VS has a worker limit (vsrules(5) `workers`) the pool's workers each VS
 * holds (workers.c): a VS at its limit is passed over, its connections
 * stay queued, and each one passed over is counted once as a wait.
 * Events: an accept by a thread bound to a VS (decide_accept), or a
 * connection of a VS about to be served (decide_conn, for accepts outside
 * the gate); for the fast path, an accept over the model of the kernel's
 * queue (fp_decide_accept) and new rules (fp_decide_rules). Connections arriving, closing and the
 * ranks re-sampled on the tick change the queues through queue.c.
 */
#ifndef VSD_GATE_ACCEPT_DECISION_H
#define VSD_GATE_ACCEPT_DECISION_H

#include <stddef.h>
#include <stdint.h>

struct gate_vs;
struct gated_listener;
struct queued_conn;
struct rules;
struct vs_table;
struct workers;

struct decision_state {
	struct vs_table *tab;
	uint32_t home;
	const struct rules *rules;	/* NULL: the default rule */
	const uint32_t *id_of;		/* VS id per rules index (0: not in the table) */
	size_t	 nid_of;
	struct workers *wk;		/* NULL: no worker limit in force */
};

enum decision_kind {
	DECIDE_EMPTY = 0,	/* nothing queued: the accept waits (EAGAIN if the
				 * listener is non-blocking: the call's own semantics) */
	DECIDE_HANDOVER,	/* hand c over, the thread in vs first */
};

struct decision {
	enum decision_kind kind;
	struct queued_conn *c;	/* taken off its queue */
	/* where the thread serves it: NULL with stay (it stays where it is,
	 * and the work is charged there), NULL without stay (no VS at all:
	 * not even home is in the table) */
	struct gate_vs *vs;
	int	 stay;
	int	 rule;		/* enum rules_action that decided (counted); -1: no rule asked */
	/* the VS the queues' order would have served, passed over at its
	 * worker limit (0: none was) */
	uint32_t held_back;
};

/* An accept by a thread now in VS bound (0: unknown, taken as home) on l:
 * the connection to serve, by the queues' order (queue.c: rank, aged by the
 * wait) among the VSs below their worker limit, and where the thread
 * serves it. */
struct decision decide_accept(const struct decision_state *s, struct gated_listener *l,
    uint32_t bound);
/* Where a thread now in bound serves a connection of VS vs_id (0 or gone:
 * home's), by the rules; by_content: its VS came from its request's params
 * (hold.c), which the content rules already decided. */
struct decision decide_conn(const struct decision_state *s, uint32_t bound, uint32_t vs_id,
    int by_content);
/* The rules alone: where a thread in bound serves a request of req; NULL
 * means stay. *rule: the enum rules_action that decided. */
struct gate_vs *decide_target(const struct decision_state *s, uint32_t bound,
    struct gate_vs *req, int *rule);
/* The VS of rules index idx, NULL if the table lacks it. */
struct gate_vs *decide_by_index(const struct decision_state *s, int idx);

/*
 * The fast path's choice (fp-decision.c), for an accept on a listener with
 * a model of its kernel accept queue (fp-model.c, fastpath.c): the model
 * and the listener as fastpath.c read them, the thread's VS, nothing else.
 */
struct fp_entry;

struct fp_view {
	/* when the fast path may answer at all */
	int	 records;	/* the accept records are attached */
	int	 fed;		/* a record matched a drained connection: the ring works */
	int	 want_attrs;	/* the rules read requests' params: every one held */
	int	 queued, held;	/* the gate's own queues of the listener */
	int	 direct;	/* a thread waits in the kernel's accept */
	int	 on;		/* --fast on: a thread may wait in the kernel */
	/* the model against the kernel */
	int	 kq;		/* the kernel's queue length, -1: unknown */
	int	 lost;		/* the model is off until a drain empties the queue */
	unsigned expect;	/* connections promised to threads let through... */
	uint32_t expect_vs;	/* ...their VS if all the same, else 0 */
	const struct fp_entry *q;	/* the arrivals not known accepted, a ring: */
	unsigned qh, qn, qcap;
	uint32_t run_vs;	/* the VS of the latest arrivals, and how many in a row */
	unsigned run_len;
	int	 nonblock;	/* no thread may wait in the kernel on the listener: its
				 * O_NONBLOCK, or Fast Open (fastpath.c); -1: not read
				 * (FP_ASK_NONBLOCK) */
	uint32_t bound;		/* the accepting thread's VS (the direct waiter's, for rules) */
};

enum fp_kind {
	FP_DRAIN = 0,		/* the drain and a hand-over (decide_accept) */
	FP_HEAD,		/* CONTINUE: the kernel hands out head, served at where */
	FP_DIRECT,		/* CONTINUE: the thread waits in the kernel, in vs */
	FP_ASK_NONBLOCK,	/* read the listener's O_NONBLOCK into the view, ask again */
	FP_KEEP,		/* new rules: the direct waiter stays where it is */
	FP_MOVE,		/* new rules: move the direct waiter to where */
};

struct fp_decision {
	enum fp_kind kind;
	const struct fp_entry *head;	/* FP_HEAD: the model's head, promised */
	struct gate_vs *active;		/* FP_HEAD: the head's VS, active now */
	struct gate_vs *vs;		/* FP_DIRECT: the VS it waits in */
	struct decision where;		/* FP_HEAD, FP_MOVE: where the thread serves */
	int	 rule;			/* enum rules_action asked for a direct waiter, -1: none */
};

/* The fast path may answer (the view's first part) */
int fp_may(const struct fp_view *v);
/* An accept by a thread in v->bound. */
struct fp_decision fp_decide_accept(const struct decision_state *s, const struct fp_view *v);
/* New rules are in force: may the direct waiter stay? */
struct fp_decision fp_decide_rules(const struct decision_state *s, const struct fp_view *v);

#endif
