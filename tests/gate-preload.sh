#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The accept shim (gates/accept/shim.c, vsctl-run(8) "The accept shim",
# --preload): a thread that accepts alone gets a lease, and the shim makes
# its accepts without asking the gate; a connection of another VS revokes
# the lease before the listener is woken and the holder is moved (or
# counted); --preload off; a shell between the supervisor and the server;
# an accept4 with a key the gate did not give still goes to the gate; a
# killed supervisor (its guard ends the lease) and a supervisor killed with
# its guard (the lease lapses within a second): the service's accepts then
# fail, as without the shim.
. "$(dirname "$0")/lib.sh"
need_root
need_gate_server
[ "$(cg_layout)" != legacy ] || skip_all "no cgroup2: no socket gate to classify connections"
SHIM=$top_builddir/gates/accept/vsd-gate-shim.so
[ -f "$SHIM" ] || { echo "Bail out! build first: no $SHIM"; exit 1; }

R=$(mktemp -d /tmp/vsd-preload.XXXXXX)
on_exit "rm -rf $R"
vsd_start || { fail "vsd starts"; done_testing; }
on_exit "pkill -KILL -f -- '[g]ate-server -p $PORT'"
vsctl create base --cpu 10% >/dev/null && vsctl create www1 --cpu 40% >/dev/null &&
	vsctl create www2 --cpu 40% >/dev/null || { fail "create the VSs"; done_testing; }

count() { grep -c "cg=[^ ]*/$VSD_ROOT/$2 " "$1"; }
fast() { svc "$1" "['fast']['$2']"; }
RUN=
# start NAME [vsctl run options] -- [gate-server options]
start() {
	_n=$1; shift
	_o=()
	while [ "$1" != -- ]; do _o+=("$1"); shift; done
	shift
	"$VSCTL" run --home base --name "$_n" "${_o[@]}" -- "$SERVER" -p "$PORT" "$@" \
		> "$R/$_n.log" 2>&1 &
	RUN=$!
	wait_until running "$_n" && wait_until quiet "$CLIENT" -p "$PORT" -n 1
}
stop() {
	kill "$RUN" 2>/dev/null
	wait "$RUN" 2>/dev/null
	wait_until no_server
}
env_of() { tr '\0' '\n' < /proc/"$1"/environ; }

# --- one VS, one thread: after a few accepts the thread holds a lease and
# the shim makes nearly every accept itself
start one -- || fail "the gated service starts"
is "$(fast one preload)" True "status: the shim is on by default (fast.preload)"
like "$(env_of "$(svc one "['pid']")" | grep '^LD_PRELOAD=')" "vsd-gate-shim.so" \
	"the service's LD_PRELOAD has the shim"
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 300 -v > "$R/one"
is "$(count "$R/one" www1)" 300 "one VS: all 300 requests begin in www1"
l=$(fast one leased) L=$(fast one leases)
diag "leases $L, leased $l, continued $(fast one continued), direct $(fast one direct)"
check "one VS: at least 285 of the 300 accepts made by the shim under a lease" [ "$l" -ge 285 ]
is "$(svc one "['vs']" | json '[v["served"] for v in d if v["name"] == "www1"][0]')" 300 \
	"status: www1 served 300, the accepts under the lease counted"

# --- a connection of another VS: the lease is revoked before the listener
# is woken; the holder, waiting in the kernel, is moved before it runs
# (direct_moved) or, at most once, after (lease_moved)
dm0=$(fast one direct_moved) lm0=$(fast one lease_moved)
vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 50 -v > "$R/two"
n2=$(count "$R/two" www2)
dm=$(( $(fast one direct_moved) - dm0 )) lm=$(( $(fast one lease_moved) - lm0 ))
diag "www2: $n2 of 50 began in www2; direct_moved +$dm, lease_moved +$lm"
check "then www2's 50 requests begin in www2 but for at most one, counted" \
	[ "$n2" -ge 49 ] && [ $((50 - n2)) -le "$lm" ]
check "the change of VS moved the holder once (direct_moved + lease_moved = 1)" [ $((dm + lm)) -eq 1 ]
l0=$(fast one leased)
vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 100 > /dev/null
check "and the thread holds a lease again for www2 (90 of the next 100 under it)" \
	[ $(( $(fast one leased) - l0 )) -ge 90 ]

# --- a connection of another VS while the holder serves: the socket gate
# has revoked the lease when the holder next accepts, so that accept goes to
# the gate, which serves the connection in its VS; nobody is moved after
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 20 > /dev/null
dm0=$(fast one direct_moved) lm0=$(fast one lease_moved)
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 1 -r "spin 300" > /dev/null &
BUSY=$!
sleep 0.1
vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 1 -v > "$R/busy2"
wait $BUSY
dm=$(( $(fast one direct_moved) - dm0 )) lm=$(( $(fast one lease_moved) - lm0 ))
is "$(count "$R/busy2" www2)/$dm/$lm" 1/0/0 \
	"www2 connects while the holder serves www1: served in www2 by the gate, no move after (direct_moved, lease_moved)"

# --- www1 and www2 back to back, 5 rounds of 20: no request begins in the
# other VS uncounted
: > "$R/mix1"; : > "$R/mix2"
served() { svc one "['vs']" | json 'sum(v["served"] for v in d if v["name"] in ("www1", "www2"))'; }
s0=$(served)
for i in 1 2 3 4 5; do
	vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 20 -v >> "$R/mix1"
	vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 20 -v >> "$R/mix2"
done
b=$(( 200 - $(count "$R/mix1" www1) - $(count "$R/mix2" www2) ))
c=$(fast one lease_moved)
diag "5 rounds: $b of 200 began in the other VS; lease_moved $c in all"
check "5 rounds of www1 then www2: every request that began in the other VS is counted" [ "$b" -le "$c" ]
is "$(( $(served) - s0 ))" 200 "5 rounds: the gate counts 200 connections of www1 and www2 served, no more"
stop

# --- the semantics of accept under a lease: the kernel's own, once each
cl() { vsctl exec www1 -- "$CLIENT" -p "$PORT" "$@"; }
start intr -- || fail "the service starts"
SPID=$(svc intr "['pid']")
cl -n 20 > /dev/null	# a run of one thread: it holds a lease after it
kill -USR1 "$SPID"
check "a signal during an accept under a lease gives EINTR" wait_until grep -q "^eintr" "$R/intr.log"
( while kill -USR1 "$SPID" 2>/dev/null; do sleep 0.001; done ) &
SIGGER=$!
cl -n 2000 -j 8 > "$R/intr.c"
r=$?
kill $SIGGER 2>/dev/null; wait $SIGGER 2>/dev/null
diag "$(cat "$R/intr.c"); EINTRs: $(grep -c '^eintr' "$R/intr.log"); leased $(fast intr leased)"
_all=1; [ $r = 0 ] && grep -q "ok 2000 bad 0" "$R/intr.c" && [ "$(fast intr leased)" -gt 0 ] && _all=0
check "2000 connections under a signal storm: all answered once, some under the lease" [ $_all = 0 ]
stop
start a4 -- -4 both || fail "the accept4 service starts"
cl -n 30 -b 31000 -v > "$R/a4.c"
_all=1
[ "$(grep -c 'cloexec=1 nonblock=1 peer=127.0.0.1:310[0-9][0-9] peerlen=16' "$R/a4.c")" = 30 ] &&
	[ "$(fast a4 leased)" -gt 0 ] && _all=0
check "accept4(SOCK_CLOEXEC|SOCK_NONBLOCK) under a lease: flags and peer address on all 30" [ $_all = 0 ]
stop
start nb -- -m nonblock || fail "the non-blocking service starts"
cl -n 200 -j 4 > "$R/nb.c"
_all=1; grep -q "ok 200 bad 0" "$R/nb.c" && [ "$(svc nb "['eagain']")" -gt 0 ] && _all=0
check "non-blocking: 200 served once each, EAGAIN with nothing queued" [ $_all = 0 ]
stop
for how in "-n 4" "-T 4"; do
	k=$(echo "${how#-}" | cut -c1 | tr A-Z a-z)
	start "once$k" -- $how || fail "the service starts ($how)"
	cl -n 5000 -j 16 > "$R/once$k.c"
	r=$?
	stop
	_all=1; [ $r = 0 ] && grep -q "ok 5000 bad 0" "$R/once$k.c" && _all=0
	check "gate-server $how, 5000 connections: each answered exactly once" [ $_all = 0 ]
	is "$(awk '/^served/ { s += $2 } END { print s }' "$R/once$k.log")" 5001 \
		"gate-server $how: accepted 5001 in all (with start's probe), none twice"
done

# --- --preload off: no shim, no lease; every accept asks the gate
start off --preload off -- || fail "the service starts with --preload off"
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 100 -v > "$R/off"
is "$(fast off preload)/$(fast off leases)/$(fast off leased)" False/0/0 "--preload off: no lease"
is "$(env_of "$(svc off "['pid']")" | grep -c 'vsd-gate-shim')" 0 "--preload off: no shim in the environment"
is "$(count "$R/off" www1)" 100 "--preload off: all 100 requests begin in www1"
stop
out=$("$VSCTL" run --home base --preload maybe -- true 2>&1); rc=$?
like "$rc: $out" "^7: .*--preload maybe: expected on or off" "vsctl run --preload maybe: refused, exit 7, the value named"

# --- through a shell: the program the service runs has the shim too
"$VSCTL" run --home base --name shell -- sh -c "'$SERVER' -p $PORT; true" > "$R/shell.log" 2>&1 &
RUN=$!
wait_until running shell && wait_until quiet "$CLIENT" -p "$PORT" -n 1 || fail "the service starts"
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 100 > /dev/null
check "a server a shell runs: the shim accepts under a lease (80 of 100)" [ "$(fast shell leased)" -ge 80 ]
# the supervisor forwards its signal to the shell only, and serves the
# server it leaves behind (vsctl-run(8)): stop the server itself
pkill -TERM -f -- "^$SERVER -p $PORT"
stop

# --- an accept4 with a key the gate did not give: the filter sends it to
# the gate as any other (the shim's calls carry the gate's key)
start wrongkey -- -K 5a5a || fail "the service starts"
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 40 -v > "$R/wrong"
is "$(count "$R/wrong" www1)" 40 "another key: all 40 requests begin in www1"
n=$(( $(fast wrongkey continued) + $(fast wrongkey direct) + $(svc wrongkey "['handed']") ))
diag "another key: continued + direct + handed $n, leased $(fast wrongkey leased)"
check "another key: the gate answered every accept (41, the start's included), none made past it" \
	[ "$n" -ge 41 ] && [ "$(fast wrongkey leased)" = 0 ]
stop

# --- a killed supervisor while the lease holder waits in the kernel: its
# guard ends the lease (as the guard's connection, of no VS, would too) and
# wakes the thread, whose next accept asks the gone gate (ENOSYS), and the
# service ends. Through sh, which forks (the
# "; true"): the server is not the child that the supervisor's
# PR_SET_PDEATHSIG reaches, so only the guard can wake it
# shell NAME: the server under sh on PORT, its pid in SPID
shell() {
	"$VSCTL" run --home base --name "$1" -- sh -c "'$SERVER' -p $PORT; true" > "$R/$1.log" 2>&1 &
	RUN=$!
	wait_until running "$1" && wait_until quiet "$CLIENT" -p "$PORT" -n 1 || fail "the service starts"
	SPID=$(pgrep -f "^$SERVER -p $PORT")
}
shell killed
vsctl exec www1 -- sh -c "for i in \$(seq 12); do '$CLIENT' -p $PORT -n 1; done" > /dev/null
check "the thread holds a lease" [ "$(fast killed leased)" -ge 1 ]
SUP=$(svc killed "['supervisor']")
kill -KILL "$SUP"
check "killed supervisor: the lease holder is woken, its next accept fails, the service ends" \
	wait_until sh -c "! kill -0 ${SPID:-0} 2>/dev/null"
grep -q "accept: Function not implemented" "$R/killed.log" &&
	ok "killed supervisor: the service's accept failed with ENOSYS" ||
	fail "killed supervisor: the service's accept failed with ENOSYS ($(tail -1 "$R/killed.log"))"
wait "$RUN" 2>/dev/null
wait_until no_server

# --- the supervisor and its guard killed at once: the lease lapses within
# a second; the thread waiting in the kernel takes one more connection (of
# the lease's VS: one of another would revoke the lease), and its next
# accept fails
shell lapse
vsctl exec www1 -- sh -c "for i in \$(seq 12); do '$CLIENT' -p $PORT -n 1; done" > /dev/null
check "the thread holds a lease" [ "$(fast lapse leased)" -ge 1 ]
SUP=$(svc lapse "['supervisor']")
GUARD=$(pgrep -P "$SUP" -x vsd-gate-guard)
kill -STOP "$SUP" "$GUARD"
kill -KILL "$GUARD" "$SUP"
sleep 1.5
vsctl exec www1 -- timeout 5 "$CLIENT" -p "$PORT" -n 1 > /dev/null 2>&1
vsctl exec www1 -- timeout 5 "$CLIENT" -p "$PORT" -n 1 > /dev/null 2>&1
check "supervisor and guard killed: the lease lapsed, the service's next accept failed, it ended" \
	wait_until sh -c "! kill -0 ${SPID:-0} 2>/dev/null"
wait "$RUN" 2>/dev/null
done_testing
