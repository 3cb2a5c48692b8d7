/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Internals shared by the socket gate's loader files (socket.c, socket-attach.c, socket-conns.c). */
#ifndef VSD_GATE_SOCKET_PRIV_H
#define VSD_GATE_SOCKET_PRIV_H

#include <limits.h>
#include <bpf/bpf.h>

#include "conntab.h"

/* Order of the hooks: also the order of attaching. */
enum gs_hook_idx {
	GS_SOCK_CREATE, GS_SOCKOPS, GS_CONNECT4, GS_CONNECT6,
	GS_SENDMSG4, GS_SENDMSG6, GS_SETSOCKOPT, GS_NHOOKS,
};
enum gs_map_idx {
	GS_MAP_CONNS, GS_MAP_VSCFG, GS_MAP_STATS, GS_MAP_VSCONNS, GS_MAP_CONNLIM,
	GS_MAP_GATED, GS_MAP_GPORTS, GS_MAP_RINGS, GS_MAP_RINGCTL, GS_NMAPS
};

struct gs_hook {
	const char *name;		/* pin names: prog_<name>, vs<ID>/<name> */
	enum bpf_attach_type type;
};
extern const struct gs_hook gs_hooks[GS_NHOOKS];

struct gate_socket {
	char pindir[PATH_MAX];		/* /sys/fs/bpf/vsd/<cgroup-root> */
	int prog_fd[GS_NHOOKS];
	int map_fd[GS_NMAPS];
	struct conntab conns;		/* vsd_conns, mapped read-write */
	struct vsd_connlim *lim;	/* vsd_connlim, mapped read-write */
	size_t limlen;
};

/* <pindir>/<name> */
int gs_path(const struct gate_socket *g, char *buf, size_t len, const char *name);

#endif
