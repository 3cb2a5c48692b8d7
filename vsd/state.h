/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The state file: what vsd must remember across restarts. Text, one VS a line,
 * written atomically (temp file, fsync, rename):
 *   vsd-state 1
 *   next-id 3
 *   vs www1 id=1 cpu=5000 cpu-max=0 mem=0 pids=0 [tos=40] [mark=42] [prio=5]
 *      [net-dev=eth0 net-share=7500 net-max=0 net-rate=200000000 net-class=16]
 */
#ifndef VSD_STATE_H
#define VSD_STATE_H

#include "lib/buf.h"
#include "registry.h"

#define STATE_FILE	"state"

/* Parse text into reg; on error *line is the failing line and *why the reason. */
int state_parse(const char *text, struct registry *reg, int *line, const char **why);
void state_format(const struct registry *reg, struct buf *out);
/* Load dir/state into reg (a missing file is an empty registry). */
int state_load(const char *dir, struct registry *reg);
int state_save(const char *dir, const struct registry *reg);

#endif
