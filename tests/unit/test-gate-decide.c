// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's decision (gates/accept/decision.c) replaying traces:
 * recorded from the real gate (vsd-gate --trace, tests/unit/gate-decide/
 * rec-*.trace) and written by hand to state one property each (the other
 * *.trace files, named by their first line). Each trace is fed line by line
 * to the real queues (queue.c) and the decision; each "->" line is the
 * answer the decision must give to the "accept" before it. No sockets: a
 * connection is its descriptor number in the trace.
 *
 * The format, one event a line (what trace.c writes):
 *   table home=H                    a VS table follows (replaces the last)
 *   vs id=I name=N rank=R           one VS of it, with its rank
 *   rules FILE                      the rules in force (hand-written traces
 *                                   only; FILE next to the trace), "rules -"
 *                                   for the default rule
 *   arrive l=L c=C vs=I t=NS rank=R content=B
 *                                   C queued on listener L for VS I at NS
 *                                   (ns after the queues' epoch), I's rank then
 *   rank id=I rank=R / rekey l=L    ranks re-sampled, L's queues re-ordered
 *   requeue c=C vs=I t=NS rank=R content=B
 *                                   C, handed over last, failed: back at its head
 *   dead c=C                        C, handed over last, had hung up: closed
 *   gone id=I home=H                VS I is gone: its queued connections go home
 *   pool n=P / held id=I held=N     while a VS has a worker limit: the pool's
 *                                   size, and the workers VS I holds now
 *   accept l=L tid=T bound=B        a thread in VS B waits on L: the decision
 *   -> handover c=C vs=I|stay rule=ACTION / -> empty   ...and its answer,
 *                                   " limit=I" added when VS I, the one the
 *                                   order would serve, held its worker limit
 *   continue l=L tid=T how=H vs=I   the fast path let an accept through
 *                                   (its own decision; not replayed here)
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gates/accept/decision.h"
#include "gates/accept/gate.h"
#include "lib/buf.h"
#include "rules/rules.h"
#include "tap.h"

#define MAXL	16
#define MAXC	4096
#define MAXV	64

struct replay {
	struct gate_vs v[MAXV];
	struct vs_table tab;
	uint32_t home;
	struct rules *rules;
	uint64_t rules_gen;		/* one more each "rules" line */
	struct workers wk;
	uint32_t id_of[MAXV];
	struct gated_listener *l[MAXL];
	unsigned long lino[MAXL];
	struct queued_conn *conn[MAXC];		/* by descriptor: queued or just taken */
	struct gated_listener *conn_l[MAXC];
	char	 want[128];			/* the answer the decision gave */
	unsigned decisions, handovers, continues;
	char	 err[1600];			/* the first mismatch */
};

static const char *dir;	/* where the traces are */


static long
num(const char *line, const char *key)
{
	char k[32];
	const char *p;

	snprintf(k, sizeof(k), " %s=", key);
	if (!(p = strstr(line, k)))
		return -1;
	return strtol(p + strlen(k), NULL, 10);
}

static struct gated_listener *
listener(struct replay *r, unsigned long ino)
{
	int i;

	for (i = 0; i < MAXL && r->l[i]; i++)
		if (r->lino[i] == ino)
			return r->l[i];
	if (i == MAXL)
		return NULL;
	r->lino[i] = ino;
	return r->l[i] = listen_new(-1, 0, (ino_t)ino);
}

static void
index_rules(struct replay *r)
{
	size_t i;

	memset(r->id_of, 0, sizeof(r->id_of));
	for (i = 0; i < r->tab.n; i++) {
		r->v[i].ridx = r->rules ? rules_vs_index(r->rules, r->v[i].name) : -1;
		if (r->v[i].ridx >= 0 && r->v[i].ridx < MAXV)
			r->id_of[r->v[i].ridx] = r->v[i].id;
	}
}

static void
add_vs(struct replay *r, const char *line)
{
	struct gate_vs *v;
	const char *p = strstr(line, " name=");
	size_t i, n;

	if (r->tab.n == MAXV || !p)
		return;
	v = &r->v[r->tab.n++];
	*v = (struct gate_vs){ .id = (uint32_t)num(line, "id"), .rank_bp = (int)num(line, "rank"),
			       .fd_usage = -1, .ridx = -1 };
	n = strcspn(p + 6, " \n");
	snprintf(v->name, sizeof(v->name), "%.*s", (int)n, p + 6);
	/* sorted by id, as vs_table_find() wants */
	for (i = r->tab.n - 1; i > 0 && r->v[i - 1].id > r->v[i].id; i--) {
		struct gate_vs t = r->v[i];

		r->v[i] = r->v[i - 1];
		r->v[i - 1] = t;
	}
	index_rules(r);
}

static void
set_rank(struct replay *r, long id, long rank)
{
	struct gate_vs *v = id > 0 ? vs_table_find(&r->tab, (uint32_t)id) : NULL;

	if (v)
		v->rank_bp = (int)rank;
}

static int
load_rules(struct replay *r, const char *line)
{
	char path[1024], name[256];
	struct buf errs = { 0 };
	int e;

	rules_free(r->rules);
	r->rules = NULL;
	r->rules_gen++;
	if (sscanf(line, "rules %255s", name) != 1 || strcmp(name, "-") == 0) {
		index_rules(r);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	e = rules_load(path, RULES_NO_PERM_CHECK, &r->rules, &errs);
	if (e < 0)
		snprintf(r->err, sizeof(r->err), "%s: %s", path, errs.p ? errs.p : "refused");
	buf_free(&errs);
	index_rules(r);
	return e;
}

/* What the decision answers now, in the trace's words. */
static void
decide(struct replay *r, const char *line)
{
	struct decision_state s = { &r->tab, r->home, r->rules, r->id_of, MAXV,
				    workers_on(&r->wk, r->rules, r->rules_gen) ? &r->wk : NULL };
	struct gated_listener *l = listener(r, (unsigned long)num(line, "l"));
	struct decision d = decide_accept(&s, l, (uint32_t)num(line, "bound"));

	r->decisions++;
	r->handovers += d.kind == DECIDE_HANDOVER;
	trace_answer(r->want, sizeof(r->want), &d);
}

static void
conn_free(struct replay *r, long c)
{
	if (c >= 0 && c < MAXC && r->conn[c]) {
		free(r->conn[c]);
		r->conn[c] = NULL;
	}
}

/* One line; 0, or -1 at the first answer that differs (r->err says). */
static int
step(struct replay *r, const char *line, unsigned no)
{
	long c = num(line, "c");
	char got[128];

	if (strncmp(line, "-> ", 3) == 0) {
		snprintf(got, sizeof(got), "%.*s", (int)strcspn(line, "\n"), line);
		if (strcmp(got, r->want) != 0) {
			snprintf(r->err, sizeof(r->err), "line %u: recorded '%s', decided '%s'", no,
				 got, r->want);
			return -1;
		}
		return 0;
	}
	if (strncmp(line, "table ", 6) == 0) {
		r->tab.n = 0;
		r->home = (uint32_t)num(line, "home");
	} else if (strncmp(line, "vs ", 3) == 0) {
		add_vs(r, line);
	} else if (strncmp(line, "rules ", 6) == 0) {
		return load_rules(r, line);
	} else if (strncmp(line, "rank ", 5) == 0) {
		set_rank(r, num(line, "id"), num(line, "rank"));
	} else if (strncmp(line, "rekey ", 6) == 0) {
		queue_rekey(listener(r, (unsigned long)num(line, "l")), &r->tab);
	} else if (strncmp(line, "arrive ", 7) == 0 || strncmp(line, "requeue ", 8) == 0) {
		int head = line[0] == 'r';
		struct queued_conn *q;

		if (c < 0 || c >= MAXC)
			return 0;
		if (!head) {
			conn_free(r, c);	/* its number was closed and reused */
			r->conn[c] = calloc(1, sizeof(*q));
			r->conn_l[c] = listener(r, (unsigned long)num(line, "l"));
		}
		if (!(q = r->conn[c]))
			return 0;
		q->fd = (int)c;
		q->vs_id = (uint32_t)num(line, "vs");
		q->t_enq = queue_epoch() + (uint64_t)num(line, "t");
		q->by_content = num(line, "content") == 1;
		set_rank(r, num(line, "vs"), num(line, "rank"));
		if (head)
			queue_push_head(r->conn_l[c], q, &r->tab);
		else
			queue_push_tail(r->conn_l[c], q, &r->tab);
	} else if (strncmp(line, "dead ", 5) == 0) {
		conn_free(r, c);
	} else if (strncmp(line, "gone ", 5) == 0) {
		for (int i = 0; i < MAXL && r->l[i]; i++)
			queue_reroute(r->l[i], (uint32_t)num(line, "id"), r->home, &r->tab);
	} else if (strncmp(line, "pool ", 5) == 0) {
		r->wk.pool = (size_t)num(line, "n");
	} else if (strncmp(line, "held ", 5) == 0) {
		workers_set_held(&r->wk, (uint32_t)num(line, "id"), (unsigned)num(line, "held"));
	} else if (strncmp(line, "accept ", 7) == 0) {
		decide(r, line);
	} else if (strncmp(line, "continue ", 9) == 0) {
		r->continues++;
	}
	return 0;
}

/* Replay path; 0 if every answer was the one recorded. name: its first line. */
static int
replay(const char *path, struct replay *r, char *name, size_t len)
{
	char line[512];
	unsigned no = 0;
	FILE *fp = fopen(path, "re");
	int e = 0;

	memset(r, 0, sizeof(*r));
	r->tab.v = r->v;
	listener(r, 0);		/* the queues' epoch is set by the first listener */
	snprintf(name, len, "%s", path);
	if (!fp) {
		snprintf(r->err, sizeof(r->err), "%s: cannot open", path);
		return -1;
	}
	while (fgets(line, sizeof(line), fp)) {
		no++;
		if (no == 1 && line[0] == '#') {
			snprintf(name, len, "%.*s", (int)strcspn(line + 2, "\n"), line + 2);
			continue;
		}
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if ((e = step(r, line, no)) < 0)
			break;
	}
	fclose(fp);
	if (e == 0 && r->decisions == 0) {
		snprintf(r->err, sizeof(r->err), "no decision in it");
		e = -1;
	}
	rules_free(r->rules);
	workers_free(&r->wk);
	return e;
}

static const char *const traces[] = {
	/* recorded from the real gate */
	"rec-two-vs.trace", "rec-share.trace", "rec-prefork.trace", "rec-insulation.trace",
	"rec-hosting.trace", "rec-workers.trace",
	/* one property each */
	"share-order.trace", "empty-vs.trace", "dead-skipped.trace", "rule-change.trace",
	"unknown-vs.trace", "requeue-head.trace", "aging.trace", "stay.trace",
	"workers-limit.trace",
};

int
main(int argc, char **argv)
{
	static struct replay r;
	char name[1200], path[1024];
	const char *top = getenv("top_srcdir");
	size_t i;

	dir = argc > 1 ? argv[1] : NULL;
	if (!dir) {
		static char d[1024];

		snprintf(d, sizeof(d), "%s/tests/unit/gate-decide", top ? top : ".");
		dir = d;
	}
	for (i = 0; i < ARRAY_SIZE(traces); i++) {
		int e;

		snprintf(path, sizeof(path), "%s/%s", dir, traces[i]);
		e = replay(path, &r, name, sizeof(name));
		ok(e == 0, "%s (%u decisions, %u hand-overs%s)", name, r.decisions, r.handovers,
		   strncmp(traces[i], "rec-", 4) == 0 ? ", as recorded" : "");
		if (e)
			printf("#   %s\n", r.err);
	}
	return tap_done();
}
