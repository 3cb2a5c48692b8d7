// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Remote lines checked and compiled (vsrules(5) REMOTE): the VS must be
 * declared, a DSCP names one VS (whatever sources the lines trust: the
 * mark carries the VS, not the source), DSCP 0 names none (it is what every
 * unmarked packet carries), and the home VS of a service must not set a
 * mark when there are remote lines: an accepted socket takes its
 * listener's mark before the SYN's (inet_request_mark(), every kernel with
 * tcp_fwmark_accept), so the service's connections could not be told apart.
 */
#include "config.h"

#include <stdlib.h>

#include "ctx.h"
#include "names.h"

void
check_remotes(struct rules_ctx *c)
{
	struct rules *rs = c->rs;
	int first[64];		/* index into rs->remotes per DSCP, -1 */
	size_t i;

	for (i = 0; i < 64; i++)
		first[i] = -1;
	rs->remotes = calloc(c->nremotes ? c->nremotes : 1, sizeof(*rs->remotes));
	if (!rs->remotes) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < c->nremotes; i++) {
		struct remote_decl *x = &c->remotes[i];
		struct rules_remote *y;
		int v;

		if (!x->vs)
			continue;	/* its syntax error was reported */
		if (x->dscp == 0) {
			rerr(c, &x->loc, "remote dscp 0 cannot name a VS: every unmarked "
			     "packet carries it");
			continue;
		}
		if ((v = names_get(rs->vs_names, x->vs)) < 0) {
			rerr(c, &x->vs_at, "undeclared VS '%s'", x->vs);
			continue;
		}
		if (first[x->dscp] >= 0) {
			const struct rules_remote *o = &rs->remotes[first[x->dscp]];

			rerr(c, &x->loc, "remote dscp %u is already VS '%s' (at %s:%d:%d)",
			     x->dscp, rs->vs[o->vs].name, o->loc.file, o->loc.line, o->loc.col);
			continue;
		}
		first[x->dscp] = (int)rs->nremotes;
		y = &rs->remotes[rs->nremotes++];
		y->dscp = x->dscp;
		y->vs = v;
		y->loc = x->loc;
		/* the sources go with the line, one owner */
		y->from = x->from;
		y->nfrom = x->nfrom;
		x->from = NULL;
		x->nfrom = 0;
	}
	if (!rs->nremotes)
		return;
	for (i = 0; i < rs->nservices; i++) {
		const struct rules_service *s = &rs->services[i];

		if (s->home >= 0 && (rs->vs[s->home].set & RULES_SET_MARK) &&
		    rs->vs[s->home].mark != 0)
			rerr(c, &s->loc, "service '%s': its home VS '%s' sets a mark, which "
			     "its accepted connections would take instead of the remote "
			     "lines' (drop the mark)", s->name, rs->vs[s->home].name);
	}
}
