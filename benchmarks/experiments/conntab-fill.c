// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * How full the socket gate's connection table gets before an insert finds
 * no free slot: fills a table of SLOTS slots (in memory, no BPF) with
 * random IPv4 4-tuples, placed as gates/socket/socket.bpf.c places them (the same
 * hash, linear probing over WINDOW slots), until the 100th refusal.
 * Prints, per seed, the entries at the first and at the 100th refusal.
 *
 * With LOAD: keeps LOAD connections open instead, closing a random one and
 * opening a new one 3,000,000 times (a deleted slot is free again, as a
 * tombstone is), and prints the refusals per seed: how full the table may
 * be kept and still take every insert (the share vsd hands out, socket.h).
 *
 *   conntab-fill [SLOTS [WINDOW [SEEDS [LOAD]]]]   (defaults: the gate's own)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gates/socket/socket.h"

/* A random key, as below; its slot, or -1 if its window is full. */
static long
place(unsigned char *used, unsigned long slots, unsigned window)
{
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
	if (i == window)
		return -1;
	used[(h + i) & (slots - 1)] = 1;
	return (h + i) & (slots - 1);
}

static int
churn(unsigned long slots, unsigned window, int seeds, long load, unsigned char *used)
{
	long *at = calloc(load, sizeof(*at)), i, j, fails, total = 0;
	int seed;

	if (!at)
		return 2;
	for (seed = 1; seed <= seeds; seed++) {
		memset(used, 0, slots);
		srand(seed);
		fails = 0;
		for (i = 0; i < load; i++)
			if ((at[i] = place(used, slots, window)) < 0)
				fails++;
		for (j = 0; j < 3000000; j++) {
			i = rand() % load;
			if (at[i] >= 0)
				used[at[i]] = 0;
			if ((at[i] = place(used, slots, window)) < 0)
				fails++;
		}
		printf("seed %d: %ld open (%.1f%%), 3000000 replaced: %ld refused\n", seed, load,
		       100.0 * load / slots, fails);
		total += fails;
	}
	printf("%lu slots, window %u, %ld open: %ld refusals in %d seeds\n", slots, window,
	       load, total, seeds);
	free(at);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned long slots = argc > 1 ? strtoul(argv[1], NULL, 0) : VSD_CONNS_MAX;
	unsigned window = argc > 2 ? atoi(argv[2]) : VSD_CONN_PROBE;
	int seeds = argc > 3 ? atoi(argv[3]) : 5, seed;
	double sum_first = 0, sum_100 = 0;
	unsigned char *used;

	long load = argc > 4 ? atol(argv[4]) : 0;

	if (!slots || (slots & (slots - 1)) || !window || seeds <= 0 || load < 0 ||
	    (unsigned long)load > slots || !(used = malloc(slots))) {
		fprintf(stderr, "usage: conntab-fill [SLOTS (a power of two) [WINDOW [SEEDS [LOAD]]]]\n");
		return 2;
	}
	if (load)
		return churn(slots, window, seeds, load, used);
	for (seed = 1; seed <= seeds; seed++) {
		long n = 0, first = -1, fails = 0;

		memset(used, 0, slots);
		srand(seed);
		while (fails < 100) {
			if (place(used, slots, window) >= 0) {
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
