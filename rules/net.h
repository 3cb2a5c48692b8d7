/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Network shares in rule files: net-share, net-max, dev, dev-rate on vs and
 * plan lines, with the meaning of vsctl's --net-share, --net-max, --dev,
 * --dev-rate (vsd(8), NETWORK SHARES). Kept apart from the other settings,
 * which it only extends.
 */
#ifndef VSD_RULES_NET_H
#define VSD_RULES_NET_H

#include "ctx.h"

/* Parse one setting (bit: SB_NET_SHARE ... SB_DEV_RATE) into s. */
int net_setting(int bit, const char *text, struct settings *s, const char **why);
/* Copy the network settings set in s over d (plans, then the VS). */
void net_overlay(struct settings *d, const struct settings *s);
/* The VS's compiled network share from its effective settings, checked. */
void net_compile(struct rules_ctx *c, struct rules_vs *x, const struct settings *eff);
/* Per interface: the shares sum to at most 100%, one rate. */
void net_check_budgets(struct rules_ctx *c);
/* " net-share 75% dev eth0 dev-rate 1G net-max 400M", as set. */
void net_write(const struct rules_vs *x, struct buf *b);

#endif
