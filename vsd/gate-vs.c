// SPDX-License-Identifier: GPL-2.0-or-later
/* The socket gate as the VS commands see it: options, attach, display. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gate-vs.h"
#include "lib/log.h"
#include "gates/socket/tos.h"
#include "lib/util.h"
#include "rules/rules.h"

int
gate_opts_given(const struct request *req)
{
	return req_get(req, "tos") || req_get(req, "dscp") || req_get(req, "mark") ||
	       req_get(req, "priority");
}

int
gate_opts_parse(const struct request *req, struct gate_socket_cfg *cfg, struct reply *rep)
{
	const char *cmd = rep->cmd, *tos = req_get(req, "tos"), *dscp = req_get(req, "dscp");
	const char *mark = req_get(req, "mark"), *prio = req_get(req, "priority"), *why;
	struct gate_socket_cfg c = *cfg;
	uint8_t v8;
	int r;

	if (tos && dscp)
		return reply_err(rep, -EINVAL, "%s: --tos and --dscp both set the TOS byte; give one",
				 cmd);
	if (tos && !strcmp(tos, "none")) {
		c.flags &= ~VSD_CFG_TOS;
		c.tos = 0;
	} else if (tos) {
		if ((r = parse_tos(tos, &v8, &why)) < 0)
			return reply_err(rep, r, "%s: --tos %.32s %s", cmd, tos, why);
		c.flags |= VSD_CFG_TOS;
		c.tos = v8;
	}
	if (dscp && !strcmp(dscp, "none")) {
		c.flags &= ~VSD_CFG_TOS;
		c.tos = 0;
	} else if (dscp) {
		/* parse_dscp gives the TOS byte: the DSCP is its upper six bits */
		if ((r = parse_dscp(dscp, &v8, &why)) < 0)
			return reply_err(rep, r, "%s: --dscp %.32s %s", cmd, dscp, why);
		c.flags |= VSD_CFG_TOS;
		c.tos = v8;
	}
	if (mark && !strcmp(mark, "none")) {
		c.flags &= ~VSD_CFG_MARK;
		c.mark = 0;
	} else if (mark) {
		if ((r = parse_mark(mark, &c.mark, &why)) < 0)
			return reply_err(rep, r, "%s: --mark %.32s %s", cmd, mark, why);
		c.flags |= VSD_CFG_MARK;
	}
	if (prio && !strcmp(prio, "none")) {
		c.flags &= ~VSD_CFG_PRIO;
		c.priority = 0;
	} else if (prio) {
		if ((r = parse_mark(prio, &c.priority, &why)) < 0)
			return reply_err(rep, r, "%s: --priority %.32s %s", cmd, prio, why);
		c.flags |= VSD_CFG_PRIO;
	}
	*cfg = c;
	return 0;
}

/*
 * The socket rule (vsrules(5)) for sockets made in vs: the VS they belong
 * to, whose id the connection map records and whose TOS, mark and priority
 * they get: the target of (socket, vs) => (target), else vs itself (the
 * default rule, creator).
 */
static const struct vs *
socket_owner(struct vsd *d, const struct vs *vs)
{
	struct rules_decision dec;
	const struct vs *t;

	if (!d->rules)
		return vs;
	dec = rules_query_name(d->rules, RULES_GATE_SOCKET, vs->name, NULL);
	if (dec.action != RULES_TO_VS || dec.vs < 0)
		return vs;
	t = reg_find(&d->reg, d->rules->vs[dec.vs].name);
	return t && t->status == VS_OK ? t : vs;
}

const struct gate_socket_cfg *
gate_vs_settings(struct vsd *d, const struct vs *vs)
{
	return &socket_owner(d, vs)->gate;
}

/* Record what the map holds for vs now (r == 0), or that it is not known. */
static int
written(struct vs *vs, const struct vs *o, int r)
{
	vs->gate_written_id = r == 0 ? o->id : 0;
	vs->gate_written = o->gate;
	return r;
}

/*
 * Each VS's share of the connection table follows the number of VSs, with
 * vs counted in (adding) or out (removing) whether or not the registry
 * holds it yet.
 */
static void
gate_vs_share(struct vsd *d, const struct vs *vs, int adding)
{
	size_t n = d->reg.n;

	if (adding && !reg_find_id(&d->reg, vs->id))
		n++;
	else if (!adding && reg_find_id(&d->reg, vs->id) && n > 0)
		n--;
	gate_socket_share(d->gate, n);
}

int
gate_vs_attach(struct vsd *d, struct vs *vs)
{
	const struct vs *o = socket_owner(d, vs);
	char dir[PATH_MAX];
	int r;

	if (!d->gate)
		return 0;
	if ((r = cg_vs_bpf_path(&d->cg, vs, dir, sizeof(dir))) < 0)
		return r;
	gate_vs_share(d, vs, 1);
	return written(vs, o, gate_socket_attach(d->gate, dir, vs->cg2_id, o->id, &o->gate));
}

/*
 * An entry already holding the owner and its settings is not written
 * again: after a rule file changes, every VS is updated here, and a write
 * into the cgroup storage map allocates (10,000 of them were a third of
 * applying a one-line change to a 10,000-VS file).
 */
int
gate_vs_update(struct vsd *d, struct vs *vs)
{
	const struct vs *o = socket_owner(d, vs);
	const struct gate_socket_cfg *w = &vs->gate_written, *c = &o->gate;

	if (!d->gate)
		return 0;
	if (vs->gate_written_id == o->id && w->flags == c->flags && w->tos == c->tos &&
	    w->mark == c->mark && w->priority == c->priority)
		return 0;
	return written(vs, o, gate_socket_update(d->gate, vs->cg2_id, o->id, &o->gate));
}

void
gate_vs_update_all(struct vsd *d)
{
	size_t i;
	int r;

	for (i = 0; d->gate && i < d->reg.n; i++)
		if (d->reg.v[i]->status == VS_OK && (r = gate_vs_update(d, d->reg.v[i])) < 0)
			log_warnx("VS %s: socket gate settings not updated: %s", d->reg.v[i]->name,
				  strerror(-r));
}

int
gate_vs_detach(struct vsd *d, struct vs *vs)
{
	int r;

	if (!d->gate)
		return 0;
	vs->gate_written_id = 0;
	r = gate_socket_detach(d->gate, vs->id);
	gate_vs_share(d, vs, 0);
	return r;
}

#define CONNS_CHECK_NS	(10 * 1000000000ull)

int
gate_vs_timeout_ms(struct vsd *d)
{
	uint64_t now = mono_ns();

	if (!d->gate || d->reg.n == 0)
		return -1;
	if (!d->conns_check_at)
		d->conns_check_at = now + CONNS_CHECK_NS;
	return d->conns_check_at <= now ? 0 : (int)((d->conns_check_at - now) / 1000000 + 1);
}

/*
 * The counters live in the kernel and count on their own; vsd only reports
 * them, so a VS that keeps hitting its share costs one line per 10 s, and
 * after a restart the first line gives the totals so far.
 */
void
gate_vs_tick(struct vsd *d)
{
	struct vsd_connlim lim;
	struct vsd_vs_conns vc;
	uint64_t now = mono_ns(), lost;
	size_t i;

	if (!d->gate || !d->conns_check_at || now < d->conns_check_at)
		return;
	d->conns_check_at = now + CONNS_CHECK_NS;
	gate_socket_connlim(d->gate, &lim);
	for (i = 0; i < d->reg.n; i++) {
		struct vs *vs = d->reg.v[i];

		if (vs->status != VS_OK || gate_socket_vs_conns(d->gate, vs->id, &vc) < 0)
			continue;
		lost = vc.refused + vc.unrecorded;
		if (lost > vs->conns_lost)
			log_warnx("VS %s: its share of the connection table is used up (%" PRIu32
				  " out, %" PRIu32 " in, reserve %" PRIu32 " each; pool %" PRIu32 "/%"
				  PRIu32 "): %" PRIu64 " connect() refused, %" PRIu64 " connections "
				  "not recorded so far", vs->name, vc.out, vc.in, lim.rsv,
				  lim.pool_used, lim.pool, (uint64_t)vc.refused,
				  (uint64_t)vc.unrecorded);
		vs->conns_lost = lost;
	}
}

/*
 * The connection map's counters, read at most every 50 ms: 'vsctl list'
 * shows them for every VS, and they are shared by all VSs.
 */
static int
gate_stats(struct vsd *d, uint64_t st[VSD_STAT_MAX])
{
	static uint64_t cache[VSD_STAT_MAX];
	static struct timespec when;
	struct timespec now;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (when.tv_sec == 0 || (now.tv_sec - when.tv_sec) * 1000000000L +
	    (now.tv_nsec - when.tv_nsec) > 50000000L) {
		if ((r = gate_socket_stats(d->gate, cache)) < 0)
			return r;
		when = now;
	}
	memcpy(st, cache, sizeof(cache));
	return 0;
}

static void
json_u32_if(struct buf *b, const char *key, int set, uint32_t v)
{
	if (set)
		buf_printf(b, "\"%s\": %" PRIu32, key, v);
	else
		buf_printf(b, "\"%s\": null", key);
}

void
gate_vs_json(struct vsd *d, const struct vs *vs, struct buf *b)
{
	const struct gate_socket_cfg *c = &vs->gate;
	uint64_t st[VSD_STAT_MAX] = { 0 };
	struct vsd_connlim lim = { 0 };
	struct vsd_vs_conns vc = { 0 };
	const char *name = c->flags & VSD_CFG_TOS ? dscp_name(c->tos >> 2) : NULL;

	buf_printf(b, ", \"gate\": {");
	json_u32_if(b, "tos", c->flags & VSD_CFG_TOS, c->tos);
	buf_printf(b, ", \"dscp\": ");
	if (!(c->flags & VSD_CFG_TOS))
		buf_printf(b, "null");
	else if (name && (c->tos & 3) == 0)
		buf_json_str(b, name);
	else
		buf_printf(b, "%u", c->tos >> 2);
	buf_printf(b, ", ");
	json_u32_if(b, "mark", c->flags & VSD_CFG_MARK, c->mark);
	buf_printf(b, ", ");
	json_u32_if(b, "priority", c->flags & VSD_CFG_PRIO, c->priority);
	buf_printf(b, ", \"attached\": %s",
		   d->gate && gate_socket_attached(d->gate, vs->id) == 1 ? "true" : "false");
	if (d->gate) {
		gate_stats(d, st);
		gate_socket_connlim(d->gate, &lim);
		gate_socket_vs_conns(d->gate, vs->id, &vc);
	}
	/* The connection map is shared by all VSs; so are its counter and mode. */
	buf_printf(b, ", \"conns_full\": %" PRIu64, st[VSD_STAT_CONNS_FULL]);
	buf_printf(b, ", \"record\": %s", !d->gate ? "null" :
		   lim.flags & VSD_CONNLIM_ALL ? "\"all\"" : "\"gated\"");
	/* This VS's share of it (gates/socket/socket.h). */
	buf_printf(b, ", \"conns\": {\"out\": %" PRIu32 ", \"in\": %" PRIu32
		   ", \"reserve\": %" PRIu32 ", \"pool\": %" PRIu32 ", \"pool_used\": %" PRIu32
		   ", \"refused\": %" PRIu64 ", \"unrecorded\": %" PRIu64 "}}",
		   vc.out, vc.in, lim.rsv, lim.pool, lim.pool_used, (uint64_t)vc.refused,
		   (uint64_t)vc.unrecorded);
}

void
gate_vs_text(struct vsd *d, const struct vs *vs, struct buf *b)
{
	const struct gate_socket_cfg *c = &vs->gate;
	uint64_t st[VSD_STAT_MAX] = { 0 };
	struct vsd_connlim lim;
	struct vsd_vs_conns vc;
	const char *name;

	if (!d->gate) {
		buf_printf(b, "socket gate: off (no cgroup2 hierarchy)\n");
		return;
	}
	buf_printf(b, "socket gate: %s", gate_socket_attached(d->gate, vs->id) == 1 ?
		   "attached" : "NOT attached");
	if (c->flags & VSD_CFG_TOS) {
		name = dscp_name(c->tos >> 2);
		buf_printf(b, ", tos 0x%02x (dscp %s%s%u)", c->tos, name ? name : "",
			   name ? " = " : "", c->tos >> 2);
	} else {
		buf_printf(b, ", tos -");
	}
	if (c->flags & VSD_CFG_MARK)
		buf_printf(b, ", mark %" PRIu32, c->mark);
	else
		buf_printf(b, ", mark -");
	if (c->flags & VSD_CFG_PRIO)
		buf_printf(b, ", priority %" PRIu32, c->priority);
	buf_printf(b, "\n");
	if (gate_stats(d, st) == 0)
		buf_printf(b, "connection map: %" PRIu64 " recorded, %" PRIu64 " removed, "
			   "%" PRIu64 " not recorded because the map was full\n",
			   st[VSD_STAT_CONNS_ADDED], st[VSD_STAT_CONNS_REMOVED],
			   st[VSD_STAT_CONNS_FULL]);
	gate_socket_connlim(d->gate, &lim);
	buf_printf(b, "recording: %s\n", lim.flags & VSD_CONNLIM_ALL ?
		   "all (every TCP connection of a VS, both sides; vsd --record-conns all)" :
		   "gated (a VS's connections to gated listeners; vsd --record-conns gated)");
	if (gate_socket_vs_conns(d->gate, vs->id, &vc) == 0)
		buf_printf(b, "connections recorded: %" PRIu32 " out, %" PRIu32 " in (reserve %"
			   PRIu32 " each, shared pool %" PRIu32 "/%" PRIu32 " in use); %" PRIu64
			   " connect() refused, %" PRIu64 " not recorded\n", vc.out, vc.in, lim.rsv,
			   lim.pool_used, lim.pool, (uint64_t)vc.refused,
			   (uint64_t)vc.unrecorded);
}
