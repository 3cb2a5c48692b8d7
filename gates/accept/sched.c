// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --sched fifo (the default): the supervisor runs SCHED_FIFO at priority 1.
 *
 * Every hand-over waits for the supervisor. As an ordinary process it
 * competes for a CPU with the VSs it schedules, so when their own work
 * keeps every CPU busy, each notification waits for a CFS slice behind
 * them: milliseconds, against tens of microseconds when a CPU is free. A
 * cgroup weight would not do it: the supervisor's cgroup is the caller's
 * (vsctl run) or vsd's slice, shared with whatever else runs there, and a
 * weight only evens out CPU over periods far longer than one hand-over.
 * The lowest real-time priority runs it ahead of every CFS task and behind
 * every other real-time task (the kernel's own threads among them).
 *
 * A supervisor caught in a loop must not hold a CPU for good. Two bounds:
 * RLIMIT_RTTIME's soft limit sends SIGXCPU after RTTIME_US of CPU without
 * sleeping, and the handler drops us to SCHED_OTHER at once; the tick puts
 * us back after DEMOTED_NS (so a loop keeps a CPU at real-time priority for
 * at most RTTIME_US of each DEMOTED_NS). Under that, the kernel's real-time
 * throttling (kernel.sched_rt_runtime_us, 950 ms of every second by
 * default) leaves the other tasks of each CPU their share. The hard limit
 * stays as it was, so the service can put its soft limit back
 * (sched_child()). Taking SCHED_FIFO back needs CAP_SYS_NICE, which
 * --user keeps for that (drop_privileges()). SCHED_RESET_ON_FORK: the
 * service and everything it
 * starts run SCHED_OTHER at nice 0. So does the warm helper (rcu-warm.c),
 * which by default never runs: the no-op moves that keep cgroup moves off
 * RCU grace periods are ours, made in our class; with --warm helper-fifo it
 * makes them itself and takes our class and guard (sched_helper()).
 *
 * Where the kernel refuses real-time priority (no CAP_SYS_NICE; with
 * CONFIG_RT_GROUP_SCHED, a cpu cgroup with no real-time runtime, such as a
 * systemd slice), we say so once and take nice -20 instead, which helps
 * only against the tasks of our own cgroup. --sched off leaves us as
 * started.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>

#include "gate.h"
#include "lib/log.h"

#define SCHED_PRIO	1
#define RTTIME_US	200000		/* SIGXCPU after 200 ms without sleeping */
#define DEMOTED_NS	10000000000ull	/* back to SCHED_FIFO 10 s after a demotion */

static volatile sig_atomic_t demoted;
static uint64_t demoted_at;
static int rt;		/* we hold SCHED_FIFO, or will again after a demotion */
static struct rlimit rttime;	/* RLIMIT_RTTIME as we were started */
static const char *who = "the supervisor";

/* SIGXCPU: RTTIME_US spent without sleeping; a system call is safe here */
static void
on_xcpu(int sig)
{
	struct sched_param sp = { 0 };

	(void)sig;
	sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &sp);
	demoted = 1;
}

static int
promote(void)
{
	struct sched_param sp = { .sched_priority = SCHED_PRIO };
	/* the kernel raises the soft limit by 1 s at each SIGXCPU: set it again */
	struct rlimit rl = { RTTIME_US, rttime.rlim_max };

	if (setrlimit(RLIMIT_RTTIME, &rl) < 0)
		return -errno;
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) < 0)
		return -errno;
	return 0;
}

int
sched_supervisor(int on)
{
	struct sigaction sa = { .sa_handler = on_xcpu };
	struct sched_param sp = { 0 };
	int r;

	if (!on || getrlimit(RLIMIT_RTTIME, &rttime) < 0)
		return 0;
	if (rttime.rlim_max != RLIM_INFINITY && rttime.rlim_max < RTTIME_US) {
		log_warnx("RLIMIT_RTTIME's hard limit is under %u us: no real-time "
		    "priority for the supervisor", RTTIME_US);
		return -EPERM;
	}
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGXCPU, &sa, NULL) < 0)
		return -errno;
	if ((r = promote()) == 0) {
		rt = 1;
		return 0;
	}
	log_warnx("no real-time priority for the supervisor (%s%s): nice -20 instead, which "
	    "helps only within its cgroup", strerror(-r),
	    r == -EPERM ? "; CAP_SYS_NICE, or real-time runtime in its cpu cgroup" : "");
	if (sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &sp) < 0 ||
	    setpriority(PRIO_PROCESS, 0, -20) < 0)
		return -errno;
	return r;
}

void
sched_tick(uint64_t now)
{
	int r;

	if (!rt)
		return;
	if (demoted && !demoted_at) {
		demoted_at = now ? now : 1;
		log_warnx("%s ran %u ms without sleeping: SCHED_OTHER for %llu s",
		    who, RTTIME_US / 1000, DEMOTED_NS / 1000000000ull);
	}
	if (demoted_at && now - demoted_at >= DEMOTED_NS) {
		demoted = 0;
		demoted_at = 0;
		if ((r = promote()) < 0) {
			log_warnx("%s cannot take SCHED_FIFO again: %s", who, strerror(-r));
			rt = 0;
		}
	}
}

void
sched_child(void)
{
	if (rt)
		setrlimit(RLIMIT_RTTIME, &rttime);
}

int
sched_helper(void)
{
	sigset_t xcpu;
	int r;

	/* forked from us: our SIGXCPU handler, RLIMIT_RTTIME and state, and
	 * SCHED_OTHER (SCHED_RESET_ON_FORK) */
	who = "the warm helper";
	if (!rt)
		return -ENOENT;		/* --sched off, or nice -20 */
	demoted = 0;
	demoted_at = 0;
	sigemptyset(&xcpu);
	sigaddset(&xcpu, SIGXCPU);
	sigprocmask(SIG_UNBLOCK, &xcpu, NULL);
	if ((r = promote()) < 0) {
		log_warnx("no real-time priority for the warm helper (%s%s)", strerror(-r),
		    r == -EPERM ? "; CAP_SYS_NICE, or real-time runtime in the home VS's cpu cgroup" : "");
		rt = 0;
	}
	return r;
}
