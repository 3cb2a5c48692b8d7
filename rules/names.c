// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

struct slot {
	char	*key;
	int	 idx;
};

struct rules_names {
	struct slot	*slots;
	size_t		 cap;	/* a power of two */
	size_t		 n;
};

static uint64_t
hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

struct rules_names *
names_new(void)
{
	struct rules_names *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->cap = 64;
	h->slots = calloc(h->cap, sizeof(*h->slots));
	if (!h->slots) {
		free(h);
		return NULL;
	}
	return h;
}

void
names_free(struct rules_names *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->cap; i++)
		free(h->slots[i].key);
	free(h->slots);
	free(h);
}

static struct slot *
find(struct slot *slots, size_t cap, const char *name)
{
	size_t i = (size_t)hash(name) & (cap - 1);

	while (slots[i].key && strcmp(slots[i].key, name) != 0)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int
grow(struct rules_names *h)
{
	size_t i, cap = h->cap * 2;
	struct slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < h->cap; i++)
		if (h->slots[i].key)
			*find(slots, cap, h->slots[i].key) = h->slots[i];
	free(h->slots);
	h->slots = slots;
	h->cap = cap;
	return 0;
}

int
names_add(struct rules_names *h, const char *name, int idx)
{
	struct slot *s;

	if ((h->n + 1) * 2 > h->cap && grow(h) < 0)
		return -ENOMEM;
	s = find(h->slots, h->cap, name);
	if (s->key)
		return s->idx;
	s->key = strdup(name);
	if (!s->key)
		return -ENOMEM;
	s->idx = idx;
	h->n++;
	return -1;
}

int
names_get(const struct rules_names *h, const char *name)
{
	const struct slot *s;

	if (!h)
		return -1;
	s = find(h->slots, h->cap, name);
	return s->key ? s->idx : -1;
}
