/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cgroup backend. The layout (pure v2, hybrid, legacy v1) is detected once;
 * its differences stay in cgroup-v1.c and cgroup-v2.c behind struct cg_ops.
 * A VS has one directory per hierarchy in use:
 *   <mount of the hierarchy><cgroup vsd runs in>/<cgroup-root>/<vs name>
 */
#ifndef VSD_CGROUP_H
#define VSD_CGROUP_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "vs.h"

enum cg_layout { CG_UNIFIED, CG_HYBRID, CG_LEGACY };

/* What a hierarchy carries for us. */
#define CG_R_CPU	(1u << 0)	/* shares/weight and quota */
#define CG_R_CPUACCT	(1u << 1)	/* cpu usage */
#define CG_R_MEM	(1u << 2)
#define CG_R_PIDS	(1u << 3)
#define CG_R_BPF	(1u << 4)	/* cgroup2: where the gates attach */
#define CG_R_PRIMARY	(1u << 5)	/* the one whose cgroup.procs vsd reads */

/* Pure v2: the leaf of <root> that holds the process enabling controllers
 * for the VSs (not a valid VS name, so it cannot collide). */
#define CG_DAEMON_LEAF	".daemon"

struct cg_ctx;
struct cg_hier;
struct cg_stats;

/*
 * A limit as one interface file should hold it, read back: what the set_*
 * operation wrote, after the kernel's own rounding.
 */
struct cg_expect {
	const char	*limit;		/* "cpu", "cpu_max", "mem_max", "pids_max" */
	const char	*file;		/* "cpu.shares", "memory.max", ... */
	char		 want[48];
};
#define CG_EXPECT_MAX	4	/* per hierarchy */

struct cg_ops {
	const char *name;
	/* Make the hierarchy's cgroup-root directory (h->base, which exists) ready for VSs. */
	int (*prepare)(struct cg_ctx *cg, const struct cg_hier *h);
	/* The limits, written in the VS's directory dfd. fresh: the directory
	 * was made just now, so its files hold the kernel's defaults. */
	int (*set_cpu)(int dfd, unsigned bp);
	int (*set_cpu_max)(int dfd, unsigned bp, unsigned ncpu, int fresh);
	int (*set_mem)(int dfd, uint64_t bytes);
	int (*set_pids)(int dfd, uint64_t n);
	/* The value for a cap of bp in val; the file it is written to. */
	const char *(*cap_value)(unsigned bp, unsigned ncpu, char *val, size_t len);
	int (*cpu_usage)(const char *dir, uint64_t *usec);
	int (*mem_usage)(const char *dir, uint64_t *bytes);
	int (*pids_usage)(const char *dir, uint64_t *n);
	/* Usage and limit events of the hierarchy's roles in the VS directory
	 * dfd, added to st (cgroup-events.c). */
	int (*stats)(int dfd, unsigned roles, struct cg_stats *st);
	/* Kill every process in dir, or -EOPNOTSUPP if the hierarchy cannot. */
	int (*kill_all)(const char *dir);
	/* What the files of the hierarchy's roles (CG_R_*) hold once the set_*
	 * operations wrote l: at most CG_EXPECT_MAX entries into e; how many. */
	int (*expect)(unsigned roles, const struct vs_limits *l, unsigned ncpu,
		      struct cg_expect *e);
};

extern const struct cg_ops cg_v1_ops, cg_v2_ops;

#define CG_HIER_MAX	5

struct cg_hier {
	char		 mnt[PATH_MAX];		/* mount point */
	char		 base[PATH_MAX];	/* mnt + own cgroup + "/" + root */
	char		 own[PATH_MAX];		/* the cgroup vsd runs in, in this hierarchy */
	char		 ctl[16];		/* v1 controller name, "" for cgroup2 */
	unsigned	 roles;			/* CG_R_* */
	const struct cg_ops *ops;
	int		 basefd;		/* base, O_PATH; -1 until a VS is made */
};

struct cg_ctx {
	enum cg_layout	 layout;
	char		 root[64];		/* --cgroup-root */
	unsigned	 ncpu;
	int		 nhier;
	struct cg_hier	 hier[CG_HIER_MAX];
	/* Pure v2: the process that holds <root>/.daemon, so that the tree can
	 * enable controllers for its children. 0: vsd itself; on a systemd host
	 * the keeper of the VSs' scope (vsd/scope.c). */
	pid_t		 leaf_pid;
	/* Tests only: stand in for the kernel, which creates a cgroup's interface
	 * files on mkdir and removes them on rmdir. */
	int		(*mkdir_hook)(const char *dir);
	void		(*rmdir_hook)(const char *dir);
	/* Between cg_async_start and cg_async_finish: the caps of the VSs
	 * cg_vs_create makes are written by a second thread (cgroup-async.c). */
	struct cg_async	*async;
};

const char *cg_layout_name(enum cg_layout l);

/* Detect the layout under mnt_root ("/sys/fs/cgroup") and find vsd's own cgroup
 * from proc_cgroup ("/proc/self/cgroup"). Creates nothing. */
int cg_init(struct cg_ctx *cg, const char *mnt_root, const char *proc_cgroup, const char *root);
/* As cg_init, for a given layout; the unit tests use it on a directory tree. */
int cg_init_layout(struct cg_ctx *cg, enum cg_layout l, const char *mnt_root,
		   const char *proc_cgroup, const char *root);
/* Put the VSs under own (a cgroup2 path such as "/vsd.slice/vsd-x.scope")
 * instead of the cgroup vsd runs in; pure v2 only. */
int cg_set_own(struct cg_ctx *cg, const char *own);
/* Create the cgroup-root directories (and delegate controllers on v2). */
int cg_prepare(struct cg_ctx *cg);
/* Interface-file access for the backends: dir/file; 0 or -errno. */
int cg_write(const char *dir, const char *file, const char *val);
int cg_read(const char *dir, const char *file, char *buf, size_t len);
int cg_read_u64(const char *dir, const char *file, uint64_t *v);
/* The same, in the directory dfd: one lookup, not the walk of a long path. */
int cg_writeat(int dfd, const char *file, const char *val);
int cg_readat(int dfd, const char *file, char *buf, size_t len);
/* A limit: v in decimal, or the file's no-limit word when v is 0 (unset). */
int cg_write_limit(int dfd, const char *file, uint64_t v, const char *unset);
/* What cg_write_limit() leaves in the file, as a struct cg_expect. */
struct cg_expect cg_expect_limit(const char *limit, const char *file, uint64_t v,
				 const char *unset);
/* pids.current: the same file on v1 and v2. */
int cg_pids_current(const char *dir, uint64_t *n);

/* mkdir that adopts an existing directory; for the backends. */
int cg_mkdir(struct cg_ctx *cg, const char *dir);
/* Remove the cgroup-root directories if they are empty (no VSs left); on
 * pure v2 the .daemon leaf too, once the leaf_pid has left it. Closes the
 * descriptors cg_vs_create keeps. */
void cg_release(struct cg_ctx *cg);

int cg_vs_path(const struct cg_ctx *cg, int h, const char *vs, char *buf, size_t len);
/* The VS's directory in hierarchy h, O_PATH (relative to the hierarchy's
 * root when that is open); -errno. */
int cg_vs_dir_open(const struct cg_ctx *cg, int h, const char *vs);
int cg_vs_create(struct cg_ctx *cg, struct vs *vs);
int cg_vs_apply(struct cg_ctx *cg, const struct vs *vs, const struct vs_limits *old);
/* Write every limit of vs again, whatever the files hold now. */
int cg_vs_rewrite(struct cg_ctx *cg, const struct vs *vs);

/*
 * Drift: a limit the kernel holds differently from what vsd set, because
 * something else wrote the file (root inside a VS can). cg_vs_drift() fills
 * up to max entries and returns how many differ (an unreadable file counts,
 * with have ""), or -errno.
 */
struct cg_drift {
	const char	*limit, *file;
	char		 hier[16];	/* cg_hier_key(): "cpu", "memory", "unified", ... */
	char		 want[48], have[48];
};
#define CG_DRIFT_MAX	(CG_HIER_MAX * CG_EXPECT_MAX)
int cg_vs_drift(const struct cg_ctx *cg, const struct vs *vs, struct cg_drift *d, size_t max);
/* A cap in basis points of the whole machine as a CFS quota per 100 ms period. */
uint64_t cg_quota_us(unsigned bp, unsigned ncpu);
/* What a memory limit reads back as (the kernel keeps whole pages); 0: none. */
uint64_t cg_mem_readback(uint64_t bytes);
int cg_vs_exists(const struct cg_ctx *cg, const struct vs *vs);	/* 1, 0 */
/*
 * Making many VSs: from cg_async_start on, cg_vs_create leaves the CPU cap
 * of a new directory to a second thread, so that the kernel's walk of every
 * task group on each cap overlaps the making of the next VSs. Call
 * cg_async_finish before relying on the caps (and before removing the
 * VSs made): it waits for every write and returns the first error.
 */
int cg_async_start(struct cg_ctx *cg);
int cg_async_finish(struct cg_ctx *cg);
/* Queue a write of val to fd (an open file, closed once written). */
int cg_async_write(struct cg_ctx *cg, int fd, const char *val, const char *name);
int cg_vs_remove(struct cg_ctx *cg, const struct vs *vs);
/*
 * Empty the VS and remove its directories. sort(pid, arg, &to) says what
 * becomes of each process found in them: CG_KILL (SIGKILL), or CG_MOVE to the
 * VS named *to (in each hierarchy where it is in this VS: v1 per thread),
 * or a -errno that stops here. A NULL sort kills everything (cgroup.kill
 * where there is one). Repeated until the kernel lets every directory go: a
 * process may enter meanwhile (the accept gate re-binds threads at any
 * time). 0, -EBUSY after 5 s, or -errno.
 */
enum { CG_KILL, CG_MOVE };
typedef int (*cg_sort_fn)(pid_t pid, void *arg, const char **to);
int cg_vs_clear(struct cg_ctx *cg, const struct vs *vs, cg_sort_fn sort, void *arg);
/* Move a process (given as a pidfd) into the VS in every hierarchy. */
int cg_vs_attach(struct cg_ctx *cg, const struct vs *vs, int pidfd);
/* The name of the VS pid sits in (the primary hierarchy), or -ENOENT. */
int cg_pid_vs(const struct cg_ctx *cg, pid_t pid, char *name, size_t len);
/* pids in the VS (primary hierarchy); *pids is malloc'd. */
int cg_vs_procs(const struct cg_ctx *cg, const struct vs *vs, pid_t **pids, size_t *n);
/* The same in every hierarchy, each pid once (a process may be in the VS in
 * one hierarchy only: a thread the accept gate bound there). */
int cg_vs_pids_all(const struct cg_ctx *cg, const struct vs *vs, pid_t **pids, size_t *n);

struct cg_usage {
	uint64_t cpu_usec;
	uint64_t mem_bytes;
	uint64_t pids;
};
int cg_vs_usage(const struct cg_ctx *cg, const struct vs *vs, struct cg_usage *u);

/*
 * Usage and limit events from the kernel's counters (cgroup-events.c has the
 * file behind each): have says which this layout and kernel provide (v1
 * has no memory.high, so no CG_ST_MEM_HIGH). Every counter only grows.
 */
#define CG_ST_CPU	(1u << 0)
#define CG_ST_MEM	(1u << 1)
#define CG_ST_PIDS	(1u << 2)
#define CG_ST_OOM	(1u << 3)
#define CG_ST_MEM_HIGH	(1u << 4)
#define CG_ST_MEM_MAX	(1u << 5)
#define CG_ST_PIDS_MAX	(1u << 6)
#define CG_ST_THROTTLE	(1u << 7)
struct cg_stats {
	unsigned have;			/* CG_ST_* */
	uint64_t cpu_usec, mem_bytes, pids;
	uint64_t oom_kill;		/* processes the OOM killer killed */
	uint64_t mem_high;		/* v2: usage went over memory.high */
	uint64_t mem_max;		/* usage hit the limit (v1: memory.failcnt) */
	uint64_t pids_max;		/* forks refused at pids.max */
	uint64_t nr_periods, nr_throttled, throttled_usec;	/* the CPU cap */
};
int cg_vs_stats(const struct cg_ctx *cg, const struct vs *vs, struct cg_stats *st);
int cg_v1_stats(int dfd, unsigned roles, struct cg_stats *st);
int cg_v2_stats(int dfd, unsigned roles, struct cg_stats *st);
/* The value of "key N" in the text of a flat-keyed file; -ENOENT if absent. */
int cg_parse_key(const char *text, const char *key, uint64_t *v);
/* The cgroup2 directory of the VS (for BPF), or -ENOENT on legacy hosts. */
int cg_vs_bpf_path(const struct cg_ctx *cg, const struct vs *vs, char *buf, size_t len);
/* The cgroup-root directory (<mount><own cgroup>/<root>, not made here) of
 * the first hierarchy with role (CG_R_*), or -ENOENT: where a benchmark that
 * needs one cgroup of its own makes it, below the cgroup it runs in. */
int cg_root_path(const struct cg_ctx *cg, unsigned role, char *buf, size_t len);

/*
 * The hot path (cgroup-fast.c), for the accept gate (which reaches it through
 * its per-VS handle, cgroup-handle.h): each call goes through a
 * descriptor the caller keeps (*fd, -1 at first; closed again on errors).
 */
/* The hierarchies a VS table names a VS's directories by, and their keys. */
enum cg_kind { CG_KIND_CPU, CG_KIND_CPUACCT, CG_KIND_MEMORY, CG_KIND_PIDS, CG_KIND_UNIFIED,
	       CG_KIND_MAX };
extern const char *const cg_kind_key[CG_KIND_MAX];
/* The key of a hierarchy of ours: its v1 controller, or "unified". */
const char *cg_hier_key(const struct cg_hier *h);
/* 1 if mnt_root ("/sys/fs/cgroup") is a pure cgroup-v2 mount. */
int cg_pure_v2(const char *mnt_root);
/* Move pid into dir: one thread through v1 "tasks", a process through v2
 * "cgroup.procs". -ESRCH if it has exited. */
int cg_move_fast(const char *dir, int v2, pid_t pid, int *fd);
/* dir's CPU usage in ns: v1 cpuacct.usage, v2 cpu.stat's usage_usec. */
int cg_usage_fast(const char *dir, int v2, uint64_t *ns, int *fd);
/* The same, from a file's text. */
int cg_parse_usage(const char *text, int v2, uint64_t *ns);

/* pid of a pidfd, from /proc/self/fdinfo; -ESRCH if it has exited. */
int pidfd_pid(int pidfd, pid_t *pid);

#endif
