// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The rules library's query API as the accept gate uses it: indices and
 * names, VSs the file does not declare, unclassified requesters, defaults,
 * and a file loaded twice giving the same answers (no hidden state).
 */
#include "config.h"

#include <errno.h>

#include "lib/buf.h"
#include "rules/rules.h"
#include "tap.h"

static const char text[] =
	"vs www1 cpu 30% priority 5\n"
	"vs www2 cpu 30%\n"
	"vs pool cpu 10%\n"
	"vs shop-a cpu 1%\n"
	"service php home pool command \"php-fpm\"\n"
	"(accept, www[1|2], req = www[2|1]) => (www[2|1])\n"
	"(accept, pool, req = shop-*) => (requester)\n"
	"(accept, *, req = www1) => (stay)\n"
	"(socket, www2) => (pool)\n";

static struct rules *
load(const char *t)
{
	struct buf errs = { 0 };
	struct rules *rs = NULL;
	int r = rules_load_buffer("t.rules", t, strlen(t), RULES_NO_INCLUDE, &rs, &errs);

	if (r < 0)
		printf("# %s", errs.p ? errs.p : "?\n");
	buf_free(&errs);
	return rs;
}

int
main(void)
{
	struct rules *rs = load(text), *rs2;
	struct rules_decision d;
	struct buf errs = { 0 };
	int w1, w2, pool, shop;

	ok(rs != NULL, "the file loads");
	if (!rs)
		return tap_done();
	w1 = rules_vs_index(rs, "www1");
	w2 = rules_vs_index(rs, "www2");
	pool = rules_vs_index(rs, "pool");
	shop = rules_vs_index(rs, "shop-a");
	ok(w1 == 0 && w2 == 1 && pool == 2 && shop == 3, "VS indices in declaration order");
	ok(rules_vs_index(rs, "nosuch") == -1, "an undeclared VS has no index");
	ok(rules_service_index(rs, "php") == 0 && rs->services[0].home == pool,
	   "the service's home is pool");

	d = rules_query(rs, RULES_GATE_ACCEPT, w1, w2);
	ok(d.action == RULES_TO_VS && d.vs == w2 && d.rule >= 0, "www1 <- www2: to www2");
	d = rules_query(rs, RULES_GATE_ACCEPT, w2, w1);
	ok(d.action == RULES_TO_VS && d.vs == w1,
	   "www2 <- www1: to www1 (as high a priority as '*, req = www1', more specific)");
	d = rules_query(rs, RULES_GATE_ACCEPT, pool, w1);
	ok(d.action == RULES_STAY && d.vs == pool && d.rule >= 0, "pool <- www1: stay, by rule");
	d = rules_query(rs, RULES_GATE_ACCEPT, pool, shop);
	ok(d.action == RULES_TO_REQUESTER && d.vs == shop, "pool <- shop-a: to the requester");
	d = rules_query(rs, RULES_GATE_ACCEPT, pool, w2);
	ok(d.action == RULES_TO_REQUESTER && d.vs == w2 && d.rule == -1,
	   "no rule: the default rule, to the requester");
	d = rules_query(rs, RULES_GATE_ACCEPT, pool, RULES_VS_UNKNOWN);
	ok(d.action == RULES_TO_HOME && d.rule == -1,
	   "unclassified requester, no rule: home (the default rule's requester is unknown)");
	d = rules_query(rs, RULES_GATE_SOCKET, w2, RULES_VS_UNKNOWN);
	ok(d.action == RULES_TO_VS && d.vs == pool, "socket gate: www2's sockets go to pool");
	d = rules_query(rs, RULES_GATE_SOCKET, w1, RULES_VS_UNKNOWN);
	ok(d.action == RULES_TO_CREATOR && d.rule == -1, "socket gate default: creator");
	d = rules_query(rs, RULES_GATE_FORK, w1, RULES_VS_UNKNOWN);
	ok(d.action == RULES_TO_CREATOR, "fork gate default: creator");
	d = rules_query(rs, RULES_GATE_MAX, w1, w2);
	ok(d.action == RULES_STAY && d.rule == -1, "a bad gate number decides nothing");
	d = rules_query(rs, RULES_GATE_ACCEPT, 999, w1);
	ok(d.action == RULES_STAY && d.rule >= 0, "an index out of range is an unknown caller");

	/* by name: VSs created with vsctl, not in the file */
	d = rules_query_name(rs, RULES_GATE_ACCEPT, "pool", "shop-zz");
	ok(d.action == RULES_TO_REQUESTER && d.vs == -1,
	   "pool <- shop-zz (not in the file): the prefix rule matches by name");
	d = rules_query_name(rs, RULES_GATE_ACCEPT, "other", "www1");
	ok(d.action == RULES_STAY && d.rule >= 0, "an undeclared caller matches '*'");
	d = rules_query_name(rs, RULES_GATE_ACCEPT, "other", "www2");
	ok(d.rule == -1, "and nothing else");

	/* a requester target with nobody to go to: home */
	rs2 = load("vs a cpu 1%\n(accept, *, req = *) => (requester)\n");
	d = rules_query(rs2, RULES_GATE_ACCEPT, 0, RULES_VS_UNKNOWN);
	ok(d.action == RULES_TO_HOME, "requester of an unclassified connection: home");
	d = rules_query_name(rs2, RULES_GATE_ACCEPT, "a", "zz");
	ok(d.action == RULES_TO_REQUESTER && d.vs == -1,
	   "requester known by name only: requester (the gate maps the name)");
	rules_free(rs2);

	/* loading is pure: the same text gives the same tables */
	rs2 = load(text);
	d = rules_query(rs2, RULES_GATE_ACCEPT, w1, w2);
	ok(rs2 && d.action == RULES_TO_VS && d.vs == w2, "a second load answers the same");
	rules_free(rs2);
	rules_free(rs);

	ok(rules_load_buffer("t.rules", "include \"x\"\n", 12, RULES_NO_INCLUDE, &rs, &errs)
	   == -EINVAL && rs == NULL, "includes are refused in buffers loaded without them");
	is_str(errs.p, "t.rules:1:9: include 'x' is not allowed here\n", "with a message");
	buf_free(&errs);
	ok(rules_gate_from_name("fork") == RULES_GATE_FORK && rules_gate_from_name("x") == -1,
	   "gate names");
	return tap_done();
}
