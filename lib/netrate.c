// SPDX-License-Identifier: GPL-2.0-or-later
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "netrate.h"

int
parse_rate(const char *s, uint64_t *bps, const char **why)
{
	static const struct { const char *sfx; uint64_t mul; } units[] = {
		{ "", 1 }, { "bit", 1 },
		{ "k", 1000 }, { "kbit", 1000 },
		{ "m", 1000000 }, { "mbit", 1000000 },
		{ "g", 1000000000 }, { "gbit", 1000000000 },
		{ "t", 1000000000000ull }, { "tbit", 1000000000000ull },
	};
	uint64_t whole = 0, frac = 0, div = 1, mul = 0, v;
	const char *p = s;
	size_t i;

	*why = "is not a rate (like 200M, 1.5G or 800k, in bits per second)";
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > NET_RATE_MAX)
			goto range;
	}
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++) {
			if (div >= 1000000) {
				*why = "has more than six decimals";
				return -EINVAL;
			}
			frac = frac * 10 + (uint64_t)(*p - '0');
			div *= 10;
		}
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcasecmp(p, units[i].sfx) == 0)
			mul = units[i].mul;
	if (!mul)
		return -EINVAL;
	if (whole > NET_RATE_MAX / mul)
		goto range;
	v = whole * mul + frac * mul / div;
	if (v > NET_RATE_MAX)
		goto range;
	if (v < NET_RATE_MIN) {
		*why = "is below 8k (8000 bits per second)";
		return -ERANGE;
	}
	*bps = v;
	*why = NULL;
	return 0;
range:
	*why = "is over 1T (a terabit per second)";
	return -ERANGE;
}

char *
fmt_rate(uint64_t bps, char *buf, size_t len)
{
	static const struct { char c; uint64_t mul; } units[] = {
		{ 'T', 1000000000000ull }, { 'G', 1000000000 }, { 'M', 1000000 }, { 'k', 1000 },
	};
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t m = units[i].mul;

		/* whole, or with up to three decimals that say it exactly */
		if (bps >= m && (bps % (m / 1000 ? m / 1000 : 1)) == 0) {
			if (bps % m == 0)
				snprintf(buf, len, "%llu%c", (unsigned long long)(bps / m), units[i].c);
			else {
				char f[8];
				int n;

				n = snprintf(f, sizeof(f), "%03llu",
					     (unsigned long long)(bps % m / (m / 1000)));
				while (n > 1 && f[n - 1] == '0')
					f[--n] = '\0';
				snprintf(buf, len, "%llu.%s%c", (unsigned long long)(bps / m), f,
					 units[i].c);
			}
			return buf;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)bps);
	return buf;
}

const char *
netdev_name_why(const char *name)
{
	size_t n = strlen(name), i;

	if (n == 0)
		return "is empty";
	if (n > NET_DEV_MAX)
		return "is longer than 15 characters";
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return "is not an interface name";
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_.@-", name[i]))
			return "has a character other than letters, digits, _ . @ -";
	return NULL;
}
