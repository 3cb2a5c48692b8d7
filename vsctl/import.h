/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `vsctl import`: what the web servers and PHP-FPM pools of this machine
 * serve, read from their configuration, as the model import.c turns into a
 * rule file. import-apache.c, import-nginx.c and import-fpm.c each fill
 * it from one source; import-sites.c merges the sites; import-out.c writes
 * the file and the report.
 */
#ifndef VSD_VSCTL_IMPORT_H
#define VSD_VSCTL_IMPORT_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/buf.h"

/* One name-based virtual host (an Apache <VirtualHost>, an nginx server). */
struct imp_site {
	char	*host;		/* ServerName / first server_name, lower case, no port */
	char	**alias;	/* ServerAlias / the other server_names */
	size_t	 nalias;
	char	*docroot;	/* as the configuration writes it (NULL: none) */
	char	*fcgi;		/* the PHP handler's socket: "/run/php/x.sock" or "host:port" */
	char	*file;		/* where it starts */
	unsigned line;
	unsigned port;
	const char *front;	/* "apache", "nginx" */
	int	 account;	/* index in imp.acct; -1: not mapped */
	char	*vs;		/* the VS it goes to */
};

/* One PHP-FPM pool. */
struct imp_pool {
	char	*version;	/* "8.2" */
	char	*name;
	char	*user;
	char	*listen;
	char	*pm;
	unsigned max_children;
	char	*file;
	unsigned line;
	size_t	 naccounts;	/* distinct accounts of the sites it serves */
	int	 account;	/* the one account, when naccounts == 1 */
	size_t	 nsites;
	long	 pss_kib;	/* -1: not running */
	unsigned nprocs;
};

struct imp_account {
	char	*owner;		/* user name, or "uUID" without a passwd entry */
	char	*vs;
	size_t	 nsites;
};

struct imp {
	const char *root;	/* --root, "" for none */
	int	 per_site;
	struct imp_site *site;
	size_t	 nsite;
	struct imp_pool *pool;
	size_t	 npool;
	struct imp_account *acct;
	size_t	 nacct;
	struct buf errors;	/* FILE:LINE: message, one a line: nothing is written */
	struct buf unmapped;	/* FILE:LINE: host: why (the report) */
	struct buf renamed;	/* "name" -> vs (the report) */
	unsigned napache, nnginx;	/* vhosts read from each */
};

/* Add a parse error (printf-style, without the newline). */
void imp_error(struct imp *im, const char *file, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A new site, zeroed, with its file and line. */
struct imp_site *imp_site_new(struct imp *im, const char *front, const char *file, unsigned line);
void imp_site_alias(struct imp_site *s, const char *name);
void imp_site_free(struct imp_site *s);
/* import-sites.c: the sites named, merged and checked (errors in im->errors). */
void imp_sites(struct imp *im);
/* A host name as a site line takes it (lower case, no :port, no final dot), malloc'd. */
char *imp_host(const char *name);

/*
 * Run the shell command cmd with arg appended (the servers' own dump),
 * its stdout into out and its stderr into err; returns its exit status,
 * or -errno if it could not run.
 */
int imp_run(const char *cmd, const char *arg, struct buf *out, struct buf *err);

/* A front end that refused its configuration (status: its exit status, or
 * -errno if it did not run): each line of its text that line_fn finds a
 * FILE:LINE in is an error, else its first line is. */
void imp_failed(struct imp *im, const char *cmd, int status, const char *text,
		int (*line_fn)(struct imp *im, const char *line, const char *eol));

int imp_apache(struct imp *im, const char *cmd);
int imp_nginx(struct imp *im, const char *cmd);
int imp_fpm(struct imp *im);
/* The pools' processes, from /proc: pss_kib and nprocs. */
void imp_fpm_memory(struct imp *im);

/* The rule file, deterministic: the same model gives the same bytes. */
/* 0, or -E2BIG: too many VSs for a share each. */
int imp_write_rules(const struct imp *im, struct buf *out);
/* The home VS of the gated pools of version ("8.2" -> "php82"). */
void imp_php_home(const char *version, char *buf, size_t len);
void imp_report(const struct imp *im, FILE *f);

#endif
