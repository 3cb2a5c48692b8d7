// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The declared services' supervisors, from vsd's side: see services.h.
 * The state file "services" has one line per service:
 *   NAME HOME FLAGS COMMAND
 * with the command last, escaped (\\, \n, \t) so that it stays one line.
 * FLAGS is "held" or "-", then ",user=U" and ",group=G" if the service runs
 * as a user (neither name can hold a comma or a space: privs_name_valid()).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/close_range.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/log.h"
#include "rules/rules.h"
#include "scope.h"
#include "services.h"
#include "vsd.h"

#define RESPAWN_MIN_MS	200
#define RESPAWN_MAX_MS	30000
#define SVC_FILE	"services"
/* a supervisor systemd started answers on its status socket within this */
#define ADOPT_TIMEOUT_MS	30000
/* an apply waits this long for the services it stops before destroying
 * their VS: vsd-gate's stop timeout (10 s from SIGTERM to SIGKILL), then
 * time for what SIGKILL hit to be reaped */
#define STOP_WAIT_MS		15000

/* <dir of the control socket>/gates[/NAME.sock] */
int
svc_status_path(const struct vsd *d, const char *name, char *buf, size_t len)
{
	const char *slash = strrchr(d->socket_path, '/');
	int n = slash ? (int)(slash - d->socket_path) : 1;

	if (!name)
		return path_fmt(buf, len, "%.*s/gates", n, slash ? d->socket_path : ".");
	return path_fmt(buf, len, "%.*s/gates/%s.sock", n, slash ? d->socket_path : ".", name);
}

int
svc_status_connect(const struct vsd *d, const char *name)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { 2, 0 };
	char path[PATH_MAX];
	int fd, r;

	if (svc_status_path(d, name, path, sizeof(path)) < 0 ||
	    strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int
svc_status_request(int fd, const char *cmd, struct buf *out)
{
	char chunk[4096];
	ssize_t n = 0;
	int r = 0;

	if (dprintf(fd, "%s\n", cmd) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	/* no answer wanted: the supervisor acts after answering */
	while (out && (n = read(fd, chunk, sizeof(chunk))) > 0)
		buf_add(out, chunk, (size_t)n);
	if (out && n < 0)
		r = -errno;
	close(fd);
	return r;
}

/*
 * One request to a supervisor's status socket; its JSON reply in out.
 * 0, or -errno (-ECONNREFUSED/-ENOENT: nobody answers there).
 */
static int
ask(const struct vsd *d, const char *name, const char *cmd, struct buf *out)
{
	int fd = svc_status_connect(d, name);

	return fd < 0 ? fd : svc_status_request(fd, cmd, out);
}

long long
svc_status_pid(const char *js, int *managed)
{
	struct json_object *o, *v;
	long long pid = -1;

	*managed = 0;
	if (!js || !(o = json_tokener_parse(js)))
		return -1;
	if (json_object_is_type(o, json_type_object)) {
		if (json_object_object_get_ex(o, "supervisor", &v) &&
		    json_object_is_type(v, json_type_int))
			pid = json_object_get_int64(v);
		*managed = json_object_object_get_ex(o, "managed", &v) &&
		    json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
	}
	json_object_put(o);
	return pid;
}

static struct svc *
svc_find(struct vsd *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->svcs.n; i++)
		if (strcmp(d->svcs.v[i].name, name) == 0)
			return &d->svcs.v[i];
	return NULL;
}

/* NULL -> "" */
static void
set_name(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static struct svc *
svc_add(struct vsd *d, const char *name, const char *home, const char *user, const char *group,
	const char *command)
{
	struct svc *nv = realloc(d->svcs.v, (d->svcs.n + 1) * sizeof(*nv)), *s;

	if (!nv)
		return NULL;
	d->svcs.v = nv;
	s = &nv[d->svcs.n];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->home, sizeof(s->home), "%s", home);
	set_name(s->user, sizeof(s->user), user);
	set_name(s->group, sizeof(s->group), group);
	if (!(s->command = strdup(command)))
		return NULL;
	s->pidfd = -1;
	d->svcs.n++;
	return s;
}

static void
svc_del(struct vsd *d, struct svc *s)
{
	size_t i = (size_t)(s - d->svcs.v);

	if (s->pidfd >= 0)
		close(s->pidfd);
	free(s->command);
	free(s->next_home);
	free(s->next_command);
	memmove(s, s + 1, (d->svcs.n - i - 1) * sizeof(*s));
	d->svcs.n--;
}

static int
svc_save(struct vsd *d)
{
	struct buf b = { 0 };
	size_t i;
	int r;

	for (i = 0; i < d->svcs.n; i++) {
		const struct svc *s = &d->svcs.v[i];
		const char *c;

		buf_printf(&b, "%s %s %s", s->name, s->home, s->held ? "held" : "-");
		if (s->user[0])
			buf_printf(&b, ",user=%s", s->user);
		if (s->group[0])
			buf_printf(&b, ",group=%s", s->group);
		buf_printf(&b, " ");
		for (c = s->command; *c; c++) {
			if (*c == '\\')
				buf_printf(&b, "\\\\");
			else if (*c == '\n')
				buf_printf(&b, "\\n");
			else if (*c == '\t')
				buf_printf(&b, "\\t");
			else
				buf_add(&b, c, 1);
		}
		buf_printf(&b, "\n");
	}
	r = write_file_atomic(d->state_dir, SVC_FILE, b.p ? b.p : "", b.len);
	if (r < 0)
		log_warnx("cannot save the services in %s: %s", d->state_dir, strerror(-r));
	buf_free(&b);
	return r;
}

static void
unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			*w++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

int
svc_load(struct vsd *d)
{
	char path[PATH_MAX], *line, *save = NULL;
	char *data;
	struct stat st;
	FILE *f;
	int n = 0;

	if (path_fmt(path, sizeof(path), "%s/%s", d->state_dir, SVC_FILE) < 0)
		return -ENAMETOOLONG;
	if (!(f = fopen(path, "re")))
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fileno(f), &st) < 0 || st.st_size > 16 * 1024 * 1024 ||
	    !(data = calloc(1, (size_t)st.st_size + 1))) {
		fclose(f);
		return -EFBIG;
	}
	if (fread(data, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		fclose(f);
		free(data);
		return -EIO;
	}
	fclose(f);
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64], home[64], flags[128], user[64] = "", group[64] = "", *fl, *fs = NULL;
		struct svc *s;
		int off = 0, bad = 0;

		n++;
		if (sscanf(line, "%63s %63s %127s %n", name, home, flags, &off) != 3 || !off ||
		    !vs_name_valid(name) || !vs_name_valid(home) || svc_find(d, name))
			bad = 1;
		/* "held" or "-", then ",user=U" ",group=G" (older files: neither) */
		for (fl = bad ? NULL : strtok_r(flags, ",", &fs); fl; fl = strtok_r(NULL, ",", &fs)) {
			if (strncmp(fl, "user=", 5) == 0 && privs_name_valid(fl + 5))
				snprintf(user, sizeof(user), "%s", fl + 5);
			else if (strncmp(fl, "group=", 6) == 0 && privs_name_valid(fl + 6))
				snprintf(group, sizeof(group), "%s", fl + 6);
			else if (fl != flags || (strcmp(fl, "held") != 0 && strcmp(fl, "-") != 0))
				bad = 1;
		}
		if (bad || (group[0] && !user[0])) {
			log_warnx("%s:%d: not a service line; skipped", path, n);
			continue;
		}
		unescape(line + off);
		if (!(s = svc_add(d, name, home, user, group, line + off)))
			break;
		s->held = strcmp(flags, "held") == 0;
	}
	free(data);
	return 0;
}

/* In the child: leave vsd's cgroup for <root>/.daemon where there is one. */
static void
join_daemon_leaf(const struct vsd *d)
{
	char dir[PATH_MAX];
	int h;

	for (h = 0; h < d->cg.nhier; h++) {
		if (path_fmt(dir, sizeof(dir), "%s/%s", d->cg.hier[h].base, CG_DAEMON_LEAF) < 0 ||
		    access(dir, F_OK) < 0)
			continue;
		cg_write(dir, "cgroup.procs", "0");
	}
}

/* The unit a systemd host runs s's supervisor in. */
static int
unit_name(const struct vsd *d, const struct svc *s, char *buf, size_t len)
{
	return path_fmt(buf, len, "vsd-%s-%s.service", d->cg.root, s->name);
}

/* path as an absolute one: the supervisor runs in /, not in our directory */
static int
abs_path(const char *path, char *buf, size_t len)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return path_fmt(buf, len, "%s", path);
	if (!getcwd(cwd, sizeof(cwd)))
		return -errno;
	return path_fmt(buf, len, "%s/%s", cwd, path);
}

/*
 * Start the supervisor of s. On a systemd host (where the VSs have their
 * scope) systemd starts it, as the transient unit vsd-<root>-<name>.service
 * in vsd.slice: so it runs outside vsd.service's sandbox and cgroup, and its
 * output goes to that unit's journal; we learn its pid from its status
 * socket (svc_tick). Elsewhere we fork it, and it leaves our cgroup for
 * <root>/.daemon where there is one.
 */
static int
spawn(struct vsd *d, struct svc *s)
{
	char exe[PATH_MAX], status[PATH_MAX], dir[PATH_MAX], unit[NAME_MAX], desc[192];
	char path[PATH_MAX], sock[PATH_MAX];
	int by_systemd = scope_wanted(&d->cg), st, r;
	sigset_t all;
	pid_t pid;

	gate_exe_path(path, sizeof(path));
	if ((r = abs_path(path, exe, sizeof(exe))) < 0 ||
	    (r = abs_path(d->socket_path, sock, sizeof(sock))) < 0 ||
	    (r = svc_status_path(d, NULL, dir, sizeof(dir))) < 0 ||
	    (r = svc_status_path(d, s->name, path, sizeof(path))) < 0 ||
	    (r = abs_path(path, status, sizeof(status))) < 0 ||
	    (r = unit_name(d, s, unit, sizeof(unit))) < 0)
		return r;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(desc, sizeof(desc), "vsd service %s (accept gate, home VS %s%s%s)", s->name,
		 s->home, s->user[0] ? ", user " : "", s->user);
	if ((pid = fork()) < 0)
		return -errno;
	if (pid == 0) {
		char gid[16];
		char *argv[36] = { "systemd-run", "--quiet", "--collect", "--slice=vsd.slice",
			"--unit", unit, "--description", desc,
			exe, "--restart", "--home", s->home, "--name", s->name,
			"--socket", sock, "--status", status,
			"--log", d->log_syslog && !by_systemd ? "syslog" : "stderr" };
		char **args = by_systemd ? argv : argv + 8;
		int null, k = 20;

		/* our --group may read its status socket too */
		if (d->group != (gid_t)-1) {
			snprintf(gid, sizeof(gid), "%u", (unsigned)d->group);
			argv[k++] = "--status-group";
			argv[k++] = gid;
		}
		if (s->user[0]) {
			argv[k++] = "--user";
			argv[k++] = s->user;
		}
		if (s->group[0]) {
			argv[k++] = "--group";
			argv[k++] = s->group;
		}
		argv[k++] = "--";
		argv[k++] = "/bin/sh";
		argv[k++] = "-c";
		argv[k++] = s->command;
		argv[k] = NULL;
		setsid();
		/* the service runs in / (vsrules(5)), as systemd-run's units
		 * and a vsd after daemon() do, whichever directory vsd was
		 * started in: it must not hold that directory busy or find its
		 * relative paths there */
		if (chdir("/") < 0)
			_exit(126);
		if (!by_systemd)
			join_daemon_leaf(d);
		/* nothing of vsd's: not its lock, its sockets or its BPF objects */
		close_range(3, ~0U, 0);
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
		    (d->log_syslog && !by_systemd && dup2(null, 2) < 0))
			_exit(126);
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		signal(SIGPIPE, SIG_DFL);
		execvp(args[0], args);
		fprintf(stderr, "vsd: cannot start %s for service %s: %s\n", args[0], s->name,
			strerror(errno));
		_exit(127);
	}
	s->stopping = 0;
	s->respawn_at = 0;
	s->spawned_at = mono_ns();
	if (!by_systemd) {
		s->spid = pid;
		s->pidfd = pidfd_open(pid, 0);
		log_info("service %s: started (supervisor pid %d, home %s)", s->name, (int)pid,
			 s->home);
		return 0;
	}
	/* SIGCHLD is blocked (vsd reads it from a signalfd): no one else reaps it;
	 * systemd-run said why on our standard error */
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		log_warnx("service %s: systemd-run could not start %s (status 0x%x)", s->name,
			  unit, st);
		return -ECHILD;
	}
	s->adopt_until = mono_ns() + ADOPT_TIMEOUT_MS * 1000000ull;
	log_info("service %s: systemd starts it as %s (home %s)", s->name, unit, s->home);
	return 0;
}

/*
 * The supervisor answering on s's status socket, if it is one of ours: its
 * pid through a pidfd opened before a second status request confirms it
 * still answers (a recycled pid never passes).
 */
static int
adopt(struct vsd *d, struct svc *s)
{
	struct buf a = { 0 }, b = { 0 };
	long long spid, spid2;
	int fd = -1, r = -ESRCH, managed;

	if (ask(d, s->name, "status", &a) < 0 || !a.p)
		goto out;
	spid = svc_status_pid(a.p, &managed);
	if (!managed || spid <= 0) {
		r = -EEXIST;	/* started by hand */
		goto out;
	}
	if ((fd = pidfd_open((pid_t)spid, 0)) < 0)
		goto out;
	if (ask(d, s->name, "status", &b) < 0 || (spid2 = svc_status_pid(b.p, &managed)) != spid) {
		close(fd);
		goto out;
	}
	s->pidfd = fd;
	s->spid = (pid_t)spid;
	s->spawned_at = mono_ns();
	r = 0;
out:
	buf_free(&a);
	buf_free(&b);
	return r;
}

/* Try s again after a back-off doubling from RESPAWN_MIN_MS up to
 * RESPAWN_MAX_MS; a run of RAN_MS of 10 s or more starts it over. */
static void
back_off(struct svc *s, uint64_t ran_ms)
{
	s->backoff_ms = ran_ms >= 10000 || !s->backoff_ms ? RESPAWN_MIN_MS :
	    s->backoff_ms * 2 > RESPAWN_MAX_MS ? RESPAWN_MAX_MS : s->backoff_ms * 2;
	s->respawn_at = mono_ns() + (uint64_t)s->backoff_ms * 1000000ull;
}

/*
 * Start s's supervisor, unless s is held. One that cannot be started is
 * tried again with the back-off of one that died: under systemd the unit
 * name is the same at every run, and systemd-run refuses it while systemd
 * still holds the unit of the last run (it has not yet taken note that its
 * supervisor exited, or is still stopping what was left in it), which a
 * service stopped and declared again meets at once; and under load its
 * D-Bus call may time out.
 */
static void
start(struct vsd *d, struct svc *s)
{
	int r;

	if (s->held || (r = spawn(d, s)) == 0)
		return;
	back_off(s, 0);
	if (r == -ECHILD)	/* spawn() said why */
		log_warnx("service %s: trying again in %u ms", s->name, s->backoff_ms);
	else
		log_warnx("service %s: cannot start: %s; trying again in %u ms", s->name,
			  strerror(-r), s->backoff_ms);
}

void
svc_adopt_all(struct vsd *d)
{
	size_t i;
	int r;

	for (i = 0; i < d->svcs.n; i++) {
		struct svc *s = &d->svcs.v[i];

		if ((r = adopt(d, s)) == 0) {
			log_info("service %s: adopted its running supervisor (pid %d)", s->name,
				 (int)s->spid);
			continue;
		}
		if (r == -EEXIST) {
			log_warnx("service %s: a service of that name was started by hand "
				  "(vsctl run); not starting it", s->name);
			continue;
		}
		start(d, s);
	}
}

/* s has a supervisor, or systemd is starting one. */
static int
has_supervisor(const struct svc *s)
{
	return s->pidfd >= 0 || s->adopt_until;
}

/* Ask s's supervisor to stop; it stops the service (SIGTERM, then SIGKILL). */
static void
stop(struct vsd *d, struct svc *s)
{
	s->respawn_at = 0;
	if (s->pidfd < 0 && !s->adopt_until)
		return;
	s->stopping = 1;
	if (s->pidfd < 0)	/* systemd is starting it: asked once it answers */
		return;
	if (ask(d, s->name, "stop", NULL) < 0)
		pidfd_send_signal(s->pidfd, SIGTERM, NULL, 0);
	log_info("service %s: stopping", s->name);
}

/* Once s has no supervisor: forget it, or start it (with new settings). */
static void
stopped(struct vsd *d, struct svc *s)
{
	if (s->forget) {
		log_info("service %s: stopped and removed", s->name);
		svc_del(d, s);
		svc_save(d);
		return;
	}
	if (s->next_command) {
		free(s->command);
		s->command = s->next_command;
		snprintf(s->home, sizeof(s->home), "%s", s->next_home);
		snprintf(s->user, sizeof(s->user), "%s", s->next_user);
		snprintf(s->group, sizeof(s->group), "%s", s->next_group);
		free(s->next_home);
		s->next_command = s->next_home = NULL;
		svc_save(d);
	}
	start(d, s);
}

int
svc_check(struct vsd *d, const struct rules *rs, struct buf *errs)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < rs->nservices; i++) {
		const struct rules_service *x = &rs->services[i];
		struct buf a = { 0 };

		if (svc_find(d, x->name))
			continue;
		if (ask(d, x->name, "status", &a) == 0 && a.p) {
			buf_printf(errs, "%s:%d:%d: service %s: a service of that name runs "
				   "already, started by hand (vsctl run); stop it first\n",
				   x->loc.file, x->loc.line, x->loc.col, x->name);
			bad = 1;
		}
		buf_free(&a);
	}
	return bad ? -EEXIST : 0;
}

static const char *
home_of(const struct rules *rs, const struct rules_service *x)
{
	return rs->vs[x->home].name;
}

/* What of s the file changes: "home", "command", "user", or NULL. */
static const char *
changed(const struct svc *s, const struct rules *rs, const struct rules_service *x)
{
	if (strcmp(s->home, home_of(rs, x)) != 0)
		return "home";
	if (strcmp(s->command, x->command) != 0)
		return "command";
	if (strcmp(s->user, x->user ? x->user : "") != 0 ||
	    strcmp(s->group, x->group ? x->group : "") != 0)
		return "user";
	return NULL;
}

void
svc_plan(struct vsd *d, const struct rules *rs, int prune, struct buf *out)
{
	size_t i;

	for (i = 0; i < rs->nservices; i++) {
		const struct rules_service *x = &rs->services[i];
		struct svc *s = svc_find(d, x->name);

		if (!s)
			buf_printf(out, "start service %s (home %s%s%s)\n", x->name, home_of(rs, x),
				   x->user ? ", user " : "", x->user ? x->user : "");
		else if (changed(s, rs, x))
			buf_printf(out, "restart service %s (%s changed)\n", x->name,
				   changed(s, rs, x));
	}
	for (i = 0; prune && i < d->svcs.n; i++)
		if (rules_service_index(rs, d->svcs.v[i].name) < 0)
			buf_printf(out, "stop service %s\n", d->svcs.v[i].name);
}

int
svc_sync(struct vsd *d, const struct rules *rs, int prune, struct buf *out)
{
	size_t i, len0 = out->len;

	for (i = 0; i < rs->nservices; i++) {
		const struct rules_service *x = &rs->services[i];
		const char *home = home_of(rs, x);
		struct svc *s = svc_find(d, x->name);

		if (!s) {
			if (!(s = svc_add(d, x->name, home, x->user, x->group, x->command)))
				return -ENOMEM;
			start(d, s);
			buf_printf(out, "started service %s\n", x->name);
			continue;
		}
		s->forget = 0;
		if (!changed(s, rs, x))
			continue;
		free(s->next_home);
		free(s->next_command);
		s->next_home = strdup(home);
		s->next_command = strdup(x->command);
		set_name(s->next_user, sizeof(s->next_user), x->user);
		set_name(s->next_group, sizeof(s->next_group), x->group);
		if (!s->next_home || !s->next_command)
			return -ENOMEM;
		buf_printf(out, "restarted service %s\n", x->name);
		if (has_supervisor(s))
			stop(d, s);
		else
			stopped(d, s);
	}
	for (i = 0; prune && i < d->svcs.n; i++) {
		struct svc *s = &d->svcs.v[i];

		if (rules_service_index(rs, s->name) >= 0)
			continue;
		buf_printf(out, "stopped service %s\n", s->name);
		s->forget = 1;
		if (has_supervisor(s)) {
			stop(d, s);
		} else {
			svc_del(d, s);
			i--;
		}
	}
	/* every change above reported a line; none: the list is as saved */
	return out->len == len0 ? 0 : svc_save(d);
}

int
svc_stopped_by(const struct rules *rs, int prune, const struct svc *s)
{
	int i = rules_service_index(rs, s->name);

	if (i < 0)
		return prune;
	return strcmp(s->home, home_of(rs, &rs->services[i])) != 0 ||
	    strcmp(s->command, rs->services[i].command) != 0;
}

/* s's supervisor runs (its pid is still its pid, not a reused one). */
static int
supervisor_alive(const struct svc *s)
{
	struct pollfd p = { .fd = s->pidfd, .events = POLLIN };

	return s->pidfd >= 0 && poll(&p, 1, 0) == 0;
}

const struct svc *
svc_holding(struct vsd *d, const struct rules *rs, int prune, pid_t pid)
{
	pid_t p = pid;
	size_t i;
	int depth;

	/* the service and whatever it forked descend from its supervisor,
	 * a child subreaper (vsd-gate.c), also after a double fork */
	for (depth = 0; p > 1 && depth < 64; depth++, p = proc_parent(p)) {
		for (i = 0; i < d->svcs.n; i++) {
			const struct svc *s = &d->svcs.v[i];

			if (s->pidfd >= 0 && s->spid == p && svc_stopped_by(rs, prune, s) &&
			    supervisor_alive(s))
				return s;
		}
	}
	return NULL;
}

int
svc_stop_wait(struct vsd *d, const char (*names)[VS_NAME_MAX + 1], size_t n)
{
	uint64_t until = mono_ns() + STOP_WAIT_MS * 1000000ull;
	struct pollfd *pfd;
	struct svc *s;
	size_t i, k, np;
	int waiting;

	if (!(pfd = calloc(n ? n : 1, sizeof(*pfd))))
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if ((s = svc_find(d, names[i])))
			stop(d, s);
	for (;;) {
		for (i = np = 0, waiting = 0; i < n; i++) {
			if (!(s = svc_find(d, names[i])))
				continue;
			if (s->pidfd >= 0)
				pfd[np++] = (struct pollfd){ .fd = s->pidfd, .events = POLLIN };
			waiting += s->pidfd >= 0 || s->adopt_until;
		}
		if (!waiting)
			break;
		if (mono_ns() > until) {
			free(pfd);
			return -ETIMEDOUT;
		}
		(void)poll(pfd, np, 50);	/* on an error, no revents: look again */
		for (k = 0; k < np; k++) {
			if (!pfd[k].revents)
				continue;
			for (i = 0; i < d->svcs.n; i++) {
				s = &d->svcs.v[i];
				if (s->pidfd != pfd[k].fd)
					continue;
				/* gone, with every task of its service (it exits
				 * only then); still "stopping": svc_sync or
				 * svc_resume decides what follows */
				close(s->pidfd);
				s->pidfd = -1;
				log_info("service %s: stopped (its supervisor pid %d exited)", s->name,
					 (int)s->spid);
				break;
			}
		}
		svc_tick(d);	/* one that systemd is starting: adopt it, then stop it */
	}
	free(pfd);
	return 0;
}

void
svc_resume(struct vsd *d, const char (*names)[VS_NAME_MAX + 1], size_t n, struct buf *out)
{
	struct svc *s;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!(s = svc_find(d, names[i])) || s->held)
			continue;
		if (s->pidfd >= 0 || s->adopt_until) {
			/* exited() starts it again once it has stopped */
			buf_printf(out, "service %s is stopping; it is started again then\n",
				   s->name);
			continue;
		}
		s->stopping = 0;
		stopped(d, s);
		buf_printf(out, "service %s was stopped and is started again\n", s->name);
	}
}

size_t
svc_pollfds(struct vsd *d, struct pollfd *pfd, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < d->svcs.n && n < max; i++)
		if (d->svcs.v[i].pidfd >= 0)
			pfd[n++] = (struct pollfd){ .fd = d->svcs.v[i].pidfd, .events = POLLIN };
	return n;
}

/* A supervisor exited: as asked, or it died (then start it again, with back-off). */
static void
exited(struct vsd *d, struct svc *s)
{
	uint64_t ran_ms = (mono_ns() - s->spawned_at) / 1000000;

	close(s->pidfd);
	s->pidfd = -1;
	if (s->stopping) {
		s->stopping = 0;
		stopped(d, s);
		return;
	}
	back_off(s, ran_ms);
	s->respawns++;
	log_warnx("service %s: its supervisor (pid %d) exited after %llu ms; starting it again "
		  "in %u ms", s->name, (int)s->spid, (unsigned long long)ran_ms, s->backoff_ms);
}

void
svc_events(struct vsd *d, const struct pollfd *pfd, size_t n)
{
	size_t k, i;

	for (k = 0; k < n; k++) {
		if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		for (i = 0; i < d->svcs.n; i++)
			if (d->svcs.v[i].pidfd == pfd[k].fd) {
				exited(d, &d->svcs.v[i]);
				break;
			}
	}
}

int
svc_timeout_ms(struct vsd *d)
{
	uint64_t now = mono_ns(), first = 0;
	size_t i;

	for (i = 0; i < d->svcs.n; i++) {
		if (d->svcs.v[i].adopt_until)	/* ask its status socket every 50 ms */
			return 50;
		if (d->svcs.v[i].respawn_at && (!first || d->svcs.v[i].respawn_at < first))
			first = d->svcs.v[i].respawn_at;
	}
	if (!first)
		return -1;
	return first <= now ? 0 : (int)((first - now) / 1000000 + 1);
}

void
svc_tick(struct vsd *d)
{
	uint64_t now = mono_ns();
	size_t i;

	for (i = 0; i < d->svcs.n; i++) {
		struct svc *s = &d->svcs.v[i];

		if (s->adopt_until) {
			if (adopt(d, s) == 0) {
				s->adopt_until = 0;
				log_info("service %s: started (supervisor pid %d)", s->name,
					 (int)s->spid);
				if (s->stopping && ask(d, s->name, "stop", NULL) < 0)
					pidfd_send_signal(s->pidfd, SIGTERM, NULL, 0);
			} else if (now > s->adopt_until) {
				s->adopt_until = 0;
				s->respawn_at = now + RESPAWN_MAX_MS * 1000000ull;
				log_warnx("service %s: its supervisor did not answer within %d ms; "
					  "trying again in %d ms", s->name, ADOPT_TIMEOUT_MS,
					  RESPAWN_MAX_MS);
			}
			continue;
		}
		if (!s->respawn_at || s->respawn_at > now)
			continue;
		s->respawn_at = 0;
		/* a start that systemd-run reported failed may have come up all
		 * the same (a D-Bus reply lost to a timeout): it answers */
		if (adopt(d, s) == 0) {
			log_info("service %s: started (supervisor pid %d)", s->name, (int)s->spid);
			continue;
		}
		start(d, s);
	}
}

void
svc_free(struct vsd *d)
{
	while (d->svcs.n)
		svc_del(d, &d->svcs.v[d->svcs.n - 1]);
	free(d->svcs.v);
	d->svcs.v = NULL;
}

int
cmd_service(struct vsd *d, const struct request *req, struct reply *rep)
{
	const char *action = req_get(req, "action"), *name = req_get(req, "name");
	struct svc *s;
	int r;

	if (!action || !name)
		return reply_err(rep, -EINVAL, "usage: service start|stop|restart NAME");
	if (rep->peer_uid != 0)
		return reply_err(rep, -EPERM, "service: only root may start or stop a service "
				 "(its processes run as root)");
	if (!(s = svc_find(d, name)))
		return reply_err(rep, -ENOENT, "no declared service '%s' (a rule file's "
				 "service line; services started with vsctl run are stopped "
				 "with a signal to their vsd-gate)", name);
	if (strcmp(action, "stop") == 0) {
		s->held = 1;
		stop(d, s);
	} else if (strcmp(action, "start") == 0) {
		s->held = 0;
		if (!has_supervisor(s) && (r = spawn(d, s)) < 0)
			return reply_err(rep, r, "service %s: cannot start: %s", name, strerror(-r));
	} else if (strcmp(action, "restart") == 0) {
		s->held = 0;
		if (has_supervisor(s))
			stop(d, s);
		else if ((r = spawn(d, s)) < 0)
			return reply_err(rep, r, "service %s: cannot start: %s", name, strerror(-r));
	} else {
		return reply_err(rep, -EINVAL, "service: unknown action '%s' (start, stop or "
				 "restart)", action);
	}
	svc_save(d);
	buf_printf(&rep->out, "service %s: %s\n", name, strcmp(action, "stop") == 0 ?
		   "stopping" : strcmp(action, "start") == 0 ? "started" : "restarting");
	return 0;
}
