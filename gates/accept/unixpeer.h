/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The record unixpeer.bpf.c writes for one accepted Unix stream connection
 * and unixpeer.c reads: the fd (in the supervisor) and the cgroup2 ids of the
 * peer socket's cgroup and of its ancestors, deepest first, 0 past the root.
 * Shared by the BPF program and user space: keep both sides in sync.
 */
#ifndef VSD_GATE_UNIXPEER_H
#define VSD_GATE_UNIXPEER_H

#define UNIXPEER_DEPTH	8	/* cgroup levels looked at, from the socket's own up */

struct unixpeer_rec {
	__u32	fd;
	__u32	pad;
	__u64	cg[UNIXPEER_DEPTH];
};

#endif
