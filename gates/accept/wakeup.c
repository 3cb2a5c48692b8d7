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
 *
 * A Unix listener is reached at its own name (a path or an abstract name).
 * Unix clients usually have no address, so ours takes one: an autobound
 * abstract name, unique in the network namespace, which accept() reports as
 * the peer address; that is how drain() recognises it. A listener bound to a
 * relative path is not reached (the path means the service's working
 * directory, not ours), nor one whose file we may not write (a --user
 * service's socket: the supervisor keeps no CAP_DAC_OVERRIDE); an event loop
 * there waits for its next client as it would for any.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "gate.h"
#include "lib/log.h"

/* Our wake-up socket gets an abstract name; the listener's must be reachable. */
static int
unix_name(int fd, const struct sockaddr_storage *listener, socklen_t sl)
{
	const struct sockaddr_un *sun = (const void *)listener;
	struct sockaddr_un self = { .sun_family = AF_UNIX };

	if (sl <= offsetof(struct sockaddr_un, sun_path) ||
	    (sun->sun_path[0] != '\0' && sun->sun_path[0] != '/'))
		return -1;
	/* only the family: autobind (Linux 2.2+) */
	return bind(fd, (struct sockaddr *)&self, sizeof(sa_family_t));
}

int
listener_reach(const struct gated_listener *l, struct sockaddr_storage *ss, socklen_t *sl)
{
	*sl = sizeof(*ss);
	if (getsockname(l->fd, (struct sockaddr *)ss, sl) < 0)
		return -1;
	/* a wildcard listener is reached over loopback */
	if (ss->ss_family == AF_INET) {
		struct sockaddr_in *in = (void *)ss;

		if (in->sin_addr.s_addr == htonl(INADDR_ANY))
			in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	} else if (ss->ss_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (void *)ss;

		if (IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr))
			in6->sin6_addr = in6addr_loopback;
	}
	return 0;
}

void
wakeup_arm(struct gated_listener *l)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd;

	if (l->wakeup_fd >= 0 || listener_reach(l, &ss, &sl) < 0)
		return;
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
		return;
	if (ss.ss_family == AF_UNIX && unix_name(fd, &ss, sl) < 0) {
		close(fd);
		return;
	}
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
