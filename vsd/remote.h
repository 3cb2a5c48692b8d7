/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The remote lines of the rules in force as an nftables table (remote.c). */
#ifndef VSD_REMOTE_H
#define VSD_REMOTE_H

struct buf;
struct rules;
struct vsd;

/*
 * Before an apply changes anything: can rs's remote lines be put in force
 * here (tcp_fwmark_accept, VS ids, nftables accepts the table)? 0 or
 * -errno with the reason in errs.
 */
int remote_check(struct vsd *d, const struct rules *rs, struct buf *errs);
/*
 * Make vsd's table say what rs's remote lines say, in one nftables
 * transaction; with no remote lines (or rs NULL), remove the table. The
 * VSs must exist (their ids are in the marks). 0 or -errno, the reason in
 * errs (or logged when errs is NULL).
 */
int remote_apply(struct vsd *d, const struct rules *rs, struct buf *errs);

#endif
