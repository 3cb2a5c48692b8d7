/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A virtual server: a name, its limits, and where its cgroups are. */
#ifndef VSD_VS_H
#define VSD_VS_H

#include <stdint.h>

#include "util.h"

/* The VS's socket gate settings; flags are VSD_CFG_* from
 * gates/socket/socket.h (gates/socket/gate-socket.h applies them). */
struct gate_socket_cfg {
	uint32_t flags;
	uint8_t  tos;
	uint32_t mark;
	uint32_t priority;
};

struct vs_limits {
	unsigned cpu;		/* guaranteed share, basis points (5000 = 50%) */
	unsigned cpu_max;	/* cap, basis points of the whole machine; 0 = none */
	uint64_t mem_max;	/* bytes; 0 = none */
	uint64_t pids_max;	/* processes; 0 = none */
};

/* The VS's network share (vsd/netshare.c); dev "" = none. */
struct vs_net {
	char		 dev[16];	/* the interface, IFNAMSIZ */
	unsigned	 share;		/* guaranteed, basis points of the device's rate */
	uint64_t	 max;		/* cap, bits/s; 0 = none (the device's rate) */
	uint64_t	 rate;		/* the device's rate the shares divide, bits/s */
	uint16_t	 minor;		/* its HTB class on dev */
};

enum vs_status {
	VS_OK = 0,
	VS_MISSING,		/* a cgroup directory vanished behind vsd's back */
};

struct vs {
	char		 name[VS_NAME_MAX + 1];
	uint32_t	 id;		/* never reused within one state directory */
	struct vs_limits lim;
	enum vs_status	 status;
	uint64_t	 cg2_id;	/* cgroup2 directory inode (BPF attach point); 0 if none */
	struct gate_socket_cfg gate;	/* socket gate: TOS, mark, priority */
	struct vs_net	 net;		/* network share */
	uint64_t	 drift_logged;	/* hash of the drift vsd logged last, 0: none (not saved) */
	int		 drift_n;	/* drifted files at the last check, -1: not checked
					 * yet (not saved; vsd/drift.c) */
	/* What the socket gate's map holds for it (vsd/gate-vs.c): the owner's
	 * id and settings, so that unchanged entries are not written again;
	 * gate_written_id 0: not known. Not saved. */
	uint32_t	 gate_written_id;
	struct gate_socket_cfg gate_written;
	uint64_t	 conns_lost;	/* its refused + unrecorded connections, last logged */
};

#endif
