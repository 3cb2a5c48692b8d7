// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A name expression ("www[1|2]", "c[0001..0240]", "*") as data: its choices
 * and their names. Parsing and expanding one is expand.c's job; this file
 * sits below everything that holds one (ctx.c, the parser, compile.c).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"

void
nexpr_free(struct nexpr *e)
{
	size_t i;

	for (i = 0; i < e->nalts; i++)
		free(e->alts[i]);
	free(e->alts);
	free(e->pre);
	free(e->post);
	free(e->text);
	memset(e, 0, sizeof(*e));
}

size_t
nexpr_count(const struct nexpr *e)
{
	return e->has_group ? e->nalts : 1;
}

/* Choice k, without the trailing '*'. */
char *
nexpr_name(const struct nexpr *e, size_t k, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", e->pre ? e->pre : "",
		 e->has_group && k < e->nalts ? e->alts[k] : "", e->post ? e->post : "");
	return buf;
}
