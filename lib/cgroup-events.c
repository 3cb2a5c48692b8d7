// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A VS's usage and limit events, from the kernel's own counters: what `vsctl
 * show`, `vsctl top` and the metrics report. One pass over the VS's
 * directories, each counter file read once (on v2, cpu.stat carries both the
 * usage and the throttling). The counters only ever grow while the cgroup
 * exists; a reader wanting "since X" keeps its own earlier sample.
 *
 *   counter          v1 (hybrid, legacy)               v2
 *   oom_kill         memory.oom_control oom_kill (4.13) memory.events oom_kill (4.13)
 *   mem_high         -- (v1 has no high limit)          memory.events high
 *   mem_max          memory.failcnt (charges refused    memory.events max (usage hit
 *                    at the limit, before reclaim)      memory.max, before reclaim)
 *   pids_max         pids.events max                    pids.events max
 *   nr_periods       cpu.stat nr_periods                cpu.stat nr_periods
 *   nr_throttled     cpu.stat nr_throttled              cpu.stat nr_throttled
 *   throttled_usec   cpu.stat throttled_time / 1000     cpu.stat throttled_usec
 *
 * v2's memory.events and pids.events count the events of the whole subtree
 * (memory.events.local, pids.events.local are the cgroup's own); a VS has
 * no children, so both read the same. On 6.1 (Debian 12) pids.events counts
 * a refused fork in the cgroup whose limit refused it, which is the VS.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"

/* The value of "key N" in a flat-keyed file's text; -ENOENT if absent. */
int
cg_parse_key(const char *text, const char *key, uint64_t *v)
{
	size_t n = strlen(key);
	const char *p = text;

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char *end;

		if (strncmp(p, key, n) != 0 || p[n] != ' ')
			continue;
		errno = 0;
		*v = strtoull(p + n + 1, &end, 10);
		if (errno || end == p + n + 1)
			return -EINVAL;
		return 0;
	}
	return -ENOENT;
}

static int
read_u64(int dfd, const char *file, uint64_t *v)
{
	char buf[64], *end;
	int r;

	if ((r = cg_readat(dfd, file, buf, sizeof(buf))) < 0)
		return r;
	*v = strtoull(buf, &end, 10);
	return end == buf ? -EINVAL : 0;
}

/* key of a file's text into *v, and its bit into st->have; a missing key
 * (an older kernel) leaves both alone. */
static int
read_key(const char *text, const char *key, uint64_t *v, unsigned bit, struct cg_stats *st)
{
	int r = cg_parse_key(text, key, v);

	if (r == 0)
		st->have |= bit;
	return r == -ENOENT ? 0 : r;
}

static int
read_text(int dfd, const char *file, char *buf, size_t len)
{
	int r = cg_readat(dfd, file, buf, len);

	if (r == -ENOENT) {
		buf[0] = '\0';
		return 0;
	}
	return r;
}

/* pids.current and pids.events: the same files on v1 and v2. */
static int
pids_stats(int dfd, struct cg_stats *st)
{
	char buf[256];
	int r;

	if ((r = read_u64(dfd, "pids.current", &st->pids)) < 0)
		return r;
	st->have |= CG_ST_PIDS;
	if ((r = read_text(dfd, "pids.events", buf, sizeof(buf))) < 0)
		return r;
	return read_key(buf, "max", &st->pids_max, CG_ST_PIDS_MAX, st);
}

int
cg_v1_stats(int dfd, unsigned roles, struct cg_stats *st)
{
	char buf[1024];
	uint64_t ns = 0;
	int r;

	if (roles & CG_R_CPUACCT) {
		if ((r = read_u64(dfd, "cpuacct.usage", &ns)) < 0)
			return r;
		st->cpu_usec = ns / 1000;
		st->have |= CG_ST_CPU;
	}
	if (roles & CG_R_CPU) {
		if ((r = read_text(dfd, "cpu.stat", buf, sizeof(buf))) < 0 ||
		    (r = read_key(buf, "nr_periods", &st->nr_periods, CG_ST_THROTTLE, st)) < 0 ||
		    (r = read_key(buf, "nr_throttled", &st->nr_throttled, CG_ST_THROTTLE, st)) < 0)
			return r;
		ns = 0;
		if ((r = cg_parse_key(buf, "throttled_time", &ns)) < 0 && r != -ENOENT)
			return r;
		st->throttled_usec = ns / 1000;
	}
	if (roles & CG_R_MEM) {
		if ((r = read_u64(dfd, "memory.usage_in_bytes", &st->mem_bytes)) < 0)
			return r;
		st->have |= CG_ST_MEM;
		if (read_u64(dfd, "memory.failcnt", &st->mem_max) == 0)
			st->have |= CG_ST_MEM_MAX;
		if ((r = read_text(dfd, "memory.oom_control", buf, sizeof(buf))) < 0 ||
		    (r = read_key(buf, "oom_kill", &st->oom_kill, CG_ST_OOM, st)) < 0)
			return r;
	}
	return (roles & CG_R_PIDS) ? pids_stats(dfd, st) : 0;
}

int
cg_v2_stats(int dfd, unsigned roles, struct cg_stats *st)
{
	char buf[1024];
	int r;

	if (roles & (CG_R_CPU | CG_R_CPUACCT)) {
		/* cpu.stat has usage_usec even without the cpu controller */
		if ((r = cg_readat(dfd, "cpu.stat", buf, sizeof(buf))) < 0 ||
		    (r = read_key(buf, "usage_usec", &st->cpu_usec, CG_ST_CPU, st)) < 0)
			return r;
		if ((roles & CG_R_CPU) &&
		    ((r = read_key(buf, "nr_periods", &st->nr_periods, CG_ST_THROTTLE, st)) < 0 ||
		     (r = read_key(buf, "nr_throttled", &st->nr_throttled, CG_ST_THROTTLE, st)) < 0 ||
		     (r = read_key(buf, "throttled_usec", &st->throttled_usec, CG_ST_THROTTLE, st)) < 0))
			return r;
	}
	if (roles & CG_R_MEM) {
		if ((r = read_u64(dfd, "memory.current", &st->mem_bytes)) < 0)
			return r;
		st->have |= CG_ST_MEM;
		if ((r = read_text(dfd, "memory.events", buf, sizeof(buf))) < 0 ||
		    (r = read_key(buf, "oom_kill", &st->oom_kill, CG_ST_OOM, st)) < 0 ||
		    (r = read_key(buf, "high", &st->mem_high, CG_ST_MEM_HIGH, st)) < 0 ||
		    (r = read_key(buf, "max", &st->mem_max, CG_ST_MEM_MAX, st)) < 0)
			return r;
	}
	return (roles & CG_R_PIDS) ? pids_stats(dfd, st) : 0;
}

int
cg_vs_stats(const struct cg_ctx *cg, const struct vs *vs, struct cg_stats *st)
{
	int i, fd, r;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < cg->nhier; i++) {
		const struct cg_hier *h = &cg->hier[i];

		if (!h->ops->stats || !(h->roles & (CG_R_CPU | CG_R_CPUACCT | CG_R_MEM | CG_R_PIDS)))
			continue;
		if ((fd = cg_vs_dir_open(cg, i, vs->name)) < 0)
			return fd;
		r = h->ops->stats(fd, h->roles, st);
		close(fd);
		if (r < 0)
			return r;
	}
	return 0;
}
