// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Test helper for the socket gate's connection table (gates/socket/socket.h):
 *
 *   conntab-ctl create PATH SLOTS         make and pin an empty table of
 *                                      SLOTS slots (the accept-gate tests
 *                                      classify with a table of their own)
 *   conntab-ctl put PATH SPORT DPORT VS [N]
 *                                      record 127.0.0.1:SPORT+i ->
 *                                      127.0.0.1:DPORT for VS, i < N, as
 *                                      the socket gate does for a VS's
 *                                      connecting side
 *   conntab-ctl collide SLOTS ADDR DPORT N LO
 *                                      print N source ports from LO on whose
 *                                      keys ADDR:port -> ADDR:DPORT (IPv4,
 *                                      connecting side) share one home slot
 *                                      in a table of SLOTS slots
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "gates/socket/conntab.h"
#include "tests/conntab-write.h"
#include "gates/socket/socket.h"

static void
key4(struct vsd_conn_key *k, const char *addr, unsigned sport, unsigned dport)
{
	memset(k, 0, sizeof(*k));
	k->family = AF_INET;
	k->dir = VSD_DIR_ACTIVE;
	k->sport = sport;
	k->dport = dport;
	if (inet_pton(AF_INET, addr, &k->saddr[0]) != 1) {
		fprintf(stderr, "conntab-ctl: bad IPv4 address %s\n", addr);
		exit(2);
	}
	k->daddr[0] = k->saddr[0];
}

static int
create(const char *path, unsigned slots)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, VSD_MAP_CONNS, sizeof(__u32),
				sizeof(struct vsd_conn_slot), slots, &opts);

	if (fd < 0 || bpf_obj_pin(fd, path) < 0) {
		fprintf(stderr, "conntab-ctl: create %s: %s\n", path, strerror(errno));
		return 1;
	}
	close(fd);
	return 0;
}

static int
put(const char *path, unsigned sport, unsigned dport, unsigned vs, unsigned n)
{
	struct vsd_conn_val v = { .vs_id = vs };
	struct vsd_conn_key k;
	struct conntab t;
	unsigned i;
	int fd, r;

	if ((fd = bpf_obj_get(path)) < 0) {
		fprintf(stderr, "conntab-ctl: %s: %s\n", path, strerror(errno));
		return 1;
	}
	r = conntab_map(&t, fd, 1);
	close(fd);
	if (r < 0) {
		fprintf(stderr, "conntab-ctl: %s: %s\n", path, strerror(-r));
		return 1;
	}
	for (i = 0; i < n; i++) {
		key4(&k, "127.0.0.1", sport + i, dport);
		if ((r = conntab_insert(&t, &k, &v)) < 0) {
			fprintf(stderr, "conntab-ctl: put port %u: %s\n", sport + i, strerror(-r));
			return 1;
		}
	}
	conntab_unmap(&t);
	return 0;
}

static int
collide(unsigned slots, const char *addr, unsigned dport, unsigned n, unsigned lo)
{
	struct vsd_conn_key k;
	unsigned p, home = 0, found = 0;

	for (p = lo; p < 65536 && found < n; p++) {
		key4(&k, addr, p, dport);
		if (found && (vsd_conn_hash(&k) & (slots - 1)) != home)
			continue;
		home = vsd_conn_hash(&k) & (slots - 1);
		printf("%s%u", found++ ? " " : "", p);
	}
	printf("\n");
	return found < n;
}

int
main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "create"))
		return create(argv[2], atoi(argv[3]));
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "put"))
		return put(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]),
			   argc == 7 ? atoi(argv[6]) : 1);
	if (argc == 7 && !strcmp(argv[1], "collide"))
		return collide(atoi(argv[2]), argv[3], atoi(argv[4]), atoi(argv[5]),
			       atoi(argv[6]));
	fprintf(stderr, "usage: conntab-ctl create PATH SLOTS | put PATH SPORT DPORT VS [N] |"
		" collide SLOTS ADDR DPORT N LO\n");
	return 2;
}
