// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Socket gate cost: TCP connection rate (connect + accept + close) over
 * loopback with and without the socket gate attached, in one run.
 *
 * A client and a server process sit in a cgroup2 directory of their own,
 * vsd-bench-connrate-PID below the cgroup connrate runs in (so both ends
 * of every connection pass the gate: the worst case); with
 * -S the server stays outside (a VS's client of a shared service).  Each
 * repetition measures four batches, in an order that rotates from one
 * repetition to the next: the baseline, with no programs attached to that
 * cgroup, and three with the gate attached through vsd's loader, which
 * records (gates/socket/socket.h, vsd --record-conns):
 *   ungated  gated mode, the server's port not gated: nothing recorded
 *   gated    gated mode, the server's port counted in vsd_gports, as an
 *            accept gate registers its listener: the client side recorded
 *   all      VSD_CONNLIM_ALL: every connection, both sides in the VS
 * Reported: connections/s per batch and the ratio of each to the baseline
 * per repetition, median and spread.
 *
 * With -s it also enables the kernel's BPF run-time statistics (for this
 * process's lifetime only: BPF_ENABLE_STATS) and reports the time our
 * programs ran per connection, in total and per program (runs and ns per
 * connection), figures the machine's noise blurs much less.
 *
 *   connrate [-n CONNS] [-r REPS] [-6] [-S] [-s] [-o CSV]
 *
 * The CSV has one row per repetition: the order, then rate per second of
 * wall time and per CPU-second and the ratios for each configuration.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "lib/cgroup.h"
#include "lib/log.h"
#include "gates/socket/gate-socket.h"

static char cgdir[PATH_MAX], root[64];
static pid_t server_pid = -1, client_pid = -1;
static struct gate_socket *gate;

static void
cleanup(void)
{
	if (client_pid > 0)
		kill(client_pid, SIGKILL);
	if (server_pid > 0)
		kill(server_pid, SIGKILL);
	if (client_pid > 0)
		waitpid(client_pid, NULL, 0);
	if (server_pid > 0)
		waitpid(server_pid, NULL, 0);
	client_pid = server_pid = -1;
	if (gate)
		gate_socket_purge(gate);
	gate = NULL;
	if (cgdir[0])
		rmdir(cgdir);
}

static void
on_signal(int sig)
{
	(void)sig;
	exit(1);	/* runs cleanup() through atexit */
}

static void
join_cgroup(void)
{
	char path[PATH_MAX + 16], pid[32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cgdir);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (!(f = fopen(path, "w")) || fputs(pid, f) < 0 || fclose(f) != 0) {
		perror(path);
		_exit(1);
	}
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static socklen_t
addr_of(int v6, int port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		a->sin6_port = htons(port);
		return sizeof(*a);
	}
	struct sockaddr_in *a = (struct sockaddr_in *)ss;
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a->sin_port = htons(port);
	return sizeof(*a);
}

/* The server closes first, so TIME_WAIT sits on its fixed port. */
static int server_outside;

/*
 * The listener is made here, after joining the cgroup: accepted sockets
 * belong to the listener's cgroup (they are clones of it), not to the
 * process that accepts them.  Sends the port on out.
 */
static void __attribute__((noreturn))
server(int v6, int out)
{
	struct sockaddr_storage ss;
	socklen_t len = addr_of(v6, 0, &ss);
	int lfd, one = 1, port;

	if (!server_outside)
		join_cgroup();
	if ((lfd = socket(ss.ss_family, SOCK_STREAM, 0)) < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)&ss, len) < 0 || listen(lfd, 4096) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&ss, &len) < 0) {
		perror("connrate: listen");
		_exit(1);
	}
	port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
			: ((struct sockaddr_in *)&ss)->sin_port);
	if (write(out, &port, sizeof(port)) != sizeof(port))
		_exit(1);
	close(out);
	for (;;) {
		int c = accept(lfd, NULL, NULL);
		if (c >= 0)
			close(c);
	}
}

/* Waits for "go" (a count), runs it, answers with the elapsed ns. */
static void __attribute__((noreturn))
client(int v6, int port, int in, int out)
{
	struct sockaddr_storage ss;
	socklen_t len = addr_of(v6, port, &ss);
	uint64_t n, i, t0, dt;
	char c;

	join_cgroup();
	while (read(in, &n, sizeof(n)) == sizeof(n)) {
		t0 = now_ns();
		for (i = 0; i < n; i++) {
			int s = socket(ss.ss_family, SOCK_STREAM, 0);
			if (s < 0 || connect(s, (struct sockaddr *)&ss, len) < 0)
				_exit(3);
			while (read(s, &c, 1) > 0)
				;
			close(s);
		}
		dt = now_ns() - t0;
		if (write(out, &dt, sizeof(dt)) != sizeof(dt))
			_exit(4);
	}
	_exit(0);
}

/* CPU time used by the cgroup (client, server, their softirq work), in us. */
static uint64_t
cg_usage_usec(void)
{
	char path[PATH_MAX + 16], key[64];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpu.stat", cgdir);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fscanf(f, "%63s %llu", key, &v) == 2)
		if (!strcmp(key, "usage_usec"))
			break;
	fclose(f);
	return v;
}

/*
 * Runs n connections; returns connections per second of wall time and sets
 * *cpu_rate to connections per CPU-second of the cgroup, which the other
 * load on a shared machine blurs much less than the wall time.
 */
static double
batch(int to, int from, uint64_t n, double *cpu_rate)
{
	uint64_t dt, u0 = cg_usage_usec(), du;

	if (write(to, &n, sizeof(n)) != sizeof(n) || read(from, &dt, sizeof(dt)) != sizeof(dt)) {
		fprintf(stderr, "connrate: client died\n");
		exit(1);
	}
	du = cg_usage_usec() - u0;
	if (cpu_rate)
		*cpu_rate = du ? n / (du / 1e6) : 0;
	return n / (dt / 1e9);
}

/* The configurations of a repetition; CF_BASE has no programs attached. */
enum { CF_BASE, CF_UNGATED, CF_GATED, CF_ALL, NCF };
static const char *const cf_names[NCF] = { "baseline", "ungated", "gated", "all" };
/* the targets (benchmarks/results/socket-gate-cost.md); all mode has none */
static const double cf_target[NCF] = { 0, 0.985, 0.97, 0 };

static const char *const prog_names[] = {
	"sock_create", "sockops", "connect4", "connect6", "sendmsg4", "sendmsg6",
};
#define NPROGS	(sizeof(prog_names) / sizeof(prog_names[0]))

/* Per configuration and program, summed over its batches (with -s). */
static uint64_t prog_ns[NCF][NPROGS], prog_runs[NCF][NPROGS];

/*
 * Total run time of the gate's programs so far (with -s), in ns; with acc,
 * the counters are added to (acc > 0) or taken from (acc < 0) the
 * per-program sums of configuration cf.
 */
static uint64_t
bpf_runtime(int cf, int acc)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < NPROGS; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		char path[512];
		int fd;

		snprintf(path, sizeof(path), "%s/prog_%s", gate_socket_pindir(gate), prog_names[i]);
		if ((fd = bpf_obj_get(path)) < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) {
			sum += info.run_time_ns;
			prog_ns[cf][i] += acc * (int64_t)info.run_time_ns;
			prog_runs[cf][i] += acc * (int64_t)info.run_cnt;
		}
		close(fd);
	}
	return sum;
}

/* Linear interpolation between order statistics of a sorted array. */
static double
quantile(const double *v, int n, double q)
{
	double pos = q * (n - 1);
	int i = (int)pos;

	return i + 1 < n ? v[i] + (pos - i) * (v[i + 1] - v[i]) : v[n - 1];
}

static int attached, gport_on;

/*
 * Puts the gate in configuration cf: attached or not, recording all or
 * gated, the server's port gated or not.  Outside the timed batches.
 */
static int
set_config(int cf, const char *dir, uint64_t cgid, int port,
	   const struct gate_socket_cfg *cfg)
{
	int want_gport = cf == CF_GATED;

	if (cf == CF_BASE) {
		if (attached && gate_socket_detach(gate, 1) < 0)
			return -1;
		attached = 0;
		return 0;
	}
	if (!attached && gate_socket_attach(gate, dir, cgid, 1, cfg) < 0)
		return -1;
	attached = 1;
	if (gate_socket_set_record_all(gate, cf == CF_ALL) < 0)
		return -1;
	if (want_gport != gport_on && gate_socket_gport_add(gate, port, want_gport ? 1 : -1) < 0)
		return -1;
	gport_on = want_gport;
	return 0;
}

/* median, IQR, min, max of n values (sorted in place) */
static void
summary(const char *what, double *v, int n, double target)
{
	qsort(v, n, sizeof(double), cmp_double);
	printf("%-26s median %.3f, IQR %.3f-%.3f, min %.3f, max %.3f", what,
	       quantile(v, n, 0.5), quantile(v, n, 0.25), quantile(v, n, 0.75), v[0], v[n - 1]);
	if (target > 0)
		printf(" (target >= %.3f: %s)", target,
		       quantile(v, n, 0.5) >= target ? "met" : "NOT met");
	printf("\n");
}

int
main(int argc, char **argv)
{
	struct gate_socket_cfg cfg = { .flags = VSD_CFG_TOS | VSD_CFG_MARK, .tos = 0x28, .mark = 42 };
	int n = 1000, reps = 30, v6 = 0, stats = 0, opt, port, i, k, c;
	int to_client[2], from_client[2];
	const char *csv = NULL;
	static struct cg_ctx cg;	/* large: off the stack */
	struct stat st;
	double *rate[NCF], *crate[NCF], *ratio[NCF], *cratio[NCF], *bpfns[NCF];
	char what[64];
	uint64_t t0;
	FILE *f = NULL;

	while ((opt = getopt(argc, argv, "n:r:6Sso:")) != -1) {
		switch (opt) {
		case 'n': n = atoi(optarg); break;
		case 'r': reps = atoi(optarg); break;
		case '6': v6 = 1; break;
		case 's': stats = 1; break;
		case 'S': server_outside = 1; break;
		case 'o': csv = optarg; break;
		default:
			fprintf(stderr, "usage: connrate [-n CONNS] [-r REPS] [-6] [-S] [-s] [-o CSV]\n");
			return 2;
		}
	}
	if (n <= 0 || reps <= 0)
		return 2;
	log_init(1, 0, "connrate");
	snprintf(root, sizeof(root), "vsd-bench-connrate-%d", getpid());
	/* cgroup2's <mount><our cgroup>/<root>, never at the hierarchy's root */
	if (cg_init(&cg, "/sys/fs/cgroup", "/proc/self/cgroup", root) < 0)
		return 1;
	if (cg_root_path(&cg, CG_R_BPF, cgdir, sizeof(cgdir)) < 0) {
		fprintf(stderr, "connrate: no cgroup2 hierarchy\n");
		return 1;
	}
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (mkdir(cgdir, 0755) < 0 || stat(cgdir, &st) < 0) {
		perror(cgdir);
		cgdir[0] = '\0';
		return 1;
	}
	if (gate_socket_open(root, &gate, NULL) < 0)
		return 1;
	/* The connection table's per-VS shares on, as vsd has them. */
	gate_socket_share(gate, 1);

	if (pipe(to_client) < 0 || pipe(from_client) < 0)
		return 1;
	if ((server_pid = fork()) == 0)
		server(v6, from_client[1]);
	if (read(from_client[0], &port, sizeof(port)) != sizeof(port)) {
		fprintf(stderr, "connrate: the server did not start\n");
		return 1;
	}
	if ((client_pid = fork()) == 0)
		client(v6, port, to_client[0], from_client[1]);

	for (c = 0; c < NCF; c++) {
		rate[c] = calloc(reps, sizeof(double));
		crate[c] = calloc(reps, sizeof(double));
		ratio[c] = calloc(reps, sizeof(double));
		cratio[c] = calloc(reps, sizeof(double));
		bpfns[c] = calloc(reps, sizeof(double));
		if (!rate[c] || !crate[c] || !ratio[c] || !cratio[c] || !bpfns[c])
			return 1;
	}
	if (stats && bpf_enable_stats(BPF_STATS_RUN_TIME) < 0) {
		perror("connrate: BPF_ENABLE_STATS");
		return 1;
	}
	batch(to_client[1], from_client[0], n / 5 + 1, NULL);		/* warm-up */
	if (csv && !(f = fopen(csv, "w"))) {
		perror(csv);
		return 1;
	}
	if (f) {
		fprintf(f, "rep,order");
		for (c = 0; c < NCF; c++)
			fprintf(f, ",%s_cps,%s_cpu_cps", cf_names[c], cf_names[c]);
		for (c = 1; c < NCF; c++)
			fprintf(f, ",%s_ratio,%s_cpu_ratio", cf_names[c], cf_names[c]);
		fprintf(f, "\n");
	}
	printf("%-4s %-8s %10s %10s %10s %10s   %7s %7s %7s   %s\n", "rep", "first",
	       "base/s", "ungated/s", "gated/s", "all/s", "ungated", "gated", "all",
	       "(ratios to the baseline, wall time)");
	for (i = 0; i < reps; i++) {
		/* Rotate the order so that drift does not favour one of them. */
		for (k = 0; k < NCF; k++) {
			c = (i + k) % NCF;
			if (set_config(c, cgdir, st.st_ino, port, &cfg) < 0)
				return 1;
			t0 = stats ? bpf_runtime(c, -1) : 0;
			rate[c][i] = batch(to_client[1], from_client[0], n, &crate[c][i]);
			if (stats)
				bpfns[c][i] = (double)(bpf_runtime(c, 1) - t0) / n;
		}
		for (c = 1; c < NCF; c++) {
			ratio[c][i] = rate[c][i] / rate[CF_BASE][i];
			cratio[c][i] = crate[CF_BASE][i] > 0 ? crate[c][i] / crate[CF_BASE][i] : 0;
		}
		printf("%-4d %-8s %10.0f %10.0f %10.0f %10.0f   %7.3f %7.3f %7.3f\n", i + 1,
		       cf_names[i % NCF], rate[CF_BASE][i], rate[CF_UNGATED][i], rate[CF_GATED][i],
		       rate[CF_ALL][i], ratio[CF_UNGATED][i], ratio[CF_GATED][i], ratio[CF_ALL][i]);
		if (f) {
			fprintf(f, "%d,%s-first", i + 1, cf_names[i % NCF]);
			for (c = 0; c < NCF; c++)
				fprintf(f, ",%.0f,%.0f", rate[c][i], crate[c][i]);
			for (c = 1; c < NCF; c++)
				fprintf(f, ",%.4f,%.4f", ratio[c][i], cratio[c][i]);
			fprintf(f, "\n");
		}
	}
	if (f)
		fclose(f);
	printf("\n%s, %s, %d connections x %d repetitions per configuration\n",
	       v6 ? "IPv6 ::1" : "IPv4 127.0.0.1",
	       server_outside ? "client in the VS, server outside" : "client and server in the VS",
	       n, reps);
	for (c = 0; c < NCF; c++) {
		qsort(rate[c], reps, sizeof(double), cmp_double);
		printf("%-8s conn/s: median %.0f (min %.0f, max %.0f)\n", cf_names[c],
		       quantile(rate[c], reps, 0.5), rate[c][0], rate[c][reps - 1]);
	}
	for (c = 1; c < NCF; c++) {
		snprintf(what, sizeof(what), "ratio %s/baseline:", cf_names[c]);
		summary(what, ratio[c], reps, cf_target[c]);
		snprintf(what, sizeof(what), "  per CPU-second:");
		summary(what, cratio[c], reps, 0);
	}
	for (c = 1; stats && c < NCF; c++) {
		qsort(bpfns[c], reps, sizeof(double), cmp_double);
		printf("BPF run time per connection, %s (%s): median %.0f ns (min %.0f, max %.0f)"
		       " = %.2f%% of a baseline connection's median time\n", cf_names[c],
		       server_outside ? "client side" : "both ends",
		       quantile(bpfns[c], reps, 0.5), bpfns[c][0], bpfns[c][reps - 1],
		       100.0 * quantile(bpfns[c], reps, 0.5) / (1e9 / quantile(rate[CF_BASE], reps, 0.5)));
		for (size_t j = 0; j < NPROGS; j++)
			if (prog_runs[c][j])
				printf("  %-12s %5.2f runs, %5.0f ns per connection\n", prog_names[j],
				       (double)prog_runs[c][j] / ((double)n * reps),
				       (double)prog_ns[c][j] / ((double)n * reps));
	}
	return 0;
}
