#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The accept gate keeps accept(2)'s semantics: an unmodified test server runs
# under vsd-gate with private VS cgroups and a private connection map. With
# GATE_UNIX=1 (tests/gate-unix-semantics.sh) on a Unix stream listener.
. "${top_srcdir:-.}/tests/gate-lib.sh"
need_root
plan $([ -n "${GATE_ATTRS:-}" ] && echo 25 || echo 23)

mk_vs home 1 2000 && mk_vs www1 2 4000 && mk_vs www2 3 4000 || { nok "create VS cgroups"; exit 1; }

# --- command not found
"$GATE" --home home --vs-table "$TAB" -- /nonexistent/cmd > /dev/null 2> "$W/nf.err"
check "command not found exits 127" [ $? = 127 ]
check "command not found says so" grep -q "/nonexistent/cmd: command not found" "$W/nf.err"

# --- blocking accept blocks, the supervisor does not
gate_start blk -- "$SERVER"
check "blocking: accept is pending in the gate" wait_for waiting
check "blocking: the server is in its home VS" \
	grep -q "/$T/home\$" "/proc/$SPID/task/$SPID/cgroup"
(sleep 0.3; "$CLIENT" -p "$PORT" -n 1 -v > "$W/blk.c") &
sleep 0.1
check "blocking: nothing served before the client came" [ "$(stat_field handed)" = 0 ]
wait $!
check "blocking: the late client is answered" grep -q "req=id 0" "$W/blk.c"
# several requests in parallel, served exactly once each
check "blocking: 200 connections x 8 in parallel" quiet "$CLIENT" -p "$PORT" -n 200 -j 8
# SIGUSR2 is forwarded; the server does not catch it and dies of it
kill -USR2 "$GPID"
wait "$GPID" 2>/dev/null; GSTATUS=$?
check "signal forwarded, status passed through (SIGUSR2 -> 140)" [ "$GSTATUS" = 140 ]

# --- non-blocking listener: EAGAIN when everything is empty
gate_start nb -- "$SERVER" -m nonblock
sleep 0.3
check "non-blocking: EAGAIN with empty queues" [ "$(stat_field eagain)" -gt 0 ]
check "non-blocking: 100 connections served" quiet "$CLIENT" -p "$PORT" -n 100 -j 4
gate_stop

# --- an event loop that accepts once per readiness event still sees the
#     connections the gate holds (the gate re-arms the listener)
gate_start ev -- "$SERVER" -m evloop
"$CLIENT" -p "$PORT" -n 1 -r "spin 400" > /dev/null &
BUSY=$!
sleep 0.1
timeout 10 "$CLIENT" -p "$PORT" -n 5 -j 5 > "$W/ev.c"
check "event loop: 5 connections queued behind a busy server all served" grep -q "ok 5 bad 0" "$W/ev.c"
wait $BUSY
if [ -n "${GATE_ATTRS:-}" ]; then
	# a client that writes 100 ms after connect(): the gate holds it (the
	# event loop's accept gets EAGAIN meanwhile), queues it when its bytes
	# come and wakes the event loop, which serves it
	timeout 10 python3 -c 'import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
time.sleep(0.1)
s.sendall(b"id 1\n")
d = b""
while True:
    c = s.recv(4096)
    if not c:
        break
    d += c
sys.stdout.write(d.decode())' "$PORT" > "$W/ev.late"
	check "event loop: a client slow to send is held, then served" grep -q "^seq=.* req=id 1" "$W/ev.late"
	check "event loop: it waited for its first bytes in the gate" [ "$(stat_field waited)" -ge 1 ]
fi
gate_stop

# --- accept4 flags
for f in none cloexec nonblock both; do
	gate_start a4$f -- "$SERVER" -4 $f -c 1
	"$CLIENT" -p "$PORT" -n 1 -v > "$W/a4$f.c"
	case $f in
	none) want="cloexec=0 nonblock=0" ;; cloexec) want="cloexec=1 nonblock=0" ;;
	nonblock) want="cloexec=0 nonblock=1" ;; both) want="cloexec=1 nonblock=1" ;;
	esac
	check "accept4($f): $want" grep -q "$want" "$W/a4$f.c"
	gate_stop
done
gate_start a4bad -- "$SERVER" -4 bad -c 1
wait "$GPID" 2>/dev/null
check "accept4 with unknown flags: EINVAL" grep -q "accept: Invalid argument" "$W/a4bad.err"

# --- peer address and length written back (and NULL pointers accepted)
gate_start peer -- "$SERVER" -c 2
"$CLIENT" -p "$PORT" -n 1 -b 31000 -v > "$W/peer.c"
if [ -n "${GATE_UNIX:-}" ]; then
	# the abstract name "gc-31000": family, NUL, 8 bytes
	check "peer address and length written back" grep -q "peer=@gc-31000:0 peerlen=11" "$W/peer.c"
else
	check "peer address and length written back" grep -q "peer=127.0.0.1:31000 peerlen=16" "$W/peer.c"
fi
gate_stop
gate_start peern -- "$SERVER" -N -c 1
check "NULL address pointers" quiet "$CLIENT" -p "$PORT" -n 1
gate_stop

# --- EINTR: a signal interrupts a pending accept; nothing is lost
gate_start intr -- "$SERVER"
wait_for waiting
kill -USR1 "$SPID"
check "signal during a blocked accept gives EINTR" wait_for grep -q "^eintr" "$OUT"
check "accept works after EINTR" quiet "$CLIENT" -p "$PORT" -n 1
# signals racing with hand-overs: every connection still answered once
( while kill -USR1 "$SPID" 2>/dev/null; do sleep 0.001; done ) &
SIGGER=$!
"$CLIENT" -p "$PORT" -n 2000 -j 8 > "$W/intr.c"
r=$?
kill $SIGGER 2>/dev/null; wait $SIGGER 2>/dev/null
check "2000 connections under a signal storm: all answered once" [ $r = 0 ]
diag "$(cat "$W/intr.c"); EINTRs seen by the server: $(grep -c '^eintr' "$OUT"), requeued: $(stat_field requeued)"
gate_stop

# --- exactly once: 10,000 connections
gate_start once -- "$SERVER" -c 10000
"$CLIENT" -p "$PORT" -n 10000 -j 16 > "$W/once.c"
r=$?
wait "$GPID" 2>/dev/null
_all=1; [ $r = 0 ] && grep -q "ok 10000 bad 0" "$W/once.c" && _all=0
check "10000 connections: each answered exactly once" [ $_all = 0 ]
check "10000 connections: the server accepted exactly 10000" grep -q "^served 10000 " "$OUT"

exit 0
