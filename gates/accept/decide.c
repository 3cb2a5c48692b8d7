// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The rules the accept gate decides by (vsrules(5)): vsd pushes every
 * supervisor the rules it applied, written by rules_write(), with the VS
 * table, which says their hash ("# rules HASH"); the supervisor loads them
 * with the rules library when the hash changed (at start it asks vsd,
 * "gaterules"). With no rules from
 * vsd the default rule (accept, *, req = *) => (requester) holds.
 *
 * Per accept: one rules_query() walk of the caller's precomputed list, by
 * the indices cached in each gate_vs (a VS the file does not declare is
 * matched by name, one hash lookup more).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decision.h"
#include "gate.h"
#include "lib/buf.h"
#include "lib/log.h"
#include "rules/rules.h"

/* Whether this service's connections wait for their params (hold.c). */
static void
want_attrs(struct gate *g)
{
	unsigned ms = 0;
	int want = 0;

	/* a supervisor started by hand (vsctl run) for a service the file
	 * does not declare: -1, as the interface says */
	g->svc_idx = g->rules && g->svc_name ? rules_service_index(g->rules, g->svc_name) : -1;
	if (g->rules)
		want = rules_wants_attrs(g->rules, g->svc_idx, &ms) == 1;
	g->unclass_idx = g->rules && g->svc_idx >= 0 ?
	    g->rules->services[g->svc_idx].unclassified : -1;
	if (want && (!g->want_attrs || ms != g->attrs_timeout_ms))
		log_info("classification by request params: on, bound %u ms", ms);
	else if (!want && g->want_attrs)
		log_info("classification by request params: off");
	g->want_attrs = want;
	g->attrs_timeout_ms = ms;
}

void
gate_rules_index(struct gate *g)
{
	size_t i;

	free(g->id_of);
	g->id_of = NULL;
	g->nid_of = 0;
	for (i = 0; i < g->tab.n; i++)
		g->tab.v[i].ridx = g->rules ? rules_vs_index(g->rules, g->tab.v[i].name) : -1;
	want_attrs(g);
	dbthreads_sync(g);
	if (!g->rules || !g->rules->nvs || !(g->id_of = calloc(g->rules->nvs, sizeof(*g->id_of))))
		return;
	g->nid_of = g->rules->nvs;
	for (i = 0; i < g->tab.n; i++)
		if (g->tab.v[i].ridx >= 0)
			g->id_of[g->tab.v[i].ridx] = g->tab.v[i].id;
}

void
gate_rules_update(struct gate *g, uint64_t hash, struct rules *rs)
{
	rules_free(g->rules);
	g->rules = rs;
	g->rules_hash = hash;
	gate_rules_index(g);
	trace_rules(g);
	if (rs)
		log_info("rules: %zu VSs, %zu rules (hash %016llx)", rs->nvs, rs->nrules,
			 (unsigned long long)hash);
	else
		log_info("rules: none from vsd; the default (accept, *, req = *) => (requester)");
}

int
gate_rules_load_text(const char *name, const char *text, size_t len, struct rules **rs)
{
	struct buf errs = { 0 };
	int r;

	r = rules_load_buffer(name, text, len, RULES_NO_INCLUDE | RULES_NO_PERM_CHECK, rs, &errs);
	if (r < 0)
		log_warnx("rules from %s refused; keeping the last ones:\n%s", name,
			  errs.p ? errs.p : "");
	buf_free(&errs);
	return r;
}

int
gate_rules_load_vsd(const char *sockpath, struct rules **rs)
{
	struct buf body = { 0 };
	int r;

	if ((r = vsd_call(sockpath, "gaterules", &body)) == 0)
		r = gate_rules_load_text("vsd", body.p ? body.p : "", body.len, rs);
	buf_free(&body);
	return r;
}

int
gate_rules_load_file(const char *path, struct rules **rs)
{
	struct buf errs = { 0 };
	int r;

	/* a file given on our command line, by whoever may start us */
	if ((r = rules_load(path, RULES_NO_PERM_CHECK, rs, &errs)) < 0)
		log_warnx("--rules %s refused:\n%s", path, errs.p ? errs.p : "");
	buf_free(&errs);
	return r;
}

static struct gate_vs *
by_index(struct gate *g, int idx)
{
	struct decision_state s;

	gate_decision_state(g, &s);
	return decide_by_index(&s, idx);
}

struct gate_vs *
gate_unclassified_vs(struct gate *g)
{
	struct gate_vs *v = g->unclass_idx >= 0 ? by_index(g, g->unclass_idx) : NULL;

	/* not named, or a VS of the file that vsd does not have (yet): home */
	return v ? v : vs_table_find(&g->tab, g->home);
}

struct gate_vs *
gate_decide_attrs(struct gate *g, struct gate_vs *req, const struct rules_req_attrs *a)
{
	struct gate_vs *home = vs_table_find(&g->tab, g->home), *t;
	int idx;

	if (!g->rules)
		return NULL;
	idx = rules_query_attrs(g->rules, g->svc_idx, home ? home->ridx : RULES_VS_UNKNOWN, req ? req->ridx : RULES_VS_UNKNOWN, a);
	if (idx == RULES_VS_UNKNOWN)
		return NULL;
	/* a VS of the file that vsd does not have (yet): serve at home */
	return (t = by_index(g, idx)) ? t : home;
}
