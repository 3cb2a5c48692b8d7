// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * How full the socket gate's connection table gets before an insert finds
 * no free slot: fills a table of SLOTS slots (in memory, no BPF) with
 * random IPv4 4-tuples, placed as gates/socket/socket.bpf.c places them (the same
 * hash, linear probing over WINDOW slots), until the 100th refusal.
 * Prints, per seed, the entries at the first and at the 100th refusal.
 *
 *   conntab-fill [SLOTS [WINDOW [SEEDS]]]   (defaults: the gate's own)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gates/socket/socket.h"

int
main(int argc, char **argv)
{
	unsigned long slots = argc > 1 ? strtoul(argv[1], NULL, 0) : VSD_CONNS_MAX;
	unsigned window = argc > 2 ? atoi(argv[2]) : VSD_CONN_PROBE;
	int seeds = argc > 3 ? atoi(argv[3]) : 5, seed;
	double sum_first = 0, sum_100 = 0;
	unsigned char *used;

	if (!slots || (slots & (slots - 1)) || !window || seeds <= 0 ||
	    !(used = malloc(slots))) {
		fprintf(stderr, "usage: conntab-fill [SLOTS (a power of two) [WINDOW [SEEDS]]]\n");
		return 2;
	}
	for (seed = 1; seed <= seeds; seed++) {
		long n = 0, first = -1, fails = 0;

		memset(used, 0, slots);
		srand(seed);
		while (fails < 100) {
			struct vsd_conn_key k;
			unsigned h, i;

			memset(&k, 0, sizeof(k));
			k.family = 2;
			k.sport = 1024 + rand() % 64000;
			k.dport = 80 + rand() % 3;
			k.saddr[0] = 0x0100007f + ((unsigned)(rand() % 4) << 24);
			k.daddr[0] = 0x0100007f;
			h = vsd_conn_hash(&k);
			for (i = 0; i < window && used[(h + i) & (slots - 1)]; i++)
				;
			if (i < window) {
				used[(h + i) & (slots - 1)] = 1;
				n++;
			} else {
				if (first < 0)
					first = n;
				fails++;
			}
		}
		printf("seed %d: first refusal at %ld entries, 100th at %ld\n", seed, first, n);
		sum_first += first;
		sum_100 += n;
	}
	printf("%lu slots, window %u: mean first refusal at %.0f entries, 100th at %.0f\n",
	       slots, window, sum_first / seeds, sum_100 / seeds);
	free(used);
	return 0;
}
