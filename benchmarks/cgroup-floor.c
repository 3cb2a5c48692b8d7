// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cgroup-floor: the kernel's floor for making N VSs' cgroups, the baseline
 * of benchmarks/rules-provider. In each given hierarchy directory (a vsd's
 * still empty cgroup-root), it makes .floor/s00000 .. s<N-1> and writes the
 * limit files a capped VS gets (a share, a CPU cap, memory and pids limits,
 * the same values as the provider file's bronze plan), as cheaply as user
 * space can: mkdirat and openat relative to directory descriptors, one
 * write each, no reads. The caller times it, as it times vsctl.
 *
 *   cgroup-floor make N DIR...		make them (all removed again on failure)
 *   cgroup-floor remove N DIR...	remove them and .floor
 *
 * Prints the CPU time it used (user + system, us): on a shared machine,
 * the work done, where the elapsed time also counts waiting for a CPU.
 *
 * A file is written where the hierarchy has
 * it (checked once, on .floor): cpu.shares and cpu.cfs_quota_us in a v1 cpu
 * hierarchy, memory.limit_in_bytes, pids.max; cpu.weight, cpu.max,
 * memory.max, pids.max on cgroup2 with the controllers enabled (in .floor's
 * cgroup.subtree_control, as vsd does in its root). A hybrid host's cgroup2
 * directory has none of them: a mkdir only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"

/* The bronze plan: cpu 0.01%, cpu-max 12.5% of 2 CPUs, mem 256M, pids 64. */
static const struct { const char *file, *val; } limits[] = {
	{ "cpu.shares", "2" },
	{ "cpu.cfs_quota_us", "25000" },
	{ "memory.limit_in_bytes", "268435456" },
	{ "cpu.weight", "1" },
	{ "cpu.max", "25000 100000" },
	{ "memory.max", "268435456" },
	{ "pids.max", "64" },
};

#define NLIM	ARRAY_SIZE(limits)
#define MAXH	8

/* Remove .floor/s00000 .. s<n-1> and .floor in each directory; 0 or 1. */
static int
remove_all(uint64_t n, int nh, char **dirs)
{
	char name[16], path[4096];
	int h, fd, bad = 0;
	uint64_t i;

	for (h = 0; h < nh; h++) {
		if (path_fmt(path, sizeof(path), "%s/.floor", dirs[h]) < 0 ||
		    (fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			continue;	/* nothing made there */
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "s%05u", (unsigned)i);
			if (unlinkat(fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT) {
				fprintf(stderr, "cgroup-floor: rmdir %s/%s: %s\n", path, name,
					strerror(errno));
				bad = 1;
			}
		}
		close(fd);
		if (rmdir(path) < 0) {
			fprintf(stderr, "cgroup-floor: rmdir %s: %s\n", path, strerror(errno));
			bad = 1;
		}
	}
	return bad;
}

int
main(int argc, char **argv)
{
	int rootfd[MAXH], has[MAXH][NLIM], nh = argc - 3, h, fd, bad = 0;
	static const char *const v2_ctl[] = { "+cpu", "+memory", "+pids" };
	char name[16], ctl[256], **dirs = argv + 3;
	const char *why;
	uint64_t n, i;
	size_t k;

	if (argc < 4 || nh > MAXH || (strcmp(argv[1], "make") && strcmp(argv[1], "remove"))) {
		fprintf(stderr, "usage: cgroup-floor make|remove N DIR... (at most %d)\n", MAXH);
		return 2;
	}
	if (parse_u64(argv[2], 1, 100000, &n, &why) < 0) {
		fprintf(stderr, "cgroup-floor: N '%s' %s\n", argv[2], why);
		return 2;
	}
	if (strcmp(argv[1], "remove") == 0) {
		bad = remove_all(n, nh, dirs);
		goto out;
	}
	for (h = 0; h < nh; h++) {
		char path[4096];

		if (path_fmt(path, sizeof(path), "%s/.floor", dirs[h]) < 0 ||
		    mkdir(path, 0755) < 0 ||
		    (rootfd[h] = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
			fprintf(stderr, "cgroup-floor: %s: %s\n", path, strerror(errno));
			remove_all(0, h, dirs);
			return 1;
		}
		/* cgroup2 with controllers (pure v2): enable them for the
		 * children, as vsd does for its VSs; one at a time, as any may
		 * be missing */
		if (read_file_at(rootfd[h], "cgroup.controllers", ctl, sizeof(ctl)) == 0 && ctl[0])
			for (k = 0; k < ARRAY_SIZE(v2_ctl); k++)
				write_file_at(rootfd[h], "cgroup.subtree_control", v2_ctl[k]);
		for (k = 0; k < NLIM; k++)
			has[h][k] = faccessat(rootfd[h], limits[k].file, F_OK, 0) == 0;
	}
	for (i = 0; i < n && !bad; i++) {
		snprintf(name, sizeof(name), "s%05u", (unsigned)i);
		for (h = 0; h < nh && !bad; h++) {
			if (mkdirat(rootfd[h], name, 0755) < 0 ||
			    (fd = openat(rootfd[h], name, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
				fprintf(stderr, "cgroup-floor: %s/.floor/%s: %s\n", dirs[h], name,
					strerror(errno));
				bad = 1;
				break;
			}
			for (k = 0; k < NLIM; k++) {
				int r;

				if (has[h][k] && (r = write_file_at(fd, limits[k].file, limits[k].val)) < 0) {
					fprintf(stderr, "cgroup-floor: %s/.floor/%s/%s: %s\n",
						dirs[h], name, limits[k].file, strerror(-r));
					bad = 1;
				}
			}
			close(fd);
		}
	}
	for (h = 0; h < nh; h++)
		close(rootfd[h]);
	if (bad)
		remove_all(n, nh, dirs);
out:
	{
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		printf("%lld\n", (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
		       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	}
	return bad;
}
