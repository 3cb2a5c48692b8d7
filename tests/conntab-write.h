/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inserting and deleting connection-table entries as the BPF side does (tests only). */
#ifndef VSD_TESTS_CONNTAB_WRITE_H
#define VSD_TESTS_CONNTAB_WRITE_H

#include "gates/socket/conntab.h"

int conntab_insert(struct conntab *t, const struct vsd_conn_key *k, const struct vsd_conn_val *v);
int conntab_delete(struct conntab *t, const struct vsd_conn_key *k);

#endif
