// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `vsctl import`, Apache: the vhosts Apache itself reports (apache2ctl -S:
 * each one's file and line), then each vhost read from its file, from
 * <VirtualHost> to the matching </VirtualHost>: ServerName, ServerAlias,
 * DocumentRoot and the PHP handler (SetHandler "proxy:unix:SOCK|fcgi://..."
 * or "proxy:fcgi://HOST:PORT", also inside <FilesMatch>; Include'd files
 * inside the vhost are read where they stand). Asking Apache, rather than
 * walking its Include tree ourselves, gets exactly the vhosts it serves,
 * Defines, IfModule and all.
 *
 * A vhost with no handler of its own takes the one set for the whole
 * server: Debian's php8.2-fpm package has Apache use its pool for every
 * vhost that way (a2enconf php8.2-fpm). That one is read from
 * ServerRoot/apache2.conf and what it includes, outside every <VirtualHost>.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import.h"

#define INCLUDE_DEPTH	16

struct ap {
	struct imp *im;
	char	 serverroot[4096];
	int	 server;	/* reading the server's own directives, not a vhost's */
};

/* The words of a directive line: quotes group, a backslash escapes in them. */
static size_t
ap_words(char *s, char **w, size_t max)
{
	size_t n = 0;

	while (*s && n < max) {
		char *o;

		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		w[n++] = o = s;
		if (*s == '"') {
			w[n - 1] = o = ++s;
			while (*s && *s != '"') {
				if (*s == '\\' && s[1])
					s++;
				*o++ = *s++;
			}
			if (*s)
				s++;
		} else {
			while (*s && !isspace((unsigned char)*s))
				*o++ = *s++;
		}
		if (*s)
			s++;
		*o = '\0';
	}
	return n;
}

/* "proxy:unix:/run/php/x.sock|fcgi://localhost" -> "/run/php/x.sock";
 * "proxy:fcgi://127.0.0.1:9000/" -> "127.0.0.1:9000". */
static char *
ap_handler(const char *h)
{
	const char *p;
	size_t n;

	if (strncasecmp(h, "proxy:", 6) != 0)
		return NULL;
	h += 6;
	if (strncasecmp(h, "unix:", 5) == 0) {
		h += 5;
		n = strcspn(h, "|");
		return strndup(h, n);
	}
	if (strncasecmp(h, "fcgi://", 7) == 0) {
		h += 7;
		p = h + strcspn(h, "/");
		return strndup(h, p - h);
	}
	return NULL;
}

static int ap_lines(struct ap *a, struct imp_site *s, const char *file, unsigned from, int depth);

static void
ap_include(struct ap *a, struct imp_site *s, const char *pat, int optional, const char *file,
	   unsigned line, int depth)
{
	char path[8192];
	glob_t g;
	size_t i;
	int r;

	if (pat[0] == '/')
		snprintf(path, sizeof(path), "%s", pat);
	else
		snprintf(path, sizeof(path), "%s/%s", a->serverroot, pat);
	r = glob(path, GLOB_ERR, NULL, &g);
	if (r == GLOB_NOMATCH) {
		if (!optional && !strpbrk(path, "*?["))
			imp_error(a->im, file, line, "Include %s: No such file or directory", path);
		return;
	}
	if (r != 0) {
		imp_error(a->im, file, line, "Include %s: cannot read", path);
		return;
	}
	for (i = 0; i < g.gl_pathc; i++)
		ap_lines(a, s, g.gl_pathv[i], 0, depth + 1);
	globfree(&g);
}

/*
 * The directives of one vhost: from line `from` of file (its <VirtualHost>)
 * to the matching </VirtualHost>, or the whole file (from 0: an Include).
 */
static int
ap_lines(struct ap *a, struct imp_site *s, const char *file, unsigned from, int depth)
{
	char *line = NULL, *w[64];
	size_t cap = 0, n;
	unsigned no = 0, vdepth = 0;
	ssize_t len;
	FILE *f;

	if (depth > INCLUDE_DEPTH) {
		imp_error(a->im, file, 1, "Includes nest more than %d deep", INCLUDE_DEPTH);
		return -ELOOP;
	}
	if (!(f = fopen(file, "re"))) {
		int e = errno;

		imp_error(a->im, s->file, s->line, "cannot read %s: %s", file, strerror(e));
		return -e;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		no++;
		/* a backslash at the end of a line continues it */
		while (len > 1 && line[len - 1] == '\n' && line[len - 2] == '\\') {
			char *more = NULL;
			size_t mcap = 0;
			ssize_t ml = getline(&more, &mcap, f);

			if (ml <= 0) {
				free(more);
				break;
			}
			no++;
			line[len - 2] = ' ';
			line[len - 1] = '\0';
			line = realloc(line, len + ml + 1);
			memcpy(line + len - 1, more, ml + 1);
			len = len - 1 + ml;
			cap = len + 1;
			free(more);
		}
		if (from && no < from)
			continue;
		n = ap_words(line, w, 64);
		if (n == 0 || w[0][0] == '#')
			continue;
		if (strcasecmp(w[0], "<VirtualHost") == 0) {
			if (vdepth++ == 0 && from && n > 1) {
				char *c = strrchr(w[1], ':');

				s->port = c ? (unsigned)atoi(c + 1) : 80;
			}
			continue;
		}
		if (strcasecmp(w[0], "</VirtualHost>") == 0) {
			if (vdepth)
				vdepth--;
			if (from && vdepth == 0)
				break;
			continue;
		}
		if (a->server && vdepth)
			continue;
		if (strcasecmp(w[0], "ServerName") == 0 && n > 1) {
			free(s->host);
			s->host = strdup(w[1]);
		} else if (strcasecmp(w[0], "ServerAlias") == 0) {
			for (size_t i = 1; i < n; i++)
				imp_site_alias(s, w[i]);
		} else if (strcasecmp(w[0], "DocumentRoot") == 0 && n > 1) {
			free(s->docroot);
			s->docroot = strdup(w[1]);
		} else if (strcasecmp(w[0], "SetHandler") == 0 && n > 1 && !s->fcgi) {
			s->fcgi = ap_handler(w[1]);
		} else if (strcasecmp(w[0], "ProxyPassMatch") == 0 && n > 2 && !s->fcgi) {
			s->fcgi = ap_handler(w[2]);
		} else if ((strcasecmp(w[0], "Include") == 0 ||
			    strcasecmp(w[0], "IncludeOptional") == 0) && n > 1) {
			ap_include(a, s, w[1], strcasecmp(w[0], "IncludeOptional") == 0, file, no,
				   depth);
		}
	}
	if (from && vdepth != 0 && no >= from)
		imp_error(a->im, file, from, "no </VirtualHost> for this <VirtualHost>");
	else if (from && no < from)
		imp_error(a->im, file, from, "Apache names this line, but %s has %u lines", file, no);
	free(line);
	fclose(f);
	return 0;
}

/* The server-wide handler, for the vhosts from site `first` on that have none. */
static void
ap_server_handler(struct ap *a, size_t first)
{
	struct imp_site srv = { 0 };
	char conf[8192];
	size_t i;

	for (i = first; i < a->im->nsite && a->im->site[i].fcgi; i++)
		;
	if (i == a->im->nsite)
		return;
	snprintf(conf, sizeof(conf), "%s/apache2.conf", a->serverroot);
	if (!(srv.file = strdup(conf)))
		return;
	srv.line = 1;
	a->server = 1;
	ap_lines(a, &srv, conf, 0, 0);
	a->server = 0;
	for (i = first; srv.fcgi && i < a->im->nsite; i++)
		if (!a->im->site[i].fcgi)
			a->im->site[i].fcgi = strdup(srv.fcgi);
	imp_site_free(&srv);
}

/* Apache's own error: "Syntax error on line N of FILE:" then the message, on
 * the same line or the next (eol: the end of the line, or NULL). */
static int
ap_failed_line(struct imp *im, const char *p, const char *eol)
{
	const char *se = strstr(p, "Syntax error on line "), *msg;
	char file[4096];
	unsigned line;

	if (!se || (eol && se > eol) ||
	    sscanf(se, "Syntax error on line %u of %4095[^:\n]:", &line, file) != 2)
		return 0;
	msg = se + strcspn(se, ":") + 1;
	while (*msg == ' ')
		msg++;
	if (*msg == '\n' || !*msg)
		msg = eol ? eol + 1 : "";
	imp_error(im, file, line, "%.*s", (int)strcspn(msg, "\n"), msg);
	return 1;
}

int
imp_apache(struct imp *im, const char *cmd)
{
	struct buf out = { 0 }, err = { 0 };
	struct ap a = { .im = im };
	char *p, *eol, *next;
	int r;

	size_t first = im->nsite;

	snprintf(a.serverroot, sizeof(a.serverroot), "/etc/apache2");
	r = imp_run(cmd, "-S", &out, &err);
	if (r != 0) {
		struct buf all = { 0 };

		buf_printf(&all, "%s%s", err.p ? err.p : "", out.p ? out.p : "");
		imp_failed(im, cmd, r, all.p ? all.p : "", ap_failed_line);
		buf_free(&all);
		goto out;
	}
	for (p = out.p; p && *p; p = eol ? eol + 1 : NULL) {
		eol = strchr(p, '\n');
		if (eol)
			*eol = '\0';
		if (strncmp(p, "ServerRoot: \"", 13) == 0) {
			snprintf(a.serverroot, sizeof(a.serverroot), "%.*s",
				 (int)strcspn(p + 13, "\""), p + 13);
		}
	}
	/* the vhosts: every "(FILE:LINE)" Apache lists, once */
	for (p = out.p; p && p < out.p + out.len; p = next) {
		char *open = strrchr(p, '('), *colon, *end;
		unsigned line;
		size_t i;
		struct imp_site *s;

		next = p + strlen(p) + 1;
		if (!open || !(end = strrchr(open, ')')) || end[1] != '\0' ||
		    !(colon = strrchr(open, ':')))
			continue;
		*colon = *end = '\0';
		line = (unsigned)strtoul(colon + 1, NULL, 10);
		for (i = 0; i < im->nsite; i++)
			if (im->site[i].line == line && strcmp(im->site[i].file, open + 1) == 0)
				break;
		if (i < im->nsite || line == 0)
			continue;
		if (!(s = imp_site_new(im, "apache", open + 1, line))) {
			r = -ENOMEM;
			goto out;
		}
		s->port = 80;
		im->napache++;
		ap_lines(&a, s, s->file, line, 0);
	}
	ap_server_handler(&a, first);
	r = 0;
out:
	buf_free(&out);
	buf_free(&err);
	return r;
}
