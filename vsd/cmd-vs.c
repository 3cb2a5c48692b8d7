// SPDX-License-Identifier: GPL-2.0-or-later
/* The VS commands: create, set, destroy, list, show, attach, exec-self. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "drift.h"
#include "gate-vs.h"
#include "guard.h"
#include "lib/log.h"
#include "member.h"
#include "metrics.h"
#include "netshare.h"
#include "state.h"
#include "stats.h"
#include "vsd.h"

/*
 * A member of --group may set only what member.c allows, and may put its
 * processes only in a VS whose sockets get no more than that: else a VS
 * root made with a mark would lend it to them.
 */
static int
member_may(const struct vsd *d, struct reply *rep, const struct gate_socket_cfg *want,
	   const struct gate_socket_cfg *old, const char *cmd)
{
	char why[200];
	int r;

	if ((r = member_gate_check(d, rep->peer_uid, want, old, why, sizeof(why))) < 0)
		return reply_err(rep, r, "%s: %s", cmd, why);
	return 0;
}

static int
member_may_enter(struct vsd *d, struct reply *rep, const struct vs *vs, const char *cmd)
{
	char why[200];
	int r;

	if ((r = member_gate_check(d, rep->peer_uid, gate_vs_settings(d, vs), NULL, why,
				   sizeof(why))) < 0)
		return reply_err(rep, r, "%s: VS '%s' gives its sockets what uid %u may not "
				 "set: %s", cmd, vs->name, (unsigned)rep->peer_uid, why);
	return 0;
}

static struct vs *
lookup(struct vsd *d, const struct request *req, struct reply *rep, int *r)
{
	const char *name = req_get(req, "name");
	const char *cmd = rep->cmd;
	struct vs *vs;

	if (!name) {
		*r = reply_err(rep, -EINVAL, "%s: no VS name given", cmd);
		return NULL;
	}
	if (!vs_name_valid(name)) {
		*r = reply_err(rep, -EINVAL, "%s: bad VS name '%.64s': it %s", cmd, name, vs_name_why(name));
		return NULL;
	}
	if (!(vs = reg_find(&d->reg, name)))
		*r = reply_err(rep, -ENOENT, "%s: no VS named '%s'", cmd, name);
	return vs;
}

/* Read the limit options of create/set into lim; "none" clears an optional one. */
static int
parse_limits(const struct request *req, struct vs_limits *lim, struct reply *rep)
{
	const char *cmd = rep->cmd, *v, *why;
	uint64_t n;
	int r;

	if ((v = req_get(req, "cpu")) && (r = parse_percent(v, &lim->cpu, &why)) < 0)
		return reply_err(rep, r, "%s: --cpu %.32s %s", cmd, v, why);
	if ((v = req_get(req, "cpu-max"))) {
		if (strcmp(v, "none") == 0)
			lim->cpu_max = 0;
		else if ((r = parse_percent(v, &lim->cpu_max, &why)) < 0)
			return reply_err(rep, r, "%s: --cpu-max %.32s %s", cmd, v, why);
	}
	if ((v = req_get(req, "mem"))) {
		if (strcmp(v, "none") == 0)
			lim->mem_max = 0;
		else if ((r = parse_size(v, &lim->mem_max, &why)) < 0)
			return reply_err(rep, r, "%s: --mem %.32s %s", cmd, v, why);
		else if (lim->mem_max < 4096)
			return reply_err(rep, -ERANGE, "%s: --mem %.32s is below one page", cmd, v);
	}
	if ((v = req_get(req, "pids"))) {
		if (strcmp(v, "none") == 0)
			lim->pids_max = 0;
		else if ((r = parse_u64(v, 1, 4194304, &n, &why)) < 0)
			return reply_err(rep, r, "%s: --pids %.32s %s (1 to 4194304)", cmd, v, why);
		else
			lim->pids_max = n;
	}
	if (lim->cpu_max && lim->cpu_max < lim->cpu) {
		char a[16], b[16];

		return reply_err(rep, -EINVAL, "%s: --cpu-max %s is below the guaranteed --cpu %s", cmd,
				 fmt_percent(lim->cpu_max, a, sizeof(a)), fmt_percent(lim->cpu, b, sizeof(b)));
	}
	return 0;
}

/* Admission control: guaranteed shares never add up to more than the machine. */
static int
admit(struct vsd *d, const struct vs *skip, unsigned cpu, struct reply *rep, const char *cmd)
{
	unsigned others = reg_cpu_sum(&d->reg, skip);
	char a[16], b[16], c[16];

	if (others + cpu <= BP_MAX)
		return 0;
	if (skip)
		return reply_err(rep, -ENOSPC, "%s: share %s is more than %s can have: %s (other VSs hold %s)",
				 cmd, fmt_percent(cpu, a, sizeof(a)), skip->name,
				 fmt_percent(BP_MAX - others, b, sizeof(b)), fmt_percent(others, c, sizeof(c)));
	return reply_err(rep, -ENOSPC, "%s: share %s is more than is left: %s of 100%% is unallocated",
			 cmd, fmt_percent(cpu, a, sizeof(a)), fmt_percent(BP_MAX - others, b, sizeof(b)));
}

static void
json_pct(struct buf *b, unsigned bp)
{
	if (bp == 0)
		buf_printf(b, "null");
	else if (bp % BP_PER_PCT == 0)
		buf_printf(b, "%u", bp / BP_PER_PCT);
	else
		buf_printf(b, "%u.%02u", bp / BP_PER_PCT, bp % BP_PER_PCT);
}

static void
json_u64_or_null(struct buf *b, uint64_t v)
{
	if (v == 0)
		buf_printf(b, "null");
	else
		buf_printf(b, "%" PRIu64, v);
}

static void
vs_json(struct vsd *d, struct vs *vs, struct buf *b, const char *when)
{
	struct vs_drift dr;
	struct cg_usage u = { 0 };
	char dir[PATH_MAX];
	pid_t *pids = NULL;
	size_t n = 0, i;
	int h;

	/* first: it finds a VS whose cgroup went missing since the last look */
	drift_check(d, vs, &dr, when);
	if (vs->status == VS_OK) {
		cg_vs_procs(&d->cg, vs, &pids, &n);
		cg_vs_usage(&d->cg, vs, &u);
	}
	buf_printf(b, "{\"name\": ");
	buf_json_str(b, vs->name);
	buf_printf(b, ", \"id\": %" PRIu32 ", \"status\": \"%s\", \"drift\": ", vs->id,
		   vs->status == VS_OK ? "ok" : "missing");
	drift_json(&dr, b);
	buf_printf(b, ", \"cpu\": ");
	json_pct(b, vs->lim.cpu);
	buf_printf(b, ", \"cpu_max\": ");
	json_pct(b, vs->lim.cpu_max);
	buf_printf(b, ", \"mem_max\": ");
	json_u64_or_null(b, vs->lim.mem_max);
	buf_printf(b, ", \"pids_max\": ");
	json_u64_or_null(b, vs->lim.pids_max);
	buf_printf(b, ", \"cgroups\": [");
	for (h = 0; h < d->cg.nhier; h++) {
		if (cg_vs_path(&d->cg, h, vs->name, dir, sizeof(dir)) < 0)
			continue;
		buf_printf(b, "%s", h ? ", " : "");
		buf_json_str(b, dir);
	}
	buf_printf(b, "], \"procs\": [");
	for (i = 0; i < n; i++)
		buf_printf(b, "%s%d", i ? ", " : "", (int)pids[i]);
	buf_printf(b, "], \"usage\": {\"cpu_usec\": %" PRIu64 ", \"mem_bytes\": %" PRIu64
		   ", \"pids\": %" PRIu64 "}", u.cpu_usec, u.mem_bytes, u.pids);
	stats_events_json(&vs_stats_get(d, vs)->cg, b);
	gate_vs_json(d, vs, b);
	net_json(vs, b);
	if (strcmp(when, "show") == 0)
		vs_services(d, vs, b, 1);
	buf_printf(b, "}");
	free(pids);
}

/* create, set and show answer with the VS itself under --json. */
static int
reply_vs(struct vsd *d, struct vs *vs, struct reply *rep, const char *when)
{
	if (rep->json) {
		vs_json(d, vs, &rep->out, when);
		buf_printf(&rep->out, "\n");
	}
	return 0;
}

/* One row of list and show; its status says "drift" if a limit drifted. */
static void
vs_row(struct vsd *d, struct vs *vs, struct buf *b, const char *when, struct vs_drift *dr)
{
	char cpu[16], cap[16], mem[32], pids[32];
	struct cg_usage u = { 0 };
	pid_t *pl = NULL;
	size_t n = 0;
	int drifted;

	/* first: it finds a VS whose cgroup went missing since the last
	 * look, and it sets dr (empty for a missing VS) for show */
	drifted = drift_check(d, vs, dr, when);
	if (vs->status == VS_OK) {
		cg_vs_procs(&d->cg, vs, &pl, &n);
		cg_vs_usage(&d->cg, vs, &u);
		free(pl);
	}
	snprintf(pids, sizeof(pids), "%" PRIu64, vs->lim.pids_max);
	buf_printf(b, "%-31s %7s %7s %7s %8s %5zu %10.2f %s\n", vs->name,
		   fmt_percent(vs->lim.cpu, cpu, sizeof(cpu)),
		   vs->lim.cpu_max ? fmt_percent(vs->lim.cpu_max, cap, sizeof(cap)) : "-",
		   vs->lim.mem_max ? fmt_size(vs->lim.mem_max, mem, sizeof(mem)) : "-",
		   vs->lim.pids_max ? pids : "-", n, (double)u.cpu_usec / 1e6,
		   vs->status != VS_OK ? "missing" : drifted ? "drift" : "ok");
}

int
cmd_list(struct vsd *d, const struct request *req, struct reply *rep)
{
	struct vs_drift dr;
	size_t i;

	if (rep->json) {
		buf_printf(&rep->out, "[");
		for (i = 0; i < d->reg.n; i++) {
			buf_printf(&rep->out, "%s", i ? ",\n " : "");
			vs_json(d, d->reg.v[i], &rep->out, "list");
		}
		buf_printf(&rep->out, "]\n");
		return 0;
	}
	buf_printf(&rep->out, "%-31s %7s %7s %7s %8s %5s %10s %s\n", "NAME", "CPU", "CPU-MAX",
		   "MEM-MAX", "PIDS-MAX", "PROCS", "CPU-TIME/s", "STATUS");
	for (i = 0; i < d->reg.n; i++)
		vs_row(d, d->reg.v[i], &rep->out, "list", &dr);
	return 0;
}

int
cmd_show(struct vsd *d, const struct request *req, struct reply *rep)
{
	char dir[PATH_MAX];
	struct vs_drift dr;
	struct vs *vs;
	int r, h;

	if (!(vs = lookup(d, req, rep, &r)))
		return r;
	if (rep->json)
		return reply_vs(d, vs, rep, "show");
	buf_printf(&rep->out, "%-31s %7s %7s %7s %8s %5s %10s %s\n", "NAME", "CPU", "CPU-MAX",
		   "MEM-MAX", "PIDS-MAX", "PROCS", "CPU-TIME/s", "STATUS");
	vs_row(d, vs, &rep->out, "show", &dr);
	buf_printf(&rep->out, "id: %" PRIu32 "\n", vs->id);
	drift_text(&dr, &rep->out);
	if (vs->status == VS_OK)
		stats_events_text(&vs_stats_get(d, vs)->cg, &rep->out);
	for (h = 0; h < d->cg.nhier; h++)
		if (cg_vs_path(&d->cg, h, vs->name, dir, sizeof(dir)) == 0)
			buf_printf(&rep->out, "cgroup: %s\n", dir);
	gate_vs_text(d, vs, &rep->out);
	net_text(vs, &rep->out);
	vs_services(d, vs, &rep->out, 0);
	return 0;
}

int
cmd_create(struct vsd *d, const struct request *req, struct reply *rep)
{
	const char *name = req_get(req, "name");
	struct vs *vs;
	int r;

	if (!name)
		return reply_err(rep, -EINVAL, "create: no VS name given");
	if (!vs_name_valid(name))
		return reply_err(rep, -EINVAL, "create: bad VS name '%.64s': it %s", name, vs_name_why(name));
	if (reg_find(&d->reg, name))
		return reply_err(rep, -EEXIST, "create: VS '%s' exists already", name);
	if (!req_get(req, "cpu"))
		return reply_err(rep, -EINVAL, "create: --cpu is required (the VS's guaranteed share)");
	if (!(vs = calloc(1, sizeof(*vs))))
		return -ENOMEM;
	snprintf(vs->name, sizeof(vs->name), "%s", name);
	if ((r = parse_limits(req, &vs->lim, rep)) < 0 ||
	    (r = gate_opts_parse(req, &vs->gate, rep)) < 0 ||
	    (r = admit(d, NULL, vs->lim.cpu, rep, "create")) < 0 ||
	    (r = net_opts_parse(d, req, vs, &vs->net, rep)) < 0) {
		free(vs);
		return r;
	}
	if ((r = member_may(d, rep, &vs->gate, NULL, "create")) < 0) {
		free(vs);
		return r;
	}
	if (!d->gate && vs->gate.flags) {
		free(vs);
		return reply_err(rep, -EOPNOTSUPP, "create: --tos, --dscp, --mark and --priority "
				 "need the socket gate, which is off (no cgroup2 hierarchy)");
	}
	if ((r = cg_vs_create(&d->cg, vs)) < 0) {
		free(vs);
		return reply_err(rep, r, "create: %s: cannot set up its cgroups: %s", name, strerror(-r));
	}
	/* The id the gate records must be the final one: assign it now. */
	if (!vs->id)
		vs->id = d->reg.next_id ? d->reg.next_id : 1;
	if ((r = gate_vs_attach(d, vs)) < 0) {
		cg_vs_remove(&d->cg, vs);
		free(vs);
		return reply_err(rep, r, "create: %s: cannot attach the socket gate: %s (see vsd's log)",
				 name, strerror(-r));
	}
	if ((r = reg_add(&d->reg, vs)) == 0 && vs->net.dev[0] &&
	    (r = net_apply(d, vs, &(struct vs_net){ 0 })) < 0) {
		char dev[sizeof(vs->net.dev)];

		memcpy(dev, vs->net.dev, sizeof(dev));
		net_remove(d, vs);
		gate_vs_detach(d, vs);
		cg_vs_remove(&d->cg, vs);
		reg_remove(&d->reg, vs);
		return reply_err(rep, r, "create: %s: cannot set up its network share on %s: %s "
				 "(see vsd's log)", name, dev, strerror(-r));
	}
	if (r < 0 || (r = state_save(d->state_dir, &d->reg)) < 0) {
		net_remove(d, vs);
		gate_vs_detach(d, vs);
		cg_vs_remove(&d->cg, vs);
		if (reg_find(&d->reg, name))
			reg_remove(&d->reg, vs);
		else
			free(vs);
		return reply_err(rep, r, "create: %s: cannot save state: %s", name, strerror(-r));
	}
	log_info("created VS %s (id %" PRIu32 ")", vs->name, vs->id);
	return reply_vs(d, vs, rep, "create");
}

int
cmd_set(struct vsd *d, const struct request *req, struct reply *rep)
{
	struct gate_socket_cfg oldgate;
	struct vs_net oldnet;
	struct vs_limits old;
	struct vs_drift dr;
	struct vs *vs;
	int r, gate = gate_opts_given(req), net = net_opts_given(req);

	if (!(vs = lookup(d, req, rep, &r)))
		return r;
	if (vs->status != VS_OK)
		return reply_err(rep, -ENOENT, "set: the cgroups of VS '%s' are missing; destroy it", vs->name);
	if (req->argc <= 2 + req_flag(req, "json"))
		return reply_err(rep, -EINVAL, "set: nothing to change");
	old = vs->lim;
	oldgate = vs->gate;
	oldnet = vs->net;
	if ((r = parse_limits(req, &vs->lim, rep)) < 0 ||
	    (r = gate_opts_parse(req, &vs->gate, rep)) < 0 ||
	    (r = admit(d, vs, vs->lim.cpu, rep, "set")) < 0 ||
	    (r = member_may(d, rep, &vs->gate, &oldgate, "set")) < 0 ||
	    (r = net_opts_parse(d, req, vs, &vs->net, rep)) < 0) {
		vs->lim = old;
		vs->gate = oldgate;
		vs->net = oldnet;
		return r;
	}
	if (gate && !d->gate) {
		vs->lim = old;
		vs->gate = oldgate;
		vs->net = oldnet;
		return reply_err(rep, -EOPNOTSUPP, "set: the socket gate is off (no cgroup2 hierarchy)");
	}
	/* limits changed behind our back: write them all, not only what changes */
	drift_check(d, vs, &dr, "set");
	r = dr.n ? drift_restore(d, vs, dr.n, "set") : cg_vs_apply(&d->cg, vs, &old);
	if (r < 0 ||
	    (gate && (r = gate_vs_update(d, vs)) < 0) ||
	    (net && (r = net_apply(d, vs, &oldnet)) < 0) ||
	    (r = state_save(d->state_dir, &d->reg)) < 0) {
		struct vs_limits want = vs->lim;
		struct vs_net wantnet = vs->net;

		vs->lim = old;
		vs->gate = oldgate;
		vs->net = oldnet;
		cg_vs_apply(&d->cg, vs, &want);	/* put back what was written */
		if (gate)
			gate_vs_update(d, vs);
		if (net)
			net_apply(d, vs, &wantnet);
		return reply_err(rep, r, "set: %s: %s; nothing changed", vs->name, strerror(-r));
	}
	log_info("changed limits of VS %s", vs->name);
	if (gate)	/* VSs whose sockets belong to this one by a socket rule */
		gate_vs_update_all(d);
	return reply_vs(d, vs, rep, "set");
}

/* What destroy does with the processes it finds (cg_vs_clear's sort). */
struct clear_ctx {
	struct vsd		*d;
	const struct vs		*vs;
	struct guard		 g;
};

/*
 * A gated service's process serving the VS, not living in it (its home is
 * another VS): it goes home, never killed for a requester's VS. Anything
 * else is the VS's own and is killed. Only processes destroy checked first
 * can be found here, and their children (same owner, same kinds).
 */
static int
clear_sort(pid_t pid, void *arg, const char **to)
{
	struct clear_ctx *x = arg;
	const struct guard_sup *s;

	switch (guard_what(x->d, &x->g, pid, &s)) {
	case GUARD_SUPERVISOR:
	case GUARD_SERVICE:
		if (strcmp(s->home, x->vs->name) == 0)
			return CG_KILL;
		*to = s->home;
		return CG_MOVE;
	case GUARD_VSD:
	case GUARD_INIT:
	case GUARD_KTHREAD:
		return -EPERM;	/* came in after the check: stop */
	default:
		return CG_KILL;
	}
}

/*
 * Before anything changes: count the VS's own processes, and refuse if any
 * is one vsd never kills, or (for a client other than root) not the
 * client's, or a visiting service whose home is gone.
 */
static int
destroy_check(struct clear_ctx *x, struct reply *rep, size_t *own)
{
	struct vsd *d = x->d;
	const struct guard_sup *s;
	pid_t *pids = NULL;
	size_t n = 0, i;
	struct vs *home;
	int r = 0;

	*own = 0;
	/* a missing VS too: what is left of it may hold processes, which
	 * cg_vs_clear() would kill (cg_vs_pids_all skips a vanished dir) */
	if ((r = cg_vs_pids_all(&d->cg, x->vs, &pids, &n)) < 0)
		return reply_err(rep, r, "destroy: %s: cannot list its processes: %s",
				 x->vs->name, strerror(-r));
	for (i = 0; i < n && r == 0; i++) {
		switch (guard_what(d, &x->g, pids[i], &s)) {
		case GUARD_GONE:
			break;
		case GUARD_SUPERVISOR:
		case GUARD_SERVICE:
			if (strcmp(s->home, x->vs->name) == 0) {
				(*own)++;
				r = guard_owner(pids[i], rep->peer_uid, "destroy", rep);
			} else if (!(home = reg_find(&d->reg, s->home)) || home->status != VS_OK) {
				r = reply_err(rep, -EBUSY, "destroy: service %s (pid %d) serves VS %s "
					      "and has no home VS to go back to", s->name,
					      (int)pids[i], x->vs->name);
			}
			break;
		case GUARD_NONE:
			(*own)++;
			r = guard_owner(pids[i], rep->peer_uid, "destroy", rep);
			break;
		default:
			r = guard_check(d, &x->g, pids[i], 0, "destroy", rep);
			break;
		}
	}
	free(pids);
	return r;
}

int
cmd_destroy(struct vsd *d, const struct request *req, struct reply *rep)
{
	struct clear_ctx x = { .d = d };
	size_t n = 0;
	struct vs *vs;
	int r;

	if (!(vs = lookup(d, req, rep, &r)))
		return r;
	x.vs = vs;
	if ((r = guard_load(d, &x.g)) < 0)
		return reply_err(rep, r, "destroy: cannot find the gated services: %s", strerror(-r));
	if ((r = destroy_check(&x, rep, &n)) < 0)
		goto out;
	if (n > 0 && !req_flag(req, "force")) {
		r = reply_err(rep, -EBUSY, "destroy: VS '%s' has %zu process%s; --force kills them",
			      vs->name, n, n == 1 ? "" : "es");
		goto out;
	}
	/* Services serving the VS go home; the rest is killed; then the
	 * cgroups go (a VS that cannot go keeps its gate). */
	if ((r = cg_vs_clear(&d->cg, vs, clear_sort, &x)) < 0) {
		reply_err(rep, r, "destroy: %s: cannot empty and remove its cgroups: %s", vs->name,
			  strerror(-r));
		goto out;
	}
	net_remove(d, vs);
	if ((r = gate_vs_detach(d, vs)) < 0)
		log_warnx("destroy: %s: socket gate pins left under %s: %s", vs->name,
			  gate_socket_pindir(d->gate), strerror(-r));
	log_info("destroyed VS %s", vs->name);
	reg_remove(&d->reg, vs);
	if ((r = state_save(d->state_dir, &d->reg)) < 0)
		reply_err(rep, r, "destroy: cgroups removed, but the state was not saved: %s",
			  strerror(-r));
out:
	guard_free(&x.g);
	return r;
}

/*
 * A pid from a request, pinned by a pidfd; a thread's id is refused (attach
 * moves processes), with the process named. -errno after reply_err.
 */
static int
open_process(const char *v, pid_t *pid, struct reply *rep)
{
	const char *why;
	char path[64];
	uint64_t n;
	long tgid;
	int fd, r;

	if ((r = parse_u64(v, 1, 4194304, &n, &why)) < 0)
		return reply_err(rep, r, "attach: pid '%.32s' %s", v, why);
	*pid = (pid_t)n;
	if ((fd = (int)syscall(SYS_pidfd_open, *pid, 0)) >= 0)
		return fd;
	r = -errno;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)*pid);
	/* a thread: EINVAL before Linux 6.9, ENOENT since (without PIDFD_THREAD) */
	if (read_field_long(path, "Tgid", &tgid) == 0 && tgid != *pid)
		return reply_err(rep, -EINVAL, "attach: %d is a thread of process %ld, not a "
				 "process", (int)*pid, tgid);
	return reply_err(rep, r, "attach: no process %d", (int)*pid);
}

int
cmd_attach(struct vsd *d, const struct request *req, struct reply *rep)
{
	int fds[PROTO_ARGS_MAX], nfd = 0, i, r = 0;
	pid_t pids[PROTO_ARGS_MAX], now;
	struct guard g = { 0 };
	const char *v;
	struct vs *vs;

	if (!(vs = lookup(d, req, rep, &r)))
		return r;
	if (vs->status != VS_OK)
		return reply_err(rep, -ENOENT, "attach: the cgroups of VS '%s' are missing", vs->name);
	if ((r = member_may_enter(d, rep, vs, "attach")) < 0)
		return r;
	if ((r = guard_load(d, &g)) < 0)
		return reply_err(rep, r, "attach: cannot find the gated services: %s", strerror(-r));
	/* Pin and check every process first, so a bad one changes nothing. The
	 * pidfd, still alive after the check, says the check saw that process. */
	for (i = 0; (v = req_get_nth(req, "pid", i)); i++) {
		if ((fds[nfd] = open_process(v, &pids[nfd], rep)) < 0) {
			r = fds[nfd];
			goto out;
		}
		nfd++;
		if ((r = guard_check(d, &g, pids[nfd - 1], rep->peer_uid, "attach", rep)) < 0)
			goto out;
		if (pidfd_pid(fds[nfd - 1], &now) < 0) {
			r = reply_err(rep, -ESRCH, "attach: no process %d", (int)pids[nfd - 1]);
			goto out;
		}
	}
	if (nfd == 0) {
		r = reply_err(rep, -EINVAL, "attach: no pid given");
		goto out;
	}
	for (i = 0; i < nfd; i++) {
		if ((r = cg_vs_attach(&d->cg, vs, fds[i])) < 0) {
			reply_err(rep, r, "attach: %s: process %d: %s", vs->name, (int)pids[i],
				  strerror(-r));
			goto out;
		}
		log_info("attached process %d to VS %s", (int)pids[i], vs->name);
	}
out:
	for (i = 0; i < nfd; i++)
		close(fds[i]);
	guard_free(&g);
	return r;
}

int
cmd_exec_self(struct vsd *d, const struct request *req, struct reply *rep)
{
	struct guard g;
	struct vs *vs;
	pid_t pid;
	int r;

	if (!(vs = lookup(d, req, rep, &r)))
		return r;
	if (vs->status != VS_OK)
		return reply_err(rep, -ENOENT, "exec: the cgroups of VS '%s' are missing", vs->name);
	if ((r = member_may_enter(d, rep, vs, "exec")) < 0)
		return r;
	/* The client passes a pidfd of itself; it may move only itself this way. */
	if (req->fd < 0 || pidfd_pid(req->fd, &pid) < 0 || pid != rep->peer_pid)
		return reply_err(rep, -EPERM, "exec: the request did not carry the caller's pidfd");
	/* ...and only if it is a process anyone may move (not a gated service's) */
	if ((r = guard_load(d, &g)) < 0)
		return reply_err(rep, r, "exec: cannot find the gated services: %s", strerror(-r));
	r = guard_check(d, &g, pid, rep->peer_uid, "exec", rep);
	guard_free(&g);
	if (r < 0)
		return r;
	if ((r = cg_vs_attach(&d->cg, vs, req->fd)) < 0)
		return reply_err(rep, r, "exec: %s: %s", vs->name, strerror(-r));
	log_info("moved process %d into VS %s to run a command there", (int)pid, vs->name);
	return 0;
}
