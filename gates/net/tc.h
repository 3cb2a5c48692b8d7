/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Traffic control over rtnetlink (libmnl): the HTB qdisc, classes and the
 * cls_bpf filter that carry the VSs' network shares (vsd/netshare.c).
 * Rates are in bytes per second, as the kernel takes them. Each call opens
 * its own NETLINK_ROUTE socket in the caller's network namespace, waits for
 * the kernel's answer and returns 0 or -errno; the kernel's own message
 * (extended ack), if any, is logged.
 */
#ifndef VSD_TC_H
#define VSD_TC_H

#include <stdint.h>

#define TC_HANDLE(maj, min)	(((uint32_t)(maj) << 16) | (uint16_t)(min))

/* The device's root qdisc: its handle and kind ("htb", "noqueue", ...). */
int tc_root_qdisc(int ifindex, uint32_t *handle, char *kind, size_t len);
/* Make (or, with replace, put in place of the current root qdisc) an HTB root
 * qdisc with handle, whose unclassified traffic goes to class defminor. */
int tc_htb_qdisc(int ifindex, uint32_t handle, uint16_t defminor, int replace);
/* Delete the root qdisc if its handle is handle; the kernel puts its default back. */
int tc_qdisc_del(int ifindex, uint32_t handle);
/* Make or change an HTB class: guaranteed rate, ceiling, quantum in bytes
 * (how borrowed bandwidth is split between siblings). */
int tc_htb_class(int ifindex, uint32_t parent, uint32_t classid, uint64_t rate,
		 uint64_t ceil, uint32_t quantum);
int tc_class_del(int ifindex, uint32_t classid);
/* Put fq_codel (its defaults) under a leaf class instead of the default
 * pfifo, whose 1000 packets are seconds of delay at a few Mbit/s; where
 * the kernel has no fq_codel, a bfifo of limit bytes. */
int tc_leaf_queue(int ifindex, uint32_t classid, uint32_t limit);
/* Attach (or replace) the direct-action BPF filter prog_fd on qdisc handle,
 * at preference 1; it classifies into handle's major | skb->tc_classid. */
int tc_bpf_filter(int ifindex, uint32_t handle, int prog_fd, const char *name);

#endif
