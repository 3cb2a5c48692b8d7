/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fork gate: fork rules through the kernel's process events (fork-gate.c). */
#ifndef VSD_FORK_GATE_H
#define VSD_FORK_GATE_H

struct vsd;

/* Listen or stop listening, as the rules in force need. */
void fork_gate_update(struct vsd *d);
/* The event socket for poll(), -1 while off. */
int fork_gate_fd(void);
/* Handle what the kernel sent. */
void fork_gate_events(struct vsd *d);
void fork_gate_close(void);

#endif
