// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control socket: who may talk to vsd, and which handler answers a
 * request (clients.c serves the connections).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "lib/log.h"
#include "lib/usock.h"
#include "apply.h"
#include "vsd.h"

/*
 * What each command takes: the keys (every other key is refused, so a typo or
 * a client newer than vsd is told, not ignored), those that may repeat, and
 * the word messages use (the vsctl command a user typed). change: the
 * command may change something; vsd logs who asked, and how it went.
 */
#define LIMIT_KEYS	"name cpu cpu-max mem pids tos dscp mark priority net-share net-max dev dev-rate json"
static const struct {
	const char *name;
	cmd_fn fn;
	const char *keys, *repeat, *shown;
	int change;
} cmds[] = {
	{ "create", cmd_create, LIMIT_KEYS, "", NULL, 1 },
	{ "set", cmd_set, LIMIT_KEYS, "", NULL, 1 },
	{ "destroy", cmd_destroy, "name force json", "", NULL, 1 },
	{ "list", cmd_list, "json", "", NULL, 0 },
	{ "show", cmd_show, "name json", "", NULL, 0 },
	{ "attach", cmd_attach, "name pid json", "pid", NULL, 1 },
	{ "exec-self", cmd_exec_self, "name json", "", "exec", 1 },
	{ "conns", cmd_conns, "name json", "", NULL, 0 },
	{ "gatetable", cmd_gatetable, "json", "", NULL, 0 },
	{ "stats", cmd_stats, "json", "", NULL, 0 },
	{ "metrics", cmd_metrics, "", "", NULL, 0 },
	{ "gaterules", cmd_gaterules, "json", "", NULL, 0 },
	{ "apply", cmd_apply, "path prune dry-run json", "", NULL, 1 },
	{ "reload", cmd_reload, "prune dry-run json", "", NULL, 1 },
	{ "service", cmd_service, "action name json", "", NULL, 1 },
};

/* "destroy name=www1 force=1 by uid 1000 (pid 4242): done" (or why not) */
static void
log_change(const struct request *req, const struct ucred *cr, int r, const struct reply *rep)
{
	struct buf b = { 0 };
	int i;

	buf_printf(&b, "%s", rep->cmd ? rep->cmd : req->argv[0]);
	for (i = 1; i < req->argc && b.len < 400; i++)
		if (strcmp(req->argv[i], "json=1") != 0)
			buf_printf(&b, " %.100s", req->argv[i]);
	if (r < 0)
		log_info("%s by uid %u (pid %d): refused: %.200s", b.p, (unsigned)cr->uid,
			 (int)cr->pid, rep->err[0] ? rep->err : strerror(-r));
	else
		log_info("%s by uid %u (pid %d): done", b.p, (unsigned)cr->uid, (int)cr->pid);
	buf_free(&b);
}

int
reply_err(struct reply *rep, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep->err, sizeof(rep->err), fmt, ap);
	va_end(ap);
	r = r < 0 ? r : -EINVAL;
	/* the first error decides; a handler may have set a sharper class */
	if (!rep->vx)
		rep->vx = vx_from_errno(r);
	return r;
}

int
control_listen(const char *path, gid_t group)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int probe;

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
	return usock_listen(path, group, 64);
}

void
control_error(struct buf *out, int json, int vx, const char *msg)
{
	struct buf b = { 0 };

	if (vx <= VX_OK || vx > VX_MAX)
		vx = VX_INTERNAL;
	if (json) {
		/* the same object vsctl writes for its own errors (vsctl/out.c); a
		 * longer report (apply's check errors) is its first line, then
		 * "errors", one string per line */
		const char *nl = strchr(msg, '\n');
		struct buf first = { 0 };

		buf_add(&first, msg, nl ? (size_t)(nl - msg) : strlen(msg));
		buf_printf(&b, "{\"error\": ");
		buf_json_str(&b, first.p);
		buf_free(&first);
		buf_printf(&b, ", \"class\": \"%s\", \"exit\": %d", vx_name(vx), vx);
		if (nl && nl[1]) {
			buf_printf(&b, ", \"errors\": ");
			buf_json_lines(&b, nl + 1);
		}
		buf_printf(&b, "}\n");
	} else {
		buf_printf(&b, "%s\n", msg);
	}
	/* the status word is the error class: the client exits with it */
	proto_reply_frame(out, (unsigned)vx, b.p ? b.p : "", b.len);
	buf_free(&b);
}

int
control_admit(struct vsd *d, int fd, struct ucred *cr, struct buf *out)
{
	if (usock_peer_allowed(fd, d->group, cr))
		return 0;
	log_warnx("refused a client with uid %u", (unsigned)cr->uid);
	control_error(out, 0, VX_PERM, "permission denied: only root may talk to vsd");
	return -EACCES;
}

/* Push the table to the gates; a gate that did not take it is named in the
 * reply: a line, or under --json a "warnings" list in the reply's object. */
static void
push_gates(struct vsd *d, struct reply *rep)
{
	struct buf warn = { 0 }, *o = &rep->out;

	gate_push_all(d, &warn);
	if (warn.len && !rep->json) {
		buf_add(o, warn.p, warn.len);
	} else if (warn.len && o->len >= 2 && memcmp(o->p + o->len - 2, "}\n", 2) == 0) {
		o->len -= 2;
		buf_printf(o, ", \"warnings\": ");
		buf_json_lines(o, warn.p);
		buf_printf(o, "}\n");
	}
	buf_free(&warn);
}

void
control_run(struct vsd *d, struct request *req, int fd, const struct ucred *cr,
	    struct buf *out)
{
	struct reply rep = { .json = req_flag(req, "json"), .peer_pid = cr->pid,
			     .peer_uid = cr->uid, .peer_fd = fd, .cmd = req->argv[0] };
	const char *why;
	size_t i;
	int r = -ENOSYS;

	log_debug("request '%s' from pid %d", req->argv[0], (int)cr->pid);
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (strcmp(req->argv[0], cmds[i].name) != 0)
			continue;
		if (cmds[i].shown)
			rep.cmd = cmds[i].shown;
		if ((r = proto_check_keys(req, cmds[i].keys, cmds[i].repeat, &why)) < 0) {
			rep.vx = VX_USAGE;	/* a key the command does not take */
			reply_err(&rep, r, "%s: %s", rep.cmd, why);
		} else {
			r = cmds[i].fn(d, req, &rep);
		}
		/* a VS made, changed or gone: the gates have the table before
		 * the client has the answer (apply pushes its own) */
		if (r >= 0 && (cmds[i].fn == cmd_create || cmds[i].fn == cmd_set ||
			       cmds[i].fn == cmd_destroy))
			push_gates(d, &rep);
		/* a dry run changes nothing */
		if (cmds[i].change && !req_flag(req, "dry-run"))
			log_change(req, cr, r, &rep);
		break;
	}
	if (i == ARRAY_SIZE(cmds))
		reply_err(&rep, -ENOSYS, "unknown command '%.64s'", req->argv[0]);
	if (r < 0) {
		if (!rep.vx)
			rep.vx = vx_from_errno(r);
		if (!rep.err[0] && rep.out.len && !rep.out.oom) {
			/* a handler with more to say than one line (apply's check errors) */
			control_error(out, rep.json, rep.vx, rep.out.p);
			buf_free(&rep.out);
			return;
		}
		if (!rep.err[0])
			snprintf(rep.err, sizeof(rep.err), "%s: %s", rep.cmd, strerror(-r));
		control_error(out, rep.json, rep.vx, rep.err);
	} else if (rep.out.oom || proto_reply_frame(out, 0, rep.out.p ? rep.out.p : "",
						    rep.out.len) < 0) {
		buf_reset(out);
		control_error(out, rep.json, VX_INTERNAL, "out of memory");
	}
	buf_free(&rep.out);
}
