/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Network share settings as vsctl and rule files write them (vsd(8), NETWORK SHARES). */
#ifndef VSD_NETRATE_H
#define VSD_NETRATE_H

#include <stddef.h>
#include <stdint.h>

#define NET_RATE_MIN	8000ull			/* 8 kbit/s: HTB's precision ends about there */
#define NET_RATE_MAX	1000000000000ull	/* 1 Tbit/s */
#define NET_DEV_MAX	15			/* IFNAMSIZ - 1 */

/*
 * A rate in bits per second: "200M", "1.5G", "800k", "100Mbit", "64000"
 * (decimal units: k = 1000). 0 or -EINVAL / -ERANGE with *why.
 */
int parse_rate(const char *s, uint64_t *bps, const char **why);
/* bits per second -> "200M", "1.5G", "64000" (parse_rate reads it back). */
char *fmt_rate(uint64_t bps, char *buf, size_t len);
/*
 * An interface name vsd accepts: 1 to 15 of [A-Za-z0-9_.@-], not "." or
 * "..", so it can never name a path component other than itself. NULL if
 * valid, else why not.
 */
const char *netdev_name_why(const char *name);

#endif
