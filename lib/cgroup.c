// SPDX-License-Identifier: GPL-2.0-or-later
/* Layout detection and the per-VS operations common to every layout. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroup.h"
#include "log.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

const char *
cg_layout_name(enum cg_layout l)
{
	switch (l) {
	case CG_UNIFIED: return "unified";
	case CG_HYBRID: return "hybrid";
	case CG_LEGACY: return "legacy";
	}
	return "?";
}

/*
 * The cgroup vsd runs in, for one hierarchy, from /proc/self/cgroup:
 * ctl names a v1 controller, or is NULL for the cgroup2 line ("0::/path").
 */
static int
own_cgroup(const char *proc_cgroup, const char *ctl, char *out, size_t len)
{
	char line[PATH_MAX + 128];
	FILE *f;
	int r = -ENOENT;

	if (!(f = fopen(proc_cgroup, "re")))
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2, *tok, *save;

		if (!c1 || !(c2 = strchr(c1 + 1, ':')))
			continue;
		*c1 = '\0';
		*c2 = '\0';
		c2[1 + strcspn(c2 + 1, "\n")] = '\0';
		if (!ctl) {
			if (strcmp(line, "0") != 0 || c1[1] != '\0')
				continue;
		} else {
			int found = 0;

			for (tok = strtok_r(c1 + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
				found |= strcmp(tok, ctl) == 0;
			if (!found)
				continue;
		}
		r = path_fmt(out, len, "%s", c2 + 1);
		break;
	}
	fclose(f);
	return r;
}

/* vsd may already sit in <own>/<root>/.daemon (pure v2, after a restart). */
static void
strip_daemon_leaf(char *own, const char *root)
{
	char tail[128];
	size_t n = strlen(own), t;

	snprintf(tail, sizeof(tail), "/%s/.daemon", root);
	t = strlen(tail);
	if (n >= t && strcmp(own + n - t, tail) == 0) {
		own[n - t] = '\0';
		if (own[0] == '\0')
			strcpy(own, "/");
	}
}

static int
add_hier(struct cg_ctx *cg, const char *mnt, const char *proc_cgroup, const char *ctl,
	 unsigned roles, const struct cg_ops *ops)
{
	char own[PATH_MAX], real[PATH_MAX];
	struct cg_hier *h;
	int i, r;

	if (!realpath(mnt, real)) {
		log_warn("cgroup hierarchy %s", mnt);
		return -errno;
	}
	/* cpu and cpuacct are often one mount (cpu,cpuacct) behind two links. */
	for (i = 0; i < cg->nhier; i++) {
		if (strcmp(cg->hier[i].mnt, real) == 0) {
			cg->hier[i].roles |= roles;
			return 0;
		}
	}
	if (cg->nhier == CG_HIER_MAX)
		return -E2BIG;
	if ((r = own_cgroup(proc_cgroup, ctl, own, sizeof(own))) < 0) {
		log_warnx("%s: no %s line in %s", __func__, ctl ? ctl : "cgroup2", proc_cgroup);
		return r;
	}
	strip_daemon_leaf(own, cg->root);
	h = &cg->hier[cg->nhier];
	if ((r = path_fmt(h->mnt, sizeof(h->mnt), "%s", real)) < 0 ||
	    (r = path_fmt(h->base, sizeof(h->base), "%s%s/%s", real,
			  strcmp(own, "/") ? own : "", cg->root)) < 0)
		return r;
	h->roles = roles;
	h->ops = ops;
	h->basefd = -1;
	snprintf(h->ctl, sizeof(h->ctl), "%s", ctl ? ctl : "");
	snprintf(h->own, sizeof(h->own), "%s", own);
	cg->nhier++;
	return 0;
}

int
cg_init_layout(struct cg_ctx *cg, enum cg_layout l, const char *mnt_root,
	       const char *proc_cgroup, const char *root)
{
	static const struct { const char *ctl; unsigned roles; } v1[] = {
		{ "cpu", CG_R_CPU | CG_R_PRIMARY },
		{ "cpuacct", CG_R_CPUACCT },
		{ "memory", CG_R_MEM },
		{ "pids", CG_R_PIDS },
	};
	char mnt[PATH_MAX];
	size_t i;
	int r;

	memset(cg, 0, sizeof(*cg));
	if (!vs_name_valid(root)) {
		log_warnx("cgroup root '%s' %s", root, vs_name_why(root));
		return -EINVAL;
	}
	snprintf(cg->root, sizeof(cg->root), "%s", root);
	cg->layout = l;
	cg->ncpu = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	if (l == CG_UNIFIED)
		return add_hier(cg, mnt_root, proc_cgroup, NULL,
				CG_R_CPU | CG_R_CPUACCT | CG_R_MEM | CG_R_PIDS | CG_R_BPF | CG_R_PRIMARY,
				&cg_v2_ops);
	for (i = 0; i < ARRAY_SIZE(v1); i++) {
		if ((r = path_fmt(mnt, sizeof(mnt), "%s/%s", mnt_root, v1[i].ctl)) < 0 ||
		    (r = add_hier(cg, mnt, proc_cgroup, v1[i].ctl, v1[i].roles, &cg_v1_ops)) < 0)
			return r;
	}
	if (l == CG_HYBRID) {
		if ((r = path_fmt(mnt, sizeof(mnt), "%s/unified", mnt_root)) < 0 ||
		    (r = add_hier(cg, mnt, proc_cgroup, NULL, CG_R_BPF, &cg_v2_ops)) < 0)
			return r;
	}
	return 0;
}

int
cg_set_own(struct cg_ctx *cg, const char *own)
{
	struct cg_hier *h = &cg->hier[0];
	int r;

	if (cg->layout != CG_UNIFIED || cg->nhier != 1)
		return -EINVAL;
	if ((r = path_fmt(h->base, sizeof(h->base), "%s%s/%s", h->mnt,
			  strcmp(own, "/") ? own : "", cg->root)) < 0)
		return r;
	if (h->basefd >= 0)
		close(h->basefd);
	h->basefd = -1;
	snprintf(h->own, sizeof(h->own), "%s", own);
	return 0;
}

int
cg_init(struct cg_ctx *cg, const char *mnt_root, const char *proc_cgroup, const char *root)
{
	char unified[PATH_MAX];
	struct statfs sfs;
	enum cg_layout l;

	if (statfs(mnt_root, &sfs) < 0) {
		log_warn("statfs %s", mnt_root);
		return -errno;
	}
	if ((unsigned long)sfs.f_type == CGROUP2_SUPER_MAGIC) {
		l = CG_UNIFIED;
	} else if ((unsigned long)sfs.f_type == TMPFS_MAGIC) {
		snprintf(unified, sizeof(unified), "%s/unified", mnt_root);
		l = statfs(unified, &sfs) == 0 && (unsigned long)sfs.f_type == CGROUP2_SUPER_MAGIC ?
			CG_HYBRID : CG_LEGACY;
	} else {
		log_warnx("%s is neither cgroup2 nor a tmpfs of cgroup v1 mounts", mnt_root);
		return -ENOTSUP;
	}
	return cg_init_layout(cg, l, mnt_root, proc_cgroup, root);
}

int
cg_write(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX];
	int r;

	if ((r = path_fmt(path, sizeof(path), "%s/%s", dir, file)) < 0)
		return r;
	return write_file(path, val);
}

int
cg_read(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];
	int r;

	if ((r = path_fmt(path, sizeof(path), "%s/%s", dir, file)) < 0)
		return r;
	return read_file(path, buf, len);
}

int
cg_read_u64(const char *dir, const char *file, uint64_t *v)
{
	char buf[64], *end;
	int r;

	if ((r = cg_read(dir, file, buf, sizeof(buf))) < 0)
		return r;
	*v = strtoull(buf, &end, 10);
	return end == buf ? -EINVAL : 0;
}

int
cg_writeat(int dfd, const char *file, const char *val)
{
	return write_file_at(dfd, file, val);
}

int
cg_readat(int dfd, const char *file, char *buf, size_t len)
{
	return read_file_at(dfd, file, buf, len);
}

int
cg_write_limit(int dfd, const char *file, uint64_t v, const char *unset)
{
	char val[32];

	if (v == 0)
		return cg_writeat(dfd, file, unset);
	snprintf(val, sizeof(val), "%" PRIu64, v);
	return cg_writeat(dfd, file, val);
}

struct cg_expect
cg_expect_limit(const char *limit, const char *file, uint64_t v, const char *unset)
{
	struct cg_expect e = { limit, file, "" };

	if (v == 0)
		snprintf(e.want, sizeof(e.want), "%s", unset);
	else
		snprintf(e.want, sizeof(e.want), "%" PRIu64, v);
	return e;
}

int
cg_pids_current(const char *dir, uint64_t *n)
{
	return cg_read_u64(dir, "pids.current", n);
}

int
cg_mkdir(struct cg_ctx *cg, const char *dir)
{
	if (mkdir(dir, 0755) < 0) {
		if (errno != EEXIST)
			return -errno;
		return 0;	/* adopt: an existing directory is ours from before */
	}
	return cg->mkdir_hook ? cg->mkdir_hook(dir) : 0;
}

int
cg_prepare(struct cg_ctx *cg)
{
	int i, r;

	for (i = 0; i < cg->nhier; i++) {
		struct cg_hier *h = &cg->hier[i];

		if ((r = cg_mkdir(cg, h->base)) < 0) {
			log_warnx("mkdir %s: %s", h->base, strerror(-r));
			return r;
		}
		if ((r = h->ops->prepare(cg, h)) < 0)
			return r;
	}
	return 0;
}

void
cg_release(struct cg_ctx *cg)
{
	int i;

	for (i = cg->nhier - 1; i >= 0; i--) {
		char leaf[PATH_MAX];

		if (cg->hier[i].basefd >= 0)
			close(cg->hier[i].basefd);
		cg->hier[i].basefd = -1;
		/* The keeper of a systemd scope has left .daemon; vsd itself
		 * cannot leave it (see vsd(8), BUGS), and then this fails. */
		if (cg->leaf_pid && path_fmt(leaf, sizeof(leaf), "%s/%s", cg->hier[i].base,
					     CG_DAEMON_LEAF) == 0)
			rmdir(leaf);
		if (cg->rmdir_hook)
			cg->rmdir_hook(cg->hier[i].base);
		rmdir(cg->hier[i].base);	/* fails, as it should, while VSs remain */
	}
}

int
cg_vs_path(const struct cg_ctx *cg, int h, const char *vs, char *buf, size_t len)
{
	if (!vs_name_valid(vs))
		return -EINVAL;	/* never build a path from an unchecked name */
	return path_fmt(buf, len, "%s/%s", cg->hier[h].base, vs);
}

/* A new directory's cap, to the second thread (cgroup-async.c). */
static int
cap_async(struct cg_ctx *cg, const struct cg_ops *o, int dfd, const struct vs *vs)
{
	const char *file;
	char val[64];
	int fd;

	file = o->cap_value(vs->lim.cpu_max, cg->ncpu, val, sizeof(val));
	if ((fd = openat(dfd, file, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	return cg_async_write(cg, fd, val, vs->name);
}

/*
 * The limits of vs in hierarchy i, whose VS directory is dfd. With old,
 * what changed; without (a VS made or adopted), everything, except in a
 * directory made just now (fresh), whose files hold the kernel's defaults,
 * where a limit that is unset needs no write: on a host with thousands of
 * VSs, every write and every lookup counts (benchmarks/results/rules-provider.md).
 */
static int
vs_apply_at(struct cg_ctx *cg, int i, int dfd, const struct vs *vs,
	    const struct vs_limits *old, int fresh)
{
	static const struct vs_limits none;
	const struct cg_hier *h = &cg->hier[i];
	const struct cg_ops *o = h->ops;
	const struct vs_limits *l = &vs->lim;
	const char *what = NULL;
	int all = !old && !fresh, r = 0;

	if (!old)
		old = &none;
	if ((h->roles & CG_R_CPU) && (all || fresh || old->cpu != l->cpu))
		r = o->set_cpu(dfd, l->cpu), what = "cpu share";
	if ((h->roles & CG_R_CPU) && r == 0 && fresh && cg->async && l->cpu_max)
		r = cap_async(cg, o, dfd, vs), what = "cpu cap";
	else if ((h->roles & CG_R_CPU) && r == 0 && (all || old->cpu_max != l->cpu_max))
		r = o->set_cpu_max(dfd, l->cpu_max, cg->ncpu, fresh), what = "cpu cap";
	if ((h->roles & CG_R_MEM) && r == 0 && (all || old->mem_max != l->mem_max))
		r = o->set_mem(dfd, l->mem_max), what = "memory limit";
	if ((h->roles & CG_R_PIDS) && r == 0 && (all || old->pids_max != l->pids_max))
		r = o->set_pids(dfd, l->pids_max), what = "pids limit";
	if (r < 0)
		log_warnx("%s: set %s in %s/%s: %s", vs->name, what, h->base, vs->name,
			  strerror(-r));
	return r;
}

/* vs's directory in hierarchy i, O_PATH; -errno. */
static int
vs_dir_open(const struct cg_ctx *cg, int i, const char *name)
{
	char dir[PATH_MAX];
	int fd, r;

	if ((r = cg_vs_path(cg, i, name, dir, sizeof(dir))) < 0)
		return r;
	if ((fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	return fd;
}

int
cg_vs_dir_open(const struct cg_ctx *cg, int i, const char *name)
{
	const struct cg_hier *hi = &cg->hier[i];
	int fd;

	/* relative to the hierarchy's root when that is open: one lookup, not
	 * the walk of the whole path */
	if (hi->basefd < 0)
		return vs_dir_open(cg, i, name);
	fd = openat(hi->basefd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int
cg_vs_apply(struct cg_ctx *cg, const struct vs *vs, const struct vs_limits *old)
{
	int i, fd, r;

	for (i = 0; i < cg->nhier; i++) {
		if ((fd = vs_dir_open(cg, i, vs->name)) < 0) {
			log_warnx("%s: open %s/%s: %s", vs->name, cg->hier[i].base, vs->name,
				  strerror(-fd));
			return fd;
		}
		r = vs_apply_at(cg, i, fd, vs, old, 0);
		close(fd);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * mkdir of vs in hierarchy i, relative to the hierarchy's root directory
 * (kept open: no walk of the mount's path for each of thousands of VSs);
 * an existing directory is adopted. Its descriptor (O_PATH), or -errno;
 * *fresh: made just now.
 */
static int
vs_dir_make(struct cg_ctx *cg, int i, const char *name, int *fresh)
{
	struct cg_hier *h = &cg->hier[i];
	char dir[PATH_MAX];
	int fd, r;

	if ((r = cg_vs_path(cg, i, name, dir, sizeof(dir))) < 0)
		return r;
	if (h->basefd < 0 && (h->basefd = open(h->base, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	*fresh = mkdirat(h->basefd, name, 0755) == 0;
	if (!*fresh && errno != EEXIST)
		return -errno;
	if (*fresh && cg->mkdir_hook && (r = cg->mkdir_hook(dir)) < 0)
		return r;
	if ((fd = openat(h->basefd, name, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	return fd;
}

int
cg_vs_rewrite(struct cg_ctx *cg, const struct vs *vs)
{
	struct vs_limits differ = vs->lim;

	/* an "old" that differs in every limit makes cg_vs_apply write each */
	differ.cpu = ~vs->lim.cpu;
	differ.cpu_max = ~vs->lim.cpu_max;
	differ.mem_max = ~vs->lim.mem_max;
	differ.pids_max = ~vs->lim.pids_max;
	return cg_vs_apply(cg, vs, &differ);
}

uint64_t
cg_quota_us(unsigned bp, unsigned ncpu)
{
	/* bp is a share of the whole machine, so it scales with the CPU count */
	uint64_t quota = (uint64_t)bp * ncpu * 100000 / BP_MAX;

	return quota < 1000 ? 1000 : quota;
}

uint64_t
cg_mem_readback(uint64_t bytes)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	/* page_counter_memparse() keeps whole pages, at most LONG_MAX bytes' worth */
	if (bytes == 0 || bytes > (uint64_t)LONG_MAX)
		bytes = (uint64_t)LONG_MAX;
	return bytes / page * page;
}

int
cg_vs_drift(const struct cg_ctx *cg, const struct vs *vs, struct cg_drift *d, size_t max)
{
	struct cg_expect e[CG_EXPECT_MAX];
	char have[64];
	size_t n = 0;
	int h, k, ne, fd;

	/* relative to the VS's directory, itself relative to the hierarchy's
	 * root when that is open: every apply reads these for every VS */
	for (h = 0; h < cg->nhier; h++) {
		const struct cg_hier *hi = &cg->hier[h];

		if ((fd = cg_vs_dir_open(cg, h, vs->name)) < 0)
			return fd;
		ne = hi->ops->expect(hi->roles, &vs->lim, cg->ncpu, e);
		for (k = 0; k < ne; k++) {
			if (cg_readat(fd, e[k].file, have, sizeof(have)) < 0)
				have[0] = '\0';
			if (strcmp(have, e[k].want) == 0)
				continue;
			if (n < max) {
				d[n].limit = e[k].limit;
				d[n].file = e[k].file;
				snprintf(d[n].hier, sizeof(d[n].hier), "%s", cg_hier_key(hi));
				snprintf(d[n].want, sizeof(d[n].want), "%s", e[k].want);
				snprintf(d[n].have, sizeof(d[n].have), "%s", have);
			}
			n++;
		}
		close(fd);
	}
	return (int)(n < max ? n : max);
}

int
cg_vs_create(struct cg_ctx *cg, struct vs *vs)
{
	struct stat st;
	int i, fd, fresh, r;

	for (i = 0; i < cg->nhier; i++) {
		if ((fd = vs_dir_make(cg, i, vs->name, &fresh)) < 0) {
			r = fd;
			log_warnx("%s: mkdir %s/%s: %s", vs->name, cg->hier[i].base, vs->name,
				  strerror(-r));
			goto fail;
		}
		r = 0;
		if ((cg->hier[i].roles & CG_R_BPF) && fstat(fd, &st) < 0)
			r = -errno;
		else if (cg->hier[i].roles & CG_R_BPF)
			vs->cg2_id = st.st_ino;
		if (r == 0)
			r = vs_apply_at(cg, i, fd, vs, NULL, fresh);
		close(fd);
		if (r < 0)
			goto fail;
	}
	return 0;
fail:
	cg_vs_remove(cg, vs);
	return r;
}

int
cg_vs_exists(const struct cg_ctx *cg, const struct vs *vs)
{
	char dir[PATH_MAX];
	struct stat st;
	int i;

	for (i = 0; i < cg->nhier; i++) {
		if (cg_vs_path(cg, i, vs->name, dir, sizeof(dir)) < 0 ||
		    stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			return 0;
	}
	return 1;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int
cg_vs_remove(struct cg_ctx *cg, const struct vs *vs)
{
	char dir[PATH_MAX];
	int i, tries, r = 0;

	for (i = cg->nhier - 1; i >= 0; i--) {
		if (cg_vs_path(cg, i, vs->name, dir, sizeof(dir)) < 0)
			continue;
		if (cg->rmdir_hook)
			cg->rmdir_hook(dir);
		/* A killed task leaves its cgroup a moment after it is reaped. */
		for (tries = 0; rmdir(dir) < 0; tries++) {
			if (errno == ENOENT)
				break;
			if (errno != EBUSY || tries == 100) {
				log_warn("%s: rmdir %s", vs->name, dir);
				r = -errno;
				break;
			}
			sleep_ms(20);
		}
	}
	return r;
}

/* The ids in dir's cgroup.procs (processes) or tasks (v1: threads). */
static int
read_ids(const char *dir, const char *file, pid_t **pids, size_t *n)
{
	char path[PATH_MAX], line[32];
	size_t cap = 0;
	pid_t *p = NULL, *np;
	FILE *f;
	int r;

	*pids = NULL;
	*n = 0;
	if ((r = path_fmt(path, sizeof(path), "%s/%s", dir, file)) < 0)
		return r;
	if (!(f = fopen(path, "re")))
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			if (!(np = realloc(p, cap * sizeof(*p)))) {
				free(p);
				fclose(f);
				return -ENOMEM;
			}
			p = np;
		}
		p[(*n)++] = (pid_t)atoi(line);
	}
	fclose(f);
	*pids = p;
	return 0;
}

static int
hier_with(const struct cg_ctx *cg, unsigned role)
{
	int i;

	for (i = 0; i < cg->nhier; i++)
		if (cg->hier[i].roles & role)
			return i;
	return -1;
}

int
cg_vs_procs(const struct cg_ctx *cg, const struct vs *vs, pid_t **pids, size_t *n)
{
	char dir[PATH_MAX];
	int h = hier_with(cg, CG_R_PRIMARY), r;

	if ((r = cg_vs_path(cg, h, vs->name, dir, sizeof(dir))) < 0)
		return r;
	return read_ids(dir, "cgroup.procs", pids, n);
}

static int
pid_in(const pid_t *pids, size_t n, pid_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

int
cg_vs_pids_all(const struct cg_ctx *cg, const struct vs *vs, pid_t **pids, size_t *n)
{
	char dir[PATH_MAX];
	pid_t *all = NULL, *one, *np;
	size_t na = 0, m, i;
	int h, r;

	for (h = 0; h < cg->nhier; h++) {
		if ((r = cg_vs_path(cg, h, vs->name, dir, sizeof(dir))) < 0 ||
		    read_ids(dir, "cgroup.procs", &one, &m) < 0)
			continue;
		if (m && !(np = realloc(all, (na + m) * sizeof(*all)))) {
			free(one);
			free(all);
			return -ENOMEM;
		}
		if (m)
			all = np;
		for (i = 0; i < m; i++)
			if (!pid_in(all, na, one[i]))
				all[na++] = one[i];
		free(one);
	}
	*pids = all;
	*n = na;
	return 0;
}

int
pidfd_pid(int pidfd, pid_t *pid)
{
	char path[64];
	long v;
	int r;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	if ((r = read_field_long(path, "Pid", &v)) < 0)
		return r == -ENODATA ? -EBADF : r;	/* no Pid: not a pidfd */
	*pid = (pid_t)v;
	return v > 0 ? 0 : -ESRCH;	/* -1 once the process has exited */
}

/*
 * Move what sort() says goes elsewhere (to the VS named *to) out of dir, the
 * VS's directory in hierarchy h: on v1 thread by thread through "tasks" (a
 * shared service has only the threads the accept gate bound here in it),
 * on cgroup2 the process through "cgroup.procs". pidfd holds the process.
 */
static int
move_out(struct cg_ctx *cg, int h, const char *dir, pid_t pid, int pidfd, const char *to)
{
	char dst[PATH_MAX], file[PATH_MAX], id[32], probe[64];
	int v1 = cg->hier[h].ctl[0] != '\0', r = 0, err;
	pid_t *tids, after;
	size_t n, i;

	if ((err = cg_vs_path(cg, h, to, dst, sizeof(dst))) < 0 ||
	    (err = path_fmt(file, sizeof(file), "%s/%s", dst, v1 ? "tasks" : "cgroup.procs")) < 0)
		return err;
	if (!v1) {
		snprintf(id, sizeof(id), "%d", (int)pid);
		r = write_file(file, id);
	} else if ((r = read_ids(dir, "tasks", &tids, &n)) == 0) {
		for (i = 0; i < n; i++) {
			/* only the threads of the process the pidfd holds */
			snprintf(probe, sizeof(probe), "/proc/%d/task/%d", (int)pid, (int)tids[i]);
			if (access(probe, F_OK) < 0)
				continue;
			snprintf(id, sizeof(id), "%d", (int)tids[i]);
			if ((err = write_file(file, id)) < 0 && err != -ESRCH)
				r = err;
		}
		free(tids);
	}
	if (r < 0 && r != -ESRCH) {
		log_warnx("move %d from %s to %s: %s", (int)pid, dir, dst, strerror(-r));
		return r;
	}
	/* a process that ended meanwhile had its pid written, not another's */
	return pidfd_pid(pidfd, &after) == 0 && after != pid ? -ESRCH : 0;
}

/*
 * One pass over the VS's directory in hierarchy h: each process found is
 * sorted, then killed or moved out, through a pidfd opened while it is still
 * seen in the directory (a pid reused by a process elsewhere is never hit).
 * Returns how many processes were found, or -errno from sort() or a move.
 */
static int
clear_pass(struct cg_ctx *cg, int h, const char *dir, cg_sort_fn sort, void *arg)
{
	pid_t *pids, *again;
	size_t n, m, i;
	int found = 0, r = 0, fd;

	if (read_ids(dir, "cgroup.procs", &pids, &n) < 0)
		return 0;	/* removed already */
	if (n > 0 && !sort && cg->hier[h].ops->kill_all(dir) == 0) {
		free(pids);
		return (int)n;
	}
	for (i = 0; i < n && r >= 0; i++) {
		const char *to = NULL;

		found++;
		if ((fd = (int)syscall(SYS_pidfd_open, pids[i], 0)) < 0)
			continue;
		if (read_ids(dir, "cgroup.procs", &again, &m) == 0) {
			if (pid_in(again, m, pids[i])) {
				r = sort ? sort(pids[i], arg, &to) : CG_KILL;
				if (r == CG_MOVE)
					r = move_out(cg, h, dir, pids[i], fd, to);
				else if (r == CG_KILL)
					syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
			}
			free(again);
		}
		close(fd);
	}
	free(pids);
	return r < 0 && r != -ESRCH ? r : found;
}

int
cg_vs_clear(struct cg_ctx *cg, const struct vs *vs, cg_sort_fn sort, void *arg)
{
	char dir[PATH_MAX];
	int i, round, left, busy, r;

	for (round = 0; round < 250; round++) {
		left = 0;
		for (i = 0; i < cg->nhier; i++) {
			if ((r = cg_vs_path(cg, i, vs->name, dir, sizeof(dir))) < 0)
				return r;
			if ((r = clear_pass(cg, i, dir, sort, arg)) < 0)
				return r;
			left += r;
		}
		if (left > 0) {
			sleep_ms(20);
			continue;
		}
		/* Empty now; but a task may come in before the rmdir (the accept
		 * gate re-binds threads at any time), and a killed one leaves
		 * its cgroup a moment after it is reaped: then clear again. */
		busy = 0;
		for (i = cg->nhier - 1; i >= 0; i--) {
			if (cg_vs_path(cg, i, vs->name, dir, sizeof(dir)) < 0)
				continue;
			if (cg->rmdir_hook)
				cg->rmdir_hook(dir);
			if (rmdir(dir) < 0 && errno != ENOENT) {
				if (errno != EBUSY) {
					log_warn("%s: rmdir %s", vs->name, dir);
					return -errno;
				}
				busy = 1;
			}
		}
		if (!busy)
			return 0;
		sleep_ms(20);
	}
	log_warnx("%s: processes still there after 5 s of SIGKILL", vs->name);
	return -EBUSY;
}

/* Where pid sits now in hierarchy h, as a directory, for rolling back a move. */
static int
current_dir(const struct cg_ctx *cg, int h, pid_t pid, char *buf, size_t len)
{
	char proc[64], own[PATH_MAX];
	int r;

	snprintf(proc, sizeof(proc), "/proc/%d/cgroup", (int)pid);
	if ((r = own_cgroup(proc, cg->hier[h].ctl[0] ? cg->hier[h].ctl : NULL, own, sizeof(own))) < 0)
		return r;
	return path_fmt(buf, len, "%s%s", cg->hier[h].mnt, own);
}

int
cg_pid_vs(const struct cg_ctx *cg, pid_t pid, char *name, size_t len)
{
	int h = hier_with(cg, CG_R_PRIMARY), r;
	char dir[PATH_MAX];
	size_t n;

	if (h < 0)
		return -ENOENT;
	if ((r = current_dir(cg, h, pid, dir, sizeof(dir))) < 0)
		return r;
	n = strlen(cg->hier[h].base);
	/* <base>/<name>, one level below the root: a VS, not the root or a leaf of ours */
	if (strncmp(dir, cg->hier[h].base, n) != 0 || dir[n] != '/' || strchr(dir + n + 1, '/') ||
	    !vs_name_valid(dir + n + 1))
		return -ENOENT;
	return snprintf(name, len, "%s", dir + n + 1) < (int)len ? 0 : -ENAMETOOLONG;
}

int
cg_vs_attach(struct cg_ctx *cg, const struct vs *vs, int pidfd)
{
	char dir[PATH_MAX], path[PATH_MAX], old[CG_HIER_MAX][PATH_MAX], spid[32];
	pid_t pid, after;
	int i, j, r;

	if ((r = pidfd_pid(pidfd, &pid)) < 0)
		return r;
	for (i = 0; i < cg->nhier; i++)
		if ((r = current_dir(cg, i, pid, old[i], sizeof(old[i]))) < 0)
			return r == -ENOENT ? -ESRCH : r;
	snprintf(spid, sizeof(spid), "%d", (int)pid);
	for (i = 0; i < cg->nhier; i++) {
		if ((r = cg_vs_path(cg, i, vs->name, dir, sizeof(dir))) < 0 ||
		    (r = path_fmt(path, sizeof(path), "%s/cgroup.procs", dir)) < 0 ||
		    (r = write_file(path, spid)) < 0) {
			log_warnx("%s: move %d into %s: %s", vs->name, (int)pid, dir, strerror(-r));
			/* Half in a VS is worse than not in it: put it back. */
			for (j = 0; j < i; j++)
				if (path_fmt(path, sizeof(path), "%s/cgroup.procs", old[j]) == 0)
					write_file(path, spid);
			return r;
		}
	}
	/* The pidfd tells whether the process we meant is still the one behind pid. */
	if ((r = pidfd_pid(pidfd, &after)) < 0 || after != pid)
		return -ESRCH;
	return 0;
}

int
cg_vs_usage(const struct cg_ctx *cg, const struct vs *vs, struct cg_usage *u)
{
	char dir[PATH_MAX];
	int i, r;

	memset(u, 0, sizeof(*u));
	for (i = 0; i < cg->nhier; i++) {
		const struct cg_hier *h = &cg->hier[i];

		if ((r = cg_vs_path(cg, i, vs->name, dir, sizeof(dir))) < 0)
			return r;
		if ((h->roles & CG_R_CPUACCT) && (r = h->ops->cpu_usage(dir, &u->cpu_usec)) < 0)
			return r;
		if ((h->roles & CG_R_MEM) && (r = h->ops->mem_usage(dir, &u->mem_bytes)) < 0)
			return r;
		if ((h->roles & CG_R_PIDS) && (r = h->ops->pids_usage(dir, &u->pids)) < 0)
			return r;
	}
	return 0;
}

int
cg_vs_bpf_path(const struct cg_ctx *cg, const struct vs *vs, char *buf, size_t len)
{
	int h = hier_with(cg, CG_R_BPF);

	if (h < 0)
		return -ENOENT;
	return cg_vs_path(cg, h, vs->name, buf, len);
}

int
cg_root_path(const struct cg_ctx *cg, unsigned role, char *buf, size_t len)
{
	int h = hier_with(cg, role);

	if (h < 0)
		return -ENOENT;
	return path_fmt(buf, len, "%s", cg->hier[h].base);
}
