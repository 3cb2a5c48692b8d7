/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The network share classifier's map, seen by gates/net/netcls.bpf.c and by
 * user space (gates/net/netcls.c): keep the two in sync.
 *
 * Key: the VS's cgroup2 id (the inode of its directory) and the device's
 * ifindex; value: the minor number of the VS's HTB class on that device.
 */
#ifndef VSD_NETCLS_H
#define VSD_NETCLS_H

#define VSD_MAP_NETCLS	"vsd_netcls"
#define NETCLS_MAX	65536

struct netcls_key {
	__u64 cgid;
	__u32 ifindex;
	__u32 pad;	/* zero: the key is hashed as bytes */
};

#endif
