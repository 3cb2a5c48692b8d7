/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * loadgen: a light closed-loop HTTP/1.1 load generator for the insulation
 * and virtual-host benchmarks (the paper's Figures 11 and 12).
 *
 * Each --site gets N connections; each connection sends its next request as
 * soon as the previous answer is complete (keep-alive; it reconnects when
 * the server closes).  A share of the requests (--ad-pct, default 30; a
 * site's own: --site-ad-pct) go to the ad path, the rest are picked
 * uniformly from the static paths.  One
 * thread, one epoll set, everything allocated up front: the generator shares
 * a 2-core machine with the servers it measures and must cost them little.
 *
 * Only requests that start after the warm-up and finish before the end of
 * the run are counted.  Latency goes into a fixed histogram (10 us buckets
 * up to 100 ms, 1 ms buckets up to 10 s), so recording allocates nothing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/util.h"

#define MAX_SITES	8
#define MAX_PATHS	256
#define HDR_MAX		8192
#define REQ_TIMEOUT_NS	(10LL * 1000000000)	/* a stuck request counts as an error */

#define FINE_US		10			/* fine buckets: 10 us ... */
#define FINE_N		10000			/* ... up to 100 ms */
#define COARSE_US	1000			/* coarse: 1 ms ... */
#define COARSE_N	9900			/* ... up to 10 s */
#define HIST_N		(FINE_N + COARSE_N + 1)	/* last bucket: overflow */

struct hist {
	uint64_t n;
	uint32_t b[HIST_N];
};

struct reqtab {
	char *buf[MAX_PATHS + 1];	/* [0] is the ad request */
	size_t len[MAX_PATHS + 1];
	int nstatic;
};

struct site {
	char name[32];
	struct sockaddr_in addr;
	int conns;
	const char *host;		/* its Host header; NULL: --host's */
	int ad_pct;			/* its --site-ad-pct; -1: --ad-pct's */
	struct reqtab rt;		/* its requests, with that header */
	uint64_t requests, errors, ad_requests;
	struct hist all, ad;
};

enum cstate { C_IDLE, C_CONNECTING, C_WRITING, C_HEADERS, C_BODY_LEN,
	C_CHUNK_SIZE, C_CHUNK_DATA, C_CHUNK_CRLF, C_TRAILER, C_BODY_EOF };

struct conn {
	struct site *site;
	int fd;
	enum cstate st;
	int is_ad, close_after, status;
	uint32_t mask;			/* events registered with epoll, 0 if none */
	const char *req;		/* points into the prebuilt request table */
	size_t req_len, req_off;
	int64_t t_start;
	uint64_t remain;		/* body or chunk bytes still to skip */
	size_t hlen;			/* bytes in hdr / in the chunk-size line */
	char hdr[HDR_MAX];
};

static struct site sites[MAX_SITES];
static int nsites;
static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static int64_t t_measure, t_end;
static volatile sig_atomic_t interrupted;

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t
rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

static void
hist_add(struct hist *h, int64_t ns)
{
	int64_t us = ns / 1000;
	size_t i;

	if (us < FINE_US * FINE_N)
		i = (size_t)(us / FINE_US);
	else if (us < FINE_US * FINE_N + (int64_t)COARSE_US * COARSE_N)
		i = FINE_N + (size_t)((us - FINE_US * FINE_N) / COARSE_US);
	else
		i = HIST_N - 1;
	h->b[i]++;
	h->n++;
}

/* The q-quantile in ms (upper edge of its bucket); -1 when empty. */
static double
hist_quantile(const struct hist *h, double q)
{
	uint64_t want, seen = 0;

	if (h->n == 0)
		return -1;
	want = (uint64_t)(q * (double)h->n);
	if (want >= h->n)
		want = h->n - 1;
	for (size_t i = 0; i < HIST_N; i++) {
		seen += h->b[i];
		if (seen > want) {
			if (i < FINE_N)
				return (double)((i + 1) * FINE_US) / 1000.0;
			return (double)(FINE_US * FINE_N + (i - FINE_N + 1) * COARSE_US) / 1000.0;
		}
	}
	return -1;
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: loadgen --site NAME=HOST:PORT:CONNS [--site ...] [options]\n"
	    "  --duration S       measured seconds (default 10)\n"
	    "  --warmup S         seconds before measuring (default 2)\n"
	    "  --ad-pct P         percent of requests to the ad path (default 30)\n"
	    "  --site-ad-pct SITE=P  site SITE's own percent of ad requests\n"
	    "  --ad-path PATH     the ad request's path (default /ad)\n"
	    "  --paths FILE       static paths, one a line (default: /index.html)\n"
	    "  --host NAME        Host header (default localhost)\n"
	    "  --site-host SITE=NAME  site SITE's own Host header (name-based\n"
	    "                     virtual hosts on one address and port)\n"
	    "  --json             one JSON object instead of CSV lines\n"
	    "  --header           print the CSV header line first\n");
}

static int
parse_site(const char *arg)
{
	char buf[128], *eq, *c1, *c2;
	struct site *s;
	uint64_t port, conns;
	const char *why;

	if (nsites == MAX_SITES) {
		fprintf(stderr, "loadgen: --site %s: at most %d sites\n", arg, MAX_SITES);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", arg);
	if ((eq = strchr(buf, '=')) == NULL || (c2 = strrchr(eq, ':')) == NULL ||
	    (*c2 = '\0', c1 = strrchr(eq, ':')) == NULL) {
		fprintf(stderr, "loadgen: --site %s: want NAME=HOST:PORT:CONNS\n", arg);
		return -EINVAL;
	}
	*eq = *c1 = '\0';
	s = &sites[nsites];
	if (buf[0] == '\0' || strlen(buf) >= sizeof(s->name)) {
		fprintf(stderr, "loadgen: --site %s: the name must be 1..%zu characters\n",
		    arg, sizeof(s->name) - 1);
		return -EINVAL;
	}
	snprintf(s->name, sizeof(s->name), "%s", buf);
	s->addr.sin_family = AF_INET;
	if (inet_pton(AF_INET, eq + 1, &s->addr.sin_addr) != 1) {
		fprintf(stderr, "loadgen: --site %s: %s is not an IPv4 address\n", arg, eq + 1);
		return -EINVAL;
	}
	if (parse_u64(c1 + 1, 1, 65535, &port, &why)) {
		fprintf(stderr, "loadgen: --site %s: port %s: %s\n", arg, c1 + 1, why);
		return -EINVAL;
	}
	if (parse_u64(c2 + 1, 1, 10000, &conns, &why)) {
		fprintf(stderr, "loadgen: --site %s: connections %s: %s (want 1..10000)\n",
		    arg, c2 + 1, why);
		return -EINVAL;
	}
	s->addr.sin_port = htons((uint16_t)port);
	s->conns = (int)conns;
	s->ad_pct = -1;
	nsites++;
	return 0;
}

/* The site named by SITE=VALUE (given with --site before it), and VALUE;
 * NULL if there is none or VALUE is empty. */
static struct site *
site_of(const char *arg, const char **val)
{
	const char *eq = strchr(arg, '=');

	for (int i = 0; eq != NULL && i < nsites; i++)
		if (strlen(sites[i].name) == (size_t)(eq - arg) &&
		    !strncmp(sites[i].name, arg, (size_t)(eq - arg)) && eq[1] != '\0') {
			*val = eq + 1;
			return &sites[i];
		}
	return NULL;
}

/* --site-host SITE=NAME, after SITE's --site. */
static int
parse_site_host(const char *arg)
{
	const char *val;
	struct site *s = site_of(arg, &val);

	if (s == NULL) {
		fprintf(stderr, "loadgen: --site-host %s: want SITE=NAME for a SITE given with --site before it\n", arg);
		return -EINVAL;
	}
	s->host = val;
	return 0;
}

/* --site-ad-pct SITE=P, after SITE's --site: SITE's own share of ad
 * requests (one site's pages can differ from another's). */
static int
parse_site_ad_pct(const char *arg)
{
	const char *val, *why = "no such site";
	struct site *s = site_of(arg, &val);
	uint64_t v;

	if (s == NULL || parse_u64(val, 0, 100, &v, &why)) {
		fprintf(stderr, "loadgen: --site-ad-pct %s: %s (want SITE=0..100 for a SITE given with --site before it)\n",
		    arg, why);
		return -EINVAL;
	}
	s->ad_pct = (int)v;
	return 0;
}

static int
add_request(struct reqtab *rt, int slot, const char *path, const char *host)
{
	char *r;
	int n;

	n = asprintf(&r, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: vsd-loadgen\r\n\r\n",
	    path, host);
	if (n < 0)
		return -ENOMEM;
	rt->buf[slot] = r;
	rt->len[slot] = (size_t)n;
	return 0;
}

static int
load_paths(struct reqtab *rt, const char *file, const char *host)
{
	char line[1024];
	FILE *f;

	if (file == NULL)
		return add_request(rt, ++rt->nstatic, "/index.html", host);
	if ((f = fopen(file, "re")) == NULL) {
		fprintf(stderr, "loadgen: --paths %s: %s\n", file, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		if (line[0] != '/' || strpbrk(line, " \t") != NULL) {
			fprintf(stderr, "loadgen: --paths %s: \"%s\" is not an absolute path without spaces\n",
			    file, line);
			fclose(f);
			return -EINVAL;
		}
		if (rt->nstatic == MAX_PATHS) {
			fprintf(stderr, "loadgen: --paths %s: more than %d paths\n", file, MAX_PATHS);
			fclose(f);
			return -E2BIG;
		}
		if (add_request(rt, ++rt->nstatic, line, host) < 0) {
			fclose(f);
			return -ENOMEM;
		}
	}
	fclose(f);
	if (rt->nstatic == 0) {
		fprintf(stderr, "loadgen: --paths %s: no paths in it\n", file);
		return -EINVAL;
	}
	return 0;
}

static int epfd;
static unsigned ad_pct = 30;

static void
conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->mask = 0;
	c->st = C_IDLE;
}

/* Wait for events on c; a syscall only when the set changes. */
static void
conn_want(struct conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	if (c->mask == events)
		return;
	epoll_ctl(epfd, c->mask ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &ev);
	c->mask = events;
}

static void conn_error(struct conn *c, int64_t now);

/* Write what is left of the request; when it is all out, wait for the answer. */
static void
conn_write(struct conn *c, int64_t now)
{
	ssize_t w = write(c->fd, c->req + c->req_off, c->req_len - c->req_off);

	if (w < 0 && errno != EAGAIN) {
		conn_error(c, now);
		return;
	}
	if (w > 0)
		c->req_off += (size_t)w;
	if (c->req_off < c->req_len) {
		conn_want(c, EPOLLOUT);
		return;
	}
	c->st = C_HEADERS;
	conn_want(c, EPOLLIN);
}

/* Start the next request on c, reconnecting first if needed. */
static void
conn_next(struct conn *c, int64_t now)
{
	const struct reqtab *rt = &c->site->rt;
	int slot;

	c->is_ad = rt->nstatic == 0 ||
	    rnd() % 100 < (c->site->ad_pct >= 0 ? (unsigned)c->site->ad_pct : ad_pct);
	slot = c->is_ad ? 0 : 1 + (int)(rnd() % (uint64_t)rt->nstatic);
	c->req = rt->buf[slot];
	c->req_len = rt->len[slot];
	c->req_off = 0;
	c->hlen = 0;
	c->close_after = 0;
	c->t_start = now;
	if (c->fd >= 0) {
		/* Keep-alive: write at once; the fd is already polled for input. */
		c->st = C_WRITING;
		conn_write(c, now);
		return;
	}
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		fprintf(stderr, "loadgen: socket: %s\n", strerror(errno));
		exit(1);
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	if (connect(c->fd, (struct sockaddr *)&c->site->addr, sizeof(c->site->addr)) < 0 &&
	    errno != EINPROGRESS) {
		c->site->errors++;
		close(c->fd);
		c->fd = -1;
		c->st = C_IDLE;		/* retried by the timer scan */
		return;
	}
	c->st = C_CONNECTING;
	conn_want(c, EPOLLOUT);
}

static void
conn_error(struct conn *c, int64_t now)
{
	if (c->t_start >= t_measure && now <= t_end)
		c->site->errors++;
	conn_close(c);
	conn_next(c, now);
}

static void
conn_done(struct conn *c, int64_t now)
{
	struct site *s = c->site;

	if (c->status < 200 || c->status > 399) {
		conn_error(c, now);
		return;
	}
	if (c->t_start >= t_measure && now <= t_end) {
		s->requests++;
		hist_add(&s->all, now - c->t_start);
		if (c->is_ad) {
			s->ad_requests++;
			hist_add(&s->ad, now - c->t_start);
		}
	}
	if (c->close_after)
		conn_close(c);
	conn_next(c, now);
}

/* Parse the status line and the headers we care about; 0 or -EPROTO. */
static int
parse_headers(struct conn *c)
{
	char *p = c->hdr, *eol;
	int chunked = 0, have_len = 0;

	c->hdr[c->hlen] = '\0';
	if (strncmp(p, "HTTP/1.", 7) != 0 || strlen(p) < 12)
		return -EPROTO;
	c->status = atoi(p + 9);
	c->close_after = p[7] == '0';
	while ((eol = strstr(p, "\r\n")) != NULL && eol != p) {
		p = eol + 2;
		if (strncasecmp(p, "Content-Length:", 15) == 0) {
			c->remain = strtoull(p + 15, NULL, 10);
			have_len = 1;
		} else if (strncasecmp(p, "Transfer-Encoding:", 18) == 0) {
			chunked = strstr(p, "chunked") != NULL &&
			    strstr(p, "chunked") < strstr(p, "\r\n");
		} else if (strncasecmp(p, "Connection:", 11) == 0) {
			char *v = p + 11;

			while (*v == ' ')
				v++;
			if (strncasecmp(v, "close", 5) == 0)
				c->close_after = 1;
		}
	}
	if (chunked) {
		c->st = C_CHUNK_SIZE;
		c->hlen = 0;
	} else if (have_len) {
		c->st = C_BODY_LEN;
	} else if (c->status == 204 || c->status == 304) {
		c->remain = 0;
		c->st = C_BODY_LEN;
	} else {
		c->st = C_BODY_EOF;
		c->close_after = 1;
	}
	return 0;
}

/*
 * Feed n bytes of the response to c's parser.  Returns 1 when the response
 * is complete (extra bytes would be a protocol error: we never pipeline),
 * 0 when it needs more, -EPROTO on garbage.
 */
static int
conn_feed(struct conn *c, const char *d, size_t n)
{
	while (n > 0 || c->st == C_BODY_LEN) {
		switch (c->st) {
		case C_HEADERS: {
			size_t take = n < HDR_MAX - 1 - c->hlen ? n : HDR_MAX - 1 - c->hlen;
			char *end;

			if (take == 0)
				return -EPROTO;
			memcpy(c->hdr + c->hlen, d, take);
			c->hlen += take;
			c->hdr[c->hlen] = '\0';
			if ((end = strstr(c->hdr, "\r\n\r\n")) == NULL) {
				d += take;
				n -= take;
				break;
			}
			/* Give back the body bytes we copied past the headers. */
			{
				size_t used = (size_t)(end + 4 - c->hdr) - (c->hlen - take);

				c->hlen = (size_t)(end + 4 - c->hdr);
				d += used;
				n -= used;
			}
			if (parse_headers(c) < 0)
				return -EPROTO;
			break;
		}
		case C_BODY_LEN:
			if (c->remain == 0)
				return n == 0 ? 1 : -EPROTO;
			{
				size_t take = n < c->remain ? n : (size_t)c->remain;

				if (take == 0)
					return 0;
				c->remain -= take;
				d += take;
				n -= take;
			}
			break;
		case C_CHUNK_SIZE:
			if (*d == '\n') {
				c->hdr[c->hlen] = '\0';
				c->remain = strtoull(c->hdr, NULL, 16);
				c->hlen = 0;
				c->st = c->remain ? C_CHUNK_DATA : C_TRAILER;
			} else if (c->hlen < 64) {
				c->hdr[c->hlen++] = *d;
			} else {
				return -EPROTO;
			}
			d++;
			n--;
			break;
		case C_CHUNK_DATA: {
			size_t take = n < c->remain ? n : (size_t)c->remain;

			c->remain -= take;
			d += take;
			n -= take;
			if (c->remain == 0) {
				c->st = C_CHUNK_CRLF;
				c->remain = 2;
			}
			break;
		}
		case C_CHUNK_CRLF:
			d++;
			n--;
			if (--c->remain == 0)
				c->st = C_CHUNK_SIZE;
			break;
		case C_TRAILER:
			/* Lines until an empty one; hlen counts the current line. */
			if (*d == '\n') {
				int empty = c->hlen == 0;

				c->hlen = 0;
				d++;
				n--;
				if (empty)
					return n == 0 ? 1 : -EPROTO;
			} else {
				if (*d != '\r')
					c->hlen++;
				d++;
				n--;
			}
			break;
		case C_BODY_EOF:
			return 0;	/* done at EOF */
		default:
			return -EPROTO;
		}
	}
	return 0;
}

static void
on_event(struct conn *c, uint32_t events, int64_t now)
{
	static char rbuf[65536];

	if (c->st == C_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err != 0) {
			conn_error(c, now);
			return;
		}
		c->st = C_WRITING;
	}
	if (c->st == C_WRITING) {
		conn_write(c, now);
		return;
	}
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	for (;;) {
		ssize_t r = read(c->fd, rbuf, sizeof(rbuf));
		int done;

		if (r < 0) {
			if (errno == EAGAIN)
				return;
			conn_error(c, now);
			return;
		}
		if (r == 0) {
			if (c->st == C_BODY_EOF) {
				conn_done(c, now);
			} else if (c->st == C_HEADERS && c->hlen == 0) {
				/* Keep-alive closed by the server between requests:
				 * not an error, just reconnect and resend. */
				int64_t t = c->t_start;

				conn_close(c);
				conn_next(c, now);
				c->t_start = t;
			} else {
				conn_error(c, now);
			}
			return;
		}
		done = conn_feed(c, rbuf, (size_t)r);
		if (done < 0) {
			conn_error(c, now);
			return;
		}
		if (done) {
			conn_done(c, now);
			return;
		}
	}
}

static void
on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void
print_results(int json, int header, double duration)
{
	if (json)
		printf("{\"duration_s\": %.3f, \"sites\": [", duration);
	else if (header)
		printf("site,conns,duration_s,requests,errors,rps,p50_ms,p99_ms,"
		       "ad_requests,ad_p50_ms,ad_p99_ms\n");
	for (int i = 0; i < nsites; i++) {
		struct site *s = &sites[i];
		double rps = (double)s->requests / duration;

		if (json)
			printf("%s{\"site\": \"%s\", \"conns\": %d, \"requests\": %llu, "
			    "\"errors\": %llu, \"rps\": %.1f, \"p50_ms\": %.2f, "
			    "\"p99_ms\": %.2f, \"ad_requests\": %llu, "
			    "\"ad_p50_ms\": %.2f, \"ad_p99_ms\": %.2f}",
			    i ? ", " : "", s->name, s->conns,
			    (unsigned long long)s->requests, (unsigned long long)s->errors,
			    rps, hist_quantile(&s->all, 0.5), hist_quantile(&s->all, 0.99),
			    (unsigned long long)s->ad_requests,
			    hist_quantile(&s->ad, 0.5), hist_quantile(&s->ad, 0.99));
		else
			printf("%s,%d,%.3f,%llu,%llu,%.1f,%.2f,%.2f,%llu,%.2f,%.2f\n",
			    s->name, s->conns, duration,
			    (unsigned long long)s->requests, (unsigned long long)s->errors,
			    rps, hist_quantile(&s->all, 0.5), hist_quantile(&s->all, 0.99),
			    (unsigned long long)s->ad_requests,
			    hist_quantile(&s->ad, 0.5), hist_quantile(&s->ad, 0.99));
	}
	if (json)
		printf("]}\n");
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	const char *paths = NULL, *host = "localhost", *ad_path = "/ad", *why;
	uint64_t duration = 10, warmup = 2, v;
	int json = 0, header = 0, nconns = 0;
	struct epoll_event evs[256];
	struct conn *conns;
	int64_t t0, last_scan;

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(o, "--json")) {
			json = 1;
			continue;
		}
		if (!strcmp(o, "--header")) {
			header = 1;
			continue;
		}
		if (val == NULL || (strcmp(o, "--site") && strcmp(o, "--duration") &&
		    strcmp(o, "--warmup") && strcmp(o, "--ad-pct") && strcmp(o, "--paths") &&
		    strcmp(o, "--ad-path") && strcmp(o, "--host") && strcmp(o, "--site-host") &&
		    strcmp(o, "--site-ad-pct"))) {
			fprintf(stderr, val ? "loadgen: unknown option %s\n" :
			    "loadgen: %s needs a value (or is unknown)\n", o);
			usage(stderr);
			return 2;
		}
		i++;
		if (!strcmp(o, "--site")) {
			if (parse_site(val) < 0)
				return 2;
		} else if (!strcmp(o, "--paths")) {
			paths = val;
		} else if (!strcmp(o, "--ad-path")) {
			ad_path = val;
		} else if (!strcmp(o, "--host")) {
			host = val;
		} else if (!strcmp(o, "--site-host")) {
			if (parse_site_host(val) < 0)
				return 2;
		} else if (!strcmp(o, "--site-ad-pct")) {
			if (parse_site_ad_pct(val) < 0)
				return 2;
		} else {
			uint64_t max = !strcmp(o, "--ad-pct") ? 100 : 86400;

			if (parse_u64(val, strcmp(o, "--duration") ? 0 : 1, max, &v, &why)) {
				fprintf(stderr, "loadgen: %s %s: %s (want %s..%llu)\n", o, val, why,
				    strcmp(o, "--duration") ? "0" : "1", (unsigned long long)max);
				return 2;
			}
			if (!strcmp(o, "--duration"))
				duration = v;
			else if (!strcmp(o, "--warmup"))
				warmup = v;
			else
				ad_pct = (unsigned)v;
		}
	}
	if (nsites == 0) {
		fprintf(stderr, "loadgen: no --site given\n");
		usage(stderr);
		return 2;
	}
	if (ad_path[0] != '/' || strpbrk(ad_path, " \t\r\n")) {
		fprintf(stderr, "loadgen: --ad-path %s: want an absolute path without spaces\n", ad_path);
		return 2;
	}
	for (int i = 0; i < nsites; i++) {
		struct site *s = &sites[i];
		const char *h = s->host ? s->host : host;

		if (strpbrk(h, " \t\r\n") != NULL) {
			fprintf(stderr, "loadgen: Host \"%s\": want a name without spaces\n", h);
			return 2;
		}
		if (add_request(&s->rt, 0, ad_path, h) < 0 || load_paths(&s->rt, paths, h) < 0)
			return 2;
		if (ad_pct == 0 && s->rt.nstatic == 0)
			return 2;
	}

	for (int i = 0; i < nsites; i++)
		nconns += sites[i].conns;
	if ((conns = calloc((size_t)nconns, sizeof(*conns))) == NULL ||
	    (epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		fprintf(stderr, "loadgen: setup: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_sigint);
	signal(SIGTERM, on_sigint);
	rng ^= (uint64_t)getpid() << 17;

	t0 = last_scan = now_ns();
	t_measure = t0 + (int64_t)warmup * 1000000000;
	t_end = t_measure + (int64_t)duration * 1000000000;
	for (int i = 0, k = 0; i < nsites; i++)
		for (int j = 0; j < sites[i].conns; j++, k++) {
			conns[k].site = &sites[i];
			conns[k].fd = -1;
			conn_next(&conns[k], t0);
		}

	for (;;) {
		int64_t now = now_ns();
		int n;

		if (now >= t_end || interrupted)
			break;
		n = epoll_wait(epfd, evs, (int)ARRAY_SIZE(evs), 100);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "loadgen: epoll_wait: %s\n", strerror(errno));
			return 1;
		}
		now = now_ns();
		for (int i = 0; i < n; i++)
			on_event(evs[i].data.ptr, evs[i].events, now);
		/* Every 100 ms: retry failed connects, time out stuck requests. */
		if (now - last_scan > 100000000) {
			last_scan = now;
			for (int i = 0; i < nconns; i++) {
				struct conn *c = &conns[i];

				if (c->st == C_IDLE)
					conn_next(c, now);
				else if (now - c->t_start > REQ_TIMEOUT_NS)
					conn_error(c, now);
			}
		}
	}
	if (interrupted)
		t_end = now_ns();
	print_results(json, header,
	    (double)(t_end - t_measure) / 1e9 > 0 ? (double)(t_end - t_measure) / 1e9 : 1);
	for (int i = 0; i < nconns; i++)
		if (conns[i].fd >= 0)
			close(conns[i].fd);
	free(conns);
	for (int i = 0; i < nsites; i++)
		for (int j = 0; j <= sites[i].rt.nstatic; j++)
			free(sites[i].rt.buf[j]);
	return 0;
}
