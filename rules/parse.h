/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The parser's cursor over one file's tokens, shared by parse*.c. */
#ifndef VSD_RULES_PARSE_H
#define VSD_RULES_PARSE_H

#include "ctx.h"
#include "lex.h"

struct parser {
	struct rules_ctx *c;
	const char	*file;
	const char	*data;
	struct toks	 t;
	size_t		 pos;
};

struct tok *cur(struct parser *p);
void next(struct parser *p);
int adjacent(struct parser *p);
int is_end(const struct tok *t);
struct rules_loc loc_of(struct parser *p, const struct tok *t);
void perr(struct parser *p, const struct tok *t, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void sync_stmt(struct parser *p);
void expect_end(struct parser *p);
int parse_block(struct parser *p, int (*one)(struct parser *, void *), void *arg);
void include_file(struct parser *p, const char *name, const struct rules_loc *at);

/* parse-decl.c */
void parse_vs(struct parser *p);
void parse_plan(struct parser *p);
void parse_group(struct parser *p);
void parse_service(struct parser *p);

/* parse-remote.c */
void parse_remote(struct parser *p);

/* parse-rule.c */
void parse_rule(struct parser *p);
/* A name expression: NAME, NAME*, pre[a|b]post, pre[001..300], '*'. */
int parse_nexpr(struct parser *p, struct nexpr *e, int allow_star, const char *what);

#endif
