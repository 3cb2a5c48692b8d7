// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Name expressions: pre[a|b]post and ranges pre[001..300]. Choice k of every
 * expression in one rule pairs up with choice k of the others (the paper's
 * positional pairing), so they are kept as lists, not expanded eagerly.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "names.h"

static int
add_alt(struct rules_ctx *c, struct nexpr *e, const char *s)
{
	char **slot = vec_push(c, &e->alts, &e->nalts, &e->calts, sizeof(*slot));

	if (!slot)
		return -1;
	*slot = xstrdup(c, s);
	return c->oom ? -1 : 0;
}

static int
all_digits(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 9)
		return 0;
	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* One choice: a word, or a range lo..hi (zero-padded to lo's width if lo starts with 0). */
int
expand_item(struct rules_ctx *c, const struct rules_loc *loc, const char *item,
	    struct nexpr *e)
{
	const char *dots = strstr(item, "..");
	unsigned long lo, hi, v;
	size_t nlo, nhi;
	int width = 0;
	char buf[32];

	if (!dots) {
		if (e->nalts >= RULES_EXPAND_MAX) {
			rerr(c, loc, "too many choices (more than %d)", RULES_EXPAND_MAX);
			return -1;
		}
		return add_alt(c, e, item);
	}
	nlo = (size_t)(dots - item);
	nhi = strlen(dots + 2);
	if (!all_digits(item, nlo) || !all_digits(dots + 2, nhi)) {
		rerr(c, loc, "invalid range '%s' (expected like 1..300 or 001..300)", item);
		return -1;
	}
	lo = strtoul(item, NULL, 10);
	hi = strtoul(dots + 2, NULL, 10);
	if (hi < lo) {
		rerr(c, loc, "invalid range '%s': %lu is below %lu", item, hi, lo);
		return -1;
	}
	if (hi - lo >= RULES_EXPAND_MAX || e->nalts + (hi - lo + 1) > RULES_EXPAND_MAX) {
		rerr(c, loc, "range '%s' makes too many names (more than %d)", item,
		     RULES_EXPAND_MAX);
		return -1;
	}
	if (item[0] == '0' && nlo > 1)
		width = (int)nlo;
	for (v = lo; v <= hi; v++) {
		snprintf(buf, sizeof(buf), "%0*lu", width, v);
		if (add_alt(c, e, buf) < 0)
			return -1;
	}
	return 0;
}

size_t
nexpr_arity(struct rules_ctx *c, const struct nexpr *const *es, size_t n)
{
	const struct nexpr *first = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!es[i] || !es[i]->has_group)
			continue;
		if (!first) {
			first = es[i];
		} else if (es[i]->nalts != first->nalts) {
			rerr(c, &es[i]->loc, "alternation arity mismatch: '%s' has %zu choices "
			     "but '%s' has %zu", es[i]->text, es[i]->nalts, first->text,
			     first->nalts);
			return 0;
		}
	}
	return first ? first->nalts : 1;
}

int
nexpr_pat(struct rules_ctx *c, const struct nexpr *e, size_t k, struct rules_pat *out)
{
	char name[256];

	nexpr_name(e, k, name, sizeof(name));
	memset(out, 0, sizeof(*out));
	if (e->star) {
		if (name[0] == '\0') {
			out->kind = RULES_PAT_ANY;
			return 0;
		}
		out->kind = RULES_PAT_PREFIX;
		out->prefix = xstrdup(c, name);
		out->plen = strlen(name);
		return c->oom ? -1 : 0;
	}
	out->kind = RULES_PAT_VS;
	out->vs = names_get(c->rs->vs_names, name);
	if (out->vs < 0) {
		/* without a group every pairing names the same VS: say it once */
		if (k == 0 || e->has_group)
			rerr(c, &e->loc, e->has_group ? "undeclared VS '%s' (from '%s')" :
			     "undeclared VS '%s'%.0s", name, e->text);
		return -1;
	}
	return 0;
}
