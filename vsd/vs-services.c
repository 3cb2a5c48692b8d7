// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `vsctl show VS`: what each gated service did for the VS, from the
 * supervisors' "stats" lines (the figures `vsctl top` and the metrics
 * show): connections served, the service's CPU time in the VS and, for a
 * database service, its threads' CPU time and I/O serving the VS's
 * connections (gates/accept/dbacct.c). Only show asks: a list of every VS
 * would ask every supervisor once per VS.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/util.h"
#include "metrics.h"
#include "vsd.h"

static uint64_t
num(const char *line, const char *key)
{
	char v[32];

	return kv_get(line, key, v, sizeof(v)) < 0 ? 0 : strtoull(v, NULL, 10);
}

void
vs_services(struct vsd *d, const struct vs *vs, struct buf *b, int json)
{
	struct buf all = { 0 };
	const char *p;
	int n = 0;

	services_stats(d, &all);
	if (json)
		buf_printf(b, ", \"services\": [");
	for (p = all.p; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char svc[VS_NAME_MAX + 1], name[VS_NAME_MAX + 1], line[512];
		uint64_t cpu, db, rd, wr;

		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
		if (strncmp(line, "vs ", 3) != 0 || kv_get(line, "service", svc, sizeof(svc)) < 0 ||
		    kv_get(line, "name", name, sizeof(name)) < 0 || strcmp(name, vs->name) != 0)
			continue;
		cpu = num(line, "cpu_usec");
		db = num(line, "db_cpu_usec");
		rd = num(line, "db_read_bytes");
		wr = num(line, "db_write_bytes");
		if (json) {
			buf_printf(b, "%s{\"service\": ", n++ ? ", " : "");
			buf_json_str(b, svc);
			buf_printf(b, ", \"served\": %" PRIu64 ", \"cpu_usec\": %" PRIu64
				   ", \"db_cpu_usec\": %" PRIu64 ", \"db_read_bytes\": %" PRIu64
				   ", \"db_write_bytes\": %" PRIu64 "}", num(line, "served"), cpu, db,
				   rd, wr);
		} else {
			buf_printf(b, "service %s: served %" PRIu64 ", cpu %.2f s, database cpu "
				   "%.2f s, database read %" PRIu64 " B, written %" PRIu64 " B\n", svc,
				   num(line, "served"), (double)cpu / 1e6, (double)db / 1e6, rd, wr);
		}
	}
	if (json)
		buf_printf(b, "]");
	buf_free(&all);
}
