// SPDX-License-Identifier: GPL-2.0-or-later
/* Which processes a client may have vsd move or kill: see guard.h. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/log.h"
#include "guard.h"
#include "services.h"
#include "vsd.h"

#define PF_KTHREAD_FLAG	0x00200000	/* include/linux/sched.h: PF_KTHREAD */
#define ANCESTRY_MAX	64		/* a deeper tree is not worth walking */

/*
 * The home VS a supervisor was started with: its --home option, from the
 * kernel's copy of its arguments (vsd-gate takes its options before "--").
 */
static void
home_of(pid_t pid, char *out, size_t len)
{
	char path[64], args[8192];
	const char *a, *end, *v = NULL;
	ssize_t n;
	int fd;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, args, sizeof(args) - 1);
	close(fd);
	if (n <= 0)
		return;
	args[n] = '\0';
	end = args + n;
	for (a = args; a < end && strcmp(a, "--") != 0; a += strlen(a) + 1) {
		if (strcmp(a, "--home") == 0 && a + strlen(a) + 1 < end)
			v = a + strlen(a) + 1;
		else if (strncmp(a, "--home=", 7) == 0)
			v = a + 7;
	}
	if (v && vs_name_valid(v))
		snprintf(out, len, "%s", v);
}

static int
pidfd_alive(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) == 0;
}

/*
 * The supervisor listening on the status socket of service name, as the
 * kernel names it (SO_PEERCRED: the pid that called listen()), held by a
 * pidfd. We do not wait for its answer: it may be waiting for ours (it asks
 * vsd for the VS table), and vsd serves one request at a time. We send a
 * request all the same, so that it does not wait for one either.
 */
static int
find_sup(struct vsd *d, const char *name, struct guard_sup *s)
{
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	int fd, r;

	if ((fd = svc_status_connect(d, name)) < 0)
		return fd;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (cr.uid != 0) {	/* only root can bind a gate; anyone else claims it */
		close(fd);
		log_warnx("%s: the status socket of service %s belongs to uid %u, not root; ignored",
			  __func__, name, (unsigned)cr.uid);
		return -EPERM;
	}
	/* while it still listens there: the pid is the supervisor's */
	s->pidfd = pidfd_open(cr.pid, 0);
	r = s->pidfd < 0 ? -errno : 0;
	svc_status_request(fd, "status", NULL);
	if (r < 0)
		return r;
	s->pid = cr.pid;
	snprintf(s->name, sizeof(s->name), "%.*s", VS_NAME_MAX, name);
	home_of(cr.pid, s->home, sizeof(s->home));
	return 0;
}

int
guard_load(struct vsd *d, struct guard *g)
{
	char dir[PATH_MAX], name[NAME_MAX + 1];
	struct guard_sup *nv;
	struct dirent *de;
	DIR *dp;
	size_t len;
	int r;

	memset(g, 0, sizeof(*g));
	if ((r = svc_status_path(d, NULL, dir, sizeof(dir))) < 0)
		return r;
	if (!(dp = opendir(dir)))
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(dp))) {
		len = strlen(de->d_name);
		if (len <= 5 || strcmp(de->d_name + len - 5, ".sock") != 0 || len - 5 > VS_NAME_MAX)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(len - 5), de->d_name);
		if (!vs_name_valid(name))
			continue;
		if (!(nv = realloc(g->v, (g->n + 1) * sizeof(*nv)))) {
			closedir(dp);
			guard_free(g);
			return -ENOMEM;
		}
		g->v = nv;
		if (find_sup(d, name, &g->v[g->n]) == 0)
			g->n++;
	}
	closedir(dp);
	return 0;
}

void
guard_free(struct guard *g)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		close(g->v[i].pidfd);
	free(g->v);
	g->v = NULL;
	g->n = 0;
}

static const struct guard_sup *
sup_of(const struct guard *g, pid_t pid)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (g->v[i].pid == pid && pidfd_alive(g->v[i].pidfd))
			return &g->v[i];
	return NULL;
}

enum guard_kind
guard_what(const struct vsd *d, const struct guard *g, pid_t pid, const struct guard_sup **sup)
{
	unsigned flags;
	pid_t p = pid;
	int depth;

	*sup = NULL;
	if (pid == 1)
		return GUARD_INIT;
	if (pid == getpid() || (d->cg.leaf_pid && pid == d->cg.leaf_pid))
		return GUARD_VSD;
	if (proc_stat(pid, NULL, &flags) < 0)
		return GUARD_GONE;
	if (flags & PF_KTHREAD_FLAG)
		return GUARD_KTHREAD;
	if ((*sup = sup_of(g, pid)))
		return GUARD_SUPERVISOR;
	/* a service's process: a descendant of its supervisor, their subreaper */
	for (depth = 0; depth < ANCESTRY_MAX && (p = proc_parent(p)) > 1; depth++)
		if ((*sup = sup_of(g, p)))
			return GUARD_SERVICE;
	return GUARD_NONE;
}

int
guard_owns(pid_t pid, uid_t uid, uid_t *other)
{
	uid_t u[4];
	int i;

	*other = uid;
	if (uid == 0)
		return 1;
	if (proc_uids(pid, u) < 0)
		return -ESRCH;
	for (i = 0; i < 4; i++)
		if (u[i] != uid) {
			*other = u[i];
			return 0;
		}
	return 1;
}

int
guard_owner(pid_t pid, uid_t uid, const char *cmd, struct reply *rep)
{
	uid_t other;
	int r = guard_owns(pid, uid, &other);

	if (r < 0)
		return reply_err(rep, -ESRCH, "%s: no process %d", cmd, (int)pid);
	if (r == 0)
		return reply_err(rep, -EPERM, "%s: process %d belongs to uid %u; uid %u may "
				 "only act on its own processes", cmd, (int)pid, (unsigned)other,
				 (unsigned)uid);
	return 0;
}

int
guard_check(const struct vsd *d, const struct guard *g, pid_t pid, uid_t uid,
    const char *cmd, struct reply *rep)
{
	const struct guard_sup *s;

	switch (guard_what(d, g, pid, &s)) {
	case GUARD_NONE:
		return guard_owner(pid, uid, cmd, rep);
	case GUARD_GONE:
		return reply_err(rep, -ESRCH, "%s: no process %d", cmd, (int)pid);
	case GUARD_INIT:
		return reply_err(rep, -EPERM, "%s: pid %d is init; vsd leaves it where it is",
				 cmd, (int)pid);
	case GUARD_KTHREAD:
		return reply_err(rep, -EPERM, "%s: pid %d is a kernel thread", cmd, (int)pid);
	case GUARD_VSD:
		return reply_err(rep, -EPERM, "%s: pid %d is vsd%s", cmd, (int)pid,
				 pid == getpid() ? " itself" : "'s own (the keeper of its scope)");
	case GUARD_SUPERVISOR:
		return reply_err(rep, -EPERM, "%s: pid %d is the supervisor (vsd-gate) of "
				 "service %s", cmd, (int)pid, s->name);
	case GUARD_SERVICE:
		return reply_err(rep, -EPERM, "%s: pid %d belongs to service %s (supervisor "
				 "pid %d), which the accept gate binds to VSs itself", cmd,
				 (int)pid, s->name, (int)s->pid);
	}
	return -EINVAL;
}
