// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The remote side of the gates (vsrules(5) REMOTE). A shared service on this
 * host serves VSs that live on other hosts; their socket gates put the VS's
 * DSCP on every packet. "remote dscp D from PREFIX... => VS" lines become
 * one nftables table that vsd owns, named after the cgroup root (`inet vsd`
 * by default): a prerouting rule per line and family that sets the mark
 * VSD_REMOTE_MARK | VS id (lib/remote-mark.h) on the SYN of a connection
 * whose source is in the line's prefixes. Any host can put any DSCP on a
 * packet, and a process on this host outside every VS can set IP_TOS:
 * without the source the DSCP proves nothing. With
 * net.ipv4.tcp_fwmark_accept = 1 the accepted socket takes the SYN's mark
 * (inet_request_mark(): only when the listener has no mark of its own), and
 * the accept gate reads it back with SO_MARK when its connection table has
 * no local entry (gates/accept/classify.c). A mark that names no VS, or no
 * mark, is the service's home VS, as any connection the gate cannot
 * classify.
 *
 * Why libnftables (Debian's libnftables1) and not `nft -f`: the same
 * language and the same atomic transaction, without depending on an nft
 * binary in PATH or parsing its exit status; the error text comes back in
 * a buffer we hand to the client, and a dry run checks the table before an
 * apply changes anything. Why only the SYN: the mark matters only where the
 * kernel makes the request socket; marking nothing else leaves the
 * provider's own marks and routing alone.
 *
 * Why vsd does not set tcp_fwmark_accept itself: it is per network namespace
 * but changes every listener there, and is the operator's policy (sysctl.d);
 * vsd refuses remote lines while it is 0 and says so.
 *
 * The table outlives vsd (like the pinned BPF objects); vsd writes it again
 * at start and at every apply or reload, so a firewall reload that flushed
 * the ruleset (`nft flush ruleset`) is repaired by `vsctl reload`.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <nftables/libnftables.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/log.h"
#include "lib/remote-mark.h"
#include "rules/rules.h"
#include "remote.h"
#include "vsd.h"

#define FWMARK_ACCEPT	"/proc/sys/net/ipv4/tcp_fwmark_accept"

/*
 * One line's rule for one family: its SYNs from the line's prefixes of that
 * family (an anonymous set, which nftables merges where prefixes overlap);
 * none if the line trusts no source of the family.
 */
static void
rule_text(struct buf *b, const struct rules_remote *x, int family, uint32_t mark,
    const char *name)
{
	const char *fam = family == AF_INET ? "ip" : "ip6";
	size_t i, n = 0;

	for (i = 0; i < x->nfrom; i++) {
		if (x->from[i].family != family)
			continue;
		buf_printf(b, n++ ? ", " : "\t\ttcp flags & (syn | ack) == syn %s saddr { ", fam);
		rules_prefix_write(b, &x->from[i]);
	}
	if (n)
		buf_printf(b, " } %s dscp %u meta mark set 0x%08" PRIx32 " comment \"%s\"\n",
			   fam, x->dscp, mark, name);
}

/* The table: remove it (it may not exist), then, with lines, make it anew,
 * in one transaction. */
static int
table_text(struct vsd *d, const struct rules *rs, uint32_t guess_id, struct buf *b,
    struct buf *errs)
{
	size_t i;
	int f;

	buf_printf(b, "table inet %s {}\ndelete table inet %s\n", d->cg.root, d->cg.root);
	if (!rs || !rs->nremotes)
		return 0;
	buf_printf(b, "table inet %s {\n\tchain remote {\n"
		   "\t\ttype filter hook prerouting priority mangle; policy accept;\n",
		   d->cg.root);
	for (i = 0; i < rs->nremotes; i++) {
		const struct rules_remote *x = &rs->remotes[i];
		const char *name = rs->vs[x->vs].name;
		const struct vs *vs = reg_find(&d->reg, name);
		uint32_t id = vs ? vs->id : guess_id;

		if (id == 0 || id > VSD_REMOTE_ID_MAX) {
			buf_printf(errs, "%s:%d:%d: VS '%s' has id %" PRIu32 ", which a mark "
				   "cannot carry (at most %u)\n", x->loc.file, x->loc.line,
				   x->loc.col, name, id, VSD_REMOTE_ID_MAX);
			return -ERANGE;
		}
		for (f = 0; f < 2; f++)
			rule_text(b, x, f ? AF_INET6 : AF_INET, VSD_REMOTE_MARK | id, name);
	}
	buf_printf(b, "\t}\n}\n");
	return b->oom ? -ENOMEM : 0;
}

/* errs NULL: a question (does the table exist?), whose failure means no */
static int
run(const char *text, int dry, struct buf *errs)
{
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	const char *e;
	int r = 0;

	if (!nft) {
		if (errs)
			buf_printf(errs, "nftables: cannot make a context\n");
		return -ENOMEM;
	}
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	nft_ctx_set_dry_run(nft, dry);
	if (nft_run_cmd_from_buffer(nft, text) != 0) {
		r = -EINVAL;
		e = nft_ctx_get_error_buffer(nft);
		if (errs)
			buf_printf(errs, "nftables refused vsd's remote table: %s%s",
				   e && *e ? e : "(no message)\n",
				   e && *e && e[strlen(e) - 1] == '\n' ? "" : "\n");
	}
	nft_ctx_free(nft);
	return r;
}

int
remote_check(struct vsd *d, const struct rules *rs, struct buf *errs)
{
	struct buf text = { 0 };
	char v[16];
	int r;

	if (!rs->nremotes)
		return 0;
	if (read_file(FWMARK_ACCEPT, v, sizeof(v)) < 0 || strcmp(v, "1") != 0) {
		buf_printf(errs, "remote lines need net.ipv4.tcp_fwmark_accept = 1 in vsd's "
			   "network namespace (it is %s), or accepted sockets do not carry "
			   "the mark: set it (sysctl.d) and apply again\n",
			   read_file(FWMARK_ACCEPT, v, sizeof(v)) < 0 ? "unreadable" : v);
		return -EOPNOTSUPP;
	}
	/* new VSs get ids from next_id on: check with the largest one */
	if ((r = table_text(d, rs, d->reg.next_id + (uint32_t)rs->nvs, &text, errs)) == 0)
		r = run(text.p, 1, errs);
	buf_free(&text);
	return r;
}

int
remote_apply(struct vsd *d, const struct rules *rs, struct buf *errs)
{
	struct buf text = { 0 }, own = { 0 };
	struct buf *e = errs ? errs : &own;
	int r;

	/* nothing to map: touch nftables only to remove a table of ours, so a
	 * vsd without remote lines needs no nf_tables at all */
	if (!rs || !rs->nremotes) {
		buf_printf(&text, "list table inet %s\n", d->cg.root);
		r = run(text.p, 0, NULL);
		buf_free(&text);
		if (r < 0)
			return 0;
		log_info("remote table inet %s: no remote lines any more, removing it",
			 d->cg.root);
	}
	if ((r = table_text(d, rs, 0, &text, e)) == 0 && (r = run(text.p, 0, e)) == 0 &&
	    rs && rs->nremotes)
		log_info("remote table inet %s: %zu DSCPs mapped to VSs", d->cg.root,
			 rs->nremotes);
	if (r < 0 && !errs)
		log_warnx("remote table inet %s: %s", d->cg.root, own.p ? own.p : "?");
	buf_free(&text);
	buf_free(&own);
	return r;
}
