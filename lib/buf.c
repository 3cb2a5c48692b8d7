// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

static int
buf_grow(struct buf *b, size_t need)
{
	size_t cap;
	char *p;

	if (b->oom)
		return -1;
	if (b->len + need + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + need + 1)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void
buf_add(struct buf *b, const void *data, size_t len)
{
	if (buf_grow(b, len) < 0)
		return;
	memcpy(b->p + b->len, data, len);
	b->len += len;
	b->p[b->len] = '\0';
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || buf_grow(b, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/*
 * The length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF), or 0 if it is not one.
 */
static size_t
utf8_len(const unsigned char *p)
{
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		return (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		unsigned char lo = p[0] == 0xe0 ? 0xa0 : 0x80, hi = p[0] == 0xed ? 0x9f : 0xbf;

		return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		unsigned char lo = p[0] == 0xf0 ? 0x90 : 0x80, hi = p[0] == 0xf4 ? 0x8f : 0xbf;

		return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 &&
		    (p[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

/*
 * Always valid UTF-8 JSON: control characters (and DEL) escaped, and each
 * byte that does not start a well-formed sequence written as U+FFFD, the
 * replacement character (a name vsd accepts has none; a message may quote
 * what a client sent, or a path).
 */
void
buf_json_str(struct buf *b, const char *s)
{
	const unsigned char *p;
	size_t n;

	if (!s) {
		buf_add(b, "null", 4);
		return;
	}
	buf_add(b, "\"", 1);
	for (p = (const unsigned char *)s; *p; p += n) {
		n = 1;
		switch (*p) {
		case '"':  buf_add(b, "\\\"", 2); break;
		case '\\': buf_add(b, "\\\\", 2); break;
		case '\n': buf_add(b, "\\n", 2); break;
		case '\t': buf_add(b, "\\t", 2); break;
		case '\r': buf_add(b, "\\r", 2); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				buf_printf(b, "\\u%04x", *p);
			else if ((n = utf8_len(p)) == 0) {
				buf_add(b, "\\ufffd", 6);
				n = 1;
			} else
				buf_add(b, p, n);
		}
	}
	buf_add(b, "\"", 1);
}

void
buf_json_lines(struct buf *b, const char *l)
{
	struct buf one = { 0 };
	int n = 0;

	buf_add(b, "[", 1);
	while (l && *l) {
		size_t len = strcspn(l, "\n");

		if (len) {
			buf_reset(&one);
			buf_add(&one, l, len);
			if (n++)
				buf_add(b, ", ", 2);
			buf_json_str(b, one.p);
		}
		l += len + (l[len] == '\n');
	}
	buf_add(b, "]", 1);
	buf_free(&one);
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	b->oom = 0;
	if (b->p)
		b->p[0] = '\0';
}

void
buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
