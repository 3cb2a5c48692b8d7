// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Semantic checks of the declarations and their translation into the
 * compiled struct rules: plans (and plans based on plans), groups, VSs,
 * services. Admission control is the one vsd applies: the guaranteed shares
 * must not add up to more than 100%.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "lib/privs.h"
#include "names.h"
#include "net.h"

static void
overlay(struct rules_ctx *c, struct settings *d, const struct settings *s)
{
	int b;

	for (b = 0; b < SB_MAX; b++)
		if (s->set & (1u << b))
			d->at[b] = s->at[b];
	if (s->set & RULES_SET_CPU)
		d->cpu = s->cpu;
	if (s->set & RULES_SET_CPU_MAX)
		d->cpu_max = s->cpu_max;
	if (s->set & RULES_SET_MEM)
		d->mem = s->mem;
	if (s->set & RULES_SET_PIDS)
		d->pids = s->pids;
	if (s->set & RULES_SET_TOS)
		d->tos = s->tos;
	if (s->set & RULES_SET_MARK)
		d->mark = s->mark;
	if (s->set & RULES_SET_PRIORITY)
		d->priority = s->priority;
	if (s->set & RULES_SET_WORKERS) {
		d->workers_n = s->workers_n;
		d->workers_bp = s->workers_bp;
	}
	if (s->set & RULES_SET_DB_CPU)
		d->db_cpu = s->db_cpu;
	if (s->set & RULES_SET_DB_BURST)
		d->db_burst_ms = s->db_burst_ms;
	net_overlay(d, s);
	d->set |= s->set;
	if (s->group) {
		free(d->group);
		d->group = xstrdup(c, s->group);
		d->group_at = s->group_at;
	}
}

static int
resolve_plan(struct rules_ctx *c, struct rules_names *plans, size_t i, int depth)
{
	struct plan_decl *pl = &c->plans[i];
	int j;

	if (pl->state == 2)
		return 0;
	if (pl->state == 1) {
		rerr(c, &pl->s.plan_at, "plan '%s' is based on itself (through plan '%s')",
		     pl->name, pl->s.plan);
		pl->state = 3;
		return -1;
	}
	if (pl->state == 3)
		return -1;
	pl->state = 1;
	if (pl->s.plan && depth >= RULES_PLAN_DEPTH) {
		rerr(c, &pl->s.plan_at, "plans are based on plans more than %d deep",
		     RULES_PLAN_DEPTH);
		pl->state = 3;
		return -1;
	}
	if (pl->s.plan) {
		j = names_get(plans, pl->s.plan);
		if (j < 0) {
			rerr(c, &pl->s.plan_at, "unknown plan '%s'", pl->s.plan);
		} else if (resolve_plan(c, plans, (size_t)j, depth + 1) < 0) {
			pl->state = 3;
			return -1;
		} else {
			overlay(c, &pl->eff, &c->plans[j].eff);
		}
	}
	overlay(c, &pl->eff, &pl->s);
	pl->state = 2;
	return 0;
}

static struct rules_names *
check_plans(struct rules_ctx *c)
{
	struct rules_names *h = names_new();
	size_t i;
	int d;

	if (!h) {
		c->oom = 1;
		return NULL;
	}
	for (i = 0; i < c->nplans; i++) {
		d = names_add(h, c->plans[i].name, (int)i);
		if (d >= 0)
			rerr(c, &c->plans[i].loc, "duplicate plan '%s' (first defined at %s:%d:%d)",
			     c->plans[i].name, c->plans[d].loc.file, c->plans[d].loc.line,
			     c->plans[d].loc.col);
		else if (d < -1)
			c->oom = 1;
	}
	for (i = 0; i < c->nplans; i++)
		resolve_plan(c, h, i, 0);
	return h;
}

static struct rules_names *
check_groups(struct rules_ctx *c)
{
	struct rules *rs = c->rs;
	struct rules_names *h = names_new();
	size_t i;
	int d;

	rs->groups = calloc(c->ngroups ? c->ngroups : 1, sizeof(*rs->groups));
	if (!h || !rs->groups) {
		names_free(h);
		c->oom = 1;
		return NULL;
	}
	for (i = 0; i < c->ngroups; i++) {
		struct group_decl *g = &c->groups[i];
		struct rules_group *rg;

		d = names_add(h, g->name, (int)rs->ngroups);
		if (d >= 0) {
			rerr(c, &g->loc, "duplicate group '%s' (first defined at %s:%d:%d)",
			     g->name, rs->groups[d].loc.file, rs->groups[d].loc.line,
			     rs->groups[d].loc.col);
			continue;
		}
		rg = &rs->groups[rs->ngroups++];
		snprintf(rg->name, sizeof(rg->name), "%s", g->name);
		rg->set = g->s.set;
		rg->cpu = g->s.cpu;
		rg->cpu_max = g->s.cpu_max;
		rg->mem_max = g->s.mem;
		rg->pids_max = g->s.pids;
		rg->loc = g->loc;
		if ((rg->set & RULES_SET_CPU) && (rg->set & RULES_SET_CPU_MAX) &&
		    rg->cpu_max < rg->cpu) {
			char a[16], b[16];

			rerr(c, &g->s.at[SB_CPU_MAX], "cpu-max %s is below the guaranteed share "
			     "cpu %s", fmt_percent(rg->cpu_max, a, sizeof(a)),
			     fmt_percent(rg->cpu, b, sizeof(b)));
		}
	}
	return h;
}

static void
add_vs(struct rules_ctx *c, struct rules_names *plans, struct rules_names *groups,
       struct vs_decl *v)
{
	struct rules *rs = c->rs;
	struct settings eff;
	struct rules_vs *x;
	int d, j;

	memset(&eff, 0, sizeof(eff));
	if (v->s.plan) {
		j = names_get(plans, v->s.plan);
		if (j < 0) {
			rerr(c, &v->s.plan_at, "unknown plan '%s'", v->s.plan);
			v->bad = 1;
		} else if (c->plans[j].state == 2) {
			overlay(c, &eff, &c->plans[j].eff);
		} else {
			v->bad = 1;
		}
	}
	overlay(c, &eff, &v->s);
	d = names_add(rs->vs_names, v->name, (int)rs->nvs);
	if (d >= 0) {
		rerr(c, &v->loc, "duplicate VS '%s' (first declared at %s:%d:%d)", v->name,
		     rs->vs[d].loc.file, rs->vs[d].loc.line, rs->vs[d].loc.col);
		goto out;
	}
	if (d < -1) {
		c->oom = 1;
		goto out;
	}
	x = &rs->vs[rs->nvs++];
	snprintf(x->name, sizeof(x->name), "%s", v->name);
	x->set = eff.set;
	x->cpu = eff.cpu;
	x->cpu_max = eff.cpu_max;
	x->mem_max = eff.mem;
	x->pids_max = eff.pids;
	x->tos = eff.tos;
	x->mark = eff.mark;
	x->priority = eff.priority;
	x->workers_n = eff.workers_n;
	x->workers_bp = eff.workers_bp;
	x->db_cpu = eff.db_cpu;
	x->db_burst_ms = eff.db_burst_ms;
	/* the kernel's burst is banked quota: without a cap there is none */
	if ((eff.set & RULES_SET_DB_BURST) && !(eff.set & RULES_SET_DB_CPU))
		rerr(c, &eff.at[SB_DB_BURST], "VS '%s': db-burst needs db-cpu (a burst is "
		     "above a cap)", v->name);
	x->loc = v->loc;
	net_compile(c, x, &eff);
	x->group = -1;
	if (v->s.plan && (j = names_get(plans, v->s.plan)) >= 0)
		snprintf(x->plan, sizeof(x->plan), "%s", c->plans[j].name);
	if (eff.group) {
		x->group = names_get(groups, eff.group);
		if (x->group < 0)
			rerr(c, &eff.group_at, "unknown group '%s'", eff.group);
	}
	/* as vsctl create --cpu: every VS has a guaranteed share */
	if (!(x->set & RULES_SET_CPU) && !v->bad)
		rerr(c, &v->loc, "VS '%s' has no guaranteed share: give it cpu P%% "
		     "(or a plan with one)", x->name);
	if ((x->set & RULES_SET_CPU) && (x->set & RULES_SET_CPU_MAX) && x->cpu_max < x->cpu) {
		char a[16], b[16];

		rerr(c, &eff.at[SB_CPU_MAX], "VS '%s': cpu-max %s is below its guaranteed "
		     "share cpu %s", x->name, fmt_percent(x->cpu_max, a, sizeof(a)),
		     fmt_percent(x->cpu, b, sizeof(b)));
	}
out:
	settings_free(&eff);
}

/*
 * The user and group a service runs as must exist here and now: at check
 * time on the machine that checks, at apply time on vsd's (an unknown user
 * refuses the whole file, so nothing changes).
 */
static void
check_service_user(struct rules_ctx *c, const struct svc_decl *sv, struct rules_service *x)
{
	struct privs_user pu;
	char err[256];

	if (sv->group && !sv->user) {
		rerr(c, &sv->group_at, "service '%s': group needs user (user NAME group NAME)",
		     sv->name);
		return;
	}
	if (!sv->user)
		return;
	if (privs_resolve(sv->user, NULL, &pu, err, sizeof(err)) < 0) {
		rerr(c, &sv->user_at, "service '%s': %s", sv->name, err);
		return;
	}
	if (sv->group && privs_resolve(sv->user, sv->group, &pu, err, sizeof(err)) < 0) {
		rerr(c, &sv->group_at, "service '%s': %s", sv->name, err);
		return;
	}
	x->user = xstrdup(c, sv->user);
	if (sv->group)
		x->group = xstrdup(c, sv->group);
}

static void
check_services(struct rules_ctx *c)
{
	struct rules *rs = c->rs;
	size_t i;
	int d;

	rs->services = calloc(c->nsvcs ? c->nsvcs : 1, sizeof(*rs->services));
	if (!rs->services) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < c->nsvcs; i++) {
		struct svc_decl *sv = &c->svcs[i];
		struct rules_service *x;

		d = names_add(rs->svc_names, sv->name, (int)rs->nservices);
		if (d >= 0) {
			rerr(c, &sv->loc, "duplicate service '%s' (first declared at %s:%d:%d)",
			     sv->name, rs->services[d].loc.file, rs->services[d].loc.line,
			     rs->services[d].loc.col);
			continue;
		}
		x = &rs->services[rs->nservices++];
		snprintf(x->name, sizeof(x->name), "%s", sv->name);
		x->loc = sv->loc;
		x->gate = RULES_GATE_ACCEPT;
		x->home = -1;
		x->unclassified = -1;
		x->attrs_timeout_ms = sv->attrs_timeout_ms;
		x->proto = sv->proto >= 0 ? (enum rules_proto)sv->proto : RULES_PROTO_FASTCGI;
		if (!sv->home)
			rerr(c, &sv->loc, "service '%s' needs a home VS (home NAME)", sv->name);
		else if ((x->home = names_get(rs->vs_names, sv->home)) < 0)
			rerr(c, &sv->home_at, "undeclared VS '%s'", sv->home);
		if (sv->unclassified &&
		    (x->unclassified = names_get(rs->vs_names, sv->unclassified)) < 0)
			rerr(c, &sv->unclassified_at, "undeclared VS '%s'", sv->unclassified);
		if (sv->gate >= 0 && sv->gate != RULES_GATE_ACCEPT)
			rerr(c, &sv->gate_at, "a service runs under the accept gate, not '%s'",
			     rules_gate_name(sv->gate));
		if (!sv->command)
			rerr(c, &sv->loc, "service '%s' needs a command (command \"...\")",
			     sv->name);
		else
			x->command = xstrdup(c, sv->command);
		check_service_user(c, sv, x);
	}
}

void
check_decls(struct rules_ctx *c)
{
	struct rules *rs = c->rs;
	struct rules_names *plans, *groups;
	size_t i;

	plans = check_plans(c);
	groups = check_groups(c);
	rs->vs = calloc(c->nvss ? c->nvss : 1, sizeof(*rs->vs));
	if (!plans || !groups || !rs->vs) {
		c->oom = 1;
		goto out;
	}
	for (i = 0; i < c->nvss && !c->oom; i++)
		add_vs(c, plans, groups, &c->vss[i]);
	check_budgets(c);
	net_check_budgets(c);
	check_services(c);
out:
	names_free(plans);
	names_free(groups);
}
