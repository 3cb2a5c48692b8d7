/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The socket gate's loader (user side of gates/socket/socket.bpf.c).
 *
 * One program set per vsd instance, loaded once (or adopted from its pins),
 * one bpf_link per hook and VS.  Everything is pinned under
 *   /sys/fs/bpf/vsd/<cgroup-root>/          maps vsd_conns, vsd_vscfg,
 *                                           vsd_stats; programs prog_<hook>
 *   /sys/fs/bpf/vsd/<cgroup-root>/vs<ID>/   the VS's links, one per hook
 * so that a vsd restart keeps the marking and the connection table.
 * All functions return 0 or -errno and log the cause once.
 */
#ifndef VSD_GATE_SOCKET_H
#define VSD_GATE_SOCKET_H

#include <stddef.h>
#include <stdint.h>

#include "socket.h"
#include "conntab.h"
#include "lib/vs.h"

struct gate_socket;

/* libbpf's messages (the verifier's log among them) to lib/log.h (bpf-log.c). */
void bpf_log_init(void);

/*
 * Mounts bpffs at /sys/fs/bpf when needed, checks for BTF and cgroup BPF,
 * then adopts the programs and maps pinned for cgroup_root or loads and pins
 * them.  *adopted (may be NULL) tells which happened.
 */
int  gate_socket_open(const char *cgroup_root, struct gate_socket **gp, int *adopted);
/* Closes our file descriptors; the pins (and so the gate) stay. */
void gate_socket_close(struct gate_socket *g);
/*
 * Removes every link and pin of this cgroup root, then closes g: the gate
 * is gone.  For tests and for tearing a whole instance down.
 */
int  gate_socket_purge(struct gate_socket *g);

/*
 * Attaches the gate to a VS's cgroup2 directory (its id is the directory's
 * inode number) and writes its settings.  Idempotent: links already pinned
 * for this VS are adopted (and moved to the current programs).  On failure
 * nothing of the VS is left attached or pinned.
 */
int gate_socket_attach(struct gate_socket *g, const char *cgdir, uint64_t cgid,
		       uint32_t vs_id, const struct gate_socket_cfg *cfg);
/* New settings for an attached VS; new sockets see them at once. */
int gate_socket_update(struct gate_socket *g, uint64_t cgid, uint32_t vs_id,
		       const struct gate_socket_cfg *cfg);
/*
 * Detaches and unpins everything of the VS and drops its connection entries
 * (its sockets' close callbacks no longer run once detached).  Missing pins
 * are fine.
 */
int gate_socket_detach(struct gate_socket *g, uint32_t vs_id);
/* 1 if the VS's links are pinned (attached), 0 if not, -errno on error. */
int gate_socket_attached(struct gate_socket *g, uint32_t vs_id);

/* Calls fn for each recorded connection; stops at fn's first non-zero. */
typedef int (*gate_socket_conn_fn)(const struct vsd_conn_key *k,
				   const struct vsd_conn_val *v, void *arg);
int gate_socket_conns(struct gate_socket *g, gate_socket_conn_fn fn, void *arg);
/* Sums of the per-CPU counters, indexed by enum vsd_stat. */
int gate_socket_stats(struct gate_socket *g, uint64_t out[VSD_STAT_MAX]);

/*
 * Each VS's share of the connection table (gates/socket/socket.h) for nvs
 * VSs: the reserve per VS, a power of two, with the reserves of nvs VSs
 * within half of the usable table, the rest a shared pool.  Cheap when
 * nothing changes (the reserve changes only when nvs crosses a power of
 * two).  Returns the reserve.
 */
uint32_t gate_socket_share(struct gate_socket *g, size_t nvs);
/* The limits in force (with the pool in use, the flags); zeros where none are set. */
void gate_socket_connlim(const struct gate_socket *g, struct vsd_connlim *out);
/*
 * Which connections the programs record (gates/socket/socket.h): all
 * (VSD_CONNLIM_ALL set) or only those to gated ports.  The flag lives in the
 * pinned vsd_connlim, so it outlives the loader.  Returns the previous
 * setting (1 all, 0 gated) or -errno.
 */
int  gate_socket_set_record_all(struct gate_socket *g, int all);
/*
 * Adds delta to the count of gated listeners on a TCP port (vsd_gports),
 * as an accept gate does when it starts or stops gating a listener; for
 * tests and benchmarks, which gate a port by hand.  Returns the new count.
 */
int  gate_socket_gport_add(struct gate_socket *g, uint16_t port, int delta);
/* The VS's counters: 0, or -ENOENT when it has none (not attached). */
int  gate_socket_vs_conns(struct gate_socket *g, uint32_t vs_id, struct vsd_vs_conns *out);

/* The pin directory, /sys/fs/bpf/vsd/<cgroup-root>. */
const char *gate_socket_pindir(const struct gate_socket *g);

/* "127.0.0.1:80" / "[::1]:80" for one side of a key. */
char *gate_socket_fmt_addr(int family, const uint32_t addr[4], uint16_t port,
			   char *buf, size_t len);

#endif
