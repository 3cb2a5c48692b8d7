// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's VS table: id, name, share and cgroup directories of
 * every VS. It comes from vsd (vs-table-vsd.c) or from a file, and the
 * gate keeps the last good copy while vsd is away, so a vsd restart never
 * disturbs a gated service.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"
#include "lib/log.h"

static int
cmp_id(const void *a, const void *b)
{
	const struct gate_vs *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

struct gate_vs *
vs_table_find(struct vs_table *t, uint32_t id)
{
	struct gate_vs key = { .id = id };

	if (t->n == 0)
		return NULL;
	return bsearch(&key, t->v, t->n, sizeof(*t->v), cmp_id);
}

struct gate_vs *
vs_table_find_name(struct vs_table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->v[i].name, name) == 0)
			return &t->v[i];
	return NULL;
}

static void
gate_vs_init(struct gate_vs *v)
{
	memset(v, 0, sizeof(*v));
	v->ridx = -1;
}

static void
gate_vs_free(struct gate_vs *v)
{
	cgh_close(&v->cg);
}

/* One line: "id name share_bp key=DIR ...", the keys lib/cgroup-handle.h's. */
static int
parse_line(struct gate_vs *v, char *line)
{
	char *tok, *save = NULL;
	unsigned long long id, share;
	int field = 0, r;

	gate_vs_init(v);
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
			share_update(v);	/* idle until its first sample */
			continue;
		}
		/* unknown keys are skipped: newer vsd, older gate */
		if ((r = cgh_add(&v->cg, tok)) < 0)
			return r;
	}
	return field >= 3 ? 0 : -EINVAL;
}

int
vs_table_parse(struct vs_table *t, const char *text)
{
	char *copy, *line, *save = NULL;
	size_t cap = 0, lineno = 0;
	int r = 0;

	memset(t, 0, sizeof(*t));
	if (!(copy = strdup(text)))
		return -ENOMEM;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (strncmp(line, "# conns-map /", 13) == 0) {
			free(t->conns_map);
			t->conns_map = strdup(line + 12);
			continue;
		}
		if (strncmp(line, "# next-id ", 10) == 0) {
			unsigned long long n = strtoull(line + 10, NULL, 10);

			t->next_id = n <= UINT32_MAX ? (uint32_t)n : 0;
			continue;
		}
		if (strncmp(line, "# rules ", 8) == 0) {
			t->rules_hash = strtoull(line + 8, NULL, 16);
			continue;
		}
		if (line[0] == '#' || line[strspn(line, " \t")] == '\0')
			continue;
		if (t->n == cap) {
			struct gate_vs *nv;

			cap = cap ? cap * 2 : 16;
			if (!(nv = realloc(t->v, cap * sizeof(*nv)))) {
				r = -ENOMEM;
				break;
			}
			t->v = nv;
		}
		if ((r = parse_line(&t->v[t->n], line)) < 0) {
			gate_vs_free(&t->v[t->n]);
			log_warnx("VS table line %zu: expected \"id name share_bp key=/dir ...\"", lineno);
			break;
		}
		t->n++;
	}
	free(copy);
	if (r < 0) {
		vs_table_free(t);
		return r;
	}
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_id);
	return 0;
}

void
vs_table_merge(struct vs_table *t, struct vs_table *fresh, uint32_t *gone, size_t *ngone)
{
	size_t i, ng = 0, maxg = *ngone;

	for (i = 0; i < t->n; i++) {
		struct gate_vs *old = &t->v[i], *nv = vs_table_find(fresh, old->id);

		if (nv && cgh_same(&nv->cg, &old->cg)) {
			/* keep open fds and the usage history */
			cgh_take(&nv->cg, &old->cg);
			nv->usage_ns = old->usage_ns;
			nv->sample_t = old->sample_t;
			nv->used_bp = old->used_bp;
			nv->step_bp = old->step_bp;
			nv->served_sample = old->served_sample;
			share_update(nv);	/* against the new share, if it changed */
		}
		if (nv) {
			nv->served = old->served;
			nv->charged_ns = old->charged_ns;
			nv->db_cpu_ns = old->db_cpu_ns;
			nv->db_read_bytes = old->db_read_bytes;
			nv->db_write_bytes = old->db_write_bytes;
		}
		else if (ng < maxg)
			gone[ng++] = old->id;
	}
	*ngone = ng;
	vs_table_free(t);
	*t = *fresh;
	memset(fresh, 0, sizeof(*fresh));
}

void
vs_table_free(struct vs_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		gate_vs_free(&t->v[i]);
	free(t->v);
	free(t->conns_map);
	t->v = NULL;
	t->conns_map = NULL;
	t->n = 0;
}

int
vs_table_load_file(struct vs_table *t, const char *path)
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
	r = vs_table_parse(t, text);
	free(text);
	return r;
}
