// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `vsctl import [--per-site] [--apache|--nginx|--auto] [-o FILE] [--root DIR]`:
 * a rule file from the configuration of the web servers and PHP-FPM pools
 * of this machine (vsctl(8)). It only reads: no vsd, no root
 * (read access to the configuration). Sources: import-apache.c,
 * import-nginx.c, import-fpm.c; the sites merged: import-sites.c; the file
 * and the report: import-out.c; name expressions: import-fold.c.
 * Any error in the configuration is reported as FILE:LINE: and nothing is
 * written.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "lib/util.h"
#include "import.h"
#include "vsctl.h"

void
imp_error(struct imp *im, const char *file, unsigned line, const char *fmt, ...)
{
	va_list ap;

	if (line)
		buf_printf(&im->errors, "%s:%u: ", file, line);
	else
		buf_printf(&im->errors, "%s: ", file);
	va_start(ap, fmt);
	{
		char msg[2048];

		vsnprintf(msg, sizeof(msg), fmt, ap);
		buf_printf(&im->errors, "%s\n", msg);
	}
	va_end(ap);
}

struct imp_site *
imp_site_new(struct imp *im, const char *front, const char *file, unsigned line)
{
	struct imp_site *n = realloc(im->site, (im->nsite + 1) * sizeof(*n));

	if (!n)
		return NULL;
	im->site = n;
	n = &im->site[im->nsite++];
	memset(n, 0, sizeof(*n));
	n->front = front;
	n->file = strdup(file);
	n->line = line;
	n->account = -1;
	return n;
}

void
imp_site_alias(struct imp_site *s, const char *name)
{
	char **n = realloc(s->alias, (s->nalias + 1) * sizeof(*n));

	if (!n)
		return;
	s->alias = n;
	s->alias[s->nalias++] = strdup(name);
}

int
imp_run(const char *cmd, const char *arg, struct buf *out, struct buf *err)
{
	char *line = NULL, tmpl[] = "/tmp/vsctl-import.XXXXXX";
	int pfd[2], efd, status;
	char chunk[65536];
	ssize_t n;
	pid_t pid;

	if ((efd = mkostemp(tmpl, O_CLOEXEC)) < 0)
		return -errno;
	unlink(tmpl);
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		close(efd);
		return -errno;
	}
	if (asprintf(&line, "%s %s", cmd, arg) < 0) {
		close(efd);
		close(pfd[0]);
		close(pfd[1]);
		return -ENOMEM;
	}
	if ((pid = fork()) < 0) {
		int e = errno;

		close(efd);
		close(pfd[0]);
		close(pfd[1]);
		free(line);
		return -e;
	}
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(efd, 2);
		execl("/bin/sh", "sh", "-c", line, (char *)NULL);
		_exit(127);
	}
	free(line);
	close(pfd[1]);
	while ((n = read(pfd[0], chunk, sizeof(chunk))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			buf_add(out, chunk, n);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	lseek(efd, 0, SEEK_SET);
	while ((n = read(efd, chunk, sizeof(chunk))) > 0)
		buf_add(err, chunk, n);
	close(efd);
	buf_add(out, "", 1);
	out->len--;
	buf_add(err, "", 1);
	err->len--;
	if (!WIFEXITED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

void
imp_failed(struct imp *im, const char *cmd, int status, const char *text,
	   int (*line_fn)(struct imp *im, const char *line, const char *eol))
{
	const char *p = text;
	int found = 0;

	if (status < 0) {
		imp_error(im, cmd, 0, "cannot run: %s", strerror(-status));
		return;
	}
	while (p && *p) {
		const char *eol = strchr(p, '\n');

		found |= line_fn(im, p, eol);
		p = eol ? eol + 1 : NULL;
	}
	if (!found)
		imp_error(im, cmd, 0, "exited with status %d: %.*s", status,
			  (int)strcspn(text, "\n"), text);
}

/*
 * A VS name for name (an owner, a host): lower case, '-' for any character
 * a VS name cannot have, "u" in front of one that does not start with a
 * letter, cut to 31, "vs-" before a reserved word; then "-2", "-3"... until
 * it is not taken. The name taken is reported when it is not name itself.
 */
static const char *const reserved[] = { "stay", "creator", "requester", "home", "tasks",
					"notify_on_release", "release_agent" };

static int
taken(char **names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return 1;
	return 0;
}

static char *
vs_for(struct imp *im, const char *what, const char *name, char **names, size_t nnames)
{
	char base[VS_NAME_MAX + 1], out[VS_NAME_MAX + 1];
	size_t i, o = 0;
	unsigned k;

	if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z')))
		base[o++] = 'u';
	for (i = 0; name[i] && o < VS_NAME_MAX; i++) {
		char c = tolower((unsigned char)name[i]);

		base[o++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ? c : '-';
	}
	base[o] = '\0';
	for (i = 0; i < ARRAY_SIZE(reserved); i++)
		if (strcmp(base, reserved[i]) == 0) {
			snprintf(out, sizeof(out), "vs-%s", base);
			snprintf(base, sizeof(base), "%s", out);
		}
	snprintf(out, sizeof(out), "%s", base);
	for (k = 2; taken(names, nnames, out) || !vs_name_valid(out); k++) {
		char sfx[16];
		int sl = snprintf(sfx, sizeof(sfx), "-%u", k);

		snprintf(out, sizeof(out), "%.*s%s", VS_NAME_MAX - sl, base, sfx);
	}
	if (strcmp(out, name) != 0)
		buf_printf(&im->renamed, "%s \"%s\" is VS %s\n", what, name, out);
	return strdup(out);
}

/* The accounts: the owners of the document roots, as VSs. */
static void
imp_accounts(struct imp *im, char ***names, size_t *nnames)
{
	size_t i, j, o = 0;

	for (i = 0; i < im->nsite; i++) {
		struct imp_site *s = &im->site[i];
		char path[8192], owner[64];
		struct passwd *pw;
		struct stat st;

		if (snprintf(path, sizeof(path), "%s%s", im->root, s->docroot) >= (int)sizeof(path) ||
		    stat(path, &st) < 0) {
			buf_printf(&im->unmapped, "%s:%u: %s: document root %s: %s\n", s->file,
				   s->line, s->host, s->docroot, strerror(errno));
			imp_site_free(s);
			continue;
		}
		if ((pw = getpwuid(st.st_uid)))
			snprintf(owner, sizeof(owner), "%s", pw->pw_name);
		else
			snprintf(owner, sizeof(owner), "u%u", (unsigned)st.st_uid);
		for (j = 0; j < im->nacct; j++)
			if (strcmp(im->acct[j].owner, owner) == 0)
				break;
		if (j == im->nacct) {
			struct imp_account *n = realloc(im->acct, (j + 1) * sizeof(*n));

			if (!n)
				continue;
			im->acct = n;
			memset(&n[j], 0, sizeof(*n));
			n[j].owner = strdup(owner);
			im->nacct++;
		}
		s->account = (int)j;
		im->acct[j].nsites++;
		im->site[o++] = *s;
	}
	im->nsite = o;
	/* the VS names, in the order of the owners' names: the same file each time */
	{
		size_t *ord = calloc(im->nacct ? im->nacct : 1, sizeof(*ord));

		for (i = 0; ord && i < im->nacct; i++)
			ord[i] = i;
		for (i = 1; ord && i < im->nacct; i++)
			for (j = i; j > 0 && strcmp(im->acct[ord[j - 1]].owner,
						    im->acct[ord[j]].owner) > 0; j--) {
				size_t t = ord[j];

				ord[j] = ord[j - 1];
				ord[j - 1] = t;
			}
		/* owners whose names are VS names keep them; the others are mapped after */
		for (int pass = 0; ord && pass < 2; pass++)
			for (i = 0; i < im->nacct; i++) {
				struct imp_account *a = &im->acct[ord[i]];
				int as_is = vs_name_valid(a->owner) && !taken(*names, *nnames, a->owner);

				if (a->vs || as_is != (pass == 0))
					continue;
				if (im->per_site) {
					/* a name for the report's pools, not in the file */
					a->vs = strdup(a->owner);
					continue;
				}
				a->vs = vs_for(im, "owner", a->owner, *names, *nnames);
				(*names)[(*nnames)++] = a->vs;
			}
		free(ord);
	}
	for (i = 0; i < im->nsite; i++) {
		struct imp_site *s = &im->site[i];

		if (im->per_site) {
			s->vs = vs_for(im, "site", s->host[0] == '*' ? s->host + 2 : s->host,
				       *names, *nnames);
			(*names)[(*nnames)++] = s->vs;
		} else {
			s->vs = strdup(im->acct[s->account].vs);
		}
	}
}

/* Does a pool's listen take what a site's handler connects to? */
static int
listen_matches(const char *listen, const char *fcgi)
{
	const char *c;

	if (!listen || !fcgi)
		return 0;
	if (strcmp(listen, fcgi) == 0)
		return 1;
	if (listen[0] == '/' || fcgi[0] == '/')
		return 0;
	/* "9000" listens on every address; "127.0.0.1:9000" and "localhost:9000" reach it */
	c = strrchr(fcgi, ':');
	return !strchr(listen, ':') && c && strcmp(c + 1, listen) == 0;
}

static void
imp_pools(struct imp *im)
{
	for (size_t p = 0; p < im->npool; p++) {
		struct imp_pool *pl = &im->pool[p];
		char *seen = calloc(im->nacct ? im->nacct : 1, 1);

		for (size_t i = 0; i < im->nsite && seen; i++) {
			struct imp_site *s = &im->site[i];

			if (!listen_matches(pl->listen, s->fcgi))
				continue;
			pl->nsites++;
			if (!seen[s->account]) {
				seen[s->account] = 1;
				pl->naccounts++;
				pl->account = s->account;
			}
		}
		free(seen);
	}
}

static int
found(const char *cmd)
{
	char *path, *dir, *save = NULL, buf[4096];
	int r = 0;

	if (!(path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin")))
		return 0;
	for (dir = strtok_r(path, ":", &save); dir && !r; dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, sizeof(buf), "%s/%s", dir, cmd);
		r = access(buf, X_OK) == 0;
	}
	free(path);
	return r;
}

/* The command for a front end: $VAR, else NAME if PATH (with /usr/sbin) has it. */
static const char *
front_cmd(const char *var, const char *name)
{
	const char *e = getenv(var);

	if (e && *e)
		return e;
	return found(name) ? name : NULL;
}

/* Write data to file through a temp file in its directory, then rename: all or nothing. */
static int
write_out(const char *file, const struct buf *data)
{
	char *tmp = NULL;
	size_t off = 0;
	int fd, r = 0;

	if (asprintf(&tmp, "%s.XXXXXX", file) < 0)
		return -ENOMEM;
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		r = -errno;
		free(tmp);
		return r;
	}
	while (off < data->len) {
		ssize_t n = write(fd, data->p + off, data->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		off += n;
	}
	if (r == 0 && fchmod(fd, 0644) < 0)
		r = -errno;
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, file) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	free(tmp);
	return r;
}

#define USAGE "import [--per-site] [--apache|--nginx|--auto] [-o FILE] [--root DIR]"

/* Everything the model holds. The VS names are names[]'s: a site's (per
 * site) or an account's (per account) points into it. */
static void
imp_free(struct imp *im, char **names, size_t nnames)
{
	size_t i;

	for (i = 0; i < im->nsite; i++) {
		if (im->per_site)
			im->site[i].vs = NULL;
		imp_site_free(&im->site[i]);
	}
	for (i = 0; i < im->nacct; i++) {
		free(im->acct[i].owner);
		if (im->per_site)
			free(im->acct[i].vs);
	}
	for (i = 0; i < im->npool; i++) {
		struct imp_pool *pl = &im->pool[i];

		free(pl->version);
		free(pl->name);
		free(pl->user);
		free(pl->listen);
		free(pl->pm);
		free(pl->file);
	}
	for (i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	free(im->site);
	free(im->acct);
	free(im->pool);
	buf_free(&im->errors);
	buf_free(&im->unmapped);
	buf_free(&im->renamed);
}

int
vsctl_import(int argc, char **argv)
{
	const char *out_file = NULL, *apache = NULL, *nginx = NULL;
	int i, front = 0;	/* 1 apache, 2 nginx, 3 auto */
	struct imp im = { .root = "" };
	struct buf out = { 0 };
	char **names = NULL;
	size_t nnames = 0;
	int r = 0;

	/* the file and the report are text; --json would promise one JSON value */
	if (vsctl_json)
		return vsctl_fail(VX_USAGE, "import: no --json output (it writes a rule file)");
	for (i = 1; i < argc; i++) {
		int f = strcmp(argv[i], "--apache") == 0 ? 1 : strcmp(argv[i], "--nginx") == 0 ? 2 :
		    strcmp(argv[i], "--auto") == 0 ? 3 : 0;

		if (f) {
			if (front && front != f)
				return vsctl_fail(VX_USAGE, "import: one of --apache, --nginx, --auto");
			front = f;
		} else if (strcmp(argv[i], "--per-site") == 0) {
			im.per_site = 1;
		} else if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--root") == 0) {
			if (i + 1 >= argc)
				return vsctl_fail(VX_USAGE, "import: %s needs a value; usage: vsctl "
						  USAGE, argv[i]);
			if (argv[i][1] == 'o')
				out_file = argv[++i];
			else
				im.root = argv[++i];
		} else {
			return vsctl_fail(VX_USAGE, "import: unknown option or operand '%s'; usage: "
					  "vsctl " USAGE, argv[i]);
		}
	}
	/* "/" and "DIR/" are DIR: paths from the configuration start with '/' */
	{
		static char root[4096];
		size_t n;

		snprintf(root, sizeof(root), "%s", im.root);
		n = strlen(root);
		while (n > 0 && root[n - 1] == '/')
			root[--n] = '\0';
		im.root = root;
	}
	if (!front)
		front = 3;
	/* apache2ctl and nginx live in /usr/sbin, which a user's PATH may lack */
	{
		const char *path = getenv("PATH");
		char *p;

		if (asprintf(&p, "%s:/usr/sbin", path && *path ? path : "/usr/bin:/bin") >= 0) {
			setenv("PATH", p, 1);
			free(p);
		}
	}
	if (front & 1)
		apache = front_cmd("VSCTL_APACHE2CTL", "apache2ctl");
	if (front & 2)
		nginx = front_cmd("VSCTL_NGINX", "nginx");
	if (front == 1 && !apache)
		return vsctl_fail(VX_NOTFOUND, "import: apache2ctl not found (set VSCTL_APACHE2CTL)");
	if (front == 2 && !nginx)
		return vsctl_fail(VX_NOTFOUND, "import: nginx not found (set VSCTL_NGINX)");
	if (!apache && !nginx)
		return vsctl_fail(VX_NOTFOUND, "import: neither apache2ctl nor nginx found");
	if (apache)
		imp_apache(&im, apache);
	if (nginx)
		imp_nginx(&im, nginx);
	imp_fpm(&im);
	if (!im.errors.len)
		imp_sites(&im);
	if (im.errors.len) {
		fputs(im.errors.p, stderr);
		r = vsctl_fail(VX_BADVALUE, "import: nothing written: the configuration has errors");
		goto out;
	}
	names = calloc(im.nsite + im.npool + 8, sizeof(*names));
	if (!names) {
		r = vsctl_fail(VX_INTERNAL, "import: out of memory");
		goto out;
	}
	/* the homes of the gated pools come first: an owner named php82 gets php82-2 */
	for (size_t p = 0; p < im.npool; p++) {
		char home[32];

		imp_php_home(im.pool[p].version, home, sizeof(home));
		if (!taken(names, nnames, home) && vs_name_valid(home))
			names[nnames++] = strdup(home);
	}
	imp_accounts(&im, &names, &nnames);
	if (im.nsite == 0) {
		fputs(im.unmapped.p ? im.unmapped.p : "", stderr);
		r = vsctl_fail(VX_NOTFOUND, "import: nothing written: no site found");
		goto out;
	}
	imp_pools(&im);
	imp_fpm_memory(&im);
	if ((r = imp_write_rules(&im, &out)) < 0) {
		r = vsctl_fail(VX_BADVALUE, "import: nothing written: %s", strerror(-r));
		goto out;
	}
	imp_report(&im, stderr);
	if (!out_file || strcmp(out_file, "-") == 0) {
		fwrite(out.p, 1, out.len, stdout);
	} else if ((r = write_out(out_file, &out)) < 0) {
		r = vsctl_fail(vx_from_errno(r), "import: %s: %s", out_file, strerror(-r));
		goto out;
	}
	r = 0;
out:
	buf_free(&out);
	imp_free(&im, names, nnames);
	return r;
}
