// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the supervisor asks vsd, over its control socket: the VS table
 * ("gatetable") at start and on "refresh", and the rules it applied
 * ("gaterules", decide.c). Never on the accept path: vsd pushes every
 * change (vs-table-vsd.c). vsd may be restarting or gone: then a call
 * fails within GATE_VSD_TIMEOUT_MS, and vsd pushes once it is back.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "gate.h"
#include "lib/buf.h"
#include "lib/log.h"
#include "lib/proto.h"

/* A refresh runs in the supervisor's event loop: a hung vsd must not stall
 * accept() for long. */
#define GATE_VSD_TIMEOUT_MS	250

static int down;	/* log a lost vsd once, and its return once */

int
vsd_call(const char *sockpath, const char *cmd, struct buf *body)
{
	struct buf req = { 0 };
	unsigned status;
	int r;

	proto_add(&req, cmd);
	if ((r = proto_call(sockpath, &req, -1, &status, body, GATE_VSD_TIMEOUT_MS)) == 0 &&
	    status != 0)
		r = -EPROTO;
	buf_free(&req);
	return r;
}

int
vs_table_load_vsd(struct vs_table *t, const char *sockpath)
{
	struct buf body = { 0 };
	int r;

	if ((r = vsd_call(sockpath, "gatetable", &body)) == 0)
		r = vs_table_parse(t, body.p);
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
