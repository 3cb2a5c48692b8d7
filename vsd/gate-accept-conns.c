// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Classification: which VS opened this connection? The socket gate's sockops
 * program records every connection's 4-tuple when it starts (active side, at
 * BPF_SOCK_OPS_TCP_CONNECT_CB, before the SYN leaves), so the entry exists
 * before the connection can reach an accept queue. Layout: gates/socket.h.
 *
 * The map is pinned by vsd and outlives vsd restarts; we hold our own fd to
 * it. If it is not there (socket gate not loaded), every connection is
 * "unknown" and goes to the home VS; we retry opening it now and then.
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "gate-accept.h"
#include "gates/socket.h"
#include "log.h"

static char *map_path;
static int map_fd = -1;
static uint64_t next_try;

void
conns_init(const char *path)
{
	free(map_path);
	map_path = path ? strdup(path) : NULL;
	next_try = 0;
}

static int
conns_fd(void)
{
	uint64_t now;

	if (map_fd >= 0 || !map_path)
		return map_fd;
	now = now_ns();
	if (now < next_try)
		return -1;
	next_try = now + 1000000000ull;	/* once a second while it is missing */
	map_fd = bpf_obj_get(map_path);
	if (map_fd >= 0)
		log_debug("connection map %s opened", map_path);
	return map_fd;
}

/* Fill one side of the key; IPv4-mapped IPv6 folds to AF_INET (socket.h). */
static int
put_addr(const struct sockaddr_storage *ss, __u8 *family, __u32 addr[4], __u16 *port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		*family = AF_INET;
		addr[0] = in->sin_addr.s_addr;
		*port = ntohs(in->sin_port);
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)ss;

		*port = ntohs(in6->sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			*family = AF_INET;
			memcpy(&addr[0], &in6->sin6_addr.s6_addr[12], 4);
		} else {
			*family = AF_INET6;
			memcpy(addr, &in6->sin6_addr, 16);
		}
		return 0;
	}
	return -EAFNOSUPPORT;
}

uint32_t
conns_lookup(int fd, const struct sockaddr_storage *local_fixed,
    const struct sockaddr_storage *peer, socklen_t peerlen)
{
	struct sockaddr_storage local;
	socklen_t ll = sizeof(local);
	struct vsd_conn_key key;
	struct vsd_conn_val val;
	__u8 fam2;
	int mfd = conns_fd();

	if (mfd < 0 || peerlen == 0)
		return 0;
	if (local_fixed)
		local = *local_fixed;
	else if (getsockname(fd, (struct sockaddr *)&local, &ll) < 0)
		return 0;
	memset(&key, 0, sizeof(key));
	key.dir = VSD_DIR_ACTIVE;
	if (put_addr(peer, &key.family, key.saddr, &key.sport) < 0 ||
	    put_addr(&local, &fam2, key.daddr, &key.dport) < 0)
		return 0;
	if (bpf_map_lookup_elem(mfd, &key, &val) < 0)
		return 0;
	return val.vs_id;
}
