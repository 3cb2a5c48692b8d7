// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Every VS's figures in one reply (the `stats` request; stats.h): `vsctl
 * top` asks once per refresh for all rows, whatever the number of VSs.
 * The text form is one "key=value ..." line per VS (names are
 * [a-z][a-z0-9_-]*, so nothing needs quoting); --json gives the same as an
 * array of objects.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "stats.h"
#include "vsd.h"

/* The cache: one slot per VS id, sorted by id; rebuilt from the registry at
 * each request, so destroyed VSs drop out. */
struct slot {
	uint32_t	 id;
	struct vs_stats	 s;
};
static struct slot *cache;
static size_t ncache;
/* A pass over every VS (stats, metrics) that began within STATS_MAX_AGE_MS
 * of the end of the last full pass serves that pass's samples: under load
 * a pass at 1,000 VSs takes longer than the age (see stats.h). */
static uint64_t pass_end;
static int pass_fresh;

void
stats_pass_begin(void)
{
	pass_fresh = pass_end && mono_ns() < pass_end + STATS_MAX_AGE_MS * 1000000ull;
}

void
stats_pass_end(void)
{
	if (!pass_fresh)
		pass_end = mono_ns();
	pass_fresh = 0;
}

static int
slot_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct slot *)a)->id, y = ((const struct slot *)b)->id;

	return x < y ? -1 : x > y;
}

static struct slot *
slot_find(uint32_t id)
{
	struct slot key = { .id = id };

	return ncache ? bsearch(&key, cache, ncache, sizeof(*cache), slot_cmp) : NULL;
}

static void
stats_read(struct vsd *d, const struct vs *vs, struct vs_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->at_ns = mono_ns();
	if (vs->status == VS_OK && cg_vs_stats(&d->cg, vs, &s->cg) == 0)
		s->ok = 1;
	if (d->gate) {
		struct vsd_vs_conns vc;

		if (gate_socket_vs_conns(d->gate, vs->id, &vc) == 0) {
			s->conns_out = vc.out;
			s->conns_in = vc.in;
		}
	}
}

const struct vs_stats *
vs_stats_get(struct vsd *d, const struct vs *vs)
{
	struct slot *sl = slot_find(vs->id), *nc;
	uint64_t now = mono_ns();
	size_t i, n;

	if (sl && sl->s.at_ns && (pass_fresh || sl->s.at_ns + STATS_MAX_AGE_MS * 1000000ull > now))
		return &sl->s;
	if (sl) {
		stats_read(d, vs, &sl->s);
		return &sl->s;
	}
	/* a VS not seen yet: rebuild the cache from the registry */
	if (!(nc = calloc(d->reg.n ? d->reg.n : 1, sizeof(*nc)))) {
		static struct vs_stats tmp;

		stats_read(d, vs, &tmp);
		return &tmp;
	}
	for (i = n = 0; i < d->reg.n; i++) {
		const struct slot *old = slot_find(d->reg.v[i]->id);

		nc[n].id = d->reg.v[i]->id;
		if (old)
			nc[n].s = old->s;
		else if (d->reg.v[i] == vs)
			stats_read(d, vs, &nc[n].s);
		n++;
	}
	free(cache);
	cache = nc;
	ncache = n;
	qsort(cache, ncache, sizeof(*cache), slot_cmp);
	if (!(sl = slot_find(vs->id))) {	/* not registered (yet): not cached */
		static struct vs_stats tmp;

		stats_read(d, vs, &tmp);
		return &tmp;
	}
	return &sl->s;
}

static void
json_counter(struct buf *b, const char *key, const struct cg_stats *st, unsigned bit, uint64_t v)
{
	buf_printf(b, "\"%s\": ", key);
	if (st->have & bit)
		buf_printf(b, "%" PRIu64, v);
	else
		buf_printf(b, "null");
}

const struct stats_field stats_events[] = {
	{ "oom_kill", CG_ST_OOM, offsetof(struct cg_stats, oom_kill) },
	{ "mem_high", CG_ST_MEM_HIGH, offsetof(struct cg_stats, mem_high) },
	{ "mem_max", CG_ST_MEM_MAX, offsetof(struct cg_stats, mem_max) },
	{ "pids_max", CG_ST_PIDS_MAX, offsetof(struct cg_stats, pids_max) },
	{ "cpu_periods", CG_ST_THROTTLE, offsetof(struct cg_stats, nr_periods) },
	{ "cpu_throttled", CG_ST_THROTTLE, offsetof(struct cg_stats, nr_throttled) },
	{ "cpu_throttled_usec", CG_ST_THROTTLE, offsetof(struct cg_stats, throttled_usec) },
	{ NULL, 0, 0 },
};

void
stats_events_json(const struct cg_stats *st, struct buf *b)
{
	const struct stats_field *f;

	buf_printf(b, ", \"events\": {");
	for (f = stats_events; f->key; f++) {
		buf_printf(b, "%s", f == stats_events ? "" : ", ");
		json_counter(b, f->key, st, f->bit, STATS_FIELD(st, f));
	}
	buf_printf(b, "}");
}

static const char *
counter(const struct cg_stats *st, unsigned bit, uint64_t v, char *buf, size_t len)
{
	if (!(st->have & bit))
		return "-";
	snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

void
stats_events_text(const struct cg_stats *st, struct buf *b)
{
	char a[24], h[24], m[24], p[24];

	buf_printf(b, "events: oom-kill %s, memory-high %s, memory-max %s, pids-max %s\n",
		   counter(st, CG_ST_OOM, st->oom_kill, a, sizeof(a)),
		   counter(st, CG_ST_MEM_HIGH, st->mem_high, h, sizeof(h)),
		   counter(st, CG_ST_MEM_MAX, st->mem_max, m, sizeof(m)),
		   counter(st, CG_ST_PIDS_MAX, st->pids_max, p, sizeof(p)));
	if (st->have & CG_ST_THROTTLE)
		buf_printf(b, "cpu cap: throttled in %" PRIu64 " of %" PRIu64 " periods, %.3f s\n",
			   st->nr_throttled, st->nr_periods, (double)st->throttled_usec / 1e6);
}

/* A counter as a "key=value" word: -1 where the layout has none. */
static void
kv(struct buf *b, const char *key, const struct cg_stats *st, unsigned bit, uint64_t v)
{
	if (st->have & bit)
		buf_printf(b, " %s=%" PRIu64, key, v);
	else
		buf_printf(b, " %s=-1", key);
}

static void
row_text(const struct vs *vs, const struct vs_stats *s, struct buf *b)
{
	const struct cg_stats *st = &s->cg;
	const struct stats_field *f;

	buf_printf(b, "vs name=%s id=%" PRIu32 " status=%s cpu_bp=%u cpu_max_bp=%u mem_limit=%" PRIu64
		   " pids_limit=%" PRIu64 " at_ns=%" PRIu64, vs->name, vs->id,
		   vs->status != VS_OK ? "missing" : s->ok ? "ok" : "unreadable", vs->lim.cpu,
		   vs->lim.cpu_max, vs->lim.mem_max, vs->lim.pids_max, s->at_ns);
	kv(b, "cpu_usec", st, CG_ST_CPU, st->cpu_usec);
	kv(b, "mem_bytes", st, CG_ST_MEM, st->mem_bytes);
	kv(b, "pids", st, CG_ST_PIDS, st->pids);
	buf_printf(b, " conns_out=%" PRIu32 " conns_in=%" PRIu32, s->conns_out, s->conns_in);
	for (f = stats_events; f->key; f++)
		kv(b, f->key, st, f->bit, STATS_FIELD(st, f));
	buf_printf(b, "\n");
}

static void
row_json(const struct vs *vs, const struct vs_stats *s, struct buf *b)
{
	const struct cg_stats *st = &s->cg;

	buf_printf(b, "{\"name\": ");
	buf_json_str(b, vs->name);
	buf_printf(b, ", \"id\": %" PRIu32 ", \"status\": \"%s\", \"cpu_bp\": %u, \"cpu_max_bp\": %u, "
		   "\"mem_limit\": %" PRIu64 ", \"pids_limit\": %" PRIu64 ", \"at_ns\": %" PRIu64
		   ", \"usage\": {", vs->id, vs->status != VS_OK ? "missing" : s->ok ? "ok" : "unreadable",
		   vs->lim.cpu, vs->lim.cpu_max, vs->lim.mem_max, vs->lim.pids_max, s->at_ns);
	json_counter(b, "cpu_usec", st, CG_ST_CPU, st->cpu_usec);
	buf_printf(b, ", ");
	json_counter(b, "mem_bytes", st, CG_ST_MEM, st->mem_bytes);
	buf_printf(b, ", ");
	json_counter(b, "pids", st, CG_ST_PIDS, st->pids);
	buf_printf(b, "}, \"conns\": {\"out\": %" PRIu32 ", \"in\": %" PRIu32 "}", s->conns_out,
		   s->conns_in);
	stats_events_json(st, b);
	buf_printf(b, "}");
}

/* vsd's own CPU time so far (user + system), for a reader measuring its cost. */
static uint64_t
self_cpu_usec(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

int
cmd_stats(struct vsd *d, const struct request *req, struct reply *rep)
{
	size_t i;

	(void)req;
	stats_pass_begin();
	if (rep->json) {
		buf_printf(&rep->out, "{\"ncpu\": %u, \"now_ns\": %" PRIu64 ", \"vsd_cpu_usec\": %" PRIu64
			   ", \"vs\": [", d->cg.ncpu, mono_ns(), self_cpu_usec());
		for (i = 0; i < d->reg.n; i++) {
			buf_printf(&rep->out, "%s", i ? ",\n " : "");
			row_json(d->reg.v[i], vs_stats_get(d, d->reg.v[i]), &rep->out);
		}
		buf_printf(&rep->out, "]}\n");
		stats_pass_end();
		return 0;
	}
	buf_printf(&rep->out, "vsd ncpu=%u now_ns=%" PRIu64 " vsd_cpu_usec=%" PRIu64 " count=%zu\n",
		   d->cg.ncpu, mono_ns(), self_cpu_usec(), d->reg.n);
	for (i = 0; i < d->reg.n; i++)
		row_text(d->reg.v[i], vs_stats_get(d, d->reg.v[i]), &rep->out);
	stats_pass_end();
	return 0;
}
