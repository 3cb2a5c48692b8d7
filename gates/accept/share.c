// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Remaining share = guaranteed share - recent CPU use, both in basis points
 * of the whole machine (all CPUs). Recent use is an exponentially decaying
 * average of the VS cgroup's usage counter with time constant tau (the
 * "window", default GATE_WINDOW_MS; see vsctl-run(8) for how it was chosen):
 *
 *   rate  = d(usage) / (dt * ncpu)                   this interval's use
 *   used += (1 - exp(-dt / tau)) * (rate - used)      decaying average
 *
 * The update is exact for any dt, so a VS is sampled only while the gate
 * needs its value (it has queued connections), never on a timer for all VSs:
 * the cost does not grow with the number of VSs.
 *
 * Order (queue.c) is by remaining share RELATIVE to the share, as weighted
 * fair queueing and CFS order by use per weight:
 *
 *   rank = BP_MAX * (share - used) / share,  clamped to [-BP_MAX, BP_MAX]
 *
 * An idle VS ranks BP_MAX whatever its share, one at its share 0, one at
 * twice its share or more -BP_MAX.
 *
 * The rank is taken halfway through the VS's next connection: used is
 * counted as used + step/2, where step is what one served connection adds
 * to used (a running average of the usage per connection served between
 * two samples). A VS is picked when its rank reaches the others' and drops
 * by one step when served, so its rank saws between the others' and one
 * step below: without the half step, a small VS, whose step is large
 * against its share (5 ms of CPU is 25% of a 5% share's window), sat on
 * average half a step lower than the big ones and got about twice its share
 * of a lightly used service (40/40/5: 10-17% of the requests instead of
 * 5.9%, taken from the 40% VSs). The half step is capped at what the VS
 * used: where one request costs as much as a small VS's share of the
 * window (13-29 ms of CPU per request under emulation, against 10 ms for a
 * 5% share of 200 ms), the half step alone held the small VS's rank below
 * that of big VSs that outside load kept under their shares, even while it
 * went unserved (40/40/5 with a hog per CPU outside: 1-3% of the answers
 * in a Debian 12 VM); capped, a VS not served in the window ranks as idle.
 * Measured by tests/gate-fair.sh. Ranking by the absolute remaining share
 * instead let a big VS that outside load held below its share always beat
 * a small one (40/40/5 with a CPU hog per CPU outside every VS: the 5% VS got
 * 0.1-3.6% of the requests instead of 5/85). The clamp keeps the range of
 * ranks at 2 * BP_MAX, so the age term's starvation bound (queue.c) holds.
 *
 * The counter is the VS's cgroup handle's (lib/cgroup-handle.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gate.h"
#include "lib/log.h"
#include "lib/util.h"

#define GATE_WINDOW_MS		200	/* tau; benchmarks/results/experiment-gate-window.md */
#define GATE_SAMPLE_MIN_NS	2000000	/* below 2 ms a counter delta is mostly noise */

static double tau_ns = GATE_WINDOW_MS * 1e6;
static unsigned window_ms = GATE_WINDOW_MS;
static long ncpu = 1;

void
share_init(unsigned wms)
{
	if (wms) {
		window_ms = wms;
		tau_ns = wms * 1e6;
	}
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
}

unsigned
share_window_ms(void)
{
	return window_ms;
}

uint64_t
now_ns(void)
{
	return mono_ns();
}

double
share_ewma(double used_bp, uint64_t dusage_ns, uint64_t dt_ns, double tau, long cpus)
{
	double dt = (double)dt_ns;
	double rate = (double)dusage_ns / (dt * (double)cpus) * BP_MAX;
	double a = 1.0 - exp(-dt / tau);

	if (rate > BP_MAX)	/* counter and clock are not read atomically */
		rate = BP_MAX;
	return used_bp + a * (rate - used_bp);
}

int
share_rank(unsigned share_bp, double used_bp)
{
	double r;

	if (share_bp == 0)	/* no guarantee: idle ranks as at its share */
		return used_bp >= 0.5 ? -BP_MAX : 0;
	r = (double)BP_MAX * ((double)share_bp - used_bp) / (double)share_bp;
	if (r > BP_MAX)
		r = BP_MAX;
	if (r < -BP_MAX)
		r = -BP_MAX;
	return (int)(r < 0 ? r - 0.5 : r + 0.5);
}

void
share_update(struct gate_vs *v)
{
	v->remaining_bp = (int)v->share_bp - (int)(v->used_bp + 0.5);
	/* the half step, but never more than the VS used: one that was not
	 * served in the window ranks as idle, however large its step */
	v->rank_bp = share_rank(v->share_bp, v->used_bp + fmin(v->step_bp / 2, v->used_bp));
}

/* step: the use (bp) one connection served since the last sample added,
 * through the same window as used; averaged over samples */
static void
share_step(struct gate_vs *v, uint64_t dusage_ns)
{
	uint64_t n = v->served - v->served_sample;
	double step;

	v->served_sample = v->served;
	if (n == 0)
		return;
	step = (double)BP_MAX * ((double)dusage_ns / (double)n) / (tau_ns * (double)ncpu);
	if (step > BP_MAX)
		step = BP_MAX;
	v->step_bp = v->step_bp > 0 ? v->step_bp + 0.25 * (step - v->step_bp) : step;
}

int
share_sample(struct gate_vs *v, uint64_t now)
{
	uint64_t usage;
	int r;

	if ((r = cgh_usage(&v->cg, &usage)) < 0) {
		/* the VS may have just been destroyed; the refresh sorts it out */
		share_update(v);
		return r;
	}
	if (v->sample_t && now > v->sample_t && usage >= v->usage_ns) {
		v->used_bp = share_ewma(v->used_bp, usage - v->usage_ns, now - v->sample_t,
		    tau_ns, ncpu);
		share_step(v, usage - v->usage_ns);
	} else
		v->served_sample = v->served;
	v->usage_ns = usage;
	v->sample_t = now;
	share_update(v);
	return 0;
}

void
share_sample_lazy(struct gate_vs *v, uint64_t now)
{
	if (v->sample_t == 0 || now - v->sample_t >= GATE_SAMPLE_MIN_NS)
		share_sample(v, now);
}
