/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a member of vsd's --group may set on a VS's sockets, and so get for
 * its own processes by moving them there (vsd(8), SECURITY). SO_MARK and
 * SO_PRIORITY above 6 need CAP_NET_ADMIN; the TOS byte is one any process
 * may set on its own sockets, but vsd's is the one a remote host and vsd's
 * remote lines classify by (vsrules(5), REMOTE). So a member may set a mark
 * only in the range --group-marks names, a priority of 0 to 6, and no TOS;
 * root may set anything.
 */
#ifndef VSD_MEMBER_H
#define VSD_MEMBER_H

#include <stddef.h>
#include <sys/types.h>

#include "vsd.h"

#define MEMBER_PRIO_MAX	6	/* SO_PRIORITY above needs CAP_NET_ADMIN */

/* --group-marks LO-HI into d; -EINVAL/-ERANGE with *why. */
int member_marks_parse(struct vsd *d, const char *s, const char **why);

/*
 * 0 if uid may set what want sets beyond what old already had (old may be
 * NULL: a new VS), else -EPERM with why ("SO_MARK 0x5 ...").
 */
int member_gate_check(const struct vsd *d, uid_t uid, const struct gate_socket_cfg *want,
		      const struct gate_socket_cfg *old, char *why, size_t len);

struct buf;
struct rules;

/*
 * 0 if uid's rule file rs (at path) may replace the rules in force: only
 * if uid applied them (or none are), and rs keeps each mark and TOS of a
 * VS it names that uid could not set; else -EPERM, the reasons in
 * errs (vsd(8), SECURITY).
 */
int member_apply_check(const struct vsd *d, const struct rules *rs, uid_t owner, const char *path,
		       struct buf *errs);

#endif
