/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Limits changed behind vsd's back: a VS's cgroup files that no longer hold
 * what vsd wrote (root inside a VS can rewrite them). Checked when a client
 * looks (show, list), by set, and in the background (drift_sweep: every VS
 * within DRIFT_SWEEP_S seconds); set writes every limit of a drifted VS
 * again, apply those of the VSs found drifted by the last check. apply does
 * not read every VS's files itself: at 10,000 VSs that took 0.4-0.6 s, and a
 * one-line change must apply in under 200 ms.
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
/* The drift of a VS as vsd knows it: the last check's, or a check now if
 * there was none yet; for apply. */
int drift_known(struct vsd *d, struct vs *vs);
/* Check a slice of the VSs if it is time; the poll timeout it needs (ms). */
void drift_sweep(struct vsd *d);
int drift_timeout_ms(const struct vsd *d, int t);

#endif
