// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Socket gate cost: TCP connection rate (connect + accept + close) over
 * loopback with and without the socket gate attached, in one run.
 *
 * A client and a server process sit in a cgroup2 directory of their own,
 * vsd-bench-connrate-PID below the cgroup connrate runs in (so both ends
 * of every connection pass the gate: the worst case); with
 * -S the server stays outside (a VS's client of a shared service).  Each
 * repetition measures one ungated and one gated batch, in alternating
 * order, with the gate attached to / detached from that cgroup through
 * vsd's loader in between.  Reported: connections/s per batch and the ratio
 * gated/ungated per repetition, median and spread.
 *
 * With -s it also enables the kernel's BPF run-time statistics (for this
 * process's lifetime only: BPF_ENABLE_STATS) and reports the time our
 * programs ran per connection, in total and per program (runs and ns per
 * connection), figures the machine's noise blurs much less.
 *
 *   connrate [-n CONNS] [-r REPS] [-6] [-S] [-s] [-o CSV]
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

static const char *const prog_names[] = {
	"sock_create", "sockops", "connect4", "connect6", "sendmsg4", "sendmsg6",
};
#define NPROGS	(sizeof(prog_names) / sizeof(prog_names[0]))

/* Per program, summed over the gated batches (with -s). */
static uint64_t prog_ns[NPROGS], prog_runs[NPROGS];

/*
 * Total run time of the gate's programs so far (with -s), in ns; with acc,
 * the counters are added to (acc > 0) or taken from (acc < 0) the
 * per-program sums.
 */
static uint64_t
bpf_runtime(int acc)
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
			prog_ns[i] += acc * (int64_t)info.run_time_ns;
			prog_runs[i] += acc * (int64_t)info.run_cnt;
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

int
main(int argc, char **argv)
{
	struct gate_socket_cfg cfg = { .flags = VSD_CFG_TOS | VSD_CFG_MARK, .tos = 0x28, .mark = 42 };
	int n = 1000, reps = 30, v6 = 0, stats = 0, opt, port, i;
	int to_client[2], from_client[2];
	const char *csv = NULL;
	static struct cg_ctx cg;	/* large: off the stack */
	struct stat st;
	double *un, *ga, *ratio, *uc, *gc, *cratio, *bpfns = NULL;
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

	un = calloc(reps, sizeof(double));
	ga = calloc(reps, sizeof(double));
	ratio = calloc(reps, sizeof(double));
	uc = calloc(reps, sizeof(double));
	gc = calloc(reps, sizeof(double));
	cratio = calloc(reps, sizeof(double));
	if (stats && (!(bpfns = calloc(reps, sizeof(double))) ||
		      bpf_enable_stats(BPF_STATS_RUN_TIME) < 0)) {
		perror("connrate: BPF_ENABLE_STATS");
		return 1;
	}
	if (!un || !ga || !ratio || !uc || !gc || !cratio)
		return 1;
	batch(to_client[1], from_client[0], n / 5 + 1, NULL);		/* warm-up */
	if (csv && !(f = fopen(csv, "w"))) {
		perror(csv);
		return 1;
	}
	if (f)
		fprintf(f, "rep,order,ungated_cps,gated_cps,ratio,ungated_cpu_cps,gated_cpu_cps,cpu_ratio\n");
	printf("%-4s %-14s %10s %10s %7s   %12s %12s %7s\n", "rep", "order", "ungated/s",
	       "gated/s", "ratio", "ungated/cpu-s", "gated/cpu-s", "ratio");
	for (i = 0; i < reps; i++) {
		/* Alternate the order so drift does not favour one side. */
		int gated_first = i & 1;

		if (!gated_first)
			un[i] = batch(to_client[1], from_client[0], n, &uc[i]);
		if (gate_socket_attach(gate, cgdir, st.st_ino, 1, &cfg) < 0)
			return 1;
		t0 = stats ? bpf_runtime(-1) : 0;
		ga[i] = batch(to_client[1], from_client[0], n, &gc[i]);
		if (stats)
			bpfns[i] = (double)(bpf_runtime(1) - t0) / n;
		if (gate_socket_detach(gate, 1) < 0)
			return 1;
		if (gated_first)
			un[i] = batch(to_client[1], from_client[0], n, &uc[i]);
		ratio[i] = ga[i] / un[i];
		cratio[i] = uc[i] > 0 ? gc[i] / uc[i] : 0;
		printf("%-4d %-14s %10.0f %10.0f %7.3f   %12.0f %12.0f %7.3f\n", i + 1,
		       gated_first ? "gated,ungated" : "ungated,gated", un[i], ga[i], ratio[i],
		       uc[i], gc[i], cratio[i]);
		if (f)
			fprintf(f, "%d,%s,%.0f,%.0f,%.4f,%.0f,%.0f,%.4f\n", i + 1,
				gated_first ? "gated-first" : "ungated-first", un[i], ga[i], ratio[i],
				uc[i], gc[i], cratio[i]);
	}
	if (f)
		fclose(f);
	qsort(ratio, reps, sizeof(double), cmp_double);
	qsort(un, reps, sizeof(double), cmp_double);
	qsort(ga, reps, sizeof(double), cmp_double);
	printf("\n%s, %s, %d connections x %d repetitions per side\n",
	       v6 ? "IPv6 ::1" : "IPv4 127.0.0.1",
	       server_outside ? "client in the VS, server outside" : "client and server in the VS",
	       n, reps);
	printf("ungated conn/s: median %.0f (min %.0f, max %.0f)\n",
	       quantile(un, reps, 0.5), un[0], un[reps - 1]);
	printf("gated   conn/s: median %.0f (min %.0f, max %.0f)\n",
	       quantile(ga, reps, 0.5), ga[0], ga[reps - 1]);
	printf("ratio gated/ungated: median %.3f, IQR %.3f-%.3f, min %.3f, max %.3f (target >= 0.97)\n",
	       quantile(ratio, reps, 0.5), quantile(ratio, reps, 0.25),
	       quantile(ratio, reps, 0.75), ratio[0], ratio[reps - 1]);
	qsort(cratio, reps, sizeof(double), cmp_double);
	printf("per CPU-second ratio gated/ungated: median %.3f, IQR %.3f-%.3f, min %.3f, max %.3f\n",
	       quantile(cratio, reps, 0.5), quantile(cratio, reps, 0.25),
	       quantile(cratio, reps, 0.75), cratio[0], cratio[reps - 1]);
	if (stats) {
		qsort(bpfns, reps, sizeof(double), cmp_double);
		printf("BPF run time per connection (%s): median %.0f ns (min %.0f, max %.0f)"
		       " = %.2f%% of an ungated connection's median time\n",
		       server_outside ? "client side" : "both ends",
		       quantile(bpfns, reps, 0.5), bpfns[0], bpfns[reps - 1],
		       100.0 * quantile(bpfns, reps, 0.5) / (1e9 / quantile(un, reps, 0.5)));
		for (size_t j = 0; j < NPROGS; j++)
			if (prog_runs[j])
				printf("  %-12s %5.2f runs, %5.0f ns per connection\n", prog_names[j],
				       (double)prog_runs[j] / ((double)n * reps),
				       (double)prog_ns[j] / ((double)n * reps));
	}
	return 0;
}
