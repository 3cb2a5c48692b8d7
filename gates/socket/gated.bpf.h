/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * BPF side, shared by the socket gate (socket.bpf.c) and the accept gate's
 * accept records (records.bpf.c): the maps both use, which the
 * accept gate reuses from vsd's pins, the connection table's lookup, and
 * the gated listeners' rings.  Layouts and protocols: socket.h.  Include
 * after vmlinux.h, the libbpf headers and socket.h.
 */
#ifndef VSD_GATED_BPF_H
#define VSD_GATED_BPF_H

#ifndef AF_INET
#define AF_INET		2
#define AF_INET6	10
#endif

/* The table's index mask; a loader that reuses vsd's pin may set its own. */
#ifndef VSD_CONNS_MASK
#define VSD_CONNS_MASK	(VSD_CONNS_MAX - 1)
#endif

/* The open-addressed connection table: the protocol is in gates/socket/socket.h. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VSD_CONNS_MAX);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct vsd_conn_slot);
} vsd_conns SEC(".maps");

/* Gated listeners and their arrival rings: gates/socket/socket.h. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VSD_GATED_MAX);
	__type(key, struct vsd_gated_key);
	__type(value, struct vsd_gated_val);
} vsd_gated SEC(".maps");

/* Mapped, a __u32 per TCP port; here pairs (gates/socket/socket.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VSD_GPORTS_ELEMS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);		/* TCP port / 2 */
	__type(value, __u64);		/* gated listeners on port & ~1, port | 1 */
} vsd_gports SEC(".maps");

struct vsd_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, VSD_RING_BYTES);
};

/* The gates' rings (Linux 5.8+: a ring buffer as an inner map). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, VSD_RINGS_MAX);
	__type(key, __u32);
	__array(values, struct vsd_ring);
} vsd_rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VSD_RINGS_MAX);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct vsd_ringctl);
} vsd_ringctl SEC(".maps");

static __always_inline struct vsd_conn_slot *slot_at(__u32 h, __u32 i)
{
	__u32 idx = (h + i) & VSD_CONNS_MASK;

	return bpf_map_lookup_elem(&vsd_conns, &idx);
}

/*
 * Fold an IPv4-mapped IPv6 address (::ffff:a.b.c.d) to plain IPv4, so that
 * an AF_INET6 client talking to an AF_INET listener records the same key
 * the listener's accept() sees.
 */
static __always_inline int v4mapped(const __u32 a[4])
{
	return a[0] == 0 && a[1] == 0 && a[2] == bpf_htonl(0x0000ffff);
}

/* An IPv4-mapped pair as the IPv4 one: the key is the same either way. */
static __always_inline void v4unmap(__u32 l[4], __u32 r[4])
{
	l[0] = l[3]; r[0] = r[3];
	l[1] = l[2] = l[3] = 0;
	r[1] = r[2] = r[3] = 0;
}

/* The family of an AF_INET6 socket's key: an IPv4-mapped pair folds to IPv4. */
static __always_inline void family6(struct vsd_conn_key *k, __u32 l[4], __u32 r[4])
{
	if (v4mapped(l) && v4mapped(r)) {
		k->family = AF_INET;
		v4unmap(l, r);
	} else {
		k->family = AF_INET6;
	}
}

/* The key from the local and remote addresses and ports (host order). */
static __always_inline void conn_orient(struct vsd_conn_key *k, int passive, const __u32 l[4],
					const __u32 r[4], __u16 lport, __u16 rport)
{
	/* Oriented initiator -> acceptor; see gates/socket/socket.h. */
	k->dir = passive ? VSD_DIR_PASSIVE : VSD_DIR_ACTIVE;
	if (passive) {
		k->sport = rport; k->dport = lport;
		__builtin_memcpy(k->saddr, r, 16);
		__builtin_memcpy(k->daddr, l, 16);
	} else {
		k->sport = lport; k->dport = rport;
		__builtin_memcpy(k->saddr, l, 16);
		__builtin_memcpy(k->daddr, r, 16);
	}
}

/*
 * The VS recorded for the connecting side of a connection, from the key
 * the accepting side builds (k->dir is set here); 0 if none.  A slot is read
 * as user space reads it: seq, the copy, seq again.
 */
static __always_inline __u32 conn_vs(struct vsd_conn_key *k)
{
	struct vsd_conn_slot *s;
	__u32 h, i, seq, vs_id;

	k->dir = VSD_DIR_ACTIVE;
	h = vsd_conn_hash(k);
#pragma nounroll
	for (i = 0; i < VSD_CONN_PROBE; i++) {
		if (!(s = slot_at(h, i)))
			return 0;
		seq = *(volatile __u32 *)&s->seq;
		if (VSD_SLOT_STATE(seq) == VSD_SLOT_EMPTY)
			return 0;
		if (VSD_SLOT_STATE(seq) != VSD_SLOT_LIVE || !vsd_conn_key_eq(&s->key, k))
			continue;
		vs_id = s->val.vs_id;
		if (*(volatile __u32 *)&s->seq == seq)
			return vs_id;
	}
	return 0;
}

/*
 * The table's key of an accepted TCP connection, from its socket; 0, or
 * -1 if it is not TCP over IPv4/IPv6.
 */
static __always_inline int accepted_key(struct sock *sk, struct vsd_conn_key *k)
{
	__u32 l[4] = {}, r[4] = {};
	__u16 lport;
	int family;

	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if ((family != AF_INET && family != AF_INET6) ||
	    BPF_CORE_READ(sk, sk_protocol) != IPPROTO_TCP)
		return -1;
	lport = BPF_CORE_READ(sk, __sk_common.skc_num);
	__builtin_memset(k, 0, sizeof(*k));
	if (family == AF_INET6) {
		BPF_CORE_READ_INTO(&l, sk, __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32);
		BPF_CORE_READ_INTO(&r, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr32);
		family6(k, l, r);
	} else {
		k->family = AF_INET;
		l[0] = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
		r[0] = BPF_CORE_READ(sk, __sk_common.skc_daddr);
	}
	conn_orient(k, 1, l, r, lport, bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport)));
	return 0;
}

/*
 * Append a record to the ring of the registered listener gv, waking the
 * gate as its vsd_ringctl says for an arrival (never for an accept).
 */
static __always_inline void ring_put(const struct vsd_gated_val *gv, struct vsd_arrival *a)
{
	struct vsd_ringctl *ctl;
	void *ring;
	__u32 idx, wake;
	__u64 flags = BPF_RB_NO_WAKEUP;

	idx = gv->ring;
	if (!(ring = bpf_map_lookup_elem(&vsd_rings, &idx)) ||
	    !(ctl = bpf_map_lookup_elem(&vsd_ringctl, &idx)))
		return;
	wake = *(volatile __u32 *)&ctl->wake;
	if (!a->tid && (wake == VSD_WAKE_ALWAYS || (wake != VSD_WAKE_NEVER && wake != a->vs_id)))
		flags = BPF_RB_FORCE_WAKEUP;
	a->t = bpf_ktime_get_ns();
	if (bpf_ringbuf_output(ring, a, sizeof(*a), flags))
		__sync_fetch_and_add(&ctl->dropped, 1);
}

#endif
