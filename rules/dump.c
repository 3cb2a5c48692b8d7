// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The compiled rules in a stable text form: what `vsctl check --dump` shows
 * and what the golden tests compare. For small files it also prints every
 * gate decision, so a test sees what the accept gate would do.
 *
 * A rule line is written as rules_write() writes it (write.c), with its
 * priority, specificity and location after it.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "lib/buf.h"
#include "attrs.h"
#include "ctx.h"
#include "net.h"

#define DECISIONS_MAX_VS	8
#define DECISIONS_MAX_CONTENT	32

static void
limits(struct buf *b, unsigned set, unsigned cpu, unsigned cpu_max, uint64_t mem,
       uint64_t pids)
{
	char t[32];

	if (set & RULES_SET_CPU)
		buf_printf(b, " cpu %s", fmt_percent(cpu, t, sizeof(t)));
	if (set & RULES_SET_CPU_MAX)
		buf_printf(b, " cpu-max %s", fmt_percent(cpu_max, t, sizeof(t)));
	if (set & RULES_SET_MEM)
		buf_printf(b, " mem %s", fmt_size(mem, t, sizeof(t)));
	if (set & RULES_SET_PIDS)
		buf_printf(b, " pids %llu", (unsigned long long)pids);
}

static void
decision(const struct rules *rs, struct buf *b, struct rules_decision d)
{
	buf_printf(b, "%s", rules_action_name(d.action));
	if (d.action == RULES_TO_VS || d.action == RULES_TO_REQUESTER)
		buf_printf(b, " %s", d.vs >= 0 ? rs->vs[d.vs].name : "?");
	if (d.rule >= 0)
		buf_printf(b, " (rule %d)\n", d.rule);
	else
		buf_printf(b, " (default)\n");
}

static void
decisions(const struct rules *rs, struct buf *b)
{
	int g, ci, ri;

	if (rs->nvs > DECISIONS_MAX_VS)
		return;
	for (g = 0; g < RULES_GATE_MAX; g++) {
		if (rs->gate_first[g] == rs->gate_first[g + 1])
			continue;
		for (ci = -1; ci < (int)rs->nvs; ci++) {
			for (ri = -1; ri < (int)rs->nvs; ri++) {
				if (g != RULES_GATE_ACCEPT && ri >= 0)
					break;	/* no requester */
				buf_printf(b, "decide %s %s <- %s: ", rules_gate_name(g),
					   ci >= 0 ? rs->vs[ci].name : "?",
					   ri >= 0 ? rs->vs[ri].name : "?");
				decision(rs, b, rules_query(rs, g, ci, ri));
			}
		}
	}
}

/*
 * Sites (as rules_write() writes them) and then every binding the gate
 * looks up, in precedence order: the content rules and the sites' hosts and
 * docroots, each with its priority and where it was written.
 */
static void
sites(const struct rules *rs, struct buf *b)
{
	struct buf s = { 0 };
	char *line, *save = NULL;
	size_t i;

	write_sites(rs, &s);
	for (line = s.p ? strtok_r(s.p, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "site ", 5) == 0)
			buf_printf(b, "%s\n", line);
	buf_free(&s);
	for (i = 0; i < rs->ncrules; i++) {
		const struct rules_crule *cr = &rs->crules[i];

		buf_printf(b, "content %zu ", i);
		write_crule(rs, b, cr);
		buf_printf(b, " priority %d specificity %d", cr->priority, cr->specificity);
		if (cr->site >= 0)
			buf_printf(b, " site %s", rs->sites[cr->site].hosts[0]);
		buf_printf(b, " at %s:%d:%d\n", cr->loc.file, cr->loc.line, cr->loc.col);
	}
}

/*
 * For small files, what the gate decides by content for a request made of
 * each binding's pattern (a name below a wildcard, a file below a docroot),
 * from an unknown caller and requester: the precedence, visible in tests.
 */
static void
content_decisions(const struct rules *rs, struct buf *b)
{
	size_t i;

	if (rs->nvs > DECISIONS_MAX_VS || rs->ncrules > DECISIONS_MAX_CONTENT)
		return;
	for (i = 0; i < rs->ncrules; i++) {
		const struct rules_crule *cr = &rs->crules[i];
		struct rules_req_attrs a = { NULL, NULL, NULL };
		char v[RULES_KEY_MAX + 8];
		int vs;

		snprintf(v, sizeof(v), "%s%s%s", cr->wild ? "x" : "", cr->pat,
			 cr->attr == RULES_ATTR_DOCROOT ? "/x" : "");
		if (cr->attr == RULES_ATTR_DOCROOT)
			a.docroot = v;
		else
			a.host = v;
		vs = rules_query_attrs(rs, -1, RULES_VS_UNKNOWN, RULES_VS_UNKNOWN, &a);
		buf_printf(b, "decide content %s %s: %s\n", a.host ? "host" : "docroot", v,
			   vs >= 0 ? rs->vs[vs].name : "unknown");
	}
}

void
rules_dump(const struct rules *rs, struct buf *b)
{
	char t[32];
	size_t i;

	buf_printf(b, "# %zu VSs, %zu groups, %zu services, %zu rules", rs->nvs, rs->ngroups,
		   rs->nservices, rs->nrules);
	if (rs->ncrules)
		buf_printf(b, ", %zu sites, %zu content bindings", rs->nsites, rs->ncrules);
	buf_printf(b, "; guaranteed shares %s\n",
		   fmt_percent(rs->total_cpu, t, sizeof(t)));
	for (i = 0; i < rs->ngroups; i++) {
		const struct rules_group *g = &rs->groups[i];

		buf_printf(b, "group %s", g->name);
		limits(b, g->set, g->cpu, g->cpu_max, g->mem_max, g->pids_max);
		buf_printf(b, "\n");
	}
	for (i = 0; i < rs->nvs; i++) {
		const struct rules_vs *v = &rs->vs[i];

		buf_printf(b, "vs %s", v->name);
		if (v->plan[0])
			buf_printf(b, " plan %s", v->plan);
		if (v->group >= 0)
			buf_printf(b, " group %s", rs->groups[v->group].name);
		limits(b, v->set, v->cpu, v->cpu_max, v->mem_max, v->pids_max);
		if (v->set & RULES_SET_TOS)
			buf_printf(b, " tos 0x%02x", v->tos);
		if (v->set & RULES_SET_MARK)
			buf_printf(b, " mark %u", v->mark);
		net_write(v, b);
		write_workers(v, b);
		write_db(v, b);
		buf_printf(b, " priority %u\n", v->priority);
	}
	for (i = 0; i < rs->nservices; i++) {
		const struct rules_service *s = &rs->services[i];

		buf_printf(b, "service %s home %s gate %s ", s->name, rs->vs[s->home].name,
			   rules_gate_name(s->gate));
		write_service_opts(rs, b, s);
		buf_printf(b, "command ");
		buf_json_str(b, s->command);
		buf_printf(b, "\n");
	}
	for (i = 0; i < rs->nremotes; i++) {
		write_remote(rs, b, &rs->remotes[i]);
		buf_printf(b, " at %s:%d:%d\n", rs->remotes[i].loc.file, rs->remotes[i].loc.line,
			   rs->remotes[i].loc.col);
	}
	for (i = 0; i < rs->nrules; i++) {
		const struct rules_rule *r = &rs->rules[i];

		buf_printf(b, "rule %zu ", i);
		write_rule(rs, b, r);
		buf_printf(b, " priority %d specificity %d at %s:%d:%d\n", r->priority,
			   r->specificity, r->loc.file, r->loc.line, r->loc.col);
	}
	sites(rs, b);
	decisions(rs, b);
	content_decisions(rs, b);
}
