/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The services a rule file declares: vsd starts each under the accept gate
 * (a vsd-gate supervisor with --restart, exactly what `vsctl run` starts by
 * hand), keeps the list in the state directory, adopts running supervisors
 * when it starts, starts a supervisor again when one dies, and stops those
 * the file no longer declares (apply --prune) or whose command or home
 * changed (then starts them again).
 *
 * The supervisor restarts the service itself (with back-off) and answers
 * on its status socket, <run dir>/gates/NAME.sock: vsd asks it "status"
 * and "stop", and pushes it the VS table and rules (gate-push.c). It never lives in vsd's own cgroup
 * or sandbox: on a systemd host systemd starts it as the transient unit
 * vsd-<root>-NAME.service; elsewhere vsd forks it into <root>/.daemon (or
 * leaves it where vsd runs, on hosts without that leaf). So stopping vsd
 * (systemctl stop kills the unit's cgroup) leaves it and the service running.
 */
#ifndef VSD_SERVICES_H
#define VSD_SERVICES_H

#include "lib/privs.h"
#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/buf.h"
#include "lib/util.h"

struct vsd;
struct rules;
struct request;
struct reply;

struct svc {
	char	 name[VS_NAME_MAX + 1];
	char	 home[VS_NAME_MAX + 1];
	char	*command;
	char	 user[PRIVS_NAME_MAX + 1];	/* runs as this user; "" for root */
	char	 group[PRIVS_NAME_MAX + 1];	/* with this group; "": the user's */
	int	 held;		/* stopped by "vsctl service stop": not started again */
	/* the running supervisor */
	int	 pidfd;		/* -1: none */
	pid_t	 spid;
	int	 stopping;	/* we asked it to stop */
	int	 forget;	/* ...and then forget the service (no longer declared) */
	char	*next_home, *next_command;	/* ...and then start it with these */
	char	 next_user[PRIVS_NAME_MAX + 1], next_group[PRIVS_NAME_MAX + 1];
	uint64_t respawn_at;	/* monotonic ns; 0: not waiting */
	uint64_t adopt_until;	/* systemd starts it: look for it until then */
	unsigned backoff_ms, respawns;
	uint64_t spawned_at;
};

struct svc_set {
	struct svc *v;
	size_t	 n;
};

/* The list in the state directory ("services"); 0 or -errno. */
int svc_load(struct vsd *d);
/* Adopt every listed service's running supervisor, or start one. */
void svc_adopt_all(struct vsd *d);

/*
 * Make the running services match rs (called by an apply after its VS steps
 * succeeded): start the new ones, restart changed ones, stop undeclared
 * ones if prune (those svc_stop_wait stopped already are forgotten, or
 * started with their new settings). Check first with svc_check: a name held by a service
 * started by hand (`vsctl run`) is refused. Reports to out, one line each.
 */
int svc_check(struct vsd *d, const struct rules *rs, struct buf *errs);
void svc_plan(struct vsd *d, const struct rules *rs, int prune, struct buf *out);
int svc_sync(struct vsd *d, const struct rules *rs, int prune, struct buf *out);

/*
 * An apply that destroys the VS a service it stops lives in (apply.c).
 * svc_stopped_by: rs stops s (it drops s, with prune, or changes its command
 * or home). svc_holding: the service rs stops whose process pid is (a
 * descendant of its running supervisor), or NULL. svc_stop_wait: stop those
 * services (SIGTERM, SIGKILL after vsd-gate's stop timeout) and wait until
 * their supervisors have exited, which they do once no task of the service
 * is left; 0, or -ETIMEDOUT after 15 s. They stay listed, stopped, for
 * svc_sync to forget or start with the new settings, or for svc_resume to
 * start again as they were when the apply fails after all (a line each to
 * out).
 */
int svc_stopped_by(const struct rules *rs, int prune, const struct svc *s);
const struct svc *svc_holding(struct vsd *d, const struct rules *rs, int prune, pid_t pid);
int svc_stop_wait(struct vsd *d, const char (*names)[VS_NAME_MAX + 1], size_t n);
void svc_resume(struct vsd *d, const char (*names)[VS_NAME_MAX + 1], size_t n, struct buf *out);

/* Ask every supervisor to refresh its VS table and rules now. */

/* The event loop's part: pidfds to poll, what happened, the next deadline. */
size_t svc_pollfds(struct vsd *d, struct pollfd *pfd, size_t max);
void svc_events(struct vsd *d, const struct pollfd *pfd, size_t n);
int svc_timeout_ms(struct vsd *d);	/* -1: none */
void svc_tick(struct vsd *d);
void svc_free(struct vsd *d);

/*
 * Supervisors' status sockets, <dir of the control socket>/gates[/NAME.sock]
 * (NULL name: the directory). svc_status_connect returns a connected
 * descriptor (2 s timeouts) or -errno; svc_status_request sends one request
 * line on it, reads the reply into out (NULL: none wanted) and closes it.
 */
int svc_status_path(const struct vsd *d, const char *name, char *buf, size_t len);
int svc_status_connect(const struct vsd *d, const char *name);
int svc_status_request(int fd, const char *cmd, struct buf *out);
/*
 * Push the VS table and the rules to every supervisor's status socket and
 * wait for each one's answer, at most 1 s each (gate-push.c). A supervisor
 * that does not take them is logged, and a line says so in warn (if not NULL).
 */
void gate_push_all(struct vsd *d, struct buf *warn);
/*
 * A supervisor's status (gates/accept/status.c), parsed (json-c): its
 * supervisor pid, or -1 if the text is not a status object or lacks it;
 * *managed: its "managed" member is true (vsd started it).
 */
long long svc_status_pid(const char *js, int *managed);

/* "service start|stop|restart NAME" */
int cmd_service(struct vsd *d, const struct request *req, struct reply *rep);

#endif
