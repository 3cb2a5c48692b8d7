/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Layouts shared by gates/socket/socket.bpf.c (kernel side), vsd's loader
 * (gates/socket/socket.c) and the accept gate, which reads the connection table.
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
#define VSD_MAP_VSCONNS		"vsd_vsconns"
#define VSD_MAP_CONNLIM		"vsd_connlim"
#define VSD_MAP_GATED		"vsd_gated"
#define VSD_MAP_GPORTS		"vsd_gports"
#define VSD_MAP_RINGS		"vsd_rings"
#define VSD_MAP_RINGCTL		"vsd_ringctl"
/* The accept records' programs (records.bpf.c), pinned unattached: */
#define VSD_PROG_ACCEPT_FEXIT	"prog_accept_fexit"	/* or, where refused, */
#define VSD_PROG_ACCEPT_TP	"prog_accept_tp"	/* syscalls:sys_exit_accept */
#define VSD_PROG_ACCEPT4_TP	"prog_accept4_tp"	/* syscalls:sys_exit_accept4 */

/*
 * Slots of the connection table, a power of two: 8 MB.  With the probe
 * window below, random keys meet the first full window at about 65,000
 * entries, the hash map's size before (benchmarks/RESULTS.md).  Tests
 * build a copy with a tiny table (tests/local.mk) to make
 * collisions and fill it.
 */
#ifndef VSD_CONNS_MAX
#define VSD_CONNS_MAX		131072
#endif

/*
 * A TCP connection, always oriented from the side that opened it
 * (the initiator, "src") to the side that accepted it ("dst").
 * The accept gate therefore builds the key of an accepted connection as
 *   src = getpeername(), dst = getsockname(), dir = VSD_DIR_ACTIVE
 * and finds the VS of the process that connected
 * (conntab_accepted_key() in gates/socket/conntab.h builds it, and
 * gates/accept/classify.c looks it up;
 * the table is pinned at VSD_BPFFS "/" <cgroup-root> "/" VSD_MAP_CONNS).
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

/* vsd_conn_val.flags: how the entry was counted (the quota below). */
#define VSD_CONN_COUNTED	(1u << 0)	/* in its VS's vsd_vsconns entry */
#define VSD_CONN_POOL		(1u << 1)	/* also in the shared pool */

struct vsd_conn_val {
	__u64 cgroup_id;	/* cgroup2 id of the socket's VS cgroup */
	__u32 vs_id;		/* vsd's numeric id of the VS */
	__u32 flags;		/* VSD_CONN_*; 0 from a vsd before the quota */
};

/*
 * The connection table: an open-addressed hash table in a
 * BPF_MAP_TYPE_ARRAY with BPF_F_MMAPABLE, one 64-byte slot (one cache
 * line) per entry.  A hash map cost the connection two or three cold cache
 * lines per insert and per delete (bucket, element, free list: about 0.5 us
 * each in sockops); an array slot is one, its lookup is inlined by the
 * verifier, and user space reads the table through mmap() without a
 * bpf() call (benchmarks/results/socket-gate-cost.md).
 *
 * A key lives in one of the VSD_CONN_PROBE slots from
 * vsd_conn_hash(key) & (VSD_CONNS_MAX - 1) on (linear probing, wrapping
 * around).  seq holds the slot's state in its low two bits and a
 * generation above them:
 *   EMPTY  never used: a probe for a key stops here, as an insert takes
 *          the first free slot of its window and a slot never becomes
 *          EMPTY again, so a key never lies behind an EMPTY slot;
 *   BUSY   claimed by an insert that is writing key and val;
 *   LIVE   key and val are valid;
 *   DEAD   deleted (a tombstone); free for an insert, passed by a probe.
 * Insert: the first EMPTY or DEAD slot of the window is claimed with a
 * compare-and-swap of seq to the next generation's BUSY, so of two inserts
 * racing for a slot (softirqs on two CPUs) exactly one wins and the other
 * probes on; the winner writes key and val and then publishes LIVE with a
 * second compare-and-swap, a full barrier, so nobody sees LIVE before the
 * data.  Delete: a compare-and-swap LIVE -> DEAD of the slot holding the
 * key; vsd uses the same one to drop a detached VS's entries, so only one
 * of them counts the entry.  Readers in user space (vsd, the accept gate)
 * read seq, copy the slot, read seq again, and take the copy only if the
 * slot was LIVE and seq did not change: the generation changes on every
 * claim, so a slot deleted and reused under the reader is never reported
 * with a torn key or value.  No free slot in the window: the insert fails
 * and is counted (VSD_STAT_CONNS_FULL).
 *
 * Keep the code in sync: gates/socket/socket.bpf.c (insert, delete) and
 * gates/socket/conntab.c (user space).
 */
#define VSD_CONN_PROBE		32

#define VSD_SLOT_EMPTY		0u
#define VSD_SLOT_BUSY		1u
#define VSD_SLOT_LIVE		2u
#define VSD_SLOT_DEAD		3u
#define VSD_SLOT_STATE(seq)	((seq) & 3u)
/* The next generation's BUSY: the claim of a free slot. */
#define VSD_SLOT_CLAIM(seq)	(((seq) | 3u) + 2u)

struct vsd_conn_slot {
	__u32 seq;		/* generation << 2 | VSD_SLOT_* */
	__u32 pad;
	struct vsd_conn_key key;
	struct vsd_conn_val val;
};

_Static_assert(sizeof(struct vsd_conn_slot) == 64, "a slot is one cache line");
_Static_assert((VSD_CONNS_MAX & (VSD_CONNS_MAX - 1)) == 0, "VSD_CONNS_MAX is a power of two");

/*
 * The home slot of a key is vsd_conn_hash(key) & (VSD_CONNS_MAX - 1).
 * One definition for the BPF programs and user space.  Word by word
 * through memcpy: no alignment or aliasing assumptions on either side.
 * The mixing steps are murmur3's; the ports, the only part that changes
 * between a client's connections, reach every bit of the result.
 */
static inline __attribute__((always_inline)) __u32
vsd_conn_hash(const struct vsd_conn_key *k)
{
	__u32 h = 0x9e3779b9u, w;
	unsigned int i;

#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < sizeof(*k) / 4; i++) {
		__builtin_memcpy(&w, (const char *)k + 4 * i, 4);
		w *= 0xcc9e2d51u;
		w = (w << 15) | (w >> 17);
		h ^= w * 0x1b873593u;
		h = ((h << 13) | (h >> 19)) * 5 + 0xe6546b64u;
	}
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* 1 if the keys are equal; word by word, as BPF has no memcmp. */
static inline __attribute__((always_inline)) int
vsd_conn_key_eq(const struct vsd_conn_key *a, const struct vsd_conn_key *b)
{
	__u32 x, y;
	unsigned int i;

#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < sizeof(*a) / 4; i++) {
		__builtin_memcpy(&x, (const char *)a + 4 * i, 4);
		__builtin_memcpy(&y, (const char *)b + 4 * i, 4);
		if (x != y)
			return 0;
	}
	return 1;
}

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

/*
 * Each VS's share of the connection table.  Without one, a single VS that
 * opens enough connections fills the table, and every other VS's new
 * connections go unrecorded, so the accept gate serves them in its home VS.
 *
 * The table is only trusted up to a quarter of its slots (VSD_CONNS_USABLE):
 * with connections coming and going, a key's probe window was full now and
 * then from about a third on, never at a quarter
 * (benchmarks/results/conntab-quota.md).  Half of that is reserved, in equal
 * parts, for the VSs: each may record up to rsv outgoing and rsv incoming
 * connections whatever the others do (vsd sets rsv = usable / (4 * number of
 * VSs), rounded down to a power of two, so the reserves never add up to more
 * than their half).  The other half is a pool that a VS past its reserve
 * draws on for outgoing connections, first come first served.
 *
 * A VS whose outgoing entries are past its reserve while the pool is used up
 * pays for it itself: its connect() of a TCP socket fails with EPERM
 * (the cgroup/connect hooks) and is counted as refused.  Connections that get
 * past that check (several connect()s racing for the last entry) are not
 * recorded, and counted as unrecorded.  Incoming connections never draw on
 * the pool: only vsctl conns shows them (the accept gate looks up the
 * connecting side), and an outside client must not be able to use up a VS's
 * room for its own outgoing connections; past its reserve they go
 * unrecorded, counted.
 *
 * vsd_vsconns: a hash map keyed by the VS id (as recorded in vsd_conn_val),
 * made by vsd when it attaches the VS and removed when it detaches it; the
 * BPF programs only change its counters, atomically.  Entries counted
 * there carry VSD_CONN_COUNTED (and VSD_CONN_POOL when they took from the
 * pool) in the table, so a delete gives back exactly what the insert took,
 * also if rsv changed meanwhile or the entry was recorded before the quota
 * existed (flags 0).
 *
 * vsd_connlim: one element in a BPF_F_MMAPABLE array, mapped by vsd, which
 * writes rsv and pool; pool_used is changed atomically by the programs and
 * by vsd when it drops a detached VS's entries.  rsv 0 and pool 0 (not
 * written yet) refuse nothing: the quota is off.
 */
#define VSD_CONNS_USABLE	(VSD_CONNS_MAX / 4)
#define VSD_VSCONNS_MAX		65536

struct vsd_vs_conns {
	__u32 out;		/* outgoing entries recorded */
	__u32 in;		/* incoming entries recorded */
	__u64 refused;		/* connect()s refused: past the reserve, pool used up */
	__u64 unrecorded;	/* connections not recorded: no room, or no free slot */
};

struct vsd_connlim {
	__u32 rsv;		/* per VS, outgoing and incoming each */
	__u32 pool;		/* outgoing entries past the VSs' reserves */
	__u32 pool_used;
	__u32 flags;		/* VSD_CONNLIM_* */
};

/*
 * Which connections are recorded.  By default only those whose destination
 * port has a gated listener (vsd_gports below): the accept gate needs no
 * other, and every entry costs the connection an insert and a delete.
 * VSD_CONNLIM_ALL (vsd --record-conns all): every TCP connection of a VS,
 * both sides, for vsctl conns.
 */
#define VSD_CONNLIM_ALL		(1u << 0)

/*
 * Gated listeners and their arrival rings (the accept gate's fast path,
 * gates/accept/fastpath.c).  An accept gate registers each TCP listener it
 * gates: the key {network namespace cookie, local port} in vsd_gated, with
 * the index of the ring it owns, and the port's count in vsd_gports goes
 * up by one.  The ring is a BPF ring buffer the gate makes and puts into
 * vsd_rings (an array of maps) at that index.
 *
 * When a connection to a registered listener is established on the
 * accepting side (sockops PASSIVE_ESTABLISHED, which runs after the child
 * is in the listener's accept queue and before the listener is woken),
 * the program appends a struct vsd_arrival to the listener's ring: the
 * child's socket cookie, the time, and the VS of the connecting side from
 * its entry in the connection table (0 if it has none: another host, or
 * not recorded).  So the gate knows the kernel's accept queue, in order
 * and by VS, without accepting from it.  The ring wakes the gate only as
 * vsd_ringctl[ring].wake says: while the gate has let a thread block in
 * the kernel's accept, for an arrival of a VS other than the one that
 * thread sits in (it must be re-bound), or for every arrival while other
 * threads wait in the gate; a
 * record the ring had no room for is counted in vsd_ringctl[ring].dropped,
 * and the gate then trusts the ring no more until the accept queue has been
 * emptied.
 *
 * When a thread's accept returns a connection of a registered listener,
 * the accept records' programs (records.bpf.c: vsd loads them on these maps
 * and pins them unattached, VSD_PROG_ACCEPT_*; each accept gate attaches
 * them while it runs) append a second kind of record to the same ring: the connection's cookie, the time, its VS as above, and
 * tid, the calling thread's id (in the initial PID namespace; never 0).
 * Accepts by the registering gate itself (its pid is the key's owner) are
 * not recorded, and an accept never wakes the gate.  So the gate knows
 * which connection each thread it let through took, and whether it was of
 * the VS the gate had bound that thread to.
 *
 * vsd_gports counts gated listeners per TCP port in any namespace: the
 * connecting side's entry is recorded for a destination port that has one
 * (see VSD_CONNLIM_ALL).  A gate that dies without unregistering leaves
 * its count and key behind: the next gate to register takes over the keys
 * of owners that are gone (owner is the gate's pid).  vsd makes the maps
 * and pins them next to the table.
 */
/*
 * vsd_gports, mapped, is a __u32 array indexed by port: gates count through
 * the mapping with atomics.  An array map's elements are 8 bytes apart
 * whatever their size (the kernel rounds the value size up to 8,
 * kernel/bpf/arraymap.c), so the map has VSD_GPORTS_ELEMS elements of 8
 * bytes, each holding the counts of two ports: port p's is the __u32 at
 * byte 4 * p of the mapping, that is half p & 1 of element p / 2.  Only
 * the BPF side (and a bpf() lookup) sees the pairs.
 */
#define VSD_GPORTS_ELEMS	32768
#define VSD_GATED_MAX		256
#define VSD_RINGS_MAX		64
#define VSD_RING_BYTES		(64 * 1024)	/* 2,048 arrivals */

struct vsd_gated_key {
	__u64 netns;		/* SO_NETNS_COOKIE of the listener */
	__u32 port;		/* its local port, host order */
	__u32 pad;
};

struct vsd_gated_val {
	__u32 ring;		/* index into vsd_rings and vsd_ringctl, or VSD_RING_NONE */
	__u32 owner;		/* the registering gate's pid */
};

/*
 * A listener registered with no ring (an accept gate run with --fast off):
 * its port is counted in vsd_gports, so its connections are recorded for
 * the gate's drain to classify, and no record is written for it.
 */
#define VSD_RING_NONE		0xffffffffu

/* vsd_ringctl.wake: when an arrival wakes the gate */
#define VSD_WAKE_NEVER		0u
#define VSD_WAKE_ALWAYS		0xffffffffu
/* any other value: a VS id; wake for an arrival of any other VS */

struct vsd_ringctl {
	__u32 wake;		/* VSD_WAKE_* or a VS id */
	__u32 pad;
	__u64 dropped;		/* arrivals the ring had no room for */
};

struct vsd_arrival {
	__u64 cookie;		/* SO_COOKIE of the accepted (child) socket */
	__u64 t;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 vs_id;		/* the connecting side's VS, 0 = unknown */
	__u32 tid;		/* 0: an arrival; else an accept by this thread */
};

/* Indices into the per-CPU stats array map. */
enum vsd_stat {
	VSD_STAT_CONNS_ADDED = 0,
	VSD_STAT_CONNS_REMOVED,
	VSD_STAT_CONNS_FULL,		/* an insert found no free slot */
	VSD_STAT_MAX,
};

#endif
