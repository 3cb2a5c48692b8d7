// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cost of classifying a Unix connection (gates/accept/unixpeer.c: one
 * BPF iterator run over our own file table per accepted connection), as a
 * ratio against a plain TCP accept measured in the same run.
 *
 * Per repetition, interleaved so that all three see the same background
 * load, N connections of each kind, one at a time, in one process:
 *   tcp       connect + accept + close over 127.0.0.1 (the baseline)
 *   unix      connect + accept + close over a Unix stream socket
 *   unix+cls  the same plus unixpeer_lookup() on the accepted socket
 * The classification's cost is (unix+cls - unix) per connection; we also
 * time the lookup alone (median, p99 of its calls, per repetition and over
 * the run). Each lookup must find
 * the VS this process runs in (a one-entry table: its own cgroup2
 * directory), or the run fails.
 *
 *   unix-peer-cost [-r REPS] [-n CONNS] [-o CSV]
 * Root (the iterator is a tracing program). Prints a table, writes a CSV.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "gates/accept/gate.h"
#include "lib/log.h"
#include "lib/util.h"

static double
now_us(void)
{
	return (double)mono_ns() / 1e3;
}

static double
quant(double *v, size_t n, double q)
{
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);

	qsort(v, n, sizeof(*v), cmp_double);
	return v[i];
}

/* Our cgroup2 directory, from /proc/self/cgroup's "0::" line. */
static int
own_cg2(char *dir, size_t len)
{
	char line[4096], *p = NULL;
	FILE *f = fopen("/proc/self/cgroup", "re");
	int ok = 0;

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			p = line + 3;
			ok = 1;
			break;
		}
	if (f)
		fclose(f);
	if (!ok)
		return -1;
	snprintf(dir, len, "%s%s", access("/sys/fs/cgroup/unified", F_OK) == 0 ?
	    "/sys/fs/cgroup/unified" : "/sys/fs/cgroup", p);
	return 0;
}

enum mode { M_TCP, M_UNIX, M_CLS, M_MAX };
static const char *const mname[M_MAX] = { "tcp", "unix", "unix+cls" };

/*
 * N connections of mode m, one at a time; the mean µs per connection.
 * Lookup times go to lk[] (M_CLS). Returns -1 on an error or a wrong VS.
 */
static double
run(enum mode m, int lfd, const struct sockaddr *sa, socklen_t sl, int n,
    struct vs_table *t, uint32_t want, double *lk)
{
	double t0 = now_us();
	int i;

	for (i = 0; i < n; i++) {
		int c = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0), a;

		if (c < 0 || connect(c, sa, sl) < 0)
			return -1;
		if ((a = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			return -1;
		if (m == M_CLS) {
			double l0 = now_us();
			uint32_t id = unixpeer_lookup(t, a);

			lk[i] = now_us() - l0;
			if (id != want) {
				fprintf(stderr, "unix-peer-cost: classified as %u, not %u\n", id, want);
				return -1;
			}
		}
		close(a);
		close(c);
	}
	return (now_us() - t0) / n;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	socklen_t sl = sizeof(sin);
	struct vs_table t = { 0 };
	struct gate_vs v = { .id = 7 };
	const char *csv = "unix-peer-cost.csv";
	int reps = 7, n = 2000, o, r, tfd, ufd;
	double *lk, *lkall, res[M_MAX][64], lkmed[64], lkp99[64];
	size_t nall = 0;
	char dir[4200], tok[4220], tmpd[] = "/tmp/unix-peer-cost.XXXXXX";
	FILE *f;

	while ((o = getopt(argc, argv, "r:n:o:")) != -1) {
		switch (o) {
		case 'r': reps = atoi(optarg); break;
		case 'n': n = atoi(optarg); break;
		case 'o': csv = optarg; break;
		default:
			fprintf(stderr, "usage: unix-peer-cost [-r REPS] [-n CONNS] [-o CSV]\n");
			return 2;
		}
	}
	if (reps < 1 || reps > 64 || n < 10)
		return 2;
	log_init(1, 0, "unix-peer-cost");
	if (unixpeer_init() < 0)
		return 1;
	if (own_cg2(dir, sizeof(dir)) < 0)
		return fprintf(stderr, "unix-peer-cost: no cgroup2 membership\n"), 1;
	snprintf(tok, sizeof(tok), "unified=%s", dir);
	if (cgh_add(&v.cg, tok) != 1)
		return fprintf(stderr, "unix-peer-cost: out of memory\n"), 1;
	t.v = &v;
	t.n = 1;
	if ((tfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(tfd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(tfd, 128) < 0 ||
	    getsockname(tfd, (struct sockaddr *)&sin, &sl) < 0)
		return perror("tcp listener"), 1;
	if (!mkdtemp(tmpd))
		return perror("mkdtemp"), 1;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/l.sock", tmpd);
	if ((ufd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(ufd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(ufd, 128) < 0)
		return perror("unix listener"), 1;
	lk = calloc((size_t)n, sizeof(*lk));
	lkall = calloc((size_t)n * (size_t)reps, sizeof(*lkall));
	if (!lk || !lkall)
		return 1;
	/* one warm-up round of each, not counted */
	run(M_TCP, tfd, (struct sockaddr *)&sin, sizeof(sin), n / 10, &t, v.id, lk);
	run(M_UNIX, ufd, (struct sockaddr *)&sun, sizeof(sun), n / 10, &t, v.id, lk);
	run(M_CLS, ufd, (struct sockaddr *)&sun, sizeof(sun), n / 10, &t, v.id, lk);
	for (r = 0; r < reps; r++) {
		res[M_TCP][r] = run(M_TCP, tfd, (struct sockaddr *)&sin, sizeof(sin), n, &t, v.id, lk);
		res[M_UNIX][r] = run(M_UNIX, ufd, (struct sockaddr *)&sun, sizeof(sun), n, &t, v.id, lk);
		res[M_CLS][r] = run(M_CLS, ufd, (struct sockaddr *)&sun, sizeof(sun), n, &t, v.id, lk);
		if (res[M_TCP][r] < 0 || res[M_UNIX][r] < 0 || res[M_CLS][r] < 0) {
			fprintf(stderr, "unix-peer-cost: repetition %d failed\n", r);
			unlink(sun.sun_path);
			rmdir(tmpd);
			return 1;
		}
		memcpy(lkall + nall, lk, (size_t)n * sizeof(*lk));
		nall += (size_t)n;
		lkmed[r] = quant(lk, (size_t)n, 0.5);
		lkp99[r] = quant(lk, (size_t)n, 0.99);
	}
	unlink(sun.sun_path);
	rmdir(tmpd);
	if (!(f = fopen(csv, "w")))
		return perror(csv), 1;
	fprintf(f, "rep,tcp_us,unix_us,unix_cls_us,cls_us,cls_over_tcp,lookup_med_us,lookup_p99_us,"
	    "lookup_over_tcp\n");
	{
		double cls[64], ratio[64], m[M_MAX][64], med, p99;
		int k;

		for (r = 0; r < reps; r++) {
			cls[r] = res[M_CLS][r] - res[M_UNIX][r];
			ratio[r] = cls[r] / res[M_TCP][r];
			fprintf(f, "%d,%.2f,%.2f,%.2f,%.2f,%.3f,%.2f,%.2f,%.4f\n", r, res[M_TCP][r],
			    res[M_UNIX][r], res[M_CLS][r], cls[r], ratio[r], lkmed[r], lkp99[r],
			    lkmed[r] / res[M_TCP][r]);
		}
		printf("%-10s %10s %10s %10s   (us per connection, %d reps x %d conns)\n",
		    "", "median", "min", "max", reps, n);
		/* quant() sorts: take the median first, then min and max */
		for (k = 0; k < M_MAX; k++) {
			memcpy(m[k], res[k], sizeof(double) * (size_t)reps);
			med = quant(m[k], (size_t)reps, 0.5);
			printf("%-10s %10.2f %10.2f %10.2f\n", mname[k], med, m[k][0], m[k][reps - 1]);
		}
		med = quant(cls, (size_t)reps, 0.5);
		printf("%-10s %10.2f %10.2f %10.2f\n", "cls", med, cls[0], cls[reps - 1]);
		med = quant(ratio, (size_t)reps, 0.5);
		printf("cls / tcp accept: median %.3f (min %.3f, max %.3f)\n", med, ratio[0],
		    ratio[reps - 1]);
		med = quant(lkall, nall, 0.5);
		p99 = quant(lkall, nall, 0.99);
		printf("lookup alone: median %.2f us, p99 %.2f us, max %.2f us (%zu calls); "
		    "median / tcp accept median %.3f\n", med, p99, lkall[nall - 1], nall,
		    med / quant(m[M_TCP], (size_t)reps, 0.5));
	}
	fclose(f);
	return 0;
}
