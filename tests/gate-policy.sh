#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The accept gate's policy on real cgroups: classification through the
# connection table, re-binding per request (also per prefork worker), charging,
# reordering by remaining share, clients that hang up while queued, and a VS
# destroyed while it has queued connections. The table is a real BPF array
# with the socket gate's layout, filled here the way the socket gate would
# (tests/conntab-ctl).
. "${top_srcdir:-.}/tests/gate-lib.sh"
need_root
plan 18

mk_vs home 1 1900 && mk_vs www1 2 4000 && mk_vs www2 3 4000 && mk_vs tiny 4 100 ||
	{ nok "create VS cgroups"; exit 1; }
mk_map || { nok "create the connection map"; exit 1; }
GOPT="--conns-map $MAP"
# fixed client ports, below the ephemeral range, apart for parallel runs
PB=$((20000 + ($$ % 40) * 250))


# --- re-binding per request, single-threaded server
gate_start rb $GOPT -- "$SERVER"
map_range $((PB + 0)) 10 2 && map_range $((PB + 20)) 10 3
for round in 1 2; do
	"$CLIENT" -p "$PORT" -n 10 -b $((PB + 0)) -v > "$W/rb1.$round" &&
	"$CLIENT" -p "$PORT" -n 10 -b $((PB + 20)) -v > "$W/rb2.$round"
done
"$CLIENT" -p "$PORT" -n 5 -v > "$W/rb0"
check "re-binding: www1's requests served in www1 (alternating VSs)" only_in "$W/rb1.2" www1
check "re-binding: www2's requests served in www2" only_in "$W/rb2.2" www2
check "re-binding: unknown clients served in the home VS" only_in "$W/rb0" home
if ! pure_v2; then
	check "hybrid: cgroup2 untouched by accept alone" sh -c "! grep -v 'cg2=[^ ]*/$T/home ' '$W/rb1.1' | grep -q '^[0-9]'"
else
	# one cgroup2 membership per process: it follows the binding
	check "pure v2: the process's cgroup follows the binding" sh -c "! grep -v 'cg2=[^ ]*/$T/www1 ' '$W/rb1.2' | grep -q '^[0-9]'"
fi
"$CLIENT" -p "$PORT" -n 1 -b $((PB + 25)) -r sock -v > "$W/rbs"
check "hybrid: a socket created while serving www2 moves cgroup2 to www2" grep -q "cg2=[^ ]*/$T/www2 " "$W/rbs"
# The helper that keeps moves off RCU grace periods (rcu-warm.c):
# active after moves, in the home VS, asleep a second after the last move,
# gone with the supervisor.
warm() { status | grep -o "\"warm\": {\"pid\": [0-9]*, \"writes\": [0-9]*" | grep -o "$1\": [0-9]*" | grep -o '[0-9]*$'; }
WP=$(warm pid)
if pure_v2; then WH=0::; else WH=":cpu[,:]"; fi
check "warm: the helper runs in the home VS" sh -c "[ '${WP:-0}' -gt 0 ] && grep -q '$WH.*/$T/home\$' /proc/$WP/cgroup"
check "warm: it made no-op moves while the gate moved threads" [ "$(warm writes)" -gt 0 ]
sleep 2
W1=$(warm writes); sleep 0.5; W2=$(warm writes)
check "warm: asleep a second after the last move ($W1 -> $W2 writes)" [ "$W1" = "$W2" ]
gate_stop
check "warm: the helper is gone with the supervisor" wait_for sh -c "[ -n '$WP' ] && ! kill -0 $WP 2>/dev/null"

# --- prefork: each worker is re-bound on its own
gate_start pf $GOPT -- "$SERVER" -n 3
map_range $((PB + 40)) 40 2 && map_range $((PB + 80)) 40 3
"$CLIENT" -p "$PORT" -n 40 -j 4 -b $((PB + 40)) -r "spin 5" -v > "$W/pf1" &
"$CLIENT" -p "$PORT" -n 40 -j 4 -b $((PB + 80)) -r "spin 5" -v > "$W/pf2"
wait $!
check "prefork: 80 answers" [ "$(cat "$W/pf1" "$W/pf2" | grep -c req=)" = 80 ]
check "prefork: www1's requests served in www1" only_in "$W/pf1" www1
check "prefork: www2's requests served in www2" only_in "$W/pf2" www2
npids=$(cat "$W/pf1" "$W/pf2" | grep -o ' pid=[0-9]*' | sort -u | wc -l)
check "prefork: several workers served ($npids)" [ "$npids" -ge 2 ]
gate_stop

# --- threads of one process: each thread re-bound on its own (v1 per-thread moves)
if ! pure_v2; then
	gate_start th $GOPT -- "$SERVER" -T 3
	map_range $((PB + 60)) 30 2 && map_range $((PB + 90)) 30 3
	"$CLIENT" -p "$PORT" -n 30 -j 3 -b $((PB + 60)) -r "spin 5" -v > "$W/th1" &
	"$CLIENT" -p "$PORT" -n 30 -j 3 -b $((PB + 90)) -r "spin 5" -v > "$W/th2"
	wait $!
	only_in "$W/th1" www1 && only_in "$W/th2" www2 && [ "$(cat "$W/th1" "$W/th2" | grep -c req=)" = 60 ]
	check "threads: 3 threads of one process, each answer in its requester's VS" [ $? = 0 ]
	gate_stop
else
	# pure v2: one cgroup per process, so a re-binding moves the process as
	# a whole (vsctl-run(8)); with one request at a time, each answer still
	# runs in its requester's VS
	gate_start th $GOPT -- "$SERVER" -T 3
	map_range $((PB + 60)) 10 2 && map_range $((PB + 90)) 10 3
	"$CLIENT" -p "$PORT" -n 10 -b $((PB + 60)) -r "spin 5" -v > "$W/th1"
	"$CLIENT" -p "$PORT" -n 10 -b $((PB + 90)) -r "spin 5" -v > "$W/th2"
	only_in "$W/th1" www1 && only_in "$W/th2" www2 && [ "$(cat "$W/th1" "$W/th2" | grep -c req=)" = 20 ]
	check "threads, pure v2: a 3-thread process moves as a whole; each answer in its requester's VS" [ $? = 0 ]
	gate_stop
fi

# --- charging: the VS pays for the service's busy time on its behalf
gate_start ch $GOPT -- "$SERVER"
map_range $((PB + 120)) 60 2
u0=$(usage_ns www1)
s0=$(awk '{print $1}' "/proc/$SPID/schedstat")
"$CLIENT" -p "$PORT" -n 60 -b $((PB + 120)) -r "spin 30" > /dev/null
u1=$(usage_ns www1)
s1=$(awk '{print $1}' "/proc/$SPID/schedstat")
du=$((u1 - u0)); ds=$((s1 - s0))
diag "charging: www1 usage grew ${du} ns, the service ran ${ds} ns"
_all=1; [ $((du * 100)) -ge $((ds * 90)) ] && [ $((du * 100)) -le $((ds * 110)) ] && _all=0
check "charging: www1's usage grew by the service's busy time (within 10%)" [ $_all = 0 ]
gate_stop

# --- a client that hangs up while queued is closed, not handed over
gate_start dc $GOPT -- "$SERVER"
"$CLIENT" -p "$PORT" -n 1 -r "spin 600" > /dev/null &
sleep 0.1
"$CLIENT" -p "$PORT" -n 3 -x > /dev/null
"$CLIENT" -p "$PORT" -n 1 -v > "$W/dc"
wait $!
_all=1; [ "$(stat_field closed_dead)" = 3 ] && [ "$(stat_field handed)" = 2 ] && _all=0
check "disconnect while queued: 3 closed, 2 handed over" [ $_all = 0 ]
gate_stop

# --- a VS destroyed with queued connections: they are served from home
gate_start vd $GOPT -- "$SERVER"
map_range $((PB + 180)) 3 4 && map_range $((PB + 184)) 1 2 && map_range $((PB + 186)) 1 3
# tiny is over its 1% share (a CPU hog in it; one request makes the gate
# watch its use), so its connections rank below www2's, which holds the
# server until tiny is gone (the file $W/vd.hold) while tiny's three wait
map_range $((PB + 187)) 1 4
sh -c 'while :; do :; done' &
TH=$!
put_in tiny $TH
"$CLIENT" -p "$PORT" -n 1 -b $((PB + 187)) > /dev/null
sleep 0.5
"$CLIENT" -p "$PORT" -n 1 -b $((PB + 184)) -r "spin 800" > /dev/null &
A=$!
sleep 0.1
"$CLIENT" -p "$PORT" -n 3 -j 3 -b $((PB + 180)) -v > "$W/vd" &
B=$!
sleep 0.1
: > "$W/vd.hold"
"$CLIENT" -p "$PORT" -n 1 -b $((PB + 186)) -r "hold $W/vd.hold" > /dev/null &
C=$!
wait $A
wait_for sh -c "'$CLIENT' -u '$STATUS' | grep -q '\"name\": \"tiny\", \"id\": 4, \"served\": 1, \"queued\": 3'"
status > "$W/vd.st1"
kill $TH; wait $TH 2>/dev/null
rm_vs tiny
rm -f "$W/vd.hold"
wait $B $C


check "VS destroyed while queued: its 3 connections served from home" only_in "$W/vd" home
gate_stop

# --- reordering: a backlog from an over-share VS waits for an under-share VS
gate_start ro $GOPT -- "$SERVER"
map_range $((PB + 190)) 10 2 && map_range $((PB + 210)) 3 3
# www1 is busy (a CPU hog in it) and known to the gate; www2 is idle
sh -c 'while :; do :; done' &
HOG=$!
put_in www1 $HOG
"$CLIENT" -p "$PORT" -n 1 -b $((PB + 190)) > /dev/null
"$CLIENT" -p "$PORT" -n 1 -b $((PB + 210)) > /dev/null
ro_a() { "$CLIENT" -p "$PORT" -b $((PB + 191)) "$@"; }
ro_b() { "$CLIENT" -p "$PORT" -b $((PB + 211)) "$@"; }
reorder_check "reordering: the under-share VS is served ahead of the over-share backlog"
gate_stop
exit 0
