// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CPU caps written by a second thread while many VSs are made (an apply
 * from scratch). Each write of a cap (v1 cpu.cfs_quota_us, v2 cpu.max)
 * makes the kernel check the bandwidth of every task group on the machine
 * (tg_set_cfs_bandwidth -> __cfs_schedulable), so with N VSs the caps cost
 * N^2/2 visits, a third of the CPU time of making 10,000 VSs. That walk
 * holds its own mutex and RCU, not cgroup_mutex, so it can run on another
 * CPU while this thread goes on making the next VSs' directories, which
 * do hold cgroup_mutex (benchmarks/results/rules-provider.md). The caller
 * opens the file and queues it with its value; cg_async_finish() waits for
 * the queue to drain and gives the first error.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"

struct cg_write_job {
	int	 fd;
	char	 val[32];
	char	 name[VS_NAME_MAX + 1];	/* the VS, for the error message */
};

struct cg_async {
	pthread_t	 thread;
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;
	struct cg_write_job *q;
	size_t		 head, tail, cap;
	int		 stop;
	int		 err;		/* the first write that failed: -errno */
	char		 err_name[VS_NAME_MAX + 1];
};

static void *
writer(void *arg)
{
	struct cg_async *a = arg;
	struct cg_write_job j;
	ssize_t n;
	int r;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		while (a->head == a->tail && !a->stop)
			pthread_cond_wait(&a->cond, &a->lock);
		if (a->head == a->tail)
			break;
		j = a->q[a->head++];
		pthread_mutex_unlock(&a->lock);
		n = write(j.fd, j.val, strlen(j.val));
		r = n < 0 ? -errno : (size_t)n != strlen(j.val) ? -EIO : 0;
		close(j.fd);
		pthread_mutex_lock(&a->lock);
		if (r < 0 && !a->err) {
			a->err = r;
			snprintf(a->err_name, sizeof(a->err_name), "%s", j.name);
		}
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

int
cg_async_start(struct cg_ctx *cg)
{
	sigset_t all, old;
	struct cg_async *a;
	int r;

	if (cg->async)
		return -EBUSY;
	if (!(a = calloc(1, sizeof(*a))))
		return -ENOMEM;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	/* The thread takes no signals: they stay with the thread that reads
	 * them (vsd's signalfd), whatever the mask when this is called. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&a->thread, NULL, writer, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		pthread_cond_destroy(&a->cond);
		pthread_mutex_destroy(&a->lock);
		free(a);
		return -r;
	}
	cg->async = a;
	return 0;
}

int
cg_async_write(struct cg_ctx *cg, int fd, const char *val, const char *name)
{
	struct cg_async *a = cg->async;
	struct cg_write_job *q;
	int r = 0;

	pthread_mutex_lock(&a->lock);
	if (a->head > 0 && a->head == a->tail)
		a->head = a->tail = 0;		/* drained: start over */
	if (a->tail == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 256;

		if (!(q = realloc(a->q, cap * sizeof(*q)))) {
			r = -ENOMEM;
			goto out;
		}
		a->q = q;
		a->cap = cap;
	}
	q = &a->q[a->tail++];
	q->fd = fd;
	snprintf(q->val, sizeof(q->val), "%s", val);
	snprintf(q->name, sizeof(q->name), "%s", name);
	pthread_cond_signal(&a->cond);
out:
	pthread_mutex_unlock(&a->lock);
	if (r < 0)
		close(fd);
	return r;
}

int
cg_async_finish(struct cg_ctx *cg)
{
	struct cg_async *a = cg->async;
	int r;

	if (!a)
		return 0;
	pthread_mutex_lock(&a->lock);
	a->stop = 1;
	pthread_cond_signal(&a->cond);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	if ((r = a->err) < 0)
		log_warnx("%s: set cpu cap: %s", a->err_name, strerror(-r));
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	free(a->q);
	free(a);
	cg->async = NULL;
	return r;
}
