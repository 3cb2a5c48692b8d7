/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fast path's own interface, between its files (gate.h has the one
 * the rest of the gate uses), top to bottom:
 *   fastpath.c  the shell: carries out CONTINUE for the kernel's head, a
 *               thread let wait in the kernel, or the drain (it says why)
 *   fp-decision.c  the choice among them, without I/O (decision.h)
 *   fp-model.c  the model of the kernel's accept queue (q, pr, early,
 *               expect), kept from the ring's arrival and accept records
 *   fp-ring.c   the socket gate's maps: a listener's registration and its
 *               ring, and the guard that wakes threads left in the kernel
 */
#ifndef VSD_GATE_ACCEPT_FP_H
#define VSD_GATE_ACCEPT_FP_H

#include <stdint.h>
#include <stdatomic.h>
#include <stddef.h>

#include "gate.h"
#include "gates/socket/socket.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE		71	/* Linux 5.14 */
#endif

#define FP_CLOSE_NS	20000ull	/* records this close may be in either order */
#define FP_LAG_NS	20000ull	/* wait this long for a lagging record */
#define FP_EXPECT_NS	10000000ull	/* a promised dequeue not seen in 10 ms: forget it */
#define FP_SCAN		256		/* look this deep into the queue for a better VS */
#define FP_EARLY	64		/* cookies drained before their record was read */
#define FP_RUN		8		/* a thread waits in the kernel only after this many
					 * arrivals in a row of the VS it sits in */
#define FP_GUARDS	64		/* listeners the guard can wake */
#define FP_EVENTS	256		/* accept records read, not yet applied */
#define FP_PROMISED	256		/* threads let through at once, at most */
#define FP_OUTSIDE	64		/* accepts the gate did not answer, read, not yet applied */
#define FP_GONE		64		/* threads let through that ended before their record was read */
#define FP_OUTSIDE_LOG_NS 10000000000ull	/* log outside accepts at most this often */
#define FP_FLAGS_NS	10000000ull	/* read the listener's O_NONBLOCK and Fast Open this often */
#define FP_ASK_NS	10000000ull	/* ask the kernel's count this often even when the model is empty */

struct fp_entry {
	uint64_t cookie;
	uint64_t t;
	uint32_t vs;
};

/* An accept the gate did not decide, as its listener's ring showed it
 * (outside_apply() counts, re-binds and logs each). */
enum fp_out_kind {
	FP_OUT_UNANSWERED,	/* no CONTINUE of ours: a race, a way past the
				 * filter, a process outside the service */
	FP_OUT_MOVED,		/* let through for another listener, the thread took
				 * one of this one's: its descriptor names this one now */
	FP_OUT_MOVED_DONE,	/* the same, read after its next accept: that
				 * request is over */
};

struct fp_out {
	struct vsd_arrival a;
	enum fp_out_kind kind;
};

struct fp_listener {
	struct vsd_gated_key key;
	uint32_t ring;
	int	 rb_fd;
	struct ring_buffer *rb;
	struct vsd_ringctl *ctl;	/* ours, in the mmap of vsd_ringctl */
	uint64_t dropped;		/* ctl->dropped when we last looked */
	struct fp_entry q[VSD_RING_BYTES / sizeof(struct vsd_arrival)];
	unsigned qh, qn;
	uint64_t early[FP_EARLY];	/* a ring of them, 0 = none */
	unsigned early_i;
	unsigned expect;		/* queued connections promised to threads let through: */
	struct fp_entry pr[FP_PROMISED];	/* their records */
	uint32_t expect_vs;		/* their VS if all the same, else 0 */
	uint64_t expect_t;
	unsigned void_n;		/* threads let through before the last drop, still to dequeue */
	uint64_t void_t;		/* when the last drop came */
	struct service_thread *direct;	/* a thread let into a blocking accept */
	uint64_t direct_cpu;		/* its CPU time then */
	uint64_t no_wait_t;		/* when no_wait was read (0: never) */
	uint64_t agreed_t;		/* when the kernel's count last matched the model */
	int	 no_wait;		/* non-blocking, or Fast Open: no thread waits in the kernel */
	uint32_t run_vs;		/* the VS of the latest arrivals... */
	unsigned run_len;		/* ...and how many in a row */
	int	 guard;			/* its slot in the guard's table, -1: none */
	_Atomic int *live;		/* that slot's flag: a thread waits in the kernel */
	int	 fed;			/* a record matched a drained connection: the ring works */
	int	 lost;			/* the model is off until the queue has been emptied */
	uint32_t id;			/* ours among the listeners, never 0 */
	uint32_t gen;			/* the model's generation: one more per drop */
	struct vsd_arrival ev[FP_EVENTS];	/* accept records, in ring order */
	unsigned nev;
	int	 ev_lost;		/* more than FP_EVENTS in one read */
	unsigned fd_moved;		/* accepts of threads let through for another listener */
	struct fp_out out[FP_OUTSIDE];	/* accepts the gate did not decide */
	unsigned nout, out_lost;
	/* cookies handed over, oldest first: with the tracepoint records the
	 * service's accept that returns one makes a record too. As many as
	 * the ring holds records: an older one's record was read, or lost. */
	uint64_t handed[VSD_RING_BYTES / sizeof(struct vsd_arrival)];
	unsigned hh, hn;
};

#define QCAP	(sizeof(((struct fp_listener *)0)->q) / sizeof(struct fp_entry))
#define HCAP	ARRAY_SIZE(((struct fp_listener *)0)->handed)

/* Mark f's guard slot: a thread waits in the kernel on it (the guard wakes it). */
static inline void
guard_live(struct fp_listener *f, int on)
{
	if (f->live)
		atomic_store(f->live, on);
}

/* --- fp-ring.c --- */
/* The accept records are attached: a thread let through can be followed. */
int fp_records_on(void);

/* --- fp-model.c --- */
/* The ring's callback (libbpf's ring_buffer_sample_fn): one record of f. */
int fp_on_record(void *ctx, void *data, size_t len);
/* The i-th entry of the model's queue from its head; drop the head. */
struct fp_entry *fp_q_at(struct fp_listener *f, unsigned i);
void fp_q_pop(struct fp_listener *f);
/* The model is off until a drain has emptied the kernel's queue. */
void fp_lose(struct gate *g, struct fp_listener *f);
/* Threads let through before the last drop may still dequeue. */
int fp_voided(const struct fp_listener *f);
/* No thread waits in the kernel's accept on f any more. */
void fp_direct_end(struct fp_listener *f);
/* The VS a record names, as the drain path would queue it (home if unknown). */
struct gate_vs *fp_entry_vs(struct gate *g, const struct fp_entry *e);
/* Read the ring and apply it; the kernel's queue length, or -1 when the
 * model does not match it. */
void fp_read(struct gate *g, struct gated_listener *l, uint64_t now);
int fp_sync(struct gate *g, struct gated_listener *l, uint64_t now);

#endif
