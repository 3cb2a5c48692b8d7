// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * VS patterns (one VS, a prefix*, '*') as data: matching, overlap, priority,
 * specificity, the text. The bottom layer, shared by the gate rules
 * (compile.c, query.c, write.c) and the content rules and sites (content.c,
 * attrs.c), so both kinds of rule read their patterns the same way.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "pat.h"

int
pat_priority(const struct rules *rs, const struct rules_pat *p)
{
	return p->kind == RULES_PAT_VS ? (int)rs->vs[p->vs].priority : -1;
}

int
pat_specificity(const struct rules_pat *p)
{
	return p->kind == RULES_PAT_VS ? 2 : p->kind == RULES_PAT_PREFIX ? 1 : 0;
}

void
pat_free(struct rules_pat *p)
{
	free(p->prefix);
	p->prefix = NULL;
}

int
pat_overlap(const struct rules *rs, const struct rules_pat *a, const struct rules_pat *b)
{
	const struct rules_pat *t;

	if (a->kind == RULES_PAT_ANY || b->kind == RULES_PAT_ANY)
		return 1;
	if (a->kind == RULES_PAT_VS && b->kind == RULES_PAT_VS)
		return a->vs == b->vs;
	if (a->kind == RULES_PAT_VS) {
		t = a;
		a = b;
		b = t;
	}
	/* a is a prefix */
	if (b->kind == RULES_PAT_VS)
		return strncmp(rs->vs[b->vs].name, a->prefix, a->plen) == 0;
	return strncmp(a->prefix, b->prefix, a->plen < b->plen ? a->plen : b->plen) == 0;
}

/* A name both patterns match, for the message. */
const char *
pat_witness(const struct rules *rs, const struct rules_pat *a, const struct rules_pat *b,
	char *buf, size_t len)
{
	const struct rules_pat *m = a->kind > b->kind ? a : b;	/* VS > PREFIX > ANY */

	if (a->kind == RULES_PAT_PREFIX && b->kind == RULES_PAT_PREFIX)
		m = a->plen >= b->plen ? a : b;
	if (m->kind == RULES_PAT_VS)
		snprintf(buf, len, "%s", rs->vs[m->vs].name);
	else if (m->kind == RULES_PAT_PREFIX)
		snprintf(buf, len, "%s*", m->prefix);
	else
		snprintf(buf, len, "*");
	return buf;
}

int
pat_match(const struct rules *rs, const struct rules_pat *p, int idx, const char *name)
{
	switch (p->kind) {
	case RULES_PAT_ANY:
		return 1;
	case RULES_PAT_VS:
		return idx >= 0 && idx == p->vs;
	case RULES_PAT_PREFIX:
		if (idx >= 0)
			name = rs->vs[idx].name;
		return name && strncmp(name, p->prefix, p->plen) == 0;
	}
	return 0;
}

void
pat_write(const struct rules *rs, struct buf *b, const struct rules_pat *p)
{
	if (p->kind == RULES_PAT_VS)
		buf_printf(b, "%s", rs->vs[p->vs].name);
	else if (p->kind == RULES_PAT_PREFIX)
		buf_printf(b, "%s*", p->prefix);
	else
		buf_printf(b, "*");
}
