// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Classifying an accepted Unix stream connection, kernel side: which cgroup
 * the connecting side's socket belongs to.
 *
 * A socket keeps the cgroup2 cgroup it was created in (sk_cgrp_data, set by
 * sk_alloc() for every family), whatever its process does later: the socket
 * gate's rule (socket, *, *) => (creator), which TCP connections get from
 * the socket gate's table. An accepted Unix socket points to its peer
 * (unix_sk(sk)->peer, held with a reference until our socket is released),
 * so the peer's cgroup can be read even after the client closed or exited,
 * and no process id is involved: nothing can be reused under us.
 *
 * No BPF hook runs when a Unix socket connects on Linux 6.1 (cgroup/connect_unix
 * came in 6.7; cgroup/sock_create and sockops see only INET sockets), so we
 * read it when the supervisor accepts, with a task_file iterator over the
 * supervisor's own file table (the pid parameter is Linux 6.1+,
 * bpf_sock_from_file 5.11, bpf_skc_to_unix_sock 5.16). User space sets the
 * fd range to report before each run.
 *
 * Layout shared with user space: keep in sync with gates/accept/unixpeer.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "unixpeer.h"

char LICENSE[] SEC("license") = "GPL";

/* the fds to report, written by user space before each run */
__u32 fd_lo, fd_hi;

SEC("iter/task_file")
int unixpeer(struct bpf_iter__task_file *ctx)
{
	struct unixpeer_rec r = {};
	struct file *file = ctx->file;
	struct cgroup *cg;
	struct unix_sock *u;
	struct socket *sock;
	struct sock *peer;
	int i;

	if (!file || ctx->fd < fd_lo || ctx->fd > fd_hi)
		return 0;
	if (!(sock = bpf_sock_from_file(file)) || !sock->sk)
		return 0;
	if (!(u = bpf_skc_to_unix_sock(sock->sk)) || !(peer = u->peer))
		return 0;
	cg = peer->sk_cgrp_data.cgroup;
	r.fd = ctx->fd;
	/* up through the parents' csses (kernfs_node's parent pointer changed
	 * its name in 6.15; cgroup.self.parent is the same from 6.1 to 6.18) */
	for (i = 0; i < UNIXPEER_DEPTH; i++) {
		struct cgroup_subsys_state *css;

		if (!cg)
			break;
		r.cg[i] = cg->kn->id;
		css = cg->self.parent;
		cg = css ? css->cgroup : NULL;
	}
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}
