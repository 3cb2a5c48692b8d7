/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The database mode's layout, shared by its BPF program (dbthreads.bpf.c)
 * and its loader (dbthreads.c): keep the two in sync.
 */
#ifndef VSD_GATE_DBTHREADS_H
#define VSD_GATE_DBTHREADS_H

#define DBT_THREADS_MAX	16384	/* threads of the service followed (LRU) */
#define DBT_VS_MAX	4096	/* VS cgroup2 directories known */
#define DBT_DEPTH	8	/* how far up a Unix peer's cgroup we look for a VS */
#define DBT_RING_BYTES	(64 * 1024)

/* What the program reads: the service's process and its home VS. */
struct dbt_cfg {
	__u32	tgid;		/* 0: off */
	__u32	home;		/* VS id */
};

/* A thread of the service read from a connection of another VS than the
 * one it is bound to: move it there. */
struct dbt_event {
	__u32	tid;
	__u32	vs_id;
};

#endif
