// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Compiled rules written back as a rule file (vsrules(5)): what vsd hands
 * every accept-gate supervisor (vsd/applied.c), which loads it with
 * rules_load_buffer(..., RULES_NO_INCLUDE | RULES_NO_PERM_CHECK, ...) and
 * must get the same rules: the same list in the same precedence order, so
 * the same decision for every query (tests/unit/test-rules-write.c).
 *
 * Why that holds: rule priority comes from the priorities of the VSs a rule
 * names, and specificity from its patterns, both written; compile.c orders
 * rules by (priority, specificity) and keeps file order within a tie, and
 * the rules are written in the order they were compiled in.
 *
 * What is left out, because no query depends on it: plans and groups (every
 * VS's share is written as compiled, so the 100% check passes as it did,
 * and without groups there is no group budget to check), and VS limits
 * other than the share (which the check requires), the network share
 * (whose per-interface budget is checked too), the worker limit and the
 * database cap (which the accept gate enforces, workers.c and dbcap.c). rules_dump() prints rule
 * lines with write_rule() too. Sites and content rules come last, as
 * attrs.c writes them: sites as sites, so the text stays as short as the
 * file; the order among them decides nothing (content.c refuses the ties
 * that would).
 */
#include "config.h"

#include "lib/buf.h"
#include "attrs.h"
#include "ctx.h"
#include "pat.h"
#include "net.h"

void
write_rule(const struct rules *rs, struct buf *b, const struct rules_rule *r)
{
	buf_printf(b, "(%s, ", rules_gate_name(r->gate));
	pat_write(rs, b, &r->caller);
	if (r->has_req) {
		buf_printf(b, ", req = ");
		pat_write(rs, b, &r->req);
	}
	buf_printf(b, ") => (%s)", r->action == RULES_TO_VS ? rs->vs[r->target].name :
		   rules_action_name(r->action));
}

void
write_workers(const struct rules_vs *x, struct buf *b)
{
	char t[32];

	if (x->workers_bp)
		buf_printf(b, " workers %s", fmt_percent(x->workers_bp, t, sizeof(t)));
	else if (x->workers_n)
		buf_printf(b, " workers %u", x->workers_n);
}

void
write_db(const struct rules_vs *x, struct buf *b)
{
	char t[32];

	if (x->db_cpu)
		buf_printf(b, " db-cpu %s", fmt_percent(x->db_cpu, t, sizeof(t)));
	if (x->db_burst_ms)
		buf_printf(b, " db-burst %ums", x->db_burst_ms);
}

void
write_service_opts(const struct rules *rs, struct buf *b, const struct rules_service *s)
{
	if (s->user)
		buf_printf(b, "user %s ", s->user);
	if (s->group)
		buf_printf(b, "group %s ", s->group);
	if (s->proto != RULES_PROTO_FASTCGI)
		buf_printf(b, "protocol %s ", rules_proto_name(s->proto));
	if (s->attrs_timeout_ms)
		buf_printf(b, "attrs-timeout %ums ", s->attrs_timeout_ms);
	if (s->unclassified >= 0)
		buf_printf(b, "unclassified %s ", rs->vs[s->unclassified].name);
}

void
write_remote(const struct rules *rs, struct buf *b, const struct rules_remote *x)
{
	size_t i;

	buf_printf(b, "remote dscp %u from", x->dscp);
	for (i = 0; i < x->nfrom; i++) {
		buf_add(b, " ", 1);
		rules_prefix_write(b, &x->from[i]);
	}
	buf_printf(b, " => %s", rs->vs[x->vs].name);
}

/*
 * A string as the lexer reads it back (lex.c): \" \\ \n \t are its escapes.
 * No other control character can be in a compiled string: the lexer refuses
 * them.
 */
static void
write_string(struct buf *b, const char *s)
{
	buf_add(b, "\"", 1);
	for (; *s; s++) {
		switch (*s) {
		case '"':  buf_add(b, "\\\"", 2); break;
		case '\\': buf_add(b, "\\\\", 2); break;
		case '\n': buf_add(b, "\\n", 2); break;
		case '\t': buf_add(b, "\\t", 2); break;
		default:   buf_add(b, s, 1); break;
		}
	}
	buf_add(b, "\"", 1);
}

void
rules_write(const struct rules *rs, struct buf *b)
{
	char t[32];
	size_t i;

	buf_printf(b, "# the compiled rules (rules_write): every VS with its share and\n"
		   "# priority, the services, the remote lines, every rule expanded, in precedence order;\n"
		   "# no plans or groups\n");
	for (i = 0; i < rs->nvs; i++) {
		buf_printf(b, "vs %s cpu %s priority %u", rs->vs[i].name,
			   fmt_percent(rs->vs[i].cpu, t, sizeof(t)), rs->vs[i].priority);
		/* the network share: its budget per interface checks again */
		net_write(&rs->vs[i], b);
		/* the gate limits the VS's workers by it */
		write_workers(&rs->vs[i], b);
		/* and caps its database CPU (dbcap.c) */
		write_db(&rs->vs[i], b);
		buf_printf(b, "\n");
	}
	for (i = 0; i < rs->nservices; i++) {
		const struct rules_service *s = &rs->services[i];

		buf_printf(b, "service %s home %s ", s->name, rs->vs[s->home].name);
		write_service_opts(rs, b, s);
		buf_printf(b, "command ");
		write_string(b, s->command);
		buf_printf(b, "\n");
	}
	for (i = 0; i < rs->nremotes; i++) {
		write_remote(rs, b, &rs->remotes[i]);
		buf_printf(b, "\n");
	}
	for (i = 0; i < rs->nrules; i++) {
		write_rule(rs, b, &rs->rules[i]);
		buf_printf(b, "\n");
	}
	write_sites(rs, b);
}
