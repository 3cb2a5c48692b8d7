// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * How vsctl reports: errors (a line on stderr, or with --json an object on
 * stdout, so that a script reads one stream and gets either its answer or
 * an error it can parse) with the exit status of their class
 * (lib/exitcode.h), and the help texts of `vsctl help [CMD]` and `CMD --help`.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/exitcode.h"
#include "lib/util.h"
#include "vsctl.h"

int vsctl_json;

/* {"error": MSG, "class": "...", "exit": N[, "errors": [LINE, ...]]} */
static void
json_error(struct buf *b, int vx, const char *msg, const char *lines)
{
	buf_printf(b, "{\"error\": ");
	buf_json_str(b, msg);
	buf_printf(b, ", \"class\": \"%s\", \"exit\": %d", vx_name(vx), vx);
	if (lines) {
		buf_printf(b, ", \"errors\": ");
		buf_json_lines(b, lines);
	}
	buf_printf(b, "}\n");
}

int
vsctl_fail_lines(int vx, const char *msg, const char *lines)
{
	if (vsctl_json) {
		struct buf b = { 0 };

		json_error(&b, vx, msg, lines);
		fputs(b.p ? b.p : "", stdout);
		buf_free(&b);
	} else {
		fprintf(stderr, "vsctl: %s\n", msg);
		if (lines)
			fputs(lines, stderr);
	}
	return vx;
}

int
vsctl_fail(int vx, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return vsctl_fail_lines(vx, msg, NULL);
}

/* Why the connection failed, and its class: no daemon, or no permission. */
int
vsctl_connect_failed(const char *socket_path, int r)
{
	if (r == -EACCES || r == -EPERM)
		return vsctl_fail(VX_PERM, "cannot connect to vsd at %s: %s (the socket is open "
				  "to root and vsd's --group only)", socket_path, strerror(-r));
	if (r == -ENOENT || r == -ECONNREFUSED || r == -ENOTSOCK)
		return vsctl_fail(VX_NODAEMON, "cannot connect to vsd at %s: %s (is vsd running?)",
				  socket_path, strerror(-r));
	return vsctl_fail(VX_INTERNAL, "cannot connect to vsd at %s: %s", socket_path,
			  strerror(-r));
}

/* What `vsctl help CMD` says beyond the usage line; kept short, vsctl(8) has the rest. */
static const struct {
	const char *name, *text;
} helps[] = {
	{ "create", "Create a VS with a guaranteed CPU share and optional limits.\n"
	  "  --cpu P%        guaranteed share of the machine (required); all VSs <= 100%\n"
	  "  --cpu-max P%    hard cap, of the whole machine\n"
	  "  --mem SIZE      memory limit: 512M, 1.5G, 64KiB (powers of 1024)\n"
	  "  --pids N        most processes and threads, 1 to 4194304\n"
	  "  --tos, --dscp, --mark, --priority   the socket gate's settings\n" },
	{ "set", "Change a VS's limits in place; 'none' removes an optional one.\n" },
	{ "destroy", "Remove a VS. With processes in it, --force kills them.\n" },
	{ "list", "List the VSs: limits, processes, CPU time, status.\n" },
	{ "show", "Show one VS: limits, cgroups, drift, socket gate.\n" },
	{ "attach", "Move running processes (by pid) into a VS.\n" },
	{ "exec", "Run a command inside a VS; vsctl exits with its status.\n" },
	{ "conns", "List the connections the socket gate records, of one VS or all.\n" },
	{ "run", "Run a shared service under the accept gate (see vsctl-run(8)).\n" },
	{ "services", "Show the gated services and what each served for which VS.\n" },
	{ "service", "Start, stop or restart a service a rule file declares.\n" },
	{ "check", "Check a rule file offline (no daemon, no root needed).\n"
	  "  --dump     print the compiled rules\n"
	  "  --quiet    print nothing when the file is fine\n" },
	{ "import", "Write a rule file from this machine's Apache or nginx vhosts and PHP-FPM\n"
	  "pools (no daemon, no root needed); the report goes to stderr.\n"
	  "  --per-site  one VS per site, not per owner of its document root\n"
	  "  -o FILE     write FILE (only if there is no error), not stdout\n"
	  "  --root DIR  read the configuration's paths under DIR\n" },
	{ "apply", "Apply a rule file as one transaction; --dry-run shows each change\n"
	  "(old -> new) without making it; --prune destroys VSs the file lacks.\n" },
	{ "reload", "Apply the rule file applied last again.\n" },
	{ "help", "Show the commands, or one command's help.\n" },
};

static const char *
help_text(const char *cmd)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(helps); i++)
		if (strcmp(helps[i].name, cmd) == 0)
			return helps[i].text;
	return NULL;
}

int
vsctl_help(const char *cmd, const char *usage, FILE *f)
{
	const char *text = help_text(cmd);

	if (vsctl_json) {
		struct buf b = { 0 };

		buf_printf(&b, "{\"command\": ");
		buf_json_str(&b, cmd);
		buf_printf(&b, ", \"usage\": ");
		buf_json_str(&b, usage);
		buf_printf(&b, ", \"help\": ");
		buf_json_str(&b, text);
		buf_printf(&b, "}\n");
		fputs(b.p ? b.p : "", f);
		buf_free(&b);
		return 0;
	}
	fprintf(f, "usage: vsctl %s\n", usage);
	if (text)
		fprintf(f, "\n%s", text);
	/* top and metrics print a format of their own, not JSON (vsctl(8));
	 * import writes a rule file */
	if (strcmp(cmd, "top") == 0 || strcmp(cmd, "metrics") == 0 || strcmp(cmd, "import") == 0)
		fprintf(f, "\nIt has no --json output; see vsctl(8) for exit statuses.\n");
	else
		fprintf(f, "\nEvery command but top, metrics and import takes --json; see vsctl(8) for exit "
			"statuses.\n");
	return 0;
}
