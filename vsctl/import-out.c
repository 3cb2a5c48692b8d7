// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `vsctl import`: the rule file (stdout or -o) and the report (stderr).
 * The file depends only on the configuration read, in a fixed order, so
 * that importing again what was applied gives the same bytes; what changes
 * from run to run (memory) is in the report only.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "import.h"
#include "import-fold.h"
#include "vsctl/import-basis.h"

#define HOME_SHARE_BP	500	/* each gated pool's home VS: 5%, as rules/examples... */
#define HOMES_BP	2000	/* ...and all of them at most the 20% the accounts leave */
#define ACCOUNT_MAX_BP	100	/* an account's share: at most 1%... */
#define ACCOUNTS_BP	8000	/* ...and all of them at most 80%, the rest for the provider */

void
imp_php_home(const char *version, char *buf, size_t len)
{
	size_t o = 0;

	o = snprintf(buf, len, "php");
	for (; *version && o + 1 < len; version++)
		if (*version != '.')
			buf[o++] = *version;
	buf[o] = '\0';
}

/*
 * The versions with a pool that serves a site: a gated service each, which
 * runs the version's master and every pool of it. A pool of one account
 * needs it as much as a shared one: else it stays in the distribution's
 * unit, outside every VS, and "keep it, in VS x" would not be true.
 */
static int
version_gated(const struct imp *im, const char *version)
{
	for (size_t p = 0; p < im->npool; p++)
		if (im->pool[p].naccounts > 0 && strcmp(im->pool[p].version, version) == 0)
			return 1;
	return 0;
}

static int
first_of_version(const struct imp *im, size_t p)
{
	for (size_t q = 0; q < p; q++)
		if (strcmp(im->pool[q].version, im->pool[p].version) == 0)
			return 0;
	return 1;
}

static void
vs_line(void *arg, const struct fold_item *it, const char **w)
{
	buf_printf(arg, "vs %s plan imported\n", w[0]);
}

static void
site_line(void *arg, const struct fold_item *it, const char **w)
{
	struct buf *b = arg;
	size_t k;

	buf_printf(b, "site %s", w[0]);
	for (k = 1; k + 2 < it->nw; k++)
		buf_printf(b, " alias %s", w[k]);
	buf_printf(b, " docroot %s vs %s\n", w[it->nw - 2], w[it->nw - 1]);
}

static int
cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int
imp_write_rules(const struct imp *im, struct buf *b)
{
	size_t nvs = im->per_site ? im->nsite : im->nacct, nhomes = 0, i, p;
	struct fold_item *it;
	const char **vs;
	unsigned share, home_share = HOME_SHARE_BP;
	char t[16];

	for (p = 0; p < im->npool; p++)
		if (first_of_version(im, p) && version_gated(im, im->pool[p].version))
			nhomes++;
	share = nvs ? ACCOUNTS_BP / nvs : ACCOUNT_MAX_BP;
	if (share > ACCOUNT_MAX_BP)
		share = ACCOUNT_MAX_BP;
	if (share == 0)
		return -E2BIG;
	/* many PHP versions: their homes share what the accounts leave */
	if (nhomes && home_share * nhomes > HOMES_BP)
		home_share = HOMES_BP / nhomes;
	buf_printf(b, "# Written by vsctl import: %zu sites, %zu accounts, %zu PHP-FPM pools.\n"
		   "# Check it (vsctl check FILE), then vsctl apply --dry-run FILE.\n\n",
		   im->nsite, im->nacct, im->npool);
	buf_printf(b, "# A plan to start from: the same share for every %s; edit to taste.\n",
		   im->per_site ? "site" : "account");
	buf_printf(b, "plan imported cpu %s\n\n", fmt_percent(share, t, sizeof(t)));
	for (p = 0; p < im->npool; p++) {
		char home[32];

		if (!first_of_version(im, p) || !version_gated(im, im->pool[p].version))
			continue;
		imp_php_home(im->pool[p].version, home, sizeof(home));
		buf_printf(b, "vs %s cpu %s\t# home of the gated PHP %s pools\n", home,
			   fmt_percent(home_share, t, sizeof(t)), im->pool[p].version);
	}
	/* one VS per account (or site), in name order */
	vs = calloc(nvs ? nvs : 1, sizeof(*vs));
	it = calloc(im->nsite ? im->nsite : 1, sizeof(*it));
	if (!vs || !it) {
		free(vs);
		free(it);
		return -ENOMEM;
	}
	for (i = 0; i < nvs; i++)
		vs[i] = im->per_site ? im->site[i].vs : im->acct[i].vs;
	qsort(vs, nvs, sizeof(*vs), cmp_cstr);
	for (i = 0; i < nvs; i++) {
		it[i].w[0] = vs[i];
		it[i].nw = 1;
	}
	fold_lines(it, nvs, vs_line, b);
	buf_printf(b, "\n");
	/* the sites, in host name order (imp_sites sorted them) */
	memset(it, 0, (im->nsite ? im->nsite : 1) * sizeof(*it));
	for (i = 0; i < im->nsite; i++) {
		const struct imp_site *s = &im->site[i];
		size_t k;

		for (k = 0; k < s->nalias && k + 3 < FOLD_WORDS; k++)
			it[i].w[1 + k] = s->alias[k];
		it[i].w[0] = s->host;
		it[i].w[1 + k] = s->docroot;
		it[i].w[2 + k] = s->vs;
		it[i].nw = 3 + k;
	}
	fold_lines(it, im->nsite, site_line, b);
	free(it);
	free(vs);
	/* the pools: one gated service per version whose pools several accounts share */
	for (p = 0; p < im->npool; p++) {
		const struct imp_pool *pl = &im->pool[p];
		char home[32];

		if (!first_of_version(im, p) || !version_gated(im, pl->version))
			continue;
		imp_php_home(pl->version, home, sizeof(home));
		buf_printf(b, "\n# PHP %s's master and its pools, under the accept gate: the sites "
			   "above\n# charge each request to its site's VS.\n", pl->version);
		buf_printf(b, "service %s-fpm home %s attrs-timeout 200ms \\\n\tcommand \"/usr/sbin/"
			   "php-fpm%s --nodaemonize --fpm-config %s/etc/php/%s/fpm/php-fpm.conf\"\n",
			   home, home, pl->version, im->root, pl->version);
	}
	for (p = 0; p < im->npool; p++) {
		const struct imp_pool *pl = &im->pool[p];

		if (pl->naccounts == 1 && im->per_site)
			buf_printf(b, "# pool %s (PHP %s, %s:%u) serves %s only: keep it\n", pl->name,
				   pl->version, pl->file, pl->line, im->acct[pl->account].owner);
		else if (pl->naccounts == 1)
			buf_printf(b, "# pool %s (PHP %s, %s:%u) serves %s only: keep it, in VS %s\n",
				   pl->name, pl->version, pl->file, pl->line,
				   im->acct[pl->account].owner, im->acct[pl->account].vs);
	}
	return 0;
}

static void
mib(FILE *f, long kib)
{
	fprintf(f, "%ld.%01ld MiB", kib / 1024, (kib % 1024) * 10 / 1024);
}

/*
 * What one gated pool of a version, instead of its several, would save. The
 * basis is the hosting benchmark's (import-basis.h, made from its results
 * at build time): one gated pool served its two sites as well as a pool
 * for each did (hosting.md), and each pool less saved what the per-site
 * pools took over the gated one, IMP_BASIS_PROCS processes' worth. Here the
 * pool that stays is the largest (by pm.max_children), as the benchmark's
 * gated pool had one per-site pool's workers, and the others' workers go
 * at that much a process (in Debian's layout a version's pools share one
 * master). What those pools take now is printed beside it, to compare.
 */
static void
consolidation(const struct imp *im, size_t first, FILE *f)
{
	const char *version = im->pool[first].version;
	const long pool_kib = (IMP_BASIS_PER_SITE_KIB - IMP_BASIS_GATED_KIB) /
			      (IMP_BASIS_PER_SITE_POOLS - 1);
	const struct imp_pool *unsized = NULL;
	size_t p, n = 0, keep = first, off = 0;
	unsigned long long workers = 0;
	long now = 0;

	for (p = first; p < im->npool; p++) {
		const struct imp_pool *pl = &im->pool[p];

		if (strcmp(pl->version, version) != 0)
			continue;
		n++;
		if (!pl->max_children && !unsized)
			unsized = pl;
		if (pl->max_children > im->pool[keep].max_children)
			keep = p;
	}
	if (n < 2) {
		fprintf(f, "PHP %s has one pool: nothing to consolidate\n", version);
		return;
	}
	if (unsized) {
		fprintf(f, "consolidating PHP %s's %zu pools: not estimated: pool %s (%s:%u) has no "
			"pm.max_children\n", version, n, unsized->name, unsized->file, unsized->line);
		return;
	}
	for (p = first; p < im->npool; p++) {
		const struct imp_pool *pl = &im->pool[p];

		if (p == keep || strcmp(pl->version, version) != 0)
			continue;
		workers += pl->max_children;
		if (pl->pss_kib < 0)
			off++;
		else
			now += pl->pss_kib;
	}
	fprintf(f, "consolidating PHP %s's %zu pools into one gated pool: saves ", version, n);
	mib(f, (long)(workers * pool_kib / IMP_BASIS_PROCS));
	fprintf(f, ", %llu workers (pm.max_children of all pools but the largest) at ", workers);
	mib(f, pool_kib / IMP_BASIS_PROCS);
	fprintf(f, " a process (basis: %s, where %d per-site pools took ", IMP_BASIS_CSV,
		IMP_BASIS_PER_SITE_POOLS);
	mib(f, IMP_BASIS_PER_SITE_KIB);
	fprintf(f, " PSS and one gated pool ");
	mib(f, IMP_BASIS_GATED_KIB);
	fprintf(f, ", %d processes a pool); now: ", IMP_BASIS_PROCS);
	if (off) {
		fprintf(f, "%zu of those pools not running\n", off);
	} else {
		mib(f, now);
		fprintf(f, " PSS in those pools\n");
	}
}

void
imp_report(const struct imp *im, FILE *f)
{
	size_t p;

	fprintf(f, "vsctl import: %zu sites, %zu accounts, %zu pools (read: %u Apache vhosts, "
		"%u nginx server blocks)\n", im->nsite, im->nacct, im->npool, im->napache,
		im->nnginx);
	for (p = 0; p < im->npool; p++) {
		const struct imp_pool *pl = &im->pool[p];

		fprintf(f, "pool %s (PHP %s, %s:%u; user %s, listen %s, pm %s, max_children %u): ",
			pl->name, pl->version, pl->file, pl->line, pl->user ? pl->user : "-",
			pl->listen ? pl->listen : "-", pl->pm ? pl->pm : "-", pl->max_children);
		if (pl->naccounts > 1)
			fprintf(f, "serves %zu accounts: gate it", pl->naccounts);
		else if (pl->naccounts == 1 && im->per_site)
			fprintf(f, "serves one account, %s: keep it", im->acct[pl->account].owner);
		else if (pl->naccounts == 1)
			fprintf(f, "serves one account, %s: keep it, in VS %s",
				im->acct[pl->account].owner, im->acct[pl->account].vs);
		else
			fprintf(f, "serves no site found");
		fprintf(f, "; memory: ");
		if (pl->pss_kib < 0) {
			fprintf(f, "not running\n");
		} else {
			mib(f, pl->pss_kib);
			fprintf(f, " PSS in %u process%s\n", pl->nprocs, pl->nprocs == 1 ? "" : "es");
		}
	}
	for (p = 0; p < im->npool; p++)
		if (first_of_version(im, p))
			consolidation(im, p, f);
	if (im->unmapped.len)
		fprintf(f, "not mapped:\n%s", im->unmapped.p);
	if (im->renamed.len)
		fprintf(f, "renamed:\n%s", im->renamed.p);
}
