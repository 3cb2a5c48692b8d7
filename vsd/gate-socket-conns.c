// SPDX-License-Identifier: GPL-2.0-or-later
/* Reading the socket gate's connection map and counters. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "gate-socket.h"
#include "gate-socket-priv.h"

#define GS_BATCH	256

int
gate_socket_conns(struct gate_socket *g, gate_socket_conn_fn fn, void *arg)
{
	struct vsd_conn_key keys[GS_BATCH];
	struct vsd_conn_val vals[GS_BATCH];
	struct vsd_conn_key batch;	/* opaque cursor; a hash map's is 4 bytes */
	int fd = g->map_fd[GS_MAP_CONNS], first = 1, done = 0, r;
	__u32 n, i;

	/*
	 * Batch lookup walks the hash map bucket by bucket, so entries that
	 * come and go meanwhile neither repeat nor restart the walk, as
	 * get_next_key would after a deletion (Linux 5.6+).
	 */
	while (!done) {
		n = GS_BATCH;
		r = bpf_map_lookup_batch(fd, first ? NULL : &batch, &batch,
					 keys, vals, &n, NULL);
		if (r < 0) {
			r = -errno;
			if (r != -ENOENT) {
				log_warn("socket gate: reading the connection map");
				return r;
			}
			done = 1;	/* ENOENT: this was the last batch */
		}
		first = 0;
		for (i = 0; i < n; i++)
			if ((r = fn(&keys[i], &vals[i], arg)) != 0)
				return r;
	}
	return 0;
}

int
gate_socket_stats(struct gate_socket *g, uint64_t out[VSD_STAT_MAX])
{
	int ncpu = libbpf_num_possible_cpus(), c;
	uint64_t *v;
	__u32 i;

	if (ncpu < 0)
		return ncpu;
	if (!(v = calloc(ncpu, sizeof(*v))))
		return -ENOMEM;
	for (i = 0; i < VSD_STAT_MAX; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(g->map_fd[GS_MAP_STATS], &i, v) < 0) {
			int r = -errno;
			log_warn("socket gate: reading the counters");
			free(v);
			return r;
		}
		for (c = 0; c < ncpu; c++)
			out[i] += v[c];
	}
	free(v);
	return 0;
}

char *
gate_socket_fmt_addr(int family, const uint32_t addr[4], uint16_t port,
		     char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	snprintf(buf, len, family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, port);
	return buf;
}
