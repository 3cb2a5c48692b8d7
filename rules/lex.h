/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The lexer: a file's text -> an array of tokens (vsrules(5), LEXICAL). */
#ifndef VSD_RULES_LEX_H
#define VSD_RULES_LEX_H

#include <stddef.h>

struct rules_ctx;

enum tok_type {
	T_EOF = 0, T_NL, T_WORD, T_STRING,
	T_LPAREN, T_RPAREN, T_LBRACK, T_RBRACK, T_LBRACE, T_RBRACE,
	T_PIPE, T_COMMA, T_EQ, T_ARROW, T_STAR, T_SEMI,
};

struct tok {
	enum tok_type	 type;
	int		 line, col;
	size_t		 off, end;	/* byte range in the file: adjacency = end == next off */
	char		*text;		/* T_WORD, T_STRING (unescaped); else NULL */
};

struct toks {
	struct tok	*v;
	size_t		 n, cap;
};

/* Tokenise data; errors go to c. The array always ends with T_EOF. */
int lex(struct rules_ctx *c, const char *file, const char *data, size_t len, struct toks *out);
void toks_free(struct toks *t);
/* How a token reads in a message: 'www1', '(', end of line, end of file. */
const char *tok_show(const struct tok *t, char *buf, size_t len);

#endif
