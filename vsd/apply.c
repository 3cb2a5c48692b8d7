// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The rule file as a transaction on the running vsd. The file is loaded and
 * checked first (a file with any error is refused whole), then diffed against
 * the registry into steps. Steps run in the order that keeps the machine
 * sane — in-place updates (processes stay in their cgroups), creates, then
 * destroys — and the state is saved once at the end. When any step or the
 * save fails, the steps already done are undone in reverse, so the cgroups,
 * the registry and the state file are as they were.
 *
 * A VS to destroy may hold the processes of a declared service the same
 * apply stops (its home, typically): those do not refuse the destroy. The
 * services are stopped, and waited for, just before the destroys, after
 * every step that can be undone; stopping cannot be, so if a destroy or the
 * save fails after it, they are started again as they were.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/privs.h"
#include "apply.h"
#include "member.h"
#include "drift.h"
#include "gate-vs.h"
#include "lib/log.h"
#include "netshare.h"
#include "remote.h"
#include "rules/rules.h"
#include "state.h"
#include "vsd.h"

enum step_kind { S_UPDATE, S_CREATE, S_DESTROY };

struct step {
	enum step_kind	 kind;
	size_t		 seq;		/* file order within a kind (qsort is not stable) */
	char		 name[VS_NAME_MAX + 1];
	struct vs	*vs;		/* the registry's (update), the new one (create) */
	struct vs	 gone;		/* destroy: a copy, to create it again on undo */
	struct vs_limits old, want;
	struct gate_socket_cfg gold, gwant;	/* socket gate settings */
	struct vs_net	 nold, nwant;	/* network share (vsd/netshare.c) */
	int		 drifted;	/* update: files that no longer held what vsd set */
};

struct plan {
	struct step	*v;
	size_t		 n, cap;
	size_t		 unchanged;
	/* services to stop before the destroys: they live in a VS to destroy */
	char		(*svc)[VS_NAME_MAX + 1];
	size_t		 nsvc;
};

static const char *const kind_name[] = { "update", "create", "destroy" };

static void
want_limits(const struct rules_vs *x, struct vs_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->cpu = x->cpu;
	/* an unset limit in the file is no limit: the file is the whole truth */
	if (x->set & RULES_SET_CPU_MAX)
		l->cpu_max = x->cpu_max;
	if (x->set & RULES_SET_MEM)
		l->mem_max = x->mem_max;
	if (x->set & RULES_SET_PIDS)
		l->pids_max = x->pids_max;
}

/*
 * The socket gate settings the file wants: its tos/dscp and mark, the file
 * being the whole truth for those; SO_PRIORITY, which a rule file cannot
 * express (its "priority" resolves rule conflicts), is kept as it is.
 */
static void
want_gate(const struct rules_vs *x, const struct gate_socket_cfg *cur, struct gate_socket_cfg *g)
{
	memset(g, 0, sizeof(*g));
	if (cur && (cur->flags & VSD_CFG_PRIO)) {
		g->flags = VSD_CFG_PRIO;
		g->priority = cur->priority;
	}
	if (x->set & RULES_SET_TOS) {
		g->flags |= VSD_CFG_TOS;
		g->tos = x->tos;
	}
	if (x->set & RULES_SET_MARK) {
		g->flags |= VSD_CFG_MARK;
		g->mark = x->mark;
	}
}

static int
gate_eq(const struct gate_socket_cfg *a, const struct gate_socket_cfg *b)
{
	return a->flags == b->flags && a->tos == b->tos && a->mark == b->mark &&
	    a->priority == b->priority;
}

static int
lim_eq(const struct vs_limits *a, const struct vs_limits *b)
{
	return a->cpu == b->cpu && a->cpu_max == b->cpu_max && a->mem_max == b->mem_max &&
	    a->pids_max == b->pids_max;
}

static struct step *
add_step(struct plan *p, enum step_kind kind, const char *name)
{
	struct step *s;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;

		if (!(s = realloc(p->v, cap * sizeof(*s))))
			return NULL;
		p->v = s;
		p->cap = cap;
	}
	s = &p->v[p->n++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->seq = p->n;
	snprintf(s->name, sizeof(s->name), "%s", name);
	return s;
}

/* Stop service name before the destroys (once). */
static int
add_svc(struct plan *p, const char *name)
{
	char (*nv)[VS_NAME_MAX + 1];
	size_t i;

	for (i = 0; i < p->nsvc; i++)
		if (strcmp(p->svc[i], name) == 0)
			return 0;
	if (!(nv = realloc(p->svc, (p->nsvc + 1) * sizeof(*nv))))
		return -ENOMEM;
	p->svc = nv;
	snprintf(p->svc[p->nsvc++], sizeof(*nv), "%s", name);
	return 0;
}

/*
 * The processes in vs that would stop a destroy: all but those of the
 * services this apply stops, which are noted to be stopped first, as are
 * the services whose home vs is (with or without a process now: none may
 * start there again). 0 or more, or -ENOMEM.
 */
static ssize_t
in_the_way(struct vsd *d, const struct rules *rs, int prune, const struct vs *vs,
	   struct plan *p)
{
	const struct svc *s;
	pid_t *pids = NULL;
	size_t n = 0, i;
	ssize_t left = 0;

	for (i = 0; i < d->svcs.n; i++)
		if (strcmp(d->svcs.v[i].home, vs->name) == 0 && add_svc(p, d->svcs.v[i].name) < 0)
			return -ENOMEM;
	if (vs->status != VS_OK || cg_vs_procs(&d->cg, vs, &pids, &n) < 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (!(s = svc_holding(d, rs, prune, pids[i])))
			left++;
		else if (add_svc(p, s->name) < 0)
			left = -ENOMEM;
	}
	free(pids);
	return left;
}

static int
by_kind(const void *a, const void *b)
{
	const struct step *x = a, *y = b;

	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The difference between the file and the registry; refuses what cannot be done. */
static int
make_plan(struct vsd *d, const struct rules *rs, unsigned flags, struct plan *p,
	  struct buf *errs)
{
	unsigned sum = 0, kept = 0;
	size_t i, nerr = 0;
	struct step *s;
	char a[16], b[16], c[16];
	struct vs_net *nw = calloc(rs->nvs ? rs->nvs : 1, sizeof(*nw));

	if (!nw)
		return -ENOMEM;
	for (i = 0; i < rs->nvs; i++) {
		const struct rules_vs *x = &rs->vs[i];
		struct vs *vs = reg_find(&d->reg, x->name);
		struct gate_socket_cfg g;
		struct vs_limits w;

		want_limits(x, &w);
		want_gate(x, vs ? &vs->gate : NULL, &g);
		sum += w.cpu;
		if (net_want(d, rs, x, vs, &nw[i], errs) < 0) {
			nerr++;
		} else if (vs && vs->status != VS_OK) {
			buf_printf(errs, "VS '%s': its cgroups are missing; 'vsctl destroy %s' "
				   "first\n", x->name, x->name);
			nerr++;
		} else if (vs && lim_eq(&vs->lim, &w) && gate_eq(&vs->gate, &g) &&
			   net_eq(&vs->net, &nw[i]) && drift_known(d, vs) == 0) {
			p->unchanged++;
		} else {
			if (!(s = add_step(p, vs ? S_UPDATE : S_CREATE, x->name))) {
				free(nw);
				return -ENOMEM;
			}
			s->vs = vs;
			s->want = w;
			s->gwant = g;
			s->nwant = nw[i];
			if (vs) {
				s->old = vs->lim;
				s->gold = vs->gate;
				s->nold = vs->net;
				s->drifted = drift_known(d, vs);
			}
		}
	}
	for (i = 0; i < d->reg.n; i++) {
		struct vs *vs = d->reg.v[i];
		ssize_t n;

		if (rules_vs_index(rs, vs->name) >= 0)
			continue;
		if (!(flags & APPLY_PRUNE)) {
			kept += vs->lim.cpu;
			continue;
		}
		if ((n = in_the_way(d, rs, 1, vs, p)) < 0) {
			free(nw);
			return (int)n;
		}
		if (n > 0) {
			/* destroying would kill them: that is vsctl destroy --force's job */
			buf_printf(errs, "VS '%s' is not in the file but has %zd process%s; "
				   "--prune removes only empty VSs\n", vs->name, n,
				   n == 1 ? "" : "es");
			nerr++;
			continue;
		}
		if (!(s = add_step(p, S_DESTROY, vs->name))) {
			free(nw);
			return -ENOMEM;
		}
		s->vs = vs;
		s->old = vs->lim;
		s->gold = vs->gate;
	}
	if (net_admit_plan(d, rs, nw, flags & APPLY_PRUNE, errs) < 0)
		nerr++;
	free(nw);
	if (sum + kept > BP_MAX) {
		buf_printf(errs, "the shares would sum to %s: the file's %s plus %s of VSs it "
			   "does not name (--prune removes those)\n",
			   fmt_percent(sum + kept, a, sizeof(a)), fmt_percent(sum, b, sizeof(b)),
			   fmt_percent(kept, c, sizeof(c)));
		nerr++;
	}
	if (p->n)	/* an empty plan has p->v NULL: qsort's pointer is nonnull */
		qsort(p->v, p->n, sizeof(*p->v), by_kind);
	return nerr ? -EINVAL : 0;
}

static int
run_step(struct vsd *d, struct step *s)
{
	struct vs *vs;
	int r;

	switch (s->kind) {
	case S_UPDATE:
		s->vs->lim = s->want;
		/* drifted: every limit again, not only those the file changes */
		r = s->drifted ? drift_restore(d, s->vs, s->drifted, "apply") :
		    cg_vs_apply(&d->cg, s->vs, &s->old);
		if (r < 0) {
			s->vs->lim = s->old;
			cg_vs_apply(&d->cg, s->vs, &s->want);	/* put back what was written */
			return r;
		}
		s->vs->gate = s->gwant;
		if (!gate_eq(&s->gold, &s->gwant) && (r = gate_vs_update(d, s->vs)) < 0) {
			s->vs->gate = s->gold;
			s->vs->lim = s->old;
			cg_vs_apply(&d->cg, s->vs, &s->want);
			return r;
		}
		s->vs->net = s->nwant;
		if (!net_eq(&s->nold, &s->nwant) && (r = net_apply(d, s->vs, &s->nold)) < 0) {
			struct vs_net tried = s->vs->net;

			s->vs->net = s->nold;
			net_apply(d, s->vs, &tried);
			s->vs->gate = s->gold;
			gate_vs_update(d, s->vs);
			s->vs->lim = s->old;
			cg_vs_apply(&d->cg, s->vs, &s->want);
			return r;
		}
		s->nwant = s->vs->net;	/* with its class, for an undo */
		return 0;
	case S_CREATE:
		if (!(vs = calloc(1, sizeof(*vs))))
			return -ENOMEM;
		snprintf(vs->name, sizeof(vs->name), "%s", s->name);
		vs->lim = s->want;
		vs->gate = s->gwant;
		if ((r = cg_vs_create(&d->cg, vs)) < 0) {
			free(vs);
			return r;
		}
		if ((r = reg_add(&d->reg, vs)) < 0) {
			cg_vs_remove(&d->cg, vs);
			free(vs);
			return r;
		}
		/* After reg_add: the gate records the VS's id. */
		if ((r = gate_vs_attach(d, vs)) < 0) {
			cg_vs_remove(&d->cg, vs);
			reg_remove(&d->reg, vs);
			return r;
		}
		vs->net = s->nwant;
		if (vs->net.dev[0] && (r = net_apply(d, vs, &(struct vs_net){ 0 })) < 0) {
			net_remove(d, vs);
			gate_vs_detach(d, vs);
			cg_vs_remove(&d->cg, vs);
			reg_remove(&d->reg, vs);
			return r;
		}
		s->vs = vs;
		return 0;
	case S_DESTROY:
		if ((r = cg_vs_remove(&d->cg, s->vs)) < 0)
			return r;
		if ((r = gate_vs_detach(d, s->vs)) < 0)
			log_warnx("apply: VS %s: socket gate pins left: %s", s->name, strerror(-r));
		s->gone = *s->vs;
		net_remove(d, s->vs);
		reg_remove(&d->reg, s->vs);
		s->vs = NULL;
		return 0;
	}
	return -EINVAL;
}

static void
undo_step(struct vsd *d, struct step *s)
{
	struct vs *vs;
	int r = 0;

	switch (s->kind) {
	case S_UPDATE:
		s->vs->lim = s->old;
		r = s->drifted ? cg_vs_rewrite(&d->cg, s->vs) : cg_vs_apply(&d->cg, s->vs, &s->want);
		if (!gate_eq(&s->gold, &s->gwant)) {
			s->vs->gate = s->gold;
			gate_vs_update(d, s->vs);
		}
		if (!net_eq(&s->nold, &s->nwant)) {
			s->vs->net = s->nold;
			net_apply(d, s->vs, &s->nwant);
		}
		break;
	case S_CREATE:
		net_remove(d, s->vs);
		gate_vs_detach(d, s->vs);
		r = cg_vs_remove(&d->cg, s->vs);
		reg_remove(&d->reg, s->vs);
		break;
	case S_DESTROY:
		/* it was empty: create it again, same name, id and limits */
		if (!(vs = malloc(sizeof(*vs)))) {
			r = -ENOMEM;
			break;
		}
		*vs = s->gone;
		/* one whose cgroups had vanished is only remembered again */
		if ((vs->status == VS_OK && (r = cg_vs_create(&d->cg, vs)) < 0) ||
		    (r = reg_add(&d->reg, vs)) < 0) {
			free(vs);
			break;
		}
		if (vs->status == VS_OK)
			r = gate_vs_attach(d, vs);
		if (vs->status == VS_OK && vs->net.dev[0])
			net_apply(d, vs, &(struct vs_net){ 0 });
		break;
	}
	if (r < 0)
		log_warnx("apply: undoing %s of VS %s failed: %s", kind_name[s->kind], s->name,
			  strerror(-r));
}

/* Fewer creates than this are not worth a thread. */
#define ASYNC_MIN	64

static size_t
count_kind(const struct plan *p, enum step_kind kind)
{
	size_t i, n = 0;

	for (i = 0; i < p->n; i++)
		n += p->v[i].kind == kind;
	return n;
}

static void
describe(const struct plan *p, const char *path, unsigned flags, int json,
	 const struct buf *svc, struct buf *out)
{
	static const char *const done[] = { "updated", "created", "destroyed" };
	size_t i, count[3] = { 0, 0, 0 };
	int k;

	for (i = 0; i < p->n; i++)
		count[p->v[i].kind]++;
	if (json) {
		buf_printf(out, "{\"file\": ");
		buf_json_str(out, path);
		buf_printf(out, ", \"dry_run\": %s", flags & APPLY_DRY_RUN ? "true" : "false");
		for (k = 0; k < 3; k++) {
			int first = 1;

			buf_printf(out, ", \"%s\": [", done[k]);
			for (i = 0; i < p->n; i++) {
				if ((int)p->v[i].kind != k)
					continue;
				buf_printf(out, "%s", first ? "" : ", ");
				buf_json_str(out, p->v[i].name);
				first = 0;
			}
			buf_printf(out, "]");
		}
		/* each VS's fields, old -> new; null: none (a create's old, a destroy's new) */
		buf_printf(out, ", \"changes\": [");
		for (i = 0; i < p->n; i++) {
			const struct step *s = &p->v[i];

			buf_printf(out, "%s{\"name\": ", i ? ", " : "");
			buf_json_str(out, s->name);
			buf_printf(out, ", \"action\": \"%s\", \"drifted\": %d, \"fields\": ",
				   kind_name[s->kind], s->drifted);
			apply_diff(&s->old, &s->gold, &s->want, &s->gwant, DIFF_JSON, out);
			buf_printf(out, "}");
		}
		buf_printf(out, "], \"unchanged\": %zu, \"services\": [", p->unchanged);
		{
			const char *l = svc->p;
			int first = 1;

			while (l && *l) {
				size_t n = strcspn(l, "\n");
				char line[256];

				snprintf(line, sizeof(line), "%.*s", (int)n, l);
				buf_printf(out, "%s", first ? "" : ", ");
				buf_json_str(out, line);
				first = 0;
				l += n + (l[n] == '\n');
			}
		}
		buf_printf(out, "]}\n");
		return;
	}
	for (i = 0; i < p->n; i++) {
		const struct step *s = &p->v[i];

		buf_printf(out, "%s %s", flags & APPLY_DRY_RUN ? kind_name[s->kind] :
			   done[s->kind], s->name);
		/* "update www1 cpu 5% -> 8%, mem 256M -> 1536M"; a create's new values */
		if (s->kind != S_DESTROY)
			apply_diff(&s->old, &s->gold, &s->want, &s->gwant,
				   s->kind == S_UPDATE ? DIFF_OLD : 0, out);
		if (s->kind == S_UPDATE && s->drifted)
			buf_printf(out, " (%d limit file%s had drifted: all written again)",
				   s->drifted, s->drifted == 1 ? "" : "s");
		buf_printf(out, "\n");
	}
	if (svc->len)
		buf_add(out, svc->p, svc->len);
	buf_printf(out, "%s: %s%zu created, %zu updated, %zu destroyed, %zu unchanged\n", path,
		   flags & APPLY_DRY_RUN ? "would be: " : "", count[S_CREATE], count[S_UPDATE],
		   count[S_DESTROY], p->unchanged);
}

/*
 * Where a member's file sends the sockets (socket rules) or the new
 * processes (fork rules) of VS name: the VS they go to must give them no
 * more than the member may set (or its processes already in name would
 * get it from the rule).
 */
static int
member_target(struct vsd *d, const struct rules *rs, uid_t owner, const char *name,
	      const char *path, struct buf *errs)
{
	static const struct {
		enum rules_gate	 gate;
		const char	*what;
	} gates[] = {
		{ RULES_GATE_SOCKET, "sockets" },
		{ RULES_GATE_FORK, "new processes" },
	};
	struct gate_socket_cfg g;
	char why[200];
	size_t k;

	for (k = 0; k < ARRAY_SIZE(gates); k++) {
		struct rules_decision dec = rules_query_name(rs, gates[k].gate, name, NULL);
		const struct rules_vs *t;
		struct vs *tvs;

		if (dec.action != RULES_TO_VS || dec.vs < 0 || dec.rule < 0 ||
		    strcmp((t = &rs->vs[dec.vs])->name, name) == 0)
			continue;
		tvs = reg_find(&d->reg, t->name);
		want_gate(t, tvs ? &tvs->gate : NULL, &g);
		if (member_gate_check(d, owner, &g, NULL, why, sizeof(why)) < 0) {
			const struct rules_loc *l = &rs->rules[dec.rule].loc;

			buf_printf(errs, "%s:%d:%d: the %s of VS %s would go to VS %s: %s\n",
				   l->file ? l->file : path, l->line, l->col, gates[k].what, name,
				   t->name, why);
			return -EPERM;
		}
	}
	return 0;
}

/*
 * A member's file sets on each VS only what the member could set with
 * vsctl (member.c), sends no VS's sockets or new processes to a VS with
 * more, and has no remote lines: those mark other hosts' connections as a
 * VS's, a CAP_NET_ADMIN power too.
 */
static int
member_check(struct vsd *d, const struct rules *rs, uid_t owner, const char *path,
	     struct buf *errs)
{
	char why[200];
	size_t i;
	int r = 0;

	for (i = 0; i < d->reg.n; i++)
		if (member_target(d, rs, owner, d->reg.v[i]->name, path, errs) < 0)
			r = -EPERM;
	for (i = 0; i < rs->nvs; i++)
		if (!reg_find(&d->reg, rs->vs[i].name) &&
		    member_target(d, rs, owner, rs->vs[i].name, path, errs) < 0)
			r = -EPERM;

	for (i = 0; i < rs->nvs; i++) {
		const struct rules_vs *x = &rs->vs[i];
		struct vs *vs = reg_find(&d->reg, x->name);
		struct gate_socket_cfg g;

		want_gate(x, vs ? &vs->gate : NULL, &g);
		if (member_gate_check(d, owner, &g, vs ? &vs->gate : NULL, why, sizeof(why)) < 0) {
			buf_printf(errs, "%s:%d:%d: VS %s: %s\n", x->loc.file ? x->loc.file : path,
				   x->loc.line, x->loc.col, x->name, why);
			r = -EPERM;
		}
	}
	if (rs->nremotes > 0) {
		const struct rules_loc *l = &rs->remotes[0].loc;

		buf_printf(errs, "%s:%d:%d: remote lines need root: they mark other hosts' "
			   "connections as a VS's\n", l->file ? l->file : path, l->line, l->col);
		r = -EPERM;
	}
	return r;
}

/*
 * A member's file, and every file it includes, is opened with the member's
 * own permissions: what vsd answers then says no more about root's
 * directories than the member could find out itself (vsd(8), SECURITY).
 */
static int
load_as(const char *path, uid_t owner, const struct privs_user *as, struct rules **rs,
	struct buf *errs)
{
	struct privs_fs_saved saved;
	struct privs_user pw;
	char num[16], err[128];
	int r;

	if (owner == 0)
		return rules_load_as(path, 0, 0, rs, errs);
	if (!as) {	/* a reload: the user as the user database has it now */
		snprintf(num, sizeof(num), "%u", (unsigned)owner);
		if (privs_resolve(num, NULL, &pw, err, sizeof(err)) < 0) {
			/* a uid with no entry: its own permissions, no group's */
			memset(&pw, 0, sizeof(pw));
			pw.uid = owner;
			pw.gid = 65534;
		}
		as = &pw;
	}
	if ((r = privs_fs_enter(as, &saved)) < 0) {
		buf_printf(errs, "%s: cannot take uid %u's permissions to read it: %s\n", path,
			   (unsigned)owner, strerror(-r));
		return r;
	}
	r = rules_load_as(path, RULES_OWNER_ONLY, owner, rs, errs);
	privs_fs_leave(&saved);
	return r;
}

int
rules_apply_file(struct vsd *d, const char *path, uid_t owner, const struct privs_user *as,
		 unsigned flags, int json, struct buf *out, struct buf *errs)
{
	struct plan p = { 0 };
	struct rules *rs = NULL;
	struct buf svc = { 0 };
	uint32_t next_id = d->reg.next_id;
	size_t i;
	int r, r2, stopped = 0, remote_done = 0;

	if ((r = load_as(path, owner, as, &rs, errs)) < 0 ||
	    (owner != 0 && (r = member_check(d, rs, owner, path, errs)) < 0))
		goto out;
	if ((r = make_plan(d, rs, flags, &p, errs)) < 0 || (r = svc_check(d, rs, errs)) < 0 ||
	    (r = remote_check(d, rs, errs)) < 0)
		goto out;
	/* vsd runs a service's command as root: only root may declare or
	 * stop one, not a member of vsd's group (vsd(8), ACCESS) */
	if (owner != 0 && rs->nservices > 0) {
		buf_printf(errs, "%s: service lines need root: vsd runs their commands as root\n",
			   path);
		r = -EPERM;
		goto out;
	}
	if (owner != 0 && (flags & APPLY_PRUNE) && d->svcs.n > 0) {
		buf_printf(errs, "--prune would stop the declared services, which only root may\n");
		r = -EPERM;
		goto out;
	}
	/* nor drop what only root may write (member-apply.c) */
	if (owner != 0 && (r = member_apply_check(d, rs, owner, path, errs)) < 0)
		goto out;
	if (flags & APPLY_DRY_RUN) {
		svc_plan(d, rs, flags & APPLY_PRUNE, &svc);
		goto out;
	}
	/* Many VSs to make: their caps are written by a second thread while
	 * the next ones are made (lib/cgroup-async.c); a cap that fails
	 * fails the apply as any step does. */
	if (count_kind(&p, S_CREATE) >= ASYNC_MIN && cg_async_start(&d->cg) < 0)
		log_warnx("apply: no second thread for the CPU caps; writing them in turn");
	for (i = 0; i < p.n; i++) {
		/* the destroys come last: first the services that live there */
		if (p.v[i].kind == S_DESTROY && p.nsvc && !stopped++ &&
		    (r = svc_stop_wait(d, (const char (*)[VS_NAME_MAX + 1])p.svc, p.nsvc)) < 0) {
			buf_printf(errs, "the services in the VSs to destroy did not stop: %s; "
				   "nothing changed\n", strerror(-r));
			break;
		}
		if ((r = run_step(d, &p.v[i])) < 0) {
			buf_printf(errs, "%s VS %s failed: %s; nothing changed\n",
				   kind_name[p.v[i].kind], p.v[i].name, strerror(-r));
			break;
		}
	}
	if ((r2 = cg_async_finish(&d->cg)) < 0 && r == 0) {
		r = r2;
		buf_printf(errs, "setting a CPU cap failed: %s (see vsd's log); nothing changed\n",
			   strerror(-r));
	}
	/* the remote table names VSs by id: after the creates */
	if (r == 0 && (r = remote_apply(d, rs, errs)) == 0)
		remote_done = 1;
	if (r == 0 && p.n > 0 && (r = state_save(d->state_dir, &d->reg)) < 0)
		buf_printf(errs, "cannot save the state: %s; nothing changed\n", strerror(-r));
	if (r < 0) {
		if (remote_done)	/* the table of the rules still in force */
			remote_apply(d, d->rules, NULL);
		while (i-- > 0)
			undo_step(d, &p.v[i]);
		d->reg.next_id = next_id;
		/* their VSs are back: start them as they were */
		if (stopped)
			svc_resume(d, (const char (*)[VS_NAME_MAX + 1])p.svc, p.nsvc, errs);
		goto out;
	}
	log_info("applied %s: %zu steps, %zu VSs unchanged", path, p.n, p.unchanged);
	/* the services after the VSs they live in; a service that cannot
	 * start is retried with back-off, it does not undo the VSs */
	if (svc_sync(d, rs, flags & APPLY_PRUNE, &svc) < 0)
		buf_printf(&svc, "warning: the service list could not be saved (see vsd's log)\n");
	/* the compiled rules the gates consult from now on; they have them
	 * in force before we answer */
	applied_set(d, rs, path, owner);
	rs = NULL;
	gate_push_all(d, &svc);
out:
	if (r == 0)
		describe(&p, path, flags, json, &svc, out);
	buf_free(&svc);
	rules_free(rs);
	free(p.v);
	free(p.svc);
	return r;
}

int
rules_reload(struct vsd *d, unsigned flags, int json, struct buf *out, struct buf *errs)
{
	if (!d->rules_path) {
		buf_printf(errs, "no rule file to reload: start vsd with --rules FILE or "
			   "vsctl apply one\n");
		return -ENOENT;
	}
	return rules_apply_file(d, d->rules_path, d->rules_owner, NULL, flags, json, out, errs);
}

void
rules_release(struct vsd *d)
{
	rules_free(d->rules);
	d->rules = NULL;
	free(d->rules_path);
	d->rules_path = NULL;
}

static unsigned
req_flags(const struct request *req)
{
	return (req_flag(req, "prune") ? APPLY_PRUNE : 0) |
	    (req_flag(req, "dry-run") ? APPLY_DRY_RUN : 0);
}

/* The errors, all of them, as the reply's message (not rep->err's one line). */
static int
refuse(struct reply *rep, const char *cmd, int r, struct buf *errs)
{
	buf_reset(&rep->out);
	if (errs->len && errs->p[errs->len - 1] == '\n')
		errs->p[--errs->len] = '\0';
	buf_printf(&rep->out, "%s: refused, nothing changed:\n%s", cmd,
		   errs->p ? errs->p : strerror(-r));
	return r < 0 ? r : -EINVAL;
}

int
cmd_apply(struct vsd *d, const struct request *req, struct reply *rep)
{
	const char *path = req_get(req, "path");
	struct privs_user as;
	struct buf errs = { 0 };
	int r;

	if (!path || path[0] != '/')
		return reply_err(rep, -EINVAL, "apply: no absolute rule file path given");
	/* the client's ids and groups as the kernel saw them at connect */
	if (rep->peer_uid != 0 && (r = privs_from_peer(rep->peer_fd, &as)) < 0)
		return reply_err(rep, r, "apply: cannot read the client's groups: %s", strerror(-r));
	r = rules_apply_file(d, path, rep->peer_uid, rep->peer_uid ? &as : NULL, req_flags(req),
			     rep->json, &rep->out, &errs);
	if (r < 0)
		r = refuse(rep, rep->cmd, r, &errs);
	buf_free(&errs);
	return r;
}

int
cmd_reload(struct vsd *d, const struct request *req, struct reply *rep)
{
	struct buf errs = { 0 };
	int r;

	r = rules_reload(d, req_flags(req), rep->json, &rep->out, &errs);
	if (r < 0)
		r = refuse(rep, rep->cmd, r, &errs);
	buf_free(&errs);
	return r;
}
