/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rules library: loads a rule file (vsrules(5)), checks it and compiles
 * it into a struct rules that vsd applies (VSs, limits, socket gate
 * settings, socket rules, services) and the accept gate decides by.
 *
 * Loading never changes anything outside the library, needs no daemon and no
 * privilege, and reports every error of the file (and its includes) at once,
 * one per line, as "FILE:LINE:COLUMN: message". A file with any error yields
 * no struct rules at all: it is refused whole.
 *
 * The accept gate's per-accept path is rules_query(): it works on VS indices
 * (rules_vs_index() once per VS, cached by the caller) and walks a short,
 * precomputed per-caller list of rules in precedence order.
 *
 * How the gates use it:
 *  - vsd keeps the rules of the file applied last in struct vsd's `rules`
 *    (vsd/applied.c); it replaces the pointer (and frees the old rules) only
 *    after a whole apply succeeded. A struct rules never changes once loaded,
 *    so queries need no lock. The accept gate's supervisors, other
 *    processes, load their own copy from rules_write()'s text, which vsd
 *    hands them (gates/accept/decide.c).
 *  - vsd's VS ids (struct vs.id, the BPF maps' vs_id) are not the library's
 *    indices: map them by name, once per VS, with rules_vs_index(); a VS the
 *    file does not declare is RULES_VS_UNKNOWN (or use rules_query_name()).
 *  - Accept gate: for a connection from requester R accepted by a service
 *    thread now in VS C, rules_query(rs, RULES_GATE_ACCEPT, C, R) says where
 *    the thread runs: STAY, TO_VS (.vs), TO_REQUESTER (.vs = R), TO_HOME (the
 *    home VS of the service the gate runs).
 *  - Socket gate: the per-VS defaults are rules->vs[i].tos (RULES_SET_TOS),
 *    .mark (RULES_SET_MARK); rules_query(rs, RULES_GATE_SOCKET, C, -1) gives
 *    the VS a socket created in C belongs to (TO_CREATOR: C itself); vsd
 *    writes that VS's id and settings into C's entry (vsd/gate-vs.c).
 *  - Fork gate: rules_query_name(rs, RULES_GATE_FORK, C, NULL) for a new
 *    process in C; vsd moves it to TO_VS's VS (vsd/fork-gate.c).
 */
#ifndef VSD_RULES_H
#define VSD_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/util.h"

struct buf;

enum rules_gate {
	RULES_GATE_ACCEPT = 0,
	RULES_GATE_SOCKET,
	RULES_GATE_FORK,
	RULES_GATE_MAX,
};

/*
 * What a service speaks, as far as its accept gate cares: whether there are
 * request params to wait for (FastCGI), and whether the server speaks first
 * (MySQL: the client sends nothing until the server's handshake, so waiting
 * for its first bytes would only wait out the bound).
 */
enum rules_proto {
	RULES_PROTO_FASTCGI = 0,	/* the default: sites and content rules apply */
	RULES_PROTO_MYSQL,		/* server speaks first; never held */
	RULES_PROTO_OTHER,		/* not read: classified by its opener only */
	RULES_PROTO_MAX,
};

/* Which limits a VS declaration sets; an unset limit is left to vsd's default. */
#define RULES_SET_CPU		(1u << 0)
#define RULES_SET_CPU_MAX	(1u << 1)
#define RULES_SET_MEM		(1u << 2)
#define RULES_SET_PIDS		(1u << 3)
#define RULES_SET_TOS		(1u << 4)	/* from tos or dscp */
#define RULES_SET_MARK		(1u << 5)
#define RULES_SET_PRIORITY	(1u << 6)
#define RULES_SET_NET_SHARE	(1u << 7)	/* the network share (rules/net.c) */
#define RULES_SET_NET_MAX	(1u << 8)
#define RULES_SET_DEV		(1u << 9)
#define RULES_SET_DEV_RATE	(1u << 10)
#define RULES_SET_WORKERS	(1u << 11)	/* workers N or P% (gates/accept/workers.c) */
#define RULES_SET_DB_CPU	(1u << 12)	/* db-cpu P% (gates/accept/dbcap.c) */
#define RULES_SET_DB_BURST	(1u << 13)	/* db-burst D */

/* Where a declaration was written (file names live as long as the rules). */
struct rules_loc {
	const char	*file;
	int		 line;
	int		 col;
};

struct rules_vs {
	char		 name[VS_NAME_MAX + 1];
	unsigned	 set;		/* RULES_SET_* */
	unsigned	 cpu;		/* guaranteed share, basis points (parse_percent) */
	unsigned	 cpu_max;	/* cap, basis points */
	uint64_t	 mem_max;	/* bytes (parse_size) */
	uint64_t	 pids_max;
	uint8_t		 tos;		/* full TOS byte; dscp D is stored as D << 2 */
	uint32_t	 mark;		/* SO_MARK */
	unsigned	 priority;	/* conflict resolution; higher wins; default 0 */
	unsigned	 net_share;	/* network share, basis points of dev's rate */
	uint64_t	 net_max;	/* its cap, bits/s */
	uint64_t	 dev_rate;	/* dev's rate, bits/s (0: vsd finds it) */
	char		 dev[16];	/* "" : the default route's interface, at apply */
	int		 group;		/* index into rules->groups, or -1 */
	char		 plan[VS_NAME_MAX + 1];	/* plan it was declared with, or "" */
	/* the most of a gated pool's workers it may hold at once: workers_n,
	 * or workers_bp basis points of the pool; both 0 = no limit */
	unsigned	 workers_n, workers_bp;
	/* the cap on the CPU a database service's threads spend serving its
	 * connections (basis points of the machine, 0: none) and the burst
	 * above it (ms, 0: none) */
	unsigned	 db_cpu, db_burst_ms;
	struct rules_loc loc;
};

/*
 * A reseller's (or any) budget: vsd has no nested VSs, so a group is checked,
 * not enforced as an aggregate: its members' shares, memory and pids must fit
 * in it, and no member's cap may exceed the group's.
 */
struct rules_group {
	char		 name[VS_NAME_MAX + 1];
	unsigned	 set;
	unsigned	 cpu, cpu_max;
	uint64_t	 mem_max, pids_max;
	struct rules_loc loc;
};

struct rules_service {
	char		 name[VS_NAME_MAX + 1];
	int		 home;		/* VS index */
	enum rules_gate	 gate;		/* the gate it runs under (accept) */
	char		*command;	/* run by /bin/sh -c */
	char		*user;		/* runs as this user (NULL: as root) */
	char		*group;		/* with this group (NULL: the user's) */
	enum rules_proto proto;		/* what it speaks (protocol P) */
	/*
	 * How long its accept gate may wait for a request's params (content
	 * rules and sites) before it serves the connection from home;
	 * 0: not set, RULES_ATTRS_TIMEOUT_MS applies.
	 */
	unsigned	 attrs_timeout_ms;
	/*
	 * The VS its accept gate serves a request from when the request's
	 * params cannot be read (malformed, too long, too slow): -1 for its
	 * home. Never the requester: that is the front end.
	 */
	int		 unclassified;
	struct rules_loc loc;
};

/* The documented default bound (vsrules(5), SITES AND CONTENT RULES). */
#define RULES_ATTRS_TIMEOUT_MS	200
#define RULES_ATTRS_TIMEOUT_MAX	10000	/* the largest attrs-timeout a file may set */
/* An address prefix (prefix.c): addr has no bit set past len. */
struct rules_prefix {
	uint8_t		 family;	/* AF_INET or AF_INET6 */
	uint8_t		 len;		/* 0-32 or 0-128 */
	uint8_t		 addr[16];	/* network order; IPv4 in the first 4 */
};

/*
 * "remote dscp D from PREFIX... => VS": connections that arrive from a
 * source in one of the prefixes with DSCP D are VS's (vsd/remote.c turns
 * these into an nftables table, the accept gate classifies by the mark it
 * sets). Every line names the sources it trusts: any host can send any
 * DSCP. Several DSCPs may name one VS; one DSCP names at most one VS.
 */
struct rules_remote {
	uint8_t		 dscp;		/* 1-63 (0 is unmarked traffic) */
	int		 vs;		/* VS index */
	struct rules_prefix *from;	/* the trusted sources, at least one */
	size_t		 nfrom;
	struct rules_loc loc;
};

/* What a rule says to do. */
enum rules_action {
	RULES_STAY = 0,		/* no rebinding: the caller stays where it is */
	RULES_TO_VS,		/* the VS named by the rule */
	RULES_TO_CREATOR,	/* the VS that created the socket / the parent */
	RULES_TO_REQUESTER,	/* the VS the request came from */
	RULES_TO_HOME,		/* the service's home VS */
};

/* A pattern after expansion of [a|b] and [1..9]: one VS, a prefix* or *. */
enum rules_pat_kind { RULES_PAT_ANY, RULES_PAT_PREFIX, RULES_PAT_VS };

struct rules_pat {
	enum rules_pat_kind kind;
	int		 vs;		/* RULES_PAT_VS: VS index */
	char		*prefix;	/* RULES_PAT_PREFIX: the part before '*' */
	size_t		 plen;
};

struct rules_rule {
	enum rules_gate	 gate;
	struct rules_pat caller;
	struct rules_pat req;		/* RULES_PAT_ANY when the rule has no condition */
	int		 has_req;
	enum rules_action action;
	int		 target;	/* RULES_TO_VS: VS index */
	int		 priority;	/* highest priority among the VSs it names, -1 if none */
	int		 specificity;	/* 2 per exact VS, 1 per prefix, over caller and req */
	struct rules_loc loc;
};

/* A rule whose requester pattern is one exact VS, found by that VS. */
struct rules_req_rule {
	int		 req;		/* VS index */
	int		 rule;		/* into rules->rules */
};

struct rules_list {
	int		*idx;		/* into rules->rules, precedence order */
	size_t		 n;
	/*
	 * The same rules split for the query: those whose requester is one
	 * exact VS, sorted by (req, rule) and found by binary search, and the
	 * others (no condition, '*', a prefix) in precedence order. So a caller
	 * with hundreds of per-site rules costs O(log k) per query, not O(k).
	 */
	struct rules_req_rule *byreq;
	size_t		 nbyreq;
	int		*rest;
	size_t		 nrest;
};

/*
 * What a content condition compares: a request's host name (HTTP_HOST, else
 * SERVER_NAME) or its document root (DOCUMENT_ROOT, else the directories of
 * SCRIPT_FILENAME).
 */
enum rules_attr { RULES_ATTR_HOST = 0, RULES_ATTR_DOCROOT };

/*
 * A content rule (accept, CALLER[, req = R], host = H | docroot = D) => (VS),
 * or one binding of a site (site == its index; caller '*', no requester).
 * pat is normalised (attrs.c): a host in lower case without a trailing dot,
 * a wildcard "*.example.com" as ".example.com" with wild set; a docroot
 * absolute, without "//" or a trailing '/'.
 */
struct rules_crule {
	struct rules_pat caller;
	struct rules_pat req;		/* RULES_PAT_ANY when the rule has none */
	int		 has_req;
	enum rules_attr	 attr;
	int		 wild;
	char		*pat;
	int		 target;	/* VS index */
	int		 site;		/* index into rules->sites, or -1 for a rule */
	int		 priority;	/* as struct rules_rule's */
	int		 specificity;	/* of the caller and requester patterns */
	int		 next;		/* the next crule with the same pattern, or -1 */
	struct rules_loc loc;
};

/* site HOST [alias HOST]... [docroot PATH]... vs VS, one per expanded name. */
struct rules_site {
	char		**hosts;	/* normalised; [0] is the site's name; "*.x" as written */
	size_t		 nhosts;
	char		**docroots;	/* normalised */
	size_t		 ndocroots;
	int		 vs;
	struct rules_loc loc;
};

struct rules_file {
	char		*path;
	struct rules_file *next;
};

struct rules_names;

struct rules {
	struct rules_vs		*vs;
	size_t			 nvs;
	struct rules_group	*groups;
	size_t			 ngroups;
	struct rules_service	*services;
	size_t			 nservices;
	struct rules_rule	*rules;		/* all gates, in precedence order per gate */
	size_t			 nrules;
	struct rules_remote	*remotes;	/* remote lines, in file order */
	size_t			 nremotes;
	/*
	 * Per gate, rules[gate_first[g] .. gate_first[g + 1]) in precedence
	 * order. by_caller[g][i] (i < nvs): the rules whose caller is VS i by
	 * name or by prefix; by_caller[g][nvs]: the rules whose caller is '*'.
	 * A query merges the two lists (both ascending rule indices).
	 */
	size_t			 gate_first[RULES_GATE_MAX + 1];
	struct rules_list	*by_caller[RULES_GATE_MAX];
	int			*sorted;	/* VS indices in name order (prefix ranges) */
	unsigned		 total_cpu;	/* basis points counted against 100% */
	struct rules_names	*vs_names, *svc_names;
	struct rules_file	*files;		/* every file read, for locations */
	/*
	 * Sites and content rules (content.c). crules are in precedence order
	 * (priority, then specificity, then file order); attr_keys maps a key
	 * ("h" host, "w" wildcard suffix, "d" docroot, see attrs.c) to the
	 * first crule with that pattern, the others chained by .next.
	 */
	struct rules_site	*sites;
	size_t			 nsites;
	struct rules_crule	*crules;
	size_t			 ncrules;
	struct rules_names	*attr_keys;
	int			 crule_max_priority;	/* a query stops at a match of it */
};

/* The result of a query. */
struct rules_decision {
	enum rules_action action;
	int		 vs;	/* resolved VS index: the target (TO_VS), the requester
				 * (TO_REQUESTER), the caller (STAY); else -1 */
	int		 rule;	/* index into rules->rules, -1 = no rule matched (default) */
};

#define RULES_VS_UNKNOWN	(-1)	/* a VS the file does not declare, or an
					 * unclassified requester */

/* Flags for rules_load(). */
#define RULES_NO_INCLUDE	(1u << 0)	/* refuse include (fuzzing, untrusted buffers) */
#define RULES_NO_PERM_CHECK	(1u << 1)	/* skip the owner and mode checks */
/*
 * Accept only files the owner uid owns, not root's too: vsd loading a file
 * for a non-root client must not read root's files for it (an error message
 * quotes the file's words).
 */
#define RULES_OWNER_ONLY	(1u << 2)
/*
 * The owner and mode checks warn instead of refusing: "FILE: warning: ..."
 * lines in errs, and the load goes on. For `vsctl check`, which only reads
 * a file (a fresh clone made with umask 002 has group-writable examples);
 * vsd's apply keeps refusing such files.
 */
#define RULES_PERM_WARN		(1u << 3)

/*
 * Load, check and compile path. Every file read must be a regular file,
 * writable by its owner only, and owned by root or by the effective uid
 * (rules_load_as: by owner, the client a daemon loads it for). On success *out is set and 0 returned. On
 * failure every message is appended to errs (one per line, no prefix other
 * than the location) and -EINVAL returned (-ENOMEM when out of memory).
 */
int rules_load(const char *path, unsigned flags, struct rules **out, struct buf *errs);
int rules_load_as(const char *path, unsigned flags, uid_t owner, struct rules **out,
		  struct buf *errs);
/* The same, for a file already in memory (the name is used in messages). */
int rules_load_buffer(const char *name, const char *data, size_t len, unsigned flags,
		      struct rules **out, struct buf *errs);
void rules_free(struct rules *rs);

/* The index of a declared VS or service, or -1. */
int rules_vs_index(const struct rules *rs, const char *name);
int rules_service_index(const struct rules *rs, const char *name);

/*
 * The per-accept (per-socket, per-fork) decision. caller and req are VS
 * indices from rules_vs_index(), or RULES_VS_UNKNOWN. An unknown caller is
 * matched by the rules whose caller is '*' only; use rules_query_name() to
 * match it by name against prefix patterns too. An unknown requester (a
 * connection the socket gate did not classify) is matched by '*' and by rules
 * without a condition. No matching rule gives the gate's default: socket and
 * fork -> RULES_TO_CREATOR, accept -> RULES_TO_REQUESTER
 * (the paper's default rule). A RULES_TO_REQUESTER decision
 * with an unknown requester is turned into RULES_TO_HOME.
 * Cost: one walk of the caller's precomputed list, first match wins.
 */
struct rules_decision rules_query(const struct rules *rs, enum rules_gate gate,
				  int caller, int req);
/* The same by name (NULL = unknown); slower: a hash lookup per name. */
struct rules_decision rules_query_name(const struct rules *rs, enum rules_gate gate,
				       const char *caller, const char *req);

/* What an accept gate read from a request before handing its connection
 * over (FastCGI: the params the front end sends first). NULL: not sent. */
struct rules_req_attrs {
	const char *host;	/* SERVER_NAME, else HTTP_HOST; as sent */
	const char *docroot;	/* DOCUMENT_ROOT */
	const char *script;	/* SCRIPT_FILENAME */
};

/* Whether the accept gate of service SVC (rules_service_index(), or -1 for
 * a supervisor started without a declared service) has rules or sites that
 * match request content and speaks FastCGI (protocol); if so, *timeout_ms is how long the gate may wait
 * for the params before it serves the connection from the home VS (the
 * file's bound, or the default the man page names). 1 yes, 0 no. */
int rules_wants_attrs(const struct rules *rs, int svc, unsigned *timeout_ms);

/* The VS index a request belongs to by its content, for a connection to
 * service SVC from a requester in VS REQ (RULES_VS_UNKNOWN if not known),
 * accepted by a thread in VS CALLER; RULES_VS_UNKNOWN when no content rule
 * or site matches (the gate then decides by the requester as today). A
 * matching path (DOCUMENT_ROOT, else SCRIPT_FILENAME) wins over any host
 * name, whatever the priorities; priority decides within a kind. Host
 * names compare case-insensitively and without a trailing ":port" or ".". */
int rules_query_attrs(const struct rules *rs, int svc, int caller, int req,
		      const struct rules_req_attrs *a);

/* "accept", "socket", "fork"; and back (-1 if unknown). */
const char *rules_gate_name(enum rules_gate g);
int rules_gate_from_name(const char *s);
const char *rules_action_name(enum rules_action a);
/* "fastcgi", "mysql", "other"; and back (-1 if unknown). */
const char *rules_proto_name(enum rules_proto p);
int rules_proto_from_name(const char *s);

/* A human-readable dump of the compiled rules (what `check --dump` prints). */
void rules_dump(const struct rules *rs, struct buf *out);
/*
 * The compiled rules as a rule file that loads (rules_load_buffer, with
 * RULES_NO_INCLUDE) into the same rules: every VS with its share and
 * priority (no other limits, no plans or groups), every service, every rule
 * expanded, in precedence order, so every query gives the same decision.
 * vsd hands this to the accept gate (rules/write.c).
 */
void rules_write(const struct rules *rs, struct buf *out);
/* A remote line's source prefix as "ADDR/LEN" (nftables reads it too). */
void rules_prefix_write(struct buf *b, const struct rules_prefix *p);

#endif
