#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A VS destroyed and created again under the same name is a new VS (a new
# id, a new cgroup): a gated service must serve its requests in it from the
# first one; before, a few of the re-created VS's first requests ran in the
# home VS.
#
# In the default mode the first of them may begin where the service's
# thread, waiting in the kernel, sat: the gate moves it when the request
# arrives, and counts it. Under --fast exact each begins in the new VS.
#
# vsd pushes the VS table to the gate before destroy and create return.
# Once the gate fetched its table itself, and a fetch was held back for
# 200 ms after the last one, so a VS re-created within 200 ms of one had its
# first requests served at home: each round below asks the gate to read its
# table ("refresh") just before the re-create, so that behaviour would fail
# every round, not one time in ten.
. "$(dirname "$0")/lib.sh"
need_root
need_gate_server
[ "$(cg_layout)" != legacy ] || skip_all "no cgroup2: no socket gate to classify connections"

R=$(mktemp -d /tmp/vsd-recreate.XXXXXX)
on_exit "rm -rf $R"
# every thread of the service waits at home: a destroy --force of www1
# then kills nothing of the shared service
at_home() { [ "$(svc echo "['threads']" | json 'sorted(set(t["bound"] for t in d))')" = '["base"]' ]; }
# ask the supervisor to refresh its VS table now, over its status socket
refresh() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"refresh\n")
while s.recv(4096): pass' "$VSD_TMP/gates/echo.sock"
}
# count FILE VS: the answers in FILE served in VS

vsd_start || { fail "vsd starts"; done_testing; }
on_exit "pkill -KILL -f -- '[g]ate-server -p $PORT'"
vsctl create base --cpu 10% >/dev/null && vsctl create www1 --cpu 30% >/dev/null ||
	{ fail "create the VSs"; done_testing; }
# the gate's count of requests that began where a thread waiting in the
# kernel sat, before it moved the thread (the default mode: direct_moved),
# and of the other misattributions it counts
moved() {
	svc echo "['fast']" | json 'sum(d.get(k, 0) for k in
		("direct_moved", "misordered", "fd_moved"))'
}
# serve MODE: the service under --fast MODE ("" for the default), the same
# rounds against it
serve() {
	"$VSCTL" run --home base --name echo ${1:+--fast "$1"} -- "$SERVER" -p "$PORT" > "$R/run.log" 2>&1 &
	RUN=$!
	on_exit "kill $RUN"
	m=${1:-default}
	check "$m: the gated service answers" wait_until quiet "$CLIENT" -p "$PORT" -n 1
	vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 5 -v > "$R/before"
	is "$(count "$R/before" www1)" 5 "$m: before, www1's requests are served in www1"
	for round in 1 2 3 4 5; do
		# exact: threads wait in the gate, at home; by default the
		# thread waits in the kernel where it last served (the old www1)
		[ "$m" = default ] || wait_until at_home || diag "threads: $(svc echo "['threads']")"
		old=$(vsctl show www1 --json | json "d['id']")
		check "$m, round $round: vsctl destroy www1 --force" quiet vsctl destroy www1 --force
		check "$m, round $round: the gate refreshes its table" refresh
		check "$m, round $round: vsctl create www1" quiet vsctl create www1 --cpu 30%
		m0=$(moved)
		vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 50 -v > "$R/after.$round"
		new=$(vsctl show www1 --json | json "d['id']")
		in=$(count "$R/after.$round" www1) home=$(count "$R/after.$round" base)
		if [ "$m" = default ]; then
			# the first may begin where the waiting thread sat (the
			# destroyed www1's threads go home), moved then: counted
			n=$(( $(moved) - m0 ))
			is "$in/$home" "$((50 - home))/$home" \
				"$m, round $round: the re-created www1's first 50 requests (id $old -> $new) in www1 or at home"
			check "$m, round $round: at most the first at home ($home), counted as moved ($n)" \
				[ "$home" -le 1 -a "$home" -le "$n" ]
		else
			is "$in/$home" "50/0" \
				"$m, round $round: all of the re-created www1's first 50 requests in www1 (id $old -> $new), none at home"
		fi
	done
	check "$m: the service ran throughout" kill -0 "$(svc echo "['pid']")"
	kill "$RUN"
	wait "$RUN" 2>/dev/null
	wait_until sh -c "! '$CLIENT' -p $PORT -n 1 >/dev/null 2>&1"
}
# The default mode first. Then --fast exact, where threads wait in the gate
# and every request begins in its VS: its rounds allow none at home.
serve ""
serve exact
done_testing
