/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The VSs' systemd scope on hosts whose cgroups systemd manages (scope.c). */
#ifndef VSD_SCOPE_H
#define VSD_SCOPE_H

#include <stddef.h>
#include <sys/types.h>

struct cg_ctx;

/* 1 if systemd is PID 1 and manages a pure cgroup-v2 tree ($VSD_NO_SCOPE set: 0). */
int scope_wanted(const struct cg_ctx *cg);
/* The scope's cgroup, relative to the mount: "/vsd.slice/vsd-<root>.scope". */
int scope_cgroup(const char *root, char *buf, size_t len);
/* Adopt vsd-<root>.scope and its keeper, or make them; 0 and *keeper, or -errno. */
int scope_ensure(const char *root, const char *mnt, pid_t *keeper);
/* vsd exits with no VS left: end the keeper, so that systemd removes the scope. */
void scope_stop_keeper(pid_t keeper);
/* ... then wait (10 s at most) until systemd has removed the scope, the
 * parent of vsroot (<mnt>/vsd.slice/vsd-<root>.scope/<root>). */
void scope_wait_removed(const char *vsroot);
/* `vsd --keeper`: sleep until SIGTERM, holding the scope. Does not return. */
void keeper_main(void) __attribute__((noreturn));

#endif
