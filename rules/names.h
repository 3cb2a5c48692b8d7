/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A small string -> index hash table (open addressing), for thousands of VSs. */
#ifndef VSD_RULES_NAMES_H
#define VSD_RULES_NAMES_H

#include <stddef.h>

struct rules_names;

struct rules_names *names_new(void);
void names_free(struct rules_names *h);
/* Insert name -> idx. Returns -1 if inserted, the existing index if the name
 * was there already (left unchanged), -ENOMEM (< -1) when out of memory. */
int names_add(struct rules_names *h, const char *name, int idx);
/* The index of name, or -1. */
int names_get(const struct rules_names *h, const char *name);

#endif
