/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The exit statuses of vsctl and vsd, and the error class a vsd reply
 * carries in its status word (lib/proto.h): one list, so that a script can
 * tell "vsd is not running" from "no such VS" without reading messages.
 * Keep in sync with vsctl(8) and vsd(8), EXIT STATUS.
 *
 * A reply's status is 0 (done) or one of these classes; a vsd older than
 * this list sent 1 for every error, which still reads as "internal".
 */
#ifndef VSD_EXITCODE_H
#define VSD_EXITCODE_H

enum vx {
	VX_OK		= 0,
	VX_INTERNAL	= 1,	/* anything else: out of memory, a cgroup write failed */
	VX_USAGE	= 2,	/* bad command line: unknown command, option or key */
	VX_NODAEMON	= 3,	/* no vsd on the socket (missing, refused, not a socket) */
	VX_PERM		= 4,	/* permission denied: the socket, or what was asked */
	VX_NOTFOUND	= 5,	/* no such VS, process, service or file */
	VX_CONFLICT	= 6,	/* refused as things are: share over 100%, name exists, busy */
	VX_BADVALUE	= 7,	/* a value that does not parse or is out of range; rule file errors */
};
#define VX_MAX		VX_BADVALUE

/* The class of a -errno (or errno): EINVAL is a bad value, ENOENT not found... */
int vx_from_errno(int r);
/* Its name in JSON errors ("not-found"); "internal" for an unknown one. */
const char *vx_name(int vx);
/* A reply status as an exit status: 0, a class, or VX_INTERNAL for anything else. */
int vx_from_status(unsigned status);

#endif
