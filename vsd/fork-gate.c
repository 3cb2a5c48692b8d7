// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fork gate: a fork rule (vsrules(5)), (fork, a) => (b), puts every new
 * process created in VS a into VS b.
 *
 * The kernel creates a child in its parent's cgroups, and no stock kernel
 * interface lets anyone choose otherwise for a fork it does not make itself.
 * So vsd listens to the kernel's process events (the proc connector:
 * NETLINK_CONNECTOR, CN_IDX_PROC, as libcgroup's cgrulesengd does) and moves
 * each new process a rule names, through a pidfd opened while it is still
 * the child of the parent the event names (a recycled pid is never moved).
 * Until the move the child runs in its parent's VS: that is the gate's
 * attribution error (see vsd(8)). New threads stay with their process.
 *
 * vsd listens only while the rules in force have a fork rule whose target
 * is not creator (the events come for every fork on the machine).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "lib/log.h"
#include "rules/rules.h"
#include "fork-gate.h"
#include "guard.h"
#include "vsd.h"

static int fork_fd = -1;

/* Does any fork rule move a process anywhere? */
static int
wanted(const struct rules *rs)
{
	size_t k;

	if (!rs)
		return 0;
	for (k = rs->gate_first[RULES_GATE_FORK]; k < rs->gate_first[RULES_GATE_FORK + 1]; k++)
		if (rs->rules[k].action != RULES_TO_CREATOR)
			return 1;
	return 0;
}

static int
listen_events(int fd, enum proc_cn_mcast_op op)
{
	char buf[NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(op))] = { 0 };
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct cn_msg *cn = NLMSG_DATA(nh);

	nh->nlmsg_len = NLMSG_LENGTH(sizeof(*cn) + sizeof(op));
	nh->nlmsg_type = NLMSG_DONE;
	nh->nlmsg_pid = (unsigned)getpid();
	cn->id.idx = CN_IDX_PROC;
	cn->id.val = CN_VAL_PROC;
	cn->len = sizeof(op);
	memcpy(cn->data, &op, sizeof(op));
	return send(fd, buf, nh->nlmsg_len, 0) == (ssize_t)nh->nlmsg_len ? 0 : -errno;
}

static int
open_events(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC,
				  .nl_pid = (unsigned)getpid() };
	int fd, r;

	if ((fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			 NETLINK_CONNECTOR)) < 0)
		return -errno;
	/* a busy machine forks a lot: room for bursts while we move one */
	{
		int sz = 4 << 20;

		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (r = listen_events(fd, PROC_CN_MCAST_LISTEN)) < 0) {
		r = -errno;
		close(fd);
		return r ? r : -EIO;
	}
	return fd;
}

void
fork_gate_update(struct vsd *d)
{
	int fd;

	if (wanted(d->rules) == (fork_fd >= 0))
		return;
	if (fork_fd >= 0) {
		listen_events(fork_fd, PROC_CN_MCAST_IGNORE);
		close(fork_fd);
		fork_fd = -1;
		log_info("fork gate: off (no fork rule moves a process)");
		return;
	}
	if ((fd = open_events()) < 0) {
		log_warnx("fork gate: cannot listen to the kernel's process events (proc "
			  "connector): %s; fork rules are not enforced", strerror(-fd));
		return;
	}
	fork_fd = fd;
	log_info("fork gate: on (the rules in force move new processes)");
}

int
fork_gate_fd(void)
{
	return fork_fd;
}

static void
on_fork(struct vsd *d, pid_t child, pid_t parent)
{
	char from[VS_NAME_MAX + 1];
	struct rules_decision dec;
	const char *to;
	struct vs *vs;
	uid_t other;
	int fd, r;

	if ((fd = pidfd_open(child, 0)) < 0)
		return;		/* gone already */
	if (proc_parent(child) != parent || cg_pid_vs(&d->cg, child, from, sizeof(from)) < 0)
		goto out;
	dec = rules_query_name(d->rules, RULES_GATE_FORK, from, NULL);
	if (dec.action != RULES_TO_VS || dec.vs < 0)
		goto out;
	to = d->rules->vs[dec.vs].name;
	if (strcmp(to, from) == 0 || !(vs = reg_find(&d->reg, to)) || vs->status != VS_OK)
		goto out;
	/* rules a member of vsd's group applied move only that user's processes */
	if (guard_owns(child, d->rules_owner, &other) != 1)
		goto out;
	if ((r = cg_vs_attach(&d->cg, vs, fd)) < 0 && r != -ESRCH)
		log_warnx("fork gate: cannot move process %d from %s to %s: %s", (int)child, from,
			  to, strerror(-r));
	else if (r == 0)
		d->fork_moves++;
out:
	close(fd);
}

void
fork_gate_events(struct vsd *d)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	ssize_t n;

	while ((n = recv(fork_fd, buf, sizeof(buf), 0)) > 0) {
		struct nlmsghdr *nh;
		int len = (int)n;

		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (unsigned)len);
		     nh = NLMSG_NEXT(nh, len)) {
			struct cn_msg *cn = NLMSG_DATA(nh);
			struct proc_event ev = { 0 };

			if (nh->nlmsg_type == NLMSG_ERROR || nh->nlmsg_type == NLMSG_NOOP)
				continue;
			/*
			 * The event follows a 16-byte nlmsghdr and a 20-byte cn_msg,
			 * 4 bytes off the 8-byte alignment of its timestamp_ns: copy
			 * it out rather than read it in place (UBSan: misaligned).
			 */
			memcpy(&ev, cn->data, cn->len < sizeof(ev) ? cn->len : sizeof(ev));
			if (ev.what != PROC_EVENT_FORK ||
			    ev.event_data.fork.child_pid != ev.event_data.fork.child_tgid)
				continue;	/* not a new process */
			on_fork(d, ev.event_data.fork.child_pid, ev.event_data.fork.parent_tgid);
		}
	}
	if (n < 0 && errno == ENOBUFS)
		log_warnx("fork gate: the kernel dropped process events (too many forks at "
			  "once); some new processes stay in their parent's VS");
}

void
fork_gate_close(void)
{
	if (fork_fd >= 0)
		close(fork_fd);
	fork_fd = -1;
}
