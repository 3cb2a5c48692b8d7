// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's decision (gates/accept/decision.c) replaying traces:
 * recorded from the real gate (vsd-gate --trace, tests/unit/gate-decide/
 * rec-*.trace) and written by hand to state one property each (the other
 * *.trace files, named by their first line); or the one FILE.trace given
 * (a run just recorded, tests/gate-trace.sh). Each trace is fed line by line
 * to the real queues (queue.c) and the decision; each "->" line is the
 * answer the decision must give to the "accept" before it. No sockets: a
 * connection is its descriptor number in the trace.
 *
 * The format, one event a line (what trace.c writes):
 *   table home=H                    a VS table follows (replaces the last)
 *   vs id=I name=N rank=R           one VS of it, with its rank
 *   rules begin hash=H              the rules in force, as the gate wrote
 *   | LINE ...                      them (rules_write(), one line of the
 *   rules end                       file each), at start and on each change
 *   rules FILE                      the same from FILE, next to the trace
 *                                   (hand-written traces); "rules -" for
 *                                   the default rule
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
 *   fast l=L tid=T why=W bound=B records=0|1 fed=0|1 attrs=0|1 queued=N
 *        held=N direct=0|1 on=0|1   the fast path's choice (fp-decision.c),
 *                                   for an accept (W: accept) of a thread in
 *                                   VS B, or on new rules (W: rules) for the
 *                                   direct waiter in B; the rest of its state:
 *   model kq=N lost=0|1 expect=E expect_vs=I run_vs=I run_len=N nonblock=X qn=N
 *                                   the kernel's queue length (-1: unknown)
 *                                   against the model; X: the listener's
 *                                   O_NONBLOCK, -1 if not read
 *   q I:NS I:NS ...                 the model's queue from its head, VS and
 *                                   ring time (ns), six a line, at most FP_SCAN
 *   -> continue how=head vs=I|stay rule=ACTION / -> continue how=direct vs=I
 *   rule=ACTION / -> drain / -> move vs=I|stay rule=ACTION / -> keep rule=ACTION
 *                                   ...and its answer
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gates/accept/decision.h"
#include "gates/accept/fp.h"
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
	unsigned decisions, handovers, fast, continues;
	/* the fast path's state, from a "fast" line to its answer */
	int	 fast_open;
	char	 fast_why[16];
	struct fp_view fv;
	struct fp_entry fq[FP_SCAN];
	struct buf rtext;			/* the rules' text, "rules begin" to "end" */
	int	 rules_open;
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
			       .ridx = -1 };
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

/* "rules end": the text since "rules begin" is the rules in force. */
static int
rules_text(struct replay *r, unsigned no)
{
	struct buf errs = { 0 };
	int e;

	rules_free(r->rules);
	r->rules = NULL;
	r->rules_open = 0;
	e = rules_load_buffer("trace", r->rtext.p ? r->rtext.p : "", r->rtext.len,
			      RULES_NO_INCLUDE | RULES_NO_PERM_CHECK, &r->rules, &errs);
	if (e < 0)
		snprintf(r->err, sizeof(r->err), "line %u: its rules: %s", no,
			 errs.p ? errs.p : "refused");
	buf_free(&errs);
	buf_reset(&r->rtext);
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
fast_begin(struct replay *r, const char *line)
{
	const char *p = strstr(line, " why=");

	r->fast_open = 1;
	snprintf(r->fast_why, sizeof(r->fast_why), "%.*s", p ? (int)strcspn(p + 5, " \n") : 0,
		 p ? p + 5 : "");
	r->fv = (struct fp_view){
		.records = (int)num(line, "records"), .fed = (int)num(line, "fed"),
		.want_attrs = (int)num(line, "attrs"), .queued = (int)num(line, "queued"),
		.held = (int)num(line, "held"), .direct = (int)num(line, "direct"),
		.on = (int)num(line, "on"), .bound = (uint32_t)num(line, "bound"),
		.q = r->fq, .qcap = FP_SCAN,
	};
}

static void
fast_model(struct replay *r, const char *line)
{
	r->fv.kq = (int)num(line, "kq");
	r->fv.lost = (int)num(line, "lost");
	r->fv.expect = (unsigned)num(line, "expect");
	r->fv.expect_vs = (uint32_t)num(line, "expect_vs");
	r->fv.run_vs = (uint32_t)num(line, "run_vs");
	r->fv.run_len = (unsigned)num(line, "run_len");
	r->fv.nonblock = (int)num(line, "nonblock");
	r->fv.qn = (unsigned)num(line, "qn");
}

/* "q I:NS ...": the next entries of the model's queue. */
static void
fast_q(struct replay *r, const char *line)
{
	const char *p = line + 1;
	char *end;

	/* qh counts the entries read so far (fast_decide puts it back at 0) */
	for (;;) {
		unsigned long vs = strtoul(p, &end, 10);
		struct fp_entry *e;

		if (end == p || *end != ':' || r->fv.qh >= FP_SCAN)
			break;
		e = &r->fq[r->fv.qh++];
		e->vs = (uint32_t)vs;
		e->t = strtoull(end + 1, &end, 10);
		p = end;
	}
}

/* What the fast path's choice answers now, in the trace's words; -1 if the
 * trace lacks entries of the model's queue. */
static int
fast_decide(struct replay *r)
{
	struct decision_state s = { &r->tab, r->home, r->rules, r->id_of, MAXV };
	struct fp_view v = r->fv;
	struct fp_decision a;
	int nonblock = v.nonblock;

	if (v.qh != (v.qn < FP_SCAN ? v.qn : FP_SCAN))
		return -1;
	v.qh = 0;	/* fast_q counted the entries in it */
	if (strcmp(r->fast_why, "rules") == 0) {
		a = fp_decide_rules(&s, &v);
	} else {
		/* as fastpath.c: the listener's flags only when asked for */
		v.nonblock = -1;
		a = fp_decide_accept(&s, &v);
		if (a.kind == FP_ASK_NONBLOCK && nonblock >= 0) {
			v.nonblock = nonblock;
			a = fp_decide_accept(&s, &v);
		}
	}
	r->fast++;
	r->continues += a.kind == FP_HEAD || a.kind == FP_DIRECT;
	trace_fp_answer(r->want, sizeof(r->want), &a);
	r->fast_open = 0;
	return 0;
}

static void
conn_free(struct replay *r, long c)
{
	if (c >= 0 && c < MAXC && r->conn[c]) {
		free(r->conn[c]);
		r->conn[c] = NULL;
	}
}

/*
 * A "held" line: the VS holds that many workers now. The gate's own takes
 * and returns are not in a trace, so the count is set through the calls
 * the gate makes, on threads already in the pool (the pool is its own
 * "pool" line): a hand-over to a new thread per worker taken, a return to
 * accept per worker given back.
 */
static void
set_held(struct workers *w, uint32_t id, unsigned held)
{
	struct service_thread th;
	unsigned i;

	for (i = workers_held(w, id); i < held; i++) {
		th = (struct service_thread){ .wk_pool = 1 };
		workers_take(w, &th, id);
	}
	for (i = workers_held(w, id); i > held; i--) {
		th = (struct service_thread){ .wk_pool = 1, .wk_vs = id };
		workers_back(w, &th);
	}
}

/* One line; 0, or -1 at the first answer that differs (r->err says). */
static int
step(struct replay *r, const char *line, unsigned no)
{
	long c = num(line, "c");
	char got[128];

	if (r->rules_open) {
		if (strncmp(line, "| ", 2) == 0) {
			buf_add(&r->rtext, line + 2, strlen(line + 2));
			return 0;
		}
		if (strcmp(line, "rules end\n") == 0)
			return rules_text(r, no);
		snprintf(r->err, sizeof(r->err), "line %u: in the rules' text, no \"rules end\"", no);
		return -1;
	}
	if (strncmp(line, "rules begin", 11) == 0) {
		r->rules_open = 1;
		return 0;
	}
	if (strncmp(line, "-> ", 3) == 0) {
		if (r->fast_open && fast_decide(r) < 0) {
			snprintf(r->err, sizeof(r->err), "line %u: the model's queue has %u entries, "
				 "not qn", no, r->fv.qh);
			return -1;
		}
		if (!r->want[0]) {
			snprintf(r->err, sizeof(r->err), "line %u: an answer to no event", no);
			return -1;
		}
		snprintf(got, sizeof(got), "%.*s", (int)strcspn(line, "\n"), line);
		if (strcmp(got, r->want) != 0) {
			snprintf(r->err, sizeof(r->err), "line %u: recorded '%s', decided '%s'", no,
				 got, r->want);
			return -1;
		}
		r->want[0] = 0;
		return 0;
	}
	if (r->fast_open && strncmp(line, "model ", 6) == 0) {
		fast_model(r, line);
	} else if (r->fast_open && strncmp(line, "q ", 2) == 0) {
		fast_q(r, line);
	} else if (r->fast_open) {
		snprintf(r->err, sizeof(r->err), "line %u: the fast path's state, unanswered", no);
		return -1;
	} else if (strncmp(line, "table ", 6) == 0) {
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
		set_held(&r->wk, (uint32_t)num(line, "id"), (unsigned)num(line, "held"));
	} else if (strncmp(line, "accept ", 7) == 0) {
		decide(r, line);
	} else if (strncmp(line, "fast ", 5) == 0) {
		fast_begin(r, line);
	} else {
		snprintf(r->err, sizeof(r->err), "line %u: not an event: %.*s", no,
			 (int)strcspn(line, "\n"), line);
		return -1;
	}
	return 0;
}

/* Replay path; 0 if every answer was the one recorded. name: its first line. */
static int
replay(const char *path, struct replay *r, char *name, size_t len)
{
	char line[4096];
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
	if (e == 0 && r->rules_open) {
		snprintf(r->err, sizeof(r->err), "the rules' text, without \"rules end\"");
		e = -1;
	}
	if (e == 0 && r->fast_open) {
		snprintf(r->err, sizeof(r->err), "the fast path's last state, unanswered");
		e = -1;
	}
	if (e == 0 && r->decisions + r->fast == 0) {
		snprintf(r->err, sizeof(r->err), "no decision in it");
		e = -1;
	}
	/* the connections are the trace's (r->conn): out of the queues first */
	for (int i = 0; i < MAXL && r->l[i]; i++)
		while (queue_pop_best(r->l[i]))
			;
	for (long c = 0; c < MAXC; c++)
		conn_free(r, c);
	for (int i = 0; i < MAXL && r->l[i]; i++) {
		listen_free(r->l[i]);
		r->l[i] = NULL;
	}
	rules_free(r->rules);
	buf_free(&r->rtext);
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
	/* the fast path's choice, one property each */
	"fast-head.trace", "fast-direct.trace", "fast-late-record.trace", "fast-reset.trace",
	/* worker limits */
	"workers-limit.trace",
};

int
main(int argc, char **argv)
{
	static struct replay r;
	char name[1200], path[1024];
	const char *top = getenv("top_srcdir");
	size_t i;

	/* one trace, of a run just made (tests/gate-trace.sh): it must
	 * replay alone, the rules it ran with in it */
	if (argc > 1 && strlen(argv[1]) > 6 && strcmp(argv[1] + strlen(argv[1]) - 6, ".trace") == 0) {
		int e;

		dir = ".";
		e = replay(argv[1], &r, name, sizeof(name));
		ok(e == 0, "%s replays (%u decisions, %u hand-overs, %u fast-path choices, "
		   "%u CONTINUE)", argv[1], r.decisions, r.handovers, r.fast, r.continues);
		if (e)
			printf("#   %s\n", r.err);
		return tap_done();
	}
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
		ok(e == 0, "%s (%u decisions, %u hand-overs, %u fast-path choices, %u CONTINUE%s)",
		   name, r.decisions, r.handovers, r.fast, r.continues,
		   strncmp(traces[i], "rec-", 4) == 0 ? ", as recorded" : "");
		if (e)
			printf("#   %s\n", r.err);
	}
	return tap_done();
}
