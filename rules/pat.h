/* SPDX-License-Identifier: GPL-2.0-or-later */
/* VS patterns as data (pat.c): for gate rules and content rules alike. */
#ifndef VSD_RULES_PAT_H
#define VSD_RULES_PAT_H

#include <stddef.h>

#include "rules.h"

struct buf;

/* Whether p matches VS idx (or, for an undeclared VS, its name). */
int pat_match(const struct rules *rs, const struct rules_pat *p, int idx, const char *name);
/* Whether some VS name matches both. */
int pat_overlap(const struct rules *rs, const struct rules_pat *a, const struct rules_pat *b);
/* A name both match, for messages. */
const char *pat_witness(const struct rules *rs, const struct rules_pat *a,
			const struct rules_pat *b, char *buf, size_t len);
/* The priority of the VS it names, -1 for a prefix or '*'. */
int pat_priority(const struct rules *rs, const struct rules_pat *p);
/* 2 for one VS, 1 for a prefix, 0 for '*'. */
int pat_specificity(const struct rules_pat *p);
void pat_free(struct rules_pat *p);
void pat_write(const struct rules *rs, struct buf *b, const struct rules_pat *p);

#endif
