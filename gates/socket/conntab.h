/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The socket gate's connection table from user space: an mmap() of the
 * pinned BPF array (gates/socket/socket.h has the layout and the protocol), read
 * without a bpf() call.  vsd, the accept gate and the tests use it.
 * Functions return 0 or -errno; none of them logs.
 */
#ifndef VSD_CONNTAB_H
#define VSD_CONNTAB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "socket.h"

struct conntab {
	struct vsd_conn_slot *slot;	/* NULL: not mapped */
	uint32_t mask;			/* slots - 1 (a power of two) */
	size_t len;			/* bytes mapped */
};

/*
 * Maps the table behind a BPF map fd; writable for conntab_drop_vs() (the
 * fd must allow writing too).  -EINVAL if the map is
 * not a table of this layout (an older vsd's hash map, say).
 */
int  conntab_map(struct conntab *t, int map_fd, int writable);
/* Opens the pinned table at path read-only and maps it. */
int  conntab_open(struct conntab *t, const char *path);
void conntab_unmap(struct conntab *t);

/* The value recorded for k: 0, or -ENOENT. */
int  conntab_lookup(const struct conntab *t, const struct vsd_conn_key *k,
		    struct vsd_conn_val *v);
/* Calls fn for each LIVE entry; stops at fn's first non-zero and returns it. */
int  conntab_walk(const struct conntab *t,
		  int (*fn)(const struct vsd_conn_key *k, const struct vsd_conn_val *v, void *arg),
		  void *arg);
/*
 * Deletes every entry of the VS, as the BPF side would; returns how many.
 * *pooled (may be NULL) gets how many of them had taken from the shared
 * pool (VSD_CONN_POOL), which the caller gives back.
 */
int  conntab_drop_vs(struct conntab *t, uint32_t vs_id, uint32_t *pooled);
/*
 * The slot protocol shared with gates/socket/socket.bpf.c: a consistent copy
 * of a LIVE slot (1, or 0 if it is not LIVE), and LIVE -> DEAD of the slot
 * whose sequence word was seq (0 if it changed under us, as in BPF).
 */
int  conntab_slot_read(const struct vsd_conn_slot *s, struct vsd_conn_slot *out);
int  conntab_slot_kill(struct vsd_conn_slot *s, uint32_t seq);

/*
 * The key under which the socket gate recorded the connecting side of a
 * connection, from the two ends an acceptor sees (peer = getpeername(),
 * local = getsockname()): dir VSD_DIR_ACTIVE, IPv4-mapped addresses folded
 * to AF_INET.  -EAFNOSUPPORT for other families or mixed ones.
 */
int  conntab_accepted_key(const struct sockaddr_storage *peer,
			  const struct sockaddr_storage *local, struct vsd_conn_key *k);

#endif
