// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's decision cost at 2, 100 and 1,000 VSs: the real queue
 * code (gates/accept/queue.c) with every VS's queue non-empty (the worst
 * case: only VSs with queued connections take part in a decision). One
 * decision = take the best head (queue_pop_best) and queue a new connection
 * for that VS (queue_push_tail), so the number of non-empty queues stays N.
 * Also times the re-key after a usage sample (queue_rekey, every 10 ms
 * while connections are queued). Reports ns per operation, median of RUNS
 * runs with [min-max], and the ratio to the 2-VS case measured in the same run.
 *
 *   gate-decision [-r RUNS] [-o CSV]
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gates/accept/gate.h"

static const unsigned sizes[] = { 2, 100, 1000 };
#define NS	(sizeof(sizes) / sizeof(sizes[0]))
#define OPS	200000
#define REKEYS	2000

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
run_one(unsigned n, double *dec_ns, double *rekey_ns)
{
	struct vs_table t = { 0 };
	struct gated_listener *l = listen_new(open("/dev/null", O_RDONLY | O_CLOEXEC), 0, 0);
	uint64_t t0, now = now_ns();
	unsigned i;
	long k;

	t.v = calloc(n, sizeof(*t.v));
	t.n = n;
	for (i = 0; i < n; i++) {
		t.v[i].id = i + 1;
		t.v[i].share_bp = BP_MAX / n;
		t.v[i].remaining_bp = (int)(random() % 20000) - 10000;
	}
	for (i = 0; i < n; i++) {	/* two connections queued per VS */
		int j;

		for (j = 0; j < 2; j++) {
			struct queued_conn *c = calloc(1, sizeof(*c));

			c->fd = -1;
			c->vs_id = i + 1;
			c->t_enq = now + (uint64_t)(random() % 1000000);
			queue_push_tail(l, c, &t);
		}
	}
	t0 = now_ns();
	for (k = 0; k < OPS; k++) {
		struct queued_conn *c = queue_pop_best(l);

		c->t_enq = now + (uint64_t)k * 1000;
		queue_push_tail(l, c, &t);
	}
	*dec_ns = (double)(now_ns() - t0) / OPS;
	t0 = now_ns();
	for (k = 0; k < REKEYS; k++) {
		t.v[k % n].remaining_bp = (int)(random() % 20000) - 10000;
		queue_rekey(l, &t);
	}
	*rekey_ns = (double)(now_ns() - t0) / REKEYS;
	/* the fds are -1: close() fails harmlessly in listen_free */
	listen_free(l);
	free(t.v);
}

int
main(int argc, char **argv)
{
	const char *csv = "gate-decision.csv";
	double dec[NS][32], rek[NS][32];
	int runs = 5, c, r;
	size_t s;
	FILE *out;

	while ((c = getopt(argc, argv, "r:o:")) != -1) {
		switch (c) {
		case 'r': runs = atoi(optarg); break;
		case 'o': csv = optarg; break;
		default:
			fprintf(stderr, "usage: gate-decision [-r RUNS] [-o CSV]\n");
			return 2;
		}
	}
	if (runs < 1 || runs > 32 || !(out = fopen(csv, "we")))
		return 2;
	fprintf(out, "run,vss,decision_ns,rekey_ns\n");
	srandom(1);
	for (r = 0; r < runs; r++)
		for (s = 0; s < NS; s++) {
			run_one(sizes[s], &dec[s][r], &rek[s][r]);
			fprintf(out, "%d,%u,%.1f,%.1f\n", r, sizes[s], dec[s][r], rek[s][r]);
		}
	fclose(out);
	printf("# every VS has queued connections; median of %d runs [min-max]; ratio vs 2 VSs\n", runs);
	printf("%-6s %-24s %-8s %-26s\n", "VSs", "decision ns", "ratio", "rekey ns (every 10 ms)");
	for (s = 0; s < NS; s++) {
		qsort(dec[s], (size_t)runs, sizeof(double), cmp_d);
		qsort(rek[s], (size_t)runs, sizeof(double), cmp_d);
	}
	for (s = 0; s < NS; s++)
		printf("%-6u %6.0f [%4.0f-%-6.0f]   %-8.2f %8.0f [%.0f-%.0f]\n", sizes[s],
		    dec[s][runs / 2], dec[s][0], dec[s][runs - 1], dec[s][runs / 2] / dec[0][runs / 2],
		    rek[s][runs / 2], rek[s][0], rek[s][runs - 1]);
	return 0;
}
