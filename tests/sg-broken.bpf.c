// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A socket gate object the verifier must refuse (tests/socket-gate.sh):
 * the names vsd's loader looks for, and a sockops program that reads
 * through a plain number.  vsd must log the verifier's message and leave
 * nothing behind.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "socket.h"

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, __u64);
	__type(value, struct vsd_vscfg);
} vsd_vscfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VSD_CONNS_MAX);
	__type(key, struct vsd_conn_key);
	__type(value, struct vsd_conn_val);
} vsd_conns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VSD_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} vsd_stats SEC(".maps");

SEC("cgroup/sock_create")
int vsd_sock_create(struct bpf_sock *sk)
{
	struct vsd_vscfg *cfg = bpf_get_local_storage(&vsd_vscfg, 0);

	return cfg->vs_id ? 1 : 1;
}

SEC("sockops")
int vsd_sockops(struct bpf_sock_ops *skops)
{
	struct vsd_conn_key k = {};
	__u32 i = 0;

	bpf_map_lookup_elem(&vsd_conns, &k);
	bpf_map_lookup_elem(&vsd_stats, &i);
	/* The deliberate fault: a scalar used as a pointer. */
	return *(int *)(unsigned long)skops->args[0];
}

SEC("cgroup/connect4")
int vsd_connect4(struct bpf_sock_addr *ctx) { return 1; }
SEC("cgroup/connect6")
int vsd_connect6(struct bpf_sock_addr *ctx) { return 1; }
SEC("cgroup/sendmsg4")
int vsd_sendmsg4(struct bpf_sock_addr *ctx) { return 1; }
SEC("cgroup/sendmsg6")
int vsd_sendmsg6(struct bpf_sock_addr *ctx) { return 1; }

char LICENSE[] SEC("license") = "GPL";
