// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `vsctl check [--dump] [--quiet] FILE`: offline, no daemon, no root;
 * vsctl's check command is this function.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/buf.h"
#include "rules/rules.h"
#include "vsctl.h"

int
vsctl_check(int argc, char **argv)
{
	const char *cmd = argc > 0 ? argv[0] : "check", *file = NULL;
	struct buf errs = { 0 }, out = { 0 };
	struct rules *rs = NULL;
	int i, dump = 0, quiet = 0, r;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--dump") == 0) {
			dump = 1;
		} else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
			quiet = 1;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			fprintf(stderr, "%s: unknown option '%s'\n", cmd, argv[i]);
			file = NULL;
			goto usage;
		} else if (!file) {
			file = argv[i];
		} else {
			fprintf(stderr, "%s: one rule file at a time ('%s' is extra)\n", cmd, argv[i]);
			goto usage;
		}
	}
	if (!file) {
usage:
		fprintf(stderr, "usage: %s [--dump] [--quiet] FILE\n", cmd);
		return 2;
	}
	/* only reading: a file others can write is a warning here; vsd's
	 * apply refuses it */
	r = rules_load(file, RULES_PERM_WARN, &rs, &errs);
	if (errs.len)
		fputs(errs.p, stderr);
	buf_free(&errs);
	if (r == -ENOMEM) {
		fprintf(stderr, "%s: %s: out of memory\n", cmd, file);
		return 1;
	}
	if (r < 0)
		return 1;
	if (dump) {
		rules_dump(rs, &out);
		fputs(out.p ? out.p : "", stdout);
		buf_free(&out);
	} else if (!quiet) {
		char t[16];

		printf("%s: OK: %zu VSs (%s guaranteed), %zu services, %zu rules", file,
		       rs->nvs, fmt_percent(rs->total_cpu, t, sizeof(t)), rs->nservices,
		       rs->nrules);
		/* only when there are some: older files print what they always did */
		if (rs->nsites || rs->ncrules)
			printf(", %zu sites, %zu content bindings", rs->nsites, rs->ncrules);
		printf("\n");
	}
	rules_free(rs);
	return 0;
}
