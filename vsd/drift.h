/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Limits changed behind vsd's back: a VS's cgroup files that no longer hold
 * what vsd wrote (root inside a VS can rewrite them). Checked when a client
 * looks (show, list) and when vsd changes limits (set, apply); set and apply
 * write every limit of a drifted VS again.
 */
#ifndef VSD_DRIFT_H
#define VSD_DRIFT_H

#include "lib/buf.h"
#include "lib/cgroup.h"

struct vsd;

struct vs_drift {
	int		 n;
	struct cg_drift	 v[CG_DRIFT_MAX];
};

/*
 * Compare vs's files with its limits into dr (nothing for a missing VS);
 * log a drift the first time it is seen, and again only when it changes
 * (when is "show", "list", "create", "set" or "apply"). Returns dr->n.
 */
int drift_check(struct vsd *d, struct vs *vs, struct vs_drift *dr, const char *when);
/* "drift": [{"name": FILE, "limit": L, "hierarchy": H, "want": W, "have": H}, ...] */
void drift_json(const struct vs_drift *dr, struct buf *b);
/* One "drift: ..." line per file, for show. */
void drift_text(const struct vs_drift *dr, struct buf *b);
/* Write every limit of vs again and log it (n files had drifted); 0 or -errno. */
int drift_restore(struct vsd *d, struct vs *vs, int n, const char *when);

#endif
