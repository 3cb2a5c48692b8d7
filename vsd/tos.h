/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The socket gate's settings as people write them: TOS, DSCP, mark. */
#ifndef VSD_TOS_H
#define VSD_TOS_H

#include <stdint.h>

/*
 * A full TOS byte, 0-255, decimal or 0x hex: "40", "0x28".
 * Returns 0, -EINVAL (not a number) or -ERANGE; *why says why.
 */
int parse_tos(const char *s, uint8_t *tos, const char **why);
/*
 * A DSCP code point by name (CS0-CS7, AF11-AF43, EF; any case) or number
 * 0-63 (decimal or 0x hex).  Returns 0, -EINVAL or -ERANGE; *why says why.
 */
int parse_dscp(const char *s, uint8_t *dscp, const char **why);
/* The name of a DSCP value ("AF11"), or NULL if it has none. */
const char *dscp_name(uint8_t dscp);
/* SO_MARK: 0-4294967295, decimal or 0x hex. */
int parse_mark(const char *s, uint32_t *mark, const char **why);

#endif
