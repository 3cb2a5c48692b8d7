/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The database mode's cap on a VS's database CPU (dbcap.c). */
#ifndef VSD_GATE_DBCAP_H
#define VSD_GATE_DBCAP_H

#include <stdint.h>
#include <sys/types.h>

struct cg_bw;
struct gate_vs;
struct service_thread;
struct vs_table;

/* What a child serving v's connections gets: v's own cap (vq, vp; vq 0:
 * none), lowered to its db-cpu cap, with its db-burst; no pure v2 or
 * hybrid difference. */
void dbcap_bw(const struct gate_vs *v, uint64_t vq, uint64_t vp, struct cg_bw *bw);
/* Hybrid hosts: move the thread into v's capped child under the service's
 * home VS (lib/cgroup-capped.c), made on first use; 1 if it moved, 0 if it
 * sat there, -errno. */
int dbcap_move(struct service_thread *th, struct gate_vs *v, struct gate_vs *home,
	       const char *svc);
/* Hybrid hosts: children follow their VS's shares and cap; threads of a VS
 * whose cap came or went are placed again (in tgid), a gone VS's go home
 * (GONE is told each), and a child no VS needs is removed. */
void dbcap_sync(struct vs_table *t, struct gate_vs *home, pid_t tgid, const char *svc,
		void (*gone)(pid_t tid, void *arg), void *arg);
/* The service stopped: remove the children. */
void dbcap_stop(void);

#endif
