// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's decision by request content: rules_query_attrs() on a
 * generated file of N sites (N = 10, 1,000, 10,000; each "site sNNNNN.example
 * alias www.sNNNNN.example docroot /var/www/sNNNNN", on at most 1,000 VSs: the
 * shares of 10,000 VSs would not fit in 100%), against a loop that touches
 * the same requests (strlen of each parameter) in the same run. Three kinds
 * of request, drawn at random from 4,096 made up front:
 *   apache: what mod_proxy_fcgi sends: HTTP_HOST www.sNNNNN.example,
 *           DOCUMENT_ROOT /var/www/sNNNNN, SCRIPT_FILENAME .../index.php
 *   host:   only a host, with a port: sNNNNN.example:8080
 *   miss:   a site the file does not have (the default vhost's docroot)
 * For scale, the floor of what a linear scan would cost: one strcmp of the
 * host against every binding's pattern (no normalisation, no docroots),
 * on QUERIES / 100 requests.
 * Prints one CSV line per N, kind and repetition:
 * n_sites,kind,rep,ns_per_query,ns_per_baseline,ns_per_scan_floor
 *   rules-attrs [REPS]
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-rules.h"

#define QUERIES	1000000
#define NREQ	4096
#define MAXVS	1000

static struct rules *
make(int n)
{
	struct buf f = { 0 };
	int i, nvs = n < MAXVS ? n : MAXVS;

	buf_printf(&f, "vs fe cpu 5%%\nvs php cpu 5%%\nvs c[0000..%04d] cpu 0.01%%\n"
		   "service php-fpm home php command \"php-fpm8.2 -F\"\n"
		   "(accept, *, req = *) => (requester)\n", nvs - 1);
	for (i = 0; i < n; i++)
		buf_printf(&f, "site s%05d.example alias www.s%05d.example docroot /var/www/s%05d "
			   "vs c%04d\n", i, i, i, i % nvs);
	return bench_load("rules-attrs", &f);
}

struct req {
	char	 host[64], docroot[64], script[80];
	struct rules_req_attrs a;
	int	 want;		/* the VS index it must give, for a sanity check */
};

static void
make_reqs(struct rules *rs, struct req *r, int n, const char *kind)
{
	unsigned x = 4242;
	int i, s;

	for (i = 0; i < NREQ; i++) {
		x = x * 1103515245u + 12345u;
		s = (int)((x >> 8) % (unsigned)n);
		memset(&r[i], 0, sizeof(r[i]));
		if (strcmp(kind, "apache") == 0) {
			snprintf(r[i].host, sizeof(r[i].host), "www.s%05d.example", s);
			snprintf(r[i].docroot, sizeof(r[i].docroot), "/var/www/s%05d", s);
			snprintf(r[i].script, sizeof(r[i].script), "/var/www/s%05d/index.php", s);
			r[i].a = (struct rules_req_attrs){ r[i].host, r[i].docroot, r[i].script };
		} else if (strcmp(kind, "host") == 0) {
			snprintf(r[i].host, sizeof(r[i].host), "s%05d.example:8080", s);
			r[i].a = (struct rules_req_attrs){ r[i].host, NULL, NULL };
		} else {
			snprintf(r[i].host, sizeof(r[i].host), "nosuch%05d.example", s);
			snprintf(r[i].docroot, sizeof(r[i].docroot), "/var/www/html");
			snprintf(r[i].script, sizeof(r[i].script), "/var/www/html/index.php");
			r[i].a = (struct rules_req_attrs){ r[i].host, r[i].docroot, r[i].script };
		}
		if (strcmp(kind, "miss") == 0) {
			r[i].want = RULES_VS_UNKNOWN;
		} else {
			char vs[16];

			snprintf(vs, sizeof(vs), "c%04d", s % (n < MAXVS ? n : MAXVS));
			r[i].want = rules_vs_index(rs, vs);
		}
		if (rules_query_attrs(rs, 0, 1, 0, &r[i].a) != r[i].want) {
			fprintf(stderr, "rules-attrs: %s request %d: wrong VS\n", kind, i);
			exit(1);
		}
	}
}

/* One repetition of one kind on one file: the three loops, one CSV line. */
static long
run(struct rules *rs, const struct req *r, int n, const char *kind, int rep)
{
	int php = rules_vs_index(rs, "php"), fe = rules_vs_index(rs, "fe");
	double t0, t1, t2, t3;
	unsigned x = 777;
	long i, sink = 0;

	t0 = now_ns();
	for (i = 0; i < QUERIES; i++) {
		const struct rules_req_attrs *a;

		x = x * 1103515245u + 12345u;
		a = &r[(x >> 8) % NREQ].a;
		sink += (long)strlen(a->host) + (long)(a->docroot ? strlen(a->docroot) : 0) +
		    (long)(a->script ? strlen(a->script) : 0);
	}
	t1 = now_ns();
	for (i = 0; i < QUERIES; i++) {
		x = x * 1103515245u + 12345u;
		sink += rules_query_attrs(rs, 0, php, fe, &r[(x >> 8) % NREQ].a);
	}
	t2 = now_ns();
	for (i = 0; i < QUERIES / 100; i++) {
		const char *h;
		size_t c;

		x = x * 1103515245u + 12345u;
		h = r[(x >> 8) % NREQ].a.host;
		for (c = 0; c < rs->ncrules; c++)
			if (strcmp(h, rs->crules[c].pat) == 0)
				break;
		sink += (long)c;
	}
	t3 = now_ns();
	printf("%d,%s,%d,%.1f,%.1f,%.1f\n", n, kind, rep, (t2 - t1) / QUERIES,
	       (t1 - t0) / QUERIES, (t3 - t2) / (QUERIES / 100));
	fflush(stdout);
	return sink;
}

/*
 * The sizes take turns within each repetition, so a change in the machine's
 * load (it is shared) falls on all of them alike.
 */
int
main(int argc, char **argv)
{
	static const int sizes[] = { 10, 1000, 10000 };
	static const char *const kinds[] = { "apache", "host", "miss" };
	int reps = argc > 1 ? atoi(argv[1]) : 5, s, k, rep;
	struct rules *rs[3];
	struct req *r[3][3];
	volatile long sink = 0;

	for (s = 0; s < 3; s++) {
		rs[s] = make(sizes[s]);
		for (k = 0; k < 3; k++) {
			if (!(r[s][k] = calloc(NREQ, sizeof(struct req))))
				return 1;
			make_reqs(rs[s], r[s][k], sizes[s], kinds[k]);
		}
	}
	printf("n_sites,kind,rep,ns_per_query,ns_per_baseline,ns_per_scan_floor\n");
	for (rep = 0; rep < reps; rep++)
		for (k = 0; k < 3; k++)
			for (s = 0; s < 3; s++)
				sink += run(rs[s], r[s][k], sizes[s], kinds[k], rep);
	for (s = 0; s < 3; s++) {
		for (k = 0; k < 3; k++)
			free(r[s][k]);
		rules_free(rs[s]);
	}
	return sink == 42 ? 1 : 0;
}
