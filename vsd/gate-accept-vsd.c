// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The VS table from vsd: one "gatetable" request over the control socket
 * (vsd/cmd-gate.c). vsd may be restarting or gone: then this fails within
 * GATE_VSD_TIMEOUT_MS and the gate keeps serving with its last table.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "gate-accept.h"
#include "log.h"
#include "proto.h"

/* A refresh runs in the supervisor's event loop: a hung vsd must not stall
 * accept() for long. */
#define GATE_VSD_TIMEOUT_MS	250

static int down;	/* log a lost vsd once, and its return once */

int
vstab_load_vsd(struct vstab *t, const char *sockpath)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { 0, GATE_VSD_TIMEOUT_MS * 1000 };
	struct buf req = { 0 }, body = { 0 };
	unsigned status = 0;
	int fd, r;

	if (strlen(sockpath) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, sockpath);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	proto_add(&req, "gatetable");
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		r = -errno;
	else if ((r = proto_send_request(fd, &req, -1)) == 0 &&
		 (r = proto_recv_reply(fd, &status, &body)) == 0 && status != 0)
		r = -EPROTO;
	close(fd);
	buf_free(&req);
	if (r == 0)
		r = vstab_parse(t, body.p);
	buf_free(&body);
	if (r < 0 && !down) {
		log_warnx("cannot reach vsd at %s (%s); serving with the last VS table", sockpath,
		    strerror(-r));
		down = 1;
	} else if (r == 0 && down) {
		log_info("vsd at %s is back", sockpath);
		down = 0;
	}
	return r;
}
