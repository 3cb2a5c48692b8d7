/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Prometheus metrics of every VS and gated service (metrics.c). */
#ifndef VSD_METRICS_H
#define VSD_METRICS_H

#include "lib/buf.h"

struct vsd;

#define METRICS_INTERVAL_S	15	/* node_exporter's usual scrape interval */

/* The gated services' "stats" lines (gates/accept/status.c), all in one
 * buffer: a "service" line each, then its "vs" lines. */
void services_stats(struct vsd *d, struct buf *all);
/* vs-services.c: what the gated services did for the VS, for `vsctl show`:
 * text lines, or a JSON member ", \"services\": [...]". */
struct vs;
void vs_services(struct vsd *d, const struct vs *vs, struct buf *b, int json);
/* The exposition text (format 0.0.4), appended to b. */
void metrics_text(struct vsd *d, struct buf *b);
/* --metrics-file: an absolute path ending in ".prom"; *why says what is wrong. */
int metrics_set_file(struct vsd *d, const char *path, const char **why);
/* Write the file now (write_file_replace: no link followed, a random or no
 * temporary name, rename; mode 0644); 0 or -errno, logged once. */
int metrics_write(struct vsd *d);
/* "directory D is world-writable ...", or D's error r, for messages. */
const char *metrics_why(const struct vsd *d, int r);
/* Rewrite it if the interval has passed; the poll timeout it needs (ms). */
void metrics_tick(struct vsd *d);
int metrics_timeout_ms(const struct vsd *d, int t);

#endif
