// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Budgets: the guaranteed shares against the machine (vsd's admission
 * control), and groups. vsd has no nested VSs (every VS is a sibling under
 * vsd's cgroup root), so a group's limits cannot be enforced on the sum of its
 * members at run time; they are enforced here instead, on what the members are
 * given: their shares, memory and pids must fit in the group's, and a member's
 * cap may not exceed the group's (a member without a cap gets the group's).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "ctx.h"

enum { OVER_CPU = 1, OVER_MEM = 2, OVER_PIDS = 4 };

struct gsum {
	unsigned	 cpu;
	uint64_t	 mem, pids;
	unsigned	 over;		/* OVER_*: reported once per group */
};

static void
member(struct rules_ctx *c, struct rules_vs *x, const struct rules_group *g, struct gsum *u)
{
	char a[32], b[32];

	if ((g->set & RULES_SET_CPU) && (x->set & RULES_SET_CPU)) {
		u->cpu += x->cpu;
		if (u->cpu > g->cpu && !(u->over & OVER_CPU)) {
			u->over |= OVER_CPU;
			rerr(c, &x->loc, "group '%s' is over its share: with '%s' its VSs' shares "
			     "sum to %s, its cpu is %s", g->name, x->name,
			     fmt_percent(u->cpu, a, sizeof(a)), fmt_percent(g->cpu, b, sizeof(b)));
		}
	}
	if (g->set & RULES_SET_CPU_MAX) {
		if (!(x->set & RULES_SET_CPU_MAX)) {
			x->set |= RULES_SET_CPU_MAX;
			x->cpu_max = g->cpu_max;
			if ((x->set & RULES_SET_CPU) && x->cpu > x->cpu_max)
				rerr(c, &x->loc, "VS '%s': cpu %s is over its group '%s''s "
				     "cpu-max %s", x->name, fmt_percent(x->cpu, a, sizeof(a)),
				     g->name, fmt_percent(g->cpu_max, b, sizeof(b)));
		} else if (x->cpu_max > g->cpu_max) {
			rerr(c, &x->loc, "VS '%s': cpu-max %s is over its group '%s''s cpu-max %s",
			     x->name, fmt_percent(x->cpu_max, a, sizeof(a)), g->name,
			     fmt_percent(g->cpu_max, b, sizeof(b)));
		}
	}
	if (g->set & RULES_SET_MEM) {
		if (!(x->set & RULES_SET_MEM)) {
			rerr(c, &x->loc, "VS '%s' has no mem limit, but its group '%s' has a "
			     "memory budget (%s): give it one", x->name, g->name,
			     fmt_size(g->mem_max, a, sizeof(a)));
		} else {
			u->mem += x->mem_max;
			if (u->mem > g->mem_max && !(u->over & OVER_MEM)) {
				u->over |= OVER_MEM;
				rerr(c, &x->loc, "group '%s' is over its memory budget: with '%s' "
				     "its VSs' mem sum to %s, its mem is %s", g->name, x->name,
				     fmt_size(u->mem, a, sizeof(a)),
				     fmt_size(g->mem_max, b, sizeof(b)));
			}
		}
	}
	if (g->set & RULES_SET_PIDS) {
		if (!(x->set & RULES_SET_PIDS)) {
			rerr(c, &x->loc, "VS '%s' has no pids limit, but its group '%s' has a "
			     "pids budget (%llu): give it one", x->name, g->name,
			     (unsigned long long)g->pids_max);
		} else {
			u->pids += x->pids_max;
			if (u->pids > g->pids_max && !(u->over & OVER_PIDS)) {
				u->over |= OVER_PIDS;
				rerr(c, &x->loc, "group '%s' is over its pids budget: with '%s' "
				     "its VSs' pids sum to %llu, its pids is %llu", g->name,
				     x->name, (unsigned long long)u->pids,
				     (unsigned long long)g->pids_max);
			}
		}
	}
}

/* Add bp to the machine's total; report once when it goes over 100%. */
static void
machine(struct rules_ctx *c, const struct rules_loc *at, const char *what,
	const char *name, unsigned bp, int *over)
{
	char a[16], b[16], t[16];
	unsigned before = c->rs->total_cpu;

	c->rs->total_cpu += bp;
	if (c->rs->total_cpu > BP_MAX && !*over) {
		*over = 1;
		rerr(c, at, "share sum %s is over 100%%: %s '%s' adds %s to %s",
		     fmt_percent(c->rs->total_cpu, t, sizeof(t)), what, name,
		     fmt_percent(bp, a, sizeof(a)), fmt_percent(before, b, sizeof(b)));
	}
}

void
check_budgets(struct rules_ctx *c)
{
	struct rules *rs = c->rs;
	struct gsum *u = calloc(rs->ngroups ? rs->ngroups : 1, sizeof(*u));
	int over = 0;
	size_t i;

	if (!u) {
		c->oom = 1;
		return;
	}
	rs->total_cpu = 0;
	/* a group with a cpu reserves it for its members, used or not */
	for (i = 0; i < rs->ngroups; i++)
		if (rs->groups[i].set & RULES_SET_CPU)
			machine(c, &rs->groups[i].loc, "group", rs->groups[i].name,
				rs->groups[i].cpu, &over);
	for (i = 0; i < rs->nvs; i++) {
		struct rules_vs *x = &rs->vs[i];
		const struct rules_group *g = x->group >= 0 ? &rs->groups[x->group] : NULL;

		if (g)
			member(c, x, g, &u[x->group]);
		if ((x->set & RULES_SET_CPU) && !(g && (g->set & RULES_SET_CPU)))
			machine(c, &x->loc, "VS", x->name, x->cpu, &over);
	}
	free(u);
}
