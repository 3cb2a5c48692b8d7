// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The syntax of sites and content rules (vsrules(5), SITES AND CONTENT
 * RULES), kept apart from the declarations and gate rules they extend:
 *   site shop.example alias www.shop.example docroot /var/www/shop vs www1
 *   site c[0001..0240].example docroot /var/www/c[0001..0240] vs c[0001..0240]
 *   (accept, *, host = *.shop.example) => (www1)
 *   (accept, *, docroot = "/srv/my sites/a") => (www2)
 * Host names and paths are name expressions (one [..] group, paired by
 * position across the statement, as in vs and rules), or quoted strings
 * taken as they are. Their checks and normalisation are content.c's.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "ctx.h"
#include "lex.h"
#include "parse.h"

/* A '*' inside a host name ("a*b.example"): say what a wildcard is. */
static int
star_inside(struct parser *p)
{
	size_t i;

	/* the array ends with T_EOF: never look past it */
	if (cur(p)->type == T_EOF)
		return 0;
	for (i = p->pos + 1; p->t.v[i].type != T_EOF && p->t.v[i].off == p->t.v[i - 1].end; i++) {
		if (p->t.v[i].type == T_STAR) {
			perr(p, &p->t.v[i], "a '*' in a host name may only start it, "
			     "as in *.example.com");
			while (p->pos < i)
				next(p);
			next(p);
			return 1;
		}
	}
	return 0;
}

/*
 * A host name or path: "string", NAME[..]NAME, and for a host a leading
 * '*' touching the rest ("*.example.com"), kept in pre as written.
 */
static int
parse_value(struct parser *p, struct nexpr *e, int host, const char *what)
{
	struct tok *t = cur(p), *star = NULL;
	char *s;

	memset(e, 0, sizeof(*e));
	if (t->type == T_STRING) {
		e->loc = loc_of(p, t);
		e->pre = xstrdup(p->c, t->text);
		e->text = xstrdup(p->c, t->text);
		next(p);
		return p->c->oom ? -1 : 0;
	}
	if (host && t->type == T_STAR) {
		star = t;
		next(p);
		if (cur(p)->type != T_WORD || !adjacent(p)) {
			perr(p, star, "a host wildcard is '*.' and a domain, like *.example.com");
			return -1;
		}
	}
	if (host && star_inside(p))
		return -1;
	if (parse_nexpr(p, e, 0, what) < 0)
		return -1;
	if (star) {
		e->loc = loc_of(p, star);
		if (asprintf(&s, "*%s", e->pre ? e->pre : "") < 0) {
			p->c->oom = 1;
			return -1;
		}
		free(e->pre);
		e->pre = s;
		if (asprintf(&s, "*%s", e->text ? e->text : "") < 0) {
			p->c->oom = 1;
			return -1;
		}
		free(e->text);
		e->text = s;
	}
	return 0;
}

static struct nexpr *
push_value(struct parser *p, struct nexpr **v, size_t *n, size_t *cap, int host,
	   const char *what)
{
	struct nexpr e;
	struct nexpr *slot;

	if (parse_value(p, &e, host, what) < 0) {
		nexpr_free(&e);
		return NULL;
	}
	slot = vec_push(p->c, v, n, cap, sizeof(*slot));
	if (!slot) {
		nexpr_free(&e);
		return NULL;
	}
	*slot = e;
	return slot;
}

/* One "alias H", "docroot D" or "vs V"; -1 after an error (reported). */
static int
site_setting(struct parser *p, void *arg)
{
	struct site_decl *s = arg;
	struct tok *k = cur(p);
	char b[64];

	if (k->type != T_WORD) {
		perr(p, k, "expected alias, docroot or vs, found %s", tok_show(k, b, sizeof(b)));
		return -1;
	}
	next(p);
	if (is_end(cur(p)) || cur(p)->type == T_RBRACE) {
		perr(p, cur(p), "'%s' needs a value, found %s", k->text,
		     tok_show(cur(p), b, sizeof(b)));
		return -1;
	}
	if (strcmp(k->text, "alias") == 0) {
		if (!push_value(p, &s->hosts, &s->nhosts, &s->chosts, 1, "a host name"))
			return -1;
	} else if (strcmp(k->text, "docroot") == 0) {
		if (!push_value(p, &s->docroots, &s->ndocroots, &s->cdocroots, 0, "a path"))
			return -1;
	} else if (strcmp(k->text, "vs") == 0) {
		if (s->has_vs) {
			perr(p, k, "duplicate setting 'vs' (a site belongs to one VS)");
			return -1;
		}
		if (parse_nexpr(p, &s->vs, 0, "a VS name") < 0) {
			nexpr_free(&s->vs);
			return -1;
		}
		s->has_vs = 1;
	} else {
		perr(p, k, "unknown site setting '%s' (expected alias, docroot or vs)", k->text);
		return -1;
	}
	return 0;
}

/* site HOST settings..., on the line or in a { } block across lines */
void
parse_site(struct parser *p)
{
	struct rules_ctx *c = p->c;
	struct site_decl s, *sp;
	memset(&s, 0, sizeof(s));
	s.loc = loc_of(p, cur(p));
	next(p);
	if (!push_value(p, &s.hosts, &s.nhosts, &s.chosts, 1, "a host name"))
		goto fail;
	if (parse_block(p, site_setting, &s) < 0)
		goto fail;
	if (!s.has_vs) {
		rerr(c, &s.loc, "site '%s' needs a VS (vs NAME)", s.hosts[0].text);
		site_decl_free(&s);
		return;
	}
	sp = vec_push(c, &c->sites, &c->nsites, &c->csites, sizeof(*sp));
	if (!sp) {
		site_decl_free(&s);
		return;
	}
	*sp = s;
	return;
fail:
	site_decl_free(&s);
	sync_stmt(p);
}

static int
attr_cond_at(struct parser *p, size_t i)
{
	const struct tok *t = &p->t.v[i];

	/* the token array ends with T_EOF, so t + 1 exists after a word */
	return t->type == T_WORD && t[1].type == T_EQ &&
	    (strcmp(t->text, "host") == 0 || strcmp(t->text, "docroot") == 0);
}

int
at_attr_cond(struct parser *p)
{
	return attr_cond_at(p, p->pos);
}

/* ", host = ..." : the cursor is at the comma */
int
at_attr_cond_next(struct parser *p)
{
	return cur(p)->type != T_EOF && attr_cond_at(p, p->pos + 1);
}

/* host = H or docroot = D in a rule's tuple; the cursor is at the keyword. */
int
parse_attr_cond(struct parser *p, struct rule_decl *r)
{
	struct tok *k = cur(p);
	int host = strcmp(k->text, "host") == 0;

	if (r->has_attr) {
		perr(p, k, "a rule has one content condition (host = ... or docroot = ...)");
		return -1;
	}
	next(p);
	next(p);
	if (parse_value(p, &r->attr_pat, host, host ? "a host name" : "a path") < 0)
		return -1;
	r->has_attr = 1;
	r->attr = host ? RULES_ATTR_HOST : RULES_ATTR_DOCROOT;
	return 0;
}
