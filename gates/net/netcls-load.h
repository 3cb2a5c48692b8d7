/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The network share classifier's loader (gates/net/netcls.bpf.c): one
 * program for every device, and its map, pinned as PINDIR/vsd_netcls so that
 * the filters an earlier vsd left on the devices and this vsd's program
 * share it.
 */
#ifndef VSD_NETCLS_LOAD_H
#define VSD_NETCLS_LOAD_H

#include <stdint.h>

struct netcls;

/* Load the program for VS cgroups at depth vs_level of cgroup2, adopting
 * the pinned map in pindir or pinning a new one. */
int netcls_open(const char *pindir, unsigned vs_level, struct netcls **out);
void netcls_close(struct netcls *n);
int netcls_prog_fd(const struct netcls *n);
int netcls_set(struct netcls *n, uint64_t cgid, int ifindex, uint16_t minor);
int netcls_del(struct netcls *n, uint64_t cgid, int ifindex);
/* Unpin the map (no VS has a network share any more). */
void netcls_unpin(struct netcls *n);

#endif
