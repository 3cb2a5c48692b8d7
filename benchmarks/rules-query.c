// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's decision cost: rules_query() on a generated file of N
 * sites sharing one pool, for N = 2, 100, 1000, against an empty loop over
 * the same (caller, requester) pairs in the same run. Prints one CSV line per
 * N and repetition: n_vs,rep,ns_per_query,ns_per_baseline.
 *   rules-query [REPS]
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/buf.h"
#include "rules/rules.h"

#define QUERIES	2000000

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static struct rules *
make(int n)
{
	struct buf f = { 0 }, errs = { 0 };
	struct rules *rs = NULL;
	int i;

	/* the shape of rules/examples/hosting.rules, n sites */
	buf_printf(&f, "plan p cpu 0.01%%\nvs infra cpu 1%% priority 100\nvs pool cpu 1%%\n");
	for (i = 0; i < n; i++)
		buf_printf(&f, "vs site%04d plan p\n", i);
	buf_printf(&f, "(accept, *, req = *) => (requester)\n"
		       "(accept, *, req = infra) => (home)\n"
		       "(accept, pool, req = site00*) => (stay)\n"
		       "(socket, *, *) => (creator)\n");
	if (rules_load_buffer("bench.rules", f.p, f.len, RULES_NO_INCLUDE, &rs, &errs) < 0) {
		fprintf(stderr, "rules-query: %s", errs.p ? errs.p : "load failed\n");
		exit(1);
	}
	buf_free(&f);
	buf_free(&errs);
	return rs;
}

int
main(int argc, char **argv)
{
	static const int sizes[] = { 2, 100, 1000 };
	int reps = argc > 1 ? atoi(argv[1]) : 5, s, rep;
	volatile long sink = 0;

	printf("n_vs,rep,ns_per_query,ns_per_baseline\n");
	for (s = 0; s < 3; s++) {
		struct rules *rs = make(sizes[s]);
		int nvs = (int)rs->nvs;

		for (rep = 0; rep < reps; rep++) {
			double t0, t1, t2;
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
			printf("%d,%d,%.1f,%.1f\n", nvs, rep, (t2 - t1) / QUERIES, (t1 - t0) / QUERIES);
		}
		rules_free(rs);
	}
	return sink == 42 ? 1 : 0;
}
