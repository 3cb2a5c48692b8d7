/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The accept gate: a supervisor that receives a gated service's accept()
 * calls through seccomp user notification, queues the connections per VS,
 * serves the VS with the largest remaining share first and re-binds the
 * calling thread to that VS. See vsctl-run(8) for the policy.
 *
 * One job per file:
 *   vstab.c   the VS table (from vsd or a file) and its refresh
 *   share.c   CPU usage sampling, decaying window, remaining share
 *   queue.c   per-listener FIFOs per VS and the heap that orders them
 *   rebind.c    thread cache and cgroup moves (re-binding)
 *   classify.c   classification through the socket gate's map
 *   gate-accept.c         one notification: accept semantics and hand-over
 *   status.c  the status socket read by `vsctl services`
 *   supervisor.c          fork + filter + exec, signals, event loop (vsd-gate)
 */
#ifndef VSD_GATE_ACCEPT_H
#define VSD_GATE_ACCEPT_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "lib/util.h"

/* Cgroup directories of one VS, per hierarchy. On a pure-v2 host only
 * GCG_UNIFIED is set and it carries the controllers. */
enum gcg {
	GCG_CPU = 0,		/* v1 cpu: the scheduler acts here */
	GCG_CPUACCT,		/* v1 cpuacct: usage is read here */
	GCG_MEMORY,
	GCG_PIDS,
	GCG_UNIFIED,		/* cgroup2: BPF sees this membership */
	GCG_MAX,
};

struct gvs {
	uint32_t id;
	char	 name[VS_NAME_MAX + 1];
	unsigned share_bp;		/* guaranteed share, basis points */
	char	*dir[GCG_MAX];		/* NULL where the hierarchy is absent */
	/* hot-path file descriptors, opened on first use */
	int	 fd_tasks[GCG_MAX];	/* v1 "tasks" / v2 "cgroup.procs" */
	int	 fd_usage;		/* cpuacct.usage or cpu.stat */
	/* share.c */
	uint64_t usage_ns;		/* last cumulative usage read */
	uint64_t sample_t;		/* CLOCK_MONOTONIC ns of that read; 0 = never */
	double	 used_bp;		/* decaying average use, basis points of the machine */
	int	 remaining_bp;		/* share_bp - used_bp */
	uint64_t served;		/* connections handed over for this VS */
	uint64_t active_t;		/* last time a connection of it was queued */
};

struct vstab {
	struct gvs *v;			/* sorted by id */
	size_t	 n;
	int	 pure_v2;
	char	*conns_map;		/* "# conns-map PATH" line from vsd, or NULL */
};

/* --- vstab.c --- */
struct gvs *vstab_find(struct vstab *t, uint32_t id);
struct gvs *vstab_find_name(struct vstab *t, const char *name);
/* Parse "id name share_bp key=dir ..." lines (the format vsd's "gatetable"
 * command answers with, and what --vs-table files hold). */
int vstab_parse(struct vstab *t, const char *text);
/* Replace *t by *fresh, keeping per-VS state (fds, usage) for ids in both.
 * Ids that disappeared are written to gone[] (up to *ngone). */
void vstab_merge(struct vstab *t, struct vstab *fresh, uint32_t *gone, size_t *ngone);
void vstab_free(struct vstab *t);
int vstab_load_file(struct vstab *t, const char *path);
int vstab_load_vsd(struct vstab *t, const char *sockpath);
int cgroup_is_pure_v2(void);

/* --- share.c --- */
void share_init(unsigned window_ms);
unsigned share_window_ms(void);
/* Read the VS's usage counter and update its decaying average. */
int share_sample(struct gvs *v, uint64_t now);
/* Sample only if the last sample is older than the sample period. */
void share_sample_lazy(struct gvs *v, uint64_t now);
uint64_t now_ns(void);
/* One step of the decaying average (exposed for benchmarks/experiments/gate-window.c). */
double share_ewma(double used_bp, uint64_t dusage_ns, uint64_t dt_ns, double tau_ns, long cpus);

/* --- queue.c --- */
struct gconn {
	struct gconn *next, *prev;
	int	 fd;
	uint32_t vs_id;
	uint64_t t_enq;
	int	 nonblock;	/* O_NONBLOCK is set on it now */
	socklen_t peerlen;
	struct sockaddr_storage peer;
};

struct gq {			/* one VS's FIFO on one listener */
	struct gq *hnext;	/* hash chain */
	uint32_t vs_id;
	struct gconn *head, *tail;
	size_t	 len;
	ssize_t	 heap_i;	/* -1 when empty (not in the heap) */
	double	 key;		/* larger first, see queue_key() */
};

struct gwaiter;

struct glisten {
	struct glisten *next;
	dev_t	 dev;
	ino_t	 ino;
	int	 fd;		/* our dup of the service's listening socket */
	socklen_t local_len;	/* 0: wildcard address, ask each connection */
	struct sockaddr_storage local;	/* its address, if bound to one */
	int	 kick_fd;	/* our outstanding loopback "kick" connection, or -1 */
	socklen_t kick_len;
	struct sockaddr_storage kick_local;
	struct gq **hash;
	size_t	 nhash;
	struct gq **heap;	/* non-empty queues only */
	size_t	 nheap, capheap;
	size_t	 queued;
	struct gwaiter *wait_head, *wait_tail;
	uint64_t last_use;
};

struct glisten *listen_new(int fd, dev_t dev, ino_t ino);
void listen_free(struct glisten *l);
struct gq *queue_get(struct glisten *l, uint32_t vs_id, int create);
void queue_push_tail(struct glisten *l, struct gconn *c, struct vstab *t);
void queue_push_head(struct glisten *l, struct gconn *c, struct vstab *t);
/* Take the head of the best queue; NULL when everything is empty. */
struct gconn *queue_pop_best(struct glisten *l);
/* Recompute every key from the VSs' current remaining shares. */
void queue_rekey(struct glisten *l, struct vstab *t);
/* Move the connections queued for vs_id to home's queue (VS destroyed). */
void queue_reroute(struct glisten *l, uint32_t vs_id, uint32_t home, struct vstab *t);
void queue_sample_shares(struct glisten *l, struct vstab *t, uint64_t now);

/* --- wakeup.c --- */
/* Make a non-blocking listener readable again while the gate holds connections. */
void kick_arm(struct glisten *l);
/* 1 (and the kick is over) if c is our own kick connection. */
int kick_is_ours(struct glisten *l, const struct gconn *c);

/* --- rebind.c --- */
struct gthread {
	struct gthread *hnext;
	pid_t	 tid;
	pid_t	 tgid;
	int	 pidfd;		/* of the thread (PIDFD_THREAD, Linux 6.9+) or of its process */
	uint32_t bound;		/* VS the thread sits in (cpu, cpuacct); 0 = unknown */
	uint32_t cg2;		/* VS of its process's cgroup2 dir; 0 = unknown */
	struct gwaiter *waiter;	/* its pending accept, if any */
	int	 last_fd;	/* fd number of its last listener... */
	struct glisten *last_l;	/* ...checked with kcmp() before reuse */
};

/* Hybrid hosts: when the cgroup2 membership follows the binding. */
enum cg2_mode {
	CG2_LAZY = 0,	/* when a bound thread creates an AF_INET/AF_INET6 socket */
	CG2_ALWAYS,	/* with every re-binding (whole process; for measurements) */
	CG2_NEVER,	/* never: cgroup2 stays with the home VS */
};

int bind_init(int pure_v2, enum cg2_mode mode);
/* Re-binding times (µs) over the last 4096 moves. */
void bind_stats(uint64_t *count, unsigned *p50, unsigned *p99, unsigned *max);
/* The thread behind a notification; a fresh pidfd if the cached one has died. */
struct gthread *thread_get(pid_t tid, int *is_new);
void thread_forget(struct gthread *th);
/* Move the thread into v unless it is already there. 0, 1 = moved, -errno. */
int bind_thread(struct gthread *th, struct gvs *v);
/* The process's cgroup2 membership, moved lazily when it creates a socket. */
int bind_cgroup2(struct gthread *th, struct gvs *v);
void thread_sweep(void);
/* Iterate all known threads (for status). */
void thread_foreach(void (*fn)(struct gthread *, void *), void *arg);
int cgroup_move(struct gvs *v, enum gcg h, pid_t pid);
uint64_t bind_moves(void);

/* --- rcu-warm.c --- */
/* A helper that keeps cgroup moves off RCU grace periods while we move. */
int warm_start(const struct gvs *home, int pure_v2);
/* A move was made: keep the helper active for another second. */
void warm_kick(void);
/* The helper's pid (0: none) and its no-op moves so far. */
pid_t warm_stats(uint64_t *writes);

/* --- classify.c --- */
void conns_init(const char *map_path);
/* The VS id recorded for the connection's initiator, 0 if unknown. The
 * local address is local_fixed if not NULL, else read from fd. */
uint32_t conns_lookup(int fd, const struct sockaddr_storage *local_fixed,
    const struct sockaddr_storage *peer, socklen_t peerlen);

/* --- gate-accept.c --- */
struct gwaiter {
	struct gwaiter *next, *prev;
	uint64_t id;		/* seccomp notification id */
	struct gthread *th;
	struct glisten *l;
	uint64_t addr, addrlen;	/* caller's pointers (0 = none) */
	int	 flags;		/* accept4 flags */
	uint64_t t;
};

struct gate {
	int	 notify_fd;
	uint32_t home;
	struct vstab tab;
	const char *vsd_socket;		/* refresh from vsd, or */
	const char *table_file;		/* from this file */
	struct glisten *listeners;
	size_t	 nwaiters;
	uint64_t last_refresh;
	uint64_t refresh_asked;		/* an unknown vs_id was seen */
	int	 refresh_failed;		/* the last refresh could not reach vsd */
	uint64_t handed, requeued, dropped_dead, eagain, passed;
	int	 sync_wakeup;		/* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP is set */
};

int gate_init(struct gate *g, int notify_fd);
size_t gate_waiting_listeners(struct gate *g, struct glisten **out, size_t max);
/* One notification is readable on notify_fd. */
int gate_notify(struct gate *g);
/* A listener with waiters became readable. */
void gate_listener_ready(struct gate *g, struct glisten *l);
/* Periodic work; returns the next timer period in ms. */
unsigned gate_tick(struct gate *g);
void gate_refresh(struct gate *g, int force);
void gate_close_all(struct gate *g);

/* --- status.c --- */
int status_open(const char *path);
void status_serve(struct gate *g, int lfd, const char *name, pid_t main_pid);

#endif
