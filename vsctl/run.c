// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vsctl run [--gate accept] --home VS [--name NAME] [--user U [--group G]]
 *           [--pm-qos on|off] [--fast on|exact|off] [--trace FILE] -- CMD [ARGS...]
 *   checks its arguments and becomes vsd-gate (exec), the supervisor that
 *   stays in the foreground for the service's whole life; see vsctl-run(8).
 * vsctl services [--json]
 *   asks every supervisor's status socket (<vsd run dir>/gates/NAME.sock);
 *   vsd is not involved, so this works while vsd restarts.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/buf.h"
#include "lib/exitcode.h"
#include "lib/privs.h"
#include "lib/util.h"
#include "vsctl.h"

int
status_dir(const char *socket_path, char *buf, size_t len)
{
	const char *slash = strrchr(socket_path, '/');
	int n = slash ? (int)(slash - socket_path) : 1;

	return path_fmt(buf, len, "%.*s/%s", n, slash ? socket_path : ".", GATE_STATUS_SUBDIR);
}

/* 1 if something answers on the Unix socket at path. */
static int
alive(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, r;

	if (strlen(path) >= sizeof(sun.sun_path) ||
	    (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return 0;
	strcpy(sun.sun_path, path);
	r = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	close(fd);
	return r;
}

struct run_opts {
	const char *home, *name, *gate, *map, *window, *user, *group, *pmqos, *fast, *trace;
	int	 verbose;
	int	 cmd;		/* argv index of the service's command */
	char	 name_buf[VS_NAME_MAX + 1];	/* the default name */
};

/* vsctl run's options, up to "--" and the command; 0, or an exit status.
 * As vsctl(8) says of every command: "--opt V" or "--opt=V", each once. */
static int
run_parse(int argc, char **argv, struct run_opts *o)
{
	static const struct {
		const char *name;
		size_t off;	/* of its const char * in struct run_opts */
	} opts[] = {
		{ "home", offsetof(struct run_opts, home) },
		{ "name", offsetof(struct run_opts, name) },
		{ "gate", offsetof(struct run_opts, gate) },
		{ "conns-map", offsetof(struct run_opts, map) },
		{ "window", offsetof(struct run_opts, window) },
		{ "user", offsetof(struct run_opts, user) },
		{ "group", offsetof(struct run_opts, group) },
		{ "pm-qos", offsetof(struct run_opts, pmqos) },
		{ "fast", offsetof(struct run_opts, fast) },
		{ "trace", offsetof(struct run_opts, trace) },
	};
	int i;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *eq, **dst;
		size_t k, len;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
			o->verbose = 1;
			continue;
		}
		if (strcmp(a, "--json") == 0)
			continue;	/* main() saw it: errors are JSON */
		if (strncmp(a, "--", 2) != 0)
			return vsctl_fail(VX_USAGE, "run: unexpected argument '%s'; usage: vsctl run "
			    "[--gate accept] --home VS [--name NAME] [--user USER [--group GROUP]] "
			    "[--pm-qos on|off] [--fast on|exact|off] [--trace FILE] -- CMD [ARGS...]", a);
		eq = strchr(a + 2, '=');
		len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		for (k = 0; k < ARRAY_SIZE(opts); k++)
			if (strlen(opts[k].name) == len && strncmp(opts[k].name, a + 2, len) == 0)
				break;
		if (k == ARRAY_SIZE(opts))
			return vsctl_fail(VX_USAGE, "run: unknown option '%s'", a);
		dst = (const char **)((char *)o + opts[k].off);
		if (*dst)
			return vsctl_fail(VX_USAGE, "run: option --%s given twice", opts[k].name);
		if (!eq && i + 1 >= argc)
			return vsctl_fail(VX_USAGE, "run: option --%s needs a value", opts[k].name);
		*dst = eq ? eq + 1 : argv[++i];
	}
	o->cmd = i;
	return 0;
}

/*
 * The default service name, from the command's base name: lower-cased, each
 * character a name may not hold made a '-', cut to VS_NAME_MAX (php-fpm8.2 ->
 * php-fpm8-2). What still is not a valid name (it starts with a digit, say)
 * is refused by the caller with a hint to use --name.
 */
static const char *
default_name(const char *base, char *out)
{
	size_t i;

	for (i = 0; base[i] && i < VS_NAME_MAX; i++) {
		char c = (char)tolower((unsigned char)base[i]);

		out[i] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ? c : '-';
	}
	out[i] = '\0';
	return out;
}

/* What the options must say; the service's name defaults to its command's. */
static int
run_check(int argc, char **argv, struct run_opts *o)
{
	struct privs_user pu;
	char err[256];

	if (strcmp(o->gate, "accept") != 0)
		return vsctl_fail(VX_BADVALUE, "run: unknown gate '%s' (only 'accept')", o->gate);
	if (!o->home)
		return vsctl_fail(VX_USAGE, "run: --home VS is required (where the service runs "
				  "while it serves nobody)");
	if (o->cmd >= argc)
		return vsctl_fail(VX_USAGE, "run: no command given; usage: vsctl run --home VS -- "
				  "CMD [ARGS...]");
	if (!vs_name_valid(o->home))
		return vsctl_fail(VX_BADVALUE, "run: bad VS name '%s': it %s", o->home,
				  vs_name_why(o->home));
	if (!o->name) {
		const char *s = strrchr(argv[o->cmd], '/');

		o->name = default_name(s ? s + 1 : argv[o->cmd], o->name_buf);
	}
	if (!vs_name_valid(o->name))
		return vsctl_fail(VX_BADVALUE, "run: bad service name '%s': it %s (use --name)",
				  o->name, vs_name_why(o->name));
	if (o->group && !o->user)
		return vsctl_fail(VX_USAGE, "run: --group needs --user");
	if (o->pmqos && strcmp(o->pmqos, "on") != 0 && strcmp(o->pmqos, "off") != 0)
		return vsctl_fail(VX_BADVALUE, "run: --pm-qos %s: expected on or off", o->pmqos);
	if (o->fast && strcmp(o->fast, "on") != 0 && strcmp(o->fast, "exact") != 0 &&
	    strcmp(o->fast, "off") != 0)
		return vsctl_fail(VX_BADVALUE, "run: --fast %s: expected on, exact or off", o->fast);
	/* vsd-gate resolves it again; this says what is wrong before it starts */
	if (o->user && privs_resolve(o->user, o->group, &pu, err, sizeof(err)) < 0)
		return vsctl_fail(VX_NOTFOUND, "run: %s", err);
	return 0;
}

/*
 * Become vsd-gate with the options it takes, then "--" and the command. Its
 * status socket opens (--status-group) to the group vsd's control socket is
 * open to (vsd --group), if vsd runs with one: the same people may read both.
 */
static int
run_exec_gate(int argc, char **argv, const struct run_opts *o, const char *socket_path,
    const char *status)
{
	char exe[PATH_MAX], gid[16], **all;
	struct stat st;
	int n = 0, k, r;

	if (!(all = calloc((size_t)(30 + argc - o->cmd), sizeof(*all))))
		return vsctl_fail(VX_INTERNAL, "run: out of memory");
	gate_exe_path(exe, sizeof(exe));
	all[n++] = exe;
	if (o->verbose)
		all[n++] = "-v";
	all[n++] = "--home";
	all[n++] = (char *)o->home;
	all[n++] = "--name";
	all[n++] = (char *)o->name;
	all[n++] = "--socket";
	all[n++] = (char *)socket_path;
	all[n++] = "--status";
	all[n++] = (char *)status;
	if (stat(socket_path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0060) &&
	    st.st_gid != 0) {
		snprintf(gid, sizeof(gid), "%u", (unsigned)st.st_gid);
		all[n++] = "--status-group";
		all[n++] = gid;
	}
	if (o->map) {
		all[n++] = "--conns-map";
		all[n++] = (char *)o->map;
	}
	if (o->window) {
		all[n++] = "--window";
		all[n++] = (char *)o->window;
	}
	if (o->pmqos) {
		all[n++] = "--pm-qos";
		all[n++] = (char *)o->pmqos;
	}
	if (o->fast) {
		all[n++] = "--fast";
		all[n++] = (char *)o->fast;
	}
	if (o->trace) {
		all[n++] = "--trace";
		all[n++] = (char *)o->trace;
	}
	if (o->user) {
		all[n++] = "--user";
		all[n++] = (char *)o->user;
	}
	if (o->group) {
		all[n++] = "--group";
		all[n++] = (char *)o->group;
	}
	all[n++] = "--";
	for (k = o->cmd; k < argc; k++)
		all[n++] = argv[k];
	execvp(all[0], all);
	r = vsctl_fail(VX_INTERNAL, "run: cannot start %s: %s", all[0], strerror(errno));
	free(all);
	return r;
}

int
vsctl_run(int argc, char **argv, const char *socket_path)
{
	struct run_opts o = { 0 };
	char dir[PATH_MAX], status[PATH_MAX];
	int r;

	if ((r = run_parse(argc, argv, &o)) != 0)
		return r;
	if (!o.gate)
		o.gate = "accept";	/* the default, after the parse: it counts
					 * a given option only once */
	if ((r = run_check(argc, argv, &o)) != 0)
		return r;
	if (status_dir(socket_path, dir, sizeof(dir)) < 0 ||
	    path_fmt(status, sizeof(status), "%s/%s.sock", dir, o.name) < 0)
		return vsctl_fail(VX_BADVALUE, "run: the path of %s is too long", socket_path);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return vsctl_fail(vx_from_errno(errno), "run: cannot create %s: %s", dir,
				  strerror(errno));
	if (alive(status))
		return vsctl_fail(VX_CONFLICT, "run: a gated service named '%s' runs already "
				  "(use --name)", o.name);
	return run_exec_gate(argc, argv, &o, socket_path, status);
}

int
gate_status_request(const char *path, const char *cmd, struct buf *b)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { 2, 0 };
	char chunk[4096];
	ssize_t n;
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path) ||
	    (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	strcpy(sun.sun_path, path);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int r = errno == EACCES ? -EACCES : -1;

		close(fd);
		return r;
	}
	/* a supervisor that refuses us closes before it reads: its answer waits */
	if (send(fd, cmd, strlen(cmd), MSG_NOSIGNAL) != (ssize_t)strlen(cmd) && errno != EPIPE &&
	    errno != ECONNRESET) {
		close(fd);
		return -1;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		buf_add(b, chunk, (size_t)n);
	close(fd);
	while (b->len && b->p[b->len - 1] == '\n')
		b->p[--b->len] = '\0';
	return b->len ? 0 : -1;
}

/*
 * The supervisor's status (gates/accept/status.c) is read with json-c, a
 * real parser: members are found by name at their level, whatever their
 * order or spacing, and a string holding '"' or a nested "name" cannot
 * fool it (the strstr() reader this replaced could be).
 */
static const char *
jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : NULL;
}

static long long
jnum(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int) ?
	    (long long)json_object_get_int64(v) : -1;
}

/* A count for the table: "-" where the supervisor gave none (an older one). */
static void
count(char *s, size_t size, long long n)
{
	if (n < 0)
		snprintf(s, size, "-");
	else
		snprintf(s, size, "%lld", n);
}

/* The array member key of o, or NULL. */
static struct json_object *
jarr(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_array) ?
	    v : NULL;
}

static void
print_row(struct json_object *js)
{
	struct buf bind = { 0 }, served = { 0 }, queued = { 0 }, waits = { 0 };
	struct json_object *a, *e;
	const char *vs, *state = jstr(js, "state");
	char unclass[24], refused[24], outside[24];
	long long n = -1;
	size_t i;

	/* "threads": [{"tid": T, "pid": P, "bound": "vs"|null, ...}, ...] */
	for (a = jarr(js, "threads"), i = 0; a && i < json_object_array_length(a); i++) {
		e = json_object_array_get_idx(a, i);
		vs = jstr(e, "bound");
		buf_printf(&bind, "%s%lld:%s", bind.len ? "," : "", jnum(e, "tid"), vs ? vs : "?");
	}
	/* "vs": [{"name": N, "id": I, "served": S, "queued": Q, ...}, ...] */
	for (a = jarr(js, "vs"), i = 0; a && i < json_object_array_length(a); i++) {
		e = json_object_array_get_idx(a, i);
		vs = jstr(e, "name");
		buf_printf(&served, "%s%s=%lld", served.len ? "," : "", vs ? vs : "?",
		    jnum(e, "served"));
		if (jnum(e, "queued") > 0)
			buf_printf(&queued, "%s%s=%lld", queued.len ? "," : "", vs ? vs : "?",
			    jnum(e, "queued"));
		/* connections that waited: the VS held its worker limit */
		if (jnum(e, "worker_waits") > 0)
			buf_printf(&waits, "%s%s=%lld", waits.len ? "," : "", vs ? vs : "?",
			    jnum(e, "worker_waits"));
	}
	/* "refused": {"io_uring": N, "compat_accept": N, "seccomp_listener": N},
	 * "outside": N; an older supervisor gives no seccomp_listener */
	if (json_object_object_get_ex(js, "refused", &a))
		n = jnum(a, "io_uring") + jnum(a, "compat_accept") +
		    (jnum(a, "seccomp_listener") > 0 ? jnum(a, "seccomp_listener") : 0);
	count(refused, sizeof(refused), n);
	count(unclass, sizeof(unclass), jnum(js, "unclassified"));
	count(outside, sizeof(outside), jnum(js, "outside"));
	printf("%-20.64s %-10.32s %7lld %8lld %-12.64s %7s %-28s %-28s %-16s %7s %7s %s\n",
	    jstr(js, "name") ? jstr(js, "name") : "-", state ? state : "-", jnum(js, "pid"),
	    jnum(js, "restarts"), jstr(js, "home") ? jstr(js, "home") : "-", unclass,
	    bind.p ? bind.p : "-", served.p ? served.p : "-", waits.p ? waits.p : "-", refused,
	    outside, queued.p ? queued.p : "-");
	buf_free(&waits);
	buf_free(&bind);
	buf_free(&served);
	buf_free(&queued);
}

/* One supervisor that did not give its status: a line on stderr, or an
 * entry {"name": ..., "error": ...} in the --json array. */
static void
row_error(struct buf *out, int json, const char *file, const char *msg)
{
	char name[NAME_MAX + 1];

	snprintf(name, sizeof(name), "%.*s", (int)(strlen(file) - 5), file);	/* NAME.sock */
	if (!json) {
		fprintf(stderr, "vsctl: services: %s: %s\n", name, msg);
		return;
	}
	buf_printf(out, "%s{\"name\": ", out->len ? ",\n " : "");
	buf_json_str(out, name);
	buf_printf(out, ", \"error\": ");
	buf_json_str(out, msg);
	buf_printf(out, "}");
}

int
vsctl_services(int argc, char **argv, const char *socket_path, int json)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct buf out = { 0 };
	struct dirent *de;
	DIR *d;
	int i, r;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else
			return vsctl_fail(VX_USAGE, "services: unexpected argument '%s'; usage: vsctl "
					  "services [--json]", argv[i]);
	}
	if (status_dir(socket_path, dir, sizeof(dir)) < 0)
		return vsctl_fail(VX_BADVALUE, "services: the path of %s is too long", socket_path);
	if (!json)
		printf("%-20s %-10s %7s %8s %-12s %7s %-28s %-28s %-16s %7s %7s %s\n", "NAME", "STATE",
		    "PID", "RESTARTS", "HOME", "UNCLASS", "BINDING(TID:VS)", "SERVED", "WAITS",
		    "REFUSED", "OUTSIDE", "QUEUED");
	if ((d = opendir(dir))) {
		while ((de = readdir(d))) {
			struct buf b = { 0 };
			struct json_object *o = NULL, *e;
			size_t l = strlen(de->d_name);

			if (l < 6 || strcmp(de->d_name + l - 5, ".sock") != 0)
				continue;
			if (path_fmt(path, sizeof(path), "%s/%s", dir, de->d_name) < 0)
				continue;
			if ((r = gate_status_request(path, "status\n", &b)) == -EACCES) {
				row_error(&out, json, de->d_name, strerror(-r));
			} else if (r == 0 && (!(o = json_tokener_parse(b.p)) ||
			    !json_object_is_type(o, json_type_object))) {
				row_error(&out, json, de->d_name, "its status is not a JSON object");
			} else if (r == 0 && json_object_object_get_ex(o, "error", &e)) {
				/* a supervisor that will not tell us (status.c) */
				row_error(&out, json, de->d_name, json_object_get_string(e));
			} else if (r == 0 && json) {
				buf_printf(&out, "%s%s", out.len ? ",\n " : "", b.p);
			} else if (r == 0) {
				print_row(o);
			}
			if (o)
				json_object_put(o);
			buf_free(&b);
		}
		closedir(d);
	}
	if (json)
		printf("[%s]\n", out.p ? out.p : "");
	buf_free(&out);
	return 0;
}
