/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A growable text buffer, for replies, tables and JSON. */
#ifndef VSD_BUF_H
#define VSD_BUF_H

#include <stddef.h>

struct buf {
	char	*p;
	size_t	 len;
	size_t	 cap;
	int	 oom;		/* set once an allocation failed; output is then truncated */
};

void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_add(struct buf *b, const void *data, size_t len);
/*
 * A JSON string literal, quoted and escaped; NULL writes null. Always valid
 * UTF-8: control characters and DEL as \u00XX, each byte of an invalid
 * UTF-8 sequence as \ufffd (the replacement character).
 */
void buf_json_str(struct buf *b, const char *s);
/* A JSON array of strings: the non-empty lines of text (NULL: []). */
void buf_json_lines(struct buf *b, const char *text);
void buf_reset(struct buf *b);
void buf_free(struct buf *b);

#endif
