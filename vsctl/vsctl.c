// SPDX-License-Identifier: GPL-2.0-or-later
/* vsctl: the command-line client of vsd. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/exitcode.h"
#include "lib/privs.h"
#include "lib/proto.h"
#include "rules/rules.h"
#include "lib/util.h"
#include "vsctl.h"

#define DEFAULT_SOCKET	"/run/vsd/vsd.sock"

static const char *socket_path = DEFAULT_SOCKET;
#define json vsctl_json	/* out.c */

struct optspec {
	const char *name;	/* --name; the request key has the same name */
	int has_arg;
};

struct cmdspec {
	const char *name;
	int (*fn)(const struct cmdspec *c, int argc, char **argv);
	const char *args;	/* "name", "name pid...", "" */
	const struct optspec *opts;
	const char *usage;
};

/*
 * Send a request, print the reply; returns the exit status: the reply's
 * status is the error class vsd chose (lib/exitcode.h), not guessed here
 * from its words. quiet_ok 1: print nothing on success; -1: on success,
 * the answer replaces *req, unprinted.
 */
static int
call(struct buf *req, int pass_fd, int quiet_ok)
{
	struct buf body = { 0 };
	unsigned status;
	int r;

	if (json)
		proto_add(req, "json=1");
	if ((r = proto_call(socket_path, req, pass_fd, &status, &body, 0)) < 0) {
		buf_free(&body);
		if (status == PROTO_STATUS_UNSENT)
			return vsctl_connect_failed(socket_path, r);
		return vsctl_fail(VX_INTERNAL, "talking to vsd at %s: %s", socket_path, strerror(-r));
	}
	if (status == 0 && quiet_ok < 0) {
		/* the caller reads the answer itself (list --names) */
		buf_free(req);
		*req = body;
		return 0;
	}
	if (status != 0) {
		if (json && body.p[0] != '{') {
			/* a refusal before vsd read the request (SO_PEERCRED) is text */
			while (body.len && body.p[body.len - 1] == '\n')
				body.p[--body.len] = '\0';
			vsctl_fail(vx_from_status(status), "%s", body.p);
		} else if (json) {
			fputs(body.p, stdout);	/* {"error": ..., "class": ...}, for scripts */
		} else {
			fprintf(stderr, "vsctl: %s", body.p);
			if (body.len == 0 || body.p[body.len - 1] != '\n')
				fputc('\n', stderr);
		}
	} else if (!quiet_ok) {
		/* under --json every command prints one JSON value, even one
		 * that has nothing to say (destroy, attach) */
		if (json && body.len == 0)
			fputs("{\"ok\": true}\n", stdout);
		else
			fputs(body.p, stdout);
	}
	buf_free(&body);
	return vx_from_status(status);
}

static const struct optspec *
find_opt(const struct cmdspec *c, const char *name, size_t len)
{
	const struct optspec *o;

	for (o = c->opts; o && o->name; o++)
		if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
			return o;
	return NULL;
}

/*
 * Turn "NAME --opt V --flag PID..." into request pairs, by the command's spec.
 * Options match exactly: no prefixes, so a new option never breaks a script.
 * An option given twice is refused (vsd takes each key once). After "--"
 * come the command (exec) or more operands (attach's pids, so that
 * "attach www1 -- -1" is about the pid -1).
 */
static int
build(const struct cmdspec *c, int argc, char **argv, struct buf *req, int *used)
{
	int i, npos = 0, want_name = strncmp(c->args, "name", 4) == 0;
	int opt_name = strcmp(c->args, "name?") == 0;	/* conns [NAME] */
	int rest_pids = strstr(c->args, "pid...") != NULL;
	int operands = 0;	/* after "--": no more options */
	unsigned given = 0;	/* bit k: option c->opts[k] was given */

	proto_add(req, c->name);
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!operands && strcmp(a, "--") == 0) {
			if (!used) {
				operands = 1;
				continue;
			}
			i++;
			break;
		}
		if (!operands && strncmp(a, "--", 2) == 0) {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			const struct optspec *o;

			if (len == 4 && strncmp(a + 2, "json", 4) == 0 && !eq) {
				json = 1;
				continue;
			}
			if (!(o = find_opt(c, a + 2, len)))
				return vsctl_fail(VX_USAGE, "%s: unknown option '%s'", c->name, a);
			if (given & (1u << (o - c->opts)))
				return vsctl_fail(VX_USAGE, "%s: option --%s given twice", c->name, o->name);
			given |= 1u << (o - c->opts);
			if (!o->has_arg) {
				if (eq)
					return vsctl_fail(VX_USAGE, "%s: option --%s takes no value", c->name, o->name);
				proto_addf(req, "%s=1", o->name);
			} else if (eq) {
				proto_addf(req, "%s=%s", o->name, eq + 1);
			} else if (i + 1 < argc) {
				proto_addf(req, "%s=%s", o->name, argv[++i]);
			} else {
				return vsctl_fail(VX_USAGE, "%s: option --%s needs a value", c->name, o->name);
			}
			continue;
		}
		if (want_name && npos == 0) {
			proto_addf(req, "name=%s", a);
		} else if (rest_pids) {
			proto_addf(req, "pid=%s", a);
		} else if (!used) {
			return vsctl_fail(VX_USAGE, "%s: unexpected argument '%s'", c->name, a);
		} else {
			break;
		}
		npos++;
	}
	if (want_name && !opt_name && npos == 0)
		return vsctl_fail(VX_USAGE, "%s: no VS name given; usage: vsctl %s", c->name, c->usage);
	if (rest_pids && npos < 2)
		return vsctl_fail(VX_USAGE, "%s: no pid given; usage: vsctl %s", c->name, c->usage);
	if (used)
		*used = i;
	return 0;
}

static int
do_remote(const struct cmdspec *c, int argc, char **argv)
{
	struct buf req = { 0 };
	int r;

	if ((r = build(c, argc, argv, &req, NULL)) == 0)
		r = call(&req, -1, 0);
	buf_free(&req);
	return r;
}

/* The value of --user/--group (as --opt V or --opt=V) before "--", or NULL. */
static const char *
opt_value(int argc, char **argv, const char *opt)
{
	size_t len = strlen(opt);
	int i;

	for (i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], opt) == 0 && i + 1 < argc)
			return argv[i + 1];
		if (strncmp(argv[i], opt, len) == 0 && argv[i][len] == '=')
			return argv[i] + len + 1;
	}
	return NULL;
}

/* exec's VS name: its first operand, wherever the options are (build() allows that). */
static const char *
exec_name(int argc, char **argv)
{
	int i;

	for (i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--user") == 0 || strcmp(argv[i], "--group") == 0)
			i++;
		else if (strncmp(argv[i], "--", 2) != 0)
			return argv[i];
	}
	return NULL;
}

/*
 * Move ourselves into the VS, then become the command: its exit status is
 * ours. With --user, the user is resolved before anything moves, and the
 * command runs as that user with its groups and no capabilities.
 */
static int
do_exec(const struct cmdspec *c, int argc, char **argv)
{
	const char *user = opt_value(argc, argv, "--user"), *group = opt_value(argc, argv, "--group");
	struct privs_user pu;
	struct buf req = { 0 };
	int used = 0, r, pidfd;
	char err[256];

	if ((r = build(c, argc, argv, &req, &used)) != 0) {
		buf_free(&req);
		return r;
	}
	if (used >= argc) {
		buf_free(&req);
		return vsctl_fail(VX_USAGE, "exec: no command given; usage: vsctl %s", c->usage);
	}
	if (group && !user) {
		buf_free(&req);
		return vsctl_fail(VX_USAGE, "exec: --group needs --user");
	}
	if (user && privs_resolve(user, group, &pu, err, sizeof(err)) < 0) {
		buf_free(&req);
		return vsctl_fail(VX_NOTFOUND, "exec: %s", err);
	}
	if (user && geteuid() != 0) {
		buf_free(&req);
		return vsctl_fail(VX_PERM, "exec: --user needs root");
	}
	buf_reset(&req);
	proto_add(&req, "exec-self");
	proto_addf(&req, "name=%s", exec_name(argc, argv));
	if ((pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0)) < 0)
		return vsctl_fail(VX_INTERNAL, "exec: pidfd_open: %s", strerror(errno));
	r = call(&req, pidfd, 1);
	close(pidfd);
	buf_free(&req);
	if (r != 0)
		return r;
	if (user && privs_become(&pu, err, sizeof(err)) < 0)
		return vsctl_fail(VX_INTERNAL, "exec: %s", err);
	execvp(argv[used], &argv[used]);
	fprintf(stderr, "vsctl: exec: %s: %s\n", argv[used], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

/*
 * list [--json | --names]: --names prints one VS name a line (for shell
 * completion and scripts), read from list's JSON with json-c.
 */
static int
do_list(const struct cmdspec *c, int argc, char **argv)
{
	struct json_object *a, *v;
	struct buf req = { 0 };
	int i, names = 0, r;
	size_t k;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--names") == 0)
			names = 1;
		else if (strcmp(argv[i], "--json") != 0)
			return vsctl_fail(VX_USAGE, "list: unexpected argument '%s'; usage: vsctl %s",
					  argv[i], c->usage);
	}
	if (!names)
		return do_remote(c, argc, argv);
	if (json)
		return vsctl_fail(VX_USAGE, "list: --names or --json, not both");
	proto_add(&req, "list");
	proto_add(&req, "json=1");
	if ((r = call(&req, -1, -1)) != 0) {
		buf_free(&req);
		return r;
	}
	if (!(a = json_tokener_parse(req.p)) || !json_object_is_type(a, json_type_array)) {
		buf_free(&req);
		json_object_put(a);
		return vsctl_fail(VX_INTERNAL, "list: vsd's answer is not a JSON array");
	}
	for (k = 0; k < json_object_array_length(a); k++)
		if (json_object_object_get_ex(json_object_array_get_idx(a, k), "name", &v))
			printf("%s\n", json_object_get_string(v));
	json_object_put(a);
	buf_free(&req);
	return 0;
}

/* The accept gate's commands parse their own arguments (vsctl/run.c). */
static int
do_run(const struct cmdspec *c, int argc, char **argv)
{
	(void)c;
	return vsctl_run(argc, argv, socket_path);
}

static int
do_top(const struct cmdspec *c, int argc, char **argv)
{
	(void)c;
	return vsctl_top(argc, argv, socket_path);
}

/* The Prometheus text format is the answer: there is no JSON of it to give. */
static int
do_metrics(const struct cmdspec *c, int argc, char **argv)
{
	if (json)
		return vsctl_fail(VX_USAGE, "metrics: no JSON output (it prints the Prometheus text "
				  "format); list --json and show --json give the same figures");
	return do_remote(c, argc, argv);
}

static int
do_services(const struct cmdspec *c, int argc, char **argv)
{
	(void)c;
	return vsctl_services(argc, argv, socket_path, json);
}

/* service start|stop|restart NAME: a service the rule file declares. */
static int
do_service(const struct cmdspec *c, int argc, char **argv)
{
	struct buf req = { 0 };
	int r;

	if (argc == 3 && strcmp(argv[2], "--json") == 0) {
		json = 1;
		argc--;
	}
	if (argc != 2 || (strcmp(argv[0], "start") != 0 && strcmp(argv[0], "stop") != 0 &&
	    strcmp(argv[0], "restart") != 0))
		return vsctl_fail(VX_USAGE, "service: usage: vsctl %s", c->usage);
	if (!vs_name_valid(argv[1]))
		return vsctl_fail(VX_BADVALUE, "service: bad service name '%s': it %s", argv[1],
				  vs_name_why(argv[1]));
	proto_add(&req, "service");
	proto_addf(&req, "action=%s", argv[0]);
	proto_addf(&req, "name=%s", argv[1]);
	r = call(&req, -1, 0);
	buf_free(&req);
	return r;
}

/* check: offline, no daemon and no root; argv[-1] is "check" itself. */
static int
do_check(const struct cmdspec *c, int argc, char **argv)
{
	return vsctl_check(argc + 1, argv - 1);
}

/* import: offline, no daemon and no root; argv[-1] is "import" itself. */
static int
do_import(const struct cmdspec *c, int argc, char **argv)
{
	return vsctl_import(argc + 1, argv - 1);
}

/* apply: vsd reads the file itself (it checks who owns it), so send an absolute path. */
static int
do_apply(const struct cmdspec *c, int argc, char **argv)
{
	struct buf req = { 0 };
	const char *file = NULL;
	int i, prune = 0, dry = 0, r;
	char *abs;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--prune") == 0)
			prune = 1;
		else if (strcmp(argv[i], "--dry-run") == 0)
			dry = 1;
		else if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (argv[i][0] == '-' && argv[i][1])
			return vsctl_fail(VX_USAGE, "apply: unknown option '%s'", argv[i]);
		else if (file)
			return vsctl_fail(VX_USAGE, "apply: one rule file at a time ('%s' is extra)", argv[i]);
		else
			file = argv[i];
	}
	if (!file)
		return vsctl_fail(VX_USAGE, "apply: no rule file given; usage: vsctl %s", c->usage);
	/* links left in: vsd checks who owns each (vsrules(5), SECURITY) */
	if (!(abs = path_absolute(file)) || access(abs, F_OK) < 0) {
		int e = errno;

		free(abs);
		return vsctl_fail(vx_from_errno(e), "apply: %s: %s", file, strerror(e));
	}
	proto_add(&req, "apply");
	proto_addf(&req, "path=%s", abs);
	if (prune)
		proto_add(&req, "prune=1");
	if (dry)
		proto_add(&req, "dry-run=1");
	free(abs);
	r = call(&req, -1, 0);
	buf_free(&req);
	return r;
}

static const struct optspec limit_opts[] = {
	{ "cpu", 1 }, { "cpu-max", 1 }, { "mem", 1 }, { "pids", 1 },
	/* the socket gate */
	{ "tos", 1 }, { "dscp", 1 }, { "mark", 1 }, { "priority", 1 },
	/* the network share (vsd/netshare.c) */
	{ "net-share", 1 }, { "net-max", 1 }, { "dev", 1 }, { "dev-rate", 1 },
	{ NULL, 0 },
};
static const struct optspec destroy_opts[] = { { "force", 0 }, { NULL, 0 } };
static const struct optspec exec_opts[] = { { "user", 1 }, { "group", 1 }, { NULL, 0 } };
static const struct optspec reload_opts[] = { { "prune", 0 }, { "dry-run", 0 }, { NULL, 0 } };

static const struct cmdspec cmds[] = {
	{ "create", do_remote, "name", limit_opts,
	  "create NAME --cpu P% [--cpu-max P%] [--mem SIZE] [--pids N] "
	  "[--tos TOS|--dscp DSCP] [--mark N] [--priority N] "
	  "[--net-share P% [--net-max RATE] [--dev IFACE] [--dev-rate RATE]]" },
	{ "set", do_remote, "name", limit_opts,
	  "set NAME [--cpu P%] [--cpu-max P%|none] [--mem SIZE|none] [--pids N|none] "
	  "[--tos TOS|--dscp DSCP|none] [--mark N|none] [--priority N|none] "
	  "[--net-share P%|none] [--net-max RATE|none] [--dev IFACE] [--dev-rate RATE]" },
	{ "destroy", do_remote, "name", destroy_opts, "destroy NAME [--force]" },
	{ "list", do_list, "", NULL, "list [--json|--names]" },
	{ "show", do_remote, "name", NULL, "show NAME [--json]" },
	{ "attach", do_remote, "name pid...", NULL, "attach NAME PID..." },
	{ "exec", do_exec, "name", exec_opts,
	  "exec NAME [--user USER [--group GROUP]] -- CMD [ARGS...]" },
	{ "conns", do_remote, "name?", NULL, "conns [NAME] [--json]" },
	{ "metrics", do_metrics, "", NULL, "metrics" },
	{ "run", do_run, "", NULL, "run [--gate accept] --home VS [--name NAME] "
	  "[--user USER [--group GROUP]] [--pm-qos on|off] [--fast on|exact|off] [--trace FILE] "
	  "-- CMD [ARGS...]" },
	{ "services", do_services, "", NULL, "services [--json]" },
	{ "top", do_top, "", NULL, "top [-b] [-n ITERATIONS] [-d SECONDS] "
	  "[-s cpu|mem|name|procs|conns|throttle|events]" },
	{ "service", do_service, "", NULL, "service start|stop|restart NAME" },
	{ "check", do_check, "", NULL, "check [--dump] [--quiet] FILE" },
	{ "import", do_import, "", NULL,
	  "import [--per-site] [--apache|--nginx|--auto] [-o FILE] [--root DIR]" },
	{ "apply", do_apply, "", NULL, "apply FILE [--prune] [--dry-run]" },
	{ "reload", do_remote, "", reload_opts, "reload [--prune] [--dry-run]" },
};

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: vsctl [--socket PATH] [--json] COMMAND [ARGS]\n"
		   "       vsctl help [COMMAND] | COMMAND --help | --version\n\ncommands:\n");
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(f, "  vsctl %s\n", cmds[i].usage);
	fprintf(f, "  vsctl help [COMMAND]\n");
}

static const struct cmdspec *
find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (strcmp(name, cmds[i].name) == 0)
			return &cmds[i];
	return NULL;
}

/* vsctl help [CMD] */
static int
help(int argc, char **argv)
{
	const struct cmdspec *c;
	const char *name = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			continue;	/* main() saw it: it shapes errors */
		if (name)
			return vsctl_fail(VX_USAGE, "help: one command at a time");
		name = argv[i];
	}
	if (!name && json) {
		struct buf b = { 0 };

		/* {"commands": [{"command": ..., "usage": ...}, ...]} */
		buf_printf(&b, "{\"commands\": [");
		for (i = 0; i < (int)ARRAY_SIZE(cmds); i++) {
			buf_printf(&b, "%s{\"command\": \"%s\", \"usage\": ", i ? ", " : "",
				   cmds[i].name);
			buf_json_str(&b, cmds[i].usage);
			buf_printf(&b, "}");
		}
		buf_printf(&b, "]}\n");
		fputs(b.p ? b.p : "", stdout);
		buf_free(&b);
		return 0;
	}
	if (!name) {
		usage(stdout);
		return 0;
	}
	if (strcmp(name, "help") == 0)
		return vsctl_help("help", "help [COMMAND]", stdout);
	if (!(c = find_cmd(name)))
		return vsctl_fail(VX_USAGE, "help: unknown command '%s' (vsctl help lists them)",
				  name);
	return vsctl_help(c->name, c->usage, stdout);
}

/* CMD --help (or -h) before "--": the command's help, and nothing else runs. */
static int
wants_help(int argc, char **argv)
{
	int i;

	for (i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

/* --json among the global options after argv[a], which end at the command. */
static int
later_json(int argc, char **argv, int a)
{
	for (a++; a < argc && argv[a][0] == '-'; a++) {
		if (strcmp(argv[a], "--json") == 0)
			return 1;
		if (strcmp(argv[a], "--socket") == 0)
			a++;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	const char *env = getenv("VSD_SOCKET");
	const struct cmdspec *cmd;
	int a = 1, c;

	if (env && *env)
		socket_path = env;
	for (; a < argc && argv[a][0] == '-'; a++) {
		if (strcmp(argv[a], "--socket") == 0 && a + 1 < argc) {
			socket_path = argv[++a];
		} else if (strncmp(argv[a], "--socket=", 9) == 0) {
			socket_path = argv[a] + 9;
		} else if (strcmp(argv[a], "--json") == 0) {
			json = 1;
		} else if (strcmp(argv[a], "--socket") == 0) {
			if (!json)
				usage(stderr);
			return vsctl_fail(VX_USAGE, "option --socket needs a value");
		} else if (strcmp(argv[a], "-h") == 0 || strcmp(argv[a], "--help") == 0) {
			/* "vsctl --help --json" is "vsctl help --json" */
			json |= later_json(argc, argv, a);
			return help(0, NULL);
		} else if (strcmp(argv[a], "--version") == 0) {
			if (json || later_json(argc, argv, a))
				printf("{\"name\": \"vsctl\", \"version\": \"%s\"}\n", PACKAGE_VERSION);
			else
				printf("vsctl %s\n", PACKAGE_VERSION);
			return 0;
		} else {
			/* under --json, the error object alone (stderr stays empty) */
			if (!json)
				usage(stderr);
			return vsctl_fail(VX_USAGE, "unknown option '%s'", argv[a]);
		}
	}
	if (a == argc) {
		if (json)
			return vsctl_fail(VX_USAGE, "no command given (vsctl help lists them)");
		usage(stderr);
		return VX_USAGE;
	}
	/* --json anywhere before "--" also shapes the errors found while parsing. */
	for (c = a; c < argc && strcmp(argv[c], "--") != 0; c++)
		if (strcmp(argv[c], "--json") == 0)
			json = 1;
	if (strcmp(argv[a], "help") == 0)
		return help(argc - a - 1, argv + a + 1);
	if (!(cmd = find_cmd(argv[a])))
		return vsctl_fail(VX_USAGE, "unknown command '%s' (vsctl help lists them)", argv[a]);
	if (wants_help(argc - a - 1, argv + a + 1))
		return vsctl_help(cmd->name, cmd->usage, stdout);
	return cmd->fn(cmd, argc - a - 1, argv + a + 1);
}
