// SPDX-License-Identifier: GPL-2.0-or-later
/* TOS, DSCP and mark parsing (util.c) and DSCP names (tos.c), as the socket gate uses them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gates/socket/tos.h"
#include "lib/util.h"

static int n, failed;

static void
ok(int cond, const char *name)
{
	n++;
	if (!cond)
		failed = 1;
	printf("%sok %d - %s\n", cond ? "" : "not ", n, name);
}

static void
tos(const char *s, int want_r, int want)
{
	const char *why;
	uint8_t v = 0;
	char name[128];
	int r = parse_tos(s, &v, &why);

	snprintf(name, sizeof(name), "tos \"%s\" -> %d/%d%s%s", s, want_r, want,
		 why ? ": " : "", why ? why : "");
	ok(r == want_r && (r < 0 || v == want) && (r == 0) == (why == NULL), name);
}

static void
dscp(const char *s, int want_r, int want)
{
	const char *why;
	uint8_t v = 0;
	char name[128];
	int r = parse_dscp(s, &v, &why);

	snprintf(name, sizeof(name), "dscp \"%s\" -> %d/tos %d%s%s", s, want_r, want,
		 why ? ": " : "", why ? why : "");
	ok(r == want_r && (r < 0 || v == want), name);
}

static void
mark(const char *s, int want_r, unsigned long want)
{
	const char *why;
	uint32_t v = 0;
	char name[128];
	int r = parse_mark(s, &v, &why);

	snprintf(name, sizeof(name), "mark \"%s\" -> %d/%lu", s, want_r, want);
	ok(r == want_r && (r < 0 || v == want), name);
}

int
main(void)
{
	printf("1..37\n");
	tos("0", 0, 0);
	tos("40", 0, 40);
	tos("0x28", 0, 0x28);
	tos("0XfF", 0, 255);
	tos("255", 0, 255);
	tos("256", -ERANGE, 0);
	tos("0x100", -ERANGE, 0);
	tos("99999999999999999999999", -ERANGE, 0);
	tos("", -EINVAL, 0);
	tos("-1", -EINVAL, 0);
	tos("0x", -EINVAL, 0);
	tos("12a", -EINVAL, 0);
	tos(" 1", -EINVAL, 0);
	tos("EF", -EINVAL, 0);

	dscp("EF", 0, 184);
	dscp("ef", 0, 184);
	dscp("CS0", 0, 0);
	dscp("cs7", 0, 224);
	dscp("AF11", 0, 40);
	dscp("AF43", 0, 152);
	dscp("af22", 0, 80);
	dscp("0", 0, 0);
	dscp("63", 0, 252);
	dscp("0x3f", 0, 252);
	dscp("64", -ERANGE, 0);
	dscp("AF44", -EINVAL, 0);
	dscp("CS8", -EINVAL, 0);
	dscp("", -EINVAL, 0);
	dscp("EFX", -EINVAL, 0);
	ok(dscp_name(46) && !strcmp(dscp_name(46), "EF"), "dscp_name(46) is EF");
	ok(dscp_name(10) && !strcmp(dscp_name(10), "AF11"), "dscp_name(10) is AF11");
	ok(dscp_name(1) == NULL, "dscp_name(1) has none");

	mark("0", 0, 0);
	mark("4294967295", 0, 4294967295UL);
	mark("0xffffffff", 0, 4294967295UL);
	mark("4294967296", -ERANGE, 0);
	mark("x", -EINVAL, 0);
	return failed;
}
