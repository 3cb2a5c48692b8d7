// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The gates' question: a caller in VS c gets a request from VS r through gate
 * g; where should it run? Called on every accept, so it only walks the
 * caller's precomputed rule list (compile.c) merged with the '*' list; the
 * first rule whose requester pattern matches wins (lists are in precedence
 * order, and check time made sure a tie cannot decide differently).
 */
#include "config.h"

#include <string.h>

#include "names.h"
#include "rules.h"

int
rules_vs_index(const struct rules *rs, const char *name)
{
	return names_get(rs->vs_names, name);
}

int
rules_service_index(const struct rules *rs, const char *name)
{
	return names_get(rs->svc_names, name);
}

static int
pat_match(const struct rules *rs, const struct rules_pat *p, int idx, const char *name)
{
	switch (p->kind) {
	case RULES_PAT_ANY:
		return 1;
	case RULES_PAT_VS:
		return idx >= 0 && idx == p->vs;
	case RULES_PAT_PREFIX:
		if (idx >= 0)
			name = rs->vs[idx].name;
		return name && strncmp(name, p->prefix, p->plen) == 0;
	}
	return 0;
}

static struct rules_decision
decide(const struct rules *rs, size_t k, int ci, int ri, const char *rname)
{
	const struct rules_rule *r = &rs->rules[k];
	struct rules_decision d = { r->action, -1, (int)k };

	switch (r->action) {
	case RULES_TO_VS:
		d.vs = r->target;
		break;
	case RULES_STAY:
		d.vs = ci;
		break;
	case RULES_TO_REQUESTER:
		d.vs = ri;
		/* nobody to rebind to: an unclassified connection is served at home */
		if (ri < 0 && !rname)
			d.action = RULES_TO_HOME;
		break;
	default:
		break;
	}
	return d;
}

static struct rules_decision
query(const struct rules *rs, enum rules_gate g, int ci, const char *cname, int ri,
      const char *rname)
{
	/* the paper's default rules: (accept, *, req = *) => (requester),
	 * (socket, *) => (creator), (fork, *) => (creator) */
	struct rules_decision none = { RULES_TO_REQUESTER, ri, -1 };
	size_t i = 0, j = 0, k;

	if ((unsigned)g >= RULES_GATE_MAX)
		return (struct rules_decision){ RULES_STAY, ci, -1 };
	if (g != RULES_GATE_ACCEPT) {
		none.action = RULES_TO_CREATOR;
		none.vs = -1;
	} else if (ri < 0 && !rname) {
		none.action = RULES_TO_HOME;	/* nobody to rebind to */
	}
	if (ci >= 0 && (size_t)ci < rs->nvs) {
		const struct rules_list *a = &rs->by_caller[g][ci];
		const struct rules_list *w = &rs->by_caller[g][rs->nvs];

		while (i < a->n || j < w->n) {
			if (j >= w->n || (i < a->n && a->idx[i] < w->idx[j]))
				k = (size_t)a->idx[i++];
			else
				k = (size_t)w->idx[j++];
			if (pat_match(rs, &rs->rules[k].req, ri, rname))
				return decide(rs, k, ci, ri, rname);
		}
	} else if (cname) {
		/* a VS the file does not declare: match it by name */
		for (k = rs->gate_first[g]; k < rs->gate_first[g + 1]; k++)
			if (pat_match(rs, &rs->rules[k].caller, -1, cname) &&
			    pat_match(rs, &rs->rules[k].req, ri, rname))
				return decide(rs, k, -1, ri, rname);
	} else {
		const struct rules_list *w = &rs->by_caller[g][rs->nvs];

		for (j = 0; j < w->n; j++)
			if (pat_match(rs, &rs->rules[w->idx[j]].req, ri, rname))
				return decide(rs, (size_t)w->idx[j], -1, ri, rname);
	}
	return none;
}

struct rules_decision
rules_query(const struct rules *rs, enum rules_gate gate, int caller, int req)
{
	if (caller >= 0 && (size_t)caller >= rs->nvs)
		caller = RULES_VS_UNKNOWN;
	if (req >= 0 && (size_t)req >= rs->nvs)
		req = RULES_VS_UNKNOWN;
	return query(rs, gate, caller, NULL, req, NULL);
}

struct rules_decision
rules_query_name(const struct rules *rs, enum rules_gate gate, const char *caller,
		 const char *req)
{
	int ci = caller ? rules_vs_index(rs, caller) : -1;
	int ri = req ? rules_vs_index(rs, req) : -1;

	return query(rs, gate, ci, caller, ri, req);
}
