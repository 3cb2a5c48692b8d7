#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A VS destroyed and created again under the same name is a new VS (a new
# id, a new cgroup): a gated service must serve its requests in it from the
# first one; before, a few of the re-created VS's first requests ran in the
# home VS.
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
count() { grep -c "cg=[^ ]*/$VSD_ROOT/$2 " "$1"; }

vsd_start || { fail "vsd starts"; done_testing; }
on_exit "pkill -KILL -f -- '[g]ate-server -p $PORT'"
vsctl create base --cpu 10% >/dev/null && vsctl create www1 --cpu 30% >/dev/null ||
	{ fail "create the VSs"; done_testing; }
# --fast exact: the checks read where each request starts (the default
# mode may start the first request of the re-created VS where the thread
# sat; tests/gate-fast.sh tests that mode)
"$VSCTL" run --home base --name echo --fast exact -- "$SERVER" -p "$PORT" > "$R/run.log" 2>&1 &
RUN=$!
on_exit "kill $RUN"
check "the gated service answers" wait_until quiet "$CLIENT" -p "$PORT" -n 1
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 5 -v > "$R/before"
is "$(count "$R/before" www1)" 5 "before: www1's requests are served in www1"

for round in 1 2 3 4 5; do
	wait_until at_home || diag "threads: $(svc echo "['threads']")"
	old=$(vsctl show www1 --json | json "d['id']")
	check "round $round: vsctl destroy www1 --force" quiet vsctl destroy www1 --force
	check "round $round: the gate refreshes its table" refresh
	check "round $round: vsctl create www1" quiet vsctl create www1 --cpu 30%
	vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 50 -v > "$R/after.$round"
	new=$(vsctl show www1 --json | json "d['id']")
	is "$(count "$R/after.$round" www1)/$(count "$R/after.$round" base)" "50/0" \
		"round $round: all of the re-created www1's first 50 requests in www1 (id $old -> $new), none at home"
done
check "the service ran throughout" kill -0 "$(svc echo "['pid']")"
done_testing
