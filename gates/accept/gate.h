/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The accept gate: a supervisor that receives a gated service's accept()
 * calls through seccomp user notification, queues the connections per VS,
 * serves the VS with the largest remaining share relative to its share first
 * and re-binds the calling thread to that VS. See vsctl-run(8) for the policy.
 *
 * This header is the interface of libgateaccept.a, for vsd-gate.c, the unit
 * tests and the benchmarks. One job per file, each calling only files below
 * it (tests/lint-gate-calls.sh), the per-accept path top to bottom:
 *   gate.c          the shell: one notification, from gate_notify(); accept
 *                   semantics; serves waiters; the tick
 *   listener.c      which listener a caller's descriptor is; registering one;
 *                   letting go of one the service closed
 *   fastpath.c      CONTINUE instead of a hand-over when the kernel's next
 *                   connection is the one the gate would pick (the socket
 *                   gate's arrival ring tells it the kernel's queue); fp.h
 *     fp-decision.c its choice, without I/O (decision.h)
 *     fp-model.c    its model of the kernel's accept queue, from the ring
 *     fp-ring.c     the socket gate's maps, the ring, the guard
 *   drain.c         the kernel's queue into the per-VS queues; dead clients
 *   hold.c          holding a connection until its FastCGI params arrive,
 *                   classification by them (fcgi.c parses the records)
 *   enqueue.c       a drained connection into its VS's queue
 *   decision.c      the decision, without I/O (decision.h): which queued
 *                   connection an accept gets, where the thread serves it
 *   handover.c      ADDFD: a connection as the caller's accept result
 *   place.c         carrying out where a thread serves: the move, the charge
 *   trace.c         --trace FILE: the decision's events and answers
 *   answer.c        the seccomp answers (SEND, CONTINUE, ID_VALID)
 *   install.c       a VS table and rules put in force; vs-table-vsd.c: the
 *                   table vsd pushes; vsd-ask.c: asking vsd (start, refresh)
 *   decide.c        the rules: where a thread serves a connection
 *   queue.c         per-listener FIFOs per VS, the heap that orders them,
 *                   the callers waiting on a listener
 *   workers.c       a VS's limit on the pool's workers it holds at once:
 *                   the counts the decision reads
 *   share.c         CPU usage sampling, decaying window, remaining share, rank
 *   charge.c        a thread's CPU time, charged to the VS it ran in
 *   thread-exit.c   the threads' ends, watched instead of asked per accept
 *   rebind.c        the thread cache and re-binding (through each VS's
 *                   cgroup handle, lib/cgroup-handle.h, which decides what a
 *                   move takes on this host's cgroup layout)
 *   rcu-warm.c      the helper that keeps cgroup moves off RCU grace periods
 *   sched.c         the supervisor's and the warm helper's scheduling class
 *   classify.c      classification through the socket gate's table
 *   unixpeer.c      classification of Unix peers by their socket's cgroup
 *   wakeup.c        the wake-up connection for event-loop services
 *   vs-table.c      the VS table (from vsd or a file)
 *   status.c        the status socket read by `vsctl services`
 *   vsd-gate.c      main: fork + filter + exec, signals, the event loop
 */
#ifndef VSD_GATE_ACCEPT_H
#define VSD_GATE_ACCEPT_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "lib/cgroup-handle.h"
#include "lib/util.h"

struct rules;

struct gate_vs {
	uint32_t id;
	char	 name[VS_NAME_MAX + 1];
	unsigned share_bp;		/* guaranteed share, basis points */
	/* its cgroups: moves, CPU usage, the cgroup2 id (lib/cgroup-handle.h;
	 * the layout is the handle's business, never the gate's) */
	struct cg_handle cg;
	/* share.c */
	uint64_t usage_ns;		/* last cumulative usage read */
	uint64_t sample_t;		/* CLOCK_MONOTONIC ns of that read; 0 = never */
	double	 used_bp;		/* decaying average use, basis points of the machine */
	int	 remaining_bp;		/* share_bp - used_bp */
	int	 rank_bp;		/* remaining relative to the share, in
					 * [-BP_MAX, BP_MAX]: what the queues order by */
	double	 step_bp;		/* use one served connection adds (average) */
	uint64_t served_sample;		/* served at the last sample */
	uint64_t served;		/* connections served in (charged to) this VS */
	uint64_t charged_ns;		/* service CPU time spent in it (charge.c) */
	/* dbacct.c: the database's threads' CPU time (ns) and I/O (bytes)
	 * while they served its connections */
	uint64_t db_cpu_ns, db_read_bytes, db_write_bytes;
	/* dbcap.c: its cap on that CPU (basis points, 0: none) and burst (µs),
	 * from the rules' db-cpu and db-burst */
	unsigned db_cap_bp;
	uint64_t db_burst_us;
	int	 ridx;			/* its index in the gate's rules, -1: none */
	uint64_t active_t;		/* last time a connection of it was queued */
	int	 trace_rank;		/* the rank the trace last gave (trace.c) */
};

struct vs_table {
	struct gate_vs *v;			/* sorted by id */
	size_t	 n;
	char	*conns_map;		/* "# conns-map PATH" line from vsd, or NULL */
	uint64_t rules_hash;		/* "# rules HASH": the rules vsd applied; 0 = none */
	uint32_t next_id;		/* "# next-id N": vsd's next VS id; 0 = not said */
};

/* --- vs-table.c --- */
struct gate_vs *vs_table_find(struct vs_table *t, uint32_t id);
struct gate_vs *vs_table_find_name(struct vs_table *t, const char *name);
/* Parse "id name share_bp key=dir ..." lines (the format vsd's "gatetable"
 * command answers with, and what --vs-table files hold). */
int vs_table_parse(struct vs_table *t, const char *text);
/* Replace *t by *fresh, keeping per-VS state (fds, usage) for ids in both.
 * Ids that disappeared are written to gone[] (up to *ngone). */
void vs_table_merge(struct vs_table *t, struct vs_table *fresh, uint32_t *gone, size_t *ngone);
void vs_table_free(struct vs_table *t);
int vs_table_load_file(struct vs_table *t, const char *path);
/* vsd-ask.c: the table vsd has ("gatetable"). */
int vs_table_load_vsd(struct vs_table *t, const char *sockpath);
/* vsd-ask.c: one request to vsd's control socket, its reply's body; 0 or -errno (a
 * short timeout: it runs in the supervisor's event loop). */
struct buf;
int vsd_call(const char *sockpath, const char *cmd, struct buf *body);

/* --- share.c --- */
void share_init(unsigned window_ms);
unsigned share_window_ms(void);
/* Read the VS's usage counter and update its decaying average. */
int share_sample(struct gate_vs *v, uint64_t now);
/* The rank of a VS with share_bp that used used_bp (see share.c). */
int share_rank(unsigned share_bp, double used_bp);
/* remaining_bp and rank_bp from share_bp and used_bp. */
void share_update(struct gate_vs *v);
/* Sample only if the last sample is older than the sample period. */
void share_sample_lazy(struct gate_vs *v, uint64_t now);
uint64_t now_ns(void);
/* One step of the decaying average (exposed for benchmarks/experiments/gate-window.c). */
double share_ewma(double used_bp, uint64_t dusage_ns, uint64_t dt_ns, double tau_ns, long cpus);

/* --- queue.c --- */
struct queued_conn {
	struct queued_conn *next, *prev;
	int	 fd;
	uint32_t vs_id;
	uint64_t t_enq;
	int	 nonblock;	/* O_NONBLOCK is set on it now */
	int	 by_content;	/* its VS came from its request's params (hold.c) */
	/* hold.c, while it waits for its params (next/prev link the held ones) */
	struct gated_listener *held_l;
	uint32_t req_id;	/* the requester's VS id, 0 = unknown */
	uint64_t deadline;	/* CLOCK_MONOTONIC ns: then it is served from home */
	socklen_t peerlen;
	struct sockaddr_storage peer;
	uint64_t cookie;	/* SO_COOKIE, once the fast path has read it */
	int	 wk_waited;	/* passed over: its VS held its worker limit (workers.c) */
};

struct vs_queue {			/* one VS's FIFO on one listener */
	struct vs_queue *hnext;	/* hash chain */
	uint32_t vs_id;
	struct queued_conn *head, *tail;
	size_t	 len;
	ssize_t	 heap_i;	/* -1 when empty (not in the heap) */
	double	 key;		/* larger first, see queue_key() */
};

struct pending_accept;
struct fp_listener;
struct vsd_gated_key;

/* queue.c's order: a head gains this many basis points of rank a ms waited */
#define GATE_AGE_BP_PER_MS	0.1

struct gated_listener {
	struct gated_listener *next;
	dev_t	 dev;
	ino_t	 ino;
	int	 fd;		/* our dup of the service's listening socket */
	int	 family;	/* AF_INET, AF_INET6 or AF_UNIX (stream) */
	socklen_t local_len;	/* 0: wildcard address, ask each connection */
	struct sockaddr_storage local;	/* its address, if bound to one */
	int	 wakeup_fd;	/* our outstanding loopback wake-up connection, or -1 */
	socklen_t wakeup_len;
	struct sockaddr_storage wakeup_local;
	struct vs_queue **hash;
	size_t	 nhash;
	struct vs_queue **heap;	/* non-empty queues only */
	size_t	 nheap, capheap;
	size_t	 queued;
	size_t	 held;		/* connections of it waiting for their params (hold.c) */
	struct pending_accept *wait_head, *wait_tail;
	uint64_t last_use;
	int	 owner_pidfd;	/* the thread that listen()ed on it, or -1 (gate.c) */
	int	 owner_fd;	/* the descriptor it listened on */
	struct fp_listener *fp;	/* fastpath.c; NULL: every accept is drained */
	struct vsd_gated_key *port_reg;	/* fp-ring.c, --fast off: its port
					 * registered with no ring; NULL: none */
};

struct gated_listener *listen_new(int fd, dev_t dev, ino_t ino);
void listen_free(struct gated_listener *l);
struct vs_queue *queue_get(struct gated_listener *l, uint32_t vs_id, int create);
void queue_push_tail(struct gated_listener *l, struct queued_conn *c, struct vs_table *t);
void queue_push_head(struct gated_listener *l, struct queued_conn *c, struct vs_table *t);
/* The origin of the queues' times (the first listener's creation). */
uint64_t queue_epoch(void);
/* Take the head of the best queue; NULL when everything is empty. */
struct queued_conn *queue_pop_best(struct gated_listener *l);
/* The same among the queues ok() takes; NULL if it takes none. */
struct queued_conn *queue_pop_best_if(struct gated_listener *l,
    int (*ok)(struct vs_queue *q, void *arg), void *arg);
/* Recompute every key from the VSs' current remaining shares. */
void queue_rekey(struct gated_listener *l, struct vs_table *t);
/* Move the connections queued for vs_id to home's queue (VS destroyed). */
void queue_reroute(struct gated_listener *l, uint32_t vs_id, uint32_t home, struct vs_table *t);
void queue_sample_shares(struct gated_listener *l, struct vs_table *t, uint64_t now);
struct gate;
/* w was answered, or its caller is gone: off its listener's wait list. */
void waiter_del(struct gate *g, struct pending_accept *w);

/* --- wakeup.c --- */
/* Make a non-blocking listener readable again while the gate holds connections. */
void wakeup_arm(struct gated_listener *l);
/* The address at which we reach l (a wildcard's: loopback); 0 or -1. */
int listener_reach(const struct gated_listener *l, struct sockaddr_storage *ss, socklen_t *sl);
/* 1 (and the wake-up is over) if c is our own wake-up connection. */
int wakeup_is_ours(struct gated_listener *l, const struct queued_conn *c);

/* --- dbthreads.c: the database mode (protocol mysql) --- */
struct gate;
struct buf;
/* 1 if each thread serves in its connection's VS (and the accepting
 * thread stays home): a mysql service. */
int gate_db_mode(const struct gate *g);
/* The rules or the VS table changed: load, and push them, as needed. */
void dbthreads_sync(struct gate *g);
/* The service's process started (tgid) or ended (0). */
void dbthreads_run(struct gate *g, pid_t tgid);
/* The descriptor that is readable with moves to make, -1 if none. */
int dbthreads_fd(void);
void dbthreads_ready(void);
void dbthreads_status(const struct gate *g, struct buf *b);
/* Settle the database's threads' CPU and I/O on the VSs they serve (the
 * tick, at most once a second unless force; a status request). */
void dbthreads_settle(struct gate *g, int force);

/* --- dbacct.c: the database mode's CPU and I/O per VS --- */
struct service_thread;
/* Charge th's CPU time and I/O since its last settling to the VS it served
 * then (none at home: dbacct_home() gives home the rest), then count for
 * the VS it is bound to now. */
void dbacct_settle(struct vs_table *t, struct service_thread *th, uint32_t home);
/* The process tgid's own totals less what the other VSs were charged since
 * the last call: home's. tgid 0: the process ended. */
void dbacct_home(struct vs_table *t, pid_t tgid, uint32_t home);

/* --- rebind.c --- */
struct service_thread {
	struct service_thread *hnext;
	pid_t	 tid;
	pid_t	 tgid;
	int	 pidfd;		/* of the thread (PIDFD_THREAD, Linux 6.9+) or of its process */
	int	 pidfd_thread;	/* it is the thread's */
	int	 exit_watch;	/* its end is watched (thread-exit.c) */
	uint64_t start;		/* its start time (/proc stat field 22), for the latter */
	uint32_t bound;		/* VS the thread sits in (cpu, cpuacct); 0 = unknown */
	uint32_t cg2;		/* VS of its process's cgroup2 dir; 0 = unknown */
	struct pending_accept *waiter;	/* its pending accept, if any */
	int	 last_fd;	/* fd number of its last listener... */
	struct gated_listener *last_l;	/* ...checked with kcmp() before reuse, */
	uint32_t fd_seen;	/* ...unless that listener's ring (fast path id) showed
				 * the thread's last accept on it: then once not */
	int	 fd_unseen;	/* let through, and no ring showed what it took */
	uint32_t fd_moved_to;	/* found at its next accept: its number names this
				 * listener (fast path id) now, whose record of
				 * that accept, if it took one, is fd_moved */
	/* charge.c: its CPU time at the last settling, and the VS that time
	 * since goes to (0: none yet); /proc/.../schedstat, -1 until opened */
	uint64_t cpu_mark;
	uint32_t cpu_vs;
	int	 sched_fd;
	/* dbacct.c: the database mode's marks (CPU ns, read and written
	 * bytes) and the VS they go to (0: none yet); /proc/.../io, -1 until
	 * opened */
	uint64_t db_cpu_mark, db_rd_mark, db_wr_mark;
	uint32_t db_vs;
	int	 io_fd;
	struct gated_listener *direct_l;	/* fastpath.c: it waits in that listener's
						 * accept in the kernel */
	/* fastpath.c: let through on the fast path listener fp_id (0: none)
	 * for the connection fp_cookie (0: whichever comes, as the direct
	 * waiter), bound to VS fp_vs for it; fp_gen: the listener's model then */
	uint32_t fp_id, fp_vs, fp_gen;
	uint64_t fp_cookie;
	/* workers.c: the VS whose connection it serves (0: none), and
	 * whether it is counted in the pool */
	uint32_t wk_vs;
	int	 wk_pool;
};

/* charge.c: settle th's CPU time since the last settling on the VS it ran
 * in, then start counting for the VS it is bound to now; all threads at once. */
struct gate;
void charge_settle(struct gate *g, struct service_thread *th);
void charge_settle_all(struct gate *g);
/* The thread's CPU time so far (ns), 0 if it cannot be read. */
uint64_t charge_thread_cpu(struct service_thread *th);

/* Hybrid hosts: when the cgroup2 membership follows the binding. */
enum cg2_mode {
	CG2_LAZY = 0,	/* when a bound thread creates an AF_INET/AF_INET6 socket */
	CG2_ALWAYS,	/* with every re-binding (whole process; for measurements) */
	CG2_NEVER,	/* never: cgroup2 stays with the home VS */
};

int bind_init(enum cg2_mode mode);
/* Off: hold each thread by its process's pidfd, as before Linux 6.9 (the
 * fallback, forced on a newer kernel to measure it). */
void bind_pidfd_thread(int on);
/* Re-binding times (µs) over the last 4096 moves. */
void bind_stats(uint64_t *count, uint64_t *failed, unsigned *p50, unsigned *p99,
    unsigned *max);
/* The thread behind a notification; a fresh pidfd if the cached one has died. */
struct service_thread *thread_get(pid_t tid, int *is_new);
/* The thread we know by that id, without opening or checking anything. */
struct service_thread *thread_find(pid_t tid);
/* Take th out of the cache; it is handed back by thread_reap(). */
void thread_forget(struct service_thread *th);
/* A thread forgotten (it ended, or its TID came back), for the shell to
 * end what the layers above keep of it, then thread_free(); NULL: none. */
struct service_thread *thread_reap(void);
void thread_free(struct service_thread *th);
/* Move the thread into v unless it is already there (the handle decides
 * whether its process moves with it). 0, 1 = moved, -errno. */
int bind_thread(struct service_thread *th, struct gate_vs *v);
/* The process's cgroup2 membership, moved lazily when it creates a socket,
 * where that membership does not follow bind_thread(). */
int bind_cgroup2(struct service_thread *th, struct gate_vs *v);
void thread_sweep(void);
/* Has the task of this pidfd ended (poll(2), no wait)? */
int pidfd_exited(int pidfd);
/* thread-exit.c: the epoll descriptor the shell polls for threads' ends
 * (made by the first call; nothing is watched until then), watching th's,
 * the thread of that TID if its end is watched, and forgetting those that
 * ended (thread_reap() hands them back). */
int thread_exit_fd(void);
void thread_watch(struct service_thread *th);
struct service_thread *thread_watched(pid_t tid);
void thread_exits(void);
/* 1 if moving th would also move another known thread of its process that
 * is not waiting in accept (it serves a request): where a move takes the
 * whole process. */
int thread_move_disturbs(const struct service_thread *th);
/* Iterate all known threads (for status). */
void thread_foreach(void (*fn)(struct service_thread *, void *), void *arg);
uint64_t bind_moves(void);

/* --- rcu-warm.c --- */
/* --warm: who makes the no-op moves (vsctl-run(8)); the words' order */
enum warm_mode { WARM_ON, WARM_OFF, WARM_HELPER, WARM_HELPER_FIFO, WARM_SUPERVISOR };
/* Keep cgroup moves off RCU grace periods while we move: start the helper. */
int rcu_warm_start(const struct gate_vs *home, enum warm_mode m);
/* A move was made: keep the no-op moves going for another second. */
void rcu_warm_kick(void);
/* WARM_SUPERVISOR: poll()'s timeout until our next no-op move (-1: none
 * due), and that move once it is due. */
int rcu_warm_timeout(uint64_t now);
void rcu_warm_run(uint64_t now);
/* The helper's pid (0: none); the no-op moves so far, those that came late
 * (over 10 ms after the previous one) and those that took over 1 ms. */
pid_t rcu_warm_stats(uint64_t *writes, uint64_t *late, uint64_t *slow);

/* --- sched.c --- */
/*
 * The supervisor's real-time priority, taken before privileges are dropped;
 * on=0 (--sched off) does nothing. 0, or -errno if it fell back to nice -20
 * (logged). sched_tick() takes it back after a demotion; sched_child(), in
 * the service's child, puts back the RLIMIT_RTTIME we were started with;
 * sched_helper(), in the warm helper, takes the supervisor's class and
 * guard (0, or -errno: it stays SCHED_OTHER, logged).
 */
int sched_supervisor(int on);
void sched_tick(uint64_t now);
void sched_child(void);
int sched_helper(void);

/* --- classify.c --- */
void conns_init(const char *map_path);
/* The VS id recorded for the connection's initiator, 0 if unknown. The
 * local address is local_fixed if not NULL, else read from fd. */
uint32_t conns_lookup(int fd, const struct sockaddr_storage *local_fixed,
    const struct sockaddr_storage *peer, socklen_t peerlen);
/* The VS id of a connection from another host, by the mark vsd's remote
 * lines set on its SYN (lib/remote-mark.h); 0 if none. */
uint32_t conns_by_mark(int fd);

/* --- unixpeer.c --- */
/* Load the peer iterator (before privileges are dropped); 0 or -errno. */
int unixpeer_init(void);
/* The VS whose directory holds the socket at the other end of the accepted
 * Unix connection fd (or its nearest ancestor in the table); 0 if unknown. */
uint32_t unixpeer_lookup(struct vs_table *t, int fd);
/* The cgroup2 id of a VS's directory: its inode number (Linux 5.5+);
 * UINT64_MAX if it has none. */
uint64_t vs_cg2_id(struct gate_vs *v);

/* --- gate.c --- */
struct pending_accept {
	struct pending_accept *next, *prev;
	uint64_t id;		/* seccomp notification id */
	struct service_thread *th;
	struct gated_listener *l;
	uint64_t addr, addrlen;	/* caller's pointers (0 = none) */
	int	 flags;		/* accept4 flags */
	uint64_t t;
};

/* --fast (fastpath.c) */
enum gate_fast {
	GATE_FAST_ON = 0,	/* CONTINUE for the kernel's head, and threads wait
				 * in the kernel while nothing is queued */
	GATE_FAST_EXACT,	/* CONTINUE only once the thread is re-bound: a thread
				 * waits in the gate while nothing is queued */
	GATE_FAST_OFF,		/* every connection drained and handed over */
};
/* "on", "exact", "off": the mode, or -1. */
int gate_fast_parse(const char *s);
const char *gate_fast_name(int mode);

/* workers.c */
struct wk_vs {
	uint32_t id;
	unsigned held;		/* workers serving a connection of it now */
	unsigned traced;	/* held as the trace last said it (trace.c) */
	uint64_t waits;		/* connections passed over while it held its limit */
};

/* The pool and what each VS holds of it: the gate's (struct gate's wk),
 * given to the decision as its input (decision.h), no global. */
struct workers {
	struct wk_vs *v;
	size_t	 n, cap;
	size_t	 pool;		/* the service's live threads that have called accept */
	size_t	 pool_traced;	/* the pool as the trace last said it */
	/* workers_on(): whether the rules last seen give any VS a limit */
	const struct rules *seen;
	uint64_t seen_hash;
	int	 on;
};

struct gate {
	int	 notify_fd;
	uint32_t home;
	struct vs_table tab;
	const char *vsd_socket;		/* the table pushed by vsd, or */
	const char *table_file;		/* from this file */
	struct gated_listener *listeners;
	size_t	 nwaiters;
	uint64_t last_refresh;
	uint64_t refresh_asked;		/* a VS was gone under us (a --vs-table file) */
	/* requests we made to vsd (at start, on "refresh"; never on the
	 * accept path), and the tables vsd pushed */
	uint64_t vsd_pulls, vsd_pushes;
	uint64_t handed, requeued, dropped_dead, eagain, passed;
	/* fastpath.c: accepts let through to the kernel's head, threads let
	 * wait in the kernel and re-bound when their connection came (and the
	 * CPU they ran before that, in their previous VS), models dropped,
	 * records of connections no longer queued, threads let through that
	 * took a connection of a VS other than the one they were bound to */
	uint64_t fp_continued, fp_direct, fp_direct_cpu_ns, fp_direct_cpu_max;
	uint64_t fp_resync, fp_stale, fp_direct_moved, fp_misordered, fp_fd_moved;
	/* fastpath.c: accepts the records show that the gate did not answer */
	uint64_t outside;
	/* refuse.c: io_uring calls, accepts of another ABI, and seccomp(2)
	 * calls asking for a listener, refused */
	uint64_t refused_ring, refused_compat, refused_listener;
	int	 fast;			/* enum gate_fast */
	int	 sync_wakeup;		/* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP is set */
	/* decide.c: the rules vsd applied (NULL: the default rules) */
	struct rules *rules;
	uint64_t rules_hash;
	const char *rules_file;		/* --rules FILE, with --vs-table */
	uint32_t *id_of;		/* VS id per rules index (0: not in the table) */
	size_t	 nid_of;
	uint64_t decided[5];		/* decisions per enum rules_action */
	/* hold.c: classification by the request's FastCGI params */
	const char *svc_name;		/* the service's name, for rules_service_index() */
	int	 svc_idx;		/* its index in the rules, -1: not declared */
	int	 want_attrs;		/* the rules match request content for it */
	unsigned attrs_timeout_ms;	/* how long a connection may wait for its params */
	int	 hold_epfd;		/* epoll set of the held connections, if hold_open */
	int	 hold_open;
	struct queued_conn *held_head, *held_tail;	/* in arrival (deadline) order */
	size_t	 nheld;
	uint64_t held_total, by_content, attrs_nomatch, attrs_bad, attrs_timeout;
	/* unclassified: the sum of attrs_bad, attrs_timeout, attrs_long (params
	 * past FCGI_PARAMS_MAX) and attrs_cut (the peer stopped sending) */
	uint64_t unclassified, attrs_long, attrs_cut;
	int	 unclass_idx;		/* rules' VS index for them, -1: home */
	uint64_t attrs_waited;		/* params not there when drained: waited in epoll */
	/* pmqos.c: a PM-QoS CPU latency request of 0 while accepts come */
	int	 pmqos;			/* --pm-qos on */
	int	 pmqos_held;		/* pmqos_fd is open, the request held */
	int	 pmqos_fd;		/* /dev/cpu_dma_latency */
	uint64_t pmqos_last;		/* the last accept (now_ns()) */
	uint64_t pmqos_failed;		/* when the open failed; 0: it did not */
	uint64_t pmqos_holds;		/* how many times it was taken */
	/* workers.c: the pool's workers each VS holds, for the limits */
	struct workers wk;
	/* trace.c: --trace FILE */
	int	 tracing;
	int	 trace_fd;
};

int gate_init(struct gate *g, int notify_fd);
/* The held set (hold.c) is readable: queue what completed, serve its waiters. */
void gate_hold_ready(struct gate *g);
/* Periodic work; returns the next timer period in ms. */
unsigned gate_tick(struct gate *g);
void gate_close_all(struct gate *g);
size_t gate_waiting_listeners(struct gate *g, struct gated_listener **out, size_t max);
/* What to poll for l: the listener, or the ring while a thread waits in the kernel. */
int gate_listener_pollfd(const struct gated_listener *l);
/* One notification is readable on notify_fd. */
int gate_notify(struct gate *g);
/* thread_exit_fd() is readable: forget the threads that ended, before the
 * next notification (thread-exit.c says why then). */
void gate_threads_ended(struct gate *g);
/* A listener with waiters became readable. */
void gate_listener_ready(struct gate *g, struct gated_listener *l);
/* Connections were queued outside a drain: serve the waiters, or make an
 * event loop's listener readable. */
void gate_released(struct gate *g, struct gated_listener *l);

/* --- listener.c --- */
void listener_init(void);
/* The gated listener behind the caller's descriptor fd; NULL and *not_ours
 * for anything else (the call goes through). */
struct gated_listener *listener_get(struct gate *g, struct service_thread *th, int fd,
    int *not_ours);
/* The gated listener that sfd (our dup of a service's descriptor) is, known
 * or new (*fresh); NULL if it is none (sfd closed). before_listen: a TCP
 * socket about to listen. */
struct gated_listener *listener_of(struct gate *g, int sfd, int before_listen, int *fresh);
/* AF_INET, AF_INET6 (TCP) or AF_UNIX (stream): a listener we gate; else 0. */
int listener_family(int fd);
/* Is the socket bound to a port (not one that listen() is to choose)? */
int listener_port_bound(int fd);
/* The service binds a socket to addr: let go of listeners on its TCP port
 * that it has closed. */
void listener_release_port(struct gate *g, const struct sockaddr_storage *addr);
/* Forget l, registered for a listen() that failed. */
void listener_unlink(struct gate *g, struct gated_listener *l);
/* th listened on l at fd: l is kept while it has it there. */
void listener_own(struct gated_listener *l, const struct service_thread *th, int fd);
/* Does the service still have l? */
int listener_in_use(struct gated_listener *l);
void listener_drop(struct gated_listener *l);

/* --- drain.c --- */
/* Move what the kernel has queued on l into the per-VS queues. */
void gate_drain(struct gate *g, struct gated_listener *l);
/* c, which the decision picked, had its client hang up while queued:
 * closed, counted; 1 if so. */
int gate_drop_dead(struct gate *g, struct queued_conn *c);

/* --- enqueue.c --- */
/* The requester's VS by the socket gate's table; NULL: unknown or gone. */
struct gate_vs *gate_requester(struct gate *g, struct gated_listener *l, struct queued_conn *c);
/* Queue c as v's (home's if v is NULL), as the drain does. */
void gate_enqueue(struct gate *g, struct gated_listener *l, struct queued_conn *c,
    struct gate_vs *v, uint64_t now);
/* The kernel's accept queue length (tcpi_unacked), -1 if unknown. */
int gate_backlog(int fd);
/* The VS with id; NULL for 0 or an id the table does not have. */
struct gate_vs *gate_vs_by_id(struct gate *g, uint32_t id);
/* v had a connection now: keep its share sampled. */
void gate_vs_active(struct gate *g, struct gate_vs *v, uint64_t now);

/* --- handover.c --- */
/* Hand c to waiter w as its accept's result: 0, or -ENOENT (w was
 * interrupted) / another -errno (w got it); then c is back at the head of
 * its queue. w is gone either way. */
struct decision;
int gate_handover(struct gate *g, struct pending_accept *w, const struct decision *d);

/* --- place.c --- */
struct decision_state;
/* The decision's view of g (decision.h). */
void gate_decision_state(struct gate *g, struct decision_state *s);
/* Carry out d for th: move it where d says, settle its CPU; the VS charged
 * (d->c's VS becomes home's if its VS was destroyed under us). */
struct gate_vs *gate_bind(struct gate *g, struct service_thread *th, const struct decision *d);
/* Where the rules say th serves a connection of VS vs_id: decided and done. */
struct gate_vs *gate_rebind_vs(struct gate *g, struct service_thread *th, uint32_t vs_id);

/* --- install.c --- */
/* Read the table again: ask vsd (at start, or on "refresh"), or the file. */
void gate_refresh(struct gate *g, int force);
/*
 * Put a new VS table in force (it is moved from fresh), with the rules vsd
 * applied if from_vsd and its rules hash changed: rules() loads them, or
 * fails and the last good ones stay. Connections queued for a VS that is gone
 * go home. Called between two notifications: no decision sees half of it.
 */
void gate_install(struct gate *g, struct vs_table *fresh, int from_vsd,
		  int (*rules)(void *arg, struct rules **rs), void *arg);

/* --- vs-table-vsd.c --- */
/* A table and rules pushed by vsd on the status socket ("push TLEN RLEN" and
 * the bytes): read, put in force, acknowledged on fd. */
void gate_push(struct gate *g, int fd, const char *cmd);

/* --- trace.c: --trace FILE, the decision's events and answers --- */
struct decision;
/* Create path (never an existing file, no link followed); 0 or -errno. */
int trace_open(struct gate *g, const char *path);
void trace_table(struct gate *g);
/* The rules in force, as text a replay loads ("rules -": the default rule). */
void trace_rules(struct gate *g);
void trace_arrive(struct gate *g, const struct gated_listener *l, const struct queued_conn *c);
/* what: "dead" (closed instead of handed over), "requeue" (back to its head) */
void trace_conn(struct gate *g, const char *what, const struct queued_conn *c);
void trace_rekey(struct gate *g, const struct gated_listener *l);
void trace_gone(struct gate *g, uint32_t id);
/* The decision's answer as a trace line ("-> ...", no newline). */
void trace_answer(char *b, size_t len, const struct decision *d);
void trace_decision(struct gate *g, const struct gated_listener *l, const struct pending_accept *w,
    const struct decision *d);
/* The fast path's choice (fp-decision.c) for th, why: "accept" or
 * "rules"; its state first, then its answer. */
struct fp_view;
struct fp_decision;
void trace_fp(struct gate *g, const struct gated_listener *l, const struct service_thread *th,
    const char *why, const struct fp_view *v, const struct fp_decision *a);
void trace_fp_answer(char *b, size_t len, const struct fp_decision *a);

/* --- answer.c --- */
struct seccomp_notif_resp;
void gate_answer_init(struct seccomp_notif_resp *r);
/* Answer notification id with error (0: success) and flags. */
void gate_respond(struct gate *g, uint64_t id, int error, uint32_t flags);
/* Answer notification id with CONTINUE; 0, or -errno (-ENOENT: interrupted). */
int gate_continue(struct gate *g, uint64_t id);
/* CONTINUE, counted as passed (a call the gate does not serve). */
void gate_let_through(struct gate *g, uint64_t id);
/* Is notification id still pending (its caller not interrupted)? */
int gate_id_valid(struct gate *g, uint64_t id);

/* --- fastpath.c --- */
/* Where the socket gate's maps are: the directory of the table's pin; with
 * mode GATE_FAST_ON, start the guard that wakes threads left waiting in the
 * kernel if we die. */
void fp_init(const char *conns_map, int mode);
/* Register a TCP listener with the socket gate, so that its connections are
 * recorded, and for the fast path (with --fast off, its port only); 0, or
 * -1 (it is drained as before, unrecorded connections served at home). */
int fp_attach(struct gate *g, struct gated_listener *l);
void fp_detach(struct gated_listener *l);
/* th calls accept again: apply the record of what it took when let through,
 * end its wait in the kernel. */
void fp_thread_settle(struct gate *g, struct service_thread *th);
/* th called accept on l (nobody else waits): 1 if answered here. */
int fp_accept(struct gate *g, struct gated_listener *l, struct service_thread *th, uint64_t id);
/* l or its ring is readable, or waiters wait: with serve, let them through
 * by CONTINUE (0: the caller has just tried); 1 if the kernel's queue must
 * not be drained now. */
int fp_ready(struct gate *g, struct gated_listener *l, int serve);
/* A connection the drain accepted: 1 and its VS if its record names one;
 * its cookie in *cookie (0 if unread). */
int fp_drained(struct gated_listener *l, int fd, uint32_t *vs, uint64_t *cookie);
/* c of l was handed over: its accept record, if one comes, is not an outside accept. */
void fp_handed(struct gated_listener *l, struct queued_conn *c);
void fp_drain_done(struct gate *g, struct gated_listener *l);
/* The ring's fd while a thread waits in the kernel (poll it), else -1. */
int fp_pollfd(const struct gated_listener *l);
/* Threads let through have not all taken their connection yet. */
int fp_busy(const struct gated_listener *l);
/* l's id on the fast path (never 0), 0 if it is not on it. */
uint32_t fp_listener_id(const struct gated_listener *l);
void fp_thread_gone(struct service_thread *th);
/* New rules are in force: a thread waiting in l's kernel accept was let in
 * under the old ones; move it now where the new ones put its run's VS. */
void fp_rules_changed(struct gate *g, struct gated_listener *l);
/* The tick, and a status request: read l's ring (accepts outside the gate). */
void fp_tick(struct gate *g, struct gated_listener *l, uint64_t now);

/* --- refuse.c: io_uring, the other ABIs' accepts, a listener of the
 * service's own (vsctl-run(8)) --- */
struct seccomp_notif;
/* Add the refused calls to the service's filter, a scmp_filter_ctx with
 * its attributes set. */
int refuse_filter_add(void *ctx);
/* Is req a call the filter sends only to be refused? native_arch: AUDIT_ARCH_*. */
int refuse_wanted(const struct seccomp_notif *req, uint32_t native_arch);
/* Refuse it (ENOSYS for io_uring, EBUSY for a listener, EPERM for an
 * accept), count, log once. */
void refuse_call(struct gate *g, const struct seccomp_notif *req, uint32_t native_arch);

/* --- records.c --- */
/* Attach the fast path's accept records on the pins in pindir: "fexit" or
 * "tracepoint" (the hook in use), or NULL if the kernel takes neither. */
const char *records_start(const char *pindir);
/* The hook in use, or "none". */
const char *records_hook(void);

/* --- hold.c --- */
/* Hold c until its params arrive, or classify it now if they are here. */
void hold_add(struct gate *g, struct gated_listener *l, struct queued_conn *c, uint64_t now);
/* The held set is readable: classify what completed, one connection a
 * call; the listener it was queued on, NULL when none is left. */
struct gated_listener *hold_ready_next(struct gate *g);
/* Serve from home what waited past the bound, one a call; its listener, or NULL. */
struct gated_listener *hold_expire_next(struct gate *g, uint64_t now);
/* Close every held connection of l (NULL: of every listener). */
void hold_close(struct gate *g, struct gated_listener *l);

/* --- pmqos.c --- */
/* An accept came: take the request if it is not held (--pm-qos on). */
void pmqos_note(struct gate *g, uint64_t now);
/* Drop it a second after the last accept. */
void pmqos_tick(struct gate *g, uint64_t now);
void pmqos_release(struct gate *g);

/* --- decide.c --- */
/*
 * Take new rules (NULL: the default ones) or keep the present ones if the
 * hash says they are the same; the table's VSs are indexed again. A gate
 * never sees half a rule set: the pointer is swapped between two accepts.
 */
void gate_rules_update(struct gate *g, uint64_t hash, struct rules *rs);
/* After the table changed: each VS's index in the rules, and back. */
void gate_rules_index(struct gate *g);
/* Fetch and load the rules vsd applied ("gaterules"); 0 or -errno. */
int gate_rules_load_vsd(const char *sockpath, struct rules **rs);
int gate_rules_load_file(const char *path, struct rules **rs);
/* Load rules vsd wrote (rules_write()); name says where they came from. */
int gate_rules_load_text(const char *name, const char *text, size_t len, struct rules **rs);
struct rules_req_attrs;
/*
 * The VS a request belongs to by its content (rules_query_attrs() for this
 * service, the caller taken as the home VS: which thread will serve it is
 * not known while it is queued); NULL when no content rule or site matches.
 * A VS of the file that vsd does not have: home.
 */
struct gate_vs *gate_decide_attrs(struct gate *g, struct gate_vs *req,
    const struct rules_req_attrs *a);

/*
 * Where a request goes whose params cannot be read (hold.c): the VS the
 * service's rules name (`unclassified VS`), else home.
 */
struct gate_vs *gate_unclassified_vs(struct gate *g);

/* --- workers.c --- */
/* The most workers a VS with `workers n` or `workers bp` (basis points of
 * the pool) may hold in a pool of npool; 0: no limit. */
unsigned workers_limit(unsigned n, unsigned bp, size_t npool);
unsigned workers_held(const struct workers *w, uint32_t vs_id);
/* Connections of the VS passed over while it held its limit. */
uint64_t workers_waits(const struct workers *w, uint32_t vs_id);
/* 1 if the VS holds its limit (n, bp as for workers_limit()) now. */
int workers_full(const struct workers *w, uint32_t vs_id, unsigned n, unsigned bp);
void workers_wait(struct workers *w, uint32_t vs_id);
/* th calls accept: it joins the pool, and holds no VS any more; the VS it
 * held (0: none). */
uint32_t workers_back(struct workers *w, struct service_thread *th);
/* th was handed a connection of vs_id. */
void workers_take(struct workers *w, struct service_thread *th, uint32_t vs_id);
/* th ended (or its id is reused): out of the pool, its VS released. */
void workers_thread_gone(struct workers *w, struct service_thread *th);
/* 1 if rs (with hash, to see a change) gives any VS a worker limit. */
int workers_on(struct workers *w, const struct rules *rs, uint64_t hash);
void workers_free(struct workers *w);

/* --- status.c --- */
/* What the supervisor says of its service, besides the gate's figures. */
struct status_info {
	const char *name;
	pid_t	 pid;		/* the service's main process, 0 while none runs */
	const char *state;	/* starting, running, restarting, failed, stopping */
	int	 managed;	/* vsd started it (--restart) */
	unsigned restarts;
	long long since;	/* when the state last changed, s since the epoch */
	int	 last_status;	/* wait status of the last run, -1 if none ended */
	const char *user, *group;	/* whom the service runs as; NULL: as we do */
	int	 stats;		/* answer "stats" (lines for vsctl top), not JSON */
};
/* Listen at path: 0600, or 0660 with group unless it is (gid_t)-1. */
int status_open(const char *path, gid_t group);
/*
 * Accept one client and read its request line ("status", "refresh", "stop"
 * or "push ..."; nothing means "status") into cmd, and no byte after it, waiting for it at most 20 ms; the
 * client's uid from SO_PEERCRED. Returns the connection, or -1 (a client
 * that is not root, our uid or in group is told so and closed).
 */
int status_accept(int lfd, gid_t group, char *cmd, size_t len, uid_t *uid);
/* Answer with one JSON object and close fd. */
void status_reply(struct gate *g, int fd, const struct status_info *si);

#endif
