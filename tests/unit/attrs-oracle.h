/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An oracle for rules_query_attrs(): a walk over every site binding and
 * content rule, with the precedence vsrules(5) states (SITES AND CONTENT
 * RULES): a docroot before any host, whatever the priorities; then, within
 * a kind, the highest priority, the longer match before the shorter, an
 * exact host before a wildcard; then precedence order (the crules' index). The library must find the same through its
 * hash (tests/unit/test-rules-attrs.c, test-rules-write.c).
 */
#ifndef VSD_TESTS_ATTRS_ORACLE_H
#define VSD_TESTS_ATTRS_ORACLE_H

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "rules/rules.h"

static int
oracle_pat(const struct rules *rs, const struct rules_pat *p, int idx)
{
	if (p->kind == RULES_PAT_ANY)
		return 1;
	if (idx < 0)
		return 0;
	if (p->kind == RULES_PAT_VS)
		return idx == p->vs;
	return strncmp(rs->vs[idx].name, p->prefix, p->plen) == 0;
}

/* the simple cases the oracle's requests use: lower case, no port */
static void
oracle_lower(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in[i] && in[i] != ':' && i + 1 < len; i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	out[i] = '\0';
	if (i > 0 && out[i - 1] == '.')
		out[i - 1] = '\0';
}

static int
oracle_attrs(const struct rules *rs, int ci, int ri, const char *host, const char *dir)
{
	long best = -1, score;
	size_t k, pl;
	char h[300];
	int vs = RULES_VS_UNKNOWN;

	if (host)
		oracle_lower(host, h, sizeof(h));
	for (k = 0; k < rs->ncrules; k++) {
		const struct rules_crule *cr = &rs->crules[k];
		long cls = 0;

		if (!oracle_pat(rs, &cr->caller, ci) || (cr->has_req && !oracle_pat(rs, &cr->req, ri)))
			continue;
		pl = strlen(cr->pat);
		if (cr->attr == RULES_ATTR_DOCROOT) {
			if (dir && strncmp(dir, cr->pat, pl) == 0 && (dir[pl] == '\0' || dir[pl] == '/'))
				cls = 3;
		} else if (host && !cr->wild) {
			if (strcmp(h, cr->pat) == 0)
				cls = 2;
		} else if (host) {
			size_t hl = strlen(h);

			if (hl > pl && strcmp(h + hl - pl, cr->pat) == 0)
				cls = 1;
		}
		if (!cls)
			continue;
		/* kind, priority, class, length, then the earlier crule */
		score = (((((long)(cls == 3) * 2048 + cr->priority + 2) * 4 + cls) * 8192 +
			  (long)pl) * 262144) + (262143 - (long)k);
		if (score > best) {
			best = score;
			vs = cr->target;
		}
	}
	return vs;
}

/*
 * Requests made from the file's own patterns (each exactly, below it, in
 * upper case with a port, a label deeper), asked of rs with every caller
 * and requester up to 8 VSs, and compared with the oracle and, when b is
 * given, with b (the same file read back) by name. Returns the mismatches.
 */
static int
oracle_check(const struct rules *rs, const struct rules *b)
{
	int bad = 0, ci, ri;
	size_t k, v;

	for (k = 0; k < rs->ncrules && k < 64; k++) {
		const struct rules_crule *cr = &rs->crules[k];
		const char *other = NULL;
		char val[4][300];
		size_t o;

		/* the other kind of parameter from another binding, so requests
		 * match a host and a docroot at once (which one wins is tested) */
		for (o = 1; o < rs->ncrules && !other; o++) {
			const struct rules_crule *x = &rs->crules[(k + o) % rs->ncrules];

			if (x->attr != cr->attr && !x->wild)
				other = x->pat;
		}

		if (cr->attr == RULES_ATTR_DOCROOT) {
			snprintf(val[0], sizeof(val[0]), "%s", cr->pat);
			snprintf(val[1], sizeof(val[1]), "%s/sub/x.php", cr->pat);
			snprintf(val[2], sizeof(val[2]), "%sx", cr->pat);
			snprintf(val[3], sizeof(val[3]), "%.*s", (int)(strrchr(cr->pat, '/') - cr->pat),
				 cr->pat);
		} else {
			size_t i;

			snprintf(val[0], sizeof(val[0]), "%s%s", cr->wild ? "a" : "", cr->pat);
			snprintf(val[1], sizeof(val[1]), "x.%s%s:8080", cr->wild ? "b" : "", cr->pat);
			for (i = 0; val[1][i]; i++)
				val[1][i] = (char)toupper((unsigned char)val[1][i]);
			snprintf(val[2], sizeof(val[2]), "%s", cr->wild ? cr->pat + 1 : "nosuch");
			snprintf(val[3], sizeof(val[3]), "%s%s.", cr->wild ? "c" : "", cr->pat);
		}
		for (v = 0; v < 4; v++)
			for (ci = -1; ci < (int)rs->nvs && ci < 8; ci++)
				for (ri = -1; ri < (int)rs->nvs && ri < 8; ri++) {
					int dir = cr->attr == RULES_ATTR_DOCROOT;
					struct rules_req_attrs a = {
						dir ? (ci & 1 && other ? other : "nosuch.example") : val[v],
						dir ? val[v] : (ci & 1 ? other : NULL), NULL,
					};
					int got = rules_query_attrs(rs, 0, ci, ri, &a);
					int want = oracle_attrs(rs, ci, ri, a.host, a.docroot);

					if (got != want && bad++ < 3)
						printf("#   caller %d req %d host %s docroot %s: %d, the "
						       "oracle %d\n", ci, ri, a.host, a.docroot ? a.docroot : "-",
						       got, want);
					if (b) {
						int bc = ci >= 0 ? rules_vs_index(b, rs->vs[ci].name) : -1;
						int br = ri >= 0 ? rules_vs_index(b, rs->vs[ri].name) : -1;
						int y = rules_query_attrs(b, 0, bc, br, &a);
						const char *gn = got >= 0 ? rs->vs[got].name : "-";
						const char *yn = y >= 0 ? b->vs[y].name : "-";

						if (strcmp(gn, yn) != 0 && bad++ < 3)
							printf("#   host %s docroot %s: %s, read back %s\n",
							       a.host, a.docroot ? a.docroot : "-", gn, yn);
					}
				}
	}
	return bad;
}

#endif
