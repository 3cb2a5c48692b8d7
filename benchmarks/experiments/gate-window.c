// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * How long should the accept gate's usage window be? Runs a request-like CPU
 * load (busy U(0,10) ms, idle U(0,10) ms: the paper's FastCGI pattern) in a
 * cgroup of its own after 1 s of idleness, samples the cgroup's usage every
 * 10 ms (the gate's tick under load) and feeds the same samples to the gate's
 * estimator (share_ewma) for several windows. Per window it reports:
 *   lag   time from load start until the estimate first reaches 90% of the
 *         load's true average
 *   mean, sd   of the estimate in the steady part (1 s after the start on)
 * A short window reacts fast but ranks VSs by noise; a long one is steady but
 * keeps charging a VS for load it stopped long ago.
 *
 *   gate-window [-d SECONDS] [-r RUNS] [-o CSV]     (root; hybrid or v2)
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/cgroup.h"
#include "lib/log.h"
#include "gates/accept/gate.h"
#include "lib/util.h"

static const unsigned taus[] = { 25, 50, 100, 200, 400, 800 };
#define NT	(sizeof(taus) / sizeof(taus[0]))
#define TICK_NS	10000000ull

static char cgdir[PATH_MAX];
static int v2, usage_fd = -1;
static pid_t load_pid = -1;

/* through the cgroup backend's hot path, as the gate reads it */
static uint64_t
read_usage(void)
{
	uint64_t ns;

	return cg_usage_fast(cgdir, v2, &ns, &usage_fd) == 0 ? ns : 0;
}

static void
burn_ms(double ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	while ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6 < ms);
}

static void __attribute__((noreturn))
load(void)
{
	char pid[16];

	signal(SIGINT, SIG_DFL);	/* the parent cleans up */
	signal(SIGTERM, SIG_DFL);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (cg_write(cgdir, "cgroup.procs", pid) < 0)
		_exit(1);
	usleep(1000000);	/* idle first: the step response */
	srandom((unsigned)getpid());
	for (;;) {
		struct timespec ts = { 0, (long)(random() % 10000) * 1000 };

		burn_ms((double)(random() % 10000) / 1000.0);
		nanosleep(&ts, NULL);
	}
}

static void
cleanup(void)
{
	if (load_pid > 0) {
		kill(load_pid, SIGKILL);
		waitpid(load_pid, NULL, 0);
		load_pid = -1;
	}
	if (cgdir[0])
		rmdir(cgdir);
	cgdir[0] = '\0';
}

static void
on_signal(int sig)
{
	(void)sig;
	exit(1);	/* runs cleanup() through atexit */
}

int
main(int argc, char **argv)
{
	const char *csv = "gate-window.csv";
	double dur = 4, lag_sum[NT] = { 0 }, sd_sum[NT] = { 0 }, mean_sum[NT] = { 0 }, truth_sum = 0;
	double sds[NT][32];
	int runs = 3, c, run;
	static struct cg_ctx cg;	/* large: off the stack */
	char root[64];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	FILE *out;
	size_t i;

	while ((c = getopt(argc, argv, "d:r:o:")) != -1) {
		switch (c) {
		case 'd': dur = atof(optarg); break;
		case 'r': runs = atoi(optarg); break;
		case 'o': csv = optarg; break;
		default:
			fprintf(stderr, "usage: gate-window [-d SECONDS] [-r RUNS] [-o CSV]\n");
			return 2;
		}
	}
	if (runs < 1 || runs > 32 || dur < 2 || dur > 30)
		return 2;
	log_init(1, 0, "gate-window");
	v2 = cg_pure_v2("/sys/fs/cgroup");
	/* <cpuacct's mount, or cgroup2's><our cgroup>/<root>: below the cgroup
	 * we run in (lib/cgroup.c), never at the hierarchy's root */
	snprintf(root, sizeof(root), "vsd-bench-window-%d", getpid());
	if (cg_init(&cg, "/sys/fs/cgroup", "/proc/self/cgroup", root) < 0 ||
	    cg_root_path(&cg, CG_R_CPUACCT, cgdir, sizeof(cgdir)) < 0) {
		fprintf(stderr, "gate-window: cannot find our cgroup\n");
		return 1;
	}
	if (!(out = fopen(csv, "we"))) {
		fprintf(stderr, "gate-window: %s: %s\n", csv, strerror(errno));
		return 1;
	}
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (mkdir(cgdir, 0755) < 0) {
		fprintf(stderr, "gate-window: mkdir %s: %s\n", cgdir, strerror(errno));
		cgdir[0] = '\0';
		return 1;
	}
	fprintf(out, "run,t_ms,true_bp");
	for (i = 0; i < NT; i++)
		fprintf(out, ",tau%u_bp", taus[i]);
	fprintf(out, "\n");

	for (run = 0; run < runs; run++) {
		static double series[NT][4096];
		static double since_s[4096];
		double est[NT] = { 0 }, sum[NT] = { 0 }, sq[NT] = { 0 }, lag[NT];
		uint64_t t0, prev_t, prev_u, start_u = 0, end_u;
		long n = 0, k;
		pid_t pid = load_pid = fork();

		if (pid == 0)
			load();
		for (i = 0; i < NT; i++)
			lag[i] = -1;
		t0 = prev_t = now_ns();
		prev_u = read_usage();
		for (k = 1; (double)k * TICK_NS < (1.0 + dur) * 1e9; k++) {
			struct timespec ts = { (time_t)((t0 + k * TICK_NS) / 1000000000ull),
					       (long)((t0 + k * TICK_NS) % 1000000000ull) };
			uint64_t t, u;
			double since;

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			t = now_ns();
			u = read_usage();
			since = (double)(t - t0) / 1e9 - 1.0;	/* s since the load began */
			if (since >= 0 && !start_u)
				start_u = u;
			fprintf(out, "%d,%.0f,", run, (double)(t - t0) / 1e6);
			for (i = 0; i < NT; i++) {
				est[i] = share_ewma(est[i], u - prev_u, t - prev_t, taus[i] * 1e6, ncpu);
				if (since >= 1.0) {
					sum[i] += est[i];
					sq[i] += est[i] * est[i];
				}
			}
			if (since >= 1.0)
				n++;
			fprintf(out, "%.0f", since >= 0 ? (double)(u - prev_u) / ((double)(t - prev_t) * ncpu) * 1e4 : 0);
			for (i = 0; i < NT; i++)
				fprintf(out, ",%.0f", est[i]);
			fprintf(out, "\n");
			prev_t = t;
			prev_u = u;
			/* lag needs the true mean: keep the series, decide below */
			since_s[k] = since;
			for (i = 0; i < NT; i++)
				series[i][k] = est[i];
		}
		end_u = read_usage();
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		load_pid = -1;
		{
			double truth = (double)(end_u - start_u) / (dur * 1e9 * ncpu) * 1e4;

			truth_sum += truth;
			for (i = 0; i < NT; i++) {
				long j;

				for (j = 1; j < k; j++)
					if (since_s[j] >= 0 && series[i][j] >= 0.9 * truth) {
						lag[i] = since_s[j];
						break;
					}
				double m = sum[i] / n, sd = sqrt(sq[i] / n - m * m);

				sds[i][run] = sd;
				lag_sum[i] += lag[i];
				sd_sum[i] += sd;
				mean_sum[i] += m;
			}
		}
	}
	fclose(out);
	cleanup();
	printf("# load: busy U(0,10) ms / idle U(0,10) ms on one thread; %ld CPUs; %d runs of %.0f s\n",
	    ncpu, runs, dur);
	printf("# true average use: %.0f bp (of the whole machine)\n", truth_sum / runs);
	printf("%-8s %10s %10s %10s %12s\n", "window", "lag(s)", "mean(bp)", "sd(bp)", "sd range");
	for (i = 0; i < NT; i++) {
		double lo = 1e9, hi = 0;
		int r;

		for (r = 0; r < runs; r++) {
			lo = sds[i][r] < lo ? sds[i][r] : lo;
			hi = sds[i][r] > hi ? sds[i][r] : hi;
		}
		printf("%-5ums %10.2f %10.0f %10.0f %5.0f-%-5.0f\n", taus[i], lag_sum[i] / runs,
		    mean_sum[i] / runs, sd_sum[i] / runs, lo, hi);
	}
	printf("# lag: first time the estimate reaches 90%% of the true average after the load starts\n");
	return 0;
}
