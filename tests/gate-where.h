// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where the calling thread runs: its cgroup in the cpu hierarchy (v1) and
 * in cgroup2; the answer line of the gate tests' servers names both
 * (tests/gate-server.c, tests/gate-escape.c).
 */
#ifndef VSD_TESTS_GATE_WHERE_H
#define VSD_TESTS_GATE_WHERE_H

#include <stdio.h>
#include <string.h>

static void
cgroup_of_self(char *cpu, size_t cl, char *cg2, size_t l2)
{
	char line[512];
	FILE *f = fopen("/proc/thread-self/cgroup", "re");

	snprintf(cpu, cl, "?");
	snprintf(cg2, l2, "?");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		b[strcspn(b, "\n")] = '\0';
		*b = '\0';
		if (strcmp(a + 1, "") == 0)
			snprintf(cg2, l2, "%s", b + 1);
		else if (strcmp(a + 1, "cpu") == 0 || strcmp(a + 1, "cpu,cpuacct") == 0)
			snprintf(cpu, cl, "%s", b + 1);
	}
	fclose(f);
	if (strcmp(cpu, "?") == 0)	/* pure v2: one hierarchy */
		snprintf(cpu, cl, "%s", cg2);
}

#endif
