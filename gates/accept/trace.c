// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vsd-gate --trace FILE: each event the decision sees and each answer it
 * gives, one text line each, so that a run of the real gate replays through
 * decision.c (tests/unit/test-gate-decide.c, which documents the format).
 * Times are ns since the queues' epoch (queue_epoch()), the order's origin,
 * so a replay computes the same keys. Off (!g->tracing): one test per
 * event. The file is created by root: opened with no link followed, never
 * an existing file.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "decision.h"
#include "fp.h"
#include "gate.h"
#include "lib/buf.h"
#include "lib/log.h"
#include "rules/rules.h"

/* The rule's action by its vsrules(5) word; "none": no rule was asked. */
static const char *
rule_name(int rule)
{
	return rule >= 0 ? rules_action_name((enum rules_action)rule) : "none";
}

int
trace_open(struct gate *g, const char *path)
{
	g->trace_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	g->tracing = g->trace_fd >= 0;
	if (!g->tracing) {
		int r = -errno;

		log_warn("--trace %s", path);
		return r;
	}
	return 0;
}

static void __attribute__((format(printf, 2, 3)))
line(struct gate *g, const char *fmt, ...)
{
	char b[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(b) && write(g->trace_fd, b, (size_t)n) != n) {
		log_warn("%s: write; tracing stops", __func__);
		close(g->trace_fd);
		g->tracing = 0;
	}
}

/* The VS's rank now, which the line says: the replay's is that from here on. */
static int
rank_of(struct gate *g, uint32_t id)
{
	struct gate_vs *v = vs_table_find(&g->tab, id);

	if (!v)
		return 0;
	v->trace_rank = v->rank_bp;
	return v->rank_bp;
}

void
trace_table(struct gate *g)
{
	size_t i;

	if (!g->tracing)
		return;
	line(g, "table home=%u\n", g->home);
	for (i = 0; i < g->tab.n; i++) {
		g->tab.v[i].trace_rank = g->tab.v[i].rank_bp;
		line(g, "vs id=%u name=%s rank=%d\n", g->tab.v[i].id, g->tab.v[i].name,
		     g->tab.v[i].rank_bp);
	}
}

void
trace_rules(struct gate *g)
{
	struct buf text = { 0 }, b = { 0 };
	const char *p, *nl;

	if (!g->tracing)
		return;
	if (!g->rules) {
		line(g, "rules -\n");
		return;
	}
	/* the rules as a file that loads into the same decisions, each line
	 * after "| ", so a replay needs nothing but the trace */
	rules_write(g->rules, &text);
	buf_printf(&b, "rules begin hash=%016llx\n", (unsigned long long)g->rules_hash);
	for (p = text.p; p && *p; p = nl + 1) {
		if (!(nl = strchr(p, '\n')))
			nl = p + strlen(p);
		buf_printf(&b, "| %.*s\n", (int)(nl - p), p);
		if (!*nl)
			break;
	}
	buf_printf(&b, "rules end\n");
	if (b.p && write(g->trace_fd, b.p, b.len) != (ssize_t)b.len) {
		log_warn("%s: write; tracing stops", __func__);
		close(g->trace_fd);
		g->tracing = 0;
	}
	buf_free(&text);
	buf_free(&b);
}

void
trace_conn(struct gate *g, const char *what, const struct queued_conn *c)
{
	if (!g->tracing)
		return;
	/* what a key is computed from: the VS's rank now, the head's time */
	line(g, "%s c=%d vs=%u t=%llu rank=%d content=%d\n", what, c->fd, c->vs_id,
	     (unsigned long long)(c->t_enq - queue_epoch()), rank_of(g, c->vs_id), c->by_content);
}

void
trace_arrive(struct gate *g, const struct gated_listener *l, const struct queued_conn *c)
{
	if (!g->tracing)
		return;
	line(g, "arrive l=%lu c=%d vs=%u t=%llu rank=%d content=%d\n", (unsigned long)l->ino,
	     c->fd, c->vs_id, (unsigned long long)(c->t_enq - queue_epoch()),
	     rank_of(g, c->vs_id), c->by_content);
}

/* Only the ranks that changed since the trace last gave them. */
static void
ranks(struct gate *g)
{
	size_t i;

	for (i = 0; i < g->tab.n; i++)
		if (g->tab.v[i].trace_rank != g->tab.v[i].rank_bp) {
			g->tab.v[i].trace_rank = g->tab.v[i].rank_bp;
			line(g, "rank id=%u rank=%d\n", g->tab.v[i].id, g->tab.v[i].rank_bp);
		}
}

void
trace_rekey(struct gate *g, const struct gated_listener *l)
{
	if (!g->tracing)
		return;
	ranks(g);
	line(g, "rekey l=%lu\n", (unsigned long)l->ino);
}

void
trace_gone(struct gate *g, uint32_t id)
{
	if (g->tracing)
		line(g, "gone id=%u home=%u\n", id, g->home);
}

void
trace_answer(char *b, size_t len, const struct decision *d)
{
	char held[24] = "";

	/* the VS passed over at its worker limit, only when one was */
	if (d->held_back)
		snprintf(held, sizeof(held), " limit=%u", d->held_back);
	if (d->kind == DECIDE_EMPTY)
		snprintf(b, len, "-> empty%s", held);
	else if (d->stay)
		snprintf(b, len, "-> handover c=%d vs=stay rule=%s%s", d->c->fd, rule_name(d->rule),
			 held);
	else
		snprintf(b, len, "-> handover c=%d vs=%u rule=%s%s", d->c->fd, d->vs ? d->vs->id : 0,
			 rule_name(d->rule), held);
}

/* While a worker limit is in force, what the decision reads of the
 * workers (workers.c): the pool and each VS's count, where they changed
 * since the trace last said them. */
static void
trace_workers(struct gate *g)
{
	struct workers *w = &g->wk;
	size_t i;

	if (!w->on)
		return;
	if (w->pool != w->pool_traced) {
		w->pool_traced = w->pool;
		line(g, "pool n=%zu\n", w->pool);
	}
	for (i = 0; i < w->n; i++)
		if (w->v[i].traced != w->v[i].held) {
			w->v[i].traced = w->v[i].held;
			line(g, "held id=%u held=%u\n", w->v[i].id, w->v[i].held);
		}
}

void
trace_decision(struct gate *g, const struct gated_listener *l, const struct pending_accept *w,
    const struct decision *d)
{
	char b[128];

	if (!g->tracing)
		return;
	trace_workers(g);
	line(g, "accept l=%lu tid=%d bound=%u\n", (unsigned long)l->ino, (int)w->th->tid,
	     w->th->bound);
	trace_answer(b, sizeof(b), d);
	line(g, "%s\n", b);
}

static void
where(char *b, size_t len, const char *what, const struct decision *d)
{
	if (d->stay)
		snprintf(b, len, "-> %s vs=stay rule=%s", what, rule_name(d->rule));
	else
		snprintf(b, len, "-> %s vs=%u rule=%s", what, d->vs ? d->vs->id : 0,
			 rule_name(d->rule));
}

void
trace_fp_answer(char *b, size_t len, const struct fp_decision *a)
{
	switch (a->kind) {
	case FP_HEAD:
		where(b, len, "continue how=head", &a->where);
		break;
	case FP_DIRECT:
		snprintf(b, len, "-> continue how=direct vs=%u rule=%s", a->vs ? a->vs->id : 0,
			 rule_name(a->rule));
		break;
	case FP_MOVE:
		where(b, len, "move", &a->where);
		break;
	case FP_KEEP:
		snprintf(b, len, "-> keep rule=%s", rule_name(a->rule));
		break;
	case FP_ASK_NONBLOCK:
		snprintf(b, len, "-> ask nonblock");
		break;
	case FP_DRAIN:
	default:
		snprintf(b, len, "-> drain");
		break;
	}
}

void
trace_fp(struct gate *g, const struct gated_listener *l, const struct service_thread *th,
    const char *why, const struct fp_view *v, const struct fp_decision *a)
{
	char b[256], *p = b;
	unsigned i, n = v->qn < FP_SCAN ? v->qn : FP_SCAN;

	if (!g->tracing)
		return;
	ranks(g);	/* the head's order is by them */
	line(g, "fast l=%lu tid=%d why=%s bound=%u records=%d fed=%d attrs=%d queued=%d "
	     "held=%d direct=%d on=%d\n", (unsigned long)l->ino, (int)th->tid, why, v->bound,
	     v->records, v->fed, v->want_attrs, v->queued, v->held, v->direct, v->on);
	line(g, "model kq=%d lost=%d expect=%u expect_vs=%u run_vs=%u run_len=%u nonblock=%d "
	     "qn=%u\n", v->kq, v->lost, v->expect, v->expect_vs, v->run_vs, v->run_len,
	     v->nonblock, v->qn);
	/* the entries the choice may look at (FP_SCAN, beyond which it drains
	 * by the head alone), six a line */
	for (i = 0; i < n; i++) {
		const struct fp_entry *e = &v->q[(v->qh + i) % v->qcap];

		p += sprintf(p, "%s%u:%llu", i % 6 ? " " : "q ", e->vs, (unsigned long long)e->t);
		if (i % 6 == 5 || i + 1 == n) {
			line(g, "%s\n", b);
			p = b;
		}
	}
	trace_fp_answer(b, sizeof(b), a);
	line(g, "%s\n", b);
}
