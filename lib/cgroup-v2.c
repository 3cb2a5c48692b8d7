// SPDX-License-Identifier: GPL-2.0-or-later
/* cgroup v2 interface files: the whole tree on a pure-v2 host, the BPF
 * attach point (no controllers) on a hybrid one. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"

#define V2_PERIOD_US	100000ULL

static int
has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word)) != NULL) {
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0' || p[n] == '\n'))
			return 1;
		p += n;
	}
	return 0;
}

/* Enable the controllers we need for the children of dir. */
static int
v2_delegate(const char *dir, const char *want)
{
	char have[256], path[PATH_MAX];
	int r;

	if ((r = cg_read(dir, "cgroup.subtree_control", have, sizeof(have))) < 0) {
		log_warnx("%s: read %s/cgroup.subtree_control: %s", __func__, dir, strerror(-r));
		return r;
	}
	if (has_word(have, "cpu") && has_word(have, "memory") && has_word(have, "pids"))
		return 0;
	if ((r = cg_write(dir, "cgroup.subtree_control", want)) < 0) {
		path_fmt(path, sizeof(path), "%s/cgroup.subtree_control", dir);
		if (r == -EBUSY)
			log_warnx("cannot enable controllers in %s: the cgroup holds processes "
				  "(start vsd in a cgroup of its own, e.g. systemd Delegate=yes)", path);
		else
			log_warnx("write %s: %s", path, strerror(-r));
	}
	return r;
}

static int
v2_prepare(struct cg_ctx *cg, const struct cg_hier *h)
{
	char owndir[PATH_MAX], leaf[PATH_MAX], ctl[256], pid[32];
	const char *own = h->own, *base = h->base;
	int r;

	if (!(h->roles & (CG_R_CPU | CG_R_MEM | CG_R_PIDS)))
		return 0;	/* hybrid cgroup2: no controllers, no rule to obey */
	if ((r = path_fmt(owndir, sizeof(owndir), "%s%s", h->mnt, strcmp(own, "/") ? own : "")) < 0 ||
	    (r = path_fmt(leaf, sizeof(leaf), "%s/%s", base, CG_DAEMON_LEAF)) < 0)
		return r;
	if ((r = cg_read(owndir, "cgroup.controllers", ctl, sizeof(ctl))) < 0)
		return r;
	if (!has_word(ctl, "cpu") || !has_word(ctl, "memory") || !has_word(ctl, "pids")) {
		log_warnx("%s: controllers cpu, memory and pids must be delegated (have: %s)",
			  owndir, ctl[0] ? ctl : "none");
		return -EOPNOTSUPP;
	}
	/*
	 * A non-root cgroup can enable controllers for its children only while it
	 * holds no processes itself, so vsd first moves into a leaf of its own tree.
	 */
	if ((r = cg_mkdir(cg, leaf)) < 0)
		return r;
	snprintf(pid, sizeof(pid), "%d", (int)(cg->leaf_pid ? cg->leaf_pid : getpid()));
	if ((r = cg_write(leaf, "cgroup.procs", pid)) < 0) {
		log_warnx("move %s into %s: %s", cg->leaf_pid ? "the scope's keeper" : "vsd",
			  leaf, strerror(-r));
		return r;
	}
	if (strcmp(own, "/") != 0 && (r = v2_delegate(owndir, "+cpu +memory +pids")) < 0)
		return r;
	return v2_delegate(base, "+cpu +memory +pids");
}

/* cpu.weight is 1..10000, basis points map onto it one to one. */
static unsigned
v2_weight(unsigned bp)
{
	return bp < 1 ? 1 : bp > 10000 ? 10000 : bp;
}

static int
v2_set_cpu(int dfd, unsigned bp)
{
	char val[32];

	snprintf(val, sizeof(val), "%u", v2_weight(bp));
	return cg_writeat(dfd, "cpu.weight", val);
}

/* cpu.max for a cap of bp (0: none), as written and as read back. */
static void
v2_cpu_max(unsigned bp, unsigned ncpu, char *val, size_t len)
{
	if (bp == 0)
		snprintf(val, len, "max %llu", V2_PERIOD_US);
	else
		snprintf(val, len, "%" PRIu64 " %llu", cg_quota_us(bp, ncpu), V2_PERIOD_US);
}

static const char *
v2_cap_value(unsigned bp, unsigned ncpu, char *val, size_t len)
{
	v2_cpu_max(bp, ncpu, val, len);
	return "cpu.max";
}

static int
v2_set_cpu_max(int dfd, unsigned bp, unsigned ncpu, int fresh)
{
	char val[64];

	/* A new cgroup's cpu.max is "max 100000" already: each write of it
	 * walks every task group (tg_set_cfs_bandwidth), as on v1. */
	if (bp == 0 && fresh)
		return 0;
	v2_cpu_max(bp, ncpu, val, sizeof(val));
	return cg_writeat(dfd, "cpu.max", val);
}

static int
v2_set_mem(int dfd, uint64_t bytes)
{
	return cg_write_limit(dfd, "memory.max", bytes, "max");
}

static int
v2_set_pids(int dfd, uint64_t n)
{
	return cg_write_limit(dfd, "pids.max", n, "max");
}

static int
v2_cpu_usage(const char *dir, uint64_t *usec)
{
	char buf[1024];
	uint64_t ns;
	int r;

	if ((r = cg_read(dir, "cpu.stat", buf, sizeof(buf))) < 0 ||
	    (r = cg_parse_usage(buf, 1, &ns)) < 0)
		return r;
	*usec = ns / 1000;
	return 0;
}

static int
v2_mem_usage(const char *dir, uint64_t *bytes)
{
	return cg_read_u64(dir, "memory.current", bytes);
}

static int
v2_kill_all(const char *dir)
{
	int r = cg_write(dir, "cgroup.kill", "1");	/* cgroup.kill needs Linux 5.14 */

	return r == -ENOENT ? -EOPNOTSUPP : r;
}

static int
v2_expect(unsigned roles, const struct vs_limits *l, unsigned ncpu, struct cg_expect *e)
{
	int n = 0;

	if (roles & CG_R_CPU) {
		e[n] = (struct cg_expect){ "cpu", "cpu.weight", "" };
		snprintf(e[n++].want, sizeof(e->want), "%u", v2_weight(l->cpu));
		e[n] = (struct cg_expect){ "cpu_max", "cpu.max", "" };
		v2_cpu_max(l->cpu_max, ncpu, e[n++].want, sizeof(e->want));
	}
	if (roles & CG_R_MEM)
		e[n++] = cg_expect_limit("mem_max", "memory.max",
					 l->mem_max ? cg_mem_readback(l->mem_max) : 0, "max");
	if (roles & CG_R_PIDS)
		e[n++] = cg_expect_limit("pids_max", "pids.max", l->pids_max, "max");
	return n;
}

const struct cg_ops cg_v2_ops = {
	.name = "v2",
	.prepare = v2_prepare,
	.set_cpu = v2_set_cpu,
	.set_cpu_max = v2_set_cpu_max,
	.cap_value = v2_cap_value,
	.set_mem = v2_set_mem,
	.set_pids = v2_set_pids,
	.cpu_usage = v2_cpu_usage,
	.mem_usage = v2_mem_usage,
	.pids_usage = cg_pids_current,
	.stats = cg_v2_stats,
	.kill_all = v2_kill_all,
	.expect = v2_expect,
};
