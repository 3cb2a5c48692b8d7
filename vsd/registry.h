/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The VSs vsd knows, in creation order. */
#ifndef VSD_REGISTRY_H
#define VSD_REGISTRY_H

#include <stddef.h>

#include "lib/vs.h"

struct registry {
	struct vs	**v;
	size_t		  n;
	size_t		  cap;
	uint32_t	  next_id;	/* ids are never reused within a state dir */
	struct vs	**hash;		/* by name (registry.c), hcap slots */
	size_t		  hcap;
	int		  hstale;	/* rebuild before the next lookup */
};

struct vs *reg_find(const struct registry *r, const char *name);
struct vs *reg_find_id(const struct registry *r, uint32_t id);
/* Takes ownership of vs; assigns vs->id when it is 0. */
int reg_add(struct registry *r, struct vs *vs);
/* Removes and frees vs. */
void reg_remove(struct registry *r, struct vs *vs);
void reg_free(struct registry *r);
/* Sum of guaranteed shares in basis points, leaving out skip (may be NULL). */
unsigned reg_cpu_sum(const struct registry *r, const struct vs *skip);

#endif
