/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vsctl's commands that live in files of their own; vsctl.c dispatches. */
#ifndef VSD_VSCTL_H
#define VSD_VSCTL_H

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
 * check.c: `vsctl check [--dump] [--quiet] FILE`, offline: argv[0] is the
 * command name. Prints the errors on stderr; returns the exit status
 * (0 ok, 1 errors, 2 usage).
 */
int vsctl_check(int argc, char **argv);

#endif
