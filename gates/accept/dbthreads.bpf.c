// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The database mode, kernel side: a thread of a gated database serves each
 * connection in the VS that opened it. When a thread of the service's
 * process reads from a connection, we look up the connection's VS and
 * compare it with the VS the thread is bound to; on a difference we tell
 * the supervisor (dbthreads.c) through a ring buffer, and it moves the
 * thread. The thread is marked as bound to the new VS here, so one change
 * sends one event however often the thread reads before it is moved.
 *
 * The connection's VS: for TCP, the socket gate's record of its 4-tuple
 * (vsd's connection table, reused from its pin; gated.bpf.h); for a Unix
 * stream socket, the cgroup2 directory its peer socket was created in (the
 * deepest VS directory it is in or under, as unixpeer.bpf.c). A connection
 * of no VS, and every other socket the process reads, is served at home.
 *
 * Hook: the sock_recv_length tracepoint (Linux 6.3+), after each recvmsg,
 * read and recv on any socket, whatever its family; a read that would block
 * fires it too, so an event-loop server is caught before its first data.
 * Where the kernel has no such tracepoint (Debian 12's 6.1), an fentry on
 * sock_recvmsg, before the read; the machines where fentry is refused have
 * the tracepoint. The first test is the process, so other processes pay
 * one map lookup per read while the mode is on.
 *
 * Layout shared with user space: keep in sync with gates/accept/dbthreads.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "socket.h"

/* the size of vsd's connection table, set by the loader from its pin */
const volatile __u32 conns_mask = VSD_CONNS_MAX - 1;
#define VSD_CONNS_MASK	conns_mask

#include "gated.bpf.h"
#include "dbthreads.h"

#ifndef AF_UNIX
#define AF_UNIX		1
#endif

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dbt_cfg);
} dbt_cfg SEC(".maps");

/* a VS's cgroup2 directory id -> its VS id, written by the loader */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DBT_VS_MAX);
	__type(key, __u64);
	__type(value, __u32);
} dbt_cg2 SEC(".maps");

/* TID -> the VS it is bound to (or being moved to); absent: home */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, DBT_THREADS_MAX);
	__type(key, __u32);
	__type(value, __u32);
} dbt_tids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, DBT_RING_BYTES);
} dbt_events SEC(".maps");

__u64 dbt_lost;		/* events the ring had no room for (retried at the next read) */

static __always_inline __u32 unix_vs(struct sock *sk)
{
	struct unix_sock *u = bpf_skc_to_unix_sock(sk);
	struct cgroup *cg;
	struct sock *peer;
	__u64 id;
	__u32 *vs;
	int i;

	if (!u || !(peer = u->peer))
		return 0;
	cg = BPF_CORE_READ(peer, sk_cgrp_data.cgroup);
	for (i = 0; i < DBT_DEPTH && cg; i++) {
		struct cgroup_subsys_state *css;

		id = BPF_CORE_READ(cg, kn, id);
		if ((vs = bpf_map_lookup_elem(&dbt_cg2, &id)))
			return *vs;
		css = BPF_CORE_READ(cg, self.parent);
		cg = css ? BPF_CORE_READ(css, cgroup) : NULL;
	}
	return 0;
}

static __always_inline __u32 sock_vs(struct sock *sk)
{
	struct vsd_conn_key k;

	if (BPF_CORE_READ(sk, __sk_common.skc_family) == AF_UNIX)
		return unix_vs(sk);
	if (accepted_key(sk, &k) < 0)
		return 0;
	return conn_vs(&k);
}

static __always_inline int on_read(struct sock *sk)
{
	struct dbt_event ev;
	struct dbt_cfg *cfg;
	__u32 zero = 0, vs, *cur;
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (!(cfg = bpf_map_lookup_elem(&dbt_cfg, &zero)) || !cfg->tgid ||
	    cfg->tgid != (__u32)(pid_tgid >> 32) || !sk)
		return 0;
	ev.tid = (__u32)pid_tgid;
	if (!(vs = sock_vs(sk)))
		vs = cfg->home;
	cur = bpf_map_lookup_elem(&dbt_tids, &ev.tid);
	if ((cur ? *cur : cfg->home) == vs)
		return 0;
	ev.vs_id = vs;
	if (bpf_ringbuf_output(&dbt_events, &ev, sizeof(ev), 0)) {
		__sync_fetch_and_add(&dbt_lost, 1);
		return 0;
	}
	bpf_map_update_elem(&dbt_tids, &ev.tid, &vs, BPF_ANY);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(dbt_recv_tp, struct sock *sk, int ret, int flags)
{
	return on_read(sk);
}

SEC("fentry/sock_recvmsg")
int BPF_PROG(dbt_recv_fentry, struct socket *sock, struct msghdr *msg, int flags)
{
	return on_read(sock->sk);
}
