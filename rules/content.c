// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Sites and content rules, checked and compiled (vsrules(5), SITES AND
 * CONTENT RULES). Every site binding (its name, each alias, each docroot)
 * becomes a content rule (accept, *, host = H) => (VS), so the gate has one
 * kind of thing to look up: rs->crules in precedence order (priority, then
 * the specificity of the caller and requester patterns, then file order),
 * and a hash from each normalised pattern to its first crule, the others
 * with the same pattern chained (attrs.c's query).
 *
 * Errors, all in the one pass: a host or docroot bound to two VSs (two
 * bindings of one pattern whose caller and requester patterns overlap and
 * are equally specific, whatever the priorities: a provider who binds
 * shop.example twice made a mistake), an undeclared VS, a bad host or path,
 * a content condition on a gate other than accept, a target that is not a
 * VS.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "ctx.h"
#include "names.h"
#include "pat.h"

struct cvec {
	struct rules_crule *v;
	size_t		 n, cap;
	size_t		*seq;		/* file order, parallel to v */
	size_t		 nseq, cseq;
};

/* Choice k of e as a normalised host or docroot; -1 (reported) if bad. */
static int
make_value(struct rules_ctx *c, const struct nexpr *e, size_t k, enum rules_attr attr,
	   char *out, size_t len, int *wild)
{
	const char *why = NULL, *what = attr == RULES_ATTR_HOST ? "host name" : "docroot";
	char name[RULES_KEY_MAX];
	const char *s = name;

	nexpr_name(e, k, name, sizeof(name));
	*wild = 0;
	if (attr == RULES_ATTR_HOST) {
		if (strncmp(name, "*.", 2) == 0) {
			*wild = 1;
			s = name + 2;
		} else if (name[0] == '*') {
			why = "has a '*' that is not a leading '*.'";
		}
		if (!why && strchr(s, '*'))
			why = "has a '*' that is not a leading '*.'";
		if (!why && strchr(s, ':'))
			why = "has a ':' (a port is ignored, not matched: leave it out)";
		/* a wildcard is kept as its suffix: "*.example.com" -> ".example.com" */
		if (!why && *wild)
			out[0] = '.';
		if (!why)
			norm_host(s, out + *wild, len - 1, &why);
	} else if (norm_path(name, out, len, &why) == 0) {
		why = "is '/', which would match every request";
	}
	if (why) {
		if (k == 0 || e->has_group)
			rerr(c, &e->loc, "bad %s '%s': %s", what, name, why);
		return -1;
	}
	return 0;
}

static struct rules_crule *
push(struct rules_ctx *c, struct cvec *v, const struct rules_loc *loc)
{
	struct rules_crule *cr;
	size_t *seq;

	if (v->n >= RULES_CRULES_MAX) {
		rerr(c, loc, "too many site bindings and content rules (more than %d)",
		     RULES_CRULES_MAX);
		return NULL;
	}
	if (!(cr = vec_push(c, &v->v, &v->n, &v->cap, sizeof(*cr))))
		return NULL;
	if (!(seq = vec_push(c, &v->seq, &v->nseq, &v->cseq, sizeof(*seq)))) {
		v->n--;
		return NULL;
	}
	*seq = v->n - 1;
	memset(cr, 0, sizeof(*cr));
	cr->site = -1;
	cr->next = -1;
	cr->loc = *loc;
	return cr;
}

/* A site's binding of one host or docroot to VS vs. */
static int
bind(struct rules_ctx *c, struct cvec *v, int site, enum rules_attr attr,
     const char *pat, int wild, int vs, const struct rules_loc *loc)
{
	struct rules_crule *cr = push(c, v, loc);

	if (!cr)
		return -1;
	cr->attr = attr;
	cr->wild = wild;
	cr->pat = xstrdup(c, pat);
	cr->target = vs;
	cr->site = site;
	cr->priority = (int)c->rs->vs[vs].priority;
	return c->oom ? -1 : 0;
}

static char **
strv_add(struct rules_ctx *c, char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv) {
		c->oom = 1;
		return NULL;
	}
	*v = nv;
	nv[*n] = xstrdup(c, s);
	(*n)++;
	return c->oom ? NULL : nv;
}

static void
site_one(struct rules_ctx *c, struct cvec *v, const struct site_decl *d, size_t k)
{
	struct rules *rs = c->rs;
	struct rules_site *st;
	struct rules_pat vp;
	char val[RULES_KEY_MAX], shown[RULES_KEY_MAX + 1];
	size_t i;
	int wild, bad = 0, si = (int)rs->nsites;

	if (nexpr_pat(c, &d->vs, k, &vp) < 0)
		bad = 1;
	for (i = 0; i < d->nhosts; i++)
		bad |= make_value(c, &d->hosts[i], k, RULES_ATTR_HOST, val, sizeof(val),
				  &wild) < 0;
	for (i = 0; i < d->ndocroots; i++)
		bad |= make_value(c, &d->docroots[i], k, RULES_ATTR_DOCROOT, val, sizeof(val),
				  &wild) < 0;
	if (bad)
		return;
	st = &rs->sites[rs->nsites++];
	st->vs = vp.vs;
	st->loc = d->loc;
	for (i = 0; i < d->nhosts && !c->oom; i++) {
		make_value(c, &d->hosts[i], k, RULES_ATTR_HOST, val, sizeof(val), &wild);
		snprintf(shown, sizeof(shown), "%s%s", wild ? "*" : "", val);
		if (!strv_add(c, &st->hosts, &st->nhosts, shown) ||
		    bind(c, v, si, RULES_ATTR_HOST, val, wild, vp.vs, &d->hosts[i].loc) < 0)
			return;
	}
	for (i = 0; i < d->ndocroots && !c->oom; i++) {
		make_value(c, &d->docroots[i], k, RULES_ATTR_DOCROOT, val, sizeof(val), &wild);
		if (!strv_add(c, &st->docroots, &st->ndocroots, val) ||
		    bind(c, v, si, RULES_ATTR_DOCROOT, val, 0, vp.vs, &d->docroots[i].loc) < 0)
			return;
	}
}

static void
sites(struct rules_ctx *c, struct cvec *v)
{
	size_t i, k, total = 0, *arity = calloc(c->nsites ? c->nsites : 1, sizeof(*arity));

	if (!arity) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < c->nsites; i++) {
		const struct site_decl *d = &c->sites[i];
		const struct nexpr **es = calloc(d->nhosts + d->ndocroots + 1, sizeof(*es));
		size_t m = 0, j;

		if (!es) {
			c->oom = 1;
			goto out;
		}
		for (j = 0; j < d->nhosts; j++)
			es[m++] = &d->hosts[j];
		for (j = 0; j < d->ndocroots; j++)
			es[m++] = &d->docroots[j];
		es[m++] = &d->vs;
		arity[i] = nexpr_arity(c, es, m);
		total += arity[i];
		free(es);
	}
	c->rs->sites = calloc(total ? total : 1, sizeof(*c->rs->sites));
	if (!c->rs->sites) {
		c->oom = 1;
		goto out;
	}
	for (i = 0; i < c->nsites && !c->oom; i++)
		for (k = 0; k < arity[i] && !c->oom; k++)
			site_one(c, v, &c->sites[i], k);
out:
	free(arity);
}

/* One content rule, choice k: (accept, caller[, req = R], host = H) => (VS). */
static void
rule_one(struct rules_ctx *c, struct cvec *v, const struct rule_decl *d, size_t k)
{
	struct rules *rs = c->rs;
	struct rules_pat caller, req, target;
	struct rules_crule *cr;
	char val[RULES_KEY_MAX];
	int wild, bad = 0, p;

	memset(&req, 0, sizeof(req));
	bad |= nexpr_pat(c, &d->caller, k, &caller) < 0;
	if (d->has_req)
		bad |= nexpr_pat(c, &d->req, k, &req) < 0;
	bad |= nexpr_pat(c, &d->target, k, &target) < 0;
	bad |= make_value(c, &d->attr_pat, k, d->attr, val, sizeof(val), &wild) < 0;
	if (bad || !(cr = push(c, v, &d->loc))) {
		pat_free(&caller);
		pat_free(&req);
		return;
	}
	cr->caller = caller;
	cr->req = req;
	cr->has_req = d->has_req;
	cr->attr = d->attr;
	cr->wild = wild;
	cr->pat = xstrdup(c, val);
	cr->target = target.vs;
	cr->priority = pat_priority(rs, &caller);
	if ((p = pat_priority(rs, &req)) > cr->priority)
		cr->priority = p;
	if ((int)rs->vs[target.vs].priority > cr->priority)
		cr->priority = (int)rs->vs[target.vs].priority;
	cr->specificity = pat_specificity(&caller) + pat_specificity(&req);
}

static void
content_rules(struct rules_ctx *c, struct cvec *v)
{
	size_t i, k, n;

	for (i = 0; i < c->nrules && !c->oom; i++) {
		const struct rule_decl *d = &c->rules[i];
		const struct nexpr *es[4];

		if (!d->has_attr || d->gate < 0)
			continue;
		if (d->gate != RULES_GATE_ACCEPT) {
			rerr(c, &d->attr_pat.loc, "a content condition (host = or docroot =) "
			     "needs the accept gate, not %s", rules_gate_name(d->gate));
			continue;
		}
		if (d->target.keyword) {
			rerr(c, &d->target.loc, "a content rule's target must be a VS, not '%s'",
			     d->target.text);
			continue;
		}
		es[0] = &d->caller;
		es[1] = d->has_req ? &d->req : NULL;
		es[2] = &d->attr_pat;
		es[3] = &d->target;
		n = nexpr_arity(c, es, 4);
		for (k = 0; k < n && !c->oom; k++)
			rule_one(c, v, d, k);
	}
}

/* Precedence: priority, specificity, file order (seq: see sort_crules). */
static int
precedence(const void *a, const void *b, void *arg)
{
	const struct cvec *v = arg;
	const struct rules_crule *x = &v->v[*(const size_t *)a], *y = &v->v[*(const size_t *)b];

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->specificity != y->specificity)
		return x->specificity > y->specificity ? -1 : 1;
	return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

struct keyed {
	const struct rules_crule *cr;
	char		*key;
};

static int
by_key(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int r = strcmp(x->key, y->key);

	if (r)
		return r;
	return (x->cr > y->cr) - (x->cr < y->cr);	/* precedence order */
}

static const char *
attr_name(const struct rules_crule *cr)
{
	return cr->attr == RULES_ATTR_HOST ? "host" : "docroot";
}

/*
 * Two bindings of one pattern that can both apply to a request (caller and
 * requester patterns overlap), equally specific, to different VSs: which
 * one wins would hang on priorities or file order; refuse it. Sorting by
 * key makes it O(n log n) for 10,000 sites.
 */
static void
conflicts(struct rules_ctx *c)
{
	struct rules *rs = c->rs;
	struct keyed *kv = calloc(rs->ncrules ? rs->ncrules : 1, sizeof(*kv));
	size_t i, j, end;
	char key[RULES_KEY_MAX];

	if (!kv) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < rs->ncrules; i++) {
		kv[i].cr = &rs->crules[i];
		kv[i].key = xstrdup(c, attr_key(&rs->crules[i], key, sizeof(key)));
		if (c->oom)
			goto out;
	}
	qsort(kv, rs->ncrules, sizeof(*kv), by_key);
	for (i = 0; i < rs->ncrules; i = end) {
		for (end = i + 1; end < rs->ncrules && strcmp(kv[i].key, kv[end].key) == 0; end++)
			;
		for (j = i + 1; j < end; j++) {
			const struct rules_crule *a = kv[i].cr, *b = kv[j].cr, *first = a, *later = b;
			size_t x;

			/* the first earlier binding this one collides with */
			for (x = i; x < j; x++) {
				a = kv[x].cr;
				if (a->target != b->target && a->specificity == b->specificity &&
				    pat_overlap(rs, &a->caller, &b->caller) &&
				    pat_overlap(rs, &a->req, &b->req))
					break;
			}
			if (x == j)
				continue;
			first = a;
			/* report at the one written later in the file */
			if (first->loc.file == later->loc.file &&
			    (first->loc.line > later->loc.line ||
			     (first->loc.line == later->loc.line && first->loc.col > later->loc.col))) {
				first = b;
				later = a;
			}
			rerr(c, &later->loc, "%s '%s%s' is bound to two VSs: '%s' here and '%s' "
			     "at %s:%d:%d", attr_name(b), b->wild ? "*" : "", b->pat,
			     rs->vs[later->target].name, rs->vs[first->target].name,
			     first->loc.file, first->loc.line, first->loc.col);
		}
	}
out:
	for (i = 0; i < rs->ncrules; i++)
		free(kv[i].key);
	free(kv);
}

/* Chain the crules of each pattern, in precedence order, under its key. */
static int
index_crules(struct rules_ctx *c)
{
	struct rules *rs = c->rs;
	int *last = malloc((rs->ncrules ? rs->ncrules : 1) * sizeof(*last));
	char key[RULES_KEY_MAX];
	size_t i;
	int d;

	if (!last || !(rs->attr_keys = names_new())) {
		free(last);
		return -1;
	}
	for (i = 0; i < rs->ncrules; i++) {
		d = names_add(rs->attr_keys, attr_key(&rs->crules[i], key, sizeof(key)), (int)i);
		if (d < -1) {
			free(last);
			return -1;
		}
		if (d >= 0)
			rs->crules[last[d]].next = (int)i;
		last[d >= 0 ? d : (int)i] = (int)i;
	}
	free(last);
	return 0;
}

void
compile_content(struct rules_ctx *c)
{
	struct rules *rs = c->rs;
	struct cvec v = { 0 };
	size_t i, *ord;

	sites(c, &v);
	content_rules(c, &v);
	if (c->oom)
		goto fail;
	ord = v.seq;
	if (v.n)
		qsort_r(ord, v.n, sizeof(*ord), precedence, &v);
	rs->crules = calloc(v.n ? v.n : 1, sizeof(*rs->crules));
	if (!rs->crules)
		goto fail;
	for (i = 0; i < v.n; i++)
		rs->crules[i] = v.v[ord[i]];
	rs->ncrules = v.n;
	/* precedence order: the first has the highest priority */
	rs->crule_max_priority = v.n ? rs->crules[0].priority : 0;
	free(v.v);
	free(v.seq);
	conflicts(c);
	if (!c->oom && index_crules(c) < 0)
		c->oom = 1;
	return;
fail:
	for (i = 0; i < v.n; i++) {
		pat_free(&v.v[i].caller);
		pat_free(&v.v[i].req);
		free(v.v[i].pat);
	}
	free(v.v);
	free(v.seq);
	c->oom = 1;
}
