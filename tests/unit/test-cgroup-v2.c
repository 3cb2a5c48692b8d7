// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The pure cgroup-v2 backend against a temporary directory tree standing in
 * for /sys/fs/cgroup (our machines are hybrid, so the real v2 controllers are
 * not available here). The hooks play the kernel's part: mkdir creates the
 * interface files, rmdir removes them.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cgroup.h"
#include "tap.h"

static const char *const files[] = {
	"cgroup.procs", "cgroup.controllers", "cgroup.subtree_control", "cpu.weight", "cpu.max",
	"memory.max", "pids.max", "cpu.stat", "memory.current", "pids.current", "cgroup.kill",
	"memory.events", "pids.events",
};

static int
put(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	path_fmt(path, sizeof(path), "%s/%s", dir, file);
	if (!(f = fopen(path, "w")))
		return -errno;
	fputs(text, f);
	fclose(f);
	return 0;
}

static const char *
get(const char *dir, const char *file)
{
	static char buf[256];
	char path[PATH_MAX];

	path_fmt(path, sizeof(path), "%s/%s", dir, file);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return NULL;
	return buf;
}

static int
fake_mkdir(const char *dir)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(files); i++)
		put(dir, files[i], "");
	put(dir, "cgroup.controllers", "cpu memory pids");
	put(dir, "cpu.stat", "usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\n");
	put(dir, "memory.current", "4096");
	put(dir, "pids.current", "2");
	return 0;
}

static void
fake_rmdir(const char *dir)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		path_fmt(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
}

int
main(void)
{
	char top[] = "/tmp/vsd-test-cg2-XXXXXX", mnt[PATH_MAX], proc[PATH_MAX], dir[PATH_MAX];
	char base[PATH_MAX], daemon[PATH_MAX], bpf[PATH_MAX];
	struct cg_usage u;
	struct cg_ctx cg;
	struct vs vs = { .name = "www1", .id = 1, .lim = { 5000, 6000, 268435456, 64 } };
	struct vs_limits old;

	if (!mkdtemp(top)) {
		printf("1..0 # SKIP mkdtemp: %s\n", strerror(errno));
		return 0;
	}
	path_fmt(mnt, sizeof(mnt), "%s/cgroup", top);
	path_fmt(proc, sizeof(proc), "%s/proc-self-cgroup", top);
	mkdir(mnt, 0755);
	fake_mkdir(mnt);
	path_fmt(dir, sizeof(dir), "%s/system.slice", mnt);
	mkdir(dir, 0755);
	fake_mkdir(dir);
	path_fmt(dir, sizeof(dir), "%s/system.slice/vsd.service", mnt);
	mkdir(dir, 0755);
	fake_mkdir(dir);
	put(top, "proc-self-cgroup", "0::/system.slice/vsd.service\n");

	ok(cg_init_layout(&cg, CG_UNIFIED, mnt, proc, "vsd") == 0, "init unified layout");
	cg.mkdir_hook = fake_mkdir;
	cg.rmdir_hook = fake_rmdir;
	ok(cg.nhier == 1, "one hierarchy on pure v2");
	path_fmt(base, sizeof(base), "%s/system.slice/vsd.service/vsd", mnt);
	is_str(cg.hier[0].base, base, "VS tree under the cgroup vsd runs in");
	ok(cg_prepare(&cg) == 0, "prepare (delegation)");
	path_fmt(daemon, sizeof(daemon), "%s/.daemon", base);
	ok(get(daemon, "cgroup.procs") && atoi(get(daemon, "cgroup.procs")) == getpid(),
	   "vsd moved itself into <own>/vsd/.daemon first");
	is_str(get(dir, "cgroup.subtree_control"), "+cpu +memory +pids",
	       "controllers enabled in the cgroup vsd was started in");
	is_str(get(base, "cgroup.subtree_control"), "+cpu +memory +pids",
	       "controllers enabled for the VSs");

	/* The same, restarted: vsd now runs in .daemon and must find the same tree. */
	put(top, "proc-self-cgroup", "0::/system.slice/vsd.service/vsd/.daemon\n");
	ok(cg_init_layout(&cg, CG_UNIFIED, mnt, proc, "vsd") == 0 && strcmp(cg.hier[0].base, base) == 0,
	   "after a restart from .daemon, the tree is the same");
	cg.mkdir_hook = fake_mkdir;
	cg.rmdir_hook = fake_rmdir;

	ok(cg_vs_create(&cg, &vs) == 0, "create VS www1");
	path_fmt(dir, sizeof(dir), "%s/www1", base);
	is_str(get(dir, "cpu.weight"), "5000", "50%% -> cpu.weight 5000");
	/* 60% of a machine with ncpu CPUs: quota = 0.6 * ncpu * period */
	{
		char want[64];

		path_fmt(want, sizeof(want), "%u 100000", 60000 * cg.ncpu);
		is_str(get(dir, "cpu.max"), want, "cap 60%% -> cpu.max scaled by %u CPUs", cg.ncpu);
	}
	is_str(get(dir, "memory.max"), "268435456", "memory.max");
	is_str(get(dir, "pids.max"), "64", "pids.max");
	ok(cg_vs_bpf_path(&cg, &vs, bpf, sizeof(bpf)) == 0 && strcmp(bpf, dir) == 0,
	   "BPF attach point is the VS's own directory");
	ok(vs.cg2_id != 0, "cgroup id recorded");

	old = vs.lim;
	vs.lim.cpu_max = 0;
	vs.lim.mem_max = 0;
	vs.lim.pids_max = 0;
	put(dir, "cpu.weight", "untouched");
	ok(cg_vs_apply(&cg, &vs, &old) == 0, "clear the optional limits");
	is_str(get(dir, "cpu.max"), "max 100000", "cap cleared");
	is_str(get(dir, "memory.max"), "max", "memory limit cleared");
	is_str(get(dir, "pids.max"), "max", "pids limit cleared");
	is_str(get(dir, "cpu.weight"), "untouched", "an unchanged share is not rewritten");

	ok(cg_vs_usage(&cg, &vs, &u) == 0 && u.cpu_usec == 1234567 && u.mem_bytes == 4096 && u.pids == 2,
	   "usage from cpu.stat, memory.current, pids.current");
	/* limit events (lib/cgroup-events.c): the kernel's v2 files */
	{
		struct cg_stats st;

		put(dir, "cpu.stat", "usage_usec 1234567\nuser_usec 1\nsystem_usec 2\n"
		    "nr_periods 300\nnr_throttled 120\nthrottled_usec 4500000\n");
		put(dir, "memory.events", "low 0\nhigh 7\nmax 61\noom 3\noom_kill 2\noom_group_kill 0\n");
		put(dir, "pids.events", "max 5\n");
		ok(cg_vs_stats(&cg, &vs, &st) == 0 && st.cpu_usec == 1234567 && st.mem_bytes == 4096 &&
		   st.pids == 2, "stats: usage as cg_vs_usage reads it");
		ok(st.oom_kill == 2 && st.mem_high == 7 && st.mem_max == 61 && st.pids_max == 5,
		   "stats: memory.events oom_kill/high/max, pids.events max");
		ok(st.nr_periods == 300 && st.nr_throttled == 120 && st.throttled_usec == 4500000,
		   "stats: cpu.stat nr_periods, nr_throttled, throttled_usec");
		ok((st.have & (CG_ST_OOM | CG_ST_MEM_HIGH | CG_ST_MEM_MAX | CG_ST_PIDS_MAX | CG_ST_THROTTLE)) ==
		   (CG_ST_OOM | CG_ST_MEM_HIGH | CG_ST_MEM_MAX | CG_ST_PIDS_MAX | CG_ST_THROTTLE),
		   "stats: every counter present on v2");
		put(dir, "memory.events", "low 0\nhigh 0\nmax 0\noom 0\n");
		ok(cg_vs_stats(&cg, &vs, &st) == 0 && !(st.have & CG_ST_OOM) && (st.have & CG_ST_MEM_MAX),
		   "stats: a kernel without oom_kill (before 4.13) leaves it absent, not 0");
	}

	ok(cg_vs_remove(&cg, &vs) == 0 && access(dir, F_OK) < 0, "remove VS");

	/*
	 * A directory left from before (vsd's state lost, the cgroup kept) is
	 * adopted: every limit is written, also the ones the VS does not set,
	 * which a new directory has as the kernel's defaults already.
	 */
	{
		struct vs old_vs = { .name = "www2", .id = 2, .lim = { 100, 0, 0, 0 } };
		char dir2[PATH_MAX];

		path_fmt(dir2, sizeof(dir2), "%s/www2", base);
		mkdir(dir2, 0755);
		fake_mkdir(dir2);
		put(dir2, "cpu.max", "5000 100000");
		put(dir2, "memory.max", "1048576");
		put(dir2, "pids.max", "5");
		ok(cg_vs_create(&cg, &old_vs) == 0, "create VS www2 over a leftover directory");
		is_str(get(dir2, "cpu.weight"), "100", "adopted: share written");
		is_str(get(dir2, "cpu.max"), "max 100000", "adopted: a leftover cap is cleared");
		is_str(get(dir2, "memory.max"), "max", "adopted: a leftover memory limit is cleared");
		is_str(get(dir2, "pids.max"), "max", "adopted: a leftover pids limit is cleared");
		ok(cg_vs_remove(&cg, &old_vs) == 0 && access(dir2, F_OK) < 0, "remove VS www2");

		/* Made new: the unset limits are the kernel's defaults, not written. */
		old_vs.lim.cpu = 200;
		ok(cg_vs_create(&cg, &old_vs) == 0, "create VS www2 anew");
		is_str(get(dir2, "cpu.weight"), "200", "new: share written");
		is_str(get(dir2, "cpu.max"), "", "new: no cap, cpu.max not written");
		is_str(get(dir2, "pids.max"), "", "new: no pids limit, pids.max not written");
		ok(cg_vs_remove(&cg, &old_vs) == 0, "remove VS www2 again");
	}
	cg_release(&cg);
	ok(access(base, F_OK) == 0, "root kept while vsd's .daemon leaf is in it");

	/* Refusals: no cpu controller delegated. */
	put(top, "proc-self-cgroup", "0::/system.slice\n");
	path_fmt(dir, sizeof(dir), "%s/cgroup/system.slice", top);
	put(dir, "cgroup.controllers", "memory pids");
	ok(cg_init_layout(&cg, CG_UNIFIED, mnt, proc, "other") == 0 && cg_prepare(&cg) == -EOPNOTSUPP,
	   "prepare refuses when cpu is not delegated");
	ok(cg_init_layout(&cg, CG_UNIFIED, mnt, proc, "../x") == -EINVAL, "bad cgroup root name refused");

	{
		char cmd[PATH_MAX + 16];

		path_fmt(cmd, sizeof(cmd), "rm -rf %s", top);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", top);
	}
	return tap_done();
}
