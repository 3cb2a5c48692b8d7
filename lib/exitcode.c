// SPDX-License-Identifier: GPL-2.0-or-later
/* Error classes: see exitcode.h. */
#include <errno.h>

#include "exitcode.h"

int
vx_from_errno(int r)
{
	switch (r < 0 ? -r : r) {
	case 0:
		return VX_OK;
	case EINVAL: case ERANGE: case EBADMSG: case EDOM: case E2BIG: case ENAMETOOLONG:
	case EILSEQ:
		return VX_BADVALUE;
	case ENOENT: case ESRCH: case ENXIO:
		return VX_NOTFOUND;
	case EEXIST: case ENOSPC: case EBUSY: case EOPNOTSUPP: case EALREADY: case ENOTEMPTY:
	case EADDRINUSE:
		return VX_CONFLICT;
	case EACCES: case EPERM:
		return VX_PERM;
	case ENOSYS:
		return VX_USAGE;
	case ECONNREFUSED: case ENOTSOCK:
		return VX_NODAEMON;
	default:
		return VX_INTERNAL;
	}
}

const char *
vx_name(int vx)
{
	static const char *const names[] = {
		[VX_OK] = "ok", [VX_INTERNAL] = "internal", [VX_USAGE] = "usage",
		[VX_NODAEMON] = "no-daemon", [VX_PERM] = "permission", [VX_NOTFOUND] = "not-found",
		[VX_CONFLICT] = "conflict", [VX_BADVALUE] = "bad-value",
	};

	return vx >= 0 && vx <= VX_MAX ? names[vx] : "internal";
}

int
vx_from_status(unsigned status)
{
	return status <= VX_MAX ? (int)status : VX_INTERNAL;
}
