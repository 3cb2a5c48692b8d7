/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The socket gate as the VS commands see it: options, attach, display. */
#ifndef VSD_GATE_VS_H
#define VSD_GATE_VS_H

#include "vsd.h"

/*
 * Reads --tos, --dscp, --mark and --priority of create/set into *cfg (which
 * holds the current settings; "none" clears one).  --tos and --dscp both set
 * the TOS byte, so together they are refused.  Changes nothing else.
 */
int gate_opts_parse(const struct request *req, struct gate_socket_cfg *cfg, struct reply *rep);
/* The settings vs's sockets get: its own, or a socket rule's target's. */
const struct gate_socket_cfg *gate_vs_settings(struct vsd *d, const struct vs *vs);
/* 1 if the request carries any gate option. */
int gate_opts_given(const struct request *req);

/* Attach / update / detach the VS's gate; no-ops where vsd runs without it. */
int gate_vs_attach(struct vsd *d, struct vs *vs);
int gate_vs_update(struct vsd *d, struct vs *vs);
/* Every VS again: after the rules or a VS's settings changed (socket rules). */
void gate_vs_update_all(struct vsd *d);
int gate_vs_detach(struct vsd *d, struct vs *vs);

/*
 * Every 10 s, one line per VS whose connections were refused or went
 * unrecorded since the last look (its share of the connection table was
 * used up); gate_vs_timeout_ms() says when next (-1: never).
 */
int  gate_vs_timeout_ms(struct vsd *d);
void gate_vs_tick(struct vsd *d);

/* "gate": {...} for the VS's JSON (with a leading ", "), and show's lines. */
void gate_vs_json(struct vsd *d, const struct vs *vs, struct buf *b);
void gate_vs_text(struct vsd *d, const struct vs *vs, struct buf *b);

#endif
