// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The socket gate's connection table, read (and for tests written) through
 * mmap().  The layout and the slot protocol are in gates/socket/socket.h; keep
 * conn_insert() and conn_del_key() in gates/socket/socket.bpf.c in sync.
 *
 * The kernel side changes slots under us at any time, so a slot is read
 * seqlock-style: its seq, then the rest, then seq again; a copy counts only
 * if the slot was LIVE and seq did not move (a delete and a new claim both
 * move it).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "conntab.h"

/* The slot is copied as 64-bit words, which may alias the struct. */
typedef uint64_t __attribute__((may_alias)) slot_word;

int
conntab_map(struct conntab *t, int map_fd, int writable)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	memset(t, 0, sizeof(*t));
	if (bpf_obj_get_info_by_fd(map_fd, &mi, &len) < 0)
		return -errno;
	if (mi.type != BPF_MAP_TYPE_ARRAY || mi.value_size != sizeof(struct vsd_conn_slot) ||
	    !(mi.map_flags & BPF_F_MMAPABLE) || mi.max_entries == 0 ||
	    (mi.max_entries & (mi.max_entries - 1)))
		return -EINVAL;
	t->len = ((size_t)mi.max_entries * sizeof(struct vsd_conn_slot) + page - 1) &
		 ~(size_t)(page - 1);
	p = mmap(NULL, t->len, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	t->slot = p;
	t->mask = mi.max_entries - 1;
	return 0;
}

/*
 * The fd is opened read-write, the mapping read-only: mmap() of a file
 * opened read-only turns MAP_SHARED into a private-like mapping without
 * VM_SHARED, which BPF maps refuse (EINVAL, Linux 6.18); and a read-only
 * BPF map mapping loses VM_MAYWRITE, so it cannot be made writable later.
 */
int
conntab_open(struct conntab *t, const char *path)
{
	int fd, r;

	memset(t, 0, sizeof(*t));
	if ((fd = bpf_obj_get(path)) < 0)
		return -errno;
	r = conntab_map(t, fd, 0);
	close(fd);	/* the mapping keeps the map */
	return r;
}

void
conntab_unmap(struct conntab *t)
{
	if (t->slot)
		munmap(t->slot, t->len);
	memset(t, 0, sizeof(*t));
}

int
conntab_slot_read(const struct vsd_conn_slot *s, struct vsd_conn_slot *out)
{
	const slot_word *src = (const slot_word *)s;
	slot_word *dst = (slot_word *)out;
	uint32_t s1, s2;
	size_t i;
	int tries;

	/* Each retry needs a whole delete and insert under us: few will do. */
	for (tries = 0; tries < 16; tries++) {
		s1 = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		if (VSD_SLOT_STATE(s1) != VSD_SLOT_LIVE)
			return 0;
		for (i = 0; i < sizeof(*s) / sizeof(*src); i++)
			dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
		if (s1 == s2) {
			out->seq = s1;
			return 1;
		}
	}
	return 0;
}

int
conntab_lookup(const struct conntab *t, const struct vsd_conn_key *k, struct vsd_conn_val *v)
{
	struct vsd_conn_slot c;
	uint32_t h = vsd_conn_hash(k), i, seq;

	if (!t->slot)
		return -ENOENT;
	for (i = 0; i < VSD_CONN_PROBE; i++) {
		const struct vsd_conn_slot *s = &t->slot[(h + i) & t->mask];

		seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		if (VSD_SLOT_STATE(seq) == VSD_SLOT_EMPTY)
			break;		/* the key cannot lie further on */
		if (conntab_slot_read(s, &c) && vsd_conn_key_eq(&c.key, k)) {
			*v = c.val;
			return 0;
		}
	}
	return -ENOENT;
}

int
conntab_walk(const struct conntab *t,
	     int (*fn)(const struct vsd_conn_key *, const struct vsd_conn_val *, void *),
	     void *arg)
{
	struct vsd_conn_slot c;
	uint64_t i;
	int r;

	if (!t->slot)
		return 0;
	for (i = 0; i <= t->mask; i++)
		if (conntab_slot_read(&t->slot[i], &c) && (r = fn(&c.key, &c.val, arg)) != 0)
			return r;
	return 0;
}

int
conntab_slot_kill(struct vsd_conn_slot *s, uint32_t seq)
{
	return __atomic_compare_exchange_n(&s->seq, &seq, seq + 1, 0,
					   __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

int
conntab_drop_vs(struct conntab *t, uint32_t vs_id, uint32_t *pooled)
{
	struct vsd_conn_slot c;
	uint32_t np = 0;
	uint64_t i;
	int n = 0;

	if (pooled)
		*pooled = 0;
	if (!t->slot)
		return 0;
	for (i = 0; i <= t->mask; i++) {
		/* Unless the kernel deleted (or reused) it meanwhile. */
		if (conntab_slot_read(&t->slot[i], &c) && c.val.vs_id == vs_id &&
		    conntab_slot_kill(&t->slot[i], c.seq)) {
			n++;
			if ((c.val.flags & (VSD_CONN_COUNTED | VSD_CONN_POOL)) ==
			    (VSD_CONN_COUNTED | VSD_CONN_POOL))
				np++;
		}
	}
	if (pooled)
		*pooled = np;
	return n;
}

/* One side of the key; keep in sync with conn_key() in gates/socket/socket.bpf.c. */
static int
key_side(const struct sockaddr_storage *ss, __u8 *family, __u32 addr[4], __u16 *port)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

	memset(addr, 0, 16);
	if (ss->ss_family == AF_INET) {
		*family = AF_INET;
		memcpy(addr, &in->sin_addr, 4);
		*port = ntohs(in->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			*family = AF_INET;
			memcpy(addr, &in6->sin6_addr.s6_addr[12], 4);
		} else {
			*family = AF_INET6;
			memcpy(addr, &in6->sin6_addr, 16);
		}
		*port = ntohs(in6->sin6_port);
	} else {
		return -EAFNOSUPPORT;
	}
	return 0;
}

int
conntab_accepted_key(const struct sockaddr_storage *peer, const struct sockaddr_storage *local,
		     struct vsd_conn_key *k)
{
	__u8 f1, f2;
	int r;

	memset(k, 0, sizeof(*k));
	if ((r = key_side(peer, &f1, k->saddr, &k->sport)) < 0 ||
	    (r = key_side(local, &f2, k->daddr, &k->dport)) < 0)
		return r;
	if (f1 != f2)
		return -EAFNOSUPPORT;
	k->family = f1;
	k->dir = VSD_DIR_ACTIVE;	/* recorded by the side that connected */
	return 0;
}
