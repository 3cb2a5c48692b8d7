// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `vsctl check [--dump] [--quiet] [--json] FILE`: offline, no daemon, no
 * root; vsctl's check command is this function.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/exitcode.h"
#include "rules/rules.h"
#include "vsctl.h"

/* A file that checks: the summary, as text or one JSON object. */
static void
print_ok(const char *file, const struct rules *rs, const char *warnings, int quiet)
{
	char t[16];

	fmt_percent(rs->total_cpu, t, sizeof(t));
	if (vsctl_json) {
		struct buf b = { 0 };

		buf_printf(&b, "{\"file\": ");
		buf_json_str(&b, file);
		buf_printf(&b, ", \"ok\": true, \"vs\": %zu, \"guaranteed\": ", rs->nvs);
		buf_json_str(&b, t);
		buf_printf(&b, ", \"services\": %zu, \"rules\": %zu, \"sites\": %zu, "
			   "\"content_bindings\": %zu, \"warnings\": ", rs->nservices, rs->nrules,
			   rs->nsites, rs->ncrules);
		buf_json_lines(&b, warnings);
		buf_printf(&b, "}\n");
		fputs(b.p ? b.p : "", stdout);
		buf_free(&b);
		return;
	}
	if (warnings)
		fputs(warnings, stderr);
	if (quiet)
		return;
	printf("%s: OK: %zu VSs (%s guaranteed), %zu services, %zu rules", file, rs->nvs, t,
	       rs->nservices, rs->nrules);
	/* only when there are some: older files print what they always did */
	if (rs->nsites || rs->ncrules)
		printf(", %zu sites, %zu content bindings", rs->nsites, rs->ncrules);
	printf("\n");
}

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
		} else if (strcmp(argv[i], "--json") == 0) {
			vsctl_json = 1;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			return vsctl_fail(VX_USAGE, "%s: unknown option '%s'; usage: vsctl %s [--dump] "
					  "[--quiet] [--json] FILE", cmd, argv[i], cmd);
		} else if (!file) {
			file = argv[i];
		} else {
			return vsctl_fail(VX_USAGE, "%s: one rule file at a time ('%s' is extra)", cmd,
					  argv[i]);
		}
	}
	if (!file)
		return vsctl_fail(VX_USAGE, "%s: no rule file given; usage: vsctl %s [--dump] "
				  "[--quiet] [--json] FILE", cmd, cmd);
	/* only reading: a file others can write is a warning here; vsd's
	 * apply refuses it */
	r = rules_load(file, RULES_PERM_WARN, &rs, &errs);
	if (r == -ENOMEM) {
		buf_free(&errs);
		return vsctl_fail(VX_INTERNAL, "%s: %s: out of memory", cmd, file);
	}
	if (r < 0) {
		char msg[512];

		/* a file that is not there is not a file with errors: its own class */
		if (access(file, F_OK) < 0)
			r = -errno;

		/* the loader's lines say what (file:line:column: ...); the
		 * class says whether it was the file's words or its access */
		snprintf(msg, sizeof(msg), "%s: %s: refused", cmd, file);
		if (!vsctl_json) {
			fputs(errs.p ? errs.p : "", stderr);
			buf_free(&errs);
			return r == -ENOENT || r == -EACCES || r == -EPERM ? vx_from_errno(r) :
			    VX_BADVALUE;
		}
		r = vsctl_fail_lines(r == -ENOENT || r == -EACCES || r == -EPERM ? vx_from_errno(r) :
				     VX_BADVALUE, msg, errs.p ? errs.p : "");
		buf_free(&errs);
		return r;
	}
	if (dump && !vsctl_json) {
		if (errs.len)
			fputs(errs.p, stderr);
		rules_dump(rs, &out);
		fputs(out.p ? out.p : "", stdout);
	} else if (dump) {
		struct buf b = { 0 };

		/* the dump is a rule file; under --json it is one string */
		rules_dump(rs, &out);
		buf_printf(&b, "{\"file\": ");
		buf_json_str(&b, file);
		buf_printf(&b, ", \"ok\": true, \"dump\": ");
		buf_json_str(&b, out.p ? out.p : "");
		/* the dump replaces the counts, not the warnings */
		buf_printf(&b, ", \"warnings\": ");
		buf_json_lines(&b, errs.len ? errs.p : NULL);
		buf_printf(&b, "}\n");
		fputs(b.p ? b.p : "", stdout);
		buf_free(&b);
	} else {
		print_ok(file, rs, errs.len ? errs.p : NULL, quiet);
	}
	buf_free(&out);
	buf_free(&errs);
	rules_free(rs);
	return 0;
}
