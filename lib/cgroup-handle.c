// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's handle on a VS's cgroups (cgroup-handle.h): what a
 * re-binding moves, per layout.
 *
 * A move is the expensive part of the gate: the writer side of
 * cgroup_threadgroup_rwsem waits for an RCU grace period (docs/DESIGN.md,
 * #rebind-cost). So only what is needed moves:
 *
 * - Hybrid host: the thread moves in the v1 cpu hierarchy (the scheduler
 *   acts there) and cpuacct (usage is read there) by writing its TID to
 *   "tasks": a per-thread move, the cheapest one measured. Memory and pids
 *   stay with the home VS (v1 does not move charges with a task anyway).
 *   The cgroup2 membership only matters for sockets the thread creates (the
 *   socket gate's BPF sees the creator's cgroup2); the accepted socket was
 *   already classified. So the cgroup2 move - a whole-process cgroup.procs
 *   write, the slowest kind - is a call of its own (cgh_move_cgroup2()),
 *   which the gate makes lazily, when a bound thread creates a socket.
 * - Pure v2: threads of one process cannot sit in different domain cgroups,
 *   and VS cgroups must stay domain cgroups for memory and pids. So the whole
 *   process moves (cgroup.procs). For a single-threaded service (the paper's
 *   FastCGI server, PHP-FPM workers, Apache prefork) that is exact; for a
 *   multi-threaded one the last thread to accept decides the binding of all.
 *
 * The layout is the host's, read once (statfs of /sys/fs/cgroup).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-handle.h"
#include "util.h"

static int pure = -1;	/* pure cgroup v2; -1: not read yet */

void
cgh_assume_layout(enum cg_layout l)
{
	pure = l == CG_UNIFIED;
}

int
cgh_moves_process(void)
{
	if (pure < 0)
		pure = cg_pure_v2("/sys/fs/cgroup");
	return pure;
}

static int
key_of(const char *key, size_t len)
{
	int k;

	for (k = 0; k < CG_KIND_MAX; k++)
		if (strlen(cg_kind_key[k]) == len && strncmp(key, cg_kind_key[k], len) == 0)
			return k;
	return -1;
}

int
cgh_add(struct cg_handle *h, const char *tok)
{
	const char *eq = strchr(tok, '=');
	char *d;
	int k;

	if (!eq || eq[1] != '/' || (k = key_of(tok, (size_t)(eq - tok))) < 0)
		return 0;
	if (!(d = strdup(eq + 1)))
		return -ENOMEM;
	if (h->dir[k]) {	/* named twice: the last one holds */
		free(h->dir[k]);
		if (h->wfd[k] >= 0)
			close(h->wfd[k]);
		if (h->rfd[k] >= 0)
			close(h->rfd[k]);
	}
	h->dir[k] = d;
	h->wfd[k] = h->rfd[k] = -1;
	if (k == CG_KIND_UNIFIED)
		h->cg2_id = 0;
	return 1;
}

int
cgh_same(const struct cg_handle *a, const struct cg_handle *b)
{
	int k;

	for (k = 0; k < CG_KIND_MAX; k++)
		if ((a->dir[k] == NULL) != (b->dir[k] == NULL) ||
		    (a->dir[k] && strcmp(a->dir[k], b->dir[k]) != 0))
			return 0;
	return 1;
}

void
cgh_take(struct cg_handle *to, struct cg_handle *from)
{
	int k;

	for (k = 0; k < CG_KIND_MAX; k++) {
		if (!to->dir[k] || !from->dir[k])
			continue;
		if (to->wfd[k] < 0) {
			to->wfd[k] = from->wfd[k];
			from->wfd[k] = -1;
		}
		if (to->rfd[k] < 0) {
			to->rfd[k] = from->rfd[k];
			from->rfd[k] = -1;
		}
	}
}

void
cgh_close(struct cg_handle *h)
{
	int k;

	/* a descriptor counts only beside its directory: a zeroed handle
	 * has none open, whatever its zero fields say */
	for (k = 0; k < CG_KIND_MAX; k++) {
		if (!h->dir[k])
			continue;
		if (h->wfd[k] >= 0)
			close(h->wfd[k]);
		if (h->rfd[k] >= 0)
			close(h->rfd[k]);
		free(h->dir[k]);
	}
	memset(h, 0, sizeof(*h));
}

/* One write through the hot path (cgroup-fast.c): one thread via v1
 * "tasks", a process via cgroup2's "cgroup.procs". */
static int
move_in(struct cg_handle *h, int k, pid_t pid)
{
	if (!h->dir[k])
		return -ENOENT;
	return cg_move_fast(h->dir[k], k == CG_KIND_UNIFIED, pid, &h->wfd[k]);
}

int
cgh_move(struct cg_handle *h, pid_t tid, pid_t tgid)
{
	int r;

	if (cgh_moves_process())
		return (r = move_in(h, CG_KIND_UNIFIED, tgid)) < 0 ? r : CGH_PROCESS;
	if ((r = move_in(h, CG_KIND_CPU, tid)) < 0)
		return r;
	/* cpu and cpuacct are often co-mounted ("cpu,cpuacct"): one write then */
	if (h->dir[CG_KIND_CPUACCT] && (!h->dir[CG_KIND_CPU] ||
	    strcmp(h->dir[CG_KIND_CPU], h->dir[CG_KIND_CPUACCT]) != 0) &&
	    (r = move_in(h, CG_KIND_CPUACCT, tid)) < 0)
		return r;
	return CGH_THREAD;
}

int
cgh_cgroup2_apart(const struct cg_handle *h)
{
	return !cgh_moves_process() && h->dir[CG_KIND_UNIFIED] != NULL;
}

int
cgh_move_cgroup2(struct cg_handle *h, pid_t tgid)
{
	if (cgh_moves_process())
		return 0;
	return move_in(h, CG_KIND_UNIFIED, tgid);
}

int
cgh_join(const struct cg_handle *h, pid_t pid, const char **failed)
{
	char s[16];
	int k, r;

	/* cgroup.procs moves the whole process, in v1 as in cgroup2 */
	snprintf(s, sizeof(s), "%d", (int)pid);
	for (k = 0; k < CG_KIND_MAX; k++)
		if (h->dir[k] && (r = cg_write(h->dir[k], "cgroup.procs", s)) < 0) {
			*failed = h->dir[k];
			return r;
		}
	return 0;
}

int
cgh_usage(struct cg_handle *h, uint64_t *ns)
{
	/* v1 cpuacct.usage where there is a cpuacct hierarchy of its own,
	 * else cgroup2's cpu.stat */
	int k = h->dir[CG_KIND_CPUACCT] ? CG_KIND_CPUACCT : CG_KIND_UNIFIED;
	int r;

	if (!h->dir[k])
		return -ENOENT;
	if ((r = cg_usage_fast(h->dir[k], k == CG_KIND_UNIFIED, ns, &h->rfd[k])) < 0 &&
	    h->rfd[k] >= 0) {
		/* the VS may have just been destroyed: open it afresh next time */
		close(h->rfd[k]);
		h->rfd[k] = -1;
	}
	return r;
}

int
cgh_warm_file(const struct cg_handle *h, char *buf, size_t len)
{
	int k = CG_KIND_UNIFIED;

	/* the helper has one thread: v1 "tasks" moves just that, and is the
	 * file the gate's own per-thread moves write */
	if (!cgh_moves_process() && h->dir[CG_KIND_CPU])
		k = CG_KIND_CPU;
	if (!h->dir[k])
		return -ENOENT;
	return path_fmt(buf, len, "%s/%s", h->dir[k],
	    k == CG_KIND_UNIFIED ? "cgroup.procs" : "tasks");
}

uint64_t
cgh_cg2_id(struct cg_handle *h)
{
	struct stat st;

	if (h->cg2_id == 0)
		h->cg2_id = h->dir[CG_KIND_UNIFIED] && stat(h->dir[CG_KIND_UNIFIED], &st) == 0 ?
		    (uint64_t)st.st_ino : UINT64_MAX;
	return h->cg2_id;
}
