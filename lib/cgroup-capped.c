// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A capped child per VS in the v1 cpu hierarchy (cgroup-handle.h,
 * cg_capped_*): where a move takes one thread, the threads serving a VS
 * can sit in a child of another VS's cgroup (the database mode's
 * <home VS>/db.<service>/<VS>, gates/accept/dbcap.c), capped there
 * without capping the VS's own processes. CFS bandwidth is hierarchical,
 * so the children together never get more than their parent. The gate
 * keeps which child is whose and computes the bandwidth; the cgroup files
 * are written here. Also cgh_cpu_cap(), a VS's own cap on either layout.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-handle.h"

/* a v1 cgroup's quota and period, quota 0 for none */
static void
v1_cap(int dfd, const char *dir, uint64_t *q, uint64_t *p)
{
	char a[32] = "-1", b[32] = "0";

	if (dfd >= 0) {
		cg_readat(dfd, "cpu.cfs_quota_us", a, sizeof(a));
		cg_readat(dfd, "cpu.cfs_period_us", b, sizeof(b));
	} else {
		cg_read(dir, "cpu.cfs_quota_us", a, sizeof(a));
		cg_read(dir, "cpu.cfs_period_us", b, sizeof(b));
	}
	*q = a[0] == '-' ? 0 : strtoull(a, NULL, 10);
	*p = strtoull(b, NULL, 10);
}

void
cgh_cpu_cap(const struct cg_handle *h, uint64_t *quota, uint64_t *period)
{
	unsigned long long q = 0, p = 0;
	char val[64];

	*quota = *period = 0;
	if (h->dir[CG_KIND_CPU]) {
		v1_cap(-1, h->dir[CG_KIND_CPU], quota, period);
		return;
	}
	/* "max PERIOD" or "QUOTA PERIOD" */
	if (!h->dir[CG_KIND_UNIFIED] ||
	    cg_read(h->dir[CG_KIND_UNIFIED], "cpu.max", val, sizeof(val)) < 0)
		return;
	if (sscanf(val, "%llu %llu", &q, &p) != 2) {
		q = 0;
		sscanf(val, "max %llu", &p);
	}
	*quota = q;
	*period = p;
}

static int
child(int dfd, const char *name)
{
	int fd;

	if (mkdirat(dfd, name, 0755) < 0 && errno != EEXIST)
		return -errno;
	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	return fd;
}

int
cg_capped_root(const struct cg_handle *home, const char *name, int *parentfd)
{
	int fd;

	*parentfd = -1;
	if (!home->dir[CG_KIND_CPU])
		return -ENOENT;
	if ((*parentfd = open(home->dir[CG_KIND_CPU], O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0)
		return (*parentfd = -1, -errno);
	if ((fd = child(*parentfd, name)) < 0) {
		close(*parentfd);
		*parentfd = -1;
	}
	return fd;
}

int
cg_capped_child(int rootfd, const char *name)
{
	return child(rootfd, name);
}

static void
write_u64(int dfd, const char *file, uint64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "%" PRIu64, v);
	cg_writeat(dfd, file, s);
}

void
cg_capped_limits(int dfd, int parentfd, const struct cg_handle *v, const struct cg_bw *cap)
{
	struct cg_bw bw = *cap;
	uint64_t hq, hp;
	char s[32];

	if (v->dir[CG_KIND_CPU] && cg_read(v->dir[CG_KIND_CPU], "cpu.shares", s, sizeof(s)) >= 0) {
		s[strcspn(s, "\n")] = '\0';
		cg_writeat(dfd, "cpu.shares", s);
	}
	v1_cap(parentfd, NULL, &hq, &hp);
	if (bw.quota && hq && hp && bw.quota * hp > hq * bw.period) {
		bw.quota = hq * bw.period / hp;
		bw.burst = bw.burst < bw.quota ? bw.burst : bw.quota;
	}
	/* in an order the kernel takes at each step: burst <= quota */
	cg_writeat(dfd, "cpu.cfs_burst_us", "0");
	cg_writeat(dfd, "cpu.cfs_quota_us", "-1");
	write_u64(dfd, "cpu.cfs_period_us", bw.period);
	if (bw.quota) {
		write_u64(dfd, "cpu.cfs_quota_us", bw.quota);
		/* absent before Linux 5.14: the cap holds, without a burst */
		write_u64(dfd, "cpu.cfs_burst_us", bw.burst);
	}
}

int
cg_capped_move(int dfd, const struct cg_handle *v, pid_t tid)
{
	char s[16];
	int r;

	snprintf(s, sizeof(s), "%d", (int)tid);
	if ((r = cg_writeat(dfd, "tasks", s)) < 0)
		return r;
	/* cpu and cpuacct are often co-mounted: then the child is the move */
	if (v->dir[CG_KIND_CPUACCT] && (!v->dir[CG_KIND_CPU] ||
	    strcmp(v->dir[CG_KIND_CPU], v->dir[CG_KIND_CPUACCT]) != 0))
		cg_write(v->dir[CG_KIND_CPUACCT], "tasks", s);
	return 0;
}

int
cg_capped_tids(int dfd, char *buf, size_t len)
{
	return cg_readat(dfd, "tasks", buf, len);
}
