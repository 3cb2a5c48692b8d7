// SPDX-License-Identifier: GPL-2.0-or-later
/* conns [NAME]: the open TCP connections the socket gate attributes to VSs. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "gates/socket/gate-socket.h"
#include "vsd.h"

struct conns_ctx {
	struct vsd	*d;
	const struct vs	*only;		/* NULL: every VS */
	struct buf	*out;
	int		 json;
	size_t		 n;
};

static int
conn_one(const struct vsd_conn_key *k, const struct vsd_conn_val *v, void *arg)
{
	struct conns_ctx *c = arg;
	const struct vs *vs = reg_find_id(&c->d->reg, v->vs_id);
	int active = k->dir == VSD_DIR_ACTIVE;
	char s[64], t[64], idbuf[16];
	const char *name;

	if (c->only && v->vs_id != c->only->id)
		return 0;
	/* A VS destroyed by another vsd on the same pins: show its id. */
	snprintf(idbuf, sizeof(idbuf), "#%" PRIu32, v->vs_id);
	name = vs ? vs->name : idbuf;
	gate_socket_fmt_addr(k->family, k->saddr, k->sport, s, sizeof(s));
	gate_socket_fmt_addr(k->family, k->daddr, k->dport, t, sizeof(t));
	if (c->json) {
		buf_printf(c->out, "%s{\"vs\": ", c->n ? ",\n " : "");
		buf_json_str(c->out, name);
		buf_printf(c->out, ", \"family\": \"%s\", \"direction\": \"%s\", \"local\": ",
			   k->family == AF_INET6 ? "inet6" : "inet", active ? "out" : "in");
		buf_json_str(c->out, active ? s : t);
		buf_printf(c->out, ", \"remote\": ");
		buf_json_str(c->out, active ? t : s);
		buf_printf(c->out, "}");
	} else {
		buf_printf(c->out, "%-31s %-6s %-4s %-47s %s\n", name,
			   k->family == AF_INET6 ? "inet6" : "inet", active ? "out" : "in",
			   active ? s : t, active ? t : s);
	}
	c->n++;
	return 0;
}

int
cmd_conns(struct vsd *d, const struct request *req, struct reply *rep)
{
	struct conns_ctx c = { .d = d, .out = &rep->out, .json = rep->json };
	const char *name = req_get(req, "name");
	int r;

	if (!d->gate)
		return reply_err(rep, -EOPNOTSUPP, "conns: the socket gate is off (no cgroup2 hierarchy)");
	if (name && !(c.only = reg_find(&d->reg, name)))
		return reply_err(rep, -ENOENT, "conns: no VS named '%.64s'", name);
	if (c.json)
		buf_printf(&rep->out, "[");
	else
		buf_printf(&rep->out, "%-31s %-6s %-4s %-47s %s\n", "VS", "FAMILY", "DIR",
			   "LOCAL", "REMOTE");
	if ((r = gate_socket_conns(d->gate, conn_one, &c)) < 0)
		return reply_err(rep, r, "conns: cannot read the connection map: %s", strerror(-r));
	if (c.json)
		buf_printf(&rep->out, "]\n");
	return 0;
}
