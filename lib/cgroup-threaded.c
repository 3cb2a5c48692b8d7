// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A threaded child per VS (cgroup-handle.h, cg_threaded_*): where a move
 * takes the whole process (pure cgroup v2), one process's threads cannot
 * sit in different domain cgroups, but they can sit in different cgroups
 * of one threaded subtree, where the cpu controller works. The gate's
 * database mode (gates/accept/dbtree.c) keeps which child is whose; the
 * cgroup files are written here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-handle.h"

int
cg_threaded_root(pid_t tgid)
{
	char path[64], line[4096 + 8], dir[4096 + 32];
	FILE *f;
	int fd = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)tgid);
	if (!(f = fopen(path, "re")))
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s", line + 3);
			fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				fd = -errno;
			break;
		}
	fclose(f);
	return fd;
}

int
cg_threaded_child(int rootfd, const char *name)
{
	int fd, r;

	if (mkdirat(rootfd, name, 0755) < 0 && errno != EEXIST)
		return -errno;
	if ((fd = openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	if ((r = cg_writeat(fd, "cgroup.type", "threaded")) < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int
cg_threaded_cpu(int rootfd, int on)
{
	/* a threaded controller, allowed beside the processes of a thread root */
	return cg_writeat(rootfd, "cgroup.subtree_control", on ? "+cpu" : "-cpu");
}

static int
write_pid(int dfd, const char *file, pid_t pid)
{
	char s[16];

	snprintf(s, sizeof(s), "%d", (int)pid);
	return cg_writeat(dfd, file, s);
}

int
cg_threaded_join(int dfd, pid_t tgid)
{
	return write_pid(dfd, "cgroup.procs", tgid);
}

int
cg_threaded_move(int dfd, pid_t tid)
{
	return write_pid(dfd, "cgroup.threads", tid);
}

int
cg_threaded_tids(int dfd, char *buf, size_t len)
{
	return cg_readat(dfd, "cgroup.threads", buf, len);
}

void
cg_threaded_copy_cpu(int dfd, const struct cg_handle *v, const struct cg_bw *cap)
{
	char val[64];

	if (!v || !v->dir[CG_KIND_UNIFIED])
		return;
	if (cg_read(v->dir[CG_KIND_UNIFIED], "cpu.weight", val, sizeof(val)) >= 0) {
		val[strcspn(val, "\n")] = '\0';
		cg_writeat(dfd, "cpu.weight", val);
	}
	if (!cap) {
		if (cg_read(v->dir[CG_KIND_UNIFIED], "cpu.max", val, sizeof(val)) >= 0) {
			val[strcspn(val, "\n")] = '\0';
			cg_writeat(dfd, "cpu.max", val);
		}
		return;
	}
	/* burst <= quota at each step, or the kernel refuses the write */
	cg_writeat(dfd, "cpu.max.burst", "0");
	if (cap->quota)
		snprintf(val, sizeof(val), "%llu %llu", (unsigned long long)cap->quota,
			 (unsigned long long)cap->period);
	else
		snprintf(val, sizeof(val), "max %llu", (unsigned long long)cap->period);
	cg_writeat(dfd, "cpu.max", val);
	if (cap->burst) {
		/* absent before Linux 5.14: the cap holds, without a burst */
		snprintf(val, sizeof(val), "%llu", (unsigned long long)cap->burst);
		cg_writeat(dfd, "cpu.max.burst", val);
	}
}
