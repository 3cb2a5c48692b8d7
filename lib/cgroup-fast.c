// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cgroup backend's hot path, for the accept gate: moving a thread and
 * reading a VS's CPU usage once per accept, through descriptors kept open
 * (one pwrite or pread, no path lookup), and the hierarchy keys vsd's VS
 * table ("gatetable", vsd/cmd-gate.c) names directories by.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC	0x63677270
#endif

const char *const cg_kind_key[CG_KIND_MAX] = {
	[CG_KIND_CPU] = "cpu", [CG_KIND_CPUACCT] = "cpuacct", [CG_KIND_MEMORY] = "memory",
	[CG_KIND_PIDS] = "pids", [CG_KIND_UNIFIED] = "unified",
};

const char *
cg_hier_key(const struct cg_hier *h)
{
	return h->ctl[0] ? h->ctl : cg_kind_key[CG_KIND_UNIFIED];
}

int
cg_pure_v2(const char *mnt_root)
{
	struct statfs sfs;

	return statfs(mnt_root, &sfs) == 0 && (unsigned long)sfs.f_type == CGROUP2_SUPER_MAGIC;
}

/* dir/file opened once; *fd < 0 means "not yet". */
static int
open_cached(const char *dir, const char *file, int flags, int *fd)
{
	char path[PATH_MAX];
	int r;

	if (*fd >= 0)
		return 0;
	if ((r = path_fmt(path, sizeof(path), "%s/%s", dir, file)) < 0)
		return r;
	if ((*fd = open(path, flags | O_CLOEXEC)) < 0) {
		r = -errno;
		log_warn("%s: open %s", __func__, path);
		return r;
	}
	return 0;
}

int
cg_move_fast(const char *dir, int v2, pid_t pid, int *fd)
{
	char buf[16];
	int n, r;

	/* v1 "tasks" moves one thread; cgroup.procs a whole process */
	if ((r = open_cached(dir, v2 ? "cgroup.procs" : "tasks", O_WRONLY, fd)) < 0)
		return r;
	n = snprintf(buf, sizeof(buf), "%d", (int)pid);
	if (pwrite(*fd, buf, (size_t)n, 0) != n) {
		r = -errno;
		/* ESRCH: the thread just exited; ENODEV/ENOENT: the VS is gone */
		if (r != -ESRCH) {
			log_warn("%s: move %d to %s", __func__, (int)pid, dir);
			close(*fd);
			*fd = -1;
		}
		return r;
	}
	return 0;
}

int
cg_parse_usage(const char *text, int v2, uint64_t *ns)
{
	const char *p = text;
	char *end;

	/* cgroup2 cpu.stat starts with "usage_usec N" (Linux 4.15+) */
	if (v2 && !(p = strstr(text, "usage_usec ")))
		return -EINVAL;
	if (v2)
		p += strlen("usage_usec ");
	*ns = strtoull(p, &end, 10);
	if (end == p)
		return -EINVAL;
	if (v2)
		*ns *= 1000;
	return 0;
}

int
cg_usage_fast(const char *dir, int v2, uint64_t *ns, int *fd)
{
	char buf[512];
	ssize_t n;
	int r;

	if ((r = open_cached(dir, v2 ? "cpu.stat" : "cpuacct.usage", O_RDONLY, fd)) < 0)
		return r;
	if ((n = pread(*fd, buf, sizeof(buf) - 1, 0)) < 0) {
		r = -errno;
		close(*fd);
		*fd = -1;
		return r;
	}
	buf[n] = '\0';
	return cg_parse_usage(buf, v2, ns);
}
