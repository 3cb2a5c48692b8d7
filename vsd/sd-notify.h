/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef VSD_SD_NOTIFY_H
#define VSD_SD_NOTIFY_H

/* Send one sd_notify(3) message ("READY=1\nSTATUS=..."); 0 when there is
 * no service manager to tell, -errno on failure (logged). */
int sd_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
