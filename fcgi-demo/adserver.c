/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * adserver: the "advertisement banner" FastCGI responder of the insulation
 * experiment (Reumann et al., USENIX 2000, section "Insulation Despite
 * Service Sharing").  Single threaded, one request at a time: for each
 * request it burns a uniformly random amount of CPU in [0, --busy-max-ms]
 * and answers a small banner.
 *
 * It uses libfcgi's ordinary accept loop (FCGX_OpenSocket + FCGX_Accept_r),
 * so under the accept gate it is exactly the kind of unmodified service the
 * gate is for: the gate sees its accept() calls and nothing else.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "lib/util.h"

#define BACKLOG		1024	/* generous: 2 Apaches x 60 connections may queue here */

static volatile sig_atomic_t stopping;

static void
on_term(int sig)
{
	(void)sig;
	stopping = 1;
	/* Makes libfcgi's accept loop give up on EINTR instead of retrying. */
	FCGX_ShutdownPending();
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: adserver [--listen HOST:PORT] [--busy-max-ms N] [--seed N]\n"
		   "  --listen HOST:PORT   TCP address to listen on (default 127.0.0.1:9000)\n"
		   "  --busy-max-ms N      burn uniform [0, N] ms of CPU per request (default 10)\n"
		   "  --seed N             random seed (default: from the pid and the clock)\n");
}

/* xorshift64*: small, fast, and reproducible from --seed. */
static uint64_t
rnd_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static int64_t
thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Burn ns of CPU.  We count this thread's CPU time, not wall time, on
 * purpose: the experiment is about who gets the CPU.  A request costs a
 * fixed amount of work; when the scheduler takes the CPU away (the VS we are
 * bound to is over its share, or the other core is busy), the request must
 * take longer in wall time, not silently get cheaper.  A wall-clock loop
 * would finish "on time" after being descheduled and hide exactly the
 * contention the gate is meant to control.
 */
static void
burn_cpu(int64_t ns)
{
	int64_t end = thread_cpu_ns() + ns;
	volatile uint64_t sink = 0;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 64; i++)
			sink += (uint64_t)i;
}

/*
 * The cgroup this thread runs in, for the X-VS-Cgroup header: the v1 cpu
 * hierarchy's path when there is one (it decides CPU scheduling on hybrid
 * hosts), else the cgroup2 path.  Read per request, because the accept gate
 * moves the thread between requests.  /proc/thread-self needs Linux 3.17.
 */
static void
cgroup_paths(char *cpu, size_t cpulen, char *v2, size_t v2len)
{
	char line[512];
	FILE *f;

	snprintf(cpu, cpulen, "?");
	snprintf(v2, v2len, "?");
	if ((f = fopen("/proc/thread-self/cgroup", "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *ctl = strchr(line, ':'), *path;

		if (ctl == NULL || (path = strchr(++ctl, ':')) == NULL)
			continue;
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		if (strcmp(ctl, "") == 0)
			snprintf(v2, v2len, "%s", path);
		else if (strcmp(ctl, "cpu") == 0 || strncmp(ctl, "cpu,", 4) == 0)
			snprintf(cpu, cpulen, "%s", path);
	}
	fclose(f);
	if (strcmp(cpu, "?") == 0)
		snprintf(cpu, cpulen, "%s", v2);
}

static int
parse_args(int argc, char **argv, const char **listen, uint64_t *busy_max_ms,
    uint64_t *seed)
{
	const char *why;

	for (int i = 1; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
			usage(stdout);
			exit(0);
		}
		if (strcmp(opt, "--listen") && strcmp(opt, "--busy-max-ms") &&
		    strcmp(opt, "--seed")) {
			fprintf(stderr, "adserver: unknown option %s\n", opt);
			return -EINVAL;
		}
		if (val == NULL) {
			fprintf(stderr, "adserver: %s needs a value\n", opt);
			return -EINVAL;
		}
		i++;
		if (strcmp(opt, "--listen") == 0) {
			const char *colon = strrchr(val, ':');
			uint64_t port;

			if (colon == NULL || parse_u64(colon + 1, 1, 65535, &port, &why)) {
				fprintf(stderr, "adserver: --listen %s: want HOST:PORT with a port in 1..65535\n", val);
				return -EINVAL;
			}
			*listen = val;
		} else if (strcmp(opt, "--busy-max-ms") == 0) {
			if (parse_u64(val, 0, 10000, busy_max_ms, &why)) {
				fprintf(stderr, "adserver: --busy-max-ms %s: %s (want 0..10000)\n", val, why);
				return -EINVAL;
			}
		} else if (parse_u64(val, 0, UINT64_MAX, seed, &why)) {
			fprintf(stderr, "adserver: --seed %s: %s\n", val, why);
			return -EINVAL;
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	const char *listen = "127.0.0.1:9000";
	uint64_t busy_max_ms = 10, seed = 0, rng, nreq = 0, naccept = 0;
	struct sigaction sa;
	FCGX_Request req;
	int sock;

	if (parse_args(argc, argv, &listen, &busy_max_ms, &seed) < 0) {
		usage(stderr);
		return 2;
	}
	rng = seed ? seed : ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
	rng |= 1;	/* xorshift must not start at 0 */

	if (FCGX_Init() != 0) {
		fprintf(stderr, "adserver: FCGX_Init failed\n");
		return 1;
	}
	/* libfcgi wants ":PORT" or "HOST:PORT"; it resolves HOST itself. */
	if ((sock = FCGX_OpenSocket(listen, BACKLOG)) < 0) {
		fprintf(stderr, "adserver: cannot listen on %s: %s\n", listen,
		    strerror(errno ? errno : EADDRNOTAVAIL));
		return 1;
	}
	/* No SA_RESTART: a SIGTERM must break the blocking accept(). */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	/* FAIL_ACCEPT_ON_INTR: else libfcgi retries accept() after our SIGTERM. */
	FCGX_InitRequest(&req, sock, FCGI_FAIL_ACCEPT_ON_INTR);
	fprintf(stderr, "adserver: listening on %s, busy 0..%llu ms\n", listen,
	    (unsigned long long)busy_max_ms);
	while (!stopping) {
		char cpu[256], v2[256];
		int64_t busy_ns, t0;

		/*
		 * libfcgi closes the connection in FCGX_Finish_r unless the web
		 * server asked to keep it (FCGI_KEEP_CONN); ipcFd < 0 means the
		 * next FCGX_Accept_r calls accept().  Counting these lets a test
		 * check that every request passed accept(), i.e. the gate.
		 */
		int fresh = req.ipcFd < 0;

		if (FCGX_Accept_r(&req) < 0)
			break;
		naccept += fresh;
		nreq++;
		busy_ns = busy_max_ms ?
		    (int64_t)(rnd_next(&rng) % (busy_max_ms * 1000000 + 1)) : 0;
		t0 = thread_cpu_ns();
		burn_cpu(busy_ns);
		cgroup_paths(cpu, sizeof(cpu), v2, sizeof(v2));
		FCGX_FPrintF(req.out,
		    "Status: 200 OK\r\n"
		    "Content-Type: text/html\r\n"
		    "Cache-Control: no-store\r\n"
		    "X-VS-Cgroup: %s\r\n"
		    "X-VS-Cgroup2: %s\r\n"
		    "X-Busy-Us: %lld\r\n"
		    "X-FCGI-Requests: %llu\r\n"
		    "X-FCGI-Accepts: %llu\r\n"
		    "\r\n"
		    "<a href=\"http://ads.example/\"><img src=\"/banner%llu.gif\""
		    " alt=\"Your ad here\"></a>\n",
		    cpu, v2, (long long)((thread_cpu_ns() - t0) / 1000),
		    (unsigned long long)nreq, (unsigned long long)naccept,
		    (unsigned long long)(nreq % 8));
		FCGX_Finish_r(&req);
	}
	fprintf(stderr, "adserver: stopping: %llu requests, %llu connections accepted\n",
	    (unsigned long long)nreq, (unsigned long long)naccept);
	close(sock);
	return 0;
}
