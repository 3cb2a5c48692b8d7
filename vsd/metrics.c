// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prometheus metrics: the text exposition format 0.0.4 of every VS's and
 * every gated service's figures, in a file vsd rewrites every
 * --metrics-interval seconds for node_exporter's textfile collector
 * (--metrics-file), and on request (`vsctl metrics`). Written whole to a
 * temporary file and renamed, so the collector reads the old file or the
 * new one, never a part; the temporary name starts with a dot and does not
 * end in ".prom", so the collector never reads it.
 *
 * Why a file and no HTTP endpoint: the host that runs node_exporter already
 * has a scraped, access-controlled endpoint (Debian 12's
 * prometheus-node-exporter reads the .prom files in
 * /var/lib/prometheus/node-exporter);
 * a second listener in a root daemon would be one more network-facing
 * parser to secure, for figures that change on the scale of seconds.
 *
 * Names, units and labels follow the Prometheus conventions: a "vsd_"
 * prefix, base units (seconds, bytes), "_total" on counters, one "vs" (and
 * "service") label per series, label values escaped (\\, \", \n).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/log.h"
#include "metrics.h"
#include "stats.h"
#include "vsd.h"

static void
label(struct buf *b, const char *s)
{
	buf_printf(b, "\"");
	for (; *s; s++) {
		if (*s == '\\')
			buf_printf(b, "\\\\");
		else if (*s == '"')
			buf_printf(b, "\\\"");
		else if (*s == '\n')
			buf_printf(b, "\\n");
		else
			buf_printf(b, "%c", *s);
	}
	buf_printf(b, "\"");
}

static void
family(struct buf *b, const char *name, const char *type, const char *help)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A VS's figure: the value, or nothing if the layout lacks it (want 0). */
typedef int (*vs_value_fn)(const struct vs *vs, const struct vs_stats *s, double *v);

struct vs_metric {
	const char	*name, *type, *help;
	vs_value_fn	 fn;
	unsigned	 bit;		/* CG_ST_*: only with this counter; 0: always */
	size_t		 off;		/* in struct cg_stats, with bit */
	double		 scale;		/* value = counter * scale */
};

static int
v_up(const struct vs *vs, const struct vs_stats *s, double *v)
{
	*v = vs->status == VS_OK && s->ok;
	return 1;
}

static int
v_share(const struct vs *vs, const struct vs_stats *s, double *v)
{
	*v = vs->lim.cpu / (double)BP_MAX;
	return 1;
}

static int
v_cap(const struct vs *vs, const struct vs_stats *s, double *v)
{
	*v = vs->lim.cpu_max / (double)BP_MAX;
	return vs->lim.cpu_max != 0;
}

static int
v_mem_limit(const struct vs *vs, const struct vs_stats *s, double *v)
{
	*v = (double)vs->lim.mem_max;
	return vs->lim.mem_max != 0;
}

static int
v_pids_limit(const struct vs *vs, const struct vs_stats *s, double *v)
{
	*v = (double)vs->lim.pids_max;
	return vs->lim.pids_max != 0;
}

static const struct vs_metric vs_metrics[] = {
	{ "vsd_vs_up", "gauge", "1 if the VS's cgroups are there and were read, 0 if not.", v_up, 0, 0, 0 },
	{ "vsd_vs_cpu_share_ratio", "gauge",
	  "Guaranteed CPU share of the whole machine (0.5: half of every CPU).", v_share, 0, 0, 0 },
	{ "vsd_vs_cpu_cap_ratio", "gauge", "CPU cap as a part of the whole machine; absent: none.",
	  v_cap, 0, 0, 0 },
	{ "vsd_vs_memory_limit_bytes", "gauge", "Memory limit; absent: none.", v_mem_limit, 0, 0, 0 },
	{ "vsd_vs_pids_limit", "gauge", "Limit on tasks (processes and threads); absent: none.",
	  v_pids_limit, 0, 0, 0 },
	{ "vsd_vs_cpu_seconds_total", "counter", "CPU time used by the VS's processes.", NULL,
	  CG_ST_CPU, offsetof(struct cg_stats, cpu_usec), 1e-6 },
	{ "vsd_vs_memory_bytes", "gauge", "Memory in use (memory.current, v1 memory.usage_in_bytes).",
	  NULL, CG_ST_MEM, offsetof(struct cg_stats, mem_bytes), 1 },
	{ "vsd_vs_tasks", "gauge", "Tasks in the VS (pids.current).", NULL, CG_ST_PIDS,
	  offsetof(struct cg_stats, pids), 1 },
	{ "vsd_vs_oom_kills_total", "counter", "Processes the OOM killer killed in the VS.", NULL,
	  CG_ST_OOM, offsetof(struct cg_stats, oom_kill), 1 },
	{ "vsd_vs_memory_high_events_total", "counter",
	  "Times memory use went over memory.high (cgroup v2 only).", NULL, CG_ST_MEM_HIGH,
	  offsetof(struct cg_stats, mem_high), 1 },
	{ "vsd_vs_memory_max_events_total", "counter",
	  "Times memory use hit the limit (v2 memory.events max, v1 memory.failcnt).", NULL,
	  CG_ST_MEM_MAX, offsetof(struct cg_stats, mem_max), 1 },
	{ "vsd_vs_pids_max_events_total", "counter", "Forks refused by the pids limit.", NULL,
	  CG_ST_PIDS_MAX, offsetof(struct cg_stats, pids_max), 1 },
	{ "vsd_vs_cpu_periods_total", "counter", "CPU cap enforcement periods (100 ms) that elapsed.",
	  NULL, CG_ST_THROTTLE, offsetof(struct cg_stats, nr_periods), 1 },
	{ "vsd_vs_cpu_throttled_periods_total", "counter",
	  "Periods in which the CPU cap stopped the VS.", NULL, CG_ST_THROTTLE,
	  offsetof(struct cg_stats, nr_throttled), 1 },
	{ "vsd_vs_cpu_throttled_seconds_total", "counter", "Time the CPU cap stopped the VS.", NULL,
	  CG_ST_THROTTLE, offsetof(struct cg_stats, throttled_usec), 1e-6 },
};

static void
vs_families(struct vsd *d, struct buf *b)
{
	struct vs_stats *st;
	size_t m, i;

	/* one sample per VS for every family: the file is consistent */
	if (!(st = calloc(d->reg.n ? d->reg.n : 1, sizeof(*st)))) {
		b->oom = 1;
		return;
	}
	stats_pass_begin();
	for (i = 0; i < d->reg.n; i++)
		st[i] = *vs_stats_get(d, d->reg.v[i]);
	stats_pass_end();
	for (m = 0; m < ARRAY_SIZE(vs_metrics); m++) {
		const struct vs_metric *mt = &vs_metrics[m];

		family(b, mt->name, mt->type, mt->help);
		for (i = 0; i < d->reg.n; i++) {
			double v;

			if (mt->fn ? !mt->fn(d->reg.v[i], &st[i], &v) :
			    !(st[i].ok && (st[i].cg.have & mt->bit)))
				continue;
			if (!mt->fn)
				v = (double)*(const uint64_t *)((const char *)&st[i].cg + mt->off) *
				    mt->scale;
			buf_printf(b, "%s{vs=", mt->name);
			label(b, d->reg.v[i]->name);
			buf_printf(b, "} %.15g\n", v);
		}
	}
	family(b, "vsd_vs_connections", "gauge",
	       "Open TCP connections the socket gate attributes to the VS, by direction.");
	for (i = 0; i < d->reg.n && d->gate; i++) {
		buf_printf(b, "vsd_vs_connections{vs=");
		label(b, d->reg.v[i]->name);
		buf_printf(b, ",direction=\"out\"} %" PRIu32 "\nvsd_vs_connections{vs=", st[i].conns_out);
		label(b, d->reg.v[i]->name);
		buf_printf(b, ",direction=\"in\"} %" PRIu32 "\n", st[i].conns_in);
	}
	free(st);
}

void
services_stats(struct vsd *d, struct buf *all)
{
	char dir[PATH_MAX], name[VS_NAME_MAX + 8];
	struct timeval tv = { 0, 250000 };
	struct dirent *de;
	DIR *dp;

	if (svc_status_path(d, NULL, dir, sizeof(dir)) < 0 || !(dp = opendir(dir)))
		return;
	while ((de = readdir(dp))) {
		size_t l = strlen(de->d_name);
		struct buf one = { 0 };
		int fd;

		if (l < 6 || l - 5 > VS_NAME_MAX || strcmp(de->d_name + l - 5, ".sock") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(l - 5), de->d_name);
		if (!vs_name_valid(name) || (fd = svc_status_connect(d, name)) < 0)
			continue;
		/* a supervisor answers from its loop at once; a stuck one costs
		 * vsd at most this, not the usual 2 s */
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (svc_status_request(fd, "stats", &one) == 0 && one.p &&
		    strncmp(one.p, "service ", 8) == 0)
			buf_add(all, one.p, one.len);
		buf_free(&one);
	}
	closedir(dp);
}

static void
svc_family(struct buf *b, const char *lines, const char *metric, const char *type,
	   const char *help, const char *key, double scale)
{
	const char *p;

	family(b, metric, type, help);
	for (p = lines; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char svc[VS_NAME_MAX + 1], vs[VS_NAME_MAX + 1], v[32], line[512];
		size_t n = strcspn(p, "\n");

		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		if (strncmp(line, "vs ", 3) != 0 || kv_get(line, "service", svc, sizeof(svc)) < 0 ||
		    kv_get(line, "name", vs, sizeof(vs)) < 0 || kv_get(line, key, v, sizeof(v)) < 0)
			continue;
		buf_printf(b, "%s{service=", metric);
		label(b, svc);
		buf_printf(b, ",vs=");
		label(b, vs);
		buf_printf(b, "} %.15g\n", strtod(v, NULL) * scale);
	}
}

/* One series per service, from its "service" line: metric{service=S,extra} key's value. */
static void
svc_series(struct buf *b, const char *lines, const char *metric, const char *extra, const char *key)
{
	const char *p;

	for (p = lines; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char svc[VS_NAME_MAX + 1], v[32], line[512];
		size_t n = strcspn(p, "\n");

		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		if (strncmp(line, "service ", 8) != 0 || kv_get(line, "name", svc, sizeof(svc)) < 0 ||
		    kv_get(line, key, v, sizeof(v)) < 0)
			continue;
		buf_printf(b, "%s{service=", metric);
		label(b, svc);
		buf_printf(b, "%s} %.15g\n", extra, strtod(v, NULL));
	}
}

void
metrics_text(struct vsd *d, struct buf *b)
{
	struct buf svc = { 0 };

	family(b, "vsd_vss", "gauge", "Virtual servers vsd manages.");
	buf_printf(b, "vsd_vss %zu\n", d->reg.n);
	vs_families(d, b);
	services_stats(d, &svc);
	svc_family(b, svc.p, "vsd_service_served_total", "counter",
		   "Connections a gated service accepted for the VS (charged to it).", "served", 1);
	svc_family(b, svc.p, "vsd_service_queued", "gauge",
		   "Connections for the VS waiting in the accept gate now.", "queued", 1);
	svc_family(b, svc.p, "vsd_service_cpu_seconds_total", "counter",
		   "CPU time a gated service spent for the VS (its threads' time while bound there).",
		   "cpu_usec", 1e-6);
	svc_family(b, svc.p, "vsd_service_db_cpu_seconds_total", "counter",
		   "CPU time a database service's threads spent serving the VS's connections "
		   "(database mode; home: the rest of the server's).", "db_cpu_usec", 1e-6);
	svc_family(b, svc.p, "vsd_service_db_read_bytes_total", "counter",
		   "Bytes a database service's threads read from storage serving the VS's "
		   "connections (/proc task io read_bytes).", "db_read_bytes", 1);
	svc_family(b, svc.p, "vsd_service_db_write_bytes_total", "counter",
		   "Bytes a database service's threads wrote to storage serving the VS's "
		   "connections (/proc task io write_bytes; InnoDB's flushing is home's).",
		   "db_write_bytes", 1);
	svc_family(b, svc.p, "vsd_service_worker_waits_total", "counter",
		   "Connections for the VS that waited because it held its worker limit.",
		   "worker_waits", 1);
	family(b, "vsd_service_unclassified_total", "counter",
	       "Requests the service's accept gate could not classify by their FastCGI params "
	       "(malformed, too long, too slow), served in its unclassified VS.");
	svc_series(b, svc.p, "vsd_service_unclassified_total", "", "unclassified");
	family(b, "vsd_service_refused_total", "counter",
	       "Calls a gated service made that the gate cannot see, refused (vsctl-run(8)).");
	svc_series(b, svc.p, "vsd_service_refused_total", ",call=\"io_uring\"", "refused_io_uring");
	svc_series(b, svc.p, "vsd_service_refused_total", ",call=\"compat_accept\"", "refused_compat");
	svc_series(b, svc.p, "vsd_service_refused_total", ",call=\"seccomp_listener\"",
		   "refused_seccomp_listener");
	family(b, "vsd_service_outside_accepts_total", "counter",
	       "Accepts of a gated service's listeners that the gate did not answer.");
	svc_series(b, svc.p, "vsd_service_outside_accepts_total", "", "outside");
	buf_free(&svc);
}

int
metrics_set_file(struct vsd *d, const char *path, const char **why)
{
	const char *slash = strrchr(path, '/');
	size_t l = strlen(path);

	*why = NULL;
	if (path[0] != '/')
		*why = "must be an absolute path";
	else if (l < 6 || strcmp(path + l - 5, ".prom") != 0 || slash[1] == '.')
		*why = "must name a file ending in .prom, not starting with a dot "
		       "(what node_exporter's textfile collector reads)";
	else if (l >= PATH_MAX)
		*why = "is too long";
	if (*why)
		return -EINVAL;
	free(d->metrics_dir);
	if (!(d->metrics_dir = strndup(path, (size_t)(slash - path) ? (size_t)(slash - path) : 1)))
		return -ENOMEM;
	d->metrics_name = slash + 1;
	return 0;
}

const char *
metrics_why(const struct vsd *d, int r)
{
	static char buf[PATH_MAX + 128];

	snprintf(buf, sizeof(buf), "directory %s%s", d->metrics_dir, dir_why(r));
	return buf;
}

int
metrics_write(struct vsd *d)
{
	struct buf b = { 0 };
	int r;

	metrics_text(d, &b);
	if (b.oom)
		r = -ENOMEM;
	else
		r = write_file_replace(d->metrics_dir, d->metrics_name, b.p ? b.p : "", b.len, 0644, 0);
	buf_free(&b);
	/* log a failure once, and when it changes or ends, not every interval */
	if (r < 0 && r != d->metrics_err)
		log_warnx("metrics: cannot write %s/%s: %s", d->metrics_dir, d->metrics_name,
			  metrics_why(d, r));
	else if (r == 0 && d->metrics_err)
		log_info("metrics: %s/%s written again", d->metrics_dir, d->metrics_name);
	d->metrics_err = r;
	return r;
}

void
metrics_tick(struct vsd *d)
{
	uint64_t now = mono_ns();

	if (!d->metrics_dir || now < d->metrics_at)
		return;
	d->metrics_at = now + (uint64_t)d->metrics_interval_s * 1000000000ull;
	metrics_write(d);
}

int
metrics_timeout_ms(const struct vsd *d, int t)
{
	uint64_t now = mono_ns();
	int w;

	if (!d->metrics_dir)
		return t;
	w = d->metrics_at <= now ? 0 : (int)((d->metrics_at - now) / 1000000 + 1);
	return t < 0 || w < t ? w : t;
}

int
cmd_metrics(struct vsd *d, const struct request *req, struct reply *rep)
{
	(void)req;
	metrics_text(d, &rep->out);
	return 0;
}
