// SPDX-License-Identifier: GPL-2.0-or-later
/* Reading the socket gate's connection table and counters. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/log.h"
#include "lib/util.h"
#include "gate-socket.h"
#include "socket-priv.h"

int
gate_socket_conns(struct gate_socket *g, gate_socket_conn_fn fn, void *arg)
{
	/* Entries that come and go meanwhile are seen or not; none torn. */
	return conntab_walk(&g->conns, fn, arg);
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

uint32_t
gate_socket_share(struct gate_socket *g, size_t nvs)
{
	uint64_t usable = ((uint64_t)g->conns.mask + 1) / 4, per;
	uint32_t rsv = 1;

	if (!g->lim)
		return 0;
	/* Out and in each, for every VS: a quarter of the usable part in all. */
	per = usable / (4 * (nvs ? nvs : 1));
	if (per == 0)
		rsv = 0;
	while (per && (uint64_t)rsv * 2 <= per)
		rsv *= 2;
	if (__atomic_load_n(&g->lim->rsv, __ATOMIC_RELAXED) != rsv) {
		log_info("socket gate: %zu VS%s, each may record %u outgoing and %u incoming "
			 "connections, and %u more outgoing from a shared pool", nvs,
			 nvs == 1 ? "" : "s", rsv, rsv, (uint32_t)(usable / 2));
		__atomic_store_n(&g->lim->rsv, rsv, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&g->lim->pool, (uint32_t)(usable / 2), __ATOMIC_RELAXED);
	return rsv;
}

void
gate_socket_connlim(const struct gate_socket *g, struct vsd_connlim *out)
{
	memset(out, 0, sizeof(*out));
	if (!g->lim)
		return;
	out->rsv = __atomic_load_n(&g->lim->rsv, __ATOMIC_RELAXED);
	out->pool = __atomic_load_n(&g->lim->pool, __ATOMIC_RELAXED);
	out->pool_used = __atomic_load_n(&g->lim->pool_used, __ATOMIC_RELAXED);
	out->flags = __atomic_load_n(&g->lim->flags, __ATOMIC_RELAXED);
}

int
gate_socket_set_record_all(struct gate_socket *g, int all)
{
	uint32_t old;

	if (!g->lim)
		return -ENODEV;
	/* the other bits are not ours to change */
	if (all)
		old = __atomic_fetch_or(&g->lim->flags, VSD_CONNLIM_ALL, __ATOMIC_SEQ_CST);
	else
		old = __atomic_fetch_and(&g->lim->flags, ~VSD_CONNLIM_ALL, __ATOMIC_SEQ_CST);
	return !!(old & VSD_CONNLIM_ALL);
}

int
gate_socket_gport_add(struct gate_socket *g, uint16_t port, int delta)
{
	size_t len = 65536 * sizeof(uint32_t);	/* VSD_GPORTS_ELEMS * 8 */
	uint32_t *n, old, v;
	char *p;
	int r;

	/* through the mapping, atomically, as the accept gates count */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, g->map_fd[GS_MAP_GPORTS], 0);
	if (p == MAP_FAILED) {
		r = -errno;
		log_warn("socket gate: cannot map %s", VSD_MAP_GPORTS);
		return r;
	}
	n = (uint32_t *)p + port;
	old = __atomic_load_n(n, __ATOMIC_SEQ_CST);
	do {
		/* never below 0: that would read as 4 billion listeners */
		if (delta < 0 && old < (uint32_t)-delta) {
			munmap(p, len);
			log_warnx("socket gate: port %u has %u gated listeners, not %d",
				  port, old, -delta);
			return -ERANGE;
		}
		v = old + (uint32_t)delta;
	} while (!__atomic_compare_exchange_n(n, &old, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	r = v > INT32_MAX ? -ERANGE : (int)v;
	munmap(p, len);
	return r;
}

int
gate_socket_vs_conns(struct gate_socket *g, uint32_t vs_id, struct vsd_vs_conns *out)
{
	if (bpf_map_lookup_elem(g->map_fd[GS_MAP_VSCONNS], &vs_id, out) < 0) {
		memset(out, 0, sizeof(*out));
		return -errno;
	}
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

