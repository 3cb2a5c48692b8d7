/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef VSD_TRACEPOINT_H
#define VSD_TRACEPOINT_H

/*
 * Attach the loaded BPF program prog (BPF_PROG_TYPE_TRACEPOINT) to the
 * tracepoint tp ("syscalls/sys_exit_accept4"), found by tracepoint_id():
 * through a perf event on CPU 0 (a program on a tracepoint
 * runs on every CPU). Returns a BPF link's fd, which holds the attachment
 * until closed, or -1 with errno set (EEXIST: prog is attached there already).
 */
int tracepoint_attach(int prog, const char *tp);

/*
 * The tracepoint's id, from tracefs (/sys/kernel/tracing, or under
 * debugfs); where tracefs is not mounted, from a mount of it that a child
 * makes in a mount namespace of its own (CAP_SYS_ADMIN), leaving the host's
 * mounts as they are. -1 with errno ENOENT if none has it.
 */
int tracepoint_id(const char *tp);

#endif
