// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Declarations: vs, plan, group, service. Each is a keyword, a name and
 * settings "key value", on the line or in a { } block that may span lines.
 * Values are parsed with libvsd's parsers, so "cpu 50%" here means exactly
 * what "vsctl create --cpu 50%" means.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "ctx.h"
#include "lib/privs.h"
#include "lex.h"
#include "net.h"
#include "parse.h"

#define PIDS_MAX	4194304		/* the kernel's PID_MAX_LIMIT on 64-bit */
#define PRIORITY_MAX	1000

enum keyid {
	K_CPU = SB_CPU, K_CPU_MAX = SB_CPU_MAX, K_MEM = SB_MEM, K_PIDS = SB_PIDS,
	K_TOS = SB_TOS, K_MARK = SB_MARK, K_PRIORITY = SB_PRIORITY,
	K_NET_SHARE = SB_NET_SHARE, K_NET_MAX = SB_NET_MAX, K_DEV = SB_DEV, K_DEV_RATE = SB_DEV_RATE,
	K_WORKERS = SB_WORKERS, K_DB_CPU = SB_DB_CPU, K_DB_BURST = SB_DB_BURST,
	K_DSCP = SB_MAX, K_PLAN, K_GROUP, K_HOME, K_GATE, K_COMMAND, K_USER, K_UGROUP,
	K_ATTRS_TIMEOUT,
	K_UNCLASSIFIED,
	K_PROTOCOL,
};

enum where { W_VS = 1, W_PLAN = 2, W_GROUP = 4, W_SVC = 8 };

static const struct key {
	const char	*name;
	enum keyid	 k;
	unsigned	 where;
} keys[] = {
	{ "cpu",	K_CPU,		W_VS | W_PLAN | W_GROUP },
	{ "cpu-max",	K_CPU_MAX,	W_VS | W_PLAN | W_GROUP },
	{ "mem",	K_MEM,		W_VS | W_PLAN | W_GROUP },
	{ "pids",	K_PIDS,		W_VS | W_PLAN | W_GROUP },
	{ "tos",	K_TOS,		W_VS | W_PLAN },
	{ "dscp",	K_DSCP,		W_VS | W_PLAN },
	{ "mark",	K_MARK,		W_VS | W_PLAN },
	{ "priority",	K_PRIORITY,	W_VS | W_PLAN },
	/* the network share (rules/net.c) */
	{ "net-share",	K_NET_SHARE,	W_VS | W_PLAN },
	{ "net-max",	K_NET_MAX,	W_VS | W_PLAN },
	{ "dev",	K_DEV,		W_VS | W_PLAN },
	{ "dev-rate",	K_DEV_RATE,	W_VS | W_PLAN },
	/* its hold on a gated pool's workers (gates/accept/workers.c) */
	{ "workers",	K_WORKERS,	W_VS | W_PLAN },
	/* a cap on its database CPU, and a burst above it (gates/accept/dbcap.c) */
	{ "db-cpu",	K_DB_CPU,	W_VS | W_PLAN },
	{ "db-burst",	K_DB_BURST,	W_VS | W_PLAN },
	{ "plan",	K_PLAN,		W_VS | W_PLAN },
	{ "group",	K_GROUP,	W_VS | W_PLAN },
	{ "home",	K_HOME,		W_SVC },
	{ "gate",	K_GATE,		W_SVC },
	{ "command",	K_COMMAND,	W_SVC },
	{ "user",	K_USER,		W_SVC },
	/* a service's group is the Unix group it runs with, not a VS group */
	{ "group",	K_UGROUP,	W_SVC },
	/* how long its gate waits for a request's params (parse-site.c's syntax) */
	{ "attrs-timeout", K_ATTRS_TIMEOUT, W_SVC },
	{ "unclassified", K_UNCLASSIFIED, W_SVC },
	{ "protocol",	K_PROTOCOL,	W_SVC },
};

#define WORKERS_MAX	65535

/* "workers N" (1-65535) or "workers P%" (of the pool the gate sees) */
static int
parse_workers(const char *text, struct settings *s, const char **why)
{
	size_t n = strlen(text);
	uint64_t u;
	int r;

	s->workers_n = s->workers_bp = 0;
	if (n > 0 && text[n - 1] == '%')
		return parse_percent(text, &s->workers_bp, why);
	if ((r = parse_u64(text, 1, WORKERS_MAX, &u, why)) == 0)
		s->workers_n = (unsigned)u;
	else if (*why && strcmp(*why, "is out of range") == 0)
		*why = "is out of range (1-65535, or a percentage)";
	return r;
}

struct target {
	enum where	 where;
	struct settings	*s;
	struct svc_decl	*svc;
	unsigned	 seen;		/* 1u << enum key */
};

static const char *
where_name(enum where w)
{
	switch (w) {
	case W_VS:	return "a VS";
	case W_PLAN:	return "a plan";
	case W_GROUP:	return "a group";
	default:	return "a service";
	}
}

static void
set_name(struct parser *p, const struct tok *v, const char *what, char **dst,
	 struct rules_loc *at)
{
	const char *why = vs_name_why(v->text);

	if (why) {
		perr(p, v, "invalid %s name '%s': %s", what, v->text, why);
		return;
	}
	free(*dst);
	*dst = xstrdup(p->c, v->text);
	if (at)
		*at = loc_of(p, v);
}

static void
apply(struct parser *p, struct target *d, const struct key *k, const struct tok *kt,
      const struct tok *v)
{
	struct settings *s = d->s;
	const char *why = NULL;
	uint64_t u = 0;
	int r = 0, bit = k->k == K_DSCP ? SB_TOS : (int)k->k;
	unsigned seen = 1u << k->k;

	if (k->k == K_TOS || k->k == K_DSCP)
		seen = (1u << K_TOS) | (1u << K_DSCP);
	if (d->seen & seen) {
		if (k->k == K_TOS || k->k == K_DSCP)
			perr(p, kt, "'%s': tos and dscp both set the TOS byte; give only one of them",
			     k->name);
		else
			perr(p, kt, "duplicate setting '%s'", k->name);
		return;
	}
	d->seen |= seen;
	switch (k->k) {
	case K_CPU:	 r = parse_percent(v->text, &s->cpu, &why); break;
	case K_CPU_MAX:	 r = parse_percent(v->text, &s->cpu_max, &why); break;
	case K_MEM:
		r = parse_size(v->text, &s->mem, &why);
		if (r == 0 && s->mem < 4096) {	/* as vsd: below a page is no limit */
			r = -ERANGE;
			why = "is below one page (4K)";
		}
		break;
	case K_PIDS:	 r = parse_u64(v->text, 1, PIDS_MAX, &s->pids, &why); break;
	case K_TOS:	 r = parse_tos(v->text, &s->tos, &why); break;
	case K_DSCP:	 r = parse_dscp(v->text, &s->tos, &why); break;
	case K_MARK:	 r = parse_mark(v->text, &s->mark, &why); break;
	case K_PRIORITY:
		r = parse_u64(v->text, 0, PRIORITY_MAX, &u, &why);
		if (r == 0)
			s->priority = (unsigned)u;
		else if (why && strcmp(why, "is out of range") == 0)
			why = "is out of range (0-1000)";
		break;
	case K_NET_SHARE:
	case K_NET_MAX:
	case K_DEV:
	case K_DEV_RATE:
		r = net_setting((int)k->k, v->text, s, &why);
		break;
	case K_WORKERS:
		r = parse_workers(v->text, s, &why);
		break;
	case K_DB_CPU:	 r = parse_percent(v->text, &s->db_cpu, &why); break;
	case K_DB_BURST: r = parse_duration_ms(v->text, &s->db_burst_ms, &why); break;
	case K_PLAN:
		set_name(p, v, "plan", &s->plan, &s->plan_at);
		return;
	case K_GROUP:
		set_name(p, v, "group", &s->group, &s->group_at);
		return;
	case K_HOME:
		set_name(p, v, "VS", &d->svc->home, &d->svc->home_at);
		return;
	case K_GATE:
		d->svc->gate = rules_gate_from_name(v->text);
		d->svc->gate_at = loc_of(p, v);
		if (d->svc->gate < 0)
			perr(p, v, "unknown gate '%s' (expected accept, socket or fork)", v->text);
		return;
	case K_COMMAND:
		if (v->text[0] == '\0') {
			perr(p, v, "command is empty");
			return;
		}
		free(d->svc->command);
		d->svc->command = xstrdup(p->c, v->text);
		return;
	case K_ATTRS_TIMEOUT:
		if (parse_duration_ms(v->text, &d->svc->attrs_timeout_ms, &why) < 0)
			perr(p, v, "attrs-timeout '%s' %s", v->text, why);
		return;
	case K_UNCLASSIFIED:
		set_name(p, v, "VS", &d->svc->unclassified, &d->svc->unclassified_at);
		return;
	case K_PROTOCOL:
		d->svc->proto = rules_proto_from_name(v->text);
		d->svc->proto_at = loc_of(p, v);
		if (d->svc->proto < 0)
			perr(p, v, "unknown protocol '%s' (expected fastcgi, mysql or other)",
			     v->text);
		return;
	case K_USER:
	case K_UGROUP:
		/* the name's syntax here; whether it exists, in check.c */
		if (!privs_name_valid(v->text)) {
			perr(p, v, "invalid %s name '%s'", k->k == K_USER ? "user" : "group", v->text);
			return;
		}
		if (k->k == K_USER) {
			d->svc->user = xstrdup(p->c, v->text);
			d->svc->user_at = loc_of(p, v);
		} else {
			d->svc->group = xstrdup(p->c, v->text);
			d->svc->group_at = loc_of(p, v);
		}
		return;
	}
	if (r < 0) {
		perr(p, v, "%s '%s' %s", k->name, v->text, why ? why : "is not valid");
		return;
	}
	s->set |= 1u << bit;
	s->at[bit] = loc_of(p, v);
}

static void
one_setting(struct parser *p, struct target *d)
{
	struct tok *kt = cur(p), *v;
	const struct key *k = NULL;
	size_t i;
	char b[64];

	if (kt->type != T_WORD) {
		perr(p, kt, "expected a setting (like cpu 10%%), found %s",
		     tok_show(kt, b, sizeof(b)));
		next(p);
		return;
	}
	/* the key of that name for this kind of declaration, else any (an error) */
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (strcmp(keys[i].name, kt->text) == 0 && (!k || (keys[i].where & d->where)))
			k = &keys[i];
	next(p);
	v = cur(p);
	if (!k) {
		perr(p, kt, "unknown setting '%s'", kt->text);
		if (v->type == T_WORD || v->type == T_STRING)
			next(p);
		return;
	}
	if (!(k->where & d->where)) {
		perr(p, kt, "'%s' cannot be set on %s", k->name, where_name(d->where));
		if (v->type == T_WORD || v->type == T_STRING)
			next(p);
		return;
	}
	if (v->type != T_WORD && v->type != T_STRING) {
		perr(p, v, "'%s' needs a value, found %s", k->name, tok_show(v, b, sizeof(b)));
		return;
	}
	apply(p, d, k, kt, v);
	next(p);
}

static int
setting_cb(struct parser *p, void *arg)
{
	one_setting(p, arg);
	return 0;
}

/* Settings up to the end of the statement, or a { } block across lines. */
static void
parse_settings(struct parser *p, struct target *d)
{
	parse_block(p, setting_cb, d);
}

/* A single name after plan/group/service. */
static struct tok *
decl_name(struct parser *p, const char *what)
{
	struct tok *t;
	const char *why;
	char b[64];

	next(p);
	t = cur(p);
	if (t->type != T_WORD) {
		perr(p, t, "expected a %s name, found %s", what, tok_show(t, b, sizeof(b)));
		return NULL;
	}
	if ((why = vs_name_why(t->text)) != NULL) {
		perr(p, t, "invalid %s name '%s': %s", what, t->text, why);
		return NULL;
	}
	next(p);
	return t;
}

static int
copy_settings(struct rules_ctx *c, struct settings *dst, const struct settings *src)
{
	*dst = *src;
	dst->plan = src->plan ? xstrdup(c, src->plan) : NULL;
	dst->group = src->group ? xstrdup(c, src->group) : NULL;
	return c->oom ? -1 : 0;
}

void
parse_vs(struct parser *p)
{
	struct rules_ctx *c = p->c;
	struct target d = { .where = W_VS };
	struct settings s;
	struct nexpr e;
	size_t i, n;
	int nerr;
	char name[256];

	memset(&s, 0, sizeof(s));
	d.s = &s;
	next(p);
	if (parse_nexpr(p, &e, 0, "a VS name") < 0) {
		nexpr_free(&e);
		sync_stmt(p);
		return;
	}
	nerr = c->nerr;
	parse_settings(p, &d);
	n = nexpr_count(&e);
	for (i = 0; i < n && !c->oom; i++) {
		const char *why;
		struct vs_decl *v;

		nexpr_name(&e, i, name, sizeof(name));
		why = vs_name_why(name);
		if (!why && target_keyword(name) >= 0)
			why = "is a reserved word";
		if (why) {
			rerr(c, &e.loc, "invalid VS name '%s': %s", name, why);
			break;
		}
		if (c->nvss >= RULES_TOTAL_MAX) {
			rerr(c, &e.loc, "too many VSs (more than %d)", RULES_TOTAL_MAX);
			break;
		}
		v = vec_push(c, &c->vss, &c->nvss, &c->cvss, sizeof(*v));
		if (!v)
			break;
		v->name = xstrdup(c, name);
		v->loc = e.loc;
		v->bad = c->nerr != nerr;
		copy_settings(c, &v->s, &s);
	}
	settings_free(&s);
	nexpr_free(&e);
}

void
parse_plan(struct parser *p)
{
	struct target d = { .where = W_PLAN };
	struct plan_decl *pl;
	struct tok *t = decl_name(p, "plan");

	if (!t) {
		sync_stmt(p);
		return;
	}
	pl = vec_push(p->c, &p->c->plans, &p->c->nplans, &p->c->cplans, sizeof(*pl));
	if (!pl)
		return;
	pl->name = xstrdup(p->c, t->text);
	pl->loc = loc_of(p, t);
	d.s = &pl->s;
	parse_settings(p, &d);
}

void
parse_group(struct parser *p)
{
	struct target d = { .where = W_GROUP };
	struct group_decl *g;
	struct tok *t = decl_name(p, "group");

	if (!t) {
		sync_stmt(p);
		return;
	}
	g = vec_push(p->c, &p->c->groups, &p->c->ngroups, &p->c->cgroups, sizeof(*g));
	if (!g)
		return;
	g->name = xstrdup(p->c, t->text);
	g->loc = loc_of(p, t);
	d.s = &g->s;
	parse_settings(p, &d);
}

void
parse_service(struct parser *p)
{
	struct target d = { .where = W_SVC };
	struct settings unused;
	struct svc_decl *sv;
	struct tok *t = decl_name(p, "service");

	if (!t) {
		sync_stmt(p);
		return;
	}
	sv = vec_push(p->c, &p->c->svcs, &p->c->nsvcs, &p->c->csvcs, sizeof(*sv));
	if (!sv)
		return;
	sv->name = xstrdup(p->c, t->text);
	sv->loc = loc_of(p, t);
	sv->gate = -1;
	sv->proto = -1;
	memset(&unused, 0, sizeof(unused));
	d.s = &unused;
	d.svc = sv;
	parse_settings(p, &d);
}
