/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vsd-gate's own parts, around libgateaccept.a (gate.h):
 *   vsd-gate.c  options, the event loop, the service's life: restart with
 *               back-off when vsd manages it (--restart), stop
 *   service.c   starting the service under the filter (as --user), the
 *               output pipe, signalling every process it left behind
 */
#ifndef VSD_GATE_SUPERVISOR_H
#define VSD_GATE_SUPERVISOR_H

#include <signal.h>
#include <sys/types.h>

#include "gate.h"
#include "lib/privs.h"

/* --sync-wakeup: auto sets the flag where the kernel has it (6.6+) */
enum sync_mode { SYNC_AUTO, SYNC_ON, SYNC_OFF };

struct opts {
	const char *home, *name, *vsd_socket, *table_file, *map, *status;
	unsigned window_ms;
	enum cg2_mode cg2;
	int verbose;
	int sync;	/* --sync-wakeup: enum sync_mode (auto by default: vsctl-run(8)) */
	int warm;	/* --warm: enum warm_mode (on by default: see rcu-warm.c) */
	int nosched;	/* --sched off (fifo by default: see sched.c) */
	int pmqos;	/* --pm-qos on (off by default: see pmqos.c) */
	int fast;	/* --fast: enum gate_fast (on by default: see fastpath.c) */
	int restart;	/* --restart: vsd's declared service, restarted with back-off */
	int syslog;	/* --log syslog: our messages and the service's output */
	unsigned stop_timeout;	/* s from SIGTERM to SIGKILL when stopping */
	const char *rules;	/* --rules FILE: the rules, without vsd (tests) */
	const char *trace;	/* --trace FILE: the decision's events and answers */
	gid_t	 status_group;	/* --status-group: may read the status socket too;
				 * (gid_t)-1 if none */
	const char *user, *group;	/* --user, --group: whom the service runs as */
	struct privs_user pu;	/* them, resolved once at start (valid if user) */
	char **argv;
};

/* The service's start: the child joins home, loads the filter, execs. */
struct start {
	pid_t	 pid;		/* the service's main process */
	int	 pidfd;
	int	 notify_fd;	/* the filter's listener, -1 if the child failed */
	int	 out_fd;	/* read end of its stdout/stderr (--restart), or -1 */
	int	 status;	/* wait status if it failed before exec */
};

/*
 * Fork the service under the filter; signals in mask stay blocked here and
 * are restored in the child. want_socket: notify socket(AF_INET*) too (the
 * lazy cgroup2 move of hybrid hosts). pipe_output: its stdout and stderr go
 * to a pipe we read (st->out_fd) instead of ours.
 */
void service_start(const struct opts *o, const struct gate_vs *home, const sigset_t *oldmask,
    int want_socket, int pipe_output, struct start *st);

/*
 * Signal every process the service left: our children (we are their
 * subreaper) and their descendants, through pidfds. Returns how many.
 */
int service_signal_all(int sig);

/*
 * Read what the service wrote and log it line by line as "NAME: line".
 * Returns 0 at end of file (every writer closed it), 1 otherwise.
 */
int service_output(int fd, const char *name);


#endif
