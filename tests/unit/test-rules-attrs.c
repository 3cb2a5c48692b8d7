// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Sites and content rules through the accept gate's API (rules.h:
 * rules_wants_attrs(), rules_query_attrs()): host names exact and wildcard,
 * case, port and trailing dot; docroots component-wise, SCRIPT_FILENAME
 * when DOCUMENT_ROOT is missing, "..": refused; which binding wins; range
 * sites; the bound on the wait; and the check-time errors, every one in one
 * pass, at FILE:LINE:COLUMN.
 */
#include "config.h"

#include <stdlib.h>

#include "lib/buf.h"
#include "rules/rules.h"
#include "attrs-oracle.h"
#include "tap.h"

static const char text[] =
	"vs www1 cpu 10%\n"
	"vs www2 cpu 10%\n"
	"vs gold cpu 10% priority 5\n"
	"vs fe cpu 5%\n"
	"vs php cpu 5%\n"
	"vs c[0001..0240] cpu 0.1%\n"
	"service php-fpm home php attrs-timeout 150ms command \"php-fpm8.2 -F\"\n"
	"service other home php command \"true\"\n"
	"service db home php protocol mysql command \"mariadbd\"\n"
	"service raw home php protocol other command \"cat\"\n"
	"site shop.example alias www.shop.example docroot /var/www/shop vs www1\n"
	"site *.blog.example docroot \"/srv/my blog\" vs www2\n"
	"site c[0001..0240].example alias www.c[0001..0240].example\\\n"
	"	docroot /var/www/c[0001..0240] vs c[0001..0240]\n"
	"site block.example {\n"
	"	alias b2.example; docroot /srv/block\n"
	"	vs gold\n"
	"}\n"
	;

static struct rules *
load(const char *t, struct buf *errs)
{
	struct rules *rs = NULL;

	buf_reset(errs);
	if (rules_load_buffer("t.rules", t, strlen(t), RULES_NO_INCLUDE, &rs, errs) < 0)
		return NULL;
	return rs;
}

static int
q(const struct rules *rs, int caller, int req, const char *host, const char *docroot,
  const char *script)
{
	struct rules_req_attrs a = { host, docroot, script };

	return rules_query_attrs(rs, 0, caller, req, &a);
}

static const char *
name(const struct rules *rs, int vs)
{
	return vs >= 0 ? rs->vs[vs].name : "(unknown)";
}

/*
 * Random files: VSs of random priorities, sites and content rules on nested
 * docroots and overlapping wildcards with random callers and requesters;
 * every file that checks must answer as the oracle's walk does.
 */
static void
random_files(void)
{
	static const char *const hosts[] = {
		"a.example", "*.example", "*.b.example", "x.b.example", "c.x.b.example", "*.x.b.example",
	};
	static const char *const dirs[] = {
		"/srv", "/srv/a", "/srv/a/b", "/srv/ab", "/var/www", "/var/www/a",
	};
	static const char *const pats[] = { "*", "v0", "v1", "v*", "fe" };
	unsigned x = 99;
	int f, i, loaded = 0, bad = 0;

	for (f = 0; f < 300; f++) {
		struct buf t = { 0 }, errs = { 0 };
		struct rules *rs = NULL;

		for (i = 0; i < 4; i++) {
			x = x * 1103515245u + 12345u;
			buf_printf(&t, "vs v%d cpu 1%% priority %u\n", i, (x >> 16) % 3);
		}
		buf_printf(&t, "vs fe cpu 1%%\n");
		for (i = 0; i < 6; i++) {
			unsigned r;

			x = x * 1103515245u + 12345u;
			r = x >> 8;
			if (r % 3 == 0)
				buf_printf(&t, "site %s docroot %s vs v%u\n", hosts[(r >> 4) % 6],
					   dirs[(r >> 8) % 6], (r >> 12) % 4);
			else
				buf_printf(&t, "(accept, %s%s%s, %s = %s) => (v%u)\n",
					   pats[(r >> 4) % 5], (r >> 7) & 1 ? ", req = " : "",
					   (r >> 7) & 1 ? pats[(r >> 8) % 5] : "",
					   (r >> 11) & 1 ? "host" : "docroot",
					   (r >> 11) & 1 ? hosts[(r >> 12) % 6] : dirs[(r >> 12) % 6],
					   (r >> 16) % 4);
		}
		if (rules_load_buffer("r.rules", t.p, t.len, RULES_NO_INCLUDE, &rs, &errs) == 0) {
			loaded++;
			if (oracle_check(rs, NULL) && bad++ < 2)
				printf("# the file:\n%s", t.p);
		}
		rules_free(rs);
		buf_free(&t);
		buf_free(&errs);
	}
	ok(loaded > 50 && bad == 0, "%d random files that check answer as the oracle (%d do not)",
	   loaded, bad);
}

int
main(void)
{
	struct buf errs = { 0 }, w = { 0 };
	struct rules *rs, *back;
	char *t;
	unsigned ms = 0;
	int w1, w2, gold, fe, php, c42;

	/* the file: the sites above, and content rules */
	t = strdup(text);
	{
		struct buf f = { 0 };

		buf_printf(&f, "%s%s", t,
			   "(accept, *, host = gold.example) => (gold)\n"
			   "(accept, *, host = block.example) => (gold)\n"
			   "(accept, *, docroot = /var/www/gold) => (gold)\n"
			   "(accept, *, req = fe, host = fe-only.example) => (www2)\n"
			   "(accept, www1, host = moved.example) => (www2)\n"
			   "(accept, *, host = moved.example) => (www1)\n"
			   "(accept, *, docroot = /var/www/shop/sub) => (www2)\n");
		free(t);
		t = f.p;
	}
	rs = load(t, &errs);
	ok(rs != NULL, "the file with sites and content rules loads");
	if (!rs) {
		printf("# %s", errs.p ? errs.p : "?\n");
		return tap_done();
	}
	w1 = rules_vs_index(rs, "www1");
	w2 = rules_vs_index(rs, "www2");
	gold = rules_vs_index(rs, "gold");
	fe = rules_vs_index(rs, "fe");
	php = rules_vs_index(rs, "php");
	c42 = rules_vs_index(rs, "c0042");
	ok(rs->nsites == 243, "243 sites (%zu)", rs->nsites);
	is_str(name(rs, q(rs, php, -1, "B2.example", NULL, NULL)), "gold", "a site in a { } block");
	is_str(name(rs, q(rs, php, -1, NULL, "/srv/block/x", NULL)), "gold", "... its docroot");

	ok(rules_wants_attrs(rs, rules_service_index(rs, "php-fpm"), &ms) == 1 && ms == 150,
	   "php-fpm wants the params, waits 150 ms (%u)", ms);
	ok(rules_wants_attrs(rs, rules_service_index(rs, "other"), &ms) == 1 && ms == 200,
	   "a service without attrs-timeout waits the default 200 ms (%u)", ms);
	ok(rules_wants_attrs(rs, -1, &ms) == 1 && ms == RULES_ATTRS_TIMEOUT_MS,
	   "a supervisor without a declared service: the default");
	ok(rules_wants_attrs(rs, rules_service_index(rs, "db"), &ms) == 0,
	   "a mysql service (the server speaks first) is never held for params");
	ok(rules_wants_attrs(rs, rules_service_index(rs, "raw"), &ms) == 0,
	   "a service of protocol other is never held for params");

	/* hosts */
	is_str(name(rs, q(rs, php, -1, "shop.example", NULL, NULL)), "www1", "host exact");
	is_str(name(rs, q(rs, php, -1, "Shop.EXAMPLE", NULL, NULL)), "www1", "host case");
	is_str(name(rs, q(rs, php, -1, "www.shop.example:8080", NULL, NULL)), "www1",
	       "alias, port ignored");
	is_str(name(rs, q(rs, php, -1, "shop.example.", NULL, NULL)), "www1", "trailing dot");
	is_str(name(rs, q(rs, php, -1, "shop.example.:443", NULL, NULL)), "www1",
	       "trailing dot and port");
	is_str(name(rs, q(rs, php, -1, "xshop.example", NULL, NULL)), "(unknown)",
	       "another host is not the site");
	is_str(name(rs, q(rs, php, -1, "a.blog.example", NULL, NULL)), "www2", "wildcard");
	is_str(name(rs, q(rs, php, -1, "a.b.BLOG.example", NULL, NULL)), "www2",
	       "wildcard, two labels deep");
	is_str(name(rs, q(rs, php, -1, "blog.example", NULL, NULL)), "(unknown)",
	       "a wildcard does not match its own domain");
	is_str(name(rs, q(rs, php, -1, "ablog.example", NULL, NULL)), "(unknown)",
	       "a wildcard matches whole labels");
	is_str(name(rs, q(rs, php, -1, "www.c0042.example", NULL, NULL)), "c0042",
	       "a range site by its alias");
	ok(q(rs, php, -1, "c0042.example", NULL, NULL) == c42, "a range site by its name");
	is_str(name(rs, q(rs, php, -1, "c0241.example", NULL, NULL)), "(unknown)",
	       "past the range");
	is_str(name(rs, q(rs, php, -1, "sh\001p.example", NULL, NULL)), "(unknown)",
	       "a control byte in the host matches nothing");
	is_str(name(rs, q(rs, php, -1, "", NULL, NULL)), "(unknown)", "an empty host");

	/* docroots */
	is_str(name(rs, q(rs, php, -1, NULL, "/var/www/shop", NULL)), "www1", "docroot exact");
	is_str(name(rs, q(rs, php, -1, NULL, "/var/www/shop/", NULL)), "www1",
	       "docroot with a trailing slash");
	is_str(name(rs, q(rs, php, -1, NULL, "/var/www/shop/x/y", NULL)), "www1",
	       "below the docroot");
	is_str(name(rs, q(rs, php, -1, NULL, "/var/www/shopping", NULL)), "(unknown)",
	       "component-wise: /var/www/shopping is not under /var/www/shop");
	is_str(name(rs, q(rs, php, -1, NULL, "/var/www/shop/sub/a", NULL)), "www2",
	       "the longer docroot wins");
	is_str(name(rs, q(rs, php, -1, NULL, "/var/www/shop/../c0042", NULL)), "(unknown)",
	       "a path with '..' matches nothing");
	is_str(name(rs, q(rs, php, -1, NULL, "var/www/shop", NULL)), "(unknown)",
	       "a relative path matches nothing");
	is_str(name(rs, q(rs, php, -1, NULL, "/srv/my blog/x", NULL)), "www2",
	       "a quoted docroot with a blank");
	is_str(name(rs, q(rs, php, -1, NULL, NULL, "/var/www/c0042/index.php")), "c0042",
	       "SCRIPT_FILENAME when DOCUMENT_ROOT is missing");
	is_str(name(rs, q(rs, php, -1, NULL, NULL,
			   "proxy:fcgi://localhost/var/www/c0042/index.php")), "c0042",
	       "SCRIPT_FILENAME as mod_proxy_fcgi sends it");
	is_str(name(rs, q(rs, php, -1, NULL, "/var/www/html", "/var/www/c0042/i.php")),
	       "(unknown)", "SCRIPT_FILENAME is not used when DOCUMENT_ROOT is sent");
	is_str(name(rs, q(rs, php, -1, "shop.example", "/var/www/c0042", NULL)), "c0042",
	       "the docroot (the front end's) wins over the host (the client's)");
	is_str(name(rs, q(rs, php, -1, "nosuch.example", "/var/www/nosuch", NULL)), "(unknown)",
	       "neither matches");

	/* content rules */
	is_str(name(rs, q(rs, php, -1, "gold.example", NULL, NULL)), "gold", "a host rule");
	is_str(name(rs, q(rs, php, -1, "gold.example", "/var/www/shop", NULL)), "www1",
	       "the docroot wins over a host name of higher priority");
	is_str(name(rs, q(rs, php, -1, "gold.example", NULL, "/var/www/shop/i.php")), "www1",
	       "... and so does the script path when no docroot is sent");
	is_str(name(rs, q(rs, php, -1, "gold.example", "/var/www/nosuch", NULL)), "gold",
	       "a docroot that matches nothing leaves it to the host name");
	is_str(name(rs, q(rs, php, -1, "c0001.example", "/var/www/gold/x", NULL)), "gold",
	       "a docroot rule");
	is_str(name(rs, q(rs, php, fe, "fe-only.example", NULL, NULL)), "www2",
	       "a rule for one requester");
	is_str(name(rs, q(rs, php, w1, "fe-only.example", NULL, NULL)), "(unknown)",
	       "... not for another");
	is_str(name(rs, q(rs, php, -1, "fe-only.example", NULL, NULL)), "(unknown)",
	       "... nor for an unknown requester");
	is_str(name(rs, q(rs, w1, -1, "moved.example", NULL, NULL)), "www2",
	       "a rule for one caller is more specific");
	is_str(name(rs, q(rs, php, -1, "moved.example", NULL, NULL)), "www1",
	       "other callers: the '*' rule");
	is_str(name(rs, q(rs, -1, -1, "moved.example", NULL, NULL)), "www1",
	       "an unknown caller: the '*' rule");
	is_str(name(rs, q(rs, 99999, 99999, "moved.example", NULL, NULL)), "www1",
	       "out-of-range indices are unknown VSs");
	ok(rules_query_attrs(rs, 0, php, -1, NULL) == RULES_VS_UNKNOWN, "no params: unknown");
	{
		struct rules_req_attrs none = { NULL, NULL, NULL };

		ok(rules_query_attrs(rs, 0, php, -1, &none) == RULES_VS_UNKNOWN,
		   "empty params: unknown");
	}
	/* the gate rules are not changed by content rules */
	ok(rules_query(rs, RULES_GATE_ACCEPT, php, w1).action == RULES_TO_REQUESTER &&
	   rules_query(rs, RULES_GATE_ACCEPT, php, w1).rule == -1,
	   "rules_query() ignores content rules");

	/* round trip */
	rules_write(rs, &w);
	back = NULL;
	buf_reset(&errs);
	ok(rules_load_buffer("written", w.p, w.len, RULES_NO_INCLUDE | RULES_NO_PERM_CHECK,
			     &back, &errs) == 0, "rules_write()'s text loads");
	if (back) {
		const char *hosts[] = { "shop.example", "a.b.blog.example", "gold.example",
					"moved.example", "fe-only.example", "www.c0240.example",
					"nosuch", NULL };
		const char *roots[] = { "/var/www/shop/sub/x", "/var/www/shop/x", "/srv/my blog",
					"/var/www/gold", NULL };
		int same = 1, i, j, ci;

		ok(back->nsites == rs->nsites && back->ncrules == rs->ncrules,
		   "as many sites (%zu) and bindings (%zu)", back->nsites, back->ncrules);
		ok(rules_wants_attrs(back, 0, &ms) && ms == 150, "attrs-timeout written back");
		ok(rules_service_index(back, "db") >= 0 &&
		   back->services[rules_service_index(back, "db")].proto == RULES_PROTO_MYSQL &&
		   back->services[rules_service_index(back, "raw")].proto == RULES_PROTO_OTHER &&
		   back->services[0].proto == RULES_PROTO_FASTCGI,
		   "each service's protocol written back");
		for (ci = -1; ci < (int)rs->nvs && ci < 6; ci++)
			for (i = 0; hosts[i]; i++)
				for (j = 0; j <= 4; j++) {
					struct rules_req_attrs a = { hosts[i], roots[j], NULL };

					if (rules_query_attrs(rs, 0, ci, fe, &a) !=
					    rules_query_attrs(back, 0, ci, fe, &a))
						same = 0;
				}
		ok(same, "the same answers after the round trip");
		rules_free(back);
	}
	buf_free(&w);
	rules_free(rs);
	free(t);

	/* a file without sites or content rules */
	rs = load("vs a cpu 1%\n(accept, *, req = *) => (requester)\n", &errs);
	ok(rs && rules_wants_attrs(rs, -1, &ms) == 0, "no sites, no content rules: no wait");
	if (rs) {
		struct rules_req_attrs a = { "a", "/a", "/a/b" };

		ok(rules_query_attrs(rs, 0, 0, 0, &a) == RULES_VS_UNKNOWN, "... and no answer");
	}
	rules_free(rs);

	/* errors: all of them, in one pass */
	rs = load("vs a cpu 1%\nvs b cpu 1%\n"
		  "site x.example vs a\n"
		  "site X.Example. vs b\n"
		  "site y.example docroot /srv/y vs a\n"
		  "site z.example docroot /srv/y/ vs b\n"
		  "site q.example vs nosuch\n"
		  "site bad..example vs a\n"
		  "site ok.example docroot relative vs a\n"
		  "site ok2.example docroot /srv/../etc vs a\n"
		  "site ok3.example docroot / vs a\n"
		  "site a*b.example vs a\n"
		  "site noVS.example\n"
		  "service s home a attrs-timeout 0ms command x\n"
		  "service t home a attrs-timeout 11s command x\n"
		  "service u home a attrs-timeout fast command x\n"
		  "(socket, *, host = x.example) => (a)\n"
		  "(accept, *, host = w.example) => (requester)\n"
		  "(accept, *, host = v.example, docroot = /v) => (a)\n"
		  "(accept, *, host = u.example) => (a)\n"
		  "(accept, *, host = U.example) => (b)\n"
		  "site s[1..3].example vs s[1..2]\n", &errs);
	ok(rs == NULL, "a file with bad sites is refused");
	{
		static const char *const want[] = {
			"t.rules:4:6: host 'x.example' is bound to two VSs: 'b' here and 'a' at t.rules:3:6",
			"t.rules:6:24: docroot '/srv/y' is bound to two VSs: 'b' here and 'a' at t.rules:5:24",
			"t.rules:7:19: undeclared VS 'nosuch'",
			"t.rules:8:6: bad host name 'bad..example': has an empty label",
			"t.rules:9:25: bad docroot 'relative': is not an absolute path",
			"t.rules:10:26: bad docroot '/srv/../etc': has a '.' or '..' component",
			"t.rules:11:26: bad docroot '/': is '/', which would match every request",
			"t.rules:12:7: a '*' in a host name may only start it",
			"t.rules:13:1: site 'noVS.example' needs a VS (vs NAME)",
			"t.rules:14:32: attrs-timeout '0ms' is out of range (1ms-10s)",
			"t.rules:15:32: attrs-timeout '11s' is out of range (1ms-10s)",
			"t.rules:16:32: attrs-timeout 'fast' is not a duration (like 200ms or 1s)",
			"t.rules:17:20: a content condition (host = or docroot =) needs the accept gate, not socket",
			"t.rules:18:35: a content rule's target must be a VS, not 'requester'",
			"t.rules:19:31: a rule has one content condition",
			"t.rules:21:1: host 'u.example' is bound to two VSs: 'b' here and 'a' at t.rules:20:1",
			"t.rules:22:25: alternation arity mismatch",
			NULL,
		};
		int i;

		for (i = 0; want[i]; i++) {
			int found = errs.p && strstr(errs.p, want[i]);

			ok(found, "error: %s", want[i]);
		}
		if (errs.p)
			printf("# errors:\n# %s", errs.p);
	}
	rules_free(rs);
	buf_free(&errs);
	random_files();
	return tap_done();
}
