#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What the socket gate records, with a real accept gate:
# in vsd's default mode (--record-conns gated) a VS's connection to the port
# of a listener that `vsctl run --gate accept` gates is recorded (its
# connecting side) and classified; one to an ungated port leaves no entry,
# and so no state callback and no delete (the map's counters stay).  After
# a restart with --record-conns all, both sides of both are recorded.
. "${top_srcdir:-.}/tests/gate-lib.sh"
need_root
PROBE=$top_builddir/tests/net-probe
vsd_start || { plan 1; nok "start vsd"; exit 1; }
PINS=/sys/fs/bpf/vsd/$T
[ -e "$PINS/vsd_gports" ] || skip_all "vsd runs without the socket gate (no cgroup2 hierarchy)"
plan 14
vs_create "home 10%" "www1 40%" || exit 1

# gport PORT: the count of gated listeners on PORT (vsd_gports)
gport() { "$top_builddir/tests/socket-gate-ctl" "$T" gport "$1" 0 | sed -n 's/^gport=//p'; }
# added_removed: the connection map's counters, from vsctl show (vsd
# reads them at most every 50 ms: the pause makes them fresh)
added_removed() {
	sleep 0.1
	"$VSCTL" show www1 | sed -n 's/^connection map: \([0-9]*\) recorded, \([0-9]*\) removed.*/\1 \2/p'
}
# gport_is PORT N: PORT's count is N
gport_is() { [ "$(gport "$1")" = "$2" ]; }
# conns_to PORT [DIR]: how many recorded connections have PORT as remote
# (out) or local (in) port
conns_to() {
	"$VSCTL" conns --json | python3 -c 'import json, sys
p = ":" + sys.argv[1]
print(len([c for c in json.load(sys.stdin) if (c["remote"] if c["direction"] == "out" else c["local"]).endswith(p)
           and (len(sys.argv) < 3 or c["direction"] == sys.argv[2])]))' "$@"
}
# listed PORT DIR N: N connections listed
listed() { [ "$(conns_to "$1" "$2")" = "$3" ]; }
# held_listed NAME-OUT NAME-IN N-IN: while a request from www1 to the
# service is held open (the server waits while a file exists: as long as
# the checks take, also under TCG), its connecting side is listed once and
# its accepting side N-IN times; then the gate stops
held_listed() {
	: > "$W/held"
	"$VSCTL" exec www1 -- "$CLIENT" -p "$PORT" -n 1 -r "hold $W/held" > /dev/null &
	_hold=$!
	check "$1" wait_for listed "$PORT" out 1
	check "$2" wait_for listed "$PORT" in "$3"
	rm -f "$W/held"
	wait $_hold
	gate_stop
}

# --- gated mode: the default
check "vsd says it records connections to gated listeners only" \
	grep -q "socket gate: recording connections to gated listeners only (--record-conns gated)" "$W/run/vsd.log"
run_start fcgi --home home -- "$SERVER" || { nok "vsctl run starts the service"; exit 1; }
check "the accept gate registers its listener's port ($PORT) in vsd_gports" wait_for gport_is "$PORT" 1

# an ungated destination: a server of our own, outside any VS
"$PROBE" serve 127.0.0.1 0 > "$W/serve" &
GATE_PIDS="$GATE_PIDS $!"
wait_for grep -q ready "$W/serve"
UP=$(sed -n 's/^ready //p' "$W/serve")
before=$(added_removed)
"$VSCTL" exec www1 -- "$PROBE" many 127.0.0.1 "$UP" 50 > "$W/many"
check "50 connections from www1 to the ungated port $UP" grep -q "^done=50$" "$W/many"
after=$(added_removed)
diag "connection map before and after: $before / $after"
check "gated mode: none of them recorded, none removed (the counters stay)" \
	sh -c '[ -n "$1" ] && [ "$1" = "$2" ]' - "$before" "$after"

# the gated service: recorded, classified, removed
"$VSCTL" exec www1 -- "$CLIENT" -p "$PORT" -n 20 -v > "$W/v1"
check "gated mode: www1's 20 requests to the gated service are served in www1" only_in "$W/v1" www1
after2=$(added_removed)
diag "connection map after the gated requests: $after2"
check "gated mode: they were recorded (20 more added)" \
	[ "${after2%% *}" = $((${after%% *} + 20)) ]
removed20() { set -- $(added_removed); [ "$2" = $((${after#* } + 20)) ]; }
check "gated mode: and removed when closed" wait_for removed20
# a connection held open to the gated service is listed, its connecting side only
held_listed "gated mode: vsctl conns lists www1's open connection to the service (out)" \
	"gated mode: not the accepting side's (in)" 0
check "the stopped gate unregistered its port" wait_for gport_is "$PORT" 0

# --- all mode, across a restart
vsd_stop
vsd_start --record-conns all || { nok "vsd restarts with --record-conns all"; exit 1; }
check "the restart from gated to all is logged" \
	grep -q "the previous vsd recorded connections to gated listeners only; this vsd's option wins" "$W/run/vsd.log"
run_start fcgi2 --home home -- "$SERVER" || { nok "vsctl run starts the service again"; exit 1; }
before=$(added_removed)
"$VSCTL" exec www1 -- "$PROBE" many 127.0.0.1 "$UP" 50 > "$W/many"
both() { set -- $(added_removed); [ "$1" -ge $((${before%% *} + 50)) ]; }
check "all mode: the 50 connections to the ungated port are recorded" both
held_listed "all mode: the connecting side to the gated service (out) is listed" \
	"all mode: and the accepting side, the service's home VS (in)" 1
