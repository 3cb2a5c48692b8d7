/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The VSs' network shares (vsd(8), NETWORK SHARES): --net-share, --net-max,
 * --dev and --dev-rate of create and set, the kernel objects that carry them
 * (gates/net/), their adoption after a restart and their display.
 */
#ifndef VSD_NETSHARE_H
#define VSD_NETSHARE_H

#include "vsd.h"

/* The HTB qdisc vsd puts on a device: handle 5d:, its classes 5d:MINOR. */
#define NET_MAJOR	0x5d
#define NET_MINOR_TOP	1	/* the device's rate, parent of the rest */
#define NET_MINOR_REST	2	/* traffic of no VS */
#define NET_MINOR_FIRST	0x10	/* the VSs' classes */
#define NET_MINOR_LAST	0xffef

struct rules;
struct rules_vs;

int net_opts_given(const struct request *req);
/*
 * The network options of create/set into *net, which starts as vs's
 * current settings (vs may be a VS not registered yet). Checks the device,
 * its rate, the cap, and admission: the shares on one device add up to at
 * most 100%. -errno after reply_err; nothing changes.
 */
int net_opts_parse(struct vsd *d, const struct request *req, const struct vs *vs,
		   struct vs_net *net, struct reply *rep);
/*
 * Make the kernel hold vs->net (vs is registered); old is what it held
 * before (dev "" for nothing). Other VSs on the device take its rate.
 */
int net_apply(struct vsd *d, struct vs *vs, const struct vs_net *old);
/*
 * What a rule file's VS x wants (vsctl apply), resolved as net_opts_parse
 * does: the default route's interface, the interface's rate (x's, another
 * VS's of the file or of vsd on it, else its link speed); cur is the VS
 * now, or NULL. -errno with a line in errs.
 */
int net_want(struct vsd *d, const struct rules *rs, const struct rules_vs *x,
	     const struct vs *cur, struct vs_net *n, struct buf *errs);
/* The same settings, the class aside. */
int net_eq(const struct vs_net *a, const struct vs_net *b);
/*
 * Admission for an apply: want[i] for the file's VS i, plus the shares of
 * the VSs the file does not name (unless they are pruned), per interface.
 */
int net_admit_plan(struct vsd *d, const struct rules *rs, const struct vs_net *want, int prune,
		   struct buf *errs);
/* vs leaves its device (destroy); its qdisc goes with the last VS on it. */
void net_remove(struct vsd *d, struct vs *vs);
/* At start: make the devices hold what the state says, adopting what is there. */
void net_adopt(struct vsd *d);
/* At stop: close the classifier (what is in the kernel stays). */
void net_close(struct vsd *d);
void net_json(const struct vs *vs, struct buf *b);
void net_text(const struct vs *vs, struct buf *b);

#endif
