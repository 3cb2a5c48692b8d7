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
