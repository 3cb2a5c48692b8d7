// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Threads that ended, learnt as they end rather than asked at each accept.
 * A notification names its thread by TID alone, and a TID comes back once
 * the kernel's pids have gone round (pid_max is 32,768 on small machines),
 * so a thread the gate knows by that TID must be the one that called: a
 * poll(2) of its pidfd per accept. Instead, each thread's pidfd
 * (PIDFD_THREAD, Linux 6.9+: readable once that thread has ended, or has
 * exec'd as a non-leader thread and so given up its TID) sits in one epoll
 * descriptor in the supervisor's quiet set, and the loop forgets the
 * threads that ended before it receives the next notification
 * (gate_threads_ended()).
 *
 * Why that is enough. The kernel wakes a pidfd's waiters before it frees
 * the TID, so a thread that gets the TID again is created after our epoll
 * is readable. The loop's poll() looks at the notification descriptor
 * before the quiet set, so if a notification was pending when it looked,
 * any end that came before that notification shows in the same poll(). The
 * notification we then receive must be one that was pending: the kernel
 * numbers a filter's notifications in turn and hands them out oldest
 * first, so one numbered right after the last we received was made no
 * later than the one poll() saw (gate.c, in_turn). Any other one (a
 * notification was withdrawn meanwhile, by a signal), and any thread whose
 * pidfd is its process's (before Linux 6.9), is checked by its pidfd as
 * before (thread_get()).
 */
#include "config.h"

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "gate.h"

static int efd = -1;

int
thread_exit_fd(void)
{
	if (efd < 0)
		efd = epoll_create1(EPOLL_CLOEXEC);
	return efd;
}

void
thread_watch(struct service_thread *th)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u32 = (uint32_t)th->tid };

	/* only once the shell polls efd (it asked for it) */
	if (efd >= 0 && th->pidfd_thread && epoll_ctl(efd, EPOLL_CTL_ADD, th->pidfd, &ev) == 0)
		th->exit_watch = 1;
}

struct service_thread *
thread_watched(pid_t tid)
{
	struct service_thread *th = thread_find(tid);

	return th && th->exit_watch ? th : NULL;
}

void
thread_exits(void)
{
	struct epoll_event ev[16];
	int n, i;

	if (efd < 0)
		return;
	do {
		n = epoll_wait(efd, ev, (int)ARRAY_SIZE(ev), 0);
		for (i = 0; i < n; i++) {
			struct service_thread *th = thread_find((pid_t)ev[i].data.u32);

			/* the event may be a forgotten thread's, whose pidfd a
			 * listener still holds (listener_own()): ask this one's */
			if (th && pidfd_exited(th->pidfd))
				thread_forget(th);
		}
	} while (n == (int)ARRAY_SIZE(ev));
}
