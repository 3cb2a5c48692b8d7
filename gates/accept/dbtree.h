/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The database mode's threaded subtree on pure cgroup v2 (dbtree.c). */
#ifndef VSD_GATE_DBTREE_H
#define VSD_GATE_DBTREE_H

#include <stdint.h>
#include <sys/types.h>

struct gate_vs;
struct service_thread;
struct vs_table;

/* Make the cgroup TGID sits in a threaded subtree's root, TGID in its
 * "home" child (cpu as HOME's); 0 or -errno (logged). */
int dbtree_start(pid_t tgid, const struct gate_vs *home);
/* Move the thread into V's child (made on first use), or home; 1 if it
 * moved, 0 if it sat there, -errno. */
int dbtree_move(struct service_thread *th, const struct gate_vs *v, uint32_t home);
/* Children follow their VS's cpu.weight and cpu.max; a child whose VS is
 * gone sends its threads home (GONE is told each) and is removed. */
void dbtree_sync(struct vs_table *t, uint32_t home, void (*gone)(pid_t tid, void *arg),
		 void *arg);
/* Remove the children and the home child, and cpu from the root. */
void dbtree_stop(void);
int dbtree_on(void);

#endif
