// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vsctl top: a live view of every VS (like systemd-cgtop, or CloudLinux's
 * lvetop) and of the gated services. Each refresh is one `stats` request to
 * vsd, which answers with every VS in one reply (vsd/cmd-stats.c), and one
 * "stats" request to each service's status socket (gates/accept/status.c).
 * Rates (CPU %, throttled time) come from the difference between two
 * samples, each stamped by vsd with the time it read the VS's files; the
 * limit events are counted from the first sample this top took.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/exitcode.h"
#include "lib/proto.h"
#include "lib/util.h"
#include "vsctl.h"

/* One VS's figures from a `stats` line; -1 (UINT64_MAX) where absent. */
enum {
	F_CPU_BP, F_CPU_MAX_BP, F_MEM_LIMIT, F_PIDS_LIMIT, F_AT_NS, F_CPU_USEC, F_MEM_BYTES,
	F_PIDS, F_CONNS_OUT, F_CONNS_IN, F_OOM_KILL, F_MEM_HIGH, F_MEM_MAX, F_PIDS_MAX,
	F_CPU_PERIODS, F_CPU_THROTTLED, F_CPU_THROTTLED_USEC, F_MAX
};
static const char *const fkey[F_MAX] = {
	"cpu_bp", "cpu_max_bp", "mem_limit", "pids_limit", "at_ns", "cpu_usec", "mem_bytes",
	"pids", "conns_out", "conns_in", "oom_kill", "mem_high", "mem_max", "pids_max",
	"cpu_periods", "cpu_throttled", "cpu_throttled_usec",
};
#define NONE	UINT64_MAX

struct row {
	char	 name[VS_NAME_MAX + 1];
	char	 status[16];
	uint64_t f[F_MAX];
	/* derived, for printing and sorting */
	double	 cpu_pct, throttled_s;
	uint64_t events;	/* limit events since top's first sample */
	char	 ev[64];
};

struct sample {
	struct row *v;
	size_t	 n;
	unsigned ncpu;
	uint64_t vsd_cpu_usec;
};

/* A service's line and its VSs' lines, as the supervisor sent them. */
struct svc_sample {
	struct buf text;
};

struct top {
	const char *socket_path;
	double	 delay;
	long	 iterations;	/* 0: until stopped */
	int	 batch;
	char	 sort[16];
	struct sample first, prev, cur;
	struct buf svc_prev;	/* last services answer, for served/CPU rates */
	double	 vsd_ms;	/* vsd's CPU per refresh, last interval */
};

static int
row_cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->name, ((const struct row *)b)->name);
}

static const struct row *
find(const struct sample *s, const char *name)
{
	struct row key;

	snprintf(key.name, sizeof(key.name), "%s", name);
	return s->n ? bsearch(&key, s->v, s->n, sizeof(*s->v), row_cmp_name) : NULL;
}

static uint64_t
num(const char *line, const char *key)
{
	char v[32];

	if (kv_get(line, key, v, sizeof(v)) < 0 || v[0] == '-')
		return NONE;
	return strtoull(v, NULL, 10);
}

static void
sample_free(struct sample *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* One `stats` request; the rows sorted by name. 0, or an exit status
 * (lib/exitcode.h: 3 no vsd, 4 permission...), the error said. */
static int
fetch(struct top *t, struct sample *s)
{
	struct buf req = { 0 }, body = { 0 };
	unsigned status;
	size_t cap = 0;
	char *line, *next;
	int r, k;

	proto_add(&req, "stats");
	r = proto_call(t->socket_path, &req, -1, &status, &body, 5000);
	buf_free(&req);
	if (r < 0) {
		buf_free(&body);
		if (status == PROTO_STATUS_UNSENT)
			return vsctl_connect_failed(t->socket_path, r);
		return vsctl_fail(VX_INTERNAL, "top: talking to vsd at %s: %s", t->socket_path,
				  strerror(-r));
	}
	if (status != 0) {
		/* vsd's class, as every other command exits with it */
		while (body.len && body.p[body.len - 1] == '\n')
			body.p[--body.len] = '\0';
		r = vsctl_fail(vx_from_status(status), "top: %s", body.p ? body.p : "refused");
		buf_free(&body);
		return r;
	}
	memset(s, 0, sizeof(*s));
	for (line = body.p; line && *line; line = next) {
		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		if (strncmp(line, "vsd ", 4) == 0) {
			s->ncpu = (unsigned)num(line, "ncpu");
			s->vsd_cpu_usec = num(line, "vsd_cpu_usec");
			continue;
		}
		if (strncmp(line, "vs ", 3) != 0)
			continue;
		if (s->n == cap) {
			struct row *nv;

			cap = cap ? cap * 2 : 64;
			if (!(nv = realloc(s->v, cap * sizeof(*nv)))) {
				buf_free(&body);
				sample_free(s);
				return vsctl_fail(VX_INTERNAL, "top: out of memory");
			}
			s->v = nv;
		}
		memset(&s->v[s->n], 0, sizeof(s->v[s->n]));
		if (kv_get(line, "name", s->v[s->n].name, sizeof(s->v[s->n].name)) < 0)
			continue;
		kv_get(line, "status", s->v[s->n].status, sizeof(s->v[s->n].status));
		for (k = 0; k < F_MAX; k++)
			s->v[s->n].f[k] = num(line, fkey[k]);
		s->n++;
	}
	buf_free(&body);
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), row_cmp_name);
	if (!s->ncpu)
		s->ncpu = 1;
	return 0;
}

static uint64_t
delta(uint64_t now, uint64_t then)
{
	return now == NONE || then == NONE || now < then ? 0 : now - then;
}

/* CPU %, throttled time, events since the first sample, for each row. */
static void
derive(struct top *t)
{
	size_t i;

	for (i = 0; i < t->cur.n; i++) {
		struct row *r = &t->cur.v[i];
		const struct row *p = find(&t->prev, r->name), *f = find(&t->first, r->name);
		uint64_t dt = p ? delta(r->f[F_AT_NS], p->f[F_AT_NS]) : 0;
		uint64_t oom, mmax, pmax;

		r->cpu_pct = dt ? (double)delta(r->f[F_CPU_USEC], p->f[F_CPU_USEC]) * 1e3 /
		    (double)dt * 100.0 / t->cur.ncpu : 0;
		r->throttled_s = p ? (double)delta(r->f[F_CPU_THROTTLED_USEC],
		    p->f[F_CPU_THROTTLED_USEC]) / 1e6 : 0;
		/* a VS made after top started counts from 0 */
		oom = delta(r->f[F_OOM_KILL], f ? f->f[F_OOM_KILL] : 0);
		mmax = delta(r->f[F_MEM_MAX], f ? f->f[F_MEM_MAX] : 0);
		pmax = delta(r->f[F_PIDS_MAX], f ? f->f[F_PIDS_MAX] : 0);
		r->events = oom + mmax + pmax;
		snprintf(r->ev, sizeof(r->ev), "%" PRIu64 "/%" PRIu64 "/%" PRIu64, oom, mmax, pmax);
	}
	t->vsd_ms = t->prev.n || t->prev.vsd_cpu_usec ?
	    (double)delta(t->cur.vsd_cpu_usec, t->prev.vsd_cpu_usec) / 1e3 : 0;
}

static const char *sort_key = "cpu";

static int
row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	double dx = 0, dy = 0;

	if (strcmp(sort_key, "name") == 0)
		return strcmp(x->name, y->name);
	if (strcmp(sort_key, "cpu") == 0)
		dx = x->cpu_pct, dy = y->cpu_pct;
	else if (strcmp(sort_key, "mem") == 0)
		dx = (double)x->f[F_MEM_BYTES], dy = (double)y->f[F_MEM_BYTES];
	else if (strcmp(sort_key, "procs") == 0)
		dx = (double)x->f[F_PIDS], dy = (double)y->f[F_PIDS];
	else if (strcmp(sort_key, "conns") == 0)
		dx = (double)(x->f[F_CONNS_OUT] + x->f[F_CONNS_IN]),
		dy = (double)(y->f[F_CONNS_OUT] + y->f[F_CONNS_IN]);
	else if (strcmp(sort_key, "throttle") == 0)
		dx = x->throttled_s, dy = y->throttled_s;
	else if (strcmp(sort_key, "events") == 0)
		dx = (double)x->events, dy = (double)y->events;
	if (dx != dy)
		return dx < dy ? 1 : -1;	/* largest first */
	return strcmp(x->name, y->name);
}

static const char *
pct(uint64_t bp, char *buf, size_t len)
{
	if (bp == NONE || bp == 0)
		return "-";
	snprintf(buf, len, "%.4g%%", (double)bp / 100.0);
	return buf;
}

static const char *
size(uint64_t v, char *buf, size_t len)
{
	if (v == NONE || v == 0)
		return "-";
	if (v >= 10ull << 30)
		snprintf(buf, len, "%.1fG", (double)v / (1 << 30));
	else if (v >= 10ull << 20)
		snprintf(buf, len, "%.1fM", (double)v / (1 << 20));
	else
		snprintf(buf, len, "%.1fK", (double)v / 1024);
	return buf;
}

/*
 * A service's requests its gate could not classify by their params, as a
 * row of their own ("(unclassified)" is no VS name), with their rate.
 */
static void
unclassified_row(struct top *t, struct buf *out, struct buf *now, const char *line,
		 const char *svc)
{
	uint64_t n = num(line, "unclassified");
	char key[80];
	const char *p;
	double rate = 0;

	snprintf(key, sizeof(key), "service name=%s ", svc);
	buf_printf(now, "%s\n", line);
	if (n == NONE)	/* a supervisor that does not count them */
		return;
	if (t->svc_prev.p && (p = strstr(t->svc_prev.p, key)) && t->delay > 0)
		rate = (double)delta(n, num(p, "unclassified")) / t->delay;
	buf_printf(out, "%-20s %-20s %10" PRIu64 " %8.1f %7s %10s %6s %10s %7s\n", svc,
	    "(unclassified)", n, rate, "-", "-", "-", "-", "-");
}

/* The gated services: one "stats" request each; printed as they come. */
static void
print_services(struct top *t, struct buf *out)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct buf now = { 0 };
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (status_dir(t->socket_path, dir, sizeof(dir)) < 0 || !(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		struct buf b = { 0 };
		size_t l = strlen(de->d_name);
		char *line, *next, svc[VS_NAME_MAX + 1] = "", vs[VS_NAME_MAX + 1];

		if (l < 6 || strcmp(de->d_name + l - 5, ".sock") != 0 ||
		    path_fmt(path, sizeof(path), "%s/%s", dir, de->d_name) < 0 ||
		    gate_status_request(path, "stats\n", &b) < 0 || strncmp(b.p, "service ", 8) != 0) {
			buf_free(&b);
			continue;
		}
		buf_printf(&b, "\n");
		if (!n++)
			buf_printf(out, "\n%-20s %-20s %10s %8s %7s %10s %6s %10s %7s\n", "SERVICE",
			    "VS", "SERVED", "SERVED/s", "QUEUED", "CPU-s", "CPU%", "DB-CPU-s", "DB-CPU%");
		for (line = b.p; line && *line; line = next) {
			uint64_t served, cpu, db;
			const char *p;
			char key[160], dbs[16] = "-", dbp[16] = "-";
			double rate = 0, cpct = 0;

			if ((next = strchr(line, '\n')))
				*next++ = '\0';
			if (strncmp(line, "service ", 8) == 0) {
				kv_get(line, "name", svc, sizeof(svc));
				unclassified_row(t, out, &now, line, svc);
				continue;
			}
			if (strncmp(line, "vs ", 3) != 0 || kv_get(line, "name", vs, sizeof(vs)) < 0)
				continue;
			served = num(line, "served");
			cpu = num(line, "cpu_usec");
			/* the database mode's CPU for the VS (none from an older supervisor) */
			if ((db = num(line, "db_cpu_usec")) != NONE)
				snprintf(dbs, sizeof(dbs), "%.2f", (double)db / 1e6);
			/* the last refresh's figures of the same service and VS */
			snprintf(key, sizeof(key), "vs service=%s name=%s ", svc, vs);
			buf_printf(&now, "%s\n", line);
			if (t->svc_prev.p && (p = strstr(t->svc_prev.p, key)) && t->delay > 0) {
				rate = (double)delta(served, num(p, "served")) / t->delay;
				cpct = (double)delta(cpu, num(p, "cpu_usec")) / 1e4 / t->delay /
				    t->cur.ncpu;
				if (db != NONE && num(p, "db_cpu_usec") != NONE)
					snprintf(dbp, sizeof(dbp), "%.1f", (double)delta(db,
					    num(p, "db_cpu_usec")) / 1e4 / t->delay / t->cur.ncpu);
			}
			buf_printf(out, "%-20s %-20s %10" PRIu64 " %8.1f %7" PRIu64 " %10.2f %6.1f "
			    "%10s %7s\n", svc, vs, served, rate, num(line, "queued"), (double)cpu / 1e6,
			    cpct, dbs, dbp);
		}
		buf_free(&b);
	}
	closedir(d);
	buf_free(&t->svc_prev);
	t->svc_prev = now;
}

static void
print(struct top *t, int first_screen)
{
	struct buf out = { 0 };
	char when[32], a[16], b[16], c[16], d[16];
	time_t now = time(NULL);
	double total = 0;
	size_t i;

	sort_key = t->sort;
	qsort(t->cur.v, t->cur.n, sizeof(*t->cur.v), row_cmp);
	for (i = 0; i < t->cur.n; i++)
		total += t->cur.v[i].cpu_pct;
	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	if (!t->batch)
		buf_printf(&out, "\033[H\033[2J");
	buf_printf(&out, "vsctl top - %s, %zu VSs, %u CPUs, every %.1f s, sorted by %s; "
	    "VSs use %.1f%% of the machine; vsd used %.2f ms of CPU since the last refresh\n", when, t->cur.n,
	    t->cur.ncpu, t->delay, t->sort, total, t->vsd_ms);
	buf_printf(&out, "%-20s %6s %7s %7s %9s %9s %6s %6s %9s %14s %s\n", "VS", "CPU%", "SHARE",
	    "CAP", "MEM", "MEM-MAX", "PROCS", "CONNS", "THROTTLED", "OOM/MEM/PIDS", "STATUS");
	for (i = 0; i < t->cur.n; i++) {
		const struct row *r = &t->cur.v[i];

		buf_printf(&out, "%-20s %6.1f %7s %7s %9s %9s %6" PRIu64 " %6" PRIu64
		    " %8.2fs %14s %s\n", r->name, r->cpu_pct,
		    pct(r->f[F_CPU_BP], a, sizeof(a)), pct(r->f[F_CPU_MAX_BP], b, sizeof(b)),
		    size(r->f[F_MEM_BYTES], c, sizeof(c)), size(r->f[F_MEM_LIMIT], d, sizeof(d)),
		    r->f[F_PIDS] == NONE ? 0 : r->f[F_PIDS],
		    delta(r->f[F_CONNS_OUT], 0) + delta(r->f[F_CONNS_IN], 0), r->throttled_s,
		    r->ev, r->status);
	}
	(void)first_screen;
	print_services(t, &out);
	if (t->batch)
		buf_printf(&out, "\n");
	fwrite(out.p, 1, out.len, stdout);
	fflush(stdout);
	buf_free(&out);
}

static struct termios saved_tio;
static int tio_saved;

static void
tty_restore(void)
{
	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	tio_saved = 0;
}

/* Wait out the interval; in the live view a key may end it: q quits, c m n
 * p o t e sort. Returns 1 to quit. */
static int
wait_key(struct top *t)
{
	static const struct { char key; const char *sort; } keys[] = {
		{ 'c', "cpu" }, { 'm', "mem" }, { 'n', "name" }, { 'p', "procs" },
		{ 'o', "conns" }, { 't', "throttle" }, { 'e', "events" },
	};
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	int ms = (int)(t->delay * 1000);
	size_t i;
	char c;

	if (t->batch || !tio_saved) {
		struct timespec ts = { (time_t)t->delay, (long)((t->delay - (time_t)t->delay) * 1e9) };

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		return 0;
	}
	if (poll(&p, 1, ms) <= 0 || read(STDIN_FILENO, &c, 1) != 1)
		return 0;
	if (c == 'q')
		return 1;
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (keys[i].key == c)
			snprintf(t->sort, sizeof(t->sort), "%s", keys[i].sort);
	return 0;
}

static int
usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
usage_err(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* under --json the error object alone, on stdout */
	if (vsctl_json)
		return vsctl_fail(VX_USAGE, "top: %s", msg);
	fprintf(stderr, "vsctl: top: %s\nusage: vsctl top [-b] [-n ITERATIONS] [-d SECONDS] "
	    "[-s cpu|mem|name|procs|conns|throttle|events]\n", msg);
	return VX_USAGE;
}

int
vsctl_top(int argc, char **argv, const char *socket_path)
{
	static const char *const sorts[] = { "cpu", "mem", "name", "procs", "conns", "throttle",
		"events" };
	struct top t = { .socket_path = socket_path, .delay = 2.0, .sort = "cpu" };
	long it;
	int i, r = 0;

	/* a live table has no JSON form: show --json and list --json have
	 * every VS's figures, metrics the same as Prometheus text */
	if (vsctl_json)
		return usage_err("no JSON output (a live table); list --json and show --json "
		    "give the counters");
	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;
		size_t k;

		if (strcmp(a, "-b") == 0 || strcmp(a, "--batch") == 0) {
			t.batch = 1;
			continue;
		}
		if (strcmp(a, "-d") != 0 && strcmp(a, "-n") != 0 && strcmp(a, "-s") != 0)
			return usage_err("unknown option '%s'", a);
		if (!v)
			return usage_err("%s needs a value", a);
		i++;
		if (a[1] == 'd') {
			errno = 0;
			t.delay = strtod(v, &end);
			if (errno || *end || end == v || !(t.delay >= 1 && t.delay <= 3600))
				return usage_err("-d %s: the interval is 1 to 3600 seconds", v);
		} else if (a[1] == 'n') {
			errno = 0;
			t.iterations = strtol(v, &end, 10);
			if (errno || *end || end == v || t.iterations < 1)
				return usage_err("-n %s: the number of refreshes is 1 or more", v);
		} else {
			for (k = 0; k < ARRAY_SIZE(sorts) && strcmp(v, sorts[k]) != 0; k++)
				;
			if (k == ARRAY_SIZE(sorts))
				return usage_err("-s %s: sort by cpu, mem, name, procs, conns, throttle "
				    "or events", v);
			snprintf(t.sort, sizeof(t.sort), "%s", v);
		}
	}
	if (!isatty(STDOUT_FILENO))
		t.batch = 1;
	if (!t.batch && isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
		struct termios raw = saved_tio;

		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tio_saved = 1;
		atexit(tty_restore);
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	signal(SIGPIPE, SIG_DFL);
	/* the first sample is the baseline: rates need two */
	if ((r = fetch(&t, &t.first)) != 0)
		return r;
	if ((r = fetch(&t, &t.prev)) != 0)
		goto out;
	{
		struct buf none = { 0 };

		print_services(&t, &none);	/* served/CPU baselines */
		buf_free(&none);
	}
	for (it = 0; !t.iterations || it < t.iterations; it++) {
		if (wait_key(&t))
			break;
		if ((r = fetch(&t, &t.cur)) != 0)
			break;
		derive(&t);
		print(&t, it == 0);
		/* cur becomes prev, in name order for find() */
		qsort(t.cur.v, t.cur.n, sizeof(*t.cur.v), row_cmp_name);
		sample_free(&t.prev);
		t.prev = t.cur;
		memset(&t.cur, 0, sizeof(t.cur));
	}
out:
	tty_restore();
	sample_free(&t.first);
	sample_free(&t.prev);
	sample_free(&t.cur);
	buf_free(&t.svc_prev);
	return r;
}
