// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's decision cost: rules_query() on a generated file of N
 * VSs (N - 2 sites, an infra VS and the pool they share), for N = 2, 100,
 * 1,000, 10,000, with a provider's 300 rules (290 of them for one site
 * each), against an empty loop over the same (caller, requester) pairs in
 * the same run; and the same queries with the pool as the caller (a
 * service thread at home: the caller whose list holds the 290 rules).
 * Prints one CSV line per N and repetition:
 * n_vs,rep,ns_per_query,ns_per_baseline,ns_per_query_from_pool.
 *   rules-query [REPS]
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-rules.h"

#define QUERIES	2000000

static struct rules *
make(int n)
{
	struct buf f = { 0 };
	int i;

	/* the shape of rules/examples/hosting.rules: n VSs, 0.01% each (10,000
	 * of them are the whole machine) */
	buf_printf(&f, "plan p cpu 0.01%%\nvs infra cpu 0.01%% priority 100\nvs pool cpu 0.01%%\n");
	for (i = 0; i < n - 2; i++)
		buf_printf(&f, "vs site%05d plan p\n", i);
	buf_printf(&f, "(accept, *, req = *) => (requester)\n"
		       "(accept, *, req = infra) => (home)\n"
		       "(accept, pool, req = site000*) => (stay)\n"
		       "(socket, *, *) => (creator)\n");
	/* a provider's exceptions: sites served at home, one rule each */
	for (i = 0; i < n - 2 && i < 290; i++)
		buf_printf(&f, "(accept, pool, req = site%05d) => (home)\n", n - 3 - i);
	return bench_load("rules-query", &f);
}

int
main(int argc, char **argv)
{
	static const int sizes[] = { 2, 100, 1000, 10000 };
	int reps = argc > 1 ? atoi(argv[1]) : 5, s, rep;
	volatile long sink = 0;

	printf("n_vs,rep,ns_per_query,ns_per_baseline,ns_per_query_from_pool\n");
	for (s = 0; s < (int)(sizeof(sizes) / sizeof(sizes[0])); s++) {
		struct rules *rs = make(sizes[s]);
		int nvs = (int)rs->nvs;

		for (rep = 0; rep < reps; rep++) {
			double t0, t1, t2, t3;
			int pool = rules_vs_index(rs, "pool");
			unsigned x = 12345;
			long i;

			/* pseudo-random pairs, so branch predictors see a real mix */
			t0 = now_ns();
			for (i = 0; i < QUERIES; i++) {
				x = x * 1103515245u + 12345u;
				sink += (long)((x >> 8) % (unsigned)nvs) + (long)((x >> 20) % (unsigned)nvs);
			}
			t1 = now_ns();
			for (i = 0; i < QUERIES; i++) {
				struct rules_decision d;

				x = x * 1103515245u + 12345u;
				d = rules_query(rs, RULES_GATE_ACCEPT, (int)((x >> 8) % (unsigned)nvs),
						(int)((x >> 20) % (unsigned)nvs));
				sink += d.vs;
			}
			t2 = now_ns();
			for (i = 0; i < QUERIES; i++) {
				struct rules_decision d;

				x = x * 1103515245u + 12345u;
				d = rules_query(rs, RULES_GATE_ACCEPT, pool,
						(int)((x >> 20) % (unsigned)nvs));
				sink += d.vs;
			}
			t3 = now_ns();
			printf("%d,%d,%.1f,%.1f,%.1f\n", nvs, rep, (t2 - t1) / QUERIES, (t1 - t0) / QUERIES,
			       (t3 - t2) / QUERIES);
		}
		rules_free(rs);
	}
	return sink == 42 ? 1 : 0;
}
