// SPDX-License-Identifier: GPL-2.0-or-later
/* The control socket: who may talk to vsd, and which handler answers. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/log.h"
#include "apply.h"
#include "vsd.h"

/*
 * What each command takes: the keys (every other key is refused, so a typo or
 * a client newer than vsd is told, not ignored), those that may repeat, and
 * the word messages use (the vsctl command a user typed).
 */
#define LIMIT_KEYS	"name cpu cpu-max mem pids tos dscp mark priority json"
static const struct {
	const char *name;
	cmd_fn fn;
	const char *keys, *repeat, *shown;
} cmds[] = {
	{ "create", cmd_create, LIMIT_KEYS, "", NULL },
	{ "set", cmd_set, LIMIT_KEYS, "", NULL },
	{ "destroy", cmd_destroy, "name force json", "", NULL },
	{ "list", cmd_list, "json", "", NULL },
	{ "show", cmd_show, "name json", "", NULL },
	{ "attach", cmd_attach, "name pid json", "pid", NULL },
	{ "exec-self", cmd_exec_self, "name json", "", "exec" },
	{ "conns", cmd_conns, "name json", "", NULL },
	{ "gatetable", cmd_gatetable, "json", "", NULL },
	{ "gaterules", cmd_gaterules, "json", "", NULL },
	{ "apply", cmd_apply, "path prune dry-run json", "", NULL },
	{ "reload", cmd_reload, "prune dry-run json", "", NULL },
	{ "service", cmd_service, "action name json", "", NULL },
};

int
reply_err(struct reply *rep, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep->err, sizeof(rep->err), fmt, ap);
	va_end(ap);
	return r < 0 ? r : -EINVAL;
}

int
control_listen(const char *path, gid_t group)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, probe;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_warnx("socket path %s is too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	/* A socket file nobody answers on is stale; one that answers is another vsd. */
	if ((probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (connect(probe, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
		close(probe);
		log_warnx("%s: another vsd is listening there", path);
		return -EADDRINUSE;
	}
	close(probe);
	unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return -errno;
	old = umask(0177);	/* never a moment with a wider mode than 0600 */
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		umask(old);
		log_warn("bind %s", path);
		goto fail;
	}
	umask(old);
	if (group != (gid_t)-1 && (chown(path, 0, group) < 0 || chmod(path, 0660) < 0)) {
		log_warn("chown/chmod %s", path);
		goto fail;
	}
	if (listen(fd, 64) < 0)
		goto fail;
	return fd;
fail:
	close(fd);
	return -errno;
}

static int
peer_allowed(int fd, gid_t group, struct ucred *cr)
{
	socklen_t len = sizeof(*cr);
	gid_t groups[256];
	size_t i;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cr, &len) < 0)
		return 0;
	if (cr->uid == 0)
		return 1;
	if (group == (gid_t)-1)
		return 0;
	if (cr->gid == group)
		return 1;
	len = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)	/* Linux 4.13 */
		return 0;
	for (i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == group)
			return 1;
	return 0;
}

static void
send_error(int fd, int json, const char *msg)
{
	struct buf b = { 0 };

	if (json) {
		buf_printf(&b, "{\"error\": ");
		buf_json_str(&b, msg);
		buf_printf(&b, "}\n");
	} else {
		buf_printf(&b, "%s\n", msg);
	}
	proto_send_reply(fd, 1, b.p ? b.p : "", b.len);
	buf_free(&b);
}

static void
dispatch(struct vsd *d, int fd, struct request *req, const struct ucred *cr)
{
	struct reply rep = { .json = req_flag(req, "json"), .peer_pid = cr->pid,
			     .peer_uid = cr->uid, .cmd = req->argv[0] };
	const char *why;
	size_t i;
	int r = -ENOSYS;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (strcmp(req->argv[0], cmds[i].name) != 0)
			continue;
		if (cmds[i].shown)
			rep.cmd = cmds[i].shown;
		if ((r = proto_check_keys(req, cmds[i].keys, cmds[i].repeat, &why)) < 0)
			reply_err(&rep, r, "%s: %s", rep.cmd, why);
		else
			r = cmds[i].fn(d, req, &rep);
		break;
	}
	if (i == ARRAY_SIZE(cmds))
		reply_err(&rep, -ENOSYS, "unknown command '%.64s'", req->argv[0]);
	if (r < 0) {
		if (!rep.err[0] && rep.out.len && !rep.out.oom) {
			/* a handler with more to say than one line (apply's check errors) */
			send_error(fd, rep.json, rep.out.p);
			buf_free(&rep.out);
			return;
		}
		if (!rep.err[0])
			snprintf(rep.err, sizeof(rep.err), "%s: %s", rep.cmd, strerror(-r));
		send_error(fd, rep.json, rep.err);
	} else if (rep.out.oom) {
		send_error(fd, rep.json, "out of memory");
	} else {
		proto_send_reply(fd, 0, rep.out.p ? rep.out.p : "", rep.out.len);
	}
	buf_free(&rep.out);
}

void
control_serve(struct vsd *d, int lfd)
{
	struct timeval tv = { .tv_sec = 2 };
	struct request req;
	struct ucred cr;
	const char *why;
	int fd, r;

	if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
		return;
	/* One slow client must not hold the daemon for long. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (!peer_allowed(fd, d->group, &cr)) {
		log_warnx("refused a client with uid %u", (unsigned)cr.uid);
		send_error(fd, 0, "permission denied: only root may talk to vsd");
		close(fd);
		return;
	}
	r = proto_recv_request(fd, &req, &why);
	if (r == -EBADMSG) {
		log_debug("malformed request from pid %d: %s", (int)cr.pid, why);
		send_error(fd, 0, why);
	} else if (r == 0) {
		log_debug("request '%s' from pid %d", req.argv[0], (int)cr.pid);
		dispatch(d, fd, &req, &cr);
	}
	proto_request_free(&req);
	close(fd);
}
