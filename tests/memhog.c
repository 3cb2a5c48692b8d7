// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * memhog MIB [HOLD]: allocate and touch MIB mebibytes, one at a time, then
 * exit 0, or with HOLD print "held" and keep them for HOLD seconds first
 * (tests/vsd-metrics.sh reads the VS's memory meanwhile).
 * In a VS whose memory limit is lower, the kernel's OOM killer ends it
 * (tests/vsd-events.sh checks the VS's oom_kill counter rises). Each page
 * is written, so the memory is really charged, not only reserved.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	long i, mib = argc > 1 ? strtol(argv[1], NULL, 10) : 0;

	if (mib <= 0) {
		fprintf(stderr, "usage: memhog MIB\n");
		return 2;
	}
	for (i = 0; i < mib; i++) {
		char *p = malloc(1 << 20);

		if (!p) {
			fprintf(stderr, "memhog: malloc failed after %ld MiB\n", i);
			return 1;
		}
		memset(p, 0x5a, 1 << 20);
	}
	printf("memhog: %ld MiB allocated\n", mib);
	if (argc > 2) {
		printf("held\n");
		fflush(stdout);
		sleep((unsigned)strtoul(argv[2], NULL, 10));
	}
	return 0;
}
