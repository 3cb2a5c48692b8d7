// SPDX-License-Identifier: GPL-2.0-or-later
/* What a member of --group may set on a VS's sockets: see member.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/remote-mark.h"
#include "member.h"

int
member_marks_parse(struct vsd *d, const char *s, const char **why)
{
	char lo[32], *dash;
	uint32_t a, b;
	int r;

	*why = "is not a range LO-HI of marks";
	if (!(dash = strchr(s, '-')) || (size_t)(dash - s) >= sizeof(lo))
		return -EINVAL;
	memcpy(lo, s, (size_t)(dash - s));
	lo[dash - s] = '\0';
	if ((r = parse_mark(lo, &a, why)) < 0 || (r = parse_mark(dash + 1, &b, why)) < 0)
		return r;
	if (a == 0 || a > b) {
		*why = "is not a range LO-HI with 0 < LO <= HI";
		return -EINVAL;
	}
	/* those mark a connection as one of a VS's to the accept gate */
	if (a <= (VSD_REMOTE_MARK | VSD_REMOTE_ID_MAX) && b >= VSD_REMOTE_MARK) {
		*why = "overlaps the marks of vsd's remote lines, 0x76000000-0x76ffffff";
		return -ERANGE;
	}
	d->group_mark_lo = a;
	d->group_mark_hi = b;
	*why = NULL;
	return 0;
}

/* 1 if want sets field flag to something old did not have. */
static int
changed(const struct gate_socket_cfg *want, const struct gate_socket_cfg *old, unsigned flag,
	uint32_t wv, uint32_t ov)
{
	return (want->flags & flag) && !(old && (old->flags & flag) && wv == ov);
}

int
member_gate_check(const struct vsd *d, uid_t uid, const struct gate_socket_cfg *want,
		  const struct gate_socket_cfg *old, char *why, size_t len)
{
	if (uid == 0)
		return 0;
	if (changed(want, old, VSD_CFG_MARK, want->mark, old ? old->mark : 0) &&
	    (!d->group_mark_hi || want->mark < d->group_mark_lo || want->mark > d->group_mark_hi)) {
		if (d->group_mark_hi)
			snprintf(why, len, "SO_MARK 0x%x is outside --group-marks 0x%x-0x%x, the "
				 "marks vsd's group may set", want->mark, d->group_mark_lo,
				 d->group_mark_hi);
		else
			snprintf(why, len, "SO_MARK 0x%x needs root: a mark is a CAP_NET_ADMIN "
				 "power, and vsd gives its group none (vsd --group-marks)", want->mark);
		return -EPERM;
	}
	if (changed(want, old, VSD_CFG_PRIO, want->priority, old ? old->priority : 0) &&
	    want->priority > MEMBER_PRIO_MAX) {
		snprintf(why, len, "SO_PRIORITY %u needs root: above %d it is a CAP_NET_ADMIN "
			 "power", want->priority, MEMBER_PRIO_MAX);
		return -EPERM;
	}
	if (changed(want, old, VSD_CFG_TOS, want->tos, old ? old->tos : 0)) {
		snprintf(why, len, "TOS 0x%02x needs root: a VS's DSCP names it to remote hosts "
			 "and vsd's remote lines", want->tos);
		return -EPERM;
	}
	return 0;
}
