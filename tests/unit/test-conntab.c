// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The connection table from user space (gates/socket/conntab.c) on a real BPF array
 * of 8 slots: probing past collisions, wrapping around, a full window,
 * tombstones that must not hide the entries behind them, half-written
 * slots that must not be reported, and inserts, deletes and readers racing
 * on one probe window from several threads.  Needs root (BPF maps).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "gates/socket/conntab.h"
#include "tests/conntab-write.h"
#include "tap.h"

#define SLOTS	8

static void
key(struct vsd_conn_key *k, unsigned sport)
{
	memset(k, 0, sizeof(*k));
	k->family = 2;
	k->sport = sport;
	k->dport = 80;
	k->saddr[0] = k->daddr[0] = 0x0100007f;	/* 127.0.0.1 */
}

static unsigned
home(unsigned sport)
{
	struct vsd_conn_key k;

	key(&k, sport);
	return vsd_conn_hash(&k) & (SLOTS - 1);
}

/* n ports from lo on whose keys all have home slot h. */
static void
ports_at(unsigned h, unsigned lo, unsigned *out, int n)
{
	while (n > 0) {
		if (home(lo) == h) {
			*out++ = lo;
			n--;
		}
		lo++;
	}
}

static int
put(struct conntab *t, unsigned sport)
{
	struct vsd_conn_key k;
	struct vsd_conn_val v = { .vs_id = sport, .cgroup_id = sport * 3ull };

	key(&k, sport);
	return conntab_insert(t, &k, &v);
}

/* 1 if sport is recorded with the value put() gave it. */
static int
has(const struct conntab *t, unsigned sport)
{
	struct vsd_conn_key k;
	struct vsd_conn_val v;

	key(&k, sport);
	return conntab_lookup(t, &k, &v) == 0 && v.vs_id == sport && v.cgroup_id == sport * 3ull;
}

static int
del(struct conntab *t, unsigned sport)
{
	struct vsd_conn_key k;

	key(&k, sport);
	return conntab_delete(t, &k);
}

static int
count(const struct vsd_conn_key *k, const struct vsd_conn_val *v, void *arg)
{
	/* A torn copy would pair one entry's key with another's value. */
	if (v->vs_id != k->sport || v->cgroup_id != k->sport * 3ull)
		return -EBADMSG;
	++*(int *)arg;
	return 0;
}

static int
live(const struct conntab *t)
{
	int n = 0, r = conntab_walk(t, count, &n);

	return r ? r : n;
}

/* --- racing threads on one probe window */
struct racer {
	struct conntab *t;
	unsigned base;		/* this thread's ports: base .. base + 2 */
	long bad;		/* inconsistencies seen */
	long done;
};
static unsigned race_ports[6];
static volatile int stop;

static void *
writer(void *arg)
{
	struct racer *r = arg;
	int i;

	while (!stop) {
		for (i = 0; i < 3; i++)
			if (put(r->t, race_ports[r->base + i]) < 0)
				r->bad++;	/* 6 keys in 8 slots: never full */
		for (i = 0; i < 3; i++)
			if (!has(r->t, race_ports[r->base + i]))
				r->bad++;	/* our own entry vanished */
		for (i = 0; i < 3; i++)
			if (del(r->t, race_ports[r->base + i]) < 0)
				r->bad++;
		r->done++;
	}
	return NULL;
}

static void *
reader(void *arg)
{
	struct racer *r = arg;

	while (!stop) {
		int n = live(r->t);

		if (n < 0 || n > 6)
			r->bad++;
		r->done++;
	}
	return NULL;
}

int
main(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	struct conntab t;
	unsigned p[10], w[2], i;
	struct vsd_conn_key k;
	struct vsd_conn_val v;
	int fd, hfd;

	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root to create BPF maps\n");
		return 77;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "test_conns", 4, sizeof(struct vsd_conn_slot),
			    SLOTS, &opts);
	ok(fd >= 0, "an mmapable array of 8 slots");
	if (fd < 0)
		return tap_done();
	ok(conntab_map(&t, fd, 1) == 0 && t.mask == SLOTS - 1, "mapped, 8 slots");

	/* Three keys with one home slot: the 2nd and 3rd probe on. */
	ports_at(3, 1000, p, 3);
	ok(put(&t, p[0]) == 0 && put(&t, p[1]) == 0 && put(&t, p[2]) == 0,
	   "three colliding keys inserted");
	ok(has(&t, p[0]) && has(&t, p[1]) && has(&t, p[2]), "all three found");
	key(&k, p[2]);
	ok(vsd_conn_key_eq(&t.slot[5].key, &k), "the third sits two slots past its home");
	ok(live(&t) == 3, "a walk sees three");

	/* Deleting the one at home must not hide the two behind it. */
	ok(del(&t, p[0]) == 0, "delete the first");
	ok(!has(&t, p[0]) && has(&t, p[1]) && has(&t, p[2]),
	   "the others are still found past its tombstone");
	ok(VSD_SLOT_STATE(t.slot[3].seq) == VSD_SLOT_DEAD, "its slot is a tombstone");
	ok(del(&t, p[0]) == -ENOENT, "a second delete finds nothing");
	ok(del(&t, p[1]) == 0 && has(&t, p[2]) && !has(&t, p[1]), "delete the second, the third stays");

	/* A new key takes the first tombstone of its window. */
	ports_at(3, p[2] + 1, &p[3], 1);
	ok(put(&t, p[3]) == 0 && has(&t, p[3]), "a new colliding key inserted");
	key(&k, p[3]);
	ok(vsd_conn_key_eq(&t.slot[3].key, &k), "... into the first free slot, its home");

	/* Wrapping around the end of the table. */
	ports_at(7, 2000, w, 2);
	ok(put(&t, w[0]) == 0 && put(&t, w[1]) == 0, "two keys with home 7 inserted");
	key(&k, w[1]);
	ok(vsd_conn_key_eq(&t.slot[0].key, &k) && has(&t, w[1]), "the second wrapped to slot 0");

	/* A half-written slot is not reported. */
	i = t.slot[0].seq;
	t.slot[0].seq = (i & ~3u) | VSD_SLOT_BUSY;
	ok(!has(&t, w[1]) && live(&t) == 3, "a BUSY slot is neither found nor walked");
	t.slot[0].seq = i;
	ok(has(&t, w[1]) && live(&t) == 4, "... and is once it is LIVE again");

	/* Drop by VS (what vsd does on detach). */
	ok(conntab_drop_vs(&t, w[0], NULL) == 1 && !has(&t, w[0]) && has(&t, w[1]),
	   "drop one VS's entries, not the others'");

	/* Full: 8 slots, every window is the whole table. */
	for (i = 0; i < 10; i++)
		p[i] = 3000 + i;
	for (i = 0; i < 10 && put(&t, p[i]) == 0; i++)
		;
	ok(i == 5 && live(&t) == SLOTS, "the table takes 5 more, then it is full (%u)", i);
	ok(put(&t, 4000) == -ENOSPC, "an insert into a full table fails with ENOSPC");
	key(&k, 4000);
	ok(conntab_lookup(&t, &k, &v) == -ENOENT, "a lookup in a full table ends");
	for (i = 0; i <= t.mask; i++)
		if (VSD_SLOT_STATE(t.slot[i].seq) == VSD_SLOT_LIVE)
			t.slot[i].seq++;	/* LIVE -> DEAD: an empty table of tombstones */
	ok(live(&t) == 0 && put(&t, 4000) == 0 && live(&t) == 1,
	   "a table of tombstones takes inserts again");
	del(&t, 4000);

	/*
	 * Dropping a VS counts the entries that took from the shared pool
	 * (vsd gives them back): flags as the BPF side records them.
	 */
	{
		static const uint32_t fl[4] = { 0, VSD_CONN_COUNTED,
			VSD_CONN_COUNTED | VSD_CONN_POOL, VSD_CONN_COUNTED | VSD_CONN_POOL };
		uint32_t pooled = 99;

		for (i = 0; i < 4; i++) {
			v = (struct vsd_conn_val){ .vs_id = 77, .flags = fl[i] };
			key(&k, 6000 + i);
			conntab_insert(&t, &k, &v);
		}
		ok(conntab_drop_vs(&t, 77, &pooled) == 4 && pooled == 2 && live(&t) == 0,
		   "dropping a VS's 4 entries counts the 2 from the pool (%u)", pooled);
	}

	/*
	 * Racing: two writers insert, find and delete three keys each, all of
	 * one home slot, while two readers walk; nobody may see a torn slot,
	 * lose its own entry or find the window full.
	 */
	{
		struct racer r[4];
		pthread_t th[4];
		long bad = 0, wdone = 0;

		ports_at(5, 5000, race_ports, 6);
		stop = 0;
		for (i = 0; i < 4; i++) {
			r[i] = (struct racer){ .t = &t, .base = i < 2 ? i * 3 : 0 };
			pthread_create(&th[i], NULL, i < 2 ? writer : reader, &r[i]);
		}
		usleep(300000);
		stop = 1;
		for (i = 0; i < 4; i++) {
			pthread_join(th[i], NULL);
			bad += r[i].bad;
			if (i < 2)
				wdone += r[i].done;
		}
		ok(bad == 0 && wdone > 100, "racing inserts, deletes and walks: %ld rounds, "
		   "%ld inconsistencies", wdone, bad);
		ok(live(&t) == 0, "the racers left the table empty");
	}

	/* Only a table of this layout is mapped. */
	hfd = bpf_map_create(BPF_MAP_TYPE_HASH, "test_hash", sizeof(struct vsd_conn_key),
			     sizeof(struct vsd_conn_val), 16, NULL);
	{
		struct conntab h;

		ok(hfd >= 0 && conntab_map(&h, hfd, 0) == -EINVAL,
		   "an older vsd's hash map is refused (EINVAL)");
	}
	conntab_unmap(&t);
	close(hfd);
	close(fd);
	return tap_done();
}
