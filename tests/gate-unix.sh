#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The accept gate on a Unix stream listener: each connection is classified by
# the cgroup its client's socket was created in (gates/accept/unixpeer.c),
# also after the client has exited, also from a cgroup below a VS; clients of
# no VS are served at home; prefork workers are re-bound one by one; the VS
# pays for the service's time; a client that hangs up while queued is closed,
# one that sent its request and then closed is still served.
# (accept(2)'s semantics on a Unix listener: tests/gate-unix-semantics.sh;
# through vsd with a vsd restart: tests/gate-unix-vsd.sh.)
GATE_UNIX=1
. "${top_srcdir:-.}/tests/gate-lib.sh"
need_root
plan 13

mk_vs home 1 1900 && mk_vs www1 2 4000 && mk_vs www2 3 4000 ||
	{ nok "create VS cgroups"; exit 1; }
# in VS: a client whose socket is created in that VS
in_vs() { _vs=$1; shift; "$VSCTL" exec "$_vs" -- "$@"; }
# served VS: how many connections the gate charged to VS
served() { status | grep -o "\"name\": \"$1\", \"id\": [0-9]*, \"served\": [0-9]*" | grep -o '[0-9]*$'; }
# send_and_go REQ: a client that connects, sends REQ and exits without reading
send_and_go() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
s.close()' "$PORT" "$1"
}

# --- classification and re-binding per request
gate_start rb -- "$SERVER" || { nok "start the service"; exit 1; }
check "the service listens on a Unix socket" [ -S "$PORT" ]
for round in 1 2; do
	in_vs www1 "$CLIENT" -p "$PORT" -n 10 -v > "$W/rb1.$round"
	in_vs www2 "$CLIENT" -p "$PORT" -n 10 -v > "$W/rb2.$round"
done
"$CLIENT" -p "$PORT" -n 5 -v > "$W/rb0"
check "re-binding: www1's requests served in www1 (alternating VSs)" only_in "$W/rb1.2" www1
check "re-binding: www2's requests served in www2" only_in "$W/rb2.2" www2
check "unknown clients (in no VS) served in the home VS" only_in "$W/rb0" home
_all=1; [ "$(served www1)" = 20 ] && [ "$(served www2)" = 20 ] && _all=0
check "the gate charged 20 connections to each VS" [ $_all = 0 ]

# a client in a cgroup below www1's directory belongs to www1
D2=$("$VSCTL" show www1 --json | python3 -c 'import json, sys
c = json.load(sys.stdin)["cgroups"]
print(([p for p in c if "/unified/" in p] or [p for p in c if "/cgroup/" in p])[-1])')
mkdir "$D2/sub"
sh -c 'echo $$ > "$1/sub/cgroup.procs" && exec "$2" -p "$3" -n 3 -v' sh "$D2" "$CLIENT" "$PORT" > "$W/sub"
rmdir "$D2/sub"
check "a client in a cgroup below www1 is served in www1" only_in "$W/sub" www1

# the PID race: the client has exited (its pid could be anyone's now) before
# the gate looks at its connection; its socket still names www1
in_vs www2 "$CLIENT" -p "$PORT" -n 1 -r "spin 500" > /dev/null &
B=$!
sleep 0.2
s0=$(served www1)
in_vs www1 sh -c "$(command -v python3) -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b\"id 1 gone\\n\")' '$PORT'"
wait $B
wait_for sh -c "[ \"\$('$CLIENT' -u '$STATUS' | grep -o '\"name\": \"www1\", \"id\": [0-9]*, \"served\": [0-9]*' | grep -o '[0-9]*\$')\" = $((s0 + 1)) ]"
check "a client that exited before its turn is still served in its VS" [ "$(served www1)" = $((s0 + 1)) ]
gate_stop

# --- prefork: each worker is re-bound on its own
gate_start pf -- "$SERVER" -n 3
in_vs www1 "$CLIENT" -p "$PORT" -n 40 -j 4 -r "spin 5" -v > "$W/pf1" &
P1=$!
in_vs www2 "$CLIENT" -p "$PORT" -n 40 -j 4 -r "spin 5" -v > "$W/pf2"
wait $P1
check "prefork: 80 answers" [ "$(cat "$W/pf1" "$W/pf2" | grep -c req=)" = 80 ]
check "prefork: www1's and www2's requests each served in their VS" \
	eval 'only_in "$W/pf1" www1 && only_in "$W/pf2" www2'
npids=$(cat "$W/pf1" "$W/pf2" | grep -o ' pid=[0-9]*' | sort -u | wc -l)
check "prefork: several workers served ($npids)" [ "$npids" -ge 2 ]
gate_stop

# --- charging: the VS pays for the service's busy time on its behalf
gate_start ch -- "$SERVER"
"$CLIENT" -p "$PORT" -n 1 > /dev/null
u0=$(usage_ns www2)
s0=$(awk '{print $1}' "/proc/$SPID/schedstat")
"$VSCTL" exec www2 -- "$CLIENT" -p "$PORT" -n 40 -r "spin 30" > /dev/null
u1=$(usage_ns www2)
s1=$(awk '{print $1}' "/proc/$SPID/schedstat")
du=$((u1 - u0)); ds=$((s1 - s0))
diag "charging: www2 usage grew ${du} ns, the service ran ${ds} ns (the client's own time included)"
_all=1; [ "$ds" -gt 1000000000 ] && [ $((du * 100)) -ge $((ds * 95)) ] && _all=0
check "charging: www2's usage grew by at least the service's busy time" [ $_all = 0 ]
gate_stop

# --- a client that hangs up while queued is closed, not handed over; one
#     that sent its request and closed is served (as without the gate)
gate_start dc -- "$SERVER"
"$CLIENT" -p "$PORT" -n 1 -r "spin 600" > /dev/null &
B=$!
sleep 0.1
"$CLIENT" -p "$PORT" -n 3 -x > /dev/null
send_and_go "id 7 sent-and-gone"
"$CLIENT" -p "$PORT" -n 1 -v > "$W/dc"
wait $B
check "hang-up while queued: 3 closed unserved" [ "$(stat_field closed_dead)" = 3 ]
check "a request sent before the hang-up is still handed over (3 handed)" [ "$(stat_field handed)" = 3 ]
gate_stop
exit 0
