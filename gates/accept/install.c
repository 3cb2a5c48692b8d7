// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Putting a VS table and its rules in force, between two notifications:
 * pushed by vsd (vs-table-vsd.c), asked of vsd at start and on "refresh",
 * or read again from a --vs-table file.
 */
#include "config.h"

#include "gate.h"
#include "lib/log.h"

#define GATE_REFRESH_MIN_MS	200	/* at most this often unless forced */

void
gate_install(struct gate *g, struct vs_table *fresh, int from_vsd,
	     int (*rules)(void *arg, struct rules **rs), void *arg)
{
	uint32_t gone[256];
	size_t ngone = ARRAY_SIZE(gone), i;
	struct gated_listener *l;
	uint64_t hash = fresh->rules_hash;

	vs_table_merge(&g->tab, fresh, gone, &ngone);
	if (from_vsd && hash != g->rules_hash) {
		struct rules *rs = NULL;

		if (!hash)
			gate_rules_update(g, 0, NULL);
		else if (rules(arg, &rs) == 0)
			gate_rules_update(g, hash, rs);
		else
			gate_rules_index(g);	/* the last good rules, the new table */
	} else {
		gate_rules_index(g);
	}
	if (g->home && !vs_table_find(&g->tab, g->home))
		log_warnx("home VS %u is gone; connections are served unbound", g->home);
	trace_table(g);
	for (l = g->listeners; l; l = l->next)
		fp_rules_changed(g, l);
	for (i = 0; i < ngone; i++) {
		log_info("VS %u is gone; its queued connections go to the home VS", gone[i]);
		trace_gone(g, gone[i]);
		for (l = g->listeners; l; l = l->next)
			queue_reroute(l, gone[i], g->home, &g->tab);
	}
}

static int
rules_pulled(void *arg, struct rules **rs)
{
	struct gate *g = arg;

	g->vsd_pulls++;
	return gate_rules_load_vsd(g->vsd_socket, rs);
}

void
gate_refresh(struct gate *g, int force)
{
	struct vs_table fresh;
	uint64_t now = now_ns();
	int r;

	if (!force && now - g->last_refresh < GATE_REFRESH_MIN_MS * 1000000ull)
		return;
	g->last_refresh = now;
	g->refresh_asked = 0;
	if (g->vsd_socket) {
		g->vsd_pulls++;
		r = vs_table_load_vsd(&fresh, g->vsd_socket);
	} else if (g->table_file) {
		r = vs_table_load_file(&fresh, g->table_file);
	} else {
		return;
	}
	if (r == 0)		/* else keep the last good table while vsd is away */
		gate_install(g, &fresh, g->vsd_socket != NULL, rules_pulled, g);
}
