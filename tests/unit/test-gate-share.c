// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's remaining share (gates/accept/share.c): one step of the
 * decaying average (share_ewma) checked against values worked out by hand,
 * and share_sample() on a usage counter that is a plain file standing in for
 * cpuacct.usage, read through the cgroup backend's cached descriptor.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cgh-peek.h"
#include "gates/accept/gate.h"
#include "tap.h"

#define MS	1000000ull

static int
near(double got, double want, double tol)
{
	if (fabs(got - want) <= tol)
		return 1;
	printf("#   got %.3f, want %.3f +- %.3f\n", got, want, tol);
	return 0;
}

static void
set_usage(const char *path, uint64_t ns)
{
	FILE *f = fopen(path, "w");	/* truncates: the same inode, as a cgroup file */

	fprintf(f, "%llu\n", (unsigned long long)ns);
	fclose(f);
}

int
main(void)
{
	double u = 0;
	char dir[] = "/tmp/test-gate-share.XXXXXX", path[64], tok[64];
	struct gate_vs v = { .id = 1, .share_bp = 5000 };
	uint64_t t = 1000 * MS;

	/* tau = 100 ms, 2 CPUs */
	ok(near(share_ewma(0, 0, 100 * MS, 100e6, 2), 0, 1e-9), "an idle VS stays at 0 bp");
	/* one of two CPUs busy for one tau: rate 5000 bp, weight 1 - 1/e */
	ok(near(share_ewma(0, 100 * MS, 100 * MS, 100e6, 2), 5000 * (1 - exp(-1)), 0.01),
	   "one CPU of two for one window: 5000 x (1 - 1/e) = 3160.6 bp");
	ok(near(share_ewma(4000, 0, 100 * MS, 100e6, 2), 4000 * exp(-1), 0.01),
	   "idle for one window decays by 1/e");
	for (int i = 0; i < 100; i++)
		u = share_ewma(u, 10 * MS, 10 * MS, 100e6, 2);
	ok(near(u, 5000, 1), "steady use of one CPU of two converges to 5000 bp");
	ok(near(share_ewma(0, 300 * MS, 100 * MS, 100e6, 2), 10000 * (1 - exp(-1)), 0.01),
	   "more usage than CPUs x time (racy counters) counts as 10000 bp");

	/* rank: remaining share relative to the share, clamped */
	ok(share_rank(500, 0) == 10000 && share_rank(4000, 0) == 10000,
	   "an idle VS ranks 10000 whatever its share");
	ok(share_rank(500, 250) == 5000 && share_rank(4000, 2000) == 5000,
	   "half its share used: 5000, for 5%% as for 40%%");
	ok(share_rank(500, 100) > share_rank(4000, 3000),
	   "5%% VS at 1%% before a 40%% VS at 30%% (400 vs 1000 bp left)");
	ok(share_rank(500, 500) == 0 && share_rank(500, 750) == -5000,
	   "at its share 0, at 1.5 times its share -5000");
	ok(share_rank(100, 10000) == -10000 && share_rank(500, 1000) == -10000,
	   "twice its share or more: clamped at -10000");
	ok(share_rank(0, 0) == 0 && share_rank(0, 10) == -10000,
	   "no guarantee: idle ranks as at its share, any use as overdrawn");

	/* share_sample through a stand-in counter */
	if (!mkdtemp(dir)) {
		printf("1..0 # SKIP no temporary directory\n");
		return 77;
	}
	snprintf(path, sizeof(path), "%s/cpuacct.usage", dir);
	set_usage(path, 0);
	snprintf(tok, sizeof(tok), "cpuacct=%s", dir);
	cgh_add(&v.cg, tok);
	share_init(100);
	{
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		double want;

		ok(share_sample(&v, t) == 0 && v.sample_t == t && v.remaining_bp == 5000,
		   "the first sample only records: 5000 bp left of a 50%% share");
		set_usage(path, (uint64_t)(50 * MS) * (uint64_t)cpus);	/* all CPUs for half the time */
		ok(share_sample(&v, t + 100 * MS) == 0, "second sample");
		want = 5000 * (1 - exp(-1));
		ok(near(v.used_bp, want, 0.5), "used: half the machine for one window");
		ok(v.remaining_bp == 5000 - (int)(want + 0.5),
		   "remaining = share - used (%d bp)", v.remaining_bp);
		ok(v.rank_bp == share_rank(5000, v.used_bp),
		   "the sample updates the rank too (%d bp)", v.rank_bp);
		ok(cgh_nfds(&v.cg) == 1, "the counter stays open for the next sample");
		share_sample_lazy(&v, t + 101 * MS);
		ok(v.sample_t == t + 100 * MS, "a lazy sample within 2 ms reads nothing");
		ok(v.step_bp == 0 && v.rank_bp == share_rank(5000, v.used_bp),
		   "nothing served yet: no step, the rank is the plain rank");
		/* 10 connections served, 5 ms of CPU each, in the next 100 ms */
		v.served = 10;
		set_usage(path, (uint64_t)(50 * MS) * (uint64_t)cpus + 50 * MS);
		share_sample(&v, t + 200 * MS);
		ok(near(v.step_bp, 500.0 / (double)cpus, 0.01),
		   "step: 5 ms of CPU per connection adds 500 bp / CPUs (%.1f)", v.step_bp);
		ok(v.rank_bp == share_rank(5000, v.used_bp + v.step_bp / 2),
		   "the rank is taken half a step on (%d bp)", v.rank_bp);
		/* nothing served in the next 100 ms: the step stays */
		share_sample(&v, t + 300 * MS);
		ok(near(v.step_bp, 500.0 / (double)cpus, 0.01) && v.served_sample == 10,
		   "an idle interval keeps the step");
		/* 10 more at 1 ms each: the average moves a quarter of the way */
		v.served = 20;
		set_usage(path, (uint64_t)(50 * MS) * (uint64_t)cpus + 60 * MS);
		share_sample(&v, t + 400 * MS);
		ok(near(v.step_bp, (500.0 - 0.25 * 400.0) / (double)cpus, 0.01),
		   "the step is a running average (%.1f)", v.step_bp);
		/* a small VS whose step is large against its share, not served
		 * for long: the half step is capped at its use, so it ranks as
		 * nearly idle, not half a step below its share */
		{
			struct gate_vs s = { .share_bp = 500, .used_bp = 10, .step_bp = 700 };

			share_update(&s);
			ok(s.rank_bp == share_rank(500, 20) && s.rank_bp > share_rank(500, 360),
			   "a VS not served for a window: the half step capped at its use (%d bp)",
			   s.rank_bp);
			s.used_bp = 0;
			share_update(&s);
			ok(s.rank_bp == BP_MAX, "one that used nothing ranks as idle (%d bp)", s.rank_bp);
		}
	}
	unlink(path);
	cgh_close(&v.cg);
	rmdir(dir);
	return tap_done();
}
