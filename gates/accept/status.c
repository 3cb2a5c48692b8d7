// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The supervisor's status socket: a Unix stream socket that reads one
 * request line and answers with one JSON object, then closes. `vsctl
 * services` reads the sockets in <vsd run dir>/gates/ ("status"); vsd
 * itself is not involved, so the status stays readable while vsd restarts.
 * vsd pushes the VS table and rules on it ("push", gate_push()) whenever
 * they change, and asks "stop" to stop a declared service. The status names
 * the service's processes and the VSs it serves, so only root, our own uid
 * and the members of --group (vsd's group) may ask: the socket is 0600, or
 * 0660 with that group, whatever the umask, and SO_PEERCRED checks each
 * client in case the mode was widened. "stop" and "push" are honoured from
 * root or our own uid only.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/buf.h"
#include "gate.h"
#include "lib/log.h"
#include "lib/usock.h"

int
status_open(const char *path, gid_t group)
{
	return usock_listen(path, group, 8);
}

static const char *
vs_name(struct gate *g, uint32_t id)
{
	struct gate_vs *v = vs_table_find(&g->tab, id);

	return v ? v->name : NULL;
}

/* v's connections waiting in the gate, on every listener. */
static size_t
queued(struct gate *g, const struct gate_vs *v)
{
	struct gated_listener *l;
	size_t q = 0;

	for (l = g->listeners; l; l = l->next) {
		struct vs_queue *vq = queue_get(l, v->id, 0);

		q += vq ? vq->len : 0;
	}
	return q;
}

/*
 * "stats": the figures `vsctl top` shows, one "key=value ..." line each
 * (VS names need no quoting), so that a client needs no JSON parser: a
 * "service" line, then a "vs" line per VS served, queued or home.
 */
/* Listeners on the fast path (registered with the socket gate), and those
 * with a thread waiting in the kernel's accept now. */
static size_t
fast_listeners(struct gate *g, size_t *in_kernel)
{
	struct gated_listener *l;
	size_t n = 0;

	*in_kernel = 0;
	for (l = g->listeners; l; l = l->next) {
		n += l->fp != NULL;
		*in_kernel += fp_pollfd(l) >= 0;
	}
	return n;
}

/* Each listener's ring read: accepts outside the gate counted now. */
static void
status_rings(struct gate *g)
{
	struct gated_listener *l;

	for (l = g->listeners; l; l = l->next)
		fp_tick(g, l, now_ns());
}

static void
status_stats(struct gate *g, struct buf *b, const struct status_info *si)
{
	size_t i;

	status_rings(g);
	charge_settle_all(g);
	dbthreads_settle(g, 1);
	buf_printf(b, "service name=%s pid=%d state=%s home=%s handed=%llu waiting=%zu "
	    "unclassified=%llu refused_io_uring=%llu refused_compat=%llu refused_seccomp_listener=%llu "
	    "outside=%llu\n", si->name,
	    (int)si->pid, si->state, vs_name(g, g->home) ? vs_name(g, g->home) : "-",
	    (unsigned long long)g->handed, g->nwaiters, (unsigned long long)g->unclassified,
	    (unsigned long long)g->refused_ring, (unsigned long long)g->refused_compat,
	    (unsigned long long)g->refused_listener, (unsigned long long)g->outside);
	for (i = 0; i < g->tab.n; i++) {
		struct gate_vs *v = &g->tab.v[i];
		size_t q = queued(g, v);

		if (!v->served && !q && !v->charged_ns && !v->db_cpu_ns && v->id != g->home)
			continue;
		buf_printf(b, "vs service=%s name=%s served=%llu queued=%zu cpu_usec=%llu "
		    "worker_waits=%llu db_cpu_usec=%llu db_read_bytes=%llu db_write_bytes=%llu\n",
		    si->name, v->name, (unsigned long long)v->served, q,
		    (unsigned long long)(v->charged_ns / 1000),
		    (unsigned long long)workers_waits(&g->wk, v->id),
		    (unsigned long long)(v->db_cpu_ns / 1000), (unsigned long long)v->db_read_bytes,
		    (unsigned long long)v->db_write_bytes);
	}
}

struct thr_ctx {
	struct gate *g;
	struct buf *b;
	int n;
};

static void
put_thread(struct service_thread *th, void *arg)
{
	struct thr_ctx *x = arg;

	buf_printf(x->b, "%s{\"tid\": %d, \"pid\": %d, \"bound\": ", x->n++ ? ", " : "",
	    th->tid, th->tgid);
	buf_json_str(x->b, th->bound ? vs_name(x->g, th->bound) : NULL);
	buf_printf(x->b, ", \"waiting\": %s}", th->waiter ? "true" : "false");
}

static void
status_json(struct gate *g, struct buf *b, const struct status_info *si)
{
	struct thr_ctx x = { g, b, 0 };
	struct gate_vs *uv;
	unsigned p50, p99, max;
	uint64_t nb, nfail, wn, wlate, wslow;
	size_t nfl, nik;
	pid_t wpid;
	size_t i;
	int n = 0;

	status_rings(g);
	charge_settle_all(g);
	dbthreads_settle(g, 1);
	buf_printf(b, "{\"name\": ");
	buf_json_str(b, si->name);
	buf_printf(b, ", \"pid\": %d, \"supervisor\": %d, \"home\": ", (int)si->pid, getpid());
	buf_json_str(b, vs_name(g, g->home));
	buf_printf(b, ", \"user\": ");
	if (si->user)
		buf_json_str(b, si->user);
	else
		buf_printf(b, "null");
	buf_printf(b, ", \"group\": ");
	if (si->group)
		buf_json_str(b, si->group);
	else
		buf_printf(b, "null");
	buf_printf(b, ", \"managed\": %s, \"state\": ", si->managed ? "true" : "false");
	buf_json_str(b, si->state);
	buf_printf(b, ", \"restarts\": %u, \"since\": %lld, \"last_exit\": ", si->restarts,
	    si->since);
	if (si->last_status < 0)
		buf_printf(b, "null");
	else if (WIFSIGNALED(si->last_status))
		buf_printf(b, "{\"signal\": %d}", WTERMSIG(si->last_status));
	else
		buf_printf(b, "{\"code\": %d}", WEXITSTATUS(si->last_status));
	buf_printf(b, ", \"window_ms\": %u, \"threads\": [", share_window_ms());
	thread_foreach(put_thread, &x);
	buf_printf(b, "], \"vs\": [");
	for (i = 0; i < g->tab.n; i++) {
		struct gate_vs *v = &g->tab.v[i];
		size_t q = queued(g, v);

		if (!v->served && !q && !v->db_cpu_ns && v->id != g->home)
			continue;
		buf_printf(b, "%s{\"name\": ", n++ ? ", " : "");
		buf_json_str(b, v->name);
		buf_printf(b, ", \"id\": %u, \"served\": %llu, \"queued\": %zu, \"cpu_usec\": %llu, "
		    "\"used_bp\": %d, \"step_bp\": %d, \"remaining_bp\": %d, \"rank_bp\": %d, "
		    "\"workers_held\": %u, \"worker_waits\": %llu, \"db_cpu_usec\": %llu, "
		    "\"db_read_bytes\": %llu, \"db_write_bytes\": %llu}",
		    v->id, (unsigned long long)v->served, q,
		    (unsigned long long)(v->charged_ns / 1000), (int)(v->used_bp + 0.5),
		    (int)(v->step_bp + 0.5), v->remaining_bp, v->rank_bp, workers_held(&g->wk, v->id),
		    (unsigned long long)workers_waits(&g->wk, v->id),
		    (unsigned long long)(v->db_cpu_ns / 1000), (unsigned long long)v->db_read_bytes,
		    (unsigned long long)v->db_write_bytes);
	}
	buf_printf(b, "], \"workers_pool\": %zu", g->wk.pool);
	buf_printf(b, ", \"handed\": %llu, \"requeued\": %llu, \"closed_dead\": %llu, "
	    "\"eagain\": %llu, \"passed\": %llu, \"moves\": %llu, \"waiting\": %zu, "
	    "\"sync_wakeup\": %s, \"pm_qos\": {\"on\": %s, \"held\": %s, \"holds\": %llu}",
	    (unsigned long long)g->handed, (unsigned long long)g->requeued,
	    (unsigned long long)g->dropped_dead, (unsigned long long)g->eagain,
	    (unsigned long long)g->passed, (unsigned long long)bind_moves(), g->nwaiters,
	    g->sync_wakeup ? "true" : "false", g->pmqos ? "true" : "false",
	    g->pmqos_held ? "true" : "false", (unsigned long long)g->pmqos_holds);
	buf_printf(b, ", \"refused\": {\"io_uring\": %llu, \"compat_accept\": %llu, "
	    "\"seccomp_listener\": %llu}, \"outside\": %llu",
	    (unsigned long long)g->refused_ring, (unsigned long long)g->refused_compat,
	    (unsigned long long)g->refused_listener, (unsigned long long)g->outside);
	/* pulls: our requests to vsd (at start, on "refresh"); pushes: its tables */
	buf_printf(b, ", \"vsd\": {\"pulls\": %llu, \"pushes\": %llu}",
	    (unsigned long long)g->vsd_pulls, (unsigned long long)g->vsd_pushes);
	buf_printf(b, ", \"attrs\": {\"on\": %s, \"bound_ms\": %u, \"held\": %zu, \"total\": %llu, "
	    "\"waited\": %llu, \"by_content\": %llu, \"no_match\": %llu, \"malformed\": %llu, "
	    "\"timed_out\": %llu, \"too_long\": %llu, \"cut\": %llu, \"unclassified\": %llu, "
	    "\"unclassified_vs\": ",
	    g->want_attrs ? "true" : "false", g->attrs_timeout_ms, g->nheld,
	    (unsigned long long)g->held_total, (unsigned long long)g->attrs_waited,
	    (unsigned long long)g->by_content,
	    (unsigned long long)g->attrs_nomatch, (unsigned long long)g->attrs_bad,
	    (unsigned long long)g->attrs_timeout, (unsigned long long)g->attrs_long,
	    (unsigned long long)g->attrs_cut, (unsigned long long)g->unclassified);
	uv = gate_unclassified_vs(g);
	buf_json_str(b, uv ? uv->name : NULL);
	buf_printf(b, "}, \"unclassified\": %llu", (unsigned long long)g->unclassified);
	nfl = fast_listeners(g, &nik);
	buf_printf(b, ", \"fast\": {\"mode\": \"%s\", \"listeners\": %zu, \"in_kernel\": %zu, "
	    "\"continued\": %llu, "
	    "\"direct\": %llu, \"direct_moved\": %llu, "
	    "\"direct_cpu_usec\": %llu, \"direct_cpu_max_usec\": %llu, \"resync\": %llu, "
	    "\"stale\": %llu, \"misordered\": %llu, \"fd_moved\": %llu, \"records\": \"%s\"}",
	    gate_fast_name(g->fast), nfl, nik, (unsigned long long)g->fp_continued,
	    (unsigned long long)g->fp_direct, (unsigned long long)g->fp_direct_moved,
	    (unsigned long long)(g->fp_direct_cpu_ns / 1000),
	    (unsigned long long)(g->fp_direct_cpu_max / 1000), (unsigned long long)g->fp_resync,
	    (unsigned long long)g->fp_stale, (unsigned long long)g->fp_misordered,
	    (unsigned long long)g->fp_fd_moved, records_hook());
	bind_stats(&nb, &nfail, &p50, &p99, &max);
	buf_printf(b, ", \"rebind\": {\"count\": %llu, \"failed\": %llu, \"p50_us\": %u, "
	    "\"p99_us\": %u, \"max_us\": %u}",
	    (unsigned long long)nb, (unsigned long long)nfail, p50, p99, max);
	dbthreads_status(g, b);
	wpid = rcu_warm_stats(&wn, &wlate, &wslow);
	buf_printf(b, ", \"warm\": {\"pid\": %d, \"writes\": %llu, \"late\": %llu, "
	    "\"slow\": %llu}}\n", (int)wpid, (unsigned long long)wn,
	    (unsigned long long)wlate, (unsigned long long)wslow);
}

int
status_accept(int lfd, gid_t group, char *cmd, size_t len, uid_t *uid)
{
	static const char refusal[] = "{\"error\": \"permission denied: only root, the "
	    "supervisor's user and vsd's group may read its status\"}\n";
	struct ucred cr;
	struct pollfd p;
	ssize_t n;
	int fd;

	cmd[0] = '\0';
	*uid = (uid_t)-1;
	if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
		return -1;
	if (!usock_peer_allowed(fd, group, &cr)) {
		log_warnx("status socket: refused a client with uid %u", (unsigned)cr.uid);
		/* a short line into an empty socket buffer: it cannot block */
		send(fd, refusal, sizeof(refusal) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
		close(fd);
		return -1;
	}
	*uid = cr.uid;
	/* a client writes its request right after connect(): a short wait
	 * covers an accept that came first; an old client sends nothing */
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&p, 1, 20) == 1 && (n = recv(fd, cmd, len - 1, MSG_DONTWAIT | MSG_PEEK)) > 0) {
		/* the line only: a push's table follows it (gate_push) */
		cmd[n] = '\0';
		n = (ssize_t)strcspn(cmd, "\n");
		recv(fd, cmd, (size_t)n + (cmd[n] == '\n'), MSG_DONTWAIT);
		cmd[n] = '\0';
		cmd[strcspn(cmd, "\r")] = '\0';
	}
	return fd;
}

void
status_reply(struct gate *g, int fd, const struct status_info *si)
{
	struct buf b = { 0 };
	size_t off = 0;

	if (si->stats)
		status_stats(g, &b, si);
	else
		status_json(g, &b, si);
	/* small reply, local reader: a blocking write with a timeout is enough */
	{
		struct timeval tv = { .tv_sec = 1 };

		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	while (off < b.len) {
		ssize_t n = write(fd, b.p + off, b.len - off);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	buf_free(&b);
}
