// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The database mode on pure cgroup v2: a threaded subtree under the
 * service's cgroup. There one process's threads cannot sit in different
 * domain cgroups, but they can sit in different cgroups of one threaded
 * subtree, where the cpu controller works. So the cgroup the service runs
 * in (its home VS's, under vsd's delegated scope) becomes the subtree's
 * root ("domain threaded"):
 *
 *   <home VS>/            cpu in cgroup.subtree_control; memory, pids here
 *   <home VS>/home/       threaded: the service's process, its own threads
 *   <home VS>/<VS name>/  threaded, made on first use: the threads serving
 *                         a connection of that VS (cgroup.threads)
 *
 * Each child copies its VS's cpu.weight and cpu.max (vsd's own mapping of
 * share and cap; cpu.max lowered to the VS's db-cpu cap, with its db-burst
 * as cpu.max.burst, dbcap.c), again at every push of the VS table; a child whose VS
 * is gone sends its threads home and is removed, and so is the tree when
 * the service stops. The cost: the children share the home VS's cpu
 * weight at the level above, and memory stays a domain controller at the
 * root, so a VS's queries are scheduled and counted in its child but their
 * memory stays with the service. When the tree is used is the cgroup
 * handle's to say (cgh_moves_process()); its files are written by
 * lib/cgroup-threaded.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate.h"
#include "dbcap.h"
#include "dbtree.h"
#include "lib/cgroup-handle.h"
#include "lib/log.h"

#define DBTREE_HOME	"home"
#define DBTREE_MAX	256

struct child {
	uint32_t vs_id;		/* 0: free slot */
	char	 name[VS_NAME_MAX + 4];
	int	 dfd;
};

static int rootfd = -1;
static int homefd = -1;
static struct child kids[DBTREE_MAX];

/* A threaded child NAME of the root, made if missing. */
static int
make_child(const char *name)
{
	return cg_threaded_child(rootfd, name);
}

/* cpu.weight and cpu.max as the VS's own cgroup has them, cpu.max lowered
 * to its db-cpu cap with its burst (dbcap.c). */
static void
copy_cpu(int fd, const struct gate_vs *v)
{
	struct cg_bw bw;
	uint64_t q, p;

	if (!v)
		return;
	cgh_cpu_cap(&v->cg, &q, &p);
	dbcap_bw(v, q, p, &bw);
	cg_threaded_copy_cpu(fd, &v->cg, &bw);
}

int
dbtree_start(pid_t tgid, const struct gate_vs *home)
{
	int r;

	if (rootfd >= 0)
		dbtree_stop();
	if ((rootfd = cg_threaded_root(tgid)) < 0) {
		r = rootfd;
		goto fail;
	}
	if ((homefd = make_child(DBTREE_HOME)) < 0) {
		r = homefd;
		goto fail;
	}
	if ((r = cg_threaded_cpu(rootfd, 1)) < 0)
		goto fail;
	copy_cpu(homefd, home);
	if ((r = cg_threaded_join(homefd, tgid)) < 0)
		goto fail;
	return 0;
fail:
	log_warnx("database mode: threaded subtree for %d: %s", (int)tgid, strerror(-r));
	dbtree_stop();
	return r;
}

static struct child *
child_of(const struct gate_vs *v, int make)
{
	struct child *c, *free_slot = NULL;
	int fd;

	for (c = kids; c < kids + DBTREE_MAX; c++) {
		if (c->vs_id == v->id)
			return c;
		if (!c->vs_id && !free_slot)
			free_slot = c;
	}
	if (!make || !free_slot)
		return NULL;
	/* a VS named like the home child gets a name of its own */
	snprintf(free_slot->name, sizeof(free_slot->name), "%s%s",
	    strcmp(v->name, DBTREE_HOME) == 0 ? "vs-" : "", v->name);
	if ((fd = make_child(free_slot->name)) < 0) {
		log_warnx("database mode: cgroup %s: %s", free_slot->name, strerror(-fd));
		return NULL;
	}
	free_slot->vs_id = v->id;
	free_slot->dfd = fd;
	copy_cpu(fd, v);
	return free_slot;
}

static int
write_tid(int dfd, pid_t tid)
{
	return cg_threaded_move(dfd, tid);
}

int
dbtree_move(struct service_thread *th, const struct gate_vs *v, uint32_t home)
{
	struct child *c = NULL;
	int r;

	if (rootfd < 0)
		return -ENOENT;
	if (th->bound == v->id)
		return 0;
	if (v->id != home && !(c = child_of(v, 1)))
		return -ENOENT;
	if ((r = write_tid(c ? c->dfd : homefd, th->tid)) < 0)
		return r;
	th->bound = v->id;
	return 1;
}

/* Send every thread of C home, and remove it. */
static void
drop_child(struct child *c, void (*gone)(pid_t tid, void *arg), void *arg)
{
	char buf[8192], *p, *end;
	long tid;

	if (cg_threaded_tids(c->dfd, buf, sizeof(buf)) >= 0)
		for (p = buf; (tid = strtol(p, &end, 10)) > 0 && end != p; p = end) {
			if (homefd >= 0)
				write_tid(homefd, (pid_t)tid);
			if (gone)
				gone((pid_t)tid, arg);
		}
	close(c->dfd);
	if (unlinkat(rootfd, c->name, AT_REMOVEDIR) < 0)
		log_warnx("database mode: remove cgroup %s: %s", c->name, strerror(errno));
	memset(c, 0, sizeof(*c));
}

void
dbtree_sync(struct vs_table *t, uint32_t home, void (*gone)(pid_t tid, void *arg), void *arg)
{
	struct child *c;
	struct gate_vs *v;

	if (rootfd < 0)
		return;
	copy_cpu(homefd, vs_table_find(t, home));
	for (c = kids; c < kids + DBTREE_MAX; c++) {
		if (!c->vs_id)
			continue;
		if ((v = vs_table_find(t, c->vs_id)))
			copy_cpu(c->dfd, v);
		else
			drop_child(c, gone, arg);
	}
}

void
dbtree_stop(void)
{
	struct child *c;

	for (c = kids; c < kids + DBTREE_MAX; c++)
		if (c->vs_id)
			drop_child(c, NULL, NULL);
	if (homefd >= 0) {
		close(homefd);
		homefd = -1;
		/* fails while the service's process is still in it: it is left
		 * to be reused at the next start */
		unlinkat(rootfd, DBTREE_HOME, AT_REMOVEDIR);
	}
	if (rootfd >= 0) {
		cg_threaded_cpu(rootfd, 0);
		close(rootfd);
		rootfd = -1;
	}
}

int
dbtree_on(void)
{
	return rootfd >= 0;
}
