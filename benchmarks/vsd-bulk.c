// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vsd-bulk: send many requests to vsd from one process, timing each, so the
 * scale benchmark can tell vsd's own cost from the cost of starting vsctl.
 *
 *   vsd-bulk SOCKET create PREFIX N CPU	create PREFIX0..PREFIX<N-1>
 *   vsd-bulk SOCKET destroy PREFIX N		destroy them
 *   vsd-bulk SOCKET miss PREFIX N		N 'show' of a VS that does not exist
 *
 * Prints "OP N TOTAL_MS MEDIAN_US P90_US MAX_US"; exit 1 if a request failed
 * (other than the expected 'no VS' of miss).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/proto.h"
#include "lib/util.h"

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int
main(int argc, char **argv)
{
	struct buf req = { 0 }, reply = { 0 };
	const char *sock, *op, *pfx, *cpu = NULL, *why;
	double *lat, t0, total;
	uint64_t n, i;
	unsigned status;
	int r, bad = 0;

	if (argc < 5 || (strcmp(argv[2], "create") == 0 && argc != 6)) {
		fprintf(stderr, "usage: vsd-bulk SOCKET create|destroy|miss PREFIX N [CPU]\n");
		return 2;
	}
	sock = argv[1], op = argv[2], pfx = argv[3];
	if (parse_u64(argv[4], 1, 100000, &n, &why) < 0) {
		fprintf(stderr, "vsd-bulk: N '%s' %s\n", argv[4], why);
		return 2;
	}
	if (argc == 6)
		cpu = argv[5];
	if (strcmp(op, "create") && strcmp(op, "destroy") && strcmp(op, "miss")) {
		fprintf(stderr, "vsd-bulk: unknown operation '%s'\n", op);
		return 2;
	}
	if (!(lat = calloc(n, sizeof(*lat))))
		return 1;
	total = now_us();
	for (i = 0; i < n; i++) {
		buf_reset(&req);
		if (strcmp(op, "miss") == 0) {
			proto_add(&req, "show");
			proto_addf(&req, "name=%s-none", pfx);
		} else {
			proto_add(&req, op);
			proto_addf(&req, "name=%s%llu", pfx, (unsigned long long)i);
			if (cpu)
				proto_addf(&req, "cpu=%s", cpu);
		}
		t0 = now_us();
		if ((r = proto_call(sock, &req, -1, &status, &reply, 0)) == 0)
			r = (int)status;
		lat[i] = now_us() - t0;
		if (r < 0 || (r > 0 && strcmp(op, "miss") != 0)) {
			if (bad++ < 3)
				fprintf(stderr, "vsd-bulk: %s %s%llu: %s\n", op, pfx, (unsigned long long)i,
					r < 0 ? strerror(-r) : reply.p ? reply.p : "error");
		}
	}
	total = now_us() - total;
	qsort(lat, n, sizeof(*lat), cmp_double);
	printf("%s %llu %.1f %.0f %.0f %.0f\n", op, (unsigned long long)n, total / 1e3, lat[n / 2],
	       lat[n * 9 / 10], lat[n - 1]);
	free(lat);
	buf_free(&req);
	buf_free(&reply);
	return bad ? 1 : 0;
}
