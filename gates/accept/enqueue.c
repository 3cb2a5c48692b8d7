// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One drained connection into its VS's queue: its requester by the socket
 * gate's table (or its Unix peer's cgroup, or a remote line's mark), home
 * when unknown, and that VS's share kept sampled while it has connections.
 * Also the kernel's accept queue length, which the drain and the fast path
 * read.
 */
#include "config.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <sys/socket.h>

#include "gate.h"

struct gate_vs *
gate_requester(struct gate *g, struct gated_listener *l, struct queued_conn *c)
{
	/* a listener bound to one address: every connection's local end is
	 * that address (no getsockname per connection); a Unix peer by the
	 * cgroup of its socket (unixpeer.c) */
	uint32_t id = l->family == AF_UNIX ? unixpeer_lookup(&g->tab, c->fd) :
	    conns_lookup(c->fd, l->local_len ? &l->local : NULL, &c->peer, c->peerlen);

	/* a TCP connection not made on this host: a remote line's mark? (the
	 * marks come from nftables on incoming SYNs; a Unix socket has none) */
	if (id == 0 && l->family != AF_UNIX)
		id = conns_by_mark(c->fd);
	return gate_vs_by_id(g, id);
}

/*
 * vsd pushes every change of the table before it answers the command that
 * made it (vs-table-vsd.c), so an id we do not know is a VS that is gone:
 * NULL, and the caller serves the connection at home. Nothing on this path
 * asks vsd.
 */
struct gate_vs *
gate_vs_by_id(struct gate *g, uint32_t id)
{
	return id != 0 ? vs_table_find(&g->tab, id) : NULL;
}

void
gate_enqueue(struct gate *g, struct gated_listener *l, struct queued_conn *c,
    struct gate_vs *v, uint64_t now)
{
	if (!v) {
		c->vs_id = g->home;
		v = vs_table_find(&g->tab, g->home);
	} else {
		c->vs_id = v->id;
	}
	gate_vs_active(g, v, now);
	trace_arrive(g, l, c);
	queue_push_tail(l, c, &g->tab);
}

void
gate_vs_active(struct gate *g, struct gate_vs *v, uint64_t now)
{
	(void)g;
	if (!v)
		return;
	/* the window is kept current by gate_tick(), off this path; only a
	 * VS seen for the first time needs its first sample */
	if (!v->sample_t)
		share_sample(v, now);
	v->active_t = now;
}

/*
 * How many connections wait in the kernel's accept queue: a listener's
 * tcp_info reports it in tcpi_unacked (tcp_get_info(), Linux 2.6.x). One call
 * per drain instead of a poll() before every accept4() and one after the
 * last. -1 if that fails (then we poll).
 */
int
gate_backlog(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 ||
	    len < offsetof(struct tcp_info, tcpi_unacked) + sizeof(ti.tcpi_unacked) ||
	    ti.tcpi_state != TCP_LISTEN)
		return -1;
	return (int)ti.tcpi_unacked;
}
