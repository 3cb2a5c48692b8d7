// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "registry.h"

/*
 * Names are found through an open-addressing hash (an apply of a file with
 * 10,000 VSs looks up each of them), built when first needed after a
 * change: adding inserts, removing marks it stale.
 */
static size_t
name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return (size_t)h;
}

static void
hash_insert(struct registry *r, struct vs *vs)
{
	size_t i = name_hash(vs->name) & (r->hcap - 1);

	while (r->hash[i])
		i = (i + 1) & (r->hcap - 1);
	r->hash[i] = vs;
}

static int
hash_build(struct registry *r)
{
	size_t cap = 64, i;

	while (cap < r->n * 2 + 16)
		cap *= 2;
	free(r->hash);
	r->hash = NULL;
	r->hstale = 1;
	if (!(r->hash = calloc(cap, sizeof(*r->hash))))
		return -ENOMEM;
	r->hcap = cap;
	for (i = 0; i < r->n; i++)
		hash_insert(r, r->v[i]);
	r->hstale = 0;
	return 0;
}

struct vs *
reg_find(const struct registry *cr, const char *name)
{
	/* the index is a cache: building it does not change the registry */
	struct registry *r = (struct registry *)cr;
	size_t i;

	if ((r->hstale || !r->hash) && hash_build(r) < 0) {
		for (i = 0; i < r->n; i++)	/* out of memory: the slow way */
			if (strcmp(r->v[i]->name, name) == 0)
				return r->v[i];
		return NULL;
	}
	for (i = name_hash(name) & (r->hcap - 1); r->hash[i]; i = (i + 1) & (r->hcap - 1))
		if (strcmp(r->hash[i]->name, name) == 0)
			return r->hash[i];
	return NULL;
}

struct vs *
reg_find_id(const struct registry *r, uint32_t id)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->v[i]->id == id)
			return r->v[i];
	return NULL;
}

int
reg_add(struct registry *r, struct vs *vs)
{
	struct vs **nv;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;

		if (!(nv = realloc(r->v, cap * sizeof(*nv))))
			return -ENOMEM;
		r->v = nv;
		r->cap = cap;
	}
	if (r->next_id == 0)
		r->next_id = 1;
	if (vs->id == 0)
		vs->id = r->next_id++;
	else if (vs->id >= r->next_id)
		r->next_id = vs->id + 1;
	r->v[r->n++] = vs;
	if (r->hash && !r->hstale && r->n * 2 + 16 <= r->hcap)
		hash_insert(r, vs);
	else
		r->hstale = 1;
	return 0;
}

void
reg_remove(struct registry *r, struct vs *vs)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		if (r->v[i] == vs) {
			memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof(*r->v));
			r->n--;
			r->hstale = 1;
			free(vs);
			return;
		}
	}
}

void
reg_free(struct registry *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->v[i]);
	free(r->v);
	free(r->hash);
	memset(r, 0, sizeof(*r));
}

unsigned
reg_cpu_sum(const struct registry *r, const struct vs *skip)
{
	unsigned sum = 0;
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->v[i] != skip)
			sum += r->v[i]->lim.cpu;
	return sum;
}
