// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Classification: which VS opened this connection? The socket gate's sockops
 * program records every connection's 4-tuple when the connecting side is
 * established (BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB, when the SYN-ACK
 * arrives, before the final ACK that puts the connection into the accept
 * queue). Layout: gates/socket/socket.h.
 *
 * The table is pinned by vsd and outlives vsd restarts; we map it
 * read-only and look keys up in our own memory, without a bpf() call per
 * accept. If it is not there (socket gate not loaded), every connection is
 * "unknown" and goes to the home VS; we retry opening it now and then.
 * A connection the table does not know may come from another host: then
 * the mark vsd's remote lines gave it names the VS (conns_by_mark()).
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gates/socket/conntab.h"
#include "gate.h"
#include "gates/socket/socket.h"
#include "lib/log.h"
#include "lib/remote-mark.h"

static char *map_path;
static struct conntab tab;
static uint64_t next_try;
static int warned;

void
conns_init(const char *path)
{
	free(map_path);
	map_path = path ? strdup(path) : NULL;
	next_try = 0;
}

static const struct conntab *
conns_tab(void)
{
	uint64_t now;
	int r;

	if (tab.slot || !map_path)
		return tab.slot ? &tab : NULL;
	now = now_ns();
	if (now < next_try)
		return NULL;
	next_try = now + 1000000000ull;	/* once a second while it is missing */
	if ((r = conntab_open(&tab, map_path)) == 0) {
		log_debug("connection table %s mapped", map_path);
		return &tab;
	}
	if (r != -ENOENT && !warned++)
		log_warnx("connection table %s: %s", map_path,
			  r == -EINVAL ? "not a table of this vsd's layout" : strerror(-r));
	return NULL;
}

uint32_t
conns_lookup(int fd, const struct sockaddr_storage *local_fixed,
    const struct sockaddr_storage *peer, socklen_t peerlen)
{
	struct sockaddr_storage local;
	socklen_t ll = sizeof(local);
	struct vsd_conn_key key;
	struct vsd_conn_val val;
	const struct conntab *t = conns_tab();

	if (!t || peerlen == 0)
		return 0;
	if (local_fixed)
		local = *local_fixed;
	else if (getsockname(fd, (struct sockaddr *)&local, &ll) < 0)
		return 0;
	if (conntab_accepted_key(peer, &local, &key) < 0)
		return 0;
	if (conntab_lookup(t, &key, &val) < 0)
		return 0;
	return val.vs_id;
}

/*
 * A connection from another host is not in our table (the socket gate that
 * recorded it runs there), but its SYN carried the VS's DSCP; vsd's
 * nftables table turned that into a mark (vsd/remote.c), which the accepted
 * socket took because net.ipv4.tcp_fwmark_accept is on (Linux 3.15+,
 * per network namespace; IPv6 too). getsockopt(SO_MARK) needs no
 * privilege. A mark that is not ours, or none, says nothing: 0.
 */
uint32_t
conns_by_mark(int fd)
{
	uint32_t mark = 0;
	socklen_t len = sizeof(mark);

	if (getsockopt(fd, SOL_SOCKET, SO_MARK, &mark, &len) < 0 || len != sizeof(mark))
		return 0;
	return remote_mark_id(mark);
}
