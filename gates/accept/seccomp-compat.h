/* SPDX-License-Identifier: GPL-2.0-or-later */
/* seccomp user-notification constants newer than Debian 12's headers. */
#ifndef VSD_SECCOMP_COMPAT_H
#define VSD_SECCOMP_COMPAT_H

#include <linux/seccomp.h>

/* Linux 6.6 */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS	SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP	(1UL << 0)
#endif

#endif
