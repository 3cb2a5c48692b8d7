#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Seeds for the FastCGI parser's fuzzer (gates/accept/fuzz-fcgi.c): the
# records captured from apache2 and cgi-fcgi (tests/unit/fcgi-records.h),
# and an Apache-like request with 48 KB of headers before its SERVER_NAME
# and DOCUMENT_ROOT. Each file starts with the harness's chunk-size byte.
# Usage: fcgi-seeds.py SRCDIR OUTDIR
import os, re, struct, sys

src, out = sys.argv[1], sys.argv[2]
text = open(os.path.join(src, "tests/unit/fcgi-records.h")).read()
for name, body in re.findall(r"unsigned char (\w+)\[\] = \{([^}]*)\}", text):
    data = bytes(int(x, 16) for x in re.findall(r"0x[0-9a-fA-F]{2}", body))
    for step in (0, 7, 255):
        with open(os.path.join(out, "%s-%d" % (name, step)), "wb") as f:
            f.write(bytes([step]) + data)


def rec(t, c, pad=0):
    return struct.pack(">BBHHBB", 1, t, 1, len(c), pad, 0) + c + b"\0" * pad


def pair(n, v):
    def ln(x):
        return bytes([x]) if x < 128 else struct.pack(">I", x | 0x80000000)
    return ln(len(n)) + ln(len(v)) + n + v


params = b"".join(pair(b"HTTP_X_PAD%d" % i, b"p" * 8000) for i in range(6))
params += pair(b"HTTP_HOST", b"b.example") + pair(b"SERVER_NAME", b"a.example")
params += pair(b"DOCUMENT_ROOT", b"/srv/a") + pair(b"SCRIPT_FILENAME", b"/srv/a/i.php")
stream = rec(1, b"\0\1\0\0\0\0\0\0")
for o in range(0, len(params), 65535):
    stream += rec(4, params[o:o + 65535], 3)
stream += rec(4, b"") + rec(5, b"")
with open(os.path.join(out, "padded"), "wb") as f:
    f.write(bytes([100]) + stream)
