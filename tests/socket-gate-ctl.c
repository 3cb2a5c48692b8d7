// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Drives vsd's socket gate loader (gates/socket/socket.c) directly, one call
 * per run, so the standalone tests can exercise load, adopt, attach and
 * detach without the daemon.  Each run is a fresh "loader process": what
 * survives between runs is what was pinned.
 *
 *   socket-gate-ctl ROOT open
 *   socket-gate-ctl ROOT attach|update CGDIR VSID [tos=N] [mark=N] [prio=N]
 *   socket-gate-ctl ROOT detach VSID
 *   socket-gate-ctl ROOT attached VSID
 *   socket-gate-ctl ROOT conns
 *   socket-gate-ctl ROOT stats
 *   socket-gate-ctl ROOT purge
 *   socket-gate-ctl ROOT record all|gated   what the programs record
 *   socket-gate-ctl ROOT gport PORT DELTA   add DELTA to PORT's count of
 *                                   gated listeners (as an accept gate
 *                                   registering one), print "gport=N"
 *   socket-gate-ctl ROOT accept ADDR [gated]
 *                                   listen on ADDR (any port, printed as
 *                                   "listening PORT"), accept one connection
 *                                   and print the VS the map names for it,
 *                                   as the accept gate looks it up; with
 *                                   gated, its port counts as gated until
 *                                   then (vsd_gports), as a gate registers
 *   socket-gate-ctl ROOT scale N    time attach and detach of N VSs (cgroup2
 *                                   dirs ROOT/<i> below the cgroup it runs
 *                                   in, made and removed)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/cgroup.h"
#include "lib/log.h"
#include "gates/socket/gate-socket.h"
#include "gates/socket/conntab.h"
#include "lib/util.h"

/* The connection table of the instance with this cgroup root, read-only. */
static int
conns_open(const char *cgroup_root, struct conntab *t)
{
	char path[PATH_MAX];
	int r;

	while (*cgroup_root == '/')
		cgroup_root++;
	if ((r = path_fmt(path, sizeof(path), "%s/%s/%s", VSD_BPFFS, cgroup_root,
			  VSD_MAP_CONNS)) < 0)
		return r;
	if ((r = conntab_open(t, path)) < 0)
		log_warnx("socket gate: cannot map the connection table %s: %s", path,
			  strerror(-r));
	return r;
}

/* The key of an accepted socket's connecting side (conntab_accepted_key). */
static int
accepted_key(int sock_fd, struct vsd_conn_key *k)
{
	struct sockaddr_storage peer, self;
	socklen_t plen = sizeof(peer), slen = sizeof(self);

	if (getpeername(sock_fd, (struct sockaddr *)&peer, &plen) < 0 ||
	    getsockname(sock_fd, (struct sockaddr *)&self, &slen) < 0)
		return -errno;
	return conntab_accepted_key(&peer, &self, k);
}

/* The VS that made the connection sock_fd accepted: 0, or -ENOENT. */
static int
lookup_accepted(const struct conntab *t, int sock_fd, struct vsd_conn_val *v)
{
	struct vsd_conn_key k;
	int r;

	if ((r = accepted_key(sock_fd, &k)) < 0)
		return r;
	return conntab_lookup(t, &k, v);
}

static int
parse_cfg(int argc, char **argv, struct gate_socket_cfg *cfg)
{
	int i;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < argc; i++) {
		unsigned long v = strtoul(strchr(argv[i], '=') ? strchr(argv[i], '=') + 1 : "",
					  NULL, 0);

		if (!strncmp(argv[i], "tos=", 4)) {
			cfg->flags |= VSD_CFG_TOS;
			cfg->tos = v;
		} else if (!strncmp(argv[i], "mark=", 5)) {
			cfg->flags |= VSD_CFG_MARK;
			cfg->mark = v;
		} else if (!strncmp(argv[i], "prio=", 5)) {
			cfg->flags |= VSD_CFG_PRIO;
			cfg->priority = v;
		} else {
			fprintf(stderr, "socket-gate-ctl: unknown setting %s\n", argv[i]);
			return -EINVAL;
		}
	}
	return 0;
}

static int
print_conn(const struct vsd_conn_key *k, const struct vsd_conn_val *v, void *arg)
{
	char s[64], d[64];
	int active = k->dir == VSD_DIR_ACTIVE;

	gate_socket_fmt_addr(k->family, k->saddr, k->sport, s, sizeof(s));
	gate_socket_fmt_addr(k->family, k->daddr, k->dport, d, sizeof(d));
	printf("vs=%u cgroup=%llu family=%s dir=%s local=%s remote=%s\n", v->vs_id,
	       (unsigned long long)v->cgroup_id, k->family == AF_INET6 ? "inet6" : "inet",
	       active ? "active" : "passive", active ? s : d, active ? d : s);
	return 0;
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The gate's share of creating and destroying VSs at scale: n cgroup2
 * directories ROOT/<i> below the cgroup we run in (where vsd would put a
 * root of that name, never at the hierarchy's root), removed again whatever
 * happens.
 */
static int
scale(struct gate_socket *g, const char *root, int n)
{
	struct gate_socket_cfg cfg = { .flags = VSD_CFG_TOS | VSD_CFG_MARK, .tos = 0x28, .mark = 1 };
	double *at = calloc(n, sizeof(double)), *dt = calloc(n, sizeof(double)), t0;
	static struct cg_ctx cg;	/* large: off the stack */
	char base[PATH_MAX], dir[PATH_MAX + 16];
	struct stat sb;
	int i, made = 0, r;

	if (!at || !dt) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = cg_init(&cg, "/sys/fs/cgroup", "/proc/self/cgroup", root)) < 0 ||
	    (r = cg_root_path(&cg, CG_R_BPF, base, sizeof(base))) < 0)
		goto out;
	if (mkdir(base, 0755) < 0) {
		r = -errno;
		goto out;
	}
	for (; made < n && r == 0; made++) {
		snprintf(dir, sizeof(dir), "%s/%d", base, made);
		if (mkdir(dir, 0755) < 0 || stat(dir, &sb) < 0) {
			r = -errno;
			break;
		}
		t0 = now_us();
		r = gate_socket_attach(g, dir, sb.st_ino, made + 1, &cfg);
		at[made] = now_us() - t0;
	}
	for (i = 0; i < made; i++) {
		t0 = now_us();
		gate_socket_detach(g, i + 1);
		dt[i] = now_us() - t0;
		snprintf(dir, sizeof(dir), "%s/%d", base, i);
		rmdir(dir);
	}
	rmdir(base);
	if (r < 0)
		goto out;
	qsort(at, n, sizeof(double), cmp_dbl);
	qsort(dt, n, sizeof(double), cmp_dbl);
	printf("attach: %d VSs, median %.0f us, p90 %.0f us, max %.0f us\n", n,
	       at[n / 2], at[n * 9 / 10], at[n - 1]);
	printf("detach: %d VSs, median %.0f us, p90 %.0f us, max %.0f us\n", n,
	       dt[n / 2], dt[n * 9 / 10], dt[n - 1]);
out:
	free(at);
	free(dt);
	return r;
}

/* The accept gate's lookup, from another process than vsd. */
static int
accept_lookup(struct gate_socket *g, const char *root, const char *addr, int gated)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct vsd_conn_val v;
	struct conntab t;
	int l, c, r, one = 1, v6 = strchr(addr, ':') != NULL, port;
	char buf[256];
	ssize_t n;

	if ((r = conns_open(root, &t)) < 0)
		return r;
	if ((v6 && inet_pton(AF_INET6, addr, &a6.sin6_addr) != 1) ||
	    (!v6 && inet_pton(AF_INET, addr, &a4.sin_addr) != 1))
		return -EINVAL;
	if ((l = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0)) < 0)
		return -errno;
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, v6 ? (struct sockaddr *)&a6 : (struct sockaddr *)&a4,
		 v6 ? sizeof(a6) : sizeof(a4)) < 0 || listen(l, 8) < 0 ||
	    getsockname(l, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
			: ((struct sockaddr_in *)&ss)->sin_port);
	/* before the client can connect, as an accept gate registers */
	if (gated && (r = gate_socket_gport_add(g, port, 1)) < 0)
		return r;
	printf("listening %u\n", port);
	fflush(stdout);
	if ((c = accept(l, NULL, NULL)) < 0) {
		r = -errno;
		if (gated)
			gate_socket_gport_add(g, port, -1);
		return r;
	}
	r = lookup_accepted(&t, c, &v);
	if (gated)
		gate_socket_gport_add(g, port, -1);
	if (r == 0)
		printf("vs=%u\n", v.vs_id);
	else if (r == -ENOENT)
		printf("vs=none\n");
	fflush(stdout);
	/* Echo until the client is done (net-probe tcp waits for it). */
	while ((n = read(c, buf, sizeof(buf))) > 0)
		if (write(c, buf, n) != n)
			break;
	close(c);
	close(l);
	conntab_unmap(&t);
	return r == -ENOENT ? 0 : r;
}

int
main(int argc, char **argv)
{
	struct gate_socket *g;
	struct gate_socket_cfg cfg;
	uint64_t st[VSD_STAT_MAX];
	struct stat sb;
	int adopted, r;
	const char *cmd;

	log_init(1, getenv("SG_VERBOSE") ? 2 : 0, "socket-gate-ctl");
	if (argc < 3) {
		fprintf(stderr, "usage: socket-gate-ctl ROOT open|attach|update|detach|attached|conns|stats|purge ...\n");
		return 2;
	}
	cmd = argv[2];
	if ((r = gate_socket_open(argv[1], &g, &adopted)) < 0)
		return 1;
	if (!strcmp(cmd, "open")) {
		printf("adopted=%d\n", adopted);
	} else if ((!strcmp(cmd, "attach") || !strcmp(cmd, "update")) && argc >= 5) {
		if (stat(argv[3], &sb) < 0) {
			perror(argv[3]);
			return 1;
		}
		if ((r = parse_cfg(argc - 5, argv + 5, &cfg)) == 0)
			r = cmd[0] == 'a' ?
			    gate_socket_attach(g, argv[3], sb.st_ino, atoi(argv[4]), &cfg) :
			    gate_socket_update(g, sb.st_ino, atoi(argv[4]), &cfg);
	} else if (!strcmp(cmd, "detach") && argc == 4) {
		r = gate_socket_detach(g, atoi(argv[3]));
	} else if (!strcmp(cmd, "attached") && argc == 4) {
		if ((r = gate_socket_attached(g, atoi(argv[3]))) >= 0) {
			printf("attached=%d\n", r);
			r = 0;
		}
	} else if (!strcmp(cmd, "conns")) {
		r = gate_socket_conns(g, print_conn, NULL);
	} else if (!strcmp(cmd, "stats")) {
		if ((r = gate_socket_stats(g, st)) == 0)
			printf("added=%llu removed=%llu full=%llu\n",
			       (unsigned long long)st[VSD_STAT_CONNS_ADDED],
			       (unsigned long long)st[VSD_STAT_CONNS_REMOVED],
			       (unsigned long long)st[VSD_STAT_CONNS_FULL]);
	} else if (!strcmp(cmd, "accept") && (argc == 4 ||
		   (argc == 5 && !strcmp(argv[4], "gated")))) {
		r = accept_lookup(g, argv[1], argv[3], argc == 5);
	} else if (!strcmp(cmd, "scale") && argc == 4 && atoi(argv[3]) > 0) {
		r = scale(g, argv[1], atoi(argv[3]));
	} else if (!strcmp(cmd, "record") && argc == 4 &&
		   (!strcmp(argv[3], "all") || !strcmp(argv[3], "gated"))) {
		if ((r = gate_socket_set_record_all(g, argv[3][0] == 'a')) >= 0)
			r = 0;
	} else if (!strcmp(cmd, "gport") && argc == 5 && atoi(argv[3]) > 0 &&
		   atoi(argv[3]) < 65536) {
		if ((r = gate_socket_gport_add(g, atoi(argv[3]), atoi(argv[4]))) >= 0) {
			printf("gport=%d\n", r);
			r = 0;
		}
	} else if (!strcmp(cmd, "purge")) {
		return gate_socket_purge(g) < 0;
	} else {
		fprintf(stderr, "socket-gate-ctl: bad command %s\n", cmd);
		r = -EINVAL;
	}
	gate_socket_close(g);
	if (r < 0)
		fprintf(stderr, "socket-gate-ctl: %s: %s\n", cmd, strerror(-r));
	return r < 0;
}
