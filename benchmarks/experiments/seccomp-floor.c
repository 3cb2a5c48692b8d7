// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * seccomp-floor: what the seccomp user-notification mechanism itself costs
 * on this machine, with nothing of the accept gate around it.  It bounds
 * from below what the accept gate can add to one accept().
 *
 * A traced child calls accept4(-1, NULL, NULL, 0) in a loop; the filter
 * sends it to a supervisor that answers at once.  Modes, each in the same
 * run and interleaved in blocks so background load hits all of them:
 *   direct   no filter: the syscall fails with EBADF in the kernel
 *   send     SECCOMP_IOCTL_NOTIF_SEND, the error as the result
 *            (one notification round trip: two wake-ups)
 *   addfd    SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SEND: a
 *            descriptor installed as the call's result, which the child
 *            closes (what the gate does per accept: the supervisor's
 *            ioctl waits until the child has installed it)
 * each of send/addfd with and without SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
 * (Linux 6.6), and with both processes free or pinned to one CPU.
 * The supervisor blocks in SECCOMP_IOCTL_NOTIF_RECV (no poll): the least
 * work a supervisor can do.  Per call: the child's wall time (median, p99)
 * and the CPU time of both processes (schedstat).
 *
 *   seccomp-floor [-n CALLS] [-r REPS]
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gates/accept/seccomp-compat.h"


enum { M_DIRECT, M_SEND, M_ADDFD };
static const char *const mname[] = { "direct", "send", "addfd" };

struct mode {
	int kind, sync, pin;	/* pin: 1 both on CPU 0; 2 only during ADDFD */
};

static const struct mode modes[] = {
	{ M_DIRECT, 0, 0 },
	{ M_SEND, 0, 0 }, { M_SEND, 1, 0 }, { M_SEND, 0, 1 },
	{ M_ADDFD, 0, 0 }, { M_ADDFD, 1, 0 }, { M_ADDFD, 0, 1 },
	{ M_ADDFD, 0, 2 }, { M_ADDFD, 1, 2 },
};
#define NMODES	(sizeof(modes) / sizeof(modes[0]))

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of one task in ns: the first field of /proc/PID/schedstat. */
static uint64_t cpu_ns(pid_t pid)
{
	char path[64];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		die("sched_setaffinity");
}

static void unpin(void)
{
	cpu_set_t set;
	long i, n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	for (i = 0; i < n; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int install_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_accept4, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die("PR_SET_NO_NEW_PRIVS");
	return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
			    SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The child: `n` calls per block, wall time of each written to the pipe
 * `out` as one block of n u64; it waits for a byte on `go` before a block.
 */
static void child(int filtered, int go, int out, int notify_out, size_t n)
{
	uint64_t *t = calloc(n, sizeof(*t));
	char c;
	size_t i;

	if (!t)
		die("calloc");
	if (filtered) {
		int nfd = install_filter();

		if (nfd < 0)
			die("seccomp");
		if (write(notify_out, &nfd, sizeof(nfd)) != sizeof(nfd))
			die("write");
	}
	while (read(go, &c, 1) == 1) {
		if (c == 'p')
			pin(0);
		else if (c == 'u')
			unpin();
		if (c == 'q')
			break;
		for (i = 0; i < n; i++) {
			uint64_t t0 = now_ns();
			long r = syscall(__NR_accept4, -1, NULL, NULL, 0);

			t[i] = now_ns() - t0;
			if (r >= 0)
				close((int)r);
		}
		if (write(out, t, n * sizeof(*t)) != (ssize_t)(n * sizeof(*t)))
			die("write");
	}
	_exit(0);
}

struct proc {
	pid_t pid;
	int go, out, nfd;
};

static void spawn(struct proc *p, int filtered, size_t n)
{
	int g[2], o[2], nf[2];

	if (pipe(g) || pipe(o) || socketpair(AF_UNIX, SOCK_STREAM, 0, nf))
		die("pipe");
	p->pid = fork();
	if (p->pid < 0)
		die("fork");
	if (p->pid == 0) {
		close(g[1]); close(o[0]); close(nf[0]);
		child(filtered, g[0], o[1], nf[1], n);
	}
	close(g[0]); close(o[1]); close(nf[1]);
	p->go = g[1];
	p->out = o[0];
	p->nfd = -1;
	if (filtered) {
		/* the child's listener: fetch it with pidfd_getfd */
		int cfd, pidfd;

		if (read(nf[0], &cfd, sizeof(cfd)) != sizeof(cfd))
			die("read");
		pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
		if (pidfd < 0)
			die("pidfd_open");
		p->nfd = (int)syscall(SYS_pidfd_getfd, pidfd, cfd, 0);
		if (p->nfd < 0)
			die("pidfd_getfd");
		close(pidfd);
	}
	close(nf[0]);
}

/* The supervisor thread of work for one block: answer n notifications. */
/*
 * pin 2: the caller is put on the supervisor's current CPU for the
 * hand-over only, and the supervisor stays there until the ioctl returns:
 * ADDFD wakes both with a plain complete(), which on an idle machine sends
 * each to the other, idle CPU (Linux 6.18, seccomp_notify_addfd()).
 */
static void serve(int nfd, int kind, size_t n, int devnull, pid_t tid, int pinmode)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	struct seccomp_notif_addfd add;
	size_t i;

	for (i = 0; i < n; i++) {
		memset(&req, 0, sizeof(req));
		if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			if (errno == EINTR) {
				i--;
				continue;
			}
			die("NOTIF_RECV");
		}
		if (kind == M_ADDFD) {
			cpu_set_t one, all;

			if (pinmode == 2) {
				CPU_ZERO(&one);
				CPU_SET(sched_getcpu(), &one);
				if (sched_getaffinity(tid, sizeof(all), &all) < 0 ||
				    sched_setaffinity(tid, sizeof(one), &one) < 0 ||
				    sched_setaffinity(0, sizeof(one), &one) < 0)
					die("sched_setaffinity");
			}
			memset(&add, 0, sizeof(add));
			add.id = req.id;
			add.flags = SECCOMP_ADDFD_FLAG_SEND;
			add.srcfd = (unsigned)devnull;
			if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0)
				die("NOTIF_ADDFD");
			if (pinmode == 2 && (sched_setaffinity(tid, sizeof(all), &all) < 0 ||
					     sched_setaffinity(0, sizeof(all), &all) < 0))
				die("sched_setaffinity");
		} else {
			memset(&resp, 0, sizeof(resp));
			resp.id = req.id;
			resp.error = -EBADF;
			if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0)
				die("NOTIF_SEND");
		}
	}
}

struct acc {
	double p50[64], p99[64], cpu_child[64], cpu_sup[64];
};

static double median(double *v, int n)
{
	double t;
	int i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double vmin(const double *v, int n)
{
	double m = v[0];

	while (n-- > 0)
		if (v[n] < m)
			m = v[n];
	return m;
}

static double vmax(const double *v, int n)
{
	double m = v[0];

	while (n-- > 0)
		if (v[n] > m)
			m = v[n];
	return m;
}

int main(int argc, char **argv)
{
	size_t n = 20000, i;
	int reps = 5, r, c, devnull;
	struct proc direct, gated;
	struct acc acc[NMODES];
	uint64_t *t;
	int cur_sync = -1;

	while ((c = getopt(argc, argv, "n:r:")) != -1) {
		switch (c) {
		case 'n': n = strtoul(optarg, NULL, 10); break;
		case 'r': reps = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: seccomp-floor [-n CALLS] [-r REPS]\n");
			return 2;
		}
	}
	if (n < 100 || reps < 1 || reps > 64) {
		fprintf(stderr, "seccomp-floor: -n >= 100, 1 <= -r <= 64\n");
		return 2;
	}
	if (!(t = calloc(n, sizeof(*t))) || (devnull = open("/dev/null", O_RDONLY)) < 0)
		die("setup");
	signal(SIGPIPE, SIG_IGN);
	spawn(&direct, 0, n);
	spawn(&gated, 1, n);

	for (r = 0; r < reps; r++) {
		for (size_t m = 0; m < NMODES; m++) {
			const struct mode *md = &modes[m];
			struct proc *p = md->kind == M_DIRECT ? &direct : &gated;
			uint64_t c0, s0, c1, s1;
			char cmd = md->pin == 1 ? 'p' : 'u';

			if (md->kind != M_DIRECT && md->sync != cur_sync) {
				/* Linux 6.6+; there is no call to clear it, so
				 * the gated child is replaced to turn it off. */
				if (!md->sync && cur_sync == 1) {
					if (write(gated.go, "q", 1) != 1)
						die("write");
					waitpid(gated.pid, NULL, 0);
					close(gated.go); close(gated.out); close(gated.nfd);
					spawn(&gated, 1, n);
				}
				if (md->sync) {
					uint64_t f = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;

					if (ioctl(gated.nfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, f) < 0)
						die("NOTIF_SET_FLAGS (Linux 6.6+)");
				}
				cur_sync = md->sync;
			}
			if (md->pin == 1)
				pin(0);
			else
				unpin();
			c0 = cpu_ns(p->pid);
			s0 = cpu_ns(getpid());
			if (write(p->go, &cmd, 1) != 1)
				die("write");
			if (md->kind != M_DIRECT)
				serve(p->nfd, md->kind, n, devnull, p->pid, md->pin);
			for (size_t got = 0; got < n * sizeof(*t); ) {
				ssize_t k = read(p->out, (char *)t + got, n * sizeof(*t) - got);

				if (k <= 0)
					die("read");
				got += (size_t)k;
			}
			c1 = cpu_ns(p->pid);
			s1 = cpu_ns(getpid());
			qsort(t, n, sizeof(*t), cmp_u64);
			acc[m].p50[r] = (double)t[n / 2] / 1000.0;
			acc[m].p99[r] = (double)t[n * 99 / 100] / 1000.0;
			acc[m].cpu_child[r] = (double)(c1 - c0) / 1000.0 / (double)n;
			acc[m].cpu_sup[r] = md->kind == M_DIRECT ? 0 :
				(double)(s1 - s0) / 1000.0 / (double)n;
		}
	}
	unpin();
	if (write(direct.go, "q", 1) != 1 || write(gated.go, "q", 1) != 1)
		die("write");
	waitpid(direct.pid, NULL, 0);
	waitpid(gated.pid, NULL, 0);

	printf("# seccomp-floor -n %zu -r %d: per call, median over repetitions [min-max], us\n",
	       n, reps);
	printf("%-6s %-5s %-4s %-22s %-22s %-20s %-20s\n", "mode", "sync", "pin",
	       "call p50", "call p99", "cpu caller", "cpu supervisor");
	for (i = 0; i < NMODES; i++) {
		struct acc *a = &acc[i];
		double lo[4] = { vmin(a->p50, reps), vmin(a->p99, reps),
				 vmin(a->cpu_child, reps), vmin(a->cpu_sup, reps) };
		double hi[4] = { vmax(a->p50, reps), vmax(a->p99, reps),
				 vmax(a->cpu_child, reps), vmax(a->cpu_sup, reps) };

		printf("%-6s %-5s %-4s %6.2f [%6.2f-%6.2f] %6.2f [%6.2f-%6.2f] %5.2f [%5.2f-%5.2f] %5.2f [%5.2f-%5.2f]\n",
		       mname[modes[i].kind], modes[i].kind == M_DIRECT ? "-" : modes[i].sync ? "on" : "off",
		       modes[i].pin == 1 ? "yes" : modes[i].pin ? "hand" : "no",
		       median(a->p50, reps), lo[0], hi[0], median(a->p99, reps), lo[1], hi[1],
		       median(a->cpu_child, reps), lo[2], hi[2], median(a->cpu_sup, reps), lo[3], hi[3]);
	}
	return 0;
}
