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
#define WARM_ACTIVE_NS	1000000000ull	/* stay active 1 s after a move */

struct rcu_warm_shared {
	_Atomic uint64_t active_until;	/* CLOCK_MONOTONIC ns */
	_Atomic int	 sleeping;	/* the helper waits on the pipe */
	_Atomic uint64_t writes;	/* no-op migrations done */
};

static struct rcu_warm_shared *sh;
static int wake_fd = -1;
static pid_t rcu_warm_pid;
static int rcu_warm_pidfd = -1;	/* the pid alone could be reused */

static void __attribute__((noreturn))
rcu_warm_loop(const char *file, int rfd)
{
	char buf[16];
	int fd, n;

	n = snprintf(buf, sizeof(buf), "%d", (int)getpid());
	if ((fd = open(file, O_WRONLY | O_CLOEXEC)) < 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
		log_warn("warm: join %s", file);
		_exit(1);
	}
	for (;;) {
		struct timespec ts = { 0, WARM_PERIOD_MS * 1000000L };
		char c;

		if (now_ns() < atomic_load(&sh->active_until)) {
			/* a no-op move: we are in this cgroup already */
			if (pwrite(fd, buf, (size_t)n, 0) == n)
				atomic_fetch_add(&sh->writes, 1);
			nanosleep(&ts, NULL);
			continue;
		}
		atomic_store(&sh->sleeping, 1);
		/* a move between our check and the flag: its kick may have missed us */
		if (now_ns() < atomic_load(&sh->active_until)) {
			atomic_store(&sh->sleeping, 0);
			continue;
		}
		if (read(rfd, &c, 1) <= 0 && errno != EINTR)
			_exit(0);	/* the supervisor is gone */
		atomic_store(&sh->sleeping, 0);
	}
}

int
rcu_warm_start(const struct gate_vs *home)
{
	char file[4096];
	pid_t parent = getpid();
	int p[2], r;

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
	return 0;
fail:
	munmap(sh, sizeof(*sh));
	sh = NULL;
	return r;
}

void
rcu_warm_kick(void)
{
	if (!sh)
		return;
	atomic_store(&sh->active_until, now_ns() + WARM_ACTIVE_NS);
	if (atomic_exchange(&sh->sleeping, 0) && write(wake_fd, "w", 1) < 0 && errno != EAGAIN)
		log_warn("warm: wake");
}

pid_t
rcu_warm_stats(uint64_t *writes)
{
	struct pollfd pf = { .fd = rcu_warm_pidfd, .events = POLLIN };

	*writes = sh ? atomic_load(&sh->writes) : 0;
	/* 0 once it has exited (it could not join the home VS, say) */
	if (!sh || rcu_warm_pidfd < 0 || poll(&pf, 1, 0) != 0)
		return 0;
	return rcu_warm_pid;
}
