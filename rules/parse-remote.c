// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * remote dscp D from PREFIX... => VS
 *
 * Connections from other hosts whose SYN carries DSCP D are VS's here: the
 * socket gate of the host the request comes from marks every packet of a
 * VS with its DSCP, and vsd turns these lines into an nftables table that
 * marks such SYNs (vsd/remote.c, vsrules(5) REMOTE). Any host can send any
 * DSCP, so a line that does not name the sources it trusts is refused. The
 * VS is resolved later (check-remote.c), so the order of lines does not
 * matter.
 */
#include "config.h"

#include <string.h>

#include "ctx.h"
#include "lex.h"
#include "parse.h"

/* "from PREFIX..." up to the arrow: 0, or -1 after an error was reported */
static int
parse_from(struct parser *p, struct remote_decl *x)
{
	struct rules_prefix px, *y;
	struct tok *t = cur(p);
	const char *why;
	char b[64];
	int bad = 0;

	if (t->type != T_WORD || strcmp(t->text, "from") != 0) {
		perr(p, t, "expected 'from PREFIX...' after remote dscp %u, found %s: a "
		     "remote line names the sources it trusts, as any host can send "
		     "any DSCP", x->dscp, tok_show(t, b, sizeof(b)));
		return -1;
	}
	next(p);
	for (t = cur(p); t->type == T_WORD; next(p), t = cur(p)) {
		if (parse_prefix(t->text, &px, &why) < 0) {
			enum tok_type after = t[1].type;

			/* "from 198.18.0.1 www1": the arrow forgotten */
			if (x->nfrom && (after == T_NL || after == T_SEMI || after == T_EOF) &&
			    !vs_name_why(t->text))
				perr(p, t, "expected '=>' before VS '%s'", t->text);
			else
				perr(p, t, "remote dscp %u from '%s' %s", x->dscp, t->text, why);
			bad = 1;
			continue;
		}
		if (!(y = vec_push(p->c, &x->from, &x->nfrom, &x->cfrom, sizeof(*y))))
			return -1;
		*y = px;
	}
	if (!x->nfrom && !bad) {
		perr(p, t, "expected a source prefix after 'from', found %s",
		     tok_show(t, b, sizeof(b)));
		return -1;
	}
	return bad ? -1 : 0;
}

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
	if (parse_from(p, x) < 0)
		goto skip;
	t = cur(p);
	if (t->type != T_ARROW) {
		perr(p, t, "expected '=>' or a prefix after remote dscp %u from, found %s",
		     x->dscp, tok_show(t, b, sizeof(b)));
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
