/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Writing the socket gate's connection table from user space, as its BPF
 * programs do (gates/socket/socket.bpf.c): the tests fill and empty tables
 * of their own with these; vsd itself only reads and drops.
 */
#include <errno.h>
#include <string.h>

#include "tests/conntab-write.h"

/* -ENOSPC when the key's probe window has no free slot. */
int
conntab_insert(struct conntab *t, const struct vsd_conn_key *k, const struct vsd_conn_val *v)
{
	uint32_t h = vsd_conn_hash(k), i;

	if (!t->slot)
		return -EINVAL;
	for (i = 0; i < VSD_CONN_PROBE; i++) {
		struct vsd_conn_slot *s = &t->slot[(h + i) & t->mask];
		uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);

		if (VSD_SLOT_STATE(seq) != VSD_SLOT_EMPTY && VSD_SLOT_STATE(seq) != VSD_SLOT_DEAD)
			continue;
		if (!__atomic_compare_exchange_n(&s->seq, &seq, VSD_SLOT_CLAIM(seq), 0,
						 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			continue;
		memcpy(&s->key, k, sizeof(*k));
		memcpy(&s->val, v, sizeof(*v));
		__atomic_store_n(&s->seq, VSD_SLOT_CLAIM(seq) + 1, __ATOMIC_RELEASE);
		return 0;
	}
	return -ENOSPC;
}

/* 0, or -ENOENT. */
int
conntab_delete(struct conntab *t, const struct vsd_conn_key *k)
{
	struct vsd_conn_slot c;
	uint32_t h = vsd_conn_hash(k), i;

	if (!t->slot)
		return -ENOENT;
	for (i = 0; i < VSD_CONN_PROBE; i++) {
		struct vsd_conn_slot *s = &t->slot[(h + i) & t->mask];

		if (VSD_SLOT_STATE(__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE)) == VSD_SLOT_EMPTY)
			break;
		if (conntab_slot_read(s, &c) && vsd_conn_key_eq(&c.key, k) && conntab_slot_kill(s, c.seq))
			return 0;
	}
	return -ENOENT;
}
