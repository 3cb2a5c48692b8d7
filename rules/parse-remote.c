// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * remote dscp D => VS
 *
 * Connections from other hosts whose SYN carries DSCP D are VS's here: the
 * socket gate of the host the request comes from marks every packet of a
 * VS with its DSCP, and vsd turns these lines into an nftables table that
 * marks such SYNs (vsd/remote.c, vsrules(5) REMOTE). The VS is resolved
 * later (check-remote.c), so the order of lines does not matter.
 */
#include "config.h"

#include <string.h>

#include "ctx.h"
#include "lex.h"
#include "parse.h"

void
parse_remote(struct parser *p)
{
	struct remote_decl *x;
	struct tok *t;
	const char *why;
	uint8_t tos;
	char b[64];

	next(p);
	t = cur(p);
	if (t->type != T_WORD || strcmp(t->text, "dscp") != 0) {
		perr(p, t, "expected 'dscp' after remote, found %s", tok_show(t, b, sizeof(b)));
		goto skip;
	}
	next(p);
	t = cur(p);
	if (t->type != T_WORD) {
		perr(p, t, "expected a DSCP after remote dscp, found %s",
		     tok_show(t, b, sizeof(b)));
		goto skip;
	}
	if (parse_dscp(t->text, &tos, &why) < 0) {
		perr(p, t, "remote dscp '%s' %s", t->text, why);
		goto skip;
	}
	if (!(x = vec_push(p->c, &p->c->remotes, &p->c->nremotes, &p->c->cremotes,
			   sizeof(*x))))
		return;
	x->dscp = tos >> 2;
	x->loc = loc_of(p, t);
	next(p);
	t = cur(p);
	if (t->type != T_ARROW) {
		perr(p, t, "expected '=>' after remote dscp %u, found %s", x->dscp,
		     tok_show(t, b, sizeof(b)));
		goto skip;
	}
	next(p);
	t = cur(p);
	if (t->type != T_WORD) {
		perr(p, t, "expected a VS name after '=>', found %s", tok_show(t, b, sizeof(b)));
		goto skip;
	}
	if ((why = vs_name_why(t->text)) != NULL) {
		perr(p, t, "invalid VS name '%s': %s", t->text, why);
		goto skip;
	}
	x->vs = xstrdup(p->c, t->text);
	x->vs_at = loc_of(p, t);
	next(p);
	return;
skip:
	sync_stmt(p);
}
