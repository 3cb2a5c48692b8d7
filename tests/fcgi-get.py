#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# One FastCGI request (the responder role, as Apache's mod_proxy_fcgi sends
# it: BEGIN_REQUEST, PARAMS, empty PARAMS, empty STDIN) to HOST:PORT; prints
# the response's stdout stream and exits 0 if the request completed.
#   fcgi-get.py [--tos TOS] HOST PORT [NAME=VALUE ...]
# --tos sets the socket's IP_TOS before it connects, as any process may.
import socket
import struct
import sys


def record(kind, body, req=1):
    return struct.pack("!BBHHBx", 1, kind, req, len(body), 0) + body


def pair(k, v):
    k, v = k.encode(), v.encode()
    return bytes([len(k)]) + bytes([len(v)]) + k + v


def main():
    args, tos = sys.argv[1:], None
    if args[:1] == ["--tos"]:
        tos, args = int(args[1], 0), args[2:]
    host, port = args[0], int(args[1])
    params = dict(a.split("=", 1) for a in args[2:])
    params.setdefault("REQUEST_METHOD", "GET")
    params.setdefault("SCRIPT_NAME", "/ad")
    body = b"".join(pair(k, v) for k, v in params.items())
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    s.settimeout(10)
    if tos is not None:
        if ":" in host:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, tos)
        else:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    s.connect((host, port))
    s.sendall(record(1, struct.pack("!HB5x", 1, 0)) + record(4, body) + record(4, b"") +
              record(5, b""))
    out, buf = b"", b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
        while len(buf) >= 8:
            _, kind, _, clen, plen = struct.unpack("!BBHHBx", buf[:8])
            if len(buf) < 8 + clen + plen:
                break
            content, buf = buf[8:8 + clen], buf[8 + clen + plen:]
            if kind == 6:
                out += content
            elif kind == 3:
                sys.stdout.write(out.decode(errors="replace"))
                return 0
    sys.stdout.write(out.decode(errors="replace"))
    return 1


sys.exit(main())
