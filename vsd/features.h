/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef VSD_FEATURES_H
#define VSD_FEATURES_H

struct cg_ctx;

/* `vsd --check`: print what the kernel and systemd support and the
 * fallbacks in use (cg may be NULL if the layout is unknown). */
int features_print(const struct cg_ctx *cg);

#endif
