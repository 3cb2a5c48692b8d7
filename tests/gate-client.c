// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Load/check client for the accept-gate tests. Opens N connections to
 * 127.0.0.1:PORT with J threads, sends "id K[ REQ]\n" on each and reads the
 * answer to EOF. Every answer must echo its own id exactly once.
 *
 *   gate-client -p PORT|PATH [-n N | -t SEC] [-j J] [-r REQ] [-b BASEPORT] [-v] [-x] [-w]
 *     -t   keep going for SEC seconds instead of N requests, then also print
 *          the latency (connect to answer) of the answers: "p50_ms X p99_ms Y
 *          max_ms Z"
 *     -p   a PATH (starting with '/') is a Unix stream socket's
 *     -b   bind connection K to source port BASEPORT+K (tests classify by it);
 *          to a Unix socket: to the abstract name "gc-<BASEPORT+K>"
 *     -v   print every answer ("K <answer>")
 *     -x   connect and close without a request (a client that gives up)
 *     -w   a refused connection is tried again at once, for up to 30 s (a
 *          client waiting for the service to listen: it connects within
 *          microseconds of the listen())
 *   gate-client -u SOCKET   print what a Unix stream socket says (status)
 * Exit 0 when all N answers were right; prints "ok N bad B".
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <stddef.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int port, base, verbose, quit_early, wait_listen;
static const char *upath;	/* -p PATH: a Unix stream socket */
static long total, next_id;
static const char *reqs = "";
static long nok, nbad;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/* -t: the deadline, and each answer's latency */
static double deadline;
static double wait_until;	/* -w: until when a refused connection is tried again */
static double *lat;
static size_t nlat, caplat;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the q-quantile (nearest rank) of the sorted latencies, in ms */
static double
quantile_ms(double q)
{
	size_t i = (size_t)(q * (double)nlat + 0.999999);

	if (nlat == 0)
		return 0;
	if (i < 1)
		i = 1;
	if (i > nlat)
		i = nlat;
	return lat[i - 1] * 1e3;
}

/* A connected Unix stream socket for request id; -1 on error. */
static int
unix_connect(long id)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (base) {
		struct sockaddr_un me = { .sun_family = AF_UNIX };
		int n = snprintf(me.sun_path + 1, sizeof(me.sun_path) - 1, "gc-%ld", base + id);

		if (bind(fd, (struct sockaddr *)&me,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) < 0) {
			perror("gate-client: bind");
			close(fd);
			return -1;
		}
	}
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", upath);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		perror("gate-client: connect");
		close(fd);
		return -1;
	}
	return fd;
}

static int
one(long id)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char buf[2048], want[64];
	size_t off = 0;
	ssize_t n;
	int fd, one_ = 1;

	if (upath) {
		if ((fd = unix_connect(id)) < 0)
			return -1;
		goto connected;
	}
again:
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (base) {
		struct sockaddr_in src = { .sin_family = AF_INET,
			.sin_addr.s_addr = htonl(INADDR_LOOPBACK), .sin_port = htons((uint16_t)(base + id)) };

		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one_, sizeof(one_));
		if (bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0) {
			perror("gate-client: bind");
			close(fd);
			return -1;
		}
	}
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)port);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		if (errno == ECONNREFUSED && wait_listen && now_s() < wait_until) {
			close(fd);
			goto again;
		}
		perror("gate-client: connect");
		close(fd);
		return -1;
	}
connected:
	if (quit_early) {
		close(fd);
		return 0;
	}
	n = snprintf(buf, sizeof(buf), "id %ld%s%s\n", id, *reqs ? " " : "", reqs);
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	while (off < sizeof(buf) - 1 && (n = read(fd, buf + off, sizeof(buf) - 1 - off)) > 0)
		off += (size_t)n;
	close(fd);
	buf[off] = '\0';
	snprintf(want, sizeof(want), "req=id %ld", id);
	/* exactly one answer line, with our id */
	if (!strstr(buf, want) || strchr(buf, '\n') != buf + off - 1) {
		fprintf(stderr, "gate-client: id %ld: bad answer \"%s\"\n", id, buf);
		return -1;
	}
	if (verbose) {
		pthread_mutex_lock(&mu);
		printf("%ld %s", id, buf);
		pthread_mutex_unlock(&mu);
	}
	return 0;
}

static void *
worker(void *arg)
{
	(void)arg;
	for (;;) {
		long id;
		int r;

		double t0;

		pthread_mutex_lock(&mu);
		if (deadline > 0)
			id = now_s() < deadline ? next_id++ : -1;
		else
			id = next_id < total ? next_id++ : -1;
		pthread_mutex_unlock(&mu);
		if (id < 0)
			return NULL;
		t0 = now_s();
		r = one(id);
		t0 = now_s() - t0;
		pthread_mutex_lock(&mu);
		if (r == 0)
			nok++;
		else
			nbad++;
		if (r == 0 && deadline > 0) {
			if (nlat == caplat) {
				size_t cap = caplat ? caplat * 2 : 1024;
				double *nl = realloc(lat, cap * sizeof(*nl));

				if (!nl) {
					perror("gate-client");
					exit(2);
				}
				lat = nl;
				caplat = cap;
			}
			lat[nlat++] = t0;
		}
		pthread_mutex_unlock(&mu);
	}
}

static int
dump_unix(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char buf[65536];
	ssize_t n;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		perror(path);
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	return 0;
}

int
main(int argc, char **argv)
{
	pthread_t th[256];
	int c, j = 1, i;
	double secs = 0;

	total = 1;
	while ((c = getopt(argc, argv, "p:n:t:j:r:b:vxwu:")) != -1) {
		switch (c) {
		case 'u': return dump_unix(optarg);
		case 'p':
			if (optarg[0] == '/')
				upath = optarg;
			else
				port = atoi(optarg);
			break;
		case 'n': total = atol(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'j': j = atoi(optarg); break;
		case 'r': reqs = optarg; break;
		case 'b': base = atoi(optarg); break;
		case 'v': verbose = 1; break;
		case 'x': quit_early = 1; break;
		case 'w': wait_listen = 1; break;
		default:
			fprintf(stderr, "usage: gate-client -p PORT [-n N | -t SEC] [-j J] [-r REQ] [-b BASEPORT] [-v] [-x] [-w]\n");
			return 2;
		}
	}
	if (j < 1 || j > 256 || (!port && !upath) || secs < 0)
		return 2;
	if (secs > 0)
		deadline = now_s() + secs;
	wait_until = now_s() + 30;
	for (i = 0; i < j; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (i = 0; i < j; i++)
		pthread_join(th[i], NULL);
	if (secs > 0) {
		qsort(lat, nlat, sizeof(*lat), cmp_double);
		printf("ok %ld bad %ld p50_ms %.1f p99_ms %.1f max_ms %.1f\n", nok, nbad,
		    quantile_ms(0.5), quantile_ms(0.99), quantile_ms(1.0));
	} else {
		printf("ok %ld bad %ld\n", nok, nbad);
	}
	return nbad ? 1 : 0;
}
