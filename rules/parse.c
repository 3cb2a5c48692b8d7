// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The parser: statements of one file -> declarations in the context.
 * A statement ends at a newline or ';' (a '{' block may span lines). After a
 * syntax error the parser skips to the end of the statement and goes on, so
 * one pass reports every error; references between declarations are resolved
 * later (check.c), so their order in the file does not matter.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "ctx.h"
#include "lex.h"
#include "parse.h"

static void parse_include(struct parser *p);

void
parse_text(struct rules_ctx *c, const char *file, const char *data, size_t len)
{
	struct parser p = { .c = c, .file = file, .data = data };

	if (lex(c, file, data, len, &p.t) < 0) {
		toks_free(&p.t);
		return;
	}
	while (cur(&p)->type != T_EOF && !c->oom) {
		struct tok *t = cur(&p);

		if (t->type == T_NL || t->type == T_SEMI) {
			next(&p);
			continue;
		}
		if (t->type == T_LPAREN) {
			parse_rule(&p);
		} else if (t->type == T_WORD && strcmp(t->text, "include") == 0) {
			parse_include(&p);
		} else if (t->type == T_WORD && strcmp(t->text, "vs") == 0) {
			parse_vs(&p);
		} else if (t->type == T_WORD && strcmp(t->text, "plan") == 0) {
			parse_plan(&p);
		} else if (t->type == T_WORD && strcmp(t->text, "group") == 0) {
			parse_group(&p);
		} else if (t->type == T_WORD && strcmp(t->text, "service") == 0) {
			parse_service(&p);
		} else if (t->type == T_WORD && strcmp(t->text, "site") == 0) {
			parse_site(&p);
		} else if (t->type == T_WORD && strcmp(t->text, "remote") == 0) {
			parse_remote(&p);
		} else {
			char b[64];

			perr(&p, t, "unexpected %s (expected vs, plan, group, service, site, remote, "
			     "include or a rule '(gate, ...) => (target)')", tok_show(t, b, sizeof(b)));
			sync_stmt(&p);
			continue;
		}
		expect_end(&p);
	}
	toks_free(&p.t);
}

struct tok *
cur(struct parser *p)
{
	return &p->t.v[p->pos];
}

void
next(struct parser *p)
{
	if (p->t.v[p->pos].type != T_EOF)
		p->pos++;
}

/* The current token touches the previous one (no blank between). */
int
adjacent(struct parser *p)
{
	return p->pos > 0 && p->t.v[p->pos].off == p->t.v[p->pos - 1].end;
}

struct rules_loc
loc_of(struct parser *p, const struct tok *t)
{
	struct rules_loc l = { p->file, t->line, t->col };

	return l;
}

int
is_end(const struct tok *t)
{
	return t->type == T_NL || t->type == T_SEMI || t->type == T_EOF;
}

void
perr(struct parser *p, const struct tok *t, const char *fmt, ...)
{
	struct rules_loc l = loc_of(p, t);
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rerr(p->c, &l, "%s", msg);
}

/* Skip the rest of a statement after an error (a '{' block as a whole). */
void
sync_stmt(struct parser *p)
{
	int depth = 0;

	for (;;) {
		enum tok_type ty = cur(p)->type;

		if (ty == T_EOF)
			return;
		if (ty == T_LBRACE)
			depth++;
		else if (ty == T_RBRACE && depth > 0)
			depth--;
		else if (depth == 0 && (ty == T_NL || ty == T_SEMI))
			return;
		next(p);
	}
}

void
expect_end(struct parser *p)
{
	char b[64];

	if (is_end(cur(p)))
		return;
	perr(p, cur(p), "unexpected %s at the end of the statement",
	     tok_show(cur(p), b, sizeof(b)));
	sync_stmt(p);
}

/*
 * Settings up to the end of the statement, or in a { } block that may span
 * lines: one(p, arg) parses each. -1 when one fails (the statement is then
 * the caller's to skip) or the block is not closed.
 */
int
parse_block(struct parser *p, int (*one)(struct parser *, void *), void *arg)
{
	struct tok *open = NULL;

	for (;;) {
		struct tok *t = cur(p);

		if (!open && t->type == T_LBRACE) {
			open = t;
			next(p);
			continue;
		}
		if (open) {
			if (t->type == T_NL || t->type == T_SEMI) {
				next(p);
				continue;
			}
			if (t->type == T_RBRACE) {
				next(p);
				return 0;
			}
			if (t->type == T_EOF) {
				perr(p, open, "unterminated '{' (no '}' before end of file)");
				return -1;
			}
		} else if (is_end(t)) {
			return 0;
		}
		if (one(p, arg) < 0)
			return -1;
	}
}

/* include "file" */
static void
parse_include(struct parser *p)
{
	struct tok *t;
	struct rules_loc at;
	char b[64];

	next(p);
	t = cur(p);
	if (t->type != T_STRING && t->type != T_WORD) {
		perr(p, t, "include needs a file name, found %s", tok_show(t, b, sizeof(b)));
		sync_stmt(p);
		return;
	}
	at = loc_of(p, t);
	if (p->c->flags & RULES_NO_INCLUDE)
		rerr(p->c, &at, "include '%s' is not allowed here", t->text);
	else if (t->text[0] == '\0')
		rerr(p->c, &at, "include needs a file name, found \"\"");
	else
		include_file(p, t->text, &at);
	next(p);
}

/* Resolve name relative to the directory of the including file. */
void
include_file(struct parser *p, const char *name, const struct rules_loc *at)
{
	const char *slash = strrchr(p->file, '/');
	size_t dlen = slash ? (size_t)(slash - p->file) + 1 : 0;
	char *path;

	if (name[0] == '/' || dlen == 0) {
		load_file(p->c, name, at);
		return;
	}
	path = malloc(dlen + strlen(name) + 1);
	if (!path) {
		p->c->oom = 1;
		return;
	}
	memcpy(path, p->file, dlen);
	strcpy(path + dlen, name);
	load_file(p->c, path, at);
	free(path);
}
