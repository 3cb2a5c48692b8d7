// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Keeping cgroup migrations cheap while the gate is re-binding.
 *
 * Every write to a "tasks" or "cgroup.procs" file takes the global
 * cgroup_threadgroup_rwsem for writing. It is a per-CPU rwsem: readers (fork,
 * exit, exec) go lock-free through rcu_sync, and a writer first switches
 * them to the slow path, which waits for an RCU grace period - unless
 * another writer did so less than about a grace period ago (rcu_sync keeps
 * the slow path for one more grace period after the last writer leaves:
 * kernel/rcu/sync.c). Under the insulation benchmark's load the gate moved
 * the FastCGI server 50 times a second, spaced irregularly, and one move in
 * twenty or so found rcu_sync idle and slept for a grace period: 15-40 ms,
 * during which the one server thread serves nobody (rebind p99 19.7 ms,
 * 10% of the CPU idle; benchmarks/results/insulation.md).
 *
 * The kernel's remedy is the "favordynmods" mount option, a host-wide
 * setting that is the operator's, not ours. Ours: while the gate is moving
 * threads (a move in the last second), a small helper process does a no-op
 * migration every WARM_PERIOD_MS: it writes its own PID into the home VS's
 * cgroup, where it already is. That keeps rcu_sync on its slow path, so
 * the gate's own moves never wait for a grace period; it costs a few
 * microseconds per write (0.1-0.2% of a CPU while active), and while it is
 * active every fork and exit on the host takes the rwsem's slow path, as
 * with favordynmods. After a second without moves the helper sleeps.
 *
 * A process, not a thread: on a pure cgroup2 host a thread cannot sit in a
 * cgroup of its own, and the helper must write inside our subtree (the home
 * VS), not into whatever cgroup the supervisor was started in. It dies with
 * the supervisor (PR_SET_PDEATHSIG) and holds none of its descriptors.
 *
 * Who writes (--warm; benchmarks/results/rebind-saturated.md). A no-op move
 * must come on time, and when the VSs' own work keeps every CPU busy an
 * ordinary helper does not: it waits for a CPU behind them (26-61% of its
 * writes came over 10 ms late), rcu_sync goes idle and the next move waits
 * a grace period, which is long then too (the RCU kthread is an ordinary
 * task). Worse, a starved helper queued on cgroup_mutex in its write holds
 * up the real-time supervisor's move until it gets a CPU (perf showed a
 * move held up so, the page above). So by default (supervisor) the supervisor
 * itself makes the no-op moves, from its event loop, in its own class
 * (sched.c): it writes the helper's pid into the home VS's file, where the
 * helper already is, and the helper never runs. The helper's own writes
 * stay as options to measure the choice: "helper" (SCHED_OTHER) and
 * "helper-fifo" (the supervisor's class and guard, sched_helper(); under
 * CONFIG_RT_GROUP_SCHED only where the home VS's cpu cgroup has real-time
 * runtime, which a new cgroup has not). What the default costs: now and
 * then a no-op move waits in the kernel (a grace period that ended within
 * the 5 ms, or cgroup_mutex held by another), and the supervisor's loop
 * with it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gate.h"
#include "lib/log.h"

#define WARM_PERIOD_MS	5	/* well under one grace period */
#define WARM_PERIOD_NS	(WARM_PERIOD_MS * 1000000ull)
#define WARM_ACTIVE_NS	1000000000ull	/* stay active 1 s after a move */
#define WARM_LATE_NS	10000000ull	/* a gap rcu_sync may not bridge */
#define WARM_SLOW_NS	1000000ull	/* a write that waited in the kernel */

struct rcu_warm_shared {
	_Atomic uint64_t active_until;	/* CLOCK_MONOTONIC ns */
	_Atomic int	 sleeping;	/* the helper waits on the pipe */
	_Atomic uint64_t writes;	/* no-op migrations done */
	_Atomic uint64_t late;		/* ... more than WARM_LATE_NS after the last */
	_Atomic uint64_t slow;		/* ... that took over WARM_SLOW_NS */
};

static struct rcu_warm_shared *sh;
static enum warm_mode mode;
static int wake_fd = -1;
static pid_t rcu_warm_pid;
static int rcu_warm_pidfd = -1;	/* the pid alone could be reused */
/* WARM_SUPERVISOR: the home VS's file, the helper's pid, the next write */
static int sup_fd = -1;
static char sup_buf[16];
static int sup_len;
static uint64_t sup_last, sup_next;

/* --warm on: the supervisor writes (see the top of this file) */
#define WARM_DEFAULT	WARM_SUPERVISOR

/* One no-op move of the process in buf, counted; last: the previous write
 * in this active stretch (0: none) */
static void
warm_write(int fd, const char *buf, int n, uint64_t last)
{
	uint64_t t0 = now_ns(), t1;

	if (pwrite(fd, buf, (size_t)n, 0) != n)
		return;
	t1 = now_ns();
	atomic_fetch_add(&sh->writes, 1);
	if (last && t0 - last > WARM_LATE_NS)
		atomic_fetch_add(&sh->late, 1);
	if (t1 - t0 > WARM_SLOW_NS)
		atomic_fetch_add(&sh->slow, 1);
}

static void __attribute__((noreturn))
rcu_warm_loop(const char *file, int rfd)
{
	uint64_t last = 0;
	char buf[16];
	int fd, n;

	n = snprintf(buf, sizeof(buf), "%d", (int)getpid());
	if ((fd = open(file, O_WRONLY | O_CLOEXEC)) < 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
		log_warn("warm: join %s", file);
		_exit(1);
	}
	/* after the join: a real-time task cannot join a cpu cgroup without
	 * real-time runtime (CONFIG_RT_GROUP_SCHED) */
	if (mode == WARM_HELPER_FIFO)
		sched_helper();
	for (;;) {
		struct timespec ts = { 0, WARM_PERIOD_MS * 1000000L };
		uint64_t now = now_ns();
		char c;

		if (mode == WARM_HELPER_FIFO)
			sched_tick(now);
		if (mode != WARM_SUPERVISOR && now < atomic_load(&sh->active_until)) {
			/* a no-op move: we are in this cgroup already */
			warm_write(fd, buf, n, last);
			last = now_ns();
			nanosleep(&ts, NULL);
			continue;
		}
		last = 0;
		atomic_store(&sh->sleeping, 1);
		/* a move between our check and the flag: its kick may have missed us */
		if (mode != WARM_SUPERVISOR && now_ns() < atomic_load(&sh->active_until)) {
			atomic_store(&sh->sleeping, 0);
			continue;
		}
		if (read(rfd, &c, 1) <= 0 && errno != EINTR)
			_exit(0);	/* the supervisor is gone */
		atomic_store(&sh->sleeping, 0);
	}
}

int
rcu_warm_start(const struct gate_vs *home, enum warm_mode m)
{
	char file[4096];
	pid_t parent = getpid();
	int p[2], r;

	mode = m == WARM_ON ? WARM_DEFAULT : m;
	if (mode == WARM_OFF)
		return 0;
	/* the home VS's handle says which file moves the helper's one thread */
	if ((r = cgh_warm_file(&home->cg, file, sizeof(file))) < 0)
		return r;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		sh = NULL;
		return -errno;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		r = -errno;
		goto fail;
	}
	if (mode == WARM_SUPERVISOR && (sup_fd = open(file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		r = -errno;
		log_warn("warm: %s", file);
		close(p[0]);
		close(p[1]);
		goto fail;
	}
	if ((rcu_warm_pid = fork()) < 0) {
		r = -errno;
		close(p[0]);
		close(p[1]);
		goto fail;
	}
	if (rcu_warm_pid == 0) {
		sigset_t all;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		prctl(PR_SET_NAME, "vsd-gate-warm");
		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		/* hold nothing of the supervisor's: no listener, no notify fd */
		if (dup2(p[0], 3) < 0)
			_exit(1);
		syscall(SYS_close_range, 4, ~0U, 0);
		rcu_warm_loop(file, 3);
	}
	close(p[0]);
	wake_fd = p[1];
	rcu_warm_pidfd = pidfd_open(rcu_warm_pid, 0);
	fcntl(wake_fd, F_SETFL, O_NONBLOCK);
	sup_len = snprintf(sup_buf, sizeof(sup_buf), "%d", (int)rcu_warm_pid);
	return 0;
fail:
	if (sup_fd >= 0)
		close(sup_fd);
	sup_fd = -1;
	munmap(sh, sizeof(*sh));
	sh = NULL;
	return r;
}

void
rcu_warm_kick(void)
{
	uint64_t now;

	if (!sh || mode == WARM_OFF)
		return;
	now = now_ns();
	atomic_store(&sh->active_until, now + WARM_ACTIVE_NS);
	if (mode == WARM_SUPERVISOR) {
		/* the move itself was a write */
		sup_last = now;
		sup_next = now + WARM_PERIOD_NS;
		return;
	}
	if (atomic_exchange(&sh->sleeping, 0) && write(wake_fd, "w", 1) < 0 && errno != EAGAIN)
		log_warn("warm: wake");
}

static int
helper_alive(void)
{
	struct pollfd pf = { .fd = rcu_warm_pidfd, .events = POLLIN };

	/* 0 once it has exited (it could not join the home VS, say) */
	return sh && rcu_warm_pidfd >= 0 && poll(&pf, 1, 0) == 0;
}

int
rcu_warm_timeout(uint64_t now)
{
	if (mode != WARM_SUPERVISOR || !sh || now >= atomic_load(&sh->active_until))
		return -1;
	return now >= sup_next ? 0 : (int)((sup_next - now + 999999) / 1000000);
}

void
rcu_warm_run(uint64_t now)
{
	if (mode != WARM_SUPERVISOR || !sh || now < sup_next ||
	    now >= atomic_load(&sh->active_until))
		return;
	/* the helper's pid, as long as it is ours: its exit is seen here, in
	 * the thread that reaps it, so the pid cannot be another's yet */
	if (!helper_alive()) {
		mode = WARM_OFF;
		return;
	}
	warm_write(sup_fd, sup_buf, sup_len, sup_last);
	sup_last = now_ns();
	sup_next = sup_last + WARM_PERIOD_NS;
}

pid_t
rcu_warm_stats(uint64_t *writes, uint64_t *late, uint64_t *slow)
{
	*writes = sh ? atomic_load(&sh->writes) : 0;
	*late = sh ? atomic_load(&sh->late) : 0;
	*slow = sh ? atomic_load(&sh->slow) : 0;
	return helper_alive() ? rcu_warm_pid : 0;
}
