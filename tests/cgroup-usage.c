// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cgroup-usage DIR: the CPU time (ns) a cgroup has used, read through the
 * same backend call the accept gate uses (cg_usage_fast in lib/cgroup-fast.c):
 * cpuacct.usage on a v1 cpuacct directory, cpu.stat's usage_usec on a pure
 * cgroup-v2 host. The tests read usage with it, so they hold on v1, hybrid
 * and pure v2 hosts alike.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/cgroup.h"

int
main(int argc, char **argv)
{
	uint64_t ns;
	int fd = -1, r;

	if (argc != 2) {
		fprintf(stderr, "usage: cgroup-usage DIR\n");
		return 2;
	}
	if ((r = cg_usage_fast(argv[1], cg_pure_v2("/sys/fs/cgroup"), &ns, &fd)) < 0) {
		fprintf(stderr, "cgroup-usage: %s: %s\n", argv[1], strerror(-r));
		return 1;
	}
	printf("%" PRIu64 "\n", ns);
	return 0;
}
