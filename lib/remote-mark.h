/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The packet marks vsd's remote lines set (vsrules(5) REMOTE): written by
 * vsd's nftables table (vsd/remote.c) on the SYN of a connection from
 * another host, carried into the accepted socket by tcp_fwmark_accept and
 * read back as SO_MARK by the accept gate (gates/accept/classify.c). The top
 * byte says "vsd", the other 24 bits are the VS's id (registry.c).
 */
#ifndef VSD_REMOTE_MARK_H
#define VSD_REMOTE_MARK_H

#include <stdint.h>

#define VSD_REMOTE_MARK		0x76000000u	/* 'v' */
#define VSD_REMOTE_MARK_MASK	0xff000000u
#define VSD_REMOTE_ID_MAX	0x00ffffffu

/* The VS id a mark names, 0 if it is not one of ours. */
static inline uint32_t
remote_mark_id(uint32_t mark)
{
	return (mark & VSD_REMOTE_MARK_MASK) == VSD_REMOTE_MARK ? mark & VSD_REMOTE_ID_MAX : 0;
}

#endif
