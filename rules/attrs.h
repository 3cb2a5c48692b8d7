/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sites and content rules (vsrules(5), SITES AND CONTENT RULES): the
 * library's private interface between their parser (parse-site.c), their
 * checks and compilation (content.c), the gate's query and their text form
 * (attrs.c), and the normalisation all of them share (norm.c).
 */
#ifndef VSD_RULES_ATTRS_H
#define VSD_RULES_ATTRS_H

#include <stddef.h>

#include "rules.h"

struct buf;
struct parser;
struct rule_decl;
struct rules_ctx;

#define RULES_HOST_MAX		253	/* a DNS name's longest text form */
#define RULES_PATH_MAX		4096	/* PATH_MAX */
#define RULES_KEY_MAX		(RULES_PATH_MAX + 2)	/* a kind letter, a path, NUL */
#define RULES_CRULES_MAX	200000	/* sites' bindings and content rules, expanded */

/* norm.c: the length of the normal form in out, or -1 with *why set */
int norm_host(const char *in, char *out, size_t len, const char **why);
int norm_path(const char *in, char *out, size_t len, const char **why);
int norm_script(const char *in, char *out, size_t len, const char **why);
int parse_duration_ms(const char *s, unsigned *ms, const char **why);

/* attrs.c: the hash key of a crule's pattern ("h", "w" or "d" and the pattern) */
const char *attr_key(const struct rules_crule *cr, char *buf, size_t len);
/* a content rule as rules_write() writes it, without the newline */
void write_crule(const struct rules *rs, struct buf *b, const struct rules_crule *cr);
/* every site and every content rule (not the sites' bindings), one a line */
void write_sites(const struct rules *rs, struct buf *b);

/* parse-site.c */
void parse_site(struct parser *p);
/* host = H / docroot = D at the cursor? */
int at_attr_cond(struct parser *p);
/* , host = H at the cursor? */
int at_attr_cond_next(struct parser *p);
int parse_attr_cond(struct parser *p, struct rule_decl *r);

/* content.c: sites and content rules -> rs->sites, rs->crules, rs->attr_keys */
void compile_content(struct rules_ctx *c);

#endif
