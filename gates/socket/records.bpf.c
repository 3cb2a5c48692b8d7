// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept records of the accept gate's fast path (gates/socket/socket.h,
 * "Gated listeners"; gates/accept/fastpath.c): when a thread's accept
 * returns a connection of a listener an accept gate registered, append an
 * accept record (the thread, the connection's cookie, its VS) to that
 * listener's ring, so the gate knows which connection each thread it let
 * through took, and whether it was of the VS the gate had bound it to.
 *
 * vsd loads them on its maps with the socket gate and pins them unattached
 * (socket.c); each accept gate attaches them for as long as it runs
 * (gates/accept/records.c), so they cost nothing while none does. One of
 * two kinds, whichever the kernel takes: fexit on inet_csk_accept, TCP's
 * accept for IPv4 and IPv6, costs only accept calls; kernels locked down
 * for integrity refuse fentry and fexit programs (and some have no
 * kprobes), so the other is the syscall exit tracepoints of accept and
 * accept4, which every kernel we run on has, and which make every system
 * call on the machine take the slow path while attached (vsctl-run(8),
 * "The fast path").
 *
 * The connection's local port and namespace are its listener's; its
 * cookie was made by the socket gate's sockops program when it recorded
 * the arrival.  The registering gate's own accepts (its drains) are not
 * recorded.  A connection the gate handed over (added to the thread, the
 * syscall answered for it) is recorded by the tracepoint, not by fexit;
 * the gate keeps only records of threads it let through.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include "socket.h"

/* The size of vsd's table, which may not be ours (tests build vsd with a
 * tiny one): set by the loader from the pinned map. */
const volatile __u32 conns_mask = VSD_CONNS_MAX - 1;
#define VSD_CONNS_MASK	conns_mask

#include "gated.bpf.h"

static __always_inline void record_accept(struct sock *child)
{
	struct vsd_gated_key gk = {};
	struct vsd_arrival a = {};
	struct vsd_gated_val *gv;
	struct vsd_conn_key k;
	__u64 pid_tgid;
	__u32 pair, *n;
	int family;

	family = BPF_CORE_READ(child, __sk_common.skc_family);
	if ((family != AF_INET && family != AF_INET6) ||
	    BPF_CORE_READ(child, sk_protocol) != IPPROTO_TCP)
		return;
	gk.port = BPF_CORE_READ(child, __sk_common.skc_num);
	/* most listeners are not gated: one array lookup says so */
	pair = gk.port >> 1;
	if (!(n = bpf_map_lookup_elem(&vsd_gports, &pair)) ||
	    *((volatile __u32 *)n + (gk.port & 1)) == 0)
		return;
	gk.netns = BPF_CORE_READ(child, __sk_common.skc_net.net, net_cookie);
	pid_tgid = bpf_get_current_pid_tgid();
	if (!(gv = bpf_map_lookup_elem(&vsd_gated, &gk)) || gv->owner == (__u32)(pid_tgid >> 32) ||
	    accepted_key(child, &k) < 0)
		return;
	a.cookie = BPF_CORE_READ(child, __sk_common.skc_cookie.counter);
	a.vs_id = conn_vs(&k);
	a.tid = (__u32)pid_tgid;
	ring_put(gv, &a);
}

/* It returns the child; its other arguments changed in Linux 6.10, so the
 * return value is read through the helper that needs no prototype. */
SEC("fexit/inet_csk_accept")
int vsd_accept_fexit(__u64 *ctx)
{
	__u64 ret = 0;

	if (bpf_get_func_ret(ctx, &ret) == 0 && ret)
		record_accept((struct sock *)ret);
	return 0;
}

struct sys_exit_ctx {
	__u64 common;		/* the tracepoint's common fields */
	__s32 nr;
	__s64 ret;
};

/* The socket behind the descriptor accept returned. */
static __always_inline int accepted_fd(struct sys_exit_ctx *ctx)
{
	struct task_struct *task;
	struct file **fds, *file = NULL;
	struct socket *sock;
	struct sock *child;
	__s64 fd = ctx->ret;
	__u32 max;

	if (fd < 0)
		return 0;
	task = (struct task_struct *)bpf_get_current_task();
	max = BPF_CORE_READ(task, files, fdt, max_fds);
	fds = BPF_CORE_READ(task, files, fdt, fd);
	if (fd >= max || !fds || bpf_probe_read_kernel(&file, sizeof(file), fds + fd) || !file)
		return 0;
	sock = BPF_CORE_READ(file, private_data);
	if (sock && (child = BPF_CORE_READ(sock, sk)))
		record_accept(child);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_accept4")
int vsd_accept4_tp(struct sys_exit_ctx *ctx) { return accepted_fd(ctx); }

SEC("tracepoint/syscalls/sys_exit_accept")
int vsd_accept_tp(struct sys_exit_ctx *ctx) { return accepted_fd(ctx); }

char LICENSE[] SEC("license") = "GPL";
