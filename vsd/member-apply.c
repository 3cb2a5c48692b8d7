// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a member's rule file may replace (member.h). A file is applied
 * whole: the rules in force go, the file's come. Root's rules may hold
 * lines no member could write (remote lines, marks, a TOS, socket and fork
 * rules for every user's processes), so a member's file replaces only rules
 * that member applied; and on a VS root gave a mark or a TOS, a member's
 * line that leaves either out would clear it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gates/socket/socket.h"
#include "lib/buf.h"
#include "member.h"
#include "registry.h"
#include "rules/rules.h"

/* the earlier of two locations of one file set (NULL file: the top file) */
static const struct rules_loc *
loc_first(const struct rules_loc *a, const struct rules_loc *b)
{
	if (!a || (!b->file && a->file))
		return b;
	if (!a->file && b->file)
		return a;
	return b->line < a->line || (b->line == a->line && b->col < a->col) ? b : a;
}

/* the first line of rs it names: a VS, a rule, a remote line */
static const struct rules_loc *
first_line(const struct rules *rs)
{
	const struct rules_loc *l = NULL;
	size_t i;

	for (i = 0; i < rs->nvs; i++)
		l = loc_first(l, &rs->vs[i].loc);
	for (i = 0; i < rs->nrules; i++)
		l = loc_first(l, &rs->rules[i].loc);
	for (i = 0; i < rs->nremotes; i++)
		l = loc_first(l, &rs->remotes[i].loc);
	return l;
}

/* the gate settings of cur that x would change, as a want of them */
static void
lost(const struct rules_vs *x, const struct gate_socket_cfg *cur, struct gate_socket_cfg *g)
{
	memset(g, 0, sizeof(*g));
	if ((cur->flags & VSD_CFG_MARK) && (!(x->set & RULES_SET_MARK) || x->mark != cur->mark)) {
		g->flags |= VSD_CFG_MARK;
		g->mark = cur->mark;
	}
	if ((cur->flags & VSD_CFG_TOS) && (!(x->set & RULES_SET_TOS) || x->tos != cur->tos)) {
		g->flags |= VSD_CFG_TOS;
		g->tos = cur->tos;
	}
}

int
member_apply_check(const struct vsd *d, const struct rules *rs, uid_t owner, const char *path,
		   struct buf *errs)
{
	const struct rules_loc *l;
	struct gate_socket_cfg g;
	char why[200];
	size_t i;
	int r = 0;

	if (d->rules_path && d->rules_owner != owner) {
		char who[32] = "root";

		if (d->rules_owner != 0)
			snprintf(who, sizeof(who), "uid %u or root", (unsigned)d->rules_owner);
		if (d->rules && (l = first_line(d->rules)))
			buf_printf(errs, "%s: would drop the rules in force, uid %u's, from %s:%d:%d "
				   "on: only %s may replace them\n", path, (unsigned)d->rules_owner,
				   l->file ? l->file : d->rules_path, l->line, l->col, who);
		else
			buf_printf(errs, "%s: would replace the rules in force, uid %u's (%s): only "
				   "%s may\n", path, (unsigned)d->rules_owner, d->rules_path, who);
		return -EPERM;
	}
	for (i = 0; i < rs->nvs; i++) {
		const struct rules_vs *x = &rs->vs[i];
		struct vs *vs = reg_find(&d->reg, x->name);

		if (!vs)
			continue;
		lost(x, &vs->gate, &g);
		if (g.flags && member_gate_check(d, owner, &g, NULL, why, sizeof(why)) < 0) {
			buf_printf(errs, "%s:%d:%d: VS %s would lose or change what uid %u may not "
				   "set: %s\n", x->loc.file ? x->loc.file : path, x->loc.line,
				   x->loc.col, x->name, (unsigned)owner, why);
			r = -EPERM;
		}
	}
	return r;
}
