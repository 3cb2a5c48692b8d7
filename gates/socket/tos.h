/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * DSCP names for display.  Parsing TOS, DSCP and marks is in util.h
 * (parse_tos, parse_dscp, parse_mark), shared with the rule files.
 */
#ifndef VSD_TOS_H
#define VSD_TOS_H

#include <stdint.h>

/* The name of a DSCP value ("AF11"), or NULL if it has none. */
const char *dscp_name(uint8_t dscp);

#endif
