// SPDX-License-Identifier: GPL-2.0-or-later
/* Parsing TOS bytes, DSCP code points and socket marks for the socket gate. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tos.h"
#include "util.h"

/* RFC 2474 class selectors, RFC 2597 assured forwarding, RFC 3246 EF. */
static const struct { const char *name; uint8_t dscp; } dscps[] = {
	{ "CS0", 0 },   { "CS1", 8 },   { "CS2", 16 },  { "CS3", 24 },
	{ "CS4", 32 },  { "CS5", 40 },  { "CS6", 48 },  { "CS7", 56 },
	{ "AF11", 10 }, { "AF12", 12 }, { "AF13", 14 },
	{ "AF21", 18 }, { "AF22", 20 }, { "AF23", 22 },
	{ "AF31", 26 }, { "AF32", 28 }, { "AF33", 30 },
	{ "AF41", 34 }, { "AF42", 36 }, { "AF43", 38 },
	{ "EF", 46 },
};

/* Decimal or 0x hex, whole string, at most max. */
static int
parse_num(const char *s, unsigned long long max, unsigned long long *out, const char **why)
{
	unsigned long long v;
	int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *digits = hex ? s + 2 : s;
	char *end;

	*why = "is not a number (decimal or 0x hex)";
	if (!(hex ? isxdigit((unsigned char)digits[0]) : isdigit((unsigned char)digits[0])))
		return -EINVAL;
	errno = 0;
	v = strtoull(digits, &end, hex ? 16 : 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v > max) {
		*why = "is out of range";
		return -ERANGE;
	}
	*out = v;
	*why = NULL;
	return 0;
}

int
parse_tos(const char *s, uint8_t *tos, const char **why)
{
	unsigned long long v;
	int r;

	if ((r = parse_num(s, 255, &v, why)) < 0) {
		if (r == -ERANGE)
			*why = "is out of range (0-255)";
		return r;
	}
	*tos = v;
	return 0;
}

int
parse_dscp(const char *s, uint8_t *dscp, const char **why)
{
	unsigned long long v;
	size_t i;
	int r;

	for (i = 0; i < ARRAY_SIZE(dscps); i++) {
		if (!strcasecmp(s, dscps[i].name)) {
			*dscp = dscps[i].dscp;
			*why = NULL;
			return 0;
		}
	}
	if ((r = parse_num(s, 63, &v, why)) < 0) {
		*why = r == -ERANGE ? "is out of range (0-63)" :
			"is not a DSCP (CS0-CS7, AF11-AF43, EF or 0-63)";
		return r;
	}
	*dscp = v;
	return 0;
}

const char *
dscp_name(uint8_t dscp)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dscps); i++)
		if (dscps[i].dscp == dscp)
			return dscps[i].name;
	return NULL;
}

int
parse_mark(const char *s, uint32_t *mark, const char **why)
{
	unsigned long long v;
	int r;

	if ((r = parse_num(s, UINT32_MAX, &v, why)) < 0) {
		if (r == -ERANGE)
			*why = "is out of range (0-4294967295)";
		return r;
	}
	*mark = v;
	return 0;
}
