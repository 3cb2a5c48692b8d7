// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Re-binding: moving a service's thread into the VS it now serves.
 *
 * The move is the expensive part of the gate, so nothing moves when the
 * thread already sits in the chosen VS. What a move takes is the VS's
 * cgroup handle's to decide (lib/cgroup-handle.c, per layout): the thread
 * alone, or its whole process, and whether the cgroup2 membership, which
 * decides whose sockets the thread creates (the socket gate's BPF sees
 * it), moves with it. Where it does not, that move - a whole-process one,
 * the slowest kind - is made lazily, when a bound thread calls
 * socket() for AF_INET, AF_INET6 or AF_UNIX (bind_cgroup2; a database of
 * protocol mysql knows a Unix client's VS by that cgroup2): a service that
 * never opens sockets never pays it. The accepted socket was already
 * classified.
 *
 * Threads are held by pidfd, never by bare TID: a cached TID whose pidfd
 * reports exit has been reused and is re-read.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "gate.h"
#include "lib/log.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL	/* Linux 6.9 */
#endif

#define NTHASH	256

static struct service_thread *thash[NTHASH];
static struct service_thread *reaped;	/* forgotten, not yet freed (thread_reap) */
static enum cg2_mode cg2_mode = CG2_LAZY;
static int have_pidfd_thread = 1;

void
bind_pidfd_thread(int on)
{
	have_pidfd_thread = on;
}
static uint64_t nmoves;

/* The last BIND_RING re-binding times, for the status socket and benchmarks. */
#define BIND_RING	4096
static uint32_t bind_us_ring[BIND_RING];
static uint64_t nbinds;
static uint64_t nfailed;	/* moves the kernel refused, for a reason other than a gone VS */

int
bind_init(enum cg2_mode mode)
{
	cg2_mode = mode;
	return 0;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void
bind_stats(uint64_t *count, uint64_t *failed, unsigned *p50, unsigned *p99, unsigned *max)
{
	static uint32_t tmp[BIND_RING];
	size_t n = nbinds < BIND_RING ? nbinds : BIND_RING;

	*count = nbinds;
	*failed = nfailed;
	*p50 = *p99 = *max = 0;
	if (!n)
		return;
	memcpy(tmp, bind_us_ring, n * sizeof(*tmp));
	qsort(tmp, n, sizeof(*tmp), cmp_u32);
	*p50 = tmp[n / 2];
	*p99 = tmp[n * 99 / 100];
	*max = tmp[n - 1];
}

static void
bind_record(uint64_t t0)
{
	uint64_t us = (now_ns() - t0) / 1000;

	bind_us_ring[nbinds++ % BIND_RING] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

uint64_t
bind_moves(void)
{
	return nmoves;
}

static pid_t
read_tgid(pid_t tid)
{
	char path[64];
	long tgid;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if ((r = read_field_long(path, "Tgid", &tgid)) < 0)
		return r == -ENODATA ? -EINVAL : r;
	return (pid_t)tgid;
}

/* The thread's start time (clock ticks since boot, /proc/TID/stat field
 * 22), 0 if it is gone. */
static uint64_t
start_time(pid_t tgid, pid_t tid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", tgid, tid);
	if (read_file(path, buf, sizeof(buf)) < 0 || !(p = strrchr(buf, ')')))
		return 0;
	/* after the command: field 3 (state) ... field 22 (starttime) */
	for (i = 3, p++; i < 22 && p; i++)
		p = strchr(p + 1, ' ');
	if (p && sscanf(p, " %llu", &t) != 1)
		t = 0;
	return t;
}

static int
open_pidfd(struct service_thread *th)
{
	if (have_pidfd_thread) {
		th->pidfd = pidfd_open(th->tid, PIDFD_THREAD);
		if (th->pidfd >= 0)
			return 0;
		if (errno != EINVAL)
			return -errno;
		have_pidfd_thread = 0;	/* before Linux 6.9: hold the process */
	}
	th->pidfd = pidfd_open(th->tgid, 0);
	return th->pidfd >= 0 ? 0 : -errno;
}

static int
pidfd_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

struct service_thread *
thread_find(pid_t tid)
{
	struct service_thread *th;

	for (th = thash[(unsigned)tid % NTHASH]; th; th = th->hnext)
		if (th->tid == tid)
			return th;
	return NULL;
}

struct service_thread *
thread_get(pid_t tid, int *is_new)
{
	struct service_thread **b = &thash[(unsigned)tid % NTHASH], *th;
	pid_t tgid;

	*is_new = 0;
	for (th = *b; th; th = th->hnext)
		if (th->tid == tid)
			break;
	if (th && !pidfd_exited(th->pidfd))
		return th;
	if ((tgid = read_tgid(tid)) < 0)
		return NULL;
	if (th)			/* TID reused by a new thread: the old one is reaped */
		thread_forget(th);
	if (!(th = calloc(1, sizeof(*th))))
		return NULL;
	th->tid = tid;
	th->sched_fd = -1;
	th->io_fd = -1;
	th->hnext = *b;
	*b = th;
	th->tgid = tgid;
	th->start = start_time(tgid, tid);
	th->pidfd = -1;
	if (open_pidfd(th) < 0) {
		thread_forget(th);
		return NULL;
	}
	*is_new = 1;
	return th;
}

/*
 * Forgotten threads are not freed here: what the layers above keep of them
 * (a fast path's direct waiter, a pending accept) is theirs to end, so they
 * wait in a list the shell empties (thread_reap()), and this file calls
 * nothing above it.
 */
void
thread_forget(struct service_thread *th)
{
	struct service_thread **pp = &thash[(unsigned)th->tid % NTHASH];

	for (; *pp; pp = &(*pp)->hnext)
		if (*pp == th) {
			*pp = th->hnext;
			break;
		}
	th->hnext = reaped;
	reaped = th;
}

struct service_thread *
thread_reap(void)
{
	struct service_thread *th = reaped;

	if (th)
		reaped = th->hnext;
	return th;
}

void
thread_free(struct service_thread *th)
{
	if (th->pidfd >= 0)
		close(th->pidfd);
	if (th->sched_fd >= 0)
		close(th->sched_fd);
	if (th->io_fd >= 0)
		close(th->io_fd);
	free(th);
}

void
thread_sweep(void)
{
	size_t i;

	for (i = 0; i < NTHASH; i++) {
		struct service_thread *th = thash[i], *next;

		for (; th; th = next) {
			next = th->hnext;
			/* Before Linux 6.9 the pidfd is the process's: a thread
			 * that ended in a live process is found here, by its
			 * start time, within a second; its id cannot come back
			 * that fast (the kernel hands out pids in turn, up to
			 * pid_max, 4,194,304 on 64-bit) */
			if (!th->waiter && (pidfd_exited(th->pidfd) ||
			    (!have_pidfd_thread && start_time(th->tgid, th->tid) != th->start)))
				thread_forget(th);
		}
	}
}

void
thread_foreach(void (*fn)(struct service_thread *, void *), void *arg)
{
	size_t i;
	struct service_thread *th;

	for (i = 0; i < NTHASH; i++)
		for (th = thash[i]; th; th = th->hnext)
			fn(th, arg);
}

int
thread_move_disturbs(const struct service_thread *th)
{
	const struct service_thread *o;
	size_t i;

	if (!cgh_moves_process())
		return 0;
	for (i = 0; i < NTHASH; i++)
		for (o = thash[i]; o; o = o->hnext)
			if (o != th && o->tgid == th->tgid && !o->waiter)
				return 1;
	return 0;
}

/* A move's outcome (r from the handle): counted, the helper kept warm. */
static int
moved(const struct gate_vs *v, pid_t pid, int r)
{
	if (r < 0) {
		/* a VS gone under us is the caller's to handle; anything else
		 * is counted, and told for the first few */
		if (r != -ENOENT && r != -ENODEV && nfailed++ < 10)
			log_warnx("cannot move %d into VS %s: %s", (int)pid, v->name, strerror(-r));
		return r;
	}
	nmoves++;
	rcu_warm_kick();
	return r;
}

static void
set_process(pid_t tgid, uint32_t bound, uint32_t cg2)
{
	size_t i;
	struct service_thread *th;

	for (i = 0; i < NTHASH; i++)
		for (th = thash[i]; th; th = th->hnext)
			if (th->tgid == tgid) {
				if (bound)
					th->bound = bound;
				th->cg2 = cg2;
			}
}

int
bind_thread(struct service_thread *th, struct gate_vs *v)
{
	uint64_t t0;
	int r;

	if (th->bound == v->id)
		return 0;
	t0 = now_ns();
	if ((r = moved(v, th->tid, cgh_move(&v->cg, th->tid, th->tgid))) < 0)
		return r;
	if (r == CGH_PROCESS) {		/* every thread of it, cgroup2 included */
		set_process(th->tgid, v->id, v->id);
	} else {
		th->bound = v->id;
		/* --cgroup2 always: the eager alternative, kept to measure the choice */
		if (cg2_mode == CG2_ALWAYS && th->cg2 != v->id && cgh_cgroup2_apart(&v->cg) &&
		    moved(v, th->tgid, cgh_move_cgroup2(&v->cg, th->tgid)) == 0)
			set_process(th->tgid, 0, v->id);
	}
	bind_record(t0);
	return 1;
}

int
bind_cgroup2(struct service_thread *th, struct gate_vs *v)
{
	int r;

	if (cg2_mode != CG2_LAZY || th->cg2 == v->id || !cgh_cgroup2_apart(&v->cg))
		return 0;
	if ((r = moved(v, th->tgid, cgh_move_cgroup2(&v->cg, th->tgid))) < 0)
		return r;
	set_process(th->tgid, 0, v->id);
	return 1;
}
