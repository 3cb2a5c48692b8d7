// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Gate rules in the paper's tuple form, and the name expressions in them:
 *   (accept, www[1|2], req = www[2|1]) => (www[2|1])
 *   (socket, *, *) => (creator)
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "ctx.h"
#include "lex.h"
#include "parse.h"

/* [a|b|001..300] after pre; each choice may be a range. */
static int
parse_alts(struct parser *p, struct nexpr *e)
{
	struct tok *open = cur(p), *t;
	char b[64];

	next(p);
	for (;;) {
		t = cur(p);
		if (t->type == T_WORD) {
			struct rules_loc at = loc_of(p, t);

			if (expand_item(p->c, &at, t->text, e) < 0)
				return -1;
			next(p);
		} else {
			if (is_end(t))
				perr(p, open, "unterminated '[' (no ']' before end of line)");
			else
				perr(p, t, "expected a choice in '[...]', found %s",
				     tok_show(t, b, sizeof(b)));
			return -1;
		}
		t = cur(p);
		if (t->type == T_PIPE) {
			next(p);
			continue;
		}
		if (t->type == T_RBRACK) {
			next(p);
			break;
		}
		if (is_end(t))
			perr(p, open, "unterminated '[' (no ']' before end of line)");
		else
			perr(p, t, "expected '|' or ']', found %s", tok_show(t, b, sizeof(b)));
		return -1;
	}
	e->has_group = 1;
	return 0;
}

int
parse_nexpr(struct parser *p, struct nexpr *e, int allow_star, const char *what)
{
	struct tok *t = cur(p);
	size_t start = t->off, end;
	int any = 0;
	char b[64];

	memset(e, 0, sizeof(*e));
	e->loc = loc_of(p, t);
	if (t->type == T_WORD) {
		e->pre = xstrdup(p->c, t->text);
		next(p);
		any = 1;
	}
	if (cur(p)->type == T_LBRACK && (!any || adjacent(p))) {
		if (parse_alts(p, e) < 0)
			return -1;
		any = 1;
		if (cur(p)->type == T_WORD && adjacent(p)) {
			e->post = xstrdup(p->c, cur(p)->text);
			next(p);
		}
		if (cur(p)->type == T_LBRACK && adjacent(p)) {
			perr(p, cur(p), "only one '[...]' group is allowed in a name");
			return -1;
		}
	}
	if (cur(p)->type == T_STAR && (!any || adjacent(p))) {
		if (!allow_star) {
			perr(p, cur(p), "unexpected '*': %s must name VSs, not a pattern", what);
			return -1;
		}
		e->star = 1;
		next(p);
		any = 1;
		t = cur(p);
		if ((t->type == T_WORD || t->type == T_LBRACK || t->type == T_STAR) &&
		    adjacent(p)) {
			perr(p, t, "unexpected %s: '*' may only end a pattern",
			     tok_show(t, b, sizeof(b)));
			return -1;
		}
	}
	if (!any) {
		perr(p, t, "expected %s, found %s", what, tok_show(t, b, sizeof(b)));
		return -1;
	}
	end = p->t.v[p->pos - 1].end;
	e->text = strndup(p->data + start, end - start);
	if (!e->text)
		p->c->oom = 1;
	return 0;
}

/* ')' closing the tuple or target opened at open. */
static int
expect_close(struct parser *p, const struct tok *open, const char *expected)
{
	struct tok *t = cur(p);
	char b[64];

	if (t->type == T_RPAREN) {
		next(p);
		return 1;
	}
	if (is_end(t))
		perr(p, open, "unterminated tuple: '(' has no ')' before %s",
		     t->type == T_EOF ? "end of file" : "end of line");
	else if (t->type == T_ARROW)
		perr(p, t, "unterminated tuple: expected ')' before '=>'");
	else
		perr(p, t, "expected %s, found %s", expected, tok_show(t, b, sizeof(b)));
	return 0;
}

static const char *const target_kw[] = {
	[RULES_STAY] = "stay",
	[RULES_TO_CREATOR] = "creator",
	[RULES_TO_REQUESTER] = "requester",
	[RULES_TO_HOME] = "home",
};

/* A reserved word: it can never be a VS name. */
int
target_keyword(const char *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(target_kw); i++)
		if (target_kw[i] && strcmp(s, target_kw[i]) == 0)
			return (int)i;
	return -1;
}

static int
parse_target(struct parser *p, struct rule_decl *r)
{
	struct tok *t = cur(p);
	int kw;

	if (t->type == T_WORD && (kw = target_keyword(t->text)) >= 0) {
		memset(&r->target, 0, sizeof(r->target));
		r->target.keyword = kw + 1;
		r->target.loc = loc_of(p, t);
		r->target.text = xstrdup(p->c, t->text);
		next(p);
		return 0;
	}
	return parse_nexpr(p, &r->target, 0,
			   "a target (a VS, creator, requester, home or stay)");
}

void
parse_rule(struct parser *p)
{
	struct tok *open = cur(p), *t, *topen;
	struct rule_decl r, *rp;
	char b[64];

	memset(&r, 0, sizeof(r));
	r.loc = loc_of(p, open);
	next(p);
	t = cur(p);
	if (t->type != T_WORD) {
		if (is_end(t))
			expect_close(p, open, "");
		else
			perr(p, t, "expected a gate (accept, socket or fork), found %s",
			     tok_show(t, b, sizeof(b)));
		goto fail;
	}
	r.gate = rules_gate_from_name(t->text);
	if (r.gate < 0)
		perr(p, t, "unknown gate '%s' (expected accept, socket or fork)", t->text);
	next(p);
	if (cur(p)->type != T_COMMA) {
		if (!expect_close(p, open, "',' after the gate"))
			goto fail;
		perr(p, t, "the rule needs a VS pattern after the gate: (%s, VS, ...)", t->text);
		goto fail;
	}
	next(p);
	if (is_end(cur(p))) {
		expect_close(p, open, "");
		goto fail;
	}
	if (parse_nexpr(p, &r.caller, 1, "a VS pattern") < 0)
		goto fail;
	if (cur(p)->type == T_COMMA) {
		next(p);
		t = cur(p);
		if (is_end(t)) {
			expect_close(p, open, "");
			goto fail;
		}
		if (!at_attr_cond(p)) {
			if (t->type == T_WORD && strcmp(t->text, "req") == 0 &&
			    p->t.v[p->pos + 1].type == T_EQ) {
				next(p);
				next(p);
			}
			if (parse_nexpr(p, &r.req, 1, "a requester pattern") < 0)
				goto fail;
			r.has_req = 1;
			if (cur(p)->type == T_COMMA && at_attr_cond_next(p))
				next(p);
		}
		/* a content condition (parse-site.c): host = H, docroot = D */
		if (at_attr_cond(p) && parse_attr_cond(p, &r) < 0)
			goto fail;
		if (r.has_attr && cur(p)->type == T_COMMA && at_attr_cond_next(p)) {
			next(p);
			parse_attr_cond(p, &r);		/* reports the second one */
			goto fail;
		}
		if (cur(p)->type == T_COMMA) {
			perr(p, cur(p), "too many elements in the tuple: a rule is "
			     "(gate, VS, req = VS[, host = H | docroot = D]) => (target)");
			goto fail;
		}
	}
	if (!expect_close(p, open, "',' or ')'"))
		goto fail;
	if (cur(p)->type != T_ARROW) {
		perr(p, cur(p), "expected '=>' after the tuple, found %s",
		     tok_show(cur(p), b, sizeof(b)));
		goto fail;
	}
	next(p);
	topen = cur(p);
	if (topen->type == T_LPAREN) {
		next(p);
		if (parse_target(p, &r) < 0 || !expect_close(p, topen, "')'"))
			goto fail;
	} else if (parse_target(p, &r) < 0) {
		goto fail;
	}
	rp = vec_push(p->c, &p->c->rules, &p->c->nrules, &p->c->crules, sizeof(*rp));
	if (!rp)
		goto fail;
	*rp = r;
	return;
fail:
	nexpr_free(&r.caller);
	nexpr_free(&r.req);
	nexpr_free(&r.target);
	nexpr_free(&r.attr_pat);
	sync_stmt(p);
}
