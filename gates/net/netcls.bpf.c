// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The network share classifier: a cls_bpf filter (direct action) on the
 * HTB qdisc vsd puts on a device. It puts a packet in the class of the VS
 * whose cgroup2 subtree holds the packet's socket.
 *
 * Why the cgroup and not the socket's priority or mark: SO_PRIORITY 0..6
 * needs no privilege (and IP_TOS rewrites it), so a process could move its
 * traffic out of its VS's class; the cgroup of a socket is fixed when it is
 * made and only a process allowed to write cgroup.procs can change where it
 * runs. bpf_skb_ancestor_cgroup_id (Linux 4.19) also finds the VS of a
 * socket made in a cgroup below the VS's.
 *
 * Direct action: the kernel takes the class as the filter's major number
 * (TCA_BPF_CLASSID, the qdisc's handle) | skb->tc_classid (16 bits, the
 * minor). No VS: TC_ACT_UNSPEC, and HTB sends the packet to its default
 * class.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "netcls.h"

#define TC_ACT_UNSPEC	(-1)
#define TC_ACT_OK	0

/* The depth of the VSs' cgroup2 directories (root = 0); set at load. */
const volatile __u32 vs_level = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NETCLS_MAX);
	__type(key, struct netcls_key);
	__type(value, __u32);
} vsd_netcls SEC(".maps");

SEC("tc")
int vsd_netcls_classify(struct __sk_buff *skb)
{
	struct netcls_key k = { .ifindex = skb->ifindex };
	__u32 *minor;

	/* 0 for a packet without a full socket (forwarded, a time-wait RST) */
	k.cgid = bpf_skb_ancestor_cgroup_id(skb, vs_level);
	if (!k.cgid)
		return TC_ACT_UNSPEC;
	minor = bpf_map_lookup_elem(&vsd_netcls, &k);
	if (!minor)
		return TC_ACT_UNSPEC;
	skb->tc_classid = *minor;
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
