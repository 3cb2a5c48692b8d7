#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A shared service is never killed for a VS it serves. The accept gate binds
# the service's thread to the VS whose request it serves, so the thread sits
# in that VS's cgroup; `vsctl destroy VS --force` then moves it home (the
# request in progress completes, the service keeps its pid and serves the
# next request) and kills only the VS's own processes, also while the gate
# keeps binding threads into the VS under load. vsd refuses to attach a
# gated service's processes or its supervisor to a VS.
#
# Clients run outside every VS and are classified by their source port
# through a connection table of our own (--conns-map): so destroying a VS
# never kills a client.
. "${top_srcdir:-.}/tests/gate-lib.sh"
need_root
plan 24

vs_create "home 10%" "www1 30%" "www2 30%" || exit 1
vs_id() { "$VSCTL" --json show "$1" | sed -n 's/.*"id": \([0-9]*\).*/\1/p'; }
mk_map || { nok "create the connection table"; exit 1; }
# below the ephemeral ports (32768-) and the other gate tests' (20000-29999)
PB=$((10000 + ($$ % 20) * 500))
run_start svc --home home --conns-map "$MAP" -- "$SERVER" ||
	{ nok "vsctl run starts the service"; exit 1; }
map_range "$PB" 10 "$(vs_id www1)"	# (for the server's $PORT)
map_range $((PB + 20)) 10 "$(vs_id www2)"
ok "vsctl run starts the service under the gate"
# where the service's thread sits: the VS of its cpu cgroup (v1), or cgroup2
where() {
	sed -n -e "s|^[0-9]*:[^:]*\bcpu\b[^:]*:.*/$T/\([^/]*\)\$|\1|p" -e "s|^0::.*/$T/\([^/]*\)\$|\1|p" \
		"/proc/$SPID/task/$SPID/cgroup" | head -1
}
bound_to() { [ "$(where)" = "$1" ]; }
pid_now() { status | sed -n 's/^{"name": "[^"]*", "pid": \([0-9]*\).*/\1/p'; }
gone() { ! "$VSCTL" show "$1" > /dev/null 2>&1 && ! ls -d /sys/fs/cgroup/*/"$VSH_ROOT/$1" \
	/sys/fs/cgroup/"$VSH_ROOT/$1" 2> /dev/null | grep -q .; }

# --- vsd does not move a gated service, its supervisor, or itself
out=$("$VSCTL" attach www2 "$SPID" 2>&1)
check "attach of the service's process is refused" [ $? -ne 0 ]
check "saying whose it is" sh -c "echo '$out' | grep -q 'attach: pid $SPID belongs to service svc'"
out=$("$VSCTL" attach www2 "$GPID" 2>&1)
check "attach of its supervisor is refused" sh -c "echo '$out' | grep -q 'attach: pid $GPID is the supervisor (vsd-gate) of service svc'"
check "the service stays at home" [ "$(where)" = home ]

# --- destroy --force while the service serves the VS
sleep 1000 &
OWN=$!
"$VSCTL" attach www1 "$OWN" > /dev/null
"$CLIENT" -p "$PORT" -b "$PB" -n 1 -r "spin 1500" -v > "$W/long" &
C=$!
wait_for bound_to www1
check "the gate bound the service's thread to www1 for www1's request" [ "$(where)" = www1 ]
"$VSCTL" destroy www1 --force > "$W/d1" 2>&1
rc=$?
check "destroy www1 --force succeeds meanwhile" [ $rc = 0 ]
[ $rc = 0 ] || diag "$(cat "$W/d1")"
wait $C
check "the request in progress completes" [ $? = 0 ]
check "with its answer, served from www1 until it moved" grep -q "^ok 1 bad 0" "$W/long"
check "the service keeps its pid" kill -0 "$SPID"
check "and its supervisor says the same pid" [ "$(pid_now)" = "$SPID" ]
wait $OWN
check "www1's own process was killed" [ $? = 137 ]
check "www1 and its cgroups are gone" gone www1
check "the service's thread is at home again" [ "$(where)" = home ]
"$CLIENT" -p "$PORT" -b $((PB + 20)) -n 1 -v > "$W/next2"
check "the service serves the next request, from www2, in www2" only_in "$W/next2" www2
"$CLIENT" -p "$PORT" -n 1 -v > "$W/nexth"
check "and an unclassified one at home" only_in "$W/nexth" home

# --- without --force: a VS whose only process is the service serving it
"$CLIENT" -p "$PORT" -b $((PB + 21)) -n 1 -r "spin 1500" -v > "$W/long2" &
C=$!
wait_for bound_to www2
check "destroy www2 (no --force) while the service serves it succeeds" quiet "$VSCTL" destroy www2
wait $C
check "that request completes too" grep -q "^ok 1 bad 0" "$W/long2"

# --- the gate binds threads into the VS while destroy runs
"$VSCTL" create www1 --cpu 30% > /dev/null
map_range $((PB + 100)) 300 "$(vs_id www1)"
"$CLIENT" -p "$PORT" -b $((PB + 100)) -n 300 -j 4 -r "spin 2" > "$W/load" &
C=$!
wait_for bound_to www1
"$VSCTL" destroy www1 --force > "$W/d2" 2>&1
check "destroy www1 --force under www1's load succeeds" [ $? = 0 ]
wait $C
check "every request of that load is answered" grep -q "^ok 300 bad 0" "$W/load"
check "the service still has its pid" [ "$(pid_now)" = "$SPID" ]
check "www1 is gone again" gone www1

# --- vsd-gate's status socket: never a file in its place
echo "keep me" > "$W/precious"
"$GATE" --home home --socket "$VSD_SOCKET" --status "$W/precious" -- "$SERVER" > /dev/null 2> "$W/gerr"
check "vsd-gate --status on a regular file refuses to start" sh -c "grep -q 'exists and is not a socket' '$W/gerr'"
check "and leaves the file" [ "$(cat "$W/precious")" = "keep me" ]
gate_stop
exit $tap_failed
