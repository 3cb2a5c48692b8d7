// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The library's entry points: load (parse, check, compile) and free. They
 * stand on top: nothing below calls back up into this file (rules/README.md,
 * "Layers").
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "attrs.h"
#include "ctx.h"
#include "names.h"
#include "rules.h"

void
rules_free(struct rules *rs)
{
	struct rules_file *f, *nf;
	size_t i, j;
	int g;

	if (!rs)
		return;
	for (i = 0; i < rs->nservices; i++) {
		free(rs->services[i].command);
		free(rs->services[i].user);
		free(rs->services[i].group);
	}
	for (i = 0; i < rs->nrules; i++) {
		free(rs->rules[i].caller.prefix);
		free(rs->rules[i].req.prefix);
	}
	for (g = 0; g < RULES_GATE_MAX; g++) {
		if (!rs->by_caller[g])
			continue;
		for (i = 0; i <= rs->nvs; i++) {
			free(rs->by_caller[g][i].idx);
			free(rs->by_caller[g][i].byreq);
			free(rs->by_caller[g][i].rest);
		}
		free(rs->by_caller[g]);
	}
	for (i = 0; i < rs->nsites; i++) {
		for (j = 0; j < rs->sites[i].nhosts; j++)
			free(rs->sites[i].hosts[j]);
		for (j = 0; j < rs->sites[i].ndocroots; j++)
			free(rs->sites[i].docroots[j]);
		free(rs->sites[i].hosts);
		free(rs->sites[i].docroots);
	}
	for (i = 0; i < rs->ncrules; i++) {
		free(rs->crules[i].caller.prefix);
		free(rs->crules[i].req.prefix);
		free(rs->crules[i].pat);
	}
	free(rs->sites);
	free(rs->crules);
	names_free(rs->attr_keys);
	for (f = rs->files; f; f = nf) {
		nf = f->next;
		free(f->path);
		free(f);
	}
	free(rs->vs);
	free(rs->groups);
	free(rs->services);
	free(rs->rules);
	for (i = 0; rs->remotes && i < rs->nremotes; i++)
		free(rs->remotes[i].from);
	free(rs->remotes);
	free(rs->sorted);
	names_free(rs->vs_names);
	names_free(rs->svc_names);
	free(rs);
}

static int
load(const char *path, const char *data, size_t len, unsigned flags, uid_t owner,
     struct rules **out, struct buf *errs)
{
	struct rules_ctx c;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	c.flags = flags;
	c.owner = owner;
	c.errs = errs;
	c.rs = calloc(1, sizeof(*c.rs));
	if (!c.rs)
		return -ENOMEM;
	c.rs->vs_names = names_new();
	c.rs->svc_names = names_new();
	if (!c.rs->vs_names || !c.rs->svc_names) {
		rules_free(c.rs);
		return -ENOMEM;
	}
	if (data)
		load_buffer(&c, path, data, len);
	else
		load_file(&c, path, NULL);
	/* check even after syntax errors: one pass shows every error */
	if (!c.oom)
		check_decls(&c);
	if (!c.oom)
		check_remotes(&c);
	if (!c.oom)
		compile_rules(&c);
	if (!c.oom)
		compile_content(&c);
	flush_errors(&c);
	ctx_free(&c);
	if (c.oom || errs->oom) {
		rules_free(c.rs);
		return -ENOMEM;
	}
	if (c.nerr) {
		rules_free(c.rs);
		return -EINVAL;
	}
	*out = c.rs;
	return 0;
}

int
rules_load(const char *path, unsigned flags, struct rules **out, struct buf *errs)
{
	return load(path, NULL, 0, flags, geteuid(), out, errs);
}

int
rules_load_as(const char *path, unsigned flags, uid_t owner, struct rules **out,
	      struct buf *errs)
{
	return load(path, NULL, 0, flags, owner, out, errs);
}

int
rules_load_buffer(const char *name, const char *data, size_t len, unsigned flags,
		  struct rules **out, struct buf *errs)
{
	return load(name, data ? data : "", len, flags, geteuid(), out, errs);
}
