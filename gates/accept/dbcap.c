// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The database mode's cap: the rule file's "db-cpu P%" holds the CPU a
 * database service's threads spend serving a VS's connections to P% of the
 * machine, and "db-burst D" lets them bank up to D of CPU time while below
 * it and spend it above (the kernel's CFS burst). The VS's own processes
 * are not held by it, and the VS's own cap ("cpu-max") still applies to its
 * queries: the lower of the two does.
 *
 * Where the threads run while capped:
 * - pure cgroup v2: in the VS's threaded child under the service's cgroup
 *   (dbtree.c), whose cpu.max and cpu.max.burst are set from dbcap_bw().
 * - hybrid hosts: uncapped VSs' queries run in the VS's own cgroups, as
 *   rebind.c moves threads. A capped VS's run in a capped child under the
 *   service's home VS, made on first use (lib/cgroup-capped.c):
 *
 *     <home VS>/db.<service>/<VS>   the VS's weight, bandwidth as below
 *
 *   so the VS's other work is not held by the database's cap, and the
 *   children together never get more than the service's cgroup: CFS
 *   bandwidth is hierarchical, and a child's quota is lowered to its
 *   parent's rate. The VS's usage still shows its queries.
 *
 * The period is the kernel's default, 100 ms, or 1 s with a burst: the
 * kernel takes a burst of at most one period's quota, so the longer period
 * is what lets a burst of a second's worth of the cap through; a longer
 * burst is lowered to that and logged once.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate.h"
#include "dbcap.h"
#include "lib/cgroup-handle.h"
#include "lib/log.h"

#define DBCAP_MAX	256
#define PERIOD_US	100000ull
#define PERIOD_BURST_US	1000000ull	/* the kernel's longest period */

void
dbcap_bw(const struct gate_vs *v, uint64_t vq, uint64_t vp, struct cg_bw *bw)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t q;

	bw->quota = vq;
	bw->period = vp ? vp : PERIOD_US;
	bw->burst = 0;
	if (!v->db_cap_bp)
		return;
	bw->period = v->db_burst_us ? PERIOD_BURST_US : PERIOD_US;
	q = cg_quota_us(v->db_cap_bp, ncpu > 0 ? (unsigned)ncpu : 1) * (bw->period / PERIOD_US);
	if (vq && vp && vq * bw->period / vp < q)	/* the VS's own cap is lower */
		q = vq * bw->period / vp;
	bw->quota = q;
	bw->burst = v->db_burst_us < q ? v->db_burst_us : q;
	if (bw->burst < v->db_burst_us) {
		static uint32_t told;

		if (told != v->id)
			log_warnx("database mode: %s: db-burst %" PRIu64 " ms is over a second of "
				  "its cap, lowered to %" PRIu64 " ms", v->name, v->db_burst_us / 1000,
				  bw->burst / 1000);
		told = v->id;
	}
}

struct kid {
	uint32_t vs_id;		/* 0: free slot */
	char	 name[VS_NAME_MAX + 1];
	int	 dfd;
};

static int parentfd = -1;	/* the home VS's v1 cpu cgroup */
static int rootfd = -1;		/* its child db.<service> */
static uint32_t root_home;
static char rootname[VS_NAME_MAX + 8];
static struct kid kids[DBCAP_MAX];

/* the VS's weight; its bandwidth, within the service's rate */
static void
limits(struct kid *k, const struct gate_vs *v)
{
	struct cg_bw bw;
	uint64_t vq, vp;

	cgh_cpu_cap(&v->cg, &vq, &vp);
	dbcap_bw(v, vq, vp, &bw);
	cg_capped_limits(k->dfd, parentfd, &v->cg, &bw);
}

static int
open_root(const struct gate_vs *home, const char *svc)
{
	int r;

	if (rootfd >= 0 && root_home == home->id)
		return 0;
	dbcap_stop();
	snprintf(rootname, sizeof(rootname), "db.%s", svc ? svc : "service");
	if ((r = cg_capped_root(&home->cg, rootname, &parentfd)) < 0) {
		if (r != -ENOENT)	/* ENOENT: home has no cgroup of that kind */
			log_warnx("database mode: cgroup of %s, %s: %s", home->name, rootname,
				  strerror(-r));
		return r;
	}
	rootfd = r;
	root_home = home->id;
	return 0;
}

static struct kid *
kid_of(const struct gate_vs *v, int make)
{
	struct kid *k, *free_slot = NULL;

	for (k = kids; k < kids + DBCAP_MAX; k++) {
		if (k->vs_id == v->id)
			return k;
		if (!k->vs_id && !free_slot)
			free_slot = k;
	}
	if (!make || !free_slot)
		return NULL;
	if ((free_slot->dfd = cg_capped_child(rootfd, v->name)) < 0) {
		log_warnx("database mode: cgroup %s/%s: %s", rootname, v->name,
			  strerror(-free_slot->dfd));
		free_slot->dfd = 0;
		return NULL;
	}
	free_slot->vs_id = v->id;
	snprintf(free_slot->name, sizeof(free_slot->name), "%s", v->name);
	limits(free_slot, v);
	return free_slot;
}

int
dbcap_move(struct service_thread *th, struct gate_vs *v, struct gate_vs *home,
	   const char *svc)
{
	struct kid *k;
	int r;

	if (th->bound == v->id)
		return 0;
	if (!home || (r = open_root(home, svc)) < 0)
		return home ? r : -ENOENT;
	if (!(k = kid_of(v, 1)))
		return -ENOENT;
	if ((r = cg_capped_move(k->dfd, &v->cg, th->tid)) < 0)
		return r;
	th->bound = v->id;
	return 1;
}

/* Every thread of k out (to v's own cgroup, or home's if v is gone), and k removed. */
static void
drop_kid(struct kid *k, struct gate_vs *v, struct gate_vs *home,
	 void (*gone)(pid_t tid, void *arg), void *arg)
{
	char buf[8192], *p, *end;
	struct service_thread *th;
	long tid;

	if (cg_capped_tids(k->dfd, buf, sizeof(buf)) >= 0)
		for (p = buf; (tid = strtol(p, &end, 10)) > 0 && end != p; p = end) {
			th = thread_find((pid_t)tid);
			if (v && th) {
				th->bound = 0;
				bind_thread(th, v);
			} else if (home) {
				cgh_move(&home->cg, (pid_t)tid, th ? th->tgid : 0);
				if (gone)
					gone((pid_t)tid, arg);
			}
		}
	close(k->dfd);
	if (unlinkat(rootfd, k->name, AT_REMOVEDIR) < 0)
		log_warnx("database mode: remove cgroup %s/%s: %s", rootname, k->name,
			  strerror(errno));
	memset(k, 0, sizeof(*k));
}

struct place_ctx {
	struct gate_vs *v;
	struct gate_vs *home;
	const char *svc;
	pid_t	 tgid;
};

/* A thread serving a VS whose cap came: into its child now, not at its next read. */
static void
place_one(struct service_thread *th, void *arg)
{
	struct place_ctx *x = arg;

	if (th->tgid != x->tgid || th->bound != x->v->id)
		return;
	th->bound = 0;
	dbcap_move(th, x->v, x->home, x->svc);
}

void
dbcap_sync(struct vs_table *t, struct gate_vs *home, pid_t tgid, const char *svc,
	   void (*gone)(pid_t tid, void *arg), void *arg)
{
	struct place_ctx x = { .home = home, .svc = svc, .tgid = tgid };
	struct gate_vs *v;
	struct kid *k;
	size_t i;

	if (!home)
		return;
	if (rootfd >= 0 && root_home != home->id)
		dbcap_stop();
	for (k = kids; rootfd >= 0 && k < kids + DBCAP_MAX; k++) {
		if (!k->vs_id)
			continue;
		if (!(v = vs_table_find(t, k->vs_id)))
			drop_kid(k, NULL, home, gone, arg);
		else if (!v->db_cap_bp || v->id == home->id)
			drop_kid(k, v, home, gone, arg);
		else
			limits(k, v);
	}
	for (i = 0; tgid && i < t->n; i++) {
		x.v = &t->v[i];
		if (x.v->db_cap_bp && x.v->id != home->id &&
		    (rootfd < 0 || !kid_of(x.v, 0)))
			thread_foreach(place_one, &x);
	}
}

void
dbcap_stop(void)
{
	struct kid *k;

	for (k = kids; k < kids + DBCAP_MAX; k++)
		if (k->vs_id) {
			close(k->dfd);
			/* fails while a thread is still in it: left to be reused */
			unlinkat(rootfd, k->name, AT_REMOVEDIR);
			memset(k, 0, sizeof(*k));
		}
	if (rootfd >= 0) {
		close(rootfd);
		unlinkat(parentfd, rootname, AT_REMOVEDIR);
		rootfd = -1;
	}
	if (parentfd >= 0) {
		close(parentfd);
		parentfd = -1;
	}
	root_home = 0;
}
