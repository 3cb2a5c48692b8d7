// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rules_write() round trips: every good test file and every example, loaded,
 * written and loaded again from the text (as the accept gate loads what vsd
 * hands it), gives the same VSs (share, priority), the same services, the
 * same rules in the same precedence order and the same decision for every
 * (gate, caller, requester), unknown VSs included. And
 * rules_query()'s indices (per-caller lists, the exact-requester index)
 * against an oracle that walks every rule.
 */
#include "config.h"

#include <glob.h>
#include <stdlib.h>

#include "lib/buf.h"
#include "rules/rules.h"
#include "attrs-oracle.h"
#include "tap.h"

/* The dump's rule, site and content lines without their "at FILE:LINE:COL"
 * and the header. */
static char *
rule_lines(const struct rules *rs)
{
	struct buf b = { 0 }, out = { 0 };
	char *line, *save = NULL, *at;

	rules_dump(rs, &b);
	for (line = strtok_r(b.p, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "rule ", 5) != 0 && strncmp(line, "site ", 5) != 0 &&
		    strncmp(line, "content ", 8) != 0)
			continue;
		if ((at = strstr(line, " at ")))
			*at = '\0';
		buf_printf(&out, "%s\n", line);
	}
	buf_free(&b);
	return out.p ? out.p : strdup("");
}

static int
naive_match(const struct rules *rs, const struct rules_pat *p, int idx)
{
	if (p->kind == RULES_PAT_ANY)
		return 1;
	if (p->kind == RULES_PAT_VS)
		return idx >= 0 && idx == p->vs;
	return idx >= 0 && strncmp(rs->vs[idx].name, p->prefix, p->plen) == 0;
}

/*
 * The oracle: the first rule of the gate, in precedence order, whose caller
 * and requester patterns match, by a walk over all of them; -1 if none.
 * rules_query() must find the same rule through its indices.
 */
static int
naive_rule(const struct rules *rs, int g, int ci, int ri)
{
	size_t k;

	for (k = rs->gate_first[g]; k < rs->gate_first[g + 1]; k++)
		if (naive_match(rs, &rs->rules[k].caller, ci) &&
		    (!rs->rules[k].has_req || naive_match(rs, &rs->rules[k].req, ri)))
			return (int)k;
	return -1;
}

static int
same_as_oracle(const struct rules *rs)
{
	int g, ci, ri, bad = 0;

	for (g = 0; g < RULES_GATE_MAX; g++)
		for (ci = -1; ci < (int)rs->nvs; ci++)
			for (ri = -1; ri < (int)rs->nvs; ri++) {
				/* an unknown caller is matched by '*' rules only */
				int want = ci < 0 ? -1 : naive_rule(rs, g, ci, ri), got;

				if (ci < 0) {
					size_t k;

					for (k = rs->gate_first[g]; k < rs->gate_first[g + 1]; k++)
						if (rs->rules[k].caller.kind == RULES_PAT_ANY &&
						    (!rs->rules[k].has_req ||
						     naive_match(rs, &rs->rules[k].req, ri))) {
							want = (int)k;
							break;
						}
				}
				got = rules_query(rs, g, ci, ri).rule;
				if (got != want && bad++ < 3)
					printf("#   gate %d caller %d req %d: rule %d, the oracle %d\n", g, ci,
					    ri, got, want);
			}
	return bad;
}

/* Every decision of a by index of a, asked of b by name. */
static int
same_decisions(const struct rules *a, const struct rules *b)
{
	int g, ci, ri, bad = 0;

	for (g = 0; g < RULES_GATE_MAX; g++)
		for (ci = -1; ci < (int)a->nvs; ci++)
			for (ri = -1; ri < (int)a->nvs; ri++) {
				const char *cn = ci >= 0 ? a->vs[ci].name : NULL;
				const char *rn = ri >= 0 ? a->vs[ri].name : NULL;
				struct rules_decision x = rules_query(a, g, ci, ri);
				struct rules_decision y = rules_query_name(b, g, cn, rn);
				const char *xv = x.vs >= 0 ? a->vs[x.vs].name : "";
				const char *yv = y.vs >= 0 ? b->vs[y.vs].name : "";

				if (x.action != y.action || strcmp(xv, yv) != 0 || x.rule != y.rule) {
					if (bad++ < 3)
						printf("#   %s %s <- %s: %s %s (rule %d) vs %s %s (rule %d)\n",
						    rules_gate_name(g), cn ? cn : "?", rn ? rn : "?",
						    rules_action_name(x.action), xv, x.rule,
						    rules_action_name(y.action), yv, y.rule);
				}
			}
	/* a VS neither declares, matched by name against prefixes */
	for (g = 0; g < RULES_GATE_MAX; g++) {
		struct rules_decision x = rules_query_name(a, g, "zz-undeclared", "www1");
		struct rules_decision y = rules_query_name(b, g, "zz-undeclared", "www1");

		bad += x.action != y.action || x.rule != y.rule;
	}
	return bad;
}

/* Both NULL, or the same string. */
static int
same_str(const char *x, const char *y)
{
	return x == y || (x && y && strcmp(x, y) == 0);
}

/* Every VS's name, share, priority, worker limit, database cap and network
 * share, and every service, alike in a and b. */
static int
same_decls(const struct rules *a, const struct rules *b)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < a->nvs && i < b->nvs; i++)
		if (strcmp(a->vs[i].name, b->vs[i].name) != 0 || a->vs[i].cpu != b->vs[i].cpu ||
		    a->vs[i].priority != b->vs[i].priority) {
			if (bad++ < 3)
				printf("#   VS %zu: %s cpu %u priority %u, read back %s cpu %u "
				    "priority %u\n", i, a->vs[i].name, a->vs[i].cpu, a->vs[i].priority,
				    b->vs[i].name, b->vs[i].cpu, b->vs[i].priority);
		}
	/* the worker limit the accept gate enforces (tests/rules/good-workers.rules) */
	for (i = 0; i < a->nvs && i < b->nvs; i++)
		if (a->vs[i].workers_n != b->vs[i].workers_n ||
		    a->vs[i].workers_bp != b->vs[i].workers_bp) {
			if (bad++ < 3)
				printf("#   VS %s: workers %u, %u bp, read back %u, %u bp\n",
				    a->vs[i].name, a->vs[i].workers_n, a->vs[i].workers_bp,
				    b->vs[i].workers_n, b->vs[i].workers_bp);
		}
	/* the database cap the accept gate enforces (tests/rules/good-db-cpu.rules) */
	for (i = 0; i < a->nvs && i < b->nvs; i++)
		if (a->vs[i].db_cpu != b->vs[i].db_cpu ||
		    a->vs[i].db_burst_ms != b->vs[i].db_burst_ms) {
			if (bad++ < 3)
				printf("#   VS %s: db-cpu %u bp db-burst %u ms, read back %u bp %u ms\n",
				    a->vs[i].name, a->vs[i].db_cpu, a->vs[i].db_burst_ms,
				    b->vs[i].db_cpu, b->vs[i].db_burst_ms);
		}
	/* the network share, as set (tests/rules/good-net.rules) */
	for (i = 0; i < a->nvs && i < b->nvs; i++) {
		const struct rules_vs *x = &a->vs[i], *y = &b->vs[i];
		unsigned net = RULES_SET_NET_SHARE | RULES_SET_NET_MAX | RULES_SET_DEV |
			       RULES_SET_DEV_RATE;

		if ((x->set & net) != (y->set & net) || x->net_share != y->net_share ||
		    x->net_max != y->net_max || x->dev_rate != y->dev_rate ||
		    strcmp(x->dev, y->dev) != 0) {
			if (bad++ < 3)
				printf("#   VS %s: net-share %u dev '%s' dev-rate %llu net-max %llu, "
				    "read back %u '%s' %llu %llu\n", x->name, x->net_share, x->dev,
				    (unsigned long long)x->dev_rate, (unsigned long long)x->net_max,
				    y->net_share, y->dev, (unsigned long long)y->dev_rate,
				    (unsigned long long)y->net_max);
		}
	}
	for (i = 0; i < a->nservices && i < b->nservices; i++) {
		const struct rules_service *x = &a->services[i], *y = &b->services[i];

		if (strcmp(x->name, y->name) != 0 || x->gate != y->gate ||
		    strcmp(a->vs[x->home].name, b->vs[y->home].name) != 0 ||
		    strcmp(x->command, y->command) != 0 || !same_str(x->user, y->user) ||
		    !same_str(x->group, y->group) || x->attrs_timeout_ms != y->attrs_timeout_ms ||
		    !same_str(x->unclassified >= 0 ? a->vs[x->unclassified].name : NULL,
			      y->unclassified >= 0 ? b->vs[y->unclassified].name : NULL)) {
			if (bad++ < 3)
				printf("#   service %s home %s user %s group %s command '%s', read back "
				    "%s home %s user %s group %s command '%s'\n", x->name,
				    a->vs[x->home].name, x->user ? x->user : "-",
				    x->group ? x->group : "-", x->command, y->name,
				    b->vs[y->home].name, y->user ? y->user : "-",
				    y->group ? y->group : "-", y->command);
		}
	}
	/* remote lines (vsrules(5) REMOTE): the same DSCPs to the same VSs */
	for (i = 0; i < a->nremotes && i < b->nremotes; i++) {
		const struct rules_remote *x = &a->remotes[i], *y = &b->remotes[i];

		if (x->dscp != y->dscp || strcmp(a->vs[x->vs].name, b->vs[y->vs].name) != 0 ||
		    x->nfrom != y->nfrom ||
		    memcmp(x->from, y->from, x->nfrom * sizeof(*x->from)) != 0) {
			if (bad++ < 3)
				printf("#   remote dscp %u => %s, read back dscp %u => %s\n", x->dscp,
				    a->vs[x->vs].name, y->dscp, b->vs[y->vs].name);
		}
	}
	return bad + (a->nvs != b->nvs) + (a->nservices != b->nservices) +
	    (a->nremotes != b->nremotes);
}

/* a written by rules_write() and loaded again as the accept gate loads it. */
static void
write_and_load(const char *what, const struct rules *a)
{
	struct rules *b = NULL;
	struct buf errs = { 0 }, text = { 0 };
	char *la, *lb;

	rules_write(a, &text);
	if (rules_load_buffer("written", text.p ? text.p : "", text.len,
	    RULES_NO_INCLUDE | RULES_NO_PERM_CHECK, &b, &errs) < 0) {
		ok(0, "%s: what rules_write wrote loads", what);
		printf("# %s", errs.p ? errs.p : "?\n");
	} else {
		la = rule_lines(a);
		lb = rule_lines(b);
		ok(a->nvs == b->nvs && a->nrules == b->nrules && a->nservices == b->nservices,
		    "%s: %zu VSs, %zu services and %zu rules written, %zu, %zu and %zu read back",
		    what, a->nvs, a->nservices, a->nrules, b->nvs, b->nservices, b->nrules);
		ok(same_decls(a, b) == 0, "%s: the same VS shares and priorities, the same services "
		    "and remote lines",
		    what);
		is_str(lb, la, "%s: the same rules in the same order", what);
		ok(same_decisions(a, b) == 0, "%s: the same decision for every query", what);
		ok(same_as_oracle(a) == 0, "%s: every query finds the rule a walk over all finds",
		    what);
		ok(a->nsites == b->nsites && a->ncrules == b->ncrules,
		    "%s: %zu sites and %zu content bindings written, %zu and %zu read back", what,
		    a->nsites, a->ncrules, b->nsites, b->ncrules);
		ok(oracle_check(a, b) == 0, "%s: every query by content finds what a walk over "
		    "all bindings finds, and the same read back", what);
		free(la);
		free(lb);
	}
	rules_free(b);
	buf_free(&text);
	buf_free(&errs);
}

static void
round_trip(const char *path)
{
	struct rules *a = NULL;
	struct buf errs = { 0 };

	if (rules_load(path, RULES_NO_PERM_CHECK, &a, &errs) < 0) {
		ok(0, "%s loads", path);
		printf("# %s", errs.p ? errs.p : "?\n");
	} else {
		write_and_load(path, a);
	}
	rules_free(a);
	buf_free(&errs);
}

/*
 * What no test file has: shares with fractions, a command with every escape
 * the lexer knows (and a '#', which is not a comment inside a string), a
 * second service, services with a user and a group (root and its group,
 * which every system has).
 */
static const char tricky[] =
	"vs a cpu 12.5% priority 3\n"
	"vs b cpu 0.25%\n"
	"vs c cpu 7.05% priority 1\n"
	"service s1 home a command \"printf '%s\\n' \\\"x\\\" \\\\ # not a comment\\t|\"\n"
	"service s2 home c gate accept command \"true\"\n"
	"service s3 home b user root command \"id\"\n"
	"service s4 { home a; group root; user 0; command \"id -G\" }\n"
	"service s5 home b attrs-timeout 2s command \"php-fpm\"\n"
	"(accept, [a|b], req = c) => ([b|a])\n"
	"site \"Odd-Host.example.\" alias *.odd.example docroot \"/srv/a \\\"q\\\" b\" vs b\n"
	"(accept, [a|b], req = c, host = [x|y].example) => ([b|a])\n"
	"(accept, *, docroot = \"/srv/with space\") => (c)\n";

static void
round_trip_tricky(void)
{
	struct rules *a = NULL;
	struct buf errs = { 0 };

	if (rules_load_buffer("tricky", tricky, strlen(tricky), RULES_NO_INCLUDE, &a, &errs) < 0) {
		ok(0, "the tricky file loads");
		printf("# %s", errs.p ? errs.p : "?\n");
	} else {
		is_str(a->services[0].command, "printf '%s\n' \"x\" \\ # not a comment\t|",
		    "the tricky command as the lexer reads it");
		is_str(a->services[2].user, "root", "a service's user");
		ok(a->services[2].group == NULL, "no group: the user's own");
		is_str(a->services[3].user, "0", "a user given by number, in a block");
		is_str(a->services[3].group, "root", "a service's group, not a VS group");
		write_and_load("tricky", a);
	}
	rules_free(a);
	buf_free(&errs);
}

int
main(void)
{
	const char *top = getenv("top_srcdir");
	char pat[4096];
	glob_t g;
	size_t i, n = 0;
	int k;

	if (!top)
		top = ".";
	for (k = 0; k < 2; k++) {
		snprintf(pat, sizeof(pat), k ? "%s/rules/examples/*.rules" : "%s/tests/rules/good-*.rules",
		    top);
		if (glob(pat, 0, NULL, &g) != 0)
			continue;
		for (i = 0; i < g.gl_pathc; i++, n++)
			round_trip(g.gl_pathv[i]);
		globfree(&g);
	}
	ok(n >= 9, "%zu files tried (the good test files and the examples)", n);
	round_trip_tricky();
	return tap_done();
}
