// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's VS table (gates/accept/vs-table.c): parsing vsd's
 * "gatetable" answer, and merging a fresh table into the one in use without
 * losing the per-VS state (open descriptors, usage history) of the VSs that
 * stayed. Also the key of an accepted connection (gates/socket/conntab.c),
 * by which the gate finds its VS in the socket gate's table. And a table
 * pushed by vsd on the status socket (gate_push()): put in force with its
 * rules and acknowledged, or, cut short or malformed, refused with the
 * table in force unchanged.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cgh-peek.h"
#include "gates/accept/gate.h"
#include "gates/socket/conntab.h"
#include "rules/rules.h"
#include "tap.h"

static const char table1[] =
	"# conns-map /sys/fs/bpf/vsd/t/vsd_conns\n"
	"# next-id 12\n"
	"7 www2 2500 cpu=/c/www2 cpuacct=/a/www2 unified=/u/www2\n"
	"3 www1 5000 cpu=/c/www1 cpuacct=/a/www1 memory=/m/www1 unified=/u/www1 newkey=/x\n"
	"\n"
	"# a comment\n"
	"9 home 1000 unified=/u/home\n";

static void
sa4(struct sockaddr_storage *ss, const char *a, int port)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, a, &in->sin_addr);
}

static void
sa6(struct sockaddr_storage *ss, const char *a, int port)
{
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons((uint16_t)port);
	inet_pton(AF_INET6, a, &in6->sin6_addr);
}

static void
test_parse(void)
{
	struct vs_table t, bad;
	struct gate_vs *v;

	ok(vs_table_parse(&t, table1) == 0 && t.n == 3, "three VSs parsed");
	ok(t.v[0].id == 3 && t.v[1].id == 7 && t.v[2].id == 9, "sorted by id");
	is_str(t.conns_map, "/sys/fs/bpf/vsd/t/vsd_conns", "the connection table's pin");
	ok(t.next_id == 12, "vsd's next VS id (ids 10 and 11 are gone, 12 and up are new)");
	ok(vs_table_parse(&bad, "1 www1 100 unified=/u\n") == 0 && bad.next_id == 0,
	   "a table that does not say has next id 0 (unknown)");
	vs_table_free(&bad);
	v = vs_table_find(&t, 3);
	ok(v && v->share_bp == 5000, "www1's share");
	is_str(v ? v->name : NULL, "www1", "found by id");
	is_str(v ? cgh_dir(&v->cg, "cpu") : NULL, "/c/www1", "its v1 cpu directory");
	is_str(v ? cgh_dir(&v->cg, "memory") : NULL, "/m/www1", "its v1 memory directory");
	is_str(v ? cgh_dir(&v->cg, "unified") : NULL, "/u/www1", "its cgroup2 directory");
	ok(v && cgh_nfds(&v->cg) == 0, "no descriptor opened yet");
	v = vs_table_find_name(&t, "home");
	ok(v && v->id == 9 && !cgh_dir(&v->cg, "cpu") && cgh_dir(&v->cg, "unified"),
	   "home has only a cgroup2 directory");
	ok(vs_table_find(&t, 4) == NULL, "an unknown id is not found");

	ok(vs_table_parse(&bad, "x www1 5000 unified=/u\n") == -EINVAL, "a bad id is refused");
	ok(vs_table_parse(&bad, "1 ../etc 5000 unified=/u\n") == -EINVAL, "a bad name is refused");
	ok(vs_table_parse(&bad, "1 www1 10001 unified=/u\n") == -EINVAL, "a share over 100%% is refused");
	ok(vs_table_parse(&bad, "1 www1\n") == -EINVAL, "a line without a share is refused");
	ok(bad.n == 0 && bad.v == NULL, "and nothing of a refused table is kept");
	vs_table_free(&t);
}

static void
test_merge(void)
{
	struct vs_table t, fresh;
	struct gate_vs *v;
	uint32_t gone[4];
	size_t ngone = 4;
	int fd = open("/dev/null", O_RDONLY);

	vs_table_parse(&t, table1);
	v = vs_table_find(&t, 3);
	v->cg.rfd[CG_KIND_CPUACCT] = fd;	/* as a usage read leaves it */
	v->used_bp = 1234;
	v->served = 42;
	vs_table_find(&t, 7)->used_bp = 99;
	/* www2 (7) is gone, www3 (11) is new, home (9) moved to another directory */
	vs_table_parse(&fresh, "3 www1 6000 cpu=/c/www1 cpuacct=/a/www1 memory=/m/www1 unified=/u/www1\n"
			       "9 home 1000 unified=/u2/home\n"
			       "11 www3 500 unified=/u/www3\n");
	vs_table_merge(&t, &fresh, gone, &ngone);
	ok(t.n == 3 && fresh.n == 0 && fresh.v == NULL, "the fresh table replaces the old one");
	ok(ngone == 1 && gone[0] == 7, "www2 (id 7) is reported gone");
	v = vs_table_find(&t, 3);
	ok(v && v->share_bp == 6000, "www1 has its new share");
	ok(v && v->cg.rfd[CG_KIND_CPUACCT] == fd && v->used_bp == 1234,
	   "and keeps its descriptor and usage history");
	ok(v && v->served == 42, "and its count of connections served");
	v = vs_table_find(&t, 9);
	ok(v && cgh_nfds(&v->cg) == 0 && v->used_bp == 0, "home moved: its state starts again");
	ok(vs_table_find(&t, 11) != NULL && vs_table_find(&t, 7) == NULL, "www3 is in, www2 out");
	vs_table_free(&t);
	ok(fcntl(fd, F_GETFD) < 0, "freeing the table closes the descriptors it kept");
}

static void
test_key(void)
{
	struct sockaddr_storage peer, local;
	struct vsd_conn_key k;
	uint32_t a;

	sa4(&peer, "127.0.0.2", 40000);
	sa4(&local, "127.0.0.1", 9000);
	ok(conntab_accepted_key(&peer, &local, &k) == 0, "an IPv4 connection has a key");
	inet_pton(AF_INET, "127.0.0.2", &a);
	ok(k.family == AF_INET && k.dir == VSD_DIR_ACTIVE && k.sport == 40000 && k.dport == 9000 &&
	   k.saddr[0] == a && k.saddr[1] == 0,
	   "oriented initiator (the peer) -> acceptor, as the connecting side recorded it");
	sa6(&peer, "::ffff:127.0.0.2", 40000);
	sa6(&local, "::ffff:127.0.0.1", 9000);
	ok(conntab_accepted_key(&peer, &local, &k) == 0 && k.family == AF_INET && k.saddr[0] == a,
	   "IPv4-mapped addresses fold to the IPv4 key");
	sa6(&peer, "::1", 40001);
	sa6(&local, "::1", 9001);
	ok(conntab_accepted_key(&peer, &local, &k) == 0 && k.family == AF_INET6 &&
	   ((const uint8_t *)k.saddr)[15] == 1 && k.sport == 40001,
	   "an IPv6 connection keeps its 16-byte addresses");
	sa4(&local, "127.0.0.1", 9001);
	ok(conntab_accepted_key(&peer, &local, &k) == -EAFNOSUPPORT, "mixed families are refused");
	local.ss_family = AF_UNIX;
	ok(conntab_accepted_key(&peer, &local, &k) == -EAFNOSUPPORT, "so is a Unix socket");
}

/* What vsd sends after the request line (len of the table, of the rules);
 * cut: write only this many bytes, then end the stream. The gate's answer. */
static const char *
push(struct gate *g, const char *cmd, const char *payload, size_t cut)
{
	static char ack[128];
	ssize_t n;
	int sv[2];

	ack[0] = '\0';
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return ack;
	if (write(sv[1], payload, cut) != (ssize_t)cut)
		return ack;
	shutdown(sv[1], SHUT_WR);
	gate_push(g, sv[0], cmd);	/* closes sv[0] */
	if ((n = read(sv[1], ack, sizeof(ack) - 1)) > 0)
		ack[n] = '\0';
	close(sv[1]);
	return ack;
}

static void
test_push(void)
{
	static const char rules[] = "vs www1 cpu 30%\nvs www2 cpu 30%\n(accept, *, req = www1) => (www2)\n";
	struct gate g = { 0 };
	char cmd[64], payload[1024];
	size_t tl;

	snprintf(payload, sizeof(payload), "# rules 1234\n%s%s", table1, rules);
	tl = strlen(payload) - strlen(rules);
	snprintf(cmd, sizeof(cmd), "push %zu %zu", tl, strlen(rules));
	ok(strcmp(push(&g, cmd, payload, strlen(payload)), "ok\n") == 0, "a push is acknowledged");
	ok(g.tab.n == 3 && vs_table_find(&g.tab, 7) && g.vsd_pushes == 1, "its table is in force");
	ok(g.rules && g.rules_hash == 0x1234 && vs_table_find(&g.tab, 3)->ridx >= 0,
	   "with its rules, the table indexed by them");

	ok(strncmp(push(&g, "push 100 0", "2 www9 100\n", 11), "error ", 6) == 0,
	   "a push cut short is refused");
	ok(g.tab.n == 3 && !vs_table_find(&g.tab, 2) && g.vsd_pushes == 1,
	   "and the table in force stays");
	ok(strncmp(push(&g, "push x y", "", 0), "error ", 6) == 0 &&
	   strncmp(push(&g, "push 99999999999 0", "", 0), "error ", 6) == 0,
	   "so are bad and oversized lengths");
	ok(g.tab.n == 3 && g.rules && g.rules_hash == 0x1234, "the rules in force stay too");
	vs_table_free(&g.tab);
	rules_free(g.rules);
	free(g.id_of);
}

int
main(void)
{
	test_parse();
	test_merge();
	test_key();
	test_push();
	return tap_done();
}
