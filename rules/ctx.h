/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The loader's private state: declarations as parsed, before checking and
 * compiling. All of it lives in one struct rules_ctx (no globals), so several
 * loads may run side by side (vsd reload while vsctl checks).
 */
#ifndef VSD_RULES_CTX_H
#define VSD_RULES_CTX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rules.h"

struct buf;
struct stat;

/* Limits on what one file may ask for, so a small file cannot explode. */
#define RULES_EXPAND_MAX	10000	/* names one [a|b] or [1..N] group makes */
#define RULES_TOTAL_MAX		100000	/* VSs */
#define RULES_RULES_MAX		20000	/* rules after expansion (conflict check is quadratic) */
#define RULES_INDEX_MAX		(4u << 20) /* entries in the per-caller tables */
#define RULES_ERRORS_MAX	200	/* then "too many errors" */
#define RULES_INCLUDE_DEPTH	32
#define RULES_FILE_MAX		(4u << 20)	/* tokens are kept whole: bound them */
#define RULES_PLAN_DEPTH	64	/* plans based on plans (resolved recursively) */

/* Settings, indexed by bit number in set; at[] records where each was written. */
enum set_bit {
	SB_CPU = 0, SB_CPU_MAX, SB_MEM, SB_PIDS, SB_TOS, SB_MARK, SB_PRIORITY,
	SB_NET_SHARE, SB_NET_MAX, SB_DEV, SB_DEV_RATE,	/* rules/net.c */
	SB_WORKERS,
	SB_DB_CPU, SB_DB_BURST,		/* the database mode's cap (gates/accept/dbcap.c) */
	SB_MAX,
};

struct settings {
	unsigned	 set;		/* RULES_SET_* (1u << SB_*) */
	unsigned	 cpu, cpu_max, priority;
	uint64_t	 mem, pids;
	uint8_t		 tos;
	uint32_t	 mark;
	unsigned	 net_share;	/* network share (rules/net.c) */
	uint64_t	 net_max, dev_rate;
	char		 dev[16];
	unsigned	 workers_n, workers_bp;	/* workers N or P% */
	unsigned	 db_cpu, db_burst_ms;	/* db-cpu P%, db-burst D */
	struct rules_loc at[SB_MAX];
	char		*plan, *group;
	struct rules_loc plan_at, group_at;
};

/* A name expression as written: pre[alt|alt]post*, at most one group. */
struct nexpr {
	char		*pre, *post;
	char		**alts;
	size_t		 nalts, calts;
	int		 has_group;
	int		 star;
	int		 keyword;	/* targets: RULES_TO_* + 1 when a keyword, else 0 */
	char		*text;		/* as written, for messages */
	struct rules_loc loc;
};

struct plan_decl {
	char		*name;
	struct rules_loc loc;
	struct settings	 s;
	struct settings	 eff;		/* with the plans it is based on applied */
	int		 state;		/* 0 new, 1 resolving, 2 resolved, 3 bad */
};

struct group_decl {
	char		*name;
	struct rules_loc loc;
	struct settings	 s;
};

struct vs_decl {
	char		*name;
	struct rules_loc loc;
	struct settings	 s;
	int		 bad;		/* its settings had errors: skip follow-on checks */
};

struct svc_decl {
	char		*name;
	struct rules_loc loc;
	char		*home;
	struct rules_loc home_at;
	int		 gate;		/* -1 if not given */
	struct rules_loc gate_at;
	char		*command;
	char		*user, *group;	/* NULL if not given */
	struct rules_loc user_at, group_at;
	unsigned	 attrs_timeout_ms;	/* 0 if not given */
	int		 proto;		/* -1 if not given */
	struct rules_loc proto_at;
	char		*unclassified;	/* NULL if not given */
	struct rules_loc unclassified_at;
};

struct rule_decl {
	int		 gate;		/* -1 if unknown (already reported) */
	struct rules_loc loc;
	struct nexpr	 caller, req, target;
	int		 has_req;
	/* a content rule (attrs.h): host = H or docroot = D; compiled by content.c */
	int		 has_attr;
	enum rules_attr	 attr;
	struct nexpr	 attr_pat;
};

/* site HOST alias HOST docroot PATH vs VS (parse-site.c, content.c) */
struct site_decl {
	struct rules_loc loc;
	struct nexpr	*hosts;		/* [0] the site's name, then the aliases */
	size_t		 nhosts, chosts;
	struct nexpr	*docroots;
	size_t		 ndocroots, cdocroots;
	struct nexpr	 vs;
	int		 has_vs;
};

struct remote_decl {
	uint8_t		 dscp;		/* 0-63 */
	char		*vs;		/* NULL if the line had an error */
	struct rules_prefix *from;	/* its sources (moved to rules_remote) */
	size_t		 nfrom, cfrom;
	struct rules_loc loc, vs_at;
};

struct incl {
	dev_t		 dev;
	ino_t		 ino;
	const char	*path;
};

struct rerror {
	int		 fid;		/* order in which the file was first read */
	int		 line, col;
	size_t		 seq;
	char		*msg;		/* the whole line, with its location */
};

struct rules_ctx {
	unsigned	 flags;
	uid_t		 owner;		/* files must belong to root or to this uid */
	struct buf	*errs;
	int		 nerr;
	struct rerror	*ev;		/* errors, sorted by place before they are shown */
	size_t		 nev, cev;
	const char	**paths;	/* file names in the order first read */
	size_t		 npaths, cpaths;
	int		 oom;
	struct rules	*rs;		/* being built; owns file names */

	struct plan_decl  *plans;  size_t nplans,  cplans;
	struct group_decl *groups; size_t ngroups, cgroups;
	struct vs_decl	  *vss;	   size_t nvss,	   cvss;
	struct svc_decl	  *svcs;   size_t nsvcs,   csvcs;
	struct rule_decl  *rules;  size_t nrules,  crules;
	struct site_decl  *sites;  size_t nsites,  csites;
	struct remote_decl *remotes; size_t nremotes, cremotes;

	struct incl	 stack[RULES_INCLUDE_DEPTH];
	int		 depth;
	struct incl	*done;		/* files read completely: include once */
	size_t		 ndone, cdone;
};

/* Report an error at loc (NULL: at the file level, "FILE: msg" with file). */
void rerr(struct rules_ctx *c, const struct rules_loc *loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void rerr_file(struct rules_ctx *c, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "included file 'P': MSG" at the include from, or "P: MSG" for the top file. */
void file_err(struct rules_ctx *c, const struct rules_loc *from, const char *path,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Append the errors to c->errs, in file order then line and column. */
void flush_errors(struct rules_ctx *c);

/* Grow *p (n used, *cap allocated) for one more element; NULL when out of memory. */
void *vec_push(struct rules_ctx *c, void *pp, size_t *n, size_t *cap, size_t size);
char *xstrdup(struct rules_ctx *c, const char *s);
/* A file name kept for the lifetime of the rules (for rules_loc.file). */
const char *keep_path(struct rules_ctx *c, const char *path);
/* fmt_size (8G, 512M, 1536K, 1000) is lib/util.c's */

/*
 * open.c: open path for reading, checking every directory and link on the way
 * (the file's own owner and mode are file.c's); the fd, or -errno (reported).
 */
int open_rule_file(struct rules_ctx *c, const struct rules_loc *from, const char *path,
		   struct stat *st);
/* file.c: read one file (permission checks) and parse it, following includes. */
int load_file(struct rules_ctx *c, const char *path, const struct rules_loc *from);
int load_buffer(struct rules_ctx *c, const char *name, const char *data, size_t len);

/* parse.c: parse one file's text. */
void parse_text(struct rules_ctx *c, const char *file, const char *data, size_t len);

/* parse-rule.c: RULES_STAY.. for stay, creator, requester, home; else -1 */
int target_keyword(const char *s);

/* expand.c */
void nexpr_free(struct nexpr *e);
size_t nexpr_count(const struct nexpr *e);	/* 1, or the number of choices */
char *nexpr_name(const struct nexpr *e, size_t k, char *buf, size_t len);
int expand_item(struct rules_ctx *c, const struct rules_loc *loc, const char *item,
		struct nexpr *e);
/* The common number of choices of the expressions with a [..] group (NULLs
 * skipped), 1 if none has one; 0 after reporting a mismatch. */
size_t nexpr_arity(struct rules_ctx *c, const struct nexpr *const *es, size_t n);
/* Choice k of e as a VS pattern; -1 (reported) for an undeclared VS. */
int nexpr_pat(struct rules_ctx *c, const struct nexpr *e, size_t k, struct rules_pat *out);

/* check.c: plans, groups, VSs, services -> c->rs */
void check_decls(struct rules_ctx *c);
/* check-remote.c: remote lines -> c->rs->remotes (after the VSs and services) */
void check_remotes(struct rules_ctx *c);
/* budget.c: shares against 100% and groups' budgets */
void check_budgets(struct rules_ctx *c);
/* compile.c: rules -> c->rs->rules and the per-caller tables */
void compile_rules(struct rules_ctx *c);
/* write.c: one rule as rules_write() writes it, without the newline */
void write_rule(const struct rules *rs, struct buf *b, const struct rules_rule *r);
/* " workers N" or " workers P%" if x has a worker limit (write.c) */
void write_workers(const struct rules_vs *x, struct buf *b);
/* " db-cpu P%" and " db-burst Nms" if x caps its database CPU (write.c) */
void write_db(const struct rules_vs *x, struct buf *b);
/* prefix.c: "ADDR[/LEN]" -> p, 0 or -1 with *why */
int parse_prefix(const char *s, struct rules_prefix *p, const char **why);
/* write.c: a service line's keys between "home VS" and "command", each
 * followed by a space; those left at their defaults are not written */
void write_service_opts(const struct rules *rs, struct buf *b, const struct rules_service *s);
/* write.c: one remote line, without the newline */
void write_remote(const struct rules *rs, struct buf *b, const struct rules_remote *x);

void settings_free(struct settings *s);
void site_decl_free(struct site_decl *s);
void ctx_free(struct rules_ctx *c);

#endif
