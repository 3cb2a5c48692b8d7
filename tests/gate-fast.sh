#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The accept gate's fast path (gates/accept/fastpath.c, vsctl-run(8) --fast):
# accepts answered with CONTINUE instead of a hand-over, a thread let wait in
# the kernel, the three modes, what a change of VS costs, the races (no
# connection lost or doubled, misattributions bounded by the gate's own
# count), and a killed supervisor with a thread waiting in the kernel.
. "$(dirname "$0")/lib.sh"
need_root
need_gate_server
[ "$(cg_layout)" != legacy ] || skip_all "no cgroup2: no socket gate to classify connections"

R=$(mktemp -d /tmp/vsd-fast.XXXXXX)
on_exit "rm -rf $R"
vsd_start || { fail "vsd starts"; done_testing; }
on_exit "pkill -KILL -f -- '[g]ate-server -p $PORT'"
vsctl create base --cpu 10% >/dev/null && vsctl create www1 --cpu 40% >/dev/null &&
	vsctl create www2 --cpu 40% >/dev/null || { fail "create the VSs"; done_testing; }

# count FILE VS: requests that began in VS (the server reads its cgroup as
# soon as it has the request line)
count() { grep -c "cg=[^ ]*/$VSD_ROOT/$2 " "$1"; }
fast() { svc "$1" "['fast']['$2']"; }
stat() { svc "$1" "['$2']"; }
RUN=
# start NAME MODE [gate-server options]: a gated service on PORT
start() {
	_n=$1 _m=$2; shift 2
	"$VSCTL" run --home base --name "$_n" ${_m:+--fast "$_m"} -- "$SERVER" -p "$PORT" "$@" \
		> "$R/$_n.log" 2>&1 &
	RUN=$!
	wait_until running "$_n" && wait_until quiet "$CLIENT" -p "$PORT" -n 1
}
stop() {
	kill "$RUN" 2>/dev/null
	wait "$RUN" 2>/dev/null
	wait_until no_server
}

# --- one VS, one thread: nearly every accept without a hand-over
start one "" || fail "the gated service starts"
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 300 -v > "$R/one"
is "$(count "$R/one" www1)" 300 "one VS: all 300 requests begin in www1"
c=$(fast one continued) d=$(fast one direct) h=$(stat one handed)
diag "continued $c, direct $d, handed $h"
check "one VS: at least 95% of the accepts without a hand-over" \
	python3 -c "import sys; c, d, h = map(int, sys.argv[1:]); sys.exit(not (c + d >= 0.95 * (c + d + h) and c + d >= 285))" "$c" "$d" "$h"
# back to back, the next connection is queued before the thread's next
# accept (continued); clients a process apart find the thread waiting
vsctl exec www1 -- sh -c "for i in \$(seq 20); do '$CLIENT' -p $PORT -n 1 -v; done" > "$R/paced"
is "$(count "$R/paced" www1)" 20 "one VS, paced: all 20 requests begin in www1"
check "one VS, paced: the thread waits in the kernel for them (direct $(fast one direct))" \
	[ "$(fast one direct)" -ge 10 ]
is "$(fast one mode) $(fast one listeners)" "on 1" "status: mode on, one listener on the fast path"

# --- a run of one VS, then another: the first request of the other may
# begin where the thread sat, and that is counted; its work runs in its VS
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 20 > /dev/null
m0=$(fast one direct_moved)
vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 5 -r "spin 300" -v > "$R/switch"
m1=$(fast one direct_moved)
diag "after the switch: direct_moved $m0 -> $m1, misattributed $(fast one direct_cpu_usec) us in all, max $(fast one direct_cpu_max_usec) us"
is "$(count "$R/switch" www2)/$((m1 - m0))" "5/1" \
	"a change of VS after a run: all 5 of www2's requests end in www2, one thread moved while it served"
check "status counts the CPU the moved thread ran before the move" [ "$(fast one direct_cpu_usec)" -gt 0 ]

# --- two VSs in turn (runs shorter than 8): every request begins in its VS
d0=$(fast one direct)
: > "$R/alt"
for i in 1 2 3 4 5 6 7 8 9 10; do
	vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 2 -v >> "$R/alt.1"
	vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 2 -v >> "$R/alt.2"
done
is "$(count "$R/alt.1" www1)/$(count "$R/alt.2" www2)" "20/20" \
	"VSs in turn: each request begins in its own VS (no thread waits in the kernel)"
stop

# --- many threads, two VSs at once: nothing lost or doubled, and requests
# that began in another VS no more than the gate's count of moved threads
# and dropped models (each such race costs at most one request)
start race "" -n 4 || fail "the prefork service starts"
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 3000 -j 4 -v > "$R/r1" &
P1=$!
vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 3000 -j 4 -v > "$R/r2" &
P2=$!
wait $P1 $P2
ok1=$(sed -n 's/^ok \([0-9]*\) bad \([0-9]*\).*/\1 \2/p' "$R/r1")
ok2=$(sed -n 's/^ok \([0-9]*\) bad \([0-9]*\).*/\1 \2/p' "$R/r2")
is "$ok1/$ok2" "3000 0/3000 0" "race: every request answered once, with its own id (6000)"
served=$(svc race "['vs']" | json 'sum(v["served"] for v in d if v["name"] in ("www1", "www2"))')
is "$served" 6000 "race: the gate counts 6000 connections of www1 and www2 served, no more"
wrong=$(( $(count "$R/r1" www2) + $(count "$R/r1" base) + $(count "$R/r2" www1) + $(count "$R/r2" base) ))
bound=$(( $(fast race direct_moved) + $(fast race resync) ))
diag "race: $wrong began elsewhere; moved while serving $(fast race direct_moved), models dropped $(fast race resync), continued $(fast race continued), direct $(fast race direct), handed $(stat race handed)"
check "race: requests begun in another VS ($wrong) <= moves while serving + dropped models ($bound)" \
	[ "$wrong" -le "$bound" ]
stop

# --- exact: no thread waits in the kernel, still no hand-over
start exact exact || fail "the service starts with --fast exact"
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 200 -v > "$R/exact"
is "$(count "$R/exact" www1)" 200 "exact: all 200 requests begin in www1"
c=$(fast exact continued) d=$(fast exact direct) h=$(stat exact handed)
diag "exact: continued $c, direct $d, handed $h"
is "$d/$(fast exact listeners)" 0/1 "exact: no thread waits in the kernel; the listener is on the fast path (the last gate's registration went with it)"
check "exact: at least 95% of the accepts without a hand-over" [ "$c" -ge 190 ]
stop

# --- off: every connection drained and handed over, as before
start off off || fail "the service starts with --fast off"
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 50 > /dev/null
is "$(fast off continued)/$(fast off direct)/$(fast off listeners)" "0/0/0" "off: nothing on the fast path"
check "off: every connection handed over" [ "$(stat off handed)" -ge 50 ]
stop

# --- a killed supervisor while a thread waits in the kernel: the guard
# wakes it, its next accept fails (ENOSYS), the service ends and frees
# the port; without the guard it would wait for the next client
start guard "" || fail "the service starts"
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 20 > /dev/null
indirect() { [ "$(fast guard direct)" -gt 0 ]; }
wait_until indirect || diag "no thread has waited in the kernel yet"
SPID=$(svc guard "['pid']") SUP=$(svc guard "['supervisor']")
GUARD=$(pgrep -P "$SUP" -x vsd-gate-guard)
check "the supervisor has a guard" [ -n "$GUARD" ]
kill -KILL "$SUP"
check "killed supervisor: the service's waiting thread is woken and the service ends" \
	wait_until sh -c "! kill -0 $SPID 2>/dev/null"
check "killed supervisor: the port is free again" python3 -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))' "$PORT"
check "killed supervisor: its guard is gone too" wait_until sh -c "! kill -0 ${GUARD:-0} 2>/dev/null"
wait "$RUN" 2>/dev/null

# the killed gate's registration is left behind; the next gate on the port
# takes it over (gates/socket/socket.h)
start after "" || fail "a new service starts on the same port"
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 30 > /dev/null
is "$(fast after listeners)/$(( $(fast after continued) + $(fast after direct) > 0 ))" 1/1 \
	"the next gate on that port takes the left registration over and uses the fast path"
stop
done_testing
