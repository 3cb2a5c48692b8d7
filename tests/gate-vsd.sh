#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The accept gate through a real vsd: `vsctl run`, `vsctl services`,
# re-binding, charging, reordering, a VS destroyed by vsd while it has queued
# connections, and exactly-once delivery across a vsd restart.
#
# Classification: if vsd has the socket gate's connection map pinned, clients
# run inside their VS (vsctl exec) and the real map classifies them;
# otherwise the test fills a map of the same layout itself, for client ports
# it chooses, and passes it with --conns-map. With GATE_UNIX=1
# (tests/gate-unix-vsd.sh) the service listens on a Unix socket and its
# clients run in their VSs.
. "${top_srcdir:-.}/tests/gate-lib.sh"
need_root
plan 20

vs_create "home 10%" "www1 40%" "www2 40%" "tiny 1%" || exit 1
ID_WWW1=$("$VSCTL" --json show www1 | sed -n 's/.*"id": \([0-9]*\).*/\1/p')
ID_WWW2=$("$VSCTL" --json show www2 | sed -n 's/.*"id": \([0-9]*\).*/\1/p')
ID_TINY=$("$VSCTL" --json show tiny | sed -n 's/.*"id": \([0-9]*\).*/\1/p')
REALMAP=/sys/fs/bpf/vsd/$T/vsd_conns
PB=$((20000 + ($$ % 40) * 250))
if [ -n "${GATE_UNIX:-}" ]; then
	diag "a Unix listener: classification by the client socket's cgroup"
	MAPOPT=
	REAL=1
elif [ -e "$REALMAP" ]; then
	diag "classification by the socket gate's map $REALMAP"
	MAPOPT=
	REAL=1
else
	diag "no socket gate loaded: classification by a map of our own ($MAP)"
	mk_map || { nok "create the connection map"; exit 1; }
	MAPOPT="--conns-map $MAP"
	REAL=
fi
# client VS OFFSET args...: a client in VS (its ports PB+OFFSET... when we classify)
client() {
	_vs=$1 _off=$2; shift 2
	if [ -n "$REAL" ]; then
		"$VSCTL" exec "$_vs" -- "$CLIENT" -p "$PORT" "$@"
	else
		"$CLIENT" -p "$PORT" -b $((PB + _off)) "$@"
	fi
}
classify() { [ -n "$REAL" ] || map_range $((PB + $1)) "$2" "$3"; }

# --- vsctl run: bad input
"$VSCTL" run --home nosuch -- "$SERVER" > /dev/null 2> "$W/e1"
_rc=$?; _all=1; [ $_rc = 1 ] && grep -q "home VS nosuch does not exist" "$W/e1" && _all=0
check "vsctl run: unknown home VS is refused" [ $_all = 0 ]
"$VSCTL" run --home home -- /nonexistent/cmd 2> "$W/e2"
check "vsctl run: command not found exits 127" [ $? = 127 ]

# --- re-binding per request, clients in two VSs, in turn
# rebind: ten requests from each VS, twice (rb1.2 and rb2.2: the second)
rebind() {
	classify 0 20 "$ID_WWW1" && classify 20 20 "$ID_WWW2"
	for r in 1 2; do
		client www1 0 -n 10 -v > "$W/rb1.$r"
		client www2 20 -n 10 -v > "$W/rb2.$r"
	done
}
# the misattributions the gate counts (gates/accept/fastpath.c)
counted() {
	status | grep -o '"\(direct_moved\|misordered\|fd_moved\)": [0-9]*' |
		awk '{ n += $2 } END { print n + 0 }'
}
# but_first FILE VS: every answer in FILE but the first came from VS
but_first() { [ -s "$1" ] && ! grep "^[0-9]" "$1" | sed 1d | grep -v -q "cg=[^ ]*/$T/$2 "; }
# not_in FILE VS: how many answers in FILE came from elsewhere than VS
not_in() { grep "^[0-9]" "$1" | grep -v -c "cg=[^ ]*/$T/$2 "; }
# shellcheck disable=SC2086
run_start fcgi --home home $MAPOPT -- "$SERVER" || { nok "vsctl run starts the service"; exit 1; }
ok "vsctl run starts the service in the foreground"
# the default mode: a thread waiting in the kernel begins the first request
# of a VS other than the one it last served where it sits, and the gate,
# woken by its arrival, moves it: that request's work runs in its VS, and
# the gate counts it
n0=$(counted)
rebind
n=$(( $(counted) - n0 )) e=$(( $(not_in "$W/rb1.2" www1) + $(not_in "$W/rb2.2" www2) ))
check "re-binding: www1's requests served in www1 (the first may begin where the thread sat)" \
	but_first "$W/rb1.2" www1
check "re-binding: www2's requests served in www2 (the first may begin where the thread sat)" \
	but_first "$W/rb2.2" www2
check "re-binding: each begun elsewhere counted by the gate ($e <= $n)" [ "$e" -le "$n" ]
"$VSCTL" services > "$W/svc"
"$VSCTL" services --json > "$W/svc.json"
check "vsctl services: name, home, per-VS served counts" \
	grep -q "^fcgi .* home .*www1=20,www2=20" "$W/svc"
# the binding each thread reports is where the kernel has it (an idle thread
# goes home after 100 ms, so read the kernel's answer around vsctl's)
where() {	# the VS the thread sits in: the cpu hierarchy (v1), or cgroup2
	sed -n -e "s|^[0-9]*:[^:]*\bcpu\b[^:]*:.*/$T/\([^/]*\)\$|\1|p" -e "s|^0::.*/$T/\([^/]*\)\$|\1|p" \
		"/proc/$SPID/task/$SPID/cgroup" | head -1
}
_bound_ok=1
for _try in 1 2 3; do
	_w1=$(where)
	"$VSCTL" services --json > "$W/svc.json"
	_w2=$(where)
	[ "$_w1" = "$_w2" ] || continue
	grep -q "\"threads\": \[{\"tid\": $SPID, \"pid\": $SPID, \"bound\": \"$_w1\"" "$W/svc.json" && _bound_ok=0
	break
done
[ $_bound_ok = 0 ] || diag "thread $SPID sits in '$_w1'; vsctl services --json said: $(cat "$W/svc.json")"
check "vsctl services --json: binding per thread, as the kernel has it" [ $_bound_ok = 0 ]

# --- charging
classify 40 60 "$ID_WWW1"
u0=$(usage_ns www1)
s0=$(awk '{print $1}' "/proc/$SPID/schedstat")
client www1 40 -n 60 -r "spin 30" > /dev/null
u1=$(usage_ns www1)
s1=$(awk '{print $1}' "/proc/$SPID/schedstat")
du=$((u1 - u0)); ds=$((s1 - s0))
diag "charging: www1's cgroup usage grew ${du} ns, the service ran ${ds} ns (client in www1 included: ${REAL:-no})"
if [ -n "$REAL" ]; then
	check "charging: www1 pays the service's busy time (within 10%)" [ $((du * 100)) -ge $((ds * 90)) ]
else
	_all=1; [ $((du * 100)) -ge $((ds * 90)) ] && [ $((du * 100)) -le $((ds * 110)) ] && _all=0
	check "charging: www1 pays the service's busy time (within 10%)" [ $_all = 0 ]
fi

# --- reordering: under-share www2 ahead of over-share www1's backlog
classify 100 10 "$ID_WWW1" && classify 120 2 "$ID_WWW2"
sh -c 'while :; do :; done' &
HOG=$!
"$VSCTL" attach www1 "$HOG" > /dev/null
client www1 100 -n 1 > /dev/null
ro_a() { client www1 101 "$@"; }
ro_b() { client www2 120 "$@"; }
reorder_check "reordering: under-share www2 served ahead of over-share www1's backlog"

# --- vsctl destroy of a VS with queued connections: they go home
classify 140 3 "$ID_TINY" && classify 145 1 "$ID_WWW1" && classify 146 1 "$ID_WWW2"
# tiny is over its 1% share (a CPU hog in it; one request makes the gate
# watch its use), so its connections rank below www2's, which holds the
# server until tiny is gone (the file $W/vd.hold) while tiny's three wait
classify 147 1 "$ID_TINY"
sh -c 'while :; do :; done' &
TH=$!
put_in tiny $TH
client tiny 147 -n 1 > /dev/null
sleep 0.5
client www1 145 -n 1 -r "spin 800" > /dev/null &
A=$!
sleep 0.1
client tiny 140 -n 3 -j 3 -v > "$W/vd" &
B=$!
sleep 0.1
: > "$W/vd.hold"
client www2 146 -n 1 -r "hold $W/vd.hold" > /dev/null &
C=$!
wait $A
wait_for sh -c "'$CLIENT' -u '$STATUS' | grep -q '\"name\": \"tiny\", \"id\": $ID_TINY, \"served\": 1, \"queued\": 3'"
kill $TH; wait $TH 2>/dev/null
# With the real socket gate the client runs in tiny; move it to www2 so tiny
# can go while its sockets, which keep their creator's VS, are still queued.
[ -z "$REAL" ] || "$VSCTL" attach www2 $("$VSCTL" show tiny --json |
	sed -n 's/.*"procs": \[\([0-9, ]*\)\].*/\1/p' | tr -d ,)
check "VS destroyed: vsctl destroy while 3 connections are queued" quiet "$VSCTL" destroy tiny
rm -f "$W/vd.hold"
wait $B $C
check "VS destroyed: its queued connections served from home" only_in "$W/vd" home
gate_stop

# --- --fast exact: threads wait in the gate, which binds each before its
# accept returns: every request begins in its VS
# shellcheck disable=SC2086
run_start fcgi-exact --home home $MAPOPT --fast exact -- "$SERVER" ||
	{ nok "vsctl run --fast exact starts the service"; exit 1; }
rebind
check "--fast exact, re-binding: www1's requests served in www1" only_in "$W/rb1.2" www1
check "--fast exact, re-binding: www2's requests served in www2" only_in "$W/rb2.2" www2
gate_stop

# --- exactly once, 10,000 connections from two VSs, vsd restarted meanwhile
# shellcheck disable=SC2086
run_start once --home home $MAPOPT -- "$SERVER" -c 10220
"$VSCTL" exec www1 -- "$CLIENT" -p "$PORT" -n 5000 -j 8 > "$W/once1" &
C1=$!
"$VSCTL" exec www2 -- "$CLIENT" -p "$PORT" -n 5000 -j 8 > "$W/once2" &
C2=$!
sleep 0.5
vsd_stop
sleep 0.5
check "vsd down: 20 more connections served meanwhile" quiet "$CLIENT" -p "$PORT" -n 20
vsd_start
check "vsd restart: vsd is back" quiet "$VSCTL" list
# a hung vsd (stopped) does not stop the gate either
kill -STOP "$VSD_PID"
check "vsd hung: 200 more connections served meanwhile" quiet "$CLIENT" -p "$PORT" -n 200 -j 4
kill -CONT "$VSD_PID"
wait $C1; r1=$?
wait $C2; r2=$?
wait "$GPID" 2>/dev/null
_all=1
[ $r1 = 0 ] && [ $r2 = 0 ] && grep -q "ok 5000 bad 0" "$W/once1" && grep -q "ok 5000 bad 0" "$W/once2" && _all=0
check "exactly once across a vsd restart: 10000 answered once each" [ $_all = 0 ]
check "exactly once across a vsd restart: the server accepted 10220" grep -q "^served 10220 " "$OUT"
check "no accept failed (no ENOSYS)" sh -c "! grep -q 'accept:' '$W/once.err'"
exit 0
