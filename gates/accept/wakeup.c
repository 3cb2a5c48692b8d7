// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Keeping a non-blocking listener readable.
 *
 * The gate drains the kernel's accept queue into its own queues, so after it
 * hands one connection to an event-driven service the listener may no longer
 * be readable although connections wait in the gate. A service that accepts
 * one connection per readiness event (nginx without multi_accept, many
 * hand-written poll loops) would then sit until the next client came.
 *
 * So when a non-blocking accept leaves connections queued, the supervisor
 * opens one loopback connection to the listener itself (the wake-up connection): the kernel queue is
 * non-empty again, the service wakes and calls accept, and drain() recognises
 * it by its address and closes it. At most one wake-up connection per listener is
 * outstanding.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"
#include "lib/log.h"

void
wakeup_arm(struct gated_listener *l)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd;

	if (l->wakeup_fd >= 0 || getsockname(l->fd, (struct sockaddr *)&ss, &sl) < 0)
		return;
	/* a wildcard listener is reached over loopback */
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *in = (void *)&ss;

		if (in->sin_addr.s_addr == htonl(INADDR_ANY))
			in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (void *)&ss;

		if (IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr))
			in6->sin6_addr = in6addr_loopback;
	}
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
		return;
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0 && errno != EINPROGRESS) {
		close(fd);
		return;
	}
	l->wakeup_len = sizeof(l->wakeup_local);
	if (getsockname(fd, (struct sockaddr *)&l->wakeup_local, &l->wakeup_len) < 0) {
		close(fd);
		return;
	}
	l->wakeup_fd = fd;
}

int
wakeup_is_ours(struct gated_listener *l, const struct queued_conn *c)
{
	if (l->wakeup_fd < 0 || c->peerlen != l->wakeup_len ||
	    memcmp(&c->peer, &l->wakeup_local, c->peerlen) != 0)
		return 0;
	close(l->wakeup_fd);
	l->wakeup_fd = -1;
	return 1;
}
