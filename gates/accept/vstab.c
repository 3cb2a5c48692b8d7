// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's VS table: id, name, share and cgroup directories of
 * every VS. It comes from vsd (vstab-vsd.c) or from a file, and the
 * gate keeps the last good copy while vsd is away, so a vsd restart never
 * disturbs a gated service.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "gate.h"
#include "lib/log.h"

static const char *const gcg_key[GCG_MAX] = {
	[GCG_CPU] = "cpu", [GCG_CPUACCT] = "cpuacct", [GCG_MEMORY] = "memory",
	[GCG_PIDS] = "pids", [GCG_UNIFIED] = "unified",
};

int
cgroup_is_pure_v2(void)
{
	struct statfs sfs;

	return statfs("/sys/fs/cgroup", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC;
}

static int
cmp_id(const void *a, const void *b)
{
	const struct gvs *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

struct gvs *
vstab_find(struct vstab *t, uint32_t id)
{
	struct gvs key = { .id = id };

	if (t->n == 0)
		return NULL;
	return bsearch(&key, t->v, t->n, sizeof(*t->v), cmp_id);
}

struct gvs *
vstab_find_name(struct vstab *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->v[i].name, name) == 0)
			return &t->v[i];
	return NULL;
}

static void
gvs_init(struct gvs *v)
{
	int h;

	memset(v, 0, sizeof(*v));
	for (h = 0; h < GCG_MAX; h++)
		v->fd_tasks[h] = -1;
	v->fd_usage = -1;
}

static void
gvs_free(struct gvs *v)
{
	int h;

	for (h = 0; h < GCG_MAX; h++) {
		free(v->dir[h]);
		if (v->fd_tasks[h] >= 0)
			close(v->fd_tasks[h]);
	}
	if (v->fd_usage >= 0)
		close(v->fd_usage);
}

/* One line: "id name share_bp [cpu=DIR] [cpuacct=DIR] ... [unified=DIR]". */
static int
parse_line(struct gvs *v, char *line)
{
	char *tok, *save = NULL;
	unsigned long long id, share;
	int field = 0, h;

	gvs_init(v);
	for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save), field++) {
		char *end;

		switch (field) {
		case 0:
			id = strtoull(tok, &end, 10);
			if (*end || id == 0 || id > UINT32_MAX)
				return -EINVAL;
			v->id = (uint32_t)id;
			continue;
		case 1:
			if (!vs_name_valid(tok))
				return -EINVAL;
			snprintf(v->name, sizeof(v->name), "%s", tok);
			continue;
		case 2:
			share = strtoull(tok, &end, 10);
			if (*end || share > BP_MAX)
				return -EINVAL;
			v->share_bp = (unsigned)share;
			continue;
		}
		for (h = 0; h < GCG_MAX; h++) {
			size_t kl = strlen(gcg_key[h]);

			if (strncmp(tok, gcg_key[h], kl) == 0 && tok[kl] == '=' && tok[kl + 1] == '/') {
				free(v->dir[h]);
				if (!(v->dir[h] = strdup(tok + kl + 1)))
					return -ENOMEM;
				break;
			}
		}
		/* unknown keys are skipped: newer vsd, older gate */
	}
	return field >= 3 ? 0 : -EINVAL;
}

int
vstab_parse(struct vstab *t, const char *text)
{
	char *copy, *line, *save = NULL;
	size_t cap = 0, lineno = 0;
	int r = 0;

	memset(t, 0, sizeof(*t));
	t->pure_v2 = cgroup_is_pure_v2();
	if (!(copy = strdup(text)))
		return -ENOMEM;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (strncmp(line, "# conns-map /", 13) == 0) {
			free(t->conns_map);
			t->conns_map = strdup(line + 12);
			continue;
		}
		if (line[0] == '#' || line[strspn(line, " \t")] == '\0')
			continue;
		if (t->n == cap) {
			struct gvs *nv;

			cap = cap ? cap * 2 : 16;
			if (!(nv = realloc(t->v, cap * sizeof(*nv)))) {
				r = -ENOMEM;
				break;
			}
			t->v = nv;
		}
		if ((r = parse_line(&t->v[t->n], line)) < 0) {
			gvs_free(&t->v[t->n]);
			log_warnx("VS table line %zu: expected \"id name share_bp key=/dir ...\"", lineno);
			break;
		}
		t->n++;
	}
	free(copy);
	if (r < 0) {
		vstab_free(t);
		return r;
	}
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_id);
	return 0;
}

void
vstab_merge(struct vstab *t, struct vstab *fresh, uint32_t *gone, size_t *ngone)
{
	size_t i, ng = 0, maxg = *ngone;

	for (i = 0; i < t->n; i++) {
		struct gvs *old = &t->v[i], *nv = vstab_find(fresh, old->id);
		int h, same = nv != NULL;

		for (h = 0; nv && h < GCG_MAX; h++)
			if ((old->dir[h] == NULL) != (nv->dir[h] == NULL) ||
			    (old->dir[h] && strcmp(old->dir[h], nv->dir[h]) != 0))
				same = 0;
		if (same) {
			/* keep open fds and the usage history */
			memcpy(nv->fd_tasks, old->fd_tasks, sizeof(nv->fd_tasks));
			nv->fd_usage = old->fd_usage;
			nv->usage_ns = old->usage_ns;
			nv->sample_t = old->sample_t;
			nv->used_bp = old->used_bp;
			nv->remaining_bp = old->remaining_bp;
			for (h = 0; h < GCG_MAX; h++)
				old->fd_tasks[h] = -1;
			old->fd_usage = -1;
		}
		if (nv)
			nv->served = old->served;
		else if (ng < maxg)
			gone[ng++] = old->id;
	}
	*ngone = ng;
	vstab_free(t);
	*t = *fresh;
	memset(fresh, 0, sizeof(*fresh));
}

void
vstab_free(struct vstab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		gvs_free(&t->v[i]);
	free(t->v);
	free(t->conns_map);
	t->v = NULL;
	t->conns_map = NULL;
	t->n = 0;
}

int
vstab_load_file(struct vstab *t, const char *path)
{
	char *text;
	FILE *f;
	long sz;
	int r;

	if (!(f = fopen(path, "re"))) {
		r = -errno;
		log_warn("VS table %s", path);
		return r;
	}
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	rewind(f);
	if (sz < 0 || !(text = calloc(1, (size_t)sz + 1))) {
		fclose(f);
		return -ENOMEM;
	}
	if (fread(text, 1, (size_t)sz, f) != (size_t)sz) {
		free(text);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	r = vstab_parse(t, text);
	free(text);
	return r;
}
