#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Each VS's share of the socket gate's connection table.
# An unprivileged process in one VS opens more connections than the table
# holds; another VS's requests to a gated service must still be classified
# to it (not served and charged in the service's home VS), the abuser's
# connects beyond its share are refused and counted for it, and its share
# comes back when its connections close, also across a vsd restart.
#
# vsd runs the real gate with a 256-slot table (tests/sg-mid.bpf.o): 64
# usable entries, a pool of 32, and with 3 VSs a reserve of 4 out and 4 in
# each (gates/socket/socket.h).  It records every connection at first
# (--record-conns all: the abuser floods a listener of its own); then, in
# gated mode, only connects to a gated port count against a share: a VS
# that used up its share still reaches ungated destinations.
. "${top_srcdir:-.}/tests/gate-lib.sh"
need_root
PROBE=$top_builddir/tests/net-probe
FLOODN=300	# connections the abuser tries: 600 entries, the table has 256
command -v setpriv > /dev/null || skip_all "no setpriv (util-linux) to drop to an unprivileged user"

VSD_SOCKET_BPF_OBJ=$top_builddir/tests/sg-mid.bpf.o
export VSD_SOCKET_BPF_OBJ
vsd_start --record-conns all || { plan 1; nok "start vsd"; exit 1; }
[ -e "/sys/fs/bpf/vsd/$T/vsd_conns" ] || skip_all "vsd runs without the socket gate (no cgroup2 hierarchy)"
plan 19
for v in "home 10%" "www1 30%" "bad 30%"; do
	set -- $v
	"$VSCTL" create "$1" --cpu "$2" > /dev/null || { nok "create VS $1"; exit 1; }
done
# conns FIELD VS: a number of the VS's "conns" in vsctl show --json
conns() {
	"$VSCTL" show "$2" --json | python3 -c 'import json, sys
print(json.load(sys.stdin)["gate"]["conns"][sys.argv[1]])' "$1"
}
run_start fcgi --home home -- "$SERVER" || { nok "vsctl run starts the service"; exit 1; }

# --- the abuser, as nobody, in VS bad
# flood [VS [N [PORT [OUT]]]]: N connects to a listener of its own (on PORT)
flood() {
	_out=${4:-$W/flood}
	"$VSCTL" exec "${1:-bad}" -- setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$PROBE" flood 127.0.0.1 "${2:-$FLOODN}" "$W/release" ${3:+"$3"} > "$_out" 2>&1 &
	FLOOD=$!
	GATE_PIDS="$GATE_PIDS $FLOOD"
	wait_for grep -q connected= "$_out"
}
flood
diag "abuser: $(cat "$W/flood")"
EPERM=$(sed -n 's/.*eperm=\([0-9]*\).*/\1/p' "$W/flood")
CONNECTED=$(sed -n 's/.*connected=\([0-9]*\).*/\1/p' "$W/flood")
check "the abuser's connects past its share fail with EPERM" [ "${EPERM:-0}" -gt 0 ]
RSV=$(conns reserve bad)
POOL=$(conns pool bad)
_all=1; [ "${CONNECTED:-0}" -ge "$RSV" ] && [ "${CONNECTED:-0}" -le $((RSV + POOL)) ] && _all=0
check "it got its reserve and the pool, no more ($CONNECTED <= $RSV + $POOL)" [ $_all = 0 ]
check "vsctl show counts the refused connects for the abuser" [ "$(conns refused bad)" = "$EPERM" ]

# vsd looks at the counters every 10 s and logs a VS that used up its share
logged() { grep -q "VS bad: its share of the connection table is used up .*: $EPERM connect() refused" "$W/run/vsd.log"; }
_i=0
while [ $_i -lt 100 ] && ! logged; do sleep 0.2; _i=$((_i + 1)); done
check "vsd logs the abuser's refusals within 20 s" logged
[ $_i -lt 100 ] || diag "vsd.log: $(tail -5 "$W/run/vsd.log")"

# --- its neighbour still gets its requests classified
"$VSCTL" exec www1 -- "$CLIENT" -p "$PORT" -n 20 -v > "$W/v1"
diag "www1's requests were served in: $(sed -n "s|.*cg=[^ ]*/$T/\([^/ ]*\) .*|\1|p" "$W/v1" |
	sort | uniq -c | tr -s ' \n' ' ')"
check "www1's 20 requests are all served in www1, none at home" only_in "$W/v1" www1
check "none of www1's connections went unrecorded" [ "$(conns unrecorded www1)" = 0 ]
check "nor refused" [ "$(conns refused www1)" = 0 ]
"$VSCTL" show bad > "$W/show"
check "vsctl show prints the VS's share" \
	grep -q "^connections recorded: .* out, .* in (reserve $RSV each, shared pool .*/$POOL in use); $EPERM connect() refused" "$W/show"

# --- across a vsd restart, the counts stay with the connections
OUT=$(conns out bad)
vsd_stop
vsd_start --record-conns all || { nok "vsd restarts"; exit 1; }
_all=1; [ "${OUT:-0}" -gt 0 ] && [ "$(conns out bad)" = "$OUT" ] && _all=0
check "after a vsd restart the abuser's count is adopted ($OUT out)" [ $_all = 0 ]
kill "$FLOOD"
wait "$FLOOD" 2>/dev/null
zero() { [ "$(conns out bad)" = 0 ] && [ "$(conns in bad)" = 0 ] && [ "$(conns pool_used bad)" = 0 ]; }
check "its connections closed: its share and the pool are free again" wait_for zero

# --- and the abuser can connect again, within its share
flood
CONNECTED2=$(sed -n 's/.*connected=\([0-9]*\).*/\1/p' "$W/flood")
check "the abuser gets the same share again ($CONNECTED2 = $CONNECTED)" [ "$CONNECTED2" = "$CONNECTED" ]
kill "$FLOOD"
wait "$FLOOD" 2>/dev/null
check "and gives it back again" wait_for zero

# --- a VS destroyed with connections open gives back what it took
flood
"$VSCTL" destroy bad --force > /dev/null
pool_free() { [ "$(conns pool_used www1)" = 0 ]; }
check "after destroy, the pool is free" wait_for pool_free
kill "$FLOOD"
wait "$FLOOD" 2>/dev/null

# --- gated mode (the default): only connects to a gated port count
vsd_stop
vsd_start || { nok "vsd restarts in gated mode"; exit 1; }
"$VSCTL" create bad2 --cpu 30% > /dev/null || { nok "create VS bad2"; exit 1; }
# a port of the abuser's own listener, gated by hand as an accept gate
# registers its listener's (the count goes with the pins at the end)
GP=$((20000 + $$ % 10000))
"$top_builddir/tests/socket-gate-ctl" "$T" gport "$GP" 1 > /dev/null
flood bad2 "$FLOODN" "$GP"
diag "abuser on gated port $GP: $(cat "$W/flood")"
EPERM=$(sed -n 's/.*eperm=\([0-9]*\).*/\1/p' "$W/flood")
CONNECTED=$(sed -n 's/.*connected=\([0-9]*\).*/\1/p' "$W/flood")
check "gated mode: its connects to a gated port past its share fail with EPERM" [ "${EPERM:-0}" -gt 0 ]
_all=1; [ "${CONNECTED:-0}" -ge "$RSV" ] && [ "${CONNECTED:-0}" -le $((RSV + POOL)) ] && _all=0
check "gated mode: it got its reserve and the pool, no more ($CONNECTED <= $RSV + $POOL)" [ $_all = 0 ]
check "gated mode: they are counted for it" [ "$(conns refused bad2)" = "$EPERM" ]
HELD=$FLOOD
# its share used up, it still reaches an ungated destination
flood bad2 20 "" "$W/flood2"
diag "abuser to an ungated port: $(cat "$W/flood2")"
check "gated mode: with its share used up, it connects to an ungated port (20 of 20)" \
	grep -q "^connected=20 eperm=0 other=0$" "$W/flood2"
check "gated mode: none of those refused or counted" [ "$(conns refused bad2)" = "$EPERM" ]
kill "$FLOOD"
wait "$FLOOD" 2>/dev/null
# and one more to the gated port is refused
"$VSCTL" exec bad2 -- "$PROBE" tcp 127.0.0.1 "$GP" > "$W/one" 2>&1
check "gated mode: one more connect to the gated port is refused" \
	[ "$(conns refused bad2)" = $((EPERM + 1)) ]
kill "$HELD"
wait "$HELD" 2>/dev/null || :
