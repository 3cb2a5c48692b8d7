/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's context, handed to every command handler. */
#ifndef VSD_VSD_H
#define VSD_VSD_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "lib/buf.h"
#include "lib/cgroup.h"
#include "lib/proto.h"
#include "registry.h"
#include "services.h"
#include "gates/socket/gate-socket.h"

struct rules;
struct netcls;
struct ctl_client;

/* The control socket's open connections (clients.c). */
struct ctl_set {
	struct ctl_client *v;
	size_t		 n;
	uint64_t	 seq;		/* connections accepted so far */
	uint64_t	 busy_ns;	/* time spent running commands, so far */
};

struct vsd {
	struct cg_ctx	 cg;
	struct registry	 reg;
	const char	*state_dir;
	const char	*socket_path;
	gid_t		 group;		/* may also talk to vsd; (gid_t)-1 for root only */
	uint32_t	 group_mark_lo;	/* --group-marks: the marks the group may set; */
	uint32_t	 group_mark_hi;	/* none while hi is 0 (member.c) */
	struct gate_socket *gate;	/* NULL where there is no cgroup2 */
	struct rules	*rules;		/* the rule file applied last (vsd/apply.c), or NULL */
	char		*rules_path;	/* what reload and SIGHUP re-read */
	uid_t		 rules_owner;	/* who applied it: its files must belong to root or them */
	struct buf	 gate_text;	/* the rules as the gates get them (applied.c) */
	uint64_t	 gate_hash;	/* 0: no rules applied */
	struct svc_set	 svcs;		/* the declared services (services.c) */
	int		 log_syslog;	/* vsd logs to syslog (not in the foreground) */
	size_t		 drift_next;	/* the VS the drift sweep looks at next */
	uint64_t	 drift_at;	/* mono_ns of its next round (drift.c) */
	uint64_t	 fork_moves;	/* processes the fork gate moved (fork-gate.c) */
	struct ctl_set	 ctl;		/* the control socket's clients (clients.c) */
	uint64_t	 conns_check_at; /* next look at the VSs' table shares (gate-vs.c) */
	struct netcls	*netcls;	/* the network shares' classifier, while one is in use */
	/* --metrics-file (metrics.c): where, how often, when next, the last error */
	char		*metrics_dir;
	const char	*metrics_name;
	unsigned	 metrics_interval_s;
	uint64_t	 metrics_at;
	int		 metrics_err;
};

struct reply {
	struct buf	 out;
	char		 err[512];
	int		 json;
	pid_t		 peer_pid;	/* from SO_PEERCRED */
	uid_t		 peer_uid;
	int		 peer_fd;	/* the client's connection (SO_PEERGROUPS) */
	const char	*cmd;		/* the command as messages name it: "exec", not
					 * the protocol's "exec-self" */
	int		 vx;		/* error class (lib/exitcode.h); 0: from the errno */
};

/* Record a one-line error for the client; returns r (a -errno). The reply's
 * error class comes from r (vx_from_errno) unless rep->vx was set first. */
int reply_err(struct reply *rep, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

typedef int (*cmd_fn)(struct vsd *d, const struct request *req, struct reply *rep);

/* cmd-vs.c */
int cmd_create(struct vsd *d, const struct request *req, struct reply *rep);
int cmd_set(struct vsd *d, const struct request *req, struct reply *rep);
int cmd_destroy(struct vsd *d, const struct request *req, struct reply *rep);
int cmd_list(struct vsd *d, const struct request *req, struct reply *rep);
int cmd_show(struct vsd *d, const struct request *req, struct reply *rep);
int cmd_attach(struct vsd *d, const struct request *req, struct reply *rep);
int cmd_exec_self(struct vsd *d, const struct request *req, struct reply *rep);

/* cmd-conns.c */
int cmd_conns(struct vsd *d, const struct request *req, struct reply *rep);

/* cmd-stats.c: every VS's figures in one reply (vsctl top) */
int cmd_stats(struct vsd *d, const struct request *req, struct reply *rep);

/* metrics.c: the Prometheus text (vsctl metrics) */
int cmd_metrics(struct vsd *d, const struct request *req, struct reply *rep);

/* cmd-gate.c */
int cmd_gatetable(struct vsd *d, const struct request *req, struct reply *rep);

/* control.c */
int control_listen(const char *path, gid_t group);
/* 0 and *cr if the peer on fd may talk to vsd; else -EACCES, its refusal framed in out. */
int control_admit(struct vsd *d, int fd, struct ucred *cr, struct buf *out);
/* Run one request; its reply, framed, is appended to out. */
void control_run(struct vsd *d, struct request *req, int fd, const struct ucred *cr,
		 struct buf *out);
/* An error reply (text, or JSON if json) of class vx (lib/exitcode.h), framed,
 * appended to out; the reply's status is vx. */
void control_error(struct buf *out, int json, int vx, const char *msg);

/* clients.c: the connections, served from vsd's poll loop */
struct pollfd;
/* Take every waiting connection. */
void ctl_accept(struct vsd *d, int lfd);
/* The clients' poll entries, up to max; ctl_events wants them back as they were. */
size_t ctl_pollfds(struct vsd *d, struct pollfd *p, size_t max);
/* Read, run, write as the poll says; close the clients past their deadline. */
void ctl_events(struct vsd *d, const struct pollfd *p, size_t n);
/* The poll timeout: other_ms (-1: none), or sooner if a deadline falls first. */
int ctl_timeout_ms(const struct vsd *d, int other_ms);
void ctl_close_all(struct vsd *d);

#endif
