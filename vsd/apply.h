/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Applying a rule file to the running vsd as one transaction (vsd side of
 * `vsctl apply`, `vsctl reload`, SIGHUP and `vsd --rules`).
 */
#ifndef VSD_RULES_APPLY_H
#define VSD_RULES_APPLY_H

#include <sys/types.h>

#include "lib/buf.h"
#include "lib/proto.h"

struct vsd;
struct reply;

#define APPLY_PRUNE	(1u << 0)	/* destroy VSs the file does not name (empty ones only) */
#define APPLY_DRY_RUN	(1u << 1)	/* say what would change; change nothing */

/*
 * Load path (as owner: files must belong to root or owner, and a non-root
 * owner's are read with its permissions: as's ids and groups, or, when as
 * is NULL, those the user database gives owner), diff it against
 * the registry and apply the difference: updates in place, then creates, then
 * (once the declared services living in the VSs to destroy have been stopped
 * and are gone) destroys; then save the state. If a step fails, the steps done
 * are undone in reverse, those services started again, and nothing else
 * changes. out gets the report, errs the reasons.
 */
struct privs_user;
int rules_apply_file(struct vsd *d, const char *path, uid_t owner, const struct privs_user *as,
		     unsigned flags, int json, struct buf *out, struct buf *errs);
/* Re-read the file last applied (or given with --rules); SIGHUP calls it. */
int rules_reload(struct vsd *d, unsigned flags, int json, struct buf *out, struct buf *errs);
void rules_release(struct vsd *d);

/* applied.c: the rules in force, for the gates and the next vsd. */
struct rules;
int applied_set(struct vsd *d, struct rules *rs, const char *path, uid_t owner);
void applied_load(struct vsd *d);
void applied_gatetable(const struct vsd *d, struct buf *out);
int cmd_gaterules(struct vsd *d, const struct request *req, struct reply *rep);

int cmd_apply(struct vsd *d, const struct request *req, struct reply *rep);

/*
 * apply-diff.c: each field (cpu, cpu-max, mem, pids, tos, mark, priority)
 * that differs between old and new, as text (" cpu 5% -> 8%, mem none ->
 * 1536M"; without DIFF_OLD only the new values) or as a JSON object
 * ({"cpu": {"old": 5, "new": 8}, ...}, the names of vsctl show --json).
 */
#include "lib/vs.h"
#define DIFF_OLD	(1 << 0)	/* text: "old -> new", not only new */
#define DIFF_JSON	(1 << 1)
void apply_diff(const struct vs_limits *old, const struct gate_socket_cfg *gold,
		const struct vs_limits *new, const struct gate_socket_cfg *gnew, int flags,
		struct buf *out);
int cmd_reload(struct vsd *d, const struct request *req, struct reply *rep);

#endif
