// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The VS table and the rules, pushed to every accept-gate supervisor: each
 * status socket in <run dir>/gates/ (those vsd started for a rule file's
 * services and those started by hand with `vsctl run`) gets
 *   push TLEN RLEN\n<"gatetable" text><"gaterules" text>
 * and answers "ok" once the table is in force (gates/accept/vs-table-vsd.c).
 * vsd pushes after every change that reaches the table or the rules, before
 * it answers the command that made it: once the command has returned, no
 * gate decides by the old ones, and a connection of a VS a gate does not
 * know is one of a VS that is gone. A gate that does not answer within
 * PUSH_TIMEOUT_MS is logged and named in the reply; it applies the table
 * when it reads it, and vsd goes on.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "lib/log.h"
#include "services.h"
#include "vsd.h"

#define PUSH_TIMEOUT_MS	1000

/* 0: the gate has the table in force; -errno, or -EPROTO for its refusal. */
static int
push_one(const struct vsd *d, const char *name, const struct buf *msg)
{
	struct timeval tv = { 0, PUSH_TIMEOUT_MS * 1000 };
	char ack[128];
	size_t off = 0;
	ssize_t n;
	int fd, r = 0;

	if ((fd = svc_status_connect(d, name)) < 0)
		return fd;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (off < msg->len && r == 0) {
		if ((n = send(fd, msg->p + off, msg->len - off, MSG_NOSIGNAL)) > 0)
			off += (size_t)n;
		else if (n < 0 && errno != EINTR)
			r = -errno;
	}
	if (r == 0 && (n = recv(fd, ack, sizeof(ack) - 1, 0)) <= 0)
		r = n < 0 ? -errno : -EPIPE;
	else if (r == 0 && strncmp(ack, "ok\n", 3) != 0)
		r = -EPROTO;
	close(fd);
	return r;
}

void
gate_push_all(struct vsd *d, struct buf *warn)
{
	char dir[PATH_MAX], name[VS_NAME_MAX + 8];
	struct reply tab = { 0 };
	struct buf msg = { 0 };
	struct dirent *de;
	DIR *dp;
	int r;

	if (svc_status_path(d, NULL, dir, sizeof(dir)) < 0 || !(dp = opendir(dir)))
		return;		/* no gate has ever run */
	cmd_gatetable(d, NULL, &tab);
	buf_printf(&msg, "push %zu %zu\n", tab.out.len, d->gate_text.len);
	buf_add(&msg, tab.out.p ? tab.out.p : "", tab.out.len);
	buf_add(&msg, d->gate_text.p ? d->gate_text.p : "", d->gate_text.len);
	while (!msg.oom && !tab.out.oom && (de = readdir(dp))) {
		size_t l = strlen(de->d_name);

		if (l < 6 || l - 5 > VS_NAME_MAX || strcmp(de->d_name + l - 5, ".sock") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(l - 5), de->d_name);
		if (!vs_name_valid(name))
			continue;
		/* a socket nobody listens on: a gate that has ended */
		if ((r = push_one(d, name, &msg)) == 0 || r == -ECONNREFUSED || r == -ENOENT)
			continue;
		log_warnx("gate %s did not take the new VS table and rules: %s", name,
			  r == -EAGAIN ? "no answer within 1 s" : strerror(-r));
		if (warn)
			buf_printf(warn, "warning: gate %s did not acknowledge the new VS table "
				   "and rules (%s); it may decide by the old ones until it reads "
				   "them\n", name, r == -EAGAIN ? "no answer within 1 s" :
				   strerror(-r));
	}
	if (msg.oom || tab.out.oom)
		log_warnx("out of memory: the gates keep their VS table");
	closedir(dp);
	buf_free(&msg);
	buf_free(&tab.out);
}
