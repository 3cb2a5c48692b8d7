// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `vsctl import`, nginx: `nginx -T`, which prints every file of the
 * configuration it loaded, each after a "# configuration file NAME:" line.
 * Each file is read on its own with nginx's lexical rules (words, quotes,
 * "{", "}", ";", "#" comments); a server block gives a site: its first
 * server_name, the others as aliases, its root (the server's own, not a
 * location's), its listen port and the first fastcgi_pass inside it. A
 * fastcgi_pass that names an upstream block is that block's first server.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

#define NG_DEPTH	32
#define NG_WORDS	64

/* The upstream blocks of the whole dump: name -> its first server. */
struct ng_upstreams {
	char	**name;
	char	**addr;
	size_t	 n;
};

struct ng {
	struct imp *im;
	struct ng_upstreams *ups;
	int	 up_depth;		/* the depth of the open upstream block, or -1 */
	const char *file;
	unsigned line;
	char	 *stack[NG_DEPTH];	/* the block names */
	int	 depth;
	int	 server_depth;		/* the depth of the open server block, or -1 */
	struct imp_site *site;
	char	*w[NG_WORDS];
	unsigned wline;			/* the line of w[0] */
	size_t	 nw;
};

static void
ng_clear(struct ng *n)
{
	while (n->nw)
		free(n->w[--n->nw]);
}

/* unix:/run/php/x.sock -> /run/php/x.sock; host:port as it is */
static char *
ng_addr(const char *a)
{
	return strdup(strncmp(a, "unix:", 5) == 0 ? a + 5 : a);
}

/* An upstream block opens: its name, its address to come. */
static void
ng_upstream_open(struct ng *n)
{
	struct ng_upstreams *u = n->ups;
	char **nn = realloc(u->name, (u->n + 1) * sizeof(*nn)), **na;

	if (nn)
		u->name = nn;
	na = nn ? realloc(u->addr, (u->n + 1) * sizeof(*na)) : NULL;
	if (!na)
		return;
	u->addr = na;
	u->name[u->n] = strdup(n->w[1]);
	u->addr[u->n++] = NULL;
	n->up_depth = n->depth;
}

/* A server directive of the open upstream block: its first one is its address. */
static void
ng_upstream_server(struct ng *n)
{
	struct ng_upstreams *u = n->ups;

	if (u->addr[u->n - 1] || n->nw < 2 || strcmp(n->w[0], "server") != 0 ||
	    n->depth != n->up_depth + 1)
		return;
	u->addr[u->n - 1] = ng_addr(n->w[1]);
}

/* A directive (at ";") in the open server block */
static void
ng_directive(struct ng *n)
{
	struct imp_site *s = n->site;
	size_t i;

	if (n->up_depth >= 0 && n->nw)
		ng_upstream_server(n);
	if (!s || n->nw == 0)
		return;
	if (strcmp(n->w[0], "server_name") == 0 && n->depth == n->server_depth + 1) {
		for (i = 1; i < n->nw; i++) {
			if (!s->host && !s->nalias)
				s->host = strdup(n->w[i]);	/* "_", "~re": import.c says why not */
			else
				imp_site_alias(s, n->w[i]);
		}
	} else if (strcmp(n->w[0], "root") == 0 && n->nw > 1 && n->depth == n->server_depth + 1) {
		free(s->docroot);
		s->docroot = strdup(n->w[1]);
	} else if (strcmp(n->w[0], "listen") == 0 && n->nw > 1 && s->port == 0) {
		const char *c = strrchr(n->w[1], ':');

		s->port = (unsigned)atoi(c ? c + 1 : n->w[1]);
		if (s->port == 0)
			s->port = 80;	/* unix:... */
	} else if (strcmp(n->w[0], "fastcgi_pass") == 0 && n->nw > 1 && !s->fcgi) {
		s->fcgi = ng_addr(n->w[1]);
	}
}

static void
ng_word(struct ng *n, const char *p, size_t len)
{
	if (n->nw == 0)
		n->wline = n->line;
	if (n->nw < NG_WORDS)
		n->w[n->nw++] = strndup(p, len);
}

static void
ng_open(struct ng *n)
{
	const char *name = n->nw ? n->w[0] : "";

	if (n->depth >= NG_DEPTH) {
		imp_error(n->im, n->file, n->line, "blocks nest more than %d deep", NG_DEPTH);
		ng_clear(n);
		return;
	}
	n->stack[n->depth] = strdup(name);
	if (strcmp(name, "upstream") == 0 && n->nw > 1 && n->up_depth < 0)
		ng_upstream_open(n);
	/* an included file's server blocks are at its top: its includer's http block */
	if (strcmp(name, "server") == 0 && n->server_depth < 0 &&
	    (n->depth == 0 || strcmp(n->stack[n->depth - 1], "http") == 0)) {
		n->site = imp_site_new(n->im, "nginx", n->file, n->wline);
		n->server_depth = n->depth;
		n->im->nnginx++;
	}
	n->depth++;
	ng_clear(n);
}

static void
ng_close(struct ng *n)
{
	ng_clear(n);
	if (n->depth == 0)
		return;
	free(n->stack[--n->depth]);
	if (n->depth == n->up_depth)
		n->up_depth = -1;
	if (n->depth == n->server_depth) {
		if (n->site && n->site->port == 0)
			n->site->port = 80;
		n->site = NULL;
		n->server_depth = -1;
	}
}

/* One file's text, from the dump. */
static void
ng_file(struct imp *im, struct ng_upstreams *ups, const char *file, const char *p,
	const char *end)
{
	struct ng n = { .im = im, .ups = ups, .file = file, .line = 1, .server_depth = -1,
			.up_depth = -1 };

	while (p < end) {
		if (*p == '\n') {
			n.line++;
			p++;
		} else if (isspace((unsigned char)*p)) {
			p++;
		} else if (*p == '#') {
			while (p < end && *p != '\n')
				p++;
		} else if (*p == ';') {
			ng_directive(&n);
			ng_clear(&n);
			p++;
		} else if (*p == '{') {
			ng_open(&n);
			p++;
		} else if (*p == '}') {
			ng_close(&n);
			p++;
		} else if (*p == '"' || *p == '\'') {
			char q = *p++;
			const char *s = p;

			while (p < end && *p != q) {
				if (*p == '\\' && p + 1 < end)
					p++;
				if (*p == '\n')
					n.line++;
				p++;
			}
			ng_word(&n, s, p - s);
			if (p < end)
				p++;
		} else {
			const char *s = p;

			while (p < end && !isspace((unsigned char)*p) && !strchr(";{}\"'", *p))
				p++;
			ng_word(&n, s, p - s);
		}
	}
	ng_clear(&n);
	while (n.depth)
		free(n.stack[--n.depth]);
}

/* nginx's error: "nginx: [emerg] PID#TID: MESSAGE in FILE:LINE" */
static int
ng_failed_line(struct imp *im, const char *p, const char *eol)
{
	size_t len = eol ? (size_t)(eol - p) : strlen(p);
	char tail[4096], *msg, *in, *colon;

	snprintf(tail, sizeof(tail), "%.*s", (int)len, p);
	if (!(msg = strstr(tail, "[emerg] ")) || !(in = strstr(tail, " in /")) ||
	    !(colon = strrchr(in, ':')))
		return 0;
	*colon = '\0';
	msg += strlen("[emerg] ");
	if (strchr(msg, '#') && strchr(msg, '#') < in && strstr(msg, ": "))
		msg = strstr(msg, ": ") + 2;
	imp_error(im, in + 4, (unsigned)atoi(colon + 1), "%.*s", (int)(in - msg), msg);
	return 1;
}

int
imp_nginx(struct imp *im, const char *cmd)
{
	static const char mark[] = "# configuration file ";
	struct buf out = { 0 }, err = { 0 };
	struct ng_upstreams ups = { 0 };
	size_t first = im->nsite;
	char *p, *next, *end;
	int r;

	r = imp_run(cmd, "-T", &out, &err);
	if (r != 0) {
		imp_failed(im, cmd, r, err.p ? err.p : "", ng_failed_line);
		goto out;
	}
	end = out.p + out.len;
	for (p = out.p; p && p < end; p = next) {
		char *eol, *name;

		if (strncmp(p, mark, sizeof(mark) - 1) != 0 || !(eol = strchr(p, '\n')) ||
		    eol[-1] != ':') {
			next = strchr(p, '\n');
			next = next ? next + 1 : NULL;
			continue;
		}
		name = strndup(p + sizeof(mark) - 1, eol - 1 - (p + sizeof(mark) - 1));
		/* the file runs to the next marker at the start of a line */
		for (next = eol + 1; next < end; ) {
			if (strncmp(next, mark, sizeof(mark) - 1) == 0)
				break;
			next = strchr(next, '\n');
			next = next ? next + 1 : end;
		}
		ng_file(im, &ups, name, eol + 1, next);
		free(name);
	}
	/* fastcgi_pass NAME: the upstream NAME, wherever in the dump it is */
	for (size_t i = first; i < im->nsite; i++)
		for (size_t k = 0; im->site[i].fcgi && k < ups.n; k++)
			if (ups.addr[k] && strcmp(im->site[i].fcgi, ups.name[k]) == 0) {
				free(im->site[i].fcgi);
				im->site[i].fcgi = strdup(ups.addr[k]);
				break;
			}
	r = 0;
out:
	for (size_t k = 0; k < ups.n; k++) {
		free(ups.name[k]);
		free(ups.addr[k]);
	}
	free(ups.name);
	free(ups.addr);
	buf_free(&out);
	buf_free(&err);
	return r;
}
