/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every VS's figures in one place (cmd-stats.c): usage, limit events and
 * open connections, for `vsctl show`, the `stats` request behind `vsctl
 * top`, and the metrics file (metrics.c). A sample younger than
 * STATS_MAX_AGE_MS is served again, so that several readers (top in two
 * terminals, the metrics file) cost vsd one read of each VS's files per refresh, not one per reader
 * (`vsctl top -d` is at least 1 s, twice this age). For a pass over every VS
 * the age counts from the end of the last full pass, not from each VS's
 * read: at 1,000 VSs on a busy 2-CPU machine one pass took 0.1 s of CPU and
 * more than 0.5 s of wall time (benchmarks/results/top-cost.md).
 */
#ifndef VSD_STATS_H
#define VSD_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/cgroup.h"

struct vsd;
struct vs;

#define STATS_MAX_AGE_MS	500

struct vs_stats {
	uint64_t	 at_ns;		/* mono_ns() when read */
	int		 ok;		/* the cgroup files were read */
	struct cg_stats	 cg;
	uint32_t	 conns_out, conns_in;	/* socket gate's table (0 without it) */
};

/* The limit-event counters, by the key JSON, `stats` and the metrics name
 * them with; the list ends with a NULL key. */
struct stats_field {
	const char	*key;
	unsigned	 bit;		/* CG_ST_*: present on this layout */
	size_t		 off;		/* in struct cg_stats */
};
extern const struct stats_field stats_events[];
#define STATS_FIELD(st, f)	(*(const uint64_t *)((const char *)(st) + (f)->off))

/* Around a pass over every VS: between them, vs_stats_get serves the last
 * full pass's samples if that pass ended less than STATS_MAX_AGE_MS ago. */
void stats_pass_begin(void);
void stats_pass_end(void);
/* vs's figures, from the cache or read now (a missing VS: ok 0). */
const struct vs_stats *vs_stats_get(struct vsd *d, const struct vs *vs);
/* , "events": {...}: each counter, or null where the layout has none. */
void stats_events_json(const struct cg_stats *st, struct buf *b);
/* "events: ..." and "cpu cap: ..." lines, for show. */
void stats_events_text(const struct cg_stats *st, struct buf *b);

#endif
