// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `vsctl import`: the sites read from the front ends, made into the sites of
 * a rule file: host names as site lines take them (the others reported, not
 * dropped), one site per host name (a vhost on two ports, or in both front
 * ends, is one), each name in one site only, each with a document root.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

char *
imp_host(const char *name)
{
	char *h = strdup(name), *p;
	size_t n;

	if (!h)
		return NULL;
	for (p = h; *p; p++)
		*p = tolower((unsigned char)*p);
	if ((p = strrchr(h, ':')) && p[1] && strspn(p + 1, "0123456789") == strlen(p + 1))
		*p = '\0';
	n = strlen(h);
	if (n > 1 && h[n - 1] == '.')
		h[n - 1] = '\0';
	return h;
}

/* Why a host name cannot be a site's (NULL: it can). */
static const char *
host_why(const char *h)
{
	const char *p = h;

	if (strcmp(h, "_") == 0 || !*h)
		return "a catch-all server name";
	if (h[0] == '~')
		return "a regular expression server name";
	if (p[0] == '*' && p[1] == '.')
		p += 2;
	for (; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'))
			return *p == '*' ? "a wildcard other than *.domain" :
			    "a character a host name does not have";
	if (strstr(h, "..") || h[strlen(h) - 1] == '.' || h[0] == '.')
		return "an empty label";
	return NULL;
}


static int
cmp_site(const void *a, const void *b)
{
	const struct imp_site *x = a, *y = b;
	int c = strcmp(x->host ? x->host : "", y->host ? y->host : "");

	if (c)
		return c;
	if ((c = strcmp(x->front, y->front)))
		return c;
	if ((c = strcmp(x->file, y->file)))
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

void
imp_site_free(struct imp_site *s)
{
	for (size_t i = 0; i < s->nalias; i++)
		free(s->alias[i]);
	free(s->alias);
	free(s->host);
	free(s->docroot);
	free(s->fcgi);
	free(s->file);
	free(s->vs);
}

/* Names as site lines take them; a name that cannot be is reported, not dropped unseen. */
static int
site_names(struct imp *im, struct imp_site *s)
{
	const char *why;
	size_t i, o = 0;
	char *h;

	if (!s->host) {
		buf_printf(&im->unmapped, "%s:%u: no %s\n", s->file, s->line,
			   strcmp(s->front, "apache") == 0 ? "ServerName" : "server_name");
		return 0;
	}
	/* nginx's ".example.com" is example.com and every name under it */
	if (s->host[0] == '.' && s->host[1]) {
		char *w;

		if (asprintf(&w, "*%s", s->host) >= 0) {
			imp_site_alias(s, w);
			free(w);
		}
		memmove(s->host, s->host + 1, strlen(s->host));
	}
	h = imp_host(s->host);
	free(s->host);
	s->host = h;
	if ((why = host_why(h))) {
		buf_printf(&im->unmapped, "%s:%u: %s: %s\n", s->file, s->line, h, why);
		return 0;
	}
	for (i = 0; i < s->nalias; i++) {
		char *a = imp_host(s->alias[i]);

		free(s->alias[i]);
		if ((why = host_why(a)) || strcmp(a, h) == 0) {
			if (why)
				buf_printf(&im->unmapped, "%s:%u: alias %s of %s: %s\n", s->file,
					   s->line, a, h, why);
			free(a);
			continue;
		}
		s->alias[o++] = a;
	}
	s->nalias = o;
	return 1;
}

static void
site_merge(struct imp *im, struct imp_site *into, struct imp_site *s)
{
	size_t i, j;

	if (s->docroot && into->docroot && strcmp(s->docroot, into->docroot) != 0)
		imp_error(im, s->file, s->line, "%s: its document root %s is not %s, its document "
			  "root at %s:%u", s->host, s->docroot, into->docroot, into->file, into->line);
	if (!into->docroot && s->docroot) {
		into->docroot = s->docroot;
		s->docroot = NULL;
	}
	if (!into->fcgi && s->fcgi) {
		into->fcgi = s->fcgi;
		s->fcgi = NULL;
	}
	for (i = 0; i < s->nalias; i++) {
		for (j = 0; j < into->nalias; j++)
			if (strcmp(into->alias[j], s->alias[i]) == 0)
				break;
		if (j == into->nalias)
			imp_site_alias(into, s->alias[i]);
	}
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The sites: named, one per host name (a vhost on two ports, or in both
 * front ends, is one site), each name in one site only, each with a
 * document root and its owner's account.
 */
void
imp_sites(struct imp *im)
{
	struct { const char *name; size_t site; } *seen;
	size_t i, o = 0, nseen = 0, total = 0;

	for (i = 0; i < im->nsite; i++) {
		if (!site_names(im, &im->site[i])) {
			imp_site_free(&im->site[i]);
			continue;
		}
		im->site[o++] = im->site[i];
	}
	im->nsite = o;
	if (im->nsite > 1)
		qsort(im->site, im->nsite, sizeof(*im->site), cmp_site);
	for (i = 0, o = 0; i < im->nsite; i++) {
		struct imp_site *s = &im->site[i];

		if (o > 0 && strcmp(im->site[o - 1].host, s->host) == 0) {
			struct imp_site *p = &im->site[o - 1];

			if (p->port == s->port && strcmp(p->front, s->front) == 0)
				imp_error(im, s->file, s->line, "duplicate %s %s: %s:%u has it on "
					  "port %u too", strcmp(s->front, "apache") == 0 ?
					  "ServerName" : "server_name", s->host, p->file, p->line,
					  s->port);
			site_merge(im, p, s);
			imp_site_free(s);
			continue;
		}
		im->site[o++] = *s;
	}
	im->nsite = o;
	/* every name of one site only: else a request's site is the first vhost's */
	for (i = 0; i < im->nsite; i++)
		total += 1 + im->site[i].nalias;
	if (!(seen = calloc(total ? total : 1, sizeof(*seen))))
		return;
	for (i = 0; i < im->nsite; i++) {
		struct imp_site *s = &im->site[i];

		for (size_t k = 0; k <= s->nalias; k++) {
			const char *n = k ? s->alias[k - 1] : s->host;
			size_t j;

			for (j = 0; j < nseen; j++)
				if (strcmp(seen[j].name, n) == 0)
					break;
			if (j < nseen && seen[j].site != i) {
				struct imp_site *p = &im->site[seen[j].site];

				imp_error(im, s->file, s->line, "%s is also a name of %s at %s:%u",
					  n, p->host, p->file, p->line);
			} else if (j == nseen) {
				seen[nseen].name = n;
				seen[nseen++].site = i;
			}
		}
	}
	free(seen);
	for (i = 0; i < im->nsite; i++) {
		struct imp_site *s = &im->site[i];

		if (s->nalias > 1)	/* qsort's array may not be NULL, even empty */
			qsort(s->alias, s->nalias, sizeof(*s->alias), cmp_str);
		if (!s->docroot)
			imp_error(im, s->file, s->line, "%s: no %s", s->host,
				  strcmp(s->front, "apache") == 0 ? "DocumentRoot" : "root");
	}
}
