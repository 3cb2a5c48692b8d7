/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the unit tests read of a VS's cgroup handle (lib/cgroup-handle.h):
 * its directories by key, and how many descriptors it keeps open. The gate
 * never asks either, so they live here, not in the library.
 */
#ifndef VSD_TESTS_CGH_PEEK_H
#define VSD_TESTS_CGH_PEEK_H

#include <string.h>

#include "lib/cgroup-handle.h"

/* The directory of hierarchy key ("cpu", "unified", ...), NULL if none. */
static inline const char *
cgh_dir(const struct cg_handle *h, const char *key)
{
	int k;

	for (k = 0; k < CG_KIND_MAX; k++)
		if (strcmp(cg_kind_key[k], key) == 0)
			return h->dir[k];
	return NULL;
}

/* How many descriptors the handle holds open. */
static inline int
cgh_nfds(const struct cg_handle *h)
{
	int k, n = 0;

	for (k = 0; k < CG_KIND_MAX; k++)
		if (h->dir[k])
			n += (h->wfd[k] >= 0) + (h->rfd[k] >= 0);
	return n;
}

#endif
