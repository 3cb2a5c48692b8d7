// SPDX-License-Identifier: GPL-2.0-or-later
/* Error collection and the small allocation helpers of the loader. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "ctx.h"
#include "names.h"

static int
file_id(struct rules_ctx *c, const char *file)
{
	size_t i;

	for (i = 0; i < c->npaths; i++)
		if (c->paths[i] == file)
			return (int)i;
	for (i = 0; i < c->npaths; i++)
		if (strcmp(c->paths[i], file) == 0)
			return (int)i;
	return -1;
}

static void
add_error(struct rules_ctx *c, const char *file, int line, int col, const char *msg)
{
	struct rerror *e;
	char *text;

	c->nerr++;
	if (c->nerr > RULES_ERRORS_MAX)
		return;
	if (line > 0) {
		if (asprintf(&text, "%s:%d:%d: %s", file, line, col, msg) < 0)
			text = NULL;
	} else if (asprintf(&text, "%s: %s", file, msg) < 0) {
		text = NULL;
	}
	if (!text || !(e = vec_push(c, &c->ev, &c->nev, &c->cev, sizeof(*e)))) {
		free(text);
		c->oom = 1;
		return;
	}
	e->fid = file_id(c, file);
	e->line = line;
	e->col = col;
	e->seq = c->nev;
	e->msg = text;
}

void
rerr(struct rules_ctx *c, const struct rules_loc *loc, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	add_error(c, loc->file, loc->line, loc->col, msg);
}

void
rerr_file(struct rules_ctx *c, const char *file, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	add_error(c, file, 0, 0, msg);
}

/* "included file 'P': MSG" at the include, or "P: MSG" for the top file. */
void
file_err(struct rules_ctx *c, const struct rules_loc *from, const char *path,
	 const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (from)
		rerr(c, from, "included file '%s': %s", path, msg);
	else
		rerr_file(c, path, "%s", msg);
}

static int
by_place(const void *a, const void *b)
{
	const struct rerror *x = a, *y = b;

	if (x->fid != y->fid)
		return x->fid < y->fid ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void
flush_errors(struct rules_ctx *c)
{
	size_t i;

	if (c->nev)	/* c->ev is NULL without errors: qsort's pointer is nonnull */
		qsort(c->ev, c->nev, sizeof(*c->ev), by_place);
	for (i = 0; i < c->nev; i++)
		buf_printf(c->errs, "%s\n", c->ev[i].msg);
	if (c->nerr > RULES_ERRORS_MAX)
		buf_printf(c->errs, "too many errors (%d); only the first %d are shown\n",
			   c->nerr, RULES_ERRORS_MAX);
}

void *
vec_push(struct rules_ctx *c, void *pp, size_t *n, size_t *cap, size_t size)
{
	char **p = pp;
	char *q;

	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;

		q = realloc(*p, ncap * size);
		if (!q) {
			c->oom = 1;
			return NULL;
		}
		*p = q;
		*cap = ncap;
	}
	q = *p + *n * size;
	memset(q, 0, size);
	(*n)++;
	return q;
}

char *
xstrdup(struct rules_ctx *c, const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		c->oom = 1;
	return d;
}

const char *
keep_path(struct rules_ctx *c, const char *path)
{
	struct rules_file *f = calloc(1, sizeof(*f));

	if (!f || !(f->path = strdup(path))) {
		free(f);
		c->oom = 1;
		return "?";
	}
	f->next = c->rs->files;
	c->rs->files = f;
	{
		const char **slot = vec_push(c, &c->paths, &c->npaths, &c->cpaths, sizeof(*slot));

		if (slot)
			*slot = f->path;
	}
	return f->path;
}

void
settings_free(struct settings *s)
{
	free(s->plan);
	free(s->group);
	s->plan = s->group = NULL;
}

void
site_decl_free(struct site_decl *s)
{
	size_t i;

	for (i = 0; i < s->nhosts; i++)
		nexpr_free(&s->hosts[i]);
	for (i = 0; i < s->ndocroots; i++)
		nexpr_free(&s->docroots[i]);
	free(s->hosts);
	free(s->docroots);
	nexpr_free(&s->vs);
}

void
ctx_free(struct rules_ctx *c)
{
	size_t i;

	for (i = 0; i < c->nplans; i++) {
		free(c->plans[i].name);
		settings_free(&c->plans[i].s);
		settings_free(&c->plans[i].eff);
	}
	for (i = 0; i < c->ngroups; i++) {
		free(c->groups[i].name);
		settings_free(&c->groups[i].s);
	}
	for (i = 0; i < c->nvss; i++) {
		free(c->vss[i].name);
		settings_free(&c->vss[i].s);
	}
	for (i = 0; i < c->nsvcs; i++) {
		free(c->svcs[i].name);
		free(c->svcs[i].home);
		free(c->svcs[i].unclassified);
		free(c->svcs[i].command);
		free(c->svcs[i].user);
		free(c->svcs[i].group);
	}
	for (i = 0; i < c->nrules; i++) {
		nexpr_free(&c->rules[i].caller);
		nexpr_free(&c->rules[i].req);
		nexpr_free(&c->rules[i].target);
		nexpr_free(&c->rules[i].attr_pat);
	}
	for (i = 0; i < c->nsites; i++)
		site_decl_free(&c->sites[i]);
	free(c->sites);
	for (i = 0; i < c->nremotes; i++) {
		free(c->remotes[i].vs);
		free(c->remotes[i].from);
	}
	free(c->remotes);
	free(c->plans);
	free(c->groups);
	free(c->vss);
	free(c->svcs);
	free(c->rules);
	free(c->done);
	for (i = 0; i < c->nev; i++)
		free(c->ev[i].msg);
	free(c->ev);
	free(c->paths);
}
