/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Layouts shared by gates/socket.bpf.c (kernel side), vsd's loader
 * (vsd/gate-socket.c) and the accept gate, which reads the connection map.
 * Keep this file free of libc and kernel headers other than the basic types,
 * so both the BPF and the user-space side can include it.
 */
#ifndef VSD_GATES_SOCKET_H
#define VSD_GATES_SOCKET_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Where vsd pins its objects: VSD_BPFFS "/" <cgroup-root> "/" ... */
#define VSD_BPFFS		"/sys/fs/bpf/vsd"

/* Map names as they appear in the object and under the pin directory. */
#define VSD_MAP_CONNS		"vsd_conns"
#define VSD_MAP_VSCFG		"vsd_vscfg"
#define VSD_MAP_STATS		"vsd_stats"

/* Tests build a copy with a small map (tests/socket-gate.mk) to fill it. */
#ifndef VSD_CONNS_MAX
#define VSD_CONNS_MAX		65536
#endif

/*
 * A TCP connection, always oriented from the side that opened it
 * (the initiator, "src") to the side that accepted it ("dst").
 * The accept gate therefore builds the key of an accepted connection as
 *   src = getpeername(), dst = getsockname(), dir = VSD_DIR_ACTIVE
 * and finds the VS of the process that connected
 * (gate_socket_lookup_accepted() in vsd/gate-socket.h does exactly that;
 * the map is pinned at VSD_BPFFS "/" <cgroup-root> "/" VSD_MAP_CONNS).
 *
 * Addresses are in network byte order; an IPv4 address (also an IPv4-mapped
 * IPv6 address, which is folded to AF_INET) sits in addr[0] with the rest 0.
 * Ports are in host byte order.
 */
enum vsd_conn_dir {
	VSD_DIR_ACTIVE = 0,	/* recorded for the VS that connected */
	VSD_DIR_PASSIVE = 1,	/* recorded for the VS that accepted */
};

struct vsd_conn_key {
	__u8  family;		/* AF_INET (2) or AF_INET6 (10) */
	__u8  dir;		/* enum vsd_conn_dir */
	__u16 pad;
	__u16 sport;		/* initiator's port */
	__u16 dport;		/* acceptor's port */
	__u32 saddr[4];
	__u32 daddr[4];
};

struct vsd_conn_val {
	__u64 cgroup_id;	/* cgroup2 id of the socket's VS cgroup */
	__u32 vs_id;		/* vsd's numeric id of the VS */
	__u32 pad;
};

/*
 * Per-VS configuration, keyed by the cgroup2 id (inode number) of the VS's
 * cgroup2 directory. Written by vsd; read by the programs attached there.
 * It is a BPF_MAP_TYPE_CGROUP_STORAGE map: an element exists only while one
 * of our programs is attached to that cgroup, so vsd writes it after
 * attaching; vs_id 0 means "not written yet" and the programs do nothing.
 */
#define VSD_CFG_TOS	(1u << 0)	/* set IP_TOS / IPV6_TCLASS to tos */
#define VSD_CFG_MARK	(1u << 1)	/* set SO_MARK to mark */
#define VSD_CFG_PRIO	(1u << 2)	/* set SO_PRIORITY to priority */

struct vsd_vscfg {
	__u32 vs_id;
	__u32 flags;		/* VSD_CFG_* */
	__u32 mark;
	__u32 priority;
	__u8  tos;		/* full TOS byte: DSCP << 2 | ECN bits (kept 0) */
	__u8  pad[7];
	__u64 cgroup_id;	/* the key again, copied into vsd_conn_val */
};

/* Indices into the per-CPU stats array map. */
enum vsd_stat {
	VSD_STAT_CONNS_ADDED = 0,
	VSD_STAT_CONNS_REMOVED,
	VSD_STAT_CONNS_FULL,		/* an insert failed: map full */
	VSD_STAT_MAX,
};

#endif
