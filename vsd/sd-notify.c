// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The service manager's readiness protocol (sd_notify(3)), without
 * libsystemd: one datagram to the AF_UNIX socket named by $NOTIFY_SOCKET
 * ("@name" for the abstract namespace). vsd's unit is Type=notify, so
 * "systemctl start vsd" returns once every VS has been adopted.
 * Outside systemd the variable is unset and this does nothing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/log.h"
#include "sd-notify.h"

int
sd_notifyf(const char *fmt, ...)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const char *path = getenv("NOTIFY_SOCKET");
	char msg[512];
	socklen_t len;
	va_list ap;
	size_t n;
	int fd, r = 0;

	if (!path || !*path)
		return 0;
	n = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sun.sun_path)) {
		log_warnx("%s: NOTIFY_SOCKET=%s is not a socket path", __func__, path);
		return -EINVAL;
	}
	memcpy(sun.sun_path, path, n);
	if (path[0] == '@')
		sun.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sun, len) < 0) {
		r = -errno;
		log_warn("%s: send to %s", __func__, path);
	}
	close(fd);
	return r;
}
