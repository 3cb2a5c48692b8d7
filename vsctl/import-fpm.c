// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `vsctl import`, PHP-FPM: the pools of every installed version, Debian's
 * layout (/etc/php/VERSION/fpm/pool.d/NAME.conf, under --root), and what they
 * use now: the PSS of each pool's worker processes, which PHP-FPM names
 * "php-fpm: pool NAME", under a master whose command line names its
 * configuration (/etc/php/VERSION/fpm/php-fpm.conf), hence the version.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "import.h"

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	if (e - s >= 2 && (*s == '"' || *s == '\'') && e[-1] == *s) {
		e[-1] = '\0';
		s++;
	}
	return s;
}

/* "$pool" in a value is the pool's name (PHP-FPM's one substitution here). */
static char *
subst_pool(const char *v, const char *pool)
{
	const char *p = strstr(v, "$pool");
	char *out;

	if (!p)
		return strdup(v);
	if (asprintf(&out, "%.*s%s%s", (int)(p - v), v, pool, p + 5) < 0)
		return NULL;
	return out;
}

static int
fpm_file(struct imp *im, const char *path, const char *shown, const char *version)
{
	struct imp_pool *pl = NULL;
	char *line = NULL;
	size_t cap = 0;
	unsigned no = 0;
	FILE *f;

	if (!(f = fopen(path, "re"))) {
		int e = errno;

		imp_error(im, shown, 0, "cannot read: %s", strerror(e));
		return -e;
	}
	while (getline(&line, &cap, f) > 0) {
		char *s = trim(line), *eq, *k, *v;

		no++;
		if (*s == ';' || *s == '#' || !*s)
			continue;
		if (*s == '[') {
			char *e = strchr(s, ']');
			struct imp_pool *n;

			if (!e) {
				imp_error(im, shown, no, "a section with no ']'");
				continue;
			}
			*e = '\0';
			if (strcmp(s + 1, "global") == 0) {
				pl = NULL;
				continue;
			}
			n = realloc(im->pool, (im->npool + 1) * sizeof(*im->pool));
			if (!n)
				break;
			im->pool = n;
			pl = &im->pool[im->npool++];
			memset(pl, 0, sizeof(*pl));
			pl->version = strdup(version);
			pl->name = strdup(s + 1);
			pl->file = strdup(shown);
			pl->line = no;
			pl->account = -1;
			pl->pss_kib = -1;
			continue;
		}
		if (!pl || !(eq = strchr(s, '=')))
			continue;
		*eq = '\0';
		k = trim(s);
		v = trim(eq + 1);
		if (strcmp(k, "user") == 0) {
			free(pl->user);
			pl->user = strdup(v);
		} else if (strcmp(k, "listen") == 0) {
			free(pl->listen);
			pl->listen = subst_pool(v, pl->name);
		} else if (strcmp(k, "pm") == 0) {
			free(pl->pm);
			pl->pm = strdup(v);
		} else if (strcmp(k, "pm.max_children") == 0) {
			pl->max_children = (unsigned)strtoul(v, NULL, 10);
		}
	}
	free(line);
	fclose(f);
	return 0;
}

int
imp_fpm(struct imp *im)
{
	char pat[4096];
	size_t rl = strlen(im->root), i;
	glob_t g;
	int r;

	snprintf(pat, sizeof(pat), "%s/etc/php/*/fpm/pool.d/*.conf", im->root);
	r = glob(pat, 0, NULL, &g);
	if (r == GLOB_NOMATCH)
		return 0;
	if (r != 0)
		return -EIO;
	for (i = 0; i < g.gl_pathc; i++) {
		const char *shown = g.gl_pathv[i] + rl;	/* the path on the server */
		char version[64];

		if (sscanf(shown, "/etc/php/%63[^/]/fpm/", version) != 1)
			continue;
		fpm_file(im, g.gl_pathv[i], shown, version);
	}
	globfree(&g);
	return 0;
}

/* A process's command line, NULs as spaces. */
static int
cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	if (n <= 0)
		return -ENODATA;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == ' ')
		buf[--n] = '\0';
	return 0;
}

void
imp_fpm_memory(struct imp *im)
{
	size_t rl = strlen(im->root), i;
	struct dirent *d;
	DIR *dir;

	if (!(dir = opendir("/proc")))
		return;
	while ((d = readdir(dir))) {
		char cl[512], master[512], version[64], path[64];
		const char *conf;
		pid_t pid = (pid_t)atoi(d->d_name), ppid;
		long pss;

		if (pid <= 0 || cmdline(pid, cl, sizeof(cl)) < 0 ||
		    strncmp(cl, "php-fpm: pool ", 14) != 0)
			continue;
		if ((ppid = proc_parent(pid)) <= 0 || cmdline(ppid, master, sizeof(master)) < 0 ||
		    !(conf = strchr(master, '(')))
			continue;
		conf++;
		/* a master started on a --root tree names its configuration there */
		if (rl && strncmp(conf, im->root, rl) == 0)
			conf += rl;
		if (sscanf(conf, "/etc/php/%63[^/]/fpm/", version) != 1)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
		if (read_field_long(path, "Pss", &pss) < 0)
			continue;
		for (i = 0; i < im->npool; i++) {
			struct imp_pool *pl = &im->pool[i];

			if (strcmp(pl->name, cl + 14) == 0 && strcmp(pl->version, version) == 0) {
				pl->pss_kib = (pl->pss_kib < 0 ? 0 : pl->pss_kib) + pss;
				pl->nprocs++;
			}
		}
	}
	closedir(dir);
}
