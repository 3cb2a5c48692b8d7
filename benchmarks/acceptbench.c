// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's cost per accept: an accept-and-close server and the
 * client that drives it over loopback (benchmarks/accept-cost runs both,
 * with and without the gate, in one run).
 *
 *   acceptbench server [-f]
 *     listens on 127.0.0.1 (port chosen by the kernel, printed as "port N"),
 *     then accepts with a plain blocking accept() and closes each connection
 *     at once. It knows nothing about the gate: the same binary is run
 *     ungated and under `vsctl run --gate accept`. With -f it first reads
 *     the whole FastCGI request the clients' -f sends.
 *   -f (seq, conc): after connect(), send what Apache's mod_proxy_fcgi sends
 *     first for a PHP page (BEGIN_REQUEST, about 600 bytes of PARAMS with
 *     HTTP_HOST a.example, the empty PARAMS and STDIN records), in one write:
 *     what the accept gate peeks at when it classifies by params.
 *   acceptbench seq -p PORT [-P PORT2] [-n N] [-w WARMUP] [-o RAWFILE]
 *     one connection at a time; per connection the time from connect() to
 *     the server's FIN (read() returns 0). Prints
 *     "n N median_us M p90_us X p99_us Y mean_us Z errors E". With -P, the
 *     connections alternate between PORT and PORT2 and it prints one such
 *     line for each, prefixed "a " and "b ".
 *   acceptbench conc -p PORT [-j THREADS] [-d SECONDS]
 *     THREADS clients in a closed loop for SECONDS; prints
 *     "conns N seconds S rate R errors E client_cpu_us_per_conn C" (C: this
 *     process's own CPU time, getrusage).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint16_t port, port2;
static unsigned duration_s = 2;
static uint8_t fcgi_req[1024];
static size_t fcgi_len;		/* 0: no -f */

/* One FastCGI record into fcgi_req. */
static void
fcgi_rec(unsigned type, const uint8_t *c, size_t clen)
{
	uint8_t *h = fcgi_req + fcgi_len;

	h[0] = 1;
	h[1] = (uint8_t)type;
	h[2] = 0;
	h[3] = 1;
	h[4] = (uint8_t)(clen >> 8);
	h[5] = (uint8_t)clen;
	h[6] = h[7] = 0;
	memcpy(h + 8, c, clen);
	fcgi_len += 8 + clen;
}

/* The request of -f: the params Apache sends for a PHP page, in its order. */
static void
fcgi_build(void)
{
	static const char *const env[][2] = {
		{ "HTTP_HOST", "a.example" }, { "HTTP_USER_AGENT", "acceptbench/1" },
		{ "HTTP_ACCEPT", "*/*" }, { "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" },
		{ "SERVER_SIGNATURE", "" }, { "SERVER_SOFTWARE", "Apache/2.4.62 (Debian)" },
		{ "SERVER_NAME", "a.example" }, { "SERVER_ADDR", "127.0.0.1" }, { "SERVER_PORT", "80" },
		{ "REMOTE_ADDR", "127.0.0.1" }, { "DOCUMENT_ROOT", "/srv/a" },
		{ "REQUEST_SCHEME", "http" }, { "CONTEXT_PREFIX", "" },
		{ "CONTEXT_DOCUMENT_ROOT", "/srv/a" }, { "SERVER_ADMIN", "[no address given]" },
		{ "SCRIPT_FILENAME", "proxy:fcgi://localhost/srv/a/ad.php" },
		{ "REMOTE_PORT", "40912" }, { "GATEWAY_INTERFACE", "CGI/1.1" },
		{ "SERVER_PROTOCOL", "HTTP/1.1" }, { "REQUEST_METHOD", "GET" },
		{ "QUERY_STRING", "" }, { "REQUEST_URI", "/ad.php" }, { "SCRIPT_NAME", "/ad.php" },
	};
	static const uint8_t begin[8] = { 0, 1 };
	uint8_t p[900];
	size_t n = 0, i;

	fcgi_len = 0;
	fcgi_rec(1, begin, sizeof(begin));
	for (i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
		size_t nl = strlen(env[i][0]), vl = strlen(env[i][1]);

		p[n++] = (uint8_t)nl;
		p[n++] = (uint8_t)vl;
		memcpy(p + n, env[i][0], nl);
		memcpy(p + n + nl, env[i][1], vl);
		n += nl + vl;
	}
	fcgi_rec(4, p, n);
	fcgi_rec(4, NULL, 0);
	fcgi_rec(5, NULL, 0);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
server(int readreq)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int one = 1, lfd;

	signal(SIGPIPE, SIG_IGN);
	if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(lfd, 4096) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &al) < 0) {
		perror("acceptbench: server: listen");
		return 1;
	}
	printf("port %u\n", ntohs(a.sin_port));
	fflush(stdout);
	for (;;) {
		int fd = accept(lfd, NULL, NULL);
		uint8_t buf[sizeof(fcgi_req)];
		size_t got = 0;
		ssize_t k;

		/* -f: the request first, or our close would reset the connection */
		while (fd >= 0 && readreq && got < fcgi_len &&
		    ((k = read(fd, buf, sizeof(buf))) > 0 || (k < 0 && errno == EINTR)))
			got += k > 0 ? (size_t)k : 0;
		if (fd >= 0)
			close(fd);
		else if (errno != EINTR && errno != ECONNABORTED) {
			perror("acceptbench: server: accept");
			return 1;
		}
	}
}

/* One connection: connect, wait for the server's close. 0 or -errno. */
static int
one_conn(uint16_t to)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(to),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char c;
	ssize_t n;
	int fd, r = 0;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		r = -errno;
	else if (fcgi_len && write(fd, fcgi_req, fcgi_len) != (ssize_t)fcgi_len)
		r = -EIO;
	else if ((n = read(fd, &c, 1)) != 0)
		r = n < 0 ? -errno : -EPROTO;
	close(fd);
	return r;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Latency statistics of k samples (sorted in place), one line. */
static void
report(const char *tag, uint64_t *lat, unsigned k, unsigned errs)
{
	uint64_t sum = 0;
	unsigned i;

	if (k == 0) {
		printf("%sn 0 errors %u\n", tag, errs);
		return;
	}
	for (i = 0; i < k; i++)
		sum += lat[i];
	qsort(lat, k, sizeof(*lat), cmp_u64);
	printf("%sn %u median_us %.2f p90_us %.2f p99_us %.2f mean_us %.2f errors %u\n", tag, k,
	    lat[k / 2] / 1e3, lat[(size_t)k * 90 / 100] / 1e3, lat[(size_t)k * 99 / 100] / 1e3,
	    (double)sum / k / 1e3, errs);
}

/*
 * n connections to each port in turn (one to port, one to port2, ...): the
 * two servers see the same background load, which on a shared machine moves
 * far more than what is measured. port2 == 0: one server only.
 */
static int
seq(unsigned n, unsigned warm, const char *raw)
{
	uint64_t *lat[2];
	unsigned i, k[2] = { 0, 0 }, errs[2] = { 0, 0 }, nsrv = port2 ? 2 : 1, s;
	FILE *f = NULL;

	lat[0] = calloc(n, sizeof(uint64_t));
	lat[1] = calloc(n, sizeof(uint64_t));
	if (!lat[0] || !lat[1])
		return 1;
	for (i = 0; i < warm; i++)
		for (s = 0; s < nsrv; s++)
			one_conn(s ? port2 : port);
	for (i = 0; i < n; i++)
		for (s = 0; s < nsrv; s++) {
			uint64_t t0 = now_ns();

			if (one_conn(s ? port2 : port) < 0) {
				errs[s]++;
				continue;
			}
			lat[s][k[s]++] = now_ns() - t0;
		}
	if (raw && (f = fopen(raw, "we"))) {
		for (i = 0; i < k[0]; i++)
			fprintf(f, "%.2f\n", lat[0][i] / 1e3);
		fclose(f);
	}
	report(nsrv > 1 ? "a " : "", lat[0], k[0], errs[0]);
	if (nsrv > 1)
		report("b ", lat[1], k[1], errs[1]);
	free(lat[0]);
	free(lat[1]);
	return k[0] == 0 || errs[0] > n / 100 || errs[1] > n / 100;
}

struct worker {
	pthread_t t;
	uint64_t end;
	unsigned long conns, errs;
};

static void *
conc_worker(void *arg)
{
	struct worker *w = arg;

	while (now_ns() < w->end) {
		if (one_conn(port) == 0)
			w->conns++;
		else
			w->errs++;
	}
	return NULL;
}

static int
conc(unsigned nthreads)
{
	struct worker *w = calloc(nthreads, sizeof(*w));
	unsigned long conns = 0, errs = 0;
	struct rusage ru;
	double cpu_us;
	uint64_t t0, t1;
	unsigned i;

	if (!w)
		return 1;
	t0 = now_ns();
	for (i = 0; i < nthreads; i++) {
		w[i].end = t0 + duration_s * 1000000000ull;
		if (pthread_create(&w[i].t, NULL, conc_worker, &w[i]) != 0) {
			fprintf(stderr, "acceptbench: pthread_create failed\n");
			return 1;
		}
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(w[i].t, NULL);
		conns += w[i].conns;
		errs += w[i].errs;
	}
	t1 = now_ns();
	getrusage(RUSAGE_SELF, &ru);
	cpu_us = (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec +
	    (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
	printf("conns %lu seconds %.3f rate %.0f errors %lu client_cpu_us_per_conn %.2f\n", conns,
	    (t1 - t0) / 1e9, conns / ((t1 - t0) / 1e9), errs, conns ? cpu_us / (double)conns : 0);
	free(w);
	return errs > conns / 100;
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: acceptbench server [-f]\n"
	    "       acceptbench seq -p PORT [-P PORT2] [-n N] [-w WARMUP] [-o RAWFILE] [-f]\n"
	    "       acceptbench conc -p PORT [-j THREADS] [-d SECONDS] [-f]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	unsigned n = 2000, warm = 200, nthreads = 4;
	const char *raw = NULL, *mode;
	int c;

	if (argc < 2)
		usage();
	mode = argv[1];
	fcgi_build();
	if (strcmp(mode, "server") == 0)
		return server(argc > 2 && strcmp(argv[2], "-f") == 0);
	fcgi_len = 0;
	optind = 2;
	while ((c = getopt(argc, argv, "p:P:n:w:o:j:d:f")) != -1) {
		switch (c) {
		case 'f': fcgi_build(); break;
		case 'p': port = (uint16_t)atoi(optarg); break;
		case 'P': port2 = (uint16_t)atoi(optarg); break;
		case 'n': n = (unsigned)atoi(optarg); break;
		case 'w': warm = (unsigned)atoi(optarg); break;
		case 'o': raw = optarg; break;
		case 'j': nthreads = (unsigned)atoi(optarg); break;
		case 'd': duration_s = (unsigned)atoi(optarg); break;
		default: usage();
		}
	}
	if (!port || !n || !nthreads || !duration_s)
		usage();
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(mode, "seq") == 0)
		return seq(n, warm, raw);
	if (strcmp(mode, "conc") == 0)
		return conc(nthreads);
	usage();
}
