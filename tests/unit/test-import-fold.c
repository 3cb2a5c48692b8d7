// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vsctl import's folding (vsctl/import-fold.c): the lines it writes, and
 * that the rule library expands each back into exactly the names folded,
 * in order.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "rules/rules.h"
#include "vsctl/import-fold.h"
#include "tap.h"

static void
vs_line(void *arg, const struct fold_item *it, const char **w)
{
	buf_printf(arg, "vs %s cpu 0.01%%\n", w[0]);
}

/* Fold names; the lines (without " cpu 0.01%"), and whether the library reads back names. */
static void
fold_vs(const char **names, size_t n, const char *want, const char *what)
{
	struct fold_item *it = calloc(n, sizeof(*it));
	struct buf b = { 0 }, errs = { 0 }, lines = { 0 };
	struct rules *rs = NULL;
	size_t i, same = 0;
	char *p;

	for (i = 0; i < n; i++) {
		it[i].w[0] = names[i];
		it[i].nw = 1;
	}
	fold_lines(it, n, vs_line, &b);
	for (p = b.p; p && *p; p = strchr(p, '\n') + 1) {
		size_t len = strstr(p, " cpu") - p;

		buf_printf(&lines, "%.*s;", (int)len, p);
	}
	is_str(lines.p, want, "%s: folded", what);
	if (rules_load_buffer("fold", b.p, b.len, RULES_NO_INCLUDE | RULES_NO_PERM_CHECK, &rs,
			      &errs) == 0) {
		for (i = 0; i < n && i < rs->nvs; i++)
			same += strcmp(rs->vs[i].name, names[i]) == 0;
		ok(rs->nvs == n && same == n, "%s: the library expands it to the %zu names", what, n);
	} else {
		ok(0, "%s: the library reads it: %s", what, errs.p);
	}
	rules_free(rs);
	buf_free(&b);
	buf_free(&errs);
	buf_free(&lines);
	free(it);
}

int
main(void)
{
	const char *padded[] = { "c001", "c002", "c003", "c004" };
	const char *mixed[] = { "s1", "s3", "s5", "s6", "s7", "s9", "s10", "s11", "s12" };
	const char *words[] = { "alice", "bob", "s1", "s2" };
	const char *wide[] = { "u3000000001", "u3000000002", "u3000000003" };
	const char *two[] = { "a01x", "a02x" };

	fold_vs(padded, 4, "vs c[001..004];", "a zero-padded range");
	fold_vs(mixed, 9, "vs s[1|3|5..7|9];vs s[10..12];",
		"runs of three or more as ranges, by width");
	fold_vs(words, 4, "vs alice;vs bob;vs s[1|2];", "names without a number stay");
	fold_vs(wide, 3, "vs u[3000000001|3000000002|3000000003];",
		"numbers of 10 digits listed, not ranged");
	fold_vs(two, 2, "vs a[01|02]x;", "the number inside the name");
	return tap_done();
}
