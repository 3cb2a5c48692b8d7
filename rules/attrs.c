// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's question by content: which VS does a request for
 * shop.example (or under /var/www/shop) belong to? Called once per accepted
 * connection whose params the gate read (gates/accept/), so it must not
 * walk the sites: each candidate pattern the request could match is one
 * hash lookup (content.c built the table), a few per request:
 *   - DOCUMENT_ROOT and each directory above it, longest first (else the
 *     directories of SCRIPT_FILENAME): "d/var/www/shop/x", "d/var/www/shop", ...
 *   - the host itself: "hshop.example";
 *   - each wildcard suffix of it, longest first: "w.shop.example", "w.example".
 * Under each key the crules with that pattern are chained in precedence
 * order; the first whose caller and requester patterns match is that key's
 * candidate. A document root (or script path) that matches wins over any
 * host name, whatever the priorities: the front end set it from its own
 * configuration, while the client chose the host name. Priority decides
 * only between matches of the same kind: among the directories, or among
 * the host and its wildcards, the candidate of highest priority wins, and
 * among equal priorities the first in the order above, the longer match
 * before the shorter.
 * Cost: O(path components + host labels) lookups, each O(length); it does
 * not grow with the number of sites (benchmarks/results/rules-attrs.md).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "attrs.h"
#include "lib/buf.h"
#include "names.h"
#include "pat.h"

const char *
attr_key(const struct rules_crule *cr, char *buf, size_t len)
{
	snprintf(buf, len, "%c%s", cr->attr == RULES_ATTR_DOCROOT ? 'd' : cr->wild ? 'w' : 'h',
		 cr->pat);
	return buf;
}

int
rules_wants_attrs(const struct rules *rs, int svc, unsigned *timeout_ms)
{
	const struct rules_service *s = NULL;
	unsigned t = RULES_ATTRS_TIMEOUT_MS;

	if (svc >= 0 && (size_t)svc < rs->nservices)
		s = &rs->services[svc];
	if (s && s->attrs_timeout_ms)
		t = s->attrs_timeout_ms;
	if (timeout_ms)
		*timeout_ms = t;
	/* sites and content rules apply to every FastCGI service's accept gate;
	 * a service of another protocol has no params to wait for, and one
	 * whose server speaks first (MySQL) would wait out the bound */
	if (s && s->proto != RULES_PROTO_FASTCGI)
		return 0;
	return rs->ncrules > 0;
}

struct best {
	int	 k;		/* crule, -1 if none yet */
};

/* Whether nothing later can win: keys are tried in the order that breaks
 * ties, so once the best has the file's highest priority it stays best
 * (with equal priorities everywhere, the first match ends the search). */
static int
done(const struct rules *rs, const struct best *b)
{
	return b->k >= 0 && rs->crules[b->k].priority >= rs->crule_max_priority;
}

static void
try_key(const struct rules *rs, const char *key, int ci, int ri, struct best *b)
{
	int k;

	if (done(rs, b))
		return;
	k = names_get(rs->attr_keys, key);

	for (; k >= 0; k = rs->crules[k].next) {
		const struct rules_crule *cr = &rs->crules[k];

		if (!pat_match(rs, &cr->caller, ci, NULL) ||
		    (cr->has_req && !pat_match(rs, &cr->req, ri, NULL)))
			continue;
		/* a later key wins only with a higher priority */
		if (b->k < 0 || cr->priority > rs->crules[b->k].priority)
			b->k = k;
		return;
	}
}

/* key = 'd' + path: try it and each directory above it, longest first. */
static void
try_dirs(const struct rules *rs, char *key, int ci, int ri, struct best *b)
{
	char *slash;

	while (key[1] && !done(rs, b)) {
		try_key(rs, key, ci, ri, b);
		slash = strrchr(key + 1, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
}

int
rules_query_attrs(const struct rules *rs, int svc, int caller, int req,
		  const struct rules_req_attrs *a)
{
	struct best b = { -1 };
	char key[RULES_KEY_MAX];
	const char *why, *dot;

	(void)svc;	/* sites and content rules apply to every service */
	if (!a || !rs->ncrules)
		return RULES_VS_UNKNOWN;
	if (caller >= 0 && (size_t)caller >= rs->nvs)
		caller = RULES_VS_UNKNOWN;
	if (req >= 0 && (size_t)req >= rs->nvs)
		req = RULES_VS_UNKNOWN;
	key[0] = 'd';
	/* a path that does not normalise ("..", not absolute) matches nothing */
	if (a->docroot) {
		if (norm_path(a->docroot, key + 1, sizeof(key) - 1, &why) > 0)
			try_dirs(rs, key, caller, req, &b);
	} else if (a->script && norm_script(a->script, key + 1, sizeof(key) - 1, &why) > 0) {
		try_dirs(rs, key, caller, req, &b);
	}
	/* a path matched: no host name can take it */
	if (b.k >= 0)
		return rs->crules[b.k].target;
	if (a->host && norm_host(a->host, key + 1, RULES_HOST_MAX + 1, &why) > 0) {
		key[0] = 'h';
		try_key(rs, key, caller, req, &b);
		/* "w" + each suffix from a '.': the name itself is never its own wildcard */
		for (dot = strchr(key + 1, '.'); dot && !done(rs, &b); dot = strchr(dot + 1, '.')) {
			size_t n = strlen(dot);
			char wkey[RULES_HOST_MAX + 2];

			wkey[0] = 'w';
			memcpy(wkey + 1, dot, n + 1);
			try_key(rs, wkey, caller, req, &b);
		}
	}
	return b.k >= 0 ? rs->crules[b.k].target : RULES_VS_UNKNOWN;
}

/* A host or path as the lexer reads it back: bare when it is all word
 * characters (and a leading "*."), else a string. */
static void
write_value(struct buf *b, const char *s, int host)
{
	const char *p = s;

	if (host && strncmp(p, "*.", 2) == 0)
		p++;
	for (; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("_-.%/", *p)))
			break;
	if (!*p && *s) {
		buf_printf(b, "%s", s);
		return;
	}
	buf_add(b, "\"", 1);
	for (p = s; *p; p++) {
		if (*p == '"' || *p == '\\')
			buf_add(b, "\\", 1);
		buf_add(b, p, 1);
	}
	buf_add(b, "\"", 1);
}

void
write_crule(const struct rules *rs, struct buf *b, const struct rules_crule *cr)
{
	char pat[RULES_KEY_MAX];

	buf_printf(b, "(accept, ");
	pat_write(rs, b, &cr->caller);
	if (cr->has_req) {
		buf_printf(b, ", req = ");
		pat_write(rs, b, &cr->req);
	}
	buf_printf(b, ", %s = ", cr->attr == RULES_ATTR_HOST ? "host" : "docroot");
	snprintf(pat, sizeof(pat), "%s%s", cr->wild ? "*" : "", cr->pat);
	write_value(b, pat, cr->attr == RULES_ATTR_HOST);
	buf_printf(b, ") => (%s)", rs->vs[cr->target].name);
}

void
write_sites(const struct rules *rs, struct buf *b)
{
	size_t i, j;

	for (i = 0; i < rs->nsites; i++) {
		const struct rules_site *s = &rs->sites[i];

		buf_printf(b, "site ");
		write_value(b, s->hosts[0], 1);
		for (j = 1; j < s->nhosts; j++) {
			buf_printf(b, " alias ");
			write_value(b, s->hosts[j], 1);
		}
		for (j = 0; j < s->ndocroots; j++) {
			buf_printf(b, " docroot ");
			write_value(b, s->docroots[j], 0);
		}
		buf_printf(b, " vs %s\n", rs->vs[s->vs].name);
	}
	for (i = 0; i < rs->ncrules; i++) {
		if (rs->crules[i].site >= 0)
			continue;
		write_crule(rs, b, &rs->crules[i]);
		buf_printf(b, "\n");
	}
}
