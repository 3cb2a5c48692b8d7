/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vsctl run / vsctl services: the client side of the accept gate. */
#ifndef VSD_VSCTL_RUN_H
#define VSD_VSCTL_RUN_H

/* Where supervisors put their status sockets: <dir of the vsd socket>/gates */
#define GATE_STATUS_SUBDIR	"gates"

int vsctl_run(int argc, char **argv, const char *socket_path);
int vsctl_services(int argc, char **argv, const char *socket_path, int json);

#endif
