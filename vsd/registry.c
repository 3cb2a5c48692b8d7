// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

struct vs *
reg_find(const struct registry *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->v[i]->name, name) == 0)
			return r->v[i];
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
