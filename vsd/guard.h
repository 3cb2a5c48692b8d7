/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The processes vsd must not move into a VS or kill with one (vsd(8),
 * PROCESSES): vsd itself and the keeper of its scope, init, kernel threads,
 * the accept gate's supervisors (vsd-gate) and the processes of their
 * services; and, for a client that is not root, every process it does not
 * own.
 *
 * vsd knows the supervisors by their status sockets, <run dir>/gates/NAME.sock
 * (both those it starts for a rule file's services and those `vsctl run`
 * starts): the kernel names the process that listens there (SO_PEERCRED),
 * which must be root's; its home VS is its --home argument. A service's
 * processes are that supervisor's descendants: it is their child
 * subreaper, so none leaves its tree while it lives.
 */
#ifndef VSD_GUARD_H
#define VSD_GUARD_H

#include <sys/types.h>

#include "lib/util.h"

struct vsd;
struct reply;

struct guard_sup {
	pid_t	 pid;
	int	 pidfd;			/* holds the supervisor while we look */
	char	 name[VS_NAME_MAX + 1];	/* the service */
	char	 home[VS_NAME_MAX + 1];	/* its home VS; "" if the gate has none */
};

struct guard {
	struct guard_sup *v;
	size_t	 n;
};

enum guard_kind {
	GUARD_NONE,		/* an ordinary process */
	GUARD_VSD,		/* vsd itself, or the keeper of its scope */
	GUARD_INIT,		/* PID 1 */
	GUARD_KTHREAD,		/* a kernel thread */
	GUARD_SUPERVISOR,	/* a vsd-gate */
	GUARD_SERVICE,		/* a process of a gated service */
	GUARD_GONE,		/* it has exited */
};

/* Find the running supervisors; 0 or -errno (none is not an error). */
int guard_load(struct vsd *d, struct guard *g);
void guard_free(struct guard *g);

/* What pid (a process, not a thread) is; *sup for a supervisor or service. */
enum guard_kind guard_what(const struct vsd *d, const struct guard *g, pid_t pid,
    const struct guard_sup **sup);

/*
 * May a client with uid act on process pid (move it, kill it)? 0, or a
 * reply_err() naming the process and why not, with cmd first: vsd's own
 * processes, init, kernel threads, supervisors and gated services' processes
 * never; for a client other than root, a process whose real, effective,
 * saved or filesystem user ID is not the client's neither.
 */
int guard_check(const struct vsd *d, const struct guard *g, pid_t pid, uid_t uid,
    const char *cmd, struct reply *rep);

/* 1 if uid owns pid (all four user IDs are uid; root owns all), 0 if not
 * (*other: the first that is not), -ESRCH if it is gone. */
int guard_owns(pid_t pid, uid_t uid, uid_t *other);
/* guard_check's owner part only. */
int guard_owner(pid_t pid, uid_t uid, const char *cmd, struct reply *rep);

#endif
