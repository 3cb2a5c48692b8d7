#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Clients that try to hold vsd's control socket (tests/vsd-ctl-flood.sh):
#   ctl-attack.py SOCKET IDLE DRIP READY-FILE [UID GID]
# becomes UID (with GID as its only supplementary group) if given, opens IDLE
# connections that send nothing, then DRIP connections that send a request's
# header, then its body one byte every 1.5 s, writes "ready" to READY-FILE, and watches them
# all until vsd closes each one (or 8 s pass). Prints one JSON object:
# for each connection, its kind, when it was closed (seconds after its
# connect, null if never) and the error text vsd sent before closing.
import json, os, select, socket, struct, sys, time

path, n_idle, n_drip, ready = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ready_f = open(ready, "w")	# before dropping privileges: the directory is root's
if len(sys.argv) > 6:
    # in here, not through setpriv: the interpreter may live where only root reads
    os.setgroups([int(sys.argv[6])])
    os.setresgid(65534, 65534, 65534)
    os.setresuid(int(sys.argv[5]), int(sys.argv[5]), int(sys.argv[5]))
conns = []
connect_end = time.monotonic() + 1
for kind, n in (("idle", n_idle), ("drip", n_drip)):
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        c = {"kind": kind, "sock": s, "t0": time.monotonic(), "data": b"", "closed": None,
             "sent": 0, "error": None}
        while True:
            try:
                s.connect(path)
                break
            except BlockingIOError:
                # a full backlog: vsd takes connections more slowly than we make
                # them; a while, then give up (a blocking connect would wait)
                if time.monotonic() > connect_end:
                    c["closed"], c["error"] = 0, "could not connect: the backlog is full"
                    break
                time.sleep(0.01)
        conns.append(c)
ready_f.write("ready\n")
ready_f.close()

# the header of a 25-byte request at once, then its body a byte at a time
# (it held vsd for many seconds when the deadline was per read)
request = struct.pack("=I", 25) + b"list\0" + b"json=0\0" * 2 + b"a=bcd\0"
end = time.monotonic() + 8
next_drip = time.monotonic()
while time.monotonic() < end and any(c["closed"] is None for c in conns):
    now = time.monotonic()
    if now >= next_drip:
        for c in conns:
            if c["kind"] == "drip" and c["closed"] is None and c["sent"] < len(request):
                k = 4 if c["sent"] == 0 else 1
                try:
                    c["sent"] += c["sock"].send(request[c["sent"]:c["sent"] + k])
                except OSError:
                    pass
        next_drip = now + 1.5
    open_ = [c for c in conns if c["closed"] is None]
    r, _, _ = select.select([c["sock"] for c in open_], [], [], 0.05)
    for c in open_:
        if c["sock"] not in r:
            continue
        try:
            b = c["sock"].recv(65536)
        except BlockingIOError:
            continue
        except OSError:
            b = b""
        if b:
            c["data"] += b
        else:
            c["closed"] = round(time.monotonic() - c["t0"], 3)

out = []
for c in conns:
    msg = c["error"]
    if len(c["data"]) >= 8:
        st, n = struct.unpack("=II", c["data"][:8])
        msg = c["data"][8:8 + n].decode(errors="replace").strip()
    out.append({"kind": c["kind"], "closed": c["closed"], "error": msg})
    c["sock"].close()
print(json.dumps(out))
