// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The socket gate, kernel side: the paper's default socket rule
 * (socket, *, *) => (creator).  One set of programs is loaded once per vsd
 * instance and attached (one bpf_link per hook) to every VS's cgroup2
 * directory.  A socket's cgroup is fixed when it is created (an accepted
 * socket inherits its listener's), so every program below sees the VS the
 * socket was created in, also in softirq context.
 *
 * The per-VS settings live in a cgroup storage map keyed by the cgroup2 id
 * of the directory a program is attached to: bpf_get_local_storage() hands
 * each program the settings of the VS it is attached for, without a lookup
 * and also for sockets created in a sub-cgroup of the VS.  A u64 key makes
 * the storage shared by all our attach types (Linux 5.9+).
 *
 * Layouts are shared with user space: keep in sync with gates/socket/socket.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include "socket.h"
#include "gated.bpf.h"

/* From the uapi headers, which cannot be mixed with vmlinux.h. */
#define AF_INET		2
#define AF_INET6	10
#define SOCK_STREAM	1
#define SOCK_DGRAM	2
#define SOL_IP		0
#define SOL_IPV6	41
#define IP_TOS		1
#define IPV6_TCLASS	67
#define SOL_SOCKET	1
#define SO_PRIORITY	12

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, __u64);		/* cgroup2 id of the VS directory */
	__type(value, struct vsd_vscfg);
} vsd_vscfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VSD_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} vsd_stats SEC(".maps");

/* Each VS's share of the table: gates/socket/socket.h. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VSD_VSCONNS_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* vsd adds the entries, never BPF */
	__type(key, __u32);			/* vs_id */
	__type(value, struct vsd_vs_conns);
} vsd_vsconns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct vsd_connlim);
} vsd_connlim SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&vsd_stats, &idx);

	if (v)
		*v += 1;	/* per-CPU slot: no atomics needed */
}

static __always_inline struct vsd_vscfg *vs_cfg(void)
{
	struct vsd_vscfg *cfg = bpf_get_local_storage(&vsd_vscfg, 0);

	/* vs_id 0: attached, but vsd has not written the settings yet. */
	return cfg->vs_id ? cfg : NULL;
}

/* What set_tos() sets: IP_TOS (IPv4 packets), IPV6_TCLASS (IPv6 ones). */
#define TOS_V4	1
#define TOS_V6	2

/*
 * The TOS byte of every socket of a VS: its DSCP setting, or 0 where it has
 * none. A VS without a DSCP is not left to choose one: a remote host's
 * vsd takes the DSCP of a trusted source's SYN as the VS's (vsrules(5)
 * REMOTE), so a tenant that set another VS's DSCP would be charged as that
 * VS there.
 */
static __always_inline int vs_tos(const struct vsd_vscfg *cfg)
{
	return cfg->flags & VSD_CFG_TOS ? cfg->tos : 0;
}

/*
 * IP_TOS / IPV6_TCLASS through bpf_setsockopt(); ctx is any program type
 * that has the helper.  With check, only when the value differs: setting
 * IP_TOS resets the socket's cached route (sk_dst_reset), which would cost
 * the next packet a route lookup; that matters on every sendmsg(), not in
 * connect(), which looks the route up anyway.  An IPv6 socket's
 * IPv4-mapped traffic leaves as IPv4 with IP_TOS (the helper allows it on
 * an IPv6 socket on 6.x).  IP_TOS also resets the priority from the TOS
 * bits (rt_tos2priority), so the VS's priority is set again after it.
 */
static __always_inline void set_tos(void *ctx, int which, const struct vsd_vscfg *cfg,
				    int check)
{
	int v = 0, want = vs_tos(cfg);

	if ((which & TOS_V6) && (!check ||
	    bpf_getsockopt(ctx, SOL_IPV6, IPV6_TCLASS, &v, sizeof(v)) || v != want))
		bpf_setsockopt(ctx, SOL_IPV6, IPV6_TCLASS, &want, sizeof(want));
	if (!(which & TOS_V4) ||
	    (check && bpf_getsockopt(ctx, SOL_IP, IP_TOS, &v, sizeof(v)) == 0 && v == want))
		return;
	bpf_setsockopt(ctx, SOL_IP, IP_TOS, &want, sizeof(want));
	if (cfg->flags & VSD_CFG_PRIO) {
		v = cfg->priority;
		bpf_setsockopt(ctx, SOL_SOCKET, SO_PRIORITY, &v, sizeof(v));
	}
}

SEC("cgroup/sock_create")
int vsd_sock_create(struct bpf_sock *sk)
{
	struct vsd_vscfg *cfg = vs_cfg();

	if (!cfg)
		return 1;
	/* Writable in this hook since Linux 4.15 (mark, priority). */
	if (cfg->flags & VSD_CFG_MARK)
		sk->mark = cfg->mark;
	if (cfg->flags & VSD_CFG_PRIO)
		sk->priority = cfg->priority;
	return 1;
}

static __always_inline void conn_key(struct bpf_sock_ops *skops, int passive,
				     struct vsd_conn_key *k)
{
	__u32 l[4], r[4];
	__u16 lport = (__u16)skops->local_port;		 /* host order */
	__u16 rport = (__u16)bpf_ntohl(skops->remote_port); /* net order, <<16 */

	__builtin_memset(k, 0, sizeof(*k));
	if (skops->family == AF_INET6) {
		l[0] = skops->local_ip6[0]; l[1] = skops->local_ip6[1];
		l[2] = skops->local_ip6[2]; l[3] = skops->local_ip6[3];
		r[0] = skops->remote_ip6[0]; r[1] = skops->remote_ip6[1];
		r[2] = skops->remote_ip6[2]; r[3] = skops->remote_ip6[3];
		family6(k, l, r);
	} else {
		k->family = AF_INET;
		l[0] = skops->local_ip4; r[0] = skops->remote_ip4;
		l[1] = l[2] = l[3] = 0;
		r[1] = r[2] = r[3] = 0;
	}
	conn_orient(k, passive, l, r, lport, rport);
}

/*
 * The accepting side's sockets carry BPF_SOCK_OPS_RTO_CB_FLAG as well, as a
 * mark: the state callback then knows which key the socket recorded and
 * when it may go, without trying both (a failed delete costs a cache miss
 * on a cold bucket).  sockops offers no other per-socket bit short of
 * socket storage, which costs an allocation per socket; the price of the
 * mark is one early-returning sockops run per retransmission timeout.
 */
#define PASSIVE_MARK	BPF_SOCK_OPS_RTO_CB_FLAG

/*
 * The connecting side is recorded as its SYN leaves (TCP_CONNECT_CB), and
 * carries BPF_SOCK_OPS_RETRANS_CB_FLAG until it is established, as a mark
 * that it was tried then (its port was recorded): ACTIVE_ESTABLISHED records only a socket that
 * connected before the program was attached, and a connection the table
 * had no room for is counted once.  The price: one early-returning run per
 * retransmitted SYN.
 */
#define ACTIVE_TRIED	BPF_SOCK_OPS_RETRANS_CB_FLAG

/*
 * Claims the first free slot of the key's window (gates/socket/socket.h).  Two
 * inserts racing for a slot (softirqs on two CPUs) both read it free, but
 * only one compare-and-swap succeeds; the other goes on probing.  No two
 * inserts of one key race: a connection is established once, and its
 * entry is deleted before the 4-tuple can be used again.
 */
static __always_inline int conn_insert(const struct vsd_conn_key *k,
				       const struct vsd_conn_val *v)
{
	struct vsd_conn_slot *s;
	__u32 h = vsd_conn_hash(k), i, seq;

	/* Not unrolled: the first slot is nearly always the one. */
#pragma nounroll
	for (i = 0; i < VSD_CONN_PROBE; i++) {
		if (!(s = slot_at(h, i)))
			return -1;
		seq = *(volatile __u32 *)&s->seq;
		if (VSD_SLOT_STATE(seq) != VSD_SLOT_EMPTY && VSD_SLOT_STATE(seq) != VSD_SLOT_DEAD)
			continue;
		if (__sync_val_compare_and_swap(&s->seq, seq, VSD_SLOT_CLAIM(seq)) != seq)
			continue;
		s->key = *k;
		s->val = *v;
		/* BUSY -> LIVE; a full barrier: the data is visible first. */
		seq = VSD_SLOT_CLAIM(seq);
		__sync_val_compare_and_swap(&s->seq, seq, seq + 1);
		return 0;
	}
	return -1;
}

static __always_inline struct vsd_connlim *connlim(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&vsd_connlim, &zero);
}

/*
 * Takes one entry of the VS's share (gates/socket/socket.h): returns the
 * VSD_CONN_* flags saying what it took, or -1 if the VS has no room.  Its
 * counters go up first and back down if that was one too many, so two
 * CPUs racing for the last entry never both get it.  No counters (vsd has
 * not made them, or the quota is off): recorded uncounted, flags 0.
 */
static __always_inline int quota_take(struct vsd_vs_conns *c, struct vsd_connlim *lim,
				      int passive)
{
	if (!c || !lim || (lim->rsv == 0 && lim->pool == 0))
		return 0;
	if (passive) {
		if (__sync_fetch_and_add(&c->in, 1) < lim->rsv)
			return VSD_CONN_COUNTED;
		__sync_fetch_and_sub(&c->in, 1);
		return -1;
	}
	if (__sync_fetch_and_add(&c->out, 1) < lim->rsv)
		return VSD_CONN_COUNTED;
	if (__sync_fetch_and_add(&lim->pool_used, 1) < lim->pool)
		return VSD_CONN_COUNTED | VSD_CONN_POOL;
	__sync_fetch_and_sub(&lim->pool_used, 1);
	__sync_fetch_and_sub(&c->out, 1);
	return -1;
}

/* Gives back what quota_take() took; c may be gone with its VS. */
static __always_inline void quota_put(__u32 vs_id, __u32 flags, int passive)
{
	struct vsd_connlim *lim;
	struct vsd_vs_conns *c;

	if (!(flags & VSD_CONN_COUNTED))
		return;
	if ((c = bpf_map_lookup_elem(&vsd_vsconns, &vs_id))) {
		if (passive)
			__sync_fetch_and_sub(&c->in, 1);
		else
			__sync_fetch_and_sub(&c->out, 1);
	}
	if ((flags & VSD_CONN_POOL) && (lim = connlim()))
		__sync_fetch_and_sub(&lim->pool_used, 1);
}

/*
 * Is a connection to this port (the accepting side's, host order) recorded?
 * Only if a gated listener has the port (vsd_gports), or vsd records every
 * connection (vsd --record-conns all, VSD_CONNLIM_ALL): the accept gate
 * needs no other entry, and an entry costs its connection an insert, a
 * delete and the state callbacks in between (gates/socket/socket.h,
 * benchmarks/results/socket-gate-cost.md).  Both lookups are array
 * lookups the verifier inlines; vsd_connlim's line is warm (every connect
 * of a VS reads it), so an unrecorded connection pays for the port's line.
 * The count is per port in any network namespace: a connection to another
 * host's port that a local gated listener also has is recorded too.
 */
static __always_inline int port_recorded(const struct vsd_connlim *lim, __u32 port)
{
	__u32 pair = (port & 0xffff) >> 1;
	__u32 *n;

	if (lim && (*(volatile __u32 *)&lim->flags & VSD_CONNLIM_ALL))
		return 1;
	/* the __u32 at byte 4 * port of the mapping */
	n = bpf_map_lookup_elem(&vsd_gports, &pair);
	return n && *((volatile __u32 *)n + (port & 1)) > 0;
}

static __always_inline void conn_add(struct bpf_sock_ops *skops, int passive,
				     const struct vsd_vscfg *cfg, struct vsd_connlim *lim)
{
	struct vsd_conn_key k;
	struct vsd_conn_val v = {
		.cgroup_id = cfg->cgroup_id,
		.vs_id = cfg->vs_id,
	};
	struct vsd_vs_conns *c = bpf_map_lookup_elem(&vsd_vsconns, &v.vs_id);
	int flags = quota_take(c, lim, passive);

	if (flags < 0) {
		/* Past the VS's share: its cost, counted for it (vsctl show). */
		if (c)
			__sync_fetch_and_add(&c->unrecorded, 1);
		return;
	}
	v.flags = flags;
	conn_key(skops, passive, &k);
	if (conn_insert(&k, &v)) {
		/* No free slot in the key's window.  Counted, shown by vsctl show. */
		quota_put(v.vs_id, v.flags, passive);
		if (c)
			__sync_fetch_and_add(&c->unrecorded, 1);
		stat_inc(VSD_STAT_CONNS_FULL);
		return;
	}
	stat_inc(VSD_STAT_CONNS_ADDED);
	/* Ask for BPF_SOCK_OPS_STATE_CB so the entry goes when it closes. */
	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
				  BPF_SOCK_OPS_STATE_CB_FLAG | (passive ? PASSIVE_MARK : 0));
}

/*
 * LIVE -> DEAD on the slot that holds the key.  The probe stops at an
 * EMPTY slot (the key cannot lie behind one).  A failed compare-and-swap
 * means the slot changed under us: vsd dropped the entry (its VS was
 * detached), or we compared a slot being reused for another key; either
 * way the probe goes on, and finds nothing more in the first case.
 */
static __always_inline int conn_del_key(struct bpf_sock_ops *skops, int passive)
{
	struct vsd_conn_key k;
	struct vsd_conn_slot *s;
	__u32 h, i, seq, vs_id, flags;

	conn_key(skops, passive, &k);
	h = vsd_conn_hash(&k);
	/* Not unrolled: the first slot is nearly always the one. */
#pragma nounroll
	for (i = 0; i < VSD_CONN_PROBE; i++) {
		if (!(s = slot_at(h, i)))
			return 0;
		seq = *(volatile __u32 *)&s->seq;
		if (VSD_SLOT_STATE(seq) == VSD_SLOT_EMPTY)
			return 0;
		if (VSD_SLOT_STATE(seq) != VSD_SLOT_LIVE || !vsd_conn_key_eq(&s->key, &k))
			continue;
		/* Read before the slot is ours no more; the swap proves them. */
		vs_id = s->val.vs_id;
		flags = s->val.flags;
		if (__sync_val_compare_and_swap(&s->seq, seq, seq + 1) == seq) {
			quota_put(vs_id, flags, passive);
			stat_inc(VSD_STAT_CONNS_REMOVED);
			return 1;
		}
	}
	return 0;
}

/* The same for the accepted connection skops is (the accept gate's key). */
static __always_inline __u32 conn_find_vs(struct bpf_sock_ops *skops)
{
	struct vsd_conn_key k;

	conn_key(skops, 1, &k);
	return conn_vs(&k);
}

/*
 * A connection to a gated listener reached its accept queue: append it to
 * the listener's ring (gates/socket/socket.h), so the accept gate knows the
 * queue's order by VS.  Runs before the listener is woken.
 */
static __always_inline void ring_note(struct bpf_sock_ops *skops)
{
	struct vsd_gated_key gk = {
		.netns = bpf_get_netns_cookie(skops),
		.port = skops->local_port,
	};
	struct vsd_arrival a = {};
	struct vsd_gated_val *gv;

	if (!(gv = bpf_map_lookup_elem(&vsd_gated, &gk)))
		return;
	a.cookie = bpf_get_socket_cookie(skops);
	a.vs_id = conn_find_vs(skops);
	ring_put(gv, &a);
}

/*
 * A recorded connection changed state; its entry goes when the connection
 * closes, and then the state callback is switched off for the socket: it
 * would run up to twice more for nothing, and every sockops run costs the
 * connection (benchmarks/results/socket-gate-cost.md).
 *
 * - The accepting side (marked): as soon as either end closes; the accept
 *   gate looks up the connecting side's entry, never this one.
 * - The connecting side: at CLOSE_WAIT, when the acceptor has closed, so
 *   it had accepted the connection (a listener that goes away without
 *   accepting resets its children, it sends no FIN); if it closes first,
 *   at TCP_CLOSE, as an acceptor that has not accepted yet still needs it.
 *   An unmarked socket may also be an accepting side recorded by an older
 *   vsd, whose entry is tried second.
 */
static __always_inline void conn_state(struct bpf_sock_ops *skops)
{
	__u32 state = skops->args[1], flags = skops->bpf_sock_ops_cb_flags;

	if (flags & PASSIVE_MARK) {
		if (state != BPF_TCP_FIN_WAIT1 && state != BPF_TCP_CLOSE_WAIT &&
		    state != BPF_TCP_CLOSE)
			return;
		conn_del_key(skops, 1);
	} else {
		if (state != BPF_TCP_CLOSE_WAIT && state != BPF_TCP_CLOSE)
			return;
		if (!conn_del_key(skops, 0))
			conn_del_key(skops, 1);
	}
	if (state != BPF_TCP_CLOSE)
		bpf_sock_ops_cb_flags_set(skops, flags &
					  ~(BPF_SOCK_OPS_STATE_CB_FLAG | PASSIVE_MARK));
}

SEC("sockops")
int vsd_sockops(struct bpf_sock_ops *skops)
{
	struct vsd_connlim *lim;
	struct vsd_vscfg *cfg;
	__u32 op = skops->op;

#ifdef VSD_VERIFIER_FAULT
	/* tests/sg-broken.bpf.o only: a scalar used as a pointer, refused. */
	return *(int *)(unsigned long)skops->args[0];
#endif
	/* The state callback must run even if the VS's settings are gone. */
	if (op == BPF_SOCK_OPS_STATE_CB) {
		conn_state(skops);
		return 1;
	}
	/*
	 * Most callbacks (RTO, RWND_INIT, ...) are not ours: leave early.
	 * No TOS work on the active side: the connect hooks below set it
	 * inside connect(), before the route lookup and before the SYN (also
	 * for TCP Fast Open, whose sendmsg goes through the same hook), and
	 * an accepted socket inherits its listener's TOS, set here when it
	 * starts listening.  Each callback costs every connection.
	 */
	if (op != BPF_SOCK_OPS_TCP_LISTEN_CB && op != BPF_SOCK_OPS_TCP_CONNECT_CB &&
	    op != BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB && op != BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB)
		return 1;
	cfg = vs_cfg();
	if (!cfg)
		return 1;
	switch (op) {
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
		/* The SYN-ACK and the accepted sockets take the listener's TOS. */
		set_tos(skops, skops->family == AF_INET6 ? TOS_V4 | TOS_V6 : TOS_V4, cfg, 1);
		break;
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
		/*
		 * The connecting side: for a gated destination (the accept
		 * gate classifies by it), or all.  Not recorded: no entry
		 * and no state callbacks for this socket.  At the SYN, so
		 * the entry is there before the server queues the
		 * connection: a TCP Fast Open SYN is queued at once, before
		 * the handshake ends.  A SYN that finds no answer closes the
		 * socket, and the state callback removes the entry.
		 */
		if (skops->bpf_sock_ops_cb_flags & ACTIVE_TRIED) {
			bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags & ~ACTIVE_TRIED);
			break;
		}
		lim = connlim();
		if (!port_recorded(lim, (__u16)bpf_ntohl(skops->remote_port)))
			break;	/* its port may be registered by the time it is established */
		conn_add(skops, 0, cfg, lim);
		if (op == BPF_SOCK_OPS_TCP_CONNECT_CB)
			bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags | ACTIVE_TRIED);
		break;
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		ring_note(skops);
		/* The accepting side's entry serves vsctl conns only. */
		lim = connlim();
		if (lim && (*(volatile __u32 *)&lim->flags & VSD_CONNLIM_ALL))
			conn_add(skops, 1, cfg, lim);
		break;
	}
	return 1;
}

/*
 * connect() of any socket and sendmsg() with an address on a datagram
 * socket (UDP has no sockops).  connect() runs before the route lookup, so
 * a TCP socket's route is looked up with its final TOS and its SYN carries
 * it; an application's own IP_TOS set before connect() (by a socket made
 * before the setsockopt hook below was attached) is overridden here.
 * sendmsg() runs on every unconnected send.  Linux 6.x copies the TOS for a datagram before
 * the sendmsg hook runs, so the first datagram an unconnected socket sends
 * leaves without it (vsd.8, BUGS); connected UDP is covered from the start.
 */
static __always_inline int sockaddr_tos(struct bpf_sock_addr *ctx, int family, int check)
{
	struct vsd_vscfg *cfg;

	if (ctx->type != SOCK_DGRAM && ctx->type != SOCK_STREAM)
		return 1;
	cfg = vs_cfg();
	if (!cfg)
		return 1;
	/*
	 * An IPv6 socket needs the one its destination's packets use: an
	 * IPv4-mapped one's leave as IPv4.  One setsockopt per connect()
	 * instead of two; a socket that later connects or sends elsewhere
	 * gets the other one then, as the hook runs again.
	 */
	if (family == AF_INET6 && ctx->user_ip6[0] == 0 && ctx->user_ip6[1] == 0 &&
	    ctx->user_ip6[2] == bpf_htonl(0x0000ffff))
		set_tos(ctx, TOS_V4, cfg, check);
	else
		set_tos(ctx, family == AF_INET6 ? TOS_V6 : TOS_V4, cfg, check);
	return 1;
}

/*
 * connect() of a TCP socket of a VS that has no room left in the connection
 * table (gates/socket/socket.h): refused with EPERM, so the VS that filled
 * its share pays for it, rather than its connection going unrecorded and
 * being served in a gated service's home VS, charged to someone else.
 * Only connects whose entry would be recorded (port_recorded): a VS that
 * filled its share still reaches ungated destinations, which need no entry.
 * Only a check, the entry is taken when the connection is established.
 */
static __always_inline int connect_room(struct bpf_sock_addr *ctx)
{
	struct vsd_vscfg *cfg;
	struct vsd_connlim *lim;
	struct vsd_vs_conns *c;
	__u32 vs_id;

	if (ctx->type != SOCK_STREAM || !(cfg = vs_cfg()))
		return 1;
	/* user_port: the port in network order in the low 16 bits */
	lim = connlim();
	if (!port_recorded(lim, bpf_ntohs((__u16)ctx->user_port)))
		return 1;
	/* The pool first: while it has room (nearly always) no VS lookup. */
	if (!lim || (lim->rsv == 0 && lim->pool == 0) ||
	    *(volatile __u32 *)&lim->pool_used < lim->pool)
		return 1;
	vs_id = cfg->vs_id;
	if (!(c = bpf_map_lookup_elem(&vsd_vsconns, &vs_id)) ||
	    *(volatile __u32 *)&c->out < lim->rsv)
		return 1;
	__sync_fetch_and_add(&c->refused, 1);
	return 0;
}

SEC("cgroup/connect4")
int vsd_connect4(struct bpf_sock_addr *ctx)
{
	return connect_room(ctx) ? sockaddr_tos(ctx, AF_INET, 0) : 0;
}

SEC("cgroup/connect6")
int vsd_connect6(struct bpf_sock_addr *ctx)
{
	return connect_room(ctx) ? sockaddr_tos(ctx, AF_INET6, 0) : 0;
}

SEC("cgroup/sendmsg4")
int vsd_sendmsg4(struct bpf_sock_addr *ctx) { return sockaddr_tos(ctx, AF_INET, 1); }

SEC("cgroup/sendmsg6")
int vsd_sendmsg6(struct bpf_sock_addr *ctx) { return sockaddr_tos(ctx, AF_INET6, 1); }

/*
 * setsockopt(IP_TOS) and setsockopt(IPV6_TCLASS) on a VS's socket: the
 * value is rewritten to the VS's (vs_tos()), keeping the application's ECN
 * bits, and the call succeeds, so software that sets its own TOS (OpenSSH's
 * IPQoS, for one) keeps working and getsockopt() shows the value in force;
 * refusing with EPERM would make it log errors or give up (docs/DESIGN.md).
 * The socket's cgroup decides, not the caller's, as for every hook here.
 * Not covered: a per-datagram IP_TOS or IPV6_TCLASS control message on
 * sendmsg() (UDP and raw sockets; TCP ignores it), which no cgroup hook
 * sees (vsd(8), SECURITY).  cgroup/setsockopt exists since Linux 5.3.
 */
SEC("cgroup/setsockopt")
int vsd_setsockopt(struct bpf_sockopt *ctx)
{
	__u8 *p = ctx->optval, *end = ctx->optval_end;
	struct vsd_vscfg *cfg;
	int v, want;

	if (!((ctx->level == SOL_IP && ctx->optname == IP_TOS) ||
	      (ctx->level == SOL_IPV6 && ctx->optname == IPV6_TCLASS))) {
		/*
		 * Not ours.  Past a page the program sees a truncated copy;
		 * optlen 0 hands the kernel the caller's own buffer (before
		 * Linux 6.5 leaving it made such a call fail with EFAULT).
		 */
		if (ctx->optlen > 4096)
			ctx->optlen = 0;
		return 1;
	}
	if (!(cfg = vs_cfg()))
		return 1;
	want = vs_tos(cfg);
	/*
	 * optlen, not optval_end, says what the caller gave: the buffer is
	 * at least 16 bytes whatever optlen is (kernel/bpf/cgroup.c).
	 */
	if (ctx->optlen >= (int)sizeof(int) && p + sizeof(int) <= end) {
		v = *(int *)p;
		/* IPV6_TCLASS: -1 is the default, past 0xff an error the kernel gives */
		if (ctx->level == SOL_IPV6 && (v < -1 || v > 0xff))
			return 1;
		*(int *)p = want | (v >= 0 ? v & 3 : 0);
	} else if (ctx->optlen >= 1 && p + 1 <= end) {
		/* IP_TOS also takes a single byte */
		*p = (__u8)(want | (*p & 3));
	} else if (ctx->level == SOL_IP) {
		/*
		 * IP_TOS with an empty value is TOS 0 to the kernel, nothing
		 * to rewrite: optlen -1 skips the kernel's handler, the call
		 * succeeds and the socket keeps its TOS.
		 */
		ctx->optlen = -1;
	}
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
