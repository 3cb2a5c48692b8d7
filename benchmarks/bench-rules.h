/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the rules library's micro-benchmarks share (rules-query.c, rules-attrs.c):
 * a monotonic clock in ns, and a generated rule file loaded or the run ended. */
#ifndef VSD_BENCH_RULES_H
#define VSD_BENCH_RULES_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lib/buf.h"
#include "rules/rules.h"

static inline double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Load f (and free it); exit on an error, naming the benchmark. */
static inline struct rules *
bench_load(const char *prog, struct buf *f)
{
	struct buf errs = { 0 };
	struct rules *rs = NULL;

	if (rules_load_buffer("bench.rules", f->p, f->len, RULES_NO_INCLUDE, &rs, &errs) < 0) {
		fprintf(stderr, "%s: %s", prog, errs.p ? errs.p : "load failed\n");
		exit(1);
	}
	buf_free(f);
	buf_free(&errs);
	return rs;
}

#endif
