// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Address prefixes of remote lines (vsrules(5) REMOTE: the sources a line
 * trusts): "198.18.0.1", "198.18.0.0/24", "2001:db8::/32". An address
 * without a length is one host. Bits set past the length are refused, not
 * masked: "198.18.0.1/24" is more likely a typo for one host than meant as
 * the whole network, and the file should say which.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/buf.h"
#include "ctx.h"

int
parse_prefix(const char *s, struct rules_prefix *p, const char **why)
{
	char a[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	unsigned long len;
	unsigned i, max;
	char *end;

	memset(p, 0, sizeof(*p));
	if (n == 0 || n >= sizeof(a)) {
		*why = "is not an IPv4 or IPv6 address";
		return -1;
	}
	memcpy(a, s, n);
	a[n] = '\0';
	if (inet_pton(AF_INET, a, p->addr) == 1) {
		p->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, a, p->addr) == 1) {
		p->family = AF_INET6;
		max = 128;
	} else {
		*why = "is not an IPv4 or IPv6 address";
		return -1;
	}
	len = max;
	if (slash) {
		if (slash[1] < '0' || slash[1] > '9' ||
		    (len = strtoul(slash + 1, &end, 10), *end) || len > max) {
			*why = p->family == AF_INET ? "has a length that is not 0-32"
				: "has a length that is not 0-128";
			return -1;
		}
	}
	p->len = (uint8_t)len;
	for (i = len; i < max; i++)
		if (p->addr[i / 8] & (0x80u >> (i % 8))) {
			*why = "has address bits set past its length (write the "
			       "network's first address, or the host alone)";
			return -1;
		}
	return 0;
}

void
rules_prefix_write(struct buf *b, const struct rules_prefix *p)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(p->family, p->addr, a, sizeof(a));
	buf_printf(b, "%s/%u", a, p->len);
}
