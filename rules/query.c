// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The gates' question: a caller in VS c gets a request from VS r through gate
 * g; where should it run? Called on every accept: the first rule, in
 * precedence order, of the caller's precomputed list and the '*' list
 * (compile.c) whose requester pattern matches wins (check time made sure a
 * tie cannot decide differently). Rules for one exact requester are found by
 * binary search in each list's index; only the others (no condition, '*', a
 * prefix; a handful in practice) are walked.
 */
#include "config.h"

#include <string.h>

#include "names.h"
#include "pat.h"
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

/* The first rule (lowest index) of l's exact-requester index for ri, or -1. */
static int
first_exact(const struct rules_list *l, int ri)
{
	size_t lo = 0, hi = l->nbyreq;

	if (ri < 0)
		return -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->byreq[mid].req < ri)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->nbyreq && l->byreq[lo].req == ri ? l->byreq[lo].rule : -1;
}

/* The first rule of a's and w's other rules (merged in precedence order)
 * whose requester pattern matches, or -1. */
static int
first_rest(const struct rules *rs, const struct rules_list *a, const struct rules_list *w,
	   int ri, const char *rname)
{
	size_t i = 0, j = 0, k;

	while (i < a->nrest || j < w->nrest) {
		if (j >= w->nrest || (i < a->nrest && a->rest[i] < w->rest[j]))
			k = (size_t)a->rest[i++];
		else
			k = (size_t)w->rest[j++];
		if (pat_match(rs, &rs->rules[k].req, ri, rname))
			return (int)k;
	}
	return -1;
}

static struct rules_decision
query(const struct rules *rs, enum rules_gate g, int ci, const char *cname, int ri,
      const char *rname)
{
	/* the paper's default rules: (accept, *, req = *) => (requester),
	 * (socket, *) => (creator), (fork, *) => (creator) */
	struct rules_decision none = { RULES_TO_REQUESTER, ri, -1 };
	static const struct rules_list empty;
	size_t k;

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
		int best = first_rest(rs, a, w, ri, rname), e;

		/* a rule for this very requester may come earlier */
		if ((e = first_exact(a, ri)) >= 0 && (best < 0 || e < best))
			best = e;
		if ((e = first_exact(w, ri)) >= 0 && (best < 0 || e < best))
			best = e;
		if (best >= 0)
			return decide(rs, (size_t)best, ci, ri, rname);
	} else if (cname) {
		/* a VS the file does not declare: match it by name */
		for (k = rs->gate_first[g]; k < rs->gate_first[g + 1]; k++)
			if (pat_match(rs, &rs->rules[k].caller, -1, cname) &&
			    pat_match(rs, &rs->rules[k].req, ri, rname))
				return decide(rs, k, -1, ri, rname);
	} else {
		const struct rules_list *w = &rs->by_caller[g][rs->nvs];
		int best = first_rest(rs, &empty, w, ri, rname), e;

		if ((e = first_exact(w, ri)) >= 0 && (best < 0 || e < best))
			best = e;
		if (best >= 0)
			return decide(rs, (size_t)best, -1, ri, rname);
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
