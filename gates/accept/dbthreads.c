// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The database mode (a service of the rule file's "protocol mysql"): each
 * thread of the service serves a connection in the VS that opened it, so
 * the queries of a shared MariaDB are charged to, and scheduled in, the VS
 * whose client sent them. MariaDB serves a connection with one thread (new,
 * or from its thread cache) or, with pool-of-threads, with any thread of a
 * pool, and accepts in its main thread; so the accept gate's re-binding of
 * the accepting thread says nothing about where queries run. Instead, a BPF
 * program (dbthreads.bpf.c) sees each read of the service's threads, finds
 * the connection's VS, and tells us when a thread reads from a connection
 * of another VS than the one it is bound to; we move that one thread
 * (rebind.c's bind_thread: v1 "tasks" on hybrid hosts, or a capped VS's
 * child of the service's cgroup, dbcap.c; on pure cgroup v2 its VS's child
 * of a threaded subtree under the service, dbtree.c) and settle its CPU
 * time and I/O on the VS it served (charge.c, dbacct.c). The accepting
 * thread stays home (gate.c asks gate_db_mode()); so do the server's own
 * threads, which read no client's connection.
 *
 * Asynchronous: the thread goes on while we move it. Its first read of a
 * connection is the client's reply to the server's greeting, and the first
 * query comes only after the server's answer to it, one client round trip
 * later; what it runs before the move lands is charged to the VS it was in.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "gate.h"
#include "dbthreads.h"
#include "dbcap.h"
#include "dbtree.h"
#include "gates/socket/gate-socket.h"
#include "gates/accept/dbthreads.skel.h"
#include "lib/buf.h"
#include "lib/log.h"
#include "rules/rules.h"

static struct dbthreads_bpf *skel;
static struct ring_buffer *rb;
static struct bpf_link *rlink;
static int failed;		/* -errno of the load, once it failed */
static pid_t run_tgid;		/* the service's process while it runs */
static uint64_t nevents, nmoved, nfailed, nhome;

int
gate_db_mode(const struct gate *g)
{
	return g->rules && g->svc_idx >= 0 &&
	    g->rules->services[g->svc_idx].proto == RULES_PROTO_MYSQL;
}

/* vsd's connection table, reused from its pin (a table of one slot
 * without it: TCP connections are then all served at home) */
static int
reuse_conns(const char *path)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd, r;

	if (!path || (fd = bpf_obj_get(path)) < 0 ||
	    bpf_obj_get_info_by_fd(fd, &info, &len) < 0) {
		if (path)
			log_warnx("database mode: connection table %s: %s", path, strerror(errno));
		bpf_map__set_max_entries(skel->maps.vsd_conns, 1);
		skel->rodata->conns_mask = 0;
		return 0;
	}
	skel->rodata->conns_mask = info.max_entries - 1;
	bpf_map__set_max_entries(skel->maps.vsd_conns, info.max_entries);
	r = bpf_map__reuse_fd(skel->maps.vsd_conns, fd);
	close(fd);
	return r;
}

static int on_event(void *ctx, void *data, size_t len);

/* Open, load and attach once: the tracepoint, else the fentry program. */
static int
load(struct gate *g)
{
	static const char *const unused[] = { "vsd_gated", "vsd_gports", "vsd_rings",
					      "vsd_ringctl" };
	int r, tp;
	size_t i;

	if (skel)
		return 0;
	if (failed)
		return failed;
	bpf_log_init();
	for (tp = 1; tp >= 0; tp--) {
		if (!(skel = dbthreads_bpf__open())) {
			r = -errno;
			break;
		}
		for (i = 0; i < sizeof(unused) / sizeof(unused[0]); i++)
			bpf_map__set_autocreate(bpf_object__find_map_by_name(skel->obj, unused[i]),
						false);
		bpf_program__set_autoload(skel->progs.dbt_recv_tp, tp);
		bpf_program__set_autoload(skel->progs.dbt_recv_fentry, !tp);
		if ((r = reuse_conns(g->tab.conns_map)) == 0 &&
		    (r = dbthreads_bpf__load(skel)) == 0 &&
		    (rlink = bpf_program__attach(tp ? skel->progs.dbt_recv_tp :
						skel->progs.dbt_recv_fentry)))
			break;
		r = r ? r : -errno;
		dbthreads_bpf__destroy(skel);
		skel = NULL;
	}
	if (!skel) {
		failed = r < 0 ? r : -EINVAL;
		log_warnx("database mode: cannot load its program: %s", strerror(-failed));
		return failed;
	}
	if (!(rb = ring_buffer__new(bpf_map__fd(skel->maps.dbt_events), on_event, g, NULL))) {
		failed = -errno;
		log_warnx("database mode: ring buffer: %s", strerror(-failed));
		bpf_link__destroy(rlink);
		dbthreads_bpf__destroy(skel);
		skel = NULL;
		rlink = NULL;
		return failed;
	}
	log_info("database mode: on (%s)", bpf_program__autoload(skel->progs.dbt_recv_tp) ?
		 "sock_recv_length" : "fentry sock_recvmsg");
	return 0;
}

/* The service's process and home, and every VS's cgroup2 directory. */
static void
push(struct gate *g)
{
	struct dbt_cfg cfg = { .tgid = (__u32)run_tgid, .home = g->home };
	__u32 zero = 0;
	size_t i;

	if (!gate_db_mode(g))
		cfg.tgid = 0;
	for (i = 0; i < g->tab.n; i++) {
		struct gate_vs *v = &g->tab.v[i];
		__u64 id = vs_cg2_id(v);

		if (id != UINT64_MAX)
			bpf_map_update_elem(bpf_map__fd(skel->maps.dbt_cg2), &id, &v->id, BPF_ANY);
	}
	bpf_map_update_elem(bpf_map__fd(skel->maps.dbt_cfg), &zero, &cfg, BPF_ANY);
}

/* A thread its gone VS's child sent home: the program must see it there. */
static void
sent_home(pid_t tid, void *arg)
{
	struct gate *g = arg;
	struct service_thread *th;
	__u32 key = (__u32)tid;
	int is_new;

	if ((th = thread_get(tid, &is_new)) && th->tgid == run_tgid) {
		th->bound = g->home;
		charge_settle(g, th);
		dbacct_settle(&g->tab, th, g->home);
	}
	if (skel)
		bpf_map_delete_elem(bpf_map__fd(skel->maps.dbt_tids), &key);
}

/* Each VS's db-cpu cap and db-burst from the rules; none for home, whose
 * threads are the service's own. */
static void
caps(struct gate *g)
{
	size_t i;

	for (i = 0; i < g->tab.n; i++) {
		struct gate_vs *v = &g->tab.v[i];
		const struct rules_vs *rv = g->rules && v->ridx >= 0 ? &g->rules->vs[v->ridx] : NULL;

		v->db_cap_bp = rv && v->id != g->home ? rv->db_cpu : 0;
		v->db_burst_us = v->db_cap_bp ? rv->db_burst_ms * 1000ull : 0;
	}
}

void
dbthreads_sync(struct gate *g)
{
	if (!gate_db_mode(g) && !skel)
		return;
	caps(g);
	if (cgh_moves_process())
		dbtree_sync(&g->tab, g->home, sent_home, g);
	else if (gate_db_mode(g) && run_tgid)
		dbcap_sync(&g->tab, vs_table_find(&g->tab, g->home), run_tgid, g->svc_name,
			   sent_home, g);
	if (load(g) == 0)
		push(g);
}

/* A new process: no thread of it is bound anywhere yet. */
static void
forget_threads(void)
{
	int fd = bpf_map__fd(skel->maps.dbt_tids);
	__u32 next;

	while (bpf_map_get_next_key(fd, NULL, &next) == 0 &&
	       bpf_map_delete_elem(fd, &next) == 0)
		;
}

void
dbthreads_run(struct gate *g, pid_t tgid)
{
	run_tgid = tgid;
	if (!tgid && !cgh_moves_process())
		dbcap_stop();
	/* the tree goes with the run, also when the rules no longer make it
	 * a database (apply --prune pushes them without this service before
	 * it stops): left behind, its cgroups keep the home VS from going */
	if (cgh_moves_process()) {
		if (tgid && gate_db_mode(g))
			dbtree_start(tgid, vs_table_find(&g->tab, g->home));
		else
			dbtree_stop();
	}
	if (skel)
		forget_threads();
	dbthreads_sync(g);
}

int
dbthreads_fd(void)
{
	return rb ? ring_buffer__epoll_fd(rb) : -1;
}

static int
move(struct gate *g, struct service_thread *th, struct gate_vs *v)
{
	if (cgh_moves_process())
		return dbtree_move(th, v, g->home);
	if (v->db_cap_bp)	/* its child under the service's cgroup (dbcap.c) */
		return dbcap_move(th, v, vs_table_find(&g->tab, g->home), g->svc_name);
	return bind_thread(th, v);
}

static int
on_event(void *ctx, void *data, size_t len)
{
	const struct dbt_event *e = data;
	struct gate *g = ctx;
	struct gate_vs *v, *home = vs_table_find(&g->tab, g->home);
	struct service_thread *th;
	int is_new, r;

	if (len < sizeof(*e))
		return 0;
	nevents++;
	/* a thread that has ended, or one of another process (a reused TID) */
	if (!(th = thread_get((pid_t)e->tid, &is_new)) || th->tgid != run_tgid)
		return 0;
	if (!(v = vs_table_find(&g->tab, e->vs_id)))
		v = home;
	r = v ? move(g, th, v) : -ENOENT;
	if ((r == -ENOENT || r == -ENODEV) && home && v != home) {
		/* its VS was destroyed under us: the queries go on at home */
		nhome++;
		r = move(g, th, home);
	}
	if (r == 1 || !th->cpu_mark)	/* moved, or new: its CPU so far goes where it was */
		charge_settle(g, th);
	if (r == 1 || !th->db_cpu_mark)
		dbacct_settle(&g->tab, th, g->home);
	if (r == 1)
		nmoved++;
	else if (r < 0)
		nfailed++;
	return 0;
}

struct settle_ctx {
	struct gate *g;
};

static void
settle_one(struct service_thread *th, void *arg)
{
	struct settle_ctx *x = arg;

	if (th->tgid == run_tgid && (th->db_vs || th->bound))
		dbacct_settle(&x->g->tab, th, x->g->home);
}

void
dbthreads_settle(struct gate *g, int force)
{
	static uint64_t last;
	struct settle_ctx x = { g };
	uint64_t now = now_ns();

	if (!gate_db_mode(g) || !run_tgid || (!force && now - last < 1000000000ull))
		return;
	last = now;
	thread_foreach(settle_one, &x);
	dbacct_home(&g->tab, run_tgid, g->home);
}

void
dbthreads_ready(void)
{
	if (rb)
		ring_buffer__consume(rb);
}

void
dbthreads_status(const struct gate *g, struct buf *b)
{
	buf_printf(b, ", \"database\": {\"on\": %s, \"events\": %llu, \"moved\": %llu, "
	    "\"failed\": %llu, \"home_for_gone_vs\": %llu, \"lost\": %llu}",
	    gate_db_mode(g) && skel && (!cgh_moves_process() || dbtree_on()) ? "true" : "false", (unsigned long long)nevents,
	    (unsigned long long)nmoved, (unsigned long long)nfailed, (unsigned long long)nhome,
	    (unsigned long long)(skel && skel->bss ? skel->bss->dbt_lost : 0));
}
