// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Gate rules -> concrete rules in precedence order. [a|b] choices are paired
 * by position across caller, requester and target; each pairing becomes one
 * rule. Precedence (vsrules(5), CONFLICTS): the rule naming the VS of highest
 * priority first, then the more specific rule; two rules still tied that can
 * match the same (caller, requester) and decide differently are an error.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "names.h"
#include "pat.h"

struct crule {
	struct rules_rule r;
	size_t		 decl;
	size_t		 seq;
};

struct cvec {
	struct crule	*v;
	size_t		 n, cap;
};

static size_t
arity(struct rules_ctx *c, const struct rule_decl *d)
{
	const struct nexpr *es[3] = {
		&d->caller, d->has_req ? &d->req : NULL, d->target.keyword ? NULL : &d->target,
	};

	return nexpr_arity(c, es, 3);
}

static int
target_ok(struct rules_ctx *c, const struct rule_decl *d)
{
	static const unsigned allowed[RULES_GATE_MAX] = {
		[RULES_GATE_ACCEPT] = 1u << RULES_STAY | 1u << RULES_TO_VS |
				      1u << RULES_TO_REQUESTER | 1u << RULES_TO_HOME,
		[RULES_GATE_SOCKET] = 1u << RULES_TO_VS | 1u << RULES_TO_CREATOR,
		[RULES_GATE_FORK]   = 1u << RULES_TO_VS | 1u << RULES_TO_CREATOR,
	};
	static const char *const hint[RULES_GATE_MAX] = {
		"a VS, requester, home or stay", "a VS or creator", "a VS or creator",
	};
	int ok = 1;

	if (d->gate != RULES_GATE_ACCEPT && d->has_req &&
	    !(d->req.star && !d->req.pre && !d->req.has_group)) {
		rerr(c, &d->req.loc, "the %s gate has no requester: write '*' there or leave "
		     "it out", rules_gate_name(d->gate));
		ok = 0;
	}
	if (d->target.keyword && !(allowed[d->gate] & (1u << (d->target.keyword - 1)))) {
		rerr(c, &d->target.loc, "target '%s' cannot be used with the %s gate "
		     "(expected %s)", d->target.text, rules_gate_name(d->gate),
		     hint[d->gate]);
		ok = 0;
	}
	return ok;
}

static int
expand_rule(struct rules_ctx *c, struct cvec *out, const struct rule_decl *d, size_t di)
{
	struct rules *rs = c->rs;
	size_t n, k;

	/* content rules (host = ..., docroot = ...) are content.c's */
	if (d->has_attr || d->gate < 0 || !target_ok(c, d) || (n = arity(c, d)) == 0)
		return 0;
	for (k = 0; k < n && !c->oom; k++) {
		struct crule cr;
		struct rules_rule *r = &cr.r;
		int bad = 0, p;

		memset(&cr, 0, sizeof(cr));
		r->gate = (enum rules_gate)d->gate;
		r->loc = d->loc;
		bad |= nexpr_pat(c, &d->caller, k, &r->caller) < 0;
		r->has_req = d->has_req;
		if (d->has_req)
			bad |= nexpr_pat(c, &d->req, k, &r->req) < 0;
		if (d->target.keyword) {
			r->action = (enum rules_action)(d->target.keyword - 1);
			r->target = -1;
		} else {
			struct rules_pat t;

			r->action = RULES_TO_VS;
			bad |= nexpr_pat(c, &d->target, k, &t) < 0;
			r->target = t.vs;
		}
		if (bad) {
			pat_free(&r->caller);
			pat_free(&r->req);
			continue;
		}
		if (out->n >= RULES_RULES_MAX) {
			rerr(c, &d->loc, "too many rules (more than %d after expansion)",
			     RULES_RULES_MAX);
			pat_free(&r->caller);
			pat_free(&r->req);
			return -1;
		}
		r->priority = pat_priority(rs, &r->caller);
		if ((p = pat_priority(rs, &r->req)) > r->priority)
			r->priority = p;
		if (r->action == RULES_TO_VS && (int)rs->vs[r->target].priority > r->priority)
			r->priority = (int)rs->vs[r->target].priority;
		r->specificity = pat_specificity(&r->caller) + pat_specificity(&r->req);
		cr.decl = di;
		cr.seq = out->n;
		if (!vec_push(c, &out->v, &out->n, &out->cap, sizeof(cr))) {
			pat_free(&r->caller);
			pat_free(&r->req);
			return -1;
		}
		out->v[out->n - 1] = cr;
	}
	return 0;
}

static int
precedence(const void *a, const void *b)
{
	const struct crule *x = a, *y = b;

	if (x->r.gate != y->r.gate)
		return x->r.gate < y->r.gate ? -1 : 1;
	if (x->r.priority != y->r.priority)
		return x->r.priority > y->r.priority ? -1 : 1;
	if (x->r.specificity != y->r.specificity)
		return x->r.specificity > y->r.specificity ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int
precedence_tie(const struct rules_rule *a, const struct rules_rule *b)
{
	return a->gate == b->gate && a->priority == b->priority &&
	    a->specificity == b->specificity;
}

static int
same_outcome(const struct rules_rule *a, const struct rules_rule *b)
{
	return a->action == b->action && (a->action != RULES_TO_VS || a->target == b->target);
}

static void
conflicts(struct rules_ctx *c, struct cvec *v)
{
	struct rules *rs = c->rs;
	struct rules_names *seen = names_new();
	size_t i, j, x, end;

	if (!seen) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < v->n; i = end) {
		for (end = i + 1; end < v->n && precedence_tie(&v->v[i].r, &v->v[end].r); end++)
			;
		for (x = i; x < end; x++) {
			for (j = x + 1; j < end; j++) {
				const struct rules_rule *a = &v->v[x].r, *b = &v->v[j].r;
				const struct rules_rule *later = b, *first = a;
				char key[64], w1[64], w2[64];

				if (!pat_overlap(rs, &a->caller, &b->caller) ||
				    !pat_overlap(rs, &a->req, &b->req) || same_outcome(a, b))
					continue;
				snprintf(key, sizeof(key), "%zu:%zu", v->v[x].decl, v->v[j].decl);
				if (names_add(seen, key, 0) != -1)
					continue;
				rerr(c, &later->loc, "rule ties with the rule at %s:%d:%d: both match "
				     "(%s, %s, req = %s) with equal priority (%d) and specificity "
				     "(%d) but decide differently; give one VS a higher priority "
				     "or make one rule more specific", first->loc.file,
				     first->loc.line, first->loc.col, rules_gate_name(a->gate),
				     pat_witness(rs, &a->caller, &b->caller, w1, sizeof(w1)),
				     pat_witness(rs, &a->req, &b->req, w2, sizeof(w2)),
				     a->priority, a->specificity);
			}
		}
	}
	names_free(seen);
}

static int
by_name(const void *a, const void *b, void *arg)
{
	const struct rules *rs = arg;

	return strcmp(rs->vs[*(const int *)a].name, rs->vs[*(const int *)b].name);
}

/* The first position in rs->sorted whose name is >= prefix. */
static size_t
lower_bound(const struct rules *rs, const char *prefix)
{
	size_t lo = 0, hi = rs->nvs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(rs->vs[rs->sorted[mid]].name, prefix) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Calls fn for every VS the caller pattern of rule k names: one for an exact
 * name, a contiguous range of rs->sorted for a prefix. '*' goes to the
 * wildcard list, not to every VS, so the tables stay O(rules + matches).
 */
static void
for_callers(struct rules *rs, size_t k, void (*fn)(struct rules *, int, size_t, void *),
	    void *arg)
{
	const struct rules_rule *r = &rs->rules[k];
	size_t i;

	switch (r->caller.kind) {
	case RULES_PAT_VS:
		fn(rs, r->caller.vs, k, arg);
		break;
	case RULES_PAT_ANY:
		fn(rs, (int)rs->nvs, k, arg);
		break;
	case RULES_PAT_PREFIX:
		for (i = lower_bound(rs, r->caller.prefix); i < rs->nvs; i++) {
			if (strncmp(rs->vs[rs->sorted[i]].name, r->caller.prefix, r->caller.plen))
				break;
			fn(rs, rs->sorted[i], k, arg);
		}
		break;
	}
}

struct count {
	enum rules_gate	 g;
	size_t		 total;
};

static void
count_one(struct rules *rs, int vs, size_t k, void *arg)
{
	struct count *ct = arg;

	rs->by_caller[ct->g][vs].n++;
	ct->total++;
}

static void
fill_one(struct rules *rs, int vs, size_t k, void *arg)
{
	enum rules_gate *g = arg;
	struct rules_list *l = &rs->by_caller[*g][vs];

	l->idx[l->n++] = (int)k;
}

static int
by_req_rule(const void *a, const void *b)
{
	const struct rules_req_rule *x = a, *y = b;

	if (x->req != y->req)
		return x->req < y->req ? -1 : 1;
	return (x->rule > y->rule) - (x->rule < y->rule);
}

/* Split a list into its exact-requester index and the rest (see rules.h). */
static int
split_list(struct rules *rs, struct rules_list *l)
{
	size_t i;

	if (!l->n)
		return 0;
	if (!(l->byreq = malloc(l->n * sizeof(*l->byreq))) ||
	    !(l->rest = malloc(l->n * sizeof(*l->rest))))
		return -1;
	for (i = 0; i < l->n; i++) {
		const struct rules_rule *r = &rs->rules[l->idx[i]];

		if (r->has_req && r->req.kind == RULES_PAT_VS)
			l->byreq[l->nbyreq++] = (struct rules_req_rule){ r->req.vs, l->idx[i] };
		else
			l->rest[l->nrest++] = l->idx[i];
	}
	qsort(l->byreq, l->nbyreq, sizeof(*l->byreq), by_req_rule);
	return 0;
}

static int
build_tables(struct rules_ctx *c)
{
	struct rules *rs = c->rs;
	struct count ct = { 0 };
	size_t i, k;

	rs->sorted = calloc(rs->nvs ? rs->nvs : 1, sizeof(*rs->sorted));
	if (!rs->sorted)
		return -1;
	for (i = 0; i < rs->nvs; i++)
		rs->sorted[i] = (int)i;
	qsort_r(rs->sorted, rs->nvs, sizeof(*rs->sorted), by_name, rs);
	for (ct.g = 0; ct.g < RULES_GATE_MAX; ct.g++) {
		enum rules_gate g = ct.g;

		rs->by_caller[g] = calloc(rs->nvs + 1, sizeof(struct rules_list));
		if (!rs->by_caller[g])
			return -1;
		for (k = rs->gate_first[g]; k < rs->gate_first[g + 1]; k++) {
			for_callers(rs, k, count_one, &ct);
			if (ct.total > RULES_INDEX_MAX) {
				rerr(c, &rs->rules[k].loc, "the rules match too many VSs to index "
				     "(more than %u entries)", RULES_INDEX_MAX);
				return 0;
			}
		}
		for (i = 0; i <= rs->nvs; i++) {
			struct rules_list *l = &rs->by_caller[g][i];

			if (l->n && !(l->idx = malloc(l->n * sizeof(*l->idx))))
				return -1;
			l->n = 0;
		}
		for (k = rs->gate_first[g]; k < rs->gate_first[g + 1]; k++)
			for_callers(rs, k, fill_one, &g);
		for (i = 0; i <= rs->nvs; i++)
			if (split_list(rs, &rs->by_caller[g][i]) < 0)
				return -1;
	}
	return 0;
}

void
compile_rules(struct rules_ctx *c)
{
	struct rules *rs = c->rs;
	struct cvec v = { 0 };
	size_t i, g;

	for (i = 0; i < c->nrules && !c->oom; i++)
		if (expand_rule(c, &v, &c->rules[i], i) < 0)
			break;
	/* a file without rules leaves v.v NULL: qsort's pointer is nonnull */
	if (v.n)
		qsort(v.v, v.n, sizeof(*v.v), precedence);
	conflicts(c, &v);
	rs->rules = calloc(v.n ? v.n : 1, sizeof(*rs->rules));
	if (!rs->rules) {
		c->oom = 1;
		for (i = 0; i < v.n; i++) {
			pat_free(&v.v[i].r.caller);
			pat_free(&v.v[i].r.req);
		}
		free(v.v);
		return;
	}
	for (i = 0; i < v.n; i++)
		rs->rules[i] = v.v[i].r;
	rs->nrules = v.n;
	free(v.v);
	for (g = 0, i = 0; g <= RULES_GATE_MAX; g++) {
		while (i < rs->nrules && rs->rules[i].gate < g)
			i++;
		rs->gate_first[g] = g == RULES_GATE_MAX ? rs->nrules : i;
	}
	if (c->nerr == 0 && build_tables(c) < 0)
		c->oom = 1;
}
