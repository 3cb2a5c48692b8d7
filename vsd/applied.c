// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The rules in force: what the last successful apply compiled, kept for
 * the gates and for the next vsd.
 *
 * The accept gates get them as a rule file written by rules_write() (every
 * rule expanded, in precedence order): "gatetable" says "# rules HASH", and
 * a supervisor whose copy has another hash asks "gaterules". The same text
 * and the applied file's path are saved in the state directory
 * (applied.rules, applied.path), so a restarted vsd hands the gates the
 * same rules and `vsctl reload` knows what to re-read.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/log.h"
#include "rules/rules.h"
#include "apply.h"
#include "fork-gate.h"
#include "gate-vs.h"
#include "remote.h"
#include "vsd.h"

#define APPLIED_RULES	"applied.rules"
#define APPLIED_PATH	"applied.path"
#define APPLIED_MAX	(64 * 1024 * 1024)

/* FNV-1a, 64 bits; never 0, which means "no rules". */
static uint64_t
hash_text(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--) {
		h ^= (unsigned char)*p++;
		h *= 0x100000001b3ull;
	}
	return h ? h : 1;
}

static void
set_text(struct vsd *d, struct buf *text)
{
	buf_free(&d->gate_text);
	d->gate_text = *text;
	memset(text, 0, sizeof(*text));
	d->gate_hash = d->gate_text.len ? hash_text(d->gate_text.p, d->gate_text.len) : 0;
}

int
applied_set(struct vsd *d, struct rules *rs, const char *path, uid_t owner)
{
	struct buf text = { 0 }, p = { 0 };
	int r;

	rules_write(rs, &text);
	/* the same rules from the same file (an unchanged re-apply): nothing
	 * to save, hand out or write into the socket gate */
	if (d->gate_hash && text.len == d->gate_text.len &&
	    memcmp(text.p, d->gate_text.p, text.len) == 0 && d->rules_path &&
	    strcmp(path, d->rules_path) == 0 && owner == d->rules_owner) {
		buf_free(&text);
		rules_free(d->rules);
		d->rules = rs;
		fork_gate_update(d);
		return 0;
	}
	if ((r = write_file_atomic(d->state_dir, APPLIED_RULES, text.p ? text.p : "",
				   text.len)) < 0)
		log_warnx("cannot save the applied rules in %s: %s", d->state_dir, strerror(-r));
	buf_printf(&p, "%u %s\n", (unsigned)owner, path);
	if ((r = write_file_atomic(d->state_dir, APPLIED_PATH, p.p, p.len)) < 0)
		log_warnx("cannot save the rule file's path in %s: %s", d->state_dir,
			  strerror(-r));
	buf_free(&p);
	set_text(d, &text);
	rules_free(d->rules);
	d->rules = rs;
	if (path != d->rules_path) {
		char *copy = strdup(path);

		if (copy) {
			free(d->rules_path);
			d->rules_path = copy;
		}
	}
	d->rules_owner = owner;
	/* socket rules: the VS each VS's sockets belong to; fork rules */
	gate_vs_update_all(d);
	fork_gate_update(d);
	return 0;
}

void
applied_load(struct vsd *d)
{
	char path[PATH_MAX], line[PATH_MAX + 32];
	struct buf text = { 0 }, errs = { 0 };
	struct rules *rs = NULL;
	struct stat st;
	unsigned owner;
	FILE *f;
	int off = 0;

	if (path_fmt(path, sizeof(path), "%s/%s", d->state_dir, APPLIED_RULES) < 0 ||
	    !(f = fopen(path, "re")))
		return;
	if (fstat(fileno(f), &st) == 0 && st.st_size <= APPLIED_MAX) {
		char chunk[65536];
		size_t n;

		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			buf_add(&text, chunk, n);
	}
	fclose(f);
	if (rules_load_buffer(path, text.p ? text.p : "", text.len,
			      RULES_NO_INCLUDE | RULES_NO_PERM_CHECK, &rs, &errs) < 0) {
		log_warnx("%s does not load; the gates get the default rules:\n%s", path,
			  errs.p ? errs.p : "");
		buf_free(&text);
		buf_free(&errs);
		return;
	}
	set_text(d, &text);
	d->rules = rs;
	fork_gate_update(d);
	/* the remote table again, in case a firewall reload flushed it */
	remote_apply(d, rs, NULL);
	if (path_fmt(path, sizeof(path), "%s/%s", d->state_dir, APPLIED_PATH) == 0 &&
	    read_file(path, line, sizeof(line)) == 0 &&
	    sscanf(line, "%u %n", &owner, &off) == 1 && off && line[off] == '/' &&
	    (d->rules_path = strdup(line + off)))
		d->rules_owner = (uid_t)owner;
	log_info("the rules applied last (%s) are in force again",
		 d->rules_path ? d->rules_path : "path unknown");
}

void
applied_gatetable(const struct vsd *d, struct buf *out)
{
	if (d->gate_hash)
		buf_printf(out, "# rules %016" PRIx64 "\n", d->gate_hash);
}

int
cmd_gaterules(struct vsd *d, const struct request *req, struct reply *rep)
{
	(void)req;
	if (d->gate_text.len)
		buf_add(&rep->out, d->gate_text.p, d->gate_text.len);
	return 0;
}
