/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vsctl's commands that live in files of their own; vsctl.c dispatches. */
#ifndef VSD_VSCTL_H
#define VSD_VSCTL_H

#include <stdio.h>

/* run.c: `vsctl run` and `vsctl services`, the client side of the accept
 * gate. Supervisors put their status sockets in <dir of the vsd socket>/gates. */
#define GATE_STATUS_SUBDIR	"gates"

int vsctl_run(int argc, char **argv, const char *socket_path);
int vsctl_services(int argc, char **argv, const char *socket_path, int json);
/* The supervisors' status directory; one request line (cmd, with its "\n")
 * to the status socket at path, its answer in b (0, -EACCES, -1). */
struct buf;
int status_dir(const char *socket_path, char *buf, size_t len);
int gate_status_request(const char *path, const char *cmd, struct buf *b);

/* top.c: `vsctl top`, a live view of every VS and gated service. */
int vsctl_top(int argc, char **argv, const char *socket_path);

/*
 * check.c: `vsctl check [--dump] [--quiet] [--json] FILE`, offline: argv[0]
 * is the command name. Returns the exit status (lib/exitcode.h): 0, or
 * VX_BADVALUE for a file with errors, VX_USAGE...
 */
int vsctl_check(int argc, char **argv);

/* import.c: `vsctl import ...`, offline: argv[0] is the command name. A
 * rule file from this machine's web server and PHP-FPM configuration. */
int vsctl_import(int argc, char **argv);

/*
 * out.c: how vsctl reports. vsctl_json: --json was given. vsctl_fail prints
 * the message (stderr, or a JSON error object on stdout under --json) and
 * returns vx, the exit status (lib/exitcode.h); vsctl_fail_lines adds the
 * lines of a longer report (one error per line). vsctl_help prints the
 * usage line and help of one command.
 */
extern int vsctl_json;
int vsctl_fail(int vx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int vsctl_fail_lines(int vx, const char *msg, const char *lines);
int vsctl_help(const char *cmd, const char *usage, FILE *f);
/* A failed connect (-errno) to vsd at socket_path: its message and class,
 * 3 (no daemon) or 4 (permission), as vsctl_fail. */
int vsctl_connect_failed(const char *socket_path, int r);

#endif
