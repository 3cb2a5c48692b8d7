// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The seccomp answers: an error or a result (NOTIF_SEND), CONTINUE (the
 * kernel runs the call as the service made it), and whether a notification
 * is still pending. ENOENT from the kernel means the caller was interrupted
 * or died meanwhile: normal, never logged.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <linux/seccomp.h>

#include "gate.h"
#include "lib/log.h"

static struct seccomp_notif_resp *resp;

void
gate_answer_init(struct seccomp_notif_resp *r)
{
	resp = r;
}

void
gate_respond(struct gate *g, uint64_t id, int error, uint32_t flags)
{
	resp->id = id;
	resp->val = 0;
	resp->error = error;
	resp->flags = flags;
	/* ENOENT: the caller was interrupted or died meanwhile; that is normal */
	if (ioctl(g->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT)
		log_warn("%s: SECCOMP_IOCTL_NOTIF_SEND", __func__);
}

int
gate_continue(struct gate *g, uint64_t id)
{
	resp->id = id;
	resp->val = 0;
	resp->error = 0;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	if (ioctl(g->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0)
		return -errno;
	return 0;
}

void
gate_let_through(struct gate *g, uint64_t id)
{
	g->passed++;
	gate_respond(g, id, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

int
gate_id_valid(struct gate *g, uint64_t id)
{
	return ioctl(g->notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}
