// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The gate's own work per connection when it classifies by FastCGI params
 * (gates/accept/hold.c), without the rest of an accept: one recv(MSG_PEEK)
 * of what Apache's mod_proxy_fcgi sent first (the 644 bytes captured in
 * tests/unit/fcgi-records.h) from a Unix socket, and fcgi_parse() of it.
 * CPU time per operation, median of REPS runs of N each; as a baseline in
 * the same run, a recv(MSG_PEEK) of one byte (what any peek costs).
 *
 *   benchmarks/fcgi-peek [N [REPS]]
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gates/accept/fcgi.h"
#include "tests/unit/fcgi-records.h"
#include "lib/util.h"

static uint8_t buf[FCGI_PARAMS_MAX];
static struct fcgi_stream params;

static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int
main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 100000;
	unsigned reps = argc > 2 ? (unsigned)atoi(argv[2]) : 7, r, i, k;
	double *t[3];
	int sv[2];
	volatile int sink = 0;
	static const char *const what[3] = { "peek 1 byte", "peek request", "parse request" };

	if (!n || !reps || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 ||
	    write(sv[0], fcgi_apache, sizeof(fcgi_apache)) != (ssize_t)sizeof(fcgi_apache))
		return 1;
	for (k = 0; k < 3; k++)
		if (!(t[k] = calloc(reps, sizeof(double))))
			return 1;
	for (r = 0; r < reps; r++) {
		uint64_t t0 = cpu_ns();

		for (i = 0; i < n; i++)
			sink += (int)recv(sv[1], buf, 1, MSG_PEEK | MSG_DONTWAIT);
		uint64_t t1 = cpu_ns();
		for (i = 0; i < n; i++)
			sink += (int)recv(sv[1], buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
		uint64_t t2 = cpu_ns();
		for (i = 0; i < n; i++)
			sink += fcgi_parse(buf, sizeof(fcgi_apache), &params);
		uint64_t t3 = cpu_ns();
		t[0][r] = (double)(t1 - t0) / n;
		t[1][r] = (double)(t2 - t1) / n;
		t[2][r] = (double)(t3 - t2) / n;
	}
	printf("# %u x %u operations; CPU ns per operation: median [min-max]\n", reps, n);
	for (k = 0; k < 3; k++) {
		qsort(t[k], reps, sizeof(double), cmp_double);
		printf("%-14s %8.1f [%.1f-%.1f]\n", what[k], t[k][reps / 2], t[k][0], t[k][reps - 1]);
	}
	printf("peek request / peek 1 byte: %.2f\n", t[1][reps / 2] / t[0][reps / 2]);
	return sink == 42;
}
