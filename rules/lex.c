// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "ctx.h"
#include "lex.h"

struct lexer {
	struct rules_ctx *c;
	const char	*file;
	const char	*p;
	size_t		 len, pos;
	int		 line, col;
	struct toks	*out;
};

static int
is_word(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.' ||
	    ch == '%' || ch == '/' || ch == ':';	/* ':' for IPv6 addresses */
}

static void
advance(struct lexer *l, size_t n)
{
	while (n-- > 0 && l->pos < l->len) {
		if (l->p[l->pos] == '\n') {
			l->line++;
			l->col = 1;
		} else {
			l->col++;
		}
		l->pos++;
	}
}

static struct tok *
emit(struct lexer *l, enum tok_type type, int line, int col, size_t off)
{
	struct tok *t = vec_push(l->c, &l->out->v, &l->out->n, &l->out->cap, sizeof(*t));

	if (!t)
		return NULL;
	t->type = type;
	t->line = line;
	t->col = col;
	t->off = off;
	t->end = l->pos;
	t->text = NULL;
	return t;
}

static void
lex_string(struct lexer *l)
{
	struct rules_loc at = { l->file, l->line, l->col };
	size_t off = l->pos;
	struct buf s = { 0 };
	struct tok *t;
	int closed = 0;

	advance(l, 1);
	while (l->pos < l->len && l->p[l->pos] != '\n') {
		char ch = l->p[l->pos];

		if (ch == '"') {
			advance(l, 1);
			closed = 1;
			break;
		}
		if (ch == '\\' && l->pos + 1 < l->len) {
			struct rules_loc esc = { l->file, l->line, l->col };
			char e = l->p[l->pos + 1];

			switch (e) {
			case '"': case '\\': break;
			case 'n': e = '\n'; break;
			case 't': e = '\t'; break;
			default:
				rerr(l->c, &esc, "unknown escape '\\%c' in string",
				     e >= 0x20 && e < 0x7f ? e : '?');
			}
			buf_add(&s, &e, 1);
			advance(l, 2);
			continue;
		}
		if ((unsigned char)ch < 0x20 && ch != '\t') {
			struct rules_loc bad = { l->file, l->line, l->col };

			rerr(l->c, &bad, "control character \\x%02x in string", (unsigned char)ch);
		} else {
			buf_add(&s, &ch, 1);
		}
		advance(l, 1);
	}
	if (!closed)
		rerr(l->c, &at, "unterminated string (no closing '\"' before end of line)");
	t = emit(l, T_STRING, at.line, at.col, off);
	if (t) {
		t->text = s.p ? s.p : strdup("");
		if (!t->text || s.oom)
			l->c->oom = 1;
	} else {
		buf_free(&s);
	}
}

static void
lex_word(struct lexer *l)
{
	size_t off = l->pos, n = 0;
	int line = l->line, col = l->col;
	struct tok *t;

	while (off + n < l->len && is_word(l->p[off + n]))
		n++;
	advance(l, n);
	t = emit(l, T_WORD, line, col, off);
	if (t) {
		t->text = strndup(l->p + off, n);
		if (!t->text)
			l->c->oom = 1;
	}
}

static const struct {
	char		 ch;
	enum tok_type	 type;
} punct[] = {
	{ '(', T_LPAREN }, { ')', T_RPAREN }, { '[', T_LBRACK }, { ']', T_RBRACK },
	{ '{', T_LBRACE }, { '}', T_RBRACE }, { '|', T_PIPE }, { ',', T_COMMA },
	{ '*', T_STAR }, { ';', T_SEMI }, { '\n', T_NL },
};

int
lex(struct rules_ctx *c, const char *file, const char *data, size_t len, struct toks *out)
{
	struct lexer l = { c, file, data, len, 0, 1, 1, out };
	size_t i;

	while (l.pos < l.len && !c->oom) {
		char ch = l.p[l.pos];
		int line = l.line, col = l.col;
		size_t off = l.pos;

		if (ch == ' ' || ch == '\t' || ch == '\r') {
			advance(&l, 1);
			continue;
		}
		if (ch == '#') {
			while (l.pos < l.len && l.p[l.pos] != '\n')
				advance(&l, 1);
			continue;
		}
		/* A backslash at the end of a line continues the statement. */
		if (ch == '\\' && l.pos + 1 < l.len && l.p[l.pos + 1] == '\n') {
			advance(&l, 2);
			continue;
		}
		if (ch == '"') {
			lex_string(&l);
			continue;
		}
		if (is_word(ch)) {
			lex_word(&l);
			continue;
		}
		if (ch == '=') {
			int arrow = l.pos + 1 < l.len && l.p[l.pos + 1] == '>';

			advance(&l, arrow ? 2 : 1);
			emit(&l, arrow ? T_ARROW : T_EQ, line, col, off);
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(punct); i++)
			if (punct[i].ch == ch)
				break;
		advance(&l, 1);
		if (i < ARRAY_SIZE(punct)) {
			emit(&l, punct[i].type, line, col, off);
			continue;
		}
		{
			struct rules_loc at = { file, line, col };

			if ((unsigned char)ch >= 0x21 && (unsigned char)ch < 0x7f)
				rerr(c, &at, "unexpected character '%c'", ch);
			else
				rerr(c, &at, "unexpected byte \\x%02x", (unsigned char)ch);
		}
	}
	if (!emit(&l, T_EOF, l.line, l.col, l.pos))
		return -ENOMEM;
	return c->oom ? -ENOMEM : 0;
}

void
toks_free(struct toks *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].text);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

const char *
tok_show(const struct tok *t, char *buf, size_t len)
{
	static const char *const names[] = {
		[T_EOF] = "end of file", [T_NL] = "end of line",
		[T_LPAREN] = "'('", [T_RPAREN] = "')'", [T_LBRACK] = "'['",
		[T_RBRACK] = "']'", [T_LBRACE] = "'{'", [T_RBRACE] = "'}'",
		[T_PIPE] = "'|'", [T_COMMA] = "','", [T_EQ] = "'='",
		[T_ARROW] = "'=>'", [T_STAR] = "'*'", [T_SEMI] = "';'",
	};

	if (t->type == T_WORD)
		snprintf(buf, len, "'%.40s'", t->text);
	else if (t->type == T_STRING)
		snprintf(buf, len, "\"%.40s\"", t->text);
	else
		snprintf(buf, len, "%s", names[t->type]);
	return buf;
}
