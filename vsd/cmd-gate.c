// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * "gatetable": the VS table the accept-gate supervisors (vsd-gate) keep a
 * copy of. Plain lines, one VS each, so the supervisor needs no JSON parser:
 *   # conns-map /sys/fs/bpf/vsd/<cgroup-root>/vsd_conns
 *   # next-id <the id the next VS will get: every id below it was handed out>
 *   <id> <name> <cpu share in basis points> <key>=<cgroup dir> ...
 * with key cpu, cpuacct, memory, pids (v1 hierarchies) or unified (cgroup2).
 * The keys are lib/cgroup.h's cg_kind_key; gates/accept/vs-table.c reads this.
 */
#include "config.h"

#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "gates/socket/socket.h"
#include "apply.h"
#include "vsd.h"

int
cmd_gatetable(struct vsd *d, const struct request *req, struct reply *rep)
{
	char dir[PATH_MAX];
	size_t i;
	int h;

	(void)req;
	buf_printf(&rep->out, "# conns-map %s/%s/%s\n", VSD_BPFFS, d->cg.root, VSD_MAP_CONNS);
	/* ids only grow (registry.c): a gate that meets an id at or above
	 * this one knows the VS is newer than its table, not gone */
	buf_printf(&rep->out, "# next-id %" PRIu32 "\n", d->reg.next_id ? d->reg.next_id : 1);
	applied_gatetable(d, &rep->out);
	for (i = 0; i < d->reg.n; i++) {
		const struct vs *vs = d->reg.v[i];

		if (vs->status != VS_OK)
			continue;
		buf_printf(&rep->out, "%" PRIu32 " %s %u", vs->id, vs->name, vs->lim.cpu);
		for (h = 0; h < d->cg.nhier; h++) {
			if (cg_vs_path(&d->cg, h, vs->name, dir, sizeof(dir)) < 0)
				continue;
			buf_printf(&rep->out, " %s=%s", cg_hier_key(&d->cg.hier[h]), dir);
		}
		buf_printf(&rep->out, "\n");
	}
	return 0;
}
