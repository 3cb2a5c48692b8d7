// SPDX-License-Identifier: GPL-2.0-or-later
/* cgroup v1 interface files (hybrid and legacy hosts). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"

#define CFS_PERIOD_US	100000ULL

static int
v1_prepare(struct cg_ctx *cg, const struct cg_hier *h)
{
	/* v1 has no "no internal processes" rule: nothing to delegate. */
	return 0;
}

/* Shares are relative; basis points keep the configured ratios exact. */
static unsigned
v1_shares(unsigned bp)
{
	return bp < 2 ? 2 : bp;	/* the kernel's MIN_SHARES */
}

static int
v1_set_cpu(int dfd, unsigned bp)
{
	char val[32];

	snprintf(val, sizeof(val), "%u", v1_shares(bp));
	return cg_writeat(dfd, "cpu.shares", val);
}

/* The quota for a cap of bp (cg_quota_us()), in val; the file it goes to. */
static const char *
v1_cap_value(unsigned bp, unsigned ncpu, char *val, size_t len)
{
	snprintf(val, len, "%" PRIu64, cg_quota_us(bp, ncpu));
	return "cpu.cfs_quota_us";
}

/*
 * Lower each capped cgroup below dfd to the rate quota/period, deepest
 * first: in v1 the kernel refuses a parent's quota under a child's rate
 * (tg_cfs_schedulable_down), and the accept gate's database mode caps
 * children of a service's VS (gates/accept/dbcap.c), which then re-caps
 * them within the new rate at the next push.
 */
static void
v1_clamp_children(int dfd, uint64_t quota, int depth)
{
	char q[32], p[32];
	struct dirent *de;
	uint64_t cq, cp;
	DIR *d;
	int fd;

	/* a directory of its own to read: dfd may be an O_PATH descriptor */
	if (depth > 4 || (fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
		    (fd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		v1_clamp_children(fd, quota, depth + 1);
		if (cg_readat(fd, "cpu.cfs_quota_us", q, sizeof(q)) == 0 && q[0] != '-' &&
		    cg_readat(fd, "cpu.cfs_period_us", p, sizeof(p)) == 0 &&
		    (cp = strtoull(p, NULL, 10)) && (cq = strtoull(q, NULL, 10)) &&
		    cq * CFS_PERIOD_US > quota * cp) {
			/* a burst may not exceed the quota either */
			cg_writeat(fd, "cpu.cfs_burst_us", "0");
			snprintf(q, sizeof(q), "%" PRIu64, (uint64_t)(quota * cp / CFS_PERIOD_US));
			cg_writeat(fd, "cpu.cfs_quota_us", q);
		}
		close(fd);
	}
	closedir(d);
}

static int
v1_set_cpu_max(int dfd, unsigned bp, unsigned ncpu, int fresh)
{
	char val[32], cur[32];
	int r;

	/*
	 * Each write of the period or the quota makes the kernel check the
	 * bandwidth of every task group on the machine (tg_set_cfs_bandwidth ->
	 * __cfs_schedulable): with thousands of VSs that is the largest part of
	 * creating one. So write only what differs: a new cgroup has the
	 * default period, 100 ms, and no quota, which need no reading.
	 */
	if (bp == 0)
		return fresh || (cg_readat(dfd, "cpu.cfs_quota_us", cur, sizeof(cur)) == 0 &&
				 strcmp(cur, "-1") == 0) ? 0 : cg_writeat(dfd, "cpu.cfs_quota_us", "-1");
	if (!fresh &&
	    (cg_readat(dfd, "cpu.cfs_period_us", cur, sizeof(cur)) < 0 || strcmp(cur, "100000") != 0) &&
	    (r = cg_writeat(dfd, "cpu.cfs_period_us", "100000")) < 0)
		return r;
	v1_cap_value(bp, ncpu, val, sizeof(val));
	if (!fresh && cg_readat(dfd, "cpu.cfs_quota_us", cur, sizeof(cur)) == 0 && strcmp(cur, val) == 0)
		return 0;
	if ((r = cg_writeat(dfd, "cpu.cfs_quota_us", val)) == -EINVAL && !fresh) {
		v1_clamp_children(dfd, cg_quota_us(bp, ncpu), 0);
		r = cg_writeat(dfd, "cpu.cfs_quota_us", val);
	}
	return r;
}

static int
v1_set_mem(int dfd, uint64_t bytes)
{
	return cg_write_limit(dfd, "memory.limit_in_bytes", bytes, "-1");
}

static int
v1_set_pids(int dfd, uint64_t n)
{
	return cg_write_limit(dfd, "pids.max", n, "max");
}

static int
v1_cpu_usage(const char *dir, uint64_t *usec)
{
	uint64_t ns;
	int r;

	if ((r = cg_read_u64(dir, "cpuacct.usage", &ns)) < 0)
		return r;
	*usec = ns / 1000;
	return 0;
}

static int
v1_mem_usage(const char *dir, uint64_t *bytes)
{
	return cg_read_u64(dir, "memory.usage_in_bytes", bytes);
}

static int
v1_kill_all(const char *dir)
{
	return -EOPNOTSUPP;
}

static int
v1_expect(unsigned roles, const struct vs_limits *l, unsigned ncpu, struct cg_expect *e)
{
	int n = 0;

	if (roles & CG_R_CPU) {
		e[n] = (struct cg_expect){ "cpu", "cpu.shares", "" };
		snprintf(e[n++].want, sizeof(e->want), "%u", v1_shares(l->cpu));
		if (l->cpu_max) {
			e[n] = (struct cg_expect){ "cpu_max", "cpu.cfs_period_us", "" };
			snprintf(e[n++].want, sizeof(e->want), "%llu", CFS_PERIOD_US);
		}
		e[n] = (struct cg_expect){ "cpu_max", "cpu.cfs_quota_us", "-1" };
		if (l->cpu_max)
			snprintf(e[n].want, sizeof(e->want), "%" PRIu64,
				 cg_quota_us(l->cpu_max, ncpu));
		n++;
	}
	/* no memory limit ("-1") reads back as the largest one */
	if (roles & CG_R_MEM)
		e[n++] = cg_expect_limit("mem_max", "memory.limit_in_bytes",
					 cg_mem_readback(l->mem_max), NULL);
	if (roles & CG_R_PIDS)
		e[n++] = cg_expect_limit("pids_max", "pids.max", l->pids_max, "max");
	return n;
}

const struct cg_ops cg_v1_ops = {
	.name = "v1",
	.prepare = v1_prepare,
	.set_cpu = v1_set_cpu,
	.set_cpu_max = v1_set_cpu_max,
	.cap_value = v1_cap_value,
	.set_mem = v1_set_mem,
	.set_pids = v1_set_pids,
	.cpu_usage = v1_cpu_usage,
	.mem_usage = v1_mem_usage,
	.pids_usage = cg_pids_current,
	.stats = cg_v1_stats,
	.kill_all = v1_kill_all,
	.expect = v1_expect,
};
