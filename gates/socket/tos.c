// SPDX-License-Identifier: GPL-2.0-or-later
/* DSCP names, for showing a VS's socket gate settings. */
#include <stddef.h>

#include "tos.h"
#include "lib/util.h"

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

const char *
dscp_name(uint8_t dscp)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dscps); i++)
		if (dscps[i].dscp == dscp)
			return dscps[i].name;
	return NULL;
}
