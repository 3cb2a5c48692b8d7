// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Test helper for the socket gate: makes real TCP/UDP traffic on loopback
 * and watches it on the wire with an AF_PACKET socket on lo.
 *
 *   net-probe serve ADDR PORT            accept, echo until EOF, close; forever
 *                                        (PORT 0: prints the port chosen)
 *   net-probe tcp ADDR PORT [HOLDFILE]   connect, send, read the echo; before
 *                                        closing wait until HOLDFILE exists;
 *                                        then report what the wire showed
 *   net-probe udp ADDR PORT connect|sendto
 *   net-probe hold ADDR PORT N FILE      N connections open at once until
 *                                        FILE exists
 *   net-probe flood ADDR N FILE [PORT]   listen on ADDR (PORT), open up to N
 *                                        connections to it and keep them
 *                                        (and every refused one tried)
 *                                        until FILE exists; prints
 *                                        "connected=C eperm=E other=O"
 *   net-probe ports ADDR PORT FILE SPORT...
 *                                        one connection from each source
 *                                        port SPORT; the i-th (from 1)
 *                                        closes when FILE.i exists
 *   net-probe many ADDR PORT N           N connect/close cycles (server
 *                                        closes first, so no TIME_WAIT here)
 *   net-probe peerclosed ADDR PORT FILE  connect, let the server close first,
 *                                        keep the socket (CLOSE_WAIT) until
 *                                        FILE exists
 *
 * With NET_PROBE_TOS=N in the environment, "tcp" sets IP_TOS (an IPv6
 * socket: IPV6_TCLASS) to N itself, as a tenant would, before connect() and
 * again before sending, and reports what getsockopt() then says (tos_get=).
 * NET_PROBE_TOS=empty sets IP_TOS with an empty value (optlen 0), which the
 * kernel takes as 0.
 *
 * Reports are "key=value" lines: local=, mark=, priority=, syn_tos=,
 * data_tos=, synack_tos=, reply_tos= (the server's), udp_tos=,
 * udp_tos_last= (the TOS byte, or the IPv6 traffic class; -1 when no
 * such packet was seen).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

struct tuple {
	int family;
	unsigned char src[16], dst[16];
	unsigned sport, dport;
};

static void
die(const char *what)
{
	fprintf(stderr, "net-probe: %s: %s\n", what, strerror(errno));
	exit(1);
}

static socklen_t
mkaddr(const char *addr, unsigned port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		return sizeof(*in);
	}
	if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		return sizeof(*in6);
	}
	fprintf(stderr, "net-probe: bad address %s\n", addr);
	exit(2);
}

static int
capture_open(void)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int fd, sz = 8 << 20;

	if ((fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL))) < 0)
		die("AF_PACKET socket");
	ll.sll_ifindex = if_nametoindex("lo");
	if (bind(fd, (struct sockaddr *)&ll, sizeof(ll)) < 0)
		die("bind lo");
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	return fd;
}

/* The tuple of our socket, as the packets we send carry it. */
static void
tuple_of(int s, struct tuple *t)
{
	struct sockaddr_storage l, r;
	socklen_t ll = sizeof(l), rl = sizeof(r);

	if (getsockname(s, (struct sockaddr *)&l, &ll) < 0 ||
	    getpeername(s, (struct sockaddr *)&r, &rl) < 0)
		die("getsockname/getpeername");
	t->family = l.ss_family;
	if (t->family == AF_INET) {
		memcpy(t->src, &((struct sockaddr_in *)&l)->sin_addr, 4);
		memcpy(t->dst, &((struct sockaddr_in *)&r)->sin_addr, 4);
		t->sport = ntohs(((struct sockaddr_in *)&l)->sin_port);
		t->dport = ntohs(((struct sockaddr_in *)&r)->sin_port);
	} else {
		memcpy(t->src, &((struct sockaddr_in6 *)&l)->sin6_addr, 16);
		memcpy(t->dst, &((struct sockaddr_in6 *)&r)->sin6_addr, 16);
		t->sport = ntohs(((struct sockaddr_in6 *)&l)->sin6_port);
		t->dport = ntohs(((struct sockaddr_in6 *)&r)->sin6_port);
		/* IPv4-mapped: the wire carries IPv4. */
		if (IN6_IS_ADDR_V4MAPPED((struct in6_addr *)t->src)) {
			t->family = AF_INET;
			memmove(t->src, t->src + 12, 4);
			memmove(t->dst, t->dst + 12, 4);
		}
	}
}

/*
 * Reads everything captured so far; for each packet we sent (matching t)
 * records the TOS of the first SYN, the first TCP segment with data and the
 * first UDP datagram.  Loopback delivers synchronously, so after our own
 * send returned, its packet is already queued here.
 */
static int udp_last = -1;	/* TOS of the last UDP datagram seen */
static int synack_tos = -1, rdata_tos = -1;	/* the peer's SYN-ACK and data */

static void
capture_scan(int fd, const struct tuple *t, int *syn, int *data, int *udp)
{
	unsigned char p[2048];
	ssize_t n;

	*syn = *data = *udp = -1;
	while ((n = recv(fd, p, sizeof(p), MSG_DONTWAIT)) > 0) {
		unsigned proto, tos, sport, dport, hl;
		int fwd, rev;
		const unsigned char *ip = p + 14, *l4;
		unsigned etype = p[12] << 8 | p[13];

		if (etype == ETH_P_IP && t->family == AF_INET && n >= 14 + 20 + 8) {
			tos = ip[1];
			proto = ip[9];
			hl = (ip[0] & 0x0f) * 4;
			fwd = !memcmp(ip + 12, t->src, 4) && !memcmp(ip + 16, t->dst, 4);
			rev = !memcmp(ip + 12, t->dst, 4) && !memcmp(ip + 16, t->src, 4);
			l4 = ip + hl;
		} else if (etype == ETH_P_IPV6 && t->family == AF_INET6 && n >= 14 + 40 + 8) {
			tos = (ip[0] & 0x0f) << 4 | ip[1] >> 4;
			proto = ip[6];
			fwd = !memcmp(ip + 8, t->src, 16) && !memcmp(ip + 24, t->dst, 16);
			rev = !memcmp(ip + 8, t->dst, 16) && !memcmp(ip + 24, t->src, 16);
			l4 = ip + 40;
		} else {
			continue;
		}
		if (!fwd && !rev)
			continue;
		if (l4 + (proto == IPPROTO_TCP ? 20 : 8) > p + n)
			continue;
		sport = l4[0] << 8 | l4[1];
		dport = l4[2] << 8 | l4[3];
		/* On loopback both addresses may be equal: the ports decide. */
		fwd = fwd && sport == t->sport && dport == t->dport;
		rev = rev && sport == t->dport && dport == t->sport;
		if (!fwd && !rev)
			continue;
		if (rev && proto == IPPROTO_TCP) {
			unsigned doff = (l4[12] >> 4) * 4, flags = l4[13];
			unsigned iplen = t->family == AF_INET ? (unsigned)(ip[2] << 8 | ip[3])
				: (unsigned)(ip[4] << 8 | ip[5]) + 40;
			unsigned ihl = t->family == AF_INET ? (ip[0] & 0x0f) * 4 : 40;

			if ((flags & 0x12) == 0x12 && synack_tos < 0)
				synack_tos = tos;
			if (iplen > ihl + doff && rdata_tos < 0)
				rdata_tos = tos;
			continue;
		}
		if (rev)
			continue;
		if (proto == IPPROTO_TCP) {
			unsigned doff = (l4[12] >> 4) * 4, flags = l4[13];
			unsigned iplen = t->family == AF_INET ? (unsigned)(ip[2] << 8 | ip[3])
				: (unsigned)(ip[4] << 8 | ip[5]) + 40;
			unsigned ihl = t->family == AF_INET ? (ip[0] & 0x0f) * 4 : 40;

			if ((flags & 0x12) == 0x02 && *syn < 0)
				*syn = tos;
			if (iplen > ihl + doff && *data < 0)
				*data = tos;
		} else if (proto == IPPROTO_UDP) {
			if (*udp < 0)
				*udp = tos;
			udp_last = tos;
		}
	}
}

static void
report_sockopts(int s)
{
	int mark = -1, prio = -1;
	socklen_t len = sizeof(int);

	getsockopt(s, SOL_SOCKET, SO_MARK, &mark, &len);
	len = sizeof(int);
	getsockopt(s, SOL_SOCKET, SO_PRIORITY, &prio, &len);
	printf("mark=%d\npriority=%d\n", mark, prio);
}

static int __attribute__((noreturn))
do_serve(const char *addr, unsigned port)
{
	struct sockaddr_storage ss;
	socklen_t len = mkaddr(addr, port, &ss);
	int l, c, one = 1;
	char buf[256];

	signal(SIGPIPE, SIG_IGN);
	if ((l = socket(ss.ss_family, SOCK_STREAM, 0)) < 0)
		die("socket");
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&ss, len) < 0 || listen(l, 1024) < 0)
		die("bind/listen");
	/* Port 0: the kernel picks one; the caller reads it from "ready". */
	if (getsockname(l, (struct sockaddr *)&ss, &len) < 0)
		die("getsockname");
	printf("ready %u\n", ntohs(ss.ss_family == AF_INET6 ?
				     ((struct sockaddr_in6 *)&ss)->sin6_port :
				     ((struct sockaddr_in *)&ss)->sin_port));
	fflush(stdout);
	for (;;) {
		ssize_t n;

		if ((c = accept(l, NULL, NULL)) < 0)
			continue;
		/*
		 * Echo until the client closes, so a held connection stays
		 * open on both sides; "q" (the "many" client) closes at once,
		 * before the client does.  One connection at a time.
		 */
		while ((n = read(c, buf, sizeof(buf))) > 0 && buf[0] != 'q')
			if (write(c, buf, n) != n)
				break;
		close(c);
	}
}

/* NET_PROBE_TOS: set the socket's own TOS, as an application may. */
static void
own_tos(int s, int family)
{
	const char *v = getenv("NET_PROBE_TOS");
	int tos;

	if (!v)
		return;
	if (!strcmp(v, "empty")) {
		if (setsockopt(s, IPPROTO_IP, IP_TOS, &tos, 0))
			die("setsockopt(IP_TOS, optlen 0)");
		return;
	}
	tos = (int)strtol(v, NULL, 0);
	if (family == AF_INET6 ? setsockopt(s, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos))
	    : setsockopt(s, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)))
		die("setsockopt(TOS)");
}

static void
report_tos(int s, int family)
{
	socklen_t len = sizeof(int);
	int tos = -1;

	if (!getenv("NET_PROBE_TOS"))
		return;
	if (family == AF_INET6)
		getsockopt(s, IPPROTO_IPV6, IPV6_TCLASS, &tos, &len);
	else
		getsockopt(s, IPPROTO_IP, IP_TOS, &tos, &len);
	printf("tos_get=%d\n", tos);
}

/* A TCP connection to ADDR PORT; prints its local address ("local="). */
static int
tcp_connect(const char *addr, unsigned port, struct tuple *t)
{
	struct sockaddr_storage ss;
	socklen_t len = mkaddr(addr, port, &ss);
	char la[INET6_ADDRSTRLEN];
	int s;

	if ((s = socket(ss.ss_family, SOCK_STREAM, 0)) < 0)
		die("socket");
	own_tos(s, ss.ss_family);
	if (connect(s, (struct sockaddr *)&ss, len) < 0)
		die("connect");
	own_tos(s, ss.ss_family);
	tuple_of(s, t);
	inet_ntop(t->family, t->src, la, sizeof(la));
	printf(t->family == AF_INET6 ? "local=[%s]:%u\n" : "local=%s:%u\n", la, t->sport);
	return s;
}

static int
do_tcp(const char *addr, unsigned port, const char *hold)
{
	int cap = capture_open(), s, syn, data, udp;
	char buf[64];
	struct tuple t;

	s = tcp_connect(addr, port, &t);
	report_sockopts(s);
	report_tos(s, t.family);
	fflush(stdout);
	if (write(s, "hello", 5) != 5 || read(s, buf, sizeof(buf)) <= 0)
		die("echo");
	if (hold) {
		printf("connected\n");
		fflush(stdout);
		while (access(hold, F_OK) < 0)
			usleep(10000);
	}
	capture_scan(cap, &t, &syn, &data, &udp);
	close(s);
	printf("syn_tos=%d\ndata_tos=%d\nsynack_tos=%d\nreply_tos=%d\n", syn, data,
	       synack_tos, rdata_tos);
	return 0;
}

static int
do_udp(const char *addr, unsigned port, const char *mode)
{
	struct sockaddr_storage ss, bs;
	socklen_t len = mkaddr(addr, port, &ss);
	int cap = capture_open(), s, r, syn, data, udp;
	struct tuple t;

	/* A receiver, so there is no ICMP error; PORT 0 picks a free one. */
	mkaddr(addr, port, &bs);
	if ((r = socket(ss.ss_family, SOCK_DGRAM, 0)) < 0 ||
	    bind(r, (struct sockaddr *)&bs, len) < 0 ||
	    getsockname(r, (struct sockaddr *)&ss, &len) < 0)
		die("udp receiver");
	if ((s = socket(ss.ss_family, SOCK_DGRAM, 0)) < 0)
		die("socket");
	if (!strcmp(mode, "connect")) {
		if (connect(s, (struct sockaddr *)&ss, len) < 0 || send(s, "x", 1, 0) != 1)
			die("connect/send");
	} else {
		/* Two: the first one may leave before the hook ran (vsd.8). */
		if (sendto(s, "x", 1, 0, (struct sockaddr *)&ss, len) != 1 ||
		    sendto(s, "y", 1, 0, (struct sockaddr *)&ss, len) != 1)
			die("sendto");
		/* Now bound: connect only to learn the tuple for the scan. */
		if (connect(s, (struct sockaddr *)&ss, len) < 0)
			die("connect");
	}
	tuple_of(s, &t);
	report_sockopts(s);
	capture_scan(cap, &t, &syn, &data, &udp);
	printf("udp_tos=%d\nudp_tos_last=%d\n", udp, udp_last);
	return 0;
}

static int
do_many(const char *addr, unsigned port, long n)
{
	struct sockaddr_storage ss;
	socklen_t len = mkaddr(addr, port, &ss);
	char c;
	long i;

	for (i = 0; i < n; i++) {
		int s = socket(ss.ss_family, SOCK_STREAM, 0);

		if (s < 0 || connect(s, (struct sockaddr *)&ss, len) < 0)
			die("connect");
		if (write(s, "q", 1) != 1)
			die("write");
		/* Wait for the server's FIN: it closes first. */
		while (read(s, &c, 1) > 0)
			;
		close(s);
	}
	printf("done=%ld\n", n);
	return 0;
}

static int
do_peerclosed(const char *addr, unsigned port, const char *hold)
{
	struct tuple t;
	int s = tcp_connect(addr, port, &t);
	char c;

	if (write(s, "q", 1) != 1)
		die("write");
	while (read(s, &c, 1) > 0)
		;
	/* The server's FIN is in: this socket is in CLOSE_WAIT. */
	printf("connected\n");
	fflush(stdout);
	while (access(hold, F_OK) < 0)
		usleep(10000);
	close(s);
	return 0;
}

/*
 * A VS that fills the connection table: connect() failing with EPERM (the
 * socket gate refusing a VS with no room left) is counted, not fatal.
 */
static int
do_flood(const char *addr, long n, const char *file, unsigned port)
{
	struct sockaddr_storage ss;
	socklen_t len = mkaddr(addr, port, &ss);
	long i, conn = 0, eperm = 0, other = 0;
	int l, *s = calloc(n, sizeof(int));

	if (!s)
		die("calloc");
	if ((l = socket(ss.ss_family, SOCK_STREAM, 0)) < 0 ||
	    bind(l, (struct sockaddr *)&ss, len) < 0 || listen(l, (int)n) < 0 ||
	    getsockname(l, (struct sockaddr *)&ss, &len) < 0)
		die("listen");
	for (i = 0; i < n; i++) {
		if ((s[i] = socket(ss.ss_family, SOCK_STREAM, 0)) < 0)
			die("socket");
		if (connect(s[i], (struct sockaddr *)&ss, len) == 0)
			conn++;
		else if (errno == EPERM)
			eperm++;
		else
			other++;
	}
	printf("connected=%ld eperm=%ld other=%ld\n", conn, eperm, other);
	fflush(stdout);
	while (access(file, F_OK) < 0)
		usleep(10000);
	for (i = 0; i < n; i++)
		close(s[i]);
	close(l);
	free(s);
	return 0;
}

static int
do_hold(const char *addr, unsigned port, long n, const char *file)
{
	struct sockaddr_storage ss;
	socklen_t len = mkaddr(addr, port, &ss);
	int *s = calloc(n, sizeof(int));
	long i;

	if (!s)
		die("calloc");
	for (i = 0; i < n; i++)
		if ((s[i] = socket(ss.ss_family, SOCK_STREAM, 0)) < 0 ||
		    connect(s[i], (struct sockaddr *)&ss, len) < 0)
			die("connect");
	printf("connected\n");
	while (access(file, F_OK) < 0)
		usleep(10000);
	for (i = 0; i < n; i++)
		close(s[i]);
	free(s);
	return 0;
}

static int
do_ports(const char *addr, unsigned port, const char *file, int n, char **sports)
{
	struct sockaddr_storage ss, from;
	socklen_t len = mkaddr(addr, port, &ss);
	int *s = calloc(n, sizeof(int)), i, left = n, one = 1;
	char path[4096];

	if (!s)
		die("calloc");
	for (i = 0; i < n; i++) {
		mkaddr(addr, atoi(sports[i]), &from);
		if ((s[i] = socket(ss.ss_family, SOCK_STREAM, 0)) < 0 ||
		    setsockopt(s[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		    bind(s[i], (struct sockaddr *)&from, len) < 0 ||
		    connect(s[i], (struct sockaddr *)&ss, len) < 0)
			die("connect from a given port");
	}
	printf("connected\n");
	while (left > 0) {
		for (i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s.%d", file, i + 1);
			if (s[i] >= 0 && access(path, F_OK) == 0) {
				close(s[i]);
				s[i] = -1;
				left--;
			}
		}
		usleep(10000);
	}
	free(s);
	return 0;
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 4 && !strcmp(argv[1], "serve"))
		return do_serve(argv[2], atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "tcp"))
		return do_tcp(argv[2], atoi(argv[3]), argc > 4 ? argv[4] : NULL);
	if (argc == 5 && !strcmp(argv[1], "udp"))
		return do_udp(argv[2], atoi(argv[3]), argv[4]);
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "flood"))
		return do_flood(argv[2], atol(argv[3]), argv[4], argc == 6 ? atoi(argv[5]) : 0);
	if (argc == 6 && !strcmp(argv[1], "hold"))
		return do_hold(argv[2], atoi(argv[3]), atol(argv[4]), argv[5]);
	if (argc >= 6 && !strcmp(argv[1], "ports"))
		return do_ports(argv[2], atoi(argv[3]), argv[4], argc - 5, argv + 5);
	if (argc == 5 && !strcmp(argv[1], "peerclosed"))
		return do_peerclosed(argv[2], atoi(argv[3]), argv[4]);
	if (argc == 5 && !strcmp(argv[1], "many"))
		return do_many(argv[2], atoi(argv[3]), atol(argv[4]));
	fprintf(stderr, "usage: net-probe serve|tcp|udp|hold|flood|ports|many|peerclosed ADDR PORT ...\n");
	return 2;
}
